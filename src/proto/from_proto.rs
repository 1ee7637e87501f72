//! `HloModuleProto` -> [`Module`], printing what XLA prints for the proto.
//!
//! What XLA does when it loads a proto, and so what this reader does:
//! - each computation's instructions are ordered by proto id, and printed in
//!   post order from that list (or in the schedule's order);
//! - computations are ordered by proto id and printed in XLA's computation
//!   post order (`MakeComputationPostOrder`);
//! - the stack-frame tables are rebuilt by walking the computations in proto
//!   order and their instructions in id order, each frame's chain added root
//!   first ([`ReadOptions::renumber_stack_frames`]).
//!
//! The reader streams. Per computation, pass 1 scans each encoded
//! instruction for its id, name, edges, stack frame and the bytes of its
//! shape (shapes are interned by those bytes); pass 2, in print order,
//! decodes each instruction into one reused message (metadata read in
//! place) and writes every name and attribute text of the computation into
//! one buffer the IR's strings are slices of. Computations convert on all
//! cores ([`par_map`]); the stack frames are numbered before, in XLA's
//! order, so the result does not depend on the thread count.

use super::attrs;
use super::messages::field_value_len;
use super::messages::*;
use super::ProtoError;
use crate::ir::attrs::{
    typed, CustomCallSchedule, DotAlgorithm, FftType, FusionKind, Precision, RandomDistribution,
    RngAlgorithm, Transpose as TransposeKind,
};
use crate::ir::instruction::{
    attr_key, ApiVersion, Attr, AttrList, AttrValue, ComparisonDirection, ComparisonType,
};
use crate::ir::literal::{Literal, LiteralData};
use crate::ir::module::{
    FileLocation, PrintOptions, ProgramShape, ProtoFrames, StackFrame, StackFrameIndex,
};
use crate::ir::shape::{push_int, ArrayShape, Layout, LayoutExtras, Shape, Tile};
use crate::ir::{
    CompId, Computation, InstrId, Instruction, Module, Opcode, Payload, PrimitiveType, SharedStr,
};
use crate::util::FxMap;
use half::{bf16, f16};
use prost::encoding::{DecodeContext, WireType};
use prost::Message;
use smallvec::SmallVec;
use std::ops::Range;
use std::sync::Arc;

/// How to read a proto.
#[derive(Clone, Copy, Debug)]
pub struct ReadOptions {
    /// Order the computations and renumber the stack-frame tables as XLA
    /// does when it loads a proto (true, the default: the text is what XLA
    /// prints). False keeps the proto's computation order and numbering, so
    /// that a module written by [`super::module_to_proto`] reads back as the
    /// text it was written from.
    pub xla_order: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions { xla_order: true }
    }
}

/// prost's `decode_varint`, with the one- and two-byte cases inline (keys,
/// lengths and most values).
#[inline(always)]
fn decode_varint(buf: &mut &[u8]) -> Result<u64, prost::DecodeError> {
    match **buf {
        [b0, ..] if b0 < 0x80 => {
            *buf = &buf[1..];
            Ok(u64::from(b0))
        }
        [b0, b1, ..] if b1 < 0x80 => {
            *buf = &buf[2..];
            Ok(u64::from(b0 & 0x7f) | u64::from(b1) << 7)
        }
        _ => prost::encoding::decode_varint(buf),
    }
}

/// prost's `decode_key` on the fast [`decode_varint`] (prost's own for the
/// errors).
#[inline(always)]
fn decode_key(buf: &mut &[u8]) -> Result<(u32, WireType), prost::DecodeError> {
    let orig = *buf;
    let v = decode_varint(buf)?;
    let wt = match v & 7 {
        0 => WireType::Varint,
        1 => WireType::SixtyFourBit,
        2 => WireType::LengthDelimited,
        3 => WireType::StartGroup,
        4 => WireType::EndGroup,
        5 => WireType::ThirtyTwoBit,
        _ => {
            *buf = orig;
            return prost::encoding::decode_key(buf);
        }
    };
    if v >> 3 == 0 || v > u64::from(u32::MAX) {
        *buf = orig;
        return prost::encoding::decode_key(buf);
    }
    Ok(((v >> 3) as u32, wt))
}

fn err<T>(message: impl Into<String>) -> Result<T, ProtoError> {
    Err(ProtoError::new(message))
}

/// Splits off a length-delimited value.
fn take_delimited<'a>(buf: &mut &'a [u8], what: &str) -> Result<&'a [u8], ProtoError> {
    let len = decode_varint(buf).map_err(|e| ProtoError::decode(what, e))?;
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    if len > buf.len() {
        return err(format!(
            "{what}: truncated (a field runs past the end of its message)"
        ));
    }
    let (head, tail) = buf.split_at(len);
    *buf = tail;
    Ok(head)
}

/// Calls `f` for each field of a message; `f` must consume the value.
fn fields<'a>(
    mut buf: &'a [u8],
    what: &str,
    mut f: impl FnMut(u32, WireType, &mut &'a [u8]) -> Result<(), ProtoError>,
) -> Result<(), ProtoError> {
    while !buf.is_empty() {
        let field = buf;
        let (tag, wt) =
            decode_key(&mut buf).map_err(|e| ProtoError::decode(what, e).within(field))?;
        f(tag, wt, &mut buf).map_err(|e| e.within(field))?;
    }
    Ok(())
}

fn merge_into<M: Message>(
    msg: &mut M,
    tag: u32,
    wt: WireType,
    buf: &mut &[u8],
    what: &str,
) -> Result<(), ProtoError> {
    msg.merge_field(tag, wt, buf, DecodeContext::default())
        .map_err(|e| ProtoError::decode(what, e))
}

/// A computation before conversion: its fields but the instructions, and
/// the encoded instructions.
struct CompData<'a> {
    /// The encoded computation, for error locations.
    bytes: &'a [u8],
    shell: HloComputationProto,
    instrs: Vec<&'a [u8]>,
}

/// The top of a module: every field but the computations, and the encoded
/// computations in proto order.
pub(crate) struct ModuleData<'a> {
    pub shell: HloModuleProto,
    /// The encoded fields the IR does not model ([`Module::proto_extras`]).
    extras: Vec<u8>,
    comps: Vec<CompData<'a>>,
}

/// `HloModuleProto` fields the IR does not model, kept as bytes: `id`,
/// `cross_program_prefetches`, `is_dynamic`, `spmd_output_sharding`,
/// `profile_info`, `spmd_parameters_shardings`, `device_assignment`,
/// `use_auto_spmd_partitioning`, `payloads` (decoded too, for the backend
/// configs that refer to them; kept for anything else that may).
const MODULE_EXTRA_FIELDS: &[u32] = &[5, 10, 11, 12, 13, 14, 15, 16, 22];

/// Decodes the module's own fields and splits out computations and
/// instructions without decoding them.
pub(crate) fn split_module(bytes: &[u8]) -> Result<ModuleData<'_>, ProtoError> {
    let mut shell = HloModuleProto::default();
    let mut comps = Vec::new();
    let mut extras = Vec::new();
    fields(bytes, "HloModuleProto", |tag, wt, buf| {
        if MODULE_EXTRA_FIELDS.contains(&tag) || !HloModuleProtoFields::knows(tag) {
            // Decoded too, so that a malformed one is an error.
            let start = *buf;
            merge_into(&mut shell, tag, wt, buf, "HloModuleProto")?;
            prost::encoding::encode_key(tag, wt, &mut extras);
            extras.extend_from_slice(&start[..start.len() - buf.len()]);
            return Ok(());
        }
        if tag == 3 {
            if wt != WireType::LengthDelimited {
                return err("HloModuleProto.computations: wrong wire type");
            }
            let c = take_delimited(buf, "HloModuleProto.computations")?;
            let step = format!("computations[{}]", comps.len());
            comps.push(split_computation(c).map_err(|e| e.in_path(&step, c))?);
            Ok(())
        } else {
            merge_into(&mut shell, tag, wt, buf, "HloModuleProto")
        }
    })
    .map_err(|e| e.in_path("HloModuleProto", bytes))?;
    Ok(ModuleData {
        shell,
        extras,
        comps,
    })
}

fn split_computation(bytes: &[u8]) -> Result<CompData<'_>, ProtoError> {
    let mut shell = HloComputationProto::default();
    let mut instrs = Vec::new();
    fields(bytes, "HloComputationProto", |tag, wt, buf| {
        if tag == 2 {
            if wt != WireType::LengthDelimited {
                return err("HloComputationProto.instructions: wrong wire type");
            }
            let at = *buf;
            let i = take_delimited(buf, "HloComputationProto.instructions")
                .map_err(|e| e.in_path(&format!("instructions[{}]", instrs.len()), at))?;
            instrs.push(i);
            Ok(())
        } else if tag == 4 {
            // The program shape: XLA derives it from the instructions, and so
            // does the writer.
            skip_field(tag, wt, buf)
        } else {
            merge_into(&mut shell, tag, wt, buf, "HloComputationProto")
        }
    })?;
    Ok(CompData {
        bytes,
        shell,
        instrs,
    })
}

/// Skips one field's value (a field pass 1 or pass 2 does not read).
#[inline]
fn skip_field(tag: u32, wt: WireType, buf: &mut &[u8]) -> Result<(), ProtoError> {
    // The common cases inline; groups and errors below.
    match wt {
        WireType::Varint => {
            if let Some(n) = buf.iter().take(10).position(|b| b & 0x80 == 0) {
                *buf = &buf[n + 1..];
                return Ok(());
            }
        }
        WireType::LengthDelimited => {
            let mut b = *buf;
            if let Ok(len) = decode_varint(&mut b) {
                if let Some(rest) = usize::try_from(len).ok().and_then(|l| b.get(l..)) {
                    *buf = rest;
                    return Ok(());
                }
            }
        }
        _ => {}
    }
    skip_field_slow(tag, wt, buf)
}

fn skip_field_slow(tag: u32, wt: WireType, buf: &mut &[u8]) -> Result<(), ProtoError> {
    let len = field_value_len(buf, wt, tag, 0)
        .map_err(|e| ProtoError::decode(&format!("field {tag}"), e))?;
    if len > buf.len() {
        return err(format!(
            "field {tag}: truncated (it runs past the end of its message)"
        ));
    }
    *buf = &buf[len..];
    Ok(())
}

fn wrong_wire_type<T>(what: &str, tag: u32, wt: WireType) -> Result<T, ProtoError> {
    err(format!(
        "malformed {what}: invalid wire type {wt:?} for field {tag}"
    ))
}

fn varint(buf: &mut &[u8], what: &str) -> Result<u64, ProtoError> {
    decode_varint(buf).map_err(|e| ProtoError::decode(what, e))
}

/// Appends a repeated int64 field's value(s), packed or not.
fn repeated_i64<A: smallvec::Array<Item = i64>>(
    out: &mut SmallVec<A>,
    tag: u32,
    wt: WireType,
    buf: &mut &[u8],
) -> Result<(), ProtoError> {
    const WHAT: &str = "HloInstructionProto";
    match wt {
        WireType::Varint => out.push(varint(buf, WHAT)? as i64),
        WireType::LengthDelimited => {
            let mut b = take_delimited(buf, WHAT)?;
            while !b.is_empty() {
                out.push(varint(&mut b, WHAT)? as i64);
            }
        }
        _ => return wrong_wire_type(WHAT, tag, wt),
    }
    Ok(())
}

/// What pass 1 reads of an encoded instruction: its id, name, edges,
/// stack frame and encoded shape.
struct Scan<'a> {
    id: i64,
    name: &'a [u8],
    /// The last `shape` field, and how many there are (several merge).
    shape: Option<&'a [u8]>,
    shape_fields: u32,
    operands: SmallVec<[i64; 4]>,
    control: SmallVec<[i64; 1]>,
    called: SmallVec<[i64; 2]>,
    stack_frame_id: i32,
}

