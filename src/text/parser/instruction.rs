//! An instruction: `[ROOT] name = [shape] opcode(operands), attributes`,
//! its opcode (with the async sugar `all-gather-start`), what its
//! parentheses hold (a parameter number, a constant, operands), and its
//! operands: names, compact GTEs (`%t#0`) and nested instructions.

use super::{PResult, Parser, Scope};
use crate::ir::instruction::{attr_key, Attr, AttrValue, IdList};
use crate::ir::shape::Shape;
use crate::ir::{InstrId, Instruction, Opcode, Payload, PrimitiveType, SharedStr};
use std::sync::Arc;

/// Deepest nesting of instructions written as operands (`negate(exp(p))`).
/// A level costs far more stack than a shape's or a literal's (some 8 KiB
/// in a debug build against 2), so it has a lower limit of its own: at
/// MAX_DEPTH levels a debug build overflows a 2 MiB thread stack.
const MAX_INSTRUCTION_NESTING: usize = 64;

/// An instruction's opcode as read.
struct OpcodeRead {
    opcode: Opcode,
    /// The op a sugared async start, update or done wraps.
    async_wrapped: Option<Opcode>,
    /// Where the opcode is written.
    pos: usize,
}

impl<'a> Parser<'a> {
    pub(super) fn instruction(&mut self, scope: &mut Scope) -> PResult<InstrId> {
        let start = self.pos;
        let is_root = self.eat_keyword("ROOT")?;
        let name_pos = self.pos;
        let name = self.name("instruction name")?;
        if !self.eat(b'=')? {
            return self.err("expects '=' in instruction");
        }
        self.st.saw_any_instruction = true;
        let id = self.instruction_body(scope, Some(name), name_pos)?;
        if self.all_names.insert(name, (scope.id, id)).is_some() {
            return self.err_at(name_pos, format!("instruction name is not unique: {name}"));
        }
        if is_root {
            if scope.root.is_some() {
                return self.err_at(start, "one computation should have only one ROOT");
            }
            scope.root = Some((id, start));
        }
        Ok(id)
    }

    /// `[shape] opcode(operands), attrs` after the `=` (or as a nested
    /// operand, with no name).
    fn instruction_body(
        &mut self,
        scope: &mut Scope,
        name: Option<&'a str>,
        name_pos: usize,
    ) -> PResult<InstrId> {
        if self.instruction_nesting >= MAX_INSTRUCTION_NESTING {
            return self.err(format!(
                "maximum nesting depth of instructions ({MAX_INSTRUCTION_NESTING}) exceeded"
            ));
        }
        self.enter()?;
        self.instruction_nesting += 1;
        let r = self.instruction_body_inner(scope, name, name_pos);
        self.instruction_nesting -= 1;
        self.leave();
        r
    }

    fn instruction_body_inner(
        &mut self,
        scope: &mut Scope,
        name: Option<&'a str>,
        name_pos: usize,
    ) -> PResult<InstrId> {
        self.skip_ws()?;
        let shape_pos = self.pos;
        let declared_shape = self.declared_shape()?;
        let declared = declared_shape.is_some();
        self.skip_ws()?;
        let op = self.opcode()?;
        let opcode = op.opcode;
        // Named once the computation is done (`detach`); the shape is a
        // placeholder until inferred, if none is written.
        let shape = declared_shape.unwrap_or_else(|| Arc::clone(&self.no_shape_yet));
        let mut instr = Instruction::new(SharedStr::default(), opcode, shape);
        instr.async_wrapped = op.async_wrapped;
        self.instruction_arguments(scope, &mut instr, declared, op.pos)?;
        // A conditional on a pred takes true/false computations, not a list.
        let pred_branch = opcode == Opcode::Conditional
            && instr
                .operands
                .first()
                .is_some_and(|&o| scope.comp.instr(o).shape.element_type() == PrimitiveType::Pred);
        let replication = self.attributes(scope, &mut instr, name.is_none(), pred_branch)?;
        if opcode == Opcode::Broadcast && instr.attr("dimensions").is_none() {
            default_broadcast_dimensions(scope, &mut instr);
        }
        self.check_instruction(scope, &instr, op.pos, pred_branch)?;
        if !declared {
            instr.shape = self.inferred_shape(scope, &instr, shape_pos)?;
        }
        self.check_result_shape(scope, &instr, op.pos, replication)?;
        if opcode == Opcode::AsyncStart {
            if let Some(AttrValue::Comp(c)) = instr.attr("calls") {
                self.st.async_callees.insert(*c, self.at.offset + op.pos);
            }
        }
        let id = scope.comp.push(instr);
        match name {
            Some(n) => {
                let start = n.as_ptr() as usize - self.text.as_ptr() as usize;
                self.st.names.push((id, start, start + n.len()));
            }
            None => {
                let _ = name_pos;
                self.st
                    .unnamed
                    .push((scope.id, id, format!("{}.anon", opcode.name())));
            }
        }
        Ok(id)
    }

