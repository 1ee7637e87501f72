//! The result shapes of the common ops against their operands
//! (elementwise, compare, select, tuples, broadcast, reshape, transpose,
//! reduce, call, ...), and layouts of the rank of their shapes.

use super::Operands;
use crate::ir::instruction::AttrValue;
use crate::ir::{CompId, InstrId, Instruction, Module, Opcode, Shape};

fn same_dims(a: &Shape, b: &Shape) -> bool {
    a.dims() == b.dims()
}

/// Shape rules of the common ops.
pub(super) fn check_shape(module: &Module, cid: CompId, id: InstrId) -> Result<(), String> {
    let comp = module.comp(cid);
    let instr = comp.instr(id);
    let ops = Operands { comp, instr };
    check_elementwise_shape(ops)?;
    match instr.opcode {
        Opcode::Compare => check_compare_shape(ops),
        Opcode::Select => check_select_shape(ops),
        Opcode::Tuple => check_tuple_shape(ops),
        Opcode::GetTupleElement => check_get_tuple_element_shape(ops),
        Opcode::Broadcast => check_broadcast_shape(ops),
        Opcode::Reshape => check_reshape_shape(ops),
        // The softmax raise walks through these to the logits, taking the
        // call's operand to have the divide's dimensions. (A missing
        // operand is check_operands_and_attrs' to report.)
        Opcode::Convert if ops.get(0).is_some_and(|o| !same_dims(o, &instr.shape)) => {
            Err("convert result dimensions differ from its operand's".into())
        }
        Opcode::Transpose => check_transpose_shape(ops),
        Opcode::Reduce => check_reduce_shape(ops),
        Opcode::Call => check_call_shape(module, ops),
        Opcode::Parameter if !instr.operands().is_empty() => {
            Err("parameter takes no operands".into())
        }
        Opcode::CustomCall
            if !matches!(instr.attr("custom_call_target"), Some(AttrValue::Str(_))) =>
        {
            Err("custom-call needs custom_call_target".into())
        }
        _ => Ok(()),
    }
}

/// Elementwise ops keep their operands' dimensions.
fn check_elementwise_shape(ops: Operands<'_>) -> Result<(), String> {
    let instr = ops.instr;
    let op = instr.opcode;
    if op.is_elementwise_unary() {
        if instr.operands().len() != 1 {
            return Err(format!("{op} takes one operand"));
        }
        if !same_dims(ops.shape(0)?, &instr.shape) {
            return Err(format!("{op} result dimensions differ from its operand's"));
        }
    } else if op.is_elementwise_binary() {
        if instr.operands().len() != 2 {
            return Err(format!("{op} takes two operands"));
        }
        let (a, b) = (ops.shape(0)?, ops.shape(1)?);
        if !same_dims(a, b) || !same_dims(a, &instr.shape) {
            return Err(format!(
                "{op} operands and result must have the same dimensions: {}, {} -> {}",
                a.to_text(true),
                b.to_text(true),
                instr.shape.to_text(true)
            ));
        }
    }
    Ok(())
}

fn check_compare_shape(ops: Operands<'_>) -> Result<(), String> {
    let shape = &ops.instr.shape;
    let (a, b) = (ops.shape(0)?, ops.shape(1)?);
    if !same_dims(a, b) || !same_dims(a, shape) {
        return Err("compare operands and result must have the same dimensions".into());
    }
    if shape.element_type() != crate::ir::PrimitiveType::Pred {
        return Err("compare must produce pred".into());
    }
    Ok(())
}

fn check_select_shape(ops: Operands<'_>) -> Result<(), String> {
    let (p, t, f) = (ops.shape(0)?, ops.shape(1)?, ops.shape(2)?);
    if !t.compatible(f) || !same_dims(t, &ops.instr.shape) || (p.rank() != 0 && !same_dims(p, t)) {
        return Err("select operands must agree in shape".into());
    }
    Ok(())
}

