//! batch-norm-training, -inference and -grad (torch-neuronx lowers layer
//! norm to them), with XLA's definitions (BatchNormExpander), computed in
//! f64 and rounded once per output.

use super::array::{Array, Value};
use super::attrs;
use super::convert::from_f64_vec;
use super::{err, Result};
use crate::ir::{AttrValue, Instruction};
use std::sync::Arc;

fn epsilon(instr: &Instruction) -> Result<f64> {
    match instr.attr("epsilon") {
        Some(AttrValue::Float(f)) => Ok(f64::from(*f.value())),
        _ => Err(err("missing epsilon")),
    }
}

/// Per element, its feature; and the element count per feature.
struct Layout {
    feature: Vec<usize>,
    features: usize,
    per_feature: f64,
}

fn layout(x: &Array, instr: &Instruction) -> Result<Layout> {
    let fi =
        attrs::int_attr(instr, "feature_index")?.ok_or_else(|| err("missing feature_index"))?;
    let f = attrs::dim_index(fi, x.rank(), "feature_index")?;
    let inner: usize = x.dims[f + 1..].iter().product();
    let features = x.dims[f];
    let feature = (0..x.len())
        .map(|i| (i / inner.max(1)) % features.max(1))
        .collect();
    Ok(Layout {
        feature,
        features,
        per_feature: (x.len() / features.max(1)) as f64,
    })
}

fn per_feature(v: &Arc<Array>, l: &Layout, what: &str) -> Result<Vec<f64>> {
    if v.rank() != 1 || v.dims[0] != l.features {
        return Err(err(format!(
            "{what} {} does not have one value per feature ({})",
            v.shape_text(),
            l.features
        )));
    }
    Ok(v.to_f64_vec())
}

fn array(like: &Array, dims: Vec<usize>, v: &[f64]) -> Result<Value> {
    Ok(Value::array(Array::new(
        like.ty,
        dims,
        from_f64_vec(like.ty, v)?,
    )?))
}

fn sums(l: &Layout, f: impl Fn(usize) -> f64) -> Vec<f64> {
    let mut s = vec![0f64; l.features];
    for (i, &k) in l.feature.iter().enumerate() {
        s[k] += f(i);
    }
    s
}

pub fn training(instr: &Instruction, ops: &[&Value]) -> Result<Value> {
    if ops.len() != 3 {
        return Err(err("batch-norm-training takes (operand, scale, offset)"));
    }
    let x = ops[0].as_array()?;
    let l = layout(x, instr)?;
    let eps = epsilon(instr)?;
    let scale = per_feature(ops[1].as_array()?, &l, "scale")?;
    let offset = per_feature(ops[2].as_array()?, &l, "offset")?;
    let xv = x.to_f64_vec();
    let n = l.per_feature;
    let mean: Vec<f64> = sums(&l, |i| xv[i]).iter().map(|s| s / n).collect();
    let var: Vec<f64> = sums(&l, |i| (xv[i] - mean[l.feature[i]]).powi(2))
        .iter()
        .map(|s| s / n)
        .collect();
    let out: Vec<f64> = (0..xv.len())
        .map(|i| {
            let k = l.feature[i];
            (xv[i] - mean[k]) / (var[k] + eps).sqrt() * scale[k] + offset[k]
        })
        .collect();
    Ok(Value::Tuple(
        vec![
            array(x, x.dims.clone(), &out)?,
            array(x, vec![l.features], &mean)?,
            array(x, vec![l.features], &var)?,
        ]
        .into(),
    ))
}

pub fn inference(instr: &Instruction, ops: &[&Value]) -> Result<Value> {
    if ops.len() != 5 {
        return Err(err(
            "batch-norm-inference takes (operand, scale, offset, mean, variance)",
        ));
    }
    let x = ops[0].as_array()?;
    let l = layout(x, instr)?;
    let eps = epsilon(instr)?;
    let p: Vec<Vec<f64>> = ["scale", "offset", "mean", "variance"]
        .iter()
        .enumerate()
        .map(|(j, w)| per_feature(ops[j + 1].as_array()?, &l, w))
        .collect::<Result<_>>()?;
    let xv = x.to_f64_vec();
    let out: Vec<f64> = (0..xv.len())
        .map(|i| {
            let k = l.feature[i];
            (xv[i] - p[2][k]) / (p[3][k] + eps).sqrt() * p[0][k] + p[1][k]
        })
        .collect();
    array(x, x.dims.clone(), &out)
}

pub fn grad(instr: &Instruction, ops: &[&Value]) -> Result<Value> {
    if ops.len() != 5 {
        return Err(err(
            "batch-norm-grad takes (operand, scale, mean, variance, grad_output)",
        ));
    }
    let x = ops[0].as_array()?;
    let g = ops[4].as_array()?;
    if g.dims != x.dims {
        return Err(err(
            "batch-norm-grad: grad_output does not match the operand",
        ));
    }
    let l = layout(x, instr)?;
    let eps = epsilon(instr)?;
    let scale = per_feature(ops[1].as_array()?, &l, "scale")?;
    let mean = per_feature(ops[2].as_array()?, &l, "mean")?;
    let var = per_feature(ops[3].as_array()?, &l, "variance")?;
    let xv = x.to_f64_vec();
    let gv = g.to_f64_vec();
    let rs: Vec<f64> = var.iter().map(|v| 1.0 / (v + eps).sqrt()).collect();
    let xhat = |i: usize| (xv[i] - mean[l.feature[i]]) * rs[l.feature[i]];
    let g_offset = sums(&l, |i| gv[i]);
    let g_scale = sums(&l, |i| gv[i] * xhat(i));
    let n = l.per_feature;
    let g_x: Vec<f64> = (0..xv.len())
        .map(|i| {
            let k = l.feature[i];
            scale[k] * rs[k] / n * (n * gv[i] - g_offset[k] - xhat(i) * g_scale[k])
        })
        .collect();
    Ok(Value::Tuple(
        vec![
            array(x, x.dims.clone(), &g_x)?,
            array(x, vec![l.features], &g_scale)?,
            array(x, vec![l.features], &g_offset)?,
        ]
        .into(),
    ))
}