    /// The shape before an opcode, if one is written.
    fn declared_shape(&mut self) -> PResult<Option<Arc<Shape>>> {
        let word = self.peek_word()?;
        let after_word = self.b.get(self.pos + word.len()).copied();
        if self.b.get(self.pos) == Some(&b'(') || (after_word == Some(b'[') && !word.is_empty()) {
            Ok(Some(self.interned_shape()?))
        } else {
            Ok(None)
        }
    }

    /// An opcode (or the sugar of an async one, `all-gather-start`) and
    /// the `(` after it.
    fn opcode(&mut self) -> PResult<OpcodeRead> {
        let pos = self.pos;
        let word = self.peek_word()?;
        if word.is_empty() {
            let found = self.describe_here();
            return self.err(format!("expects opcode but sees: {found}"));
        }
        let (opcode, async_wrapped) = match Opcode::from_name(word) {
            Some(op) => (op, None),
            None => match self.async_sugar(word) {
                Some(x) => x,
                None => return self.err_at(pos, unknown_opcode_message(word)),
            },
        };
        self.pos += word.len();
        if self.b.get(self.pos) != Some(&b'(') {
            self.skip_ws()?;
            if self.b.get(self.pos) != Some(&b'(') {
                return self.err(format!("expects '(' after opcode {word}"));
            }
        }
        self.pos += 1;
        Ok(OpcodeRead {
            opcode,
            async_wrapped,
            pos,
        })
    }

    /// What is inside an instruction's parentheses, through the `)`: a
    /// parameter's number, a constant's literal, or the operands.
    fn instruction_arguments(
        &mut self,
        scope: &mut Scope,
        instr: &mut Instruction,
        declared_shape: bool,
        op_pos: usize,
    ) -> PResult<()> {
        match instr.opcode {
            Opcode::Parameter => {
                let npos = self.pos;
                let n = self.int()?;
                if n < 0 {
                    return self.err_at(npos, "parameter number must be >= 0");
                }
                if scope.params.insert(n, npos).is_some() {
                    return self.err_at(npos, format!("Duplicate parameter number {n}"));
                }
                instr.payload = Payload::Parameter(n);
                self.expect(b')', "after the parameter number")
            }
            Opcode::Constant => {
                if !declared_shape {
                    return self.err_at(op_pos, "constant needs a shape");
                }
                let lit = self.literal(&instr.shape)?;
                instr.payload = Payload::Constant(Box::new(lit));
                self.expect(b')', "at the end of a constant")
            }
            _ => {
                instr.operands = self.operands(scope)?;
                let declared = declared_shape.then_some(&*instr.shape);
                self.check_operands(scope, instr, declared, op_pos)
            }
        }
    }

    /// The result shape inferred from the operands, when none is written.
    fn inferred_shape(
        &self,
        scope: &Scope,
        instr: &Instruction,
        shape_pos: usize,
    ) -> PResult<Arc<Shape>> {
        match self.infer_shape(scope, instr) {
            Some(mut s) => {
                s.fill_default_layouts();
                Ok(Arc::new(s))
            }
            None => self.err_at(
                shape_pos,
                "expects a shape (it cannot be inferred for this op)",
            ),
        }
    }

    fn async_sugar(&self, word: &str) -> Option<(Opcode, Option<Opcode>)> {
        for (suffix, op) in [
            ("-start", Opcode::AsyncStart),
            ("-update", Opcode::AsyncUpdate),
            ("-done", Opcode::AsyncDone),
        ] {
            if let Some(base) = word.strip_suffix(suffix) {
                let wrapped = Opcode::from_name(base)?;
                if wrapped.can_be_async_wrapped() {
                    return Some((op, Some(wrapped)));
                }
            }
        }
        None
    }

    /// Inline for up to four: most instructions then allocate no list.
    fn operands(&mut self, scope: &mut Scope) -> PResult<IdList> {
        let mut ops = IdList::new();
        if self.eat(b')')? {
            return Ok(ops);
        }
        loop {
            ops.push(self.operand(scope)?);
            if self.eat(b')')? {
                return Ok(ops);
            }
            if !self.eat(b',')? {
                let found = self.describe_here();
                return self.err(format!(
                    "expects ',' or ')' in an operand list, but sees {found}"
                ));
            }
        }
    }

