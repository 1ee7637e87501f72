//! The interpreter's fast paths for reducers and sort comparators (scalar
//! programs, key sorts, top-k by keys) against the general evaluator: the
//! same reduce or sort done here by calling the computation per element
//! with `Interpreter::call`, on data full of NaN (both signs), -0/+0,
//! infinities and ties. The results must be the same bits.

use half::{bf16, f16};
use hlo_opt::interp::array::{Array, Data, Value};
use hlo_opt::interp::sort::merge_sort;
use hlo_opt::interp::{evaluate, Interpreter};
use hlo_opt::ir::{Module, PrimitiveType};
use hlo_opt::text::parse_module;

fn module(text: &str) -> Module {
    parse_module(text, "test.hlo").unwrap_or_else(|e| panic!("{e}"))
}

/// A small deterministic generator (the tests need no crate for this).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    /// A value that makes reducers and comparators work: NaN of either
    /// sign, signed zeros, infinities, and few distinct finite values (ties).
    fn tricky(&mut self) -> f64 {
        match self.next() % 12 {
            0 => f64::NAN,
            1 => -f64::NAN,
            2 => 0.0,
            3 => -0.0,
            4 => f64::INFINITY,
            5 => f64::NEG_INFINITY,
            _ => (self.next() % 9) as f64 * 0.5 - 2.0,
        }
    }

    /// Finite values with ties, no NaN.
    fn plain(&mut self) -> f64 {
        match self.next() % 6 {
            0 => 0.0,
            1 => -0.0,
            _ => (self.next() % 11) as f64 - 5.0,
        }
    }
}

fn floats(ty: PrimitiveType, dims: &[usize], v: &[f64]) -> Array {
    let data = match ty {
        PrimitiveType::F32 => Data::F32(v.iter().map(|&x| x as f32).collect()),
        PrimitiveType::F16 => Data::F16(v.iter().map(|&x| f16::from_f64(x)).collect()),
        PrimitiveType::Bf16 => Data::Bf16(v.iter().map(|&x| bf16::from_f64(x)).collect()),
        _ => panic!("not a float type here"),
    };
    Array::new(ty, dims.to_vec(), data).unwrap()
}

fn ints(ty: PrimitiveType, dims: &[usize], v: &[i64]) -> Array {
    let data = if ty.is_signed_int() {
        Data::S(v.to_vec())
    } else {
        Data::U(v.iter().map(|&x| x as u64).collect())
    };
    Array::new(ty, dims.to_vec(), data).unwrap()
}

/// The elements' bits (NaN compares unequal to itself as a float).
fn bits(d: &Data) -> Vec<u64> {
    match d {
        Data::F32(v) => v.iter().map(|x| u64::from(x.to_bits())).collect(),
        Data::F16(v) => v.iter().map(|x| u64::from(x.to_bits())).collect(),
        Data::Bf16(v) => v.iter().map(|x| u64::from(x.to_bits())).collect(),
        Data::F64(v) => v.iter().map(|x| x.to_bits()).collect(),
        Data::S(v) => v.iter().map(|&x| x as u64).collect(),
        Data::U(v) => v.clone(),
        Data::Pred(v) => v.iter().map(|&x| u64::from(x)).collect(),
        _ => panic!("not compared here"),
    }
}

fn scalar(a: &Array, i: usize) -> Value {
    Value::array(Array::new(a.ty, vec![], a.data.take(&[i])).unwrap())
}

fn outputs(v: &Value) -> Vec<Vec<u64>> {
    v.leaves().iter().map(|a| bits(&a.data)).collect()
}

