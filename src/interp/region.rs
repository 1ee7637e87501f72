//! Checking a pass on the region of each computation it changed, for
//! modules too large to evaluate whole (a Llama-2 7B training step holds
//! arrays of 5e11 elements).
//!
//! The region is found by comparing a computation before and after the
//! pass: an instruction that kept its name, opcode, shape, attributes and
//! payload is *unchanged*; the others (removed, added, changed) make up the
//! region of each side. Where an unchanged instruction (or the root) reads
//! different values on the two sides, those two values are a pair of
//! region *outputs*; the unchanged instructions the regions read are their
//! *inputs*. Both sides become a small module over the same parameters,
//! evaluated on the same seeded inputs, and each output pair is compared.
//!
//! A region whose arrays are too large to evaluate is *sliced*: each
//! dimension that every op of both sides treats slice by slice (the batch
//! and head dimensions around a softmax: elementwise ops, broadcasts,
//! transposes, reduces over other dimensions, the softmax calls away from
//! their axis) shrinks to [`SLICE`]. A dimension an op mixes (reduced, the
//! softmax axis, anything under an op this analysis does not know) keeps
//! its size, so a sliced region computes exactly a slice of the real one.

use super::budget::{estimate, Budget};
use super::compare::{check_rtol, compare_with, OutputRow};
use super::custom::config_axis;
use super::{evaluate_with, random::random_inputs, ErrorKind, EvalOptions, Result};
use crate::ir::{CompId, Computation, InstrId, Instruction, Module, Opcode, Payload, Shape};
use crate::util::{FxMap, FxSet};
use std::sync::Arc;

/// A region is sliced when one of its arrays has more elements than this.
const SLICE_ABOVE: i64 = 1 << 22;
/// The size a sliced dimension shrinks to: two slices, so a rewrite that
/// mixed them would show.
const SLICE: i64 = 2;

/// What the check of one changed computation found.
#[derive(Debug)]
pub struct RegionCheck {
    pub computation: String,
    /// Instructions in the region before and after the pass.
    pub before_size: usize,
    pub after_size: usize,
    /// `Some("f32[1024,32,4096,4096] -> f32[2,2,2,4096], ...")` when sliced.
    pub sliced: Option<String>,
    /// One row per output pair, named `after-name/before-name`.
    pub rows: Vec<OutputRow>,
    /// Why the region could not be checked: it holds something the
    /// interpreter does not evaluate ([`ErrorKind::Unsupported`]). Its
    /// rows are then empty.
    pub unchecked: Option<String>,
}

impl RegionCheck {
    /// One line: where, how large, how sliced.
    pub fn describe(&self) -> String {
        format!(
            "region of {}: {}, {} output(s){}",
            self.computation,
            self.sizes(),
            self.rows.len(),
            self.how_checked()
        )
    }

    /// `N instruction(s) before, M after`.
    pub fn sizes(&self) -> String {
        format!(
            "{} instruction(s) before, {} after",
            self.before_size, self.after_size
        )
    }

    /// How it was sliced, and whether it could not be checked at all, as
    /// the end of a description.
    pub fn how_checked(&self) -> String {
        let mut s = String::new();
        if let Some(sliced) = &self.sliced {
            s.push_str(&format!(", sliced {sliced}"));
        }
        if let Some(why) = &self.unchecked {
            s.push_str(&format!(", UNCHECKED: {why}"));
        }
        s
    }
}

/// Checks every computation `after` shares (by name) with `before`.
pub fn check_regions(
    before: &Module,
    after: &Module,
    seed: u64,
    tolerance_scale: f64,
) -> Result<Vec<RegionCheck>> {
    check_regions_with(
        before,
        after,
        seed,
        tolerance_scale,
        &EvalOptions::default(),
        &Budget::unlimited(),
    )
}

/// [`check_regions`], evaluating under `options` (limits, a cancel hook),
/// refusing a region whose two evaluations need more memory than
/// `budget`.
pub fn check_regions_with(
    before: &Module,
    after: &Module,
    seed: u64,
    tolerance_scale: f64,
    options: &EvalOptions,
    budget: &Budget,
) -> Result<Vec<RegionCheck>> {
    let mut checks = Vec::new();
    let before_comps = before.computations_by_name();
    for (ca, comp) in after.computations() {
        let Some(&cb) = before_comps.get(&*comp.name) else {
            continue;
        };
        if let Some(diff) = Diff::new(before, cb, after, ca) {
            checks.push(diff.check(seed, tolerance_scale, options, budget)?);
        }
    }
    Ok(checks)
}

