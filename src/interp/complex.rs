//! Complex numbers: `complex`, `real`, `imag`, and the elementwise ops on
//! c64/c128 arrays.
//!
//! c128 computes in f64. c64 adds, subtracts, multiplies and negates in
//! f32 (what XLA:CPU's emitter does); everything else (division, powers,
//! the transcendental functions) computes in f64 and rounds each part
//! once, which is at least as accurate as XLA's f32 formulas. Division is
//! Smith's algorithm with C99 Annex G's recovery of infinities, so it does
//! not overflow where the naive formula would. `abs` gives the real
//! magnitude (`hypot`, no overflow), `sign` is `x / |x|` (0 at 0).
//! Comparisons are EQ and NE only, as in XLA.

use super::array::{Array, Data};
use super::elementwise::{BinOp, UnOp};
use super::{err, Result};
use crate::ir::{ComparisonDirection, PrimitiveType};
use num_complex::{Complex32, Complex64};

/// The complex type whose parts are `ty` (f32 -> c64, f64 -> c128).
pub fn complex_of(ty: PrimitiveType) -> Result<PrimitiveType> {
    match ty {
        PrimitiveType::F32 => Ok(PrimitiveType::C64),
        PrimitiveType::F64 => Ok(PrimitiveType::C128),
        t => Err(err(format!("complex of {t}: the parts must be f32 or f64"))),
    }
}

/// Every element as a c128 (exact for c64).
pub fn to_c128(d: &Data) -> Vec<Complex64> {
    match d {
        Data::C64(v) => v
            .iter()
            .map(|c| Complex64::new(f64::from(c.re), f64::from(c.im)))
            .collect(),
        Data::C128(v) => v.clone(),
        _ => Vec::new(),
    }
}

/// Rounds c128 values to `ty`'s storage (each part once).
pub fn from_c128(ty: PrimitiveType, v: Vec<Complex64>) -> Result<Data> {
    match ty {
        PrimitiveType::C64 => Ok(Data::C64(
            v.into_iter()
                .map(|c| Complex32::new(c.re as f32, c.im as f32))
                .collect(),
        )),
        PrimitiveType::C128 => Ok(Data::C128(v)),
        t => Err(err(format!("{t} is not a complex type"))),
    }
}

/// `complex(re, im)`.
pub fn make(re: &Array, im: &Array) -> Result<Array> {
    if re.dims != im.dims || re.ty != im.ty {
        return Err(err(format!(
            "complex: operands {} and {} differ",
            re.shape_text(),
            im.shape_text()
        )));
    }
    let ty = complex_of(re.ty)?;
    let data = match (&re.data, &im.data) {
        (Data::F32(a), Data::F32(b)) => Data::C64(
            a.iter()
                .zip(b)
                .map(|(&x, &y)| Complex32::new(x, y))
                .collect(),
        ),
        (Data::F64(a), Data::F64(b)) => Data::C128(
            a.iter()
                .zip(b)
                .map(|(&x, &y)| Complex64::new(x, y))
                .collect(),
        ),
        _ => return Err(err("internal error: complex parts are not f32/f64")),
    };
    Array::new(ty, re.dims.clone(), data)
}

/// `real(x)` (`imag` when `imag`): the part as a real array. On a real
/// array, `real` is the array and `imag` zeros, as XLA defines them.
pub fn part(a: &Array, imag: bool) -> Result<Array> {
    let (ty, data) = match &a.data {
        Data::C64(v) => (
            PrimitiveType::F32,
            Data::F32(v.iter().map(|c| if imag { c.im } else { c.re }).collect()),
        ),
        Data::C128(v) => (
            PrimitiveType::F64,
            Data::F64(v.iter().map(|c| if imag { c.im } else { c.re }).collect()),
        ),
        _ if a.ty.is_float() => {
            if !imag {
                return Ok(a.clone());
            }
            (a.ty, Data::zeros(a.ty, a.len())?)
        }
        _ => {
            return Err(err(format!(
                "{} of {}: not a float or complex array",
                if imag { "imag" } else { "real" },
                a.ty
            )))
        }
    };
    Array::new(ty, a.dims.clone(), data)
}

