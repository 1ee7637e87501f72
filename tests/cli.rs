//! The `hlo-opt` binary: round trips, errors, atomic output.

mod common;
use common::*;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

fn hlo_opt() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hlo-opt"))
}

#[test]
fn empty_pass_list_round_trips_a_file_to_stdout() {
    let path = data("corpus/softmax_vjp_f32.hlo");
    let out = hlo_opt()
        .args(["--passes", ""])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), read(&path));
}

/// Runs `hlo-opt` with `input` on standard input.
fn run_with_stdin(args: &[&str], input: &str) -> std::process::Output {
    let mut child = hlo_opt()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn dash_reads_stdin() {
    let text = read(&data("corpus/topk_f32.short.hlo"));
    let out = run_with_stdin(&["--passes", "", "-"], &text);
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), text);
}

#[test]
fn short_option_prints_the_short_form() {
    let out = hlo_opt()
        .args(["--passes", "", "--short"])
        .arg(data("corpus/argmax_f32.hlo"))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        read(&data("corpus/argmax_f32.short.hlo"))
    );
}

#[test]
fn output_file_is_written_whole() {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("out.hlo");
    let path = data("corpus/mha_fwd_f32.hlo");
    let out = hlo_opt()
        .args(["--passes", "", "-o"])
        .arg(&dest)
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(std::fs::read_to_string(&dest).unwrap(), read(&path));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary file is left"
    );
}

/// Runs a round trip of a small corpus module into `dest`.
fn round_trip_into(dest: &std::path::Path) -> (std::process::Output, String) {
    let path = data("corpus/topk_f32.short.hlo");
    let out = hlo_opt()
        .args(["--passes", "", "-o"])
        .arg(dest)
        .arg(&path)
        .output()
        .unwrap();
    (out, read(&path))
}

#[cfg(unix)]
#[test]
fn output_into_a_fifo_writes_through_it_and_leaves_it_a_fifo() {
    // The device case (`-o /dev/null`): renaming a temporary file over it
    // once replaced this machine's /dev/null with a plain file.
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let (out, expected) = round_trip_into(&fifo);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(reader.join().unwrap(), expected);
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "the FIFO was replaced: {kind:?}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[cfg(unix)]
#[test]
fn output_through_a_symlink_replaces_its_target_and_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target.hlo");
    std::fs::write(&target, "previous contents").unwrap();
    let link = dir.path().join("link.hlo");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let (out, expected) = round_trip_into(&link);
    assert!(out.status.success());
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), expected);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}

#[cfg(unix)]
#[test]
fn output_files_get_ordinary_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let dir = tempfile::tempdir().unwrap();
    // A new file: as any program creates one under the same umask.
    let reference = dir.path().join("reference");
    std::fs::File::create(&reference).unwrap();
    let fresh = dir.path().join("fresh.hlo");
    assert!(round_trip_into(&fresh).0.status.success());
    assert_eq!(mode(&fresh), mode(&reference));
    // An existing file keeps its own.
    let existing = dir.path().join("existing.hlo");
    std::fs::write(&existing, "x").unwrap();
    std::fs::set_permissions(&existing, std::fs::Permissions::from_mode(0o640)).unwrap();
    assert!(round_trip_into(&existing).0.status.success());
    assert_eq!(mode(&existing), 0o640);
}

#[test]
fn a_parse_error_names_file_line_and_column_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("bad.hlo");
    let text = "HloModule m\n\nENTRY e {\n  ROOT x = f32[] bogus-op()\n}\n";
    std::fs::write(&input, text).unwrap();
    let dest = dir.path().join("out.hlo");
    std::fs::write(&dest, "previous contents").unwrap();
    let out = hlo_opt()
        .args(["-o"])
        .arg(&dest)
        .arg(&input)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("bad.hlo:4:18: error: Unknown opcode: bogus-op"),
        "{err}"
    );
    assert!(
        err.contains("  ROOT x = f32[] bogus-op()\n                 ^"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&dest).unwrap(), "previous contents");
    assert_eq!(std::fs::read_to_string(&input).unwrap(), text);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}

