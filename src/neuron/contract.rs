//! The contract checks: a verifier for the Neuron custom calls this tool
//! rewrites, run by the command line after parsing and before the passes
//! (CONTRACT.md section 12; `--no-contract-checks` turns it off), and by
//! the pipeline on what each pass changed ([`check_computations`]), so
//! that what a run writes passes the check its input passed.
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
    ApiVersion, ArrayShape, CompId, Computation, InstrId, Instruction, Module, Opcode,
    PrimitiveType, Shape, SourcePos,
};
use crate::neuron::config::{BlockScaledDotConfig, ConfigError, Field, MxType, QuantizeMxConfig};
use crate::neuron::{
    decimal_config, is_integer_text, BLOCK_SCALED_DOT, MX_BLOCK, PACK, QUANTIZE_MX, SOFTMAX,
    SOFTMAX_BACKWARD, TOPK,
};
use crate::util::clip;
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

const OCP_MX_SPEC: &str =
    "https://www.opencompute.org/documents/ocp-microscaling-formats-mx-v1-0-spec-final-pdf";
const QMX_CONFIG_RESOLUTION: &str = "Ensure the backend_config is valid JSON with required fields: dtype, dim, block_size, scale_method, e.g. {\"dtype\":\"float8_e4m3fn\",\"dim\":-1,\"block_size\":32,\"scale_method\":\"EMAX\"}";

/// Checks every computation (whatever scope the passes walk: fusions,
/// comparators, loop bodies and computations nothing calls alike);
/// returns every violation, in print order.
pub fn check(module: &Module) -> Vec<Violation> {
    let mut out = Vec::new();
    for (_, comp) in module.computations() {
        check_computation(comp, &mut out);
    }
    out
}

/// [`check`] of only the computations `comps`: what a pass changed, the
/// rest being as they were when last checked. Every call is checked
/// against its own computation only, so this finds what a whole check
/// would find there.
pub fn check_computations(module: &Module, comps: &[CompId]) -> Vec<Violation> {
    let mut wanted = Vec::new();
    for id in comps {
        if wanted.len() <= id.index() {
            wanted.resize(id.index() + 1, false);
        }
        wanted[id.index()] = true;
    }
    let mut out = Vec::new();
    for (id, comp) in module.computations() {
        if wanted.get(id.index()).copied().unwrap_or(false) {
            check_computation(comp, &mut out);
        }
    }
    out
}

fn check_computation(comp: &Computation, out: &mut Vec<Violation>) {
    // Most computations of a large module hold no custom call.
    if !comp.may_contain(Opcode::CustomCall) {
        return;
    }
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
            out,
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
    let fields = match QuantizeMxConfig::read(config) {
        Ok(fields) => fields,
        Err(e) => {
            s.report(
                Check::QmxConfig,
                config_cause(&e, config),
                QMX_CONFIG_RESOLUTION,
            );
            return None;
        }
    };
    let wrong_type = |s: &mut Site, key: &str, expected: &str, found: &str| {
        s.report(
            Check::QmxConfig,
            format!("backend_config field \"{key}\" must be {expected}, found {found}"),
            QMX_CONFIG_RESOLUTION,
        );
    };
    match &fields.dtype {
        Field::Absent => s.report(
            Check::QmxDtype,
            "backend_config has no \"dtype\": only 'float8_e5m2' and 'float8_e4m3fn' are supported",
            "add \"dtype\":\"float8_e4m3fn\" or \"dtype\":\"float8_e5m2\"",
        ),
        Field::Found(d) if MxType::from_dtype(d).is_some() => {}
        Field::Found(d) => s.report(
            Check::QmxDtype,
            format!("dtype {d:?}: only 'float8_e5m2' and 'float8_e4m3fn' are supported"),
            "set \"dtype\" to \"float8_e4m3fn\" or \"float8_e5m2\" (OCP MX-FP8 element types)",
        ),
        Field::WrongType(v) => wrong_type(s, "dtype", "a string", v),
    }
    match &fields.block_size {
        Field::Absent | Field::Found(MX_BLOCK) => {}
        Field::Found(n) => s.report(
            Check::QmxBlockSize,
            format!("block_size {n}: block_size must be 32"),
            format!("set \"block_size\" to 32 or leave it out (the OCP MX block, {OCP_MX_SPEC})"),
        ),
        Field::WrongType(v) => wrong_type(s, "block_size", "an integer", v),
    }
    match &fields.scale_method {
        Field::Absent => {}
        Field::Found(m) if m == "EMAX" => {}
        Field::Found(m) => s.report(
            Check::QmxScaleMethod,
            format!("scale_method {m:?}: only \"EMAX\" is supported"),
            "set \"scale_method\" to \"EMAX\" or leave it out",
        ),
        Field::WrongType(v) => wrong_type(s, "scale_method", "a string", v),
    }
    match fields.dim {
        Field::Absent => Some(0),
        Field::Found(d) => Some(d),
        Field::WrongType(v) => {
            wrong_type(s, "dim", "an integer", &v);
            None
        }
    }
}

