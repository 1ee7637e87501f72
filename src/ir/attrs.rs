//! Typed attribute values.
//!
//! Every attribute the passes, the verifier, the interpreter or the proto
//! converter read is typed here. Each has one owner per form: the text
//! syntax is in `text::attrs` (read and printed), the proto fields in
//! `proto` (converted both ways); nothing else parses or prints them.
//!
//! A structured value read from text remembers that text ([`Written`]) and
//! prints it back unchanged, so that a module no pass changed prints back
//! byte for byte even where XLA versions print an attribute differently; a
//! value made from fields (a pass, the proto reader) prints in XLA's
//! canonical form. Only what is opaque by nature stays text: backend
//! configs, and attributes this crate does not know ([`AttrValue::Raw`]).

use super::literal::Literal;
use super::module::{Module, ProgramShape};
use super::shape::Shape;
use super::shared_str::SharedStr;
use super::CompId;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// A value, and the text it was read from (`None`: made from fields).
#[derive(Clone, Debug)]
pub struct Written<T> {
    value: T,
    text: Option<SharedStr>,
}

impl<T> Written<T> {
    /// A value made from fields: prints in XLA's canonical form.
    pub fn new(value: T) -> Written<T> {
        Written { value, text: None }
    }

    /// A value read from `text`, which it prints back as.
    pub fn read(value: T, text: SharedStr) -> Written<T> {
        Written {
            value,
            text: Some(text),
        }
    }

    pub fn value(&self) -> &T {
        &self.value
    }

    /// The text the value was read from.
    pub fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// Forgets the text (the canonical form prints instead).
    pub fn canonical(&self) -> Written<T>
    where
        T: Clone,
    {
        Written::new(self.value.clone())
    }
}

impl<T> Deref for Written<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

/// Two values are equal when their fields are, however they were written.
impl<T: PartialEq> PartialEq for Written<T> {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

/// A shared, typed, written value.
pub type Typed<T> = Arc<Written<T>>;

pub fn typed<T>(value: T) -> Typed<T> {
    Arc::new(Written::new(value))
}

/// An attribute's value.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    /// An attribute this crate does not know, printed exactly as read.
    Raw(SharedStr),
    Int(i64),
    /// `{1,0}`
    Ints(Box<[i64]>),
    /// `{{0,1},{2}}` (an in-place collective permute's `slice_sizes`).
    IntLists(Box<[Box<[i64]>]>),
    Bool(bool),
    /// `{true,false}` (`parameter_replication`, the header's
    /// `allow_spmd_sharding_propagation_to_*`).
    Bools(Box<[bool]>),
    /// `epsilon=` (f32).
    Float(Typed<f32>),
    Comp(CompId),
    /// `{%a, %b}`
    Comps(Box<[CompId]>),
    /// A quoted string, kept decoded (`custom_call_target`,
    /// `async_execution_thread`, `infeed_config`, ...).
    Str(SharedStr),
    /// `backend_config`, kept decoded: opaque by nature.
    BackendConfig(SharedStr),
    Direction(ComparisonDirection),
    CompareType(ComparisonType),
    ApiVersion(ApiVersion),
    FusionKind(FusionKind),
    FftType(FftType),
    Distribution(RandomDistribution),
    RngAlgorithm(RngAlgorithm),
    /// A dot's `algorithm=`.
    DotAlgorithm(DotAlgorithm),
    Schedule(CustomCallSchedule),
    Transpose(Transpose),
    /// `operand_precision={default,high}`
    Precisions(Box<[Precision]>),
    /// `outfeed_shape=`
    Shape(Box<Shape>),
    /// `operand_layout_constraints={f32[2]{0}, ...}`
    Shapes(Box<[Shape]>),
    Window(Typed<Window>),
    Padding(Typed<Vec<PaddingDim>>),
    Slice(Typed<Vec<SliceDim>>),
    ConvDims(Typed<ConvDims>),
    ReplicaGroups(Typed<ReplicaGroups>),
    /// `source_target_pairs={{0,1},{1,0}}`
    Pairs(Typed<Vec<(i64, i64)>>),
    Metadata(Typed<OpMetadata>),
    FrontendAttributes(Typed<FrontendAttributes>),
    Sharding(Typed<Sharding>),
    /// `output_to_operand_aliasing={{0}: (1, {}), ...}`
    Aliasing(Typed<Vec<OutputAlias>>),
    /// A custom call's `literal=`.
    Literal(Typed<Literal>),
    OriginalValue(Typed<OriginalValue>),
    Statistics(Typed<Statistics>),
    Domain(Typed<Domain>),
    ResultAccuracy(Typed<ResultAccuracy>),
    /// `entry_computation_layout={(...)->...}` in the module header.
    ProgramShape(Box<ProgramShape>),
    /// The header's `input_output_alias={...}`.
    InputOutputAlias(Typed<Vec<InputOutputAlias>>),
    /// The header's `buffer_donor={...}`.
    BufferDonor(Typed<Vec<BufferDonor>>),
    /// The header's `spmd_parameters_shardings={...}`.
    Shardings(Typed<Vec<Sharding>>),
    /// The header's `debug_attributes={...}`.
    DebugAttributes(Typed<Vec<DebugAttributeEntry>>),
    /// The header's `origin_recovery_table={...}`.
    RecoveryTable(Typed<Vec<RecoveryEntry>>),
}

