//! The interpreter writing results into the buffer of an operand at its
//! last use, building results without a zero fill, and computing f16/bf16
//! elementwise ops element by element: the same values as the plain
//! per-element arithmetic, and no value another instruction (or the
//! caller) still holds is changed.

use half::bf16;
use hlo_opt::interp::array::{Array, Data, Value};
use hlo_opt::interp::evaluate;
use hlo_opt::ir::PrimitiveType;
use hlo_opt::text::parse_module;

/// Past `par::MIN_PARALLEL` (2^17), so the loops run split over threads.
const N: usize = 512 * 512;

fn eval(text: &str, args: &[Value]) -> Vec<Data> {
    let m = parse_module(text, "test.hlo").unwrap_or_else(|e| panic!("{e}"));
    let v = evaluate(&m, args).unwrap_or_else(|e| panic!("{e}"));
    v.leaves().iter().map(|a| a.data.clone()).collect()
}

fn input(n: usize) -> Vec<f32> {
    (0..n).map(|i| ((i % 997) as f32 - 498.0) / 37.0).collect()
}

fn f32_value(dims: &[usize], v: Vec<f32>) -> Value {
    Value::array(Array::new(PrimitiveType::F32, dims.to_vec(), Data::F32(v)).unwrap())
}

#[test]
fn a_value_used_again_or_held_by_the_caller_is_not_overwritten() {
    // `e` is used by `n`, `s` and the root tuple; `p`, last used by `q`,
    // is the caller's.
    let text = "HloModule m\n\nENTRY e {\n  p = f32[512,512]{1,0} parameter(0)\n  e = f32[512,512]{1,0} exponential(p)\n  n = f32[512,512]{1,0} multiply(e, p)\n  s = f32[512,512]{1,0} add(e, n)\n  t = f32[512,512]{1,0} tanh(s)\n  r = f32[262144]{0} reshape(t)\n  q = f32[512,512]{1,0} negate(p)\n  ROOT out = (f32[262144]{0}, f32[512,512]{1,0}, f32[512,512]{1,0}) tuple(r, e, q)\n}\n";
    let x = input(N);
    let arg = f32_value(&[512, 512], x.clone());
    let out = eval(text, std::slice::from_ref(&arg));
    let e: Vec<f32> = x.iter().map(|v| v.exp()).collect();
    let t: Vec<f32> = e
        .iter()
        .zip(&x)
        .map(|(&v, &p)| (v + v * p).tanh())
        .collect();
    let q: Vec<f32> = x.iter().map(|v| -v).collect();
    assert_eq!(out, vec![Data::F32(t), Data::F32(e), Data::F32(q)]);
    // The caller's input is as it was.
    assert_eq!(arg.as_array().unwrap().data, Data::F32(x));
}

#[test]
fn results_in_an_operand_buffer_keep_the_operand_order() {
    // Non-commutative ops with the reusable operand on either side, and a
    // select over either branch's buffer.
    let text = "HloModule m\n\nENTRY e {\n  p = f32[262144]{0} parameter(0)\n  a = f32[262144]{0} exponential(p)\n  b = f32[262144]{0} negate(p)\n  d1 = f32[262144]{0} divide(a, p)\n  c = f32[262144]{0} abs(p)\n  d2 = f32[262144]{0} subtract(p, c)\n  z = f32[] constant(0)\n  zb = f32[262144]{0} broadcast(z), dimensions={}\n  m = pred[262144]{0} compare(p, zb), direction=GT\n  f = f32[262144]{0} sqrt(c)\n  s1 = f32[262144]{0} select(m, b, f)\n  g = f32[262144]{0} floor(p)\n  h = f32[262144]{0} ceil(p)\n  s2 = f32[262144]{0} select(m, g, h)\n  ROOT out = (f32[262144]{0}, f32[262144]{0}, f32[262144]{0}, f32[262144]{0}) tuple(d1, d2, s1, s2)\n}\n";
    let x = input(N);
    let out = eval(text, &[f32_value(&[N], x.clone())]);
    let d1: Vec<f32> = x.iter().map(|v| v.exp() / v).collect();
    let d2: Vec<f32> = x.iter().map(|v| v - v.abs()).collect();
    let s1: Vec<f32> = x
        .iter()
        .map(|&v| if v > 0.0 { -v } else { v.abs().sqrt() })
        .collect();
    let s2: Vec<f32> = x
        .iter()
        .map(|&v| if v > 0.0 { v.floor() } else { v.ceil() })
        .collect();
    assert_eq!(
        out,
        vec![Data::F32(d1), Data::F32(d2), Data::F32(s1), Data::F32(s2)]
    );
}

