//! The binary proto reader: any bytes either read as a module or fail with
//! an error; nothing panics. A module that reads and verifies prints as
//! text that parses back, verifies and prints identically (the proto
//! reader refuses what the text reader refuses: issue 11), and writes back
//! as a proto that reads again.

#![no_main]

use hlo_opt::ir::verify::verify;
use hlo_opt::proto;
use hlo_opt::text::{parse_module, print_module};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(module) = proto::read_module(data) {
        if verify(&module).is_ok() {
            let printed = print_module(&module);
            let reparsed = match parse_module(&printed, "<printed>") {
                Ok(m) => m,
                Err(e) => panic!("the text of a proto that verifies does not parse:\n{e}\n--- printed ---\n{printed}"),
            };
            if let Err(e) = verify(&reparsed) {
                panic!("the text of a proto that verifies does not verify: {e}\n--- printed ---\n{printed}");
            }
            let reprinted = print_module(&reparsed);
            assert!(
                reprinted == printed,
                "the text of a proto is not a print fixed point:\n--- printed ---\n{printed}\n--- reprinted ---\n{reprinted}"
            );
            if let Ok(bytes) = proto::module_to_proto_bytes(&module) {
                let options = proto::ReadOptions { xla_order: false };
                proto::read_module_with(&bytes, &options).expect("our own proto reads back");
            }
        }
    }
});
