//! `dot` with general dimension numbers.
//!
//! Operands are permuted to `[batch, m, k]` and `[batch, k, n]` and
//! multiplied with the `gemm` crate's blocked GEMM: f32 operands in f32
//! (as XLA:CPU does), everything else in f64 (exact products of narrow
//! floats, then one rounding to the result type). Integer dots wrap;
//! complex dots multiply in c128 and round once.
//!
//! `ragged-dot` is a dot per group of rows (or of the contracting
//! dimension) given by its `group_sizes` operand, see [`ragged_dot`].

use super::array::{element_count, shape_dims, Array, Data, Value};
use super::attrs::{self, dim_index};
use super::convert::{from_f32_vec, from_f64_vec, to_f64_vec};
use super::shape_ops::{concatenate, dynamic_update_slice, reshape, slice, transposed};
use super::{err, expect_operands, operand, Result};
use crate::ir::{Instruction, PrimitiveType};

pub struct DotDims {
    pub lhs_batch: Vec<i64>,
    pub lhs_contract: Vec<i64>,
    pub rhs_batch: Vec<i64>,
    pub rhs_contract: Vec<i64>,
}

impl DotDims {
    pub fn from_instr(instr: &Instruction) -> Result<DotDims> {
        Ok(DotDims {
            lhs_batch: attrs::int_list(instr, "lhs_batch_dims")?,
            lhs_contract: attrs::int_list(instr, "lhs_contracting_dims")?,
            rhs_batch: attrs::int_list(instr, "rhs_batch_dims")?,
            rhs_contract: attrs::int_list(instr, "rhs_contracting_dims")?,
        })
    }
}

/// The `dot` instruction.
pub fn eval(instr: &Instruction, ops: &[&Value]) -> Result<Array> {
    expect_operands(instr, ops, 2)?;
    let dd = DotDims::from_instr(instr)?;
    dot(
        operand(ops, 0)?,
        operand(ops, 1)?,
        &dd,
        instr.shape.element_type(),
    )
}

/// `scaled-dot(lhs, rhs, lhs_scale, rhs_scale)`: the dot of the operands
/// dequantized by their scales. A scale has its operand's rank and each of
/// its dimensions divides the operand's; one scale element multiplies the
/// block of `operand_dim / scale_dim` elements it covers in every
/// dimension (a block of 32 along the contracting dimension for MX
/// formats). The products are exact in f64 and the dot rounds once.
pub fn scaled_dot(instr: &Instruction, ops: &[&Value]) -> Result<Array> {
    expect_operands(instr, ops, 4)?;
    let dd = DotDims::from_instr(instr)?;
    let lhs = dequantize(operand(ops, 0)?, operand(ops, 2)?)?;
    let rhs = dequantize(operand(ops, 1)?, operand(ops, 3)?)?;
    dot(&lhs, &rhs, &dd, instr.shape.element_type())
}

/// `x * scale`, each scale element over its block of x, as f64.
fn dequantize(x: &Array, scale: &Array) -> Result<Array> {
    if scale.rank() != x.rank()
        || x.dims
            .iter()
            .zip(&scale.dims)
            .any(|(&o, &s)| s == 0 || o % s != 0)
        || !(x.ty.is_float() && scale.ty.is_float())
    {
        return Err(err(format!(
            "scaled-dot: scale {} does not divide the operand {} into blocks",
            scale.shape_text(),
            x.shape_text()
        )));
    }
    let block: Vec<usize> = x
        .dims
        .iter()
        .zip(&scale.dims)
        .map(|(&o, &s)| o / s)
        .collect();
    let xs = super::array::strides(&x.dims);
    let ss = super::array::strides(&scale.dims);
    let (xv, sv) = (to_f64_vec(&x.data, x.ty), to_f64_vec(&scale.data, scale.ty));
    let v: Vec<f64> = (0..xv.len())
        .map(|i| {
            let si: usize = (0..x.rank())
                .map(|d| (i / xs[d] % x.dims[d]) / block[d] * ss[d])
                .sum();
            xv[i] * sv[si]
        })
        .collect();
    Array::new(PrimitiveType::F64, x.dims.clone(), Data::F64(v))
}

