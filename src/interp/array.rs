//! Dense arrays and values the interpreter computes with.
//!
//! An [`Array`] holds its elements in row-major (C) order of its logical
//! dimensions; layouts matter only to `bitcast`, which reinterprets the
//! physical order. Elements are kept by storage class: every signed integer
//! width as `i64` (sign-extended to its width), every unsigned one as `u64`,
//! f16/bf16 through `half`, the 8- and 4-bit floats as raw bits, and c64/c128
//! as `num_complex` pairs of f32/f64.

use super::{err, Result};
use crate::ir::literal::{Literal, LiteralData};
use crate::ir::shape::Shape;
use crate::ir::types::{MiniFloat, PrimitiveType};
use half::{bf16, f16};
use num_complex::{Complex32, Complex64};
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    Pred(Vec<bool>),
    S(Vec<i64>),
    U(Vec<u64>),
    F16(Vec<f16>),
    Bf16(Vec<bf16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    /// 8- and 4-bit floats: raw bits, decoded with the type's [`MiniFloat`].
    Mini(Vec<u8>),
    C64(Vec<Complex32>),
    C128(Vec<Complex64>),
}

/// Applies `$body` to the vector inside any [`Data`], rebuilding the same
/// variant from its result (the element type is `Copy` in every variant).
macro_rules! map_data {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            Data::Pred($v) => Data::Pred($body),
            Data::S($v) => Data::S($body),
            Data::U($v) => Data::U($body),
            Data::F16($v) => Data::F16($body),
            Data::Bf16($v) => Data::Bf16($body),
            Data::F32($v) => Data::F32($body),
            Data::F64($v) => Data::F64($body),
            Data::Mini($v) => Data::Mini($body),
            Data::C64($v) => Data::C64($body),
            Data::C128($v) => Data::C128($body),
        }
    };
}

/// Applies `$body` to two [`Data`] of the same variant (`$a` mutable).
macro_rules! zip_data {
    ($a:expr, $b:expr, $x:ident, $y:ident => $body:expr) => {
        match ($a, $b) {
            (Data::Pred($x), Data::Pred($y)) => $body,
            (Data::S($x), Data::S($y)) => $body,
            (Data::U($x), Data::U($y)) => $body,
            (Data::F16($x), Data::F16($y)) => $body,
            (Data::Bf16($x), Data::Bf16($y)) => $body,
            (Data::F32($x), Data::F32($y)) => $body,
            (Data::F64($x), Data::F64($y)) => $body,
            (Data::Mini($x), Data::Mini($y)) => $body,
            (Data::C64($x), Data::C64($y)) => $body,
            (Data::C128($x), Data::C128($y)) => $body,
            _ => return Err(err("internal error: element storage classes differ")),
        }
    };
}

