//! The reference interpreter on small modules: XLA's semantics at the
//! edges (clamped indices, integer division by zero, saturating converts,
//! total order, stable sort), errors instead of guesses, and
//! `--check-numerics` catching planted wrong rewrites.

use hlo_opt::driver::check_numerics::{run_checked, CheckConfig, CheckError, CheckMode};
use hlo_opt::interp::array::{Array, Data, Value};
use hlo_opt::interp::{evaluate, EvalError, EvalOptions, Interpreter};
use hlo_opt::ir::literal::{Literal, LiteralData};
use hlo_opt::ir::{AttrValue, Instruction, Module, Opcode, Payload, PrimitiveType, Shape};
use hlo_opt::passes::{Pass, PassContext, PassError, PassOptions};
use hlo_opt::text::parse_module;
use std::path::Path;
use std::process::Command;

fn module(text: &str) -> Module {
    parse_module(text, "test.hlo").unwrap_or_else(|e| panic!("{e}"))
}

fn run(text: &str, args: Vec<Array>) -> Result<Value, EvalError> {
    let m = module(text);
    evaluate(&m, &args.into_iter().map(Value::array).collect::<Vec<_>>())
}

fn f32s(dims: &[usize], v: &[f32]) -> Array {
    Array::new(PrimitiveType::F32, dims.to_vec(), Data::F32(v.to_vec())).unwrap()
}

fn s32s(dims: &[usize], v: &[i64]) -> Array {
    Array::new(PrimitiveType::S32, dims.to_vec(), Data::S(v.to_vec())).unwrap()
}

fn data(v: &Value) -> Data {
    v.as_array().unwrap().data.clone()
}

const ADD: &str =
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n";

#[test]
fn dynamic_slice_clamps_start_indices() {
    let text = "HloModule m\n\nENTRY e {\n  p = f32[4]{0} parameter(0)\n  i = s32[] parameter(1)\n  ROOT d = f32[2]{0} dynamic-slice(p, i), dynamic_slice_sizes={2}\n}\n";
    let p = f32s(&[4], &[1., 2., 3., 4.]);
    let v = run(text, vec![p.clone(), s32s(&[], &[3])]).unwrap();
    assert_eq!(data(&v), Data::F32(vec![3., 4.]));
    let v = run(text, vec![p, s32s(&[], &[-5])]).unwrap();
    assert_eq!(data(&v), Data::F32(vec![1., 2.]));
}

#[test]
fn dynamic_update_slice_clamps_start_indices() {
    let text = "HloModule m\n\nENTRY e {\n  p = f32[4]{0} parameter(0)\n  u = f32[2]{0} parameter(1)\n  i = s32[] parameter(2)\n  ROOT d = f32[4]{0} dynamic-update-slice(p, u, i)\n}\n";
    let v = run(
        text,
        vec![f32s(&[4], &[0.; 4]), f32s(&[2], &[7., 8.]), s32s(&[], &[9])],
    )
    .unwrap();
    assert_eq!(data(&v), Data::F32(vec![0., 0., 7., 8.]));
}

#[test]
fn gather_clamps_and_scatter_skips_out_of_bounds() {
    let g = "HloModule m\n\nENTRY e {\n  p = f32[5]{0} parameter(0)\n  i = s32[2,1]{1,0} parameter(1)\n  ROOT g = f32[2,2]{1,0} gather(p, i), offset_dims={1}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={2}\n}\n";
    let v = run(
        g,
        vec![f32s(&[5], &[1., 2., 3., 4., 5.]), s32s(&[2, 1], &[-3, 10])],
    )
    .unwrap();
    assert_eq!(data(&v), Data::F32(vec![1., 2., 4., 5.]));

    let s = format!("HloModule m\n\n{ADD}ENTRY e {{\n  p = f32[4]{{0}} parameter(0)\n  i = s32[3,1]{{1,0}} parameter(1)\n  u = f32[3]{{0}} parameter(2)\n  ROOT s = f32[4]{{0}} scatter(p, i, u), update_window_dims={{}}, inserted_window_dims={{0}}, scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=add\n}}\n");
    let v = run(
        &s,
        vec![
            f32s(&[4], &[0.; 4]),
            s32s(&[3, 1], &[1, 7, 1]),
            f32s(&[3], &[1., 2., 3.]),
        ],
    )
    .unwrap();
    assert_eq!(data(&v), Data::F32(vec![0., 4., 0., 0.]));
}

#[test]
fn integer_edge_cases_follow_xla() {
    let text = "HloModule m\n\nENTRY e {\n  a = s32[4]{0} parameter(0)\n  b = s32[4]{0} parameter(1)\n  d = s32[4]{0} divide(a, b)\n  r = s32[4]{0} remainder(a, b)\n  l = s32[4]{0} shift-left(a, b)\n  ROOT t = (s32[4]{0}, s32[4]{0}, s32[4]{0}) tuple(d, r, l)\n}\n";
    let min = i64::from(i32::MIN);
    let v = run(
        text,
        vec![s32s(&[4], &[7, min, -7, 1]), s32s(&[4], &[0, -1, 2, 40])],
    )
    .unwrap();
    let t = v.tuple_elements().unwrap();
    assert_eq!(data(&t[0]), Data::S(vec![-1, min, -3, 0]));
    assert_eq!(data(&t[1]), Data::S(vec![7, 0, -1, 1]));
    // A shift by -1 (as unsigned: 2^32 - 1) or by 40 exceeds the width: 0.
    assert_eq!(data(&t[2]), Data::S(vec![7, 0, -28, 0]));
}

