//! `legalize-quantize-mx` (order 9): turns the frontend's OCP MX quantize
//! call into Neuron's dtype-tagged kernel, with its parameters moved from
//! the JSON `backend_config` into a constant operand. Seed page
//! `004_c3388e994076fc0b.txt` (section 2); CONTRACT.md section 7.
//!
//! before => after:
//! - `(u32[128,64], f8e8m0fnu[128,8]) custom-call(bf16[128,256] x),
//!   custom_call_target="QuantizeMX",
//!   backend_config={"dtype":"float8_e4m3fn","dim":-1,"block_size":32,"scale_method":"EMAX"}`
//!   =>
//!   `(s64[2], s64[], s64[], s64[]) constant(({128, 256}, 1, 32, 0))` (the
//!   dims of operand 0, `dim` after `dim < 0 => dim + rank`, `block_size`,
//!   0) and `(u32[128,64], f8e8m0fnu[128,8]) custom-call(meta, x),
//!   custom_call_target="QuantizeMX_bf16_e4m3fn"`: no `backend_config`,
//!   `api_version` ORIGINAL, the result shape kept.
//!
//! The target is `QuantizeMX_<in>_<out>`: `<in>` is `bf16` or `f16` from
//! operand 0's element type, `<out>` is `e5m2` or `e4m3fn` from `dtype`.
//! `dtype` is required; `dim` defaults to 0, `block_size` to 32,
//! `scale_method` to `EMAX`. Unknown fields are ignored, as the original's
//! `json::value<T>` reads ignore them.
//!
//! Where the original trusts the upstream MX checks, this pass refuses
//! what it cannot legalize faithfully, naming the instruction: a
//! `backend_config` that is not a JSON object, a missing or ill-typed
//! field (JSON `null` included, as `nlohmann::json::value<T>` throws on
//! it), a `dtype` other than the two MX element types (the original would
//! silently pick `e4m3fn`), an input that is neither BF16 nor F16 (the
//! original would pick `f16`), and a `dim` outside `[-rank, rank)`. The
//! rest of the MX contract (block size 32, last or second-to-last dim,
//! x4 packing, EMAX, the 2-tuple result) is the verifier's (CONTRACT.md
//! section 12); this pass carries the values as they are.
//!
//! Entry computation only (all with `--all-computations`). Matches are
//! collected and checked over the post order first and rewritten after,
//! so a bad call leaves the module untouched. The new target is not
//! `QuantizeMX`, so a second run changes nothing.

use super::build::{custom_call, s64_scalar_literal, s64_vector_literal, tuple_constant};
use super::{Candidate, Legalizer, OriginalScope, PassContext, PassError};
use crate::ir::{ApiVersion, CompId, InstrId, Module, PrimitiveType};
use crate::neuron::config::{ConfigError, Field, MxType, QuantizeMxConfig};
use crate::neuron::{MX_BLOCK, QUANTIZE_MX};
use crate::util::clip;

pub const NAME: &str = "legalize-quantize-mx";

pub struct LegalizeQuantizeMX;

/// One rewrite, found by `check` and made by `apply`.
pub struct Rewrite {
    id: InstrId,
    target: String,
    /// Dims of operand 0.
    dims: Vec<i64>,
    /// `dim` after normalisation.
    dim: i64,
    block_size: i64,
}

