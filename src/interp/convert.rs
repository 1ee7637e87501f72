//! Element conversions: XLA's `convert` and `bitcast-convert`, and the
//! exact f64 view of every type.
//!
//! Rounding is to nearest, ties to even, once: a value computed in f64 goes
//! to f32 with round-to-odd first, which makes the final rounding to
//! f16/bf16/8-bit floats exact (no double-rounding error). Narrow floats
//! follow ml_dtypes: beyond the largest finite value they become infinity
//! where the type has one and NaN where it does not (no saturation).
//! Float to integer saturates and maps NaN to 0, as XLA does. A real value
//! becomes a complex one with a zero imaginary part; complex to real is an
//! error, as in XLA (`real`/`imag` say which part is wanted).

use super::array::{storage, wrap_s, wrap_u, Array, Data, Storage};
use super::narrow;
use super::{err, par, Result};
use crate::ir::types::{MiniFloat, NanEncoding, PrimitiveType};
use half::{bf16, f16};
use num_complex::{Complex32, Complex64};

/// The 256 values of a narrow float, indexed by its bits.
pub fn mini_table(m: &MiniFloat) -> Vec<f64> {
    (0..=255u8).map(|b| m.to_f64(b)).collect()
}

/// f64 -> f32 rounding to odd: a later round-to-nearest-even into any format
/// of at most 22 significand bits gives the correctly rounded value.
#[inline]
pub fn f64_to_f32_odd(x: f64) -> f32 {
    let r = x as f32;
    if !x.is_finite() || f64::from(r) == x {
        return r;
    }
    let mut r = r;
    if f64::from(r).abs() > x.abs() {
        // Step toward zero (also turns an overflow to inf into MAX).
        r = f32::from_bits(r.to_bits() - 1);
    }
    f32::from_bits(r.to_bits() | 1)
}

#[inline]
pub fn f64_to_bf16(x: f64) -> bf16 {
    bf16::from_f32(f64_to_f32_odd(x))
}

#[inline]
pub fn f64_to_f16(x: f64) -> f16 {
    f16::from_f32(f64_to_f32_odd(x))
}

/// Rounds an exact value to a narrow float (ties to even), ml_dtypes'
/// non-saturating rules: overflow gives infinity or, without one, NaN.
pub fn f64_to_mini(x: f64, m: &MiniFloat) -> u8 {
    let sign_shift = m.exponent_bits + m.mantissa_bits;
    if x.is_nan() {
        return m.nan_bits(x.is_sign_negative());
    }
    let negative = x.is_sign_negative();
    if !m.signed && negative && x != 0.0 {
        return m.nan_bits(false);
    }
    let sign_bit: u8 = if m.signed && negative {
        1 << sign_shift
    } else {
        0
    };
    let overflow = || -> u8 {
        if m.has_inf {
            sign_bit | ((((1u32 << m.exponent_bits) - 1) << m.mantissa_bits) as u8)
        } else {
            m.nan_bits(negative)
        }
    };
    let a = x.abs();
    if a.is_infinite() {
        return overflow();
    }
    let p = m.mantissa_bits as i32;
    // Smallest normal exponent. E8M0 has no subnormals: field 0 is 2^-127.
    let emin = if m.signed { 1 - m.bias } else { -m.bias };
    if a == 0.0 {
        return if m.signed && m.nan != NanEncoding::NegativeZero {
            sign_bit
        } else {
            0
        };
    }
    let e = ilogb(a).max(emin);
    let q = exp2i(e - p);
    let n = a / q;
    let r = if p == 0 {
        // No mantissa bits: a tie goes to the even exponent field.
        let lo = n.floor();
        let frac = n - lo;
        if frac > 0.5 || (frac == 0.5 && (e + m.bias) % 2 != 0) {
            lo + 1.0
        } else {
            lo
        }
    } else {
        n.round_ties_even()
    };
    let v = r * q;
    // Largest finite value.
    let max = max_finite(m);
    if v > max {
        return overflow();
    }
    if v == 0.0 {
        return if m.signed && m.nan != NanEncoding::NegativeZero {
            sign_bit
        } else {
            0
        };
    }
    let ev = ilogb(v);
    let code: u32 = if !m.signed {
        (ev + m.bias) as u32
    } else if ev < emin {
        // Subnormal: exponent field 0.
        (v / exp2i(emin - p)) as u32
    } else {
        let field = (ev + m.bias) as u32;
        let man = (v / exp2i(ev - p)) as u32 - (1u32 << p);
        (field << p) | man
    };
    sign_bit | code as u8
}

