//! One HLO instruction and its attributes.
//!
//! Attributes are kept in the order they were written so that a module
//! prints back byte for byte. The ones passes and the verifier need are
//! typed ([`AttrValue`]); every other one keeps its text exactly.

pub use super::attrs::{ApiVersion, AttrValue, ComparisonDirection, ComparisonType};
use super::literal::Literal;
use super::opcode::Opcode;
use super::shape::Shape;
use super::shared_str::SharedStr;
use super::{CompId, InstrId};
use smallvec::SmallVec;
use std::sync::{Arc, LazyLock};

/// Operand and user lists: nearly all have at most four entries, which
/// fit inline.
pub type IdList = SmallVec<[InstrId; 4]>;

/// Attributes: most instructions have none or one (`metadata`).
pub type AttrList = SmallVec<[Attr; 1]>;

/// Control predecessors: most instructions have none, so one pointer,
/// null for none (a million instructions, 8 MB less than a slice's two
/// words).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ControlList(Option<Box<Box<[InstrId]>>>);

impl std::ops::Deref for ControlList {
    type Target = [InstrId];
    fn deref(&self) -> &[InstrId] {
        self.0.as_deref().map_or(&[], |b| b)
    }
}

impl std::ops::DerefMut for ControlList {
    fn deref_mut(&mut self) -> &mut [InstrId] {
        self.0.as_deref_mut().map_or(&mut [], |b| b)
    }
}

impl<T: Into<Box<[InstrId]>>> From<T> for ControlList {
    fn from(ids: T) -> ControlList {
        let ids: Box<[InstrId]> = ids.into();
        ControlList((!ids.is_empty()).then(|| Box::new(ids)))
    }
}

#[derive(Clone, Debug)]
pub struct Instruction {
    pub name: SharedStr,
    pub opcode: Opcode,
    /// For `<op>-start`/`-update`/`-done` sugar: the wrapped op.
    pub async_wrapped: Option<Opcode>,
    /// Shared: a module has few distinct shapes, and the parser reads each
    /// distinct one once.
    pub shape: Arc<Shape>,
    pub(crate) operands: IdList,
    pub(crate) users: IdList,
    pub(crate) control_predecessors: ControlList,
    pub attrs: AttrList,
    pub payload: Payload,
}

/// What some opcodes carry inside their parentheses instead of operands.
#[derive(Clone, Debug, Default)]
pub enum Payload {
    #[default]
    None,
    Parameter(i64),
    Constant(Box<Literal>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Attr {
    pub key: SharedStr,
    pub value: AttrValue,
}

/// The attribute keys XLA writes, in one static text: a key is a slice of
/// it, so a million `metadata` keys cost no allocation and no reference
/// count (see [`SharedStr`]).
macro_rules! known_keys {
    ($($key:literal,)*) => {
        const KNOWN_KEYS: &[&str] = &[$($key,)*];
        /// Every one of `KNOWN_KEYS`, one after the other.
        pub(crate) const KNOWN_KEY_TEXT: &str = concat!($($key,)*);
    };
}

known_keys! {
    "metadata",
    "dimensions",
    "calls",
    "kind",
    "backend_config",
    "to_apply",
    "index",
    "lhs_contracting_dims",
    "rhs_contracting_dims",
    "lhs_batch_dims",
    "rhs_batch_dims",
    "direction",
    "slice",
    "frontend_attributes",
    "sharding",
    "iota_dimension",
    "custom_call_target",
    "dynamic_slice_sizes",
    "replica_groups",
    "channel_id",
    "api_version",
    "custom_call_has_side_effect",
    "index_vector_dim",
    "start_index_map",
    "slice_sizes",
    "offset_dims",
    "collapsed_slice_dims",
    "source_target_pairs",
    "use_global_device_ids",
    "update_window_dims",
    "scatter_dims_to_operand_dims",
    "inserted_window_dims",
    "operand_layout_constraints",
    "window",
    "padding",
    "condition",
    "body",
    "type",
    "is_stable",
    "origin",
    "feature_index",
    "epsilon",
    "largest",
    "k",
    "branch_computations",
    "called_computations",
    "control-predecessors",
    "statistics",
    "select",
    "scatter",
    "true_computation",
    "false_computation",
    "output_to_operand_aliasing",
    "schedule",
    "dim_labels",
    "feature_group_count",
    "batch_group_count",
    "operand_precision",
    "indices_are_sorted",
    "unique_indices",
    "constrain_layout",
    "async_execution_thread",
    "result_accuracy",
    "original_value",
    "algorithm",
    "literal",
    "is_composite",
}

/// Where each of `KNOWN_KEYS` starts in `KNOWN_KEY_TEXT`.
static KNOWN_KEY_STARTS: LazyLock<crate::util::NameMap<'static, u32>> = LazyLock::new(|| {
    let mut start = 0;
    KNOWN_KEYS
        .iter()
        .map(|&k| {
            let at = start;
            start += k.len() as u32;
            (k, at)
        })
        .collect()
});

