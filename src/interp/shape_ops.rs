//! Data movement: broadcast, reshape, bitcast, transpose, slice,
//! dynamic-slice, dynamic-update-slice, concatenate, pad, iota, reverse,
//! gather; and the dimension-size ops on static shapes (get- and
//! set-dimension-size, dynamic-reshape).

use super::array::{element_count, shape_dims, strided_map, strides, Array, Data, Value};
use super::attrs::{self, dim_index};
use super::convert::from_f64_vec;
use super::{err, expect_operands, operand, scalar_indices, Result};
use crate::ir::shape::Shape;
use crate::ir::{Computation, Instruction, Opcode, PrimitiveType};

/// The ops [`eval`] evaluates.
pub fn handles(op: Opcode) -> bool {
    use Opcode as O;
    matches!(
        op,
        O::Broadcast
            | O::Reshape
            | O::Bitcast
            | O::Transpose
            | O::Slice
            | O::DynamicSlice
            | O::DynamicUpdateSlice
            | O::Concatenate
            | O::Pad
            | O::Iota
            | O::Reverse
            | O::Gather
            | O::GetDimensionSize
            | O::SetDimensionSize
            | O::DynamicReshape
    )
}

/// Evaluates a data-movement op (see [`handles`]).
pub fn eval(comp: &Computation, instr: &Instruction, ops: &[&Value]) -> Result<Array> {
    use Opcode as O;
    let a = |i: usize| operand(ops, i);
    let dims = || shape_dims(&instr.shape);
    match instr.opcode {
        O::Broadcast => {
            expect_operands(instr, ops, 1)?;
            broadcast(a(0)?, &dims()?, instr.dimensions().unwrap_or(&[]))
        }
        O::Reshape => {
            expect_operands(instr, ops, 1)?;
            reshape(a(0)?, &dims()?)
        }
        O::Bitcast => {
            expect_operands(instr, ops, 1)?;
            // The operand's declared shape carries its layout.
            bitcast(a(0)?, &comp.instr(instr.operand(0)).shape, &instr.shape)
        }
        O::Transpose => {
            expect_operands(instr, ops, 1)?;
            let perm: Vec<usize> = instr
                .dimensions()
                .unwrap_or(&[])
                .iter()
                .map(|&d| dim_index(d, a(0)?.rank(), "transpose dimension"))
                .collect::<Result<_>>()?;
            transpose(a(0)?, &perm)
        }
        O::Slice => {
            expect_operands(instr, ops, 1)?;
            slice(a(0)?, &attrs::slice_attr(instr)?)
        }
        O::DynamicSlice => {
            let starts = scalar_indices(ops.get(1..).unwrap_or(&[]))?;
            let sizes: Vec<usize> = attrs::int_list_req(instr, "dynamic_slice_sizes")?
                .iter()
                .map(|&s| usize::try_from(s).map_err(|_| err("negative slice size")))
                .collect::<Result<_>>()?;
            dynamic_slice(a(0)?, &starts, &sizes)
        }
        O::DynamicUpdateSlice => {
            if ops.len() < 2 {
                return Err(err("dynamic-update-slice needs an update"));
            }
            dynamic_update_slice(a(0)?, a(1)?, &scalar_indices(&ops[2..])?)
        }
        O::Concatenate => {
            let parts = (0..ops.len())
                .map(|i| a(i).map(|x| &**x))
                .collect::<Result<Vec<_>>>()?;
            let d = instr
                .dimensions()
                .and_then(|d| d.first().copied())
                .unwrap_or(-1);
            let rank = parts.first().map_or(0, |x| x.rank());
            concatenate(&parts, dim_index(d, rank, "concatenate dimension")?)
        }
        O::Pad => {
            expect_operands(instr, ops, 2)?;
            pad(a(0)?, a(1)?, &attrs::padding_attr(instr)?)
        }
        O::Iota => {
            let d = instr
                .int_attr("iota_dimension")
                .ok_or_else(|| err("iota without iota_dimension"))?;
            let dims = dims()?;
            let rank = dims.len();
            iota(
                instr.shape.element_type(),
                &dims,
                dim_index(d, rank, "iota dimension")?,
            )
        }
        O::Reverse => {
            expect_operands(instr, ops, 1)?;
            reverse(a(0)?, instr.dimensions().unwrap_or(&[]))
        }
        O::Gather => {
            expect_operands(instr, ops, 2)?;
            gather(a(0)?, a(1)?, &GatherDims::from_instr(instr)?, &dims()?)
        }
        O::GetDimensionSize | O::SetDimensionSize => dimension_size(instr, ops),
        O::DynamicReshape => dynamic_reshape(instr, ops),
        op => Err(err(format!(
            "internal error: {} is not data movement",
            op.name()
        ))),
    }
}

