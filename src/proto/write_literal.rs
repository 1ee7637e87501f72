//! Literals into their protos, values in the order of the literal's
//! layout.

// Messages are `Ext` wrappers (known fields behind `Deref`), which struct
// literals cannot fill: fields are set one by one.
#![allow(clippy::field_reassign_with_default)]

use super::messages::*;
use super::read_literal::{gather, physical_positions};
use super::write_shape::shape_to_proto;
use crate::ir::literal::{Literal, LiteralData};
use crate::ir::shape::Shape;

pub(super) fn literal_to_proto(l: &Literal) -> LiteralProto {
    let mut p = LiteralProto::default();
    p.shape = Some(shape_to_proto(&l.shape));
    let ty = l.shape.element_type();
    use crate::ir::PrimitiveType as T;
    // XLA's literals hold their values in the order of their layout; the
    // IR in row-major order.
    let physical = match &l.shape {
        Shape::Array(a) => a
            .layout
            .as_ref()
            .and_then(|layout| physical_positions(a, &layout.minor_to_major))
            .filter(|to| to.len() == l.data.len())
            .map(|to| {
                let mut from = vec![0; to.len()];
                for (i, &p) in to.iter().enumerate() {
                    from[p] = i;
                }
                gather(&l.data, &from)
            }),
        _ => None,
    };
    match physical.as_ref().unwrap_or(&l.data) {
        LiteralData::Pred(v) => p.preds = v.clone(),
        LiteralData::Int(v) => match ty {
            T::S8 => p.s8s = v.iter().map(|&x| x as u8).collect(),
            T::S4 => p.s4s = v.iter().map(|&x| x as u8).collect(),
            T::S2 => p.s2s = v.iter().map(|&x| x as u8).collect(),
            T::S1 => p.s1s = v.iter().map(|&x| x as u8).collect(),
            T::S16 => p.s16s = v.iter().flat_map(|&x| (x as i16).to_le_bytes()).collect(),
            T::S32 => p.s32s = v.iter().map(|&x| x as i32).collect(),
            _ => p.s64s = v.clone(),
        },
        LiteralData::UInt(v) => match ty {
            T::U8 => p.u8s = v.iter().map(|&x| x as u8).collect(),
            T::U4 => p.u4s = v.iter().map(|&x| x as u8).collect(),
            T::U2 => p.u2s = v.iter().map(|&x| x as u8).collect(),
            T::U1 => p.u1s = v.iter().map(|&x| x as u8).collect(),
            T::U16 => p.u16s = v.iter().flat_map(|&x| (x as u16).to_le_bytes()).collect(),
            T::U32 => p.u32s = v.iter().map(|&x| x as u32).collect(),
            _ => p.u64s = v.clone(),
        },
        LiteralData::F16(v) => p.f16s = v.iter().flat_map(|x| x.to_bits().to_le_bytes()).collect(),
        LiteralData::Bf16(v) => {
            p.bf16s = v.iter().flat_map(|x| x.to_bits().to_le_bytes()).collect()
        }
        LiteralData::F32(v) => p.f32s = v.clone(),
        LiteralData::F64(v) => p.f64s = v.clone(),
        LiteralData::C64(v) => p.c64s = v.iter().flat_map(|&(a, b)| [a, b]).collect(),
        LiteralData::C128(v) => p.c128s = v.iter().flat_map(|&(a, b)| [a, b]).collect(),
        LiteralData::MiniFloat(v) => {
            let field = match ty {
                T::F4E2M1FN => &mut p.f4e2m1fns,
                T::F8E3M4 => &mut p.f8e3m4s,
                T::F8E4M3B11FNUZ => &mut p.f8e4m3b11fnuzs,
                T::F8E4M3FN => &mut p.f8e4m3fns,
                T::F8E4M3FNUZ => &mut p.f8e4m3fnuzs,
                T::F8E4M3 => &mut p.f8e4m3s,
                T::F8E5M2FNUZ => &mut p.f8e5m2fnuzs,
                T::F8E5M2 => &mut p.f8e5m2s,
                _ => &mut p.f8e8m0fnus,
            };
            *field = v.clone();
        }
        LiteralData::Tuple(items) => {
            p.tuple_literals = items.iter().map(literal_to_proto).collect()
        }
        LiteralData::Elided | LiteralData::Empty => {}
    }
    p
}
