//! Values one computation hands to another: through calls, loop state, and
//! the residual stacks that `lax.scan` writes in one loop (one slice per
//! iteration) and reads in a later one.
//!
//! The softmax raises use it to see a softmax across loops: a backward
//! body whose `e`, `s` and `1/(s*s)` are loop parameters must prove they
//! are the forward's values of the same iteration ([`Flow::origin`]), and
//! a forward softmax whose interior values escape only as such residuals
//! is raised by handing `y` over instead ([`Flow::uses`], [`prune`]).
//!
//! Only value-preserving plumbing is followed: a parameter of a computation
//! with one `call` site, an element of a call's result tuple, an element of
//! loop state the body passes on unchanged, and a stack slice
//! `reshape(dynamic-slice(S, i, 0, ..))` of a stack the writing loop fills
//! with `dynamic-update-slice(S, reshape(v), i, 0, ..)`, either inline or in
//! the small computations JAX calls (`dynamic_index_in_dim`,
//! `dynamic_update_index_in_dim`). Anything else ends the trace, so a value
//! that cannot be followed is only ever its own origin.

use super::softmax_match::is_scalar_constant;
use crate::ir::{AttrValue, CompId, Computation, InstrId, Module, Opcode, Shape};
use std::collections::HashMap;
use std::sync::Arc;

/// An instruction of a computation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Site {
    pub comp: CompId,
    pub instr: InstrId,
}

/// One step from where a value is read back to where it was computed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hop {
    /// A parameter of a computation, from the operand of its one call.
    CallOperand(Site),
    /// An element of a call's result, from the callee's root tuple.
    CallResult(Site),
    /// An element of loop state the body passes on unchanged, from the
    /// loop's initial value.
    LoopInvariant(Site),
    /// A slice of a stack, from the value the writing loop stored at the
    /// iteration whose index equals the read index.
    Stack {
        /// The writing loop.
        writer: Site,
        /// The index the writer stores at, in its body.
        write_index: InstrId,
        /// The index the slice is read at.
        read_index: Site,
        /// How the stack got from the writer to the reader.
        path: Vec<Hop>,
    },
}

impl Hop {
    /// The same step of the same instance: the same call, loop, or stack
    /// slot (the tuple element may differ).
    fn same_step(&self, other: &Hop) -> bool {
        match (self, other) {
            (Hop::CallOperand(a), Hop::CallOperand(b))
            | (Hop::CallResult(a), Hop::CallResult(b))
            | (Hop::LoopInvariant(a), Hop::LoopInvariant(b)) => a == b,
            (
                Hop::Stack {
                    writer: w1,
                    write_index: i1,
                    read_index: r1,
                    path: p1,
                },
                Hop::Stack {
                    writer: w2,
                    write_index: i2,
                    read_index: r2,
                    path: p2,
                },
            ) => w1 == w2 && i1 == i2 && r1 == r2 && same_steps(p1, p2),
            _ => false,
        }
    }
}

fn same_steps(a: &[Hop], b: &[Hop]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_step(y))
}

/// Where a value was computed, and how it got to where it is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub comp: CompId,
    pub instr: InstrId,
    /// From the read back to the computation.
    pub hops: Vec<Hop>,
}

impl Origin {
    /// Whether two values were computed by the same run of one computation
    /// (the same call, the same loop iteration).
    pub fn same_instance(&self, other: &Origin) -> bool {
        self.comp == other.comp && same_steps(&self.hops, &other.hops)
    }
}

/// How a computation is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Call,
    WhileBody,
    WhileCondition,
    Other,
}

/// Steps a trace may take: more than any real module's nesting, and a
/// bound on malformed input.
const MAX_STEPS: usize = 10_000;

/// The call graph, for tracing values across computations.
pub struct Flow {
    callers: HashMap<CompId, Vec<(Site, Role)>>,
}

impl Flow {
    pub fn new(module: &Module) -> Flow {
        let mut callers: HashMap<CompId, Vec<(Site, Role)>> = HashMap::new();
        for (comp, c) in module.computations() {
            for (instr, i) in c.instructions() {
                for attr in &i.attrs {
                    let role = match (i.opcode, &*attr.key) {
                        (Opcode::Call, "to_apply") => Role::Call,
                        (Opcode::While, "body") => Role::WhileBody,
                        (Opcode::While, "condition") => Role::WhileCondition,
                        _ => Role::Other,
                    };
                    let called: &[CompId] = match &attr.value {
                        AttrValue::Comp(id) => std::slice::from_ref(id),
                        AttrValue::Comps(ids) => ids,
                        _ => &[],
                    };
                    for &callee in called {
                        callers
                            .entry(callee)
                            .or_default()
                            .push((Site { comp, instr }, role));
                    }
                }
            }
        }
        Flow { callers }
    }

