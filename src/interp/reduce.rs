//! Ops that call a computation per element: reduce, reduce-window,
//! scatter, map. A computation that is a single commutative op on its two
//! parameters (add, max, ...) runs as that op directly; any other one is
//! evaluated per element.

use super::array::{shape_dims, strides, Array, Data, Value};
use super::attrs;
use super::convert::{from_f32_vec, from_f64_vec, to_f32_vec, to_f64_vec};
use super::elementwise::{
    fbin32, fbin64, fmax32, fmin32, pbin, sbin, ubin, with_f32_op, with_f64_op, BinOp,
};
use super::narrow;
use super::scalar_prog::{keys_of, Key, PairClass, PairTable, Prog, Src, Val};
use super::shape_ops::transposed;
use super::{err, Combiner, Interpreter, Result};
use crate::ir::{CompId, Instruction};
use std::sync::Arc;

fn to_apply(instr: &Instruction) -> Result<CompId> {
    instr
        .to_apply()
        .ok_or_else(|| err("missing to_apply computation"))
}

/// Element `i` of `a` as a scalar value.
pub fn scalar_at(a: &Array, i: usize) -> Value {
    Value::Array(Arc::new(Array {
        ty: a.ty,
        dims: Vec::new(),
        data: a.data.take(&[i]),
    }))
}

/// The results of a computation returning N scalars (a tuple when N > 1).
fn split_results(v: Value, n: usize) -> Result<Vec<Value>> {
    if n == 1 {
        if let Value::Tuple(t) = &v {
            if t.len() == 1 {
                return Ok(vec![t[0].clone()]);
            }
        }
        return Ok(vec![v]);
    }
    let t = v.tuple_elements()?;
    if t.len() != n {
        return Err(err(format!(
            "the called computation returned {} values, {n} expected",
            t.len()
        )));
    }
    Ok(t.to_vec())
}

/// Gathers scalar values into an array of `dims`.
fn collect_scalars(
    vals: &[Value],
    ty: crate::ir::PrimitiveType,
    dims: Vec<usize>,
) -> Result<Array> {
    let datas = vals
        .iter()
        .map(|v| {
            let a = v.as_array()?;
            if a.ty != ty || a.len() != 1 {
                return Err(err(format!(
                    "the called computation returned {}, {ty}[] expected",
                    a.shape_text()
                )));
            }
            Ok(&a.data)
        })
        .collect::<Result<Vec<_>>>()?;
    if datas.is_empty() {
        return Array::new(ty, dims, Data::zeros(ty, 0)?);
    }
    Array::new(ty, dims, Data::concat(&datas)?)
}

/// Folds `x[i]` into `acc` with a binary op, in place (same types).
pub fn fold_at(
    op: BinOp,
    acc: &mut Data,
    ai: usize,
    x: &Data,
    xi: usize,
    ty: crate::ir::PrimitiveType,
) -> Result<()> {
    let bits = ty.bit_width();
    match (acc, x) {
        (Data::F32(a), Data::F32(b)) => a[ai] = fbin32(op, a[ai], b[xi])?,
        (Data::F64(a), Data::F64(b)) => a[ai] = fbin64(op, a[ai], b[xi])?,
        (Data::S(a), Data::S(b)) => a[ai] = sbin(op, a[ai], b[xi], bits)?,
        (Data::U(a), Data::U(b)) => a[ai] = ubin(op, a[ai], b[xi], bits)?,
        (Data::Pred(a), Data::Pred(b)) => a[ai] = pbin(op, a[ai], b[xi])?,
        (acc @ (Data::C64(_) | Data::C128(_)), x) => {
            let p = super::complex::to_c128(&acc.take(&[ai]))[0];
            let q = super::complex::to_c128(&x.take(&[xi]))[0];
            let r = super::complex::from_c128(ty, vec![super::complex::bin_c128(op, p, q)?])?;
            acc.set_from(ai, &r, 0)?;
        }
        (acc, x) => {
            let p = to_f32_vec(&acc.take(&[ai]), ty)[0];
            let q = to_f32_vec(&x.take(&[xi]), ty)[0];
            let r = from_f32_vec(ty, vec![fbin32(op, p, q)?])?;
            acc.set_from(ai, &r, 0)?;
        }
    }
    Ok(())
}

