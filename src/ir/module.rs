//! An HLO module: computations, the entry, the header and the stack-frame
//! tables; and the one mutation API passes use.

use super::computation::{Computation, SourcePos};
use super::instruction::{Attr, AttrValue, Instruction};
use super::opcode::Opcode;
use super::shape::Shape;
use super::{CompId, InstrId};
use crate::util::{FxMap, FxSet};
use std::sync::{Arc, OnceLock};

/// Instructions from which [`Module::calls_by_computation`] reads on every
/// core.
const PARALLEL_CALL_SCAN: usize = 100_000;

#[derive(Clone, Debug)]
pub struct Module {
    pub name: Box<str>,
    /// Header attributes after the module name, in written order.
    /// `entry_computation_layout` is an [`AttrValue::ProgramShape`].
    pub header: Vec<Attr>,
    comps: Vec<Option<Computation>>,
    /// Computations in print order.
    comp_order: Vec<CompId>,
    entry: Option<CompId>,
    pub stack_frames: Option<StackFrameIndex>,
    /// For a module read from text: where each entry of the tables that
    /// name others was written, so that the verifier's fault in one says
    /// its line.
    pub stack_frame_positions: Option<Arc<StackFramePositions>>,
    /// For a module read from a binary proto: the encoded `HloModuleProto`
    /// fields the IR does not model (`id`, `device_assignment`, the spmd
    /// fields, `profile_info`, ..., and fields of a newer XLA), which the
    /// proto writer writes back.
    pub proto_extras: Option<Arc<[u8]>>,
    /// For a module read from a binary proto whose stack frames the reader
    /// renumbered (as XLA does): the proto's own tables, which the writer
    /// writes back while the tables are still the ones read.
    pub proto_frames: Option<Arc<ProtoFrames>>,
    /// How the module was written; the printer's default.
    pub style: PrintOptions,
    /// Built on first use from every name in the module, so that reading
    /// and printing a module never pays for it.
    names: Option<NameUniquer>,
    /// The computations changed through the mutation API since the last
    /// [`Module::take_changed`], and a mark per computation slot.
    changed: Vec<CompId>,
    changed_mark: Vec<bool>,
    /// [`Module::computation_post_order`], kept until a computation is
    /// handed out for change, added, removed or made the entry: every pass
    /// asks for it, and finding the callees walks every instruction.
    post_order: OnceLock<Vec<CompId>>,
}

/// What the printer prints; [`PrintOptions::default_form`] is what XLA's
/// `ToString()` and `--xla_dump_to` write, [`PrintOptions::short_form`] is
/// `HloPrintOptions::ShortParsable()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrintOptions {
    /// `%` before instruction and computation names.
    pub percent: bool,
    /// `%name (p: f32[]) -> f32[] {` computation headers.
    pub signatures: bool,
    /// `f32[2]{0} %x` in operand lists.
    pub operand_shapes: bool,
    /// `/*index=5*/` every five operands.
    pub operand_index_annotations: bool,
    /// `metadata={...}` attributes.
    pub metadata: bool,
    /// The `FileNames`/.../`StackFrames` tables.
    pub stack_frames: bool,
    /// Print an `entry_computation_layout` derived from the entry
    /// computation when the header has none (XLA always prints one; older
    /// frontends' dumps have none, and a round trip keeps it that way).
    pub derive_entry_layout: bool,
    /// End the text with a blank line, as XLA does (hand-trimmed dumps
    /// end with a single newline, and a round trip keeps that).
    pub trailing_blank_line: bool,
}

impl PrintOptions {
    pub fn default_form() -> PrintOptions {
        PrintOptions {
            percent: true,
            signatures: true,
            operand_shapes: false,
            operand_index_annotations: true,
            metadata: true,
            stack_frames: true,
            derive_entry_layout: true,
            trailing_blank_line: true,
        }
    }

