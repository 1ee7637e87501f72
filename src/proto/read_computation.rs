//! One computation: pass 1 (ids, edges, order), pass 2 (each instruction
//! decoded and converted in print order), then the IR's instructions made
//! with slices of the computation's text buffer.

use super::err;
use super::messages::*;
use super::read_comp_ids::CompIds;
use super::read_frames::{FrameRef, Frames};
use super::read_metadata::{
    append_unprinted_metadata, DeferredMetadata, Meta, MetaView, MetadataCache,
};
use super::read_order::post_order;
use super::read_scan::{CompData, IdIndex, Scan};
use super::read_shape::shape_from_proto;
use super::wire::{encode_len, fields, merge_into, skip_field, take_delimited};
use super::ProtoError;
use crate::ir::instruction::{
    attr_key, ApiVersion, Attr, AttrList, AttrValue, ComparisonDirection, ComparisonType,
};
use crate::ir::shape::Shape;
use crate::ir::{CompId, Computation, InstrId, Instruction, Opcode, Payload, SharedStr};
use crate::util::FxMap;
use prost::encoding::WireType;
use prost::Message;
use smallvec::SmallVec;
use std::ops::Range;
use std::sync::Arc;

/// A value whose text is a range of the computation's text buffer.
pub(super) enum PVal {
    Raw(Range<usize>),
    Value(AttrValue),
    Metadata(Box<DeferredMetadata>),
    Int(i64),
    Ints(Box<[i64]>),
    Comp(CompId),
    Comps(Box<[CompId]>),
    Str(Range<usize>),
    BackendConfig(Range<usize>),
    Direction(ComparisonDirection),
    CompareType(ComparisonType),
    ApiVersion(ApiVersion),
}

/// An instruction waiting for its computation's text buffer.
pub(super) struct Pending {
    pub(super) name: Range<usize>,
    pub(super) opcode: Opcode,
    pub(super) shape: Arc<Shape>,
    pub(super) operands: SmallVec<[InstrId; 4]>,
    pub(super) control: Vec<InstrId>,
    pub(super) attrs: SmallVec<[(&'static str, PVal); 2]>,
    pub(super) payload: Payload,
}

/// Converts computations; one per thread, sharing the module-wide tables.
pub(super) struct Reader<'c> {
    pub(super) comp_ids: &'c CompIds<'c>,
    /// XLA's numbers for the stack frames, if they were worked out before
    /// the computations convert; else the metadata keeps the proto's, and
    /// each computation lists the frames it uses first
    /// ([`ReadComputation::first_frames`]), for numbering after.
    pub(super) frames: Option<&'c Frames<'c>>,
    /// Whether the frames are renumbered: then each instruction's proto
    /// frame id is kept, to write the module back with it.
    renumbered_frames: bool,
    /// Shapes by their encoded `ShapeProto`, with its element type.
    pub(super) shapes: FxMap<Box<[u8]>, InstrShape>,
    pub(super) keys: FxMap<&'static str, SharedStr>,
    pub(super) schedule: Option<&'c HloScheduleProto>,
    /// `HloModuleProto.payloads`, which `backend_config_payload` ids index.
    pub(super) payloads: &'c [Vec<u8>],
    /// The message each instruction is decoded into, reused.
    pub(super) scratch: HloInstructionProto,
    /// Whether a field was decoded into `scratch` since it was cleared:
    /// most instructions have none but those read in place, and clearing
    /// all 82 fields for each was a thirtieth of reading a proto.
    pub(super) scratch_dirty: bool,
    /// The instructions of a computation before they are made, reused:
    /// a fresh buffer for each computation would be faulted in again each
    /// time (the allocator hands a large freed block back to the system).
    pub(super) pending: Vec<Pending>,
    pub(super) metadata: MetadataCache,
}

impl<'c> Reader<'c> {
    pub(super) fn new(
        comp_ids: &'c CompIds<'c>,
        frames: Option<&'c Frames<'c>>,
        renumbered_frames: bool,
        module: &'c HloModuleProto,
    ) -> Reader<'c> {
        Reader {
            comp_ids,
            frames,
            renumbered_frames,
            shapes: FxMap::default(),
            keys: FxMap::default(),
            schedule: module.schedule.as_ref(),
            payloads: &module.payloads,
            scratch: HloInstructionProto::default(),
            scratch_dirty: false,
            pending: Vec::new(),
            metadata: MetadataCache::default(),
        }
    }

