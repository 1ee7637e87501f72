//! A typed attribute into its proto fields, by the kind of field: flags
//! and numbers, scalar fields, dimension numbers (dot, gather, scatter),
//! messages, solver options.

// Messages are `Ext` wrappers (known fields behind `Deref`), which struct
// literals cannot fill: fields are set one by one.
#![allow(clippy::field_reassign_with_default)]

use super::attrs;
use super::err;
use super::messages::*;
use super::write_instruction::{set_list, set_str};
use super::write_literal::literal_to_proto;
use super::write_shape::shape_to_proto;
use super::ProtoError;
use crate::ir::instruction::AttrValue as V;

/// A typed attribute, into its proto fields.
pub(super) fn attr_to_proto(
    p: &mut HloInstructionProto,
    key: &str,
    v: &V,
) -> Result<(), ProtoError> {
    let written = number_to_proto(p, key, v)?
        || scalar_to_proto(p, key, v)
        || dimension_numbers_to_proto(p, key, v)
        || message_to_proto(p, key, v)?
        || solver_options_to_proto(p, key, v);
    match v {
        _ if written => Ok(()),
        V::Raw(_) => err(format!("attribute {key} is not written as a proto yet")),
        _ => err(format!("attribute {key}: unexpected value")),
    }
}

/// The instruction's flag of that name, for `key=true|false`.
fn bool_field<'p>(p: &'p mut HloInstructionProto, key: &str) -> Option<&'p mut bool> {
    Some(match key {
        "is_stable" => &mut p.is_stable,
        "largest" => &mut p.largest,
        "is_composite" => &mut p.is_composite,
        "custom_call_has_side_effect" => &mut p.custom_call_has_side_effect,
        "indices_are_sorted" => &mut p.indices_are_sorted,
        "unique_indices" => &mut p.unique_indices,
        "use_global_device_ids" => &mut p.use_global_device_ids,
        "constrain_layout" => &mut p.constrain_layout,
        "is_host_transfer" => &mut p.is_host_transfer,
        "is_reverse" => &mut p.is_reverse,
        "has_dynamic_root" => &mut p.has_dynamic_root,
        _ => return None,
    })
}

/// The instruction's int64 field of that name.
fn int_field<'p>(p: &'p mut HloInstructionProto, key: &str) -> Option<&'p mut i64> {
    Some(match key {
        "k" => &mut p.k,
        "feature_index" => &mut p.feature_index,
        "channel_id" => &mut p.channel_id,
        "feature_group_count" => &mut p.feature_group_count,
        "batch_group_count" => &mut p.batch_group_count,
        "num_carries" => &mut p.num_carries,
        "delta" => &mut p.delta,
        _ => return None,
    })
}

/// Flags and numbers; whether `key` is one.
fn number_to_proto(p: &mut HloInstructionProto, key: &str, v: &V) -> Result<bool, ProtoError> {
    let int32 = |x: i64| {
        i32::try_from(x).map_err(|_| ProtoError::new(format!("attribute {key}={x}: out of range")))
    };
    match (key, v) {
        // XLA's `TriState`.
        ("is_associative", V::Bool(b)) => p.is_associative = if *b { 1 } else { 2 },
        ("exponent_bits", V::Int(x)) => p.exponent_bits = int32(*x)?,
        ("mantissa_bits", V::Int(x)) => p.mantissa_bits = int32(*x)?,
        ("cross_program_prefetch_index", V::Int(x)) => {
            p.cross_program_prefetch_index = Some(int32(*x)?)
        }
        ("epsilon", V::Float(f)) => p.epsilon = *f.value(),
        (_, V::Bool(b)) => match bool_field(p, key) {
            Some(field) => *field = *b,
            None => return Ok(false),
        },
        (_, V::Int(x)) => match int_field(p, key) {
            Some(field) => *field = *x,
            None => return Ok(false),
        },
        _ => return Ok(false),
    }
    Ok(true)
}

