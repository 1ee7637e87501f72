//! Passes: the interface, the registry, and the pipeline that runs them.
//!
//! A pass has a kebab-case name and `run` returns whether it changed the
//! module (XLA's `HloPassInterface`). The registry lists every pass with
//! its place in the default pipeline (CONTRACT.md section 2); utility
//! passes have no place and run only when named. Each pass records what it
//! rewrote and what it skipped (and why) in its [`PassContext`], which
//! `--report` prints.

pub mod add_logit_output;
pub mod build;
pub mod call_inliner;
pub mod dce;
pub mod legalize_compare;
pub mod legalize_intrinsics;
pub mod legalize_quantize_mx;
pub mod legalize_scaled_matmul;
pub mod legalize_softmax;
pub mod legalize_topk;
pub mod native_to_custom_softmax;
pub mod native_to_custom_softmax_dx;
pub mod residuals;
pub mod softmax_match;

use crate::ir::verify::{verify_changed, VerifyError};
use crate::ir::{CompId, Computation, InstrId, Instruction, Module, Opcode};
use crate::neuron::contract::{self, Violation};
use std::fmt;
use std::time::{Duration, Instant};

/// Which computations a pass walks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scope {
    /// What the original pass does (entry only, or all for the softmax passes).
    #[default]
    Original,
    /// Every computation: while bodies, conditionals, calls, fusions.
    AllComputations,
}

/// The computations a pass's original walks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OriginalScope {
    Entry,
    Every,
}

/// Settings every pass sees.
#[derive(Clone, Debug, Default)]
pub struct PassOptions {
    pub scope: Scope,
}

/// One line of a pass's report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReportEntry {
    /// `instruction` (in `computation`) became `new` (its new name and what
    /// changed, e.g. the old and new custom-call targets).
    Rewrote {
        computation: String,
        instruction: String,
        detail: String,
    },
    /// A candidate the pass left alone, and why.
    Skipped {
        computation: String,
        instruction: String,
        reason: String,
    },
}

impl fmt::Display for ReportEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReportEntry::Rewrote {
                computation,
                instruction,
                detail,
            } => write!(f, "rewrote {computation}/{instruction}: {detail}"),
            ReportEntry::Skipped {
                computation,
                instruction,
                reason,
            } => write!(f, "skipped {computation}/{instruction}: {reason}"),
        }
    }
}

/// What a pass sees besides the module: options, and where it reports.
#[derive(Debug, Default)]
pub struct PassContext {
    pub options: PassOptions,
    pub report: Vec<ReportEntry>,
}

impl PassContext {
    pub fn new(options: PassOptions) -> PassContext {
        PassContext {
            options,
            report: Vec::new(),
        }
    }

    /// The computations to walk: the original scope, or every computation
    /// when the user asked for it. Callees come before callers.
    pub fn computations(&self, module: &Module, original: OriginalScope) -> Vec<CompId> {
        match (self.options.scope, original) {
            (Scope::Original, OriginalScope::Entry) => vec![module.entry()],
            _ => module.computation_post_order(),
        }
    }

    pub fn rewrote(
        &mut self,
        module: &Module,
        comp: CompId,
        instr: InstrId,
        detail: impl Into<String>,
    ) {
        self.report.push(ReportEntry::Rewrote {
            computation: module.comp(comp).name.to_string(),
            instruction: module.comp(comp).instr(instr).name.to_string(),
            detail: detail.into(),
        });
    }

    pub fn skipped(
        &mut self,
        module: &Module,
        comp: CompId,
        instr: InstrId,
        reason: impl Into<String>,
    ) {
        let reason = reason.into();
        log::debug!("{reason}");
        self.report.push(ReportEntry::Skipped {
            computation: module.comp(comp).name.to_string(),
            instruction: module.comp(comp).instr(instr).name.to_string(),
            reason,
        });
    }
}

/// The shape of the legalizers (the original's collect-then-rewrite walk):
/// every custom call whose target the pass [`wants`](Legalizer::wants), in
/// each computation in scope (in post order), is [`check`](Legalizer::check)ed
/// without changing anything; only once every candidate has been checked
/// are the rewrites [`apply`](Legalizer::apply)-ed. So no rewrite disturbs
/// a walk, and bad input found anywhere leaves the module as it was.
pub trait Legalizer {
    const NAME: &'static str;
    const SCOPE: OriginalScope;
    type Rewrite;

