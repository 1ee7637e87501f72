//! `native-to-custom-softmax` (order 42): raises a native softmax into one
//! custom call. Seed page `000_6f13aa1903ed49a7.txt` (NativeToCustomSoftmax).
//!
//! before => after:
//! `divide(exp(x - bcast(max)), bcast(reduce-add(exp(..), axis)))` =>
//! `custom-call(x), custom_call_target="AwsNeuronSoftmax", backend_config="<axis>"`,
//! named `Softmax_<divide name>`; the rest of the region dies with it.
//!
//! Anchors on each divide of every computation: the numerator must be an
//! exp and the divisor the add-reduce of that exp over one axis broadcast
//! back along it, seen through layout-only ops ([`super::softmax_match`]).
//! The optional stabilizing subtract must subtract something constant along
//! the axis. Nothing inside the region may be used outside it (the escape
//! check); otherwise the softmax is left as it is.
//!
//! Across loops (`lax.scan`): where the interior values escape only as
//! residuals a later loop reads, and there (once the gradient is raised)
//! only to rebuild `y = e / bcast(s)` of the same iteration, `y` is handed
//! over instead: the rebuilt `y` becomes the `y` the forward already hands
//! over, or the residual that carried `e` carries `y`. The residuals left
//! unread (loop state, stacks, call results and parameters) are removed,
//! and then the softmax raises as usual. With any other consumer nothing
//! changes and the report names it.

use super::build::custom_call;
use super::residuals::{Element, Flow, Pruner, Site};
use super::softmax_match::{escapes, layout_chain, match_forward, ForwardSoftmax, Mismatch};
use super::{OriginalScope, Pass, PassContext, PassError};
use crate::ir::{ApiVersion, CompId, InstrId, Module, Opcode};

pub const NAME: &str = "native-to-custom-softmax";

pub struct NativeToCustomSoftmax;

impl Pass for NativeToCustomSoftmax {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run(&mut self, module: &mut Module, ctx: &mut PassContext) -> Result<bool, PassError> {
        let mut changed = false;
        // The call graph, built when a softmax first escapes, and again
        // after each hand-over (which changes loops and calls).
        let mut flow: Option<Flow> = None;
        for comp in ctx.computations(module, OriginalScope::Every) {
            // Handing `y` over may have removed computations.
            if module.get_comp(comp).is_none() {
                continue;
            }
            let mut count = 0;
            for (f, escaping) in find(module, comp, ctx) {
                // An earlier rewrite in this computation may have taken nodes
                // this softmax shares.
                if f.region.iter().any(|&id| !module.comp(comp).is_live(id)) {
                    continue;
                }
                // A softmax of a softmax: the rewrite before replaced this
                // one's logits with its call. The original matches each
                // divide only when its walk meets it, so it reads the call.
                let (f, escaping) = if module.comp(comp).is_live(f.logits) {
                    (f, escaping)
                } else {
                    match match_at(module, comp, f.divide, ctx) {
                        Some(found) => found,
                        None => continue,
                    }
                };
                let f = match escaping {
                    None => f,
                    Some(_) => match hand_over_y(module, &mut flow, comp, &f) {
                        Ok(f) => {
                            flow = None;
                            changed = true;
                            f
                        }
                        Err(r) => {
                            ctx.skipped(module, comp, f.divide, escape_reason(&r.value, &r.why));
                            continue;
                        }
                    },
                };
                raise(module, comp, &f, ctx);
                count += 1;
            }
            log::debug!("Number of Native Softmax's detected and replaced: {count}");
            changed |= count > 0;
        }
        Ok(changed)
    }
}

fn escape_reason(inner: &str, why: &str) -> String {
    format!(
        "Internal Softmax node (above) is used outside of Softmax Block. Skip Native to Custom Softmax replacement. ({inner} is used outside{why})"
    )
}

/// Every forward softmax of `comp`, with an interior node used outside
/// its region where there is one. Divides that look like a softmax but
/// fail a check are reported.
fn find(
    module: &Module,
    comp: CompId,
    ctx: &mut PassContext,
) -> Vec<(ForwardSoftmax, Option<InstrId>)> {
    let c = module.comp(comp);
    let mut found = Vec::new();
    // Without an exp and a reduce no anchor matches, and none is refused:
    // only the debug log of each anchor's mismatch would tell.
    let may_hold_softmax = c.may_contain(Opcode::Exp)
        && c.may_contain(Opcode::Reduce)
        && (c.may_contain(Opcode::Divide) || c.may_contain(Opcode::Multiply));
    if !may_hold_softmax && !log::log_enabled!(log::Level::Debug) {
        return found;
    }
    for id in c.post_order() {
        if !matches!(c.instr(id).opcode, Opcode::Divide | Opcode::Multiply) {
            continue;
        }
        found.extend(match_at(module, comp, id, ctx));
    }
    found
}

