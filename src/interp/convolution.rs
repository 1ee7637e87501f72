//! `convolution` with XLA's semantics: any `dim_labels`, strides, padding
//! (negative too), `lhs_dilate` (transposed convolution), `rhs_dilate`
//! (atrous), `rhs_reversal`, `feature_group_count` and `batch_group_count`,
//! any number of spatial dimensions.
//!
//! The operands are transposed to channels-last (`[batch, spatial...,
//! feature]` and `[spatial..., in, out]`), the input is unrolled into a
//! matrix with one row per output position and one column per (window
//! position, input feature) (im2col; padding and dilation holes read as
//! zero), and each group is one GEMM with its slice of the kernel.
//! f32 operands multiply in f32 (what XLA:CPU's Eigen kernels do);
//! f16, bf16, f64 and the 8-bit floats in f64, rounded once to the result
//! type (exact products, like the dot); integers in i64, wrapping.
//!
//! Groups follow the StableHLO spec: with `feature_group_count = G` the
//! input features and the kernel's output features are cut into G
//! consecutive blocks and block g of the output is block g of the input
//! convolved with block g of the kernel; `batch_group_count = B` cuts the
//! input batch into B consecutive blocks instead (a weight gradient).

use super::array::{element_count, shape_dims, strides, Array, Data, Value};
use super::attrs::{self, WindowDim};
use super::convert::{from_f32_vec, from_f64_vec, to_f64_vec};
use super::dot::{gemm32, gemm64};
use super::shape_ops::{reverse, transpose};
use super::{err, expect_operands, operand, Result};
use crate::ir::{AttrValue, Instruction, PrimitiveType};

/// Which dimension of each operand and of the result is what.
#[derive(Clone, Debug, PartialEq)]
pub struct ConvDims {
    pub lhs_batch: usize,
    pub lhs_feature: usize,
    pub lhs_spatial: Vec<usize>,
    pub rhs_in: usize,
    pub rhs_out: usize,
    pub rhs_spatial: Vec<usize>,
    pub out_batch: usize,
    pub out_feature: usize,
    pub out_spatial: Vec<usize>,
}

/// The typed `dim_labels`, as indices; an error if one is negative or the
/// three sides have different spatial ranks.
pub fn conv_dims(d: &crate::ir::attrs::ConvDims) -> Result<ConvDims> {
    let bad = || err(format!("dim_labels {d:?} do not name dimensions"));
    let one = |v: i64| usize::try_from(v).map_err(|_| bad());
    let all = |v: &[i64]| v.iter().map(|&x| one(x)).collect::<Result<Vec<_>>>();
    let dims = ConvDims {
        lhs_batch: one(d.input_batch)?,
        lhs_feature: one(d.input_feature)?,
        lhs_spatial: all(&d.input_spatial)?,
        rhs_in: one(d.kernel_input_feature)?,
        rhs_out: one(d.kernel_output_feature)?,
        rhs_spatial: all(&d.kernel_spatial)?,
        out_batch: one(d.output_batch)?,
        out_feature: one(d.output_feature)?,
        out_spatial: all(&d.output_spatial)?,
    };
    let n = dims.lhs_spatial.len();
    if dims.rhs_spatial.len() != n || dims.out_spatial.len() != n {
        return Err(bad());
    }
    Ok(dims)
}

/// Everything a convolution needs besides its operands.
pub struct ConvSpec {
    pub dims: ConvDims,
    pub window: Vec<WindowDim>,
    pub feature_groups: usize,
    pub batch_groups: usize,
    pub out_ty: PrimitiveType,
    pub out_dims: Vec<usize>,
}