/// `a op b` on complex arrays of one type and shape.
pub fn binary(op: BinOp, a: &Array, b: &Array) -> Result<Array> {
    let data = match (&a.data, &b.data, op) {
        (Data::C64(x), Data::C64(y), BinOp::Add | BinOp::Sub | BinOp::Mul) => Data::C64(
            x.iter()
                .zip(y)
                .map(|(&p, &q)| match op {
                    BinOp::Add => p + q,
                    BinOp::Sub => p - q,
                    _ => Complex32::new(p.re * q.re - p.im * q.im, p.re * q.im + p.im * q.re),
                })
                .collect(),
        ),
        _ => {
            let f: fn(Complex64, Complex64) -> Complex64 = match op {
                BinOp::Add => |p, q| p + q,
                BinOp::Sub => |p, q| p - q,
                BinOp::Mul => {
                    |p, q| Complex64::new(p.re * q.re - p.im * q.im, p.re * q.im + p.im * q.re)
                }
                BinOp::Div => div,
                BinOp::Pow => pow,
                _ => return Err(err(format!("{op:?} is not defined on complex numbers"))),
            };
            let (x, y) = (to_c128(&a.data), to_c128(&b.data));
            from_c128(a.ty, x.iter().zip(&y).map(|(&p, &q)| f(p, q)).collect())?
        }
    };
    Array::new(a.ty, a.dims.clone(), data)
}

/// `p op q` on one pair of complex values, in c128.
pub fn bin_c128(op: BinOp, p: Complex64, q: Complex64) -> Result<Complex64> {
    Ok(match op {
        BinOp::Add => p + q,
        BinOp::Sub => p - q,
        BinOp::Mul => Complex64::new(p.re * q.re - p.im * q.im, p.re * q.im + p.im * q.re),
        BinOp::Div => div(p, q),
        BinOp::Pow => pow(p, q),
        _ => return Err(err(format!("{op:?} is not defined on complex numbers"))),
    })
}

/// `p / q`: Smith's algorithm, with C99 Annex G's recovery of the
/// infinite and zero cases the scaled formula turns into NaN.
pub fn div(p: Complex64, q: Complex64) -> Complex64 {
    let (a, b, c, d) = (p.re, p.im, q.re, q.im);
    let (mut x, mut y) = if c.abs() >= d.abs() {
        let r = d / c;
        let t = 1.0 / (c + d * r);
        if r != 0.0 {
            ((a + b * r) * t, (b - a * r) * t)
        } else {
            // Avoid 0 * inf in b * r and a * r.
            ((a + d * (b / c)) * t, (b - d * (a / c)) * t)
        }
    } else {
        let r = c / d;
        let t = 1.0 / (c * r + d);
        if r != 0.0 {
            ((a * r + b) * t, (b * r - a) * t)
        } else {
            ((c * (a / d) + b) * t, (c * (b / d) - a) * t)
        }
    };
    if x.is_nan() && y.is_nan() {
        let copysign = |m: f64, s: f64| m.copysign(s);
        let inf_or = |v: f64| if v.is_infinite() { 1.0 } else { 0.0 };
        if c == 0.0 && d == 0.0 && (!a.is_nan() || !b.is_nan()) {
            x = copysign(f64::INFINITY, c) * a;
            y = copysign(f64::INFINITY, c) * b;
        } else if (a.is_infinite() || b.is_infinite()) && c.is_finite() && d.is_finite() {
            let (a2, b2) = (copysign(inf_or(a), a), copysign(inf_or(b), b));
            x = f64::INFINITY * (a2 * c + b2 * d);
            y = f64::INFINITY * (b2 * c - a2 * d);
        } else if (c.is_infinite() || d.is_infinite()) && a.is_finite() && b.is_finite() {
            let (c2, d2) = (copysign(inf_or(c), c), copysign(inf_or(d), d));
            x = 0.0 * (a * c2 + b * d2);
            y = 0.0 * (b * c2 - a * d2);
        }
    }
    Complex64::new(x, y)
}

/// `p ^ q = exp(q * log(p))`; 0^0 is 1 and 0^q is 0 for a real positive
/// q, as XLA's emitter special-cases them.
pub fn pow(p: Complex64, q: Complex64) -> Complex64 {
    if p.re == 0.0 && p.im == 0.0 {
        if q.re == 0.0 && q.im == 0.0 {
            return Complex64::new(1.0, 0.0);
        }
        if q.im == 0.0 && q.re > 0.0 {
            return Complex64::new(0.0, 0.0);
        }
    }
    // |p|^q.re * exp(-q.im * arg p) at angle q.re * arg p + q.im * ln|p|.
    let (r, theta) = (p.re.hypot(p.im), p.im.atan2(p.re));
    let mag = r.powf(q.re) * (-q.im * theta).exp();
    let angle = q.re * theta + q.im * r.ln();
    Complex64::new(mag * angle.cos(), mag * angle.sin())
}

