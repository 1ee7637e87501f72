//! The reference interpreter on small modules: any text that parses and
//! verifies, whose arrays are small (so that an execution stays fast), is
//! evaluated on seeded inputs; it gives a value or an error, and never
//! panics, aborts or overflows the stack. If the input's first byte is
//! odd, the default pipeline runs first and the module is evaluated
//! again (what `--check-numerics` does).
//!
//! Run with `RUSTC_BOOTSTRAP=1 cargo fuzz run eval` (see the README's
//! "Fuzzing").

#![no_main]

use hlo_opt::interp::{random::random_inputs, EvalOptions, Interpreter};
use hlo_opt::ir::verify::verify;
use hlo_opt::ir::{Opcode, Shape};
use hlo_opt::passes::Pipeline;
use libfuzzer_sys::fuzz_target;

/// Elements an array may have for the module to be run.
const MAX_ELEMENTS: i64 = 1 << 14;
/// Elements a sort may order (per operand) for the module to be run.
const MAX_SORTED: i64 = 1 << 10;

fn small(shape: &Shape) -> bool {
    match shape {
        Shape::Array(a) => a.dims.iter().all(|&d| (0..=MAX_ELEMENTS).contains(&d)) && {
            a.dims.iter().try_fold(1i64, |n, &d| n.checked_mul(d)).is_some_and(|n| n <= MAX_ELEMENTS)
        },
        Shape::Tuple(e) => e.len() <= 64 && e.iter().all(small),
        _ => true,
    }
}

/// The most elements of an array in `shape`.
fn largest(shape: &Shape) -> i64 {
    match shape {
        Shape::Array(a) => a.element_count(),
        Shape::Tuple(e) => e.iter().map(largest).max().unwrap_or(0),
        _ => 0,
    }
}

fn run(module: &hlo_opt::ir::Module) {
    let mut it = Interpreter::new(module);
    it.options = EvalOptions {
        max_while_iterations: 1000,
        ..EvalOptions::default()
    };
    if let Ok(inputs) = random_inputs(module, 0) {
        let _ = it.run(&inputs);
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(mut module) = hlo_opt::text::parse_module(text, "<fuzz>") else {
        return;
    };
    if verify(&module).is_err() || module.instruction_count() > 2000 {
        return;
    }
    // A sort (or a TopK with a comparator) calls its comparator n log n
    // times, each an interpretation of a computation: on 8,000 elements
    // that is seconds under the sanitizer, a timeout that says nothing of
    // the interpreter.
    let all_small = module.computations().all(|(_, c)| {
        c.instructions().all(|(_, i)| {
            let sorts = i.opcode == Opcode::Sort
                || (i.opcode == Opcode::CustomCall && i.called_computations().next().is_some());
            small(&i.shape)
                && (!sorts
                    || i.operands()
                        .iter()
                        .all(|&o| largest(&c.instr(o).shape) <= MAX_SORTED))
        })
    });
    if !all_small {
        return;
    }
    run(&module);
    if data.first().is_some_and(|b| b & 1 == 1) && hlo_opt::neuron::contract::check(&module).is_empty() {
        if Pipeline::default_pipeline().run(&mut module).is_ok() {
            run(&module);
        }
    }
});
