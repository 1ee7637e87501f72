//! Builders for the instructions the legalizers emit, so every pass makes
//! its constants and custom calls the same way XLA's `CreateConstant` /
//! `CreateCustomCall` would print them.

use crate::ir::literal::LiteralData;
use crate::ir::{
    ApiVersion, AttrValue, InstrId, Instruction, Literal, Opcode, Payload, PrimitiveType, Shape,
};
use std::sync::Arc;

/// A constant instruction (named `constant`, made unique when added).
pub fn constant(literal: Literal) -> Instruction {
    let mut i = Instruction::new("", Opcode::Constant, literal.shape.clone());
    i.payload = Payload::Constant(Box::new(literal));
    i
}

/// `s32[] constant(n)`.
pub fn s32_scalar(n: i64) -> Instruction {
    constant(Literal {
        shape: Shape::scalar(PrimitiveType::S32),
        data: LiteralData::Int(vec![n]),
    })
}

/// An `s64[]` literal.
pub fn s64_scalar_literal(n: i64) -> Literal {
    Literal {
        shape: Shape::scalar(PrimitiveType::S64),
        data: LiteralData::Int(vec![n]),
    }
}

/// An `s64[len]` literal of the given values.
pub fn s64_vector_literal(values: Vec<i64>) -> Literal {
    Literal {
        shape: Shape::array(PrimitiveType::S64, vec![values.len() as i64]),
        data: LiteralData::Int(values),
    }
}

/// The longest `s64[n]` index operand a pass makes (2^24 elements, a
/// 128 MiB literal that prints as some 150 MB of text): the index is a
/// constant the input's last dimension sizes, so a shape such as
/// `f32[1099511627776]` must be refused, not allocated. Real softmax and
/// TopK axes (vocabularies, sequence lengths) are far below it.
pub const MAX_INDEX_ELEMENTS: i64 = 1 << 24;

/// Refuses an index operand of `n` elements past [`MAX_INDEX_ELEMENTS`]:
/// the error names the pass, the instruction and the limit.
pub fn check_index_length(
    pass: &'static str,
    instr: &Instruction,
    target: &str,
    n: i64,
) -> Result<(), super::PassError> {
    if (0..=MAX_INDEX_ELEMENTS).contains(&n) {
        return Ok(());
    }
    Err(super::PassError::bad_input(
        pass,
        &instr.name,
        format!(
            "{target}'s last dimension is {n}: the s64[{n}] index operand would pass this \
             tool's limit of {MAX_INDEX_ELEMENTS} elements (2^24) for a constant it makes"
        ),
    ))
}

/// `s64[n] constant({0, 1, ..., n-1})`: the index operand the TopK and
/// softmax kernels take (`n` checked by [`check_index_length`] first).
pub fn s64_iota(n: i64) -> Instruction {
    constant(s64_vector_literal((0..n.max(0)).collect()))
}

/// A tuple constant of the given literals.
pub fn tuple_constant(items: Vec<Literal>) -> Instruction {
    let shape = Shape::Tuple(items.iter().map(|l| l.shape.clone()).collect());
    constant(Literal {
        shape,
        data: LiteralData::Tuple(items),
    })
}

/// Whether `instr` is `s64[n] constant({0, ..., n-1})`.
pub fn is_s64_iota(instr: &Instruction, n: i64) -> bool {
    let Some(lit) = instr.literal() else {
        return false;
    };
    lit.shape.element_type() == PrimitiveType::S64
        && lit.shape.dims() == [n]
        && matches!(&lit.data, LiteralData::Int(v) if v.iter().copied().eq(0..n))
}

/// A custom call as XLA's `CreateCustomCall(shape, operands, target,
/// opaque, api_version)` makes it: attributes in XLA's print order,
/// `api_version` only when not ORIGINAL, `backend_config` only when set.
pub fn custom_call(
    shape: Arc<Shape>,
    operands: impl IntoIterator<Item = InstrId>,
    target: &str,
    backend_config: &str,
    api_version: ApiVersion,
) -> Instruction {
    let mut i = Instruction::new("", Opcode::CustomCall, shape).with_operands(operands);
    i.set_attr("custom_call_target", AttrValue::Str(target.into()));
    if api_version != ApiVersion::Original {
        i.set_attr("api_version", AttrValue::ApiVersion(api_version));
    }
    if !backend_config.is_empty() {
        i.set_generic_attr(
            "backend_config",
            AttrValue::BackendConfig(backend_config.into()),
        );
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iota_is_recognized() {
        let i = s64_iota(4);
        assert!(is_s64_iota(&i, 4));
        assert!(!is_s64_iota(&i, 3));
        assert!(!is_s64_iota(&s32_scalar(0), 1));
    }
}
