//! Async ops written as sugar (`custom-call-start(...)`): in a proto, as
//! in XLA, an `async-start` calling a computation of parameters and the
//! wrapped op, made here.

use super::err;
use super::read_async::async_chain_start;
use super::stays_on_async_start;
use super::to_proto::Writer;
use super::ProtoError;
use crate::ir::instruction::AttrValue;
use crate::ir::module::NameUniquer;
use crate::ir::shape::Shape;
use crate::ir::{CompId, Computation, Instruction, Module, Opcode, Payload, SharedStr};
use std::sync::Arc;

/// The computation of an async op written as sugar.
pub(super) struct Wrapped {
    /// The computation of the `async-start`, written after this one.
    pub(super) caller: CompId,
    pub(super) comp: Computation,
    pub(super) id: i64,
    /// `async_execution_thread`, if not the main one.
    pub(super) thread: Option<String>,
}

impl Writer<'_> {
    /// Makes the computation of each sugared async op (ids from `next`),
    /// with names no other computation or instruction has.
    pub(super) fn wrap_async_sugar(&mut self, mut next: i64) -> Result<(), ProtoError> {
        let m = self.module;
        let mut names: Option<NameUniquer> = None;
        // Sugar is an async op's: computations without one are passed over
        // unread.
        let has_async = |comp: &Computation| {
            [Opcode::AsyncStart, Opcode::AsyncUpdate, Opcode::AsyncDone]
                .into_iter()
                .any(|op| comp.may_contain(op))
        };
        for (c, comp) in m.computations().filter(|(_, comp)| has_async(comp)) {
            for (i, instr) in comp.instructions() {
                // `-update`s and `-done`s below, once every start has its
                // computation.
                let (Some(op), Opcode::AsyncStart) = (instr.async_wrapped, instr.opcode) else {
                    continue;
                };
                let names = names.get_or_insert_with(|| all_names(m));
                let wrapped = wrapped_computation(names, comp, instr, op)?;
                let thread = match instr.attr("async_execution_thread") {
                    Some(AttrValue::Str(t)) => Some(t.to_string()),
                    _ => None,
                };
                self.wrapped_of.insert((c, i), self.wrapped.len());
                self.wrapped.push(Wrapped {
                    caller: c,
                    comp: wrapped,
                    id: next,
                    thread,
                });
                next += 1;
            }
        }
        // `-update`s and `-done`s: their chain's start's computation.
        for (c, comp) in m.computations().filter(|(_, comp)| has_async(comp)) {
            for (i, instr) in comp.instructions() {
                if instr.async_wrapped.is_none() || instr.opcode == Opcode::AsyncStart {
                    continue;
                }
                let w = async_chain_start(comp, i)
                    .and_then(|s| self.wrapped_of.get(&(c, s)).copied())
                    .ok_or_else(|| {
                        ProtoError::new(format!(
                            "{}: {}: its async-start is not sugar",
                            comp.name, instr.name
                        ))
                    })?;
                self.wrapped_of.insert((c, i), w);
            }
        }
        Ok(())
    }
}

/// The names of the module's computations and instructions, taken.
fn all_names(m: &Module) -> NameUniquer {
    let mut n = NameUniquer::default();
    for (_, comp) in m.computations() {
        n.register(&comp.name);
        for (_, i) in comp.instructions() {
            n.register(&i.name);
        }
    }
    n
}

/// The computation a sugared `start` (of `comp`) wraps: a parameter per
/// operand, and the op `op` with the attributes that are not the start's.
fn wrapped_computation(
    names: &mut NameUniquer,
    comp: &Computation,
    start: &Instruction,
    op: Opcode,
) -> Result<Computation, ProtoError> {
    // The start's shape is ((operands...), result, context...).
    let result = match &*start.shape {
        Shape::Tuple(e) if e.len() >= 2 => e[1].clone(),
        _ => {
            return err(format!(
                "{}: {}: an async-start's shape is a tuple",
                comp.name, start.name
            ))
        }
    };
    let mut wrapped = Computation::new(names.unique("async_wrapped"));
    let mut params = Vec::new();
    for (k, &o) in start.operands().iter().enumerate() {
        let mut p = Instruction::new(
            SharedStr::from(&*names.unique("async_param")),
            Opcode::Parameter,
            Arc::clone(&comp.instr(o).shape),
        );
        p.payload = Payload::Parameter(k as i64);
        params.push(wrapped.push(p));
    }
    let mut root = Instruction::new(
        SharedStr::from(&*names.unique(op.name())),
        op,
        Arc::new(result),
    )
    .with_operands(params);
    root.attrs = start
        .attrs
        .iter()
        .filter(|a| !stays_on_async_start(&a.key))
        .cloned()
        .collect();
    let root = wrapped.push(root);
    wrapped.set_root(root);
    Ok(wrapped)
}
