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
//!
//! This file is the entry, the order of the checks and the list of an
//! instruction's; the rules live by family:
//!
//! - `module`: the module as a whole (entry, call graph, entry layout);
//! - `names`: names the text can spell, unique in the module;
//! - `computation`: a computation's structure (root, parameter numbers,
//!   operand and user lists), and the fast path over many threads;
//! - `operand_counts`: operand counts and required attributes per opcode;
//! - `shapes`: the shapes of the common ops, and layouts;
//! - `dimensions`: dimension numbers and indices against the ranks they
//!   index (and a custom call's operand layout constraints);
//! - `gather_scatter`: the dimension numbers of gather and scatter;
//! - `stack_frames`: the stack frame tables and the ids into them.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod computation;
mod dimensions;
mod gather_scatter;
mod module;
mod names;
mod operand_counts;
mod shapes;
mod stack_frames;

use super::{CompId, Computation, InstrId, Instruction, Module, Shape, SourcePos};
use crate::util::FxSet;
use computation::{check_computation, instructions_hold, CheckedCalls, Checks};
use dimensions::check_dimension_numbers;
pub use dimensions::permute_slice_size_lengths;
use module::{check_async_callees, check_call_graph, check_entry_layout, check_module_header};
use names::{check_computation_name, SeenNames};
use operand_counts::check_operands_and_attrs;
use shapes::{check_attribute_layouts, check_layouts, check_shape};
use stack_frames::{check_frame_ref, check_stack_frames};
use std::fmt;

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
    let fast = instructions_hold(module, &checked);
    let in_order = fast.is_none();
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
    // The calls read on the fast path, if they are every computation's.
    let calls = fast.filter(|c| c.len() == module.computations().count());
    check_module_whole(module, calls)
}

/// The checks of the module as a whole that come after its computations
/// (`calls`: every computation's, if read already).
fn check_module_whole(module: &Module, calls: Option<CheckedCalls>) -> Result<(), VerifyError> {
    check_call_graph(module, calls)?;
    check_async_callees(module)?;
    check_stack_frames(module)?;
    check_entry_layout(module)?;
    check_recovery_modules(module)
}

/// The modules of the header's `origin_recovery_table` hold as any module
/// does (the text parser reads them, the proto reader converts them, and
/// neither checks them otherwise).
fn check_recovery_modules(module: &Module) -> Result<(), VerifyError> {
    for attr in &module.header {
        let crate::ir::AttrValue::RecoveryTable(table) = &attr.value else {
            continue;
        };
        for recovery in table.value().iter().filter_map(|e| e.module.as_deref()) {
            verify(recovery).map_err(|e| {
                module_error(format!("origin_recovery_table: a recovery module: {e}"))
            })?;
        }
    }
    Ok(())
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