#[test]
fn converts_saturate_and_round_like_xla_and_ml_dtypes() {
    let text = "HloModule m\n\nENTRY e {\n  a = f32[5]{0} parameter(0)\n  s = s8[5]{0} convert(a)\n  u = u32[5]{0} convert(a)\n  f = f8e4m3fn[5]{0} convert(a)\n  b = bf16[5]{0} convert(a)\n  ROOT t = (s8[5]{0}, u32[5]{0}, f8e4m3fn[5]{0}, bf16[5]{0}) tuple(s, u, f, b)\n}\n";
    let v = run(
        text,
        vec![f32s(&[5], &[f32::NAN, 1e9, -1e9, 464.0, 1.0 + 1.0 / 256.0])],
    )
    .unwrap();
    let t = v.tuple_elements().unwrap();
    assert_eq!(data(&t[0]), Data::S(vec![0, 127, -128, 127, 1]));
    assert_eq!(data(&t[1]), Data::U(vec![0, 1_000_000_000, 0, 464, 1]));
    // NaN, overflow -> NaN (no inf in e4m3fn), 464 ties to 448, 1.0039 -> 1.
    assert_eq!(data(&t[2]), Data::Mini(vec![0x7f, 0x7f, 0xff, 0x7e, 0x38]));
    let Data::Bf16(b) = data(&t[3]) else { panic!() };
    assert_eq!(b[4].to_f32(), 1.0, "ties to even");
}

#[test]
fn compare_total_order_and_stable_sort() {
    let text = "HloModule m\n\nlt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n  ROOT l = pred[] compare(a, b), direction=LT, type=TOTALORDER\n}\n\nENTRY e {\n  x = f32[6]{0} parameter(0)\n  i = s32[6]{0} iota(), iota_dimension=0\n  ROOT s = (f32[6]{0}, s32[6]{0}) sort(x, i), dimensions={0}, is_stable=true, to_apply=lt\n}\n";
    let x = f32s(&[6], &[f32::NAN, 0.0, -0.0, 1.0, f32::NEG_INFINITY, 0.0]);
    let v = run(text, vec![x]).unwrap();
    let t = v.tuple_elements().unwrap();
    // -inf < -0 < +0 = +0 (stable) < 1 < NaN.
    assert_eq!(data(&t[1]), Data::S(vec![4, 2, 1, 5, 3, 0]));
}

#[test]
fn variadic_reduce_runs_its_computation() {
    // argmax with the first index on ties.
    let text = "HloModule m\n\nam {\n  a = f32[] parameter(0)\n  ai = s32[] parameter(1)\n  b = f32[] parameter(2)\n  bi = s32[] parameter(3)\n  gt = pred[] compare(a, b), direction=GT\n  eq = pred[] compare(a, b), direction=EQ\n  lt = pred[] compare(ai, bi), direction=LT\n  tie = pred[] and(eq, lt)\n  keep = pred[] or(gt, tie)\n  v = f32[] select(keep, a, b)\n  i = s32[] select(keep, ai, bi)\n  ROOT t = (f32[], s32[]) tuple(v, i)\n}\n\nENTRY e {\n  x = f32[2,4]{1,0} parameter(0)\n  i = s32[2,4]{1,0} iota(), iota_dimension=1\n  m = f32[] constant(-inf)\n  z = s32[] constant(0)\n  ROOT r = (f32[2]{0}, s32[2]{0}) reduce(x, i, m, z), dimensions={1}, to_apply=am\n}\n";
    let v = run(
        text,
        vec![f32s(&[2, 4], &[1., 5., 5., 2., -1., -3., -1., -2.])],
    )
    .unwrap();
    let t = v.tuple_elements().unwrap();
    assert_eq!(data(&t[0]), Data::F32(vec![5., -1.]));
    assert_eq!(data(&t[1]), Data::S(vec![1, 0]));
}

#[test]
fn while_conditional_and_reduce_window() {
    let text = format!("HloModule m\n\n{ADD}cond {{\n  s = (s32[], f32[]) parameter(0)\n  n = s32[] get-tuple-element(s), index=0\n  k = s32[] constant(5)\n  ROOT c = pred[] compare(n, k), direction=LT\n}}\n\nbody {{\n  s = (s32[], f32[]) parameter(0)\n  n = s32[] get-tuple-element(s), index=0\n  x = f32[] get-tuple-element(s), index=1\n  one = s32[] constant(1)\n  n1 = s32[] add(n, one)\n  two = f32[] constant(2)\n  x1 = f32[] multiply(x, two)\n  ROOT t = (s32[], f32[]) tuple(n1, x1)\n}}\n\nb0 {{\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}}\n\nb1 {{\n  p = f32[] parameter(0)\n  ROOT e = f32[] exponential(p)\n}}\n\nENTRY e {{\n  z = s32[] constant(0)\n  one = f32[] constant(1)\n  t = (s32[], f32[]) tuple(z, one)\n  w = (s32[], f32[]) while(t), condition=cond, body=body\n  x = f32[] get-tuple-element(w), index=1\n  k = s32[] parameter(0)\n  c = f32[] conditional(k, x, x), branch_computations={{b0, b1}}\n  v = f32[6]{{0}} parameter(1)\n  zero = f32[] constant(0)\n  rw = f32[3]{{0}} reduce-window(v, zero), window={{size=2 stride=2}}, to_apply=add\n  ROOT r = (f32[], f32[3]{{0}}) tuple(c, rw)\n}}\n");
    let v = run(
        &text,
        vec![s32s(&[], &[7]), f32s(&[6], &[1., 2., 3., 4., 5., 6.])],
    )
    .unwrap();
    let t = v.tuple_elements().unwrap();
    // 2^5 = 32; index 7 is out of range: the last branch runs.
    assert_eq!(data(&t[0]), Data::F32(vec![32f32.exp()]));
    assert_eq!(data(&t[1]), Data::F32(vec![3., 7., 11.]));
}