/// Reduces contiguous chunks of `r` elements of `x` (one per output).
fn fold_chunks(op: BinOp, x: &Array, init: &Array, r: usize) -> Result<Data> {
    let bits = x.ty.bit_width();
    let exact_sum = matches!(op, BinOp::Add | BinOp::Mul);
    Ok(match (&x.data, &init.data) {
        (Data::S(v), Data::S(i)) => Data::S(chunks(v, r, |c| {
            c.iter().try_fold(i[0], |a, &b| sbin(op, a, b, bits))
        })?),
        (Data::U(v), Data::U(i)) => Data::U(chunks(v, r, |c| {
            c.iter().try_fold(i[0], |a, &b| ubin(op, a, b, bits))
        })?),
        (Data::Pred(v), Data::Pred(i)) => Data::Pred(chunks(v, r, |c| {
            c.iter().try_fold(i[0], |a, &b| pbin(op, a, b))
        })?),
        (Data::F32(v), Data::F32(i)) if matches!(op, BinOp::Max | BinOp::Min) => {
            // One instance per op: the step inlined, not called through a
            // pointer.
            Data::F32(if op == BinOp::Max {
                rows(v, r, |part| Ok(fold_extremum(part, r, i[0], fmax32)))?
            } else {
                rows(v, r, |part| Ok(fold_extremum(part, r, i[0], fmin32)))?
            })
        }
        (Data::F32(v), Data::F32(i)) if !exact_sum => Data::F32(chunks(v, r, |c| {
            c.iter().try_fold(i[0], |a, &b| fbin32(op, a, b))
        })?),
        (Data::F64(v), Data::F64(i)) => Data::F64(chunks(v, r, |c| {
            c.iter().try_fold(i[0], |a, &b| fbin64(op, a, b))
        })?),
        (Data::F32(v), Data::F32(i)) => {
            // In f64, rounded once.
            let init = f64::from(i[0]);
            let sums = if op == BinOp::Add {
                rows(v, r, |part| {
                    Ok(fold_rows(part, r, init, |a, b: f32| a + f64::from(b)))
                })?
            } else {
                rows(v, r, |part| {
                    Ok(fold_rows(part, r, init, |a, b: f32| a * f64::from(b)))
                })?
            };
            Data::F32(sums.into_iter().map(|s| s as f32).collect())
        }
        (Data::C64(_) | Data::C128(_), _) => {
            // In c128, rounded once.
            let v = super::complex::to_c128(&x.data);
            let i = super::complex::to_c128(&init.data);
            let out = chunks(&v, r, |c| {
                c.iter()
                    .try_fold(i[0], |a, &b| super::complex::bin_c128(op, a, b))
            })?;
            super::complex::from_c128(x.ty, out)?
        }
        (Data::F16(_) | Data::Bf16(_), _) => {
            // Exact values in f64, one rounding (as below), the elements
            // widened a block at a time.
            fbin64(op, 0.0, 0.0)?;
            let v = narrow::widen_data(&x.data)
                .ok_or_else(|| err("internal error: not a 16-bit float"))?;
            let i = to_f64_vec(&init.data, init.ty)[0];
            let out = with_f64_op!(op, f => rows(&v, r, |part| {
                Ok(fold_rows(part, r, i, move |a: f64, b: f32| f(a, f64::from(b))))
            }))?;
            from_f64_vec(x.ty, &out)?
        }
        _ => {
            // The 8-bit floats: exact values, one rounding.
            let v = to_f64_vec(&x.data, x.ty);
            let i = to_f64_vec(&init.data, init.ty);
            let out = chunks(&v, r, |c| c.iter().try_fold(i[0], |a, &b| fbin64(op, a, b)))?;
            from_f64_vec(x.ty, &out)?
        }
    })
}

/// [`fold_chunks`] of `x` viewed as rows of `nout` elements, output j
/// folding element j of each row in turn: the reduced dimensions are the
/// leading ones, so this is the order the transposed fold takes (the same
/// bits), but it goes a row at a time, across the outputs, which
/// vectorises and needs no transposed copy. None for the types left to
/// [`fold_chunks`] (integers, complex, pred, the 8-bit floats).
fn fold_leading(op: BinOp, x: &Array, init: &Array, nout: usize) -> Result<Option<Data>> {
    Ok(Some(match (&x.data, &init.data) {
        (Data::F32(v), Data::F32(i)) => match op {
            BinOp::Max => Data::F32(fold_columns(v, nout, i[0], fmax32)),
            BinOp::Min => Data::F32(fold_columns(v, nout, i[0], fmin32)),
            // In f64, rounded once.
            BinOp::Add | BinOp::Mul => {
                let init = f64::from(i[0]);
                let acc = if op == BinOp::Add {
                    fold_columns(v, nout, init, |a, b: f32| a + f64::from(b))
                } else {
                    fold_columns(v, nout, init, |a, b: f32| a * f64::from(b))
                };
                Data::F32(acc.into_iter().map(|a| a as f32).collect())
            }
            _ => {
                fbin32(op, 0.0, 0.0)?;
                Data::F32(with_f32_op!(op, f => fold_columns(v, nout, i[0], f)))
            }
        },
        (Data::F64(v), Data::F64(i)) => {
            fbin64(op, 0.0, 0.0)?;
            Data::F64(with_f64_op!(op, f => fold_columns(v, nout, i[0], f)))
        }
        (Data::F16(_) | Data::Bf16(_), _) => {
            // Exact values in f64, one rounding, as `fold_chunks`.
            fbin64(op, 0.0, 0.0)?;
            let Some(v) = narrow::widen_data(&x.data) else {
                return Ok(None);
            };
            let i = to_f64_vec(&init.data, init.ty);
            let acc = with_f64_op!(op, f => {
                fold_columns(&v, nout, i[0], move |a: f64, b: f32| f(a, f64::from(b)))
            });
            from_f64_vec(x.ty, &acc)?
        }
        _ => return Ok(None),
    }))
}

/// `acc[j] = step(acc[j], row[j])` for each row of `nout` elements of `v`
/// in turn, from `init`; the outputs split over the cores when `v` is
/// large.
fn fold_columns<T: Copy + Sync, A: Copy + Send + Sync>(
    v: &[T],
    nout: usize,
    init: A,
    step: impl Fn(A, T) -> A + Sync + Clone,
) -> Vec<A> {
    let mut acc = vec![init; nout];
    super::par::for_chunks_if(
        &mut acc,
        1,
        v.len() >= super::par::MIN_PARALLEL,
        |start, part| {
            let step = step.clone();
            for row in v.chunks_exact(nout) {
                for (a, &b) in part.iter_mut().zip(&row[start..]) {
                    *a = step(*a, b);
                }
            }
        },
    );
    acc
}

/// `f` of each chunk of `r` elements of `v`, the outputs split over the
/// cores when `v` is large (each output's fold is the same on any thread:
/// the summation order does not change).
fn chunks<T: Copy + Sync, U: Send>(
    v: &[T],
    r: usize,
    f: impl Fn(&[T]) -> Result<U> + Sync,
) -> Result<Vec<U>> {
    rows(v, r, |part| part.chunks(r).map(&f).collect())
}

