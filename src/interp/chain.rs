//! Chains of elementwise ops on unsigned integers evaluated a block of
//! elements at a time, with no array per op.
//!
//! JAX's random bits are threefry: some 25 `add`/`xor`/shift/`or` ops on
//! u32 arrays per round, each read once or twice by the next. One array
//! per op writes and reads back the whole mask 25 times a round; a block
//! of 1,024 elements of each live value stays in the first-level cache
//! instead, and only the values read outside the chain are made whole.
//!
//! The plan ([`find`]) groups the unsigned elementwise ops of a
//! computation that read one another (an operand is another member, a
//! scalar broadcast the plan keeps as its scalar, or any array of the
//! group's shape), so that no instruction outside a group reads a member
//! before the group's last member in the evaluation order: the group is
//! then evaluated whole at its last member's place. Each op is the
//! arithmetic of [`super::intbin::with_u_op`] on each element, so the
//! results are the same bits; values of at most 32 bits are computed as
//! u32 (eight lanes per vector instead of four).

use super::array::{Array, Data, Value};
use super::elementwise::BinOp;
use super::splat::Pattern;
use super::{err, par, Result};
use crate::ir::{Computation, InstrId, PrimitiveType};
use crate::util::FxMap;

/// Elements of each value computed at once: a few live blocks of a
/// chain fit in the first-level data cache.
const BLOCK: usize = 1024;

/// Smaller arrays are left to the op-at-a-time evaluator, which they
/// cost little.
const MIN_ELEMENTS: usize = 2 * BLOCK;

/// The groups of one computation's plan.
#[derive(Default)]
pub(crate) struct Chains {
    /// Per instruction slot: its group's index + 1, or 0.
    group_of: Vec<u32>,
    groups: Vec<Group>,
}

impl Chains {
    /// The group `id` is a member of.
    pub(crate) fn group(&self, id: InstrId) -> Option<&Group> {
        match self.group_of.get(id.index()) {
            Some(&g) if g > 0 => self.groups.get(g as usize - 1),
            _ => None,
        }
    }
}

/// Members of one chain and the program that computes a block of them.
pub(crate) struct Group {
    /// In evaluation order; the last is where the group is evaluated.
    pub(crate) members: Vec<InstrId>,
    /// Per member: read outside the group, or the computation's root, so
    /// made whole.
    output: Vec<bool>,
    /// The members' ops, each array read from outside loaded first.
    steps: Vec<Step>,
    /// Block buffers the program needs at once.
    slots: usize,
    ty: PrimitiveType,
    dims: Vec<usize>,
    elements: usize,
}

impl Group {
    /// The member evaluated last, where the whole group is.
    pub(crate) fn last(&self) -> InstrId {
        *self.members.last().expect("a group has members")
    }

    /// Elements read and written, for the cancel hook.
    pub(crate) fn work(&self) -> u64 {
        (self.steps.len() as u64).saturating_mul(self.elements as u64)
    }
}

/// One step of a group's program, on one block; `dst` is the block
/// buffer written.
enum Step {
    /// A block of an array from outside the group.
    Load { array: InstrId, dst: usize },
    /// Member `member`'s op.
    Op {
        op: BinOp,
        lhs: Src,
        rhs: Src,
        dst: usize,
        member: usize,
    },
}

#[derive(Clone, Copy)]
enum Src {
    /// A block buffer: an earlier member's or a loaded array's.
    Slot(usize),
    /// A scalar broadcast whose slot holds the scalar.
    Scalar(InstrId),
}

/// The ops computed here: those with a plain loop in `with_u_op`.
fn chained(op: BinOp) -> bool {
    use BinOp::*;
    matches!(
        op,
        Add | Sub | Mul | Max | Min | And | Or | Xor | Shl | ShrL
    )
}

