//! The contract checks: a verifier for the Neuron custom calls this tool
//! rewrites, run by the command line after parsing and before the passes
//! (CONTRACT.md section 12; `--no-contract-checks` turns it off).
//!
//! The original keeps these checks upstream of its passes, in a catalog of
//! structured errors (`hilo::lookup_cause` / `lookup_resolution`, ids
//! EVRF036-058), and its passes trust them. The seed pages quote some of
//! the catalog's messages (used here where they exist) but not its ids, so
//! the ids here are this project's own: `HOC001`... ("hlo-opt contract").
//! Each [`Violation`] names the computation and instruction, the cause
//! (what was expected, what was found) and the resolution (what to change).
//! Every violation in the module is reported, not just the first.
//!
//! The calls checked, in every computation (not only the passes' default
//! scope), matched by exact `custom_call_target`:
//! - `QuantizeMX` (HOC001-HOC011);
//! - `__op$block_scaled_dot` (HOC012-HOC020);
//! - `AwsNeuronTopK` (HOC021-HOC025, HOC029);
//! - `AwsNeuronSoftmax`, `AwsNeuronSoftmaxBackward` (HOC026-HOC028).
//!
//! Choices where the contract is silent:
//! - A call with `api_version=API_VERSION_TYPED_FFI` carries an MLIR
//!   attribute dictionary (`{dim = -1 : i64, ...}`), not the opaque string
//!   or JSON of the Neuron frontends: its `backend_config` is not checked
//!   (the rest is).
//! - `__op$block_scaled_dot` accepts, besides QuantizeMX's u32 packed data,
//!   unpacked `f8e4m3fn` / `f8e5m2` data (what jax's CUDA lowering of
//!   `jax.nn.scaled_matmul` emits): the same MX-FP8 numbers, four times
//!   the elements along the contracting dimension. lhs and rhs must have
//!   the same type (the legalized target names one element type for both),
//!   and a given `element_dtype` must agree with f8 data. Other formats
//!   (nvfp4: `f4e2m1fn` data, `f8e4m3fn` scales, blocks of 16) are not MX
//!   and are violations.
//! - Batch and contracting dimensions pair up in list order (dot_general's
//!   rule); several may be listed (the legalized metadata names the first
//!   of each, CONTRACT.md section 8). The blocks of 32 and the x4 packing
//!   run along the first contracting dimension, the one the kernel is told.
//! - TopK and softmax calls whose element type the passes do not legalize
//!   (an s32 TopK, an f64 softmax) are valid; see [`topk`].

use crate::ir::{
    ApiVersion, Computation, InstrId, Instruction, Module, Opcode, PrimitiveType, Shape, SourcePos,
};
use crate::neuron::decimal_config;
use serde_json::Value;
use std::fmt;