/// One side (before or after) of a changed computation.
pub(super) struct Side<'m> {
    pub(super) module: &'m Module,
    pub(super) comp: CompId,
    /// The region, operands first.
    pub(super) region: Vec<InstrId>,
}

impl Side<'_> {
    pub(super) fn computation(&self) -> &Computation {
        self.module.comp(self.comp)
    }
}

pub(super) struct Diff<'m> {
    pub(super) before: Side<'m>,
    pub(super) after: Side<'m>,
    /// Unchanged instructions the regions read: (after id, before id).
    pub(super) inputs: Vec<(InstrId, InstrId)>,
    /// Values compared: (after id, before id).
    pub(super) outputs: Vec<(InstrId, InstrId)>,
}

impl<'m> Diff<'m> {
    /// `None` when the pass left the computation as it was.
    pub(super) fn new(
        before: &'m Module,
        cb: CompId,
        after: &'m Module,
        ca: CompId,
    ) -> Option<Diff<'m>> {
        let (b, a) = (before.comp(cb), after.comp(ca));
        let b_by_name: FxMap<&str, InstrId> =
            b.instructions().map(|(id, i)| (&*i.name, id)).collect();
        // Unchanged instructions: after id -> before id, and back.
        let mut same: FxMap<InstrId, InstrId> = FxMap::default();
        let mut same_back: FxMap<InstrId, InstrId> = FxMap::default();
        for (id, ia) in a.instructions() {
            if let Some(&bid) = b_by_name.get(&*ia.name) {
                if same_signature(ia, b.instr(bid)) {
                    same.insert(id, bid);
                    same_back.insert(bid, id);
                }
            }
        }
        let reads_same = |ao: InstrId, bo: InstrId| same.get(&ao) == Some(&bo);
        let mut outputs = Vec::new();
        let mut seen = FxSet::default();
        for id in a.post_order() {
            let Some(&bid) = same.get(&id) else { continue };
            let pairs = a.instr(id).operands().iter().zip(b.instr(bid).operands());
            for (&ao, &bo) in pairs {
                if !reads_same(ao, bo) && seen.insert((ao, bo)) {
                    outputs.push((ao, bo));
                }
            }
        }
        let (ar, br) = (a.root(), b.root());
        if !reads_same(ar, br) && seen.insert((ar, br)) {
            outputs.push((ar, br));
        }
        if outputs.is_empty() {
            return None;
        }
        // Each region: what the outputs read, back to unchanged instructions.
        let mut inputs = Vec::new();
        let mut input_seen = FxSet::default();
        let mut add_input = |pair: (InstrId, InstrId)| {
            if input_seen.insert(pair) {
                inputs.push(pair);
            }
        };
        // A small constant (or a broadcast of one) is computed inside the
        // region, not given: a seeded value in its place (a max's -inf
        // start) would make the two sides differ where the program never
        // does.
        let after_region = region_of(
            a,
            None,
            outputs.iter().map(|o| o.0),
            |id| {
                (!constant_expression(a, id))
                    .then(|| same.get(&id).map(|&bid| (id, bid)))
                    .flatten()
            },
            &mut add_input,
        );
        let before_region = region_of(
            b,
            None,
            outputs.iter().map(|o| o.1),
            |id| {
                (!constant_expression(b, id))
                    .then(|| same_back.get(&id).map(|&aid| (aid, id)))
                    .flatten()
            },
            &mut add_input,
        );
        Some(Diff {
            before: Side {
                module: before,
                comp: cb,
                region: before_region,
            },
            after: Side {
                module: after,
                comp: ca,
                region: after_region,
            },
            inputs,
            outputs,
        })
    }

    fn check(
        &self,
        seed: u64,
        tolerance_scale: f64,
        options: &EvalOptions,
        budget: &Budget,
    ) -> Result<RegionCheck> {
        let dims = DimClasses::analyse(self);
        let sliced = dims.needs_slicing(self);
        let shape = |side: Which, id: InstrId| -> Arc<Shape> {
            let s = match side {
                Which::After => self.after.computation(),
                Which::Before => self.before.computation(),
            };
            let shape = &s.instr(id).shape;
            if sliced {
                dims.sliced_shape(side, id, shape)
            } else {
                shape.clone()
            }
        };
        let after_inputs: Vec<InstrId> = self.inputs.iter().map(|p| p.0).collect();
        let before_inputs: Vec<InstrId> = self.inputs.iter().map(|p| p.1).collect();
        let after_outputs: Vec<InstrId> = self.outputs.iter().map(|p| p.0).collect();
        let before_outputs: Vec<InstrId> = self.outputs.iter().map(|p| p.1).collect();
        let after_module = region_module(&self.after, &after_inputs, &after_outputs, |id| {
            shape(Which::After, id)
        });
        let before_module = region_module(&self.before, &before_inputs, &before_outputs, |id| {
            shape(Which::Before, id)
        });
        let (a, b) = (self.after.computation(), self.before.computation());
        // The region before the pass and its outputs are held while the
        // region after it runs, and both are compared in f64.
        let (need_before, need_after) = (estimate(&before_module), estimate(&after_module));
        let total = need_before
            .peak
            .saturating_add(need_after.peak)
            .saturating_add(need_before.largest_output.saturating_mul(16));
        budget.check(
            &format!("checking the region of {} changed", a.name),
            total,
            if need_before.peak >= need_after.peak {
                &need_before
            } else {
                &need_after
            },
        )?;
        let evaluated = random_inputs(&before_module, seed).and_then(|inputs| {
            let want = evaluate_with(&before_module, &inputs, options)
                .map_err(|e| side_error(e, "before the pass"))?;
            let got = evaluate_with(&after_module, &inputs, options)
                .map_err(|e| side_error(e, "after the pass"))?;
            Ok((want.leaves(), got.leaves()))
        });
        let (want, got) = match evaluated {
            Ok(v) => v,
            // A region holding what the interpreter lacks is reported
            // unchecked, by name; anything else is an error.
            Err(e) if e.kind == ErrorKind::Unsupported => {
                return Ok(RegionCheck {
                    computation: a.name.to_string(),
                    before_size: self.before.region.len(),
                    after_size: self.after.region.len(),
                    sliced: None,
                    rows: Vec::new(),
                    unchecked: Some(e.to_string()),
                })
            }
            Err(e) => return Err(e),
        };
        let rows = self
            .outputs
            .iter()
            .zip(want.iter().zip(&got))
            .map(|(&(ao, bo), (want, got))| OutputRow {
                name: format!("{}/{}", a.instr(ao).name, b.instr(bo).name),
                shape: want.shape_text(),
                diff: compare_with(got, want, check_rtol(want.ty) * tolerance_scale),
            })
            .collect();
        let sliced = sliced.then(|| {
            let mut seen = FxSet::default();
            let mut parts = Vec::new();
            for &(aid, _) in &self.inputs {
                let full = a.instr(aid).shape.to_text(false);
                let small = shape(Which::After, aid).to_text(false);
                if full != small && seen.insert(full.clone()) {
                    parts.push(format!("{full} -> {small}"));
                }
            }
            parts.join(", ")
        });
        Ok(RegionCheck {
            computation: a.name.to_string(),
            before_size: self.before.region.len(),
            after_size: self.after.region.len(),
            sliced,
            rows,
            unchecked: None,
        })
    }
}