/// An attribute key: a slice of the static text for the keys XLA knows,
/// else its own string.
pub fn attr_key(key: &str) -> SharedStr {
    match KNOWN_KEY_STARTS.get(key) {
        Some(&start) => SharedStr::known_key(start, key.len() as u32),
        None => SharedStr::from(key),
    }
}

impl Instruction {
    /// A new instruction with no operands and no attributes.
    pub fn new(
        name: impl Into<SharedStr>,
        opcode: Opcode,
        shape: impl Into<Arc<Shape>>,
    ) -> Instruction {
        Instruction {
            name: name.into(),
            opcode,
            async_wrapped: None,
            shape: shape.into(),
            operands: IdList::new(),
            users: IdList::new(),
            control_predecessors: ControlList::default(),
            attrs: AttrList::new(),
            payload: Payload::None,
        }
    }

    /// Sets the operands of an instruction not yet added to a computation
    /// (once added, use [`super::Computation::set_operand`], which keeps
    /// user lists right).
    pub fn with_operands(mut self, operands: impl IntoIterator<Item = InstrId>) -> Instruction {
        self.operands = operands.into_iter().collect();
        self
    }

    /// A copy of this instruction, not in any computation, with other
    /// operands (XLA's `CloneWithNewOperands`): no users, no control edges.
    pub fn clone_with_operands(&self, operands: impl IntoIterator<Item = InstrId>) -> Instruction {
        Instruction {
            name: self.name.clone(),
            opcode: self.opcode,
            async_wrapped: self.async_wrapped,
            shape: self.shape.clone(),
            operands: operands.into_iter().collect(),
            users: IdList::new(),
            control_predecessors: ControlList::default(),
            attrs: self.attrs.clone(),
            payload: self.payload.clone(),
        }
    }

    pub fn operands(&self) -> &[InstrId] {
        &self.operands
    }

    pub fn operand(&self, i: usize) -> InstrId {
        self.operands[i]
    }

    /// Users, each once, in the order they first used this instruction.
    pub fn users(&self) -> &[InstrId] {
        &self.users
    }

    pub fn control_predecessors(&self) -> &[InstrId] {
        &self.control_predecessors
    }

    pub fn attr(&self, key: &str) -> Option<&AttrValue> {
        self.attrs.iter().find(|a| a.key == key).map(|a| &a.value)
    }

    pub fn attr_mut(&mut self, key: &str) -> Option<&mut AttrValue> {
        self.attrs
            .iter_mut()
            .find(|a| a.key == key)
            .map(|a| &mut a.value)
    }

    /// Sets an attribute, keeping its place if present, else appending it.
    pub fn set_attr(&mut self, key: &'static str, value: AttrValue) {
        match self.attr_mut(key) {
            Some(v) => *v = value,
            None => self.attrs.push(Attr {
                key: attr_key(key),
                value,
            }),
        }
    }