macro_rules! checks {
    ($($(#[$m:meta])* $variant:ident = $code:literal, $summary:literal;)*) => {
        /// One contract check; its code is the id users see.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Check {
            $($(#[$m])* $variant,)*
        }

        impl Check {
            pub const ALL: &'static [Check] = &[$(Check::$variant,)*];

            /// `HOC001`...
            pub fn code(self) -> &'static str {
                match self { $(Check::$variant => $code,)* }
            }

            /// What the check requires, in a few words.
            pub fn summary(self) -> &'static str {
                match self { $(Check::$variant => $summary,)* }
            }
        }
    };
}

checks! {
    QmxOperands = "HOC001", "QuantizeMX has exactly one operand";
    QmxConfig = "HOC002", "QuantizeMX backend_config is a JSON object with fields of the right types";
    QmxDtype = "HOC003", "QuantizeMX dtype is float8_e5m2 or float8_e4m3fn (required)";
    QmxBlockSize = "HOC004", "QuantizeMX block_size is 32 (the default)";
    QmxScaleMethod = "HOC005", "QuantizeMX scale_method is EMAX (the default)";
    QmxDim = "HOC006", "QuantizeMX dim is the last or second-to-last dimension";
    QmxInputType = "HOC007", "QuantizeMX input is a BF16 or F16 array";
    QmxResultTuple = "HOC008", "QuantizeMX returns a 2-tuple (data, scale)";
    QmxResultShape = "HOC009", "QuantizeMX returns u32 data with dim/4 and f8e8m0fnu scales with dim/32";
    QmxPacking = "HOC010", "QuantizeMX size along dim is divisible by 4 (x4 packing)";
    QmxBlocks = "HOC011", "QuantizeMX size along dim is divisible by the block size 32";
    DotOperands = "HOC012", "block_scaled_dot has exactly 4 operands";
    DotConfig = "HOC013", "block_scaled_dot backend_config is empty, None or JSON with fields of the right types";
    DotDataType = "HOC014", "block_scaled_dot lhs/rhs are both u32 (packed) or both the same fp8 type";
    DotRank = "HOC015", "block_scaled_dot lhs/rhs have rank >= 2";
    DotOutputType = "HOC016", "block_scaled_dot result is F32 or BF16";
    DotBatch = "HOC017", "block_scaled_dot batch dimensions are consistent";
    DotContracting = "HOC018", "block_scaled_dot contracting dimensions are consistent";
    DotScales = "HOC019", "block_scaled_dot scales are f8e8m0fnu, one per 32-element block";
    DotResultShape = "HOC020", "block_scaled_dot result is (batch, lhs free, rhs free)";
    TopkOperands = "HOC021", "AwsNeuronTopK has exactly one operand";
    TopkConfig = "HOC022", "AwsNeuronTopK backend_config is an integer k in the int32 range";
    TopkOperandType = "HOC023", "AwsNeuronTopK operand is a real-valued array of rank >= 1";
    TopkResult = "HOC024", "AwsNeuronTopK returns a 2-tuple (values, integer indices)";
    TopkK = "HOC025", "AwsNeuronTopK k equals the result's minor dimension";
    SoftmaxOperands = "HOC026", "softmax operand count (1/2 forward, 2/3 backward; s64 index last)";
    SoftmaxConfig = "HOC027", "softmax backend_config is an integer axis within the rank";
    SoftmaxShape = "HOC028", "softmax operands and result have the same dimensions";
    TopkIntegerInput = "HOC029", "AwsNeuronTopK input is not an integer array (Neuron's EVRF013)";
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// One broken rule at one instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub check: Check,
    pub computation: String,
    pub instruction: String,
    /// The instruction's `custom_call_target`.
    pub target: String,
    /// What was expected and what was found.
    pub cause: String,
    /// What to change.
    pub resolution: String,
    /// Where the instruction was read, when the module was parsed.
    pub pos: Option<SourcePos>,
}

impl Violation {
    /// The violation without its resolution: id, target, where, cause.
    pub fn headline(&self) -> String {
        format!(
            "{} {} in computation {}, instruction {}: {}",
            self.check.code(),
            self.target,
            self.computation,
            self.instruction,
            self.cause
        )
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; resolution: {}", self.headline(), self.resolution)
    }
}

impl std::error::Error for Violation {}

const QUANTIZE_MX: &str = "QuantizeMX";
const BLOCK_SCALED_DOT: &str = "__op$block_scaled_dot";
const TOPK: &str = "AwsNeuronTopK";
const SOFTMAX: &str = "AwsNeuronSoftmax";
const SOFTMAX_BACKWARD: &str = "AwsNeuronSoftmaxBackward";

/// The OCP MX block: 32 elements share one E8M0 scale.
const MX_BLOCK: i64 = 32;
/// FP8 elements per u32 lane word.
const PACK: i64 = 4;
const OCP_MX_SPEC: &str =
    "https://www.opencompute.org/documents/ocp-microscaling-formats-mx-v1-0-spec-final-pdf";
const QMX_CONFIG_RESOLUTION: &str = "Ensure the backend_config is valid JSON with required fields: dtype, dim, block_size, scale_method, e.g. {\"dtype\":\"float8_e4m3fn\",\"dim\":-1,\"block_size\":32,\"scale_method\":\"EMAX\"}";

/// Checks every computation; returns every violation, in print order.
pub fn check(module: &Module) -> Vec<Violation> {
    let mut out = Vec::new();
    for (_, comp) in module.computations() {
        for (id, instr) in comp.instructions() {
            if instr.opcode != Opcode::CustomCall {
                continue;
            }
            let Some(target) = instr.custom_call_target() else {
                continue;
            };
            let mut site = Site {
                comp,
                id,
                instr,
                target,
                out: &mut out,
            };
            match target {
                QUANTIZE_MX => quantize_mx(&mut site),
                BLOCK_SCALED_DOT => block_scaled_dot(&mut site),
                TOPK => topk(&mut site),
                SOFTMAX => softmax(&mut site, false),
                SOFTMAX_BACKWARD => softmax(&mut site, true),
                _ => {}
            }
        }
    }
    out
}

/// The instruction being checked, and where violations go.
struct Site<'a> {
    comp: &'a Computation,
    id: InstrId,
    instr: &'a Instruction,
    target: &'a str,
    out: &'a mut Vec<Violation>,
}

impl<'a> Site<'a> {
    fn report(&mut self, check: Check, cause: impl Into<String>, resolution: impl Into<String>) {
        let name = &self.instr.name;
        self.out.push(Violation {
            check,
            computation: self.comp.name.to_string(),
            instruction: name.to_string(),
            target: self.target.to_string(),
            cause: cause.into(),
            resolution: resolution.into(),
            pos: self.comp.source_pos(self.id),
        });
    }

    fn operand(&self, i: usize) -> Option<&'a Shape> {
        let comp = self.comp;
        self.instr.operands().get(i).map(|&o| &*comp.instr(o).shape)
    }

    /// The `backend_config` text, or `None` for a typed-FFI call, whose
    /// config is an MLIR attribute dictionary and is not checked.
    fn config(&self) -> Option<&'a str> {
        (self.instr.api_version() != ApiVersion::TypedFfi).then(|| self.instr.backend_config())
    }
}

fn text(shape: &Shape) -> String {
    shape.to_text(false)
}

fn array_text(ty: PrimitiveType, dims: &[i64]) -> String {
    let dims: Vec<String> = dims.iter().map(i64::to_string).collect();
    format!("{}[{}]", ty.name(), dims.join(","))
}

