//! `--emit-graph FILE.json`: the run as Model Explorer's graph JSON, a
//! graph collection of two graphs, the input module ("before") and the
//! output module ("after"), and beside it `FILE.overlay.json`, Model
//! Explorer node data marking in both what each pass matched and made.
//!
//! The model's own structure: each node's namespace is its `op_name`
//! metadata without the op (JAX's `jit(f)/jvp(Block_0)/Dense_1/dot_general`
//! is in `jvp(Block_0)/Dense_1`; the `jit(f)` all nodes share is dropped,
//! so the first view shows the user's layers; torch-xla's scope of its
//! scalar ops, `aten__add.4/aten__add`, is no layer: such nodes join their
//! neighbours'). The computations a while,
//! a conditional or a call runs are drawn inside it, in a layer under the
//! caller's namespace (`while.5 body`), fed by the caller's operands and
//! feeding it; the scalar bodies of reduce, scatter, sort, map and the
//! collectives are not drawn: they are attributes of their caller, as text.
//!
//! Written as a stream: a node at a time, never a JSON tree of a module.

use crate::ir::instruction::AttrValue;
use crate::ir::{CompId, InstrId, Instruction, Module, Opcode};
use crate::passes::{PassRun, ReportEntry};
use crate::util::{FxMap, FxSet};
use std::io::{self, Write};

/// Background colours of the passes' nodes, in pipeline order.
const PASS_COLOURS: &[&str] = &[
    "#f4a261", "#2a9d8f", "#e76f51", "#8ab17d", "#e9c46a", "#6d597a", "#b56576", "#457b9d",
    "#90be6d", "#f28482",
];

/// Instructions of a scalar body written into its caller's attribute at
/// most (a reducer is a few; anything longer is cut, said so).
const BODY_TEXT_LINES: usize = 24;

/// What a pass did to one instruction: which pass, and the report line of
/// the rewrite it belongs to.
#[derive(Clone, Debug)]
pub struct Mark {
    pub pass: &'static str,
    pub reason: String,
}

/// Marks by (computation, instruction) name.
pub type Marks = FxMap<(String, String), Mark>;

/// What the graph draws of a run besides its two modules: which
/// instructions each pass matched (in the module it ran on) and made (in
/// the module it left). Names only: the modules themselves are the faces'
/// (the command keeps a copy of its input only when a graph is asked).
#[derive(Clone, Debug, Default)]
pub struct GraphMarks {
    /// The first pass to match an instruction wins: that is the pass that
    /// changed the input's instruction.
    matched: Marks,
    /// The last pass to make or rewrite one wins: its node is in the output.
    made: Marks,
    passes: Vec<&'static str>,
}

