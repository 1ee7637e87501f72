//! `dot` with general dimension numbers.
//!
//! Operands are permuted to `[batch, m, k]` and `[batch, k, n]` and
//! multiplied with `matrixmultiply`'s blocked GEMM: f32 operands in f32
//! (as XLA:CPU does), everything else in f64 (exact products of narrow
//! floats, then one rounding to the result type). Integer dots wrap.

use super::array::{element_count, Array, Data};
use super::attrs::dim_index;
use super::convert::{from_f32_vec, from_f64_vec, to_f64_vec};
use super::shape_ops::transpose;
use super::{err, Result};
use crate::ir::PrimitiveType;

pub struct DotDims {
    pub lhs_batch: Vec<i64>,
    pub lhs_contract: Vec<i64>,
    pub rhs_batch: Vec<i64>,
    pub rhs_contract: Vec<i64>,
}

/// Which dims are free (neither batch nor contracting), in order.
fn free_dims(rank: usize, batch: &[usize], contract: &[usize]) -> Vec<usize> {
    (0..rank)
        .filter(|d| !batch.contains(d) && !contract.contains(d))
        .collect()
}

fn check_dims(v: &[i64], rank: usize, what: &str) -> Result<Vec<usize>> {
    let out: Vec<usize> = v
        .iter()
        .map(|&d| dim_index(d, rank, what))
        .collect::<Result<_>>()?;
    let mut s = out.clone();
    s.sort_unstable();
    s.dedup();
    if s.len() != out.len() {
        return Err(err(format!("{what}: repeated dimension")));
    }
    Ok(out)
}

/// The result dims of a dot: batch, lhs free, rhs free.
pub fn dot(lhs: &Array, rhs: &Array, dd: &DotDims, out_ty: PrimitiveType) -> Result<Array> {
    let lb = check_dims(&dd.lhs_batch, lhs.rank(), "lhs_batch_dims")?;
    let lc = check_dims(&dd.lhs_contract, lhs.rank(), "lhs_contracting_dims")?;
    let rb = check_dims(&dd.rhs_batch, rhs.rank(), "rhs_batch_dims")?;
    let rc = check_dims(&dd.rhs_contract, rhs.rank(), "rhs_contracting_dims")?;
    if lb.len() != rb.len() || lc.len() != rc.len() {
        return Err(err("dot: batch or contracting dimension counts differ"));
    }
    for (&a, &b) in lb.iter().zip(&rb).chain(lc.iter().zip(&rc)) {
        if lhs.dims[a] != rhs.dims[b] {
            return Err(err(format!(
                "dot: lhs dimension {a} ({}) does not match rhs dimension {b} ({})",
                lhs.dims[a], rhs.dims[b]
            )));
        }
    }
    if lb.iter().any(|d| lc.contains(d)) || rb.iter().any(|d| rc.contains(d)) {
        return Err(err("dot: a dimension is both batch and contracting"));
    }
    let lf = free_dims(lhs.rank(), &lb, &lc);
    let rf = free_dims(rhs.rank(), &rb, &rc);
    let prod = |a: &Array, ds: &[usize]| ds.iter().map(|&d| a.dims[d]).product::<usize>();
    let (b, m, k, n) = (
        prod(lhs, &lb),
        prod(lhs, &lf),
        prod(lhs, &lc),
        prod(rhs, &rf),
    );
    let lperm: Vec<usize> = lb.iter().chain(&lf).chain(&lc).copied().collect();
    let rperm: Vec<usize> = rb.iter().chain(&rc).chain(&rf).copied().collect();
    let lt = transpose(lhs, &lperm)?;
    let rt = transpose(rhs, &rperm)?;
    let mut out_dims: Vec<usize> = lb.iter().map(|&d| lhs.dims[d]).collect();
    out_dims.extend(lf.iter().map(|&d| lhs.dims[d]));
    out_dims.extend(rf.iter().map(|&d| rhs.dims[d]));
    let total = element_count(&out_dims)?;
    debug_assert_eq!(total, b * m * n);
    let data = match (&lt.data, &rt.data) {
        (Data::F32(x), Data::F32(y)) if out_ty != PrimitiveType::F64 => {
            let mut c = vec![0f32; total];
            for bi in 0..b {
                gemm32(
                    m,
                    k,
                    n,
                    &x[bi * m * k..(bi + 1) * m * k],
                    &y[bi * k * n..(bi + 1) * k * n],
                    &mut c[bi * m * n..(bi + 1) * m * n],
                );
            }
            from_f32_vec(out_ty, c)?
        }
        (Data::S(x), Data::S(y)) => int_dot(b, m, k, n, x, y, out_ty)?,
        (Data::U(x), Data::U(y)) => {
            let x: Vec<i64> = x.iter().map(|&v| v as i64).collect();
            let y: Vec<i64> = y.iter().map(|&v| v as i64).collect();
            int_dot(b, m, k, n, &x, &y, out_ty)?
        }
        _ => {
            let x = to_f64_vec(&lt.data, lt.ty);
            let y = to_f64_vec(&rt.data, rt.ty);
            let mut c = vec![0f64; total];
            for bi in 0..b {
                gemm64(
                    m,
                    k,
                    n,
                    &x[bi * m * k..(bi + 1) * m * k],
                    &y[bi * k * n..(bi + 1) * k * n],
                    &mut c[bi * m * n..(bi + 1) * m * n],
                );
            }
            from_f64_vec(out_ty, &c)?
        }
    };
    Array::new(out_ty, out_dims, data)
}