impl ConvSpec {
    pub fn from_instr(instr: &Instruction) -> Result<ConvSpec> {
        let dims = match instr.attr("dim_labels") {
            Some(AttrValue::ConvDims(d)) => conv_dims(d)?,
            _ => return Err(err("convolution without dim_labels")),
        };
        let window = attrs::window_attr(instr, dims.lhs_spatial.len())?;
        let group = |k: &str| -> Result<usize> {
            let v = attrs::int_attr(instr, k)?.unwrap_or(1);
            usize::try_from(v)
                .ok()
                .filter(|&v| v >= 1)
                .ok_or_else(|| err(format!("{k}={v} must be at least 1")))
        };
        Ok(ConvSpec {
            dims,
            window,
            feature_groups: group("feature_group_count")?,
            batch_groups: group("batch_group_count")?,
            out_ty: instr.shape.element_type(),
            out_dims: shape_dims(&instr.shape)?,
        })
    }
}

/// For one spatial dimension: the input index each (output position,
/// window position) reads, or `None` where it falls in padding or between
/// dilated elements.
fn spatial_taps(w: &WindowDim, input: usize, output: usize) -> Vec<Option<usize>> {
    let size = w.size as usize;
    let mut taps = Vec::with_capacity(output * size);
    for o in 0..output as i64 {
        for k in 0..w.size {
            let p = o * w.stride + k * w.window_dilation - w.pad_low;
            let hit = p >= 0 && p % w.base_dilation == 0 && p / w.base_dilation < input as i64;
            taps.push(hit.then_some((p / w.base_dilation) as usize));
        }
    }
    taps
}

/// The size of each output spatial dimension (XLA's window arithmetic).
fn output_size(w: &WindowDim, input: usize) -> usize {
    let base = if input == 0 {
        0
    } else {
        (input as i64 - 1) * w.base_dilation + 1
    };
    let padded = base + w.pad_low + w.pad_high;
    let span = (w.size - 1) * w.window_dilation + 1;
    if w.size == 0 || padded < span {
        0
    } else {
        ((padded - span) / w.stride + 1) as usize
    }
}

/// An element type the GEMM runs in.
trait Acc: Copy + Default {
    fn gemm(m: usize, k: usize, n: usize, a: &[Self], b: &[Self], c: &mut [Self]);
}

impl Acc for f32 {
    fn gemm(m: usize, k: usize, n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
        gemm32(m, k, n, a, b, c)
    }
}

impl Acc for f64 {
    fn gemm(m: usize, k: usize, n: usize, a: &[f64], b: &[f64], c: &mut [f64]) {
        gemm64(m, k, n, a, b, c)
    }
}

impl Acc for i64 {
    fn gemm(m: usize, k: usize, n: usize, a: &[i64], b: &[i64], c: &mut [i64]) {
        c[..m * n].iter_mut().for_each(|v| *v = 0);
        for i in 0..m {
            for p in 0..k {
                let x = a[i * k + p];
                let row = &mut c[i * n..(i + 1) * n];
                for (v, &y) in row.iter_mut().zip(&b[p * n..(p + 1) * n]) {
                    *v = v.wrapping_add(x.wrapping_mul(y));
                }
            }
        }
    }
}

/// The geometry of a convolution in channels-last form.
struct Geometry {
    batch: usize,
    in_spatial: Vec<usize>,
    channels: usize,
    window: Vec<usize>,
    out_spatial: Vec<usize>,
    kernel_out: usize,
    /// Per spatial dimension, [`spatial_taps`].
    taps: Vec<Vec<Option<usize>>>,
}

/// Rows of the unrolled input built at a time (bounds the memory).
const ROWS_PER_BLOCK_ELEMS: usize = 1 << 22;

