//! Writing output files so that a failure never loses anything.
//!
//! What holds, and what does not:
//! - a regular file (new, existing, or behind a symlink) is written to a
//!   hidden temporary file (`.hlo-opt-XXXXXX`) in the destination's folder
//!   and renamed over it only once complete: a failure or an interruption
//!   leaves the old file as it was and no partial one;
//! - a symlink is followed, also a dangling one: its target is written
//!   (created if need be, in a folder that must exist) and the link stays;
//! - SIGINT, SIGTERM and SIGHUP during the write remove the temporary file
//!   and end the process with 128 + the signal (130, 143, 129); SIGKILL
//!   (or a power cut) cannot be caught, and leaves the temporary file
//!   behind (never the destination half-written);
//! - anything else that exists (`/dev/null`, `/dev/stdout`, a FIFO) is
//!   opened and written in place: renaming over it would replace the
//!   device with a plain file.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// Symlinks followed before giving up (Linux's own limit).
const MAX_LINKS: usize = 40;

/// Writes `path` through `write`; see the module documentation.
pub fn write_atomically<T, E: From<io::Error>>(
    path: &Path,
    write: impl FnOnce(&mut File) -> Result<T, E>,
) -> Result<T, E> {
    let existing = match fs::metadata(path) {
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e.into()),
    };
    if let Some(meta) = &existing {
        if !meta.is_file() {
            let mut file = OpenOptions::new().write(true).open(path)?;
            return write(&mut file);
        }
    }
    // Replace the file a symlink points at (or create it), not the symlink.
    let target = resolve_links(path)?;
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".hlo-opt-");
    // A new file gets what any program would give it (0666 under the
    // umask), not tempfile's 0600; an existing one keeps its own, exactly.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let (mut tmp, _cleanup) = signals::while_blocked(|| {
        let tmp = builder.tempfile_in(dir)?;
        let guard = signals::remove_on_signal(tmp.path());
        Ok::<_, io::Error>((tmp, guard))
    })?;
    if let Some(meta) = &existing {
        fs::set_permissions(tmp.path(), meta.permissions())?;
    }
    let value = write(tmp.as_file_mut())?;
    tmp.persist(&target).map_err(|e| e.error)?;
    Ok(value)
}

/// `path` with every symlink at its end followed, each target read
/// relative to its link's folder, down to a file that exists or is to be
/// created (a dangling link's target).
fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = fs::read_link(&p)?;
                p = if target.is_absolute() {
                    target
                } else {
                    p.parent().unwrap_or_else(|| Path::new("")).join(target)
                };
            }
            Ok(_) => return Ok(p),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(p),
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other(format!(
        "more than {MAX_LINKS} symbolic links in a row"
    )))
}

#[cfg(unix)]
mod signals {
    //! The temporary file being written, removed by a signal handler.
    //!
    //! The handler does only what is safe in one: `unlink` of a path
    //! prepared beforehand, then `_exit`.
    use std::ffi::CString;
    use std::path::Path;
    use std::sync::atomic::{AtomicPtr, Ordering};
    use std::sync::Once;

    const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

    static TEMP: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());
    static INSTALL: Once = Once::new();

    extern "C" fn on_signal(sig: libc::c_int) {
        let p = TEMP.swap(std::ptr::null_mut(), Ordering::SeqCst);
        // SAFETY: `p` is null or a NUL-terminated path leaked by
        // `remove_on_signal` and taken here once; unlink and _exit are
        // async-signal-safe.
        unsafe {
            if !p.is_null() {
                libc::unlink(p);
            }
            libc::_exit(128 + sig);
        }
    }

    fn install() {
        INSTALL.call_once(|| {
            for sig in SIGNALS {
                // SAFETY: a zeroed sigaction with a plain handler, an empty
                // mask and no flags is a valid argument.
                unsafe {
                    let mut sa: libc::sigaction = std::mem::zeroed();
                    sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                    libc::sigemptyset(&mut sa.sa_mask);
                    // A signal ignored by the parent (nohup) stays ignored.
                    let mut old: libc::sigaction = std::mem::zeroed();
                    if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                        && old.sa_sigaction == libc::SIG_IGN
                    {
                        continue;
                    }
                    libc::sigaction(sig, &sa, std::ptr::null_mut());
                }
            }
        });
    }

    /// Runs `f` with the handled signals blocked, so that none arrives
    /// between creating the temporary file and registering it.
    pub fn while_blocked<T>(f: impl FnOnce() -> T) -> T {
        install();
        // SAFETY: sigset operations on local sets; pthread_sigmask changes
        // this thread's mask and is restored below.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for sig in SIGNALS {
                libc::sigaddset(&mut set, sig);
            }
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
            let r = f();
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            r
        }
    }

    /// Until dropped, a handled signal removes `path` before the process
    /// ends.
    pub struct Registered(());

    pub fn remove_on_signal(path: &Path) -> Registered {
        use std::os::unix::ffi::OsStrExt;
        if let Ok(c) = CString::new(path.as_os_str().as_bytes()) {
            let old = TEMP.swap(c.into_raw(), Ordering::SeqCst);
            if !old.is_null() {
                // SAFETY: made by `CString::into_raw` above, on an earlier call.
                drop(unsafe { CString::from_raw(old) });
            }
        }
        Registered(())
    }

    impl Drop for Registered {
        fn drop(&mut self) {
            let p = TEMP.swap(std::ptr::null_mut(), Ordering::SeqCst);
            if !p.is_null() {
                // SAFETY: made by `CString::into_raw` in `remove_on_signal`.
                drop(unsafe { CString::from_raw(p) });
            }
        }
    }
}

#[cfg(not(unix))]
mod signals {
    use std::path::Path;

    pub fn while_blocked<T>(f: impl FnOnce() -> T) -> T {
        f()
    }

    pub struct Registered(());

    pub fn remove_on_signal(_: &Path) -> Registered {
        Registered(())
    }
}
