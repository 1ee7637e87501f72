//! The softmax raises on real modules: how many forward and backward
//! softmaxes each raises, against the models in `gen_corpus.py` (and the
//! torch-neuronx BERT step).

mod common;
use common::*;
use hlo_opt::ir::verify::verify;
use hlo_opt::passes::{Pipeline, ReportEntry};

/// (file, forward raised, backward raised). Each count is the model's own:
/// one softmax per attention layer, its gradient in the training steps.
const EXPECTED: &[(&str, usize, usize)] = &[
    ("corpus/softmax_fwd_lastaxis_f32.hlo", 1, 0),
    ("corpus/softmax_fwd_lastaxis_bf16.hlo", 1, 0),
    ("corpus/softmax_fwd_lastaxis_f16.hlo", 1, 0),
    ("corpus/softmax_fwd_axis0_rank3_f32.hlo", 1, 0),
    ("corpus/softmax_fwd_axis0_rank3_bf16.hlo", 1, 0),
    ("corpus/softmax_fwd_axis0_rank3_f16.hlo", 1, 0),
    ("corpus/softmax_vjp_f32.hlo", 1, 1),
    ("corpus/softmax_vjp_bf16.hlo", 1, 1),
    ("corpus/softmax_vjp_customjvp_f32.hlo", 1, 1),
    ("corpus/softmax_vjp_customjvp_bf16.hlo", 1, 1),
    ("corpus/softmax_grad_loss_f32.hlo", 1, 1),
    ("corpus/softmax_grad_loss_bf16.hlo", 1, 1),
    ("corpus/softmax_grad_loss_customjvp_f32.hlo", 1, 1),
    ("corpus/softmax_grad_loss_customjvp_bf16.hlo", 1, 1),
    // The shared-intermediate softmaxes must not be raised.
    ("corpus/softmax_shared_exp_f32.hlo", 0, 0),
    ("corpus/softmax_shared_sum_f32.hlo", 0, 0),
    ("corpus/softmax_shared_max_f32.hlo", 0, 0),
    ("corpus/softmax_exp_used_in_loss_f32.hlo", 0, 0),
    // A masked softmax is not AwsNeuronSoftmax.
    ("corpus/softmax_where_mask_f32.hlo", 0, 0),
    ("corpus/softmax_upcast_bf16.hlo", 1, 0),
    // y is a parameter: the call is defined by the formula for any y.
    ("corpus/softmax_bwd_handwritten_f32.hlo", 0, 1),
    ("corpus/softmax_nomax_f32.hlo", 1, 0),
    ("corpus/softmax_nomax_bf16.hlo", 1, 0),
    ("corpus/softmax_recip_f32.hlo", 1, 0),
    // log_softmax is not a softmax.
    ("corpus/log_softmax_f32.hlo", 0, 0),
    ("corpus/log_softmax_bf16.hlo", 0, 0),
    ("corpus/log_softmax_grad_f32.hlo", 0, 0),
    ("corpus/mha_fwd_f32.hlo", 1, 0),
    ("corpus/mha_fwd_bf16.hlo", 1, 0),
    ("corpus/mha_dpa_fwd_f32.hlo", 1, 0),
    ("corpus/mha_train_f32.hlo", 1, 1),
    ("corpus/mha_train_customjvp_f32.hlo", 1, 1),
    ("corpus/flax_mha_train_f32.hlo", 1, 1),
    ("corpus/gpt4_fwd_f32.hlo", 4, 0),
    ("corpus/gpt4_fwd_bf16.hlo", 4, 0),
    ("corpus/gpt4_train_f32.hlo", 4, 4),
    ("corpus/gpt4_train_customjvp_f32.hlo", 4, 4),
    ("corpus/gpt4_train_sharded_f32.hlo", 4, 4),
    // Under lax.scan the forward body hands exp, the row sum and 1/(s*s)
    // to the backward loop; the backward body's gradient is raised from
    // them (its 1/(s*s) proven the forward's of the same iteration), and
    // the forward hands y over instead. One softmax and one gradient, in
    // the loop bodies.
    ("corpus/gpt4_scan_train_f32.hlo", 1, 1),
    ("corpus/control_flow_cond_while_f32.hlo", 1, 0),
    ("neuron/graphhelper_bert_single_graph_4.txt", 1, 1),
];