/// The dimensions of an array shape, bounds for dynamic ones.
fn bound_dims(shape: &Shape) -> Result<Vec<usize>> {
    let a = shape
        .as_array()
        .ok_or_else(|| err(format!("expected an array shape, got {shape}")))?;
    a.dims
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| err(format!("bad dimension in {shape}"))))
        .collect()
}

/// `get-dimension-size` (the static size, as s32) and `set-dimension-size`
/// on static shapes: the array unchanged when the size given is its size.
/// A smaller size would make the dimension dynamic, whose padded elements
/// the interpreter does not model: an error rather than a wrong answer.
fn dimension_size(instr: &Instruction, ops: &[&Value]) -> Result<Array> {
    let set = instr.opcode == Opcode::SetDimensionSize;
    expect_operands(instr, ops, if set { 2 } else { 1 })?;
    let a = operand(ops, 0)?;
    let d = instr
        .dimensions()
        .and_then(|d| d.first().copied())
        .ok_or_else(|| err(format!("{} without dimensions", instr.opcode.name())))?;
    let d = dim_index(d, a.rank(), "dimension")?;
    if !set {
        return Array::scalar_f64(instr.shape.element_type(), a.dims[d] as f64);
    }
    let size = scalar_indices(&ops[1..])?[0];
    if size != a.dims[d] as i64 || bound_dims(&instr.shape)? != a.dims {
        return Err(super::unsupported(format!(
            "unsupported: set-dimension-size to {size} of dimension {d} of {} makes it dynamic; the interpreter runs static shapes only",
            a.shape_text()
        )));
    }
    Ok((**a).clone())
}

/// `dynamic-reshape(x, sizes...)` on static shapes: a reshape, when the
/// sizes given are the result's (bounded) dimensions.
fn dynamic_reshape(instr: &Instruction, ops: &[&Value]) -> Result<Array> {
    let a = operand(ops, 0)?;
    let out = bound_dims(&instr.shape)?;
    let sizes = scalar_indices(ops.get(1..).unwrap_or(&[]))?;
    let want: Vec<i64> = out.iter().map(|&d| d as i64).collect();
    if sizes != want {
        return Err(super::unsupported(format!(
            "unsupported: dynamic-reshape of {} to sizes {sizes:?}, the result's bounds are {want:?}; the interpreter runs static shapes only",
            a.shape_text()
        )));
    }
    reshape(a, &out)
}

pub fn broadcast(a: &Array, out_dims: &[usize], dimensions: &[i64]) -> Result<Array> {
    if dimensions.len() != a.rank() {
        return Err(err(format!(
            "broadcast: {} dimensions for operand {}",
            dimensions.len(),
            a.shape_text()
        )));
    }
    element_count(out_dims)?;
    let st = strides(&a.dims);
    let mut step = vec![0isize; out_dims.len()];
    for (k, &d) in dimensions.iter().enumerate() {
        let d = dim_index(d, out_dims.len(), "broadcast dimension")?;
        if out_dims[d] != a.dims[k] {
            return Err(err(format!(
                "broadcast: operand dimension {k} ({}) does not match result dimension {d} ({})",
                a.dims[k], out_dims[d]
            )));
        }
        step[d] = st[k] as isize;
    }
    let data = a.data.strided(out_dims, &step, 0);
    Array::new(a.ty, out_dims.to_vec(), data)
}

pub fn reshape(a: &Array, out_dims: &[usize]) -> Result<Array> {
    if element_count(out_dims)? != a.len() {
        return Err(err(format!(
            "reshape of {} to {} elements",
            a.shape_text(),
            element_count(out_dims)?
        )));
    }
    Array::new(a.ty, out_dims.to_vec(), a.data.clone())
}

/// The minor-to-major order of an array shape (default: descending).
fn minor_to_major(shape: &Shape) -> Vec<usize> {
    let rank = shape.rank();
    match shape.as_array().and_then(|a| a.layout.as_ref()) {
        Some(l) if l.minor_to_major.len() == rank => {
            l.minor_to_major.iter().map(|&d| d as usize).collect()
        }
        _ => (0..rank).rev().collect(),
    }
}