impl GraphMarks {
    /// The observer's hook: `run` took `before` to `after`.
    pub fn after(&mut self, run: &PassRun, before: &Module, after: &Module) {
        self.passes.push(run.name);
        if !run.changed {
            return;
        }
        let mut by_comp: FxMap<&str, Vec<(&str, &str)>> = FxMap::default();
        for e in &run.report {
            if let ReportEntry::Rewrote {
                computation,
                instruction,
                detail,
            } = e
            {
                by_comp
                    .entry(computation)
                    .or_default()
                    .push((instruction, detail));
            }
        }
        let (before_comps, after_comps) =
            (before.computations_by_name(), after.computations_by_name());
        for (computation, rewrites) in by_comp {
            let (Some(&bc), Some(&ac)) =
                (before_comps.get(computation), after_comps.get(computation))
            else {
                continue;
            };
            let (bcomp, acomp) = (before.comp(bc), after.comp(ac));
            let bnames: FxMap<&str, _> =
                bcomp.instructions().map(|(id, i)| (&*i.name, id)).collect();
            let anames: FxMap<&str, _> =
                acomp.instructions().map(|(id, i)| (&*i.name, id)).collect();
            let key = |name: &str| (computation.to_string(), name.to_string());
            let mark = |instruction: &str, detail: &str| Mark {
                pass: run.name,
                reason: format!("rewrote {instruction}: {detail}"),
            };
            let mut made_here: FxSet<&str> = FxSet::default();
            // An instruction an earlier rewrite reached was marked by it,
            // as was all it leads to, so no walk goes through it again (a
            // chain of n rewrites would cost n^2).
            let mut matched_here = FxSet::default();
            for &(instruction, detail) in &rewrites {
                // Matched: the rewritten instruction and the removed ones
                // it reaches through operands.
                if let Some(&root) = bnames.get(instruction).filter(|&&r| matched_here.insert(r)) {
                    let mut stack = vec![root];
                    while let Some(id) = stack.pop() {
                        let i = bcomp.instr(id);
                        self.matched
                            .entry(key(&i.name))
                            .or_insert_with(|| mark(instruction, detail));
                        for &op in i.operands() {
                            let removed = !anames.contains_key(&*bcomp.instr(op).name);
                            if removed && matched_here.insert(op) {
                                stack.push(op);
                            }
                        }
                    }
                }
                // Made: the rewritten one if it kept its name, and the new
                // instructions reached from it or from the users the
                // matched one had, through new instructions.
                let new = |id| !bnames.contains_key(&*acomp.instr(id).name);
                let mut seeds = Vec::new();
                if let Some(&kept) = anames.get(instruction) {
                    seeds.push(kept);
                }
                if let Some(&root) = bnames.get(instruction) {
                    for &u in bcomp.instr(root).users() {
                        if let Some(&au) = anames.get(&*bcomp.instr(u).name) {
                            seeds.extend(acomp.instr(au).operands().iter().filter(|&&o| new(o)));
                        }
                    }
                    if bcomp.root_opt() == Some(root) {
                        seeds.extend(acomp.root_opt().filter(|&r| new(r)));
                    }
                }
                let mut seen: FxSet<_> = seeds.iter().copied().collect();
                while let Some(id) = seeds.pop() {
                    let i = acomp.instr(id);
                    if !made_here.insert(&i.name) {
                        continue;
                    }
                    self.made.insert(key(&i.name), mark(instruction, detail));
                    for &n in i.operands().iter().chain(i.users()) {
                        if new(n) && seen.insert(n) {
                            seeds.push(n);
                        }
                    }
                }
            }
            // New instructions no rewrite reaches: the computation's first.
            let (instruction, detail) = rewrites[0];
            for (_, i) in acomp.instructions() {
                if !bnames.contains_key(&*i.name) && !made_here.contains(&*i.name) {
                    self.made.insert(key(&i.name), mark(instruction, detail));
                }
            }
        }
    }

    /// The passes of the run, in order.
    pub fn pass_names(&self) -> &[&'static str] {
        &self.passes
    }

    /// What each pass matched, in the module it ran on.
    pub fn matched(&self) -> &Marks {
        &self.matched
    }

    /// What each pass made or rewrote, in the module it left.
    pub fn made(&self) -> &Marks {
        &self.made
    }

    fn colour(&self, pass: &str) -> &'static str {
        let k = self.passes.iter().position(|p| *p == pass).unwrap_or(0);
        PASS_COLOURS[k % PASS_COLOURS.len()]
    }
}

/// The graph ids: the module's name, before and after.
fn graph_ids(input: &Module, output: &Module) -> (String, String) {
    let name = |m: &Module| {
        let n = m.name.to_string();
        if n.is_empty() {
            "module".to_string()
        } else {
            n
        }
    };
    (
        format!("{} (before)", name(input)),
        format!("{} (after)", name(output)),
    )
}

fn string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

/// Writes the graph collection: `input` before the passes, `output` after.
pub fn write_graph(
    input: &Module,
    output: &Module,
    marks: &GraphMarks,
    out: &mut dyn Write,
) -> io::Result<()> {
    let (before, after) = graph_ids(input, output);
    let label = if input.name.is_empty() {
        "module".to_string()
    } else {
        input.name.to_string()
    };
    write!(out, "{{\"label\":{},\"graphs\":[", string(&label))?;
    graph(input, &before, &marks.matched, "matched", marks, out)?;
    out.write_all(b",\n")?;
    graph(output, &after, &marks.made, "made", marks, out)?;
    out.write_all(b"]}\n")
}

/// How a computation is drawn.
enum Placement {
    /// Inside the node that calls it: `role` names it in the caller.
    Nested {
        caller: (CompId, crate::ir::InstrId),
        role: String,
    },
    /// Only a scalar body: an attribute of its callers, no nodes.
    Attribute,
    /// Called by nothing and not the entry (a body a pass replaced): dead,
    /// not drawn.
    Dead,
}

