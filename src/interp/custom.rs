//! Custom calls: the Neuron calls of CONTRACT.md section 13, as the
//! frontends emit them and as the legalization passes leave them, plus
//! XLA:CPU's `TopK` and the identity sharding markers. Every float result
//! is computed in f64 and rounded once to the result type (the model in
//! `corpus/neuron_ref.py`). Any other target is an error.

use super::array::{shape_dims, strides, Array, Data, Value};
use super::convert::{from_f64_vec, to_f64_vec};
use super::dot::{dot, DotDims};
use super::shape_ops::transpose;
use super::sort::{neuron_topk_less, result_k, top_rows, topk_result, xla_topk};
use super::{err, par, EvalError, Interpreter, Result};
use crate::ir::{Instruction, PrimitiveType};
use crate::neuron::config::{
    softmax_axis, BlockScaledDotConfig, ConfigError, Field, MxType, QuantizeMxConfig,
};
use crate::neuron::{decimal_config, dtype_suffix, ACTIVATIONS, MX_BLOCK};
use std::sync::Arc;

pub fn custom_call(it: &Interpreter, instr: &Instruction, ops: &[&Value]) -> Result<Value> {
    let target = instr
        .custom_call_target()
        .ok_or_else(|| err("custom-call without custom_call_target"))?;
    let arr = |i: usize| -> Result<&Arc<Array>> {
        ops.get(i)
            .ok_or_else(|| err(format!("{target}: missing operand {i}")))?
            .as_array()
    };
    let with_target = |e: super::EvalError| super::EvalError {
        message: format!("custom call {target}: {}", e.message),
        ..e
    };
    let r = (|| -> Result<Value> {
        match target {
            "AwsNeuronTransferWithStaticRing" | "Sharding" | "xla.sdy.FuncResultSharding" => {
                if ops.len() != 1 {
                    return Err(err(format!("takes 1 operand, has {}", ops.len())));
                }
                Ok(ops[0].clone())
            }
            "AwsNeuronSoftmax" => softmax(instr, ops, false),
            "AwsNeuronSoftmaxBackward" => softmax(instr, ops, true),
            "AwsNeuronTopK" => neuron_topk(instr, arr(0)?, None),
            "TopK" => xla_topk(it, instr, ops),
            "QuantizeMX" => quantize_mx_call(instr, ops),
            "__op$block_scaled_dot" => block_scaled_dot_call(instr, ops),
            t if t.starts_with("TopK_") => {
                let sfx = &t["TopK_".len()..];
                let x = arr(0)?;
                if ops.len() != 2 {
                    return Err(err(format!(
                        "takes 2 operands (x, iota), has {}",
                        ops.len()
                    )));
                }
                if Some(sfx) != dtype_suffix(x.ty) {
                    return Err(err(format!(
                        "target suffix {sfx} does not match operand type {}",
                        x.ty
                    )));
                }
                neuron_topk(instr, x, Some(arr(1)?))
            }
            t if t.starts_with("QuantizeMX_") => quantize_mx_suffixed_call(t, instr, ops),
            t if t.starts_with("ScaledMatmul_") => scaled_matmul_call(t, instr, ops),
            t => activation(t, instr, ops),
        }
    })();
    r.map_err(with_target)
}

/// `QuantizeMX(x)` with its JSON config.
fn quantize_mx_call(instr: &Instruction, ops: &[&Value]) -> Result<Value> {
    let arr = |i: usize| super::operand(ops, i);
    if ops.len() != 1 {
        return Err(err(format!("takes 1 operand, has {}", ops.len())));
    }
    let cfg = QuantizeMxConfig::read(instr.backend_config()).map_err(config_error)?;
    let dtype = cfg
        .dtype
        .found()
        .ok_or_else(|| err("backend_config needs \"dtype\""))?;
    let elem = mx_type(dtype)?;
    let dim = cfg.dim.or(0).map_err(not_an_integer)?;
    let block = cfg.block_size.or(MX_BLOCK).map_err(not_an_integer)?;
    let method = cfg.scale_method.found().map_or("EMAX", String::as_str);
    if method != "EMAX" {
        return Err(err(format!("scale_method {method} is not implemented")));
    }
    quantize_mx(instr, arr(0)?, elem.element_type(), dim, block)
}