    /// The one instruction that calls `comp`, when it calls it as `role`.
    fn only_caller(&self, comp: CompId, role: Role) -> Option<Site> {
        match self.callers.get(&comp).map(Vec::as_slice) {
            Some([(site, r)]) if *r == role => Some(*site),
            _ => None,
        }
    }

    /// The one while loop whose body is `comp` (a body may also be called
    /// by nothing else).
    fn loop_of_body(&self, comp: CompId) -> Option<Site> {
        self.only_caller(comp, Role::WhileBody)
    }

    /// The one while loop whose condition is `comp`.
    fn loop_of_condition(&self, comp: CompId) -> Option<Site> {
        self.only_caller(comp, Role::WhileCondition)
    }

    /// Where `id` (in `comp`) was computed: followed back through calls,
    /// loop state and residual stacks as far as they preserve its value.
    pub fn origin(&self, module: &Module, comp: CompId, id: InstrId) -> Origin {
        let mut hops = Vec::new();
        let (mut comp, mut id) = (comp, id);
        for _ in 0..MAX_STEPS {
            let c = module.comp(comp);
            id = strip_identity(c, id);
            let Some((hop, next)) = self.step_back(module, comp, id) else {
                break;
            };
            hops.push(hop);
            (comp, id) = (next.comp, next.instr);
        }
        Origin {
            comp,
            instr: id,
            hops,
        }
    }

    /// One step back from the value `id`.
    fn step_back(&self, module: &Module, comp: CompId, id: InstrId) -> Option<(Hop, Site)> {
        let c = module.comp(comp);
        let i = c.instr(id);
        match i.opcode {
            Opcode::Parameter if !i.shape.is_tuple() => {
                let site = self.only_caller(comp, Role::Call)?;
                let n = usize::try_from(i.parameter_number()?).ok()?;
                let operand = *module.comp(site.comp).instr(site.instr).operands().get(n)?;
                Some((Hop::CallOperand(site), at(site.comp, operand)))
            }
            Opcode::GetTupleElement => {
                let n = tuple_index(c, id)?;
                let tuple = strip_identity(c, i.operand(0));
                let t = c.instr(tuple);
                match t.opcode {
                    Opcode::Parameter => {
                        let site = self.loop_of_body(comp)?;
                        if !passes_through(c, tuple, n) {
                            return None;
                        }
                        let init = element(module.comp(site.comp), loop_init(module, site), n)?;
                        Some((Hop::LoopInvariant(site), at(site.comp, init)))
                    }
                    Opcode::Call => {
                        let callee = t.to_apply()?;
                        let g = module.get_comp(callee)?;
                        let out = element(g, g.root_opt()?, n)?;
                        Some((Hop::CallResult(at(comp, tuple)), at(callee, out)))
                    }
                    _ => None,
                }
            }
            Opcode::Reshape | Opcode::Call => {
                let read = stack_read(module, c, id)?;
                let (path, writer, value, write_index) = self.stack_source(module, comp, read.0)?;
                Some((
                    Hop::Stack {
                        writer,
                        write_index: write_index.instr,
                        read_index: at(comp, read.1),
                        path,
                    },
                    value,
                ))
            }
            _ => None,
        }
    }

    /// Where the stack `id` was written: the path it took, the writing
    /// loop, the value written each iteration and the index it is written
    /// at (both in the writer's body).
    fn stack_source(
        &self,
        module: &Module,
        comp: CompId,
        id: InstrId,
    ) -> Option<(Vec<Hop>, Site, Site, Site)> {
        let mut path = Vec::new();
        let (mut comp, mut id) = (comp, id);
        for _ in 0..MAX_STEPS {
            let c = module.comp(comp);
            id = strip_identity(c, id);
            let i = c.instr(id);
            match i.opcode {
                Opcode::Parameter if !i.shape.is_tuple() => {
                    let site = self.only_caller(comp, Role::Call)?;
                    let n = usize::try_from(i.parameter_number()?).ok()?;
                    let operand = *module.comp(site.comp).instr(site.instr).operands().get(n)?;
                    path.push(Hop::CallOperand(site));
                    (comp, id) = (site.comp, operand);
                }
                Opcode::GetTupleElement => {
                    let n = tuple_index(c, id)?;
                    let tuple = strip_identity(c, i.operand(0));
                    match c.instr(tuple).opcode {
                        Opcode::Parameter => {
                            let site = self.loop_of_body(comp)?;
                            if !passes_through(c, tuple, n) {
                                return None;
                            }
                            let init = element(module.comp(site.comp), loop_init(module, site), n)?;
                            path.push(Hop::LoopInvariant(site));
                            (comp, id) = (site.comp, init);
                        }
                        Opcode::While => {
                            let writer = at(comp, tuple);
                            let body_id = c.instr(tuple).attr("body").and_then(|a| match a {
                                AttrValue::Comp(b) => Some(*b),
                                _ => None,
                            })?;
                            let body = module.get_comp(body_id)?;
                            let w = element(body, body.root_opt()?, n)?;
                            let write = stack_write(module, body, w)?;
                            if !is_state_element(body, write.stack, n) {
                                return None;
                            }
                            return Some((
                                path,
                                writer,
                                at(body_id, write.value),
                                at(body_id, write.index),
                            ));
                        }
                        _ => return None,
                    }
                }
                _ => return None,
            }
        }
        None
    }