/// Whether `opcode` calls scalar bodies (reducers, comparators, scatter
/// combiners): drawn as their caller's attributes.
fn calls_scalar_body(opcode: Opcode) -> bool {
    matches!(
        opcode,
        Opcode::Reduce
            | Opcode::ReduceWindow
            | Opcode::Scatter
            | Opcode::SelectAndScatter
            | Opcode::Sort
            | Opcode::Map
            | Opcode::AllReduce
            | Opcode::AllReduceStart
            | Opcode::ReduceScatter
    )
}

/// Every computation's placement, from its callers.
fn placements(module: &Module) -> FxMap<CompId, Placement> {
    let mut out: FxMap<CompId, Placement> = FxMap::default();
    for (cid, comp) in module.computations() {
        for (iid, i) in comp.instructions() {
            let scalar = calls_scalar_body(i.opcode);
            let mut branch = 0;
            for a in i.attrs.iter() {
                let called: &[CompId] = match &a.value {
                    AttrValue::Comp(c) => std::slice::from_ref(c),
                    AttrValue::Comps(cs) => cs,
                    _ => continue,
                };
                for &c in called {
                    let role = match (&*a.key, called.len()) {
                        ("branch_computations", _) => {
                            branch += 1;
                            format!("{} branch {}", i.name, branch - 1)
                        }
                        ("to_apply", _) => i.name.to_string(),
                        (key, _) => format!("{} {}", i.name, key.trim_end_matches("_computation")),
                    };
                    match out.get(&c) {
                        Some(Placement::Nested { .. }) => {}
                        _ if scalar => {
                            out.entry(c).or_insert(Placement::Attribute);
                        }
                        _ => {
                            out.insert(
                                c,
                                Placement::Nested {
                                    caller: (cid, iid),
                                    role,
                                },
                            );
                        }
                    }
                }
            }
        }
    }
    if let Some(entry) = module.entry_opt() {
        for (cid, _) in module.computations() {
            if cid != entry {
                out.entry(cid).or_insert(Placement::Dead);
            }
        }
    }
    out
}

