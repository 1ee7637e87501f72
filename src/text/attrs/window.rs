//! Windows (`size=3x3 stride=2x2 pad=1_1x1_1`), padding configurations
//! (`0_0x1_1`), slices (`{[0:2:1], [1:4]}`) and convolution dimension
//! labels (`b01f_01io->b01f`): read and printed.

use super::{join, push_int, Cursor, PResult};
use crate::ir::attrs::*;

fn nums(s: &str, sep: char) -> PResult<Vec<i64>> {
    s.split(sep)
        .map(|x| x.parse::<i64>().map_err(|_| format!("bad number {x}")))
        .collect()
}

/// `{size=3x3 stride=2x2 pad=0_1x0_1 lhs_dilate=.. rhs_dilate=.. rhs_reversal=..}`
pub(super) fn window(v: &str) -> PResult<Window> {
    let inner = v
        .strip_prefix('{')
        .and_then(|s| s.strip_suffix('}'))
        .ok_or("expects {...}")?;
    let mut w = Window::default();
    for field in inner.split_whitespace() {
        let (k, val) = field.split_once('=').ok_or("expects key=value")?;
        let parts: Vec<&str> = val.split('x').collect();
        if w.dims.is_empty() {
            w.dims = vec![WindowDim::default(); parts.len()];
        }
        if parts.len() != w.dims.len() {
            return Err("window fields of different ranks".into());
        }
        for (d, p) in w.dims.iter_mut().zip(parts) {
            let n = nums(p, '_')?;
            let first = *n.first().ok_or("bad window field")?;
            match k {
                "size" => d.size = first,
                "stride" => d.stride = first,
                "lhs_dilate" => d.base_dilation = first,
                "rhs_dilate" => d.window_dilation = first,
                "rhs_reversal" => d.reversal = first == 1,
                "pad" => {
                    d.pad_low = first;
                    d.pad_high = *n.get(1).ok_or("bad pad")?;
                }
                _ => return Err(format!("unknown window field {k}")),
            }
        }
    }
    Ok(w)
}

/// `lo_hi[_interior]x...`
pub(super) fn padding(v: &str) -> PResult<Vec<PaddingDim>> {
    if v.is_empty() {
        return Ok(Vec::new());
    }
    v.split('x')
        .map(|dim| {
            let n = nums(dim, '_')?;
            match n[..] {
                [low, high] => Ok(PaddingDim {
                    low,
                    high,
                    interior: 0,
                }),
                [low, high, interior] => Ok(PaddingDim {
                    low,
                    high,
                    interior,
                }),
                _ => Err(format!("bad padding {dim}")),
            }
        })
        .collect()
}

/// `{[0:8], [0:16:2]}`
pub(super) fn slice(c: &mut Cursor<'_>) -> PResult<Vec<SliceDim>> {
    c.list("{", "}", |c| {
        c.expect("[")?;
        let start = c.int()?;
        c.expect(":")?;
        let limit = c.int()?;
        let stride = if c.eat(":") { c.int()? } else { 1 };
        c.expect("]")?;
        Ok(SliceDim {
            start,
            limit,
            stride,
        })
    })
}

/// `b01f_01io->b01f`: the letters name the batch and feature dimensions
/// (input and output feature for the kernel), the digits the spatial ones.
pub(super) fn dim_labels(v: &str) -> PResult<ConvDims> {
    fn side(s: &str, names: [char; 2]) -> PResult<(i64, i64, Vec<i64>)> {
        let mut named = [None, None];
        let digits = s.chars().filter(char::is_ascii_digit).count();
        let mut spatial: Vec<Option<i64>> = vec![None; digits];
        for (pos, ch) in s.chars().enumerate() {
            let pos = pos as i64;
            if let Some(k) = names.iter().position(|&n| n == ch) {
                named[k] = Some(pos);
            } else if let Some(slot) = ch.to_digit(10).and_then(|d| spatial.get_mut(d as usize)) {
                *slot = Some(pos);
            } else if ch != '?' {
                return Err(format!("unexpected dimension label {ch} in {s}"));
            }
        }
        let missing = || format!("dimension labels {s} are incomplete");
        Ok((
            named[0].ok_or_else(missing)?,
            named[1].ok_or_else(missing)?,
            spatial
                .into_iter()
                .map(|d| d.ok_or_else(missing))
                .collect::<PResult<_>>()?,
        ))
    }
    let (lhs, rest) = v.split_once('_').ok_or("expects lhs_rhs->out")?;
    let (rhs, out) = rest.split_once("->").ok_or("expects lhs_rhs->out")?;
    let (input_batch, input_feature, input_spatial) = side(lhs, ['b', 'f'])?;
    let (kernel_input_feature, kernel_output_feature, kernel_spatial) = side(rhs, ['i', 'o'])?;
    let (output_batch, output_feature, output_spatial) = side(out, ['b', 'f'])?;
    Ok(ConvDims {
        input_batch,
        input_feature,
        input_spatial,
        kernel_input_feature,
        kernel_output_feature,
        kernel_spatial,
        output_batch,
        output_feature,
        output_spatial,
    })
}

