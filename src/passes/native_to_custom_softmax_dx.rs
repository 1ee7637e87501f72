//! `native-to-custom-softmax-dx` (order 41): raises the gradient of a
//! softmax into one custom call. Seed page `000_6f13aa1903ed49a7.txt`
//! (NativeToCustomSoftmaxDx).
//!
//! before => after: `dLdx = y * (dLdy - bcast(sum(dLdy * y, axis)))` in any
//! of its frontend forms =>
//! `custom-call(dLdy, y), custom_call_target="AwsNeuronSoftmaxBackward", backend_config="<axis>"`,
//! named `SoftmaxBackward_<root name>`.
//!
//! The forms, each through layout-only ops and converts, commutative
//! operands in either order:
//! - TensorFlow `(dLdy - bcast(sum(dLdy*y))) * y` and torch-xla
//!   `y * (dLdy - bcast(sum(dLdy*y)))`, also with torch's `_safe_softmax`
//!   `y = select(all_masked, 0, softmax(x))`;
//! - JAX with custom JVP: `y*dLdy + y*bcast(sum(-(y*dLdy)))`;
//! - JAX's autodiff of `e / s`: `(dLdy/bcast(s) + bcast(sum(-(dLdy * k * e)))) * e`
//!   with `k = bcast(1/(s*s))`, which is the formula with `y = e / bcast(s)`.
//!
//! The call is defined by that formula for any `y`, so `y` need not be a
//! softmax: the forms that name `y` raise whatever it is. The autodiff form
//! names `e` and `s` instead: it needs `s` constant along the axis and `k`
//! computed from that same `s` (in this computation, or, when `k` and `s`
//! are loop parameters, the same forward values of the same iteration:
//! [`super::residuals`]); the pass then builds `y = e / bcast(s)` (or
//! reuses the graph's own), which the forward raise (order 42) turns into a
//! call where `s` is the sum of `e`.
//!
//! `dLdy` and `y` are the formula's own operands, at its element type (a
//! convert that changes the type is part of the operand, not seen
//! through), and must have equal shapes (the seed's gate). The operands are
//! `(dLdy, y)`, the order torch-neuronx emits, not the seed's `{y, dLdy}`
//! (`docs/contract.md` says why).

use super::build::custom_call;
use super::residuals::Flow;
use super::softmax_match::{
    at_own_type, either_order, exp_masked_by, inverse_square, is_product_of, layout_chain, masked,
    not_candidate, opaque, row_sum, value_of, Chain, Match, Mismatch,
};
use super::{OriginalScope, Pass, PassContext, PassError};
use crate::ir::{ApiVersion, CompId, Computation, InstrId, Instruction, Module, Opcode};

pub const NAME: &str = "native-to-custom-softmax-dx";

pub struct NativeToCustomSoftmaxDx;

/// `y`: an operand of the formula, or one to build as `e / divisor`.
#[derive(Clone, Copy, Debug)]
enum Y {
    Operand(InstrId),
    Build { e: InstrId, divisor: InstrId },
}

/// A softmax gradient found.
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
        // The call graph, built once a form needs it (loop parameters).
        let mut flow: Option<Flow> = None;
        for comp in ctx.computations(module, OriginalScope::Every) {
            let mut found = Vec::new();
            let c = module.comp(comp);
            // Every form sums a row: without a reduce no root matches and
            // none is refused; only the trace log of each mismatch would tell.
            let may_hold_gradient = c.may_contain(Opcode::Reduce)
                && (c.may_contain(Opcode::Multiply) || c.may_contain(Opcode::Add));
            if may_hold_gradient || log::log_enabled!(log::Level::Trace) {
                for id in c.post_order() {
                    match match_backward(module, &mut flow, comp, c, id) {
                        Ok(b) => found.push(b),
                        Err(Mismatch::Refused(reason)) => ctx.skipped(module, comp, id, reason),
                        Err(Mismatch::NotCandidate(reason)) => log::trace!("{reason}"),
                    }
                }
            }
            let mut count = 0;
            for b in found {
                if !operands_live(module.comp(comp), &b) {
                    continue;
                }
                if let Err(reason) = shape_gate(module.comp(comp), &b) {
                    ctx.skipped(module, comp, b.root, reason);
                    continue;
                }
                raise(module, comp, &b, ctx);
                count += 1;
            }
            log::debug!("Number of Native SoftmaxDx's detected and replaced: {count}");
            if count > 0 {
                // The rewrites removed instructions the call graph names.
                flow = None;
                changed = true;
            }
        }
        Ok(changed)
    }
}