/// Reduces 2-D `xs` over `dim` as the general path does: the reducer
/// called per element, each output from its init, elements in order.
fn general_reduce(
    m: &Module,
    reducer: &str,
    xs: &[Array],
    inits: &[Array],
    dim: usize,
) -> Vec<Vec<u64>> {
    let it = Interpreter::new(m);
    let cid = m.find_computation(reducer).expect("reducer");
    let (rows, cols) = (xs[0].dims[0], xs[0].dims[1]);
    let (nout, r) = if dim == 1 { (rows, cols) } else { (cols, rows) };
    let mut outs: Vec<Vec<u64>> = vec![Vec::new(); xs.len()];
    for o in 0..nout {
        let mut acc: Vec<Value> = inits.iter().map(|i| Value::array(i.clone())).collect();
        for j in 0..r {
            let pos = if dim == 1 { o * cols + j } else { j * cols + o };
            let mut args = acc.clone();
            args.extend(xs.iter().map(|x| scalar(x, pos)));
            let res = it.call(cid, &args).unwrap();
            acc = match &res {
                Value::Tuple(t) => t.to_vec(),
                v => vec![v.clone()],
            };
        }
        for (k, a) in acc.iter().enumerate() {
            outs[k].extend(bits(&a.as_array().unwrap().data));
        }
    }
    outs
}

/// Sorts 1-D or 2-D `xs` along the last dimension as the general path
/// does: a stable merge sort calling the comparator per comparison.
fn general_sort(m: &Module, comparator: &str, xs: &[Array]) -> Vec<Vec<u64>> {
    let it = Interpreter::new(m);
    let cid = m.find_computation(comparator).expect("comparator");
    let row = *xs[0].dims.last().unwrap();
    let mut perm: Vec<usize> = Vec::new();
    for r in 0..xs[0].len() / row {
        let mut v: Vec<usize> = (r * row..(r + 1) * row).collect();
        merge_sort(&mut v, &mut |i, j| {
            let mut args = Vec::new();
            for x in xs {
                args.push(scalar(x, i));
                args.push(scalar(x, j));
            }
            let res = it.call(cid, &args)?;
            match &res.as_array()?.data {
                Data::Pred(p) => Ok(p[0]),
                _ => panic!("comparator result"),
            }
        })
        .unwrap();
        perm.extend(v);
    }
    xs.iter().map(|x| bits(&x.data.take(&perm))).collect()
}

const ARGMAX_F32: &str = r#"
%argmax_f32 (a: f32[], ai: s32[], b: f32[], bi: s32[]) -> (f32[], s32[]) {
  %a = f32[] parameter(0)
  %b = f32[] parameter(2)
  %gt = pred[] compare(%a, %b), direction=GT
  %ne = pred[] compare(%a, %a), direction=NE
  %or = pred[] or(%gt, %ne)
  %v = f32[] select(%or, %a, %b)
  %eq = pred[] compare(%a, %b), direction=EQ
  %ai = s32[] parameter(1)
  %bi = s32[] parameter(3)
  %lt = pred[] compare(%ai, %bi), direction=LT
  %and = pred[] and(%eq, %lt)
  %or2 = pred[] or(%or, %and)
  %i = s32[] select(%or2, %ai, %bi)
  ROOT %t = (f32[], s32[]) tuple(%v, %i)
}
"#;

const ARGMIN_BF16: &str = r#"
%argmin_bf16 (a: bf16[], ai: s32[], b: bf16[], bi: s32[]) -> (bf16[], s32[]) {
  %a = bf16[] parameter(0)
  %b = bf16[] parameter(2)
  %lt = pred[] compare(%a, %b), direction=LT
  %ne = pred[] compare(%a, %a), direction=NE
  %or = pred[] or(%lt, %ne)
  %v = bf16[] select(%or, %a, %b)
  %eq = pred[] compare(%a, %b), direction=EQ
  %ai = s32[] parameter(1)
  %bi = s32[] parameter(3)
  %lti = pred[] compare(%ai, %bi), direction=LT
  %and = pred[] and(%eq, %lti)
  %or2 = pred[] or(%or, %and)
  %i = s32[] select(%or2, %ai, %bi)
  ROOT %t = (bf16[], s32[]) tuple(%v, %i)
}
"#;

