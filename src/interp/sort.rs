//! sort (comparator computation, stable), the `topk` op, and XLA:CPU's
//! `TopK` custom call.
//!
//! Sorting is a merge sort of our own: a comparator computation can be
//! inconsistent (or fail), and that must give an error or some order,
//! never a panic.

use super::array::{shape_dims, Array, Data, Value};
use super::attrs;
use super::convert::{from_f64_vec, to_f64_vec};
use super::elementwise::{dir_holds, total_key};
use super::reduce::scalar_at;
use super::scalar_prog::Comparator;
use super::shape_ops::{transpose, transposed};
use super::{err, Combiner, Interpreter, Result};
use crate::ir::{
    AttrValue, CompId, ComparisonDirection, ComparisonType, Computation, Instruction, Opcode,
};
use std::cmp::Ordering;
use std::sync::Arc;

/// Stable merge sort of `v` with a fallible strict "less" predicate.
pub fn merge_sort(
    v: &mut Vec<usize>,
    less: &mut dyn FnMut(usize, usize) -> Result<bool>,
) -> Result<()> {
    let n = v.len();
    let mut buf = v.clone();
    let mut width = 1;
    while width < n {
        let mut i = 0;
        while i < n {
            let mid = (i + width).min(n);
            let hi = (i + 2 * width).min(n);
            let (mut l, mut r, mut o) = (i, mid, i);
            while l < mid && r < hi {
                // Take from the right only when strictly less: stable.
                if less(v[r], v[l])? {
                    buf[o] = v[r];
                    r += 1;
                } else {
                    buf[o] = v[l];
                    l += 1;
                }
                o += 1;
            }
            buf[o..o + (mid - l)].copy_from_slice(&v[l..mid]);
            o += mid - l;
            buf[o..o + (hi - r)].copy_from_slice(&v[r..hi]);
            i = hi;
        }
        std::mem::swap(v, &mut buf);
        width *= 2;
    }
    Ok(())
}

/// Keys for comparing elements of one array.
enum Keys {
    F(Vec<f64>),
    S(Vec<i64>),
    U(Vec<u64>),
    P(Vec<bool>),
}

impl Keys {
    fn of(a: &Array) -> Result<Keys> {
        Ok(match &a.data {
            Data::S(v) => Keys::S(v.clone()),
            Data::U(v) => Keys::U(v.clone()),
            Data::Pred(v) => Keys::P(v.clone()),
            Data::C64(_) | Data::C128(_) => {
                return Err(super::unsupported(format!(
                    "ordering {} keys is not supported (XLA compares complex numbers for equality only)",
                    a.ty
                )))
            }
            d => Keys::F(to_f64_vec(d, a.ty)),
        })
    }

    /// As `elementwise::compare` orders elements of `bits` bits under `t`.
    fn cmp(&self, i: usize, j: usize, t: ComparisonType, bits: u32) -> Option<Ordering> {
        use super::array::{wrap_s, wrap_u};
        match self {
            Keys::F(v) if t == ComparisonType::TotalOrder => {
                Some(total_key(v[i]).cmp(&total_key(v[j])))
            }
            Keys::F(v) => v[i].partial_cmp(&v[j]),
            Keys::S(v) if t == ComparisonType::Unsigned => {
                Some(wrap_u(v[i] as u64, bits).cmp(&wrap_u(v[j] as u64, bits)))
            }
            Keys::S(v) => Some(v[i].cmp(&v[j])),
            Keys::U(v) if t == ComparisonType::Signed => {
                Some(wrap_s(v[i] as i64, bits).cmp(&wrap_s(v[j] as i64, bits)))
            }
            Keys::U(v) => Some(v[i].cmp(&v[j])),
            Keys::P(v) => Some(v[i].cmp(&v[j])),
        }
    }
}

/// The positions `r` in the stable order of `compare(a, b), direction=d`
/// on `keys`, sorted by an unsigned key per element, when that compare is a
/// strict weak order (LT or GT on integers, on floats in total order, or
/// on floats of a row without NaN): then the stable order is unique, so it
/// is the one [`merge_sort`] gives. None otherwise.
fn sort_by_order_keys(
    r: &[usize],
    keys: &Keys,
    d: ComparisonDirection,
    t: ComparisonType,
    bits: u32,
    read: usize,
) -> Option<Vec<usize>> {
    let mut pairs = order_keys(r, keys, d, t, bits)?;
    // Equal keys keep their positions' order: (key, position) is a total
    // order, so an unstable sort gives the stable order, and the `read`
    // smallest pairs, sorted, are its first `read`.
    if read > 0 && read < pairs.len() {
        pairs.select_nth_unstable(read - 1);
        pairs[..read].sort_unstable();
    } else {
        pairs.sort_unstable();
    }
    Some(pairs.into_iter().map(|(_, i)| i).collect())
}

