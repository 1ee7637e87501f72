//! Binary `HloModuleProto` input and output, as XLA's tools read and
//! write it.
//!
//! - [`messages`]: the protobuf messages, with XLA's field numbers, written
//!   with `prost`; fields this crate does not model are kept as raw bytes
//!   and written back ([`messages::Ext`]);
//! - [`from_proto`]: proto -> IR, printing exactly what XLA prints for it;
//!   the module there, and by concern in `read_*`: where the bytes come
//!   from (`read_source`: memory or a file), splitting and pass 1
//!   (`read_scan`), computations, instructions, op families' attributes
//!   (`read_op_attrs`), metadata, stack frames, header, async sugar, XLA's
//!   orders, shapes, literals; wire-level decoding in `wire`;
//! - [`to_proto`]: IR -> proto, as XLA's `HloModule::ToProto` writes it;
//!   the module there, and by concern in `write_*`: sinks, ids and order,
//!   computations, instructions, attributes' fields (`write_attrs`),
//!   header, async sugar, shapes, literals; the common instruction's
//!   fields straight from the IR (`write_direct`).
//!
//! [`read_module`] also accepts the `HloProto` and `HloSnapshot` wrappers.

pub mod attrs;
pub mod from_proto;
pub mod messages;
mod read_async;
mod read_comp_ids;
mod read_computation;
mod read_frames;
mod read_header;
mod read_instruction;
mod read_literal;
mod read_metadata;
mod read_op_attrs;
mod read_order;
mod read_scan;
mod read_shape;
mod read_source;
pub mod to_proto;
mod wire;
mod write_async;
mod write_attrs;
mod write_computation;
mod write_direct;
mod write_header;
mod write_ids;
mod write_instruction;
mod write_literal;
mod write_shape;
mod write_sink;

pub use from_proto::{module_from_proto, ReadOptions};
pub use to_proto::{module_to_proto, module_to_proto_bytes};

use prost::encoding::{decode_key, decode_varint, WireType};
use std::fmt;

/// A proto that cannot be read (malformed wire data, or a module that does
/// not hold together), or a module that cannot be written as a proto.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtoError {
    /// What is wrong (with the names of the computation and instruction,
    /// where known).
    pub message: String,
    /// The message path of what could not be read, outermost first:
    /// `HloModuleProto.computations[3].instructions[17]` (empty if none).
    pub path: String,
    /// The byte offset in the input of the field that could not be read
    /// (or of the message it is in), once [`read_module`] knows the input.
    pub offset: Option<usize>,
    /// The address of that byte, while the input is only known as slices.
    at: Option<usize>,
}

impl ProtoError {
    pub fn new(message: impl Into<String>) -> ProtoError {
        ProtoError {
            message: message.into(),
            path: String::new(),
            offset: None,
            at: None,
        }
    }

    pub(crate) fn decode(what: &str, e: prost::DecodeError) -> ProtoError {
        ProtoError::new(format!("malformed {what}: {e}"))
    }

    /// Prefixes where the error was found.
    pub fn context(self, place: impl fmt::Display) -> ProtoError {
        ProtoError {
            message: format!("{place}: {}", self.message),
            ..self
        }
    }

    /// Records that the error is within `bytes` (a slice of the input),
    /// unless a narrower place is known already.
    pub(crate) fn within(mut self, bytes: &[u8]) -> ProtoError {
        if self.at.is_none() {
            self.at = Some(bytes.as_ptr() as usize);
        }
        self
    }

    /// Prefixes a step of the message path (`computations[3]`) and records
    /// that the error is within `bytes`, the encoded message of that step.
    pub(crate) fn in_path(self, step: &str, bytes: &[u8]) -> ProtoError {
        self.prefix_path(step).within(bytes)
    }

    /// Turns the recorded address into an offset in `input`.
    pub(crate) fn located_in(self, input: &[u8]) -> ProtoError {
        self.located_at(input, 0)
    }

