//! Comparing outputs: the tolerances of `eval --compare`, the reference
//! tests and `--check-numerics` (whose driver is `crate::driver`).
//!
//! Tolerances, per element type: integers, pred and indices exactly;
//! floats `|got - want| <= rtol * (|want| + max|want|)`, where `max|want|`
//! is the largest finite magnitude of that output (so near-zero elements of
//! a large output get the output's scale), with `rtol` = 1e-10 for f64,
//! 1e-5 for f32, 2e-3 for f16, 1e-2 for bf16 and 2^-(mantissa bits) for the
//! 8-bit floats. NaN must meet NaN (either sign) and infinities the same
//! infinity. In `--check-numerics`, an output the relative tolerance
//! rejects gets its measured rounding noise as an extra absolute allowance
//! ([`NOISE_FACTOR`], [`perturb_inputs`]).

use super::array::{Array, Data, Value};
use super::EvalError;
use crate::ir::PrimitiveType;
use std::fmt;

/// The relative tolerance of a float type (0 for exact types).
pub fn rtol(ty: PrimitiveType) -> f64 {
    match ty {
        PrimitiveType::F64 | PrimitiveType::C128 => 1e-10,
        PrimitiveType::F32 | PrimitiveType::C64 => 1e-5,
        PrimitiveType::F16 => 2e-3,
        PrimitiveType::Bf16 => 1e-2,
        t => match t.minifloat() {
            // E8M0 (no mantissa) is compared exactly.
            Some(m) if m.mantissa_bits > 0 => 2f64.powi(-(m.mantissa_bits as i32)),
            _ => 0.0,
        },
    }
}

/// How two arrays differ.
#[derive(Clone, Debug, PartialEq)]
pub struct Diff {
    pub max_abs: f64,
    /// max |got - want| / max|want|.
    pub max_rel: f64,
    pub tolerance: f64,
    /// Elements outside the tolerance.
    pub bad: usize,
    /// The first such element: (flat index, got, want).
    pub first_bad: Option<(usize, f64, f64)>,
    /// Shapes or types differ (nothing else is compared).
    pub shape_mismatch: Option<String>,
    /// The output's measured rounding noise (`--check-numerics=full`,
    /// an output past its tolerance); 0 when not measured. It never makes
    /// an output ok: an output past its tolerance but within this much of
    /// it is [`Diff::inconclusive`].
    pub noise_floor: f64,
    /// Elements outside the tolerance even with `noise_floor` added.
    pub beyond_noise: usize,
    /// The magnitude errors were measured against when it is not the
    /// output's own (`eval --compare`: the largest operand of the op that
    /// computed it, where the output is what is left of a cancellation);
    /// 0 when not used.
    pub operand_scale: f64,
}

impl Diff {
    /// No difference yet, judged at relative tolerance `tol`.
    fn none(tol: f64) -> Diff {
        Diff {
            max_abs: 0.0,
            max_rel: 0.0,
            tolerance: tol,
            bad: 0,
            first_bad: None,
            shape_mismatch: None,
            noise_floor: 0.0,
            beyond_noise: 0,
            operand_scale: 0.0,
        }
    }

    pub fn ok(&self) -> bool {
        self.bad == 0 && self.shape_mismatch.is_none()
    }

    /// Past its tolerance, but within its measured rounding noise: the
    /// whole-module comparison cannot tell a rewrite from the model's
    /// sensitivity there (neither ok nor proven wrong).
    pub fn inconclusive(&self) -> bool {
        !self.ok()
            && self.shape_mismatch.is_none()
            && self.noise_floor > 0.0
            && self.beyond_noise == 0
    }

    /// The tightest bound an output within tolerance met; `None` when
    /// it is not within tolerance, but [`Bound::RoundingNoise`] when it is
    /// [`Diff::inconclusive`].
    pub fn bound(&self) -> Option<Bound> {
        if self.inconclusive() {
            return Some(Bound::RoundingNoise);
        }
        if !self.ok() {
            return None;
        }
        if self.operand_scale > 0.0 {
            return Some(Bound::OperandScale);
        }
        // An all-zero reference leaves max_rel at 0 whatever the error.
        let all_zero_want = self.max_abs > 0.0 && self.max_rel == 0.0;
        Some(if self.max_rel <= self.tolerance && !all_zero_want {
            Bound::OfMaximum
        } else {
            Bound::Elementwise
        })
    }
}

