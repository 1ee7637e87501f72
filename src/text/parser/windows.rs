//! How the text is read: a window of whole computations at a time (see
//! `src/text/input.rs`), and on a large input groups of windows read in
//! parts on several threads, then merged as if read one at a time.

use super::{ModuleState, Parser, Position};
use crate::ir::instruction::AttrValue;
use crate::ir::{CompId, Module};
use crate::text::error::{ParseError, ReadError};
use crate::text::input::{window_end, Cut, Source, TakeError, TextEnd};
use crate::util::{par_map_beside, FxMap, FxSet};
use std::collections::VecDeque;
use std::sync::Arc;

/// Text read one window at a time before windows are read in groups on
/// several threads: small inputs (tests, fuzz cases) never leave the
/// sequential path, which is also the oracle of the parallel one.
const PARALLEL_AFTER: usize = 1 << 20;

/// Bytes of windows read ahead for a group (bounds the text in memory).
const GROUP_BYTES: usize = 2 << 20;

/// Reads the source a window at a time (see `src/text/input.rs`); on a
/// large input, groups of windows on the machine's cores.
pub(super) fn parse_windows(input: impl Source, file: &str) -> Result<Module, ReadError> {
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
            .map_err(|e| take_error(e, offset))?;
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
            .map_err(|e| take_error(e, offset))?;
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
        // Most computations name none: their instructions stay unread.
        if part.calling.contains(&id) {
            for (_, instr) in comp.slots_mut() {
                for attr in instr.attrs.iter_mut() {
                    match &mut attr.value {
                        AttrValue::Comp(c) => *c = map(*c),
                        AttrValue::Comps(cs) => cs.iter_mut().for_each(|c| *c = map(*c)),
                        _ => {}
                    }
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
    st.shapes.add_missing(part.shapes);
    for t in part.texts {
        if !st.texts.contains(&t) {
            st.texts.insert(t);
        }
    }
    if st.typed.len() < part.typed.len() {
        st.typed.resize_with(part.typed.len(), FxMap::default);
    }
    for (into, values) in st.typed.iter_mut().zip(part.typed) {
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

/// The read error of a window not taken at byte `offset` of the input.
fn take_error(e: TakeError, offset: usize) -> ReadError {
    match e {
        TakeError::NotUtf8(i) => ReadError::NotUtf8 { offset: offset + i },
        TakeError::OutOfMemory => ReadError::Io(std::io::ErrorKind::OutOfMemory.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::input::TextSource;

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
