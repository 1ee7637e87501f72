//! Literals from their protos, values reordered from the literal's layout
//! to row-major order.

use super::err;
use super::messages::*;
use super::ProtoError;
use crate::ir::literal::{Literal, LiteralData};
use crate::ir::shape::{ArrayShape, Shape};
use crate::ir::PrimitiveType;
use half::{bf16, f16};

/// A literal's values, checked against the instruction's shape.
pub(crate) fn literal_from_proto(l: &LiteralProto, shape: &Shape) -> Result<Literal, ProtoError> {
    literal_inner(l, shape, 0)
}

pub(super) fn literal_inner(
    l: &LiteralProto,
    shape: &Shape,
    depth: usize,
) -> Result<Literal, ProtoError> {
    if depth > crate::ir::shape::MAX_TUPLE_DEPTH {
        return err("literals nested too deeply");
    }
    let data = match shape {
        Shape::Tuple(elems) => {
            if l.tuple_literals.len() != elems.len() {
                return err(format!(
                    "a tuple literal of {} elements for a tuple of {}",
                    l.tuple_literals.len(),
                    elems.len()
                ));
            }
            LiteralData::Tuple(
                l.tuple_literals
                    .iter()
                    .zip(elems)
                    .map(|(e, s)| literal_inner(e, s, depth + 1))
                    .collect::<Result<_, _>>()?,
            )
        }
        Shape::Token | Shape::Opaque => LiteralData::Empty,
        Shape::Array(a) => {
            let n = usize::try_from(a.element_count())
                .map_err(|_| ProtoError::new("a literal with a negative element count"))?;
            let data = array_data(l, a.element_type, n)?;
            // The proto holds the values in the order of the literal's
            // layout; the IR in row-major order.
            let layout = l
                .shape
                .as_ref()
                .and_then(|s| s.layout.as_ref())
                .map(|l| &l.minor_to_major[..])
                .or_else(|| a.layout.as_ref().map(|l| &l.minor_to_major[..]));
            match layout.and_then(|m| physical_positions(a, m)) {
                Some(from) if from.len() == data.len() => gather(&data, &from),
                _ => data,
            }
        }
    };
    Ok(Literal {
        shape: shape.clone(),
        data,
    })
}

/// Where each element of an array (in row-major order) is in the order of
/// a layout, which is how XLA's literals hold their values; `None` when
/// the two orders are the same (or the layout does not fit the shape).
pub(crate) fn physical_positions(a: &ArrayShape, minor_to_major: &[i64]) -> Option<Vec<usize>> {
    let rank = a.dims.len();
    if rank < 2 || minor_to_major.len() != rank {
        return None;
    }
    let row_major = minor_to_major
        .iter()
        .enumerate()
        .all(|(k, &d)| d == (rank - 1 - k) as i64);
    if row_major {
        return None;
    }
    let dims: Vec<usize> = a
        .dims
        .iter()
        .map(|&d| usize::try_from(d).ok())
        .collect::<Option<_>>()?;
    // Each dimension's stride in layout order.
    let mut stride = vec![0usize; rank];
    let mut seen = vec![false; rank];
    let mut next = 1usize;
    for &d in minor_to_major {
        let d = usize::try_from(d).ok().filter(|&d| d < rank && !seen[d])?;
        seen[d] = true;
        stride[d] = next;
        next = next.checked_mul(dims[d])?;
    }
    // Row-major walk: the last index moves fastest.
    let mut out = Vec::with_capacity(next);
    let mut index = vec![0usize; rank];
    let mut pos = 0usize;
    for _ in 0..next {
        out.push(pos);
        for d in (0..rank).rev() {
            index[d] += 1;
            pos += stride[d];
            if index[d] < dims[d] {
                break;
            }
            pos -= stride[d] * dims[d];
            index[d] = 0;
        }
    }
    Some(out)
}

/// The values `data[from[0]], data[from[1]], ...`; `from` is in range.
pub(crate) fn gather(data: &LiteralData, from: &[usize]) -> LiteralData {
    pub(super) fn g<T: Clone>(v: &[T], from: &[usize]) -> Vec<T> {
        from.iter().map(|&i| v[i].clone()).collect()
    }
    match data {
        LiteralData::Pred(v) => LiteralData::Pred(g(v, from)),
        LiteralData::Int(v) => LiteralData::Int(g(v, from)),
        LiteralData::UInt(v) => LiteralData::UInt(g(v, from)),
        LiteralData::F16(v) => LiteralData::F16(g(v, from)),
        LiteralData::Bf16(v) => LiteralData::Bf16(g(v, from)),
        LiteralData::F32(v) => LiteralData::F32(g(v, from)),
        LiteralData::F64(v) => LiteralData::F64(g(v, from)),
        LiteralData::MiniFloat(v) => LiteralData::MiniFloat(g(v, from)),
        LiteralData::C64(v) => LiteralData::C64(g(v, from)),
        LiteralData::C128(v) => LiteralData::C128(g(v, from)),
        LiteralData::Tuple(_) | LiteralData::Elided | LiteralData::Empty => data.clone(),
    }
}

