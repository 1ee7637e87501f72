//! A computation: an arena of instructions with a root.
//!
//! Invariants (checked by [`crate::ir::verify`]):
//! - every operand id names a live instruction of the same computation;
//! - `users` of an instruction lists each live instruction that has it as
//!   an operand, once;
//! - the root is set and live.
//!
//! Removed instructions leave a tombstone so ids stay stable.

use super::instruction::Instruction;
use super::opcode::{Opcode, OpcodeSet};
use super::InstrId;

/// Where an instruction was read: the line and column (in characters,
/// both from 1) of its name in the text it was parsed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SourcePos {
    pub line: u32,
    pub column: u32,
}

/// Encoded proto fields this crate does not model, by instruction
/// ([`InstrId`] index, ascending).
pub type ProtoUnknownFields = Box<[(u32, Box<[u8]>)]>;

/// Proto instruction ids: XLA's are `computation << 32 | n`, so one base
/// and 32-bit offsets hold them in half the memory.
#[derive(Clone, Debug)]
enum ProtoInstrIds {
    Near { base: i64, offsets: Box<[u32]> },
    Far(Box<[i64]>),
}

/// The instructions' proto order: most often the order they were read in
/// (XLA writes post order), which needs no list.
#[derive(Clone, Debug)]
enum ProtoOrder {
    AsRead(usize),
    Listed(Box<[u32]>),
}

#[derive(Clone, Debug, Default)]
pub struct Computation {
    pub name: Box<str>,
    instrs: Vec<Option<Instruction>>,
    /// Instructions in the order they were added (the schedule of a
    /// scheduled module); holds tombstoned ids until [`Self::compact_order`].
    sequence: Vec<InstrId>,
    root: Option<InstrId>,
    /// Every opcode ever pushed (removal does not clear a bit), so that a
    /// pass can pass over a computation that cannot hold what it looks
    /// for without walking it. An instruction's opcode is fixed once it is
    /// pushed; the verifier checks that the set still covers them all.
    opcodes: OpcodeSet,
    /// `, execution_thread="..."` after the closing brace.
    pub execution_thread: Option<Box<str>>,
    live: usize,
    /// For a computation read from a binary proto: its id there, which the
    /// proto writer keeps where it is unique.
    pub proto_id: Option<i64>,
    /// For a computation read from a binary proto: the proto id of each
    /// instruction, by [`InstrId`] index (instructions added later have
    /// none); the proto writer keeps them where they are unique.
    proto_instr_ids: Option<ProtoInstrIds>,
    /// For a computation read from a binary proto: its instructions (as
    /// [`InstrId`] indices) in the proto's order, which the writer keeps
    /// while they still are all of them, operands first.
    proto_instr_order: Option<ProtoOrder>,
    /// For a computation read from a binary proto whose stack frames were
    /// renumbered: each instruction's proto `stack_frame_id`, by
    /// [`InstrId`] index.
    proto_frame_ids: Option<Box<[i32]>>,
    /// For a computation read from a binary proto: the instructions (by
    /// [`InstrId`] index, ascending) whose precision config had no operand
    /// precisions, as XLA's passes make it; the text cannot show that.
    proto_bare_precision: Option<Box<[u32]>>,
    /// For a computation read from a binary proto: the encoded fields of
    /// its instructions that this crate does not model (a newer XLA's, and
    /// metadata the text does not show), by [`InstrId`] index, ascending;
    /// the writer writes them back.
    proto_unknown: Option<ProtoUnknownFields>,
    /// For a computation read from a binary proto: its own encoded fields
    /// that this crate does not model.
    proto_unknown_own: Option<Box<[u8]>>,
    /// For a computation read from a binary proto: its position among the
    /// proto's computations.
    pub proto_position: Option<usize>,
    /// For a computation read from text: where each instruction was read,
    /// by [`InstrId`] index (line 0: not read, or no name of its own).
    source_positions: Box<[SourcePos]>,
}

impl Computation {
    pub fn new(name: impl Into<Box<str>>) -> Computation {
        Computation {
            name: name.into(),
            ..Computation::default()
        }
    }

