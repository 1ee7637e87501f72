//! A layered (Sugiyama-style) layout of a small DAG: layers by longest
//! path with sources pulled down next to their first user and a width
//! bound per layer, long edges split by dummy nodes, crossings reduced by
//! barycentre sweeps, and each layer's x placed as close to its
//! neighbours' as order and spacing allow (isotonic regression).
//!
//! Ours rather than a crate's: see docs/dependencies.md.

/// Space between two boxes of a layer, and between layers.
const GAP_X: f64 = 20.0;
const GAP_Y: f64 = 40.0;
/// The width a long edge takes where it passes through a layer.
const DUMMY_W: f64 = 6.0;
/// Barycentre sweeps (down and up) tried at most.
const SWEEPS: usize = 12;

pub(super) struct Layout {
    /// Each node's left x and top y.
    pub(super) left: Vec<f64>,
    pub(super) top: Vec<f64>,
    /// The extent of the drawing (boxes and edges), from (0, 0).
    pub(super) width: f64,
    pub(super) height: f64,
    /// Per edge (in the order given): the points it passes, from the
    /// operand's bottom to the user's top.
    pub(super) routes: Vec<Vec<(f64, f64)>>,
}

/// Lays out nodes of `widths` and height `node_h` with `edges` (operand,
/// user; a DAG), each layer at most `max_layer_w` wide where it can be.
pub(super) fn layout(
    widths: &[f64],
    node_h: f64,
    edges: &[(usize, usize)],
    max_layer_w: f64,
) -> Layout {
    let n = widths.len();
    let layer = layers(widths, edges, max_layer_w);
    // Nodes and dummies: a dummy per layer a long edge crosses.
    let mut w: Vec<f64> = widths.to_vec();
    let mut lay = layer.clone();
    let mut links: Vec<(usize, usize)> = Vec::new();
    let mut chains: Vec<Vec<usize>> = Vec::with_capacity(edges.len());
    for &(a, b) in edges {
        let mut chain = vec![a];
        for l in layer[a] + 1..layer[b] {
            w.push(DUMMY_W);
            lay.push(l);
            chain.push(w.len() - 1);
        }
        chain.push(b);
        for pair in chain.windows(2) {
            links.push((pair[0], pair[1]));
        }
        chains.push(chain);
    }
    let total = w.len();
    let depth = lay.iter().max().map_or(0, |m| m + 1);
    let mut order: Vec<Vec<usize>> = vec![Vec::new(); depth];
    for v in 0..total {
        order[lay[v]].push(v);
    }
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); total];
    let mut succs: Vec<Vec<usize>> = vec![Vec::new(); total];
    for &(a, b) in &links {
        succs[a].push(b);
        preds[b].push(a);
    }
    reduce_crossings(&mut order, &preds, &succs);
    let x = place(&order, &w, &preds, &succs, n);
    let top: Vec<f64> = lay.iter().map(|&l| l as f64 * (node_h + GAP_Y)).collect();
    let min_left = (0..total)
        .map(|v| x[v] - w[v] / 2.0)
        .fold(f64::MAX, f64::min);
    let max_right = (0..total)
        .map(|v| x[v] + w[v] / 2.0)
        .fold(f64::MIN, f64::max);
    let shift = if total == 0 { 0.0 } else { -min_left };
    let cx = |v: usize| x[v] + shift;
    // An edge enters its user at a port along its top, in the order of
    // the operands' x, so edges into one node do not cross there.
    let mut port_x: Vec<f64> = vec![0.0; chains.len()];
    let mut ins_of: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (e, chain) in chains.iter().enumerate() {
        ins_of[chain[chain.len() - 1]].push(e);
    }
    // The node an edge comes into its user from (an operand or a dummy).
    let from = |e: usize| chains[e][chains[e].len() - 2];
    for (v, ins) in ins_of.iter_mut().enumerate() {
        ins.sort_by(|&e, &f| cx(from(e)).total_cmp(&cx(from(f))));
        let k = ins.len() as f64;
        let spread = (w[v] - 16.0).max(0.0);
        for (j, &e) in ins.iter().enumerate() {
            port_x[e] = cx(v) - spread / 2.0 + spread * (j as f64 + 1.0) / (k + 1.0);
        }
    }
    let routes = chains
        .iter()
        .enumerate()
        .map(|(e, chain)| {
            let mut pts = vec![(cx(chain[0]), top[chain[0]] + node_h)];
            for &d in &chain[1..chain.len() - 1] {
                pts.push((cx(d), top[d]));
                pts.push((cx(d), top[d] + node_h));
            }
            pts.push((port_x[e], top[*chain.last().unwrap()]));
            pts
        })
        .collect();
    Layout {
        left: (0..n).map(|v| cx(v) - w[v] / 2.0).collect(),
        top: top[..n].to_vec(),
        width: if total == 0 {
            0.0
        } else {
            max_right - min_left
        },
        height: if depth == 0 {
            0.0
        } else {
            depth as f64 * (node_h + GAP_Y) - GAP_Y
        },
        routes,
    }
}