    /// `%x`, `f32[2]{0} %x`, `%x#0#1`, or a nested instruction
    /// `[shape] opcode(...)`.
    fn operand(&mut self, scope: &mut Scope) -> PResult<InstrId> {
        self.skip_ws()?;
        let start = self.pos;
        let word = self.peek_word()?;
        let next = self.b.get(self.pos + word.len()).copied();
        let is_shape_start =
            self.b.get(self.pos) == Some(&b'(') || (next == Some(b'[') && !word.is_empty());
        let mut declared: Option<Shape> = None;
        if is_shape_start {
            declared = Some(self.shape()?);
            self.st.saw_operand_shape = true;
            self.skip_ws()?;
            // A nested instruction: `f32[10] parameter(0)`.
            let w = self.peek_word()?;
            if self.b.get(self.pos + w.len()) == Some(&b'(') && self.b.get(self.pos) != Some(&b'%')
            {
                self.pos = start;
                return self.instruction_body(scope, None, start);
            }
        } else if next == Some(b'(') && self.b.get(self.pos) != Some(&b'%') && !word.is_empty() {
            return self.instruction_body(scope, None, start);
        }
        let name_pos = self.pos;
        let name = self.name("name")?;
        let mut id = match self.all_names.get(name) {
            Some(&(comp, id)) if comp == scope.id => id,
            // Not defined yet, or defined in another computation.
            _ => return self.err_at(name_pos, format!("instruction does not exist: {name}")),
        };
        // Compact GTE: `%p0#1#0`. (Its name is made only then: an
        // allocation per operand was a twentieth of the parse.)
        let mut path = Vec::new();
        let mut gte_name = String::new();
        while self.b.get(self.pos) == Some(&b'#') {
            if gte_name.is_empty() {
                gte_name.push_str(name);
            }
            self.pos += 1;
            let ipos = self.pos;
            let idx = match self.int() {
                Ok(v) => v,
                Err(_) => return self.err_at(ipos, "expects integer after '#'"),
            };
            let shape = scope.comp.instr(id).shape.clone();
            let Some(elems) = shape.tuple_elements() else {
                return self.err_at(ipos, "GTE operand must be tuple");
            };
            if idx < 0 || idx as usize >= elems.len() {
                return self.err_at(ipos, format!("GTE index {idx} out of bounds"));
            }
            path.push(idx);
            gte_name = format!("{gte_name}_{idx}");
            id = match scope.compact_gtes.get(&(id, path.clone())) {
                Some(&g) => g,
                None => {
                    let mut g =
                        Instruction::new("", Opcode::GetTupleElement, elems[idx as usize].clone());
                    g.operands = smallvec::smallvec![id];
                    g.attrs.push(Attr {
                        key: attr_key("index"),
                        value: AttrValue::Int(idx),
                    });
                    let parent = id;
                    let gid = scope.comp.push(g);
                    self.st.unnamed.push((scope.id, gid, gte_name.clone()));
                    scope.compact_gtes.insert((parent, path.clone()), gid);
                    gid
                }
            };
        }
        if let Some(shape) = declared {
            let actual = &scope.comp.instr(id).shape;
            if !shape.compatible(actual) {
                let mut s = shape.clone();
                s.fill_default_layouts();
                return self.err_at(
                    start,
                    format!(
                        "The declared operand shape {} is not compatible with the shape of the operand instruction {}.",
                        s.to_text(true),
                        actual.to_text(true)
                    ),
                );
            }
        }
        Ok(id)
    }

    /// The shape of an instruction written without one (nested operands).
    fn infer_shape(&self, scope: &Scope, instr: &Instruction) -> Option<Shape> {
        let op_shape = |i: usize| {
            scope
                .comp
                .get(*instr.operands.get(i)?)
                .map(|x| Shape::clone(&x.shape))
        };
        match instr.opcode {
            op if op.is_elementwise_unary() => op_shape(0),
            op if op.is_elementwise_binary() => op_shape(0),
            Opcode::Tuple => {
                let shapes: Option<Vec<Shape>> = (0..instr.operands.len()).map(op_shape).collect();
                shapes.map(Shape::Tuple)
            }
            Opcode::GetTupleElement => {
                let idx = instr.int_attr("index")?;
                op_shape(0)?
                    .tuple_elements()?
                    .get(usize::try_from(idx).ok()?)
                    .cloned()
            }
            _ => None,
        }
    }
}

/// `dimensions` may be left out when broadcasting a scalar: it is `{}`.
fn default_broadcast_dimensions(scope: &Scope, instr: &mut Instruction) {
    let scalar_operand = instr.operands.first().is_some_and(|&o| {
        scope
            .comp
            .instr(o)
            .shape
            .as_array()
            .is_some_and(|a| a.rank() == 0)
    });
    if scalar_operand {
        instr.set_attr("dimensions", AttrValue::Ints(Box::default()));
    }
}

/// XLA's message for an unknown opcode; `<op>-update` of an op that has
/// `-start`/`-done` ops of its own gets both of XLA's errors.
fn unknown_opcode_message(word: &str) -> String {
    let base = ["-start", "-update", "-done"]
        .iter()
        .find_map(|s| word.strip_suffix(s))
        .and_then(Opcode::from_name);
    match base {
        Some(b) => format!(
            "Unknown opcode: {word} (expects opcode but sees: {word}; {b} cannot be wrapped in an async op)"
        ),
        None => format!("Unknown opcode: {word}"),
    }
}