/// `f` of consecutive parts of whole rows of `r` elements of `v` (one part
/// per core when `v` is large), each giving one output per row.
fn rows<T: Copy + Sync, U: Send>(
    v: &[T],
    r: usize,
    f: impl Fn(&[T]) -> Result<Vec<U>> + Sync,
) -> Result<Vec<U>> {
    if r == 0 {
        return Err(err("internal error: empty chunk"));
    }
    let nout = v.len().div_ceil(r);
    if v.len() < super::par::MIN_PARALLEL || nout < 2 || super::par::threads() < 2 {
        return f(v);
    }
    let t = super::par::threads().min(nout);
    let per = nout.div_ceil(t) * r;
    let mut parts: Vec<Result<Vec<U>>> = v.chunks(per).map(|_| Ok(Vec::new())).collect();
    super::par::for_chunks_if(&mut parts, 1, true, |start, slots| {
        for (j, slot) in slots.iter_mut().enumerate() {
            let from = (start + j) * per;
            *slot = f(&v[from..(from + per).min(v.len())]);
        }
    });
    let mut out = Vec::with_capacity(nout);
    for p in parts {
        out.extend(p?);
    }
    Ok(out)
}

/// Each row of `r` elements of `part` folded from `init` by `step`, in
/// order. Rows go [`LANES`] at a time, their folds interleaved: each is
/// still one chain in element order (the same bits), but the chains
/// overlap in the pipeline instead of each waiting on its last step.
fn fold_rows<T: Copy, A: Copy>(part: &[T], r: usize, init: A, step: impl Fn(A, T) -> A) -> Vec<A> {
    const LANES: usize = 8;
    let mut out = Vec::with_capacity(part.len().div_ceil(r.max(1)));
    if r == 0 {
        return out;
    }
    let mut groups = part.chunks_exact(r * LANES);
    for g in &mut groups {
        let mut acc = [init; LANES];
        for j in 0..r {
            for (l, a) in acc.iter_mut().enumerate() {
                *a = step(*a, g[l * r + j]);
            }
        }
        out.extend_from_slice(&acc);
    }
    for row in groups.remainder().chunks(r) {
        out.push(row.iter().fold(init, |a, &b| step(a, b)));
    }
    out
}

/// [`fold_rows`] for f32 max and min (`step` is `fmax32` or `fmin32`):
/// each row folded in eight lanes at once, so in another order. That gives
/// the element-order fold's bits whenever the result is neither NaN nor
/// zero, since equal values then have equal bits; a row whose result is
/// NaN (the first NaN's payload) or a zero (the sign of the first of the
/// tied zeros) is folded again in element order.
fn fold_extremum(part: &[f32], r: usize, init: f32, step: impl Fn(f32, f32) -> f32) -> Vec<f32> {
    const LANES: usize = 8;
    if r < 2 * LANES {
        return fold_rows(part, r, init, step);
    }
    part.chunks(r)
        .map(|row| {
            let mut acc = [init; LANES];
            let mut blocks = row.chunks_exact(LANES);
            for b in &mut blocks {
                for (a, &x) in acc.iter_mut().zip(b) {
                    *a = step(*a, x);
                }
            }
            let m = acc
                .iter()
                .chain(blocks.remainder())
                .fold(init, |a, &x| step(a, x));
            if m.is_nan() || m == 0.0 {
                row.iter().fold(init, |a, &x| step(a, x))
            } else {
                m
            }
        })
        .collect()
}

pub fn reduce(it: &Interpreter, instr: &Instruction, ops: &[&Value]) -> Result<Value> {
    if ops.is_empty() || ops.len() % 2 != 0 {
        return Err(err(format!("reduce with {} operands", ops.len())));
    }
    let n = ops.len() / 2;
    let inputs: Vec<&Arc<Array>> = ops[..n]
        .iter()
        .map(|v| v.as_array())
        .collect::<Result<_>>()?;
    let inits: Vec<&Arc<Array>> = ops[n..]
        .iter()
        .map(|v| v.as_array())
        .collect::<Result<_>>()?;
    let x0 = inputs[0];
    for (a, i) in inputs.iter().zip(&inits) {
        if a.dims != x0.dims {
            return Err(err("reduce inputs differ in shape"));
        }
        if i.len() != 1 || i.ty != a.ty {
            return Err(err(format!(
                "reduce init {} does not fit input {}",
                i.shape_text(),
                a.shape_text()
            )));
        }
    }
    let rank = x0.rank();
    let mut red: Vec<usize> = instr
        .dimensions()
        .unwrap_or(&[])
        .iter()
        .map(|&d| attrs::dim_index(d, rank, "reduce dimension"))
        .collect::<Result<_>>()?;
    red.sort_unstable();
    red.dedup();
    let kept: Vec<usize> = (0..rank).filter(|d| !red.contains(d)).collect();
    let out_dims: Vec<usize> = kept.iter().map(|&d| x0.dims[d]).collect();
    let r: usize = red.iter().map(|&d| x0.dims[d]).product();
    let nout: usize = out_dims.iter().product();
    let perm: Vec<usize> = kept.iter().chain(&red).copied().collect();
    let comp = to_apply(instr)?;
    // The reduced dimensions leading (a sum over the batch): folded a row
    // at a time, with no transpose.
    let leading = red.iter().enumerate().all(|(i, &d)| i == d);
    if let (1, true, Combiner::Bin(op)) = (n, leading && r > 0 && nout > 0, it.combiner(comp)) {
        if let Some(data) = fold_leading(op, x0, inits[0], nout)? {
            return Ok(Value::array(Array::new(x0.ty, out_dims, data)?));
        }
    }
    let xs: Vec<std::borrow::Cow<Array>> = inputs
        .iter()
        .map(|a| transposed(a, &perm))
        .collect::<Result<_>>()?;
    if n == 1 {
        if let Combiner::Bin(op) = it.combiner(comp) {
            let data = if r == 0 {
                inits[0].data.repeat_elem(0, nout)
            } else {
                fold_chunks(op, &xs[0], inits[0], r)?
            };
            return Ok(Value::array(Array::new(x0.ty, out_dims, data)?));
        }
    }
    if let Some(prog) = it.scalar_prog(comp) {
        let xs: Vec<&Array> = xs.iter().map(|x| &**x).collect();
        let inits: Vec<&Array> = inits.iter().map(|i| &***i).collect();
        if let Some(outs) = reduce_prog(&prog, &xs, &inits, r, nout)? {
            let outs: Vec<Value> = outs
                .into_iter()
                .map(|(ty, data)| Array::new(ty, out_dims.clone(), data).map(Value::array))
                .collect::<Result<_>>()?;
            return Ok(if n == 1 && !instr.shape.is_tuple() {
                outs.into_iter().next().expect("one output")
            } else {
                Value::Tuple(outs.into())
            });
        }
    }
    // General: call the reducer for each element, in row-major order of
    // the reduced dimensions.
    let mut results: Vec<Vec<Value>> = vec![Vec::with_capacity(nout); n];
    for o in 0..nout {
        let mut acc: Vec<Value> = inits.iter().map(|i| Value::Array((*i).clone())).collect();
        for j in 0..r {
            let mut args = acc.clone();
            args.extend(xs.iter().map(|x| scalar_at(x, o * r + j)));
            acc = split_results(it.call(comp, &args)?, n)?;
        }
        for (k, v) in acc.into_iter().enumerate() {
            results[k].push(v);
        }
    }
    let outs: Vec<Value> = results
        .iter()
        .zip(&inputs)
        .map(|(vals, a)| collect_scalars(vals, a.ty, out_dims.clone()).map(Value::array))
        .collect::<Result<_>>()?;
    Ok(if n == 1 && !instr.shape.is_tuple() {
        outs.into_iter().next().expect("one output")
    } else {
        Value::Tuple(outs.into())
    })
}

