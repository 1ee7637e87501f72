//! Shapes (`f32[2,<=3]{1,0}`, tuples, `token[]`) and their layouts, with
//! the layout's extras (tiles, memory space, element size, ...).

use super::tokens::byte_set;
use super::{PResult, Parser};
use crate::ir::shape::{
    ArrayShape, Layout, Shape, Tile, COMBINED_TILE_DIM, MAX_TUPLE_DEPTH, UNBOUNDED_DIM,
};
use crate::ir::PrimitiveType;
use std::sync::Arc;

/// The bytes that end an instruction's shape text outside brackets: a
/// closing bracket, a blank or a comma.
const SHAPE_ENDS_AT_TOP: [bool; 256] = byte_set(b")]} \t\n\r,");

/// How a byte of a shape text changes the bracket depth.
const SHAPE_DEPTH_CHANGE: [i8; 256] = {
    let mut table = [0i8; 256];
    table[b'(' as usize] = 1;
    table[b'[' as usize] = 1;
    table[b'{' as usize] = 1;
    table[b')' as usize] = -1;
    table[b']' as usize] = -1;
    table[b'}' as usize] = -1;
    table
};

/// Where the shape text at `start` ends: at a blank, a comma or an
/// unmatched closing bracket outside brackets, or the end of `b`.
#[inline]
fn shape_text_end(b: &[u8], start: usize) -> usize {
    let mut end = start;
    let mut depth = 0usize;
    // Table lookups instead of a `match` per byte: the match compiled to
    // a jump table whose mispredictions were half of `interned_shape`.
    while let Some(&c) = b.get(end) {
        if depth == 0 && SHAPE_ENDS_AT_TOP[usize::from(c)] {
            break;
        }
        depth = depth.wrapping_add_signed(isize::from(SHAPE_DEPTH_CHANGE[usize::from(c)]));
        end += 1;
    }
    end
}

impl<'a> Parser<'a> {
    /// An instruction's shape, with default layouts filled in. Modules
    /// repeat a few shapes many times: each distinct text is parsed once.
    pub(super) fn interned_shape(&mut self) -> PResult<Arc<Shape>> {
        self.skip_ws()?;
        let start = self.pos;
        let end = shape_text_end(self.b, start);
        let key = &self.text[start..end];
        if let Some(s) = self.st.shapes.get(key) {
            self.pos = end;
            return Ok(Arc::clone(s));
        }
        // A part keeps its own copy of a shape the module read before: the
        // threads parsing parts would otherwise all count references on
        // the same few shapes, passing their cache lines back and forth.
        if let Some(s) = self.base.and_then(|b| b.shapes.get(key)) {
            let own = Arc::new(Shape::clone(s));
            self.st.shapes.insert(key, Arc::clone(&own));
            self.pos = end;
            return Ok(own);
        }
        let mut shape = self.shape()?;
        shape.fill_default_layouts();
        let shape = Arc::new(shape);
        if self.pos == end {
            self.st.shapes.insert(key, Arc::clone(&shape));
        }
        Ok(shape)
    }

    pub(super) fn shape(&mut self) -> PResult<Shape> {
        self.enter()?;
        let r = self.shape_inner();
        self.leave();
        r
    }

    /// The elements of a tuple shape, after its `(`.
    fn tuple_elements(&mut self) -> PResult<Vec<Shape>> {
        self.items_until(b')', "between tuple elements", Self::shape)
    }

