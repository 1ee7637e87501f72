//! Region checks: a pass checked on what it changed, for modules too large
//! to evaluate whole.

mod common;
use common::*;
use hlo_opt::interp::region::{check_regions, RegionCheck};
use hlo_opt::ir::{AttrValue, Instruction, Module, Opcode};
use hlo_opt::passes::{self, Pass, PassContext, PassError, PassOptions};
use hlo_opt::text::parse_module;

fn after_pass(module: &Module, mut pass: Box<dyn Pass>) -> Module {
    let mut after = module.clone();
    let mut ctx = PassContext::new(PassOptions::default());
    assert!(
        pass.run(&mut after, &mut ctx).unwrap(),
        "the pass changed nothing"
    );
    after
}

fn registered(name: &str) -> Box<dyn Pass> {
    (passes::find_pass(name).unwrap().make)()
}

fn llama2() -> Module {
    parse(&data("neuron/graphhelper_llama2_dp1_tp1_pp1.txt")).unwrap()
}

fn failures(checks: &[RegionCheck]) -> Vec<String> {
    checks
        .iter()
        .flat_map(|c| &c.rows)
        .filter(|r| !r.diff.ok())
        .map(|r| format!("{}: {}", r.name, r.diff))
        .collect()
}

#[test]
fn llama2_softmax_legalization_is_checked_on_slices() {
    let before = llama2();
    let after = after_pass(&before, registered("legalize-softmax"));
    let checks = check_regions(&before, &after, 0, 1.0).unwrap();
    assert_eq!(checks.len(), 1);
    let c = &checks[0];
    assert_eq!(c.computation, "SyncTensorsGraph.6428");
    // 12 calls before; 12 calls and their 12 index constants after.
    assert_eq!((c.before_size, c.after_size), (12, 24));
    // Batch, heads and query rows shrink; the softmax axis does not.
    assert_eq!(
        c.sliced.as_deref(),
        Some("f32[1024,32,4096,4096] -> f32[2,2,2,4096]")
    );
    assert_eq!(c.rows.len(), 12);
    assert!(c
        .rows
        .iter()
        .any(|r| r.name == "Softmax_f32/custom-call.12"));
    assert!(c.rows.iter().all(|r| r.shape == "f32[2,2,2,4096]"));
    assert_eq!(failures(&checks), Vec::<String>::new());
}

/// A wrong rewrite planted for the test: the first AwsNeuronSoftmax call
/// becomes an exponential of its operand.
struct PlantExp;

impl Pass for PlantExp {
    fn name(&self) -> &'static str {
        "plant-exp-for-softmax"
    }

    fn run(&mut self, module: &mut Module, _: &mut PassContext) -> Result<bool, PassError> {
        let entry = module.entry();
        let comp = module.comp(entry);
        let (call, x, shape) = comp
            .instructions()
            .find(|(_, i)| i.custom_call_target() == Some("AwsNeuronSoftmax"))
            .map(|(id, i)| (id, i.operand(0), i.shape.clone()))
            .expect("a softmax call");
        let exp = Instruction::new("", Opcode::Exp, shape).with_operands([x]);
        let id = module.add_instruction(entry, exp);
        module.replace_instruction(entry, call, id);
        Ok(true)
    }
}

#[test]
fn a_wrong_rewrite_in_llama2_is_caught_on_its_slice() {
    let before = llama2();
    let after = after_pass(&before, Box::new(PlantExp));
    let checks = check_regions(&before, &after, 0, 1.0).unwrap();
    let bad = failures(&checks);
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(
        bad[0].starts_with("exponential/custom-call.12: "),
        "{bad:?}"
    );
    assert_eq!(
        checks[0].sliced.as_deref(),
        Some("f32[1024,32,4096,4096] -> f32[2,2,2,4096]")
    );
}

/// A native softmax over axis 2 of an array too large to evaluate whole.
const NATIVE: &str = r#"HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  x = f32[64,64,2048] parameter(0)
  e = f32[64,64,2048] exponential(x)
  z = f32[] constant(0)
  s = f32[64,64] reduce(e, z), dimensions={2}, to_apply=add
  b = f32[64,64,2048] broadcast(s), dimensions={0,1}
  ROOT d = f32[64,64,2048] divide(e, b)
}
"#;

