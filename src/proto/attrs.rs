//! The proto form of every typed attribute ([`crate::ir::attrs`]), both
//! ways: `from_*` reads the proto's fields into the IR's value, `to_*`
//! writes the value into the proto's fields. Nothing here reads or writes
//! text.

// Messages are `Ext` wrappers (known fields behind `Deref`), which struct
// literals cannot fill: fields are set one by one.
#![allow(clippy::field_reassign_with_default)]

use super::messages as pb;
use crate::ir::attrs::*;
use crate::ir::SharedStr;

fn shared(s: &str) -> SharedStr {
    SharedStr::from(s)
}

pub fn from_window(w: &pb::Window) -> Window {
    Window {
        dims: w
            .dimensions
            .iter()
            .map(|d| WindowDim {
                size: d.size,
                stride: d.stride,
                pad_low: d.padding_low,
                pad_high: d.padding_high,
                base_dilation: d.base_dilation,
                window_dilation: d.window_dilation,
                reversal: d.window_reversal,
            })
            .collect(),
    }
}

pub fn to_window(w: &Window) -> pb::Window {
    let mut p = pb::Window::default();
    p.dimensions = w
        .dims
        .iter()
        .map(|d| {
            let mut x = pb::WindowDimension::default();
            x.size = d.size;
            x.stride = d.stride;
            x.padding_low = d.pad_low;
            x.padding_high = d.pad_high;
            x.base_dilation = d.base_dilation;
            x.window_dilation = d.window_dilation;
            x.window_reversal = d.reversal;
            x
        })
        .collect();
    p
}

pub fn from_padding(p: &pb::PaddingConfig) -> Vec<PaddingDim> {
    p.dimensions
        .iter()
        .map(|d| PaddingDim {
            low: d.edge_padding_low,
            high: d.edge_padding_high,
            interior: d.interior_padding,
        })
        .collect()
}

pub fn to_padding(dims: &[PaddingDim]) -> pb::PaddingConfig {
    let mut p = pb::PaddingConfig::default();
    p.dimensions = dims
        .iter()
        .map(|d| {
            let mut x = pb::PaddingConfigDimension::default();
            x.edge_padding_low = d.low;
            x.edge_padding_high = d.high;
            x.interior_padding = d.interior;
            x
        })
        .collect();
    p
}

pub fn from_slice(dims: &[pb::SliceDimensions]) -> Vec<SliceDim> {
    dims.iter()
        .map(|d| SliceDim {
            start: d.start,
            limit: d.limit,
            stride: d.stride,
        })
        .collect()
}

pub fn to_slice(dims: &[SliceDim]) -> Vec<pb::SliceDimensions> {
    dims.iter()
        .map(|d| {
            let mut x = pb::SliceDimensions::default();
            x.start = d.start;
            x.limit = d.limit;
            x.stride = d.stride;
            x
        })
        .collect()
}

pub fn from_conv_dims(d: &pb::ConvolutionDimensionNumbers) -> ConvDims {
    ConvDims {
        input_batch: d.input_batch_dimension,
        input_feature: d.input_feature_dimension,
        input_spatial: d.input_spatial_dimensions.clone(),
        kernel_input_feature: d.kernel_input_feature_dimension,
        kernel_output_feature: d.kernel_output_feature_dimension,
        kernel_spatial: d.kernel_spatial_dimensions.clone(),
        output_batch: d.output_batch_dimension,
        output_feature: d.output_feature_dimension,
        output_spatial: d.output_spatial_dimensions.clone(),
    }
}

pub fn to_conv_dims(d: &ConvDims) -> pb::ConvolutionDimensionNumbers {
    let mut p = pb::ConvolutionDimensionNumbers::default();
    p.input_batch_dimension = d.input_batch;
    p.input_feature_dimension = d.input_feature;
    p.input_spatial_dimensions = d.input_spatial.clone();
    p.kernel_input_feature_dimension = d.kernel_input_feature;
    p.kernel_output_feature_dimension = d.kernel_output_feature;
    p.kernel_spatial_dimensions = d.kernel_spatial.clone();
    p.output_batch_dimension = d.output_batch;
    p.output_feature_dimension = d.output_feature;
    p.output_spatial_dimensions = d.output_spatial.clone();
    p
}