/// `__op$block_scaled_dot(lhs, rhs, lhs_scale, rhs_scale)`.
fn block_scaled_dot_call(instr: &Instruction, ops: &[&Value]) -> Result<Value> {
    let arr = |i: usize| super::operand(ops, i);
    if ops.len() != 4 {
        return Err(err(format!("takes 4 operands, has {}", ops.len())));
    }
    let cfg = BlockScaledDotConfig::read(instr.backend_config()).map_err(config_error)?;
    let list = |field: Field<Vec<i64>>| field.or(Vec::new()).map_err(not_an_integer_list);
    let (l, r) = (arr(0)?, arr(1)?);
    let last = |rank: usize, listed: Vec<i64>| match listed.is_empty() {
        true => vec![rank as i64 - 1],
        false => listed,
    };
    let elem = match cfg
        .element_dtype
        .or(String::new())
        .map_err(not_a_string)?
        .as_str()
    {
        "" => MxType::E5m2,
        dtype => mx_type(dtype)?,
    };
    let dd = DotDims {
        lhs_batch: list(cfg.lhs_batch)?,
        rhs_batch: list(cfg.rhs_batch)?,
        lhs_contract: last(l.rank(), list(cfg.lhs_contracting)?),
        rhs_contract: last(r.rank(), list(cfg.rhs_contracting)?),
    };
    block_scaled_dot(instr, l, r, arr(2)?, arr(3)?, &dd, elem.element_type())
}

/// `QuantizeMX_<in>_<out>(meta, x)`.
fn quantize_mx_suffixed_call(t: &str, instr: &Instruction, ops: &[&Value]) -> Result<Value> {
    let arr = |i: usize| super::operand(ops, i);
    let parts: Vec<&str> = t["QuantizeMX_".len()..].split('_').collect();
    let [inp, out] = parts[..] else {
        return Err(err("expected QuantizeMX_<in>_<out>"));
    };
    if ops.len() != 2 {
        return Err(err(format!(
            "takes 2 operands (meta, x), has {}",
            ops.len()
        )));
    }
    let x = arr(1)?;
    if inp == "bf16" && x.ty != PrimitiveType::Bf16 {
        return Err(err(format!("input suffix bf16 for a {} operand", x.ty)));
    }
    let elem = MxType::from_suffix(out)
        .ok_or_else(|| err(format!("unknown output type {out}")))?
        .element_type();
    let meta = meta_ints(ops[0])?;
    if meta.len() != x.rank() + 3 {
        return Err(err("meta is not (dims, dim, block_size, 0)"));
    }
    let dims: Vec<i64> = x.dims.iter().map(|&d| d as i64).collect();
    if meta[..x.rank()] != dims[..] {
        return Err(err(format!(
            "meta dims {:?} do not match the operand {}",
            &meta[..x.rank()],
            x.shape_text()
        )));
    }
    quantize_mx(instr, x, elem, meta[x.rank()], meta[x.rank() + 1])
}

/// `ScaledMatmul_<a>_<a>_<out>(lhs, rhs, lhs_scale, rhs_scale, meta)`.
fn scaled_matmul_call(t: &str, instr: &Instruction, ops: &[&Value]) -> Result<Value> {
    let arr = |i: usize| super::operand(ops, i);
    let parts: Vec<&str> = t["ScaledMatmul_".len()..].split('_').collect();
    let [a, b, out] = parts[..] else {
        return Err(err("expected ScaledMatmul_<a>_<a>_<out>"));
    };
    let elem = MxType::from_suffix(a)
        .ok_or_else(|| err(format!("unknown element type {a}")))?
        .element_type();
    if b != a {
        return Err(err("lhs and rhs element types differ"));
    }
    let rt = instr.shape.element_type();
    if Some(out) != dtype_suffix(rt) {
        return Err(err(format!("output suffix {out} for a {rt} result")));
    }
    if ops.len() != 5 {
        return Err(err(format!("takes 5 operands, has {}", ops.len())));
    }
    let m = meta_ints(ops[4])?;
    let (l, r) = (arr(0)?, arr(1)?);
    if m.len() != 7 || m[0] != l.rank() as i64 || m[1] != r.rank() as i64 {
        return Err(err(format!("meta {m:?} does not describe the operands")));
    }
    let opt = |v: i64| if v < 0 { vec![] } else { vec![v] };
    let dd = DotDims {
        lhs_batch: opt(m[2]),
        rhs_batch: opt(m[3]),
        lhs_contract: vec![m[4]],
        rhs_contract: vec![m[5]],
    };
    block_scaled_dot(instr, l, r, arr(2)?, arr(3)?, &dd, elem)
}