/// Where an accumulator's value is: copied from there at the end, so the
/// result has the very bits the general evaluator's would.
#[derive(Clone, Copy)]
enum Loc {
    Init(usize),
    Input(usize, usize),
    Const(usize),
    Pred(bool),
}

/// Reduce with a [`Prog`] reducer: the same fold as the general path
/// (each output from its init, the reduced elements in order), None when
/// the program does not fit the operands. `xs` are laid out with each
/// output's `r` reduced elements contiguous.
pub(crate) fn reduce_prog(
    prog: &Prog,
    xs: &[&Array],
    inits: &[&Array],
    r: usize,
    nout: usize,
) -> Result<Option<Vec<(crate::ir::PrimitiveType, Data)>>> {
    let n = xs.len();
    if prog.param_types.len() != 2 * n || prog.outputs.len() != n || (n > 1 && !prog.tuple_root) {
        return Ok(None);
    }
    for (k, x) in xs.iter().enumerate() {
        let ty = x.ty;
        if prog.param_types[k] != ty || prog.param_types[n + k] != ty || prog.output_types[k] != ty
        {
            return Ok(None);
        }
    }
    let locs = match prog.pair_table() {
        Some(table) if n == 2 => pair_fold(&table, xs, inits, r, nout),
        _ => None,
    };
    let locs = match locs {
        Some(locs) => locs,
        None => match prog_fold(prog, xs, inits, r, nout) {
            Some(locs) => locs,
            None => return Ok(None),
        },
    };
    let mut outs = Vec::with_capacity(n);
    for (k, x) in xs.iter().enumerate() {
        let ty = x.ty;
        let mut data = Data::zeros(ty, nout)?;
        for o in 0..nout {
            match locs[o * n + k] {
                Loc::Init(i) => data.set_from(o, &inits[i].data, 0)?,
                Loc::Input(i, pos) => data.set_from(o, &xs[i].data, pos)?,
                Loc::Const(c) => data.set_from(o, &prog.consts[c].data, 0)?,
                Loc::Pred(b) => data.set_from(o, &Data::Pred(vec![b]), 0)?,
            }
        }
        outs.push((ty, data));
    }
    Ok(Some(outs))
}

/// The keys of a two-operand reducer's elements, typed for [`PairClass`].
enum PairKeys<'a> {
    F(Vec<f64>),
    S(&'a [i64]),
    U(&'a [u64]),
}

fn pair_keys(a: &Array) -> Option<PairKeys<'_>> {
    Some(match &a.data {
        Data::S(v) => PairKeys::S(v),
        Data::U(v) => PairKeys::U(v),
        Data::Pred(_) | Data::C64(_) | Data::C128(_) => return None,
        d if a.ty.is_float() => PairKeys::F(to_f64_vec(d, a.ty)),
        _ => return None,
    })
}

/// [`reduce_prog`]'s fold for a reducer with a [`PairTable`] (JAX's
/// argmax/argmin): per element, the two classes and one table look-up
/// instead of running the program. The same locations as `prog_fold`.
fn pair_fold(
    table: &PairTable,
    xs: &[&Array],
    inits: &[&Array],
    r: usize,
    nout: usize,
) -> Option<Vec<Loc>> {
    let (x0, x1) = (pair_keys(xs[0])?, pair_keys(xs[1])?);
    let (i0, i1) = (pair_keys(inits[0])?, pair_keys(inits[1])?);
    fn run<A: PairClass + Sync, B: PairClass + Sync>(
        table: &PairTable,
        a: &[A],
        b: &[B],
        a0: A,
        b0: B,
        r: usize,
        nout: usize,
    ) -> Vec<Loc> {
        let mut locs: Vec<Loc> = vec![Loc::Pred(false); nout * 2];
        let worth = nout >= 2 && nout * r >= super::par::MIN_PARALLEL;
        super::par::for_chunks_if(&mut locs, 2, worth, |start, chunk| {
            for (c, out) in chunk.chunks_mut(2).enumerate() {
                let o = start / 2 + c;
                // usize::MAX: the init.
                let (mut va, mut pa, mut vb, mut pb) = (a0, usize::MAX, b0, usize::MAX);
                for pos in o * r..(o + 1) * r {
                    let take = table.take[6 * A::class(va, a[pos]) + B::class(vb, b[pos])];
                    if take & 1 != 0 {
                        (va, pa) = (a[pos], pos);
                    }
                    if take & 2 != 0 {
                        (vb, pb) = (b[pos], pos);
                    }
                }
                let loc = |k: usize, p: usize| {
                    if p == usize::MAX {
                        Loc::Init(k)
                    } else {
                        Loc::Input(k, p)
                    }
                };
                out[0] = loc(0, pa);
                out[1] = loc(1, pb);
            }
        });
        locs
    }
    macro_rules! second {
        ($a:expr, $a0:expr) => {
            match (&x1, &i1) {
                (PairKeys::F(b), PairKeys::F(b0)) => run(table, $a, b, $a0, *b0.first()?, r, nout),
                (PairKeys::S(b), PairKeys::S(b0)) => run(table, $a, b, $a0, *b0.first()?, r, nout),
                (PairKeys::U(b), PairKeys::U(b0)) => run(table, $a, b, $a0, *b0.first()?, r, nout),
                _ => return None,
            }
        };
    }
    Some(match (&x0, &i0) {
        (PairKeys::F(a), PairKeys::F(a0)) => second!(a, *a0.first()?),
        (PairKeys::S(a), PairKeys::S(a0)) => second!(a, *a0.first()?),
        (PairKeys::U(a), PairKeys::U(a0)) => second!(a, *a0.first()?),
        _ => return None,
    })
}

