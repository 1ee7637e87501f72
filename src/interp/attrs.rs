//! Reading the attributes the IR keeps as text (`slice=`, `window=`,
//! `padding=`, gather/scatter and dot dimension numbers, ...).

use super::{err, Result};
use crate::ir::{AttrValue, Instruction};

fn raw<'a>(instr: &'a Instruction, key: &str) -> Option<&'a str> {
    match instr.attr(key)? {
        AttrValue::Raw(s) => Some(s),
        AttrValue::Str(s) | AttrValue::BackendConfig(s) => Some(s),
        _ => None,
    }
}

/// `{1,2}` (or a typed list); `None` when absent.
pub fn int_list_opt(instr: &Instruction, key: &str) -> Result<Option<Vec<i64>>> {
    match instr.attr(key) {
        None => Ok(None),
        Some(AttrValue::Ints(v)) => Ok(Some(v.to_vec())),
        Some(AttrValue::Int(v)) => Ok(Some(vec![*v])),
        Some(_) => {
            let s = raw(instr, key).unwrap_or("");
            parse_int_list(s)
                .map(Some)
                .ok_or_else(|| err(format!("cannot read {key}={s} as a list of integers")))
        }
    }
}

/// A list attribute that defaults to empty.
pub fn int_list(instr: &Instruction, key: &str) -> Result<Vec<i64>> {
    Ok(int_list_opt(instr, key)?.unwrap_or_default())
}

/// A list attribute that must be present.
pub fn int_list_req(instr: &Instruction, key: &str) -> Result<Vec<i64>> {
    int_list_opt(instr, key)?.ok_or_else(|| err(format!("missing attribute {key}")))
}

pub fn parse_int_list(s: &str) -> Option<Vec<i64>> {
    let s = s.trim();
    let inner = s.strip_prefix('{')?.strip_suffix('}')?.trim();
    if inner.is_empty() {
        return Some(Vec::new());
    }
    inner
        .split(',')
        .map(|t| t.trim().parse::<i64>().ok())
        .collect()
}

/// An integer attribute (`k=5`, `index=1`).
pub fn int_attr(instr: &Instruction, key: &str) -> Result<Option<i64>> {
    match instr.attr(key) {
        None => Ok(None),
        Some(AttrValue::Int(v)) => Ok(Some(*v)),
        Some(_) => {
            let s = raw(instr, key).unwrap_or("");
            s.trim()
                .parse::<i64>()
                .map(Some)
                .map_err(|_| err(format!("cannot read {key}={s} as an integer")))
        }
    }
}

pub fn bool_attr(instr: &Instruction, key: &str) -> Result<Option<bool>> {
    match raw(instr, key).map(str::trim) {
        None => Ok(None),
        Some("true") => Ok(Some(true)),
        Some("false") => Ok(Some(false)),
        Some(s) => Err(err(format!("cannot read {key}={s} as a boolean"))),
    }
}

/// `slice={[0:8], [0:16:2]}` -> (start, limit, stride) per dimension.
pub fn slice_attr(instr: &Instruction) -> Result<Vec<(i64, i64, i64)>> {
    let s = raw(instr, "slice").ok_or_else(|| err("missing attribute slice"))?;
    let bad = || err(format!("cannot read slice={s}"));
    let inner = s
        .trim()
        .strip_prefix('{')
        .and_then(|x| x.strip_suffix('}'))
        .ok_or_else(bad)?;
    let mut out = Vec::new();
    for part in inner.split(']') {
        let part = part.trim().trim_start_matches(',').trim();
        if part.is_empty() {
            continue;
        }
        let body = part.strip_prefix('[').ok_or_else(bad)?;
        let nums: Vec<i64> = body
            .split(':')
            .map(|t| t.trim().parse::<i64>().map_err(|_| bad()))
            .collect::<Result<_>>()?;
        match nums[..] {
            [a, b] => out.push((a, b, 1)),
            [a, b, c] => out.push((a, b, c)),
            _ => return Err(bad()),
        }
    }
    Ok(out)
}

