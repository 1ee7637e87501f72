//! `--check-numerics`: a numeric proof of every rewrite a pipeline makes.
//! The module is evaluated once (reference interpreter, seeded inputs)
//! before the passes, keeping the values the rewrites read; each rewrite
//! of each pass is then evaluated where it happened, before and after, on
//! those values and on extremes made from them ([`crate::interp::local`]).
//! The whole module is evaluated again after a pass, and its outputs
//! compared ([`crate::interp::compare`]), only in [`CheckMode::Full`] or
//! where a pass changed something no local check covers.
//!
//! A module whose collectives exchange data between devices is evaluated
//! on all of its devices in lockstep ([`crate::interp::evaluate_devices`]),
//! each device with its own seeded inputs, and every device's outputs are
//! compared (named `d<k>:out<i>`).

use crate::interp::array::{largest_array, Array, Value, MAX_ELEMENTS};
use crate::interp::budget::{estimate, Budget, Need};
use crate::interp::capture::{prefix_block, Capture, CaptureRequest};
use crate::interp::collective::{evaluate_devices_with, lockstep_topology, random_device_inputs};
use crate::interp::compare::{
    check_rtol, compare_with, compare_with_floor, max_abs_diff, perturb_inputs, rtol, Diff,
    OutputRow, NOISE_FACTOR,
};
use crate::interp::local::{rewrites, LocalCheck, Rewrite};
use crate::interp::region::{check_regions_with, same_signature};
use crate::interp::{evaluate_with, ErrorKind, EvalError, EvalOptions, Interpreter};
use crate::ir::{CompId, InstrId, Instruction, Module, PrimitiveType, SharedStr};
use crate::passes::{Pass, PassError, PassOptions, PassRun, Pipeline, ReportEntry};
use crate::util::FxMap;
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;

/// Which comparisons `--check-numerics` makes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CheckMode {
    /// Each rewrite where it happened; the whole module's outputs only
    /// after a pass that changed something no local check covers.
    #[default]
    Local,
    /// Besides, the whole module's outputs after every pass that changed
    /// it (`--check-numerics=full`): a second signal, at the cost of one
    /// evaluation of the whole module per such pass.
    Full,
}

impl CheckMode {
    pub fn from_name(name: &str) -> Option<CheckMode> {
        match name {
            "local" => Some(CheckMode::Local),
            "full" => Some(CheckMode::Full),
            _ => None,
        }
    }
}

/// What `--check-numerics` saw after one pass.
#[derive(Clone, Debug)]
pub struct PassCheck {
    pub pass: &'static str,
    pub changed: bool,
    pub rows: Vec<OutputRow>,
    /// Outputs the pass added (not compared; per device).
    pub extra_outputs: usize,
    /// Devices evaluated (more than one: in lockstep).
    pub devices: usize,
    /// Checked region by region, and why the whole module could not run.
    pub by_region: Option<String>,
    /// How the pass was checked, when region by region (one line each).
    pub regions: Vec<String>,
    /// The regions that could not be checked (they hold what the
    /// interpreter does not evaluate): one line each, naming it.
    pub unchecked: Vec<String>,
    /// Rewrites checked where they happened.
    pub local: usize,
    /// The whole module's outputs were compared.
    pub whole: bool,
    /// The pass changed something no local check covers: the whole
    /// module's comparison is its only proof there.
    whole_is_needed: bool,
}

impl PassCheck {
    fn new(pass: &'static str, changed: bool) -> PassCheck {
        PassCheck {
            pass,
            changed,
            rows: Vec::new(),
            extra_outputs: 0,
            devices: 1,
            by_region: None,
            regions: Vec::new(),
            unchecked: Vec::new(),
            local: 0,
            whole: false,
            whole_is_needed: false,
        }
    }

    /// How the pass was checked, as the table's heading says it.
    pub fn how(&self) -> String {
        let local = match self.local {
            0 => String::new(),
            1 => "1 rewrite checked where it happened".to_string(),
            n => format!("{n} rewrites checked where they happened"),
        };
        let whole = match (self.whole, self.devices) {
            (false, _) => String::new(),
            (true, 0 | 1) => "outputs re-evaluated".to_string(),
            (true, n) => format!("outputs re-evaluated on {n} devices in lockstep"),
        };
        match (self.changed, &self.by_region) {
            (false, _) => "unchanged".to_string(),
            (true, Some(why)) => {
                format!("changed, checked region by region (the whole module cannot run: {why})")
            }
            (true, None) => {
                let parts: Vec<&str> = [local.as_str(), whole.as_str()]
                    .into_iter()
                    .filter(|p| !p.is_empty())
                    .collect();
                format!("changed, {}", parts.join(", "))
            }
        }
    }