fn int_dot(
    b: usize,
    m: usize,
    k: usize,
    n: usize,
    x: &[i64],
    y: &[i64],
    out_ty: PrimitiveType,
) -> Result<Data> {
    let mut c = vec![0i64; b * m * n];
    for bi in 0..b {
        for i in 0..m {
            for p in 0..k {
                let a = x[bi * m * k + i * k + p];
                for j in 0..n {
                    let v = &mut c[bi * m * n + i * n + j];
                    *v = v.wrapping_add(a.wrapping_mul(y[bi * k * n + p * n + j]));
                }
            }
        }
    }
    let w = out_ty.bit_width();
    Ok(if out_ty.is_signed_int() {
        Data::S(c.into_iter().map(|v| super::array::wrap_s(v, w)).collect())
    } else if out_ty.is_unsigned_int() {
        Data::U(
            c.into_iter()
                .map(|v| super::array::wrap_u(v as u64, w))
                .collect(),
        )
    } else {
        from_f64_vec(out_ty, &c.iter().map(|&v| v as f64).collect::<Vec<_>>())?
    })
}

/// C[m,n] = A[m,k] * B[k,n], row-major, f32.
pub fn gemm32(m: usize, k: usize, n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        c.iter_mut().for_each(|v| *v = 0.0);
        return;
    }
    assert!(a.len() >= m * k && b.len() >= k * n && c.len() >= m * n);
    // SAFETY: the slices hold m*k, k*n and m*n elements (checked above) and
    // the strides describe dense row-major matrices inside them.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            k as isize,
            1,
            b.as_ptr(),
            n as isize,
            1,
            0.0,
            c.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

/// C[m,n] = A[m,k] * B[k,n], row-major, f64.
pub fn gemm64(m: usize, k: usize, n: usize, a: &[f64], b: &[f64], c: &mut [f64]) {
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        c.iter_mut().for_each(|v| *v = 0.0);
        return;
    }
    assert!(a.len() >= m * k && b.len() >= k * n && c.len() >= m * n);
    // SAFETY: as in gemm32.
    unsafe {
        matrixmultiply::dgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            k as isize,
            1,
            b.as_ptr(),
            n as isize,
            1,
            0.0,
            c.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}