/// The forward softmax whose divide is `id`, with an interior node used
/// outside its region where there is one; a divide that looks like one
/// but fails a check is reported.
fn match_at(
    module: &Module,
    comp: CompId,
    id: InstrId,
    ctx: &mut PassContext,
) -> Option<(ForwardSoftmax, Option<InstrId>)> {
    let c = module.comp(comp);
    match match_forward(module, c, id) {
        Err(Mismatch::NotCandidate(reason)) => {
            log::debug!("{reason}");
            None
        }
        Err(Mismatch::Refused(reason)) => {
            ctx.skipped(module, comp, id, reason);
            None
        }
        Ok(f) => {
            let escaping = escapes(c, &f.region, f.divide);
            Some((f, escaping))
        }
    }
}

fn raise(module: &mut Module, comp: CompId, f: &ForwardSoftmax, ctx: &mut PassContext) {
    let (shape, div_name) = {
        let d = module.comp(comp).instr(f.divide);
        (d.shape.clone(), d.name.to_string())
    };
    let mut call = custom_call(
        shape,
        [f.logits],
        "AwsNeuronSoftmax",
        &f.axis.to_string(),
        ApiVersion::Original,
    );
    call.name = format!("Softmax_{div_name}").into();
    let call = module.add_instruction(comp, call);
    ctx.rewrote(
        module,
        comp,
        f.divide,
        format!("native softmax over axis {} -> AwsNeuronSoftmax", f.axis),
    );
    module.replace_instruction(comp, f.divide, call);
    log::debug!("replaceNativeSoftmax Done!");
}

/// A rebuilt `y = e' / d` in a later computation: `e'` a copy of the
/// forward's exp, `d` reading a copy of a node of its divisor.
struct Rebuilt {
    at: Site,
    e: InstrId,
    /// The divisor's nodes down to the copy of the forward's node.
    chain: Vec<InstrId>,
}

/// Hands `y` over in place of the interior values of `f` that escape as
/// residuals (see the module header); on success the softmax, matched
/// again, no longer escapes. Nothing changes on failure, and the reason
/// says which consumer is in the way.
fn hand_over_y(
    module: &mut Module,
    flow: &mut Option<Flow>,
    comp: CompId,
    f: &ForwardSoftmax,
) -> Result<ForwardSoftmax, Refusal> {
    let flow = &*flow.get_or_insert_with(|| Flow::new(module));
    let c = module.comp(comp);
    let in_region = |id: &InstrId| f.region.binary_search(id).is_ok();
    let Reach {
        derived,
        consumers,
        aliases,
        mut sites,
    } = reach_of_interior(module, flow, comp, f)?;
    if sites.is_empty() {
        let inner = escapes(c, &f.region, f.divide).unwrap_or(f.exp);
        return Err(Refusal {
            value: c.instr(inner).name.to_string(),
            why: String::new(),
        });
    }
    let rebuilt = rebuilt_ys(module, flow, comp, f, &aliases, &consumers)?;

    // Where `y` itself is handed over, the rebuilt `y`s of the same
    // iteration can read that instead.
    let y_uses = flow.uses(module, comp, f.divide, &[]);
    let mut replacements = Vec::new();
    for r in &rebuilt {
        let e_origin = flow.origin(module, r.at.comp, r.e);
        let handed = y_uses.aliases.iter().find(|&&(stack, a)| {
            !stack
                && a.comp == r.at.comp
                && module.comp(a.comp).instr(a.instr).shape
                    == module.comp(a.comp).instr(r.at.instr).shape
                && {
                    let o = flow.origin(module, a.comp, a.instr);
                    o.instr == f.divide && o.same_instance(&e_origin)
                }
        });
        replacements.push(handed.map(|&(_, a)| a.instr));
    }
    let carry = replacements.iter().any(Option::is_none);
    if carry && c.instr(f.exp).shape != c.instr(f.divide).shape {
        return Err(Refusal {
            value: c.instr(f.exp).name.to_string(),
            why: ", and y has another type than the exp that would carry it".into(),
        });
    }
    sites.extend(y_uses.plumbing);

    // The checks hold: rewrite.
    let pruner = Pruner::new(module, &sites);
    if carry {
        // The residuals that carried `e` carry `y`.
        let plumbing_users: Vec<InstrId> = module
            .comp(comp)
            .instr(f.exp)
            .users()
            .iter()
            .copied()
            .filter(|u| !in_region(u) && !derived.contains(u))
            .collect();
        let cm = module.comp_mut(comp);
        for u in plumbing_users {
            let slots: Vec<usize> = cm
                .instr(u)
                .operands()
                .iter()
                .enumerate()
                .filter(|(_, &o)| o == f.exp)
                .map(|(k, _)| k)
                .collect();
            for k in slots {
                cm.set_operand(u, k, f.divide);
            }
        }
    }
    for (r, handed) in rebuilt.iter().zip(&replacements) {
        let with = if carry { r.e } else { handed.unwrap_or(r.e) };
        let b = module.comp_mut(r.at.comp);
        b.replace_all_uses(r.at.instr, with);
        b.remove_with_dead_operands(r.at.instr);
    }
    let removed = pruner.prune(module);
    log::debug!(
        "handed y over in place of {} residual(s) of {}; {removed} loop, call or stack element(s) removed",
        aliases.len(),
        module.comp(comp).instr(f.divide).name
    );
    matched_again(module, comp, f.divide)
}