#[test]
fn an_unknown_pass_lists_the_valid_ones() {
    let out = hlo_opt()
        .args(["--passes", "dce,no-such-pass"])
        .arg(data("corpus/topk_f32.hlo"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    // Once "error: error: unknown pass".
    assert!(
        err.contains("topk_f32.hlo: error: unknown pass 'no-such-pass'; valid passes are: legalize-intrinsics"),
        "{err}"
    );
}

#[test]
fn list_passes_shows_names_and_orders() {
    let out = hlo_opt().arg("--list-passes").output().unwrap();
    assert!(out.status.success());
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(
        s.lines()
            .any(|l| l.split_whitespace().take(2).eq(["-", "dce"])),
        "{s}"
    );
}

#[test]
fn the_hand_edited_neuron_fixture_is_rejected() {
    // MANIFEST.md: dummy_hlo_nki_kernel.txt reuses `%call.606` in two
    // computations and calls a bf16 computation with an f32 operand.
    let out = hlo_opt()
        .args(["--passes", ""])
        .arg(data("neuron/dummy_hlo_nki_kernel.txt"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(
            "dummy_hlo_nki_kernel.txt:17:4: error: invalid module: in computation AddComputation.14, instruction call.606: instruction name call.606 is not unique in the module"
        ),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn an_invalid_module_on_stdin_is_located_without_its_line() {
    // Standard input is not kept (nor can it be read again): the error
    // gives line and column only.
    let text = read(&data("neuron/dummy_hlo_nki_kernel.txt"));
    let out = run_with_stdin(&["--passes", "", "-"], &text);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err.trim_end(),
        "hlo-opt: <stdin>:17:4: error: invalid module: in computation AddComputation.14, instruction call.606: instruction name call.606 is not unique in the module"
    );
}

#[cfg(unix)]
#[test]
fn an_invalid_module_from_a_fifo_is_located_without_waiting_for_it_again() {
    // A FIFO cannot be read twice (opening it again would wait for a
    // writer): line and column only, as for standard input.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let writer = {
        let fifo = fifo.clone();
        let text = read(&data("neuron/dummy_hlo_nki_kernel.txt"));
        std::thread::spawn(move || std::fs::write(fifo, text).unwrap())
    };
    let out = hlo_opt()
        .args(["--passes", ""])
        .arg(&fifo)
        .output()
        .unwrap();
    writer.join().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.trim_end().ends_with(":17:4: error: invalid module: in computation AddComputation.14, instruction call.606: instruction name call.606 is not unique in the module"),
        "{err}"
    );
}

#[test]
fn a_missing_input_file_is_an_error() {
    let out = hlo_opt().arg("/nonexistent/x.hlo").output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8(out.stderr)
        .unwrap()
        .contains("/nonexistent/x.hlo: error:"));
}

/// A QuantizeMX with block_size 16 and a softmax whose axis is out of range.
const CONTRACT_VIOLATIONS: &str = "HloModule m\n\nENTRY %main {\n  \
    %x = bf16[128,256]{1,0} parameter(0)\n  \
    %q = (u32[128,64]{1,0}, f8e8m0fnu[128,8]{1,0}) custom-call(%x), custom_call_target=\"QuantizeMX\", backend_config={\"dtype\":\"float8_e4m3fn\",\"dim\":-1,\"block_size\":16,\"scale_method\":\"EMAX\"}\n  \
    %s = bf16[128,256]{1,0} custom-call(%x), custom_call_target=\"AwsNeuronSoftmax\", backend_config=\"2\"\n  \
    ROOT %t = ((u32[128,64]{1,0}, f8e8m0fnu[128,8]{1,0}), bf16[128,256]{1,0}) tuple(%q, %s)\n}\n";

#[test]
fn contract_violations_are_errors_pointing_at_each_instruction() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("mx.hlo");
    std::fs::write(&input, CONTRACT_VIOLATIONS).unwrap();
    let dest = dir.path().join("out.hlo");
    // Before any pass, whichever pipeline: the default one, or one pass
    // that would not even touch these calls.
    for passes in [None, Some("legalize-compare")] {
        let mut cmd = hlo_opt();
        if let Some(p) = passes {
            cmd.args(["--passes", p]);
        }
        let out = cmd.arg("-o").arg(&dest).arg(&input).output().unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.starts_with("hlo-opt: "), "{err}");
        assert!(
            err.contains(
                "mx.hlo:5:4: error: contract violation HOC004 QuantizeMX in computation main, instruction q: block_size 16: block_size must be 32\n  %q = (u32"
            ),
            "{err}"
        );
        assert!(
            err.contains("\n   ^\n  resolution: set \"block_size\" to 32"),
            "{err}"
        );
        assert!(
            err.contains(
                "mx.hlo:6:4: error: contract violation HOC027 AwsNeuronSoftmax in computation main, instruction s: axis 2 is not a dimension of the rank-2 result"
            ),
            "{err}"
        );
        assert!(
            err.trim_end()
                .ends_with("2 contract violations; --no-contract-checks skips these checks"),
            "{err}"
        );
        assert!(out.stdout.is_empty());
        assert!(!dest.exists(), "nothing is written");
    }
}