/// Says which side of the pass a region failed on.
pub(super) fn side_error(mut e: super::EvalError, side: &str) -> super::EvalError {
    e.message = format!("{} (the region {side})", e.message);
    e
}

/// The changed instructions `outputs` depend on, operands first (in the
/// order of `within`, a post order of `comp` holding them all, when given:
/// a part of a region already ordered, cheaper than ordering the whole
/// computation again); reports each unchanged instruction it reaches
/// (`unchanged` gives its input pair) to `add_input`.
pub(super) fn region_of(
    comp: &Computation,
    within: Option<&[InstrId]>,
    outputs: impl Iterator<Item = InstrId>,
    unchanged: impl Fn(InstrId) -> Option<(InstrId, InstrId)>,
    add_input: &mut impl FnMut((InstrId, InstrId)),
) -> Vec<InstrId> {
    let mut in_region = FxSet::default();
    let mut stack: Vec<InstrId> = Vec::new();
    for id in outputs {
        match unchanged(id) {
            Some(pair) => add_input(pair),
            None => stack.push(id),
        }
    }
    while let Some(id) = stack.pop() {
        if !in_region.insert(id) {
            continue;
        }
        for &op in comp.instr(id).operands() {
            match unchanged(op) {
                Some(pair) => add_input(pair),
                None => stack.push(op),
            }
        }
    }
    if let Some(order) = within {
        let ordered: Vec<InstrId> = order
            .iter()
            .copied()
            .filter(|id| in_region.contains(id))
            .collect();
        if ordered.len() == in_region.len() {
            return ordered;
        }
    }
    comp.post_order()
        .into_iter()
        .filter(|id| in_region.contains(id))
        .collect()
}

