//! Original values (`origin={{"x" {0}}, ...}`), the original arrays they
//! name, and the module header's `origin_recovery_table` built on them:
//! read and printed.

use super::{ints, join, Cursor, PResult};
use crate::ir::attrs::*;
use crate::ir::SharedStr;

/// `origin_recovery_table={ {"old"} : {"new"}, "<module text>" ... }`: per
/// entry, the original array, the one standing for it, and (optional, a
/// quoted, escaped module) the module that recovers the first from the
/// second.
pub(super) fn recovery_table(c: &mut Cursor<'_>, text: &SharedStr) -> PResult<Vec<RecoveryEntry>> {
    let array = |c: &mut Cursor<'_>| -> PResult<OriginalArray> {
        original_array(c, text)?.ok_or_else(|| "expects an original array, not {}".into())
    };
    let mut entries = Vec::new();
    c.expect("{")?;
    while !c.eat("}") {
        let old = array(c)?;
        c.expect(":")?;
        let new = array(c)?;
        let module = if c.eat(",") {
            let module_text = c.string(text)?;
            let m = crate::text::parse_module(&module_text, "origin_recovery_table")
                .map_err(|e| e.to_string())?;
            Some(Box::new(m))
        } else {
            None
        };
        entries.push(RecoveryEntry { old, new, module });
    }
    Ok(entries)
}

/// `{"name"}`, `{"name" {1,2}}`, or `{}` (none).
fn original_array(c: &mut Cursor<'_>, text: &SharedStr) -> PResult<Option<OriginalArray>> {
    c.expect("{")?;
    if c.eat("}") {
        return Ok(None);
    }
    let instruction = c.string(text)?;
    let shape_index = if c.eat("}") {
        Vec::new()
    } else {
        let v = c.ints()?;
        c.expect("}")?;
        v
    };
    Ok(Some(OriginalArray {
        instruction,
        shape_index,
    }))
}

/// Deepest nesting of tuples an attribute may have.
const MAX_DEPTH: usize = 256;

pub(super) fn original_value(c: &mut Cursor<'_>, text: &SharedStr) -> PResult<OriginalValue> {
    fn node(c: &mut Cursor<'_>, text: &SharedStr, depth: usize) -> PResult<OriginalNode> {
        if depth > MAX_DEPTH {
            return Err("tuples nested too deeply".into());
        }
        if c.peek_is("(") {
            return Ok(OriginalNode::Tuple(
                c.list("(", ")", |c| node(c, text, depth + 1))?,
            ));
        }
        Ok(OriginalNode::Array(original_array(c, text)?))
    }
    c.expect("{")?;
    let v = if c.eat("[synthetic_call]") {
        OriginalValue::SyntheticCall
    } else {
        OriginalValue::Value(node(c, text, 0)?)
    };
    c.expect("}")?;
    Ok(v)
}

/// `{"name"}`, `{"name" {1,2}}`
fn original_array_text(a: &OriginalArray, t: &mut String) {
    t.push_str("{\"");
    t.push_str(&a.instruction);
    t.push('"');
    if !a.shape_index.is_empty() {
        t.push(' ');
        ints(t, &a.shape_index);
    }
    t.push('}');
}

/// Each array of the value in tuple order: `{{"name" {1}}}`,
/// `{({"a"}, {})}`, `{[synthetic_call]}`.
pub(super) fn original_value_text(t: &mut String, ov: &OriginalValue) {
    fn node(t: &mut String, n: &OriginalNode) {
        match n {
            OriginalNode::Tuple(items) => {
                t.push('(');
                join(t, items, ", ", node);
                t.push(')');
            }
            OriginalNode::Array(Some(a)) => original_array_text(a, t),
            OriginalNode::Array(None) => t.push_str("{}"),
        }
    }
    t.push('{');
    match ov {
        OriginalValue::SyntheticCall => t.push_str("[synthetic_call]"),
        OriginalValue::Value(n) => node(t, n),
    }
    t.push('}');
}

/// One entry per line; a recovery module as the quoted, indented text of
/// the module in the default form.
pub(super) fn recovery_table_text(t: &mut String, entries: &[RecoveryEntry]) {
    t.push_str("{\n");
    for e in entries {
        t.push_str("  ");
        original_array_text(&e.old, t);
        t.push_str(" : ");
        original_array_text(&e.new, t);
        if let Some(m) = &e.module {
            let text = crate::text::printer::print_module_with(
                m,
                &crate::ir::PrintOptions::default_form(),
            );
            t.push_str(",\n  \"\n");
            for line in text.split_inclusive('\n') {
                if line != "\n" {
                    t.push_str("    ");
                }
                for ch in line.chars() {
                    if matches!(ch, '"' | '\\') {
                        t.push('\\');
                    }
                    t.push(ch);
                }
            }
            t.push_str("\n  \"");
        }
        t.push('\n');
    }
    t.push('}');
}
