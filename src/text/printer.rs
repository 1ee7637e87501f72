//! The HLO text printer. With the options a module was read with, it
//! gives back the text XLA printed, byte for byte.

use super::number::{c_escape, format_element};
use crate::ir::attrs::{OpMetadata, Written};
use crate::ir::instruction::{Attr, AttrValue, Payload};
use crate::ir::literal::{Literal, LiteralData};
use crate::ir::module::{PrintOptions, ProgramShape};
use crate::ir::shape::{push_int, Shape};
use crate::ir::{CompId, Computation, Instruction, Module};
use crate::util::{par_for_each_in_order, FxMap, Spares};
use std::borrow::Cow;
use std::sync::Arc;

/// Prints a module with the options it was read with.
pub fn print_module(module: &Module) -> String {
    print_module_with(module, &module.style)
}

pub fn print_module_with(module: &Module, options: &PrintOptions) -> String {
    let mut out = Vec::with_capacity(module.instruction_count() * 160);
    write_module(module, options, &mut out).expect("writing to a Vec cannot fail");
    String::from_utf8(out).expect("the printer writes UTF-8")
}

/// Streams the module to `w` one computation at a time, so printing a
/// large module needs no second copy of it in memory.
pub fn write_module(
    module: &Module,
    options: &PrintOptions,
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let mut buf = String::with_capacity(1 << 16);
    let mut p = Printer {
        module,
        options,
        out: &mut buf,
        sink: Some(w),
        error: None,
        memo: Memo::default(),
    };
    p.module();
    p.flush();
    match p.error.take() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Prints one instruction line (without indentation or newline).
pub fn print_instruction(module: &Module, comp: CompId, id: crate::ir::InstrId) -> String {
    let mut out = String::new();
    let c = module.comp(comp);
    Printer {
        module,
        options: &module.style,
        out: &mut out,
        sink: None,
        error: None,
        memo: Memo::default(),
    }
    .instruction(c, c.instr(id), c.root_opt() == Some(id));
    out
}

/// Texts of computations this large are printed into buffers written
/// before ([`Spares`]), at most `SPARE_TEXTS` of them kept.
const SPARE_TEXT: usize = 64 << 10;
const SPARE_TEXTS: usize = 8;

/// Instructions whose texts may wait, printed, to be written.
const PRINT_AHEAD: usize = 16_384;

/// Modules smaller than this print on one thread.
const PARALLEL_PRINT: usize = 100_000;

struct Printer<'m, 'o> {
    module: &'m Module,
    options: &'m PrintOptions,
    out: &'o mut String,
    /// Where full buffers go; `None` keeps everything in `out`.
    sink: Option<&'o mut dyn std::io::Write>,
    error: Option<std::io::Error>,
    memo: Memo,
}

/// Text of each shared shape and metadata printed so far, by address: the
/// values outlive the printer (the module is borrowed), so their
/// addresses are stable. A module read from a proto shares one metadata
/// value among the hundreds of instructions with the same, and has no
/// text of it to print back.
#[derive(Default)]
struct Memo {
    shapes: FxMap<*const Shape, String>,
    metadata: FxMap<*const Written<OpMetadata>, String>,
}

impl Printer<'_, '_> {
    fn flush(&mut self) {
        if let Some(sink) = self.sink.as_mut() {
            if self.error.is_none() {
                if let Err(e) = sink.write_all(self.out.as_bytes()) {
                    self.error = Some(e);
                }
            }
            self.out.clear();
        }
    }

    fn module(&mut self) {
        let m = self.module;
        self.out.push_str("HloModule ");
        self.out.push_str(&m.name);
        let derived = match m.entry_computation_layout() {
            None if self.options.derive_entry_layout => m.derived_entry_layout(),
            _ => None,
        };
        let mut header: Vec<Cow<'_, Attr>> = m.header.iter().map(Cow::Borrowed).collect();
        if let Some(layout) = derived {
            // XLA writes it after `is_scheduled` and before the rest.
            let at = header
                .iter()
                .position(|a| a.key != "is_scheduled")
                .unwrap_or(header.len());
            header.insert(
                at,
                Cow::Owned(Attr {
                    key: crate::ir::instruction::attr_key("entry_computation_layout"),
                    value: AttrValue::ProgramShape(Box::new(layout)),
                }),
            );
        }
        for attr in &header {
            // These two are written on lines of their own.
            self.out.push_str(if attr.key == "debug_attributes" {
                ",\n"
            } else {
                ", "
            });
            self.out.push_str(&attr.key);
            self.out.push('=');
            match &attr.value {
                AttrValue::ProgramShape(p) => {
                    self.out.push('{');
                    program_shape(p, self.out);
                    self.out.push('}');
                }
                other => self.attr_value(other),
            }
            if attr.key == "origin_recovery_table" {
                self.out.push('\n');
            }
        }
        self.out.push_str("\n\n");
        if self.options.stack_frames {
            if let Some(sf) = &m.stack_frames {
                self.out.push_str("FileNames\n");
                for (i, f) in sf.file_names.iter().enumerate() {
                    self.table_id(i);
                    self.quoted(f);
                    self.out.push('\n');
                }
                self.out.push_str("\nFunctionNames\n");
                for (i, f) in sf.function_names.iter().enumerate() {
                    self.table_id(i);
                    self.quoted(f);
                    self.out.push('\n');
                }
                self.out.push_str("\nFileLocations\n");
                for (i, l) in sf.file_locations.iter().enumerate() {
                    self.table_id(i);
                    self.out.push_str("{file_name_id=");
                    push_int(self.out, l.file_name_id);
                    self.out.push_str(" function_name_id=");
                    push_int(self.out, l.function_name_id);
                    self.out.push_str(" line=");
                    push_int(self.out, l.line);
                    self.out.push_str(" end_line=");
                    push_int(self.out, l.end_line);
                    self.out.push_str(" column=");
                    push_int(self.out, l.column);
                    self.out.push_str(" end_column=");
                    push_int(self.out, l.end_column);
                    self.out.push_str("}\n");
                }
                self.out.push_str("\nStackFrames\n");
                for (i, s) in sf.stack_frames.iter().enumerate() {
                    self.table_id(i);
                    self.out.push_str("{file_location_id=");
                    push_int(self.out, s.file_location_id);
                    self.out.push_str(" parent_frame_id=");
                    push_int(self.out, s.parent_frame_id + 1);
                    self.out.push_str("}\n");
                }
                self.out.push_str("\n\n");
            }
        }
        self.computations();
    }

    /// The computations, in order. They print independently, so they are
    /// printed on the machine's cores, each into its own text, and written
    /// in order as they are done: the output is the same whatever the
    /// number of threads, and memory holds the texts of about
    /// `PRINT_AHEAD` instructions.
    fn computations(&mut self) {
        let m = self.module;
        let options = self.options;
        let comps: Vec<(CompId, &Computation)> = m.computations().collect();
        let last = comps.last().map(|&(id, _)| id);
        let parallel = m.instruction_count() >= PARALLEL_PRINT;
        let spare = Spares::new(SPARE_TEXTS);
        let print = |memo: &mut Memo, &(id, comp): &(CompId, &Computation)| {
            let size = comp.instruction_count() * 128;
            let mut out = match size >= SPARE_TEXT {
                true => spare.take().unwrap_or_default(),
                false => String::new(),
            };
            out.reserve(size);
            let mut p = Printer {
                module: m,
                options,
                out: &mut out,
                sink: None,
                error: None,
                memo: std::mem::take(memo),
            };
            if Some(id) == m.entry_opt() {
                p.out.push_str("ENTRY ");
            }
            p.computation(comp);
            *memo = p.memo;
            if Some(id) == last && !options.trailing_blank_line {
                out.pop();
            }
            out
        };
        let written = par_for_each_in_order(
            &comps,
            parallel,
            PRINT_AHEAD,
            |(_, c)| c.instruction_count(),
            Memo::default,
            print,
            |mut text| {
                self.write_text(&text);
                if text.capacity() >= SPARE_TEXT {
                    text.clear();
                    spare.give(text);
                }
                // A failed write stops the printing: nothing more is written.
                match self.error {
                    Some(_) => Err(()),
                    None => Ok(()),
                }
            },
        );
        debug_assert_eq!(written.is_err(), self.error.is_some());
    }

    /// A printed computation, after what is printed so far.
    fn write_text(&mut self, text: &str) {
        match self.sink {
            Some(_) => {
                self.flush();
                if let (Some(sink), None) = (self.sink.as_mut(), &self.error) {
                    if let Err(e) = sink.write_all(text.as_bytes()) {
                        self.error = Some(e);
                    }
                }
            }
            None => self.out.push_str(text),
        }
    }

    fn table_id(&mut self, i: usize) {
        push_int(self.out, i as i64 + 1);
        self.out.push(' ');
    }

    fn quoted(&mut self, s: &str) {
        self.out.push('"');
        c_escape(s, self.out);
        self.out.push('"');
    }

    fn name(&mut self, name: &str) {
        if self.options.percent {
            self.out.push('%');
        }
        self.out.push_str(name);
    }

    fn computation(&mut self, comp: &Computation) {
        self.name(&comp.name);
        if self.options.signatures {
            self.out.push_str(" (");
            for (i, p) in comp.parameters().into_iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                let p = comp.instr(p);
                self.out.push_str(&p.name);
                self.out.push_str(": ");
                p.shape.write(self.out, false);
            }
            self.out.push_str(") -> ");
            if let Some(root) = comp.root_opt() {
                comp.instr(root).shape.write(self.out, false);
            }
        }
        self.out.push_str(" {\n");
        let order = if self.module_is_scheduled() {
            comp.schedule()
        } else {
            comp.post_order()
        };
        for id in order {
            self.out.push_str("  ");
            self.instruction(comp, comp.instr(id), comp.root_opt() == Some(id));
            self.out.push('\n');
            if self.out.len() > (1 << 16) {
                self.flush();
            }
        }
        self.out.push('}');
        if let Some(t) = &comp.execution_thread {
            self.out.push_str(", execution_thread=");
            self.quoted(t);
        }
        self.out.push_str("\n\n");
    }

    fn module_is_scheduled(&self) -> bool {
        self.module.is_scheduled()
    }

    fn instruction(&mut self, comp: &Computation, instr: &Instruction, is_root: bool) {
        if is_root {
            self.out.push_str("ROOT ");
        }
        self.name(&instr.name);
        self.out.push_str(" = ");
        // Shapes are shared: write each distinct one once.
        let key = Arc::as_ptr(&instr.shape);
        match self.memo.shapes.get(&key) {
            Some(text) => self.out.push_str(text),
            None => {
                let text = instr.shape.to_text(true);
                self.out.push_str(&text);
                self.memo.shapes.insert(key, text);
            }
        }
        self.out.push(' ');
        match instr.async_wrapped {
            Some(wrapped) => {
                self.out.push_str(wrapped.name());
                self.out.push_str(match instr.opcode {
                    crate::ir::Opcode::AsyncStart => "-start",
                    crate::ir::Opcode::AsyncUpdate => "-update",
                    _ => "-done",
                });
            }
            None => self.out.push_str(instr.opcode.name()),
        }
        self.out.push('(');
        match &instr.payload {
            Payload::Parameter(n) => push_int(self.out, *n),
            Payload::Constant(lit) => literal(lit, self.out),
            Payload::None => {
                for (i, &op) in instr.operands().iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                        if self.options.operand_index_annotations && i % 5 == 0 {
                            self.out.push_str("/*index=");
                            push_int(self.out, i as i64);
                            self.out.push_str("*/");
                        }
                    }
                    let operand = comp.instr(op);
                    if self.options.operand_shapes {
                        operand.shape.write(self.out, true);
                        self.out.push(' ');
                    }
                    self.name(&operand.name);
                }
            }
        }
        self.out.push(')');
        for attr in &instr.attrs {
            if !self.options.metadata && attr.key == "metadata" {
                continue;
            }
            if attr.key == "control-predecessors" {
                if !self.options.percent {
                    continue;
                }
                self.out.push_str(", control-predecessors={");
                for (i, &p) in instr.control_predecessors().iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.name(&comp.instr(p).name);
                }
                self.out.push('}');
                continue;
            }
            self.out.push_str(", ");
            self.out.push_str(&attr.key);
            self.out.push('=');
            self.attr_value(&attr.value);
        }
    }

    fn attr_value(&mut self, value: &AttrValue) {
        if let AttrValue::Metadata(m) = value {
            if m.text().is_none() && Arc::strong_count(m) > 1 {
                let text = self.memo.metadata.entry(Arc::as_ptr(m)).or_insert_with(|| {
                    let mut text = String::new();
                    super::attrs::print(value, &mut text);
                    text
                });
                self.out.push_str(text);
                return;
            }
        }
        if super::attrs::print(value, self.out) {
            return;
        }
        match value {
            AttrValue::Raw(s) => self.out.push_str(s),
            AttrValue::Comp(c) => {
                let name = &self.module.comp(*c).name;
                self.name(name);
            }
            AttrValue::Comps(cs) => {
                self.out.push('{');
                for (i, c) in cs.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    let name = &self.module.comp(*c).name;
                    self.name(name);
                }
                self.out.push('}');
            }
            AttrValue::BackendConfig(s) => {
                if looks_like_json_object(s) {
                    self.out.push_str(s);
                } else {
                    self.quoted(s);
                }
            }
            AttrValue::ProgramShape(p) => program_shape(p, self.out),
            _ => {}
        }
    }
}