/// Whether `text` is a bare base-10 integer of any size (`decimal_config`
/// reads those that fit in an i64).
fn is_decimal(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Text for a message, cut short when long.
fn clip(text: &str) -> String {
    const MAX: usize = 120;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_string(),
    }
}

// ---------------------------------------------------------------- QuantizeMX

/// `QuantizeMX(x)`: CONTRACT.md sections 7 and 13, seed 004 section 4.1.
fn quantize_mx(s: &mut Site) {
    let count = s.instr.operands().len();
    if count != 1 {
        s.report(
            Check::QmxOperands,
            format!("QuantizeMX takes exactly 1 operand (the tensor to quantize), found {count}"),
            "pass the BF16/F16 tensor to quantize as the only operand",
        );
    }
    let input = s.operand(0);
    if let Some(shape) = input {
        let ok = shape
            .as_array()
            .is_some_and(|a| matches!(a.element_type, PrimitiveType::Bf16 | PrimitiveType::F16));
        if !ok {
            s.report(
                Check::QmxInputType,
                format!(
                    "the input is {}: only BF16 and F16 are supported",
                    text(shape)
                ),
                "convert the input to bf16 or f16 before QuantizeMX (the kernels are QuantizeMX_bf16_* and QuantizeMX_f16_*)",
            );
        }
    }
    let dim = s.config().and_then(|config| quantize_mx_config(s, config));
    let input = input.and_then(Shape::as_array);

    // The dimension quantized along, and its size when it packs into
    // whole blocks.
    let mut along: Option<(usize, Option<i64>)> = None;
    if let (Some(dim), Some(a)) = (dim, input) {
        let rank = a.rank() as i64;
        let norm = if dim < 0 { dim + rank } else { dim };
        if rank >= 1 && (norm == rank - 1 || (rank >= 2 && norm == rank - 2)) {
            along = Some((norm as usize, None));
        } else {
            let cause = match rank {
                0 => format!("dim {dim}: the rank-0 input {} has no dimension to quantize along", array_text(a.element_type, &a.dims)),
                1 => format!("dim {dim} is not a dimension of the rank-1 input: only last dim (0 or -1) is supported"),
                _ => format!(
                    "dim {dim} of the rank-{rank} input: only last dim ({} or -1) or second-to-last dim ({} or -2) are supported",
                    rank - 1,
                    rank - 2
                ),
            };
            s.report(
                Check::QmxDim,
                cause,
                "set \"dim\" to -1 (the last dimension) or -2 (the second-to-last); transpose the input first to quantize along another dimension",
            );
        }
    }
    if let (Some((d, size)), Some(a)) = (along.as_mut(), input) {
        let n = a.dims[*d];
        if !a.is_dynamic(*d) {
            if n % PACK != 0 {
                s.report(
                    Check::QmxPacking,
                    format!("dimension {d} of the input has size {n}, which must be divisible by 4 for x4 packing"),
                    format!("pad dimension {d} of the input to a multiple of 32 (4 FP8 elements per u32 word, 32 per scale block)"),
                );
            }
            if n % MX_BLOCK != 0 {
                s.report(
                    Check::QmxBlocks,
                    format!("dimension {d} of the input has size {n}, which is not a multiple of the block size {MX_BLOCK}"),
                    format!("pad dimension {d} of the input to a multiple of {MX_BLOCK} (one E8M0 scale per block of {MX_BLOCK})"),
                );
            } else {
                *size = Some(n);
            }
        }
    }

    let shape = &*s.instr.shape;
    let Some(elems) = shape.tuple_elements().filter(|e| e.len() == 2) else {
        s.report(
            Check::QmxResultTuple,
            format!(
                "the result is {}: QuantizeMX must return a tuple with exactly 2 outputs (quantized data and scale)",
                text(shape)
            ),
            "make the result (u32[... dim/4 ...], f8e8m0fnu[... dim/32 ...])",
        );
        return;
    };
    let expected_dims = |divisor: i64| -> Option<Vec<i64>> {
        let (d, Some(n)) = along? else { return None };
        let mut dims = input?.dims.clone();
        dims[d] = n / divisor;
        Some(dims)
    };
    for (i, (what, ty, divisor)) in [
        ("quantized data", PrimitiveType::U32, PACK),
        ("scale", PrimitiveType::F8E8M0FNU, MX_BLOCK),
    ]
    .into_iter()
    .enumerate()
    {
        let found = &elems[i];
        let expected = expected_dims(divisor);
        let type_ok = found.as_array().is_some_and(|a| a.element_type == ty);
        let dims_ok = expected.as_deref().is_none_or(|e| found.dims() == e);
        if type_ok && dims_ok {
            continue;
        }
        let want = match &expected {
            Some(dims) => array_text(ty, dims),
            None => format!("a {} array", ty.name()),
        };
        s.report(
            Check::QmxResultShape,
            format!(
                "result element {i} ({what}) is {}, expected {want}",
                text(found)
            ),
            format!(
                "make result element {i} {want}: the input's shape with dim divided by {divisor}"
            ),
        );
    }
}

