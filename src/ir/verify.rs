//! The IR verifier: run after parsing (text or proto: one verifier for both
//! fronts) and after every pass.
//!
//! It checks the invariants the rest of the code assumes: operands defined,
//! user lists exact, names unique and spellable in the text, roots set,
//! called computations present and the call graph free of cycles, operand
//! counts and required attributes as XLA's parser has them, every dimension
//! number and index an attribute holds in range of the rank it indexes,
//! layouts of the rank of their shapes, the stack-frame tables and the ids
//! that point into them, the `entry_computation_layout` against the entry's
//! signature, and the shapes of the common ops. Passes, the printer, the
//! proto writer and the interpreter rely on all of it.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::instruction::AttrValue;
use super::module::StackFrame;
use super::{CompId, Computation, InstrId, Instruction, Module, Opcode, Shape, SourcePos};
use crate::util::{par_map, runs_by_weight, FxSet};
use std::fmt;
use std::hash::BuildHasher;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyError {
    pub computation: String,
    pub instruction: Option<String>,
    pub message: String,
    /// Where the instruction was read, when the module was parsed.
    pub pos: Option<SourcePos>,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.instruction {
            None if self.computation.is_empty() => f.write_str(&self.message),
            Some(i) => write!(
                f,
                "in computation {}, instruction {}: {}",
                self.computation, i, self.message
            ),
            None => write!(f, "in computation {}: {}", self.computation, self.message),
        }
    }
}

impl std::error::Error for VerifyError {}

/// Checks every invariant; returns the first fault found.
pub fn verify(module: &Module) -> Result<(), VerifyError> {
    verify_computations(module, |_| true)
}

/// [`verify`] of a module whose computations other than `changed` are as
/// they were when it last passed: the module as a whole (its header, the
/// computation names, the call graph, the stack frames, the entry
/// signature) is checked again, the instructions only of `changed`, and
/// their names are unique among themselves (the passes name what they add
/// through the module's name uniquer, which knows every name). What a
/// pipeline runs after each pass ([`Module::take_changed`]).
pub fn verify_changed(module: &Module, changed: &[CompId]) -> Result<(), VerifyError> {
    verify_computations(module, |c| changed.contains(&c))
}

fn verify_computations(module: &Module, check: impl Fn(CompId) -> bool) -> Result<(), VerifyError> {
    let checked: Vec<(CompId, &Computation)> = module
        .computations()
        .filter(|&(cid, _)| check(cid))
        .collect();
    // Found to hold on the fast path, the instructions are not checked
    // again below; otherwise they are, in order, for the first fault.
    let in_order = !instructions_hold(module, &checked);
    check_module_header(module)?;
    let mut names = match in_order {
        true => Some(SeenNames::new(
            checked.iter().map(|(_, c)| c.instruction_count()).sum(),
        )),
        false => None,
    };
    let mut comp_names: FxSet<&str> = FxSet::default();
    for (cid, comp) in module.computations() {
        check_computation_name(&mut comp_names, comp)?;
        if let (Some(names), true) = (&mut names, check(cid)) {
            check_computation(module, cid, comp, &mut Checks::InOrder(names))?;
        }
    }
    check_module_whole(module)
}

/// The checks of the module as a whole that come after its computations.
fn check_module_whole(module: &Module) -> Result<(), VerifyError> {
    check_call_graph(module)?;
    check_stack_frames(module)?;
    check_entry_layout(module)?;
    Ok(())
}

/// Instructions checked on one thread at the least.
const INSTRUCTIONS_PER_THREAD: usize = 50_000;

/// Whether every instruction of `checked` holds and their names are
/// unique: the fast path, on several threads for a large module, each
/// over a run of computations in order. `false` says "not known"; the
/// caller then checks in order, on one thread, and so reports the same
/// first fault, with its message, whatever the number of threads.
fn instructions_hold(module: &Module, checked: &[(CompId, &Computation)]) -> bool {
    let total: usize = checked.iter().map(|(_, c)| c.instruction_count()).sum();
    let threads = crate::util::cores()
        .min(total / INSTRUCTIONS_PER_THREAD)
        .clamp(1, 16);
    // Contiguous runs of about equal instruction counts.
    let runs = runs_by_weight(checked, total.div_ceil(threads).max(1), |(_, c)| {
        c.instruction_count()
    });
    let seen = par_map(
        &runs,
        runs.len() > 1,
        || (),
        |_, _, run| {
            let mut hashes =
                Vec::with_capacity(run.iter().map(|(_, c)| c.instruction_count()).sum());
            let mut links = LinkCheck::default();
            for &(cid, comp) in *run {
                let mut checks = Checks::Fast {
                    hashes: &mut hashes,
                    links: &mut links,
                };
                check_computation(module, cid, comp, &mut checks).ok()?;
            }
            hashes.sort_unstable();
            let unique = hashes.windows(2).all(|w| w.first() != w.get(1));
            unique.then_some(hashes)
        },
    );
    let Some(seen) = seen.into_iter().collect::<Option<Vec<_>>>() else {
        return false;
    };
    // A name hash in two runs may be a name in two computations.
    seen.iter().enumerate().all(|(i, hashes)| {
        seen.iter()
            .skip(i + 1)
            .all(|later| !share_an_element(hashes, later))
    })
}

/// Whether two ascending lists have an element in common.
fn share_an_element(a: &[u64], b: &[u64]) -> bool {
    let (mut a, mut b) = (a.iter().peekable(), b.iter().peekable());
    while let (Some(&&x), Some(&&y)) = (a.peek(), b.peek()) {
        match x.cmp(&y) {
            std::cmp::Ordering::Less => _ = a.next(),
            std::cmp::Ordering::Greater => _ = b.next(),
            std::cmp::Ordering::Equal => return true,
        }
    }
    false
}

/// A fault of the module as a whole.
fn module_error(message: String) -> VerifyError {
    VerifyError {
        computation: String::new(),
        instruction: None,
        message,
        pos: None,
    }
}

/// A fault of `comp`, or of its instruction `instr` (with where it was
/// read).
fn comp_error(comp: &Computation, instr: Option<InstrId>, message: String) -> VerifyError {
    VerifyError {
        computation: comp.name.to_string(),
        instruction: instr.and_then(|i| comp.get(i)).map(|i| i.name.to_string()),
        message,
        pos: instr.and_then(|i| comp.source_pos(i)),
    }
}

/// The module has an entry computation, and a name the text can spell.
fn check_module_header(module: &Module) -> Result<(), VerifyError> {
    let Some(entry) = module.entry_opt() else {
        return Err(module_error("module has no entry computation".into()));
    };
    if module.get_comp(entry).is_none() {
        return Err(module_error("entry computation does not exist".into()));
    }
    check_name(&module.name, false)
        .map_err(|m| module_error(format!("module name {:?}: {m}", module.name)))
}

/// A computation's name is unique in the module and one the text can
/// spell.
fn check_computation_name<'m>(
    seen: &mut FxSet<&'m str>,
    comp: &'m Computation,
) -> Result<(), VerifyError> {
    if !seen.insert(&comp.name) {
        return Err(comp_error(
            comp,
            None,
            format!("computation name {} is not unique in the module", comp.name),
        ));
    }
    check_name(&comp.name, true).map_err(|m| VerifyError {
        computation: format!("{:?}", &*comp.name),
        ..module_error(format!("computation name {:?}: {m}", comp.name))
    })
}

