//! XLA's protobuf messages (`xla/service/hlo.proto`, `xla/xla_data.proto`)
//! with XLA's field numbers, written by hand with `prost`'s derive.
//!
//! Every message is an [`Ext`]: the derived struct of the fields this crate
//! knows, plus the raw bytes of every field it does not (a field added by a
//! newer XLA, say). Those bytes are written back after the known fields, so
//! a read-write cycle keeps them. Which tags a struct knows is found once
//! per type by probing its derived `merge_field` (see [`Known`]), so the
//! list can never drift from the struct.
//!
//! Enums are kept as plain `i32` (the wire form), string-valued ones as the
//! strings XLA writes.

use prost::bytes::{Buf, BufMut};
use prost::encoding::{DecodeContext, WireType};
use prost::{DecodeError, Message};
use std::collections::BTreeMap;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::OnceLock;

/// A message and the raw bytes (keys included) of the fields it does not
/// model, in the order they came.
#[derive(Clone, Default, PartialEq)]
pub struct Ext<M> {
    pub msg: M,
    pub unknown: Vec<u8>,
}

impl<M> Ext<M> {
    pub fn new(msg: M) -> Ext<M> {
        Ext {
            msg,
            unknown: Vec::new(),
        }
    }
}

impl<M> From<M> for Ext<M> {
    fn from(msg: M) -> Ext<M> {
        Ext::new(msg)
    }
}

impl<M> Deref for Ext<M> {
    type Target = M;
    fn deref(&self) -> &M {
        &self.msg
    }
}

impl<M> DerefMut for Ext<M> {
    fn deref_mut(&mut self) -> &mut M {
        &mut self.msg
    }
}

impl<M: fmt::Debug> fmt::Debug for Ext<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.unknown.is_empty() {
            self.msg.fmt(f)
        } else {
            f.debug_struct("Ext")
                .field("msg", &self.msg)
                .field("unknown", &self.unknown)
                .finish()
        }
    }
}

/// Tags above this are never probed: every modelled tag is below it.
const MAX_PROBED_TAG: u32 = 128;

/// The field tags a derived message knows.
pub trait Known: Message + Default + PartialEq + Sized {
    fn known_tags() -> &'static [bool];

    fn knows(tag: u32) -> bool {
        Self::known_tags()
            .get(tag as usize)
            .copied()
            .unwrap_or(false)
    }
}

/// Whether `M` has a field with this tag: merging a small non-default value
/// of some wire type into a default message either changes it or fails
/// (wrong wire type for the field), while an unknown tag is skipped.
pub fn probe_known_tags<M: Message + Default + PartialEq>() -> Box<[bool]> {
    let payloads: [(WireType, &[u8]); 4] = [
        (WireType::Varint, &[0x01]),
        (WireType::SixtyFourBit, &[1, 0, 0, 0, 0, 0, 0, 0]),
        (WireType::ThirtyTwoBit, &[1, 0, 0, 0]),
        // Length 2: field 1, varint 1; valid UTF-8, a valid packed list and
        // a valid nested message.
        (WireType::LengthDelimited, &[0x02, 0x08, 0x01]),
    ];
    (0..=MAX_PROBED_TAG)
        .map(|tag| {
            tag > 0
                && payloads.iter().any(|&(wt, bytes)| {
                    let mut m = M::default();
                    let mut buf = bytes;
                    match m.merge_field(tag, wt, &mut buf, DecodeContext::default()) {
                        Err(_) => true,
                        Ok(()) => m != M::default(),
                    }
                })
        })
        .collect()
}

#[allow(deprecated)] // prost has no other way to make one
fn decode_error(message: &'static str) -> DecodeError {
    DecodeError::new(message)
}

/// The length of one field's value (after its key) at the start of `data`.
pub(crate) fn field_value_len(
    data: &[u8],
    wire_type: WireType,
    tag: u32,
    depth: u32,
) -> Result<usize, DecodeError> {
    let short = || decode_error("buffer underflow in an unknown field");
    Ok(match wire_type {
        WireType::Varint => {
            let n = data.iter().take(10).position(|b| b & 0x80 == 0);
            n.ok_or_else(|| decode_error("invalid varint"))? + 1
        }
        WireType::SixtyFourBit => 8,
        WireType::ThirtyTwoBit => 4,
        WireType::LengthDelimited => {
            let mut b = data;
            let len = prost::encoding::decode_varint(&mut b)?;
            let head = data.len() - b.len();
            usize::try_from(len)
                .ok()
                .and_then(|l| l.checked_add(head))
                .ok_or_else(short)?
        }
        WireType::StartGroup => {
            if depth > 64 {
                return Err(decode_error("groups nested too deeply"));
            }
            let mut pos = 0;
            loop {
                let mut b = data.get(pos..).ok_or_else(short)?;
                let before = b.len();
                let (inner_tag, inner_wt) = prost::encoding::decode_key(&mut b)?;
                pos += before - b.len();
                if inner_wt == WireType::EndGroup {
                    if inner_tag != tag {
                        return Err(decode_error("unexpected end group tag"));
                    }
                    break pos;
                }
                let rest = data.get(pos..).ok_or_else(short)?;
                pos += field_value_len(rest, inner_wt, inner_tag, depth + 1)?;
            }
        }
        WireType::EndGroup => return Err(decode_error("unexpected end group tag")),
    })
}

/// Copies one unknown field (key and value) from `buf` to `out`.
pub fn capture_unknown(
    tag: u32,
    wire_type: WireType,
    buf: &mut impl Buf,
    out: &mut Vec<u8>,
) -> Result<(), DecodeError> {
    let chunk = buf.chunk();
    let len = field_value_len(chunk, wire_type, tag, 0)?;
    if len > chunk.len() {
        return Err(decode_error("buffer underflow in an unknown field"));
    }
    prost::encoding::encode_key(tag, wire_type, out);
    out.extend_from_slice(&chunk[..len]);
    buf.advance(len);
    Ok(())
}

