//! What each opcode takes, as XLA's parser and `CreateInstruction` check
//! it: its operand count and the attributes it may and must carry. Both
//! fronts hold a module to it (the text parser as it reads, the verifier
//! for every module).

use super::Opcode;

/// Attributes every instruction may carry.
pub const COMMON_ATTRS: &[&str] = &[
    "metadata",
    "sharding",
    "frontend_attributes",
    "backend_config",
    "origin",
    "statistics",
    "control-predecessors",
    "parameter_replication",
];

const ALL_GATHER: &[&str] = &[
    "replica_groups",
    "channel_id",
    "dimensions",
    "constrain_layout",
    "use_global_device_ids",
];
const ALL_REDUCE: &[&str] = &[
    "to_apply",
    "replica_groups",
    "channel_id",
    "constrain_layout",
    "use_global_device_ids",
    "mode",
];
const REDUCE_SCATTER: &[&str] = &[
    "to_apply",
    "replica_groups",
    "channel_id",
    "constrain_layout",
    "use_global_device_ids",
    "mode",
    "dimensions",
];
const CHANNEL: &[&str] = &["channel_id", "is_host_transfer"];
const BATCH_NORM: &[&str] = &["epsilon", "feature_index"];
const DOT: &[&str] = &[
    "lhs_contracting_dims",
    "rhs_contracting_dims",
    "lhs_batch_dims",
    "rhs_batch_dims",
    "operand_precision",
    "algorithm",
];
const DIMENSIONS: &[&str] = &["dimensions"];
const TO_APPLY_DIMENSIONS: &[&str] = &["to_apply", "dimensions"];
const RESULT_ACCURACY: &[&str] = &["result_accuracy"];

/// The attributes an opcode takes besides [`COMMON_ATTRS`] (XLA's
/// `CreateInstruction`). `pred_branch`: the first operand of a conditional
/// is a `pred[]`, so it takes `true_computation`/`false_computation`.
pub fn specific_attrs(op: Opcode, pred_branch: bool) -> &'static [&'static str] {
    use Opcode::*;
    match op {
        Iota => &["iota_dimension"],
        TopK => &["k", "largest", "is_stable"],
        Expm1 | Log | Log1p | Logistic | Sqrt | Cbrt | Rsqrt | Tanh | Erf | Sin | Cos | Tan
        | Exp => RESULT_ACCURACY,
        AllGather | AllGatherStart => ALL_GATHER,
        AllReduce | AllReduceStart => ALL_REDUCE,
        ReduceScatter => REDUCE_SCATTER,
        AllToAll => &[
            "replica_groups",
            "channel_id",
            "dimensions",
            "constrain_layout",
        ],
        RaggedAllToAll => &["replica_groups", "channel_id", "dimensions"],
        CollectiveBroadcast => &["replica_groups", "channel_id", "has_dynamic_root"],
        CollectivePermute | CollectivePermuteStart => {
            &["source_target_pairs", "channel_id", "slice_sizes"]
        }
        CopyStart => &["cross_program_prefetch_index"],
        Reshape => &["inferred_dimension"],
        Sort => &["dimensions", "is_stable", "to_apply"],
        While => &["condition", "body"],
        Recv | RecvDone | Send | SendDone => CHANNEL,
        GetTupleElement => &["index"],
        Call => &["to_apply", "is_composite"],
        ReduceWindow => &["window", "to_apply"],
        Convolution => &[
            "window",
            "dim_labels",
            "feature_group_count",
            "batch_group_count",
            "convolution_kind",
            "operand_precision",
            "sparsity_config",
        ],
        Fft => &["fft_type", "fft_length"],
        TriangularSolve => &["left_side", "lower", "unit_diagonal", "transpose_a"],
        Compare => &["direction", "type"],
        Cholesky => &["lower"],
        Broadcast | Concatenate | Reverse | Transpose | GetDimensionSize | SetDimensionSize => {
            DIMENSIONS
        }
        Map | Reduce => TO_APPLY_DIMENSIONS,
        Scan => &[
            "to_apply",
            "dimensions",
            "num_carries",
            "is_reverse",
            "is_associative",
        ],
        SelectAndScatter => &["select", "scatter", "window"],
        Slice => &["slice"],
        DynamicSlice => &["dynamic_slice_sizes"],
        BatchNormTraining | BatchNormInference | BatchNormGrad => BATCH_NORM,
        Pad => &["padding"],
        Fusion => &["calls", "kind", "output_to_operand_aliasing"],
        Infeed => &["infeed_config"],
        Outfeed => &["outfeed_config", "outfeed_shape"],
        Rng => &["distribution"],
        RngGetAndUpdateState => &["delta"],
        RngBitGenerator => &["algorithm"],
        ReducePrecision => &["exponent_bits", "mantissa_bits"],
        Conditional if pred_branch => &["true_computation", "false_computation"],
        Conditional => &["branch_computations"],
        CustomCall => &[
            "custom_call_target",
            "window",
            "dim_labels",
            "feature_group_count",
            "batch_group_count",
            "operand_layout_constraints",
            "custom_call_has_side_effect",
            "to_apply",
            "called_computations",
            "output_to_operand_aliasing",
            "padding_type",
            "literal",
            "operand_precision",
            "schedule",
            "api_version",
        ],
        Dot | ScaledDot => DOT,
        RaggedDot => &[
            "lhs_contracting_dims",
            "rhs_contracting_dims",
            "lhs_batch_dims",
            "rhs_batch_dims",
            "lhs_ragged_dims",
            "rhs_group_dims",
            "operand_precision",
        ],
        Gather => &[
            "offset_dims",
            "collapsed_slice_dims",
            "start_index_map",
            "index_vector_dim",
            "slice_sizes",
            "indices_are_sorted",
            "operand_batching_dims",
            "start_indices_batching_dims",
        ],
        Scatter => &[
            "update_window_dims",
            "inserted_window_dims",
            "scatter_dims_to_operand_dims",
            "index_vector_dim",
            "to_apply",
            "indices_are_sorted",
            "unique_indices",
            "input_batching_dims",
            "scatter_indices_batching_dims",
        ],
        Domain => &["domain"],
        // Async ops are handled by `attr_allowed`; the rest take nothing.
        _ => &[],
    }
}

