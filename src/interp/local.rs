//! `--check-numerics`' local proof: each rewrite a pass made, checked
//! where it happened. The changed region of a computation (`region.rs`)
//! is split into its rewrites (the parts no changed instruction connects);
//! each is evaluated before and after the pass on the same values: the
//! region's real inputs (kept while the module before the passes was
//! evaluated, [`super::capture`]) or, where there are none, seeded ones,
//! and on a few extremes made from them (large values, -inf masks, equal
//! rows). The outputs are compared with a tolerance that comes from the
//! region's own operations ([`LocalTolerance`], docs/interpreter.md).

use super::array::{Array, Value};
use super::budget::{estimate, Budget};
use super::compare::{compare_scaled, max_finite, Diff, OutputRow};
use super::convert::from_f64_vec;
use super::region::{
    constant_expression, region_module, region_of, side_error, Diff as RegionDiff, DimClasses,
    RegionCheck, Side, Which,
};
use super::{evaluate_with, random::random_inputs, ErrorKind, EvalOptions, Result};
use crate::ir::{CompId, Computation, InstrId, Module, Opcode, PrimitiveType, Shape};
use crate::util::{FxMap, FxSet};
use std::sync::Arc;

/// Units in the last place (of 1.0, in the output's type) each rounding
/// step of a region may contribute.
pub const ULPS_PER_STEP: f64 = 2.0;

/// The largest array the extremes are run on (a slice of the region's).
pub const EXTREMES_MAX_ELEMENTS: usize = 1 << 16;

/// The most instructions [`Rewrite::widen`] moves into a region.
pub const WIDEN_LIMIT: usize = 64;

/// The largest magnitude of the large-values extreme (logits this large
/// make a softmax nearly one-hot).
const LARGE: f64 = 64.0;

/// One rewrite of a pass: the part of a computation's changed region that
/// computes one set of outputs.
pub struct Rewrite<'m> {
    diff: RegionDiff<'m>,
    /// [`Rewrite::is_local`], found once the rewrite is.
    local: bool,
    /// The instruction the pass's report names (else the first output's).
    pub name: String,
    pub computation: String,
}

/// Every rewrite `after` holds against `before`, per computation in
/// `after`'s order. `reported` is the pass's report: (computation,
/// instruction) of each rewrite, which names the rewrites found.
pub fn rewrites<'m>(
    before: &'m Module,
    after: &'m Module,
    reported: &[(String, String)],
) -> Vec<Rewrite<'m>> {
    let mut out = Vec::new();
    let reported: FxSet<(&str, &str)> = reported
        .iter()
        .map(|(c, i)| (c.as_str(), i.as_str()))
        .collect();
    let comps = (before.computations_by_name(), after.computations_by_name());
    for (ca, comp) in after.computations() {
        let Some(&cb) = comps.0.get(&*comp.name) else {
            continue;
        };
        let Some(diff) = RegionDiff::new(before, cb, after, ca) else {
            continue;
        };
        // The outputs a local check can compare (one shape on both
        // sides) apart from the rest (a changed tuple of residuals):
        // those are checked where they are, the rest by the whole module.
        let parts = split(diff).into_iter().flat_map(|part| {
            let (a, b) = (part.after.computation(), part.before.computation());
            let (local, other): (Vec<_>, Vec<_>) = part
                .outputs
                .iter()
                .partition(|&&(ao, bo)| a.instr(ao).shape == b.instr(bo).shape);
            if local.is_empty() || other.is_empty() {
                vec![part]
            } else {
                vec![part_of(&part, local), part_of(&part, other)]
            }
        });
        for part in parts {
            let (a, b) = (part.after.computation(), part.before.computation());
            let named = |id: InstrId, c: &Computation| {
                let name = &*c.instr(id).name;
                reported
                    .contains(&(&*c.name, name))
                    .then(|| name.to_string())
            };
            let name = part
                .before
                .region
                .iter()
                .find_map(|&id| named(id, b))
                .or_else(|| part.after.region.iter().find_map(|&id| named(id, a)))
                .unwrap_or_else(|| b.instr(part.outputs[0].1).name.to_string());
            let local = is_local(&part, &comps);
            out.push(Rewrite {
                name,
                computation: a.name.to_string(),
                diff: part,
                local,
            });
        }
    }
    out
}

