//! Finding the modules of a training program under the paths given:
//!
//! - an XLA dump folder (`XLA_FLAGS=--xla_dump_to=DIR`): files named
//!   `module_NNNN.<name>.<stage>.txt` or `.hlo.pb` (`.pb`), one module per
//!   `module_NNNN.<name>` prefix, at one stage (`before_optimizations` by
//!   default); the proto is taken over the text when both are there (a
//!   text dump elides large constants unless `--xla_dump_large_constants`).
//!   The dump's other files (other stages, buffer assignments, LLVM IR,
//!   objects) and its per-module folders (`module_NNNN.<name>/`, holding
//!   `compile_options.pb` and `topology.pb`) are not modules;
//! - the Neuron compile cache: `neuronxcc-<version>/MODULE_<hash>/` folders
//!   holding `model.hlo_module.pb` (gzipped or not; `.pb.gz` too), with the
//!   version and `compile_flags.json` recorded;
//! - plain files: `.hlo`, `.pb`, and `.txt` files that hold HLO text.
//!
//! Module ids are what the user already sees: the dump's
//! `module_NNNN.<name>` prefix, the cache's `MODULE_...` folder name, a
//! plain file's name without its extension. Two modules with one id (two
//! dump folders given) are told apart by `~2`, `~3`, ... in path order.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The stage taken from an XLA dump unless `--stage` says otherwise.
pub const DEFAULT_STAGE: &str = "before_optimizations";

/// Where a module was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    XlaDump {
        stage: String,
    },
    NeuronCache {
        version: Option<String>,
        compile_flags: Option<PathBuf>,
    },
    File,
}

impl Source {
    pub fn kind(&self) -> &'static str {
        match self {
            Source::XlaDump { .. } => "xla-dump",
            Source::NeuronCache { .. } => "neuron-cache",
            Source::File => "file",
        }
    }
}

/// One module to run.
#[derive(Clone, Debug)]
pub struct Found {
    pub id: String,
    pub path: PathBuf,
    pub source: Source,
    /// Bytes on disk, to run the largest first.
    pub size: u64,
}

/// Which folder a path is (links followed): equal ids are one folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FolderId(u64, u64);

impl FolderId {
    /// The folder `path` is, if it is one.
    pub fn of(path: &Path) -> Option<FolderId> {
        std::fs::metadata(path)
            .ok()
            .and_then(|m| FolderId::from_meta(&m))
    }

    fn from_meta(meta: &std::fs::Metadata) -> Option<FolderId> {
        if !meta.is_dir() {
            return None;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Some(FolderId(meta.dev(), meta.ino()))
        }
        #[cfg(not(unix))]
        None
    }
}

/// A folder or file under a PATH that could not be read or looked at
/// (another user's folder in a shared cache, a path past the system's
/// length limit): the batch goes on without it, says so, and exits 1, as
/// `find` does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unread {
    pub path: PathBuf,
    pub error: String,
}

/// Every module under `paths`, sorted by id, but for any under the folder
/// `skip` (the batch's OUT: its outputs are not modules to read), and the
/// paths under them that could not be read. A PATH that cannot be read
/// is an error naming it.
pub fn discover(
    paths: &[PathBuf],
    stage: &str,
    skip: Option<FolderId>,
) -> Result<(Vec<Found>, Vec<Unread>), String> {
    let mut found = Vec::new();
    let mut unread = Vec::new();
    // A folder given twice (`inp` and a link to it) is searched once.
    let mut searched = Vec::new();
    for path in paths {
        let meta =
            std::fs::metadata(path).map_err(|e| format!("{}: error: {e}", path.display()))?;
        if meta.is_dir() {
            let id = FolderId::from_meta(&meta);
            if id.is_some() && searched.contains(&id) {
                continue;
            }
            searched.push(id);
            let before = unread.len();
            walk(path, stage, skip, &mut found, &mut unread);
            if let Some(top) = unread.get(before).filter(|u| u.path == *path) {
                return Err(format!("{}: error: {}", path.display(), top.error));
            }
        } else if let Some(f) = classify_file(path, stage, true) {
            found.push(f);
        } else {
            return Err(format!(
                "{}: error: not a module this batch reads (.hlo, .txt, .pb, model.hlo_module.pb[.gz], or an XLA dump's module_NNNN.*.{stage}.txt/.pb)",
                path.display()
            ));
        }
    }
    // In path order, each once (a folder inside another PATH is met
    // twice), as a merge of shards lists them.
    unread.sort_by(|a, b| a.path.cmp(&b.path));
    unread.dedup_by(|a, b| a.path == b.path);
    Ok((deduplicate(found), unread))
}

