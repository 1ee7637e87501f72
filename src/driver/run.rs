//! One run of the passes: the only place that orchestrates one. The
//! command line (`src/main.rs`) and the Python package
//! (`python/src/lib.rs`) are two faces of it: each turns its own options
//! into a [`RunConfig`], hands [`run`] a module and its [`Callbacks`], and
//! turns the [`Outcome`] into files or Python objects. `run` reads nothing
//! and writes nothing itself.
//!
//! What a run does, in order:
//! 1. the contract checks of the Neuron custom calls (when any pass is to
//!    run and they are not turned off);
//! 2. the input handed to [`Callbacks::dump`] as `00.input.hlo`;
//! 3. the pipeline, pass by pass; after each pass, in this order: the
//!    record of what it did (for the page and the graph), the module
//!    handed to [`Callbacks::dump`] as `NN.<pass>.hlo` when it changed,
//!    and the numeric check (its table handed to
//!    [`Callbacks::numerics`]);
//! 4. the outcome: the module, each pass's run, the numerics tables, the
//!    record. A run that fails keeps its record, so the page still shows
//!    the passes that ran.

use super::check_numerics::{CheckConfig, CheckError, NumericsCheck, PassCheck};
use super::graph_json::GraphMarks;
use super::report_html::RunRecord;
use crate::ir::Module;
use crate::neuron::contract::{self, Violation};
use crate::output::{Destination, Links, OutputPlan, Staged};
use crate::passes::{PassError, PassRun, Pipeline};
use crate::text::write_module;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What to run and what to keep.
#[derive(Clone, Debug, Default)]
pub struct RunConfig {
    /// As `--passes`: `None` (or `default`) runs the default pipeline;
    /// else comma-separated names, `""` none.
    pub passes: Option<String>,
    /// Every pass walks every computation.
    pub all_computations: bool,
    /// Skip the contract checks.
    pub no_contract_checks: bool,
    /// Prove the rewrites with the interpreter.
    pub check_numerics: Option<CheckConfig>,
    /// Keep the record the page and the graph are drawn from, titled.
    pub record: Option<String>,
    /// Keep what each pass matched and made, for the graph (with `record`,
    /// whose copy of the module each pass ran on it reads).
    pub graph: bool,
}

/// What a face hears while a run goes on.
pub trait Callbacks {
    /// A module to dump, by its file name: `00.input.hlo` before the
    /// passes, then `NN.<pass>.hlo` after each pass that changed it.
    /// Called only when [`Callbacks::dumps`] says so.
    fn dump(&mut self, _name: &str, _module: &Module) -> Result<(), String> {
        Ok(())
    }
    /// Whether [`Callbacks::dump`] wants the modules.
    fn dumps(&self) -> bool {
        false
    }
    /// A pass's numerics table, as soon as it is known.
    fn numerics(&mut self, _check: &PassCheck) {}
    /// After each pass (and what the run does after it): an error stops
    /// the run there (Python's Ctrl-C).
    fn after_pass(&mut self, _run: &PassRun) -> Result<(), String> {
        Ok(())
    }
}

/// Callbacks that want nothing.
pub struct Quiet;

impl Callbacks for Quiet {}

/// What a run made.
pub struct Outcome {
    pub module: Module,
    pub runs: Vec<PassRun>,
    /// One per pass run, with `check_numerics`.
    pub checks: Vec<PassCheck>,
    pub record: Option<RunRecord>,
    /// With `graph`.
    pub graph: Option<GraphMarks>,
}

/// Why a run stopped.
#[derive(Debug)]
pub enum RunError {
    /// `--passes` names a pass that does not exist.
    Pipeline(String),
    /// The Neuron custom calls break their contract (before the passes).
    Contract(Vec<Violation>),
    /// A pass failed, or a callback did.
    Pass(PassError),
    /// The numeric check failed or could not run.
    Numerics(CheckError),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Pipeline(e) => write!(f, "{e}"),
            RunError::Contract(v) => write!(
                f,
                "{} contract violation{}",
                v.len(),
                if v.len() == 1 { "" } else { "s" }
            ),
            RunError::Pass(e) => write!(f, "{e}"),
            RunError::Numerics(e) => write!(f, "{e}"),
        }
    }
}

/// A run that stopped, with the record of the passes that ran.
pub struct Failure {
    pub error: RunError,
    pub record: Option<RunRecord>,
}

impl From<RunError> for Box<Failure> {
    fn from(error: RunError) -> Box<Failure> {
        Box::new(Failure {
            error,
            record: None,
        })
    }
}

/// The dump files a run may write into a folder, planned with a face's
/// other outputs (a link in the folder is replaced, never followed), and
/// staged with them as the run hands modules over.
#[derive(Default)]
pub struct DumpFiles {
    by_name: HashMap<String, Destination>,
    dir: Option<PathBuf>,
    /// The folders [`DumpFiles::make_folder`] created, innermost first:
    /// those still empty when this is dropped (the run failed before any
    /// dump was committed) are removed, so a failed run leaves no trace.
    made: Vec<PathBuf>,
}

impl Drop for DumpFiles {
    fn drop(&mut self) {
        for folder in &self.made {
            // Fails, and so keeps the folder, unless it is empty.
            if std::fs::remove_dir(folder).is_err() {
                break;
            }
        }
    }
}

impl DumpFiles {
    /// Plans every dump of a run of `config` in `dir` (`what` names the
    /// option in messages); `None`: no dumps.
    pub fn plan(
        plan: &mut OutputPlan,
        what: &str,
        dir: Option<&Path>,
        config: &RunConfig,
    ) -> Result<DumpFiles, String> {
        let mut by_name = HashMap::new();
        if let Some(dir) = dir {
            for name in dump_names(config).map_err(|e| format!("error: {e}"))? {
                let d = plan.output(what, &dir.join(&name), Links::Replace)?;
                by_name.insert(name, d);
            }
        }
        Ok(DumpFiles {
            by_name,
            dir: dir.map(Path::to_path_buf),
            made: Vec::new(),
        })
    }

