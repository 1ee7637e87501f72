//! Issue 29's file-system reproducers (`../shared/security/fs_*.sh`) and
//! their class: the output plan (no output is an input or another
//! output), all outputs or none, and `--dump-dir` staying in its folder.

mod common;
use common::*;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn hlo_opt() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hlo-opt"))
}

/// A JAX softmax and its gradient: the default pipeline changes it, so
/// every output (dumps, page, graph) has something to show.
fn example() -> PathBuf {
    data("corpus/softmax_vjp_f32.hlo")
}

/// A folder holding a copy of the example as `name`.
fn folder_with_input(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join(name);
    fs::copy(example(), &input).unwrap();
    (dir, input)
}

fn run_in(dir: &Path, args: &[&str]) -> Output {
    hlo_opt().current_dir(dir).args(args).output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Exit 1 with every `wanted` in the message.
fn refused(out: &Output, wanted: &[&str]) -> String {
    let msg = stderr(out);
    assert_eq!(out.status.code(), Some(1), "{msg}");
    for w in wanted {
        assert!(msg.contains(w), "wanted {w:?} in: {msg}");
    }
    msg
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn original() -> Vec<u8> {
    fs::read(example()).unwrap()
}

#[test]
fn report_html_onto_the_input_is_refused() {
    let (dir, input) = folder_with_input("in.hlo");
    let out = run_in(
        dir.path(),
        &["in.hlo", "--report-html", "in.hlo", "-o", "out.hlo"],
    );
    refused(
        &out,
        &[
            "--report-html in.hlo",
            "the input in.hlo",
            "nothing was written",
        ],
    );
    assert_eq!(fs::read(&input).unwrap(), original());
    assert_eq!(listing(dir.path()), ["in.hlo"]);
}

#[test]
fn emit_graph_onto_the_input_is_refused() {
    let (dir, input) = folder_with_input("in.hlo");
    let out = run_in(
        dir.path(),
        &["in.hlo", "--emit-graph", "in.hlo", "-o", "out.hlo"],
    );
    refused(&out, &["--emit-graph in.hlo", "the input in.hlo"]);
    assert_eq!(fs::read(&input).unwrap(), original());
    assert_eq!(listing(dir.path()), ["in.hlo"]);
}

#[test]
fn the_graphs_overlay_onto_the_input_is_refused() {
    let (dir, input) = folder_with_input("g.overlay.json");
    let out = run_in(
        dir.path(),
        &["g.overlay.json", "--emit-graph", "g.json", "-o", "out.hlo"],
    );
    refused(
        &out,
        &["overlay g.overlay.json", "the input g.overlay.json"],
    );
    assert_eq!(fs::read(&input).unwrap(), original());
    assert_eq!(listing(dir.path()), ["g.overlay.json"]);
}

#[test]
fn two_outputs_that_are_one_file_are_refused() {
    let (dir, _) = folder_with_input("in.hlo");
    let out = run_in(
        dir.path(),
        &["in.hlo", "--report-html", "same", "-o", "same"],
    );
    refused(&out, &["-o same and --report-html same", "the same file"]);
    assert_eq!(listing(dir.path()), ["in.hlo"]);
    // Spelled differently, through a folder and `..`.
    fs::create_dir(dir.path().join("sub")).unwrap();
    let out = run_in(
        dir.path(),
        &["in.hlo", "--emit-graph", "sub/../g.json", "-o", "g.json"],
    );
    refused(&out, &["the same file"]);
    assert_eq!(listing(dir.path()), ["in.hlo", "sub"]);
}

/// `hlo-opt in.hlo >> in.hlo` (or `1<> in.hlo`): standard output is the
/// input file, which would be written while it is read.
#[test]
fn standard_output_onto_the_input_is_refused() {
    let (dir, input) = folder_with_input("in.hlo");
    for append in [true, false] {
        let stdout = fs::OpenOptions::new()
            .read(!append)
            .append(append)
            .write(true)
            .open(&input)
            .unwrap();
        let out = hlo_opt()
            .current_dir(dir.path())
            .arg("in.hlo")
            .stdout(Stdio::from(stdout))
            .output()
            .unwrap();
        refused(
            &out,
            &["standard output", "the input in.hlo", "nothing was written"],
        );
        assert_eq!(fs::read(&input).unwrap(), original());
    }
    // Standard input the file too: `hlo-opt - < in.hlo >> in.hlo`.
    let out = hlo_opt()
        .current_dir(dir.path())
        .arg("-")
        .stdin(Stdio::from(fs::File::open(&input).unwrap()))
        .stdout(Stdio::from(
            fs::OpenOptions::new().append(true).open(&input).unwrap(),
        ))
        .output()
        .unwrap();
    refused(&out, &["standard output", "nothing was written"]);
    assert_eq!(fs::read(&input).unwrap(), original());
}

#[test]
fn an_output_linked_to_the_input_is_refused() {
    let (dir, input) = folder_with_input("in.hlo");
    fs::hard_link(&input, dir.path().join("hard.hlo")).unwrap();
    std::os::unix::fs::symlink("in.hlo", dir.path().join("soft.hlo")).unwrap();
    for output in ["hard.hlo", "soft.hlo"] {
        let out = run_in(dir.path(), &["in.hlo", "-o", output]);
        refused(&out, &[&format!("-o {output}"), "the input in.hlo"]);
        assert_eq!(fs::read(&input).unwrap(), original());
    }
    // The input read from standard input, redirected from the file.
    let out = hlo_opt()
        .current_dir(dir.path())
        .args(["-", "-o", "in.hlo"])
        .stdin(Stdio::from(fs::File::open(&input).unwrap()))
        .output()
        .unwrap();
    refused(&out, &["-o in.hlo", "the input <stdin>"]);
    assert_eq!(fs::read(&input).unwrap(), original());
}

#[test]
fn the_input_inside_the_dump_folder_is_refused() {
    let (dir, input) = folder_with_input("00.input.hlo");
    let out = run_in(
        dir.path(),
        &["00.input.hlo", "--dump-dir", ".", "-o", "out.hlo"],
    );
    refused(
        &out,
        &["--dump-dir ./00.input.hlo", "the input 00.input.hlo"],
    );
    assert_eq!(fs::read(&input).unwrap(), original());
    assert_eq!(listing(dir.path()), ["00.input.hlo"]);
}

/// `fs_dump_dir_follows_symlinks.sh`: links in the dump folder, to a file
/// outside and dangling, are replaced, not followed.
#[test]
fn the_dump_folder_never_follows_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let (dump, outside) = (dir.path().join("dump"), dir.path().join("outside"));
    fs::create_dir(&dump).unwrap();
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("victim.txt"), "precious\n").unwrap();
    let link = |target: &str, name: &str| {
        std::os::unix::fs::symlink(target, dump.join(name)).unwrap();
    };
    link("../outside/victim.txt", "00.input.hlo");
    // The raise of the gradient is the pipeline's 8th pass.
    link(
        "../outside/created.hlo",
        "08.native-to-custom-softmax-dx.hlo",
    );
    link("../outside/untouched.hlo", "99.not-a-pass.hlo");
    let out = hlo_opt()
        .arg(example())
        .arg("--dump-dir")
        .arg(&dump)
        .arg("-o")
        .arg(dir.path().join("out.hlo"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        fs::read_to_string(outside.join("victim.txt")).unwrap(),
        "precious\n"
    );
    assert_eq!(listing(&outside), ["victim.txt"]);
    for name in ["00.input.hlo", "08.native-to-custom-softmax-dx.hlo"] {
        let meta = fs::symlink_metadata(dump.join(name)).unwrap();
        assert!(meta.is_file(), "{name} is still a link");
        // A file's permissions, not the link's 0777.
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(meta.permissions().mode() & 0o111, 0, "{name}");
    }
    assert_eq!(fs::read(dump.join("00.input.hlo")).unwrap(), original());
    // A file the run does not write is left as it was.
    assert!(fs::symlink_metadata(dump.join("99.not-a-pass.hlo"))
        .unwrap()
        .file_type()
        .is_symlink());
}

/// Runs `command` to its end, or kills it and fails after 60 s: a run
/// that blocks must fail the test, not hang the suite.
fn output_within_a_minute(mut command: Command) -> Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("still running after 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn make_fifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// A FIFO planted at a dump's name (or at a name in batch's OUT) once
/// made the run block forever opening it for writing (a denial of
/// service by whoever can write to a shared dump folder). It is replaced
/// as a link is.
#[test]
fn a_fifo_in_a_folder_the_tool_fills_is_replaced_never_opened() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("dump");
    fs::create_dir(&dump).unwrap();
    let dump_name = "09.native-to-custom-softmax.hlo";
    make_fifo(&dump.join(dump_name));
    let mut run = hlo_opt();
    run.arg(example())
        .arg("--dump-dir")
        .arg(&dump)
        .arg("-o")
        .arg(dir.path().join("out.hlo"));
    let out = output_within_a_minute(run);
    assert!(out.status.success(), "{}", stderr(&out));
    let meta = fs::symlink_metadata(dump.join(dump_name)).unwrap();
    assert!(meta.is_file(), "{dump_name} is still a FIFO");
    assert!(fs::read_to_string(dump.join(dump_name))
        .unwrap()
        .contains("AwsNeuronSoftmax"));

    let (input, out) = (dir.path().join("in"), dir.path().join("out"));
    fs::create_dir(&input).unwrap();
    fs::create_dir(&out).unwrap();
    fs::copy(example(), input.join("a.hlo")).unwrap();
    for name in ["a.hlo", "summary.json"] {
        make_fifo(&out.join(name));
    }
    let mut run = hlo_opt();
    run.arg("batch").arg(&input).arg("-o").arg(&out);
    let batch = output_within_a_minute(run);
    assert_eq!(batch.status.code(), Some(0), "{}", stderr(&batch));
    for name in ["a.hlo", "summary.json"] {
        let meta = fs::symlink_metadata(out.join(name)).unwrap();
        assert!(meta.is_file(), "{name} is still a FIFO");
    }
    assert!(read(&out.join("a.hlo")).contains("AwsNeuronSoftmax"));
    // A second batch reads its stamps and hashes its outputs: a FIFO at a
    // stamp's name or at an output's is not opened either, and the module
    // runs again.
    let stamps = out.join(".hlo-opt-batch");
    let stamp = fs::read_dir(&stamps)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("a stamp");
    for planted in [stamp, out.join("a.hlo")] {
        fs::remove_file(&planted).unwrap();
        make_fifo(&planted);
        let mut run = hlo_opt();
        run.arg("batch").arg(&input).arg("-o").arg(&out);
        let again = output_within_a_minute(run);
        assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
        assert!(fs::symlink_metadata(&planted).unwrap().is_file());
    }
}

/// `fs_emit_graph_partial_output.sh`: an overlay name past 255 bytes is
/// refused before anything is written.
#[test]
fn a_name_too_long_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let graph = format!("{}.json", "g".repeat(245));
    let out = hlo_opt()
        .current_dir(dir.path())
        .arg(example())
        .args(["--emit-graph", &graph, "-o", "out.hlo", "--dump-dir", "d"])
        .output()
        .unwrap();
    refused(&out, &["overlay", "name too long", "nothing was written"]);
    assert!(listing(dir.path()).is_empty(), "{:?}", listing(dir.path()));
}