    /// Sets an attribute, inserting a new one just before `before` (or at
    /// the end) so that it lands where XLA's printer puts it.
    pub fn set_attr_before(&mut self, key: &'static str, value: AttrValue, before: &[&str]) {
        if let Some(v) = self.attr_mut(key) {
            *v = value;
            return;
        }
        let pos = self
            .attrs
            .iter()
            .position(|a| before.contains(&a.key.as_str()))
            .unwrap_or(self.attrs.len());
        self.attrs.insert(
            pos,
            Attr {
                key: attr_key(key),
                value,
            },
        );
    }

    /// Sets one of the attributes every instruction may carry, at the place
    /// XLA's printer gives it: after the op's own attributes, in the order
    /// sharding, frontend_attributes, control-predecessors, statistics,
    /// result_accuracy, origin, metadata, backend_config.
    pub fn set_generic_attr(&mut self, key: &'static str, value: AttrValue) {
        const ORDER: &[&str] = &[
            "sharding",
            "frontend_attributes",
            "control-predecessors",
            "statistics",
            "result_accuracy",
            "origin",
            "metadata",
            "backend_config",
        ];
        let rank = ORDER.iter().position(|&k| k == key).unwrap_or(0);
        self.set_attr_before(key, value, &ORDER[rank + 1..]);
    }

    pub fn remove_attr(&mut self, key: &str) -> Option<AttrValue> {
        let pos = self.attrs.iter().position(|a| a.key == key)?;
        Some(self.attrs.remove(pos).value)
    }

    pub fn custom_call_target(&self) -> Option<&str> {
        match self.attr("custom_call_target")? {
            AttrValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The raw `backend_config` string ("" when absent).
    pub fn backend_config(&self) -> &str {
        match self.attr("backend_config") {
            Some(AttrValue::BackendConfig(s)) | Some(AttrValue::Str(s)) => s,
            _ => "",
        }
    }

    /// `api_version` of a custom call (ORIGINAL when not written).
    pub fn api_version(&self) -> ApiVersion {
        match self.attr("api_version") {
            Some(AttrValue::ApiVersion(v)) => *v,
            _ => ApiVersion::Original,
        }
    }

    pub fn comparison_direction(&self) -> Option<ComparisonDirection> {
        match self.attr("direction")? {
            AttrValue::Direction(d) => Some(*d),
            _ => None,
        }
    }

    /// The written `type=` of a compare, if any.
    pub fn comparison_type(&self) -> Option<ComparisonType> {
        match self.attr("type")? {
            AttrValue::CompareType(t) => Some(*t),
            _ => None,
        }
    }

    pub fn dimensions(&self) -> Option<&[i64]> {
        match self.attr("dimensions")? {
            AttrValue::Ints(v) => Some(v),
            _ => None,
        }
    }

    pub fn int_attr(&self, key: &str) -> Option<i64> {
        match self.attr(key)? {
            AttrValue::Int(v) => Some(*v),
            _ => None,
        }
    }

    pub fn to_apply(&self) -> Option<CompId> {
        match self.attr("to_apply")? {
            AttrValue::Comp(c) => Some(*c),
            _ => None,
        }
    }

    pub fn parameter_number(&self) -> Option<i64> {
        match self.payload {
            Payload::Parameter(n) => Some(n),
            _ => None,
        }
    }

    pub fn literal(&self) -> Option<&Literal> {
        match &self.payload {
            Payload::Constant(l) => Some(l),
            _ => None,
        }
    }

    /// Every computation this instruction calls, in attribute order.
    pub fn called_computations(&self) -> impl Iterator<Item = CompId> + '_ {
        self.attrs.iter().flat_map(|a| {
            let slice: &[CompId] = match &a.value {
                AttrValue::Comp(c) => std::slice::from_ref(c),
                AttrValue::Comps(cs) => cs,
                _ => &[],
            };
            slice.iter().copied()
        })
    }
}