/// [`reduce_prog`]'s fold by running the program per element: where each
/// output's results come from (`locs[o * n + k]`: output o's k-th).
fn prog_fold(
    prog: &Prog,
    xs: &[&Array],
    inits: &[&Array],
    r: usize,
    nout: usize,
) -> Option<Vec<Loc>> {
    let n = xs.len();
    let keys = xs.iter().map(|x| keys_of(x)).collect::<Option<Vec<_>>>()?;
    let init_keys = inits
        .iter()
        .map(|i| keys_of(i).and_then(|k| k.first().copied()))
        .collect::<Option<Vec<_>>>()?;
    // Each output's fold on its own (outputs split over the cores when
    // large, as `chunks` does): locs[o * n + k] is where output o's k-th
    // result ends up.
    let mut locs: Vec<Loc> = vec![Loc::Pred(false); nout * n];
    let worth = nout >= 2 && nout * r >= super::par::MIN_PARALLEL;
    super::par::for_chunks_if(&mut locs, n.max(1), worth, |start, chunk| {
        let mut vals = prog.scratch();
        let mut acc: Vec<(Key, Loc)> = Vec::with_capacity(n);
        let mut next: Vec<(Key, Loc)> = Vec::with_capacity(n);
        for (c, out_locs) in chunk.chunks_mut(n).enumerate() {
            let o = start / n + c;
            acc.clear();
            acc.extend((0..n).map(|k| (init_keys[k], Loc::Init(k))));
            for j in 0..r {
                let pos = o * r + j;
                for k in 0..n {
                    vals[prog.param_nodes[k]] = Val {
                        key: acc[k].0,
                        src: Src::Param(k as u32),
                    };
                    vals[prog.param_nodes[n + k]] = Val {
                        key: keys[k][pos],
                        src: Src::Param((n + k) as u32),
                    };
                }
                prog.run_ops(&mut vals);
                next.clear();
                for &out in &prog.outputs {
                    let v = vals[out];
                    let loc = match v.src {
                        Src::Param(p) if (p as usize) < n => acc[p as usize].1,
                        Src::Param(p) => Loc::Input(p as usize - n, pos),
                        Src::Const(c) => Loc::Const(c as usize),
                        // Only pred logic computes values.
                        Src::Computed => Loc::Pred(matches!(v.key, Key::P(true))),
                    };
                    next.push((v.key, loc));
                }
                std::mem::swap(&mut acc, &mut next);
            }
            for (l, a) in out_locs.iter_mut().zip(&acc) {
                *l = a.1;
            }
        }
    });
    Some(locs)
}

pub fn reduce_window(it: &Interpreter, instr: &Instruction, ops: &[&Value]) -> Result<Value> {
    if ops.is_empty() || ops.len() % 2 != 0 {
        return Err(err(format!("reduce-window with {} operands", ops.len())));
    }
    let n = ops.len() / 2;
    let inputs: Vec<&Arc<Array>> = ops[..n]
        .iter()
        .map(|v| v.as_array())
        .collect::<Result<_>>()?;
    let inits: Vec<&Arc<Array>> = ops[n..]
        .iter()
        .map(|v| v.as_array())
        .collect::<Result<_>>()?;
    let x0 = inputs[0];
    for (a, i) in inputs.iter().zip(&inits) {
        if a.dims != x0.dims || i.len() != 1 || i.ty != a.ty {
            return Err(err("reduce-window operands do not fit together"));
        }
    }
    let rank = x0.rank();
    let win = attrs::window_attr(instr, rank)?;
    let mut out_dims = Vec::with_capacity(rank);
    for (d, w) in win.iter().enumerate() {
        let base = if x0.dims[d] == 0 {
            0
        } else {
            (x0.dims[d] as i64 - 1) * w.base_dilation + 1
        };
        let padded = base + w.pad_low + w.pad_high;
        let span = (w.size - 1) * w.window_dilation + 1;
        out_dims.push(if w.size == 0 || padded < span {
            0
        } else {
            ((padded - span) / w.stride + 1) as usize
        });
    }
    let expected = match &*instr.shape {
        crate::ir::Shape::Tuple(t) => t.first().map(shape_dims).transpose()?,
        s => Some(shape_dims(s)?),
    };
    if expected.as_ref() != Some(&out_dims) {
        return Err(err("reduce-window: result shape does not match the window"));
    }
    let ist = strides(&x0.dims);
    let ost = strides(&out_dims);
    let nout = super::array::element_count(&out_dims)?;
    let wsizes: Vec<usize> = win.iter().map(|w| w.size as usize).collect();
    let wst = strides(&wsizes);
    let nwin: usize = wsizes.iter().product();
    let comp = to_apply(instr)?;
    let fast = match it.combiner(comp) {
        Combiner::Bin(op) if n == 1 => Some(op),
        _ => None,
    };
    // The input elements each output reads, in window order.
    let window_elems = |o: usize, buf: &mut Vec<usize>| {
        buf.clear();
        'w: for wi in 0..nwin {
            let mut lin = 0usize;
            for d in 0..rank {
                let oi = ((o / ost[d]) % out_dims[d].max(1)) as i64;
                let k = ((wi / wst[d]) % wsizes[d].max(1)) as i64;
                let w = &win[d];
                let k = if w.reversal { w.size - 1 - k } else { k };
                let p = oi * w.stride + k * w.window_dilation - w.pad_low;
                if p < 0 || p % w.base_dilation != 0 {
                    continue 'w;
                }
                let p = p / w.base_dilation;
                if p >= x0.dims[d] as i64 {
                    continue 'w;
                }
                lin += p as usize * ist[d];
            }
            buf.push(lin);
        }
    };
    let mut buf = Vec::new();
    if let Some(op) = fast {
        let mut out = inits[0].data.repeat_elem(0, nout);
        for o in 0..nout {
            window_elems(o, &mut buf);
            // A window may be most of the input: one instruction's work
            // is then quadratic, so the cancel hook is asked within it
            // (every position counts, also those in padding).
            it.tick(nwin as u64)?;
            for &i in &buf {
                fold_at(op, &mut out, o, &x0.data, i, x0.ty)?;
            }
        }
        return Ok(Value::array(Array::new(x0.ty, out_dims, out)?));
    }
    let mut results: Vec<Vec<Value>> = vec![Vec::with_capacity(nout); n];
    for o in 0..nout {
        window_elems(o, &mut buf);
        let mut acc: Vec<Value> = inits.iter().map(|i| Value::Array((*i).clone())).collect();
        for &i in &buf {
            let mut args = acc.clone();
            args.extend(inputs.iter().map(|x| scalar_at(x, i)));
            acc = split_results(it.call(comp, &args)?, n)?;
        }
        for (k, v) in acc.into_iter().enumerate() {
            results[k].push(v);
        }
    }
    let outs: Vec<Value> = results
        .iter()
        .zip(&inputs)
        .map(|(vals, a)| collect_scalars(vals, a.ty, out_dims.clone()).map(Value::array))
        .collect::<Result<_>>()?;
    Ok(if n == 1 && !instr.shape.is_tuple() {
        outs.into_iter().next().expect("one output")
    } else {
        Value::Tuple(outs.into())
    })
}

