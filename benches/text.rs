//! Parse, print and verify throughput on the 48-layer GPT train step after XLA's
//! CPU pipeline (73 MB, 528k instructions), unpacked in memory from the
//! `.gz` in the test data.
//!
//! `cargo bench --bench text`; MB/s are 10^6 bytes of HLO text per second.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hlo_opt::text::{parse_module, print_module};
use std::io::Read;
use std::time::Duration;

fn large_module() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/large/gpt48_train_f32.opt.hlo.gz"
    );
    let file = std::fs::File::open(path).expect("the large module is in tests/data/large");
    let mut text = String::new();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .expect("valid gzip of UTF-8 text");
    text
}

fn bench_text(c: &mut Criterion) {
    let text = large_module();
    let module = parse_module(&text, "gpt48_train_f32.opt.hlo").expect("parses");
    let instructions = module.instruction_count() as u64;
    assert_eq!(
        print_module(&module),
        text,
        "the benchmark input must round-trip"
    );

    for (unit, throughput) in [
        ("bytes", Throughput::Bytes(text.len() as u64)),
        ("instructions", Throughput::Elements(instructions)),
    ] {
        let mut g = c.benchmark_group(format!("gpt48_train_opt/{unit}"));
        g.sample_size(10)
            .measurement_time(Duration::from_secs(8))
            .throughput(throughput);
        g.bench_function("parse", |b| {
            b.iter(|| parse_module(&text, "gpt48").expect("parses"))
        });
        g.bench_function("print", |b| b.iter(|| print_module(&module)));
        g.bench_function("verify", |b| {
            b.iter(|| hlo_opt::ir::verify::verify(&module).expect("verifies"))
        });
        g.bench_function("parse+print", |b| {
            b.iter(|| print_module(&parse_module(&text, "gpt48").expect("parses")))
        });
        g.finish();
    }
}

criterion_group!(benches, bench_text);
criterion_main!(benches);