#[test]
fn a_missing_folder_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = hlo_opt()
        .current_dir(dir.path())
        .arg(example())
        .args(["--report-html", "no/such/page.html", "-o", "out.hlo"])
        .output()
        .unwrap();
    refused(
        &out,
        &[
            "--report-html no/such/page.html",
            "folder no/such does not exist",
        ],
    );
    assert!(listing(dir.path()).is_empty());
}

/// `-o out/` names a folder: refused before any work (it used to run the
/// passes and fail at the final rename with "Not a directory"), as are
/// `out/.` and `out/..`.
#[test]
fn an_output_naming_a_folder_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    for given in ["nope/", "here/", "nope/.", "here/..", "nope/.."] {
        fs::create_dir_all(dir.path().join("here")).unwrap();
        let out = hlo_opt()
            .current_dir(dir.path())
            .arg(example())
            .args(["-o", given, "--dump-dir", "d"])
            .output()
            .unwrap();
        refused(
            &out,
            &[
                &format!("-o {given}: error: ends in `/`, `/.` or `/..`"),
                "nothing was written",
            ],
        );
        assert_eq!(listing(dir.path()), ["here"]);
        assert!(listing(&dir.path().join("here")).is_empty());
    }
}

/// A run that fails leaves no `--dump-dir` folder it made, whether the
/// input is refused before any dump or the module's write fails after
/// the dumps were staged; a folder that was there stays.
#[test]
fn a_failed_run_leaves_no_dump_folder_it_made() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("bad.hlo"),
        "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0),\n}\n",
    )
    .unwrap();
    let bad = dir.path().join("bad.hlo");
    let runs: [(&Path, &str); 2] = [(&bad, "out.hlo"), (&example(), "/dev/full")];
    for (input, output) in runs {
        let out = hlo_opt()
            .current_dir(dir.path())
            .arg(input)
            .args(["--dump-dir", "made/inner", "-o", output])
            .output()
            .unwrap();
        refused(&out, &[]);
        assert_eq!(listing(dir.path()), ["bad.hlo"], "{}", stderr(&out));
    }
    fs::create_dir(dir.path().join("there")).unwrap();
    // The second only passes by `there`: not the run's to remove.
    for dump_dir in ["there/inner", "new/../there"] {
        let out = hlo_opt()
            .current_dir(dir.path())
            .arg(&bad)
            .args(["--dump-dir", dump_dir, "-o", "out.hlo"])
            .output()
            .unwrap();
        refused(&out, &["bad.hlo:3"]);
        assert_eq!(listing(dir.path()), ["bad.hlo", "there"], "{dump_dir}");
        assert!(listing(&dir.path().join("there")).is_empty());
    }
}

