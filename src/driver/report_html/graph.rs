//! A neighbourhood of a computation, laid out in layers (operands above
//! their users) and drawn as SVG.

use super::{layout, source_lines, SourceLine};
use crate::ir::{CompId, InstrId, Module};
use crate::text::printer::print_instruction;
use crate::util::{FxMap, FxSet};
use std::fmt::Write;

/// The HLO lines a folded node lists at most.
const CONTEXT_LIMIT: usize = 32;
/// Above this many nodes, a drawing folds its operands into one node and
/// its users into another.
const FOLD_ABOVE: usize = 36;
const NODE_H: f64 = 56.0;
const MARGIN: f64 = 12.0;
/// A line of text's width per character, a little over a monospace
/// font's advance (0.6 em) at the style's sizes (12px name, 11px others).
const NAME_CHAR_W: f64 = 7.5;
const SUB_CHAR_W: f64 = 6.9;
/// Text inset from each side of its box.
const PAD_X: f64 = 8.0;
/// A shape longer than this is shortened on the box (the tooltip and the
/// HLO listing have it whole).
const SHAPE_CHARS: usize = 48;
/// The widest a drawing may be against its height.
const ASPECT: f64 = 1.9;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Role {
    /// Matched by the pass (and removed or rewritten).
    Matched,
    /// Made by the pass.
    New,
    /// A candidate the pass left alone, and its operands.
    Candidate,
    /// An operand or user around the region.
    Context,
}

impl Role {
    fn class(self) -> &'static str {
        match self {
            Role::Matched => "matched",
            Role::New => "new",
            Role::Candidate => "candidate",
            Role::Context => "context",
        }
    }
}

pub(super) struct Node {
    /// The instruction's name, or what a folded node holds.
    pub(super) name: String,
    /// How many operands or users a folded node stands for (0: none).
    folded: usize,
    pub(super) opcode: String,
    pub(super) shape: String,
    pub(super) role: Role,
    /// Its line of HLO text (a folded node's: theirs, a line each).
    pub(super) text: String,
}

/// Nodes and edges (operand, user), by node index.
pub(super) struct Graph {
    pub(super) computation: String,
    pub(super) nodes: Vec<Node>,
    edges: Vec<(usize, usize)>,
    /// The user's source lines the region came from.
    pub(super) sources: Vec<SourceLine>,
    /// The names of the operands and users around the region.
    context: Vec<String>,
}

impl Graph {
    /// `region` (drawn as `role`) of computation `cid`, with the operands
    /// and users around it.
    pub(super) fn around(module: &Module, cid: CompId, region: &[InstrId], role: Role) -> Graph {
        let comp = module.comp(cid);
        let mut ids: Vec<InstrId> = region.to_vec();
        let mut seen: FxSet<InstrId> = ids.iter().copied().collect();
        for &id in region {
            let i = comp.instr(id);
            for &n in i.operands().iter().chain(i.users()) {
                if seen.insert(n) {
                    ids.push(n);
                }
            }
        }
        let node = |id: InstrId, role: Role| {
            let i = comp.instr(id);
            Node {
                name: i.name.to_string(),
                folded: 0,
                opcode: match i.custom_call_target() {
                    Some(t) => format!("custom-call {t}"),
                    None => i.opcode.name().to_string(),
                },
                shape: i.shape.to_text(false),
                role,
                text: print_instruction(module, cid, id),
            }
        };
        let mut nodes: Vec<Node> = region.iter().map(|&id| node(id, role)).collect();
        let index: FxMap<InstrId, usize> = ids.iter().enumerate().map(|(k, &id)| (id, k)).collect();
        let mut edges = Vec::new();
        let mut edge = |e: (usize, usize)| {
            if !edges.contains(&e) {
                edges.push(e);
            }
        };
        if ids.len() <= FOLD_ABOVE {
            nodes.extend(
                ids[region.len()..]
                    .iter()
                    .map(|&id| node(id, Role::Context)),
            );
            for (k, &id) in ids.iter().enumerate() {
                for op in comp.instr(id).operands() {
                    if let Some(&j) = index.get(op) {
                        edge((j, k));
                    }
                }
            }
        } else {
            // The region's own edges, and its operands and users as one
            // node each: a user is what uses a region node, an operand
            // the rest. Only the edges toward the region's side (an
            // operand's into it, a user's out of it): both would make a
            // cycle.
            let in_region = |id: InstrId| index.get(&id).is_some_and(|&k| k < region.len());
            let (users, operands): (Vec<InstrId>, Vec<InstrId>) = ids[region.len()..]
                .iter()
                .partition(|&&n| comp.instr(n).operands().iter().any(|&o| in_region(o)));
            for (k, &id) in region.iter().enumerate() {
                for op in comp.instr(id).operands() {
                    if in_region(*op) {
                        edge((index[op], k));
                    }
                }
            }
            for (group, word) in [(operands, "operands"), (users, "users")] {
                if group.is_empty() {
                    continue;
                }
                let at = nodes.len();
                let mut text: Vec<String> = group
                    .iter()
                    .take(CONTEXT_LIMIT)
                    .map(|&n| print_instruction(module, cid, n))
                    .collect();
                if group.len() > CONTEXT_LIMIT {
                    text.push(format!("... and {} more", group.len() - CONTEXT_LIMIT));
                }
                nodes.push(Node {
                    name: format!("{} {word}", group.len()),
                    folded: group.len(),
                    opcode: String::new(),
                    shape: String::new(),
                    role: Role::Context,
                    text: text.join("\n"),
                });
                let group: FxSet<InstrId> = group.into_iter().collect();
                for (k, &id) in region.iter().enumerate() {
                    let i = comp.instr(id);
                    if word == "operands" && i.operands().iter().any(|o| group.contains(o)) {
                        edge((at, k));
                    }
                    if word == "users" && i.users().iter().any(|u| group.contains(u)) {
                        edge((k, at));
                    }
                }
            }
        }
        Graph {
            computation: comp.name.to_string(),
            nodes,
            edges,
            sources: source_lines(module, cid, region),
            context: ids[region.len()..]
                .iter()
                .map(|&id| comp.instr(id).name.to_string())
                .collect(),
        }
    }