/// Checks the JSON config; returns `dim` (0 when absent) when it can be read.
fn quantize_mx_config(s: &mut Site, config: &str) -> Option<i64> {
    let obj = match serde_json::from_str::<Value>(config) {
        Ok(Value::Object(obj)) => obj,
        Ok(_) => {
            s.report(
                Check::QmxConfig,
                format!("backend_config {} is not a JSON object", clip(config)),
                QMX_CONFIG_RESOLUTION,
            );
            return None;
        }
        Err(e) => {
            let cause = if config.is_empty() {
                "backend_config is empty".to_string()
            } else {
                format!("backend_config is not valid JSON ({e}): {}", clip(config))
            };
            s.report(Check::QmxConfig, cause, QMX_CONFIG_RESOLUTION);
            return None;
        }
    };
    let wrong_type = |s: &mut Site, key: &str, expected: &str, v: &Value| {
        s.report(
            Check::QmxConfig,
            format!(
                "backend_config field \"{key}\" must be {expected}, found {}",
                clip(&v.to_string())
            ),
            QMX_CONFIG_RESOLUTION,
        );
    };
    match obj.get("dtype") {
        None => s.report(
            Check::QmxDtype,
            "backend_config has no \"dtype\": only 'float8_e5m2' and 'float8_e4m3fn' are supported",
            "add \"dtype\":\"float8_e4m3fn\" or \"dtype\":\"float8_e5m2\"",
        ),
        Some(Value::String(d)) if d == "float8_e5m2" || d == "float8_e4m3fn" => {}
        Some(Value::String(d)) => s.report(
            Check::QmxDtype,
            format!("dtype {d:?}: only 'float8_e5m2' and 'float8_e4m3fn' are supported"),
            "set \"dtype\" to \"float8_e4m3fn\" or \"float8_e5m2\" (OCP MX-FP8 element types)",
        ),
        Some(v) => wrong_type(s, "dtype", "a string", v),
    }
    match obj.get("block_size") {
        None => {}
        Some(v) => match v.as_i64() {
            Some(MX_BLOCK) => {}
            Some(n) => s.report(
                Check::QmxBlockSize,
                format!("block_size {n}: block_size must be 32"),
                format!(
                    "set \"block_size\" to 32 or leave it out (the OCP MX block, {OCP_MX_SPEC})"
                ),
            ),
            None => wrong_type(s, "block_size", "an integer", v),
        },
    }
    match obj.get("scale_method") {
        None => {}
        Some(Value::String(m)) if m == "EMAX" => {}
        Some(Value::String(m)) => s.report(
            Check::QmxScaleMethod,
            format!("scale_method {m:?}: only \"EMAX\" is supported"),
            "set \"scale_method\" to \"EMAX\" or leave it out",
        ),
        Some(v) => wrong_type(s, "scale_method", "a string", v),
    }
    match obj.get("dim") {
        None => Some(0),
        Some(v) => match v.as_i64() {
            Some(d) => Some(d),
            None => {
                wrong_type(s, "dim", "an integer", v);
                None
            }
        },
    }
}

// ------------------------------------------------------ __op$block_scaled_dot

/// `scaled_dot_backend_config`, every field optional.
#[derive(Default)]
struct DotConfig {
    lhs_batch: Vec<i64>,
    rhs_batch: Vec<i64>,
    lhs_contracting: Vec<i64>,
    rhs_contracting: Vec<i64>,
    element_dtype: String,
}