/// The groups of `comp` evaluated in `order`, given the plan's splats.
pub(crate) fn find(
    comp: &Computation,
    order: &[InstrId],
    root: InstrId,
    splat: &[bool],
    slots: usize,
) -> Chains {
    let mut pos = vec![usize::MAX; slots];
    for (i, &id) in order.iter().enumerate() {
        pos[id.index()] = i;
    }
    // Splats of a scalar are read as the scalar; a row or column splat's
    // slot holds a smaller array, which a chain does not read.
    let any_splat = |o: InstrId| splat.get(o.index()).copied().unwrap_or(false);
    let is_splat = |o: InstrId| {
        any_splat(o) && super::splat::pattern(comp, comp.instr(o)) == Some(Pattern::Scalar)
    };
    let mut candidate = vec![false; slots];
    for &id in order {
        candidate[id.index()] = can_chain(comp, id, &is_splat, &any_splat);
    }
    if candidate.iter().filter(|&&c| c).count() < 2 {
        return Chains::default();
    }
    // Components of members reading members (union-find on slots).
    let mut parent: Vec<usize> = (0..slots).collect();
    fn top(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut users: FxMap<InstrId, Vec<InstrId>> = FxMap::default();
    for &id in order {
        for &o in comp.instr(id).operands() {
            if candidate[o.index()] {
                users.entry(o).or_default().push(id);
                if candidate[id.index()] {
                    let (a, b) = (top(&mut parent, id.index()), top(&mut parent, o.index()));
                    parent[a] = b;
                }
            }
        }
    }
    let mut components: FxMap<usize, Vec<InstrId>> = FxMap::default();
    for &id in order {
        if candidate[id.index()] {
            let t = top(&mut parent, id.index());
            components.entry(t).or_default().push(id);
        }
    }
    let mut chains = Chains {
        group_of: vec![0; slots],
        groups: Vec::new(),
    };
    // A set whose members are read outside it before its last member is
    // cut there: the members before the reader and those after.
    let mut stack: Vec<Vec<InstrId>> = components.into_values().collect();
    stack.sort_by_key(|ms| pos[ms[0].index()]);
    let mut tag = vec![0u32; slots];
    let mut next_tag = 0u32;
    while let Some(members) = stack.pop() {
        if members.len() < 2 {
            continue;
        }
        next_tag += 1;
        for m in &members {
            tag[m.index()] = next_tag;
        }
        let last = pos[members[members.len() - 1].index()];
        let early_reader = members
            .iter()
            .flat_map(|m| users.get(m).into_iter().flatten())
            .filter(|u| tag[u.index()] != next_tag && pos[u.index()] < last)
            .map(|u| pos[u.index()])
            .min();
        if let Some(cut) = early_reader {
            let (before, after) = members.into_iter().partition(|m| pos[m.index()] < cut);
            stack.push(before);
            stack.push(after);
            continue;
        }
        let outside = |m: &InstrId| {
            *m == root
                || users
                    .get(m)
                    .is_some_and(|us| us.iter().any(|u| tag[u.index()] != next_tag))
        };
        let output = members.iter().map(outside).collect();
        let group = build(
            comp,
            members,
            output,
            |o| tag[o.index()] == next_tag,
            &is_splat,
        );
        chains.groups.push(group);
        for m in &chains.groups[chains.groups.len() - 1].members {
            chains.group_of[m.index()] = chains.groups.len() as u32;
        }
    }
    chains
}

/// Whether `id` can be a member: an op with a loop here on unsigned
/// arrays of at least [`MIN_ELEMENTS`], whose operands are scalar splats
/// or arrays of its shape.
fn can_chain(
    comp: &Computation,
    id: InstrId,
    is_splat: &impl Fn(InstrId) -> bool,
    any_splat: &impl Fn(InstrId) -> bool,
) -> bool {
    let instr = comp.instr(id);
    let Some(op) = BinOp::from_opcode(instr.opcode) else {
        return false;
    };
    let Some(shape) = instr.shape.as_array() else {
        return false;
    };
    let elements = shape
        .dims
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?));
    chained(op)
        && shape.element_type.is_unsigned_int()
        && !shape.dynamic.iter().any(|&d| d)
        && elements.is_some_and(|n| n >= MIN_ELEMENTS)
        && instr.operands().len() == 2
        && instr.operands().iter().all(|&o| {
            is_splat(o)
                || !any_splat(o)
                    && comp.instr(o).shape.as_array().is_some_and(|a| {
                        a.element_type == shape.element_type && a.dims == shape.dims
                    })
        })
}

