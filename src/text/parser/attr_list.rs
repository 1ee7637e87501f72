//! An instruction's attribute list (`, key=value` after the operands:
//! which keys its opcode takes), and the attributes whose values are bound
//! to the module being read: computations, instructions, shapes,
//! literals, and the named enums. Every other attribute is typed by
//! [`crate::text::attrs`] (which owns the syntax of those values) or kept
//! as written.

use super::{ModuleState, PResult, Parser, Scope};
use crate::ir::instruction::{
    attr_key, ApiVersion, Attr, AttrValue, ComparisonDirection, ComparisonType,
};
use crate::ir::shape::Shape;
use crate::ir::signature;
use crate::ir::{CompId, InstrId, Instruction, Opcode, SharedStr};
use crate::util::FxMap;
use std::sync::Arc;

impl<'a> Parser<'a> {
    /// The `, key=value` attributes after the operands; whether
    /// `parameter_replication=` was written (checked once the shape is
    /// known; looking for it in every instruction costs time).
    pub(super) fn attributes(
        &mut self,
        scope: &mut Scope,
        instr: &mut Instruction,
        nested: bool,
        pred_branch: bool,
    ) -> PResult<bool> {
        let mut replication = false;
        loop {
            self.skip_ws()?;
            if self.b.get(self.pos) != Some(&b',') {
                break;
            }
            // `}, execution_thread=` ends a computation, not an attribute list;
            // and a nested instruction's list ends at its enclosing `,`.
            let save = self.pos;
            self.pos += 1;
            self.skip_ws()?;
            let key_start = self.pos;
            let key = self.peek_word()?;
            let after = self.b.get(key_start + key.len()).copied();
            if key.is_empty()
                || after != Some(b'=')
                || (nested && self.depth > 1 && !is_attr_name(key))
            {
                self.pos = save;
                break;
            }
            let (opcode, async_wrapped) = (instr.opcode, instr.async_wrapped);
            if !signature::attr_allowed(opcode, async_wrapped, pred_branch, key) {
                return self.err_at(
                    key_start,
                    format!(
                        "unexpected attribute \"{key}\". Allowed attributes: {}",
                        signature::allowed_attr_list(opcode, async_wrapped, pred_branch)
                    ),
                );
            }
            self.pos = key_start + key.len() + 1;
            replication |= key == "parameter_replication";
            self.attribute(scope, instr, key, key_start)?;
        }
        Ok(replication)
    }

    fn attribute(
        &mut self,
        scope: &mut Scope,
        instr: &mut Instruction,
        key: &'a str,
        key_pos: usize,
    ) -> PResult<()> {
        if instr.attrs.iter().any(|a| a.key == key) {
            return self.err_at(key_pos, format!("attribute {key} already exists"));
        }
        let value = match key {
            "dimensions" => AttrValue::Ints(self.int_list()?.into()),
            "index" | "iota_dimension" => AttrValue::Int(self.int()?),
            "to_apply" | "condition" | "body" | "select" | "scatter" | "true_computation"
            | "false_computation" | "calls" => self.comp_or_comps()?,
            "branch_computations" | "called_computations" => {
                AttrValue::Comps(self.comp_list()?.into())
            }
            "custom_call_target" => AttrValue::Str(self.string()?.into()),
            "backend_config" => self.backend_config()?,
            "direction" => AttrValue::Direction(self.named_value(
                "comparison direction",
                ComparisonDirection::from_name,
                |w| format!("expects comparison direction, but sees {w}"),
            )?),
            "type" if instr.opcode == Opcode::Compare => AttrValue::CompareType(self.named_value(
                "comparison type",
                ComparisonType::from_name,
                |w| format!("expects comparison type, but sees {w}"),
            )?),
            "api_version" => AttrValue::ApiVersion(self.named_value(
                "api version",
                ApiVersion::from_name,
                |w| format!("Unknown API version: {w}"),
            )?),
            "operand_layout_constraints" => self.operand_layout_constraints(scope, instr)?,
            "outfeed_shape" => AttrValue::Shape(Box::new(self.shape()?)),
            "literal" => self.literal_attr()?,
            "control-predecessors" => {
                let preds = self.instr_list(scope)?;
                instr.control_predecessors = preds.into();
                AttrValue::Raw("".into())
            }
            _ => self.other_attr(instr, key)?,
        };
        self.st.saw_metadata |= key == "metadata";
        instr.attrs.push(Attr {
            key: attr_key(key),
            value,
        });
        Ok(())
    }

