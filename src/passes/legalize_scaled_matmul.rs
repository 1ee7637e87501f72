//! `legalize-scaled-matmul` (order 10): turns the block-scaled dot
//! (JAX/StableHLO's `__op$block_scaled_dot` composite) into Neuron's
//! dtype-tagged MX matmul kernel, with its dimension numbers appended as a
//! constant operand. Seed page `004_c3388e994076fc0b.txt` (section 3);
//! CONTRACT.md section 8.
//!
//! before => after:
//! - `f32[128,64] custom-call(lhs, rhs, lhs_scale, rhs_scale),
//!   custom_call_target="__op$block_scaled_dot",
//!   backend_config={"scaled_dot_backend_config":{"lhs_batch_dimensions":[],
//!   "rhs_batch_dimensions":[],"lhs_contracting_dimensions":[1],
//!   "rhs_contracting_dimensions":[1],"element_dtype":"float8_e4m3fn"}}`
//!   =>
//!   `(s64[], s64[], s64[], s64[], s64[], s64[], s64[]) constant((2, 2, -1, -1, 1, 1, 32))`
//!   and `f32[128,64] custom-call(lhs, rhs, lhs_scale, rhs_scale, meta),
//!   custom_call_target="ScaledMatmul_e4m3fn_e4m3fn_f32", backend_config=`
//!   (the same text), `api_version` ORIGINAL, the result shape kept.
//!
//! The seven scalars of `meta`: lhs rank, rhs rank, lhs and rhs batch
//! dimension (the first listed, -1 when none is), lhs and rhs contracting
//! dimension (the first listed, the operand's last dimension when none
//! is), block size 32. The target is `ScaledMatmul_<a>_<a>_<out>`: `<a>` is
//! `e4m3fn` for `element_dtype` `float8_e4m3fn`, else `e5m2` (`""`, the
//! default, included); `<out>` is `f32` or `bf16` from the result type.
//!
//! The `backend_config` may be empty, `None` (the seed's default guard) or
//! JSON whose object `scaled_dot_backend_config` and its fields are all
//! optional; other fields (the CUDA lowering's `dequantize_type`) are
//! ignored. Its text is kept on the new call as it came. The call's other
//! attributes (`operand_layout_constraints`, a non-ORIGINAL `api_version`)
//! are not carried: the new call is made with the contract's attributes
//! only.
//!
//! Refused with an error naming the instruction: a count of operands other
//! than four, a config that is not a JSON object, a field of the wrong type
//! (JSON `null` included), an `element_dtype` that is not one of the two
//! MX element types or `""`, a listed dimension outside its operand's
//! rank, a rank-0 lhs or rhs (no dimension to contract), and a result that
//! is neither F32 nor BF16. The rest of the MX contract is the verifier's
//! (CONTRACT.md section 12).
//!
//! Entry computation only (all with `--all-computations`). Matches are
//! collected and checked over the post order first and rewritten after,
//! so a bad call leaves the module untouched. The new target is not
//! `__op$block_scaled_dot`, so a second run changes nothing.

use super::build::{custom_call, s64_scalar_literal, tuple_constant};
use super::{Candidate, Legalizer, OriginalScope, PassContext, PassError};
use crate::ir::{ApiVersion, CompId, InstrId, Module, PrimitiveType};
use crate::neuron::config::{BlockScaledDotConfig, ConfigError, Field, MxType};
use crate::neuron::{BLOCK_SCALED_DOT, MX_BLOCK};
use crate::util::clip;

pub const NAME: &str = "legalize-scaled-matmul";

pub struct LegalizeScaledMatmul;

/// One rewrite, found by `check` and made by `apply`.
pub struct Rewrite {
    id: InstrId,
    target: String,
    /// The seven scalars of the meta constant.
    meta: [i64; 7],
}

