//! The reference interpreter on the 4-layer GPT train step
//! (`gpt4_train_f32.hlo`: 1,970 instructions, dots, gathers, scatters,
//! reductions; 53 outputs).
//!
//! `cargo bench --bench interp`. Inputs are seeded random values of the
//! parameters' shapes, or the refs inputs when `GPT4_TRAIN_NPZ` names the
//! case's `.npz` (from `gen_refs.py --include-big --out DIR`: its refs are
//! too big for the repo).

use criterion::{criterion_group, criterion_main, Criterion};
use hlo_opt::interp::npy::read_inputs;
use hlo_opt::interp::random::random_inputs;
use hlo_opt::interp::{evaluate, Value};
use hlo_opt::text::parse_module;
use std::time::Duration;

fn bench_interp(c: &mut Criterion) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/corpus/gpt4_train_f32.hlo"
    );
    let text = std::fs::read_to_string(path).expect("the corpus module");
    let module = parse_module(&text, "gpt4_train_f32.hlo").expect("parses");
    let inputs: Vec<Value> = match std::env::var_os("GPT4_TRAIN_NPZ") {
        Some(npz) => {
            let entry = module.comp(module.entry());
            let types: Vec<_> = entry
                .parameters()
                .iter()
                .map(|&p| entry.instr(p).shape.element_type())
                .collect();
            read_inputs(std::path::Path::new(&npz), &types)
                .expect("refs inputs")
                .into_iter()
                .map(Value::array)
                .collect()
        }
        None => random_inputs(&module, 0).expect("seeded inputs"),
    };
    let mut g = c.benchmark_group("interp");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.bench_function("gpt4_train_f32 step", |b| {
        b.iter(|| evaluate(&module, &inputs).expect("evaluates"))
    });
    g.finish();
}

criterion_group!(benches, bench_interp);
criterion_main!(benches);