const ARGMIN_S32: &str = r#"
%argmin_s32 (a: s32[], ai: s32[], b: s32[], bi: s32[]) -> (s32[], s32[]) {
  %a = s32[] parameter(0)
  %b = s32[] parameter(2)
  %lt = pred[] compare(%a, %b), direction=LT
  %v = s32[] select(%lt, %a, %b)
  %eq = pred[] compare(%a, %b), direction=EQ
  %ai = s32[] parameter(1)
  %bi = s32[] parameter(3)
  %lti = pred[] compare(%ai, %bi), direction=LT
  %and = pred[] and(%eq, %lti)
  %or = pred[] or(%lt, %and)
  %i = s32[] select(%or, %ai, %bi)
  ROOT %t = (s32[], s32[]) tuple(%v, %i)
}
"#;

/// Not associative, with a constant picked and pred logic (not, xor): the
/// fold order and where each result comes from must be the general path's.
const ODD_F16: &str = r#"
%odd_f16 (a: f16[], ai: u32[], b: f16[], bi: u32[]) -> (f16[], u32[]) {
  %a = f16[] parameter(0)
  %b = f16[] parameter(2)
  %ai = u32[] parameter(1)
  %bi = u32[] parameter(3)
  %z = f16[] constant(-0)
  %ge = pred[] compare(%a, %b), direction=GE
  %n = pred[] not(%ge)
  %tot = pred[] compare(%b, %z), direction=LT, type=TOTALORDER
  %x = pred[] xor(%n, %tot)
  %v = f16[] select(%x, %b, %z)
  %w = f16[] select(%n, %v, %a)
  %gi = pred[] compare(%ai, %bi), direction=GT, type=SIGNED
  %i = u32[] select(%gi, %bi, %ai)
  ROOT %t = (f16[], u32[]) tuple(%w, %i)
}
"#;

fn reduce_module(
    reducer_text: &str,
    reducer: &str,
    ty: &str,
    ity: &str,
    dims: [usize; 2],
    dim: usize,
) -> String {
    let out = dims[1 - dim];
    format!(
        "HloModule m\n{reducer_text}\nENTRY %e (x: {ty}[{r},{c}], i: {ity}[{r},{c}], x0: {ty}[], i0: {ity}[]) -> ({ty}[{out}], {ity}[{out}]) {{\n  %x = {ty}[{r},{c}] parameter(0)\n  %i = {ity}[{r},{c}] parameter(1)\n  %x0 = {ty}[] parameter(2)\n  %i0 = {ity}[] parameter(3)\n  ROOT %red = ({ty}[{out}], {ity}[{out}]) reduce(%x, %i, %x0, %i0), dimensions={{{dim}}}, to_apply=%{reducer}\n}}\n",
        r = dims[0],
        c = dims[1],
    )
}

fn check_reduce(
    reducer_text: &str,
    reducer: &str,
    ty: PrimitiveType,
    ity: PrimitiveType,
    seed: u64,
) {
    let mut g = Lcg(seed);
    for (dims, dim) in [([7, 130], 1), ([7, 130], 0), ([1, 1], 1), ([3, 0], 1)] {
        let n = dims[0] * dims[1];
        let v: Vec<f64> = (0..n).map(|_| g.tricky()).collect();
        let x = if ty.is_float() {
            floats(ty, &dims, &v)
        } else {
            ints(
                ty,
                &dims,
                &v.iter()
                    .map(|x| if x.is_finite() { *x as i64 } else { 3 })
                    .collect::<Vec<_>>(),
            )
        };
        // Few distinct indices: ties on the index too.
        let idx: Vec<i64> = (0..n).map(|_| (g.next() % 5) as i64).collect();
        let i = ints(ity, &dims, &idx);
        let x0 = if ty.is_float() {
            floats(ty, &[], &[g.tricky()])
        } else {
            ints(ty, &[], &[2])
        };
        let i0 = ints(ity, &[], &[1]);
        let text = reduce_module(
            reducer_text,
            reducer,
            &ty.to_string(),
            &ity.to_string(),
            dims,
            dim,
        );
        let m = module(&text);
        let args: Vec<Value> = [&x, &i, &x0, &i0]
            .iter()
            .map(|a| Value::array((*a).clone()))
            .collect();
        let fast = evaluate(&m, &args).unwrap();
        let want = general_reduce(
            &m,
            reducer,
            &[x.clone(), i.clone()],
            &[x0.clone(), i0.clone()],
            dim,
        );
        assert_eq!(outputs(&fast), want, "{reducer} on {dims:?} over {dim}");
    }
}

