//! f16 and bf16 arithmetic: each element widened to f32, the op in f32,
//! the result rounded back after each op, as XLA:CPU computes them.
//!
//! Widening and rounding go a block at a time through `half`'s slice
//! conversions, which use the CPU's conversion instructions (F16C) when
//! it has them; one element at a time, each f16 conversion is a call that
//! first asks whether the CPU has them, and costs more than the op.

use super::par;
use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};

/// A 16-bit float the interpreter computes with in f32.
pub trait Narrow: Copy + Send + Sync {
    fn widen(self) -> f32;
    /// `dst[i] = src[i].widen()` (same lengths).
    fn widen_block(src: &[Self], dst: &mut [f32]);
    /// `dst[i]` = `src[i]` rounded to `Self` (same lengths).
    fn narrow_block(src: &[f32], dst: &mut [Self]);
}

macro_rules! narrow {
    ($t:ty) => {
        impl Narrow for $t {
            #[inline]
            fn widen(self) -> f32 {
                self.to_f32()
            }
            #[inline]
            fn widen_block(src: &[Self], dst: &mut [f32]) {
                src.convert_to_f32_slice(dst)
            }
            #[inline]
            fn narrow_block(src: &[f32], dst: &mut [Self]) {
                dst.convert_from_f32_slice(src)
            }
        }
    };
}

narrow!(f16);
narrow!(bf16);

/// Elements converted per step: two f32 blocks stay in the L1 cache.
const BLOCK: usize = 512;

/// `x[i] = f(x[i])` in f32, on all cores when large.
pub fn map_in_place<T: Narrow>(x: &mut [T], f: impl Fn(f32) -> f32 + Sync + Clone) {
    par::for_chunks(x, 1, |_, chunk| {
        let f = f.clone();
        let mut a = [0f32; BLOCK];
        for blk in chunk.chunks_mut(BLOCK) {
            let a = &mut a[..blk.len()];
            T::widen_block(blk, a);
            a.iter_mut().for_each(|p| *p = f(*p));
            T::narrow_block(a, blk);
        }
    });
}

/// `f(x[i])` in f32 for every element.
pub fn map<T: Narrow>(x: &[T], f: impl Fn(f32) -> f32 + Sync + Clone) -> Vec<T> {
    let mut out = x.to_vec();
    map_in_place(&mut out, f);
    out
}

/// `x[i] = f(x[i], y[i])` in f32 (`f(y[i], x[i])` when `!x_is_left`),
/// on all cores when large. `y` is as long as `x`.
pub fn zip_in_place<T: Narrow>(
    x: &mut [T],
    y: &[T],
    x_is_left: bool,
    f: impl Fn(f32, f32) -> f32 + Sync + Clone,
) {
    let n = x.len().min(y.len());
    par::for_chunks(&mut x[..n], 1, |start, chunk| {
        let f = f.clone();
        let (mut a, mut b) = ([0f32; BLOCK], [0f32; BLOCK]);
        for (k, blk) in chunk.chunks_mut(BLOCK).enumerate() {
            let from = start + k * BLOCK;
            let (a, b) = (&mut a[..blk.len()], &mut b[..blk.len()]);
            T::widen_block(blk, a);
            T::widen_block(&y[from..from + blk.len()], b);
            if x_is_left {
                a.iter_mut().zip(&*b).for_each(|(p, &q)| *p = f(*p, q));
            } else {
                a.iter_mut().zip(&*b).for_each(|(p, &q)| *p = f(q, *p));
            }
            T::narrow_block(a, blk);
        }
    });
}

/// `f(x[i], y[i])` in f32 for every pair (same lengths).
pub fn zip<T: Narrow>(x: &[T], y: &[T], f: impl Fn(f32, f32) -> f32 + Sync + Clone) -> Vec<T> {
    let mut out = x.to_vec();
    zip_in_place(&mut out, y, true, f);
    out
}

/// Every element widened to f32 (exact), on all cores when large.
pub fn widen_all<T: Narrow>(x: &[T]) -> Vec<f32> {
    convert_all(x, 0.0, T::widen_block)
}

/// The elements of f16 or bf16 data widened to f32 (None for any other
/// storage class).
pub fn widen_data(d: &super::array::Data) -> Option<Vec<f32>> {
    use super::array::Data;
    match d {
        Data::F16(v) => Some(widen_all(v)),
        Data::Bf16(v) => Some(widen_all(v)),
        _ => None,
    }
}

/// Every element rounded to `T`, on all cores when large.
pub fn narrow_all<T: Narrow + Default>(x: &[f32]) -> Vec<T> {
    convert_all(x, T::default(), T::narrow_block)
}

/// `convert` of `x` a block at a time, through a block on the stack into
/// the result's spare capacity: no pass of zeros over the result first.
fn convert_all<A: Sync, B: Copy + Send + Sync>(
    x: &[A],
    zero: B,
    convert: fn(&[A], &mut [B]),
) -> Vec<B> {
    par::collect_chunks(x.len(), 1, x.len() >= par::MIN_PARALLEL, |start, sink| {
        let mut block = [zero; BLOCK];
        for src in x[start..start + sink.room()].chunks(BLOCK) {
            let block = &mut block[..src.len()];
            convert(src, block);
            sink.extend_from_slice(block);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The block loops give each element's own conversion, op and
    /// rounding: every f16 bit pattern (NaNs, infinities, subnormals),
    /// both operand orders, lengths around the block size.
    #[test]
    fn blocks_match_one_element_at_a_time() {
        let all: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
        let other: Vec<f16> = all.iter().rev().copied().collect();
        let f = |p: f32, q: f32| p * 1.5 - q;
        let expect: Vec<u16> = all
            .iter()
            .zip(&other)
            .map(|(p, q)| f16::from_f32(f(p.widen(), q.widen())).to_bits())
            .collect();
        let bits = |v: Vec<f16>| v.into_iter().map(f16::to_bits).collect::<Vec<_>>();
        assert_eq!(bits(zip(&all, &other, f)), expect);
        let mut swapped = other.clone();
        zip_in_place(&mut swapped, &all, false, f);
        assert_eq!(bits(swapped), expect);
        let g = |p: f32| (p * 3.0).exp();
        let one: Vec<u16> = all
            .iter()
            .map(|p| f16::from_f32(g(p.widen())).to_bits())
            .collect();
        assert_eq!(bits(map(&all, g)), one);
        for n in [
            0,
            1,
            BLOCK - 1,
            BLOCK,
            BLOCK + 1,
            3 * BLOCK + 7,
            par::MIN_PARALLEL + 3,
        ] {
            let x: Vec<bf16> = (0..n)
                .map(|i| bf16::from_f32(i as f32 * 0.37 - 9.0))
                .collect();
            let want: Vec<bf16> = x.iter().map(|p| bf16::from_f32(p.widen() / 7.0)).collect();
            assert_eq!(map(&x, |p| p / 7.0), want, "n = {n}");
            assert_eq!(narrow_all::<bf16>(&widen_all(&x)), x);
        }
    }
}
