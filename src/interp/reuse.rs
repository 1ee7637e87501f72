//! Evaluating an instruction in the buffer of an operand whose last use it
//! is: a reshape (or a bitcast, broadcast or transpose that keeps the
//! row-major order) takes the operand's elements as they are, and an
//! elementwise op on floats writes its result over them. The evaluator
//! hands an operand over only when nothing else holds it (its last use in
//! the computation, not the root, not shared with a caller, a tuple or a
//! capture), so no other value can see the change.

use super::array::{element_count, shape_dims, Array, Data, Value};
use super::elementwise::{self, BinOp, UnOp};
use super::intbin::binary_u_in_place;
use super::Result;
use crate::ir::{Computation, Instruction, Opcode, Shape};

/// The operands of `op` whose buffer its result may take, most useful
/// first.
pub(crate) fn candidates(op: Opcode) -> &'static [usize] {
    match op {
        Opcode::Reshape | Opcode::Bitcast | Opcode::Broadcast | Opcode::Transpose => &[0],
        Opcode::Select => &[2, 1],
        _ if UnOp::from_opcode(op).is_some() => &[0],
        _ if BinOp::from_opcode(op).is_some() => &[0, 1],
        _ => &[],
    }
}

/// `instr` evaluated with `owned` as its operand `k` (`others` holds the
/// other operands, `None` at `k`), in `owned`'s buffer; `Err(owned)` when
/// that does not apply here (the caller evaluates it the ordinary way,
/// which also reports what is wrong with it).
pub(crate) fn eval(
    comp: &Computation,
    instr: &Instruction,
    k: usize,
    owned: Array,
    others: &[Option<&Value>],
) -> Result<std::result::Result<Array, Array>> {
    let other = |i: usize| -> Option<&Array> {
        match others.get(i).copied().flatten() {
            Some(Value::Array(a)) => Some(&**a),
            _ => None,
        }
    };
    let op = instr.opcode;
    let result_ty = instr.shape.element_type();
    if owned.ty != result_ty && op != Opcode::Select {
        return Ok(Err(owned));
    }
    let relabel = |owned: Array| -> Result<std::result::Result<Array, Array>> {
        let dims = shape_dims(&instr.shape)?;
        if element_count(&dims)? != owned.len() {
            return Ok(Err(owned));
        }
        Ok(Ok(Array { dims, ..owned }))
    };
    Ok(match op {
        _ if others.len() != expected_operands(op) => Err(owned),
        Opcode::Reshape => return relabel(owned),
        Opcode::Bitcast => {
            let from = &comp.instr(instr.operand(0)).shape;
            if row_major(from) && row_major(&instr.shape) {
                return relabel(owned);
            }
            Err(owned)
        }
        Opcode::Broadcast => {
            let dims = shape_dims(&instr.shape)?;
            let map = instr.dimensions().unwrap_or(&[]);
            // As many elements, the operand's dimensions in order: every
            // added dimension has size 1, so the row-major order stays.
            let in_order = map.len() == owned.rank()
                && map.windows(2).all(|w| w[0] < w[1])
                && map
                    .iter()
                    .zip(&owned.dims)
                    .all(|(&d, &n)| usize::try_from(d).is_ok_and(|d| dims.get(d) == Some(&n)));
            if in_order {
                return relabel(owned);
            }
            Err(owned)
        }
        Opcode::Transpose => {
            let perm = instr.dimensions().unwrap_or(&[]);
            // Moving only dimensions of size 1 keeps the row-major order.
            let moved: Vec<i64> = perm
                .iter()
                .copied()
                .filter(|&p| usize::try_from(p).is_ok_and(|p| owned.dims.get(p) != Some(&1)))
                .collect();
            let valid = perm.len() == owned.rank()
                && perm
                    .iter()
                    .all(|&p| usize::try_from(p).is_ok_and(|p| p < owned.rank()));
            let dims = shape_dims(&instr.shape)?;
            let same_dims = valid
                && dims.len() == perm.len()
                && perm
                    .iter()
                    .zip(&dims)
                    .all(|(&p, &n)| owned.dims[p as usize] == n);
            if same_dims && moved.windows(2).all(|w| w[0] < w[1]) && distinct(perm) {
                return relabel(owned);
            }
            Err(owned)
        }
        Opcode::Select => match (other(0), other(3 - k)) {
            (Some(p), Some(o)) => elementwise::select_into(p, owned, o, k),
            _ => Err(owned),
        },
        _ => {
            if let Some(u) = UnOp::from_opcode(op) {
                elementwise::unary_into(u, owned)
            } else if let (Some(b), Some(o)) = (BinOp::from_opcode(op), other(1 - k)) {
                binary_u_into(b, owned, o, k == 0)
                    .or_else(|owned| elementwise::binary_into(b, owned, o, k == 0))
            } else {
                Err(owned)
            }
        }
    })
}

/// An unsigned binary op written over `owned` (the left operand when
/// `owned_is_left`), as `elementwise::binary` computes it; `Err(owned)`
/// for anything else.
fn binary_u_into(
    op: BinOp,
    mut owned: Array,
    other: &Array,
    owned_is_left: bool,
) -> std::result::Result<Array, Array> {
    if owned.dims != other.dims || owned.ty != other.ty {
        return Err(owned);
    }
    let bits = owned.ty.bit_width();
    let done = match (&mut owned.data, &other.data) {
        (Data::U(x), Data::U(y)) => binary_u_in_place(op, x, y, bits, owned_is_left),
        _ => false,
    };
    if done {
        Ok(owned)
    } else {
        Err(owned)
    }
}

fn expected_operands(op: Opcode) -> usize {
    match op {
        Opcode::Select => 3,
        _ if BinOp::from_opcode(op).is_some() => 2,
        _ => 1,
    }
}

fn distinct(perm: &[i64]) -> bool {
    let mut seen = vec![false; perm.len()];
    perm.iter().all(|&p| {
        usize::try_from(p)
            .ok()
            .and_then(|p| seen.get_mut(p))
            .is_some_and(|s| !std::mem::replace(s, true))
    })
}

/// Whether an array shape's layout is the default (row-major) one, or it
/// has none.
fn row_major(shape: &Shape) -> bool {
    let Some(a) = shape.as_array() else {
        return false;
    };
    match &a.layout {
        None => true,
        Some(l) => {
            let rank = a.dims.len();
            l.minor_to_major.len() != rank
                || l.minor_to_major
                    .iter()
                    .enumerate()
                    .all(|(i, &d)| usize::try_from(d) == Ok(rank - 1 - i))
        }
    }
}
