//! The `hlo-opt` command (`hlo_opt::cli`).

use std::process::ExitCode;

/// Large blocks (over 1 MiB: a computation's bytes, a batch's text) get
/// pages of their own, given back when freed. glibc would raise its
/// threshold to the largest block freed (up to 32 MiB), after which such
/// blocks stay in the heap once freed: 4-5 MiB more peak memory on the
/// 528k-instruction module (docs/performance.md).
fn fix_mmap_threshold() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt(3) only sets a parameter of glibc's malloc, which
    // takes its own lock; this runs first in `main`, before any other
    // thread or allocation of ours.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

fn main() -> ExitCode {
    fix_mmap_threshold();
    ExitCode::from(hlo_opt::cli::main(std::env::args_os()))
}