    /// Turns the recorded address, if it is within `bytes`, into an offset
    /// in the input, `bytes` being at offset `base` of it.
    pub(crate) fn located_at(mut self, bytes: &[u8], base: usize) -> ProtoError {
        let start = bytes.as_ptr() as usize;
        if let Some(a) = self.at {
            if a >= start && a <= start + bytes.len() {
                self.offset = Some(base + a - start);
                self.at = None;
            }
        }
        self
    }

    /// Records that the error is at `offset` of the input, unless a
    /// narrower place is known already.
    pub(crate) fn at_offset(mut self, offset: usize) -> ProtoError {
        if self.at.is_none() && self.offset.is_none() {
            self.offset = Some(offset);
        }
        self
    }

    /// Moves a known offset by `base`: the input read was at `base` of a
    /// larger one (a module inside an `HloProto`).
    pub(crate) fn shifted(mut self, base: usize) -> ProtoError {
        self.offset = self.offset.map(|o| o + base);
        self
    }

    /// Prefixes a step of the message path.
    pub(crate) fn prefix_path(mut self, step: &str) -> ProtoError {
        self.path = if self.path.is_empty() {
            step.to_string()
        } else {
            format!("{step}.{}", self.path)
        };
        self
    }
}

impl fmt::Display for ProtoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.offset, self.path.is_empty()) {
            (Some(o), false) => write!(f, "at byte {o} ({}): ", self.path)?,
            (Some(o), true) => write!(f, "at byte {o}: ")?,
            (None, false) => write!(f, "in {}: ", self.path)?,
            (None, true) => {}
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ProtoError {}

fn err<T>(message: impl Into<String>) -> Result<T, ProtoError> {
    Err(ProtoError::new(message))
}

/// The attributes of an async op written as sugar (`custom-call-start(...),
/// custom_call_target="foo"`) that are its own; the others are the wrapped
/// op's, which a proto keeps in a computation of its own.
pub(crate) fn stays_on_async_start(key: &str) -> bool {
    matches!(
        key,
        "async_execution_thread"
            | "sharding"
            | "frontend_attributes"
            | "control-predecessors"
            | "statistics"
            | "result_accuracy"
            | "origin"
            | "metadata"
            | "backend_config"
    )
}

/// The top-level fields of a message: (tag, wire type, value bytes for
/// length-delimited ones); `None` if it does not parse.
fn top_fields(mut b: &[u8]) -> Option<Vec<(u32, WireType, &[u8])>> {
    let mut out = Vec::new();
    while !b.is_empty() {
        let (tag, wt) = decode_key(&mut b).ok()?;
        let value: &[u8] = match wt {
            WireType::Varint => {
                decode_varint(&mut b).ok()?;
                &[]
            }
            WireType::SixtyFourBit => {
                b = b.get(8..)?;
                &[]
            }
            WireType::ThirtyTwoBit => {
                b = b.get(4..)?;
                &[]
            }
            WireType::LengthDelimited => {
                let len = usize::try_from(decode_varint(&mut b).ok()?).ok()?;
                let v = b.get(..len)?;
                b = &b[len..];
                v
            }
            _ => return None,
        };
        out.push((tag, wt, value));
    }
    Some(out)
}

/// Whether bytes look like an `HloModuleProto`: they parse, have a name
/// (field 1, UTF-8), and an entry computation id or computations.
fn looks_like_module(b: &[u8]) -> bool {
    let Some(fs) = top_fields(b) else {
        return false;
    };
    let named = fs
        .iter()
        .any(|f| f.0 == 1 && f.1 == WireType::LengthDelimited && std::str::from_utf8(f.2).is_ok());
    named
        && fs.iter().any(|f| {
            (f.0 == 6 && f.1 == WireType::Varint) || (f.0 == 3 && f.1 == WireType::LengthDelimited)
        })
}

fn field_one(b: &[u8]) -> Option<&[u8]> {
    top_fields(b)?
        .into_iter()
        .find(|f| f.0 == 1 && f.1 == WireType::LengthDelimited)
        .map(|f| f.2)
}

/// Which message a binary proto holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrapper {
    HloModuleProto,
    HloProto,
    HloSnapshot,
}