impl Data {
    pub fn len(&self) -> usize {
        match self {
            Data::Pred(v) => v.len(),
            Data::S(v) => v.len(),
            Data::U(v) => v.len(),
            Data::F16(v) => v.len(),
            Data::Bf16(v) => v.len(),
            Data::F32(v) => v.len(),
            Data::F64(v) => v.len(),
            Data::Mini(v) => v.len(),
            Data::C64(v) => v.len(),
            Data::C128(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `n` zeros (false, 0, +0.0) of type `ty`.
    pub fn zeros(ty: PrimitiveType, n: usize) -> Result<Data> {
        use super::budget::try_vec;
        Ok(match storage(ty)? {
            Storage::Pred => Data::Pred(try_vec(n, false)?),
            Storage::S => Data::S(try_vec(n, 0)?),
            Storage::U => Data::U(try_vec(n, 0)?),
            Storage::F16 => Data::F16(try_vec(n, f16::ZERO)?),
            Storage::Bf16 => Data::Bf16(try_vec(n, bf16::ZERO)?),
            Storage::F32 => Data::F32(try_vec(n, 0.0)?),
            Storage::F64 => Data::F64(try_vec(n, 0.0)?),
            Storage::Mini(m) => Data::Mini(try_vec(n, m.from_f64(0.0))?),
            Storage::C64 => Data::C64(try_vec(n, Complex32::new(0.0, 0.0))?),
            Storage::C128 => Data::C128(try_vec(n, Complex64::new(0.0, 0.0))?),
        })
    }

    /// The elements at `idx`, in that order.
    pub fn take(&self, idx: &[usize]) -> Data {
        map_data!(self, v => idx.iter().map(|&i| v[i]).collect())
    }

    /// Element `i` repeated `n` times.
    pub fn repeat_elem(&self, i: usize, n: usize) -> Data {
        map_data!(self, v => vec![v[i]; n])
    }

    /// Writes `src[k]` to `self[dst[k]]` for every k.
    pub fn put(&mut self, dst: &[usize], src: &Data) -> Result<()> {
        zip_data!(self, src, a, b => {
            for (k, &d) in dst.iter().enumerate() {
                a[d] = b[k];
            }
        });
        Ok(())
    }

    /// `self[i] = other[i]` wherever `pred[i] == when` (`pred[0]` for every
    /// i when `scalar_pred`), on all cores when large.
    pub fn overwrite_where(
        &mut self,
        other: &Data,
        pred: &[bool],
        scalar_pred: bool,
        when: bool,
    ) -> Result<()> {
        if scalar_pred {
            if pred.first() == Some(&when) {
                *self = other.clone();
            }
            return Ok(());
        }
        zip_data!(self, other, a, b => {
            super::par::for_chunks(a, 1, |start, chunk| {
                let (b, pred) = (&b[start..], &pred[start..]);
                // Every element written, kept or replaced, picked from a
                // pair by index: no branch per element, which a random
                // mask mispredicts (LLVM turns an `if` on the value back
                // into one).
                for ((o, &v), &p) in chunk.iter_mut().zip(b).zip(pred) {
                    *o = [*o, v][usize::from(p == when)];
                }
            })
        });
        Ok(())
    }

    /// `self[dst] = src[srci]`.
    pub fn set_from(&mut self, dst: usize, src: &Data, srci: usize) -> Result<()> {
        zip_data!(self, src, a, b => a[dst] = b[srci]);
        Ok(())
    }

    /// Concatenation of several data of the same class.
    pub fn concat(parts: &[&Data]) -> Result<Data> {
        let first = parts.first().ok_or_else(|| err("nothing to concatenate"))?;
        let mut out = (*first).clone();
        for p in &parts[1..] {
            zip_data!(&mut out, *p, a, b => a.extend_from_slice(b));
        }
        Ok(out)
    }
}

/// How elements of a type are stored.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Storage {
    Pred,
    S,
    U,
    F16,
    Bf16,
    F32,
    F64,
    Mini(MiniFloat),
    C64,
    C128,
}

pub fn storage(ty: PrimitiveType) -> Result<Storage> {
    use PrimitiveType as T;
    Ok(match ty {
        T::Pred => Storage::Pred,
        T::F16 => Storage::F16,
        T::Bf16 => Storage::Bf16,
        T::F32 => Storage::F32,
        T::F64 => Storage::F64,
        T::C64 => Storage::C64,
        T::C128 => Storage::C128,
        t if t.is_signed_int() => Storage::S,
        t if t.is_unsigned_int() => Storage::U,
        t => match t.minifloat() {
            Some(m) => Storage::Mini(m),
            None => {
                return Err(super::unsupported(format!(
                    "element type {t} is not supported"
                )))
            }
        },
    })
}

/// Wraps a signed value to `bits` bits (sign-extending).
#[inline]
pub fn wrap_s(v: i64, bits: u32) -> i64 {
    if bits >= 64 {
        v
    } else {
        let s = 64 - bits;
        (v << s) >> s
    }
}

/// Wraps an unsigned value to `bits` bits.
#[inline]
pub fn wrap_u(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

/// A dense array of one element type.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    pub ty: PrimitiveType,
    pub dims: Vec<usize>,
    pub data: Data,
}

impl Array {
    pub fn new(ty: PrimitiveType, dims: Vec<usize>, data: Data) -> Result<Array> {
        let n = element_count(&dims)?;
        if n != data.len() {
            return Err(err(format!(
                "internal error: {} elements for {}[{}]",
                data.len(),
                ty,
                dims_text(&dims)
            )));
        }
        Ok(Array { ty, dims, data })
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    pub fn scalar_f64(ty: PrimitiveType, v: f64) -> Result<Array> {
        Array::new(ty, vec![], super::convert::from_f64_vec(ty, &[v])?)
    }

    pub fn shape_text(&self) -> String {
        format!("{}[{}]", self.ty, dims_text(&self.dims))
    }

    /// Every element as an f64 (exact for all but 64-bit integers beyond 2^53).
    pub fn to_f64_vec(&self) -> Vec<f64> {
        super::convert::to_f64_vec(&self.data, self.ty)
    }

    /// Element `i` as an i64 (integers, pred; floats truncate). Used for
    /// indices.
    pub fn index_at(&self, i: usize) -> Result<i64> {
        let outside = || {
            err(format!(
                "index {i} is outside an array of {} elements",
                self.len()
            ))
        };
        Ok(match &self.data {
            Data::S(v) => *v.get(i).ok_or_else(outside)?,
            Data::U(v) => i64::try_from(*v.get(i).ok_or_else(outside)?).unwrap_or(i64::MAX),
            Data::Pred(v) => i64::from(*v.get(i).ok_or_else(outside)?),
            _ => {
                return Err(err(format!(
                    "index operand of type {} is not an integer",
                    self.ty
                )))
            }
        })
    }
}

pub fn dims_text(dims: &[usize]) -> String {
    dims.iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The most elements one array may have (2^27: 512 MiB of f32), so that
/// a huge module is an error rather than an out-of-memory abort.
pub const MAX_ELEMENTS: usize = 1 << 27;

/// The element count of the largest array in `shape` (tuples searched).
pub fn largest_array(shape: &crate::ir::Shape) -> i64 {
    match shape {
        crate::ir::Shape::Array(a) => a.element_count(),
        crate::ir::Shape::Tuple(t) => t.iter().map(largest_array).max().unwrap_or(0),
        _ => 0,
    }
}

pub fn element_count(dims: &[usize]) -> Result<usize> {
    dims.iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .filter(|&n| n <= MAX_ELEMENTS)
        .ok_or_else(|| {
            super::limit(format!(
                "an array of [{}] exceeds the interpreter's limit of {MAX_ELEMENTS} elements",
                dims_text(dims)
            ))
        })
}

/// Row-major strides of `dims`.
pub fn strides(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * dims[i + 1];
    }
    s
}

/// For every index of `out_dims` in row-major order, `base + sum(idx[k] *
/// step[k])`: covers transpose, broadcast (step 0), slice and reverse.
pub fn strided_map(out_dims: &[usize], step: &[isize], base: isize) -> Vec<usize> {
    let n: usize = out_dims.iter().product();
    let mut out = Vec::with_capacity(n);
    if n == 0 {
        return out;
    }
    let rank = out_dims.len();
    if rank == 0 {
        out.push(base as usize);
        return out;
    }
    let inner = out_dims[rank - 1];
    let inner_step = step[rank - 1];
    let mut idx = vec![0usize; rank];
    let mut cur = base;
    loop {
        let mut p = cur;
        for _ in 0..inner {
            out.push(p as usize);
            p += inner_step;
        }
        if !next_row(&mut idx, &mut cur, step, out_dims) {
            return out;
        }
    }
}

/// Steps `idx` and its offset `cur` to the next row of a strided walk:
/// the outer dimensions (all but the last) counted as an odometer. False
/// once every row was visited.
fn next_row(idx: &mut [usize], cur: &mut isize, step: &[isize], dims: &[usize]) -> bool {
    for d in (0..dims.len() - 1).rev() {
        idx[d] += 1;
        *cur += step[d];
        if idx[d] < dims[d] {
            return true;
        }
        *cur -= step[d] * dims[d] as isize;
        idx[d] = 0;
    }
    false
}

/// The elements [`strided_map`] would index, gathered directly (no index
/// array), rows on all cores when large: transpose, broadcast, slice and
/// reverse.
pub fn strided_take<T: Copy + Send + Sync>(
    src: &[T],
    out_dims: &[usize],
    step: &[isize],
    base: isize,
) -> Vec<T> {
    let n: usize = out_dims.iter().product();
    if n == 0 {
        return Vec::new();
    }
    let rank = out_dims.len();
    if rank == 0 {
        return vec![src[base as usize]];
    }
    let inner = out_dims[rank - 1];
    let inner_step = step[rank - 1];
    let worth = n >= super::par::MIN_PARALLEL;
    super::par::collect_chunks(n, inner, worth, |start, out| {
        // The outer index of this chunk's first row.
        let mut idx = vec![0usize; rank];
        let mut row = start / inner;
        let mut cur = base;
        for d in (0..rank - 1).rev() {
            idx[d] = row % out_dims[d];
            row /= out_dims[d];
            cur += idx[d] as isize * step[d];
        }
        if step.iter().all(|&s| s == 0) {
            // One element everywhere (a scalar's broadcast).
            out.fill(src[base as usize], out.room());
            return;
        }
        for _ in 0..out.room() / inner {
            match inner_step {
                0 => out.fill(src[cur as usize], inner),
                1 => out.extend_from_slice(&src[cur as usize..cur as usize + inner]),
                _ => out.extend((0..inner as isize).map(|j| src[(cur + j * inner_step) as usize])),
            }
            next_row(&mut idx, &mut cur, step, out_dims);
        }
    })
}

impl Data {
    /// The elements at the indices [`strided_map`] gives, in that order.
    pub fn strided(&self, out_dims: &[usize], step: &[isize], base: isize) -> Data {
        map_data!(self, v => strided_take(v, out_dims, step, base))
    }
}

/// A value: an array, a tuple of values, or a token.
#[derive(Clone, Debug)]
pub enum Value {
    Array(Arc<Array>),
    Tuple(Arc<[Value]>),
    Token,
}

impl Value {
    pub fn array(a: Array) -> Value {
        Value::Array(Arc::new(a))
    }

    pub fn as_array(&self) -> Result<&Arc<Array>> {
        match self {
            Value::Array(a) => Ok(a),
            Value::Tuple(_) => Err(err("expected an array, got a tuple")),
            Value::Token => Err(err("expected an array, got a token")),
        }
    }

    pub fn tuple_elements(&self) -> Result<&[Value]> {
        match self {
            Value::Tuple(t) => Ok(t),
            _ => Err(err("expected a tuple")),
        }
    }

    pub fn shape_text(&self) -> String {
        match self {
            Value::Array(a) => a.shape_text(),
            Value::Tuple(t) => format!(
                "({})",
                t.iter()
                    .map(Value::shape_text)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Value::Token => "token[]".into(),
        }
    }

    /// Whether this value has the element types and dimensions of `shape`
    /// (layouts aside).
    pub fn matches(&self, shape: &Shape) -> bool {
        match (self, shape) {
            (Value::Array(a), Shape::Array(s)) => {
                a.ty == s.element_type
                    && a.dims.len() == s.dims.len()
                    && a.dims.iter().zip(&s.dims).all(|(&x, &y)| x as i64 == y)
            }
            (Value::Tuple(t), Shape::Tuple(s)) => {
                t.len() == s.len() && t.iter().zip(s).all(|(v, s)| v.matches(s))
            }
            (Value::Token, Shape::Token) => true,
            _ => false,
        }
    }

    /// The flat list of arrays (tuple leaves in order).
    pub fn leaves(&self) -> Vec<Arc<Array>> {
        let mut out = Vec::new();
        fn walk(v: &Value, out: &mut Vec<Arc<Array>>) {
            match v {
                Value::Array(a) => out.push(a.clone()),
                Value::Tuple(t) => t.iter().for_each(|e| walk(e, out)),
                Value::Token => {}
            }
        }
        walk(self, &mut out);
        out
    }

    /// Converts a literal (a constant, or an input) to a value.
    pub fn from_literal(lit: &Literal) -> Result<Value> {
        match (&lit.shape, &lit.data) {
            (_, LiteralData::Elided) => Err(super::unsupported(
                "the constant was printed elided ({...}); its value is unknown",
            )),
            (Shape::Tuple(_), LiteralData::Tuple(elems)) => Ok(Value::Tuple(
                elems
                    .iter()
                    .map(Value::from_literal)
                    .collect::<Result<Vec<_>>>()?
                    .into(),
            )),
            (Shape::Token, _) => Ok(Value::Token),
            (Shape::Array(s), data) => {
                let ty = s.element_type;
                let dims = shape_dims(&lit.shape)?;
                let d = match (storage(ty)?, data) {
                    (Storage::Pred, LiteralData::Pred(v)) => Data::Pred(v.clone()),
                    (Storage::S, LiteralData::Int(v)) => {
                        let b = ty.bit_width();
                        Data::S(v.iter().map(|&x| wrap_s(x, b)).collect())
                    }
                    (Storage::U, LiteralData::UInt(v)) => {
                        let b = ty.bit_width();
                        Data::U(v.iter().map(|&x| wrap_u(x, b)).collect())
                    }
                    (Storage::F16, LiteralData::F16(v)) => Data::F16(v.clone()),
                    (Storage::Bf16, LiteralData::Bf16(v)) => Data::Bf16(v.clone()),
                    (Storage::F32, LiteralData::F32(v)) => Data::F32(v.clone()),
                    (Storage::F64, LiteralData::F64(v)) => Data::F64(v.clone()),
                    (Storage::Mini(_), LiteralData::MiniFloat(v)) => Data::Mini(v.clone()),
                    (Storage::C64, LiteralData::C64(v)) => {
                        Data::C64(v.iter().map(|&(re, im)| Complex32::new(re, im)).collect())
                    }
                    (Storage::C128, LiteralData::C128(v)) => {
                        Data::C128(v.iter().map(|&(re, im)| Complex64::new(re, im)).collect())
                    }
                    _ => return Err(err(format!("literal data does not match its type {ty}"))),
                };
                let n = element_count(&dims)?;
                if d.len() != n {
                    // XLA prints a splat constant as a single value for
                    // some shapes only; anything else is malformed.
                    if d.len() == 1 {
                        return Ok(Value::array(Array::new(ty, dims, d.repeat_elem(0, n))?));
                    }
                    return Err(err(format!(
                        "literal has {} elements, its shape {} needs {n}",
                        d.len(),
                        lit.shape
                    )));
                }
                Ok(Value::array(Array::new(ty, dims, d)?))
            }
            _ => Err(err(format!("cannot use a literal of shape {}", lit.shape))),
        }
    }

    /// Converts back to a literal with default layouts.
    pub fn to_literal(&self) -> Literal {
        match self {
            Value::Array(a) => a.to_literal(),
            Value::Tuple(t) => {
                let elems: Vec<Literal> = t.iter().map(Value::to_literal).collect();
                Literal {
                    shape: Shape::Tuple(elems.iter().map(|l| l.shape.clone()).collect()),
                    data: LiteralData::Tuple(elems),
                }
            }
            Value::Token => Literal {
                shape: Shape::Token,
                data: LiteralData::Empty,
            },
        }
    }
}

impl Array {
    pub fn to_literal(&self) -> Literal {
        let data = match &self.data {
            Data::Pred(v) => LiteralData::Pred(v.clone()),
            Data::S(v) => LiteralData::Int(v.clone()),
            Data::U(v) => LiteralData::UInt(v.clone()),
            Data::F16(v) => LiteralData::F16(v.clone()),
            Data::Bf16(v) => LiteralData::Bf16(v.clone()),
            Data::F32(v) => LiteralData::F32(v.clone()),
            Data::F64(v) => LiteralData::F64(v.clone()),
            Data::Mini(v) => LiteralData::MiniFloat(v.clone()),
            Data::C64(v) => LiteralData::C64(v.iter().map(|c| (c.re, c.im)).collect()),
            Data::C128(v) => LiteralData::C128(v.iter().map(|c| (c.re, c.im)).collect()),
        };
        Literal {
            shape: Shape::array(self.ty, self.dims.iter().map(|&d| d as i64).collect()),
            data,
        }
    }
}

/// The static dimensions of an array shape.
pub fn shape_dims(shape: &Shape) -> Result<Vec<usize>> {
    let a = shape
        .as_array()
        .ok_or_else(|| err(format!("expected an array shape, got {shape}")))?;
    if a.dynamic.iter().any(|&d| d) {
        return Err(super::unsupported(format!(
            "dynamic shape {shape} is not supported"
        )));
    }
    a.dims
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| err(format!("bad dimension in {shape}"))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gathered directly (on all cores: the outputs are past
    /// `par::MIN_PARALLEL`), a transpose, a broadcast and a reversed
    /// slice take the elements the index map names.
    #[test]
    fn strided_take_is_the_index_map() {
        let src: Vec<u32> = (0..192 * 1024).collect();
        let cases: [(&[usize], &[isize], isize); 3] = [
            (&[1024, 192], &[1, 1024], 0),           // transpose of [192, 1024]
            (&[4, 192, 1024], &[0, 1024, 1], 0),     // broadcast
            (&[96, 2000], &[2048, -1], 1023 + 1024), // reversed slice
        ];
        for (dims, step, base) in cases {
            let want: Vec<u32> = strided_map(dims, step, base)
                .iter()
                .map(|&i| src[i])
                .collect();
            assert_eq!(strided_take(&src, dims, step, base), want, "{dims:?}");
        }
    }
}