/// Why a JSON config could not be read, for a violation's cause.
fn config_cause(e: &ConfigError, config: &str) -> String {
    match e {
        ConfigError::Empty => "backend_config is empty".to_string(),
        ConfigError::NotJson(e) => {
            format!("backend_config is not valid JSON ({e}): {}", clip(config))
        }
        ConfigError::NotObject => format!("backend_config {} is not a JSON object", clip(config)),
        ConfigError::InnerNotObject { key, found } => {
            format!("backend_config field \"{key}\" must be an object, found {found}")
        }
    }
}

// ------------------------------------------------------ __op$block_scaled_dot

/// `scaled_dot_backend_config` as checked: every field optional.
#[derive(Default)]
struct DotConfig {
    lhs_batch: Vec<i64>,
    rhs_batch: Vec<i64>,
    lhs_contracting: Vec<i64>,
    rhs_contracting: Vec<i64>,
    element_dtype: Option<MxType>,
}

const SIDES: [&str; 2] = ["lhs", "rhs"];

/// lhs and rhs of a dot, both arrays of rank >= 2.
struct DotSides<'a> {
    ranks: [i64; 2],
    dims: [&'a [i64]; 2],
    /// The MX element type of each side, when it is one.
    types: [Option<PrimitiveType>; 2],
    /// The type both sides share, when they do.
    data_type: Option<PrimitiveType>,
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
    let out = dot_output(s);
    let config = s.config().and_then(|c| dot_config(s, c));
    let (4, Some(lhs), Some(rhs), Some(lhs_scale), Some(rhs_scale)) = (
        count,
        s.operand(0),
        s.operand(1),
        s.operand(2),
        s.operand(3),
    ) else {
        return;
    };
    let data = [lhs, rhs];
    let types = [0, 1].map(|i| dot_data_type(s, data[i], SIDES[i]));
    let data_type = common_data_type(s, data, types, config.as_ref());
    let arrays = [0, 1].map(|i| dot_array(s, data[i], SIDES[i]));
    let ([Some(lhs), Some(rhs)], Some(config)) = (arrays, config) else {
        return;
    };
    let dot = DotSides {
        ranks: [lhs.rank() as i64, rhs.rank() as i64],
        dims: [&lhs.dims, &rhs.dims],
        types,
        data_type,
    };
    let batch = [config.lhs_batch.as_slice(), config.rhs_batch.as_slice()];
    let batch_ok = dot_batch(s, &dot, batch);
    let Some(contracting) = dot_contracting(s, &dot, batch, &config) else {
        return;
    };
    if contracting.ok {
        dot_scales(s, &dot, &contracting.dims, [lhs_scale, rhs_scale]);
    }
    if batch_ok && contracting.ok {
        dot_result(s, &dot, batch, &contracting.dims, out);
    }
}

/// The result's array, when it is F32 or BF16 (reported otherwise).
fn dot_output<'a>(s: &mut Site<'a>) -> Option<&'a ArrayShape> {
    let result: &'a Shape = &s.instr.shape;
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
    out
}

/// The element type of one side, when it is an MX type (reported
/// otherwise).
fn dot_data_type(s: &mut Site, data: &Shape, side: &str) -> Option<PrimitiveType> {
    let ty = data.as_array().map(|a| a.element_type);
    if let Some(t @ (PrimitiveType::U32 | PrimitiveType::F8E4M3FN | PrimitiveType::F8E5M2)) = ty {
        return Some(t);
    }
    s.report(
        Check::DotDataType,
        format!(
            "{side} is {}: only U32 (packed MX format from QuantizeMX) or unpacked f8e4m3fn/f8e5m2 are supported",
            text(data)
        ),
        format!("quantize {side} with QuantizeMX (MX-FP8: float8_e4m3fn or float8_e5m2, blocks of 32, E8M0 scales)"),
    );
    None
}