impl Legalizer for LegalizeQuantizeMX {
    const NAME: &'static str = NAME;
    const SCOPE: OriginalScope = OriginalScope::Entry;
    const TARGETS: &'static [&'static str] = &[QUANTIZE_MX];
    type Rewrite = Rewrite;

    fn check(call: Candidate, _: &mut PassContext) -> Result<Option<Rewrite>, PassError> {
        let Candidate {
            id,
            computation: c,
            instr,
            ..
        } = call;
        let bad = |message: String| PassError::bad_input(NAME, &instr.name, message);

        let Some(&input) = instr.operands().first() else {
            return Err(bad(format!(
                "{QUANTIZE_MX} needs its input as operand 0; it has no operands"
            )));
        };
        let input_shape = &c.instr(input).shape;
        let Some(input_array) = input_shape.as_array() else {
            return Err(bad(format!(
                "{QUANTIZE_MX} input (operand 0) must be an array, found {}",
                input_shape.to_text(true)
            )));
        };
        let in_suffix = match input_array.element_type {
            PrimitiveType::Bf16 => "bf16",
            PrimitiveType::F16 => "f16",
            other => {
                return Err(bad(format!(
                    "{QUANTIZE_MX} input (operand 0) must be bf16 or f16, found {other}"
                )))
            }
        };
        let dims = input_array.dims.clone();
        let rank = dims.len() as i64;

        let config = Config::parse(instr.backend_config()).map_err(bad)?;
        let out = MxType::from_dtype(&config.dtype).ok_or_else(|| {
            bad(format!(
                "backend_config field \"dtype\" must be \"float8_e5m2\" or \"float8_e4m3fn\", found {:?}",
                config.dtype
            ))
        })?;
        if config.dim < -rank || config.dim >= rank {
            return Err(bad(format!(
                "backend_config field \"dim\" must be in [{}, {}) for the rank-{rank} input {}, found {}",
                -rank,
                rank,
                input_shape.to_text(false),
                config.dim
            )));
        }
        Ok(Some(Rewrite {
            id,
            target: format!("{QUANTIZE_MX}_{in_suffix}_{}", out.suffix()),
            dims,
            dim: config.dim.rem_euclid(rank.max(1)),
            block_size: config.block_size,
        }))
    }

    fn apply(module: &mut Module, comp: CompId, rewrite: Rewrite, ctx: &mut PassContext) {
        apply(module, comp, rewrite, ctx)
    }
}

fn apply(module: &mut Module, comp: CompId, r: Rewrite, ctx: &mut PassContext) {
    let (shape, operands, old_name) = {
        let i = module.comp(comp).instr(r.id);
        (i.shape.clone(), i.operands().to_vec(), i.name.to_string())
    };
    let meta = tuple_constant(vec![
        s64_vector_literal(r.dims.clone()),
        s64_scalar_literal(r.dim),
        s64_scalar_literal(r.block_size),
        s64_scalar_literal(0),
    ]);
    let meta = module.add_instruction(comp, meta);
    let call = custom_call(
        shape,
        std::iter::once(meta).chain(operands),
        &r.target,
        "",
        ApiVersion::Original,
    );
    let call = module.add_instruction(comp, call);
    log::debug!(
        "{NAME}: {old_name}: {QUANTIZE_MX} -> {} (dims {:?}, dim {}, block_size {})",
        r.target,
        r.dims,
        r.dim,
        r.block_size
    );
    ctx.rewrote(
        module,
        comp,
        r.id,
        format!(
            "{QUANTIZE_MX} -> {} (dim {}, block_size {})",
            r.target, r.dim, r.block_size
        ),
    );
    module.replace_instruction(comp, r.id, call);
}

/// The QuantizeMX `backend_config` as the rewrite needs it (seed section
/// 6, `QuantizeMXConfig`).
#[derive(Debug, PartialEq)]
struct Config {
    dtype: String,
    dim: i64,
    block_size: i64,
}