/// `ragged-dot(lhs, rhs, group_sizes)`, by where `lhs_ragged_dims` is:
///
/// - a free (non-contracting) lhs dimension: its rows are cut into
///   consecutive groups of `group_sizes`; group j is multiplied by
///   `rhs[j]` (`rhs_group_dims` names that dimension of rhs); rows past
///   the groups are 0;
/// - a contracting dimension: the result gains a leading group dimension,
///   and group j contracts only its part of that dimension;
/// - a batch dimension: every batch element is in one group, so it is the
///   plain batched dot.
pub fn ragged_dot(instr: &Instruction, ops: &[&Value]) -> Result<Array> {
    expect_operands(instr, ops, 3)?;
    let (lhs, rhs, sizes) = (operand(ops, 0)?, operand(ops, 1)?, operand(ops, 2)?);
    let dd = DotDims::from_instr(instr)?;
    let out_ty = instr.shape.element_type();
    let ragged = attrs::int_list_req(instr, "lhs_ragged_dims")?;
    let [r] = ragged[..] else {
        return Err(err("ragged-dot needs exactly one lhs_ragged_dims"));
    };
    let r = dim_index(r, lhs.rank(), "lhs_ragged_dims")?;
    if sizes.rank() != 1 {
        return Err(super::unsupported(format!(
            "ragged-dot: group_sizes {} is not a vector (batched group sizes are not supported)",
            sizes.shape_text()
        )));
    }
    let groups: Vec<i64> = (0..sizes.len())
        .map(|i| sizes.index_at(i))
        .collect::<Result<_>>()?;
    let bounds = |len: usize| -> Vec<(usize, usize)> {
        let mut start = 0usize;
        groups
            .iter()
            .map(|&g| {
                let s = start.min(len);
                start = start.saturating_add(g.max(0) as usize);
                (s, start.min(len))
            })
            .collect()
    };
    let cut = |a: &Array, d: usize, lo: usize, hi: usize| -> Result<Array> {
        let spec: Vec<(i64, i64, i64)> = (0..a.rank())
            .map(|k| {
                if k == d {
                    (lo as i64, hi as i64, 1)
                } else {
                    (0, a.dims[k] as i64, 1)
                }
            })
            .collect();
        slice(a, &spec)
    };
    let in_batch = dd.lhs_batch.iter().any(|&b| b as usize == r);
    let in_contract = dd.lhs_contract.iter().any(|&c| c as usize == r);
    if in_batch {
        return dot(lhs, rhs, &dd, out_ty);
    }
    let out_dims = shape_dims(&instr.shape)?;
    if in_contract {
        // Group j: lhs and rhs cut to its part of the contracting dims.
        let k = dd
            .lhs_contract
            .iter()
            .position(|&c| c as usize == r)
            .unwrap_or(0);
        let rc = dim_index(dd.rhs_contract[k], rhs.rank(), "rhs_contracting_dims")?;
        let mut parts = Vec::new();
        for (lo, hi) in bounds(lhs.dims[r]) {
            let p = dot(&cut(lhs, r, lo, hi)?, &cut(rhs, rc, lo, hi)?, &dd, out_ty)?;
            let mut d = vec![1];
            d.extend(&p.dims);
            parts.push(reshape(&p, &d)?);
        }
        let refs: Vec<&Array> = parts.iter().collect();
        return concatenate(&refs, 0);
    }
    // Ragged rows: rhs loses its group dimension for each group's dot.
    let gdim = match &attrs::int_list(instr, "rhs_group_dims")?[..] {
        [g] => dim_index(*g, rhs.rank(), "rhs_group_dims")?,
        _ => return Err(err("ragged-dot with ragged rows needs one rhs_group_dims")),
    };
    if rhs.dims[gdim] != groups.len() {
        return Err(err(format!(
            "ragged-dot: {} groups, rhs dimension {gdim} has {}",
            groups.len(),
            rhs.dims[gdim]
        )));
    }
    let shift = |v: &[i64]| -> Vec<i64> {
        v.iter()
            .map(|&d| if d as usize > gdim { d - 1 } else { d })
            .collect()
    };
    let inner = DotDims {
        lhs_batch: dd.lhs_batch.clone(),
        lhs_contract: dd.lhs_contract.clone(),
        rhs_batch: shift(&dd.rhs_batch),
        rhs_contract: shift(&dd.rhs_contract),
    };
    let mut rdims = rhs.dims.clone();
    rdims.remove(gdim);
    // Where the ragged dimension lands in the result: after the batch
    // dims, among lhs's free dims.
    let free_before = (0..r)
        .filter(|d| !dd.lhs_batch.contains(&(*d as i64)) && !dd.lhs_contract.contains(&(*d as i64)))
        .count();
    let at = dd.lhs_batch.len() + free_before;
    let mut out = Array::new(
        out_ty,
        out_dims.clone(),
        Data::zeros(out_ty, element_count(&out_dims)?)?,
    )?;
    for (j, (lo, hi)) in bounds(lhs.dims[r]).into_iter().enumerate() {
        if lo == hi {
            continue;
        }
        let rj = reshape(&cut(rhs, gdim, j, j + 1)?, &rdims)?;
        let p = dot(&cut(lhs, r, lo, hi)?, &rj, &inner, out_ty)?;
        let mut starts = vec![0i64; out_dims.len()];
        starts[at] = lo as i64;
        out = dynamic_update_slice(&out, &p, &starts)?;
    }
    Ok(out)
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
    let lt = transposed(lhs, &lperm)?;
    let rt = transposed(rhs, &rperm)?;
    let mut out_dims: Vec<usize> = lb.iter().map(|&d| lhs.dims[d]).collect();
    out_dims.extend(lf.iter().map(|&d| lhs.dims[d]));
    out_dims.extend(rf.iter().map(|&d| rhs.dims[d]));
    let total = element_count(&out_dims)?;
    debug_assert_eq!(total, b * m * n);
    let data = match (&lt.data, &rt.data) {
        (Data::F32(x), Data::F32(y)) if out_ty != PrimitiveType::F64 => {
            let mut c = vec![0f32; total];
            batched_gemm((b, m, k, n), x, y, &mut c, gemm32);
            from_f32_vec(out_ty, c)?
        }
        (Data::S(x), Data::S(y)) => int_dot(b, m, k, n, x, y, out_ty)?,
        (Data::C64(_) | Data::C128(_), _) | (_, Data::C64(_) | Data::C128(_)) => {
            complex_dot(b, m, k, n, &lt, &rt, out_ty)?
        }
        (Data::U(x), Data::U(y)) => {
            let x: Vec<i64> = x.iter().map(|&v| v as i64).collect();
            let y: Vec<i64> = y.iter().map(|&v| v as i64).collect();
            int_dot(b, m, k, n, &x, &y, out_ty)?
        }
        _ => {
            let x = to_f64_vec(&lt.data, lt.ty);
            let y = to_f64_vec(&rt.data, rt.ty);
            let mut c = vec![0f64; total];
            batched_gemm((b, m, k, n), &x, &y, &mut c, gemm64);
            from_f64_vec(out_ty, &c)?
        }
    };
    Array::new(out_ty, out_dims, data)
}

