//! The memory budget of `eval` and `--check-numerics`, and `.npz` inputs
//! read only as far as the module needs (issue 29, items 4 and 5).
//!
//! The runs under `ulimit -v` go through `sh`, so that the limit is the
//! child's alone.

use hlo_opt::interp::npy::NpyArray;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_hlo-opt");

fn security(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/security")
        .join(file)
}

/// `hlo-opt args...` with its address space limited to `kib` KiB.
fn under_ulimit(kib: u64, args: &[&str]) -> (Output, Duration) {
    let start = Instant::now();
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {kib}; exec \"$0\" \"$@\""))
        .arg(BIN)
        .args(args)
        .output()
        .unwrap();
    (out, start.elapsed())
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A clean failure: exit 1, not a signal.
fn refused(out: &Output) -> String {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(1), "{:?}: {err}", out.status);
    err
}

/// The budget error, naming the budget, the need and the largest
/// instructions with their shapes.
fn assert_budget_error(err: &str, budget: &str, largest: &str) {
    assert!(err.contains("needs about "), "{err}");
    assert!(
        err.contains(&format!("more than the budget of {budget}")),
        "{err}"
    );
    assert!(
        err.contains(&format!("the largest instructions: {largest}")),
        "{err}"
    );
}

const LIMIT_4G: u64 = 4_000_000;

#[test]
fn eval_of_a_module_needing_24_gib_fails_under_ulimit_within_5_s() {
    let m = security("eval_total_memory_unbounded.hlo");
    let (out, took) = under_ulimit(LIMIT_4G, &["eval", m.to_str().unwrap()]);
    let err = refused(&out);
    assert!(took < Duration::from_secs(5), "{took:?}");
    // Half of what the ulimit leaves.
    assert!(err.contains("address space ulimit -v leaves"), "{err}");
    assert_budget_error(
        &err,
        "1.",
        "b0 f64[134217728] (1.0 GiB, in e), b1 f64[134217728]",
    );
}

#[test]
fn check_numerics_of_a_module_needing_24_gib_fails_under_ulimit_within_5_s() {
    let m = security("check_numerics_total_memory_unbounded.hlo");
    let (out, took) = under_ulimit(
        LIMIT_4G,
        &["--check-numerics", m.to_str().unwrap(), "-o", "/dev/null"],
    );
    let err = refused(&out);
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert!(
        err.contains("cannot evaluate the module before the passes"),
        "{err}"
    );
    assert_budget_error(&err, "1.", "b0 f64[134217728] (1.0 GiB, in e)");
}

const SMALL: &str = "HloModule small\n\nENTRY e {\n  p = f32[1024] parameter(0)\n  \
    g = f32[1024] custom-call(p), custom_call_target=\"AwsNeuronGelu\"\n  \
    ROOT n = f32[1024] negate(g)\n}\n";

fn small_module(dir: &Path) -> PathBuf {
    let p = dir.join("small.hlo");
    std::fs::write(&p, SMALL).unwrap();
    p
}