    /// A computation (`to_apply=%add`), or a list of them.
    /// An attribute naming one computation (`to_apply=%f`). Written in
    /// braces (`{%f}`) it is read as the name alone: the IR and every
    /// check see one form, and the module prints as XLA writes it. Braces
    /// holding no name or several are refused: the proto cannot say it,
    /// and no op calls several computations through these attributes.
    fn comp_or_comps(&mut self) -> PResult<AttrValue> {
        if self.peek()? != Some(b'{') {
            let p = self.pos;
            let n = self.name("computation name")?;
            return Ok(AttrValue::Comp(self.comp_ref(n, p)));
        }
        self.skip_ws()?;
        let start = self.pos;
        match self.comp_list()?[..] {
            [one] => Ok(AttrValue::Comp(one)),
            ref many => self.err_at(
                start,
                format!("expects one computation, but sees {}", many.len()),
            ),
        }
    }

    /// `backend_config=`: a string, or a value kept as written.
    fn backend_config(&mut self) -> PResult<AttrValue> {
        if self.peek()? == Some(b'"') {
            Ok(AttrValue::BackendConfig(self.string()?.into()))
        } else {
            Ok(AttrValue::BackendConfig(self.raw_text()?))
        }
    }

    /// A name (`what`) that `from_name` knows; `unknown` words the error
    /// for one it does not.
    fn named_value<T>(
        &mut self,
        what: &str,
        from_name: impl FnOnce(&str) -> Option<T>,
        unknown: impl FnOnce(&str) -> String,
    ) -> PResult<T> {
        let p = self.pos;
        let w = self.name(what)?;
        match from_name(w) {
            Some(v) => Ok(v),
            None => self.err_at(p, unknown(w)),
        }
    }

    /// `operand_layout_constraints={f32[2]{0}, ...}` of a custom call.
    fn operand_layout_constraints(
        &mut self,
        scope: &Scope,
        instr: &Instruction,
    ) -> PResult<AttrValue> {
        self.skip_ws()?;
        let start = self.pos;
        self.expect(b'{', "to start operand_layout_constraints")?;
        let mut shapes = self.items_until(b'}', "between operand layout constraints", |p| {
            p.skip_ws()?;
            Ok((p.pos, p.shape()?))
        })?;
        self.check_layout_constraints(scope, instr, start, &mut shapes)?;
        Ok(AttrValue::Shapes(
            shapes.into_iter().map(|(_, s)| s).collect(),
        ))
    }

    /// A custom call's `literal=`, kept with its text.
    fn literal_attr(&mut self) -> PResult<AttrValue> {
        self.skip_ws()?;
        let start = self.pos;
        let lit = self.shaped_literal()?;
        let text = SharedStr::from(&self.text[start..self.pos]);
        Ok(AttrValue::Literal(Arc::new(
            crate::ir::attrs::Written::read(lit, text),
        )))
    }

    /// Any other attribute: typed if [`crate::text::attrs::read`] types it, else
    /// kept as written.
    fn other_attr(&mut self, instr: &Instruction, key: &str) -> PResult<AttrValue> {
        self.skip_ws()?;
        let value_pos = self.pos;
        let raw = self.raw_value()?;
        let op = instr.async_wrapped.unwrap_or(instr.opcode);
        match self.typed_value(key, Some(op), raw, value_pos)? {
            Some(v) => Ok(v),
            None => Ok(AttrValue::Raw(self.kept_text(raw))),
        }
    }