#[test]
fn reshapes_and_order_keeping_broadcasts_take_the_buffer_as_it_is() {
    let text = "HloModule m\n\nENTRY e {\n  p = f32[4,65536]{1,0} parameter(0)\n  a = f32[4,65536]{1,0} negate(p)\n  r = f32[4,1,65536]{2,1,0} reshape(a)\n  b = f32[1,4,1,65536]{3,2,1,0} broadcast(r), dimensions={1,2,3}\n  t = f32[4,1,1,65536]{3,2,1,0} transpose(b), dimensions={1,0,2,3}\n  c = f32[262144]{0} bitcast(t)\n  ROOT n = f32[262144]{0} add(c, c)\n}\n";
    let x = input(N);
    let out = eval(text, &[f32_value(&[4, 65536], x.clone())]);
    let want: Vec<f32> = x.iter().map(|v| -v + -v).collect();
    assert_eq!(out, vec![Data::F32(want)]);
}

#[test]
fn bf16_elementwise_rounds_after_each_op() {
    let text = "HloModule m\n\nENTRY e {\n  p = bf16[262144]{0} parameter(0)\n  q = bf16[262144]{0} parameter(1)\n  s = bf16[262144]{0} multiply(p, q)\n  e = bf16[262144]{0} exponential(s)\n  d = bf16[262144]{0} subtract(q, e)\n  ROOT out = (bf16[262144]{0}, bf16[262144]{0}) tuple(d, s)\n}\n";
    let x: Vec<bf16> = input(N).into_iter().map(bf16::from_f32).collect();
    let y: Vec<bf16> = input(N)
        .iter()
        .rev()
        .map(|&v| bf16::from_f32(v / 3.0))
        .collect();
    let arg = |v: &[bf16]| {
        Value::array(Array::new(PrimitiveType::Bf16, vec![N], Data::Bf16(v.to_vec())).unwrap())
    };
    let out = eval(text, &[arg(&x), arg(&y)]);
    let s: Vec<bf16> = x
        .iter()
        .zip(&y)
        .map(|(a, b)| bf16::from_f32(a.to_f32() * b.to_f32()))
        .collect();
    let d: Vec<bf16> = s
        .iter()
        .zip(&y)
        .map(|(a, b)| bf16::from_f32(b.to_f32() - bf16::from_f32(a.to_f32().exp()).to_f32()))
        .collect();
    assert_eq!(out, vec![Data::Bf16(d), Data::Bf16(s)]);
}

#[test]
fn exponential_of_masked_scores_is_exactly_libm() {
    // Around the underflow threshold the shortcut for tiny results takes.
    let mut x = vec![
        f32::NEG_INFINITY,
        -3.402_823_5e38,
        -1e9,
        -104.0,
        -103.972_08,
        -103.0,
        -87.0,
        0.0,
        -0.0,
        88.0,
        89.0,
        f32::INFINITY,
        f32::NAN,
    ];
    let (mut up, mut down) = (-104.0f32, -104.0f32);
    for _ in 0..2000 {
        up = up.next_up();
        down = down.next_down();
        x.extend([up, down]);
    }
    let n = x.len();
    let text = format!(
        "HloModule m\n\nENTRY e {{\n  p = f32[{n}]{{0}} parameter(0)\n  ROOT e = f32[{n}]{{0}} exponential(p)\n}}\n"
    );
    let out = eval(&text, &[f32_value(&[n], x.clone())]);
    let Data::F32(got) = &out[0] else {
        panic!("not f32")
    };
    for (a, g) in x.iter().zip(got) {
        assert_eq!(a.exp().to_bits(), g.to_bits(), "exp({a})");
    }
}
