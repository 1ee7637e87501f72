//! Literals: a constant's value for its shape (`{ {1, 2}, {3, 4} }`,
//! tuples, `{...}`), a custom call's shaped `literal=`, and their
//! elements: integers, floats of every width with NaN payloads, complex
//! numbers, each checked against the range of its type.

use super::{PResult, Parser};
use crate::ir::literal::{Literal, LiteralData};
use crate::ir::shape::Shape;
use crate::ir::PrimitiveType;
use half::{bf16, f16};

impl<'a> Parser<'a> {
    /// A custom call's `literal=`: a shape and its value (`s32[2]{0} {1, 2}`),
    /// or a tuple of them `( a, b )`.
    pub(super) fn shaped_literal(&mut self) -> PResult<Literal> {
        self.enter()?;
        let r = self.shaped_literal_inner();
        self.leave();
        r
    }

    fn shaped_literal_inner(&mut self) -> PResult<Literal> {
        if !self.eat(b'(')? {
            let shape = self.shape()?;
            return self.literal(&shape);
        }
        let items = self.items_until(
            b')',
            "between the elements of a tuple literal",
            Self::shaped_literal,
        )?;
        Ok(Literal {
            shape: Shape::Tuple(items.iter().map(|l| l.shape.clone()).collect()),
            data: LiteralData::Tuple(items),
        })
    }

    pub(super) fn literal(&mut self, shape: &Shape) -> PResult<Literal> {
        self.enter()?;
        let r = self.literal_inner(shape);
        self.leave();
        r
    }

    fn literal_inner(&mut self, shape: &Shape) -> PResult<Literal> {
        self.skip_ws()?;
        if self.text[self.pos..].starts_with("{...}") {
            self.pos += 5;
            return Ok(Literal {
                shape: shape.clone(),
                data: LiteralData::Elided,
            });
        }
        match shape {
            Shape::Tuple(elems) => {
                self.expect(b'(', "to start a tuple literal")?;
                let mut items = Vec::with_capacity(elems.len());
                for (i, e) in elems.iter().enumerate() {
                    if i > 0 {
                        self.expect(b',', "between tuple literal elements")?;
                    }
                    items.push(self.literal(e)?);
                }
                self.expect(b')', "to end a tuple literal")?;
                Ok(Literal {
                    shape: shape.clone(),
                    data: LiteralData::Tuple(items),
                })
            }
            Shape::Token | Shape::Opaque => Ok(Literal {
                shape: shape.clone(),
                data: LiteralData::Empty,
            }),
            Shape::Array(a) => {
                let mut builder = ElementBuilder::new(a.element_type, capacity_hint(&a.dims));
                if a.rank() == 0 {
                    self.element(&mut builder)?;
                } else {
                    self.dense(&a.dims, &mut Vec::new(), &mut builder)?;
                }
                Ok(Literal {
                    shape: shape.clone(),
                    data: builder.finish(),
                })
            }
        }
    }

    /// `{ {1, 2}, {3, 4} }` for `dims[path.len()..]`; `path` holds the
    /// indices of the enclosing arrays (for messages, as XLA writes them).
    fn dense(
        &mut self,
        dims: &[i64],
        path: &mut Vec<i64>,
        out: &mut ElementBuilder,
    ) -> PResult<()> {
        self.enter()?;
        let r = self.dense_inner(dims, path, out);
        self.leave();
        r
    }

    fn dense_inner(
        &mut self,
        dims: &[i64],
        path: &mut Vec<i64>,
        out: &mut ElementBuilder,
    ) -> PResult<()> {
        let rank = dims.len();
        let level = path.len();
        let index = |path: &[i64]| {
            let parts: Vec<String> = path.iter().map(i64::to_string).collect();
            format!("[{}]", parts.join(","))
        };
        if self.peek()? != Some(b'{') {
            if self.peek()? == Some(b'}') && level == 0 {
                return self.err("unexpected '}' token");
            }
            if level == 0 {
                let found = self.describe_here();
                return self.err(format!(
                    "expects '{{' to start a literal of rank {rank}, but sees {found}"
                ));
            }
            let found = if self.peek()? == Some(b'}') {
                "fewer"
            } else {
                "an element"
            };
            return self.err(format!(
                "expects nested array in rank {rank}, but sees {found}"
            ));
        }
        self.pos += 1;
        let want = dims[level];
        let mut count = 0i64;
        if self.eat(b'}')? {
            if want != 0 {
                return self.err(format!(
                    "expects {want} elements in the {}th element, but sees 0",
                    index(path)
                ));
            }
            return Ok(());
        }
        loop {
            if count == want {
                return self.err(if level + 1 == rank {
                    format!("expects {want} elements on the minor-most dimension, but sees more")
                } else {
                    format!(
                        "expects {want} elements in the {}th element, but sees more",
                        index(path)
                    )
                });
            }
            if level + 1 == rank {
                if self.peek()? == Some(b'{') {
                    return self.err(format!(
                        "expects nested array in rank {rank}, but sees larger"
                    ));
                }
                self.element(out)?;
            } else {
                if self.peek()? != Some(b'{') {
                    return self.err(format!(
                        "expects nested array in rank {rank}, but sees {}",
                        level + 1
                    ));
                }
                path.push(count);
                self.dense(dims, path, out)?;
                path.pop();
            }
            count += 1;
            if self.eat(b'}')? {
                break;
            }
            if !self.eat(b',')? {
                let found = self.describe_here();
                return self.err(format!(
                    "expects ',' or '}}' in a literal, but sees {found}"
                ));
            }
        }
        if count != want {
            return self.err(format!(
                "expects {want} elements in the {}th element, but sees {count}",
                index(path)
            ));
        }
        Ok(())
    }