/// The type lhs and rhs share, which a given `element_dtype` must name
/// when the data is unpacked fp8.
fn common_data_type(
    s: &mut Site,
    data: [&Shape; 2],
    types: [Option<PrimitiveType>; 2],
    config: Option<&DotConfig>,
) -> Option<PrimitiveType> {
    let t = match types {
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
            return None;
        }
        [Some(l), Some(_)] => l,
        _ => return None,
    };
    let named = config.and_then(|c| c.element_dtype);
    if let Some(named) = named.filter(|n| t != PrimitiveType::U32 && n.element_type() != t) {
        s.report(
            Check::DotDataType,
            format!(
                "element_dtype \"float8_{}\" names {}, but lhs and rhs are {}",
                named.suffix(),
                named.element_type().name(),
                t.name()
            ),
            format!(
                "set \"element_dtype\" to \"float8_{}\" (or leave it out)",
                &t.name()[2..]
            ),
        );
    }
    Some(t)
}

/// One side's array when its rank is 2 or more (reported otherwise).
fn dot_array<'a>(s: &mut Site, data: &'a Shape, side: &str) -> Option<&'a ArrayShape> {
    let array = data.as_array()?;
    let rank = array.rank();
    if rank >= 2 {
        return Some(array);
    }
    s.report(
        Check::DotRank,
        format!(
            "{side} {} has rank {rank}; rank >= 2 is required",
            text(data)
        ),
        format!("reshape {side} to rank 2 or more (rows, contracting dimension)"),
    );
    None
}

/// Batch dimensions: listed in pairs, the same count on both sides, of the
/// same sizes. Whether they are right.
fn dot_batch(s: &mut Site, dot: &DotSides, batch: [&[i64]; 2]) -> bool {
    let mut ok = true;
    if batch[0].len() != batch[1].len() {
        ok = false;
        s.report(
            Check::DotBatch,
            format!(
                "batch-dim count mismatch: lhs_batch_dimensions {:?}, rhs_batch_dimensions {:?}",
                batch[0], batch[1]
            ),
            "list the same number of batch dimensions for lhs and rhs, in matching order",
        );
    }
    if !(dimension_lists_ok(s, Check::DotBatch, dot, batch, "batch") && ok) {
        return false;
    }
    for (&l, &r) in batch[0].iter().zip(batch[1]) {
        let (ln, rn) = (dot.dims[0][l as usize], dot.dims[1][r as usize]);
        if ln != rn {
            ok = false;
            s.report(
                Check::DotBatch,
                format!("batch sizes differ: lhs dimension {l} is {ln}, rhs dimension {r} is {rn}"),
                "make each pair of batch dimensions the same size",
            );
        }
    }
    ok
}

/// Whether both sides' lists name distinct dimensions of their operands
/// (each side reported otherwise).
fn dimension_lists_ok(
    s: &mut Site,
    check: Check,
    dot: &DotSides,
    lists: [&[i64]; 2],
    what: &str,
) -> bool {
    let mut ok = true;
    for (i, (list, rank)) in lists.into_iter().zip(dot.ranks).enumerate() {
        if let Some(cause) = bad_dimension_list(list, rank) {
            ok = false;
            let side = SIDES[i];
            s.report(
                check,
                format!("{side}_{what}_dimensions {cause}"),
                format!("list distinct dimensions of the rank-{rank} {side} in [0, {rank})"),
            );
        }
    }
    ok
}

/// The contracting dimensions of both sides, and whether they are right.
struct Contracting {
    dims: [Vec<i64>; 2],
    ok: bool,
}

