//! `--check-numerics`: a numeric proof of every rewrite a pipeline makes.
//! The module is evaluated (reference interpreter, seeded inputs) before
//! the passes and after every pass that changed it, and the outputs are
//! compared with the tolerances of [`crate::interp::compare`].
//!
//! A module whose collectives exchange data between devices is evaluated
//! on all of its devices in lockstep ([`crate::interp::evaluate_devices`]),
//! each device with its own seeded inputs, and every device's outputs are
//! compared (named `d<k>:out<i>`).

use crate::interp::array::{largest_array, Array, Value, MAX_ELEMENTS};
use crate::interp::budget::{estimate, Budget, Need};
use crate::interp::collective::{evaluate_devices_with, lockstep_topology, random_device_inputs};
use crate::interp::compare::{
    check_rtol, compare_with, compare_with_floor, max_abs_diff, perturb_inputs, rtol, Diff,
    OutputRow, NOISE_FACTOR,
};
use crate::interp::region::check_regions_with;
use crate::interp::{evaluate_with, ErrorKind, EvalError, EvalOptions};
use crate::ir::{Module, PrimitiveType};
use crate::passes::{Pass, PassError, PassOptions, PassRun, Pipeline};
use std::fmt;
use std::sync::Arc;

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
        }
    }

    /// How the pass was checked, as the table's heading says it.
    pub fn how(&self) -> String {
        match (self.changed, &self.by_region, self.devices) {
            (false, _, _) => "unchanged".to_string(),
            (true, Some(why), _) => {
                format!("changed, checked region by region (the whole module cannot run: {why})")
            }
            (true, None, 0 | 1) => "changed, outputs re-evaluated".to_string(),
            (true, None, n) => format!("changed, outputs re-evaluated on {n} devices in lockstep"),
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
        }
    }
}

