//! Shapes and layouts, as XLA's `Shape` and `Layout` print them.

use super::types::PrimitiveType;
use std::fmt::{self, Write};

/// The size XLA uses for an unbounded dynamic dimension (printed `?`).
pub const UNBOUNDED_DIM: i64 = i64::MIN;

/// A dimension of a tile; XLA's "combined" tile dimension prints as `*`.
pub const COMBINED_TILE_DIM: i64 = i64::MIN;

/// The deepest nesting of tuples a shape (or a tuple literal) may have,
/// whichever front reads it: a proto reader must bound the recursion of
/// its input, and a module the text reads must be one its proto can be
/// read back from.
pub const MAX_TUPLE_DEPTH: usize = 64;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    Array(ArrayShape),
    Tuple(Vec<Shape>),
    Token,
    Opaque,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ArrayShape {
    pub element_type: PrimitiveType,
    pub dims: Vec<i64>,
    /// One flag per dimension, `<=N` (bounded) or `?` (unbounded); empty
    /// when every dimension is static (the common case, with no allocation).
    pub dynamic: Vec<bool>,
    pub layout: Option<Layout>,
}

/// A tile: `(8,128)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Tile(pub Vec<i64>);

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Layout {
    pub minor_to_major: Vec<i64>,
    /// Everything after `:`; rare, so kept out of line.
    pub extras: Option<Box<LayoutExtras>>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LayoutExtras {
    /// `D(...)` dimension level types, kept as written.
    pub dim_level_types: Option<Box<str>>,
    pub tiles: Vec<Tile>,
    /// `L(n)`: tail padding alignment in elements.
    pub tail_padding_alignment: Option<i64>,
    /// `#(s32)`-style index/pointer primitive types, kept as written.
    pub index_types: Option<Box<str>>,
    /// `E(n)`: element size in bits.
    pub element_size_bits: Option<i64>,
    /// `S(n)`: memory space.
    pub memory_space: Option<i64>,
    /// Anything after the memory space (split configs, physical shape, ...),
    /// kept exactly as written.
    pub rest: Option<Box<str>>,
}

impl Layout {
    pub fn descending(rank: usize) -> Layout {
        Layout {
            minor_to_major: (0..rank as i64).rev().collect(),
            ..Layout::default()
        }
    }

    /// True when only the minor-to-major list is set.
    pub fn is_plain(&self) -> bool {
        self.extras
            .as_deref()
            .is_none_or(|e| *e == LayoutExtras::default())
    }
}

impl ArrayShape {
    pub fn new(element_type: PrimitiveType, dims: Vec<i64>) -> ArrayShape {
        let rank = dims.len();
        ArrayShape {
            element_type,
            dynamic: Vec::new(),
            dims,
            layout: Some(Layout::descending(rank)),
        }
    }

    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    pub fn is_dynamic(&self, dim: usize) -> bool {
        self.dynamic.get(dim).copied().unwrap_or(false)
    }

    /// The product of the dimension sizes, saturating at the bounds of
    /// `i64` (a parsed shape may say `f32[9223372036854775807,2]`, and an
    /// unbounded dimension is `i64::MIN`), so that it never overflows.
    pub fn element_count(&self) -> i64 {
        self.dims.iter().fold(1i64, |n, &d| n.saturating_mul(d))
    }
}

impl Shape {
    pub fn array(element_type: PrimitiveType, dims: Vec<i64>) -> Shape {
        Shape::Array(ArrayShape::new(element_type, dims))
    }

    pub fn scalar(element_type: PrimitiveType) -> Shape {
        Shape::array(element_type, Vec::new())
    }

    pub fn as_array(&self) -> Option<&ArrayShape> {
        match self {
            Shape::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_array_mut(&mut self) -> Option<&mut ArrayShape> {
        match self {
            Shape::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn tuple_elements(&self) -> Option<&[Shape]> {
        match self {
            Shape::Tuple(e) => Some(e),
            _ => None,
        }
    }

    pub fn is_tuple(&self) -> bool {
        matches!(self, Shape::Tuple(_))
    }

    pub fn element_type(&self) -> PrimitiveType {
        match self {
            Shape::Array(a) => a.element_type,
            Shape::Tuple(_) => PrimitiveType::Tuple,
            Shape::Token => PrimitiveType::Token,
            Shape::Opaque => PrimitiveType::OpaqueType,
        }
    }

    pub fn dims(&self) -> &[i64] {
        match self {
            Shape::Array(a) => &a.dims,
            _ => &[],
        }
    }

    pub fn rank(&self) -> usize {
        self.dims().len()
    }

    /// The subshape at a tuple index path, if it exists.
    pub fn subshape(&self, index: &[i64]) -> Option<&Shape> {
        let mut s = self;
        for &i in index {
            s = s.tuple_elements()?.get(usize::try_from(i).ok()?)?;
        }
        Some(s)
    }

    /// Gives every array without a layout XLA's default (descending) one, as
    /// XLA's parser does for instruction shapes.
    pub fn fill_default_layouts(&mut self) {
        match self {
            Shape::Array(a) if a.layout.is_none() => {
                a.layout = Some(Layout::descending(a.rank()));
            }
            Shape::Tuple(elems) => elems.iter_mut().for_each(Shape::fill_default_layouts),
            _ => {}
        }
    }

    /// Equal ignoring layouts (XLA's `ShapeUtil::Compatible`, roughly).
    pub fn compatible(&self, other: &Shape) -> bool {
        match (self, other) {
            (Shape::Array(a), Shape::Array(b)) => {
                a.element_type == b.element_type
                    && a.dims == b.dims
                    && (0..a.rank()).all(|i| a.is_dynamic(i) == b.is_dynamic(i))
            }
            (Shape::Tuple(a), Shape::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.compatible(y))
            }
            (Shape::Token, Shape::Token) | (Shape::Opaque, Shape::Opaque) => true,
            _ => false,
        }
    }

    /// Number of array leaves (a tuple's leaves, or 1).
    pub fn leaf_count(&self) -> usize {
        match self {
            Shape::Tuple(e) => e.iter().map(Shape::leaf_count).sum(),
            _ => 1,
        }
    }

    /// Writes the shape as HLO text; `with_layout` is false in computation
    /// signatures.
    pub fn write(&self, out: &mut String, with_layout: bool) {
        match self {
            Shape::Array(a) => a.write(out, with_layout),
            Shape::Tuple(elems) => {
                out.push('(');
                for (i, e) in elems.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                        if i % 5 == 0 {
                            let _ = write!(out, "/*index={i}*/");
                        }
                    }
                    e.write(out, with_layout);
                }
                out.push(')');
            }
            Shape::Token => out.push_str("token[]"),
            Shape::Opaque => out.push_str("opaque[]"),
        }
    }

    pub fn to_text(&self, with_layout: bool) -> String {
        let mut s = String::new();
        self.write(&mut s, with_layout);
        s
    }
}

impl ArrayShape {
    fn write(&self, out: &mut String, with_layout: bool) {
        out.push_str(self.element_type.name());
        out.push('[');
        for (i, &d) in self.dims.iter().enumerate() {
            let dynamic = self.is_dynamic(i);
            if i > 0 {
                out.push(',');
            }
            if d == UNBOUNDED_DIM {
                out.push('?');
            } else {
                if dynamic {
                    out.push_str("<=");
                }
                push_int(out, d);
            }
        }
        out.push(']');
        if !with_layout {
            return;
        }
        if let Some(layout) = &self.layout {
            if self.dims.is_empty() && layout.is_plain() && layout.minor_to_major.is_empty() {
                return;
            }
            layout.write(out);
        }
    }
}

impl Layout {
    pub fn write(&self, out: &mut String) {
        out.push('{');
        for (i, &d) in self.minor_to_major.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_int(out, d);
        }
        if let Some(x) = self.extras.as_deref().filter(|_| !self.is_plain()) {
            out.push(':');
            if let Some(d) = &x.dim_level_types {
                out.push_str(d);
            }
            if !x.tiles.is_empty() {
                out.push('T');
                for t in &x.tiles {
                    out.push('(');
                    for (i, &d) in t.0.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        if d == COMBINED_TILE_DIM {
                            out.push('*');
                        } else {
                            push_int(out, d);
                        }
                    }
                    out.push(')');
                }
            }
            if let Some(l) = x.tail_padding_alignment {
                let _ = write!(out, "L({l})");
            }
            if let Some(t) = &x.index_types {
                out.push_str(t);
            }
            if let Some(e) = x.element_size_bits {
                let _ = write!(out, "E({e})");
            }
            if let Some(s) = x.memory_space {
                let _ = write!(out, "S({s})");
            }
            if let Some(r) = &x.rest {
                out.push_str(r);
            }
        }
        out.push('}');
    }
}

/// Appends an integer without going through `fmt` (hot in the printer).
pub(crate) fn push_int(out: &mut String, v: i64) {
    out.push_str(itoa::Buffer::new().format(v));
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text(true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_like_xla() {
        let s = Shape::array(PrimitiveType::F32, vec![64, 512]);
        assert_eq!(s.to_string(), "f32[64,512]{1,0}");
        assert_eq!(s.to_text(false), "f32[64,512]");
        assert_eq!(Shape::scalar(PrimitiveType::Pred).to_string(), "pred[]");
        let t = Shape::Tuple(vec![Shape::scalar(PrimitiveType::F32); 6]);
        assert_eq!(
            t.to_string(),
            "(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[])"
        );
        assert_eq!(push(i64::MIN), "-9223372036854775808");
    }

    fn push(v: i64) -> String {
        let mut s = String::new();
        push_int(&mut s, v);
        s
    }
}