/// Per position of `r`: (an unsigned key whose ascending order is the
/// order of `compare(a, b), direction=d, type=t`, the position), when that
/// compare is a strict weak order (LT or GT on integers, on floats in
/// total order, or on floats of a row without NaN): then the stable order
/// is unique, so it is the one [`merge_sort`] gives. None otherwise.
fn order_keys(
    r: &[usize],
    keys: &Keys,
    d: ComparisonDirection,
    t: ComparisonType,
    bits: u32,
) -> Option<Vec<(u64, usize)>> {
    const SIGN: u64 = 1 << 63;
    let descending = match d {
        ComparisonDirection::Lt => false,
        ComparisonDirection::Gt => true,
        _ => return None,
    };
    // The key's kind and the compare's type chosen once per row, not per
    // element.
    fn collect(
        r: &[usize],
        descending: bool,
        key: impl Fn(usize) -> Option<u64>,
    ) -> Option<Vec<(u64, usize)>> {
        let flip = if descending { u64::MAX } else { 0 };
        let mut pairs: Vec<(u64, usize)> = Vec::with_capacity(r.len());
        for &i in r {
            pairs.push((key(i)? ^ flip, i));
        }
        Some(pairs)
    }
    let pairs = match keys {
        Keys::F(v) if t == ComparisonType::TotalOrder => {
            collect(r, descending, |i| Some(total_key(v[i]) as u64 ^ SIGN))
        }
        // + 0.0 makes -0 into +0: equal, as partial_cmp has them.
        Keys::F(v) => collect(r, descending, |i| {
            (!v[i].is_nan()).then(|| total_key(v[i] + 0.0) as u64 ^ SIGN)
        }),
        Keys::S(v) if t == ComparisonType::Unsigned => collect(r, descending, |i| {
            Some(super::array::wrap_u(v[i] as u64, bits))
        }),
        Keys::S(v) => collect(r, descending, |i| Some(v[i] as u64 ^ SIGN)),
        Keys::U(v) if t == ComparisonType::Signed => collect(r, descending, |i| {
            Some(super::array::wrap_s(v[i] as i64, bits) as u64 ^ SIGN)
        }),
        Keys::U(v) => collect(r, descending, |i| Some(v[i])),
        Keys::P(v) => collect(r, descending, |i| Some(u64::from(v[i]))),
    }?;
    Some(pairs)
}

/// [`top_rows`] for `compare(a, b), direction=d, type=t` on `keys`: the
/// first k of each row selected, then sorted, by [`order_keys`] (None when
/// those do not apply).
fn top_rows_by_keys(
    x: &Array,
    k: usize,
    keys: &Keys,
    d: ComparisonDirection,
    t: ComparisonType,
) -> Result<Option<(Vec<usize>, Vec<usize>)>> {
    let (row, rows) = top_k_rows(x, k)?;
    let mut abs = Vec::with_capacity(rows * k);
    let mut rel = Vec::with_capacity(rows * k);
    let bits = x.ty.bit_width();
    for r in 0..rows {
        let pos: Vec<usize> = (r * row..(r + 1) * row).collect();
        let Some(mut pairs) = order_keys(&pos, keys, d, t, bits) else {
            return Ok(None);
        };
        if k < row && k > 0 {
            pairs.select_nth_unstable(k - 1);
        }
        pairs.truncate(k);
        pairs.sort_unstable();
        for (_, p) in pairs {
            abs.push(p);
            rel.push(p - r * row);
        }
    }
    Ok(Some((abs, rel)))
}