fn mx_type(dtype: &str) -> Result<MxType> {
    MxType::from_dtype(dtype).ok_or_else(|| err(format!("unknown fp8 dtype {dtype}")))
}

fn config_error(e: ConfigError) -> EvalError {
    match e {
        ConfigError::Empty => err("missing backend_config"),
        ConfigError::InnerNotObject { key, found } => {
            err(format!("{key} is {found}, not an object"))
        }
        ConfigError::NotJson(_) | ConfigError::NotObject => {
            err("backend_config is not a JSON object")
        }
    }
}

fn not_an_integer(found: String) -> EvalError {
    err(format!("{found} is not an integer"))
}

fn not_an_integer_list(found: String) -> EvalError {
    err(format!("{found} is not a list of integers"))
}

fn not_a_string(found: String) -> EvalError {
    err(format!("{found} is not a string"))
}

/// The integers of a meta operand (a tuple of integer arrays, flattened).
fn meta_ints(v: &Value) -> Result<Vec<i64>> {
    let mut out = Vec::new();
    for a in v.leaves() {
        for i in 0..a.len() {
            out.push(a.index_at(i)?);
        }
    }
    Ok(out)
}

/// The axis of a softmax call, in any form its frontends write.
pub(super) fn config_axis(cfg: &str) -> Result<i64> {
    softmax_axis(cfg).ok_or_else(|| {
        err(format!(
            "backend_config {:?} names no softmax axis",
            cfg.trim()
        ))
    })
}

fn norm_axis(axis: i64, rank: usize) -> Result<usize> {
    let r = rank as i64;
    if axis < -r || axis >= r {
        return Err(err(format!("axis {axis} out of range for rank {rank}")));
    }
    Ok(axis.rem_euclid(r.max(1)) as usize)
}

fn result_array_type(instr: &Instruction, like: &Array) -> Result<PrimitiveType> {
    let dims = shape_dims(&instr.shape)?;
    if dims != like.dims {
        return Err(err(format!(
            "result {} does not have the operand's shape {}",
            instr.shape.to_text(false),
            like.shape_text()
        )));
    }
    Ok(instr.shape.element_type())
}

/// A legalized trailing index operand: an integer vector as long as the
/// minor dimension.
fn check_index_operand(idx: &Array, x: &Array) -> Result<()> {
    let n = x.dims.last().copied().unwrap_or(1);
    if !idx.ty.is_integral() || idx.rank() != 1 || idx.dims[0] != n {
        return Err(err(format!(
            "index operand {} is not an integer vector of the minor dimension ({n})",
            idx.shape_text()
        )));
    }
    Ok(())
}