/// `padding=0_0x1_2_1` -> (low, high, interior) per dimension.
pub fn padding_attr(instr: &Instruction) -> Result<Vec<(i64, i64, i64)>> {
    let s = raw(instr, "padding").ok_or_else(|| err("missing attribute padding"))?;
    parse_padding(s).ok_or_else(|| err(format!("cannot read padding={s}")))
}

fn parse_padding(s: &str) -> Option<Vec<(i64, i64, i64)>> {
    let s = s.trim();
    if s.is_empty() {
        return Some(Vec::new());
    }
    s.split('x')
        .map(|d| {
            let n: Vec<i64> = d
                .split('_')
                .map(|t| t.parse::<i64>().ok())
                .collect::<Option<_>>()?;
            match n[..] {
                [a, b] => Some((a, b, 0)),
                [a, b, c] => Some((a, b, c)),
                _ => None,
            }
        })
        .collect()
}

/// One dimension of a `window=`.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowDim {
    pub size: i64,
    pub stride: i64,
    pub pad_lo: i64,
    pub pad_hi: i64,
    pub base_dilation: i64,
    pub window_dilation: i64,
    pub reversal: bool,
}

/// `window={size=1x32 stride=1x32 pad=0_0x0_0 lhs_dilate=1x1 rhs_dilate=1x1}`.
pub fn window_attr(instr: &Instruction, rank: usize) -> Result<Vec<WindowDim>> {
    let Some(s) = raw(instr, "window") else {
        // A scalar operand has an empty window, which XLA does not print.
        return if rank == 0 {
            Ok(Vec::new())
        } else {
            Err(err("missing attribute window"))
        };
    };
    let bad = || err(format!("cannot read window={s}"));
    let inner = s
        .trim()
        .strip_prefix('{')
        .and_then(|x| x.strip_suffix('}'))
        .ok_or_else(bad)?;
    let mut dims: Vec<WindowDim> = (0..rank)
        .map(|_| WindowDim {
            size: 1,
            stride: 1,
            pad_lo: 0,
            pad_hi: 0,
            base_dilation: 1,
            window_dilation: 1,
            reversal: false,
        })
        .collect();
    for field in inner.split_whitespace() {
        let (k, v) = field.split_once('=').ok_or_else(bad)?;
        if k == "pad" {
            let p = parse_padding(v).ok_or_else(bad)?;
            if p.len() != rank {
                return Err(bad());
            }
            for (d, (lo, hi, _)) in dims.iter_mut().zip(p) {
                d.pad_lo = lo;
                d.pad_hi = hi;
            }
            continue;
        }
        let nums: Vec<i64> = v
            .split('x')
            .map(|t| t.parse::<i64>().map_err(|_| bad()))
            .collect::<Result<_>>()?;
        if nums.len() != rank {
            return Err(err(format!(
                "window={s}: {k} has {} dimensions, the operand {rank}",
                nums.len()
            )));
        }
        for (d, n) in dims.iter_mut().zip(nums) {
            match k {
                "size" => d.size = n,
                "stride" => d.stride = n,
                "lhs_dilate" => d.base_dilation = n,
                "rhs_dilate" => d.window_dilation = n,
                "rhs_reversal" => d.reversal = n != 0,
                _ => return Err(err(format!("window={s}: unknown field {k}"))),
            }
        }
    }
    for d in &dims {
        if d.size < 0 || d.stride < 1 || d.base_dilation < 1 || d.window_dilation < 1 {
            return Err(bad());
        }
    }
    Ok(dims)
}

/// Reads a usize from an i64 attribute value with a clear error.
pub fn dim_index(v: i64, rank: usize, what: &str) -> Result<usize> {
    usize::try_from(v)
        .ok()
        .filter(|&d| d < rank)
        .ok_or_else(|| err(format!("{what} {v} is out of range for rank {rank}")))
}
