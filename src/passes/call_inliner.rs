//! `call-inliner` (order 40): inlines the calls of small pure expressions,
//! so that the raises after it see the pattern a call would split. XLA's
//! `CallInliner`, restricted (`docs/contract.md`, "call-inliner").
//!
//! before => after:
//! `r = f32[8] call(m, x, c), to_apply=_where` with
//! `_where { ... ROOT s = select(m', x', broadcast(c')) }` =>
//! the callee's instructions cloned into the caller in its place
//! (`select(m, x, broadcast(c))`, names made unique), the callee removed
//! once nothing calls it.
//!
//! JAX lowers `jnp.where`, `clip`, `remainder`, ... as a `call` of a small
//! private computation (`_where`, `_where_0`, ...; one callee may serve
//! several calls). Only such calls are inlined: the callee's instructions
//! other than parameters are at most [`MAX_BODY`], each a parameter,
//! constant, iota, broadcast, reshape, transpose, convert, select, clamp,
//! compare, an elementwise op, or a tuple (the root of a callee with
//! several results). A call with a bigger body, or one that computes
//! anything else (a reduce, a dot, a loop, another call, a custom call, a
//! collective, RNG), is the user's structure and stays, and the report
//! says why. As XLA's inliner, a call with a `backend_config`, a
//! `frontend_attributes` `inlineable="false"` or control dependencies is
//! left alone; composites (`is_composite=true`) are too.
//!
//! The call's uses move to the cloned root (XLA's `ReplaceInstruction`);
//! a `get-tuple-element` of a cloned root tuple reads the element itself.
//! The cloned instructions' `op_name` gets the call's as a prefix, as in
//! XLA. Callees nothing calls any more are removed, as XLA's inliner does
//! (it runs dead-code elimination after inlining); unlike it, no other
//! dead code is touched.

use super::{OriginalScope, Pass, PassContext, PassError};
use crate::ir::attrs::{typed, OpMetadata};
use crate::ir::{AttrValue, CompId, Computation, InstrId, Instruction, Module, Opcode};
use crate::util::FxSet;

pub const NAME: &str = "call-inliner";

/// The most instructions (parameters not counted) a callee may have to be
/// inlined: `_where` has 2 to 6, `clip` and `remainder` under 12.
pub const MAX_BODY: usize = 16;

pub struct CallInliner;

impl Pass for CallInliner {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run(&mut self, module: &mut Module, ctx: &mut PassContext) -> Result<bool, PassError> {
        let mut inlined_from: Vec<CompId> = Vec::new();
        let mut inlined_seen = FxSet::default();
        // Callees come first: a callee whose own calls were inlined may then
        // be inlined into its callers.
        for comp in ctx.computations(module, OriginalScope::Every) {
            if !module.comp(comp).may_contain(Opcode::Call) {
                continue;
            }
            let calls: Vec<(InstrId, CompId)> = {
                let c = module.comp(comp);
                // Once per computation, not per call: a computation may
                // hold tens of thousands of calls.
                let control_predecessors: FxSet<InstrId> = c
                    .instructions()
                    .flat_map(|(_, u)| u.control_predecessors().iter().copied())
                    .collect();
                let mut found = Vec::new();
                for id in c.post_order() {
                    if c.instr(id).opcode != Opcode::Call {
                        continue;
                    }
                    match check(module, c, id, &control_predecessors) {
                        Ok(callee) => found.push((id, callee)),
                        Err(reason) => ctx.skipped(module, comp, id, reason),
                    }
                }
                found
            };
            for (call, callee) in calls {
                let body = module.comp(callee);
                let detail = format!(
                    "call of {} inlined ({} instructions)",
                    body.name,
                    body_size(body)
                );
                ctx.rewrote(module, comp, call, detail);
                inline(module, comp, call, callee);
                if inlined_seen.insert(callee) {
                    inlined_from.push(callee);
                }
            }
        }
        remove_uncalled(module, &inlined_from);
        Ok(!inlined_from.is_empty())
    }
}