/// `__op$block_scaled_dot(lhs, rhs, lhs_scale, rhs_scale)`: CONTRACT.md
/// sections 8 and 13, seed 004 section 4.2.
fn block_scaled_dot(s: &mut Site) {
    let count = s.instr.operands().len();
    if count != 4 {
        s.report(
            Check::DotOperands,
            format!("must have exactly 4 operands (lhs, rhs, lhs_scale, rhs_scale), found {count}"),
            "pass lhs, rhs, lhs_scale, rhs_scale, in that order",
        );
    }
    let result = &*s.instr.shape;
    let out = result
        .as_array()
        .filter(|a| matches!(a.element_type, PrimitiveType::F32 | PrimitiveType::Bf16));
    if out.is_none() {
        s.report(
            Check::DotOutputType,
            format!("the result is {}: only F32 and BF16 are supported", text(result)),
            "make the result f32 or bf16 (the kernels are ScaledMatmul_*_f32 and ScaledMatmul_*_bf16) and convert it afterwards",
        );
    }
    let config = s.config().and_then(|c| dot_config(s, c));
    if count != 4 {
        return;
    }
    let sides = ["lhs", "rhs"];
    let data = [s.operand(0), s.operand(1)].map(|o| o.expect("4 operands"));
    let scales = [s.operand(2), s.operand(3)].map(|o| o.expect("4 operands"));

    // Element types.
    let is_mx = |t: PrimitiveType| {
        matches!(
            t,
            PrimitiveType::U32 | PrimitiveType::F8E4M3FN | PrimitiveType::F8E5M2
        )
    };
    let mut types = [None, None];
    for i in 0..2 {
        match data[i].as_array().map(|a| a.element_type) {
            Some(t) if is_mx(t) => types[i] = Some(t),
            _ => s.report(
                Check::DotDataType,
                format!(
                    "{} is {}: only U32 (packed MX format from QuantizeMX) or unpacked f8e4m3fn/f8e5m2 are supported",
                    sides[i],
                    text(data[i])
                ),
                format!("quantize {} with QuantizeMX (MX-FP8: float8_e4m3fn or float8_e5m2, blocks of 32, E8M0 scales)", sides[i]),
            ),
        }
    }
    let data_type = match types {
        [Some(l), Some(r)] if l != r => {
            s.report(
                Check::DotDataType,
                format!(
                    "lhs is {} but rhs is {}: both must be u32 or both the same fp8 type",
                    text(data[0]),
                    text(data[1])
                ),
                "quantize lhs and rhs to the same MX element type",
            );
            None
        }
        [Some(l), Some(_)] => Some(l),
        _ => None,
    };
    if let (Some(t), Some(c)) = (data_type, &config) {
        let named = match c.element_dtype.as_str() {
            "float8_e4m3fn" => Some(PrimitiveType::F8E4M3FN),
            "float8_e5m2" => Some(PrimitiveType::F8E5M2),
            _ => None,
        };
        if let Some(named) = named.filter(|&n| t != PrimitiveType::U32 && n != t) {
            s.report(
                Check::DotDataType,
                format!(
                    "element_dtype {:?} names {}, but lhs and rhs are {}",
                    c.element_dtype,
                    named.name(),
                    t.name()
                ),
                format!(
                    "set \"element_dtype\" to \"float8_{}\" (or leave it out)",
                    &t.name()[2..]
                ),
            );
        }
    }

    // Ranks.
    let mut arrays = [None, None];
    for i in 0..2 {
        let rank = data[i].rank();
        if data[i].as_array().is_some() && rank >= 2 {
            arrays[i] = data[i].as_array();
        } else if data[i].as_array().is_some() {
            s.report(
                Check::DotRank,
                format!(
                    "{} {} has rank {rank}; rank >= 2 is required",
                    sides[i],
                    text(data[i])
                ),
                format!(
                    "reshape {} to rank 2 or more (rows, contracting dimension)",
                    sides[i]
                ),
            );
        }
    }
    let ([Some(lhs), Some(rhs)], Some(config)) = (arrays, config) else {
        return;
    };
    let ranks = [lhs.rank() as i64, rhs.rank() as i64];
    let dims = [&lhs.dims, &rhs.dims];

    // Batch dimensions: listed in pairs, the same count on both sides.
    let batch = [&config.lhs_batch, &config.rhs_batch];
    let mut batch_ok = true;
    if batch[0].len() != batch[1].len() {
        batch_ok = false;
        s.report(
            Check::DotBatch,
            format!(
                "batch-dim count mismatch: lhs_batch_dimensions {:?}, rhs_batch_dimensions {:?}",
                batch[0], batch[1]
            ),
            "list the same number of batch dimensions for lhs and rhs, in matching order",
        );
    }
    for i in 0..2 {
        if let Some(cause) = bad_dimension_list(batch[i], ranks[i]) {
            batch_ok = false;
            s.report(
                Check::DotBatch,
                format!("{}_batch_dimensions {cause}", sides[i]),
                format!(
                    "list distinct dimensions of the rank-{} {} in [0, {})",
                    ranks[i], sides[i], ranks[i]
                ),
            );
        }
    }
    if batch_ok {
        for (&l, &r) in batch[0].iter().zip(batch[1].iter()) {
            let (ln, rn) = (dims[0][l as usize], dims[1][r as usize]);
            if ln != rn {
                batch_ok = false;
                s.report(
                    Check::DotBatch,
                    format!(
                        "batch sizes differ: lhs dimension {l} is {ln}, rhs dimension {r} is {rn}"
                    ),
                    "make each pair of batch dimensions the same size",
                );
            }
        }
    }

    // Contracting dimensions: listed in pairs; none listed means the last
    // dimension. The MX blocks (and the u32 packing) run along the first,
    // the one the legalized call's metadata names.
    let contracting: [Vec<i64>; 2] = [
        (&config.lhs_contracting, ranks[0]),
        (&config.rhs_contracting, ranks[1]),
    ]
    .map(|(listed, rank)| {
        if listed.is_empty() {
            vec![rank - 1]
        } else {
            listed.clone()
        }
    });
    let mut contracting_ok = true;
    if contracting[0].len() != contracting[1].len() {
        contracting_ok = false;
        s.report(
            Check::DotContracting,
            format!(
                "lhs contracts over dimensions {:?} but rhs over {:?}: the counts differ",
                contracting[0], contracting[1]
            ),
            "list the same number of contracting dimensions for lhs and rhs (none listed means the last dimension)",
        );
    }
    for i in 0..2 {
        if let Some(cause) = bad_dimension_list(&contracting[i], ranks[i]) {
            contracting_ok = false;
            s.report(
                Check::DotContracting,
                format!("{}_contracting_dimensions {cause}", sides[i]),
                format!(
                    "list distinct dimensions of the rank-{} {} in [0, {})",
                    ranks[i], sides[i], ranks[i]
                ),
            );
        }
    }
    if !contracting_ok {
        return;
    }
    for i in 0..2 {
        if let Some(d) = contracting[i].iter().find(|d| batch[i].contains(d)) {
            contracting_ok = false;
            s.report(
                Check::DotContracting,
                format!(
                    "dimension {d} of {} is both a batch and a contracting dimension",
                    sides[i]
                ),
                "contract over dimensions that are not batch dimensions (none listed means the last dimension)",
            );
        }
    }
    if data_type.is_some() {
        for (&l, &r) in contracting[0].iter().zip(contracting[1].iter()) {
            let (ln, rn) = (dims[0][l as usize], dims[1][r as usize]);
            if ln != rn {
                contracting_ok = false;
                s.report(
                    Check::DotContracting,
                    format!(
                        "lhs and rhs must have the same contract dim and size: lhs dimension {l} is {ln}, rhs dimension {r} is {rn}"
                    ),
                    "contract over dimensions of the same size",
                );
            }
        }
    }

    // Scales: one E8M0 per block of 32 elements along the (first)
    // contracting dimension, which holds four elements per u32 word.
    if contracting_ok {
        for i in 0..2 {
            let Some(ty) = types[i] else { continue };
            let cd = contracting[i][0] as usize;
            let per_word = if ty == PrimitiveType::U32 { PACK } else { 1 };
            let k = dims[i][cd].saturating_mul(per_word);
            if k % MX_BLOCK != 0 {
                s.report(
                    Check::DotScales,
                    format!(
                        "{} holds {k} elements along its contracting dimension {cd}, not a multiple of the block size {MX_BLOCK}",
                        sides[i]
                    ),
                    format!("pad the contracting dimension to a multiple of {MX_BLOCK} elements"),
                );
                continue;
            }
            let mut want = dims[i].clone();
            want[cd] = k / MX_BLOCK;
            let scale = scales[i];
            let ok = scale
                .as_array()
                .is_some_and(|a| a.element_type == PrimitiveType::F8E8M0FNU && a.dims == want);
            if !ok {
                let want = array_text(PrimitiveType::F8E8M0FNU, &want);
                s.report(
                    Check::DotScales,
                    format!(
                        "{}_scale is {}, expected {want}: one E8M0 scale per {MX_BLOCK} elements of {} along dimension {cd}",
                        sides[i],
                        text(scale),
                        sides[i],
                    ),
                    format!("pass the scales QuantizeMX made for {} ({want})", sides[i]),
                );
            }
        }
    }

    // The result: batch, then lhs free, then rhs free dimensions.
    if batch_ok && contracting_ok {
        let mut want: Vec<i64> = batch[0].iter().map(|&b| dims[0][b as usize]).collect();
        for i in 0..2 {
            for (d, &n) in dims[i].iter().enumerate() {
                let d = d as i64;
                if !batch[i].contains(&d) && !contracting[i].contains(&d) {
                    want.push(n);
                }
            }
        }
        if let Some(out) = out.filter(|a| a.dims != want) {
            let want = array_text(out.element_type, &want);
            s.report(
                Check::DotResultShape,
                format!(
                    "the result is {}, but the dot of lhs and rhs with these dimension numbers is {want} (batch, lhs free, rhs free)",
                    text(result)
                ),
                format!("make the result {want}, or fix the batch and contracting dimensions"),
            );
        }
    }
}