/// The instruction names seen so far in the module, by their hashes: half
/// the memory of the names' set on a million-instruction module. A hash
/// seen again is a name seen again, or (once in 2^64) not: the names
/// before tell. Hashed by foldhash's quality variant: names of a large
/// module differ in a digit or two, and a weak hash would send thousands
/// of them down that slow path.
struct SeenNames {
    hashes: FxSet<u64>,
}

const NAME_HASHER: foldhash::quality::FixedState = foldhash::quality::FixedState::with_seed(0);

impl SeenNames {
    fn new(capacity: usize) -> SeenNames {
        let mut hashes: FxSet<u64> = FxSet::default();
        hashes.reserve(capacity);
        SeenNames { hashes }
    }

    /// Records `name` of instruction `id` of `cid`; whether an instruction
    /// before it was named so.
    fn seen_before(&mut self, module: &Module, cid: CompId, id: InstrId, name: &str) -> bool {
        !self.hashes.insert(NAME_HASHER.hash_one(name)) && named_before(module, cid, id, name)
    }
}

/// How a computation's instructions are checked.
enum Checks<'a> {
    /// Each instruction whole, in order, so that the first fault is
    /// reported with its message.
    InOrder(&'a mut SeenNames),
    /// Only whether they all hold, at less cost: the names' hashes are
    /// collected for one sort at the end instead of a set each name goes
    /// into, and the operand and user lists are compared all at once
    /// ([`LinkCheck`]) instead of each operand's user list searched.
    Fast {
        hashes: &'a mut Vec<u64>,
        links: &'a mut LinkCheck,
    },
}

/// One computation: its root, its instructions, and its parameter numbers
/// (0..n-1).
fn check_computation(
    module: &Module,
    cid: CompId,
    comp: &Computation,
    checks: &mut Checks<'_>,
) -> Result<(), VerifyError> {
    match comp.root_opt() {
        None => return Err(comp_error(comp, None, "computation has no root".into())),
        Some(r) if !comp.is_live(r) => {
            return Err(comp_error(
                comp,
                None,
                "root instruction was removed".into(),
            ))
        }
        _ => {}
    }
    let mut param_numbers = FxSet::default();
    for (id, instr) in comp.instructions() {
        match checks {
            Checks::InOrder(names) => {
                check_instruction_name(module, cid, comp, id, instr, names)?;
                check_links(comp, id, instr).map_err(|m| comp_error(comp, Some(id), m))?;
            }
            Checks::Fast { hashes, .. } => {
                check_name(&instr.name, false).map_err(|m| comp_error(comp, Some(id), m))?;
                hashes.push(NAME_HASHER.hash_one(&*instr.name));
                // The checks below read the operands; whether they list
                // their users is for `links` to tell.
                let mut links = instr.operands().iter().chain(instr.control_predecessors());
                if links.any(|&op| !comp.is_live(op)) {
                    let m = "an operand or control predecessor is not an instruction of this \
                             computation";
                    return Err(comp_error(comp, Some(id), m.into()));
                }
            }
        }
        check_instruction(module, cid, comp, id, instr, &mut param_numbers)
            .map_err(|m| comp_error(comp, Some(id), m))?;
    }
    if let Checks::Fast { links, .. } = checks {
        if !links.hold(comp) {
            return Err(comp_error(
                comp,
                None,
                "its operand and user lists disagree".into(),
            ));
        }
    }
    for n in 0..param_numbers.len() as i64 {
        if !param_numbers.contains(&n) {
            return Err(comp_error(
                comp,
                None,
                format!("parameter numbers are not contiguous: {n} is missing"),
            ));
        }
    }
    Ok(())
}

/// Whether a computation's operand and user lists agree as
/// [`check_links`] has it, found in time linear in the lists' lengths:
/// the operand lists are turned around into the users each instruction
/// should list, which are then compared with the lists as sets. Searching
/// each operand's user list is quadratic in an instruction's users (a
/// parameter or constant can have thousands) and reads every operand.
#[derive(Default)]
struct LinkCheck {
    /// Per instruction index: where its expected users start in `expected`
    /// (then, while filling, where the next one goes).
    start: Vec<u32>,
    expected: Vec<u32>,
    /// Per instruction index, the last instruction that marked it
    /// (`2 * index + 1` for "expected user of it", `+ 2` for "also listed").
    mark: Vec<u32>,
}

impl LinkCheck {
    fn hold(&mut self, comp: &Computation) -> bool {
        let n = comp.slot_count();
        // Positions are u32 with `u32::MAX` kept as "not seen".
        if u32::try_from(2 * n + 2).is_err() {
            return false;
        }
        let live = |id: InstrId| comp.is_live(id);
        self.start.clear();
        self.start.resize(n + 1, 0);
        self.mark.clear();
        self.mark.resize(n, u32::MAX);
        // Each instruction's distinct operands and control predecessors,
        // counted per operand; `mark[o] == i` says `o` was seen for `i`.
        let mut edges = 0usize;
        for (id, instr) in comp.instructions() {
            let i = id.index() as u32;
            for &op in instr.operands().iter().chain(instr.control_predecessors()) {
                if !live(op) {
                    return false;
                }
                let (Some(m), Some(c)) = (
                    self.mark.get_mut(op.index()),
                    self.start.get_mut(op.index() + 1),
                ) else {
                    return false;
                };
                if *m != i {
                    *m = i;
                    *c += 1;
                    edges += 1;
                }
            }
        }
        // The running counts below are u32 too.
        if u32::try_from(edges).is_err() {
            return false;
        }
        for k in 1..=n {
            let before = self.start.get(k - 1).copied().unwrap_or(0);
            if let Some(c) = self.start.get_mut(k) {
                *c += before;
            }
        }
        self.expected.clear();
        self.expected.resize(edges, 0);
        self.mark.fill(u32::MAX);
        for (id, instr) in comp.instructions() {
            let i = id.index() as u32;
            for &op in instr.operands().iter().chain(instr.control_predecessors()) {
                let Some(m) = self.mark.get_mut(op.index()) else {
                    return false;
                };
                if *m == i {
                    continue;
                }
                *m = i;
                let Some(next) = self.start.get_mut(op.index()) else {
                    return false;
                };
                let Some(slot) = self.expected.get_mut(*next as usize) else {
                    return false;
                };
                *slot = i;
                *next += 1;
            }
        }
        // Filling moved each start to the next one's: instruction `o`'s
        // expected users now end at `start[o]` and begin at `start[o - 1]`.
        self.mark.fill(u32::MAX);
        for (id, instr) in comp.instructions() {
            let o = id.index();
            let end = self.start.get(o).copied().unwrap_or(0) as usize;
            let begin = match o {
                0 => 0,
                _ => self.start.get(o - 1).copied().unwrap_or(0) as usize,
            };
            let Some(expected) = self.expected.get(begin..end) else {
                return false;
            };
            let users = instr.users();
            if users.len() != expected.len() {
                return false;
            }
            let (expected_mark, listed_mark) = (2 * o as u32 + 1, 2 * o as u32 + 2);
            for &u in expected {
                if let Some(m) = self.mark.get_mut(u as usize) {
                    *m = expected_mark;
                }
            }
            for &u in users {
                match self.mark.get_mut(u.index()) {
                    Some(m) if *m == expected_mark && live(u) => *m = listed_mark,
                    _ => return false,
                }
            }
        }
        true
    }
}