/// The principal square root, as XLA:CPU computes it: with
/// `t = sqrt((|re| + |x|) / 2)`, `(t, im / 2t)` for `re >= 0`, else
/// `(|im| / 2t, +-t)` signed by `im < 0` (so -1 - 0i gives +i, where C99's
/// csqrt gives -i); an infinite imaginary part gives (inf, im), any other
/// NaN part (NaN, NaN).
pub fn sqrt(x: Complex64) -> Complex64 {
    let (a, b) = (x.re, x.im);
    if b.is_infinite() {
        return Complex64::new(f64::INFINITY, b);
    }
    if a.is_nan() || b.is_nan() {
        return Complex64::new(f64::NAN, f64::NAN);
    }
    if a == 0.0 && b == 0.0 {
        return Complex64::new(0.0, b);
    }
    let t = (a.abs() / 2.0 + a.hypot(b) / 2.0).sqrt();
    if a >= 0.0 {
        Complex64::new(t, b / (2.0 * t))
    } else {
        Complex64::new(b.abs() / (2.0 * t), if b < 0.0 { -t } else { t })
    }
}

/// tanh with XLA's limits: a zero imaginary part stays (tanh(NaN + 0i) is
/// NaN + 0i); an infinite real part gives (+-1, +-0); a non-finite
/// imaginary part with a finite real one gives (NaN, NaN); a real part so
/// large that tanh is 1 in f64 gives (+-1, 2 sin 2im / e^(2|re|)).
pub fn tanh(x: Complex64) -> Complex64 {
    let (a, b) = (x.re, x.im);
    if b == 0.0 {
        return Complex64::new(a.tanh(), b);
    }
    let s2b = (2.0 * b).sin();
    if a.is_infinite() {
        let im = if s2b.is_nan() {
            0.0
        } else {
            0.0f64.copysign(s2b)
        };
        return Complex64::new(1.0f64.copysign(a), im);
    }
    if !b.is_finite() {
        return Complex64::new(f64::NAN, f64::NAN);
    }
    if a.abs() > 20.0 {
        return Complex64::new(1.0f64.copysign(a), 2.0 * s2b * (-2.0 * a.abs()).exp());
    }
    x.tanh()
}

fn unary_c(op: UnOp, x: Complex64) -> Result<Complex64> {
    let one = Complex64::new(1.0, 0.0);
    Ok(match op {
        UnOp::Neg => -x,
        UnOp::Exp => {
            // e^re (cos im + i sin im); a zero imaginary part stays (so
            // exp(inf + 0i) is inf + 0i, not inf * 0 = NaN).
            let e = x.re.exp();
            if x.im == 0.0 {
                Complex64::new(e, x.im)
            } else {
                Complex64::new(e * x.im.cos(), e * x.im.sin())
            }
        }
        UnOp::Expm1 => {
            // exp(x) - 1 without cancellation near 0: expm1(re) and
            // sin of half the angle.
            if x.im == 0.0 {
                return Ok(Complex64::new(x.re.exp_m1(), x.im));
            }
            let e = x.re.exp_m1();
            let h = (x.im / 2.0).sin();
            Complex64::new(e * x.im.cos() - 2.0 * h * h, (e + 1.0) * x.im.sin())
        }
        UnOp::Log => x.ln(),
        UnOp::Log1p => {
            if x.norm() < 1e-4 {
                // log(1 + x) = x - x^2/2 + x^3/3, exact to f64 here.
                x - x * x / 2.0 + x * x * x / 3.0
            } else {
                (one + x).ln()
            }
        }
        UnOp::Sqrt => sqrt(x),
        UnOp::Rsqrt => {
            // Polar, as XLA:CPU: |x|^-1/2 at angle -arg(x)/2 (so the branch
            // cut follows atan2: rsqrt(-1 - 0i) is +i); the non-finite and
            // zero cases as 1 / sqrt(x).
            if x.re.is_finite() && x.im.is_finite() && (x.re != 0.0 || x.im != 0.0) {
                let r = x.re.hypot(x.im).sqrt().recip();
                let t = -x.im.atan2(x.re) / 2.0;
                Complex64::new(r * t.cos(), r * t.sin())
            } else {
                div(one, sqrt(x))
            }
        }
        UnOp::Sin => x.sin(),
        UnOp::Cos => x.cos(),
        UnOp::Tan => x.tan(),
        UnOp::Tanh => tanh(x),
        UnOp::Logistic => div(one, one + (-x).exp()),
        UnOp::Sign => {
            let n = x.re.hypot(x.im);
            if n == 0.0 {
                Complex64::new(0.0, 0.0)
            } else {
                Complex64::new(x.re / n, x.im / n)
            }
        }
        _ => return Err(err(format!("{op:?} is not defined on complex numbers"))),
    })
}

