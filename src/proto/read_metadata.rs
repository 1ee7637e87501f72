//! An instruction's `OpMetadata`: read in place where it can be, its
//! strings deferred to the computation's text buffer.

use super::messages::*;
use super::read_computation::slice;
use super::read_instruction::push_range;
use super::wire::{decode_key, decode_varint};
use crate::ir::attrs::typed;
use crate::ir::instruction::AttrValue;
use prost::encoding::WireType;
use smallvec::SmallVec;
use std::ops::Range;
use std::sync::Arc;

/// An `OpMetadata` whose strings are ranges of the computation's buffer.
pub(super) struct DeferredMetadata {
    /// op_type, op_name, source_file, deduplicated_name, scheduling_name.
    pub(super) strings: [Range<usize>; 5],
    /// source_line, source_end_line, source_column, source_end_column.
    pub(super) lines: [i32; 4],
    pub(super) profile_type: Vec<i32>,
    pub(super) stack_frame_id: i32,
}

impl DeferredMetadata {
    /// The metadata, its strings slices of the computation's buffer.
    pub(super) fn into_value(self, buf: &Arc<String>) -> AttrValue {
        let [op_type, op_name, source_file, deduplicated_name, scheduling_name] =
            self.strings.each_ref().map(|r| slice(buf, r));
        let [source_line, source_end_line, source_column, source_end_column] = self.lines;
        AttrValue::Metadata(typed(crate::ir::attrs::OpMetadata {
            op_type,
            op_name,
            source_file,
            source_line,
            source_end_line,
            source_column,
            source_end_column,
            profile_type: self.profile_type,
            deduplicated_name,
            scheduling_name,
            stack_frame_id: self.stack_frame_id,
        }))
    }
}

/// An instruction's `metadata` field as pass 2 found it.
pub(super) enum Meta<'a> {
    /// None, or one prost decoded into the message.
    InMessage,
    /// Read in place.
    View(MetaView<'a>),
    /// The same bytes as one read before: its value.
    Shared(AttrValue),
}

/// An `OpMetadata` as [`metadata_text`] prints it, its strings borrowed.
#[derive(Default)]
pub(crate) struct MetaView<'a> {
    pub(super) op_type: &'a str,
    pub(super) op_name: &'a str,
    pub(super) source_file: &'a str,
    pub(super) source_line: i32,
    pub(super) source_end_line: i32,
    pub(super) source_column: i32,
    pub(super) source_end_column: i32,
    pub(super) profile_type: SmallVec<[i32; 2]>,
    pub(super) deduplicated_name: &'a str,
    pub(super) scheduling_name: &'a str,
    pub(super) stack_frame_id: i32,
    /// The encoded message it was read from in place, if it was.
    pub(super) encoded: &'a [u8],
}