/// The program of `members`: the members' ops in order, each array
/// from outside loaded before its first reader, and block buffers reused
/// once their value's last reader has run.
fn build(
    comp: &Computation,
    members: Vec<InstrId>,
    output: Vec<bool>,
    in_group: impl Fn(InstrId) -> bool,
    is_splat: &impl Fn(InstrId) -> bool,
) -> Group {
    // The values in block buffers: the members and the arrays read from
    // outside, each with the member index of its last reader.
    let mut last_read: FxMap<InstrId, usize> = FxMap::default();
    for (i, &m) in members.iter().enumerate() {
        for &o in comp.instr(m).operands() {
            if in_group(o) || !is_splat(o) {
                last_read.insert(o, i);
            }
        }
    }
    let mut slot_of: FxMap<InstrId, usize> = FxMap::default();
    let mut free: Vec<usize> = Vec::new();
    let mut slots = 0;
    let mut take = |free: &mut Vec<usize>| {
        free.pop().unwrap_or_else(|| {
            slots += 1;
            slots - 1
        })
    };
    let mut steps = Vec::with_capacity(members.len());
    for (i, &m) in members.iter().enumerate() {
        let instr = comp.instr(m);
        let operands = instr.operands();
        for &o in operands {
            if !in_group(o) && !is_splat(o) && !slot_of.contains_key(&o) {
                let dst = take(&mut free);
                slot_of.insert(o, dst);
                steps.push(Step::Load { array: o, dst });
            }
        }
        let src = |o: InstrId| match slot_of.get(&o) {
            Some(&k) => Src::Slot(k),
            None => Src::Scalar(o),
        };
        let (lhs, rhs) = (src(operands[0]), src(operands[1]));
        // Taken before the operands' buffers are freed: a step never
        // writes a buffer it reads.
        let dst = take(&mut free);
        slot_of.insert(m, dst);
        let mut read = operands.to_vec();
        read.dedup();
        for o in read {
            if last_read.get(&o) == Some(&i) {
                free.push(slot_of[&o]);
            }
        }
        if !last_read.contains_key(&m) {
            free.push(dst);
        }
        let op = BinOp::from_opcode(instr.opcode).expect("members are binary ops");
        steps.push(Step::Op {
            op,
            lhs,
            rhs,
            dst,
            member: i,
        });
    }
    let shape = comp.instr(members[0]).shape.as_array().expect("an array");
    let dims: Vec<usize> = shape.dims.iter().map(|&d| d as usize).collect();
    Group {
        elements: dims.iter().product(),
        ty: shape.element_type,
        dims,
        members,
        output,
        steps,
        slots,
    }
}

/// A step's operand for one block.
#[derive(Clone, Copy)]
enum Side<'a, T> {
    Slice(&'a [T]),
    Scalar(T),
}

/// A step with its values resolved for one evaluation.
enum Resolved<'a> {
    Load(&'a [u64], usize),
    Op {
        op: BinOp,
        lhs: Input,
        rhs: Input,
        dst: usize,
        /// Where the result is made whole, if it is.
        out: Option<usize>,
    },
}

#[derive(Clone, Copy)]
enum Input {
    Slot(usize),
    Scalar(u64),
}