#[test]
fn raises_the_true_number_of_softmaxes() {
    let mut failures = Vec::new();
    for &(file, fwd, bwd) in EXPECTED {
        let mut m = parse(&data(file)).unwrap_or_else(|e| panic!("{e}"));
        let dead_before = dead_instructions(&m);
        let runs =
            Pipeline::from_names(&["native-to-custom-softmax-dx", "native-to-custom-softmax"])
                .unwrap()
                .run(&mut m)
                .unwrap_or_else(|e| panic!("{file}: {e}"));
        let count = |i: usize| {
            runs[i]
                .report
                .iter()
                .filter(|e| matches!(e, ReportEntry::Rewrote { .. }))
                .count()
        };
        let (got_bwd, got_fwd) = (count(0), count(1));
        if (got_fwd, got_bwd) != (fwd, bwd) {
            failures.push(format!(
                "{file}: raised {got_fwd} forward / {got_bwd} backward, expected {fwd} / {bwd}"
            ));
        }
        verify(&m).unwrap_or_else(|e| panic!("{file}: {e}"));
        // Nothing that computed a raised softmax is left dead (some inputs
        // have dead instructions of their own).
        let new_dead: Vec<String> = dead_instructions(&m)
            .into_iter()
            .filter(|n| !dead_before.contains(n))
            .collect();
        if !new_dead.is_empty() {
            failures.push(format!("{file}: dead instructions left: {new_dead:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn dead_instructions(m: &hlo_opt::ir::Module) -> Vec<String> {
    let mut dead = Vec::new();
    for (_, c) in m.computations() {
        for (id, i) in c.instructions() {
            if i.users().is_empty() && c.root() != id && !hlo_opt::ir::module::has_side_effect(i) {
                dead.push(i.name.to_string());
            }
        }
    }
    dead
}

#[test]
fn the_default_pipeline_raises_every_softmax_of_a_training_step() {
    // -dx (41) runs before the forward raise (42): the backward's uses of
    // exp and sum are gone when the forward raise checks for escapes.
    let mut m = parse(&data("corpus/gpt4_train_f32.hlo")).unwrap();
    Pipeline::default_pipeline().run(&mut m).unwrap();
    let targets: Vec<String> = m
        .computations()
        .flat_map(|(_, c)| {
            c.instructions()
                .filter_map(|(_, i)| i.custom_call_target().map(str::to_string))
                .collect::<Vec<_>>()
        })
        .collect();
    let count = |t: &str| targets.iter().filter(|x| *x == t).count();
    assert_eq!(count("AwsNeuronSoftmax"), 4, "{targets:?}");
    assert_eq!(count("AwsNeuronSoftmaxBackward"), 4, "{targets:?}");
}

/// Loop state elements nothing reads (not after the loop, not in the
/// condition, and in the body only to hand them on, as they are or as the
/// stack a slice is written into), and parameters of called computations
/// nothing uses.
fn unread_loop_state(m: &hlo_opt::ir::Module) -> Vec<String> {
    use hlo_opt::ir::{AttrValue, Opcode};
    let index = |c: &hlo_opt::ir::Computation, id| {
        let i = c.instr(id);
        (i.opcode == Opcode::GetTupleElement)
            .then(|| i.int_attr("index"))
            .flatten()
    };
    let mut unread = Vec::new();
    for (id, c) in m.computations() {
        if Some(id) != m.entry_opt() {
            for p in c.parameters() {
                if c.instr(p).users().is_empty() && !c.instr(p).shape.is_tuple() {
                    unread.push(format!("{}/{}", c.name, c.instr(p).name));
                }
            }
        }
        for (l, li) in c.instructions().filter(|(_, i)| i.opcode == Opcode::While) {
            let comp = |key| match li.attr(key) {
                Some(AttrValue::Comp(id)) => m.comp(*id),
                _ => panic!("{} has no {key}", li.name),
            };
            let (body, cond) = (comp("body"), comp("condition"));
            let n = li.shape.tuple_elements().map_or(0, |e| e.len());
            for k in 0..n as i64 {
                // A use of the whole tuple reads every element.
                let after = c.instr(l).users().iter().any(|&g| match index(c, g) {
                    None => true,
                    Some(j) => j == k && (!c.instr(g).users().is_empty() || c.root() == g),
                });
                let reads = |g: &hlo_opt::ir::Computation, handed_on: &[hlo_opt::ir::InstrId]| {
                    g.instr(g.parameters()[0])
                        .users()
                        .iter()
                        .any(|&r| match index(g, r) {
                            None => true,
                            Some(j) => {
                                j == k && g.instr(r).users().iter().any(|u| !handed_on.contains(u))
                            }
                        })
                };
                let root = body.root();
                let out = body.instr(root).operands()[k as usize];
                if !after && !reads(cond, &[]) && !reads(body, &[root, out]) {
                    unread.push(format!("{}/{} element {k}", c.name, li.name));
                }
            }
        }
    }
    unread
}

#[test]
fn scanned_layers_raise_in_both_loops_and_leave_no_unread_residuals() {
    use hlo_opt::driver::check_numerics::{run_checked, CheckConfig};
    use hlo_opt::passes::{default_pipeline, find_pass, PassOptions, Scope};
    for file in [
        "corpus/gpt4_scan_train_f32.hlo",
        "frontend/jax/flax_scan_transformer_train_f32.hlo",
        "frontend/jax/flax_scan_transformer_train_bf16.hlo",
        "frontend/jax/golden/scan_softmax_attn_f32.hlo",
        "frontend/jax/golden/scan_softmax_weighted_f32.hlo",
        "frontend/jax/golden/scan_softmax_weighted_bf16.hlo",
        "frontend/jax/golden/scan_softmax_fixed_weight_f32.hlo",
    ] {
        let original = parse(&data(file)).unwrap();
        assert!(unread_loop_state(&original).is_empty(), "{file}");
        // Raising the gradient alone leaves 1/(s*s) unread in the backward
        // loop: the check sees it.
        let mut dx_only = original.clone();
        let mut p = Pipeline::from_names(&["native-to-custom-softmax-dx"]).unwrap();
        p.options.scope = hlo_opt::passes::Scope::AllComputations;
        p.run(&mut dx_only).unwrap();
        assert!(!unread_loop_state(&dx_only).is_empty(), "{file}");
        let mut m = original.clone();
        let passes = default_pipeline()
            .into_iter()
            .map(|n| (find_pass(n).expect("registered").make)())
            .collect();
        let options = PassOptions {
            scope: Scope::AllComputations,
        };
        run_checked(
            &mut m,
            passes,
            &options,
            &CheckConfig::default(),
            &mut |_| {},
        )
        .unwrap_or_else(|e| panic!("{file}: {e}"));
        let count = |t: &str| {
            m.computations()
                .flat_map(|(_, c)| c.instructions())
                .filter(|(_, i)| i.custom_call_target() == Some(t))
                .count()
        };
        assert_eq!(count("AwsNeuronSoftmax"), 1, "{file}");
        assert_eq!(count("AwsNeuronSoftmaxBackward"), 1, "{file}");
        assert_eq!(unread_loop_state(&m), Vec::<String>::new(), "{file}");
        // The residuals that only rebuilt y are gone from both loops.
        let elements = |m: &hlo_opt::ir::Module| -> usize {
            m.computations()
                .flat_map(|(_, c)| c.instructions())
                .filter(|(_, i)| i.opcode == hlo_opt::ir::Opcode::While)
                .map(|(_, i)| i.shape.tuple_elements().map_or(0, |e| e.len()))
                .sum()
        };
        assert!(elements(&m) < elements(&original), "{file}");
    }
}

/// `n` softmaxes over the rows of `x`, each of the one before.
fn chained_softmaxes(n: usize) -> String {
    let mut t = String::from(
        "HloModule m\n\n\
         %max (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %m = f32[] maximum(%a, %b)\n}\n\n\
         %add (c: f32[], d: f32[]) -> f32[] {\n  %c = f32[] parameter(0)\n  %d = f32[] parameter(1)\n  ROOT %s = f32[] add(%c, %d)\n}\n\n\
         ENTRY %main (x: f32[8,128]) -> f32[8,128] {\n  %x = f32[8,128]{1,0} parameter(0)\n",
    );
    let mut last = "x".to_string();
    for i in 0..n {
        t += &format!(
            "  %ninf{i} = f32[] constant(-inf)\n\
             \x20 %max{i} = f32[8]{{0}} reduce(%{last}, %ninf{i}), dimensions={{1}}, to_apply=%max\n\
             \x20 %maxb{i} = f32[8,128]{{1,0}} broadcast(%max{i}), dimensions={{0}}\n\
             \x20 %sub{i} = f32[8,128]{{1,0}} subtract(%{last}, %maxb{i})\n\
             \x20 %exp{i} = f32[8,128]{{1,0}} exponential(%sub{i})\n\
             \x20 %zero{i} = f32[] constant(0)\n\
             \x20 %sum{i} = f32[8]{{0}} reduce(%exp{i}, %zero{i}), dimensions={{1}}, to_apply=%add\n\
             \x20 %sumb{i} = f32[8,128]{{1,0}} broadcast(%sum{i}), dimensions={{0}}\n\
             \x20 %div{i} = f32[8,128]{{1,0}} divide(%exp{i}, %sumb{i})\n"
        );
        last = format!("div{i}");
    }
    t + &format!("  ROOT %r = f32[8,128]{{1,0}} negate(%{last})\n}}\n")
}

#[test]
fn a_softmax_of_a_softmax_reads_the_call_raised_before_it() {
    // The raise of the first replaces the second's logits; the second is
    // matched again where it is (a stale match panicked, adding a call on
    // a removed instruction).
    for n in [2, 3] {
        let mut m = hlo_opt::text::parse_module(&chained_softmaxes(n), "chain.hlo")
            .unwrap_or_else(|e| panic!("{e}"));
        Pipeline::default_pipeline()
            .run(&mut m)
            .unwrap_or_else(|e| panic!("{n}: {e}"));
        verify(&m).unwrap_or_else(|e| panic!("{n}: {e}"));
        let (_, entry) = m.computations().last().unwrap();
        for i in 0..n {
            let (_, call) = entry
                .instructions()
                .find(|(_, x)| x.name.as_str() == format!("Softmax_div{i}"))
                .unwrap_or_else(|| panic!("{n}: softmax {i} not raised"));
            assert_eq!(call.custom_call_target(), Some("AwsNeuronSoftmax"));
            let logits = &entry.instr(call.operands()[0]).name;
            let expected = match i {
                0 => "x".to_string(),
                _ => format!("Softmax_div{}", i - 1),
            };
            assert_eq!(logits.as_str(), expected, "{n}: softmax {i}");
        }
    }
}
