//! A neighbourhood of a computation, laid out in layers (operands above
//! their users) and drawn as SVG.

use crate::ir::{CompId, InstrId, Module};
use crate::text::printer::print_instruction;
use crate::util::{FxMap, FxSet};
use std::fmt::Write;

/// Operands and users drawn around a region at most.
const CONTEXT_LIMIT: usize = 32;
const NODE_W: usize = 200;
const NODE_H: usize = 44;
const GAP_X: usize = 24;
const GAP_Y: usize = 36;
const MARGIN: usize = 12;

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
    pub(super) name: String,
    pub(super) opcode: String,
    pub(super) shape: String,
    pub(super) role: Role,
    /// Its line of HLO text.
    pub(super) text: String,
}

/// Nodes and edges (operand, user), by node index.
pub(super) struct Graph {
    pub(super) computation: String,
    pub(super) nodes: Vec<Node>,
    edges: Vec<(usize, usize)>,
}

impl Graph {
    /// `region` (drawn as `role`) of computation `cid`, with the operands
    /// and users around it.
    pub(super) fn around(module: &Module, cid: CompId, region: &[InstrId], role: Role) -> Graph {
        let comp = module.comp(cid);
        let mut ids: Vec<InstrId> = region.to_vec();
        let mut seen: FxSet<InstrId> = ids.iter().copied().collect();
        let mut context = 0;
        for &id in region {
            let i = comp.instr(id);
            for &n in i.operands().iter().chain(i.users()) {
                if context < CONTEXT_LIMIT && seen.insert(n) {
                    ids.push(n);
                    context += 1;
                }
            }
        }
        let index: FxMap<InstrId, usize> = ids.iter().enumerate().map(|(k, &id)| (id, k)).collect();
        let nodes = ids
            .iter()
            .enumerate()
            .map(|(k, &id)| {
                let i = comp.instr(id);
                Node {
                    name: i.name.to_string(),
                    opcode: match i.custom_call_target() {
                        Some(t) => format!("custom-call {t}"),
                        None => i.opcode.name().to_string(),
                    },
                    shape: i.shape.to_text(false),
                    role: if k < region.len() {
                        role
                    } else {
                        Role::Context
                    },
                    text: print_instruction(module, cid, id),
                }
            })
            .collect();
        let mut edges = Vec::new();
        for (k, &id) in ids.iter().enumerate() {
            for op in comp.instr(id).operands() {
                if let Some(&j) = index.get(op) {
                    if !edges.contains(&(j, k)) {
                        edges.push((j, k));
                    }
                }
            }
        }
        Graph {
            computation: comp.name.to_string(),
            nodes,
            edges,
        }
    }

    /// The names of the operands and users drawn around the region.
    pub(super) fn context_names(&self) -> Vec<&str> {
        self.nodes
            .iter()
            .filter(|n| n.role == Role::Context)
            .map(|n| &*n.name)
            .collect()
    }

    /// Each node's layer (longest path from the graph's sources) and its
    /// place in the layer (by the mean place of its operands, once down).
    fn layout(&self) -> Vec<(usize, usize)> {
        let n = self.nodes.len();
        let mut layer = vec![0usize; n];
        // Edges go operand -> user, and the nodes are a DAG: relaxing n
        // times is enough, and n is small.
        for _ in 0..n {
            let mut moved = false;
            for &(a, b) in &self.edges {
                if layer[b] < layer[a] + 1 {
                    layer[b] = layer[a] + 1;
                    moved = true;
                }
            }
            if !moved {
                break;
            }
        }
        let depth = layer.iter().max().map_or(0, |m| m + 1);
        let mut place = vec![0usize; n];
        let mut x_of = vec![0f64; n];
        for l in 0..depth {
            let mut in_layer: Vec<usize> = (0..n).filter(|&k| layer[k] == l).collect();
            let key = |k: usize| {
                let ops: Vec<f64> = self
                    .edges
                    .iter()
                    .filter(|e| e.1 == k)
                    .map(|e| x_of[e.0])
                    .collect();
                if ops.is_empty() {
                    k as f64
                } else {
                    ops.iter().sum::<f64>() / ops.len() as f64
                }
            };
            in_layer.sort_by(|&a, &b| key(a).total_cmp(&key(b)).then(a.cmp(&b)));
            for (p, &k) in in_layer.iter().enumerate() {
                place[k] = p;
                x_of[k] = p as f64;
            }
        }
        (0..n).map(|k| (layer[k], place[k])).collect()
    }

    /// The drawing; `id` prefixes the anchors of its nodes' HLO lines.
    pub(super) fn svg(&self, id: &str) -> String {
        let pos = self.layout();
        let cols = pos.iter().map(|p| p.1 + 1).max().unwrap_or(1);
        let rows = pos.iter().map(|p| p.0 + 1).max().unwrap_or(1);
        let w = 2 * MARGIN + cols * NODE_W + (cols - 1) * GAP_X;
        let h = 2 * MARGIN + rows * NODE_H + (rows - 1) * GAP_Y;
        let xy = |k: usize| {
            let (l, p) = pos[k];
            (MARGIN + p * (NODE_W + GAP_X), MARGIN + l * (NODE_H + GAP_Y))
        };
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="graph" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img"><title>{}</title>"#,
            escape(&self.computation)
        );
        for &(a, b) in &self.edges {
            let (ax, ay) = xy(a);
            let (bx, by) = xy(b);
            let _ = write!(
                s,
                r#"<line class="edge" x1="{}" y1="{}" x2="{}" y2="{}" marker-end="url(#arrow)"/>"#,
                ax + NODE_W / 2,
                ay + NODE_H,
                bx + NODE_W / 2,
                by
            );
        }
        for (k, node) in self.nodes.iter().enumerate() {
            let (x, y) = xy(k);
            let _ = write!(
                s,
                r##"<a href="#{id}-{k}"><g class="node {}" data-name="{}"><rect x="{x}" y="{y}" width="{NODE_W}" height="{NODE_H}" rx="5"/><text class="label" x="{}" y="{}">{}</text><text class="sub" x="{}" y="{}">{}</text><title>{}</title></g></a>"##,
                node.role.class(),
                escape(&node.name),
                x + 8,
                y + 18,
                escape(&cut(&node.name, 26)),
                x + 8,
                y + 35,
                escape(&cut(&format!("{} {}", node.opcode, node.shape), 30)),
                escape(&node.text),
            );
        }
        s.push_str("</svg>");
        s
    }
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
