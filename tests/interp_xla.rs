//! The interpreter against XLA:CPU, op by op: one test per case of
//! `tests/data/interp_xla/` (`<case>.hlo`, its inputs and XLA:CPU's outputs
//! in `<case>.npz`, listed in `index.json`; made by
//! `scripts/gen_interp_refs.py`, whose README says where each case's
//! outputs come from).
//!
//! Floats are compared at `hlo_opt::interp::compare::rtol` (f32 1e-5 of
//! |ref| + max|ref|, f64 1e-10, f16 2e-3, bf16 1e-2; complex part by
//! part), except the cases in `EXACT`, which must match bit for bit (NaN
//! meets any NaN). Integers, pred and indices are always exact.
//!
//! Deviations, each for a stated reason:
//! - `rng_uniform_normal_hlo`: the `rng` op's stream is the backend's
//!   choice, so only shapes, types and ranges are checked (`RANGES`);
//! - elements whose inputs hold an f32 denormal are left out of the c64
//!   cases: XLA:CPU runs with denormals flushed to zero (log of 1e-40 + 1e-40i
//!   is -inf there), the interpreter keeps IEEE denormals;
//! - a reference stored as `[1]` where the module has a scalar is read as
//!   the scalar (an early version of the generator wrote some 0-d arrays as
//!   1-element ones).

use hlo_opt::interp::array::{Array, Data};
use hlo_opt::interp::compare::{compare_arrays, rtol};
use hlo_opt::interp::npy::{read_inputs, read_outputs};
use hlo_opt::interp::{evaluate, Value};
use hlo_opt::ir::PrimitiveType;
use hlo_opt::text::parse_module;
use libtest_mimic::{Arguments, Failed, Trial};
use std::path::{Path, PathBuf};

/// Cases whose every output matches XLA:CPU bit for bit.
const EXACT: &[&str] = &[
    "async_start_done_f32",
    "collective_broadcast_f32",
    "copy_start_done_f32",
    "dynamic_shape_ops_static_f32",
    "conv1d_ncw_pad_stride2_lhs_rhs_dilation_f32",
    "conv1d_nwc_wio_stride2_valid_f32",
    "conv2d_asym_pad_stride_rhs_dilation_f32",
    "conv2d_batch_group_f32",
    "conv2d_depthwise_f32",
    "conv2d_grad_f32",
    "conv2d_grouped_f32",
    "conv2d_grouped_grad_f32",
    "conv2d_nchw_bf16",
    "conv2d_nchw_oihw_same_f32",
    "conv2d_negative_padding_f32",
    "conv2d_nhwc_f16",
    "conv2d_nhwc_hwio_stride_valid_f32",
    "conv2d_odd_dimension_numbers_f32",
    "conv3d_ndhwc_f32",
    "jax_random_threefry",
    "jax_random_unsafe_rbg",
    "maxpool1d_grad_gaps_nan_f32",
    "maxpool2d_grad_overlap_pad_f32",
    "maxpool2d_grad_ties_asym_pad_f32",
    "reduce_precision_f16_bf16",
    "reduce_precision_f32",
    "reduce_precision_f64",
    "rng_bit_generator_lax",
    "select_and_scatter_window_pad_hlo",
    "shifts_s32",
    "shifts_s8",
    "shifts_u16",
    "shifts_u32",
    "shifts_u8",
    "stochastic_convert_hlo",
    "tf_topk_f32",
];

/// Cases compared by range only: (case, output, low, high) with the range
/// [low, high) (high = inf: finite).
const RANGES: &[(&str, usize, f64, f64)] = &[
    ("rng_uniform_normal_hlo", 0, 0.0, 1.0),
    ("rng_uniform_normal_hlo", 1, -3.0, 4.0),
    (
        "rng_uniform_normal_hlo",
        2,
        f64::NEG_INFINITY,
        f64::INFINITY,
    ),
];

fn main() {
    let args = Arguments::from_args();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/interp_xla");
    let index: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("index.json")).expect("interp_xla/index.json"),
    )
    .expect("index.json is JSON");
    let cases = index["cases"].as_object().expect("cases");
    assert!(cases.len() >= 50, "index.json lists {} cases", cases.len());
    let mut trials: Vec<Trial> = cases
        .iter()
        .map(|(name, case)| {
            let group = case["group"].as_str().unwrap_or("").to_string();
            let dir = dir.clone();
            let name = name.clone();
            Trial::test(format!("{group}::{name}"), move || run_case(&dir, &name))
        })
        .collect();
    // Every exact or range-checked case is a case.
    for c in EXACT.iter().chain(RANGES.iter().map(|r| &r.0)) {
        let known = cases.contains_key(*c);
        trials.push(Trial::test(format!("list::{c}"), move || {
            if known {
                Ok(())
            } else {
                Err(format!("{c} is not in index.json").into())
            }
        }));
    }
    libtest_mimic::run(&args, trials).exit();
}