/// Contracting dimensions: listed in pairs; none listed means the last
/// dimension. `None` when they are not dimensions of their operands.
fn dot_contracting(
    s: &mut Site,
    dot: &DotSides,
    batch: [&[i64]; 2],
    config: &DotConfig,
) -> Option<Contracting> {
    let listed = [&config.lhs_contracting, &config.rhs_contracting];
    let dims = [0, 1].map(|i| match listed[i].is_empty() {
        true => vec![dot.ranks[i] - 1],
        false => listed[i].clone(),
    });
    let mut ok = true;
    if dims[0].len() != dims[1].len() {
        ok = false;
        s.report(
            Check::DotContracting,
            format!(
                "lhs contracts over dimensions {:?} but rhs over {:?}: the counts differ",
                dims[0], dims[1]
            ),
            "list the same number of contracting dimensions for lhs and rhs (none listed means the last dimension)",
        );
    }
    let lists = [dims[0].as_slice(), dims[1].as_slice()];
    if !(dimension_lists_ok(s, Check::DotContracting, dot, lists, "contracting") && ok) {
        return None;
    }
    for i in 0..2 {
        if let Some(d) = dims[i].iter().find(|d| batch[i].contains(d)) {
            ok = false;
            s.report(
                Check::DotContracting,
                format!(
                    "dimension {d} of {} is both a batch and a contracting dimension",
                    SIDES[i]
                ),
                "contract over dimensions that are not batch dimensions (none listed means the last dimension)",
            );
        }
    }
    if dot.data_type.is_some() {
        for (&l, &r) in dims[0].iter().zip(dims[1].iter()) {
            let (ln, rn) = (dot.dims[0][l as usize], dot.dims[1][r as usize]);
            if ln != rn {
                ok = false;
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
    Some(Contracting { dims, ok })
}

/// Scales: one E8M0 per block of 32 elements along the (first)
/// contracting dimension, which holds four elements per u32 word.
fn dot_scales(s: &mut Site, dot: &DotSides, contracting: &[Vec<i64>; 2], scales: [&Shape; 2]) {
    for i in 0..2 {
        let Some(ty) = dot.types[i] else { continue };
        let side = SIDES[i];
        let cd = contracting[i][0] as usize;
        let per_word = if ty == PrimitiveType::U32 { PACK } else { 1 };
        let k = dot.dims[i][cd].saturating_mul(per_word);
        if k % MX_BLOCK != 0 {
            s.report(
                Check::DotScales,
                format!(
                    "{side} holds {k} elements along its contracting dimension {cd}, not a multiple of the block size {MX_BLOCK}"
                ),
                format!("pad the contracting dimension to a multiple of {MX_BLOCK} elements"),
            );
            continue;
        }
        let mut want = dot.dims[i].to_vec();
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
                    "{side}_scale is {}, expected {want}: one E8M0 scale per {MX_BLOCK} elements of {side} along dimension {cd}",
                    text(scale),
                ),
                format!("pass the scales QuantizeMX made for {side} ({want})"),
            );
        }
    }
}

/// The result: batch, then lhs free, then rhs free dimensions.
fn dot_result(
    s: &mut Site,
    dot: &DotSides,
    batch: [&[i64]; 2],
    contracting: &[Vec<i64>; 2],
    out: Option<&ArrayShape>,
) {
    let mut want: Vec<i64> = batch[0].iter().map(|&b| dot.dims[0][b as usize]).collect();
    for i in 0..2 {
        for (d, &n) in dot.dims[i].iter().enumerate() {
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
                text(&s.instr.shape)
            ),
            format!("make the result {want}, or fix the batch and contracting dimensions"),
        );
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
    let fields = match BlockScaledDotConfig::read(config) {
        Ok(fields) => fields,
        Err(e) => {
            s.report(Check::DotConfig, config_cause(&e, config), RESOLUTION);
            return None;
        }
    };
    let mut ok = true;
    let mut list = |s: &mut Site, key: &str, field: Field<Vec<i64>>| -> Vec<i64> {
        field.or(Vec::new()).unwrap_or_else(|found| {
            ok = false;
            s.report(
                Check::DotConfig,
                format!(
                    "backend_config field \"{key}\" must be an array of integers, found {found}"
                ),
                RESOLUTION,
            );
            Vec::new()
        })
    };
    let lhs_batch = list(s, "lhs_batch_dimensions", fields.lhs_batch);
    let rhs_batch = list(s, "rhs_batch_dimensions", fields.rhs_batch);
    let lhs_contracting = list(s, "lhs_contracting_dimensions", fields.lhs_contracting);
    let rhs_contracting = list(s, "rhs_contracting_dimensions", fields.rhs_contracting);
    let element_dtype = match fields.element_dtype {
        Field::Absent => None,
        Field::Found(d) if d.is_empty() => None,
        Field::Found(d) if MxType::from_dtype(&d).is_some() => MxType::from_dtype(&d),
        Field::Found(d) => {
            ok = false;
            report_element_dtype(s, &clip(&serde_json::Value::String(d).to_string()));
            None
        }
        Field::WrongType(found) => {
            ok = false;
            report_element_dtype(s, &found);
            None
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

fn report_element_dtype(s: &mut Site, found: &str) {
    s.report(
        Check::DotConfig,
        format!(
            "backend_config field \"element_dtype\" is {found}: only 'float8_e5m2' and 'float8_e4m3fn' are supported"
        ),
        "set \"element_dtype\" to \"float8_e4m3fn\" or \"float8_e5m2\", or leave it out",
    );
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
        _ if is_integer_text(config) => {
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
        _ if is_integer_text(config) => s.report(
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