impl AttrValue {
    /// The same value, its remembered text forgotten: it prints in XLA's
    /// canonical form.
    pub fn canonical(&self) -> AttrValue {
        self.rewrapped(true)
    }

    /// The same value in allocations of its own, so that the threads that
    /// clone it and the ones that clone `self` count no reference in
    /// common.
    pub fn unshared(&self) -> AttrValue {
        use AttrValue as V;
        let own = |s: &SharedStr| SharedStr::from(s.to_string());
        match self {
            V::Raw(s) => V::Raw(own(s)),
            V::Str(s) => V::Str(own(s)),
            V::BackendConfig(s) => V::BackendConfig(own(s)),
            _ => self.rewrapped(false),
        }
    }

    /// Each typed value in an allocation of its own, its text forgotten
    /// if `canonical`.
    fn rewrapped(&self, canonical: bool) -> AttrValue {
        fn c<T: Clone>(w: &Typed<T>, canonical: bool) -> Typed<T> {
            Arc::new(match canonical {
                true => w.canonical(),
                false => Written::clone(w),
            })
        }
        use AttrValue as V;
        match self {
            V::Float(w) => V::Float(c(w, canonical)),
            V::Window(w) => V::Window(c(w, canonical)),
            V::Padding(w) => V::Padding(c(w, canonical)),
            V::Slice(w) => V::Slice(c(w, canonical)),
            V::ConvDims(w) => V::ConvDims(c(w, canonical)),
            V::ReplicaGroups(w) => V::ReplicaGroups(c(w, canonical)),
            V::Pairs(w) => V::Pairs(c(w, canonical)),
            V::Metadata(w) => V::Metadata(c(w, canonical)),
            V::FrontendAttributes(w) => V::FrontendAttributes(c(w, canonical)),
            V::Sharding(w) => V::Sharding(c(w, canonical)),
            V::Aliasing(w) => V::Aliasing(c(w, canonical)),
            V::Literal(w) => V::Literal(c(w, canonical)),
            V::OriginalValue(w) => V::OriginalValue(c(w, canonical)),
            V::Statistics(w) => V::Statistics(c(w, canonical)),
            V::Domain(w) => V::Domain(c(w, canonical)),
            V::ResultAccuracy(w) => V::ResultAccuracy(c(w, canonical)),
            V::InputOutputAlias(w) => V::InputOutputAlias(c(w, canonical)),
            V::BufferDonor(w) => V::BufferDonor(c(w, canonical)),
            V::Shardings(w) => V::Shardings(c(w, canonical)),
            V::DebugAttributes(w) => V::DebugAttributes(c(w, canonical)),
            V::RecoveryTable(w) => V::RecoveryTable(c(w, canonical)),
            other => other.clone(),
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            AttrValue::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            AttrValue::Int(v) => Some(*v),
            _ => None,
        }
    }

    pub fn as_ints(&self) -> Option<&[i64]> {
        match self {
            AttrValue::Ints(v) => Some(v),
            _ => None,
        }
    }
}

