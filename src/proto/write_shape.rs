//! Shapes and layouts into their protos.

// Messages are `Ext` wrappers (known fields behind `Deref`), which struct
// literals cannot fill: fields are set one by one.
#![allow(clippy::field_reassign_with_default)]

use super::messages::*;
use crate::ir::shape::{Layout, Shape};
use prost::Message;

pub(crate) fn shape_to_proto(s: &Shape) -> ShapeProto {
    let mut p = ShapeProto::default();
    shape_into_proto(s, &mut p);
    p
}

/// `s` into `p`, whatever `p` held, reusing its buffers: the writer makes
/// every instruction's shape in the one message it reuses.
pub(super) fn shape_into_proto(s: &Shape, p: &mut ShapeProto) {
    let layout = p.layout.take();
    p.clear();
    match s {
        Shape::Tuple(elems) => {
            p.element_type = 13;
            p.tuple_shapes = elems.iter().map(shape_to_proto).collect();
        }
        Shape::Token => p.element_type = 17,
        Shape::Opaque => p.element_type = 14,
        Shape::Array(a) => {
            p.element_type = a.element_type as i32;
            p.dimensions.extend_from_slice(&a.dims);
            p.is_dynamic_dimension
                .extend((0..a.rank()).map(|i| a.is_dynamic(i)));
            if let Some(l) = &a.layout {
                let mut lp = layout.unwrap_or_default();
                layout_into_proto(l, &mut lp);
                p.layout = Some(lp);
            }
        }
    }
}

fn layout_into_proto(l: &Layout, p: &mut LayoutProto) {
    p.clear();
    p.minor_to_major.extend_from_slice(&l.minor_to_major);
    p.tail_padding_alignment_in_elements = 1;
    if let Some(x) = &l.extras {
        p.tiles = x
            .tiles
            .iter()
            .map(|t| {
                let mut tp = TileProto::default();
                tp.dimensions = t.0.clone();
                tp
            })
            .collect();
        if let Some(n) = x.tail_padding_alignment {
            p.tail_padding_alignment_in_elements = n;
        }
        p.element_size_in_bits = x.element_size_bits.unwrap_or(0);
        p.memory_space = x.memory_space.unwrap_or(0);
    }
}