/// Complex dot products in c128, rounded once (both operands complex;
/// XLA's dot does not mix complex and real operands).
fn complex_dot(
    b: usize,
    m: usize,
    k: usize,
    n: usize,
    lt: &Array,
    rt: &Array,
    out_ty: PrimitiveType,
) -> Result<Data> {
    if !(lt.ty.is_complex() && rt.ty.is_complex() && out_ty.is_complex()) {
        return Err(err(format!(
            "dot of {} and {} to {out_ty}: complex and real operands do not mix",
            lt.ty, rt.ty
        )));
    }
    let x = super::complex::to_c128(&lt.data);
    let y = super::complex::to_c128(&rt.data);
    let mut c = vec![num_complex::Complex64::new(0.0, 0.0); b * m * n];
    for bi in 0..b {
        for i in 0..m {
            for p in 0..k {
                let a = x[bi * m * k + i * k + p];
                for j in 0..n {
                    c[bi * m * n + i * n + j] += a * y[bi * k * n + p * n + j];
                }
            }
        }
    }
    super::complex::from_c128(out_ty, c)
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

/// `gemm32` or `gemm64`: (m, k, n, A, B, C).
type Gemm<T> = fn(usize, usize, usize, &[T], &[T], &mut [T]);

/// The most rows one GEMM call multiplies.
const MAX_BLOCK_ROWS: usize = 256;

/// The rows of each GEMM call for a product of `m` rows: as even as the
/// blocks of at most [`MAX_BLOCK_ROWS`] allow. The GEMM's blocking of the
/// k axis (so each element's order of summation) depends on the shape it
/// is called with, so the blocks depend on `m` alone, never on the thread
/// count: the bits are the same on any number of cores.
fn block_rows(m: usize) -> usize {
    m.div_ceil(m.div_ceil(MAX_BLOCK_ROWS).max(1)).max(1)
}

/// `C = A * B` for `rows` rows, one GEMM call per block of `block` rows.
fn gemm_blocks<T>(
    (block, rows, k, n): (usize, usize, usize, usize),
    a: &[T],
    b: &[T],
    c: &mut [T],
    gemm: Gemm<T>,
) {
    for (i, cb) in c[..rows * n].chunks_mut(block * n).enumerate() {
        let r0 = i * block;
        let r = cb.len() / n;
        gemm(r, k, n, &a[r0 * k..(r0 + r) * k], b, cb);
    }
}

/// `b` GEMMs `C[i] = A[i] * B[i]` (row-major, `A[i]` m x k, `B[i]` k x n)
/// on all cores: split over the batch when it has enough matrices, else
/// over the row blocks of each product (see [`block_rows`]).
fn batched_gemm<T: Send + Sync>(
    (b, m, k, n): (usize, usize, usize, usize),
    x: &[T],
    y: &[T],
    c: &mut [T],
    gemm: Gemm<T>,
) {
    let (mn, mk, kn) = (m * n, m * k, k * n);
    if mn == 0 {
        return;
    }
    let block = block_rows(m);
    let worth = b.saturating_mul(mn).saturating_mul(k.max(1)) >= 1 << 21;
    if b >= super::par::threads() {
        super::par::for_chunks_if(c, mn, worth, |start, chunk| {
            for (j, cb) in chunk.chunks_mut(mn).enumerate() {
                let bi = start / mn + j;
                let (a, bm) = (&x[bi * mk..(bi + 1) * mk], &y[bi * kn..(bi + 1) * kn]);
                gemm_blocks((block, m, k, n), a, bm, cb, gemm);
            }
        });
        return;
    }
    for (bi, cb) in c.chunks_mut(mn).enumerate() {
        let (a, bm) = (&x[bi * mk..(bi + 1) * mk], &y[bi * kn..(bi + 1) * kn]);
        super::par::for_chunks_if(cb, block * n, worth, |start, rows| {
            let r0 = start / n;
            let r = rows.len() / n;
            gemm_blocks((block, r, k, n), &a[r0 * k..], bm, rows, gemm);
        });
    }
}

/// Products of at most this many multiply-adds are summed by
/// [`small_product`]: the GEMM's set-up costs more than they do (its
/// packing, and in its first call in a process, reading the CPU's cache
/// sizes from some hundred files under /sys: 0.7 ms). Decided by the
/// shape alone, so the bits do not depend on the thread count.
const SMALL_PRODUCT: usize = 1 << 12;

/// `C[m,n] = A[m,k] * B[k,n]`, row-major, by the `gemm` crate on the
/// calling thread ([`small_product`] when small).
fn gemm_dense<T: 'static + Fma>(
    (m, k, n): (usize, usize, usize),
    a: &[T],
    b: &[T],
    c: &mut [T],
    one: T,
) {
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        c[..m * n].iter_mut().for_each(|v| *v = T::default());
        return;
    }
    assert!(a.len() >= m * k && b.len() >= k * n && c.len() >= m * n);
    if m.saturating_mul(n).saturating_mul(k) <= SMALL_PRODUCT {
        small_product((m, k, n), a, b, c);
        return;
    }
    // SAFETY: the slices hold at least m*k, k*n and m*n elements (checked
    // above); the strides (column 1, row k or n) describe dense row-major
    // matrices inside them; `c` is borrowed mutably, so it overlaps
    // neither operand; with `read_dst` false, `c` is only written
    // (c = 1 * a * b).
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            1,
            n as isize,
            false,
            a.as_ptr(),
            1,
            k as isize,
            b.as_ptr(),
            1,
            n as isize,
            T::default(),
            one,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

