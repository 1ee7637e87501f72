//! The layer above the passes and the interpreter: what the command line
//! runs. `check_numerics` runs a pipeline with the interpreter as its
//! judge; `eval` is the `hlo-opt eval` command. The interpreter itself
//! knows neither the passes nor the text front.

pub mod batch;
pub mod check_numerics;
pub mod eval;
pub mod fault;
pub mod graph_json;
pub mod input;
pub mod report_html;
pub mod run;
pub mod run_args;

use crate::passes::{Pipeline, Scope};

/// The pipeline a `--passes` value names, as both commands read it:
/// absent or `default`, the default pipeline; else the comma-separated
/// names, in order (`''` runs none). `all_computations` widens every
/// pass's scope.
pub fn pipeline(passes: Option<&str>, all_computations: bool) -> Result<Pipeline, String> {
    let mut p = match passes {
        None | Some("default") => Pipeline::default_pipeline(),
        Some(list) => {
            let names: Vec<&str> = list
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .collect();
            Pipeline::from_names(&names).map_err(|e| e.to_string())?
        }
    };
    if all_computations {
        p.options.scope = Scope::AllComputations;
    }
    Ok(p)
}