    /// Every use of `start` (a value of `comp`) and of every copy of it the
    /// plumbing hands on: the uses that compute with it, the places the
    /// plumbing passes through, and the copies themselves. `skip` uses of
    /// `start` itself are left out.
    pub fn uses(&self, module: &Module, comp: CompId, start: InstrId, skip: &[InstrId]) -> Uses {
        let mut out = Uses::default();
        let mut work = vec![(Kind::Value, at(comp, start))];
        let mut seen = Vec::new();
        while let Some((kind, v)) = work.pop() {
            if seen.contains(&(kind, v)) || seen.len() > MAX_STEPS {
                continue;
            }
            seen.push((kind, v));
            if v != at(comp, start) {
                out.aliases.push((kind == Kind::Stack, v));
            }
            let c = module.comp(v.comp);
            for &u in c.instr(v.instr).users() {
                if v == at(comp, start) && skip.contains(&u) {
                    continue;
                }
                self.follow(module, kind, v, u, &mut work, &mut out);
            }
            if c.root_opt() == Some(v.instr) {
                // The result of a called computation is the call's value.
                match self.only_caller(v.comp, Role::Call) {
                    Some(site) => work.push((kind, site)),
                    None => out.terminal.push(v),
                }
            }
        }
        out
    }

    /// Follows the use `u` of `v` one step of plumbing, or records it.
    fn follow(
        &self,
        module: &Module,
        kind: Kind,
        v: Site,
        u: InstrId,
        work: &mut Vec<(Kind, Site)>,
        out: &mut Uses,
    ) {
        let c = module.comp(v.comp);
        let ui = c.instr(u);
        let here = |id| at(v.comp, id);
        if is_identity(c, u) {
            work.push((kind, here(u)));
            return;
        }
        // A stack write of the value, or a slice read of the stack.
        if kind == Kind::Value {
            if let Some((l, n, stack)) = self.written_stack(module, v, u) {
                out.plumbing.push(Element(l, Part::LoopElement, n));
                work.extend(stack.into_iter().map(|s| (Kind::Stack, s)));
                return;
            }
        } else if let Some(read) = stack_read_of(module, c, v.instr, u) {
            work.push((Kind::Value, here(read)));
            return;
        }
        match ui.opcode {
            Opcode::Call => {
                let Some(callee) = ui.to_apply() else {
                    return out.terminal.push(here(u));
                };
                if self.only_caller(callee, Role::Call) != Some(here(u)) {
                    return out.terminal.push(here(u));
                }
                let g = module.comp(callee);
                for (n, &op) in ui.operands().iter().enumerate() {
                    if op == v.instr {
                        out.plumbing.push(Element(here(u), Part::CallParameter, n));
                        match g.parameters().get(n) {
                            Some(&p) => work.push((kind, at(callee, p))),
                            None => out.terminal.push(here(u)),
                        }
                    }
                }
            }
            Opcode::Tuple => self.follow_tuple(module, kind, v, u, work, out),
            _ => out.terminal.push(here(u)),
        }
    }