/// Which bound held for an output within tolerance: a reader comparing
/// `max rel err` with `rtol` sees why the first is ok, not the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// Every error within `rtol * max|want|` (exact types: all equal).
    OfMaximum,
    /// Only within `rtol * (|want| + max|want|)`: the larger elements
    /// used their own size too.
    Elementwise,
    /// Past `rtol`, only within the output's measured rounding noise: not
    /// ok, inconclusive (the whole-module comparison only).
    RoundingNoise,
    /// Only within `rtol * (|want| + max|operand|)`: the output is what a
    /// cancellation left (a gradient zero in exact arithmetic), its error
    /// the rounding of the values it was computed from (`eval --compare`).
    OperandScale,
}

impl Bound {
    const ALL: [Bound; 4] = [
        Bound::OfMaximum,
        Bound::Elementwise,
        Bound::RoundingNoise,
        Bound::OperandScale,
    ];

    /// The name Python's `OutputCheck.bound` gives it.
    pub fn name(self) -> &'static str {
        match self {
            Bound::OfMaximum => "rtol*max|want|",
            Bound::Elementwise => "rtol*(|want|+max|want|)",
            Bound::RoundingNoise => "rounding noise",
            Bound::OperandScale => "rtol*(|want|+max|operand|)",
        }
    }

    pub fn from_name(name: &str) -> Option<Bound> {
        Bound::ALL.into_iter().find(|b| b.name() == name)
    }

    /// The result column of `--check-numerics`'s table for an output
    /// within this bound (`noise_floor`: the allowance it was given).
    pub fn verdict(self, noise_floor: f64) -> String {
        match self {
            Bound::OfMaximum => "ok".to_string(),
            Bound::Elementwise | Bound::OperandScale => {
                format!("ok (each err <= {})", self.name())
            }
            Bound::RoundingNoise => {
                format!("inconclusive (within rounding noise {noise_floor:.1e})")
            }
        }
    }
}

impl fmt::Display for Diff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(m) = &self.shape_mismatch {
            return f.write_str(m);
        }
        write!(
            f,
            "max abs err {:.3e}, max rel err {:.3e} (tolerance {:.0e}",
            self.max_abs, self.max_rel, self.tolerance
        )?;
        if self.noise_floor > 0.0 {
            write!(f, " + rounding noise {:.3e}", self.noise_floor)?;
        }
        write!(f, "), {} elements out of tolerance", self.bad)?;
        if let Some((i, g, w)) = self.first_bad {
            write!(f, ", first at flat index {i}: got {g}, want {w}")?;
        }
        Ok(())
    }
}

/// The relative tolerance `--check-numerics` allows a rewrite: ten times
/// [`rtol`] for f32/f64 and twice for narrower floats. A rewrite changes
/// where values are rounded (a softmax call computes in f64 and rounds
/// once); the difference of one rounding propagates through the rest of a
/// model (the 4-layer GPT's logits move by 2.6e-5 of their maximum when its
/// softmaxes become calls). A wrong rewrite moves outputs by O(1).
pub fn check_rtol(ty: PrimitiveType) -> f64 {
    match ty {
        PrimitiveType::F64 | PrimitiveType::F32 => 10.0 * rtol(ty),
        t => 2.0 * rtol(t),
    }
}

/// Compares `got` with the reference `want` ([`rtol`] times `scale`).
pub fn compare_arrays(got: &Array, want: &Array, scale: f64) -> Diff {
    compare_with(got, want, rtol(want.ty) * scale)
}

/// [`compare_arrays`], and where that fails, against the magnitude of
/// the values the output was computed from (`operand_scale`, when larger
/// than the output's): an output near zero that is what a cancellation
/// left keeps the rounding error of what cancelled ([`Bound::OperandScale`]).
pub fn compare_with_operands(got: &Array, want: &Array, scale: f64, operand_scale: f64) -> Diff {
    let tol = rtol(want.ty) * scale;
    let d = compare_with(got, want, tol);
    if d.ok() || d.shape_mismatch.is_some() || operand_scale <= max_finite(want) {
        return d;
    }
    let wide = compare_inner(got, want, tol, operand_scale, 0.0, true);
    if wide.ok() {
        Diff {
            operand_scale,
            ..wide
        }
    } else {
        d
    }
}