macro_rules! text_enum {
    ($(#[$m:meta])* $ty:ident { $($variant:ident => $name:expr,)* }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $ty { $($variant,)* }

        impl $ty {
            pub const ALL: &'static [$ty] = &[$($ty::$variant,)*];
            pub fn name(self) -> &'static str {
                match self { $($ty::$variant => $name,)* }
            }
            pub fn from_name(s: &str) -> Option<$ty> {
                match s { $($name => Some($ty::$variant),)* _ => None }
            }
            /// The position in [`Self::ALL`] (the proto enum's number for
            /// the enums numbered from 0 in order).
            pub fn index(self) -> usize {
                Self::ALL.iter().position(|&v| v == self).unwrap_or(0)
            }
            pub fn from_index(i: usize) -> Option<$ty> {
                Self::ALL.get(i).copied()
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

text_enum!(
    /// `direction=` of a compare.
    ComparisonDirection {
        Eq => "EQ",
        Ne => "NE",
        Ge => "GE",
        Gt => "GT",
        Le => "LE",
        Lt => "LT",
    }
);

text_enum!(
    /// `type=` of a compare.
    ComparisonType {
        Float => "FLOAT",
        TotalOrder => "TOTALORDER",
        Signed => "SIGNED",
        Unsigned => "UNSIGNED",
    }
);

text_enum!(
    /// `api_version=` of a custom call (`CustomCallApiVersion`, numbered
    /// from 0 in this order).
    ApiVersion {
        Unspecified => "API_VERSION_UNSPECIFIED",
        Original => "API_VERSION_ORIGINAL",
        StatusReturning => "API_VERSION_STATUS_RETURNING",
        StatusReturningUnified => "API_VERSION_STATUS_RETURNING_UNIFIED",
        TypedFfi => "API_VERSION_TYPED_FFI",
    }
);

text_enum!(
    /// A fusion's `kind=`.
    FusionKind {
        Loop => "kLoop",
        Input => "kInput",
        Output => "kOutput",
        Custom => "kCustom",
    }
);

text_enum!(
    /// `fft_type=` (`FftType`, numbered from 0 in this order).
    FftType {
        Fft => "FFT",
        Ifft => "IFFT",
        Rfft => "RFFT",
        Irfft => "IRFFT",
    }
);

text_enum!(
    /// `distribution=` of `rng` (`RandomDistribution`, from 0).
    RandomDistribution {
        Invalid => "rng_invalid",
        Uniform => "rng_uniform",
        Normal => "rng_normal",
    }
);

text_enum!(
    /// `algorithm=` of `rng-bit-generator` (`RandomAlgorithm`, from 0).
    RngAlgorithm {
        Default => "rng_default",
        ThreeFry => "rng_three_fry",
        Philox => "rng_philox",
    }
);

text_enum!(
    /// `algorithm=` of a dot (`PrecisionConfig.Algorithm`, from 0).
    DotAlgorithm {
        Unset => "unset",
        AnyF8AnyF8F32 => "dot_any_f8_any_f8_f32",
        AnyF8AnyF8F32FastAccum => "dot_any_f8_any_f8_f32_fast_accum",
        F16F16F16 => "dot_f16_f16_f16",
        F16F16F32 => "dot_f16_f16_f32",
        Bf16Bf16Bf16 => "dot_bf16_bf16_bf16",
        Bf16Bf16F32 => "dot_bf16_bf16_f32",
        Bf16Bf16F32X3 => "dot_bf16_bf16_f32_x3",
        Bf16Bf16F32X6 => "dot_bf16_bf16_f32_x6",
        Tf32Tf32F32 => "dot_tf32_tf32_f32",
        Tf32Tf32F32X3 => "dot_tf32_tf32_f32_x3",
        F32F32F32 => "dot_f32_f32_f32",
        F64F64F64 => "dot_f64_f64_f64",
        Bf16Bf16F32X9 => "dot_bf16_bf16_f32_x9",
    }
);

text_enum!(
    /// A custom call's `schedule=` (`CustomCallSchedule`, from 0).
    CustomCallSchedule {
        None => "SCHEDULE_NONE",
        Latest => "SCHEDULE_LATEST",
        Earliest => "SCHEDULE_EARLIEST",
    }
);

text_enum!(
    /// `transpose_a=` of a triangular solve (`TriangularSolveOptions.Transpose`,
    /// from 0).
    Transpose {
        Invalid => "TRANSPOSE_INVALID",
        NoTranspose => "NO_TRANSPOSE",
        Transpose => "TRANSPOSE",
        Adjoint => "ADJOINT",
    }
);

text_enum!(
    /// One operand's precision (`PrecisionConfig.Precision`, from 0).
    Precision {
        Default => "default",
        High => "high",
        Highest => "highest",
    }
);

impl ComparisonType {
    /// The type a compare of this element type has when none is written.
    pub fn default_for(ty: super::PrimitiveType) -> ComparisonType {
        if ty.is_float() || ty.is_complex() {
            ComparisonType::Float
        } else if ty.is_signed_int() {
            ComparisonType::Signed
        } else {
            ComparisonType::Unsigned
        }
    }
}

/// One dimension of a `window=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowDim {
    pub size: i64,
    pub stride: i64,
    pub pad_low: i64,
    pub pad_high: i64,
    /// `lhs_dilate`
    pub base_dilation: i64,
    /// `rhs_dilate`
    pub window_dilation: i64,
    /// `rhs_reversal`
    pub reversal: bool,
}

impl Default for WindowDim {
    fn default() -> Self {
        WindowDim {
            size: 0,
            stride: 1,
            pad_low: 0,
            pad_high: 0,
            base_dilation: 1,
            window_dilation: 1,
            reversal: false,
        }
    }
}

/// `window={size=3x3 stride=2x2 pad=0_1x0_1 ...}`
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Window {
    pub dims: Vec<WindowDim>,
}

/// One dimension of `padding=lo_hi[_interior]x...`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PaddingDim {
    pub low: i64,
    pub high: i64,
    pub interior: i64,
}

/// One dimension of `slice={[start:limit:stride], ...}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SliceDim {
    pub start: i64,
    pub limit: i64,
    pub stride: i64,
}

/// `dim_labels=b01f_01io->b01f`: where the batch, feature and spatial
/// dimensions are in the input, the kernel and the output.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConvDims {
    pub input_batch: i64,
    pub input_feature: i64,
    pub input_spatial: Vec<i64>,
    pub kernel_input_feature: i64,
    pub kernel_output_feature: i64,
    pub kernel_spatial: Vec<i64>,
    pub output_batch: i64,
    pub output_feature: i64,
    pub output_spatial: Vec<i64>,
}

