//! Async ops XLA prints as sugar (`<op>-start(...)`): folding their
//! computations into them.

use crate::ir::instruction::Attr;
use crate::ir::{CompId, Computation, InstrId, Opcode};
use crate::util::FxMap;

/// Folds the async computations XLA prints as sugar into their ops: an
/// `async-start` whose computation (called by it alone) is parameters and
/// one op prints as `<op>-start(...)` with the op's attributes, its
/// `-update`s and `-done` as `<op>-update`/`<op>-done`, and the computation
/// is not printed. Returns which computations were folded.
pub(super) fn fold_async_sugar(
    built: &mut [Option<Computation>],
    comp_refs: &[CompId],
    entry: usize,
) -> Vec<bool> {
    let mut folded = vec![false; built.len()];
    let index: FxMap<CompId, usize> = comp_refs.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    let mut callers = vec![0usize; built.len()];
    let mut starts: Vec<AsyncCall> = Vec::new();
    for (i, comp) in built.iter().enumerate() {
        let Some(comp) = comp else { continue };
        for (id, instr) in comp.instructions() {
            for c in instr.called_computations() {
                if let Some(&j) = index.get(&c) {
                    callers[j] += 1;
                    if instr.opcode == Opcode::AsyncStart {
                        starts.push(AsyncCall {
                            caller: i,
                            start: id,
                            callee: j,
                        });
                    }
                }
            }
        }
    }
    for AsyncCall {
        caller: i,
        start,
        callee: j,
    } in starts
    {
        if callers[j] != 1 || j == entry || j == i || folded[j] {
            continue;
        }
        let Some(wrapped) = built[j].as_ref().and_then(wrapped_op) else {
            continue;
        };
        let Some(comp) = &mut built[i] else { continue };
        fold_into_start(comp, start, wrapped);
        folded[j] = true;
    }
    folded
}

/// An `async-start` of computation `caller` calling computation `callee`.
struct AsyncCall {
    caller: usize,
    start: InstrId,
    callee: usize,
}

/// The op an async computation wraps, with its own attributes.
struct WrappedOp {
    op: Opcode,
    attrs: Vec<Attr>,
}

/// The op of a computation that is parameters and that op, if the sugar
/// can say it.
fn wrapped_op(callee: &Computation) -> Option<WrappedOp> {
    let root = callee.root_opt()?;
    // The sugar has nowhere to keep fields this crate does not model.
    if callee.has_proto_unknown() {
        return None;
    }
    let single = callee
        .instructions()
        .all(|(id, x)| id == root || x.opcode == Opcode::Parameter);
    if !single {
        return None;
    }
    let root = callee.instr(root);
    let op = root.opcode;
    // `all-gather-start` and the like are ops of their own.
    if !op.can_be_async_wrapped() {
        return None;
    }
    let attrs = root
        .attrs
        .iter()
        .filter(|a| !super::stays_on_async_start(&a.key))
        .cloned()
        .collect();
    Some(WrappedOp { op, attrs })
}

/// Makes `start` and its `-update`s and `-done` sugar for `wrapped`.
fn fold_into_start(comp: &mut Computation, start: InstrId, wrapped: WrappedOp) {
    let op = wrapped.op;
    // The start's attributes before `calls`, the op's, and the rest.
    let s = comp.instr_mut(start);
    let at = s
        .attrs
        .iter()
        .position(|a| a.key == "calls")
        .unwrap_or(s.attrs.len());
    let rest: Vec<Attr> = s.attrs.drain(at..).skip(1).collect();
    s.attrs.extend(wrapped.attrs);
    s.attrs.extend(rest);
    s.async_wrapped = Some(op);
    let chain: Vec<InstrId> = comp
        .instructions()
        .filter(|(id, x)| {
            matches!(x.opcode, Opcode::AsyncUpdate | Opcode::AsyncDone)
                && async_chain_start(comp, *id) == Some(start)
        })
        .map(|(id, _)| id)
        .collect();
    for id in chain {
        comp.instr_mut(id).async_wrapped = Some(op);
    }
}

/// The `async-start` an `-update`/`-done` chain begins with.
pub(crate) fn async_chain_start(comp: &Computation, mut i: InstrId) -> Option<InstrId> {
    // Each step goes to an operand, which comes earlier: no cycle.
    loop {
        let instr = comp.instr(i);
        match instr.opcode {
            Opcode::AsyncStart => return Some(i),
            Opcode::AsyncUpdate | Opcode::AsyncDone => i = *instr.operands().first()?,
            _ => return None,
        }
    }
}
