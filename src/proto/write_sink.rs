//! Where the writer hands each computation: a whole message ([`Collect`]),
//! or bytes encoded as they come ([`Stream`]). Computations are encoded
//! apart (on several threads for a large module) by a sink's
//! [`CompEncoder`], and handed to the sink in writing order.

use super::attrs::metadata_into;
use super::messages::*;
use super::write_direct::Direct;
use super::write_shape::shape_to_proto;
use super::ProtoError;
use crate::ir::attrs::{OpMetadata as IrMetadata, Typed, Written};
use crate::ir::instruction::AttrValue;
use crate::ir::{Instruction, Shape};
use crate::util::FxMap;
use prost::encoding::{encode_key, encode_varint, encoded_len_varint, message, WireType};
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
    /// Returns the piece's buffer once written, for a later one
    /// ([`CompEncoder::reuse`]).
    fn computation(&mut self, piece: Self::Piece) -> Result<Option<Vec<u8>>, ProtoError>;
}

/// Encodes one computation: its name, its instructions one by one, then
/// its other fields. The fields many instructions share (shape and
/// metadata) and the program shape come from the IR: the encoder writes
/// them, once per value where it can.
pub(super) trait CompEncoder {
    type Piece;
    /// A buffer written before, for the next computation's bytes.
    fn reuse(&mut self, buffer: Vec<u8>);
    fn begin(&mut self, name: &str);
    /// `ip` is `made_from`'s message without its shape and metadata (left
    /// as it came); `frame` is the stack frame id written where the
    /// proto's own are kept.
    fn instruction(
        &mut self,
        ip: &mut HloInstructionProto,
        made_from: &Instruction,
        frame: Option<i32>,
    );
    /// [`CompEncoder::instruction`] for an instruction whose fields past
    /// its shape and metadata are `direct`'s; false if this encoder
    /// takes only the message (then the writer fills it).
    fn direct(
        &mut self,
        _direct: &Direct<'_>,
        _made_from: &Instruction,
        _frame: Option<i32>,
    ) -> bool {
        false
    }
    /// The computation's other fields (its `instructions` and
    /// `program_shape` empty), and what its program shape is made of.
    fn end(&mut self, cp: HloComputationProto, program: ProgramShape<'_>) -> Self::Piece;
}

/// A computation's program shape as the IR has it: its parameters in
/// order (their shapes and names) and its root's shape.
pub(super) struct ProgramShape<'a> {
    pub(super) parameters: Vec<&'a Instruction>,
    pub(super) result: &'a Arc<Shape>,
}

impl ProgramShape<'_> {
    fn to_proto(&self) -> ProgramShapeProto {
        let mut ps = ProgramShapeProto::default();
        for p in &self.parameters {
            ps.parameters.push(shape_to_proto(&p.shape));
            ps.parameter_names.push(p.name.to_string());
        }
        ps.result = Some(shape_to_proto(self.result));
        ps
    }
}

/// An instruction's metadata attribute.
pub(super) fn metadata_attr(instr: &Instruction) -> Option<&Typed<IrMetadata>> {
    match instr.attr("metadata") {
        Some(AttrValue::Metadata(m)) => Some(m),
        _ => None,
    }
}

/// The stack frame id an instruction's metadata is written with: the
/// proto's own where kept, else its attribute's.
fn frame_written(m: Option<&Typed<IrMetadata>>, frame: Option<i32>) -> i32 {
    frame.unwrap_or_else(|| m.map_or(0, |m| m.stack_frame_id))
}

/// An instruction's metadata message: its attribute's, or the empty one
/// XLA writes for none.
fn metadata_proto(m: Option<&Typed<IrMetadata>>, frame_id: i32) -> OpMetadata {
    let mut p = OpMetadata::default();
    if let Some(m) = m {
        metadata_into(m, &mut p);
    }
    p.stack_frame_id = frame_id;
    p
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

    fn computation(&mut self, cp: HloComputationProto) -> Result<Option<Vec<u8>>, ProtoError> {
        self.done.push(cp);
        Ok(None)
    }
}