fn check_tuple_shape(ops: Operands<'_>) -> Result<(), String> {
    let elems = ops
        .instr
        .shape
        .tuple_elements()
        .ok_or("tuple must have a tuple shape")?;
    if elems.len() != ops.instr.operands().len() {
        return Err("tuple shape and operand count differ".into());
    }
    for (i, e) in elems.iter().enumerate() {
        if !e.compatible(ops.shape(i)?) {
            return Err(format!("tuple element {i} does not match its operand"));
        }
    }
    Ok(())
}

fn check_get_tuple_element_shape(ops: Operands<'_>) -> Result<(), String> {
    let idx = ops
        .instr
        .int_attr("index")
        .ok_or("get-tuple-element needs index")?;
    let elems = ops
        .shape(0)?
        .tuple_elements()
        .ok_or("get-tuple-element of a non-tuple")?;
    let e = usize::try_from(idx)
        .ok()
        .and_then(|i| elems.get(i))
        .ok_or("get-tuple-element index out of range")?;
    if !e.compatible(&ops.instr.shape) {
        return Err("get-tuple-element shape does not match the element".into());
    }
    Ok(())
}

fn check_broadcast_shape(ops: Operands<'_>) -> Result<(), String> {
    let instr = ops.instr;
    let o = ops.shape(0)?;
    let dims = instr.dimensions().ok_or("broadcast needs dimensions")?;
    if dims.len() != o.rank() {
        return Err("broadcast dimensions must name every operand dimension".into());
    }
    for (i, &d) in dims.iter().enumerate() {
        let out = usize::try_from(d)
            .ok()
            .and_then(|d| instr.shape.dims().get(d));
        if out != o.dims().get(i) {
            return Err(format!("broadcast dimension {i} does not match the result"));
        }
    }
    Ok(())
}

/// The result is the operand with its dimensions permuted (a permutation
/// that is not one is [`check_transpose_dims`]'s to report).
fn check_transpose_shape(ops: Operands<'_>) -> Result<(), String> {
    let (Some(o), Some(perm)) = (ops.get(0), ops.instr.dimensions()) else {
        return Ok(());
    };
    if !distinct_dims_of(perm, o.rank()) || perm.len() != o.rank() {
        return Ok(());
    }
    let permuted: Option<Vec<i64>> = perm
        .iter()
        .map(|&p| {
            usize::try_from(p)
                .ok()
                .and_then(|p| o.dims().get(p).copied())
        })
        .collect();
    match permuted {
        Some(dims) if dims != ops.instr.shape.dims() => Err(format!(
            "transpose of {} by {perm:?} is {}, not {}",
            o.to_text(true),
            format_dims(&dims),
            ops.instr.shape.to_text(true)
        )),
        _ => Ok(()),
    }
}

/// Each result of a reduce is its input without the reduced dimensions
/// (one array for one input, a tuple of them for several).
fn check_reduce_shape(ops: Operands<'_>) -> Result<(), String> {
    let instr = ops.instr;
    let inputs = instr.operands().len() / 2;
    let (Some(reduced), Some(first), true) = (instr.dimensions(), ops.get(0), inputs > 0) else {
        return Ok(());
    };
    // Dimensions out of range are check_dimension_numbers' to report.
    if !distinct_dims_of(reduced, first.rank()) {
        return Ok(());
    }
    let kept: Vec<i64> = first
        .dims()
        .iter()
        .enumerate()
        .filter(|(d, _)| !reduced.contains(&(*d as i64)))
        .map(|(_, &n)| n)
        .collect();
    let results: Vec<&Shape> = match (inputs, instr.shape.tuple_elements()) {
        (1, None) => vec![&instr.shape],
        (_, Some(elems)) if elems.len() == inputs => elems.iter().collect(),
        _ => {
            return Err(format!(
                "reduce of {inputs} input(s) must return {}",
                if inputs == 1 {
                    "an array"
                } else {
                    "a tuple of one array per input"
                }
            ))
        }
    };
    for (i, result) in results.iter().enumerate() {
        if ops.get(i).is_some_and(|input| !same_dims(input, first)) {
            return Err("reduce inputs must have the same dimensions".into());
        }
        if result.dims() != kept {
            return Err(format!(
                "reduce of {} over dimensions {reduced:?} is {}, not {}",
                first.to_text(true),
                format_dims(&kept),
                result.to_text(true)
            ));
        }
    }
    Ok(())
}