    /// The per-pass table.
    pub fn table(&self) -> String {
        let mut s = format!("check-numerics: pass {}: {}\n", self.pass, self.how());
        if !self.changed {
            return s;
        }
        // Region rows are named after the instructions they compare.
        let w = self
            .rows
            .iter()
            .map(|r| r.name.len())
            .max()
            .unwrap_or(0)
            .max(8);
        if !self.rows.is_empty() {
            s.push_str(&format!(
                "  {:<w$} {:<24} {:>12} {:>12} {:>10}  {}\n",
                "output", "shape", "max abs err", "max rel err", "rtol", "result"
            ));
        }
        for r in &self.rows {
            let verdict = match (r.diff.bound(), &r.diff.shape_mismatch) {
                (Some(bound), _) => bound.verdict(r.diff.noise_floor),
                (None, Some(m)) => format!("FAIL: {m}"),
                (None, None) => format!("FAIL: {} elements", r.diff.bad),
            };
            s.push_str(&format!(
                "  {:<w$} {:<24} {:>12.3e} {:>12.3e} {:>10.0e}  {}\n",
                r.name, r.shape, r.diff.max_abs, r.diff.max_rel, r.diff.tolerance, verdict
            ));
        }
        if self.extra_outputs > 0 {
            s.push_str(&format!(
                "  ({} output(s) added by the pass, not compared)\n",
                self.extra_outputs
            ));
        }
        for r in &self.regions {
            s.push_str(&format!("  {r}\n"));
        }
        s
    }
}

