//! The contract checks of the Neuron custom calls (`hlo_opt::contract`):
//! every real module passes, and each check reports its own id at the
//! instruction that breaks it.

mod common;
use common::*;
use hlo_opt::ir::verify::verify;
use hlo_opt::neuron::contract::{check, Check, Violation};
use hlo_opt::text::parse_module;

fn violations(text: &str) -> Vec<Violation> {
    let m = parse_module(text, "t.hlo").unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify(&m).unwrap_or_else(|e| panic!("{e}\n{text}"));
    check(&m)
}

fn listing(vs: &[Violation]) -> String {
    vs.iter().map(|v| format!("  {v}\n")).collect()
}

/// The module's violations are exactly the `codes` (as a set), all at the
/// instruction `c`.
fn assert_reports(text: &str, codes: &[&str]) {
    let vs = violations(text);
    let mut found: Vec<&str> = vs.iter().map(|v| v.check.code()).collect();
    found.sort_unstable();
    found.dedup();
    let mut want = codes.to_vec();
    want.sort_unstable();
    assert_eq!(found, want, "violations:\n{}module:\n{text}", listing(&vs));
    for v in &vs {
        assert_eq!(v.instruction, "c", "{v}");
        assert_eq!(v.computation, "main", "{v}");
        assert!(!v.cause.is_empty() && !v.resolution.is_empty(), "{v}");
        assert!(v.pos.is_some(), "{v}");
    }
}

fn assert_valid(text: &str) {
    assert_reports(text, &[]);
}

fn entry(body: &str) -> String {
    format!("HloModule m\n\nENTRY %main {{\n{body}\n}}\n")
}

// ------------------------------------------------------------ real modules

#[test]
fn every_corpus_module_and_neuron_dump_passes() {
    let mut paths = files("corpus", |n| n.ends_with(".hlo"));
    // MANIFEST.md: dummy_hlo_nki_kernel.txt is hand-edited and invalid.
    paths.extend(files("neuron", |n| {
        n.ends_with(".txt") && n != "dummy_hlo_nki_kernel.txt"
    }));
    assert!(paths.len() > 100, "{} files", paths.len());
    let mut failures = Vec::new();
    let mut nvfp4 = 0;
    for p in &paths {
        let m = parse(p).unwrap_or_else(|e| panic!("{e}"));
        let vs = check(&m);
        let name = p.file_name().unwrap().to_str().unwrap();
        if name.starts_with("jax_nn_scaled_matmul_nvfp4_cuda.") {
            // nvfp4 (f4e2m1fn data, f8e4m3fn scales, blocks of 16) is not
            // OCP MX-FP8: the one corpus module outside the contract.
            nvfp4 += 1;
            let codes: Vec<&str> = vs.iter().map(|v| v.check.code()).collect();
            assert_eq!(codes, ["HOC014", "HOC014"], "{name}:\n{}", listing(&vs));
            assert!(
                vs[0].cause.contains("lhs is f4e2m1fn[1,128,256]"),
                "{}",
                vs[0]
            );
            assert!(
                vs[1].cause.contains("rhs is f4e2m1fn[1,64,256]"),
                "{}",
                vs[1]
            );
            assert!(vs.iter().all(|v| v.instruction == "scaled_matmul.1"));
        } else if !vs.is_empty() {
            failures.push(format!("{}:\n{}", p.display(), listing(&vs)));
        }
    }
    assert_eq!(nvfp4, 2, "the nvfp4 module and its short form");
    assert!(failures.is_empty(), "{}", failures.join(""));
}

#[test]
fn the_golden_inputs_of_the_passes_pass() {
    let dir = data("../golden");
    let mut failures = Vec::new();
    let mut count = 0;
    for pass in std::fs::read_dir(&dir).unwrap() {
        let pass = pass.unwrap().path();
        for f in std::fs::read_dir(&pass).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "hlo") {
                count += 1;
                let m = parse(&f).unwrap_or_else(|e| panic!("{e}"));
                let vs = check(&m);
                let name = f.file_name().unwrap().to_string_lossy();
                if name.starts_with("s32_input_is_left_alone.") {
                    // The contract changed (CONTRACT.md section 12): an
                    // integer TopK is Neuron's EVRF013; the golden case is
                    // what legalize-topk does under --no-contract-checks.
                    let codes: Vec<&str> = vs.iter().map(|v| v.check.code()).collect();
                    assert_eq!(codes, ["HOC029"], "{name}:\n{}", listing(&vs));
                } else if !vs.is_empty() {
                    failures.push(format!("{}:\n{}", f.display(), listing(&vs)));
                }
            }
        }
    }
    assert!(count > 0);
    assert!(failures.is_empty(), "{}", failures.join(""));
}