/// Whether `dims` are distinct dimensions of a rank-`rank` array.
fn distinct_dims_of(dims: &[i64], rank: usize) -> bool {
    let mut seen = vec![false; rank];
    dims.iter().all(|&d| {
        usize::try_from(d)
            .ok()
            .and_then(|d| seen.get_mut(d))
            .is_some_and(|s| !std::mem::replace(s, true))
    })
}

fn format_dims(dims: &[i64]) -> String {
    let dims: Vec<String> = dims.iter().map(i64::to_string).collect();
    format!("[{}]", dims.join(","))
}

fn check_reshape_shape(ops: Operands<'_>) -> Result<(), String> {
    let o = ops.shape(0)?;
    if o.as_array().map(|a| a.element_count())
        != ops.instr.shape.as_array().map(|a| a.element_count())
    {
        return Err("reshape changes the element count".into());
    }
    Ok(())
}

/// A call passes its callee's parameters and returns its root's shape.
fn check_call_shape(module: &Module, ops: Operands<'_>) -> Result<(), String> {
    let instr = ops.instr;
    let callee = instr.to_apply().ok_or("call needs to_apply")?;
    let callee = module
        .get_comp(callee)
        .ok_or("call of a missing computation")?;
    let params = callee.parameters();
    if params.len() != instr.operands().len() {
        return Err(format!(
            "call passes {} operands to {} parameters of {}",
            instr.operands().len(),
            params.len(),
            callee.name
        ));
    }
    for (i, p) in params.iter().enumerate() {
        if !callee.instr(*p).shape.compatible(ops.shape(i)?) {
            return Err(format!(
                "call operand {i} does not match parameter {i} of {}",
                callee.name
            ));
        }
    }
    let root = callee.root_opt().and_then(|r| callee.get(r));
    if !root.is_some_and(|r| r.shape.compatible(&instr.shape)) {
        return Err(format!(
            "call result does not match the root of {}",
            callee.name
        ));
    }
    Ok(())
}

/// Every array in a shape has a layout of its own rank, if any, that the
/// text can say: a tile has at least one dimension.
pub(super) fn check_layouts(shape: &Shape) -> Result<(), String> {
    match shape {
        Shape::Array(a) => match &a.layout {
            Some(l) if l.minor_to_major.len() != a.rank() => Err(format!(
                "the layout of {} has {} minor-to-major entries for rank {}",
                shape.to_text(false),
                l.minor_to_major.len(),
                a.rank()
            )),
            Some(l)
                if l.extras
                    .as_ref()
                    .is_some_and(|x| x.tiles.iter().any(|t| t.0.is_empty())) =>
            {
                Err(format!(
                    "the layout of {} has a tile of no dimensions",
                    shape.to_text(false)
                ))
            }
            _ => Ok(()),
        },
        Shape::Tuple(elems) => elems.iter().try_for_each(check_layouts),
        _ => Ok(()),
    }
}

/// The shapes an instruction's attributes hold (`outfeed_shape`,
/// `operand_layout_constraints`) are held to the same layout rule, since
/// they are printed with their layouts too.
pub(super) fn check_attribute_layouts(instr: &Instruction) -> Result<(), String> {
    for attr in instr.attrs.iter() {
        let shapes = match &attr.value {
            AttrValue::Shape(s) => std::slice::from_ref(&**s),
            AttrValue::Shapes(s) => &s[..],
            _ => continue,
        };
        for s in shapes {
            check_layouts(s).map_err(|e| format!("{}: {e}", attr.key.as_str()))?;
        }
    }
    Ok(())
}
