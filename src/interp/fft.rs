//! `fft`: FFT, IFFT, RFFT and IRFFT over the last 1 to 3 dimensions
//! (`fft_length`), with XLA's conventions: forward transforms are
//! unnormalized, inverse ones divide by the product of `fft_length`; RFFT
//! keeps the `n/2 + 1` non-negative frequencies of the last dimension and
//! IRFFT reads only those (the imaginary parts of the zero and, for even
//! n, the Nyquist frequency are ignored, as a C2R transform ignores them).
//!
//! Every transform runs in f64 (`rustfft`'s plans for any length) and
//! rounds once to c64/f32 where the type asks: at least as accurate as
//! XLA:CPU's f32 transforms.

use super::array::{shape_dims, strides, Array, Value};
use super::complex::{from_c128, to_c128};
use super::convert::to_f64_vec;
use super::{err, expect_operands, operand, Result};
use crate::ir::attrs::FftType;
use crate::ir::{AttrValue, Instruction, PrimitiveType};
use num_complex::Complex64;
use rustfft::FftPlanner;

/// The `fft` instruction.
pub fn eval(instr: &Instruction, ops: &[&Value]) -> Result<Array> {
    expect_operands(instr, ops, 1)?;
    let kind = match instr.attr("fft_type") {
        Some(AttrValue::FftType(t)) => *t,
        _ => return Err(err("fft without fft_type")),
    };
    let lengths: Vec<usize> = super::attrs::int_list_req(instr, "fft_length")?
        .iter()
        .map(|&n| usize::try_from(n).map_err(|_| err("negative fft_length")))
        .collect::<Result<_>>()?;
    fft(
        operand(ops, 0)?,
        kind,
        &lengths,
        instr.shape.element_type(),
        &shape_dims(&instr.shape)?,
    )
}

/// Transforms every line of `data` (of shape `dims`) along `axis`.
fn along_axis(
    data: &mut [Complex64],
    dims: &[usize],
    axis: usize,
    inverse: bool,
    planner: &mut FftPlanner<f64>,
) {
    let n = dims[axis];
    if n <= 1 || data.is_empty() {
        return;
    }
    let st = strides(dims)[axis];
    let plan = if inverse {
        planner.plan_fft_inverse(n)
    } else {
        planner.plan_fft_forward(n)
    };
    let mut line = vec![Complex64::new(0.0, 0.0); n];
    let outer = data.len() / (n * st);
    for o in 0..outer {
        for i in 0..st {
            let base = o * n * st + i;
            for (k, v) in line.iter_mut().enumerate() {
                *v = data[base + k * st];
            }
            plan.process(&mut line);
            for (k, v) in line.iter().enumerate() {
                data[base + k * st] = *v;
            }
        }
    }
}

/// XLA's `fft` on `a`, giving an array of `out_ty` and `out_dims`.
pub fn fft(
    a: &Array,
    kind: FftType,
    lengths: &[usize],
    out_ty: PrimitiveType,
    out_dims: &[usize],
) -> Result<Array> {
    let rank = a.rank();
    let l = lengths.len();
    if !(1..=3).contains(&l) || l > rank {
        return Err(err(format!(
            "fft over {l} dimensions of {} (1 to 3, at most the rank)",
            a.shape_text()
        )));
    }
    let first = rank - l;
    let complex_in = matches!(kind, FftType::Fft | FftType::Ifft | FftType::Irfft);
    if a.ty.is_complex() != complex_in || out_ty.is_complex() == (kind == FftType::Irfft) {
        return Err(err(format!("{kind:?} of {} to {out_ty}", a.ty)));
    }
    // The dims the transform sees: the input's, the last as fft_length says.
    let mut want_in: Vec<usize> = a.dims[..first].to_vec();
    want_in.extend_from_slice(lengths);
    let mut want_out = want_in.clone();
    let half = lengths[l - 1] / 2 + 1;
    match kind {
        FftType::Rfft => want_out[rank - 1] = half,
        FftType::Irfft => want_in[rank - 1] = half,
        _ => {}
    }
    if a.dims != want_in || out_dims != want_out {
        return Err(err(format!(
            "{kind:?} with fft_length {lengths:?}: the operand is {}, the result [{}]",
            a.shape_text(),
            super::array::dims_text(out_dims)
        )));
    }
    let mut planner = FftPlanner::<f64>::new();
    let total: f64 = lengths.iter().product::<usize>() as f64;
    let out = match kind {
        FftType::Fft | FftType::Ifft => {
            let inverse = kind == FftType::Ifft;
            let mut v = to_c128(&a.data);
            for axis in first..rank {
                along_axis(&mut v, &a.dims, axis, inverse, &mut planner);
            }
            if inverse {
                v.iter_mut().for_each(|c| *c /= total);
            }
            from_c128(out_ty, v)?
        }
        FftType::Rfft => {
            let mut v: Vec<Complex64> = to_f64_vec(&a.data, a.ty)
                .into_iter()
                .map(|x| Complex64::new(x, 0.0))
                .collect();
            for axis in first..rank {
                along_axis(&mut v, &a.dims, axis, false, &mut planner);
            }
            from_c128(out_ty, keep_first(&v, &a.dims, half))?
        }
        FftType::Irfft => {
            let mut v = to_c128(&a.data);
            for axis in first..rank - 1 {
                along_axis(&mut v, &a.dims, axis, true, &mut planner);
            }
            let full = hermitian_lines(&v, half, lengths[l - 1]);
            let mut full_dims = a.dims.clone();
            full_dims[rank - 1] = lengths[l - 1];
            let mut full = full;
            along_axis(&mut full, &full_dims, rank - 1, true, &mut planner);
            let re: Vec<f64> = full.iter().map(|c| c.re / total).collect();
            super::convert::from_f64_vec(out_ty, &re)?
        }
    };
    Array::new(out_ty, out_dims.to_vec(), out)
}

