//! A computation's structure: a live root, contiguous parameter numbers,
//! operand and user lists that agree; each instruction's checks in order,
//! or first on several threads, where only whether all hold is asked.

use super::names::{check_instruction_name, check_name, SeenNames, NAME_HASHER};
use super::{check_instruction, comp_error, VerifyError};
use crate::ir::{CompId, Computation, InstrId, Instruction, Module};
use crate::util::{par_map, runs_by_weight, FxSet};
use std::hash::BuildHasher;

/// Instructions checked on one thread at the least.
pub(super) const INSTRUCTIONS_PER_THREAD: usize = 50_000;

/// The calls of each computation checked on the fast path, in
/// instruction and attribute order (as [`Module::calls_by_computation`]
/// lists them): read while its instructions are, for the cycle check.
pub(super) type CheckedCalls = Vec<(CompId, Vec<(InstrId, CompId)>)>;

/// Whether every instruction of `checked` holds and their names are
/// unique: the fast path, on several threads for a large module, each
/// over a run of computations in order; if so, the calls of `checked`.
/// `None` says "not known"; the caller then checks in order, on one
/// thread, and so reports the same first fault, with its message,
/// whatever the number of threads.
pub(super) fn instructions_hold(
    module: &Module,
    checked: &[(CompId, &Computation)],
) -> Option<CheckedCalls> {
    let total: usize = checked.iter().map(|(_, c)| c.instruction_count()).sum();
    let threads = crate::util::cores()
        .min(total / INSTRUCTIONS_PER_THREAD)
        .clamp(1, 16);
    // Contiguous runs of about equal instruction counts.
    let runs = runs_by_weight(checked, total.div_ceil(threads).max(1), |(_, c)| {
        c.instruction_count()
    });
    let seen = par_map(
        &runs,
        runs.len() > 1,
        || (),
        |_, _, run| {
            let mut hashes =
                Vec::with_capacity(run.iter().map(|(_, c)| c.instruction_count()).sum());
            let mut links = LinkCheck::default();
            let mut run_calls = Vec::with_capacity(run.len());
            for &(cid, comp) in *run {
                let mut calls = Vec::new();
                let mut checks = Checks::Fast {
                    hashes: &mut hashes,
                    links: &mut links,
                    calls: &mut calls,
                };
                check_computation(module, cid, comp, &mut checks).ok()?;
                run_calls.push((cid, calls));
            }
            hashes.sort_unstable();
            let unique = hashes.windows(2).all(|w| w.first() != w.get(1));
            unique.then_some((hashes, run_calls))
        },
    );
    let seen = seen.into_iter().collect::<Option<Vec<_>>>()?;
    // A name hash in two runs may be a name in two computations.
    let unique = seen.iter().enumerate().all(|(i, (hashes, _))| {
        seen.iter()
            .skip(i + 1)
            .all(|(later, _)| !share_an_element(hashes, later))
    });
    unique.then(|| seen.into_iter().flat_map(|(_, calls)| calls).collect())
}

/// Whether two ascending lists have an element in common.
fn share_an_element(a: &[u64], b: &[u64]) -> bool {
    let (mut i, mut j) = (0, 0);
    // Steps by comparisons rather than branches: which side is smaller is
    // a coin toss for hashes, so a branch on it is mispredicted half the
    // time.
    while let (Some(&x), Some(&y)) = (a.get(i), b.get(j)) {
        if x == y {
            return true;
        }
        i += usize::from(x < y);
        j += usize::from(y < x);
    }
    false
}

/// How a computation's instructions are checked.
pub(super) enum Checks<'a> {
    /// Each instruction whole, in order, so that the first fault is
    /// reported with its message.
    InOrder(&'a mut SeenNames),
    /// Only whether they all hold, at less cost: the names' hashes are
    /// collected for one sort at the end instead of a set each name goes
    /// into, and the operand and user lists are compared all at once
    /// ([`LinkCheck`]) instead of each operand's user list searched.
    Fast {
        hashes: &'a mut Vec<u64>,
        links: &'a mut LinkCheck,
        /// The computation's calls, gathered on the way.
        calls: &'a mut Vec<(InstrId, CompId)>,
    },
}