/// Whether `id` is a small constant, or a broadcast, reshape or convert
/// of one: a value no input changes.
pub(super) fn constant_expression(comp: &Computation, id: InstrId) -> bool {
    const SMALL: i64 = 16;
    let instr = comp.instr(id);
    match instr.opcode {
        Opcode::Constant => instr
            .shape
            .as_array()
            .is_some_and(|s| s.element_count() <= SMALL),
        Opcode::Broadcast | Opcode::Reshape | Opcode::Convert => instr
            .operands()
            .first()
            .is_some_and(|&o| constant_expression(comp, o)),
        _ => false,
    }
}

/// Same name aside, does `a` compute what `b` does from the same operands?
pub(crate) fn same_signature(a: &Instruction, b: &Instruction) -> bool {
    let payload = match (&a.payload, &b.payload) {
        (Payload::None, Payload::None) => true,
        (Payload::Parameter(x), Payload::Parameter(y)) => x == y,
        // NaN elements are not equal to themselves: the same literal
        // prints the same.
        (Payload::Constant(x), Payload::Constant(y)) => {
            x == y || format!("{x:?}") == format!("{y:?}")
        }
        _ => false,
    };
    a.opcode == b.opcode
        && a.async_wrapped == b.async_wrapped
        && a.shape == b.shape
        && a.operands().len() == b.operands().len()
        && a.attrs == b.attrs
        && payload
}