/// Sorts each row (last dimension) of the arrays `xs` (already transposed
/// so the sort dimension is last) with the comparator; returns, per row,
/// the permutation (absolute element positions).
///
/// Only the first `read` positions of each row need be in order (see
/// [`rows_read`]): where the rows are sorted by keys, the rest of a row is
/// left in some order.
fn sort_rows(
    it: &Interpreter,
    comp: CompId,
    xs: &[&Array],
    row: usize,
    read: usize,
) -> Result<Vec<usize>> {
    let total = xs[0].len();
    let mut perm: Vec<usize> = (0..total).collect();
    if row == 0 {
        return Ok(perm);
    }
    match it.combiner(comp) {
        Combiner::Compare(d, t) => {
            let t = t.unwrap_or_else(|| ComparisonType::default_for(xs[0].ty));
            let keys = Keys::of(xs[0])?;
            let bits = xs[0].ty.bit_width();
            let nan = matches!(&keys, Keys::F(v) if v.iter().any(|x| x.is_nan()));
            let by_keys = matches!(d, ComparisonDirection::Lt | ComparisonDirection::Gt)
                && (t == ComparisonType::TotalOrder || !nan);
            if by_keys {
                // Rows on all cores when large (a thread may wait for a
                // core longer than a small sort takes).
                let worth = perm.len() >= super::par::MIN_PARALLEL && perm.len() / row >= 2;
                super::par::for_chunks_if(&mut perm, row, worth, |_, rows| {
                    for r in rows.chunks_mut(row) {
                        if let Some(sorted) = sort_by_order_keys(r, &keys, d, t, bits, read) {
                            r.copy_from_slice(&sorted);
                        }
                    }
                });
                return Ok(perm);
            }
            for r in perm.chunks_mut(row) {
                let mut v = r.to_vec();
                merge_sort(&mut v, &mut |i, j| {
                    Ok(dir_holds(d, keys.cmp(i, j, t, bits)))
                })?;
                r.copy_from_slice(&v);
            }
        }
        _ => {
            let prog = it.scalar_prog(comp);
            if let Some(cmp) = prog.as_deref().and_then(|p| Comparator::new(p, xs)) {
                // Rows on all cores when large (a thread may wait for a
                // core longer than a small sort takes).
                let worth = perm.len() >= super::par::MIN_PARALLEL && perm.len() / row >= 2;
                super::par::for_chunks_if(&mut perm, row, worth, |_, rows| {
                    let mut vals = cmp.scratch();
                    for r in rows.chunks_mut(row) {
                        let mut v = r.to_vec();
                        // The predicate cannot fail, nor can the sort then.
                        if merge_sort(&mut v, &mut |i, j| Ok(cmp.less(i, j, &mut vals))).is_ok() {
                            r.copy_from_slice(&v);
                        }
                    }
                });
                return Ok(perm);
            }
            for r in perm.chunks_mut(row) {
                let mut v = r.to_vec();
                merge_sort(&mut v, &mut |i, j| {
                    let mut args = Vec::with_capacity(2 * xs.len());
                    for x in xs {
                        args.push(scalar_at(x, i));
                        args.push(scalar_at(x, j));
                    }
                    let res = it.call(comp, &args)?;
                    match &res.as_array()?.data {
                        Data::Pred(p) if p.len() == 1 => Ok(p[0]),
                        _ => Err(err("sort comparator did not return pred[]")),
                    }
                })?;
                r.copy_from_slice(&v);
            }
        }
    }
    Ok(perm)
}

fn inverse(perm: &[usize]) -> Vec<usize> {
    let mut inv = vec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inv[p] = i;
    }
    inv
}

/// How many leading positions of each row (along dimension `d`, of
/// length `row`) the users of `sort` in `comp` can read: when every user
/// is a `get-tuple-element` (not the root) read only by slices, the
/// largest limit of those slices along `d` (XLA's `approx_max_k` and
/// `top_k` on CPU: a sort, then a slice of the first k); else `row`.
/// A value `--check-numerics` keeps is read whole.
fn rows_read(
    it: &Interpreter,
    comp: &Computation,
    sort: &Instruction,
    d: usize,
    row: usize,
) -> usize {
    let users = sort.users();
    let Some(&first) = users.first() else {
        return row;
    };
    let gte = comp.instr(first);
    if gte.opcode != Opcode::GetTupleElement || gte.operands().len() != 1 {
        return row;
    }
    let id = gte.operand(0);
    let root = comp.root_opt();
    if root == Some(id) || it.capture.as_ref().is_some_and(|c| c.may_keep(id)) {
        return row;
    }
    let mut read = 0usize;
    for &u in users {
        let g = comp.instr(u);
        if g.opcode != Opcode::GetTupleElement
            || root == Some(u)
            || it.capture.as_ref().is_some_and(|c| c.may_keep(u))
        {
            return row;
        }
        for &s in g.users() {
            let slice = comp.instr(s);
            if slice.opcode != Opcode::Slice {
                return row;
            }
            let Some(&(start, limit, _)) = attrs::slice_attr(slice)
                .ok()
                .as_ref()
                .and_then(|v| v.get(d))
            else {
                return row;
            };
            match usize::try_from(limit) {
                Ok(l) if start >= 0 && l <= row => read = read.max(l),
                _ => return row,
            }
        }
    }
    read
}