#[test]
fn bitcast_follows_layouts() {
    // f32[2,3]{0,1} is stored column-major; a bitcast to f32[3,2]{1,0}
    // reads that buffer row-major: the transpose.
    let text = "HloModule m\n\nENTRY e {\n  p = f32[2,3]{1,0} parameter(0)\n  c = f32[2,3]{0,1} copy(p)\n  ROOT b = f32[3,2]{1,0} bitcast(c)\n}\n";
    let v = run(text, vec![f32s(&[2, 3], &[1., 2., 3., 4., 5., 6.])]).unwrap();
    assert_eq!(data(&v), Data::F32(vec![1., 4., 2., 5., 3., 6.]));
}

#[test]
fn pad_with_negative_and_interior_padding() {
    let text = "HloModule m\n\nENTRY e {\n  p = f32[3]{0} parameter(0)\n  z = f32[] constant(0)\n  ROOT d = f32[5]{0} pad(p, z), padding=-1_1_1\n}\n";
    let v = run(text, vec![f32s(&[3], &[1., 2., 3.])]).unwrap();
    assert_eq!(data(&v), Data::F32(vec![0., 2., 0., 3., 0.]));
}

fn err_of(text: &str, args: Vec<Array>) -> String {
    match run(text, args) {
        Ok(v) => panic!("expected an error, got {}", v.shape_text()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn unsupported_things_are_errors_naming_them() {
    let e = err_of(
        "HloModule m\n\nENTRY e {\n  t = token[] after-all()\n  ROOT r = (f32[4]{0}, token[]) infeed(t)\n}\n",
        vec![],
    );
    assert!(e.contains("unsupported op") && e.contains("infeed"), "{e}");
    let e = err_of(
        "HloModule m\n\nENTRY e {\n  p = f32[4]{0} parameter(0)\n  ROOT r = f32[4]{0} custom-call(p), custom_call_target=\"AwsNeuronRmsNorm\"\n}\n",
        vec![f32s(&[4], &[0.; 4])],
    );
    assert!(
        e.contains("AwsNeuronRmsNorm") && e.contains("instruction r"),
        "{e}"
    );
    let e = err_of(
        "HloModule m\n\nENTRY e {\n  ROOT c = f32[4]{0} constant({...})\n}\n",
        vec![],
    );
    assert!(e.contains("elided"), "{e}");
    let e = err_of(
        "HloModule m\n\nENTRY e {\n  p = f32[4]{0} parameter(0)\n  ROOT r = f32[4]{0} negate(p)\n}\n",
        vec![],
    );
    assert!(e.contains("takes 1 parameters, 0 inputs given"), "{e}");
    let e = err_of(
        "HloModule m\n\nENTRY e {\n  p = f32[4]{0} parameter(0)\n  ROOT r = f32[4]{0} negate(p)\n}\n",
        vec![f32s(&[2], &[0.; 2])],
    );
    assert!(e.contains("input 0 is f32[2]"), "{e}");
}

#[test]
fn malformed_modules_are_errors_not_panics() {
    // Shapes that do not fit (the parser keeps them; the verifier is not
    // run here): every one must be an error.
    let cases = [
        "HloModule m\n\nENTRY e {\n  a = f32[4]{0} parameter(0)\n  b = f32[8]{0} parameter(1)\n  ROOT r = f32[4]{0} add(a, b)\n}\n",
        "HloModule m\n\nENTRY e {\n  a = f32[4]{0} parameter(0)\n  b = f32[8]{0} parameter(1)\n  ROOT r = f32[4]{0} dynamic-slice(a, b), dynamic_slice_sizes={9}\n}\n",
        "HloModule m\n\nENTRY e {\n  a = f32[4]{0} parameter(0)\n  b = f32[8]{0} parameter(1)\n  ROOT r = f32[9]{0} slice(a), slice={[2:9]}\n}\n",
        "HloModule m\n\nENTRY e {\n  a = f32[4]{0} parameter(0)\n  b = f32[8]{0} parameter(1)\n  ROOT r = f32[4,4]{1,0} dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n",
        "HloModule m\n\nENTRY e {\n  a = f32[4]{0} parameter(0)\n  b = f32[8]{0} parameter(1)\n  ROOT r = f32[4]{0} transpose(a), dimensions={3}\n}\n",
        "HloModule m\n\nENTRY e {\n  a = f32[4]{0} parameter(0)\n  b = f32[8]{0} parameter(1)\n  ROOT r = f32[8]{0} reshape(a)\n}\n",
    ];
    for text in cases {
        let e = err_of(text, vec![f32s(&[4], &[1.; 4]), f32s(&[8], &[1.; 8])]);
        assert!(e.contains("instruction r"), "{e}");
    }
}

#[test]
fn a_runaway_while_is_an_error() {
    let text = "HloModule m\n\ncond {\n  s = f32[] parameter(0)\n  ROOT t = pred[] constant(true)\n}\n\nbody {\n  ROOT s = f32[] parameter(0)\n}\n\nENTRY e {\n  z = f32[] constant(0)\n  ROOT w = f32[] while(z), condition=cond, body=body\n}\n";
    let m = module(text);
    let mut it = Interpreter::new(&m);
    it.options = EvalOptions {
        max_while_iterations: 1000,
        ..EvalOptions::default()
    };
    let e = it.run(&[]).unwrap_err().to_string();
    assert!(e.contains("more than 1000 iterations"), "{e}");
}

fn corpus(name: &str) -> Module {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/corpus")
        .join(name);
    module(&std::fs::read_to_string(path).unwrap())
}

/// A rewrite planted for the test: replaces the root of the entry (a
/// native softmax over axis 1 of `x.1`) by an AwsNeuronSoftmax call with
/// the given axis.
struct PlantSoftmax {
    axis: &'static str,
}

impl Pass for PlantSoftmax {
    fn name(&self) -> &'static str {
        if self.axis == "1" {
            "plant-softmax-right-axis"
        } else {
            "plant-softmax-wrong-axis"
        }
    }

    fn run(&mut self, module: &mut Module, _: &mut PassContext) -> Result<bool, PassError> {
        let entry = module.entry();
        let comp = module.comp(entry);
        let root = comp.root();
        let x = comp.find("x.1").expect("the logits parameter");
        let shape = comp.instr(root).shape.clone();
        let mut call = Instruction::new("Softmax", Opcode::CustomCall, shape).with_operands([x]);
        call.set_attr(
            "custom_call_target",
            AttrValue::Str("AwsNeuronSoftmax".into()),
        );
        call.set_attr("backend_config", AttrValue::BackendConfig(self.axis.into()));
        let id = module.add_instruction(entry, call);
        module.replace_instruction(entry, root, id);
        Ok(true)
    }
}

/// Legalizes the AwsNeuronTopK call of nrn_topk_f32 to TopK_f32(x, iota)
/// with an iota starting at `start` (0 is right).
struct PlantTopK {
    start: i64,
}

impl Pass for PlantTopK {
    fn name(&self) -> &'static str {
        if self.start == 0 {
            "plant-topk-iota"
        } else {
            "plant-topk-iota-off-by-one"
        }
    }

    fn run(&mut self, module: &mut Module, _: &mut PassContext) -> Result<bool, PassError> {
        let entry = module.entry();
        let comp = module.comp(entry);
        let call = comp.find("AwsNeuronTopK.3").expect("the top-k call");
        let x = comp.instr(call).operand(0);
        let n = *comp.instr(x).shape.dims().last().unwrap();
        let shape = comp.instr(call).shape.clone();
        let lit = Literal {
            shape: Shape::array(PrimitiveType::S64, vec![n]),
            data: LiteralData::Int((self.start..self.start + n).collect()),
        };
        let mut c = Instruction::new("", Opcode::Constant, lit.shape.clone());
        c.payload = Payload::Constant(Box::new(lit));
        let iota = module.add_instruction(entry, c);
        let mut t = Instruction::new("TopK", Opcode::CustomCall, shape).with_operands([x, iota]);
        t.set_attr("custom_call_target", AttrValue::Str("TopK_f32".into()));
        let id = module.add_instruction(entry, t);
        module.replace_instruction(entry, call, id);
        Ok(true)
    }
}

fn check(m: &mut Module, pass: Box<dyn Pass>) -> Result<(), CheckError> {
    let mut tables = String::new();
    let r = run_checked(
        m,
        vec![pass],
        &PassOptions::default(),
        &CheckConfig::default(),
        &mut |c| tables.push_str(&c.table()),
    );
    eprint!("{tables}");
    r.map(|_| ())
}

#[test]
fn check_numerics_accepts_a_right_rewrite_and_names_a_wrong_one() {
    let mut m = corpus("softmax_fwd_lastaxis_f32.hlo");
    check(&mut m, Box::new(PlantSoftmax { axis: "1" })).unwrap();

    let mut m = corpus("softmax_fwd_lastaxis_f32.hlo");
    let e = check(&mut m, Box::new(PlantSoftmax { axis: "0" })).unwrap_err();
    let text = e.to_string();
    // Caught where it happened (issue 31), naming the rewrite, its worst
    // element and the input there.
    assert!(
        matches!(&e, CheckError::Local { pass: "plant-softmax-wrong-axis", rewrite, .. } if rewrite == "div.7"),
        "{text}"
    );
    assert!(
        text.contains("pass plant-softmax-wrong-axis: rewrite div.7 (in main.3) is wrong")
            && text.contains("worst element div.7[")
            && text.contains("inputs there: x.1="),
        "{text}"
    );
}

#[test]
fn check_numerics_catches_a_topk_iota_off_by_one() {
    let mut m = corpus("nrn_topk_f32.hlo");
    check(&mut m, Box::new(PlantTopK { start: 0 })).unwrap();
    let mut m = corpus("nrn_topk_f32.hlo");
    let e = check(&mut m, Box::new(PlantTopK { start: 1 })).unwrap_err();
    // The values stay right; the indices (the call's second output) move,
    // caught where the rewrite happened (issue 31).
    assert!(
        matches!(&e, CheckError::Local { pass: "plant-topk-iota-off-by-one", rewrite, found } if rewrite == "AwsNeuronTopK.3" && found.output.starts_with("AwsNeuronTopK.3:1 ")),
        "{e}"
    );
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hlo-opt"))
}

#[test]
fn eval_writes_refs_layout_npz_and_compares() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.npz");
    let refs = root.join("tests/data/refs/nrn_quantize_mx_bf16.npz");
    let hlo = root.join("tests/data/corpus/nrn_quantize_mx_bf16.hlo");
    let st = bin()
        .arg("eval")
        .arg(&hlo)
        .arg("--inputs")
        .arg(&refs)
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap();
    assert!(st.success());
    // The bit-stored e8m0 output is named in the sidecar, like the refs'.
    let side = std::fs::read_to_string(dir.path().join("out.json")).unwrap();
    assert!(side.contains("\"out1\": \"f8e8m0fnu\""), "{side}");
    let got = hlo_opt::interp::npy::read_outputs(&out).unwrap();
    let want = hlo_opt::interp::npy::read_outputs(&refs).unwrap();
    assert_eq!(got, want, "QuantizeMX is exact");
    // --compare against the written file passes; against another case's
    // refs it fails.
    let ok = bin()
        .args(["eval", hlo.to_str().unwrap(), "--inputs"])
        .arg(&refs)
        .arg("--compare")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stdout)
    );
    let bad = bin()
        .args(["eval", hlo.to_str().unwrap(), "--seed", "3", "--compare"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stdout).contains("FAIL"));
    // An archive with no out0 compared nothing and passed; it is refused.
    let inputs_only = dir.path().join("inputs_only.npz");
    {
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&inputs_only).unwrap());
        zip.start_file("in0.npy", zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.finish().unwrap();
    }
    let vacuous = bin()
        .args(["eval", hlo.to_str().unwrap(), "--inputs"])
        .arg(&refs)
        .arg("--compare")
        .arg(&inputs_only)
        .output()
        .unwrap();
    let msg = String::from_utf8_lossy(&vacuous.stderr);
    assert_eq!(vacuous.status.code(), Some(1), "{msg}");
    assert!(
        msg.contains("inputs_only.npz: holds no out0") && msg.contains("has: in0"),
        "{msg}"
    );
}