/// `C[m,n] = A[m,k] * B[k,n]`, each element a chain of fused
/// multiply-adds over k in order from 0, as the GEMM's kernels and XLA:CPU
/// sum a short product (the same bits on the tests' convolutions).
fn small_product<T: Fma>((m, k, n): (usize, usize, usize), a: &[T], b: &[T], c: &mut [T]) {
    for (row, a_row) in c[..m * n].chunks_exact_mut(n).zip(a.chunks_exact(k)) {
        row.fill(T::default());
        for (&x, b_row) in a_row.iter().zip(b.chunks_exact(n)) {
            for (acc, &y) in row.iter_mut().zip(b_row) {
                *acc = x.fma(y, *acc);
            }
        }
    }
}

/// A float the GEMM multiplies: `fma(a, b, c)` is `a * b + c` rounded once.
trait Fma: Copy + Default {
    fn fma(self, b: Self, c: Self) -> Self;
}

impl Fma for f32 {
    #[inline]
    fn fma(self, b: f32, c: f32) -> f32 {
        self.mul_add(b, c)
    }
}

impl Fma for f64 {
    #[inline]
    fn fma(self, b: f64, c: f64) -> f64 {
        self.mul_add(b, c)
    }
}

/// C[m,n] = A[m,k] * B[k,n], row-major, f32.
pub fn gemm32(m: usize, k: usize, n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    gemm_dense((m, k, n), a, b, c, 1.0);
}