    /// A computation with room for `n` instructions.
    pub fn with_capacity(name: impl Into<Box<str>>, n: usize) -> Computation {
        Computation {
            name: name.into(),
            instrs: Vec::with_capacity(n),
            sequence: Vec::with_capacity(n),
            ..Computation::default()
        }
    }

    /// The proto id instruction `id` was read with, if any.
    pub fn proto_instr_id(&self, id: InstrId) -> Option<i64> {
        match self.proto_instr_ids.as_ref()? {
            ProtoInstrIds::Near { base, offsets } => {
                Some(base + i64::from(*offsets.get(id.index())?))
            }
            ProtoInstrIds::Far(ids) => ids.get(id.index()).copied(),
        }
    }

    /// Sets the proto ids of the instructions, by [`InstrId`] index.
    pub fn set_proto_instr_ids(&mut self, ids: &[i64]) {
        let base = ids.iter().copied().min().unwrap_or(0);
        let near: Option<Box<[u32]>> = ids
            .iter()
            .map(|&i| u32::try_from(i128::from(i) - i128::from(base)).ok())
            .collect();
        self.proto_instr_ids = Some(match near {
            Some(offsets) => ProtoInstrIds::Near { base, offsets },
            None => ProtoInstrIds::Far(ids.into()),
        });
    }

    /// The instructions in the order of the proto they were read from, if
    /// that order is still a valid one: every live instruction once,
    /// operands and control predecessors first.
    pub fn proto_instr_order(&self) -> Option<Vec<InstrId>> {
        let listed: Vec<InstrId> = match self.proto_instr_order.as_ref()? {
            ProtoOrder::AsRead(n) => (0..*n).map(InstrId::new).collect(),
            ProtoOrder::Listed(order) => order.iter().map(|&i| InstrId::new(i as usize)).collect(),
        };
        let order: Vec<InstrId> = listed.into_iter().filter(|&i| self.is_live(i)).collect();
        if order.len() != self.instruction_count() {
            return None;
        }
        let mut placed = vec![false; self.instrs.len()];
        for &i in &order {
            let instr = self.instr(i);
            if placed[i.index()]
                || instr
                    .operands
                    .iter()
                    .chain(instr.control_predecessors.iter())
                    .any(|o| !placed[o.index()])
            {
                return None;
            }
            placed[i.index()] = true;
        }
        Some(order)
    }

    /// Where instruction `id` was read, if it was read from text with a
    /// name of its own.
    pub fn source_pos(&self, id: InstrId) -> Option<SourcePos> {
        self.source_positions
            .get(id.index())
            .copied()
            .filter(|p| p.line > 0)
    }

    /// Sets where the instructions were read, by [`InstrId`] index.
    pub(crate) fn set_source_positions(&mut self, positions: Box<[SourcePos]>) {
        self.source_positions = positions;
    }

    /// How many ids have been given out (removed instructions included).
    pub(crate) fn slot_count(&self) -> usize {
        self.instrs.len()
    }

