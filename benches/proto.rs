//! Binary proto read throughput on the 48-layer GPT train step after XLA's
//! CPU pipeline (`gpt48_train_f32.opt.pb`, 64.5 MB, 528k instructions).
//!
//! The `.pb` is not in the repository: it is made here, in memory, by our
//! own text -> proto writer from `tests/data/large/gpt48_train_f32.opt.hlo.gz`
//! (the same module; 64,506,160 bytes against XLA's 64.50 MB). To write it
//! to a file instead: `gunzip -k tests/data/large/gpt48_train_f32.opt.hlo.gz`
//! then `hlo-opt --passes '' --no-contract-checks
//! tests/data/large/gpt48_train_f32.opt.hlo -o gpt48_train_f32.opt.pb`
//! (keep both out of git).
//!
//! `cargo bench --bench proto`; MB/s are 10^6 bytes of proto per second.
//! XLA's `HloModule.from_serialized_hlo_module_proto` reads it at ~35 MB/s
//! here (`../shared/corpus/baseline.json`).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hlo_opt::proto;
use hlo_opt::text::parse_module;
use std::io::Read;
use std::time::Duration;

fn large_proto() -> Vec<u8> {
    if let Ok(path) = std::env::var("HLO_OPT_BENCH_PB") {
        return std::fs::read(path).expect("HLO_OPT_BENCH_PB names a readable file");
    }
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/large/gpt48_train_f32.opt.hlo.gz"
    );
    let file = std::fs::File::open(path).expect("the large module is in tests/data/large");
    let mut text = String::new();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .expect("valid gzip of UTF-8 text");
    let module = parse_module(&text, "gpt48_train_f32.opt.hlo").expect("parses");
    proto::module_to_proto_bytes(&module).expect("writes")
}

fn bench_proto(c: &mut Criterion) {
    let bytes = large_proto();
    let mut g = c.benchmark_group("gpt48_train_opt_pb");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(10))
        .throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("read", |b| {
        b.iter(|| proto::read_module(&bytes).expect("reads"))
    });
    g.finish();
}

criterion_group!(benches, bench_proto);
criterion_main!(benches);