/// An instruction's name is one the text can spell, and unique in the
/// module.
fn check_instruction_name(
    module: &Module,
    cid: CompId,
    comp: &Computation,
    id: InstrId,
    instr: &Instruction,
    names: &mut SeenNames,
) -> Result<(), VerifyError> {
    if let Err(m) = check_name(&instr.name, false) {
        return Err(VerifyError {
            instruction: Some(format!("{:?}", instr.name.as_str())),
            ..comp_error(
                comp,
                None,
                format!("instruction name {:?}: {m}", instr.name.as_str()),
            )
        });
    }
    if names.seen_before(module, cid, id, &instr.name) {
        return Err(comp_error(
            comp,
            Some(id),
            format!(
                "instruction name {} is not unique in the module",
                instr.name
            ),
        ));
    }
    Ok(())
}

/// Every check of one instruction but its name's; a parameter's number is
/// added to `param_numbers`.
fn check_instruction(
    module: &Module,
    cid: CompId,
    comp: &Computation,
    id: InstrId,
    instr: &Instruction,
    param_numbers: &mut FxSet<i64>,
) -> Result<(), String> {
    if instr
        .called_computations()
        .any(|c| module.get_comp(c).is_none())
    {
        return Err("calls a computation that does not exist".into());
    }
    if let Some(n) = instr.parameter_number() {
        if !param_numbers.insert(n) {
            return Err(format!("duplicate parameter number {n}"));
        }
    }
    check_layouts(&instr.shape)?;
    check_attribute_layouts(instr)?;
    check_shape(module, cid, id)?;
    check_operands_and_attrs(module, cid, id)?;
    check_dimension_numbers(comp, instr)?;
    check_frame_ref(module, instr)?;
    if !comp.may_contain(instr.opcode) {
        return Err(
            "its opcode was changed in place: the computation's opcode set does not \
                    hold it (replace the instruction instead)"
                .into(),
        );
    }
    Ok(())
}

/// The operand and user lists agree: each operand (and control
/// predecessor) lists the instruction as a user, and each user, listed
/// once, uses it.
fn check_links(comp: &Computation, id: InstrId, instr: &Instruction) -> Result<(), String> {
    for (i, &op) in instr
        .operands()
        .iter()
        .chain(instr.control_predecessors())
        .enumerate()
    {
        let Some(o) = comp.get(op) else {
            return Err(format!(
                "operand {i} is not an instruction of this computation"
            ));
        };
        if !o.users().contains(&id) {
            return Err(format!("operand {} does not list it as a user", o.name));
        }
    }
    for &u in instr.users() {
        let Some(user) = comp.get(u) else {
            return Err("a user was removed but is still listed".into());
        };
        if !user.operands().contains(&id) && !user.control_predecessors().contains(&id) {
            return Err(format!(
                "{} is listed as a user but does not use it",
                user.name
            ));
        }
    }
    if has_duplicate(instr.users()) {
        return Err("a user is listed twice".into());
    }
    Ok(())
}

/// Whether an id is listed twice; without allocating for the short lists
/// almost every instruction has.
fn has_duplicate(ids: &[InstrId]) -> bool {
    const SHORT: usize = 16;
    if ids.len() <= SHORT {
        return ids
            .iter()
            .enumerate()
            .any(|(i, id)| ids.iter().take(i).any(|x| x == id));
    }
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.windows(2).any(|w| w.first() == w.get(1))
}

/// Whether an instruction before `id` of `cid`, in the verifier's order,
/// is named `name`.
fn named_before(module: &Module, cid: CompId, id: InstrId, name: &str) -> bool {
    for (c, comp) in module.computations() {
        for (i, instr) in comp.instructions() {
            if (c, i) == (cid, id) {
                return false;
            }
            if &*instr.name == name {
                return true;
            }
        }
    }
    false
}

/// The operands of an instruction being checked.
#[derive(Clone, Copy)]
struct Operands<'a> {
    comp: &'a Computation,
    instr: &'a Instruction,
}

impl<'a> Operands<'a> {
    /// The shape of operand `i`, which the op expects.
    fn shape(self, i: usize) -> Result<&'a Shape, String> {
        self.instr
            .operands()
            .get(i)
            .map(|&o| &*self.comp.instr(o).shape)
            .ok_or_else(|| format!("{} expects operand {i}", self.instr.opcode))
    }

    /// The shape of operand `i`, if there is one.
    fn get(self, i: usize) -> Option<&'a Shape> {
        self.instr
            .operands()
            .get(i)
            .and_then(|&o| self.comp.get(o))
            .map(|o| &*o.shape)
    }

    /// The rank of operand `i` (0 if there is none).
    fn rank(self, i: usize) -> usize {
        self.get(i).map_or(0, Shape::rank)
    }
}

fn same_dims(a: &Shape, b: &Shape) -> bool {
    a.dims() == b.dims()
}

/// Shape rules of the common ops.
fn check_shape(module: &Module, cid: CompId, id: InstrId) -> Result<(), String> {
    let comp = module.comp(cid);
    let instr = comp.instr(id);
    let ops = Operands { comp, instr };
    check_elementwise_shape(ops)?;
    match instr.opcode {
        Opcode::Compare => check_compare_shape(ops),
        Opcode::Select => check_select_shape(ops),
        Opcode::Tuple => check_tuple_shape(ops),
        Opcode::GetTupleElement => check_get_tuple_element_shape(ops),
        Opcode::Broadcast => check_broadcast_shape(ops),
        Opcode::Reshape => check_reshape_shape(ops),
        // The softmax raise walks through these to the logits, taking the
        // call's operand to have the divide's dimensions. (A missing
        // operand is check_operands_and_attrs' to report.)
        Opcode::Convert if ops.get(0).is_some_and(|o| !same_dims(o, &instr.shape)) => {
            Err("convert result dimensions differ from its operand's".into())
        }
        Opcode::Transpose => check_transpose_shape(ops),
        Opcode::Reduce => check_reduce_shape(ops),
        Opcode::Call => check_call_shape(module, ops),
        Opcode::Parameter if !instr.operands().is_empty() => {
            Err("parameter takes no operands".into())
        }
        Opcode::CustomCall
            if !matches!(instr.attr("custom_call_target"), Some(AttrValue::Str(_))) =>
        {
            Err("custom-call needs custom_call_target".into())
        }
        _ => Ok(()),
    }
}

/// Elementwise ops keep their operands' dimensions.
fn check_elementwise_shape(ops: Operands<'_>) -> Result<(), String> {
    let instr = ops.instr;
    let op = instr.opcode;
    if op.is_elementwise_unary() {
        if instr.operands().len() != 1 {
            return Err(format!("{op} takes one operand"));
        }
        if !same_dims(ops.shape(0)?, &instr.shape) {
            return Err(format!("{op} result dimensions differ from its operand's"));
        }
    } else if op.is_elementwise_binary() {
        if instr.operands().len() != 2 {
            return Err(format!("{op} takes two operands"));
        }
        let (a, b) = (ops.shape(0)?, ops.shape(1)?);
        if !same_dims(a, b) || !same_dims(a, &instr.shape) {
            return Err(format!(
                "{op} operands and result must have the same dimensions: {}, {} -> {}",
                a.to_text(true),
                b.to_text(true),
                instr.shape.to_text(true)
            ));
        }
    }
    Ok(())
}

fn check_compare_shape(ops: Operands<'_>) -> Result<(), String> {
    let shape = &ops.instr.shape;
    let (a, b) = (ops.shape(0)?, ops.shape(1)?);
    if !same_dims(a, b) || !same_dims(a, shape) {
        return Err("compare operands and result must have the same dimensions".into());
    }
    if shape.element_type() != super::PrimitiveType::Pred {
        return Err("compare must produce pred".into());
    }
    Ok(())
}