/// The device list of an iota form: `<=[reshape]T(perm)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Iota {
    pub reshape_dims: Vec<i64>,
    pub transpose_perm: Vec<i32>,
}

/// A mesh axis of the mesh form: `'x'=4`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MeshAxis {
    pub name: SharedStr,
    pub size: i64,
}

/// An axis reference of the mesh form: `'x'` or `'x':(2)2`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AxisRef {
    pub axis: i64,
    /// `(pre_size, size)` of a sub-axis.
    pub sub_axis: Option<(i64, i64)>,
}

/// `replica_groups=`: explicit groups `{{0,1},{2,3}}`, the iota form
/// `[2,2]<=[4]`, or the mesh form `mesh['x'=2,'y'=2] {'x'}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplicaGroups {
    Explicit(Vec<Vec<i64>>),
    Iota {
        groups: i64,
        per_group: i64,
        iota: Iota,
    },
    Mesh {
        mesh: Vec<MeshAxis>,
        /// `device_ids=(...)`: the mesh's devices in order (else the iota).
        devices: Option<MeshDevices>,
        axes: Vec<AxisRef>,
    },
}

/// A mesh's `device_ids=`: listed `(0,2,1,3)`, or an iota
/// `([4]<=[2,2]T(1,0))`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MeshDevices {
    List(Vec<i64>),
    Iota { shape: Vec<i64>, iota: Iota },
}

impl MeshDevices {
    /// The device ids in order; `None` if the iota does not hold together.
    pub fn ids(&self) -> Option<Vec<i64>> {
        match self {
            MeshDevices::List(v) => Some(v.clone()),
            MeshDevices::Iota { iota, .. } => iota.ids(),
        }
    }
}