    /// `v` is an element of the tuple `u`: follow it to where the tuple
    /// goes (a call's result, a loop's state).
    fn follow_tuple(
        &self,
        module: &Module,
        kind: Kind,
        v: Site,
        u: InstrId,
        work: &mut Vec<(Kind, Site)>,
        out: &mut Uses,
    ) {
        let c = module.comp(v.comp);
        let positions: Vec<usize> = c
            .instr(u)
            .operands()
            .iter()
            .enumerate()
            .filter(|(_, &op)| op == v.instr)
            .map(|(n, _)| n)
            .collect();
        let here = at(v.comp, u);
        if c.root_opt() == Some(u) && self.loop_of_body(v.comp).is_some() {
            // A loop body handing its own state element on unchanged: the
            // element was followed in when the loop was entered.
            let param = c.parameters().first().copied();
            let handed_on = positions.iter().all(|&n| {
                tuple_index(c, v.instr) == Some(n)
                    && Some(strip_identity(c, c.instr(v.instr).operand(0))) == param
            });
            if !handed_on {
                out.terminal.push(here);
            }
            return;
        }
        if c.root_opt() == Some(u) {
            // The result of a called computation.
            let Some(site) = self.only_caller(v.comp, Role::Call) else {
                return out.terminal.push(here);
            };
            out.plumbing.extend(
                positions
                    .iter()
                    .map(|&n| Element(site, Part::CallResult, n)),
            );
            let caller = module.comp(site.comp);
            for &g in caller.instr(site.instr).users() {
                match tuple_index(caller, g) {
                    Some(n) if positions.contains(&n) => work.push((kind, at(site.comp, g))),
                    Some(_) => {}
                    None => out.terminal.push(at(site.comp, g)),
                }
            }
            return;
        }
        // The initial state of a loop the value passes through unchanged.
        let loops: Vec<InstrId> = c
            .instr(u)
            .users()
            .iter()
            .copied()
            .filter(|&l| c.instr(l).opcode == Opcode::While)
            .collect();
        let [l] = loops[..] else {
            return out.terminal.push(here);
        };
        if c.instr(u).users().len() != 1 || c.instr(l).operands() != [u] {
            return out.terminal.push(here);
        }
        let site = at(v.comp, l);
        out.plumbing.extend(
            positions
                .iter()
                .map(|&n| Element(site, Part::LoopElement, n)),
        );
        for (key, role) in [
            ("body", Role::WhileBody),
            ("condition", Role::WhileCondition),
        ] {
            let Some(AttrValue::Comp(callee)) = c.instr(l).attr(key) else {
                return out.terminal.push(site);
            };
            let g = module.comp(*callee);
            let found = match role {
                Role::WhileBody => self.loop_of_body(*callee),
                _ => self.loop_of_condition(*callee),
            };
            let Some(&param) = g.parameters().first() else {
                continue;
            };
            if found != Some(site) {
                return out.terminal.push(site);
            }
            for &gte in g.instr(param).users() {
                match tuple_index(g, gte) {
                    Some(n) if positions.contains(&n) => {
                        if role == Role::WhileBody && !passes_through(g, param, n) {
                            return out.terminal.push(at(*callee, gte));
                        }
                        work.push((kind, at(*callee, gte)));
                    }
                    Some(_) => {}
                    None => out.terminal.push(at(*callee, gte)),
                }
            }
        }
        for &g in c.instr(l).users() {
            match tuple_index(c, g) {
                Some(n) if positions.contains(&n) => work.push((kind, at(v.comp, g))),
                Some(_) => {}
                None => out.terminal.push(at(v.comp, g)),
            }
        }
    }