impl<'a> Scan<'a> {
    fn new(bytes: &'a [u8]) -> Result<Scan<'a>, ProtoError> {
        const WHAT: &str = "HloInstructionProto";
        let mut s = Scan {
            id: 0,
            name: &[],
            shape: None,
            shape_fields: 0,
            operands: SmallVec::new(),
            control: SmallVec::new(),
            called: SmallVec::new(),
            stack_frame_id: 0,
        };
        fields(bytes, WHAT, |tag, wt, buf| {
            match (tag, wt) {
                (1, WireType::LengthDelimited) => s.name = take_delimited(buf, WHAT)?,
                (3, WireType::LengthDelimited) => {
                    s.shape = Some(take_delimited(buf, WHAT)?);
                    s.shape_fields += 1;
                }
                (7, WireType::LengthDelimited) => {
                    let m = take_delimited(buf, WHAT)?;
                    fields(m, "OpMetadata", |tag, wt, buf| match (tag, wt) {
                        (15, WireType::Varint) => {
                            s.stack_frame_id = varint(buf, "OpMetadata")? as i32;
                            Ok(())
                        }
                        (15, _) => wrong_wire_type("OpMetadata", tag, wt),
                        _ => skip_field(tag, wt, buf),
                    })?;
                }
                (35, WireType::Varint) => s.id = varint(buf, WHAT)? as i64,
                (36, _) => repeated_i64(&mut s.operands, tag, wt, buf)?,
                (37, _) => repeated_i64(&mut s.control, tag, wt, buf)?,
                (38, _) => repeated_i64(&mut s.called, tag, wt, buf)?,
                (1 | 3 | 7 | 35, _) => return wrong_wire_type(WHAT, tag, wt),
                _ => skip_field(tag, wt, buf)?,
            }
            Ok(())
        })?;
        Ok(s)
    }

    fn name(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(self.name)
    }
}

/// Proto instruction id -> position in the computation: a table when the
/// ids are dense (XLA numbers them `computation << 32 | n`), else a map.
struct IdIndex {
    base: i64,
    dense: Vec<u32>,
    map: FxMap<i64, u32>,
    /// The ids increase in proto order.
    sorted: bool,
}

impl IdIndex {
    fn new(scans: &[Scan<'_>]) -> Result<IdIndex, ProtoError> {
        let n = scans.len();
        let min = scans.iter().map(|s| s.id).min().unwrap_or(0);
        let max = scans.iter().map(|s| s.id).max().unwrap_or(0);
        let sorted = scans.windows(2).all(|w| w[0].id < w[1].id);
        let span = i128::from(max) - i128::from(min);
        let mut index = IdIndex {
            base: min,
            dense: Vec::new(),
            map: FxMap::default(),
            sorted,
        };
        let twice = |s: &Scan<'_>| {
            err(format!(
                "instruction id {} is used twice ({})",
                s.id,
                s.name()
            ))
        };
        if span < 4 * n as i128 + 16 {
            index.dense = vec![u32::MAX; span as usize + 1];
            for (i, s) in scans.iter().enumerate() {
                let slot = &mut index.dense[(s.id - min) as usize];
                if *slot != u32::MAX {
                    return twice(s);
                }
                *slot = i as u32;
            }
        } else {
            index.map.reserve(n);
            for (i, s) in scans.iter().enumerate() {
                if index.map.insert(s.id, i as u32).is_some() {
                    return twice(s);
                }
            }
        }
        Ok(index)
    }

    fn get(&self, id: i64) -> Option<usize> {
        if self.dense.is_empty() {
            return self.map.get(&id).map(|&l| l as usize);
        }
        let i = usize::try_from(id.checked_sub(self.base)?).ok()?;
        match self.dense.get(i) {
            Some(&l) if l != u32::MAX => Some(l as usize),
            _ => None,
        }
    }
}

/// A length-delimited value's encoding (length, then bytes).
fn encode_len(b: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(b.len() + 10);
    prost::encoding::encode_varint(b.len() as u64, &mut v);
    v.extend_from_slice(b);
    v
}

/// Reads a binary `HloModuleProto`.
pub fn module_from_proto(bytes: &[u8], options: &ReadOptions) -> Result<Module, ProtoError> {
    let data = split_module(bytes)?;
    read(&data, options)
}

/// `f` over `items` on the machine's cores (each thread with its own
/// `init()` state), results in the items' order.
fn par_map<T: Sync, R: Send, W>(
    items: &[T],
    parallel: bool,
    init: impl Fn() -> W + Sync,
    f: impl Fn(&mut W, usize, &T) -> R + Sync,
) -> Vec<R> {
    let threads = if parallel {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(items.len())
            .min(16)
    } else {
        1
    };
    if threads <= 1 {
        let mut w = init();
        return items
            .iter()
            .enumerate()
            .map(|(i, x)| f(&mut w, i, x))
            .collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let parts: Vec<Vec<(usize, R)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut w = init();
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(x) = items.get(i) else { break };
                        out.push((i, f(&mut w, i, x)));
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    let mut slots: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    for (i, r) in parts.into_iter().flatten() {
        slots[i] = Some(r);
    }
    slots
        .into_iter()
        .map(|r| r.expect("every item is mapped"))
        .collect()
}

/// The nonzero stack frame ids of a computation's instructions, in id order.
fn frame_ids(c: &CompData<'_>) -> Result<Vec<i32>, ProtoError> {
    let mut v: Vec<(i64, i32)> = Vec::new();
    for (k, bytes) in c.instrs.iter().enumerate() {
        let s = Scan::new(bytes).map_err(|e| e.in_path(&format!("instructions[{k}]"), bytes))?;
        if s.stack_frame_id != 0 {
            v.push((s.id, s.stack_frame_id));
        }
    }
    v.sort_by_key(|x| x.0);
    Ok(v.into_iter().map(|x| x.1).collect())
}

/// Whether a module is worth converting on several threads.
fn worth_threads(data: &ModuleData<'_>) -> bool {
    data.comps.len() > 1 && data.comps.iter().map(|c| c.instrs.len()).sum::<usize>() > 4_000
}

fn read(data: &ModuleData<'_>, options: &ReadOptions) -> Result<Module, ProtoError> {
    let mut comp_ids = FxMap::default();
    for (i, c) in data.comps.iter().enumerate() {
        if comp_ids.insert(c.shell.id, i).is_some() {
            return err(format!(
                "computation id {} is used twice ({})",
                c.shell.id, c.shell.name
            ));
        }
    }
    let mut frames = Frames {
        index: data.shell.stack_frame_index.as_ref(),
        renumber: options.xla_order,
        out: StackFrameIndex::default(),
        memo: FxMap::default(),
        files: FxMap::default(),
        funcs: FxMap::default(),
        locs: FxMap::default(),
        frames: FxMap::default(),
    };
    let shell = &data.shell;
    let mut module = Module::new(shell.name.as_str());
    let comp_refs: Vec<CompId> = data
        .comps
        .iter()
        .map(|_| module.reserve_computation())
        .collect();
    let entry = *comp_ids.get(&shell.entry_computation_id).ok_or_else(|| {
        ProtoError::new(format!(
            "the entry computation id {} does not exist",
            shell.entry_computation_id
        ))
    })?;
    let parallel = worth_threads(data);
    // XLA numbers the stack frames walking the computations in proto order
    // and their instructions in id order.
    if frames.renumber && frames.index.is_some() {
        let ids = par_map(
            &data.comps,
            parallel,
            || (),
            |_, i, c| {
                frame_ids(c).map_err(|e| {
                    e.context(format!("computation {}", c.shell.name))
                        .in_path(&format!("HloModuleProto.computations[{i}]"), c.bytes)
                })
            },
        );
        for list in ids {
            for id in list? {
                frames.map(id)?;
            }
        }
    }
    let scheduled = shell.schedule.is_some();
    let results = par_map(
        &data.comps,
        parallel,
        || Reader {
            comp_ids: &comp_ids,
            comp_refs: &comp_refs,
            frames: &frames,
            shapes: FxMap::default(),
            keys: FxMap::default(),
            schedule: shell.schedule.as_ref(),
            payloads: &shell.payloads,
            scratch: HloInstructionProto::default(),
        },
        |r, i, c| {
            r.computation(c, scheduled).map_err(|e| {
                e.context(format!("computation {}", c.shell.name))
                    .in_path(&format!("HloModuleProto.computations[{i}]"), c.bytes)
            })
        },
    );
    let mut built: Vec<Option<Computation>> = Vec::with_capacity(data.comps.len());
    // Per computation, for each instruction in id order that calls
    // computations, the computations it calls.
    let mut calls: Vec<Vec<SmallVec<[usize; 2]>>> = Vec::with_capacity(data.comps.len());
    let mut any_async_start = false;
    for r in results {
        let (comp, comp_calls, has_async_start) = r?;
        built.push(Some(comp));
        calls.push(comp_calls);
        any_async_start |= has_async_start;
    }
    let folded = if any_async_start {
        fold_async_sugar(&mut built, &comp_refs, entry)
    } else {
        vec![false; built.len()]
    };
    let mut order = computation_order(data, &calls, entry)?;
    if !frames.renumber {
        order = (0..data.comps.len()).collect();
    }
    for i in order {
        if folded[i] {
            continue;
        }
        let mut comp = built[i].take().expect("each computation is placed once");
        comp.proto_position = Some(i);
        module.define_computation(comp_refs[i], comp);
    }
    module.set_entry(comp_refs[entry]);
    // Header: what XLA prints from the proto alone.
    let mut header: Vec<Attr> = Vec::new();
    if shell.schedule.is_some() {
        header.push(Attr {
            key: attr_key("is_scheduled"),
            value: AttrValue::Bool(true),
        });
    }
    if let Some(alias) = &shell.input_output_alias {
        if !alias.entries.is_empty() {
            header.push(Attr {
                key: attr_key("input_output_alias"),
                value: AttrValue::InputOutputAlias(typed(attrs::from_input_output_alias(alias))),
            });
        }
    }
    if let Some(donor) = &shell.buffer_donor {
        if !donor.entries.is_empty() {
            header.push(Attr {
                key: attr_key("buffer_donor"),
                value: AttrValue::BufferDonor(typed(attrs::from_buffer_donor(donor))),
            });
        }
    }
    if let Some(ps) = &shell.host_program_shape {
        let mut p = ProgramShape {
            parameters: ps
                .parameters
                .iter()
                .map(|s| shape_from_proto(s, 0))
                .collect::<Result<_, _>>()?,
            result: shape_from_proto(ps.result.as_ref().unwrap_or(&ShapeProto::default()), 0)?,
        };
        for s in p
            .parameters
            .iter_mut()
            .chain(std::iter::once(&mut p.result))
        {
            s.fill_default_layouts();
        }
        header.push(Attr {
            key: attr_key("entry_computation_layout"),
            value: AttrValue::ProgramShape(Box::new(p)),
        });
    }
    if let Some(fa) = &shell.frontend_attributes {
        if !fa.map.is_empty() {
            header.push(Attr {
                key: attr_key("frontend_attributes"),
                value: AttrValue::FrontendAttributes(typed(attrs::from_frontend_attributes(fa))),
            });
        }
    }
    if let Some(table) = &shell.original_value_recovery_table {
        if !table.entries.is_empty() {
            header.push(Attr {
                key: attr_key("origin_recovery_table"),
                value: AttrValue::RecoveryTable(typed(recovery_table(table, options)?)),
            });
        }
    }
    let mut extras = data.extras.clone();
    if !shell.debug_attributes.is_empty() {
        match attrs::from_debug_attributes(&shell.debug_attributes) {
            Some(table) => header.push(Attr {
                key: attr_key("debug_attributes"),
                value: AttrValue::DebugAttributes(typed(table)),
            }),
            // What the text cannot say stays as bytes, like any field the
            // IR does not model.
            None => {
                for e in &shell.debug_attributes {
                    prost::encoding::message::encode(24, e, &mut extras);
                }
            }
        }
    }
    module.header = header;
    let kept_frames = match frames.index {
        Some(index) if frames.renumber => {
            let mut renumbered = vec![0i64; index.stack_frames.len()];
            for (&orig, &new) in &frames.memo {
                if let Some(slot) = usize::try_from(orig - 1)
                    .ok()
                    .and_then(|i| renumbered.get_mut(i))
                {
                    *slot = new;
                }
            }
            Some((index_from_proto(index), renumbered))
        }
        _ => None,
    };
    module.stack_frames = frames.finish();
    if let Some((original, renumbered)) = kept_frames {
        let read_as = module.stack_frames.clone().unwrap_or_default();
        if original != read_as {
            module.proto_frames = Some(Arc::new(ProtoFrames {
                original,
                read_as,
                renumbered: renumbered.into(),
            }));
        }
    }
    if !extras.is_empty() {
        module.proto_extras = Some(extras.into());
    }
    module.style = PrintOptions::default_form();
    Ok(module)
}

/// Folds the async computations XLA prints as sugar into their ops: an
/// `async-start` whose computation (called by it alone) is parameters and
/// one op prints as `<op>-start(...)` with the op's attributes, its
/// `-update`s and `-done` as `<op>-update`/`<op>-done`, and the computation
/// is not printed. Returns which computations were folded.
fn fold_async_sugar(
    built: &mut [Option<Computation>],
    comp_refs: &[CompId],
    entry: usize,
) -> Vec<bool> {
    let mut folded = vec![false; built.len()];
    let index: FxMap<CompId, usize> = comp_refs.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    let mut callers = vec![0usize; built.len()];
    let mut starts: Vec<(usize, InstrId, usize)> = Vec::new();
    for (i, comp) in built.iter().enumerate() {
        let Some(comp) = comp else { continue };
        for (id, instr) in comp.instructions() {
            for c in instr.called_computations() {
                if let Some(&j) = index.get(&c) {
                    callers[j] += 1;
                    if instr.opcode == Opcode::AsyncStart {
                        starts.push((i, id, j));
                    }
                }
            }
        }
    }
    for (i, start, j) in starts {
        if callers[j] != 1 || j == entry || j == i || folded[j] {
            continue;
        }
        let Some(callee) = &built[j] else { continue };
        let Some(root) = callee.root_opt() else {
            continue;
        };
        // The sugar has nowhere to keep fields this crate does not model.
        if callee.has_proto_unknown() {
            continue;
        }
        let single = callee
            .instructions()
            .all(|(id, x)| id == root || x.opcode == Opcode::Parameter);
        if !single {
            continue;
        }
        let root = callee.instr(root);
        let op = root.opcode;
        // `all-gather-start` and the like are ops of their own.
        if !op.can_be_async_wrapped() {
            continue;
        }
        let own: Vec<Attr> = root
            .attrs
            .iter()
            .filter(|a| !super::stays_on_async_start(&a.key))
            .cloned()
            .collect();
        let Some(comp) = &mut built[i] else { continue };
        // The start's attributes before `calls`, the op's, and the rest.
        let s = comp.instr_mut(start);
        let at = s
            .attrs
            .iter()
            .position(|a| a.key == "calls")
            .unwrap_or(s.attrs.len());
        let rest: Vec<Attr> = s.attrs.drain(at..).skip(1).collect();
        s.attrs.extend(own);
        s.attrs.extend(rest);
        s.async_wrapped = Some(op);
        let chain: Vec<InstrId> = comp
            .instructions()
            .filter(|(id, x)| {
                matches!(x.opcode, Opcode::AsyncUpdate | Opcode::AsyncDone)
                    && async_chain_start(comp, *id) == Some(start)
            })
            .map(|(id, _)| id)
            .collect();
        for id in chain {
            comp.instr_mut(id).async_wrapped = Some(op);
        }
        folded[j] = true;
    }
    folded
}

/// The `async-start` an `-update`/`-done` chain begins with.
pub(crate) fn async_chain_start(comp: &Computation, mut i: InstrId) -> Option<InstrId> {
    // Each step goes to an operand, which comes earlier: no cycle.
    loop {
        let instr = comp.instr(i);
        match instr.opcode {
            Opcode::AsyncStart => return Some(i),
            Opcode::AsyncUpdate | Opcode::AsyncDone => i = *instr.operands().first()?,
            _ => return None,
        }
    }
}

/// Stack frames as XLA renumbers them, or as the proto has them.
struct Frames<'p> {
    index: Option<&'p StackFrameIndexProto>,
    renumber: bool,
    out: StackFrameIndex,
    memo: FxMap<i32, i64>,
    files: FxMap<String, i64>,
    funcs: FxMap<String, i64>,
    locs: FxMap<(i64, i64, i64, i64, i64, i64), i64>,
    frames: FxMap<(i64, i64), i64>,
}

impl Frames<'_> {
    /// The id to print for a proto stack frame id.
    fn map(&mut self, id: i32) -> Result<i64, ProtoError> {
        if id == 0 || !self.renumber {
            return Ok(i64::from(id));
        }
        if let Some(&n) = self.memo.get(&id) {
            return Ok(n);
        }
        let Some(index) = self.index else {
            return err(format!(
                "stack_frame_id {id} but the module has no stack frame index"
            ));
        };
        // The chain, leaf first, stopping at a frame already mapped.
        let mut chain = Vec::new();
        let mut cur = id;
        let mut parent_new = 0;
        while cur != 0 {
            if let Some(&n) = self.memo.get(&cur) {
                parent_new = n;
                break;
            }
            if chain.len() > index.stack_frames.len() || chain.contains(&cur) {
                return err(format!("stack frame {id}: its parent chain has a cycle"));
            }
            let frame = usize::try_from(cur - 1)
                .ok()
                .and_then(|i| index.stack_frames.get(i))
                .ok_or_else(|| ProtoError::new(format!("stack frame id {cur} does not exist")))?;
            chain.push(cur);
            cur = frame.parent_frame_id;
        }
        for &fid in chain.iter().rev() {
            let frame = &index.stack_frames[(fid - 1) as usize];
            let loc = usize::try_from(frame.file_location_id - 1)
                .ok()
                .and_then(|i| index.file_locations.get(i))
                .ok_or_else(|| {
                    ProtoError::new(format!(
                        "file location id {} does not exist",
                        frame.file_location_id
                    ))
                })?;
            let name = |list: &[String], i: i32, what: &str| {
                usize::try_from(i - 1)
                    .ok()
                    .and_then(|i| list.get(i))
                    .cloned()
                    .ok_or_else(|| ProtoError::new(format!("{what} id {i} does not exist")))
            };
            let file = name(&index.file_names, loc.file_name_id, "file name")?;
            let func = name(&index.function_names, loc.function_name_id, "function name")?;
            let out = &mut self.out;
            let file_id = *self.files.entry(file.clone()).or_insert_with(|| {
                out.file_names.push(file.into());
                out.file_names.len() as i64
            });
            let func_id = *self.funcs.entry(func.clone()).or_insert_with(|| {
                out.function_names.push(func.into());
                out.function_names.len() as i64
            });
            let l = FileLocation {
                file_name_id: file_id,
                function_name_id: func_id,
                line: loc.line.into(),
                end_line: loc.end_line.into(),
                column: loc.column.into(),
                end_column: loc.end_column.into(),
            };
            let key = (
                l.file_name_id,
                l.function_name_id,
                l.line,
                l.end_line,
                l.column,
                l.end_column,
            );
            let loc_id = *self.locs.entry(key).or_insert_with(|| {
                out.file_locations.push(l);
                out.file_locations.len() as i64
            });
            let new_id = *self.frames.entry((loc_id, parent_new)).or_insert_with(|| {
                out.stack_frames.push(StackFrame {
                    file_location_id: loc_id,
                    parent_frame_id: parent_new,
                });
                out.stack_frames.len() as i64
            });
            self.memo.insert(fid, new_id);
            parent_new = new_id;
        }
        Ok(parent_new)
    }