/// Evaluates `group` on the values in `vals`: the members read outside it
/// (and those `wanted`, for a capture), made whole.
pub(crate) fn eval(
    group: &Group,
    vals: &[Option<Value>],
    wanted: impl Fn(InstrId) -> bool,
) -> Result<Vec<(InstrId, Value)>> {
    let n = group.elements;
    let unsigned = |id: InstrId| -> Result<&[u64]> {
        let value = vals[id.index()]
            .as_ref()
            .ok_or_else(|| err("internal error: operand not evaluated"))?;
        match &value.as_array()?.data {
            Data::U(v) => Ok(v),
            _ => Err(err("internal error: a chain's operand is not unsigned")),
        }
    };
    let input = |s: Src| -> Result<Input> {
        Ok(match s {
            Src::Slot(k) => Input::Slot(k),
            Src::Scalar(id) => match unsigned(id)? {
                &[v] => Input::Scalar(v),
                _ => return Err(err("internal error: a chain's scalar is not one element")),
            },
        })
    };
    let mut made = Vec::new();
    let program = group
        .steps
        .iter()
        .map(|s| {
            Ok(match *s {
                Step::Load { array, dst } => {
                    let v = unsigned(array)?;
                    if v.len() != n {
                        return Err(err("internal error: a chain's operand has the wrong size"));
                    }
                    Resolved::Load(v, dst)
                }
                Step::Op {
                    op,
                    lhs,
                    rhs,
                    dst,
                    member,
                } => {
                    let m = group.members[member];
                    let out = (group.output[member] || wanted(m)).then(|| {
                        made.push(m);
                        made.len() - 1
                    });
                    Resolved::Op {
                        op,
                        lhs: input(lhs)?,
                        rhs: input(rhs)?,
                        dst,
                        out,
                    }
                }
            })
        })
        .collect::<Result<Vec<_>>>()?;
    // Fallibly: a refused allocation is an error naming the group's last
    // member, not an abort.
    let mut outs: Vec<Vec<u64>> = made
        .iter()
        .map(|_| super::budget::try_vec(n, 0u64))
        .collect::<Result<_>>()?;
    // Split over cores as a single elementwise op of the group's size is.
    let t = if n >= par::MIN_PARALLEL {
        par::threads()
    } else {
        1
    };
    let per = n.div_ceil(BLOCK).div_ceil(t) * BLOCK;
    let mut parts: Vec<(usize, Vec<&mut [u64]>)> = (0..n.div_ceil(per))
        .map(|c| (c * per, Vec::new()))
        .collect();
    for out in &mut outs {
        for (c, chunk) in out.chunks_mut(per).enumerate() {
            parts[c].1.push(chunk);
        }
    }
    let bits = group.ty.bit_width();
    par::each(parts, |(start, mut outs)| {
        let part = Part {
            program: &program,
            slots: group.slots,
            bits,
            start,
            end: (start + per).min(n),
        };
        if bits > 32 {
            run::<u64>(&part, &mut outs)
        } else {
            run::<u32>(&part, &mut outs)
        }
    });
    made.into_iter()
        .zip(outs)
        .map(|(m, v)| {
            let a = Array::new(group.ty, group.dims.clone(), Data::U(v))?;
            Ok((m, Value::array(a)))
        })
        .collect()
}

/// One thread's share of a group's evaluation: `program` on elements
/// `start..end`.
struct Part<'a> {
    program: &'a [Resolved<'a>],
    slots: usize,
    bits: u32,
    start: usize,
    end: usize,
}

/// Runs `part` a block at a time, in `T`; `outs` holds its elements of
/// each output. With AVX2 where the CPU
/// has it: the blocks are in cache, so twice the lanes is nearly twice
/// the speed.
fn run<T: Word>(part: &Part<'_>, outs: &mut [&mut [u64]]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: `run_avx2` only needs the CPU to have AVX2, which was
        // just checked; everything else about it is safe code.
        unsafe { run_avx2::<T>(part, outs) };
        return;
    }
    run_blocks::<T>(part, outs)
}

/// [`run_blocks`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn run_avx2<T: Word>(part: &Part<'_>, outs: &mut [&mut [u64]]) {
    run_blocks::<T>(part, outs)
}