pub(super) fn window_text(t: &mut String, w: &Window) {
    t.push('{');
    let dims = &w.dims;
    let mut first = true;
    let mut field =
        |t: &mut String, name: &str, cond: bool, f: &dyn Fn(&mut String, &WindowDim)| {
            if !cond {
                return;
            }
            if !first {
                t.push(' ');
            }
            first = false;
            t.push_str(name);
            t.push('=');
            join(t, dims, "x", f);
        };
    field(t, "size", true, &|t, d| push_int(t, d.size));
    field(t, "stride", dims.iter().any(|d| d.stride != 1), &|t, d| {
        push_int(t, d.stride)
    });
    field(
        t,
        "pad",
        dims.iter().any(|d| d.pad_low != 0 || d.pad_high != 0),
        &|t, d| {
            push_int(t, d.pad_low);
            t.push('_');
            push_int(t, d.pad_high);
        },
    );
    field(
        t,
        "lhs_dilate",
        dims.iter().any(|d| d.base_dilation != 1),
        &|t, d| push_int(t, d.base_dilation),
    );
    field(
        t,
        "rhs_dilate",
        dims.iter().any(|d| d.window_dilation != 1),
        &|t, d| push_int(t, d.window_dilation),
    );
    field(
        t,
        "rhs_reversal",
        dims.iter().any(|d| d.reversal),
        &|t, d| t.push(if d.reversal { '1' } else { '0' }),
    );
    t.push('}');
}

pub(super) fn padding_text(p: &[PaddingDim], t: &mut String) {
    let interior = p.iter().any(|d| d.interior != 0);
    join(t, p, "x", |t, d| {
        push_int(t, d.low);
        t.push('_');
        push_int(t, d.high);
        if interior {
            t.push('_');
            push_int(t, d.interior);
        }
    });
}

/// The strides are left out only when all are 1.
pub(super) fn slice_text(s: &[SliceDim], t: &mut String) {
    let strides = s.iter().any(|d| d.stride != 1);
    t.push('{');
    join(t, s, ", ", |t, d| {
        t.push('[');
        push_int(t, d.start);
        t.push(':');
        push_int(t, d.limit);
        if strides {
            t.push(':');
            push_int(t, d.stride);
        }
        t.push(']');
    });
    t.push('}');
}

pub(super) fn dim_labels_text(t: &mut String, d: &ConvDims) {
    /// As many labels as the highest dimension named needs, `?` for those
    /// named by none (XLA's `ConvolutionDimensionNumbersToString`).
    fn side(t: &mut String, named: &[(i64, char)], spatial: &[i64]) {
        let highest = named
            .iter()
            .map(|x| x.0)
            .chain(spatial.iter().copied())
            .max()
            .unwrap_or(0);
        // Malformed numbers are not worth a huge line.
        let rank = usize::try_from(highest.saturating_add(1))
            .unwrap_or(0)
            .min(spatial.len() + 2 + 64);
        let mut chars = vec!['?'; rank];
        for &(i, c) in named {
            if let Some(x) = usize::try_from(i).ok().and_then(|i| chars.get_mut(i)) {
                *x = c;
            }
        }
        for (n, &i) in spatial.iter().enumerate() {
            if let Some(x) = usize::try_from(i).ok().and_then(|i| chars.get_mut(i)) {
                *x = char::from_digit(n as u32, 10).unwrap_or('?');
            }
        }
        t.extend(chars);
    }
    side(
        t,
        &[(d.input_batch, 'b'), (d.input_feature, 'f')],
        &d.input_spatial,
    );
    t.push('_');
    side(
        t,
        &[
            (d.kernel_input_feature, 'i'),
            (d.kernel_output_feature, 'o'),
        ],
        &d.kernel_spatial,
    );
    t.push_str("->");
    side(
        t,
        &[(d.output_batch, 'b'), (d.output_feature, 'f')],
        &d.output_spatial,
    );
}
