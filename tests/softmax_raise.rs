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