impl<'a> MetaView<'a> {
    pub(crate) fn of(m: &'a OpMetadata) -> MetaView<'a> {
        MetaView {
            op_type: &m.op_type,
            op_name: &m.op_name,
            source_file: &m.source_file,
            source_line: m.source_line,
            source_end_line: m.source_end_line,
            source_column: m.source_column,
            source_end_column: m.source_end_column,
            profile_type: m.profile_type.iter().copied().collect(),
            deduplicated_name: &m.deduplicated_name,
            scheduling_name: &m.scheduling_name,
            stack_frame_id: m.stack_frame_id,
            encoded: &[],
        }
    }

    /// Reads an encoded `OpMetadata` in place; `None` if it has anything
    /// else (or is malformed): prost then decodes it, errors included.
    pub(super) fn parse(mut b: &'a [u8]) -> Option<MetaView<'a>> {
        let mut v = MetaView {
            encoded: b,
            ..MetaView::default()
        };
        while !b.is_empty() {
            let (tag, wt) = decode_key(&mut b).ok()?;
            match (tag, wt) {
                (1 | 2 | 3 | 12 | 16, WireType::LengthDelimited) => {
                    let len = usize::try_from(decode_varint(&mut b).ok()?).ok()?;
                    let s = std::str::from_utf8(b.get(..len)?).ok()?;
                    b = &b[len..];
                    match tag {
                        1 => v.op_type = s,
                        2 => v.op_name = s,
                        3 => v.source_file = s,
                        12 => v.deduplicated_name = s,
                        _ => v.scheduling_name = s,
                    }
                }
                (4 | 15 | 17 | 18 | 19, WireType::Varint) => {
                    let x = decode_varint(&mut b).ok()? as i32;
                    match tag {
                        4 => v.source_line = x,
                        15 => v.stack_frame_id = x,
                        17 => v.source_end_line = x,
                        18 => v.source_column = x,
                        _ => v.source_end_column = x,
                    }
                }
                (5, WireType::Varint) => v.profile_type.push(decode_varint(&mut b).ok()? as i32),
                (5, WireType::LengthDelimited) => {
                    let len = usize::try_from(decode_varint(&mut b).ok()?).ok()?;
                    let mut packed = b.get(..len)?;
                    b = &b[len..];
                    while !packed.is_empty() {
                        v.profile_type.push(decode_varint(&mut packed).ok()? as i32);
                    }
                }
                _ => return None,
            }
        }
        Some(v)
    }

    /// Its strings written into the computation's buffer, to become
    /// slices of it (one allocation per computation, not five per
    /// instruction).
    pub(super) fn deferred(&self, stack_frame_id: i64, text: &mut String) -> DeferredMetadata {
        let mut put = |v: &str| push_range(text, |t| t.push_str(v));
        DeferredMetadata {
            strings: [
                put(self.op_type),
                put(self.op_name),
                put(self.source_file),
                put(self.deduplicated_name),
                put(self.scheduling_name),
            ],
            lines: [
                self.source_line,
                self.source_end_line,
                self.source_column,
                self.source_end_column,
            ],
            profile_type: self.profile_type.to_vec(),
            stack_frame_id: stack_frame_id as i32,
        }
    }

    /// The metadata as a value of its own, its strings copied: one shared
    /// by every instruction with the same (see [`MetadataCache`]).
    pub(super) fn value(&self, stack_frame_id: i64) -> AttrValue {
        AttrValue::Metadata(typed(crate::ir::attrs::OpMetadata {
            op_type: self.op_type.into(),
            op_name: self.op_name.into(),
            source_file: self.source_file.into(),
            source_line: self.source_line,
            source_end_line: self.source_end_line,
            source_column: self.source_column,
            source_end_column: self.source_end_column,
            profile_type: self.profile_type.to_vec(),
            deduplicated_name: self.deduplicated_name.into(),
            scheduling_name: self.scheduling_name.into(),
            stack_frame_id: stack_frame_id as i32,
        }))
    }

    pub(super) fn has_text(&self) -> bool {
        !self.op_type.is_empty()
            || !self.op_name.is_empty()
            || !self.source_file.is_empty()
            || self.source_line != 0
            || self.source_end_line != 0
            || self.source_column != 0
            || self.source_end_column != 0
            || !self.profile_type.is_empty()
            || !self.deduplicated_name.is_empty()
            || !self.scheduling_name.is_empty()
            || self.stack_frame_id != 0
    }
}

/// Metadata values by their encoded message: modules repeat a few hundred
/// metadata over hundreds of thousands of instructions, so each distinct
/// one is read and built once per reader thread, as the text reader shares
/// one value per distinct text. (The stack frame a value holds is the
/// renumbering of the one encoded, the same for the same bytes.)
#[derive(Default)]
pub(super) struct MetadataCache {
    values: crate::util::FxMap<Box<[u8]>, AttrValue>,
}

/// Distinct metadata a cache keeps at most: past it (every instruction's
/// own, say) the rest is read as before, into the computation's buffer.
const CACHED_METADATA: usize = 1 << 14;

impl MetadataCache {
    /// The shared value of `m` with stack frame `sf`, if it was read in
    /// place and the cache has or takes it.
    pub(super) fn get(&mut self, m: &MetaView<'_>, sf: i64) -> Option<AttrValue> {
        if m.encoded.is_empty() {
            return None;
        }
        if let Some(v) = self.shared(m.encoded) {
            return Some(v);
        }
        if self.values.len() >= CACHED_METADATA {
            return None;
        }
        let v = m.value(sf);
        self.values.insert(m.encoded.into(), v.clone());
        Some(v)
    }

    /// The value of the encoded `OpMetadata` `encoded`, if it was read
    /// before: then it need not be read again.
    pub(super) fn shared(&self, encoded: &[u8]) -> Option<AttrValue> {
        self.values.get(encoded).cloned()
    }
}

/// The metadata fields the text does not show (code and working-set
/// sizes, profile info, fields of a newer XLA), encoded as one more
/// `metadata` field, which a reader merges into the one written from the
/// text; nothing if there are none.
pub(super) fn append_unprinted_metadata(md: &OpMetadata, out: &mut Vec<u8>) {
    let mut unprinted = OpMetadata::new(OpMetadataFields {
        size_of_generated_code_in_bytes: md.size_of_generated_code_in_bytes,
        size_of_memory_working_set_in_bytes: md.size_of_memory_working_set_in_bytes,
        profile_info: md.profile_info.clone(),
        ..Default::default()
    });
    unprinted.unknown = md.unknown.clone();
    if unprinted != OpMetadata::default() {
        prost::encoding::message::encode(7, &unprinted, out);
    }
}