    /// The id to print for a proto stack frame id [`Frames::map`] has seen.
    fn lookup(&self, id: i32) -> Result<i64, ProtoError> {
        if id == 0 || !self.renumber {
            return Ok(i64::from(id));
        }
        match (self.memo.get(&id), self.index) {
            (Some(&n), _) => Ok(n),
            (None, None) => err(format!(
                "stack_frame_id {id} but the module has no stack frame index"
            )),
            (None, Some(_)) => err(format!("stack frame id {id} was not numbered")),
        }
    }

    fn finish(self) -> Option<StackFrameIndex> {
        if !self.renumber {
            return Some(index_from_proto(self.index?))
                .filter(|i| *i != StackFrameIndex::default());
        }
        (self.out != StackFrameIndex::default()).then_some(self.out)
    }
}

/// A proto's stack-frame tables, as they are.
fn index_from_proto(index: &StackFrameIndexProto) -> StackFrameIndex {
    StackFrameIndex {
        file_names: index.file_names.iter().map(|s| s.as_str().into()).collect(),
        function_names: index
            .function_names
            .iter()
            .map(|s| s.as_str().into())
            .collect(),
        file_locations: index
            .file_locations
            .iter()
            .map(|l| FileLocation {
                file_name_id: l.file_name_id.into(),
                function_name_id: l.function_name_id.into(),
                line: l.line.into(),
                end_line: l.end_line.into(),
                column: l.column.into(),
                end_column: l.end_column.into(),
            })
            .collect(),
        stack_frames: index
            .stack_frames
            .iter()
            .map(|f| StackFrame {
                file_location_id: f.file_location_id.into(),
                parent_frame_id: f.parent_frame_id.into(),
            })
            .collect(),
    }
}

/// A value whose text is a range of the computation's text buffer.
enum PVal {
    Raw(Range<usize>),
    Value(AttrValue),
    Metadata(Box<DeferredMetadata>),
    Int(i64),
    Ints(Box<[i64]>),
    Comp(CompId),
    Comps(Box<[CompId]>),
    Str(Range<usize>),
    BackendConfig(Range<usize>),
    Direction(ComparisonDirection),
    CompareType(ComparisonType),
    ApiVersion(ApiVersion),
}

/// An `OpMetadata` whose strings are ranges of the computation's buffer.
struct DeferredMetadata {
    /// op_type, op_name, source_file, deduplicated_name, scheduling_name.
    strings: [Range<usize>; 5],
    /// source_line, source_end_line, source_column, source_end_column.
    lines: [i32; 4],
    profile_type: Vec<i32>,
    stack_frame_id: i32,
}

/// An instruction waiting for its computation's text buffer.
struct Pending {
    name: Range<usize>,
    opcode: Opcode,
    shape: Arc<Shape>,
    operands: SmallVec<[InstrId; 4]>,
    control: Vec<InstrId>,
    attrs: SmallVec<[(&'static str, PVal); 2]>,
    payload: Payload,
}

/// Converts computations; one per thread, sharing the module-wide tables.
struct Reader<'c> {
    comp_ids: &'c FxMap<i64, usize>,
    comp_refs: &'c [CompId],
    frames: &'c Frames<'c>,
    /// Shapes by their encoded `ShapeProto`, with its element type.
    shapes: FxMap<Box<[u8]>, (Arc<Shape>, i32)>,
    keys: FxMap<&'static str, SharedStr>,
    schedule: Option<&'c HloScheduleProto>,
    /// `HloModuleProto.payloads`, which `backend_config_payload` ids index.
    payloads: &'c [Vec<u8>],
    /// The message each instruction is decoded into, reused.
    scratch: HloInstructionProto,
}

impl Reader<'_> {
    fn key(&mut self, k: &'static str) -> SharedStr {
        // A buffer of this reader's own, not the shared one of `attr_key`:
        // threads cloning one `Arc` would contend on its count.
        self.keys
            .entry(k)
            .or_insert_with(|| SharedStr::from(k))
            .clone()
    }

    fn shape(&self, p: &ShapeProto) -> Result<Shape, ProtoError> {
        shape_from_proto(p, 0)
    }

