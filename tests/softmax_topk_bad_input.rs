//! legalize-softmax and legalize-topk on malformed calls: an error that
//! names the pass, the instruction, what was expected and what was found
//! (CONTRACT.md section 12), with the module left as it was; and the
//! boundaries that are accepted.

use hlo_opt::ir::verify::verify;
use hlo_opt::ir::Module;
use hlo_opt::passes::{Pipeline, Scope};
use hlo_opt::text::{parse_module, print_module};
use std::process::Command;

fn parse(text: &str) -> Module {
    let m = parse_module(text, "test.hlo").unwrap_or_else(|e| panic!("{e}"));
    verify(&m).unwrap_or_else(|e| panic!("input does not verify: {e}"));
    m
}

fn run(pass: &str, scope: Scope, text: &str) -> (Module, Result<bool, String>) {
    let mut m = parse(text);
    let mut p = Pipeline::from_names(&[pass]).unwrap();
    p.options.scope = scope;
    let r = p
        .run(&mut m)
        .map(|runs| runs[0].changed)
        .map_err(|e| e.to_string());
    (m, r)
}

/// Runs `pass` and expects an error naming it, `instruction`, and each of
/// `fragments`; the module must be unchanged.
fn expect_error(pass: &str, scope: Scope, text: &str, instruction: &str, fragments: &[&str]) {
    let before = print_module(&parse(text));
    let (m, r) = run(pass, scope, text);
    let err = match r {
        Ok(changed) => panic!("expected an error, got changed={changed} for\n{text}"),
        Err(e) => e,
    };
    assert!(
        err.starts_with(&format!("pass {pass}: instruction {instruction}: ")),
        "{err}"
    );
    for f in fragments {
        assert!(err.contains(f), "{err:?} should contain {f:?}");
    }
    assert_eq!(print_module(&m), before, "a failed pass changed the module");
}

fn softmax(config: &str) -> String {
    format!(
        r#"HloModule m

ENTRY main {{
  x = f32[4,8]{{1,0}} parameter(0)
  ok = f32[4,8]{{1,0}} custom-call(x), custom_call_target="AwsNeuronSoftmax", backend_config="1"
  bad = f32[4,8]{{1,0}} custom-call(ok), custom_call_target="AwsNeuronSoftmax", backend_config="{config}"
  ROOT t = (f32[4,8]{{1,0}}, f32[4,8]{{1,0}}) tuple(ok, bad)
}}
"#
    )
}

fn softmax_backward(config: &str) -> String {
    format!(
        r#"HloModule m

ENTRY main {{
  g = bf16[2,3,5]{{2,1,0}} parameter(0)
  y = bf16[2,3,5]{{2,1,0}} parameter(1)
  ROOT dx = bf16[2,3,5]{{2,1,0}} custom-call(g, y), custom_call_target="AwsNeuronSoftmaxBackward", backend_config="{config}"
}}
"#
    )
}

fn topk(config: &str) -> String {
    format!(
        r#"HloModule m

ENTRY main {{
  x = f32[8,100]{{1,0}} parameter(0)
  ROOT top = (f32[8,5]{{1,0}}, u32[8,5]{{1,0}}) custom-call(x), custom_call_target="AwsNeuronTopK", backend_config="{config}"
}}
"#
    )
}

const SOFTMAX: &str = "legalize-softmax";
const TOPK: &str = "legalize-topk";

#[test]
fn softmax_config_that_is_not_an_integer() {
    for config in ["", "axis=1", "1.0", " 1", "+1", "0x1", "{\\\"dim\\\":1}"] {
        expect_error(
            SOFTMAX,
            Scope::Original,
            &softmax(config),
            "bad",
            &[
                "AwsNeuronSoftmax needs backend_config to be the softmax axis as a bare base-10 integer",
                "found \"",
            ],
        );
    }
}

