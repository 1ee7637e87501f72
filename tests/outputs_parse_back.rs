//! Every module the suite writes parses back and prints identically
//! (issue 11, class 2): every pass, in both scopes, on every golden input;
//! the default pipeline, in both scopes, on every corpus module, Neuron
//! dump and example; and the same on the `nrn_*`/example modules made
//! `is_scheduled=true`. Each output is printed, read again, verified and
//! printed again (text), and written as a proto, read back, verified and
//! written again (proto): both must be fixed points.

mod common;
use common::*;
use hlo_opt::ir::verify::verify;
use hlo_opt::ir::Module;
use hlo_opt::passes::{registry, Pipeline, Scope};
use hlo_opt::proto::{module_to_proto_bytes, read_module_with, ReadOptions};
use hlo_opt::text::{parse_module, print_module};
use std::path::{Path, PathBuf};

/// Checks that `module` (just written by a pass) is a print and proto
/// fixed point; a failure is described in `failures`.
fn check_output(what: &str, module: &Module, failures: &mut Vec<String>) {
    let text = print_module(module);
    match parse_module(&text, what) {
        Err(e) => failures.push(format!("{what}: the output does not parse back: {e}")),
        Ok(again) => {
            if let Err(e) = verify(&again) {
                failures.push(format!("{what}: the output read back does not verify: {e}"));
            } else {
                let twice = print_module(&again);
                if twice != text {
                    failures.push(format!(
                        "{what}: the output printed again differs: {}",
                        first_difference(&text, &twice)
                    ));
                }
            }
        }
    }
    let bytes = match module_to_proto_bytes(module) {
        Ok(b) => b,
        Err(e) => {
            failures.push(format!("{what}: cannot be written as a proto: {e}"));
            return;
        }
    };
    // Read back and written again, then once more: the second writing is
    // a fixed point. (The first may differ from it: a header shape the
    // text writes without a layout, `s32[]`, reads back with XLA's default
    // one, as XLA's loader gives it.)
    let keep = ReadOptions { xla_order: false };
    let reread = |bytes: &[u8], failures: &mut Vec<String>| -> Option<Vec<u8>> {
        let m = match read_module_with(bytes, &keep) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{what}: its proto does not read back: {e}"));
                return None;
            }
        };
        if let Err(e) = verify(&m) {
            failures.push(format!("{what}: its proto read back does not verify: {e}"));
            return None;
        }
        if let Err(e) = parse_module(&print_module(&m), what) {
            failures.push(format!(
                "{what}: the text of its proto does not parse back: {e}"
            ));
        }
        match module_to_proto_bytes(&m) {
            Ok(b) => Some(b),
            Err(e) => {
                failures.push(format!(
                    "{what}: its proto read back cannot be written: {e}"
                ));
                None
            }
        }
    };
    let Some(second) = reread(&bytes, failures) else {
        return;
    };
    if let Some(third) = reread(&second, failures) {
        if third != second {
            failures.push(format!(
                "{what}: its proto is not a fixed point of read and write"
            ));
        }
    }
}

fn run_pipeline(names: &[&str], scope: Scope, module: &mut Module) -> Result<(), String> {
    let mut p = Pipeline::from_names(names).map_err(|e| e.to_string())?;
    p.options.scope = scope;
    p.run(module).map(|_| ()).map_err(|e| e.to_string())
}

/// Parses `text`, runs `names` in `scope` and checks the output; a module
/// a pass refuses (bad input, a test of its own) is counted, not failed.
fn check_run(
    what: &str,
    text: &str,
    names: &[&str],
    scope: Scope,
    failures: &mut Vec<String>,
) -> bool {
    let mut m = match parse_module(text, what) {
        Ok(m) if verify(&m).is_ok() => m,
        _ => return false,
    };
    if run_pipeline(names, scope, &mut m).is_err() {
        return false;
    }
    check_output(&format!("{what} / {names:?} / {scope:?}"), &m, failures);
    true
}

fn report(set: &str, checked: usize, failures: Vec<String>) {
    assert!(checked > 0, "{set}: nothing checked");
    assert!(
        failures.is_empty(),
        "{set}: {} of {checked} outputs fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn golden_inputs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut out = Vec::new();
    for dir in std::fs::read_dir(root).expect("tests/golden") {
        let dir = dir.expect("entry").path();
        if !dir.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&dir).expect("golden dir") {
            let p = f.expect("entry").path();
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            if n.ends_with(".hlo") && !n.ends_with(".expected.hlo") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_pass_on_every_golden_input() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for path in golden_inputs() {
        let text = read(&path);
        for info in registry() {
            for scope in [Scope::Original, Scope::AllComputations] {
                let what = path.display().to_string();
                checked += check_run(&what, &text, &[info.name], scope, &mut failures) as usize;
            }
        }
    }
    report("goldens", checked, failures);
}

fn real_modules() -> Vec<PathBuf> {
    let mut paths = files("corpus", |n| n.ends_with(".hlo"));
    paths.extend(files("neuron", |n| {
        n.ends_with(".txt") && n != "dummy_hlo_nki_kernel.txt"
    }));
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut ex: Vec<PathBuf> = std::fs::read_dir(examples)
        .expect("examples")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "hlo" || e == "txt"))
        .collect();
    ex.sort();
    paths.extend(ex);
    paths
}

fn default_pipeline_on(paths: &[PathBuf], edit: impl Fn(&str) -> String) -> (usize, Vec<String>) {
    let names = hlo_opt::passes::default_pipeline();
    let mut failures = Vec::new();
    let mut checked = 0;
    for path in paths {
        let text = edit(&read(path));
        for scope in [Scope::Original, Scope::AllComputations] {
            let what = path.display().to_string();
            checked += check_run(&what, &text, &names, scope, &mut failures) as usize;
        }
    }
    (checked, failures)
}

#[test]
fn the_default_pipeline_on_every_real_module() {
    let (checked, failures) = default_pipeline_on(&real_modules(), str::to_string);
    report("corpus, neuron, examples", checked, failures);
}

/// `is_scheduled=true` in the header: the passes' new instructions must be
/// scheduled before their users (issue 11, #02).
fn scheduled(text: &str) -> String {
    let head = text.lines().next().unwrap_or_default();
    let Some(rest) = head.strip_prefix("HloModule ") else {
        return text.to_string();
    };
    if head.contains("is_scheduled") {
        return text.to_string();
    }
    let name_len = rest
        .find(|c: char| c == ',' || c.is_whitespace())
        .unwrap_or(rest.len());
    let at = "HloModule ".len() + name_len;
    format!("{}, is_scheduled=true{}", &text[..at], &text[at..])
}

#[test]
fn the_default_pipeline_on_scheduled_modules() {
    let paths: Vec<PathBuf> = real_modules()
        .into_iter()
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("nrn_") || p.to_string_lossy().contains("examples") || n.contains(".opt.")
        })
        .collect();
    let (checked, failures) = default_pipeline_on(&paths, scheduled);
    report("scheduled", checked, failures);
}

#[test]
fn scheduled_header_edit_is_what_it_says() {
    assert_eq!(
        scheduled("HloModule m, entry_computation_layout={()->f32[]}\n"),
        "HloModule m, is_scheduled=true, entry_computation_layout={()->f32[]}\n"
    );
    assert_eq!(
        scheduled("HloModule m\n"),
        "HloModule m, is_scheduled=true\n"
    );
}
