//! `--report-html FILE`: one self-contained HTML page of what the passes
//! did. Per pass: changed or not, and its time; per rewrite, the
//! neighbourhood before and after, drawn (the matched region, the calls
//! that replaced it, the operands and users around); per skipped
//! candidate, its reason and neighbourhood. Only neighbourhoods are drawn,
//! never a whole computation, so the page stays small on any module.
//!
//! An observer of [`crate::passes::Pipeline::run_with`], as
//! `--check-numerics` is: it keeps the module as the last pass that changed
//! it left it, and reads each rewrite's region as the instructions of
//! that computation the pass removed, reached from the rewritten one.
//! The same [`RunRecord`] feeds `--emit-graph`'s overlay (which pass made
//! what; see [`crate::driver::graph_json`]).

mod graph;
mod layout;
mod page;

use crate::ir::{AttrValue, CompId, Computation, InstrId, Instruction, Module};
use crate::passes::{PassError, PassRun, ReportEntry};
use crate::util::{FxMap, FxSet};
use graph::{Graph, Role};
use std::time::Duration;

/// Instructions a drawn region holds at most (a huge match is cut).
const REGION_LIMIT: usize = 48;
/// Drawings per pass at most; the rest are listed without one.
const DRAWN_PER_PASS: usize = 64;

/// What the passes did, collected as they run: the page of
/// `--report-html`, and the instructions each made for `--emit-graph`.
pub struct RunRecord {
    /// The module as the last pass that changed it left it.
    previous: Module,
    title: String,
    passes: Vec<PassSection>,
    /// The instructions each pass made or rewrote, by (computation,
    /// instruction) name: the last pass to touch one wins.
    made: FxMap<(String, String), &'static str>,
}

struct PassSection {
    name: &'static str,
    changed: bool,
    elapsed: Duration,
    entries: Vec<Entry>,
}

/// A report line, drawn where it could be.
struct Entry {
    rewrote: bool,
    computation: String,
    instruction: String,
    text: String,
    /// Before and after (a rewrite), or around (a skipped candidate).
    drawings: Vec<(&'static str, Graph)>,
    /// The user's source lines the matched instructions came from.
    sources: Vec<SourceLine>,
}

/// A line of the user's source an instruction came from.
#[derive(Clone, PartialEq, Eq, Debug)]
struct SourceLine {
    file: String,
    line: i64,
    /// The function, where the stack frames name it.
    function: String,
}

impl SourceLine {
    /// `attention.py:42`: the file's last component and the line.
    fn short(&self) -> String {
        let base = self.file.rsplit(['/', '\\']).next().unwrap_or(&self.file);
        format!("{base}:{}", self.line)
    }