/// The callee of `call` when the call is to be inlined; else why not.
/// `control_predecessors`: the instructions of `c` that are one.
fn check(
    module: &Module,
    c: &Computation,
    call: InstrId,
    control_predecessors: &FxSet<InstrId>,
) -> Result<CompId, String> {
    let i = c.instr(call);
    let callee = i.to_apply().filter(|&id| module.get_comp(id).is_some());
    let Some(callee) = callee.filter(|&id| !std::ptr::eq(module.comp(id), c)) else {
        return Err("the call names no computation".into());
    };
    let body = module.comp(callee);
    let name = &body.name;
    if !i.backend_config().is_empty() {
        return Err(format!(
            "the call of {name} has a backend_config (XLA's inliner keeps it too)"
        ));
    }
    if matches!(i.attr("is_composite"), Some(AttrValue::Bool(true))) {
        return Err(format!("the call of {name} is a composite"));
    }
    if let Some(AttrValue::FrontendAttributes(f)) = i.attr("frontend_attributes") {
        let pinned = f
            .entries
            .iter()
            .any(|(k, v)| &**k == "inlineable" && &**v != "true");
        if pinned {
            return Err(format!("the call of {name} is marked inlineable=false"));
        }
    }
    if !i.control_predecessors().is_empty() || control_predecessors.contains(&call) {
        return Err(format!("the call of {name} has control dependencies"));
    }
    let params = body.parameters();
    let numbered = params.iter().all(|&p| {
        body.instr(p)
            .parameter_number()
            .and_then(|n| usize::try_from(n).ok())
            .is_some_and(|n| n < i.operands().len())
    });
    if params.len() != i.operands().len() || !numbered {
        return Err(format!(
            "the call passes {} operands to {name}, which has {} parameters",
            i.operands().len(),
            params.len()
        ));
    }
    let size = body_size(body);
    if size > MAX_BODY {
        return Err(format!(
            "{name} has {size} instructions, more than the {MAX_BODY} of a small expression; \
             the call is left as the user wrote it"
        ));
    }
    let Some(root) = body.root_opt() else {
        return Err(format!("{name} has no root"));
    };
    for (id, b) in body.instructions() {
        if !b.control_predecessors().is_empty() {
            return Err(format!("{name} has control dependencies"));
        }
        if b.opcode == Opcode::Tuple && id != root {
            return Err(format!("{name} builds a tuple other than its result"));
        }
        if !is_pure_expression(b.opcode) {
            return Err(format!(
                "{name} computes {} ({}), not only an elementwise expression; \
                 the call is left as the user wrote it",
                b.opcode, b.name
            ));
        }
    }
    Ok(callee)
}

/// What a small pure expression is made of.
fn is_pure_expression(op: Opcode) -> bool {
    use Opcode::*;
    op.is_elementwise_unary()
        || op.is_elementwise_binary()
        || matches!(
            op,
            Parameter
                | Constant
                | Iota
                | Broadcast
                | Reshape
                | Transpose
                | Convert
                | Select
                | Clamp
                | Compare
                | Tuple
        )
}

fn body_size(body: &Computation) -> usize {
    body.instructions()
        .filter(|(_, i)| i.opcode != Opcode::Parameter)
        .count()
}