/// A unary op on a complex array; `abs` gives a real array.
pub fn unary(op: UnOp, a: &Array) -> Result<Array> {
    if op == UnOp::Abs {
        let (ty, data) = match &a.data {
            Data::C64(v) => (
                PrimitiveType::F32,
                Data::F32(
                    v.iter()
                        .map(|c| f64::from(c.re).hypot(f64::from(c.im)) as f32)
                        .collect(),
                ),
            ),
            _ => (
                PrimitiveType::F64,
                Data::F64(to_c128(&a.data).iter().map(|c| c.re.hypot(c.im)).collect()),
            ),
        };
        return Array::new(ty, a.dims.clone(), data);
    }
    if let (UnOp::Neg, Data::C64(v)) = (op, &a.data) {
        return Array::new(
            a.ty,
            a.dims.clone(),
            Data::C64(v.iter().map(|&c| -c).collect()),
        );
    }
    let v = to_c128(&a.data)
        .into_iter()
        .map(|x| unary_c(op, x))
        .collect::<Result<Vec<_>>>()?;
    Array::new(a.ty, a.dims.clone(), from_c128(a.ty, v)?)
}

/// `compare(a, b)` on complex arrays: EQ and NE (both parts equal).
pub fn compare(a: &Array, b: &Array, d: ComparisonDirection) -> Result<Vec<bool>> {
    let eq = match d {
        ComparisonDirection::Eq => true,
        ComparisonDirection::Ne => false,
        d => {
            return Err(err(format!(
                "compare direction {} is not defined on complex numbers",
                d.name()
            )))
        }
    };
    let (x, y) = (to_c128(&a.data), to_c128(&b.data));
    Ok(x.iter().zip(&y).map(|(p, q)| (p == q) == eq).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(re: f64, im: f64) -> Complex64 {
        Complex64::new(re, im)
    }

    #[test]
    fn division_does_not_overflow_or_lose_infinities() {
        assert_eq!(div(c(1.0, 2.0), c(3.0, 4.0)), c(0.44, 0.08));
        // The naive formula squares 1e300 and overflows.
        let q = div(c(1e300, 1e300), c(1e300, 1e300));
        assert!((q.re - 1.0).abs() < 1e-15 && q.im.abs() < 1e-15, "{q}");
        let q = div(c(1.0, 1.0), c(0.0, 0.0));
        assert!(q.re.is_infinite() && q.im.is_infinite());
        let q = div(c(f64::INFINITY, 0.0), c(1.0, 1.0));
        assert!(q.re.is_infinite());
        let q = div(c(1.0, 1.0), c(f64::INFINITY, 0.0));
        assert_eq!((q.re, q.im.abs()), (0.0, 0.0));
    }

    #[test]
    fn power_special_cases() {
        assert_eq!(pow(c(0.0, 0.0), c(0.0, 0.0)), c(1.0, 0.0));
        assert_eq!(pow(c(0.0, 0.0), c(2.0, 0.0)), c(0.0, 0.0));
        let p = pow(c(0.0, 1.0), c(2.0, 0.0));
        assert!((p.re + 1.0).abs() < 1e-15 && p.im.abs() < 1e-15);
    }

    #[test]
    fn expm1_and_log1p_are_accurate_near_zero() {
        // x = 1e-10 (1 + i): x^2 / 2 = 1e-20 i, the next terms ~1e-30.
        let x = c(1e-10, 1e-10);
        let e = unary_c(UnOp::Expm1, x).unwrap();
        assert!(
            (e.re - 1e-10).abs() < 1e-28 && (e.im - (1e-10 + 1e-20)).abs() < 1e-28,
            "{e}"
        );
        let l = unary_c(UnOp::Log1p, x).unwrap();
        assert!(
            (l.re - 1e-10).abs() < 1e-28 && (l.im - (1e-10 - 1e-20)).abs() < 1e-28,
            "{l}"
        );
    }
}
