//! `legalize-compare` (order 13): every compare gets the default comparison
//! type of its operands. Seed page `001_994b1aa01869af58.txt`; CONTRACT.md
//! section 4.
//!
//! before => after:
//! `compare(f32 a, f32 b), direction=LT, type=TOTALORDER` =>
//! `compare(a, b), direction=LT` (type FLOAT, the default, is not printed).
//! Defaults: FLOAT for floats and complex, SIGNED for signed integers,
//! UNSIGNED for unsigned integers and pred, from operand 1's type.
//! A compare already at its default is not touched.

use super::{OriginalScope, Pass, PassContext, PassError};
use crate::ir::{AttrValue, ComparisonType, Instruction, Module, Opcode};

pub const NAME: &str = "legalize-compare";

pub struct LegalizeCompare;

impl Pass for LegalizeCompare {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run(&mut self, module: &mut Module, ctx: &mut PassContext) -> Result<bool, PassError> {
        let mut changed = false;
        for comp in ctx.computations(module, OriginalScope::Entry) {
            if !module.comp(comp).may_contain(Opcode::Compare) {
                continue;
            }
            for id in module.comp(comp).post_order() {
                let c = module.comp(comp);
                let instr = c.instr(id);
                if instr.opcode != Opcode::Compare {
                    continue;
                }
                let Some(&rhs) = instr.operands().get(1) else {
                    return Err(PassError::bad_input(
                        NAME,
                        &instr.name,
                        "compare needs two operands",
                    ));
                };
                let Some(direction) = instr.comparison_direction() else {
                    return Err(PassError::bad_input(
                        NAME,
                        &instr.name,
                        "compare has no direction",
                    ));
                };
                let want = ComparisonType::default_for(c.instr(rhs).shape.element_type());
                let have = instr
                    .comparison_type()
                    .unwrap_or(ComparisonType::default_for(
                        c.instr(instr.operand(0)).shape.element_type(),
                    ));
                if have == want {
                    continue;
                }
                // XLA's CreateCompare: the same shape, operands and direction;
                // `type=` is printed only when it is not the default.
                let mut new = Instruction::new("", Opcode::Compare, instr.shape.clone())
                    .with_operands(instr.operands().iter().copied());
                new.set_attr("direction", AttrValue::Direction(direction));
                let lhs_default =
                    ComparisonType::default_for(c.instr(instr.operand(0)).shape.element_type());
                if want != lhs_default {
                    new.set_attr("type", AttrValue::CompareType(want));
                }
                let new = module.add_instruction(comp, new);
                ctx.rewrote(
                    module,
                    comp,
                    id,
                    format!("type {} -> {}", have.name(), want.name()),
                );
                module.replace_instruction(comp, id, new);
                changed = true;
            }
        }
        Ok(changed)
    }
}
