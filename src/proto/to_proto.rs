//! IR -> `HloModuleProto`, as XLA's `HloModule::ToProto` writes it.
//!
//! Ids: computation `k` (1-based, in print order) gets id `k`; its `j`-th
//! instruction (1-based, in print order) gets `k << 32 | j`, the scheme of
//! XLA's own protos. Computations are written in print order, which XLA's
//! printer makes callees-first, as XLA's loader needs. Attributes kept as
//! text are parsed back into their fields.
//!
//! A module read from a proto is written back as it was read: the proto's
//! ids where they are still unique (new computations and instructions get
//! fresh ones), its computation and instruction order while that is still
//! callees first and operands first, and its own stack-frame tables and
//! ids while the IR's tables are the ones the reader made.

// Messages are `Ext` wrappers (known fields behind `Deref`), which struct
// literals cannot fill: fields are set one by one.
#![allow(clippy::field_reassign_with_default)]

use super::attrs;
use super::err;
use super::messages::*;
use super::read_async::async_chain_start;
use super::read_literal::{gather, physical_positions};
use super::{stays_on_async_start, ProtoError};
use crate::ir::instruction::{ApiVersion, AttrValue, ComparisonType};
use crate::ir::literal::{Literal, LiteralData};
use crate::ir::module::NameUniquer;
use crate::ir::shape::{ArrayShape, Layout, Shape};
use crate::ir::{CompId, Computation, InstrId, Instruction, Module, Opcode, Payload, SharedStr};
use crate::util::{FxMap, FxSet};
use prost::Message;
use std::sync::Arc;

/// The module as a proto message.
pub fn module_to_proto(module: &Module) -> Result<HloModuleProto, ProtoError> {
    let mut sink = Collect::default();
    let mut p = Writer::new(module)?.module(&mut sink)?;
    p.computations = sink.done;
    Ok(p)
}

/// The module as an encoded `HloModuleProto`.
pub fn module_to_proto_bytes(module: &Module) -> Result<Vec<u8>, ProtoError> {
    let mut out = Vec::new();
    write_module_proto(module, &mut out).map_err(|e| match e {
        WriteError::Proto(e) => e,
        WriteError::Io(e) => ProtoError::new(e.to_string()),
    })?;
    Ok(out)
}

/// Why a module could not be written as a proto.
#[derive(Debug)]
pub enum WriteError {
    /// The module cannot be said as a proto.
    Proto(ProtoError),
    /// The writer failed.
    Io(std::io::Error),
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::Proto(e) => e.fmt(f),
            WriteError::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for WriteError {}

/// Writes the module as an encoded `HloModuleProto` to `out`, a
/// computation at a time: memory is the module's, one computation's
/// encoded bytes, and one instruction's message. The bytes are those of
/// [`module_to_proto`]'s message encoded (fields in tag order, each
/// message's unknown fields last).
pub fn write_module_proto(module: &Module, out: &mut dyn std::io::Write) -> Result<(), WriteError> {
    let writer = Writer::new(module).map_err(WriteError::Proto)?;
    let mut sink = Stream {
        out,
        comp: Vec::new(),
        io: None,
    };
    let r = writer.module(&mut sink);
    if let Some(e) = sink.io.take() {
        return Err(WriteError::Io(e));
    }
    let mut p = r.map_err(WriteError::Proto)?;
    // Name and entry name (fields 1 and 2) went first, in `start`.
    p.name.clear();
    p.entry_computation_name.clear();
    sink.out
        .write_all(&p.encode_to_vec())
        .map_err(WriteError::Io)
}

/// Where [`Writer::module`] hands each computation and its instructions.
trait CompSink {
    /// The module's name and entry name are known.
    fn start(&mut self, module: &HloModuleProto) -> Result<(), ProtoError>;
    fn begin_computation(&mut self, name: &str) -> Result<(), ProtoError>;
    fn instruction(&mut self, ip: &HloInstructionProto) -> Result<(), ProtoError>;
    /// The computation's other fields (its `instructions` empty).
    fn end_computation(&mut self, cp: HloComputationProto) -> Result<(), ProtoError>;
}

/// Builds the whole message ([`module_to_proto`]).
#[derive(Default)]
struct Collect {
    instrs: Vec<HloInstructionProto>,
    done: Vec<HloComputationProto>,
}

impl CompSink for Collect {
    fn start(&mut self, _: &HloModuleProto) -> Result<(), ProtoError> {
        Ok(())
    }

    fn begin_computation(&mut self, _: &str) -> Result<(), ProtoError> {
        Ok(())
    }

    fn instruction(&mut self, ip: &HloInstructionProto) -> Result<(), ProtoError> {
        self.instrs.push(ip.clone());
        Ok(())
    }

    fn end_computation(&mut self, mut cp: HloComputationProto) -> Result<(), ProtoError> {
        cp.instructions = std::mem::take(&mut self.instrs);
        self.done.push(cp);
        Ok(())
    }
}

/// Encodes as it goes ([`write_module_proto`]): a computation's bytes are
/// its name, each instruction as it comes, then its other fields; the
/// module's, its name and entry name, the computations, then the rest.
/// The same bytes as encoding the whole message, as fields go in tag order.
struct Stream<'w> {
    out: &'w mut dyn std::io::Write,
    comp: Vec<u8>,
    /// The writer's failure, reported as such.
    io: Option<std::io::Error>,
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

impl CompSink for Stream<'_> {
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

    fn begin_computation(&mut self, name: &str) -> Result<(), ProtoError> {
        self.comp.clear();
        if !name.is_empty() {
            prost::encoding::string::encode(1, &name.to_string(), &mut self.comp);
        }
        Ok(())
    }

    fn instruction(&mut self, ip: &HloInstructionProto) -> Result<(), ProtoError> {
        prost::encoding::message::encode(2, ip, &mut self.comp);
        Ok(())
    }

