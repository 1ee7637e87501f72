//! Broadcasts read in place of the array they make: `add(x, broadcast(c))`
//! is `x[i] + c` for every i, with no array of copies of `c` written and
//! read back. JAX writes one such broadcast for nearly every scalar operand
//! (73 in a threefry dropout mask, each as large as the mask), so making
//! them costs as much as the arithmetic they feed. The same holds for the
//! two broadcasts of a smaller array that models are full of: a value per
//! row (softmax's `x - max` and `e / sum`: the operand fills the leading
//! dimensions, each element repeated over the trailing ones) and a value
//! per column (a bias, a layer norm's scale: the operand fills the
//! trailing dimensions, the whole of it repeated).
//!
//! The evaluator's plan marks such a broadcast when every user is an
//! elementwise binary op ([`splats`]); its slot then holds the broadcast's
//! operand, and each user computes [`binary`] on it. A user this file has
//! no loop for (a type or an op it leaves out, or both operands such
//! broadcasts) gets the broadcast made after all ([`materialize`]), so
//! every user still works, only slower.

use super::array::{shape_dims, Array, Data, Value};
use super::elementwise::{fbin32, fbin64, sbin, with_f32_op, with_f64_op, BinOp};
use super::intbin::with_u_op;
use super::narrow::{self, Narrow};
use super::{par, shape_ops, Result};
use crate::ir::{Computation, InstrId, Instruction, Opcode, PrimitiveType};

/// Rows or columns shorter than this are made as a broadcast: a loop per
/// row would cost more than the copies.
const MIN_RUN: usize = 8;

/// How a broadcast's operand fills its result.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Pattern {
    /// One value everywhere.
    Scalar,
    /// The operand's elements each repeated over a run of this many
    /// (the operand fills the leading dimensions).
    Rows(usize),
    /// The whole operand repeated (it fills the trailing dimensions).
    Columns,
}
use half::{bf16, f16};

/// Per instruction slot of `comp`: whether the instruction is a broadcast
/// of a scalar that every user in `order` (the plan's evaluation order)
/// reads as the scalar. Never the root (the caller sees its value).
pub(crate) fn splats(
    comp: &Computation,
    order: &[InstrId],
    root: InstrId,
    slots: usize,
) -> Vec<bool> {
    let mut splat = vec![false; slots];
    for &id in order {
        splat[id.index()] = id != root && pattern(comp, comp.instr(id)).is_some();
    }
    for &id in order {
        let instr = comp.instr(id);
        if BinOp::from_opcode(instr.opcode).is_none() {
            for &o in instr.operands() {
                splat[o.index()] = false;
            }
        }
    }
    splat
}

/// How broadcast `instr` fills its result, when it is one of the kinds
/// read in place (and its runs are not too short to be worth it).
pub(crate) fn pattern(comp: &Computation, instr: &Instruction) -> Option<Pattern> {
    if instr.opcode != Opcode::Broadcast || instr.operands().len() != 1 {
        return None;
    }
    let out = instr.shape.as_array()?;
    let operand = comp.instr(instr.operand(0)).shape.as_array()?;
    let dims = instr.dimensions().unwrap_or(&[]);
    let (r, k) = (out.dims.len(), operand.dims.len());
    if k == 0 {
        return dims.is_empty().then_some(Pattern::Scalar);
    }
    // The types `runs` has loops for.
    let looped = out.element_type.is_unsigned_int()
        || out.element_type.is_signed_int()
        || matches!(out.element_type, PrimitiveType::F32 | PrimitiveType::F64);
    if !looped || k >= r || dims.len() != k || out.dynamic.iter().any(|&d| d) {
        return None;
    }
    let run = |ds: &[i64]| {
        ds.iter()
            .try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?))
    };
    let leading = dims.iter().enumerate().all(|(i, &d)| d == i as i64);
    let trailing = dims
        .iter()
        .enumerate()
        .all(|(i, &d)| d == (r - k + i) as i64);
    if leading && operand.dims[..] == out.dims[..k] {
        let inner = run(&out.dims[k..])?;
        return (inner >= MIN_RUN).then_some(Pattern::Rows(inner));
    }
    if trailing && operand.dims[..] == out.dims[r - k..] {
        return (run(&operand.dims)? >= MIN_RUN).then_some(Pattern::Columns);
    }
    None
}

