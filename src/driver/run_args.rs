//! The options of a run, as the command line spells them: one definition
//! for `hlo-opt` and `hlo-opt batch` (which runs each module as the
//! single command would), turned into a [`RunConfig`] in one place.

use super::check_numerics::{CheckConfig, CheckMode};
use super::fault::Fault;
use super::run::RunConfig;
use crate::interp::budget::Budget;

#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    /// Comma-separated passes to run, in this order; '' runs none (a pure
    /// round trip). Without it, the default pipeline runs.
    #[arg(long, value_name = "A,B,C")]
    pub passes: Option<String>,

    /// Make every pass walk every computation (while bodies, conditionals,
    /// calls, fusions), not only the ones the original pass walks.
    #[arg(long)]
    pub all_computations: bool,

    /// Skip the contract checks of the Neuron custom calls (QuantizeMX,
    /// __op$block_scaled_dot, AwsNeuronTopK, AwsNeuronSoftmax[Backward])
    /// that run after parsing and before the passes.
    #[arg(long)]
    pub no_contract_checks: bool,

    /// Prove the rewrites numerically: evaluate the module (reference
    /// interpreter, seeded inputs) once before the passes, then check each
    /// rewrite where it happened, on the values it read there and on
    /// extremes; print a table per pass (stderr), and fail naming the
    /// rewrite, its worst element and its inputs when one is beyond its
    /// tolerance. `=full` also re-evaluates the whole module after every
    /// pass that changed it and compares its outputs.
    #[arg(long, value_name = "MODE", num_args = 0..=1, require_equals = true,
          default_missing_value = "local", value_parser = ["local", "full"])]
    pub check_numerics: Option<String>,

    /// Test only: make one rewrite of the passes wrong in a small way
    /// (softmax-axis, logit-scale, index-off-by-one, backward-swap), to
    /// show that --check-numerics catches it.
    #[arg(long, value_name = "FAULT", hide = true, requires = "check_numerics",
          value_parser = ["softmax-axis", "logit-scale", "index-off-by-one", "backward-swap"])]
    pub inject_fault: Option<String>,

    /// Seed of --check-numerics' inputs.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub check_seed: u64,

    /// With --check-numerics: succeed even when some rewritten regions
    /// could not be checked (they hold an op the interpreter does not
    /// evaluate); they are still listed.
    #[arg(long, requires = "check_numerics")]
    pub accept_unchecked: bool,

    /// With --check-numerics: the memory its evaluations may hold at once
    /// (`512M`, `4G`, `4GiB`, bytes); a module needing more is refused
    /// before it runs (a batch: all its jobs together). Default: half of
    /// the memory available at the start (or of what `ulimit -v` allows,
    /// if less).
    #[arg(long, value_name = "SIZE", requires = "check_numerics",
          value_parser = crate::interp::budget::parse_size)]
    pub memory_limit: Option<u64>,
}

impl RunArgs {
    /// The budget `--memory-limit` sets, or half of what is available.
    pub fn memory_budget(&self) -> Budget {
        match self.memory_limit {
            Some(bytes) => Budget::given(bytes, "--memory-limit"),
            None => Budget::available("--memory-limit"),
        }
    }

    /// The run these options ask for; `budget` gives the bound of the
    /// numerics' evaluations (asked only with --check-numerics).
    pub fn config(&self, budget: impl FnOnce() -> Budget, record: Option<String>) -> RunConfig {
        RunConfig {
            passes: self.passes.clone(),
            all_computations: self.all_computations,
            no_contract_checks: self.no_contract_checks,
            check_numerics: self.check_numerics.as_deref().map(|mode| CheckConfig {
                mode: CheckMode::from_name(mode).unwrap_or_default(),
                fault: self.inject_fault.as_deref().and_then(Fault::from_name),
                seed: self.check_seed,
                accept_unchecked: self.accept_unchecked,
                memory_budget: budget(),
                ..CheckConfig::default()
            }),
            record,
            ..RunConfig::default()
        }
    }
}
