//! A pure round trip (`--passes ''`) writes the same bytes whatever the
//! number of threads: every module in `tests/data` is read and written
//! with the process cut to one CPU and with all of them (hlo-opt sizes its
//! threads from `available_parallelism`, which follows the affinity). The
//! 73 MB train step is the one large enough to be parsed, verified,
//! converted and printed on several threads.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn modules() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "hlo" || e == "pb") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data"),
        &mut out,
    );
    out.sort();
    out
}

/// One run of the round trip: its exit status, what it printed on
/// standard error, and its output.
struct Run {
    ok: bool,
    status: std::process::ExitStatus,
    stderr: String,
    output: Vec<u8>,
}

/// The round trip, on one CPU or on all.
fn round_trip(input: &Path, output: &Path, one_cpu: bool) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hlo-opt"));
    cmd.arg("--passes").arg("").arg(input).arg("-o").arg(output);
    if one_cpu {
        // SAFETY: between fork and exec only async-signal-safe calls are
        // allowed; sched_setaffinity(2) is a plain system call on a mask
        // built on this stack, and nothing is allocated.
        unsafe {
            cmd.pre_exec(|| {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(0, &mut set);
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let run = cmd.output().unwrap();
    let written = std::fs::read(output).unwrap_or_default();
    // Only the inputs stay on disk (the large module's outputs are 64 to
    // 73 MB each).
    let _ = std::fs::remove_file(output);
    Run {
        ok: run.status.success(),
        status: run.status,
        stderr: String::from_utf8_lossy(&run.stderr).into_owned(),
        output: written,
    }
}

#[test]
fn round_trips_are_the_same_on_one_cpu_and_on_all() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = modules();
    let big = dir.path().join("gpt48_train_f32.opt.hlo");
    let gz =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/large/gpt48_train_f32.opt.hlo.gz");
    let mut text = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(gz).unwrap()),
        &mut text,
    )
    .unwrap();
    std::fs::write(&big, text).unwrap();
    let big_pb = dir.path().join("gpt48_train_f32.opt.pb");
    let to_pb = Command::new(env!("CARGO_BIN_EXE_hlo-opt"))
        .args(["--passes", ""])
        .arg(&big)
        .arg("-o")
        .arg(&big_pb)
        .output()
        .unwrap();
    assert!(
        to_pb.status.success(),
        "{}: {}",
        to_pb.status,
        String::from_utf8_lossy(&to_pb.stderr)
    );
    inputs.extend([big, big_pb]);
    let mut compared = 0;
    for input in &inputs {
        for ext in ["hlo", "pb"] {
            let one = round_trip(input, &dir.path().join(format!("one.{ext}")), true);
            let all = round_trip(input, &dir.path().join(format!("all.{ext}")), false);
            // The runs' own words, so that a failure says what happened.
            assert_eq!(
                one.ok,
                all.ok,
                "{} -> .{ext}: the exit status depends on the threads\n\
                 one CPU: {}, {}\nall: {}, {}",
                input.display(),
                one.status,
                one.stderr,
                all.status,
                all.stderr
            );
            assert!(
                one.output == all.output,
                "{} -> .{ext}: the output depends on the threads",
                input.display()
            );
            compared += usize::from(one.ok);
        }
    }
    assert!(compared > 500, "only {compared} round trips succeeded");
}