    /// An instruction's shape: an array without a layout gets XLA's
    /// default, as the text parser gives it, so that the text printed for
    /// the proto reads back as itself.
    fn instruction_shape(&self, p: &ShapeProto) -> Result<Shape, ProtoError> {
        let mut s = shape_from_proto(p, 0)?;
        s.fill_default_layouts();
        Ok(s)
    }

    fn comp_ref(&self, id: i64) -> Result<(usize, CompId), ProtoError> {
        match self.comp_ids.get(&id) {
            Some(&i) => Ok((i, self.comp_refs[i])),
            None => err(format!("called computation id {id} does not exist")),
        }
    }

    /// The shape of an instruction, interned by its encoded `ShapeProto`
    /// (equal bytes are equal shapes), with the proto's element type.
    fn shape_of(&mut self, scan: &Scan<'_>, bytes: &[u8]) -> Result<(Arc<Shape>, i32), ProtoError> {
        if scan.shape_fields > 1 {
            // Several shape fields merge: decode the whole instruction.
            let mut p = HloInstructionProto::default();
            p.merge(bytes)
                .map_err(|e| ProtoError::decode("HloInstructionProto", e))?;
            let sp = p.msg.shape.unwrap_or_default();
            return Ok((Arc::new(self.instruction_shape(&sp)?), sp.element_type));
        }
        let Some(sb) = scan.shape else {
            return err(format!("instruction {}: has no shape", scan.name()));
        };
        if let Some((a, t)) = self.shapes.get(sb) {
            return Ok((Arc::clone(a), *t));
        }
        let sp = ShapeProto::decode(sb)
            .map_err(|e| ProtoError::decode("ShapeProto", e))
            .and_then(|sp| Ok((self.instruction_shape(&sp)?, sp.element_type)))
            .map_err(|e| e.context(format!("instruction {}", scan.name())))?;
        let a = Arc::new(sp.0);
        self.shapes.insert(sb.into(), (Arc::clone(&a), sp.1));
        Ok((a, sp.1))
    }

