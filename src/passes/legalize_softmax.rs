//! `legalize-softmax` (order 7): gives each Neuron softmax call the index
//! operand its kernel takes and the per-dtype instruction name. Seed page
//! `000_6f13aa1903ed49a7.txt` (LegalizeSoftmax); CONTRACT.md section 5.
//!
//! before => after (`x`: `f32[.., n]`, the target is kept):
//! - `%s = custom-call(x), custom_call_target="AwsNeuronSoftmax", backend_config="1"` =>
//!   `%Softmax_f32 = custom-call(x, s64[n] constant({0, .., n-1})),
//!   custom_call_target="AwsNeuronSoftmax", backend_config="1"`;
//! - `%b = custom-call(dLdy, y), custom_call_target="AwsNeuronSoftmaxBackward", backend_config="1"` =>
//!   `%SoftmaxBackward_f32 = custom-call(dLdy, y, s64[n] constant({0, .., n-1})), ..`.
//!
//! The suffix comes from the **result** element type (`f16`, `f32`,
//! `bf16`); any other type is left alone. n is the minor dimension of
//! operand 0. `backend_config` is the softmax axis as a bare base-10
//! integer, checked against the result's rank and written back as decimal
//! text; the new call has `api_version=API_VERSION_ORIGINAL`. A call that
//! already carries its index operand is left alone, so the pass is
//! idempotent (the original appends a second one).
//!
//! Choices where the contract is silent:
//! - a typed-FFI call (`api_version=API_VERSION_TYPED_FFI`, what
//!   `jax.ffi.ffi_call` emits by default) carries an MLIR attribute
//!   dictionary, not the decimal axis: it is left alone and reported;
//! - the operand count must be the frontend's (1 forward, 2 backward) or
//!   the legalized one; anything else, an axis outside `[0, rank)` (no
//!   negative axes) or a config that is not a bare integer is an error;
//! - the axis is written back re-rendered (`"01"` becomes `"1"`), as the
//!   original's `itoa` does.
//!
//! Every computation (as the original walks `module.computations()`).
//! Every candidate in every walked computation is validated before the
//! module is touched, so bad input leaves it unchanged.

use super::build::{check_index_length, custom_call, is_s64_iota, s64_iota};
use super::{Candidate, Legalizer, OriginalScope, PassContext, PassError};
use crate::ir::{ApiVersion, CompId, InstrId, Instruction, Module, Shape};
use crate::neuron::{decimal_config, dtype_suffix, is_integer_text, SOFTMAX, SOFTMAX_BACKWARD};

pub const NAME: &str = "legalize-softmax";

/// The two targets, and what each takes before legalization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    /// `AwsNeuronSoftmax(x)`.
    Forward,
    /// `AwsNeuronSoftmaxBackward(dLdy, y)` (CONTRACT.md section 9 on the order).
    Backward,
}

impl Direction {
    fn of(target: &str) -> Option<Direction> {
        match target {
            SOFTMAX => Some(Direction::Forward),
            SOFTMAX_BACKWARD => Some(Direction::Backward),
            _ => None,
        }
    }

    fn target(self) -> &'static str {
        match self {
            Direction::Forward => SOFTMAX,
            Direction::Backward => SOFTMAX_BACKWARD,
        }
    }

    /// The instruction name's prefix (the seed's `softmaxNames`).
    fn name_prefix(self) -> &'static str {
        match self {
            Direction::Forward => "Softmax_",
            Direction::Backward => "SoftmaxBackward_",
        }
    }

    /// Operands before legalization; the legalized form has one more.
    fn arity(self) -> usize {
        match self {
            Direction::Forward => 1,
            Direction::Backward => 2,
        }
    }

    fn operand_names(self) -> &'static str {
        match self {
            Direction::Forward => "(x)",
            Direction::Backward => "(dLdy, y)",
        }
    }
}

pub struct LegalizeSoftmax;

/// One rewrite, found by `check` and made by `apply`.
pub struct Rewrite {
    comp: CompId,
    id: InstrId,
    direction: Direction,
    /// `Softmax_<suffix>` / `SoftmaxBackward_<suffix>`, before uniquing.
    name: String,
    axis: i64,
    /// Length of the index operand: operand 0's minor dimension.
    n: i64,
}

/// The minor (last) dimension of an array of rank >= 1.
fn minor_dim(shape: &Shape) -> Option<i64> {
    shape.as_array().and_then(|a| a.dims.last().copied())
}

