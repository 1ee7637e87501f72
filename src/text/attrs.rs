//! The text syntax of every typed attribute ([`crate::ir::attrs`]): how
//! each is read, and how each prints in XLA's canonical form. The parser
//! reads through [`read`]; the printer prints through [`print`].

use super::checks;
use super::number::{c_escape, c_unescape, format_f32, format_f64, format_g};
use super::printer::looks_like_json_object;
use crate::ir::attrs::*;
use crate::ir::{Opcode, SharedStr};

/// The kind of value an attribute key holds, for an opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Int,
    Ints,
    IntLists,
    Bool,
    Bools,
    Float,
    Str,
    Fusion,
    FftType,
    Distribution,
    RngAlgorithm,
    DotAlgorithm,
    Schedule,
    Transpose,
    Precisions,
    Window,
    Padding,
    Slice,
    ConvDims,
    ReplicaGroups,
    Pairs,
    Metadata,
    FrontendAttributes,
    Sharding,
    Aliasing,
    OriginalValue,
    Statistics,
    Domain,
    ResultAccuracy,
    InputOutputAlias,
    BufferDonor,
    Shardings,
    DebugAttributes,
    RecoveryTable,
}

fn kind(key: &str, opcode: Option<Opcode>) -> Option<Kind> {
    use Kind::*;
    if opcode.is_none() {
        // The module header's own.
        match key {
            "input_output_alias" => return Some(InputOutputAlias),
            "buffer_donor" => return Some(BufferDonor),
            "spmd_parameters_shardings" => return Some(Shardings),
            "debug_attributes" => return Some(DebugAttributes),
            "origin_recovery_table" => return Some(RecoveryTable),
            _ => {}
        }
    }
    Some(match key {
        "index_vector_dim"
        | "channel_id"
        | "feature_group_count"
        | "batch_group_count"
        | "feature_index"
        | "exponent_bits"
        | "mantissa_bits"
        | "num_carries"
        | "delta"
        | "cross_program_prefetch_index"
        | "k"
        | "replica_count"
        | "num_partitions" => Int,
        "lhs_contracting_dims"
        | "rhs_contracting_dims"
        | "lhs_batch_dims"
        | "rhs_batch_dims"
        | "offset_dims"
        | "collapsed_slice_dims"
        | "start_index_map"
        | "operand_batching_dims"
        | "start_indices_batching_dims"
        | "update_window_dims"
        | "inserted_window_dims"
        | "scatter_dims_to_operand_dims"
        | "input_batching_dims"
        | "scatter_indices_batching_dims"
        | "dynamic_slice_sizes"
        | "fft_length"
        | "lhs_ragged_dims"
        | "rhs_group_dims" => Ints,
        "slice_sizes"
            if matches!(
                opcode,
                Some(Opcode::CollectivePermute | Opcode::CollectivePermuteStart)
            ) =>
        {
            IntLists
        }
        "slice_sizes" => Ints,
        "is_stable"
        | "largest"
        | "is_composite"
        | "custom_call_has_side_effect"
        | "indices_are_sorted"
        | "unique_indices"
        | "use_global_device_ids"
        | "constrain_layout"
        | "is_host_transfer"
        | "is_reverse"
        | "is_associative"
        | "has_dynamic_root"
        | "left_side"
        | "lower"
        | "unit_diagonal"
        | "is_scheduled"
        | "alias_passthrough_params" => Bool,
        "parameter_replication"
        | "allow_spmd_sharding_propagation_to_parameters"
        | "allow_spmd_sharding_propagation_to_output" => Bools,
        "epsilon" => Float,
        "async_execution_thread" | "infeed_config" | "outfeed_config" => Str,
        "kind" => Fusion,
        "fft_type" => FftType,
        "distribution" => Distribution,
        "algorithm" if opcode == Some(Opcode::RngBitGenerator) => RngAlgorithm,
        "algorithm" => DotAlgorithm,
        "schedule" => Schedule,
        "transpose_a" => Transpose,
        "operand_precision" => Precisions,
        "window" => Window,
        "padding" => Padding,
        "slice" => Slice,
        "dim_labels" => ConvDims,
        "replica_groups" => ReplicaGroups,
        "source_target_pairs" => Pairs,
        "metadata" => Metadata,
        "frontend_attributes" => FrontendAttributes,
        "sharding" | "spmd_output_sharding" => Sharding,
        "output_to_operand_aliasing" => Aliasing,
        "origin" => OriginalValue,
        "statistics" => Statistics,
        "domain" => Domain,
        "result_accuracy" => ResultAccuracy,
        _ => return None,
    })
}

/// For a `key` (of an instruction of `opcode`, or of the module header
/// when `None`) that [`read`] types: a number naming the kind of value it
/// holds (equal texts of one kind are equal values).
pub fn kind_id(key: &str, opcode: Option<Opcode>) -> Option<u8> {
    kind(key, opcode).map(|k| k as u8)
}

/// Reads the value `text` of the typed attribute `key` (a string the value
/// keeps slices of). `Ok(None)`: the key is not one [`read`] types. An
/// error gives the byte offset into `text` and the message.
pub fn read(
    key: &str,
    opcode: Option<Opcode>,
    text: &SharedStr,
) -> Result<Option<AttrValue>, (usize, String)> {
    let Some(kind) = kind(key, opcode) else {
        return Ok(None);
    };
    let mut c = Cursor::new(text);
    let value = read_kind(kind, &mut c, text).map_err(|e| (c.pos, e))?;
    c.ws();
    if c.pos < text.len() {
        return Err((c.pos, format!("unexpected text after the value of {key}")));
    }
    Ok(Some(value))
}

fn written<T>(value: T, text: &SharedStr) -> Typed<T> {
    std::sync::Arc::new(Written::read(value, text.clone()))
}

