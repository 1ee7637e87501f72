//! A computation: its name, its written signature
//! (`(p: f32[2]) -> f32[2]`), its body of instructions and its
//! `execution_thread`; checked against its parameters and root, then its
//! strings moved out of the window.

use super::{Definition, Fixup, PResult, Parser, Scope, QUOTED_LINE_CHARS};
use crate::ir::instruction::AttrValue;
use crate::ir::shape::Shape;
use crate::ir::{CompId, Computation, InstrId, SharedStr, SourcePos};
use crate::util::FxMap;
use std::sync::Arc;

/// A computation's written signature: `(p: f32[2], ...) -> f32[2]`.
struct Signature<'a> {
    params: Vec<SignatureParam<'a>>,
    result: Shape,
    /// Where the result shape is written.
    result_pos: usize,
}

/// A parameter of a written signature, and where it is written.
struct SignatureParam<'a> {
    pos: usize,
    name: &'a str,
    /// Interned as instruction shapes are: a large module's signatures
    /// write some 150k parameters, most of a few shapes.
    shape: Arc<Shape>,
}

impl<'a> Parser<'a> {
    pub(super) fn comp_ref(&mut self, name: &'a str, pos: usize) -> CompId {
        self.names_computation = true;
        if let Some(&id) = self.st.comp_ids.get(name) {
            return id;
        }
        let id = self.st.module.reserve_computation();
        self.st.comp_ids.insert(name.into(), id);
        // A name the module read before knows is no forward reference.
        if !self.base.is_some_and(|b| b.comp_ids.contains_key(name)) {
            self.st.new_refs.push((id, self.at.offset + pos));
        }
        id
    }

    /// Where the computation defined at `pos` is, kept past its window.
    fn definition(&mut self, pos: usize) -> Definition {
        let (line, column) = self.st.lines.line_column(self.text, pos);
        let start = self.st.lines.line_start(line);
        let rest = self.text.get(start..).unwrap_or_default();
        let text = rest.split('\n').next().unwrap_or_default();
        let source_line = match text.char_indices().nth(QUOTED_LINE_CHARS) {
            Some((cut, _)) => format!("{}...", &text[..cut]),
            None => text.to_string(),
        };
        Definition {
            offset: self.at.offset + pos,
            line: self.at.line + line + 1,
            column: column + 1,
            source_line,
        }
    }

    /// How many instructions to make room for in the computation whose
    /// body starts at `pos`: XLA writes one a line, so its lines up to one
    /// that starts with `}` (a line's length varies tenfold). Not for lines
    /// too short to hold one, nor past a bound (the arena grows if need
    /// be); few when the body does not end on a line of its own.
    fn body_capacity(&mut self, pos: usize) -> usize {
        let first = self.st.lines.line(pos);
        let end = self.st.lines.body_end(self.b, first);
        match self.st.lines.newlines.get(end) {
            Some(&close) => (end - first + 1)
                .min(close.saturating_sub(pos) / 8 + 1)
                .min(1 << 16),
            None => 16,
        }
    }

    pub(super) fn computation(&mut self) -> PResult<CompId> {
        self.all_names.clear();
        self.st.names.clear();
        self.names_computation = false;
        let name_pos = self.pos;
        let name = self.name("computation name")?;
        let id = self.new_computation_id(name, name_pos)?;
        let definition = self.definition(name_pos);
        self.st.comp_defined.insert(id, definition);
        let signature = self.signature()?;
        self.expect(b'{', "to start a computation")?;
        let capacity = self.body_capacity(self.pos);
        self.all_names.reserve(capacity);
        let mut scope = Scope {
            comp: Computation::with_capacity(name, capacity),
            id,
            compact_gtes: FxMap::default(),
            root: None,
            params: FxMap::default(),
        };
        let root = self.computation_body(&mut scope, name_pos)?;
        scope.comp.set_root(root);
        self.check_parameter_numbers(&scope)?;
        if let Some(signature) = signature {
            self.check_signature(&scope, name, root, &signature)?;
        }
        self.execution_thread(&mut scope.comp)?;
        scope.comp.shrink_to_fit();
        self.detach(&mut scope.comp);
        if self.names_computation && self.base.is_some() {
            self.st.calling.insert(id);
        }
        self.st.module.define_computation(id, scope.comp);
        Ok(id)
    }