/// Whether `key` may be written on an instruction (XLA's "unexpected
/// attribute" check). `wrapped` is the op of `<op>-start/-update/-done`.
pub fn attr_allowed(op: Opcode, wrapped: Option<Opcode>, pred_branch: bool, key: &str) -> bool {
    if COMMON_ATTRS.contains(&key) {
        return true;
    }
    match op {
        Opcode::AsyncStart => {
            key == "async_execution_thread"
                || key == "output_to_operand_aliasing"
                || match wrapped {
                    Some(w) => specific_attrs(w, false).contains(&key),
                    None => key == "calls",
                }
        }
        Opcode::AsyncUpdate | Opcode::AsyncDone => {
            key == "async_execution_thread" || (wrapped.is_none() && key == "calls")
        }
        _ => specific_attrs(op, pred_branch).contains(&key),
    }
}

/// Every attribute `attr_allowed` accepts, sorted, for error messages.
pub fn allowed_attr_list(op: Opcode, wrapped: Option<Opcode>, pred_branch: bool) -> String {
    let mut v: Vec<&str> = COMMON_ATTRS.to_vec();
    match op {
        Opcode::AsyncStart => {
            v.extend(["async_execution_thread", "output_to_operand_aliasing"]);
            match wrapped {
                Some(w) => v.extend(specific_attrs(w, false)),
                None => v.push("calls"),
            }
        }
        Opcode::AsyncUpdate | Opcode::AsyncDone => {
            v.push("async_execution_thread");
            if wrapped.is_none() {
                v.push("calls");
            }
        }
        _ => v.extend(specific_attrs(op, pred_branch)),
    }
    v.sort_unstable();
    v.join(", ")
}

