//! The HLO text parser: XLA's `HloModule` text, in the default form, the
//! long form (operand shapes) and the short form, into a [`Module`].
//!
//! It is a single pass over the bytes with no token buffer. Attributes the
//! IR types are parsed into values; every other attribute keeps its exact
//! text so printing gives back the input. Nothing here recurses on the
//! input's nesting without a depth limit.
//!
//! The text is read a window of whole computations at a time (see
//! `src/text/input.rs`) and no string of the module points into it once its
//! window is done: names are copied into one buffer per computation, and
//! attribute texts kept as written into one set of distinct texts (a large
//! module repeats a few hundred `metadata` texts a million times). So a
//! module read from a file never has its text whole in memory.
//!
//! This file holds the entry points and the state the parser keeps; the
//! grammar is split by what the text holds:
//!
//! - `windows`: the input a window at a time, and on a large input groups
//!   of windows read in parts on several threads;
//! - `tokens`: blanks and comments, names, integers, strings, the raw text
//!   of an attribute value, and errors located in the whole text;
//! - `module`: the `HloModule` header, its attributes and the stack frame
//!   tables, a window's computations, and the module completed;
//! - `computation`: a computation, its signature and body, and the
//!   strings it keeps moved out of the window;
//! - `instruction`: an instruction, its opcode and its operands;
//! - `instruction_checks`: the checks XLA's parser makes on an instruction
//!   once read (operand counts, async chains, branches, result shapes);
//! - `attr_list`: the `, key=value` list after the operands and the values
//!   bound to the module (computations, instructions, shapes, literals);
//!   every other typed value's syntax is [`super::attrs`]';
//! - `shape`: shapes and layouts;
//! - `literal`: literals and their elements.

mod attr_list;
mod computation;
mod instruction;
mod instruction_checks;
mod literal;
mod module;
mod shape;
mod tokens;
mod windows;

use super::error::{ParseError, ReadError};
use super::input::{ReaderSource, TextSource};
use crate::ir::instruction::AttrValue;
use crate::ir::shape::Shape;
use crate::ir::SharedStr;
use crate::ir::{CompId, Computation, InstrId, Module, SourcePos};
use crate::util::{FxMap, FxSet, NameMap, TextMap};
use std::io::BufRead;
use std::sync::Arc;
use windows::parse_windows;

/// Deepest nesting of shapes, literals and nested instructions accepted.
const MAX_DEPTH: usize = 256;

/// Characters of a line quoted inside a message (a computation header of
/// a large module can be megabytes long).
const QUOTED_LINE_CHARS: usize = 160;

impl<'a> Parser<'a> {
    /// A parser of `text` (the window in `src`) with an empty state.
    fn new(text: &'a str, src: Arc<String>, file: &'a str, at: Position) -> Parser<'a> {
        Parser {
            st: ModuleState::default(),
            base: None,
            src,
            text,
            b: text.as_bytes(),
            pos: 0,
            file,
            at,
            depth: 0,
            tuple_depth: 0,
            instruction_nesting: 0,
            names_computation: false,
            all_names: NameMap::default(),
            no_shape_yet: Arc::new(Shape::Tuple(Vec::new())),
        }
    }
}

/// Parses a module; `file` names the input in errors.
pub fn parse_module(text: &str, file: &str) -> Result<Module, ParseError> {
    parse_windows(TextSource::new(text), file).map_err(|e| match e {
        ReadError::Parse(e) => e,
        // Text in memory is UTF-8 and read without I/O: neither happens.
        other => ParseError::at(file, "", 0, other.to_string()),
    })
}

/// Parses a module from text it takes over (and frees once read).
pub fn parse_module_owned(text: String, file: &str) -> Result<Module, ParseError> {
    parse_module(&text, file)
}

/// Parses a module as it is read, without holding its text whole: memory
/// is the module's and one computation's text. `file` names the input in
/// errors.
pub fn parse_module_from_reader(reader: impl BufRead, file: &str) -> Result<Module, ReadError> {
    parse_windows(ReaderSource::new(reader), file)
}

type PResult<T> = Result<T, Box<ParseError>>;

/// Where a computation was named before it was defined: the error's line
/// and column (from 1, the column in characters), and its line, shared by
/// the references on it (an attribute may name thousands).
#[derive(Clone, Debug)]
struct ForwardRef {
    line: usize,
    column: usize,
    source_line: Arc<str>,
}