/// The first `keep` elements of every last-dimension line.
fn keep_first(v: &[Complex64], dims: &[usize], keep: usize) -> Vec<Complex64> {
    let n = *dims.last().unwrap_or(&1);
    v.chunks(n.max(1))
        .flat_map(|line| line[..keep.min(line.len())].iter().copied())
        .collect()
}

/// Lines of `half` non-negative frequencies completed to `n` by Hermitian
/// symmetry (X[n-k] = conj X[k]); the imaginary parts that must be zero
/// for a real signal (k = 0, and k = n/2 for even n) are dropped.
fn hermitian_lines(v: &[Complex64], half: usize, n: usize) -> Vec<Complex64> {
    let mut out = Vec::with_capacity(v.len() / half.max(1) * n);
    for line in v.chunks(half.max(1)) {
        let start = out.len();
        out.extend_from_slice(line);
        out.resize(start + n, Complex64::new(0.0, 0.0));
        out[start].im = 0.0;
        if n % 2 == 0 && n >= 2 {
            out[start + n / 2].im = 0.0;
        }
        for k in 1..n.div_ceil(2) {
            out[start + n - k] = out[start + k].conj();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::array::Data;
    use super::*;
    use num_complex::Complex32;

    fn c64(dims: &[usize], v: &[(f32, f32)]) -> Array {
        let d = v.iter().map(|&(a, b)| Complex32::new(a, b)).collect();
        Array::new(PrimitiveType::C64, dims.to_vec(), Data::C64(d)).unwrap()
    }

    fn close(a: &[Complex64], b: &[(f64, f64)]) -> bool {
        a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(x, &(re, im))| (x.re - re).abs() < 1e-5 && (x.im - im).abs() < 1e-5)
    }

    #[test]
    fn forward_inverse_and_real_transforms() {
        let x = c64(&[4], &[(1.0, 0.0), (2.0, 0.0), (3.0, 0.0), (4.0, 0.0)]);
        let y = fft(&x, FftType::Fft, &[4], PrimitiveType::C64, &[4]).unwrap();
        let want = [(10.0, 0.0), (-2.0, 2.0), (-2.0, 0.0), (-2.0, -2.0)];
        assert!(close(&to_c128(&y.data), &want));
        let back = fft(&y, FftType::Ifft, &[4], PrimitiveType::C64, &[4]).unwrap();
        assert!(close(
            &to_c128(&back.data),
            &[(1.0, 0.0), (2.0, 0.0), (3.0, 0.0), (4.0, 0.0)]
        ));
        let r = Array::new(
            PrimitiveType::F32,
            vec![4],
            Data::F32(vec![1.0, 2.0, 3.0, 4.0]),
        )
        .unwrap();
        let y = fft(&r, FftType::Rfft, &[4], PrimitiveType::C64, &[3]).unwrap();
        assert!(close(&to_c128(&y.data), &want[..3]));
        let back = fft(&y, FftType::Irfft, &[4], PrimitiveType::F32, &[4]).unwrap();
        assert_eq!(
            to_f64_vec(&back.data, back.ty)
                .iter()
                .map(|x| x.round())
                .collect::<Vec<_>>(),
            vec![1.0, 2.0, 3.0, 4.0]
        );
    }

    #[test]
    fn two_d_transform_over_the_last_dims() {
        // [[1, 2], [3, 4]]: sums and differences.
        let x = c64(
            &[1, 2, 2],
            &[(1.0, 0.0), (2.0, 0.0), (3.0, 0.0), (4.0, 0.0)],
        );
        let y = fft(&x, FftType::Fft, &[2, 2], PrimitiveType::C64, &[1, 2, 2]).unwrap();
        assert!(close(
            &to_c128(&y.data),
            &[(10.0, 0.0), (-2.0, 0.0), (-4.0, 0.0), (0.0, 0.0)]
        ));
        assert!(fft(&x, FftType::Fft, &[2, 3], PrimitiveType::C64, &[1, 2, 3]).is_err());
    }
}
