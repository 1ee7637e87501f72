//! Parses arbitrary text; on success runs the verifier, prints the module,
//! and checks that the printed text parses again and prints identically:
//! print(parse(print(m))) == print(m).
//!
//! Run with `cargo fuzz run parse_print` (see the README's "Fuzzing").

#![no_main]

use hlo_opt::ir::verify::verify;
use hlo_opt::text::{parse_module, print_module};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(module) = parse_module(text, "<fuzz>") else {
        return;
    };
    // Only "no panic" is asked of the verifier: fuzzed modules are rarely
    // well formed.
    let _ = verify(&module);
    let printed = print_module(&module);
    let reparsed = match parse_module(&printed, "<printed>") {
        Ok(m) => m,
        Err(e) => panic!("the printed module does not parse:\n{e}\n--- input ---\n{text}\n--- printed ---\n{printed}"),
    };
    let reprinted = print_module(&reparsed);
    assert!(
        reprinted == printed,
        "printing is not stable:\n--- input ---\n{text}\n--- printed ---\n{printed}\n--- reprinted ---\n{reprinted}"
    );
});