    /// The typed value of `key` written as `raw` (at `pos`), read once per
    /// distinct text; `None` for an attribute kept as text.
    pub(super) fn typed_value(
        &mut self,
        key: &str,
        opcode: Option<Opcode>,
        raw: &str,
        pos: usize,
    ) -> PResult<Option<AttrValue>> {
        let Some(kind) = crate::text::attrs::kind_id(key, opcode) else {
            return Ok(None);
        };
        let kind = usize::from(kind);
        fn cached<'s>(
            st: &'s ModuleState,
            kind: usize,
            raw: &str,
        ) -> Option<(&'s SharedStr, &'s AttrValue)> {
            st.typed.get(kind)?.get_key_value(raw)
        }
        if let Some((_, v)) = cached(&self.st, kind, raw) {
            return Ok(Some(v.clone()));
        }
        // A part keeps its own copy of a value the module read before
        // (see `interned_shape`).
        let (owned, v) = match self.base.and_then(|b| cached(b, kind, raw)) {
            Some((text, v)) => (text.clone(), v.unshared()),
            None => {
                // Its own copy: the value must not keep the window.
                let owned = SharedStr::from(raw.to_string());
                match crate::text::attrs::read(key, opcode, &owned) {
                    Ok(Some(v)) => (owned, v),
                    Ok(None) => return Ok(None),
                    Err((offset, m)) => return self.err_at(pos + offset, format!("{key}: {m}")),
                }
            }
        };
        if self.st.typed.len() <= kind {
            self.st.typed.resize_with(kind + 1, FxMap::default);
        }
        self.st.typed[kind].insert(owned, v.clone());
        Ok(Some(v))
    }

    /// `operand_layout_constraints={f32[2]{0}, ...}` of a custom call: one
    /// shape per operand (each with its position), each compatible with it.
    fn check_layout_constraints(
        &self,
        scope: &Scope,
        instr: &Instruction,
        start: usize,
        shapes: &mut [(usize, Shape)],
    ) -> PResult<()> {
        let n = instr.operands.len();
        if shapes.len() != n {
            return self.err_at(
                start,
                format!(
                    "Expected {n} operand layout constraints, {} given",
                    shapes.len()
                ),
            );
        }
        for (i, ((pos, c), operand)) in shapes.iter_mut().zip(&instr.operands).enumerate() {
            let operand = &scope.comp.instr(*operand).shape;
            if !c.compatible(operand) {
                c.fill_default_layouts();
                return self.err_at(
                    *pos,
                    format!(
                        "Operand layout constraint shape {} for operand {i} is not compatible with operand shape {}",
                        c.to_text(true),
                        operand.to_text(true)
                    ),
                );
            }
        }
        Ok(())
    }

    fn int_list(&mut self) -> PResult<Vec<i64>> {
        self.expect(b'{', "to start a list of integers")?;
        self.items_until(b'}', "between integers", Self::int)
    }

    fn comp_list(&mut self) -> PResult<Vec<CompId>> {
        self.expect(b'{', "to start a list of computations")?;
        self.items_until(b'}', "between computations", |p| {
            // An error about the name points at it, not at the blank before.
            p.skip_ws()?;
            let at = p.pos;
            let n = p.name("computation name")?;
            Ok(p.comp_ref(n, at))
        })
    }

    fn instr_list(&mut self, scope: &Scope) -> PResult<Vec<InstrId>> {
        self.expect(b'{', "to start a list of instructions")?;
        self.items_until(b'}', "between instructions", |p| {
            p.skip_ws()?;
            let at = p.pos;
            let n = p.name("instruction name")?;
            match p.all_names.get(n) {
                Some(&(comp, id)) if comp == scope.id => Ok(id),
                _ => p.err_at(at, format!("'{n}' is not defined")),
            }
        })
    }

    fn raw_text(&mut self) -> PResult<SharedStr> {
        let raw = self.raw_value()?;
        Ok(self.kept_text(raw))
    }

    /// An attribute text: the module's copy if it has one (in a part, the
    /// part's own copy of it), else a slice of the window (which
    /// [`Self::detach`] copies).
    fn kept_text(&mut self, raw: &'a str) -> SharedStr {
        if let Some(kept) = self.st.texts.get(raw) {
            return kept.clone();
        }
        // A part keeps its own copy (see `interned_shape`).
        if self.base.is_some_and(|b| b.texts.contains(raw)) {
            let own = SharedStr::from(raw.to_string());
            self.st.texts.insert(own.clone());
            return own;
        }
        self.shared(raw)
    }
}

/// Attribute names a nested instruction may carry (so that `, index=0`
/// after a nested operand is not mistaken for the outer list's end).
fn is_attr_name(key: &str) -> bool {
    !key.is_empty()
}