    fn element(&mut self, out: &mut ElementBuilder) -> PResult<()> {
        self.skip_ws()?;
        let start = self.pos;
        if out.ty.is_complex() {
            self.expect(b'(', "to start a complex number")?;
            let re = self.number_token()?;
            self.expect(b',', "in a complex number")?;
            let im = self.number_token()?;
            self.expect(b')', "to end a complex number")?;
            let (re, im) = match (parse_float(re), parse_float(im)) {
                (Some(r), Some(i)) => (r, i),
                _ => return self.err_at(start, "expects a complex number"),
            };
            return out.push_complex(re, im).or_else(|m| self.err_at(start, m));
        }
        let tok = self.number_token()?;
        out.push(tok).or_else(|m| self.err_at(start, m))
    }

    /// The text of a number-like token: `-1.5e-07`, `true`, `inf`, `-nan(0x1)`.
    fn number_token(&mut self) -> PResult<&'a str> {
        self.skip_ws()?;
        let start = self.pos;
        let mut i = start;
        while i < self.b.len() {
            let c = self.b[i];
            if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'+' | b'.') {
                i += 1;
            } else if c == b'(' && self.text[start..i].ends_with("nan") {
                match self.text[i..].find(')') {
                    Some(j) => i += j + 1,
                    None => break,
                }
            } else {
                break;
            }
        }
        if i == start {
            let found = self.describe_here();
            return self.err(format!("expects a literal element, but sees {found}"));
        }
        self.pos = i;
        Ok(&self.text[start..i])
    }
}

/// Elements of an array of these dimensions, for preallocation (which
/// `ElementBuilder` caps): saturating, since the text may be hostile.
fn capacity_hint(dims: &[i64]) -> usize {
    dims.iter().fold(1usize, |n, &d| {
        n.saturating_mul(usize::try_from(d).unwrap_or(0))
    })
}