/// `out[n, pos, o]` for the batch block `batches`, input features
/// `[c0, c0 + cg)` and kernel outputs `[o0, o0 + og)`, in channels-last
/// order (`lhs`: [N, S..., C]; `rhs`: [W..., C/G, O]).
#[allow(clippy::too_many_arguments)]
fn conv_group<T: Acc>(
    g: &Geometry,
    lhs: &[T],
    rhs: &[T],
    batches: std::ops::Range<usize>,
    c0: usize,
    cg: usize,
    o0: usize,
    og: usize,
    out: &mut [T],
    out_stride: usize,
) {
    let nwin: usize = g.window.iter().product();
    let npos: usize = g.out_spatial.iter().product();
    let kdim = nwin * cg;
    // The kernel block: rows (window position, feature), columns og.
    let mut kern = vec![T::default(); kdim * og];
    for w in 0..nwin {
        for c in 0..cg {
            let src = (w * cg + c) * g.kernel_out + o0;
            kern[(w * cg + c) * og..(w * cg + c + 1) * og].copy_from_slice(&rhs[src..src + og]);
        }
    }
    let ist = strides(&g.in_spatial);
    let ost = strides(&g.out_spatial);
    let wst = strides(&g.window);
    let rank = g.window.len();
    let rows_total = batches.len() * npos;
    let block = (ROWS_PER_BLOCK_ELEMS / kdim.max(1)).clamp(1, rows_total.max(1));
    let mut a = vec![T::default(); block * kdim];
    let mut c = vec![T::default(); block * og];
    let in_batch = ist.first().map_or(1, |&s| s * g.in_spatial[0]) * g.channels;
    let mut row0 = 0;
    while row0 < rows_total {
        let rows = block.min(rows_total - row0);
        a[..rows * kdim].iter_mut().for_each(|v| *v = T::default());
        for r in 0..rows {
            let (bi, pos) = ((row0 + r) / npos, (row0 + r) % npos);
            let n = batches.start + bi;
            let dst = &mut a[r * kdim..(r + 1) * kdim];
            'win: for w in 0..nwin {
                let mut lin = 0usize;
                for d in 0..rank {
                    let od = (pos / ost[d]) % g.out_spatial[d];
                    let kd = (w / wst[d]) % g.window[d];
                    match g.taps[d][od * g.window[d] + kd] {
                        Some(i) => lin += i * ist[d],
                        None => continue 'win,
                    }
                }
                let src = n * in_batch + lin * g.channels + c0;
                dst[w * cg..(w + 1) * cg].copy_from_slice(&lhs[src..src + cg]);
            }
        }
        T::gemm(
            rows,
            kdim,
            og,
            &a[..rows * kdim],
            &kern,
            &mut c[..rows * og],
        );
        for r in 0..rows {
            let (bi, pos) = ((row0 + r) / npos, (row0 + r) % npos);
            let dst = (bi * npos + pos) * out_stride + o0;
            out[dst..dst + og].copy_from_slice(&c[r * og..(r + 1) * og]);
        }
        row0 += rows;
    }
}

/// All groups of a convolution in accumulation type `T`; the result is
/// `[N_out, out spatial..., O]`.
fn conv_all<T: Acc>(g: &Geometry, spec: &ConvSpec, lhs: &[T], rhs: &[T]) -> Vec<T> {
    let (fg, bg) = (spec.feature_groups, spec.batch_groups);
    let groups = fg * bg;
    let out_batch = g.batch / bg;
    let npos: usize = g.out_spatial.iter().product();
    let og = g.kernel_out / groups;
    let cg = g.channels / fg;
    let mut out = vec![T::default(); out_batch * npos * g.kernel_out];
    for k in 0..groups {
        let (b0, c0) = if bg > 1 {
            (k * out_batch, 0)
        } else {
            (0, k * cg)
        };
        conv_group(
            g,
            lhs,
            rhs,
            b0..b0 + out_batch,
            c0,
            cg,
            k * og,
            og,
            &mut out,
            g.kernel_out,
        );
    }
    out
}

