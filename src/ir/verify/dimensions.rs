//! Dimension numbers, indices and per-dimension attributes against the
//! ranks they index (reduce, transpose, broadcast, dot, slices, padding,
//! windows, ...), and a custom call's operand layout constraints against
//! its operands.

use super::gather_scatter::{check_gather, check_scatter};
use super::Operands;
use crate::ir::instruction::AttrValue;
use crate::ir::{Computation, Instruction, Opcode, Shape};
use std::fmt;

/// `{1,2}` of an attribute; `None` when absent.
pub(super) fn int_list(instr: &Instruction, key: &str) -> Result<Option<Vec<i64>>, String> {
    match instr.attr(key) {
        None => Ok(None),
        Some(AttrValue::Ints(v)) => Ok(Some(v.to_vec())),
        Some(AttrValue::Int(v)) => Ok(Some(vec![*v])),
        Some(_) => Err(format!("{key} is not a list of integers")),
    }
}

/// An integer attribute; `None` when absent.
pub(super) fn int_value(instr: &Instruction, key: &str) -> Result<Option<i64>, String> {
    match instr.attr(key) {
        None => Ok(None),
        Some(AttrValue::Int(v)) => Ok(Some(*v)),
        Some(_) => Err(format!("{key} is not an integer")),
    }
}

/// Each of `dims` names a dimension of a rank-`rank` array; with
/// `distinct`, none twice; with `sorted`, in increasing order. `what`
/// names them in a message (formatted only then).
pub(super) fn dims_in_range(
    what: impl fmt::Display,
    dims: &[i64],
    rank: usize,
    distinct: bool,
    sorted: bool,
) -> Result<(), String> {
    for (i, &d) in dims.iter().enumerate() {
        if usize::try_from(d).map_or(true, |d| d >= rank) {
            return Err(format!(
                "{what}: dimension {d} is out of range for rank {rank}"
            ));
        }
        let before = dims.get(..i).unwrap_or_default();
        if distinct && before.contains(&d) {
            return Err(format!("{what}: dimension {d} is named twice"));
        }
        if sorted && before.last().is_some_and(|&p| p >= d) {
            return Err(format!(
                "{what}: dimensions must be in increasing order, found {dims:?}"
            ));
        }
    }
    Ok(())
}

