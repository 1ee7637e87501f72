//! The attributes of each op family, in the order XLA prints them: array
//! ops, dots and convolutions (dimension numbers, window, precision),
//! gather and scatter, custom calls, collectives, and the rest.

use super::attrs;
use super::err;
use super::messages::*;
use super::read_computation::{PVal, Reader};
use super::read_instruction::{push_range, Attrs, OperandInfo};
use super::read_literal::literal_from_proto;
use super::read_shape::shape_from_proto;
use super::ProtoError;
use crate::ir::attrs::{
    typed, CustomCallSchedule, DotAlgorithm, FftType, FusionKind, Precision, RandomDistribution,
    RngAlgorithm, Transpose as TransposeKind,
};
use crate::ir::instruction::{ApiVersion, AttrValue, ComparisonDirection, ComparisonType};
use crate::ir::{Opcode, Payload, PrimitiveType};

/// `key=true` where `set`; a proto's `false` is its default, not printed.
fn flag(a: &mut Attrs<'_>, key: &'static str, set: bool) {
    if set {
        a.val(key, AttrValue::Bool(true));
    }
}

fn ints(a: &mut Attrs<'_>, key: &'static str, v: &[i64]) {
    a.val(key, AttrValue::Ints(v.into()));
}

/// A list XLA leaves unprinted when it is empty.
fn ints_unless_empty(a: &mut Attrs<'_>, key: &'static str, v: &[i64]) {
    if !v.is_empty() {
        ints(a, key, v);
    }
}

fn dimensions_attr(a: &mut Attrs<'_>, p: &HloInstructionProto) {
    a.list
        .push(("dimensions", PVal::Ints(p.dimensions.as_slice().into())));
}

fn aliasing_attr(a: &mut Attrs<'_>, p: &HloInstructionProto) {
    if !p.output_operand_aliasing.is_empty() {
        a.val(
            "output_to_operand_aliasing",
            AttrValue::Aliasing(typed(attrs::from_aliasing(&p.output_operand_aliasing))),
        );
    }
}

/// Only channels of positive ids are printed.
fn channel_id_attr(a: &mut Attrs<'_>, p: &HloInstructionProto) {
    if p.channel_id > 0 {
        a.val("channel_id", AttrValue::Int(p.channel_id));
    }
}

pub(super) fn parameter_attrs(a: &mut Attrs<'_>, p: &HloInstructionProto) -> Payload {
    if let Some(r) = &p.parameter_replication {
        if !r.replicated_at_leaf_buffers.is_empty() {
            a.val(
                "parameter_replication",
                AttrValue::Bools(r.replicated_at_leaf_buffers.clone().into()),
            );
        }
    }
    Payload::Parameter(p.parameter_number)
}

/// The direction, and the comparison type unless it is the default for
/// the operands' element type.
pub(super) fn compare_attrs(
    a: &mut Attrs<'_>,
    p: &HloInstructionProto,
    operand_type: Option<i32>,
) -> Result<(), ProtoError> {
    let d = ComparisonDirection::from_name(&p.comparison_direction).ok_or_else(|| {
        ProtoError::new(format!(
            "unknown comparison direction \"{}\"",
            p.comparison_direction
        ))
    })?;
    a.list.push(("direction", PVal::Direction(d)));
    if !p.comparison_type.is_empty() {
        let t = ComparisonType::from_name(&p.comparison_type).ok_or_else(|| {
            ProtoError::new(format!("unknown comparison type \"{}\"", p.comparison_type))
        })?;
        let default = operand_type
            .and_then(PrimitiveType::from_number)
            .map(ComparisonType::default_for);
        if Some(t) != default {
            a.list.push(("type", PVal::CompareType(t)));
        }
    }
    Ok(())
}

/// Ops that index, reorder or cut arrays: dimensions, slices, padding.
pub(super) fn array_op_attrs(a: &mut Attrs<'_>, opcode: Opcode, p: &HloInstructionProto) {
    use Opcode::*;
    match opcode {
        Iota => a.list.push((
            "iota_dimension",
            PVal::Int(*p.dimensions.first().unwrap_or(&0)),
        )),
        GetTupleElement => a.list.push(("index", PVal::Int(p.tuple_index))),
        Sort => {
            dimensions_attr(a, p);
            flag(a, "is_stable", p.is_stable);
        }
        TopK => {
            a.val("k", AttrValue::Int(p.k));
            a.val("largest", AttrValue::Bool(p.largest));
            // Newer XLA's; a proto cannot tell `false` from unset, which
            // older XLA (the corpus's) prints as nothing.
            flag(a, "is_stable", p.is_stable);
        }
        Slice => a.val(
            "slice",
            AttrValue::Slice(typed(attrs::from_slice(&p.slice_dimensions))),
        ),
        DynamicSlice => ints(a, "dynamic_slice_sizes", &p.dynamic_slice_sizes),
        Pad => {
            if let Some(pc) = &p.padding_config {
                a.val(
                    "padding",
                    AttrValue::Padding(typed(attrs::from_padding(pc))),
                );
            }
        }
        // Broadcast, Concatenate, Reverse, Transpose, Get/SetDimensionSize,
        // Reduce, Map.
        _ => dimensions_attr(a, p),
    }
}

