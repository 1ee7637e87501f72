//! Reducers and comparators made only of parameters, scalar constants,
//! `compare`, `select` and pred logic (`and`/`or`/`xor`/`not`), run as a
//! small program on element keys instead of through the general evaluator
//! (which builds an array per scalar and per instruction).
//!
//! That covers what JAX emits for argmax/argmin (a (value, index) reducer
//! with NaN and tie handling) and its sort comparators (the total-order
//! canonicalisation of -0 and NaN, several keys compared in turn). Such a
//! program never does arithmetic: `select` only passes one of its operands
//! through, so each value is an exact key of some parameter or constant and
//! a result can be copied bit for bit from where it came from. The compare
//! follows `elementwise::compare` exactly (same keys, same order per type).

use super::array::{wrap_s, wrap_u, Array, Data, Value};
use super::convert::to_f64_vec;
use super::elementwise::{dir_holds, total_key};
use crate::ir::{
    CompId, ComparisonDirection, ComparisonType, InstrId, Module, Opcode, PrimitiveType,
};
use std::cmp::Ordering;

/// One scalar as `compare` sees it: floats as their exact f64 value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Key {
    F(f64),
    S(i64),
    U(u64),
    P(bool),
}

/// The keys of every element of `a` (None for complex arrays, which the
/// programs leave to the general evaluator).
pub fn keys_of(a: &Array) -> Option<Vec<Key>> {
    Some(match &a.data {
        Data::S(v) => v.iter().map(|&x| Key::S(x)).collect(),
        Data::U(v) => v.iter().map(|&x| Key::U(x)).collect(),
        Data::Pred(v) => v.iter().map(|&x| Key::P(x)).collect(),
        Data::C64(_) | Data::C128(_) => return None,
        d => to_f64_vec(d, a.ty).into_iter().map(Key::F).collect(),
    })
}

/// `compare(a, b)` on keys of one type of `bits` bits, as
/// `elementwise::compare` orders them.
#[inline(always)]
fn key_order(a: Key, b: Key, t: ComparisonType, bits: u32) -> Option<Ordering> {
    match (a, b) {
        (Key::F(x), Key::F(y)) if t == ComparisonType::TotalOrder => {
            Some(total_key(x).cmp(&total_key(y)))
        }
        (Key::F(x), Key::F(y)) => x.partial_cmp(&y),
        (Key::S(x), Key::S(y)) if t == ComparisonType::Unsigned => {
            Some(wrap_u(x as u64, bits).cmp(&wrap_u(y as u64, bits)))
        }
        (Key::S(x), Key::S(y)) => Some(x.cmp(&y)),
        (Key::U(x), Key::U(y)) if t == ComparisonType::Signed => {
            Some(wrap_s(x as i64, bits).cmp(&wrap_s(y as i64, bits)))
        }
        (Key::U(x), Key::U(y)) => Some(x.cmp(&y)),
        (Key::P(x), Key::P(y)) => Some(x.cmp(&y)),
        // Keys of one type are of one kind (checked when compiling).
        _ => None,
    }
}

/// Where a value came from: a parameter, a constant, or (pred logic) none.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Src {
    Param(u32),
    Const(u32),
    Computed,
}

/// A value while running a program: its key and where it came from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Val {
    pub key: Key,
    pub src: Src,
}

#[derive(Clone, Copy, Debug)]
enum Node {
    Param(usize),
    Const(usize),
    Cmp {
        a: usize,
        b: usize,
        d: ComparisonDirection,
        t: ComparisonType,
        bits: u32,
    },
    Select {
        p: usize,
        a: usize,
        b: usize,
    },
    And(usize, usize),
    Or(usize, usize),
    Xor(usize, usize),
    Not(usize),
}

/// A compiled scalar computation.
#[derive(Debug)]
pub struct Prog {
    nodes: Vec<Node>,
    /// Per node: the parameters it depends on (bit k: parameter k; more
    /// than 64 parameters are not compiled).
    deps: Vec<u64>,
    /// The element type of each parameter.
    pub param_types: Vec<PrimitiveType>,
    /// The scalar constants, as arrays (copied into results exactly).
    pub consts: Vec<Array>,
    const_keys: Vec<Key>,
    /// The root's values: one node, or a tuple's.
    pub outputs: Vec<usize>,
    pub output_types: Vec<PrimitiveType>,
    /// True when the root is a tuple.
    pub tuple_root: bool,
    /// The node of each parameter.
    pub param_nodes: Vec<usize>,
    /// The nodes that compute (neither parameters nor constants), in order.
    ops: Vec<usize>,
}

