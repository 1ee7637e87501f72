//! Writing each computation: its instructions handed to the sink one by
//! one, then its own fields and its sequence in the schedule.

// Messages are `Ext` wrappers (known fields behind `Deref`), which struct
// literals cannot fill: fields are set one by one.
#![allow(clippy::field_reassign_with_default)]

use super::messages::*;
use super::to_proto::Writer;
use super::write_async::Wrapped;
use super::write_ids::{InstrIds, ModuleInstrIds};
use super::write_shape::shape_to_proto;
use super::write_sink::CompSink;
use super::ProtoError;
use crate::ir::{CompId, Computation, InstrId, Opcode};
use crate::util::FxSet;

impl Writer<'_> {
    /// Hands each computation to `sink` in writing order, those of its
    /// async sugar first (callees first); returns the schedule.
    pub(super) fn write_computations(
        &self,
        sink: &mut dyn CompSink,
        mut ids: ModuleInstrIds,
        frame_ids: Option<&[Vec<i32>]>,
    ) -> Result<HloScheduleProto, ProtoError> {
        let fusion_called = self.fusion_computations();
        let mut schedule = HloScheduleProto::default();
        let mut frame_lists = frame_ids.map(|ids| ids.iter());
        let mut next_frames = || -> Option<&[i32]> { frame_lists.as_mut()?.next().map(|f| &f[..]) };
        for id in self.comp_order() {
            for (w, w_ids) in self.wrapped.iter().zip(&ids.wrapped) {
                if w.caller == id {
                    self.write_wrapped(sink, w, w_ids, next_frames(), &mut schedule)?;
                }
            }
            let frames = next_frames();
            let comp_ids = ids.comps.remove(&id).expect("every computation");
            let is_fusion = fusion_called.contains(&id);
            self.write_computation(sink, id, &comp_ids, frames, is_fusion, &mut schedule)?;
        }
        Ok(schedule)
    }

    /// The computations fusions call.
    fn fusion_computations(&self) -> FxSet<CompId> {
        self.module
            .computations()
            .flat_map(|(_, c)| {
                c.instructions()
                    .filter(|(_, i)| i.opcode == Opcode::Fusion)
                    .flat_map(|(_, i)| i.called_computations().collect::<Vec<_>>())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The computation of an async op written as sugar.
    fn write_wrapped(
        &self,
        sink: &mut dyn CompSink,
        w: &Wrapped,
        ids: &InstrIds,
        frames: Option<&[i32]>,
        schedule: &mut HloScheduleProto,
    ) -> Result<(), ProtoError> {
        let mut cp = HloComputationProto::default();
        cp.name = w.comp.name.to_string();
        cp.id = w.id;
        sink.begin_computation(&cp.name)?;
        for (k, &i) in ids.order.iter().enumerate() {
            let mut ip = self.instruction_in(&w.comp, i, ids)?;
            set_frame(&mut ip, frames.and_then(|f| f.get(k)));
            sink.instruction(&ip)?;
        }
        let root = w.comp.root();
        cp.root_id = ids.ids[&root];
        cp.program_shape = Some(program_shape(&w.comp, root));
        if let Some(t) = &w.thread {
            cp.execution_thread = t.clone();
        }
        if self.scheduled() {
            schedule.sequences.insert(w.id, sequence(&ids.order, ids));
        }
        sink.end_computation(cp)
    }

    fn write_computation(
        &self,
        sink: &mut dyn CompSink,
        id: CompId,
        ids: &InstrIds,
        frames: Option<&[i32]>,
        is_fusion: bool,
        schedule: &mut HloScheduleProto,
    ) -> Result<(), ProtoError> {
        let comp = self.module.comp(id);
        let cid = self.comp_ids[&id];
        let mut cp = HloComputationProto::default();
        cp.unknown = comp.proto_unknown_own().to_vec();
        cp.name = comp.name.to_string();
        cp.id = cid;
        sink.begin_computation(&cp.name)?;
        for (k, &i) in ids.order.iter().enumerate() {
            let mut ip = self.instruction_in(comp, i, ids)?;
            if comp.instr(i).opcode == Opcode::AsyncStart {
                if let Some(&w) = self.wrapped_of.get(&(id, i)) {
                    ip.called_computation_ids = vec![self.wrapped[w].id];
                }
            }
            set_frame(&mut ip, frames.and_then(|f| f.get(k)));
            sink.instruction(&ip)?;
        }
        let root = comp
            .root_opt()
            .ok_or_else(|| ProtoError::new(format!("{} has no root", comp.name)))?;
        cp.root_id = ids.ids[&root];
        cp.program_shape = Some(program_shape(comp, root));
        cp.is_fusion_computation = is_fusion;
        if let Some(t) = &comp.execution_thread {
            cp.execution_thread = t.to_string();
        }
        if self.scheduled() && !is_fusion {
            // The schedule, which may differ from the proto's own order of
            // a module read from one.
            schedule
                .sequences
                .insert(cid, sequence(&comp.schedule(), ids));
        }
        sink.end_computation(cp)
    }
}

fn sequence(order: &[InstrId], ids: &InstrIds) -> InstructionSequence {
    let mut seq = InstructionSequence::default();
    seq.instruction_ids = order.iter().map(|i| ids.ids[i]).collect();
    seq
}

/// Sets an instruction's stack frame id to the proto's own, if kept.
fn set_frame(ip: &mut HloInstructionProto, frame: Option<&i32>) {
    if let (Some(&id), Some(md)) = (frame, &mut ip.metadata) {
        md.stack_frame_id = id;
    }
}

/// A computation's parameters (with their names) and result.
fn program_shape(comp: &Computation, root: InstrId) -> ProgramShapeProto {
    let mut ps = ProgramShapeProto::default();
    for pid in comp.parameters() {
        let pi = comp.instr(pid);
        ps.parameters.push(shape_to_proto(&pi.shape));
        ps.parameter_names.push(pi.name.to_string());
    }
    ps.result = Some(shape_to_proto(&comp.instr(root).shape));
    ps
}