pub fn sort(
    it: &Interpreter,
    comp: &Computation,
    instr: &Instruction,
    ops: &[&Value],
) -> Result<Value> {
    let inputs: Vec<&Arc<Array>> = ops.iter().map(|v| v.as_array()).collect::<Result<_>>()?;
    let first = inputs.first().ok_or_else(|| err("sort of nothing"))?;
    if inputs.iter().any(|a| a.dims != first.dims) {
        return Err(err("sort operands differ in shape"));
    }
    let rank = first.rank();
    let d = instr
        .dimensions()
        .and_then(|d| d.first().copied())
        .ok_or_else(|| err("sort without dimensions"))?;
    let d = attrs::dim_index(d, rank, "sort dimension")?;
    let read = rows_read(it, comp, instr, d, first.dims[d]);
    let comp = instr
        .to_apply()
        .ok_or_else(|| err("sort without a comparator"))?;
    let perm: Vec<usize> = (0..rank).filter(|&k| k != d).chain([d]).collect();
    // Sorting along the last dimension (the usual case) copies nothing
    // but the sorted result.
    let xs: Vec<std::borrow::Cow<Array>> = inputs
        .iter()
        .map(|a| transposed(a, &perm))
        .collect::<Result<_>>()?;
    let xs: Vec<&Array> = xs.iter().map(|x| &**x).collect();
    let order = sort_rows(it, comp, &xs, first.dims[d], read)?;
    let back = inverse(&perm);
    let outs: Vec<Value> = xs
        .iter()
        .map(|x| {
            let sorted = Array::new(x.ty, x.dims.clone(), x.data.take(&order))?;
            if back.iter().enumerate().all(|(i, &p)| i == p) {
                Ok(Value::array(sorted))
            } else {
                transpose(&sorted, &back).map(Value::array)
            }
        })
        .collect::<Result<_>>()?;
    Ok(if outs.len() == 1 && !instr.shape.is_tuple() {
        outs.into_iter().next().expect("one output")
    } else {
        Value::Tuple(outs.into())
    })
}

/// The length of `x`'s rows (its last dimension) and how many there are,
/// for a top-`k` of each.
fn top_k_rows(x: &Array, k: usize) -> Result<(usize, usize)> {
    let row = *x.dims.last().ok_or_else(|| err("top-k of a scalar"))?;
    if k > row {
        return Err(err(format!("k = {k} exceeds the last dimension ({row})")));
    }
    Ok((row, x.len().checked_div(row).unwrap_or(0)))
}

/// Per row of the last dimension: the first `k` positions of the stable
/// order `less`. Returns (absolute positions, in-row positions).
pub fn top_rows(
    x: &Array,
    k: usize,
    less: &mut dyn FnMut(usize, usize) -> Result<bool>,
) -> Result<(Vec<usize>, Vec<usize>)> {
    let (row, rows) = top_k_rows(x, k)?;
    let mut abs = Vec::with_capacity(rows * k);
    let mut rel = Vec::with_capacity(rows * k);
    for r in 0..rows {
        let mut v: Vec<usize> = (r * row..(r + 1) * row).collect();
        merge_sort(&mut v, less)?;
        for &p in &v[..k] {
            abs.push(p);
            rel.push(p - r * row);
        }
    }
    Ok((abs, rel))
}

/// The (values, indices) result of a top-k, with the result's shapes.
pub fn topk_result(
    x: &Array,
    shape: &crate::ir::Shape,
    abs: &[usize],
    index_values: &[f64],
) -> Result<Value> {
    let elems = shape
        .tuple_elements()
        .filter(|e| e.len() == 2)
        .ok_or_else(|| err("top-k result is not a (values, indices) tuple"))?;
    let vdims = shape_dims(&elems[0])?;
    let idims = shape_dims(&elems[1])?;
    let ity = elems[1].element_type();
    if !ity.is_integral() {
        return Err(err(format!("top-k index type {ity} is not an integer")));
    }
    let vals = Array::new(x.ty, vdims, x.data.take(abs))?;
    let idx = Array::new(ity, idims, from_f64_vec(ity, index_values)?)?;
    Ok(Value::Tuple(
        vec![Value::array(vals), Value::array(idx)].into(),
    ))
}

/// The result's minor dimension: k.
pub fn result_k(shape: &crate::ir::Shape) -> Result<usize> {
    shape
        .tuple_elements()
        .and_then(|e| e.first())
        .and_then(|s| s.dims().last().copied())
        .and_then(|k| usize::try_from(k).ok())
        .ok_or_else(|| err("top-k result is not a tuple of arrays"))
}