#[test]
fn no_contract_checks_lets_a_violation_through() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("mx.hlo");
    std::fs::write(&input, CONTRACT_VIOLATIONS).unwrap();
    let out = hlo_opt()
        .args(["--no-contract-checks", "--passes", "legalize-compare"])
        .arg(&input)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), CONTRACT_VIOLATIONS);
}

#[test]
fn a_round_trip_runs_no_contract_check() {
    // No pass runs, so nothing depends on the calls' contract: converting
    // or reprinting a module never fails on it.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("mx.hlo");
    std::fs::write(&input, CONTRACT_VIOLATIONS).unwrap();
    let out = hlo_opt()
        .args(["--passes", ""])
        .arg(&input)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), CONTRACT_VIOLATIONS);
}

fn run_ok(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A `.pb` is read as a proto and printed as XLA prints it.
#[test]
fn a_proto_prints_as_xla_prints_it() {
    let out = run_ok(
        hlo_opt()
            .args(["--passes", ""])
            .arg(data("corpus/argmax_f32.opt.pb")),
    );
    assert_eq!(
        String::from_utf8(out).unwrap(),
        read(&data("corpus/argmax_f32.opt.from_pb.hlo"))
    );
}

/// `-o X.pb` writes a binary proto (`--output-format proto` the same to
/// stdout), which reads back as the text it came from (a module XLA prints
/// the same from text and from proto); `--output-format text` overrides
/// the extension.
#[test]
fn output_format_follows_the_extension_or_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let text = data("corpus/softmax_fwd_lastaxis_f32.hlo");
    let pb = dir.path().join("out.pb");
    run_ok(hlo_opt().args(["--passes", "", "-o"]).arg(&pb).arg(&text));
    let written = std::fs::read(&pb).unwrap();
    assert!(std::str::from_utf8(&written).is_err(), "a binary proto");
    let stdout = run_ok(
        hlo_opt()
            .args(["--passes", "", "--output-format", "proto"])
            .arg(&text),
    );
    assert_eq!(stdout, written);
    let back = run_ok(hlo_opt().args(["--passes", ""]).arg(&pb));
    assert_eq!(String::from_utf8(back).unwrap(), read(&text));
    let as_text = dir.path().join("text.pb");
    run_ok(
        hlo_opt()
            .args(["--passes", "", "--output-format", "text", "-o"])
            .arg(&as_text)
            .arg(&text),
    );
    assert_eq!(std::fs::read_to_string(&as_text).unwrap(), read(&text));
}