#[test]
fn argmax_reducer_matches_general() {
    for seed in 0..4 {
        check_reduce(
            ARGMAX_F32,
            "argmax_f32",
            PrimitiveType::F32,
            PrimitiveType::S32,
            seed,
        );
    }
}

#[test]
fn argmin_reducers_match_general() {
    for seed in 0..4 {
        check_reduce(
            ARGMIN_BF16,
            "argmin_bf16",
            PrimitiveType::Bf16,
            PrimitiveType::S32,
            seed,
        );
        check_reduce(
            ARGMIN_S32,
            "argmin_s32",
            PrimitiveType::S32,
            PrimitiveType::S32,
            seed,
        );
    }
}

#[test]
fn unusual_reducer_matches_general() {
    for seed in 0..4 {
        check_reduce(
            ODD_F16,
            "odd_f16",
            PrimitiveType::F16,
            PrimitiveType::U32,
            seed,
        );
    }
}

/// One output, a pred reducer that is not commutative: the fold order.
#[test]
fn pred_reducer_keeps_the_fold_order() {
    let text = r#"HloModule m
%imp (p: pred[], q: pred[]) -> pred[] {
  %p = pred[] parameter(0)
  %q = pred[] parameter(1)
  %np = pred[] not(%p)
  ROOT %r = pred[] or(%np, %q)
}
ENTRY %e (x: pred[5,9]) -> pred[5] {
  %x = pred[5,9] parameter(0)
  %c = pred[] constant(false)
  ROOT %r = pred[5] reduce(%x, %c), dimensions={1}, to_apply=%imp
}
"#;
    let m = module(text);
    let mut g = Lcg(7);
    let x = Array::new(
        PrimitiveType::Pred,
        vec![5, 9],
        Data::Pred((0..45).map(|_| g.next() % 2 == 0).collect()),
    )
    .unwrap();
    let c = Array::new(PrimitiveType::Pred, vec![], Data::Pred(vec![false])).unwrap();
    let fast = evaluate(&m, &[Value::array(x.clone())]).unwrap();
    let want = general_reduce(&m, "imp", &[x], &[c], 1);
    assert_eq!(outputs(&fast), want);
}

const TOTAL_F32: &str = r#"
%total_f32 (a: f32[], b: f32[]) -> pred[] {
  %a = f32[] parameter(0)
  %ne = pred[] compare(%a, %a), direction=NE
  %nan = f32[] constant(nan)
  %zero = f32[] constant(0)
  %eq = pred[] compare(%a, %zero), direction=EQ
  %s = f32[] select(%eq, %zero, %a)
  %ca = f32[] select(%ne, %nan, %s)
  %b = f32[] parameter(1)
  %ne2 = pred[] compare(%b, %b), direction=NE
  %eq2 = pred[] compare(%b, %zero), direction=EQ
  %s2 = f32[] select(%eq2, %zero, %b)
  %cb = f32[] select(%ne2, %nan, %s2)
  ROOT %lt = pred[] compare(%ca, %cb), direction=LT, type=TOTALORDER
}
"#;

