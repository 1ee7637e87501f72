//! `hlo-opt batch` on real folders (tests/data/batch, made by
//! scripts/gen_batch_folders.py): a JAX program's XLA dump folder and a
//! Neuron-cache-shaped folder of torch-xla modules with one broken module.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/batch")
}

fn hlo_opt(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hlo-opt"))
        .args(args)
        .output()
        .expect("runs")
}

fn batch(out: &Path, extra: &[&str]) -> Output {
    let dump = data().join("xla_dump");
    let cache = data().join("neuron_cache");
    let mut args = vec![
        "batch",
        dump.to_str().unwrap(),
        cache.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    hlo_opt(&args)
}

fn summary(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

/// The summary without what differs between runs of the same work.
fn without_times(mut s: Value) -> Value {
    for m in s["modules"].as_array_mut().unwrap() {
        m.as_object_mut().unwrap().remove("time_ms");
    }
    s
}

fn modules(s: &Value) -> Vec<Value> {
    s["modules"].as_array().unwrap().clone()
}

#[test]
fn every_module_found_run_and_counted_as_the_manifest_says() {
    let out = tempfile::tempdir().unwrap();
    let run = batch(out.path(), &[]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    // One module is broken: the batch goes on and says so in its status.
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(data().join("MANIFEST.json")).unwrap())
            .unwrap();
    let mut truth = serde_json::Map::new();
    for side in ["jax", "torch"] {
        truth.extend(manifest[side]["modules"].as_object().unwrap().clone());
    }
    let s = summary(out.path());
    let ids: Vec<&str> = s["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    let mut want: Vec<&str> = truth.keys().map(String::as_str).collect();
    want.sort();
    assert_eq!(ids, want);
    for m in modules(&s) {
        let id = m["id"].as_str().unwrap();
        let t = &truth[id];
        if t["broken"] == true {
            assert_eq!(m["status"], "failed");
            assert!(m["error"].as_str().unwrap().contains("truncated"), "{m}");
            assert!(stderr.contains(id));
            continue;
        }
        assert_eq!(m["status"], "ok", "{m}");
        assert_eq!(m["softmax_forward"], t["softmax_forward"], "{id}");
        assert_eq!(m["softmax_backward"], t["softmax_backward"], "{id}");
        assert_eq!(
            m["source"]["kind"],
            if id.starts_with("MODULE_") {
                "neuron-cache"
            } else {
                "xla-dump"
            }
        );
    }
    let t = &s["totals"];
    assert_eq!(
        (t["modules"].as_u64(), t["failed"].as_u64()),
        (Some(11), Some(1))
    );
    assert_eq!(
        (
            t["softmax_forward"].as_u64(),
            t["softmax_backward"].as_u64()
        ),
        (Some(4), Some(2))
    );
    let cache_row = modules(&s)
        .into_iter()
        .find(|m| m["source"]["kind"] == "neuron-cache")
        .unwrap();
    assert_eq!(
        cache_row["source"]["neuron_version"],
        "2.21.33363.0+82129205"
    );
    assert_eq!(cache_row["source"]["compile_flags"][0], "--target=trn1");
    let index = std::fs::read_to_string(out.path().join("index.html")).unwrap();
    assert!(index.contains("module_0010.jit_train_step") && index.contains("<script>"));
}

#[test]
fn each_output_is_the_single_commands_byte_for_byte() {
    let out = tempfile::tempdir().unwrap();
    batch(out.path(), &[]);
    let scratch = tempfile::tempdir().unwrap();
    let mut compared = 0;
    for m in modules(&summary(out.path())) {
        let Some(output) = m["output"].as_str() else {
            continue;
        };
        let mut input = PathBuf::from(m["source"]["path"].as_str().unwrap());
        if input.extension().is_some_and(|e| e == "gz") {
            // The single command reads no gzip: what the cache holds, inflated.
            let bytes = std::fs::read(&input).unwrap();
            let mut inflated = Vec::new();
            std::io::Read::read_to_end(
                &mut flate2::read::GzDecoder::new(&bytes[..]),
                &mut inflated,
            )
            .unwrap();
            input = scratch.path().join("inflated.pb");
            std::fs::write(&input, inflated).unwrap();
        }
        let single = scratch.path().join("single.hlo");
        let run = hlo_opt(&[input.to_str().unwrap(), "-o", single.to_str().unwrap()]);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        assert!(
            std::fs::read(&single).unwrap() == std::fs::read(out.path().join(output)).unwrap(),
            "{output} differs from the single command's"
        );
        compared += 1;
    }
    assert_eq!(compared, 10);
}

#[test]
fn a_rerun_does_no_work_until_an_input_or_option_changes() {
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("in");
    std::fs::create_dir(&input).unwrap();
    for f in std::fs::read_dir(data().join("xla_dump")).unwrap() {
        let f = f.unwrap().path();
        if f.is_file() && f.to_str().unwrap().contains("before_optimizations") {
            std::fs::copy(&f, input.join(f.file_name().unwrap())).unwrap();
        }
    }
    let out = work.path().join("out");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "batch",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = hlo_opt(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stderr).unwrap()
    };
    let first = run(&[]);
    assert_eq!(first.matches("up to date").count(), 0);
    let first_summary = without_times(summary(&out));
    let second = run(&[]);
    assert_eq!(second.matches("up to date").count(), 7, "{second}");
    assert_eq!(without_times(summary(&out)), first_summary);
    // One input changed: only it runs again.
    let step = input.join("module_0012.jit_eval_step.before_optimizations.hlo.pb");
    let other = input.join("module_0008.jit_broadcast_in_dim.before_optimizations.hlo.pb");
    std::fs::copy(other, step).unwrap();
    let third = run(&[]);
    assert_eq!(third.matches("up to date").count(), 6, "{third}");
    // Other options, or --force: all again.
    assert_eq!(
        run(&["--passes", "native-to-custom-softmax"])
            .matches("up to date")
            .count(),
        0
    );
    assert_eq!(run(&["--force"]).matches("up to date").count(), 0);
}

#[test]
fn shards_cover_every_module_once_and_merge_into_the_whole() {
    let work = tempfile::tempdir().unwrap();
    let whole = work.path().join("whole");
    batch(&whole, &[]);
    let (s0, s1) = (work.path().join("s0"), work.path().join("s1"));
    batch(&s0, &["--shard", "0/2"]);
    batch(&s1, &["--shard", "1/2"]);
    let ids = |dir: &Path| -> Vec<String> {
        modules(&summary(dir))
            .iter()
            .map(|m| m["id"].as_str().unwrap().to_string())
            .collect()
    };
    let (a, b) = (ids(&s0), ids(&s1));
    assert!(!a.is_empty() && !b.is_empty());
    assert!(a.iter().all(|id| !b.contains(id)));
    assert_eq!(a.len() + b.len(), ids(&whole).len());
    let merged = work.path().join("merged");
    let run = hlo_opt(&[
        "batch",
        "--merge",
        s0.to_str().unwrap(),
        s1.to_str().unwrap(),
        "-o",
        merged.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(1)); // the broken module is in one shard
    assert_eq!(
        without_times(summary(&merged)),
        without_times(summary(&whole))
    );
    for m in modules(&summary(&merged)) {
        if let Some(output) = m["output"].as_str() {
            assert_eq!(
                std::fs::read(merged.join(output)).unwrap(),
                std::fs::read(whole.join(output)).unwrap()
            );
        }
    }
    // Shards of other options do not merge.
    let other = work.path().join("other");
    batch(&other, &["--shard", "1/2", "--no-contract-checks"]);
    let run = hlo_opt(&[
        "batch",
        "--merge",
        s0.to_str().unwrap(),
        other.to_str().unwrap(),
        "-o",
        work.path().join("m2").to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&run.stderr).contains("other options"));
}

#[test]
fn the_thread_count_changes_nothing_but_the_time() {
    let work = tempfile::tempdir().unwrap();
    let (one, two) = (work.path().join("one"), work.path().join("two"));
    batch(&one, &["--jobs", "1", "--report-html"]);
    batch(&two, &["--jobs", "2", "--report-html"]);
    assert_eq!(without_times(summary(&one)), without_times(summary(&two)));
    for m in modules(&summary(&one)) {
        for key in ["output", "page"] {
            if let Some(name) = m[key].as_str() {
                let (a, b) = (
                    std::fs::read(one.join(name)).unwrap(),
                    std::fs::read(two.join(name)).unwrap(),
                );
                if key == "page" {
                    // Pages hold the passes' times: the same rewrites drawn.
                    let rewrites = |p: &[u8]| {
                        String::from_utf8_lossy(p)
                            .matches("class=\"entry rewrote\"")
                            .count()
                    };
                    assert!(a.starts_with(b"<!DOCTYPE html>"), "{name}");
                    assert_eq!(rewrites(&a), rewrites(&b), "{name}");
                } else {
                    assert!(a == b, "{name}");
                }
            }
        }
    }
    let index = std::fs::read_to_string(one.join("index.html")).unwrap();
    assert!(index.contains("href=\"module_0010.jit_train_step.html\""));
}

#[test]
fn a_file_that_is_no_module_is_refused_by_name() {
    let out = tempfile::tempdir().unwrap();
    let readme = data().join("MANIFEST.json");
    let run = hlo_opt(&[
        "batch",
        readme.to_str().unwrap(),
        "-o",
        out.path().to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains("MANIFEST.json: error: not a module"));
}

/// `hlo-opt batch --merge SHARDS -o out`, which must fail (exit 1): its
/// standard error.
fn merge_refused(shards: &[&Path], out: &Path) -> String {
    let mut args = vec!["batch", "--merge"];
    args.extend(shards.iter().map(|p| p.to_str().unwrap()));
    args.extend(["-o", out.to_str().unwrap()]);
    let run = hlo_opt(&args);
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    stderr
}

/// A folder of copies of two example modules, `a.hlo` and `b.hlo`.
fn example_inputs(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    std::fs::copy(examples.join("softmax_vjp_f32.hlo"), dir.join("a.hlo")).unwrap();
    std::fs::copy(examples.join("sort_f32_totalorder.hlo"), dir.join("b.hlo")).unwrap();
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

fn run_batch(inputs: &[&Path], out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["batch"];
    args.extend(inputs.iter().map(|p| p.to_str().unwrap()));
    args.extend(["-o", out.to_str().unwrap(), "-j", "1"]);
    args.extend_from_slice(extra);
    hlo_opt(&args)
}

#[test]
fn out_as_the_input_folder_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let inp = dir.path().join("inp");
    example_inputs(&inp);
    let before = (read(&inp.join("a.hlo")), read(&inp.join("b.hlo")));
    #[cfg(unix)]
    std::os::unix::fs::symlink(&inp, dir.path().join("link")).unwrap();
    for out in [inp.clone(), inp.join("."), dir.path().join("link")] {
        let run = run_batch(&[&inp], &out, &[]);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("the modules are read from"), "{stderr}");
        assert!(stderr.contains("nothing was written"), "{stderr}");
        assert_eq!((read(&inp.join("a.hlo")), read(&inp.join("b.hlo"))), before);
        let names: Vec<_> = std::fs::read_dir(&inp).unwrap().collect();
        assert_eq!(names.len(), 2, "only the inputs are there");
    }
}

#[test]
fn out_inside_the_input_folder_is_not_read_as_modules() {
    let dir = tempfile::tempdir().unwrap();
    let inp = dir.path().join("inp");
    example_inputs(&inp);
    let out = inp.join("out");
    for _ in 0..2 {
        let run = run_batch(&[&inp], &out, &[]);
        assert_eq!(
            run.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let ids: Vec<Value> = modules(&summary(&out))
            .iter()
            .map(|m| m["id"].clone())
            .collect();
        assert_eq!(ids, ["a", "b"]);
    }
}

#[test]
fn an_input_named_inside_out_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    example_inputs(&out);
    let before = read(&out.join("a.hlo"));
    let run = run_batch(&[&out.join("a.hlo")], &out, &[]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("(the same file); nothing was written"),
        "{stderr}"
    );
    assert_eq!(read(&out.join("a.hlo")), before);
    assert!(!out.join("summary.json").exists());
}

#[cfg(unix)]
#[test]
fn links_in_out_are_replaced_never_written_through() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let inp = dir.path().join("inp");
    example_inputs(&inp);
    let input_before = read(&inp.join("a.hlo"));
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "VICTIM").unwrap();
    symlink(inp.join("a.hlo"), out.join("a.hlo")).unwrap();
    symlink(&victim, out.join("summary.json")).unwrap();
    symlink(dir.path().join("created.txt"), out.join("index.html")).unwrap();
    let run = run_batch(&[&inp], &out, &[]);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(
        read(&inp.join("a.hlo")),
        input_before,
        "the input is untouched"
    );
    assert_eq!(read(&victim), b"VICTIM");
    assert!(!dir.path().join("created.txt").exists());
    for name in ["a.hlo", "summary.json", "index.html"] {
        let meta = std::fs::symlink_metadata(out.join(name)).unwrap();
        assert!(meta.is_file(), "{name} is a file now, not a link");
    }
    // A stamps folder that is a link elsewhere is refused, not filled.
    let out2 = dir.path().join("out2");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&out2).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    symlink(&elsewhere, out2.join(".hlo-opt-batch")).unwrap();
    let run = run_batch(&[&inp], &out2, &[]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("not a folder"), "{stderr}");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    assert_eq!(std::fs::read_dir(&out2).unwrap().count(), 1);
}

