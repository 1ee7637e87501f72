//! The MX passes together (`legalize-quantize-mx` then
//! `legalize-scaled-matmul`, as the default pipeline orders them) and their
//! bad-config errors through the command line.

mod common;
use common::*;
use hlo_opt::ir::verify::verify;
use hlo_opt::passes::{Pipeline, ReportEntry};
use hlo_opt::text::print_module;
use std::process::Command;

#[test]
fn quantize_then_matmul_legalizes_the_whole_mx_gemm() {
    let path = data("corpus/nrn_mx_matmul_bf16.hlo");
    let mut m = parse(&path).unwrap();
    let mut p = Pipeline::from_names(&["legalize-quantize-mx", "legalize-scaled-matmul"]).unwrap();
    let runs = p.run(&mut m).unwrap();
    assert!(runs.iter().all(|r| r.changed));
    verify(&m).unwrap();
    let text = print_module(&m);
    assert!(
        !text.contains("custom_call_target=\"QuantizeMX\""),
        "{text}"
    );
    assert!(!text.contains("__op$block_scaled_dot"), "{text}");
    assert_eq!(
        text.matches("custom_call_target=\"QuantizeMX_bf16_e4m3fn\"")
            .count(),
        2
    );
    assert!(text.contains(
        "  ROOT %custom-call.2 = f32[128,64]{1,0} custom-call(%QuantizeMX.7, %QuantizeMX.10, %QuantizeMX.8, %QuantizeMX.11, %constant.2), custom_call_target=\"ScaledMatmul_e4m3fn_e4m3fn_f32\""
    ), "{text}");

    let details: Vec<String> = runs
        .iter()
        .flat_map(|r| r.report.iter())
        .map(|e| match e {
            ReportEntry::Rewrote { .. } => e.to_string(),
            ReportEntry::Skipped { .. } => panic!("nothing should be skipped: {e}"),
        })
        .collect();
    assert_eq!(
        details,
        [
            "rewrote main.1/QuantizeMX.6: QuantizeMX -> QuantizeMX_bf16_e4m3fn (dim 1, block_size 32)",
            "rewrote main.1/QuantizeMX.9: QuantizeMX -> QuantizeMX_bf16_e4m3fn (dim 1, block_size 32)",
            "rewrote main.1/block_scaled_dot.1: __op$block_scaled_dot -> ScaledMatmul_e4m3fn_e4m3fn_f32 (ranks 2/2, batch -1/-1, contracting 1/1, block 32)",
        ]
    );

    // A second run of both changes nothing.
    let again = Pipeline::from_names(&["legalize-quantize-mx", "legalize-scaled-matmul"])
        .unwrap()
        .run(&mut m)
        .unwrap();
    assert!(again.iter().all(|r| !r.changed));
    assert_eq!(print_module(&m), text);
}

/// Runs the binary on `text` with `pass` (contract checks off, so that the
/// pass itself meets the fault); returns its stderr, after checking that
/// it failed and left the input and output alone.
fn fails(pass: &str, text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.hlo");
    std::fs::write(&input, text).unwrap();
    let dest = dir.path().join("out.hlo");
    let out = Command::new(env!("CARGO_BIN_EXE_hlo-opt"))
        .args(["--no-contract-checks", "--passes", pass, "-o"])
        .arg(&dest)
        .arg(&input)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(!dest.exists(), "a failed run wrote {}", dest.display());
    assert_eq!(std::fs::read_to_string(&input).unwrap(), text);
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn a_quantize_mx_config_without_dtype_stops_the_tool() {
    let text = read(&data("corpus/nrn_quantize_mx_bf16.hlo"))
        .replace(r#"{"dtype":"float8_e4m3fn","dim":-1"#, r#"{"dim":-1"#);
    let err = fails("legalize-quantize-mx", &text);
    assert!(
        err.contains(
            "pass legalize-quantize-mx: instruction QuantizeMX.3: backend_config must give \"dtype\" (\"float8_e5m2\" or \"float8_e4m3fn\"); it is missing"
        ),
        "{err}"
    );
}

#[test]
fn a_quantize_mx_config_of_the_wrong_type_stops_the_tool() {
    let text =
        read(&data("corpus/nrn_quantize_mx_bf16.hlo")).replace(r#""dim":-1"#, r#""dim":"last""#);
    let err = fails("legalize-quantize-mx", &text);
    assert!(
        err.contains(
            "pass legalize-quantize-mx: instruction QuantizeMX.3: backend_config field \"dim\" must be an integer, found \"last\""
        ),
        "{err}"
    );
}

#[test]
fn a_malformed_scaled_dot_config_stops_the_tool() {
    let text = read(&data("corpus/nrn_block_scaled_dot_f8.hlo")).replace(
        r#"backend_config={"scaled_dot_backend_config":{"lhs_batch_dimensions":[],"#,
        r#"backend_config={"scaled_dot_backend_config":{"lhs_batch_dimensions":[,],"#,
    );
    let err = fails("legalize-scaled-matmul", &text);
    assert!(
        err.contains(
            "pass legalize-scaled-matmul: instruction block_scaled_dot.1: backend_config must be empty, None, or a JSON object with an optional \"scaled_dot_backend_config\" object, found text that is not JSON"
        ),
        "{err}"
    );
}

#[test]
fn a_scaled_dot_config_of_the_wrong_type_stops_the_tool() {
    let text = read(&data("corpus/nrn_block_scaled_dot_f8.hlo")).replace(
        r#""lhs_contracting_dimensions":[1]"#,
        r#""lhs_contracting_dimensions":{"0":1}"#,
    );
    let err = fails("legalize-scaled-matmul", &text);
    assert!(
        err.contains(
            "pass legalize-scaled-matmul: instruction block_scaled_dot.1: backend_config field \"lhs_contracting_dimensions\" must be an array of integers, found {\"0\":1}"
        ),
        "{err}"
    );
}