/// Enums, lists, shapes and strings of a field each; whether `key` is one.
fn scalar_to_proto(p: &mut HloInstructionProto, key: &str, v: &V) -> bool {
    match (key, v) {
        ("algorithm", V::RngAlgorithm(a)) if p.opcode == "rng-bit-generator" => {
            p.rng_algorithm = a.index() as i32
        }
        ("distribution", V::Distribution(d)) => p.distribution = d.index() as i32,
        ("kind", V::FusionKind(k)) => set_str(&mut p.fusion_kind, k.name()),
        ("dynamic_slice_sizes", V::Ints(v)) => set_list(&mut p.dynamic_slice_sizes, v),
        // An in-place collective permute's lists, flattened (its reader
        // splits them by the operands' shapes).
        ("slice_sizes", V::IntLists(lists)) => p.dynamic_slice_sizes = lists.concat(),
        ("slice_sizes", V::Ints(v)) => set_list(&mut p.gather_slice_sizes, v),
        ("fft_length", V::Ints(v)) => p.fft_length = v.to_vec(),
        ("fft_type", V::FftType(t)) => p.fft_type = t.index() as i32,
        ("outfeed_shape", V::Shape(s)) => p.outfeed_shape = Some(shape_to_proto(s)),
        ("outfeed_config", V::Str(s)) => p.outfeed_config = s.as_bytes().to_vec(),
        ("infeed_config", V::Str(s)) => p.infeed_config = s.as_bytes().to_vec(),
        ("async_execution_thread", V::Str(s)) => p.async_execution_thread = s.to_string(),
        ("schedule", V::Schedule(s)) => p.custom_call_schedule = s.index() as i32,
        _ => return false,
    }
    true
}

/// The dimension numbers of dots, gathers and scatters; whether `key` is
/// one of them.
fn dimension_numbers_to_proto(p: &mut HloInstructionProto, key: &str, v: &V) -> bool {
    let is_gather = p.opcode == "gather";
    match (key, v) {
        ("index_vector_dim", V::Int(x)) if is_gather => {
            p.gather_dimension_numbers
                .get_or_insert_with(Default::default)
                .index_vector_dim = *x
        }
        ("index_vector_dim", V::Int(x)) => {
            p.scatter_dimension_numbers
                .get_or_insert_with(Default::default)
                .index_vector_dim = *x
        }
        (_, V::Ints(v)) => {
            let Some(field) = dims_field(p, key, is_gather) else {
                return false;
            };
            *field = v.to_vec();
        }
        _ => return false,
    }
    true
}

/// The list of dot dimension numbers `key` names.
fn dot_dims_field<'d>(d: &'d mut DotDimensionNumbers, key: &str) -> Option<&'d mut Vec<i64>> {
    Some(match key {
        "lhs_contracting_dims" => &mut d.lhs_contracting_dimensions,
        "rhs_contracting_dims" => &mut d.rhs_contracting_dimensions,
        "lhs_batch_dims" => &mut d.lhs_batch_dimensions,
        "rhs_batch_dims" => &mut d.rhs_batch_dimensions,
        _ => return None,
    })
}

/// The list of dot, gather or scatter dimension numbers `key` names.
fn dims_field<'p>(
    p: &'p mut HloInstructionProto,
    key: &str,
    is_gather: bool,
) -> Option<&'p mut Vec<i64>> {
    // A ragged dot's numbers are a message of their own, holding a dot's.
    if p.opcode == "ragged-dot" {
        let r = p
            .ragged_dot_dimension_numbers
            .get_or_insert_with(Default::default);
        return match key {
            "lhs_ragged_dims" => Some(&mut r.lhs_ragged_dimensions),
            "rhs_group_dims" => Some(&mut r.rhs_group_dimensions),
            _ => dot_dims_field(
                r.dot_dimension_numbers.get_or_insert_with(Default::default),
                key,
            ),
        };
    }
    match key {
        "lhs_contracting_dims" | "rhs_contracting_dims" | "lhs_batch_dims" | "rhs_batch_dims" => {
            dot_dims_field(
                p.dot_dimension_numbers.get_or_insert_with(Default::default),
                key,
            )
        }
        "offset_dims"
        | "collapsed_slice_dims"
        | "start_index_map"
        | "operand_batching_dims"
        | "start_indices_batching_dims"
            if is_gather =>
        {
            let g = p
                .gather_dimension_numbers
                .get_or_insert_with(Default::default);
            Some(match key {
                "offset_dims" => &mut g.offset_dims,
                "collapsed_slice_dims" => &mut g.collapsed_slice_dims,
                "start_index_map" => &mut g.start_index_map,
                "operand_batching_dims" => &mut g.operand_batching_dims,
                _ => &mut g.start_indices_batching_dims,
            })
        }
        "update_window_dims"
        | "inserted_window_dims"
        | "scatter_dims_to_operand_dims"
        | "input_batching_dims"
        | "scatter_indices_batching_dims" => {
            let s = p
                .scatter_dimension_numbers
                .get_or_insert_with(Default::default);
            Some(match key {
                "update_window_dims" => &mut s.update_window_dims,
                "inserted_window_dims" => &mut s.inserted_window_dims,
                "scatter_dims_to_operand_dims" => &mut s.scatter_dims_to_operand_dims,
                "input_batching_dims" => &mut s.input_batching_dims,
                _ => &mut s.scatter_indices_batching_dims,
            })
        }
        _ => None,
    }
}