/// Without a `.pb` extension the content decides (neuronx-distributed
/// names its binary protos `.hlo`); `--input-format` overrides both, and a
/// wrong one is a clear error.
#[test]
fn input_format_follows_the_extension_the_content_or_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let proto_named_hlo = dir.path().join("module.hlo");
    std::fs::copy(data("corpus/argmax_f32.opt.pb"), &proto_named_hlo).unwrap();
    let out = run_ok(hlo_opt().args(["--passes", ""]).arg(&proto_named_hlo));
    assert_eq!(
        String::from_utf8(out).unwrap(),
        read(&data("corpus/argmax_f32.opt.from_pb.hlo"))
    );
    let forced = run_ok(
        hlo_opt()
            .args(["--passes", "", "--input-format", "proto"])
            .arg(&proto_named_hlo),
    );
    assert_eq!(
        String::from_utf8(forced).unwrap(),
        read(&data("corpus/argmax_f32.opt.from_pb.hlo"))
    );

    let out = hlo_opt()
        .args(["--passes", "", "--input-format", "text"])
        .arg(&proto_named_hlo)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("module.hlo"), "{err}");
    assert!(err.contains("--input-format proto"), "{err}");
    assert!(out.stdout.is_empty());

    let out = hlo_opt()
        .args(["--passes", "", "--input-format", "proto"])
        .arg(data("corpus/argmax_f32.hlo"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("argmax_f32.hlo: error:"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn help_names_the_eval_command() {
    let out = hlo_opt().arg("--help").output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    assert!(help.contains("eval"), "{help}");
}

/// The files of a dump directory, sorted.
fn dump_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The dumps of the default pipeline on examples/softmax_vjp_f32.hlo: the
/// input, then the two raises, which change the module (the 8 passes
/// before them find nothing; add-logit-output finds no output softmax).
const SOFTMAX_VJP_DUMPS: [&str; 3] = [
    "00.input.hlo",
    "08.native-to-custom-softmax-dx.hlo",
    "09.native-to-custom-softmax.hlo",
];

/// `--dump-dir` writes the input and the module after each pass that
/// changed it, in run order, each a module that reads back.
#[test]
fn dump_dir_writes_the_module_after_each_pass_that_changed_it() {
    let dir = tempfile::tempdir().unwrap();
    let dumps = dir.path().join("dumps");
    let out = hlo_opt()
        .arg("examples/softmax_vjp_f32.hlo")
        .arg("--dump-dir")
        .arg(&dumps)
        .arg("-o")
        .arg(dir.path().join("out.hlo"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let names = dump_names(&dumps);
    // The default pipeline: 7 passes before the two raises, which change
    // the module; add-logit-output finds no output softmax.
    assert_eq!(names, SOFTMAX_VJP_DUMPS);
    let last = std::fs::read_to_string(dumps.join("09.native-to-custom-softmax.hlo")).unwrap();
    let final_out = std::fs::read_to_string(dir.path().join("out.hlo")).unwrap();
    assert_eq!(last, final_out);
    let input = std::fs::read_to_string("examples/softmax_vjp_f32.hlo").unwrap();
    assert_eq!(
        std::fs::read_to_string(dumps.join("00.input.hlo")).unwrap(),
        input
    );
    for n in &names {
        let text = std::fs::read_to_string(dumps.join(n)).unwrap();
        hlo_opt::text::parse_module(&text, n).unwrap();
    }
}

/// `--dump-dir` joins `--check-numerics`: both observe the one pipeline
/// run, the dumps are those of the run without the check, and the tables
/// are printed as they are without dumps.
#[test]
fn dump_dir_and_check_numerics_observe_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let dumps = dir.path().join("dumps");
    let out = hlo_opt()
        .arg("examples/softmax_vjp_f32.hlo")
        .arg("--check-numerics")
        .arg("--dump-dir")
        .arg(&dumps)
        .arg("-o")
        .arg(dir.path().join("out.hlo"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let names = dump_names(&dumps);
    assert_eq!(names, SOFTMAX_VJP_DUMPS);
    // Each raise is checked where it happened (issue 31).
    for pass in ["native-to-custom-softmax-dx", "native-to-custom-softmax"] {
        assert!(
            stderr.contains(&format!(
                "check-numerics: pass {pass}: changed, 1 rewrite checked where it happened"
            )),
            "{stderr}"
        );
    }
    assert!(
        stderr.contains("check-numerics: pass legalize-compare: unchanged"),
        "{stderr}"
    );
}

/// `hlo-opt eval` reads binary protos as the main command does.
#[test]
fn eval_reads_a_proto() {
    let dir = tempfile::tempdir().unwrap();
    let pb = dir.path().join("m.pb");
    let text =
        "HloModule m\n\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT r = f32[2] add(a, a)\n}\n";
    let src = dir.path().join("m.hlo");
    std::fs::write(&src, text).unwrap();
    let conv = hlo_opt()
        .args(["--passes", ""])
        .arg(&src)
        .arg("-o")
        .arg(&pb)
        .output()
        .unwrap();
    assert!(conv.status.success());
    let from_text = hlo_opt()
        .args(["eval", "--seed", "3"])
        .arg(&src)
        .output()
        .unwrap();
    let from_proto = hlo_opt()
        .args(["eval", "--seed", "3"])
        .arg(&pb)
        .output()
        .unwrap();
    assert!(
        from_proto.status.success(),
        "{}",
        String::from_utf8_lossy(&from_proto.stderr)
    );
    assert_eq!(from_text.stdout, from_proto.stdout);
    assert!(!from_proto.stdout.is_empty());
}

/// The registry's names are the passes' own.
#[test]
fn every_registry_name_is_its_pass_name() {
    for info in hlo_opt::passes::registry() {
        assert_eq!((info.make)().name(), info.name);
    }
}

/// A proto in a regular file is read a computation at a time, not whole
/// (the command's memory): it reads as the same bytes on stdin do, which
/// are held whole, and so does a wrapper (read whole) and a fault (the
/// same message at the same byte).
#[test]
fn a_proto_file_reads_as_the_same_bytes_on_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let bare = std::fs::read(data("corpus/softmax_fwd_lastaxis_f32.opt.pb")).unwrap();
    let mut wrapped = Vec::new();
    prost::encoding::bytes::encode(1, &bare, &mut wrapped);
    let mut truncated = bare.clone();
    truncated.truncate(bare.len() * 2 / 3);
    let mut bad_field = bare.clone();
    // The first computation's first byte: its name's key becomes an end
    // group, a fault inside it.
    bad_field[bare.iter().position(|&b| b == 0x1a).unwrap() + 3] = 0x0c;
    let from_stdin = |bytes: &[u8]| {
        let mut child = hlo_opt()
            .args(["--passes", "", "--input-format", "proto", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(bytes).unwrap();
        child.wait_with_output().unwrap()
    };
    let want = String::from_utf8(run_ok(
        hlo_opt()
            .args(["--passes", ""])
            .arg(data("corpus/softmax_fwd_lastaxis_f32.opt.pb")),
    ))
    .unwrap();
    for (name, bytes, ok) in [
        ("bare", &bare, true),
        ("HloProto", &wrapped, true),
        ("truncated", &truncated, false),
        ("bad field", &bad_field, false),
    ] {
        let path = dir.path().join("m.pb");
        std::fs::write(&path, bytes).unwrap();
        let file = hlo_opt()
            .args(["--passes", ""])
            .arg(&path)
            .output()
            .unwrap();
        let stdin = from_stdin(bytes);
        assert_eq!(file.status.success(), ok, "{name}");
        assert_eq!(stdin.status.success(), ok, "{name}");
        assert_eq!(file.stdout, stdin.stdout, "{name}");
        if ok {
            assert_eq!(String::from_utf8_lossy(&file.stdout), want, "{name}");
        } else {
            let file_err =
                String::from_utf8_lossy(&file.stderr).replace(&*path.to_string_lossy(), "<stdin>");
            let stdin_err = String::from_utf8_lossy(&stdin.stderr);
            assert!(file_err.contains("error: at byte "), "{name}: {file_err}");
            assert_eq!(file_err, stdin_err, "{name}");
        }
    }
}

/// `--help` and `--version` into a full device say so and exit 1 (they
/// exited 0 with nothing written).
#[cfg(unix)]
#[test]
fn help_and_version_into_a_full_device_fail() {
    for flag in ["--help", "--version"] {
        let out = hlo_opt()
            .arg(flag)
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{flag}: {err}");
        assert!(err.contains("cannot write to standard output"), "{err}");
    }
    let ok = hlo_opt().arg("--version").output().unwrap();
    assert!(ok.status.success());
    assert!(String::from_utf8_lossy(&ok.stdout).starts_with("hlo-opt "));
}
