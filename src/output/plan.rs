//! Every file a run reads and writes, known and checked before it reads
//! or writes anything.

use std::collections::HashMap;
use std::fs::{self, Permissions};
use std::io;
use std::path::{Path, PathBuf};

/// Symlinks followed before giving up (Linux's own limit).
const MAX_LINKS: usize = 40;

/// What a symlink at a destination means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Links {
    /// The user named it: write the file it points at.
    Follow,
    /// A folder the tool fills: replace the link itself.
    Replace,
}

/// One file a run may write, checked.
#[derive(Clone, Debug)]
pub struct Destination {
    /// What asked for it (`-o`, `--report-html`, ...), for messages.
    pub what: String,
    /// The path as given.
    pub path: PathBuf,
    /// The path renamed over: `path`, or with `Links::Follow` the file
    /// its links lead to.
    pub(super) target: PathBuf,
    /// A device or FIFO: written in place.
    pub(super) in_place: bool,
    /// An existing file's permissions, which its replacement keeps.
    pub(super) permissions: Option<Permissions>,
    /// An existing file's owner and group (Unix), which its replacement
    /// keeps where the process may give them (root replacing a user's
    /// file).
    pub(super) owner: Option<(u32, u32)>,
    identity: Identity,
}

/// Which file a path is: equal identities are one file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Identity {
    /// An existing file: device and inode (on Unix).
    Existing(u64, u64),
    /// A file still to be made: its canonical location.
    New(PathBuf),
    /// A device or FIFO, never compared.
    Special,
}

impl Destination {
    /// Resolves `path`; an error says why it cannot be written.
    pub fn new(what: &str, path: &Path, links: Links) -> io::Result<Destination> {
        // `nope/` or `nope/.` would otherwise be found wrong only by the
        // final rename, after all the work ("Not a directory").
        if names_a_folder(path) {
            return Err(io::Error::other(
                "ends in `/`, `/.` or `/..`, so it names a folder; give a file name",
            ));
        }
        let target = match links {
            Links::Follow => resolve_links(path)?,
            Links::Replace => path.to_path_buf(),
        };
        let meta = match fs::symlink_metadata(&target) {
            Ok(meta) => Some(meta),
            // A name past the file system's limit fails here, before any work.
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        let (identity, in_place, permissions) = match &meta {
            Some(m) if m.is_dir() => {
                return Err(io::Error::other("is a folder"));
            }
            Some(m) if m.is_file() => (file_identity(&target, m)?, false, Some(m.permissions())),
            // A link replaced (`Links::Replace`): the new file gets a
            // file's permissions, not the link's 0777.
            Some(m) if m.file_type().is_symlink() => (file_identity(&target, m)?, false, None),
            // A FIFO or device in a folder the tool fills is replaced as a
            // link is: opening a FIFO nobody reads would block forever.
            Some(m) if links == Links::Replace => (file_identity(&target, m)?, false, None),
            Some(_) => (Identity::Special, true, None),
            None => {
                let location = location(&target)?;
                if links == Links::Follow {
                    let parent = location.parent().unwrap_or(Path::new("/"));
                    if !parent.is_dir() {
                        return Err(io::Error::other(format!(
                            "folder {} does not exist",
                            shown_parent(&target).display()
                        )));
                    }
                }
                (Identity::New(location), false, None)
            }
        };
        Ok(Destination {
            what: what.to_string(),
            path: path.to_path_buf(),
            target,
            in_place,
            owner: permissions.as_ref().and(meta.as_ref()).and_then(owner),
            permissions,
            identity,
        })
    }

    fn label(&self) -> String {
        format!("{} {}", self.what, self.path.display())
    }
}

/// The inputs and outputs of a run, by identity (a batch plans
/// thousands: a lookup each, not a scan).
#[derive(Default)]
pub struct OutputPlan {
    /// What reads it ("the input") and the path as given.
    inputs: HashMap<Identity, (String, PathBuf)>,
    outputs: HashMap<Identity, Destination>,
}

impl OutputPlan {
    pub fn new() -> OutputPlan {
        OutputPlan::default()
    }

    /// Records a file the run reads (`what` says which, e.g. "the input").
    /// A file that cannot be looked at is left to the reader's error.
    pub fn input(&mut self, what: &str, path: &Path) {
        if let Ok(meta) = fs::metadata(path) {
            if meta.is_file() {
                if let Ok(id) = file_identity(path, &meta) {
                    self.inputs
                        .entry(id)
                        .or_insert_with(|| (what.to_string(), path.to_path_buf()));
                }
            }
        }
    }

    /// Records standard input when it is a file (`< in.hlo`).
    pub fn stdin_input(&mut self) {
        #[cfg(unix)]
        {
            use std::os::fd::AsFd;
            let stdin = io::stdin();
            let Ok(fd) = stdin.as_fd().try_clone_to_owned() else {
                return;
            };
            let Ok(meta) = fs::File::from(fd).metadata() else {
                return;
            };
            if meta.is_file() {
                use std::os::unix::fs::MetadataExt;
                self.inputs
                    .entry(Identity::Existing(meta.dev(), meta.ino()))
                    .or_insert_with(|| ("the input".into(), PathBuf::from("<stdin>")));
            }
        }
    }

