//! The dimension numbers of gather and scatter, which follow the same
//! rules under different names: each list in range of the rank it
//! indexes, covering the operand, one index map entry per index vector
//! entry.

use super::dimensions::{dims_in_range, int_list, int_value};
use super::Operands;
use crate::ir::shape::UNBOUNDED_DIM;
use crate::ir::{Instruction, Shape};
use std::fmt;

/// The size of a gather's or scatter's index vector: dimension
/// `index_vector_dim` of the indices, or 1 when it is their rank.
fn index_vector_size(indices: Option<&Shape>, ivd: i64) -> Option<i64> {
    let dims = indices?.dims();
    match usize::try_from(ivd).ok()? {
        d if d == dims.len() => Some(1),
        d => dims.get(d).copied(),
    }
}

/// The attributes of a gather's or a scatter's dimension numbers: the two
/// follow the same rules under different names.
struct IndexedKeys {
    op: &'static str,
    /// Dimensions of the window's array (gather: the result; scatter: the
    /// updates) that span the window.
    window: &'static str,
    /// Operand dimensions the window leaves out.
    collapsed: &'static str,
    /// The operand dimension each index vector entry indexes.
    index_map: &'static str,
    operand_batching: &'static str,
    indices_batching: &'static str,
}

const GATHER_KEYS: IndexedKeys = IndexedKeys {
    op: "gather",
    window: "offset_dims",
    collapsed: "collapsed_slice_dims",
    index_map: "start_index_map",
    operand_batching: "operand_batching_dims",
    indices_batching: "start_indices_batching_dims",
};

const SCATTER_KEYS: IndexedKeys = IndexedKeys {
    op: "scatter",
    window: "update_window_dims",
    collapsed: "inserted_window_dims",
    index_map: "scatter_dims_to_operand_dims",
    operand_batching: "input_batching_dims",
    indices_batching: "scatter_indices_batching_dims",
};

/// The arrays a gather's or a scatter's dimension numbers index.
struct IndexedArrays<'a> {
    operand_rank: usize,
    indices: Option<&'a Shape>,
    /// The rank of a gather's result or a scatter's updates.
    window_rank: usize,
}

pub(super) fn check_gather(ops: Operands<'_>) -> Result<(), String> {
    let operand_rank = ops.rank(0);
    let arrays = IndexedArrays {
        operand_rank,
        indices: ops.get(1),
        window_rank: ops.instr.shape.rank(),
    };
    check_indexed(&GATHER_KEYS, ops.instr, &arrays)?;
    if let Some(sizes) = int_list(ops.instr, "slice_sizes")? {
        if sizes.len() != operand_rank {
            return Err(format!(
                "gather slice_sizes has {} sizes, the operand has rank {operand_rank}",
                sizes.len()
            ));
        }
        // As XLA's shape inference: a slice fits in the operand, and a
        // dimension the result leaves out is sliced 1 (or 0) wide.
        let bounds = ops.get(0).map(Shape::dims).unwrap_or_default();
        for (i, (&size, &bound)) in sizes.iter().zip(bounds).enumerate() {
            if bound != UNBOUNDED_DIM && !(0..=bound).contains(&size) {
                return Err(format!(
                    "gather slice_sizes[{i}] is {size}, outside [0, {bound}], the operand's dimension {i}"
                ));
            }
        }
        for key in [GATHER_KEYS.collapsed, GATHER_KEYS.operand_batching] {
            for d in int_list(ops.instr, key)?.unwrap_or_default() {
                let size = usize::try_from(d).ok().and_then(|d| sizes.get(d));
                if let Some(&size) = size.filter(|&&s| s > 1) {
                    return Err(format!(
                        "gather {key} leaves out dimension {d}, but slice_sizes[{d}] is {size}, not 1"
                    ));
                }
            }
        }
    }
    Ok(())
}

