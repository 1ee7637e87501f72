//! Small shared helpers.

use std::collections::{HashMap, HashSet};

/// The hash maps of hot paths: foldhash, fast on the short names and
/// small integers they hold, with a fixed seed so a run never depends on
/// the process (SipHash, std's default, costs several times as much on
/// million-name modules; no key here comes from an adversary who gains by
/// collisions beyond a slower run).
pub type FxMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;
pub type FxSet<K> = HashSet<K, foldhash::fast::FixedState>;

static DIAGNOSTICS_LOST: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Writes `text` to standard error. A failed write (a full disk, a closed
/// pipe) never panics, as `eprintln!` does: it is remembered, and the
/// command line exits 1 ([`diagnostics_lost`]).
pub fn diag(text: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    if err
        .write_all(text.as_bytes())
        .and_then(|()| err.flush())
        .is_err()
    {
        DIAGNOSTICS_LOST.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Whether a write to standard error failed ([`diag`], the logger).
pub fn diagnostics_lost() -> bool {
    DIAGNOSTICS_LOST.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether standard output was closed when the program started (`>&-`).
/// Rust's runtime reopens a closed standard descriptor on `/dev/null`
/// (read-write) before `main`, so a module written there would vanish with
/// exit 0; a shell's `>/dev/null` opens it write-only. So: descriptor 1 is
/// `/dev/null` opened for reading and writing. (`1<>/dev/null` looks the
/// same and is refused too.)
pub fn stdout_was_closed() -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: fcntl(F_GETFL) on a descriptor number reads its flags and
        // touches no memory.
        let flags = unsafe { libc::fcntl(1, libc::F_GETFL) };
        if flags < 0 {
            return true;
        }
        if flags & libc::O_ACCMODE != libc::O_RDWR {
            return false;
        }
        let (Ok(null), Ok(out)) = (
            std::fs::metadata("/dev/null"),
            std::fs::metadata("/proc/self/fd/1"),
        ) else {
            return false;
        };
        null.rdev() == out.rdev() && out.rdev() != 0
    }
    #[cfg(not(unix))]
    {
        false
    }
}

/// The `log` logger of the command line: `[LEVEL] message` lines on
/// standard error, written with [`diag`] (a failed write is an exit 1,
/// not a panic or a lost line passed over in silence).
pub struct StderrLogger;

impl log::Log for StderrLogger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            diag(&format!("[{}] {}\n", record.level(), record.args()));
        }
    }

    fn flush(&self) {}
}

/// Installs [`StderrLogger`] at `level` (once; later calls change the level).
pub fn init_logger(level: log::LevelFilter) {
    static LOGGER: StderrLogger = StderrLogger;
    let _ = log::set_logger(&LOGGER);
    log::set_max_level(level);
}

/// Text for a message, cut short when long.
pub fn clip(text: &str) -> String {
    const MAX: usize = 120;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_string(),
    }
}

/// `items` cut into consecutive runs, each closed once its weight reaches
/// `limit` (the last may weigh less): work split for threads or batches
/// without reordering it.
pub fn runs_by_weight<T>(items: &[T], limit: usize, weight: impl Fn(&T) -> usize) -> Vec<&[T]> {
    let mut runs = Vec::new();
    let (mut start, mut sum) = (0, 0);
    for (i, item) in items.iter().enumerate() {
        sum += weight(item);
        if sum >= limit || i + 1 == items.len() {
            runs.push(items.get(start..=i).unwrap_or_default());
            (start, sum) = (i + 1, 0);
        }
    }
    runs
}

/// The cores this process may run on (its CPU affinity and cgroup quota),
/// read once: the standard library reads three files on every call, and
/// a large module asks once per batch.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `f` over `items` on the machine's cores (each thread with its own
/// `init()` state), results in the items' order.
pub fn par_map<T: Sync, R: Send, W>(
    items: &[T],
    parallel: bool,
    init: impl Fn() -> W + Sync,
    f: impl Fn(&mut W, usize, &T) -> R + Sync,
) -> Vec<R> {
    let threads = if parallel {
        cores().min(items.len()).min(16)
    } else {
        1
    };
    if threads <= 1 {
        let mut w = init();
        return items
            .iter()
            .enumerate()
            .map(|(i, x)| f(&mut w, i, x))
            .collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let parts: Vec<Vec<(usize, R)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut w = init();
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(x) = items.get(i) else { break };
                        out.push((i, f(&mut w, i, x)));
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    let mut slots: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    for (i, r) in parts.into_iter().flatten() {
        slots[i] = Some(r);
    }
    slots
        .into_iter()
        .map(|r| r.expect("every item is mapped"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::runs_by_weight;

    #[test]
    fn runs_close_once_their_weight_reaches_the_limit() {
        let items = [3, 1, 4, 1, 5, 9, 2, 6];
        let runs = runs_by_weight(&items, 5, |&w| w);
        assert_eq!(runs, vec![&[3, 1, 4][..], &[1, 5], &[9], &[2, 6]]);
        // The last run may weigh less; nothing is dropped or reordered.
        let runs = runs_by_weight(&items, 10, |&w| w);
        assert_eq!(runs, vec![&[3, 1, 4, 1, 5][..], &[9, 2], &[6]]);
        assert!(runs_by_weight(&[] as &[usize], 5, |&w| w).is_empty());
        // Weightless items form one run.
        assert_eq!(runs_by_weight(&[0, 0, 0], 1, |&w| w), vec![&[0, 0, 0][..]]);
    }
}
