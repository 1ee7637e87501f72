//! A check known to fail (issue 31): the hidden `--inject-fault` switch
//! makes one rewrite of the default pipeline wrong in a small way, and
//! `--check-numerics` must catch it where it happened, naming the
//! rewrite; without the switch every real module passes.
//!
//! Each module is run once without a fault (it must pass) and once per
//! fault; a faulty run that succeeds must have written the module the
//! clean run wrote (the fault found no call of its kind there). The
//! contract checks are off in the faulty runs: some faults (a softmax
//! over another axis) also break the Neuron contract, and the point here
//! is the numeric check.

use std::path::{Path, PathBuf};
use std::process::Command;

const FAULTS: [&str; 4] = [
    "softmax-axis",
    "logit-scale",
    "index-off-by-one",
    "backward-swap",
];

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_hlo-opt")
}

/// Runs the default pipeline under `--check-numerics` (and `fault`);
/// (success, stderr, the output module).
fn run(input: &Path, fault: Option<&str>, out: &Path) -> (bool, String, String) {
    let mut c = Command::new(bin());
    c.arg("--check-numerics").arg(input).arg("-o").arg(out);
    if let Some(f) = fault {
        c.arg(format!("--inject-fault={f}"))
            .arg("--no-contract-checks");
    }
    let o = c.output().unwrap();
    let written = std::fs::read_to_string(out).unwrap_or_default();
    let _ = std::fs::remove_file(out);
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        written,
    )
}

/// Checks `input` clean and under every fault; the faults it caught.
fn faults_caught(input: &Path, dir: &Path) -> Result<Vec<&'static str>, String> {
    let out = dir.join("out.hlo");
    let (ok, err, clean) = run(input, None, &out);
    if !ok && !err.contains("error: check-numerics") {
        // Refused before the check (a contract violation, a module that
        // does not verify): nothing to prove.
        return Ok(Vec::new());
    }
    if !ok {
        return Err(format!(
            "{}: fails without a fault:\n{err}",
            input.display()
        ));
    }
    let name = input.to_string_lossy();
    // A module that computes in bf16 or f16 (its softmax too, whatever
    // its call's type) cannot show a 0.1% logit scale: at most 0.45e-3 on
    // a softmax output, under one ulp of the narrow type.
    let narrow = name.contains("bf16") || name.contains("f16");
    let mut caught = Vec::new();
    for fault in FAULTS {
        let (ok, err, written) = run(input, Some(fault), &out);
        if ok {
            if written != clean && !(narrow && fault == "logit-scale") {
                return Err(format!(
                    "{}: --inject-fault={fault} changed the module and was not caught:\n{err}",
                    input.display()
                ));
            }
            continue;
        }
        // Caught where it happened: the rewrite, its worst element and
        // its inputs.
        if !(err.contains("check-numerics: pass ")
            && err.contains(") is wrong: output ")
            && err.contains("worst element"))
        {
            return Err(format!(
                "{}: --inject-fault={fault} failed, but not by the local check:\n{err}",
                input.display()
            ));
        }
        caught.push(fault);
    }
    Ok(caught)
}

fn hlo_files(dir: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::from(dir)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                if !p.ends_with("golden") {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "hlo") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Every fault is caught on a module that has its kind of rewrite.
#[test]
fn each_fault_is_caught_where_it_happened() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "tests/data/frontend/jax/jax_softmax_lastaxis_f32_fwd.hlo",
            "softmax-axis",
        ),
        (
            "tests/data/frontend/jax/jax_softmax_lastaxis_f32_fwd.hlo",
            "logit-scale",
        ),
        ("tests/data/corpus/nrn_topk_f32.hlo", "index-off-by-one"),
        (
            "tests/data/frontend/jax/jax_softmax_lastaxis_f32_train.hlo",
            "backward-swap",
        ),
    ];
    for (module, fault) in cases {
        let caught = faults_caught(Path::new(module), dir.path()).unwrap();
        assert!(caught.contains(&fault), "{module}: {fault} not caught");
    }
}

/// The real-frontend modules and the corpus: clean, every module passes;
/// every fault that changes a module is caught by the local check.
#[test]
fn every_real_module_passes_and_every_fault_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut caught = 0;
    let mut modules = hlo_files("tests/data/frontend");
    modules.extend(hlo_files("tests/data/corpus").into_iter().filter(|p| {
        let n = p.to_string_lossy();
        !n.contains(".short.") && !n.contains(".from_pb.")
    }));
    for m in &modules {
        match faults_caught(m, dir.path()) {
            Ok(c) => caught += c.len(),
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(caught >= 40, "only {caught} faults caught");
}

/// The 48-layer GPT: every raise proven locally; the softmax faults
/// caught. About a minute on a loaded 2-core machine, so ignored by
/// default: `cargo test --release --test check_faults -- --ignored`.
#[test]
#[ignore]
fn gpt48_faults_are_caught() {
    let dir = tempfile::tempdir().unwrap();
    let input = Path::new("tests/data/large/gpt48_fwd_f32.hlo");
    let out = dir.path().join("out.hlo");
    let (ok, err, _) = run(input, None, &out);
    assert!(ok, "{err}");
    assert!(
        err.contains("native-to-custom-softmax: changed, 48 rewrites checked where they happened"),
        "{err}"
    );
    for fault in ["softmax-axis", "logit-scale"] {
        let (ok, err, _) = run(input, Some(fault), &out);
        assert!(
            !ok && err.contains("rewrite div.440 (in main.293) is wrong"),
            "{fault}: {err}"
        );
    }
}