impl<M: Known + fmt::Debug> Message for Ext<M> {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        self.msg.encode_raw(buf);
        buf.put_slice(&self.unknown);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        if M::knows(tag) {
            self.msg.merge_field(tag, wire_type, buf, ctx)
        } else {
            capture_unknown(tag, wire_type, buf, &mut self.unknown)
        }
    }

    fn encoded_len(&self) -> usize {
        self.msg.encoded_len() + self.unknown.len()
    }

    fn clear(&mut self) {
        self.msg.clear();
        self.unknown.clear();
    }
}

/// Declares a derived message `$fields` and its [`Ext`] alias `$name`.
macro_rules! messages {
    ($(
        $(#[$meta:meta])*
        $name:ident = $fields:ident { $($body:tt)* }
    )*) => {$(
        $(#[$meta])*
        #[derive(Clone, PartialEq, ::prost::Message)]
        pub struct $fields { $($body)* }

        $(#[$meta])*
        pub type $name = Ext<$fields>;

        impl Known for $fields {
            fn known_tags() -> &'static [bool] {
                static TAGS: OnceLock<Box<[bool]>> = OnceLock::new();
                TAGS.get_or_init(probe_known_tags::<$fields>)
            }
        }
    )*};
}

messages! {
    // ---- xla_data.proto ------------------------------------------------

    PaddingConfigDimension = PaddingConfigDimensionFields {
        #[prost(int64, tag = "1")] pub edge_padding_low: i64,
        #[prost(int64, tag = "2")] pub edge_padding_high: i64,
        #[prost(int64, tag = "3")] pub interior_padding: i64,
    }

    PaddingConfig = PaddingConfigFields {
        #[prost(message, repeated, tag = "1")] pub dimensions: Vec<PaddingConfigDimension>,
    }

    TileProto = TileProtoFields {
        #[prost(int64, repeated, tag = "1")] pub dimensions: Vec<i64>,
    }

    SplitConfigProto = SplitConfigProtoFields {
        #[prost(int64, tag = "1")] pub dimension: i64,
        #[prost(int64, repeated, tag = "2")] pub split_indices: Vec<i64>,
    }

    LayoutProto = LayoutProtoFields {
        #[prost(int64, repeated, tag = "1")] pub minor_to_major: Vec<i64>,
        #[prost(int32, repeated, tag = "9")] pub dim_level_types: Vec<i32>,
        #[prost(bool, repeated, tag = "13")] pub dim_unique: Vec<bool>,
        #[prost(bool, repeated, tag = "14")] pub dim_ordered: Vec<bool>,
        #[prost(message, repeated, tag = "6")] pub tiles: Vec<TileProto>,
        #[prost(int64, tag = "16")] pub tail_padding_alignment_in_elements: i64,
        #[prost(int64, tag = "7")] pub element_size_in_bits: i64,
        #[prost(int64, tag = "8")] pub memory_space: i64,
        #[prost(int32, tag = "11")] pub index_primitive_type: i32,
        #[prost(int32, tag = "12")] pub pointer_primitive_type: i32,
        #[prost(message, optional, boxed, tag = "10")] pub physical_shape: Option<Box<ShapeProto>>,
        #[prost(int64, tag = "15")] pub dynamic_shape_metadata_prefix_bytes: i64,
        #[prost(message, repeated, tag = "17")] pub split_configs: Vec<SplitConfigProto>,
    }

    ShapeProto = ShapeProtoFields {
        #[prost(int32, tag = "2")] pub element_type: i32,
        #[prost(int64, repeated, tag = "3")] pub dimensions: Vec<i64>,
        #[prost(bool, repeated, tag = "6")] pub is_dynamic_dimension: Vec<bool>,
        #[prost(message, repeated, tag = "4")] pub tuple_shapes: Vec<ShapeProto>,
        #[prost(message, optional, tag = "5")] pub layout: Option<LayoutProto>,
    }

    ProgramShapeProto = ProgramShapeProtoFields {
        #[prost(message, repeated, tag = "1")] pub parameters: Vec<ShapeProto>,
        #[prost(message, optional, tag = "2")] pub result: Option<ShapeProto>,
        #[prost(string, repeated, tag = "3")] pub parameter_names: Vec<String>,
    }

    OpMetadataProfileInfo = OpMetadataProfileInfoFields {
        #[prost(int32, repeated, tag = "1")] pub profile_type: Vec<i32>,
        #[prost(double, tag = "2")] pub relative_speedup: f64,
        #[prost(int32, tag = "3")] pub profile_source: i32,
        #[prost(int32, tag = "4")] pub compilation_event: i32,
        #[prost(int32, tag = "5")] pub profile_generation_strategy: i32,
    }

    /// A string either inline or as an index into
    /// `HloModuleProto.payloads` (XLA's oneof `payload_source`).
    Payload = PayloadFields {
        #[prost(bytes = "vec", optional, tag = "1")] pub value: Option<Vec<u8>>,
        #[prost(int64, optional, tag = "2")] pub id: Option<i64>,
    }

    OpMetadata = OpMetadataFields {
        #[prost(string, tag = "1")] pub op_type: String,
        #[prost(string, tag = "2")] pub op_name: String,
        #[prost(string, tag = "3")] pub source_file: String,
        #[prost(int32, tag = "4")] pub source_line: i32,
        #[prost(int32, tag = "17")] pub source_end_line: i32,
        #[prost(int32, tag = "18")] pub source_column: i32,
        #[prost(int32, tag = "19")] pub source_end_column: i32,
        #[prost(int32, repeated, tag = "5")] pub profile_type: Vec<i32>,
        #[prost(int64, tag = "8")] pub size_of_generated_code_in_bytes: i64,
        #[prost(int64, tag = "9")] pub size_of_memory_working_set_in_bytes: i64,
        #[prost(message, optional, tag = "10")] pub profile_info: Option<OpMetadataProfileInfo>,
        #[prost(string, tag = "12")] pub deduplicated_name: String,
        #[prost(int32, tag = "15")] pub stack_frame_id: i32,
        #[prost(string, tag = "16")] pub scheduling_name: String,
    }

    DeviceAssignmentComputationDevice = DeviceAssignmentComputationDeviceFields {
        #[prost(int64, repeated, tag = "1")] pub replica_device_ids: Vec<i64>,
    }

    DeviceAssignmentProto = DeviceAssignmentProtoFields {
        #[prost(int32, tag = "1")] pub replica_count: i32,
        #[prost(int32, tag = "2")] pub computation_count: i32,
        #[prost(message, repeated, tag = "3")] pub computation_devices: Vec<DeviceAssignmentComputationDevice>,
    }

    LiteralProto = LiteralProtoFields {
        #[prost(message, optional, tag = "1")] pub shape: Option<ShapeProto>,
        #[prost(bool, repeated, tag = "2")] pub preds: Vec<bool>,
        #[prost(bytes = "vec", tag = "30")] pub s1s: Vec<u8>,
        #[prost(bytes = "vec", tag = "26")] pub s2s: Vec<u8>,
        #[prost(bytes = "vec", tag = "21")] pub s4s: Vec<u8>,
        #[prost(bytes = "vec", tag = "15")] pub s8s: Vec<u8>,
        #[prost(bytes = "vec", tag = "31")] pub u1s: Vec<u8>,
        #[prost(bytes = "vec", tag = "27")] pub u2s: Vec<u8>,
        #[prost(bytes = "vec", tag = "22")] pub u4s: Vec<u8>,
        #[prost(bytes = "vec", tag = "3")] pub u8s: Vec<u8>,
        #[prost(int32, repeated, tag = "4")] pub s32s: Vec<i32>,
        #[prost(int64, repeated, tag = "5")] pub s64s: Vec<i64>,
        #[prost(uint32, repeated, tag = "6")] pub u32s: Vec<u32>,
        #[prost(uint64, repeated, tag = "7")] pub u64s: Vec<u64>,
        #[prost(float, repeated, tag = "8")] pub f32s: Vec<f32>,
        #[prost(double, repeated, tag = "9")] pub f64s: Vec<f64>,
        #[prost(float, repeated, tag = "12")] pub c64s: Vec<f32>,
        #[prost(double, repeated, tag = "18")] pub c128s: Vec<f64>,
        #[prost(message, repeated, tag = "10")] pub tuple_literals: Vec<LiteralProto>,
        #[prost(bytes = "vec", tag = "11")] pub f16s: Vec<u8>,
        #[prost(bytes = "vec", tag = "13")] pub bf16s: Vec<u8>,
        #[prost(bytes = "vec", tag = "16")] pub u16s: Vec<u8>,
        #[prost(bytes = "vec", tag = "17")] pub s16s: Vec<u8>,
        #[prost(bytes = "vec", tag = "32")] pub f4e2m1fns: Vec<u8>,
        #[prost(bytes = "vec", tag = "29")] pub f8e3m4s: Vec<u8>,
        #[prost(bytes = "vec", tag = "23")] pub f8e4m3b11fnuzs: Vec<u8>,
        #[prost(bytes = "vec", tag = "20")] pub f8e4m3fns: Vec<u8>,
        #[prost(bytes = "vec", tag = "25")] pub f8e4m3fnuzs: Vec<u8>,
        #[prost(bytes = "vec", tag = "28")] pub f8e4m3s: Vec<u8>,
        #[prost(bytes = "vec", tag = "24")] pub f8e5m2fnuzs: Vec<u8>,
        #[prost(bytes = "vec", tag = "19")] pub f8e5m2s: Vec<u8>,
        #[prost(bytes = "vec", tag = "33")] pub f8e8m0fnus: Vec<u8>,
        #[prost(int64, repeated, tag = "14")] pub sparse_indices: Vec<i64>,
    }

    WindowDimension = WindowDimensionFields {
        #[prost(int64, tag = "1")] pub size: i64,
        #[prost(int64, tag = "2")] pub stride: i64,
        #[prost(int64, tag = "3")] pub padding_low: i64,
        #[prost(int64, tag = "4")] pub padding_high: i64,
        #[prost(int64, tag = "5")] pub window_dilation: i64,
        #[prost(int64, tag = "6")] pub base_dilation: i64,
        #[prost(bool, tag = "7")] pub window_reversal: bool,
    }

    Window = WindowFields {
        #[prost(message, repeated, tag = "1")] pub dimensions: Vec<WindowDimension>,
    }

    GatherDimensionNumbers = GatherDimensionNumbersFields {
        #[prost(int64, repeated, tag = "1")] pub offset_dims: Vec<i64>,
        #[prost(int64, repeated, tag = "2")] pub collapsed_slice_dims: Vec<i64>,
        #[prost(int64, repeated, tag = "3")] pub start_index_map: Vec<i64>,
        #[prost(int64, tag = "4")] pub index_vector_dim: i64,
        #[prost(int64, repeated, tag = "5")] pub operand_batching_dims: Vec<i64>,
        #[prost(int64, repeated, tag = "6")] pub start_indices_batching_dims: Vec<i64>,
    }

    ScatterDimensionNumbers = ScatterDimensionNumbersFields {
        #[prost(int64, repeated, tag = "1")] pub update_window_dims: Vec<i64>,
        #[prost(int64, repeated, tag = "2")] pub inserted_window_dims: Vec<i64>,
        #[prost(int64, repeated, tag = "3")] pub scatter_dims_to_operand_dims: Vec<i64>,
        #[prost(int64, tag = "4")] pub index_vector_dim: i64,
        #[prost(int64, repeated, tag = "5")] pub input_batching_dims: Vec<i64>,
        #[prost(int64, repeated, tag = "6")] pub scatter_indices_batching_dims: Vec<i64>,
    }

    ConvolutionDimensionNumbers = ConvolutionDimensionNumbersFields {
        #[prost(int64, tag = "7")] pub input_batch_dimension: i64,
        #[prost(int64, tag = "8")] pub input_feature_dimension: i64,
        #[prost(int64, repeated, tag = "11")] pub input_spatial_dimensions: Vec<i64>,
        #[prost(int64, tag = "3")] pub kernel_input_feature_dimension: i64,
        #[prost(int64, tag = "4")] pub kernel_output_feature_dimension: i64,
        #[prost(int64, repeated, tag = "6")] pub kernel_spatial_dimensions: Vec<i64>,
        #[prost(int64, tag = "9")] pub output_batch_dimension: i64,
        #[prost(int64, tag = "10")] pub output_feature_dimension: i64,
        #[prost(int64, repeated, tag = "12")] pub output_spatial_dimensions: Vec<i64>,
    }

    DotDimensionNumbers = DotDimensionNumbersFields {
        #[prost(int64, repeated, tag = "1")] pub lhs_contracting_dimensions: Vec<i64>,
        #[prost(int64, repeated, tag = "2")] pub rhs_contracting_dimensions: Vec<i64>,
        #[prost(int64, repeated, tag = "3")] pub lhs_batch_dimensions: Vec<i64>,
        #[prost(int64, repeated, tag = "4")] pub rhs_batch_dimensions: Vec<i64>,
    }

    RaggedDotDimensionNumbers = RaggedDotDimensionNumbersFields {
        #[prost(message, optional, tag = "1")] pub dot_dimension_numbers: Option<DotDimensionNumbers>,
        #[prost(int64, repeated, tag = "2")] pub lhs_ragged_dimensions: Vec<i64>,
        #[prost(int64, repeated, tag = "3")] pub rhs_group_dimensions: Vec<i64>,
    }

    TriangularSolveOptions = TriangularSolveOptionsFields {
        #[prost(bool, tag = "1")] pub left_side: bool,
        #[prost(bool, tag = "2")] pub lower: bool,
        #[prost(bool, tag = "3")] pub unit_diagonal: bool,
        #[prost(int32, tag = "4")] pub transpose_a: i32,
    }

    CholeskyOptions = CholeskyOptionsFields {
        #[prost(bool, tag = "1")] pub lower: bool,
    }

    FrontendAttributes = FrontendAttributesFields {
        #[prost(btree_map = "string, string", tag = "1")] pub map: BTreeMap<String, String>,
    }

    Statistic = StatisticFields {
        #[prost(string, tag = "1")] pub stat_name: String,
        #[prost(double, tag = "2")] pub stat_val: f64,
    }

    StatisticsViz = StatisticsVizFields {
        #[prost(int64, tag = "1")] pub stat_index_to_visualize: i64,
        #[prost(message, repeated, tag = "2")] pub statistics: Vec<Statistic>,
    }

    MeshAxis = MeshAxisFields {
        #[prost(string, tag = "1")] pub name: String,
        #[prost(int64, tag = "2")] pub size: i64,
    }

    MeshProto = MeshProtoFields {
        #[prost(message, repeated, tag = "1")] pub axes: Vec<MeshAxis>,
        #[prost(int64, repeated, tag = "2")] pub device_ids: Vec<i64>,
    }

    SubAxis = SubAxisFields {
        #[prost(int64, tag = "1")] pub pre_size: i64,
        #[prost(int64, tag = "2")] pub size: i64,
    }

    AxisRefProto = AxisRefProtoFields {
        #[prost(int64, tag = "1")] pub mesh_axis_index: i64,
        #[prost(message, optional, tag = "2")] pub sub_axis_info: Option<SubAxis>,
    }

    DimensionSharding = DimensionShardingFields {
        #[prost(message, repeated, tag = "1")] pub axes: Vec<AxisRefProto>,
        #[prost(bool, tag = "2")] pub is_closed: bool,
    }

    NamedShardingProto = NamedShardingProtoFields {
        #[prost(message, repeated, tag = "1")] pub tuple_shardings: Vec<NamedShardingProto>,
        #[prost(message, optional, tag = "2")] pub mesh: Option<MeshProto>,
        #[prost(message, repeated, tag = "3")] pub dim_shardings: Vec<DimensionSharding>,
        #[prost(message, repeated, tag = "4")] pub replicated_axes: Vec<AxisRefProto>,
        #[prost(message, repeated, tag = "5")] pub unreduced_axes: Vec<AxisRefProto>,
        #[prost(message, repeated, tag = "6")] pub metadata: Vec<OpMetadata>,
    }

    OpSharding = OpShardingFields {
        #[prost(int32, tag = "1")] pub r#type: i32,
        #[prost(message, optional, tag = "2")] pub tile_shape: Option<ShapeProto>,
        #[prost(int64, repeated, tag = "3")] pub tile_assignment_dimensions: Vec<i64>,
        #[prost(int64, repeated, tag = "4")] pub tile_assignment_devices: Vec<i64>,
        #[prost(message, repeated, tag = "5")] pub tuple_shardings: Vec<OpSharding>,
        #[prost(bool, tag = "6")] pub replicate_on_last_tile_dim: bool,
        #[prost(message, repeated, tag = "7")] pub metadata: Vec<OpMetadata>,
        #[prost(int32, repeated, tag = "8")] pub last_tile_dims: Vec<i32>,
        #[prost(int64, repeated, tag = "9")] pub iota_reshape_dims: Vec<i64>,
        #[prost(int32, repeated, tag = "10")] pub iota_transpose_perm: Vec<i32>,
        #[prost(bool, tag = "11")] pub is_shard_group: bool,
        #[prost(int64, tag = "12")] pub shard_group_id: i64,
        #[prost(int32, tag = "13")] pub shard_group_type: i32,
        #[prost(message, optional, boxed, tag = "14")] pub named_sharding: Option<Box<NamedShardingProto>>,
    }

    ReplicaGroup = ReplicaGroupFields {
        #[prost(int64, repeated, tag = "1")] pub replica_ids: Vec<i64>,
    }

    IotaReplicaGroupListProto = IotaReplicaGroupListProtoFields {
        #[prost(int64, tag = "1")] pub num_replica_groups: i64,
        #[prost(int64, tag = "2")] pub num_devices_per_group: i64,
        #[prost(int64, repeated, tag = "3")] pub iota_reshape_dims: Vec<i64>,
        #[prost(int32, repeated, tag = "4")] pub iota_transpose_perm: Vec<i32>,
    }

    CollectiveDeviceListProto = CollectiveDeviceListProtoFields {
        #[prost(message, repeated, tag = "1")] pub replica_groups: Vec<ReplicaGroup>,
        #[prost(message, optional, tag = "2")] pub iota_replica_group_list: Option<IotaReplicaGroupListProto>,
    }

    /// Replica groups as axes of a mesh (`replica_groups=mesh[...] {...}`),
    /// seen at instruction field 93 in jaxlib 0.10.2's output.
    MeshAxesReplicaGroupListProto = MeshAxesReplicaGroupListProtoFields {
        #[prost(message, optional, tag = "1")] pub mesh: Option<MeshProto>,
        #[prost(message, repeated, tag = "2")] pub axes: Vec<AxisRefProto>,
    }

    SourceTarget = SourceTargetFields {
        #[prost(int64, tag = "1")] pub source: i64,
        #[prost(int64, tag = "2")] pub target: i64,
    }

    Tolerance = ToleranceFields {
        #[prost(double, tag = "1")] pub atol: f64,
        #[prost(double, tag = "2")] pub rtol: f64,
        #[prost(int64, tag = "3")] pub ulps: i64,
    }

    /// `oneof specs { Mode mode = 1; Tolerance tolerance = 2; }`, kept as
    /// two optional fields (same wire form).
    ResultAccuracy = ResultAccuracyFields {
        #[prost(int32, optional, tag = "1")] pub mode: Option<i32>,
        #[prost(message, optional, tag = "2")] pub tolerance: Option<Tolerance>,
    }

    PrecisionConfig = PrecisionConfigFields {
        #[prost(int32, repeated, tag = "1")] pub operand_precision: Vec<i32>,
        #[prost(int32, tag = "2")] pub algorithm: i32,
    }

    ParameterReplication = ParameterReplicationFields {
        #[prost(bool, repeated, tag = "1")] pub replicated_at_leaf_buffers: Vec<bool>,
    }

    OutputOperandAliasing = OutputOperandAliasingFields {
        #[prost(int64, repeated, tag = "1")] pub output_shape_index: Vec<i64>,
        #[prost(int64, tag = "2")] pub operand_index: i64,
        #[prost(int64, repeated, tag = "3")] pub operand_shape_index: Vec<i64>,
    }

    OriginalArrayProto = OriginalArrayProtoFields {
        #[prost(string, tag = "1")] pub instruction_name: String,
        #[prost(int64, repeated, tag = "2")] pub shape_index: Vec<i64>,
    }

    OriginalValueElementProto = OriginalValueElementProtoFields {
        #[prost(int64, repeated, tag = "1")] pub shape_index: Vec<i64>,
        #[prost(message, optional, tag = "2")] pub original_array: Option<OriginalArrayProto>,
    }

    OriginalValueProto = OriginalValueProtoFields {
        #[prost(message, repeated, tag = "1")] pub elements: Vec<OriginalValueElementProto>,
        #[prost(bool, tag = "2")] pub is_synthetic_call: bool,
    }

    // ---- hlo.proto -------------------------------------------------------

    SliceDimensions = SliceDimensionsFields {
        #[prost(int64, tag = "1")] pub start: i64,
        #[prost(int64, tag = "2")] pub limit: i64,
        #[prost(int64, tag = "3")] pub stride: i64,
    }

    HloInstructionProto = HloInstructionProtoFields {
        #[prost(string, tag = "1")] pub name: String,
        #[prost(string, tag = "2")] pub opcode: String,
        #[prost(message, optional, tag = "3")] pub shape: Option<ShapeProto>,
        #[prost(message, optional, tag = "7")] pub metadata: Option<OpMetadata>,
        #[prost(message, optional, tag = "8")] pub literal: Option<LiteralProto>,
        #[prost(int64, tag = "9")] pub parameter_number: i64,
        #[prost(string, tag = "11")] pub fusion_kind: String,
        #[prost(int64, tag = "13")] pub tuple_index: i64,
        #[prost(int64, repeated, tag = "14")] pub dimensions: Vec<i64>,
        #[prost(message, optional, tag = "15")] pub window: Option<Window>,
        #[prost(message, optional, tag = "16")] pub convolution_dimension_numbers: Option<ConvolutionDimensionNumbers>,
        #[prost(int64, tag = "50")] pub feature_group_count: i64,
        #[prost(int64, tag = "58")] pub batch_group_count: i64,
        #[prost(message, repeated, tag = "17")] pub slice_dimensions: Vec<SliceDimensions>,
        #[prost(int32, tag = "18")] pub exponent_bits: i32,
        #[prost(int32, tag = "19")] pub mantissa_bits: i32,
        #[prost(int64, repeated, tag = "20")] pub dynamic_slice_sizes: Vec<i64>,
        #[prost(message, optional, tag = "21")] pub padding_config: Option<PaddingConfig>,
        #[prost(bytes = "vec", tag = "22")] pub outfeed_config: Vec<u8>,
        #[prost(int32, tag = "23")] pub distribution: i32,
        #[prost(float, tag = "24")] pub epsilon: f32,
        #[prost(int64, tag = "25")] pub feature_index: i64,
        #[prost(int64, tag = "26")] pub channel_id: i64,
        #[prost(bytes = "vec", tag = "27")] pub infeed_config: Vec<u8>,
        #[prost(string, tag = "28")] pub custom_call_target: String,
        #[prost(message, optional, tag = "29")] pub outfeed_shape: Option<ShapeProto>,
        #[prost(message, optional, tag = "30")] pub dot_dimension_numbers: Option<DotDimensionNumbers>,
        #[prost(message, optional, tag = "90")] pub ragged_dot_dimension_numbers: Option<RaggedDotDimensionNumbers>,
        #[prost(int32, tag = "31")] pub fft_type: i32,
        #[prost(int64, repeated, tag = "32")] pub fft_length: Vec<i64>,
        #[prost(string, tag = "63")] pub comparison_direction: String,
        #[prost(message, optional, tag = "33")] pub gather_dimension_numbers: Option<GatherDimensionNumbers>,
        #[prost(int64, repeated, tag = "34")] pub gather_slice_sizes: Vec<i64>,
        #[prost(int64, tag = "35")] pub id: i64,
        #[prost(int64, repeated, tag = "36")] pub operand_ids: Vec<i64>,
        #[prost(int64, repeated, tag = "37")] pub control_predecessor_ids: Vec<i64>,
        #[prost(int64, repeated, tag = "38")] pub called_computation_ids: Vec<i64>,
        #[prost(message, optional, tag = "40")] pub sharding: Option<OpSharding>,
        #[prost(bytes = "vec", tag = "43")] pub backend_config: Vec<u8>,
        /// Where newer XLA may put the backend config instead (deduplicated
        /// into `HloModuleProto.payloads`); read, never written.
        #[prost(message, optional, tag = "99")] pub backend_config_payload: Option<Payload>,
        #[prost(message, repeated, tag = "49")] pub replica_groups: Vec<ReplicaGroup>,
        #[prost(int64, tag = "45")] pub all_reduce_id: i64,
        #[prost(bool, tag = "71")] pub use_global_device_ids: bool,
        #[prost(bool, tag = "47")] pub is_host_transfer: bool,
        #[prost(bool, tag = "60")] pub is_stable: bool,
        #[prost(message, optional, tag = "48")] pub scatter_dimension_numbers: Option<ScatterDimensionNumbers>,
        #[prost(message, optional, tag = "51")] pub precision_config: Option<PrecisionConfig>,
        #[prost(message, repeated, tag = "52")] pub source_target_pairs: Vec<SourceTarget>,
        #[prost(message, optional, tag = "54")] pub domain_entry_sharding: Option<OpSharding>,
        #[prost(message, optional, tag = "55")] pub domain_exit_sharding: Option<OpSharding>,
        #[prost(bool, tag = "56")] pub constrain_layout: bool,
        #[prost(message, repeated, tag = "57")] pub operand_shapes_with_layout: Vec<ShapeProto>,
        #[prost(message, optional, tag = "59")] pub triangular_solve_options: Option<TriangularSolveOptions>,
        #[prost(message, optional, tag = "62")] pub cholesky_options: Option<CholeskyOptions>,
        #[prost(message, optional, tag = "61")] pub parameter_replication: Option<ParameterReplication>,
        #[prost(bool, tag = "65")] pub custom_call_has_side_effect: bool,
        #[prost(message, repeated, tag = "74")] pub output_operand_aliasing: Vec<OutputOperandAliasing>,
        #[prost(int32, tag = "76")] pub custom_call_schedule: i32,
        #[prost(int64, tag = "66")] pub delta: i64,
        #[prost(bool, tag = "67")] pub indices_are_sorted: bool,
        #[prost(message, optional, tag = "68")] pub frontend_attributes: Option<FrontendAttributes>,
        #[prost(bool, tag = "69")] pub unique_indices: bool,
        #[prost(int32, tag = "70")] pub rng_algorithm: i32,
        #[prost(string, tag = "72")] pub comparison_type: String,
        #[prost(bool, tag = "73")] pub is_cross_program_prefetch: bool,
        #[prost(int32, optional, tag = "80")] pub cross_program_prefetch_index: Option<i32>,
        #[prost(int32, tag = "75")] pub padding_type: i32,
        #[prost(int32, tag = "77")] pub custom_call_api_version: i32,
        #[prost(string, tag = "79")] pub async_execution_thread: String,
        #[prost(int64, tag = "81")] pub k: i64,
        #[prost(bool, tag = "85")] pub largest: bool,
        #[prost(message, optional, tag = "82")] pub statistics_viz: Option<StatisticsViz>,
        #[prost(message, optional, tag = "87")] pub collective_device_list: Option<CollectiveDeviceListProto>,
        #[prost(message, optional, tag = "88")] pub original_value: Option<OriginalValueProto>,
        #[prost(bool, tag = "89")] pub is_composite: bool,
        #[prost(message, optional, tag = "91")] pub result_accuracy: Option<ResultAccuracy>,
        /// Iota replica groups, where XLA writes them (older XLA wrote them
        /// in `collective_device_list`).
        #[prost(message, optional, tag = "92")] pub iota_collective_device_list: Option<IotaReplicaGroupListProto>,
        #[prost(message, optional, tag = "93")] pub mesh_axes_replica_group_list: Option<MeshAxesReplicaGroupListProto>,
        #[prost(bool, tag = "94")] pub is_reverse: bool,
        #[prost(int64, tag = "95")] pub num_carries: i64,
        /// XLA's `TriState`: 0 unspecified, 1 true, 2 false.
        #[prost(int32, tag = "96")] pub is_associative: i32,
        /// A collective-broadcast whose last operand is the root's rank.
        #[prost(bool, tag = "100")] pub has_dynamic_root: bool,
    }

    HloComputationProto = HloComputationProtoFields {
        #[prost(string, tag = "1")] pub name: String,
        #[prost(message, repeated, tag = "2")] pub instructions: Vec<HloInstructionProto>,
        #[prost(message, optional, tag = "4")] pub program_shape: Option<ProgramShapeProto>,
        #[prost(int64, tag = "5")] pub id: i64,
        #[prost(int64, tag = "6")] pub root_id: i64,
        #[prost(bool, tag = "7")] pub is_fusion_computation: bool,
        #[prost(string, tag = "8")] pub execution_thread: String,
    }

    InstructionSequence = InstructionSequenceFields {
        #[prost(int64, repeated, tag = "1")] pub instruction_ids: Vec<i64>,
    }

    HloScheduleProto = HloScheduleProtoFields {
        #[prost(btree_map = "int64, message", tag = "1")] pub sequences: BTreeMap<i64, InstructionSequence>,
    }

    AliasEntryProto = AliasEntryProtoFields {
        #[prost(int64, repeated, tag = "1")] pub output_shape_index: Vec<i64>,
        #[prost(int64, tag = "2")] pub parameter_number: i64,
        #[prost(int64, repeated, tag = "3")] pub parameter_shape_index: Vec<i64>,
        #[prost(int32, tag = "4")] pub kind: i32,
    }

    HloInputOutputAliasProto = HloInputOutputAliasProtoFields {
        #[prost(message, repeated, tag = "1")] pub entries: Vec<AliasEntryProto>,
    }

    BufferDonorEntryProto = BufferDonorEntryProtoFields {
        #[prost(int64, tag = "1")] pub parameter_number: i64,
        #[prost(int64, repeated, tag = "2")] pub parameter_shape_index: Vec<i64>,
    }

    HloBufferDonorProto = HloBufferDonorProtoFields {
        #[prost(message, repeated, tag = "1")] pub entries: Vec<BufferDonorEntryProto>,
    }

    CrossProgramPrefetch = CrossProgramPrefetchFields {
        #[prost(int64, tag = "1")] pub parameter: i64,
        #[prost(int64, repeated, tag = "2")] pub index: Vec<i64>,
        #[prost(int64, tag = "3")] pub offset: i64,
    }

    FileLocationProto = FileLocationProtoFields {
        #[prost(int32, tag = "1")] pub file_name_id: i32,
        #[prost(int32, tag = "2")] pub function_name_id: i32,
        #[prost(int32, tag = "3")] pub line: i32,
        #[prost(int32, tag = "4")] pub column: i32,
        #[prost(int32, tag = "5")] pub end_line: i32,
        #[prost(int32, tag = "6")] pub end_column: i32,
    }

    StackFrameProto = StackFrameProtoFields {
        #[prost(int32, tag = "1")] pub file_location_id: i32,
        #[prost(int32, tag = "2")] pub parent_frame_id: i32,
    }

    StackFrameIndexProto = StackFrameIndexProtoFields {
        #[prost(string, repeated, tag = "1")] pub file_names: Vec<String>,
        #[prost(string, repeated, tag = "2")] pub function_names: Vec<String>,
        #[prost(message, repeated, tag = "3")] pub file_locations: Vec<FileLocationProto>,
        #[prost(message, repeated, tag = "4")] pub stack_frames: Vec<StackFrameProto>,
    }

    ModuleProfileInfo = ModuleProfileInfoFields {
        #[prost(int32, tag = "1")] pub profile_type: i32,
        #[prost(double, tag = "2")] pub relative_speedup: f64,
        #[prost(int32, tag = "3")] pub profile_source: i32,
        #[prost(int32, tag = "4")] pub compilation_event: i32,
        #[prost(string, tag = "5")] pub fingerprint: String,
        #[prost(int32, tag = "6")] pub profile_generation_strategy: i32,
    }

    HloModuleProto = HloModuleProtoFields {
        #[prost(string, tag = "1")] pub name: String,
        #[prost(string, tag = "2")] pub entry_computation_name: String,
        #[prost(int64, tag = "6")] pub entry_computation_id: i64,
        #[prost(message, repeated, tag = "3")] pub computations: Vec<HloComputationProto>,
        #[prost(message, optional, tag = "4")] pub host_program_shape: Option<ProgramShapeProto>,
        #[prost(int64, tag = "5")] pub id: i64,
        #[prost(message, optional, tag = "7")] pub schedule: Option<HloScheduleProto>,
        #[prost(message, optional, tag = "8")] pub input_output_alias: Option<HloInputOutputAliasProto>,
        #[prost(message, optional, tag = "18")] pub buffer_donor: Option<HloBufferDonorProto>,
        #[prost(message, repeated, tag = "10")] pub cross_program_prefetches: Vec<CrossProgramPrefetch>,
        #[prost(bool, tag = "11")] pub is_dynamic: bool,
        #[prost(message, optional, tag = "12")] pub spmd_output_sharding: Option<OpSharding>,
        #[prost(message, repeated, tag = "14")] pub spmd_parameters_shardings: Vec<OpSharding>,
        #[prost(bool, tag = "16")] pub use_auto_spmd_partitioning: bool,
        #[prost(message, repeated, tag = "13")] pub profile_info: Vec<ModuleProfileInfo>,
        #[prost(message, optional, tag = "15")] pub device_assignment: Option<DeviceAssignmentProto>,
        #[prost(message, optional, tag = "17")] pub stack_frame_index: Option<StackFrameIndexProto>,
        #[prost(message, optional, tag = "19")] pub frontend_attributes: Option<FrontendAttributes>,
        #[prost(message, optional, tag = "20")] pub original_value_recovery_table: Option<OriginalValueRecoveryTableProto>,
        #[prost(message, repeated, tag = "24")] pub debug_attributes: Vec<DebugAttributeTableEntryProto>,
        /// The table `Payload.id`s index (kept as bytes, as the fields the
        /// IR does not model).
        #[prost(bytes = "vec", repeated, tag = "22")] pub payloads: Vec<Vec<u8>>,
    }

    /// One key of the header's `debug_attributes={...}`: an original array
    /// and what `xla.debug.Log` calls ask of it.
    DebugAttributeTableEntryProto = DebugAttributeTableEntryProtoFields {
        #[prost(message, optional, tag = "1")] pub original_array: Option<OriginalArrayProto>,
        #[prost(message, repeated, tag = "2")] pub debug_attributes: Vec<DebugAttributesProto>,
    }

    DebugAttributesProto = DebugAttributesProtoFields {
        /// XLA's `DebugLogModeProto`: 0 none, 1 default, 2 fusion_debugger,
        /// 3 no_fusion, 4 guaranteed.
        #[prost(int32, tag = "1")] pub log_mode: i32,
        #[prost(int64, tag = "2")] pub callback_id: i64,
        #[prost(int64, tag = "3")] pub op_id: i64,
        #[prost(bool, tag = "4")] pub partitioned: bool,
        #[prost(string, tag = "5")] pub operands_sharding: String,
    }

    /// `origin_recovery_table=` of the module header: which original array
    /// a new one stands for, and the module that recovers it.
    OriginalValueRecoveryTableEntry = OriginalValueRecoveryTableEntryFields {
        #[prost(message, optional, tag = "1")] pub old_original_array: Option<OriginalArrayProto>,
        #[prost(message, optional, tag = "2")] pub new_original_array: Option<OriginalArrayProto>,
        #[prost(message, optional, boxed, tag = "3")] pub recovery_module: Option<Box<HloModuleProto>>,
    }

    OriginalValueRecoveryTableProto = OriginalValueRecoveryTableProtoFields {
        #[prost(message, repeated, tag = "1")] pub entries: Vec<OriginalValueRecoveryTableEntry>,
    }

    /// The `HloProto` wrapper (`hlo_module` and a buffer assignment this
    /// crate keeps as unknown bytes).
    HloProto = HloProtoFields {
        #[prost(message, optional, tag = "1")] pub hlo_module: Option<HloModuleProto>,
    }

    /// The `HloSnapshot` wrapper (arguments, result and platform are kept
    /// as unknown bytes).
    HloSnapshot = HloSnapshotFields {
        #[prost(message, optional, tag = "1")] pub hlo: Option<HloProto>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags<M: Known>() -> Vec<u32> {
        M::known_tags()
            .iter()
            .enumerate()
            .filter(|(_, &k)| k)
            .map(|(i, _)| i as u32)
            .collect()
    }

    #[test]
    fn probing_finds_exactly_the_declared_tags() {
        assert_eq!(tags::<ShapeProtoFields>(), vec![2, 3, 4, 5, 6]);
        assert_eq!(tags::<FrontendAttributesFields>(), vec![1]);
        assert_eq!(tags::<ResultAccuracyFields>(), vec![1, 2]);
        assert_eq!(
            tags::<LayoutProtoFields>(),
            vec![1, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]
        );
        assert_eq!(tags::<HloInstructionProtoFields>().len(), 82);
        assert!(tags::<HloInstructionProtoFields>().contains(&100));
        assert!(tags::<HloModuleProtoFields>().contains(&24));
        assert_eq!(tags::<HloScheduleProtoFields>(), vec![1]);
    }

    #[test]
    #[allow(clippy::field_reassign_with_default)]
    fn unknown_fields_survive_a_round_trip() {
        // ShapeProto{element_type: F32, field 99: varint 7, field 100: "ab",
        // field 101: group{field 1: 5}, field 102: fixed32}.
        let mut bytes = Vec::new();
        prost::encoding::int32::encode(2, &11, &mut bytes);
        prost::encoding::encode_key(99, WireType::Varint, &mut bytes);
        prost::encoding::encode_varint(7, &mut bytes);
        prost::encoding::encode_key(100, WireType::LengthDelimited, &mut bytes);
        bytes.extend_from_slice(&[2, b'a', b'b']);
        prost::encoding::encode_key(101, WireType::StartGroup, &mut bytes);
        prost::encoding::encode_key(1, WireType::Varint, &mut bytes);
        bytes.push(5);
        prost::encoding::encode_key(101, WireType::EndGroup, &mut bytes);
        prost::encoding::encode_key(102, WireType::ThirtyTwoBit, &mut bytes);
        bytes.extend_from_slice(&[1, 2, 3, 4]);
        let shape = ShapeProto::decode(&bytes[..]).unwrap();
        assert_eq!(shape.element_type, 11);
        assert_eq!(shape.encode_to_vec(), bytes);
        // Nested: the unknown bytes of a nested message come back too.
        let mut instr = HloInstructionProto::default();
        instr.shape = Some(shape.clone());
        let again = HloInstructionProto::decode(&instr.encode_to_vec()[..]).unwrap();
        assert_eq!(again.shape.as_ref(), Some(&shape));
    }

    #[test]
    fn truncated_unknown_fields_are_errors() {
        let mut bytes = Vec::new();
        prost::encoding::encode_key(100, WireType::LengthDelimited, &mut bytes);
        bytes.extend_from_slice(&[5, b'a']);
        assert!(ShapeProto::decode(&bytes[..]).is_err());
        let mut bytes = Vec::new();
        prost::encoding::encode_key(101, WireType::StartGroup, &mut bytes);
        assert!(ShapeProto::decode(&bytes[..]).is_err());
    }
}