/// `--check-numerics` as an observer of [`Pipeline::run_with`]: it
/// evaluates the module before the passes and again after every pass that
/// changed it, comparing every output with the outputs before the passes.
/// `on_pass` sees each pass's table as soon as it is known. The first pass
/// that moves an output beyond tolerance stops the pipeline, and
/// [`NumericsCheck::finish`] names the pass and the output.
///
/// An output beyond the relative tolerance is compared again with an
/// absolute allowance of [`NOISE_FACTOR`] times its rounding noise: how far
/// the original module moves it on [`perturb_inputs`] (evaluated once, on
/// the first such output). A sum that cancels to about zero is all noise
/// and passes; a wrong rewrite moves a well-conditioned output by far more
/// than an ulp-sized perturbation does, and still fails.
///
/// When the whole module cannot run (it holds an op or form the
/// interpreter lacks, or an array past its limit), every pass is checked
/// region by region on what it changed instead ([`check_regions`]); so is
/// a single pass whose result alone cannot run. A region that itself holds
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
            original: module.clone(),
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

    /// Checks one pass as it left the module (the observer's hook).
    pub fn after(&mut self, run: &PassRun, module: &Module) -> Result<(), PassError> {
        let mut check = PassCheck::new(run.name, run.changed);
        if run.changed {
            let names_before = instruction_names(&self.previous);
            let checked =
                self.state
                    .check_pass(&mut check, &self.previous, module, &names_before, self.cfg);
            if let Err(e) = checked {
                return Err(self.stop(run.name, e));
            }
            self.previous = module.clone();
        }
        (self.on_pass)(&check);
        let failed = check
            .rows
            .iter()
            .find(|r| !r.diff.ok())
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
    let mut pipeline = Pipeline::new(passes, options.clone());
    pipeline.verify_each = cfg.verify_each;
    let mut check = NumericsCheck::new(module, cfg, on_pass);
    let result = pipeline.run_with(module, &mut |run, m| check.after(run, m));
    check.finish(result)
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

/// What [`run_checked`] carries from pass to pass.
struct CheckState {
    original: Module,
    whole: Whole,
    /// The outputs on inputs perturbed by rounding, when first needed.
    noise: Option<Vec<Vec<Arc<Array>>>>,
    /// What evaluating the original needs.
    original_need: Need,
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
/// rounding-noise outputs (each device's, in lockstep) and the
/// comparison's f64 copies of an output pair.
fn check_memory(module: &Module, original: &Need, cfg: &CheckConfig) -> Result<(), EvalError> {
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
        .saturating_add(original.largest_output.saturating_mul(16));
    cfg.memory_budget
        .check("--check-numerics' evaluation", total, &need)
}

impl CheckState {
    /// Checks one pass that changed the module, filling `check`.
    fn check_pass(
        &mut self,
        check: &mut PassCheck,
        before: &Module,
        after: &Module,
        names_before: &std::collections::HashSet<(String, String)>,
        cfg: &CheckConfig,
    ) -> Result<(), CheckError> {
        let pass = check.pass;
        if let Whole::Untried = self.whole {
            check_memory(&self.original, &self.original_need, cfg)
                .map_err(|error| CheckError::Eval { pass: None, error })?;
            self.whole = match Reference::new(&self.original, cfg) {
                Ok(r) => Whole::Runs(r),
                Err(e) if falls_back(&e) => Whole::Cannot(e.to_string()),
                Err(error) => return Err(CheckError::Eval { pass: None, error }),
            };
        }
        let why = match &self.whole {
            Whole::Runs(reference) => match check_memory(after, &self.original_need, cfg)
                .and_then(|()| outputs(after, &reference.inputs, &cfg.eval))
            {
                Ok(got) => return self.compare_whole(check, got, after, names_before, cfg),
                Err(e) if falls_back(&e) => format!("after this pass, {e}"),
                Err(error) => {
                    return Err(CheckError::Eval {
                        pass: Some(pass),
                        error,
                    })
                }
            },
            Whole::Cannot(why) => why.clone(),
            Whole::Untried => unreachable!("the reference was just tried"),
        };
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
        for r in regions {
            let line = r.describe();
            if r.unchecked.is_some() {
                check.unchecked.push(line.clone());
            }
            check.regions.push(line);
            check.rows.extend(r.rows);
        }
        Ok(())
    }

    /// Compares the module's outputs after a pass with the original's.
    fn compare_whole(
        &mut self,
        check: &mut PassCheck,
        got: Vec<Vec<Arc<Array>>>,
        after: &Module,
        names_before: &std::collections::HashSet<(String, String)>,
        cfg: &CheckConfig,
    ) -> Result<(), CheckError> {
        let Whole::Runs(reference) = &self.whole else {
            return Ok(());
        };
        let devices = reference.inputs.len();
        check.devices = devices;
        // A rewrite that computes in a narrow type moves what depends on
        // it by that type's rounding, whatever the output's own type.
        let rewrite_rtol = narrowest_new_float(after, names_before).map_or(0.0, check_rtol);
        // (device, output) of each row.
        let mut keys = Vec::new();
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
                    },
                };
                check.rows.push(OutputRow { name, shape, diff });
                keys.push((d, i));
            }
        }
        // An output the relative tolerance rejects may be rounding noise
        // (a sum that cancels to ~0, like the gradient of a bias before a
        // softmax): measure its noise floor and compare again.
        let failing: Vec<usize> = (0..check.rows.len())
            .filter(|&r| {
                let d = &check.rows[r].diff;
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
                self.noise = Some(outputs(&self.original, &perturbed, &cfg.eval).map_err(before)?);
            }
            let noise = self.noise.as_deref().unwrap_or_default();
            for r in failing {
                let (dev, i) = keys[r];
                let want = &reference.outputs[dev][i];
                let floor = noise
                    .get(dev)
                    .and_then(|n| n.get(i))
                    .map_or(0.0, |n| NOISE_FACTOR * max_abs_diff(n, want));
                let tol = check.rows[r].diff.tolerance;
                check.rows[r].diff = compare_with_floor(&got[dev][i], want, tol, floor);
            }
        }
        check.extra_outputs = got
            .first()
            .map_or(0, |g| g.len())
            .saturating_sub(reference.outputs.first().map_or(0, |o| o.len()));
        Ok(())
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
    fn new(module: &Module, cfg: &CheckConfig) -> Result<Reference, EvalError> {
        let inputs = match (lockstep_topology(module)?, &cfg.inputs) {
            (None, Some(v)) => vec![v.clone()],
            (None, None) => vec![crate::interp::random::random_inputs(module, cfg.seed)?],
            (Some(t), Some(v)) => vec![v.clone(); t.devices()],
            (Some(t), None) => random_device_inputs(module, &t, cfg.seed)?,
        };
        let outputs = outputs(module, &inputs, &cfg.eval)?;
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
    format!("check-numerics: seeded inputs (seed {seed}); tolerance |got - want| <= rtol * (|want| + max|want|), rtol f32 1e-4, f16 4e-3, bf16 2e-2, f64 1e-9, plus 10x an output's rounding noise where it needs it; integers, pred and indices exact\n")
}