    /// The form of XLA's parser tests (`print_operand_shape(true)`).
    pub fn long_form() -> PrintOptions {
        PrintOptions {
            operand_shapes: true,
            ..PrintOptions::default_form()
        }
    }

    pub fn short_form() -> PrintOptions {
        PrintOptions {
            percent: false,
            signatures: false,
            operand_shapes: false,
            operand_index_annotations: false,
            metadata: false,
            stack_frames: false,
            derive_entry_layout: true,
            trailing_blank_line: true,
        }
    }
}

impl Default for PrintOptions {
    fn default() -> Self {
        PrintOptions::default_form()
    }
}

/// A program shape: `(f32[2]{0}, s32[])->f32[2]{0}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramShape {
    pub parameters: Vec<Shape>,
    pub result: Shape,
}

/// A proto's own stack-frame tables, kept by the reader when it renumbers
/// them ([`Module::proto_frames`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProtoFrames {
    /// The tables as the proto has them.
    pub original: StackFrameIndex,
    /// The tables as the reader renumbered them ([`Module::stack_frames`]).
    pub read_as: StackFrameIndex,
    /// For each proto frame id `f` (at `f - 1`), its renumbered id (0 if
    /// no instruction named it).
    pub renumbered: Box<[i64]>,
}

/// The stack-frame tables JAX writes between the header and the first
/// computation. Ids in the text are 1-based positions in these lists.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StackFrameIndex {
    pub file_names: Vec<Box<str>>,
    pub function_names: Vec<Box<str>>,
    pub file_locations: Vec<FileLocation>,
    pub stack_frames: Vec<StackFrame>,
}

