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
//! cores (`util::par_map`); the stack frames are numbered before, in XLA's
//! order, so the result does not depend on the thread count.

use super::err;
use super::read_async::fold_async_sugar;
use super::read_computation::Reader;
use super::read_frames::{frame_ids, Frames};
use super::read_header::module_header;
use super::read_order::computation_order;
use super::read_scan::{split_module, CompData, ModuleData};
use super::ProtoError;
use crate::ir::module::PrintOptions;
use crate::ir::{CompId, Computation, Module};
use crate::util::par_map;
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
    let data = split_module(bytes)?;
    read(&data, options)
}

/// Whether a module is worth converting on several threads.
fn worth_threads(data: &ModuleData<'_>) -> bool {
    data.comps.len() > 1 && data.comps.iter().map(|c| c.instrs.len()).sum::<usize>() > 4_000
}

/// Where an error in the `i`-th computation is.
fn in_computation(e: ProtoError, i: usize, c: &CompData<'_>) -> ProtoError {
    e.context(format!("computation {}", c.shell.name))
        .in_path(&format!("HloModuleProto.computations[{i}]"), c.bytes)
}

fn read(data: &ModuleData<'_>, options: &ReadOptions) -> Result<Module, ProtoError> {
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
    let parallel = worth_threads(data);
    if frames.renumber && frames.index.is_some() {
        number_stack_frames(&mut frames, data, parallel)?;
    }
    let mut converted = convert_computations(data, &comp_ids, &comp_refs, &frames, parallel)?;
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
fn computation_ids(data: &ModuleData<'_>) -> Result<FxMap<i64, usize>, ProtoError> {
    let mut comp_ids = FxMap::default();
    for (i, c) in data.comps.iter().enumerate() {
        if comp_ids.insert(c.shell.id, i).is_some() {
            return err(format!(
                "computation id {} is used twice ({})",
                c.shell.id, c.shell.name
            ));
        }
    }
    Ok(comp_ids)
}

/// XLA numbers the stack frames walking the computations in proto order
/// and their instructions in id order.
fn number_stack_frames(
    frames: &mut Frames<'_>,
    data: &ModuleData<'_>,
    parallel: bool,
) -> Result<(), ProtoError> {
    let ids = par_map(
        &data.comps,
        parallel,
        || (),
        |_, i, c| frame_ids(c).map_err(|e| in_computation(e, i, c)),
    );
    for list in ids {
        for id in list? {
            frames.map(id)?;
        }
    }
    Ok(())
}

/// The computations converted, in proto order.
struct Converted {
    built: Vec<Option<Computation>>,
    /// Per computation, for each instruction in id order that calls
    /// computations, the computations it calls.
    calls: Vec<Vec<SmallVec<[usize; 2]>>>,
    any_async_start: bool,
}

fn convert_computations(
    data: &ModuleData<'_>,
    comp_ids: &FxMap<i64, usize>,
    comp_refs: &[CompId],
    frames: &Frames<'_>,
    parallel: bool,
) -> Result<Converted, ProtoError> {
    let shell = &data.shell;
    let scheduled = shell.schedule.is_some();
    let results = par_map(
        &data.comps,
        parallel,
        || Reader::new(comp_ids, comp_refs, frames, shell),
        |r, i, c| {
            r.computation(c, scheduled)
                .map_err(|e| in_computation(e, i, c))
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