    /// The custom-call targets of the candidates.
    const TARGETS: &'static [&'static str];

    /// The rewrite a candidate needs, `None` when it is left alone (the
    /// reason goes to `ctx.skipped`), or an error refusing the module.
    fn check(call: Candidate, ctx: &mut PassContext) -> Result<Option<Self::Rewrite>, PassError>;

    fn apply(module: &mut Module, comp: CompId, rewrite: Self::Rewrite, ctx: &mut PassContext);
}

impl<L: Legalizer> Pass for L {
    fn name(&self) -> &'static str {
        L::NAME
    }

    fn run(&mut self, module: &mut Module, ctx: &mut PassContext) -> Result<bool, PassError> {
        let mut found = Vec::new();
        for comp in ctx.computations(module, L::SCOPE) {
            let computation = module.comp(comp);
            for id in candidates(computation, L::TARGETS) {
                let call = Candidate {
                    module,
                    comp,
                    id,
                    computation,
                    instr: computation.instr(id),
                };
                if let Some(rewrite) = L::check(call, ctx)? {
                    found.push((comp, rewrite));
                }
            }
        }
        let changed = !found.is_empty();
        for (comp, rewrite) in found {
            L::apply(module, comp, rewrite, ctx);
        }
        Ok(changed)
    }
}

/// A custom call a [`Legalizer`] checks, and where it is.
#[derive(Clone, Copy)]
pub struct Candidate<'a> {
    pub module: &'a Module,
    pub comp: CompId,
    pub id: InstrId,
    pub computation: &'a Computation,
    pub instr: &'a Instruction,
}

impl Candidate<'_> {
    /// Leaves the call alone, saying why in the report.
    pub fn skip<R>(
        &self,
        ctx: &mut PassContext,
        reason: impl Into<String>,
    ) -> Result<Option<R>, PassError> {
        ctx.skipped(self.module, self.comp, self.id, reason);
        Ok(None)
    }

    /// Leaves a typed-FFI call alone: its `backend_config` is an MLIR
    /// attribute dictionary, not the bare decimal `what` (the softmax
    /// axis, TopK's k) of the Neuron calling convention.
    pub fn skip_typed_ffi<R>(
        &self,
        ctx: &mut PassContext,
        target: &str,
        what: &str,
    ) -> Result<Option<R>, PassError> {
        self.skip(
            ctx,
            format!(
                "{target} is a typed-FFI call: its backend_config is an attribute dictionary, \
                 not the decimal {what} of the Neuron calling convention; left alone"
            ),
        )
    }
}

/// The custom calls to a wanted target, in post order. The post order is
/// computed only when there is one: most computations have none, and most
/// have no custom call at all.
fn candidates(comp: &Computation, targets: &[&str]) -> Vec<InstrId> {
    if !comp.may_contain(Opcode::CustomCall) {
        return Vec::new();
    }
    let is_candidate = |i: &Instruction| {
        i.opcode == Opcode::CustomCall
            && i.custom_call_target().is_some_and(|t| targets.contains(&t))
    };
    if !comp.instructions().any(|(_, i)| is_candidate(i)) {
        return Vec::new();
    }
    let mut order = comp.post_order();
    order.retain(|&id| is_candidate(comp.instr(id)));
    order
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
    /// The pass left a Neuron custom call breaking the contract its input
    /// kept ([`crate::neuron::contract`]): a bug in the pass. Every new
    /// violation, in print order.
    Contract {
        pass: &'static str,
        violations: Vec<Violation>,
    },
    /// What the caller does after a pass failed (writing a dump, ...).
    After { pass: &'static str, message: String },
}

impl PassError {
    pub fn bad_input(
        pass: &'static str,
        instruction: &str,
        message: impl Into<String>,
    ) -> PassError {
        PassError::BadInput {
            pass,
            instruction: instruction.to_string(),
            message: message.into(),
        }
    }
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
            PassError::Contract { pass, violations } => {
                write!(
                    f,
                    "pass {pass} left {} Neuron custom call{} breaking the contract its input kept \
                     (a bug in the pass): ",
                    violations.len(),
                    if violations.len() == 1 { "" } else { "s" }
                )?;
                for (i, v) in violations.iter().enumerate() {
                    let sep = if i == 0 { "" } else { "; " };
                    write!(f, "{sep}contract violation {}", v.headline())?;
                }
                Ok(())
            }
            PassError::After { pass, message } => write!(f, "after pass {pass}: {message}"),
        }
    }
}