    #[allow(clippy::type_complexity)]
    fn computation(
        &mut self,
        data: &CompData<'_>,
        scheduled: bool,
    ) -> Result<(Computation, Vec<SmallVec<[usize; 2]>>, bool), ProtoError> {
        let n = data.instrs.len();
        // Pass 1: ids, edges, stack frames and shapes, without decoding the
        // rest of each instruction.
        let mut scans: Vec<Scan<'_>> = Vec::with_capacity(n);
        for (k, bytes) in data.instrs.iter().enumerate() {
            scans.push(
                Scan::new(bytes).map_err(|e| e.in_path(&format!("instructions[{k}]"), bytes))?,
            );
        }
        let id_to_local = IdIndex::new(&scans)?;
        let local = |id: i64, what: &str, user: &Scan<'_>| {
            id_to_local.get(id).ok_or_else(|| {
                ProtoError::new(format!(
                    "instruction {}: {what} id {id} does not exist in the computation",
                    user.name()
                ))
            })
        };
        let mut operands: Vec<SmallVec<[usize; 4]>> = Vec::with_capacity(n);
        let mut controls: Vec<SmallVec<[usize; 1]>> = Vec::with_capacity(n);
        let mut has_users = vec![false; n];
        for p in &scans {
            let ops = p
                .operands
                .iter()
                .map(|&id| local(id, "operand", p))
                .collect::<Result<SmallVec<_>, _>>()?;
            let cps = p
                .control
                .iter()
                .map(|&id| local(id, "control predecessor", p))
                .collect::<Result<SmallVec<_>, _>>()?;
            for &o in ops.iter().chain(cps.iter()) {
                has_users[o] = true;
            }
            operands.push(ops);
            controls.push(cps);
        }
        let mut by_id: Vec<usize> = (0..n).collect();
        if !id_to_local.sorted {
            by_id.sort_unstable_by_key(|&i| scans[i].id);
        }
        // Called computations, in id order.
        let mut calls: Vec<SmallVec<[usize; 2]>> = Vec::new();
        for &i in &by_id {
            if !scans[i].called.is_empty() {
                let cs = scans[i]
                    .called
                    .iter()
                    .map(|&c| self.comp_ref(c).map(|x| x.0))
                    .collect::<Result<SmallVec<_>, _>>()?;
                calls.push(cs);
            }
        }
        let sequence = if scheduled {
            self.schedule
                .and_then(|s| s.sequences.get(&data.shell.id))
                .map(|s| &s.instruction_ids)
        } else {
            None
        };
        let order: Vec<usize> = match sequence {
            Some(seq) if seq.len() == n => seq
                .iter()
                .map(|&id| {
                    id_to_local.get(id).ok_or_else(|| {
                        ProtoError::new(format!(
                            "the schedule names instruction id {id}, which does not exist"
                        ))
                    })
                })
                .collect::<Result<_, _>>()?,
            _ => post_order(&by_id, &operands, &controls, &has_users),
        };
        if order.len() != n {
            return err("the operands of its instructions form a cycle");
        }
        // Pass 2, in print order (operands first): decode each instruction
        // into one reused message and convert it.
        let mut text = String::with_capacity(n * 96);
        let mut ids: Vec<Option<InstrId>> = vec![None; n];
        let mut types: Vec<i32> = vec![0; n];
        let mut pending: Vec<Pending> = Vec::with_capacity(n);
        let mut bare_precision: Vec<u32> = Vec::new();
        let mut unknown: Vec<(u32, Box<[u8]>)> = Vec::new();
        let mut has_async_start = false;
        let mut p = std::mem::take(&mut self.scratch);
        for &i in &order {
            let scan = &scans[i];
            let mut ops = SmallVec::new();
            for &o in &operands[i] {
                match ids[o] {
                    Some(id) => ops.push(id),
                    None => {
                        return err(format!(
                            "instruction {}: its operands form a cycle (operand {} comes after it)",
                            scan.name(),
                            scans[o].name()
                        ))
                    }
                }
            }
            let mut control = Vec::new();
            for &o in &controls[i] {
                match ids[o] {
                    Some(id) => control.push(id),
                    None => {
                        return err(format!(
                            "instruction {}: its control predecessors form a cycle",
                            scan.name()
                        ))
                    }
                }
            }
            let bytes = data.instrs[i];
            let here = |e: ProtoError| e.in_path(&format!("instructions[{i}]"), bytes);
            let (shape, ty) = self.shape_of(scan, bytes).map_err(here)?;
            types[i] = ty;
            p.clear();
            // The metadata is read in place (without allocating) when it
            // can be.
            let mut meta_fields: SmallVec<[&[u8]; 1]> = SmallVec::new();
            fields(bytes, "HloInstructionProto", |tag, wt, buf| {
                match (tag, wt) {
                    // Read in pass 1.
                    (3 | 35..=37, _) => skip_field(tag, wt, buf),
                    (7, WireType::LengthDelimited) => {
                        meta_fields.push(take_delimited(buf, "HloInstructionProto")?);
                        Ok(())
                    }
                    _ => merge_into(&mut p, tag, wt, buf, "HloInstructionProto"),
                }
            })
            .map_err(here)?;
            let meta = match meta_fields[..] {
                [] => None,
                [m] => MetaView::parse(m),
                _ => None,
            };
            if !meta_fields.is_empty() && meta.is_none() {
                for m in meta_fields {
                    merge_into(
                        &mut p,
                        7,
                        WireType::LengthDelimited,
                        &mut &*encode_len(m),
                        "HloInstructionProto",
                    )
                    .map_err(here)?;
                }
            }
            // XLA's passes make precision configs without operand
            // precisions, which the text cannot tell from one per operand.
            if !operands[i].is_empty()
                && p.precision_config
                    .as_ref()
                    .is_some_and(|pc| pc.operand_precision.is_empty())
            {
                bare_precision.push(pending.len() as u32);
            }
            let mut extra = p.unknown.clone();
            if let (None, Some(md)) = (&meta, &p.metadata) {
                append_unprinted_metadata(md, &mut extra);
            }
            if !extra.is_empty() {
                unknown.push((pending.len() as u32, extra.into()));
            }
            let operand_types: SmallVec<[i32; 4]> = operands[i].iter().map(|&o| types[o]).collect();
            let pend = self
                .instruction(
                    &p,
                    meta,
                    shape,
                    &operand_types,
                    ops,
                    control,
                    &pending,
                    &mut text,
                )
                .map_err(|e| here(e.context(format!("instruction {}", p.name))))?;
            has_async_start |= pend.opcode == Opcode::AsyncStart;
            ids[i] = Some(InstrId::new(pending.len()));
            pending.push(pend);
        }
        self.scratch = p;
        // Materialize with slices of one shared buffer.
        let buf = Arc::new(text);
        let s = |r: &Range<usize>| {
            SharedStr::slice(&buf, r.start, r.end).expect("ranges are within the buffer")
        };
        let mut comp = Computation::with_capacity(data.shell.name.as_str(), n);
        for pend in pending {
            let mut attrs = AttrList::new();
            for (k, v) in pend.attrs {
                let value = match v {
                    PVal::Raw(r) => AttrValue::Raw(s(&r)),
                    PVal::Value(v) => v,
                    PVal::Metadata(m) => {
                        let [op_type, op_name, source_file, deduplicated_name, scheduling_name] =
                            m.strings.each_ref().map(s);
                        let [source_line, source_end_line, source_column, source_end_column] =
                            m.lines;
                        AttrValue::Metadata(typed(crate::ir::attrs::OpMetadata {
                            op_type,
                            op_name,
                            source_file,
                            source_line,
                            source_end_line,
                            source_column,
                            source_end_column,
                            profile_type: m.profile_type,
                            deduplicated_name,
                            scheduling_name,
                            stack_frame_id: m.stack_frame_id,
                        }))
                    }
                    PVal::Int(x) => AttrValue::Int(x),
                    PVal::Ints(x) => AttrValue::Ints(x),
                    PVal::Comp(c) => AttrValue::Comp(c),
                    PVal::Comps(c) => AttrValue::Comps(c),
                    PVal::Str(r) => AttrValue::Str(s(&r)),
                    PVal::BackendConfig(r) => AttrValue::BackendConfig(s(&r)),
                    PVal::Direction(d) => AttrValue::Direction(d),
                    PVal::CompareType(t) => AttrValue::CompareType(t),
                    PVal::ApiVersion(a) => AttrValue::ApiVersion(a),
                };
                attrs.push(Attr {
                    key: self.key(k),
                    value,
                });
            }
            let mut instr = Instruction::new(s(&pend.name), pend.opcode, pend.shape)
                .with_operands(pend.operands);
            instr.attrs = attrs;
            instr.payload = pend.payload;
            if !pend.control.is_empty() {
                instr.control_predecessors = pend.control.into();
            }
            comp.push(instr);
        }
        let root = data.shell.root_id;
        match id_to_local.get(root).and_then(|l| ids[l]) {
            Some(r) => comp.set_root(r),
            None => return err(format!("the root id {root} does not exist")),
        }
        comp.proto_id = Some(data.shell.id);
        comp.set_proto_instr_ids(order.iter().map(|&i| scans[i].id).collect());
        let mut proto_order = vec![0u32; n];
        for (k, &i) in order.iter().enumerate() {
            proto_order[i] = k as u32;
        }
        comp.set_proto_instr_order(proto_order.into());
        if self.frames.renumber && self.frames.index.is_some() {
            comp.set_proto_frame_ids(order.iter().map(|&i| scans[i].stack_frame_id).collect());
        }
        if !bare_precision.is_empty() {
            comp.set_proto_bare_precision(bare_precision.into());
        }
        if !unknown.is_empty() {
            comp.set_proto_unknown(unknown.into());
        }
        if !data.shell.unknown.is_empty() {
            comp.set_proto_unknown_own(data.shell.unknown.as_slice().into());
        }
        if !data.shell.execution_thread.is_empty() && data.shell.execution_thread != "main" {
            comp.execution_thread = Some(data.shell.execution_thread.as_str().into());
        }
        Ok((comp, calls, has_async_start))
    }

    /// One instruction: its attributes in the order XLA prints them.
    #[allow(clippy::too_many_arguments)]
    fn instruction(
        &mut self,
        p: &HloInstructionProto,
        meta: Option<MetaView<'_>>,
        shape: Arc<Shape>,
        operand_types: &[i32],
        operands: SmallVec<[InstrId; 4]>,
        control: Vec<InstrId>,
        done: &[Pending],
        text: &mut String,
    ) -> Result<Pending, ProtoError> {
        let opcode = Opcode::from_name(&p.opcode)
            .ok_or_else(|| ProtoError::new(format!("unknown opcode \"{}\"", p.opcode)))?;
        let name = push_range(text, |t| t.push_str(&p.name));
        let mut a = Attrs {
            list: SmallVec::new(),
            text,
        };
        let mut payload = Payload::None;
        use Opcode::*;
        let operand_shape = |i: usize| operand_types.get(i).copied();
        // The whole shape, for the few ops whose attributes need it.
        let operand_shape_of = |i: usize| {
            operands
                .get(i)
                .and_then(|o| done.get(o.index()))
                .map(|d| &*d.shape)
        };
        let comps = |r: &Reader<'_>, ids: &[i64]| -> Result<Vec<CompId>, ProtoError> {
            ids.iter().map(|&c| r.comp_ref(c).map(|x| x.1)).collect()
        };
        let called = comps(self, &p.called_computation_ids)?;
        match opcode {
            Parameter => {
                payload = Payload::Parameter(p.parameter_number);
                if let Some(r) = &p.parameter_replication {
                    if !r.replicated_at_leaf_buffers.is_empty() {
                        a.val(
                            "parameter_replication",
                            AttrValue::Bools(r.replicated_at_leaf_buffers.clone().into()),
                        );
                    }
                }
            }
            Constant => {
                let lit = match &p.literal {
                    Some(l) => literal_from_proto(l, &shape)?,
                    None => return err("a constant without a literal"),
                };
                payload = Payload::Constant(Box::new(lit));
            }
            Compare => {
                let d =
                    ComparisonDirection::from_name(&p.comparison_direction).ok_or_else(|| {
                        ProtoError::new(format!(
                            "unknown comparison direction \"{}\"",
                            p.comparison_direction
                        ))
                    })?;
                a.list.push(("direction", PVal::Direction(d)));
                if !p.comparison_type.is_empty() {
                    let t = ComparisonType::from_name(&p.comparison_type).ok_or_else(|| {
                        ProtoError::new(format!(
                            "unknown comparison type \"{}\"",
                            p.comparison_type
                        ))
                    })?;
                    let default = operand_shape(0)
                        .and_then(PrimitiveType::from_number)
                        .map(ComparisonType::default_for);
                    if Some(t) != default {
                        a.list.push(("type", PVal::CompareType(t)));
                    }
                }
            }
            Iota => a.list.push((
                "iota_dimension",
                PVal::Int(*p.dimensions.first().unwrap_or(&0)),
            )),
            GetTupleElement => a.list.push(("index", PVal::Int(p.tuple_index))),
            Broadcast | Concatenate | Reverse | Transpose | GetDimensionSize | SetDimensionSize
            | Reduce | Map => {
                a.list
                    .push(("dimensions", PVal::Ints(p.dimensions.clone().into())));
            }
            Sort => {
                a.list
                    .push(("dimensions", PVal::Ints(p.dimensions.clone().into())));
                if p.is_stable {
                    a.val("is_stable", AttrValue::Bool(true));
                }
            }
            TopK => {
                a.val("k", AttrValue::Int(p.k));
                a.val("largest", AttrValue::Bool(p.largest));
                // Newer XLA's; a proto cannot tell `false` from unset, which
                // older XLA (the corpus's) prints as nothing.
                if p.is_stable {
                    a.val("is_stable", AttrValue::Bool(true));
                }
            }
            Slice => a.val(
                "slice",
                AttrValue::Slice(typed(attrs::from_slice(&p.slice_dimensions))),
            ),
            DynamicSlice => a.val(
                "dynamic_slice_sizes",
                AttrValue::Ints(p.dynamic_slice_sizes.clone().into()),
            ),
            Pad => {
                if let Some(pc) = &p.padding_config {
                    a.val(
                        "padding",
                        AttrValue::Padding(typed(attrs::from_padding(pc))),
                    );
                }
            }
            Dot => dot_attrs(&mut a, p),
            Gather => {
                let g = p.gather_dimension_numbers.clone().unwrap_or_default();
                a.val("offset_dims", AttrValue::Ints(g.offset_dims.clone().into()));
                a.val(
                    "collapsed_slice_dims",
                    AttrValue::Ints(g.collapsed_slice_dims.clone().into()),
                );
                a.val(
                    "start_index_map",
                    AttrValue::Ints(g.start_index_map.clone().into()),
                );
                if !g.operand_batching_dims.is_empty() {
                    a.val(
                        "operand_batching_dims",
                        AttrValue::Ints(g.operand_batching_dims.clone().into()),
                    );
                }
                if !g.start_indices_batching_dims.is_empty() {
                    a.val(
                        "start_indices_batching_dims",
                        AttrValue::Ints(g.start_indices_batching_dims.clone().into()),
                    );
                }
                a.val("index_vector_dim", AttrValue::Int(g.index_vector_dim));
                a.val(
                    "slice_sizes",
                    AttrValue::Ints(p.gather_slice_sizes.clone().into()),
                );
                if p.indices_are_sorted {
                    a.val("indices_are_sorted", AttrValue::Bool(true));
                }
            }
            Scatter => {
                let s = p.scatter_dimension_numbers.clone().unwrap_or_default();
                a.val(
                    "update_window_dims",
                    AttrValue::Ints(s.update_window_dims.clone().into()),
                );
                a.val(
                    "inserted_window_dims",
                    AttrValue::Ints(s.inserted_window_dims.clone().into()),
                );
                a.val(
                    "scatter_dims_to_operand_dims",
                    AttrValue::Ints(s.scatter_dims_to_operand_dims.clone().into()),
                );
                if !s.input_batching_dims.is_empty() {
                    a.val(
                        "input_batching_dims",
                        AttrValue::Ints(s.input_batching_dims.clone().into()),
                    );
                }
                if !s.scatter_indices_batching_dims.is_empty() {
                    a.val(
                        "scatter_indices_batching_dims",
                        AttrValue::Ints(s.scatter_indices_batching_dims.clone().into()),
                    );
                }
                a.val("index_vector_dim", AttrValue::Int(s.index_vector_dim));
                if p.indices_are_sorted {
                    a.val("indices_are_sorted", AttrValue::Bool(true));
                }
                if p.unique_indices {
                    a.val("unique_indices", AttrValue::Bool(true));
                }
            }
            Fusion => {
                a.val(
                    "kind",
                    AttrValue::FusionKind(FusionKind::from_name(&p.fusion_kind).ok_or_else(
                        || ProtoError::new(format!("unknown fusion kind \"{}\"", p.fusion_kind)),
                    )?),
                );
                if !p.output_operand_aliasing.is_empty() {
                    a.val(
                        "output_to_operand_aliasing",
                        AttrValue::Aliasing(typed(attrs::from_aliasing(
                            &p.output_operand_aliasing,
                        ))),
                    );
                }
            }
            ReduceWindow | SelectAndScatter => {
                if let Some(w) = &p.window {
                    if !w.dimensions.is_empty() {
                        a.val("window", AttrValue::Window(typed(attrs::from_window(w))));
                    }
                }
            }
            Convolution => {
                convolution_attrs(&mut a, p);
            }
            CustomCall => custom_call_attrs(&mut a, p, self)?,
            AllReduce | AllReduceStart | ReduceScatter | AllGather | AllGatherStart | AllToAll
            | RaggedAllToAll | CollectiveBroadcast => {
                if p.channel_id > 0 {
                    a.val("channel_id", AttrValue::Int(p.channel_id));
                }
                replica_groups_attr(&mut a, p);
                if p.constrain_layout {
                    a.val("constrain_layout", AttrValue::Bool(true));
                }
                // Then each op's own, in XLA's order: an all-gather's
                // dimension before `use_global_device_ids`, a
                // reduce-scatter's after.
                if matches!(opcode, AllGather | AllGatherStart)
                    || (opcode == AllToAll && !p.dimensions.is_empty())
                {
                    a.list
                        .push(("dimensions", PVal::Ints(p.dimensions.clone().into())));
                }
                if p.use_global_device_ids {
                    a.val("use_global_device_ids", AttrValue::Bool(true));
                }
                if opcode == ReduceScatter {
                    a.list
                        .push(("dimensions", PVal::Ints(p.dimensions.clone().into())));
                }
                // `false` is also what a proto without the field says, and
                // XLA before the field printed nothing: leave it unprinted.
                if opcode == CollectiveBroadcast && p.has_dynamic_root {
                    a.val("has_dynamic_root", AttrValue::Bool(true));
                }
            }
            CollectivePermute | CollectivePermuteStart => {
                if p.channel_id > 0 {
                    a.val("channel_id", AttrValue::Int(p.channel_id));
                }
                a.val(
                    "source_target_pairs",
                    AttrValue::Pairs(typed(attrs::from_pairs(&p.source_target_pairs))),
                );
                if !p.dynamic_slice_sizes.is_empty() {
                    let input = operand_shape_of(0);
                    let starts = operand_shape_of(2);
                    let lengths = input
                        .zip(starts)
                        .and_then(|(i, s)| slice_size_lengths(i, s))
                        .filter(|l| l.iter().sum::<usize>() == p.dynamic_slice_sizes.len())
                        .ok_or_else(|| {
                            ProtoError::new("dynamic_slice_sizes do not fit the operands' shapes")
                        })?;
                    a.val(
                        "slice_sizes",
                        AttrValue::IntLists({
                            let mut rest = &p.dynamic_slice_sizes[..];
                            lengths
                                .iter()
                                .map(|&n| {
                                    let (list, after) = rest.split_at(n);
                                    rest = after;
                                    list.into()
                                })
                                .collect()
                        }),
                    );
                }
            }
            Send | Recv | SendDone | RecvDone => {
                if p.channel_id > 0 {
                    a.val("channel_id", AttrValue::Int(p.channel_id));
                }
                if p.is_host_transfer {
                    a.val("is_host_transfer", AttrValue::Bool(true));
                }
            }
            BatchNormTraining | BatchNormInference | BatchNormGrad => {
                a.val("epsilon", AttrValue::Float(typed(p.epsilon)));
                a.val("feature_index", AttrValue::Int(p.feature_index));
            }
            ReducePrecision => {
                a.val("exponent_bits", AttrValue::Int(p.exponent_bits.into()));
                a.val("mantissa_bits", AttrValue::Int(p.mantissa_bits.into()));
            }
            Infeed if !p.infeed_config.is_empty() => {
                let config = utf8(&p.infeed_config, "infeed_config")?;
                a.val("infeed_config", AttrValue::Str(config.into()));
            }
            Outfeed => {
                if let Some(s) = &p.outfeed_shape {
                    let s = self.shape(s)?;
                    a.val("outfeed_shape", AttrValue::Shape(Box::new(s)));
                }
                if !p.outfeed_config.is_empty() {
                    let config = utf8(&p.outfeed_config, "outfeed_config")?;
                    a.val("outfeed_config", AttrValue::Str(config.into()));
                }
            }
            Scan => {
                a.list
                    .push(("dimensions", PVal::Ints(p.dimensions.clone().into())));
                a.val("num_carries", AttrValue::Int(p.num_carries));
                if p.is_reverse {
                    a.val("is_reverse", AttrValue::Bool(true));
                }
                // XLA's `TriState`: unspecified is not printed.
                match p.is_associative {
                    1 => a.val("is_associative", AttrValue::Bool(true)),
                    2 => a.val("is_associative", AttrValue::Bool(false)),
                    _ => {}
                }
            }
            RngGetAndUpdateState => a.val("delta", AttrValue::Int(p.delta)),
            Rng => a.val(
                "distribution",
                AttrValue::Distribution(attrs::enum_of(
                    RandomDistribution::from_index,
                    p.distribution,
                    RandomDistribution::Invalid,
                )),
            ),
            RngBitGenerator => a.val(
                "algorithm",
                AttrValue::RngAlgorithm(attrs::enum_of(
                    RngAlgorithm::from_index,
                    p.rng_algorithm,
                    RngAlgorithm::Default,
                )),
            ),
            Cholesky if p.cholesky_options.as_ref().is_some_and(|c| c.lower) => {
                a.val("lower", AttrValue::Bool(true));
            }
            CopyStart => {
                if let Some(i) = p.cross_program_prefetch_index {
                    a.val("cross_program_prefetch_index", AttrValue::Int(i.into()));
                }
            }
            Fft => {
                a.val(
                    "fft_type",
                    AttrValue::FftType(attrs::enum_of(
                        FftType::from_index,
                        p.fft_type,
                        FftType::Fft,
                    )),
                );
                a.val("fft_length", AttrValue::Ints(p.fft_length.clone().into()));
            }
            TriangularSolve => {
                let o = p.triangular_solve_options.clone().unwrap_or_default();
                for (key, set) in [
                    ("left_side", o.left_side),
                    ("lower", o.lower),
                    ("unit_diagonal", o.unit_diagonal),
                ] {
                    if set {
                        a.val(key, AttrValue::Bool(true));
                    }
                }
                a.val(
                    "transpose_a",
                    AttrValue::Transpose(attrs::enum_of(
                        TransposeKind::from_index,
                        o.transpose_a,
                        TransposeKind::Invalid,
                    )),
                );
            }
            // The text's `entry` is the proto's exit sharding and its
            // `exit` the entry one (XLA names them by side).
            Domain => {
                if let Some(d) = attrs::from_domain(p) {
                    a.val("domain", AttrValue::Domain(typed(d)));
                }
            }
            AsyncStart => {
                if !p.async_execution_thread.is_empty() && p.async_execution_thread != "main" {
                    a.val(
                        "async_execution_thread",
                        AttrValue::Str(p.async_execution_thread.as_str().into()),
                    );
                }
                if !p.output_operand_aliasing.is_empty() {
                    a.val(
                        "output_to_operand_aliasing",
                        AttrValue::Aliasing(typed(attrs::from_aliasing(
                            &p.output_operand_aliasing,
                        ))),
                    );
                }
            }
            _ => {}
        }
        // Called computations, where XLA prints them.
        match opcode {
            While if called.len() == 2 => {
                // XLA keeps the body first.
                a.list.push(("condition", PVal::Comp(called[1])));
                a.list.push(("body", PVal::Comp(called[0])));
            }
            SelectAndScatter if called.len() == 2 => {
                a.list.push(("select", PVal::Comp(called[0])));
                a.list.push(("scatter", PVal::Comp(called[1])));
            }
            Conditional => {
                if operand_shape(0) == Some(PrimitiveType::Pred as i32) && called.len() == 2 {
                    a.list.push(("true_computation", PVal::Comp(called[0])));
                    a.list.push(("false_computation", PVal::Comp(called[1])));
                } else {
                    a.list
                        .push(("branch_computations", PVal::Comps(called.clone().into())));
                }
            }
            Call | Map | ReduceWindow | Reduce | AllReduce | ReduceScatter | AllReduceStart
            | Scatter | Sort | TopK | Scan
                if !called.is_empty() =>
            {
                a.list.push(("to_apply", PVal::Comp(called[0])));
            }
            CustomCall if !called.is_empty() => {
                a.list
                    .push(("called_computations", PVal::Comps(called.clone().into())));
            }
            // Their computation is their chain's start's.
            AsyncUpdate | AsyncDone => {}
            _ if called.len() == 1 => a.list.push(("calls", PVal::Comp(called[0]))),
            _ if !called.is_empty() => a.list.push(("calls", PVal::Comps(called.clone().into()))),
            _ => {}
        }
        if opcode == Call && p.is_composite {
            a.val("is_composite", AttrValue::Bool(true));
        }
        if let Some(s) = &p.sharding {
            a.val(
                "sharding",
                AttrValue::Sharding(typed(attrs::from_sharding(s))),
            );
        }
        if let Some(fa) = &p.frontend_attributes {
            if !fa.map.is_empty() {
                a.val(
                    "frontend_attributes",
                    AttrValue::FrontendAttributes(typed(attrs::from_frontend_attributes(fa))),
                );
            }
        }
        if !control.is_empty() {
            a.list.push(("control-predecessors", PVal::Raw(0..0)));
        }
        if let Some(sv) = &p.statistics_viz {
            if !sv.statistics.is_empty() {
                a.val(
                    "statistics",
                    AttrValue::Statistics(typed(attrs::from_statistics(sv))),
                );
            }
        }
        if let Some(ra) = &p.result_accuracy {
            result_accuracy_attr(&mut a, ra);
        }
        if let Some(ov) = &p.original_value {
            a.val(
                "origin",
                AttrValue::OriginalValue(typed(attrs::from_original_value(ov, &shape))),
            );
        }
        if let Some(m) = meta.or_else(|| p.metadata.as_ref().map(MetaView::of)) {
            let sf = if m.stack_frame_id != 0 {
                self.frames.lookup(m.stack_frame_id)?
            } else {
                0
            };
            if m.has_text() {
                let deferred = m.deferred(sf, a.text);
                a.list
                    .push(("metadata", PVal::Metadata(Box::new(deferred))));
            }
        }
        // A payload, where present, is the config (as XLA's loader has it).
        let config_payload = p.backend_config_payload.as_ref();
        let backend_config: &[u8] = match (config_payload.and_then(|x| x.id), config_payload) {
            (Some(id), _) => usize::try_from(id)
                .ok()
                .and_then(|i| self.payloads.get(i))
                .ok_or_else(|| {
                    ProtoError::new(format!(
                        "backend_config_payload id {id} is past the module's payloads \
                         (it has {})",
                        self.payloads.len()
                    ))
                })?,
            (None, Some(inline)) => inline.value.as_deref().unwrap_or(&p.backend_config),
            (None, None) => &p.backend_config,
        };
        if !backend_config.is_empty() {
            let s = std::str::from_utf8(backend_config)
                .map_err(|_| ProtoError::new("backend_config is not UTF-8"))?;
            let r = push_range(a.text, |t| t.push_str(s));
            a.list.push(("backend_config", PVal::BackendConfig(r)));
        }
        let attrs = a.list;
        Ok(Pending {
            name,
            opcode,
            shape,
            operands,
            control,
            attrs,
            payload,
        })
    }
}

