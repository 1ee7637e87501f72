//! `cholesky` and `triangular-solve` on batches of matrices (the two
//! minor dimensions), real or complex, with the semantics of XLA's
//! `CholeskyExpander` and `TriangularSolveExpander`:
//!
//! - `cholesky(a), lower=true` gives L with `a = L L^H`, reading only the
//!   lower triangle of a; `lower=false` (the default) factors the
//!   transpose and transposes back, reading the upper triangle. The other
//!   triangle of the result is zero. A matrix whose factorization meets a
//!   NaN diagonal (not positive definite) comes out all NaN, as XLA's
//!   expander makes it. For complex matrices the diagonal's imaginary part
//!   is ignored.
//! - `triangular-solve(a, b)` solves `op(a) x = b` (`left_side=true`) or
//!   `x op(a) = b` for x, where a is read as its `lower` (or upper)
//!   triangle, with ones on the diagonal if `unit_diagonal`, and `op` is
//!   `transpose_a`: NO_TRANSPOSE (the default), TRANSPOSE or ADJOINT.
//!
//! Both compute in c128 (exact for every real type) and round each result
//! once: more accurate than XLA:CPU's blocked f32 algorithms, which differ
//! by rounding only.

use super::array::{Array, Data, Value};
use super::complex::{from_c128, to_c128};
use super::convert::{from_f64_vec, to_f64_vec};
use super::{attrs, err, expect_operands, operand, Result};
use crate::ir::{AttrValue, Instruction, PrimitiveType};
use num_complex::Complex64;

type C = Complex64;

/// Every element as a c128.
fn to_c(a: &Array) -> Vec<C> {
    if a.ty.is_complex() {
        to_c128(&a.data)
    } else {
        to_f64_vec(&a.data, a.ty)
            .into_iter()
            .map(|x| C::new(x, 0.0))
            .collect()
    }
}

/// Back to `ty` (real types keep the real part, which is all there is).
fn from_c(ty: PrimitiveType, v: Vec<C>) -> Result<Data> {
    if ty.is_complex() {
        from_c128(ty, v)
    } else {
        from_f64_vec(ty, &v.iter().map(|c| c.re).collect::<Vec<_>>())
    }
}

fn float_or_complex(a: &Array, what: &str) -> Result<()> {
    if a.ty.is_float() || a.ty.is_complex() {
        Ok(())
    } else {
        Err(err(format!(
            "{what} of {}: not a float or complex array",
            a.ty
        )))
    }
}

/// The batch count and the two minor dimensions.
fn matrices(a: &Array, what: &str) -> Result<(usize, usize, usize)> {
    if a.rank() < 2 {
        return Err(err(format!("{what} of {}: rank below 2", a.shape_text())));
    }
    let (r, c) = (a.dims[a.rank() - 2], a.dims[a.rank() - 1]);
    let batch = a.dims[..a.rank() - 2].iter().product();
    Ok((batch, r, c))
}

/// The `cholesky` instruction.
pub fn cholesky_op(instr: &Instruction, ops: &[&Value]) -> Result<Array> {
    expect_operands(instr, ops, 1)?;
    let lower = attrs::bool_attr(instr, "lower")?.unwrap_or(false);
    cholesky(operand(ops, 0)?, lower)
}

/// XLA's `cholesky` (see the module doc).
pub fn cholesky(a: &Array, lower: bool) -> Result<Array> {
    float_or_complex(a, "cholesky")?;
    let (batch, n, m) = matrices(a, "cholesky")?;
    if n != m {
        return Err(err(format!(
            "cholesky of {}: not square matrices",
            a.shape_text()
        )));
    }
    let v = to_c(a);
    let mut out = vec![C::new(0.0, 0.0); v.len()];
    for b in 0..batch {
        let m = &v[b * n * n..(b + 1) * n * n];
        // The factored matrix: a's lower triangle, or its transpose's.
        let at = |i: usize, j: usize| if lower { m[i * n + j] } else { m[j * n + i] };
        let mut l = vec![C::new(0.0, 0.0); n * n];
        let mut failed = false;
        for j in 0..n {
            let mut d = at(j, j);
            for k in 0..j {
                d -= l[j * n + k] * l[j * n + k].conj();
            }
            let djj = d.re.sqrt();
            failed |= djj.is_nan();
            l[j * n + j] = C::new(djj, 0.0);
            for i in j + 1..n {
                let mut s = at(i, j);
                for k in 0..j {
                    s -= l[i * n + k] * l[j * n + k].conj();
                }
                l[i * n + j] = s / djj;
            }
        }
        let dst = &mut out[b * n * n..(b + 1) * n * n];
        for i in 0..n {
            for j in 0..n {
                dst[i * n + j] = if failed {
                    C::new(f64::NAN, if a.ty.is_complex() { f64::NAN } else { 0.0 })
                } else if lower {
                    l[i * n + j]
                } else {
                    l[j * n + i]
                };
            }
        }
    }
    Array::new(a.ty, a.dims.clone(), from_c(a.ty, out)?)
}

