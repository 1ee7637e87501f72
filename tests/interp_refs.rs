//! The reference interpreter against the corpus' reference outputs: one
//! test per case and form.
//!
//! - `eval::<case>`: the module as emitted (`tests/data/corpus/<case>.hlo`)
//!   on the case's inputs gives its outputs;
//! - `eval_opt::<case>`: the same for XLA:CPU's optimized module
//!   (`<case>.opt.hlo`), where there is one;
//! - `pipeline::<case>`: the module after the default pipeline gives the
//!   same outputs (a pass may append outputs, as add-logit-output does;
//!   the reference ones are compared).
//!
//! Tolerances are `hlo_opt::interp::compare::rtol` per element type (f32
//! 1e-5, bf16 1e-2, ... of |ref| + max|ref|; integers, pred and indices
//! exact), except where a case says why not (`OVERRIDES`).
//!
//! The refs live in `tests/data/refs/` (a copy of `corpus/refs/`).

use hlo_opt::interp::compare::compare_arrays;
use hlo_opt::interp::npy::{read_inputs, read_outputs};
use hlo_opt::interp::{evaluate, Value};
use hlo_opt::ir::verify::verify;
use hlo_opt::passes::Pipeline;
use hlo_opt::text::parse_module;
use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};

/// (case, form, tolerance scale, why).
const OVERRIDES: &[(&str, &str, f64, &str)] = &[
    (
        "mha_fwd_bf16",
        "eval",
        100.0,
        "bf16 inputs, f32 output: XLA:CPU adds the bias to the f32 dot before rounding to bf16 \
         (one rounding where the HLO has two), which moves the f32 output by 2.8e-4 of its max",
    ),
    ("mha_fwd_bf16", "pipeline", 100.0, "as for eval"),
];

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let refs = root.join("tests/data/refs");
    let cases: Vec<String> = std::fs::read_dir(&refs)
        .expect("tests/data/refs exists")
        .filter_map(|e| {
            let p = e.ok()?.path();
            if p.extension()? != "npz" {
                return None;
            }
            Some(p.file_stem()?.to_string_lossy().to_string())
        })
        .collect();
    let mut cases = cases;
    cases.sort();
    let mut trials = Vec::new();
    for case in cases {
        let npz = refs.join(format!("{case}.npz"));
        let hlo = root.join(format!("tests/data/corpus/{case}.hlo"));
        let opt = root.join(format!("tests/data/corpus/{case}.opt.hlo"));
        let mut forms = vec![("eval", hlo.clone(), false), ("pipeline", hlo, true)];
        if opt.exists() {
            forms.push(("eval_opt", opt, false));
        }
        for (form, path, pipeline) in forms {
            let name = format!("{form}::{case}");
            let npz = npz.clone();
            let case = case.clone();
            trials.push(Trial::test(name, move || {
                run_case(&case, form, &path, &npz, pipeline)
            }));
        }
    }
    // --check-numerics with the default pipeline on every corpus module
    // and torch-neuronx dump.
    let mut files: Vec<PathBuf> = ["tests/data/corpus", "tests/data/neuron"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).expect("data folder"))
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| {
            let n = p.file_name().unwrap_or_default().to_string_lossy();
            (n.ends_with(".hlo") || n.ends_with(".txt"))
                && !n.ends_with(".short.hlo")
                && !n.ends_with(".from_pb.hlo")
                && !n.ends_with(".txt.hlo")
        })
        .collect();
    files.sort();
    for path in files {
        let name = format!(
            "check_numerics::{}",
            path.file_name().unwrap_or_default().to_string_lossy()
        );
        let slow = SLOW_CHECKS.contains(&name.trim_start_matches("check_numerics::"));
        trials.push(Trial::test(name, move || check_numerics(&path)).with_ignored_flag(slow));
    }
    libtest_mimic::run(&args, trials).exit();
}

/// Modules `--check-numerics` proves, but slowly: ignored by default (run
/// with `-- --ignored`). bert: three passes change it and it has an
/// f32[16,128,30522] output, about 80 s.
const SLOW_CHECKS: &[&str] = &["graphhelper_bert_single_graph_4.txt"];

/// Modules `--check-numerics` cannot prove, and the error that says why.
const CHECK_LIMITS: &[(&str, &str)] = &[
    // Does not verify (a duplicate instruction name), so nothing runs.
    ("dummy_hlo_nki_kernel.txt", "not unique"),
];

fn check_numerics(path: &Path) -> Result<(), Failed> {
    let file = path
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string();
    let limit = CHECK_LIMITS.iter().find(|(f, _)| *f == file).map(|l| l.1);
    let result = (|| -> Result<(), String> {
        let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
        let mut module = parse_module(&text, &file).map_err(|e| e.to_string())?;
        verify(&module).map_err(|e| e.to_string())?;
        let names = hlo_opt::passes::default_pipeline();
        let passes =
            hlo_opt::driver::check_numerics::make_passes(&names).map_err(|e| e.to_string())?;
        hlo_opt::driver::check_numerics::run_checked(
            &mut module,
            passes,
            &hlo_opt::passes::PassOptions::default(),
            &hlo_opt::driver::check_numerics::CheckConfig::default(),
            &mut |_| {},
        )
        .map(|_| ())
        .map_err(|e| e.to_string())
    })();
    match (result, limit) {
        (Ok(()), None) => Ok(()),
        (Err(e), Some(why)) if e.contains(why) => Ok(()),
        (Err(e), _) => Err(e.into()),
        (Ok(()), Some(why)) => {
            Err(format!("expected to fail with {why:?}, passed: update CHECK_LIMITS").into())
        }
    }
}

fn run_case(case: &str, form: &str, hlo: &Path, npz: &Path, pipeline: bool) -> Result<(), Failed> {
    let text = std::fs::read_to_string(hlo).map_err(|e| format!("{}: {e}", hlo.display()))?;
    let mut module = parse_module(&text, &hlo.display().to_string()).map_err(|e| e.to_string())?;
    verify(&module).map_err(|e| e.to_string())?;
    if pipeline {
        Pipeline::default_pipeline()
            .run(&mut module)
            .map_err(|e| e.to_string())?;
    }
    let entry = module.comp(module.entry());
    let types: Vec<_> = entry
        .parameters()
        .iter()
        .map(|&p| entry.instr(p).shape.element_type())
        .collect();
    let inputs: Vec<Value> = read_inputs(npz, &types)
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(Value::array)
        .collect();
    let got = evaluate(&module, &inputs)
        .map_err(|e| e.to_string())?
        .leaves();
    let want = read_outputs(npz).map_err(|e| e.to_string())?;
    if got.len() < want.len() || (!pipeline && got.len() != want.len()) {
        return Err(format!("{} outputs, the refs have {}", got.len(), want.len()).into());
    }
    let scale = OVERRIDES
        .iter()
        .find(|(c, f, _, _)| *c == case && *f == form)
        .map_or(1.0, |o| o.2);
    let mut failures = Vec::new();
    for (i, w) in want.iter().enumerate() {
        let d = compare_arrays(&got[i], w, scale);
        if !d.ok() {
            failures.push(format!("out{i} ({}): {d}", w.shape_text()));
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n").into())
    }
}
