//! The module: the `HloModule` header and its attributes
//! (`entry_computation_layout`, aliasing, ...), the stack frame tables
//! before the computations, a window's computations, and the module
//! completed once every window is read.

use super::{ForwardRef, PResult, Parser};
use crate::ir::instruction::{attr_key, Attr, AttrValue};
use crate::ir::module::{
    FileLocation, PrintOptions, ProgramShape, StackFrame, StackFrameIndex, StackFramePositions,
};
use crate::ir::{Module, SharedStr};
use crate::text::ParseError;
use std::sync::Arc;

impl<'a> Parser<'a> {
    /// One window: the header if it is the first, then computations; if it
    /// is the last (`Some(whether the text ends with a blank line)`), the
    /// module.
    pub(super) fn window(&mut self, last: Option<bool>) -> PResult<Option<Module>> {
        if self.at.offset == 0 {
            self.header()?;
        }
        while self.peek()?.is_some() {
            if self.st.before_computations && self.peek_word()? == "FileNames" {
                self.stack_frames()?;
            }
            self.st.before_computations = false;
            if self.peek()?.is_none() {
                break;
            }
            let start = self.pos;
            let is_entry = self.eat_keyword("ENTRY")?;
            let id = self.computation()?;
            if is_entry {
                if self.st.entry.is_some() {
                    return self.err_at(start, "expects only one ENTRY");
                }
                self.st.entry = Some(id);
            }
            self.st.last = Some(id);
        }
        self.locate_forward_refs();
        match last {
            Some(blank_line) => self.finish(blank_line).map(Some),
            None => Ok(None),
        }
    }

    /// An MLIR module: `module @name ...`, `module attributes`, `func.func`, or a
    /// `#loc` alias before them.
    fn starts_mlir(&mut self) -> PResult<bool> {
        let word = self.peek_word()?;
        let after = self.b.get(self.pos + word.len()..).unwrap_or_default();
        let next = after.iter().find(|c| !c.is_ascii_whitespace());
        Ok(match word {
            "module" => matches!(next, Some(b'@' | b'a')),
            // Not a header-less computation named `func.func` (`{`, `(`).
            "func.func" => next.is_some_and(|c| *c == b'@' || c.is_ascii_alphabetic()),
            "" => after.starts_with(b"#loc"),
            _ => false,
        })
    }

