//! One instruction: its op's attributes (per op family in
//! [`super::read_op_attrs`]), its called computations, then the attributes
//! every op may have, in the order XLA prints them.

use super::attrs;
use super::err;
use super::messages::*;
use super::read_computation::{Decoded, PVal, Pending, Reader};
use super::read_literal::literal_from_proto;
use super::read_metadata::{Meta, MetaView};
use super::read_op_attrs::*;
use super::ProtoError;
use crate::ir::attrs::typed;
use crate::ir::instruction::AttrValue;
use crate::ir::shape::Shape;
use crate::ir::{CompId, InstrId, Opcode, Payload, PrimitiveType};
use smallvec::SmallVec;
use std::ops::Range;
use std::sync::Arc;

/// An instruction's operands, as far as its attributes depend on them.
#[derive(Clone, Copy)]
pub(super) struct OperandInfo<'x> {
    /// The proto element type of each operand's shape.
    pub(super) types: &'x [i32],
    pub(super) ids: &'x [InstrId],
    /// The instructions converted so far, which the operands are among.
    pub(super) done: &'x [Pending],
}

impl OperandInfo<'_> {
    pub(super) fn element_type(&self, i: usize) -> Option<i32> {
        self.types.get(i).copied()
    }

    /// The whole shape, for the few ops whose attributes need it.
    pub(super) fn shape(&self, i: usize) -> Option<&Shape> {
        self.ids
            .get(i)
            .and_then(|o| self.done.get(o.index()))
            .map(|d| &*d.shape)
    }
}