impl Legalizer for LegalizeScaledMatmul {
    const NAME: &'static str = NAME;
    const SCOPE: OriginalScope = OriginalScope::Entry;
    const TARGETS: &'static [&'static str] = &[BLOCK_SCALED_DOT];
    type Rewrite = Rewrite;

    fn check(call: Candidate, _: &mut PassContext) -> Result<Option<Rewrite>, PassError> {
        let Candidate {
            id,
            computation: c,
            instr,
            ..
        } = call;
        let bad = |message: String| PassError::bad_input(NAME, &instr.name, message);

        if instr.operands().len() != 4 {
            return Err(bad(format!(
                "{BLOCK_SCALED_DOT} must have exactly 4 operands (lhs, rhs, lhs_scale, rhs_scale), found {}",
                instr.operands().len()
            )));
        }
        let out_suffix = match instr.shape.as_array().map(|a| a.element_type) {
            Some(PrimitiveType::F32) => "f32",
            Some(PrimitiveType::Bf16) => "bf16",
            _ => {
                return Err(bad(format!(
                    "{BLOCK_SCALED_DOT} result must be an f32 or bf16 array, found {}",
                    instr.shape.to_text(false)
                )))
            }
        };
        let mut ranks = [0i64; 2];
        for (side, rank) in ["lhs", "rhs"].into_iter().zip(&mut ranks) {
            let operand = c.instr(instr.operand(if side == "lhs" { 0 } else { 1 }));
            let Some(array) = operand.shape.as_array() else {
                return Err(bad(format!(
                    "{BLOCK_SCALED_DOT} {side} must be an array, found {}",
                    operand.shape.to_text(false)
                )));
            };
            if array.dims.is_empty() {
                return Err(bad(format!(
                    "{BLOCK_SCALED_DOT} {side} must have a dimension to contract, found the scalar {}",
                    operand.shape.to_text(false)
                )));
            }
            *rank = array.dims.len() as i64;
        }
        let [lhs_rank, rhs_rank] = ranks;

        let config = Config::parse(instr.backend_config()).map_err(bad)?;
        for (key, dims, side, rank) in [
            ("lhs_batch_dimensions", &config.lhs_batch, "lhs", lhs_rank),
            ("rhs_batch_dimensions", &config.rhs_batch, "rhs", rhs_rank),
            (
                "lhs_contracting_dimensions",
                &config.lhs_contracting,
                "lhs",
                lhs_rank,
            ),
            (
                "rhs_contracting_dimensions",
                &config.rhs_contracting,
                "rhs",
                rhs_rank,
            ),
        ] {
            if let Some(d) = dims.iter().find(|&&d| d < 0 || d >= rank) {
                return Err(bad(format!(
                        "backend_config field \"{key}\" must list dimensions in [0, {rank}) of the rank-{rank} {side}, found {d}"
                    )));
            }
        }
        let elem = match config.element_dtype.as_str() {
                "" => MxType::E5m2,
                dtype => MxType::from_dtype(dtype).ok_or_else(|| {
                    bad(format!(
                        "backend_config field \"element_dtype\" must be \"float8_e4m3fn\" or \"float8_e5m2\" (or absent), found {dtype:?}"
                    ))
                })?,
            }
            .suffix();
        let meta = [
            lhs_rank,
            rhs_rank,
            config.lhs_batch.first().copied().unwrap_or(-1),
            config.rhs_batch.first().copied().unwrap_or(-1),
            config
                .lhs_contracting
                .first()
                .copied()
                .unwrap_or(lhs_rank - 1),
            config
                .rhs_contracting
                .first()
                .copied()
                .unwrap_or(rhs_rank - 1),
            // The block size the kernel is told (the seed's seventh scalar).
            MX_BLOCK,
        ];
        Ok(Some(Rewrite {
            id,
            target: format!("ScaledMatmul_{elem}_{elem}_{out_suffix}"),
            meta,
        }))
    }

    fn apply(module: &mut Module, comp: CompId, rewrite: Rewrite, ctx: &mut PassContext) {
        apply(module, comp, rewrite, ctx)
    }
}

