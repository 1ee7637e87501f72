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

use super::error::{ParseError, ReadError};
use super::input::{window_end, Cut, ReaderSource, Source, TextEnd, TextSource};
use super::number::c_unescape;
use crate::ir::instruction::{attr_key, IdList};
use crate::ir::instruction::{ApiVersion, Attr, AttrValue, ComparisonDirection, ComparisonType};
use crate::ir::is_name_byte;
use crate::ir::literal::{Literal, LiteralData};
use crate::ir::module::{FileLocation, PrintOptions, ProgramShape, StackFrame, StackFrameIndex};
use crate::ir::shape::{ArrayShape, Layout, Shape, Tile, COMBINED_TILE_DIM, UNBOUNDED_DIM};
use crate::ir::signature;
use crate::ir::{
    CompId, Computation, InstrId, Instruction, Module, Opcode, Payload, PrimitiveType,
};
use crate::ir::{SharedStr, SourcePos};
use crate::util::{par_map_beside, FxMap, FxSet};
use half::{bf16, f16};
use std::collections::VecDeque;
use std::io::BufRead;
use std::sync::Arc;

/// Deepest nesting of shapes, literals and nested instructions accepted.
const MAX_DEPTH: usize = 256;

/// Deepest nesting of instructions written as operands (`negate(exp(p))`).
/// A level costs far more stack than a shape's or a literal's (some 8 KiB
/// in a debug build against 2), so it has a lower limit of its own: at
/// MAX_DEPTH levels a debug build overflows a 2 MiB thread stack.
const MAX_INSTRUCTION_NESTING: usize = 64;

/// Characters of a line quoted inside a message (a computation header of
/// a large module can be megabytes long).
const QUOTED_LINE_CHARS: usize = 160;

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

/// Text read one window at a time before windows are read in groups on
/// several threads: small inputs (tests, fuzz cases) never leave the
/// sequential path, which is also the oracle of the parallel one.
const PARALLEL_AFTER: usize = 1 << 20;

/// Bytes of windows read ahead for a group (bounds the text in memory).
const GROUP_BYTES: usize = 2 << 20;

/// Reads the source a window at a time (see `src/text/input.rs`); on a
/// large input, groups of windows on the machine's cores.
fn parse_windows(input: impl Source, file: &str) -> Result<Module, ReadError> {
    let parallel = Parallel {
        threads: crate::util::cores().min(8),
        after: PARALLEL_AFTER,
        group: GROUP_BYTES,
    };
    parse_windows_on(input, file, parallel)
}

/// How [`parse_windows_on`] reads groups of windows.
#[derive(Clone, Copy)]
struct Parallel {
    /// Threads (1: one window at a time throughout).
    threads: usize,
    /// Bytes read one window at a time first.
    after: usize,
    /// Bytes of windows read ahead for a group.
    group: usize,
}

/// [`parse_windows`] with groups read as `parallel` says (see
/// [`parse_group`]).
fn parse_windows_on(
    input: impl Source,
    file: &str,
    parallel: Parallel,
) -> Result<Module, ReadError> {
    let mut src = Windows {
        reader: Reader {
            input,
            end: TextEnd::default(),
            offset: 0,
        },
        pending: VecDeque::new(),
    };
    let mut st = ModuleState::default();
    // The window's text, shared by the strings made from it until the
    // window is done; then its buffer is reused (`make_mut` copies only if
    // a string still pointed into it, which none does).
    let mut window = Arc::new(String::new());
    let mut at = Position::default();
    // Windows to read one at a time before the next group.
    let mut one_at_a_time = 0usize;
    loop {
        if one_at_a_time == 0
            && parallel.threads > 1
            && at.offset >= parallel.after
            && !st.before_computations
        {
            src.reader.read_ahead(parallel.group, &mut src.pending)?;
            match parse_group(&mut st, &mut src, file, at, parallel)? {
                Ok(next) => {
                    at = next;
                    continue;
                }
                Err(n) => one_at_a_time = n.max(1),
            }
        }
        one_at_a_time = one_at_a_time.saturating_sub(1);
        let (len, last) = src.next(&mut window)?;
        let checkpoint = st.checkpoint();
        let blank_line = last.then(|| src.reader.end.blank_line());
        let module = match parse_window(&mut st, &window, file, at, blank_line, None) {
            Ok(module) => module,
            Err(e) if last => return Err(e.into()),
            Err(_) => {
                // Cut inside a computation (a line starting with `}` in a
                // multi-line literal, say), or a real error: either way the
                // rest of the input, as one window with this one, tells.
                st.rollback(checkpoint, at.offset);
                let rest = src.rest()?;
                Arc::make_mut(&mut window).push_str(&rest);
                let blank_line = src.reader.end.blank_line();
                parse_window(&mut st, &window, file, at, Some(blank_line), None)?
            }
        };
        if let Some(module) = module {
            return Ok(module);
        }
        at.line += st.lines.newlines.len();
        at.offset += len;
    }
}

/// The windows of a source, with those read ahead.
struct Windows<S> {
    reader: Reader<S>,
    /// Windows taken and not parsed yet, in text order, and whether each
    /// is the last.
    pending: VecDeque<(Arc<String>, bool)>,
}

/// A source cut into windows.
struct Reader<S> {
    input: S,
    end: TextEnd,
    /// Where the input's next byte is in the whole text.
    offset: usize,
}

impl<S: Source> Windows<S> {
    /// The next window into `window`: its length and whether it is the last.
    fn next(&mut self, window: &mut Arc<String>) -> Result<(usize, bool), ReadError> {
        match self.pending.pop_front() {
            Some((text, last)) => {
                *window = text;
                Ok((window.len(), last))
            }
            None => self.reader.take(Arc::make_mut(window)),
        }
    }

    /// Everything not parsed yet: the windows read ahead, then the input.
    fn rest(&mut self) -> Result<String, ReadError> {
        let mut rest = String::new();
        for (text, _) in self.pending.drain(..) {
            rest.push_str(&text);
        }
        let input = &mut self.reader.input;
        while !input.at_end() {
            input.fill()?;
        }
        let mut tail = String::new();
        let offset = self.reader.offset;
        input
            .take(input.available().len(), &mut tail)
            .map_err(|i| ReadError::NotUtf8 { offset: offset + i })?;
        self.reader.end.update(tail.as_bytes());
        self.reader.offset += tail.len();
        rest.push_str(&tail);
        Ok(rest)
    }
}

impl<S: Source> Reader<S> {
    /// The next window of the input into `out`.
    fn take(&mut self, out: &mut String) -> Result<(usize, bool), ReadError> {
        let mut from = 0;
        let len = loop {
            match window_end(self.input.available(), from, self.input.at_end()) {
                Cut::At(n) => break n,
                Cut::NeedMore(resume) => {
                    from = resume;
                    self.input.fill()?;
                }
            }
        };
        let last = self.input.at_end() && len == self.input.available().len();
        let offset = self.offset;
        self.input
            .take(len, out)
            .map_err(|i| ReadError::NotUtf8 { offset: offset + i })?;
        self.end.update(out.as_bytes());
        self.offset += len;
        Ok((len, last))
    }

    /// Windows read ahead into `queue` until it holds `bytes` or the last.
    /// An error here is the one reading one window at a time meets: a
    /// window that fails to parse makes that path read the rest too.
    fn read_ahead(
        &mut self,
        bytes: usize,
        queue: &mut VecDeque<(Arc<String>, bool)>,
    ) -> Result<(), ReadError> {
        let mut total: usize = queue.iter().map(|(w, _)| w.len()).sum();
        while total < bytes && !queue.back().is_some_and(|(_, last)| *last) {
            let mut text = String::new();
            let (len, last) = self.take(&mut text)?;
            total += len;
            queue.push_back((Arc::new(text), last));
        }
        Ok(())
    }
}

/// Parses one window: the header if it is the first, then computations;
/// and, if it is the last (`Some(whether the text ends with a blank
/// line)`), completes the module. `base`: the module read so far, when
/// `st` is the state of a part of a group (see [`parse_group`]).
fn parse_window(
    st: &mut ModuleState,
    window: &Arc<String>,
    file: &str,
    at: Position,
    last: Option<bool>,
    base: Option<&ModuleState>,
) -> Result<Option<Module>, ParseError> {
    let mut p = Parser::new(window, Arc::clone(window), file, at);
    p.base = base;
    p.st = std::mem::take(st);
    p.st.lines.index(window);
    let r = p.window(last);
    *st = std::mem::take(&mut p.st);
    r.map_err(|e| *e)
}