fn check_select_shape(ops: Operands<'_>) -> Result<(), String> {
    let (p, t, f) = (ops.shape(0)?, ops.shape(1)?, ops.shape(2)?);
    if !t.compatible(f) || !same_dims(t, &ops.instr.shape) || (p.rank() != 0 && !same_dims(p, t)) {
        return Err("select operands must agree in shape".into());
    }
    Ok(())
}

fn check_tuple_shape(ops: Operands<'_>) -> Result<(), String> {
    let elems = ops
        .instr
        .shape
        .tuple_elements()
        .ok_or("tuple must have a tuple shape")?;
    if elems.len() != ops.instr.operands().len() {
        return Err("tuple shape and operand count differ".into());
    }
    for (i, e) in elems.iter().enumerate() {
        if !e.compatible(ops.shape(i)?) {
            return Err(format!("tuple element {i} does not match its operand"));
        }
    }
    Ok(())
}

fn check_get_tuple_element_shape(ops: Operands<'_>) -> Result<(), String> {
    let idx = ops
        .instr
        .int_attr("index")
        .ok_or("get-tuple-element needs index")?;
    let elems = ops
        .shape(0)?
        .tuple_elements()
        .ok_or("get-tuple-element of a non-tuple")?;
    let e = usize::try_from(idx)
        .ok()
        .and_then(|i| elems.get(i))
        .ok_or("get-tuple-element index out of range")?;
    if !e.compatible(&ops.instr.shape) {
        return Err("get-tuple-element shape does not match the element".into());
    }
    Ok(())
}

fn check_broadcast_shape(ops: Operands<'_>) -> Result<(), String> {
    let instr = ops.instr;
    let o = ops.shape(0)?;
    let dims = instr.dimensions().ok_or("broadcast needs dimensions")?;
    if dims.len() != o.rank() {
        return Err("broadcast dimensions must name every operand dimension".into());
    }
    for (i, &d) in dims.iter().enumerate() {
        let out = usize::try_from(d)
            .ok()
            .and_then(|d| instr.shape.dims().get(d));
        if out != o.dims().get(i) {
            return Err(format!("broadcast dimension {i} does not match the result"));
        }
    }
    Ok(())
}

/// The result is the operand with its dimensions permuted (a permutation
/// that is not one is [`check_transpose_dims`]'s to report).
fn check_transpose_shape(ops: Operands<'_>) -> Result<(), String> {
    let (Some(o), Some(perm)) = (ops.get(0), ops.instr.dimensions()) else {
        return Ok(());
    };
    if !distinct_dims_of(perm, o.rank()) || perm.len() != o.rank() {
        return Ok(());
    }
    let permuted: Option<Vec<i64>> = perm
        .iter()
        .map(|&p| {
            usize::try_from(p)
                .ok()
                .and_then(|p| o.dims().get(p).copied())
        })
        .collect();
    match permuted {
        Some(dims) if dims != ops.instr.shape.dims() => Err(format!(
            "transpose of {} by {perm:?} is {}, not {}",
            o.to_text(true),
            format_dims(&dims),
            ops.instr.shape.to_text(true)
        )),
        _ => Ok(()),
    }
}

/// Each result of a reduce is its input without the reduced dimensions
/// (one array for one input, a tuple of them for several).
fn check_reduce_shape(ops: Operands<'_>) -> Result<(), String> {
    let instr = ops.instr;
    let inputs = instr.operands().len() / 2;
    let (Some(reduced), Some(first), true) = (instr.dimensions(), ops.get(0), inputs > 0) else {
        return Ok(());
    };
    // Dimensions out of range are check_dimension_numbers' to report.
    if !distinct_dims_of(reduced, first.rank()) {
        return Ok(());
    }
    let kept: Vec<i64> = first
        .dims()
        .iter()
        .enumerate()
        .filter(|(d, _)| !reduced.contains(&(*d as i64)))
        .map(|(_, &n)| n)
        .collect();
    let results: Vec<&Shape> = match (inputs, instr.shape.tuple_elements()) {
        (1, None) => vec![&instr.shape],
        (_, Some(elems)) if elems.len() == inputs => elems.iter().collect(),
        _ => {
            return Err(format!(
                "reduce of {inputs} input(s) must return {}",
                if inputs == 1 {
                    "an array"
                } else {
                    "a tuple of one array per input"
                }
            ))
        }
    };
    for (i, result) in results.iter().enumerate() {
        if ops.get(i).is_some_and(|input| !same_dims(input, first)) {
            return Err("reduce inputs must have the same dimensions".into());
        }
        if result.dims() != kept {
            return Err(format!(
                "reduce of {} over dimensions {reduced:?} is {}, not {}",
                first.to_text(true),
                format_dims(&kept),
                result.to_text(true)
            ));
        }
    }
    Ok(())
}

/// Whether `dims` are distinct dimensions of a rank-`rank` array.
fn distinct_dims_of(dims: &[i64], rank: usize) -> bool {
    let mut seen = vec![false; rank];
    dims.iter().all(|&d| {
        usize::try_from(d)
            .ok()
            .and_then(|d| seen.get_mut(d))
            .is_some_and(|s| !std::mem::replace(s, true))
    })
}

fn format_dims(dims: &[i64]) -> String {
    let dims: Vec<String> = dims.iter().map(i64::to_string).collect();
    format!("[{}]", dims.join(","))
}

fn check_reshape_shape(ops: Operands<'_>) -> Result<(), String> {
    let o = ops.shape(0)?;
    if o.as_array().map(|a| a.element_count())
        != ops.instr.shape.as_array().map(|a| a.element_count())
    {
        return Err("reshape changes the element count".into());
    }
    Ok(())
}

/// A call passes its callee's parameters and returns its root's shape.
fn check_call_shape(module: &Module, ops: Operands<'_>) -> Result<(), String> {
    let instr = ops.instr;
    let callee = instr.to_apply().ok_or("call needs to_apply")?;
    let callee = module
        .get_comp(callee)
        .ok_or("call of a missing computation")?;
    let params = callee.parameters();
    if params.len() != instr.operands().len() {
        return Err(format!(
            "call passes {} operands to {} parameters of {}",
            instr.operands().len(),
            params.len(),
            callee.name
        ));
    }
    for (i, p) in params.iter().enumerate() {
        if !callee.instr(*p).shape.compatible(ops.shape(i)?) {
            return Err(format!(
                "call operand {i} does not match parameter {i} of {}",
                callee.name
            ));
        }
    }
    let root = callee.root_opt().and_then(|r| callee.get(r));
    if !root.is_some_and(|r| r.shape.compatible(&instr.shape)) {
        return Err(format!(
            "call result does not match the root of {}",
            callee.name
        ));
    }
    Ok(())
}

