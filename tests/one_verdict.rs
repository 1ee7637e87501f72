//! One verdict in every run (issue 29, item 8): what a run writes, a second
//! run accepts. A module is either refused by the first run, or the first
//! run's output passes the second (with the same flags, and with none).
//!
//! The mutation probe's last class: the softmax raise took a call's operand
//! (the logits, seen through a convert or a transpose) to have the divide's
//! dimensions; where an op the verifier did not hold to its operand's
//! dimensions was in between, it wrote `AwsNeuronSoftmax(f32[4,4]) ->
//! f32[2,8]`, which the second run refused (HOC028). The verifier now holds
//! convert, transpose and reduce to their operands, and the pipeline holds
//! every pass to the contract on what it changed.

mod common;

use common::{data, files};
use hlo_opt::ir::verify::verify;
use hlo_opt::ir::{Module, Opcode};
use hlo_opt::neuron::contract;
use hlo_opt::passes::{Pass, PassContext, PassError, PassOptions, Pipeline, Scope};
use hlo_opt::text::{parse_module, print_module};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn hlo_opt(args: &[&str], input: &Path, output: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hlo-opt"))
        .args(args)
        .arg(input)
        .arg("-o")
        .arg(output)
        .output()
        .expect("hlo-opt runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The verdict of two runs: `Err(run 1's error)` when run 1 refuses (and
/// then wrote nothing); otherwise run 1's output must pass run 2, with
/// `args` and with no flags at all, or the test fails.
fn two_runs(args: &[&str], input: &Path) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.hlo");
    let run1 = hlo_opt(args, input, &first);
    if !run1.status.success() {
        assert!(
            !first.exists(),
            "{}: run 1 failed but wrote its output",
            input.display()
        );
        return Err(stderr(&run1));
    }
    for flags in [args, &[]] {
        let second = dir.path().join("second.hlo");
        let run2 = hlo_opt(flags, &first, &second);
        assert!(
            run2.status.success(),
            "{} {args:?}: run 1 accepted and wrote a module that run 2 {flags:?} refuses:\n{}\n--- run 1 wrote ---\n{}",
            input.display(),
            stderr(&run2),
            std::fs::read_to_string(&first).unwrap_or_default()
        );
    }
    Ok(())
}

fn case(name: &str) -> PathBuf {
    data(&format!("one_verdict/{name}"))
}

const FLAGS: &[&[&str]] = &[
    &[],
    &["--all-computations"],
    &["--passes", "native-to-custom-softmax"],
    &[
        "--passes",
        "native-to-custom-softmax-dx,native-to-custom-softmax,legalize-softmax",
    ],
];

/// The probe's modules: a native softmax whose numerator reaches the exp
/// through a convert or transpose of other dimensions, in the entry, a
/// fusion and a sort comparator. Run 1 used to raise it into a call that
/// breaks the contract and write it; now it refuses the module, naming the
/// op.
#[test]
fn a_softmax_seen_through_a_resized_op_gets_one_verdict() {
    for (file, instruction) in [
        ("raise_through_resized_transpose.hlo", "instruction t:"),
        ("raise_through_resized_convert.hlo", "instruction c:"),
        ("raise_in_fusion.hlo", "instruction t:"),
        ("raise_in_sort_comparator.hlo", "instruction t:"),
    ] {
        for args in FLAGS {
            let e = two_runs(args, &case(file))
                .expect_err("a module whose ops do not keep their operands' dimensions");
            assert!(e.contains("invalid module"), "{file} {args:?}: {e}");
            assert!(e.contains(instruction), "{file} {args:?}: {e}");
            assert!(e.contains(&format!("{file}:")), "names the line: {e}");
        }
    }
}

/// The ops the raise walks through are held to their operands'
/// dimensions, as XLA's verifier holds them.
#[test]
fn convert_transpose_and_reduce_keep_their_operands_dimensions() {
    let module = |body: &str| {
        format!(
            "HloModule m\n\n%add (a: f32[], b: f32[]) -> f32[] {{\n  %a = f32[] parameter(0)\n  \
             %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}}\n\n\
             ENTRY %main (x: f32[4,6]) -> f32[] {{\n  %x = f32[4,6]{{1,0}} parameter(0)\n  \
             %z = f32[] constant(0)\n  {body}\n  ROOT %r = f32[] constant(0)\n}}\n"
        )
    };
    let verdict = |body: &str| {
        let m = parse_module(&module(body), "t.hlo").expect("parses");
        verify(&m).map_err(|e| e.to_string())
    };
    for ok in [
        "%y = bf16[4,6]{1,0} convert(%x)",
        "%y = f32[6,4]{1,0} transpose(%x), dimensions={1,0}",
        "%y = f32[4]{0} reduce(%x, %z), dimensions={1}, to_apply=%add",
        "%y = f32[] reduce(%x, %z), dimensions={0,1}, to_apply=%add",
        "%y = (f32[6], f32[6]) reduce(%x, %x, %z, %z), dimensions={0}, to_apply=%add",
    ] {
        verdict(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    for (bad, why) in [
        (
            "%y = bf16[6,4]{1,0} convert(%x)",
            "convert result dimensions differ",
        ),
        (
            "%y = f32[4,6]{1,0} transpose(%x), dimensions={1,0}",
            "transpose of f32[4,6]{1,0} by [1, 0] is [6,4]",
        ),
        (
            "%y = f32[6]{0} reduce(%x, %z), dimensions={1}, to_apply=%add",
            "reduce of f32[4,6]{1,0} over dimensions [1] is [4]",
        ),
        (
            "%y = (f32[6], f32[4]) reduce(%x, %x, %z, %z), dimensions={0}, to_apply=%add",
            "is [6], not f32[4]",
        ),
        (
            "%y = f32[6] reduce(%x, %x, %z, %z), dimensions={0}, to_apply=%add",
            "a tuple of one array per input",
        ),
    ] {
        let e = verdict(bad).expect_err(bad);
        assert!(e.contains("instruction y") && e.contains(why), "{bad}: {e}");
    }
}

/// A call breaking the contract, as an unused instruction `%bad` reading
/// `%x` (`f32[2,8]`), and the check it breaks.
const BROKEN_CALLS: &[(&str, &str)] = &[
    (
        "f32[2,4]{1,0} custom-call(%x), custom_call_target=\"AwsNeuronSoftmax\", backend_config=\"1\"",
        "HOC028",
    ),
    (
        "f32[2,8]{1,0} custom-call(%x, %x, %x), custom_call_target=\"AwsNeuronSoftmax\", backend_config=\"1\"",
        "HOC026",
    ),
    (
        "f32[2,8]{1,0} custom-call(%x), custom_call_target=\"AwsNeuronSoftmaxBackward\", backend_config=\"1\"",
        "HOC026",
    ),
    (
        "f32[2,8]{1,0} custom-call(%x), custom_call_target=\"AwsNeuronSoftmax\", backend_config=\"2\"",
        "HOC027",
    ),
    (
        "(f32[2,3]{1,0}, u32[2,3]{1,0}) custom-call(%x, %x), custom_call_target=\"AwsNeuronTopK\", backend_config=\"3\"",
        "HOC021",
    ),
    (
        "(f32[2,3]{1,0}, u32[4,3]{1,0}) custom-call(%x), custom_call_target=\"AwsNeuronTopK\", backend_config=\"3\"",
        "HOC024",
    ),
];

/// The module with `call` (as `%bad = {call}`) in the computation named
/// by `place`, and that computation's name.
fn placed(place: &str, call: &str) -> (String, &'static str) {
    let bad = format!("  %bad = {call}\n");
    let holder = format!(
        "%holder (x: f32[2,8]) -> f32[2,8] {{\n  %x = f32[2,8]{{1,0}} parameter(0)\n{bad}  ROOT %neg = f32[2,8]{{1,0}} negate(%x)\n}}\n\n"
    );
    let head = "HloModule m, entry_computation_layout={(f32[2,8]{1,0})->f32[2,8]{1,0}}\n\n";
    let entry = |root: &str| {
        format!(
            "ENTRY %main (p: f32[2,8]) -> f32[2,8] {{\n  %p = f32[2,8]{{1,0}} parameter(0)\n{root}}}\n"
        )
    };
    match place {
        "entry" => (
            format!(
                "{head}ENTRY %main (x: f32[2,8]) -> f32[2,8] {{\n  %x = f32[2,8]{{1,0}} parameter(0)\n{bad}  ROOT %neg = f32[2,8]{{1,0}} negate(%x)\n}}\n"
            ),
            "main",
        ),
        "fusion" => (
            format!(
                "{head}{holder}{}",
                entry("  ROOT %f = f32[2,8]{1,0} fusion(%p), kind=kLoop, calls=%holder\n")
            ),
            "holder",
        ),
        "call" => (
            format!(
                "{head}{holder}{}",
                entry("  ROOT %c = f32[2,8]{1,0} call(%p), to_apply=%holder\n")
            ),
            "holder",
        ),
        "while body" => (
            format!(
                "{head}{holder}%cond (c: f32[2,8]) -> pred[] {{\n  %c = f32[2,8]{{1,0}} parameter(0)\n  ROOT %no = pred[] constant(false)\n}}\n\n{}",
                entry("  ROOT %w = f32[2,8]{1,0} while(%p), condition=%cond, body=%holder\n")
            ),
            "holder",
        ),
        "uncalled" => (
            format!(
                "{head}{holder}{}",
                entry("  ROOT %n = f32[2,8]{1,0} negate(%p)\n")
            ),
            "holder",
        ),
        "sort comparator" => (
            format!(
                "{head}%less (l: f32[], r: f32[]) -> pred[] {{\n  %l = f32[] parameter(0)\n  %r = f32[] parameter(1)\n  %x = f32[2,8]{{1,0}} broadcast(%l), dimensions={{}}\n{bad}  ROOT %lt = pred[] compare(%l, %r), direction=LT\n}}\n\n{}",
                entry("  ROOT %s = f32[2,8]{1,0} sort(%p), dimensions={1}, to_apply=%less\n")
            ),
            "less",
        ),
        _ => unreachable!("{place}"),
    }
}

/// The contract check reads every computation, whatever the passes walk:
/// a broken call in a fusion, a called computation, a loop body, a
/// computation nothing calls or a sort comparator is refused by run 1,
/// with the default scope, `--all-computations`, or passes that walk only
/// the entry.
#[test]
fn a_broken_call_is_refused_wherever_it_sits_whatever_the_scope() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.hlo");
    for place in [
        "entry",
        "fusion",
        "call",
        "while body",
        "uncalled",
        "sort comparator",
    ] {
        for (call, id) in BROKEN_CALLS {
            let (text, computation) = placed(place, call);
            std::fs::write(&input, &text).unwrap();
            for args in [
                &[][..],
                &["--all-computations"],
                &["--passes", "legalize-topk"],
                &["--passes", "legalize-compare"],
            ] {
                let e = two_runs(args, &input)
                    .expect_err(&format!("{place} {args:?}: a broken call:\n{text}"));
                let wanted = format!("in computation {computation}, instruction bad:");
                assert!(
                    e.contains(id) && e.contains(&wanted),
                    "{place} {args:?} ({id}, {wanted}): {e}"
                );
            }
        }
    }
}

/// `--no-contract-checks` turns the contract off for input and output
/// alike: the run writes what it was given, and a second run with the
/// flag accepts it; without the flag it is refused as the input would be.
#[test]
fn without_the_checks_both_runs_agree_too() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.hlo");
    let (text, _) = placed("fusion", BROKEN_CALLS[0].0);
    std::fs::write(&input, text).unwrap();
    let (first, second) = (dir.path().join("1.hlo"), dir.path().join("2.hlo"));
    let run1 = hlo_opt(&["--no-contract-checks"], &input, &first);
    assert!(run1.status.success(), "{}", stderr(&run1));
    let run2 = hlo_opt(&["--no-contract-checks"], &first, &second);
    assert!(run2.status.success(), "{}", stderr(&run2));
    let strict = hlo_opt(&[], &first, &second);
    assert!(stderr(&strict).contains("HOC028"), "{}", stderr(&strict));
}

/// A pass that breaks the contract where it changes the module: adds a
/// second data operand to each forward softmax (HOC026), wherever it is.
struct AddsAnOperand;

impl Pass for AddsAnOperand {
    fn name(&self) -> &'static str {
        "adds-an-operand"
    }

    fn run(&mut self, module: &mut Module, _: &mut PassContext) -> Result<bool, PassError> {
        let mut found = Vec::new();
        for (cid, c) in module.computations() {
            for (id, i) in c.instructions() {
                if i.opcode == Opcode::CustomCall
                    && i.custom_call_target() == Some("AwsNeuronSoftmax")
                {
                    found.push((cid, id));
                }
            }
        }
        for &(cid, id) in &found {
            let old = module.comp(cid).instr(id);
            let x = old.operand(0);
            let call = old.clone_with_operands([x, x]);
            let new = module.add_instruction(cid, call);
            module.replace_instruction(cid, id, new);
        }
        Ok(!found.is_empty())
    }
}

