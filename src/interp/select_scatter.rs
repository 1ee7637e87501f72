//! `select-and-scatter` (the gradient of max pooling): for each window of
//! the operand (one per source element, in row-major order), the
//! `select` computation picks one element: the first valid element in
//! window order is the candidate, and each later element replaces it when
//! `select(candidate, element)` is false (so with `GE`, the first of tied
//! maxima wins). The source element is then combined into the result at
//! the picked position with `scatter`; the result starts as `init_value`
//! everywhere. Window positions in the padding are never picked.

use super::array::{strides, Array, Value};
use super::attrs::{self, WindowDim};
use super::elementwise::holds_f64;
use super::reduce::{fold_at, scalar_at};
use super::{err, Combiner, Interpreter, Result};
use crate::ir::{ComparisonType, Instruction};
use std::sync::Arc;

/// The operand positions (flat indices) of each window, in window order.
fn window_positions(
    dims: &[usize],
    win: &[WindowDim],
    out_dims: &[usize],
    o: usize,
    buf: &mut Vec<usize>,
) {
    let rank = dims.len();
    let ist = strides(dims);
    let ost = strides(out_dims);
    let wsizes: Vec<usize> = win.iter().map(|w| w.size as usize).collect();
    let wst = strides(&wsizes);
    let nwin: usize = wsizes.iter().product();
    buf.clear();
    'w: for wi in 0..nwin {
        let mut lin = 0usize;
        for d in 0..rank {
            let oi = ((o / ost[d]) % out_dims[d].max(1)) as i64;
            let k = ((wi / wst[d]) % wsizes[d].max(1)) as i64;
            let w = &win[d];
            let p = oi * w.stride + k * w.window_dilation - w.pad_low;
            if p < 0 || p % w.base_dilation != 0 || p / w.base_dilation >= dims[d] as i64 {
                continue 'w;
            }
            lin += (p / w.base_dilation) as usize * ist[d];
        }
        buf.push(lin);
    }
}

/// The number of windows along each dimension (XLA's window arithmetic).
fn window_counts(dims: &[usize], win: &[WindowDim]) -> Vec<usize> {
    dims.iter()
        .zip(win)
        .map(|(&n, w)| {
            let base = if n == 0 {
                0
            } else {
                (n as i64 - 1) * w.base_dilation + 1
            };
            let padded = base + w.pad_low + w.pad_high;
            let span = (w.size - 1) * w.window_dilation + 1;
            if w.size == 0 || padded < span {
                0
            } else {
                ((padded - span) / w.stride + 1) as usize
            }
        })
        .collect()
}

pub fn select_and_scatter(it: &Interpreter, instr: &Instruction, ops: &[&Value]) -> Result<Value> {
    if ops.len() != 3 {
        return Err(err(format!(
            "select-and-scatter takes 3 operands, has {}",
            ops.len()
        )));
    }
    let (x, src, init) = (ops[0].as_array()?, ops[1].as_array()?, ops[2].as_array()?);
    if init.len() != 1 || init.ty != src.ty || x.ty.is_complex() {
        return Err(err(format!(
            "select-and-scatter of {} with source {} and init {}",
            x.shape_text(),
            src.shape_text(),
            init.shape_text()
        )));
    }
    let win = attrs::window_attr(instr, x.rank())?;
    let counts = window_counts(&x.dims, &win);
    if counts != src.dims {
        return Err(err(format!(
            "select-and-scatter: the windows of {} are [{}], the source is {}",
            x.shape_text(),
            super::array::dims_text(&counts),
            src.shape_text()
        )));
    }
    let select = it.called(instr, "select")?;
    let scatter = it.called(instr, "scatter")?;
    let keys = x.to_f64_vec();
    let fast_select = match it.combiner(select) {
        Combiner::Compare(d, t) if x.ty.is_float() => Some((d, t.unwrap_or(ComparisonType::Float))),
        _ => None,
    };
    // select(candidate, element): keep the candidate?
    let keep = |a: usize, b: usize| -> Result<bool> {
        if let Some((d, t)) = fast_select {
            return Ok(holds_f64(d, t, keys[a], keys[b]));
        }
        let r = it.call(select, &[scalar_at(x, a), scalar_at(x, b)])?;
        match &r.as_array()?.data {
            super::array::Data::Pred(v) if v.len() == 1 => Ok(v[0]),
            _ => Err(err("the select computation did not return pred[]")),
        }
    };
    let mut out = Array::new(src.ty, x.dims.clone(), init.data.repeat_elem(0, x.len()))?;
    let comb = it.combiner(scatter);
    let window_size = win
        .iter()
        .map(|w| u64::try_from(w.size).unwrap_or(0))
        .fold(1u64, u64::saturating_mul);
    let mut buf = Vec::new();
    for o in 0..src.len() {
        window_positions(&x.dims, &win, &counts, o, &mut buf);
        // A window may be most of the operand: one instruction's work is
        // then quadratic, so the cancel hook is asked within it (every
        // position counts, also those in padding).
        it.tick(window_size)?;
        let Some((&first, rest)) = buf.split_first() else {
            continue;
        };
        let mut picked = first;
        for &e in rest {
            if !keep(picked, e)? {
                picked = e;
            }
        }
        match comb {
            Combiner::Bin(op) => fold_at(op, &mut out.data, picked, &src.data, o, src.ty)?,
            Combiner::TakeUpdate => out.data.set_from(picked, &src.data, o)?,
            _ => {
                let r = it.call(scatter, &[scalar_at(&out, picked), scalar_at(src, o)])?;
                let r = r.as_array()?;
                if r.ty != src.ty || r.len() != 1 {
                    return Err(err("the scatter computation returned the wrong type"));
                }
                out.data.set_from(picked, &r.data, 0)?;
            }
        }
    }
    Ok(Value::Array(Arc::new(out)))
}