/// The encoded `HloModuleProto` inside `bytes`, which may be a bare module,
/// an `HloProto` (module in field 1; an `HloUnoptimizedSnapshot` has it
/// there too, and reads as one) or an `HloSnapshot` (`HloProto` in field 1).
///
/// A message with a field past 4 is a module (the wrappers have none; a
/// module has its id and entry id, 5 and 6). Otherwise the deepest field 1
/// that looks like a module wins: a module's own field 1 is its name, which
/// never looks like one, while an `HloProto` (a module and a buffer
/// assignment) can look like a module to a shallower test.
pub fn unwrap_module(bytes: &[u8]) -> (Wrapper, &[u8]) {
    if top_fields(bytes).is_some_and(|fs| fs.iter().any(|f| f.0 > 4)) {
        return (Wrapper::HloModuleProto, bytes);
    }
    let inner = field_one(bytes);
    if let Some(module) = inner.and_then(field_one).filter(|m| looks_like_module(m)) {
        return (Wrapper::HloSnapshot, module);
    }
    if let Some(module) = inner.filter(|m| looks_like_module(m)) {
        return (Wrapper::HloProto, module);
    }
    (Wrapper::HloModuleProto, bytes)
}

/// Reads a binary `HloModuleProto`, `HloProto` or `HloSnapshot`.
pub fn read_module(bytes: &[u8]) -> Result<crate::ir::Module, ProtoError> {
    read_module_with(bytes, &ReadOptions::default())
}

pub fn read_module_with(
    bytes: &[u8],
    options: &ReadOptions,
) -> Result<crate::ir::Module, ProtoError> {
    let (_, module) = unwrap_module(bytes);
    let base = module.as_ptr() as usize - bytes.as_ptr() as usize;
    module_from_proto(module, options).map_err(|e| e.shifted(base).located_in(bytes))
}

/// Reads a binary proto from a regular file one computation at a time
/// (what [`read_module`] reads, without holding the file in memory).
/// `None` if the file is not plainly an `HloModuleProto` (a wrapper, or
/// not a proto at all): read it whole with [`read_module`] then.
#[cfg(unix)]
pub fn read_module_file(
    file: &std::fs::File,
) -> std::io::Result<Option<Result<crate::ir::Module, ProtoError>>> {
    let source = read_source::FileSource::new(file)?;
    Ok(from_proto::module_from_source(
        &source,
        &ReadOptions::default(),
    ))
}

/// Whether a file's bytes are a binary proto rather than HLO text: text
/// modules are UTF-8 and start (after blanks and comments) with a letter,
/// `%` or `ENTRY`; a proto starts with a field key, never printable text
/// followed by valid UTF-8 throughout.
pub fn looks_like_proto(bytes: &[u8]) -> bool {
    let text_like = std::str::from_utf8(bytes).is_ok_and(starts_like_text);
    !text_like && top_fields(bytes).is_some()
}

/// Whether an input that begins with `head` (its first bytes read) is HLO
/// text, so that it can be parsed as it is read: `head` is UTF-8, bar a
/// character cut at its end, and starts as text does. (A proto has bytes
/// that are not UTF-8 within its first few hundred: varints from 128 up.)
pub fn head_looks_like_text(head: &[u8]) -> bool {
    match std::str::from_utf8(head) {
        Ok(s) => starts_like_text(s),
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(&head[..e.valid_up_to()]).is_ok_and(starts_like_text)
        }
        Err(_) => false,
    }
}

/// Text modules start (after blanks) with a letter, `%`, `ENTRY` or a
/// comment.
fn starts_like_text(s: &str) -> bool {
    let t = s.trim_start();
    t.is_empty()
        || t.starts_with("HloModule")
        || t.starts_with("ENTRY")
        || t.starts_with('%')
        || t.starts_with("//")
        || t.starts_with("/*")
        || t.as_bytes()[0].is_ascii_alphabetic()
}