/// Parses the windows read ahead, but the last, in parts at once (while
/// this thread reads the next group), each part with a state of its own
/// that looks up what the module read so far (`st`) knows, then moves the
/// parts into `st` in text order as if read one window at a time; the
/// position after them. `Err(n)`, with `st` untouched, on anything a part
/// cannot tell alone (an error, a name defined or async-called in two
/// parts, a callee in another part): its `n` windows are then read one at
/// a time, which says what is wrong.
fn parse_group<S: Source>(
    st: &mut ModuleState,
    src: &mut Windows<S>,
    file: &str,
    at: Position,
    parallel: Parallel,
) -> Result<Result<Position, usize>, ReadError> {
    let Windows { reader, pending } = src;
    let n = pending.iter().take_while(|(_, last)| !last).count();
    if n < 2 {
        return Ok(Err(n));
    }
    let windows: Vec<&Arc<String>> = pending.iter().take(n).map(|(w, _)| w).collect();
    let parts = split_group(&windows, parallel.threads);
    let read_more = pending.len() == n;
    let mut ahead = VecDeque::new();
    let base = &*st;
    let (results, read) = par_map_beside(
        &parts,
        true,
        || (),
        |_, _, &(from, to)| parse_part(base, &windows, from..to, file, at),
        || match read_more {
            true => reader.read_ahead(parallel.group, &mut ahead),
            false => Ok(()),
        },
    );
    let results: Option<Vec<_>> = results.into_iter().collect();
    read?;
    let merged = merge_group(st, results, n);
    if merged.is_ok() {
        pending.drain(..n);
    }
    pending.extend(ahead);
    Ok(merged)
}

/// Moves the parts of a group of `n` windows into `st` (see
/// [`parse_group`]).
fn merge_group(
    st: &mut ModuleState,
    results: Option<Vec<(ModuleState, Position)>>,
    n: usize,
) -> Result<Position, usize> {
    let Some(results) = results else {
        log::trace!("parser: a group of {n} windows fails in parts, read one at a time");
        return Err(n);
    };
    let parts: Vec<&ModuleState> = results.iter().map(|(part, _)| part).collect();
    if group_conflicts(st, &parts) {
        log::trace!("parser: a group of {n} windows conflicts, read one at a time");
        return Err(n);
    }
    log::trace!(
        "parser: a group of {n} windows read in {} parts",
        parts.len()
    );
    #[cfg(test)]
    tests::GROUPS.with(|g| g.set(g.get() + 1));
    let mut next = Err(n);
    for (part, end) in results {
        merge_part(st, part);
        next = Ok(end);
    }
    next
}

/// Cuts `windows` into up to `parts` runs of about equal size.
fn split_group(windows: &[&Arc<String>], parts: usize) -> Vec<(usize, usize)> {
    let total: usize = windows.iter().map(|w| w.len()).sum();
    let mut runs = Vec::with_capacity(parts);
    let (mut start, mut size) = (0, 0);
    for (i, w) in windows.iter().enumerate() {
        size += w.len();
        if size * parts >= total * (runs.len() + 1) || i + 1 == windows.len() {
            runs.push((start, i + 1));
            start = i + 1;
        }
    }
    runs
}

/// Reads the run `run` of a group's `windows` (the group starts at `at`)
/// with a state of its own; and where the run ends. Where it starts is
/// counted here, on the part's thread.
fn parse_part(
    base: &ModuleState,
    windows: &[&Arc<String>],
    run: std::ops::Range<usize>,
    file: &str,
    mut at: Position,
) -> Option<(ModuleState, Position)> {
    for w in windows.get(..run.start)? {
        at.offset += w.len();
        at.line += memchr::memchr_iter(b'\n', w.as_bytes()).count();
    }
    let mut st = ModuleState {
        before_computations: false,
        ..ModuleState::default()
    };
    for w in windows.get(run)? {
        parse_window(&mut st, w, file, at, None, Some(base)).ok()?;
        at.line += st.lines.newlines.len();
        at.offset += w.len();
    }
    Some((st, at))
}

/// The names of a part's computations, by id (its ids are 0..n, each
/// given with its name).
fn part_names(part: &ModuleState) -> Vec<&str> {
    let mut names = vec![""; part.comp_ids.len()];
    for (name, id) in &part.comp_ids {
        if let Some(slot) = names.get_mut(id.index()) {
            *slot = name;
        }
    }
    names
}

/// Whether reading the parts one after the other would meet what each
/// could not see alone: a computation defined in two parts, or
/// async-called from two, or a second `ENTRY` (each part checked these
/// against the module read before the group).
fn group_conflicts(st: &ModuleState, parts: &[&ModuleState]) -> bool {
    let mut defined: FxSet<&str> = FxSet::default();
    let mut called: FxSet<&str> = FxSet::default();
    let mut entries = usize::from(st.entry.is_some());
    for part in parts {
        let names = part_names(part);
        let name = |id: &CompId| names.get(id.index()).copied().unwrap_or("");
        if part.comp_defined.keys().any(|id| !defined.insert(name(id)))
            || part.async_callees.keys().any(|id| !called.insert(name(id)))
        {
            return true;
        }
        entries += usize::from(part.entry.is_some());
    }
    entries > 1
}

/// Moves a part into the module read so far, as reading its windows one at
/// a time there would have left it: its names get the module's ids (new
/// ones in the order the part first named them, as the module would have
/// given them), then its computations, what it learnt and its caches.
fn merge_part(st: &mut ModuleState, mut part: ModuleState) {
    let mut ids = Vec::with_capacity(part.comp_ids.len());
    // Names the module did not know: their undefined uses are the part's.
    let mut fresh = Vec::with_capacity(part.comp_ids.len());
    for name in part_names(&part) {
        let id = match st.comp_ids.get(name) {
            Some(&id) => {
                fresh.push(false);
                id
            }
            None => {
                let id = st.module.reserve_computation();
                st.comp_ids.insert(name.into(), id);
                fresh.push(true);
                id
            }
        };
        ids.push(id);
    }
    let map = |id: CompId| ids.get(id.index()).copied().unwrap_or(id);
    for (id, mut comp) in part.module.take_defined() {
        for (_, instr) in comp.slots_mut() {
            for attr in instr.attrs.iter_mut() {
                match &mut attr.value {
                    AttrValue::Comp(c) => *c = map(*c),
                    AttrValue::Comps(cs) => cs.iter_mut().for_each(|c| *c = map(*c)),
                    _ => {}
                }
            }
        }
        st.module.define_computation(map(id), comp);
    }
    st.comp_defined
        .extend(part.comp_defined.drain().map(|(id, d)| (map(id), d)));
    st.async_callees
        .extend(part.async_callees.drain().map(|(id, o)| (map(id), o)));
    for (id, offset, e) in part.forward_refs.drain(..) {
        if fresh.get(id.index()) == Some(&true) {
            st.forward_refs.push((map(id), offset, e));
        }
    }
    st.unnamed
        .extend(part.unnamed.drain(..).map(|(c, i, name)| (map(c), i, name)));
    if let Some(e) = part.entry {
        st.entry = Some(map(e));
    }
    if let Some(l) = part.last {
        st.last = Some(map(l));
    }
    merge_caches(st, part);
}

/// Folds a part's caches and flags into the module's.
fn merge_caches(st: &mut ModuleState, part: ModuleState) {
    for (k, v) in part.shapes {
        st.shapes.entry(k).or_insert(v);
    }
    for t in part.texts {
        if !st.texts.contains(&t) {
            st.texts.insert(t);
        }
    }
    for (kind, values) in part.typed {
        let into = st.typed.entry(kind).or_default();
        for (k, v) in values {
            into.entry(k).or_insert(v);
        }
    }
    st.before_computations = false;
    st.saw_percent |= part.saw_percent;
    st.saw_operand_shape |= part.saw_operand_shape;
    st.saw_signature |= part.saw_signature;
    st.saw_any_instruction |= part.saw_any_instruction;
    st.saw_metadata |= part.saw_metadata;
}