/// A computation's region split into the parts that share no changed
/// instruction that reads an input (a constant, or a broadcast of one,
/// may be shared: it does not join two rewrites).
fn split(diff: RegionDiff<'_>) -> Vec<RegionDiff<'_>> {
    let n = diff.outputs.len();
    if n <= 1 {
        return vec![diff];
    }
    let (a, b) = (diff.after.computation(), diff.before.computation());
    let reads_input = |side: &Side, inputs: FxSet<InstrId>| -> FxSet<InstrId> {
        let comp = side.computation();
        let mut reads = FxSet::default();
        for &id in &side.region {
            if comp
                .instr(id)
                .operands()
                .iter()
                .any(|o| inputs.contains(o) || reads.contains(o))
            {
                reads.insert(id);
            }
        }
        reads
    };
    let in_after = reads_input(&diff.after, diff.inputs.iter().map(|p| p.0).collect());
    let in_before = reads_input(&diff.before, diff.inputs.iter().map(|p| p.1).collect());
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    // The output pair that first reached each changed instruction.
    let mut owner: FxMap<(Which, InstrId), usize> = FxMap::default();
    for (k, &(ao, bo)) in diff.outputs.iter().enumerate() {
        for (which, comp, start, region) in [
            (Which::After, a, ao, &in_after),
            (Which::Before, b, bo, &in_before),
        ] {
            let mut stack = vec![start];
            let mut seen = FxSet::default();
            while let Some(id) = stack.pop() {
                if !region.contains(&id) || !seen.insert(id) {
                    continue;
                }
                let instr = comp.instr(id);
                match owner.get(&(which, id)) {
                    Some(&o) => {
                        let (x, y) = (find(&mut parent, o), find(&mut parent, k));
                        parent[y] = x;
                    }
                    None => {
                        owner.insert((which, id), k);
                    }
                }
                stack.extend(instr.operands().iter().copied());
            }
        }
    }
    let mut groups: FxMap<usize, Vec<(InstrId, InstrId)>> = FxMap::default();
    let mut order = Vec::new();
    for k in 0..n {
        let r = find(&mut parent, k);
        if !groups.contains_key(&r) {
            order.push(r);
        }
        groups.entry(r).or_default().push(diff.outputs[k]);
    }
    if order.len() == 1 {
        return vec![diff];
    }
    order
        .into_iter()
        .map(|r| part_of(&diff, groups.remove(&r).unwrap_or_default()))
        .collect()
}

/// The part of `diff` that computes `outputs`.
fn part_of<'m>(diff: &RegionDiff<'m>, outputs: Vec<(InstrId, InstrId)>) -> RegionDiff<'m> {
    let (a, b) = (diff.after.computation(), diff.before.computation());
    let in_after: FxSet<InstrId> = diff.after.region.iter().copied().collect();
    let in_before: FxSet<InstrId> = diff.before.region.iter().copied().collect();
    // An input pair by either of its ids.
    let by_after: FxMap<InstrId, (InstrId, InstrId)> =
        diff.inputs.iter().map(|&p| (p.0, p)).collect();
    let by_before: FxMap<InstrId, (InstrId, InstrId)> =
        diff.inputs.iter().map(|&p| (p.1, p)).collect();
    let mut inputs = Vec::new();
    let mut seen = FxSet::default();
    let mut add = |p: (InstrId, InstrId)| {
        if seen.insert(p) {
            inputs.push(p);
        }
    };
    let after_region = region_of(
        a,
        Some(&diff.after.region),
        outputs.iter().map(|o| o.0),
        |id| {
            (!in_after.contains(&id))
                .then(|| by_after.get(&id).copied())
                .flatten()
        },
        &mut add,
    );
    let before_region = region_of(
        b,
        Some(&diff.before.region),
        outputs.iter().map(|o| o.1),
        |id| {
            (!in_before.contains(&id))
                .then(|| by_before.get(&id).copied())
                .flatten()
        },
        &mut add,
    );
    RegionDiff {
        before: Side {
            module: diff.before.module,
            comp: diff.before.comp,
            region: before_region,
        },
        after: Side {
            module: diff.after.module,
            comp: diff.after.comp,
            region: after_region,
        },
        inputs,
        outputs,
    }
}

/// The tolerance of a local check, from the region's operations: `rtol =
/// ULPS_PER_STEP * sum of 2^-mantissa` over the rounding steps of the
/// longest chain of either side, each step in its own result type (a
/// native form that rounds to bf16 midway gets bf16's ulp there).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LocalTolerance {
    pub steps: u32,
    pub rtol: f64,
    /// The scale errors were measured against when it is not the
    /// output's largest magnitude: the magnitude of what the native form
    /// sums (where it cancels).
    pub summed_scale: Option<f64>,
}

/// Where a local check's values came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inputs {
    /// Kept from the evaluation of the module before the passes.
    Real,
    /// Seeded: why there are no real ones.
    Seeded(String),
}

/// What the check of one rewrite found.
#[derive(Debug)]
pub struct LocalCheck {
    /// Where, how large, how sliced; one row per output, the worst case
    /// of every set of values; whether it holds what the interpreter does
    /// not evaluate.
    pub region: RegionCheck,
    /// The rewrite, by the instruction the pass's report names.
    pub name: String,
    pub inputs: Inputs,
    /// The extreme sets of values also checked.
    pub extremes: Vec<&'static str>,
    pub tolerance: Option<LocalTolerance>,
    /// The worst element of a failing row: which values, where, its
    /// inputs there.
    pub failure: Option<String>,
}

impl LocalCheck {
    /// One line: what was checked, on which values, within what.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "rewrite {} in {}: {}, ",
            self.name,
            self.region.computation,
            self.region.sizes()
        );
        match &self.inputs {
            Inputs::Real => s.push_str("real inputs"),
            Inputs::Seeded(why) => s.push_str(&format!("seeded inputs ({why})")),
        }
        if !self.extremes.is_empty() {
            s.push_str(&format!(" and {}", self.extremes.join(", ")));
        }
        if let Some(t) = &self.tolerance {
            s.push_str(&format!(
                ", {} rounding step(s): rtol {:.1e}",
                t.steps, t.rtol
            ));
            if let Some(m) = t.summed_scale {
                s.push_str(&format!(", scale {m:.3e} (the magnitude its sums add up)"));
            }
        }
        s.push_str(&self.region.how_checked());
        s
    }
}