/// Attributes being built, with the buffer their texts go to.
struct Attrs<'t> {
    list: SmallVec<[(&'static str, PVal); 2]>,
    text: &'t mut String,
}

impl Attrs<'_> {
    fn val(&mut self, key: &'static str, value: AttrValue) {
        self.list.push((key, PVal::Value(value)));
    }
}

/// The lengths of an in-place collective permute's `slice_sizes` lists,
/// which its proto flattens, as XLA's loader splits them: one list per
/// input array (per start-index tuple of it, where it has several), as long
/// as that array's rank. `None` where the shapes are not of that form.
fn slice_size_lengths(input: &Shape, starts: &Shape) -> Option<Vec<usize>> {
    let first_start = starts.tuple_elements()?.first()?;
    match input.tuple_elements() {
        Some(inputs) => {
            if !first_start.tuple_elements()?.first()?.is_tuple() {
                // `((s32[], s32[]), ...)`: one start tuple per input.
                return Some(inputs.iter().map(Shape::rank).collect());
            }
            // `(((s32[], ...), (s32[], ...)), ...)`: several per input.
            let per_input = starts.tuple_elements()?;
            let mut lengths = Vec::new();
            for (i, s) in inputs.iter().enumerate() {
                let n = per_input.get(i)?.tuple_elements()?.len();
                lengths.extend(std::iter::repeat_n(s.rank(), n));
            }
            Some(lengths)
        }
        None if first_start.is_tuple() => Some(vec![input.rank(); starts.tuple_elements()?.len()]),
        None => Some(vec![input.rank()]),
    }
}

fn utf8<'b>(bytes: &'b [u8], what: &str) -> Result<&'b str, ProtoError> {
    std::str::from_utf8(bytes).map_err(|_| ProtoError::new(format!("{what} is not UTF-8")))
}

fn push_range(text: &mut String, f: impl FnOnce(&mut String)) -> Range<usize> {
    let start = text.len();
    f(text);
    start..text.len()
}

fn join<T>(t: &mut String, items: &[T], sep: &str, mut f: impl FnMut(&mut String, &T)) {
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            t.push_str(sep);
        }
        f(t, x);
    }
}

fn dot_attrs(a: &mut Attrs<'_>, p: &HloInstructionProto) {
    let d = p.dot_dimension_numbers.clone().unwrap_or_default();
    if !d.lhs_batch_dimensions.is_empty() {
        a.val(
            "lhs_batch_dims",
            AttrValue::Ints(d.lhs_batch_dimensions.clone().into()),
        );
    }
    a.val(
        "lhs_contracting_dims",
        AttrValue::Ints(d.lhs_contracting_dimensions.clone().into()),
    );
    if !d.rhs_batch_dimensions.is_empty() {
        a.val(
            "rhs_batch_dims",
            AttrValue::Ints(d.rhs_batch_dimensions.clone().into()),
        );
    }
    a.val(
        "rhs_contracting_dims",
        AttrValue::Ints(d.rhs_contracting_dimensions.clone().into()),
    );
    precision_attrs(a, p);
}

fn precision_attrs(a: &mut Attrs<'_>, p: &HloInstructionProto) {
    if let Some(pc) = &p.precision_config {
        if pc.operand_precision.iter().any(|&x| x != 0) {
            a.val(
                "operand_precision",
                AttrValue::Precisions(
                    pc.operand_precision
                        .iter()
                        .map(|&x| attrs::enum_of(Precision::from_index, x, Precision::Default))
                        .collect(),
                ),
            );
        }
        if pc.algorithm != 0 {
            a.val(
                "algorithm",
                AttrValue::DotAlgorithm(attrs::enum_of(
                    DotAlgorithm::from_index,
                    pc.algorithm,
                    DotAlgorithm::Unset,
                )),
            );
        }
    }
}

/// What a convolution prints, and a custom call before its target (a
/// convolution-like custom call carries the same fields): window,
/// dim_labels, group counts, operand precisions.
fn convolution_attrs(a: &mut Attrs<'_>, p: &HloInstructionProto) {
    if let Some(w) = &p.window {
        if !w.dimensions.is_empty() {
            a.val("window", AttrValue::Window(typed(attrs::from_window(w))));
        }
    }
    if let Some(d) = &p.convolution_dimension_numbers {
        a.val(
            "dim_labels",
            AttrValue::ConvDims(typed(attrs::from_conv_dims(d))),
        );
    }
    if p.feature_group_count > 1 {
        a.val("feature_group_count", AttrValue::Int(p.feature_group_count));
    }
    if p.batch_group_count > 1 {
        a.val("batch_group_count", AttrValue::Int(p.batch_group_count));
    }
    precision_attrs(a, p);
}