/// The HLO `topk` op: total order, largest (or smallest) first, ties in
/// index order, s32 indices.
pub fn topk_op(instr: &Instruction, ops: &[&Value]) -> Result<Value> {
    let x = ops
        .first()
        .ok_or_else(|| err("topk without an operand"))?
        .as_array()?;
    let k = attrs::int_attr(instr, "k")?.ok_or_else(|| err("topk without k"))?;
    let k = usize::try_from(k).map_err(|_| err("negative k"))?;
    if result_k(&instr.shape)? != k {
        return Err(err("topk: k does not match the result shape"));
    }
    let largest = attrs::bool_attr(instr, "largest")?.unwrap_or(true);
    let keys = Keys::of(x)?;
    let bits = x.ty.bit_width();
    let d = if largest {
        ComparisonDirection::Gt
    } else {
        ComparisonDirection::Lt
    };
    if let Some((abs, rel)) = top_rows_by_keys(x, k, &keys, d, ComparisonType::TotalOrder)? {
        let iv: Vec<f64> = rel.iter().map(|&r| r as f64).collect();
        return topk_result(x, &instr.shape, &abs, &iv);
    }
    let (abs, rel) = top_rows(x, k, &mut |i, j| {
        let o = keys.cmp(i, j, ComparisonType::TotalOrder, bits);
        Ok(if largest {
            o == Some(Ordering::Greater)
        } else {
            o == Some(Ordering::Less)
        })
    })?;
    let iv: Vec<f64> = rel.iter().map(|&r| r as f64).collect();
    topk_result(x, &instr.shape, &abs, &iv)
}

/// XLA:CPU's `TopK` custom call: sorts each row with its comparator.
pub fn xla_topk(it: &Interpreter, instr: &Instruction, ops: &[&Value]) -> Result<Value> {
    let x = ops
        .first()
        .ok_or_else(|| err("TopK without an operand"))?
        .as_array()?;
    let comp = match instr.attr("called_computations") {
        Some(AttrValue::Comps(cs)) if cs.len() == 1 => cs[0],
        _ => return Err(err("TopK without a comparator computation")),
    };
    let k = result_k(&instr.shape)?;
    let xs = [(**x).clone()];
    let comb = it.combiner(comp);
    let keys = Keys::of(x)?;
    if let Combiner::Compare(d, t) = comb {
        let t = t.unwrap_or_else(|| ComparisonType::default_for(x.ty));
        if let Some((abs, rel)) = top_rows_by_keys(x, k, &keys, d, t)? {
            let iv: Vec<f64> = rel.iter().map(|&r| r as f64).collect();
            return topk_result(x, &instr.shape, &abs, &iv);
        }
    }
    let prog = it.scalar_prog(comp);
    let fast = prog.as_deref().and_then(|p| Comparator::new(p, &[&**x]));
    let mut vals = fast.as_ref().map(|c| c.scratch()).unwrap_or_default();
    let (abs, rel) = top_rows(x, k, &mut |i, j| match comb {
        _ if comb == Combiner::General && fast.is_some() => {
            Ok(fast.as_ref().is_some_and(|c| c.less(i, j, &mut vals)))
        }
        Combiner::Compare(d, t) => {
            let t = t.unwrap_or_else(|| ComparisonType::default_for(x.ty));
            Ok(dir_holds(d, keys.cmp(i, j, t, x.ty.bit_width())))
        }
        _ => {
            let args = [scalar_at(&xs[0], i), scalar_at(&xs[0], j)];
            match &it.call(comp, &args)?.as_array()?.data {
                Data::Pred(p) if p.len() == 1 => Ok(p[0]),
                _ => Err(err("TopK comparator did not return pred[]")),
            }
        }
    })?;
    let iv: Vec<f64> = rel.iter().map(|&r| r as f64).collect();
    topk_result(x, &instr.shape, &abs, &iv)
}

/// Neuron's top-k order: NaN (either sign) above +inf, then numeric
/// descending; equal values (-0 == +0) keep index order.
pub fn neuron_topk_less(v: &[f64]) -> impl FnMut(usize, usize) -> Result<bool> + '_ {
    move |i, j| {
        let (a, b) = (v[i], v[j]);
        Ok(match (a.is_nan(), b.is_nan()) {
            (true, false) => true,
            (false, false) => a > b,
            _ => false,
        })
    }
}