    /// The whole path, line and function.
    fn long(&self) -> String {
        match self.function.as_str() {
            "" => format!("{}:{}", self.file, self.line),
            f => format!("{}:{} in {f}", self.file, self.line),
        }
    }
}

/// Where `instr` came from in the user's source: its metadata's
/// `source_file`/`source_line` (torch-xla, older JAX), or else the
/// innermost frame of its `stack_frame_id` (JAX's tables, whose innermost
/// frame is the user's: JAX and Flax leave their own frames out).
fn source_line(module: &Module, instr: &Instruction) -> Option<SourceLine> {
    let Some(AttrValue::Metadata(md)) = instr.attr("metadata") else {
        return None;
    };
    if !md.source_file.is_empty() && md.source_line > 0 {
        return Some(SourceLine {
            file: md.source_file.to_string(),
            line: md.source_line.into(),
            function: String::new(),
        });
    }
    let tables = module.stack_frames.as_ref()?;
    // Ids are 1-based positions in their tables (0: none).
    let at = |id: i64| usize::try_from(id).ok()?.checked_sub(1);
    let frame = tables.stack_frames.get(at(md.stack_frame_id.into())?)?;
    let loc = tables.file_locations.get(at(frame.file_location_id)?)?;
    let file = tables.file_names.get(at(loc.file_name_id)?)?;
    let function = at(loc.function_name_id)
        .and_then(|f| tables.function_names.get(f))
        .map_or(String::new(), |f| f.to_string());
    Some(SourceLine {
        file: file.to_string(),
        line: loc.line,
        function,
    })
}

/// The distinct source lines of `ids` (of computation `cid`), in order.
fn source_lines(module: &Module, cid: CompId, ids: &[InstrId]) -> Vec<SourceLine> {
    let comp = module.comp(cid);
    let mut out: Vec<SourceLine> = Vec::new();
    for &id in ids {
        if let Some(s) = source_line(module, comp.instr(id)) {
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    out
}

impl RunRecord {
    /// A record of a run on `module`; `title` names the input.
    pub fn new(module: &Module, title: &str) -> RunRecord {
        RunRecord {
            previous: module.clone(),
            title: title.to_string(),
            passes: Vec::new(),
            made: FxMap::default(),
        }
    }

    /// The observer's hook: what the pass did, as it left `module`.
    pub fn after(&mut self, run: &PassRun, module: &Module) -> Result<(), PassError> {
        let mut section = PassSection {
            name: run.name,
            changed: run.changed,
            elapsed: run.elapsed,
            entries: Vec::with_capacity(run.report.len()),
        };
        // One name index per computation for this pass, shared by the
        // drawings and by `record_made`.
        let mut names = NameIndex::default();
        for (k, e) in run.report.iter().enumerate() {
            let draw = k < DRAWN_PER_PASS;
            section
                .entries
                .push(self.entry(e, module, draw, &mut names));
        }
        self.passes.push(section);
        if run.changed {
            self.record_made(run, module, &mut names);
            self.previous = module.clone();
        }
        Ok(())
    }

    /// What the pass made: in each computation it reports a rewrite in,
    /// the instructions new by name, and the rewritten ones that kept
    /// theirs.
    fn record_made(&mut self, run: &PassRun, module: &Module, names: &mut NameIndex) {
        let mut by_comp: FxMap<&str, Vec<&str>> = FxMap::default();
        for e in &run.report {
            if let ReportEntry::Rewrote {
                computation,
                instruction,
                ..
            } = e
            {
                by_comp.entry(computation).or_default().push(instruction);
            }
        }
        for (computation, rewritten) in by_comp {
            let Some((_, after)) = names.comp(module, Side::After, computation) else {
                continue;
            };
            let before = match names.comp(&self.previous, Side::Before, computation) {
                Some((_, c)) => Some(
                    &*names
                        .before
                        .entry(computation.to_string())
                        .or_insert_with(|| index_of(c)),
                ),
                None => None,
            };
            let kept: FxSet<&str> = rewritten.into_iter().collect();
            for (_, i) in after.instructions() {
                let was_there = before.is_some_and(|b| b.contains_key(&*i.name));
                if !was_there || kept.contains(&*i.name) {
                    self.made
                        .insert((computation.to_string(), i.name.to_string()), run.name);
                }
            }
        }
    }

    /// The instructions the passes made or rewrote, and by which pass.
    pub fn made(&self) -> &FxMap<(String, String), &'static str> {
        &self.made
    }

    /// The module as the last pass that changed it left it: the one the
    /// next pass runs on (read by `--emit-graph`'s marks).
    pub fn previous(&self) -> &Module {
        &self.previous
    }

    /// The passes of the run, in order.
    pub fn pass_names(&self) -> Vec<&'static str> {
        self.passes.iter().map(|p| p.name).collect()
    }

    fn entry(&self, e: &ReportEntry, module: &Module, draw: bool, names: &mut NameIndex) -> Entry {
        let text = e.to_string();
        let (rewrote, computation, instruction) = match e {
            ReportEntry::Rewrote {
                computation,
                instruction,
                ..
            } => (true, computation, instruction),
            ReportEntry::Skipped {
                computation,
                instruction,
                ..
            } => (false, computation, instruction),
        };
        let mut drawings = Vec::new();
        if draw {
            if rewrote {
                drawings =
                    rewrite_drawings(&self.previous, module, computation, instruction, names);
            } else if let Some(g) = around(module, computation, instruction, names) {
                drawings.push(("around", g));
            }
        }
        // What the pass matched came from where its first drawing's
        // region did; undrawn, where the instruction did.
        let sources = match drawings.first() {
            Some((_, g)) => g.sources.clone(),
            None => {
                let (m, side) = if rewrote {
                    (&self.previous, Side::Before)
                } else {
                    (module, Side::After)
                };
                names
                    .instr(m, side, computation, instruction)
                    .map(|(cid, id)| source_lines(m, cid, &[id]))
                    .unwrap_or_default()
            }
        };
        Entry {
            rewrote,
            computation: computation.clone(),
            instruction: instruction.clone(),
            text,
            drawings,
            sources,
        }
    }

    /// The page.
    pub fn write(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        page::write(self, out)
    }

    /// The page's table and first `shown` rewrites as one `<div>` styled
    /// on its own: a notebook's view of the run. `id_prefix` keeps its
    /// ids apart from other views in the same document.
    pub fn write_fragment(
        &self,
        out: &mut dyn std::io::Write,
        shown: usize,
        id_prefix: &str,
    ) -> std::io::Result<()> {
        page::write_fragment(self, out, shown, id_prefix)
    }
}

/// Name -> instruction of the computations looked at, and name ->
/// computation of the modules before and after the pass, built once each
/// (a pass may report a rewrite in each of thousands of computations).
#[derive(Default)]
struct NameIndex {
    before: FxMap<String, FxMap<String, InstrId>>,
    after: FxMap<String, FxMap<String, InstrId>>,
    comps: [Option<FxMap<String, CompId>>; 2],
}

/// Which module of a pass: the one it ran on or the one it left.
#[derive(Clone, Copy)]
enum Side {
    Before = 0,
    After = 1,
}

impl NameIndex {
    /// Computation `name` of `module`, the module on `side` of the pass.
    fn comp<'m>(
        &mut self,
        module: &'m Module,
        side: Side,
        name: &str,
    ) -> Option<(CompId, &'m Computation)> {
        let comps = self.comps[side as usize].get_or_insert_with(|| {
            module
                .computations()
                .map(|(id, c)| (c.name.to_string(), id))
                .collect()
        });
        let &id = comps.get(name)?;
        Some((id, module.comp(id)))
    }