/// C[m,n] = A[m,k] * B[k,n], row-major, f64.
pub fn gemm64(m: usize, k: usize, n: usize, a: &[f64], b: &[f64], c: &mut [f64]) {
    gemm_dense((m, k, n), a, b, c, 1.0);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(n: usize, seed: u32) -> Vec<f32> {
        (0..n as u32)
            .map(|i| ((i.wrapping_mul(2_654_435_761) ^ seed) % 2001) as f32 / 997.0 - 1.0)
            .collect()
    }

    /// The product split over the cores (by row blocks, or over the batch)
    /// gives the bits of one thread calling the GEMM once per row block:
    /// the split never changes a GEMM call's shape.
    #[test]
    fn a_split_gemm_gives_the_bits_of_one_thread() {
        for (b, m, k, n) in [(1, 301, 67, 129), (1, 601, 300, 129), (5, 65, 70, 141)] {
            let (x, y) = (values(b * m * k, 1), values(b * k * n, 2));
            let mut want = vec![0f32; b * m * n];
            for bi in 0..b {
                gemm_blocks(
                    (block_rows(m), m, k, n),
                    &x[bi * m * k..],
                    &y[bi * k * n..],
                    &mut want[bi * m * n..(bi + 1) * m * n],
                    gemm32,
                );
            }
            let mut got = vec![0f32; b * m * n];
            batched_gemm((b, m, k, n), &x, &y, &mut got, gemm32);
            let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want), "{b}x{m}x{k}x{n}");
        }
    }

    /// Small products, summed in a plain loop, and products just past the
    /// bound, by the GEMM, give the exact products of small integers (no
    /// rounding anywhere), empty k included.
    #[test]
    fn small_products_sum_like_the_gemm() {
        for (m, k, n) in [
            (1, 1, 1),
            (3, 5, 7),
            (16, 16, 16),
            (16, 17, 16),
            (2, 0, 3),
            (1, 4096, 1),
        ] {
            let a: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32 - 3.0).collect();
            let b: Vec<f32> = (0..k * n).map(|i| (i % 5) as f32 - 2.0).collect();
            let mut want = vec![0f32; m * n];
            for i in 0..m {
                for j in 0..n {
                    want[i * n + j] = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
                }
            }
            let mut got = vec![f32::NAN; m * n];
            gemm32(m, k, n, &a, &b, &mut got);
            assert_eq!(got, want, "{m}x{k}x{n}");
        }
    }

    #[test]
    fn row_blocks_are_even_and_at_most_the_maximum() {
        assert_eq!(block_rows(1), 1);
        assert_eq!(block_rows(256), 256);
        assert_eq!(block_rows(257), 129);
        assert_eq!(block_rows(512), 256);
        assert_eq!(block_rows(601), 201);
    }
}