fn read_kind(kind: Kind, c: &mut Cursor<'_>, text: &SharedStr) -> PResult<AttrValue> {
    use Kind as K;
    let s = text.as_str();
    Ok(match kind {
        K::Int => AttrValue::Int(c.int()?),
        K::Ints => AttrValue::Ints(c.ints()?.into()),
        K::IntLists => AttrValue::IntLists(int_lists(c)?),
        K::Bool => AttrValue::Bool(c.boolean()?),
        K::Bools => AttrValue::Bools(c.bools()?.into()),
        K::Float => AttrValue::Float(written(float(c)?, text)),
        K::Str => AttrValue::Str(c.string(text)?),
        K::Fusion => AttrValue::FusionKind(named(
            c,
            "a fusion kind",
            "unknown fusion kind",
            FusionKind::from_name,
        )?),
        K::FftType => AttrValue::FftType(named(
            c,
            "an FFT type",
            "unknown FFT type",
            FftType::from_name,
        )?),
        K::Distribution => AttrValue::Distribution(named(
            c,
            "a distribution",
            "unknown distribution",
            RandomDistribution::from_name,
        )?),
        K::RngAlgorithm => AttrValue::RngAlgorithm(named(
            c,
            "an rng algorithm",
            "unknown algorithm",
            RngAlgorithm::from_name,
        )?),
        K::DotAlgorithm => AttrValue::DotAlgorithm(named(
            c,
            "an algorithm",
            "unknown algorithm",
            DotAlgorithm::from_name,
        )?),
        K::Schedule => AttrValue::Schedule(named(
            c,
            "a schedule",
            "unknown schedule",
            CustomCallSchedule::from_name,
        )?),
        K::Transpose => AttrValue::Transpose(named(
            c,
            "a transpose",
            "unknown transpose",
            Transpose::from_name,
        )?),
        K::Precisions => AttrValue::Precisions(precisions(c)?.into()),
        K::Window => {
            let w = checked_whole(c, s, checks::check_window, window)?;
            AttrValue::Window(written(w, text))
        }
        K::Padding => {
            let p = checked_whole(c, s, checks::check_padding_config, padding)?;
            AttrValue::Padding(written(p, text))
        }
        K::Slice => AttrValue::Slice(written(slice(c)?, text)),
        K::ConvDims => {
            let d = checked_whole(c, s, checks::check_dim_labels, dim_labels)?;
            AttrValue::ConvDims(written(d, text))
        }
        K::ReplicaGroups => {
            checks::check_mesh_replica_groups(s)?;
            AttrValue::ReplicaGroups(written(replica_groups(c, text)?, text))
        }
        K::Pairs => AttrValue::Pairs(written(pairs(c)?, text)),
        K::Metadata => AttrValue::Metadata(written(metadata(c, text)?, text)),
        K::FrontendAttributes => {
            AttrValue::FrontendAttributes(written(frontend_attributes(c, text)?, text))
        }
        K::Sharding => AttrValue::Sharding(written(sharding(c, text)?, text)),
        K::Aliasing => AttrValue::Aliasing(written(aliasing(c)?, text)),
        K::OriginalValue => AttrValue::OriginalValue(written(original_value(c, text)?, text)),
        K::Statistics => AttrValue::Statistics(written(statistics(c, text)?, text)),
        K::Domain => AttrValue::Domain(written(domain(c, text)?, text)),
        K::ResultAccuracy => {
            let r = checked_whole(c, s, checks::check_result_accuracy, result_accuracy)?;
            AttrValue::ResultAccuracy(written(r, text))
        }
        K::InputOutputAlias => {
            AttrValue::InputOutputAlias(written(whole(c, text, input_output_alias)?, text))
        }
        K::BufferDonor => AttrValue::BufferDonor(written(whole(c, text, buffer_donor)?, text)),
        K::Shardings => AttrValue::Shardings(written(whole(c, text, shardings)?, text)),
        K::DebugAttributes => AttrValue::DebugAttributes(written(debug_attributes(c, s)?, text)),
        K::RecoveryTable => AttrValue::RecoveryTable(written(recovery_table(c, text)?, text)),
    })
}

fn int_lists(c: &mut Cursor<'_>) -> PResult<Box<[Box<[i64]>]>> {
    Ok(c.int_lists()?
        .into_iter()
        .map(Vec::into_boxed_slice)
        .collect())
}

fn float(c: &mut Cursor<'_>) -> PResult<f32> {
    let w = c.number_word();
    w.parse().map_err(|_| format!("expects a float, not '{w}'"))
}

/// A word naming a value of an enum (`what` in the error when there is
/// none); `unknown` starts the error for a word `from_name` does not know.
fn named<T>(
    c: &mut Cursor<'_>,
    what: &str,
    unknown: &str,
    from_name: fn(&str) -> Option<T>,
) -> PResult<T> {
    let w = c.word();
    if w.is_empty() {
        return Err(format!("expects {what}"));
    }
    from_name(w).ok_or_else(|| format!("{unknown} {w}"))
}

/// `{DEFAULT, HIGHEST}`.
fn precisions(c: &mut Cursor<'_>) -> PResult<Vec<Precision>> {
    c.expect("{")?;
    let mut v = Vec::new();
    if !c.eat("}") {
        loop {
            let w = c.word();
            v.push(Precision::from_name(w).ok_or_else(|| format!("unknown precision {w}"))?);
            if c.eat("}") {
                break;
            }
            c.expect(",")?;
        }
    }
    Ok(v)
}

/// `{{0,1},{1,2}}`: source-target pairs.
fn pairs(c: &mut Cursor<'_>) -> PResult<Vec<(i64, i64)>> {
    let lists = c.int_lists()?;
    lists
        .into_iter()
        .map(|v| match v[..] {
            [a, b] => Ok((a, b)),
            _ => Err("expects {source,target} pairs".to_string()),
        })
        .collect()
}

/// A value `read` reads from the whole text `s`, once XLA's `check` of
/// the text passes. Past the check, errors are at the text's end.
fn checked_whole<T>(
    c: &mut Cursor<'_>,
    s: &str,
    check: fn(&str) -> PResult<()>,
    read: fn(&str) -> PResult<T>,
) -> PResult<T> {
    check(s)?;
    c.pos = s.len();
    read(s)
}