impl Rewrite<'_> {
    /// Whether every output pair has one shape on both sides
    /// (a rewrite that reshapes the module's outputs, such as one more
    /// entry output, has no local check: the whole module is compared).
    pub fn is_local(&self) -> bool {
        self.local
    }

    /// Moves each input `has_value` refuses (an instruction an earlier
    /// pass made, so the module the values were kept from has none) into
    /// both sides of the region, back to inputs it accepts: the check then
    /// reads real values, the moved instructions evaluated alike on both
    /// sides. Gives up (leaving the region as it was) past
    /// [`WIDEN_LIMIT`] instructions or at one a region cannot hold.
    /// What it moves in is alike on both sides and neither a parameter
    /// nor a caller of anything but a reducer, so [`Rewrite::is_local`],
    /// found before, still holds.
    pub fn widen(&mut self, has_value: impl Fn(CompId, InstrId) -> bool) {
        let d = &self.diff;
        let comp = d.before.comp;
        let has_value = |id| has_value(comp, id);
        if d.inputs.iter().all(|p| has_value(p.1)) {
            return;
        }
        let (a, b) = (d.after.computation(), d.before.computation());
        let mut in_after: FxSet<InstrId> = d.after.region.iter().copied().collect();
        let mut in_before: FxSet<InstrId> = d.before.region.iter().copied().collect();
        let mut inputs: Vec<(InstrId, InstrId)> = Vec::new();
        let mut pending: Vec<(InstrId, InstrId)> = d.inputs.iter().rev().copied().collect();
        let mut moved = 0;
        let mut seen = FxSet::default();
        while let Some((aid, bid)) = pending.pop() {
            if !seen.insert((aid, bid)) || in_after.contains(&aid) {
                continue;
            }
            if has_value(bid) {
                inputs.push((aid, bid));
                continue;
            }
            let (ia, ib) = (a.instr(aid), b.instr(bid));
            let movable = ia.opcode != Opcode::Parameter
                && ia.opcode != Opcode::CustomCall
                && (ia.called_computations().next().is_none()
                    || matches!(
                        ia.opcode,
                        Opcode::Reduce | Opcode::ReduceWindow | Opcode::Map
                    ))
                && ia.operands().len() == ib.operands().len();
            moved += 1;
            if !movable || moved > WIDEN_LIMIT {
                return;
            }
            in_after.insert(aid);
            in_before.insert(bid);
            for (&oa, &ob) in ia.operands().iter().zip(ib.operands()).rev() {
                if constant_expression(a, oa) && constant_expression(b, ob) {
                    // Computed inside the region on both sides.
                    let mut chain = vec![(oa, ob)];
                    while let Some((x, y)) = chain.pop() {
                        in_after.insert(x);
                        in_before.insert(y);
                        chain.extend(
                            a.instr(x)
                                .operands()
                                .iter()
                                .copied()
                                .zip(b.instr(y).operands().iter().copied()),
                        );
                    }
                    continue;
                }
                match (in_after.contains(&oa), in_before.contains(&ob)) {
                    (true, true) => {}
                    (false, false) => pending.push((oa, ob)),
                    // The two sides disagree on what it reads.
                    _ => return,
                }
            }
        }
        let order = |comp: &Computation, set: &FxSet<InstrId>| -> Vec<InstrId> {
            comp.post_order()
                .into_iter()
                .filter(|id| set.contains(id))
                .collect()
        };
        let (after_region, before_region) = (order(a, &in_after), order(b, &in_before));
        let d = &mut self.diff;
        d.after.region = after_region;
        d.before.region = before_region;
        d.inputs = inputs;
    }

    /// The inputs, in the module before the pass: (computation,
    /// instruction), with the dimensions the check reads of each (a
    /// prefix block when the region is sliced).
    pub fn input_requests(&self) -> Vec<(CompId, InstrId, Vec<usize>)> {
        let shapes = self.shapes();
        self.diff
            .inputs
            .iter()
            .map(|&(aid, bid)| {
                let dims = shapes
                    .input(aid)
                    .as_array()
                    .map(|a| a.dims.iter().map(|&d| d.max(0) as usize).collect())
                    .unwrap_or_default();
                (self.diff.before.comp, bid, dims)
            })
            .collect()
    }

    /// The outputs before the pass, as [`Rewrite::input_requests`] says
    /// the inputs: an evaluation that kept them spares the check
    /// evaluating the region before the pass on the real inputs.
    pub fn output_requests(&self) -> Vec<(CompId, InstrId, Vec<usize>)> {
        let shapes = self.shapes();
        self.diff
            .outputs
            .iter()
            .map(|&(_, bid)| {
                let dims = shapes
                    .of(Which::Before, bid)
                    .as_array()
                    .map(|a| a.dims.iter().map(|&d| d.max(0) as usize).collect())
                    .unwrap_or_default();
                (self.diff.before.comp, bid, dims)
            })
            .collect()
    }

    /// The outputs as (after the pass, before it) pairs of (computation,
    /// instruction): each after-instruction stands for the value of its
    /// before-instruction from here on.
    pub fn output_pairs(&self) -> Vec<((CompId, InstrId), (CompId, InstrId))> {
        let (ac, bc) = (self.diff.after.comp, self.diff.before.comp);
        self.diff
            .outputs
            .iter()
            .map(|&(aid, bid)| ((ac, aid), (bc, bid)))
            .collect()
    }

    fn shapes(&self) -> Shapes<'_, '_> {
        let dims = DimClasses::analyse(&self.diff);
        let sliced = dims.needs_slicing(&self.diff);
        Shapes {
            diff: &self.diff,
            dims,
            sliced,
        }
    }

    /// Checks the rewrite on `real` inputs (one per input, as
    /// [`Rewrite::input_requests`] asked), or seeded ones when there are
    /// none (why), and on extremes made from them. `real_want`: the
    /// outputs before the pass on the real inputs, when they were kept.
    #[allow(clippy::too_many_arguments)]
    pub fn check(
        &self,
        real: std::result::Result<Vec<Arc<Array>>, String>,
        real_want: Option<Vec<Arc<Array>>>,
        seed: u64,
        tolerance_scale: f64,
        options: &EvalOptions,
        budget: &Budget,
    ) -> Result<LocalCheck> {
        let d = &self.diff;
        let shapes = self.shapes();
        let after_inputs: Vec<InstrId> = d.inputs.iter().map(|p| p.0).collect();
        let before_inputs: Vec<InstrId> = d.inputs.iter().map(|p| p.1).collect();
        let after_outputs: Vec<InstrId> = d.outputs.iter().map(|p| p.0).collect();
        let before_outputs: Vec<InstrId> = d.outputs.iter().map(|p| p.1).collect();
        let after_module = region_module(&d.after, &after_inputs, &after_outputs, |id| {
            shapes.of(Which::After, id)
        });
        let before_module = region_module(&d.before, &before_inputs, &before_outputs, |id| {
            shapes.of(Which::Before, id)
        });
        let (a, b) = (d.after.computation(), d.before.computation());
        let mut check = LocalCheck {
            region: RegionCheck {
                computation: a.name.to_string(),
                before_size: d.before.region.len(),
                after_size: d.after.region.len(),
                sliced: shapes.sliced.then(|| shapes.describe()),
                rows: Vec::new(),
                unchecked: None,
            },
            name: self.name.clone(),
            inputs: Inputs::Real,
            extremes: Vec::new(),
            tolerance: None,
            failure: None,
        };
        let (need_before, need_after) = (estimate(&before_module), estimate(&after_module));
        let total = need_before
            .peak
            .saturating_add(need_after.peak)
            .saturating_add(need_before.largest_output.saturating_mul(16));
        budget.check(
            &format!("checking rewrite {} in {}", self.name, a.name),
            total,
            if need_before.peak >= need_after.peak {
                &need_before
            } else {
                &need_after
            },
        )?;
        let (base, mut real_want) = match real {
            Ok(v) => (
                v.into_iter().map(Value::Array).collect::<Vec<_>>(),
                real_want,
            ),
            Err(why) => {
                check.inputs = Inputs::Seeded(why);
                (random_inputs(&before_module, seed)?, None)
            }
        };
        // The extremes are for coverage: they run on a slice of the
        // region (each dimension no op mixes shrunk, as a region too large
        // to run is), made from a block of the values.
        let small = Shapes {
            diff: d,
            dims: DimClasses::analyse(d),
            sliced: true,
        };
        let small_modules = if shapes.sliced {
            None
        } else {
            Some((
                region_module(&d.before, &before_inputs, &before_outputs, |id| {
                    small.of(Which::Before, id)
                }),
                region_module(&d.after, &after_inputs, &after_outputs, |id| {
                    small.of(Which::After, id)
                }),
            ))
        };
        let small_base: Vec<Value> = if shapes.sliced {
            base.clone()
        } else {
            base.iter()
                .zip(&after_inputs)
                .map(|(v, &aid)| match (v, small.input(aid).as_array()) {
                    (Value::Array(x), Some(s)) => {
                        let dims: Vec<usize> = s.dims.iter().map(|&n| n.max(0) as usize).collect();
                        if dims == x.dims {
                            Ok(v.clone())
                        } else {
                            super::capture::prefix_block(x, &dims).map(Value::array)
                        }
                    }
                    _ => Ok(v.clone()),
                })
                .collect::<Result<_>>()?
        };
        let mut cases = vec![(
            if check.inputs == Inputs::Real {
                "real inputs"
            } else {
                "seeded inputs"
            },
            base,
        )];
        let masked: Vec<usize> = feeds_max(d)
            .iter()
            .filter_map(|&id| before_inputs.iter().position(|&b| b == id))
            .collect();
        // Extremes only where the region reads one array: values made
        // from several (a softmax gradient's dL/dy, y, exp and sum) are
        // related, and changing each alone makes inputs no program gives,
        // on which a right rewrite may differ.
        let arrays = small_base
            .iter()
            .filter(|v| matches!(v, Value::Array(a) if a.ty.is_float() && a.rank() > 0))
            .count();
        // They cover what a slice shows; a region no dimension of which
        // can be cut (a call's operands) gets them only while small.
        let slice_elements = small_base
            .iter()
            .map(|v| match v {
                Value::Array(a) => a.data.len(),
                _ => 0,
            })
            .max()
            .unwrap_or(0);
        if arrays == 1 && slice_elements <= EXTREMES_MAX_ELEMENTS {
            cases.extend(extremes(&small_base, &masked)?);
        }
        check.extremes = cases[1..].iter().map(|c| c.0).collect();
        let (steps, chain_error) = steps(d);
        // Where the native form only adds, subtracts, multiplies and
        // divides, its sums may cancel (a softmax gradient's dL/dy - sum):
        // the error then keeps the size of what was summed. That size is
        // the region evaluated on |inputs| with every subtraction an
        // addition.
        // (Only evaluated when an output is past the output's own scale.)
        let mut magnitude: Option<f64> = None;
        let mut magnitude_of = |inputs: &[Value]| -> Result<f64> {
            if let Some(m) = magnitude {
                return Ok(m);
            }
            let m = match magnitude_module(&before_module) {
                Some(m) => {
                    let abs: Vec<Value> = inputs.iter().map(abs_value).collect::<Result<_>>()?;
                    evaluate_with(&m, &abs, options)
                        .map(|v| v.leaves().iter().map(|a| max_finite(a)).fold(0.0, f64::max))
                        .unwrap_or(0.0)
                }
                None => 0.0,
            };
            magnitude = Some(m);
            Ok(m)
        };
        let n = d.outputs.len();
        // Per output: the worst case's diff, with its case.
        // Per output leaf (a tuple output, TopK's values and indices,
        // has several).
        let mut worst: Vec<Option<(Diff, usize, f64)>> = Vec::new();
        let mut shapes_of_leaves: Vec<String> = Vec::new();
        let mut tolerance = None;
        let mut summed_scale = None;
        for (case, (label, inputs)) in cases.iter().enumerate() {
            let (before_module, after_module) = match (&small_modules, case) {
                (Some((b, a)), 1..) => (b, a),
                _ => (&before_module, &after_module),
            };
            let want = match real_want.take().filter(|_| case == 0) {
                Some(kept) => Ok(kept),
                None => evaluate_with(before_module, inputs, options)
                    .map(|v| v.leaves())
                    .map_err(|e| side_error(e, "before the pass")),
            };
            let evaluated = want.and_then(|want| {
                let got = evaluate_with(after_module, inputs, options)
                    .map_err(|e| side_error(e, "after the pass"))?;
                Ok((want, got.leaves()))
            });
            let (want, got) = match evaluated {
                Ok(v) => v,
                Err(e) if e.kind == ErrorKind::Unsupported => {
                    check.region.unchecked = Some(e.to_string());
                    return Ok(check);
                }
                Err(e) => return Err(e),
            };
            if worst.len() < want.len() {
                worst.resize(want.len(), None);
                shapes_of_leaves = want.iter().map(|w| w.shape_text()).collect();
            }
            for (k, (w, g)) in want.iter().zip(&got).enumerate() {
                // At least one step of the output's own type.
                let rtol = ULPS_PER_STEP * chain_error.max(ulp(w.ty)) * tolerance_scale;
                let scale = max_finite(w);
                let mut diff = compare_scaled(g, w, rtol, 0.0, case == 0);
                let mut scale = scale;
                if !diff.ok() && diff.shape_mismatch.is_none() && case == 0 {
                    let m = magnitude_of(inputs)?;
                    if m > scale {
                        scale = m;
                        diff = compare_scaled(g, w, rtol, scale, case == 0);
                        summed_scale = Some(m);
                    }
                }
                if case == 0 && k == 0 {
                    tolerance = Some(LocalTolerance {
                        steps,
                        rtol,
                        summed_scale,
                    });
                }
                let ratio = diff.max_abs / (rtol * scale).max(f64::MIN_POSITIVE);
                let replace = match &worst[k] {
                    None => true,
                    Some((old, _, old_ratio)) => {
                        (old.ok() && !diff.ok()) || (old.ok() == diff.ok() && ratio > *old_ratio)
                    }
                };
                if !diff.ok() && check.failure.is_none() {
                    check.failure = Some(failure_detail(
                        label,
                        &self.name,
                        b.instr(d.outputs[k.min(n - 1)].1).name.as_ref(),
                        w,
                        g,
                        rtol,
                        &before_inputs
                            .iter()
                            .map(|&id| b.instr(id).name.to_string())
                            .collect::<Vec<_>>(),
                        inputs,
                    ));
                }
                if replace {
                    worst[k] = Some((diff, case, ratio));
                }
            }
        }
        check.tolerance = tolerance;
        check.region.rows = worst
            .into_iter()
            .enumerate()
            .filter_map(|(k, w)| {
                let (diff, case, _) = w?;
                let leaves = shapes_of_leaves.len();
                let name = if leaves == 1 {
                    self.name.clone()
                } else if leaves == n {
                    let (ao, bo) = d.outputs[k];
                    format!("{}:{}/{}", self.name, a.instr(ao).name, b.instr(bo).name)
                } else {
                    format!("{}:{k}", self.name)
                };
                let shape = shapes_of_leaves[k].clone();
                let shape = if case == 0 {
                    shape
                } else {
                    format!("{shape} [{}]", cases[case].0)
                };
                Some(OutputRow { name, shape, diff })
            })
            .collect();
        Ok(check)
    }
}

