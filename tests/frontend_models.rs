//! The modules PyTorch/XLA and JAX/Flax emit for small real models
//! (`tests/data/frontend/`, made by `scripts/gen_frontend_models.py`): the
//! default pipeline raises exactly the softmaxes the model code holds
//! (`MANIFEST.json` has the counts, taken from the code: softmaxes per layer
//! times layers; per loop body for scanned layers, where the pipeline runs
//! with `--all-computations`), never a log_softmax, and `--check-numerics`
//! proves every rewrite.

mod common;
use common::*;
use hlo_opt::driver::check_numerics::{run_checked, CheckConfig};
use hlo_opt::passes::{default_pipeline, find_pass, PassOptions, Pipeline, Scope};
use hlo_opt::text::print_module;

struct Case {
    file: String,
    forward: usize,
    backward: usize,
    in_loop_body: bool,
}

fn cases() -> Vec<Case> {
    let manifest: serde_json::Value =
        serde_json::from_str(&read(&data("frontend/MANIFEST.json"))).expect("MANIFEST.json");
    let cases = manifest["cases"].as_array().expect("cases");
    assert!(
        cases.len() >= 30,
        "the manifest lists {} cases",
        cases.len()
    );
    cases
        .iter()
        .map(|c| Case {
            file: c["file"].as_str().expect("file").to_string(),
            forward: c["softmax_fwd"].as_u64().expect("softmax_fwd") as usize,
            backward: c["softmax_bwd"].as_u64().expect("softmax_bwd") as usize,
            in_loop_body: c["in_loop_body"].as_bool().expect("in_loop_body"),
        })
        .collect()
}

fn options(case: &Case) -> PassOptions {
    PassOptions {
        scope: if case.in_loop_body {
            Scope::AllComputations
        } else {
            Scope::Original
        },
    }
}

fn count_targets(m: &hlo_opt::ir::Module, target: &str) -> usize {
    m.computations()
        .flat_map(|(_, c)| c.instructions())
        .filter(|(_, i)| i.custom_call_target() == Some(target))
        .count()
}

#[test]
fn the_pipeline_raises_the_softmaxes_the_models_hold() {
    let mut failures = Vec::new();
    for case in cases() {
        let path = data(&format!("frontend/{}", case.file));
        let text = read(&path);
        let mut m = parse(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            print_module(&m),
            text,
            "{}: not a byte round trip",
            case.file
        );
        let mut p = Pipeline::default_pipeline();
        p.options = options(&case);
        p.run(&mut m)
            .unwrap_or_else(|e| panic!("{}: {e}", case.file));
        let got = (
            count_targets(&m, "AwsNeuronSoftmax"),
            count_targets(&m, "AwsNeuronSoftmaxBackward"),
        );
        if got != (case.forward, case.backward) {
            failures.push(format!(
                "{}: raised {} forward / {} backward, the model holds {} / {}",
                case.file, got.0, got.1, case.forward, case.backward
            ));
        }
        // The output is the tool's own to read.
        let printed = print_module(&m);
        let again = hlo_opt::text::parse_module(&printed, &case.file)
            .unwrap_or_else(|e| panic!("{}: output does not parse: {e}", case.file));
        assert_eq!(print_module(&again), printed, "{}", case.file);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Modules holding an op the interpreter does not evaluate yet.
const NOT_EVALUATED: &[&str] = &[];

#[test]
fn check_numerics_proves_every_rewrite() {
    let mut failures = Vec::new();
    for case in cases() {
        if NOT_EVALUATED.contains(&case.file.as_str()) {
            continue;
        }
        let mut m = parse(&data(&format!("frontend/{}", case.file))).unwrap();
        let passes = default_pipeline()
            .into_iter()
            .map(|n| (find_pass(n).expect("registered").make)())
            .collect();
        // Every module runs whole: none falls back to region by region.
        let mut by_region = Vec::new();
        if let Err(e) = run_checked(
            &mut m,
            passes,
            &options(&case),
            &CheckConfig::default(),
            &mut |c| {
                if let Some(why) = &c.by_region {
                    by_region.push(format!("{}: {}: {why}", case.file, c.pass));
                }
            },
        ) {
            failures.push(format!("{}: {e}", case.file));
        }
        failures.extend(by_region);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
