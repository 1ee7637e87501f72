//! Writing output files so that a run never loses anything.
//!
//! A run first makes an [`OutputPlan`]: every path it may write, each
//! checked, before anything is read or written, against the inputs and
//! the other outputs. An output that is an input (the same file after
//! following links, hard links included: device and inode are compared
//! where the file exists), or two outputs that are one file, is an error
//! naming both. A destination whose folder is missing, or whose name the
//! file system refuses (too long), is an error there too.
//!
//! Then [`Staged`] writes each output to a hidden temporary file
//! (`.hlo-opt-XXXXXX`) beside its destination, and [`Staged::commit`]
//! renames them all into place only once every one is complete. A failed
//! write, or a run that ends before the commit, removes the temporaries
//! and changes no destination.
//!
//! What holds, and what does not:
//! - an output given by the user (`-o`, `--report-html`, `--emit-graph`)
//!   that is a symlink is followed, also a dangling one: its target is
//!   written (created if need be, in a folder that must exist) and the
//!   link stays ([`Links::Follow`]);
//! - a file in a folder the tool fills (`--dump-dir`, `hlo-opt batch`'s
//!   OUT) never follows a link: the link itself is replaced, so nothing
//!   outside the folder is created or changed ([`Links::Replace`]); a
//!   FIFO or device there is replaced the same way;
//! - SIGINT, SIGTERM and SIGHUP remove every temporary file and end the
//!   process with 128 + the signal (130, 143, 129); they are held off
//!   while the outputs are renamed, so a signal then leaves all outputs
//!   in place, not some; SIGKILL (or a power cut) cannot be caught, and
//!   leaves temporary files behind (never a destination half-written);
//! - anything else a user names that exists (`/dev/null`, `/dev/stdout`, a FIFO) is
//!   opened and written in place: renaming over it would replace the
//!   device with a plain file. Such outputs are not checked against each
//!   other (two outputs to `/dev/null` are fine).

mod plan;
#[cfg(unix)]
mod signals;

pub use plan::{Destination, Links, OutputPlan};

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// Outputs written to their temporaries, waiting for [`Staged::commit`].
/// Dropped without a commit, it removes them.
#[derive(Default)]
pub struct Staged {
    /// Leave the process's signal handlers alone (a library in someone
    /// else's process: Python's Ctrl-C stays a `KeyboardInterrupt`); a
    /// signal then leaves the temporaries behind, never a destination
    /// half-written.
    no_signal_handlers: bool,
    files: Vec<StagedFile>,
    /// Stale files to remove at the commit (an `.npz`'s sidecar no longer
    /// needed).
    removals: Vec<Destination>,
}

struct StagedFile {
    temp: tempfile::TempPath,
    destination: Destination,
    #[cfg(unix)]
    _registered: Option<signals::Registered>,
}

impl Staged {
    pub fn new() -> Staged {
        Staged::default()
    }

    /// A [`Staged`] that installs no signal handler.
    pub fn without_signal_handlers() -> Staged {
        Staged {
            no_signal_handlers: true,
            ..Staged::default()
        }
    }

    /// Writes `destination`'s content through `write`: to a temporary
    /// file beside it, or in place for a device or FIFO. An error names
    /// the destination.
    pub fn write(
        &mut self,
        destination: &Destination,
        write: impl FnOnce(&mut File) -> io::Result<()>,
    ) -> Result<(), String> {
        self.write_with(destination, write)
            .map_err(|e| format!("{}: error: {e}", destination.path.display()))
    }

    /// [`Self::write`] with the caller's error type and value.
    pub fn write_with<T, E: From<io::Error>>(
        &mut self,
        destination: &Destination,
        write: impl FnOnce(&mut File) -> Result<T, E>,
    ) -> Result<T, E> {
        if destination.in_place {
            let mut file = OpenOptions::new().write(true).open(&destination.target)?;
            return write(&mut file);
        }
        let dir = match destination.target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let mut builder = tempfile::Builder::new();
        builder.prefix(".hlo-opt-");
        // A new file gets what any program would give it (0666 under the
        // umask), not tempfile's 0600; an existing one keeps its own.
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
        #[cfg(unix)]
        let (mut tmp, registered) = if self.no_signal_handlers {
            (builder.tempfile_in(dir)?, None)
        } else {
            signals::while_blocked(|| {
                let tmp = builder.tempfile_in(dir)?;
                let registered = signals::remove_on_signal(tmp.path());
                Ok::<_, io::Error>((tmp, registered))
            })?
        };
        #[cfg(not(unix))]
        let mut tmp = builder.tempfile_in(dir)?;
        // The owner first: a change of owner clears set-id bits, which the
        // permissions then restore. Only root may give a file away; anyone
        // else's replacement is theirs, as any editor's would be.
        #[cfg(unix)]
        if let Some((uid, gid)) = destination.owner {
            let _ = std::os::unix::fs::chown(tmp.path(), Some(uid), Some(gid));
        }
        if let Some(permissions) = &destination.permissions {
            std::fs::set_permissions(tmp.path(), permissions.clone())?;
        }
        let value = write(tmp.as_file_mut())?;
        // Closed now: a run may stage many files.
        let temp = tmp.into_temp_path();
        self.files.push(StagedFile {
            temp,
            destination: destination.clone(),
            #[cfg(unix)]
            _registered: registered,
        });
        Ok(value)
    }

    /// Removes `destination` (itself, not what a link at it points at) at
    /// the commit, if it exists then.
    pub fn remove(&mut self, destination: &Destination) {
        self.removals.push(destination.clone());
    }

    /// Renames every staged file into place, with the handled signals
    /// held off meanwhile. A rename that fails (only a file system
    /// failing between two renames can) stops the commit: the files not
    /// yet renamed are removed and the error names the destination.
    pub fn commit(self) -> Result<(), String> {
        let no_signal_handlers = self.no_signal_handlers;
        let commit = || {
            for f in self.files {
                f.temp
                    .persist(&f.destination.target)
                    .map_err(|e| format!("{}: error: {}", f.destination.path.display(), e.error))?;
            }
            for d in &self.removals {
                match std::fs::remove_file(&d.path) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => {
                        return Err(format!("{}: error: {e}", d.path.display()));
                    }
                    _ => {}
                }
            }
            Ok(())
        };
        #[cfg(unix)]
        if !no_signal_handlers {
            return signals::while_blocked(commit);
        }
        commit()
    }
}

/// Writes one file, `path`, in a folder the tool fills (a link there is
/// replaced, not followed: [`Links::Replace`]), through a temporary
/// renamed into place when complete; see the module documentation.
pub fn write_atomically<T, E: From<io::Error>>(
    path: &Path,
    write: impl FnOnce(&mut File) -> Result<T, E>,
) -> Result<T, E> {
    let destination = Destination::new("", path, Links::Replace)?;
    let mut staged = Staged::new();
    let value = staged.write_with(&destination, write)?;
    staged.commit().map_err(io::Error::other)?;
    Ok(value)
}
