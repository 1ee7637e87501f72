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
//! The input is a [`Source`]: memory, or a file read by byte range, so
//! that a file is never held whole. The module's own fields are walked key
//! by key and the computations' places noted (`split_module`); then, on
//! all cores, each computation's bytes are read and split for its id, name
//! and stack frames (`read_heads`), and read and split again to convert it.
//!
//! The reader streams. Per computation, pass 1 scans each encoded
//! instruction for its id, name, edges, stack frame and the bytes of its
//! shape (shapes are interned by those bytes); pass 2, in print order,
//! decodes each instruction into one reused message (metadata read in
//! place) and writes every name and attribute text of the computation into
//! one buffer the IR's strings are slices of. Computations convert on all
//! cores (`util::par_map`); the stack frames are numbered before, in XLA's
//! order, so the result does not depend on the thread count.

use super::err;
use super::read_async::fold_async_sugar;
use super::read_computation::Reader;
use super::read_frames::{frame_ids, FrameRef, Frames};
use super::read_header::module_header;
use super::read_order::computation_order;
use super::read_scan::{split_computation, split_module, CompHead, ModuleData, Scan};
use super::read_source::Source;
use super::ProtoError;
use crate::ir::module::PrintOptions;
use crate::ir::{CompId, Computation, Module};
use crate::util::par_map_heavy_first;
use crate::util::FxMap;
use smallvec::SmallVec;

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

/// Reads a binary `HloModuleProto`.
pub fn module_from_proto(bytes: &[u8], options: &ReadOptions) -> Result<Module, ProtoError> {
    read(bytes, split_module(bytes), options)
}

/// Reads a module from `src` if it is plainly an `HloModuleProto` (it has a
/// field past 4: see [`super::unwrap_module`]); `None` if it may be
/// something else, or is not a proto at all.
pub(crate) fn module_from_source<S: Source + ?Sized>(
    src: &S,
    options: &ReadOptions,
) -> Option<Result<Module, ProtoError>> {
    let data = split_module(src);
    if !data.field_past_4 || data.fault.is_some() {
        return None;
    }
    Some(read(src, data, options))
}

/// Whether a module is worth converting on several threads.
fn worth_threads(comp_at: &[(usize, usize)]) -> bool {
    // About 120 bytes an instruction: 4,000 instructions.
    comp_at.len() > 1 && comp_at.iter().map(|c| c.1).sum::<usize>() > 480_000
}

/// Where an error in the `i`-th computation is: `bytes`, read from offset
/// `at` of the input.
fn in_computation(e: ProtoError, i: usize, name: &str, bytes: &[u8], at: usize) -> ProtoError {
    e.context(format!("computation {name}"))
        .in_path(&format!("HloModuleProto.computations[{i}]"), bytes)
        .located_at(bytes, at)
}

/// Where a bad stack frame id reached from an instruction's metadata is:
/// the instruction (computation, name, message path and offset) and its
/// `stack_frame_id`; `e` names the table entry.
fn in_metadata<S: Source + ?Sized>(
    src: &S,
    data: &ModuleData,
    i: usize,
    r: FrameRef,
    e: ProtoError,
) -> ProtoError {
    let comp = data.comps.get(i).map_or("", |c| c.name.as_str());
    let frame = r.frame;
    // Read again, only for the error: the instruction's name and bytes.
    let mut buf = Vec::new();
    let bytes = data
        .comp_at
        .get(i)
        .and_then(|&(at, len)| Some((at, src.read(at, len, &mut buf).ok()?)));
    let instr = bytes.and_then(|(_, b)| split_computation(b).ok()?.instrs.get(r.index).copied());
    let name = instr.and_then(|b| Scan::new(b).ok()).map_or_else(
        || String::from("?"),
        |s| String::from_utf8_lossy(s.name).into_owned(),
    );
    let e = e.context(format!(
        "computation {comp}, instruction {name}, metadata.stack_frame_id {frame}"
    ));
    let (Some((at, bytes)), Some(instr)) = (bytes, instr) else {
        return e;
    };
    e.in_path(&format!("instructions[{}]", r.index), instr)
        .in_path(&format!("HloModuleProto.computations[{i}]"), bytes)
        .located_at(bytes, at)
}