fn walk(
    dir: &Path,
    stage: &str,
    skip: Option<FolderId>,
    found: &mut Vec<Found>,
    unread: &mut Vec<Unread>,
) {
    // A folder that can be listed but not entered (read without search
    // permission) names entries none of which can be looked at: it is the
    // folder that is unread, once, not each of its entries.
    let entries: std::io::Result<Vec<_>> = match std::fs::symlink_metadata(dir.join(".")) {
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Err(e),
        _ => std::fs::read_dir(dir),
    }
    .and_then(|entries| entries.map(|e| e.map(|e| e.path())).collect());
    let mut entries = match entries {
        Ok(entries) => entries,
        Err(e) => {
            unread.push(Unread {
                path: dir.to_path_buf(),
                error: e.to_string(),
            });
            return;
        }
    };
    entries.sort();
    // An XLA dump's stage in both forms: the proto wins.
    let mut dump_stages: BTreeMap<String, Found> = BTreeMap::new();
    for path in entries {
        // Links are not followed: a cache can link folders in loops.
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(e) => {
                unread.push(Unread {
                    path,
                    error: e.to_string(),
                });
                continue;
            }
        };
        if meta.is_dir() {
            let dump_side_folder = path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| is_xla_dump_name(&format!("{n}.")));
            let is_skipped = skip.is_some() && FolderId::from_meta(&meta) == skip;
            if !dump_side_folder && !is_skipped {
                walk(&path, stage, skip, found, unread);
            }
            continue;
        }
        if !meta.is_file() {
            continue;
        }
        let Some(f) = classify_file(&path, stage, false) else {
            continue;
        };
        if let Source::XlaDump { .. } = f.source {
            let is_proto = path.extension().is_some_and(|e| e == "pb");
            match dump_stages.get(&f.id) {
                Some(_) if !is_proto => {}
                _ => {
                    dump_stages.insert(f.id.clone(), f);
                }
            }
        } else {
            found.push(f);
        }
    }
    found.extend(dump_stages.into_values());
}

/// What `path` is, if a module. `given`: named on the command line (a
/// `.txt` there is taken as HLO text without looking).
fn classify_file(path: &Path, stage: &str, given: bool) -> Option<Found> {
    let name = path.file_name()?.to_str()?;
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let found = |id: String, source| {
        Some(Found {
            id,
            path: path.to_path_buf(),
            source,
            size,
        })
    };
    if name == "model.hlo_module.pb" || name == "model.hlo_module.pb.gz" {
        let module_dir = path.parent()?;
        let id = module_dir.file_name()?.to_str()?.to_string();
        let version = module_dir
            .parent()
            .and_then(|d| d.file_name())
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("neuronxcc-"))
            .map(str::to_string);
        let flags = module_dir.join("compile_flags.json");
        let compile_flags = flags.is_file().then_some(flags);
        return found(
            id,
            Source::NeuronCache {
                version,
                compile_flags,
            },
        );
    }
    if let Some(id) = xla_dump_id(name, stage) {
        return found(
            id,
            Source::XlaDump {
                stage: stage.to_string(),
            },
        );
    }
    if name.starts_with("module_") && is_xla_dump_name(name) {
        // Another stage, or another file the dump writes beside it.
        return None;
    }
    let stem = |ext: &str| name.strip_suffix(ext).map(str::to_string);
    if let Some(id) = stem(".hlo").or_else(|| stem(".pb")) {
        return found(id, Source::File);
    }
    if let Some(id) = stem(".txt") {
        if given || holds_hlo_text(path) {
            return found(id, Source::File);
        }
    }
    None
}

/// `module_0007.jit_step.before_optimizations.txt` -> `module_0007.jit_step`.
fn xla_dump_id(name: &str, stage: &str) -> Option<String> {
    let rest = name
        .strip_suffix(".txt")
        .or_else(|| name.strip_suffix(".hlo.pb"))
        .or_else(|| name.strip_suffix(".pb"))?;
    let id = rest.strip_suffix(stage)?.strip_suffix('.')?;
    is_xla_dump_name(id).then(|| id.to_string())
}