/// `hlo-opt --check-numerics input -o out`'s standard error, once it has
/// succeeded and the module it wrote reads back.
fn check_numerics_stderr(input: &Path) -> String {
    let dir = tempfile::tempdir().unwrap();
    let written = dir.path().join("o.hlo");
    let out = bin()
        .arg("--check-numerics")
        .arg(input)
        .arg("-o")
        .arg(&written)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    let back = bin()
        .args(["--passes", ""])
        .arg(&written)
        .arg("-o")
        .arg(dir.path().join("back.hlo"))
        .output()
        .unwrap();
    assert!(
        back.status.success(),
        "{}",
        String::from_utf8_lossy(&back.stderr)
    );
    err
}

#[test]
fn check_numerics_flag_prints_a_table_per_changing_pass() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let err = check_numerics_stderr(&root.join("tests/data/corpus/nrn_custom_calls_ffi.hlo"));
    assert!(
        err.contains("check-numerics: pass legalize-intrinsics: changed"),
        "{err}"
    );
    // Each rewrite has its row (issue 31: checked where it happened).
    assert!(
        err.contains("legalize-intrinsics: changed, 5 rewrites checked where they happened")
            && err.contains("rewrite ffi_call.14 in main.1"),
        "{err}"
    );
    assert!(!err.contains("FAIL"), "{err}");
}