/// `eval -o` onto a full device: one line naming the device and the
/// system's reason (the zip writer, dropped after the error, used to add
/// "ZipWriter drop failed" of its own, and the reason read "i/o error").
#[cfg(unix)]
#[test]
fn eval_onto_a_full_device_says_why_once() {
    if fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .is_err()
    {
        return;
    }
    let out = hlo_opt()
        .args(["eval", "-o", "/dev/full"])
        .arg(example())
        .output()
        .unwrap();
    let msg = refused(&out, &["/dev/full: No space left on device"]);
    assert_eq!(msg.trim_end().lines().count(), 1, "{msg}");
}

/// All outputs or none: the module's write fails (a full device) after
/// the page, the graph and the dumps were staged; none of them lands, the
/// files that were there stay as they were, and no temporary is left.
#[test]
fn a_failed_write_leaves_every_destination_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("page.html"), "old page").unwrap();
    fs::create_dir(dir.path().join("d")).unwrap();
    let out = hlo_opt()
        .current_dir(dir.path())
        .arg(example())
        .args(["--report-html", "page.html", "--emit-graph", "g.json"])
        .args(["--dump-dir", "d", "-o", "/dev/full"])
        .output()
        .unwrap();
    refused(&out, &["/dev/full"]);
    assert_eq!(
        fs::read_to_string(dir.path().join("page.html")).unwrap(),
        "old page"
    );
    assert_eq!(listing(dir.path()), ["d", "page.html"]);
    assert!(listing(&dir.path().join("d")).is_empty());
}

