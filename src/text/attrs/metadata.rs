//! An instruction's `metadata={...}`, its `frontend_attributes={...}`
//! and its `statistics={...}`: read and printed.

use super::{join, push_int, quoted, Cursor, PResult};
use crate::ir::attrs::*;
use crate::ir::SharedStr;
use crate::text::number::format_g;
use crate::text::printer::looks_like_json_object;

/// `{op_type="..." op_name="..." ...}`
pub(super) fn metadata(c: &mut Cursor<'_>, text: &SharedStr) -> PResult<OpMetadata> {
    let mut m = OpMetadata::default();
    c.expect("{")?;
    while !c.eat("}") {
        let key = c.word();
        c.expect("=")?;
        let int32 = |c: &mut Cursor<'_>| -> PResult<i32> {
            c.int()
                .and_then(|v| i32::try_from(v).map_err(|_| format!("{key} out of range")))
        };
        match key {
            "op_type" => m.op_type = c.string(text)?,
            "op_name" => m.op_name = c.string(text)?,
            "source_file" => m.source_file = c.string(text)?,
            "deduplicated_name" => m.deduplicated_name = c.string(text)?,
            "scheduling_name" => m.scheduling_name = c.string(text)?,
            "source_line" => m.source_line = int32(c)?,
            "source_end_line" => m.source_end_line = int32(c)?,
            "source_column" => m.source_column = int32(c)?,
            "source_end_column" => m.source_end_column = int32(c)?,
            "stack_frame_id" => m.stack_frame_id = int32(c)?,
            "profile_type" => {
                m.profile_type = c
                    .ints()?
                    .into_iter()
                    .map(|x| i32::try_from(x).map_err(|_| "profile_type out of range".to_string()))
                    .collect::<PResult<_>>()?
            }
            "" => return Err("expects a metadata field".into()),
            k => return Err(format!("unknown metadata field {k}")),
        }
    }
    Ok(m)
}

/// `{key=value,...}`: a value is quoted, a `{...}` group, or a word.
pub(super) fn frontend_attributes(
    c: &mut Cursor<'_>,
    text: &SharedStr,
) -> PResult<FrontendAttributes> {
    let mut fa = FrontendAttributes::default();
    let entries = c.list("{", "}", |c| {
        let key = if c.peek_is("\"") {
            c.string(text)?
        } else {
            let start = c.pos;
            let w = c.word();
            text.sub(start, start + w.len())
        };
        c.expect("=")?;
        let value = if c.peek_is("\"") {
            c.string(text)?
        } else if c.peek_is("{") {
            let start = c.pos;
            let g = c.group()?;
            text.sub(start, start + g.len())
        } else {
            let start = c.pos;
            let w = c.word();
            text.sub(start, start + w.len())
        };
        Ok((key, value))
    })?;
    fa.entries = entries;
    Ok(fa)
}

/// `{visualizing_index=1,stat-1=33,stat-2=44}`
pub(super) fn statistics(c: &mut Cursor<'_>, text: &SharedStr) -> PResult<Statistics> {
    let mut st = Statistics::default();
    c.expect("{")?;
    c.expect("visualizing_index")?;
    c.expect("=")?;
    st.visualizing_index = c.int()?;
    while c.eat(",") {
        c.ws();
        let start = c.pos;
        let name = c.word();
        let name = text.sub(start, start + name.len());
        c.expect("=")?;
        let w = c.number_word();
        let v: f64 = w.parse().map_err(|_| format!("bad statistic value {w}"))?;
        st.stats.push((name, v));
    }
    c.expect("}")?;
    Ok(st)
}

/// `{op_type="..." op_name="..." ...}` as XLA's `OpMetadataToString`.
pub fn metadata_text(t: &mut String, m: &OpMetadata) {
    t.push('{');
    let start = t.len();
    let sep = |t: &mut String| {
        if t.len() > start {
            t.push(' ');
        }
    };
    let string = |t: &mut String, key: &str, v: &str| {
        if !v.is_empty() {
            sep(t);
            t.push_str(key);
            t.push('=');
            quoted(t, v);
        }
    };
    string(t, "op_type", &m.op_type);
    string(t, "op_name", &m.op_name);
    string(t, "source_file", &m.source_file);
    let int = |t: &mut String, key: &str, v: i64| {
        if v != 0 {
            sep(t);
            t.push_str(key);
            t.push('=');
            push_int(t, v);
        }
    };
    int(t, "source_line", m.source_line.into());
    int(t, "source_end_line", m.source_end_line.into());
    int(t, "source_column", m.source_column.into());
    int(t, "source_end_column", m.source_end_column.into());
    if !m.profile_type.is_empty() {
        sep(t);
        t.push_str("profile_type={");
        join(t, &m.profile_type, ",", |t, x| push_int(t, i64::from(*x)));
        t.push('}');
    }
    string(t, "deduplicated_name", &m.deduplicated_name);
    string(t, "scheduling_name", &m.scheduling_name);
    int(t, "stack_frame_id", m.stack_frame_id.into());
    t.push('}');
}

/// `{key=value,...}`, sorted by key; values that read as one `{...}` token
/// are printed raw, others quoted and escaped.
pub(super) fn frontend_attributes_text(t: &mut String, fa: &FrontendAttributes) {
    let mut entries: Vec<&(SharedStr, SharedStr)> = fa.entries.iter().collect();
    entries.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
    t.push('{');
    join(t, &entries, ",", |t, (k, v)| {
        // XLA prints keys raw; one a word cannot hold (from a proto) is
        // quoted, which the parser reads back, where raw it would not.
        if k.chars()
            .all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '_' | '-' | '.'))
        {
            t.push_str(k);
        } else {
            quoted(t, k);
        }
        t.push('=');
        if looks_like_json_object(v) {
            t.push_str(v);
        } else {
            quoted(t, v);
        }
    });
    t.push('}');
}

pub(super) fn statistics_text(t: &mut String, s: &Statistics) {
    t.push_str("{visualizing_index=");
    push_int(t, s.visualizing_index);
    for (name, v) in &s.stats {
        t.push(',');
        t.push_str(name);
        t.push('=');
        // absl::StrCat of a double: %g, 6 digits.
        format_g(*v, 6, t);
    }
    t.push('}');
}