/// Clones `callee` into `comp` in place of `call`.
fn inline(module: &mut Module, comp: CompId, call: InstrId, callee: CompId) {
    let (operands, prefix) = {
        let i = module.comp(comp).instr(call);
        let prefix = match i.attr("metadata") {
            Some(AttrValue::Metadata(m)) => m.op_name.to_string(),
            _ => String::new(),
        };
        (i.operands().to_vec(), prefix)
    };
    let body = module.comp(callee);
    let order = body.post_order();
    let root = body.root();
    let clones: Vec<(InstrId, Option<Instruction>, Option<i64>)> = order
        .iter()
        .map(|&id| {
            let b = body.instr(id);
            match b.opcode {
                Opcode::Parameter => (id, None, b.parameter_number()),
                _ => (id, Some(b.clone()), None),
            }
        })
        .collect();
    // Callee instruction -> its value in the caller.
    let mut mapped: Vec<(InstrId, InstrId)> = Vec::with_capacity(clones.len());
    let lookup = |mapped: &[(InstrId, InstrId)], id: InstrId| {
        mapped
            .iter()
            .find(|(from, _)| *from == id)
            .map(|&(_, to)| to)
            .expect("post order maps operands first")
    };
    for (id, instr, param) in clones {
        let to = match (instr, param) {
            (None, Some(n)) => operands[usize::try_from(n).expect("checked numbered")],
            (Some(b), _) => {
                let ops: Vec<InstrId> = b.operands().iter().map(|&o| lookup(&mapped, o)).collect();
                let mut clone = b.clone_with_operands(ops);
                prefix_op_name(&mut clone, &prefix);
                module.add_instruction(comp, clone)
            }
            (None, None) => unreachable!("a parameter has a number"),
        };
        mapped.push((id, to));
    }
    let new_root = lookup(&mapped, root);
    // A get-tuple-element of the cloned result tuple reads the element.
    if module.comp(comp).instr(new_root).opcode == Opcode::Tuple {
        let c = module.comp(comp);
        let elements = c.instr(new_root).operands().to_vec();
        let reads: Vec<(InstrId, InstrId)> = c
            .instr(call)
            .users()
            .iter()
            .filter_map(|&u| {
                let ui = c.instr(u);
                let k = ui.int_attr("index")?;
                (ui.opcode == Opcode::GetTupleElement && c.root_opt() != Some(u))
                    .then(|| elements.get(usize::try_from(k).ok()?).map(|&e| (u, e)))
                    .flatten()
            })
            .collect();
        let cm = module.comp_mut(comp);
        for (gte, element) in reads {
            cm.replace_all_uses(gte, element);
            // The call dies with its last get-tuple-element.
            cm.remove_with_dead_operands(gte);
        }
    }
    let cm = module.comp_mut(comp);
    if cm.is_live(call) {
        module.replace_instruction(comp, call, new_root);
    } else if cm.instr(new_root).users().is_empty() && cm.root_opt() != Some(new_root) {
        // Every element was read: the cloned tuple itself is unused.
        cm.remove_with_dead_operands(new_root);
    }
}

/// XLA's inliner prefixes the inlined instructions' `op_name` with the
/// call's.
fn prefix_op_name(instr: &mut Instruction, prefix: &str) {
    if prefix.is_empty() {
        return;
    }
    let mut m = match instr.attr("metadata") {
        Some(AttrValue::Metadata(m)) => m.value().clone(),
        _ => OpMetadata::default(),
    };
    m.op_name = if m.op_name.is_empty() {
        prefix.into()
    } else {
        format!("{prefix}/{}", m.op_name).into()
    };
    instr.set_generic_attr("metadata", AttrValue::Metadata(typed(m)));
}

/// Removes the callees in `candidates` that nothing calls any more.
fn remove_uncalled(module: &mut Module, candidates: &[CompId]) {
    if candidates.is_empty() {
        return;
    }
    let mut called = FxSet::default();
    for (_, c) in module.computations() {
        for (_, i) in c.instructions() {
            called.extend(i.called_computations());
        }
    }
    let uncalled: Vec<CompId> = candidates
        .iter()
        .copied()
        .filter(|id| !called.contains(id))
        .collect();
    module.remove_computations(&uncalled);
}

#[cfg(test)]
mod tests {
    use crate::passes::Pipeline;

    /// A chain of `n` calls, each of its own small callee.
    fn calls(n: usize) -> String {
        let mut t = String::from("HloModule m\n\n");
        for i in 0..n {
            t += &format!(
                "c{i} {{\n  p{i} = f32[8]{{0}} parameter(0)\n  ROOT q{i} = f32[8]{{0}} negate(p{i})\n}}\n\n"
            );
        }
        t += "ENTRY e {\n  x = f32[8]{0} parameter(0)\n";
        let mut last = "x".to_string();
        for i in 0..n {
            t += &format!("  k{i} = f32[8]{{0}} call({last}), to_apply=c{i}\n");
            last = format!("k{i}");
        }
        t + &format!("  ROOT r = f32[8]{{0}} negate({last})\n}}\n")
    }

    #[test]
    fn many_calls_inline_in_time_linear_in_them() {
        // Each call's check once read every instruction of its caller, and
        // each callee's removal the whole computation order: 64,000 calls
        // took 25 s, 0.5 s now.
        let n = 40_000;
        let mut m = crate::text::parse_module(&calls(n), "calls.hlo").unwrap();
        let start = std::time::Instant::now();
        let runs = Pipeline::from_names(&["call-inliner"])
            .unwrap()
            .run(&mut m)
            .unwrap();
        let took = start.elapsed();
        assert!(runs[0].changed);
        assert_eq!(m.computations().count(), 1, "every callee removed");
        let bound = if cfg!(debug_assertions) { 60.0 } else { 3.0 };
        assert!(took.as_secs_f64() < bound, "{n} calls took {took:?}");
    }
}