/// A small module: the side's computation cut down to its region, with a
/// parameter per input and a tuple of the outputs as root. The rest of the
/// module is kept for the computations the region calls.
pub(super) fn region_module(
    side: &Side,
    inputs: &[InstrId],
    outputs: &[InstrId],
    shape: impl Fn(InstrId) -> Arc<Shape>,
) -> Module {
    let src = side.computation();
    // Only the computations the region calls, and theirs.
    let mut keep: FxSet<CompId> = FxSet::default();
    let mut stack: Vec<CompId> = side
        .region
        .iter()
        .flat_map(|&id| src.instr(id).called_computations())
        .collect();
    while let Some(c) = stack.pop() {
        if keep.insert(c) {
            let comp = side.module.comp(c);
            stack.extend(
                comp.instructions()
                    .flat_map(|(_, i)| i.called_computations()),
            );
        }
    }
    let mut module = side.module.clone_only(&keep);
    // The header describes the whole program's entry, not the region's.
    module.header.retain(|a| {
        !matches!(
            &*a.key,
            "entry_computation_layout" | "input_output_alias" | "buffer_donor"
        )
    });
    let mut comp = Computation::new("region");
    let mut map: FxMap<InstrId, InstrId> = FxMap::default();
    for (i, &id) in inputs.iter().enumerate() {
        let mut param = Instruction::new(src.instr(id).name.clone(), Opcode::Parameter, shape(id));
        param.payload = Payload::Parameter(i as i64);
        map.insert(id, comp.push(param));
    }
    for &id in &side.region {
        let instr = src.instr(id);
        let mut copy = instr.clone_with_operands(instr.operands().iter().map(|o| map[o]));
        copy.shape = shape(id);
        map.insert(id, comp.push(copy));
    }
    let outs: Vec<InstrId> = outputs.iter().map(|o| map[o]).collect();
    let tuple_shape = Shape::Tuple(
        outs.iter()
            .map(|&o| (*comp.instr(o).shape).clone())
            .collect(),
    );
    let root = comp
        .push(Instruction::new("region.outputs", Opcode::Tuple, tuple_shape).with_operands(outs));
    comp.set_root(root);
    let id = module.add_computation(comp);
    module.set_entry(id);
    module
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Which {
    Before,
    After,
}

/// Which dimensions of the two regions can shrink together: a union-find
/// over dimension classes.
pub(super) struct DimClasses {
    parent: Vec<usize>,
    size: Vec<i64>,
    pinned: Vec<bool>,
    of: FxMap<(Which, InstrId), Vec<usize>>,
    /// The dimensions of each value `of` has classes for.
    shape_of: FxMap<(Which, InstrId), Vec<i64>>,
}

impl DimClasses {
    pub(super) fn analyse(diff: &Diff) -> DimClasses {
        let mut dc = DimClasses {
            parent: Vec::new(),
            size: Vec::new(),
            pinned: Vec::new(),
            of: FxMap::default(),
            shape_of: FxMap::default(),
        };
        let dims = |s: &Shape| s.as_array().map(|a| a.dims.clone()).unwrap_or_default();
        let a = diff.after.computation();
        for &(aid, bid) in &diff.inputs {
            let classes = dc.fresh(&a.instr(aid).shape);
            dc.of.insert((Which::Before, bid), classes.clone());
            dc.of.insert((Which::After, aid), classes);
            let d = dims(&a.instr(aid).shape);
            dc.shape_of.insert((Which::Before, bid), d.clone());
            dc.shape_of.insert((Which::After, aid), d);
        }
        for (which, side) in [(Which::Before, &diff.before), (Which::After, &diff.after)] {
            let comp = side.computation();
            for &id in &side.region {
                let classes = dc.propagate(which, comp.instr(id));
                dc.of.insert((which, id), classes);
                dc.shape_of.insert((which, id), dims(&comp.instr(id).shape));
            }
        }
        // The two values of an output pair are the same array.
        for &(aid, bid) in &diff.outputs {
            let x = dc.of.get(&(Which::After, aid)).cloned().unwrap_or_default();
            let y = dc
                .of
                .get(&(Which::Before, bid))
                .cloned()
                .unwrap_or_default();
            dc.union_all(&x, &y);
        }
        // Each class straight to its root: `root` (for `&self`) would
        // otherwise walk chains as long as the region.
        for c in 0..dc.parent.len() {
            dc.parent[c] = dc.find(c);
        }
        dc
    }

    fn fresh(&mut self, shape: &Shape) -> Vec<usize> {
        shape
            .as_array()
            .map(|a| {
                a.dims
                    .iter()
                    .map(|&n| {
                        self.parent.push(self.parent.len());
                        self.size.push(n);
                        // A dynamic dimension keeps its size: its bound is
                        // part of the program.
                        self.pinned.push(a.dynamic.iter().any(|&d| d));
                        self.parent.len() - 1
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    fn find(&mut self, mut c: usize) -> usize {
        while self.parent[c] != c {
            self.parent[c] = self.parent[self.parent[c]];
            c = self.parent[c];
        }
        c
    }

    fn union(&mut self, x: usize, y: usize) {
        let (x, y) = (self.find(x), self.find(y));
        if x == y {
            return;
        }
        self.parent[y] = x;
        // Dimensions of different sizes are not one dimension; keep both.
        self.pinned[x] |= self.pinned[y] || self.size[x] != self.size[y];
    }

    fn union_all(&mut self, xs: &[usize], ys: &[usize]) {
        if xs.len() != ys.len() {
            self.pin_all(xs);
            self.pin_all(ys);
            return;
        }
        for (&x, &y) in xs.iter().zip(ys) {
            self.union(x, y);
        }
    }

    fn pin(&mut self, c: usize) {
        let r = self.find(c);
        self.pinned[r] = true;
    }

    fn pin_all(&mut self, cs: &[usize]) {
        for &c in cs {
            self.pin(c);
        }
    }

    /// The classes of `instr`'s result, from its operands' by the op's rule.
    fn propagate(&mut self, which: Which, instr: &Instruction) -> Vec<usize> {
        let ops: Vec<Vec<usize>> = instr
            .operands()
            .iter()
            .map(|o| self.of.get(&(which, *o)).cloned().unwrap_or_default())
            .collect();
        let result = self.fresh(&instr.shape);
        let rank = result.len();
        let ok = instr.shape.as_array().is_some()
            && match instr.opcode {
                op if op.is_elementwise_unary()
                    || op.is_elementwise_binary()
                    || matches!(
                        op,
                        Opcode::Convert | Opcode::Compare | Opcode::Select | Opcode::Clamp
                    ) =>
                {
                    // Scalar operands (a clamp's bounds) broadcast.
                    for o in ops.iter().filter(|o| !o.is_empty()) {
                        self.union_all(&result, o);
                    }
                    true
                }
                Opcode::Broadcast => match (instr.dimensions(), ops.first()) {
                    (Some(dims), Some(o)) if dims.len() == o.len() => {
                        for (&d, &c) in dims.iter().zip(o) {
                            if let Some(&r) = result.get(d as usize) {
                                self.union(r, c);
                            }
                        }
                        true
                    }
                    _ => false,
                },
                // A reshape that only adds or drops dimensions of size 1
                // keeps the others, in order (JAX's broadcast_in_dim).
                Opcode::Reshape => match (instr.shape.as_array(), ops.first()) {
                    (Some(r), Some(o)) => {
                        let operand_dims = instr
                            .operands()
                            .first()
                            .and_then(|&id| self.shape_of.get(&(which, id)).cloned())
                            .unwrap_or_default();
                        let keep = |dims: &[i64], classes: &[usize]| -> Vec<(i64, usize)> {
                            dims.iter()
                                .zip(classes)
                                .filter(|(&n, _)| n != 1)
                                .map(|(&n, &c)| (n, c))
                                .collect()
                        };
                        let (x, y) = (keep(&r.dims, &result), keep(&operand_dims, o));
                        let same = x.len() == y.len() && x.iter().zip(&y).all(|(a, b)| a.0 == b.0);
                        if same {
                            for (a, b) in x.iter().zip(&y) {
                                self.union(a.1, b.1);
                            }
                        }
                        same
                    }
                    _ => false,
                },
                Opcode::Transpose => match (instr.dimensions(), ops.first()) {
                    (Some(perm), Some(o)) if perm.len() == rank && o.len() == rank => {
                        for (i, &p) in perm.iter().enumerate() {
                            self.union(result[i], o[p as usize]);
                        }
                        true
                    }
                    _ => false,
                },
                Opcode::Reduce if ops.len() == 2 => match instr.dimensions() {
                    Some(reduced) => {
                        let kept: Vec<usize> = ops[0]
                            .iter()
                            .enumerate()
                            .filter(|(d, _)| !reduced.contains(&(*d as i64)))
                            .map(|(_, &c)| c)
                            .collect();
                        for &d in reduced {
                            if let Some(&c) = ops[0].get(d as usize) {
                                self.pin(c);
                            }
                        }
                        self.union_all(&result, &kept);
                        true
                    }
                    None => false,
                },
                Opcode::CustomCall => self.softmax_call(instr, &ops, &result),
                _ => false,
            };
        if !ok {
            for o in &ops {
                self.pin_all(o);
            }
            self.pin_all(&result);
        }
        result
    }

    /// A softmax (or its gradient) works row by row along its axis; the
    /// legalized form's index operand spans the minor dimension.
    fn softmax_call(&mut self, instr: &Instruction, ops: &[Vec<usize>], result: &[usize]) -> bool {
        let data = match instr.custom_call_target() {
            Some("AwsNeuronSoftmax") => 1,
            Some("AwsNeuronSoftmaxBackward") => 2,
            _ => return false,
        };
        let rank = result.len();
        let Ok(axis) = config_axis(instr.backend_config()) else {
            return false;
        };
        if rank == 0 || ops.len() < data || axis < -(rank as i64) || axis >= rank as i64 {
            return false;
        }
        for o in &ops[..data] {
            self.union_all(result, o);
        }
        for o in &ops[data..] {
            self.pin_all(o);
        }
        self.pin(result[axis.rem_euclid(rank as i64) as usize]);
        self.pin(result[rank - 1]);
        true
    }

    /// Whether some array of the region is too large to evaluate as is.
    pub(super) fn needs_slicing(&self, diff: &Diff) -> bool {
        let big = |s: &Shape| {
            s.as_array()
                .is_some_and(|a| a.element_count() > SLICE_ABOVE)
        };
        let (a, b) = (diff.after.computation(), diff.before.computation());
        diff.inputs.iter().any(|&(aid, _)| big(&a.instr(aid).shape))
            || diff.after.region.iter().any(|&id| big(&a.instr(id).shape))
            || diff.before.region.iter().any(|&id| big(&b.instr(id).shape))
    }

    pub(super) fn sliced_shape(&self, which: Which, id: InstrId, shape: &Arc<Shape>) -> Arc<Shape> {
        let (Some(classes), Some(array)) = (self.of.get(&(which, id)), shape.as_array()) else {
            return shape.clone();
        };
        let mut array = array.clone();
        for (dim, &c) in array.dims.iter_mut().zip(classes) {
            let r = self.root(c);
            if !self.pinned[r] && *dim > SLICE {
                *dim = SLICE;
            }
        }
        Arc::new(Shape::Array(array))
    }

    /// `find` without path compression, for `&self`.
    fn root(&self, mut c: usize) -> usize {
        while self.parent[c] != c {
            c = self.parent[c];
        }
        c
    }
}