#[test]
fn softmax_axis_out_of_range() {
    for config in ["2", "-1", "99999999999999999999"] {
        expect_error(
            SOFTMAX,
            Scope::Original,
            &softmax(config),
            "bad",
            &[
                "must be a dimension of the result f32[4,8] (0 to 1)",
                &format!("found {config}"),
            ],
        );
    }
    expect_error(
        SOFTMAX,
        Scope::Original,
        &softmax_backward("3"),
        "dx",
        &["AwsNeuronSoftmaxBackward softmax axis", "(0 to 2); found 3"],
    );
}

#[test]
fn softmax_axes_in_range_are_accepted() {
    for config in ["0", "1", "2", "-0", "002"] {
        let (_, r) = run(SOFTMAX, Scope::Original, &softmax_backward(config));
        assert_eq!(r, Ok(true), "{config}");
    }
}

#[test]
fn softmax_with_the_wrong_operand_count() {
    let text = r#"HloModule m

ENTRY main {
  x = f32[4,8]{1,0} parameter(0)
  ROOT dx = f32[4,8]{1,0} custom-call(x), custom_call_target="AwsNeuronSoftmaxBackward", backend_config="1"
}
"#;
    expect_error(
        SOFTMAX,
        Scope::Original,
        text,
        "dx",
        &[
            "AwsNeuronSoftmaxBackward takes 2 operand(s) (dLdy, y)",
            "found 1",
        ],
    );
    let text = r#"HloModule m

ENTRY main {
  ROOT s = f32[4,8]{1,0} custom-call(), custom_call_target="AwsNeuronSoftmax", backend_config="1"
}
"#;
    expect_error(
        SOFTMAX,
        Scope::Original,
        text,
        "s",
        &["AwsNeuronSoftmax takes 1 operand(s) (x); found none"],
    );
    // An index of the wrong length is not the legalized form.
    let text = r#"HloModule m

ENTRY main {
  x = f32[4,8]{1,0} parameter(0)
  idx = s64[4]{0} constant({0, 1, 2, 3})
  ROOT s = f32[4,8]{1,0} custom-call(x, idx), custom_call_target="AwsNeuronSoftmax", backend_config="1"
}
"#;
    expect_error(
        SOFTMAX,
        Scope::Original,
        text,
        "s",
        &["AwsNeuronSoftmax takes 1 operand(s) (x), or 2 with its trailing s64 index when legalized; found 2 (the last is not the s64[8] index constant 0..7)"],
    );
}

#[test]
fn softmax_of_a_scalar() {
    let text = r#"HloModule m

ENTRY main {
  x = f32[] parameter(0)
  ROOT s = f32[] custom-call(x), custom_call_target="AwsNeuronSoftmax", backend_config="0"
}
"#;
    expect_error(
        SOFTMAX,
        Scope::Original,
        text,
        "s",
        &["operand 0 to be an array of rank >= 1", "found f32[]"],
    );
}

#[test]
fn softmax_errors_inside_a_while_body_leave_the_entry_untouched() {
    // Every computation is walked by default; the entry's good call is
    // not rewritten when the body's call is bad.
    let text = r#"HloModule m

body {
  p = f32[4,8]{1,0} parameter(0)
  ROOT inner = f32[4,8]{1,0} custom-call(p), custom_call_target="AwsNeuronSoftmax", backend_config="x"
}

cond {
  cp = f32[4,8]{1,0} parameter(0)
  ROOT f = pred[] constant(false)
}

ENTRY main {
  a = f32[4,8]{1,0} parameter(0)
  s = f32[4,8]{1,0} custom-call(a), custom_call_target="AwsNeuronSoftmax", backend_config="1"
  ROOT w = f32[4,8]{1,0} while(s), condition=cond, body=body
}
"#;
    expect_error(SOFTMAX, Scope::Original, text, "inner", &["found \"x\""]);
}

#[test]
fn topk_config_that_is_not_an_integer() {
    for config in ["", "k=5", "5.0", "5 ", "+5", "{\\\"k\\\":5}"] {
        expect_error(
            TOPK,
            Scope::Original,
            &topk(config),
            "top",
            &[
                "AwsNeuronTopK needs backend_config to be k as a bare base-10 integer",
                "found \"",
            ],
        );
    }
}