pub(super) fn gather_attrs(a: &mut Attrs<'_>, p: &HloInstructionProto) {
    let g = p.gather_dimension_numbers.clone().unwrap_or_default();
    ints(a, "offset_dims", &g.offset_dims);
    ints(a, "collapsed_slice_dims", &g.collapsed_slice_dims);
    ints(a, "start_index_map", &g.start_index_map);
    ints_unless_empty(a, "operand_batching_dims", &g.operand_batching_dims);
    ints_unless_empty(
        a,
        "start_indices_batching_dims",
        &g.start_indices_batching_dims,
    );
    a.val("index_vector_dim", AttrValue::Int(g.index_vector_dim));
    ints(a, "slice_sizes", &p.gather_slice_sizes);
    flag(a, "indices_are_sorted", p.indices_are_sorted);
}

pub(super) fn scatter_attrs(a: &mut Attrs<'_>, p: &HloInstructionProto) {
    let s = p.scatter_dimension_numbers.clone().unwrap_or_default();
    ints(a, "update_window_dims", &s.update_window_dims);
    ints(a, "inserted_window_dims", &s.inserted_window_dims);
    ints(
        a,
        "scatter_dims_to_operand_dims",
        &s.scatter_dims_to_operand_dims,
    );
    ints_unless_empty(a, "input_batching_dims", &s.input_batching_dims);
    ints_unless_empty(
        a,
        "scatter_indices_batching_dims",
        &s.scatter_indices_batching_dims,
    );
    a.val("index_vector_dim", AttrValue::Int(s.index_vector_dim));
    flag(a, "indices_are_sorted", p.indices_are_sorted);
    flag(a, "unique_indices", p.unique_indices);
}

pub(super) fn fusion_attrs(a: &mut Attrs<'_>, p: &HloInstructionProto) -> Result<(), ProtoError> {
    let kind = FusionKind::from_name(&p.fusion_kind)
        .ok_or_else(|| ProtoError::new(format!("unknown fusion kind \"{}\"", p.fusion_kind)))?;
    a.val("kind", AttrValue::FusionKind(kind));
    aliasing_attr(a, p);
    Ok(())
}

/// The window, unless it has no dimensions (`window=` left out).
pub(super) fn window_attr(a: &mut Attrs<'_>, p: &HloInstructionProto) {
    if let Some(w) = &p.window {
        if !w.dimensions.is_empty() {
            a.val("window", AttrValue::Window(typed(attrs::from_window(w))));
        }
    }
}

pub(super) fn dot_attrs(a: &mut Attrs<'_>, p: &HloInstructionProto) {
    dot_dims(a, &p.dot_dimension_numbers.clone().unwrap_or_default());
    precision_attrs(a, p);
}

fn dot_dims(a: &mut Attrs<'_>, d: &DotDimensionNumbers) {
    ints_unless_empty(a, "lhs_batch_dims", &d.lhs_batch_dimensions);
    ints(a, "lhs_contracting_dims", &d.lhs_contracting_dimensions);
    ints_unless_empty(a, "rhs_batch_dims", &d.rhs_batch_dimensions);
    ints(a, "rhs_contracting_dims", &d.rhs_contracting_dimensions);
}

/// A ragged dot's numbers, as XLA prints them: the dot's, then the
/// ragged and group dimensions (each left out when empty).
pub(super) fn ragged_dot_attrs(a: &mut Attrs<'_>, p: &HloInstructionProto) {
    let r = p.ragged_dot_dimension_numbers.clone().unwrap_or_default();
    dot_dims(a, &r.dot_dimension_numbers.clone().unwrap_or_default());
    ints_unless_empty(a, "lhs_ragged_dims", &r.lhs_ragged_dimensions);
    ints_unless_empty(a, "rhs_group_dims", &r.rhs_group_dimensions);
    precision_attrs(a, p);
}

fn precision_attrs(a: &mut Attrs<'_>, p: &HloInstructionProto) {
    if let Some(pc) = &p.precision_config {
        if pc.operand_precision.iter().any(|&x| x != 0) {
            a.val(
                "operand_precision",
                AttrValue::Precisions(
                    pc.operand_precision
                        .iter()
                        .map(|&x| attrs::enum_of(Precision::from_index, x, Precision::Default))
                        .collect(),
                ),
            );
        }
        if pc.algorithm != 0 {
            a.val(
                "algorithm",
                AttrValue::DotAlgorithm(attrs::enum_of(
                    DotAlgorithm::from_index,
                    pc.algorithm,
                    DotAlgorithm::Unset,
                )),
            );
        }
    }
}