/// Logical row-major -> physical order for a layout: the permutation that
/// lists dimensions major to minor.
fn to_physical(a: &Array, m2m: &[usize]) -> Result<Array> {
    let perm: Vec<usize> = m2m.iter().rev().copied().collect();
    transpose(a, &perm)
}

/// `bitcast`: the same buffer under another shape and layout.
pub fn bitcast(a: &Array, from: &Shape, to: &Shape) -> Result<Array> {
    let out_dims = super::array::shape_dims(to)?;
    let to_ty = to.element_type();
    if to_ty != a.ty {
        // Optimized modules bitcast between types of the same width.
        if to_ty.bit_width() != a.ty.bit_width() {
            return Err(err(format!(
                "bitcast from {} to {to} changes the element width",
                a.shape_text()
            )));
        }
        let same = super::convert::bitcast_convert(a, to_ty, a.dims.clone())?;
        let from_same = match from {
            Shape::Array(s) => Shape::Array(crate::ir::ArrayShape {
                element_type: to_ty,
                ..s.clone()
            }),
            other => other.clone(),
        };
        return bitcast(&same, &from_same, to);
    }
    if element_count(&out_dims)? != a.len() {
        return Err(err(format!(
            "bitcast from {} to {to} changes the element count",
            a.shape_text()
        )));
    }
    let m_from = minor_to_major(from);
    let m_to = minor_to_major(to);
    let phys = to_physical(a, &m_from)?;
    // The physical buffer read as `to`: its dims in major-to-minor order.
    let major_to_minor: Vec<usize> = m_to.iter().rev().copied().collect();
    let phys_dims: Vec<usize> = major_to_minor.iter().map(|&d| out_dims[d]).collect();
    let p = Array::new(a.ty, phys_dims, phys.data)?;
    // Back to logical order: logical dim d is physical position pos[d].
    let mut inv = vec![0usize; out_dims.len()];
    for (pos, &d) in major_to_minor.iter().enumerate() {
        inv[d] = pos;
    }
    transpose(&p, &inv)
}

/// Result dim i is operand dim perm[i].
/// [`transpose`], borrowing `a` when `perm` keeps every dimension in place
/// (no copy of an operand already in the order a dot or reduce wants).
pub fn transposed<'a>(a: &'a Array, perm: &[usize]) -> Result<std::borrow::Cow<'a, Array>> {
    if perm.len() == a.rank() && perm.iter().enumerate().all(|(i, &p)| i == p) {
        return Ok(std::borrow::Cow::Borrowed(a));
    }
    transpose(a, perm).map(std::borrow::Cow::Owned)
}

pub fn transpose(a: &Array, perm: &[usize]) -> Result<Array> {
    if perm.len() != a.rank() {
        return Err(err(format!(
            "transpose: permutation of {} for {}",
            perm.len(),
            a.shape_text()
        )));
    }
    let mut seen = vec![false; perm.len()];
    for &p in perm {
        if p >= perm.len() || seen[p] {
            return Err(err("transpose: not a permutation"));
        }
        seen[p] = true;
    }
    if perm.iter().enumerate().all(|(i, &p)| i == p) {
        return Ok(a.clone());
    }
    let st = strides(&a.dims);
    let out_dims: Vec<usize> = perm.iter().map(|&p| a.dims[p]).collect();
    let step: Vec<isize> = perm.iter().map(|&p| st[p] as isize).collect();
    let data = a.data.strided(&out_dims, &step, 0);
    Array::new(a.ty, out_dims, data)
}

pub fn slice(a: &Array, spec: &[(i64, i64, i64)]) -> Result<Array> {
    if spec.len() != a.rank() {
        return Err(err(format!(
            "slice: {} ranges for {}",
            spec.len(),
            a.shape_text()
        )));
    }
    let st = strides(&a.dims);
    let mut out_dims = Vec::new();
    let mut step = Vec::new();
    let mut base = 0isize;
    for (k, &(s, l, t)) in spec.iter().enumerate() {
        if s < 0 || l < s || l as usize > a.dims[k] || t < 1 {
            return Err(err(format!(
                "slice [{s}:{l}:{t}] is out of range for dimension {k} of {}",
                a.shape_text()
            )));
        }
        out_dims.push(((l - s + t - 1) / t) as usize);
        step.push(st[k] as isize * t as isize);
        base += st[k] as isize * s as isize;
    }
    let data = a.data.strided(&out_dims, &step, base);
    Array::new(a.ty, out_dims, data)
}