    fn header(&mut self) -> PResult<()> {
        let has_header = self.eat_keyword("HloModule")?;
        if has_header {
            let name = self.name("module name")?;
            self.st.module.name = name.into();
            // Old dumps write `HloModule name:`.
            if self.b.get(self.pos) == Some(&b':') {
                self.pos += 1;
            }
            while self.eat(b',')? {
                self.header_attr()?;
            }
        } else if self.peek()?.is_none() {
            return self.err("expects 'HloModule', but the text is empty");
        } else if self.starts_mlir()? {
            // What JAX's `lowered.as_text()` gives by default.
            return self.err(
                "expects 'HloModule', but this is MLIR (StableHLO), not HLO text; from JAX take \
                 `jax.jit(f).lower(x).as_text(dialect=\"hlo\")` (or, in Python, `hlo_opt.from_jax(f, x)`)",
            );
        } else if !self.starts_computation()? {
            // XLA also reads computations without a header (as we do) and a
            // single instruction, making up parameters for its operands.
            return self.err(
                "expects 'HloModule' at the start of a module (a single instruction is not a module)",
            );
        }
        self.st.has_header = has_header;
        // The header's texts must not keep the window.
        for attr in &mut self.st.module.header {
            match &mut attr.value {
                AttrValue::Raw(s) if s.offset_in(&self.src).is_some() => {
                    *s = SharedStr::from(s.as_str());
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Locates the references to computations not defined by the end of
    /// the window, while its text is there.
    fn locate_forward_refs(&mut self) {
        // The references come in text order: each line is copied once, and
        // each column counted on from the one before on its line.
        let mut on_line: Option<Located> = None;
        for (id, offset) in std::mem::take(&mut self.st.new_refs) {
            if self.st.comp_defined.contains_key(&id) {
                continue;
            }
            let found = self.locate(offset.saturating_sub(self.at.offset), on_line.take());
            self.st.forward_refs.push((id, offset, found.at.clone()));
            on_line = Some(found);
        }
    }

    /// Where byte `pos` of the window is, for an error there (as
    /// [`Parser::error_at`] has it), found in the window's line index;
    /// `before`: the last found, with its line index and byte. Counting the
    /// lines, or a long line's characters, from the start for each of
    /// thousands of forward references took time and memory quadratic in
    /// the window.
    fn locate(&mut self, pos: usize, before: Option<Located>) -> Located {
        let text = self.text;
        let mut pos = pos.min(text.len());
        while !text.is_char_boundary(pos) {
            pos -= 1;
        }
        let line = self.st.lines.line(pos);
        let at = match before {
            Some(Located {
                line: l,
                byte,
                mut at,
            }) if l == line && byte <= pos => {
                at.column += text[byte..pos].chars().count();
                at
            }
            _ => {
                let start = self.st.lines.line_start(line);
                let end = self.st.lines.newlines.get(line).map_or(text.len(), |&n| n);
                ForwardRef {
                    line: self.at.line + line + 1,
                    column: text[start..pos].chars().count() + 1,
                    source_line: text[start..end].into(),
                }
            }
        };
        Located {
            line,
            byte: pos,
            at,
        }
    }

    /// Completes the module once every window is read.
    fn finish(&mut self, blank_line: bool) -> PResult<Module> {
        let undefined = self
            .st
            .forward_refs
            .iter()
            .filter(|(id, _, _)| !self.st.comp_defined.contains_key(id))
            .min_by_key(|(_, offset, _)| *offset);
        if let Some((id, _, at)) = undefined {
            return Err(Box::new(ParseError::new(
                self.file,
                at.line,
                at.column,
                format!("computation does not exist: {}", self.comp_name(*id)),
                &at.source_line,
            )));
        }
        let entry = match (self.st.entry, self.st.last) {
            (Some(id), _) | (None, Some(id)) => id,
            (None, None) => return self.err("expects at least one computation"),
        };
        let st = &mut self.st;
        st.module.set_entry(entry);
        if !st.has_header {
            st.module.name = format!("module_{}", st.module.comp(entry).name).into();
        }
        self.name_unnamed();
        let st = &mut self.st;
        st.module.style = PrintOptions {
            percent: st.saw_percent,
            signatures: st.saw_signature,
            operand_shapes: st.saw_operand_shape,
            operand_index_annotations: st.saw_percent,
            metadata: st.saw_percent || !st.saw_any_instruction || st.saw_metadata,
            stack_frames: true,
            derive_entry_layout: st.module.entry_computation_layout().is_some(),
            trailing_blank_line: blank_line,
        };
        Ok(std::mem::replace(&mut st.module, Module::new("")))
    }

    /// Whether the text at the cursor starts a computation (`ENTRY`, or a
    /// name and `{`), as XLA decides when there is no `HloModule` header.
    fn starts_computation(&mut self) -> PResult<bool> {
        let save = self.pos;
        let saw_percent = self.st.saw_percent;
        let r = self.eat_keyword("ENTRY")? || (self.name("").is_ok() && self.peek()? == Some(b'{'));
        self.pos = save;
        self.st.saw_percent = saw_percent;
        Ok(r)
    }

    fn header_attr(&mut self) -> PResult<()> {
        let key_pos = self.pos;
        let key = self.name("attribute name")?;
        self.expect(b'=', "after attribute name")?;
        let value = match key {
            "entry_computation_layout" => {
                self.expect(b'{', "to start entry_computation_layout")?;
                let ps = self.program_shape()?;
                self.expect(b'}', "to end entry_computation_layout")?;
                AttrValue::ProgramShape(Box::new(ps))
            }
            _ => {
                self.skip_ws()?;
                let start = self.pos;
                if matches!(key, "input_output_alias" | "buffer_donor") {
                    // XLA's own messages for these.
                    self.check_aliasing(key, start)?;
                }
                let raw = self.raw_value()?;
                match self.typed_value(key, None, raw, start)? {
                    Some(v) => v,
                    None => AttrValue::Raw(self.shared(raw)),
                }
            }
        };
        if self.st.module.header.iter().any(|a| a.key == key) {
            return self.err_at(key_pos, format!("duplicate module attribute: {key}"));
        }
        self.st.module.header.push(Attr {
            key: attr_key(key),
            value,
        });
        Ok(())
    }

    /// `{ {0}: (0, {}, may-alias), ... }` and `{ (0, {1}), ... }`.
    fn check_aliasing(&self, key: &str, start: usize) -> PResult<()> {
        let mut sub = Parser::new(self.text, Arc::clone(&self.src), self.file, self.at);
        sub.pos = start;
        sub.expect(b'{', "to start aliasing")?;
        if sub.eat(b'}')? {
            return Ok(());
        }
        loop {
            if key == "input_output_alias" {
                sub.shape_index()?;
                if !sub.eat(b':')? {
                    return sub.err(
                        "Expected format: <output_shape_index>: (<input_param>, <input_param_shape_index>)",
                    );
                }
            }
            sub.expect(b'(', "to start an alias")?;
            sub.int()?;
            sub.expect(b',', "after the parameter number")?;
            sub.shape_index()?;
            if sub.eat(b',')? {
                let kind = sub.name("alias kind")?;
                if !matches!(kind, "may-alias" | "must-alias") {
                    return sub.err(format!("Unexpected aliasing kind: {kind}"));
                }
            }
            if !sub.eat(b')')? {
                return sub.err("Expects ')' at the end of aliasing description");
            }
            if sub.eat(b'}')? {
                break;
            }
            if !sub.eat(b',')? {
                return sub.err("Expects '}' at the end of aliasing description");
            }
        }
        Ok(())
    }

    fn shape_index(&mut self) -> PResult<Vec<i64>> {
        if !self.eat(b'{')? {
            return self.err("Expects '{' at the start of ShapeIndex");
        }
        let mut idx = Vec::new();
        if self.eat(b'}')? {
            return Ok(idx);
        }
        loop {
            idx.push(self.int()?);
            if self.eat(b'}')? {
                return Ok(idx);
            }
            if !self.eat(b',')? {
                return self.err("Expects '}' at the end of ShapeIndex");
            }
        }
    }

    fn program_shape(&mut self) -> PResult<ProgramShape> {
        self.expect(b'(', "to start the parameters of a program shape")?;
        let parameters = self.items_until(b')', "between parameters", Self::shape)?;
        self.expect_arrow("expects '->' in a program shape")?;
        let result = self.shape()?;
        Ok(ProgramShape { parameters, result })
    }

    /// The `->` before a signature's result; `msg` if it is missing.
    pub(super) fn expect_arrow(&mut self, msg: &str) -> PResult<()> {
        self.skip_ws()?;
        if self.b.get(self.pos..self.pos + 2) != Some(b"->") {
            return self.err(msg);
        }
        self.pos += 2;
        Ok(())
    }

    fn stack_frames(&mut self) -> PResult<()> {
        let mut index = StackFrameIndex::default();
        let mut positions = StackFramePositions::default();
        let sections = ["FileNames", "FunctionNames", "FileLocations", "StackFrames"];
        for (n, section) in sections.iter().enumerate() {
            if !self.eat_keyword(section)? {
                return self.err(format!("expects '{section}' in the stack frame index"));
            }
            loop {
                self.skip_ws()?;
                if !self.b.get(self.pos).is_some_and(u8::is_ascii_digit) {
                    break;
                }
                let id_pos = self.pos;
                let id = self.int()?;
                let expected = match n {
                    0 => index.file_names.len(),
                    1 => index.function_names.len(),
                    2 => index.file_locations.len(),
                    _ => index.stack_frames.len(),
                } as i64
                    + 1;
                if id != expected {
                    return self.err_at(id_pos, format!("expects id {expected}, but sees {id}"));
                }
                if n >= 2 {
                    let at = self.st.lines.source_pos(self.text, self.at.line, id_pos);
                    match n {
                        2 => positions.file_locations.push(at),
                        _ => positions.stack_frames.push(at),
                    }
                }
                match n {
                    0 => index.file_names.push(self.string()?.into()),
                    1 => index.function_names.push(self.string()?.into()),
                    2 => {
                        let fields = self.int_fields()?;
                        let get = |k: &str| fields.iter().find(|(n, _)| *n == k).map_or(0, |f| f.1);
                        index.file_locations.push(FileLocation {
                            file_name_id: get("file_name_id"),
                            function_name_id: get("function_name_id"),
                            line: get("line"),
                            end_line: get("end_line"),
                            column: get("column"),
                            end_column: get("end_column"),
                        });
                    }
                    _ => {
                        let fields = self.int_fields()?;
                        let get = |k: &str| fields.iter().find(|(n, _)| *n == k).map_or(0, |f| f.1);
                        index.stack_frames.push(StackFrame {
                            file_location_id: get("file_location_id"),
                            parent_frame_id: get("parent_frame_id") - 1,
                        });
                    }
                }
            }
        }
        self.st.module.stack_frames = Some(index);
        self.st.module.stack_frame_positions = Some(Arc::new(positions));
        Ok(())
    }

    /// `{a=1 b=2}`
    fn int_fields(&mut self) -> PResult<Vec<(&'a str, i64)>> {
        self.expect(b'{', "to start a table entry")?;
        let mut fields = Vec::new();
        while !self.eat(b'}')? {
            let k = self.name("field name")?;
            self.expect(b'=', "after field name")?;
            fields.push((k, self.int()?));
        }
        Ok(fields)
    }

    fn name_unnamed(&mut self) {
        let unnamed = std::mem::take(&mut self.st.unnamed);
        for (comp, id, wanted) in unnamed {
            let name = self.st.module.names_mut().unique(&wanted);
            self.st.module.comp_mut(comp).instr_mut(id).name = name.into();
        }
    }
}

/// A position [`Parser::locate`] found: its line (an index into the
/// window's lines) and byte in the window, and the reference made there.
struct Located {
    line: usize,
    byte: usize,
    at: ForwardRef,
}

#[cfg(test)]
mod tests {
    use super::super::{Parser, Position};
    use std::sync::Arc;

    #[test]
    fn forward_references_are_located_as_error_at_locates() {
        for text in [
            "",
            "\n",
            "a\n\nb = \u{e9}t\u{e9}(x)\n  \u{1f600} y\nlast",
            "ends with a newline\n\u{e9}\n",
        ] {
            let window = Arc::new(text.to_string());
            let at = Position {
                offset: 100,
                line: 7,
            };
            let mut p = Parser::new(&window, Arc::clone(&window), "t.hlo", at);
            p.st.lines.index(&window);
            // Every byte (inside a character too, and past the end), in
            // order and then back to the start, each from the one before.
            let positions = (0..text.len() + 3).chain([usize::MAX, 0, 3]);
            let mut before = None;
            for pos in positions {
                let found = p.locate(pos, before.take());
                let e = p.error_at(pos, "");
                let r = &found.at;
                assert_eq!(
                    (r.line, r.column, &*r.source_line),
                    (e.line, e.column, e.source_line.as_str()),
                    "{text:?} at {pos}"
                );
                before = Some(found);
            }
        }
    }
}