    /// Makes the dumps' folder (and its missing parents), which the staged
    /// files are written beside. Each level is made from the outside in,
    /// and only those this call made are its to remove: not one that
    /// another process made meanwhile, nor one `a/../b` only passes by.
    pub fn make_folder(&mut self) -> Result<(), String> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        let mut level = PathBuf::new();
        for part in dir.components() {
            level.push(part);
            match std::fs::create_dir(&level) {
                Ok(()) => self.made.insert(0, level.clone()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && level.is_dir() => {}
                Err(e) => return Err(format!("{}: error: {e}", dir.display())),
            }
        }
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// Stages `module` as the dump `name`, in its own form.
    pub fn stage(&self, staged: &mut Staged, name: &str, module: &Module) -> Result<(), String> {
        match self.by_name.get(name) {
            Some(d) => staged.write(d, |f| {
                let mut w = std::io::BufWriter::new(f);
                write_module(module, &module.style, &mut w)?;
                w.flush()
            }),
            None => Ok(()),
        }
    }
}

/// The dump file name of the pass run `step`-th (from 1).
pub fn dump_name(step: usize, pass: &str) -> String {
    format!("{step:02}.{pass}.hlo")
}

/// Every dump file a run of `config` may write, before it runs: the
/// input and one per pass of its pipeline.
pub fn dump_names(config: &RunConfig) -> Result<Vec<String>, RunError> {
    let pipeline = pipeline(config)?;
    Ok(std::iter::once("00.input.hlo".to_string())
        .chain(
            pipeline
                .pass_names()
                .iter()
                .enumerate()
                .map(|(i, name)| dump_name(i + 1, name)),
        )
        .collect())
}

fn pipeline(config: &RunConfig) -> Result<Pipeline, RunError> {
    let p = super::pipeline(config.passes.as_deref(), config.all_computations)
        .map_err(RunError::Pipeline)?;
    match config.check_numerics.as_ref().and_then(|c| c.fault) {
        None => Ok(p),
        Some(fault) => {
            let passes = super::check_numerics::make_passes(&p.pass_names())
                .map_err(|e| RunError::Pipeline(e.to_string()))?;
            Ok(Pipeline::new(
                super::fault::wrap(passes, fault),
                p.options.clone(),
            ))
        }
    }
}

/// Runs `config` on `module` (verified by the caller, who knows its
/// lines); see the module documentation.
pub fn run(
    mut module: Module,
    config: &RunConfig,
    callbacks: &mut dyn Callbacks,
) -> Result<Outcome, Box<Failure>> {
    let mut pipeline = pipeline(config)?;
    // Each pass is held to the contract on what it changed, unless the
    // user waived it for the input (`Pipeline::contract_checks`).
    pipeline.contract_checks = !config.no_contract_checks;
    // The checks guard the passes; a pure round trip (`--passes ''`), a
    // format conversion, needs none.
    if !config.no_contract_checks && !pipeline.pass_names().is_empty() {
        let violations = contract::check(&module);
        if !violations.is_empty() {
            return Err(RunError::Contract(violations).into());
        }
    }
    let dumps = callbacks.dumps();
    if dumps {
        callbacks.dump("00.input.hlo", &module).map_err(|message| {
            RunError::Pass(PassError::After {
                pass: "dump",
                message,
            })
        })?;
    }
    let mut record = config
        .record
        .as_deref()
        .map(|title| RunRecord::new(&module, title));
    let mut graph = (config.graph && record.is_some()).then(GraphMarks::default);
    // The check hands its tables over while the run hands over dumps.
    let callbacks = RefCell::new(callbacks);
    let mut on_table = |c: &PassCheck| callbacks.borrow_mut().numerics(c);
    let mut numerics = config
        .check_numerics
        .as_ref()
        .map(|cfg| NumericsCheck::new(&module, cfg, &mut on_table));
    // The check learns from a dry run what every rewrite will read, so
    // the module before the passes is evaluated once for all passes.
    if let Some(check) = &mut numerics {
        check.foresee(self::pipeline(config)?);
    }
    let mut step = 0;
    // The dump comes first: a module the check refuses is the one to see.
    let mut after = |run: &PassRun, m: &Module| {
        step += 1;
        if let Some(record) = &mut record {
            // The marks read the module the pass ran on, which the record
            // replaces.
            if let Some(graph) = &mut graph {
                graph.after(run, record.previous(), m);
            }
            record.after(run, m)?;
        }
        if dumps && run.changed {
            callbacks
                .borrow_mut()
                .dump(&dump_name(step, run.name), m)
                .map_err(|message| PassError::After {
                    pass: run.name,
                    message,
                })?;
        }
        if let Some(check) = &mut numerics {
            check.after(run, m)?;
        }
        callbacks
            .borrow_mut()
            .after_pass(run)
            .map_err(|message| PassError::After {
                pass: run.name,
                message,
            })
    };
    let result = pipeline.run_with(&mut module, &mut after);
    let judged = match numerics {
        Some(check) => check.finish(result).map_err(RunError::Numerics),
        None => result
            .map(|runs| (runs, Vec::new()))
            .map_err(RunError::Pass),
    };
    match judged {
        Ok((runs, checks)) => Ok(Outcome {
            module,
            runs,
            checks,
            record,
            graph,
        }),
        Err(error) => Err(Box::new(Failure { error, record })),
    }
}