impl Iota {
    /// The ids in row-major order: the iota over `reshape_dims`,
    /// transposed by `transpose_perm`; `None` if the permutation is not
    /// one of the dimensions (or the count overflows).
    pub fn ids(&self) -> Option<Vec<i64>> {
        let dims = &self.reshape_dims;
        let perm: Vec<usize> = if self.transpose_perm.is_empty() {
            (0..dims.len()).collect()
        } else {
            self.transpose_perm
                .iter()
                .map(|&p| usize::try_from(p).ok())
                .collect::<Option<_>>()?
        };
        let mut sorted = perm.clone();
        sorted.sort_unstable();
        if sorted != (0..dims.len()).collect::<Vec<_>>() || dims.iter().any(|&d| d < 0) {
            return None;
        }
        let n = dims.iter().try_fold(1i64, |a, &d| a.checked_mul(d))?;
        // Row-major strides of the untransposed iota.
        let mut strides = vec![1i64; dims.len()];
        for k in (0..dims.len().saturating_sub(1)).rev() {
            strides[k] = strides[k + 1] * dims[k + 1];
        }
        let tdims: Vec<i64> = perm.iter().map(|&p| dims[p]).collect();
        let mut out = Vec::with_capacity(usize::try_from(n).ok()?);
        let mut idx = vec![0i64; tdims.len()];
        for _ in 0..n {
            out.push(idx.iter().zip(&perm).map(|(&i, &p)| i * strides[p]).sum());
            for k in (0..idx.len()).rev() {
                idx[k] += 1;
                if idx[k] < tdims[k] {
                    break;
                }
                idx[k] = 0;
            }
        }
        Some(out)
    }
}

/// `OpMetadata`, as `metadata={...}` prints it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpMetadata {
    pub op_type: SharedStr,
    pub op_name: SharedStr,
    pub source_file: SharedStr,
    pub source_line: i32,
    pub source_end_line: i32,
    pub source_column: i32,
    pub source_end_column: i32,
    pub profile_type: Vec<i32>,
    pub deduplicated_name: SharedStr,
    pub scheduling_name: SharedStr,
    pub stack_frame_id: i32,
}

impl OpMetadata {
    /// Whether it prints any field.
    pub fn is_empty(&self) -> bool {
        *self == OpMetadata::default()
    }
}

/// `frontend_attributes={key=value,...}`: opaque string pairs, in the
/// order written (XLA prints them sorted by key).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FrontendAttributes {
    pub entries: Vec<(SharedStr, SharedStr)>,
}

text_enum!(
    /// `OpSharding.Type`, numbered from 0 in this order.
    ShardingType {
        Replicated => "replicated",
        Maximal => "maximal",
        Tuple => "tuple",
        Other => "other",
        Manual => "manual",
        Unknown => "unknown",
        Unreduced => "unreduced",
    }
);

/// `sharding={...}` (XLA's `OpSharding`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sharding {
    pub kind: ShardingType,
    pub tuple: Vec<Sharding>,
    pub tile_dims: Vec<i64>,
    /// Explicit devices, or the iota form.
    pub devices: Vec<i64>,
    pub iota: Option<Iota>,
    pub last_tile_dim_replicate: bool,
    pub last_tile_dims: Vec<ShardingType>,
    /// `shard_as N` (false) or `shard_like N` (true).
    pub shard_group: Option<(bool, i64)>,
    pub metadata: Vec<OpMetadata>,
}

impl Default for Sharding {
    fn default() -> Self {
        Sharding {
            kind: ShardingType::Replicated,
            tuple: Vec::new(),
            tile_dims: Vec::new(),
            devices: Vec::new(),
            iota: None,
            last_tile_dim_replicate: false,
            last_tile_dims: Vec::new(),
            shard_group: None,
            metadata: Vec::new(),
        }
    }
}

/// One pair of `output_to_operand_aliasing`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OutputAlias {
    pub output_index: Vec<i64>,
    pub operand: i64,
    pub operand_index: Vec<i64>,
}

/// An original array: `{"name"}` or `{"name" {1,2}}`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OriginalArray {
    pub instruction: SharedStr,
    pub shape_index: Vec<i64>,
}

/// `origin={...}`: for each array of the shape, the original array it
/// comes from, if any (a tree of the shape's tuples); or a synthetic call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OriginalValue {
    SyntheticCall,
    Value(OriginalNode),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OriginalNode {
    Tuple(Vec<OriginalNode>),
    Array(Option<OriginalArray>),
}

/// `statistics={visualizing_index=1,stat-1=33,...}`
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Statistics {
    pub visualizing_index: i64,
    pub stats: Vec<(SharedStr, f64)>,
}

