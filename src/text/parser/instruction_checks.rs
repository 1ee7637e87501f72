//! The checks XLA's parser makes on an instruction as it reads it: operand
//! counts and kinds, async starts, updates and dones and their chains,
//! required attributes, dimension counts, scans, conditional branches,
//! and the result shape. (What each opcode takes is
//! [`crate::ir::signature`].)

use super::{PResult, Parser, Scope};
use crate::ir::instruction::AttrValue;
use crate::ir::shape::Shape;
use crate::ir::signature;
use crate::ir::{CompId, InstrId, Instruction, Opcode, PrimitiveType};

impl<'a> Parser<'a> {
    /// Checks XLA's parser makes on the operands, before the attributes.
    pub(super) fn check_operands(
        &self,
        scope: &Scope,
        instr: &Instruction,
        shape: Option<&Shape>,
        pos: usize,
    ) -> PResult<()> {
        let op = instr.opcode;
        let n = instr.operands.len();
        let operand = |i: usize| instr.operands.get(i).map(|&o| scope.comp.instr(o));
        match op {
            Opcode::AsyncStart | Opcode::AsyncUpdate | Opcode::AsyncDone => {
                return self.check_async_operands(scope, instr, shape, pos)
            }
            _ => {}
        }
        if let Some(want) = signature::fixed_operand_count(op) {
            if n != want {
                return self.err_at(
                    pos,
                    format!("expects {want} operands, but has {n} operands"),
                );
            }
        }
        if let Err(m) = signature::check_variadic_operands(op, n) {
            return self.err_at(pos, m);
        }
        match op {
            Opcode::Conditional => {
                let index = operand(0).map(|o| &*o.shape);
                match index.and_then(Shape::as_array) {
                    Some(a) if a.rank() == 0 => {
                        if !matches!(a.element_type, PrimitiveType::Pred | PrimitiveType::S32) {
                            return self
                                .err_at(pos, "The first operand must be a scalar of PRED or S32");
                        }
                    }
                    _ => return self.err_at(pos, "The first operand must be a scalar"),
                }
            }
            Opcode::DynamicSlice | Opcode::DynamicUpdateSlice => {
                // The start indices: one scalar per dimension, or one vector.
                let first = if op == Opcode::DynamicSlice { 1 } else { 2 };
                let rank = operand(0).map_or(0, |o| o.shape.rank());
                let one_vector =
                    n == first + 1 && operand(first).is_some_and(|o| o.shape.rank() == 1);
                if !one_vector && n != first + rank {
                    return self.err_at(pos, "Wrong number of operands.");
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The shape and operand rules of `async-start`/`-update`/`-done`.
    fn check_async_operands(
        &self,
        scope: &Scope,
        instr: &Instruction,
        shape: Option<&Shape>,
        pos: usize,
    ) -> PResult<()> {
        let op = instr.opcode;
        let Some(shape) = shape else {
            return self.err_at(pos, format!("Async op {op} must have an explicit shape."));
        };
        if op != Opcode::AsyncDone {
            let ok = shape
                .tuple_elements()
                .is_some_and(|e| e.len() >= 2 && e[0].is_tuple());
            if !ok {
                return self.err_at(
                    pos,
                    "AsyncStart and AsyncUpdate expect the shape to be in the form of \
                     ((operand0_shape, operand1_shape, ...), output_shape, ...)",
                );
            }
        }
        if op == Opcode::AsyncStart {
            return Ok(());
        }
        let first = match instr.operands.as_slice() {
            [] => return self.err_at(pos, "No operand found for AsyncUpdate and AsyncDone"),
            [o] => scope.comp.instr(*o),
            _ => {
                return self.err_at(
                    pos,
                    "AsyncUpdate and AsyncDone expect a single async op as their operand.",
                )
            }
        };
        match first.opcode {
            Opcode::AsyncStart | Opcode::AsyncUpdate => {}
            Opcode::AsyncDone => {
                return self.err_at(pos, "AsyncDone cannot be the first operand of an AsyncUpdate or AsyncDone.")
            }
            _ => {
                return self.err_at(
                    pos,
                    "AsyncUpdate and AsyncDone expect an asynchronous operation as their first operand.",
                )
            }
        }
        if let Some(w) = instr.async_wrapped {
            let start = scope
                .comp
                .instr(async_chain_start(scope, instr.operands[0]));
            if let Some(have) = self.async_wrapped_opcode(start, pos)? {
                if have != w {
                    return self.err_at(
                        pos,
                        format!("Expect async wrapped opcode to be {have}, but got {w}"),
                    );
                }
            }
        }
        Ok(())
    }

    /// The op an `async-start` wraps: its sugar, or the root of `calls`
    /// (unknown if not defined yet). A part of a group (see
    /// [`parse_group`]) cannot tell a callee defined in an earlier part
    /// from one defined later: it fails, to be read one window at a time.
    fn async_wrapped_opcode(&self, start: &Instruction, pos: usize) -> PResult<Option<Opcode>> {
        if start.async_wrapped.is_some() {
            return Ok(start.async_wrapped);
        }
        let Some(AttrValue::Comp(c)) = start.attr("calls") else {
            return Ok(None);
        };
        let comp = self.st.module.get_comp(*c).or_else(|| {
            let b = self.base?;
            b.module.get_comp(*b.comp_ids.get(self.comp_name(*c))?)
        });
        match comp {
            Some(comp) => Ok(comp.root_opt().map(|r| comp.instr(r).opcode)),
            None if self.base.is_some() => self.err_at(pos, "callee in another part"),
            None => Ok(None),
        }
    }

    /// Whether an async start earlier in the module calls `c`.
    fn async_called(&self, c: CompId) -> bool {
        self.st.async_callees.contains_key(&c)
            || self.base.is_some_and(|b| {
                b.comp_ids
                    .get(self.comp_name(c))
                    .is_some_and(|id| b.async_callees.contains_key(id))
            })
    }

    /// Checks XLA's parser makes on single instructions, once read.
    pub(super) fn check_instruction(
        &self,
        scope: &Scope,
        instr: &Instruction,
        pos: usize,
        pred_branch: bool,
    ) -> PResult<()> {
        let op = instr.opcode;
        for key in signature::required_attrs(op, instr.async_wrapped, pred_branch) {
            if instr.attr(key).is_none() {
                return self.err_at(pos, format!("attribute {key} is expected but not seen"));
            }
        }
        // What the attributes describe: the wrapped op of a sugared start.
        let attr_op = match (op, instr.async_wrapped) {
            (Opcode::AsyncStart, Some(w)) => w,
            _ => op,
        };
        self.check_dimension_count(instr, attr_op, pos)?;
        if attr_op == Opcode::Scan {
            self.check_scan(scope, instr, pos)?;
        }
        match op {
            Opcode::Conditional => self.check_branch_count(instr, pos, pred_branch),
            Opcode::AsyncStart => self.check_async_callee(instr, pos),
            Opcode::AsyncUpdate | Opcode::AsyncDone => self.check_async_chain(scope, instr, pos),
            _ => Ok(()),
        }
    }

    /// Ops whose `dimensions` names one dimension have one there (some
    /// only if they have the attribute at all).
    fn check_dimension_count(
        &self,
        instr: &Instruction,
        attr_op: Opcode,
        pos: usize,
    ) -> PResult<()> {
        let required = match attr_op {
            Opcode::AllGather
            | Opcode::AllGatherStart
            | Opcode::ReduceScatter
            | Opcode::GetDimensionSize
            | Opcode::SetDimensionSize
            | Opcode::Sort
            | Opcode::Concatenate
            | Opcode::Scan => true,
            Opcode::AllToAll | Opcode::RaggedAllToAll => false,
            _ => return Ok(()),
        };
        let dims = instr.dimensions();
        let n = dims.map_or(0, <[i64]>::len);
        if n != 1 && (required || dims.is_some()) {
            return self.err_at(
                pos,
                format!("expects exactly one dimension in dimensions=, but sees {n}"),
            );
        }
        Ok(())
    }

    /// A scan's dimension indexes each of its inputs (the operands before
    /// the `num_carries` carries).
    fn check_scan(&self, scope: &Scope, instr: &Instruction, pos: usize) -> PResult<()> {
        let d = instr
            .dimensions()
            .and_then(|d| d.first())
            .copied()
            .unwrap_or(0);
        let carries = instr
            .int_attr("num_carries")
            .and_then(|c| usize::try_from(c).ok());
        let Some(carries) = carries.filter(|&c| c <= instr.operands.len()) else {
            return self.err_at(
                pos,
                "expects num_carries to be at most the number of operands",
            );
        };
        for &o in &instr.operands[..instr.operands.len() - carries] {
            let rank = scope.comp.instr(o).shape.rank();
            if d < 0 || d as usize >= rank {
                return self.err_at(
                    pos,
                    format!("scan dimension {d} is out of range for an input of rank {rank}"),
                );
            }
        }
        Ok(())
    }

    /// A conditional has a branch computation per operand after the first.
    fn check_branch_count(
        &self,
        instr: &Instruction,
        pos: usize,
        pred_branch: bool,
    ) -> PResult<()> {
        let branches = if pred_branch {
            2
        } else {
            match instr.attr("branch_computations") {
                Some(AttrValue::Comps(c)) => c.len(),
                _ => 0,
            }
        };
        if branches == 0 {
            return self.err_at(pos, "conditional needs at least one branch computation");
        }
        if instr.operands.len() != branches + 1 {
            return self.err_at(
                pos,
                format!(
                    "conditional with {branches} branches expects {} operands, but has {}",
                    branches + 1,
                    instr.operands.len()
                ),
            );
        }
        Ok(())
    }

    /// No two async starts call one computation.
    fn check_async_callee(&self, instr: &Instruction, pos: usize) -> PResult<()> {
        if let Some(AttrValue::Comp(c)) = instr.attr("calls") {
            if self.async_called(*c) {
                return self.err_at(
                    pos,
                    format!(
                        "Computation {} is called by more than one async op",
                        self.comp_name(*c)
                    ),
                );
            }
        }
        Ok(())
    }

    /// An async update or done repeats its start's thread and callee, if
    /// it names them.
    fn check_async_chain(&self, scope: &Scope, instr: &Instruction, pos: usize) -> PResult<()> {
        let Some(&first) = instr.operands.first() else {
            return Ok(());
        };
        let start = scope.comp.instr(async_chain_start(scope, first));
        if let Some(AttrValue::Str(got)) = instr.attr("async_execution_thread") {
            let want = match start.attr("async_execution_thread") {
                Some(AttrValue::Str(s)) => s.as_str(),
                _ => "main",
            };
            let got = got.as_str();
            if want != got {
                return self.err_at(
                    pos,
                    format!("Expect async_execution_thread to be {want}, but got {got}"),
                );
            }
        }
        if let (Some(AttrValue::Comp(got)), Some(AttrValue::Comp(want))) =
            (instr.attr("calls"), start.attr("calls"))
        {
            if got != want {
                return self.err_at(
                    pos,
                    format!(
                        "Expect async_wrapped_computation to be {}, but got {}",
                        self.comp_name(*want),
                        self.comp_name(*got)
                    ),
                );
            }
        }
        Ok(())
    }

    /// Checks of an instruction against its result shape.
    pub(super) fn check_result_shape(
        &self,
        scope: &Scope,
        instr: &Instruction,
        pos: usize,
        replication: bool,
    ) -> PResult<()> {
        let shape = &instr.shape;
        let written = replication
            .then(|| instr.attr("parameter_replication"))
            .flatten();
        if let Some(AttrValue::Bools(r)) = written {
            let leaves = shape.leaf_count();
            let n = r.len();
            if n != leaves {
                return self.err_at(
                    pos,
                    format!("parameter has {leaves} leaf buffers, but parameter_replication has {n} elements."),
                );
            }
        }
        match instr.opcode {
            Opcode::Infeed if !matches!(shape.tuple_elements(), Some(e) if !e.is_empty()) => {
                self.err_at(pos, "infeed must have a non-empty tuple shape")
            }
            Opcode::Recv if shape.tuple_elements().map_or(0, <[Shape]>::len) != 3 => self.err_at(
                pos,
                "recv must have a tuple shape (data, u32[] context, token[])",
            ),
            Opcode::AsyncUpdate
                if instr
                    .operands
                    .first()
                    .is_some_and(|&o| scope.comp.instr(o).shape != *shape) =>
            {
                self.err_at(
                    pos,
                    "AsyncUpdate expects the op shape to be the same as the operand shape.",
                )
            }
            _ => Ok(()),
        }
    }
}

/// The `async-start` an `async-update` chain begins with.
fn async_chain_start(scope: &Scope, mut id: InstrId) -> InstrId {
    loop {
        let i = scope.comp.instr(id);
        match (i.opcode, i.operands.first()) {
            (Opcode::AsyncUpdate, Some(&o)) => id = o,
            _ => return id,
        }
    }
}