/// Where a window starts in the whole text.
#[derive(Clone, Copy, Default)]
struct Position {
    /// In bytes.
    offset: usize,
    /// Lines before it.
    line: usize,
}

/// What the parser keeps from one window to the next.
struct ModuleState {
    module: Module,
    /// Instruction shapes by their text.
    shapes: TextMap<Arc<Shape>>,
    comp_ids: FxMap<Box<str>, CompId>,
    /// Computations referenced before they are defined, and where (in the
    /// whole text), in the current window.
    new_refs: Vec<(CompId, usize)>,
    /// Such references still undefined when their window was done, located
    /// (for the error if they never are), with their offset.
    forward_refs: Vec<(CompId, usize, ForwardRef)>,
    comp_defined: FxMap<CompId, Definition>,
    /// Instructions made without a name (nested ones, compact GTEs), named
    /// once every written name is known, as XLA does.
    unnamed: Vec<(CompId, InstrId, String)>,
    /// In a part of a group: the computations it defined that name
    /// computations (the only ones whose ids merging it must change).
    calling: FxSet<CompId>,
    /// Computations called by an `async-start`, and where in the whole
    /// text (XLA allows one caller each).
    async_callees: FxMap<CompId, usize>,
    /// Each distinct attribute text kept as written, once.
    texts: FxSet<SharedStr>,
    /// Each distinct typed attribute value, by its kind and text, read once.
    /// (Indexed by kind: one hash per lookup, the text's.)
    typed: Vec<FxMap<SharedStr, AttrValue>>,
    /// The window's newlines.
    lines: LineIndex,
    /// Where the names of the computation being read are in the window,
    /// by instruction in the order made: an instruction's name stays a
    /// range of the window until the computation is done (see `detach`).
    names: Vec<(InstrId, usize, usize)>,
    /// The strings a computation keeps, gathered (reused buffers).
    strings: String,
    fixups: Vec<Fixup>,
    has_header: bool,
    /// No computation read yet (the stack frame tables may come).
    before_computations: bool,
    entry: Option<CompId>,
    last: Option<CompId>,
    saw_percent: bool,
    saw_operand_shape: bool,
    saw_signature: bool,
    saw_any_instruction: bool,
    /// A `metadata=` seen: print it back even in the short form.
    saw_metadata: bool,
}

impl Default for ModuleState {
    fn default() -> ModuleState {
        ModuleState {
            module: Module::new(""),
            shapes: TextMap::default(),
            comp_ids: FxMap::default(),
            new_refs: Vec::new(),
            forward_refs: Vec::new(),
            comp_defined: FxMap::default(),
            unnamed: Vec::new(),
            calling: FxSet::default(),
            async_callees: FxMap::default(),
            texts: FxSet::default(),
            typed: Vec::new(),
            lines: LineIndex::default(),
            names: Vec::new(),
            strings: String::new(),
            fixups: Vec::new(),
            has_header: false,
            before_computations: true,
            entry: None,
            last: None,
            saw_percent: false,
            saw_operand_shape: false,
            saw_signature: false,
            saw_any_instruction: false,
            saw_metadata: false,
        }
    }
}

/// The state before a window, to read the window again.
struct Checkpoint {
    unnamed: usize,
    defined: usize,
    before_computations: bool,
    entry: Option<CompId>,
    last: Option<CompId>,
}

impl ModuleState {
    fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            unnamed: self.unnamed.len(),
            defined: self.module.defined_count(),
            before_computations: self.before_computations,
            entry: self.entry,
            last: self.last,
        }
    }

    /// Undoes what reading the window at `offset` did. Names learnt and
    /// texts kept stay: reading the window again finds the same ones.
    fn rollback(&mut self, c: Checkpoint, offset: usize) {
        if offset == 0 {
            // The header is in the first window.
            *self = ModuleState::default();
            return;
        }
        self.unnamed.truncate(c.unnamed);
        self.module.undefine_since(c.defined);
        self.comp_defined.retain(|_, d| d.offset < offset);
        self.async_callees.retain(|_, o| *o < offset);
        self.before_computations = c.before_computations;
        self.entry = c.entry;
        self.last = c.last;
    }
}

/// Where a computation was defined, for the error if it is defined again
/// (its window may be gone by then).
struct Definition {
    offset: usize,
    line: usize,
    column: usize,
    /// The line, cut to [`QUOTED_LINE_CHARS`].
    source_line: String,
}

