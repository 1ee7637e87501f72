//! `--check-numerics` on modules that cannot run whole: each pass is then
//! checked region by region on what it changed, the table says so and why,
//! and only a region that itself holds what the interpreter lacks is left
//! unchecked, by name, failing the run unless `accept_unchecked`.

mod common;
use hlo_opt::driver::check_numerics::{run_checked, CheckConfig, CheckError, CheckMode, PassCheck};
use hlo_opt::ir::{AttrValue, Instruction, Module, Opcode};
use hlo_opt::passes::{self, Pass, PassContext, PassError, PassOptions};
use hlo_opt::text::parse_module;
use std::path::Path;
use std::process::Command;

/// JAX's softmax over the last axis of x (the default pipeline raises it)
/// and, beside it, `extra` (instructions ending in one named `v`, which
/// becomes the second output).
fn softmax_and(extra: &str) -> String {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/corpus/softmax_fwd_lastaxis_f32.hlo"),
    )
    .unwrap();
    let text = text
        .replace(
            "entry_computation_layout={(f32[64,512]{1,0})->f32[64,512]{1,0}}",
            "entry_computation_layout={(f32[64,512]{1,0}, f32[64,512]{1,0})->(f32[64,512]{1,0}, f32[64,512]{1,0})}",
        )
        .replace(
            "ENTRY %main.3 (x.1: f32[64,512]) -> f32[64,512] {",
            "ENTRY %main.3 (x.1: f32[64,512], y.1: f32[64,512]) -> (f32[64,512], f32[64,512]) {",
        )
        .replace("  ROOT %div.7 = ", "  %div.7 = ");
    let tail = format!(
        "  %y.1 = f32[64,512]{{1,0}} parameter(1)\n{extra}  ROOT %out = (f32[64,512]{{1,0}}, f32[64,512]{{1,0}}) tuple(%div.7, %v)\n}}\n"
    );
    let cut = text.rfind("}\n").unwrap();
    format!("{}{tail}", &text[..cut])
}

const UNKNOWN: &str =
    "  %v = f32[64,512]{1,0} custom-call(%y.1), custom_call_target=\"VendorUnknownOp\"\n";

fn default_passes() -> Vec<Box<dyn Pass>> {
    passes::default_pipeline()
        .into_iter()
        .map(|n| (passes::find_pass(n).unwrap().make)())
        .collect()
}

fn checked(
    text: &str,
    passes: Vec<Box<dyn Pass>>,
    cfg: &CheckConfig,
) -> (Result<(), CheckError>, Vec<PassCheck>) {
    let mut m = parse_module(text, "m.hlo").unwrap();
    let mut tables = Vec::new();
    let r = run_checked(&mut m, passes, &PassOptions::default(), cfg, &mut |c| {
        tables.push(c.clone())
    });
    (r.map(|_| ()), tables)
}

#[test]
fn an_unknown_op_outside_the_rewrite_leaves_the_rewrite_checked() {
    let (r, tables) = checked(
        &softmax_and(UNKNOWN),
        default_passes(),
        &CheckConfig::default(),
    );
    r.unwrap();
    let c = tables
        .iter()
        .find(|c| c.pass == "native-to-custom-softmax")
        .unwrap();
    assert!(c.changed);
    let why = c.by_region.as_deref().expect("checked region by region");
    assert!(why.contains("VendorUnknownOp"), "{why}");
    assert!(c.unchecked.is_empty(), "{:?}", c.unchecked);
    assert!(!c.rows.is_empty() && c.rows.iter().all(|r| r.diff.ok()));
    let table = c.table();
    assert!(
        table.contains("changed, checked region by region (the whole module cannot run: ")
            && table.contains("VendorUnknownOp"),
        "{table}"
    );
}

/// A wrong rewrite planted for the test: the first output of the root
/// tuple is negated.
struct NegateFirstOutput;

impl Pass for NegateFirstOutput {
    fn name(&self) -> &'static str {
        "plant-negate-output"
    }

    fn run(&mut self, module: &mut Module, _: &mut PassContext) -> Result<bool, PassError> {
        let entry = module.entry();
        let comp = module.comp(entry);
        let root = comp.root();
        let first = comp.instr(root).operand(0);
        let shape = comp.instr(first).shape.clone();
        let neg = Instruction::new("planted.neg", Opcode::Negate, shape).with_operands([first]);
        let neg = module.add_instruction(entry, neg);
        let mut ops: Vec<_> = module.comp(entry).instr(root).operands().to_vec();
        ops[0] = neg;
        let tuple_shape = module.comp(entry).instr(root).shape.clone();
        let t = Instruction::new("planted.out", Opcode::Tuple, tuple_shape).with_operands(ops);
        let t = module.add_instruction(entry, t);
        module.replace_instruction(entry, root, t);
        Ok(true)
    }
}