fn max_finite(m: &MiniFloat) -> f64 {
    let count = 1u32 << (m.exponent_bits + m.mantissa_bits);
    (0..count)
        .rev()
        .map(|c| m.to_f64(c as u8))
        .find(|v| v.is_finite())
        .unwrap_or(0.0)
}

/// floor(log2(a)) of a positive finite f64.
#[inline]
fn ilogb(a: f64) -> i32 {
    let bits = a.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32;
    if e == 0 {
        // Subnormal f64.
        let m = bits & ((1u64 << 52) - 1);
        -1074 + (63 - m.leading_zeros() as i32)
    } else {
        e - 1023
    }
}

#[inline]
fn exp2i(e: i32) -> f64 {
    if e < -1022 {
        2f64.powi(e + 600) * 2f64.powi(-600)
    } else {
        2f64.powi(e)
    }
}

/// Every element as an exact f64 (64-bit integers beyond 2^53 round;
/// complex elements give their real part: callers that may see complex
/// data handle it first).
pub fn to_f64_vec(data: &Data, ty: PrimitiveType) -> Vec<f64> {
    match data {
        Data::Pred(v) => v.iter().map(|&b| f64::from(u8::from(b))).collect(),
        Data::S(v) => v.iter().map(|&x| x as f64).collect(),
        Data::U(v) => v.iter().map(|&x| x as f64).collect(),
        Data::F16(v) => v.iter().map(|x| x.to_f64()).collect(),
        Data::Bf16(v) => v.iter().map(|x| x.to_f64()).collect(),
        Data::F32(v) => v.iter().map(|&x| f64::from(x)).collect(),
        Data::F64(v) => v.clone(),
        Data::Mini(v) => {
            let t = ty.minifloat().map(|m| mini_table(&m)).unwrap_or_default();
            v.iter()
                .map(|&b| t.get(b as usize).copied().unwrap_or(f64::NAN))
                .collect()
        }
        Data::C64(v) => v.iter().map(|c| f64::from(c.re)).collect(),
        Data::C128(v) => v.iter().map(|c| c.re).collect(),
    }
}

/// Every element as an f32 (exact for f16, bf16, f32 and narrow floats).
pub fn to_f32_vec(data: &Data, ty: PrimitiveType) -> Vec<f32> {
    match data {
        Data::F32(v) => v.clone(),
        Data::F16(v) => v.iter().map(|x| x.to_f32()).collect(),
        Data::Bf16(v) => v.iter().map(|x| x.to_f32()).collect(),
        Data::F64(v) => v.iter().map(|&x| x as f32).collect(),
        Data::S(v) => v.iter().map(|&x| x as f32).collect(),
        Data::U(v) => v.iter().map(|&x| x as f32).collect(),
        _ => to_f64_vec(data, ty).into_iter().map(|x| x as f32).collect(),
    }
}

/// Rounds f32 values (results computed in f32) to a float type.
pub fn from_f32_vec(ty: PrimitiveType, v: Vec<f32>) -> Result<Data> {
    Ok(match storage(ty)? {
        Storage::F32 => Data::F32(v),
        Storage::F16 => Data::F16(v.into_iter().map(f16::from_f32).collect()),
        Storage::Bf16 => Data::Bf16(v.into_iter().map(bf16::from_f32).collect()),
        Storage::F64 => Data::F64(v.into_iter().map(f64::from).collect()),
        Storage::Mini(m) => Data::Mini(
            v.into_iter()
                .map(|x| f64_to_mini(f64::from(x), &m))
                .collect(),
        ),
        _ => return Err(err(format!("{ty} is not a float type"))),
    })
}