/// The broadcast `splat` (whose slot holds its operand) made as an array.
pub(crate) fn materialize(splat: &Instruction, operand: &Value) -> Result<Value> {
    let dims = shape_dims(&splat.shape)?;
    let mapped = splat.dimensions().unwrap_or(&[]);
    shape_ops::broadcast(operand.as_array()?, &dims, mapped).map(Value::array)
}

/// An elementwise op's array operand: its own buffer (its last use, which
/// the result takes over) or one still read by others.
pub(crate) enum Operand<'a> {
    Owned(Array),
    Shared(&'a Array),
}

impl Operand<'_> {
    fn array(&self) -> &Array {
        match self {
            Operand::Owned(a) => a,
            Operand::Shared(a) => a,
        }
    }
}

/// `x op b` (`b op x` when `!scalar_is_right`) for `b` the broadcast of
/// `s` by `pattern`, element by element as [`super::elementwise::binary`]
/// computes it; `Err(x)` back for a type or op without a loop here.
pub(crate) fn binary<'a>(
    op: BinOp,
    x: Operand<'a>,
    s: &Array,
    pattern: Pattern,
    scalar_is_right: bool,
) -> Result<std::result::Result<Array, Operand<'a>>> {
    let a = x.array();
    if s.ty != a.ty || s.is_empty() {
        return Ok(Err(x));
    }
    match pattern {
        Pattern::Scalar if s.len() == 1 => {}
        Pattern::Rows(inner) if s.len().checked_mul(inner) == Some(a.len()) => {
            return runs(op, x, s, Runs::Rows(inner), scalar_is_right);
        }
        Pattern::Columns if a.len() % s.len() == 0 => {
            return runs(op, x, s, Runs::Columns, scalar_is_right);
        }
        _ => return Ok(Err(x)),
    }
    let bits = a.ty.bit_width();
    // `$f(p, q)` with p the left operand, as the ops are written.
    macro_rules! each {
        ($ty:ty, $s:expr, $f:expr) => {{
            let (s, f) = ($s, $f);
            if scalar_is_right {
                map::<$ty>(x, move |p| f(p, s))
            } else {
                map::<$ty>(x, move |p| f(s, p))
            }
        }};
    }
    Ok(Ok(match (&a.data, &s.data) {
        (Data::U(_), Data::U(v)) => {
            let s = v[0];
            let w = u64::from(bits);
            match op {
                // A shift by the scalar: one amount, decided once, so the
                // loop is a plain vector shift.
                BinOp::Shl | BinOp::ShrL if scalar_is_right && s >= w => map::<u64>(x, |_| 0),
                BinOp::Shl | BinOp::ShrL if scalar_is_right => {
                    let m = u64::MAX >> (64 - bits.clamp(1, 64));
                    if op == BinOp::Shl {
                        map::<u64>(x, move |p| (p << s) & m)
                    } else {
                        map::<u64>(x, move |p| (p >> s) & m)
                    }
                }
                _ => with_u_op!(op, bits, f => each!(u64, s, f), _ => return Ok(Err(x))),
            }
        }
        (Data::S(_), Data::S(v)) => {
            let s = v[0];
            let (p, q) = if scalar_is_right { (0, s) } else { (s, 0) };
            // Whether the op is defined on integers at all (`sbin` fails
            // on the op, never on a value).
            sbin(op, p, q, bits)?;
            each!(i64, s, move |p: i64, q: i64| sbin(op, p, q, bits)
                .unwrap_or(0))
        }
        (Data::F32(_), Data::F32(v)) => {
            fbin32(op, 0.0, 0.0)?;
            with_f32_op!(op, f => each!(f32, v[0], f))
        }
        (Data::F64(_), Data::F64(v)) => {
            fbin64(op, 0.0, 0.0)?;
            with_f64_op!(op, f => each!(f64, v[0], f))
        }
        (Data::F16(_), Data::F16(v)) => {
            fbin32(op, 0.0, 0.0)?;
            with_f32_op!(op, f => each_narrow::<f16>(x, v[0].widen(), scalar_is_right, f))
        }
        (Data::Bf16(_), Data::Bf16(v)) => {
            fbin32(op, 0.0, 0.0)?;
            with_f32_op!(op, f => each_narrow::<bf16>(x, v[0].widen(), scalar_is_right, f))
        }
        _ => return Ok(Err(x)),
    }?))
}