/// Each computation's fields but the instructions, and (if asked for) the
/// stack frame ids of its instructions: read in parallel; a fault in
/// splitting is reported first, as a sequential read would, and a fault
/// in the frames when they are numbered.
fn read_heads<S: Source + ?Sized>(
    src: &S,
    data: &mut ModuleData,
    with_frames: bool,
    parallel: bool,
) -> Result<Vec<Result<Vec<FrameRef>, ProtoError>>, ProtoError> {
    let by_len = |&(_, len): &(usize, usize)| len;
    let results = par_map_heavy_first(
        &data.comp_at,
        parallel,
        by_len,
        Vec::new,
        |buf, i, &(at, len)| {
            let bytes = src.read(at, len, buf)?;
            let mut c = split_computation(bytes).map_err(|e| {
                e.in_path(&format!("computations[{i}]"), bytes)
                    .prefix_path("HloModuleProto")
                    .located_at(bytes, at)
            })?;
            let frames = if with_frames {
                frame_ids(&c).map_err(|e| in_computation(e, i, &c.shell.name, bytes, at))
            } else {
                Ok(Vec::new())
            };
            let head = CompHead {
                at,
                len,
                id: c.shell.id,
                name: std::mem::take(&mut c.shell.name),
            };
            Ok::<_, ProtoError>((head, frames))
        },
    );
    let mut frames = Vec::with_capacity(results.len());
    for r in results {
        let (head, f) = r?;
        data.comps.push(head);
        frames.push(f);
    }
    Ok(frames)
}

fn read<S: Source + ?Sized>(
    src: &S,
    mut data: ModuleData,
    options: &ReadOptions,
) -> Result<Module, ProtoError> {
    let parallel = worth_threads(&data.comp_at);
    let renumber = options.xla_order && data.shell.stack_frame_index.is_some();
    let with_frames = renumber && data.fault.is_none();
    let frame_ids = read_heads(src, &mut data, with_frames, parallel)?;
    if let Some(fault) = data.fault.take() {
        return Err(fault);
    }
    let data = &data;
    let comp_ids = computation_ids(data)?;
    let mut frames = Frames::new(data.shell.stack_frame_index.as_ref(), options.xla_order);
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
    // XLA numbers the stack frames walking the computations in proto
    // order and their instructions in id order.
    for (i, refs) in frame_ids.into_iter().enumerate() {
        for r in refs? {
            frames
                .map(r.frame)
                .map_err(|e| in_metadata(src, data, i, r, e))?;
        }
    }
    let mut converted = convert_computations(src, data, &comp_ids, &comp_refs, &frames, parallel)?;
    let folded = if converted.any_async_start {
        fold_async_sugar(&mut converted.built, &comp_refs, entry)
    } else {
        vec![false; converted.built.len()]
    };
    let mut order = computation_order(data, &converted.calls, entry)?;
    if !frames.renumber {
        order = (0..data.comps.len()).collect();
    }
    for i in order {
        if folded[i] {
            continue;
        }
        let mut comp = converted.built[i]
            .take()
            .expect("each computation is placed once");
        comp.proto_position = Some(i);
        module.define_computation(comp_refs[i], comp);
    }
    module.set_entry(comp_refs[entry]);
    let mut extras = data.extras.clone();
    module.header = module_header(shell, options, &mut extras)?;
    let tables = frames.into_tables();
    module.stack_frames = tables.stack_frames;
    if let Some(p) = tables.proto_frames {
        module.proto_frames = Some(p);
    }
    if !extras.is_empty() {
        module.proto_extras = Some(extras.into());
    }
    module.style = PrintOptions::default_form();
    Ok(module)
}

/// Proto computation id -> position in the module.
fn computation_ids(data: &ModuleData) -> Result<FxMap<i64, usize>, ProtoError> {
    let mut comp_ids = FxMap::default();
    for (i, c) in data.comps.iter().enumerate() {
        if comp_ids.insert(c.id, i).is_some() {
            return err(format!(
                "computation id {} is used twice ({})",
                c.id, c.name
            ));
        }
    }
    Ok(comp_ids)
}

/// The computations converted, in proto order.
struct Converted {
    built: Vec<Option<Computation>>,
    /// Per computation, for each instruction in id order that calls
    /// computations, the computations it calls.
    calls: Vec<Vec<SmallVec<[usize; 2]>>>,
    any_async_start: bool,
}

fn convert_computations<S: Source + ?Sized>(
    src: &S,
    data: &ModuleData,
    comp_ids: &FxMap<i64, usize>,
    comp_refs: &[CompId],
    frames: &Frames<'_>,
    parallel: bool,
) -> Result<Converted, ProtoError> {
    let shell = &data.shell;
    let scheduled = shell.schedule.is_some();
    let results = par_map_heavy_first(
        &data.comps,
        parallel,
        |head| head.len,
        || (Reader::new(comp_ids, comp_refs, frames, shell), Vec::new()),
        |(r, buf), i, head| {
            let bytes = src.read(head.at, head.len, buf)?;
            let at = |e| in_computation(e, i, &head.name, bytes, head.at);
            // Split again: `read_heads` kept nothing that points into the
            // bytes, which it may have read into a buffer now reused.
            let c = split_computation(bytes).map_err(at)?;
            r.computation(&c, scheduled).map_err(at)
        },
    );
    let mut out = Converted {
        built: Vec::with_capacity(data.comps.len()),
        calls: Vec::with_capacity(data.comps.len()),
        any_async_start: false,
    };
    for r in results {
        let c = r?;
        out.built.push(Some(c.comp));
        out.calls.push(c.calls);
        out.any_async_start |= c.has_async_start;
    }
    Ok(out)
}
