//! Constant values: dense arrays of every element type, and tuples.
//!
//! f16 and bf16 use `half`; the 8- and 4-bit floats keep their exact bit
//! patterns. A constant XLA printed elided (`{...}`) has no value here:
//! whatever needs the value must refuse it.

use super::shape::Shape;
use super::types::PrimitiveType;
use half::{bf16, f16};

#[derive(Clone, Debug, PartialEq)]
pub struct Literal {
    pub shape: Shape,
    pub data: LiteralData,
}

#[derive(Clone, Debug, PartialEq)]
pub enum LiteralData {
    Pred(Vec<bool>),
    /// Signed integers of every width, sign-extended.
    Int(Vec<i64>),
    /// Unsigned integers of every width.
    UInt(Vec<u64>),
    F16(Vec<f16>),
    Bf16(Vec<bf16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    /// 8- and 4-bit floats as raw bits (see [`PrimitiveType::minifloat`]).
    MiniFloat(Vec<u8>),
    C64(Vec<(f32, f32)>),
    C128(Vec<(f64, f64)>),
    Tuple(Vec<Literal>),
    /// Printed as `{...}` by XLA's default printer; the value is unknown.
    Elided,
    /// A token or opaque value: nothing to hold.
    Empty,
}

impl LiteralData {
    pub fn len(&self) -> usize {
        match self {
            LiteralData::Pred(v) => v.len(),
            LiteralData::Int(v) => v.len(),
            LiteralData::UInt(v) => v.len(),
            LiteralData::F16(v) => v.len(),
            LiteralData::Bf16(v) => v.len(),
            LiteralData::F32(v) => v.len(),
            LiteralData::F64(v) => v.len(),
            LiteralData::MiniFloat(v) => v.len(),
            LiteralData::C64(v) => v.len(),
            LiteralData::C128(v) => v.len(),
            LiteralData::Tuple(v) => v.len(),
            LiteralData::Elided | LiteralData::Empty => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Literal {
    /// A scalar of any integer or float type, from an f64.
    pub fn scalar(ty: PrimitiveType, value: f64) -> Literal {
        let data = match ty {
            PrimitiveType::Pred => LiteralData::Pred(vec![value != 0.0]),
            t if t.is_signed_int() => LiteralData::Int(vec![value as i64]),
            t if t.is_unsigned_int() => LiteralData::UInt(vec![value as u64]),
            PrimitiveType::F16 => LiteralData::F16(vec![f16::from_f64(value)]),
            PrimitiveType::Bf16 => LiteralData::Bf16(vec![bf16::from_f64(value)]),
            PrimitiveType::F32 => LiteralData::F32(vec![value as f32]),
            PrimitiveType::F64 => LiteralData::F64(vec![value]),
            PrimitiveType::C64 => LiteralData::C64(vec![(value as f32, 0.0)]),
            PrimitiveType::C128 => LiteralData::C128(vec![(value, 0.0)]),
            t => match t.minifloat() {
                Some(m) => LiteralData::MiniFloat(vec![m.from_f64(value)]),
                None => LiteralData::Empty,
            },
        };
        Literal {
            shape: Shape::scalar(ty),
            data,
        }
    }

    pub fn is_elided(&self) -> bool {
        matches!(self.data, LiteralData::Elided)
    }

    /// Element `i` as an f64 (integers and floats; complex gives the real
    /// part). `None` for tuples, elided values and out-of-range indices.
    pub fn get_f64(&self, i: usize) -> Option<f64> {
        Some(match &self.data {
            LiteralData::Pred(v) => f64::from(u8::from(*v.get(i)?)),
            LiteralData::Int(v) => *v.get(i)? as f64,
            LiteralData::UInt(v) => *v.get(i)? as f64,
            LiteralData::F16(v) => v.get(i)?.to_f64(),
            LiteralData::Bf16(v) => v.get(i)?.to_f64(),
            LiteralData::F32(v) => f64::from(*v.get(i)?),
            LiteralData::F64(v) => *v.get(i)?,
            LiteralData::MiniFloat(v) => self.shape.element_type().minifloat()?.to_f64(*v.get(i)?),
            LiteralData::C64(v) => f64::from(v.get(i)?.0),
            LiteralData::C128(v) => v.get(i)?.0,
            LiteralData::Tuple(_) | LiteralData::Elided | LiteralData::Empty => return None,
        })
    }
}
