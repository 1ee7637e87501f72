//! Operand counts and required attributes per opcode, as XLA's parser
//! checks them ([`crate::ir::signature`]), for modules from either front.

use crate::ir::instruction::AttrValue;
use crate::ir::{CompId, InstrId, Module, Opcode};

/// Operand counts and required attributes, as XLA's parser checks them
/// (`crate::ir::signature`), so that a module read from a proto is held to
/// what its text would be.
pub(super) fn check_operands_and_attrs(
    module: &Module,
    cid: CompId,
    id: InstrId,
) -> Result<(), String> {
    use crate::ir::signature as checks;
    let comp = module.comp(cid);
    let instr = comp.instr(id);
    let op = instr.opcode;
    let n = instr.operands().len();
    let first_shape = instr.operands().first().map(|&o| &*comp.instr(o).shape);
    let pred_branch = op == Opcode::Conditional
        && first_shape.is_some_and(|s| {
            s.rank() == 0 && s.element_type() == crate::ir::PrimitiveType::Pred && !s.is_tuple()
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