/// Why a checked pipeline stopped.
#[derive(Debug)]
pub enum CheckError {
    /// A pass failed by itself.
    Pass(PassError),
    /// The module could not be evaluated (before the passes, or after one).
    Eval {
        pass: Option<&'static str>,
        error: EvalError,
    },
    /// A rewrite, checked where it happened, is wrong: its worst element
    /// and its inputs there.
    Local {
        pass: &'static str,
        rewrite: String,
        found: Box<LocalFailure>,
    },
    /// An output moved beyond its tolerance.
    Mismatch {
        pass: &'static str,
        output: String,
        shape: String,
        diff: Box<Diff>,
    },
    /// Every check passed, but some regions could not be checked (they
    /// hold what the interpreter does not evaluate), and
    /// [`CheckConfig::accept_unchecked`] is off: (pass, region) each.
    Unchecked(Vec<(&'static str, String)>),
}

/// What a failing local check found: where, which output, how far off,
/// and its worst element with the inputs there.
#[derive(Debug)]
pub struct LocalFailure {
    pub computation: String,
    pub output: String,
    pub diff: Diff,
    pub detail: String,
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::Pass(e) => write!(f, "{e}"),
            CheckError::Eval { pass: None, error } => write!(
                f,
                "check-numerics: cannot evaluate the module before the passes: {error}"
            ),
            CheckError::Eval {
                pass: Some(p),
                error,
            } => write!(
                f,
                "check-numerics: cannot evaluate the module after pass {p}: {error}"
            ),
            CheckError::Local {
                pass,
                rewrite,
                found,
            } => write!(
                f,
                "check-numerics: pass {pass}: rewrite {rewrite} (in {}) is wrong: output {}: {}; {}",
                found.computation, found.output, found.diff, found.detail
            ),
            CheckError::Mismatch {
                pass,
                output,
                shape,
                diff,
            } => write!(
                f,
                "check-numerics: pass {pass} changed output {output} ({shape}): {diff}"
            ),
            CheckError::Unchecked(regions) => {
                write!(
                    f,
                    "check-numerics: {} region(s) could not be checked (--accept-unchecked accepts them):",
                    regions.len()
                )?;
                for (pass, r) in regions {
                    write!(f, "\n  pass {pass}: {r}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for CheckError {}

/// Settings of a checked run.
#[derive(Clone, Debug)]
pub struct CheckConfig {
    /// Inputs (every device's, for a module evaluated in lockstep);
    /// `None`: seeded random inputs, different on each device.
    pub inputs: Option<Vec<Value>>,
    pub seed: u64,
    /// Multiplies every tolerance.
    pub tolerance_scale: f64,
    pub verify_each: bool,
    /// Finish without an error when some regions could not be checked
    /// (they are still listed in the tables).
    pub accept_unchecked: bool,
    /// Every evaluation's limits and cancel hook.
    pub eval: EvalOptions,
    /// The memory the evaluations may hold at once; a module past it is
    /// refused before it is evaluated ([`ErrorKind::Memory`]).
    pub memory_budget: Budget,
    /// Local checks only, or the whole module's outputs too.
    pub mode: CheckMode,
    /// Test only: a rewrite made wrong on purpose ([`crate::driver::fault`]).
    pub fault: Option<crate::driver::fault::Fault>,
}

impl Default for CheckConfig {
    fn default() -> Self {
        CheckConfig {
            inputs: None,
            seed: 0,
            tolerance_scale: 1.0,
            verify_each: true,
            accept_unchecked: false,
            eval: EvalOptions::default(),
            memory_budget: Budget::available("--memory-limit"),
            mode: CheckMode::Local,
            fault: None,
        }
    }
}

/// `--check-numerics` as an observer of [`Pipeline::run_with`].
///
/// When a pass first changes the module, the module before the passes is
/// evaluated once on seeded inputs, keeping the values its rewrites read
/// (every pass's, when [`NumericsCheck::foresee`] was told the pipeline;
/// else this pass's, and a later pass that needs more evaluates it again).
/// After every pass that changed the module, each rewrite is checked where
/// it happened ([`crate::interp::local`]): its region before and after the
/// pass on those real values and on extremes made from them, within a
/// tolerance from the region's own operations. The whole module is
/// evaluated again and its outputs compared with the original's only in
/// [`CheckMode::Full`], or where the pass changed something no local check
/// covers (a change of the module's outputs). `on_pass` sees each pass's
/// table as soon as it is known. The first wrong rewrite or output stops
/// the pipeline, and [`NumericsCheck::finish`] names the pass and it.
///
/// An output of the whole module beyond its relative tolerance gets its
/// rounding noise measured ([`perturb_inputs`], [`NOISE_FACTOR`]): within
/// it, the row is *inconclusive*, never ok. An inconclusive row fails the
/// run unless every change of the pass was proven locally.
///
/// When the whole module cannot run (it holds an op or form the
/// interpreter lacks, or an array past its limit), every rewrite is
/// checked on seeded inputs; a change with no local check is checked
/// region by region ([`check_regions_with`]). A region that itself holds
/// what the interpreter lacks is listed as unchecked, and the run ends
/// with [`CheckError::Unchecked`] unless [`CheckConfig::accept_unchecked`].
pub struct NumericsCheck<'a> {
    state: CheckState,
    /// The module as the last pass that changed it left it.
    previous: Module,
    cfg: &'a CheckConfig,
    on_pass: &'a mut dyn FnMut(&PassCheck),
    checks: Vec<PassCheck>,
    /// Why the pipeline was stopped, when this check stopped it.
    failure: Option<CheckError>,
}

impl<'a> NumericsCheck<'a> {
    pub fn new(
        module: &Module,
        cfg: &'a CheckConfig,
        on_pass: &'a mut dyn FnMut(&PassCheck),
    ) -> NumericsCheck<'a> {
        let state = CheckState {
            original: Original::new(module.clone()),
            // A module holding an array the interpreter cannot hold (a large
            // model's training step) is checked region by region from the start.
            whole: match largest_array_in(module) {
                n if n > MAX_ELEMENTS as i64 => Whole::Cannot(format!(
                    "an array of {n} elements exceeds the interpreter's limit of {MAX_ELEMENTS}"
                )),
                _ => Whole::Untried,
            },
            noise: None,
            original_need: estimate(module),
            foreseen: CaptureRequest::default(),
            requested: CaptureRequest::default(),
            kept: FxMap::default(),
        };
        NumericsCheck {
            state,
            previous: module.clone(),
            cfg,
            on_pass,
            checks: Vec::new(),
            failure: None,
        }
    }

    /// Runs `pipeline` (the one the check will observe, made again) on a
    /// copy of the module, to learn every value its rewrites will read:
    /// the module before the passes is then evaluated once for all of
    /// them. A pipeline that fails here teaches what it did up to there;
    /// the real run meets the same failure.
    pub fn foresee(&mut self, mut pipeline: Pipeline) {
        let original = &mut self.state.original;
        let mut module = original.module.clone();
        let mut previous = original.module.clone();
        let mut request = CaptureRequest::default();
        let _ = pipeline.run_with(&mut module, &mut |run, m| {
            if run.changed {
                let found = widened(original, &previous, m, run);
                let local: Vec<&Rewrite> = found.iter().filter(|r| r.is_local()).collect();
                for r in &local {
                    add_requests(&mut request, original, &previous, r);
                }
                original.learn(&previous, m, &local);
                drop(found);
                previous = m.clone();
            }
            Ok(())
        });
        // The real run learns them again, pass by pass, as each is proven.
        original.stand_ins.clear();
        self.state.foreseen = request;
    }

    /// Checks one pass as it left the module (the observer's hook).
    pub fn after(&mut self, run: &PassRun, module: &Module) -> Result<(), PassError> {
        let mut check = PassCheck::new(run.name, run.changed);
        if run.changed {
            let checked = self
                .state
                .check_pass(&mut check, run, &self.previous, module, self.cfg);
            match checked {
                Err(e) => return Err(self.stop(run.name, e)),
                Ok(Some(e)) => {
                    (self.on_pass)(&check);
                    self.checks.push(check);
                    return Err(self.stop(run.name, e));
                }
                Ok(None) => {}
            }
            self.previous = module.clone();
        }
        (self.on_pass)(&check);
        // A whole-module row within its rounding noise only is not a
        // proof: it fails unless every change was proven locally.
        // (Some rewrites proven locally: the whole module's comparison is
        // only the second signal for the rest, which it cannot resolve.)
        let proven_locally = check.local > 0;
        let failed = check
            .rows
            .iter()
            .find(|r| !(r.diff.ok() || r.diff.inconclusive() && proven_locally))
            .map(|r| CheckError::Mismatch {
                pass: run.name,
                output: r.name.clone(),
                shape: r.shape.clone(),
                diff: Box::new(r.diff.clone()),
            });
        self.checks.push(check);
        match failed {
            Some(e) => Err(self.stop(run.name, e)),
            None => Ok(()),
        }
    }

    /// Keeps why the check stopped the pipeline; the pipeline's error
    /// only says that it did.
    fn stop(&mut self, pass: &'static str, e: CheckError) -> PassError {
        let message = e.to_string();
        self.failure = Some(e);
        PassError::After { pass, message }
    }

    /// The pipeline's outcome judged: the check's own failure, the
    /// pipeline's error, or every pass's run and check.
    pub fn finish(
        self,
        result: Result<Vec<PassRun>, PassError>,
    ) -> Result<(Vec<PassRun>, Vec<PassCheck>), CheckError> {
        if let Some(e) = self.failure {
            return Err(e);
        }
        let runs = result.map_err(CheckError::Pass)?;
        let unchecked: Vec<(&'static str, String)> = self
            .checks
            .iter()
            .flat_map(|c| c.unchecked.iter().map(|u| (c.pass, u.clone())))
            .collect();
        if !unchecked.is_empty() && !self.cfg.accept_unchecked {
            return Err(CheckError::Unchecked(unchecked));
        }
        Ok((runs, self.checks))
    }
}

/// Runs `passes` in order on `module` under a [`NumericsCheck`].
pub fn run_checked(
    module: &mut Module,
    passes: Vec<Box<dyn Pass>>,
    options: &PassOptions,
    cfg: &CheckConfig,
    on_pass: &mut dyn FnMut(&PassCheck),
) -> Result<(Vec<PassRun>, Vec<PassCheck>), CheckError> {
    let names: Vec<&'static str> = passes.iter().map(|p| p.name()).collect();
    let mut pipeline = Pipeline::new(passes, options.clone());
    pipeline.verify_each = cfg.verify_each;
    let mut check = NumericsCheck::new(module, cfg, on_pass);
    // The same passes again, when the registry makes them, to foresee
    // what the rewrites read.
    if let Ok(again) = make_passes(&names) {
        check.foresee(Pipeline::new(again, options.clone()));
    }
    let result = pipeline.run_with(module, &mut |run, m| check.after(run, m));
    check.finish(result)
}

/// (computation, instruction) of every rewrite a pass reported.
fn reported(run: &PassRun) -> Vec<(String, String)> {
    run.report
        .iter()
        .filter_map(|e| match e {
            ReportEntry::Rewrote {
                computation,
                instruction,
                ..
            } => Some((computation.clone(), instruction.clone())),
            ReportEntry::Skipped { .. } => None,
        })
        .collect()
}

/// The real inputs of a rewrite (or why there are none) and its outputs
/// before the pass, when kept.
type RewriteValues = (Result<Vec<Arc<Array>>, String>, Option<Vec<Arc<Array>>>);

/// Checks each rewrite on its values, on the machine's cores (each check
/// under its share of the budget; one refused so is checked again alone,
/// under all of it). The results in `rewrites`' order.
fn check_rewrites(
    rewrites: &[&Rewrite],
    values: Vec<RewriteValues>,
    cfg: &CheckConfig,
) -> Vec<Result<LocalCheck, EvalError>> {
    let check = |r: &Rewrite, (real, real_want): &RewriteValues, budget: &Budget| {
        r.check(
            real.clone(),
            real_want.clone(),
            cfg.seed,
            cfg.tolerance_scale,
            &cfg.eval,
            budget,
        )
    };
    let jobs: Vec<(&&Rewrite, &RewriteValues)> = rewrites.iter().zip(&values).collect();
    let threads = crate::util::threads_for(jobs.len(), true).max(1);
    let share = Budget {
        bytes: cfg.memory_budget.bytes / threads as u64,
        origin: format!(
            "{}, shared by {threads} checks at once",
            cfg.memory_budget.origin
        ),
    };
    let budget = if threads > 1 {
        &share
    } else {
        &cfg.memory_budget
    };
    let first = crate::util::par_map(&jobs, true, || (), |_, _, (r, v)| check(r, v, budget));
    first
        .into_iter()
        .zip(jobs)
        .map(|(result, (r, v))| match result {
            Err(e) if threads > 1 && e.kind == ErrorKind::Memory => check(r, v, &cfg.memory_budget),
            result => result,
        })
        .collect()
}

/// The rewrites of `run` (from `before` to `after`), each widened back to
/// inputs `original` has values for.
fn widened<'m>(
    original: &Original,
    before: &'m Module,
    after: &'m Module,
    run: &PassRun,
) -> Vec<Rewrite<'m>> {
    let mut found = rewrites(before, after, &reported(run));
    for r in &mut found {
        r.widen(|comp, instr| original.find(before, comp, instr).is_some());
    }
    found
}

/// The module before the passes, its instructions found by name: the
/// check looks up every input and output of every rewrite there, and a
/// scan of a 40k-instruction computation per lookup added up.
struct Original {
    module: Module,
    computations: FxMap<Box<str>, (CompId, FxMap<SharedStr, InstrId>)>,
    /// Instructions a pass made in place of one the original has (a
    /// rewrite's outputs: an inlined call's root, a raised softmax), by
    /// computation and name: a later rewrite that reads one reads the
    /// original's value, instead of being widened back through what the
    /// earlier pass made.
    stand_ins: FxMap<(Box<str>, SharedStr), StandIn>,
}

/// An instruction standing for one of the original's.
struct StandIn {
    /// What it is (an instruction of that name computing something else
    /// is not it).
    instruction: Instruction,
    original: (CompId, InstrId),
}

impl Original {
    fn new(module: Module) -> Original {
        let computations = module
            .computations()
            .map(|(id, c)| {
                let instrs = c.instructions().map(|(i, o)| (o.name.clone(), i)).collect();
                (c.name.clone(), (id, instrs))
            })
            .collect();
        Original {
            module,
            computations,
            stand_ins: FxMap::default(),
        }
    }

    /// Learns what `rewrites` (from `before` to `after`) made in place of
    /// the original's instructions.
    fn learn(&mut self, before: &Module, after: &Module, rewrites: &[&Rewrite]) {
        for r in rewrites {
            for ((ac, aid), (bc, bid)) in r.output_pairs() {
                let Some(original) = self.find(before, bc, bid) else {
                    continue;
                };
                let comp = after.comp(ac);
                let instruction = comp.instr(aid);
                let (oc, oi) = original;
                if self.module.comp(oc).instr(oi).shape != instruction.shape {
                    continue;
                }
                self.stand_ins.insert(
                    (comp.name.clone(), instruction.name.clone()),
                    StandIn {
                        instruction: instruction.clone(),
                        original,
                    },
                );
            }
        }
    }

    /// The instruction that `before`'s `(comp, instr)` is: the same name
    /// in the computation of the same name, computing the same.
    fn find(&self, before: &Module, comp: CompId, instr: InstrId) -> Option<(CompId, InstrId)> {
        let c = before.comp(comp);
        let i = c.instr(instr);
        let found = self.computations.get(&c.name).and_then(|(oc, instrs)| {
            let oi = *instrs.get(&*i.name)?;
            same_signature(self.module.comp(*oc).instr(oi), i).then_some((*oc, oi))
        });
        found.or_else(|| {
            let s = self.stand_ins.get(&(c.name.clone(), i.name.clone()))?;
            same_signature(&s.instruction, i).then_some(s.original)
        })
    }
}

/// Asks for the original's values of `r`'s inputs (those it has).
fn add_requests(request: &mut CaptureRequest, original: &Original, before: &Module, r: &Rewrite) {
    for (comp, instr, dims) in r.input_requests().into_iter().chain(r.output_requests()) {
        if let Some((oc, oi)) = original.find(before, comp, instr) {
            request.add(oc, oi, dims);
        }
    }
}

/// Whether the original module runs whole.
enum Whole {
    /// Not known yet: it is evaluated when a pass first changes the module
    /// (a module no pass touches is never evaluated).
    Untried,
    Runs(Reference),
    /// It cannot (why): every pass is checked region by region.
    Cannot(String),
}
use Whole::Runs;

/// What [`run_checked`] carries from pass to pass.
struct CheckState {
    original: Original,
    whole: Whole,
    /// The outputs on inputs perturbed by rounding, when first needed.
    noise: Option<Vec<Vec<Arc<Array>>>>,
    /// What evaluating the original needs.
    original_need: Need,
    /// Every value the pipeline's rewrites will read, when foreseen.
    foreseen: CaptureRequest,
    /// What the evaluations of the original were asked to keep.
    requested: CaptureRequest,
    /// What they kept.
    kept: FxMap<(CompId, InstrId), Arc<Array>>,
}

/// Whether an evaluation failure means "check region by region instead":
/// the interpreter lacks something, or a size limit was hit (not the
/// memory budget: regions of a module past it would be refused too, or
/// check far less than asked).
fn falls_back(e: &EvalError) -> bool {
    matches!(e.kind, ErrorKind::Unsupported | ErrorKind::Limit)
}

/// An error unless evaluating `module` fits the budget beside what a
/// checked run holds meanwhile: the reference's inputs and outputs, the
/// rounding-noise outputs (each device's, in lockstep), the values kept
/// for the local checks (`kept` bytes) and the comparison's f64 copies
/// of an output pair.
fn check_memory(
    module: &Module,
    original: &Need,
    kept: u64,
    cfg: &CheckConfig,
) -> Result<(), EvalError> {
    let need = estimate(module);
    let devices = lockstep_topology(module)
        .ok()
        .flatten()
        .map_or(1, |t| t.devices() as u64);
    let per_device = need
        .peak
        .saturating_add(original.inputs)
        .saturating_add(original.outputs.saturating_mul(2));
    let total = per_device
        .saturating_mul(devices)
        .saturating_add(kept)
        .saturating_add(original.largest_output.saturating_mul(16));
    cfg.memory_budget
        .check("--check-numerics' evaluation", total, &need)
}

impl CheckState {
    fn kept_bytes(&self) -> u64 {
        self.requested.bytes(&self.original.module)
    }

    /// Evaluates the original (again, if a pass needs values it did not
    /// keep), keeping `want` besides what was kept.
    fn evaluate_original(
        &mut self,
        want: CaptureRequest,
        cfg: &CheckConfig,
    ) -> Result<(), CheckError> {
        let before = |error| CheckError::Eval { pass: None, error };
        let mut request = self.requested.clone();
        for (c, m) in want.wanted {
            for (i, dims) in m {
                request.add(c, i, dims);
            }
        }
        let kept = request.bytes(&self.original.module);
        check_memory(&self.original.module, &self.original_need, kept, cfg).map_err(before)?;
        let capture = Rc::new(Capture::new(request.clone()));
        self.whole = match Reference::new(&self.original.module, cfg, capture.clone()) {
            Ok(r) => Runs(r),
            Err(e) if falls_back(&e) => Whole::Cannot(e.to_string()),
            Err(error) => return Err(before(error)),
        };
        self.requested = request;
        if let Ok(c) = Rc::try_unwrap(capture) {
            self.kept.extend(c.into_values());
        }
        Ok(())
    }

    /// The real values of `requests` (in `before`), or why there are none.
    fn real_values(
        &self,
        before: &Module,
        requests: Vec<(CompId, InstrId, Vec<usize>)>,
    ) -> Result<Vec<Arc<Array>>, String> {
        if let Whole::Cannot(why) = &self.whole {
            return Err(format!("the whole module cannot run: {why}"));
        }
        let mut out = Vec::new();
        for (comp, instr, dims) in requests {
            let name = || before.comp(comp).instr(instr).name.to_string();
            let Some(key) = self.original.find(before, comp, instr) else {
                return Err(format!(
                    "input {} is not in the module before the passes",
                    name()
                ));
            };
            let Some(v) = self.kept.get(&key) else {
                return Err(format!(
                    "input {} is not evaluated by its computation's first evaluation",
                    name()
                ));
            };
            if v.dims == dims {
                out.push(v.clone());
            } else {
                match prefix_block(v, &dims) {
                    Ok(b) => out.push(Arc::new(b)),
                    Err(_) => {
                        return Err(format!("input {} was kept as {}", name(), v.shape_text()))
                    }
                }
            }
        }
        Ok(out)
    }

    /// Checks one pass that changed the module, filling `check`; a wrong
    /// rewrite is `Ok(Some(error))` (the table is still shown).
    fn check_pass(
        &mut self,
        check: &mut PassCheck,
        run: &PassRun,
        before: &Module,
        after: &Module,
        cfg: &CheckConfig,
    ) -> Result<Option<CheckError>, CheckError> {
        let pass = check.pass;
        let found = widened(&self.original, before, after, run);
        let lockstep = lockstep_topology(&self.original.module)
            .map_err(|error| CheckError::Eval { pass: None, error })?
            .is_some();
        // What no local check covers: a change of the outputs' shapes, a
        // change that reaches no value, a module run on several devices.
        let not_local = lockstep || found.is_empty() || found.iter().any(|r| !r.is_local());
        check.whole_is_needed = not_local;
        let local: Vec<&Rewrite> = if lockstep {
            Vec::new()
        } else {
            found.iter().filter(|r| r.is_local()).collect()
        };
        // This pass's inputs, where the original has them.
        let mut want = CaptureRequest::default();
        for r in &local {
            add_requests(&mut want, &self.original, before, r);
        }
        let missing = want
            .wanted
            .iter()
            .any(|(c, m)| m.keys().any(|i| !self.requested.contains(*c, *i)));
        match self.whole {
            Whole::Untried => {
                let mut all = std::mem::take(&mut self.foreseen);
                for (c, m) in want.wanted {
                    for (i, dims) in m {
                        all.add(c, i, dims);
                    }
                }
                if lockstep {
                    all = CaptureRequest::default();
                }
                self.evaluate_original(all, cfg)?;
            }
            Runs(_) if missing => self.evaluate_original(want, cfg)?,
            _ => {}
        }
        if let Whole::Cannot(why) = &self.whole {
            check.by_region = Some(why.clone());
        }
        let values: Vec<_> = local
            .iter()
            .map(|r| {
                (
                    self.real_values(before, r.input_requests()),
                    self.real_values(before, r.output_requests()).ok(),
                )
            })
            .collect();
        for c in check_rewrites(&local, values, cfg) {
            let c = c.map_err(|error| CheckError::Eval {
                pass: Some(pass),
                error,
            })?;
            check.local += 1;
            let failed = c.failure.clone();
            let line = c.describe();
            if c.region.unchecked.is_some() {
                check.unchecked.push(line.clone());
            }
            check.regions.push(line);
            let bad = c.region.rows.iter().find(|row| !row.diff.ok()).cloned();
            let (name, computation) = (c.name, c.region.computation);
            check.rows.extend(c.region.rows);
            if let (Some(row), Some(detail)) = (bad, failed) {
                return Ok(Some(local_error(pass, &name, &computation, row, detail)));
            }
        }
        self.original.learn(before, after, &local);
        if !(not_local || cfg.mode == CheckMode::Full) {
            return Ok(None);
        }
        let why = match &self.whole {
            Runs(reference) => {
                match check_memory(after, &self.original_need, self.kept_bytes(), cfg)
                    .and_then(|()| outputs(after, &reference.inputs, &cfg.eval))
                {
                    Ok(got) => {
                        check.whole = true;
                        self.compare_whole(check, got, after, before, cfg)?;
                        return Ok(None);
                    }
                    Err(e) if falls_back(&e) => format!("after this pass, {e}"),
                    Err(error) => {
                        return Err(CheckError::Eval {
                            pass: Some(pass),
                            error,
                        })
                    }
                }
            }
            Whole::Cannot(why) => why.clone(),
            Whole::Untried => unreachable!("the reference was just tried"),
        };
        if !not_local {
            // Every change was checked locally; the second signal is not
            // to be had.
            check
                .regions
                .push(format!("outputs not re-evaluated: {why}"));
            return Ok(None);
        }
        let regions = check_regions_with(
            before,
            after,
            cfg.seed,
            cfg.tolerance_scale,
            &cfg.eval,
            &cfg.memory_budget,
        )
        .map_err(|error| CheckError::Eval {
            pass: Some(pass),
            error,
        })?;
        check.by_region = Some(why);
        check.local = 0;
        check.rows.clear();
        check.regions.clear();
        check.unchecked.clear();
        for r in regions {
            let line = r.describe();
            if r.unchecked.is_some() {
                check.unchecked.push(line.clone());
            }
            check.regions.push(line);
            check.rows.extend(r.rows);
        }
        Ok(None)
    }

    /// Compares the module's outputs after a pass with the original's.
    fn compare_whole(
        &mut self,
        check: &mut PassCheck,
        got: Vec<Vec<Arc<Array>>>,
        after: &Module,
        before: &Module,
        cfg: &CheckConfig,
    ) -> Result<(), CheckError> {
        let Runs(reference) = &self.whole else {
            return Ok(());
        };
        let names_before = instruction_names(before);
        let devices = reference.inputs.len();
        check.devices = devices;
        // A rewrite that computes in a narrow type moves what depends on
        // it by that type's rounding, whatever the output's own type.
        let rewrite_rtol = narrowest_new_float(after, &names_before).map_or(0.0, check_rtol);
        // (device, output) of each row.
        let mut keys = Vec::new();
        let first = check.rows.len();
        for (d, want_d) in reference.outputs.iter().enumerate() {
            for (i, want) in want_d.iter().enumerate() {
                let name = if devices == 1 {
                    format!("out{i}")
                } else {
                    format!("d{d}:out{i}")
                };
                let shape = want.shape_text();
                let diff = match got.get(d).and_then(|g| g.get(i)) {
                    Some(g) => compare_with(
                        g,
                        want,
                        check_rtol(want.ty).max(rewrite_rtol) * cfg.tolerance_scale,
                    ),
                    None => Diff {
                        max_abs: 0.0,
                        max_rel: 0.0,
                        tolerance: 0.0,
                        bad: 0,
                        first_bad: None,
                        shape_mismatch: Some("the output is gone".into()),
                        noise_floor: 0.0,
                        beyond_noise: 0,
                        operand_scale: 0.0,
                    },
                };
                check.rows.push(OutputRow { name, shape, diff });
                keys.push((d, i));
            }
        }
        // An output the relative tolerance rejects may be rounding noise
        // (a sum that cancels to ~0, like the gradient of a bias before a
        // softmax): measure its noise floor, to say so (inconclusive).
        let failing: Vec<usize> = (0..keys.len())
            .filter(|&r| {
                let d = &check.rows[first + r].diff;
                let (dev, i) = keys[r];
                let ty = reference.outputs[dev][i].ty;
                !d.ok() && d.shape_mismatch.is_none() && (ty.is_float() || ty.is_complex())
            })
            .collect();
        if !failing.is_empty() {
            let before = |error| CheckError::Eval { pass: None, error };
            if self.noise.is_none() {
                let perturbed = reference
                    .inputs
                    .iter()
                    .map(|inputs| perturb_inputs(inputs, cfg.seed))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(before)?;
                self.noise =
                    Some(outputs(&self.original.module, &perturbed, &cfg.eval).map_err(before)?);
            }
            let noise = self.noise.as_deref().unwrap_or_default();
            for r in failing {
                let (dev, i) = keys[r];
                let want = &reference.outputs[dev][i];
                let floor = noise
                    .get(dev)
                    .and_then(|n| n.get(i))
                    .map_or(0.0, |n| NOISE_FACTOR * max_abs_diff(n, want));
                let tol = check.rows[first + r].diff.tolerance;
                check.rows[first + r].diff = compare_with_floor(&got[dev][i], want, tol, floor);
            }
        }
        check.extra_outputs = got
            .first()
            .map_or(0, |g| g.len())
            .saturating_sub(reference.outputs.first().map_or(0, |o| o.len()));
        Ok(())
    }
}

fn local_error(
    pass: &'static str,
    rewrite: &str,
    computation: &str,
    row: OutputRow,
    detail: String,
) -> CheckError {
    CheckError::Local {
        pass,
        rewrite: rewrite.to_string(),
        found: Box::new(LocalFailure {
            computation: computation.to_string(),
            output: format!("{} ({})", row.name, row.shape),
            diff: row.diff,
            detail,
        }),
    }
}

/// The original module's inputs and outputs, per device: one device,
/// unless the module's collectives exchange data between devices, when
/// every device of the module runs (in lockstep).
struct Reference {
    inputs: Vec<Vec<Value>>,
    outputs: Vec<Vec<Arc<Array>>>,
}

impl Reference {
    /// Evaluates `module` on its inputs (one device: keeping what
    /// `capture` asks for).
    fn new(
        module: &Module,
        cfg: &CheckConfig,
        capture: Rc<Capture>,
    ) -> Result<Reference, EvalError> {
        let inputs = match (lockstep_topology(module)?, &cfg.inputs) {
            (None, Some(v)) => vec![v.clone()],
            (None, None) => vec![crate::interp::random::random_inputs(module, cfg.seed)?],
            (Some(t), Some(v)) => vec![v.clone(); t.devices()],
            (Some(t), None) => random_device_inputs(module, &t, cfg.seed)?,
        };
        let outputs = match &inputs[..] {
            [one] => vec![Interpreter::with_options(module, cfg.eval.clone())
                .with_capture(capture)
                .run(one)?
                .leaves()],
            _ => outputs(module, &inputs, &cfg.eval)?,
        };
        Ok(Reference { inputs, outputs })
    }
}

/// Each device's outputs: [`evaluate_with`] for one device, else
/// [`evaluate_devices_with`] (the module must still run on as many devices).
fn outputs(
    module: &Module,
    inputs: &[Vec<Value>],
    options: &EvalOptions,
) -> Result<Vec<Vec<Arc<Array>>>, EvalError> {
    Ok(match inputs {
        [one] => vec![evaluate_with(module, one, options)?.leaves()],
        _ => evaluate_devices_with(module, inputs, options)?
            .iter()
            .map(Value::leaves)
            .collect(),
    })
}

/// Every (computation, instruction) name of `module`.
fn instruction_names(module: &Module) -> std::collections::HashSet<(String, String)> {
    module
        .computations()
        .flat_map(|(_, c)| {
            c.instructions()
                .map(|(_, i)| (c.name.to_string(), i.name.to_string()))
        })
        .collect()
}

/// The narrowest float type (the largest [`rtol`]) an instruction that is
/// not in `before` computes in.
fn narrowest_new_float(
    module: &Module,
    before: &std::collections::HashSet<(String, String)>,
) -> Option<PrimitiveType> {
    module
        .computations()
        .flat_map(|(_, c)| {
            c.instructions()
                .filter(|(_, i)| !before.contains(&(c.name.to_string(), i.name.to_string())))
                .map(|(_, i)| i.shape.element_type())
                .collect::<Vec<_>>()
        })
        .filter(|t| t.is_float())
        .max_by(|a, b| rtol(*a).total_cmp(&rtol(*b)))
}

/// The element count of the largest array any instruction of `module` has.
fn largest_array_in(module: &Module) -> i64 {
    module
        .computations()
        .flat_map(|(_, c)| c.instructions())
        .map(|(_, i)| largest_array(&i.shape))
        .max()
        .unwrap_or(0)
}

/// Makes the passes of a pipeline by name (the registry's).
pub fn make_passes(names: &[&str]) -> Result<Vec<Box<dyn Pass>>, crate::passes::UnknownPass> {
    names
        .iter()
        .map(|n| {
            crate::passes::find_pass(n)
                .map(|p| (p.make)())
                .ok_or_else(|| crate::passes::UnknownPass {
                    name: n.to_string(),
                })
        })
        .collect()
}

/// What `--check-numerics` prints before the tables: the inputs and the
/// tolerances.
pub fn heading(seed: u64) -> String {
    format!("check-numerics: seeded inputs (seed {seed}); each rewrite checked where it happened on the values it read there (and extremes), |got - want| <= rtol * (|want| + max|want|) with rtol 2 ulp per rounding step of the region (docs/interpreter.md); whole outputs (where compared) at rtol f32 1e-4, f16 4e-3, bf16 2e-2, f64 1e-9, within their rounding noise only inconclusive; integers, pred and indices exact\n")
}