/// Each node's layer: longest path from the sources; then every node
/// pulled down to just above its nearest user (so an operand sits by
/// what uses it, not at the top); then, in that order, a node that would
/// overfill its layer goes to the next, its users after it.
fn layers(widths: &[f64], edges: &[(usize, usize)], max_layer_w: f64) -> Vec<usize> {
    let n = widths.len();
    let mut layer = vec![0usize; n];
    // The nodes are a DAG and few: relaxing n times is enough.
    for _ in 0..n {
        let mut moved = false;
        for &(a, b) in edges {
            if layer[b] < layer[a] + 1 {
                layer[b] = layer[a] + 1;
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
    let mut by_layer: Vec<usize> = (0..n).collect();
    by_layer.sort_by_key(|&v| std::cmp::Reverse(layer[v]));
    for &v in &by_layer {
        let nearest_user = edges.iter().filter(|e| e.0 == v).map(|e| layer[e.1]).min();
        if let Some(u) = nearest_user {
            layer[v] = layer[v].max(u.saturating_sub(1));
        }
    }
    // The width bound, in layer order: operands, in a lower layer than
    // their users, are placed first.
    by_layer.reverse();
    by_layer.sort_by_key(|&v| layer[v]);
    let mut placed = vec![usize::MAX; n];
    let mut used: Vec<f64> = Vec::new();
    for &v in &by_layer {
        let mut l = layer[v];
        for e in edges.iter().filter(|e| e.1 == v) {
            if placed[e.0] != usize::MAX {
                l = l.max(placed[e.0] + 1);
            }
        }
        loop {
            if used.len() <= l {
                used.resize(l + 1, 0.0);
            }
            if used[l] == 0.0 || used[l] + GAP_X + widths[v] <= max_layer_w {
                break;
            }
            l += 1;
        }
        used[l] += if used[l] == 0.0 { 0.0 } else { GAP_X } + widths[v];
        placed[v] = l;
    }
    placed
}

/// Orders each layer to reduce edge crossings: barycentre sweeps down
/// (by operands) and up (by users), keeping the best order seen.
fn reduce_crossings(order: &mut [Vec<usize>], preds: &[Vec<usize>], succs: &[Vec<usize>]) {
    let total = preds.len();
    let mut pos = vec![0f64; total];
    let set_pos = |order: &[Vec<usize>], pos: &mut Vec<f64>| {
        for l in order {
            for (p, &v) in l.iter().enumerate() {
                pos[v] = p as f64;
            }
        }
    };
    set_pos(order, &mut pos);
    let mut best = order.to_vec();
    let mut best_crossings = crossings(order, succs, &pos);
    for sweep in 0..SWEEPS {
        let down = sweep % 2 == 0;
        let layers: Vec<usize> = if down {
            (1..order.len()).collect()
        } else {
            (0..order.len().saturating_sub(1)).rev().collect()
        };
        for l in layers {
            let keys: Vec<(usize, f64)> = order[l]
                .iter()
                .map(|&v| {
                    let nb = if down { &preds[v] } else { &succs[v] };
                    let key = if nb.is_empty() {
                        pos[v]
                    } else {
                        nb.iter().map(|&u| pos[u]).sum::<f64>() / nb.len() as f64
                    };
                    (v, key)
                })
                .collect();
            let mut sorted = keys;
            sorted.sort_by(|a, b| a.1.total_cmp(&b.1));
            order[l] = sorted.into_iter().map(|(v, _)| v).collect();
            for (p, &v) in order[l].iter().enumerate() {
                pos[v] = p as f64;
            }
        }
        let c = crossings(order, succs, &pos);
        if c < best_crossings {
            best_crossings = c;
            best = order.to_vec();
        }
        if best_crossings == 0 {
            break;
        }
    }
    order.clone_from_slice(&best);
}

/// The edge crossings between adjacent layers of `order`.
pub(super) fn crossings(order: &[Vec<usize>], succs: &[Vec<usize>], pos: &[f64]) -> usize {
    let mut count = 0;
    for l in order {
        let mut ends: Vec<(f64, f64)> = Vec::new();
        for &v in l {
            for &u in &succs[v] {
                ends.push((pos[v], pos[u]));
            }
        }
        for i in 0..ends.len() {
            for j in i + 1..ends.len() {
                let (a, b) = (ends[i], ends[j]);
                if (a.0 - b.0) * (a.1 - b.1) < 0.0 {
                    count += 1;
                }
            }
        }
    }
    count
}

/// Each node's centre x: a few sweeps that move each layer toward the
/// mean x of its neighbours (dummies weigh more, to keep long edges
/// straight), keeping the layer's order and spacing.
fn place(
    order: &[Vec<usize>],
    w: &[f64],
    preds: &[Vec<usize>],
    succs: &[Vec<usize>],
    nodes: usize,
) -> Vec<f64> {
    let total = w.len();
    let mut x = vec![0f64; total];
    for l in order {
        let mut at = 0.0;
        for &v in l {
            x[v] = at + w[v] / 2.0;
            at += w[v] + GAP_X;
        }
    }
    let is_dummy = |v: usize| v >= nodes;
    for sweep in 0..8 {
        let down = sweep % 2 == 0;
        let layers: Vec<usize> = if down {
            (0..order.len()).collect()
        } else {
            (0..order.len()).rev().collect()
        };
        for l in layers {
            let want: Vec<f64> = order[l]
                .iter()
                .map(|&v| {
                    let mut sum = 0.0;
                    let mut weight = 0.0;
                    for &u in preds[v].iter().chain(&succs[v]) {
                        let k = if is_dummy(u) || is_dummy(v) { 4.0 } else { 1.0 };
                        sum += k * x[u];
                        weight += k;
                    }
                    if weight == 0.0 {
                        x[v]
                    } else {
                        sum / weight
                    }
                })
                .collect();
            let placed = spaced(&want, &order[l].iter().map(|&v| w[v]).collect::<Vec<_>>());
            for (&v, p) in order[l].iter().zip(placed) {
                x[v] = p;
            }
        }
    }
    x
}

/// The centres closest (least squares) to `want` that keep the boxes of
/// `w` in order, `GAP_X` apart: with offsets taken out, an isotonic
/// regression, solved by pooling adjacent violators.
fn spaced(want: &[f64], w: &[f64]) -> Vec<f64> {
    let mut offset = Vec::with_capacity(w.len());
    let mut at = 0.0;
    for (k, &wk) in w.iter().enumerate() {
        if k > 0 {
            at += w[k - 1] / 2.0 + GAP_X + wk / 2.0;
        }
        offset.push(at);
    }
    // Blocks of (mean, count).
    let mut blocks: Vec<(f64, usize)> = Vec::new();
    for (k, &d) in want.iter().enumerate() {
        blocks.push((d - offset[k], 1));
        while blocks.len() > 1 {
            let (m2, c2) = blocks[blocks.len() - 1];
            let (m1, c1) = blocks[blocks.len() - 2];
            if m1 <= m2 {
                break;
            }
            blocks.pop();
            let last = blocks.len() - 1;
            blocks[last] = (
                (m1 * c1 as f64 + m2 * c2 as f64) / (c1 + c2) as f64,
                c1 + c2,
            );
        }
    }
    let mut out = Vec::with_capacity(want.len());
    for (m, c) in blocks {
        for _ in 0..c {
            out.push(m + offset[out.len()]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_edge_passes_beside_the_chain_not_through_it() {
        // 0 -> 1 -> 2 -> 3 and 0 -> 3: the long edge gets two bends.
        let l = layout(&[50.0; 4], 40.0, &[(0, 1), (1, 2), (2, 3), (0, 3)], 1e9);
        assert_eq!(l.routes[3].len(), 2 + 2 * 2);
        // The bends are beside node 1's and 2's boxes.
        for (k, v) in [(1, 1), (3, 2)] {
            let (x, _) = l.routes[3][k];
            assert!(x < l.left[v] || x > l.left[v] + 50.0, "{x} in {:?}", l.left);
        }
    }

    #[test]
    fn barycentre_sweeps_untangle_a_crossed_pair() {
        // Two chains drawn crossed at first: 0 -> 3, 1 -> 2.
        let edges = [(0, 3), (1, 2), (2, 4), (3, 5)];
        let l = layout(&[50.0; 6], 40.0, &edges, 1e9);
        let x = |v: usize| l.left[v];
        assert_eq!(x(0) < x(1), x(3) < x(2));
        assert_eq!(x(3) < x(2), x(5) < x(4));
    }

    #[test]
    fn a_wide_layer_wraps_under_the_bound() {
        // One node with twelve users: they wrap into rows.
        let mut widths = vec![100.0];
        widths.extend([100.0; 12]);
        let edges: Vec<(usize, usize)> = (1..13).map(|u| (0, u)).collect();
        let wide = layout(&widths, 40.0, &edges, 1e9);
        let l = layout(&widths, 40.0, &edges, 500.0);
        assert!(l.width < wide.width * 0.7, "{} {}", l.width, wide.width);
        assert!(l.height > 3.0 * 40.0);
    }

    #[test]
    fn boxes_of_a_layer_keep_their_gap() {
        let x = spaced(&[0.0, 0.0, 0.0], &[10.0, 30.0, 10.0]);
        assert!((x[1] - x[0] - (5.0 + GAP_X + 15.0)).abs() < 1e-9);
        assert!((x[2] - x[1] - (15.0 + GAP_X + 5.0)).abs() < 1e-9);
        // Centred on what they want.
        assert!((x.iter().sum::<f64>()).abs() < 1e-9);
    }
}
