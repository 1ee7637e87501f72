//! `jax.nn.softmax(x, where=mask)` as jax 0.10.2 prints it (each
//! `jnp.where` a call of a private `_where`): the default pipeline inlines
//! the calls and raises the softmax and its gradient into
//! `select(m, AwsNeuronSoftmax(select(m, x, -inf)), 0)` and the matching
//! `AwsNeuronSoftmaxBackward`, and the interpreter gives the same outputs
//! before and after, rows masked out whole included.

mod common;
use common::*;
use hlo_opt::driver::check_numerics::{run_checked, CheckConfig};
use hlo_opt::interp::evaluate_literals;
use hlo_opt::ir::literal::LiteralData;
use hlo_opt::ir::{Computation, InstrId, Literal, Module, Opcode, PrimitiveType, Shape};
use hlo_opt::passes::{default_pipeline, find_pass, PassOptions, Pipeline};

const B: usize = 2;
const H: usize = 2;
const S: usize = 8;

/// (file, element type, forward raised, backward raised).
const MODULES: &[(&str, PrimitiveType, usize, usize)] = &[
    ("jax_softmax_where_f32_fwd", PrimitiveType::F32, 1, 0),
    ("jax_softmax_where_f32_train", PrimitiveType::F32, 1, 1),
    ("jax_softmax_where_bf16_fwd", PrimitiveType::Bf16, 1, 0),
    ("jax_softmax_where_bf16_train", PrimitiveType::Bf16, 1, 1),
];

fn module(name: &str) -> Module {
    parse(&data(&format!("frontend/jax/{name}.hlo"))).unwrap_or_else(|e| panic!("{e}"))
}

fn floats(ty: PrimitiveType, values: Vec<f32>) -> Literal {
    let data = match ty {
        PrimitiveType::F32 => LiteralData::F32(values),
        PrimitiveType::Bf16 => {
            LiteralData::Bf16(values.into_iter().map(half::bf16::from_f32).collect())
        }
        other => panic!("no floats of {other:?}"),
    };
    Literal {
        shape: Shape::array(ty, vec![B as i64, H as i64, S as i64, S as i64]),
        data,
    }
}

/// Inputs with rows masked out whole (row 0 of each batch), rows with one
/// position kept, and mixed rows; logits large enough that an unstable
/// softmax would overflow.
fn inputs(ty: PrimitiveType, train: bool) -> Vec<Literal> {
    let x: Vec<f32> = (0..B * H * S * S)
        .map(|i| ((i * 37 % 101) as f32 - 50.0) * 2.5)
        .collect();
    let mask: Vec<bool> = (0..B * S * S)
        .map(|i| {
            let (row, col) = ((i / S) % S, i % S);
            match row {
                0 => false,
                1 => col == 3,
                _ => (i * 7 + row) % 3 != 0,
            }
        })
        .collect();
    let mut args = vec![
        floats(ty, x),
        Literal {
            shape: Shape::array(PrimitiveType::Pred, vec![B as i64, 1, S as i64, S as i64]),
            data: LiteralData::Pred(mask),
        },
    ];
    if train {
        let w: Vec<f32> = (0..B * H * S * S)
            .map(|i| ((i * 13 % 29) as f32 - 14.0) / 7.0)
            .collect();
        args.push(floats(ty, w));
    }
    args
}

fn leaves(l: &Literal) -> Vec<Vec<f64>> {
    match &l.data {
        LiteralData::Tuple(parts) => parts.iter().flat_map(leaves).collect(),
        _ => vec![(0..l.data.len()).map(|i| l.get_f64(i).unwrap()).collect()],
    }
}

fn count(m: &Module, target: &str) -> usize {
    m.computations()
        .flat_map(|(_, c)| c.instructions())
        .filter(|(_, i)| i.custom_call_target() == Some(target))
        .count()
}

/// `select(mask, v, fill)` with `fill` a broadcast scalar `value`: `v`.
fn masked_value(c: &Computation, id: InstrId, value: f64) -> Option<InstrId> {
    let s = c.instr(id);
    let [_, v, fill] = s.operands()[..] else {
        return None;
    };
    let mut f = fill;
    while matches!(c.instr(f).opcode, Opcode::Broadcast | Opcode::Convert) {
        f = c.instr(f).operand(0);
    }
    let constant = c.instr(f).literal().and_then(|l| l.get_f64(0));
    (s.opcode == Opcode::Select && constant == Some(value)).then_some(v)
}

