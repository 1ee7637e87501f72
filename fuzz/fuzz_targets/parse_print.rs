//! Parses arbitrary text; on success runs the verifier, prints the module,
//! and checks that the printed text parses again and prints identically:
//! print(parse(print(m))) == print(m). The text read in small pieces
//! (`parse_module_from_reader`) must give the same module or error.
//!
//! Run with `cargo fuzz run parse_print` (see the README's "Fuzzing").

#![no_main]

use hlo_opt::ir::verify::verify;
use hlo_opt::text::{parse_module, parse_module_from_reader, print_module, ReadError};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = parse_module(text, "<fuzz>");
    // Reads of 1 to 61 bytes, so windows end at every kind of place.
    let capacity = usize::from(data.first().copied().unwrap_or(0) % 61) + 1;
    let read = parse_module_from_reader(std::io::BufReader::with_capacity(capacity, data), "<fuzz>");
    match (&parsed, &read) {
        (Ok(a), Ok(b)) => assert_eq!(print_module(a), print_module(b), "reads of {capacity}"),
        (Err(a), Err(ReadError::Parse(b))) => {
            assert_eq!(a.to_string(), b.to_string(), "reads of {capacity}")
        }
        _ => panic!(
            "text and reader disagree (reads of {capacity}):\n{:?}\n{:?}",
            parsed.as_ref().err().map(ToString::to_string),
            read.as_ref().err().map(ToString::to_string)
        ),
    }
    let Ok(module) = parsed else {
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
