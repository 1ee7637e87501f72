//! Every pass is idempotent on real modules, and the default pipeline
//! reaches its fixed point by its second run (CONTRACT.md section 2).

mod common;
use common::*;
use hlo_opt::passes::{default_pipeline, registry, Pipeline, Scope};
use hlo_opt::text::print_module;
use std::path::PathBuf;

fn modules() -> Vec<PathBuf> {
    let mut paths = files("corpus", |n| {
        n.ends_with(".hlo") && !n.ends_with(".short.hlo")
    });
    paths.extend(files("neuron", |n| {
        n.ends_with(".txt") && n != "dummy_hlo_nki_kernel.txt"
    }));
    paths
}

fn run(names: &[&str], scope: Scope, module: &mut hlo_opt::ir::Module) -> Result<bool, String> {
    let mut p = Pipeline::from_names(names).map_err(|e| e.to_string())?;
    p.options.scope = scope;
    let runs = p.run(module).map_err(|e| e.to_string())?;
    Ok(runs.iter().any(|r| r.changed))
}

#[test]
fn every_pass_is_idempotent_on_every_real_module() {
    let mut failures = Vec::new();
    for path in modules() {
        for info in registry() {
            for scope in [Scope::Original, Scope::AllComputations] {
                let mut m = parse(&path).unwrap_or_else(|e| panic!("{e}"));
                let what = format!("{} / {} / {scope:?}", path.display(), info.name);
                if let Err(e) = run(&[info.name], scope, &mut m) {
                    failures.push(format!("{what}: first run failed: {e}"));
                    continue;
                }
                let once = print_module(&m);
                match run(&[info.name], scope, &mut m) {
                    Err(e) => failures.push(format!("{what}: second run failed: {e}")),
                    Ok(true) => failures.push(format!("{what}: the second run reported a change")),
                    Ok(false) if print_module(&m) != once => {
                        failures.push(format!("{what}: the second run changed the text"))
                    }
                    Ok(false) => {}
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_default_pipeline_reaches_its_fixed_point_by_the_second_run() {
    let names = default_pipeline();
    let mut failures = Vec::new();
    for path in modules() {
        let mut m = parse(&path).unwrap_or_else(|e| panic!("{e}"));
        let result =
            run(&names, Scope::Original, &mut m).and_then(|_| run(&names, Scope::Original, &mut m));
        if let Err(e) = result {
            failures.push(format!("{}: {e}", path.display()));
            continue;
        }
        let second = print_module(&m);
        match run(&names, Scope::Original, &mut m) {
            Ok(false) if print_module(&m) == second => {}
            Ok(_) => failures.push(format!(
                "{}: the third run changed the module",
                path.display()
            )),
            Err(e) => failures.push(format!("{}: third run: {e}", path.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