/// A value `read` reads from the whole text; errors are at its end.
fn whole<T>(
    c: &mut Cursor<'_>,
    text: &SharedStr,
    read: fn(&SharedStr) -> PResult<T>,
) -> PResult<T> {
    c.pos = text.len();
    read(text)
}

/// `debug_attributes=`, read by its own parser (errors at the offset it
/// gives).
fn debug_attributes(c: &mut Cursor<'_>, s: &str) -> PResult<Vec<DebugAttributeEntry>> {
    let table = super::debug_attributes::parse(s).map_err(|(at, m)| {
        c.pos = at;
        m
    })?;
    c.pos = s.len();
    Ok(table)
}

/// `origin_recovery_table={ {"old"} : {"new"}, "<module text>" ... }`: per
/// entry, the original array, the one standing for it, and (optional, a
/// quoted, escaped module) the module that recovers the first from the
/// second.
fn recovery_table(c: &mut Cursor<'_>, text: &SharedStr) -> PResult<Vec<RecoveryEntry>> {
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
            let m = super::parse_module(&module_text, "origin_recovery_table")
                .map_err(|e| e.to_string())?;
            Some(Box::new(m))
        } else {
            None
        };
        entries.push(RecoveryEntry { old, new, module });
    }
    Ok(entries)
}

// ---- reading ----------------------------------------------------------

type PResult<T> = Result<T, String>;