/// The region module with every subtraction an addition and every
/// negation an absolute value, when it has only ops whose magnitudes
/// that bounds (adds, multiplies, divides, sums, moves); else `None`.
fn magnitude_module(region: &Module) -> Option<Module> {
    use Opcode as O;
    let mut m = region.clone();
    let entry = m.entry();
    let comp = m.comp(entry);
    let ids: Vec<InstrId> = comp.post_order();
    for &id in &ids {
        let i = comp.instr(id);
        let fits = match i.opcode {
            O::Add
            | O::Subtract
            | O::Multiply
            | O::Divide
            | O::Negate
            | O::Parameter
            | O::Constant
            | O::Broadcast
            | O::Reshape
            | O::Bitcast
            | O::Transpose
            | O::Convert
            | O::Copy
            | O::Slice
            | O::Concatenate
            | O::Tuple
            | O::GetTupleElement
            | O::Dot => true,
            O::Reduce => i.to_apply().is_some_and(|c| {
                let callee = region.comp(c);
                callee
                    .root_opt()
                    .is_some_and(|r| callee.instr(r).opcode == O::Add)
            }),
            _ => false,
        };
        if !fits {
            return None;
        }
    }
    let comp = m.comp_mut(entry);
    for id in ids {
        let i = comp.instr_mut(id);
        match i.opcode {
            O::Subtract => i.opcode = O::Add,
            O::Negate => i.opcode = O::Abs,
            _ => {}
        }
    }
    Some(m)
}