    pub(super) fn key(&mut self, k: &'static str) -> SharedStr {
        // A known key has no buffer, so cloning it counts no reference;
        // another gets a buffer of this reader's own: threads cloning one
        // `Arc` would contend on its count.
        self.keys.entry(k).or_insert_with(|| attr_key(k)).clone()
    }

    pub(super) fn shape(&self, p: &ShapeProto) -> Result<Shape, ProtoError> {
        shape_from_proto(p, 0)
    }

    /// An instruction's shape: an array without a layout gets XLA's
    /// default, as the text parser gives it, so that the text printed for
    /// the proto reads back as itself.
    pub(super) fn instruction_shape(&self, p: &ShapeProto) -> Result<Shape, ProtoError> {
        let mut s = shape_from_proto(p, 0)?;
        s.fill_default_layouts();
        Ok(s)
    }

    /// The computation a called computation id names.
    pub(super) fn comp_ref(&self, id: i64) -> Result<CompId, ProtoError> {
        self.comp_ids.lookup(id)
    }

    /// The stack frame id to give metadata whose proto has `id`.
    pub(super) fn frame_id(&self, id: i32) -> Result<i64, ProtoError> {
        match self.frames {
            Some(frames) if id != 0 => frames.lookup(id),
            _ => Ok(i64::from(id)),
        }
    }

    /// The shape of an instruction, interned by its encoded `ShapeProto`
    /// (equal bytes are equal shapes), with the proto's element type.
    pub(super) fn shape_of(
        &mut self,
        scan: &Scan<'_>,
        bytes: &[u8],
    ) -> Result<InstrShape, ProtoError> {
        if scan.shape_fields > 1 {
            // Several shape fields merge: decode the whole instruction.
            let mut p = HloInstructionProto::default();
            p.merge(bytes)
                .map_err(|e| ProtoError::decode("HloInstructionProto", e))?;
            let sp = p.msg.shape.unwrap_or_default();
            return Ok(InstrShape {
                shape: Arc::new(self.instruction_shape(&sp)?),
                element_type: sp.element_type,
            });
        }
        let Some(sb) = scan.shape else {
            return err(format!("instruction {}: has no shape", scan.name()));
        };
        if let Some(s) = self.shapes.get(sb) {
            return Ok(s.clone());
        }
        let s = ShapeProto::decode(sb)
            .map_err(|e| ProtoError::decode("ShapeProto", e))
            .and_then(|sp| {
                Ok(InstrShape {
                    shape: Arc::new(self.instruction_shape(&sp)?),
                    element_type: sp.element_type,
                })
            })
            .map_err(|e| e.context(format!("instruction {}", scan.name())))?;
        self.shapes.insert(sb.into(), s.clone());
        Ok(s)
    }

    /// Converts a computation: pass 1 over its instructions, their print
    /// order, pass 2 in that order, then the IR's instructions.
    pub(super) fn computation(
        &mut self,
        data: &CompData<'_>,
        scheduled: bool,
    ) -> Result<ReadComputation, ProtoError> {
        // Pass 1: ids, edges, stack frames and shapes, without decoding the
        // rest of each instruction.
        // Sized first: collecting into a `Result` would grow it by doubling.
        let mut scans = Vec::with_capacity(data.instrs.len());
        for (k, bytes) in data.instrs.iter().enumerate() {
            scans.push(Scan::at(k, bytes)?);
        }
        let id_to_local = IdIndex::new(&scans)?;
        let edges = Edges::new(&scans, &id_to_local)?;
        let mut by_id: Vec<usize> = (0..scans.len()).collect();
        if !id_to_local.sorted {
            by_id.sort_unstable_by_key(|&i| scans[i].id);
        }
        let calls = self.calls_in_id_order(&scans, &by_id)?;
        let order = self.print_order(data, scheduled, &id_to_local, &by_id, &edges)?;
        if order.len() != scans.len() {
            return err("the operands of its instructions form a cycle");
        }
        let converted = self.convert_in_order(data, &scans, &edges, &order)?;
        let has_async_start = converted.has_async_start;
        let mut comp =
            self.materialize(data.shell.name.as_str(), converted.pending, converted.text);
        let root = data.shell.root_id;
        match id_to_local.get(root).and_then(|l| converted.ids[l]) {
            Some(r) => comp.set_root(r),
            None => return err(format!("the root id {root} does not exist")),
        }
        comp.proto_id = Some(data.shell.id);
        self.record_proto_order(&mut comp, &scans, &order);
        record_proto_extras(&mut comp, data, converted.bare_precision, converted.unknown);
        // Listed even where no frames are renumbered: numbering them is
        // also what finds ids no table has.
        let first_frames = if self.frames.is_none() {
            first_frames(&scans, &by_id)
        } else {
            Vec::new()
        };
        Ok(ReadComputation {
            comp,
            calls,
            has_async_start,
            first_frames,
        })
    }