/// Start indices clamped as XLA does: into [0, dim - size].
fn clamp_starts(a: &Array, starts: &[i64], sizes: &[usize]) -> Vec<usize> {
    starts
        .iter()
        .zip(&a.dims)
        .zip(sizes)
        .map(|((&s, &d), &z)| s.clamp(0, d.saturating_sub(z) as i64) as usize)
        .collect()
}

pub fn dynamic_slice(a: &Array, starts: &[i64], sizes: &[usize]) -> Result<Array> {
    if starts.len() != a.rank() || sizes.len() != a.rank() {
        return Err(err(format!(
            "dynamic-slice: {} start indices and {} sizes for {}",
            starts.len(),
            sizes.len(),
            a.shape_text()
        )));
    }
    for (k, (&z, &d)) in sizes.iter().zip(&a.dims).enumerate() {
        if z > d {
            return Err(err(format!(
                "dynamic-slice size {z} exceeds dimension {k} of {}",
                a.shape_text()
            )));
        }
    }
    let s = clamp_starts(a, starts, sizes);
    let spec: Vec<(i64, i64, i64)> = s
        .iter()
        .zip(sizes)
        .map(|(&s, &z)| (s as i64, (s + z) as i64, 1))
        .collect();
    slice(a, &spec)
}

pub fn dynamic_update_slice(a: &Array, upd: &Array, starts: &[i64]) -> Result<Array> {
    if upd.ty != a.ty || upd.rank() != a.rank() || starts.len() != a.rank() {
        return Err(err(format!(
            "dynamic-update-slice of {} with {} ({} start indices)",
            a.shape_text(),
            upd.shape_text(),
            starts.len()
        )));
    }
    for (k, (&z, &d)) in upd.dims.iter().zip(&a.dims).enumerate() {
        if z > d {
            return Err(err(format!(
                "dynamic-update-slice: update dimension {k} ({z}) exceeds the operand's ({d})"
            )));
        }
    }
    let s = clamp_starts(a, starts, &upd.dims);
    let st = strides(&a.dims);
    let base: usize = s.iter().zip(&st).map(|(&x, &y)| x * y).sum();
    let step: Vec<isize> = st.iter().map(|&x| x as isize).collect();
    let dst = strided_map(&upd.dims, &step, base as isize);
    let mut out = a.data.clone();
    out.put(&dst, &upd.data)?;
    Array::new(a.ty, a.dims.clone(), out)
}

pub fn concatenate(parts: &[&Array], dim: usize) -> Result<Array> {
    let first = parts.first().ok_or_else(|| err("concatenate of nothing"))?;
    let rank = first.rank();
    if dim >= rank {
        return Err(err(format!("concatenate dimension {dim} for rank {rank}")));
    }
    let mut out_dims = first.dims.clone();
    out_dims[dim] = 0;
    for p in parts {
        if p.ty != first.ty
            || p.rank() != rank
            || (0..rank).any(|k| k != dim && p.dims[k] != first.dims[k])
        {
            return Err(err(format!(
                "concatenate of {} and {}",
                first.shape_text(),
                p.shape_text()
            )));
        }
        out_dims[dim] += p.dims[dim];
    }
    let st = strides(&out_dims);
    let step: Vec<isize> = st.iter().map(|&x| x as isize).collect();
    let mut out = Data::zeros(first.ty, element_count(&out_dims)?)?;
    let mut offset = 0usize;
    for p in parts {
        let dst = strided_map(&p.dims, &step, (offset * st[dim]) as isize);
        out.put(&dst, &p.data)?;
        offset += p.dims[dim];
    }
    Array::new(first.ty, out_dims, out)
}

pub fn pad(a: &Array, value: &Array, cfg: &[(i64, i64, i64)]) -> Result<Array> {
    if cfg.len() != a.rank() || value.len() != 1 || value.ty != a.ty {
        return Err(err(format!(
            "pad of {} with {} and {} padding dimensions",
            a.shape_text(),
            value.shape_text(),
            cfg.len()
        )));
    }
    let mut out_dims = Vec::new();
    for (k, &(lo, hi, int)) in cfg.iter().enumerate() {
        if int < 0 {
            return Err(err("pad: negative interior padding"));
        }
        let d = a.dims[k] as i64;
        let n = lo + hi + d + (d - 1).max(0) * int;
        if n < 0 {
            return Err(err(format!("pad: dimension {k} becomes negative")));
        }
        out_dims.push(n as usize);
    }
    let total = element_count(&out_dims)?;
    let mut out = value.data.repeat_elem(0, total);
    let ost = strides(&out_dims);
    // Place every operand element that lands inside the result.
    let ist = strides(&a.dims);
    let mut dst = Vec::new();
    let mut src = Vec::new();
    'elems: for i in 0..a.len() {
        let mut o = 0usize;
        for k in 0..a.rank() {
            let idx = (i / ist[k]) % a.dims[k].max(1);
            let pos = cfg[k].0 + idx as i64 * (cfg[k].2 + 1);
            if pos < 0 || pos >= out_dims[k] as i64 {
                continue 'elems;
            }
            o += pos as usize * ost[k];
        }
        dst.push(o);
        src.push(i);
    }
    out.put(&dst, &a.data.take(&src))?;
    Array::new(a.ty, out_dims, out)
}