impl Prog {
    /// Compiles computation `cid`, or None when it holds anything else
    /// than the instructions above on scalars (then the general evaluator
    /// runs it, and reports any error).
    pub fn compile(module: &Module, cid: CompId) -> Option<Prog> {
        let comp = module.get_comp(cid)?;
        let root = comp.root_opt()?;
        let ids: Vec<InstrId> = comp.sequence().collect();
        let nparams = comp.parameters().len();
        if nparams > 64 {
            return None;
        }
        // Topological order (the text's order need not be one).
        let mut slot: Vec<Option<usize>> = vec![None; ids.iter().map(|i| i.index() + 1).max()?];
        let mut order: Vec<InstrId> = Vec::with_capacity(ids.len());
        let mut state = vec![0u8; slot.len()]; // 0 new, 1 open, 2 done
        for &start in &ids {
            let mut stack = vec![(start, false)];
            while let Some((id, expanded)) = stack.pop() {
                let s = *state.get(id.index())?;
                if expanded {
                    state[id.index()] = 2;
                    order.push(id);
                    continue;
                }
                match s {
                    2 => continue,
                    1 => return None, // a cycle
                    _ => {}
                }
                state[id.index()] = 1;
                stack.push((id, true));
                for &o in comp.get(id)?.operands() {
                    if *state.get(o.index())? == 1 {
                        return None;
                    }
                    if state[o.index()] == 0 {
                        stack.push((o, false));
                    }
                }
            }
        }
        let mut p = Prog {
            nodes: Vec::with_capacity(order.len()),
            deps: Vec::with_capacity(order.len()),
            param_types: vec![PrimitiveType::Pred; nparams],
            consts: Vec::new(),
            const_keys: Vec::new(),
            outputs: Vec::new(),
            output_types: Vec::new(),
            tuple_root: false,
            param_nodes: vec![0; nparams],
            ops: Vec::new(),
        };
        let mut seen_params = vec![false; nparams];
        let mut types: Vec<PrimitiveType> = Vec::with_capacity(order.len());
        for &id in &order {
            let instr = comp.get(id)?;
            if id == root && instr.opcode == Opcode::Tuple {
                continue;
            }
            if instr.shape.is_tuple() || !instr.shape.dims().is_empty() {
                return None;
            }
            let ty = instr.shape.element_type();
            if ty.is_complex() {
                return None;
            }
            let ops: Vec<usize> = instr
                .operands()
                .iter()
                .map(|o| slot[o.index()])
                .collect::<Option<_>>()?;
            let ty_of = |k: usize| types[ops[k]];
            let pred = PrimitiveType::Pred;
            let all_pred = ops.iter().all(|&o| types[o] == pred) && ty == pred;
            let (node, dep) = match (instr.opcode, ops.len()) {
                (Opcode::Parameter, 0) => {
                    let n = usize::try_from(instr.parameter_number()?).ok()?;
                    if n >= nparams || seen_params[n] {
                        return None;
                    }
                    seen_params[n] = true;
                    p.param_types[n] = ty;
                    (Node::Param(n), 1u64 << n)
                }
                (Opcode::Constant, 0) => {
                    let v = Value::from_literal(instr.literal()?).ok()?;
                    let a = (**v.as_array().ok()?).clone();
                    if a.ty != ty || a.len() != 1 || !a.dims.is_empty() {
                        return None;
                    }
                    p.const_keys.push(keys_of(&a)?[0]);
                    p.consts.push(a);
                    (Node::Const(p.consts.len() - 1), 0)
                }
                (Opcode::Compare, 2) => {
                    if ty != pred || ty_of(0) != ty_of(1) {
                        return None;
                    }
                    let d = instr.comparison_direction()?;
                    let t = instr
                        .comparison_type()
                        .unwrap_or_else(|| ComparisonType::default_for(ty_of(0)));
                    let node = Node::Cmp {
                        a: ops[0],
                        b: ops[1],
                        d,
                        t,
                        bits: ty_of(0).bit_width(),
                    };
                    (node, p.deps[ops[0]] | p.deps[ops[1]])
                }
                (Opcode::Select, 3) => {
                    if ty_of(0) != pred || ty_of(1) != ty || ty_of(2) != ty {
                        return None;
                    }
                    let node = Node::Select {
                        p: ops[0],
                        a: ops[1],
                        b: ops[2],
                    };
                    (node, p.deps[ops[0]] | p.deps[ops[1]] | p.deps[ops[2]])
                }
                (Opcode::And, 2) if all_pred => {
                    (Node::And(ops[0], ops[1]), p.deps[ops[0]] | p.deps[ops[1]])
                }
                (Opcode::Or, 2) if all_pred => {
                    (Node::Or(ops[0], ops[1]), p.deps[ops[0]] | p.deps[ops[1]])
                }
                (Opcode::Xor, 2) if all_pred => {
                    (Node::Xor(ops[0], ops[1]), p.deps[ops[0]] | p.deps[ops[1]])
                }
                (Opcode::Not, 1) if all_pred => (Node::Not(ops[0]), p.deps[ops[0]]),
                _ => return None,
            };
            slot[id.index()] = Some(p.nodes.len());
            match node {
                Node::Param(n) => p.param_nodes[n] = p.nodes.len(),
                Node::Const(_) => {}
                _ => p.ops.push(p.nodes.len()),
            }
            p.nodes.push(node);
            p.deps.push(dep);
            types.push(ty);
        }
        if seen_params.iter().any(|s| !s) {
            return None;
        }
        let r = comp.get(root)?;
        if r.opcode == Opcode::Tuple {
            p.tuple_root = true;
            for o in r.operands() {
                let s = slot[o.index()]?;
                p.outputs.push(s);
                p.output_types.push(types[s]);
            }
        } else {
            let s = slot[root.index()]?;
            p.outputs.push(s);
            p.output_types.push(types[s]);
        }
        Some(p)
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Runs node `i` with the values so far in `vals`.
    #[inline(always)]
    fn step(&self, i: usize, params: &[Val], vals: &mut [Val]) {
        let pv = |b: bool| Val {
            key: Key::P(b),
            src: Src::Computed,
        };
        let as_bool = |v: &Val| matches!(v.key, Key::P(true));
        vals[i] = match self.nodes[i] {
            Node::Param(n) => params[n],
            Node::Const(c) => Val {
                key: self.const_keys[c],
                src: Src::Const(c as u32),
            },
            Node::Cmp { a, b, d, t, bits } => {
                pv(dir_holds(d, key_order(vals[a].key, vals[b].key, t, bits)))
            }
            Node::Select { p, a, b } => {
                if as_bool(&vals[p]) {
                    vals[a]
                } else {
                    vals[b]
                }
            }
            Node::And(a, b) => pv(as_bool(&vals[a]) & as_bool(&vals[b])),
            Node::Or(a, b) => pv(as_bool(&vals[a]) | as_bool(&vals[b])),
            Node::Xor(a, b) => pv(as_bool(&vals[a]) ^ as_bool(&vals[b])),
            Node::Not(a) => pv(!as_bool(&vals[a])),
        };
    }

    /// Runs the nodes that compute, the parameters' values being in
    /// `vals[self.param_nodes[k]]` and the constants' where
    /// [`Prog::scratch`] put them.
    pub fn run_ops(&self, vals: &mut [Val]) {
        for &i in &self.ops {
            self.step(i, &[], vals);
        }
    }

    /// A scratch buffer for [`Prog::run_ops`], with the
    /// constants' values in place.
    pub fn scratch(&self) -> Vec<Val> {
        let mut vals = vec![
            Val {
                key: Key::P(false),
                src: Src::Computed,
            };
            self.nodes.len()
        ];
        for (i, n) in self.nodes.iter().enumerate() {
            if let Node::Const(c) = *n {
                vals[i] = Val {
                    key: self.const_keys[c],
                    src: Src::Const(c as u32),
                };
            }
        }
        vals
    }
}

/// A comparator program (`2 * n` parameters: element i of operand k is
/// parameter 2k, element j parameter 2k + 1; one pred result) over the
/// element keys of n arrays. What depends on element i alone (or j alone),
/// such as the canonicalisation of -0 and NaN, is computed once per
/// element; each comparison runs only the rest.
pub struct Comparator<'p> {
    prog: &'p Prog,
    /// Nodes run per comparison, in order.
    mixed: Vec<usize>,
    /// Nodes of element i alone (or constants) that `mixed` or the result
    /// read, and their values per element (`elems * left.len()`).
    left: Vec<usize>,
    left_vals: Vec<Val>,
    right: Vec<usize>,
    right_vals: Vec<Val>,
    result: usize,
}

