//! Stopping an evaluation from outside (a user's Ctrl-C in Python).
//!
//! An [`EvalOptions::cancel`](super::EvalOptions::cancel) hook is asked
//! now and then whether to stop; when it says so, the evaluation ends with
//! an [`ErrorKind::Cancelled`](super::ErrorKind::Cancelled) error. The
//! interpreter asks once per `while` iteration and once per
//! [`POLL_WORK`] of work (elements read and written, plus a fixed cost per
//! instruction), so that a hook is asked every few milliseconds of
//! evaluation, whatever the module's shape, and costs nothing measurable.
//! A hook that itself costs more (Python's takes its lock) limits itself
//! by time.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The work between two questions to the hook: about a few milliseconds
/// of elementwise evaluation.
pub const POLL_WORK: u64 = 1 << 22;

/// The work counted for an instruction besides its elements, so that many
/// small instructions also reach [`POLL_WORK`] (16k scalar ops).
pub const INSTRUCTION_WORK: u64 = 256;

/// Asked whether to stop an evaluation: `true` stops it.
#[derive(Clone)]
pub struct Cancel(Arc<dyn Fn() -> bool + Send + Sync>);

impl Cancel {
    pub fn new(requested: impl Fn() -> bool + Send + Sync + 'static) -> Cancel {
        Cancel(Arc::new(requested))
    }

    /// Stops once `flag` is set (by another thread or a signal handler).
    pub fn on_flag(flag: Arc<AtomicBool>) -> Cancel {
        Cancel::new(move || flag.load(Ordering::Relaxed))
    }

    pub fn requested(&self) -> bool {
        (self.0)()
    }
}

impl fmt::Debug for Cancel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Cancel(..)")
    }
}