pub fn iota(ty: PrimitiveType, dims: &[usize], dim: usize) -> Result<Array> {
    if dim >= dims.len() {
        return Err(err(format!("iota dimension {dim} for rank {}", dims.len())));
    }
    let st = strides(dims);
    let n = element_count(dims)?;
    let v: Vec<f64> = (0..n).map(|i| ((i / st[dim]) % dims[dim]) as f64).collect();
    Array::new(ty, dims.to_vec(), from_f64_vec(ty, &v)?)
}

pub fn reverse(a: &Array, dims: &[i64]) -> Result<Array> {
    let st = strides(&a.dims);
    let mut step: Vec<isize> = st.iter().map(|&x| x as isize).collect();
    let mut base = 0isize;
    for &d in dims {
        let d = dim_index(d, a.rank(), "reverse dimension")?;
        if a.dims[d] > 0 {
            base += (a.dims[d] - 1) as isize * st[d] as isize;
        }
        step[d] = -step[d];
    }
    let data = a.data.strided(&a.dims, &step, base);
    Array::new(a.ty, a.dims.clone(), data)
}

/// XLA gather dimension numbers.
pub struct GatherDims {
    pub offset_dims: Vec<usize>,
    pub collapsed_slice_dims: Vec<usize>,
    pub start_index_map: Vec<usize>,
    pub index_vector_dim: usize,
    pub operand_batching_dims: Vec<usize>,
    pub start_indices_batching_dims: Vec<usize>,
    pub slice_sizes: Vec<usize>,
}

impl GatherDims {
    pub fn from_instr(instr: &Instruction) -> Result<GatherDims> {
        let us = |k: &str, req: bool| -> Result<Vec<usize>> {
            let v = if req {
                attrs::int_list_req(instr, k)?
            } else {
                attrs::int_list(instr, k)?
            };
            v.iter()
                .map(|&x| usize::try_from(x).map_err(|_| err(format!("negative {k}"))))
                .collect()
        };
        Ok(GatherDims {
            offset_dims: us("offset_dims", false)?,
            collapsed_slice_dims: us("collapsed_slice_dims", false)?,
            start_index_map: us("start_index_map", false)?,
            index_vector_dim: attrs::int_attr(instr, "index_vector_dim")?
                .and_then(|v| usize::try_from(v).ok())
                .ok_or_else(|| err("gather without index_vector_dim"))?,
            operand_batching_dims: us("operand_batching_dims", false)?,
            start_indices_batching_dims: us("start_indices_batching_dims", false)?,
            slice_sizes: us("slice_sizes", true)?,
        })
    }
}

/// Reads the index vector at batch position `batch` (indices' dims minus
/// `index_vector_dim`, in order).
pub fn index_vector(
    idx: &Array,
    ivd: usize,
    batch: &[usize],
    n: usize,
    ist: &[usize],
) -> Result<Vec<i64>> {
    let base: usize = ist
        .iter()
        .enumerate()
        .filter(|&(k, _)| k != ivd)
        .zip(batch)
        .map(|((_, &s), &b)| s * b)
        .sum();
    (0..n)
        .map(|j| {
            let off = if ivd < idx.rank() { j * ist[ivd] } else { 0 };
            idx.index_at(base + off)
        })
        .collect()
}

