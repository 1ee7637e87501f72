//! `native-to-custom-softmax-dx` (order 41): raises the gradient of a
//! softmax into one custom call. Seed page `000_6f13aa1903ed49a7.txt`
//! (NativeToCustomSoftmaxDx); CONTRACT.md section 9.
//!
//! before => after: `dLdx = y * (dLdy - bcast(sum(dLdy * y, axis)))` in any
//! of its frontend forms =>
//! `custom-call(dLdy, y), custom_call_target="AwsNeuronSoftmaxBackward", backend_config="<axis>"`,
//! named `SoftmaxBackward_<root name>`.
//!
//! The forms, each through layout-only ops and converts, commutative
//! operands in either order:
//! - TensorFlow `(dLdy - bcast(sum(dLdy*y))) * y` and torch-xla
//!   `y * (dLdy - bcast(sum(dLdy*y)))`;
//! - JAX with custom JVP: `y*dLdy + y*bcast(sum(-(y*dLdy)))`;
//! - JAX's autodiff of exp/sum: `(dLdy/s + bcast(sum(-(dLdy * 1/(s*s) * e)))) * e`,
//!   where `y = e / s` may not exist: it is then built from `e` and `s`, and
//!   the forward raise (order 42) turns it into a call.
//!
//! `y` must be a forward softmax (a native one or an `AwsNeuronSoftmax`
//! call). The operands are `(dLdy, y)`, the order torch-neuronx emits:
//! CONTRACT.md section 9 says why the seed's `{y, dLdy}` is not followed.

use super::build::custom_call;
use super::softmax_match::{
    add_reduce, either_order, is_axis_broadcast, is_inverse_square_of, layout_chain, match_forward,
    row_sum_broadcast, softmax_value, Chain,
};
use super::{OriginalScope, Pass, PassContext, PassError};
use crate::ir::{ApiVersion, AttrValue, CompId, Computation, InstrId, Instruction, Module, Opcode};

pub const NAME: &str = "native-to-custom-softmax-dx";

pub struct NativeToCustomSoftmaxDx;

/// `y`: an existing softmax value, or one to build from `e` and `s`.
#[derive(Clone, Copy, Debug)]
enum Y {
    Existing(InstrId),
    Build { exp: InstrId, sum: InstrId },
}

#[derive(Clone, Debug)]
struct Backward {
    root: InstrId,
    dldy: InstrId,
    y: Y,
    axis: usize,
    form: &'static str,
}

impl Pass for NativeToCustomSoftmaxDx {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run(&mut self, module: &mut Module, ctx: &mut PassContext) -> Result<bool, PassError> {
        let mut changed = false;
        for comp in ctx.computations(module, OriginalScope::Every) {
            let found: Vec<Backward> = {
                let c = module.comp(comp);
                c.post_order()
                    .into_iter()
                    .filter_map(|id| match_backward(module, c, id))
                    .collect()
            };
            let mut count = 0;
            for b in found {
                let c = module.comp(comp);
                if !c.is_live(b.root) || !c.is_live(b.dldy) {
                    continue;
                }
                let y_shape = match b.y {
                    Y::Existing(y) if c.is_live(y) => c.instr(y).shape.clone(),
                    Y::Build { exp, sum } if c.is_live(exp) && c.is_live(sum) => {
                        c.instr(b.root).shape.clone()
                    }
                    _ => continue,
                };
                if !c.instr(b.dldy).shape.compatible(&y_shape)
                    || !c.instr(b.root).shape.compatible(&y_shape)
                {
                    ctx.skipped(
                        module,
                        comp,
                        b.root,
                        "SoftmaxDx was found but arg0 and arg1 shapes are different",
                    );
                    continue;
                }
                log::debug!("dLdyShape: {}", y_shape.to_text(true));
                log::debug!("dLdy, y and dLdx Shape verification passed");
                raise(module, comp, &b, ctx);
                count += 1;
            }
            log::debug!("Number of Native SoftmaxDx's detected and replaced: {count}");
            changed |= count > 0;
        }
        Ok(changed)
    }
}

fn raise(module: &mut Module, comp: CompId, b: &Backward, ctx: &mut PassContext) {
    let y = match b.y {
        Y::Existing(y) => y,
        Y::Build { exp, sum } => build_y(module, comp, exp, sum, b.axis),
    };
    let (shape, root_name) = {
        let r = module.comp(comp).instr(b.root);
        (r.shape.clone(), r.name.to_string())
    };
    let mut call = custom_call(
        shape,
        [b.dldy, y],
        "AwsNeuronSoftmaxBackward",
        &b.axis.to_string(),
        ApiVersion::Original,
    );
    call.name = format!("SoftmaxBackward_{root_name}").into();
    let call = module.add_instruction(comp, call);
    ctx.rewrote(
        module,
        comp,
        b.root,
        format!(
            "softmax gradient ({}) over axis {} -> AwsNeuronSoftmaxBackward",
            b.form, b.axis
        ),
    );
    module.replace_instruction(comp, b.root, call);
    log::debug!("replaceNativeSoftmaxDx Done!");
}