pub(super) fn array_data(
    l: &LiteralProto,
    ty: PrimitiveType,
    n: usize,
) -> Result<LiteralData, ProtoError> {
    use PrimitiveType::*;
    let e = Expected { ty, n };
    match ty {
        Pred => {
            e.check(l.preds.len())?;
            Ok(LiteralData::Pred(l.preds.clone()))
        }
        S8 | S4 | S2 | S1 | S16 | S32 | S64 => int_data(l, e),
        U8 | U4 | U2 | U1 | U16 | U32 | U64 => uint_data(l, e),
        F16 | Bf16 | F32 | F64 | C64 | C128 => float_data(l, e),
        t if t.minifloat().is_some() => {
            let b = minifloat_bytes(l, t);
            e.check(b.len())?;
            Ok(LiteralData::MiniFloat(b.to_vec()))
        }
        t => err(format!("no literal values for element type {}", t.name())),
    }
}

/// The element type and count a literal's values must have.
#[derive(Clone, Copy)]
struct Expected {
    ty: PrimitiveType,
    n: usize,
}

impl Expected {
    fn check(self, len: usize) -> Result<(), ProtoError> {
        if len == self.n {
            Ok(())
        } else {
            err(format!(
                "a {} literal of {len} values for {} elements",
                self.ty.name(),
                self.n
            ))
        }
    }

    /// 16-bit values, which a proto holds as little-endian bytes.
    fn le16(self, b: &[u8]) -> Result<Vec<u16>, ProtoError> {
        self.check(b.len() / 2)?;
        if b.len() % 2 != 0 {
            return err("odd byte count in a 16-bit literal");
        }
        Ok(b.chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect())
    }
}

fn int_data(l: &LiteralProto, e: Expected) -> Result<LiteralData, ProtoError> {
    use PrimitiveType::*;
    let values = match e.ty {
        S8 | S4 | S2 | S1 => {
            let b = match e.ty {
                S8 => &l.s8s,
                S4 => &l.s4s,
                S2 => &l.s2s,
                _ => &l.s1s,
            };
            e.check(b.len())?;
            b.iter().map(|&x| i64::from(x as i8)).collect()
        }
        S16 => e
            .le16(&l.s16s)?
            .into_iter()
            .map(|x| i64::from(x as i16))
            .collect(),
        S32 => {
            e.check(l.s32s.len())?;
            l.s32s.iter().map(|&x| i64::from(x)).collect()
        }
        _ => {
            e.check(l.s64s.len())?;
            l.s64s.clone()
        }
    };
    Ok(LiteralData::Int(values))
}

fn uint_data(l: &LiteralProto, e: Expected) -> Result<LiteralData, ProtoError> {
    use PrimitiveType::*;
    let values = match e.ty {
        U8 | U4 | U2 | U1 => {
            let b = match e.ty {
                U8 => &l.u8s,
                U4 => &l.u4s,
                U2 => &l.u2s,
                _ => &l.u1s,
            };
            e.check(b.len())?;
            b.iter().map(|&x| u64::from(x)).collect()
        }
        U16 => e.le16(&l.u16s)?.into_iter().map(u64::from).collect(),
        U32 => {
            e.check(l.u32s.len())?;
            l.u32s.iter().map(|&x| u64::from(x)).collect()
        }
        _ => {
            e.check(l.u64s.len())?;
            l.u64s.clone()
        }
    };
    Ok(LiteralData::UInt(values))
}

/// Floating-point and complex values.
fn float_data(l: &LiteralProto, e: Expected) -> Result<LiteralData, ProtoError> {
    use PrimitiveType::*;
    Ok(match e.ty {
        F16 => LiteralData::F16(e.le16(&l.f16s)?.into_iter().map(f16::from_bits).collect()),
        Bf16 => LiteralData::Bf16(e.le16(&l.bf16s)?.into_iter().map(bf16::from_bits).collect()),
        F32 => {
            e.check(l.f32s.len())?;
            LiteralData::F32(l.f32s.clone())
        }
        F64 => {
            e.check(l.f64s.len())?;
            LiteralData::F64(l.f64s.clone())
        }
        C64 => {
            e.check(l.c64s.len() / 2)?;
            LiteralData::C64(l.c64s.chunks_exact(2).map(|c| (c[0], c[1])).collect())
        }
        _ => {
            e.check(l.c128s.len() / 2)?;
            LiteralData::C128(l.c128s.chunks_exact(2).map(|c| (c[0], c[1])).collect())
        }
    })
}

pub(crate) fn minifloat_bytes(l: &LiteralProto, t: PrimitiveType) -> &Vec<u8> {
    use PrimitiveType::*;
    match t {
        F4E2M1FN => &l.f4e2m1fns,
        F8E3M4 => &l.f8e3m4s,
        F8E4M3B11FNUZ => &l.f8e4m3b11fnuzs,
        F8E4M3FN => &l.f8e4m3fns,
        F8E4M3FNUZ => &l.f8e4m3fnuzs,
        F8E4M3 => &l.f8e4m3s,
        F8E5M2FNUZ => &l.f8e5m2fnuzs,
        F8E5M2 => &l.f8e5m2s,
        _ => &l.f8e8m0fnus,
    }
}