/// How the operand of a row or column broadcast is read.
#[derive(Clone, Copy)]
enum Runs {
    Rows(usize),
    Columns,
}

/// [`binary`] for a broadcast by rows or by columns, on the types with a
/// loop here (the 16-bit floats are left to the general evaluator).
fn runs<'a>(
    op: BinOp,
    x: Operand<'a>,
    s: &Array,
    runs: Runs,
    scalar_is_right: bool,
) -> Result<std::result::Result<Array, Operand<'a>>> {
    let bits = x.array().ty.bit_width();
    // `$f(p, q)` with p the left operand, as the ops are written.
    macro_rules! each {
        ($ty:ty, $v:expr, $f:expr) => {{
            let f = $f;
            if scalar_is_right {
                map_runs::<$ty>(x, $v, runs, move |p, q| f(p, q))
            } else {
                map_runs::<$ty>(x, $v, runs, move |p, q| f(q, p))
            }
        }};
    }
    Ok(Ok(match (&x.array().data, &s.data) {
        (Data::U(_), Data::U(v)) => {
            with_u_op!(op, bits, f => each!(u64, v, f), _ => return Ok(Err(x)))
        }
        (Data::S(_), Data::S(v)) => {
            // Whether the op is defined on integers at all (`sbin` fails
            // on the op, never on a value).
            sbin(op, 0, 1, bits)?;
            each!(i64, v, move |p: i64, q: i64| sbin(op, p, q, bits)
                .unwrap_or(0))
        }
        (Data::F32(_), Data::F32(v)) => {
            fbin32(op, 0.0, 0.0)?;
            with_f32_op!(op, f => each!(f32, v, f))
        }
        (Data::F64(_), Data::F64(v)) => {
            fbin64(op, 0.0, 0.0)?;
            with_f64_op!(op, f => each!(f64, v, f))
        }
        _ => return Ok(Err(x)),
    }?))
}

/// `f(x[i], b[i])` for every element, `b` the broadcast of `v` by `runs`:
/// in `x`'s own buffer when owned, else into a new one (on all cores when
/// large, split at whole rows or whole repeats of `v`).
fn map_runs<T: Elem>(
    x: Operand<'_>,
    v: &[T],
    runs: Runs,
    f: impl Fn(T, T) -> T + Sync + Clone,
) -> Result<Array> {
    let n = x.array().len();
    let unit = match runs {
        Runs::Rows(inner) => inner,
        Runs::Columns => v.len(),
    };
    // The run starting at element `start` (a multiple of `unit`) and the
    // value(s) it is combined with.
    let g = f.clone();
    apply::<T>(
        x,
        |buf| {
            par::for_chunks(buf, unit, |start, chunk| {
                let f = f.clone();
                for (k, run) in chunk.chunks_mut(unit).enumerate() {
                    match runs {
                        Runs::Rows(_) => {
                            let q = v[start / unit + k];
                            run.iter_mut().for_each(|p| *p = f(*p, q));
                        }
                        Runs::Columns => {
                            for (p, &q) in run.iter_mut().zip(v) {
                                *p = f(*p, q);
                            }
                        }
                    }
                }
            })
        },
        |src| {
            par::collect_chunks(n, unit, n >= par::MIN_PARALLEL, |start, sink| {
                let f = g.clone();
                for (k, run) in src[start..].chunks(unit).enumerate() {
                    if sink.room() == 0 {
                        break;
                    }
                    match runs {
                        Runs::Rows(_) => {
                            let q = v[start / unit + k];
                            sink.extend(run.iter().map(|&p| f(p, q)));
                        }
                        Runs::Columns => sink.extend(run.iter().zip(v).map(|(&p, &q)| f(p, q))),
                    }
                }
            })
        },
    )
}

/// `f(x[i], s)` (`f(s, x[i])` when `!scalar_is_right`) on f16 or bf16,
/// in f32 and rounded back.
fn each_narrow<T: Narrow + Elem>(
    x: Operand<'_>,
    s: f32,
    scalar_is_right: bool,
    f: impl Fn(f32, f32) -> f32 + Sync + Clone,
) -> Result<Array> {
    let g = move |p: f32| if scalar_is_right { f(p, s) } else { f(s, p) };
    let h = g.clone();
    apply::<T>(x, |v| narrow::map_in_place(v, g), |v| narrow::map(v, h))
}