type PResult<T> = Result<T, Box<ParseError>>;

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
    shapes: FxMap<Box<str>, Arc<Shape>>,
    comp_ids: FxMap<Box<str>, CompId>,
    /// Computations referenced before they are defined, and where (in the
    /// whole text), in the current window.
    new_refs: Vec<(CompId, usize)>,
    /// Such references still undefined when their window was done, located
    /// (the error if they never are), with their offset.
    forward_refs: Vec<(CompId, usize, ParseError)>,
    comp_defined: FxMap<CompId, Definition>,
    /// Instructions made without a name (nested ones, compact GTEs), named
    /// once every written name is known, as XLA does.
    unnamed: Vec<(CompId, InstrId, String)>,
    /// Computations called by an `async-start`, and where in the whole
    /// text (XLA allows one caller each).
    async_callees: FxMap<CompId, usize>,
    /// Each distinct attribute text kept as written, once.
    texts: FxSet<SharedStr>,
    /// Each distinct typed attribute value, by its kind and text, read once.
    typed: FxMap<u8, FxMap<SharedStr, AttrValue>>,
    /// The window's newlines.
    lines: LineIndex,
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
            shapes: FxMap::default(),
            comp_ids: FxMap::default(),
            new_refs: Vec::new(),
            forward_refs: Vec::new(),
            comp_defined: FxMap::default(),
            unnamed: Vec::new(),
            async_callees: FxMap::default(),
            texts: FxSet::default(),
            typed: FxMap::default(),
            lines: LineIndex::default(),
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
    /// How many nested instructions enclose the one being parsed.
    instruction_nesting: usize,
    /// Names of the instructions of the computation being parsed. Kept
    /// per computation (cleared, its room kept for the window's next one)
    /// so it stays in cache; names unique across the module is the
    /// verifier's check.
    all_names: FxMap<&'a str, (CompId, InstrId)>,
    /// An instruction's shape until its own is known, shared so that
    /// making an instruction allocates no placeholder.
    no_shape_yet: Arc<Shape>,
}

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
    shape: Shape,
}