    /// Instruction `instruction` of computation `name` of `module`.
    fn instr(
        &mut self,
        module: &Module,
        side: Side,
        name: &str,
        instruction: &str,
    ) -> Option<(CompId, InstrId)> {
        let (cid, comp) = self.comp(module, side, name)?;
        let index = match side {
            Side::Before => &mut self.before,
            Side::After => &mut self.after,
        };
        let index = index
            .entry(name.to_string())
            .or_insert_with(|| index_of(comp));
        Some((cid, *index.get(instruction)?))
    }
}

fn index_of(comp: &Computation) -> FxMap<String, InstrId> {
    comp.instructions()
        .map(|(id, i)| (i.name.to_string(), id))
        .collect()
}

/// Before: the instructions the pass removed, reached from the rewritten
/// one through operands (or the rewritten one alone, if it stayed), with
/// their operands and users. After: what the pass made in their place,
/// between the same operands and users.
fn rewrite_drawings(
    before_module: &Module,
    after_module: &Module,
    computation: &str,
    instruction: &str,
    names: &mut NameIndex,
) -> Vec<(&'static str, Graph)> {
    let (Some((bc, before)), Some((ac, after))) = (
        names.comp(before_module, Side::Before, computation),
        names.comp(after_module, Side::After, computation),
    ) else {
        return Vec::new();
    };
    let before_names = names
        .before
        .entry(computation.to_string())
        .or_insert_with(|| index_of(before));
    let after_names = names
        .after
        .entry(computation.to_string())
        .or_insert_with(|| index_of(after));
    let Some(&root) = before_names.get(instruction) else {
        return Vec::new();
    };
    let removed = |id: InstrId| !after_names.contains_key(&*before.instr(id).name);
    // The matched region: removed instructions the root reaches.
    let mut region: Vec<InstrId> = vec![root];
    let mut seen: FxSet<InstrId> = region.iter().copied().collect();
    let mut k = 0;
    while k < region.len() && region.len() < REGION_LIMIT {
        let id = region[k];
        k += 1;
        for &op in before.instr(id).operands() {
            if removed(op) && seen.insert(op) {
                region.push(op);
            }
        }
    }
    let before_graph = Graph::around(before_module, bc, &region, Role::Matched);
    // After: the rewritten instruction if it stayed, and every new
    // instruction between the region's operands and users.
    let boundary = before_graph.context_names();
    let new = |id: InstrId| !before_names.contains_key(&*after.instr(id).name);
    let mut made: Vec<InstrId> = Vec::new();
    let mut made_seen: FxSet<InstrId> = FxSet::default();
    if let Some(&kept) = after_names.get(instruction) {
        made.push(kept);
        made_seen.insert(kept);
    }
    for name in &boundary {
        let Some(&b) = after_names.get(*name) else {
            continue;
        };
        let touching = after
            .instr(b)
            .users()
            .iter()
            .chain(after.instr(b).operands())
            .copied()
            .collect::<Vec<_>>();
        for n in touching {
            if new(n) && made_seen.insert(n) {
                made.push(n);
            }
        }
    }
    // New instructions the first ones reach (a call and its GTEs, say).
    let mut k = 0;
    while k < made.len() && made.len() < REGION_LIMIT {
        let id = made[k];
        k += 1;
        let i = after.instr(id);
        for &n in i.operands().iter().chain(i.users()) {
            if new(n) && made_seen.insert(n) {
                made.push(n);
            }
        }
    }
    let mut out = vec![("before", before_graph)];
    if !made.is_empty() {
        out.push(("after", Graph::around(after_module, ac, &made, Role::New)));
    }
    out
}

/// A candidate left alone: it, its operands two deep and its users.
fn around(
    module: &Module,
    computation: &str,
    instruction: &str,
    names: &mut NameIndex,
) -> Option<Graph> {
    let (cid, comp) = names.comp(module, Side::After, computation)?;
    let index = names
        .after
        .entry(computation.to_string())
        .or_insert_with(|| index_of(comp));
    let &id = index.get(instruction)?;
    let mut region = vec![id];
    region.extend(comp.instr(id).operands().iter().copied());
    region.sort_unstable();
    region.dedup();
    Some(Graph::around(module, cid, &region, Role::Candidate))
}