#[test]
fn a_wrong_rewrite_is_caught_region_by_region() {
    let (r, _) = checked(
        &softmax_and(UNKNOWN),
        vec![Box::new(NegateFirstOutput)],
        &CheckConfig::default(),
    );
    // Caught where it happened (issue 31): the planted negation is the
    // rewrite, checked on seeded inputs as the whole module cannot run.
    match r {
        Err(CheckError::Local { pass, .. }) => assert_eq!(pass, "plant-negate-output"),
        other => panic!("expected a wrong rewrite, got {other:?}"),
    }
}

/// A rewrite planted for the test: the unknown call gets a backend config,
/// so the region of the change is that call, which nothing can evaluate.
struct TouchUnknownCall;

impl Pass for TouchUnknownCall {
    fn name(&self) -> &'static str {
        "plant-touch-unknown-call"
    }

    fn run(&mut self, module: &mut Module, _: &mut PassContext) -> Result<bool, PassError> {
        let entry = module.entry();
        let id = module
            .comp(entry)
            .instructions()
            .find(|(_, i)| i.custom_call_target() == Some("VendorUnknownOp"))
            .map(|(id, _)| id)
            .unwrap();
        module
            .comp_mut(entry)
            .instr_mut(id)
            .set_attr("backend_config", AttrValue::BackendConfig("{}".into()));
        Ok(true)
    }
}

#[test]
fn a_region_holding_an_unknown_op_is_unchecked_by_name() {
    let passes = || -> Vec<Box<dyn Pass>> {
        let mut p = default_passes();
        p.push(Box::new(TouchUnknownCall));
        p
    };
    let (r, tables) = checked(&softmax_and(UNKNOWN), passes(), &CheckConfig::default());
    match r {
        Err(e @ CheckError::Unchecked(_)) => {
            let text = e.to_string();
            assert!(
                text.contains("pass plant-touch-unknown-call")
                    && text.contains("instruction v")
                    && text.contains("VendorUnknownOp")
                    && text.contains("--accept-unchecked"),
                "{text}"
            );
        }
        other => panic!("expected unchecked regions, got {other:?}"),
    }
    // The softmax was still checked.
    let softmax = tables
        .iter()
        .find(|c| c.pass == "native-to-custom-softmax")
        .unwrap();
    assert!(softmax.unchecked.is_empty() && !softmax.rows.is_empty());
    let cfg = CheckConfig {
        accept_unchecked: true,
        ..CheckConfig::default()
    };
    let (r, tables) = checked(&softmax_and(UNKNOWN), passes(), &cfg);
    r.unwrap();
    let touched = tables.last().unwrap();
    assert_eq!(touched.unchecked.len(), 1);
    assert!(touched.table().contains("UNCHECKED"), "{}", touched.table());
}

#[test]
fn a_module_that_runs_whole_is_still_checked_whole() {
    let plain = "  %v = f32[64,512]{1,0} negate(%y.1)\n";
    let (r, tables) = checked(
        &softmax_and(plain),
        default_passes(),
        &CheckConfig::default(),
    );
    r.unwrap();
    let c = tables
        .iter()
        .find(|c| c.pass == "native-to-custom-softmax")
        .unwrap();
    assert!(c.by_region.is_none());
    // By default the rewrite is checked where it happened (issue 31);
    // `full` re-evaluates the whole module besides.
    assert!(
        c.table()
            .contains("changed, 1 rewrite checked where it happened"),
        "{}",
        c.table()
    );
    let full = CheckConfig {
        mode: CheckMode::Full,
        ..CheckConfig::default()
    };
    let (r, tables) = checked(&softmax_and(plain), default_passes(), &full);
    r.unwrap();
    let c = tables
        .iter()
        .find(|c| c.pass == "native-to-custom-softmax")
        .unwrap();
    assert!(
        c.table()
            .contains("changed, 1 rewrite checked where it happened, outputs re-evaluated"),
        "{}",
        c.table()
    );
}

#[test]
fn the_cli_checks_region_by_region_and_accept_unchecked_needs_check_numerics() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("m.hlo");
    std::fs::write(&input, softmax_and(UNKNOWN)).unwrap();
    let bin = env!("CARGO_BIN_EXE_hlo-opt");
    let out = Command::new(bin)
        .arg("--check-numerics")
        .arg(&input)
        .arg("-o")
        .arg(dir.path().join("o.hlo"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("pass native-to-custom-softmax: changed, checked region by region"),
        "{err}"
    );
    let out = Command::new(bin)
        .arg("--accept-unchecked")
        .arg(&input)
        .output()
        .unwrap();
    assert!(!out.status.success());
}