fn parse_float(tok: &str) -> Option<f64> {
    match tok {
        "inf" => Some(f64::INFINITY),
        "-inf" => Some(f64::NEG_INFINITY),
        "nan" => Some(f64::NAN),
        "-nan" => Some(-f64::NAN),
        _ => {
            let b = tok.as_bytes();
            let ok = b
                .iter()
                .all(|&c| c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E'));
            if ok {
                tok.parse::<f64>().ok()
            } else {
                None
            }
        }
    }
}

/// Collects literal elements of one type.
struct ElementBuilder {
    ty: PrimitiveType,
    data: LiteralData,
}

impl ElementBuilder {
    fn new(ty: PrimitiveType, cap: usize) -> ElementBuilder {
        let cap = cap.min(1 << 20);
        let data = match ty {
            PrimitiveType::Pred => LiteralData::Pred(Vec::with_capacity(cap)),
            t if t.is_signed_int() => LiteralData::Int(Vec::with_capacity(cap)),
            t if t.is_unsigned_int() => LiteralData::UInt(Vec::with_capacity(cap)),
            PrimitiveType::F16 => LiteralData::F16(Vec::with_capacity(cap)),
            PrimitiveType::Bf16 => LiteralData::Bf16(Vec::with_capacity(cap)),
            PrimitiveType::F32 => LiteralData::F32(Vec::with_capacity(cap)),
            PrimitiveType::F64 => LiteralData::F64(Vec::with_capacity(cap)),
            PrimitiveType::C64 => LiteralData::C64(Vec::with_capacity(cap)),
            PrimitiveType::C128 => LiteralData::C128(Vec::with_capacity(cap)),
            t if t.minifloat().is_some() => LiteralData::MiniFloat(Vec::with_capacity(cap)),
            _ => LiteralData::Empty,
        };
        ElementBuilder { ty, data }
    }

    fn finish(self) -> LiteralData {
        self.data
    }

    fn push(&mut self, tok: &str) -> Result<(), String> {
        let ty = self.ty;
        match &mut self.data {
            LiteralData::Pred(v) => v.push(pred_element(tok)?),
            LiteralData::Int(v) => v.push(int_element(ty, tok)?),
            LiteralData::UInt(v) => v.push(uint_element(ty, tok)?),
            LiteralData::F16(v) => v.push(float_element(&F16_LAYOUT, ty, tok)?),
            LiteralData::Bf16(v) => v.push(float_element(&BF16_LAYOUT, ty, tok)?),
            LiteralData::F32(v) => v.push(float_element(&F32_LAYOUT, ty, tok)?),
            LiteralData::F64(v) => v.push(float_element(&F64_LAYOUT, ty, tok)?),
            LiteralData::MiniFloat(v) => v.push(minifloat_element(ty, tok)?),
            LiteralData::C64(_) | LiteralData::C128(_) => {
                return Err("expects a complex number".into())
            }
            LiteralData::Tuple(_) | LiteralData::Elided | LiteralData::Empty => {
                return Err(format!("a literal of type {} has no elements", ty.name()))
            }
        }
        Ok(())
    }

    fn push_complex(&mut self, re: f64, im: f64) -> Result<(), String> {
        match &mut self.data {
            LiteralData::C64(v) => {
                let lim = f64::from(f32::MAX);
                if (re.is_finite() && re.abs() > lim) || (im.is_finite() && im.abs() > lim) {
                    return Err("value is out of range for literal's primitive type C64".into());
                }
                v.push((re as f32, im as f32));
            }
            LiteralData::C128(v) => v.push((re, im)),
            _ => return Err("unexpected complex number".into()),
        }
        Ok(())
    }
}

fn parse_int(tok: &str) -> Option<i64> {
    match tok {
        "true" => Some(1),
        "false" => Some(0),
        _ => tok.parse::<i64>().ok(),
    }
}

fn range_error(ty: PrimitiveType, tok: &str) -> String {
    format!(
        "value {tok} is out of range for literal's primitive type {}",
        ty.name().to_uppercase()
    )
}

fn pred_element(tok: &str) -> Result<bool, String> {
    match tok {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(format!("expects a pred value, but sees {tok}")),
    }
}

/// An element of a signed integer type `ty`.
fn int_element(ty: PrimitiveType, tok: &str) -> Result<i64, String> {
    let x: i64 = parse_int(tok).ok_or_else(|| format!("expects an integer, but sees {tok}"))?;
    let bits = ty.bit_width();
    let (lo, hi) = if bits >= 64 {
        (i64::MIN, i64::MAX)
    } else {
        (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
    };
    if x < lo || x > hi {
        return Err(range_error(ty, tok));
    }
    Ok(x)
}

/// An element of an unsigned integer type `ty`.
fn uint_element(ty: PrimitiveType, tok: &str) -> Result<u64, String> {
    let x: u64 = if let Some(stripped) = tok.strip_prefix('-') {
        // `-0` is 0; other negative integers are out of range;
        // anything else (`-inf`, `-1.5`) is no integer at all.
        if stripped.is_empty() || !stripped.bytes().all(|c| c.is_ascii_digit()) {
            return Err(format!("expects an unsigned integer, but sees {tok}"));
        }
        if stripped.bytes().any(|c| c != b'0') {
            return Err(range_error(ty, tok));
        }
        0
    } else {
        tok.parse::<u64>()
            .map_err(|_| format!("expects an unsigned integer, but sees {tok}"))?
    };
    let bits = ty.bit_width();
    if bits < 64 && x >= (1u64 << bits) {
        return Err(range_error(ty, tok));
    }
    Ok(x)
}

/// What reading an element of a float type of IEEE layout needs to know
/// of the type.
struct FloatLayout<T> {
    /// The NaN payloads its mantissa holds.
    payload_mask: u64,
    /// The bits of its negative and its positive infinity.
    infinities: (u64, u64),
    from_f64: fn(f64) -> T,
    from_bits: fn(u64) -> T,
    is_infinite: fn(T) -> bool,
}

const F16_LAYOUT: FloatLayout<f16> = FloatLayout {
    payload_mask: 0x3ff,
    infinities: (0xfc00, 0x7c00),
    from_f64: f16::from_f64,
    from_bits: |b| f16::from_bits(b as u16),
    is_infinite: f16::is_infinite,
};

const BF16_LAYOUT: FloatLayout<bf16> = FloatLayout {
    payload_mask: 0x7f,
    infinities: (0xff80, 0x7f80),
    from_f64: bf16::from_f64,
    from_bits: |b| bf16::from_bits(b as u16),
    is_infinite: bf16::is_infinite,
};

const F32_LAYOUT: FloatLayout<f32> = FloatLayout {
    payload_mask: 0x7f_ffff,
    infinities: (0xff80_0000, 0x7f80_0000),
    from_f64: |x| x as f32,
    from_bits: |b| f32::from_bits(b as u32),
    is_infinite: f32::is_infinite,
};

const F64_LAYOUT: FloatLayout<f64> = FloatLayout {
    payload_mask: (1 << 52) - 1,
    infinities: (0xfff0 << 48, 0x7ff0 << 48),
    from_f64: |x| x,
    from_bits: f64::from_bits,
    is_infinite: f64::is_infinite,
};

/// An element of the float type `ty`, laid out as `t`: a number (refused
/// if finite but past the type's range), or a NaN with the payload written.
fn float_element<T: Copy>(t: &FloatLayout<T>, ty: PrimitiveType, tok: &str) -> Result<T, String> {
    let x = float_token(tok, t.payload_mask)?;
    let value = (t.from_f64)(x.value);
    if x.value.is_finite() && (t.is_infinite)(value) {
        return Err(range_error(ty, tok));
    }
    Ok(match x.nan_bits(t.infinities) {
        Some(b) => (t.from_bits)(b),
        None => value,
    })
}

/// An element of an 8-bit float type `ty`, as its bits.
fn minifloat_element(ty: PrimitiveType, tok: &str) -> Result<u8, String> {
    let m = ty
        .minifloat()
        .expect("minifloat data only for minifloat types");
    let payload_mask = if m.nan == crate::ir::types::NanEncoding::Ieee {
        (1u64 << m.mantissa_bits) - 1
    } else {
        0
    };
    let x = float_token(tok, payload_mask)?;
    if x.value.is_finite() && !m.to_f64(m.from_f64(x.value)).is_finite() {
        return Err(range_error(ty, tok));
    }
    Ok(match x.payload {
        Some(p) => {
            let exp = (((1u32 << m.exponent_bits) - 1) << m.mantissa_bits) as u8;
            let sign = if x.value.is_sign_negative() {
                1u8 << (m.exponent_bits + m.mantissa_bits)
            } else {
                0
            };
            sign | exp | p as u8
        }
        None => m.from_f64(x.value),
    })
}

/// A float token as read: its value, and the NaN payload written, if any.
struct FloatToken {
    value: f64,
    payload: Option<u64>,
}

impl FloatToken {
    /// The bits of the NaN written with a payload: the payload in the
    /// mantissa of the type's infinity of its sign (the bits of the
    /// negative and the positive one).
    fn nan_bits(&self, (neg_inf, pos_inf): (u64, u64)) -> Option<u64> {
        let inf = if self.value.is_sign_negative() {
            neg_inf
        } else {
            pos_inf
        };
        self.payload.map(|p| inf | p)
    }
}

/// A float token of a type whose NaN payloads fit `payload_mask`.
fn float_token(tok: &str, payload_mask: u64) -> Result<FloatToken, String> {
    if let Some(rest) = tok
        .strip_prefix("nan(0x")
        .or_else(|| tok.strip_prefix("-nan(0x"))
    {
        let hex = rest.trim_end_matches(')');
        let payload =
            u64::from_str_radix(hex, 16).map_err(|_| format!("invalid NaN payload in {tok}"))?;
        if payload == 0 || payload > payload_mask {
            return Err(format!(
                "tries to set NaN payload 0x{payload:x} that does not fit the type"
            ));
        }
        let value = if tok.starts_with('-') {
            -f64::NAN
        } else {
            f64::NAN
        };
        return Ok(FloatToken {
            value,
            payload: Some(payload),
        });
    }
    let value = match tok {
        "true" => 1.0,
        "false" => 0.0,
        _ => {
            let v = parse_float(tok).ok_or_else(|| format!("expects a number, but sees {tok}"))?;
            if v.is_infinite() && !matches!(tok, "inf" | "-inf") {
                return Err(format!("value {tok} is out of range"));
            }
            v
        }
    };
    Ok(FloatToken {
        value,
        payload: None,
    })
}