/// `op_name` split at its top-level `/`s (a `/` inside parentheses stays).
fn op_path(op_name: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (k, ch) in op_name.char_indices() {
        match ch {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            '/' if depth <= 0 => {
                parts.push(&op_name[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    parts.push(&op_name[start..]);
    parts.retain(|p| !p.is_empty());
    parts
}

fn op_name(i: &Instruction) -> Option<&str> {
    match i.attr("metadata") {
        Some(AttrValue::Metadata(md)) if !md.op_name.is_empty() => Some(&md.op_name),
        _ => None,
    }
}

/// Whether the instruction is named by torch-xla's own scope rather than
/// the prefix the user set: torch-xla builds some scalar adds and
/// multiplies in a scope that wins over the prefix, `aten__add.6/aten__add`
/// (the op, a dot and a counter, then the op). That scope is not a layer.
fn torch_scope(i: &Instruction) -> bool {
    let Some(AttrValue::Metadata(md)) = i.attr("metadata") else {
        return false;
    };
    let Some((scope, op)) = md.op_name.split_once('/') else {
        return false;
    };
    !op.is_empty()
        && op == &*md.op_type
        && scope
            .strip_prefix(op)
            .and_then(|rest| rest.strip_prefix('.'))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The first `op_name` component every named op of the entry shares
/// (JAX's `jit(f)`), dropped from the namespaces: else the first view is
/// one box. (The ops of called computations are named from their call.)
fn shared_head(module: &Module) -> Option<String> {
    let entry = module.comp(module.entry_opt()?);
    let mut head: Option<&str> = None;
    for (_, i) in entry.instructions() {
        let Some(name) = op_name(i) else { continue };
        if torch_scope(i) {
            continue;
        }
        let path = op_path(name);
        // An op with no layer around it has nothing to drop.
        if path.len() < 2 {
            continue;
        }
        match head {
            None => head = Some(path[0]),
            Some(h) if h == path[0] => {}
            Some(_) => return None,
        }
    }
    head.map(str::to_string)
}

/// The namespaces of a module's nodes, worked out once per computation.
struct Namespaces<'m> {
    module: &'m Module,
    placements: FxMap<CompId, Placement>,
    head: Option<String>,
    /// Each nested computation's layer, and the caller's `op_name` path
    /// its instructions' own paths repeat.
    bases: FxMap<CompId, (String, Vec<String>)>,
    /// Per computation, the layers of its torch-xla-scoped instructions.
    borrowed: FxMap<CompId, FxMap<InstrId, Vec<String>>>,
}

impl<'m> Namespaces<'m> {
    fn new(module: &'m Module) -> Self {
        Namespaces {
            module,
            placements: placements(module),
            head: shared_head(module),
            bases: FxMap::default(),
            borrowed: FxMap::default(),
        }
    }

    /// The layers of a computation's torch-xla-scoped instructions: each
    /// group of them with one `op_name`, connected through operands and
    /// users, is in the deepest layer its other neighbours share (the
    /// residual add between `layers.0/self_attn` and `layers.0/norm1` is
    /// in `layers.0`).
    fn borrowed_paths(&self, comp: CompId) -> FxMap<InstrId, Vec<String>> {
        let c = self.module.comp(comp);
        let mut out = FxMap::default();
        let mut seen = FxSet::default();
        for (id, i) in c.instructions() {
            if !torch_scope(i) || !seen.insert(id) {
                continue;
            }
            let (mut group, mut k) = (vec![id], 0);
            let mut shared: Option<Vec<String>> = None;
            while k < group.len() {
                let g = c.instr(group[k]);
                k += 1;
                for &n in g.operands().iter().chain(g.users()) {
                    let ni = c.instr(n);
                    if torch_scope(ni) {
                        if op_name(ni) == op_name(i) && seen.insert(n) {
                            group.push(n);
                        }
                        continue;
                    }
                    let path = self.own_path(ni);
                    if path.is_empty() {
                        continue;
                    }
                    shared = Some(match shared {
                        None => path,
                        Some(s) => s
                            .into_iter()
                            .zip(path)
                            .take_while(|(a, b)| a == b)
                            .map(|(a, _)| a)
                            .collect(),
                    });
                }
            }
            let shared = shared.unwrap_or_default();
            for g in group {
                out.insert(g, shared.clone());
            }
        }
        out
    }

    /// The instruction's layers: its own, or for a torch-xla-scoped one
    /// its neighbours'.
    fn path(&mut self, comp: CompId, id: InstrId) -> Vec<String> {
        let i = self.module.comp(comp).instr(id);
        if !torch_scope(i) {
            return self.own_path(i);
        }
        if !self.borrowed.contains_key(&comp) {
            let paths = self.borrowed_paths(comp);
            self.borrowed.insert(comp, paths);
        }
        self.borrowed[&comp].get(&id).cloned().unwrap_or_default()
    }

    /// The instruction's layers from its `op_name`, without the shared head.
    fn own_path(&self, i: &Instruction) -> Vec<String> {
        let Some(name) = op_name(i) else {
            return Vec::new();
        };
        let mut path = op_path(name);
        path.pop();
        if self
            .head
            .as_deref()
            .is_some_and(|h| path.first() == Some(&h))
        {
            path.remove(0);
        }
        path.into_iter().map(str::to_string).collect()
    }

    fn base(&mut self, comp: CompId, depth: usize) -> (String, Vec<String>) {
        if let Some(b) = self.bases.get(&comp) {
            return b.clone();
        }
        let module = self.module;
        let base = match self.placements.get(&comp) {
            Some(Placement::Nested { caller, role }) if depth < 64 => {
                let (cc, ci) = *caller;
                let role = role.clone();
                let caller = module.comp(cc).instr(ci);
                let ns = self.namespace(cc, ci, depth + 1);
                let mut strip = self.own_path(caller);
                // The caller's own op (`while`) is in its callees' paths.
                if let Some(name) = op_name(caller) {
                    if let Some(last) = op_path(name).last() {
                        strip.push(last.to_string());
                    }
                }
                let layer = if ns.is_empty() {
                    role
                } else {
                    format!("{ns}/{role}")
                };
                (layer, strip)
            }
            _ => (String::new(), Vec::new()),
        };
        self.bases.insert(comp, base.clone());
        base
    }

    fn namespace(&mut self, comp: CompId, id: InstrId, depth: usize) -> String {
        let (base, strip) = self.base(comp, depth);
        let mut path = self.path(comp, id);
        if !strip.is_empty() && path.starts_with(&strip) {
            path.drain(..strip.len());
        }
        let mut parts: Vec<String> = Vec::new();
        if !base.is_empty() {
            parts.push(base);
        }
        // A `/` inside a layer's name (in parentheses) would split it.
        parts.extend(path.iter().map(|p| p.replace('/', "∕")));
        parts.join("/")
    }
}

/// One graph: every instruction a node, but those of scalar bodies.
fn graph(
    module: &Module,
    id: &str,
    marks: &Marks,
    role: &str,
    all: &GraphMarks,
    out: &mut dyn Write,
) -> io::Result<()> {
    write!(out, "{{\"id\":{},\"nodes\":[", string(id))?;
    let mut spaces = Namespaces::new(module);
    // The nested computations' extra edges: a parameter fed by its caller's
    // operand, a caller fed by the callee's root.
    let mut extra: FxMap<(CompId, crate::ir::InstrId), Vec<(String, String)>> = FxMap::default();
    for (cid, comp) in module.computations() {
        if let Some(Placement::Nested {
            caller: (cc, ci),
            role,
        }) = spaces.placements.get(&cid)
        {
            let caller = module.comp(*cc).instr(*ci);
            let ops = caller.operands();
            for p in comp.parameters() {
                let n = comp.instr(p).parameter_number().unwrap_or(0) as usize;
                let source = match caller.opcode {
                    Opcode::While => ops.first(),
                    // Branch k takes operand k + 1 (`true`: 1, `false`: 2).
                    Opcode::Conditional => {
                        let slot = if role.ends_with(" false") {
                            2
                        } else {
                            role.rsplit(' ')
                                .next()
                                .and_then(|b| b.parse::<usize>().ok())
                                .map_or(1, |b| b + 1)
                        };
                        ops.get(slot)
                    }
                    _ => ops.get(n),
                };
                if let Some(&s) = source {
                    extra
                        .entry((cid, p))
                        .or_default()
                        .push((module.comp(*cc).instr(s).name.to_string(), "0".to_string()));
                }
            }
            if let Some(r) = comp.root_opt() {
                extra
                    .entry((*cc, *ci))
                    .or_default()
                    .push((comp.instr(r).name.to_string(), role.clone()));
            }
        }
    }
    let mut first = true;
    for (cid, comp) in module.computations() {
        if matches!(
            spaces.placements.get(&cid),
            Some(Placement::Attribute | Placement::Dead)
        ) {
            continue;
        }
        for (iid, instr) in comp.instructions() {
            if !first {
                out.write_all(b",\n")?;
            }
            first = false;
            let namespace = spaces.namespace(cid, iid, 0);
            let mark = marks.get(&(comp.name.to_string(), instr.name.to_string()));
            let edges = extra.get(&(cid, iid)).map(Vec::as_slice).unwrap_or(&[]);
            node(
                out,
                module,
                cid,
                instr,
                &namespace,
                mark.map(|m| (m, role, all.colour(m.pass))),
                edges,
                &spaces,
            )?;
        }
    }
    out.write_all(b"]}")
}

/// A scalar body as text: its instructions, one a line, without metadata.
fn body_text(module: &Module, comp: CompId) -> String {
    let c = module.comp(comp);
    let mut lines = vec![format!("{} {{", c.name)];
    let count = c.instructions().count();
    for (id, _) in c.instructions().take(BODY_TEXT_LINES) {
        let mut line = crate::text::printer::print_instruction(module, comp, id);
        if let Some(k) = line.find(", metadata={") {
            line.truncate(k);
        }
        lines.push(format!("  {line}"));
    }
    if count > BODY_TEXT_LINES {
        lines.push(format!("  … {} more", count - BODY_TEXT_LINES));
    }
    lines.push("}".to_string());
    lines.join("\n")
}

#[allow(clippy::too_many_arguments)]
fn node(
    out: &mut dyn Write,
    module: &Module,
    cid: CompId,
    instr: &Instruction,
    namespace: &str,
    mark: Option<(&Mark, &str, &str)>,
    extra_edges: &[(String, String)],
    spaces: &Namespaces,
) -> io::Result<()> {
    let comp = module.comp(cid);
    let label = match instr.custom_call_target() {
        Some(t) => t.to_string(),
        None => instr.opcode.name().to_string(),
    };
    let shape = instr.shape.to_text(false);
    let mut attrs: Vec<(String, String)> = vec![
        ("name".into(), instr.name.to_string()),
        ("opcode".into(), instr.opcode.name().to_string()),
        ("shape".into(), shape.clone()),
        ("computation".into(), comp.name.to_string()),
    ];
    if let Some(AttrValue::Metadata(md)) = instr.attr("metadata") {
        if !md.op_name.is_empty() {
            attrs.push(("op_name".into(), md.op_name.to_string()));
        }
        if !md.source_file.is_empty() {
            attrs.push(("source_file".into(), md.source_file.to_string()));
            attrs.push(("source_line".into(), md.source_line.to_string()));
        }
    }
    // Called computations: a scalar body as its text, others by name.
    for a in instr.attrs.iter() {
        let called: &[CompId] = match &a.value {
            AttrValue::Comp(c) => std::slice::from_ref(c),
            AttrValue::Comps(cs) => cs,
            _ => continue,
        };
        let text: Vec<String> = called
            .iter()
            .map(|&c| match spaces.placements.get(&c) {
                Some(Placement::Attribute) => body_text(module, c),
                _ => module.comp(c).name.to_string(),
            })
            .collect();
        attrs.push((a.key.to_string(), text.join("\n")));
    }
    if let Some((m, role, _)) = mark {
        attrs.push(("hlo_opt_pass".into(), m.pass.to_string()));
        attrs.push(("hlo_opt_role".into(), role.to_string()));
        attrs.push(("hlo_opt_reason".into(), m.reason.clone()));
    }
    write!(
        out,
        "{{\"id\":{},\"label\":{},\"namespace\":{},\"attrs\":[",
        string(&instr.name),
        string(&label),
        string(namespace)
    )?;
    for (k, (key, value)) in attrs.iter().enumerate() {
        let sep = if k == 0 { "" } else { "," };
        write!(
            out,
            "{sep}{{\"key\":{},\"value\":{}}}",
            string(key),
            string(value)
        )?;
    }
    out.write_all(b"],\"incomingEdges\":[")?;
    let mut k = 0;
    for &op in instr.operands() {
        let sep = if k == 0 { "" } else { "," };
        write!(
            out,
            "{sep}{{\"sourceNodeId\":{},\"sourceNodeOutputId\":\"0\",\"targetNodeInputId\":\"{k}\"}}",
            string(&comp.instr(op).name)
        )?;
        k += 1;
    }
    for (source, input) in extra_edges {
        let sep = if k == 0 { "" } else { "," };
        write!(
            out,
            "{sep}{{\"sourceNodeId\":{},\"sourceNodeOutputId\":\"0\",\"targetNodeInputId\":{}}}",
            string(source),
            string(input)
        )?;
        k += 1;
    }
    write!(
        out,
        "],\"outputsMetadata\":[{{\"id\":\"0\",\"attrs\":[{{\"key\":\"shape\",\"value\":{}}}]}}]",
        string(&shape)
    )?;
    if let Some((_, _, colour)) = mark {
        write!(out, ",\"style\":{{\"backgroundColor\":\"{colour}\"}}")?;
    }
    out.write_all(b"}")
}

/// Writes the node-data overlay: in the before graph the nodes each pass
/// matched, in the after graph those it made, valued by the pass's name
/// and coloured by pass.
pub fn write_overlay(
    input: &Module,
    output: &Module,
    marks: &GraphMarks,
    out: &mut dyn Write,
) -> io::Result<()> {
    let (before, after) = graph_ids(input, output);
    out.write_all(b"{")?;
    overlay_side(input, &before, &marks.matched, marks, out)?;
    out.write_all(b",\n")?;
    overlay_side(output, &after, &marks.made, marks, out)?;
    out.write_all(b"}\n")
}

fn overlay_side(
    module: &Module,
    id: &str,
    marks: &Marks,
    all: &GraphMarks,
    out: &mut dyn Write,
) -> io::Result<()> {
    write!(
        out,
        "{}:{{\"name\":\"hlo-opt passes\",\"showExpandedSummaryOnGroupNode\":true,\"results\":{{",
        string(id)
    )?;
    // Drawn nodes only: what a later pass replaced is gone from the module.
    let spaces = placements(module);
    let mut rows: Vec<(&str, &Mark)> = Vec::new();
    for (cid, comp) in module.computations() {
        if matches!(
            spaces.get(&cid),
            Some(Placement::Attribute | Placement::Dead)
        ) {
            continue;
        }
        for (_, i) in comp.instructions() {
            if let Some(m) = marks.get(&(comp.name.to_string(), i.name.to_string())) {
                rows.push((&i.name, m));
            }
        }
    }
    rows.sort_by(|a, b| a.0.cmp(b.0));
    for (k, (instr, mark)) in rows.iter().enumerate() {
        let sep = if k == 0 { "" } else { "," };
        write!(
            out,
            "{sep}\n{}:{{\"value\":{},\"bgColor\":\"{}\"}}",
            string(instr),
            string(mark.pass),
            all.colour(mark.pass)
        )?;
    }
    out.write_all(b"}}")
}