/// A softmax of a call's result (JAX's `jit(_where)` before its logits):
/// once the call is inlined, the softmax reads the call's root, which the
/// module before the passes does not have. The softmax's rewrite reads the
/// call's value there (the inlined root stands for it), so its region is
/// the softmax alone, not widened back through the inlined body.
#[test]
fn a_rewrite_reads_the_value_an_earlier_rewrite_stands_for() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("call_softmax.hlo");
    std::fs::write(&path, CALL_THEN_SOFTMAX).unwrap();
    let err = check_numerics_stderr(&path);
    assert!(
        err.contains("rewrite logits in main.3: 1 instruction(s) before, 3 after, real inputs"),
        "{err}"
    );
    // The native softmax's 9 instructions (the reductions' constants
    // included), not the inlined multiply and its broadcast constant.
    assert!(
        err.contains("rewrite div.7 in main.3: 9 instruction(s) before, 1 after, real inputs"),
        "{err}"
    );
}

const CALL_THEN_SOFTMAX: &str = r#"HloModule call_then_softmax

%where (x.2: f32[64,512]) -> f32[64,512] {
  %x.2 = f32[64,512]{1,0} parameter(0)
  %half = f32[] constant(0.5)
  %halves = f32[64,512]{1,0} broadcast(%half), dimensions={}
  ROOT %scaled = f32[64,512]{1,0} multiply(%x.2, %halves)
}

%max_f32 (a.1: f32[], b.1: f32[]) -> f32[] {
  %a.1 = f32[] parameter(0)
  %b.1 = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a.1, %b.1)
}

%add_f32 (a.2: f32[], b.2: f32[]) -> f32[] {
  %a.2 = f32[] parameter(0)
  %b.2 = f32[] parameter(1)
  ROOT %s = f32[] add(%a.2, %b.2)
}

ENTRY %main.3 (x.1: f32[64,512]) -> f32[64,512] {
  %x.1 = f32[64,512]{1,0} parameter(0)
  %logits = f32[64,512]{1,0} call(%x.1), to_apply=%where
  %neg_inf = f32[] constant(-inf)
  %row_max = f32[64]{0} reduce(%logits, %neg_inf), dimensions={1}, to_apply=%max_f32
  %row_max_b = f32[64,512]{1,0} broadcast(%row_max), dimensions={0}
  %shifted = f32[64,512]{1,0} subtract(%logits, %row_max_b)
  %exp.1 = f32[64,512]{1,0} exponential(%shifted)
  %zero = f32[] constant(0)
  %row_sum = f32[64]{0} reduce(%exp.1, %zero), dimensions={1}, to_apply=%add_f32
  %row_sum_b = f32[64,512]{1,0} broadcast(%row_sum), dimensions={0}
  ROOT %div.7 = f32[64,512]{1,0} divide(%exp.1, %row_sum_b)
}
"#;