fn custom_call_attrs(
    a: &mut Attrs<'_>,
    p: &HloInstructionProto,
    r: &Reader<'_>,
) -> Result<(), ProtoError> {
    convolution_attrs(a, p);
    let range = push_range(a.text, |t| t.push_str(&p.custom_call_target));
    a.list.push(("custom_call_target", PVal::Str(range)));
    if p.constrain_layout {
        let shapes = p
            .operand_shapes_with_layout
            .iter()
            .map(|s| r.shape(s))
            .collect::<Result<Vec<_>, _>>()?;
        a.val(
            "operand_layout_constraints",
            AttrValue::Shapes(shapes.into()),
        );
    }
    if p.custom_call_has_side_effect {
        a.val("custom_call_has_side_effect", AttrValue::Bool(true));
    }
    if let Some(l) = &p.literal {
        let lit = literal_from_proto(
            l,
            &shape_from_proto(&l.shape.clone().unwrap_or_default(), 0)?,
        )?;
        a.val("literal", AttrValue::Literal(typed(lit)));
    }
    if !p.output_operand_aliasing.is_empty() {
        a.val(
            "output_to_operand_aliasing",
            AttrValue::Aliasing(typed(attrs::from_aliasing(&p.output_operand_aliasing))),
        );
    }
    if p.custom_call_schedule != 0 {
        a.val(
            "schedule",
            AttrValue::Schedule(attrs::enum_of(
                CustomCallSchedule::from_index,
                p.custom_call_schedule,
                CustomCallSchedule::None,
            )),
        );
    }
    let api = match p.custom_call_api_version {
        0 => ApiVersion::Unspecified,
        1 => ApiVersion::Original,
        2 => ApiVersion::StatusReturning,
        3 => ApiVersion::StatusReturningUnified,
        4 => ApiVersion::TypedFfi,
        v => return err(format!("unknown custom call api version {v}")),
    };
    if api != ApiVersion::Original {
        a.list.push(("api_version", PVal::ApiVersion(api)));
    }
    Ok(())
}

fn replica_groups_attr(a: &mut Attrs<'_>, p: &HloInstructionProto) {
    a.val(
        "replica_groups",
        AttrValue::ReplicaGroups(typed(attrs::from_replica_groups(p))),
    );
}

fn result_accuracy_attr(a: &mut Attrs<'_>, ra: &ResultAccuracy) {
    if let Some(r) = attrs::from_result_accuracy(ra) {
        a.val("result_accuracy", AttrValue::ResultAccuracy(typed(r)));
    }
}

/// An `OpMetadata` as [`metadata_text`] prints it, its strings borrowed.
#[derive(Default)]
pub(crate) struct MetaView<'a> {
    op_type: &'a str,
    op_name: &'a str,
    source_file: &'a str,
    source_line: i32,
    source_end_line: i32,
    source_column: i32,
    source_end_column: i32,
    profile_type: SmallVec<[i32; 2]>,
    deduplicated_name: &'a str,
    scheduling_name: &'a str,
    stack_frame_id: i32,
}

