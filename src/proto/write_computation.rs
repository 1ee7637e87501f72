//! Writing each computation: its instructions handed to the sink one by
//! one, then its own fields and its sequence in the schedule.

// Messages are `Ext` wrappers (known fields behind `Deref`), which struct
// literals cannot fill: fields are set one by one.
#![allow(clippy::field_reassign_with_default)]

use super::messages::*;
use super::to_proto::Writer;
use super::write_async::Wrapped;
use super::write_direct::Direct;
use super::write_ids::{InstrIds, ModuleInstrIds};
use super::write_sink::{CompEncoder, CompSink, ProgramShape};
use super::ProtoError;
use crate::ir::{CompId, Computation, InstrId, Opcode};
use crate::util::{par_for_each_in_order, FxSet, Spares};

/// Instructions whose encoded bytes may wait to be handed to the sink.
const WRITE_AHEAD: usize = 32_768;
/// Modules smaller than this are written on one thread.
pub(super) const PARALLEL_WRITE: usize = 100_000;
/// Computations of this many instructions are encoded into buffers
/// written before ([`Spares`]) of at least `SPARE_BYTES`, at most
/// `SPARE_BUFFERS` of them kept.
const SPARE_AFTER: usize = 500;
const SPARE_BYTES: usize = 64 << 10;
const SPARE_BUFFERS: usize = 8;

/// A computation to write, and its instructions' stack frame ids in the
/// proto it was read from, if kept.
struct Job<'a> {
    what: JobKind<'a>,
    ids: &'a InstrIds,
    frames: Option<&'a [i32]>,
}

enum JobKind<'a> {
    /// The computation of an async op written as sugar.
    Wrapped(&'a Wrapped),
    Module {
        id: CompId,
        is_fusion: bool,
    },
}

impl Job<'_> {
    fn instruction_count(&self) -> usize {
        self.ids.order.len()
    }
}

/// An encoded computation and its sequence in the schedule, if any.
type Encoded<P> = (P, Option<(i64, InstructionSequence)>);