    fn end_computation(&mut self, mut cp: HloComputationProto) -> Result<(), ProtoError> {
        cp.name.clear();
        cp.encode_raw(&mut self.comp);
        let mut head = Vec::with_capacity(10);
        prost::encoding::encode_key(3, prost::encoding::WireType::LengthDelimited, &mut head);
        prost::encoding::encode_varint(self.comp.len() as u64, &mut head);
        self.write(&head)?;
        let comp = std::mem::take(&mut self.comp);
        let r = self.write(&comp);
        self.comp = comp;
        r
    }
}

/// Sets an instruction's stack frame id to the proto's own, if kept.
fn set_frame(ip: &mut HloInstructionProto, frame: Option<&i32>) {
    if let (Some(&id), Some(md)) = (frame, &mut ip.metadata) {
        md.stack_frame_id = id;
    }
}

pub(crate) fn shape_to_proto(s: &Shape) -> ShapeProto {
    let mut p = ShapeProto::default();
    match s {
        Shape::Tuple(elems) => {
            p.element_type = 13;
            p.tuple_shapes = elems.iter().map(shape_to_proto).collect();
        }
        Shape::Token => p.element_type = 17,
        Shape::Opaque => p.element_type = 14,
        Shape::Array(a) => array_to_proto(a, &mut p),
    }
    p
}

fn array_to_proto(a: &ArrayShape, p: &mut ShapeProto) {
    p.element_type = a.element_type as i32;
    p.dimensions = a.dims.clone();
    p.is_dynamic_dimension = (0..a.rank()).map(|i| a.is_dynamic(i)).collect();
    if let Some(l) = &a.layout {
        p.layout = Some(layout_to_proto(l));
    }
}

fn layout_to_proto(l: &Layout) -> LayoutProto {
    let mut p = LayoutProto::default();
    p.minor_to_major = l.minor_to_major.clone();
    p.tail_padding_alignment_in_elements = 1;
    if let Some(x) = &l.extras {
        p.tiles = x
            .tiles
            .iter()
            .map(|t| {
                let mut tp = TileProto::default();
                tp.dimensions = t.0.clone();
                tp
            })
            .collect();
        if let Some(n) = x.tail_padding_alignment {
            p.tail_padding_alignment_in_elements = n;
        }
        p.element_size_in_bits = x.element_size_bits.unwrap_or(0);
        p.memory_space = x.memory_space.unwrap_or(0);
    }
    p
}

fn literal_to_proto(l: &Literal) -> LiteralProto {
    let mut p = LiteralProto::default();
    p.shape = Some(shape_to_proto(&l.shape));
    let ty = l.shape.element_type();
    use crate::ir::PrimitiveType as T;
    // XLA's literals hold their values in the order of their layout; the
    // IR in row-major order.
    let physical = match &l.shape {
        Shape::Array(a) => a
            .layout
            .as_ref()
            .and_then(|layout| physical_positions(a, &layout.minor_to_major))
            .filter(|to| to.len() == l.data.len())
            .map(|to| {
                let mut from = vec![0; to.len()];
                for (i, &p) in to.iter().enumerate() {
                    from[p] = i;
                }
                gather(&l.data, &from)
            }),
        _ => None,
    };
    match physical.as_ref().unwrap_or(&l.data) {
        LiteralData::Pred(v) => p.preds = v.clone(),
        LiteralData::Int(v) => match ty {
            T::S8 => p.s8s = v.iter().map(|&x| x as u8).collect(),
            T::S4 => p.s4s = v.iter().map(|&x| x as u8).collect(),
            T::S2 => p.s2s = v.iter().map(|&x| x as u8).collect(),
            T::S1 => p.s1s = v.iter().map(|&x| x as u8).collect(),
            T::S16 => p.s16s = v.iter().flat_map(|&x| (x as i16).to_le_bytes()).collect(),
            T::S32 => p.s32s = v.iter().map(|&x| x as i32).collect(),
            _ => p.s64s = v.clone(),
        },
        LiteralData::UInt(v) => match ty {
            T::U8 => p.u8s = v.iter().map(|&x| x as u8).collect(),
            T::U4 => p.u4s = v.iter().map(|&x| x as u8).collect(),
            T::U2 => p.u2s = v.iter().map(|&x| x as u8).collect(),
            T::U1 => p.u1s = v.iter().map(|&x| x as u8).collect(),
            T::U16 => p.u16s = v.iter().flat_map(|&x| (x as u16).to_le_bytes()).collect(),
            T::U32 => p.u32s = v.iter().map(|&x| x as u32).collect(),
            _ => p.u64s = v.clone(),
        },
        LiteralData::F16(v) => p.f16s = v.iter().flat_map(|x| x.to_bits().to_le_bytes()).collect(),
        LiteralData::Bf16(v) => {
            p.bf16s = v.iter().flat_map(|x| x.to_bits().to_le_bytes()).collect()
        }
        LiteralData::F32(v) => p.f32s = v.clone(),
        LiteralData::F64(v) => p.f64s = v.clone(),
        LiteralData::C64(v) => p.c64s = v.iter().flat_map(|&(a, b)| [a, b]).collect(),
        LiteralData::C128(v) => p.c128s = v.iter().flat_map(|&(a, b)| [a, b]).collect(),
        LiteralData::MiniFloat(v) => {
            let field = match ty {
                T::F4E2M1FN => &mut p.f4e2m1fns,
                T::F8E3M4 => &mut p.f8e3m4s,
                T::F8E4M3B11FNUZ => &mut p.f8e4m3b11fnuzs,
                T::F8E4M3FN => &mut p.f8e4m3fns,
                T::F8E4M3FNUZ => &mut p.f8e4m3fnuzs,
                T::F8E4M3 => &mut p.f8e4m3s,
                T::F8E5M2FNUZ => &mut p.f8e5m2fnuzs,
                T::F8E5M2 => &mut p.f8e5m2s,
                _ => &mut p.f8e8m0fnus,
            };
            *field = v.clone();
        }
        LiteralData::Tuple(items) => {
            p.tuple_literals = items.iter().map(literal_to_proto).collect()
        }
        LiteralData::Elided | LiteralData::Empty => {}
    }
    p
}