/// The printed fields of an `OpMetadata`, `stack_frame_id` given (the
/// reader renumbers frames).
pub fn from_metadata(m: &pb::OpMetadata, stack_frame_id: i32) -> OpMetadata {
    OpMetadata {
        op_type: shared(&m.op_type),
        op_name: shared(&m.op_name),
        source_file: shared(&m.source_file),
        source_line: m.source_line,
        source_end_line: m.source_end_line,
        source_column: m.source_column,
        source_end_column: m.source_end_column,
        profile_type: m.profile_type.clone(),
        deduplicated_name: shared(&m.deduplicated_name),
        scheduling_name: shared(&m.scheduling_name),
        stack_frame_id,
    }
}

pub fn to_metadata(m: &OpMetadata) -> pb::OpMetadata {
    let mut p = pb::OpMetadata::default();
    metadata_into(m, &mut p);
    p
}

/// `m` into `p`, whatever `p` held, reusing its buffers (the writer's one
/// instruction message keeps its metadata's).
pub fn metadata_into(m: &OpMetadata, p: &mut pb::OpMetadata) {
    use prost::Message;
    p.clear();
    p.op_type.push_str(&m.op_type);
    p.op_name.push_str(&m.op_name);
    p.source_file.push_str(&m.source_file);
    p.source_line = m.source_line;
    p.source_end_line = m.source_end_line;
    p.source_column = m.source_column;
    p.source_end_column = m.source_end_column;
    p.profile_type.extend_from_slice(&m.profile_type);
    p.deduplicated_name.push_str(&m.deduplicated_name);
    p.scheduling_name.push_str(&m.scheduling_name);
    p.stack_frame_id = m.stack_frame_id;
}

/// The proto's map is ordered by key, as XLA prints it.
pub fn from_frontend_attributes(fa: &pb::FrontendAttributes) -> FrontendAttributes {
    FrontendAttributes {
        entries: fa.map.iter().map(|(k, v)| (shared(k), shared(v))).collect(),
    }
}

pub fn to_frontend_attributes(fa: &FrontendAttributes) -> pb::FrontendAttributes {
    let mut p = pb::FrontendAttributes::default();
    for (k, v) in &fa.entries {
        p.map.insert(k.to_string(), v.to_string());
    }
    p
}

fn sharding_type(n: i32) -> ShardingType {
    usize::try_from(n)
        .ok()
        .and_then(ShardingType::from_index)
        .unwrap_or(ShardingType::Other)
}

fn iota_from(reshape_dims: &[i64], transpose_perm: &[i32]) -> Iota {
    Iota {
        reshape_dims: reshape_dims.to_vec(),
        transpose_perm: transpose_perm.to_vec(),
    }
}

/// The identity permutation where a value has none (XLA writes one).
fn perm_of(iota: &Iota) -> Vec<i32> {
    if iota.transpose_perm.is_empty() {
        (0..iota.reshape_dims.len() as i32).collect()
    } else {
        iota.transpose_perm.clone()
    }
}

