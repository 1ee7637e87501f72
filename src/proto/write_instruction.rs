//! One instruction's proto: its own fields, its attributes' (per attribute
//! in [`super::write_attrs`]), and what XLA writes where the text says
//! nothing.

// Messages are `Ext` wrappers (known fields behind `Deref`), which struct
// literals cannot fill: fields are set one by one.
#![allow(clippy::field_reassign_with_default)]

use super::err;
use super::messages::*;
use super::stays_on_async_start;
use super::to_proto::Writer;
use super::write_attrs::attr_to_proto;
use super::write_ids::{InstrIds, LocalIds};
use super::write_literal::literal_to_proto;
use super::write_shape::shape_to_proto;
use super::ProtoError;
use crate::ir::instruction::{AttrValue, ComparisonType};
use crate::ir::{CompId, Computation, InstrId, Instruction, Opcode, Payload};
use prost::Message;

impl Writer<'_> {
    pub(super) fn comp_id(&self, c: CompId) -> i64 {
        self.comp_ids.get(&c).copied().unwrap_or(0)
    }

    /// [`Writer::instruction`] with its ids; errors name the instruction.
    pub(super) fn instruction_in(
        &self,
        comp: &Computation,
        i: InstrId,
        ids: &InstrIds,
        p: &mut HloInstructionProto,
    ) -> Result<(), ProtoError> {
        self.instruction(comp, i, &ids.ids, p)
            .map_err(|e| e.context(format!("{}: {}", comp.name, comp.instr(i).name)))
    }

    /// An instruction's proto but its shape and metadata, into `p`
    /// (cleared first: one message is reused for every instruction);
    /// `local` has the ids of the computation's instructions.
    fn instruction(
        &self,
        comp: &Computation,
        instr_id: InstrId,
        local: &LocalIds,
        p: &mut HloInstructionProto,
    ) -> Result<(), ProtoError> {
        let instr = comp.instr(instr_id);
        own_fields(comp, instr_id, local, p)?;
        let op = instr.opcode;
        if op == Opcode::Compare {
            let ty = comp.instr(instr.operand(0)).shape.element_type();
            let t = instr
                .comparison_type()
                .unwrap_or_else(|| ComparisonType::default_for(ty));
            set_str(&mut p.comparison_type, t.name());
        }
        if op == Opcode::CustomCall {
            p.custom_call_api_version = 1; // API_VERSION_ORIGINAL unless written
        }
        self.attrs_to_proto(p, instr)?;
        xla_defaults(p, comp, instr_id);
        Ok(())
    }

    /// The attributes' fields; those of an async op's sugar are the
    /// wrapped op's, written in its computation.
    fn attrs_to_proto(
        &self,
        p: &mut HloInstructionProto,
        instr: &Instruction,
    ) -> Result<(), ProtoError> {
        let mut while_comps: (Option<i64>, Option<i64>) = (None, None);
        for a in &instr.attrs {
            let key: &str = &a.key;
            if instr.async_wrapped.is_some() && !stays_on_async_start(key) {
                continue;
            }
            match (key, &a.value) {
                // The encoder writes it, as it does the shape.
                ("metadata", AttrValue::Metadata(_)) => {}
                ("control-predecessors", _) => {}
                ("dimensions", AttrValue::Ints(v)) => set_list(&mut p.dimensions, v),
                ("index", AttrValue::Int(v)) => p.tuple_index = *v,
                ("iota_dimension", AttrValue::Int(v)) => set_list(&mut p.dimensions, &[*v]),
                ("condition", AttrValue::Comp(c)) => while_comps.0 = Some(self.comp_id(*c)),
                ("body", AttrValue::Comp(c)) => while_comps.1 = Some(self.comp_id(*c)),
                (_, AttrValue::Comp(c)) => p.called_computation_ids.push(self.comp_id(*c)),
                (_, AttrValue::Comps(cs)) => p
                    .called_computation_ids
                    .extend(cs.iter().map(|c| self.comp_id(*c))),
                ("custom_call_target", AttrValue::Str(s)) => set_str(&mut p.custom_call_target, s),
                ("backend_config", AttrValue::BackendConfig(s) | AttrValue::Str(s)) => {
                    set_list(&mut p.backend_config, s.as_bytes())
                }
                ("direction", AttrValue::Direction(d)) => {
                    set_str(&mut p.comparison_direction, d.name())
                }
                ("type", AttrValue::CompareType(_)) => {}
                ("api_version", AttrValue::ApiVersion(v)) => {
                    // `CustomCallApiVersion` numbers them in this order.
                    p.custom_call_api_version = v.index() as i32
                }
                _ => attr_to_proto(p, key, &a.value)?,
            }
        }
        if let (Some(c), Some(b)) = while_comps {
            // XLA keeps the body first.
            p.called_computation_ids = vec![b, c];
        }
        Ok(())
    }
}

/// The fields every instruction has: names, ids, payload, and the empty
/// messages XLA writes (its shape and metadata are the encoder's).
fn own_fields(
    comp: &Computation,
    instr_id: InstrId,
    local: &LocalIds,
    p: &mut HloInstructionProto,
) -> Result<(), ProtoError> {
    let id = local[&instr_id];
    let instr = comp.instr(instr_id);
    p.clear();
    // Fields of a newer XLA it was read with, as they came.
    p.unknown.extend_from_slice(comp.proto_unknown(instr_id));
    p.name.push_str(&instr.name);
    p.opcode.push_str(instr.opcode.name());
    p.id = id;
    p.operand_ids
        .extend(instr.operands().iter().map(|o| local[o]));
    p.control_predecessor_ids
        .extend(instr.control_predecessors().iter().map(|o| local[o]));
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
    Ok(())
}

/// What XLA's `ToProto` writes where the text says nothing: the group
/// counts and precision config of convolutions and custom calls, and a
/// default precision per operand of dots and convolutions (as XLA's parser
/// fills them in); the fields its loader needs.
fn xla_defaults(p: &mut HloInstructionProto, comp: &Computation, instr_id: InstrId) {
    let instr = comp.instr(instr_id);
    let op = instr.opcode;
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
}

/// `field = value`, in the reused message's own buffer.
pub(super) fn set_str(field: &mut String, value: &str) {
    field.clear();
    field.push_str(value);
}

/// `field = value`, in the reused message's own buffer.
pub(super) fn set_list<T: Copy>(field: &mut Vec<T>, value: &[T]) {
    field.clear();
    field.extend_from_slice(value);
}