#[test]
fn the_masked_softmax_and_its_gradient_raise_and_keep_their_values() {
    for &(name, ty, fwd, bwd) in MODULES {
        let original = module(name);
        let args = inputs(ty, bwd > 0);
        let before = evaluate_literals(&original, &args).unwrap_or_else(|e| panic!("{e}"));
        let mut m = original.clone();
        Pipeline::default_pipeline()
            .run(&mut m)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(count(&m, "AwsNeuronSoftmax"), fwd, "{name}");
        assert_eq!(count(&m, "AwsNeuronSoftmaxBackward"), bwd, "{name}");
        // No call is left, nor the callees.
        let calls = m
            .computations()
            .flat_map(|(_, c)| c.instructions())
            .filter(|(_, i)| i.opcode == Opcode::Call)
            .count();
        assert_eq!(calls, 0, "{name}");
        assert!(m.find_computation("_where.1").is_none(), "{name}");

        // The forms: select(m, Softmax(select(m, x, -inf)), 0), and the
        // gradient select(m, SoftmaxBackward(select(m, dLdy, 0), y), 0).
        let c = m.comp(m.entry());
        for (id, i) in c.instructions() {
            let Some(target) = i.custom_call_target() else {
                continue;
            };
            let users = i.users();
            let masked_out = !users.is_empty()
                && users.iter().all(|&u| {
                    masked_value(c, u, 0.0) == Some(id)
                        || c.instr(u).custom_call_target() == Some("AwsNeuronSoftmaxBackward")
                });
            assert!(masked_out, "{name}: {} is not masked to 0", i.name);
            match target {
                "AwsNeuronSoftmax" => assert!(
                    masked_value(c, i.operand(0), f64::NEG_INFINITY).is_some(),
                    "{name}: the logits are not select(m, x, -inf)"
                ),
                "AwsNeuronSoftmaxBackward" => {
                    assert!(
                        masked_value(c, i.operand(0), 0.0).is_some(),
                        "{name}: dLdy is not select(m, dLdy, 0)"
                    );
                    assert_eq!(
                        c.instr(i.operand(1)).custom_call_target(),
                        Some("AwsNeuronSoftmax"),
                        "{name}: y is not the raised softmax"
                    );
                }
                other => panic!("{name}: unexpected call {other}"),
            }
        }

        let after = evaluate_literals(&m, &args).unwrap_or_else(|e| panic!("{e}"));
        let tolerance = if ty == PrimitiveType::Bf16 {
            2e-2
        } else {
            1e-5
        };
        for (k, (b, a)) in leaves(&before).iter().zip(leaves(&after)).enumerate() {
            assert_eq!(b.len(), a.len());
            for (i, (&x, &y)) in b.iter().zip(&a).enumerate() {
                assert!(
                    x.is_finite() && y.is_finite(),
                    "{name} out{k}[{i}]: {x} before, {y} after"
                );
                assert!(
                    (x - y).abs() <= tolerance * (1.0 + x.abs()),
                    "{name} out{k}[{i}]: {x} before, {y} after"
                );
                // Row 0 of each batch is masked out whole: 0 either way.
                if (i / S) % S == 0 {
                    assert_eq!((x, y), (0.0, 0.0), "{name} out{k}[{i}]");
                }
            }
        }
    }
}

#[test]
fn check_numerics_proves_the_masked_raises() {
    for &(name, _, _, _) in MODULES {
        let mut m = module(name);
        let passes = default_pipeline()
            .into_iter()
            .map(|n| (find_pass(n).expect("registered").make)())
            .collect();
        let mut changed = Vec::new();
        run_checked(
            &mut m,
            passes,
            &PassOptions::default(),
            &CheckConfig::default(),
            &mut |c| {
                if c.changed {
                    changed.push(c.pass.to_string());
                }
            },
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            changed.iter().any(|p| p == "native-to-custom-softmax"),
            "{name}: {changed:?}"
        );
    }
}

/// A call that hides the sum from the raise is named in the report.
#[test]
fn a_softmax_a_call_splits_is_reported() {
    let mut m = module("jax_softmax_where_f32_fwd");
    let runs = Pipeline::from_names(&["native-to-custom-softmax"])
        .unwrap()
        .run(&mut m)
        .unwrap();
    let lines: Vec<String> = runs[0].report.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        lines,
        [
            "skipped main.6/div.7: div<-exp does not match div<-reduce<-exp: the sum adds \
          call jit__where_.6 (to_apply=_where.1), which hides what it computes"
        ]
    );
}
