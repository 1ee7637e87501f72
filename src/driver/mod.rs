//! The layer above the passes and the interpreter: what the command line
//! runs. `check_numerics` runs a pipeline with the interpreter as its
//! judge; `eval` is the `hlo-opt eval` command. The interpreter itself
//! knows neither the passes nor the text front.

pub mod check_numerics;
pub mod eval;
pub mod input;