#[test]
fn numbered_ids_never_collide_and_index_keeps_the_batch_page() {
    let dir = tempfile::tempdir().unwrap();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let files = [
        ("a/x.hlo", "softmax_vjp_f32.hlo"),
        ("b/x.hlo", "sort_f32_totalorder.hlo"),
        ("c/x~2.hlo", "nrn_custom_calls_ffi.hlo"),
        ("d/index.hlo", "softmax_shared_max_f32.hlo"),
    ];
    for (to, from) in files {
        let to = dir.path().join(to);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(examples.join(from), to).unwrap();
    }
    let out = dir.path().join("out");
    let inputs: Vec<PathBuf> = ["a", "b", "c", "d"]
        .iter()
        .map(|d| dir.path().join(d))
        .collect();
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    let run = run_batch(&inputs, &out, &["--report-html"]);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let s = summary(&out);
    let rows: Vec<(String, String)> = modules(&s)
        .iter()
        .map(|m| {
            (
                m["id"].as_str().unwrap().to_string(),
                m["source"]["path"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let by_id = |id: &str| rows.iter().find(|(i, _)| i == id).unwrap().1.clone();
    assert_eq!(rows.len(), 4);
    assert!(by_id("x").ends_with("a/x.hlo"));
    assert!(by_id("x~2").ends_with("c/x~2.hlo"));
    assert!(by_id("x~3").ends_with("b/x.hlo"));
    assert!(by_id("index~2").ends_with("d/index.hlo"));
    // Each module's own output, and the batch's index is its own.
    for (id, from) in [("x~2", "c/x~2.hlo"), ("x~3", "b/x.hlo")] {
        let single = dir.path().join(format!("{id}.single.hlo"));
        let r = hlo_opt(&[
            dir.path().join(from).to_str().unwrap(),
            "-o",
            single.to_str().unwrap(),
        ]);
        assert!(r.status.success());
        assert_eq!(read(&out.join(format!("{id}.hlo"))), read(&single), "{id}");
    }
    let index = String::from_utf8(read(&out.join("index.html"))).unwrap();
    assert!(
        index.contains("index~2.html"),
        "the batch's page links the module's"
    );
}

#[test]
fn a_failed_rerun_leaves_no_stale_result_and_a_changed_output_is_redone() {
    let dir = tempfile::tempdir().unwrap();
    let inp = dir.path().join("inp");
    example_inputs(&inp);
    let out = dir.path().join("out");
    assert_eq!(
        run_batch(&[&inp], &out, &["--report-html"]).status.code(),
        Some(0)
    );
    let good_b = read(&out.join("b.hlo"));
    // An output changed by hand is not up to date.
    std::fs::write(out.join("b.hlo"), "TAMPERED").unwrap();
    // The input breaks: its old output, page and stamp must go.
    std::fs::write(inp.join("a.hlo"), "HloModule broken\nENTRY e {\n").unwrap();
    let run = run_batch(&[&inp], &out, &["--report-html"]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(!out.join("a.hlo").exists(), "a's stale output is gone");
    assert!(!out.join("a.html").exists(), "and its page");
    assert!(
        !out.join(".hlo-opt-batch/a.json").exists(),
        "a's stamp is gone"
    );
    assert_eq!(read(&out.join("b.hlo")), good_b, "b was run again");
    let s = summary(&out);
    let a = &modules(&s)[0];
    assert_eq!(
        (a["id"].as_str(), a["status"].as_str()),
        (Some("a"), Some("failed"))
    );
    assert_eq!(a["output"], Value::Null);
}

/// A report page changed by hand is made again, as an output is; the
/// untouched module stays up to date.
#[test]
fn a_changed_page_is_made_again() {
    let dir = tempfile::tempdir().unwrap();
    let inp = dir.path().join("inp");
    example_inputs(&inp);
    let out = dir.path().join("out");
    assert_eq!(
        run_batch(&[&inp], &out, &["--report-html"]).status.code(),
        Some(0)
    );
    std::fs::write(out.join("b.html"), "TAMPERED").unwrap();
    let run = run_batch(&[&inp], &out, &["--report-html"]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    let status = |id: &str| {
        stderr
            .lines()
            .find(|l| l.starts_with(&format!("{id} ")))
            .map(|l| l.contains("up to date"))
    };
    assert_eq!(
        (status("a"), status("b")),
        (Some(true), Some(false)),
        "{stderr}"
    );
    // Made again (its times differ from the first page's).
    let page = std::fs::read_to_string(out.join("b.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"), "b's page made again");
}

#[test]
fn a_refused_merge_leaves_out_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let inp = dir.path().join("inp");
    example_inputs(&inp);
    let shard = dir.path().join("s0");
    assert_eq!(run_batch(&[&inp], &shard, &[]).status.code(), Some(0));
    for bad in [
        vec![shard.clone(), dir.path().join("missing")],
        vec![shard.clone(), shard.clone()],
    ] {
        let out = dir.path().join("merged");
        let bad: Vec<&Path> = bad.iter().map(PathBuf::as_path).collect();
        let stderr = merge_refused(&bad, &out);
        assert!(!out.exists(), "{stderr}");
    }
    // A shard summary naming a file outside its module's is refused.
    let mut s = summary(&shard);
    s["modules"][0]["output"] = Value::from("../../victim.hlo");
    std::fs::write(shard.join("summary.json"), s.to_string()).unwrap();
    let out = dir.path().join("merged");
    let stderr = merge_refused(&[&shard], &out);
    assert!(stderr.contains("is not one of its files"), "{stderr}");
    assert!(!out.exists());
}

#[cfg(unix)]
#[test]
fn a_merge_never_follows_a_link_in_a_shard_and_a_folder_twice_is_searched_once() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    let inp = dir.path().join("inp");
    example_inputs(&inp);
    // `inp` and a link to it: two names, one folder, two modules.
    symlink(&inp, dir.path().join("again")).unwrap();
    let shard = dir.path().join("s0");
    let run = run_batch(&[&inp, &dir.path().join("again")], &shard, &[]);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(modules(&summary(&shard)).len(), 2);
    // Someone who can write the shard links its output to a file of ours.
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "SECRET").unwrap();
    std::fs::remove_file(shard.join("a.hlo")).unwrap();
    symlink(&secret, shard.join("a.hlo")).unwrap();
    let out = dir.path().join("merged");
    let stderr = merge_refused(&[&shard], &out);
    assert!(
        stderr.contains("a link, which a batch never writes"),
        "{stderr}"
    );
    assert!(!out.exists());
}

/// A path under a PATH that cannot be read is skipped, said on standard
/// error and in the summary, and the batch exits 1 when done; the other
/// modules all run (it used to stop the batch before any module ran). A
/// PATH that cannot be read is still an error up front. Root reads any
/// folder, so the path made unreadable for everyone is one past the
/// system's length limit; a folder without permissions is tried too when
/// the tests do not run as root.
#[cfg(unix)]
#[test]
fn an_unreadable_path_is_skipped_and_said_and_the_rest_runs() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let inp = dir.path().join("inp");
    example_inputs(&inp);
    // Folders of 200-character names nested past 4,096 bytes: two chains
    // of half that, made apart, one moved into the other.
    let name = "d".repeat(200);
    let chain = |base: &Path| {
        let mut p = base.to_path_buf();
        for _ in 0..11 {
            p.push(&name);
        }
        std::fs::create_dir_all(&p).unwrap();
        p
    };
    let inner = chain(&inp);
    chain(&dir.path().join("second"));
    std::fs::rename(dir.path().join("second"), inner.join("second")).unwrap();
    let mut expected = vec![];
    let mut too_long = inner.join("second");
    while too_long.as_os_str().len() <= 4096 {
        too_long.push(&name);
    }
    expected.push(too_long.display().to_string());
    let locked = inp.join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::copy(inp.join("a.hlo"), locked.join("c.hlo")).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    // Listed but not entered: one line for the folder, not one per entry.
    let unsearchable = inp.join("listed");
    std::fs::create_dir(&unsearchable).unwrap();
    std::fs::copy(inp.join("a.hlo"), unsearchable.join("d.hlo")).unwrap();
    std::fs::copy(inp.join("a.hlo"), unsearchable.join("e.hlo")).unwrap();
    std::fs::set_permissions(&unsearchable, std::fs::Permissions::from_mode(0o444)).unwrap();
    let root = std::fs::read_dir(&locked).is_ok();
    if !root {
        expected.push(locked.display().to_string());
        expected.push(unsearchable.display().to_string());
        // Listed in path order.
        expected.sort();
    }
    let out = dir.path().join("out");
    let run = run_batch(&[&inp], &out, &[]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    let s = summary(&out);
    let ids: Vec<Value> = modules(&s).iter().map(|m| m["id"].clone()).collect();
    let mut want = vec!["a", "b"];
    if root {
        want.extend(["c", "d", "e"]);
    }
    assert_eq!(ids, want);
    assert!(modules(&s).iter().all(|m| m["status"] == "ok"), "{s}");
    let unread: Vec<&str> = s["unread"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["path"].as_str().unwrap())
        .collect();
    assert_eq!(unread, expected, "{s}");
    assert_eq!(s["totals"]["unread"], expected.len());
    for path in &expected {
        assert!(stderr.contains(&format!("{path}: error: ")), "{stderr}");
    }
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(page.contains("skipped."), "the page says so too");
    // Met twice (its folder given as a PATH too, first): listed once, in
    // path order.
    let twice = dir.path().join("twice");
    let run = run_batch(&[&inp.join(&name), &inp], &twice, &[]);
    assert_eq!(run.status.code(), Some(1));
    assert_eq!(summary(&twice)["unread"], s["unread"]);
    // Shards each find it; their merge lists it once, and says so.
    let shards: Vec<PathBuf> = (0..2).map(|i| dir.path().join(format!("s{i}"))).collect();
    for (i, shard) in shards.iter().enumerate() {
        let run = run_batch(&[&inp], shard, &["--shard", &format!("{i}/2")]);
        assert_eq!(run.status.code(), Some(1));
    }
    let merged = dir.path().join("merged");
    let run = hlo_opt(&[
        "batch",
        "--merge",
        shards[0].to_str().unwrap(),
        shards[1].to_str().unwrap(),
        "-o",
        merged.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(1));
    assert_eq!(without_times(summary(&merged)), without_times(s.clone()));
    // The unread folder as the PATH: nothing to run.
    if !root {
        let run = run_batch(&[&locked], &dir.path().join("out2"), &[]);
        assert_eq!(run.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&run.stderr).contains("Permission denied"));
    }
    for folder in [&locked, &unsearchable] {
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}