fn softmax(instr: &Instruction, ops: &[&Value], backward: bool) -> Result<Value> {
    let base = if backward { 2 } else { 1 };
    if ops.len() != base && ops.len() != base + 1 {
        return Err(err(format!(
            "takes {base} operands (or {} with the index), has {}",
            base + 1,
            ops.len()
        )));
    }
    let x = ops[0].as_array()?;
    if ops.len() == base + 1 {
        check_index_operand(ops[base].as_array()?, x)?;
    }
    let ty = result_array_type(instr, x)?;
    let axis = norm_axis(config_axis(instr.backend_config())?, x.rank())?;
    let (n, rows) = (x.len(), (x.dims[axis], x.dims[axis + 1..].iter().product()));
    // An f32 result is rounded from f64 straight into its own storage (as
    // `from_f64_vec` would round it).
    let f32_out = ty == PrimitiveType::F32;
    let data = if backward {
        let y = ops[1].as_array()?;
        if y.dims != x.dims {
            return Err(err(format!(
                "dL/dy {} and y {} differ in shape",
                x.shape_text(),
                y.shape_text()
            )));
        }
        match (&x.data, &y.data) {
            (Data::F32(dy), Data::F32(yv)) => {
                let (dy, yv) = (|i| f64::from(dy[i]), |i| f64::from(yv[i]));
                if f32_out {
                    Data::F32(softmax_backward_rows(n, rows, dy, yv, |v| v as f32))
                } else {
                    from_f64_vec(ty, &softmax_backward_rows(n, rows, dy, yv, |v| v))?
                }
            }
            _ => {
                let (dy, yv) = (x.to_f64_vec(), y.to_f64_vec());
                from_f64_vec(
                    ty,
                    &softmax_backward_rows(n, rows, |i| dy[i], |i| yv[i], |v| v),
                )?
            }
        }
    } else {
        match &x.data {
            Data::F32(xv) => {
                let xv = |i| f64::from(xv[i]);
                if f32_out {
                    Data::F32(softmax_rows(n, rows, xv, |v| v as f32))
                } else {
                    from_f64_vec(ty, &softmax_rows(n, rows, xv, |v| v))?
                }
            }
            _ => {
                let xv = x.to_f64_vec();
                from_f64_vec(ty, &softmax_rows(n, rows, |i| xv[i], |v| v))?
            }
        }
    };
    Ok(Value::array(Array::new(ty, x.dims.clone(), data)?))
}

/// The reference softmax in f64 over rows of `len` elements `inner` apart
/// (`x(i)` reads element i of the input, f32 in place), each result
/// rounded by `put`: blocks of whole rows on all cores, each row computed
/// as on one (the same bits).
fn softmax_rows<T: Copy + Default + Send>(
    n: usize,
    (len, inner): (usize, usize),
    x: impl Fn(usize) -> f64 + Sync,
    put: impl Fn(f64) -> T + Sync,
) -> Vec<T> {
    let block = (len * inner).max(1);
    // An exp per element: worth both cores sooner than a plain loop.
    par::collect_chunks(n, block, n >= par::MIN_PARALLEL / 8, |start, out| {
        let (mut e, mut rows) = (vec![0f64; len], vec![T::default(); block]);
        for first in (start..start + out.room()).step_by(block) {
            for i in 0..inner {
                let at = |l: usize| l * inner + i;
                for (l, e) in e.iter_mut().enumerate() {
                    *e = x(first + at(l));
                }
                let m = e.iter().fold(f64::NEG_INFINITY, |a, &b| {
                    if a.is_nan() || b.is_nan() {
                        f64::NAN
                    } else {
                        a.max(b)
                    }
                });
                for e in e.iter_mut() {
                    *e = exp64(*e - m);
                }
                let s: f64 = e.iter().sum();
                for (l, e) in e.iter().enumerate() {
                    rows[at(l)] = put(e / s);
                }
            }
            out.extend_from_slice(&rows);
        }
    })
}

/// The reference softmax gradient in f64, `y * (dy - sum(dy * y))` per
/// row, as [`softmax_rows`].
fn softmax_backward_rows<T: Copy + Default + Send>(
    n: usize,
    (len, inner): (usize, usize),
    dy: impl Fn(usize) -> f64 + Sync,
    y: impl Fn(usize) -> f64 + Sync,
    put: impl Fn(f64) -> T + Sync,
) -> Vec<T> {
    let block = (len * inner).max(1);
    par::collect_chunks(n, block, n >= par::MIN_PARALLEL, |start, out| {
        let mut rows = vec![T::default(); block];
        for first in (start..start + out.room()).step_by(block) {
            for i in 0..inner {
                let at = |l: usize| first + l * inner + i;
                let s: f64 = (0..len).map(|l| dy(at(l)) * y(at(l))).sum();
                for l in 0..len {
                    rows[l * inner + i] = put(y(at(l)) * (dy(at(l)) - s));
                }
            }
            out.extend_from_slice(&rows);
        }
    })
}

/// `x.exp()`, without libm's underflow path (slow, and it sets errno) for
/// the masked elements of a softmax (`-inf` or -3.4e38 less the row's
/// max): glibc's exp gives +0 below -745.14 (exp(-746) is below half the
/// smallest subnormal, so +0 is the rounded value too).
fn exp64(x: f64) -> f64 {
    if x < -746.0 {
        0.0
    } else {
        // Opaque, so that the call stays on this side of the branch (see
        // `elementwise::exp32`).
        std::hint::black_box(x).exp()
    }
}

