//! Elementwise binary ops on unsigned integer arrays with the op chosen
//! once per array (a plain loop per op) rather than per element, as
//! [`ubin`] does; the same results, wrapped to the type's width.

use super::elementwise::{ubin, BinOp};
use super::{par, Result};

/// Binds `$f` to `op` on two elements of a `$bits`-bit unsigned type, as
/// [`ubin`] computes it, for the ops with a plain loop (the op chosen once,
/// outside the loop `$body` runs); `$other` for the rest.
macro_rules! with_u_op {
    ($op:expr, $bits:expr, $f:ident => $body:expr, _ => $other:expr) => {{
        use $crate::interp::elementwise::BinOp;
        let bits: u32 = $bits;
        let m = if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let w = u64::from(bits);
        macro_rules! bind {
            (|$p:ident, $q:ident| $e:expr) => {{
                let $f = move |$p: u64, $q: u64| $e;
                $body
            }};
        }
        match $op {
            BinOp::Add => bind!(|p, q| p.wrapping_add(q) & m),
            BinOp::Sub => bind!(|p, q| p.wrapping_sub(q) & m),
            BinOp::Mul => bind!(|p, q| p.wrapping_mul(q) & m),
            BinOp::Max => bind!(|p, q| p.max(q) & m),
            BinOp::Min => bind!(|p, q| p.min(q) & m),
            BinOp::And => bind!(|p, q| p & q & m),
            BinOp::Or => bind!(|p, q| (p | q) & m),
            BinOp::Xor => bind!(|p, q| (p ^ q) & m),
            BinOp::Shl => bind!(|p, q| if q >= w { 0 } else { (p << q) & m }),
            BinOp::ShrL => bind!(|p, q| if q >= w { 0 } else { (p >> q) & m }),
            _ => $other,
        }
    }};
}

pub(crate) use with_u_op;

/// `x op y` on the elements of a `bits`-bit unsigned type.
pub fn binary_u(op: BinOp, x: &[u64], y: &[u64], bits: u32) -> Result<Vec<u64>> {
    Ok(
        with_u_op!(op, bits, f => par::zip(x, y, move |&p, &q| f(p, q)), _ => x
        .iter()
        .zip(y)
        .map(|(&p, &q)| ubin(op, p, q, bits))
        .collect::<Result<_>>()?),
    )
}

/// The one value every element of `v` has, if so (a pass without an
/// early exit, which vectorises).
fn uniform(v: &[u64]) -> Option<u64> {
    let first = *v.first()?;
    (v.iter().fold(0, |acc, &q| acc | (q ^ first)) == 0).then_some(first)
}

/// [`binary_u`] written over the elements of `x`, which is the left
/// operand when `x_is_left` (else the right one): the same results, no new
/// array. False (`x` untouched) for an op without a loop here.
pub fn binary_u_in_place(op: BinOp, x: &mut [u64], y: &[u64], bits: u32, x_is_left: bool) -> bool {
    let m = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let w = u64::from(bits);
    // Shifts by one amount for every element (a threefry round's rotation:
    // a broadcast constant) shift by a scalar, which vectorises; a shift
    // per element does not on x86-64's baseline.
    if matches!(op, BinOp::Shl | BinOp::ShrL) {
        let amounts: &[u64] = if x_is_left { y } else { x };
        if let Some(s) = uniform(amounts) {
            // One loop per case, each with nothing to decide per element.
            macro_rules! shift {
                (|$p:ident| $e:expr) => {
                    if x_is_left {
                        par::map_in_place(x, move |&$p| $e)
                    } else {
                        par::zip_in_place(x, y, move |_, &$p| $e)
                    }
                };
            }
            match (s >= w, op) {
                (true, _) => x.iter_mut().for_each(|p| *p = 0),
                (false, BinOp::Shl) => shift!(|p| (p << s) & m),
                (false, _) => shift!(|p| (p >> s) & m),
            }
            return true;
        }
    }
    with_u_op!(op, bits, f => {
        if x_is_left {
            par::zip_in_place(x, y, move |&p, &q| f(p, q))
        } else {
            par::zip_in_place(x, y, move |&q, &p| f(p, q))
        }
    }, _ => return false);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each op's loop against `ubin` on values around the type's edges.
    #[test]
    fn loops_match_ubin() {
        let ops = [
            BinOp::Add,
            BinOp::Sub,
            BinOp::Mul,
            BinOp::Max,
            BinOp::Min,
            BinOp::And,
            BinOp::Or,
            BinOp::Xor,
            BinOp::Shl,
            BinOp::ShrL,
            BinOp::ShrA,
            BinOp::Div,
            BinOp::Rem,
        ];
        for bits in [8u32, 16, 32, 64] {
            let top = if bits == 64 {
                u64::MAX
            } else {
                (1 << bits) - 1
            };
            let vals = [
                0,
                1,
                2,
                7,
                31,
                32,
                63,
                64,
                65,
                top / 2,
                top / 2 + 1,
                top - 1,
                top,
            ];
            let (mut x, mut y) = (Vec::new(), Vec::new());
            for &a in &vals {
                for &b in &vals {
                    x.push(a);
                    y.push(b);
                }
            }
            for op in ops {
                let got = binary_u(op, &x, &y, bits).unwrap();
                for left in [true, false] {
                    let (mut mine, other) = if left {
                        (x.clone(), &y)
                    } else {
                        (y.clone(), &x)
                    };
                    if binary_u_in_place(op, &mut mine, other, bits, left) {
                        assert_eq!(mine, got, "{op:?} {bits} bits in place, left {left}");
                    }
                }
                for i in 0..x.len() {
                    let want = ubin(op, x[i], y[i], bits).unwrap();
                    assert_eq!(got[i], want, "{op:?} {bits} bits on {} {}", x[i], y[i]);
                }
            }
        }
    }

    /// A shift by one amount for every element (the scalar loop) against
    /// `ubin`, amounts past the width included.
    #[test]
    fn uniform_shifts_match_ubin() {
        for bits in [8u32, 16, 32, 64] {
            let x: Vec<u64> = (0..37u64)
                .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - bits))
                .collect();
            for s in [
                0u64,
                1,
                7,
                13,
                u64::from(bits) - 1,
                u64::from(bits),
                64,
                200,
            ] {
                let y = vec![s; x.len()];
                for op in [BinOp::Shl, BinOp::ShrL] {
                    // In the values' buffer, and in the amounts'.
                    let mut mine = x.clone();
                    assert!(binary_u_in_place(op, &mut mine, &y, bits, true));
                    let mut theirs = y.clone();
                    assert!(binary_u_in_place(op, &mut theirs, &x, bits, false));
                    for (i, (&got, &got_right)) in mine.iter().zip(&theirs).enumerate() {
                        let want = ubin(op, x[i], s, bits).unwrap();
                        assert_eq!(got, want, "{op:?} {bits} bits: {} by {s}", x[i]);
                        assert_eq!(got_right, want, "{op:?} {bits} bits: {} by {s}", x[i]);
                    }
                }
            }
        }
    }
}