/// The largest finite magnitude of a float array (0 for other types).
pub fn max_finite(a: &Array) -> f64 {
    if !a.ty.is_float() {
        return 0.0;
    }
    match &a.data {
        // No f64 copy: |x| and max are exact in f32, and so is widening.
        // The bits of |x| order as |x| does, and are below infinity's
        // exactly when x is finite: an integer max, vectorised.
        Data::F32(v) => f64::from(f32::from_bits(most_finite_bits(v))),
        _ => a
            .to_f64_vec()
            .iter()
            .filter(|x| x.is_finite())
            .fold(0.0f64, |m, x| m.max(x.abs())),
    }
}

/// The bits of the largest finite |x| of `v` (0 when none), on AVX2 where
/// the CPU has it (an unsigned 32-bit max is one instruction there).
fn most_finite_bits(v: &[f32]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: `most_finite_bits_avx2` only needs the CPU to have AVX2,
        // which was just checked; everything else about it is safe code.
        return unsafe { most_finite_bits_avx2(v) };
    }
    most_finite_bits_in(v)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn most_finite_bits_avx2(v: &[f32]) -> u32 {
    most_finite_bits_in(v)
}

#[inline(always)]
fn most_finite_bits_in(v: &[f32]) -> u32 {
    v.iter()
        .map(|x| x.to_bits() & 0x7fff_ffff)
        .map(|m| if m < 0x7f80_0000 { m } else { 0 })
        .max()
        .unwrap_or(0)
}

/// Compares `got` with the reference `want` at relative tolerance `tol`.
pub fn compare_with(got: &Array, want: &Array, tol: f64) -> Diff {
    compare_with_floor(got, want, tol, 0.0)
}

/// [`compare_with`], and how many elements are out even with `floor`
/// more each ([`Diff::beyond_noise`]; the floor never makes one ok).
pub fn compare_with_floor(got: &Array, want: &Array, tol: f64, floor: f64) -> Diff {
    let mut d = compare_inner(got, want, tol, 0.0, 0.0, true);
    if floor > 0.0 && !d.ok() {
        d.noise_floor = floor;
        d.beyond_noise = compare_inner(got, want, tol, 0.0, floor, true).bad;
    }
    d
}

/// Compares `got` with `want` elementwise: `|got - want| <= tol *
/// (|want| + scale)`, where `scale` is the larger of `max|want|` (finite)
/// and `min_scale` (a local check's magnitudes). `judge_nonfinite`: an element
/// whose `want` is NaN or infinite must be met exactly; otherwise such an
/// element is not judged (an extreme input that overflowed the native form,
/// which a rewrite may compute better).
pub fn compare_scaled(
    got: &Array,
    want: &Array,
    tol: f64,
    min_scale: f64,
    judge_nonfinite: bool,
) -> Diff {
    compare_inner(got, want, tol, min_scale, 0.0, judge_nonfinite)
}

/// The judgement of one pair of float elements (got, want) against a
/// tolerance relative to `|want| + maxw`, plus an absolute `floor`.
struct Judge {
    tol: f64,
    maxw: f64,
    floor: f64,
    judge_nonfinite: bool,
}