#[inline(always)]
fn run_blocks<T: Word>(part: &Part<'_>, outs: &mut [&mut [u64]]) {
    let &Part {
        program,
        slots,
        bits,
        start,
        end,
    } = part;
    let mut scratch: Vec<Vec<T>> = vec![vec![T::default(); BLOCK]; slots];
    let mut at = start;
    while at < end {
        let len = BLOCK.min(end - at);
        for step in program {
            match *step {
                Resolved::Load(v, dst) => {
                    for (b, &x) in scratch[dst][..len].iter_mut().zip(&v[at..at + len]) {
                        *b = T::narrow(x);
                    }
                }
                Resolved::Op {
                    op,
                    lhs,
                    rhs,
                    dst,
                    out,
                } => {
                    let mut d = std::mem::take(&mut scratch[dst]);
                    let side = |i: Input| match i {
                        Input::Slot(k) => Side::Slice(&scratch[k][..len]),
                        Input::Scalar(s) => Side::Scalar(T::narrow(s)),
                    };
                    T::apply(op, bits, side(lhs), side(rhs), &mut d[..len]);
                    if let Some(k) = out {
                        let o = &mut outs[k][at - start..at - start + len];
                        for (o, &x) in o.iter_mut().zip(&d[..len]) {
                            *o = x.widen();
                        }
                    }
                    scratch[dst] = d;
                }
            }
        }
        at += len;
    }
}

/// The type a block is computed in: u32 for values of at most 32 bits
/// (which the arrays keep in u64), u64 for wider ones.
trait Word: Copy + Default + Send + Sync {
    fn narrow(v: u64) -> Self;
    fn widen(self) -> u64;
    /// `out[i] = lhs[i] op rhs[i]` on `bits`-bit values.
    fn apply(op: BinOp, bits: u32, lhs: Side<'_, Self>, rhs: Side<'_, Self>, out: &mut [Self]);
}

/// `out[i] = f(lhs[i], rhs[i])`, one loop per operand form (each
/// vectorises on its own).
#[inline(always)]
fn each<T: Copy>(lhs: Side<'_, T>, rhs: Side<'_, T>, out: &mut [T], f: impl Fn(T, T) -> T) {
    match (lhs, rhs) {
        (Side::Slice(x), Side::Slice(y)) => {
            for ((o, &p), &q) in out.iter_mut().zip(x).zip(y) {
                *o = f(p, q);
            }
        }
        (Side::Slice(x), Side::Scalar(q)) => {
            for (o, &p) in out.iter_mut().zip(x) {
                *o = f(p, q);
            }
        }
        (Side::Scalar(p), Side::Slice(y)) => {
            for (o, &q) in out.iter_mut().zip(y) {
                *o = f(p, q);
            }
        }
        (Side::Scalar(p), Side::Scalar(q)) => out.fill(f(p, q)),
    }
}