impl Writer<'_> {
    /// Hands each computation to `sink` in writing order, those of its
    /// async sugar first (callees first); returns the schedule. A large
    /// module's computations are encoded on every core and handed over in
    /// order as they are done: the bytes are the same whatever the number
    /// of threads, and memory holds about `WRITE_AHEAD` instructions'.
    pub(super) fn write_computations<S: CompSink>(
        &self,
        sink: &mut S,
        ids: &ModuleInstrIds,
        frame_ids: Option<&[Vec<i32>]>,
    ) -> Result<HloScheduleProto, ProtoError>
    where
        Self: Sync,
    {
        let jobs = self.jobs(ids, frame_ids)?;
        let parallel = self.module.instruction_count() >= PARALLEL_WRITE;
        let mut schedule = HloScheduleProto::default();
        let spare = Spares::new(SPARE_BUFFERS);
        par_for_each_in_order(
            &jobs,
            parallel,
            WRITE_AHEAD,
            Job::instruction_count,
            Default::default,
            |state, job| {
                let (enc, ip): &mut (S::Encoder, HloInstructionProto) = state;
                if job.instruction_count() >= SPARE_AFTER {
                    if let Some(buffer) = spare.take() {
                        enc.reuse(buffer);
                    }
                }
                self.encode_job(enc, ip, job)
            },
            |encoded| {
                let (piece, sequence) = encoded?;
                if let Some((id, seq)) = sequence {
                    schedule.sequences.insert(id, seq);
                }
                if let Some(buffer) = sink.computation(piece)? {
                    if buffer.capacity() >= SPARE_BYTES {
                        spare.give(buffer);
                    }
                }
                Ok(())
            },
        )?;
        Ok(schedule)
    }

    /// The computations in writing order, each with its frame ids.
    fn jobs<'a>(
        &'a self,
        ids: &'a ModuleInstrIds,
        frame_ids: Option<&'a [Vec<i32>]>,
    ) -> Result<Vec<Job<'a>>, ProtoError> {
        let fusion_called = self.fusion_computations();
        let mut frame_lists = frame_ids.map(|ids| ids.iter());
        let mut next_frames = || -> Option<&[i32]> { frame_lists.as_mut()?.next().map(|f| &f[..]) };
        let mut jobs = Vec::new();
        for id in self.comp_order() {
            for (w, w_ids) in self.wrapped.iter().zip(&ids.wrapped) {
                if w.caller == id {
                    jobs.push(Job {
                        what: JobKind::Wrapped(w),
                        ids: w_ids,
                        frames: next_frames(),
                    });
                }
            }
            let frames = next_frames();
            let comp_ids = ids
                .comps
                .get(&id)
                .ok_or_else(|| ProtoError::new("a computation without ids"))?;
            jobs.push(Job {
                what: JobKind::Module {
                    id,
                    is_fusion: fusion_called.contains(&id),
                },
                ids: comp_ids,
                frames,
            });
        }
        Ok(jobs)
    }

    /// Encodes a computation; `ip` is the message each instruction is
    /// made in, reused.
    fn encode_job<E: CompEncoder>(
        &self,
        enc: &mut E,
        ip: &mut HloInstructionProto,
        job: &Job,
    ) -> Result<Encoded<E::Piece>, ProtoError> {
        match job.what {
            JobKind::Wrapped(w) => self.write_wrapped(enc, ip, w, job.ids, job.frames),
            JobKind::Module { id, is_fusion } => {
                self.write_computation(enc, ip, id, job.ids, job.frames, is_fusion)
            }
        }
    }

    /// The computations fusions call.
    fn fusion_computations(&self) -> FxSet<CompId> {
        self.module
            .computations()
            // Most instructions are in fused computations, which hold no
            // fusion: this runs before any computation is encoded.
            .filter(|(_, c)| c.may_contain(Opcode::Fusion))
            .flat_map(|(_, c)| {
                c.instructions()
                    .filter(|(_, i)| i.opcode == Opcode::Fusion)
                    .flat_map(|(_, i)| i.called_computations().collect::<Vec<_>>())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The computation of an async op written as sugar.
    fn write_wrapped<E: CompEncoder>(
        &self,
        enc: &mut E,
        ip: &mut HloInstructionProto,
        w: &Wrapped,
        ids: &InstrIds,
        frames: Option<&[i32]>,
    ) -> Result<Encoded<E::Piece>, ProtoError> {
        let mut cp = HloComputationProto::default();
        cp.name = w.comp.name.to_string();
        cp.id = w.id;
        enc.begin(&cp.name);
        for (k, &i) in ids.order.iter().enumerate() {
            self.instruction_in(&w.comp, i, ids, ip)?;
            enc.instruction(ip, w.comp.instr(i), frame(frames, k));
        }
        let root = w.comp.root();
        cp.root_id = ids.ids[&root];
        if let Some(t) = &w.thread {
            cp.execution_thread = t.clone();
        }
        let seq = self.scheduled().then(|| (w.id, sequence(&ids.order, ids)));
        Ok((enc.end(cp, program_shape(&w.comp, root)), seq))
    }

    fn write_computation<E: CompEncoder>(
        &self,
        enc: &mut E,
        ip: &mut HloInstructionProto,
        id: CompId,
        ids: &InstrIds,
        frames: Option<&[i32]>,
        is_fusion: bool,
    ) -> Result<Encoded<E::Piece>, ProtoError> {
        let comp = self.module.comp(id);
        let cid = self.comp_ids[&id];
        let mut cp = HloComputationProto::default();
        cp.unknown = comp.proto_unknown_own().to_vec();
        cp.name = comp.name.to_string();
        cp.id = cid;
        enc.begin(&cp.name);
        for (k, &i) in ids.order.iter().enumerate() {
            let instr = comp.instr(i);
            if let Some(d) = Direct::of(self, comp, i, &ids.ids) {
                if enc.direct(&d, instr, frame(frames, k)) {
                    continue;
                }
            }
            self.instruction_in(comp, i, ids, ip)?;
            if instr.opcode == Opcode::AsyncStart {
                if let Some(&w) = self.wrapped_of.get(&(id, i)) {
                    ip.called_computation_ids = vec![self.wrapped[w].id];
                }
            }
            enc.instruction(ip, instr, frame(frames, k));
        }
        let root = comp
            .root_opt()
            .ok_or_else(|| ProtoError::new(format!("{} has no root", comp.name)))?;
        cp.root_id = ids.ids[&root];
        cp.is_fusion_computation = is_fusion;
        if let Some(t) = &comp.execution_thread {
            cp.execution_thread = t.to_string();
        }
        // The schedule, which may differ from the proto's own order of a
        // module read from one.
        let seq = (self.scheduled() && !is_fusion).then(|| {
            let order = match ids.order_is_schedule {
                true => sequence(&ids.order, ids),
                false => sequence(&comp.schedule(), ids),
            };
            (cid, order)
        });
        Ok((enc.end(cp, program_shape(comp, root)), seq))
    }
}

fn sequence(order: &[InstrId], ids: &InstrIds) -> InstructionSequence {
    let mut seq = InstructionSequence::default();
    seq.instruction_ids = order.iter().map(|i| ids.ids[i]).collect();
    seq
}

/// The `k`-th instruction's stack frame id in the proto, if kept.
fn frame(frames: Option<&[i32]>, k: usize) -> Option<i32> {
    frames.and_then(|f| f.get(k)).copied()
}

/// A computation's parameters (with their names) and result.
fn program_shape(comp: &Computation, root: InstrId) -> ProgramShape<'_> {
    ProgramShape {
        parameters: comp
            .parameters()
            .into_iter()
            .map(|p| comp.instr(p))
            .collect(),
        result: &comp.instr(root).shape,
    }
}