pub(super) fn check_scatter(ops: Operands<'_>) -> Result<(), String> {
    let inputs = ops.instr.operands().len() / 2;
    let arrays = IndexedArrays {
        operand_rank: ops.rank(0),
        indices: ops.get(inputs),
        window_rank: ops.rank(inputs + 1),
    };
    check_indexed(&SCATTER_KEYS, ops.instr, &arrays)?;
    // As XLA's shape inference: each window dimension of the updates fits
    // in the operand dimension it updates (those left once the inserted
    // and batching dimensions are taken out, in order).
    let get = |k: &str| int_list(ops.instr, k).map(Option::unwrap_or_default);
    let (window, inserted, batching) = (
        get(SCATTER_KEYS.window)?,
        get(SCATTER_KEYS.collapsed)?,
        get(SCATTER_KEYS.operand_batching)?,
    );
    let (Some(operand), Some(updates)) = (ops.get(0), ops.get(inputs + 1)) else {
        return Ok(());
    };
    let windowed =
        (0..operand.rank() as i64).filter(|d| !inserted.contains(d) && !batching.contains(d));
    for (&u, o) in window.iter().zip(windowed) {
        let at = |dims: &[i64], d: i64| usize::try_from(d).ok().and_then(|d| dims.get(d).copied());
        let (Some(size), Some(bound)) = (at(updates.dims(), u), at(operand.dims(), o)) else {
            continue;
        };
        if bound != UNBOUNDED_DIM && size > bound {
            return Err(format!(
                "scatter updates' window dimension {u} is {size}, more than the operand's dimension {o} ({bound})"
            ));
        }
    }
    Ok(())
}

/// The rules gather and scatter share: every list in range of the rank it
/// indexes, the window and the batching dimensions covering the operand,
/// and an index map entry per index vector entry.
fn check_indexed(
    keys: &IndexedKeys,
    instr: &Instruction,
    arrays: &IndexedArrays<'_>,
) -> Result<(), String> {
    let get = |k: &str| int_list(instr, k).map(Option::unwrap_or_default);
    let window = get(keys.window)?;
    let collapsed = get(keys.collapsed)?;
    let index_map = get(keys.index_map)?;
    let batching = get(keys.operand_batching)?;
    let indices_batching = get(keys.indices_batching)?;
    let op = keys.op;
    let operand_rank = arrays.operand_rank;
    let indices_rank = arrays.indices.map_or(0, Shape::rank);
    let what = |key: &'static str| Label(op, key);
    dims_in_range(what(keys.window), &window, arrays.window_rank, true, true)?;
    dims_in_range(what(keys.collapsed), &collapsed, operand_rank, true, true)?;
    dims_in_range(what(keys.index_map), &index_map, operand_rank, true, false)?;
    dims_in_range(
        what(keys.operand_batching),
        &batching,
        operand_rank,
        true,
        true,
    )?;
    let ivd = int_value(instr, "index_vector_dim")?.unwrap_or(indices_rank as i64);
    if usize::try_from(ivd).map_or(true, |d| d > indices_rank) {
        return Err(format!(
            "{op} index_vector_dim {ivd} is out of range for indices of rank {indices_rank}"
        ));
    }
    dims_in_range(
        what(keys.indices_batching),
        &indices_batching,
        indices_rank,
        true,
        false,
    )?;
    if window.len() + collapsed.len() + batching.len() != operand_rank {
        return Err(format!(
            "{op}: {} ({}), {} ({}) and {} ({}) must cover the operand's {operand_rank} dimensions",
            keys.window,
            window.len(),
            keys.collapsed,
            collapsed.len(),
            keys.operand_batching,
            batching.len()
        ));
    }
    let index_vector = index_vector_size(arrays.indices, ivd);
    if index_vector != Some(index_map.len() as i64) {
        return Err(format!(
            "{op} {} has {} entries, the index vector has {}",
            keys.index_map,
            index_map.len(),
            index_vector.unwrap_or(0)
        ));
    }
    Ok(())
}

/// An op's attribute in a message (`gather offset_dims`), written only
/// when a message is.
#[derive(Clone, Copy)]
struct Label(&'static str, &'static str);

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.0, self.1)
    }
}