#[test]
fn eval_errors_name_the_instruction_and_exit_nonzero() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.hlo");
    std::fs::write(
        &path,
        "HloModule m\n\nENTRY e {\n  p = f32[4]{0} parameter(0)\n  ROOT r = f32[4]{0} custom-call(p), custom_call_target=\"Mystery\"\n}\n",
    )
    .unwrap();
    let out = bin().arg("eval").arg(&path).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("instruction r") && err.contains("Mystery"),
        "{err}"
    );
}

/// Every module under 200 KB in the test data (XLA's parser cases, the
/// corpus, the Neuron dumps, the fuzz regressions) evaluates on seeded inputs or fails
/// with an error: nothing panics or aborts.
#[test]
fn no_module_makes_the_interpreter_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut stack = vec![root];
    let mut files = Vec::new();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            // The security reproducers are made to exhaust memory or time
            // (tests/memory_budget.rs runs them under the budget).
            if p.is_dir() && !p.ends_with("security") {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "hlo" || x == "txt")
                // The big GPT modules run in the refs tests; here they
                // would only cost time.
                && std::fs::metadata(&p).is_ok_and(|m| m.len() < 200_000)
            {
                files.push(p);
            }
        }
    }
    files.sort();
    let (mut evaluated, mut errors) = (0, 0);
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        let Ok(m) = parse_module(&text, "x") else {
            continue;
        };
        let r = std::panic::catch_unwind(|| {
            let inputs = hlo_opt::interp::random::random_inputs(&m, 0)?;
            evaluate(&m, &inputs)
        });
        match r {
            Ok(Ok(_)) => evaluated += 1,
            Ok(Err(_)) => errors += 1,
            Err(_) => panic!("{} panicked", f.display()),
        }
    }
    assert!(evaluated > 250, "{evaluated} evaluated, {errors} errors");
}

const CENTERED_SUM: &str = "HloModule m\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n  x = f32[8,64]{1,0} parameter(0)\n  z = f32[] constant(0)\n  sx = f32[8]{0} reduce(x, z), dimensions={1}, to_apply=add\n  n = f32[] constant(64)\n  nb = f32[8]{0} broadcast(n), dimensions={}\n  m = f32[8]{0} divide(sx, nb)\n  mb = f32[8,64]{1,0} broadcast(m), dimensions={0}\n  d = f32[8,64]{1,0} subtract(x, mb)\n  ROOT r = f32[8]{0} reduce(d, z), dimensions={1}, to_apply=add\n}\n";

/// Rewrites CENTERED_SUM's `sum(x - mean)` (zero in exact arithmetic, so
/// its value is rounding noise) as `sum(x) - 64 * mean` (right: different
/// rounding, same math) or as `sum(x)` (wrong).
struct PlantCenteredSum {
    right: bool,
}

impl Pass for PlantCenteredSum {
    fn name(&self) -> &'static str {
        if self.right {
            "plant-centered-sum-reassociated"
        } else {
            "plant-centered-sum-wrong"
        }
    }

    fn run(&mut self, module: &mut Module, _: &mut PassContext) -> Result<bool, PassError> {
        let entry = module.entry();
        let comp = module.comp(entry);
        let root = comp.root();
        let shape = comp.instr(root).shape.clone();
        let (s, m, nb) = (
            comp.find("sx").unwrap(),
            comp.find("m").unwrap(),
            comp.find("nb").unwrap(),
        );
        let new = if self.right {
            let mul =
                Instruction::new("mn", Opcode::Multiply, shape.clone()).with_operands([m, nb]);
            let mul = module.add_instruction(entry, mul);
            let sub = Instruction::new("r2", Opcode::Subtract, shape).with_operands([s, mul]);
            module.add_instruction(entry, sub)
        } else {
            s
        };
        module.replace_instruction(entry, root, new);
        Ok(true)
    }
}