/// `y = e / broadcast(s)`: reuses the graph's forward divide of `e` and `s`
/// when there is one, else builds it (converting `s` to `e`'s type).
fn build_y(module: &mut Module, comp: CompId, exp: InstrId, sum: InstrId, axis: usize) -> InstrId {
    let c = module.comp(comp);
    for &u in c.instr(exp).users() {
        if let Ok(f) = match_forward(module, c, u) {
            if f.exp == exp && f.sum == sum && f.axis == axis {
                return u;
            }
        }
    }
    let exp_shape = c.instr(exp).shape.clone();
    let ty = exp_shape.element_type();
    let sum_shape = c.instr(sum).shape.clone();
    // The sum's dimensions in the exp's numbering.
    let sum_dims: Vec<i64> = {
        let (input, dims) = add_reduce(module, c, sum).expect("matched as an add-reduce");
        let chain = layout_chain(module, c, input);
        (0..chain.dims.len())
            .filter(|d| !dims.contains(d))
            .map(|d| chain.dims[d].map_or(d as i64, |x| x as i64))
            .collect()
    };
    let mut s = sum;
    if sum_shape.element_type() != ty {
        let mut conv_shape = (*sum_shape).clone();
        if let Some(a) = conv_shape.as_array_mut() {
            a.element_type = ty;
        }
        let conv = Instruction::new("", Opcode::Convert, conv_shape).with_operands([sum]);
        s = module.add_instruction(comp, conv);
    }
    let mut bcast = Instruction::new("", Opcode::Broadcast, exp_shape.clone()).with_operands([s]);
    bcast.set_attr("dimensions", AttrValue::Ints(sum_dims.into()));
    let bcast = module.add_instruction(comp, bcast);
    let div = Instruction::new("", Opcode::Divide, exp_shape).with_operands([exp, bcast]);
    let _ = axis;
    module.add_instruction(comp, div)
}

fn match_backward(module: &Module, c: &Computation, root: InstrId) -> Option<Backward> {
    let rank = c.instr(root).shape.rank();
    match c.instr(root).opcode {
        Opcode::Multiply => {
            tf_or_torch(module, c, root, rank).or_else(|| jax_autodiff(module, c, root, rank))
        }
        Opcode::Add => jax_custom_jvp(module, c, root, rank),
        _ => None,
    }
}

/// The source of `id` through converts and copies only (values equal up to
/// type): how the forms reach `y` and `dLdy`.
fn through_converts(c: &Computation, mut id: InstrId) -> InstrId {
    while matches!(c.instr(id).opcode, Opcode::Convert | Opcode::Copy)
        && c.instr(id).operands().len() == 1
    {
        id = c.instr(id).operand(0);
    }
    id
}

/// Whether `id` is `a * b` in either order (through converts).
fn is_product_of(c: &Computation, id: InstrId, a: InstrId, b: InstrId) -> bool {
    either_order(c, through_converts(c, id), Opcode::Multiply)
        .into_iter()
        .any(|(p, q)| through_converts(c, p) == a && through_converts(c, q) == b)
}

/// `(dLdy - bcast(sum(dLdy*y))) * y`, in either order.
fn tf_or_torch(module: &Module, c: &Computation, root: InstrId, rank: usize) -> Option<Backward> {
    for (a, y) in either_order(c, root, Opcode::Multiply) {
        let Some(yv) = softmax_value(module, c, through_converts(c, y)) else {
            continue;
        };
        let sub = c.instr(through_converts(c, a));
        if sub.opcode != Opcode::Subtract {
            continue;
        }
        let dldy = through_converts(c, sub.operand(0));
        let Some((_, input, _)) = row_sum_broadcast(module, c, sub.operand(1), yv.axis(), rank)
        else {
            continue;
        };
        if !is_product_of(c, input, dldy, yv.id()) {
            continue;
        }
        return Some(Backward {
            root,
            dldy,
            y: Y::Existing(yv.id()),
            axis: yv.axis(),
            form: "y * (dLdy - sum(dLdy * y))",
        });
    }
    None
}

