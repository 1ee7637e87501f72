//! Inputs the fuzzer (`fuzz/`, see the README) found crashing, and inputs
//! nested far deeper than any real module: none may panic or overflow the
//! stack. Whatever parses must also print, parse again and print the same,
//! as the fuzz target checks.

mod common;
use common::*;
use hlo_opt::ir::verify::verify;
use hlo_opt::text::{parse_module, print_module};

/// What the fuzz target does with one input; panics on a failure.
fn check(name: &str, text: &str) {
    let Ok(module) = parse_module(text, name) else {
        return;
    };
    let _ = verify(&module);
    let printed = print_module(&module);
    let reparsed = parse_module(&printed, name).unwrap_or_else(|e| {
        panic!("{name}: the printed module does not parse:\n{e}\n--- printed ---\n{printed}")
    });
    let reprinted = print_module(&reparsed);
    assert!(
        reprinted == printed,
        "{name}: printing is not stable: {}",
        first_difference(&printed, &reprinted)
    );
}

/// Runs `f` on a thread with a 2 MiB stack: the test harness's default, and
/// less than a main thread gets, so a debug build's deep recursion shows.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .expect("spawn")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
}

#[test]
fn fuzz_regressions_do_not_panic() {
    let paths = files("fuzz_regressions", |n| n.ends_with(".hlo"));
    assert!(!paths.is_empty(), "no files in tests/data/fuzz_regressions");
    on_small_stack(move || {
        for p in &paths {
            // Fuzzer inputs need not be UTF-8; the fuzz target skips those.
            let bytes = std::fs::read(p).expect("read");
            if let Ok(text) = std::str::from_utf8(&bytes) {
                check(&p.display().to_string(), text);
            }
        }
    });
}

fn module_with_root(root: &str) -> String {
    format!("HloModule m\n\nENTRY e {{\n  p = f32[] parameter(0)\n  ROOT r = {root}\n}}\n")
}

/// Deeply nested inputs of each recursive form: just under the parser's
/// depth limit, just over it, and far over it.
#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    on_small_stack(|| {
        for depth in [200, 255, 256, 257, 1_000, 100_000] {
            let open = |s: &str| s.repeat(depth);
            let cases = [
                // Tuple shapes.
                (
                    "tuple shape",
                    module_with_root(&format!("{}f32[]{} parameter(1)", open("("), open(")"))),
                ),
                // Literals of high rank.
                (
                    "dense literal",
                    module_with_root(&format!(
                        "f32[{}] constant({}1{})",
                        vec!["1"; depth].join(","),
                        open("{"),
                        open("}")
                    )),
                ),
                // Tuple literals.
                (
                    "tuple literal",
                    module_with_root(&format!(
                        "{}f32[]{} constant({}1{})",
                        open("("),
                        open(")"),
                        open("("),
                        open(")")
                    )),
                ),
                // Nested instructions as operands.
                (
                    "nested instructions",
                    module_with_root(&format!("{}p{}", open("negate("), open(")"))),
                ),
                (
                    "nested instructions with shapes",
                    module_with_root(&format!("f32[] {}p{}", open("negate(f32[] "), open(")"))),
                ),
                // Unbalanced openers only.
                ("open parens", module_with_root(&open("("))),
                (
                    "open braces",
                    module_with_root(&format!("f32[1] constant({}", open("{"))),
                ),
                ("open brackets", module_with_root(&open("["))),
                (
                    "attribute braces",
                    module_with_root(&format!("f32[] negate(p), sharding={}", open("{"))),
                ),
                (
                    "balanced attribute braces",
                    module_with_root(&format!(
                        "f32[] negate(p), frontend_attributes={}{}",
                        open("{"),
                        open("}")
                    )),
                ),
                ("comments", module_with_root(&open("/*"))),
            ];
            for (what, text) in &cases {
                check(&format!("{what} at depth {depth}"), text);
            }
        }
    });
}