impl Judge {
    /// The largest error, when every pair is finite and within the
    /// tolerance (what [`Judge::all`] would then find, with no bad
    /// element): the common case, in one pass without a branch per
    /// element. `None` sends the caller to [`Judge::all`] for the details.
    fn all_finite_and_within(&self, got: &[f32], want: &[f32]) -> Option<f64> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: `within_avx2` only needs the CPU to have AVX2, which
            // was just checked; everything else about it is safe code.
            return unsafe { self.within_avx2(got, want) };
        }
        self.within(got, want)
    }

    /// [`Judge::within`] compiled for AVX2 (the same operations, so the
    /// same result).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn within_avx2(&self, got: &[f32], want: &[f32]) -> Option<f64> {
        self.within(got, want)
    }

    #[inline(always)]
    fn within(&self, got: &[f32], want: &[f32]) -> Option<f64> {
        const LANES: usize = 8;
        let mut most = [0f64; LANES];
        let mut out = [false; LANES];
        let judge = |most: &mut f64, out: &mut bool, a: f32, b: f32| {
            let (a, b) = (f64::from(a), f64::from(b));
            let e = (a - b).abs();
            *most = most.max(e);
            // A NaN or infinite element (or error) fails both tests.
            *out |= !((e == 0.0) | (e <= self.tol * (b.abs() + self.maxw) + self.floor))
                | !e.is_finite();
        };
        let (g8, w8) = (got.chunks_exact(LANES), want.chunks_exact(LANES));
        let (g_rest, w_rest) = (g8.remainder(), w8.remainder());
        for (g, w) in g8.zip(w8) {
            for l in 0..LANES {
                judge(&mut most[l], &mut out[l], g[l], w[l]);
            }
        }
        for (&a, &b) in g_rest.iter().zip(w_rest) {
            judge(&mut most[0], &mut out[0], a, b);
        }
        (!out.iter().any(|&o| o)).then(|| most.iter().fold(0f64, |m, &x| m.max(x)))
    }

    /// Whether `a` (got) passes for `b` (want): NaN only for NaN, an
    /// infinity only for itself, finite values within the tolerance (their
    /// error counted into `max_abs`).
    #[inline]
    fn pair(&self, a: f64, b: f64, max_abs: &mut f64) -> bool {
        if !self.judge_nonfinite && !b.is_finite() {
            true
        } else if b.is_nan() || a.is_nan() {
            a.is_nan() && b.is_nan()
        } else if b.is_infinite() || a.is_infinite() {
            a == b
        } else {
            let e = (a - b).abs();
            *max_abs = max_abs.max(e);
            e == 0.0 || e <= self.tol * (b.abs() + self.maxw) + self.floor
        }
    }

    /// Judges every pair, counting the bad ones and the largest error.
    #[inline]
    fn all(&self, d: &mut Diff, pairs: impl Iterator<Item = (f64, f64)>) {
        for (i, (a, b)) in pairs.enumerate() {
            if !self.pair(a, b, &mut d.max_abs) {
                d.bad += 1;
                if d.first_bad.is_none() {
                    d.first_bad = Some((i, a, b));
                }
            }
        }
    }
}

fn compare_inner(
    got: &Array,
    want: &Array,
    tol: f64,
    min_scale: f64,
    floor: f64,
    judge_nonfinite: bool,
) -> Diff {
    let mut d = Diff::none(tol);
    if got.ty != want.ty || got.dims != want.dims {
        d.shape_mismatch = Some(format!(
            "got {}, want {}",
            got.shape_text(),
            want.shape_text()
        ));
        return d;
    }
    if want.ty.is_complex() {
        return compare_complex(got, want, d, floor);
    }
    let exact = !want.ty.is_float();
    if exact {
        let equal: Vec<bool> = match (&got.data, &want.data) {
            (Data::S(a), Data::S(b)) => a.iter().zip(b).map(|(x, y)| x == y).collect(),
            (Data::U(a), Data::U(b)) => a.iter().zip(b).map(|(x, y)| x == y).collect(),
            (Data::Pred(a), Data::Pred(b)) => a.iter().zip(b).map(|(x, y)| x == y).collect(),
            _ => vec![false; got.len()],
        };
        let g = got.to_f64_vec();
        let w = want.to_f64_vec();
        for (i, e) in equal.iter().enumerate() {
            if !e {
                d.bad += 1;
                d.max_abs = d.max_abs.max((g[i] - w[i]).abs());
                if d.first_bad.is_none() {
                    d.first_bad = Some((i, g[i], w[i]));
                }
            }
        }
        return d;
    }
    let maxw = max_finite(want).max(min_scale);
    let judge = Judge {
        tol,
        maxw,
        floor,
        judge_nonfinite,
    };
    // f32 (most outputs) is read in place; other floats through one f64
    // copy each.
    match (&got.data, &want.data) {
        (Data::F32(g), Data::F32(w)) => match judge.all_finite_and_within(g, w) {
            Some(max_abs) => d.max_abs = max_abs,
            None => judge.all(
                &mut d,
                g.iter().zip(w).map(|(&a, &b)| (f64::from(a), f64::from(b))),
            ),
        },
        _ => {
            let (g, w) = (got.to_f64_vec(), want.to_f64_vec());
            judge.all(&mut d, g.iter().copied().zip(w.iter().copied()))
        }
    }
    // max_i(e_i / maxw) is max_i(e_i) / maxw: division by a positive
    // number keeps the order, rounding included.
    if maxw > 0.0 {
        d.max_rel = d.max_abs / maxw;
    }
    d
}

