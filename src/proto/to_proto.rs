//! IR -> `HloModuleProto`, as XLA's `HloModule::ToProto` writes it.
//!
//! Ids: computation `k` (1-based, in print order) gets id `k`; its `j`-th
//! instruction (1-based, in print order) gets `k << 32 | j`, the scheme of
//! XLA's own protos. Computations are written in print order, which XLA's
//! printer makes callees-first, as XLA's loader needs. Attributes kept as
//! text are parsed back into their fields.
//!
//! A module read from a proto is written back as it was read: the proto's
//! ids where they are still unique (new computations and instructions get
//! fresh ones), its computation and instruction order while that is still
//! callees first and operands first, and its own stack-frame tables and
//! ids while the IR's tables are the ones the reader made.

// Messages are `Ext` wrappers (known fields behind `Deref`), which struct
// literals cannot fill: fields are set one by one.
#![allow(clippy::field_reassign_with_default)]

use super::messages::*;
use super::write_async::Wrapped;
use super::write_header::{header_to_proto, host_program_shape, stack_frame_index};
use super::write_ids::fresh_id;
use super::write_sink::{Collect, CompSink, Stream};
use super::ProtoError;
use crate::ir::{CompId, InstrId, Module};
use crate::util::{FxMap, FxSet};
use prost::Message;

/// The module as a proto message.
pub fn module_to_proto(module: &Module) -> Result<HloModuleProto, ProtoError> {
    let mut sink = Collect::default();
    let mut p = Writer::new(module)?.module(&mut sink)?;
    p.computations = sink.done;
    Ok(p)
}

/// The module as an encoded `HloModuleProto`.
pub fn module_to_proto_bytes(module: &Module) -> Result<Vec<u8>, ProtoError> {
    let mut out = Vec::new();
    write_module_proto(module, &mut out).map_err(|e| match e {
        WriteError::Proto(e) => e,
        WriteError::Io(e) => ProtoError::new(e.to_string()),
    })?;
    Ok(out)
}

/// Why a module could not be written as a proto.
#[derive(Debug)]
pub enum WriteError {
    /// The module cannot be said as a proto.
    Proto(ProtoError),
    /// The writer failed.
    Io(std::io::Error),
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::Proto(e) => e.fmt(f),
            WriteError::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for WriteError {}

/// Writes the module as an encoded `HloModuleProto` to `out`, a
/// computation at a time: memory is the module's, one computation's
/// encoded bytes, and one instruction's message. The bytes are those of
/// [`module_to_proto`]'s message encoded (fields in tag order, each
/// message's unknown fields last).
pub fn write_module_proto(module: &Module, out: &mut dyn std::io::Write) -> Result<(), WriteError> {
    let writer = Writer::new(module).map_err(WriteError::Proto)?;
    let mut sink = Stream { out, io: None };
    let r = writer.module(&mut sink);
    if let Some(e) = sink.io.take() {
        return Err(WriteError::Io(e));
    }
    let mut p = r.map_err(WriteError::Proto)?;
    // Name and entry name (fields 1 and 2) went first, in `start`.
    p.name.clear();
    p.entry_computation_name.clear();
    sink.out
        .write_all(&p.encode_to_vec())
        .map_err(WriteError::Io)
}

/// Writes a module: its computations' and instructions' ids, and the
/// computations of its async sugar, made first.
pub(super) struct Writer<'m> {
    pub(super) module: &'m Module,
    pub(super) comp_ids: FxMap<CompId, i64>,
    /// The computations of async ops written as sugar.
    pub(super) wrapped: Vec<Wrapped>,
    /// Each sugared `-start`, `-update` and `-done`: its entry in `wrapped`.
    pub(super) wrapped_of: FxMap<(CompId, InstrId), usize>,
}

impl<'m> Writer<'m> {
    fn new(module: &'m Module) -> Result<Writer<'m>, ProtoError> {
        // Ids a proto it was read from gave, where unique; new ones above.
        let mut used = FxSet::default();
        let mut comp_ids: FxMap<CompId, i64> = FxMap::default();
        for (c, comp) in module.computations() {
            if let Some(id) = comp.proto_id.filter(|&id| id > 0 && used.insert(id)) {
                comp_ids.insert(c, id);
            }
        }
        let mut next = used.iter().max().map_or(1, |m| m + 1);
        for (i, c) in module.computation_ids().enumerate() {
            if comp_ids.contains_key(&c) {
                continue;
            }
            comp_ids.insert(c, fresh_id(&mut used, &mut next, i as i64 + 1));
        }
        let mut w = Writer {
            module,
            comp_ids,
            wrapped: Vec::new(),
            wrapped_of: FxMap::default(),
        };
        w.wrap_async_sugar(used.iter().max().map_or(1, |m| m + 1))?;
        Ok(w)
    }

    /// The module as a proto, each computation handed to `sink` as it is
    /// made (its instructions one by one), so that only one instruction's
    /// message exists at a time when the sink encodes them. Returns the
    /// module's own fields, with no computations.
    fn module<S: CompSink>(&self, sink: &mut S) -> Result<HloModuleProto, ProtoError> {
        let m = self.module;
        let mut p = HloModuleProto::default();
        // The fields a proto it was read from had and the IR does not model.
        if let Some(extras) = &m.proto_extras {
            p.merge(&extras[..])
                .map_err(|e| ProtoError::decode("HloModuleProto", e))?;
        }
        p.name = m.name.to_string();
        let entry = m
            .entry_opt()
            .ok_or_else(|| ProtoError::new("the module has no entry computation"))?;
        p.entry_computation_name = m.comp(entry).name.to_string();
        p.entry_computation_id = self.comp_ids[&entry];
        sink.start(&p)?;
        let ids = self.instruction_ids();
        // The proto's own stack-frame tables, while the IR's are still the
        // ones read: each instruction's frame id in them, if every one has
        // one (found in a first walk, so that the second can write each
        // instruction as it is made).
        let proto_frames = m
            .proto_frames
            .as_deref()
            .filter(|f| m.stack_frames.as_ref() == Some(&f.read_as));
        let frame_ids: Option<Vec<Vec<i32>>> = match proto_frames {
            Some(f) => self.proto_frame_ids(f, &ids)?,
            None => None,
        };
        let schedule = self.write_computations(sink, &ids, frame_ids.as_deref())?;
        if self.scheduled() {
            p.schedule = Some(schedule);
        }
        if let Some(ps) = host_program_shape(m) {
            p.host_program_shape = Some(ps);
        }
        header_to_proto(&m.header, &mut p)?;
        let frames_kept = match (proto_frames, &frame_ids) {
            (Some(f), Some(_)) => Some(&f.original),
            _ => None,
        };
        if let Some(sf) = frames_kept.or(m.stack_frames.as_ref()) {
            p.stack_frame_index = Some(stack_frame_index(sf));
        }
        Ok(p)
    }
}