/// `transpose_a` of a triangular solve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transpose {
    No,
    Transpose,
    Adjoint,
}

/// The options of a triangular solve.
#[derive(Clone, Copy, Debug)]
pub struct SolveOptions {
    pub left_side: bool,
    pub lower: bool,
    pub unit_diagonal: bool,
    pub transpose_a: Transpose,
}

/// The `triangular-solve` instruction.
pub fn triangular_solve_op(instr: &Instruction, ops: &[&Value]) -> Result<Array> {
    expect_operands(instr, ops, 2)?;
    let flag = |k: &str| -> Result<bool> { Ok(attrs::bool_attr(instr, k)?.unwrap_or(false)) };
    let transpose_a = match instr.attr("transpose_a") {
        None => Transpose::No,
        Some(AttrValue::Transpose(t)) => match t {
            crate::ir::attrs::Transpose::NoTranspose => Transpose::No,
            crate::ir::attrs::Transpose::Transpose => Transpose::Transpose,
            crate::ir::attrs::Transpose::Adjoint => Transpose::Adjoint,
            crate::ir::attrs::Transpose::Invalid => {
                return Err(err("transpose_a=TRANSPOSE_INVALID"))
            }
        },
        Some(_) => return Err(err("cannot read transpose_a")),
    };
    let opts = SolveOptions {
        left_side: flag("left_side")?,
        lower: flag("lower")?,
        unit_diagonal: flag("unit_diagonal")?,
        transpose_a,
    };
    triangular_solve(operand(ops, 0)?, operand(ops, 1)?, opts)
}

/// XLA's `triangular-solve` (see the module doc).
pub fn triangular_solve(a: &Array, b: &Array, o: SolveOptions) -> Result<Array> {
    float_or_complex(a, "triangular-solve")?;
    let (batch, n, n2) = matrices(a, "triangular-solve")?;
    let (bbatch, rows, cols) = matrices(b, "triangular-solve")?;
    let k = if o.left_side { rows } else { cols };
    if a.ty != b.ty
        || n != n2
        || n != k
        || batch != bbatch
        || a.dims[..a.rank() - 2] != b.dims[..b.rank() - 2]
    {
        return Err(err(format!(
            "triangular-solve of {} and {}: a must be square batches matching b's {} dimension",
            a.shape_text(),
            b.shape_text(),
            if o.left_side { "row" } else { "column" }
        )));
    }
    let (av, bv) = (to_c(a), to_c(b));
    let mut out = vec![C::new(0.0, 0.0); bv.len()];
    for bi in 0..batch {
        let m = &av[bi * n * n..(bi + 1) * n * n];
        // t = op(triangle of a), dense.
        let mut t = vec![C::new(0.0, 0.0); n * n];
        for i in 0..n {
            for j in 0..n {
                let keep = if o.lower { j <= i } else { j >= i };
                let v = if i == j && o.unit_diagonal {
                    C::new(1.0, 0.0)
                } else if keep {
                    m[i * n + j]
                } else {
                    continue;
                };
                match o.transpose_a {
                    Transpose::No => t[i * n + j] = v,
                    Transpose::Transpose => t[j * n + i] = v,
                    Transpose::Adjoint => t[j * n + i] = v.conj(),
                }
            }
        }
        let t_lower = o.lower == (o.transpose_a == Transpose::No);
        let src = &bv[bi * rows * cols..(bi + 1) * rows * cols];
        let dst = &mut out[bi * rows * cols..(bi + 1) * rows * cols];
        if o.left_side {
            // t x = b, one column of b at a time.
            solve_columns(
                &t,
                n,
                t_lower,
                cols,
                |r, c| src[r * cols + c],
                |r, c, v| dst[r * cols + c] = v,
            );
        } else {
            // x t = b  <=>  t^T x^T = b^T: columns of b^T are rows of b.
            let tt: Vec<C> = (0..n * n).map(|e| t[(e % n) * n + e / n]).collect();
            solve_columns(
                &tt,
                n,
                !t_lower,
                rows,
                |r, c| src[c * cols + r],
                |r, c, v| dst[c * cols + r] = v,
            );
        }
    }
    Array::new(b.ty, b.dims.clone(), from_c(b.ty, out)?)
}

