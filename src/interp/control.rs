//! Ops that run computations or pass values through: call, fusion,
//! while, conditional, scan, the async wrappers and copy-start/-done.
//!
//! - `scan(inputs..., inits...)` with `num_carries` inits runs `to_apply`
//!   once per index of dimension `dimensions={d}` of the inputs (from the
//!   end when `is_reverse`), on each input's slice at that index and the
//!   carries; the computation returns (output slices..., new carries...).
//!   The result is (outputs stacked along d..., final carries...), as
//!   XLA's `ScanExpander` defines it.
//! - `async-start` evaluates the wrapped op (the `calls=` computation, or
//!   for the `<op>-start` sugar the op itself) at once and holds
//!   ((operands...), result, context...) with zero contexts;
//!   `async-update` passes it on and `async-done` gives the result.
//! - `copy-start` holds (copy, operand, context 0); `copy-done` gives the
//!   copy.

use super::array::{shape_dims, Array, Data, Value};
use super::shape_ops::{concatenate, reshape, slice};
use super::{err, expect_operands, operand, Interpreter, Result};
use crate::ir::{AttrValue, CompId, Computation, Instruction, Opcode, Shape};

pub fn eval(
    it: &Interpreter,
    comp: &Computation,
    instr: &Instruction,
    ops: &[&Value],
    args: &[Value],
) -> Result<Value> {
    match instr.opcode {
        Opcode::Call => it.call_with(it.called(instr, "to_apply")?, ops),
        Opcode::Fusion => it.call_with(it.called(instr, "calls")?, ops),
        Opcode::While => while_loop(it, instr, ops),
        Opcode::Conditional => conditional(it, instr, ops),
        Opcode::Scan => scan(it, instr, ops),
        Opcode::AsyncStart => async_start(it, comp, instr, ops, args),
        Opcode::AsyncUpdate => {
            expect_operands(instr, ops, 1)?;
            Ok(ops[0].clone())
        }
        Opcode::AsyncDone => {
            expect_operands(instr, ops, 1)?;
            element(ops[0], 1, "async-done")
        }
        Opcode::CopyStart => {
            expect_operands(instr, ops, 1)?;
            let ctx = zero_value(element_shape(&instr.shape, 2)?)?;
            Ok(Value::Tuple(
                vec![ops[0].clone(), ops[0].clone(), ctx].into(),
            ))
        }
        Opcode::CopyDone => {
            expect_operands(instr, ops, 1)?;
            element(ops[0], 0, "copy-done")
        }
        op => Err(err(format!(
            "internal error: {} is not control flow",
            op.name()
        ))),
    }
}

fn element(v: &Value, i: usize, what: &str) -> Result<Value> {
    v.tuple_elements()?
        .get(i)
        .cloned()
        .ok_or_else(|| err(format!("{what} of a tuple without element {i}")))
}

fn element_shape(shape: &Shape, i: usize) -> Result<&Shape> {
    shape
        .tuple_elements()
        .and_then(|t| t.get(i))
        .ok_or_else(|| {
            err(format!(
                "expected a tuple shape with element {i}, got {shape}"
            ))
        })
}

/// Zeros (false, tokens) of `shape`.
pub fn zero_value(shape: &Shape) -> Result<Value> {
    Ok(match shape {
        Shape::Tuple(t) => {
            Value::Tuple(t.iter().map(zero_value).collect::<Result<Vec<_>>>()?.into())
        }
        Shape::Array(a) => {
            let dims = shape_dims(shape)?;
            let n = super::array::element_count(&dims)?;
            Value::array(Array::new(
                a.element_type,
                dims,
                Data::zeros(a.element_type, n)?,
            )?)
        }
        _ => Value::Token,
    })
}

fn while_loop(it: &Interpreter, instr: &Instruction, ops: &[&Value]) -> Result<Value> {
    expect_operands(instr, ops, 1)?;
    let cond = it.called(instr, "condition")?;
    let body = it.called(instr, "body")?;
    let mut state = ops[0].clone();
    let mut n = 0u64;
    loop {
        let c = it.call(cond, std::slice::from_ref(&state))?;
        match &c.as_array()?.data {
            Data::Pred(v) if v.len() == 1 => {
                if !v[0] {
                    return Ok(state);
                }
            }
            _ => return Err(err("while condition did not return pred[]")),
        }
        n += 1;
        it.poll_cancel()?;
        if n > it.options.max_while_iterations {
            return Err(super::limit(format!(
                "while loop ran more than {} iterations",
                it.options.max_while_iterations
            )));
        }
        state = it.call(body, std::slice::from_ref(&state))?;
    }
}

fn conditional(it: &Interpreter, instr: &Instruction, ops: &[&Value]) -> Result<Value> {
    let sel = operand(ops, 0)?;
    let branches: Vec<CompId> = match instr.attr("branch_computations") {
        Some(AttrValue::Comps(cs)) => cs.to_vec(),
        _ => vec![
            it.called(instr, "true_computation")?,
            it.called(instr, "false_computation")?,
        ],
    };
    if branches.is_empty() || ops.len() != branches.len() + 1 {
        return Err(err(format!(
            "conditional with {} branches has {} operands",
            branches.len(),
            ops.len()
        )));
    }
    let b = match &sel.data {
        // pred: true runs the first branch.
        Data::Pred(v) if v.len() == 1 => usize::from(!v[0]),
        _ if sel.len() == 1 => {
            // Out-of-range indices run the last branch.
            let i = sel.index_at(0)?;
            usize::try_from(i)
                .ok()
                .filter(|&i| i < branches.len())
                .unwrap_or(branches.len() - 1)
        }
        _ => return Err(err("conditional selector is not a scalar")),
    };
    it.call(branches[b], std::slice::from_ref(ops[b + 1]))
}