/// Everything the interior values of a softmax reach outside its region:
/// their copies elsewhere, and what computes with them.
struct Reach {
    /// Values computed from the interior in the softmax's computation.
    derived: Vec<InstrId>,
    consumers: Vec<Consumer>,
    /// (interior value, a copy of it elsewhere).
    aliases: Vec<(InstrId, Site)>,
    /// The loop, call and stack plumbing the values pass through.
    sites: Vec<Element>,
}

fn reach_of_interior(
    module: &Module,
    flow: &Flow,
    comp: CompId,
    f: &ForwardSoftmax,
) -> Result<Reach, Refusal> {
    let c = module.comp(comp);
    let interior: Vec<InstrId> = f
        .region
        .iter()
        .copied()
        .filter(|&id| id != f.divide)
        .collect();
    let in_region = |id: &InstrId| f.region.binary_search(id).is_ok();
    let mut sources: Vec<InstrId> = interior;
    let mut derived: Vec<InstrId> = Vec::new();
    // For a value computed from the interior: the interior value and its
    // first use outside the region.
    let mut derived_from: Vec<(InstrId, (InstrId, InstrId))> = Vec::new();
    let mut consumers: Vec<Consumer> = Vec::new();
    let mut aliases: Vec<(InstrId, Site)> = Vec::new();
    let mut sites: Vec<Element> = Vec::new();
    while let Some(v) = sources.pop() {
        let from = derived_from.iter().find(|(d, _)| *d == v).map(|&(_, f)| f);
        let skip: Vec<InstrId> = c
            .instr(v)
            .users()
            .iter()
            .copied()
            .filter(in_region)
            .collect();
        let uses = flow.uses(module, comp, v, &skip);
        for t in uses.terminal {
            if t.comp == comp && t.instr != c.root_opt().unwrap_or(t.instr) {
                // Computed from the interior in this computation: followed
                // on, and dead once nothing reads what it feeds.
                let (value, first) = from.unwrap_or((v, t.instr));
                if has_side_effect(module, t) {
                    return Err(Refusal::by(module, value, comp, first));
                }
                if !derived.contains(&t.instr) && !in_region(&t.instr) {
                    derived.push(t.instr);
                    derived_from.push((t.instr, (value, first)));
                    sources.push(t.instr);
                }
            } else {
                let (value, via) = match from {
                    Some((value, first)) => (value, Some(first)),
                    None => (v, None),
                };
                consumers.push(Consumer { at: t, value, via });
            }
        }
        aliases.extend(uses.aliases.iter().map(|&(_, a)| (v, a)));
        sites.extend(uses.plumbing);
    }
    Ok(Reach {
        derived,
        consumers,
        aliases,
        sites,
    })
}

/// The softmax at `divide` matched again after the hand-over: it must no
/// longer escape.
fn matched_again(
    module: &Module,
    comp: CompId,
    divide: InstrId,
) -> Result<ForwardSoftmax, Refusal> {
    let c = module.comp(comp);
    match match_forward(module, c, divide) {
        Ok(again) => match escapes(c, &again.region, again.divide) {
            None => Ok(again),
            Some(inner) => Err(Refusal {
                value: c.instr(inner).name.to_string(),
                why: ", even after handing y over".into(),
            }),
        },
        Err(_) => Err(Refusal {
            value: c.instr(divide).name.to_string(),
            why: " (no longer a softmax after handing y over)".into(),
        }),
    }
}

/// Why `y` could not be handed over: the escaping value, and what uses it.
struct Refusal {
    value: String,
    why: String,
}