/// Checks the operands against the spec; returns the geometry.
fn geometry(lhs: &Array, rhs: &Array, spec: &ConvSpec) -> Result<Geometry> {
    let d = &spec.dims;
    let rank = d.lhs_spatial.len() + 2;
    if lhs.rank() != rank || rhs.rank() != rank || spec.out_dims.len() != rank {
        return Err(err(format!(
            "convolution of {} and {}: dim_labels has {} spatial dimensions",
            lhs.shape_text(),
            rhs.shape_text(),
            rank - 2
        )));
    }
    let (fg, bg) = (spec.feature_groups, spec.batch_groups);
    let batch = lhs.dims[d.lhs_batch];
    let channels = lhs.dims[d.lhs_feature];
    let kernel_out = rhs.dims[d.rhs_out];
    let fail = |why: String| err(format!("convolution: {why}"));
    if fg > 1 && bg > 1 {
        return Err(fail(
            "feature_group_count and batch_group_count both above 1".into(),
        ));
    }
    if channels % fg != 0 || rhs.dims[d.rhs_in] * fg != channels {
        return Err(fail(format!(
            "input features {channels} / feature_group_count {fg} must equal the kernel's input features {}",
            rhs.dims[d.rhs_in]
        )));
    }
    if kernel_out % (fg * bg) != 0 || batch % bg != 0 {
        return Err(fail(format!(
            "kernel output features {kernel_out} and batch {batch} must divide by the group counts ({fg}, {bg})"
        )));
    }
    let in_spatial: Vec<usize> = d.lhs_spatial.iter().map(|&i| lhs.dims[i]).collect();
    let window: Vec<usize> = d.rhs_spatial.iter().map(|&i| rhs.dims[i]).collect();
    let mut out_spatial = Vec::new();
    let mut taps = Vec::new();
    for (k, w) in spec.window.iter().enumerate() {
        if w.size as usize != window[k] {
            return Err(fail(format!(
                "window size {} in spatial dimension {k}, the kernel has {}",
                w.size, window[k]
            )));
        }
        let o = output_size(w, in_spatial[k]);
        taps.push(spatial_taps(w, in_spatial[k], o));
        out_spatial.push(o);
    }
    let mut want = vec![0usize; rank];
    want[d.out_batch] = batch / bg;
    want[d.out_feature] = kernel_out;
    for (k, &i) in d.out_spatial.iter().enumerate() {
        want[i] = out_spatial[k];
    }
    if want != spec.out_dims {
        return Err(fail(format!(
            "the result is [{}], the window gives [{}]",
            super::array::dims_text(&spec.out_dims),
            super::array::dims_text(&want)
        )));
    }
    Ok(Geometry {
        batch,
        in_spatial,
        channels,
        window,
        out_spatial,
        kernel_out,
        taps,
    })
}

/// The `convolution` instruction.
pub fn eval(instr: &Instruction, ops: &[&Value]) -> Result<Array> {
    expect_operands(instr, ops, 2)?;
    convolution(
        operand(ops, 0)?,
        operand(ops, 1)?,
        &ConvSpec::from_instr(instr)?,
    )
}