    /// When the output goes to standard output: an error if that is an
    /// input file (`hlo-opt in.hlo >> in.hlo`, `1<> in.hlo`), which would
    /// be written while it is read.
    pub fn stdout_output(&self) -> Result<(), String> {
        #[cfg(unix)]
        {
            use std::os::fd::AsFd;
            use std::os::unix::fs::MetadataExt;
            let stdout = io::stdout();
            let Ok(fd) = stdout.as_fd().try_clone_to_owned() else {
                return Ok(());
            };
            let Ok(meta) = fs::File::from(fd).metadata() else {
                return Ok(());
            };
            let id = Identity::Existing(meta.dev(), meta.ino());
            if let (true, Some((what, input))) = (meta.is_file(), self.inputs.get(&id)) {
                return Err(format!(
                    "standard output: error: it is {what} {} (the same file); nothing was written",
                    input.display()
                ));
            }
        }
        Ok(())
    }

    /// Plans `path` as an output: an error (naming both files) when it is
    /// an input or another output, or when it cannot be written.
    pub fn output(&mut self, what: &str, path: &Path, links: Links) -> Result<Destination, String> {
        let d = Destination::new(what, path, links)
            .map_err(|e| format!("{what} {}: error: {e}; nothing was written", path.display()))?;
        if d.identity != Identity::Special {
            if let Some((input_what, input)) = self.inputs.get(&d.identity) {
                return Err(format!(
                    "{}: error: it is {input_what} {} (the same file); nothing was written",
                    d.label(),
                    input.display()
                ));
            }
            if let Some(other) = self.outputs.get(&d.identity) {
                return Err(format!(
                    "{} and {}: error: they are the same file; nothing was written",
                    other.label(),
                    d.label()
                ));
            }
            self.outputs.insert(d.identity.clone(), d.clone());
        }
        Ok(d)
    }
}

#[cfg(unix)]
fn owner(meta: &fs::Metadata) -> Option<(u32, u32)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.uid(), meta.gid()))
}

#[cfg(not(unix))]
fn owner(_: &fs::Metadata) -> Option<(u32, u32)> {
    None
}

#[cfg(unix)]
fn file_identity(_: &Path, meta: &fs::Metadata) -> io::Result<Identity> {
    use std::os::unix::fs::MetadataExt;
    Ok(Identity::Existing(meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn file_identity(path: &Path, _: &fs::Metadata) -> io::Result<Identity> {
    Ok(Identity::New(fs::canonicalize(path)?))
}

/// Where a file still to be made would be: its nearest existing folder,
/// canonical, joined with the rest of the path.
fn location(path: &Path) -> io::Result<PathBuf> {
    let absolute = std::path::absolute(path)?;
    let mut rest = Vec::new();
    let mut base = absolute.as_path();
    loop {
        match fs::canonicalize(base) {
            Ok(canonical) => {
                let mut p = canonical;
                for part in rest.iter().rev() {
                    p.push(part);
                }
                return Ok(p);
            }
            Err(_) => {
                let (Some(parent), Some(name)) = (base.parent(), base.file_name()) else {
                    return Ok(absolute);
                };
                rest.push(name.to_os_string());
                base = parent;
            }
        }
    }
}

/// Whether `path`, as written, ends in a separator, `.` or `..` (which
/// `Path` itself normalizes away from `a/.`).
fn names_a_folder(path: &Path) -> bool {
    let text = path.as_os_str().as_encoded_bytes();
    let last = text
        .rsplit(|&b| std::path::is_separator(char::from(b)))
        .next()
        .unwrap_or_default();
    matches!(last, b"" | b"." | b"..")
}

fn shown_parent(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_is_located_through_its_existing_folder() {
        let dir = tempfile::tempdir().unwrap();
        let canonical = fs::canonicalize(dir.path()).unwrap();
        let p = dir.path().join("a/b/c.hlo");
        assert_eq!(location(&p).unwrap(), canonical.join("a/b/c.hlo"));
    }

    #[test]
    fn hard_links_are_one_file() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.hlo");
        let b = dir.path().join("b.hlo");
        fs::write(&a, "x").unwrap();
        fs::hard_link(&a, &b).unwrap();
        let mut plan = OutputPlan::new();
        plan.input("the input", &a);
        let e = plan.output("-o", &b, Links::Follow).unwrap_err();
        assert!(e.contains("it is the input"), "{e}");
    }

    #[test]
    fn two_new_outputs_by_different_spellings_are_one_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut plan = OutputPlan::new();
        plan.output("-o", &dir.path().join("x.hlo"), Links::Follow)
            .unwrap();
        let e = plan
            .output("--report-html", &dir.path().join("./x.hlo"), Links::Follow)
            .unwrap_err();
        assert!(e.contains("same file"), "{e}");
    }

    #[test]
    fn devices_may_be_written_twice() {
        let mut plan = OutputPlan::new();
        plan.output("-o", Path::new("/dev/null"), Links::Follow)
            .unwrap();
        plan.output("--report-html", Path::new("/dev/null"), Links::Follow)
            .unwrap();
    }
}