/// `op` on values of `bits` bits in `$t`, each result masked to `bits` as
/// `with_u_op` does (no mask when they fill `$t`: the wrapping ops wrap
/// there).
macro_rules! word {
    ($t:ident) => {
        impl Word for $t {
            fn narrow(v: u64) -> Self {
                v as $t
            }

            fn widen(self) -> u64 {
                u64::from(self)
            }

            #[inline(always)]
            fn apply(op: BinOp, bits: u32, lhs: Side<'_, $t>, rhs: Side<'_, $t>, out: &mut [$t]) {
                if bits >= <$t>::BITS {
                    word!(@ops $t, <$t>::BITS, |x| x, op, lhs, rhs, out)
                } else {
                    let m: $t = (1 << bits) - 1;
                    word!(@ops $t, bits, move |x| x & m, op, lhs, rhs, out)
                }
            }
        }
    };
    (@ops $t:ident, $bits:expr, $mask:expr, $op:expr, $lhs:expr, $rhs:expr, $out:expr) => {{
        let (op, lhs, rhs, out) = ($op, $lhs, $rhs, $out);
        let mask = $mask;
        let w = <$t>::from($bits as u8);
        // A shift by one amount: decided once, a plain vector shift.
        if let (BinOp::Shl | BinOp::ShrL, Side::Scalar(q)) = (op, rhs) {
            if q >= w {
                out.fill(0);
            } else if op == BinOp::Shl {
                each(lhs, rhs, out, move |p, _| mask(p << q));
            } else {
                each(lhs, rhs, out, move |p, _| mask(p >> q));
            }
            return;
        }
        match op {
            BinOp::Add => each(lhs, rhs, out, move |p, q| mask(p.wrapping_add(q))),
            BinOp::Sub => each(lhs, rhs, out, move |p, q| mask(p.wrapping_sub(q))),
            BinOp::Mul => each(lhs, rhs, out, move |p, q| mask(p.wrapping_mul(q))),
            BinOp::Max => each(lhs, rhs, out, move |p, q| mask(p.max(q))),
            BinOp::Min => each(lhs, rhs, out, move |p, q| mask(p.min(q))),
            BinOp::And => each(lhs, rhs, out, move |p, q| mask(p & q)),
            BinOp::Or => each(lhs, rhs, out, move |p, q| mask(p | q)),
            BinOp::Xor => each(lhs, rhs, out, move |p, q| mask(p ^ q)),
            BinOp::Shl => each(lhs, rhs, out, move |p, q| if q >= w { 0 } else { mask(p << q) }),
            BinOp::ShrL => each(lhs, rhs, out, move |p, q| if q >= w { 0 } else { mask(p >> q) }),
            // `find` makes members of the ops above only.
            _ => unreachable!("{op:?} is not chained"),
        }
    }};
}

