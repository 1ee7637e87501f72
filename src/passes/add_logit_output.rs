//! `add-logit-output` (order 43): makes the logits of a softmax output an
//! output of the entry computation too. Seed page `000_6f13aa1903ed49a7.txt`
//! (AddLogitOutput); CONTRACT.md section 10.
//!
//! before => after: `ROOT t = tuple(.., softmax(x), ..)` =>
//! `ROOT t = tuple(.., softmax(x), .., x)`; a non-tuple root `softmax(x)`
//! becomes `tuple(softmax(x), x)`. The entry computation layout follows.
//!
//! Uses the forward recognizer; never rewrites the softmax itself. Logits
//! already among the outputs are not added again. Entry computation only.

use super::softmax_match::match_forward;
use super::{Pass, PassContext, PassError};
use crate::ir::{AttrValue, InstrId, Instruction, Module, Opcode, Shape};

pub const NAME: &str = "add-logit-output";

pub struct AddLogitOutput;

impl Pass for AddLogitOutput {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run(&mut self, module: &mut Module, ctx: &mut PassContext) -> Result<bool, PassError> {
        let entry = module.entry();
        let c = module.comp(entry);
        let root = c.root();
        let outputs: Vec<InstrId> = match c.instr(root).opcode {
            Opcode::Tuple => c.instr(root).operands().to_vec(),
            _ => vec![root],
        };
        let mut logits = Vec::new();
        for &out in &outputs {
            if c.instr(out).opcode != Opcode::Divide {
                continue;
            }
            if let Ok(f) = match_forward(module, c, out) {
                if !outputs.contains(&f.logits) && !logits.contains(&f.logits) {
                    logits.push(f.logits);
                    ctx.rewrote(
                        module,
                        entry,
                        out,
                        format!("logits {} added as an output", c.instr(f.logits).name),
                    );
                }
            }
        }
        if logits.is_empty() {
            return Ok(false);
        }
        let mut elements = outputs.clone();
        elements.extend(&logits);
        let shape = Shape::Tuple(
            elements
                .iter()
                .map(|&e| Shape::clone(&module.comp(entry).instr(e).shape))
                .collect(),
        );
        let tuple = Instruction::new("", Opcode::Tuple, shape.clone()).with_operands(elements);
        let tuple = module.add_instruction(entry, tuple);
        if module.comp(entry).instr(root).opcode == Opcode::Tuple {
            // XLA's ReplaceInstruction: the new tuple keeps the old name.
            module.replace_instruction(entry, root, tuple);
        } else {
            module.comp_mut(entry).set_root(tuple);
        }
        // The entry layout now has the extra outputs.
        if let Some(attr) = module
            .header
            .iter_mut()
            .find(|a| a.key == "entry_computation_layout")
        {
            if let AttrValue::ProgramShape(p) = &mut attr.value {
                p.result = shape;
            }
        }
        Ok(true)
    }
}