/// What a convolution prints, and a custom call before its target (a
/// convolution-like custom call carries the same fields): window,
/// dim_labels, group counts, operand precisions.
pub(super) fn convolution_attrs(a: &mut Attrs<'_>, p: &HloInstructionProto) {
    window_attr(a, p);
    if let Some(d) = &p.convolution_dimension_numbers {
        a.val(
            "dim_labels",
            AttrValue::ConvDims(typed(attrs::from_conv_dims(d))),
        );
    }
    if p.feature_group_count > 1 {
        a.val("feature_group_count", AttrValue::Int(p.feature_group_count));
    }
    if p.batch_group_count > 1 {
        a.val("batch_group_count", AttrValue::Int(p.batch_group_count));
    }
    precision_attrs(a, p);
}

pub(super) fn custom_call_attrs(
    a: &mut Attrs<'_>,
    p: &HloInstructionProto,
    r: &Reader<'_>,
) -> Result<(), ProtoError> {
    convolution_attrs(a, p);
    let range = push_range(a.text, |t| t.push_str(&p.custom_call_target));
    a.list.push(("custom_call_target", PVal::Str(range)));
    if p.constrain_layout {
        let shapes = p
            .operand_shapes_with_layout
            .iter()
            .map(|s| r.shape(s))
            .collect::<Result<Vec<_>, _>>()?;
        a.val(
            "operand_layout_constraints",
            AttrValue::Shapes(shapes.into()),
        );
    }
    flag(
        a,
        "custom_call_has_side_effect",
        p.custom_call_has_side_effect,
    );
    if let Some(l) = &p.literal {
        let lit = literal_from_proto(
            l,
            &shape_from_proto(&l.shape.clone().unwrap_or_default(), 0)?,
        )?;
        a.val("literal", AttrValue::Literal(typed(lit)));
    }
    aliasing_attr(a, p);
    if p.custom_call_schedule != 0 {
        a.val(
            "schedule",
            AttrValue::Schedule(attrs::enum_of(
                CustomCallSchedule::from_index,
                p.custom_call_schedule,
                CustomCallSchedule::None,
            )),
        );
    }
    let v = p.custom_call_api_version;
    let Some(api) = usize::try_from(v).ok().and_then(ApiVersion::from_index) else {
        return err(format!("unknown custom call api version {v}"));
    };
    if api != ApiVersion::Original {
        a.list.push(("api_version", PVal::ApiVersion(api)));
    }
    Ok(())
}

/// All-reduce, all-gather, reduce-scatter, all-to-all and broadcast: the
/// channel, the groups, then each op's own.
pub(super) fn collective_attrs(a: &mut Attrs<'_>, opcode: Opcode, p: &HloInstructionProto) {
    use Opcode::*;
    channel_id_attr(a, p);
    a.val(
        "replica_groups",
        AttrValue::ReplicaGroups(typed(attrs::from_replica_groups(p))),
    );
    flag(a, "constrain_layout", p.constrain_layout);
    // Then each op's own, in XLA's order: an all-gather's dimension before
    // `use_global_device_ids`, a reduce-scatter's after.
    if matches!(opcode, AllGather | AllGatherStart)
        || (opcode == AllToAll && !p.dimensions.is_empty())
    {
        dimensions_attr(a, p);
    }
    flag(a, "use_global_device_ids", p.use_global_device_ids);
    if opcode == ReduceScatter {
        dimensions_attr(a, p);
    }
    // `false` is also what a proto without the field says, and XLA before
    // the field printed nothing: leave it unprinted.
    flag(
        a,
        "has_dynamic_root",
        opcode == CollectiveBroadcast && p.has_dynamic_root,
    );
}

pub(super) fn collective_permute_attrs(
    a: &mut Attrs<'_>,
    p: &HloInstructionProto,
    operands: OperandInfo<'_>,
) -> Result<(), ProtoError> {
    channel_id_attr(a, p);
    a.val(
        "source_target_pairs",
        AttrValue::Pairs(typed(attrs::from_pairs(&p.source_target_pairs))),
    );
    if !p.dynamic_slice_sizes.is_empty() {
        let lengths = operands
            .shape(0)
            .zip(operands.shape(2))
            .and_then(|(input, starts)| {
                crate::ir::verify::permute_slice_size_lengths(input, starts)
            })
            .filter(|l| l.iter().sum::<usize>() == p.dynamic_slice_sizes.len())
            .ok_or_else(|| {
                ProtoError::new("dynamic_slice_sizes do not fit the operands' shapes")
            })?;
        let mut rest = &p.dynamic_slice_sizes[..];
        let lists = lengths
            .iter()
            .map(|&n| {
                let (list, after) = rest.split_at(n);
                rest = after;
                list.into()
            })
            .collect();
        a.val("slice_sizes", AttrValue::IntLists(lists));
    }
    Ok(())
}