/// A domain's `domain={kind="sharding", entry={...}, exit={...}}`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Domain {
    pub entry: Sharding,
    pub exit: Sharding,
}

/// `result_accuracy={tolerance={atol=..,rtol=..,ulps=..}}` or
/// `{mode=highest}`.
#[derive(Clone, Debug, PartialEq)]
pub enum ResultAccuracy {
    Tolerance { atol: f64, rtol: f64, ulps: i64 },
    Mode(i32),
}

/// One entry of the header's `input_output_alias`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputOutputAlias {
    pub output_index: Vec<i64>,
    pub parameter: i64,
    pub parameter_index: Vec<i64>,
    pub must_alias: bool,
}

/// One entry of the header's `buffer_donor`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BufferDonor {
    pub parameter: i64,
    pub parameter_index: Vec<i64>,
}

/// `log_mode=` of a debug attribute set (`DebugLogModeProto`, from 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogMode {
    #[default]
    None,
    Default,
    FusionDebugger,
    NoFusion,
    Guaranteed,
}

impl LogMode {
    pub const ALL: [LogMode; 5] = [
        LogMode::None,
        LogMode::Default,
        LogMode::FusionDebugger,
        LogMode::NoFusion,
        LogMode::Guaranteed,
    ];

    pub fn name(self) -> &'static str {
        match self {
            LogMode::None => "none",
            LogMode::Default => "default",
            LogMode::FusionDebugger => "fusion_debugger",
            LogMode::NoFusion => "no_fusion",
            LogMode::Guaranteed => "guaranteed",
        }
    }

    pub fn from_number(v: i32) -> Option<LogMode> {
        Self::ALL.into_iter().find(|m| m.number() == v)
    }

    pub fn number(self) -> i32 {
        self as i32
    }

    /// The mode a name spells, in any case.
    pub fn from_name(name: &str) -> Option<LogMode> {
        let name = name.to_ascii_lowercase();
        Self::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// One key of the header's `debug_attributes`: an original array and what
/// the `xla.debug.Log` calls on it ask for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DebugAttributeEntry {
    pub instruction_name: String,
    pub shape_index: Vec<i64>,
    pub sets: Vec<DebugAttributeSet>,
}

/// One `{log_mode=...,callback_id=...,...}` set.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DebugAttributeSet {
    pub log_mode: LogMode,
    pub callback_id: i64,
    pub op_id: i64,
    pub partitioned: bool,
    pub operands_sharding: String,
}

/// One entry of the header's `origin_recovery_table`: the original array,
/// the one standing for it, and the module that recovers the first from
/// the second.
#[derive(Clone, Debug)]
pub struct RecoveryEntry {
    pub old: OriginalArray,
    pub new: OriginalArray,
    pub module: Option<Box<Module>>,
}

impl PartialEq for RecoveryEntry {
    fn eq(&self, other: &Self) -> bool {
        self.old == other.old
            && self.new == other.new
            && self.module.is_some() == other.module.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unshared_value_equals_its_source_and_shares_none_of_its_allocations() {
        let buf = Arc::new(r#"{op_name="a"} "b""#.to_string());
        let text = SharedStr::slice(&buf, 0, 13).expect("in bounds");
        let metadata = OpMetadata {
            op_name: SharedStr::from("a".to_string()),
            ..OpMetadata::default()
        };
        let read = AttrValue::Metadata(Arc::new(Written::read(metadata, text)));
        let copy = read.unshared();
        assert_eq!(copy, read);
        let (AttrValue::Metadata(a), AttrValue::Metadata(b)) = (&read, &copy) else {
            panic!("a metadata value stays one: {copy:?}");
        };
        assert!(!Arc::ptr_eq(a, b));
        assert_eq!(b.text(), Some(r#"{op_name="a"}"#), "it prints as written");
        // `canonical`, which shares the same code, still forgets the text.
        let AttrValue::Metadata(c) = read.canonical() else {
            panic!("a metadata value stays one");
        };
        assert_eq!(c.text(), None);

        let quoted = AttrValue::Str(SharedStr::slice(&buf, 15, 16).expect("in bounds"));
        let AttrValue::Str(own) = quoted.unshared() else {
            panic!("a string stays one");
        };
        assert_eq!(&*own, "b");
        assert_eq!(own.offset_in(&buf), None, "a buffer of its own");
    }
}