/// One computation: its root, its instructions, and its parameter numbers
/// (0..n-1).
pub(super) fn check_computation(
    module: &Module,
    cid: CompId,
    comp: &Computation,
    checks: &mut Checks<'_>,
) -> Result<(), VerifyError> {
    match comp.root_opt() {
        None => return Err(comp_error(comp, None, "computation has no root".into())),
        Some(r) if !comp.is_live(r) => {
            return Err(comp_error(
                comp,
                None,
                "root instruction was removed".into(),
            ))
        }
        _ => {}
    }
    let mut param_numbers = FxSet::default();
    for (id, instr) in comp.instructions() {
        match checks {
            Checks::InOrder(names) => {
                check_instruction_name(module, cid, comp, id, instr, names)?;
                check_links(comp, id, instr).map_err(|m| comp_error(comp, Some(id), m))?;
            }
            Checks::Fast { hashes, calls, .. } => {
                check_name(&instr.name, false).map_err(|m| comp_error(comp, Some(id), m))?;
                hashes.push(NAME_HASHER.hash_one(&*instr.name));
                calls.extend(instr.called_computations().map(|callee| (id, callee)));
                // The checks below read the operands; whether they list
                // their users is for `links` to tell.
                let mut links = instr.operands().iter().chain(instr.control_predecessors());
                if links.any(|&op| !comp.is_live(op)) {
                    let m = "an operand or control predecessor is not an instruction of this \
                             computation";
                    return Err(comp_error(comp, Some(id), m.into()));
                }
            }
        }
        check_instruction(module, cid, comp, id, instr, &mut param_numbers)
            .map_err(|m| comp_error(comp, Some(id), m))?;
    }
    if let Checks::Fast { links, .. } = checks {
        if !links.hold(comp) {
            return Err(comp_error(
                comp,
                None,
                "its operand and user lists disagree".into(),
            ));
        }
    }
    for n in 0..param_numbers.len() as i64 {
        if !param_numbers.contains(&n) {
            return Err(comp_error(
                comp,
                None,
                format!("parameter numbers are not contiguous: {n} is missing"),
            ));
        }
    }
    Ok(())
}

/// Whether a computation's operand and user lists agree as
/// [`check_links`] has it, found in time linear in the lists' lengths:
/// the operand lists are turned around into the users each instruction
/// should list, which are then compared with the lists as sets. Searching
/// each operand's user list is quadratic in an instruction's users (a
/// parameter or constant can have thousands) and reads every operand.
#[derive(Default)]
pub(super) struct LinkCheck {
    /// Per instruction index: where its expected users start in `expected`
    /// (then, while filling, where the next one goes).
    start: Vec<u32>,
    expected: Vec<u32>,
    /// Per instruction index, the last instruction that marked it
    /// (`2 * index + 1` for "expected user of it", `+ 2` for "also listed").
    mark: Vec<u32>,
}