impl Refusal {
    /// `value` is used (in `comp`) by `user`, which is not a residual.
    fn by(module: &Module, value: InstrId, comp: CompId, user: InstrId) -> Refusal {
        let c = module.comp(comp);
        Refusal {
            value: c.instr(value).name.to_string(),
            why: format!(", by {}", c.instr(user).name),
        }
    }
}

/// A use of an escaping value (or of what is computed from it) that is not
/// plumbing: `via` is the value's first use outside the region when that
/// is what leads here.
struct Consumer {
    at: Site,
    value: InstrId,
    via: Option<InstrId>,
}

fn has_side_effect(module: &Module, t: Site) -> bool {
    crate::ir::module::has_side_effect(module.comp(t.comp).instr(t.instr))
}

/// Checks that every consumer of the escaping values is a rebuilt `y` of
/// the same iteration (or a node of its divisor), and returns them.
fn rebuilt_ys(
    module: &Module,
    flow: &Flow,
    comp: CompId,
    f: &ForwardSoftmax,
    aliases: &[(InstrId, Site)],
    consumers: &[Consumer],
) -> Result<Vec<Rebuilt>, Refusal> {
    let fc = module.comp(comp);
    let alias_of = |site: Site| -> Option<InstrId> {
        aliases
            .iter()
            .find(|(_, a)| *a == site)
            .map(|&(source, _)| source)
    };
    let mut rebuilt: Vec<Rebuilt> = Vec::new();
    for t in consumers.iter().map(|c| c.at) {
        let b = module.comp(t.comp);
        let ti = b.instr(t.instr);
        if ti.opcode != Opcode::Divide || t.comp == comp {
            continue;
        }
        let (e, d) = (ti.operand(0), ti.operand(1));
        if alias_of(Site {
            comp: t.comp,
            instr: e,
        }) != Some(f.exp)
        {
            continue;
        }
        let chain = layout_chain(module, b, d);
        let s_site = Site {
            comp: t.comp,
            instr: chain.source,
        };
        let Some(node) = alias_of(s_site) else {
            continue;
        };
        // The divisor reads the forward's divisor node the way the
        // forward's own divisor does, in the same iteration.
        let tail = layout_chain(module, fc, node);
        let composed = chain
            .dims
            .iter()
            .map(|r| r.and_then(|x| tail.dims.get(x).copied().flatten()));
        let sizes = fc.instr(f.divide).shape.dims();
        let same_read = tail.source == f.divisor.source
            && ti.shape.dims() == sizes
            && composed.clone().count() == sizes.len()
            && sizes
                .iter()
                .zip(composed.zip(&f.divisor.dims))
                .all(|(&n, (a, b))| n == 1 || a == *b);
        let (eo, so) = (
            flow.origin(module, t.comp, e),
            flow.origin(module, t.comp, chain.source),
        );
        let known = rebuilt.iter().any(|r| r.at == t);
        if !known && same_read && eo.instr == f.exp && so.instr == node && eo.same_instance(&so) {
            let mut nodes = chain.nodes.clone();
            nodes.push(t.instr);
            rebuilt.push(Rebuilt {
                at: t,
                e,
                chain: nodes,
            });
        }
    }
    // Every consumer is one of those divides or a node of their divisors,
    // and those nodes feed nothing else.
    // A use in the forward computation itself is the plainest reason.
    let mut order: Vec<&Consumer> = consumers.iter().collect();
    order.sort_by_key(|c| (c.via.is_none(), c.value != f.exp));
    for consumer in order {
        let t = consumer.at;
        let ok = rebuilt
            .iter()
            .any(|r| r.at.comp == t.comp && r.chain.contains(&t.instr));
        if ok {
            continue;
        }
        if let Some(via) = consumer.via {
            return Err(Refusal::by(module, consumer.value, comp, via));
        }
        let b = module.comp(t.comp);
        return Err(Refusal {
            value: fc.instr(consumer.value).name.to_string(),
            why: format!(
                ", by {} in {}, which is not y = e / s of the same iteration",
                b.instr(t.instr).name,
                b.name
            ),
        });
    }
    for r in &rebuilt {
        let b = module.comp(r.at.comp);
        for &n in &r.chain {
            if n == r.at.instr {
                continue;
            }
            if b.instr(n).users().iter().any(|u| !r.chain.contains(u)) {
                return Err(Refusal {
                    value: fc.instr(f.divisor.source).name.to_string(),
                    why: format!(
                        ", by a user of {} in {} besides y = e / s",
                        b.instr(n).name,
                        b.name
                    ),
                });
            }
        }
    }
    if rebuilt.is_empty() {
        return Err(Refusal {
            value: fc.instr(f.exp).name.to_string(),
            why: String::new(),
        });
    }
    Ok(rebuilt)
}
