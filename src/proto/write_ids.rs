//! The writer's order and ids: which computation and instruction goes
//! where, with the ids of the proto the module was read from where they
//! are still unique, and fresh ones else.

use super::to_proto::Writer;
use super::write_computation::PARALLEL_WRITE;
use super::write_sink::metadata_attr;
use super::ProtoError;
use crate::ir::{CompId, Computation, InstrId, ProtoFrames};
use crate::util::{par_map, FxMap, FxSet};

/// A computation's instructions in writing order, and their proto ids.
pub(super) struct InstrIds {
    pub(super) order: Vec<InstrId>,
    pub(super) ids: LocalIds,
    /// Whether `order` is the computation's schedule
    /// ([`Computation::schedule`]), which the schedule's sequence is.
    pub(super) order_is_schedule: bool,
}

/// The proto id of each instruction of a computation, by [`InstrId`]
/// index: a table, not a map, since every instruction written has one and
/// the writer looks one up per operand. (Plain ids, not `Option`s: the
/// table is held while the whole module is written, and half its size is
/// 4 MB less at the peak of writing a large module.)
pub(super) struct LocalIds(Vec<i64>);

impl LocalIds {
    /// Slots not written keep 0.
    fn new(slots: usize) -> LocalIds {
        LocalIds(vec![0; slots])
    }

    fn set(&mut self, i: InstrId, id: i64) {
        self.0[i.index()] = id;
    }
}

impl std::ops::Index<&InstrId> for LocalIds {
    type Output = i64;

    fn index(&self, i: &InstrId) -> &i64 {
        &self.0[i.index()]
    }
}

/// The [`InstrIds`] of every computation, and of the async sugar's
/// computations (in the order of [`Writer::wrapped`]).
pub(super) struct ModuleInstrIds {
    pub(super) comps: FxMap<CompId, InstrIds>,
    pub(super) wrapped: Vec<InstrIds>,
}

/// `preferred` if no id has it yet, else the next fresh one; marked used.
pub(super) fn fresh_id(used: &mut FxSet<i64>, next: &mut i64, preferred: i64) -> i64 {
    let mut id = preferred;
    if used.contains(&id) {
        id = *next;
        *next += 1;
    }
    used.insert(id);
    id
}