fn abs_value(v: &Value) -> Result<Value> {
    match v {
        Value::Array(a) if a.ty.is_float() => {
            let x: Vec<f64> = a.to_f64_vec().iter().map(|x| x.abs()).collect();
            Ok(Value::array(Array::new(
                a.ty,
                a.dims.clone(),
                from_f64_vec(a.ty, &x)?,
            )?))
        }
        _ => Ok(v.clone()),
    }
}

/// The unit in the last place of 1.0 in a float type (0 for exact ones).
fn ulp(ty: PrimitiveType) -> f64 {
    let mantissa = match ty {
        PrimitiveType::F64 | PrimitiveType::C128 => 52,
        PrimitiveType::F32 | PrimitiveType::C64 => 23,
        PrimitiveType::F16 => 10,
        PrimitiveType::Bf16 => 7,
        t => match t.minifloat() {
            Some(m) if m.mantissa_bits > 0 => m.mantissa_bits as i32,
            _ => return 0.0,
        },
    };
    2f64.powi(-mantissa)
}

/// The region's shapes, sliced where it is too large.
struct Shapes<'d, 'm> {
    diff: &'d RegionDiff<'m>,
    dims: DimClasses,
    sliced: bool,
}

impl Shapes<'_, '_> {
    fn of(&self, which: Which, id: InstrId) -> Arc<Shape> {
        let c = match which {
            Which::After => self.diff.after.computation(),
            Which::Before => self.diff.before.computation(),
        };
        let shape = &c.instr(id).shape;
        if self.sliced {
            self.dims.sliced_shape(which, id, shape)
        } else {
            shape.clone()
        }
    }