impl CompEncoder for CollectComputation {
    type Piece = HloComputationProto;

    fn reuse(&mut self, _: Vec<u8>) {}

    fn begin(&mut self, _: &str) {}

    fn instruction(
        &mut self,
        ip: &mut HloInstructionProto,
        made_from: &Instruction,
        frame: Option<i32>,
    ) {
        let mut p = ip.clone();
        p.shape = Some(shape_to_proto(&made_from.shape));
        let m = metadata_attr(made_from);
        p.metadata = Some(metadata_proto(m, frame_written(m, frame)));
        self.instrs.push(p);
    }

    fn end(
        &mut self,
        mut cp: HloComputationProto,
        program: ProgramShape<'_>,
    ) -> HloComputationProto {
        cp.instructions = std::mem::take(&mut self.instrs);
        cp.program_shape = Some(program.to_proto());
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
    /// A buffer written before, to start the next one in.
    spare: Option<Vec<u8>>,
    fields: SharedFields,
}

/// The encoded shapes and `metadata` fields of the instructions, by the
/// shared value they were made from: a module has a few thousand distinct
/// shapes and metadata over hundreds of thousands of instructions, and
/// encoding them was most of encoding an instruction. Each entry holds its
/// value, so that no other value can take its address while it is kept.
#[derive(Default)]
struct SharedFields {
    /// A `ShapeProto`'s fields (no key or length: instructions and
    /// program shapes give it different tags).
    shapes: FxMap<*const Shape, (Arc<Shape>, Vec<u8>)>,
    /// The whole field, by the metadata (null: none) and the stack frame
    /// id written (renumbered apart).
    metadata: FxMap<MetadataKey, (Option<Typed<IrMetadata>>, Vec<u8>)>,
}

/// A metadata value's address (null: none) and the stack frame id written.
type MetadataKey = (*const Written<IrMetadata>, i32);

impl SharedFields {
    fn shape(&mut self, of: &Arc<Shape>) -> &[u8] {
        &self
            .shapes
            .entry(Arc::as_ptr(of))
            .or_insert_with(|| (Arc::clone(of), shape_to_proto(of).encode_to_vec()))
            .1
    }

    fn metadata(&mut self, of: Option<&Typed<IrMetadata>>, frame_id: i32) -> &[u8] {
        let at = of.map_or(std::ptr::null(), Arc::as_ptr);
        &self
            .metadata
            .entry((at, frame_id))
            .or_insert_with(|| {
                let mut field = Vec::new();
                message::encode(7, &metadata_proto(of, frame_id), &mut field);
                (of.cloned(), field)
            })
            .1
    }
}

/// A length-delimited field of `bytes` (a message's fields, a string).
pub(super) fn bytes_field(tag: u32, bytes: &[u8], out: &mut Vec<u8>) {
    encode_key(tag, WireType::LengthDelimited, out);
    encode_varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}

/// A string or bytes field as proto3 writes it: nothing if empty.
pub(super) fn string_field(tag: u32, bytes: &[u8], out: &mut Vec<u8>) {
    if !bytes.is_empty() {
        bytes_field(tag, bytes, out);
    }
}

/// Bytes most length prefixes take: an instruction's or a program shape's
/// fields are 128 to 16,383 bytes long.
const LENGTH_ROOM: usize = 2;

/// What `body` writes into `out`, behind its length: room for the length is
/// left first and filled once it is known, and the body is moved only when
/// its length takes other than [`LENGTH_ROOM`] bytes (asking a message for
/// its length first would walk its fields twice).
fn length_delimited(out: &mut Vec<u8>, body: impl FnOnce(&mut Vec<u8>)) {
    let at = out.len();
    out.extend_from_slice(&[0; LENGTH_ROOM]);
    body(out);
    let len = out.len() - at - LENGTH_ROOM;
    let mut head = [0u8; 10];
    encode_varint(len as u64, &mut &mut head[..]);
    match head.get(..encoded_len_varint(len as u64)) {
        Some(head) if head.len() == LENGTH_ROOM => out[at..at + LENGTH_ROOM].copy_from_slice(head),
        Some(head) => {
            out.splice(at..at + LENGTH_ROOM, head.iter().copied());
        }
        None => {}
    }
}

impl EncodedComputation {
    /// An instruction's field of the computation: its name (1), opcode
    /// (2), shape (3) and metadata (7), then what `rest` writes (the
    /// fields past 7, in tag order).
    fn encode_instruction(
        &mut self,
        name: &str,
        opcode: &str,
        made_from: &Instruction,
        frame: Option<i32>,
        rest: impl FnOnce(&mut Vec<u8>),
    ) {
        let m = metadata_attr(made_from);
        let frame = frame_written(m, frame);
        let Self { bytes, fields, .. } = self;
        encode_key(2, WireType::LengthDelimited, bytes);
        length_delimited(bytes, |body| {
            string_field(1, name.as_bytes(), body);
            string_field(2, opcode.as_bytes(), body);
            bytes_field(3, fields.shape(&made_from.shape), body);
            body.extend_from_slice(fields.metadata(m, frame));
            rest(body);
        });
    }
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