/// Complex outputs: both parts of every element compared as floats, with
/// `max|want|` the largest finite part; the flat index is the element's.
fn compare_complex(got: &Array, want: &Array, mut d: Diff, floor: f64) -> Diff {
    let parts = |a: &Array| -> Vec<f64> {
        super::complex::to_c128(&a.data)
            .iter()
            .flat_map(|c| [c.re, c.im])
            .collect()
    };
    let (g, w) = (parts(got), parts(want));
    let judge = Judge {
        tol: d.tolerance,
        maxw: w
            .iter()
            .filter(|x| x.is_finite())
            .fold(0.0f64, |m, x| m.max(x.abs())),
        floor,
        judge_nonfinite: true,
    };
    let mut last_bad = None;
    for (i, (&a, &b)) in g.iter().zip(&w).enumerate() {
        let ok = judge.pair(a, b, &mut d.max_abs);
        if !ok && last_bad != Some(i / 2) {
            last_bad = Some(i / 2);
            d.bad += 1;
            if d.first_bad.is_none() {
                d.first_bad = Some((i / 2, a, b));
            }
        }
    }
    d
}

/// One output's row in a check table.
#[derive(Clone, Debug)]
pub struct OutputRow {
    pub name: String,
    pub shape: String,
    pub diff: Diff,
}

/// How many times an output's measured rounding noise a rewrite may move
/// it, beyond the relative tolerance.
pub const NOISE_FACTOR: f64 = 10.0;

/// max |a - b| over the finite elements (0 when shapes differ or the type
/// is not a float).
pub fn max_abs_diff(a: &Array, b: &Array) -> f64 {
    if a.ty != b.ty || a.dims != b.dims || !(a.ty.is_float() || a.ty.is_complex()) {
        return 0.0;
    }
    if a.ty.is_complex() {
        let (x, y) = (
            super::complex::to_c128(&a.data),
            super::complex::to_c128(&b.data),
        );
        return x
            .iter()
            .zip(&y)
            .flat_map(|(p, q)| [(p.re - q.re).abs(), (p.im - q.im).abs()])
            .filter(|e| e.is_finite())
            .fold(0.0, f64::max);
    }
    a.to_f64_vec()
        .iter()
        .zip(b.to_f64_vec())
        .map(|(x, y)| (x - y).abs())
        .filter(|e| e.is_finite())
        .fold(0.0, f64::max)
}

/// The inputs with every float element moved by about one unit in the
/// last place of its type (`x * (1 + u * 2^-mantissa)`, u uniform in
/// [-1, 1], rounded back); integers, pred and e8m0 unchanged. The original
/// module's outputs on these, against its outputs on the inputs, measure
/// each output's sensitivity to rounding: for a well-conditioned output it
/// is about an ulp, for a sum that cancels it is the size of the result.
pub fn perturb_inputs(inputs: &[Value], seed: u64) -> Result<Vec<Value>, EvalError> {
    let mut rng = super::random::Rng::new(seed ^ 0x0DD5_EED5);
    inputs.iter().map(|v| perturb(v, &mut rng)).collect()
}