/// An instruction's opcode as read.
struct OpcodeRead {
    opcode: Opcode,
    /// The op a sugared async start, update or done wraps.
    async_wrapped: Option<Opcode>,
    /// Where the opcode is written.
    pos: usize,
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

/// The bytes [`Parser::raw_value`] looks at; it skips the others in one
/// scan.
const RAW_VALUE_STOPS: [bool; 256] = {
    let mut table = [false; 256];
    let stops = *b"\"{[(}]),\n\r";
    let mut k = 0;
    while k < stops.len() {
        table[stops[k] as usize] = true;
        k += 1;
    }
    table
};

/// Where the name characters starting at `start` end.
fn name_end(b: &[u8], start: usize) -> usize {
    let rest = b.get(start..).unwrap_or_default();
    start
        + rest
            .iter()
            .position(|&c| !is_name_byte(c))
            .unwrap_or(rest.len())
}

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
            instruction_nesting: 0,
            all_names: FxMap::default(),
            no_shape_yet: Arc::new(Shape::Tuple(Vec::new())),
        }
    }

    /// `s`, a slice of the input, as a string of the module.
    fn shared(&self, s: &'a str) -> SharedStr {
        let start = (s.as_ptr() as usize).wrapping_sub(self.text.as_ptr() as usize);
        SharedStr::slice(&self.src, start, start.wrapping_add(s.len())).unwrap_or_else(|| s.into())
    }

    /// An instruction's shape, with default layouts filled in. Modules
    /// repeat a few shapes many times: each distinct text is parsed once.
    fn interned_shape(&mut self) -> PResult<Arc<Shape>> {
        self.skip_ws()?;
        let start = self.pos;
        let mut end = start;
        let mut depth = 0usize;
        while let Some(&c) = self.b.get(end) {
            match c {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' if depth == 0 => break,
                b')' | b']' | b'}' => depth -= 1,
                b' ' | b'\t' | b'\n' | b'\r' | b',' if depth == 0 => break,
                _ => {}
            }
            end += 1;
        }
        let key = &self.text[start..end];
        let base = self.base;
        if let Some(s) = self.st.shapes.get(key).or_else(|| base?.shapes.get(key)) {
            self.pos = end;
            return Ok(Arc::clone(s));
        }
        let mut shape = self.shape()?;
        shape.fill_default_layouts();
        let shape = Arc::new(shape);
        if self.pos == end {
            self.st.shapes.insert(key.into(), Arc::clone(&shape));
        }
        Ok(shape)
    }

    fn raw_text(&mut self) -> PResult<SharedStr> {
        let raw = self.raw_value()?;
        Ok(self.kept_text(raw))
    }

    /// An attribute text: the module's copy if it has one, else a slice of
    /// the window (which [`Self::detach`] copies).
    fn kept_text(&self, raw: &'a str) -> SharedStr {
        let base = self.base;
        match self.st.texts.get(raw).or_else(|| base?.texts.get(raw)) {
            Some(kept) => kept.clone(),
            None => self.shared(raw),
        }
    }

    // ---- errors -------------------------------------------------------

    fn err_at<T>(&self, pos: usize, msg: impl Into<String>) -> PResult<T> {
        Err(Box::new(self.error_at(pos, msg)))
    }

    /// An error at `pos` in the window, located in the whole text.
    fn error_at(&self, pos: usize, msg: impl Into<String>) -> ParseError {
        let mut e = ParseError::at(self.file, self.text, pos, msg);
        e.line += self.at.line;
        e
    }

    fn err<T>(&self, msg: impl Into<String>) -> PResult<T> {
        self.err_at(self.pos, msg)
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.err(format!("maximum nesting depth ({MAX_DEPTH}) exceeded"));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    // ---- lexing -------------------------------------------------------

    #[inline]
    fn skip_ws(&mut self) -> PResult<()> {
        match self.b.get(self.pos) {
            Some(b' ' | b'\t' | b'\n' | b'\r' | b'/') => self.skip_ws_slow(),
            _ => Ok(()),
        }
    }

    fn skip_ws_slow(&mut self) -> PResult<()> {
        match super::blank_len(&self.text[self.pos..]) {
            Ok(n) => {
                self.pos += n;
                Ok(())
            }
            Err(at) => self.err_at(self.pos + at, "/* unterminated comment"),
        }
    }

    fn peek(&mut self) -> PResult<Option<u8>> {
        self.skip_ws()?;
        Ok(self.b.get(self.pos).copied())
    }

    fn eat(&mut self, c: u8) -> PResult<bool> {
        if self.peek()? == Some(c) {
            self.pos += 1;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    fn expect(&mut self, c: u8, what: &str) -> PResult<()> {
        if self.eat(c)? {
            Ok(())
        } else {
            let found = self.describe_here();
            self.err(format!("expects '{}' {what}, but sees {found}", c as char))
        }
    }

    fn describe_here(&self) -> String {
        match self.b.get(self.pos) {
            None => "end of file".to_string(),
            Some(_) => {
                let rest = &self.text[self.pos..];
                let end = rest
                    .char_indices()
                    .find(|&(i, ch)| i > 0 && !(ch.is_ascii_alphanumeric() || "_.-".contains(ch)))
                    .map_or(rest.len(), |(i, _)| i);
                let end = end.clamp(rest.chars().next().map_or(0, char::len_utf8), 40);
                format!("'{}'", &rest[..end.min(rest.len())])
            }
        }
    }

    fn eat_keyword(&mut self, kw: &str) -> PResult<bool> {
        self.skip_ws()?;
        let end = self.pos + kw.len();
        if self.b.get(self.pos..end) == Some(kw.as_bytes())
            && !self.b.get(end).is_some_and(|&c| is_name_byte(c))
        {
            self.pos = end;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// An identifier-like word at the cursor, not consumed.
    fn peek_word(&mut self) -> PResult<&'a str> {
        self.skip_ws()?;
        let start = self.pos;
        Ok(&self.text[start..name_end(self.b, start)])
    }

    /// A name, with an optional `%` sigil (recorded for the print style).
    fn name(&mut self, what: &str) -> PResult<&'a str> {
        self.skip_ws()?;
        if self.b.get(self.pos) == Some(&b'%') {
            self.pos += 1;
            self.st.saw_percent = true;
        }
        let start = self.pos;
        if !self.b.get(start).is_some_and(|&c| is_name_byte(c)) {
            let found = self.describe_here();
            return self.err(format!("expects {what}, but sees {found}"));
        }
        let end = name_end(self.b, start);
        self.pos = end;
        Ok(&self.text[start..end])
    }

    fn int(&mut self) -> PResult<i64> {
        self.skip_ws()?;
        let start = self.pos;
        let mut end = start;
        if self.b.get(end) == Some(&b'-') {
            end += 1;
        }
        while end < self.b.len() && self.b[end].is_ascii_digit() {
            end += 1;
        }
        match self.text[start..end].parse::<i64>() {
            Ok(v) if end > start => {
                self.pos = end;
                Ok(v)
            }
            _ => {
                let found = self.describe_here();
                self.err(format!("expects integer, but sees {found}"))
            }
        }
    }

    /// A quoted string, decoded.
    fn string(&mut self) -> PResult<String> {
        self.skip_ws()?;
        let start = self.pos;
        if self.b.get(start) != Some(&b'"') {
            let found = self.describe_here();
            return self.err(format!("expects string, but sees {found}"));
        }
        let end = self.string_end(start)?;
        self.pos = end;
        match c_unescape(&self.text[start + 1..end - 1]) {
            Ok(s) => Ok(s),
            Err(off) => self.err_at(start + 1 + off, "invalid escape sequence in string"),
        }
    }

    /// Byte offset just past the closing quote of the string at `start`.
    fn string_end(&self, start: usize) -> PResult<usize> {
        let mut i = start + 1;
        while let Some(off) = self
            .b
            .get(i..)
            .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
        {
            i += off;
            if self.b[i] == b'"' {
                return Ok(i + 1);
            }
            i += 2; // skip the escaped byte
        }
        self.err_at(start, "unterminated string")
    }

    /// The text of an attribute value this parser does not model: up to the
    /// next `,` or line end outside brackets and strings, or an unmatched
    /// closing bracket.
    fn raw_value(&mut self) -> PResult<&'a str> {
        self.skip_ws()?;
        let start = self.pos;
        let mut stack: smallvec::SmallVec<[u8; 16]> = smallvec::SmallVec::new();
        let mut i = start;
        while i < self.b.len() {
            // Most bytes of a value are none of those matched below.
            let plain = self.b.get(i..).unwrap_or_default();
            i += plain
                .iter()
                .position(|&c| RAW_VALUE_STOPS[c as usize])
                .unwrap_or(plain.len());
            let Some(&c) = self.b.get(i) else { break };
            match c {
                b'"' => {
                    i = self.string_end(i)?;
                    continue;
                }
                b'{' | b'[' | b'(' => stack.push(c),
                b'}' | b']' | b')' => {
                    let open = match c {
                        b'}' => b'{',
                        b']' => b'[',
                        _ => b'(',
                    };
                    match stack.pop() {
                        Some(o) if o == open => {}
                        Some(_) => return self.err_at(i, format!("unbalanced '{}'", c as char)),
                        None => break,
                    }
                }
                b',' | b'\n' | b'\r' if stack.is_empty() => break,
                _ => {}
            }
            i += 1;
        }
        if !stack.is_empty() {
            return self.err_at(start, "unterminated attribute value");
        }
        let mut end = i;
        while end > start && matches!(self.b[end - 1], b' ' | b'\t') {
            end -= 1;
        }
        if end == start {
            return self.err("expects attribute value");
        }
        self.pos = end;
        Ok(&self.text[start..end])
    }

    // ---- shapes -------------------------------------------------------

    fn shape(&mut self) -> PResult<Shape> {
        self.enter()?;
        let r = self.shape_inner();
        self.leave();
        r
    }

    fn shape_inner(&mut self) -> PResult<Shape> {
        if self.eat(b'(')? {
            let mut elems = Vec::new();
            if !self.eat(b')')? {
                loop {
                    elems.push(self.shape()?);
                    if self.eat(b')')? {
                        break;
                    }
                    self.expect(b',', "between tuple elements")?;
                }
            }
            return Ok(Shape::Tuple(elems));
        }
        let word_start = self.pos;
        let word = self.peek_word()?;
        let ty = match word {
            "token" => None,
            "opaque" => None,
            _ => match PrimitiveType::from_name(word) {
                Some(t) => Some(t),
                None => {
                    return self.err_at(
                        word_start,
                        format!("expected primitive type, but sees '{word}'"),
                    )
                }
            },
        };
        self.pos += word.len();
        if self.b.get(self.pos) != Some(&b'[') {
            return self.err("expects '[' to start the dimensions of a shape");
        }
        self.pos += 1;
        let mut dims = Vec::new();
        let mut dynamic = Vec::new();
        if !self.eat(b']')? {
            loop {
                self.skip_ws()?;
                // `dynamic` stays empty (no allocation) until a dynamic
                // dimension is seen, then holds a flag for every dimension.
                let (d, is_dyn) = if self.eat(b'?')? {
                    (UNBOUNDED_DIM, true)
                } else {
                    let is_dyn = self.b.get(self.pos..self.pos + 2) == Some(b"<=");
                    if is_dyn {
                        self.pos += 2;
                    }
                    let d = self.int()?;
                    if d < 0 {
                        return self.err("dimension sizes must be non-negative");
                    }
                    (d, is_dyn)
                };
                if is_dyn && dynamic.is_empty() {
                    dynamic = vec![false; dims.len()];
                }
                dims.push(d);
                if is_dyn || !dynamic.is_empty() {
                    dynamic.push(is_dyn);
                }
                if self.eat(b']')? {
                    break;
                }
                self.expect(b',', "between dimensions")?;
            }
        }
        match (ty, word) {
            (None, "token") => return Ok(Shape::Token),
            (None, _) => return Ok(Shape::Opaque),
            _ => {}
        }
        let element_type = ty.expect("checked above");
        // A layout must follow directly (`f32[2]{0}`), not after a space.
        let layout = if self.b.get(self.pos) == Some(&b'{') {
            Some(self.layout(dims.len())?)
        } else {
            None
        };
        Ok(Shape::Array(ArrayShape {
            element_type,
            dims,
            dynamic,
            layout,
        }))
    }

    fn layout(&mut self, rank: usize) -> PResult<Layout> {
        let start = self.pos;
        self.expect(b'{', "to start a layout")?;
        let mut layout = Layout::default();
        loop {
            match self.peek()? {
                Some(b'}') | Some(b':') => break,
                _ => {
                    layout.minor_to_major.push(self.int()?);
                    if !self.eat(b',')? {
                        break;
                    }
                }
            }
        }
        if self.eat(b':')? {
            self.layout_extras(&mut layout)?;
        }
        self.expect(b'}', "at the end of a layout")?;
        if layout.minor_to_major.len() != rank && !(layout.minor_to_major.is_empty() && rank == 0) {
            return self.err_at(
                start,
                format!(
                    "Dimensions size is {rank}, but minor to major size is {}.",
                    layout.minor_to_major.len()
                ),
            );
        }
        Ok(layout)
    }

    fn paren_group(&mut self) -> PResult<&'a str> {
        let start = self.pos;
        if self.b.get(self.pos) != Some(&b'(') {
            return self.err("expects '('");
        }
        match self.text[self.pos..].find(')') {
            Some(i) => {
                self.pos += i + 1;
                Ok(&self.text[start..self.pos])
            }
            None => self.err("expects ')'"),
        }
    }

    fn layout_extras(&mut self, layout: &mut Layout) -> PResult<()> {
        let layout = layout.extras.get_or_insert_with(Default::default);
        loop {
            self.skip_ws()?;
            let c = match self.b.get(self.pos) {
                Some(&c) => c,
                None => return self.err("unterminated layout"),
            };
            match c {
                b'}' => return Ok(()),
                b'D' => {
                    let start = self.pos;
                    self.pos += 1;
                    let group = self.paren_group()?;
                    for part in group[1..group.len() - 1].split(',') {
                        let part = part.trim();
                        let abbrev = part.trim_end_matches(['+', '~', '#']);
                        if !matches!(abbrev, "D" | "C" | "S" | "H" | "") {
                            return self.err_at(start, "expected a DimLevelType abbreviation");
                        }
                    }
                    layout.dim_level_types = Some(self.text[start..self.pos].into());
                }
                b'T' => {
                    self.pos += 1;
                    while self.b.get(self.pos) == Some(&b'(') {
                        self.pos += 1;
                        let mut dims = Vec::new();
                        loop {
                            if self.eat(b'*')? {
                                dims.push(COMBINED_TILE_DIM);
                            } else {
                                dims.push(self.int()?);
                            }
                            if self.eat(b')')? {
                                break;
                            }
                            self.expect(b',', "between tile dimensions")?;
                        }
                        layout.tiles.push(Tile(dims));
                    }
                }
                b'L' => {
                    self.pos += 1;
                    self.expect(b'(', "after L")?;
                    layout.tail_padding_alignment = Some(self.int()?);
                    self.expect(b')', "after L(n")?;
                }
                b'#' => {
                    let start = self.pos;
                    self.pos += 1;
                    self.paren_group()?;
                    while self.b.get(self.pos) == Some(&b'*') {
                        self.pos += 1;
                        self.paren_group()?;
                    }
                    layout.index_types = Some(self.text[start..self.pos].into());
                }
                b'E' => {
                    self.pos += 1;
                    self.expect(b'(', "after E")?;
                    layout.element_size_bits = Some(self.int()?);
                    self.expect(b')', "after E(n")?;
                }
                b'S' if self.b.get(self.pos + 1) == Some(&b'(') => {
                    self.pos += 1;
                    self.expect(b'(', "after S")?;
                    layout.memory_space = Some(self.int()?);
                    self.expect(b')', "after S(n")?;
                }
                _ => {
                    // Split configs, physical shape, dynamic metadata: kept
                    // as written.
                    let start = self.pos;
                    let mut depth = 0usize;
                    while let Some(&c) = self.b.get(self.pos) {
                        match c {
                            b'(' | b'{' | b'[' => depth += 1,
                            b')' | b']' => depth = depth.saturating_sub(1),
                            b'}' if depth == 0 => break,
                            b'}' => depth -= 1,
                            _ => {}
                        }
                        self.pos += 1;
                    }
                    let rest = &self.text[start..self.pos];
                    if rest.starts_with('P') {
                        return self.err_at(
                            start,
                            "Layout has physical shape, but is not for a sparse array",
                        );
                    }
                    layout.rest = Some(rest.into());
                }
            }
        }
    }

    // ---- module -------------------------------------------------------

    /// One window: the header if it is the first, then computations; if it
    /// is the last (`Some(whether the text ends with a blank line)`), the
    /// module.
    fn window(&mut self, last: Option<bool>) -> PResult<Option<Module>> {
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
        for (id, offset) in std::mem::take(&mut self.st.new_refs) {
            if !self.st.comp_defined.contains_key(&id) {
                let e = self.error_at(offset.saturating_sub(self.at.offset), "");
                self.st.forward_refs.push((id, offset, e));
            }
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
        if let Some((id, _, e)) = undefined {
            let mut e = e.clone();
            e.message = format!("computation does not exist: {}", self.comp_name(*id));
            return Err(Box::new(e));
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
        let mut parameters = Vec::new();
        if !self.eat(b')')? {
            loop {
                parameters.push(self.shape()?);
                if self.eat(b')')? {
                    break;
                }
                self.expect(b',', "between parameters")?;
            }
        }
        self.expect_arrow("expects '->' in a program shape")?;
        let result = self.shape()?;
        Ok(ProgramShape { parameters, result })
    }

    /// The `->` before a signature's result; `msg` if it is missing.
    fn expect_arrow(&mut self, msg: &str) -> PResult<()> {
        self.skip_ws()?;
        if self.b.get(self.pos..self.pos + 2) != Some(b"->") {
            return self.err(msg);
        }
        self.pos += 2;
        Ok(())
    }

    fn stack_frames(&mut self) -> PResult<()> {
        let mut index = StackFrameIndex::default();
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

    fn comp_ref(&mut self, name: &'a str, pos: usize) -> CompId {
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

    fn computation(&mut self) -> PResult<CompId> {
        self.all_names.clear();
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
        let mut params = Vec::new();
        if !self.eat(b')')? {
            loop {
                let pos = self.pos;
                let name = self.name("parameter name")?;
                self.expect(b':', "after parameter name")?;
                let shape = self.shape()?;
                params.push(SignatureParam { pos, name, shape });
                if self.eat(b')')? {
                    break;
                }
                self.expect(b',', "between parameters")?;
            }
        }
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
                    scope.comp.instr(root).name,
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
        let mut positions = Vec::with_capacity(comp.slot_count());
        for (id, instr) in comp.slots_mut() {
            let mut pos = SourcePos { line: 0, column: 0 };
            if let Some(offset) = instr.name.offset_in(&window) {
                let (line, column) = self.st.lines.line_column(self.text, offset);
                pos = SourcePos {
                    line: u32::try_from(self.at.line + line + 1).unwrap_or(0),
                    column: u32::try_from(column + 1).unwrap_or(0),
                };
                let (start, end) = push(&mut buf, &instr.name);
                fixups.push(Fixup {
                    instr: id,
                    attr: u32::MAX,
                    start,
                    end,
                });
            }
            positions.resize(id.index(), SourcePos { line: 0, column: 0 });
            positions.push(pos);
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

    // ---- instructions -------------------------------------------------

    fn instruction(&mut self, scope: &mut Scope) -> PResult<InstrId> {
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
        self.skip_ws()?;
        let op = self.opcode()?;
        let opcode = op.opcode;
        let mut instr = Instruction::new(
            name.map_or_else(SharedStr::default, |n| self.shared(n)),
            opcode,
            Arc::clone(&self.no_shape_yet),
        );
        instr.async_wrapped = op.async_wrapped;
        self.instruction_arguments(scope, &mut instr, declared_shape.as_deref(), op.pos)?;
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
        instr.shape = self.result_shape(scope, &instr, declared_shape, shape_pos)?;
        self.check_result_shape(scope, &instr, op.pos, replication)?;
        if opcode == Opcode::AsyncStart {
            if let Some(AttrValue::Comp(c)) = instr.attr("calls") {
                self.st.async_callees.insert(*c, self.at.offset + op.pos);
            }
        }
        let id = scope.comp.push(instr);
        if name.is_none() {
            let _ = name_pos;
            self.st
                .unnamed
                .push((scope.id, id, format!("{}.anon", opcode.name())));
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
        declared_shape: Option<&Shape>,
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
                let Some(shape) = declared_shape else {
                    return self.err_at(op_pos, "constant needs a shape");
                };
                let lit = self.literal(shape)?;
                instr.payload = Payload::Constant(Box::new(lit));
                self.expect(b')', "at the end of a constant")
            }
            _ => {
                instr.operands = self.operands(scope)?;
                self.check_operands(scope, instr, declared_shape, op_pos)
            }
        }
    }

    /// The `, key=value` attributes after the operands; whether
    /// `parameter_replication=` was written (checked once the shape is
    /// known; looking for it in every instruction costs time).
    fn attributes(
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

    /// The declared result shape, else the one inferred from the operands.
    fn result_shape(
        &self,
        scope: &Scope,
        instr: &Instruction,
        declared_shape: Option<Arc<Shape>>,
        shape_pos: usize,
    ) -> PResult<Arc<Shape>> {
        if let Some(s) = declared_shape {
            return Ok(s);
        }
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
    fn comp_or_comps(&mut self) -> PResult<AttrValue> {
        if self.peek()? == Some(b'{') {
            Ok(AttrValue::Comps(self.comp_list()?.into()))
        } else {
            let p = self.pos;
            let n = self.name("computation name")?;
            Ok(AttrValue::Comp(self.comp_ref(n, p)))
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
        let mut shapes = Vec::new();
        if !self.eat(b'}')? {
            loop {
                self.skip_ws()?;
                shapes.push((self.pos, self.shape()?));
                if self.eat(b'}')? {
                    break;
                }
                self.expect(b',', "between operand layout constraints")?;
            }
        }
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

    /// Any other attribute: typed if [`super::attrs::read`] types it, else
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
    fn typed_value(
        &mut self,
        key: &str,
        opcode: Option<Opcode>,
        raw: &str,
        pos: usize,
    ) -> PResult<Option<AttrValue>> {
        let Some(kind) = super::attrs::kind_id(key, opcode) else {
            return Ok(None);
        };
        let base = self.base;
        let cached = |st: &'a ModuleState| st.typed.get(&kind).and_then(|m| m.get(raw));
        if let Some(v) = self
            .st
            .typed
            .get(&kind)
            .and_then(|m| m.get(raw))
            .or_else(|| cached(base?))
        {
            return Ok(Some(v.clone()));
        }
        // Its own copy: the value must not keep the window.
        let owned = SharedStr::from(raw.to_string());
        match super::attrs::read(key, opcode, &owned) {
            Ok(Some(v)) => {
                self.st
                    .typed
                    .entry(kind)
                    .or_default()
                    .insert(owned, v.clone());
                Ok(Some(v))
            }
            Ok(None) => Ok(None),
            Err((offset, m)) => self.err_at(pos + offset, format!("{key}: {m}")),
        }
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
        let mut v = Vec::new();
        if self.eat(b'}')? {
            return Ok(v);
        }
        loop {
            v.push(self.int()?);
            if self.eat(b'}')? {
                return Ok(v);
            }
            self.expect(b',', "between integers")?;
        }
    }

    fn comp_list(&mut self) -> PResult<Vec<CompId>> {
        self.expect(b'{', "to start a list of computations")?;
        let mut v = Vec::new();
        if self.eat(b'}')? {
            return Ok(v);
        }
        loop {
            let p = self.pos;
            let n = self.name("computation name")?;
            v.push(self.comp_ref(n, p));
            if self.eat(b'}')? {
                return Ok(v);
            }
            self.expect(b',', "between computations")?;
        }
    }

    fn instr_list(&mut self, scope: &Scope) -> PResult<Vec<InstrId>> {
        self.expect(b'{', "to start a list of instructions")?;
        let mut v = Vec::new();
        if self.eat(b'}')? {
            return Ok(v);
        }
        loop {
            let p = self.pos;
            let n = self.name("instruction name")?;
            match self.all_names.get(n) {
                Some(&(comp, id)) if comp == scope.id => v.push(id),
                _ => return self.err_at(p, format!("'{n}' is not defined")),
            }
            if self.eat(b'}')? {
                return Ok(v);
            }
            self.expect(b',', "between instructions")?;
        }
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

    /// Checks XLA's parser makes on the operands, before the attributes.
    fn check_operands(
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

    fn comp_name(&self, id: CompId) -> &str {
        self.st
            .comp_ids
            .iter()
            .find(|(_, &v)| v == id)
            .map_or("", |(k, _)| k)
    }

    /// Checks XLA's parser makes on single instructions, once read.
    fn check_instruction(
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
    fn check_result_shape(
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

    // ---- literals -----------------------------------------------------

    /// A custom call's `literal=`: a shape and its value (`s32[2]{0} {1, 2}`),
    /// or a tuple of them `( a, b )`.
    fn shaped_literal(&mut self) -> PResult<Literal> {
        self.enter()?;
        let r = self.shaped_literal_inner();
        self.leave();
        r
    }

    fn shaped_literal_inner(&mut self) -> PResult<Literal> {
        if !self.eat(b'(')? {
            let shape = self.shape()?;
            return self.literal(&shape);
        }
        let mut items = Vec::new();
        if !self.eat(b')')? {
            loop {
                items.push(self.shaped_literal()?);
                if self.eat(b')')? {
                    break;
                }
                self.expect(b',', "between the elements of a tuple literal")?;
            }
        }
        Ok(Literal {
            shape: Shape::Tuple(items.iter().map(|l| l.shape.clone()).collect()),
            data: LiteralData::Tuple(items),
        })
    }

    fn literal(&mut self, shape: &Shape) -> PResult<Literal> {
        self.enter()?;
        let r = self.literal_inner(shape);
        self.leave();
        r
    }

    fn literal_inner(&mut self, shape: &Shape) -> PResult<Literal> {
        self.skip_ws()?;
        if self.text[self.pos..].starts_with("{...}") {
            self.pos += 5;
            return Ok(Literal {
                shape: shape.clone(),
                data: LiteralData::Elided,
            });
        }
        match shape {
            Shape::Tuple(elems) => {
                self.expect(b'(', "to start a tuple literal")?;
                let mut items = Vec::with_capacity(elems.len());
                for (i, e) in elems.iter().enumerate() {
                    if i > 0 {
                        self.expect(b',', "between tuple literal elements")?;
                    }
                    items.push(self.literal(e)?);
                }
                self.expect(b')', "to end a tuple literal")?;
                Ok(Literal {
                    shape: shape.clone(),
                    data: LiteralData::Tuple(items),
                })
            }
            Shape::Token | Shape::Opaque => Ok(Literal {
                shape: shape.clone(),
                data: LiteralData::Empty,
            }),
            Shape::Array(a) => {
                let mut builder = ElementBuilder::new(a.element_type, capacity_hint(&a.dims));
                if a.rank() == 0 {
                    self.element(&mut builder)?;
                } else {
                    self.dense(&a.dims, &mut Vec::new(), &mut builder)?;
                }
                Ok(Literal {
                    shape: shape.clone(),
                    data: builder.finish(),
                })
            }
        }
    }

    /// `{ {1, 2}, {3, 4} }` for `dims[path.len()..]`; `path` holds the
    /// indices of the enclosing arrays (for messages, as XLA writes them).
    fn dense(
        &mut self,
        dims: &[i64],
        path: &mut Vec<i64>,
        out: &mut ElementBuilder,
    ) -> PResult<()> {
        self.enter()?;
        let r = self.dense_inner(dims, path, out);
        self.leave();
        r
    }

    fn dense_inner(
        &mut self,
        dims: &[i64],
        path: &mut Vec<i64>,
        out: &mut ElementBuilder,
    ) -> PResult<()> {
        let rank = dims.len();
        let level = path.len();
        let index = |path: &[i64]| {
            let parts: Vec<String> = path.iter().map(i64::to_string).collect();
            format!("[{}]", parts.join(","))
        };
        if self.peek()? != Some(b'{') {
            if self.peek()? == Some(b'}') && level == 0 {
                return self.err("unexpected '}' token");
            }
            if level == 0 {
                let found = self.describe_here();
                return self.err(format!(
                    "expects '{{' to start a literal of rank {rank}, but sees {found}"
                ));
            }
            let found = if self.peek()? == Some(b'}') {
                "fewer"
            } else {
                "an element"
            };
            return self.err(format!(
                "expects nested array in rank {rank}, but sees {found}"
            ));
        }
        self.pos += 1;
        let want = dims[level];
        let mut count = 0i64;
        if self.eat(b'}')? {
            if want != 0 {
                return self.err(format!(
                    "expects {want} elements in the {}th element, but sees 0",
                    index(path)
                ));
            }
            return Ok(());
        }
        loop {
            if count == want {
                return self.err(if level + 1 == rank {
                    format!("expects {want} elements on the minor-most dimension, but sees more")
                } else {
                    format!(
                        "expects {want} elements in the {}th element, but sees more",
                        index(path)
                    )
                });
            }
            if level + 1 == rank {
                if self.peek()? == Some(b'{') {
                    return self.err(format!(
                        "expects nested array in rank {rank}, but sees larger"
                    ));
                }
                self.element(out)?;
            } else {
                if self.peek()? != Some(b'{') {
                    return self.err(format!(
                        "expects nested array in rank {rank}, but sees {}",
                        level + 1
                    ));
                }
                path.push(count);
                self.dense(dims, path, out)?;
                path.pop();
            }
            count += 1;
            if self.eat(b'}')? {
                break;
            }
            if !self.eat(b',')? {
                let found = self.describe_here();
                return self.err(format!(
                    "expects ',' or '}}' in a literal, but sees {found}"
                ));
            }
        }
        if count != want {
            return self.err(format!(
                "expects {want} elements in the {}th element, but sees {count}",
                index(path)
            ));
        }
        Ok(())
    }

    fn element(&mut self, out: &mut ElementBuilder) -> PResult<()> {
        self.skip_ws()?;
        let start = self.pos;
        if out.ty.is_complex() {
            self.expect(b'(', "to start a complex number")?;
            let re = self.number_token()?;
            self.expect(b',', "in a complex number")?;
            let im = self.number_token()?;
            self.expect(b')', "to end a complex number")?;
            let (re, im) = match (parse_float(re), parse_float(im)) {
                (Some(r), Some(i)) => (r, i),
                _ => return self.err_at(start, "expects a complex number"),
            };
            return out.push_complex(re, im).or_else(|m| self.err_at(start, m));
        }
        let tok = self.number_token()?;
        out.push(tok).or_else(|m| self.err_at(start, m))
    }

    /// The text of a number-like token: `-1.5e-07`, `true`, `inf`, `-nan(0x1)`.
    fn number_token(&mut self) -> PResult<&'a str> {
        self.skip_ws()?;
        let start = self.pos;
        let mut i = start;
        while i < self.b.len() {
            let c = self.b[i];
            if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'+' | b'.') {
                i += 1;
            } else if c == b'(' && self.text[start..i].ends_with("nan") {
                match self.text[i..].find(')') {
                    Some(j) => i += j + 1,
                    None => break,
                }
            } else {
                break;
            }
        }
        if i == start {
            let found = self.describe_here();
            return self.err(format!("expects a literal element, but sees {found}"));
        }
        self.pos = i;
        Ok(&self.text[start..i])
    }

    // ---- after the module ---------------------------------------------

    fn name_unnamed(&mut self) {
        let unnamed = std::mem::take(&mut self.st.unnamed);
        for (comp, id, wanted) in unnamed {
            let name = self.st.module.names_mut().unique(&wanted);
            self.st.module.comp_mut(comp).instr_mut(id).name = name.into();
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

/// Attribute names a nested instruction may carry (so that `, index=0`
/// after a nested operand is not mistaken for the outer list's end).
fn is_attr_name(key: &str) -> bool {
    !key.is_empty()
}

/// Elements of an array of these dimensions, for preallocation (which
/// `ElementBuilder` caps): saturating, since the text may be hostile.
fn capacity_hint(dims: &[i64]) -> usize {
    dims.iter().fold(1usize, |n, &d| {
        n.saturating_mul(usize::try_from(d).unwrap_or(0))
    })
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

fn parse_float(tok: &str) -> Option<f64> {
    match tok {
        "inf" => Some(f64::INFINITY),
        "-inf" => Some(f64::NEG_INFINITY),
        "nan" => Some(f64::NAN),
        "-nan" => Some(-f64::NAN),
        _ => {
            let b = tok.as_bytes();
            let ok = b
                .iter()
                .all(|&c| c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E'));
            if ok {
                tok.parse::<f64>().ok()
            } else {
                None
            }
        }
    }
}

/// Collects literal elements of one type.
struct ElementBuilder {
    ty: PrimitiveType,
    data: LiteralData,
}

impl ElementBuilder {
    fn new(ty: PrimitiveType, cap: usize) -> ElementBuilder {
        let cap = cap.min(1 << 20);
        let data = match ty {
            PrimitiveType::Pred => LiteralData::Pred(Vec::with_capacity(cap)),
            t if t.is_signed_int() => LiteralData::Int(Vec::with_capacity(cap)),
            t if t.is_unsigned_int() => LiteralData::UInt(Vec::with_capacity(cap)),
            PrimitiveType::F16 => LiteralData::F16(Vec::with_capacity(cap)),
            PrimitiveType::Bf16 => LiteralData::Bf16(Vec::with_capacity(cap)),
            PrimitiveType::F32 => LiteralData::F32(Vec::with_capacity(cap)),
            PrimitiveType::F64 => LiteralData::F64(Vec::with_capacity(cap)),
            PrimitiveType::C64 => LiteralData::C64(Vec::with_capacity(cap)),
            PrimitiveType::C128 => LiteralData::C128(Vec::with_capacity(cap)),
            t if t.minifloat().is_some() => LiteralData::MiniFloat(Vec::with_capacity(cap)),
            _ => LiteralData::Empty,
        };
        ElementBuilder { ty, data }
    }

    fn finish(self) -> LiteralData {
        self.data
    }

    fn push(&mut self, tok: &str) -> Result<(), String> {
        let ty = self.ty;
        match &mut self.data {
            LiteralData::Pred(v) => v.push(pred_element(tok)?),
            LiteralData::Int(v) => v.push(int_element(ty, tok)?),
            LiteralData::UInt(v) => v.push(uint_element(ty, tok)?),
            LiteralData::F16(v) => v.push(float_element(&F16_LAYOUT, ty, tok)?),
            LiteralData::Bf16(v) => v.push(float_element(&BF16_LAYOUT, ty, tok)?),
            LiteralData::F32(v) => v.push(float_element(&F32_LAYOUT, ty, tok)?),
            LiteralData::F64(v) => v.push(float_element(&F64_LAYOUT, ty, tok)?),
            LiteralData::MiniFloat(v) => v.push(minifloat_element(ty, tok)?),
            LiteralData::C64(_) | LiteralData::C128(_) => {
                return Err("expects a complex number".into())
            }
            LiteralData::Tuple(_) | LiteralData::Elided | LiteralData::Empty => {
                return Err(format!("a literal of type {} has no elements", ty.name()))
            }
        }
        Ok(())
    }

    fn push_complex(&mut self, re: f64, im: f64) -> Result<(), String> {
        match &mut self.data {
            LiteralData::C64(v) => {
                let lim = f64::from(f32::MAX);
                if (re.is_finite() && re.abs() > lim) || (im.is_finite() && im.abs() > lim) {
                    return Err("value is out of range for literal's primitive type C64".into());
                }
                v.push((re as f32, im as f32));
            }
            LiteralData::C128(v) => v.push((re, im)),
            _ => return Err("unexpected complex number".into()),
        }
        Ok(())
    }
}

fn parse_int(tok: &str) -> Option<i64> {
    match tok {
        "true" => Some(1),
        "false" => Some(0),
        _ => tok.parse::<i64>().ok(),
    }
}

fn range_error(ty: PrimitiveType, tok: &str) -> String {
    format!(
        "value {tok} is out of range for literal's primitive type {}",
        ty.name().to_uppercase()
    )
}

fn pred_element(tok: &str) -> Result<bool, String> {
    match tok {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(format!("expects a pred value, but sees {tok}")),
    }
}

/// An element of a signed integer type `ty`.
fn int_element(ty: PrimitiveType, tok: &str) -> Result<i64, String> {
    let x: i64 = parse_int(tok).ok_or_else(|| format!("expects an integer, but sees {tok}"))?;
    let bits = ty.bit_width();
    let (lo, hi) = if bits >= 64 {
        (i64::MIN, i64::MAX)
    } else {
        (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
    };
    if x < lo || x > hi {
        return Err(range_error(ty, tok));
    }
    Ok(x)
}

/// An element of an unsigned integer type `ty`.
fn uint_element(ty: PrimitiveType, tok: &str) -> Result<u64, String> {
    let x: u64 = if let Some(stripped) = tok.strip_prefix('-') {
        // `-0` is 0; other negative integers are out of range;
        // anything else (`-inf`, `-1.5`) is no integer at all.
        if stripped.is_empty() || !stripped.bytes().all(|c| c.is_ascii_digit()) {
            return Err(format!("expects an unsigned integer, but sees {tok}"));
        }
        if stripped.bytes().any(|c| c != b'0') {
            return Err(range_error(ty, tok));
        }
        0
    } else {
        tok.parse::<u64>()
            .map_err(|_| format!("expects an unsigned integer, but sees {tok}"))?
    };
    let bits = ty.bit_width();
    if bits < 64 && x >= (1u64 << bits) {
        return Err(range_error(ty, tok));
    }
    Ok(x)
}

/// What reading an element of a float type of IEEE layout needs to know
/// of the type.
struct FloatLayout<T> {
    /// The NaN payloads its mantissa holds.
    payload_mask: u64,
    /// The bits of its negative and its positive infinity.
    infinities: (u64, u64),
    from_f64: fn(f64) -> T,
    from_bits: fn(u64) -> T,
    is_infinite: fn(T) -> bool,
}

const F16_LAYOUT: FloatLayout<f16> = FloatLayout {
    payload_mask: 0x3ff,
    infinities: (0xfc00, 0x7c00),
    from_f64: f16::from_f64,
    from_bits: |b| f16::from_bits(b as u16),
    is_infinite: f16::is_infinite,
};

const BF16_LAYOUT: FloatLayout<bf16> = FloatLayout {
    payload_mask: 0x7f,
    infinities: (0xff80, 0x7f80),
    from_f64: bf16::from_f64,
    from_bits: |b| bf16::from_bits(b as u16),
    is_infinite: bf16::is_infinite,
};

const F32_LAYOUT: FloatLayout<f32> = FloatLayout {
    payload_mask: 0x7f_ffff,
    infinities: (0xff80_0000, 0x7f80_0000),
    from_f64: |x| x as f32,
    from_bits: |b| f32::from_bits(b as u32),
    is_infinite: f32::is_infinite,
};

const F64_LAYOUT: FloatLayout<f64> = FloatLayout {
    payload_mask: (1 << 52) - 1,
    infinities: (0xfff0 << 48, 0x7ff0 << 48),
    from_f64: |x| x,
    from_bits: f64::from_bits,
    is_infinite: f64::is_infinite,
};

/// An element of the float type `ty`, laid out as `t`: a number (refused
/// if finite but past the type's range), or a NaN with the payload written.
fn float_element<T: Copy>(t: &FloatLayout<T>, ty: PrimitiveType, tok: &str) -> Result<T, String> {
    let x = float_token(tok, t.payload_mask)?;
    let value = (t.from_f64)(x.value);
    if x.value.is_finite() && (t.is_infinite)(value) {
        return Err(range_error(ty, tok));
    }
    Ok(match x.nan_bits(t.infinities) {
        Some(b) => (t.from_bits)(b),
        None => value,
    })
}

/// An element of an 8-bit float type `ty`, as its bits.
fn minifloat_element(ty: PrimitiveType, tok: &str) -> Result<u8, String> {
    let m = ty
        .minifloat()
        .expect("minifloat data only for minifloat types");
    let payload_mask = if m.nan == crate::ir::types::NanEncoding::Ieee {
        (1u64 << m.mantissa_bits) - 1
    } else {
        0
    };
    let x = float_token(tok, payload_mask)?;
    if x.value.is_finite() && !m.to_f64(m.from_f64(x.value)).is_finite() {
        return Err(range_error(ty, tok));
    }
    Ok(match x.payload {
        Some(p) => {
            let exp = (((1u32 << m.exponent_bits) - 1) << m.mantissa_bits) as u8;
            let sign = if x.value.is_sign_negative() {
                1u8 << (m.exponent_bits + m.mantissa_bits)
            } else {
                0
            };
            sign | exp | p as u8
        }
        None => m.from_f64(x.value),
    })
}

/// A float token as read: its value, and the NaN payload written, if any.
struct FloatToken {
    value: f64,
    payload: Option<u64>,
}

impl FloatToken {
    /// The bits of the NaN written with a payload: the payload in the
    /// mantissa of the type's infinity of its sign (the bits of the
    /// negative and the positive one).
    fn nan_bits(&self, (neg_inf, pos_inf): (u64, u64)) -> Option<u64> {
        let inf = if self.value.is_sign_negative() {
            neg_inf
        } else {
            pos_inf
        };
        self.payload.map(|p| inf | p)
    }
}

/// A float token of a type whose NaN payloads fit `payload_mask`.
fn float_token(tok: &str, payload_mask: u64) -> Result<FloatToken, String> {
    if let Some(rest) = tok
        .strip_prefix("nan(0x")
        .or_else(|| tok.strip_prefix("-nan(0x"))
    {
        let hex = rest.trim_end_matches(')');
        let payload =
            u64::from_str_radix(hex, 16).map_err(|_| format!("invalid NaN payload in {tok}"))?;
        if payload == 0 || payload > payload_mask {
            return Err(format!(
                "tries to set NaN payload 0x{payload:x} that does not fit the type"
            ));
        }
        let value = if tok.starts_with('-') {
            -f64::NAN
        } else {
            f64::NAN
        };
        return Ok(FloatToken {
            value,
            payload: Some(payload),
        });
    }
    let value = match tok {
        "true" => 1.0,
        "false" => 0.0,
        _ => {
            let v = parse_float(tok).ok_or_else(|| format!("expects a number, but sees {tok}"))?;
            if v.is_infinite() && !matches!(tok, "inf" | "-inf") {
                return Err(format!("value {tok} is out of range"));
            }
            v
        }
    };
    Ok(FloatToken {
        value,
        payload: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// Groups read in parts on this thread.
        pub(super) static GROUPS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// A computation of the test module: calls the one before it, every
    /// fifth also one defined further on (a forward reference), every
    /// seventh an async start of a computation of its own; nested operands
    /// and a compact GTE make instructions named once the module is read.
    fn computation(i: usize) -> String {
        let mut t = String::new();
        if i % 7 == 3 {
            t += &format!(
                "%wrapped.{i} (a: f32[8]) -> f32[8] {{\n  %a = f32[8]{{0}} parameter(0)\n  ROOT %n = f32[8]{{0}} negate(%a)\n}}\n\n"
            );
        }
        t += &format!("%comp.{i} (p: f32[8]) -> f32[8] {{\n  %p = f32[8]{{0}} parameter(0)\n");
        t += &format!(
            "  %e = f32[8]{{0}} exponential(f32[8]{{0}} negate(f32[8]{{0}} %p)), metadata={{op_name=\"jit(f)/exp\" source_line={}}}\n",
            i % 13
        );
        let mut last = "e".to_string();
        if i > 0 {
            t += &format!("  %c = f32[8]{{0}} call(%e), to_apply=%comp.{}\n", i - 1);
            last = "c".into();
        }
        if i % 5 == 0 {
            t += &format!("  %f = f32[8]{{0}} call(%{last}), to_apply=%late.{i}\n");
            last = "f".into();
        }
        if i % 7 == 3 {
            t += &format!("  %s = ((f32[8]{{0}}), f32[8]{{0}}, u32[]) async-start(%{last}), calls=%wrapped.{i}\n");
            t += "  %d = f32[8]{0} async-done(%s)\n";
            last = "d".into();
        }
        t += &format!("  %t = (f32[8]{{0}}, f32[]) tuple(%{last}, f32[] constant(1))\n");
        t += "  ROOT %g = f32[8]{0} get-tuple-element(%t), index=0\n}\n\n";
        if i >= 40 && i % 5 == 0 {
            t += &format!(
                "%late.{} (q: f32[8]) -> f32[8] {{\n  ROOT %q = f32[8]{{0}} parameter(0)\n}}\n\n",
                i - 40
            );
        }
        t
    }

    /// The module, with `edit` in place of some computations.
    fn module(n: usize, edit: impl Fn(usize) -> Option<String>) -> String {
        let mut t = String::from("HloModule big\n\n");
        for i in 0..n {
            t += &edit(i).unwrap_or_else(|| computation(i));
        }
        let first_late = n.saturating_sub(40).div_ceil(5) * 5;
        for i in (first_late..n).step_by(5) {
            t += &format!(
                "%late.{i} (q: f32[8]) -> f32[8] {{\n  ROOT %q = f32[8]{{0}} parameter(0)\n}}\n\n"
            );
        }
        t += &format!(
            "ENTRY %main (x: f32[8]) -> f32[8] {{\n  %x = f32[8]{{0}} parameter(0)\n  ROOT %r = f32[8]{{0}} call(%x), to_apply=%comp.{}\n}}\n\n",
            n - 1
        );
        t
    }

    fn parse_on(text: &str, threads: usize) -> Result<Module, ParseError> {
        let parallel = Parallel {
            threads,
            after: 4 << 10,
            group: 16 << 10,
        };
        parse_windows_on(TextSource::new(text), "t.hlo", parallel).map_err(|e| match e {
            ReadError::Parse(e) => e,
            other => ParseError::at("t.hlo", "", 0, other.to_string()),
        })
    }

    /// Reads `text` one window at a time and in groups of parts: the same
    /// module (ids included) or the same error. How many groups were read
    /// in parts.
    fn same_both_ways(text: &str) -> (Result<Module, ParseError>, usize) {
        let one = parse_on(text, 1);
        let before = GROUPS.with(|g| g.get());
        let two = parse_on(text, 2);
        let groups = GROUPS.with(|g| g.get()) - before;
        match (&one, &two) {
            (Ok(a), Ok(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}")),
            (Err(a), Err(b)) => assert_eq!(a, b),
            _ => panic!("one way {:?}, the other {:?}", one.is_ok(), two.is_ok()),
        }
        (two, groups)
    }

    #[test]
    fn groups_read_in_parts_give_the_module_read_one_window_at_a_time() {
        let (m, groups) = same_both_ways(&module(300, |_| None));
        assert!(m.is_ok());
        assert!(groups > 3, "{groups} groups");
    }

    /// A computation `name`, calling `calls` from an async start if given.
    fn plain(name: &str, entry: bool, calls: Option<&str>) -> String {
        let entry = if entry { "ENTRY " } else { "" };
        let body = match calls {
            Some(c) => format!("  %s = ((f32[8]{{0}}), f32[8]{{0}}, u32[]) async-start(%p), calls=%{c}\n  ROOT %d = f32[8]{{0}} async-done(%s)\n"),
            None => "  ROOT %n = f32[8]{0} negate(%p)\n".to_string(),
        };
        format!("{entry}%{name} (p: f32[8]) -> f32[8] {{\n  %p = f32[8]{{0}} parameter(0)\n{body}}}\n\n")
    }

    #[test]
    fn what_a_part_cannot_tell_gives_the_errors_of_one_window_at_a_time() {
        let bad = "%bad (p: f32[8]) -> f32[8] {\n  %p = f32[8]{0} parameter(0)\n  ROOT %c = f32[8]{0} frobnicate(%p)\n}\n\n";
        let undefined = "%u (p: f32[8]) -> f32[8] {\n  %p = f32[8]{0} parameter(0)\n  ROOT %c = f32[8]{0} call(%p), to_apply=%nowhere\n}\n\n";
        let mut cases: Vec<Vec<(usize, String)>> = vec![
            // Defined long before.
            vec![(250, plain("comp.20", false, None))],
            // Two more entries in groups.
            vec![
                (150, plain("e1", true, None)),
                (200, plain("e2", true, None)),
            ],
            // Never defined.
            vec![(210, undefined.to_string())],
            // An error in a window of a group.
            vec![(220, bad.to_string())],
            // A second async caller long after.
            vec![(230, plain("a2", false, Some("wrapped.3")))],
        ];
        // Defined twice, or async-called twice, in one part or in two
        // parts of one group.
        for first in (100..130).step_by(6) {
            for apart in [4, 12, 20] {
                let (a, b) = (plain("dup", false, None), plain("dup", false, None));
                cases.push(vec![(first, a), (first + apart, b)]);
                let a = plain("a3", false, Some("comp.95"));
                let b = plain("a4", false, Some("comp.95"));
                cases.push(vec![(first, a), (first + apart, b)]);
            }
        }
        for case in cases {
            let edit = |i: usize| {
                let (_, text) = case.iter().find(|(at, _)| *at == i)?;
                Some(format!("{text}{}", computation(i)))
            };
            let (m, _) = same_both_ways(&module(300, edit));
            assert!(m.is_err(), "{case:?}");
        }
    }

    #[test]
    fn a_window_cut_inside_a_literal_reads_the_same() {
        // A line starting with `}` inside a computation cuts a window in
        // the wrong place: the rest is read as one window.
        let literal = "%lit (p: f32[2,2]) -> f32[2,2] {\n  %p = f32[2,2]{1,0} parameter(0)\n  ROOT %k = f32[2,2]{1,0} constant({ { 1, 2 },\n{ 3, 4 }\n})\n}\n\n";
        let edit = |i: usize| (i == 200).then(|| format!("{literal}{}", computation(i)));
        let (m, _) = same_both_ways(&module(300, edit));
        assert!(m.is_ok());
    }
}