impl Writer<'_> {
    /// The computations in the order they are written: that of the proto
    /// they were read from while it is still callees first and the module
    /// has no new ones; else print order.
    pub(super) fn comp_order(&self) -> Vec<CompId> {
        let m = self.module;
        let print: Vec<CompId> = m.computation_ids().collect();
        let mut by_proto: Vec<(usize, CompId)> = Vec::with_capacity(print.len());
        for &c in &print {
            match m.comp(c).proto_position {
                Some(p) => by_proto.push((p, c)),
                None => return print,
            }
        }
        by_proto.sort_unstable();
        if by_proto.windows(2).any(|w| w[0].0 == w[1].0) {
            return print;
        }
        let mut placed: FxSet<CompId> = FxSet::default();
        for &(_, c) in &by_proto {
            let callees_first = m.comp(c).instructions().all(|(_, i)| {
                let called: Vec<CompId> = i.called_computations().collect();
                called.iter().all(|d| placed.contains(d))
            });
            if !callees_first {
                return print;
            }
            placed.insert(c);
        }
        by_proto.into_iter().map(|(_, c)| c).collect()
    }

    /// Each computation's instructions in the order they are written, and
    /// their ids: the ids a proto it was read from gave, where unique in
    /// the module; else `computation << 32 | n` (1-based, in written
    /// order), or, if that is taken, ids above every other.
    ///
    /// Then the same for the computations of async sugar, in order.
    pub(super) fn instruction_ids(&self) -> ModuleInstrIds {
        let m = self.module;
        let scheduled = self.scheduled();
        let mut comps: FxMap<CompId, InstrIds> = FxMap::default();
        let mut used = FxSet::default();
        // The orders walk every instruction, each computation's alone.
        let all: Vec<(CompId, &Computation)> = m.computations().collect();
        let parallel = m.instruction_count() >= PARALLEL_WRITE;
        let orders = par_map(
            &all,
            parallel,
            || (),
            |_, _, &(_, comp)| match comp.proto_instr_order() {
                Some(order) => (order, false),
                None if scheduled => (comp.schedule(), true),
                None => (comp.post_order(), false),
            },
        );
        // Per computation, the places in its order of the instructions
        // without a proto id, which get fresh ones below (`None`: all).
        let mut without: Vec<(CompId, Option<Vec<usize>>)> = Vec::with_capacity(all.len());
        for (&(id, comp), (order, order_is_schedule)) in all.iter().zip(orders) {
            let (mut ids, missing) = proto_ids(comp, order, &mut used);
            ids.order_is_schedule = order_is_schedule;
            comps.insert(id, ids);
            without.push((id, missing));
        }
        let mut next = used.iter().max().map_or(1, |m| m + 1);
        let wrapped_orders: Vec<Vec<InstrId>> =
            self.wrapped.iter().map(|w| w.comp.post_order()).collect();
        // With no ids from a proto, the preferred ones cannot meet if the
        // computation ids are distinct and each part fits its 32 bits:
        // then the set of ids in use, a hash per instruction, is not needed.
        let distinct = used.is_empty() && {
            let mut cids: Vec<i64> = self.comp_ids.values().copied().collect();
            cids.extend(self.wrapped.iter().map(|w| w.id));
            let fits = cids.iter().all(|c| (0..1 << 31).contains(c))
                && comps
                    .values()
                    .map(|c| c.order.len())
                    .chain(wrapped_orders.iter().map(Vec::len))
                    .all(|n| n < u32::MAX as usize);
            cids.sort_unstable();
            fits && cids.windows(2).all(|w| w.first() != w.get(1))
        };
        let mut id_for = |cid: i64, j: usize| {
            let preferred = (cid << 32) | (j as i64 + 1);
            match distinct {
                true => preferred,
                false => fresh_id(&mut used, &mut next, preferred),
            }
        };
        for (id, missing) in without {
            let cid = self.comp_ids[&id];
            let c = comps.get_mut(&id).expect("every computation");
            match missing {
                None => {
                    for (j, &i) in c.order.iter().enumerate() {
                        c.ids.set(i, id_for(cid, j));
                    }
                }
                Some(places) => {
                    for j in places {
                        c.ids.set(c.order[j], id_for(cid, j));
                    }
                }
            }
        }
        let wrapped = self
            .wrapped
            .iter()
            .zip(wrapped_orders)
            .map(|(w, order)| {
                let mut ids = LocalIds::new(w.comp.slot_count());
                for (j, &i) in order.iter().enumerate() {
                    ids.set(i, id_for(w.id, j));
                }
                InstrIds {
                    order,
                    ids,
                    order_is_schedule: false,
                }
            })
            .collect();
        ModuleInstrIds { comps, wrapped }
    }

    pub(super) fn scheduled(&self) -> bool {
        self.module.is_scheduled()
    }

    /// For a module whose stack-frame tables are still the ones read from
    /// its proto: each instruction's frame id in the proto's own tables,
    /// per computation in writing order; `None` if one has no such id
    /// (then the IR's tables are written).
    pub(super) fn proto_frame_ids(
        &self,
        f: &ProtoFrames,
        ids: &ModuleInstrIds,
    ) -> Result<Option<Vec<Vec<i32>>>, ProtoError> {
        let mut reverse: FxMap<i64, i32> = FxMap::default();
        for (k, &new) in f.renumbered.iter().enumerate() {
            if new != 0 {
                reverse.entry(new).or_insert(k as i32 + 1);
            }
        }
        let mut out = Vec::new();
        for id in self.comp_order() {
            for (w, w_ids) in self.wrapped.iter().zip(&ids.wrapped) {
                if w.caller == id {
                    out.push(vec![0; w_ids.order.len()]);
                }
            }
            let comp = self.module.comp(id);
            match self.comp_proto_frame_ids(comp, &ids.comps[&id], f, &reverse)? {
                Some(comp_frames) => out.push(comp_frames),
                None => return Ok(None),
            }
        }
        Ok(Some(out))
    }

    /// One computation's [`Writer::proto_frame_ids`]: each instruction's
    /// own where it still names the frame written, else the first proto
    /// frame that was renumbered as it.
    fn comp_proto_frame_ids(
        &self,
        comp: &Computation,
        ids: &InstrIds,
        f: &ProtoFrames,
        reverse: &FxMap<i64, i32>,
    ) -> Result<Option<Vec<i32>>, ProtoError> {
        let mut comp_frames = Vec::with_capacity(ids.order.len());
        for &i in &ids.order {
            let printed = metadata_attr(comp.instr(i)).map_or(0, |md| md.stack_frame_id);
            let orig = comp.proto_frame_id(i).filter(|&o| {
                usize::try_from(o - 1)
                    .ok()
                    .and_then(|k| f.renumbered.get(k))
                    == Some(&i64::from(printed))
            });
            match orig.or_else(|| reverse.get(&i64::from(printed)).copied()) {
                _ if printed == 0 => comp_frames.push(0),
                Some(o) => comp_frames.push(o),
                None => return Ok(None),
            }
        }
        Ok(Some(comp_frames))
    }
}

/// The ids a proto the computation was read from gave its instructions,
/// where no other instruction of the module has them; and the places in
/// `order` of the instructions left without one (`None`: all of them, as
/// in a module read from text, with no list of every place).
fn proto_ids(
    comp: &Computation,
    order: Vec<InstrId>,
    used: &mut FxSet<i64>,
) -> (InstrIds, Option<Vec<usize>>) {
    let mut ids = LocalIds::new(comp.slot_count());
    // Listed from the first id kept on (the places before it, all).
    let mut missing: Option<Vec<usize>> = None;
    for (j, &i) in order.iter().enumerate() {
        match comp.proto_instr_id(i).filter(|&p| used.insert(p)) {
            Some(p) => {
                ids.set(i, p);
                missing.get_or_insert_with(|| (0..j).collect());
            }
            None => {
                if let Some(m) = &mut missing {
                    m.push(j);
                }
            }
        }
    }
    let ids = InstrIds {
        order,
        ids,
        order_is_schedule: false,
    };
    (ids, missing)
}