/// The elements of one storage class of [`Data`].
trait Elem: Copy + Send + Sync + Sized {
    fn of(d: &Data) -> Option<&Vec<Self>>;
    fn of_mut(d: &mut Data) -> Option<&mut Vec<Self>>;
    fn wrap(v: Vec<Self>) -> Data;
}

macro_rules! elem {
    ($t:ty, $variant:ident) => {
        impl Elem for $t {
            fn of(d: &Data) -> Option<&Vec<Self>> {
                match d {
                    Data::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn of_mut(d: &mut Data) -> Option<&mut Vec<Self>> {
                match d {
                    Data::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn wrap(v: Vec<Self>) -> Data {
                Data::$variant(v)
            }
        }
    };
}

elem!(u64, U);
elem!(i64, S);
elem!(f32, F32);
elem!(f64, F64);
elem!(f16, F16);
elem!(bf16, Bf16);

/// `f` on every element of `x`: in its own buffer when owned, else into a
/// new one (on all cores when large).
fn map<T: Elem>(x: Operand<'_>, f: impl Fn(T) -> T + Sync + Clone) -> Result<Array> {
    let g = f.clone();
    apply::<T>(
        x,
        |v| par::map_in_place(v, move |&p| f(p)),
        |v| par::map(v, move |&p| g(p)),
    )
}

/// `in_place` on `x`'s elements when it is owned, else `fresh` of them.
fn apply<T: Elem>(
    x: Operand<'_>,
    in_place: impl FnOnce(&mut [T]),
    fresh: impl FnOnce(&[T]) -> Vec<T>,
) -> Result<Array> {
    let wrong = || super::err("internal error: a splat's operand is not of its storage class");
    match x {
        Operand::Owned(mut a) => {
            in_place(T::of_mut(&mut a.data).ok_or_else(wrong)?);
            Ok(a)
        }
        Operand::Shared(a) => Ok(Array {
            ty: a.ty,
            dims: a.dims.clone(),
            data: T::wrap(fresh(T::of(&a.data).ok_or_else(wrong)?)),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::convert::{from_f64_vec, to_bits};
    use crate::interp::elementwise;
    use crate::ir::PrimitiveType as T;

    /// Every elementwise binary op.
    const ALL_OPS: [BinOp; 15] = [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Rem,
        BinOp::Max,
        BinOp::Min,
        BinOp::Pow,
        BinOp::Atan2,
        BinOp::And,
        BinOp::Or,
        BinOp::Xor,
        BinOp::Shl,
        BinOp::ShrL,
        BinOp::ShrA,
    ];

    /// Every op of [`ALL_OPS`] on `x` and `small` read in place as
    /// `pattern`, the small operand on either side, `x` owned or shared,
    /// against the op on `wide` (the made broadcast): how many had a loop
    /// here ([`same_result`]).
    fn every_op_against(
        x: &Array,
        small: &Array,
        pattern: Pattern,
        wide: &Array,
        what: &str,
    ) -> usize {
        let mut compared = 0;
        for op in ALL_OPS {
            for right in [true, false] {
                let want = if right {
                    elementwise::binary(op, x, wide)
                } else {
                    elementwise::binary(op, wide, x)
                };
                for owned in [true, false] {
                    let operand = if owned {
                        Operand::Owned(x.clone())
                    } else {
                        Operand::Shared(x)
                    };
                    let got = binary(op, operand, small, pattern, right);
                    let what = format!("{what} {op:?} right {right} owned {owned}");
                    compared += usize::from(same_result(&want, got, &what));
                }
            }
        }
        compared
    }

    /// Whether `got` (a loop here) matched `want` (the op on the made
    /// broadcast) bit for bit; false when there is no loop or both
    /// refuse; a panic naming `what` on a mismatch.
    fn same_result(
        want: &Result<Array>,
        got: Result<std::result::Result<Array, Operand<'_>>>,
        what: &str,
    ) -> bool {
        match (want, got) {
            (Ok(w), Ok(Ok(g))) => {
                assert_eq!(to_bits(&g), to_bits(w), "{what}");
                true
            }
            (Err(_), Err(_)) | (_, Ok(Err(_))) => false,
            (w, g) => panic!("{what}: {w:?} against {:?}", g.map(|r| r.is_ok())),
        }
    }

    /// Each op on a scalar gives `binary` on the broadcast array, bit for
    /// bit, the scalar on either side, the array owned or shared: every
    /// type with a loop here, values around the edges (NaN, ±0, ±inf,
    /// wrap-around, shift amounts past the width).
    #[test]
    fn scalar_operand_matches_the_broadcast() {
        let values = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            2.5,
            7.0,
            31.0,
            32.0,
            33.0,
            64.0,
            255.0,
            65535.0,
            1e9,
            -3e9,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        let mut compared = 0;
        for ty in [
            T::U8,
            T::U32,
            T::U64,
            T::S8,
            T::S32,
            T::S64,
            T::F16,
            T::Bf16,
            T::F32,
            T::F64,
        ] {
            let float = ty.is_float();
            let keep = |v: &f64| float || v.is_finite();
            let xs: Vec<f64> = values.iter().copied().filter(keep).collect();
            let make = |v: &[f64]| {
                let v: Vec<f64> = if float {
                    v.to_vec()
                } else {
                    v.iter().map(|x| x.abs().trunc()).collect()
                };
                Array::new(ty, vec![v.len()], from_f64_vec(ty, &v).unwrap()).unwrap()
            };
            let x = make(&xs);
            for &sv in xs.iter() {
                let s = Array {
                    dims: vec![],
                    ..make(&[sv])
                };
                let wide = make(&vec![sv; xs.len()]);
                let what = format!("{ty:?} scalar {sv}");
                compared += every_op_against(&x, &s, Pattern::Scalar, &wide, &what);
            }
        }
        // Most of the cases have a loop here (not only the fallback).
        assert!(compared > 3000, "{compared} compared");
    }

    /// A row broadcast (the operand fills the leading dimensions) and a
    /// column broadcast (the trailing ones) read in place give the bits of
    /// the op on the made broadcast: every type with a loop, every op,
    /// both sides, owned and shared, small and split over cores.
    #[test]
    fn rows_and_columns_match_the_broadcast() {
        use crate::interp::shape_ops::broadcast;
        let mut compared = 0;
        // [rows, cols]: a tail shorter than a thread's share, and one split.
        for (rows, cols) in [(5usize, 9usize), (600, 256)] {
            for ty in [T::U8, T::U32, T::U64, T::S32, T::S64, T::F32, T::F64] {
                let float = ty.is_float();
                let value = |i: usize| {
                    let v = [
                        0.0,
                        -0.0,
                        1.0,
                        -2.5,
                        7.0,
                        31.0,
                        33.0,
                        f64::NAN,
                        f64::INFINITY,
                    ][i % 9];
                    if float {
                        v
                    } else if v.is_finite() {
                        v.abs().trunc()
                    } else {
                        3.0
                    }
                };
                let make = |dims: Vec<usize>, offset: usize| {
                    let n = dims.iter().product::<usize>();
                    let v: Vec<f64> = (0..n).map(|i| value(i * 7 + offset)).collect();
                    Array::new(ty, dims, from_f64_vec(ty, &v).unwrap()).unwrap()
                };
                let x = make(vec![rows, cols], 0);
                let by_row = make(vec![rows], 1);
                let by_col = make(vec![cols], 2);
                for (small, pattern, mapped) in [
                    (&by_row, Pattern::Rows(cols), [0i64]),
                    (&by_col, Pattern::Columns, [1i64]),
                ] {
                    let wide = broadcast(small, &[rows, cols], &mapped).unwrap();
                    let what = format!("{ty:?} {pattern:?} [{rows},{cols}]");
                    compared += every_op_against(&x, small, pattern, &wide, &what);
                }
            }
        }
        assert!(compared > 500, "{compared} compared");
    }

    /// The broadcasts read in place: a scalar, leading or trailing
    /// dimensions with runs long enough; not a transposing one, not short
    /// runs, not a 16-bit float (no loop for it).
    #[test]
    fn which_broadcasts_are_read_in_place() {
        let text = "HloModule m\n\nENTRY e {\n  r = f32[4] parameter(0)\n  \
                    c = f32[16] parameter(1)\n  h = bf16[4] parameter(2)\n  \
                    k = f32[] constant(1)\n  \
                    a = f32[4,16] broadcast(r), dimensions={0}\n  \
                    b = f32[4,16] broadcast(c), dimensions={1}\n  \
                    s = f32[4,16] broadcast(k), dimensions={}\n  \
                    t = f32[16,4] broadcast(r), dimensions={1}\n  \
                    u = f32[16,4] broadcast(c), dimensions={0}\n  \
                    v = bf16[4,16] broadcast(h), dimensions={0}\n  \
                    g = f32[4,16,16] broadcast(b), dimensions={0,2}\n  \
                    ROOT w = (f32[4,16], f32[4,16], f32[4,16], f32[16,4], f32[16,4], bf16[4,16], \
                    f32[4,16,16]) tuple(a, b, s, t, u, v, g)\n}\n";
        let module = crate::text::parse_module(text, "m.hlo").expect("parses");
        let comp = module.comp(module.entry());
        let of = |name: &str| {
            let id = comp
                .sequence()
                .find(|&i| &*comp.instr(i).name == name)
                .expect("instruction");
            pattern(comp, comp.instr(id))
        };
        assert_eq!(of("a"), Some(Pattern::Rows(16)));
        assert_eq!(of("b"), Some(Pattern::Columns));
        assert_eq!(of("s"), Some(Pattern::Scalar));
        assert_eq!(of("t"), None, "columns of 4: too short");
        assert_eq!(of("u"), None, "rows of 4: too short");
        assert_eq!(of("g"), None, "neither leading nor trailing");
        assert_eq!(of("v"), None, "bf16");
    }

    /// In a module: a broadcast read only by elementwise ops is held as
    /// its scalar, one also read by another op is made; the results are
    /// those of the made broadcasts, and a check that keeps the broadcast
    /// gets the whole array.
    #[test]
    fn a_module_reads_its_broadcasts_as_scalars() {
        use crate::interp::capture::{Capture, CaptureRequest};
        use crate::interp::{Interpreter, Plan, Value};
        use std::rc::Rc;
        let text = "HloModule m\n\nENTRY e {\n  x = f32[4] parameter(0)\n  \
                    c = f32[] constant(2)\n  b = f32[4] broadcast(c), dimensions={}\n  \
                    m = f32[4] multiply(x, b)\n  s = f32[4] subtract(b, m)\n  \
                    k = f32[] constant(-1)\n  t = f32[4] broadcast(k), dimensions={}\n  \
                    ROOT r = (f32[4], f32[4]) tuple(s, t)\n}\n";
        let module = crate::text::parse_module(text, "m.hlo").expect("parses");
        let comp = module.comp(module.entry());
        let id = |name: &str| {
            comp.sequence()
                .find(|&i| &*comp.instr(i).name == name)
                .expect("instruction")
        };
        let plan = Plan::of(comp, comp.root());
        assert!(
            plan.splat[id("b").index()],
            "read only by multiply and subtract"
        );
        assert!(!plan.splat[id("t").index()], "read by the tuple");
        let x = Array::new(T::F32, vec![4], Data::F32(vec![1.0, -0.5, 3.0, f32::NAN])).unwrap();
        let mut request = CaptureRequest::default();
        request.add(module.entry(), id("b"), vec![4]);
        let capture = Rc::new(Capture::new(request));
        let out = Interpreter::new(&module)
            .with_capture(capture.clone())
            .run(&[Value::array(x)])
            .expect("evaluates");
        let leaves = out.leaves();
        let bits = |a: &Array| to_bits(a);
        let s = Array::new(T::F32, vec![4], Data::F32(vec![0.0, 3.0, -4.0, f32::NAN])).unwrap();
        assert_eq!(bits(&leaves[0]), bits(&s));
        assert_eq!(leaves[1].data, Data::F32(vec![-1.0; 4]));
        drop(out);
        let kept = Rc::try_unwrap(capture).expect("one owner").into_values();
        assert_eq!(
            kept[&(module.entry(), id("b"))].data,
            Data::F32(vec![2.0; 4])
        );
    }
}