    fn computation(&mut self, piece: Piece) -> Result<Option<Vec<u8>>, ProtoError> {
        self.write(piece.bytes.get(piece.start..).unwrap_or_default())?;
        Ok(Some(piece.bytes))
    }
}

/// Room for the key (one byte) and length (at most ten) of a
/// computation's field, written in front once the length is known.
const HEAD_ROOM: usize = 11;

impl CompEncoder for EncodedComputation {
    type Piece = Piece;

    fn reuse(&mut self, buffer: Vec<u8>) {
        self.spare = Some(buffer);
    }

    fn begin(&mut self, name: &str) {
        // Each piece keeps its buffer: the next starts one as large.
        self.bytes = self.spare.take().unwrap_or_default();
        self.bytes.clear();
        self.bytes.reserve(self.last_len.max(HEAD_ROOM));
        self.bytes.resize(HEAD_ROOM, 0);
        if !name.is_empty() {
            prost::encoding::string::encode(1, &name.to_string(), &mut self.bytes);
        }
    }

    fn instruction(
        &mut self,
        ip: &mut HloInstructionProto,
        made_from: &Instruction,
        frame: Option<i32>,
    ) {
        // The name and opcode go first; the message holds the rest.
        let name = std::mem::take(&mut ip.name);
        let opcode = std::mem::take(&mut ip.opcode);
        self.encode_instruction(&name, &opcode, made_from, frame, |body| ip.encode_raw(body));
        ip.name = name;
        ip.opcode = opcode;
        debug_assert!({
            let m = metadata_attr(made_from);
            let mut whole = ip.clone();
            whole.shape = Some(shape_to_proto(&made_from.shape));
            whole.metadata = Some(metadata_proto(m, frame_written(m, frame)));
            let mut alone = Vec::new();
            message::encode(2, &whole, &mut alone);
            self.bytes.ends_with(&alone)
        });
    }

    fn direct(&mut self, direct: &Direct<'_>, made_from: &Instruction, frame: Option<i32>) -> bool {
        let opcode = made_from.opcode.name();
        self.encode_instruction(&made_from.name, opcode, made_from, frame, |body| {
            direct.encode(body)
        });
        true
    }

    fn end(&mut self, mut cp: HloComputationProto, program: ProgramShape<'_>) -> Piece {
        cp.name.clear();
        // The program shape (4) goes before the fields `cp` holds (5 on).
        let Self { bytes, fields, .. } = self;
        encode_key(4, WireType::LengthDelimited, bytes);
        length_delimited(bytes, |ps| {
            for p in &program.parameters {
                bytes_field(1, fields.shape(&p.shape), ps);
            }
            bytes_field(2, fields.shape(program.result), ps);
            for p in &program.parameters {
                bytes_field(3, p.name.as_bytes(), ps);
            }
        });
        debug_assert!({
            let mut alone = Vec::new();
            message::encode(4, &program.to_proto(), &mut alone);
            self.bytes.ends_with(&alone)
        });
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