impl<'a> MetaView<'a> {
    pub(crate) fn of(m: &'a OpMetadata) -> MetaView<'a> {
        MetaView {
            op_type: &m.op_type,
            op_name: &m.op_name,
            source_file: &m.source_file,
            source_line: m.source_line,
            source_end_line: m.source_end_line,
            source_column: m.source_column,
            source_end_column: m.source_end_column,
            profile_type: m.profile_type.iter().copied().collect(),
            deduplicated_name: &m.deduplicated_name,
            scheduling_name: &m.scheduling_name,
            stack_frame_id: m.stack_frame_id,
        }
    }

    /// Reads an encoded `OpMetadata` in place; `None` if it has anything
    /// else (or is malformed): prost then decodes it, errors included.
    fn parse(mut b: &'a [u8]) -> Option<MetaView<'a>> {
        let mut v = MetaView::default();
        while !b.is_empty() {
            let (tag, wt) = decode_key(&mut b).ok()?;
            match (tag, wt) {
                (1 | 2 | 3 | 12 | 16, WireType::LengthDelimited) => {
                    let len = usize::try_from(decode_varint(&mut b).ok()?).ok()?;
                    let s = std::str::from_utf8(b.get(..len)?).ok()?;
                    b = &b[len..];
                    match tag {
                        1 => v.op_type = s,
                        2 => v.op_name = s,
                        3 => v.source_file = s,
                        12 => v.deduplicated_name = s,
                        _ => v.scheduling_name = s,
                    }
                }
                (4 | 15 | 17 | 18 | 19, WireType::Varint) => {
                    let x = decode_varint(&mut b).ok()? as i32;
                    match tag {
                        4 => v.source_line = x,
                        15 => v.stack_frame_id = x,
                        17 => v.source_end_line = x,
                        18 => v.source_column = x,
                        _ => v.source_end_column = x,
                    }
                }
                (5, WireType::Varint) => v.profile_type.push(decode_varint(&mut b).ok()? as i32),
                (5, WireType::LengthDelimited) => {
                    let len = usize::try_from(decode_varint(&mut b).ok()?).ok()?;
                    let mut packed = b.get(..len)?;
                    b = &b[len..];
                    while !packed.is_empty() {
                        v.profile_type.push(decode_varint(&mut packed).ok()? as i32);
                    }
                }
                _ => return None,
            }
        }
        Some(v)
    }

    /// Its strings written into the computation's buffer, to become
    /// slices of it (one allocation per computation, not five per
    /// instruction).
    fn deferred(&self, stack_frame_id: i64, text: &mut String) -> DeferredMetadata {
        let mut put = |v: &str| push_range(text, |t| t.push_str(v));
        DeferredMetadata {
            strings: [
                put(self.op_type),
                put(self.op_name),
                put(self.source_file),
                put(self.deduplicated_name),
                put(self.scheduling_name),
            ],
            lines: [
                self.source_line,
                self.source_end_line,
                self.source_column,
                self.source_end_column,
            ],
            profile_type: self.profile_type.to_vec(),
            stack_frame_id: stack_frame_id as i32,
        }
    }

    fn has_text(&self) -> bool {
        !self.op_type.is_empty()
            || !self.op_name.is_empty()
            || !self.source_file.is_empty()
            || self.source_line != 0
            || self.source_end_line != 0
            || self.source_column != 0
            || self.source_end_column != 0
            || !self.profile_type.is_empty()
            || !self.deduplicated_name.is_empty()
            || !self.scheduling_name.is_empty()
            || self.stack_frame_id != 0
    }
}

/// The metadata fields the text does not show (code and working-set
/// sizes, profile info, fields of a newer XLA), encoded as one more
/// `metadata` field, which a reader merges into the one written from the
/// text; nothing if there are none.
fn append_unprinted_metadata(md: &OpMetadata, out: &mut Vec<u8>) {
    let mut unprinted = OpMetadata::new(OpMetadataFields {
        size_of_generated_code_in_bytes: md.size_of_generated_code_in_bytes,
        size_of_memory_working_set_in_bytes: md.size_of_memory_working_set_in_bytes,
        profile_info: md.profile_info.clone(),
        ..Default::default()
    });
    unprinted.unknown = md.unknown.clone();
    if unprinted != OpMetadata::default() {
        prost::encoding::message::encode(7, &unprinted, out);
    }
}

/// The header's `origin_recovery_table={...}`: per entry a line `{"old"} :
/// {"new"}` and the recovery module's text, quoted (`"` and `\` escaped)
/// and indented on lines of its own.
fn recovery_table(
    table: &OriginalValueRecoveryTableProto,
    options: &ReadOptions,
) -> Result<Vec<crate::ir::attrs::RecoveryEntry>, ProtoError> {
    table
        .entries
        .iter()
        .map(|e| {
            let module = match &e.recovery_module {
                Some(m) => Some(Box::new(
                    module_from_proto(&m.encode_to_vec(), options)
                        .map_err(|e| e.context("origin_recovery_table"))?,
                )),
                None => None,
            };
            Ok(crate::ir::attrs::RecoveryEntry {
                old: attrs::from_original_array(&e.old_original_array.clone().unwrap_or_default()),
                new: attrs::from_original_array(&e.new_original_array.clone().unwrap_or_default()),
                module,
            })
        })
        .collect()
}

/// XLA's `MakeInstructionPostOrder` over the id-ordered list (mirrors
/// [`Computation::post_order`]).
fn post_order(
    list: &[usize],
    operands: &[SmallVec<[usize; 4]>],
    controls: &[SmallVec<[usize; 1]>],
    has_users: &[bool],
) -> Vec<usize> {
    let n = list.len();
    let mut mark = vec![0u8; n];
    let mut order = Vec::with_capacity(n);
    let mut stack = Vec::new();
    for &start in list {
        if has_users[start] || mark[start] != 0 {
            continue;
        }
        stack.push(start);
        while let Some(&cur) = stack.last() {
            match mark[cur] {
                2 => {
                    stack.pop();
                }
                1 => {
                    mark[cur] = 2;
                    order.push(cur);
                    stack.pop();
                }
                _ => {
                    mark[cur] = 1;
                    for &o in operands[cur].iter().rev() {
                        if mark[o] == 0 {
                            stack.push(o);
                        }
                    }
                    for &o in controls[cur].iter().rev() {
                        if mark[o] == 0 {
                            stack.push(o);
                        }
                    }
                }
            }
        }
    }
    order
}

/// XLA's `MakeComputationPostOrder` over the computations sorted by id;
/// fails on a cycle in the call graph.
fn computation_order(
    data: &ModuleData<'_>,
    calls: &[Vec<SmallVec<[usize; 2]>>],
    entry: usize,
) -> Result<Vec<usize>, ProtoError> {
    let n = data.comps.len();
    // Cycle check: depth-first with colours.
    let mut colour = vec![0u8; n];
    for start in 0..n {
        if colour[start] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize, usize)> = vec![(start, 0, 0)];
        colour[start] = 1;
        while let Some(top) = stack.last_mut() {
            let (c, i, j) = *top;
            let next = calls[c].get(i).and_then(|cs| cs.get(j).copied());
            match next {
                Some(callee) => {
                    top.2 += 1;
                    match colour[callee] {
                        0 => {
                            colour[callee] = 1;
                            stack.push((callee, 0, 0));
                        }
                        1 => {
                            return err(format!(
                                "computation {} calls itself through computation {}",
                                data.comps[callee].shell.name, data.comps[c].shell.name
                            ))
                        }
                        _ => {}
                    }
                }
                None if i < calls[c].len() => {
                    top.1 += 1;
                    top.2 = 0;
                }
                None => {
                    colour[c] = 2;
                    stack.pop();
                }
            }
        }
    }
    let mut by_id: Vec<usize> = (0..n).collect();
    by_id.sort_by_key(|&i| data.comps[i].shell.id);
    let mut called = vec![false; n];
    for cs in calls {
        for c in cs.iter().flatten() {
            called[*c] = true;
        }
    }
    let mut added = vec![false; n];
    let mut order = Vec::with_capacity(n);
    for &root in &by_id {
        if called[root] {
            continue;
        }
        // MakeEmbeddedComputationsList: visited marked on push.
        let mut visited = vec![false; n];
        let mut post = Vec::new();
        let mut st: Vec<(usize, usize)> = Vec::new();
        let push_calls =
            |cs: &SmallVec<[usize; 2]>, st: &mut Vec<(usize, usize)>, visited: &mut [bool]| {
                for &c in cs.iter().rev() {
                    if !visited[c] {
                        visited[c] = true;
                        st.push((c, 0));
                    }
                }
            };
        for cs in &calls[root] {
            push_calls(cs, &mut st, &mut visited);
            while let Some(top) = st.last_mut() {
                let (c, i) = *top;
                if i == calls[c].len() {
                    st.pop();
                    post.push(c);
                } else {
                    top.1 += 1;
                    push_calls(&calls[c][i], &mut st, &mut visited);
                }
            }
        }
        for c in post {
            if !added[c] {
                added[c] = true;
                order.push(c);
            }
        }
        if !added[root] {
            added[root] = true;
            order.push(root);
        }
    }
    // The entry is printed last among... wherever the post order puts it;
    // computations reached only through cycles cannot exist (checked).
    for &i in &by_id {
        if !added[i] {
            order.push(i);
        }
    }
    let _ = entry;
    Ok(order)
}

/// A shape from its proto; nesting is limited.
pub(crate) fn shape_from_proto(p: &ShapeProto, depth: usize) -> Result<Shape, ProtoError> {
    if depth > 64 {
        return err("shapes nested too deeply");
    }
    Ok(match p.element_type {
        13 => Shape::Tuple(
            p.tuple_shapes
                .iter()
                .map(|s| shape_from_proto(s, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        17 => Shape::Token,
        14 => Shape::Opaque,
        n => {
            let ty = PrimitiveType::from_number(n)
                .filter(|t| t.is_array_element())
                .ok_or_else(|| ProtoError::new(format!("invalid element type {n}")))?;
            let dynamic = if p.is_dynamic_dimension.iter().any(|&d| d) {
                if p.is_dynamic_dimension.len() != p.dimensions.len() {
                    return err("is_dynamic_dimension and dimensions differ in length");
                }
                p.is_dynamic_dimension.clone()
            } else {
                Vec::new()
            };
            let layout = match &p.layout {
                Some(l) => Some(layout_from_proto(l, p.dimensions.len())?),
                None => None,
            };
            Shape::Array(ArrayShape {
                element_type: ty,
                dims: p.dimensions.clone(),
                dynamic,
                layout,
            })
        }
    })
}

fn layout_from_proto(l: &LayoutProto, rank: usize) -> Result<Layout, ProtoError> {
    if !l.minor_to_major.is_empty() && l.minor_to_major.len() != rank {
        return err(format!(
            "a layout of {} dimensions for a shape of rank {rank}",
            l.minor_to_major.len()
        ));
    }
    let mut x = LayoutExtras::default();
    if !l.dim_level_types.is_empty() {
        let mut s = String::from("D(");
        for (i, &d) in l.dim_level_types.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push_str(match d {
                1 => "C",
                2 => "S",
                3 => "H",
                _ => "D",
            });
            if l.dim_unique.get(i) == Some(&false) {
                s.push('+');
            }
            if l.dim_ordered.get(i) == Some(&false) {
                s.push('~');
            }
        }
        s.push(')');
        x.dim_level_types = Some(s.into());
    }
    x.tiles = l.tiles.iter().map(|t| Tile(t.dimensions.clone())).collect();
    if l.tail_padding_alignment_in_elements > 1 {
        x.tail_padding_alignment = Some(l.tail_padding_alignment_in_elements);
    }
    if l.index_primitive_type != 0 || l.pointer_primitive_type != 0 {
        let name = |n: i32| PrimitiveType::from_number(n).map_or("invalid", |t| t.name());
        let mut s = String::from("#(");
        s.push_str(name(l.index_primitive_type));
        s.push(')');
        if l.pointer_primitive_type != 0 {
            s.push_str("*(");
            s.push_str(name(l.pointer_primitive_type));
            s.push(')');
        }
        x.index_types = Some(s.into());
    }
    if l.element_size_in_bits != 0 {
        x.element_size_bits = Some(l.element_size_in_bits);
    }
    if l.memory_space != 0 {
        x.memory_space = Some(l.memory_space);
    }
    let mut rest = String::new();
    if !l.split_configs.is_empty() {
        rest.push_str("SC");
        for s in &l.split_configs {
            rest.push('(');
            push_int(&mut rest, s.dimension);
            rest.push(':');
            join(&mut rest, &s.split_indices, ",", |t, x| push_int(t, *x));
            rest.push(')');
        }
    }
    if let Some(ps) = &l.physical_shape {
        rest.push_str("P(");
        shape_from_proto(ps, 1)?.write(&mut rest, true);
        rest.push(')');
    }
    if l.dynamic_shape_metadata_prefix_bytes != 0 {
        rest.push_str("M(");
        push_int(&mut rest, l.dynamic_shape_metadata_prefix_bytes);
        rest.push(')');
    }
    if !rest.is_empty() {
        x.rest = Some(rest.into());
    }
    Ok(Layout {
        minor_to_major: l.minor_to_major.clone(),
        extras: (x != LayoutExtras::default()).then(|| Box::new(x)),
    })
}

/// A literal's values, checked against the instruction's shape.
pub(crate) fn literal_from_proto(l: &LiteralProto, shape: &Shape) -> Result<Literal, ProtoError> {
    literal_inner(l, shape, 0)
}

fn literal_inner(l: &LiteralProto, shape: &Shape, depth: usize) -> Result<Literal, ProtoError> {
    if depth > 64 {
        return err("literals nested too deeply");
    }
    let data = match shape {
        Shape::Tuple(elems) => {
            if l.tuple_literals.len() != elems.len() {
                return err(format!(
                    "a tuple literal of {} elements for a tuple of {}",
                    l.tuple_literals.len(),
                    elems.len()
                ));
            }
            LiteralData::Tuple(
                l.tuple_literals
                    .iter()
                    .zip(elems)
                    .map(|(e, s)| literal_inner(e, s, depth + 1))
                    .collect::<Result<_, _>>()?,
            )
        }
        Shape::Token | Shape::Opaque => LiteralData::Empty,
        Shape::Array(a) => {
            let n = usize::try_from(a.element_count())
                .map_err(|_| ProtoError::new("a literal with a negative element count"))?;
            let data = array_data(l, a.element_type, n)?;
            // The proto holds the values in the order of the literal's
            // layout; the IR in row-major order.
            let layout = l
                .shape
                .as_ref()
                .and_then(|s| s.layout.as_ref())
                .map(|l| &l.minor_to_major[..])
                .or_else(|| a.layout.as_ref().map(|l| &l.minor_to_major[..]));
            match layout.and_then(|m| physical_positions(a, m)) {
                Some(from) if from.len() == data.len() => gather(&data, &from),
                _ => data,
            }
        }
    };
    Ok(Literal {
        shape: shape.clone(),
        data,
    })
}

/// Where each element of an array (in row-major order) is in the order of
/// a layout, which is how XLA's literals hold their values; `None` when
/// the two orders are the same (or the layout does not fit the shape).
pub(crate) fn physical_positions(a: &ArrayShape, minor_to_major: &[i64]) -> Option<Vec<usize>> {
    let rank = a.dims.len();
    if rank < 2 || minor_to_major.len() != rank {
        return None;
    }
    let row_major = minor_to_major
        .iter()
        .enumerate()
        .all(|(k, &d)| d == (rank - 1 - k) as i64);
    if row_major {
        return None;
    }
    let dims: Vec<usize> = a
        .dims
        .iter()
        .map(|&d| usize::try_from(d).ok())
        .collect::<Option<_>>()?;
    // Each dimension's stride in layout order.
    let mut stride = vec![0usize; rank];
    let mut seen = vec![false; rank];
    let mut next = 1usize;
    for &d in minor_to_major {
        let d = usize::try_from(d).ok().filter(|&d| d < rank && !seen[d])?;
        seen[d] = true;
        stride[d] = next;
        next = next.checked_mul(dims[d])?;
    }
    // Row-major walk: the last index moves fastest.
    let mut out = Vec::with_capacity(next);
    let mut index = vec![0usize; rank];
    let mut pos = 0usize;
    for _ in 0..next {
        out.push(pos);
        for d in (0..rank).rev() {
            index[d] += 1;
            pos += stride[d];
            if index[d] < dims[d] {
                break;
            }
            pos -= stride[d] * dims[d];
            index[d] = 0;
        }
    }
    Some(out)
}

/// The values `data[from[0]], data[from[1]], ...`; `from` is in range.
pub(crate) fn gather(data: &LiteralData, from: &[usize]) -> LiteralData {
    fn g<T: Clone>(v: &[T], from: &[usize]) -> Vec<T> {
        from.iter().map(|&i| v[i].clone()).collect()
    }
    match data {
        LiteralData::Pred(v) => LiteralData::Pred(g(v, from)),
        LiteralData::Int(v) => LiteralData::Int(g(v, from)),
        LiteralData::UInt(v) => LiteralData::UInt(g(v, from)),
        LiteralData::F16(v) => LiteralData::F16(g(v, from)),
        LiteralData::Bf16(v) => LiteralData::Bf16(g(v, from)),
        LiteralData::F32(v) => LiteralData::F32(g(v, from)),
        LiteralData::F64(v) => LiteralData::F64(g(v, from)),
        LiteralData::MiniFloat(v) => LiteralData::MiniFloat(g(v, from)),
        LiteralData::C64(v) => LiteralData::C64(g(v, from)),
        LiteralData::C128(v) => LiteralData::C128(g(v, from)),
        LiteralData::Tuple(_) | LiteralData::Elided | LiteralData::Empty => data.clone(),
    }
}

fn array_data(l: &LiteralProto, ty: PrimitiveType, n: usize) -> Result<LiteralData, ProtoError> {
    use PrimitiveType::*;
    let check = |len: usize| {
        if len == n {
            Ok(())
        } else {
            err(format!(
                "a {} literal of {len} values for {n} elements",
                ty.name()
            ))
        }
    };
    let le16 = |b: &[u8]| -> Result<Vec<u16>, ProtoError> {
        check(b.len() / 2)?;
        if b.len() % 2 != 0 {
            return err("odd byte count in a 16-bit literal");
        }
        Ok(b.chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect())
    };
    Ok(match ty {
        Pred => {
            check(l.preds.len())?;
            LiteralData::Pred(l.preds.clone())
        }
        S8 | S4 | S2 | S1 => {
            let b = match ty {
                S8 => &l.s8s,
                S4 => &l.s4s,
                S2 => &l.s2s,
                _ => &l.s1s,
            };
            check(b.len())?;
            LiteralData::Int(b.iter().map(|&x| i64::from(x as i8)).collect())
        }
        U8 | U4 | U2 | U1 => {
            let b = match ty {
                U8 => &l.u8s,
                U4 => &l.u4s,
                U2 => &l.u2s,
                _ => &l.u1s,
            };
            check(b.len())?;
            LiteralData::UInt(b.iter().map(|&x| u64::from(x)).collect())
        }
        S16 => LiteralData::Int(
            le16(&l.s16s)?
                .into_iter()
                .map(|x| i64::from(x as i16))
                .collect(),
        ),
        U16 => LiteralData::UInt(le16(&l.u16s)?.into_iter().map(u64::from).collect()),
        S32 => {
            check(l.s32s.len())?;
            LiteralData::Int(l.s32s.iter().map(|&x| i64::from(x)).collect())
        }
        S64 => {
            check(l.s64s.len())?;
            LiteralData::Int(l.s64s.clone())
        }
        U32 => {
            check(l.u32s.len())?;
            LiteralData::UInt(l.u32s.iter().map(|&x| u64::from(x)).collect())
        }
        U64 => {
            check(l.u64s.len())?;
            LiteralData::UInt(l.u64s.clone())
        }
        F16 => LiteralData::F16(le16(&l.f16s)?.into_iter().map(f16::from_bits).collect()),
        Bf16 => LiteralData::Bf16(le16(&l.bf16s)?.into_iter().map(bf16::from_bits).collect()),
        F32 => {
            check(l.f32s.len())?;
            LiteralData::F32(l.f32s.clone())
        }
        F64 => {
            check(l.f64s.len())?;
            LiteralData::F64(l.f64s.clone())
        }
        C64 => {
            check(l.c64s.len() / 2)?;
            LiteralData::C64(l.c64s.chunks_exact(2).map(|c| (c[0], c[1])).collect())
        }
        C128 => {
            check(l.c128s.len() / 2)?;
            LiteralData::C128(l.c128s.chunks_exact(2).map(|c| (c[0], c[1])).collect())
        }
        t if t.minifloat().is_some() => {
            let b = minifloat_bytes(l, t);
            check(b.len())?;
            LiteralData::MiniFloat(b.to_vec())
        }
        t => return err(format!("no literal values for element type {}", t.name())),
    })
}

pub(crate) fn minifloat_bytes(l: &LiteralProto, t: PrimitiveType) -> &Vec<u8> {
    use PrimitiveType::*;
    match t {
        F4E2M1FN => &l.f4e2m1fns,
        F8E3M4 => &l.f8e3m4s,
        F8E4M3B11FNUZ => &l.f8e4m3b11fnuzs,
        F8E4M3FN => &l.f8e4m3fns,
        F8E4M3FNUZ => &l.f8e4m3fnuzs,
        F8E4M3 => &l.f8e4m3s,
        F8E5M2FNUZ => &l.f8e5m2fnuzs,
        F8E5M2 => &l.f8e5m2s,
        _ => &l.f8e8m0fnus,
    }
}
