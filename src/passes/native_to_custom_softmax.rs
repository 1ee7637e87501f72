//! `native-to-custom-softmax` (order 42): raises a native softmax into one
//! custom call. Seed page `000_6f13aa1903ed49a7.txt`
//! (NativeToCustomSoftmax); CONTRACT.md section 9.
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

use super::build::custom_call;
use super::softmax_match::{escapes, match_forward, ForwardSoftmax};
use super::{OriginalScope, Pass, PassContext, PassError};
use crate::ir::{ApiVersion, CompId, Module, Opcode};

pub const NAME: &str = "native-to-custom-softmax";

pub struct NativeToCustomSoftmax;

impl Pass for NativeToCustomSoftmax {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run(&mut self, module: &mut Module, ctx: &mut PassContext) -> Result<bool, PassError> {
        let mut changed = false;
        for comp in ctx.computations(module, OriginalScope::Every) {
            let found = find(module, comp, ctx);
            let mut count = 0;
            for f in found {
                // An earlier rewrite in this computation may have taken nodes
                // this softmax shares.
                if f.region.iter().any(|&id| !module.comp(comp).is_live(id)) {
                    continue;
                }
                raise(module, comp, &f, ctx);
                count += 1;
            }
            log::debug!("Number of Native Softmax's detected and replaced: {count}");
            changed |= count > 0;
        }
        Ok(changed)
    }
}

/// Every forward softmax of `comp` that may be raised.
pub fn find(module: &Module, comp: CompId, ctx: &mut PassContext) -> Vec<ForwardSoftmax> {
    let c = module.comp(comp);
    let mut found = Vec::new();
    for id in c.post_order() {
        if !matches!(c.instr(id).opcode, Opcode::Divide | Opcode::Multiply) {
            continue;
        }
        match match_forward(module, c, id) {
            Err(reason) => {
                log::debug!("{reason}");
                // Only report divides that looked like a softmax.
                if reason != "div<-exp does not match div<-reduce<-exp " {
                    ctx.skipped(module, comp, id, reason);
                }
            }
            Ok(f) => match escapes(c, &f.region, f.divide) {
                Some(inner) => {
                    ctx.skipped(
                        module,
                        comp,
                        id,
                        format!(
                            "Internal Softmax node (above) is used outside of Softmax Block. Skip Native to Custom Softmax replacement. ({} is used outside)",
                            c.instr(inner).name
                        ),
                    );
                }
                None => found.push(f),
            },
        }
    }
    found
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
