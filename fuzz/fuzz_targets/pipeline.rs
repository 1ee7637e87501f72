//! The default pipeline on any text that parses and verifies, as the
//! command line runs it (contract checks first, unless the input's first
//! byte says to skip them, as `--no-contract-checks` does): nothing
//! panics, and what the passes write verifies, prints, parses back and
//! prints identically, and writes as a proto that reads back. The first
//! byte also picks the scope: odd is `--all-computations` (the
//! `pipeline_all` target forces it).
//!
//! Run with `RUSTC_BOOTSTRAP=1 cargo fuzz run pipeline` (see the README's
//! "Fuzzing").

#![no_main]

use hlo_opt_fuzz::run_pipeline;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let flags = data.first().copied().unwrap_or(0);
    run_pipeline(data, flags & 1 == 1, flags & 2 == 2);
});