/// An earlier rewrite in this computation may have removed what a later
/// match uses.
fn operands_live(c: &Computation, b: &Backward) -> bool {
    let y_live = match b.y {
        Y::Operand(y) => c.is_live(y),
        Y::Build { e, divisor } => c.is_live(e) && c.is_live(divisor),
    };
    c.is_live(b.root) && c.is_live(b.dldy) && y_live
}

/// The seed's gate: `dLdy` and `y` (and the result) have one shape.
fn shape_gate(c: &Computation, b: &Backward) -> Result<(), &'static str> {
    let y = match b.y {
        Y::Operand(y) => y,
        Y::Build { e, .. } => e,
    };
    let y_shape = &c.instr(y).shape;
    if !c.instr(b.dldy).shape.compatible(y_shape) || !c.instr(b.root).shape.compatible(y_shape) {
        return Err("SoftmaxDx was found but arg0 and arg1 shapes are different");
    }
    log::debug!("dLdyShape: {}", y_shape.to_text(true));
    log::debug!("dLdy, y and dLdx Shape verification passed");
    Ok(())
}

fn raise(module: &mut Module, comp: CompId, b: &Backward, ctx: &mut PassContext) {
    let y = match b.y {
        Y::Operand(y) => y,
        Y::Build { e, divisor } => build_y(module, comp, e, divisor),
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

/// `y = e / divisor`: the graph's own divide of `e` by the same row value
/// when there is one, else a new one (converting the divisor to `e`'s type).
fn build_y(module: &mut Module, comp: CompId, e: InstrId, divisor: InstrId) -> InstrId {
    let c = module.comp(comp);
    let wanted = layout_chain(module, c, divisor);
    let sizes = c.instr(e).shape.dims().to_vec();
    let existing = c.instr(e).users().iter().copied().find(|&u| {
        let ui = c.instr(u);
        ui.opcode == Opcode::Divide && ui.operands()[0] == e && ui.shape == c.instr(e).shape && {
            let d = layout_chain(module, c, ui.operand(1));
            d.source == wanted.source && d.same_reads(&wanted, &sizes)
        }
    });
    if let Some(y) = existing {
        return y;
    }
    let e_shape = c.instr(e).shape.clone();
    let mut d = divisor;
    if c.instr(divisor).shape.element_type() != e_shape.element_type() {
        let conv = Instruction::new("", Opcode::Convert, e_shape.clone()).with_operands([d]);
        d = module.add_instruction(comp, conv);
    }
    let div = Instruction::new("", Opcode::Divide, e_shape).with_operands([e, d]);
    module.add_instruction(comp, div)
}

fn match_backward(
    module: &Module,
    flow: &mut Option<Flow>,
    comp: CompId,
    c: &Computation,
    root: InstrId,
) -> Match<Backward> {
    match c.instr(root).opcode {
        Opcode::Multiply => explicit_y(module, c, root)
            .or_else(|m| jax_autodiff(module, flow, comp, c, root).map_err(|n| m.or_better(n))),
        Opcode::Add => jax_custom_jvp(module, c, root),
        _ => not_candidate("div711 and neg224 not found"),
    }
}

/// `(dLdy - bcast(sum(dLdy*y))) * y`, in either order.
fn explicit_y(module: &Module, c: &Computation, root: InstrId) -> Match<Backward> {
    let mut best = Mismatch::NotCandidate("div711 and neg224 not found");
    for (y, diff) in either_order(c, root, Opcode::Multiply) {
        let sub = c.instr(value_of(c, diff));
        let [dldy, b] = sub.operands()[..] else {
            continue;
        };
        if sub.opcode != Opcode::Subtract {
            continue;
        }
        let sum = match row_sum(module, c, b) {
            Ok(s) if !s.negated => s,
            Ok(_) => {
                best = best.or_better(Mismatch::Refused(
                    "reduce5 found, but the row sum is negated".into(),
                ));
                continue;
            }
            Err(m) => {
                best = best.or_better(m);
                continue;
            }
        };
        log::debug!("reduce5 found");
        if !is_product_of(c, sum.summand, dldy, y) {
            best = best.or_better(Mismatch::Refused(
                "One of the mul5575O operands should be dL/dy (which is div711Lhs)".into(),
            ));
            continue;
        }
        return Ok(Backward {
            root,
            dldy: at_own_type(c, dldy),
            y: Y::Operand(at_own_type(c, y)),
            axis: sum.axis,
            form: "y * (dLdy - sum(dLdy * y))",
        });
    }
    Err(best)
}

/// `y*dLdy + y*bcast(sum(-(y*dLdy)))`.
fn jax_custom_jvp(module: &Module, c: &Computation, root: InstrId) -> Match<Backward> {
    let mut best = Mismatch::NotCandidate("div711 and neg224 not found");
    for (p, q) in either_order(c, root, Opcode::Add) {
        let p = value_of(c, p);
        for (y, dldy) in either_order(c, p, Opcode::Multiply) {
            for (y2, b) in either_order(c, value_of(c, q), Opcode::Multiply) {
                if value_of(c, y2) != value_of(c, y) {
                    continue;
                }
                let sum = match row_sum(module, c, b) {
                    Ok(s) if s.negated => s,
                    Ok(_) => {
                        best = best.or_better(Mismatch::Refused(
                            "neg224 not found: the row sum is not negated".into(),
                        ));
                        continue;
                    }
                    Err(m) => {
                        best = best.or_better(m);
                        continue;
                    }
                };
                if value_of(c, sum.summand) != p && !is_product_of(c, sum.summand, y, dldy) {
                    best = best.or_better(Mismatch::Refused(
                        "One of the mul5575O operands should be dL/dy (which is div711Lhs)".into(),
                    ));
                    continue;
                }
                return Ok(Backward {
                    root,
                    dldy: at_own_type(c, dldy),
                    y: Y::Operand(at_own_type(c, y)),
                    axis: sum.axis,
                    form: "y*dLdy + y*sum(-(y*dLdy))",
                });
            }
        }
    }
    Err(best)
}

/// `(dLdy/bcast(s) + bcast(sum(-(dLdy * k * e)))) * e` with
/// `k = bcast(1/(s*s))`: JAX's autodiff of `e / s` (the seed's reference
/// graph).
fn jax_autodiff(
    module: &Module,
    flow: &mut Option<Flow>,
    comp: CompId,
    c: &Computation,
    root: InstrId,
) -> Match<Backward> {
    let mut best = Mismatch::NotCandidate("div711 and neg224 not found");
    for (a, e) in either_order(c, root, Opcode::Multiply) {
        for (quotient, b) in either_order(c, value_of(c, a), Opcode::Add) {
            let div = c.instr(value_of(c, quotient));
            let [dldy, divisor] = div.operands()[..] else {
                continue;
            };
            if div.opcode != Opcode::Divide {
                continue;
            }
            // JAX's `softmax(x, where=mask)`: the row sum term is
            // `select(mask, bcast(sum), 0)`.
            let (b, mask) = match masked_term(module, c, b) {
                Some((mask, v)) => (v, Some(mask)),
                None => (b, None),
            };
            let sum = match row_sum(module, c, b) {
                Ok(s) if s.negated => s,
                Ok(_) => continue,
                Err(m) => {
                    let hidden = opaque(module, c, layout_chain(module, c, b).source);
                    best = best.or_better(match hidden {
                        Some(what) => Mismatch::Refused(format!(
                            "div711 found, but neg224 is {what}, which hides what it computes"
                        )),
                        None => m,
                    });
                    continue;
                }
            };
            if let Some(mask) = mask {
                if !exp_masked_by(module, c, e, mask, sum.axis) {
                    best = best.or_better(Mismatch::Refused(
                        "the row sum term is select(mask, sum, 0), but e is not \
                         exp(select(mask, x, -inf) - row max) with the same mask"
                            .into(),
                    ));
                    continue;
                }
            }
            log::debug!("div711 and neg224 found");
            let s = layout_chain(module, c, divisor);
            if s.dims.get(sum.axis) != Some(&None) {
                best = best.or_better(Mismatch::Refused(
                    "div712 found, but what it divides by varies along the softmax axis".into(),
                ));
                continue;
            }
            let Some(k) = third_factor(c, sum.summand, dldy, e) else {
                best = best.or_better(Mismatch::Refused(
                    "mul5576 Rhs is not exp.0: the summed product is not dL/dy * k * e".into(),
                ));
                continue;
            };
            if let Err(reason) = k_is_inverse_square(module, flow, comp, c, k, &s) {
                best = best.or_better(Mismatch::Refused(reason));
                continue;
            }
            return Ok(Backward {
                root,
                dldy: at_own_type(c, dldy),
                y: Y::Build {
                    e: at_own_type(c, e),
                    divisor,
                },
                axis: sum.axis,
                form: "JAX autodiff of e / s",
            });
        }
    }
    Err(best)
}

/// `select(mask, v, 0)` seen through layout ops (JAX's bf16 gradient
/// converts it): the mask and `v`.
fn masked_term(module: &Module, c: &Computation, b: InstrId) -> Option<(InstrId, InstrId)> {
    let chain = layout_chain(module, c, b);
    if !chain.is_identity(c.instr(chain.source).shape.rank()) {
        return None;
    }
    masked(module, c, chain.source, 0.0)
}

/// `product` is `g * k * e` in some grouping (up to converts): `k`.
fn third_factor(c: &Computation, product: InstrId, g: InstrId, e: InstrId) -> Option<InstrId> {
    let (g, e) = (value_of(c, g), value_of(c, e));
    for (pair, third) in either_order(c, value_of(c, product), Opcode::Multiply) {
        for (u, v) in either_order(c, value_of(c, pair), Opcode::Multiply) {
            let leaves = [value_of(c, u), value_of(c, v), value_of(c, third)];
            let gi = leaves.iter().position(|&l| l == g);
            let ei = leaves.iter().rposition(|&l| l == e);
            if let (Some(gi), Some(ei)) = (gi, ei) {
                if gi != ei {
                    let ki = 3 - gi - ei;
                    return Some([u, v, third][ki]);
                }
            }
        }
    }
    None
}

/// Whether `k` is `1/(s*s)` for the `s` the quotient divides by (`s` is
/// the chain from the divisor to its row value): in this computation, or
/// as forward values of the same iteration when both are handed in.
fn k_is_inverse_square(
    module: &Module,
    flow: &mut Option<Flow>,
    comp: CompId,
    c: &Computation,
    k: InstrId,
    s: &Chain,
) -> Result<(), String> {
    let sizes = c.instr(k).shape.dims();
    if let Some(sq) = inverse_square(module, c, k) {
        if sq.source == s.source && sq.same_reads(s, sizes) {
            log::debug!("div712 found");
            return Ok(());
        }
    }
    // Across a loop boundary: k and s are handed in as the forward's
    // `1/(s*s)` and `s` of the same iteration.
    let kc = layout_chain(module, c, k);
    let not_same =
        || "div712 not found: 1/(s*s) is not computed from the s it divides by".to_string();
    if !kc.same_reads(s, sizes) || c.instr(kc.source).shape.dims() != c.instr(s.source).shape.dims()
    {
        return Err(not_same());
    }
    let flow = flow.get_or_insert_with(|| Flow::new(module));
    let (ko, so) = (
        flow.origin(module, comp, kc.source),
        flow.origin(module, comp, s.source),
    );
    if ko.hops.is_empty() || !ko.same_instance(&so) {
        return Err(not_same());
    }
    let f = module.comp(ko.comp);
    let s_chain = layout_chain(module, f, so.instr);
    let origin_sizes = f.instr(ko.instr).shape.dims();
    match inverse_square(module, f, ko.instr) {
        Some(sq)
            if sq.source == s_chain.source
                && sq.same_reads(&s_chain, origin_sizes)
                && f.instr(so.instr).shape.dims() == origin_sizes
                && origin_sizes == c.instr(kc.source).shape.dims() =>
        {
            log::debug!(
                "div712 found: {} and {} are the forward's 1/(s*s) and s of the same iteration",
                c.instr(kc.source).name,
                c.instr(s.source).name
            );
            Ok(())
        }
        _ => Err(not_same()),
    }
}
