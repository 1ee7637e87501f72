//! What the fuzz targets share.

use hlo_opt::ir::verify::verify;
use hlo_opt::passes::{Pipeline, Scope};
use hlo_opt::proto;
use hlo_opt::text::{parse_module, print_module};

/// The default pipeline on `data` (see `fuzz_targets/pipeline.rs`).
pub fn run_pipeline(data: &[u8], all_computations: bool, skip_contract: bool) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(mut module) = parse_module(text, "<fuzz>") else {
        return;
    };
    if verify(&module).is_err() {
        return;
    }
    if !skip_contract && !hlo_opt::neuron::contract::check(&module).is_empty() {
        return;
    }
    let mut pipeline = Pipeline::default_pipeline();
    // As the command line: no contract for input that skipped it.
    pipeline.contract_checks = !skip_contract;
    if all_computations {
        pipeline.options.scope = Scope::AllComputations;
    }
    // A pass refusing bad input is fine; a pass leaving an invalid module,
    // or a call breaking the contract, is a bug (the pipeline verifies and
    // checks after each pass).
    match pipeline.run(&mut module) {
        Ok(_) => {}
        Err(hlo_opt::passes::PassError::BadInput { .. }) => return,
        Err(e) => panic!("{e}\n--- input ---\n{text}"),
    }
    let printed = print_module(&module);
    let reparsed = match parse_module(&printed, "<printed>") {
        Ok(m) => m,
        Err(e) => panic!("the output does not parse:\n{e}\n--- input ---\n{text}\n--- printed ---\n{printed}"),
    };
    if let Err(e) = verify(&reparsed) {
        panic!("the output read back does not verify: {e}\n--- printed ---\n{printed}");
    }
    let reprinted = print_module(&reparsed);
    assert!(
        reprinted == printed,
        "the output is not a print fixed point:\n--- printed ---\n{printed}\n--- reprinted ---\n{reprinted}"
    );
    // Writing may refuse what this writer cannot say yet (the mesh form of
    // replica groups with device ids), cleanly; what it writes reads back.
    let Ok(bytes) = proto::module_to_proto_bytes(&module) else {
        return;
    };
    let keep = proto::ReadOptions { xla_order: false };
    let back = proto::read_module_with(&bytes, &keep).expect("our own proto reads back");
    verify(&back).expect("our own proto verifies");
}