pub fn gather(a: &Array, idx: &Array, g: &GatherDims, out_dims: &[usize]) -> Result<Array> {
    let rank = a.rank();
    if g.slice_sizes.len() != rank {
        return Err(err("gather: slice_sizes does not match the operand rank"));
    }
    for (k, (&z, &d)) in g.slice_sizes.iter().zip(&a.dims).enumerate() {
        if z > d {
            return Err(err(format!(
                "gather: slice size {z} exceeds operand dimension {k} ({d})"
            )));
        }
    }
    let ivd = g.index_vector_dim;
    if ivd > idx.rank() {
        return Err(err("gather: index_vector_dim out of range"));
    }
    let nidx = if ivd < idx.rank() { idx.dims[ivd] } else { 1 };
    if nidx != g.start_index_map.len() {
        return Err(err(format!(
            "gather: index vectors have {nidx} elements, start_index_map {}",
            g.start_index_map.len()
        )));
    }
    let batch_rank = idx.rank() - usize::from(ivd < idx.rank());
    if out_dims.len() != batch_rank + g.offset_dims.len() {
        return Err(err(
            "gather: result rank does not match the dimension numbers",
        ));
    }
    // Operand dims that offsets walk: not collapsed, not batching.
    let window_dims: Vec<usize> = (0..rank)
        .filter(|d| !g.collapsed_slice_dims.contains(d) && !g.operand_batching_dims.contains(d))
        .collect();
    if g.offset_dims.windows(2).any(|w| w[0] >= w[1]) {
        return Err(err("gather: offset_dims must be sorted and unique"));
    }
    if window_dims.len() != g.offset_dims.len() {
        return Err(err(
            "gather: offset_dims does not match the operand's window dims",
        ));
    }
    for (&od, &wd) in g.offset_dims.iter().zip(&window_dims) {
        if od >= out_dims.len() || out_dims[od] != g.slice_sizes[wd] {
            return Err(err("gather: result shape does not match slice_sizes"));
        }
    }
    for &d in g
        .start_index_map
        .iter()
        .chain(&g.collapsed_slice_dims)
        .chain(&g.operand_batching_dims)
    {
        if d >= rank {
            return Err(err("gather: dimension number out of range"));
        }
    }
    // Position of each indices dim among the batch coordinates.
    let idx_batch_pos = |d: usize| -> Result<usize> {
        if d >= idx.rank() || d == ivd {
            return Err(err("gather: start_indices_batching_dims out of range"));
        }
        Ok(if d > ivd { d - 1 } else { d })
    };
    let sib: Vec<usize> = g
        .start_indices_batching_dims
        .iter()
        .map(|&d| idx_batch_pos(d))
        .collect::<Result<_>>()?;
    let batch_out_dims: Vec<usize> = (0..out_dims.len())
        .filter(|d| !g.offset_dims.contains(d))
        .collect();
    // The result's batch dims walk the indices' batch dims, size for size.
    let index_batch: Vec<usize> = (0..idx.rank())
        .filter(|&d| d != ivd)
        .map(|d| idx.dims[d])
        .collect();
    let out_batch: Vec<usize> = batch_out_dims.iter().map(|&d| out_dims[d]).collect();
    if out_batch != index_batch {
        return Err(err(
            "gather: the result's batch dimensions do not match the indices",
        ));
    }
    let ist = strides(&idx.dims);
    let ast = strides(&a.dims);
    let ost = strides(out_dims);
    let n = element_count(out_dims)?;
    let mut map = Vec::with_capacity(n);
    let mut out_idx = vec![0usize; out_dims.len()];
    let mut batch = vec![0usize; batch_rank];
    let mut last_batch: Option<Vec<usize>> = None;
    let mut start = vec![0i64; rank];
    for i in 0..n {
        for k in 0..out_dims.len() {
            out_idx[k] = (i / ost[k]) % out_dims[k].max(1);
        }
        for (b, &d) in batch_out_dims.iter().enumerate() {
            batch[b] = out_idx[d];
        }
        if last_batch.as_deref() != Some(&batch[..]) {
            let v = index_vector(idx, ivd, &batch, nidx, &ist)?;
            start.iter_mut().for_each(|s| *s = 0);
            for (k, &d) in g.start_index_map.iter().enumerate() {
                start[d] = v[k];
            }
            for (k, &d) in g.operand_batching_dims.iter().enumerate() {
                start[d] = batch[sib[k]] as i64;
            }
            for ((s, &d), &z) in start.iter_mut().zip(&a.dims).zip(&g.slice_sizes) {
                *s = (*s).clamp(0, (d - z) as i64);
            }
            last_batch = Some(batch.clone());
        }
        let mut lin = 0usize;
        for d in 0..rank {
            lin += start[d] as usize * ast[d];
        }
        for (&od, &wd) in g.offset_dims.iter().zip(&window_dims) {
            lin += out_idx[od] * ast[wd];
        }
        map.push(lin);
    }
    Array::new(a.ty, out_dims.to_vec(), a.data.take(&map))
}