impl Config {
    /// Refuses at the first problem; a `dtype` that is not an MX type is
    /// the caller's to refuse.
    fn parse(text: &str) -> Result<Config, String> {
        const EXPECTED: &str =
            "a JSON object with \"dtype\" and optionally \"dim\", \"block_size\", \"scale_method\"";
        let fields = QuantizeMxConfig::read(text).map_err(|e| match e {
            ConfigError::Empty => format!("backend_config must be {EXPECTED}, found none"),
            ConfigError::NotJson(e) => format!(
                "backend_config must be {EXPECTED}, found text that is not JSON ({e}): {}",
                clip(text)
            ),
            _ => format!("backend_config must be {EXPECTED}, found {}", clip(text)),
        })?;
        fn wrong(key: &'static str, expected: &'static str) -> impl Fn(String) -> String {
            move |found| format!("backend_config field \"{key}\" must be {expected}, found {found}")
        }
        let dtype = match fields.dtype {
            Field::Absent => {
                return Err("backend_config must give \"dtype\" (\"float8_e5m2\" or \"float8_e4m3fn\"); it is missing".to_string())
            }
            dtype => dtype.or(String::new()).map_err(wrong("dtype", "a string"))?,
        };
        // Type-checked only: EMAX (the default) is the one method, so the
        // rewrite does not depend on it (seed section 2.2).
        fields
            .scale_method
            .or(String::new())
            .map_err(wrong("scale_method", "a string"))?;
        Ok(Config {
            dtype,
            dim: fields.dim.or(0).map_err(wrong("dim", "an integer"))?,
            block_size: fields
                .block_size
                .or(MX_BLOCK)
                .map_err(wrong("block_size", "an integer"))?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::testing::{assert_refused, refusal};

    fn module(input_type: &str, config: &str) -> String {
        format!(
            "HloModule m\n\nENTRY %main (x: {input_type}[4,64]) -> (u32[4,16], f8e8m0fnu[4,2]) {{\n  \
             %x = {input_type}[4,64]{{1,0}} parameter(0)\n  \
             ROOT %q = (u32[4,16]{{1,0}}, f8e8m0fnu[4,2]{{1,0}}) custom-call(%x), \
             custom_call_target=\"QuantizeMX\"{config}\n}}\n"
        )
    }

    fn assert_error(config: &str, expected: &str) {
        assert_refused(NAME, "q", &module("bf16", config), expected);
    }

    #[test]
    fn malformed_json_is_an_error() {
        assert_error(
            r#", backend_config={"dtype":"float8_e5m2","dim":}"#,
            "found text that is not JSON",
        );
        assert_error(
            r#", backend_config="float8_e5m2""#,
            "found text that is not JSON (expected ident at line 1 column 2): float8_e5m2",
        );
        assert_error(
            r#", backend_config="\"float8_e5m2\"""#,
            "found \"float8_e5m2\"",
        );
        assert_error(r#", backend_config="[1, 2]""#, "found [1, 2]");
    }

    #[test]
    fn missing_dtype_is_an_error() {
        assert_error(
            r#", backend_config={"dim":-1,"block_size":32}"#,
            "must give \"dtype\" (\"float8_e5m2\" or \"float8_e4m3fn\"); it is missing",
        );
        assert_error("", "found none");
    }

    #[test]
    fn wrong_field_types_are_errors() {
        assert_error(
            r#", backend_config={"dtype":5}"#,
            "field \"dtype\" must be a string, found 5",
        );
        assert_error(
            r#", backend_config={"dtype":null}"#,
            "field \"dtype\" must be a string, found null",
        );
        assert_error(
            r#", backend_config={"dtype":"float8_e5m2","dim":"-1"}"#,
            "field \"dim\" must be an integer, found \"-1\"",
        );
        assert_error(
            r#", backend_config={"dtype":"float8_e5m2","dim":1.5}"#,
            "field \"dim\" must be an integer, found 1.5",
        );
        assert_error(
            r#", backend_config={"dtype":"float8_e5m2","block_size":[32]}"#,
            "field \"block_size\" must be an integer, found [32]",
        );
        assert_error(
            r#", backend_config={"dtype":"float8_e5m2","scale_method":1}"#,
            "field \"scale_method\" must be a string, found 1",
        );
    }

    #[test]
    fn unknown_dtype_is_an_error() {
        assert_error(
            r#", backend_config={"dtype":"int8"}"#,
            "field \"dtype\" must be \"float8_e5m2\" or \"float8_e4m3fn\", found \"int8\"",
        );
    }

    #[test]
    fn dim_out_of_range_is_an_error() {
        assert_error(
            r#", backend_config={"dtype":"float8_e5m2","dim":2}"#,
            "field \"dim\" must be in [-2, 2) for the rank-2 input bf16[4,64], found 2",
        );
        assert_error(
            r#", backend_config={"dtype":"float8_e5m2","dim":-3}"#,
            "found -3",
        );
    }

    #[test]
    fn an_input_other_than_bf16_or_f16_is_an_error() {
        let e = refusal(
            NAME,
            &module("f32", r#", backend_config={"dtype":"float8_e5m2"}"#),
        );
        assert_eq!(
            e,
            "pass legalize-quantize-mx: instruction q: QuantizeMX input (operand 0) must be bf16 or f16, found f32"
        );
    }

    #[test]
    fn defaults() {
        let c = Config::parse(r#"{"dtype":"float8_e4m3fn","extra":[1]}"#).unwrap();
        assert_eq!(
            c,
            Config {
                dtype: "float8_e4m3fn".into(),
                dim: 0,
                block_size: 32,
            }
        );
    }
}