/// `module_` and digits, then a dot.
fn is_xla_dump_name(name: &str) -> bool {
    name.strip_prefix("module_")
        .and_then(|rest| rest.split_once('.'))
        .is_some_and(|(digits, _)| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// A `.txt` found in a folder is taken when it starts as HLO text does.
fn holds_hlo_text(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 256];
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let n = f.read(&mut head).unwrap_or(0);
    let text = String::from_utf8_lossy(&head[..n]);
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("//"))
        .is_some_and(|l| l.starts_with("HloModule "))
}

/// Ids no module may have: `index.html` is the batch's own page, which a
/// module `index`'s page would overwrite; and the names of no file (a file
/// named `.hlo` has the id ``), which `--merge` refuses.
const RESERVED_IDS: &[&str] = &["index", "", ".", ".."];

/// Sorted by path, then ids made unique: the first of an id keeps it, the
/// others (and a reserved id) take the first of `~2`, `~3`, ... that no
/// module has, so no two modules share an output; the result sorted by
/// id.
fn deduplicate(mut found: Vec<Found>) -> Vec<Found> {
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found.dedup_by(|a, b| a.path == b.path);
    let mut taken: BTreeSet<String> = RESERVED_IDS.iter().map(|s| s.to_string()).collect();
    taken.extend(found.iter().map(|f| f.id.clone()));
    let mut assigned: BTreeSet<String> = BTreeSet::new();
    for f in &mut found {
        if !RESERVED_IDS.contains(&f.id.as_str()) && assigned.insert(f.id.clone()) {
            continue;
        }
        let id = (2..)
            .map(|n| format!("{}~{n}", f.id))
            .find(|id| !taken.contains(id))
            .expect("an unused number");
        taken.insert(id.clone());
        assigned.insert(id.clone());
        f.id = id;
    }
    found.sort_by(|a, b| a.id.cmp(&b.id));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dump_names_give_their_module_prefix_at_the_stage_asked() {
        let stage = DEFAULT_STAGE;
        assert_eq!(
            xla_dump_id("module_0007.jit_train_step.before_optimizations.txt", stage).as_deref(),
            Some("module_0007.jit_train_step")
        );
        assert_eq!(
            xla_dump_id("module_0007.jit_f.before_optimizations.pb", stage).as_deref(),
            Some("module_0007.jit_f")
        );
        assert_eq!(
            xla_dump_id("module_0007.jit_f.before_optimizations.hlo.pb", stage).as_deref(),
            Some("module_0007.jit_f")
        );
        assert_eq!(
            xla_dump_id("module_0007.jit_f.after_optimizations.txt", stage),
            None
        );
        assert_eq!(
            xla_dump_id(
                "module_0007.jit_f.cpu_after_optimizations.txt",
                "after_optimizations"
            ),
            None
        );
        assert_eq!(
            xla_dump_id("model_0007.jit_f.before_optimizations.txt", stage),
            None
        );
        assert!(!is_xla_dump_name("module_.x"));
    }

    fn file(path: &str) -> Found {
        let path = PathBuf::from(path);
        // As `classify_file` names a plain file: `.hlo` off its name.
        let name = path.file_name().unwrap().to_str().unwrap();
        let id = name.strip_suffix(".hlo").unwrap().to_string();
        Found {
            id,
            path,
            source: Source::File,
            size: 0,
        }
    }

    #[test]
    fn ids_are_unique_and_a_numbered_id_is_not_given_twice() {
        // b/x's `~2` is taken by c's own file: it takes `~3`.
        let ids: Vec<(String, String)> = deduplicate(vec![
            file("c/x~2.hlo"),
            file("a/x.hlo"),
            file("b/x.hlo"),
            file("d/index.hlo"),
            file("e/index~2.hlo"),
            file("f/.hlo"),
            file("g/...hlo"),
        ])
        .into_iter()
        .map(|f| (f.id, f.path.display().to_string()))
        .collect();
        let expected = [
            ("~2", "f/.hlo"),
            ("..~2", "g/...hlo"),
            ("index~3", "d/index.hlo"),
            ("index~2", "e/index~2.hlo"),
            ("x", "a/x.hlo"),
            ("x~3", "b/x.hlo"),
            ("x~2", "c/x~2.hlo"),
        ];
        let mut expected: Vec<(String, String)> = expected
            .iter()
            .map(|(i, p)| (i.to_string(), p.to_string()))
            .collect();
        expected.sort();
        assert_eq!(ids, expected);
    }
}
