//! XLA's orders: instructions in post order within a computation, and
//! computations in post order of the call graph.

use super::err;
use super::read_scan::ModuleData;
use super::ProtoError;
use crate::ir::CompId;
use smallvec::SmallVec;

/// XLA's `MakeInstructionPostOrder` over the id-ordered list (mirrors
/// [`Computation::post_order`]).
pub(super) fn post_order<'e>(
    list: &[usize],
    operands: impl Fn(usize) -> &'e [u32],
    controls: impl Fn(usize) -> &'e [u32],
    has_users: &[bool],
) -> Vec<usize> {
    let n = list.len();
    let mut mark = vec![0u8; n];
    let mut order = Vec::with_capacity(n);
    let mut stack = Vec::new();
    for &start in list {
        if has_users[start] || mark[start] != 0 {
            continue;
        }
        stack.push(start);
        while let Some(&cur) = stack.last() {
            match mark[cur] {
                2 => {
                    stack.pop();
                }
                1 => {
                    mark[cur] = 2;
                    order.push(cur);
                    stack.pop();
                }
                _ => {
                    mark[cur] = 1;
                    for &o in operands(cur).iter().rev() {
                        if mark[o as usize] == 0 {
                            stack.push(o as usize);
                        }
                    }
                    for &o in controls(cur).iter().rev() {
                        if mark[o as usize] == 0 {
                            stack.push(o as usize);
                        }
                    }
                }
            }
        }
    }
    order
}

/// XLA's `MakeComputationPostOrder` over the computations sorted by id;
/// fails on a cycle in the call graph. `calls` names the computations by
/// `CompId`, whose index is their position (the module read is fresh).
pub(super) fn computation_order(
    data: &ModuleData,
    calls: &[Vec<SmallVec<[CompId; 2]>>],
    entry: usize,
) -> Result<Vec<usize>, ProtoError> {
    let n = data.comps.len();
    check_no_call_cycle(data, calls)?;
    let mut by_id: Vec<usize> = (0..n).collect();
    by_id.sort_by_key(|&i| data.comps[i].id);
    let mut called = vec![false; n];
    for cs in calls {
        for c in cs.iter().flatten() {
            called[c.index()] = true;
        }
    }
    let mut added = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut add = |c: usize, order: &mut Vec<usize>| {
        if !added[c] {
            added[c] = true;
            order.push(c);
        }
    };
    for &root in &by_id {
        if called[root] {
            continue;
        }
        for c in embedded_computations(calls, root) {
            add(c, &mut order);
        }
        add(root, &mut order);
    }
    // The entry is printed last among... wherever the post order puts it;
    // computations reached only through cycles cannot exist (checked).
    for &i in &by_id {
        add(i, &mut order);
    }
    let _ = entry;
    Ok(order)
}

/// Depth-first with colours: an error naming a computation that calls
/// itself, if one does.
fn check_no_call_cycle(
    data: &ModuleData,
    calls: &[Vec<SmallVec<[CompId; 2]>>],
) -> Result<(), ProtoError> {
    let n = data.comps.len();
    let mut colour = vec![0u8; n];
    for start in 0..n {
        if colour[start] != 0 {
            continue;
        }
        // (computation, its call site, the callee of that site next).
        let mut stack: Vec<(usize, usize, usize)> = vec![(start, 0, 0)];
        colour[start] = 1;
        while let Some(top) = stack.last_mut() {
            let (c, i, j) = *top;
            let next = calls[c].get(i).and_then(|cs| cs.get(j)).map(|c| c.index());
            match next {
                Some(callee) => {
                    top.2 += 1;
                    match colour[callee] {
                        0 => {
                            colour[callee] = 1;
                            stack.push((callee, 0, 0));
                        }
                        1 => {
                            return err(format!(
                                "computation {} calls itself through computation {}",
                                data.comps[callee].name, data.comps[c].name
                            ))
                        }
                        _ => {}
                    }
                }
                None if i < calls[c].len() => {
                    top.1 += 1;
                    top.2 = 0;
                }
                None => {
                    colour[c] = 2;
                    stack.pop();
                }
            }
        }
    }
    Ok(())
}

/// XLA's `MakeEmbeddedComputationsList` of `root`: the computations it
/// calls, directly or not, in post order (visited marked on push).
fn embedded_computations(calls: &[Vec<SmallVec<[CompId; 2]>>], root: usize) -> Vec<usize> {
    let mut visited = vec![false; calls.len()];
    let mut post = Vec::new();
    let mut st: Vec<(usize, usize)> = Vec::new();
    let push_calls =
        |cs: &SmallVec<[CompId; 2]>, st: &mut Vec<(usize, usize)>, visited: &mut [bool]| {
            for c in cs.iter().rev().map(|c| c.index()) {
                if !visited[c] {
                    visited[c] = true;
                    st.push((c, 0));
                }
            }
        };
    for cs in &calls[root] {
        push_calls(cs, &mut st, &mut visited);
        while let Some(top) = st.last_mut() {
            let (c, i) = *top;
            if i == calls[c].len() {
                st.pop();
                post.push(c);
            } else {
                top.1 += 1;
                push_calls(&calls[c][i], &mut st, &mut visited);
            }
        }
    }
    post
}