/// The same run with a good `-o` writes every output.
#[test]
fn a_run_writes_all_its_outputs() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("page.html"), "old page").unwrap();
    let out = hlo_opt()
        .current_dir(dir.path())
        .arg(example())
        .args(["--report-html", "page.html", "--emit-graph", "g.json"])
        .args(["--dump-dir", "d", "-o", "out.hlo"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        listing(dir.path()),
        ["d", "g.json", "g.overlay.json", "out.hlo", "page.html"]
    );
    assert!(fs::read_to_string(dir.path().join("page.html"))
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
    assert_eq!(
        listing(&dir.path().join("d")),
        [
            "00.input.hlo",
            "08.native-to-custom-softmax-dx.hlo",
            "09.native-to-custom-softmax.hlo"
        ]
    );
}

/// `eval -o` over a file the evaluation reads: its inputs, or the
/// sidecar of its output over the module.
#[test]
fn eval_never_writes_over_what_it_reads() {
    let dir = tempfile::tempdir().unwrap();
    let npz = dir.path().join("in.npz");
    fs::copy(data("refs/softmax_vjp_f32.npz"), &npz).unwrap();
    let before = fs::read(&npz).unwrap();
    let out = hlo_opt()
        .current_dir(dir.path())
        .arg("eval")
        .arg(example())
        .args(["--inputs", "in.npz", "-o", "in.npz"])
        .output()
        .unwrap();
    refused(&out, &["-o in.npz", "--inputs in.npz"]);
    assert_eq!(fs::read(&npz).unwrap(), before);
    // `-o m.npz` would write or remove `m.json`: here, the module.
    fs::copy(example(), dir.path().join("m.json")).unwrap();
    let out = hlo_opt()
        .current_dir(dir.path())
        .args(["eval", "m.json", "--inputs", "in.npz", "-o", "m.npz"])
        .output()
        .unwrap();
    refused(&out, &["sidecar m.json", "the module m.json"]);
    assert_eq!(fs::read(dir.path().join("m.json")).unwrap(), original());
    assert_eq!(listing(dir.path()), ["in.npz", "m.json"]);
}

/// Replacing an existing output keeps its owner and group where the
/// process may give them (root replacing a user's file: the user must
/// still be able to read it), and its mode.
#[cfg(unix)]
#[test]
fn a_replaced_output_keeps_its_owner_and_mode() {
    use std::os::unix::fs::{chown, MetadataExt, PermissionsExt};
    let (dir, _) = folder_with_input("in.hlo");
    let out = dir.path().join("out.hlo");
    fs::write(&out, "old").unwrap();
    fs::set_permissions(&out, fs::Permissions::from_mode(0o600)).unwrap();
    // Only root may give a file away; elsewhere there is nothing to keep.
    if chown(&out, Some(65534), Some(65534)).is_err() {
        return;
    }
    let run = run_in(dir.path(), &["in.hlo", "-o", "out.hlo"]);
    assert!(run.status.success(), "{}", stderr(&run));
    let meta = fs::metadata(&out).unwrap();
    assert_ne!(fs::read(&out).unwrap(), b"old");
    assert_eq!((meta.uid(), meta.gid()), (65534, 65534));
    assert_eq!(meta.mode() & 0o7777, 0o600);
}

/// `hlo-opt eval in.hlo >> in.hlo`: its summary is not written onto the
/// module it reads.
#[test]
fn eval_standard_output_onto_the_module_is_refused() {
    let (dir, input) = folder_with_input("in.hlo");
    let stdout = fs::OpenOptions::new().append(true).open(&input).unwrap();
    let out = hlo_opt()
        .current_dir(dir.path())
        .args(["eval", "in.hlo"])
        .stdout(Stdio::from(stdout))
        .output()
        .unwrap();
    refused(
        &out,
        &[
            "standard output",
            "the module in.hlo",
            "nothing was written",
        ],
    );
    assert_eq!(fs::read(&input).unwrap(), original());
}