fn raised(axis: &str) -> String {
    NATIVE.replace(
        "  e = f32[64,64,2048] exponential(x)\n  z = f32[] constant(0)\n  s = f32[64,64] reduce(e, z), dimensions={2}, to_apply=add\n  b = f32[64,64,2048] broadcast(s), dimensions={0,1}\n  ROOT d = f32[64,64,2048] divide(e, b)",
        &format!("  ROOT d = f32[64,64,2048] custom-call(x), custom_call_target=\"AwsNeuronSoftmax\", backend_config=\"{axis}\""),
    )
}

#[test]
fn slicing_keeps_reduced_dimensions_whole() {
    let before = parse_module(NATIVE, "native.hlo").unwrap();
    let after = parse_module(&raised("2"), "raised.hlo").unwrap();
    assert_ne!(after.comp(after.entry()).instruction_count(), 6);
    let checks = check_regions(&before, &after, 0, 1.0).unwrap();
    assert_eq!(checks.len(), 1);
    assert_eq!((checks[0].before_size, checks[0].after_size), (5, 1));
    assert_eq!(
        checks[0].sliced.as_deref(),
        Some("f32[64,64,2048] -> f32[2,2,2048]")
    );
    assert_eq!(failures(&checks), Vec::<String>::new());
}

#[test]
fn a_softmax_on_the_wrong_axis_is_caught_with_both_axes_whole() {
    let before = parse_module(NATIVE, "native.hlo").unwrap();
    let after = parse_module(&raised("1"), "raised.hlo").unwrap();
    let checks = check_regions(&before, &after, 0, 1.0).unwrap();
    // Axis 1 (the wrong softmax's) and axis 2 (the reduce's) both stay.
    assert_eq!(
        checks[0].sliced.as_deref(),
        Some("f32[64,64,2048] -> f32[2,64,2048]")
    );
    let bad = failures(&checks);
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(bad[0].starts_with("d/d: "), "{bad:?}");
}

#[test]
fn small_regions_are_evaluated_unsliced() {
    let before = parse(&data("corpus/mha_fwd_f32.hlo")).unwrap();
    let after = after_pass(&before, registered("native-to-custom-softmax"));
    let checks = check_regions(&before, &after, 0, 1.0).unwrap();
    assert!(!checks.is_empty());
    assert!(checks.iter().all(|c| c.sliced.is_none()));
    assert!(checks.iter().all(|c| !c.rows.is_empty()));
    assert_eq!(failures(&checks), Vec::<String>::new());
}

#[test]
fn an_unchanged_module_has_no_regions() {
    let before = llama2();
    assert!(check_regions(&before, &before.clone(), 0, 1.0)
        .unwrap()
        .is_empty());
}

/// Every pass of the default pipeline, checked region by region on the
/// torch-neuronx BERT step (whose whole-module check takes a minute).
#[test]
fn bert_default_pipeline_passes_region_by_region() {
    let mut module = parse(&data("neuron/graphhelper_bert_single_graph_4.txt")).unwrap();
    let mut checked = Vec::new();
    for name in passes::default_pipeline() {
        let before = module.clone();
        let mut ctx = PassContext::new(PassOptions::default());
        if !registered(name).run(&mut module, &mut ctx).unwrap() {
            continue;
        }
        let checks = check_regions(&before, &module, 0, 1.0).unwrap();
        assert_eq!(failures(&checks), Vec::<String>::new(), "{name}");
        assert!(
            !checks.is_empty(),
            "{name} changed the module but no region"
        );
        checked.push(name);
    }
    assert_eq!(
        checked,
        [
            "legalize-intrinsics",
            "native-to-custom-softmax-dx",
            "native-to-custom-softmax"
        ]
    );
}

#[test]
fn a_region_that_cannot_be_evaluated_is_an_error() {
    // Renaming a call's target is a change even though nothing else is.
    let before = parse_module(&raised("2"), "a.hlo").unwrap();
    let mut after = before.clone();
    let entry = after.entry();
    let root = after.comp(entry).root();
    after.comp_mut(entry).instr_mut(root).set_attr(
        "custom_call_target",
        AttrValue::Str("AwsNeuronSoftmaxBackward".into()),
    );
    let err = check_regions(&before, &after, 0, 1.0).unwrap_err();
    assert!(err.to_string().contains("operand"), "{err}");
}