fn apply(module: &mut Module, comp: CompId, r: Rewrite, ctx: &mut PassContext) {
    let (shape, operands, config, old_name) = {
        let i = module.comp(comp).instr(r.id);
        (
            i.shape.clone(),
            i.operands().to_vec(),
            i.backend_config().to_string(),
            i.name.to_string(),
        )
    };
    let meta = tuple_constant(r.meta.iter().map(|&v| s64_scalar_literal(v)).collect());
    let meta = module.add_instruction(comp, meta);
    let call = custom_call(
        shape,
        operands.into_iter().chain(std::iter::once(meta)),
        &r.target,
        &config,
        ApiVersion::Original,
    );
    let call = module.add_instruction(comp, call);
    log::debug!(
        "{NAME}: {old_name}: {BLOCK_SCALED_DOT} -> {} (meta {:?})",
        r.target,
        r.meta
    );
    let [lr, rr, lb, rb, lc, rc, bs] = r.meta;
    ctx.rewrote(
        module,
        comp,
        r.id,
        format!(
            "{BLOCK_SCALED_DOT} -> {} (ranks {lr}/{rr}, batch {lb}/{rb}, contracting {lc}/{rc}, block {bs})",
            r.target
        ),
    );
    module.replace_instruction(comp, r.id, call);
}

/// `scaled_dot_backend_config` as the rewrite needs it (seed section 6,
/// `ScaledDotConfig`); every field optional.
#[derive(Debug, Default, PartialEq)]
struct Config {
    lhs_batch: Vec<i64>,
    rhs_batch: Vec<i64>,
    lhs_contracting: Vec<i64>,
    rhs_contracting: Vec<i64>,
    element_dtype: String,
}

