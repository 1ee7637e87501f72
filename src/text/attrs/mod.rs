//! The text syntax of every typed attribute ([`crate::ir::attrs`]): how
//! each is read, and how each prints in XLA's canonical form. The parser
//! reads through [`read`]; the printer prints through [`print`].
//!
//! This file says which keys are typed and holds the two dispatches and
//! the scalar values (integers, booleans, floats, strings, enums, lists of
//! them); each family of values, read and printed, has a file of its own:
//! `window` (windows, padding, slices, convolution dimension labels),
//! `collectives` (replica groups, iota tiles), `metadata` (metadata,
//! frontend attributes, statistics), `sharding` (shardings, domains),
//! `aliasing` (output-operand aliasing, the header's input-output aliases
//! and buffer donors), `original_value` (original values and arrays, the
//! origin recovery table), `result_accuracy`; `cursor` is the reader
//! they share.

mod aliasing;
mod collectives;
mod cursor;
mod metadata;
mod original_value;
mod result_accuracy;
mod sharding;
mod window;

pub use aliasing::{buffer_donor, input_output_alias};
pub(crate) use cursor::Cursor;
pub use metadata::metadata_text;
pub use sharding::{sharding_text, shardings};

use super::checks;
use super::number::{c_escape, format_f32};
use crate::ir::attrs::*;
use crate::ir::{Opcode, SharedStr};
use aliasing::{alias_text, aliasing, aliasing_text, donor_text};
use collectives::{replica_groups, replica_groups_text};
use metadata::{
    frontend_attributes, frontend_attributes_text, metadata, statistics, statistics_text,
};
use original_value::{original_value, original_value_text, recovery_table, recovery_table_text};
use result_accuracy::{result_accuracy, result_accuracy_text};
use sharding::{domain, sharding};
use std::sync::LazyLock;
use window::{
    dim_labels, dim_labels_text, padding, padding_text, slice, slice_text, window, window_text,
};

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
    match (key, opcode) {
        ("slice_sizes", Some(Opcode::CollectivePermute | Opcode::CollectivePermuteStart)) => {
            return Some(IntLists)
        }
        ("algorithm", Some(Opcode::RngBitGenerator)) => return Some(RngAlgorithm),
        _ => {}
    }
    // Looked up per attribute of every instruction: a map, not a match
    // that compares the key with each name in turn.
    static BY_KEY: LazyLock<crate::util::NameMap<'static, Kind>> = LazyLock::new(|| {
        INSTRUCTION_KEYS
            .iter()
            .flat_map(|&(kind, keys)| keys.iter().map(move |&key| (key, kind)))
            .collect()
    });
    BY_KEY.get(key).copied()
}

/// The typed keys of instructions, by the kind of value they hold (where
/// the kind depends on the opcode, the other opcodes' kind).
const INSTRUCTION_KEYS: &[(Kind, &[&str])] = {
    use Kind::*;
    &[
        (
            Int,
            &[
                "index_vector_dim",
                "channel_id",
                "feature_group_count",
                "batch_group_count",
                "feature_index",
                "exponent_bits",
                "mantissa_bits",
                "num_carries",
                "delta",
                "cross_program_prefetch_index",
                "k",
                "replica_count",
                "num_partitions",
            ],
        ),
        (
            Ints,
            &[
                "lhs_contracting_dims",
                "rhs_contracting_dims",
                "lhs_batch_dims",
                "rhs_batch_dims",
                "offset_dims",
                "collapsed_slice_dims",
                "start_index_map",
                "operand_batching_dims",
                "start_indices_batching_dims",
                "update_window_dims",
                "inserted_window_dims",
                "scatter_dims_to_operand_dims",
                "input_batching_dims",
                "scatter_indices_batching_dims",
                "dynamic_slice_sizes",
                "fft_length",
                "lhs_ragged_dims",
                "rhs_group_dims",
                "slice_sizes",
            ],
        ),
        (
            Bool,
            &[
                "is_stable",
                "largest",
                "is_composite",
                "custom_call_has_side_effect",
                "indices_are_sorted",
                "unique_indices",
                "use_global_device_ids",
                "constrain_layout",
                "is_host_transfer",
                "is_reverse",
                "is_associative",
                "has_dynamic_root",
                "left_side",
                "lower",
                "unit_diagonal",
                "is_scheduled",
                "alias_passthrough_params",
            ],
        ),
        (
            Bools,
            &[
                "parameter_replication",
                "allow_spmd_sharding_propagation_to_parameters",
                "allow_spmd_sharding_propagation_to_output",
            ],
        ),
        (Float, &["epsilon"]),
        (
            Str,
            &["async_execution_thread", "infeed_config", "outfeed_config"],
        ),
        (Fusion, &["kind"]),
        (FftType, &["fft_type"]),
        (Distribution, &["distribution"]),
        (DotAlgorithm, &["algorithm"]),
        (Schedule, &["schedule"]),
        (Transpose, &["transpose_a"]),
        (Precisions, &["operand_precision"]),
        (Window, &["window"]),
        (Padding, &["padding"]),
        (Slice, &["slice"]),
        (ConvDims, &["dim_labels"]),
        (ReplicaGroups, &["replica_groups"]),
        (Pairs, &["source_target_pairs"]),
        (Metadata, &["metadata"]),
        (FrontendAttributes, &["frontend_attributes"]),
        (Sharding, &["sharding", "spmd_output_sharding"]),
        (Aliasing, &["output_to_operand_aliasing"]),
        (OriginalValue, &["origin"]),
        (Statistics, &["statistics"]),
        (Domain, &["domain"]),
        (ResultAccuracy, &["result_accuracy"]),
    ]
};

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

type PResult<T> = Result<T, String>;

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