/// Where the text wrote each `FileLocations` and `StackFrames` entry (the
/// entries holding ids): the line and column of its id, by position in
/// its table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StackFramePositions {
    pub file_locations: Vec<SourcePos>,
    pub stack_frames: Vec<SourcePos>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileLocation {
    pub file_name_id: i64,
    pub function_name_id: i64,
    pub line: i64,
    pub end_line: i64,
    pub column: i64,
    pub end_column: i64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StackFrame {
    pub file_location_id: i64,
    /// As the proto has it: 0 for none. The text prints this plus one.
    pub parent_frame_id: i64,
}

/// XLA's `NameUniquer`: a name `base.N` registers N as taken for `base`; a
/// new name takes the smallest free N (none for 0).
#[derive(Clone, Debug, Default)]
pub struct NameUniquer {
    taken: FxSet<Box<str>>,
    next: FxMap<Box<str>, u64>,
}

impl NameUniquer {
    /// Splits `foo.12` into (`foo`, Some(12)).
    fn split(name: &str) -> (&str, Option<u64>) {
        if let Some(dot) = name.rfind('.') {
            let digits = &name[dot + 1..];
            if !digits.is_empty()
                && digits.bytes().all(|b| b.is_ascii_digit())
                && (digits == "0" || !digits.starts_with('0'))
            {
                if let Ok(n) = digits.parse::<u64>() {
                    return (&name[..dot], Some(n));
                }
            }
        }
        (name, None)
    }

    /// Records a name as taken (parsed names keep theirs).
    pub fn register(&mut self, name: &str) {
        self.taken.insert(name.into());
    }

    pub fn is_taken(&self, name: &str) -> bool {
        self.taken.contains(name)
    }

    /// A name not taken yet, derived from `wanted`, and marks it taken.
    pub fn unique(&mut self, wanted: &str) -> Box<str> {
        if !self.taken.contains(wanted) {
            self.register(wanted);
            return wanted.into();
        }
        let (base, _) = Self::split(wanted);
        let mut n = self.next.get(base).copied().unwrap_or(1).max(1);
        loop {
            let candidate = format!("{base}.{n}");
            n += 1;
            if !self.taken.contains(candidate.as_str()) {
                self.next.insert(base.into(), n);
                let candidate: Box<str> = candidate.into();
                self.taken.insert(candidate.clone());
                return candidate;
            }
        }
    }
}

impl Module {
    pub fn new(name: impl Into<Box<str>>) -> Module {
        Module {
            name: name.into(),
            header: Vec::new(),
            comps: Vec::new(),
            comp_order: Vec::new(),
            entry: None,
            stack_frames: None,
            stack_frame_positions: None,
            proto_extras: None,
            proto_frames: None,
            style: PrintOptions::default_form(),
            names: None,
            changed: Vec::new(),
            changed_mark: Vec::new(),
            post_order: OnceLock::new(),
        }
    }

    pub fn entry(&self) -> CompId {
        self.entry.expect("module has an entry computation")
    }

    pub fn entry_opt(&self) -> Option<CompId> {
        self.entry
    }

    pub fn set_entry(&mut self, id: CompId) {
        self.calls_may_have_changed();
        self.entry = Some(id);
    }

    pub fn comp(&self, id: CompId) -> &Computation {
        self.comps[id.index()]
            .as_ref()
            .expect("computation id refers to a removed computation")
    }

    pub fn comp_mut(&mut self, id: CompId) -> &mut Computation {
        self.mark_changed(id);
        self.calls_may_have_changed();
        self.comps[id.index()]
            .as_mut()
            .expect("computation id refers to a removed computation")
    }

    pub fn get_comp(&self, id: CompId) -> Option<&Computation> {
        self.comps.get(id.index())?.as_ref()
    }

    /// Computations in print order.
    pub fn computation_ids(&self) -> impl Iterator<Item = CompId> + '_ {
        self.comp_order
            .iter()
            .copied()
            .filter(|id| self.get_comp(*id).is_some())
    }

    pub fn computations(&self) -> impl Iterator<Item = (CompId, &Computation)> + '_ {
        self.computation_ids().map(|id| (id, self.comp(id)))
    }

    pub fn find_computation(&self, name: &str) -> Option<CompId> {
        self.computations()
            .find(|(_, c)| &*c.name == name)
            .map(|(id, _)| id)
    }

    /// Every computation by name: for finding many, where
    /// [`Module::find_computation`] would read the list once for each.
    pub fn computations_by_name(&self) -> crate::util::FxMap<&str, CompId> {
        self.computations().map(|(id, c)| (&*c.name, id)).collect()
    }

    pub fn instruction_count(&self) -> usize {
        self.computations()
            .map(|(_, c)| c.instruction_count())
            .sum()
    }

    /// Reserves a computation slot (the parser learns names before bodies).
    pub(crate) fn reserve_computation(&mut self) -> CompId {
        self.comps.push(None);
        CompId::new(self.comps.len() - 1)
    }

    /// How many computations have been defined (for [`Self::undefine_since`]).
    pub(crate) fn defined_count(&self) -> usize {
        self.comp_order.len()
    }

    /// Takes back the computations defined after the first `n` (the parser
    /// reads a part of its input again); their slots stay reserved.
    pub(crate) fn undefine_since(&mut self, n: usize) {
        self.calls_may_have_changed();
        for id in self.comp_order.drain(n.min(self.comp_order.len())..) {
            if let Some(slot) = self.comps.get_mut(id.index()) {
                *slot = None;
            }
        }
    }

    /// Fills a reserved slot and puts it last in print order.
    pub(crate) fn define_computation(&mut self, id: CompId, comp: Computation) {
        self.calls_may_have_changed();
        self.comps[id.index()] = Some(comp);
        self.comp_order.push(id);
    }

    /// Takes the defined computations out, in print order (the parser
    /// moves a part of the module read on another thread into the module).
    pub(crate) fn take_defined(&mut self) -> Vec<(CompId, Computation)> {
        self.calls_may_have_changed();
        let order = std::mem::take(&mut self.comp_order);
        order
            .into_iter()
            .filter_map(|id| Some((id, self.comps.get_mut(id.index())?.take()?)))
            .collect()
    }

    /// A copy holding only the computations in `keep`, under the ids they
    /// have here (so the calls between them stay right): a small module
    /// cut from a large one without copying the rest.
    pub fn clone_only(&self, keep: &FxSet<CompId>) -> Module {
        Module {
            name: self.name.clone(),
            header: self.header.clone(),
            comps: self
                .comps
                .iter()
                .enumerate()
                .map(|(i, c)| keep.contains(&CompId::new(i)).then(|| c.clone()).flatten())
                .collect(),
            comp_order: self
                .comp_order
                .iter()
                .copied()
                .filter(|c| keep.contains(c))
                .collect(),
            entry: self.entry.filter(|e| keep.contains(e)),
            stack_frames: self.stack_frames.clone(),
            stack_frame_positions: self.stack_frame_positions.clone(),
            proto_extras: self.proto_extras.clone(),
            proto_frames: self.proto_frames.clone(),
            style: self.style,
            names: None,
            changed: Vec::new(),
            changed_mark: Vec::new(),
            post_order: OnceLock::new(),
        }
    }

    /// Adds a computation, printed before the entry computation.
    pub fn add_computation(&mut self, mut comp: Computation) -> CompId {
        comp.name = self.names_mut().unique(&comp.name);
        let id = CompId::new(self.comps.len());
        self.comps.push(Some(comp));
        self.mark_changed(id);
        self.calls_may_have_changed();
        let at = self
            .comp_order
            .iter()
            .position(|&c| Some(c) == self.entry)
            .unwrap_or(self.comp_order.len());
        self.comp_order.insert(at, id);
        id
    }

    /// Removes computations nothing calls any more (never the entry), in
    /// one pass over the module's order whatever their number.
    pub fn remove_computations(&mut self, ids: &[CompId]) {
        let mut gone = vec![false; self.comps.len()];
        for &id in ids {
            if Some(id) == self.entry {
                continue;
            }
            if let Some(slot) = self.comps.get_mut(id.index()) {
                *slot = None;
                gone[id.index()] = true;
            }
        }
        if gone.contains(&true) {
            self.calls_may_have_changed();
            self.comp_order
                .retain(|&c| !gone.get(c.index()).copied().unwrap_or(false));
        }
    }

    fn mark_changed(&mut self, id: CompId) {
        if self.changed_mark.len() <= id.index() {
            self.changed_mark
                .resize(self.comps.len().max(id.index() + 1), false);
        }
        if !self.changed_mark[id.index()] {
            self.changed_mark[id.index()] = true;
            self.changed.push(id);
        }
    }

    /// The computations changed through the mutation API since the last
    /// call (or since the module was read), still present, in the order
    /// first changed; what [`crate::ir::verify::verify_changed`] checks.
    pub fn take_changed(&mut self) -> Vec<CompId> {
        let mut changed = std::mem::take(&mut self.changed);
        for id in &changed {
            self.changed_mark[id.index()] = false;
        }
        changed.retain(|&id| self.get_comp(id).is_some());
        changed
    }

    /// The module's name uniquer, built from every name in it on first use.
    pub fn names_mut(&mut self) -> &mut NameUniquer {
        if self.names.is_none() {
            let mut n = NameUniquer::default();
            for c in self.comps.iter().flatten() {
                n.register(&c.name);
                for (_, i) in c.instructions() {
                    if !i.name.is_empty() {
                        n.register(&i.name);
                    }
                }
            }
            self.names = Some(n);
        }
        self.names.as_mut().expect("built above")
    }

    /// Adds an instruction to `comp`. An empty name becomes the opcode's
    /// name; a taken name gets XLA's `.N` suffix. Operands must be live
    /// instructions of `comp`.
    pub fn add_instruction(&mut self, comp: CompId, mut instr: Instruction) -> InstrId {
        let wanted: &str = if instr.name.is_empty() {
            instr.opcode.name()
        } else {
            &instr.name
        };
        let wanted = wanted.to_string();
        instr.name = self.names_mut().unique(&wanted).into();
        self.comp_mut(comp).push(instr)
    }

    /// XLA's `ReplaceInstruction`: every use of `old` (and the root) moves
    /// to `new`, then `old` and every operand that became dead through it
    /// are removed. `new` must already be in the computation. As XLA does,
    /// `new` inherits `old`'s metadata, frontend attributes and sharding
    /// where it has none of its own, and `old`'s name when both have the
    /// same opcode (and, for custom calls, the same target).
    pub fn replace_instruction(&mut self, comp: CompId, old: InstrId, new: InstrId) {
        let c = self.comp_mut(comp);
        let (old_instr, new_instr) = (c.instr(old), c.instr(new));
        let inherit_metadata =
            !has_op_name(new_instr.attr("metadata")) && has_op_name(old_instr.attr("metadata"));
        let mut inherited = Vec::new();
        for key in ["sharding", "frontend_attributes", "metadata"] {
            let wanted = if key == "metadata" {
                inherit_metadata
            } else {
                new_instr.attr(key).is_none()
            };
            if let Some(v) = old_instr.attr(key).filter(|_| wanted) {
                inherited.push((key, v.clone()));
            }
        }
        let same_kind = old_instr.opcode == new_instr.opcode
            && (old_instr.opcode != Opcode::CustomCall
                || old_instr.custom_call_target() == new_instr.custom_call_target());
        let old_name = same_kind.then(|| old_instr.name.clone());
        let n = c.instr_mut(new);
        for (key, value) in inherited {
            n.set_generic_attr(key, value);
        }
        c.replace_all_uses(old, new);
        c.remove_with_dead_operands(old);
        if let Some(name) = old_name {
            self.comp_mut(comp).instr_mut(new).name = name;
        }
    }

    /// Removes unreachable instructions everywhere (keeping parameters and
    /// side-effecting instructions). Returns the number removed.
    pub fn remove_dead_code(&mut self) -> usize {
        let ids: Vec<CompId> = self.computation_ids().collect();
        ids.into_iter()
            .map(|id| self.comp_mut(id).remove_dead_code(has_side_effect))
            .sum()
    }

    /// Forgets the computation post order: a change of the entry or of a
    /// computation may change which computations call which.
    fn calls_may_have_changed(&mut self) {
        self.post_order.take();
    }

    /// Every computation, callees before callers (a walk down the calls
    /// from each computation in the module's order).
    pub fn computation_post_order(&self) -> Vec<CompId> {
        self.post_order
            .get_or_init(|| self.find_computation_post_order())
            .clone()
    }

    /// Keeps `order` as the computation post order: what
    /// [`Module::walk_calls`] gave for the calls read elsewhere (the
    /// verifier's), unless one is kept.
    pub(crate) fn remember_post_order(&self, order: Vec<CompId>) {
        let _ = self.post_order.set(order);
    }

    /// Per computation, by index (empty for an undefined one): its calls
    /// in instruction and attribute order, each the calling instruction
    /// and the callee. Read on every core for a large module: it reads
    /// every instruction's attributes.
    pub fn calls_by_computation(&self) -> Vec<Vec<(InstrId, CompId)>> {
        let ids: Vec<CompId> = self.computation_ids().collect();
        let parallel = self.instruction_count() >= PARALLEL_CALL_SCAN;
        let found = crate::util::par_map(
            &ids,
            parallel,
            || (),
            |_, _, &c| {
                let comp = self.comp(c);
                let mut calls = Vec::new();
                for (i, instr) in comp.instructions() {
                    calls.extend(instr.called_computations().map(|callee| (i, callee)));
                }
                calls
            },
        );
        let mut calls = vec![Vec::new(); self.comps.len()];
        for (c, found) in ids.iter().zip(found) {
            calls[c.index()] = found;
        }
        calls
    }

    fn find_computation_post_order(&self) -> Vec<CompId> {
        // A call back into a computation being walked (a cycle, which the
        // verifier refuses) is not followed.
        let walked = self.walk_calls(self.calls_by_computation(), |_, _, _| {
            Ok::<(), std::convert::Infallible>(())
        });
        match walked {
            Ok(order) => order,
            Err(never) => match never {},
        }
    }

    /// The computations, callees before callers, walked depth first from
    /// each in id order along `calls` ([`Module::calls_by_computation`]'s
    /// lists) in their order; a callee that does not exist is left out.
    /// `back_edge(caller, instruction, callee)` is told of each call to a
    /// computation still being walked (a cycle), and may end the walk.
    pub(crate) fn walk_calls<E>(
        &self,
        mut calls: Vec<Vec<(InstrId, CompId)>>,
        mut back_edge: impl FnMut(CompId, InstrId, CompId) -> Result<(), E>,
    ) -> Result<Vec<CompId>, E> {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            Open,
            Done,
        }
        let mut mark = vec![Mark::New; self.comps.len()];
        let mut order = Vec::new();
        let mut calls_of = |c: CompId| {
            calls
                .get_mut(c.index())
                .map(std::mem::take)
                .unwrap_or_default()
        };
        for root in self.computation_ids() {
            if mark.get(root.index()) != Some(&Mark::New) {
                continue;
            }
            // Explicit stack: call graphs can be deep in generated modules.
            // (caller, its calls, the next call to follow)
            type Frame = (CompId, Vec<(InstrId, CompId)>, usize);
            let mut stack: Vec<Frame> = vec![(root, calls_of(root), 0)];
            if let Some(m) = mark.get_mut(root.index()) {
                *m = Mark::Open;
            }
            while let Some(top) = stack.last_mut() {
                let (caller, calls, next) = (top.0, &top.1, top.2);
                let Some(&(instr, callee)) = calls.get(next) else {
                    if let Some(m) = mark.get_mut(caller.index()) {
                        *m = Mark::Done;
                    }
                    if self.get_comp(caller).is_some() {
                        order.push(caller);
                    }
                    stack.pop();
                    continue;
                };
                top.2 += 1;
                match mark.get(callee.index()) {
                    Some(Mark::New) => {
                        if let Some(m) = mark.get_mut(callee.index()) {
                            *m = Mark::Open;
                        }
                        let calls = calls_of(callee);
                        stack.push((callee, calls, 0));
                    }
                    Some(Mark::Open) => back_edge(caller, instr, callee)?,
                    _ => {}
                }
            }
        }
        Ok(order)
    }

    /// The entry computation's program shape, from its parameters and root.
    pub fn derived_entry_layout(&self) -> Option<ProgramShape> {
        let entry = self.get_comp(self.entry?)?;
        let parameters = entry
            .parameters()
            .into_iter()
            .map(|p| Shape::clone(&entry.instr(p).shape))
            .collect();
        let result = Shape::clone(&entry.instr(entry.root_opt()?).shape);
        Some(ProgramShape { parameters, result })
    }

    /// Whether the header says `is_scheduled=true`.
    pub fn is_scheduled(&self) -> bool {
        self.header
            .iter()
            .any(|a| a.key == "is_scheduled" && matches!(a.value, AttrValue::Bool(true)))
    }

    /// The `entry_computation_layout` header attribute, if written.
    pub fn entry_computation_layout(&self) -> Option<&ProgramShape> {
        self.header.iter().find_map(|a| match &a.value {
            AttrValue::ProgramShape(p) if a.key == "entry_computation_layout" => Some(&**p),
            _ => None,
        })
    }
}