/// Attributes that must be written (`broadcast`'s `dimensions` is filled in
/// for a scalar operand before this is checked).
pub fn required_attrs(
    op: Opcode,
    wrapped: Option<Opcode>,
    pred_branch: bool,
) -> &'static [&'static str] {
    use Opcode::*;
    match op {
        AsyncStart => match wrapped {
            Some(w) => required_attrs(w, None, false),
            None => &["calls"],
        },
        Iota => &["iota_dimension"],
        TopK => &["k"],
        AllGather | AllGatherStart => DIMENSIONS,
        AllReduce | AllReduceStart => &["to_apply"],
        ReduceScatter => TO_APPLY_DIMENSIONS,
        CollectivePermute | CollectivePermuteStart => &["source_target_pairs"],
        Sort => TO_APPLY_DIMENSIONS,
        While => &["condition", "body"],
        GetTupleElement => &["index"],
        Call | ReduceWindow => &["to_apply"],
        Convolution => &["dim_labels"],
        Fft => &["fft_type", "fft_length"],
        Compare => &["direction"],
        Broadcast | Concatenate | Reverse | Transpose | GetDimensionSize | SetDimensionSize => {
            DIMENSIONS
        }
        Map => &["to_apply"],
        Reduce => TO_APPLY_DIMENSIONS,
        Scan => &["to_apply", "dimensions", "num_carries"],
        SelectAndScatter => &["select", "scatter"],
        Slice => &["slice"],
        DynamicSlice => &["dynamic_slice_sizes"],
        BatchNormTraining | BatchNormInference | BatchNormGrad => BATCH_NORM,
        Pad => &["padding"],
        Fusion => &["calls", "kind"],
        Rng => &["distribution"],
        RngGetAndUpdateState => &["delta"],
        RngBitGenerator => &["algorithm"],
        ReducePrecision => &["exponent_bits", "mantissa_bits"],
        Conditional if pred_branch => &["true_computation", "false_computation"],
        Conditional => &["branch_computations"],
        CustomCall => &["custom_call_target"],
        Gather => &[
            "offset_dims",
            "collapsed_slice_dims",
            "start_index_map",
            "index_vector_dim",
            "slice_sizes",
        ],
        Scatter => &[
            "update_window_dims",
            "inserted_window_dims",
            "scatter_dims_to_operand_dims",
            "index_vector_dim",
            "to_apply",
        ],
        Domain => &["domain"],
        _ => &[],
    }
}

/// How many operands an opcode takes, where XLA fixes the number.
pub fn fixed_operand_count(op: Opcode) -> Option<usize> {
    use Opcode::*;
    if op.is_elementwise_unary() {
        return Some(1);
    }
    if op.is_elementwise_binary() {
        return Some(2);
    }
    Some(match op {
        Iota | ReplicaId | PartitionId | RngGetAndUpdateState => 0,
        TopK
        | Convert
        | BitcastConvert
        | Bitcast
        | CopyStart
        | CopyDone
        | AllGatherDone
        | AllReduceDone
        | CollectivePermuteDone
        | OptimizationBarrier
        | Reshape
        | While
        | Recv
        | RecvDone
        | SendDone
        | GetTupleElement
        | Fft
        | Cholesky
        | Broadcast
        | Reverse
        | Slice
        | Transpose
        | Infeed
        | ReducePrecision
        | Domain
        | GetDimensionSize
        | RngBitGenerator => 1,
        Compare | StochasticConvert | AddDependency | Send | Convolution | TriangularSolve
        | Pad | Outfeed | Gather | SetDimensionSize | Dot => 2,
        Clamp | Select | SelectAndScatter | BatchNormTraining | RaggedDot => 3,
        ScaledDot => 4,
        BatchNormInference | BatchNormGrad => 5,
        _ => return None,
    })
}

/// Operand-count rules of the variadic ops, in XLA's words where it has
/// them.
pub fn check_variadic_operands(op: Opcode, n: usize) -> Result<(), String> {
    use Opcode::*;
    match op {
        DynamicReshape if n == 0 => Err("DynamicReshape requires at least one operand.".into()),
        DynamicSlice if n == 0 => Err("Expected at least one operand.".into()),
        DynamicUpdateSlice if n < 2 => Err("Expected at least two operands.".into()),
        Reduce | ReduceWindow if n % 2 == 1 => Err(format!(
            "expects an even number of operands, but has {n} operands"
        )),
        Reduce | ReduceWindow if n == 0 => Err(format!(
            "{op} expects at least one operand and one init value, but has 0 operands"
        )),
        Scatter if n % 2 == 0 => Err(format!(
            "expects an odd number of operands, but has {n} operands"
        )),
        Conditional if n == 0 => Err(
            "conditional expects the branch index as its first operand, but has no operands".into(),
        ),
        Sort
        | Concatenate
        | Map
        | Scan
        | AllGather
        | AllGatherStart
        | AllReduce
        | AllReduceStart
        | ReduceScatter
        | AllToAll
        | RaggedAllToAll
        | CollectiveBroadcast
        | CollectivePermute
        | CollectivePermuteStart
            if n == 0 =>
        {
            Err(format!(
                "{op} expects at least one operand, but has 0 operands"
            ))
        }
        _ => Ok(()),
    }
}