#[test]
fn topk_k_out_of_the_int32_range() {
    for config in [
        "2147483648",
        "-2147483649",
        "99999999999999999999",
        "-99999999999999999999",
    ] {
        expect_error(
            TOPK,
            Scope::Original,
            &topk(config),
            "top",
            &[
                "AwsNeuronTopK needs k (backend_config) in the int32 range [-2147483648, 2147483647]",
                &format!("found {config}"),
            ],
        );
    }
}

#[test]
fn topk_k_at_the_int32_bounds_is_accepted_and_dropped() {
    for config in ["2147483647", "-2147483648", "5", "05"] {
        let (m, r) = run(TOPK, Scope::Original, &topk(config));
        assert_eq!(r, Ok(true), "{config}");
        let printed = print_module(&m);
        assert!(
            printed.contains(
                r#"custom-call(x, constant), custom_call_target="TopK_f32"
"#
            ),
            "{printed}"
        );
        assert!(!printed.contains("backend_config"), "{printed}");
    }
}

#[test]
fn topk_with_the_wrong_operand_count_or_rank() {
    let text = r#"HloModule m

ENTRY main {
  x = f32[8,100]{1,0} parameter(0)
  ROOT top = (f32[8,5]{1,0}, u32[8,5]{1,0}) custom-call(x, x), custom_call_target="AwsNeuronTopK", backend_config="5"
}
"#;
    expect_error(
        TOPK,
        Scope::Original,
        text,
        "top",
        &["AwsNeuronTopK takes exactly one operand (the input); found 2"],
    );
    let text = r#"HloModule m

ENTRY main {
  ROOT top = (f32[5]{0}, u32[5]{0}) custom-call(), custom_call_target="AwsNeuronTopK", backend_config="5"
}
"#;
    expect_error(TOPK, Scope::Original, text, "top", &["found none"]);
    let text = r#"HloModule m

ENTRY main {
  x = f32[] parameter(0)
  ROOT top = (f32[], u32[]) custom-call(x), custom_call_target="AwsNeuronTopK", backend_config="1"
}
"#;
    expect_error(
        TOPK,
        Scope::Original,
        text,
        "top",
        &["input to be an array of rank >= 1", "found f32[]"],
    );
}

#[test]
fn topk_outside_the_entry_is_checked_only_with_all_computations() {
    let text = r#"HloModule m

callee {
  p = f32[8,100]{1,0} parameter(0)
  ROOT inner = (f32[8,5]{1,0}, u32[8,5]{1,0}) custom-call(p), custom_call_target="AwsNeuronTopK", backend_config="five"
}

ENTRY main {
  x = f32[8,100]{1,0} parameter(0)
  ROOT c = (f32[8,5]{1,0}, u32[8,5]{1,0}) call(x), to_apply=callee
}
"#;
    let (_, r) = run(TOPK, Scope::Original, text);
    assert_eq!(r, Ok(false));
    expect_error(
        TOPK,
        Scope::AllComputations,
        text,
        "inner",
        &["found \"five\""],
    );
}

/// The tool stops, names the cause and writes nothing, whether the
/// up-front contract checks catch the call or (with them off) the pass.
#[test]
fn the_command_line_stops_with_the_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.hlo");
    let output = dir.path().join("out.hlo");
    let text = topk("2147483648");
    std::fs::write(&input, &text).unwrap();
    for (extra, wanted) in [
        (
            None,
            "instruction top: k = 2147483648 is outside the int32 range",
        ),
        (
            Some("--no-contract-checks"),
            "pass legalize-topk: instruction top: AwsNeuronTopK needs k",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_hlo-opt"))
            .args(["--passes", "legalize-softmax,legalize-topk"])
            .args(extra)
            .arg(&input)
            .arg("-o")
            .arg(&output)
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(wanted), "{err}");
        assert!(!output.exists());
        assert_eq!(std::fs::read_to_string(&input).unwrap(), text);
    }
}