/// A `[1]` array read as a scalar when the module wants one.
fn scalar_if(a: Array, dims: &[usize]) -> Array {
    if dims.is_empty() && a.dims == [1] {
        Array {
            dims: Vec::new(),
            ..a
        }
    } else {
        a
    }
}

fn run_case(dir: &Path, case: &str) -> Result<(), Failed> {
    let hlo: PathBuf = dir.join(format!("{case}.hlo"));
    let npz = dir.join(format!("{case}.npz"));
    let text = std::fs::read_to_string(&hlo).map_err(|e| format!("{}: {e}", hlo.display()))?;
    let module = parse_module(&text, case).map_err(|e| e.to_string())?;
    // Not `verify`: hand-written cases reuse parameter names across
    // computations (`a`, `b` in every comparator), which XLA's parser
    // accepts and hlo-opt's verifier rejects; the interpreter needs
    // neither unique names nor the verifier here.
    let entry = module.comp(module.entry());
    let params: Vec<_> = entry
        .parameters()
        .iter()
        .map(|&p| entry.instr(p).shape.clone())
        .collect();
    let types: Vec<PrimitiveType> = params.iter().map(|s| s.element_type()).collect();
    let inputs: Vec<Array> = read_inputs(&npz, &types)
        .map_err(|e| e.to_string())?
        .into_iter()
        .zip(&params)
        .map(|(a, s)| {
            let dims: Vec<usize> = s.dims().iter().map(|&d| d as usize).collect();
            scalar_if(a, &dims)
        })
        .collect();
    let args: Vec<Value> = inputs.iter().cloned().map(Value::array).collect();
    let got = evaluate(&module, &args)
        .map_err(|e| e.to_string())?
        .leaves();
    let want = read_outputs(&npz).map_err(|e| e.to_string())?;
    if got.len() != want.len() {
        return Err(format!("{} outputs, XLA:CPU gave {}", got.len(), want.len()).into());
    }
    let exact = EXACT.contains(&case);
    let mut failures = Vec::new();
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let w = scalar_if(w, &g.dims);
        if let Some(&(_, _, lo, hi)) = RANGES.iter().find(|r| r.0 == case && r.1 == i) {
            if let Some(msg) = out_of_range(g, &w, lo, hi) {
                failures.push(format!("out{i}: {msg}"));
            }
            continue;
        }
        let (g, w) = drop_denormal_inputs(&inputs, g, &w);
        let d = compare_arrays(&g, &w, if exact { 0.0 } else { 1.0 });
        if !d.ok() {
            failures.push(format!(
                "out{i} ({}, tolerance {:e}): {d}",
                w.shape_text(),
                if exact { 0.0 } else { rtol(w.ty) }
            ));
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n").into())
    }
}

/// `None` when `got` has `want`'s shape and every element is in [lo, hi)
/// (finite, for an infinite range).
fn out_of_range(got: &Array, want: &Array, lo: f64, hi: f64) -> Option<String> {
    if got.ty != want.ty || got.dims != want.dims {
        return Some(format!(
            "got {}, want {}",
            got.shape_text(),
            want.shape_text()
        ));
    }
    let v = got.to_f64_vec();
    let bad = v
        .iter()
        .filter(|&&x| {
            !(x.is_finite() && (x >= lo || lo.is_infinite()) && (x < hi || hi.is_infinite()))
        })
        .count();
    // Draws that all agree would not be random.
    let distinct = v.windows(2).any(|w| w[0] != w[1]);
    match (bad, distinct) {
        (0, true) => None,
        (0, false) => Some("every draw is the same".into()),
        (n, _) => Some(format!("{n} draws outside [{lo}, {hi})")),
    }
}

/// For a c64 elementwise case: `got` and `want` with the elements whose
/// same-position input holds an f32 denormal part set to 0 (XLA:CPU flushes
/// denormals; the interpreter does not).
fn drop_denormal_inputs(inputs: &[Array], got: &Array, want: &Array) -> (Array, Array) {
    let denormal = |x: f32| x != 0.0 && !x.is_normal() && x.is_finite();
    let mut mask = vec![false; got.len()];
    for a in inputs {
        if let Data::C64(v) = &a.data {
            if v.len() == got.len() {
                for (m, c) in mask.iter_mut().zip(v) {
                    *m |= denormal(c.re) || denormal(c.im);
                }
            }
        }
    }
    if !mask.iter().any(|&m| m) {
        return (got.clone(), want.clone());
    }
    let zeroed = |a: &Array| -> Array {
        let mut a = a.clone();
        let idx: Vec<usize> = (0..a.len()).filter(|&i| mask[i]).collect();
        let zeros = Data::zeros(a.ty, idx.len()).expect("zeros of an output type");
        a.data.put(&idx, &zeros).expect("same storage");
        a
    };
    (zeroed(got), zeroed(want))
}