    fn shape_inner(&mut self) -> PResult<Shape> {
        if self.peek()? == Some(b'(') {
            if self.tuple_depth == MAX_TUPLE_DEPTH {
                return self.err(format!(
                    "tuples nested more than {MAX_TUPLE_DEPTH} deep (a proto could not be read back)"
                ));
            }
            self.pos += 1;
            self.tuple_depth += 1;
            let elems = self.tuple_elements();
            self.tuple_depth -= 1;
            return Ok(Shape::Tuple(elems?));
        }
        let word_start = self.pos;
        let word = self.peek_word()?;
        let ty = match word {
            "token" => None,
            "opaque" => None,
            _ => match PrimitiveType::from_name(word) {
                Some(t) => Some(t),
                None => {
                    return self.err_at(
                        word_start,
                        format!("expected primitive type, but sees '{word}'"),
                    )
                }
            },
        };
        self.pos += word.len();
        if self.b.get(self.pos) != Some(&b'[') {
            return self.err("expects '[' to start the dimensions of a shape");
        }
        self.pos += 1;
        let mut dims = Vec::new();
        let mut dynamic = Vec::new();
        if !self.eat(b']')? {
            loop {
                self.skip_ws()?;
                // `dynamic` stays empty (no allocation) until a dynamic
                // dimension is seen, then holds a flag for every dimension.
                let (d, is_dyn) = if self.eat(b'?')? {
                    (UNBOUNDED_DIM, true)
                } else {
                    let is_dyn = self.b.get(self.pos..self.pos + 2) == Some(b"<=");
                    if is_dyn {
                        self.pos += 2;
                    }
                    let d = self.int()?;
                    if d < 0 {
                        return self.err("dimension sizes must be non-negative");
                    }
                    (d, is_dyn)
                };
                if is_dyn && dynamic.is_empty() {
                    dynamic = vec![false; dims.len()];
                }
                dims.push(d);
                if is_dyn || !dynamic.is_empty() {
                    dynamic.push(is_dyn);
                }
                if self.eat(b']')? {
                    break;
                }
                self.expect(b',', "between dimensions")?;
            }
        }
        match (ty, word) {
            (None, "token") => return Ok(Shape::Token),
            (None, _) => return Ok(Shape::Opaque),
            _ => {}
        }
        let element_type = ty.expect("checked above");
        // A layout must follow directly (`f32[2]{0}`), not after a space.
        let layout = if self.b.get(self.pos) == Some(&b'{') {
            Some(self.layout(dims.len())?)
        } else {
            None
        };
        Ok(Shape::Array(ArrayShape {
            element_type,
            dims,
            dynamic,
            layout,
        }))
    }

    fn layout(&mut self, rank: usize) -> PResult<Layout> {
        let start = self.pos;
        self.expect(b'{', "to start a layout")?;
        let mut layout = Layout::default();
        loop {
            match self.peek()? {
                Some(b'}') | Some(b':') => break,
                _ => {
                    layout.minor_to_major.push(self.int()?);
                    if !self.eat(b',')? {
                        break;
                    }
                }
            }
        }
        if self.eat(b':')? {
            self.layout_extras(&mut layout)?;
        }
        self.expect(b'}', "at the end of a layout")?;
        if layout.minor_to_major.len() != rank && !(layout.minor_to_major.is_empty() && rank == 0) {
            return self.err_at(
                start,
                format!(
                    "Dimensions size is {rank}, but minor to major size is {}.",
                    layout.minor_to_major.len()
                ),
            );
        }
        Ok(layout)
    }

