//! Passes: the interface, the registry, and the pipeline that runs them.
//!
//! A pass has a kebab-case name and `run` returns whether it changed the
//! module (XLA's `HloPassInterface`). The registry lists every pass with
//! its place in the default pipeline (CONTRACT.md section 2); utility
//! passes have no place and run only when named.

pub mod dce;

use crate::ir::verify::{verify, VerifyError};
use crate::ir::Module;
use std::fmt;
use std::time::{Duration, Instant};

/// Which computations a pass walks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scope {
    /// What the original pass does (entry only, or all for the softmax raises).
    #[default]
    Original,
    /// Every computation: while bodies, conditionals, calls, fusions.
    AllComputations,
}

/// Settings every pass sees.
#[derive(Clone, Debug, Default)]
pub struct PassOptions {
    pub scope: Scope,
}

/// A failure inside a pass: names the pass and, where there is one, the
/// instruction.
#[derive(Debug)]
pub enum PassError {
    /// The input breaks a rule the pass relies on.
    BadInput {
        pass: &'static str,
        instruction: String,
        message: String,
    },
    /// The pass left the module invalid: a bug in the pass.
    Verifier {
        pass: &'static str,
        error: VerifyError,
    },
}

impl fmt::Display for PassError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PassError::BadInput {
                pass,
                instruction,
                message,
            } => write!(f, "pass {pass}: instruction {instruction}: {message}"),
            PassError::Verifier { pass, error } => {
                write!(
                    f,
                    "pass {pass} left an invalid module (a bug in the pass): {error}"
                )
            }
        }
    }
}

impl std::error::Error for PassError {}

pub trait Pass {
    fn name(&self) -> &'static str;
    /// Runs over the module; returns whether anything changed.
    fn run(&mut self, module: &mut Module, options: &PassOptions) -> Result<bool, PassError>;
}

/// A registry entry.
pub struct PassInfo {
    pub name: &'static str,
    /// Place in the default pipeline; `None` for utility passes.
    pub order: Option<u32>,
    pub summary: &'static str,
    pub make: fn() -> Box<dyn Pass>,
}

/// Every pass this tool knows, default-pipeline passes by order first.
pub fn registry() -> &'static [PassInfo] {
    &[PassInfo {
        name: "dce",
        order: None,
        summary: "remove instructions nothing uses (keeps parameters and side effects)",
        make: || Box::new(dce::Dce),
    }]
}

pub fn find_pass(name: &str) -> Option<&'static PassInfo> {
    registry().iter().find(|p| p.name == name)
}

/// Names of the default pipeline, in order.
pub fn default_pipeline() -> Vec<&'static str> {
    let mut v: Vec<&PassInfo> = registry().iter().filter(|p| p.order.is_some()).collect();
    v.sort_by_key(|p| p.order);
    v.into_iter().map(|p| p.name).collect()
}

/// What one pass did in a pipeline run.
#[derive(Clone, Debug)]
pub struct PassRun {
    pub name: &'static str,
    pub changed: bool,
    pub elapsed: Duration,
}

/// An ordered list of passes.
pub struct Pipeline {
    passes: Vec<Box<dyn Pass>>,
    /// Run the verifier after each pass (tests always do).
    pub verify_each: bool,
    pub options: PassOptions,
}

/// An unknown pass name, with the valid ones.
#[derive(Debug)]
pub struct UnknownPass {
    pub name: String,
}

impl fmt::Display for UnknownPass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let valid: Vec<&str> = registry().iter().map(|p| p.name).collect();
        write!(
            f,
            "unknown pass '{}'; valid passes are: {}",
            self.name,
            valid.join(", ")
        )
    }
}

impl std::error::Error for UnknownPass {}

impl Pipeline {
    /// A pipeline of registry passes by name.
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Result<Pipeline, UnknownPass> {
        let passes = names
            .iter()
            .map(|n| {
                find_pass(n.as_ref())
                    .map(|p| (p.make)())
                    .ok_or_else(|| UnknownPass {
                        name: n.as_ref().to_string(),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Pipeline {
            passes,
            verify_each: true,
            options: PassOptions::default(),
        })
    }

    pub fn default_pipeline() -> Pipeline {
        Pipeline::from_names(&default_pipeline()).expect("registry names are valid")
    }

    pub fn pass_names(&self) -> Vec<&'static str> {
        self.passes.iter().map(|p| p.name()).collect()
    }

    /// Runs every pass in order; stops at the first error.
    pub fn run(&mut self, module: &mut Module) -> Result<Vec<PassRun>, PassError> {
        let mut runs = Vec::with_capacity(self.passes.len());
        for pass in &mut self.passes {
            let start = Instant::now();
            let changed = pass.run(module, &self.options)?;
            let elapsed = start.elapsed();
            if self.verify_each {
                verify(module).map_err(|error| PassError::Verifier {
                    pass: pass.name(),
                    error,
                })?;
            }
            runs.push(PassRun {
                name: pass.name(),
                changed,
                elapsed,
            });
        }
        Ok(runs)
    }
}