/// Whether a `metadata={...}` attribute has a non-empty `op_name`.
fn has_op_name(metadata: Option<&AttrValue>) -> bool {
    match metadata {
        Some(AttrValue::Metadata(m)) => !m.op_name.is_empty(),
        _ => false,
    }
}

/// Instructions dead-code elimination must keep even without users.
pub fn has_side_effect(i: &Instruction) -> bool {
    use Opcode::*;
    match i.opcode {
        Send
        | SendDone
        | Recv
        | RecvDone
        | Outfeed
        | Infeed
        | AfterAll
        | Rng
        | RngGetAndUpdateState
        | AllReduce
        | AllReduceStart
        | AllReduceDone
        | AllGather
        | AllGatherStart
        | AllGatherDone
        | CollectivePermute
        | CollectivePermuteStart
        | CollectivePermuteDone
        | AllToAll
        | ReduceScatter
        | RaggedAllToAll
        | CollectiveBroadcast
        | Parameter => true,
        CustomCall => matches!(
            i.attr("custom_call_has_side_effect"),
            Some(AttrValue::Bool(true))
        ),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_uniquer_takes_smallest_free_suffix() {
        let mut n = NameUniquer::default();
        n.register("constant.65");
        assert_eq!(&*n.unique("constant"), "constant");
        assert_eq!(&*n.unique("constant"), "constant.1");
        n.register("constant.2");
        assert_eq!(&*n.unique("constant"), "constant.3");
        assert_eq!(&*n.unique("constant.65"), "constant.4");
    }

    /// Callees before callers, each once, in the order the calls are
    /// written, when the calls are read on every core.
    #[test]
    fn the_post_order_follows_the_calls_on_a_module_read_on_every_core() {
        // Computation i < 40 calls i - 1 and, every third, i - 2 first;
        // computation 3 calls the leaves 41 and 40 first, in that order.
        // They are written callers first (forward references), the entry
        // first and the leaves last. Enough instructions for the parallel
        // path.
        let comps = 42;
        let per = PARALLEL_CALL_SCAN / comps + 10;
        let callees = |c: usize| match c {
            0 | 40 | 41 => vec![],
            1 => vec![0],
            3 => vec![41, 40, 1, 2],
            _ if c % 3 == 0 => vec![c - 2, c - 1],
            _ => vec![c - 1],
        };
        let text_order: Vec<usize> = (0..40).rev().chain([40, 41]).collect();
        let mut text = String::from("HloModule m\n\n");
        for &c in &text_order {
            let entry = if c == 39 { "ENTRY " } else { "" };
            text += &format!("{entry}c{c} {{\n  c{c}.0 = f32[] parameter(0)\n");
            let mut last = 0;
            for (k, callee) in callees(c).iter().enumerate() {
                text += &format!("  c{c}.k{k} = f32[] call(c{c}.{last}), to_apply=c{callee}\n");
                text += &format!("  c{c}.{} = f32[] negate(c{c}.k{k})\n", last + 1);
                last += 1;
            }
            for i in last + 1..per {
                let root = if i + 1 == per { "ROOT " } else { "" };
                text += &format!("  {root}c{c}.{i} = f32[] negate(c{c}.{})\n", i - 1);
            }
            text += "}\n\n";
        }
        let m = crate::text::parse_module(&text, "m.hlo").unwrap();
        assert!(m.instruction_count() >= PARALLEL_CALL_SCAN);
        // The oracle: depth first from each computation in text order.
        fn visit(
            c: usize,
            callees: &dyn Fn(usize) -> Vec<usize>,
            seen: &mut Vec<bool>,
            out: &mut Vec<String>,
        ) {
            if !std::mem::replace(&mut seen[c], true) {
                for d in callees(c) {
                    visit(d, callees, seen, out);
                }
                out.push(format!("c{c}"));
            }
        }
        let mut expected = Vec::new();
        let mut seen = vec![false; comps];
        for &c in &text_order {
            visit(c, &callees, &mut seen, &mut expected);
        }
        let names: Vec<String> = m
            .computation_post_order()
            .into_iter()
            .map(|c| m.comp(c).name.to_string())
            .collect();
        assert_eq!(names, expected);
        // The calls decide, in their order.
        assert_eq!(expected[..3], ["c41", "c40", "c0"]);
    }
}