    /// If `u` writes the value `v` into a loop's residual stack (directly,
    /// through a reshape, or by a call of a small writer computation): the
    /// stack as the loop's users read it.
    fn written_stack(
        &self,
        module: &Module,
        v: Site,
        u: InstrId,
    ) -> Option<(Site, usize, Vec<Site>)> {
        let c = module.comp(v.comp);
        let writes: Vec<InstrId> = match stack_write(module, c, u) {
            Some(w) if w.value == v.instr => vec![u],
            _ => {
                let ui = c.instr(u);
                if !matches!(
                    ui.opcode,
                    Opcode::Reshape | Opcode::Bitcast | Opcode::Broadcast
                ) {
                    return None;
                }
                let ws: Vec<InstrId> = ui.users().to_vec();
                let all = ws
                    .iter()
                    .all(|&w| stack_write(module, c, w).is_some_and(|s| s.value == v.instr));
                if ws.is_empty() || !all {
                    return None;
                }
                ws
            }
        };
        let site = self.loop_of_body(v.comp)?;
        let root = c.root_opt()?;
        let mut out = Vec::new();
        let [w] = writes[..] else {
            return None;
        };
        {
            let write = stack_write(module, c, w)?;
            if c.instr(w).users() != [root] {
                return None;
            }
            let n = c.instr(root).operands().iter().position(|&o| o == w)?;
            if !is_state_element(c, write.stack, n) {
                return None;
            }
            let parent = module.comp(site.comp);
            for &g in parent.instr(site.instr).users() {
                if tuple_index(parent, g) == Some(n) {
                    out.push(at(site.comp, g));
                }
            }
            Some((site, n, out))
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// One iteration's value.
    Value,
    /// A stack of them.
    Stack,
}

/// What [`Flow::uses`] found.
#[derive(Clone, Debug, Default)]
pub struct Uses {
    /// Uses that compute with the value (or hand it somewhere this module
    /// does not follow): each is a consumer.
    pub terminal: Vec<Site>,
    /// The loop state elements, call results and parameters the value
    /// passes through.
    pub plumbing: Vec<Element>,
    /// The copies the plumbing made of it (`true`: a whole stack).
    pub aliases: Vec<(bool, Site)>,
}

fn at(comp: CompId, instr: InstrId) -> Site {
    Site { comp, instr }
}

/// `gte(t), index=n`: n.
fn tuple_index(c: &Computation, id: InstrId) -> Option<usize> {
    let i = c.instr(id);
    if i.opcode != Opcode::GetTupleElement {
        return None;
    }
    usize::try_from(i.int_attr("index")?).ok()
}

/// An op that hands its operand on unchanged: a copy, or a reshape or
/// bitcast to the same dimensions and type.
fn is_identity(c: &Computation, id: InstrId) -> bool {
    let i = c.instr(id);
    let [op] = i.operands()[..] else {
        return false;
    };
    let o = c.instr(op);
    match i.opcode {
        Opcode::Copy => true,
        Opcode::Reshape | Opcode::Bitcast => {
            !i.shape.is_tuple()
                && i.shape.dims() == o.shape.dims()
                && i.shape.element_type() == o.shape.element_type()
        }
        _ => false,
    }
}

fn strip_identity(c: &Computation, mut id: InstrId) -> InstrId {
    while is_identity(c, id) {
        id = c.instr(id).operand(0);
    }
    id
}

/// Element `n` of the tuple value `t`: the operand of a tuple instruction.
fn element(c: &Computation, t: InstrId, n: usize) -> Option<InstrId> {
    let t = strip_identity(c, t);
    let ti = c.instr(t);
    (ti.opcode == Opcode::Tuple)
        .then(|| ti.operands().get(n).copied())
        .flatten()
}

fn loop_init(module: &Module, site: Site) -> InstrId {
    module.comp(site.comp).instr(site.instr).operand(0)
}

/// Whether the loop body (whose state parameter is `param`) hands element
/// `n` of its state on unchanged.
fn passes_through(body: &Computation, param: InstrId, n: usize) -> bool {
    let Some(root) = body.root_opt() else {
        return false;
    };
    element(body, root, n).is_some_and(|out| {
        let out = strip_identity(body, out);
        tuple_index(body, out) == Some(n)
            && strip_identity(body, body.instr(out).operand(0)) == param
    })
}

/// Whether `stack` is element `n` of the body's own state parameter.
fn is_state_element(body: &Computation, stack: InstrId, n: usize) -> bool {
    let stack = strip_identity(body, stack);
    tuple_index(body, stack) == Some(n) && {
        let t = strip_identity(body, body.instr(stack).operand(0));
        body.instr(t).opcode == Opcode::Parameter
    }
}

/// Whether every index operand after the first is the constant 0.
fn zero_indices(module: &Module, c: &Computation, indices: &[InstrId]) -> bool {
    indices
        .iter()
        .all(|&i| c.instr(i).shape.rank() == 0 && is_scalar_constant(module, c, i, 0.0))
}

/// A stack write `dynamic-update-slice(stack, reshape(value), index, 0, ..)`
/// that stores `value` as slice `index` of dimension 0.
struct StackWrite {
    stack: InstrId,
    value: InstrId,
    index: InstrId,
}

/// `id` as a stack write: inline, or a call of a computation that is one.
fn stack_write(module: &Module, c: &Computation, id: InstrId) -> Option<StackWrite> {
    let i = c.instr(id);
    match i.opcode {
        Opcode::DynamicUpdateSlice => {
            let [stack, update, index, ref rest @ ..] = i.operands()[..] else {
                return None;
            };
            let u = c.instr(update);
            let value = match u.opcode {
                Opcode::Reshape | Opcode::Bitcast | Opcode::Broadcast
                    if u.operands().len() == 1 =>
                {
                    u.operand(0)
                }
                _ => return None,
            };
            let (s, u, v) = (
                c.instr(stack).shape.dims(),
                u.shape.dims(),
                c.instr(value).shape.dims(),
            );
            let is_slice = s.len() == v.len() + 1
                && u.first() == Some(&1)
                && u.get(1..) == Some(v)
                && s.get(1..) == Some(v)
                && c.instr(update).shape.element_type() == c.instr(value).shape.element_type()
                && broadcast_adds_leading_dim(c, update);
            (is_slice && zero_indices(module, c, rest)).then_some(StackWrite {
                stack,
                value,
                index,
            })
        }
        Opcode::Call => {
            let g = module.get_comp(i.to_apply()?)?;
            let w = stack_write(module, g, g.root_opt()?)?;
            let param_of = |id: InstrId| -> Option<usize> {
                usize::try_from(g.instr(strip_identity(g, id)).parameter_number()?).ok()
            };
            let operand =
                |id: InstrId| -> Option<InstrId> { i.operands().get(param_of(id)?).copied() };
            Some(StackWrite {
                stack: operand(w.stack)?,
                value: operand(w.value)?,
                index: operand(w.index)?,
            })
        }
        _ => None,
    }
}

/// A broadcast update must put the value's dimensions after the new one.
fn broadcast_adds_leading_dim(c: &Computation, update: InstrId) -> bool {
    let u = c.instr(update);
    u.opcode != Opcode::Broadcast
        || u.dimensions()
            .is_some_and(|d| d.iter().enumerate().all(|(k, &dim)| dim == k as i64 + 1))
}

/// `id` as a stack read `reshape(dynamic-slice(stack, index, 0, ..))` of
/// slice `index` (inline, or a call of a computation that is one): the
/// stack and the index.
fn stack_read(module: &Module, c: &Computation, id: InstrId) -> Option<(InstrId, InstrId)> {
    let i = c.instr(id);
    match i.opcode {
        Opcode::Reshape => {
            let ds = i.operand(0);
            let d = c.instr(ds);
            let [stack, index, ref rest @ ..] = d.operands()[..] else {
                return None;
            };
            let s = c.instr(stack).shape.dims();
            let is_slice = d.opcode == Opcode::DynamicSlice
                && d.users().len() == 1
                && d.shape.dims().first() == Some(&1)
                && d.shape.dims().get(1..) == s.get(1..)
                && s.get(1..) == Some(i.shape.dims())
                && zero_indices(module, c, rest);
            is_slice.then_some((stack, index))
        }
        Opcode::Call => {
            let g = module.get_comp(i.to_apply()?)?;
            let (stack, index) = stack_read(module, g, g.root_opt()?)?;
            let operand = |id: InstrId| -> Option<InstrId> {
                let n = usize::try_from(g.instr(strip_identity(g, id)).parameter_number()?).ok()?;
                i.operands().get(n).copied()
            };
            Some((operand(stack)?, operand(index)?))
        }
        _ => None,
    }
}

/// If `u` reads a slice of the stack `stack`: the value read (the reshape,
/// or the call).
fn stack_read_of(module: &Module, c: &Computation, stack: InstrId, u: InstrId) -> Option<InstrId> {
    let ui = c.instr(u);
    let read = match ui.opcode {
        Opcode::DynamicSlice => match ui.users()[..] {
            [r] => r,
            _ => return None,
        },
        _ => u,
    };
    let (s, _) = stack_read(module, c, read)?;
    (s == stack).then_some(read)
}

/// A loop state element, call result or call parameter (by index).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Element(Site, Part, usize);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Part {
    LoopElement,
    CallResult,
    CallParameter,
}

/// Removes the loop state elements, call results and parameters that
/// carried a value a rewrite no longer reads, the instructions that die
/// with them, and the computations no longer called. Only the elements it
/// is given are touched, and only once nothing reads them.
pub struct Pruner {
    /// Per loop or call and kind of element: whether each is one to prune.
    chosen: HashMap<(Site, Part), Vec<bool>>,
    called_before: Vec<CompId>,
}

impl Pruner {
    pub fn new(module: &Module, elements: &[Element]) -> Pruner {
        let mut chosen: HashMap<(Site, Part), Vec<bool>> = HashMap::new();
        for &Element(site, part, k) in elements {
            let flags = chosen
                .entry((site, part))
                .or_insert_with(|| vec![false; part_count(module, site, part)]);
            if let Some(f) = flags.get_mut(k) {
                *f = true;
            }
        }
        Pruner {
            chosen,
            called_before: Flow::new(module).callers.keys().copied().collect(),
        }
    }