/// A string of a computation to point at its buffer once complete: the
/// name of `instr` (`attr == u32::MAX`) or the text of its attribute.
struct Fixup {
    instr: InstrId,
    attr: u32,
    start: u32,
    end: u32,
}

/// The newlines of the window, to tell lines and columns of positions in
/// it and the lines of a computation's body.
#[derive(Default)]
struct LineIndex {
    /// Offsets of the window's newlines.
    newlines: Vec<usize>,
    /// How many of them come before the last position asked about (the
    /// parser asks in increasing order).
    next: usize,
    /// The last search for a body's end: from newline `.0`, the first
    /// newline a `}` follows is newline `.1` (or none: the count).
    body_end: Option<(usize, usize)>,
}

impl LineIndex {
    fn index(&mut self, text: &str) {
        self.newlines.clear();
        self.newlines
            .extend(memchr::memchr_iter(b'\n', text.as_bytes()));
        self.next = 0;
        self.body_end = None;
    }

    /// The first newline from newline `from` on that a `}` follows (the
    /// end of a computation's body), or the count; searched once per
    /// stretch of lines, however many bodies start in it.
    fn body_end(&mut self, b: &[u8], from: usize) -> usize {
        match self.body_end {
            Some((start, end)) if start <= from && from <= end => end,
            _ => {
                let rest = self.newlines.get(from..).unwrap_or_default();
                let end = from
                    + rest
                        .iter()
                        .position(|&n| b.get(n + 1) == Some(&b'}'))
                        .unwrap_or(rest.len());
                self.body_end = Some((from, end));
                end
            }
        }
    }

    /// Lines before `pos` (its line, from 0).
    fn line(&mut self, pos: usize) -> usize {
        if self.next > 0 && self.newlines.get(self.next - 1) >= Some(&pos) {
            self.next = self.newlines.partition_point(|&n| n < pos);
        }
        while self.newlines.get(self.next).is_some_and(|&n| n < pos) {
            self.next += 1;
        }
        self.next
    }

    /// Where line `line` (from 0) starts.
    fn line_start(&self, line: usize) -> usize {
        match line {
            0 => 0,
            _ => self.newlines.get(line - 1).map_or(0, |&n| n + 1),
        }
    }

    /// Line and column (in characters), from 0, of `pos` in `text`.
    fn line_column(&mut self, text: &str, pos: usize) -> (usize, usize) {
        let line = self.line(pos);
        let start = self.line_start(line);
        let column = text.get(start..pos).map_or(0, |s| s.chars().count());
        (line, column)
    }

    /// `pos` of the window `text`, whose first line is line `first_line`
    /// (from 0) of the whole text, as the module keeps it.
    fn source_pos(&mut self, text: &str, first_line: usize, pos: usize) -> SourcePos {
        let (line, column) = self.line_column(text, pos);
        SourcePos {
            line: u32::try_from(first_line + line + 1).unwrap_or(0),
            column: u32::try_from(column + 1).unwrap_or(0),
        }
    }
}

struct Parser<'a> {
    st: ModuleState,
    /// The module read before the group, when `st` is a part's own state
    /// (see [`parse_group`]): what `st` does not know is looked up there.
    base: Option<&'a ModuleState>,
    /// The window `text` borrows from, shared by the strings made from it
    /// until its computation is done.
    src: Arc<String>,
    text: &'a str,
    b: &'a [u8],
    pos: usize,
    file: &'a str,
    /// Where the window starts in the whole text.
    at: Position,
    depth: usize,
    /// How many tuples enclose the shape being parsed.
    tuple_depth: usize,
    /// How many nested instructions enclose the one being parsed.
    instruction_nesting: usize,
    /// Whether the computation being parsed names a computation.
    names_computation: bool,
    /// Names of the instructions of the computation being parsed. Kept
    /// per computation (cleared, its room kept for the window's next one)
    /// so it stays in cache; names unique across the module is the
    /// verifier's check.
    all_names: NameMap<'a, (CompId, InstrId)>,
    /// An instruction's shape until its own is known, shared so that
    /// making an instruction allocates no placeholder.
    no_shape_yet: Arc<Shape>,
}

/// The instructions of the computation being parsed.
struct Scope {
    comp: Computation,
    id: CompId,
    /// (operand, tuple index path) -> the GTE made for `%x#i#j`.
    compact_gtes: FxMap<(InstrId, Vec<i64>), InstrId>,
    root: Option<(InstrId, usize)>,
    params: FxMap<i64, usize>,
}
