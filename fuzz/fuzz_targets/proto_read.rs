//! The binary proto reader: any bytes either read as a module (which then
//! verifies or not, prints, and writes back as a proto that reads again) or
//! fail with an error; nothing panics.

#![no_main]

use hlo_opt::ir::verify::verify;
use hlo_opt::proto;
use hlo_opt::text::print_module;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(module) = proto::read_module(data) {
        if verify(&module).is_ok() {
            let _ = print_module(&module);
            if let Ok(bytes) = proto::module_to_proto_bytes(&module) {
                let options = proto::ReadOptions { xla_order: false };
                proto::read_module_with(&bytes, &options).expect("our own proto reads back");
            }
        }
    }
});