/// A computation's parameters (with their names) and result.
fn program_shape(comp: &Computation, root: InstrId) -> ProgramShapeProto {
    let mut ps = ProgramShapeProto::default();
    for pid in comp.parameters() {
        let pi = comp.instr(pid);
        ps.parameters.push(shape_to_proto(&pi.shape));
        ps.parameter_names.push(pi.name.to_string());
    }
    ps.result = Some(shape_to_proto(&comp.instr(root).shape));
    ps
}

struct Writer<'m> {
    module: &'m Module,
    comp_ids: FxMap<CompId, i64>,
    /// The computations of async ops written as sugar.
    wrapped: Vec<Wrapped>,
    /// Each sugared `-start`, `-update` and `-done`: its entry in `wrapped`.
    wrapped_of: FxMap<(CompId, InstrId), usize>,
}

/// An async op written as sugar (`custom-call-start(...)`) is, in a proto
/// as in XLA, an `async-start` calling a computation of parameters and the
/// wrapped op, made here.
struct Wrapped {
    /// The computation of the `async-start`, written after this one.
    caller: CompId,
    comp: Computation,
    id: i64,
    /// `async_execution_thread`, if not the main one.
    thread: Option<String>,
}

impl<'m> Writer<'m> {
    fn new(module: &'m Module) -> Result<Writer<'m>, ProtoError> {
        // Ids a proto it was read from gave, where unique; new ones above.
        let mut used = FxSet::default();
        let mut comp_ids: FxMap<CompId, i64> = FxMap::default();
        for (c, comp) in module.computations() {
            if let Some(id) = comp.proto_id.filter(|&id| id > 0 && used.insert(id)) {
                comp_ids.insert(c, id);
            }
        }
        let mut next = used.iter().max().map_or(1, |m| m + 1);
        for (i, c) in module.computation_ids().enumerate() {
            if comp_ids.contains_key(&c) {
                continue;
            }
            let mut id = i as i64 + 1;
            if used.contains(&id) {
                id = next;
                next += 1;
            }
            used.insert(id);
            comp_ids.insert(c, id);
        }
        let mut w = Writer {
            module,
            comp_ids,
            wrapped: Vec::new(),
            wrapped_of: FxMap::default(),
        };
        w.wrap_async_sugar(used.iter().max().map_or(1, |m| m + 1))?;
        Ok(w)
    }

    /// Makes the computation of each sugared async op (ids from `next`),
    /// with names no other computation or instruction has.
    fn wrap_async_sugar(&mut self, mut next: i64) -> Result<(), ProtoError> {
        let m = self.module;
        let mut names: Option<NameUniquer> = None;
        for (c, comp) in m.computations() {
            for (i, instr) in comp.instructions() {
                // `-update`s and `-done`s below, once every start has its
                // computation.
                let (Some(op), Opcode::AsyncStart) = (instr.async_wrapped, instr.opcode) else {
                    continue;
                };
                let at = || format!("{}: {}", comp.name, instr.name);
                let names = names.get_or_insert_with(|| {
                    let mut n = NameUniquer::default();
                    for (_, comp) in m.computations() {
                        n.register(&comp.name);
                        for (_, i) in comp.instructions() {
                            n.register(&i.name);
                        }
                    }
                    n
                });
                // The start's shape is ((operands...), result, context...).
                let result = match &*instr.shape {
                    Shape::Tuple(e) if e.len() >= 2 => e[1].clone(),
                    _ => return err(format!("{}: an async-start's shape is a tuple", at())),
                };
                let mut wrapped = Computation::new(names.unique("async_wrapped"));
                let mut params = Vec::new();
                for (k, &o) in instr.operands().iter().enumerate() {
                    let mut p = Instruction::new(
                        SharedStr::from(&*names.unique("async_param")),
                        Opcode::Parameter,
                        Arc::clone(&comp.instr(o).shape),
                    );
                    p.payload = Payload::Parameter(k as i64);
                    params.push(wrapped.push(p));
                }
                let mut root = Instruction::new(
                    SharedStr::from(&*names.unique(op.name())),
                    op,
                    Arc::new(result),
                )
                .with_operands(params);
                root.attrs = instr
                    .attrs
                    .iter()
                    .filter(|a| !stays_on_async_start(&a.key))
                    .cloned()
                    .collect();
                let root = wrapped.push(root);
                wrapped.set_root(root);
                let thread = match instr.attr("async_execution_thread") {
                    Some(AttrValue::Str(t)) => Some(t.to_string()),
                    _ => None,
                };
                self.wrapped_of.insert((c, i), self.wrapped.len());
                self.wrapped.push(Wrapped {
                    caller: c,
                    comp: wrapped,
                    id: next,
                    thread,
                });
                next += 1;
            }
        }
        // `-update`s and `-done`s: their chain's start's computation.
        for (c, comp) in m.computations() {
            for (i, instr) in comp.instructions() {
                if instr.async_wrapped.is_none() || instr.opcode == Opcode::AsyncStart {
                    continue;
                }
                let w = async_chain_start(comp, i)
                    .and_then(|s| self.wrapped_of.get(&(c, s)).copied())
                    .ok_or_else(|| {
                        ProtoError::new(format!(
                            "{}: {}: its async-start is not sugar",
                            comp.name, instr.name
                        ))
                    })?;
                self.wrapped_of.insert((c, i), w);
            }
        }
        Ok(())
    }

    /// The computations in the order they are written: that of the proto
    /// they were read from while it is still callees first and the module
    /// has no new ones; else print order.
    fn comp_order(&self) -> Vec<CompId> {
        let m = self.module;
        let print: Vec<CompId> = m.computation_ids().collect();
        let mut by_proto: Vec<(usize, CompId)> = Vec::with_capacity(print.len());
        for &c in &print {
            match m.comp(c).proto_position {
                Some(p) => by_proto.push((p, c)),
                None => return print,
            }
        }
        by_proto.sort_unstable();
        if by_proto.windows(2).any(|w| w[0].0 == w[1].0) {
            return print;
        }
        let mut placed: FxSet<CompId> = FxSet::default();
        for &(_, c) in &by_proto {
            let callees_first = m.comp(c).instructions().all(|(_, i)| {
                let called: Vec<CompId> = i.called_computations().collect();
                called.iter().all(|d| placed.contains(d))
            });
            if !callees_first {
                return print;
            }
            placed.insert(c);
        }
        by_proto.into_iter().map(|(_, c)| c).collect()
    }

    /// Each computation's instructions in the order they are written, and
    /// their ids: the ids a proto it was read from gave, where unique in
    /// the module; else `computation << 32 | n` (1-based, in written
    /// order), or, if that is taken, ids above every other.
    ///
    /// Then the same for the computations of async sugar, in order.
    #[allow(clippy::type_complexity)]
    fn instruction_ids(
        &self,
    ) -> (
        FxMap<CompId, (Vec<InstrId>, FxMap<InstrId, i64>)>,
        Vec<(Vec<InstrId>, FxMap<InstrId, i64>)>,
    ) {
        let m = self.module;
        let scheduled = self.scheduled();
        let mut out: FxMap<CompId, (Vec<InstrId>, FxMap<InstrId, i64>)> = FxMap::default();
        let mut used = FxSet::default();
        for (id, comp) in m.computations() {
            let order = match comp.proto_instr_order() {
                Some(order) => order,
                None if scheduled => comp.schedule(),
                None => comp.post_order(),
            };
            let mut local = FxMap::default();
            for &i in &order {
                if let Some(p) = comp.proto_instr_id(i).filter(|&p| used.insert(p)) {
                    local.insert(i, p);
                }
            }
            out.insert(id, (order, local));
        }
        let mut next = used.iter().max().map_or(1, |m| m + 1);
        for (id, _) in m.computations() {
            let cid = self.comp_ids[&id];
            let (order, local) = out.get_mut(&id).expect("every computation");
            for (j, &i) in order.iter().enumerate() {
                if local.contains_key(&i) {
                    continue;
                }
                let mut p = (cid << 32) | (j as i64 + 1);
                if used.contains(&p) {
                    p = next;
                    next += 1;
                }
                used.insert(p);
                local.insert(i, p);
            }
        }
        let wrapped = self
            .wrapped
            .iter()
            .map(|w| {
                let order = w.comp.post_order();
                let mut local = FxMap::default();
                for (j, &i) in order.iter().enumerate() {
                    let mut p = (w.id << 32) | (j as i64 + 1);
                    if !used.insert(p) {
                        p = next;
                        next += 1;
                        used.insert(p);
                    }
                    local.insert(i, p);
                }
                (order, local)
            })
            .collect();
        (out, wrapped)
    }

    fn scheduled(&self) -> bool {
        self.module.is_scheduled()
    }

    /// The module as a proto, each computation handed to `sink` as it is
    /// made (its instructions one by one), so that only one instruction's
    /// message exists at a time when the sink encodes them. Returns the
    /// module's own fields, with no computations.
    fn module(&self, sink: &mut dyn CompSink) -> Result<HloModuleProto, ProtoError> {
        let m = self.module;
        let mut p = HloModuleProto::default();
        // The fields a proto it was read from had and the IR does not model.
        if let Some(extras) = &m.proto_extras {
            p.merge(&extras[..])
                .map_err(|e| ProtoError::decode("HloModuleProto", e))?;
        }
        p.name = m.name.to_string();
        let entry = m
            .entry_opt()
            .ok_or_else(|| ProtoError::new("the module has no entry computation"))?;
        p.entry_computation_name = m.comp(entry).name.to_string();
        p.entry_computation_id = self.comp_ids[&entry];
        sink.start(&p)?;
        let scheduled = self.scheduled();
        let fusion_called: FxSet<CompId> = m
            .computations()
            .flat_map(|(_, c)| {
                c.instructions()
                    .filter(|(_, i)| i.opcode == Opcode::Fusion)
                    .flat_map(|(_, i)| i.called_computations().collect::<Vec<_>>())
                    .collect::<Vec<_>>()
            })
            .collect();
        let mut schedule = HloScheduleProto::default();
        let (mut instr_ids, wrapped_ids) = self.instruction_ids();
        // The proto's own stack-frame tables, while the IR's are still the
        // ones read: each instruction's frame id in them, if every one has
        // one (found in a first walk, so that the second can write each
        // instruction as it is made).
        let proto_frames = m
            .proto_frames
            .as_deref()
            .filter(|f| m.stack_frames.as_ref() == Some(&f.read_as));
        let frame_ids: Option<Vec<Vec<i32>>> = match proto_frames {
            Some(f) => self.proto_frame_ids(f, &instr_ids, &wrapped_ids)?,
            None => None,
        };
        let mut frame_lists = frame_ids.as_ref().map(|ids| ids.iter());
        let mut next_frames = || -> Option<&Vec<i32>> { frame_lists.as_mut()?.next() };
        for id in self.comp_order() {
            // The computations of its async sugar go first (callees first).
            for (w, (order, local)) in self.wrapped.iter().zip(&wrapped_ids) {
                if w.caller != id {
                    continue;
                }
                let frames = next_frames();
                let mut cp = HloComputationProto::default();
                cp.name = w.comp.name.to_string();
                cp.id = w.id;
                sink.begin_computation(&cp.name)?;
                for (k, &i) in order.iter().enumerate() {
                    let mut ip = self
                        .instruction(&w.comp, i, local[&i], local)
                        .map_err(|e| e.context(format!("{}: {}", cp.name, w.comp.instr(i).name)))?;
                    set_frame(&mut ip, frames.and_then(|f| f.get(k)));
                    sink.instruction(&ip)?;
                }
                let root = w.comp.root();
                cp.root_id = local[&root];
                cp.program_shape = Some(program_shape(&w.comp, root));
                if let Some(t) = &w.thread {
                    cp.execution_thread = t.clone();
                }
                if scheduled {
                    let mut seq = InstructionSequence::default();
                    seq.instruction_ids = order.iter().map(|i| local[i]).collect();
                    schedule.sequences.insert(w.id, seq);
                }
                sink.end_computation(cp)?;
            }
            let frames = next_frames();
            let comp = m.comp(id);
            let cid = self.comp_ids[&id];
            let (order, local) = instr_ids.remove(&id).expect("every computation");
            let mut cp = HloComputationProto::default();
            cp.unknown = comp.proto_unknown_own().to_vec();
            cp.name = comp.name.to_string();
            cp.id = cid;
            sink.begin_computation(&cp.name)?;
            for (k, &i) in order.iter().enumerate() {
                let mut ip = self
                    .instruction(comp, i, local[&i], &local)
                    .map_err(|e| e.context(format!("{}: {}", comp.name, comp.instr(i).name)))?;
                if comp.instr(i).opcode == Opcode::AsyncStart {
                    if let Some(&w) = self.wrapped_of.get(&(id, i)) {
                        ip.called_computation_ids = vec![self.wrapped[w].id];
                    }
                }
                set_frame(&mut ip, frames.and_then(|f| f.get(k)));
                sink.instruction(&ip)?;
            }
            let root = comp
                .root_opt()
                .ok_or_else(|| ProtoError::new(format!("{} has no root", comp.name)))?;
            cp.root_id = local[&root];
            cp.program_shape = Some(program_shape(comp, root));
            cp.is_fusion_computation = fusion_called.contains(&id);
            if let Some(t) = &comp.execution_thread {
                cp.execution_thread = t.to_string();
            }
            if scheduled && !cp.is_fusion_computation {
                // The schedule, which may differ from the proto's own order
                // of a module read from one.
                let mut seq = InstructionSequence::default();
                seq.instruction_ids = comp.schedule().iter().map(|i| local[i]).collect();
                schedule.sequences.insert(cid, seq);
            }
            sink.end_computation(cp)?;
        }
        if scheduled {
            p.schedule = Some(schedule);
        }
        // Host program shape: the written layout, or the entry's own.
        let layout = m
            .entry_computation_layout()
            .cloned()
            .or_else(|| m.derived_entry_layout());
        if let Some(l) = layout {
            let mut ps = ProgramShapeProto::default();
            ps.parameters = l.parameters.iter().map(shape_to_proto).collect();
            ps.result = Some(shape_to_proto(&l.result));
            // XLA's `ComputationLayout::ComputeProgramShape` names them so.
            ps.parameter_names = (0..ps.parameters.len()).map(|i| format!("p{i}")).collect();
            p.host_program_shape = Some(ps);
        }
        let mut alias = HloInputOutputAliasProto::default();
        let mut donor = HloBufferDonorProto::default();
        let mut fa = FrontendAttributes::default();
        for a in &m.header {
            match (&*a.key, &a.value) {
                ("input_output_alias", AttrValue::InputOutputAlias(v)) => {
                    alias = attrs::to_input_output_alias(v)
                }
                ("buffer_donor", AttrValue::BufferDonor(v)) => donor = attrs::to_buffer_donor(v),
                ("frontend_attributes", AttrValue::FrontendAttributes(v)) => {
                    fa = attrs::to_frontend_attributes(v)
                }
                ("origin_recovery_table", AttrValue::RecoveryTable(v)) => {
                    p.original_value_recovery_table = Some(recovery_table(v)?)
                }
                ("debug_attributes", AttrValue::DebugAttributes(v)) => {
                    p.debug_attributes = attrs::to_debug_attributes(v)
                }
                (
                    key @ ("input_output_alias"
                    | "buffer_donor"
                    | "frontend_attributes"
                    | "origin_recovery_table"
                    | "debug_attributes"),
                    _,
                ) => return err(format!("header attribute {key}: unexpected value")),
                _ => {}
            }
        }
        p.input_output_alias = Some(alias);
        p.buffer_donor = Some(donor);
        p.frontend_attributes = Some(fa);
        let frames_kept = match (proto_frames, &frame_ids) {
            (Some(f), Some(_)) => Some(&f.original),
            _ => None,
        };
        if let Some(sf) = frames_kept.or(m.stack_frames.as_ref()) {
            let mut idx = StackFrameIndexProto::default();
            idx.file_names = sf.file_names.iter().map(|s| s.to_string()).collect();
            idx.function_names = sf.function_names.iter().map(|s| s.to_string()).collect();
            idx.file_locations = sf
                .file_locations
                .iter()
                .map(|l| {
                    let mut x = FileLocationProto::default();
                    x.file_name_id = l.file_name_id as i32;
                    x.function_name_id = l.function_name_id as i32;
                    x.line = l.line as i32;
                    x.end_line = l.end_line as i32;
                    x.column = l.column as i32;
                    x.end_column = l.end_column as i32;
                    x
                })
                .collect();
            idx.stack_frames = sf
                .stack_frames
                .iter()
                .map(|f| {
                    let mut x = StackFrameProto::default();
                    x.file_location_id = f.file_location_id as i32;
                    x.parent_frame_id = f.parent_frame_id as i32;
                    x
                })
                .collect();
            p.stack_frame_index = Some(idx);
        }
        Ok(p)
    }

    /// For a module whose stack-frame tables are still the ones read from
    /// its proto: each instruction's frame id in the proto's own tables,
    /// per computation in writing order; `None` if one has no such id
    /// (then the IR's tables are written).
    #[allow(clippy::type_complexity)]
    fn proto_frame_ids(
        &self,
        f: &crate::ir::ProtoFrames,
        instr_ids: &FxMap<CompId, (Vec<InstrId>, FxMap<InstrId, i64>)>,
        wrapped_ids: &[(Vec<InstrId>, FxMap<InstrId, i64>)],
    ) -> Result<Option<Vec<Vec<i32>>>, ProtoError> {
        let m = self.module;
        let mut reverse: FxMap<i64, i32> = FxMap::default();
        for (k, &new) in f.renumbered.iter().enumerate() {
            if new != 0 {
                reverse.entry(new).or_insert(k as i32 + 1);
            }
        }
        let mut out = Vec::new();
        for id in self.comp_order() {
            for (w, (order, _)) in self.wrapped.iter().zip(wrapped_ids) {
                if w.caller == id {
                    out.push(vec![0; order.len()]);
                }
            }
            let comp = m.comp(id);
            let (order, local) = &instr_ids[&id];
            let mut comp_frames = Vec::with_capacity(order.len());
            for &i in order {
                let ip = self
                    .instruction(comp, i, local[&i], local)
                    .map_err(|e| e.context(format!("{}: {}", comp.name, comp.instr(i).name)))?;
                let printed = ip.metadata.as_ref().map_or(0, |md| md.stack_frame_id);
                let orig = comp.proto_frame_id(i).filter(|&o| {
                    usize::try_from(o - 1)
                        .ok()
                        .and_then(|k| f.renumbered.get(k))
                        == Some(&i64::from(printed))
                });
                match orig.or_else(|| reverse.get(&i64::from(printed)).copied()) {
                    _ if printed == 0 => comp_frames.push(0),
                    Some(o) => comp_frames.push(o),
                    None => return Ok(None),
                }
            }
            out.push(comp_frames);
        }
        Ok(Some(out))
    }

    fn comp_id(&self, c: CompId) -> i64 {
        self.comp_ids.get(&c).copied().unwrap_or(0)
    }

    fn instruction(
        &self,
        comp: &Computation,
        instr_id: InstrId,
        id: i64,
        local: &FxMap<InstrId, i64>,
    ) -> Result<HloInstructionProto, ProtoError> {
        let instr = comp.instr(instr_id);
        let mut p = HloInstructionProto::default();
        // Fields of a newer XLA it was read with, as they came.
        p.unknown = comp.proto_unknown(instr_id).to_vec();
        p.name = instr.name.to_string();
        p.opcode = instr.opcode.name().to_string();
        p.shape = Some(shape_to_proto(&instr.shape));
        p.id = id;
        p.operand_ids = instr.operands().iter().map(|o| local[o]).collect();
        p.control_predecessor_ids = instr
            .control_predecessors()
            .iter()
            .map(|o| local[o])
            .collect();
        p.metadata = Some(OpMetadata::default());
        p.frontend_attributes = Some(FrontendAttributes::default());
        p.statistics_viz = Some(StatisticsViz::default());
        match &instr.payload {
            Payload::Parameter(n) => p.parameter_number = *n,
            Payload::Constant(l) => {
                if l.is_elided() {
                    return err("a constant printed elided ({...}) has no value to write");
                }
                p.literal = Some(literal_to_proto(l));
            }
            Payload::None => {}
        }
        let op = instr.opcode;
        if op == Opcode::Compare {
            let ty = comp.instr(instr.operand(0)).shape.element_type();
            let t = instr
                .comparison_type()
                .unwrap_or_else(|| ComparisonType::default_for(ty));
            p.comparison_type = t.name().to_string();
        }
        if op == Opcode::CustomCall {
            p.custom_call_api_version = 1; // API_VERSION_ORIGINAL unless written
        }
        let mut while_comps: (Option<i64>, Option<i64>) = (None, None);
        for a in &instr.attrs {
            let key: &str = &a.key;
            if instr.async_wrapped.is_some() && !stays_on_async_start(key) {
                continue; // the wrapped op's, written in its computation
            }
            match (key, &a.value) {
                ("control-predecessors", _) => {}
                ("dimensions", AttrValue::Ints(v)) => p.dimensions = v.to_vec(),
                ("index", AttrValue::Int(v)) => p.tuple_index = *v,
                ("iota_dimension", AttrValue::Int(v)) => p.dimensions = vec![*v],
                ("condition", AttrValue::Comp(c)) => while_comps.0 = Some(self.comp_id(*c)),
                ("body", AttrValue::Comp(c)) => while_comps.1 = Some(self.comp_id(*c)),
                (_, AttrValue::Comp(c)) => p.called_computation_ids.push(self.comp_id(*c)),
                (_, AttrValue::Comps(cs)) => p
                    .called_computation_ids
                    .extend(cs.iter().map(|c| self.comp_id(*c))),
                ("custom_call_target", AttrValue::Str(s)) => p.custom_call_target = s.to_string(),
                ("backend_config", AttrValue::BackendConfig(s) | AttrValue::Str(s)) => {
                    p.backend_config = s.as_bytes().to_vec()
                }
                ("direction", AttrValue::Direction(d)) => {
                    p.comparison_direction = d.name().to_string()
                }
                ("type", AttrValue::CompareType(_)) => {}
                ("api_version", AttrValue::ApiVersion(v)) => {
                    p.custom_call_api_version = match v {
                        ApiVersion::Unspecified => 0,
                        ApiVersion::Original => 1,
                        ApiVersion::StatusReturning => 2,
                        ApiVersion::StatusReturningUnified => 3,
                        ApiVersion::TypedFfi => 4,
                    }
                }
                _ => attr_to_proto(&mut p, key, &a.value)?,
            }
        }
        if let (Some(c), Some(b)) = while_comps {
            // XLA keeps the body first.
            p.called_computation_ids = vec![b, c];
        }
        // What XLA's `ToProto` writes where the text says nothing: the
        // group counts and precision config of convolutions and custom
        // calls, and a default precision per operand of dots and
        // convolutions (as XLA's parser fills them in).
        if matches!(op, Opcode::Convolution | Opcode::CustomCall) {
            p.feature_group_count = p.feature_group_count.max(1);
            p.batch_group_count = p.batch_group_count.max(1);
        }
        if op == Opcode::Outfeed && p.outfeed_shape.is_none() {
            // XLA's parser takes the data operand's shape, and its loader
            // needs one.
            if let Some(&data) = instr.operands().first() {
                p.outfeed_shape = Some(shape_to_proto(&comp.instr(data).shape));
            }
        }
        if matches!(
            op,
            Opcode::Convolution | Opcode::ReduceWindow | Opcode::SelectAndScatter
        ) {
            // XLA writes one, if empty (`window=` left out), and its loader
            // needs it for a convolution.
            p.window.get_or_insert_with(Default::default);
        }
        if matches!(op, Opcode::Dot | Opcode::Convolution | Opcode::CustomCall) {
            let pc = p.precision_config.get_or_insert_with(Default::default);
            if pc.operand_precision.is_empty() && !comp.proto_bare_precision(instr_id) {
                pc.operand_precision = vec![0; instr.operands().len()];
            }
        }
        Ok(p)
    }
}

/// A typed attribute, into its proto fields.
fn attr_to_proto(p: &mut HloInstructionProto, key: &str, v: &AttrValue) -> Result<(), ProtoError> {
    use AttrValue as V;
    let unexpected = || err(format!("attribute {key}: unexpected value"));
    let int32 = |x: i64| {
        i32::try_from(x).map_err(|_| ProtoError::new(format!("attribute {key}={x}: out of range")))
    };
    let is_gather = p.opcode == "gather";
    let is_rng_bit_generator = p.opcode == "rng-bit-generator";
    let is_cholesky = p.opcode == "cholesky";
    match (key, v) {
        ("metadata", V::Metadata(m)) => p.metadata = Some(attrs::to_metadata(m)),
        ("frontend_attributes", V::FrontendAttributes(fa)) => {
            p.frontend_attributes = Some(attrs::to_frontend_attributes(fa))
        }
        ("sharding", V::Sharding(s)) => p.sharding = Some(attrs::to_sharding(s)),
        ("is_stable", V::Bool(b)) => p.is_stable = *b,
        ("largest", V::Bool(b)) => p.largest = *b,
        ("is_composite", V::Bool(b)) => p.is_composite = *b,
        ("custom_call_has_side_effect", V::Bool(b)) => p.custom_call_has_side_effect = *b,
        ("indices_are_sorted", V::Bool(b)) => p.indices_are_sorted = *b,
        ("unique_indices", V::Bool(b)) => p.unique_indices = *b,
        ("use_global_device_ids", V::Bool(b)) => p.use_global_device_ids = *b,
        ("constrain_layout", V::Bool(b)) => p.constrain_layout = *b,
        ("is_host_transfer", V::Bool(b)) => p.is_host_transfer = *b,
        ("is_reverse", V::Bool(b)) => p.is_reverse = *b,
        ("has_dynamic_root", V::Bool(b)) => p.has_dynamic_root = *b,
        // XLA's `TriState`.
        ("is_associative", V::Bool(b)) => p.is_associative = if *b { 1 } else { 2 },
        ("k", V::Int(x)) => p.k = *x,
        ("feature_index", V::Int(x)) => p.feature_index = *x,
        ("channel_id", V::Int(x)) => p.channel_id = *x,
        ("feature_group_count", V::Int(x)) => p.feature_group_count = *x,
        ("batch_group_count", V::Int(x)) => p.batch_group_count = *x,
        ("num_carries", V::Int(x)) => p.num_carries = *x,
        ("delta", V::Int(x)) => p.delta = *x,
        ("exponent_bits", V::Int(x)) => p.exponent_bits = int32(*x)?,
        ("mantissa_bits", V::Int(x)) => p.mantissa_bits = int32(*x)?,
        ("cross_program_prefetch_index", V::Int(x)) => {
            p.cross_program_prefetch_index = Some(int32(*x)?)
        }
        ("epsilon", V::Float(f)) => p.epsilon = *f.value(),
        ("algorithm", V::RngAlgorithm(a)) if is_rng_bit_generator => {
            p.rng_algorithm = a.index() as i32
        }
        ("distribution", V::Distribution(d)) => p.distribution = d.index() as i32,
        ("kind", V::FusionKind(k)) => p.fusion_kind = k.name().to_string(),
        ("dynamic_slice_sizes", V::Ints(v)) => p.dynamic_slice_sizes = v.to_vec(),
        // An in-place collective permute's lists, flattened (its reader
        // splits them by the operands' shapes).
        ("slice_sizes", V::IntLists(lists)) => p.dynamic_slice_sizes = lists.concat(),
        ("slice_sizes", V::Ints(v)) => p.gather_slice_sizes = v.to_vec(),
        ("fft_length", V::Ints(v)) => p.fft_length = v.to_vec(),
        ("fft_type", V::FftType(t)) => p.fft_type = t.index() as i32,
        ("outfeed_shape", V::Shape(s)) => p.outfeed_shape = Some(shape_to_proto(s)),
        ("outfeed_config", V::Str(s)) => p.outfeed_config = s.as_bytes().to_vec(),
        ("infeed_config", V::Str(s)) => p.infeed_config = s.as_bytes().to_vec(),
        ("async_execution_thread", V::Str(s)) => p.async_execution_thread = s.to_string(),
        (
            "lhs_contracting_dims" | "rhs_contracting_dims" | "lhs_batch_dims" | "rhs_batch_dims",
            V::Ints(v),
        ) => {
            let d = p.dot_dimension_numbers.get_or_insert_with(Default::default);
            let v = v.to_vec();
            match key {
                "lhs_contracting_dims" => d.lhs_contracting_dimensions = v,
                "rhs_contracting_dims" => d.rhs_contracting_dimensions = v,
                "lhs_batch_dims" => d.lhs_batch_dimensions = v,
                _ => d.rhs_batch_dimensions = v,
            }
        }
        (
            "offset_dims"
            | "collapsed_slice_dims"
            | "start_index_map"
            | "operand_batching_dims"
            | "start_indices_batching_dims",
            V::Ints(v),
        ) if is_gather => {
            let g = p
                .gather_dimension_numbers
                .get_or_insert_with(Default::default);
            let v = v.to_vec();
            match key {
                "offset_dims" => g.offset_dims = v,
                "collapsed_slice_dims" => g.collapsed_slice_dims = v,
                "start_index_map" => g.start_index_map = v,
                "operand_batching_dims" => g.operand_batching_dims = v,
                _ => g.start_indices_batching_dims = v,
            }
        }
        ("index_vector_dim", V::Int(x)) if is_gather => {
            p.gather_dimension_numbers
                .get_or_insert_with(Default::default)
                .index_vector_dim = *x
        }
        ("index_vector_dim", V::Int(x)) => {
            p.scatter_dimension_numbers
                .get_or_insert_with(Default::default)
                .index_vector_dim = *x
        }
        (
            "update_window_dims"
            | "inserted_window_dims"
            | "scatter_dims_to_operand_dims"
            | "input_batching_dims"
            | "scatter_indices_batching_dims",
            V::Ints(v),
        ) => {
            let s = p
                .scatter_dimension_numbers
                .get_or_insert_with(Default::default);
            let v = v.to_vec();
            match key {
                "update_window_dims" => s.update_window_dims = v,
                "inserted_window_dims" => s.inserted_window_dims = v,
                "scatter_dims_to_operand_dims" => s.scatter_dims_to_operand_dims = v,
                "input_batching_dims" => s.input_batching_dims = v,
                _ => s.scatter_indices_batching_dims = v,
            }
        }
        ("slice", V::Slice(s)) => p.slice_dimensions = attrs::to_slice(s),
        ("padding", V::Padding(d)) => p.padding_config = Some(attrs::to_padding(d)),
        ("window", V::Window(w)) => p.window = Some(attrs::to_window(w)),
        ("source_target_pairs", V::Pairs(pairs)) => p.source_target_pairs = attrs::to_pairs(pairs),
        ("replica_groups", V::ReplicaGroups(r)) => attrs::to_replica_groups(r, p)?,
        ("operand_layout_constraints", V::Shapes(shapes)) => {
            p.constrain_layout = true;
            p.operand_shapes_with_layout = shapes.iter().map(shape_to_proto).collect();
        }
        ("operand_precision", V::Precisions(v)) => {
            p.precision_config
                .get_or_insert_with(Default::default)
                .operand_precision = v.iter().map(|x| x.index() as i32).collect()
        }
        ("algorithm", V::DotAlgorithm(a)) => {
            p.precision_config
                .get_or_insert_with(Default::default)
                .algorithm = a.index() as i32
        }
        ("parameter_replication", V::Bools(v)) => {
            let mut r = ParameterReplication::default();
            r.replicated_at_leaf_buffers = v.to_vec();
            p.parameter_replication = Some(r);
        }
        ("output_to_operand_aliasing", V::Aliasing(a)) => {
            p.output_operand_aliasing = attrs::to_aliasing(a)
        }
        ("statistics", V::Statistics(s)) => p.statistics_viz = Some(attrs::to_statistics(s)),
        ("dim_labels", V::ConvDims(d)) => {
            p.convolution_dimension_numbers = Some(attrs::to_conv_dims(d))
        }
        ("literal", V::Literal(l)) => p.literal = Some(literal_to_proto(l)),
        ("schedule", V::Schedule(s)) => p.custom_call_schedule = s.index() as i32,
        ("origin", V::OriginalValue(o)) => p.original_value = Some(attrs::to_original_value(o)),
        ("domain", V::Domain(d)) => attrs::to_domain(d, p),
        ("result_accuracy", V::ResultAccuracy(r)) => {
            p.result_accuracy = Some(attrs::to_result_accuracy(r))
        }
        ("lower", V::Bool(b)) if is_cholesky => {
            p.cholesky_options
                .get_or_insert_with(Default::default)
                .lower = *b
        }
        ("left_side" | "lower" | "unit_diagonal", V::Bool(b)) => {
            let o = p
                .triangular_solve_options
                .get_or_insert_with(Default::default);
            match key {
                "left_side" => o.left_side = *b,
                "lower" => o.lower = *b,
                _ => o.unit_diagonal = *b,
            }
        }
        ("transpose_a", V::Transpose(t)) => {
            p.triangular_solve_options
                .get_or_insert_with(Default::default)
                .transpose_a = t.index() as i32
        }
        (_, V::Raw(_)) => return err(format!("attribute {key} is not written as a proto yet")),
        _ => return unexpected(),
    }
    Ok(())
}

/// The header's `origin_recovery_table`, each recovery module written as
/// a module of its own.
fn recovery_table(
    entries: &[crate::ir::attrs::RecoveryEntry],
) -> Result<OriginalValueRecoveryTableProto, ProtoError> {
    let mut table = OriginalValueRecoveryTableProto::default();
    for e in entries {
        let mut x = OriginalValueRecoveryTableEntry::default();
        x.old_original_array = Some(attrs::to_original_array(&e.old));
        x.new_original_array = Some(attrs::to_original_array(&e.new));
        if let Some(m) = &e.module {
            let module = module_to_proto(m).map_err(|e| e.context("origin_recovery_table"))?;
            x.recovery_module = Some(Box::new(module));
        }
        table.entries.push(x);
    }
    Ok(table)
}