/// `async-start`: the wrapped op's result, evaluated now.
fn async_start(
    it: &Interpreter,
    comp: &Computation,
    instr: &Instruction,
    ops: &[&Value],
    args: &[Value],
) -> Result<Value> {
    let result_shape = element_shape(&instr.shape, 1)?;
    let result = match instr.async_wrapped {
        Some(op) => {
            // `<op>-start` sugar: the attributes are the op's own.
            let mut wrapped = instr.clone();
            wrapped.opcode = op;
            wrapped.async_wrapped = None;
            wrapped.shape = std::sync::Arc::new(result_shape.clone());
            it.eval_instr(comp, &wrapped, ops, args)?
        }
        None => it.call_with(it.called(instr, "calls")?, ops)?,
    };
    let operands = Value::Tuple(ops.iter().map(|v| (*v).clone()).collect());
    let mut parts = vec![operands, result];
    let n = instr.shape.tuple_elements().map_or(0, |t| t.len());
    for i in 2..n {
        parts.push(zero_value(element_shape(&instr.shape, i)?)?);
    }
    Ok(Value::Tuple(parts.into()))
}

/// The slice of `a` at index `i` of dimension `d`, without that dimension.
fn slice_at(a: &Array, d: usize, i: usize) -> Result<Array> {
    let spec: Vec<(i64, i64, i64)> = (0..a.rank())
        .map(|k| {
            if k == d {
                (i as i64, i as i64 + 1, 1)
            } else {
                (0, a.dims[k] as i64, 1)
            }
        })
        .collect();
    let mut dims = a.dims.clone();
    dims.remove(d);
    reshape(&slice(a, &spec)?, &dims)
}

fn scan(it: &Interpreter, instr: &Instruction, ops: &[&Value]) -> Result<Value> {
    let body = it.called(instr, "to_apply")?;
    let carries = super::attrs::int_attr(instr, "num_carries")?
        .and_then(|n| usize::try_from(n).ok())
        .filter(|&n| n <= ops.len())
        .ok_or_else(|| err("scan without a valid num_carries"))?;
    let reverse = super::attrs::bool_attr(instr, "is_reverse")?.unwrap_or(false);
    let inputs: Vec<&Array> = ops[..ops.len() - carries]
        .iter()
        .map(|v| v.as_array().map(|a| &**a))
        .collect::<Result<_>>()?;
    let first = inputs.first().ok_or_else(|| err("scan without inputs"))?;
    let d = instr
        .dimensions()
        .and_then(|d| d.first().copied())
        .ok_or_else(|| err("scan without dimensions"))?;
    let d = super::attrs::dim_index(d, first.rank(), "scan dimension")?;
    let len = first.dims[d];
    if inputs.iter().any(|a| a.rank() <= d || a.dims[d] != len) {
        return Err(err("scan inputs differ along the scan dimension"));
    }
    let result_shapes: Vec<Shape> = match &*instr.shape {
        Shape::Tuple(t) => t.to_vec(),
        s => vec![s.clone()],
    };
    let nout = result_shapes
        .len()
        .checked_sub(carries)
        .ok_or_else(|| err("scan result has fewer elements than carries"))?;
    let mut carry: Vec<Value> = ops[ops.len() - carries..]
        .iter()
        .map(|v| (*v).clone())
        .collect();
    // Each step's output slices, in step order.
    let mut steps: Vec<Vec<Array>> = vec![Vec::with_capacity(len); nout];
    for step in 0..len {
        let i = if reverse { len - 1 - step } else { step };
        let mut call_args = inputs
            .iter()
            .map(|a| slice_at(a, d, i).map(Value::array))
            .collect::<Result<Vec<_>>>()?;
        call_args.extend(carry.iter().cloned());
        let r = it.call(body, &call_args)?;
        let mut results = match (&r, nout + carries) {
            (Value::Tuple(t), _) => t.to_vec(),
            (_, 1) => vec![r.clone()],
            _ => return Err(err("the scan computation did not return a tuple")),
        };
        if results.len() != nout + carries {
            return Err(err(format!(
                "the scan computation returned {} values, {} expected",
                results.len(),
                nout + carries
            )));
        }
        carry = results.split_off(nout);
        for (k, v) in results.into_iter().enumerate() {
            let a = v.as_array()?;
            let mut dims = a.dims.clone();
            dims.insert(d, 1);
            steps[k].push(reshape(a, &dims)?);
        }
    }
    let mut out = Vec::with_capacity(nout + carries);
    for (k, mut s) in steps.into_iter().enumerate() {
        if reverse {
            s.reverse();
        }
        let stacked = if s.is_empty() {
            zero_value(&result_shapes[k])?
        } else {
            let refs: Vec<&Array> = s.iter().collect();
            Value::array(concatenate(&refs, d)?)
        };
        out.push(stacked);
    }
    out.extend(carry);
    Ok(if instr.shape.is_tuple() {
        Value::Tuple(out.into())
    } else {
        out.into_iter()
            .next()
            .ok_or_else(|| err("scan with no result"))?
    })
}