const ARGSORT_BF16: &str = r#"
%argsort_bf16 (a: bf16[], b: bf16[], i: s32[], j: s32[]) -> pred[] {
  %i = s32[] parameter(2)
  %j = s32[] parameter(3)
  %a = bf16[] parameter(0)
  %ne = pred[] compare(%a, %a), direction=NE
  %nan = bf16[] constant(nan)
  %zero = bf16[] constant(0)
  %eq = pred[] compare(%a, %zero), direction=EQ
  %s = bf16[] select(%eq, %zero, %a)
  %ca = bf16[] select(%ne, %nan, %s)
  %b = bf16[] parameter(1)
  %ne2 = pred[] compare(%b, %b), direction=NE
  %eq2 = pred[] compare(%b, %zero), direction=EQ
  %s2 = bf16[] select(%eq2, %zero, %b)
  %cb = bf16[] select(%ne2, %nan, %s2)
  ROOT %lt = pred[] compare(%ca, %cb), direction=LT, type=TOTALORDER
}
"#;

const KEY_VAL: &str = r#"
%key_val (a: f16[], b: f16[], c: s32[], d: s32[], e: u32[], f: u32[]) -> pred[] {
  %e = u32[] parameter(4)
  %f = u32[] parameter(5)
  %a = f16[] parameter(0)
  %ne = pred[] compare(%a, %a), direction=NE
  %nan = f16[] constant(nan)
  %zero = f16[] constant(0)
  %eq = pred[] compare(%a, %zero), direction=EQ
  %s = f16[] select(%eq, %zero, %a)
  %ca = f16[] select(%ne, %nan, %s)
  %b = f16[] parameter(1)
  %ne2 = pred[] compare(%b, %b), direction=NE
  %eq2 = pred[] compare(%b, %zero), direction=EQ
  %s2 = f16[] select(%eq2, %zero, %b)
  %cb = f16[] select(%ne2, %nan, %s2)
  %lt = pred[] compare(%ca, %cb), direction=LT, type=TOTALORDER
  %eqt = pred[] compare(%ca, %cb), direction=EQ, type=TOTALORDER
  %c = s32[] parameter(2)
  %d = s32[] parameter(3)
  %lti = pred[] compare(%c, %d), direction=LT
  %and = pred[] and(%eqt, %lti)
  ROOT %or = pred[] or(%lt, %and)
}
"#;

/// Sorts `xs` (all of `dims`) along the last dimension with the
/// comparator, through `evaluate`, and through the general path.
fn check_sort(comp_text: &str, comparator: &str, xs: &[Array]) {
    let dims = &xs[0].dims;
    let shape = |a: &Array| {
        format!(
            "{}[{}]",
            a.ty,
            dims.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(",")
        )
    };
    let params: Vec<String> = xs
        .iter()
        .enumerate()
        .map(|(k, a)| format!("p{k}: {}", shape(a)))
        .collect();
    let body: Vec<String> = xs
        .iter()
        .enumerate()
        .map(|(k, a)| format!("  %p{k} = {} parameter({k})", shape(a)))
        .collect();
    let names: Vec<String> = (0..xs.len()).map(|k| format!("%p{k}")).collect();
    let out: Vec<String> = xs.iter().map(shape).collect();
    let text = format!(
        "HloModule m\n{comp_text}\nENTRY %e ({}) -> ({}) {{\n{}\n  ROOT %s = ({}) sort({}), dimensions={{{}}}, is_stable=true, to_apply=%{comparator}\n}}\n",
        params.join(", "),
        out.join(", "),
        body.join("\n"),
        out.join(", "),
        names.join(", "),
        dims.len() - 1
    );
    let m = module(&text);
    let args: Vec<Value> = xs.iter().map(|a| Value::array(a.clone())).collect();
    let fast = evaluate(&m, &args).unwrap();
    assert_eq!(
        outputs(&fast),
        general_sort(&m, comparator, xs),
        "{comparator} on {dims:?}"
    );
}