/// `y*dLdy + y*bcast(sum(-(y*dLdy)))`.
fn jax_custom_jvp(
    module: &Module,
    c: &Computation,
    root: InstrId,
    rank: usize,
) -> Option<Backward> {
    for (p, q) in either_order(c, root, Opcode::Add) {
        for (y, dldy) in either_order(c, through_converts(c, p), Opcode::Multiply) {
            let Some(yv) = softmax_value(module, c, through_converts(c, y)) else {
                continue;
            };
            let dldy = through_converts(c, dldy);
            for (y2, bc) in either_order(c, through_converts(c, q), Opcode::Multiply) {
                if through_converts(c, y2) != yv.id() {
                    continue;
                }
                let Some((_, input, _)) = row_sum_broadcast(module, c, bc, yv.axis(), rank) else {
                    continue;
                };
                let neg = c.instr(through_converts(c, input));
                if neg.opcode != Opcode::Negate
                    || through_converts(c, neg.operand(0)) != through_converts(c, p)
                {
                    continue;
                }
                return Some(Backward {
                    root,
                    dldy,
                    y: Y::Existing(yv.id()),
                    axis: yv.axis(),
                    form: "y*dLdy + y*sum(-(y*dLdy))",
                });
            }
        }
    }
    None
}

/// `(dLdy/s + bcast(sum(-(dLdy * 1/(s*s) * e)))) * e`: JAX's autodiff of
/// `e / s` (the seed's reference graph).
fn jax_autodiff(module: &Module, c: &Computation, root: InstrId, rank: usize) -> Option<Backward> {
    for (a, e) in either_order(c, root, Opcode::Multiply) {
        let exp = through_converts(c, e);
        if c.instr(exp).opcode != Opcode::Exp {
            continue;
        }
        for (dv, bc) in either_order(c, through_converts(c, a), Opcode::Add) {
            let div = c.instr(through_converts(c, dv));
            if div.opcode != Opcode::Divide {
                continue;
            }
            let dldy = through_converts(c, div.operand(0));
            let den = layout_chain(module, c, div.operand(1));
            let sum = den.source;
            // `s` is the add-reduce of this exp, broadcast back along its axis.
            let Some(f) = forward_parts(module, c, exp, sum, div.operand(1)) else {
                continue;
            };
            let axis = f;
            // bc = bcast(sum_axis(-(dLdy * k * e))) with k = 1/(s*s), or the
            // negation outside the sum.
            let bc_chain = layout_chain(module, c, bc);
            let neg = c.instr(bc_chain.source);
            if neg.opcode != Opcode::Negate {
                continue;
            }
            // Compose: bc dims -> negate dims -> inner sum dims.
            let inner = layout_chain(module, c, neg.operand(0));
            let Some((input, dims)) = add_reduce(module, c, inner.source) else {
                continue;
            };
            if dims != [axis] || c.instr(input).shape.rank() != rank || bc_chain.dims.len() != rank
            {
                continue;
            }
            let sum_dims: Vec<Option<usize>> = (0..rank).filter(|&d| d != axis).map(Some).collect();
            let composed = Chain {
                source: inner.source,
                nodes: Vec::new(),
                dims: bc_chain
                    .dims
                    .iter()
                    .map(|r| r.and_then(|n| inner.dims.get(n).copied().flatten()))
                    .collect(),
            };
            let ok = is_axis_broadcast(&composed, c.instr(bc).shape.dims(), axis, &sum_dims);
            if !ok {
                continue;
            }
            // input = (dLdy * k) * e, k = 1/(s*s) broadcast.
            let product = through_converts(c, input);
            let found = either_order(c, product, Opcode::Multiply)
                .into_iter()
                .any(|(gk, e2)| {
                    through_converts(c, e2) == exp
                        && either_order(c, through_converts(c, gk), Opcode::Multiply)
                            .into_iter()
                            .any(|(g, k)| {
                                through_converts(c, g) == dldy
                                    && is_inverse_square_of(module, c, k, sum).is_some()
                            })
                });
            if !found {
                continue;
            }
            return Some(Backward {
                root,
                dldy,
                y: Y::Build { exp, sum },
                axis,
                form: "JAX autodiff of exp / sum",
            });
        }
    }
    None
}

/// `s` (reached from `bcast`) is the add-reduce over one axis of `exp`,
/// broadcast back along it: that axis.
fn forward_parts(
    module: &Module,
    c: &Computation,
    exp: InstrId,
    sum: InstrId,
    bcast: InstrId,
) -> Option<usize> {
    let (input, dims) = add_reduce(module, c, sum)?;
    if dims.len() != 1 {
        return None;
    }
    let chain = layout_chain(module, c, input);
    if chain.source != exp {
        return None;
    }
    let axis = chain.dims[dims[0]]?;
    let sum_dims: Vec<Option<usize>> = (0..chain.dims.len())
        .filter(|d| !dims.contains(d))
        .map(|d| chain.dims[d])
        .collect();
    let b = layout_chain(module, c, bcast);
    (b.source == sum && is_axis_broadcast(&b, c.instr(exp).shape.dims(), axis, &sum_dims))
        .then_some(axis)
}