/// Why a list of dimension numbers is not distinct dimensions of a
/// rank-`rank` operand, if it is not.
fn bad_dimension_list(dims: &[i64], rank: i64) -> Option<String> {
    if let Some(d) = dims.iter().find(|&&d| d < 0 || d >= rank) {
        return Some(format!("{dims:?} names dimension {d}, outside [0, {rank})"));
    }
    let mut seen = dims.to_vec();
    seen.sort_unstable();
    seen.dedup();
    (seen.len() != dims.len()).then(|| format!("{dims:?} names a dimension twice"))
}

/// Reads the config (empty, `None`, or JSON); reports and returns `None`
/// when it cannot be read.
fn dot_config(s: &mut Site, config: &str) -> Option<DotConfig> {
    const RESOLUTION: &str = "leave backend_config empty, or write {\"scaled_dot_backend_config\":{\"lhs_batch_dimensions\":[],\"rhs_batch_dimensions\":[],\"lhs_contracting_dimensions\":[1],\"rhs_contracting_dimensions\":[1],\"element_dtype\":\"float8_e4m3fn\"}}";
    const KEY: &str = "scaled_dot_backend_config";
    if config.trim().is_empty() || config == "None" {
        return Some(DotConfig::default());
    }
    let top = match serde_json::from_str::<Value>(config) {
        Ok(Value::Object(top)) => top,
        Ok(_) => {
            s.report(
                Check::DotConfig,
                format!("backend_config {} is not a JSON object", clip(config)),
                RESOLUTION,
            );
            return None;
        }
        Err(e) => {
            s.report(
                Check::DotConfig,
                format!("backend_config is not valid JSON ({e}): {}", clip(config)),
                RESOLUTION,
            );
            return None;
        }
    };
    let obj = match top.get(KEY) {
        None => return Some(DotConfig::default()),
        Some(Value::Object(o)) => o,
        Some(v) => {
            s.report(
                Check::DotConfig,
                format!(
                    "backend_config field \"{KEY}\" must be an object, found {}",
                    clip(&v.to_string())
                ),
                RESOLUTION,
            );
            return None;
        }
    };
    let mut ok = true;
    let mut list = |s: &mut Site, key: &str| -> Vec<i64> {
        match obj.get(key) {
            None => Vec::new(),
            Some(Value::Array(items)) if items.iter().all(|i| i.as_i64().is_some()) => {
                items.iter().filter_map(Value::as_i64).collect()
            }
            Some(v) => {
                ok = false;
                s.report(
                    Check::DotConfig,
                    format!(
                        "backend_config field \"{key}\" must be an array of integers, found {}",
                        clip(&v.to_string())
                    ),
                    RESOLUTION,
                );
                Vec::new()
            }
        }
    };
    let lhs_batch = list(s, "lhs_batch_dimensions");
    let rhs_batch = list(s, "rhs_batch_dimensions");
    let lhs_contracting = list(s, "lhs_contracting_dimensions");
    let rhs_contracting = list(s, "rhs_contracting_dimensions");
    let element_dtype = match obj.get("element_dtype") {
        None => String::new(),
        Some(Value::String(d)) if matches!(d.as_str(), "" | "float8_e4m3fn" | "float8_e5m2") => {
            d.clone()
        }
        Some(v) => {
            ok = false;
            s.report(
                Check::DotConfig,
                format!(
                    "backend_config field \"element_dtype\" is {}: only 'float8_e5m2' and 'float8_e4m3fn' are supported",
                    clip(&v.to_string())
                ),
                "set \"element_dtype\" to \"float8_e4m3fn\" or \"float8_e5m2\", or leave it out",
            );
            String::new()
        }
    };
    ok.then_some(DotConfig {
        lhs_batch,
        rhs_batch,
        lhs_contracting,
        rhs_contracting,
        element_dtype,
    })
}