/// Whether a name can be written in the text and read back as itself:
/// the parser's name characters (`[A-Za-z0-9_.-]`), not empty, and not a
/// keyword the parser takes before a name (`ROOT` for instructions,
/// `ENTRY` for computations). Names from a proto can hold anything; XLA
/// would print them raw and fail to read its own text, so they are
/// refused here rather than printed in a form that does not parse.
fn check_name(name: &str, computation: bool) -> Result<(), String> {
    if name.is_empty() {
        return Err("a name must not be empty".into());
    }
    if name.bytes().all(super::is_name_byte) && name != "ROOT" && name != "ENTRY" {
        return Ok(());
    }
    if let Some(c) = name
        .chars()
        .find(|&c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
    {
        return Err(format!(
            "the text cannot spell {c:?} in a name (names are letters, digits, '_', '.' and '-')"
        ));
    }
    let keyword = if computation { "ENTRY" } else { "ROOT" };
    if name == keyword {
        return Err(format!("{keyword} is a keyword of the text, not a name"));
    }
    Ok(())
}

/// Every array in a shape has a layout of its own rank, if any, that the
/// text can say: a tile has at least one dimension.
fn check_layouts(shape: &Shape) -> Result<(), String> {
    match shape {
        Shape::Array(a) => match &a.layout {
            Some(l) if l.minor_to_major.len() != a.rank() => Err(format!(
                "the layout of {} has {} minor-to-major entries for rank {}",
                shape.to_text(false),
                l.minor_to_major.len(),
                a.rank()
            )),
            Some(l)
                if l.extras
                    .as_ref()
                    .is_some_and(|x| x.tiles.iter().any(|t| t.0.is_empty())) =>
            {
                Err(format!(
                    "the layout of {} has a tile of no dimensions",
                    shape.to_text(false)
                ))
            }
            _ => Ok(()),
        },
        Shape::Tuple(elems) => elems.iter().try_for_each(check_layouts),
        _ => Ok(()),
    }
}

/// The shapes an instruction's attributes hold (`outfeed_shape`,
/// `operand_layout_constraints`) are held to the same layout rule, since
/// they are printed with their layouts too.
fn check_attribute_layouts(instr: &Instruction) -> Result<(), String> {
    for attr in instr.attrs.iter() {
        let shapes = match &attr.value {
            AttrValue::Shape(s) => std::slice::from_ref(&**s),
            AttrValue::Shapes(s) => &s[..],
            _ => continue,
        };
        for s in shapes {
            check_layouts(s).map_err(|e| format!("{}: {e}", attr.key.as_str()))?;
        }
    }
    Ok(())
}

/// Operand counts and required attributes, as XLA's parser checks them
/// (`super::signature`), so that a module read from a proto is held to
/// what its text would be.
fn check_operands_and_attrs(module: &Module, cid: CompId, id: InstrId) -> Result<(), String> {
    use super::signature as checks;
    let comp = module.comp(cid);
    let instr = comp.instr(id);
    let op = instr.opcode;
    let n = instr.operands().len();
    let first_shape = instr.operands().first().map(|&o| &*comp.instr(o).shape);
    let pred_branch = op == Opcode::Conditional
        && first_shape.is_some_and(|s| {
            s.rank() == 0 && s.element_type() == super::PrimitiveType::Pred && !s.is_tuple()
        });
    if !matches!(
        op,
        Opcode::AsyncStart | Opcode::AsyncUpdate | Opcode::AsyncDone
    ) {
        if let Some(want) = checks::fixed_operand_count(op) {
            if n != want {
                return Err(format!(
                    "{op} expects {want} operands, but has {n} operands"
                ));
            }
        }
        checks::check_variadic_operands(op, n)?;
    }
    for key in checks::required_attrs(op, instr.async_wrapped, pred_branch) {
        if instr.attr(key).is_none() {
            return Err(format!("attribute {key} is expected but not seen"));
        }
    }
    if op == Opcode::Conditional {
        let branches = if pred_branch {
            2
        } else {
            match instr.attr("branch_computations") {
                Some(AttrValue::Comps(c)) => c.len(),
                _ => 0,
            }
        };
        if branches == 0 {
            return Err("conditional needs at least one branch computation".into());
        }
        if n != branches + 1 {
            return Err(format!(
                "conditional with {branches} branches expects {} operands, but has {n}",
                branches + 1
            ));
        }
    }
    Ok(())
}

/// `{1,2}` of an attribute; `None` when absent.
fn int_list(instr: &Instruction, key: &str) -> Result<Option<Vec<i64>>, String> {
    match instr.attr(key) {
        None => Ok(None),
        Some(AttrValue::Ints(v)) => Ok(Some(v.to_vec())),
        Some(AttrValue::Int(v)) => Ok(Some(vec![*v])),
        Some(_) => Err(format!("{key} is not a list of integers")),
    }
}

/// An integer attribute; `None` when absent.
fn int_value(instr: &Instruction, key: &str) -> Result<Option<i64>, String> {
    match instr.attr(key) {
        None => Ok(None),
        Some(AttrValue::Int(v)) => Ok(Some(*v)),
        Some(_) => Err(format!("{key} is not an integer")),
    }
}

/// Each of `dims` names a dimension of a rank-`rank` array; with
/// `distinct`, none twice; with `sorted`, in increasing order. `what`
/// names them in a message (formatted only then).
fn dims_in_range(
    what: impl fmt::Display,
    dims: &[i64],
    rank: usize,
    distinct: bool,
    sorted: bool,
) -> Result<(), String> {
    for (i, &d) in dims.iter().enumerate() {
        if usize::try_from(d).map_or(true, |d| d >= rank) {
            return Err(format!(
                "{what}: dimension {d} is out of range for rank {rank}"
            ));
        }
        let before = dims.get(..i).unwrap_or_default();
        if distinct && before.contains(&d) {
            return Err(format!("{what}: dimension {d} is named twice"));
        }
        if sorted && before.last().is_some_and(|&p| p >= d) {
            return Err(format!(
                "{what}: dimensions must be in increasing order, found {dims:?}"
            ));
        }
    }
    Ok(())
}

/// Every dimension number, index and window an instruction's attributes
/// hold, against the rank it indexes (XLA's shape inference rules), so
/// that nothing downstream indexes a shape out of bounds.
fn check_dimension_numbers(comp: &Computation, instr: &Instruction) -> Result<(), String> {
    let ops = Operands { comp, instr };
    let rank = instr.shape.rank();
    // The attributes of a sugared async start are the wrapped op's.
    let op = match (instr.opcode, instr.async_wrapped) {
        (Opcode::AsyncStart, Some(w)) => w,
        (op, _) => op,
    };
    let each_operand = (0..instr.operands().len()).map(|i| ops.rank(i));
    match op {
        Opcode::Reduce => {
            let inputs = instr.operands().len() / 2;
            dims_attr_in_range(instr, "reduce dimensions", each_operand.take(inputs))
        }
        Opcode::Transpose => check_transpose_dims(ops),
        Opcode::Broadcast => dims_attr_in_range(instr, "broadcast dimensions", [rank]),
        Opcode::Reverse => dims_attr_in_range(instr, "reverse dimensions", [ops.rank(0)]),
        // Each operand for sort and concatenate; the first for the rest
        // (the collectives' variadic forms may carry scalars, as
        // torch-xla's all-gather does).
        Opcode::Sort | Opcode::Concatenate => {
            dims_attr_in_range(instr, format_args!("{op} dimensions"), each_operand)
        }
        Opcode::AllGather
        | Opcode::AllGatherStart
        | Opcode::ReduceScatter
        | Opcode::AllToAll
        | Opcode::RaggedAllToAll
        | Opcode::GetDimensionSize
        | Opcode::SetDimensionSize => {
            dims_attr_in_range(instr, format_args!("{op} dimensions"), [ops.rank(0)])
        }
        Opcode::Iota => index_attr_in_range(instr, "iota_dimension", rank),
        Opcode::BatchNormTraining | Opcode::BatchNormInference | Opcode::BatchNormGrad => {
            index_attr_in_range(instr, "feature_index", ops.rank(0))
        }
        Opcode::Dot => check_dot_dims(ops),
        Opcode::Gather => check_gather(ops),
        Opcode::Scatter => check_scatter(ops),
        Opcode::Slice => match instr.attr("slice") {
            Some(AttrValue::Slice(s)) => one_per_operand_dim("slice", s.len(), ops),
            _ => Ok(()),
        },
        Opcode::DynamicSlice => check_dynamic_slice_sizes(ops),
        Opcode::Pad => match instr.attr("padding") {
            Some(AttrValue::Padding(p)) => one_per_operand_dim("padding", p.len(), ops),
            _ => Ok(()),
        },
        Opcode::CustomCall => check_operand_layout_constraints(ops),
        Opcode::ReduceWindow => match instr.attr("window") {
            Some(AttrValue::Window(w)) => one_per_operand_dim("window", w.dims.len(), ops),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

/// `dimensions=`, if written, names distinct dimensions of arrays of each
/// of `ranks`.
fn dims_attr_in_range(
    instr: &Instruction,
    what: impl fmt::Display,
    ranks: impl IntoIterator<Item = usize>,
) -> Result<(), String> {
    if let Some(d) = int_list(instr, "dimensions")? {
        for r in ranks {
            dims_in_range(&what, &d, r, true, false)?;
        }
    }
    Ok(())
}

/// The integer attribute `key`, if written, names a dimension of a
/// rank-`rank` array.
fn index_attr_in_range(instr: &Instruction, key: &str, rank: usize) -> Result<(), String> {
    if let Some(d) = int_value(instr, key)? {
        dims_in_range(key, &[d], rank, false, false)?;
    }
    Ok(())
}

/// An attribute that describes each operand dimension (`what` has `n`)
/// describes as many as the operand has.
fn one_per_operand_dim(what: &str, n: usize, ops: Operands<'_>) -> Result<(), String> {
    let r = ops.rank(0);
    if n != r {
        return Err(format!(
            "{what} has {n} dimensions, the operand has rank {r}"
        ));
    }
    Ok(())
}

fn check_transpose_dims(ops: Operands<'_>) -> Result<(), String> {
    let Some(d) = int_list(ops.instr, "dimensions")? else {
        return Ok(());
    };
    let r = ops.rank(0);
    if d.len() != r {
        return Err(format!(
            "transpose dimensions {d:?} must be a permutation of the operand's {r} dimensions"
        ));
    }
    dims_in_range("transpose dimensions", &d, r, true, false)?;
    if ops.instr.shape.rank() != r {
        return Err("transpose changes the rank".into());
    }
    Ok(())
}

fn check_dot_dims(ops: Operands<'_>) -> Result<(), String> {
    let instr = ops.instr;
    let l = ops.rank(0);
    let r = ops.rank(1);
    let lc = int_list(instr, "lhs_contracting_dims")?.unwrap_or_default();
    let rc = int_list(instr, "rhs_contracting_dims")?.unwrap_or_default();
    let lb = int_list(instr, "lhs_batch_dims")?.unwrap_or_default();
    let rb = int_list(instr, "rhs_batch_dims")?.unwrap_or_default();
    dims_in_range("lhs_contracting_dims", &lc, l, true, false)?;
    dims_in_range("rhs_contracting_dims", &rc, r, true, false)?;
    dims_in_range("lhs_batch_dims", &lb, l, true, false)?;
    dims_in_range("rhs_batch_dims", &rb, r, true, false)?;
    if lc.len() != rc.len() || lb.len() != rb.len() {
        return Err("dot: lhs and rhs must name as many contracting (and batch) dimensions".into());
    }
    if lc.iter().any(|d| lb.contains(d)) || rc.iter().any(|d| rb.contains(d)) {
        return Err("dot: a dimension is both contracting and batch".into());
    }
    Ok(())
}

/// `dynamic_slice_sizes=`, if written, has a size per operand dimension,
/// each within it.
fn check_dynamic_slice_sizes(ops: Operands<'_>) -> Result<(), String> {
    let Some(sizes) = int_list(ops.instr, "dynamic_slice_sizes")? else {
        return Ok(());
    };
    let dims = ops.get(0).map(Shape::dims).unwrap_or_default();
    if sizes.len() != dims.len() {
        return Err(format!(
            "dynamic_slice_sizes has {} sizes, the operand has rank {}",
            sizes.len(),
            dims.len()
        ));
    }
    for (&s, &d) in sizes.iter().zip(dims) {
        if s < 0 || (d >= 0 && s > d) {
            return Err(format!(
                "dynamic_slice_sizes {sizes:?} do not fit in the operand's dimensions {dims:?}"
            ));
        }
    }
    Ok(())
}

/// A custom call's `operand_layout_constraints=`, if written: one per
/// operand, each of its shape (as the text parser checks it).
fn check_operand_layout_constraints(ops: Operands<'_>) -> Result<(), String> {
    let instr = ops.instr;
    let Some(AttrValue::Shapes(shapes)) = instr.attr("operand_layout_constraints") else {
        return Ok(());
    };
    if shapes.len() != instr.operands().len() {
        return Err(format!(
            "Expected {} operand layout constraints, {} given",
            instr.operands().len(),
            shapes.len()
        ));
    }
    for (i, s) in shapes.iter().enumerate() {
        if !ops.get(i).is_some_and(|o| s.compatible(o)) {
            return Err(format!(
                "operand layout constraint {i} ({}) is not compatible with the operand",
                s.to_text(true)
            ));
        }
    }
    Ok(())
}

/// The size of a gather's or scatter's index vector: dimension
/// `index_vector_dim` of the indices, or 1 when it is their rank.
fn index_vector_size(indices: Option<&Shape>, ivd: i64) -> Option<i64> {
    let dims = indices?.dims();
    match usize::try_from(ivd).ok()? {
        d if d == dims.len() => Some(1),
        d => dims.get(d).copied(),
    }
}

/// The attributes of a gather's or a scatter's dimension numbers: the two
/// follow the same rules under different names.
struct IndexedKeys {
    op: &'static str,
    /// Dimensions of the window's array (gather: the result; scatter: the
    /// updates) that span the window.
    window: &'static str,
    /// Operand dimensions the window leaves out.
    collapsed: &'static str,
    /// The operand dimension each index vector entry indexes.
    index_map: &'static str,
    operand_batching: &'static str,
    indices_batching: &'static str,
}

const GATHER_KEYS: IndexedKeys = IndexedKeys {
    op: "gather",
    window: "offset_dims",
    collapsed: "collapsed_slice_dims",
    index_map: "start_index_map",
    operand_batching: "operand_batching_dims",
    indices_batching: "start_indices_batching_dims",
};

const SCATTER_KEYS: IndexedKeys = IndexedKeys {
    op: "scatter",
    window: "update_window_dims",
    collapsed: "inserted_window_dims",
    index_map: "scatter_dims_to_operand_dims",
    operand_batching: "input_batching_dims",
    indices_batching: "scatter_indices_batching_dims",
};

/// The arrays a gather's or a scatter's dimension numbers index.
struct IndexedArrays<'a> {
    operand_rank: usize,
    indices: Option<&'a Shape>,
    /// The rank of a gather's result or a scatter's updates.
    window_rank: usize,
}

fn check_gather(ops: Operands<'_>) -> Result<(), String> {
    let operand_rank = ops.rank(0);
    let arrays = IndexedArrays {
        operand_rank,
        indices: ops.get(1),
        window_rank: ops.instr.shape.rank(),
    };
    check_indexed(&GATHER_KEYS, ops.instr, &arrays)?;
    if let Some(sizes) = int_list(ops.instr, "slice_sizes")? {
        if sizes.len() != operand_rank {
            return Err(format!(
                "gather slice_sizes has {} sizes, the operand has rank {operand_rank}",
                sizes.len()
            ));
        }
    }
    Ok(())
}

fn check_scatter(ops: Operands<'_>) -> Result<(), String> {
    let inputs = ops.instr.operands().len() / 2;
    let arrays = IndexedArrays {
        operand_rank: ops.rank(0),
        indices: ops.get(inputs),
        window_rank: ops.rank(inputs + 1),
    };
    check_indexed(&SCATTER_KEYS, ops.instr, &arrays)
}

/// The rules gather and scatter share: every list in range of the rank it
/// indexes, the window and the batching dimensions covering the operand,
/// and an index map entry per index vector entry.
fn check_indexed(
    keys: &IndexedKeys,
    instr: &Instruction,
    arrays: &IndexedArrays<'_>,
) -> Result<(), String> {
    let get = |k: &str| int_list(instr, k).map(Option::unwrap_or_default);
    let window = get(keys.window)?;
    let collapsed = get(keys.collapsed)?;
    let index_map = get(keys.index_map)?;
    let batching = get(keys.operand_batching)?;
    let indices_batching = get(keys.indices_batching)?;
    let op = keys.op;
    let operand_rank = arrays.operand_rank;
    let indices_rank = arrays.indices.map_or(0, Shape::rank);
    let what = |key: &'static str| Label(op, key);
    dims_in_range(what(keys.window), &window, arrays.window_rank, true, true)?;
    dims_in_range(what(keys.collapsed), &collapsed, operand_rank, true, true)?;
    dims_in_range(what(keys.index_map), &index_map, operand_rank, true, false)?;
    dims_in_range(
        what(keys.operand_batching),
        &batching,
        operand_rank,
        true,
        true,
    )?;
    let ivd = int_value(instr, "index_vector_dim")?.unwrap_or(indices_rank as i64);
    if usize::try_from(ivd).map_or(true, |d| d > indices_rank) {
        return Err(format!(
            "{op} index_vector_dim {ivd} is out of range for indices of rank {indices_rank}"
        ));
    }
    dims_in_range(
        what(keys.indices_batching),
        &indices_batching,
        indices_rank,
        true,
        false,
    )?;
    if window.len() + collapsed.len() + batching.len() != operand_rank {
        return Err(format!(
            "{op}: {} ({}), {} ({}) and {} ({}) must cover the operand's {operand_rank} dimensions",
            keys.window,
            window.len(),
            keys.collapsed,
            collapsed.len(),
            keys.operand_batching,
            batching.len()
        ));
    }
    let index_vector = index_vector_size(arrays.indices, ivd);
    if index_vector != Some(index_map.len() as i64) {
        return Err(format!(
            "{op} {} has {} entries, the index vector has {}",
            keys.index_map,
            index_map.len(),
            index_vector.unwrap_or(0)
        ));
    }
    Ok(())
}

/// An op's attribute in a message (`gather offset_dims`), written only
/// when a message is.
#[derive(Clone, Copy)]
struct Label(&'static str, &'static str);

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.0, self.1)
    }
}