    /// The id of the computation `name` being defined (at `name_pos`):
    /// the one its earlier uses reserved, or a new one.
    fn new_computation_id(&mut self, name: &'a str, name_pos: usize) -> PResult<CompId> {
        let id = match self.st.comp_ids.get(name) {
            Some(&id) => id,
            None => {
                let id = self.st.module.reserve_computation();
                self.st.comp_ids.insert(name.into(), id);
                id
            }
        };
        let base = self.base;
        let prev = self
            .st
            .comp_defined
            .get(&id)
            .or_else(|| base.and_then(|b| b.comp_defined.get(b.comp_ids.get(name)?)));
        if let Some(prev) = prev {
            return self.err_at(
                name_pos,
                format!(
                    "computation already exists: {name}\nwas parsing {}:{}: error: computation previously defined here\n{}\n{}^",
                    prev.line,
                    prev.column,
                    prev.source_line,
                    " ".repeat(prev.column.saturating_sub(1))
                ),
            );
        }
        Ok(id)
    }

    /// `(p: f32[2], ...) -> f32[2]` after a computation's name, if written.
    fn signature(&mut self) -> PResult<Option<Signature<'a>>> {
        if self.peek()? != Some(b'(') {
            return Ok(None);
        }
        self.st.saw_signature = true;
        self.pos += 1;
        let params = self.items_until(b')', "between parameters", |p| {
            p.skip_ws()?;
            let pos = p.pos;
            let name = p.name("parameter name")?;
            p.expect(b':', "after parameter name")?;
            let shape = p.interned_shape()?;
            Ok(SignatureParam { pos, name, shape })
        })?;
        self.expect_arrow("expects '->' after computation parameters")?;
        let result_pos = self.pos;
        let result = self.shape()?;
        Ok(Some(Signature {
            params,
            result,
            result_pos,
        }))
    }

    /// The instructions up to the closing `}`; the root: the one marked
    /// `ROOT`, else the last.
    fn computation_body(&mut self, scope: &mut Scope, name_pos: usize) -> PResult<InstrId> {
        let mut last = None;
        while !self.eat(b'}')? {
            if self.peek()?.is_none() {
                return self.err("expects '}' at the end of a computation");
            }
            last = Some(self.instruction(scope)?);
        }
        match (scope.root, last) {
            (Some((r, _)), _) => Ok(r),
            (None, Some(l)) => Ok(l),
            (None, None) => self.err_at(name_pos, "computation has no instructions"),
        }
    }

    /// Parameter numbers are 0..n-1 (XLA's HloComputation CHECK-fails on
    /// any other; a gap would also print a signature that does not parse
    /// back).
    fn check_parameter_numbers(&self, scope: &Scope) -> PResult<()> {
        let count = scope.params.len() as i64;
        if let Some((&n, &npos)) = scope
            .params
            .iter()
            .filter(|(&n, _)| n >= count)
            .min_by_key(|(_, &p)| p)
        {
            return self.err_at(
                npos,
                format!("invalid parameter number. Expected [0, {count}), got {n}"),
            );
        }
        Ok(())
    }

    /// A written signature agrees with the root and the parameters.
    fn check_signature(
        &self,
        scope: &Scope,
        name: &str,
        root: InstrId,
        signature: &Signature<'a>,
    ) -> PResult<()> {
        let root_shape = &scope.comp.instr(root).shape;
        if !signature.result.compatible(root_shape) {
            return self.err_at(
                signature.result_pos,
                format!(
                    "Shape of computation {}, {}, is not compatible with that of its root instruction {}, {}",
                    name,
                    signature.result.to_text(false),
                    self.instruction_name(root),
                    root_shape.to_text(false)
                ),
            );
        }
        for (i, p) in signature.params.iter().enumerate() {
            match self.signature_parameter(scope, p.name, i as i64) {
                Some(pid) if scope.comp.instr(pid).shape.compatible(&p.shape) => {}
                _ => {
                    return self.err_at(
                        p.pos,
                        format!(
                            "computation parameter {} does not match parameter {i}",
                            p.name
                        ),
                    )
                }
            }
        }
        Ok(())
    }

    /// The parameter numbered `n` that the signature's `name` stands for.
    /// XLA ignores the names in a signature: they need not be the
    /// parameters' (the fast path is when they are).
    fn signature_parameter(&self, scope: &Scope, name: &str, n: i64) -> Option<InstrId> {
        self.all_names
            .get(name)
            .filter(|&&(c, _)| c == scope.id)
            .map(|&(_, id)| id)
            .filter(|&id| scope.comp.instr(id).parameter_number() == Some(n))
            .or_else(|| {
                scope.params.contains_key(&n).then(|| {
                    scope
                        .comp
                        .instructions()
                        .find(|(_, x)| x.parameter_number() == Some(n))
                        .map(|(id, _)| id)
                })?
            })
    }

    /// `, execution_thread="..."` after a computation's `}`, if written.
    fn execution_thread(&mut self, comp: &mut Computation) -> PResult<()> {
        if self.peek()? == Some(b',') {
            let save = self.pos;
            self.pos += 1;
            if self.eat_keyword("execution_thread")? {
                self.expect(b'=', "after execution_thread")?;
                comp.execution_thread = Some(self.string()?.into());
            } else {
                self.pos = save;
            }
        }
        Ok(())
    }

    /// The name of instruction `id` of the computation being read.
    fn instruction_name(&self, id: InstrId) -> &'a str {
        let names = &self.st.names;
        match names.binary_search_by_key(&id, |&(i, _, _)| i) {
            Ok(k) => &self.text[names[k].1..names[k].2],
            Err(_) => "",
        }
    }

    /// Moves the strings a computation keeps out of the window: its names
    /// into one buffer of its own, its attribute texts into the module's
    /// set of distinct texts (new ones into that buffer too). Records where
    /// each named instruction was read.
    fn detach(&mut self, comp: &mut Computation) {
        let window = Arc::clone(&self.src);
        let mut buf = std::mem::take(&mut self.st.strings);
        let mut fixups = std::mem::take(&mut self.st.fixups);
        buf.clear();
        fixups.clear();
        // Texts new to the module, by their place in `buf`.
        let mut fresh: FxMap<&str, (u32, u32)> = FxMap::default();
        let push = |buf: &mut String, s: &str| {
            let start = buf.len();
            buf.push_str(s);
            (start as u32, buf.len() as u32)
        };
        let unknown = SourcePos { line: 0, column: 0 };
        let mut positions = Vec::with_capacity(comp.slot_count());
        // In the order made, which is the text's.
        for &(id, start, end) in &self.st.names {
            positions.resize(id.index(), unknown);
            positions.push(self.st.lines.source_pos(self.text, self.at.line, start));
            let (s, e) = push(&mut buf, &self.text[start..end]);
            fixups.push(Fixup {
                instr: id,
                attr: u32::MAX,
                start: s,
                end: e,
            });
        }
        positions.resize(comp.slot_count(), unknown);
        for (id, instr) in comp.slots_mut() {
            for (k, attr) in instr.attrs.iter().enumerate() {
                // Texts the module had are its copies already.
                let (AttrValue::Raw(s) | AttrValue::BackendConfig(s)) = &attr.value else {
                    continue;
                };
                let Some(text) = s
                    .offset_in(&window)
                    .and_then(|o| window.get(o..o + s.len()))
                else {
                    continue;
                };
                let (start, end) = *fresh.entry(text).or_insert_with(|| push(&mut buf, text));
                fixups.push(Fixup {
                    instr: id,
                    attr: k as u32,
                    start,
                    end,
                });
            }
        }
        // One allocation of the exact size for the computation's strings.
        let strings = Arc::new(buf.as_str().to_owned());
        let slice = |start: u32, end: u32| {
            SharedStr::slice(&strings, start as usize, end as usize).unwrap_or_default()
        };
        for f in &fixups {
            let Some(instr) = comp.get_mut(f.instr) else {
                continue;
            };
            if f.attr == u32::MAX {
                instr.name = slice(f.start, f.end);
            } else if let Some(attr) = instr.attrs.get_mut(f.attr as usize) {
                if let AttrValue::Raw(s) | AttrValue::BackendConfig(s) = &mut attr.value {
                    *s = slice(f.start, f.end);
                }
            }
        }
        for (start, end) in fresh.into_values() {
            self.st.texts.insert(slice(start, end));
        }
        comp.set_source_positions(positions.into_boxed_slice());
        self.st.strings = buf;
        self.st.fixups = fixups;
    }

    pub(super) fn comp_name(&self, id: CompId) -> &str {
        self.st
            .comp_ids
            .iter()
            .find(|(_, &v)| v == id)
            .map_or("", |(k, _)| k)
    }
}