impl LinkCheck {
    fn hold(&mut self, comp: &Computation) -> bool {
        let n = comp.slot_count();
        // Positions are u32 with `u32::MAX` kept as "not seen".
        if u32::try_from(2 * n + 2).is_err() {
            return false;
        }
        let live = |id: InstrId| comp.is_live(id);
        self.start.clear();
        self.start.resize(n + 1, 0);
        self.mark.clear();
        self.mark.resize(n, u32::MAX);
        // Each instruction's distinct operands and control predecessors,
        // counted per operand; `mark[o] == i` says `o` was seen for `i`.
        let mut edges = 0usize;
        for (id, instr) in comp.instructions() {
            let i = id.index() as u32;
            for &op in instr.operands().iter().chain(instr.control_predecessors()) {
                if !live(op) {
                    return false;
                }
                let (Some(m), Some(c)) = (
                    self.mark.get_mut(op.index()),
                    self.start.get_mut(op.index() + 1),
                ) else {
                    return false;
                };
                if *m != i {
                    *m = i;
                    *c += 1;
                    edges += 1;
                }
            }
        }
        // The running counts below are u32 too.
        if u32::try_from(edges).is_err() {
            return false;
        }
        for k in 1..=n {
            let before = self.start.get(k - 1).copied().unwrap_or(0);
            if let Some(c) = self.start.get_mut(k) {
                *c += before;
            }
        }
        self.expected.clear();
        self.expected.resize(edges, 0);
        self.mark.fill(u32::MAX);
        for (id, instr) in comp.instructions() {
            let i = id.index() as u32;
            for &op in instr.operands().iter().chain(instr.control_predecessors()) {
                let Some(m) = self.mark.get_mut(op.index()) else {
                    return false;
                };
                if *m == i {
                    continue;
                }
                *m = i;
                let Some(next) = self.start.get_mut(op.index()) else {
                    return false;
                };
                let Some(slot) = self.expected.get_mut(*next as usize) else {
                    return false;
                };
                *slot = i;
                *next += 1;
            }
        }
        // Filling moved each start to the next one's: instruction `o`'s
        // expected users now end at `start[o]` and begin at `start[o - 1]`.
        self.mark.fill(u32::MAX);
        for (id, instr) in comp.instructions() {
            let o = id.index();
            let end = self.start.get(o).copied().unwrap_or(0) as usize;
            let begin = match o {
                0 => 0,
                _ => self.start.get(o - 1).copied().unwrap_or(0) as usize,
            };
            let Some(expected) = self.expected.get(begin..end) else {
                return false;
            };
            let users = instr.users();
            if users.len() != expected.len() {
                return false;
            }
            let (expected_mark, listed_mark) = (2 * o as u32 + 1, 2 * o as u32 + 2);
            for &u in expected {
                if let Some(m) = self.mark.get_mut(u as usize) {
                    *m = expected_mark;
                }
            }
            for &u in users {
                match self.mark.get_mut(u.index()) {
                    Some(m) if *m == expected_mark && live(u) => *m = listed_mark,
                    _ => return false,
                }
            }
        }
        true
    }
}

/// The operand and user lists agree: each operand (and control
/// predecessor) lists the instruction as a user, and each user, listed
/// once, uses it.
fn check_links(comp: &Computation, id: InstrId, instr: &Instruction) -> Result<(), String> {
    for (i, &op) in instr
        .operands()
        .iter()
        .chain(instr.control_predecessors())
        .enumerate()
    {
        let Some(o) = comp.get(op) else {
            return Err(format!(
                "operand {i} is not an instruction of this computation"
            ));
        };
        if !o.users().contains(&id) {
            return Err(format!("operand {} does not list it as a user", o.name));
        }
    }
    for &u in instr.users() {
        let Some(user) = comp.get(u) else {
            return Err("a user was removed but is still listed".into());
        };
        if !user.operands().contains(&id) && !user.control_predecessors().contains(&id) {
            return Err(format!(
                "{} is listed as a user but does not use it",
                user.name
            ));
        }
    }
    if has_duplicate(instr.users()) {
        return Err("a user is listed twice".into());
    }
    Ok(())
}