fn neuron_topk(instr: &Instruction, x: &Array, iota: Option<&Arc<Array>>) -> Result<Value> {
    let k = result_k(&instr.shape)?;
    if iota.is_none() {
        let cfg = instr.backend_config();
        let ck =
            decimal_config(cfg).ok_or_else(|| err(format!("backend_config {cfg:?} is not k")))?;
        if ck != k as i64 {
            return Err(err(format!("k = {ck} but the result has {k} columns")));
        }
    }
    if x.ty.is_complex() || x.ty == PrimitiveType::Pred {
        return Err(err(format!("top-k of {}", x.ty)));
    }
    let v = x.to_f64_vec();
    let (abs, rel) = top_rows(x, k, &mut neuron_topk_less(&v))?;
    let idx: Vec<f64> = match iota {
        None => rel.iter().map(|&r| r as f64).collect(),
        Some(io) => {
            check_index_operand(io, x)?;
            rel.iter()
                .map(|&r| io.index_at(r).map(|v| v as f64))
                .collect::<Result<_>>()?
        }
    };
    topk_result(x, &instr.shape, &abs, &idx)
}

fn activation(target: &str, instr: &Instruction, ops: &[&Value]) -> Result<Value> {
    let (base, sfx) = match target.rsplit_once('_') {
        Some((b, s)) if ACTIVATIONS.contains(&b) && ["f16", "f32", "bf16"].contains(&s) => {
            (b, Some(s))
        }
        _ if ACTIVATIONS.contains(&target) => (target, None),
        _ => {
            return Err(super::unsupported(format!(
                "unknown custom-call target {target:?}: the interpreter does not implement it"
            )))
        }
    };
    let x = ops
        .first()
        .ok_or_else(|| err("missing operand 0"))?
        .as_array()?;
    let ty = result_array_type(instr, x)?;
    if let Some(s) = sfx {
        if Some(s) != dtype_suffix(ty) {
            return Err(err(format!("suffix {s} for a {ty} result")));
        }
    }
    // A second operand: the legalized element count, or (bare backward
    // forms only) an incoming gradient.
    let mut grad = None;
    match ops.len() {
        1 if sfx.is_none() => {}
        2 => {
            let b = ops[1].as_array()?;
            if b.len() == 1 && b.ty.is_integral() && b.dims.is_empty() {
                let n = b.index_at(0)?;
                if n != x.len() as i64 {
                    return Err(err(format!(
                        "count operand is {n}, the operand has {} elements",
                        x.len()
                    )));
                }
            } else if sfx.is_none() && base.ends_with("Backward") && b.dims == x.dims {
                grad = Some(b.to_f64_vec());
            } else {
                return Err(err(format!(
                    "operand 1 ({}) is not the element count",
                    b.shape_text()
                )));
            }
        }
        n => return Err(err(format!("unexpected operand count {n}"))),
    }
    let xv = x.to_f64_vec();
    let f: fn(f64) -> f64 = match base {
        "AwsNeuronErf" => libm::erf,
        "AwsNeuronGelu" => gelu,
        "AwsNeuronGeluApprxTanh" => gelu_tanh,
        "AwsNeuronGeluBackward" => gelu_backward,
        "AwsNeuronSilu" => silu,
        _ => silu_backward,
    };
    let mut out: Vec<f64> = xv.iter().map(|&v| f(v)).collect();
    if let Some(g) = grad {
        out.iter_mut().zip(&g).for_each(|(o, g)| *o *= g);
    }
    Ok(Value::array(Array::new(
        ty,
        x.dims.clone(),
        from_f64_vec(ty, &out)?,
    )?))
}

const SQRT2: f64 = std::f64::consts::SQRT_2;

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn gelu(x: f64) -> f64 {
    if x == f64::NEG_INFINITY {
        return -0.0;
    }
    0.5 * x * libm::erfc(-x / SQRT2)
}

fn gelu_tanh(x: f64) -> f64 {
    if x == f64::NEG_INFINITY {
        return -0.0;
    }
    let u = (2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x);
    x * sigmoid(2.0 * u)
}