#[test]
fn a_memory_limit_big_enough_runs_a_small_module() {
    let dir = tempfile::tempdir().unwrap();
    let m = small_module(dir.path());
    let m = m.to_str().unwrap();
    let out = run(&["eval", m, "--memory-limit", "64M"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("out0 f32[1024]"));
    for limit in ["64M", "1GiB", "67108864"] {
        let out = run(&[
            "--check-numerics",
            m,
            "--memory-limit",
            limit,
            "-o",
            "/dev/null",
        ]);
        assert!(out.status.success(), "{limit}: {}", stderr(&out));
        // Checked where the rewrite happened (issue 31).
        assert!(
            stderr(&out).contains("1 rewrite checked where it happened"),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn a_memory_limit_too_small_is_refused_naming_budget_need_and_largest() {
    let dir = tempfile::tempdir().unwrap();
    let m = small_module(dir.path());
    let m = m.to_str().unwrap();
    let out = run(&["eval", m, "--memory-limit", "8K"]);
    let err = refused(&out);
    assert!(
        err.contains("small.hlo: the evaluation needs about"),
        "{err}"
    );
    assert!(err.contains("(set by --memory-limit)"), "{err}");
    assert_budget_error(&err, "8.0 KiB", "p f32[1024] (4.0 KiB, in e), g f32[1024]");
    assert!(out.stdout.is_empty());

    let o = dir.path().join("o.hlo");
    let out = run(&[
        "--check-numerics",
        m,
        "--memory-limit",
        "8K",
        "-o",
        o.to_str().unwrap(),
    ]);
    let err = refused(&out);
    assert!(
        err.contains("--check-numerics' evaluation needs about"),
        "{err}"
    );
    assert_budget_error(&err, "8.0 KiB", "p f32[1024] (4.0 KiB, in e)");
    assert!(!o.exists());

    let out = run(&["eval", m, "--memory-limit", "lots"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("bad size \"lots\""), "{err}");
}

#[test]
fn the_inputs_count_against_the_budget_before_they_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("big_param.hlo");
    std::fs::write(
        &m,
        "HloModule p\nENTRY e {\n  ROOT p = f32[1048576] parameter(0)\n}\n",
    )
    .unwrap();
    let missing = dir.path().join("missing.npz");
    let out = run(&[
        "eval",
        m.to_str().unwrap(),
        "--inputs",
        missing.to_str().unwrap(),
        "--memory-limit",
        "1M",
    ]);
    let err = refused(&out);
    assert_budget_error(&err, "1.0 MiB", "p f32[1048576] (4.0 MiB, in e)");
}

/// An `.npz` member: a name, its bytes, and how many zero bytes follow
/// them (written a chunk at a time, deflated).
struct Member<'a> {
    name: &'a str,
    bytes: Vec<u8>,
    zeros: u64,
}

fn write_npz(path: &Path, members: &[Member]) {
    let mut z = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(true);
    let chunk = vec![0u8; 1 << 20];
    for m in members {
        z.start_file(m.name, opts).unwrap();
        z.write_all(&m.bytes).unwrap();
        let mut left = m.zeros;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            z.write_all(&chunk[..n]).unwrap();
            left -= n as u64;
        }
    }
    z.finish().unwrap();
}

/// The `.npy` bytes of an f32 array of `shape` with `values` (fewer than
/// the shape holds when the rest are written as zeros).
fn npy_f32(shape: &[usize], values: &[f32]) -> Vec<u8> {
    NpyArray {
        descr: "<f4".into(),
        shape: shape.to_vec(),
        bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    }
    .to_npy_bytes()
}

/// 400 MB of address space: enough for the tool, not for a member of
/// 512 MiB inflated.
const LIMIT_400M: u64 = 400_000;
const BOMB: u64 = 512 << 20;

#[test]
fn an_unused_npz_member_is_never_inflated() {
    let dir = tempfile::tempdir().unwrap();
    let bomb = dir.path().join("bomb.npz");
    write_npz(
        &bomb,
        &[
            Member {
                name: "in0.npy",
                bytes: npy_f32(&[4], &[1.0, -2.0, 3.0, -4.0]),
                zeros: 0,
            },
            Member {
                name: "junk.npy",
                bytes: Vec::new(),
                zeros: BOMB,
            },
        ],
    );
    assert!(std::fs::metadata(&bomb).unwrap().len() < 4 << 20);
    let m = security("neg4.hlo");
    let (out, _) = under_ulimit(
        LIMIT_400M,
        &[
            "eval",
            m.to_str().unwrap(),
            "--inputs",
            bomb.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{:?}: {}", out.status, stderr(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("out0 f32[4] min -3 max 4"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // --compare reads out0 only, in the same way.
    let reference = dir.path().join("ref.npz");
    write_npz(
        &reference,
        &[
            Member {
                name: "out0.npy",
                bytes: npy_f32(&[4], &[-1.0, 2.0, -3.0, 4.0]),
                zeros: 0,
            },
            Member {
                name: "junk.npy",
                bytes: Vec::new(),
                zeros: BOMB,
            },
        ],
    );
    let (out, _) = under_ulimit(
        LIMIT_400M,
        &[
            "eval",
            m.to_str().unwrap(),
            "--inputs",
            bomb.to_str().unwrap(),
            "--compare",
            reference.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{:?}: {}", out.status, stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("ok"));
}

#[test]
fn a_used_member_of_another_shape_is_refused_before_its_data_is_inflated() {
    let dir = tempfile::tempdir().unwrap();
    let npz = dir.path().join("wrong_shape.npz");
    // Declares (and holds) f32[134217728]: 512 MiB once inflated.
    write_npz(
        &npz,
        &[Member {
            name: "in0.npy",
            bytes: npy_f32(&[1 << 27], &[]),
            zeros: BOMB,
        }],
    );
    let m = security("neg4.hlo");
    let (out, _) = under_ulimit(
        LIMIT_400M,
        &[
            "eval",
            m.to_str().unwrap(),
            "--inputs",
            npz.to_str().unwrap(),
        ],
    );
    let err = refused(&out);
    assert!(
        err.contains("in0: holds f32[134217728] (<f4), parameter 0 is f32[4]"),
        "{err}"
    );

    // A reference output of another shape, the same way.
    let good = dir.path().join("good.npz");
    write_npz(
        &good,
        &[Member {
            name: "in0.npy",
            bytes: npy_f32(&[4], &[1.0, 2.0, 3.0, 4.0]),
            zeros: 0,
        }],
    );
    let reference = dir.path().join("ref.npz");
    write_npz(
        &reference,
        &[Member {
            name: "out0.npy",
            bytes: npy_f32(&[1 << 27], &[]),
            zeros: BOMB,
        }],
    );
    let (out, _) = under_ulimit(
        LIMIT_400M,
        &[
            "eval",
            m.to_str().unwrap(),
            "--inputs",
            good.to_str().unwrap(),
            "--compare",
            reference.to_str().unwrap(),
        ],
    );
    let err = refused(&out);
    assert!(
        err.contains("out0: holds f32[134217728] (<f4), the module's output 0 is [4]"),
        "{err}"
    );
}

#[test]
fn data_past_a_members_declared_bytes_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let npz = dir.path().join("trailing.npz");
    write_npz(
        &npz,
        &[Member {
            name: "in0.npy",
            bytes: npy_f32(&[4], &[1.0, 2.0, 3.0, 4.0]),
            zeros: 1 << 20,
        }],
    );
    let m = security("neg4.hlo");
    let out = run(&[
        "eval",
        m.to_str().unwrap(),
        "--inputs",
        npz.to_str().unwrap(),
    ]);
    let err = refused(&out);
    assert!(
        err.contains("in0: .npy data goes on past the 16 bytes its header declares"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

/// Text that never ends, or an error on a line as long as the input, is
/// a clean failure under a tight ulimit, never an abort: the reader's
/// buffer grows by `try_reserve`, and an error keeps only an excerpt of
/// its line (it used to copy the line, then hold it as `char`s: 5x).
#[test]
fn endless_text_and_a_64_mib_line_fail_cleanly_under_ulimit() {
    let dir = tempfile::tempdir().unwrap();
    let line = dir.path().join("line.hlo");
    std::fs::write(&line, vec![b'a'; 64 << 20]).unwrap();
    let (out, _) = under_ulimit(250_000, &[line.to_str().unwrap(), "-o", "/dev/null"]);
    let err = refused(&out);
    assert!(
        err.contains("line.hlo:1:1: error: expects 'HloModule'"),
        "{err}"
    );
    // The line is shown cut, as a short one is.
    assert!(
        err.contains(&format!("\n{}...\n^", "a".repeat(160))),
        "{err}"
    );

    // 96 MiB of NUL bytes: not a proto, so read whole, then its one
    // window copied (a copy that used to abort).
    let nul = dir.path().join("nul.hlo");
    std::fs::File::create(&nul)
        .unwrap()
        .set_len(96 << 20)
        .unwrap();
    let (out, _) = under_ulimit(180_000, &[nul.to_str().unwrap(), "-o", "/dev/null"]);
    let err = refused(&out);
    assert!(err.contains("out of memory"), "{err}");

    let (out, _) = under_ulimit(
        LIMIT_400M,
        &["--input-format", "text", "/dev/zero", "-o", "/dev/null"],
    );
    let err = refused(&out);
    assert!(err.contains("/dev/zero: error: out of memory"), "{err}");
}