/// A cursor over an attribute's text.
pub(crate) struct Cursor<'a> {
    s: &'a str,
    pub(crate) pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(s: &'a str) -> Cursor<'a> {
        Cursor { s, pos: 0 }
    }

    fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }

    fn ws(&mut self) {
        self.pos += super::blank_len(self.rest()).unwrap_or_else(|unclosed| unclosed);
    }

    fn peek_is(&mut self, p: &str) -> bool {
        self.ws();
        self.rest().starts_with(p)
    }

    fn eat(&mut self, p: &str) -> bool {
        let found = self.peek_is(p);
        if found {
            self.pos += p.len();
        }
        found
    }

    fn expect(&mut self, p: &str) -> PResult<()> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(format!("expects '{p}'"))
        }
    }

    fn word(&mut self) -> &'a str {
        self.ws();
        let r = self.rest();
        let n = r
            .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '-' || ch == '.'))
            .unwrap_or(r.len());
        self.pos += n;
        &r[..n]
    }

    /// A number's text (digits, sign, point, exponent, inf/nan).
    fn number_word(&mut self) -> &'a str {
        self.ws();
        let r = self.rest();
        let n = r
            .find(|ch: char| !(ch.is_ascii_alphanumeric() || matches!(ch, '-' | '+' | '.')))
            .unwrap_or(r.len());
        self.pos += n;
        &r[..n]
    }

    fn int(&mut self) -> PResult<i64> {
        let at = self.pos;
        let w = self.number_word();
        w.parse().map_err(|_| {
            self.pos = at;
            match w {
                "" => "expects an integer".to_string(),
                w => format!("expects an integer, not '{w}'"),
            }
        })
    }

    fn boolean(&mut self) -> PResult<bool> {
        let at = self.pos;
        match self.word() {
            "true" => Ok(true),
            "false" => Ok(false),
            w => {
                self.pos = at;
                Err(format!("expects true or false, not '{w}'"))
            }
        }
    }

    /// A quoted string, decoded; a slice of `text` when it has no escapes.
    fn string(&mut self, text: &SharedStr) -> PResult<SharedStr> {
        self.expect("\"")?;
        let start = self.pos;
        let b = self.s.as_bytes();
        let mut i = start;
        while i < b.len() && b[i] != b'"' {
            if b[i] == b'\\' {
                i += 1;
            }
            i += 1;
        }
        if i >= b.len() {
            return Err("unterminated string".into());
        }
        let body = &self.s[start..i];
        self.pos = i + 1;
        if !body.contains('\\') {
            return Ok(text.sub(start, i));
        }
        c_unescape(body)
            .map(SharedStr::from)
            .map_err(|at| format!("bad escape at offset {}", start + at))
    }

    fn list<T>(
        &mut self,
        open: &str,
        close: &str,
        mut item: impl FnMut(&mut Self) -> PResult<T>,
    ) -> PResult<Vec<T>> {
        self.expect(open)?;
        let mut v = Vec::new();
        if self.eat(close) {
            return Ok(v);
        }
        loop {
            v.push(item(self)?);
            if self.eat(close) {
                return Ok(v);
            }
            self.expect(",")?;
        }
    }

    fn ints(&mut self) -> PResult<Vec<i64>> {
        self.list("{", "}", Cursor::int)
    }

    fn bracket_ints(&mut self) -> PResult<Vec<i64>> {
        self.list("[", "]", Cursor::int)
    }

    fn int_lists(&mut self) -> PResult<Vec<Vec<i64>>> {
        self.list("{", "}", Cursor::ints)
    }

    fn bools(&mut self) -> PResult<Vec<bool>> {
        self.list("{", "}", Cursor::boolean)
    }

    /// A balanced `{...}` group, whole.
    fn group(&mut self) -> PResult<&'a str> {
        self.ws();
        let start = self.pos;
        let b = self.s.as_bytes();
        let mut depth = 0;
        let mut i = self.pos;
        while i < b.len() {
            match b[i] {
                b'"' => {
                    i += 1;
                    while i < b.len() && b[i] != b'"' {
                        if b[i] == b'\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                }
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        self.pos = i + 1;
                        return Ok(&self.s[start..=i]);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        Err("unbalanced braces".into())
    }
}

fn nums(s: &str, sep: char) -> PResult<Vec<i64>> {
    s.split(sep)
        .map(|x| x.parse::<i64>().map_err(|_| format!("bad number {x}")))
        .collect()
}

/// `{size=3x3 stride=2x2 pad=0_1x0_1 lhs_dilate=.. rhs_dilate=.. rhs_reversal=..}`
fn window(v: &str) -> PResult<Window> {
    let inner = v
        .strip_prefix('{')
        .and_then(|s| s.strip_suffix('}'))
        .ok_or("expects {...}")?;
    let mut w = Window::default();
    for field in inner.split_whitespace() {
        let (k, val) = field.split_once('=').ok_or("expects key=value")?;
        let parts: Vec<&str> = val.split('x').collect();
        if w.dims.is_empty() {
            w.dims = vec![WindowDim::default(); parts.len()];
        }
        if parts.len() != w.dims.len() {
            return Err("window fields of different ranks".into());
        }
        for (d, p) in w.dims.iter_mut().zip(parts) {
            let n = nums(p, '_')?;
            let first = *n.first().ok_or("bad window field")?;
            match k {
                "size" => d.size = first,
                "stride" => d.stride = first,
                "lhs_dilate" => d.base_dilation = first,
                "rhs_dilate" => d.window_dilation = first,
                "rhs_reversal" => d.reversal = first == 1,
                "pad" => {
                    d.pad_low = first;
                    d.pad_high = *n.get(1).ok_or("bad pad")?;
                }
                _ => return Err(format!("unknown window field {k}")),
            }
        }
    }
    Ok(w)
}

/// `lo_hi[_interior]x...`
fn padding(v: &str) -> PResult<Vec<PaddingDim>> {
    if v.is_empty() {
        return Ok(Vec::new());
    }
    v.split('x')
        .map(|dim| {
            let n = nums(dim, '_')?;
            match n[..] {
                [low, high] => Ok(PaddingDim {
                    low,
                    high,
                    interior: 0,
                }),
                [low, high, interior] => Ok(PaddingDim {
                    low,
                    high,
                    interior,
                }),
                _ => Err(format!("bad padding {dim}")),
            }
        })
        .collect()
}

/// `{[0:8], [0:16:2]}`
fn slice(c: &mut Cursor<'_>) -> PResult<Vec<SliceDim>> {
    c.list("{", "}", |c| {
        c.expect("[")?;
        let start = c.int()?;
        c.expect(":")?;
        let limit = c.int()?;
        let stride = if c.eat(":") { c.int()? } else { 1 };
        c.expect("]")?;
        Ok(SliceDim {
            start,
            limit,
            stride,
        })
    })
}

/// `b01f_01io->b01f`: the letters name the batch and feature dimensions
/// (input and output feature for the kernel), the digits the spatial ones.
fn dim_labels(v: &str) -> PResult<ConvDims> {
    fn side(s: &str, names: [char; 2]) -> PResult<(i64, i64, Vec<i64>)> {
        let mut named = [None, None];
        let digits = s.chars().filter(char::is_ascii_digit).count();
        let mut spatial: Vec<Option<i64>> = vec![None; digits];
        for (pos, ch) in s.chars().enumerate() {
            let pos = pos as i64;
            if let Some(k) = names.iter().position(|&n| n == ch) {
                named[k] = Some(pos);
            } else if let Some(slot) = ch.to_digit(10).and_then(|d| spatial.get_mut(d as usize)) {
                *slot = Some(pos);
            } else if ch != '?' {
                return Err(format!("unexpected dimension label {ch} in {s}"));
            }
        }
        let missing = || format!("dimension labels {s} are incomplete");
        Ok((
            named[0].ok_or_else(missing)?,
            named[1].ok_or_else(missing)?,
            spatial
                .into_iter()
                .map(|d| d.ok_or_else(missing))
                .collect::<PResult<_>>()?,
        ))
    }
    let (lhs, rest) = v.split_once('_').ok_or("expects lhs_rhs->out")?;
    let (rhs, out) = rest.split_once("->").ok_or("expects lhs_rhs->out")?;
    let (input_batch, input_feature, input_spatial) = side(lhs, ['b', 'f'])?;
    let (kernel_input_feature, kernel_output_feature, kernel_spatial) = side(rhs, ['i', 'o'])?;
    let (output_batch, output_feature, output_spatial) = side(out, ['b', 'f'])?;
    Ok(ConvDims {
        input_batch,
        input_feature,
        input_spatial,
        kernel_input_feature,
        kernel_output_feature,
        kernel_spatial,
        output_batch,
        output_feature,
        output_spatial,
    })
}

/// `<=[dims]` and an optional `T(perm)` (else the identity).
fn iota(c: &mut Cursor<'_>) -> PResult<Iota> {
    c.expect("<=")?;
    let reshape_dims = c.bracket_ints()?;
    let transpose_perm = if c.peek_is("T(") {
        c.pos += 1;
        c.list("(", ")", |c| {
            c.int()
                .and_then(|v| i32::try_from(v).map_err(|_| "permutation out of range".into()))
        })?
    } else {
        (0..reshape_dims.len() as i32).collect()
    };
    Ok(Iota {
        reshape_dims,
        transpose_perm,
    })
}

fn replica_groups(c: &mut Cursor<'_>, text: &SharedStr) -> PResult<ReplicaGroups> {
    if c.eat("mesh[") {
        let mut mesh = Vec::new();
        let mut devices = None;
        loop {
            if c.eat("device_ids") {
                c.expect("=")?;
                c.expect("(")?;
                devices = Some(if c.peek_is("[") {
                    let shape = c.bracket_ints()?;
                    MeshDevices::Iota {
                        shape,
                        iota: iota(c)?,
                    }
                } else {
                    let mut ids = Vec::new();
                    while !c.peek_is(")") {
                        ids.push(c.int()?);
                        if !c.eat(",") {
                            break;
                        }
                    }
                    MeshDevices::List(ids)
                });
                c.expect(")")?;
            } else {
                c.expect("'")?;
                let start = c.pos;
                let name = c.word();
                let name = text.sub(start, start + name.len());
                c.expect("'")?;
                c.expect("=")?;
                mesh.push(MeshAxis {
                    name,
                    size: c.int()?,
                });
            }
            if c.eat("]") {
                break;
            }
            c.expect(",")?;
        }
        let axes = c.list("{", "}", |c| {
            c.expect("'")?;
            let name = c.word();
            c.expect("'")?;
            let axis = mesh
                .iter()
                .position(|a| &*a.name == name)
                .ok_or("unknown mesh axis")? as i64;
            let sub_axis = if c.eat(":") {
                c.expect("(")?;
                let pre = c.int()?;
                c.expect(")")?;
                Some((pre, c.int()?))
            } else {
                None
            };
            Ok(AxisRef { axis, sub_axis })
        })?;
        return Ok(ReplicaGroups::Mesh {
            mesh,
            devices,
            axes,
        });
    }
    if c.peek_is("[") {
        let d = c.bracket_ints()?;
        let [groups, per_group] = d[..] else {
            return Err("expects [groups,devices per group]".into());
        };
        return Ok(ReplicaGroups::Iota {
            groups,
            per_group,
            iota: iota(c)?,
        });
    }
    Ok(ReplicaGroups::Explicit(c.int_lists()?))
}

/// `{op_type="..." op_name="..." ...}`
fn metadata(c: &mut Cursor<'_>, text: &SharedStr) -> PResult<OpMetadata> {
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
fn frontend_attributes(c: &mut Cursor<'_>, text: &SharedStr) -> PResult<FrontendAttributes> {
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

fn sharding_type(w: &str) -> ShardingType {
    ShardingType::from_name(w).unwrap_or(ShardingType::Other)
}

fn sharding(c: &mut Cursor<'_>, text: &SharedStr) -> PResult<Sharding> {
    let mut s = Sharding::default();
    c.expect("{")?;
    if c.peek_is("{") || c.peek_is("}") {
        s.kind = ShardingType::Tuple;
        if c.eat("}") {
            return Ok(s);
        }
        loop {
            s.tuple.push(sharding(c, text)?);
            if c.eat("}") {
                return Ok(s);
            }
            c.expect(",")?;
        }
    }
    s.kind = ShardingType::Other;
    loop {
        if c.eat("}") {
            break;
        }
        let w = c.word();
        match w {
            "replicated" => s.kind = ShardingType::Replicated,
            "manual" => s.kind = ShardingType::Manual,
            "unknown" => s.kind = ShardingType::Unknown,
            "unreduced" => s.kind = ShardingType::Unreduced,
            "maximal" => {
                s.kind = ShardingType::Maximal;
                c.expect("device")?;
                c.expect("=")?;
                s.devices = vec![c.int()?];
            }
            "devices" => {
                c.expect("=")?;
                s.tile_dims = c.bracket_ints()?;
                if c.peek_is("<=") {
                    s.iota = Some(iota(c)?);
                } else {
                    loop {
                        s.devices.push(c.int()?);
                        if !c.eat(",") {
                            break;
                        }
                    }
                }
            }
            "last_tile_dim_replicate" => s.last_tile_dim_replicate = true,
            "last_tile_dims" => {
                c.expect("=")?;
                s.last_tile_dims = c.list("{", "}", |c| Ok(sharding_type(c.word())))?;
            }
            "shard_as" | "shard_like" => s.shard_group = Some((w == "shard_like", c.int()?)),
            "metadata" => {
                c.expect("=")?;
                s.metadata = c.list("{", "}", |c| metadata(c, text))?;
            }
            "" => return Err(format!("unexpected text at offset {}", c.pos)),
            w => return Err(format!("unknown sharding field {w}")),
        }
    }
    Ok(s)
}

/// `{{0}: (1, {}), {1}: (0, {0})}`
fn aliasing(c: &mut Cursor<'_>) -> PResult<Vec<OutputAlias>> {
    c.list("{", "}", |c| {
        let output_index = c.ints()?;
        c.expect(":")?;
        c.expect("(")?;
        let operand = c.int()?;
        c.expect(",")?;
        let operand_index = c.ints()?;
        c.expect(")")?;
        Ok(OutputAlias {
            output_index,
            operand,
            operand_index,
        })
    })
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

fn original_value(c: &mut Cursor<'_>, text: &SharedStr) -> PResult<OriginalValue> {
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

/// `{visualizing_index=1,stat-1=33,stat-2=44}`
fn statistics(c: &mut Cursor<'_>, text: &SharedStr) -> PResult<Statistics> {
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

/// `{kind="sharding", entry={...}, exit={...}}`
fn domain(c: &mut Cursor<'_>, text: &SharedStr) -> PResult<Domain> {
    c.expect("{")?;
    c.expect("kind")?;
    c.expect("=")?;
    let kind = c.string(text)?;
    if &*kind != "sharding" {
        return Err(format!("a domain of kind {kind} is not supported"));
    }
    c.expect(",")?;
    c.expect("entry")?;
    c.expect("=")?;
    let entry = sharding(c, text)?;
    c.expect(",")?;
    c.expect("exit")?;
    c.expect("=")?;
    let exit = sharding(c, text)?;
    c.expect("}")?;
    Ok(Domain { entry, exit })
}

/// `{tolerance={atol=..,rtol=..,ulps=..}}` or `{mode=...}` (checked by
/// [`checks::check_result_accuracy`] first).
fn result_accuracy(v: &str) -> PResult<ResultAccuracy> {
    let mut c = Cursor::new(v);
    c.expect("{")?;
    if c.eat("mode") {
        c.expect("=")?;
        let w = c.word();
        let mode = match w {
            "default" => 0,
            "highest" => 1,
            _ => return Err(format!("unknown result accuracy mode {w}")),
        };
        return Ok(ResultAccuracy::Mode(mode));
    }
    c.expect("tolerance")?;
    c.expect("=")?;
    c.expect("{")?;
    let (mut atol, mut rtol, mut ulps) = (0.0, 0.0, 0);
    while !c.eat("}") {
        let key = c.word();
        c.expect("=")?;
        match key {
            "atol" | "rtol" => {
                let w = c.number_word();
                let x: f64 = w.parse().map_err(|_| format!("bad {key} {w}"))?;
                if key == "atol" {
                    atol = x
                } else {
                    rtol = x
                }
            }
            "ulps" => ulps = c.int()?,
            k => return Err(format!("unknown tolerance field {k}")),
        }
        c.eat(",");
    }
    Ok(ResultAccuracy::Tolerance { atol, rtol, ulps })
}

/// The header's `input_output_alias={ {0}: (0, {}, may-alias), ... }`.
pub fn input_output_alias(text: &SharedStr) -> PResult<Vec<InputOutputAlias>> {
    let mut c = Cursor::new(text);
    c.list("{", "}", |c| {
        let output_index = c.ints()?;
        c.expect(":")?;
        c.expect("(")?;
        let parameter = c.int()?;
        c.expect(",")?;
        let parameter_index = c.ints()?;
        let must_alias = if c.eat(",") {
            c.word() == "must-alias"
        } else {
            false
        };
        c.expect(")")?;
        Ok(InputOutputAlias {
            output_index,
            parameter,
            parameter_index,
            must_alias,
        })
    })
}

/// The header's `buffer_donor={ (0, {1}), ... }`.
pub fn buffer_donor(text: &SharedStr) -> PResult<Vec<BufferDonor>> {
    let mut c = Cursor::new(text);
    c.list("{", "}", |c| {
        c.expect("(")?;
        let parameter = c.int()?;
        c.expect(",")?;
        let parameter_index = c.ints()?;
        c.expect(")")?;
        Ok(BufferDonor {
            parameter,
            parameter_index,
        })
    })
}

/// The header's `spmd_parameters_shardings={{...}, {...}}`.
pub fn shardings(text: &SharedStr) -> PResult<Vec<Sharding>> {
    let mut c = Cursor::new(text);
    c.list("{", "}", |c| sharding(c, text))
}

// ---- printing ---------------------------------------------------------

/// Prints a typed value in XLA's canonical form, or as the text it was
/// read from. `comp_name` names a computation. Values that are not typed
/// here ([`AttrValue::Raw`], computations, the program shape) are the
/// printer's.
pub fn print(value: &AttrValue, out: &mut String) -> bool {
    match value {
        AttrValue::Int(v) => push_int(out, *v),
        AttrValue::Ints(v) => ints(out, v),
        AttrValue::IntLists(v) => {
            out.push('{');
            join(out, v, ",", |t, l| ints(t, l));
            out.push('}');
        }
        AttrValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        AttrValue::Bools(v) => {
            out.push('{');
            join(out, v, ",", |t, b| {
                t.push_str(if *b { "true" } else { "false" })
            });
            out.push('}');
        }
        AttrValue::Float(f) => written_or(out, f, |t, v| format_float(*v, t)),
        AttrValue::Str(s) => quoted(out, s),
        AttrValue::FusionKind(k) => out.push_str(k.name()),
        AttrValue::FftType(k) => out.push_str(k.name()),
        AttrValue::Distribution(k) => out.push_str(k.name()),
        AttrValue::RngAlgorithm(k) => out.push_str(k.name()),
        AttrValue::DotAlgorithm(k) => out.push_str(k.name()),
        AttrValue::Schedule(k) => out.push_str(k.name()),
        AttrValue::Transpose(k) => out.push_str(k.name()),
        AttrValue::Direction(d) => out.push_str(d.name()),
        AttrValue::CompareType(t) => out.push_str(t.name()),
        AttrValue::ApiVersion(v) => out.push_str(v.name()),
        AttrValue::Precisions(v) => {
            out.push('{');
            join(out, v, ",", |t, p| t.push_str(p.name()));
            out.push('}');
        }
        AttrValue::Shape(s) => s.write(out, true),
        AttrValue::Shapes(v) => {
            out.push('{');
            join(out, v, ", ", |t, s| s.write(t, true));
            out.push('}');
        }
        AttrValue::Window(w) => written_or(out, w, window_text),
        AttrValue::Padding(p) => written_or(out, p, |t, p| padding_text(p, t)),
        AttrValue::Slice(s) => written_or(out, s, |t, s| slice_text(s, t)),
        AttrValue::ConvDims(d) => written_or(out, d, dim_labels_text),
        AttrValue::ReplicaGroups(r) => written_or(out, r, replica_groups_text),
        AttrValue::Pairs(p) => written_or(out, p, |t, p| {
            t.push('{');
            join(t, p, ",", |t, (a, b)| {
                t.push('{');
                push_int(t, *a);
                t.push(',');
                push_int(t, *b);
                t.push('}');
            });
            t.push('}');
        }),
        AttrValue::Metadata(m) => written_or(out, m, metadata_text),
        AttrValue::FrontendAttributes(f) => written_or(out, f, frontend_attributes_text),
        AttrValue::Sharding(s) => written_or(out, s, |t, s| sharding_text(s, t, true)),
        AttrValue::Aliasing(a) => written_or(out, a, |t, a| aliasing_text(a, t)),
        AttrValue::Literal(l) => written_or(out, l, shaped_literal_text),
        AttrValue::OriginalValue(o) => written_or(out, o, original_value_text),
        AttrValue::Statistics(s) => written_or(out, s, statistics_text),
        AttrValue::Domain(d) => written_or(out, d, |t, d| {
            t.push_str("{kind=\"sharding\", entry=");
            sharding_text(&d.entry, t, false);
            t.push_str(", exit=");
            sharding_text(&d.exit, t, false);
            t.push('}');
        }),
        AttrValue::ResultAccuracy(r) => written_or(out, r, result_accuracy_text),
        AttrValue::InputOutputAlias(a) => written_or(out, a, |t, a| alias_text(a, t)),
        AttrValue::BufferDonor(d) => written_or(out, d, |t, d| donor_text(d, t)),
        AttrValue::Shardings(s) => written_or(out, s, |t, s| {
            t.push('{');
            join(t, s, ",", |t, s| sharding_text(s, t, true));
            t.push('}');
        }),
        AttrValue::DebugAttributes(d) => written_or(out, d, |t, d| {
            t.push_str(&super::debug_attributes::print(d))
        }),
        AttrValue::RecoveryTable(r) => written_or(out, r, |t, r| recovery_table_text(t, r)),
        AttrValue::Raw(_)
        | AttrValue::Comp(_)
        | AttrValue::Comps(_)
        | AttrValue::BackendConfig(_)
        | AttrValue::ProgramShape(_) => return false,
    }
    true
}

fn written_or<T>(out: &mut String, w: &Written<T>, f: impl FnOnce(&mut String, &T)) {
    match w.text() {
        Some(t) => out.push_str(t),
        None => f(out, w.value()),
    }
}

pub(crate) fn push_int(out: &mut String, v: i64) {
    out.push_str(itoa::Buffer::new().format(v));
}

fn join<T>(t: &mut String, items: &[T], sep: &str, mut f: impl FnMut(&mut String, &T)) {
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            t.push_str(sep);
        }
        f(t, x);
    }
}

fn ints(t: &mut String, v: &[i64]) {
    t.push('{');
    join(t, v, ",", |t, x| push_int(t, *x));
    t.push('}');
}

fn quoted(t: &mut String, s: &str) {
    t.push('"');
    c_escape(s, t);
    t.push('"');
}

/// A float attribute as XLA writes an f32 (`RoundTripFpToString`).
fn format_float(v: f32, t: &mut String) {
    format_f32(v, t);
}

fn window_text(t: &mut String, w: &Window) {
    t.push('{');
    let dims = &w.dims;
    let mut first = true;
    let mut field =
        |t: &mut String, name: &str, cond: bool, f: &dyn Fn(&mut String, &WindowDim)| {
            if !cond {
                return;
            }
            if !first {
                t.push(' ');
            }
            first = false;
            t.push_str(name);
            t.push('=');
            join(t, dims, "x", f);
        };
    field(t, "size", true, &|t, d| push_int(t, d.size));
    field(t, "stride", dims.iter().any(|d| d.stride != 1), &|t, d| {
        push_int(t, d.stride)
    });
    field(
        t,
        "pad",
        dims.iter().any(|d| d.pad_low != 0 || d.pad_high != 0),
        &|t, d| {
            push_int(t, d.pad_low);
            t.push('_');
            push_int(t, d.pad_high);
        },
    );
    field(
        t,
        "lhs_dilate",
        dims.iter().any(|d| d.base_dilation != 1),
        &|t, d| push_int(t, d.base_dilation),
    );
    field(
        t,
        "rhs_dilate",
        dims.iter().any(|d| d.window_dilation != 1),
        &|t, d| push_int(t, d.window_dilation),
    );
    field(
        t,
        "rhs_reversal",
        dims.iter().any(|d| d.reversal),
        &|t, d| t.push(if d.reversal { '1' } else { '0' }),
    );
    t.push('}');
}

fn padding_text(p: &[PaddingDim], t: &mut String) {
    let interior = p.iter().any(|d| d.interior != 0);
    join(t, p, "x", |t, d| {
        push_int(t, d.low);
        t.push('_');
        push_int(t, d.high);
        if interior {
            t.push('_');
            push_int(t, d.interior);
        }
    });
}

/// The strides are left out only when all are 1.
fn slice_text(s: &[SliceDim], t: &mut String) {
    let strides = s.iter().any(|d| d.stride != 1);
    t.push('{');
    join(t, s, ", ", |t, d| {
        t.push('[');
        push_int(t, d.start);
        t.push(':');
        push_int(t, d.limit);
        if strides {
            t.push(':');
            push_int(t, d.stride);
        }
        t.push(']');
    });
    t.push('}');
}

fn dim_labels_text(t: &mut String, d: &ConvDims) {
    /// As many labels as the highest dimension named needs, `?` for those
    /// named by none (XLA's `ConvolutionDimensionNumbersToString`).
    fn side(t: &mut String, named: &[(i64, char)], spatial: &[i64]) {
        let highest = named
            .iter()
            .map(|x| x.0)
            .chain(spatial.iter().copied())
            .max()
            .unwrap_or(0);
        // Malformed numbers are not worth a huge line.
        let rank = usize::try_from(highest.saturating_add(1))
            .unwrap_or(0)
            .min(spatial.len() + 2 + 64);
        let mut chars = vec!['?'; rank];
        for &(i, c) in named {
            if let Some(x) = usize::try_from(i).ok().and_then(|i| chars.get_mut(i)) {
                *x = c;
            }
        }
        for (n, &i) in spatial.iter().enumerate() {
            if let Some(x) = usize::try_from(i).ok().and_then(|i| chars.get_mut(i)) {
                *x = char::from_digit(n as u32, 10).unwrap_or('?');
            }
        }
        t.extend(chars);
    }
    side(
        t,
        &[(d.input_batch, 'b'), (d.input_feature, 'f')],
        &d.input_spatial,
    );
    t.push('_');
    side(
        t,
        &[
            (d.kernel_input_feature, 'i'),
            (d.kernel_output_feature, 'o'),
        ],
        &d.kernel_spatial,
    );
    t.push_str("->");
    side(
        t,
        &[(d.output_batch, 'b'), (d.output_feature, 'f')],
        &d.output_spatial,
    );
}

/// `<=[dims]`, and `T(perm)` unless the permutation is the identity.
fn iota_text(i: &Iota, t: &mut String) {
    t.push_str("<=[");
    join(t, &i.reshape_dims, ",", |t, x| push_int(t, *x));
    t.push(']');
    let identity = i
        .transpose_perm
        .iter()
        .enumerate()
        .all(|(k, &x)| x as usize == k);
    if !identity {
        t.push_str("T(");
        join(t, &i.transpose_perm, ",", |t, x| push_int(t, i64::from(*x)));
        t.push(')');
    }
}

fn replica_groups_text(t: &mut String, r: &ReplicaGroups) {
    match r {
        ReplicaGroups::Explicit(groups) => {
            t.push('{');
            join(t, groups, ",", |t, g| ints(t, g));
            t.push('}');
        }
        ReplicaGroups::Iota {
            groups,
            per_group,
            iota,
        } => {
            t.push('[');
            push_int(t, *groups);
            t.push(',');
            push_int(t, *per_group);
            t.push(']');
            iota_text(iota, t);
        }
        ReplicaGroups::Mesh {
            mesh,
            devices,
            axes,
        } => {
            t.push_str("mesh[");
            join(t, mesh, ",", |t, ax| {
                t.push('\'');
                t.push_str(&ax.name);
                t.push_str("'=");
                push_int(t, ax.size);
            });
            match devices {
                Some(MeshDevices::List(ids)) => {
                    t.push_str(", device_ids=(");
                    join(t, ids, ",", |t, x| push_int(t, *x));
                    t.push(')');
                }
                Some(MeshDevices::Iota { shape, iota }) => {
                    t.push_str(", device_ids=([");
                    join(t, shape, ",", |t, x| push_int(t, *x));
                    t.push(']');
                    iota_text(iota, t);
                    t.push(')');
                }
                None => {}
            }
            t.push_str("] {");
            join(t, axes, ",", |t, r| {
                let name = usize::try_from(r.axis)
                    .ok()
                    .and_then(|i| mesh.get(i))
                    .map_or("?", |a| &*a.name);
                t.push('\'');
                t.push_str(name);
                t.push('\'');
                if let Some((pre, size)) = r.sub_axis {
                    t.push_str(":(");
                    push_int(t, pre);
                    t.push(')');
                    push_int(t, size);
                }
            });
            t.push('}');
        }
    }
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
fn frontend_attributes_text(t: &mut String, fa: &FrontendAttributes) {
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

/// `HloSharding::ToString`.
pub fn sharding_text(s: &Sharding, t: &mut String, metadata: bool) {
    if s.kind == ShardingType::Tuple {
        t.push('{');
        for (i, e) in s.tuple.iter().enumerate() {
            if i > 0 {
                t.push_str(", ");
                if i % 5 == 0 {
                    t.push_str("/*index=");
                    push_int(t, i as i64);
                    t.push_str("*/");
                }
            }
            sharding_text(e, t, metadata);
        }
        t.push('}');
        return;
    }
    t.push('{');
    match s.kind {
        ShardingType::Replicated => t.push_str("replicated"),
        ShardingType::Manual => t.push_str("manual"),
        ShardingType::Unknown => t.push_str("unknown"),
        ShardingType::Unreduced => t.push_str("unreduced"),
        ShardingType::Maximal => {
            t.push_str("maximal device=");
            push_int(t, *s.devices.first().unwrap_or(&0));
        }
        _ => {
            t.push_str("devices=[");
            join(t, &s.tile_dims, ",", |t, x| push_int(t, *x));
            t.push(']');
            match &s.iota {
                Some(i) => iota_text(i, t),
                None => join(t, &s.devices, ",", |t, x| push_int(t, *x)),
            }
            if s.last_tile_dim_replicate {
                t.push_str(" last_tile_dim_replicate");
            }
            if !s.last_tile_dims.is_empty() {
                t.push_str(" last_tile_dims={");
                join(t, &s.last_tile_dims, ", ", |t, x| t.push_str(x.name()));
                t.push('}');
            }
        }
    }
    if let Some((like, id)) = s.shard_group {
        t.push_str(if like { " shard_like " } else { " shard_as " });
        push_int(t, id);
    }
    if metadata && !s.metadata.is_empty() {
        t.push_str(" metadata={");
        join(t, &s.metadata, ", ", metadata_text);
        t.push('}');
    }
    t.push('}');
}

fn aliasing_text(list: &[OutputAlias], t: &mut String) {
    t.push('{');
    join(t, list, ", ", |t, x| {
        ints(t, &x.output_index);
        t.push_str(": (");
        push_int(t, x.operand);
        t.push_str(", ");
        ints(t, &x.operand_index);
        t.push(')');
    });
    t.push('}');
}

/// A literal with its shape, as a custom call's `literal=` (XLA's
/// `Literal::ToString`): `s32[2]{0} {1, 2}`; a tuple `( a, b )`.
pub fn shaped_literal_text(t: &mut String, l: &crate::ir::Literal) {
    match &l.data {
        crate::ir::literal::LiteralData::Tuple(items) => {
            t.push_str("( ");
            join(t, items, ", ", shaped_literal_text);
            t.push_str(" )");
        }
        _ => {
            l.shape.write(t, true);
            t.push(' ');
            super::printer::literal(l, t);
        }
    }
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
fn original_value_text(t: &mut String, ov: &OriginalValue) {
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

fn statistics_text(t: &mut String, s: &Statistics) {
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

fn result_accuracy_text(t: &mut String, r: &ResultAccuracy) {
    match r {
        ResultAccuracy::Tolerance { atol, rtol, ulps } => {
            t.push_str("{tolerance={atol=");
            format_f64(*atol, t);
            t.push_str(",rtol=");
            format_f64(*rtol, t);
            t.push_str(",ulps=");
            push_int(t, *ulps);
            t.push_str("}}");
        }
        ResultAccuracy::Mode(m) => {
            t.push_str("{mode=");
            t.push_str(if *m == 1 { "highest" } else { "default" });
            t.push('}');
        }
    }
}

fn alias_text(list: &[InputOutputAlias], t: &mut String) {
    t.push_str("{ ");
    join(t, list, ", ", |t, a| {
        ints(t, &a.output_index);
        t.push_str(": (");
        push_int(t, a.parameter);
        t.push_str(", ");
        ints(t, &a.parameter_index);
        t.push_str(if a.must_alias {
            ", must-alias)"
        } else {
            ", may-alias)"
        });
    });
    t.push_str(" }");
}

fn donor_text(list: &[BufferDonor], t: &mut String) {
    t.push_str("{ ");
    join(t, list, ", ", |t, d| {
        t.push('(');
        push_int(t, d.parameter);
        t.push_str(", ");
        ints(t, &d.parameter_index);
        t.push(')');
    });
    t.push_str(" }");
}

/// One entry per line; a recovery module as the quoted, indented text of
/// the module in the default form.
fn recovery_table_text(t: &mut String, entries: &[RecoveryEntry]) {
    t.push_str("{\n");
    for e in entries {
        t.push_str("  ");
        original_array_text(&e.old, t);
        t.push_str(" : ");
        original_array_text(&e.new, t);
        if let Some(m) = &e.module {
            let text =
                super::printer::print_module_with(m, &crate::ir::PrintOptions::default_form());
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