/// Solves `t x = rhs` for `count` columns by substitution (`t` is n x n,
/// lower or upper triangular); `get(row, col)` reads rhs, `set` writes x.
fn solve_columns(
    t: &[C],
    n: usize,
    lower: bool,
    count: usize,
    get: impl Fn(usize, usize) -> C,
    mut set: impl FnMut(usize, usize, C),
) {
    let mut x = vec![C::new(0.0, 0.0); n];
    for c in 0..count {
        let order: Vec<usize> = if lower {
            (0..n).collect()
        } else {
            (0..n).rev().collect()
        };
        for &i in &order {
            let mut s = get(i, c);
            let known: Box<dyn Iterator<Item = usize>> = if lower {
                Box::new(0..i)
            } else {
                Box::new(i + 1..n)
            };
            for j in known {
                s -= t[i * n + j] * x[j];
            }
            x[i] = s / t[i * n + i];
        }
        for (i, &v) in x.iter().enumerate() {
            set(i, c, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f64s(a: &Array) -> Vec<f64> {
        to_f64_vec(&a.data, a.ty)
    }

    fn mat(dims: &[usize], v: &[f64]) -> Array {
        Array::new(PrimitiveType::F64, dims.to_vec(), Data::F64(v.to_vec())).unwrap()
    }

    #[test]
    fn cholesky_lower_upper_and_failure() {
        // [[4, 2], [2, 5]] = L L^T with L = [[2, 0], [1, 2]].
        let a = mat(&[2, 2], &[4.0, 2.0, 2.0, 5.0]);
        assert_eq!(f64s(&cholesky(&a, true).unwrap()), vec![2.0, 0.0, 1.0, 2.0]);
        assert_eq!(
            f64s(&cholesky(&a, false).unwrap()),
            vec![2.0, 1.0, 0.0, 2.0]
        );
        // Only the named triangle is read.
        let junk = mat(&[2, 2], &[4.0, 99.0, 2.0, 5.0]);
        assert_eq!(
            f64s(&cholesky(&junk, true).unwrap()),
            vec![2.0, 0.0, 1.0, 2.0]
        );
        // Not positive definite: the whole matrix is NaN; other batch
        // members are unaffected.
        let b = mat(&[2, 2, 2], &[4.0, 2.0, 2.0, 5.0, 1.0, 2.0, 2.0, 1.0]);
        let r = f64s(&cholesky(&b, true).unwrap());
        assert_eq!(&r[..4], &[2.0, 0.0, 1.0, 2.0]);
        assert!(r[4..].iter().all(|x| x.is_nan()));
    }

    #[test]
    fn triangular_solve_every_side_and_transpose() {
        let a = mat(&[2, 2], &[2.0, 7.0, 1.0, 4.0]); // lower: [[2,0],[1,4]]
        let b = mat(&[2, 1], &[2.0, 9.0]);
        let opts = |left_side, lower, unit_diagonal, transpose_a| SolveOptions {
            left_side,
            lower,
            unit_diagonal,
            transpose_a,
        };
        // [[2,0],[1,4]] x = [2, 9]: x = [1, 2].
        let x = triangular_solve(&a, &b, opts(true, true, false, Transpose::No)).unwrap();
        assert_eq!(f64s(&x), vec![1.0, 2.0]);
        // Transposed: [[2,1],[0,4]] x = [2, 9]: x = [(2 - 9/4)/2, 9/4].
        let x = triangular_solve(&a, &b, opts(true, true, false, Transpose::Transpose)).unwrap();
        assert_eq!(f64s(&x), vec![-0.125, 2.25]);
        // Upper triangle of a: [[2,7],[0,4]]; unit diagonal: [[1,7],[0,1]].
        let x = triangular_solve(&a, &b, opts(true, false, true, Transpose::No)).unwrap();
        assert_eq!(f64s(&x), vec![2.0 - 63.0, 9.0]);
        // Right side: x [[2,0],[1,4]] = [2, 9]: x = [(2 - 9/4)/2, 9/4].
        let b = mat(&[1, 2], &[2.0, 9.0]);
        let x = triangular_solve(&a, &b, opts(false, true, false, Transpose::No)).unwrap();
        assert_eq!(f64s(&x), vec![-0.125, 2.25]);
    }
}
