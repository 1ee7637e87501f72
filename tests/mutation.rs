//! The mutation API and the verifier.

use hlo_opt::ir::verify::verify;
use hlo_opt::ir::{Instruction, Literal, Module, Opcode, Payload, PrimitiveType, Shape};
use hlo_opt::text::{parse_module, print_module};

fn module(text: &str) -> Module {
    let m = parse_module(text, "test.hlo").expect("test module parses");
    verify(&m).expect("test module verifies");
    m
}

const CHAIN: &str = r#"HloModule m, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

ENTRY %e (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %a = f32[4]{0} negate(%x)
  %b = f32[4]{0} exponential(%a)
  %c = f32[4]{0} add(%b, %a)
  %d = f32[4]{0} multiply(%c, %c)
  ROOT %r = f32[4]{0} add(%d, %x)
}

"#;

fn scalar_constant(value: f64) -> Instruction {
    let mut i = Instruction::new("", Opcode::Constant, Shape::scalar(PrimitiveType::F32));
    i.payload = Payload::Constant(Box::new(Literal::scalar(PrimitiveType::F32, value)));
    i
}

#[test]
fn replacing_the_root_moves_the_root_and_removes_the_dead_chain() {
    let mut m = module(CHAIN);
    let e = m.entry();
    let x = m.comp(e).find("x").unwrap();
    let old_root = m.comp(e).root();
    let neg = Instruction::new(
        "",
        Opcode::Negate,
        Shape::array(PrimitiveType::F32, vec![4]),
    )
    .with_operands(vec![x]);
    let new = m.add_instruction(e, neg);
    m.replace_instruction(e, old_root, new);
    verify(&m).unwrap();
    let c = m.comp(e);
    assert_eq!(c.root(), new);
    // r, d, c, b, a died with the old root; x is a parameter and stays.
    let names: Vec<&str> = c.instructions().map(|(_, i)| &*i.name).collect();
    assert_eq!(names, ["x", "negate"]);
    assert!(print_module(&m).contains("ROOT %negate = f32[4]{0} negate(%x)"));
}

#[test]
fn replacing_an_instruction_with_many_users_rewires_every_use() {
    let mut m = module(CHAIN);
    let e = m.entry();
    let a = m.comp(e).find("a").unwrap();
    let x = m.comp(e).find("x").unwrap();
    let abs = Instruction::new(
        "abs",
        Opcode::Abs,
        Shape::array(PrimitiveType::F32, vec![4]),
    )
    .with_operands(vec![x]);
    let abs = m.add_instruction(e, abs);
    m.replace_instruction(e, a, abs);
    verify(&m).unwrap();
    let c = m.comp(e);
    assert!(!c.is_live(a));
    assert_eq!(c.instr(abs).users().len(), 2, "b and c use abs now");
    let text = print_module(&m);
    assert!(text.contains("%b = f32[4]{0} exponential(%abs)"), "{text}");
    assert!(text.contains("%c = f32[4]{0} add(%b, %abs)"), "{text}");
}

#[test]
fn removing_a_dead_chain_removes_only_what_died() {
    let text = r#"HloModule m, entry_computation_layout={(f32[])->f32[]}

ENTRY %e (x: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %shared = f32[] negate(%x)
  %dead1 = f32[] exponential(%shared)
  %dead2 = f32[] log(%dead1)
  ROOT %r = f32[] add(%shared, %x)
}

"#;
    let mut m = module(text);
    let e = m.entry();
    let dead2 = m.comp(e).find("dead2").unwrap();
    let removed = m.comp_mut(e).remove_with_dead_operands(dead2);
    assert_eq!(removed, 2);
    verify(&m).unwrap();
    assert!(m.comp(e).find("shared").is_some(), "still used by the root");
    assert!(m.comp(e).find("dead1").is_none());
}

#[test]
fn dce_keeps_parameters_and_side_effects() {
    let text = r#"HloModule m, entry_computation_layout={(f32[], f32[])->f32[]}

ENTRY %e (x: f32[], unused: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %unused = f32[] parameter(1)
  %dead = f32[] negate(%x)
  %effect = f32[] custom-call(%x), custom_call_target="log", custom_call_has_side_effect=true
  ROOT %r = f32[] add(%x, %x)
}

"#;
    let mut m = module(text);
    assert_eq!(m.remove_dead_code(), 1);
    verify(&m).unwrap();
    let c = m.comp(m.entry());
    assert!(c.find("unused").is_some() && c.find("effect").is_some() && c.find("dead").is_none());
}

#[test]
fn new_names_take_the_smallest_free_suffix() {
    let text = r#"HloModule m, entry_computation_layout={()->f32[]}

ENTRY %e () -> f32[] {
  %constant.65 = f32[] constant(1)
  %constant = f32[] constant(2)
  ROOT %r = f32[] add(%constant.65, %constant)
}

"#;
    let mut m = module(text);
    let e = m.entry();
    let a = m.add_instruction(e, scalar_constant(3.0));
    let b = m.add_instruction(e, scalar_constant(4.0));
    let named = m.add_instruction(e, {
        let mut i = scalar_constant(5.0);
        i.name = "constant.65".into();
        i
    });
    let c = m.comp(e);
    assert_eq!(&*c.instr(a).name, "constant.1");
    assert_eq!(&*c.instr(b).name, "constant.2");
    assert_eq!(&*c.instr(named).name, "constant.3");
}

