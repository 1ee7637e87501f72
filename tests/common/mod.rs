//! Helpers shared by the integration tests.
#![allow(dead_code)]

use hlo_opt::ir::verify::verify;
use hlo_opt::ir::{Module, PrintOptions};
use hlo_opt::text::{parse_module, print_module_with};
use std::path::{Path, PathBuf};

pub fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

/// Files of a folder whose names satisfy `keep`, sorted.
pub fn files(dir: &str, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(data(dir))
        .unwrap_or_else(|e| panic!("reading {dir}: {e}"))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(&keep))
        .collect();
    v.sort();
    v
}

pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

pub fn parse(path: &Path) -> Result<Module, String> {
    let text = read(path);
    let m = parse_module(&text, &path.display().to_string()).map_err(|e| e.to_string())?;
    verify(&m).map_err(|e| format!("verifier: {e}"))?;
    Ok(m)
}

/// The first line where two texts differ, for failure messages.
pub fn first_difference(expected: &str, actual: &str) -> String {
    for (i, (e, a)) in expected.lines().zip(actual.lines()).enumerate() {
        if e != a {
            return format!(
                "line {}:\n  expected: {}\n  actual:   {}",
                i + 1,
                clip(e),
                clip(a)
            );
        }
    }
    format!(
        "lengths differ: expected {} lines / {} bytes, actual {} lines / {} bytes",
        expected.lines().count(),
        expected.len(),
        actual.lines().count(),
        actual.len()
    )
}

fn clip(s: &str) -> String {
    if s.len() > 300 {
        let mut end = 300;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &s[..end])
    } else {
        s.to_string()
    }
}

/// Parses each file and prints it with `options` (or the style it was read
/// with); compares with `expected(path)`. Panics naming every failure.
pub fn check_round_trips(
    set: &str,
    paths: &[PathBuf],
    options: Option<PrintOptions>,
    expected: impl Fn(&Path) -> String,
) {
    check_round_trips_after(set, paths, options, expected, |_| {})
}

/// [`check_round_trips`], with `change` made to each module before it
/// prints.
pub fn check_round_trips_after(
    set: &str,
    paths: &[PathBuf],
    options: Option<PrintOptions>,
    expected: impl Fn(&Path) -> String,
    change: impl Fn(&mut hlo_opt::ir::Module),
) {
    assert!(!paths.is_empty(), "{set}: no files found");
    let mut failures = Vec::new();
    for p in paths {
        match parse(p) {
            Err(e) => failures.push(format!("{}: does not parse: {e}", p.display())),
            Ok(mut m) => {
                change(&mut m);
                let printed = print_module_with(&m, &options.unwrap_or(m.style));
                let want = expected(p);
                if printed != want {
                    failures.push(format!(
                        "{}: {}",
                        p.display(),
                        first_difference(&want, &printed)
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{set}: {} of {} files fail:\n{}",
        failures.len(),
        paths.len(),
        failures.join("\n")
    );
}
