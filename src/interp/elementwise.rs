//! Elementwise ops: unary, binary, compare, select, clamp.
//!
//! Floats narrower than f32 are computed in f32 and rounded back after each
//! op (for +, -, *, / and sqrt this is the correctly rounded result; it is
//! what XLA:CPU does). Integers wrap at their width; division by zero and
//! over-wide shifts follow XLA's definitions.

use super::array::{shape_dims, Value};
use super::array::{storage, wrap_s, wrap_u, Array, Data, Storage};
use super::convert::{from_f32_vec, to_f32_vec, to_f64_vec};
use super::narrow::{self, Narrow};
use super::{err, expect_operands, operand, par, Result};
use crate::ir::{ComparisonDirection, ComparisonType, Instruction, Opcode, PrimitiveType};
use std::cmp::Ordering;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Max,
    Min,
    Pow,
    Atan2,
    And,
    Or,
    Xor,
    Shl,
    ShrL,
    ShrA,
}

impl BinOp {
    pub fn from_opcode(op: Opcode) -> Option<BinOp> {
        Some(match op {
            Opcode::Add => BinOp::Add,
            Opcode::Subtract => BinOp::Sub,
            Opcode::Multiply => BinOp::Mul,
            Opcode::Divide => BinOp::Div,
            Opcode::Remainder => BinOp::Rem,
            Opcode::Maximum => BinOp::Max,
            Opcode::Minimum => BinOp::Min,
            Opcode::Power => BinOp::Pow,
            Opcode::Atan2 => BinOp::Atan2,
            Opcode::And => BinOp::And,
            Opcode::Or => BinOp::Or,
            Opcode::Xor => BinOp::Xor,
            Opcode::ShiftLeft => BinOp::Shl,
            Opcode::ShiftRightLogical => BinOp::ShrL,
            Opcode::ShiftRightArithmetic => BinOp::ShrA,
            _ => return None,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Abs,
    Neg,
    Exp,
    Expm1,
    Log,
    Log1p,
    Sqrt,
    Rsqrt,
    Cbrt,
    Tanh,
    Logistic,
    Sin,
    Cos,
    Tan,
    Floor,
    Ceil,
    RoundAfz,
    RoundEven,
    Sign,
    Not,
    Erf,
    Popcnt,
    Clz,
}

impl UnOp {
    pub fn from_opcode(op: Opcode) -> Option<UnOp> {
        Some(match op {
            Opcode::Abs => UnOp::Abs,
            Opcode::Negate => UnOp::Neg,
            Opcode::Exp => UnOp::Exp,
            Opcode::Expm1 => UnOp::Expm1,
            Opcode::Log => UnOp::Log,
            Opcode::Log1p => UnOp::Log1p,
            Opcode::Sqrt => UnOp::Sqrt,
            Opcode::Rsqrt => UnOp::Rsqrt,
            Opcode::Cbrt => UnOp::Cbrt,
            Opcode::Tanh => UnOp::Tanh,
            Opcode::Logistic => UnOp::Logistic,
            Opcode::Sin => UnOp::Sin,
            Opcode::Cos => UnOp::Cos,
            Opcode::Tan => UnOp::Tan,
            Opcode::Floor => UnOp::Floor,
            Opcode::Ceil => UnOp::Ceil,
            Opcode::RoundNearestAfz => UnOp::RoundAfz,
            Opcode::RoundNearestEven => UnOp::RoundEven,
            Opcode::Sign => UnOp::Sign,
            Opcode::Not => UnOp::Not,
            Opcode::Erf => UnOp::Erf,
            Opcode::PopulationCount => UnOp::Popcnt,
            Opcode::Clz => UnOp::Clz,
            _ => return None,
        })
    }
}

/// The ops [`eval`] evaluates: one result element per operand element.
pub fn handles(op: Opcode) -> bool {
    BinOp::from_opcode(op).is_some()
        || UnOp::from_opcode(op).is_some()
        || matches!(
            op,
            Opcode::IsFinite
                | Opcode::Compare
                | Opcode::Select
                | Opcode::Clamp
                | Opcode::Convert
                | Opcode::BitcastConvert
                | Opcode::Complex
                | Opcode::Real
                | Opcode::Imag
                | Opcode::ReducePrecision
                | Opcode::StochasticConvert
        )
}

/// Evaluates an elementwise op (see [`handles`]).
pub fn eval(instr: &Instruction, ops: &[&Value]) -> Result<Array> {
    let op = instr.opcode;
    let n = match op {
        Opcode::Select | Opcode::Clamp => 3,
        Opcode::Compare | Opcode::Complex | Opcode::StochasticConvert => 2,
        _ if BinOp::from_opcode(op).is_some() => 2,
        _ => 1,
    };
    expect_operands(instr, ops, n)?;
    let a = |i: usize| operand(ops, i);
    let out_ty = instr.shape.element_type();
    if let Some(b) = BinOp::from_opcode(op) {
        return binary(b, a(0)?, a(1)?);
    }
    if let Some(u) = UnOp::from_opcode(op) {
        return unary(u, a(0)?);
    }
    match op {
        Opcode::IsFinite => is_finite(a(0)?),
        Opcode::Compare => {
            let d = instr
                .comparison_direction()
                .ok_or_else(|| err("compare without direction"))?;
            compare(a(0)?, a(1)?, d, instr.comparison_type())
        }
        Opcode::Select => select(a(0)?, a(1)?, a(2)?),
        Opcode::Clamp => clamp(a(0)?, a(1)?, a(2)?),
        Opcode::Convert => super::convert::convert(a(0)?, out_ty),
        Opcode::BitcastConvert => {
            super::convert::bitcast_convert(a(0)?, out_ty, shape_dims(&instr.shape)?)
        }
        Opcode::Complex => super::complex::make(a(0)?, a(1)?),
        Opcode::Real => super::complex::part(a(0)?, false),
        Opcode::Imag => super::complex::part(a(0)?, true),
        Opcode::ReducePrecision => {
            let bits = |k: &str| -> Result<u32> {
                crate::interp::attrs::int_attr(instr, k)?
                    .and_then(|v| u32::try_from(v).ok())
                    .ok_or_else(|| err(format!("reduce-precision without {k}")))
            };
            super::convert::reduce_precision(a(0)?, bits("exponent_bits")?, bits("mantissa_bits")?)
        }
        Opcode::StochasticConvert => super::convert::stochastic_convert(a(0)?, a(1)?, out_ty),
        _ => Err(err(format!(
            "internal error: {} is not elementwise",
            op.name()
        ))),
    }
}

fn same_dims(a: &Array, b: &Array, what: &str) -> Result<()> {
    if a.dims != b.dims || a.ty != b.ty {
        return Err(err(format!(
            "{what}: operands {} and {} differ",
            a.shape_text(),
            b.shape_text()
        )));
    }
    Ok(())
}

#[inline]
pub(crate) fn fmax32(a: f32, b: f32) -> f32 {
    // XLA:CPU: NaN propagates; equal values give the left operand.
    if a.is_nan() || a >= b {
        a
    } else {
        b
    }
}
#[inline]
pub(crate) fn fmin32(a: f32, b: f32) -> f32 {
    if a.is_nan() || a <= b {
        a
    } else {
        b
    }
}
#[inline]
pub(crate) fn fmax64(a: f64, b: f64) -> f64 {
    if a.is_nan() || a >= b {
        a
    } else {
        b
    }
}
#[inline]
pub(crate) fn fmin64(a: f64, b: f64) -> f64 {
    if a.is_nan() || a <= b {
        a
    } else {
        b
    }
}

#[inline]
pub fn fbin32(op: BinOp, a: f32, b: f32) -> Result<f32> {
    Ok(match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a * b,
        BinOp::Div => a / b,
        BinOp::Rem => a % b,
        BinOp::Max => fmax32(a, b),
        BinOp::Min => fmin32(a, b),
        BinOp::Pow => a.powf(b),
        BinOp::Atan2 => a.atan2(b),
        _ => return Err(err(format!("{op:?} is not defined on floats"))),
    })
}

#[inline]
pub fn fbin64(op: BinOp, a: f64, b: f64) -> Result<f64> {
    Ok(match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a * b,
        BinOp::Div => a / b,
        BinOp::Rem => a % b,
        BinOp::Max => fmax64(a, b),
        BinOp::Min => fmin64(a, b),
        BinOp::Pow => a.powf(b),
        BinOp::Atan2 => a.atan2(b),
        _ => return Err(err(format!("{op:?} is not defined on floats"))),
    })
}

#[inline]
pub fn sbin(op: BinOp, a: i64, b: i64, bits: u32) -> Result<i64> {
    let min = wrap_s(1i64 << (bits.min(64) - 1), bits);
    Ok(wrap_s(
        match op {
            BinOp::Add => a.wrapping_add(b),
            BinOp::Sub => a.wrapping_sub(b),
            BinOp::Mul => a.wrapping_mul(b),
            BinOp::Div => {
                if b == 0 {
                    -1
                } else if a == min && b == -1 {
                    min
                } else {
                    a.wrapping_div(b)
                }
            }
            BinOp::Rem => {
                if b == 0 {
                    a
                } else if a == min && b == -1 {
                    0
                } else {
                    a.wrapping_rem(b)
                }
            }
            BinOp::Max => a.max(b),
            BinOp::Min => a.min(b),
            BinOp::Pow => ipow_s(a, b),
            BinOp::And => a & b,
            BinOp::Or => a | b,
            BinOp::Xor => a ^ b,
            BinOp::Shl => {
                let s = wrap_u(b as u64, bits);
                if s >= u64::from(bits) {
                    0
                } else {
                    a.wrapping_shl(s as u32)
                }
            }
            BinOp::ShrL => {
                let s = wrap_u(b as u64, bits);
                if s >= u64::from(bits) {
                    0
                } else {
                    (wrap_u(a as u64, bits) >> s) as i64
                }
            }
            BinOp::ShrA => {
                let s = wrap_u(b as u64, bits);
                if s >= u64::from(bits) {
                    if a < 0 {
                        -1
                    } else {
                        0
                    }
                } else {
                    a >> s
                }
            }
            BinOp::Atan2 => return Err(err("atan2 is not defined on integers")),
        },
        bits,
    ))
}

fn ipow_s(base: i64, exp: i64) -> i64 {
    if exp < 0 {
        return match base {
            1 => 1,
            -1 => {
                if exp % 2 == 0 {
                    1
                } else {
                    -1
                }
            }
            _ => 0,
        };
    }
    let (mut r, mut b, mut e) = (1i64, base, exp as u64);
    while e > 0 {
        if e & 1 == 1 {
            r = r.wrapping_mul(b);
        }
        b = b.wrapping_mul(b);
        e >>= 1;
    }
    r
}

#[inline]
pub fn ubin(op: BinOp, a: u64, b: u64, bits: u32) -> Result<u64> {
    Ok(wrap_u(
        match op {
            BinOp::Add => a.wrapping_add(b),
            BinOp::Sub => a.wrapping_sub(b),
            BinOp::Mul => a.wrapping_mul(b),
            BinOp::Div => a.checked_div(b).unwrap_or(u64::MAX),
            BinOp::Rem => {
                if b == 0 {
                    a
                } else {
                    a % b
                }
            }
            BinOp::Max => a.max(b),
            BinOp::Min => a.min(b),
            BinOp::Pow => {
                let (mut r, mut x, mut e) = (1u64, a, b);
                while e > 0 {
                    if e & 1 == 1 {
                        r = r.wrapping_mul(x);
                    }
                    x = x.wrapping_mul(x);
                    e >>= 1;
                }
                r
            }
            BinOp::And => a & b,
            BinOp::Or => a | b,
            BinOp::Xor => a ^ b,
            BinOp::Shl => {
                if b >= u64::from(bits) {
                    0
                } else {
                    a << b
                }
            }
            BinOp::ShrL => {
                if b >= u64::from(bits) {
                    0
                } else {
                    a >> b
                }
            }
            BinOp::ShrA => {
                // XLA shifts the bits as a signed value of the same width:
                // u8 0xDE >> 2 is 0xF7; past the width, all sign bits.
                let sa = wrap_s(a as i64, bits);
                let shifted = if b >= u64::from(bits) {
                    if sa < 0 {
                        -1
                    } else {
                        0
                    }
                } else {
                    sa >> b
                };
                shifted as u64
            }
            BinOp::Atan2 => return Err(err("atan2 is not defined on integers")),
        },
        bits,
    ))
}

pub fn pbin(op: BinOp, a: bool, b: bool) -> Result<bool> {
    Ok(match op {
        BinOp::And | BinOp::Min | BinOp::Mul => a & b,
        BinOp::Or | BinOp::Max => a | b,
        BinOp::Xor | BinOp::Add | BinOp::Sub => a ^ b,
        _ => return Err(err(format!("{op:?} is not defined on pred"))),
    })
}

/// `a op b`, elementwise, same shapes.
pub fn binary(op: BinOp, a: &Array, b: &Array) -> Result<Array> {
    same_dims(a, b, "elementwise op")?;
    let bits = a.ty.bit_width();
    let data = match (&a.data, &b.data) {
        (Data::F32(x), Data::F32(y)) => {
            fbin32(op, 0.0, 0.0)?; // an op floats do not have is an error
            Data::F32(binary_f32(op, x, y))
        }
        (Data::F64(x), Data::F64(y)) => {
            fbin64(op, 0.0, 0.0)?;
            Data::F64(binary_f64(op, x, y))
        }
        (Data::S(x), Data::S(y)) => Data::S(
            x.iter()
                .zip(y)
                .map(|(&p, &q)| sbin(op, p, q, bits))
                .collect::<Result<_>>()?,
        ),
        (Data::U(x), Data::U(y)) => Data::U(super::intbin::binary_u(op, x, y, bits)?),
        (Data::Pred(x), Data::Pred(y)) => Data::Pred(
            x.iter()
                .zip(y)
                .map(|(&p, &q)| pbin(op, p, q))
                .collect::<Result<_>>()?,
        ),
        (Data::C64(_), _) | (Data::C128(_), _) => return super::complex::binary(op, a, b),
        (Data::F16(x), Data::F16(y)) => {
            fbin32(op, 0.0, 0.0)?;
            Data::F16(binary_narrow(op, x, y))
        }
        (Data::Bf16(x), Data::Bf16(y)) => {
            fbin32(op, 0.0, 0.0)?;
            Data::Bf16(binary_narrow(op, x, y))
        }
        _ => {
            // The 8- and 4-bit floats: in f32, rounded back.
            let x = to_f32_vec(&a.data, a.ty);
            let y = to_f32_vec(&b.data, b.ty);
            let r = x
                .iter()
                .zip(&y)
                .map(|(&p, &q)| fbin32(op, p, q))
                .collect::<Result<Vec<_>>>()?;
            from_f32_vec(a.ty, r)?
        }
    };
    Array::new(a.ty, a.dims.clone(), data)
}

/// Binds `$f` to `op` on two f32 (the op chosen once, outside the loop
/// `$body` runs, so that the loop is a plain, vectorisable one).
macro_rules! with_f32_op {
    ($op:expr, $f:ident => $body:expr) => {{
        use $crate::interp::elementwise::{fbin32, fmax32, fmin32, BinOp};
        match $op {
            BinOp::Add => {
                let $f = |p: f32, q: f32| p + q;
                $body
            }
            BinOp::Sub => {
                let $f = |p: f32, q: f32| p - q;
                $body
            }
            BinOp::Mul => {
                let $f = |p: f32, q: f32| p * q;
                $body
            }
            BinOp::Div => {
                let $f = |p: f32, q: f32| p / q;
                $body
            }
            BinOp::Max => {
                let $f = fmax32;
                $body
            }
            BinOp::Min => {
                let $f = fmin32;
                $body
            }
            op => {
                let $f = move |p: f32, q: f32| fbin32(op, p, q).unwrap_or(f32::NAN);
                $body
            }
        }
    }};
}

/// [`with_f32_op`] on f64.
macro_rules! with_f64_op {
    ($op:expr, $f:ident => $body:expr) => {{
        use $crate::interp::elementwise::{fbin64, fmax64, fmin64, BinOp};
        match $op {
            BinOp::Add => {
                let $f = |p: f64, q: f64| p + q;
                $body
            }
            BinOp::Sub => {
                let $f = |p: f64, q: f64| p - q;
                $body
            }
            BinOp::Mul => {
                let $f = |p: f64, q: f64| p * q;
                $body
            }
            BinOp::Div => {
                let $f = |p: f64, q: f64| p / q;
                $body
            }
            BinOp::Max => {
                let $f = fmax64;
                $body
            }
            BinOp::Min => {
                let $f = fmin64;
                $body
            }
            op => {
                let $f = move |p: f64, q: f64| fbin64(op, p, q).unwrap_or(f64::NAN);
                $body
            }
        }
    }};
}

pub(crate) use {with_f32_op, with_f64_op};

/// Binds `$f` to `op` on one f32, the common ops chosen outside the loop
/// `$body` runs (each is `fun32`'s arithmetic for that op).
macro_rules! with_f32_unop {
    ($op:expr, $f:ident => $body:expr) => {
        match $op {
            UnOp::Exp => {
                let $f = exp32;
                $body
            }
            UnOp::Tanh => {
                let $f = |x: f32| x.tanh();
                $body
            }
            UnOp::Neg => {
                let $f = |x: f32| -x;
                $body
            }
            UnOp::Rsqrt => {
                let $f = |x: f32| 1.0 / x.sqrt();
                $body
            }
            UnOp::Log => {
                let $f = |x: f32| x.ln();
                $body
            }
            op => {
                let $f = move |x: f32| fun32(op, x).unwrap_or(f32::NAN);
                $body
            }
        }
    };
}

/// `x op y` on f16 or bf16 arrays, on all cores when large.
fn binary_narrow<T: Narrow>(op: BinOp, x: &[T], y: &[T]) -> Vec<T> {
    with_f32_op!(op, f => narrow::zip(x, y, f))
}

/// [`binary`] written into `owned`'s buffer (an operand whose last use
/// this is: `owned op other` when `owned_is_left`, else `other op owned`),
/// for the float types; `Err(owned)` back when that does not apply (the
/// caller then evaluates [`binary`], which also reports the errors).
pub fn binary_into(
    op: BinOp,
    mut owned: Array,
    other: &Array,
    owned_is_left: bool,
) -> std::result::Result<Array, Array> {
    if owned.dims != other.dims || owned.ty != other.ty || fbin32(op, 0.0, 0.0).is_err() {
        return Err(owned);
    }
    // The same per-element arithmetic as `binary`, operands in their order.
    macro_rules! in_place {
        ($x:expr, $y:expr, $with:ident, $f:ident => $elem:expr) => {
            $with!(op, $f => if owned_is_left {
                par::zip_in_place($x, $y, |p, q| $elem(*p, *q))
            } else {
                par::zip_in_place($x, $y, |q, p| $elem(*p, *q))
            })
        };
    }
    match (&mut owned.data, &other.data) {
        (Data::F32(x), Data::F32(y)) => in_place!(x, y, with_f32_op, f => f),
        (Data::F64(x), Data::F64(y)) => in_place!(x, y, with_f64_op, f => f),
        (Data::F16(x), Data::F16(y)) => {
            with_f32_op!(op, f => narrow::zip_in_place(x, y, owned_is_left, f))
        }
        (Data::Bf16(x), Data::Bf16(y)) => {
            with_f32_op!(op, f => narrow::zip_in_place(x, y, owned_is_left, f))
        }
        _ => return Err(owned),
    }
    Ok(owned)
}

/// `x op y` on f32 arrays, on all cores when large.
fn binary_f32(op: BinOp, x: &[f32], y: &[f32]) -> Vec<f32> {
    with_f32_op!(op, f => par::zip(x, y, |&p, &q| f(p, q)))
}

/// [`binary_f32`] on f64 arrays.
fn binary_f64(op: BinOp, x: &[f64], y: &[f64]) -> Vec<f64> {
    with_f64_op!(op, f => par::zip(x, y, |&p, &q| f(p, q)))
}

#[inline]
fn sign32(x: f32) -> f32 {
    if x.is_nan() || x == 0.0 {
        x
    } else {
        x.signum()
    }
}

/// Below this, e^x is under half the smallest f32 subnormal (2^-150 is
/// e^-103.97), so it rounds to +0.
const EXP32_ZERO_BELOW: f32 = -104.0;

/// `x.exp()`, without calling libm where the result is +0: a masked
/// softmax (scores of -3.4e38 or -inf) takes expf's slow underflow path,
/// which also sets errno, on every masked element. The same bits: glibc's
/// expf gives +0 for every f32 below -104 (all of them checked).
#[inline]
pub fn exp32(x: f32) -> f32 {
    if x < EXP32_ZERO_BELOW {
        0.0
    } else {
        // LLVM takes `exp` for a pure function and calls it on both sides
        // of the branch (keeping the slow call); the opaque value keeps
        // the call on this side only. The bits are the same either way.
        std::hint::black_box(x).exp()
    }
}

#[inline]
pub fn fun32(op: UnOp, x: f32) -> Result<f32> {
    Ok(match op {
        UnOp::Abs => x.abs(),
        UnOp::Neg => -x,
        UnOp::Exp => exp32(x),
        UnOp::Expm1 => x.exp_m1(),
        UnOp::Log => x.ln(),
        UnOp::Log1p => x.ln_1p(),
        UnOp::Sqrt => x.sqrt(),
        UnOp::Rsqrt => 1.0 / x.sqrt(),
        UnOp::Cbrt => x.cbrt(),
        UnOp::Tanh => x.tanh(),
        UnOp::Logistic => 1.0 / (1.0 + (-x).exp()),
        UnOp::Sin => x.sin(),
        UnOp::Cos => x.cos(),
        UnOp::Tan => x.tan(),
        UnOp::Floor => x.floor(),
        UnOp::Ceil => x.ceil(),
        UnOp::RoundAfz => x.round(),
        UnOp::RoundEven => x.round_ties_even(),
        UnOp::Sign => sign32(x),
        UnOp::Erf => libm::erff(x),
        UnOp::Not | UnOp::Popcnt | UnOp::Clz => {
            return Err(err(format!("{op:?} is not defined on floats")))
        }
    })
}

#[inline]
pub fn fun64(op: UnOp, x: f64) -> Result<f64> {
    Ok(match op {
        UnOp::Abs => x.abs(),
        UnOp::Neg => -x,
        UnOp::Exp => x.exp(),
        UnOp::Expm1 => x.exp_m1(),
        UnOp::Log => x.ln(),
        UnOp::Log1p => x.ln_1p(),
        UnOp::Sqrt => x.sqrt(),
        UnOp::Rsqrt => 1.0 / x.sqrt(),
        UnOp::Cbrt => x.cbrt(),
        UnOp::Tanh => x.tanh(),
        UnOp::Logistic => 1.0 / (1.0 + (-x).exp()),
        UnOp::Sin => x.sin(),
        UnOp::Cos => x.cos(),
        UnOp::Tan => x.tan(),
        UnOp::Floor => x.floor(),
        UnOp::Ceil => x.ceil(),
        UnOp::RoundAfz => x.round(),
        UnOp::RoundEven => x.round_ties_even(),
        UnOp::Sign => {
            if x.is_nan() || x == 0.0 {
                x
            } else {
                x.signum()
            }
        }
        UnOp::Erf => libm::erf(x),
        UnOp::Not | UnOp::Popcnt | UnOp::Clz => {
            return Err(err(format!("{op:?} is not defined on floats")))
        }
    })
}

fn sun(op: UnOp, x: i64, bits: u32) -> Result<i64> {
    Ok(wrap_s(
        match op {
            UnOp::Abs => x.wrapping_abs(),
            UnOp::Neg => x.wrapping_neg(),
            UnOp::Sign => x.signum(),
            UnOp::Not => !x,
            UnOp::Popcnt => i64::from(wrap_u(x as u64, bits).count_ones()),
            UnOp::Clz => {
                i64::from(wrap_u(x as u64, bits).leading_zeros()) - i64::from(64 - bits.min(64))
            }
            _ => return Err(err(format!("{op:?} is not defined on integers"))),
        },
        bits,
    ))
}

fn uun(op: UnOp, x: u64, bits: u32) -> Result<u64> {
    Ok(wrap_u(
        match op {
            UnOp::Abs => x,
            UnOp::Neg => x.wrapping_neg(),
            UnOp::Sign => u64::from(x != 0),
            UnOp::Not => !x,
            UnOp::Popcnt => u64::from(x.count_ones()),
            UnOp::Clz => u64::from(x.leading_zeros()) - u64::from(64 - bits.min(64)),
            _ => return Err(err(format!("{op:?} is not defined on integers"))),
        },
        bits,
    ))
}

pub fn unary(op: UnOp, a: &Array) -> Result<Array> {
    let bits = a.ty.bit_width();
    let data = match &a.data {
        Data::F32(x) => {
            fun32(op, 0.0)?; // an op floats do not have is an error
            Data::F32(with_f32_unop!(op, f => par::map(x, |&p| f(p))))
        }
        Data::F64(x) => {
            fun64(op, 0.0)?;
            Data::F64(par::map(x, |&p| fun64(op, p).unwrap_or(f64::NAN)))
        }
        Data::S(x) => Data::S(x.iter().map(|&p| sun(op, p, bits)).collect::<Result<_>>()?),
        Data::U(x) => Data::U(x.iter().map(|&p| uun(op, p, bits)).collect::<Result<_>>()?),
        Data::Pred(x) => match op {
            UnOp::Not => Data::Pred(x.iter().map(|&p| !p).collect()),
            UnOp::Abs | UnOp::Sign => Data::Pred(x.clone()),
            _ => return Err(err(format!("{op:?} is not defined on pred"))),
        },
        Data::C64(_) | Data::C128(_) => return super::complex::unary(op, a),
        Data::F16(x) => {
            fun32(op, 0.0)?;
            Data::F16(with_f32_unop!(op, f => narrow::map(x, f)))
        }
        Data::Bf16(x) => {
            fun32(op, 0.0)?;
            Data::Bf16(with_f32_unop!(op, f => narrow::map(x, f)))
        }
        _ => {
            let x = to_f32_vec(&a.data, a.ty);
            let r = x
                .iter()
                .map(|&p| fun32(op, p))
                .collect::<Result<Vec<_>>>()?;
            from_f32_vec(a.ty, r)?
        }
    };
    Array::new(a.ty, a.dims.clone(), data)
}

/// [`unary`] written into `owned`'s buffer (an operand whose last use this
/// is), for the float types; `Err(owned)` back when that does not apply.
pub fn unary_into(op: UnOp, mut owned: Array) -> std::result::Result<Array, Array> {
    if fun32(op, 0.0).is_err() {
        return Err(owned);
    }
    match &mut owned.data {
        Data::F32(x) => with_f32_unop!(op, f => par::map_in_place(x, |&p| f(p))),
        Data::F64(x) => par::map_in_place(x, |&p| fun64(op, p).unwrap_or(f64::NAN)),
        Data::F16(x) => with_f32_unop!(op, f => narrow::map_in_place(x, f)),
        Data::Bf16(x) => with_f32_unop!(op, f => narrow::map_in_place(x, f)),
        _ => return Err(owned),
    }
    Ok(owned)
}

pub fn is_finite(a: &Array) -> Result<Array> {
    let v = match &a.data {
        Data::F32(x) => x.iter().map(|p| p.is_finite()).collect(),
        _ => to_f64_vec(&a.data, a.ty)
            .iter()
            .map(|p| p.is_finite())
            .collect(),
    };
    if !a.ty.is_float() {
        return Err(err(format!("is-finite of {}", a.ty)));
    }
    Array::new(PrimitiveType::Pred, a.dims.clone(), Data::Pred(v))
}

/// The total-order key of a float (as f64; exact for every float type):
/// -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
#[inline]
pub fn total_key(x: f64) -> i64 {
    let b = x.to_bits() as i64;
    b ^ (((b >> 63) as u64) >> 1) as i64
}

/// `compare(x, y)` of two exact float values, as [`compare`] does for a
/// float type with comparison type `t` (partial order, or TOTALORDER).
#[inline]
pub fn holds_f64(d: ComparisonDirection, t: ComparisonType, x: f64, y: f64) -> bool {
    if t == ComparisonType::TotalOrder {
        dir_holds(d, Some(total_key(x).cmp(&total_key(y))))
    } else {
        dir_holds(d, x.partial_cmp(&y))
    }
}

/// Whether `d` holds for two values in order `o` (`None`: unordered,
/// where only NE holds).
#[inline]
pub(super) fn dir_holds(d: ComparisonDirection, o: Option<Ordering>) -> bool {
    use ComparisonDirection as D;
    match o {
        None => d == D::Ne,
        Some(o) => match d {
            D::Eq => o == Ordering::Equal,
            D::Ne => o != Ordering::Equal,
            D::Lt => o == Ordering::Less,
            D::Le => o != Ordering::Greater,
            D::Gt => o == Ordering::Greater,
            D::Ge => o != Ordering::Less,
        },
    }
}

/// `compare(a, b), direction=d, type=t`.
pub fn compare(
    a: &Array,
    b: &Array,
    d: ComparisonDirection,
    t: Option<ComparisonType>,
) -> Result<Array> {
    same_dims(a, b, "compare")?;
    if a.ty.is_complex() {
        let out = super::complex::compare(a, b, d)?;
        return Array::new(PrimitiveType::Pred, a.dims.clone(), Data::Pred(out));
    }
    let t = t.unwrap_or_else(|| ComparisonType::default_for(a.ty));
    let bits = a.ty.bit_width();
    let out: Vec<bool> = match (&a.data, &b.data, t) {
        (Data::F32(x), Data::F32(y), ComparisonType::Float) => x
            .iter()
            .zip(y)
            .map(|(p, q)| dir_holds(d, p.partial_cmp(q)))
            .collect(),
        (Data::S(x), Data::S(y), ComparisonType::Unsigned) => x
            .iter()
            .zip(y)
            .map(|(&p, &q)| dir_holds(d, Some(wrap_u(p as u64, bits).cmp(&wrap_u(q as u64, bits)))))
            .collect(),
        (Data::S(x), Data::S(y), _) => x
            .iter()
            .zip(y)
            .map(|(p, q)| dir_holds(d, Some(p.cmp(q))))
            .collect(),
        (Data::U(x), Data::U(y), ComparisonType::Signed) => x
            .iter()
            .zip(y)
            .map(|(&p, &q)| dir_holds(d, Some(wrap_s(p as i64, bits).cmp(&wrap_s(q as i64, bits)))))
            .collect(),
        (Data::U(x), Data::U(y), _) => x
            .iter()
            .zip(y)
            .map(|(p, q)| dir_holds(d, Some(p.cmp(q))))
            .collect(),
        (Data::Pred(x), Data::Pred(y), _) => x
            .iter()
            .zip(y)
            .map(|(p, q)| dir_holds(d, Some(p.cmp(q))))
            .collect(),
        (_, _, ComparisonType::TotalOrder) => {
            let x = to_f64_vec(&a.data, a.ty);
            let y = to_f64_vec(&b.data, b.ty);
            x.iter()
                .zip(&y)
                .map(|(&p, &q)| dir_holds(d, Some(total_key(p).cmp(&total_key(q)))))
                .collect()
        }
        _ => {
            let x = to_f64_vec(&a.data, a.ty);
            let y = to_f64_vec(&b.data, b.ty);
            x.iter()
                .zip(&y)
                .map(|(p, q)| dir_holds(d, p.partial_cmp(q)))
                .collect()
        }
    };
    Array::new(PrimitiveType::Pred, a.dims.clone(), Data::Pred(out))
}

/// `select(pred, on_true, on_false)`; `pred` may be a scalar.
pub fn select(p: &Array, t: &Array, f: &Array) -> Result<Array> {
    same_dims(t, f, "select")?;
    let Data::Pred(pv) = &p.data else {
        return Err(err(format!("select predicate is {}, not pred", p.ty)));
    };
    if !p.dims.is_empty() && p.dims != t.dims {
        return Err(err(format!(
            "select predicate {} does not match {}",
            p.shape_text(),
            t.shape_text()
        )));
    }
    let scalar = p.dims.is_empty();
    let mut out = f.data.clone();
    out.overwrite_where(&t.data, pv, scalar, true)?;
    Array::new(t.ty, t.dims.clone(), out)
}

/// [`select`] written into the buffer of `owned`, operand `k` (1: on_true,
/// 2: on_false) whose last use this is; `Err(owned)` back when that does
/// not apply.
pub fn select_into(
    p: &Array,
    mut owned: Array,
    other: &Array,
    k: usize,
) -> std::result::Result<Array, Array> {
    let Data::Pred(pv) = &p.data else {
        return Err(owned);
    };
    let scalar = p.dims.is_empty();
    if owned.dims != other.dims || owned.ty != other.ty || !(scalar || p.dims == owned.dims) {
        return Err(owned);
    }
    // on_false's buffer takes on_true where the predicate holds; on_true's
    // takes on_false where it does not.
    let when = k == 2;
    match owned.data.overwrite_where(&other.data, pv, scalar, when) {
        Ok(()) => Ok(owned),
        Err(_) => Err(owned),
    }
}

/// `clamp(lo, x, hi)`: lo and hi may be scalars.
pub fn clamp(lo: &Array, x: &Array, hi: &Array) -> Result<Array> {
    let widen = |b: &Array| -> Result<Array> {
        if b.dims.is_empty() && !x.dims.is_empty() {
            Array::new(b.ty, x.dims.clone(), b.data.repeat_elem(0, x.len()))
        } else {
            Ok(b.clone())
        }
    };
    let lo = widen(lo)?;
    let hi = widen(hi)?;
    let m = binary(BinOp::Max, x, &lo)?;
    // XLA: clamp(lo, x, hi) = min(max(x, lo), hi)
    binary(BinOp::Min, &m, &hi)
}

/// A scalar of `ty` from an exact value (used for constants built here).
pub fn is_float_storage(ty: PrimitiveType) -> bool {
    matches!(
        storage(ty),
        Ok(Storage::F16 | Storage::Bf16 | Storage::F32 | Storage::F64 | Storage::Mini(_))
    )
}