    fn input(&self, after_id: InstrId) -> Arc<Shape> {
        self.of(Which::After, after_id)
    }

    fn describe(&self) -> String {
        let a = self.diff.after.computation();
        let mut seen = FxSet::default();
        let mut parts = Vec::new();
        for &(aid, _) in &self.diff.inputs {
            let full = a.instr(aid).shape.to_text(false);
            let small = self.input(aid).to_text(false);
            if full != small && seen.insert(full.clone()) {
                parts.push(format!("{full} -> {small}"));
            }
        }
        parts.join(", ")
    }
}

/// The rounding steps of the longest chain of either side (the weights
/// docs/interpreter.md states): exact ops 0, a rounding op 1, a
/// transcendental 2, a sum of n terms (reduce-add, dot) 1 + ceil(log2 n).
fn steps(d: &RegionDiff) -> (u32, f64) {
    let (mut most, mut most_error) = (1u32, 0.0f64);
    for side in [&d.before, &d.after] {
        let comp = side.computation();
        // Per value: the steps of its longest chain, and the rounding
        // error they add up to (each step in units of its own type's ulp).
        let mut depth: FxMap<InstrId, (u32, f64)> = FxMap::default();
        for &id in &side.region {
            let instr = comp.instr(id);
            let (from, from_error) = instr
                .operands()
                .iter()
                .map(|o| depth.get(o).copied().unwrap_or((0, 0.0)))
                .fold((0, 0.0f64), |(s, e), (s2, e2)| (s.max(s2), e.max(e2)));
            let w = step_weight(side.module, comp, id);
            let here = (
                from + w,
                from_error + f64::from(w) * ulp(instr.shape.element_type()),
            );
            most = most.max(here.0);
            most_error = most_error.max(here.1);
            depth.insert(id, here);
        }
    }
    (most, most_error)
}

/// Whether `instr`'s computations only combine two values (a reduce's
/// sum, a sort's comparator).
fn applies_reducers(instr: &crate::ir::Instruction) -> bool {
    matches!(
        instr.opcode,
        Opcode::Reduce
            | Opcode::ReduceWindow
            | Opcode::Sort
            | Opcode::Map
            | Opcode::Scatter
            | Opcode::SelectAndScatter
    )
}

/// Whether `instr` calls a computation that itself calls nothing but
/// reducers: an expression whose rounding steps [`step_weight`] counts.
fn plain_call(module: &Module, instr: &crate::ir::Instruction) -> bool {
    instr.opcode == Opcode::Call
        && instr.called_computations().all(|c| {
            module
                .comp(c)
                .instructions()
                .all(|(_, i)| i.called_computations().next().is_none() || applies_reducers(i))
        })
}