// --------------------------------------------------------------------- TopK

/// `AwsNeuronTopK(x)`, config k: CONTRACT.md sections 6 and 13, seed 002.
///
/// legalize-topk rewrites only F16, F32 and BF16 inputs and leaves any
/// other element type alone. An integer input (s32, s64, u32, ...) breaks
/// the contract (CONTRACT.md section 12: Neuron's own EVRF013, "TopK does
/// not support int32 or int64 input tensors"): HOC029. Other float types
/// (f64, the 8-bit floats) are valid, just not legalized. What is checked
/// besides is what gives the call its meaning for any element type: one
/// real-valued input, k, the result.
fn topk(s: &mut Site) {
    let count = s.instr.operands().len();
    if count != 1 {
        s.report(
            Check::TopkOperands,
            format!("AwsNeuronTopK takes exactly 1 operand (the input), found {count}"),
            "pass only the input; k goes in backend_config, and legalize-topk adds the index operand",
        );
    }
    let k = s.config().and_then(|config| match decimal_config(config) {
        Some(k) if i32::try_from(k).is_ok() => Some(k),
        // Digits, but out of the int32 (or even the int64) range.
        _ if is_decimal(config) => {
            s.report(
                Check::TopkConfig,
                format!("k = {} is outside the int32 range", clip(config)),
                "set backend_config to k, the number of largest elements wanted, as a bare decimal integer",
            );
            None
        }
        _ => {
            s.report(
                Check::TopkConfig,
                format!("backend_config {:?} is not a base-10 integer k", clip(config)),
                "set backend_config to k as a bare decimal integer, e.g. backend_config=\"5\"",
            );
            None
        }
    });
    let input = s.operand(0);
    let input = match input {
        Some(shape) => {
            let ok = shape.as_array().filter(|a| {
                a.rank() >= 1 && (a.element_type.is_float() || a.element_type.is_integral())
            });
            if ok.is_none() {
                s.report(
                    Check::TopkOperandType,
                    format!(
                        "the input is {}: TopK needs an array of rank >= 1 of a real (float or integer) type",
                        text(shape)
                    ),
                    "pass a float (f16, f32, bf16 are legalized) or integer array; TopK runs over its last dimension",
                );
            }
            if let Some(a) = ok.filter(|a| a.element_type.is_integral()) {
                s.report(
                    Check::TopkIntegerInput,
                    format!(
                        "the input is {}: TopK does not support integer input tensors (Neuron's EVRF013: \"TopK does not support int32 or int64 input tensors\")",
                        array_text(a.element_type, &a.dims)
                    ),
                    "convert the input to a float type (f32, f16 or bf16) before the TopK, or compute the top k elements another way (e.g. a sort)",
                );
            }
            ok
        }
        None => None,
    };

    let result = &*s.instr.shape;
    let elems = result
        .tuple_elements()
        .filter(|e| e.len() == 2 && e.iter().all(|e| e.as_array().is_some()));
    let Some(elems) = elems else {
        s.report(
            Check::TopkResult,
            format!(
                "the result is {}: AwsNeuronTopK must return a tuple of 2 arrays (values, indices)",
                text(result)
            ),
            "make the result (values[..., k], u32 indices[..., k])",
        );
        return;
    };
    let (values, indices) = (&elems[0], &elems[1]);
    let mut result_ok = true;
    let mut bad = |s: &mut Site, cause: String| {
        result_ok = false;
        s.report(
            Check::TopkResult,
            cause,
            "make the result (values, indices): values of the input's type, u32 (or s32) indices, both the input's shape with the last dimension k",
        );
    };
    if !indices.element_type().is_integral() {
        bad(
            s,
            format!(
                "the indices (result element 1) are {}: they must be integers",
                text(indices)
            ),
        );
    }
    if values.dims() != indices.dims() {
        bad(
            s,
            format!(
                "values {} and indices {} differ in shape",
                text(values),
                text(indices)
            ),
        );
    }
    if let Some(a) = input {
        if values.element_type() != a.element_type {
            bad(
                s,
                format!(
                    "the values (result element 0) are {}, but the input is {}",
                    text(values),
                    array_text(a.element_type, &a.dims)
                ),
            );
        }
        let r = a.rank();
        if values.rank() != r || values.dims()[..r - 1] != a.dims[..r - 1] {
            bad(
                s,
                format!(
                    "the values {} must have the input's shape {} with the last dimension k",
                    text(values),
                    array_text(a.element_type, &a.dims)
                ),
            );
        }
    }
    if !result_ok || values.rank() == 0 {
        return;
    }
    let m = *values.dims().last().expect("rank >= 1");
    if let Some(k) = k.filter(|&k| k != m) {
        s.report(
            Check::TopkK,
            format!("k = {k} (backend_config), but the result's minor dimension is {m}"),
            format!("set backend_config to \"{m}\" or make the result's last dimension {k}"),
        );
    }
    if let Some(n) = input.and_then(|a| a.dims.last().copied()) {
        if m > n {
            s.report(
                Check::TopkK,
                format!("k = {m} exceeds the input's last dimension {n}"),
                format!("ask for at most {n} elements"),
            );
        }
    }
}