impl Config {
    /// Refuses at the first problem; an `element_dtype` that is not an MX
    /// type is the caller's to refuse.
    fn parse(text: &str) -> Result<Config, String> {
        const EXPECTED: &str =
            "empty, None, or a JSON object with an optional \"scaled_dot_backend_config\" object";
        let fields = BlockScaledDotConfig::read(text).map_err(|e| match e {
            ConfigError::NotJson(e) => format!(
                "backend_config must be {EXPECTED}, found text that is not JSON ({e}): {}",
                clip(text)
            ),
            ConfigError::InnerNotObject { key, found } => {
                format!("backend_config field \"{key}\" must be an object, found {found}")
            }
            ConfigError::Empty | ConfigError::NotObject => {
                format!("backend_config must be {EXPECTED}, found {}", clip(text))
            }
        })?;
        let list = |key: &str, field: Field<Vec<i64>>| {
            field.or(Vec::new()).map_err(|found| {
                format!(
                    "backend_config field \"{key}\" must be an array of integers, found {found}"
                )
            })
        };
        Ok(Config {
            lhs_batch: list("lhs_batch_dimensions", fields.lhs_batch)?,
            rhs_batch: list("rhs_batch_dimensions", fields.rhs_batch)?,
            lhs_contracting: list("lhs_contracting_dimensions", fields.lhs_contracting)?,
            rhs_contracting: list("rhs_contracting_dimensions", fields.rhs_contracting)?,
            element_dtype: fields.element_dtype.or(String::new()).map_err(|found| {
                format!("backend_config field \"element_dtype\" must be a string, found {found}")
            })?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::testing::{assert_refused, refusal};

    fn module(config: &str) -> String {
        format!(
            "HloModule m\n\nENTRY %main (a: u32[4,8], b: u32[6,8], sa: f8e8m0fnu[4,1], sb: f8e8m0fnu[6,1]) -> f32[4,6] {{\n  \
             %a = u32[4,8]{{1,0}} parameter(0)\n  \
             %b = u32[6,8]{{1,0}} parameter(1)\n  \
             %sa = f8e8m0fnu[4,1]{{1,0}} parameter(2)\n  \
             %sb = f8e8m0fnu[6,1]{{1,0}} parameter(3)\n  \
             ROOT %dot = f32[4,6]{{1,0}} custom-call(%a, %b, %sa, %sb), \
             custom_call_target=\"__op$block_scaled_dot\"{config}\n}}\n"
        )
    }

    fn assert_error(config: &str, expected: &str) {
        assert_refused(NAME, "dot", &module(config), expected);
    }

    #[test]
    fn malformed_json_is_an_error() {
        assert_error(
            r#", backend_config="{\"scaled_dot_backend_config\":{\"lhs_batch_dimensions\":[1,}}""#,
            "found text that is not JSON",
        );
        assert_error(r#", backend_config="none""#, "found text that is not JSON");
        assert_error(r#", backend_config="[1]""#, "found [1]");
    }

    #[test]
    fn wrong_field_types_are_errors() {
        assert_error(
            r#", backend_config={"scaled_dot_backend_config":[1]}"#,
            "field \"scaled_dot_backend_config\" must be an object, found [1]",
        );
        assert_error(
            r#", backend_config={"scaled_dot_backend_config":{"lhs_contracting_dimensions":1}}"#,
            "field \"lhs_contracting_dimensions\" must be an array of integers, found 1",
        );
        assert_error(
            r#", backend_config={"scaled_dot_backend_config":{"rhs_batch_dimensions":["0"]}}"#,
            "field \"rhs_batch_dimensions\" must be an array of integers, found [\"0\"]",
        );
        assert_error(
            r#", backend_config={"scaled_dot_backend_config":{"element_dtype":8}}"#,
            "field \"element_dtype\" must be a string, found 8",
        );
        assert_error(
            r#", backend_config={"scaled_dot_backend_config":{"element_dtype":null}}"#,
            "field \"element_dtype\" must be a string, found null",
        );
    }

    #[test]
    fn unknown_element_dtype_is_an_error() {
        assert_error(
            r#", backend_config={"scaled_dot_backend_config":{"element_dtype":"float8_e4m3"}}"#,
            "must be \"float8_e4m3fn\" or \"float8_e5m2\" (or absent), found \"float8_e4m3\"",
        );
    }

    #[test]
    fn dimensions_out_of_range_are_errors() {
        assert_error(
            r#", backend_config={"scaled_dot_backend_config":{"lhs_contracting_dimensions":[2]}}"#,
            "field \"lhs_contracting_dimensions\" must list dimensions in [0, 2) of the rank-2 lhs, found 2",
        );
        assert_error(
            r#", backend_config={"scaled_dot_backend_config":{"rhs_batch_dimensions":[-1]}}"#,
            "found -1",
        );
    }

    #[test]
    fn operand_count_and_result_type_are_checked() {
        let text = module("").replace(", %sb)", ")");
        assert_eq!(
            refusal(NAME, &text),
            "pass legalize-scaled-matmul: instruction dot: __op$block_scaled_dot must have exactly 4 operands (lhs, rhs, lhs_scale, rhs_scale), found 3"
        );
        let text = module("").replace("f32[4,6]", "f16[4,6]");
        assert_eq!(
            refusal(NAME, &text),
            "pass legalize-scaled-matmul: instruction dot: __op$block_scaled_dot result must be an f32 or bf16 array, found f16[4,6]"
        );
    }

    #[test]
    fn empty_and_none_configs_take_the_defaults() {
        assert_eq!(Config::parse("").unwrap(), Config::default());
        assert_eq!(Config::parse("None").unwrap(), Config::default());
        assert_eq!(Config::parse("{}").unwrap(), Config::default());
        assert_eq!(
            Config::parse(r#"{"scaled_dot_backend_config":{"dequantize_type":"F32"}}"#).unwrap(),
            Config::default()
        );
    }
}