impl std::error::Error for PassError {}

pub trait Pass {
    fn name(&self) -> &'static str;
    /// Runs over the module; returns whether anything changed.
    fn run(&mut self, module: &mut Module, ctx: &mut PassContext) -> Result<bool, PassError>;
}

/// A registry entry.
pub struct PassInfo {
    pub name: &'static str,
    /// Place in the default pipeline; `None` for utility passes.
    pub order: Option<u32>,
    pub summary: &'static str,
    pub make: fn() -> Box<dyn Pass>,
}

/// Every pass this tool knows.
pub fn registry() -> &'static [PassInfo] {
    &[
        PassInfo {
            name: "legalize-intrinsics",
            order: Some(5),
            summary:
                "AwsNeuron activations -> <target>_<dtype>(x, count); drop TransferWithStaticRing",
            make: || Box::new(legalize_intrinsics::LegalizeIntrinsics),
        },
        PassInfo {
            name: "legalize-softmax",
            order: Some(7),
            summary: "AwsNeuronSoftmax{,Backward}(..) -> same target (.., s64 index), named Softmax{,Backward}_<dtype>",
            make: || Box::new(legalize_softmax::LegalizeSoftmax),
        },
        PassInfo {
            name: "legalize-topk",
            order: Some(8),
            summary: "AwsNeuronTopK(x) -> TopK_<dtype>(x, s64 index); k validated and dropped",
            make: || Box::new(legalize_topk::LegalizeTopK),
        },
        PassInfo {
            name: "legalize-quantize-mx",
            order: Some(9),
            summary: "QuantizeMX -> QuantizeMX_<in>_<out>(meta, x): JSON config into a constant",
            make: || Box::new(legalize_quantize_mx::LegalizeQuantizeMX),
        },
        PassInfo {
            name: "legalize-scaled-matmul",
            order: Some(10),
            summary: "__op$block_scaled_dot -> ScaledMatmul_<a>_<a>_<out>(lhs, rhs, scales, meta)",
            make: || Box::new(legalize_scaled_matmul::LegalizeScaledMatmul),
        },
        PassInfo {
            name: "legalize-compare",
            order: Some(13),
            summary: "reset each compare's type= to the default for its operand type",
            make: || Box::new(legalize_compare::LegalizeCompare),
        },
        PassInfo {
            name: "call-inliner",
            order: Some(40),
            summary: "inline calls of small pure expressions (JAX's _where, clip, ...) before the raises",
            make: || Box::new(call_inliner::CallInliner),
        },
        PassInfo {
            name: "native-to-custom-softmax-dx",
            order: Some(41),
            summary: "raise a native softmax gradient into AwsNeuronSoftmaxBackward(dLdy, y)",
            make: || Box::new(native_to_custom_softmax_dx::NativeToCustomSoftmaxDx),
        },
        PassInfo {
            name: "native-to-custom-softmax",
            order: Some(42),
            summary: "raise a native softmax into AwsNeuronSoftmax(logits)",
            make: || Box::new(native_to_custom_softmax::NativeToCustomSoftmax),
        },
        PassInfo {
            name: "add-logit-output",
            order: Some(43),
            summary: "add the logits of an output softmax as one more entry output",
            make: || Box::new(add_logit_output::AddLogitOutput),
        },
        PassInfo {
            name: "dce",
            order: None,
            summary: "remove instructions nothing uses (keeps parameters and side effects)",
            make: || Box::new(dce::Dce),
        },
    ]
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
    pub report: Vec<ReportEntry>,
}