/// Rounds exact (f64) values once to `ty`; integers saturate, NaN -> 0.
pub fn from_f64_vec(ty: PrimitiveType, v: &[f64]) -> Result<Data> {
    let bits = ty.bit_width();
    Ok(match storage(ty)? {
        Storage::Pred => Data::Pred(v.iter().map(|&x| x != 0.0).collect()),
        Storage::S => {
            let (lo, hi) = s_range(bits);
            Data::S(v.iter().map(|&x| (x as i64).clamp(lo, hi)).collect())
        }
        Storage::U => {
            let hi = wrap_u(u64::MAX, bits);
            Data::U(v.iter().map(|&x| (x as u64).min(hi)).collect())
        }
        Storage::F16 => Data::F16(v.iter().map(|&x| f64_to_f16(x)).collect()),
        Storage::Bf16 => Data::Bf16(v.iter().map(|&x| f64_to_bf16(x)).collect()),
        Storage::F32 => Data::F32(v.iter().map(|&x| x as f32).collect()),
        Storage::F64 => Data::F64(v.to_vec()),
        Storage::Mini(m) => Data::Mini(
            v.iter()
                .map(|&x| f64_to_mini(f64::from(f64_to_f32_odd(x)), &m))
                .collect(),
        ),
        Storage::C64 => Data::C64(v.iter().map(|&x| Complex32::new(x as f32, 0.0)).collect()),
        Storage::C128 => Data::C128(v.iter().map(|&x| Complex64::new(x, 0.0)).collect()),
    })
}