fn program_shape(p: &ProgramShape, out: &mut String) {
    out.push('(');
    for (i, s) in p.parameters.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
            if i % 5 == 0 {
                out.push_str("/*index=");
                push_int(out, i as i64);
                out.push_str("*/");
            }
        }
        s.write(out, true);
    }
    out.push_str(")->");
    p.result.write(out, true);
}

/// XLA prints a backend config raw when its lexer would read it back as one
/// `{...}` token: it opens with `{`, its braces balance outside strings,
/// and nothing follows the closing brace.
pub fn looks_like_json_object(s: &str) -> bool {
    let b = s.as_bytes();
    if b.first() != Some(&b'{') {
        return false;
    }
    // Brackets of every kind balanced outside strings, as the parser's raw
    // values must be (an unbalanced `]` inside would not read back).
    let mut open: Vec<u8> = Vec::new();
    let mut i = 0;
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
            c @ (b'{' | b'[' | b'(') => open.push(c),
            c @ (b'}' | b']' | b')') => {
                let want = match c {
                    b'}' => b'{',
                    b']' => b'[',
                    _ => b'(',
                };
                if open.pop() != Some(want) {
                    return false;
                }
                if open.is_empty() {
                    return c == b'}' && i == b.len() - 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// A literal as `constant(...)` writes it (XLA's `PrintWithoutShapeOneline`).
pub fn literal(lit: &Literal, out: &mut String) {
    match &lit.data {
        LiteralData::Elided => out.push_str("{...}"),
        LiteralData::Tuple(items) => {
            out.push_str("( ");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                literal(item, out);
            }
            out.push_str(" )");
        }
        LiteralData::Empty => {}
        data => {
            let ty = lit.shape.element_type();
            let dims = lit.shape.dims();
            if dims.is_empty() {
                format_element(data, ty, 0, false, out);
                return;
            }
            let mut next = 0usize;
            dense(data, ty, dims, 0, &mut Vec::new(), &mut next, out);
        }
    }
}

/// One level of a dense array; `index` holds the outer indices so far.
fn dense(
    data: &LiteralData,
    ty: crate::ir::PrimitiveType,
    dims: &[i64],
    level: usize,
    index: &mut Vec<i64>,
    next: &mut usize,
    out: &mut String,
) {
    let rank = dims.len();
    let remaining = &dims[level..];
    if remaining.is_empty() {
        format_element(data, ty, *next, true, out);
        *next += 1;
        return;
    }
    // Opening brace.
    if rank == 1 {
        out.push('{');
    } else if remaining.len() == 1 {
        out.push('{');
        if remaining[0] > 1 {
            out.push(' ');
        }
    } else if rank > 3 && !index.is_empty() && index.len() < rank {
        out.push_str("{ /*i");
        push_int(out, index.len() as i64 - 1);
        out.push('=');
        push_int(out, *index.last().expect("checked non-empty"));
        out.push_str("*/");
        if remaining[0] > 0 {
            out.push(' ');
        }
    } else {
        out.push_str("{ ");
    }
    for i in 0..remaining[0] {
        index.push(i);
        dense(data, ty, dims, level + 1, index, next, out);
        index.pop();
        if i < remaining[0] - 1 {
            out.push_str(", ");
        }
    }
    // Closing brace.
    if rank == 1 {
        out.push('}');
    } else if remaining.len() == 1 {
        if remaining[0] > 1 {
            out.push(' ');
        }
        out.push('}');
    } else {
        out.push_str(" }");
    }
}

impl Shape {
    /// The shape as text with layouts.
    pub fn text(&self) -> String {
        self.to_text(true)
    }
}