    /// Every live instruction with its id, in id order.
    pub(crate) fn slots_mut(&mut self) -> impl Iterator<Item = (InstrId, &mut Instruction)> + '_ {
        self.instrs
            .iter_mut()
            .enumerate()
            .filter_map(|(i, x)| Some((InstrId::new(i), x.as_mut()?)))
    }

    /// The proto `stack_frame_id` instruction `id` was read with, if kept.
    pub fn proto_frame_id(&self, id: InstrId) -> Option<i32> {
        self.proto_frame_ids.as_ref()?.get(id.index()).copied()
    }

    /// Sets the proto stack frame ids of the instructions, by [`InstrId`]
    /// index.
    pub fn set_proto_frame_ids(&mut self, ids: Box<[i32]>) {
        self.proto_frame_ids = Some(ids);
    }

    /// Whether instruction `id` was read with a precision config without
    /// operand precisions.
    pub fn proto_bare_precision(&self, id: InstrId) -> bool {
        self.proto_bare_precision
            .as_ref()
            .is_some_and(|ids| ids.binary_search(&(id.index() as u32)).is_ok())
    }

    /// Sets the instructions read with a precision config without operand
    /// precisions ([`InstrId`] indices, ascending).
    pub fn set_proto_bare_precision(&mut self, ids: Box<[u32]>) {
        self.proto_bare_precision = Some(ids);
    }

    /// The encoded proto fields of instruction `id` this crate does not
    /// model, if it was read with any.
    pub fn proto_unknown(&self, id: InstrId) -> &[u8] {
        let Some(all) = &self.proto_unknown else {
            return &[];
        };
        match all.binary_search_by_key(&(id.index() as u32), |e| e.0) {
            Ok(k) => &all[k].1,
            Err(_) => &[],
        }
    }

    /// Sets the instructions' unknown proto fields ([`InstrId`] indices,
    /// ascending).
    pub fn set_proto_unknown(&mut self, fields: ProtoUnknownFields) {
        self.proto_unknown = Some(fields);
    }

    /// The computation's own encoded proto fields this crate does not
    /// model.
    pub fn proto_unknown_own(&self) -> &[u8] {
        self.proto_unknown_own.as_deref().unwrap_or_default()
    }

    pub fn set_proto_unknown_own(&mut self, fields: Box<[u8]>) {
        self.proto_unknown_own = Some(fields);
    }

    /// Whether the computation or any of its instructions was read with
    /// proto fields this crate does not model.
    pub fn has_proto_unknown(&self) -> bool {
        self.proto_unknown.is_some() || self.proto_unknown_own.is_some()
    }

    /// Sets the proto order of the instructions ([`InstrId`] indices).
    pub fn set_proto_instr_order(&mut self, order: Box<[u32]>) {
        let as_read = order.iter().enumerate().all(|(k, &i)| i as usize == k);
        self.proto_instr_order = Some(if as_read {
            ProtoOrder::AsRead(order.len())
        } else {
            ProtoOrder::Listed(order)
        });
    }

    pub fn root(&self) -> InstrId {
        self.root.expect("computation has a root")
    }

    pub fn root_opt(&self) -> Option<InstrId> {
        self.root
    }

    pub fn set_root(&mut self, id: InstrId) {
        self.root = Some(id);
    }

    pub fn instr(&self, id: InstrId) -> &Instruction {
        self.instrs[id.index()]
            .as_ref()
            .expect("instruction id refers to a removed instruction")
    }

    pub fn instr_mut(&mut self, id: InstrId) -> &mut Instruction {
        self.instrs[id.index()]
            .as_mut()
            .expect("instruction id refers to a removed instruction")
    }

    /// False when no instruction of `op` is in this computation; true
    /// when one may be (one was added, perhaps since removed).
    pub fn may_contain(&self, op: Opcode) -> bool {
        self.opcodes.contains(op)
    }

    pub fn get(&self, id: InstrId) -> Option<&Instruction> {
        self.instrs.get(id.index())?.as_ref()
    }

    pub(crate) fn get_mut(&mut self, id: InstrId) -> Option<&mut Instruction> {
        self.instrs.get_mut(id.index())?.as_mut()
    }

    pub fn is_live(&self, id: InstrId) -> bool {
        self.get(id).is_some()
    }

    pub fn instruction_count(&self) -> usize {
        self.live
    }

    /// Live instructions in insertion order.
    pub fn sequence(&self) -> impl Iterator<Item = InstrId> + '_ {
        self.sequence.iter().copied().filter(|&id| self.is_live(id))
    }

    /// Live instructions with their ids, in insertion order.
    pub fn instructions(&self) -> impl Iterator<Item = (InstrId, &Instruction)> + '_ {
        self.sequence().map(|id| (id, self.instr(id)))
    }

    /// Parameters by parameter number.
    pub fn parameters(&self) -> Vec<InstrId> {
        let mut params: Vec<(i64, InstrId)> = self
            .instructions()
            .filter_map(|(id, i)| i.parameter_number().map(|n| (n, id)))
            .collect();
        params.sort_unstable();
        params.into_iter().map(|(_, id)| id).collect()
    }

    pub fn find(&self, name: &str) -> Option<InstrId> {
        self.instructions()
            .find(|(_, i)| &*i.name == name)
            .map(|(id, _)| id)
    }

    /// Adds an instruction whose operand ids are already in this computation
    /// and registers it as a user of each. Naming is the module's job: call
    /// [`crate::ir::Module::add_instruction`] unless the name is known unique.
    pub fn push(&mut self, instr: Instruction) -> InstrId {
        let id = InstrId::new(self.instrs.len());
        for &op in instr
            .operands
            .iter()
            .chain(instr.control_predecessors.iter())
        {
            // `id` is new: it is in a user list only if an earlier operand
            // slot named the same instruction.
            let users = &mut self.instr_mut(op).users;
            if users.last() != Some(&id) {
                users.push(id);
            }
        }
        self.opcodes.insert(instr.opcode);
        self.instrs.push(Some(instr));
        self.sequence.push(id);
        self.live += 1;
        id
    }

    /// Points operand `index` of `user` at `new`, keeping user lists right.
    pub fn set_operand(&mut self, user: InstrId, index: usize, new: InstrId) {
        let old = self.instr(user).operands[index];
        if old == new {
            return;
        }
        self.instr_mut(user).operands[index] = new;
        self.unlink_if_unused(old, user);
        let users = &mut self.instr_mut(new).users;
        if !users.contains(&user) {
            users.push(user);
        }
    }

    /// Removes operand `index` of `user` (a tuple or call losing an
    /// element), keeping user lists right. The caller fixes the shape.
    pub fn remove_operand(&mut self, user: InstrId, index: usize) {
        let old = self.instr_mut(user).operands.remove(index);
        self.unlink_if_unused(old, user);
    }

    /// Drops `user` from `operand`'s users if it no longer refers to it.
    fn unlink_if_unused(&mut self, operand: InstrId, user: InstrId) {
        let u = self.instr(user);
        if u.operands.contains(&operand) || u.control_predecessors.contains(&operand) {
            return;
        }
        let users = &mut self.instr_mut(operand).users;
        if let Some(pos) = users.iter().position(|&x| x == user) {
            users.remove(pos);
        }
    }

    /// Makes every user of `old` use `new` instead; the root moves too.
    /// Returns whether anything changed.
    pub fn replace_all_uses(&mut self, old: InstrId, new: InstrId) -> bool {
        if old == new {
            return false;
        }
        let users = std::mem::take(&mut self.instr_mut(old).users);
        let mut changed = !users.is_empty();
        for user in users {
            if user == new {
                // `new` uses `old` itself (e.g. a wrapper): keep that edge.
                self.instr_mut(old).users.push(user);
                continue;
            }
            let u = self.instr_mut(user);
            for op in u
                .operands
                .iter_mut()
                .chain(u.control_predecessors.iter_mut())
            {
                if *op == old {
                    *op = new;
                }
            }
            let new_users = &mut self.instr_mut(new).users;
            if !new_users.contains(&user) {
                new_users.push(user);
            }
        }
        if self.root == Some(old) {
            self.root = Some(new);
            changed = true;
        }
        changed
    }

    /// Removes an instruction that has no users and is not the root, then
    /// every operand that became dead through it (XLA's
    /// `RemoveInstructionAndUnusedOperands`). Parameters are never removed.
    /// Returns the number of instructions removed.
    pub fn remove_with_dead_operands(&mut self, id: InstrId) -> usize {
        let mut removed = 0;
        let mut stack = vec![id];
        while let Some(id) = stack.pop() {
            let Some(instr) = self.get(id) else { continue };
            if !instr.users.is_empty()
                || self.root == Some(id)
                || instr.parameter_number().is_some()
            {
                continue;
            }
            let instr = self.instrs[id.index()].take().expect("checked live above");
            self.live -= 1;
            removed += 1;
            let mut seen: Vec<InstrId> = Vec::new();
            for &op in instr
                .operands
                .iter()
                .chain(instr.control_predecessors.iter())
            {
                if seen.contains(&op) {
                    continue;
                }
                seen.push(op);
                let users = &mut self.instr_mut(op).users;
                users.retain(|u| *u != id);
                if users.is_empty() {
                    stack.push(op);
                }
            }
        }
        removed
    }

    /// Removes a parameter nothing uses. The caller renumbers the others
    /// and drops the matching operand at every call site.
    pub fn remove_unused_parameter(&mut self, id: InstrId) {
        let unused = self
            .get(id)
            .is_some_and(|i| i.parameter_number().is_some() && i.users.is_empty());
        if unused && self.root != Some(id) {
            self.instrs[id.index()] = None;
            self.live -= 1;
        }
    }

    /// Removes every instruction not reachable from the root, except
    /// parameters and instructions with side effects. Returns the count.
    pub fn remove_dead_code(&mut self, keep: impl Fn(&Instruction) -> bool) -> usize {
        let candidates: Vec<InstrId> = self
            .instructions()
            .filter(|(id, i)| i.users.is_empty() && Some(*id) != self.root && !keep(i))
            .map(|(id, _)| id)
            .collect();
        candidates
            .into_iter()
            .map(|id| self.remove_with_dead_operands(id))
            .sum()
    }

    /// Gives back the arena's spare capacity (the parser calls it once a
    /// computation is complete; a large module has thousands).
    pub fn shrink_to_fit(&mut self) {
        self.instrs.shrink_to_fit();
        self.sequence.shrink_to_fit();
    }

    /// Drops tombstoned ids from the insertion sequence.
    pub fn compact_order(&mut self) {
        let instrs = &self.instrs;
        self.sequence
            .retain(|id| instrs.get(id.index()).is_some_and(Option::is_some));
    }

    /// The schedule of an `is_scheduled=true` module: the insertion
    /// sequence (the order the module was read in, then what passes added),
    /// with every instruction that comes after one of its users moved to
    /// just before its first user in the sequence, its own operands (and
    /// control predecessors) in turn before it. So an instruction a pass
    /// adds and makes an operand is scheduled where it is first needed,
    /// and a valid schedule is returned unchanged. This is the only place
    /// the schedule is derived: the printer and the proto writer both use
    /// it, whatever pass made the change.
    pub fn schedule(&self) -> Vec<InstrId> {
        let mut placed = vec![false; self.instrs.len()];
        // Most sequences are a valid schedule already: checked in one
        // pass, which costs half the walk below.
        let mut order = Vec::with_capacity(self.live);
        for id in self.sequence() {
            let instr = self.instr(id);
            let mut before = instr
                .control_predecessors
                .iter()
                .chain(instr.operands.iter());
            if placed[id.index()] || !before.all(|op| placed[op.index()]) {
                order.clear();
                placed.fill(false);
                break;
            }
            placed[id.index()] = true;
            order.push(id);
        }
        if !order.is_empty() || self.live == 0 {
            return order;
        }
        self.schedule_by_walk(placed)
    }

    /// [`Self::schedule`] when the sequence is not a valid schedule;
    /// `placed` all false.
    fn schedule_by_walk(&self, mut placed: Vec<bool>) -> Vec<InstrId> {
        let mut open = vec![false; self.instrs.len()];
        let mut order = Vec::with_capacity(self.live);
        // (instruction, whether its operands have been pushed)
        let mut stack: Vec<(InstrId, bool)> = Vec::new();
        for start in self.sequence() {
            if placed[start.index()] {
                continue;
            }
            stack.push((start, false));
            while let Some((id, expanded)) = stack.pop() {
                if placed[id.index()] {
                    continue;
                }
                if expanded {
                    placed[id.index()] = true;
                    order.push(id);
                    continue;
                }
                if open[id.index()] {
                    continue;
                }
                open[id.index()] = true;
                stack.push((id, true));
                let Some(instr) = self.get(id) else { continue };
                // Pushed in reverse so that they are placed first to last;
                // an operand on the way (a cycle, invalid input) is skipped.
                for &op in instr
                    .control_predecessors
                    .iter()
                    .chain(instr.operands.iter())
                    .rev()
                {
                    if !placed[op.index()] && !open[op.index()] {
                        stack.push((op, false));
                    }
                }
            }
        }
        order
    }

    /// XLA's `MakeInstructionPostOrder`: a depth-first post-order started
    /// from every instruction without users, in insertion order; operands
    /// are visited first to last, control predecessors before operands.
    pub fn post_order(&self) -> Vec<InstrId> {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            Visiting,
            Done,
        }
        let mut mark = vec![Mark::New; self.instrs.len()];
        let mut order = Vec::with_capacity(self.live);
        let mut stack: Vec<InstrId> = Vec::new();
        for start in self.sequence() {
            if !self.instr(start).users.is_empty() || mark[start.index()] != Mark::New {
                continue;
            }
            stack.push(start);
            while let Some(&current) = stack.last() {
                match mark[current.index()] {
                    Mark::Done => {
                        stack.pop();
                    }
                    Mark::Visiting => {
                        mark[current.index()] = Mark::Done;
                        order.push(current);
                        stack.pop();
                    }
                    Mark::New => {
                        mark[current.index()] = Mark::Visiting;
                        let instr = self.instr(current);
                        for &op in instr.operands.iter().rev() {
                            if mark[op.index()] == Mark::New {
                                stack.push(op);
                            }
                        }
                        for &op in instr.control_predecessors.iter().rev() {
                            if mark[op.index()] == Mark::New {
                                stack.push(op);
                            }
                        }
                    }
                }
            }
        }
        // Instructions only reachable through a cycle (invalid input) still
        // get printed, after the rest.
        if order.len() < self.live {
            for id in self.sequence() {
                if mark[id.index()] != Mark::Done {
                    order.push(id);
                }
            }
        }
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proto_instr_ids_read_back_near_or_far() {
        let mut c = Computation::new("c");
        let xla = [7 << 32 | 5, 7 << 32 | 1, 7 << 32 | 9];
        c.set_proto_instr_ids(&xla);
        assert!(matches!(
            c.proto_instr_ids,
            Some(ProtoInstrIds::Near { .. })
        ));
        let far = [i64::MIN, 0, i64::MAX];
        let mut d = Computation::new("d");
        d.set_proto_instr_ids(&far);
        assert!(matches!(d.proto_instr_ids, Some(ProtoInstrIds::Far(_))));
        for (comp, ids) in [(&c, &xla[..]), (&d, &far[..])] {
            for (i, &want) in ids.iter().enumerate() {
                assert_eq!(comp.proto_instr_id(InstrId::new(i)), Some(want));
            }
            assert_eq!(comp.proto_instr_id(InstrId::new(3)), None);
        }
    }

    /// A valid sequence is the schedule as it is; an instruction added
    /// after its user goes just before it, its own operands first.
    #[test]
    fn the_schedule_moves_only_what_comes_after_its_user() {
        use crate::ir::{Opcode, PrimitiveType, Shape};
        let f32 = || Shape::scalar(PrimitiveType::F32);
        let mut c = Computation::new("c");
        let p0 = c.push(Instruction::new("p0", Opcode::Parameter, f32()));
        let p1 = c.push(Instruction::new("p1", Opcode::Parameter, f32()));
        let add = c.push(Instruction::new("add", Opcode::Add, f32()).with_operands([p0, p1]));
        let neg = c.push(Instruction::new("neg", Opcode::Negate, f32()).with_operands([add]));
        assert_eq!(c.schedule(), [p0, p1, add, neg]);
        // Added last, made an operand of `add`, with an operand of its own
        // added after it.
        let exp = c.push(Instruction::new("exp", Opcode::Exp, f32()).with_operands([p1]));
        let abs = c.push(Instruction::new("abs", Opcode::Abs, f32()).with_operands([p0]));
        c.set_operand(add, 1, exp);
        c.set_operand(exp, 0, abs);
        assert_eq!(c.schedule(), [p0, p1, abs, exp, add, neg]);
    }

    /// The instruction arena is most of a module's memory (a 528k
    /// instruction module: 80 MB of 130).
    #[test]
    fn an_instruction_stays_small() {
        assert!(std::mem::size_of::<Instruction>() <= 152);
        assert_eq!(
            std::mem::size_of::<crate::ir::instruction::ControlList>(),
            8
        );
    }
}
