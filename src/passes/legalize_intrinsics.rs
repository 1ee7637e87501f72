//! `legalize-intrinsics` (order 5): specializes Neuron activation calls by
//! dtype and drops the transfer marker. Seed page
//! `001_994b1aa01869af58.txt`; CONTRACT.md section 3.
//!
//! before => after:
//! - `custom-call(x), custom_call_target="AwsNeuronGelu"` (f32[m,n]) =>
//!   `custom-call(x, s32[] constant(m*n)), custom_call_target="AwsNeuronGelu_f32"`
//!   (same for Erf, GeluBackward, GeluApprxTanh, Silu, SiluBackward; suffix
//!   from the result type, `f16`/`f32`/`bf16`, else the bare name);
//! - `custom-call(x), custom_call_target="AwsNeuronTransferWithStaticRing"` => `x`.
//!
//! Entry computation only (all with `--all-computations`). Matches are
//! collected over the post order first and rewritten after, as the
//! original does.

use super::build::{custom_call, s32_scalar};
use super::{Candidate, Legalizer, OriginalScope, PassContext, PassError};
use crate::ir::{ApiVersion, CompId, InstrId, Module};
use crate::neuron::{dtype_suffix, ACTIVATIONS, TRANSFER_WITH_STATIC_RING};

pub const NAME: &str = "legalize-intrinsics";

/// The marker replaced by its operand (the seed's `to_remove`).
pub const BYPASS: &str = TRANSFER_WITH_STATIC_RING;

/// Every target the pass looks at: the marker, then the activations (the
/// seed's `target_names`).
const INTRINSICS: [&str; 1 + ACTIVATIONS.len()] = {
    let mut all = [BYPASS; 1 + ACTIVATIONS.len()];
    let mut i = 0;
    while i < ACTIVATIONS.len() {
        all[i + 1] = ACTIVATIONS[i];
        i += 1;
    }
    all
};

pub struct LegalizeIntrinsics;

/// One rewrite, found by `check` and made by `apply`.
pub enum Rewrite {
    Bypass(InstrId),
    Activation {
        id: InstrId,
        target: String,
        count: i64,
    },
}

impl Legalizer for LegalizeIntrinsics {
    const NAME: &'static str = NAME;
    const SCOPE: OriginalScope = OriginalScope::Entry;
    const TARGETS: &'static [&'static str] = &INTRINSICS;
    type Rewrite = Rewrite;

    fn check(call: Candidate, ctx: &mut PassContext) -> Result<Option<Rewrite>, PassError> {
        let Candidate {
            module,
            comp,
            id,
            instr,
            ..
        } = call;
        let target = instr.custom_call_target().unwrap_or_default();
        if target == BYPASS {
            if instr.operands().is_empty() {
                return Err(PassError::bad_input(
                    NAME,
                    &instr.name,
                    format!("{BYPASS} needs an operand to be replaced by; it has none"),
                ));
            }
            // The ring is the identity: replacing it by an operand of
            // another shape would change what its users receive. A layout
            // may differ (torch-neuronx dumps have such rings), except at
            // the root, whose layout is the computation's result.
            let input = &call.computation.instr(instr.operand(0)).shape;
            let is_root = call.computation.root_opt() == Some(id);
            if !input.compatible(&instr.shape) || (is_root && *input != instr.shape) {
                return Err(PassError::bad_input(
                    NAME,
                    &instr.name,
                    format!(
                        "{BYPASS} is the identity: its shape {} must be its operand's, {}",
                        instr.shape.to_text(true),
                        input.to_text(true)
                    ),
                ));
            }
            return Ok(Some(Rewrite::Bypass(id)));
        }
        let Some(dims) = instr.shape.as_array().map(|a| a.dims.clone()) else {
            return Err(PassError::bad_input(
                NAME,
                &instr.name,
                format!(
                    "{target} must produce an array, not {}",
                    instr.shape.to_text(true)
                ),
            ));
        };
        if instr.operands().is_empty() {
            return Err(PassError::bad_input(
                NAME,
                &instr.name,
                format!("{target} needs its input operand; it has none"),
            ));
        }
        // The kernel takes the element count as an `s32[]`.
        let count = dims
            .iter()
            .try_fold(1i64, |n, &d| n.checked_mul(d))
            .filter(|&n| (0..=i64::from(i32::MAX)).contains(&n));
        let Some(count) = count else {
            return Err(PassError::bad_input(
                NAME,
                &instr.name,
                format!(
                    "{target} of {}: its element count does not fit the s32[] count operand \
                         the kernel takes (at most 2^31-1 = {} elements)",
                    instr.shape.to_text(false),
                    i32::MAX
                ),
            ));
        };
        let new_target = match dtype_suffix(instr.shape.element_type()) {
            Some(suffix) => format!("{target}_{suffix}"),
            None => {
                // The bare name stays: already legalized when it carries the count.
                if is_count_operand(module, comp, instr.operands().get(1).copied(), count)
                    && instr.operands().len() == 2
                {
                    return call.skip(
                        ctx,
                        format!(
                            "{target} is already legalized (bare name, {} has no kernel suffix)",
                            instr.shape.element_type()
                        ),
                    );
                }
                target.to_string()
            }
        };
        Ok(Some(Rewrite::Activation {
            id,
            target: new_target,
            count,
        }))
    }

    fn apply(module: &mut Module, comp: CompId, rewrite: Rewrite, ctx: &mut PassContext) {
        apply(module, comp, rewrite, ctx)
    }
}

fn is_count_operand(module: &Module, comp: CompId, id: Option<InstrId>, count: i64) -> bool {
    let Some(id) = id else { return false };
    let instr = module.comp(comp).instr(id);
    instr.shape.element_type() == crate::ir::PrimitiveType::S32
        && instr.shape.rank() == 0
        && instr.literal().and_then(|l| l.get_f64(0)) == Some(count as f64)
}

fn apply(module: &mut Module, comp: CompId, rewrite: Rewrite, ctx: &mut PassContext) {
    match rewrite {
        Rewrite::Bypass(id) => {
            let operand = module.comp(comp).instr(id).operand(0);
            let old_name = module.comp(comp).instr(id).name.to_string();
            log::debug!("{NAME}: replacing {old_name} ({BYPASS}) by its operand");
            ctx.rewrote(
                module,
                comp,
                id,
                format!(
                    "{BYPASS} removed, uses now take {}",
                    module.comp(comp).instr(operand).name
                ),
            );
            module.replace_instruction(comp, id, operand);
        }
        Rewrite::Activation { id, target, count } => {
            let (shape, input, old_target) = {
                let i = module.comp(comp).instr(id);
                (
                    i.shape.clone(),
                    i.operand(0),
                    i.custom_call_target().unwrap_or_default().to_string(),
                )
            };
            let n = module.add_instruction(comp, s32_scalar(count));
            let call = custom_call(shape, [input, n], &target, "", ApiVersion::Original);
            let call = module.add_instruction(comp, call);
            ctx.rewrote(
                module,
                comp,
                id,
                format!("{old_target} -> {target} (count {count})"),
            );
            module.replace_instruction(comp, id, call);
        }
    }
}
