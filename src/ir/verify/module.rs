//! The module as a whole: an entry computation and a name, a call graph
//! free of cycles, and the header's `entry_computation_layout` against the
//! entry's signature.

use super::computation::CheckedCalls;
use super::names::check_name;
use super::shapes::check_layouts;
use super::{module_error, VerifyError};
use crate::ir::instruction::AttrValue;
use crate::ir::{CompId, Module, Opcode, Shape};
use crate::util::FxSet;

/// The module has an entry computation, and a name the text can spell.
pub(super) fn check_module_header(module: &Module) -> Result<(), VerifyError> {
    let Some(entry) = module.entry_opt() else {
        return Err(module_error("module has no entry computation".into()));
    };
    if module.get_comp(entry).is_none() {
        return Err(module_error("entry computation does not exist".into()));
    }
    check_name(&module.name, false)
        .map_err(|m| module_error(format!("module name {:?}: {m}", module.name)))
}

/// No computation calls itself, directly or through others (a call graph
/// with a cycle has no evaluation and no XLA post order). The walk
/// ([`Module::walk_calls`]) gives the computation post order, which the
/// module keeps: the printer and the proto writer ask for it next. `read`:
/// every computation's calls, if the fast path read them already.
pub(super) fn check_call_graph(
    module: &Module,
    read: Option<CheckedCalls>,
) -> Result<(), VerifyError> {
    let calls = match read {
        Some(read) => {
            let slots = module.computation_ids().map(|c| c.index() + 1).max();
            let mut calls = vec![Vec::new(); slots.unwrap_or(0)];
            for (c, found) in read {
                if let Some(slot) = calls.get_mut(c.index()) {
                    *slot = found;
                }
            }
            calls
        }
        None => module.calls_by_computation(),
    };
    let order = module.walk_calls(calls, |caller, instr, callee| {
        let comp = module.comp(caller);
        let callee_name = module
            .get_comp(callee)
            .map_or_else(String::new, |c| c.name.to_string());
        Err(VerifyError {
            computation: comp.name.to_string(),
            instruction: comp.get(instr).map(|i| i.name.to_string()),
            message: format!(
                "computation {callee_name} calls itself through computation {}",
                comp.name
            ),
            pos: comp.source_pos(instr),
        })
    })?;
    module.remember_post_order(order);
    Ok(())
}

/// No two async starts call one computation (XLA's parser refuses the
/// text; a proto could say it, and its text would not read back).
pub(super) fn check_async_callees(module: &Module) -> Result<(), VerifyError> {
    let mut called: FxSet<CompId> = FxSet::default();
    for (_, comp) in module.computations() {
        if !comp.may_contain(Opcode::AsyncStart) {
            continue;
        }
        for (id, instr) in comp.instructions() {
            let (Opcode::AsyncStart, Some(AttrValue::Comp(callee))) =
                (instr.opcode, instr.attr("calls"))
            else {
                continue;
            };
            if !called.insert(*callee) {
                let callee_name = module
                    .get_comp(*callee)
                    .map_or_else(String::new, |c| c.name.to_string());
                return Err(VerifyError {
                    computation: comp.name.to_string(),
                    instruction: Some(instr.name.to_string()),
                    message: format!(
                        "computation {callee_name} is called by more than one async op"
                    ),
                    pos: comp.source_pos(id),
                });
            }
        }
    }
    Ok(())
}

/// The header's `entry_computation_layout`, if written, has the entry's
/// signature: as many parameters, each of the parameter's type and
/// dimensions, and the root's (layouts may differ: that is what the
/// attribute is for).
pub(super) fn check_entry_layout(module: &Module) -> Result<(), VerifyError> {
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
