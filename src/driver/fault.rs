//! A test-only fault switch (`hlo-opt --inject-fault=KIND`, hidden): the
//! first rewrite of a pass that makes a call of the right kind is made
//! wrong in a small way, so the tests can show that `--check-numerics`
//! catches each kind. A hidden flag rather than a cargo feature: the
//! default test suite (and the release binary the timing scripts use)
//! exercises it without a second build, and it changes nothing unless
//! named. docs/eval.md ("A check known to fail") lists the kinds.

use crate::ir::literal::LiteralData;
use crate::ir::{
    AttrValue, CompId, InstrId, Instruction, Literal, Module, Opcode, PrimitiveType, Shape,
};
use crate::passes::{Pass, PassContext, PassError};
use crate::util::FxSet;
use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

/// What the switch breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// A softmax call over another axis (one longer than 1).
    SoftmaxAxis,
    /// A softmax call's f32 or f64 logits (its first operand) times 1.001.
    LogitScale,
    /// One element of a legalized TopK's index operand one more.
    IndexOffByOne,
    /// A softmax gradient call with dL/dy and y swapped.
    BackwardSwap,
}

impl Fault {
    pub const ALL: [Fault; 4] = [
        Fault::SoftmaxAxis,
        Fault::LogitScale,
        Fault::IndexOffByOne,
        Fault::BackwardSwap,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Fault::SoftmaxAxis => "softmax-axis",
            Fault::LogitScale => "logit-scale",
            Fault::IndexOffByOne => "index-off-by-one",
            Fault::BackwardSwap => "backward-swap",
        }
    }

    pub fn from_name(name: &str) -> Option<Fault> {
        Fault::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Whether a call to `target` is what this fault breaks.
    fn breaks(self, target: &str) -> bool {
        let backward = target.contains("SoftmaxBackward");
        let softmax = target.starts_with("AwsNeuronSoftmax") || target.starts_with("Softmax");
        match self {
            Fault::SoftmaxAxis | Fault::LogitScale => softmax && !backward,
            Fault::BackwardSwap => backward,
            Fault::IndexOffByOne => target.starts_with("TopK_"),
        }
    }
}

/// A pass whose first fitting rewrite (over the whole pipeline: `done`
/// is shared) is broken by `fault`.
pub struct Faulty {
    pub inner: Box<dyn Pass>,
    pub fault: Fault,
    pub done: Rc<Cell<bool>>,
}

impl Pass for Faulty {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn run(&mut self, module: &mut Module, ctx: &mut PassContext) -> Result<bool, PassError> {
        let before: FxSet<(String, String)> = module
            .computations()
            .flat_map(|(_, c)| {
                c.instructions()
                    .map(|(_, i)| (c.name.to_string(), i.name.to_string()))
                    .collect::<Vec<_>>()
            })
            .collect();
        let changed = self.inner.run(module, ctx)?;
        if changed && !self.done.get() && inject(self.fault, module, &before) {
            self.done.set(true);
        }
        Ok(changed)
    }
}

/// Wraps every pass of a pipeline in [`Faulty`].
pub fn wrap(passes: Vec<Box<dyn Pass>>, fault: Fault) -> Vec<Box<dyn Pass>> {
    let done = Rc::new(Cell::new(false));
    passes
        .into_iter()
        .map(|inner| {
            Box::new(Faulty {
                inner,
                fault,
                done: done.clone(),
            }) as Box<dyn Pass>
        })
        .collect()
}

/// Breaks the first new call `fault` fits (computations in post order,
/// instructions in post order); whether there was one.
fn inject(fault: Fault, module: &mut Module, before: &FxSet<(String, String)>) -> bool {
    let mut found: Option<(CompId, InstrId)> = None;
    'outer: for c in module.computation_post_order() {
        let comp = module.comp(c);
        for id in comp.post_order() {
            let i = comp.instr(id);
            let new = !before.contains(&(comp.name.to_string(), i.name.to_string()));
            if new
                && i.opcode == Opcode::CustomCall
                && i.custom_call_target().is_some_and(|t| fault.breaks(t))
            {
                found = Some((c, id));
                break 'outer;
            }
        }
    }
    let Some((c, id)) = found else {
        return false;
    };
    match fault {
        Fault::SoftmaxAxis => {
            let i = module.comp(c).instr(id);
            let dims = i.shape.dims().to_vec();
            let rank = dims.len() as i64;
            let axis = crate::neuron::config::softmax_axis(i.backend_config())
                .map(|a| a.rem_euclid(rank.max(1)));
            let other = (0..rank).find(|&d| Some(d) != axis && dims[d as usize] > 1);
            let Some(other) = other else { return false };
            module.comp_mut(c).instr_mut(id).set_generic_attr(
                "backend_config",
                AttrValue::BackendConfig(other.to_string().into()),
            );
        }
        Fault::LogitScale => {
            let logits = module.comp(c).instr(id).operand(0);
            let shape = module.comp(c).instr(logits).shape.clone();
            let Some(array) = shape.as_array() else {
                return false;
            };
            let ty = array.element_type;
            // Only f32 and f64: bf16 cannot hold 1.001, and its next value
            // above 1 moves a softmax output by at most 0.45 * 2^-7 (the
            // slope of sigmoid(s * d) in s), under one bf16 ulp at 0.5: no
            // check at that precision can see it.
            if !matches!(ty, PrimitiveType::F32 | PrimitiveType::F64) {
                return false;
            }
            let Ok(scalar) = crate::interp::Array::scalar_f64(ty, 1.001) else {
                return false;
            };
            let scalar = scalar.to_literal();
            let mut k = Instruction::new("", Opcode::Constant, Arc::new(Shape::scalar(ty)));
            k.payload = crate::ir::Payload::Constant(Box::new(scalar));
            let k = module.add_instruction(c, k);
            let mut b = Instruction::new("", Opcode::Broadcast, shape.clone()).with_operands([k]);
            b.set_attr("dimensions", AttrValue::Ints(Vec::new().into()));
            let b = module.add_instruction(c, b);
            let m = module.add_instruction(
                c,
                Instruction::new("", Opcode::Multiply, shape).with_operands([logits, b]),
            );
            module.comp_mut(c).set_operand(id, 0, m);
        }
        Fault::IndexOffByOne => {
            let i = module.comp(c).instr(id);
            let Some(&index) = i.operands().get(1) else {
                return false;
            };
            let Some(Literal {
                shape,
                data: LiteralData::Int(values),
            }) = module.comp(c).instr(index).literal().cloned()
            else {
                return false;
            };
            let mut values = values;
            // The first: rows of ties pick it.
            let Some(v) = values.first_mut() else {
                return false;
            };
            *v += 1;
            let literal = Literal {
                shape: shape.clone(),
                data: LiteralData::Int(values),
            };
            let mut k = Instruction::new("", Opcode::Constant, Arc::new(shape));
            k.payload = crate::ir::Payload::Constant(Box::new(literal));
            let k = module.add_instruction(c, k);
            module.comp_mut(c).set_operand(id, 1, k);
        }
        Fault::BackwardSwap => {
            let ops = module.comp(c).instr(id).operands().to_vec();
            if ops.len() < 2 {
                return false;
            }
            module.comp_mut(c).set_operand(id, 0, ops[1]);
            module.comp_mut(c).set_operand(id, 1, ops[0]);
        }
    }
    true
}
