//! Where the writer hands each computation: a whole message ([`Collect`]),
//! or bytes encoded as they come ([`Stream`]). Computations are encoded
//! apart (on several threads for a large module) by a sink's
//! [`CompEncoder`], and handed to the sink in writing order.

use super::messages::*;
use super::ProtoError;
use crate::ir::attrs::{OpMetadata as IrMetadata, Typed, Written};
use crate::ir::instruction::AttrValue;
use crate::ir::{Instruction, Shape};
use crate::util::FxMap;
use prost::encoding::{encode_key, encode_varint, message, string, WireType};
use prost::Message;
use std::sync::Arc;

/// Where [`Writer::module`](super::to_proto::Writer) hands each
/// computation, in writing order.
pub(super) trait CompSink {
    /// One computation, encoded.
    type Piece: Send;
    /// What encodes one computation: made once per thread.
    type Encoder: CompEncoder<Piece = Self::Piece> + Default;
    /// The module's name and entry name are known.
    fn start(&mut self, module: &HloModuleProto) -> Result<(), ProtoError>;
    fn computation(&mut self, piece: Self::Piece) -> Result<(), ProtoError>;
}

/// Encodes one computation: its name, its instructions one by one, then
/// its other fields.
pub(super) trait CompEncoder {
    type Piece;
    fn begin(&mut self, name: &str);
    /// `ip` is `made_from`'s message; it is left as it came.
    fn instruction(&mut self, ip: &mut HloInstructionProto, made_from: &Instruction);
    /// The computation's other fields (its `instructions` empty).
    fn end(&mut self, cp: HloComputationProto) -> Self::Piece;
}

/// Builds the whole message ([`module_to_proto`](super::to_proto::module_to_proto)).
#[derive(Default)]
pub(super) struct Collect {
    pub(super) done: Vec<HloComputationProto>,
}

#[derive(Default)]
pub(super) struct CollectComputation {
    instrs: Vec<HloInstructionProto>,
}

impl CompSink for Collect {
    type Piece = HloComputationProto;
    type Encoder = CollectComputation;

    fn start(&mut self, _: &HloModuleProto) -> Result<(), ProtoError> {
        Ok(())
    }

    fn computation(&mut self, cp: HloComputationProto) -> Result<(), ProtoError> {
        self.done.push(cp);
        Ok(())
    }
}

impl CompEncoder for CollectComputation {
    type Piece = HloComputationProto;

    fn begin(&mut self, _: &str) {}

    fn instruction(&mut self, ip: &mut HloInstructionProto, _: &Instruction) {
        self.instrs.push(ip.clone());
    }

    fn end(&mut self, mut cp: HloComputationProto) -> HloComputationProto {
        cp.instructions = std::mem::take(&mut self.instrs);
        cp
    }
}

/// Encodes as it goes ([`write_module_proto`](super::to_proto::write_module_proto)):
/// a computation's bytes are its name, each instruction as it comes, then
/// its other fields; the module's, its name and entry name, the
/// computations, then the rest. The same bytes as encoding the whole
/// message, as fields go in tag order.
pub(super) struct Stream<'w> {
    pub(super) out: &'w mut dyn std::io::Write,
    /// The writer's failure, reported as such.
    pub(super) io: Option<std::io::Error>,
}

impl Stream<'_> {
    fn write(&mut self, bytes: &[u8]) -> Result<(), ProtoError> {
        self.out.write_all(bytes).map_err(|e| {
            let message = e.to_string();
            self.io = Some(e);
            ProtoError::new(message)
        })
    }
}

/// A computation as the module's field 3: key, length, then the bytes.
#[derive(Default)]
pub(super) struct EncodedComputation {
    bytes: Vec<u8>,
    /// The last computation's size: room to start the next one with.
    last_len: usize,
    fields: SharedFields,
    /// One instruction's encoded fields.
    scratch: Vec<u8>,
}

/// The encoded `shape` and `metadata` fields of the instructions, by the
/// shared value they were made from: a module has a few thousand distinct
/// shapes and metadata over hundreds of thousands of instructions, and
/// encoding them was most of encoding an instruction. Each entry holds its
/// value, so that no other value can take its address while it is kept.
#[derive(Default)]
struct SharedFields {
    shapes: FxMap<*const Shape, (Arc<Shape>, Vec<u8>)>,
    /// By the metadata (null: none) and the stack frame id written
    /// (renumbered apart).
    metadata: FxMap<MetadataKey, (Option<Typed<IrMetadata>>, Vec<u8>)>,
}

/// A metadata value's address (null: none) and the stack frame id written.
type MetadataKey = (*const Written<IrMetadata>, i32);

impl SharedFields {
    fn shape(&mut self, of: &Arc<Shape>, p: &ShapeProto) -> &[u8] {
        &self
            .shapes
            .entry(Arc::as_ptr(of))
            .or_insert_with(|| (Arc::clone(of), encoded_field(3, p)))
            .1
    }

