//! Small shared helpers.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// FxHash (rustc's): names are short and come from trusted text, so a fast
/// non-keyed hash beats SipHash by a wide margin on million-name modules.
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let v = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            self.add(v);
        }
        for &b in chunks.remainder() {
            self.add(u64::from(b));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        // The multiply leaves the entropy in the high bits; the table
        // indexes by the low ones. Without the rotation, keys that differ
        // only above bit 32 (proto ids `computation << 32 | n`) all land
        // in one bucket chain: 10^5 computations took seconds to write.
        self.0.rotate_left(26)
    }
}

impl FxHasher {
    fn add(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

pub type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;
pub type FxSet<K> = HashSet<K, BuildHasherDefault<FxHasher>>;

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
