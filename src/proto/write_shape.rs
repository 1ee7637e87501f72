//! Shapes and layouts into their protos.

// Messages are `Ext` wrappers (known fields behind `Deref`), which struct
// literals cannot fill: fields are set one by one.
#![allow(clippy::field_reassign_with_default)]

use super::messages::*;
use crate::ir::shape::{ArrayShape, Layout, Shape};

pub(crate) fn shape_to_proto(s: &Shape) -> ShapeProto {
    let mut p = ShapeProto::default();
    match s {
        Shape::Tuple(elems) => {
            p.element_type = 13;
            p.tuple_shapes = elems.iter().map(shape_to_proto).collect();
        }
        Shape::Token => p.element_type = 17,
        Shape::Opaque => p.element_type = 14,
        Shape::Array(a) => array_to_proto(a, &mut p),
    }
    p
}

pub(super) fn array_to_proto(a: &ArrayShape, p: &mut ShapeProto) {
    p.element_type = a.element_type as i32;
    p.dimensions = a.dims.clone();
    p.is_dynamic_dimension = (0..a.rank()).map(|i| a.is_dynamic(i)).collect();
    if let Some(l) = &a.layout {
        p.layout = Some(layout_to_proto(l));
    }
}

pub(super) fn layout_to_proto(l: &Layout) -> LayoutProto {
    let mut p = LayoutProto::default();
    p.minor_to_major = l.minor_to_major.clone();
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
    p
}