impl Legalizer for LegalizeSoftmax {
    const NAME: &'static str = NAME;
    const SCOPE: OriginalScope = OriginalScope::Every;
    const TARGETS: &'static [&'static str] = &[SOFTMAX, SOFTMAX_BACKWARD];
    type Rewrite = Rewrite;

    fn check(call: Candidate, ctx: &mut PassContext) -> Result<Option<Rewrite>, PassError> {
        let Candidate {
            comp,
            id,
            computation: c,
            instr,
            ..
        } = call;
        let Some(direction) = instr.custom_call_target().and_then(Direction::of) else {
            return Ok(None);
        };
        let target = direction.target();
        let et = instr.shape.element_type();
        let Some(suffix) = dtype_suffix(et) else {
            return call.skip(
                ctx,
                format!("{target} with result type {et} has no softmax kernel (F16, F32 or BF16); left alone"),
            );
        };
        if instr.api_version() == ApiVersion::TypedFfi {
            return call.skip_typed_ffi(ctx, target, "axis");
        }
        let Some(&input) = instr.operands().first() else {
            return Err(PassError::bad_input(
                NAME,
                &instr.name,
                format!(
                    "{target} takes {} operand(s) {}; found none",
                    direction.arity(),
                    direction.operand_names()
                ),
            ));
        };
        let input_shape = &c.instr(input).shape;
        let n = minor_dim(input_shape);
        if let Some(n) = n {
            if is_legalized(c, instr, direction, n) {
                return call.skip(
                    ctx,
                    format!(
                        "{target} is already legalized (its last operand is the s64[{n}] index)"
                    ),
                );
            }
        }
        let count = instr.operands().len();
        if count != direction.arity() {
            let why = match n {
                Some(n) if count == direction.arity() + 1 => {
                    format!(
                        " (the last is not the s64[{n}] index constant 0..{})",
                        n - 1
                    )
                }
                _ => String::new(),
            };
            return Err(PassError::bad_input(
                NAME,
                &instr.name,
                format!(
                    "{target} takes {} operand(s) {}, or {} with its trailing s64 index when \
                         legalized; found {count}{why}",
                    direction.arity(),
                    direction.operand_names(),
                    direction.arity() + 1,
                ),
            ));
        }
        let Some(n) = n else {
            return Err(PassError::bad_input(
                NAME,
                &instr.name,
                format!(
                    "{target} needs operand 0 to be an array of rank >= 1 (its minor dimension \
                         sizes the index operand); found {}",
                    input_shape.to_text(true)
                ),
            ));
        };
        check_index_length(NAME, instr, target, n)?;
        let config = instr.backend_config();
        let rank = instr.shape.rank();
        let out_of_range = || {
            PassError::bad_input(
                NAME,
                &instr.name,
                format!(
                    "{target} softmax axis (backend_config) must be a dimension of the result {} \
                         (0 to {}); found {config}",
                    instr.shape.to_text(false),
                    rank as i64 - 1
                ),
            )
        };
        let Some(axis) = decimal_config(config) else {
            if is_integer_text(config) {
                return Err(out_of_range());
            }
            return Err(PassError::bad_input(
                NAME,
                &instr.name,
                format!(
                    "{target} needs backend_config to be the softmax axis as a bare base-10 \
                         integer; found {config:?}"
                ),
            ));
        };
        if axis < 0 || axis >= rank as i64 {
            return Err(out_of_range());
        }
        Ok(Some(Rewrite {
            comp,
            id,
            direction,
            name: format!("{}{suffix}", direction.name_prefix()),
            axis,
            n,
        }))
    }

    fn apply(module: &mut Module, _: CompId, rewrite: Rewrite, ctx: &mut PassContext) {
        apply(module, rewrite, ctx)
    }
}

/// The legalized form: one operand more than the frontend's, the last one
/// the `s64[n]` index constant.
fn is_legalized(
    c: &crate::ir::Computation,
    instr: &Instruction,
    direction: Direction,
    n: i64,
) -> bool {
    let ops = instr.operands();
    ops.len() == direction.arity() + 1
        && ops
            .last()
            .is_some_and(|&last| is_s64_iota(c.instr(last), n))
}

fn apply(module: &mut Module, r: Rewrite, ctx: &mut PassContext) {
    let Rewrite {
        comp,
        id,
        direction,
        name,
        axis,
        n,
    } = r;
    let (shape, mut operands) = {
        let i = module.comp(comp).instr(id);
        (i.shape.clone(), i.operands().to_vec())
    };
    let index = module.add_instruction(comp, s64_iota(n));
    operands.push(index);
    let mut call = custom_call(
        shape,
        operands,
        direction.target(),
        &axis.to_string(),
        ApiVersion::Original,
    );
    call.name = name.as_str().into();
    let call = module.add_instruction(comp, call);
    // `replace_instruction` hands a same-target replacement the old name, as
    // XLA's does; the contract names it after the kernel instead.
    let new_name = module.comp(comp).instr(call).name.clone();
    log::debug!(
        "{NAME}: {} ({}) -> {new_name} with an s64[{n}] index, axis {axis}",
        module.comp(comp).instr(id).name,
        direction.target()
    );
    ctx.rewrote(
        module,
        comp,
        id,
        format!(
            "{} -> {new_name} = {}(.., s64[{n}] index), axis {axis}",
            direction.target(),
            direction.target()
        ),
    );
    module.replace_instruction(comp, id, call);
    module.comp_mut(comp).instr_mut(call).name = new_name;
}
