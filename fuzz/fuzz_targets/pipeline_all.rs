//! [`pipeline`](pipeline.rs) with `--all-computations` always on.

#![no_main]

use hlo_opt_fuzz::run_pipeline;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let flags = data.first().copied().unwrap_or(0);
    run_pipeline(data, true, flags & 2 == 2);
});