/// Whether an id is listed twice; without allocating for the short lists
/// almost every instruction has.
fn has_duplicate(ids: &[InstrId]) -> bool {
    const SHORT: usize = 16;
    if ids.len() <= SHORT {
        return ids
            .iter()
            .enumerate()
            .any(|(i, id)| ids.iter().take(i).any(|x| x == id));
    }
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.windows(2).any(|w| w.first() == w.get(1))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::ir::verify::verify;
    use crate::text::parse_module;

    #[test]
    fn ascending_lists_share_an_element_only_when_they_do() {
        let cases: [(&[u64], &[u64], bool); 7] = [
            (&[], &[], false),
            (&[1, 2], &[], false),
            (&[1, 3, 5], &[2, 4, 6], false),
            (&[1, 3, 5], &[2, 4, 5], true),
            (&[9], &[1, 2, 3, 9], true),
            (&[1, 2, 3, 7], &[0, 4, 8], false),
            (&[u64::MAX], &[0, u64::MAX], true),
        ];
        for (a, b, shared) in cases {
            assert_eq!(share_an_element(a, b), shared, "{a:?} {b:?}");
            assert_eq!(share_an_element(b, a), shared, "{b:?} {a:?}");
        }
    }

    /// A module of `comps` computations of `n` instructions each, enough
    /// to be verified on several threads.
    fn large(comps: usize, n: usize) -> Module {
        let mut text = String::from("HloModule big\n\n");
        for c in 0..comps {
            let entry = if c + 1 == comps { "ENTRY " } else { "" };
            text.push_str(&format!("{entry}c{c} {{\n  c{c}.0 = f32[] parameter(0)\n"));
            for i in 1..n {
                let root = if i + 1 == n { "ROOT " } else { "" };
                text.push_str(&format!(
                    "  {root}c{c}.{i} = f32[] negate(c{c}.{})\n",
                    i - 1
                ));
            }
            text.push_str("}\n\n");
        }
        parse_module(&text, "big.hlo").unwrap()
    }

    /// The calls the fast path reads on the way are the module's own list
    /// ([`Module::calls_by_computation`]): several per instruction, in
    /// attribute order (a loop's condition and body, a conditional's
    /// branches), on one thread and on several; and the post order the
    /// verifier then keeps is the module's, here where callers come before
    /// their callees in the text (so the order of each computation's calls
    /// decides it).
    #[test]
    fn the_fast_path_reads_each_computations_calls_in_order() {
        let text = "HloModule calls\n\n\
            ENTRY main {\n  x = f32[] parameter(0)\n  p = pred[] parameter(1)\n\
            \x20 t = (f32[]) tuple(x)\n\
            \x20 w = (f32[]) while(t), condition=cond, body=body\n\
            \x20 g = f32[] get-tuple-element(w), index=0\n\
            \x20 c = f32[] conditional(p, g, x), true_computation=neg, false_computation=exp\n\
            \x20 ROOT r = f32[] call(c), to_apply=exp\n}\n\n\
            body {\n  b = (f32[]) parameter(0)\n  v = f32[] get-tuple-element(b), index=0\n\
            \x20 n = f32[] call(v), to_apply=neg\n  ROOT o = (f32[]) tuple(n)\n}\n\n\
            cond {\n  q = (f32[]) parameter(0)\n  ROOT k = pred[] constant(false)\n}\n\n\
            exp {\n  e = f32[] parameter(0)\n  ROOT f = f32[] exponential(e)\n}\n\n\
            neg {\n  a = f32[] parameter(0)\n  ROOT m = f32[] negate(a)\n}\n";
        let small = parse_module(text, "calls.hlo").unwrap();
        let big = large(3, INSTRUCTIONS_PER_THREAD);
        for m in [&small, &big] {
            let checked: Vec<(CompId, &Computation)> = m.computations().collect();
            let read = instructions_hold(m, &checked).expect("the module holds");
            let listed = m.calls_by_computation();
            assert_eq!(read.len(), checked.len());
            for (c, calls) in &read {
                assert_eq!(calls, &listed[c.index()]);
            }
        }
        let names = |m: &Module, order: Vec<CompId>| -> Vec<String> {
            order.iter().map(|&c| m.comp(c).name.to_string()).collect()
        };
        let found = names(&small, small.computation_post_order());
        assert_eq!(found, ["cond", "neg", "body", "exp", "main"]);
        let m = parse_module(text, "calls.hlo").unwrap();
        assert_eq!(verify(&m), Ok(()));
        assert_eq!(names(&m, m.computation_post_order()), found);
    }

    /// On several threads, the verifier finds what it finds on one: a name
    /// taken in another computation (another thread's run), a broken user
    /// list; and it reports the fault the one-thread order reports first.
    #[test]
    fn faults_are_found_whatever_the_threads() {
        let mut m = large(3, INSTRUCTIONS_PER_THREAD);
        assert_eq!(verify(&m), Ok(()));
        let (first, last) = (CompId::new(0), CompId::new(2));
        let taken = m.comp(first).instr(InstrId::new(7)).name.clone();
        m.comp_mut(last).instr_mut(InstrId::new(9)).name = taken;
        let e = verify(&m).unwrap_err();
        assert_eq!(e.to_string(), "in computation c2, instruction c0.7: instruction name c0.7 is not unique in the module");
        m.comp_mut(first).instr_mut(InstrId::new(3)).name = "c1.5".into();
        let e = verify(&m).unwrap_err();
        assert_eq!(e.to_string(), "in computation c1, instruction c1.5: instruction name c1.5 is not unique in the module");
    }

    /// Each way an operand and a user list can disagree is found, on the
    /// fast path's whole-computation comparison as on the in-order
    /// search, and reported as the in-order search has it; small and large
    /// modules take the two paths' thread counts.
    #[test]
    fn every_disagreement_of_operands_and_users_is_found() {
        type Fault = fn(&mut Computation);
        fn id(i: usize) -> InstrId {
            InstrId::new(i)
        }
        let faults: [(Fault, &str); 6] = [
            // x.2 uses x.1, which does not list it.
            (
                |c| c.instr_mut(id(1)).users.retain(|u| *u != id(2)),
                "instruction x.2: operand x.1 does not list it as a user",
            ),
            // x.1 lists x.3, which does not use it.
            (
                |c| c.instr_mut(id(1)).users.push(id(3)),
                "instruction x.1: x.3 is listed as a user but does not use it",
            ),
            // x.1 lists x.2 twice.
            (
                |c| c.instr_mut(id(1)).users.push(id(2)),
                "instruction x.1: a user is listed twice",
            ),
            // x.1 lists an instruction that is not there.
            (
                |c| c.instr_mut(id(1)).users.push(id(10_000_000)),
                "instruction x.1: a user was removed but is still listed",
            ),
            // x.2 uses an instruction that is not there.
            (
                |c| {
                    c.instr_mut(id(1)).users.retain(|u| *u != id(2));
                    c.instr_mut(id(2)).operands[0] = id(10_000_000);
                },
                "instruction x.2: operand 0 is not an instruction of this computation",
            ),
            // Users swapped between two operands: the counts still agree.
            (
                |c| {
                    let a = std::mem::take(&mut c.instr_mut(id(1)).users);
                    let b = std::mem::replace(&mut c.instr_mut(id(2)).users, a);
                    c.instr_mut(id(1)).users = b;
                },
                "instruction x.1: x.3 is listed as a user but does not use it",
            ),
        ];
        for n in [5, INSTRUCTIONS_PER_THREAD * 3] {
            let mut text = String::from("HloModule m\n\nENTRY x {\n  x.0 = f32[] parameter(0)\n");
            for i in 1..n {
                let root = if i + 1 == n { "ROOT " } else { "" };
                text.push_str(&format!("  {root}x.{i} = f32[] negate(x.{})\n", i - 1));
            }
            text.push_str("}\n");
            let m = parse_module(&text, "m.hlo").unwrap();
            assert_eq!(verify(&m), Ok(()));
            for (fault, message) in faults {
                let mut bad = m.clone();
                fault(bad.comp_mut(CompId::new(0)));
                let e = verify(&bad).expect_err(message).to_string();
                assert!(e.ends_with(message), "{n} instructions: {e}");
            }
        }
    }
}
