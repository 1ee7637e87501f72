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

use super::from_proto::ALGORITHMS;
use super::messages::*;
use super::ProtoError;
use crate::ir::instruction::{ApiVersion, AttrValue, ComparisonType};
use crate::ir::literal::{Literal, LiteralData};
use crate::ir::shape::{ArrayShape, Layout, Shape};
use crate::ir::{CompId, Computation, InstrId, Instruction, Module, Opcode, Payload};
use crate::text::number::c_unescape;
use crate::util::{FxMap, FxSet};
use prost::Message;

fn err<T>(message: impl Into<String>) -> Result<T, ProtoError> {
    Err(ProtoError::new(message))
}

/// The module as a proto message.
pub fn module_to_proto(module: &Module) -> Result<HloModuleProto, ProtoError> {
    Writer::new(module).module()
}

/// The module as an encoded `HloModuleProto`.
pub fn module_to_proto_bytes(module: &Module) -> Result<Vec<u8>, ProtoError> {
    Ok(module_to_proto(module)?.encode_to_vec())
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
    match &l.data {
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

struct Writer<'m> {
    module: &'m Module,
    comp_ids: FxMap<CompId, i64>,
}

impl<'m> Writer<'m> {
    fn new(module: &'m Module) -> Writer<'m> {
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
        Writer { module, comp_ids }
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
    #[allow(clippy::type_complexity)]
    fn instruction_ids(&self) -> FxMap<CompId, (Vec<InstrId>, FxMap<InstrId, i64>)> {
        let m = self.module;
        let scheduled = self.scheduled();
        let mut out: FxMap<CompId, (Vec<InstrId>, FxMap<InstrId, i64>)> = FxMap::default();
        let mut used = FxSet::default();
        for (id, comp) in m.computations() {
            let order = match comp.proto_instr_order() {
                Some(order) => order,
                None if scheduled => comp.sequence().collect::<Vec<_>>(),
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
        out
    }

    fn scheduled(&self) -> bool {
        self.module.header.iter().any(|a| {
            a.key == "is_scheduled" && matches!(&a.value, AttrValue::Raw(v) if &**v == "true")
        })
    }

    fn module(&self) -> Result<HloModuleProto, ProtoError> {
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
        let scheduled = self.scheduled();
        let fusion_called: Vec<CompId> = m
            .computations()
            .flat_map(|(_, c)| {
                c.instructions()
                    .filter(|(_, i)| i.opcode == Opcode::Fusion)
                    .flat_map(|(_, i)| i.called_computations().collect::<Vec<_>>())
                    .collect::<Vec<_>>()
            })
            .collect();
        let mut schedule = HloScheduleProto::default();
        let mut instr_ids = self.instruction_ids();
        // The proto's own stack-frame tables, while the IR's are still the
        // ones read: each instruction's frame id in them, if every one has
        // one.
        let proto_frames = m
            .proto_frames
            .as_deref()
            .filter(|f| m.stack_frames.as_ref() == Some(&f.read_as));
        let reverse: FxMap<i64, i32> = proto_frames
            .map(|f| {
                let mut r = FxMap::default();
                for (k, &new) in f.renumbered.iter().enumerate() {
                    if new != 0 {
                        r.entry(new).or_insert(k as i32 + 1);
                    }
                }
                r
            })
            .unwrap_or_default();
        let mut frame_ids: Option<Vec<Vec<i32>>> = proto_frames.map(|_| Vec::new());
        for id in self.comp_order() {
            let comp = m.comp(id);
            let cid = self.comp_ids[&id];
            let (order, local) = instr_ids.remove(&id).expect("every computation");
            let mut cp = HloComputationProto::default();
            cp.name = comp.name.to_string();
            cp.id = cid;
            let mut comp_frames = Vec::new();
            for &i in &order {
                let ip = self
                    .instruction(comp, comp.instr(i), local[&i], &local)
                    .map_err(|e| e.context(format!("{}: {}", comp.name, comp.instr(i).name)))?;
                if let (Some(f), Some(_)) = (proto_frames, &frame_ids) {
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
                        None => frame_ids = None,
                    }
                }
                cp.instructions.push(ip);
            }
            if let Some(ids) = &mut frame_ids {
                ids.push(comp_frames);
            }
            let root = comp
                .root_opt()
                .ok_or_else(|| ProtoError::new(format!("{} has no root", comp.name)))?;
            cp.root_id = local[&root];
            let mut ps = ProgramShapeProto::default();
            for pid in comp.parameters() {
                let pi = comp.instr(pid);
                ps.parameters.push(shape_to_proto(&pi.shape));
                ps.parameter_names.push(pi.name.to_string());
            }
            ps.result = Some(shape_to_proto(&comp.instr(root).shape));
            cp.program_shape = Some(ps);
            cp.is_fusion_computation = fusion_called.contains(&id);
            if let Some(t) = &comp.execution_thread {
                cp.execution_thread = t.to_string();
            }
            if scheduled && !cp.is_fusion_computation {
                let mut seq = InstructionSequence::default();
                seq.instruction_ids = comp.sequence().map(|i| local[&i]).collect();
                schedule.sequences.insert(cid, seq);
            }
            p.computations.push(cp);
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
            let AttrValue::Raw(text) = &a.value else {
                continue;
            };
            match &*a.key {
                "input_output_alias" => alias = parse_alias(text)?,
                "buffer_donor" => donor = parse_donor(text)?,
                "frontend_attributes" => fa = parse_frontend_attributes(text)?,
                _ => {}
            }
        }
        p.input_output_alias = Some(alias);
        p.buffer_donor = Some(donor);
        p.frontend_attributes = Some(fa);
        let frames_kept = match (proto_frames, frame_ids) {
            (Some(f), Some(ids)) => {
                for (cp, ids) in p.computations.iter_mut().zip(ids) {
                    for (ip, id) in cp.instructions.iter_mut().zip(ids) {
                        if let Some(md) = &mut ip.metadata {
                            md.stack_frame_id = id;
                        }
                    }
                }
                Some(&f.original)
            }
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

    fn comp_id(&self, c: CompId) -> i64 {
        self.comp_ids.get(&c).copied().unwrap_or(0)
    }

    fn instruction(
        &self,
        comp: &Computation,
        instr: &Instruction,
        id: i64,
        local: &FxMap<InstrId, i64>,
    ) -> Result<HloInstructionProto, ProtoError> {
        let mut p = HloInstructionProto::default();
        p.name = instr.name.to_string();
        p.opcode = match instr.async_wrapped {
            Some(_) => return err("async syntax sugar is not written as a proto yet"),
            None => instr.opcode.name().to_string(),
        };
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
            let raw = || match &a.value {
                AttrValue::Raw(s) => Ok(&**s),
                _ => err(format!("attribute {key}: unexpected value")),
            };
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
                _ => self.raw_attr(&mut p, key, raw()?)?,
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
        if matches!(op, Opcode::Dot | Opcode::Convolution | Opcode::CustomCall) {
            let pc = p.precision_config.get_or_insert_with(Default::default);
            if pc.operand_precision.is_empty() {
                pc.operand_precision = vec![0; instr.operands().len()];
            }
        }
        Ok(p)
    }

    fn raw_attr(&self, p: &mut HloInstructionProto, key: &str, v: &str) -> Result<(), ProtoError> {
        let bad = |what: &str| ProtoError::new(format!("attribute {key}={v}: {what}"));
        let mut c = Cursor::new(v);
        match key {
            "metadata" => p.metadata = Some(parse_metadata(v).map_err(|e| bad(&e))?),
            "frontend_attributes" => p.frontend_attributes = Some(parse_frontend_attributes(v)?),
            "sharding" => p.sharding = Some(parse_sharding(&mut c).map_err(|e| bad(&e))?),
            "is_stable" => p.is_stable = v == "true",
            "largest" => p.largest = v == "true",
            "k" => p.k = c.int().map_err(|e| bad(&e))?,
            "is_composite" => p.is_composite = v == "true",
            "kind" => p.fusion_kind = v.to_string(),
            "custom_call_has_side_effect" => p.custom_call_has_side_effect = v == "true",
            "indices_are_sorted" => p.indices_are_sorted = v == "true",
            "unique_indices" => p.unique_indices = v == "true",
            "use_global_device_ids" => p.use_global_device_ids = v == "true",
            "constrain_layout" => p.constrain_layout = v == "true",
            "is_host_transfer" => p.is_host_transfer = v == "true",
            "algorithm" if p.opcode == "rng-bit-generator" => {
                p.rng_algorithm = match v {
                    "rng_three_fry" => 1,
                    "rng_philox" => 2,
                    _ => 0,
                }
            }
            "distribution" => {
                p.distribution = match v {
                    "rng_uniform" => 1,
                    "rng_normal" => 2,
                    _ => 0,
                }
            }
            "epsilon" => p.epsilon = v.parse::<f32>().map_err(|_| bad("not a float"))?,
            "feature_index" => p.feature_index = c.int().map_err(|e| bad(&e))?,
            "channel_id" => p.channel_id = c.int().map_err(|e| bad(&e))?,
            "feature_group_count" => p.feature_group_count = c.int().map_err(|e| bad(&e))?,
            "batch_group_count" => p.batch_group_count = c.int().map_err(|e| bad(&e))?,
            "dynamic_slice_sizes" => p.dynamic_slice_sizes = c.ints().map_err(|e| bad(&e))?,
            "slice_sizes" => p.gather_slice_sizes = c.ints().map_err(|e| bad(&e))?,
            "lhs_contracting_dims"
            | "rhs_contracting_dims"
            | "lhs_batch_dims"
            | "rhs_batch_dims" => {
                let d = p.dot_dimension_numbers.get_or_insert_with(Default::default);
                let v = c.ints().map_err(|e| bad(&e))?;
                match key {
                    "lhs_contracting_dims" => d.lhs_contracting_dimensions = v,
                    "rhs_contracting_dims" => d.rhs_contracting_dimensions = v,
                    "lhs_batch_dims" => d.lhs_batch_dimensions = v,
                    _ => d.rhs_batch_dimensions = v,
                }
            }
            "offset_dims"
            | "collapsed_slice_dims"
            | "start_index_map"
            | "operand_batching_dims"
            | "start_indices_batching_dims"
                if p.opcode == "gather" =>
            {
                let g = p
                    .gather_dimension_numbers
                    .get_or_insert_with(Default::default);
                let v = c.ints().map_err(|e| bad(&e))?;
                match key {
                    "offset_dims" => g.offset_dims = v,
                    "collapsed_slice_dims" => g.collapsed_slice_dims = v,
                    "start_index_map" => g.start_index_map = v,
                    "operand_batching_dims" => g.operand_batching_dims = v,
                    _ => g.start_indices_batching_dims = v,
                }
            }
            "index_vector_dim" if p.opcode == "gather" => {
                p.gather_dimension_numbers
                    .get_or_insert_with(Default::default)
                    .index_vector_dim = c.int().map_err(|e| bad(&e))?
            }
            "update_window_dims"
            | "inserted_window_dims"
            | "scatter_dims_to_operand_dims"
            | "input_batching_dims"
            | "scatter_indices_batching_dims"
            | "index_vector_dim" => {
                let s = p
                    .scatter_dimension_numbers
                    .get_or_insert_with(Default::default);
                if key == "index_vector_dim" {
                    s.index_vector_dim = c.int().map_err(|e| bad(&e))?;
                } else {
                    let v = c.ints().map_err(|e| bad(&e))?;
                    match key {
                        "update_window_dims" => s.update_window_dims = v,
                        "inserted_window_dims" => s.inserted_window_dims = v,
                        "scatter_dims_to_operand_dims" => s.scatter_dims_to_operand_dims = v,
                        "input_batching_dims" => s.input_batching_dims = v,
                        _ => s.scatter_indices_batching_dims = v,
                    }
                }
            }
            "slice" => p.slice_dimensions = parse_slice(&mut c).map_err(|e| bad(&e))?,
            "padding" => p.padding_config = Some(parse_padding(v).map_err(|e| bad(&e))?),
            "window" => p.window = Some(parse_window(v).map_err(|e| bad(&e))?),
            "source_target_pairs" => {
                p.source_target_pairs = c
                    .int_lists()
                    .map_err(|e| bad(&e))?
                    .into_iter()
                    .map(|v| {
                        let mut st = SourceTarget::default();
                        st.source = v.first().copied().unwrap_or(0);
                        st.target = v.get(1).copied().unwrap_or(0);
                        st
                    })
                    .collect()
            }
            "replica_groups" => parse_replica_groups(p, v).map_err(|e| bad(&e))?,
            "operand_layout_constraints" => {
                let shapes = parse_shape_list(v).map_err(|e| bad(&e))?;
                p.constrain_layout = true;
                p.operand_shapes_with_layout = shapes.iter().map(shape_to_proto).collect();
            }
            "operand_precision" => {
                let pc = p.precision_config.get_or_insert_with(Default::default);
                let names = v.trim_start_matches('{').trim_end_matches('}');
                pc.operand_precision = names
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(|s| match s.trim() {
                        "high" => 1,
                        "highest" => 2,
                        _ => 0,
                    })
                    .collect();
            }
            "algorithm" if p.opcode != "rng-bit-generator" => {
                let pc = p.precision_config.get_or_insert_with(Default::default);
                pc.algorithm = ALGORITHMS.iter().position(|&a| a == v).unwrap_or(0) as i32;
            }
            "parameter_replication" => {
                let mut r = ParameterReplication::default();
                r.replicated_at_leaf_buffers = v
                    .trim_start_matches('{')
                    .trim_end_matches('}')
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(|s| s.trim() == "true")
                    .collect();
                p.parameter_replication = Some(r);
            }
            _ => return err(format!("attribute {key} is not written as a proto yet")),
        }
        Ok(())
    }
}

/// A cursor over an attribute's text.
struct Cursor<'a> {
    s: &'a str,
    pos: usize,
}

type PResult<T> = Result<T, String>;

impl<'a> Cursor<'a> {
    fn new(s: &'a str) -> Cursor<'a> {
        Cursor { s, pos: 0 }
    }

    fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }

    fn ws(&mut self) {
        loop {
            let r = self.rest();
            let t = r.trim_start();
            self.pos += r.len() - t.len();
            if t.starts_with("/*") {
                match t.find("*/") {
                    Some(e) => self.pos += e + 2,
                    None => return,
                }
            } else {
                return;
            }
        }
    }

    fn eat(&mut self, p: &str) -> bool {
        self.ws();
        if self.rest().starts_with(p) {
            self.pos += p.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, p: &str) -> PResult<()> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(format!("expects '{p}' at offset {}", self.pos))
        }
    }

    fn int(&mut self) -> PResult<i64> {
        self.ws();
        let r = self.rest();
        let n = r
            .char_indices()
            .find(|&(i, ch)| !(ch.is_ascii_digit() || (i == 0 && ch == '-')))
            .map_or(r.len(), |(i, _)| i);
        let v = r[..n]
            .parse::<i64>()
            .map_err(|_| format!("expects an integer at offset {}", self.pos))?;
        self.pos += n;
        Ok(v)
    }

    fn word(&mut self) -> &'a str {
        self.ws();
        let r = self.rest();
        let n = r
            .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '.' || ch == '-'))
            .unwrap_or(r.len());
        self.pos += n;
        &r[..n]
    }

    fn string(&mut self) -> PResult<String> {
        self.expect("\"")?;
        let r = self.rest();
        let b = r.as_bytes();
        let mut i = 0;
        while i < b.len() && b[i] != b'"' {
            if b[i] == b'\\' {
                i += 1;
            }
            i += 1;
        }
        if i >= b.len() {
            return Err("unterminated string".into());
        }
        self.pos += i + 1;
        c_unescape(&r[..i]).map_err(|o| format!("bad escape at {o}"))
    }

    /// `{1,2,3}`
    fn ints(&mut self) -> PResult<Vec<i64>> {
        self.expect("{")?;
        let mut v = Vec::new();
        if self.eat("}") {
            return Ok(v);
        }
        loop {
            v.push(self.int()?);
            if self.eat("}") {
                return Ok(v);
            }
            self.expect(",")?;
        }
    }

    /// `{{1,2},{3}}`
    fn int_lists(&mut self) -> PResult<Vec<Vec<i64>>> {
        self.expect("{")?;
        let mut v = Vec::new();
        if self.eat("}") {
            return Ok(v);
        }
        loop {
            v.push(self.ints()?);
            if self.eat("}") {
                return Ok(v);
            }
            self.expect(",")?;
        }
    }

    /// `[1,2]`
    fn bracket_ints(&mut self) -> PResult<Vec<i64>> {
        self.expect("[")?;
        let mut v = Vec::new();
        if self.eat("]") {
            return Ok(v);
        }
        loop {
            v.push(self.int()?);
            if self.eat("]") {
                return Ok(v);
            }
            self.expect(",")?;
        }
    }

    /// A balanced `{...}` group, returned whole.
    fn group(&mut self) -> PResult<&'a str> {
        self.ws();
        let start = self.pos;
        let b = self.s.as_bytes();
        let mut depth = 0;
        let mut i = self.pos;
        while i < b.len() {
            match b[i] {
                b'"' => {
                    i += 1;
                    while i < b.len() && b[i] != b'"' {
                        if b[i] == b'\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                }
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        self.pos = i + 1;
                        return Ok(&self.s[start..=i]);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        Err("unbalanced braces".into())
    }
}

fn parse_metadata(v: &str) -> PResult<OpMetadata> {
    let mut m = OpMetadata::default();
    let mut c = Cursor::new(v);
    c.expect("{")?;
    while !c.eat("}") {
        let key = c.word();
        c.expect("=")?;
        match key {
            "op_type" => m.op_type = c.string()?,
            "op_name" => m.op_name = c.string()?,
            "source_file" => m.source_file = c.string()?,
            "deduplicated_name" => m.deduplicated_name = c.string()?,
            "scheduling_name" => m.scheduling_name = c.string()?,
            "source_line" => m.source_line = c.int()? as i32,
            "source_end_line" => m.source_end_line = c.int()? as i32,
            "source_column" => m.source_column = c.int()? as i32,
            "source_end_column" => m.source_end_column = c.int()? as i32,
            "stack_frame_id" => m.stack_frame_id = c.int()? as i32,
            "profile_type" => m.profile_type = c.ints()?.into_iter().map(|x| x as i32).collect(),
            k => return Err(format!("unknown metadata field {k}")),
        }
    }
    Ok(m)
}

fn parse_frontend_attributes(v: &str) -> Result<FrontendAttributes, ProtoError> {
    let mut fa = FrontendAttributes::default();
    let mut c = Cursor::new(v);
    let bad = |e: String| ProtoError::new(format!("frontend_attributes={v}: {e}"));
    c.expect("{").map_err(bad)?;
    if c.eat("}") {
        return Ok(fa);
    }
    loop {
        c.ws();
        let key = if c.rest().starts_with('"') {
            c.string().map_err(bad)?
        } else {
            c.word().to_string()
        };
        c.expect("=").map_err(bad)?;
        c.ws();
        let value = if c.rest().starts_with('"') {
            c.string().map_err(bad)?
        } else if c.rest().starts_with('{') {
            c.group().map_err(bad)?.to_string()
        } else {
            c.word().to_string()
        };
        fa.map.insert(key, value);
        if c.eat("}") {
            return Ok(fa);
        }
        c.expect(",").map_err(bad)?;
    }
}

fn parse_sharding(c: &mut Cursor<'_>) -> PResult<OpSharding> {
    let mut s = OpSharding::default();
    c.expect("{")?;
    c.ws();
    if c.rest().starts_with('{') || c.rest().starts_with('}') {
        s.r#type = 2;
        if c.eat("}") {
            return Ok(s);
        }
        loop {
            s.tuple_shardings.push(parse_sharding(c)?);
            if c.eat("}") {
                return Ok(s);
            }
            c.expect(",")?;
        }
    }
    s.r#type = 3;
    loop {
        if c.eat("}") {
            break;
        }
        let w = c.word();
        match w {
            "replicated" => s.r#type = 0,
            "manual" => s.r#type = 4,
            "unknown" => s.r#type = 5,
            "unreduced" => s.r#type = 6,
            "maximal" => {
                s.r#type = 1;
                c.expect("device")?;
                c.expect("=")?;
                s.tile_assignment_devices = vec![c.int()?];
            }
            "devices" => {
                c.expect("=")?;
                s.tile_assignment_dimensions = c.bracket_ints()?;
                if c.eat("<=") {
                    s.iota_reshape_dims = c.bracket_ints()?;
                    if c.eat("T(") {
                        let mut perm = Vec::new();
                        loop {
                            perm.push(c.int()? as i32);
                            if c.eat(")") {
                                break;
                            }
                            c.expect(",")?;
                        }
                        s.iota_transpose_perm = perm;
                    } else {
                        s.iota_transpose_perm = (0..s.iota_reshape_dims.len() as i32).collect();
                    }
                } else {
                    loop {
                        s.tile_assignment_devices.push(c.int()?);
                        if !c.eat(",") {
                            break;
                        }
                    }
                }
            }
            "last_tile_dim_replicate" => s.replicate_on_last_tile_dim = true,
            "last_tile_dims" => {
                c.expect("=")?;
                c.expect("{")?;
                loop {
                    let t = c.word();
                    s.last_tile_dims.push(match t {
                        "replicated" => 0,
                        "maximal" => 1,
                        "manual" => 4,
                        "unknown" => 5,
                        "unreduced" => 6,
                        _ => 3,
                    });
                    if c.eat("}") {
                        break;
                    }
                    c.expect(",")?;
                }
            }
            "shard_as" | "shard_like" => {
                s.is_shard_group = true;
                s.shard_group_type = i32::from(w == "shard_like");
                s.shard_group_id = c.int()?;
            }
            "metadata" => {
                c.expect("=")?;
                let g = c.group()?;
                let inner = &g[1..g.len() - 1];
                let mut ic = Cursor::new(inner);
                loop {
                    ic.ws();
                    if ic.rest().is_empty() {
                        break;
                    }
                    s.metadata.push(parse_metadata(ic.group()?)?);
                    ic.eat(",");
                }
            }
            "" => return Err(format!("unexpected text at offset {}", c.pos)),
            w => return Err(format!("unknown sharding field {w}")),
        }
    }
    Ok(s)
}

fn parse_slice(c: &mut Cursor<'_>) -> PResult<Vec<SliceDimensions>> {
    c.expect("{")?;
    let mut v = Vec::new();
    if c.eat("}") {
        return Ok(v);
    }
    loop {
        c.expect("[")?;
        let mut d = SliceDimensions::default();
        d.start = c.int()?;
        c.expect(":")?;
        d.limit = c.int()?;
        d.stride = if c.eat(":") { c.int()? } else { 1 };
        c.expect("]")?;
        v.push(d);
        if c.eat("}") {
            return Ok(v);
        }
        c.expect(",")?;
    }
}

fn nums(s: &str, sep: char) -> PResult<Vec<i64>> {
    s.split(sep)
        .map(|x| x.parse::<i64>().map_err(|_| format!("bad number {x}")))
        .collect()
}

fn parse_padding(v: &str) -> PResult<PaddingConfig> {
    let mut pc = PaddingConfig::default();
    if v.is_empty() {
        return Ok(pc);
    }
    for dim in v.split('x') {
        let n = nums(dim, '_')?;
        if n.len() < 2 || n.len() > 3 {
            return Err(format!("bad padding {dim}"));
        }
        let mut d = PaddingConfigDimension::default();
        d.edge_padding_low = n[0];
        d.edge_padding_high = n[1];
        d.interior_padding = n.get(2).copied().unwrap_or(0);
        pc.dimensions.push(d);
    }
    Ok(pc)
}

fn parse_window(v: &str) -> PResult<Window> {
    let inner = v
        .strip_prefix('{')
        .and_then(|s| s.strip_suffix('}'))
        .ok_or("expects {...}")?;
    let mut w = Window::default();
    for field in inner.split_whitespace() {
        let (k, val) = field.split_once('=').ok_or("expects key=value")?;
        let parts: Vec<&str> = val.split('x').collect();
        if w.dimensions.is_empty() {
            w.dimensions = (0..parts.len())
                .map(|_| {
                    let mut d = WindowDimension::default();
                    d.stride = 1;
                    d.window_dilation = 1;
                    d.base_dilation = 1;
                    d
                })
                .collect();
        }
        if parts.len() != w.dimensions.len() {
            return Err("window fields of different ranks".into());
        }
        for (d, p) in w.dimensions.iter_mut().zip(parts) {
            match k {
                "size" => d.size = nums(p, '_')?[0],
                "stride" => d.stride = nums(p, '_')?[0],
                "lhs_dilate" => d.base_dilation = nums(p, '_')?[0],
                "rhs_dilate" => d.window_dilation = nums(p, '_')?[0],
                "rhs_reversal" => d.window_reversal = p == "1",
                "pad" => {
                    let n = nums(p, '_')?;
                    d.padding_low = n[0];
                    d.padding_high = *n.get(1).ok_or("bad pad")?;
                }
                _ => return Err(format!("unknown window field {k}")),
            }
        }
    }
    Ok(w)
}

fn parse_replica_groups(p: &mut HloInstructionProto, v: &str) -> PResult<()> {
    let mut c = Cursor::new(v);
    if c.eat("mesh[") {
        let mut m = MeshAxesReplicaGroupListProto::default();
        let mut mesh = MeshProto::default();
        loop {
            c.expect("'")?;
            let name = c.word().to_string();
            c.expect("'")?;
            c.expect("=")?;
            let mut a = MeshAxis::default();
            a.name = name;
            a.size = c.int()?;
            mesh.axes.push(a);
            if c.eat("]") {
                break;
            }
            c.expect(",")?;
        }
        c.expect("{")?;
        loop {
            c.expect("'")?;
            let name = c.word();
            c.expect("'")?;
            let mut r = AxisRefProto::default();
            r.mesh_axis_index = mesh
                .axes
                .iter()
                .position(|a| a.name == name)
                .ok_or("unknown mesh axis")? as i64;
            m.axes.push(r);
            if c.eat("}") {
                break;
            }
            c.expect(",")?;
        }
        m.mesh = Some(mesh);
        p.mesh_axes_replica_group_list = Some(m);
        return Ok(());
    }
    let mut list = CollectiveDeviceListProto::default();
    c.ws();
    if c.rest().starts_with('[') {
        let d = c.bracket_ints()?;
        let mut iota = IotaReplicaGroupListProto::default();
        iota.num_replica_groups = *d.first().ok_or("bad iota groups")?;
        iota.num_devices_per_group = *d.get(1).ok_or("bad iota groups")?;
        c.expect("<=")?;
        iota.iota_reshape_dims = c.bracket_ints()?;
        if c.eat("T(") {
            loop {
                iota.iota_transpose_perm.push(c.int()? as i32);
                if c.eat(")") {
                    break;
                }
                c.expect(",")?;
            }
        } else {
            iota.iota_transpose_perm = (0..iota.iota_reshape_dims.len() as i32).collect();
        }
        list.iota_replica_group_list = Some(iota);
    } else {
        list.replica_groups = c
            .int_lists()?
            .into_iter()
            .map(|ids| {
                let mut g = ReplicaGroup::default();
                g.replica_ids = ids;
                g
            })
            .collect();
    }
    p.collective_device_list = Some(list);
    Ok(())
}

fn parse_shape_list(v: &str) -> PResult<Vec<Shape>> {
    // `{f32[2]{0}, s32[]}`: parse through the text parser of a tiny module.
    let inner = v
        .strip_prefix('{')
        .and_then(|s| s.strip_suffix('}'))
        .ok_or("expects {...}")?;
    let text = format!("HloModule m, entry_computation_layout={{({inner})->()}}\nENTRY e {{\n  ROOT t = () tuple()\n}}\n");
    let m = crate::text::parse_module(&text, "operand_layout_constraints")
        .map_err(|e| e.to_string())?;
    Ok(m.entry_computation_layout()
        .map(|p| p.parameters.clone())
        .unwrap_or_default())
}

fn parse_alias(v: &str) -> Result<HloInputOutputAliasProto, ProtoError> {
    let mut a = HloInputOutputAliasProto::default();
    let mut c = Cursor::new(v);
    let bad = |e: String| ProtoError::new(format!("input_output_alias: {e}"));
    c.expect("{").map_err(bad)?;
    if c.eat("}") {
        return Ok(a);
    }
    loop {
        let mut e = AliasEntryProto::default();
        e.output_shape_index = c.ints().map_err(bad)?;
        c.expect(":").map_err(bad)?;
        c.expect("(").map_err(bad)?;
        e.parameter_number = c.int().map_err(bad)?;
        c.expect(",").map_err(bad)?;
        e.parameter_shape_index = c.ints().map_err(bad)?;
        e.kind = 1;
        if c.eat(",") {
            e.kind = if c.word() == "must-alias" { 2 } else { 1 };
        }
        c.expect(")").map_err(bad)?;
        a.entries.push(e);
        if c.eat("}") {
            return Ok(a);
        }
        c.expect(",").map_err(bad)?;
    }
}

fn parse_donor(v: &str) -> Result<HloBufferDonorProto, ProtoError> {
    let mut d = HloBufferDonorProto::default();
    let mut c = Cursor::new(v);
    let bad = |e: String| ProtoError::new(format!("buffer_donor: {e}"));
    c.expect("{").map_err(bad)?;
    if c.eat("}") {
        return Ok(d);
    }
    loop {
        let mut e = BufferDonorEntryProto::default();
        c.expect("(").map_err(bad)?;
        e.parameter_number = c.int().map_err(bad)?;
        c.expect(",").map_err(bad)?;
        e.parameter_shape_index = c.ints().map_err(bad)?;
        c.expect(")").map_err(bad)?;
        d.entries.push(e);
        if c.eat("}") {
            return Ok(d);
        }
        c.expect(",").map_err(bad)?;
    }
}