/// Attributes with messages of their own (or several fields); whether
/// `key` is one.
fn message_to_proto(p: &mut HloInstructionProto, key: &str, v: &V) -> Result<bool, ProtoError> {
    match (key, v) {
        ("metadata", V::Metadata(m)) => {
            attrs::metadata_into(m, p.metadata.get_or_insert_with(Default::default))
        }
        ("frontend_attributes", V::FrontendAttributes(fa)) => {
            p.frontend_attributes = Some(attrs::to_frontend_attributes(fa))
        }
        ("sharding", V::Sharding(s)) => p.sharding = Some(attrs::to_sharding(s)),
        ("slice", V::Slice(s)) => p.slice_dimensions = attrs::to_slice(s),
        ("padding", V::Padding(d)) => p.padding_config = Some(attrs::to_padding(d)),
        ("window", V::Window(w)) => p.window = Some(attrs::to_window(w)),
        ("source_target_pairs", V::Pairs(pairs)) => p.source_target_pairs = attrs::to_pairs(pairs),
        ("replica_groups", V::ReplicaGroups(r)) => attrs::to_replica_groups(r, p)?,
        ("operand_layout_constraints", V::Shapes(shapes)) => {
            p.constrain_layout = true;
            p.operand_shapes_with_layout = shapes.iter().map(shape_to_proto).collect();
        }
        ("operand_precision", V::Precisions(v)) => {
            p.precision_config
                .get_or_insert_with(Default::default)
                .operand_precision = v.iter().map(|x| x.index() as i32).collect()
        }
        ("algorithm", V::DotAlgorithm(a)) => {
            p.precision_config
                .get_or_insert_with(Default::default)
                .algorithm = a.index() as i32
        }
        ("parameter_replication", V::Bools(v)) => {
            let mut r = ParameterReplication::default();
            r.replicated_at_leaf_buffers = v.to_vec();
            p.parameter_replication = Some(r);
        }
        ("output_to_operand_aliasing", V::Aliasing(a)) => {
            p.output_operand_aliasing = attrs::to_aliasing(a)
        }
        ("statistics", V::Statistics(s)) => p.statistics_viz = Some(attrs::to_statistics(s)),
        ("dim_labels", V::ConvDims(d)) => {
            p.convolution_dimension_numbers = Some(attrs::to_conv_dims(d))
        }
        ("literal", V::Literal(l)) => p.literal = Some(literal_to_proto(l)),
        ("origin", V::OriginalValue(o)) => p.original_value = Some(attrs::to_original_value(o)),
        ("domain", V::Domain(d)) => attrs::to_domain(d, p),
        ("result_accuracy", V::ResultAccuracy(r)) => {
            p.result_accuracy = Some(attrs::to_result_accuracy(r))
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// Cholesky's and triangular-solve's options; whether `key` is one.
fn solver_options_to_proto(p: &mut HloInstructionProto, key: &str, v: &V) -> bool {
    match (key, v) {
        ("lower", V::Bool(b)) if p.opcode == "cholesky" => {
            p.cholesky_options
                .get_or_insert_with(Default::default)
                .lower = *b
        }
        ("left_side" | "lower" | "unit_diagonal", V::Bool(b)) => {
            let o = p
                .triangular_solve_options
                .get_or_insert_with(Default::default);
            match key {
                "left_side" => o.left_side = *b,
                "lower" => o.lower = *b,
                _ => o.unit_diagonal = *b,
            }
        }
        ("transpose_a", V::Transpose(t)) => {
            p.triangular_solve_options
                .get_or_insert_with(Default::default)
                .transpose_a = t.index() as i32
        }
        _ => return false,
    }
    true
}