impl Reader<'_> {
    /// One instruction: its attributes in the order XLA prints them.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn instruction(
        &mut self,
        p: &HloInstructionProto,
        decoded: Decoded<'_>,
        shape: Arc<Shape>,
        operand_types: &[i32],
        operands: SmallVec<[InstrId; 4]>,
        control: Vec<InstrId>,
        done: &[Pending],
        text: &mut String,
    ) -> Result<Pending, ProtoError> {
        let Decoded { name, opcode, meta } = decoded;
        let opcode = Opcode::from_name(opcode)
            .ok_or_else(|| ProtoError::new(format!("unknown opcode \"{opcode}\"")))?;
        let name = push_range(text, |t| t.push_str(name));
        let mut a = Attrs {
            list: SmallVec::new(),
            text,
        };
        let info = OperandInfo {
            types: operand_types,
            ids: &operands,
            done,
        };
        let called = p
            .called_computation_ids
            .iter()
            .map(|&c| self.comp_ref(c))
            .collect::<Result<Vec<CompId>, ProtoError>>()?;
        let payload = self.op_attrs(&mut a, opcode, p, &shape, info)?;
        called_computation_attrs(&mut a, opcode, &called, info.element_type(0));
        common_attrs(&mut a, opcode, p, !control.is_empty(), &shape);
        self.metadata_attr(&mut a, p, meta)?;
        self.backend_config_attr(&mut a, p)?;
        let attrs = a.list;
        Ok(Pending {
            name,
            opcode,
            shape,
            operands,
            control,
            attrs,
            payload,
        })
    }

    /// The op's own attributes, by op family; returns its payload.
    fn op_attrs(
        &self,
        a: &mut Attrs<'_>,
        opcode: Opcode,
        p: &HloInstructionProto,
        shape: &Shape,
        operands: OperandInfo<'_>,
    ) -> Result<Payload, ProtoError> {
        use Opcode::*;
        match opcode {
            Parameter => return Ok(parameter_attrs(a, p)),
            Constant => {
                let lit = match &p.literal {
                    Some(l) => literal_from_proto(l, shape)?,
                    None => return err("a constant without a literal"),
                };
                return Ok(Payload::Constant(Box::new(lit)));
            }
            Compare => compare_attrs(a, p, operands.element_type(0))?,
            Iota | GetTupleElement | Broadcast | Concatenate | Reverse | Transpose
            | GetDimensionSize | SetDimensionSize | Reduce | Map | Sort | TopK | Slice
            | DynamicSlice | Pad => array_op_attrs(a, opcode, p),
            Dot => dot_attrs(a, p),
            RaggedDot => ragged_dot_attrs(a, p),
            Gather => gather_attrs(a, p),
            Scatter => scatter_attrs(a, p),
            Fusion => fusion_attrs(a, p)?,
            ReduceWindow | SelectAndScatter => window_attr(a, p),
            Convolution => convolution_attrs(a, p),
            CustomCall => custom_call_attrs(a, p, self)?,
            AllReduce | AllReduceStart | ReduceScatter | AllGather | AllGatherStart | AllToAll
            | RaggedAllToAll | CollectiveBroadcast => collective_attrs(a, opcode, p),
            CollectivePermute | CollectivePermuteStart => collective_permute_attrs(a, p, operands)?,
            Send | Recv | SendDone | RecvDone => send_recv_attrs(a, p),
            Infeed | Outfeed | CopyStart => self.transfer_attrs(a, opcode, p)?,
            BatchNormTraining | BatchNormInference | BatchNormGrad | ReducePrecision
            | RngGetAndUpdateState | Rng | RngBitGenerator | Cholesky | Fft | TriangularSolve => {
                numeric_op_attrs(a, opcode, p)
            }
            Scan => scan_attrs(a, p),
            Domain => domain_attr(a, p),
            AsyncStart => async_start_attrs(a, p),
            _ => {}
        }
        Ok(Payload::None)
    }

    /// Infeed's and outfeed's configs, a copy-start's prefetch index.
    fn transfer_attrs(
        &self,
        a: &mut Attrs<'_>,
        opcode: Opcode,
        p: &HloInstructionProto,
    ) -> Result<(), ProtoError> {
        match opcode {
            Opcode::Infeed if !p.infeed_config.is_empty() => {
                let config = utf8(&p.infeed_config, "infeed_config")?;
                a.val("infeed_config", AttrValue::Str(config.into()));
            }
            Opcode::Outfeed => {
                if let Some(s) = &p.outfeed_shape {
                    let s = self.shape(s)?;
                    a.val("outfeed_shape", AttrValue::Shape(Box::new(s)));
                }
                if !p.outfeed_config.is_empty() {
                    let config = utf8(&p.outfeed_config, "outfeed_config")?;
                    a.val("outfeed_config", AttrValue::Str(config.into()));
                }
            }
            Opcode::CopyStart => {
                if let Some(i) = p.cross_program_prefetch_index {
                    a.val("cross_program_prefetch_index", AttrValue::Int(i.into()));
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn metadata_attr(
        &mut self,
        a: &mut Attrs<'_>,
        p: &HloInstructionProto,
        meta: Meta<'_>,
    ) -> Result<(), ProtoError> {
        let view = match meta {
            Meta::Shared(value) => {
                a.list.push(("metadata", PVal::Value(value)));
                return Ok(());
            }
            Meta::View(m) => Some(m),
            Meta::InMessage => p.metadata.as_ref().map(MetaView::of),
        };
        if let Some(m) = view {
            let sf = self.frame_id(m.stack_frame_id)?;
            if m.has_text() {
                let value = match self.metadata.get(&m, sf) {
                    Some(shared) => PVal::Value(shared),
                    None => PVal::Metadata(Box::new(m.deferred(sf, a.text))),
                };
                a.list.push(("metadata", value));
            }
        }
        Ok(())
    }

    fn backend_config_attr(
        &self,
        a: &mut Attrs<'_>,
        p: &HloInstructionProto,
    ) -> Result<(), ProtoError> {
        // A payload, where present, is the config (as XLA's loader has it).
        let config_payload = p.backend_config_payload.as_ref();
        let backend_config: &[u8] = match (config_payload.and_then(|x| x.id), config_payload) {
            (Some(id), _) => usize::try_from(id)
                .ok()
                .and_then(|i| self.payloads.get(i))
                .ok_or_else(|| {
                    ProtoError::new(format!(
                        "backend_config_payload id {id} is past the module's payloads \
                         (it has {})",
                        self.payloads.len()
                    ))
                })?,
            (None, Some(inline)) => inline.value.as_deref().unwrap_or(&p.backend_config),
            (None, None) => &p.backend_config,
        };
        if !backend_config.is_empty() {
            let s = std::str::from_utf8(backend_config)
                .map_err(|_| ProtoError::new("backend_config is not UTF-8"))?;
            let r = push_range(a.text, |t| t.push_str(s));
            a.list.push(("backend_config", PVal::BackendConfig(r)));
        }
        Ok(())
    }
}

/// Called computations, where XLA prints them.
fn called_computation_attrs(
    a: &mut Attrs<'_>,
    opcode: Opcode,
    called: &[CompId],
    first_operand_type: Option<i32>,
) {
    use Opcode::*;
    match opcode {
        While if called.len() == 2 => {
            // XLA keeps the body first.
            a.list.push(("condition", PVal::Comp(called[1])));
            a.list.push(("body", PVal::Comp(called[0])));
        }
        SelectAndScatter if called.len() == 2 => {
            a.list.push(("select", PVal::Comp(called[0])));
            a.list.push(("scatter", PVal::Comp(called[1])));
        }
        Conditional => {
            if first_operand_type == Some(PrimitiveType::Pred as i32) && called.len() == 2 {
                a.list.push(("true_computation", PVal::Comp(called[0])));
                a.list.push(("false_computation", PVal::Comp(called[1])));
            } else {
                a.list
                    .push(("branch_computations", PVal::Comps(called.into())));
            }
        }
        Call | Map | ReduceWindow | Reduce | AllReduce | ReduceScatter | AllReduceStart
        | Scatter | Sort | TopK | Scan
            if !called.is_empty() =>
        {
            a.list.push(("to_apply", PVal::Comp(called[0])));
        }
        CustomCall if !called.is_empty() => {
            a.list
                .push(("called_computations", PVal::Comps(called.into())));
        }
        // Their computation is their chain's start's.
        AsyncUpdate | AsyncDone => {}
        _ if called.len() == 1 => a.list.push(("calls", PVal::Comp(called[0]))),
        _ if !called.is_empty() => a.list.push(("calls", PVal::Comps(called.into()))),
        _ => {}
    }
}

/// The attributes any op may have, before its metadata.
fn common_attrs(
    a: &mut Attrs<'_>,
    opcode: Opcode,
    p: &HloInstructionProto,
    has_control: bool,
    shape: &Shape,
) {
    if opcode == Opcode::Call && p.is_composite {
        a.val("is_composite", AttrValue::Bool(true));
    }
    if let Some(s) = &p.sharding {
        a.val(
            "sharding",
            AttrValue::Sharding(typed(attrs::from_sharding(s))),
        );
    }
    if let Some(fa) = &p.frontend_attributes {
        if !fa.map.is_empty() {
            a.val(
                "frontend_attributes",
                AttrValue::FrontendAttributes(typed(attrs::from_frontend_attributes(fa))),
            );
        }
    }
    if has_control {
        a.list.push(("control-predecessors", PVal::Raw(0..0)));
    }
    if let Some(sv) = &p.statistics_viz {
        if !sv.statistics.is_empty() {
            a.val(
                "statistics",
                AttrValue::Statistics(typed(attrs::from_statistics(sv))),
            );
        }
    }
    if let Some(ra) = &p.result_accuracy {
        result_accuracy_attr(a, ra);
    }
    if let Some(ov) = &p.original_value {
        a.val(
            "origin",
            AttrValue::OriginalValue(typed(attrs::from_original_value(ov, shape))),
        );
    }
}

/// Attributes being built, with the buffer their texts go to.
pub(super) struct Attrs<'t> {
    pub(super) list: SmallVec<[(&'static str, PVal); 2]>,
    pub(super) text: &'t mut String,
}

impl Attrs<'_> {
    pub(super) fn val(&mut self, key: &'static str, value: AttrValue) {
        self.list.push((key, PVal::Value(value)));
    }
}

pub(super) fn utf8<'b>(bytes: &'b [u8], what: &str) -> Result<&'b str, ProtoError> {
    std::str::from_utf8(bytes).map_err(|_| ProtoError::new(format!("{what} is not UTF-8")))
}

pub(super) fn push_range(text: &mut String, f: impl FnOnce(&mut String)) -> Range<usize> {
    let start = text.len();
    f(text);
    start..text.len()
}
