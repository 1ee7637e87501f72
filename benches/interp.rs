//! The reference interpreter on the 4-layer GPT train step
//! (`gpt4_train_f32.hlo`: 1,970 instructions, dots, gathers, scatters,
//! reductions; 53 outputs), on a CNN layer's train step (`CNN_STEP`: a
//! 3x3 convolution NHWC 32 -> 64 channels on 8 x 32 x 32, ReLU, 2x2 max
//! pool, and the gradients: select-and-scatter, the input gradient and the
//! kernel gradient, three convolutions of 151 M multiply-adds each), and
//! `--check-numerics` of the Flax ViT train step.
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

/// One convolution layer's forward and backward pass, as JAX writes them.
const CNN_STEP: &str = r#"HloModule cnn_step_f32

max_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}

add_f32 {
  a2 = f32[] parameter(0)
  b2 = f32[] parameter(1)
  ROOT s = f32[] add(a2, b2)
}

ge_f32 {
  a3 = f32[] parameter(0)
  b3 = f32[] parameter(1)
  ROOT c = pred[] compare(a3, b3), direction=GE
}

ENTRY step {
  x = f32[8,32,32,32]{3,2,1,0} parameter(0)
  w = f32[3,3,32,64]{3,2,1,0} parameter(1)
  gp = f32[8,16,16,64]{3,2,1,0} parameter(2)
  y = f32[8,32,32,64]{3,2,1,0} convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  zero = f32[] constant(0)
  zeros = f32[8,32,32,64]{3,2,1,0} broadcast(zero), dimensions={}
  r = f32[8,32,32,64]{3,2,1,0} maximum(y, zeros)
  ninf = f32[] constant(-inf)
  pooled = f32[8,16,16,64]{3,2,1,0} reduce-window(r, ninf), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=max_f32
  dpool = f32[8,32,32,64]{3,2,1,0} select-and-scatter(r, gp, zero), window={size=1x2x2x1 stride=1x2x2x1}, select=ge_f32, scatter=add_f32
  pos = pred[8,32,32,64]{3,2,1,0} compare(y, zeros), direction=GT
  dy = f32[8,32,32,64]{3,2,1,0} select(pos, dpool, zeros)
  wr = f32[3,3,32,64]{3,2,1,0} reverse(w), dimensions={0,1}
  dx = f32[8,32,32,32]{3,2,1,0} convolution(dy, wr), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01oi->b01f
  dw = f32[3,3,32,64]{3,2,1,0} convolution(x, dy), window={size=32x32 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf
  ROOT out = (f32[8,16,16,64]{3,2,1,0}, f32[8,32,32,32]{3,2,1,0}, f32[3,3,32,64]{3,2,1,0}) tuple(pooled, dx, dw)
}
"#;

fn bench_cnn(c: &mut Criterion) {
    let module = parse_module(CNN_STEP, "cnn_step.hlo").expect("parses");
    let inputs = random_inputs(&module, 0).expect("seeded inputs");
    let mut g = c.benchmark_group("interp");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.bench_function("cnn layer train step", |b| {
        b.iter(|| evaluate(&module, &inputs).expect("evaluates"))
    });
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/frontend/jax/flax_vit_train_f32.hlo"
    );
    let vit =
        parse_module(&std::fs::read_to_string(path).expect("the ViT"), "vit").expect("parses");
    g.bench_function("flax_vit_train_f32 --check-numerics", |b| {
        b.iter(|| {
            let mut m = vit.clone();
            let passes =
                hlo_opt::driver::check_numerics::make_passes(&hlo_opt::passes::default_pipeline())
                    .expect("the default pipeline");
            hlo_opt::driver::check_numerics::run_checked(
                &mut m,
                passes,
                &hlo_opt::passes::PassOptions::default(),
                &hlo_opt::driver::check_numerics::CheckConfig::default(),
                &mut |_| {},
            )
            .expect("checks")
        })
    });
    g.finish();
}

criterion_group!(benches, bench_interp, bench_cnn);
criterion_main!(benches);