#[test]
fn total_order_comparators_match_general() {
    for seed in 0..4 {
        let mut g = Lcg(seed);
        let v: Vec<f64> = (0..6 * 150).map(|_| g.tricky()).collect();
        check_sort(
            TOTAL_F32,
            "total_f32",
            &[floats(PrimitiveType::F32, &[6, 150], &v)],
        );
        let idx: Vec<i64> = (0..6 * 150).map(|i| i % 150).collect();
        check_sort(
            ARGSORT_BF16,
            "argsort_bf16",
            &[
                floats(PrimitiveType::Bf16, &[6, 150], &v),
                ints(PrimitiveType::S32, &[6, 150], &idx),
            ],
        );
        let k: Vec<f64> = (0..500).map(|_| g.tricky()).collect();
        let b: Vec<i64> = (0..500).map(|_| (g.next() % 4) as i64 - 2).collect();
        let c: Vec<i64> = (0..500).map(|i| i as i64).collect();
        check_sort(
            KEY_VAL,
            "key_val",
            &[
                floats(PrimitiveType::F16, &[500], &k),
                ints(PrimitiveType::S32, &[500], &b),
                ints(PrimitiveType::U32, &[500], &c),
            ],
        );
    }
}

fn one_compare(ty: &str, dir: &str, typ: &str) -> String {
    format!(
        "\n%cmp (a: {ty}[], b: {ty}[], i: s32[], j: s32[]) -> pred[] {{\n  %a = {ty}[] parameter(0)\n  %b = {ty}[] parameter(1)\n  %i = s32[] parameter(2)\n  %j = s32[] parameter(3)\n  ROOT %c = pred[] compare(%a, %b), direction={dir}{typ}\n}}\n"
    )
}

/// A single compare on parameters 0 and 1 (the key sort when it is a
/// strict weak order, the merge sort otherwise), with positions carried.
#[test]
fn single_compare_sorts_match_general() {
    for seed in 0..3 {
        let mut g = Lcg(seed);
        let pos: Vec<i64> = (0..4 * 200).map(|i| i % 200).collect();
        let pos = ints(PrimitiveType::S32, &[4, 200], &pos);
        let tricky: Vec<f64> = (0..800).map(|_| g.tricky()).collect();
        let plain: Vec<f64> = (0..800).map(|_| g.plain()).collect();
        for dir in ["LT", "GT", "LE", "GE"] {
            for typ in ["", ", type=TOTALORDER"] {
                for v in [&tricky, &plain] {
                    for ty in [PrimitiveType::F32, PrimitiveType::Bf16] {
                        let x = floats(ty, &[4, 200], v);
                        check_sort(
                            &one_compare(&ty.to_string(), dir, typ),
                            "cmp",
                            &[x, pos.clone()],
                        );
                    }
                }
            }
        }
        // Integers under their own and the other signedness.
        let iv: Vec<i64> = (0..800).map(|_| (g.next() % 7) as i64 - 3).collect();
        for (ty, typ) in [
            (PrimitiveType::S32, ""),
            (PrimitiveType::S32, ", type=UNSIGNED"),
            (PrimitiveType::S8, ", type=UNSIGNED"),
            (PrimitiveType::U32, ""),
            (PrimitiveType::U32, ", type=SIGNED"),
        ] {
            let vals: Vec<i64> = if ty.is_signed_int() {
                iv.clone()
            } else {
                iv.iter()
                    .map(|&x| if x < 0 { (1i64 << 32) + x } else { x })
                    .collect()
            };
            for dir in ["LT", "GT"] {
                let x = ints(ty, &[4, 200], &vals);
                check_sort(
                    &one_compare(&ty.to_string(), dir, typ),
                    "cmp",
                    &[x, pos.clone()],
                );
            }
        }
    }
}