/// [`Rewrite::is_local`] of `diff`; `comps`: the computations of the
/// module before and after the pass, by name.
fn is_local(diff: &RegionDiff<'_>, comps: &(FxMap<&str, CompId>, FxMap<&str, CompId>)) -> bool {
    let (a, b) = (diff.after.computation(), diff.before.computation());
    // A changed parameter (a while body whose carried tuple the pass
    // changed) has no value to evaluate it on.
    let reads_a_changed_parameter = diff
        .after
        .region
        .iter()
        .any(|&id| a.instr(id).opcode == Opcode::Parameter)
        || diff
            .before
            .region
            .iter()
            .any(|&id| b.instr(id).opcode == Opcode::Parameter);
    // A fusion, while or conditional in the region runs a whole
    // computation (one the pass may have changed, checked there): its
    // rounding is not the region's to bound. A call of a plain
    // expression is (its steps count as the callee's): the region of
    // an inlined call.
    let (before, after) = (diff.before.module, diff.after.module);
    let calls = |side: &Side| {
        let c = side.computation();
        side.region.iter().any(|&id| {
            let i = c.instr(id);
            i.called_computations().next().is_some()
                && !applies_reducers(i)
                && !(plain_call(side.module, i)
                    && callees_unchanged(side.module, before, after, comps, i))
        })
    };
    !reads_a_changed_parameter
        && !calls(&diff.after)
        && !calls(&diff.before)
        && diff
            .outputs
            .iter()
            .all(|&(ao, bo)| a.instr(ao).shape == b.instr(bo).shape)
}

/// Whether every computation `instr` (in `holder`) calls is the same
/// before and after the pass (or gone after it: an inlined call's).
fn callees_unchanged(
    holder: &Module,
    before: &Module,
    after: &Module,
    comps: &(FxMap<&str, CompId>, FxMap<&str, CompId>),
    instr: &crate::ir::Instruction,
) -> bool {
    instr.called_computations().all(|c| {
        let name = &*holder.comp(c).name;
        match (comps.0.get(name), comps.1.get(name)) {
            (Some(&cb), Some(&ca)) => RegionDiff::new(before, cb, after, ca).is_none(),
            (Some(_), None) => true,
            _ => false,
        }
    })
}

/// The steps of the longest chain of computation `comp` (a called
/// expression's, [`plain_call`]).
fn callee_steps(module: &Module, comp: CompId) -> u32 {
    let c = module.comp(comp);
    let mut depth: FxMap<InstrId, u32> = FxMap::default();
    let mut most = 0;
    for id in c.post_order() {
        let from = c
            .instr(id)
            .operands()
            .iter()
            .map(|o| depth.get(o).copied().unwrap_or(0))
            .max()
            .unwrap_or(0);
        let here = from + step_weight(module, c, id);
        most = most.max(here);
        depth.insert(id, here);
    }
    most
}

fn log2_ceil(n: i64) -> u32 {
    if n <= 1 {
        0
    } else {
        64 - ((n - 1) as u64).leading_zeros()
    }
}

fn step_weight(module: &Module, comp: &Computation, id: InstrId) -> u32 {
    use Opcode as O;
    let instr = comp.instr(id);
    let count = |s: &Shape| s.as_array().map_or(1, |a| a.element_count().max(1));
    match instr.opcode {
        O::Parameter
        | O::Constant
        | O::Iota
        | O::Broadcast
        | O::Reshape
        | O::Bitcast
        | O::Transpose
        | O::Slice
        | O::DynamicSlice
        | O::Concatenate
        | O::Copy
        | O::Tuple
        | O::GetTupleElement
        | O::Select
        | O::Compare
        | O::Maximum
        | O::Minimum
        | O::Negate
        | O::Abs
        | O::Pad
        | O::Reverse
        | O::Gather => 0,
        O::Convert => {
            let from = instr
                .operands()
                .first()
                .map(|&o| ulp(comp.instr(o).shape.element_type()))
                .unwrap_or(0.0);
            u32::from(ulp(instr.shape.element_type()) > from)
        }
        O::Exp | O::Expm1 | O::Log | O::Log1p | O::Tanh | O::Logistic | O::Power => 2,
        O::Call if plain_call(module, instr) => instr
            .called_computations()
            .map(|c| callee_steps(module, c))
            .max()
            .unwrap_or(0),
        O::Reduce => {
            let max_like = instr.to_apply().is_some_and(|c| {
                let callee = module.comp(c);
                callee
                    .root_opt()
                    .is_some_and(|r| matches!(callee.instr(r).opcode, O::Maximum | O::Minimum))
            });
            if max_like {
                0
            } else {
                let n = instr
                    .operands()
                    .first()
                    .map(|&o| count(&comp.instr(o).shape))
                    .unwrap_or(1)
                    / count(&instr.shape);
                1 + log2_ceil(n)
            }
        }
        O::Dot => {
            let size = |i: usize| {
                instr
                    .operands()
                    .get(i)
                    .map(|&o| count(&comp.instr(o).shape) as f64)
                    .unwrap_or(1.0)
            };
            let k = (size(0) * size(1) / count(&instr.shape) as f64).sqrt();
            1 + log2_ceil(k.ceil() as i64)
        }
        _ => 1,
    }
}

/// The before side's inputs that reach a max-reduce (a softmax's logits):
/// they get the -inf masks.
fn feeds_max(d: &RegionDiff) -> Vec<InstrId> {
    let comp = d.before.computation();
    let inputs: FxSet<InstrId> = d.inputs.iter().map(|p| p.1).collect();
    let mut found = Vec::new();
    // One walk for all the max-reduces: what an earlier one reached, and
    // the inputs behind it, are found already (chained softmaxes in one
    // region would each walk back through all those before).
    let mut seen = FxSet::default();
    for &id in &d.before.region {
        let instr = comp.instr(id);
        if instr.opcode != Opcode::Reduce || step_weight(d.before.module, comp, id) != 0 {
            continue;
        }
        let mut stack = vec![instr.operand(0)];
        while let Some(x) = stack.pop() {
            if !seen.insert(x) {
                continue;
            }
            if inputs.contains(&x) {
                found.push(x);
                continue;
            }
            stack.extend(comp.instr(x).operands().iter().copied());
        }
    }
    found
}