pub fn from_sharding(s: &pb::OpSharding) -> Sharding {
    Sharding {
        kind: sharding_type(s.r#type),
        tuple: s.tuple_shardings.iter().map(from_sharding).collect(),
        tile_dims: s.tile_assignment_dimensions.clone(),
        devices: s.tile_assignment_devices.clone(),
        iota: (!s.iota_reshape_dims.is_empty())
            .then(|| iota_from(&s.iota_reshape_dims, &s.iota_transpose_perm)),
        last_tile_dim_replicate: s.replicate_on_last_tile_dim,
        last_tile_dims: s.last_tile_dims.iter().map(|&t| sharding_type(t)).collect(),
        shard_group: s
            .is_shard_group
            .then_some((s.shard_group_type != 0, s.shard_group_id)),
        metadata: s
            .metadata
            .iter()
            .map(|m| from_metadata(m, m.stack_frame_id))
            .collect(),
    }
}

pub fn to_sharding(s: &Sharding) -> pb::OpSharding {
    let mut p = pb::OpSharding::default();
    p.r#type = s.kind.index() as i32;
    p.tuple_shardings = s.tuple.iter().map(to_sharding).collect();
    p.tile_assignment_dimensions = s.tile_dims.clone();
    p.tile_assignment_devices = s.devices.clone();
    if let Some(iota) = &s.iota {
        p.iota_reshape_dims = iota.reshape_dims.clone();
        p.iota_transpose_perm = perm_of(iota);
    }
    p.replicate_on_last_tile_dim = s.last_tile_dim_replicate;
    p.last_tile_dims = s.last_tile_dims.iter().map(|t| t.index() as i32).collect();
    if let Some((like, id)) = s.shard_group {
        p.is_shard_group = true;
        p.shard_group_type = i32::from(like);
        p.shard_group_id = id;
    }
    p.metadata = s.metadata.iter().map(to_metadata).collect();
    p
}

/// Where an instruction's replica groups are: its mesh form, its iota
/// form (in either of the fields XLA has used), or its explicit groups.
pub fn from_replica_groups(p: &pb::HloInstructionProto) -> ReplicaGroups {
    if let Some(m) = &p.mesh_axes_replica_group_list {
        let ids = m.mesh.as_ref().map(|m| &m.device_ids[..]).unwrap_or(&[]);
        let devices = (!ids.is_empty()).then(|| MeshDevices::List(ids.to_vec()));
        let mesh: Vec<MeshAxis> = m
            .mesh
            .as_ref()
            .map(|m| &m.axes[..])
            .unwrap_or(&[])
            .iter()
            .map(|a| MeshAxis {
                name: shared(&a.name),
                size: a.size,
            })
            .collect();
        let axes = m
            .axes
            .iter()
            .map(|r| AxisRef {
                axis: r.mesh_axis_index,
                sub_axis: r.sub_axis_info.as_ref().map(|s| (s.pre_size, s.size)),
            })
            .collect();
        return ReplicaGroups::Mesh {
            mesh,
            devices,
            axes,
        };
    }
    let iota = p.iota_collective_device_list.as_ref().or_else(|| {
        p.collective_device_list
            .as_ref()
            .and_then(|l| l.iota_replica_group_list.as_ref())
    });
    if let Some(i) = iota {
        return ReplicaGroups::Iota {
            groups: i.num_replica_groups,
            per_group: i.num_devices_per_group,
            iota: iota_from(&i.iota_reshape_dims, &i.iota_transpose_perm),
        };
    }
    let groups: &[pb::ReplicaGroup] = match &p.collective_device_list {
        Some(l) => &l.replica_groups,
        None => &p.replica_groups,
    };
    ReplicaGroups::Explicit(groups.iter().map(|g| g.replica_ids.clone()).collect())
}

/// An error where a mesh's iota device list does not hold together.
pub fn to_replica_groups(
    r: &ReplicaGroups,
    p: &mut pb::HloInstructionProto,
) -> Result<(), super::ProtoError> {
    match r {
        ReplicaGroups::Mesh {
            mesh,
            devices,
            axes,
        } => {
            let mut m = pb::MeshAxesReplicaGroupListProto::default();
            let mut mp = pb::MeshProto::default();
            mp.axes = mesh
                .iter()
                .map(|a| {
                    let mut x = pb::MeshAxis::default();
                    x.name = a.name.to_string();
                    x.size = a.size;
                    x
                })
                .collect();
            m.axes = axes
                .iter()
                .map(|a| {
                    let mut x = pb::AxisRefProto::default();
                    x.mesh_axis_index = a.axis;
                    x.sub_axis_info = a.sub_axis.map(|(pre, size)| {
                        let mut s = pb::SubAxis::default();
                        s.pre_size = pre;
                        s.size = size;
                        s
                    });
                    x
                })
                .collect();
            if let Some(d) = devices {
                mp.device_ids = d.ids().ok_or_else(|| {
                    super::ProtoError::new(
                        "replica_groups: the mesh's device_ids iota is not valid",
                    )
                })?;
            }
            m.mesh = Some(mp);
            p.mesh_axes_replica_group_list = Some(m);
        }
        ReplicaGroups::Iota {
            groups,
            per_group,
            iota,
        } => {
            let mut x = pb::IotaReplicaGroupListProto::default();
            x.num_replica_groups = *groups;
            x.num_devices_per_group = *per_group;
            x.iota_reshape_dims = iota.reshape_dims.clone();
            x.iota_transpose_perm = perm_of(iota);
            // Where XLA writes them, and where jaxlib 0.10.2 reads them.
            p.iota_collective_device_list = Some(x);
        }
        ReplicaGroups::Explicit(groups) => {
            let mut list = pb::CollectiveDeviceListProto::default();
            list.replica_groups = groups
                .iter()
                .map(|ids| {
                    let mut g = pb::ReplicaGroup::default();
                    g.replica_ids = ids.clone();
                    g
                })
                .collect();
            p.collective_device_list = Some(list);
        }
    }
    Ok(())
}

pub fn from_pairs(pairs: &[pb::SourceTarget]) -> Vec<(i64, i64)> {
    pairs.iter().map(|st| (st.source, st.target)).collect()
}

pub fn to_pairs(pairs: &[(i64, i64)]) -> Vec<pb::SourceTarget> {
    pairs
        .iter()
        .map(|&(source, target)| {
            let mut st = pb::SourceTarget::default();
            st.source = source;
            st.target = target;
            st
        })
        .collect()
}

pub fn from_aliasing(list: &[pb::OutputOperandAliasing]) -> Vec<OutputAlias> {
    list.iter()
        .map(|x| OutputAlias {
            output_index: x.output_shape_index.clone(),
            operand: x.operand_index,
            operand_index: x.operand_shape_index.clone(),
        })
        .collect()
}

pub fn to_aliasing(list: &[OutputAlias]) -> Vec<pb::OutputOperandAliasing> {
    list.iter()
        .map(|a| {
            let mut x = pb::OutputOperandAliasing::default();
            x.output_shape_index = a.output_index.clone();
            x.operand_index = a.operand;
            x.operand_shape_index = a.operand_index.clone();
            x
        })
        .collect()
}

pub fn from_statistics(s: &pb::StatisticsViz) -> Statistics {
    Statistics {
        visualizing_index: s.stat_index_to_visualize,
        stats: s
            .statistics
            .iter()
            .map(|x| (shared(&x.stat_name), x.stat_val))
            .collect(),
    }
}

pub fn to_statistics(s: &Statistics) -> pb::StatisticsViz {
    let mut p = pb::StatisticsViz::default();
    p.stat_index_to_visualize = s.visualizing_index;
    p.statistics = s
        .stats
        .iter()
        .map(|(name, v)| {
            let mut x = pb::Statistic::default();
            x.stat_name = name.to_string();
            x.stat_val = *v;
            x
        })
        .collect();
    p
}

pub fn from_original_array(a: &pb::OriginalArrayProto) -> OriginalArray {
    OriginalArray {
        instruction: shared(&a.instruction_name),
        shape_index: a.shape_index.clone(),
    }
}

pub fn to_original_array(a: &OriginalArray) -> pb::OriginalArrayProto {
    let mut p = pb::OriginalArrayProto::default();
    p.instruction_name = a.instruction.to_string();
    p.shape_index = a.shape_index.clone();
    p
}

/// The tree of `shape`'s tuples, each array with the element of `ov` at
/// its shape index.
pub fn from_original_value(ov: &pb::OriginalValueProto, shape: &crate::ir::Shape) -> OriginalValue {
    /// `leaf` counts the arrays so far: XLA writes an element per array,
    /// in order, so the one at `leaf` is nearly always the one.
    fn node(
        ov: &pb::OriginalValueProto,
        shape: &crate::ir::Shape,
        index: &mut Vec<i64>,
        leaf: &mut usize,
    ) -> OriginalNode {
        if let crate::ir::Shape::Tuple(elems) = shape {
            let mut out = Vec::with_capacity(elems.len());
            for (i, e) in elems.iter().enumerate() {
                index.push(i as i64);
                out.push(node(ov, e, index, leaf));
                index.pop();
            }
            return OriginalNode::Tuple(out);
        }
        let element = match ov.elements.get(*leaf) {
            Some(e) if e.shape_index == *index => Some(e),
            _ => ov.elements.iter().find(|e| e.shape_index == *index),
        };
        *leaf += 1;
        OriginalNode::Array(
            element
                .and_then(|e| e.original_array.as_ref())
                .map(from_original_array),
        )
    }
    if ov.is_synthetic_call {
        return OriginalValue::SyntheticCall;
    }
    OriginalValue::Value(node(ov, shape, &mut Vec::new(), &mut 0))
}

pub fn to_original_value(v: &OriginalValue) -> pb::OriginalValueProto {
    fn node(n: &OriginalNode, index: &mut Vec<i64>, out: &mut Vec<pb::OriginalValueElementProto>) {
        match n {
            OriginalNode::Tuple(items) => {
                for (i, item) in items.iter().enumerate() {
                    index.push(i as i64);
                    node(item, index, out);
                    index.pop();
                }
            }
            OriginalNode::Array(a) => {
                let mut e = pb::OriginalValueElementProto::default();
                e.shape_index = index.clone();
                e.original_array = a.as_ref().map(to_original_array);
                out.push(e);
            }
        }
    }
    let mut p = pb::OriginalValueProto::default();
    match v {
        OriginalValue::SyntheticCall => p.is_synthetic_call = true,
        OriginalValue::Value(n) => node(n, &mut Vec::new(), &mut p.elements),
    }
    p
}

/// XLA keeps the text's `entry` (the users' side) as
/// `domain_exit_sharding` and its `exit` (the operand's side) as
/// `domain_entry_sharding`.
pub fn from_domain(p: &pb::HloInstructionProto) -> Option<Domain> {
    match (&p.domain_exit_sharding, &p.domain_entry_sharding) {
        (Some(entry), Some(exit)) => Some(Domain {
            entry: from_sharding(entry),
            exit: from_sharding(exit),
        }),
        _ => None,
    }
}

pub fn to_domain(d: &Domain, p: &mut pb::HloInstructionProto) {
    p.domain_exit_sharding = Some(to_sharding(&d.entry));
    p.domain_entry_sharding = Some(to_sharding(&d.exit));
}

pub fn from_result_accuracy(r: &pb::ResultAccuracy) -> Option<ResultAccuracy> {
    match (&r.tolerance, r.mode) {
        (Some(t), _) => Some(ResultAccuracy::Tolerance {
            atol: t.atol,
            rtol: t.rtol,
            ulps: t.ulps,
        }),
        // Only `highest` prints (XLA's `ResultAccuracyToString`).
        (None, Some(1)) => Some(ResultAccuracy::Mode(1)),
        _ => None,
    }
}

pub fn to_result_accuracy(r: &ResultAccuracy) -> pb::ResultAccuracy {
    let mut p = pb::ResultAccuracy::default();
    match r {
        ResultAccuracy::Tolerance { atol, rtol, ulps } => {
            let mut t = pb::Tolerance::default();
            t.atol = *atol;
            t.rtol = *rtol;
            t.ulps = *ulps;
            p.tolerance = Some(t);
        }
        ResultAccuracy::Mode(m) => p.mode = Some(*m),
    }
    p
}

/// A proto enum's value by number; out of range: `default`.
pub fn enum_of<T: Copy>(from_index: fn(usize) -> Option<T>, n: i32, default: T) -> T {
    usize::try_from(n)
        .ok()
        .and_then(from_index)
        .unwrap_or(default)
}

pub fn from_input_output_alias(p: &pb::HloInputOutputAliasProto) -> Vec<InputOutputAlias> {
    p.entries
        .iter()
        .map(|e| InputOutputAlias {
            output_index: e.output_shape_index.clone(),
            parameter: e.parameter_number,
            parameter_index: e.parameter_shape_index.clone(),
            must_alias: e.kind == 2,
        })
        .collect()
}

/// XLA's `Kind`: 1 may-alias, 2 must-alias.
pub fn to_input_output_alias(list: &[InputOutputAlias]) -> pb::HloInputOutputAliasProto {
    let mut p = pb::HloInputOutputAliasProto::default();
    p.entries = list
        .iter()
        .map(|a| {
            let mut e = pb::AliasEntryProto::default();
            e.output_shape_index = a.output_index.clone();
            e.parameter_number = a.parameter;
            e.parameter_shape_index = a.parameter_index.clone();
            e.kind = if a.must_alias { 2 } else { 1 };
            e
        })
        .collect();
    p
}

pub fn from_buffer_donor(p: &pb::HloBufferDonorProto) -> Vec<BufferDonor> {
    p.entries
        .iter()
        .map(|e| BufferDonor {
            parameter: e.parameter_number,
            parameter_index: e.parameter_shape_index.clone(),
        })
        .collect()
}

pub fn to_buffer_donor(list: &[BufferDonor]) -> pb::HloBufferDonorProto {
    let mut p = pb::HloBufferDonorProto::default();
    p.entries = list
        .iter()
        .map(|d| {
            let mut e = pb::BufferDonorEntryProto::default();
            e.parameter_number = d.parameter;
            e.parameter_shape_index = d.parameter_index.clone();
            e
        })
        .collect();
    p
}

/// `None` if the text cannot say all of it (an entry without an array, a
/// log mode or fields of a newer XLA): then the bytes are kept instead.
pub fn from_debug_attributes(
    table: &[pb::DebugAttributeTableEntryProto],
) -> Option<Vec<DebugAttributeEntry>> {
    let entry = |e: &pb::DebugAttributeTableEntryProto| {
        let array = e.original_array.as_ref()?;
        if !e.unknown.is_empty() || !array.unknown.is_empty() {
            return None;
        }
        let sets = e.debug_attributes.iter().map(|d| {
            if !d.unknown.is_empty() {
                return None;
            }
            Some(DebugAttributeSet {
                log_mode: LogMode::from_number(d.log_mode)?,
                callback_id: d.callback_id,
                op_id: d.op_id,
                partitioned: d.partitioned,
                operands_sharding: d.operands_sharding.clone(),
            })
        });
        Some(DebugAttributeEntry {
            instruction_name: array.instruction_name.clone(),
            shape_index: array.shape_index.clone(),
            sets: sets.collect::<Option<_>>()?,
        })
    };
    table.iter().map(entry).collect()
}

pub fn to_debug_attributes(
    table: &[DebugAttributeEntry],
) -> Vec<pb::DebugAttributeTableEntryProto> {
    table
        .iter()
        .map(|e| {
            let mut array = pb::OriginalArrayProto::default();
            array.instruction_name = e.instruction_name.clone();
            array.shape_index = e.shape_index.clone();
            let mut x = pb::DebugAttributeTableEntryProto::default();
            x.original_array = Some(array);
            x.debug_attributes = e
                .sets
                .iter()
                .map(|d| {
                    let mut s = pb::DebugAttributesProto::default();
                    s.log_mode = d.log_mode.number();
                    s.callback_id = d.callback_id;
                    s.op_id = d.op_id;
                    s.partitioned = d.partitioned;
                    s.operands_sharding = d.operands_sharding.clone();
                    s
                })
                .collect();
            x
        })
        .collect()
}