#[test]
fn check_numerics_allows_rounding_noise_of_a_cancelling_sum() {
    let run_one = |right: bool, mode: CheckMode| {
        let mut m = module(CENTERED_SUM);
        let mut tables = String::new();
        let r = run_checked(
            &mut m,
            vec![Box::new(PlantCenteredSum { right }) as Box<dyn Pass>],
            &PassOptions::default(),
            &CheckConfig {
                mode,
                ..CheckConfig::default()
            },
            &mut |c| tables.push_str(&c.table()),
        );
        eprint!("{tables}");
        (r, tables)
    };
    // The output is noise (~1e-6 where x is N(0,1)): the relative tolerance
    // alone rejects the reassociation; the local check measures it against
    // what the sums add up (issue 31) and accepts it.
    let (r, tables) = run_one(true, CheckMode::Local);
    r.unwrap();
    assert!(
        tables.contains("(the magnitude its sums add up)") && tables.contains(" ok"),
        "{tables}"
    );
    // The whole module's comparison can only call it inconclusive (its
    // rounding noise is not a tolerance); the local proof carries the pass.
    let (r, tables) = run_one(true, CheckMode::Full);
    r.unwrap();
    assert!(
        tables.contains("inconclusive (within rounding noise"),
        "{tables}"
    );
    // Dropping the mean is still caught, where it happened.
    let (r, _) = run_one(false, CheckMode::Local);
    let e = r.unwrap_err();
    assert!(
        matches!(
            &e,
            CheckError::Local {
                pass: "plant-centered-sum-wrong",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn rng_bit_generator_evaluates_xla_bits() {
    // jax.lax.rng_bit_generator on XLA:CPU with state [7, 42] (see
    // src/interp/rng_bits.rs for more shapes and types).
    let text = "HloModule m\n\nENTRY e {\n  p = u64[2]{0} parameter(0)\n  ROOT r = (u64[2]{0}, u32[2,3]{1,0}) rng-bit-generator(p), algorithm=rng_three_fry\n}\n";
    let st = Array::new(PrimitiveType::U64, vec![2], Data::U(vec![7, 42])).unwrap();
    let v = run(text, vec![st.clone()]).unwrap();
    let t = v.tuple_elements().unwrap();
    assert_eq!(data(&t[0]), Data::U(vec![7, 45]));
    assert_eq!(
        data(&t[1]),
        Data::U(vec![
            1840826595, 1787582443, 2332484343, 1626631394, 1661566107, 2268338908
        ])
    );
    let v = run(&text.replace("rng_three_fry", "rng_default"), vec![st]).unwrap();
    let t = v.tuple_elements().unwrap();
    assert_eq!(data(&t[0]), Data::U(vec![7, 44]));
    assert_eq!(
        data(&t[1]),
        Data::U(vec![
            1152053090, 2704721653, 3315919173, 1300955287, 2894365028, 3378036609
        ])
    );
}

#[test]
fn scaled_dot_dequantizes_by_blocks() {
    // lhs [1, 4] with one scale per 2 elements; rhs [4, 1] likewise.
    let text = "HloModule m\n\nENTRY e {\n  a = f32[1,4]{1,0} parameter(0)\n  b = f32[4,1]{1,0} parameter(1)\n  sa = f32[1,2]{1,0} parameter(2)\n  sb = f32[2,1]{1,0} parameter(3)\n  ROOT d = f32[1,1]{1,0} scaled-dot(a, b, sa, sb), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
    let v = run(
        text,
        vec![
            f32s(&[1, 4], &[1., 2., 3., 4.]),
            f32s(&[4, 1], &[1., 1., 1., 1.]),
            f32s(&[1, 2], &[10., 100.]),
            f32s(&[2, 1], &[1., 2.]),
        ],
    )
    .unwrap();
    // (1 + 2) * 10 * 1 + (3 + 4) * 100 * 2.
    assert_eq!(data(&v), Data::F32(vec![1430.]));
    let e = err_of(
        &text
            .replace("sa = f32[1,2]", "sa = f32[1,3]")
            .replace("f32[1,2]{1,0} parameter(2)", "f32[1,3]{1,0} parameter(2)"),
        vec![
            f32s(&[1, 4], &[1., 2., 3., 4.]),
            f32s(&[4, 1], &[1., 1., 1., 1.]),
            f32s(&[1, 3], &[1., 1., 1.]),
            f32s(&[2, 1], &[1., 2.]),
        ],
    );
    assert!(e.contains("does not divide"), "{e}");
}

#[test]
fn complex_reductions_keep_both_parts_and_complex_sorts_are_refused() {
    let text = "HloModule m\n\naddc {\n  a = c64[] parameter(0)\n  b = c64[] parameter(1)\n  ROOT s = c64[] add(a, b)\n}\n\nENTRY e {\n  x = c64[2,2]{1,0} constant({ {(1, 2), (3, -4)}, {(0.5, 0.25), (-1, 1)} })\n  z = c64[] constant((10, 20))\n  ROOT r = c64[2]{0} reduce(x, z), dimensions={1}, to_apply=addc\n}\n";
    let v = run(text, vec![]).unwrap();
    let want: Vec<num_complex::Complex32> = vec![
        num_complex::Complex32::new(14.0, 18.0),
        num_complex::Complex32::new(9.5, 21.25),
    ];
    assert_eq!(data(&v), Data::C64(want));
    let sort = "HloModule m\n\nlt {\n  a = c64[] parameter(0)\n  b = c64[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=LT\n}\n\nENTRY e {\n  x = c64[2]{0} constant({(1, 2), (3, -4)})\n  ROOT s = c64[2]{0} sort(x), dimensions={0}, to_apply=lt\n}\n";
    let e = err_of(sort, vec![]);
    assert!(e.contains("c64 keys is not supported"), "{e}");
}

/// Seeded inputs stay within the range of the narrow integer types.
#[test]
fn random_inputs_fit_narrow_integer_types() {
    for (ty, lo, hi) in [
        ("s1", -1.0, 0.0),
        ("u1", 0.0, 1.0),
        ("s2", -2.0, 1.0),
        ("u2", 0.0, 3.0),
        ("s4", -8.0, 7.0),
        ("u4", 0.0, 15.0),
    ] {
        let text = format!("HloModule m\n\nENTRY e {{\n  ROOT x = {ty}[256] parameter(0)\n}}\n");
        let m = parse_module(&text, "t.hlo").unwrap();
        let inputs = hlo_opt::interp::random::random_inputs(&m, 0).unwrap();
        let values = inputs[0].as_array().unwrap().to_f64_vec();
        assert!(
            values.iter().all(|&v| (lo..=hi).contains(&v)),
            "{ty}: {values:?}"
        );
        // Not all one value, where the type has more than one
        // non-negative value (the inputs are small and non-negative).
        if ty != "s1" {
            assert!(values.iter().any(|&v| v != values[0]), "{ty}: {values:?}");
        }
    }
}

/// `eval --compare` on an output that is what a cancellation left (zero in
/// exact arithmetic, rounding noise in both runs): the noise of one
/// summation order against another's is within the rounding of the
/// values that cancelled, and the table says that bound held (issue 31,
/// item 5). A value that is wrong at that scale still fails.
#[test]
fn eval_compare_judges_a_cancellation_by_what_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, root: &str| {
        let path = dir.path().join(format!("{name}.hlo"));
        std::fs::write(
            &path,
            format!(
                "HloModule {name}\n\nENTRY e {{\n  a = f32[256]{{0}} parameter(0)\n  b = f32[256]{{0}} parameter(1)\n  c = f32[256]{{0}} parameter(2)\n  ab = f32[256]{{0}} add(a, b)\n  bc = f32[256]{{0}} add(b, c)\n  ab_c = f32[256]{{0}} add(ab, c)\n  a_bc = f32[256]{{0}} add(a, bc)\n  {root}\n}}\n"
            ),
        )
        .unwrap();
        path
    };
    let left = write("left", "ROOT r = f32[256]{0} subtract(ab_c, a_bc)");
    let right = write("right", "ROOT r = f32[256]{0} subtract(a_bc, ab_c)");
    let wrong = write("wrong", "ROOT r = f32[256]{0} subtract(ab_c, ab)");
    let want = dir.path().join("want.npz");
    assert!(bin()
        .arg("eval")
        .arg(&left)
        .arg("-o")
        .arg(&want)
        .status()
        .unwrap()
        .success());
    let compare = |path: &Path| {
        let out = bin()
            .arg("eval")
            .arg(path)
            .arg("--compare")
            .arg(&want)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).to_string(),
        )
    };
    let (ok, table) = compare(&right);
    assert!(ok, "{table}");
    assert!(
        table.contains("ok (each err <= rtol*(|want|+max|operand|), max|operand| "),
        "{table}"
    );
    // Without the operands' scale the same rows fail: the noise is past
    // rtol of the outputs' own (tiny) magnitude.
    let want_arrays = hlo_opt::interp::npy::read_outputs(&want).unwrap();
    let right_module = module(&std::fs::read_to_string(&right).unwrap());
    let inputs = hlo_opt::interp::random::random_inputs(&right_module, 0).unwrap();
    let got = hlo_opt::interp::evaluate(&right_module, &inputs)
        .unwrap()
        .leaves();
    assert!(!hlo_opt::interp::compare::compare_arrays(&got[0], &want_arrays[0], 1.0).ok());
    let (ok, table) = compare(&wrong);
    assert!(!ok, "{table}");
    assert!(table.contains("FAIL"), "{table}");
}

/// The Neuron softmax calls on an operand large enough to be split over
/// the cores (past 2^17 elements): each row the same bits as that row
/// evaluated alone (one core), forward and backward, over the last axis
/// and the first.
#[test]
fn neuron_softmax_split_over_cores_computes_each_row_as_alone() {
    let (rows, len) = (512usize, 512usize);
    let x: Vec<f32> = (0..rows * len)
        .map(|i| ((i * 7919 % 1009) as f32 - 504.0) / 61.0)
        .collect();
    let dy: Vec<f32> = (0..rows * len)
        .map(|i| ((i * 104_729 % 997) as f32 - 498.0) / 97.0)
        .collect();
    let call = |dims: &str, target: &str, dim: i64, backward: bool| {
        let operands = if backward { "g, y" } else { "x" };
        let params = if backward {
            format!(
                "  g = f32[{dims}]{{1,0}} parameter(0)\n  y = f32[{dims}]{{1,0}} parameter(1)\n"
            )
        } else {
            format!("  x = f32[{dims}]{{1,0}} parameter(0)\n")
        };
        format!(
            "HloModule m\n\nENTRY e {{\n{params}  ROOT s = f32[{dims}]{{1,0}} custom-call({operands}), custom_call_target=\"{target}\", backend_config={{approx = true, dim = {dim} : i64, mode = \"exact\"}}\n}}\n"
        )
    };
    for backward in [false, true] {
        let target = if backward {
            "AwsNeuronSoftmaxBackward"
        } else {
            "AwsNeuronSoftmax"
        };
        let args = |dims: &[usize], x: &[f32], dy: &[f32]| match backward {
            false => vec![f32s(dims, x)],
            true => vec![f32s(dims, dy), f32s(dims, x)],
        };
        // Over the last axis: rows of the [rows, len] array.
        let whole = data(
            &run(
                &call(&format!("{rows},{len}"), target, -1, backward),
                args(&[rows, len], &x, &dy),
            )
            .unwrap(),
        );
        let Data::F32(whole) = whole else {
            panic!("f32 out")
        };
        for r in [0, 1, rows / 2, rows - 1] {
            let row = |v: &[f32]| v[r * len..(r + 1) * len].to_vec();
            let alone = data(
                &run(
                    &call(&format!("1,{len}"), target, -1, backward),
                    args(&[1, len], &row(&x), &row(&dy)),
                )
                .unwrap(),
            );
            assert_eq!(
                alone,
                Data::F32(whole[r * len..(r + 1) * len].to_vec()),
                "{target}: row {r}"
            );
        }
        // Over the first axis: columns, split by nothing (one outer block).
        let cols = data(
            &run(
                &call(&format!("{rows},{len}"), target, 0, backward),
                args(&[rows, len], &x, &dy),
            )
            .unwrap(),
        );
        let Data::F32(cols) = cols else {
            panic!("f32 out")
        };
        let column = |v: &[f32], c: usize| (0..rows).map(|i| v[i * len + c]).collect::<Vec<f32>>();
        for c in [0, len - 1] {
            let call_col = call(&format!("{rows},1"), target, 0, backward);
            let alone =
                data(&run(&call_col, args(&[rows, 1], &column(&x, c), &column(&dy, c))).unwrap());
            assert_eq!(alone, Data::F32(column(&cols, c)), "{target}: column {c}");
        }
    }
}