/// Every dimension number, index and window an instruction's attributes
/// hold, against the rank it indexes (XLA's shape inference rules), so
/// that nothing downstream indexes a shape out of bounds.
pub(super) fn check_dimension_numbers(
    comp: &Computation,
    instr: &Instruction,
) -> Result<(), String> {
    let ops = Operands { comp, instr };
    let rank = instr.shape.rank();
    // The attributes of a sugared async start are the wrapped op's.
    let op = match (instr.opcode, instr.async_wrapped) {
        (Opcode::AsyncStart, Some(w)) => w,
        (op, _) => op,
    };
    let each_operand = (0..instr.operands().len()).map(|i| ops.rank(i));
    match op {
        Opcode::Reduce => {
            let inputs = instr.operands().len() / 2;
            dims_attr_in_range(instr, "reduce dimensions", each_operand.take(inputs))
        }
        Opcode::Transpose => check_transpose_dims(ops),
        Opcode::Broadcast => dims_attr_in_range(instr, "broadcast dimensions", [rank]),
        Opcode::Reverse => dims_attr_in_range(instr, "reverse dimensions", [ops.rank(0)]),
        // Each operand for sort and concatenate; the first for the rest
        // (the collectives' variadic forms may carry scalars, as
        // torch-xla's all-gather does).
        Opcode::Sort | Opcode::Concatenate => {
            dims_attr_in_range(instr, format_args!("{op} dimensions"), each_operand)
        }
        Opcode::AllGather
        | Opcode::AllGatherStart
        | Opcode::ReduceScatter
        | Opcode::AllToAll
        | Opcode::RaggedAllToAll
        | Opcode::GetDimensionSize
        | Opcode::SetDimensionSize => {
            dims_attr_in_range(instr, format_args!("{op} dimensions"), [ops.rank(0)])
        }
        Opcode::Iota => index_attr_in_range(instr, "iota_dimension", rank),
        Opcode::BatchNormTraining | Opcode::BatchNormInference | Opcode::BatchNormGrad => {
            index_attr_in_range(instr, "feature_index", ops.rank(0))
        }
        Opcode::Dot => check_dot_dims(ops),
        Opcode::Gather => check_gather(ops),
        Opcode::Scatter => check_scatter(ops),
        Opcode::Slice => match instr.attr("slice") {
            Some(AttrValue::Slice(s)) => one_per_operand_dim("slice", s.len(), ops),
            _ => Ok(()),
        },
        Opcode::DynamicSlice => check_dynamic_slice_sizes(ops),
        Opcode::CollectivePermute | Opcode::CollectivePermuteStart => {
            check_permute_slice_sizes(ops)
        }
        Opcode::ReducePrecision => check_reduce_precision_bits(instr),
        Opcode::Pad => match instr.attr("padding") {
            Some(AttrValue::Padding(p)) => one_per_operand_dim("padding", p.len(), ops),
            _ => Ok(()),
        },
        Opcode::CustomCall => check_operand_layout_constraints(ops),
        Opcode::ReduceWindow => match instr.attr("window") {
            Some(AttrValue::Window(w)) => one_per_operand_dim("window", w.dims.len(), ops),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

/// `dimensions=`, if written, names distinct dimensions of arrays of each
/// of `ranks`.
fn dims_attr_in_range(
    instr: &Instruction,
    what: impl fmt::Display,
    ranks: impl IntoIterator<Item = usize>,
) -> Result<(), String> {
    if let Some(d) = int_list(instr, "dimensions")? {
        for r in ranks {
            dims_in_range(&what, &d, r, true, false)?;
        }
    }
    Ok(())
}

/// The integer attribute `key`, if written, names a dimension of a
/// rank-`rank` array.
fn index_attr_in_range(instr: &Instruction, key: &str, rank: usize) -> Result<(), String> {
    if let Some(d) = int_value(instr, key)? {
        dims_in_range(key, &[d], rank, false, false)?;
    }
    Ok(())
}

/// An attribute that describes each operand dimension (`what` has `n`)
/// describes as many as the operand has.
fn one_per_operand_dim(what: &str, n: usize, ops: Operands<'_>) -> Result<(), String> {
    let r = ops.rank(0);
    if n != r {
        return Err(format!(
            "{what} has {n} dimensions, the operand has rank {r}"
        ));
    }
    Ok(())
}

fn check_transpose_dims(ops: Operands<'_>) -> Result<(), String> {
    let Some(d) = int_list(ops.instr, "dimensions")? else {
        return Ok(());
    };
    let r = ops.rank(0);
    if d.len() != r {
        return Err(format!(
            "transpose dimensions {d:?} must be a permutation of the operand's {r} dimensions"
        ));
    }
    dims_in_range("transpose dimensions", &d, r, true, false)?;
    if ops.instr.shape.rank() != r {
        return Err("transpose changes the rank".into());
    }
    Ok(())
}

fn check_dot_dims(ops: Operands<'_>) -> Result<(), String> {
    let instr = ops.instr;
    let l = ops.rank(0);
    let r = ops.rank(1);
    let lc = int_list(instr, "lhs_contracting_dims")?.unwrap_or_default();
    let rc = int_list(instr, "rhs_contracting_dims")?.unwrap_or_default();
    let lb = int_list(instr, "lhs_batch_dims")?.unwrap_or_default();
    let rb = int_list(instr, "rhs_batch_dims")?.unwrap_or_default();
    dims_in_range("lhs_contracting_dims", &lc, l, true, false)?;
    dims_in_range("rhs_contracting_dims", &rc, r, true, false)?;
    dims_in_range("lhs_batch_dims", &lb, l, true, false)?;
    dims_in_range("rhs_batch_dims", &rb, r, true, false)?;
    if lc.len() != rc.len() || lb.len() != rb.len() {
        return Err("dot: lhs and rhs must name as many contracting (and batch) dimensions".into());
    }
    if lc.iter().any(|d| lb.contains(d)) || rc.iter().any(|d| rb.contains(d)) {
        return Err("dot: a dimension is both contracting and batch".into());
    }
    Ok(())
}

/// `dynamic_slice_sizes=`, if written, has a size per operand dimension,
/// each within it.
fn check_dynamic_slice_sizes(ops: Operands<'_>) -> Result<(), String> {
    let Some(sizes) = int_list(ops.instr, "dynamic_slice_sizes")? else {
        return Ok(());
    };
    let dims = ops.get(0).map(Shape::dims).unwrap_or_default();
    if sizes.len() != dims.len() {
        return Err(format!(
            "dynamic_slice_sizes has {} sizes, the operand has rank {}",
            sizes.len(),
            dims.len()
        ));
    }
    for (&s, &d) in sizes.iter().zip(dims) {
        if s < 0 || (d >= 0 && s > d) {
            return Err(format!(
                "dynamic_slice_sizes {sizes:?} do not fit in the operand's dimensions {dims:?}"
            ));
        }
    }
    Ok(())
}

/// `reduce-precision`'s bit counts, as XLA's shape inference has them
/// (at least 1 exponent bit, no negative mantissa), each one its proto's
/// `int32` can hold.
fn check_reduce_precision_bits(instr: &Instruction) -> Result<(), String> {
    for (key, least) in [("exponent_bits", 1), ("mantissa_bits", 0)] {
        let Some(bits) = int_value(instr, key)? else {
            continue;
        };
        if bits < least {
            return Err(format!("Expected {key} >= {least}; got {bits}"));
        }
        if i32::try_from(bits).is_err() {
            return Err(format!("{key}={bits} is more than a proto's int32 holds"));
        }
    }
    Ok(())
}

/// An in-place collective permute's `slice_sizes=`, if written: lists
/// of the lengths its operands' shapes give (what its proto can say).
fn check_permute_slice_sizes(ops: Operands<'_>) -> Result<(), String> {
    let Some(AttrValue::IntLists(lists)) = ops.instr.attr("slice_sizes") else {
        return Ok(());
    };
    let lengths = ops
        .get(0)
        .zip(ops.get(2))
        .and_then(|(input, starts)| permute_slice_size_lengths(input, starts));
    let written: Vec<usize> = lists.iter().map(|l| l.len()).collect();
    match lengths {
        Some(lengths) if lengths == written => Ok(()),
        _ => Err("slice_sizes do not fit the operands' shapes".into()),
    }
}

/// The lengths of an in-place collective permute's `slice_sizes` lists,
/// which its proto flattens, as XLA's loader splits them: one list per
/// input array (per start-index tuple of it, where it has several), as long
/// as that array's rank. `None` where the shapes are not of that form.
pub fn permute_slice_size_lengths(input: &Shape, starts: &Shape) -> Option<Vec<usize>> {
    let first_start = starts.tuple_elements()?.first()?;
    match input.tuple_elements() {
        Some(inputs) => {
            if !first_start.tuple_elements()?.first()?.is_tuple() {
                // `((s32[], s32[]), ...)`: one start tuple per input.
                return Some(inputs.iter().map(Shape::rank).collect());
            }
            // `(((s32[], ...), (s32[], ...)), ...)`: several per input.
            let per_input = starts.tuple_elements()?;
            let mut lengths = Vec::new();
            for (i, s) in inputs.iter().enumerate() {
                let n = per_input.get(i)?.tuple_elements()?.len();
                lengths.extend(std::iter::repeat_n(s.rank(), n));
            }
            Some(lengths)
        }
        None if first_start.is_tuple() => Some(vec![input.rank(); starts.tuple_elements()?.len()]),
        None => Some(vec![input.rank()]),
    }
}

/// A custom call's `operand_layout_constraints=`, if written: one per
/// operand, each of its shape (as the text parser checks it).
fn check_operand_layout_constraints(ops: Operands<'_>) -> Result<(), String> {
    let instr = ops.instr;
    let Some(AttrValue::Shapes(shapes)) = instr.attr("operand_layout_constraints") else {
        return Ok(());
    };
    if shapes.len() != instr.operands().len() {
        return Err(format!(
            "Expected {} operand layout constraints, {} given",
            instr.operands().len(),
            shapes.len()
        ));
    }
    for (i, s) in shapes.iter().enumerate() {
        if !ops.get(i).is_some_and(|o| s.compatible(o)) {
            return Err(format!(
                "operand layout constraint {i} ({}) is not compatible with the operand",
                s.to_text(true)
            ));
        }
    }
    Ok(())
}