/// XLA's `convolution`.
pub fn convolution(lhs: &Array, rhs: &Array, spec: &ConvSpec) -> Result<Array> {
    let d = &spec.dims;
    let g = geometry(lhs, rhs, spec)?;
    element_count(&spec.out_dims)?;
    // Channels last on both sides; the kernel reversed where asked.
    let lperm: Vec<usize> = std::iter::once(d.lhs_batch)
        .chain(d.lhs_spatial.iter().copied())
        .chain(std::iter::once(d.lhs_feature))
        .collect();
    let rperm: Vec<usize> = d
        .rhs_spatial
        .iter()
        .copied()
        .chain([d.rhs_in, d.rhs_out])
        .collect();
    let lt = transpose(lhs, &lperm)?;
    let mut rt = transpose(rhs, &rperm)?;
    let reversed: Vec<i64> = (0..spec.window.len())
        .filter(|&k| spec.window[k].reversal)
        .map(|k| k as i64)
        .collect();
    if !reversed.is_empty() {
        rt = reverse(&rt, &reversed)?;
    }
    if lhs.ty.is_complex() || rhs.ty.is_complex() || spec.out_ty.is_complex() {
        return Err(super::unsupported(
            "convolution of complex arrays is not supported",
        ));
    }
    let data = match (&lt.data, &rt.data) {
        (Data::F32(x), Data::F32(y)) if spec.out_ty != PrimitiveType::F64 => {
            from_f32_vec(spec.out_ty, conv_all(&g, spec, x, y))?
        }
        (Data::S(_) | Data::U(_), Data::S(_) | Data::U(_)) if spec.out_ty.is_integral() => {
            let ints = |a: &Array| -> Vec<i64> {
                match &a.data {
                    Data::S(v) => v.clone(),
                    Data::U(v) => v.iter().map(|&x| x as i64).collect(),
                    _ => Vec::new(),
                }
            };
            let c = conv_all(&g, spec, &ints(&lt), &ints(&rt));
            let w = spec.out_ty.bit_width();
            if spec.out_ty.is_signed_int() {
                Data::S(c.into_iter().map(|v| super::array::wrap_s(v, w)).collect())
            } else {
                Data::U(
                    c.into_iter()
                        .map(|v| super::array::wrap_u(v as u64, w))
                        .collect(),
                )
            }
        }
        _ => {
            let x = to_f64_vec(&lt.data, lt.ty);
            let y = to_f64_vec(&rt.data, rt.ty);
            from_f64_vec(spec.out_ty, &conv_all(&g, spec, &x, &y))?
        }
    };
    // [N, spatial..., O] -> the result's dim_labels.
    let mut canon_dims = vec![g.batch / spec.batch_groups];
    canon_dims.extend(&g.out_spatial);
    canon_dims.push(g.kernel_out);
    let canon = Array::new(spec.out_ty, canon_dims, data)?;
    // Result dim i is canonical dim inv[i].
    let rank = spec.out_dims.len();
    let mut inv = vec![0usize; rank];
    inv[d.out_batch] = 0;
    for (k, &i) in d.out_spatial.iter().enumerate() {
        inv[i] = k + 1;
    }
    inv[d.out_feature] = rank - 1;
    transpose(&canon, &inv)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr(dims: &[usize], v: &[f32]) -> Array {
        Array::new(PrimitiveType::F32, dims.to_vec(), Data::F32(v.to_vec())).unwrap()
    }

    fn win(size: i64) -> WindowDim {
        WindowDim {
            size,
            stride: 1,
            pad_low: 0,
            pad_high: 0,
            base_dilation: 1,
            window_dilation: 1,
            reversal: false,
        }
    }

    fn parse_dim_labels(s: &str) -> Result<ConvDims> {
        let typed = crate::text::attrs::read(
            "dim_labels",
            Some(crate::ir::Opcode::Convolution),
            &s.into(),
        )
        .map_err(|(_, m)| err(m))?;
        match typed {
            Some(AttrValue::ConvDims(d)) => conv_dims(&d),
            _ => Err(err("not dim_labels")),
        }
    }

    fn spec(labels: &str, window: Vec<WindowDim>, out: &[usize]) -> ConvSpec {
        ConvSpec {
            dims: parse_dim_labels(labels).unwrap(),
            window,
            feature_groups: 1,
            batch_groups: 1,
            out_ty: PrimitiveType::F32,
            out_dims: out.to_vec(),
        }
    }

    fn f32s(a: &Array) -> Vec<f32> {
        match &a.data {
            Data::F32(v) => v.clone(),
            _ => panic!("not f32"),
        }
    }

    #[test]
    fn labels_parse_in_any_order() {
        let d = parse_dim_labels("b01f_01io->b01f").unwrap();
        assert_eq!(
            (d.lhs_batch, d.lhs_feature, d.lhs_spatial),
            (0, 3, vec![1, 2])
        );
        assert_eq!((d.rhs_in, d.rhs_out, d.rhs_spatial), (2, 3, vec![0, 1]));
        let d = parse_dim_labels("f10b_o1i0->1b0f").unwrap();
        assert_eq!(
            (d.lhs_batch, d.lhs_feature, d.lhs_spatial),
            (3, 0, vec![2, 1])
        );
        assert_eq!((d.rhs_in, d.rhs_out, d.rhs_spatial), (2, 0, vec![3, 1]));
        assert_eq!(
            (d.out_batch, d.out_feature, d.out_spatial),
            (1, 3, vec![2, 0])
        );
        assert!(parse_dim_labels("bf_io->bf")
            .unwrap()
            .lhs_spatial
            .is_empty());
        assert!(parse_dim_labels("b02f_01io->b01f").is_err());
    }

    #[test]
    fn one_d_correlation_with_padding_stride_and_dilations() {
        // x = 1..5, kernel [1, 10]: y[o] = x[o] + 10 x[o+1] (cross-correlation).
        let x = arr(&[1, 5, 1], &[1.0, 2.0, 3.0, 4.0, 5.0]);
        let k = arr(&[2, 1, 1], &[1.0, 10.0]);
        let y = convolution(&x, &k, &spec("b0f_0io->b0f", vec![win(2)], &[1, 4, 1])).unwrap();
        assert_eq!(f32s(&y), vec![21.0, 32.0, 43.0, 54.0]);
        // pad 1_1, stride 2: padded 0,1,2,3,4,5,0 -> windows at 0, 2, 4.
        let mut w = win(2);
        (w.pad_low, w.pad_high, w.stride) = (1, 1, 2);
        let y = convolution(&x, &k, &spec("b0f_0io->b0f", vec![w], &[1, 3, 1])).unwrap();
        assert_eq!(f32s(&y), vec![10.0, 32.0, 54.0]);
        // rhs_dilate 2: y[o] = x[o] + 10 x[o+2].
        let mut w = win(2);
        w.window_dilation = 2;
        let y = convolution(&x, &k, &spec("b0f_0io->b0f", vec![w], &[1, 3, 1])).unwrap();
        assert_eq!(f32s(&y), vec![31.0, 42.0, 53.0]);
        // lhs_dilate 2: input 1,0,2,0,3,0,4,0,5 (9 long).
        let mut w = win(2);
        w.base_dilation = 2;
        let y = convolution(&x, &k, &spec("b0f_0io->b0f", vec![w], &[1, 8, 1])).unwrap();
        assert_eq!(f32s(&y), vec![1.0, 20.0, 2.0, 30.0, 3.0, 40.0, 4.0, 50.0]);
        // Reversal: kernel [10, 1].
        let mut w = win(2);
        w.reversal = true;
        let y = convolution(&x, &k, &spec("b0f_0io->b0f", vec![w], &[1, 4, 1])).unwrap();
        assert_eq!(f32s(&y), vec![12.0, 23.0, 34.0, 45.0]);
        // Negative padding drops input.
        let mut w = win(2);
        w.pad_low = -1;
        let y = convolution(&x, &k, &spec("b0f_0io->b0f", vec![w], &[1, 3, 1])).unwrap();
        assert_eq!(f32s(&y), vec![32.0, 43.0, 54.0]);
    }

    #[test]
    fn feature_and_batch_groups() {
        // Depthwise: 2 channels, each its own 1-tap kernel (x2 and x3).
        let x = arr(&[1, 2, 2], &[1.0, 2.0, 3.0, 4.0]); // b, 0, f
        let k = arr(&[1, 1, 2], &[2.0, 3.0]); // 0, i, o
        let mut s = spec("b0f_0io->b0f", vec![win(1)], &[1, 2, 2]);
        s.feature_groups = 2;
        assert_eq!(
            f32s(&convolution(&x, &k, &s).unwrap()),
            vec![2.0, 6.0, 6.0, 12.0]
        );
        // Batch groups: batch 2 -> output feature o reads batch o.
        let x = arr(&[2, 2, 1], &[1.0, 2.0, 3.0, 4.0]);
        let k = arr(&[2, 1, 2], &[1.0, 1.0, 1.0, 1.0]);
        let mut s = spec("b0f_0io->b0f", vec![win(2)], &[1, 1, 2]);
        s.batch_groups = 2;
        assert_eq!(f32s(&convolution(&x, &k, &s).unwrap()), vec![3.0, 7.0]);
    }

    #[test]
    fn a_wrong_result_shape_is_an_error() {
        let x = arr(&[1, 5, 1], &[1.0; 5]);
        let k = arr(&[2, 1, 1], &[1.0; 2]);
        let e = convolution(&x, &k, &spec("b0f_0io->b0f", vec![win(2)], &[1, 5, 1]));
        assert!(e.unwrap_err().message.contains("the window gives [1,4,1]"));
    }
}