fn gelu_backward(x: f64) -> f64 {
    let phi = if x.is_infinite() {
        0.0
    } else {
        x * (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt()
    };
    0.5 * libm::erfc(-x / SQRT2) + phi
}

fn silu(x: f64) -> f64 {
    if x == f64::NEG_INFINITY {
        return -0.0;
    }
    x * sigmoid(x)
}

fn silu_backward(x: f64) -> f64 {
    let t = if x.is_infinite() {
        0.0
    } else {
        x * sigmoid(-x)
    };
    sigmoid(x) * (1.0 + t)
}

/// OCP MX quantization along `dim` (see CONTRACT.md section 13).
fn quantize_mx(
    instr: &Instruction,
    x: &Array,
    elem: PrimitiveType,
    dim: i64,
    block: i64,
) -> Result<Value> {
    let d = norm_axis(dim, x.rank())?;
    let block = usize::try_from(block)
        .ok()
        .filter(|&b| b > 0)
        .ok_or_else(|| err(format!("block size {block}")))?;
    let n = x.dims[d];
    if n % block != 0 || n % 4 != 0 {
        return Err(err(format!(
            "dimension {d} ({n}) is not a multiple of the block size {block} and of 4"
        )));
    }
    let fmt = elem.minifloat().ok_or_else(|| err("not an fp8 type"))?;
    let (emax, fmax) = match elem {
        PrimitiveType::F8E4M3FN => (8, 448.0),
        _ => (15, 57344.0),
    };
    let elems = instr
        .shape
        .tuple_elements()
        .filter(|e| e.len() == 2)
        .ok_or_else(|| err("result is not a (data, scale) tuple"))?;
    // Work with `dim` last.
    let perm: Vec<usize> = (0..x.rank()).filter(|&k| k != d).chain([d]).collect();
    let xt = transpose(x, &perm)?;
    let v = xt.to_f64_vec();
    let nblocks = v.len() / block;
    let mut scales = Vec::with_capacity(nblocks);
    let mut q = vec![0u8; v.len()];
    for (b, chunk) in v.chunks(block).enumerate() {
        let amax = chunk.iter().fold(0.0f64, |a, &y| {
            if a.is_nan() || y.is_nan() {
                f64::NAN
            } else {
                a.max(y.abs())
            }
        });
        let finite = amax.is_finite();
        let e: i64 = if !finite {
            0
        } else if amax == 0.0 {
            -127
        } else {
            (i64::from(ilogb(amax)) - emax).clamp(-127, 127)
        };
        scales.push(if finite { (e + 127) as u8 } else { 0xFF });
        let scale = 2f64.powi(e as i32);
        for (j, &y) in chunk.iter().enumerate() {
            let val = if finite {
                (y / scale).clamp(-fmax, fmax)
            } else {
                f64::NAN
            };
            q[b * block + j] =
                super::convert::f64_to_mini(f64::from(super::convert::f64_to_f32_odd(val)), &fmt);
        }
    }
    // Pack four per u32 along the (now last) dimension.
    let words: Vec<u64> = q
        .chunks(4)
        .map(|c| {
            c.iter()
                .enumerate()
                .fold(0u64, |acc, (j, &b)| acc | (u64::from(b) << (8 * j)))
        })
        .collect();
    let mut pdims = xt.dims.clone();
    let last = pdims.len() - 1;
    pdims[last] = n / 4;
    let mut sdims = xt.dims.clone();
    sdims[last] = n / block;
    let back: Vec<usize> = {
        let mut inv = vec![0; perm.len()];
        for (i, &p) in perm.iter().enumerate() {
            inv[p] = i;
        }
        inv
    };
    let data_ty = elems[0].element_type();
    let scale_ty = elems[1].element_type();
    if data_ty != PrimitiveType::U32 {
        return Err(err(format!("packed data type is {data_ty}, not u32")));
    }
    let packed = transpose(
        &Array::new(PrimitiveType::U32, pdims, Data::U(words))?,
        &back,
    )?;
    let sc = match scale_ty {
        PrimitiveType::F8E8M0FNU => Array::new(scale_ty, sdims, Data::Mini(scales))?,
        PrimitiveType::U8 => Array::new(
            scale_ty,
            sdims,
            Data::U(scales.iter().map(|&s| u64::from(s)).collect()),
        )?,
        t => return Err(err(format!("scale type {t} is not f8e8m0fnu"))),
    };
    let sc = transpose(&sc, &back)?;
    Ok(Value::Tuple(
        vec![Value::array(packed), Value::array(sc)].into(),
    ))
}

fn ilogb(a: f64) -> i32 {
    let bits = a.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32;
    if e == 0 {
        let m = bits & ((1u64 << 52) - 1);
        -1074 + (63 - m.leading_zeros() as i32)
    } else {
        e - 1023
    }
}

/// MX data (u32-packed along `cdim`, or fp8) times its block scales, f64.
fn dequantize(data: &Array, scale: &Array, cdim: usize, elem: PrimitiveType) -> Result<Array> {
    let rank = data.rank();
    let perm: Vec<usize> = (0..rank).filter(|&k| k != cdim).chain([cdim]).collect();
    let dt = transpose(data, &perm)?;
    let (vals, mut dims) = match &dt.data {
        Data::U(words) if data.ty == PrimitiveType::U32 => {
            let m = elem.minifloat().ok_or_else(|| err("bad element type"))?;
            let table = super::convert::mini_table(&m);
            let v: Vec<f64> = words
                .iter()
                .flat_map(|&w| (0..4).map(move |j| ((w >> (8 * j)) & 0xFF) as usize))
                .map(|b| table[b])
                .collect();
            let mut dims = dt.dims.clone();
            let last = dims.len() - 1;
            dims[last] *= 4;
            (v, dims)
        }
        Data::U(_) | Data::S(_) | Data::Pred(_) => {
            return Err(err(format!(
                "MX data of type {} (u32 or a float expected)",
                data.ty
            )))
        }
        _ => (to_f64_vec(&dt.data, dt.ty), dt.dims.clone()),
    };
    let st = transpose(scale, &perm)?;
    let sv = st.to_f64_vec();
    let last = dims.len() - 1;
    let (k, sk) = (dims[last], st.dims.last().copied().unwrap_or(0));
    if st.dims[..last] != dims[..last] || sk == 0 || k % sk != 0 {
        return Err(err(format!(
            "scale {} does not match data {} along dimension {cdim}",
            scale.shape_text(),
            data.shape_text()
        )));
    }
    let blk = k / sk;
    let out: Vec<f64> = vals
        .iter()
        .enumerate()
        .map(|(i, &v)| v * sv[(i / k) * sk + (i % k) / blk])
        .collect();
    let _ = strides(&dims);
    let deq = Array::new(PrimitiveType::F64, dims.clone(), Data::F64(out))?;
    let mut inv = vec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inv[p] = i;
    }
    dims.clear();
    transpose(&deq, &inv)
}