/// The `topk` op: largest (or smallest) first in total order, ties in
/// index order, as a stable sort with that compare has them.
#[test]
fn topk_op_matches_a_general_sort() {
    for (seed, largest) in [(0, true), (1, false), (2, true)] {
        let mut g = Lcg(seed);
        let v: Vec<f64> = (0..5 * 300).map(|_| g.tricky()).collect();
        let x = floats(PrimitiveType::F32, &[5, 300], &v);
        let k = 17;
        let text = format!(
            "HloModule m\nENTRY %e (x: f32[5,300]) -> (f32[5,{k}], s32[5,{k}]) {{\n  %x = f32[5,300] parameter(0)\n  ROOT %t = (f32[5,{k}], s32[5,{k}]) topk(%x), k={k}, largest={largest}\n}}\n"
        );
        let m = module(&text);
        let got = outputs(&evaluate(&m, &[Value::array(x.clone())]).unwrap());
        let dir = if largest { "GT" } else { "LT" };
        let sm = module(&format!(
            "HloModule s\n{}\nENTRY %e (x: f32[1]) -> f32[1] {{\n  ROOT %x = f32[1] parameter(0)\n}}\n",
            one_compare("f32", dir, ", type=TOTALORDER")
        ));
        let pos: Vec<i64> = (0..5 * 300).map(|i| i % 300).collect();
        let sorted = general_sort(&sm, "cmp", &[x, ints(PrimitiveType::S32, &[5, 300], &pos)]);
        let first_k = |col: &Vec<u64>| -> Vec<u64> {
            col.chunks(300).flat_map(|r| r[..k].to_vec()).collect()
        };
        assert_eq!(
            got,
            vec![first_k(&sorted[0]), first_k(&sorted[1])],
            "largest={largest}"
        );
    }
}

/// A reducer without constants, compares only within an operand's pair:
/// run as a table of the pairs' classes. Not JAX's rule: NaN skipped, the
/// last index on ties, the index chosen by pred logic of its own (xor,
/// not), so the table is not one fixed rule.
const LAST_MAX_F32: &str = r#"
%last_max (a: f32[], ai: u32[], b: f32[], bi: u32[]) -> (f32[], u32[]) {
  %a = f32[] parameter(0)
  %b = f32[] parameter(2)
  %ai = u32[] parameter(1)
  %bi = u32[] parameter(3)
  %ge = pred[] compare(%b, %a), direction=GE
  %anan = pred[] compare(%a, %a), direction=NE
  %bnum = pred[] compare(%b, %b), direction=EQ
  %take = pred[] and(%anan, %bnum)
  %tv = pred[] or(%ge, %take)
  %v = f32[] select(%tv, %b, %a)
  %lt = pred[] compare(%ai, %bi), direction=LT
  %x = pred[] xor(%tv, %lt)
  %n = pred[] not(%x)
  %ti = pred[] and(%tv, %n)
  %i = u32[] select(%ti, %bi, %ai)
  ROOT %t = (f32[], u32[]) tuple(%v, %i)
}
"#;

/// Compares across the two operands (a value against an index of the same
/// type): not a pair table; the per-element program gives the same bits.
const CROSS_S32: &str = r#"
%cross (a: s32[], ai: s32[], b: s32[], bi: s32[]) -> (s32[], s32[]) {
  %a = s32[] parameter(0)
  %b = s32[] parameter(2)
  %ai = s32[] parameter(1)
  %bi = s32[] parameter(3)
  %gt = pred[] compare(%b, %ai), direction=GT
  %v = s32[] select(%gt, %b, %a)
  %i = s32[] select(%gt, %bi, %ai)
  ROOT %t = (s32[], s32[]) tuple(%v, %i)
}
"#;

#[test]
fn pair_table_reducers_match_general() {
    for seed in 0..4 {
        check_reduce(
            LAST_MAX_F32,
            "last_max",
            PrimitiveType::F32,
            PrimitiveType::U32,
            seed,
        );
        check_reduce(
            CROSS_S32,
            "cross",
            PrimitiveType::S32,
            PrimitiveType::S32,
            seed,
        );
    }
}