fn perturb(v: &Value, rng: &mut super::random::Rng) -> Result<Value, EvalError> {
    match v {
        Value::Tuple(t) => Ok(Value::Tuple(
            t.iter()
                .map(|e| perturb(e, rng))
                .collect::<Result<Vec<_>, _>>()?
                .into(),
        )),
        Value::Array(a) if a.ty.is_complex() => {
            let eps = if a.ty == PrimitiveType::C64 {
                2f64.powi(-23)
            } else {
                2f64.powi(-52)
            };
            let mut nudge = |x: f64| x * (1.0 + (2.0 * rng.uniform() - 1.0) * eps);
            let v = super::complex::to_c128(&a.data)
                .into_iter()
                .map(|c| num_complex::Complex64::new(nudge(c.re), nudge(c.im)))
                .collect();
            let data = super::complex::from_c128(a.ty, v)?;
            Ok(Value::array(Array::new(a.ty, a.dims.clone(), data)?))
        }
        Value::Array(a) if a.ty.is_float() => {
            let m = match a.ty {
                PrimitiveType::F64 => 52,
                PrimitiveType::F32 => 23,
                PrimitiveType::F16 => 10,
                PrimitiveType::Bf16 => 7,
                t => t.minifloat().map_or(0, |m| m.mantissa_bits as i32),
            };
            if m == 0 {
                // e8m0: powers of two only, nothing an ulp apart.
                return Ok(v.clone());
            }
            let eps = 2f64.powi(-m);
            let x: Vec<f64> = a
                .to_f64_vec()
                .iter()
                .map(|&x| x * (1.0 + (2.0 * rng.uniform() - 1.0) * eps))
                .collect();
            let data = super::convert::from_f64_vec(a.ty, &x)?;
            Ok(Value::array(Array::new(a.ty, a.dims.clone(), data)?))
        }
        _ => Ok(v.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-pass judgement answers exactly when every pair is finite
    /// and within the tolerance, with the largest error the full
    /// judgement finds; anything else goes to the full judgement.
    #[test]
    fn the_one_pass_judgement_agrees_with_the_full_one() {
        let judge = Judge {
            tol: 1e-3,
            maxw: 2.0,
            floor: 0.0,
            judge_nonfinite: true,
        };
        let want: Vec<f32> = (0..29).map(|i| (i as f32 - 14.0) * 0.25).collect();
        let near: Vec<f32> = want.iter().map(|&w| w + 1e-4).collect();
        let full = |g: &[f32], w: &[f32]| {
            let mut d = Diff::none(judge.tol);
            judge.all(
                &mut d,
                g.iter().zip(w).map(|(&a, &b)| (f64::from(a), f64::from(b))),
            );
            (d.max_abs, d.bad)
        };
        let fast = judge.all_finite_and_within(&near, &want);
        assert_eq!(fast, Some(full(&near, &want).0));
        assert_eq!(full(&near, &want).1, 0);
        for (at, bad) in [(3, 1.0), (28, f32::NAN), (0, f32::INFINITY), (27, f32::MAX)] {
            let mut g = near.clone();
            g[at] = bad;
            assert_eq!(
                judge.all_finite_and_within(&g, &want),
                None,
                "{bad} at {at}"
            );
        }
        let mut w = want.clone();
        w[27] = -f32::MAX;
        let mut g = near.clone();
        g[27] = f32::MAX;
        assert_eq!(
            judge.all_finite_and_within(&g, &w),
            None,
            "an error past f32"
        );
    }

    fn f32s(values: &[f32]) -> Array {
        Array::new(
            PrimitiveType::F32,
            vec![values.len()],
            Data::F32(values.to_vec()),
        )
        .unwrap()
    }

    #[test]
    fn the_table_names_the_bound_that_held() {
        let want = f32s(&[100.0, 1.0]);
        // 1e-3 off the largest element: within rtol 1e-4 of max|want|
        // (1e-2), so the first bound.
        let d = compare_with(&f32s(&[100.001, 1.0]), &want, 1e-4);
        assert_eq!(d.bound(), Some(Bound::OfMaximum), "{d}");
        assert_eq!(Bound::OfMaximum.verdict(0.0), "ok");
        // 1.5e-2 off: past rtol * max|want| (max rel err 1.5e-4), within
        // rtol * (|want| + max|want|) = 2e-2 only.
        let d = compare_with(&f32s(&[100.015, 1.0]), &want, 1e-4);
        assert!(d.max_rel > d.tolerance);
        assert_eq!(d.bound(), Some(Bound::Elementwise), "{d}");
        assert_eq!(
            Bound::Elementwise.verdict(0.0),
            "ok (each err <= rtol*(|want|+max|want|))"
        );
        // Past both, but within a noise allowance.
        let d = compare_with_floor(&f32s(&[100.5, 1.0]), &want, 1e-4, 1.0);
        assert_eq!(d.bound(), Some(Bound::RoundingNoise), "{d}");
        // Past everything: no bound held.
        let d = compare_with(&f32s(&[101.0, 1.0]), &want, 1e-4);
        assert_eq!(d.bound(), None);
        // An all-zero reference: any error is past rtol * max|want| = 0.
        let d = compare_with_floor(&f32s(&[1e-9, 0.0]), &f32s(&[0.0, 0.0]), 1e-4, 1e-6);
        assert_eq!(d.bound(), Some(Bound::RoundingNoise), "{d}");
        for b in Bound::ALL {
            assert_eq!(Bound::from_name(b.name()), Some(b));
        }
    }
}