pub fn map(it: &Interpreter, instr: &Instruction, ops: &[&Value]) -> Result<Value> {
    let inputs: Vec<&Arc<Array>> = ops.iter().map(|v| v.as_array()).collect::<Result<_>>()?;
    let first = inputs.first().ok_or_else(|| err("map of nothing"))?;
    if inputs.iter().any(|a| a.dims != first.dims) {
        return Err(err("map operands differ in shape"));
    }
    let comp = to_apply(instr)?;
    let out_ty = instr.shape.element_type();
    let vals = (0..first.len())
        .map(|i| {
            let args: Vec<Value> = inputs.iter().map(|a| scalar_at(a, i)).collect();
            it.call(comp, &args)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Value::array(collect_scalars(
        &vals,
        out_ty,
        first.dims.clone(),
    )?))
}

/// The geometry of a scatter, checked against its operands.
struct ScatterGeom {
    uwd: Vec<usize>,
    sdod: Vec<usize>,
    ibd: Vec<usize>,
    ivd: usize,
    nidx: usize,
    window_dims: Vec<usize>,
    wsize: Vec<usize>,
    scatter_dims: Vec<usize>,
    batch_rank: usize,
    sib: Vec<usize>,
}

fn scatter_geom(
    instr: &Instruction,
    a0: &Array,
    u0: &Array,
    indices: &Array,
) -> Result<ScatterGeom> {
    let us = |k: &str| -> Result<Vec<usize>> {
        attrs::int_list(instr, k)?
            .iter()
            .map(|&x| usize::try_from(x).map_err(|_| err(format!("negative {k}"))))
            .collect()
    };
    let uwd = us("update_window_dims")?;
    let iwd = us("inserted_window_dims")?;
    let sdod = us("scatter_dims_to_operand_dims")?;
    let ibd = us("input_batching_dims")?;
    let sibd = us("scatter_indices_batching_dims")?;
    let ivd = attrs::int_attr(instr, "index_vector_dim")?
        .and_then(|v| usize::try_from(v).ok())
        .ok_or_else(|| err("scatter without index_vector_dim"))?;
    let rank = a0.rank();
    if ivd > indices.rank() {
        return Err(err("scatter: index_vector_dim out of range"));
    }
    let nidx = if ivd < indices.rank() {
        indices.dims[ivd]
    } else {
        1
    };
    if nidx != sdod.len() {
        return Err(err(
            "scatter: index vector length does not match scatter_dims_to_operand_dims",
        ));
    }
    let window_dims: Vec<usize> = (0..rank)
        .filter(|d| !iwd.contains(d) && !ibd.contains(d))
        .collect();
    if window_dims.len() != uwd.len() || uwd.iter().any(|&d| d >= u0.rank()) {
        return Err(err(
            "scatter: update_window_dims does not match the operand",
        ));
    }
    if sdod.iter().chain(&ibd).chain(&iwd).any(|&d| d >= rank) {
        return Err(err("scatter: dimension number out of range"));
    }
    let mut wsize = vec![1usize; rank];
    for (&od, &ud) in window_dims.iter().zip(&uwd) {
        wsize[od] = u0.dims[ud];
    }
    if uwd.windows(2).any(|w| w[0] >= w[1]) {
        return Err(err("scatter: update_window_dims must be sorted and unique"));
    }
    let scatter_dims: Vec<usize> = (0..u0.rank()).filter(|d| !uwd.contains(d)).collect();
    let batch_rank = indices.rank() - usize::from(ivd < indices.rank());
    // The updates' scatter dims walk the indices' batch dims, size for size.
    let index_batch: Vec<usize> = (0..indices.rank())
        .filter(|&d| d != ivd)
        .map(|d| indices.dims[d])
        .collect();
    let update_batch: Vec<usize> = scatter_dims.iter().map(|&d| u0.dims[d]).collect();
    if scatter_dims.len() != batch_rank || update_batch != index_batch {
        return Err(err(
            "scatter: updates' scatter dims do not match the indices",
        ));
    }
    let sib: Vec<usize> = sibd
        .iter()
        .map(|&d| {
            if d >= indices.rank() || d == ivd {
                Err(err("scatter: scatter_indices_batching_dims out of range"))
            } else {
                Ok(if d > ivd { d - 1 } else { d })
            }
        })
        .collect::<Result<_>>()?;
    Ok(ScatterGeom {
        uwd,
        sdod,
        ibd,
        ivd,
        nidx,
        window_dims,
        wsize,
        scatter_dims,
        batch_rank,
        sib,
    })
}

pub fn scatter(it: &Interpreter, instr: &Instruction, ops: &[&Value]) -> Result<Value> {
    if ops.len() < 3 || ops.len() % 2 != 1 {
        return Err(err(format!("scatter with {} operands", ops.len())));
    }
    let n = (ops.len() - 1) / 2;
    let operands: Vec<&Arc<Array>> = ops[..n]
        .iter()
        .map(|v| v.as_array())
        .collect::<Result<_>>()?;
    let indices = ops[n].as_array()?;
    let updates: Vec<&Arc<Array>> = ops[n + 1..]
        .iter()
        .map(|v| v.as_array())
        .collect::<Result<_>>()?;
    let a0 = operands[0];
    let u0 = updates[0];
    for (a, u) in operands.iter().zip(&updates) {
        if a.dims != a0.dims || u.dims != u0.dims || a.ty != u.ty {
            return Err(err("scatter operands or updates do not fit together"));
        }
    }
    let ScatterGeom {
        uwd,
        sdod,
        ibd,
        ivd,
        nidx,
        window_dims,
        wsize,
        scatter_dims,
        batch_rank,
        sib,
    } = scatter_geom(instr, a0, u0, indices)?;
    let rank = a0.rank();
    let comp = to_apply(instr)?;
    let comb = it.combiner(comp);
    let mut outs: Vec<Data> = operands.iter().map(|a| a.data.clone()).collect();
    let ust = strides(&u0.dims);
    let ast = strides(&a0.dims);
    let ist = strides(&indices.dims);
    let mut uidx = vec![0usize; u0.rank()];
    let mut batch = vec![0usize; batch_rank];
    for ui in 0..u0.len() {
        for d in 0..u0.rank() {
            uidx[d] = (ui / ust[d]) % u0.dims[d].max(1);
        }
        for (b, &d) in scatter_dims.iter().enumerate() {
            batch[b] = uidx[d];
        }
        let v = super::shape_ops::index_vector(indices, ivd, &batch, nidx, &ist)?;
        let mut start = vec![0i64; rank];
        for (k, &d) in sdod.iter().enumerate() {
            start[d] = v[k];
        }
        for (k, &d) in ibd.iter().enumerate() {
            start[d] = batch[sib[k]] as i64;
        }
        // Out-of-bounds windows are skipped whole, as XLA does.
        if (0..rank).any(|d| start[d] < 0 || start[d] + wsize[d] as i64 > a0.dims[d] as i64) {
            continue;
        }
        let mut lin = 0usize;
        for d in 0..rank {
            lin += start[d] as usize * ast[d];
        }
        for (&od, &ud) in window_dims.iter().zip(&uwd) {
            lin += uidx[ud] * ast[od];
        }
        match comb {
            Combiner::TakeUpdate if n == 1 => outs[0].set_from(lin, &updates[0].data, ui)?,
            Combiner::Bin(op) if n == 1 => {
                fold_at(op, &mut outs[0], lin, &updates[0].data, ui, a0.ty)?
            }
            _ => {
                let mut args: Vec<Value> = outs
                    .iter()
                    .zip(&operands)
                    .map(|(d, a)| {
                        Value::Array(Arc::new(Array {
                            ty: a.ty,
                            dims: Vec::new(),
                            data: d.take(&[lin]),
                        }))
                    })
                    .collect();
                args.extend(updates.iter().map(|u| scalar_at(u, ui)));
                let res = split_results(it.call(comp, &args)?, n)?;
                for (k, r) in res.iter().enumerate() {
                    let r = r.as_array()?;
                    if r.ty != operands[k].ty || r.len() != 1 {
                        return Err(err("scatter combiner returned the wrong type"));
                    }
                    outs[k].set_from(lin, &r.data, 0)?;
                }
            }
        }
    }
    let vals: Vec<Value> = outs
        .into_iter()
        .zip(&operands)
        .map(|(d, a)| Array::new(a.ty, a.dims.clone(), d).map(Value::array))
        .collect::<Result<_>>()?;
    Ok(if n == 1 && !instr.shape.is_tuple() {
        vals.into_iter().next().expect("one output")
    } else {
        Value::Tuple(vals.into())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::PrimitiveType;

    /// Rows folded eight at a time give each row's own fold in element
    /// order, bit for bit: sums whose order matters, NaN and signed zeros
    /// for max and min, and row counts that leave a remainder.
    #[test]
    fn interleaved_rows_fold_as_each_row_alone() {
        let mut v: Vec<f32> = (0..13 * 37)
            .map(|i| ((i as f32) * 0.7).sin() * 10f32.powi(i % 9 - 4))
            .collect();
        v[5] = f32::NAN;
        v[40] = -0.0;
        v[41] = 0.0;
        v[37 * 9 + 3] = f32::INFINITY;
        for r in [1, 2, 37, 13 * 37] {
            let alone = |init: f64| -> Vec<u64> {
                v.chunks(r)
                    .map(|row| row.iter().fold(init, |a, &b| a + f64::from(b)).to_bits())
                    .collect()
            };
            let sums: Vec<u64> = fold_rows(&v, r, 0.5, |a, b: f32| a + f64::from(b))
                .into_iter()
                .map(f64::to_bits)
                .collect();
            assert_eq!(sums, alone(0.5), "sum, rows of {r}");
            for (step, name) in [(fmax32 as fn(f32, f32) -> f32, "max"), (fmin32, "min")] {
                let want: Vec<u32> = v
                    .chunks(r)
                    .map(|row| row.iter().fold(-0.0f32, |a, &b| step(a, b)).to_bits())
                    .collect();
                let got: Vec<u32> = fold_rows(&v, r, -0.0f32, step)
                    .into_iter()
                    .map(f32::to_bits)
                    .collect();
                assert_eq!(got, want, "{name}, rows of {r}");
                let got: Vec<u32> = fold_extremum(&v, r, -0.0f32, step)
                    .into_iter()
                    .map(f32::to_bits)
                    .collect();
                assert_eq!(got, want, "{name} in lanes, rows of {r}");
            }
        }
    }

    /// Max and min in lanes give the element-order fold's bits on the
    /// rows where order shows: ties of -0 and +0 in either order, two NaNs
    /// of different payloads, all -inf, an infinite init, and plain rows.
    #[test]
    fn extremum_in_lanes_folds_as_in_element_order() {
        let r = 40;
        let nan_a = f32::from_bits(0x7fc0_0001);
        let nan_b = f32::from_bits(0xffc0_0002);
        let mut rows: Vec<Vec<f32>> = Vec::new();
        for k in 0..r {
            // Negative except a zero pair at k (and k+1 or the end).
            let mut row: Vec<f32> = (0..r).map(|i| -1.0 - i as f32).collect();
            row[k] = if k % 2 == 0 { -0.0 } else { 0.0 };
            row[(k + 1 + k % 3) % r] = if k % 2 == 0 { 0.0 } else { -0.0 };
            rows.push(row.clone());
            // The same, positive: min ties at zero.
            rows.push(row.iter().map(|x| -x).collect());
            // Two NaNs, the first at k.
            row[k] = nan_a;
            row[(k + 7) % r] = nan_b;
            rows.push(row);
        }
        rows.push(vec![f32::NEG_INFINITY; r]);
        rows.push((0..r).map(|i| (i as f32 * 1.3).sin()).collect());
        let v: Vec<f32> = rows.concat();
        for init in [f32::NEG_INFINITY, f32::INFINITY, -0.0, 0.0, 0.25] {
            for (step, name) in [(fmax32 as fn(f32, f32) -> f32, "max"), (fmin32, "min")] {
                let want: Vec<u32> = v
                    .chunks(r)
                    .map(|row| row.iter().fold(init, |a, &b| step(a, b)).to_bits())
                    .collect();
                let got: Vec<u32> = fold_extremum(&v, r, init, step)
                    .into_iter()
                    .map(f32::to_bits)
                    .collect();
                assert_eq!(got, want, "{name} from {init}");
            }
        }
    }

    /// Leading dimensions folded a row at a time give the transposed
    /// fold's bits: f32 sums (in f64) and max with NaN and signed zeros,
    /// f64 and f16 ops, a split over the cores (a large input), and ops
    /// floats do not have refused as before.
    #[test]
    fn leading_dimensions_fold_as_the_transposed_chunks() {
        let case = |ty: PrimitiveType, r: usize, nout: usize| -> Array {
            let n = r * nout;
            let mut v: Vec<f64> = (0..n)
                .map(|i| ((i as f64) * 0.7).sin() * 10f64.powi((i % 9) as i32 - 4))
                .collect();
            v[n / 3] = f64::NAN;
            v[n / 2] = -0.0;
            v[n / 2 + 1] = 0.0;
            let data = crate::interp::convert::from_f64_vec(ty, &v).expect("a float type");
            Array::new(ty, vec![r, nout], data).expect("dims")
        };
        let init = |ty: PrimitiveType| {
            let data = crate::interp::convert::from_f64_vec(ty, &[0.25]).unwrap();
            Array::new(ty, vec![], data).unwrap()
        };
        let ops = [BinOp::Add, BinOp::Mul, BinOp::Max, BinOp::Min, BinOp::Sub];
        let sizes = [(1, 5), (7, 3), (13, 37), (300, 700)];
        for ty in [
            PrimitiveType::F32,
            PrimitiveType::F64,
            PrimitiveType::F16,
            PrimitiveType::Bf16,
        ] {
            for (r, nout) in sizes {
                let x = case(ty, r, nout);
                let t = transposed(&x, &[1, 0]).expect("transposes");
                for op in ops {
                    let want = fold_chunks(op, &t, &init(ty), r).expect("folds");
                    let got = fold_leading(op, &x, &init(ty), nout)
                        .expect("folds")
                        .expect("a float type");
                    let bits = |d: Data| {
                        crate::interp::convert::to_bits(&Array::new(ty, vec![nout], d).unwrap())
                    };
                    assert_eq!(bits(got), bits(want), "{ty:?} {op:?} {r}x{nout}");
                }
            }
        }
        // The 16-bit floats' rows against their exact fold, one element at
        // a time in f64.
        for ty in [PrimitiveType::F16, PrimitiveType::Bf16] {
            let x = case(ty, 37, 29);
            for op in ops {
                let v = to_f64_vec(&x.data, ty);
                let want: Vec<f64> = v
                    .chunks(29)
                    .map(|c| c.iter().fold(0.25, |a, &b| fbin64(op, a, b).unwrap()))
                    .collect();
                let want = from_f64_vec(ty, &want).unwrap();
                let got = fold_chunks(op, &x, &init(ty), 29).expect("folds");
                let bits = |d: Data| {
                    crate::interp::convert::to_bits(&Array::new(ty, vec![37], d).unwrap())
                };
                assert_eq!(bits(got), bits(want), "{ty:?} {op:?}");
            }
        }
        let x = case(PrimitiveType::F32, 4, 4);
        assert!(fold_leading(BinOp::And, &x, &init(PrimitiveType::F32), 4).is_err());
    }
}