fn block_scaled_dot(
    instr: &Instruction,
    l: &Array,
    r: &Array,
    ls: &Array,
    rs: &Array,
    dd: &DotDims,
    elem: PrimitiveType,
) -> Result<Value> {
    if dd.lhs_contract.len() != 1 || dd.rhs_contract.len() != 1 {
        return Err(err("exactly one contracting dimension per side expected"));
    }
    let lc = super::attrs::dim_index(dd.lhs_contract[0], l.rank(), "lhs contracting dimension")?;
    let rc = super::attrs::dim_index(dd.rhs_contract[0], r.rank(), "rhs contracting dimension")?;
    let lq = dequantize(l, ls, lc, elem)?;
    let rq = dequantize(r, rs, rc, elem)?;
    let out_ty = instr.shape.element_type();
    Ok(Value::array(dot(&lq, &rq, dd, out_ty)?))
}

#[cfg(test)]
mod tests {
    use super::exp64;

    #[test]
    fn exp64_is_libm_exp_bit_for_bit_around_underflow() {
        let mut x = -800.0f64;
        while x < -700.0 {
            assert_eq!(exp64(x).to_bits(), x.exp().to_bits(), "exp({x})");
            x += 0.001;
        }
        for x in [
            f64::NEG_INFINITY,
            -3.4e38,
            -746.0,
            -745.5,
            -745.13,
            0.0,
            -0.0,
            1.0,
        ] {
            assert_eq!(exp64(x).to_bits(), x.exp().to_bits(), "exp({x})");
        }
        assert!(exp64(f64::NAN).is_nan());
    }
}
