//! The fields of a common instruction past its name, opcode, shape and
//! metadata, encoded straight from the IR.
//!
//! Most instructions of a large module are elementwise ops, broadcasts,
//! parameters, tuples and fusions whose only attributes are their
//! metadata, dimensions, index, called computations or fusion kind.
//! Filling the 82-field message for each and letting prost walk it was
//! about a third of writing a proto; [`Direct::of`] takes the fields of
//! such an instruction from the IR and [`Direct::encode`] writes them in
//! tag order, the bytes prost writes for the message
//! ([`super::write_instruction`]'s) that the writer would have filled.
//! Anything else (constants, the ops XLA gives defaults, async sugar, any
//! other attribute) is `None`, and goes through that message.

use super::to_proto::Writer;
use super::write_ids::LocalIds;
use super::write_sink::{bytes_field, string_field};
use crate::ir::instruction::{AttrValue, ComparisonType};
use crate::ir::{Computation, InstrId, Opcode, Payload};
use prost::encoding::{encode_key, encode_varint, encoded_len_varint, WireType};
use smallvec::SmallVec;

/// What the message would hold beyond the name, opcode, shape and
/// metadata the encoder writes itself.
pub(super) struct Direct<'a> {
    id: i64,
    parameter_number: i64,
    fusion_kind: &'static str,
    tuple_index: i64,
    dimensions: Dims<'a>,
    operand_ids: SmallVec<[i64; 4]>,
    control_predecessor_ids: SmallVec<[i64; 1]>,
    called_computation_ids: SmallVec<[i64; 2]>,
    backend_config: &'a [u8],
    comparison_direction: &'static str,
    comparison_type: &'static str,
    /// Fields of a newer XLA the instruction was read with; they go last.
    unknown: &'a [u8],
}

/// `dimensions`: from the attribute of that name, or `iota_dimension`
/// (the last one written wins, as when the message is filled).
#[derive(Clone, Copy)]
enum Dims<'a> {
    List(&'a [i64]),
    One(i64),
}

impl<'a> Direct<'a> {
    /// The fields of instruction `i`, if it is one the direct path takes.
    pub(super) fn of(
        writer: &Writer<'_>,
        comp: &'a Computation,
        i: InstrId,
        local: &LocalIds,
    ) -> Option<Direct<'a>> {
        let instr = comp.instr(i);
        let op = instr.opcode;
        // These get fields XLA fills in (`xla_defaults`), a literal, or
        // the computation of their async sugar.
        if instr.async_wrapped.is_some()
            || matches!(
                op,
                Opcode::Constant
                    | Opcode::Convolution
                    | Opcode::CustomCall
                    | Opcode::Dot
                    | Opcode::Outfeed
                    | Opcode::ReduceWindow
                    | Opcode::SelectAndScatter
                    | Opcode::AsyncStart
            )
        {
            return None;
        }
        let mut d = Direct {
            id: local[&i],
            parameter_number: match instr.payload {
                Payload::Parameter(n) => n,
                _ => 0,
            },
            fusion_kind: "",
            tuple_index: 0,
            dimensions: Dims::List(&[]),
            operand_ids: instr.operands().iter().map(|o| local[o]).collect(),
            control_predecessor_ids: instr
                .control_predecessors()
                .iter()
                .map(|o| local[o])
                .collect(),
            called_computation_ids: SmallVec::new(),
            backend_config: &[],
            comparison_direction: "",
            comparison_type: "",
            unknown: comp.proto_unknown(i),
        };
        // As `Writer::attrs_to_proto` fills the message, arm for arm.
        for a in &instr.attrs {
            match (&*a.key, &a.value) {
                ("metadata", AttrValue::Metadata(_)) => {}
                ("control-predecessors", _) => {}
                ("dimensions", AttrValue::Ints(v)) => d.dimensions = Dims::List(v),
                ("index", AttrValue::Int(v)) => d.tuple_index = *v,
                ("iota_dimension", AttrValue::Int(v)) => d.dimensions = Dims::One(*v),
                ("condition" | "body", AttrValue::Comp(_)) => return None,
                (_, AttrValue::Comp(c)) => d.called_computation_ids.push(writer.comp_id(*c)),
                (_, AttrValue::Comps(cs)) => d
                    .called_computation_ids
                    .extend(cs.iter().map(|c| writer.comp_id(*c))),
                ("custom_call_target", _) => return None,
                ("backend_config", AttrValue::BackendConfig(s) | AttrValue::Str(s)) => {
                    d.backend_config = s.as_bytes()
                }
                ("direction", AttrValue::Direction(dir)) => d.comparison_direction = dir.name(),
                ("type", AttrValue::CompareType(_)) => {}
                ("kind", AttrValue::FusionKind(k)) => d.fusion_kind = k.name(),
                _ => return None,
            }
        }
        if op == Opcode::Compare {
            let ty = comp.instr(instr.operand(0)).shape.element_type();
            let t = instr
                .comparison_type()
                .unwrap_or_else(|| ComparisonType::default_for(ty));
            d.comparison_type = t.name();
        }
        Some(d)
    }

    /// The fields, in tag order, as prost encodes them (proto3: zeros and
    /// empty strings and lists left out, repeated numbers packed).
    pub(super) fn encode(&self, out: &mut Vec<u8>) {
        int64(9, self.parameter_number, out);
        string_field(11, self.fusion_kind.as_bytes(), out);
        int64(13, self.tuple_index, out);
        match self.dimensions {
            Dims::List(v) => packed(14, v, out),
            Dims::One(x) => packed(14, &[x], out),
        }
        int64(35, self.id, out);
        packed(36, &self.operand_ids, out);
        packed(37, &self.control_predecessor_ids, out);
        packed(38, &self.called_computation_ids, out);
        string_field(43, self.backend_config, out);
        string_field(63, self.comparison_direction.as_bytes(), out);
        // `frontend_attributes` (68): XLA writes an empty one.
        bytes_field(68, &[], out);
        string_field(72, self.comparison_type.as_bytes(), out);
        // `statistics_viz` (82): the same.
        bytes_field(82, &[], out);
        out.extend_from_slice(self.unknown);
    }
}

fn int64(tag: u32, v: i64, out: &mut Vec<u8>) {
    if v != 0 {
        encode_key(tag, WireType::Varint, out);
        encode_varint(v as u64, out);
    }
}

fn packed(tag: u32, v: &[i64], out: &mut Vec<u8>) {
    if v.is_empty() {
        return;
    }
    encode_key(tag, WireType::LengthDelimited, out);
    let len: usize = v.iter().map(|&x| encoded_len_varint(x as u64)).sum();
    encode_varint(len as u64, out);
    for &x in v {
        encode_varint(x as u64, out);
    }
}
