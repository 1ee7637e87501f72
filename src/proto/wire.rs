//! The reader's wire-level decoding: keys, varints, length-delimited
//! values and field walks over encoded messages, with the errors
//! [`ProtoError`] reports.

use super::err;
use super::messages::field_value_len;
use super::ProtoError;
use prost::encoding::{DecodeContext, WireType};
use prost::Message;
use smallvec::SmallVec;

/// prost's `decode_varint`, with the one- and two-byte cases inline (keys,
/// lengths and most values).
#[inline(always)]
pub(super) fn decode_varint(buf: &mut &[u8]) -> Result<u64, prost::DecodeError> {
    match **buf {
        [b0, ..] if b0 < 0x80 => {
            *buf = &buf[1..];
            Ok(u64::from(b0))
        }
        [b0, b1, ..] if b1 < 0x80 => {
            *buf = &buf[2..];
            Ok(u64::from(b0 & 0x7f) | u64::from(b1) << 7)
        }
        _ => prost::encoding::decode_varint(buf),
    }
}

/// prost's `decode_key` on the fast [`decode_varint`] (prost's own for the
/// errors).
#[inline(always)]
pub(super) fn decode_key(buf: &mut &[u8]) -> Result<(u32, WireType), prost::DecodeError> {
    let orig = *buf;
    let v = decode_varint(buf)?;
    let wt = match v & 7 {
        0 => WireType::Varint,
        1 => WireType::SixtyFourBit,
        2 => WireType::LengthDelimited,
        3 => WireType::StartGroup,
        4 => WireType::EndGroup,
        5 => WireType::ThirtyTwoBit,
        _ => {
            *buf = orig;
            return prost::encoding::decode_key(buf);
        }
    };
    if v >> 3 == 0 || v > u64::from(u32::MAX) {
        *buf = orig;
        return prost::encoding::decode_key(buf);
    }
    Ok(((v >> 3) as u32, wt))
}

/// Splits off a length-delimited value.
pub(super) fn take_delimited<'a>(buf: &mut &'a [u8], what: &str) -> Result<&'a [u8], ProtoError> {
    let len = decode_varint(buf).map_err(|e| ProtoError::decode(what, e))?;
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    if len > buf.len() {
        return err(format!(
            "{what}: truncated (a field runs past the end of its message)"
        ));
    }
    let (head, tail) = buf.split_at(len);
    *buf = tail;
    Ok(head)
}

/// Calls `f` for each field of a message; `f` must consume the value.
pub(super) fn fields<'a>(
    mut buf: &'a [u8],
    what: &str,
    mut f: impl FnMut(u32, WireType, &mut &'a [u8]) -> Result<(), ProtoError>,
) -> Result<(), ProtoError> {
    while !buf.is_empty() {
        let field = buf;
        let (tag, wt) =
            decode_key(&mut buf).map_err(|e| ProtoError::decode(what, e).within(field))?;
        f(tag, wt, &mut buf).map_err(|e| e.within(field))?;
    }
    Ok(())
}

pub(super) fn merge_into<M: Message>(
    msg: &mut M,
    tag: u32,
    wt: WireType,
    buf: &mut &[u8],
    what: &str,
) -> Result<(), ProtoError> {
    msg.merge_field(tag, wt, buf, DecodeContext::default())
        .map_err(|e| ProtoError::decode(what, e))
}

/// Skips one field's value (a field pass 1 or pass 2 does not read).
#[inline]
pub(super) fn skip_field(tag: u32, wt: WireType, buf: &mut &[u8]) -> Result<(), ProtoError> {
    // The common cases inline; groups and errors below.
    match wt {
        WireType::Varint => {
            if let Some(n) = buf.iter().take(10).position(|b| b & 0x80 == 0) {
                *buf = &buf[n + 1..];
                return Ok(());
            }
        }
        WireType::LengthDelimited => {
            let mut b = *buf;
            if let Ok(len) = decode_varint(&mut b) {
                if let Some(rest) = usize::try_from(len).ok().and_then(|l| b.get(l..)) {
                    *buf = rest;
                    return Ok(());
                }
            }
        }
        _ => {}
    }
    skip_field_slow(tag, wt, buf)
}

pub(super) fn skip_field_slow(tag: u32, wt: WireType, buf: &mut &[u8]) -> Result<(), ProtoError> {
    let len = field_value_len(buf, wt, tag, 0)
        .map_err(|e| ProtoError::decode(&format!("field {tag}"), e))?;
    if len > buf.len() {
        return err(format!(
            "field {tag}: truncated (it runs past the end of its message)"
        ));
    }
    *buf = &buf[len..];
    Ok(())
}

pub(super) fn wrong_wire_type<T>(what: &str, tag: u32, wt: WireType) -> Result<T, ProtoError> {
    err(format!(
        "malformed {what}: invalid wire type {wt:?} for field {tag}"
    ))
}

pub(super) fn varint(buf: &mut &[u8], what: &str) -> Result<u64, ProtoError> {
    decode_varint(buf).map_err(|e| ProtoError::decode(what, e))
}

/// Appends a repeated int64 field's value(s), packed or not.
pub(super) fn repeated_i64<A: smallvec::Array<Item = i64>>(
    out: &mut SmallVec<A>,
    tag: u32,
    wt: WireType,
    buf: &mut &[u8],
) -> Result<(), ProtoError> {
    const WHAT: &str = "HloInstructionProto";
    match wt {
        WireType::Varint => out.push(varint(buf, WHAT)? as i64),
        WireType::LengthDelimited => {
            let mut b = take_delimited(buf, WHAT)?;
            while !b.is_empty() {
                out.push(varint(&mut b, WHAT)? as i64);
            }
        }
        _ => return wrong_wire_type(WHAT, tag, wt),
    }
    Ok(())
}

/// A length-delimited value's encoding (length, then bytes).
pub(super) fn encode_len(b: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(b.len() + 10);
    prost::encoding::encode_varint(b.len() as u64, &mut v);
    v.extend_from_slice(b);
    v
}