// ------------------------------------------------------------------ Softmax

/// `AwsNeuronSoftmax(x)` and `AwsNeuronSoftmaxBackward(dLdy, y)`, config
/// axis, and their legalized forms with a trailing `s64[n]` index
/// operand: CONTRACT.md sections 5, 9 and 13. As for TopK, a result type
/// legalize-softmax does not rewrite (not F16/F32/BF16) is valid.
fn softmax(s: &mut Site, backward: bool) {
    let names: &[&str] = if backward { &["dLdy", "y"] } else { &["x"] };
    let plain = names.len();
    let count = s.instr.operands().len();
    let form = if backward {
        "2 operands (dLdy, y), or 3 in the legalized form (dLdy, y, s64[n] index)"
    } else {
        "1 operand (x), or 2 in the legalized form (x, s64[n] index)"
    };
    if count != plain && count != plain + 1 {
        s.report(
            Check::SoftmaxOperands,
            format!("{} takes {form}; found {count}", s.target),
            format!("call {} with {form}", s.target),
        );
    }
    if count == plain + 1 {
        if let (Some(&n), Some(last)) =
            (s.operand(0).and_then(|o| o.dims().last()), s.operand(plain))
        {
            let ok = last.element_type() == PrimitiveType::S64 && last.dims() == [n];
            if !ok {
                s.report(
                    Check::SoftmaxOperands,
                    format!(
                        "the last of {count} operands is {}: the legalized form ends with the s64[{n}] index over operand 0's last dimension",
                        text(last)
                    ),
                    format!("pass only {} (legalize-softmax adds the index operand)", names.join(", ")),
                );
            }
        }
    }
    let result = &*s.instr.shape;
    if result.as_array().is_none() {
        s.report(
            Check::SoftmaxShape,
            format!("the result is {}: it must be an array", text(result)),
            "make the result an array of the input's shape",
        );
    } else {
        for (i, name) in names.iter().enumerate().take(count) {
            let Some(o) = s.operand(i) else { continue };
            if o.as_array().is_none() || o.dims() != result.dims() {
                s.report(
                    Check::SoftmaxShape,
                    format!(
                        "operand {i} ({name}) is {}, but the result is {}: softmax keeps the shape",
                        text(o),
                        text(result)
                    ),
                    "make the operands and the result the same shape",
                );
            }
        }
    }
    // The axis is a dimension of the result: nothing to check it against
    // when the result is not an array (reported above).
    let (Some(config), Some(result)) = (s.config(), result.as_array()) else {
        return;
    };
    let rank = result.rank() as i64;
    match decimal_config(config) {
        Some(axis) if (0..rank).contains(&axis) => {}
        _ if is_decimal(config) => s.report(
            Check::SoftmaxConfig,
            format!("axis {} is not a dimension of the rank-{rank} result", clip(config)),
            if rank == 0 {
                "softmax needs a result of rank >= 1".to_string()
            } else {
                format!("set backend_config to an axis in [0, {rank}) (negative axes are not accepted)")
            },
        ),
        _ => s.report(
            Check::SoftmaxConfig,
            format!("backend_config {:?} is not a base-10 integer axis", clip(config)),
            "set backend_config to the softmax axis as a bare decimal integer, e.g. backend_config=\"1\"",
        ),
    }
}