fn s_range(bits: u32) -> (i64, i64) {
    if bits >= 64 {
        (i64::MIN, i64::MAX)
    } else {
        (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
    }
}

/// XLA's `convert`.
pub fn convert(a: &Array, to: PrimitiveType) -> Result<Array> {
    let from = a.ty;
    let to_st = storage(to)?;
    let bits = to.bit_width();
    if from.is_complex() && !to.is_complex() {
        return Err(err(format!(
            "conversion from complex to real type {from} => {to} is not implemented (XLA rejects it; use real or imag)"
        )));
    }
    let data = match (&a.data, to_st) {
        _ if from == to => a.data.clone(),
        (Data::C64(v), Storage::C128) => Data::C128(
            v.iter()
                .map(|c| Complex64::new(f64::from(c.re), f64::from(c.im)))
                .collect(),
        ),
        (Data::C128(v), Storage::C64) => Data::C64(
            v.iter()
                .map(|c| Complex32::new(c.re as f32, c.im as f32))
                .collect(),
        ),
        (Data::S(v), Storage::C64) => {
            Data::C64(v.iter().map(|&x| Complex32::new(x as f32, 0.0)).collect())
        }
        (Data::U(v), Storage::C64) => {
            Data::C64(v.iter().map(|&x| Complex32::new(x as f32, 0.0)).collect())
        }
        (Data::Pred(v), _) => from_f64_vec(
            to,
            &v.iter()
                .map(|&b| f64::from(u8::from(b)))
                .collect::<Vec<_>>(),
        )?,
        (Data::S(v), Storage::Pred) => Data::Pred(v.iter().map(|&x| x != 0).collect()),
        (Data::U(v), Storage::Pred) => Data::Pred(v.iter().map(|&x| x != 0).collect()),
        (Data::S(v), Storage::S) => Data::S(v.iter().map(|&x| wrap_s(x, bits)).collect()),
        (Data::S(v), Storage::U) => Data::U(v.iter().map(|&x| wrap_u(x as u64, bits)).collect()),
        (Data::U(v), Storage::S) => Data::S(v.iter().map(|&x| wrap_s(x as i64, bits)).collect()),
        (Data::U(v), Storage::U) => Data::U(v.iter().map(|&x| wrap_u(x, bits)).collect()),
        (Data::S(v), Storage::F32) => Data::F32(v.iter().map(|&x| x as f32).collect()),
        (Data::U(v), Storage::F32) => Data::F32(v.iter().map(|&x| x as f32).collect()),
        (Data::S(v), _) => from_f64_vec(to, &v.iter().map(|&x| x as f64).collect::<Vec<_>>())?,
        (Data::U(v), _) => from_f64_vec(to, &v.iter().map(|&x| x as f64).collect::<Vec<_>>())?,
        // Floats to pred: non-zero (NaN included) is true.
        (_, Storage::Pred) => Data::Pred(a.to_f64_vec().into_iter().map(|x| x != 0.0).collect()),
        (Data::F32(v), Storage::F16) => Data::F16(narrow::narrow_all(v)),
        (Data::F32(v), Storage::Bf16) => Data::Bf16(narrow::narrow_all(v)),
        (Data::F32(v), Storage::F64) => Data::F64(par::map(v, |&x| f64::from(x))),
        (Data::F16(v), Storage::F32) => Data::F32(narrow::widen_all(v)),
        (Data::Bf16(v), Storage::F32) => Data::F32(narrow::widen_all(v)),
        (Data::F64(v), Storage::F32) => Data::F32(par::map(v, |&x| x as f32)),
        // Everything else goes through the exact f64 value, rounded once.
        _ => from_f64_vec(to, &a.to_f64_vec())?,
    };
    Array::new(to, a.dims.clone(), data)
}

/// The raw bits of every element (zero-extended).
pub(crate) fn to_bits(a: &Array) -> Vec<u64> {
    let bits = a.ty.bit_width();
    match &a.data {
        Data::Pred(v) => v.iter().map(|&b| u64::from(b)).collect(),
        Data::S(v) => v.iter().map(|&x| wrap_u(x as u64, bits)).collect(),
        Data::U(v) => v.clone(),
        Data::F16(v) => v.iter().map(|x| u64::from(x.to_bits())).collect(),
        Data::Bf16(v) => v.iter().map(|x| u64::from(x.to_bits())).collect(),
        Data::F32(v) => v.iter().map(|x| u64::from(x.to_bits())).collect(),
        Data::F64(v) => v.iter().map(|x| x.to_bits()).collect(),
        Data::Mini(v) => v.iter().map(|&x| u64::from(x)).collect(),
        // c64: the real part in the low word (XLA's memory order).
        Data::C64(v) => v
            .iter()
            .map(|c| u64::from(c.re.to_bits()) | (u64::from(c.im.to_bits()) << 32))
            .collect(),
        Data::C128(_) => Vec::new(),
    }
}

/// Elements of `ty` from raw bits.
pub fn from_bits(ty: PrimitiveType, bits: &[u64]) -> Result<Data> {
    let w = ty.bit_width();
    Ok(match storage(ty)? {
        Storage::Pred => Data::Pred(bits.iter().map(|&b| b != 0).collect()),
        Storage::S => Data::S(bits.iter().map(|&b| wrap_s(b as i64, w)).collect()),
        Storage::U => Data::U(bits.iter().map(|&b| wrap_u(b, w)).collect()),
        Storage::F16 => Data::F16(bits.iter().map(|&b| f16::from_bits(b as u16)).collect()),
        Storage::Bf16 => Data::Bf16(bits.iter().map(|&b| bf16::from_bits(b as u16)).collect()),
        Storage::F32 => Data::F32(bits.iter().map(|&b| f32::from_bits(b as u32)).collect()),
        Storage::F64 => Data::F64(bits.iter().map(|&b| f64::from_bits(b)).collect()),
        Storage::Mini(_) => Data::Mini(bits.iter().map(|&b| wrap_u(b, w) as u8).collect()),
        Storage::C64 => Data::C64(
            bits.iter()
                .map(|&b| {
                    Complex32::new(f32::from_bits(b as u32), f32::from_bits((b >> 32) as u32))
                })
                .collect(),
        ),
        Storage::C128 => return Err(err("c128 elements do not fit 64 bits")),
    })
}

/// XLA's `bitcast-convert`: the same bits read as another type. Between
/// widths, the wider side has one more (minor) dimension of
/// `wide / narrow` elements, little-endian.
pub fn bitcast_convert(a: &Array, to: PrimitiveType, out_dims: Vec<usize>) -> Result<Array> {
    let (wf, wt) = (a.ty.bit_width(), to.bit_width());
    if wf == 0 || wt == 0 || !(wf.is_power_of_two() && wt.is_power_of_two()) {
        return Err(err(format!("bitcast-convert from {} to {to}", a.ty)));
    }
    if a.ty.is_complex() || to.is_complex() {
        // XLA: no bitcast between complex and real types; c64 <-> c64 and
        // c128 <-> c128 keep every bit.
        if a.ty == to {
            return Array::new(to, out_dims, a.data.clone());
        }
        return Err(err(format!(
            "bitcast-convert between complex and real type {} => {to}",
            a.ty
        )));
    }
    let src = to_bits(a);
    let out: Vec<u64> = if wf == wt {
        src
    } else if wf > wt {
        let ratio = (wf / wt) as usize;
        let mask = wrap_u(u64::MAX, wt);
        src.iter()
            .flat_map(|&b| (0..ratio).map(move |j| (b >> (j as u32 * wt)) & mask))
            .collect()
    } else {
        let ratio = (wt / wf) as usize;
        if src.len() % ratio != 0 {
            return Err(err("bitcast-convert: element count does not divide"));
        }
        src.chunks(ratio)
            .map(|c| {
                c.iter()
                    .enumerate()
                    .fold(0u64, |acc, (j, &b)| acc | (b << (j as u32 * wf)))
            })
            .collect()
    };
    Array::new(to, out_dims, from_bits(to, &out)?)
}

/// XLA's `reduce-precision`: rounds each element to `mantissa_bits` of
/// mantissa (to nearest, ties to even) and clamps it to the range of
/// `exponent_bits` of exponent (overflow to infinity; underflow, including
/// every value the narrow format would hold as a denormal, to zero), in the
/// bits of the operand's own type. NaN stays NaN, as on XLA:CPU (also with
/// no mantissa bits, where an older XLA emitter made it an infinity).
pub fn reduce_precision(a: &Array, exponent_bits: u32, mantissa_bits: u32) -> Result<Array> {
    let (src_e, src_m) = match a.ty {
        PrimitiveType::F16 => (5, 10),
        PrimitiveType::Bf16 => (8, 7),
        PrimitiveType::F32 => (8, 23),
        PrimitiveType::F64 => (11, 52),
        t => {
            return Err(super::unsupported(format!(
                "reduce-precision of {t} is not supported"
            )))
        }
    };
    if exponent_bits < 1 {
        return Err(err("reduce-precision needs at least one exponent bit"));
    }
    let total = 1 + src_e + src_m;
    let reduce = |x: u64| -> u64 {
        let mut x = x;
        if mantissa_bits < src_m {
            let shift = src_m - mantissa_bits;
            let last = 1u64 << shift;
            let bias = (last >> 1) - 1 + ((x & last) >> shift);
            x = x.wrapping_add(bias) & !(last - 1);
        }
        if exponent_bits < src_e {
            let sign = x & (1u64 << (total - 1));
            let exp_mask = ((1u64 << src_e) - 1) << src_m;
            let bias = (1u64 << (src_e - 1)) - 1;
            let reduced_bias = (1u64 << (exponent_bits - 1)) - 1;
            let e = x & exp_mask;
            if e > (bias + reduced_bias) << src_m {
                x = sign | exp_mask;
            } else if e <= (bias - reduced_bias) << src_m {
                x = sign;
            }
        }
        x & (u64::MAX >> (64 - total))
    };
    // NaN stays the input NaN (XLA:CPU keeps it even with no mantissa
    // bits, where the rounding alone would make it an infinity).
    let f = |bits: u64, nan: bool| -> u64 {
        if nan {
            bits
        } else {
            reduce(bits)
        }
    };
    let data = match &a.data {
        Data::F16(v) => Data::F16(
            v.iter()
                .map(|x| f16::from_bits(f(u64::from(x.to_bits()), x.is_nan()) as u16))
                .collect(),
        ),
        Data::Bf16(v) => Data::Bf16(
            v.iter()
                .map(|x| bf16::from_bits(f(u64::from(x.to_bits()), x.is_nan()) as u16))
                .collect(),
        ),
        Data::F32(v) => Data::F32(
            v.iter()
                .map(|x| f32::from_bits(f(u64::from(x.to_bits()), x.is_nan()) as u32))
                .collect(),
        ),
        Data::F64(v) => Data::F64(
            v.iter()
                .map(|x| f64::from_bits(f(x.to_bits(), x.is_nan())))
                .collect(),
        ),
        _ => return Err(err("internal error: reduce-precision storage")),
    };
    Array::new(a.ty, a.dims.clone(), data)
}

/// XLA's `stochastic-convert` (float to signed integer, as its
/// `StochasticConvertDecomposer` defines it): |x| truncated, plus one when
/// `random < frac(|x|) * 2^bits(random)`, the sign put back; x at or
/// beyond the type's range saturates, NaN gives 0.
pub fn stochastic_convert(a: &Array, random: &Array, to: PrimitiveType) -> Result<Array> {
    if !a.ty.is_float() || !random.ty.is_unsigned_int() || !to.is_signed_int() {
        return Err(super::unsupported(format!(
            "stochastically converting from type {} to type {to} with {} random bits is not implemented",
            a.ty, random.ty
        )));
    }
    if random.dims != a.dims || random.ty.bit_width() != a.ty.bit_width() {
        return Err(err(format!(
            "stochastic-convert: random numbers {} do not match the operand {}",
            random.shape_text(),
            a.shape_text()
        )));
    }
    let Data::U(r) = &random.data else {
        return Err(err("internal error: random bits are not unsigned"));
    };
    let rbits = random.ty.bit_width();
    let bits = to.bit_width();
    let (lo, hi) = s_range(bits);
    let scale = 2f64.powi(rbits as i32);
    let rmax = wrap_u(u64::MAX, rbits);
    let out: Vec<i64> = a
        .to_f64_vec()
        .iter()
        .zip(r)
        .map(|(&x, &rnd)| {
            if x.is_nan() {
                return 0;
            }
            if x <= lo as f64 {
                return lo;
            }
            if x >= hi as f64 {
                return hi;
            }
            let t = x.abs().floor();
            let fixed = ((x.abs() - t) * scale).min(rmax as f64) as u64;
            let mut v = t as i64;
            if rnd < fixed {
                v += 1;
            }
            wrap_s(if x < 0.0 { -v } else { v }, bits)
        })
        .collect();
    Array::new(to, a.dims.clone(), Data::S(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mini_rounding_matches_the_codec_away_from_overflow_ties() {
        for ty in [
            PrimitiveType::F8E4M3FN,
            PrimitiveType::F8E5M2,
            PrimitiveType::F8E4M3,
            PrimitiveType::F8E3M4,
            PrimitiveType::F8E4M3FNUZ,
            PrimitiveType::F8E5M2FNUZ,
            PrimitiveType::F8E4M3B11FNUZ,
            PrimitiveType::F4E2M1FN,
            PrimitiveType::F8E8M0FNU,
        ] {
            let m = ty.minifloat().unwrap();
            let max = max_finite(&m);
            let mut x = 1e-45f64;
            while x < max * 0.999 {
                for v in [x, -x] {
                    let a = f64_to_mini(v, &m);
                    let b = m.from_f64(v);
                    assert_eq!(a, b, "{ty} {v}: {a:#x} vs codec {b:#x}");
                }
                x *= 1.0137;
            }
            // Every representable value and every midpoint round trips.
            for code in 0..=255u8 {
                let v = m.to_f64(code);
                if v.is_finite() && (v != 0.0 || code == 0) {
                    assert_eq!(m.to_f64(f64_to_mini(v, &m)), v, "{ty} {code:#x}");
                }
            }
        }
    }

    #[test]
    fn ml_dtypes_overflow_rules() {
        let e4m3 = PrimitiveType::F8E4M3FN.minifloat().unwrap();
        // 464 is the tie between 448 and (NaN) 480: to even, 448.
        assert_eq!(f64_to_mini(464.0, &e4m3), 0x7e);
        assert_eq!(f64_to_mini(465.0, &e4m3), 0x7f);
        assert_eq!(f64_to_mini(-1e9, &e4m3), 0xff);
        let e5m2 = PrimitiveType::F8E5M2.minifloat().unwrap();
        assert_eq!(f64_to_mini(61440.0, &e5m2), 0x7c);
        assert_eq!(f64_to_mini(61439.0, &e5m2), 0x7b);
    }

    #[test]
    fn reduce_precision_rounds_and_clamps_like_xla() {
        let f = |v: &[f32], e, m| -> Vec<f32> {
            let a = Array::new(PrimitiveType::F32, vec![v.len()], Data::F32(v.to_vec())).unwrap();
            match reduce_precision(&a, e, m).unwrap().data {
                Data::F32(v) => v,
                _ => unreachable!(),
            }
        };
        // To bf16's precision: ties to even.
        let one_and_half_ulp = 1.0 + 3.0 * 2f32.powi(-8);
        assert_eq!(
            f(&[one_and_half_ulp], 8, 7),
            vec![1.0 + 2.0 * 2f32.powi(-7)]
        );
        assert_eq!(f(&[1.0 + 2f32.powi(-8)], 8, 7), vec![1.0]);
        // To f16's range: 70000 overflows, 1e-5 is below the normal range.
        let r = f(&[70000.0, -70000.0, 1e-5, 1.23456], 5, 10);
        assert_eq!(r[0], f32::INFINITY);
        assert_eq!(r[1], f32::NEG_INFINITY);
        assert_eq!(r[2], 0.0);
        assert_eq!(r[3], 1.234375);
        // NaN stays NaN; with no mantissa bits it becomes infinity.
        assert!(f(&[f32::NAN], 8, 7)[0].is_nan());
        assert!(f(&[f32::NAN], 8, 0)[0].is_nan());
    }

    #[test]
    fn stochastic_convert_rounds_up_below_the_fraction() {
        let x = Array::new(
            PrimitiveType::F32,
            vec![4],
            Data::F32(vec![2.25, 2.25, -2.75, 1e10]),
        )
        .unwrap();
        // frac 0.25 -> threshold 2^30; 0.75 -> 3 * 2^30.
        let r = Array::new(
            PrimitiveType::U32,
            vec![4],
            Data::U(vec![(1 << 30) - 1, 1 << 30, 0, 0]),
        )
        .unwrap();
        let y = stochastic_convert(&x, &r, PrimitiveType::S32).unwrap();
        assert_eq!(y.data, Data::S(vec![3, 2, -3, i64::from(i32::MAX)]));
    }

    #[test]
    fn double_rounding_is_avoided() {
        // 1 + 2^-8 + 2^-40 rounds up in bf16 (not to even via f32).
        let x = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
        assert_eq!(f64_to_bf16(x).to_f64(), 1.0 + 2f64.powi(-7));
        assert_eq!(f64_to_bf16(1.0 + 2f64.powi(-8)).to_f64(), 1.0);
    }
}