pub(super) fn send_recv_attrs(a: &mut Attrs<'_>, p: &HloInstructionProto) {
    channel_id_attr(a, p);
    flag(a, "is_host_transfer", p.is_host_transfer);
}

/// Ops with numeric parameters: batch norms, reduce-precision, random
/// numbers, FFTs and the linear-algebra ops.
pub(super) fn numeric_op_attrs(a: &mut Attrs<'_>, opcode: Opcode, p: &HloInstructionProto) {
    use Opcode::*;
    match opcode {
        BatchNormTraining | BatchNormInference | BatchNormGrad => {
            a.val("epsilon", AttrValue::Float(typed(p.epsilon)));
            a.val("feature_index", AttrValue::Int(p.feature_index));
        }
        ReducePrecision => {
            a.val("exponent_bits", AttrValue::Int(p.exponent_bits.into()));
            a.val("mantissa_bits", AttrValue::Int(p.mantissa_bits.into()));
        }
        RngGetAndUpdateState | Rng | RngBitGenerator => rng_attrs(a, opcode, p),
        Cholesky => flag(
            a,
            "lower",
            p.cholesky_options.as_ref().is_some_and(|c| c.lower),
        ),
        Fft => {
            a.val(
                "fft_type",
                AttrValue::FftType(attrs::enum_of(
                    FftType::from_index,
                    p.fft_type,
                    FftType::Fft,
                )),
            );
            ints(a, "fft_length", &p.fft_length);
        }
        TriangularSolve => triangular_solve_attrs(a, p),
        _ => {}
    }
}

fn rng_attrs(a: &mut Attrs<'_>, opcode: Opcode, p: &HloInstructionProto) {
    match opcode {
        Opcode::RngGetAndUpdateState => a.val("delta", AttrValue::Int(p.delta)),
        Opcode::Rng => a.val(
            "distribution",
            AttrValue::Distribution(attrs::enum_of(
                RandomDistribution::from_index,
                p.distribution,
                RandomDistribution::Invalid,
            )),
        ),
        _ => a.val(
            "algorithm",
            AttrValue::RngAlgorithm(attrs::enum_of(
                RngAlgorithm::from_index,
                p.rng_algorithm,
                RngAlgorithm::Default,
            )),
        ),
    }
}

fn triangular_solve_attrs(a: &mut Attrs<'_>, p: &HloInstructionProto) {
    let o = p.triangular_solve_options.clone().unwrap_or_default();
    flag(a, "left_side", o.left_side);
    flag(a, "lower", o.lower);
    flag(a, "unit_diagonal", o.unit_diagonal);
    a.val(
        "transpose_a",
        AttrValue::Transpose(attrs::enum_of(
            TransposeKind::from_index,
            o.transpose_a,
            TransposeKind::Invalid,
        )),
    );
}

pub(super) fn scan_attrs(a: &mut Attrs<'_>, p: &HloInstructionProto) {
    dimensions_attr(a, p);
    a.val("num_carries", AttrValue::Int(p.num_carries));
    flag(a, "is_reverse", p.is_reverse);
    // XLA's `TriState`: unspecified is not printed.
    match p.is_associative {
        1 => a.val("is_associative", AttrValue::Bool(true)),
        2 => a.val("is_associative", AttrValue::Bool(false)),
        _ => {}
    }
}

/// The text's `entry` is the proto's exit sharding and its `exit` the
/// entry one (XLA names them by side).
pub(super) fn domain_attr(a: &mut Attrs<'_>, p: &HloInstructionProto) {
    if let Some(d) = attrs::from_domain(p) {
        a.val("domain", AttrValue::Domain(typed(d)));
    }
}

pub(super) fn async_start_attrs(a: &mut Attrs<'_>, p: &HloInstructionProto) {
    if !p.async_execution_thread.is_empty() && p.async_execution_thread != "main" {
        a.val(
            "async_execution_thread",
            AttrValue::Str(p.async_execution_thread.as_str().into()),
        );
    }
    aliasing_attr(a, p);
}

pub(super) fn result_accuracy_attr(a: &mut Attrs<'_>, ra: &ResultAccuracy) {
    if let Some(r) = attrs::from_result_accuracy(ra) {
        a.val("result_accuracy", AttrValue::ResultAccuracy(typed(r)));
    }
}
