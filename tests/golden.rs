//! Golden tests: one test per file under `tests/golden/<pass>/`.
//!
//! `<case>.hlo` is the input and `<case>.expected.hlo` what the pass must
//! print. An expected file equal to the input means "must not fire": the
//! pass must then also report no change. `<case>.report`, where the pass
//! reports anything, holds its report lines (what it rewrote, and what it
//! skipped and why), which must match too. A case named `*.all.hlo` runs
//! with `--all-computations`. `BLESS=1 cargo test --test golden` writes the
//! expected files and reports from the current output (review the diff
//! before committing).

use hlo_opt::ir::verify::verify;
use hlo_opt::passes::{Pipeline, Scope};
use hlo_opt::text::{parse_module, print_module};
use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut trials = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("tests/golden exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let pass = dir.file_name().unwrap().to_string_lossy().to_string();
        let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("readable")
            .map(|e| e.expect("dir entry").path())
            .filter(|p| {
                let n = p.file_name().unwrap().to_string_lossy();
                n.ends_with(".hlo") && !n.ends_with(".expected.hlo")
            })
            .collect();
        cases.sort();
        for case in cases {
            let name = format!("{pass}::{}", case.file_stem().unwrap().to_string_lossy());
            let pass = pass.clone();
            trials.push(Trial::test(name, move || run_case(&pass, &case)));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

fn run_case(pass: &str, input_path: &Path) -> Result<(), Failed> {
    let input = std::fs::read_to_string(input_path).map_err(|e| e.to_string())?;
    let mut module =
        parse_module(&input, &input_path.display().to_string()).map_err(|e| e.to_string())?;
    verify(&module).map_err(|e| format!("input does not verify: {e}"))?;
    // Written as XLA prints it, so "did the pass change it" is a byte
    // comparison (the Python goldens check the input prints back).
    if print_module(&module) != input {
        return Err("the input is not in printed form (hlo-opt --passes '' prints it so)".into());
    }
    let all = input_path.to_string_lossy().ends_with(".all.hlo");
    let pipeline = || -> Result<Pipeline, Failed> {
        let mut p = Pipeline::from_names(&[pass]).map_err(|e| e.to_string())?;
        if all {
            p.options.scope = Scope::AllComputations;
        }
        Ok(p)
    };
    let runs = pipeline()?.run(&mut module).map_err(|e| e.to_string())?;
    let changed = runs[0].changed;
    let output = print_module(&module);
    let report: String = runs[0].report.iter().map(|e| format!("{e}\n")).collect();

    let expected_path = input_path.with_extension("expected.hlo");
    let report_path = input_path.with_extension("report");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&expected_path, &output).map_err(|e| e.to_string())?;
        if report.is_empty() {
            let _ = std::fs::remove_file(&report_path);
        } else {
            std::fs::write(&report_path, &report).map_err(|e| e.to_string())?;
        }
    }
    let expected_report = std::fs::read_to_string(&report_path).unwrap_or_default();
    if report != expected_report {
        let diff = similar::TextDiff::from_lines(&expected_report, &report)
            .unified_diff()
            .header("expected report", "actual report")
            .to_string();
        return Err(format!("{} differs:\n{diff}", report_path.display()).into());
    }
    let expected = std::fs::read_to_string(&expected_path).map_err(|e| {
        format!(
            "{}: {e} (run with BLESS=1 to create it)",
            expected_path.display()
        )
    })?;
    if output != expected {
        let diff = similar::TextDiff::from_lines(&expected, &output)
            .unified_diff()
            .header("expected", "actual")
            .to_string();
        return Err(format!("{} differs:\n{diff}", expected_path.display()).into());
    }
    let should_change = expected != input;
    if changed != should_change {
        return Err(format!(
            "the pass reported changed={changed}, but the expected output {} the input",
            if should_change {
                "differs from"
            } else {
                "equals"
            }
        )
        .into());
    }
    // Idempotence: a second run changes nothing.
    let again = pipeline()?.run(&mut module).map_err(|e| e.to_string())?;
    if again[0].changed || print_module(&module) != output {
        return Err("a second run of the pass changed its own output".into());
    }
    Ok(())
}