    /// Removes what is unread now; returns how many elements.
    pub fn prune(mut self, module: &mut Module) -> usize {
        let mut removed = 0;
        let mut keys: Vec<(Site, Part)> = self.chosen.keys().copied().collect();
        keys.sort();
        loop {
            let before = removed;
            let flow = Flow::new(module);
            for &(site, part) in &keys {
                let live = module
                    .get_comp(site.comp)
                    .and_then(|c| c.get(site.instr))
                    .is_some();
                let Some(flags) = self.chosen.get_mut(&(site, part)) else {
                    continue;
                };
                if !live {
                    continue;
                }
                for k in (0..flags.len()).rev() {
                    if flags[k] && is_dead(module, &flow, site, part, k) {
                        remove_part(module, site, part, k);
                        flags.remove(k);
                        removed += 1;
                    }
                }
            }
            if removed == before {
                break;
            }
        }
        let flow = Flow::new(module);
        let uncalled: Vec<CompId> = self
            .called_before
            .into_iter()
            .filter(|id| !flow.callers.contains_key(id) && Some(*id) != module.entry_opt())
            .collect();
        module.remove_computations(&uncalled);
        removed
    }
}

/// How many loop elements, call results or parameters `site` has.
fn part_count(module: &Module, site: Site, part: Part) -> usize {
    let c = module.comp(site.comp);
    let i = c.instr(site.instr);
    match (i.opcode, part) {
        (Opcode::While, Part::LoopElement) => i.shape.tuple_elements().map_or(0, <[Shape]>::len),
        (Opcode::Call, Part::CallResult) => i.shape.tuple_elements().map_or(0, <[Shape]>::len),
        (Opcode::Call, Part::CallParameter) => i.operands().len(),
        _ => 0,
    }
}

/// Whether element `k` of `part` at `site` is unread (and may be removed).
fn is_dead(module: &Module, flow: &Flow, site: Site, part: Part, k: usize) -> bool {
    match part {
        Part::LoopElement => dead_loop_element(module, flow, site, k).is_some(),
        Part::CallResult | Part::CallParameter => {
            let c = module.comp(site.comp);
            let Some(callee) = c.instr(site.instr).to_apply() else {
                return false;
            };
            if flow.only_caller(callee, Role::Call) != Some(site) {
                return false;
            }
            let g = module.comp(callee);
            if part == Part::CallParameter {
                return g
                    .parameters()
                    .get(k)
                    .is_some_and(|&p| g.instr(p).users().is_empty());
            }
            let root_tuple = g.root_opt().is_some_and(|r| {
                g.instr(r).opcode == Opcode::Tuple && g.instr(r).users().is_empty()
            });
            root_tuple && all_users_are_elements(c, site.instr) && !result_read(c, site.instr, k)
        }
    }
}

fn remove_part(module: &mut Module, site: Site, part: Part, k: usize) {
    let c = module.comp(site.comp);
    match part {
        Part::LoopElement => {
            if let Some(parts) = loop_parts(c, site.instr) {
                remove_loop_element(module, site, parts, k);
            }
        }
        Part::CallResult | Part::CallParameter => {
            let Some(callee) = c.instr(site.instr).to_apply() else {
                return;
            };
            if part == Part::CallResult {
                remove_call_result(module, site, callee, k);
            } else {
                remove_call_parameter(module, site, callee, k);
            }
        }
    }
}

fn all_users_are_elements(c: &Computation, id: InstrId) -> bool {
    c.instr(id)
        .users()
        .iter()
        .all(|&u| tuple_index(c, u).is_some())
}

/// Whether any `gte(id), index=k` is used (or is the root).
fn result_read(c: &Computation, id: InstrId, k: usize) -> bool {
    c.instr(id).users().iter().any(|&g| {
        tuple_index(c, g) == Some(k) && (!c.instr(g).users().is_empty() || c.root_opt() == Some(g))
    })
}

/// A loop's condition and body.
fn loop_parts(c: &Computation, l: InstrId) -> Option<(CompId, CompId)> {
    let i = c.instr(l);
    let comp_of = |key| match i.attr(key) {
        Some(AttrValue::Comp(id)) => Some(*id),
        _ => None,
    };
    Some((comp_of("condition")?, comp_of("body")?))
}

/// Whether element `k` of a loop's state is dead: nothing after the loop
/// and nothing in the condition reads it, and the body only hands it on
/// (unchanged, or as a stack it writes a slice of). Then: the condition
/// and body.
fn dead_loop_element(
    module: &Module,
    flow: &Flow,
    site: Site,
    k: usize,
) -> Option<(CompId, CompId)> {
    let c = module.comp(site.comp);
    let (cond_id, body_id) = loop_parts(c, site.instr)?;
    let [init] = c.instr(site.instr).operands()[..] else {
        return None;
    };
    let owned_init = c.instr(init).opcode == Opcode::Tuple && c.instr(init).users() == [site.instr];
    let alone =
        flow.loop_of_body(body_id) == Some(site) && flow.loop_of_condition(cond_id) == Some(site);
    if !owned_init
        || !alone
        || result_read(c, site.instr, k)
        || !all_users_are_elements(c, site.instr)
    {
        return None;
    }
    let cond = module.comp(cond_id);
    let &cp = cond.parameters().first()?;
    if !all_users_are_elements(cond, cp) || result_read(cond, cp, k) {
        return None;
    }
    let body = module.comp(body_id);
    let &bp = body.parameters().first()?;
    let root = body.root_opt()?;
    if body.instr(root).opcode != Opcode::Tuple || !all_users_are_elements(body, bp) {
        return None;
    }
    let &out = body.instr(root).operands().get(k)?;
    if body.instr(out).users() != [root] {
        return None;
    }
    let reads: Vec<InstrId> = body
        .instr(bp)
        .users()
        .iter()
        .copied()
        .filter(|&g| tuple_index(body, g) == Some(k))
        .collect();
    let hands_on = reads.contains(&out)
        || stack_write(module, body, out).is_some_and(|w| reads.contains(&w.stack));
    let only_handed_on = reads
        .iter()
        .all(|&g| g == out || body.instr(g).users() == [out]);
    (hands_on && only_handed_on).then_some((cond_id, body_id))
}

/// `shape` without tuple element `k`.
fn without_element(shape: &Shape, k: usize) -> Arc<Shape> {
    let mut elements = shape
        .tuple_elements()
        .map(<[Shape]>::to_vec)
        .unwrap_or_default();
    if k < elements.len() {
        elements.remove(k);
    }
    Arc::new(Shape::Tuple(elements))
}

/// Drops element `k` from the users `gte(id)`: the ones reading it must
/// be unused (they are removed), the later ones are renumbered.
fn renumber_elements(c: &mut Computation, id: InstrId, k: usize) {
    let users: Vec<InstrId> = c.instr(id).users().to_vec();
    for g in users {
        match tuple_index(c, g) {
            Some(n) if n > k => c
                .instr_mut(g)
                .set_attr("index", AttrValue::Int(n as i64 - 1)),
            Some(n) if n == k => {
                c.remove_with_dead_operands(g);
            }
            _ => {}
        }
    }
}

/// Removes operand `k` of the tuple `t`, and what died with it.
fn remove_tuple_operand(c: &mut Computation, t: InstrId, k: usize) -> Arc<Shape> {
    let old = c.instr(t).operand(k);
    c.remove_operand(t, k);
    let shape = without_element(&c.instr(t).shape, k);
    c.instr_mut(t).shape = shape.clone();
    c.remove_with_dead_operands(old);
    shape
}

fn remove_loop_element(module: &mut Module, site: Site, parts: (CompId, CompId), k: usize) {
    let (cond, body) = parts;
    for g in [body, cond] {
        let gc = module.comp_mut(g);
        if g == body {
            if let Some(root) = gc.root_opt() {
                remove_tuple_operand(gc, root, k);
            }
        }
        if let Some(&param) = gc.parameters().first() {
            renumber_elements(gc, param, k);
            let shape = without_element(&gc.instr(param).shape, k);
            gc.instr_mut(param).shape = shape;
        }
    }
    let c = module.comp_mut(site.comp);
    let init = c.instr(site.instr).operand(0);
    let shape = remove_tuple_operand(c, init, k);
    c.instr_mut(site.instr).shape = shape;
    renumber_elements(c, site.instr, k);
}

fn remove_call_result(module: &mut Module, site: Site, callee: CompId, k: usize) {
    let g = module.comp_mut(callee);
    let Some(root) = g.root_opt() else { return };
    let shape = remove_tuple_operand(g, root, k);
    let c = module.comp_mut(site.comp);
    c.instr_mut(site.instr).shape = shape;
    renumber_elements(c, site.instr, k);
}

fn remove_call_parameter(module: &mut Module, site: Site, callee: CompId, k: usize) {
    let g = module.comp_mut(callee);
    let params = g.parameters();
    let Some(&dead) = params.get(k) else { return };
    g.remove_unused_parameter(dead);
    for (n, &p) in params.iter().enumerate().skip(k + 1) {
        g.instr_mut(p).payload = crate::ir::Payload::Parameter(n as i64 - 1);
    }
    let c = module.comp_mut(site.comp);
    let old = c.instr(site.instr).operand(k);
    c.remove_operand(site.instr, k);
    c.remove_with_dead_operands(old);
}