fn softmax_in_a_fusion() -> Module {
    let (text, _) = placed(
        "fusion",
        "f32[2,8]{1,0} custom-call(%x), custom_call_target=\"AwsNeuronSoftmax\", backend_config=\"1\"",
    );
    let m = parse_module(&text, "t.hlo").unwrap();
    verify(&m).unwrap();
    assert!(contract::check(&m).is_empty());
    m
}

/// A violation a pass makes is an error naming the pass and the call (the
/// command line then writes nothing); the module it left is not handed on.
#[test]
fn a_pass_that_breaks_the_contract_is_named_with_the_call() {
    let mut m = softmax_in_a_fusion();
    let mut p = Pipeline::new(vec![Box::new(AddsAnOperand)], PassOptions::default());
    let mut handed_on = 0;
    let e = p
        .run_with(&mut m, &mut |_, _| {
            handed_on += 1;
            Ok(())
        })
        .expect_err("the pass broke the contract");
    assert_eq!(handed_on, 0, "a dump or a check saw the broken module");
    let PassError::Contract { pass, violations } = &e else {
        panic!("{e}");
    };
    assert_eq!(*pass, "adds-an-operand");
    assert_eq!(violations.len(), 1, "{e}");
    assert_eq!(violations[0].check.code(), "HOC026");
    assert_eq!(violations[0].computation, "holder");
    // `replace_instruction` hands a same-target call the old name.
    assert_eq!(violations[0].instruction, "bad");
    let text = e.to_string();
    assert!(
        text.starts_with("pass adds-an-operand left 1 Neuron custom call breaking the contract")
            && text.contains("HOC026 AwsNeuronSoftmax in computation holder, instruction bad:"),
        "{text}"
    );

    // Off (`--no-contract-checks`, `contract_checks=False`): not checked.
    let mut m = softmax_in_a_fusion();
    let mut p = Pipeline::new(vec![Box::new(AddsAnOperand)], PassOptions::default());
    p.contract_checks = false;
    p.run(&mut m).expect("no contract to hold the pass to");
}