/// The extremes made from `base` (a region that reads one array): the
/// input rescaled to a largest magnitude of [`LARGE`]; when it is `masked` (a softmax's logits), with
/// every fourth element of each row -inf; with each row (along the last
/// dimension) equal to its first element (ties: a top-k picks the first
/// indices).
fn extremes(base: &[Value], masked: &[usize]) -> Result<Vec<(&'static str, Vec<Value>)>> {
    let map = |f: &dyn Fn(usize, &Array) -> Option<Vec<f64>>| -> Result<Vec<Value>> {
        base.iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::Array(a) if a.ty.is_float() && a.rank() > 0 => match f(i, a) {
                    Some(x) => Ok(Value::array(Array::new(
                        a.ty,
                        a.dims.clone(),
                        from_f64_vec(a.ty, &x)?,
                    )?)),
                    None => Ok(v.clone()),
                },
                _ => Ok(v.clone()),
            })
            .collect()
    };
    let row = |a: &Array| a.dims.last().copied().unwrap_or(1).max(1);
    let mut out = vec![(
        "large values",
        map(&|_, a| {
            // Rescaled so the largest finite magnitude is LARGE (a
            // softmax's large logits), whatever the values' own scale.
            let x = a.to_f64_vec();
            let m = x
                .iter()
                .filter(|v| v.is_finite())
                .fold(0.0f64, |m, v| m.max(v.abs()));
            let k = if m > 0.0 { LARGE / m } else { LARGE };
            Some(x.iter().map(|v| v * k).collect())
        })?,
    )];
    if !masked.is_empty() {
        out.push((
            "-inf masks",
            map(&|i, a| {
                masked.contains(&i).then(|| {
                    let n = row(a);
                    a.to_f64_vec()
                        .iter()
                        .enumerate()
                        .map(|(j, &x)| if j % n % 4 == 3 { f64::NEG_INFINITY } else { x })
                        .collect()
                })
            })?,
        ));
    }
    out.push((
        "equal rows",
        map(&|_, a| {
            let n = row(a);
            let x = a.to_f64_vec();
            Some((0..x.len()).map(|j| x[j - j % n]).collect())
        })?,
    ));
    Ok(out)
}

/// The worst element of a failing output: the values, where, and the
/// inputs there (an input of the output's shape: its element; else its
/// range).
#[allow(clippy::too_many_arguments)]
fn failure_detail(
    case: &str,
    rewrite: &str,
    output: &str,
    want: &Array,
    got: &Array,
    rtol: f64,
    input_names: &[String],
    inputs: &[Value],
) -> String {
    if want.dims != got.dims || want.ty != got.ty {
        return format!(
            "rewrite {rewrite} ({case}): output {output} is {}, was {}",
            got.shape_text(),
            want.shape_text()
        );
    }
    let (w, g) = (want.to_f64_vec(), got.to_f64_vec());
    let s = max_finite(want);
    let mut worst = (0usize, f64::NEG_INFINITY);
    for (i, (&x, &y)) in w.iter().zip(&g).enumerate() {
        let e = if x.is_nan() || y.is_nan() {
            if x.is_nan() && y.is_nan() {
                0.0
            } else {
                f64::INFINITY
            }
        } else if x == y {
            0.0
        } else {
            (x - y).abs() / (rtol * (x.abs() + s)).max(f64::MIN_POSITIVE)
        };
        if e > worst.1 {
            worst = (i, e);
        }
    }
    let i = worst.0;
    let index = unflatten(i, &want.dims);
    let mut text =
        format!(
        "rewrite {rewrite} ({case}): worst element {output}[{}]: got {}, want {} (allowed {:.3e})",
        index.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(","),
        g[i],
        w[i],
        rtol * (w[i].abs() + s)
    );
    let parts: Vec<String> = input_names
        .iter()
        .zip(inputs)
        .map(|(name, v)| match v {
            Value::Array(a) if a.dims == want.dims => {
                format!("{name}={}", a.to_f64_vec()[i])
            }
            Value::Array(a) if a.rank() == want.rank() && a.rank() > 0 => {
                // The same row, where the input has the output's rank.
                let at: Vec<usize> = index
                    .iter()
                    .zip(&a.dims)
                    .map(|(&x, &n)| x.min(n.saturating_sub(1)))
                    .collect();
                let flat = at
                    .iter()
                    .zip(super::array::strides(&a.dims))
                    .map(|(x, s)| x * s)
                    .sum::<usize>();
                format!(
                    "{name}[{}]={}",
                    at.iter()
                        .map(|d| d.to_string())
                        .collect::<Vec<_>>()
                        .join(","),
                    a.to_f64_vec()[flat]
                )
            }
            Value::Array(a) => {
                let x = a.to_f64_vec();
                let lo = x.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                format!("{name} {} in [{lo}, {hi}]", a.shape_text())
            }
            _ => format!("{name} (a tuple)"),
        })
        .collect();
    if !parts.is_empty() {
        text.push_str(&format!("; inputs there: {}", parts.join(", ")));
    }
    text
}

fn unflatten(mut i: usize, dims: &[usize]) -> Vec<usize> {
    let mut out = vec![0; dims.len()];
    for (k, &n) in dims.iter().enumerate().rev() {
        let n = n.max(1);
        out[k] = i % n;
        i /= n;
    }
    out
}