/// Which reducers the pair table takes: JAX's argmax/argmin and the one
/// above; not one with a constant, a compare across operands or a
/// total-order compare (whose -0/+0 and NaN signs a class does not see).
#[test]
fn pair_table_applies_where_exact() {
    use hlo_opt::interp::scalar_prog::Prog;
    let table = |text: &str, name: &str| {
        let m = module(&format!(
            "HloModule m\n{text}\nENTRY %e (x: f32[1]) -> f32[1] {{\n  ROOT %x = f32[1] parameter(0)\n}}\n"
        ));
        let cid = m.find_computation(name).expect("reducer");
        Prog::compile(&m, cid)
            .expect("compiles")
            .pair_table()
            .is_some()
    };
    assert!(table(ARGMAX_F32, "argmax_f32"));
    assert!(table(ARGMIN_BF16, "argmin_bf16"));
    assert!(table(ARGMIN_S32, "argmin_s32"));
    assert!(table(LAST_MAX_F32, "last_max"));
    assert!(!table(ODD_F16, "odd_f16"));
    assert!(!table(CROSS_S32, "cross"));
    let total = ARGMAX_F32.replace("direction=GT", "direction=GT, type=TOTALORDER");
    assert!(!table(&total, "argmax_f32"));
}

/// XLA's `approx_max_k` on CPU: a sort of (values, positions), then slices
/// of the first k. Only those are ordered here (a selection); they must be
/// the full sort's, ties (-0/+0 too) in position order, NaN rows through
/// the merge sort.
#[test]
fn sort_read_through_slices_matches_a_full_sort() {
    let (rows, row) = (5, 300);
    for seed in 0..3 {
        let mut g = Lcg(seed);
        let plain: Vec<f64> = (0..rows * row).map(|_| g.plain()).collect();
        let tricky: Vec<f64> = (0..rows * row).map(|_| g.tricky()).collect();
        for v in [&plain, &tricky] {
            for dir in ["GT", "LT"] {
                for (start, limit, stride) in [(0, 1, 1), (0, 16, 1), (3, 40, 2), (0, row, 1)] {
                    let x = floats(PrimitiveType::F32, &[rows, row], v);
                    let k = (limit - start).div_ceil(stride);
                    let body = |full: bool| {
                        let extra = if full {
                            format!(", f32[{rows},{row}], s32[{rows},{row}]")
                        } else {
                            String::new()
                        };
                        let extra_ops = if full { ", %v, %p" } else { "" };
                        format!(
                            "HloModule m\n{}\nENTRY %e (x: f32[{rows},{row}]) -> (f32[{rows},{k}], s32[{rows},{k}]{extra}) {{\n  %x = f32[{rows},{row}] parameter(0)\n  %io = s32[{row}] iota(), iota_dimension=0\n  %i = s32[{rows},{row}] broadcast(%io), dimensions={{1}}\n  %s = (f32[{rows},{row}], s32[{rows},{row}]) sort(%x, %i), dimensions={{1}}, to_apply=%cmp\n  %v = f32[{rows},{row}] get-tuple-element(%s), index=0\n  %p = s32[{rows},{row}] get-tuple-element(%s), index=1\n  %vk = f32[{rows},{k}] slice(%v), slice={{[0:{rows}], [{start}:{limit}:{stride}]}}\n  %pk = s32[{rows},{k}] slice(%p), slice={{[0:{rows}], [{start}:{limit}:{stride}]}}\n  ROOT %t = (f32[{rows},{k}], s32[{rows},{k}]{extra}) tuple(%vk, %pk{extra_ops})\n}}\n",
                            one_compare("f32", dir, "")
                        )
                    };
                    let args = [Value::array(x.clone())];
                    let sliced = outputs(&evaluate(&module(&body(false)), &args).unwrap());
                    let full = outputs(&evaluate(&module(&body(true)), &args).unwrap());
                    assert_eq!(sliced[..], full[..2], "{dir} [{start}:{limit}:{stride}]");
                    // And the full sort is the general path's.
                    let pos: Vec<i64> = (0..rows * row).map(|i| (i % row) as i64).collect();
                    let sm = module(&body(true));
                    let want = general_sort(
                        &sm,
                        "cmp",
                        &[x.clone(), ints(PrimitiveType::S32, &[rows, row], &pos)],
                    );
                    assert_eq!(full[2..], want[..], "{dir} full sort");
                }
            }
        }
    }
}