/// An ordered list of passes.
pub struct Pipeline {
    passes: Vec<Box<dyn Pass>>,
    /// Run the verifier after each pass (tests always do).
    pub verify_each: bool,
    /// Hold each pass to the Neuron contract (`neuron::contract`): a custom
    /// call a pass leaves breaking it, where its input did not, is a
    /// [`PassError::Contract`], so what a run writes passes the check its
    /// input passed. On by default; `--no-contract-checks` (which skips
    /// the input's check too) turns it off.
    pub contract_checks: bool,
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
    /// A pipeline of these passes, verified after each.
    pub fn new(passes: Vec<Box<dyn Pass>>, options: PassOptions) -> Pipeline {
        Pipeline {
            passes,
            verify_each: true,
            contract_checks: true,
            options,
        }
    }

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
        Ok(Pipeline::new(passes, PassOptions::default()))
    }

    pub fn default_pipeline() -> Pipeline {
        Pipeline::from_names(&default_pipeline()).expect("registry names are valid")
    }

    pub fn pass_names(&self) -> Vec<&'static str> {
        self.passes.iter().map(|p| p.name()).collect()
    }

    /// Runs every pass in order; stops at the first error.
    pub fn run(&mut self, module: &mut Module) -> Result<Vec<PassRun>, PassError> {
        self.run_with(module, &mut |_, _| Ok(()))
    }

    /// [`Self::run`], handing `after` each pass's run and the module as it
    /// left it (verified); an error from `after` stops the pipeline.
    pub fn run_with(
        &mut self,
        module: &mut Module,
        after: &mut dyn FnMut(&PassRun, &Module) -> Result<(), PassError>,
    ) -> Result<Vec<PassRun>, PassError> {
        let mut runs = Vec::with_capacity(self.passes.len());
        // The input is the caller's to verify (the command line does, with
        // its lines); each pass is held to the verifier on what it changed.
        module.take_changed();
        // And to the contract: what the input already broke (a caller that
        // skipped its own check) is not the passes' doing.
        let kept =
            (self.contract_checks && !self.passes.is_empty()).then(|| ContractKept::of(module));
        for pass in &mut self.passes {
            let mut ctx = PassContext::new(self.options.clone());
            let start = Instant::now();
            log::debug!("running {}", pass.name());
            let changed = pass.run(module, &mut ctx)?;
            let elapsed = start.elapsed();
            let touched = module.take_changed();
            if self.verify_each && (changed || !touched.is_empty()) {
                verify_changed(module, &touched).map_err(|error| PassError::Verifier {
                    pass: pass.name(),
                    error,
                })?;
            }
            if let Some(kept) = &kept {
                kept.hold(pass.name(), module, &touched)?;
            }
            let run = PassRun {
                name: pass.name(),
                changed,
                elapsed,
                report: ctx.report,
            };
            after(&run, module)?;
            runs.push(run);
        }
        Ok(runs)
    }
}

/// The contract violations of a pipeline's input, which the passes are not
/// blamed for; usually none (the command line and Python refuse such
/// input before the passes).
struct ContractKept {
    before: Vec<Violation>,
}

impl ContractKept {
    fn of(module: &Module) -> ContractKept {
        ContractKept {
            before: contract::check(module),
        }
    }

    /// Checks the computations `pass` changed: a violation the input did
    /// not have (same check at the same instruction) is the pass's.
    fn hold(
        &self,
        pass: &'static str,
        module: &Module,
        touched: &[CompId],
    ) -> Result<(), PassError> {
        if touched.is_empty() {
            return Ok(());
        }
        let mut violations = contract::check_computations(module, touched);
        violations.retain(|v| {
            !self.before.iter().any(|b| {
                b.check == v.check
                    && b.computation == v.computation
                    && b.instruction == v.instruction
            })
        });
        if violations.is_empty() {
            Ok(())
        } else {
            Err(PassError::Contract { pass, violations })
        }
    }
}

/// What the passes' unit tests share.
#[cfg(test)]
pub(crate) mod testing {
    use super::Pipeline;
    use crate::text::parse_module;

    /// Runs `pass` on `text`, which it must refuse: the error.
    pub fn refusal(pass: &str, text: &str) -> String {
        let mut m = parse_module(text, "t.hlo").expect("parses");
        let mut p = Pipeline::from_names(&[pass]).unwrap();
        match p.run(&mut m) {
            Ok(_) => panic!("the pass accepted:\n{text}"),
            Err(e) => e.to_string(),
        }
    }

    /// [`refusal`], and checks that the error names the pass and
    /// `instruction` and contains `expected`.
    pub fn assert_refused(pass: &str, instruction: &str, text: &str, expected: &str) {
        let e = refusal(pass, text);
        let head = format!("pass {pass}: instruction {instruction}: ");
        assert!(e.starts_with(&head), "{e}");
        assert!(e.contains(expected), "{e}\nshould contain: {expected}");
    }
}