word!(u32);
word!(u64);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::array::wrap_u;
    use crate::interp::elementwise::ubin;
    use crate::ir::{Module, Opcode};
    use std::sync::Arc;

    const OPS: [&str; 10] = [
        "add",
        "subtract",
        "multiply",
        "maximum",
        "minimum",
        "and",
        "or",
        "xor",
        "shift-left",
        "shift-right-logical",
    ];

    /// A small random-number stream (the tests' own, reproducible).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// A module of `ops` random unsigned ops on two arrays, a scalar
    /// parameter and a constant (both broadcast), with a `not` (not a
    /// member) now and then read by later ops, and several results.
    fn random_module(ty: &str, dims: &str, ops: usize, rng: &mut Rng) -> String {
        let bits: u32 = ty[1..].parse().unwrap();
        let s = format!("{ty}[{dims}]");
        let mut body = format!(
            "  p0 = {s} parameter(0)\n  p1 = {s} parameter(1)\n  k = {ty}[] parameter(2)\n  \
             c = {ty}[] constant({})\n  bk = {s} broadcast(k), dimensions={{}}\n  \
             bc = {s} broadcast(c), dimensions={{}}\n",
            rng.below(bits as usize + 2)
        );
        let mut pool: Vec<String> = ["p0", "p1", "bk", "bc"].map(String::from).to_vec();
        for i in 0..ops {
            let name = format!("v{i}");
            if i % 7 == 6 {
                let x = &pool[4 + rng.below(pool.len() - 4)];
                body += &format!("  {name} = {s} not({x})\n");
            } else {
                let (x, y) = (&pool[rng.below(pool.len())], &pool[rng.below(pool.len())]);
                let op = OPS[rng.below(OPS.len())];
                body += &format!("  {name} = {s} {op}({x}, {y})\n");
            }
            pool.push(name);
        }
        let picks: Vec<&str> = (0..3)
            .map(|_| pool[4 + rng.below(pool.len() - 4)].as_str())
            .chain([pool[pool.len() - 1].as_str()])
            .collect();
        let shapes = vec![s.as_str(); picks.len()].join(", ");
        body += &format!("  ROOT r = ({shapes}) tuple({})\n", picks.join(", "));
        format!("HloModule chains\n\nENTRY main {{\n{body}}}\n")
    }

    /// The module evaluated element by element with `ubin`, as the
    /// op-at-a-time evaluator computes each op.
    fn reference(module: &Module, args: &[Vec<u64>], bits: u32) -> Vec<Vec<u64>> {
        let comp = module.comp(module.entry());
        let n = args[0].len();
        let mut vals: FxMap<InstrId, Vec<u64>> = FxMap::default();
        for id in comp.post_order() {
            let instr = comp.instr(id);
            let arg = |k: usize| &vals[&instr.operand(k)];
            let v = match instr.opcode {
                Opcode::Parameter => args[instr.parameter_number().unwrap() as usize].clone(),
                Opcode::Constant => {
                    let c = Value::from_literal(instr.literal().unwrap()).unwrap();
                    let Data::U(v) = &c.as_array().unwrap().data else {
                        panic!()
                    };
                    v.clone()
                }
                Opcode::Broadcast => vec![arg(0)[0]; n],
                Opcode::Not => arg(0).iter().map(|&x| wrap_u(!x, bits)).collect(),
                Opcode::Tuple => continue,
                op => {
                    let op = BinOp::from_opcode(op).unwrap();
                    (arg(0).iter().zip(arg(1)))
                        .map(|(&p, &q)| ubin(op, p, q, bits).unwrap())
                        .collect()
                }
            };
            vals.insert(id, v);
        }
        let root = comp.instr(comp.root_opt().unwrap());
        root.operands().iter().map(|o| vals[o].clone()).collect()
    }

    /// Random chains of every op on u8, u16, u32 and u64, with a block
    /// left short at the end and (one size) split over cores, give the
    /// bits of `ubin` element by element; the modules do form groups, and
    /// some are cut where a `not` reads a member.
    #[test]
    fn chains_compute_what_each_op_does() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut groups = 0;
        let mut cut = 0;
        for (ty, dims, n) in [
            ("u32", "37,64", 37 * 64),
            ("u8", "2100", 2100),
            ("u16", "3,1000", 3000),
            ("u64", "2,1500", 3000),
            ("u32", "520,256", 520 * 256),
        ] {
            let bits: u32 = ty[1..].parse().unwrap();
            for _ in 0..6 {
                let text = random_module(ty, dims, 24, &mut rng);
                let module = crate::text::parse_module(&text, "m.hlo").expect("parses");
                let comp = module.comp(module.entry());
                let order = comp.post_order();
                let root = comp.root_opt().unwrap();
                let slots = order.iter().map(|i| i.index() + 1).max().unwrap();
                let splat = crate::interp::splat::splats(comp, &order, root, slots);
                let chains = find(comp, &order, root, &splat, slots);
                groups += chains.groups.len();
                cut += usize::from(chains.groups.len() > 1);
                let mask = if bits == 64 {
                    u64::MAX
                } else {
                    (1 << bits) - 1
                };
                let mut data = |len: usize| -> Vec<u64> {
                    // Small values too, so shifts by them happen.
                    (0..len)
                        .map(|i| rng.next() & if i % 3 == 0 { 63 } else { mask })
                        .collect()
                };
                let args = vec![data(n), data(n), data(1)];
                let want = reference(&module, &args, bits);
                let ty = crate::ir::PrimitiveType::from_name(ty).unwrap();
                let dims_of = |len: usize| if len == 1 { vec![] } else { shape_of(comp) };
                let values: Vec<Value> = args
                    .iter()
                    .map(|a| {
                        Value::array(Array::new(ty, dims_of(a.len()), Data::U(a.clone())).unwrap())
                    })
                    .collect();
                let got = crate::interp::evaluate(&module, &values).expect("evaluates");
                let got: Vec<Arc<Array>> = got.leaves();
                for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                    let Data::U(g) = &g.data else { panic!() };
                    assert!(g == w, "{ty:?}[{dims}] output {k} differs:\n{text}");
                }
            }
        }
        assert!(groups >= 30, "only {groups} groups formed");
        assert!(cut >= 3, "only {cut} modules cut into several groups");
    }

    fn shape_of(comp: &Computation) -> Vec<usize> {
        let p = comp.instr(comp.parameters()[0]);
        p.shape
            .as_array()
            .unwrap()
            .dims
            .iter()
            .map(|&d| d as usize)
            .collect()
    }
}