/// An instruction's `metadata={... stack_frame_id=N}` names a frame of the
/// module's table.
fn check_frame_ref(module: &Module, instr: &Instruction) -> Result<(), String> {
    let Some(AttrValue::Metadata(md)) = instr.attr("metadata") else {
        return Ok(());
    };
    let id = md.stack_frame_id;
    let frames = module
        .stack_frames
        .as_ref()
        .map_or(0, |f| f.stack_frames.len());
    if id != 0 && usize::try_from(id).map_or(true, |i| i > frames) {
        return Err(format!(
            "metadata stack_frame_id={id} names no frame (the module has {frames})"
        ));
    }
    Ok(())
}

/// The stack-frame tables hold together: every id names an entry of its
/// table, and no frame is its own ancestor (what the proto reader needs
/// of the protos the writer makes).
fn check_stack_frames(module: &Module) -> Result<(), VerifyError> {
    let Some(t) = &module.stack_frames else {
        return Ok(());
    };
    let in_table = |id: i64, len: usize| usize::try_from(id).is_ok_and(|i| i >= 1 && i <= len);
    for (k, l) in t.file_locations.iter().enumerate() {
        if !in_table(l.file_name_id, t.file_names.len()) {
            return Err(module_error(format!(
                "FileLocations entry {}: file_name_id={} names no entry of FileNames ({} entries)",
                k + 1,
                l.file_name_id,
                t.file_names.len()
            )));
        }
        if !in_table(l.function_name_id, t.function_names.len()) {
            return Err(module_error(format!(
                "FileLocations entry {}: function_name_id={} names no entry of FunctionNames ({} entries)",
                k + 1,
                l.function_name_id,
                t.function_names.len()
            )));
        }
    }
    let n = t.stack_frames.len();
    for (k, f) in t.stack_frames.iter().enumerate() {
        if !in_table(f.file_location_id, t.file_locations.len()) {
            return Err(module_error(format!(
                "StackFrames entry {}: file_location_id={} names no entry of FileLocations ({} entries)",
                k + 1,
                f.file_location_id,
                t.file_locations.len()
            )));
        }
        // The text writes the parent plus one (1: no parent).
        if f.parent_frame_id != 0 && !in_table(f.parent_frame_id, n) {
            return Err(module_error(format!(
                "StackFrames entry {}: parent_frame_id={} names no frame ({n} frames; 1 is none)",
                k + 1,
                f.parent_frame_id + 1
            )));
        }
    }
    check_frame_chains(&t.stack_frames)
}

