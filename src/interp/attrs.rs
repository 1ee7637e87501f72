//! The typed attributes the interpreter reads, with its defaults and
//! errors.

use super::{err, Result};
use crate::ir::{AttrValue, Instruction};

/// `{1,2}` (or a single integer); `None` when absent.
pub fn int_list_opt(instr: &Instruction, key: &str) -> Result<Option<Vec<i64>>> {
    match instr.attr(key) {
        None => Ok(None),
        Some(AttrValue::Ints(v)) => Ok(Some(v.to_vec())),
        Some(AttrValue::Int(v)) => Ok(Some(vec![*v])),
        Some(_) => Err(err(format!("{key} is not a list of integers"))),
    }
}

/// A list attribute that defaults to empty.
pub fn int_list(instr: &Instruction, key: &str) -> Result<Vec<i64>> {
    Ok(int_list_opt(instr, key)?.unwrap_or_default())
}

/// A list attribute that must be present.
pub fn int_list_req(instr: &Instruction, key: &str) -> Result<Vec<i64>> {
    int_list_opt(instr, key)?.ok_or_else(|| err(format!("missing attribute {key}")))
}

/// An integer attribute (`k=5`, `index=1`).
pub fn int_attr(instr: &Instruction, key: &str) -> Result<Option<i64>> {
    match instr.attr(key) {
        None => Ok(None),
        Some(AttrValue::Int(v)) => Ok(Some(*v)),
        Some(_) => Err(err(format!("{key} is not an integer"))),
    }
}

pub fn bool_attr(instr: &Instruction, key: &str) -> Result<Option<bool>> {
    match instr.attr(key) {
        None => Ok(None),
        Some(AttrValue::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(err(format!("{key} is not a boolean"))),
    }
}

/// `slice={[0:8], [0:16:2]}` -> (start, limit, stride) per dimension.
pub fn slice_attr(instr: &Instruction) -> Result<Vec<(i64, i64, i64)>> {
    match instr.attr("slice") {
        Some(AttrValue::Slice(s)) => Ok(s.iter().map(|d| (d.start, d.limit, d.stride)).collect()),
        _ => Err(err("missing attribute slice")),
    }
}

/// `padding=0_0x1_2_1` -> (low, high, interior) per dimension.
pub fn padding_attr(instr: &Instruction) -> Result<Vec<(i64, i64, i64)>> {
    match instr.attr("padding") {
        Some(AttrValue::Padding(p)) => Ok(p.iter().map(|d| (d.low, d.high, d.interior)).collect()),
        _ => Err(err("missing attribute padding")),
    }
}

pub use crate::ir::attrs::WindowDim;

/// `window={size=1x32 stride=1x32 ...}` of an operand of `rank`.
pub fn window_attr(instr: &Instruction, rank: usize) -> Result<Vec<WindowDim>> {
    let dims = match instr.attr("window") {
        Some(AttrValue::Window(w)) => w.dims.clone(),
        // A scalar operand has an empty window, which XLA does not print.
        None if rank == 0 => Vec::new(),
        _ => return Err(err("missing attribute window")),
    };
    if dims.len() != rank {
        return Err(err(format!(
            "window has {} dimensions, the operand {rank}",
            dims.len()
        )));
    }
    for d in &dims {
        if d.size < 0 || d.stride < 1 || d.base_dilation < 1 || d.window_dilation < 1 {
            return Err(err(format!("window dimension {d:?} is not valid")));
        }
    }
    Ok(dims)
}

/// Reads a usize from an i64 attribute value with a clear error.
pub fn dim_index(v: i64, rank: usize, what: &str) -> Result<usize> {
    usize::try_from(v)
        .ok()
        .filter(|&d| d < rank)
        .ok_or_else(|| err(format!("{what} {v} is out of range for rank {rank}")))
}