/// A pipeline run on input that breaks the contract (a library caller that
/// skipped the check) does not blame the passes for what was there.
#[test]
fn what_the_input_broke_is_not_blamed_on_a_pass() {
    let (text, _) = placed("entry", BROKEN_CALLS[4].0);
    // And a softmax the default pipeline legalizes in the same computation.
    let text = text.replace(
        "  ROOT %neg",
        "  %s = f32[2,8]{1,0} custom-call(%x), custom_call_target=\"AwsNeuronSoftmax\", backend_config=\"1\"\n  ROOT %neg",
    );
    let mut m = parse_module(&text, "t.hlo").unwrap();
    verify(&m).unwrap();
    assert_eq!(contract::check(&m).len(), 1);
    let mut p = Pipeline::from_names(&["legalize-softmax"]).unwrap();
    let runs = p.run(&mut m).expect("only the input's violation");
    assert!(runs[0].changed);
}

/// Every module of the test data with a Neuron call or a softmax: what
/// the first run (in process: verify, check, the default pipeline in each
/// scope, print) accepts, the second accepts.
#[test]
fn every_module_of_the_test_data_gets_one_verdict() {
    let mut inputs: Vec<PathBuf> = Vec::new();
    let mut dirs = vec![
        data("corpus"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden"),
    ];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "hlo")
                && std::fs::metadata(&p).unwrap().len() < 1 << 20
            {
                inputs.push(p);
            }
        }
    }
    inputs.extend(files("one_verdict", |n| n.ends_with(".hlo")));
    inputs.sort();
    let mut accepted = 0;
    for path in &inputs {
        let text = std::fs::read_to_string(path).unwrap();
        if !text.contains("AwsNeuron") && !text.contains("exponential") {
            continue;
        }
        for scope in [Scope::Original, Scope::AllComputations] {
            let Some(first) = run(&text, scope) else {
                continue;
            };
            accepted += 1;
            assert!(
                run(&first, scope).is_some() && run(&first, Scope::Original).is_some(),
                "{} ({scope:?}): run 1 wrote what run 2 refuses",
                path.display()
            );
        }
    }
    assert!(accepted > 100, "only {accepted} modules accepted");
}

/// A run in process: `None` when refused, else the text it writes.
fn run(text: &str, scope: Scope) -> Option<String> {
    let mut m = parse_module(text, "in.hlo").ok()?;
    verify(&m).ok()?;
    if !contract::check(&m).is_empty() {
        return None;
    }
    let mut p = Pipeline::default_pipeline();
    p.options.scope = scope;
    match p.run(&mut m) {
        Ok(_) => Some(print_module(&m)),
        Err(PassError::BadInput { .. }) => None,
        Err(e) => panic!("a pass failed on valid input: {e}\n{text}"),
    }
}