    fn paren_group(&mut self) -> PResult<&'a str> {
        let start = self.pos;
        if self.b.get(self.pos) != Some(&b'(') {
            return self.err("expects '('");
        }
        match self.text[self.pos..].find(')') {
            Some(i) => {
                self.pos += i + 1;
                Ok(&self.text[start..self.pos])
            }
            None => self.err("expects ')'"),
        }
    }

    fn layout_extras(&mut self, layout: &mut Layout) -> PResult<()> {
        let layout = layout.extras.get_or_insert_with(Default::default);
        loop {
            self.skip_ws()?;
            let c = match self.b.get(self.pos) {
                Some(&c) => c,
                None => return self.err("unterminated layout"),
            };
            match c {
                b'}' => return Ok(()),
                b'D' => {
                    let start = self.pos;
                    self.pos += 1;
                    let group = self.paren_group()?;
                    for part in group[1..group.len() - 1].split(',') {
                        let part = part.trim();
                        let abbrev = part.trim_end_matches(['+', '~', '#']);
                        if !matches!(abbrev, "D" | "C" | "S" | "H" | "") {
                            return self.err_at(start, "expected a DimLevelType abbreviation");
                        }
                    }
                    layout.dim_level_types = Some(self.text[start..self.pos].into());
                }
                b'T' => {
                    self.pos += 1;
                    while self.b.get(self.pos) == Some(&b'(') {
                        self.pos += 1;
                        let mut dims = Vec::new();
                        loop {
                            if self.eat(b'*')? {
                                dims.push(COMBINED_TILE_DIM);
                            } else {
                                dims.push(self.int()?);
                            }
                            if self.eat(b')')? {
                                break;
                            }
                            self.expect(b',', "between tile dimensions")?;
                        }
                        layout.tiles.push(Tile(dims));
                    }
                }
                b'L' => {
                    self.pos += 1;
                    self.expect(b'(', "after L")?;
                    layout.tail_padding_alignment = Some(self.int()?);
                    self.expect(b')', "after L(n")?;
                }
                b'#' => {
                    let start = self.pos;
                    self.pos += 1;
                    self.paren_group()?;
                    while self.b.get(self.pos) == Some(&b'*') {
                        self.pos += 1;
                        self.paren_group()?;
                    }
                    layout.index_types = Some(self.text[start..self.pos].into());
                }
                b'E' => {
                    self.pos += 1;
                    self.expect(b'(', "after E")?;
                    layout.element_size_bits = Some(self.int()?);
                    self.expect(b')', "after E(n")?;
                }
                b'S' if self.b.get(self.pos + 1) == Some(&b'(') => {
                    self.pos += 1;
                    self.expect(b'(', "after S")?;
                    layout.memory_space = Some(self.int()?);
                    self.expect(b')', "after S(n")?;
                }
                _ => {
                    // Split configs, physical shape, dynamic metadata: kept
                    // as written.
                    let start = self.pos;
                    let mut depth = 0usize;
                    while let Some(&c) = self.b.get(self.pos) {
                        match c {
                            b'(' | b'{' | b'[' => depth += 1,
                            b')' | b']' => depth = depth.saturating_sub(1),
                            b'}' if depth == 0 => break,
                            b'}' => depth -= 1,
                            _ => {}
                        }
                        self.pos += 1;
                    }
                    let rest = &self.text[start..self.pos];
                    if rest.starts_with('P') {
                        return self.err_at(
                            start,
                            "Layout has physical shape, but is not for a sparse array",
                        );
                    }
                    layout.rest = Some(rest.into());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::shape_text_end;

    /// The scan by `match` the tables replaced.
    fn by_match(b: &[u8], start: usize) -> usize {
        let mut end = start;
        let mut depth = 0usize;
        while let Some(&c) = b.get(end) {
            match c {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' if depth == 0 => break,
                b')' | b']' | b'}' => depth -= 1,
                b' ' | b'\t' | b'\n' | b'\r' | b',' if depth == 0 => break,
                _ => {}
            }
            end += 1;
        }
        end
    }

    /// The tables end a shape text where the `match` did, from every start
    /// in texts with tuples, layouts, blanks inside and outside brackets,
    /// unmatched brackets and texts that run to the end.
    #[test]
    fn shape_texts_end_where_the_match_ended_them() {
        let texts = [
            "f32[4,128,256]{2,1,0} add(%a, %b)",
            "(f32[], s32[2]{0}) tuple(%x, %y)",
            "((f32[2]{0}, f32[]), token[]) x",
            "f32[2]{0},f32[3]{0})",
            "bf16[8,<=4]{1,0:T(8,128)(2,1)}\tnegate",
            "f32[2]\n{0}",
            "f32[2]{0}\r\n",
            "f32[4)]{0} x",
            "f32[4]{0}}",
            "(f32[2], f32[3]",
            "u8[",
            "",
            "pred[] ",
        ];
        for t in texts {
            for start in 0..=t.len() {
                assert_eq!(
                    shape_text_end(t.as_bytes(), start),
                    by_match(t.as_bytes(), start),
                    "{t:?} from {start}"
                );
            }
        }
    }
}