    fn metadata(&mut self, of: Option<&Typed<IrMetadata>>, p: &OpMetadata) -> &[u8] {
        let at = of.map_or(std::ptr::null(), Arc::as_ptr);
        &self
            .metadata
            .entry((at, p.stack_frame_id))
            .or_insert_with(|| (of.cloned(), encoded_field(7, p)))
            .1
    }
}

fn encoded_field(tag: u32, m: &impl Message) -> Vec<u8> {
    let mut out = Vec::new();
    message::encode(tag, m, &mut out);
    out
}

/// An encoded computation: `bytes[start..]` are its field of the module.
pub(super) struct Piece {
    bytes: Vec<u8>,
    start: usize,
}

impl CompSink for Stream<'_> {
    type Piece = Piece;
    type Encoder = EncodedComputation;

    fn start(&mut self, module: &HloModuleProto) -> Result<(), ProtoError> {
        let mut head = Vec::new();
        if !module.name.is_empty() {
            prost::encoding::string::encode(1, &module.name, &mut head);
        }
        if !module.entry_computation_name.is_empty() {
            prost::encoding::string::encode(2, &module.entry_computation_name, &mut head);
        }
        self.write(&head)
    }

    fn computation(&mut self, piece: Piece) -> Result<(), ProtoError> {
        self.write(piece.bytes.get(piece.start..).unwrap_or_default())
    }
}

/// Room for the key (one byte) and length (at most ten) of a
/// computation's field, written in front once the length is known.
const HEAD_ROOM: usize = 11;

impl CompEncoder for EncodedComputation {
    type Piece = Piece;

    fn begin(&mut self, name: &str) {
        // Each piece keeps its buffer: the next starts one as large.
        self.bytes = Vec::with_capacity(self.last_len.max(HEAD_ROOM));
        self.bytes.resize(HEAD_ROOM, 0);
        if !name.is_empty() {
            prost::encoding::string::encode(1, &name.to_string(), &mut self.bytes);
        }
    }

    fn instruction(&mut self, ip: &mut HloInstructionProto, made_from: &Instruction) {
        let metadata_attr = match made_from.attr("metadata") {
            None => Some(None),
            Some(AttrValue::Metadata(m)) => Some(Some(m)),
            Some(_) => None,
        };
        match (metadata_attr, ip.shape.take(), ip.metadata.take()) {
            (Some(attr), Some(shape), Some(metadata)) => {
                self.encode_sharing(ip, made_from, attr, shape, metadata)
            }
            (_, shape, metadata) => {
                ip.shape = shape;
                ip.metadata = metadata;
                message::encode(2, ip, &mut self.bytes);
            }
        }
    }

    fn end(&mut self, mut cp: HloComputationProto) -> Piece {
        cp.name.clear();
        cp.encode_raw(&mut self.bytes);
        let mut head = Vec::with_capacity(HEAD_ROOM);
        prost::encoding::encode_key(3, prost::encoding::WireType::LengthDelimited, &mut head);
        prost::encoding::encode_varint((self.bytes.len() - HEAD_ROOM) as u64, &mut head);
        let start = HEAD_ROOM - head.len();
        if let Some(room) = self.bytes.get_mut(start..HEAD_ROOM) {
            room.copy_from_slice(&head);
        }
        self.last_len = self.bytes.len();
        Piece {
            bytes: std::mem::take(&mut self.bytes),
            start,
        }
    }
}

impl EncodedComputation {
    /// `ip`, its shape and metadata taken out, with those fields from
    /// [`SharedFields`].
    fn encode_sharing(
        &mut self,
        ip: &mut HloInstructionProto,
        made_from: &Instruction,
        metadata_attr: Option<&Typed<IrMetadata>>,
        shape: ShapeProto,
        metadata: OpMetadata,
    ) {
        // Fields go in tag order: name (1), opcode (2), shape (3), metadata
        // (7), then the rest, which the message without those four holds.
        // Encoded apart first, as its length goes in front: asking the
        // message for its length would walk its fields twice.
        let name = std::mem::take(&mut ip.name);
        let opcode = std::mem::take(&mut ip.opcode);
        let body = &mut self.scratch;
        body.clear();
        for (tag, s) in [(1, &name), (2, &opcode)] {
            if !s.is_empty() {
                string::encode(tag, s, body);
            }
        }
        body.extend_from_slice(self.fields.shape(&made_from.shape, &shape));
        body.extend_from_slice(self.fields.metadata(metadata_attr, &metadata));
        ip.encode_raw(body);
        encode_key(2, WireType::LengthDelimited, &mut self.bytes);
        encode_varint(body.len() as u64, &mut self.bytes);
        self.bytes.extend_from_slice(body);
        ip.name = name;
        ip.opcode = opcode;
        ip.shape = Some(shape);
        ip.metadata = Some(metadata);
        debug_assert!({
            let mut alone = Vec::new();
            message::encode(2, ip, &mut alone);
            self.bytes.ends_with(&alone)
        });
    }
}
