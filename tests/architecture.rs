//! The dependency rules of the source tree (docs/architecture.md): data
//! flows bytes -> front -> IR -> passes -> IR -> back, so the IR depends
//! on nothing but utilities, the two fronts do not know each other, and
//! the passes know neither front nor the interpreter, and the interpreter
//! (the judge of `--check-numerics`) knows neither the passes nor a front:
//! the driver layer (`src/driver/`) joins them. Unit tests inside a module
//! (after its `#[cfg(test)]`) may use anything.

use std::path::Path;

/// The `crate::<module>` paths a source file names outside its tests.
fn crate_uses(path: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        if line.trim_start().starts_with("//") {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            let name: String = rest[at + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            out.push((n + 1, name));
            rest = &rest[at + 7..];
        }
    }
    out
}

/// The sources of `src/<dir>`, its subfolders' too (`text/parser/`,
/// `ir/verify/`).
fn files(dir: &str) -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir);
    let mut v = Vec::new();
    let mut folders = vec![root.clone()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                folders.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                v.push(p);
            }
        }
    }
    v.sort();
    assert!(!v.is_empty(), "no sources in {}", root.display());
    v
}

/// Every `crate::x` a file of `dir` names is one of `allowed` (its own
/// module always is).
fn check(dir: &str, allowed: &[&str]) {
    let mut bad = Vec::new();
    for f in files(dir) {
        for (line, name) in crate_uses(&f) {
            if name != dir && !allowed.contains(&name.as_str()) {
                bad.push(format!("{}:{line}: crate::{name}", f.display()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "src/{dir} may use only {allowed:?}:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_ir_depends_only_on_utilities() {
    check("ir", &["util"]);
}

#[test]
fn the_text_front_does_not_know_the_proto_front() {
    check("text", &["ir", "util"]);
}

#[test]
fn the_proto_front_does_not_know_the_text_front() {
    check("proto", &["ir", "util"]);
}

#[test]
fn the_passes_know_only_the_ir_and_neurons_conventions() {
    check("passes", &["ir", "util", "neuron"]);
}

/// The judge of `--check-numerics` does not read the accused's tables.
#[test]
fn the_interpreter_knows_neither_the_passes_nor_a_front() {
    check("interp", &["ir", "util", "neuron", "output"]);
}

#[test]
fn neurons_catalog_depends_only_on_the_ir() {
    check("neuron", &["ir", "util"]);
}

/// The two faces (the command, `src/cli.rs`, and the Python binding,
/// `python/src/lib.rs`) run the passes only through `driver::run`: neither
/// runs a pipeline, the contract check or the numerics observer itself.
#[test]
fn the_command_and_python_run_only_through_the_driver() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let forbidden = [
        "run_with(",
        ".run(&mut",
        "NumericsCheck",
        "contract::check(",
        "RunRecord::new",
        "check_numerics::run_checked",
    ];
    for face in ["src/cli.rs", "python/src/lib.rs"] {
        let path = root.join(face);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("run::run(") || text.contains("driver_run::run("),
            "{face} does not call driver::run"
        );
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for f in forbidden {
                assert!(
                    !line.contains(f),
                    "{face}:{}: `{f}`: a face runs the passes only through driver::run",
                    n + 1
                );
            }
        }
    }
}