#[test]
fn every_violation_is_reported_in_every_computation() {
    let text = "HloModule m\n\n\
        %body (p: f32[4,8]) -> f32[4,8] {\n  \
          %p = f32[4,8]{1,0} parameter(0)\n  \
          ROOT %s = f32[4,8]{1,0} custom-call(%p), custom_call_target=\"AwsNeuronSoftmax\", backend_config=\"2\"\n}\n\n\
        ENTRY %main {\n  \
          %x = f32[4,8]{1,0} parameter(0)\n  \
          %c = f32[4,8]{1,0} call(%x), to_apply=%body\n  \
          ROOT %t = (f32[4,3]{1,0}, u32[4,3]{1,0}) custom-call(%c, %c), custom_call_target=\"AwsNeuronTopK\", backend_config=\"k\"\n}\n";
    let vs = violations(text);
    let got: Vec<(&str, &str, &str)> = vs
        .iter()
        .map(|v| {
            (
                v.check.code(),
                v.computation.as_str(),
                v.instruction.as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("HOC027", "body", "s"),
            ("HOC021", "main", "t"),
            ("HOC022", "main", "t"),
        ],
        "{}",
        listing(&vs)
    );
    assert_eq!(
        vs[0].to_string(),
        "HOC027 AwsNeuronSoftmax in computation body, instruction s: axis 2 is not a dimension of the rank-2 result; resolution: set backend_config to an axis in [0, 2) (negative axes are not accepted)"
    );
    // The position is the instruction name's place in the source.
    let pos = vs[0].pos.unwrap();
    let line = text.lines().nth(pos.line as usize - 1).unwrap();
    assert!(
        line[pos.column as usize - 1..].starts_with("s = f32"),
        "{line}"
    );
}

#[test]
fn the_docs_document_every_check() {
    let readme = read(&data("../../docs/contract-checks.md"));
    for c in Check::ALL {
        assert!(
            readme.contains(&format!("| {} |", c.code())),
            "docs/contract-checks.md has no row for {}",
            c.code()
        );
    }
    let codes: Vec<&str> = Check::ALL.iter().map(|c| c.code()).collect();
    let expected: Vec<String> = (1..=codes.len()).map(|i| format!("HOC{i:03}")).collect();
    assert_eq!(codes, expected, "ids are numbered without gaps");
}

// -------------------------------------------------------------- QuantizeMX

const QMX_CONFIG: &str =
    r#"{"dtype":"float8_e4m3fn","dim":-1,"block_size":32,"scale_method":"EMAX"}"#;

fn qmx_with(input: &str, result: &str, operands: &str, config: &str) -> String {
    entry(&format!(
        "  %x = {input} parameter(0)\n  \
         ROOT %c = {result} custom-call({operands}), custom_call_target=\"QuantizeMX\", backend_config={config}"
    ))
}

fn qmx_config(config: &str) -> String {
    qmx_with(
        "bf16[128,256]{1,0}",
        "(u32[128,64]{1,0}, f8e8m0fnu[128,8]{1,0})",
        "%x",
        config,
    )
}

fn qmx_shapes(input: &str, result: &str) -> String {
    qmx_with(input, result, "%x", QMX_CONFIG)
}

#[test]
fn quantize_mx_valid_forms() {
    assert_valid(&qmx_config(QMX_CONFIG));
    // Defaults: dim 0 (second-to-last of a rank-2 input), block_size 32, EMAX.
    assert_valid(&qmx_with(
        "f16[128,256]{1,0}",
        "(u32[32,256]{1,0}, f8e8m0fnu[4,256]{1,0})",
        "%x",
        r#"{"dtype":"float8_e5m2"}"#,
    ));
    assert_valid(&qmx_with(
        "bf16[2,64,96]{2,1,0}",
        "(u32[2,16,96]{2,1,0}, f8e8m0fnu[2,2,96]{2,1,0})",
        "%x",
        r#"{"dtype":"float8_e4m3fn","dim":1,"extra":true}"#,
    ));
}

#[test]
fn hoc001_quantize_mx_operand_count() {
    assert_reports(
        &qmx_with(
            "bf16[128,256]{1,0}",
            "(u32[128,64]{1,0}, f8e8m0fnu[128,8]{1,0})",
            "%x, %x",
            QMX_CONFIG,
        ),
        &["HOC001"],
    );
}

#[test]
fn hoc002_quantize_mx_config_json() {
    assert_reports(&qmx_config("\"dtype=float8_e4m3fn\""), &["HOC002"]);
    assert_reports(&qmx_config("\"[1]\""), &["HOC002"]);
    assert_reports(
        &qmx_config(r#"{"dtype":"float8_e4m3fn","dim":"-1"}"#),
        &["HOC002"],
    );
    assert_reports(
        &qmx_config(r#"{"dtype":"float8_e4m3fn","dim":-1,"block_size":null}"#),
        &["HOC002"],
    );
}

#[test]
fn hoc003_quantize_mx_dtype() {
    assert_reports(
        &qmx_config(r#"{"dtype":"float8_e4m3","dim":-1}"#),
        &["HOC003"],
    );
    assert_reports(&qmx_config(r#"{"dim":-1}"#), &["HOC003"]);
}

#[test]
fn hoc004_quantize_mx_block_size() {
    assert_reports(
        &qmx_config(r#"{"dtype":"float8_e4m3fn","dim":-1,"block_size":16}"#),
        &["HOC004"],
    );
}

#[test]
fn hoc005_quantize_mx_scale_method() {
    assert_reports(
        &qmx_config(r#"{"dtype":"float8_e4m3fn","dim":-1,"scale_method":"MEAN"}"#),
        &["HOC005"],
    );
}

#[test]
fn hoc006_quantize_mx_dim() {
    assert_reports(
        &qmx_with(
            "bf16[2,128,256]{2,1,0}",
            "(u32[2,128,64]{2,1,0}, f8e8m0fnu[2,128,8]{2,1,0})",
            "%x",
            r#"{"dtype":"float8_e4m3fn","dim":0}"#,
        ),
        &["HOC006"],
    );
    assert_reports(
        &qmx_config(r#"{"dtype":"float8_e4m3fn","dim":-3}"#),
        &["HOC006"],
    );
    assert_reports(
        &qmx_config(r#"{"dtype":"float8_e4m3fn","dim":2}"#),
        &["HOC006"],
    );
}

#[test]
fn hoc007_quantize_mx_input_type() {
    assert_reports(
        &qmx_shapes(
            "f32[128,256]{1,0}",
            "(u32[128,64]{1,0}, f8e8m0fnu[128,8]{1,0})",
        ),
        &["HOC007"],
    );
}

#[test]
fn hoc008_quantize_mx_result_tuple() {
    assert_reports(
        &qmx_shapes("bf16[128,256]{1,0}", "u32[128,64]{1,0}"),
        &["HOC008"],
    );
    assert_reports(
        &qmx_shapes(
            "bf16[128,256]{1,0}",
            "(u32[128,64]{1,0}, f8e8m0fnu[128,8]{1,0}, u32[])",
        ),
        &["HOC008"],
    );
}

#[test]
fn hoc009_quantize_mx_result_shapes() {
    // Unpacked data.
    assert_reports(
        &qmx_shapes(
            "bf16[128,256]{1,0}",
            "(u32[128,256]{1,0}, f8e8m0fnu[128,8]{1,0})",
        ),
        &["HOC009"],
    );
    // Scales as u8.
    assert_reports(
        &qmx_shapes("bf16[128,256]{1,0}", "(u32[128,64]{1,0}, u8[128,8]{1,0})"),
        &["HOC009"],
    );
}

#[test]
fn hoc010_quantize_mx_x4_packing() {
    // 30 packs into neither words of 4 nor blocks of 32.
    assert_reports(
        &qmx_shapes(
            "bf16[128,30]{1,0}",
            "(u32[128,7]{1,0}, f8e8m0fnu[128,1]{1,0})",
        ),
        &["HOC010", "HOC011"],
    );
}

#[test]
fn hoc011_quantize_mx_blocks() {
    assert_reports(
        &qmx_shapes(
            "bf16[128,48]{1,0}",
            "(u32[128,12]{1,0}, f8e8m0fnu[128,1]{1,0})",
        ),
        &["HOC011"],
    );
}

// --------------------------------------------------- __op$block_scaled_dot

const DOT_CONFIG: &str = r#"{"scaled_dot_backend_config":{"lhs_batch_dimensions":[],"rhs_batch_dimensions":[],"lhs_contracting_dimensions":[1],"rhs_contracting_dimensions":[1],"element_dtype":"float8_e4m3fn"}}"#;

/// `shapes`: lhs, rhs, lhs_scale, rhs_scale, result.
fn dot_with(shapes: [&str; 5], operands: &str, config: &str) -> String {
    let [a, b, sa, sb, result] = shapes;
    entry(&format!(
        "  %a = {a} parameter(0)\n  \
         %b = {b} parameter(1)\n  \
         %sa = {sa} parameter(2)\n  \
         %sb = {sb} parameter(3)\n  \
         ROOT %c = {result} custom-call({operands}), custom_call_target=\"__op$block_scaled_dot\", backend_config={config}"
    ))
}

const DOT_SHAPES: [&str; 5] = [
    "u32[128,64]{1,0}",
    "u32[64,64]{1,0}",
    "f8e8m0fnu[128,8]{1,0}",
    "f8e8m0fnu[64,8]{1,0}",
    "f32[128,64]{1,0}",
];

fn dot(shapes: [&str; 5], config: &str) -> String {
    dot_with(shapes, "%a, %b, %sa, %sb", config)
}

fn dot_config(config: &str) -> String {
    dot(DOT_SHAPES, config)
}

#[test]
fn block_scaled_dot_valid_forms() {
    assert_valid(&dot_config(DOT_CONFIG));
    // Empty, None, and configs without the object or its fields: the
    // contracting dimensions default to the last ones.
    assert_valid(&dot_config("\"\""));
    assert_valid(&dot_config("\"None\""));
    assert_valid(&dot_config("{}"));
    assert_valid(&dot_config(r#"{"scaled_dot_backend_config":{}}"#));
    // Unpacked f8 data, as jax's CUDA lowering emits it, batched, bf16 out,
    // no element_dtype and an extra field.
    assert_valid(&dot(
        [
            "f8e4m3fn[1,128,256]{2,1,0}",
            "f8e4m3fn[1,64,256]{2,1,0}",
            "f8e8m0fnu[1,128,8]{2,1,0}",
            "f8e8m0fnu[1,64,8]{2,1,0}",
            "bf16[1,128,64]{2,1,0}",
        ],
        r#"{"scaled_dot_backend_config": {"lhs_batch_dimensions": [0], "rhs_batch_dimensions": [0], "dequantize_type": "BF16"}}"#,
    ));
    // rhs contracting over its first dimension.
    assert_valid(&dot(
        [
            "u32[16,8]{1,0}",
            "u32[8,32]{1,0}",
            "f8e8m0fnu[16,1]{1,0}",
            "f8e8m0fnu[1,32]{1,0}",
            "bf16[16,32]{1,0}",
        ],
        r#"{"scaled_dot_backend_config":{"lhs_contracting_dimensions":[1],"rhs_contracting_dimensions":[0],"element_dtype":"float8_e5m2"}}"#,
    ));
}

#[test]
fn hoc012_block_scaled_dot_operand_count() {
    assert_reports(
        &dot_with(DOT_SHAPES, "%a, %b, %sa", DOT_CONFIG),
        &["HOC012"],
    );
}

#[test]
fn hoc013_block_scaled_dot_config() {
    assert_reports(&dot_config("\"none\""), &["HOC013"]);
    assert_reports(
        &dot_config(r#"{"scaled_dot_backend_config":[1]}"#),
        &["HOC013"],
    );
    assert_reports(
        &dot_config(r#"{"scaled_dot_backend_config":{"lhs_contracting_dimensions":1}}"#),
        &["HOC013"],
    );
    assert_reports(
        &dot_config(r#"{"scaled_dot_backend_config":{"element_dtype":"float8_e4m3"}}"#),
        &["HOC013"],
    );
}

#[test]
fn hoc014_block_scaled_dot_data_type() {
    // f8 data on one side, packed on the other.
    assert_reports(
        &dot(
            [
                "f8e4m3fn[128,256]{1,0}",
                "u32[64,64]{1,0}",
                "f8e8m0fnu[128,8]{1,0}",
                "f8e8m0fnu[64,8]{1,0}",
                "f32[128,64]{1,0}",
            ],
            DOT_CONFIG,
        ),
        &["HOC014"],
    );
    // f8 data that element_dtype contradicts.
    assert_reports(
        &dot(
            [
                "f8e5m2[128,256]{1,0}",
                "f8e5m2[64,256]{1,0}",
                "f8e8m0fnu[128,8]{1,0}",
                "f8e8m0fnu[64,8]{1,0}",
                "f32[128,64]{1,0}",
            ],
            DOT_CONFIG,
        ),
        &["HOC014"],
    );
    // Neither packed nor MX-FP8.
    assert_reports(
        &dot(
            [
                "bf16[128,256]{1,0}",
                "bf16[64,256]{1,0}",
                "f8e8m0fnu[128,8]{1,0}",
                "f8e8m0fnu[64,8]{1,0}",
                "f32[128,64]{1,0}",
            ],
            DOT_CONFIG,
        ),
        &["HOC014"],
    );
}

#[test]
fn hoc015_block_scaled_dot_rank() {
    assert_reports(
        &dot(
            [
                "u32[64]{0}",
                "u32[64,64]{1,0}",
                "f8e8m0fnu[8]{0}",
                "f8e8m0fnu[64,8]{1,0}",
                "f32[64]{0}",
            ],
            "\"\"",
        ),
        &["HOC015"],
    );
}

#[test]
fn hoc016_block_scaled_dot_output_type() {
    let mut shapes = DOT_SHAPES;
    shapes[4] = "f16[128,64]{1,0}";
    assert_reports(&dot(shapes, DOT_CONFIG), &["HOC016"]);
}

#[test]
fn hoc017_block_scaled_dot_batch_dimensions() {
    let batched = [
        "u32[2,128,64]{2,1,0}",
        "u32[3,64,64]{2,1,0}",
        "f8e8m0fnu[2,128,8]{2,1,0}",
        "f8e8m0fnu[3,64,8]{2,1,0}",
        "f32[2,128,64]{2,1,0}",
    ];
    // Batch sizes 2 and 3.
    assert_reports(
        &dot(
            batched,
            r#"{"scaled_dot_backend_config":{"lhs_batch_dimensions":[0],"rhs_batch_dimensions":[0]}}"#,
        ),
        &["HOC017"],
    );
    // Counts differ.
    assert_reports(
        &dot_config(
            r#"{"scaled_dot_backend_config":{"lhs_batch_dimensions":[0],"rhs_batch_dimensions":[]}}"#,
        ),
        &["HOC017"],
    );
    // Out of bounds.
    assert_reports(
        &dot_config(
            r#"{"scaled_dot_backend_config":{"lhs_batch_dimensions":[2],"rhs_batch_dimensions":[0]}}"#,
        ),
        &["HOC017"],
    );
}

#[test]
fn hoc018_block_scaled_dot_contracting_dimensions() {
    // Sizes 128 and 64.
    assert_reports(
        &dot_config(
            r#"{"scaled_dot_backend_config":{"lhs_contracting_dimensions":[0],"rhs_contracting_dimensions":[1]}}"#,
        ),
        &["HOC018"],
    );
    // Both batch and contracting.
    assert_reports(
        &dot_config(
            r#"{"scaled_dot_backend_config":{"lhs_batch_dimensions":[1],"rhs_batch_dimensions":[1]}}"#,
        ),
        &["HOC018"],
    );
    // Out of range.
    assert_reports(
        &dot_config(r#"{"scaled_dot_backend_config":{"lhs_contracting_dimensions":[-1]}}"#),
        &["HOC018"],
    );
}

#[test]
fn hoc019_block_scaled_dot_scales() {
    let mut shapes = DOT_SHAPES;
    shapes[2] = "f8e8m0fnu[128,16]{1,0}";
    assert_reports(&dot(shapes, DOT_CONFIG), &["HOC019"]);
    let mut shapes = DOT_SHAPES;
    shapes[3] = "f8e4m3fn[64,8]{1,0}";
    assert_reports(&dot(shapes, DOT_CONFIG), &["HOC019"]);
    // 4 words hold 16 elements: less than a block.
    assert_reports(
        &dot(
            [
                "u32[128,4]{1,0}",
                "u32[64,4]{1,0}",
                "f8e8m0fnu[128,1]{1,0}",
                "f8e8m0fnu[64,1]{1,0}",
                "f32[128,64]{1,0}",
            ],
            DOT_CONFIG,
        ),
        &["HOC019"],
    );
}

#[test]
fn hoc020_block_scaled_dot_result_shape() {
    let mut shapes = DOT_SHAPES;
    shapes[4] = "f32[64,128]{1,0}";
    assert_reports(&dot(shapes, DOT_CONFIG), &["HOC020"]);
}

// -------------------------------------------------------------------- TopK

fn topk_with(input: &str, result: &str, operands: &str, config: &str) -> String {
    entry(&format!(
        "  %x = {input} parameter(0)\n  \
         ROOT %c = {result} custom-call({operands}), custom_call_target=\"AwsNeuronTopK\", backend_config=\"{config}\""
    ))
}

fn topk(result: &str, config: &str) -> String {
    topk_with("f32[8,256]{1,0}", result, "%x", config)
}

const TOPK_RESULT: &str = "(f32[8,5]{1,0}, u32[8,5]{1,0})";

#[test]
fn topk_valid_forms() {
    assert_valid(&topk(TOPK_RESULT, "5"));
    assert_valid(&topk_with(
        "bf16[2,3,64]{2,1,0}",
        "(bf16[2,3,64]{2,1,0}, s32[2,3,64]{2,1,0})",
        "%x",
        "64",
    ));
}

/// The contract changed (CONTRACT.md section 12): an integer TopK was valid
/// though not legalized; it is now Neuron's EVRF013.
#[test]
fn hoc029_an_integer_topk_violates_the_contract() {
    for ty in ["s32", "s64", "u32", "u8"] {
        let m = topk_with(
            &format!("{ty}[8,256]{{1,0}}"),
            &format!("({ty}[8,8]{{1,0}}, s32[8,8]{{1,0}})"),
            "%x",
            "8",
        );
        assert_reports(&m, &["HOC029"]);
        let vs = violations(&m);
        assert!(vs[0].cause.contains("EVRF013"), "{}", vs[0]);
        assert!(vs[0].resolution.contains("convert the input"), "{}", vs[0]);
    }
    // Other floats stay valid, just not legalized.
    assert_valid(&topk_with(
        "f64[8,256]{1,0}",
        "(f64[8,8]{1,0}, s32[8,8]{1,0})",
        "%x",
        "8",
    ));
}

#[test]
fn hoc021_topk_operand_count() {
    assert_reports(
        &topk_with("f32[8,256]{1,0}", TOPK_RESULT, "%x, %x", "5"),
        &["HOC021"],
    );
}

#[test]
fn hoc022_topk_config() {
    assert_reports(&topk(TOPK_RESULT, "k=5"), &["HOC022"]);
    assert_reports(&topk(TOPK_RESULT, " 5"), &["HOC022"]);
    assert_reports(&topk(TOPK_RESULT, "4294967301"), &["HOC022"]);
    assert_reports(&topk(TOPK_RESULT, "-99999999999999999999"), &["HOC022"]);
    let vs = violations(&topk(TOPK_RESULT, "-99999999999999999999"));
    assert!(vs[0].cause.contains("outside the int32 range"), "{}", vs[0]);
}

#[test]
fn hoc023_topk_operand_type() {
    assert_reports(
        &topk_with(
            "c64[8,256]{1,0}",
            "(c64[8,5]{1,0}, u32[8,5]{1,0})",
            "%x",
            "5",
        ),
        &["HOC023"],
    );
    assert_reports(
        &topk_with("f32[]", "(f32[]{}, u32[]{})", "%x", "1"),
        &["HOC023"],
    );
}

#[test]
fn hoc024_topk_result() {
    assert_reports(&topk("f32[8,5]{1,0}", "5"), &["HOC024"]);
    assert_reports(&topk("(f32[8,5]{1,0}, f32[8,5]{1,0})", "5"), &["HOC024"]);
    assert_reports(&topk("(bf16[8,5]{1,0}, u32[8,5]{1,0})", "5"), &["HOC024"]);
    assert_reports(&topk("(f32[4,5]{1,0}, u32[4,5]{1,0})", "5"), &["HOC024"]);
}

#[test]
fn hoc025_topk_k() {
    assert_reports(&topk(TOPK_RESULT, "6"), &["HOC025"]);
    assert_reports(
        &topk_with("f32[8,4]{1,0}", "(f32[8,5]{1,0}, u32[8,5]{1,0})", "%x", "5"),
        &["HOC025"],
    );
}

// ----------------------------------------------------------------- Softmax

fn softmax(target: &str, params: &[&str], operands: &str, result: &str, config: &str) -> String {
    let mut body = String::new();
    for (i, p) in params.iter().enumerate() {
        body.push_str(&format!("  %p{i} = {p} parameter({i})\n"));
    }
    body.push_str(&format!(
        "  ROOT %c = {result} custom-call({operands}), custom_call_target=\"{target}\", backend_config=\"{config}\""
    ));
    entry(&body)
}

const X: &str = "f32[4,128]{1,0}";
const IDX: &str = "s64[128]{0}";
const FWD: &str = "AwsNeuronSoftmax";
const BWD: &str = "AwsNeuronSoftmaxBackward";

#[test]
fn softmax_valid_forms() {
    assert_valid(&softmax(FWD, &[X], "%p0", X, "1"));
    assert_valid(&softmax(FWD, &[X], "%p0", X, "0"));
    assert_valid(&softmax(FWD, &[X, IDX], "%p0, %p1", X, "1"));
    assert_valid(&softmax(BWD, &[X, X], "%p0, %p1", X, "1"));
    assert_valid(&softmax(BWD, &[X, X, IDX], "%p0, %p1, %p2", X, "1"));
    // Not legalized, still valid: f64.
    assert_valid(&softmax(
        FWD,
        &["f64[4,8]{1,0}"],
        "%p0",
        "f64[4,8]{1,0}",
        "1",
    ));
}

#[test]
fn a_typed_ffi_softmax_config_is_not_checked() {
    let text = entry(
        "  %x = f32[8,128]{1,0} parameter(0)\n  \
         ROOT %c = f32[8,128]{1,0} custom-call(%x), custom_call_target=\"AwsNeuronSoftmax\", api_version=API_VERSION_TYPED_FFI, backend_config={approx = true, dim = -1 : i64, mode = \"exact\"}",
    );
    assert_valid(&text);
    assert_reports(
        &text.replace("custom-call(%x)", "custom-call(%x, %x, %x)"),
        &["HOC026"],
    );
}

#[test]
fn hoc026_softmax_operands() {
    assert_reports(&softmax(BWD, &[X], "%p0", X, "1"), &["HOC026"]);
    assert_reports(
        &softmax(FWD, &[X, X, X], "%p0, %p1, %p2", X, "1"),
        &["HOC026"],
    );
    // A second forward operand that is not the index.
    assert_reports(&softmax(FWD, &[X, X], "%p0, %p1", X, "1"), &["HOC026"]);
    assert_reports(
        &softmax(FWD, &[X, "s64[4]{0}"], "%p0, %p1", X, "1"),
        &["HOC026"],
    );
}

#[test]
fn hoc027_softmax_axis() {
    assert_reports(&softmax(FWD, &[X], "%p0", X, "2"), &["HOC027"]);
    assert_reports(&softmax(FWD, &[X], "%p0", X, "-1"), &["HOC027"]);
    assert_reports(&softmax(BWD, &[X, X], "%p0, %p1", X, "axis"), &["HOC027"]);
    assert_reports(&softmax(FWD, &[X], "%p0", X, ""), &["HOC027"]);
    assert_reports(
        &softmax(FWD, &[X], "%p0", X, "99999999999999999999"),
        &["HOC027"],
    );
}

#[test]
fn hoc028_softmax_shapes() {
    assert_reports(
        &softmax(BWD, &[X, "f32[4,64]{1,0}"], "%p0, %p1", X, "1"),
        &["HOC028"],
    );
    assert_reports(
        &softmax(FWD, &[X], "%p0", "(f32[4,128]{1,0})", "1"),
        &["HOC028"],
    );
}