impl<'p> Comparator<'p> {
    /// The comparator of `prog` on `xs` (all of one length), or None when
    /// its parameters or result do not fit them.
    pub fn new(prog: &'p Prog, xs: &[&Array]) -> Option<Comparator<'p>> {
        let n = xs.len();
        if prog.param_types.len() != 2 * n
            || prog.tuple_root
            || prog.outputs.len() != 1
            || prog.output_types[0] != PrimitiveType::Pred
            || n == 0
        {
            return None;
        }
        for (k, x) in xs.iter().enumerate() {
            if prog.param_types[2 * k] != x.ty || prog.param_types[2 * k + 1] != x.ty {
                return None;
            }
        }
        let len = xs[0].len();
        if xs.iter().any(|x| x.len() != len) {
            return None;
        }
        let keys: Vec<Vec<Key>> = xs.iter().map(|x| keys_of(x)).collect::<Option<_>>()?;
        let even: u64 = (0..n).map(|k| 1u64 << (2 * k)).sum();
        let odd = even << 1;
        let is_left = |i: usize| prog.deps[i] & odd == 0;
        let is_right = |i: usize| prog.deps[i] & even == 0 && prog.deps[i] != 0;
        let result = prog.outputs[0];
        let mixed: Vec<usize> = (0..prog.len())
            .filter(|&i| !is_left(i) && !is_right(i))
            .collect();
        // The precomputed nodes something per comparison reads.
        let mut needed = vec![false; prog.len()];
        needed[result] = true;
        for &i in &mixed {
            for o in operands(&prog.nodes[i]) {
                needed[o] = true;
            }
        }
        let left: Vec<usize> = (0..prog.len())
            .filter(|&i| needed[i] && is_left(i))
            .collect();
        let right: Vec<usize> = (0..prog.len())
            .filter(|&i| needed[i] && is_right(i))
            .collect();
        let side = |params_at: usize, keep: &[usize], pick: &dyn Fn(usize) -> bool| {
            let mut vals = prog.scratch();
            let mut params = vec![
                Val {
                    key: Key::P(false),
                    src: Src::Computed
                };
                2 * n
            ];
            let order: Vec<usize> = (0..prog.len()).filter(|&i| pick(i)).collect();
            let mut out = Vec::with_capacity(len * keep.len());
            for e in 0..len {
                for (k, ks) in keys.iter().enumerate() {
                    params[2 * k + params_at] = Val {
                        key: ks[e],
                        src: Src::Param((2 * k + params_at) as u32),
                    };
                }
                for &i in &order {
                    prog.step(i, &params, &mut vals);
                }
                out.extend(keep.iter().map(|&i| vals[i]));
            }
            out
        };
        // Constants are on the left; the right side's pass needs them too.
        let left_vals = side(0, &left, &|i| prog.deps[i] & odd == 0);
        let right_vals = side(1, &right, &|i| prog.deps[i] & even == 0);
        Some(Comparator {
            prog,
            mixed,
            left,
            left_vals,
            right,
            right_vals,
            result,
        })
    }

    /// A scratch buffer for [`Comparator::less`].
    pub fn scratch(&self) -> Vec<Val> {
        self.prog.scratch()
    }

    /// The comparator on elements i and j.
    #[inline]
    pub fn less(&self, i: usize, j: usize, vals: &mut [Val]) -> bool {
        let (nl, nr) = (self.left.len(), self.right.len());
        for (s, &node) in self.left.iter().enumerate() {
            vals[node] = self.left_vals[i * nl + s];
        }
        for (s, &node) in self.right.iter().enumerate() {
            vals[node] = self.right_vals[j * nr + s];
        }
        for &node in &self.mixed {
            self.prog.step(node, &[], vals);
        }
        matches!(vals[self.result].key, Key::P(true))
    }
}

fn operands(n: &Node) -> Vec<usize> {
    match *n {
        Node::Param(_) | Node::Const(_) => vec![],
        Node::Cmp { a, b, .. } => vec![a, b],
        Node::Select { p, a, b } => vec![p, a, b],
        Node::And(a, b) | Node::Or(a, b) | Node::Xor(a, b) => vec![a, b],
        Node::Not(a) => vec![a],
    }
}

/// How a pair of keys of one type compare under a non-total-order
/// `compare`: 0 both NaN, 1 only the first, 2 only the second, 3 less,
/// 4 equal, 5 greater. Every compare direction on the pair is a function
/// of this class (integers only have 3-5).
pub trait PairClass: Copy {
    fn class(a: Self, b: Self) -> usize;
}

impl PairClass for f64 {
    #[inline(always)]
    fn class(a: f64, b: f64) -> usize {
        match (a.is_nan(), b.is_nan()) {
            (true, true) => 0,
            (true, false) => 1,
            (false, true) => 2,
            _ if a < b => 3,
            _ if a == b => 4,
            _ => 5,
        }
    }
}

impl PairClass for i64 {
    #[inline(always)]
    fn class(a: i64, b: i64) -> usize {
        (a.cmp(&b) as i32 + 4) as usize
    }
}

impl PairClass for u64 {
    #[inline(always)]
    fn class(a: u64, b: u64) -> usize {
        (a.cmp(&b) as i32 + 4) as usize
    }
}

/// A two-operand reducer (accumulators: parameters 0 and 1, elements 2 and
/// 3) as a table: `take[6 * c0 + c1]` says, for the classes of
/// (accumulator, element) of operand 0 and of operand 1, which of the two
/// each result is (bit k set: result k is element k, else accumulator k).
///
/// Exact for the programs [`Prog::pair_table`] accepts: without constants
/// and with every compare between two parameters of one operand under its
/// type's plain order, every node's value, and so which parameter each
/// result passes through, depends only on those two classes; the table is
/// filled by running the program on one representative of each.
pub struct PairTable {
    pub take: [u8; 36],
}

impl Prog {
    /// The [`PairTable`] of a reducer of two operands such as JAX's
    /// argmax/argmin (the max or min with NaN first and the lowest index
    /// on ties), or None when the program is not of that kind.
    pub fn pair_table(&self) -> Option<PairTable> {
        if self.param_types.len() != 4 || self.outputs.len() != 2 || !self.tuple_root {
            return None;
        }
        for k in 0..2 {
            let ty = self.param_types[k];
            if self.param_types[k + 2] != ty || self.output_types[k] != ty {
                return None;
            }
            if !(ty.is_float() || ty.is_signed_int() || ty.is_unsigned_int()) {
                return None;
            }
        }
        for node in &self.nodes {
            match *node {
                Node::Const(_) => return None,
                Node::Cmp { a, b, t, .. } => {
                    let (Node::Param(pa), Node::Param(pb)) = (self.nodes[a], self.nodes[b]) else {
                        return None;
                    };
                    if pa % 2 != pb % 2 {
                        return None;
                    }
                    let ty = self.param_types[pa];
                    let plain = if ty.is_float() {
                        t != ComparisonType::TotalOrder
                    } else if ty.is_signed_int() {
                        t != ComparisonType::Unsigned
                    } else {
                        t != ComparisonType::Signed
                    };
                    if !plain {
                        return None;
                    }
                }
                _ => {}
            }
        }
        // Representatives of the classes: (accumulator, element) pairs.
        let pairs = |ty: PrimitiveType| -> Vec<(Key, Key, usize)> {
            let reps: Vec<f64> = if ty.is_float() {
                vec![f64::NAN, 1.0, 2.0]
            } else {
                vec![1.0, 2.0]
            };
            let key = |v: f64| {
                if ty.is_float() {
                    Key::F(v)
                } else if ty.is_signed_int() {
                    Key::S(v as i64)
                } else {
                    Key::U(v as u64)
                }
            };
            let mut out = Vec::new();
            for &a in &reps {
                for &b in &reps {
                    out.push((key(a), key(b), PairClass::class(a, b)));
                }
            }
            out
        };
        let mut take = [0u8; 36];
        let mut seen = [false; 36];
        let mut vals = self.scratch();
        for (a0, e0, c0) in pairs(self.param_types[0]) {
            for (a1, e1, c1) in pairs(self.param_types[1]) {
                for (p, key) in [a0, a1, e0, e1].into_iter().enumerate() {
                    vals[self.param_nodes[p]] = Val {
                        key,
                        src: Src::Param(p as u32),
                    };
                }
                self.run_ops(&mut vals);
                let mut bits = 0u8;
                for k in 0..2 {
                    match vals[self.outputs[k]].src {
                        Src::Param(p) if p as usize == k => {}
                        Src::Param(p) if p as usize == k + 2 => bits |= 1 << k,
                        _ => return None,
                    }
                }
                let c = 6 * c0 + c1;
                if seen[c] && take[c] != bits {
                    return None;
                }
                seen[c] = true;
                take[c] = bits;
            }
        }
        Some(PairTable { take })
    }
}
