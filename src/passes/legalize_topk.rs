//! `legalize-topk` (order 8): specializes Neuron's TopK call by dtype and
//! gives it the index operand its kernel takes. Seed page
//! `002_44b2222878be970d.txt`; CONTRACT.md section 6.
//!
//! before => after (`x`: `f32[.., n]`):
//! - `custom-call(x), custom_call_target="AwsNeuronTopK", backend_config="5"` =>
//!   `custom-call(x, s64[n] constant({0, .., n-1})), custom_call_target="TopK_f32"`.
//!
//! The suffix comes from **operand 0**'s element type (`f16`, `f32`,
//! `bf16`); any other type is left alone. `backend_config` is k as a bare
//! base-10 integer in the int32 range: validated, then dropped (the kernel
//! reads k from the result shape). Result shape kept,
//! `api_version=API_VERSION_ORIGINAL`. XLA's own `TopK` custom call (from
//! `TopkRewriter`) is a different target and is not touched; so is the
//! legalized `TopK_<suffix>`, which makes the pass idempotent.
//!
//! Choices where the contract is silent: a typed-FFI call (MLIR attribute
//! dictionary for a config) is left alone and reported; a call with other
//! than one operand, or a scalar input, is an error; k is checked only
//! against the int32 range, as the original does.
//!
//! Entry computation only (all with `--all-computations`). Every
//! candidate is validated before the module is touched.

use super::build::{check_index_length, custom_call, s64_iota};
use super::{Candidate, Legalizer, OriginalScope, PassContext, PassError};
use crate::ir::{ApiVersion, CompId, InstrId, Module};
use crate::neuron::{decimal_config, dtype_suffix, is_integer_text, TOPK};

pub const NAME: &str = "legalize-topk";

pub struct LegalizeTopK;

/// One rewrite, found by `check` and made by `apply`.
pub struct Rewrite {
    comp: CompId,
    id: InstrId,
    /// `TopK_<suffix>`.
    target: String,
    /// Length of the index operand: operand 0's minor dimension.
    n: i64,
    k: i32,
}

impl Legalizer for LegalizeTopK {
    const NAME: &'static str = NAME;
    const SCOPE: OriginalScope = OriginalScope::Entry;
    const TARGETS: &'static [&'static str] = &[TOPK];
    type Rewrite = Rewrite;

    fn check(call: Candidate, ctx: &mut PassContext) -> Result<Option<Rewrite>, PassError> {
        let Candidate {
            comp,
            id,
            computation: c,
            instr,
            ..
        } = call;
        let Some(&input) = instr.operands().first() else {
            return Err(PassError::bad_input(
                NAME,
                &instr.name,
                format!("{TOPK} takes exactly one operand (the input); found none"),
            ));
        };
        let input_shape = &c.instr(input).shape;
        let et = input_shape.element_type();
        let Some(suffix) = dtype_suffix(et) else {
            return call.skip(
                ctx,
                format!(
                    "{TOPK} with input type {et} has no TopK kernel (F16, F32 or BF16); left alone"
                ),
            );
        };
        if instr.api_version() == ApiVersion::TypedFfi {
            return call.skip_typed_ffi(ctx, TOPK, "k");
        }
        if instr.operands().len() != 1 {
            return Err(PassError::bad_input(
                NAME,
                &instr.name,
                format!(
                    "{TOPK} takes exactly one operand (the input); found {}",
                    instr.operands().len()
                ),
            ));
        }
        let Some(n) = input_shape.as_array().and_then(|a| a.dims.last().copied()) else {
            return Err(PassError::bad_input(
                NAME,
                &instr.name,
                format!(
                    "{TOPK} needs its input to be an array of rank >= 1 (top-k runs over its \
                         minor dimension); found {}",
                    input_shape.to_text(true)
                ),
            ));
        };
        check_index_length(NAME, instr, TOPK, n)?;
        let config = instr.backend_config();
        let out_of_range = || {
            PassError::bad_input(
                NAME,
                &instr.name,
                format!(
                    "{TOPK} needs k (backend_config) in the int32 range [{}, {}]; found {config}",
                    i32::MIN,
                    i32::MAX
                ),
            )
        };
        let Some(k) = decimal_config(config) else {
            if is_integer_text(config) {
                return Err(out_of_range());
            }
            return Err(PassError::bad_input(
                    NAME,
                    &instr.name,
                    format!("{TOPK} needs backend_config to be k as a bare base-10 integer; found {config:?}"),
                ));
        };
        let Ok(k) = i32::try_from(k) else {
            return Err(out_of_range());
        };
        Ok(Some(Rewrite {
            comp,
            id,
            target: format!("TopK_{suffix}"),
            n,
            k,
        }))
    }

    fn apply(module: &mut Module, _: CompId, rewrite: Rewrite, ctx: &mut PassContext) {
        apply(module, rewrite, ctx)
    }
}

fn apply(module: &mut Module, r: Rewrite, ctx: &mut PassContext) {
    let Rewrite {
        comp,
        id,
        target,
        n,
        k,
    } = r;
    let (shape, input) = {
        let i = module.comp(comp).instr(id);
        (i.shape.clone(), i.operand(0))
    };
    let index = module.add_instruction(comp, s64_iota(n));
    let call = custom_call(shape, [input, index], &target, "", ApiVersion::Original);
    let call = module.add_instruction(comp, call);
    log::debug!(
        "{NAME}: {} ({TOPK}, k = {k}) -> {} ({target}) with an s64[{n}] index",
        module.comp(comp).instr(id).name,
        module.comp(comp).instr(call).name
    );
    ctx.rewrote(
        module,
        comp,
        id,
        format!("{TOPK} -> {target} (k = {k} dropped, s64[{n}] index)"),
    );
    module.replace_instruction(comp, id, call);
}