    /// The names of the operands and users around the region (drawn, or
    /// folded).
    pub(super) fn context_names(&self) -> Vec<&str> {
        self.context.iter().map(|n| &**n).collect()
    }

    /// A node's lines of text: its name, its opcode (or custom-call
    /// target), its shape.
    fn lines(node: &Node) -> [String; 3] {
        if node.folded > 0 {
            return [node.name.clone(), "(folded)".into(), String::new()];
        }
        [
            node.name.clone(),
            node.opcode.clone(),
            cut(&node.shape, SHAPE_CHARS),
        ]
    }

    /// A box wide enough for its lines.
    fn box_width(lines: &[String; 3]) -> f64 {
        let chars = |s: &String| s.chars().count() as f64;
        let text = (chars(&lines[0]) * NAME_CHAR_W)
            .max(chars(&lines[1]) * SUB_CHAR_W)
            .max(chars(&lines[2]) * SUB_CHAR_W);
        (text + 2.0 * PAD_X).max(96.0).ceil()
    }

    /// The drawing; `id` prefixes the anchors of its nodes' HLO lines.
    pub(super) fn svg(&self, id: &str) -> String {
        let lines: Vec<[String; 3]> = self.nodes.iter().map(Self::lines).collect();
        let widths: Vec<f64> = lines.iter().map(Self::box_width).collect();
        let widest = widths.iter().copied().fold(0.0, f64::max);
        // Narrow the layers until the drawing is no wider than ASPECT
        // times its height (or a layer holds one box).
        let mut bound = f64::INFINITY;
        let mut l = layout::layout(&widths, NODE_H, &self.edges, bound);
        for _ in 0..12 {
            let (w, h) = (l.width + 2.0 * MARGIN, l.height + 2.0 * MARGIN);
            if w <= ASPECT * h || bound <= widest {
                break;
            }
            bound = (l.width * 0.8).max(widest);
            l = layout::layout(&widths, NODE_H, &self.edges, bound);
        }
        let w = (l.width + 2.0 * MARGIN).ceil();
        let h = (l.height + 2.0 * MARGIN).ceil();
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="graph" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img"><title>{}</title>"#,
            escape(&self.computation)
        );
        for route in &l.routes {
            let _ = write!(
                s,
                r#"<path class="edge" d="{}" marker-end="url(#arrow)"/>"#,
                path(route)
            );
        }
        for (k, node) in self.nodes.iter().enumerate() {
            let x = MARGIN + l.left[k];
            let y = MARGIN + l.top[k];
            let [name, op, shape] = &lines[k];
            let folded = if node.folded > 0 { " folded" } else { "" };
            let _ = write!(
                s,
                r##"<a href="#{id}-{k}"><g class="node {}{folded}" data-name="{}"><rect x="{x}" y="{y}" width="{}" height="{NODE_H}" rx="5"/><text class="label" x="{}" y="{}">{}</text><text class="sub" x="{}" y="{}">{}</text><text class="sub" x="{}" y="{}">{}</text><title>{}</title></g></a>"##,
                node.role.class(),
                escape(&node.name),
                widths[k],
                x + PAD_X,
                y + 17.0,
                escape(name),
                x + PAD_X,
                y + 33.0,
                escape(op),
                x + PAD_X,
                y + 48.0,
                escape(shape),
                escape(&node.text),
            );
        }
        s.push_str("</svg>");
        s
    }
}

/// An edge's SVG path through `points`: straight where it passes a layer,
/// a curve between layers.
fn path(points: &[(f64, f64)]) -> String {
    let mut d = String::new();
    let p = |(x, y): (f64, f64)| (x + MARGIN, y + MARGIN);
    let (x0, y0) = p(points[0]);
    let _ = write!(d, "M{x0:.1},{y0:.1}");
    // After the start, points come in pairs: (enters a layer, leaves it).
    let mut k = 1;
    let mut from = (x0, y0);
    while k < points.len() {
        let to = p(points[k]);
        let mid = (from.1 + to.1) / 2.0;
        let _ = write!(
            d,
            " C{:.1},{mid:.1} {:.1},{mid:.1} {:.1},{:.1}",
            from.0, to.0, to.0, to.1
        );
        if k + 1 < points.len() {
            // Straight down through the dummy's layer.
            let next = p(points[k + 1]);
            let _ = write!(d, " L{:.1},{:.1}", next.0, next.1);
            from = next;
        }
        k += 2;
    }
    d
}

/// `s` cut to `n` characters, marked.
fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
    t.push('…');
    t
}

/// Text for HTML and SVG.
pub(super) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
