//! Shapes and layouts from their protos.

use super::err;
use super::messages::*;
use super::ProtoError;
use crate::ir::shape::{push_int, ArrayShape, Layout, LayoutExtras, Shape, Tile, MAX_TUPLE_DEPTH};
use crate::ir::PrimitiveType;

/// A shape from its proto; nesting is limited.
pub(crate) fn shape_from_proto(p: &ShapeProto, depth: usize) -> Result<Shape, ProtoError> {
    if depth > MAX_TUPLE_DEPTH {
        return err("shapes nested too deeply");
    }
    Ok(match p.element_type {
        13 => Shape::Tuple(
            p.tuple_shapes
                .iter()
                .map(|s| shape_from_proto(s, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        17 => Shape::Token,
        14 => Shape::Opaque,
        n => {
            let ty = PrimitiveType::from_number(n)
                .filter(|t| t.is_array_element())
                .ok_or_else(|| ProtoError::new(format!("invalid element type {n}")))?;
            let dynamic = if p.is_dynamic_dimension.iter().any(|&d| d) {
                if p.is_dynamic_dimension.len() != p.dimensions.len() {
                    return err("is_dynamic_dimension and dimensions differ in length");
                }
                p.is_dynamic_dimension.clone()
            } else {
                Vec::new()
            };
            let layout = match &p.layout {
                Some(l) => Some(layout_from_proto(l, p.dimensions.len())?),
                None => None,
            };
            Shape::Array(ArrayShape {
                element_type: ty,
                dims: p.dimensions.clone(),
                dynamic,
                layout,
            })
        }
    })
}

pub(super) fn layout_from_proto(l: &LayoutProto, rank: usize) -> Result<Layout, ProtoError> {
    if !l.minor_to_major.is_empty() && l.minor_to_major.len() != rank {
        return err(format!(
            "a layout of {} dimensions for a shape of rank {rank}",
            l.minor_to_major.len()
        ));
    }
    if l.physical_shape.is_some() {
        // As the text parser refuses it: we keep no sparse arrays.
        return err("Layout has physical shape, but is not for a sparse array");
    }
    let mut x = LayoutExtras::default();
    if !l.dim_level_types.is_empty() {
        x.dim_level_types = Some(dim_level_types_text(l).into());
    }
    x.tiles = l.tiles.iter().map(|t| Tile(t.dimensions.clone())).collect();
    if l.tail_padding_alignment_in_elements > 1 {
        x.tail_padding_alignment = Some(l.tail_padding_alignment_in_elements);
    }
    if l.index_primitive_type != 0 || l.pointer_primitive_type != 0 {
        x.index_types = Some(index_types_text(l).into());
    }
    if l.element_size_in_bits != 0 {
        x.element_size_bits = Some(l.element_size_in_bits);
    }
    if l.memory_space != 0 {
        x.memory_space = Some(l.memory_space);
    }
    let rest = rest_text(l);
    if !rest.is_empty() {
        x.rest = Some(rest.into());
    }
    Ok(Layout {
        minor_to_major: l.minor_to_major.clone(),
        extras: (x != LayoutExtras::default()).then(|| Box::new(x)),
    })
}

/// `D(C+,S~,...)`: each dimension's level type, `+` if not unique, `~` if
/// not ordered.
fn dim_level_types_text(l: &LayoutProto) -> String {
    let mut s = String::from("D(");
    for (i, &d) in l.dim_level_types.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(match d {
            1 => "C",
            2 => "S",
            3 => "H",
            _ => "D",
        });
        if l.dim_unique.get(i) == Some(&false) {
            s.push('+');
        }
        if l.dim_ordered.get(i) == Some(&false) {
            s.push('~');
        }
    }
    s.push(')');
    s
}

/// `#(index type)`, then `*(pointer type)` if it has one.
fn index_types_text(l: &LayoutProto) -> String {
    let name = |n: i32| PrimitiveType::from_number(n).map_or("invalid", |t| t.name());
    let mut s = String::from("#(");
    s.push_str(name(l.index_primitive_type));
    s.push(')');
    if l.pointer_primitive_type != 0 {
        s.push_str("*(");
        s.push_str(name(l.pointer_primitive_type));
        s.push(')');
    }
    s
}

/// The layout's other parts, as the text writes them: split configs
/// `SC(d:i,...)`, metadata prefix `M(n)`.
fn rest_text(l: &LayoutProto) -> String {
    let mut rest = String::new();
    if !l.split_configs.is_empty() {
        rest.push_str("SC");
        for s in &l.split_configs {
            rest.push('(');
            push_int(&mut rest, s.dimension);
            rest.push(':');
            join(&mut rest, &s.split_indices, ",", |t, x| push_int(t, *x));
            rest.push(')');
        }
    }
    if l.dynamic_shape_metadata_prefix_bytes != 0 {
        rest.push_str("M(");
        push_int(&mut rest, l.dynamic_shape_metadata_prefix_bytes);
        rest.push(')');
    }
    rest
}

pub(super) fn join<T>(t: &mut String, items: &[T], sep: &str, mut f: impl FnMut(&mut String, &T)) {
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            t.push_str(sep);
        }
        f(t, x);
    }
}
