//! The softmax raises scale linearly: the 48-layer GPT train step
//! (`tests/data/large/gpt48_train_f32.hlo`, 48 forward and 48 backward
//! softmaxes) and the same entry computation repeated 4 and 16 times.
//!
//! `cargo bench --bench softmax_raise`; compare the times across scales.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use hlo_opt::ir::{InstrId, Instruction, Module, Opcode, Payload, Shape};
use hlo_opt::passes::Pipeline;
use hlo_opt::text::parse_module;
use std::collections::HashMap;
use std::time::Duration;

/// The module with its entry body repeated `copies` times side by side,
/// each copy with parameters of its own, all roots gathered in one tuple.
fn scaled(base: &Module, copies: usize) -> Module {
    let mut m = base.clone();
    let entry = m.entry();
    let original: Vec<InstrId> = m.comp(entry).sequence().collect();
    let mut roots = vec![m.comp(entry).root()];
    let params = m.comp(entry).parameters().len() as i64;
    for k in 1..copies {
        let mut map: HashMap<InstrId, InstrId> = HashMap::new();
        for &id in &original {
            let instr = m.comp(entry).instr(id);
            let operands: Vec<InstrId> = instr.operands().iter().map(|o| map[o]).collect();
            let mut copy = instr.clone_with_operands(operands);
            copy.name = format!("{}.copy{k}", instr.name).into();
            if let Payload::Parameter(n) = copy.payload {
                copy.payload = Payload::Parameter(n + k as i64 * params);
            }
            let new = m.add_instruction(entry, copy);
            map.insert(id, new);
        }
        roots.push(map[&m.comp(entry).root()]);
    }
    if copies > 1 {
        let shape = Shape::Tuple(
            roots
                .iter()
                .map(|&r| Shape::clone(&m.comp(entry).instr(r).shape))
                .collect(),
        );
        let t = Instruction::new("all_copies", Opcode::Tuple, shape).with_operands(roots);
        let t = m.add_instruction(entry, t);
        m.comp_mut(entry).set_root(t);
    }
    m
}

fn bench_raise(c: &mut Criterion) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/large/gpt48_train_f32.hlo"
    );
    let text = std::fs::read_to_string(path).expect("the large module is in tests/data/large");
    let base = parse_module(&text, path).expect("parses");
    let mut g = c.benchmark_group("softmax_raise/gpt48_train");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    for copies in [1usize, 4, 16, 32] {
        let module = scaled(&base, copies);
        g.throughput(Throughput::Elements(module.instruction_count() as u64));
        g.bench_function(format!("{copies}x"), |b| {
            b.iter_batched(
                || module.clone(),
                |mut m| {
                    let mut p = Pipeline::from_names(&[
                        "native-to-custom-softmax-dx",
                        "native-to-custom-softmax",
                    ])
                    .expect("registered");
                    p.verify_each = false;
                    p.run(&mut m).expect("runs")
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench_raise);
criterion_main!(benches);