#[test]
fn post_order_visits_shared_operands_once_operands_first() {
    let m = module(CHAIN);
    let c = m.comp(m.entry());
    let order: Vec<&str> = c
        .post_order()
        .into_iter()
        .map(|id| &*c.instr(id).name)
        .collect();
    assert_eq!(order, ["x", "a", "b", "c", "d", "r"]);
}

#[test]
fn verifier_catches_each_kind_of_fault() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "bad elementwise shape",
            "ROOT %r = f32[4]{0} add(%x, %y)",
            "same dimensions",
        ),
        (
            "compare result not pred",
            "ROOT %r = f32[4]{0} compare(%x, %x), direction=LT",
            "pred",
        ),
        (
            "broadcast mismatch",
            "ROOT %r = f32[4,3]{1,0} broadcast(%x), dimensions={1}",
            "broadcast dimension",
        ),
        (
            "tuple arity",
            "ROOT %r = (f32[4]{0}) tuple(%x, %x)",
            "operand count",
        ),
        (
            "reshape count",
            "ROOT %r = f32[5]{0} reshape(%x)",
            "element count",
        ),
    ];
    for (what, root, expected) in cases {
        let text = format!(
            "HloModule m\n\nENTRY %e {{\n  %x = f32[4]{{0}} parameter(0)\n  %y = f32[3]{{0}} parameter(1)\n  {root}\n}}\n\n"
        );
        let m = parse_module(&text, "t.hlo").unwrap_or_else(|e| panic!("{what}: {e}"));
        let err = verify(&m).expect_err(what).to_string();
        assert!(err.contains(expected), "{what}: {err}");
    }
}

#[test]
fn verifier_catches_broken_ir_invariants() {
    // Names unique across computations.
    let text = "HloModule m\n\n%c {\n  ROOT %x = f32[] parameter(0)\n}\n\nENTRY %e {\n  %p = f32[] parameter(0)\n  ROOT %r = f32[] call(%p), to_apply=%c\n}\n\n";
    let mut m = module(text);
    let c = m.find_computation("c").unwrap();
    let x = m.comp(c).root();
    m.comp_mut(c).instr_mut(x).name = "p".into();
    assert!(verify(&m).unwrap_err().to_string().contains("not unique"));

    // A call whose operand does not match the callee's parameter.
    let text = "HloModule m\n\n%c {\n  ROOT %x = bf16[] parameter(0)\n}\n\nENTRY %e {\n  %p = f32[] parameter(0)\n  ROOT %r = bf16[] call(%p), to_apply=%c\n}\n\n";
    let m = parse_module(text, "t").unwrap();
    assert!(verify(&m)
        .unwrap_err()
        .to_string()
        .contains("does not match parameter 0"));

    // Missing parameter numbers (the parser rejects them, as XLA does, so
    // the gap is made through the API).
    let text = "HloModule m\n\nENTRY %e {\n  ROOT %p = f32[] parameter(0)\n}\n\n";
    let mut m = parse_module(text, "t").unwrap();
    let e = m.entry();
    let p = m.comp(e).root();
    m.comp_mut(e).instr_mut(p).payload = Payload::Parameter(1);
    assert!(verify(&m).unwrap_err().to_string().contains("0 is missing"));
}

#[test]
fn a_computation_knows_which_opcodes_it_may_hold() {
    let mut m = module(CHAIN);
    let e = m.entry();
    let c = m.comp(e);
    assert!(c.may_contain(Opcode::Exp) && c.may_contain(Opcode::Multiply));
    assert!(!c.may_contain(Opcode::Divide) && !c.may_contain(Opcode::CustomCall));
    let x = c.find("x").unwrap();
    let div = Instruction::new(
        "",
        Opcode::Divide,
        Shape::array(PrimitiveType::F32, vec![4]),
    )
    .with_operands([x, x]);
    let div = m.add_instruction(e, div);
    assert!(m.comp(e).may_contain(Opcode::Divide));
    // Removal leaves the bit: the set may only over-approximate.
    m.comp_mut(e).remove_with_dead_operands(div);
    assert!(m.comp(e).may_contain(Opcode::Divide));
    // An opcode changed in place is outside the set; the verifier says so.
    let a = m.comp(e).find("a").unwrap();
    m.comp_mut(e).instr_mut(a).opcode = Opcode::Sqrt;
    let err = verify(&m).unwrap_err().to_string();
    assert!(err.contains("opcode was changed in place"), "{err}");
}

#[test]
fn the_computation_post_order_follows_the_calls_a_change_adds() {
    let mut m = module(CHAIN);
    let e = m.entry();
    let f32x4 = || Shape::array(PrimitiveType::F32, vec![4]);
    let identity = |name: &str| {
        let mut c = hlo_opt::ir::Computation::new(name);
        let p = c.push(Instruction::new("", Opcode::Parameter, f32x4()));
        c.instr_mut(p).payload = Payload::Parameter(0);
        c.set_root(p);
        c
    };
    let a = m.add_computation(identity("a"));
    let b = m.add_computation(identity("b"));
    assert_eq!(m.computation_post_order(), vec![a, b, e]);
    // `a` now calls `b`: callees come first, the order asked for before
    // is not reused.
    let p = m.comp(a).root();
    let mut call = Instruction::new("", Opcode::Call, f32x4()).with_operands([p]);
    call.set_attr("to_apply", hlo_opt::ir::AttrValue::Comp(b));
    m.add_instruction(a, call);
    assert_eq!(m.computation_post_order(), vec![b, a, e]);
    m.remove_computations(&[a]);
    assert_eq!(m.computation_post_order(), vec![b, e]);
}