    /// The computations each instruction calls, for those in id order that
    /// call any.
    fn calls_in_id_order(
        &self,
        scans: &[Scan<'_>],
        by_id: &[usize],
    ) -> Result<Vec<SmallVec<[CompId; 2]>>, ProtoError> {
        let mut calls = Vec::new();
        for &i in by_id {
            if !scans[i].called.is_empty() {
                let cs = scans[i]
                    .called
                    .iter()
                    .map(|&c| self.comp_ref(c))
                    .collect::<Result<SmallVec<_>, _>>()?;
                calls.push(cs);
            }
        }
        Ok(calls)
    }

    /// The schedule's order, if the module is scheduled and it has one of
    /// the whole computation; else XLA's post order.
    fn print_order(
        &self,
        data: &CompData<'_>,
        scheduled: bool,
        id_to_local: &IdIndex,
        by_id: &[usize],
        edges: &Edges,
    ) -> Result<Vec<usize>, ProtoError> {
        let sequence = if scheduled {
            self.schedule
                .and_then(|s| s.sequences.get(&data.shell.id))
                .map(|s| &s.instruction_ids)
        } else {
            None
        };
        match sequence {
            Some(seq) if seq.len() == by_id.len() => seq
                .iter()
                .map(|&id| {
                    id_to_local.get(id).ok_or_else(|| {
                        ProtoError::new(format!(
                            "the schedule names instruction id {id}, which does not exist"
                        ))
                    })
                })
                .collect(),
            _ => Ok(post_order(
                by_id,
                |i| edges.operands(i),
                |i| edges.controls(i),
                &edges.has_users,
            )),
        }
    }

    /// Pass 2, in print order (operands first): decodes each instruction
    /// into one reused message and converts it.
    fn convert_in_order(
        &mut self,
        data: &CompData<'_>,
        scans: &[Scan<'_>],
        edges: &Edges,
        order: &[usize],
    ) -> Result<Converted, ProtoError> {
        let n = scans.len();
        let mut out = Converted {
            // Names mostly: metadata is shared (`MetadataCache`).
            text: String::with_capacity(n * 24),
            ids: vec![None; n],
            types: vec![0; n],
            pending: {
                let mut v = std::mem::take(&mut self.pending);
                v.reserve(n);
                v
            },
            bare_precision: Vec::new(),
            unknown: Vec::new(),
            has_async_start: false,
        };
        let mut p = std::mem::take(&mut self.scratch);
        for &i in order {
            self.convert_one(&mut p, data.instrs[i], i, scans, edges, &mut out)?;
        }
        self.scratch = p;
        Ok(out)
    }

    /// Converts instruction `i` (its operands converted already) into
    /// `out`, decoding it into `p`.
    fn convert_one(
        &mut self,
        p: &mut HloInstructionProto,
        bytes: &[u8],
        i: usize,
        scans: &[Scan<'_>],
        edges: &Edges,
        out: &mut Converted,
    ) -> Result<(), ProtoError> {
        let scan = &scans[i];
        let ops = out.operand_ids(i, scans, edges)?;
        let control = out.control_ids(i, scan, edges)?;
        let here = |e: ProtoError| e.in_path(&format!("instructions[{i}]"), bytes);
        let InstrShape {
            shape,
            element_type,
        } = self.shape_of(scan, bytes).map_err(here)?;
        out.types[i] = element_type;
        let decoded =
            decode_instruction(p, &mut self.scratch_dirty, bytes, &self.metadata).map_err(here)?;
        let at = out.pending.len() as u32;
        // XLA's passes make precision configs without operand
        // precisions, which the text cannot tell from one per operand.
        if !edges.operands(i).is_empty()
            && p.precision_config
                .as_ref()
                .is_some_and(|pc| pc.operand_precision.is_empty())
        {
            out.bare_precision.push(at);
        }
        let mut extra = p.unknown.clone();
        if let (Meta::InMessage, Some(md)) = (&decoded.meta, &p.metadata) {
            append_unprinted_metadata(md, &mut extra);
        }
        if !extra.is_empty() {
            out.unknown.push((at, extra.into()));
        }
        let operand_types: SmallVec<[i32; 4]> = edges
            .operands(i)
            .iter()
            .map(|&o| out.types[o as usize])
            .collect();
        let name = decoded.name;
        let pend = self
            .instruction(
                p,
                decoded,
                shape,
                &operand_types,
                ops,
                control,
                &out.pending,
                &mut out.text,
            )
            .map_err(|e| here(e.context(format!("instruction {name}"))))?;
        out.has_async_start |= pend.opcode == Opcode::AsyncStart;
        out.ids[i] = Some(InstrId::new(out.pending.len()));
        out.pending.push(pend);
        Ok(())
    }

    /// The IR's instructions, their strings slices of one shared buffer.
    fn materialize(
        &mut self,
        name: &str,
        mut pending: Vec<Pending>,
        mut text: String,
    ) -> Computation {
        // The buffer lives as long as the module.
        text.shrink_to_fit();
        let buf = Arc::new(text);
        let mut comp = Computation::with_capacity(name, pending.len());
        for pend in pending.drain(..) {
            let mut attrs = AttrList::new();
            for (k, v) in pend.attrs {
                attrs.push(Attr {
                    key: self.key(k),
                    value: v.into_value(&buf),
                });
            }
            let mut instr = Instruction::new(slice(&buf, &pend.name), pend.opcode, pend.shape);
            // Moved whole: they are the IR's own list type already.
            instr.operands = pend.operands;
            instr.attrs = attrs;
            instr.payload = pend.payload;
            if !pend.control.is_empty() {
                instr.control_predecessors = pend.control.into();
            }
            comp.push(instr);
        }
        self.pending = pending;
        comp
    }

    /// The proto's ids and order of the instructions (and their stack
    /// frames, if renumbered), for writing the module back as it was read.
    fn record_proto_order(&self, comp: &mut Computation, scans: &[Scan<'_>], order: &[usize]) {
        let ids: Vec<i64> = order.iter().map(|&i| scans[i].id).collect();
        comp.set_proto_instr_ids(&ids);
        let mut proto_order = vec![0u32; scans.len()];
        for (k, &i) in order.iter().enumerate() {
            proto_order[i] = k as u32;
        }
        comp.set_proto_instr_order(proto_order.into());
        if self.renumbered_frames {
            comp.set_proto_frame_ids(order.iter().map(|&i| scans[i].stack_frame_id).collect());
        }
    }
}

/// An instruction's shape, and the element type its proto gives.
#[derive(Clone)]
pub(super) struct InstrShape {
    shape: Arc<Shape>,
    element_type: i32,
}

/// A computation converted, with what the module needs of it.
pub(super) struct ReadComputation {
    pub(super) comp: Computation,
    /// For each instruction in id order that calls computations, the
    /// computations it calls.
    pub(super) calls: Vec<SmallVec<[CompId; 2]>>,
    pub(super) has_async_start: bool,
    /// Read without the frames numbered: each stack frame its instructions
    /// name, once, in the order XLA first meets them (instruction id order).
    pub(super) first_frames: Vec<FrameRef>,
}

/// The distinct nonzero stack frames of the instructions, each where the
/// id order first has it.
fn first_frames(scans: &[Scan<'_>], by_id: &[usize]) -> Vec<FrameRef> {
    let mut seen = crate::util::FxSet::default();
    let mut first = Vec::new();
    for &index in by_id {
        let frame = scans[index].stack_frame_id;
        if frame != 0 && seen.insert(frame) {
            first.push(FrameRef { frame, index });
        }
    }
    first
}

/// The edges pass 1 found, as positions in the computation: the operands
/// of instruction `i` are `operands[operand_start[i]..operand_start[i + 1]]`
/// (controls alike). Flat lists: one allocation each, not one per
/// instruction.
struct Edges {
    operand_start: Vec<u32>,
    operands: Vec<u32>,
    control_start: Vec<u32>,
    controls: Vec<u32>,
    /// Whether an instruction is an operand or control predecessor of any.
    has_users: Vec<bool>,
}

impl Edges {
    fn new(scans: &[Scan<'_>], id_to_local: &IdIndex) -> Result<Edges, ProtoError> {
        let n = scans.len();
        let mut edges = Edges {
            operand_start: Vec::with_capacity(n + 1),
            operands: Vec::with_capacity(scans.iter().map(|s| s.operands.len()).sum()),
            control_start: Vec::with_capacity(n + 1),
            controls: Vec::new(),
            has_users: vec![false; n],
        };
        edges.operand_start.push(0);
        edges.control_start.push(0);
        for p in scans {
            for (ids, what, into) in [
                (&p.operands[..], "operand", &mut edges.operands),
                (&p.control[..], "control predecessor", &mut edges.controls),
            ] {
                for &id in ids {
                    let Some(o) = id_to_local.get(id) else {
                        return err(format!(
                            "instruction {}: {what} id {id} does not exist in the computation",
                            p.name()
                        ));
                    };
                    edges.has_users[o] = true;
                    into.push(o as u32);
                }
            }
            edges.operand_start.push(edges.operands.len() as u32);
            edges.control_start.push(edges.controls.len() as u32);
        }
        Ok(edges)
    }

    /// The positions of instruction `i`'s operands.
    fn operands(&self, i: usize) -> &[u32] {
        &self.operands[self.operand_start[i] as usize..self.operand_start[i + 1] as usize]
    }

    /// The positions of instruction `i`'s control predecessors.
    fn controls(&self, i: usize) -> &[u32] {
        &self.controls[self.control_start[i] as usize..self.control_start[i + 1] as usize]
    }
}

/// Pass 2's results: the instructions in print order, waiting for their
/// computation's text buffer.
struct Converted {
    text: String,
    /// Each instruction's id in the IR, by position in the proto.
    ids: Vec<Option<InstrId>>,
    /// Each instruction's proto element type, by position in the proto.
    types: Vec<i32>,
    pending: Vec<Pending>,
    /// The instructions with precision configs but no operand precisions.
    bare_precision: Vec<u32>,
    /// The encoded fields of each instruction the IR does not model.
    unknown: Vec<(u32, Box<[u8]>)>,
    has_async_start: bool,
}

impl Converted {
    /// The IR ids of instructions converted already (by position in the
    /// proto); `cycle(o)` where `o` is not.
    fn converted_ids<C: Default + Extend<InstrId>>(
        &self,
        positions: &[u32],
        cycle: impl FnOnce(usize) -> ProtoError,
    ) -> Result<C, ProtoError> {
        let mut out = C::default();
        for &o in positions {
            let o = o as usize;
            match self.ids[o] {
                Some(id) => out.extend(std::iter::once(id)),
                None => return Err(cycle(o)),
            }
        }
        Ok(out)
    }

    fn operand_ids(
        &self,
        i: usize,
        scans: &[Scan<'_>],
        edges: &Edges,
    ) -> Result<SmallVec<[InstrId; 4]>, ProtoError> {
        self.converted_ids(edges.operands(i), |o| {
            ProtoError::new(format!(
                "instruction {}: its operands form a cycle (operand {} comes after it)",
                scans[i].name(),
                scans[o].name()
            ))
        })
    }

    fn control_ids(
        &self,
        i: usize,
        scan: &Scan<'_>,
        edges: &Edges,
    ) -> Result<Vec<InstrId>, ProtoError> {
        self.converted_ids(edges.controls(i), |_| {
            ProtoError::new(format!(
                "instruction {}: its control predecessors form a cycle",
                scan.name()
            ))
        })
    }
}

/// An instruction's fields that pass 2 reads in place, not into the
/// message.
pub(super) struct Decoded<'b> {
    pub(super) name: &'b str,
    pub(super) opcode: &'b str,
    pub(super) meta: Meta<'b>,
}

/// Decodes an instruction's fields but those pass 1 read into `p` (cleared
/// first if `dirty`, which then says whether any field was decoded into
/// it); its name and opcode are read in place, its metadata taken from
/// `cache`, else read in place (without allocating) when it can be.
fn decode_instruction<'b>(
    p: &mut HloInstructionProto,
    dirty: &mut bool,
    bytes: &'b [u8],
    cache: &MetadataCache,
) -> Result<Decoded<'b>, ProtoError> {
    const WHAT: &str = "HloInstructionProto";
    if *dirty {
        p.clear();
    }
    // Set before each merge: one that fails may have decoded a part.
    *dirty = false;
    let mut meta_fields: SmallVec<[&[u8]; 1]> = SmallVec::new();
    // The last of each, as prost would merge them.
    let (mut name, mut opcode): (&[u8], &[u8]) = (&[], &[]);
    fields(bytes, WHAT, |tag, wt, buf| {
        match (tag, wt) {
            // Read in pass 1.
            (3 | 35..=37, _) => skip_field(tag, wt, buf),
            (1, WireType::LengthDelimited) => {
                name = take_delimited(buf, WHAT)?;
                Ok(())
            }
            (2, WireType::LengthDelimited) => {
                opcode = take_delimited(buf, WHAT)?;
                Ok(())
            }
            (7, WireType::LengthDelimited) => {
                meta_fields.push(take_delimited(buf, WHAT)?);
                Ok(())
            }
            // XLA writes frontend attributes and statistics on every
            // instruction, most of them empty; an empty one says what
            // none does (the reader looks only at their entries).
            (68 | 82, WireType::LengthDelimited) if buf.first() == Some(&0) => {
                *buf = &buf[1..];
                Ok(())
            }
            _ => {
                *dirty = true;
                merge_into(p, tag, wt, buf, WHAT)
            }
        }
    })?;
    let mut text = |tag: u32, field: &'b [u8]| match std::str::from_utf8(field) {
        Ok(s) => Ok(s),
        // prost's own error for it.
        Err(_) => {
            *dirty = true;
            merge_into(
                p,
                tag,
                WireType::LengthDelimited,
                &mut &*encode_len(field),
                WHAT,
            )
            .map(|()| "")
        }
    };
    let (name, opcode) = (text(1, name)?, text(2, opcode)?);
    let decoded = |meta| Decoded { name, opcode, meta };
    let meta = match meta_fields[..] {
        [m] => match cache.shared(m) {
            Some(v) => return Ok(decoded(Meta::Shared(v))),
            None => MetaView::parse(m),
        },
        _ => None,
    };
    if let Some(m) = meta {
        return Ok(decoded(Meta::View(m)));
    }
    for m in meta_fields {
        *dirty = true;
        merge_into(p, 7, WireType::LengthDelimited, &mut &*encode_len(m), WHAT)?;
    }
    Ok(decoded(Meta::InMessage))
}

/// What the IR keeps of the proto beyond the text: precision configs
/// without operand precisions, fields it does not model, the thread.
fn record_proto_extras(
    comp: &mut Computation,
    data: &CompData<'_>,
    bare_precision: Vec<u32>,
    unknown: Vec<(u32, Box<[u8]>)>,
) {
    if !bare_precision.is_empty() {
        comp.set_proto_bare_precision(bare_precision.into());
    }
    if !unknown.is_empty() {
        comp.set_proto_unknown(unknown.into());
    }
    if !data.shell.unknown.is_empty() {
        comp.set_proto_unknown_own(data.shell.unknown.as_slice().into());
    }
    if !data.shell.execution_thread.is_empty() && data.shell.execution_thread != "main" {
        comp.execution_thread = Some(data.shell.execution_thread.as_str().into());
    }
}

/// A range of a computation's text buffer, as a string of the IR.
pub(super) fn slice(buf: &Arc<String>, r: &Range<usize>) -> SharedStr {
    SharedStr::slice(buf, r.start, r.end).expect("ranges are within the buffer")
}

impl PVal {
    fn into_value(self, buf: &Arc<String>) -> AttrValue {
        match self {
            PVal::Raw(r) => AttrValue::Raw(slice(buf, &r)),
            PVal::Value(v) => v,
            PVal::Metadata(m) => m.into_value(buf),
            PVal::Int(x) => AttrValue::Int(x),
            PVal::Ints(x) => AttrValue::Ints(x),
            PVal::Comp(c) => AttrValue::Comp(c),
            PVal::Comps(c) => AttrValue::Comps(c),
            PVal::Str(r) => AttrValue::Str(slice(buf, &r)),
            PVal::BackendConfig(r) => AttrValue::BackendConfig(slice(buf, &r)),
            PVal::Direction(d) => AttrValue::Direction(d),
            PVal::CompareType(t) => AttrValue::CompareType(t),
            PVal::ApiVersion(a) => AttrValue::ApiVersion(a),
        }
    }
}
