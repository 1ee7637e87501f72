//! Writing output files so that a failure never loses anything.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// Writes `path` through `write`. A regular file (new or existing, also
/// behind a symlink) is written to a temporary file in its folder and
/// renamed over it only once `write` succeeded, so a failure leaves the old
/// file as it was and no partial one. Anything else that exists (`/dev/null`,
/// `/dev/stdout`, a FIFO) is opened and written in place: renaming over it
/// would replace the device with a plain file.
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
    // Replace the file a symlink points at, not the symlink.
    let target: PathBuf = match &existing {
        Some(_) => fs::canonicalize(path)?,
        None => path.to_path_buf(),
    };
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
    let mut tmp = builder.tempfile_in(dir)?;
    if let Some(meta) = &existing {
        fs::set_permissions(tmp.path(), meta.permissions())?;
    }
    let value = write(tmp.as_file_mut())?;
    tmp.persist(&target).map_err(|e| e.error)?;
    Ok(value)
}