/// No frame is its own ancestor: each chain is followed at most n steps,
/// marking frames known to reach the root.
fn check_frame_chains(frames: &[StackFrame]) -> Result<(), VerifyError> {
    let n = frames.len();
    let mut reaches_root = vec![false; n];
    for start in 0..n {
        let mut chain = Vec::new();
        let mut cur = start;
        loop {
            if reaches_root.get(cur).copied().unwrap_or(true) {
                break;
            }
            if chain.len() > n {
                return Err(module_error(format!(
                    "StackFrames entry {}: its parent chain has a cycle",
                    start + 1
                )));
            }
            chain.push(cur);
            let parent = frames.get(cur).map_or(0, |f| f.parent_frame_id);
            match usize::try_from(parent - 1) {
                Ok(p) => cur = p,
                Err(_) => break,
            }
        }
        for c in chain {
            if let Some(r) = reaches_root.get_mut(c) {
                *r = true;
            }
        }
    }
    Ok(())
}

/// No computation calls itself, directly or through others (a call graph
/// with a cycle has no evaluation and no XLA post order). Depth-first with
/// an explicit stack: call graphs of generated modules are deep.
fn check_call_graph(module: &Module) -> Result<(), VerifyError> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let ids: Vec<CompId> = module.computation_ids().collect();
    let slots = ids.iter().map(|c| c.index() + 1).max().unwrap_or(0);
    let mut mark = vec![Mark::New; slots];
    // Per computation: its calling instructions and what each calls, found
    // on every core (it reads every instruction).
    let parallel = module.instruction_count() >= INSTRUCTIONS_PER_THREAD * 2;
    let mut calls: Vec<Vec<(InstrId, CompId)>> = vec![Vec::new(); slots];
    let found = par_map(
        &ids,
        parallel,
        || (),
        |_, _, &c| {
            module.get_comp(c).map_or_else(Vec::new, |comp| {
                comp.instructions()
                    .flat_map(|(i, instr)| instr.called_computations().map(move |c| (i, c)))
                    .collect()
            })
        },
    );
    for (c, found) in ids.iter().zip(found) {
        if let Some(slot) = calls.get_mut(c.index()) {
            *slot = found;
        }
    }
    let mut calls_of = |c: CompId| {
        calls
            .get_mut(c.index())
            .map(std::mem::take)
            .unwrap_or_default()
    };
    for &root in &ids {
        if mark.get(root.index()) != Some(&Mark::New) {
            continue;
        }
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
                Some(Mark::Open) => {
                    let comp = module.comp(caller);
                    let callee_name = module
                        .get_comp(callee)
                        .map_or_else(String::new, |c| c.name.to_string());
                    return Err(VerifyError {
                        computation: comp.name.to_string(),
                        instruction: comp.get(instr).map(|i| i.name.to_string()),
                        message: format!(
                            "computation {callee_name} calls itself through computation {}",
                            comp.name
                        ),
                        pos: comp.source_pos(instr),
                    });
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// The header's `entry_computation_layout`, if written, has the entry's
/// signature: as many parameters, each of the parameter's type and
/// dimensions, and the root's (layouts may differ: that is what the
/// attribute is for).
fn check_entry_layout(module: &Module) -> Result<(), VerifyError> {
    let (Some(layout), Some(entry)) = (
        module.entry_computation_layout(),
        module.entry_opt().and_then(|e| module.get_comp(e)),
    ) else {
        return Ok(());
    };
    let fail = |message: String| VerifyError {
        computation: entry.name.to_string(),
        instruction: None,
        message: format!("entry_computation_layout: {message}"),
        pos: None,
    };
    // A proto's layout may be anything; the text says only what parses.
    for s in layout.parameters.iter().chain([&layout.result]) {
        check_layouts(s).map_err(&fail)?;
    }
    let params = entry.parameters();
    if params.len() != layout.parameters.len() {
        return Err(fail(format!(
            "{} parameters, but the entry computation {} has {}",
            layout.parameters.len(),
            entry.name,
            params.len()
        )));
    }
    for (k, (p, s)) in params.iter().zip(&layout.parameters).enumerate() {
        let have = &entry.instr(*p).shape;
        if !same_type_and_dims(have, s) {
            return Err(fail(format!(
                "parameter {k} is {}, but the entry computation's parameter {} is {}",
                s.to_text(true),
                entry.instr(*p).name,
                have.to_text(true)
            )));
        }
    }
    if let Some(root) = entry.root_opt().and_then(|r| entry.get(r)) {
        if !same_type_and_dims(&root.shape, &layout.result) {
            return Err(fail(format!(
                "the result is {}, but the entry computation's root {} is {}",
                layout.result.to_text(true),
                root.name,
                root.shape.to_text(true)
            )));
        }
    }
    Ok(())
}

/// XLA's `ShapeUtil::Compatible`: equal ignoring layouts and which
/// dimensions are dynamic.
fn same_type_and_dims(a: &Shape, b: &Shape) -> bool {
    match (a, b) {
        (Shape::Array(x), Shape::Array(y)) => x.element_type == y.element_type && x.dims == y.dims,
        (Shape::Tuple(x), Shape::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_type_and_dims(p, q))
        }
        (Shape::Token, Shape::Token) | (Shape::Opaque, Shape::Opaque) => true,
        _ => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::text::parse_module;

    /// A module of `comps` computations of `n` instructions each, enough
    /// to be verified on several threads.
    fn large(comps: usize, n: usize) -> Module {
        let mut text = String::from("HloModule big\n\n");
        for c in 0..comps {
            let entry = if c + 1 == comps { "ENTRY " } else { "" };
            text.push_str(&format!("{entry}c{c} {{\n  c{c}.0 = f32[] parameter(0)\n"));
            for i in 1..n {
                let root = if i + 1 == n { "ROOT " } else { "" };
                text.push_str(&format!(
                    "  {root}c{c}.{i} = f32[] negate(c{c}.{})\n",
                    i - 1
                ));
            }
            text.push_str("}\n\n");
        }
        parse_module(&text, "big.hlo").unwrap()
    }

    /// On several threads, the verifier finds what it finds on one: a name
    /// taken in another computation (another thread's run), a broken user
    /// list; and it reports the fault the one-thread order reports first.
    #[test]
    fn faults_are_found_whatever_the_threads() {
        let mut m = large(3, INSTRUCTIONS_PER_THREAD);
        assert_eq!(verify(&m), Ok(()));
        let (first, last) = (CompId::new(0), CompId::new(2));
        let taken = m.comp(first).instr(InstrId::new(7)).name.clone();
        m.comp_mut(last).instr_mut(InstrId::new(9)).name = taken;
        let e = verify(&m).unwrap_err();
        assert_eq!(e.to_string(), "in computation c2, instruction c0.7: instruction name c0.7 is not unique in the module");
        m.comp_mut(first).instr_mut(InstrId::new(3)).name = "c1.5".into();
        let e = verify(&m).unwrap_err();
        assert_eq!(e.to_string(), "in computation c1, instruction c1.5: instruction name c1.5 is not unique in the module");
    }

    /// Each way an operand and a user list can disagree is found, on the
    /// fast path's whole-computation comparison as on the in-order
    /// search, and reported as the in-order search has it; small and large
    /// modules take the two paths' thread counts.
    #[test]
    fn every_disagreement_of_operands_and_users_is_found() {
        type Fault = fn(&mut Computation);
        fn id(i: usize) -> InstrId {
            InstrId::new(i)
        }
        let faults: [(Fault, &str); 6] = [
            // x.2 uses x.1, which does not list it.
            (
                |c| c.instr_mut(id(1)).users.retain(|u| *u != id(2)),
                "instruction x.2: operand x.1 does not list it as a user",
            ),
            // x.1 lists x.3, which does not use it.
            (
                |c| c.instr_mut(id(1)).users.push(id(3)),
                "instruction x.1: x.3 is listed as a user but does not use it",
            ),
            // x.1 lists x.2 twice.
            (
                |c| c.instr_mut(id(1)).users.push(id(2)),
                "instruction x.1: a user is listed twice",
            ),
            // x.1 lists an instruction that is not there.
            (
                |c| c.instr_mut(id(1)).users.push(id(10_000_000)),
                "instruction x.1: a user was removed but is still listed",
            ),
            // x.2 uses an instruction that is not there.
            (
                |c| {
                    c.instr_mut(id(1)).users.retain(|u| *u != id(2));
                    c.instr_mut(id(2)).operands[0] = id(10_000_000);
                },
                "instruction x.2: operand 0 is not an instruction of this computation",
            ),
            // Users swapped between two operands: the counts still agree.
            (
                |c| {
                    let a = std::mem::take(&mut c.instr_mut(id(1)).users);
                    let b = std::mem::replace(&mut c.instr_mut(id(2)).users, a);
                    c.instr_mut(id(1)).users = b;
                },
                "instruction x.1: x.3 is listed as a user but does not use it",
            ),
        ];
        for n in [5, INSTRUCTIONS_PER_THREAD * 3] {
            let mut text = String::from("HloModule m\n\nENTRY x {\n  x.0 = f32[] parameter(0)\n");
            for i in 1..n {
                let root = if i + 1 == n { "ROOT " } else { "" };
                text.push_str(&format!("  {root}x.{i} = f32[] negate(x.{})\n", i - 1));
            }
            text.push_str("}\n");
            let m = parse_module(&text, "m.hlo").unwrap();
            assert_eq!(verify(&m), Ok(()));
            for (fault, message) in faults {
                let mut bad = m.clone();
                fault(bad.comp_mut(CompId::new(0)));
                let e = verify(&bad).expect_err(message).to_string();
                assert!(e.ends_with(message), "{n} instructions: {e}");
            }
        }
    }
}
