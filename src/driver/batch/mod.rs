//! `hlo-opt batch`: every module of a training program (an XLA dump
//! folder, the Neuron compile cache, plain files) through the same run as
//! the single command, in parallel, with a summary (`summary.json`,
//! `index.html`) and a rerun that redoes only what changed. docs/batch.md.

mod discover;
mod index_html;
mod summary;

use crate::driver::run::{self, Quiet, RunError};
use crate::driver::run_args::RunArgs;
use crate::interp::budget::Budget;
use crate::ir::verify::verify;
use crate::output::{write_atomically, Links, OutputPlan};
use discover::{FolderId, Found, Source};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;
use summary::Summary;

pub use discover::DEFAULT_STAGE;

/// Run every module of a training program: an XLA dump folder, the Neuron
/// compile cache, or module files. Writes OUT/<id>.hlo (or .pb) per
/// module, OUT/summary.json and OUT/index.html.
#[derive(clap::Args, Debug)]
pub struct BatchCli {
    /// Folders to search (XLA dump folders, a Neuron cache) and module
    /// files; with --merge, the OUT folders of the shards to merge.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,

    /// The folder to write into (created if need be).
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,

    /// The XLA dump stage to take from each module_NNNN.<name>.* group.
    #[arg(long, value_name = "NAME", default_value = DEFAULT_STAGE)]
    stage: String,

    /// The single command's options: each module runs as `hlo-opt`
    /// would (the numerics' verdict per module in the summary).
    #[command(flatten)]
    run: RunArgs,

    /// Write each module's report page, OUT/<id>.html, linked from
    /// index.html.
    #[arg(long)]
    report_html: bool,

    /// `text` (OUT/<id>.hlo, the default) or `proto` (OUT/<id>.pb).
    #[arg(long, value_name = "FORMAT", value_parser = ["text", "proto"], default_value = "text")]
    output_format: String,

    /// Modules run at once (default: the cores available).
    #[arg(short, long, value_name = "N")]
    jobs: Option<usize>,

    /// Run every module again, even those whose last result in OUT is up
    /// to date.
    #[arg(long)]
    force: bool,

    /// Take only the I-th of N stable shares of the modules (by a hash of
    /// their id): `--shard 0/4` ... `--shard 3/4` cover every module once.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    shard: Option<(u64, u64)>,

    /// Merge the OUT folders of shards (the PATHs) into OUT: their
    /// modules, pages and summaries, as one unsharded run would give.
    #[arg(long)]
    merge: bool,
}

fn parse_shard(text: &str) -> Result<(u64, u64), String> {
    let bad = || format!("`{text}`: I/N with 0 <= I < N, e.g. 0/4");
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let (i, n) = (
        i.parse::<u64>().map_err(|_| bad())?,
        n.parse::<u64>().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// Where a module's stamp lives: what its last result was made from.
const STAMPS: &str = ".hlo-opt-batch";

/// Runs the batch; returns the exit status: 0 when every module passed,
/// 1 when any failed (or the batch itself could not run).
pub fn main(cli: &BatchCli) -> u8 {
    let result = if cli.merge { merge(cli) } else { batch(cli) };
    match result {
        Ok(summary) => u8::from(!summary.all_passed()),
        Err(message) => {
            crate::util::diag(&format!("hlo-opt batch: {message}\n"));
            1
        }
    }
}

/// The options a module's result depends on, as the summary states them.
fn options_json(cli: &BatchCli) -> Value {
    json!({
        "stage": cli.stage,
        "passes": cli.run.passes,
        "all_computations": cli.run.all_computations,
        "contract_checks": !cli.run.no_contract_checks,
        "check_numerics": cli.run.check_numerics,
        "check_seed": cli.run.check_seed,
        "accept_unchecked": cli.run.accept_unchecked,
        "report_html": cli.report_html,
        "output_format": cli.output_format,
    })
}

fn batch(cli: &BatchCli) -> Result<Summary, String> {
    let out = FolderId::of(&cli.output);
    if let Some(path) = cli
        .paths
        .iter()
        .find(|p| out.is_some() && FolderId::of(p) == out)
    {
        return Err(format!(
            "{}: error: it is the folder {} the modules are read from (their outputs would replace them); write into another folder; nothing was written",
            cli.output.display(),
            path.display()
        ));
    }
    // OUT inside a PATH: its files are this batch's outputs, not modules.
    let (mut modules, unread) = discover::discover(&cli.paths, &cli.stage, out)?;
    for u in &unread {
        crate::util::diag(&format!(
            "hlo-opt batch: {}: error: {}; skipped\n",
            u.path.display(),
            u.error
        ));
    }
    if let Some((i, n)) = cli.shard {
        modules.retain(|m| shard_of(&m.id, n) == i);
    }
    plan_outputs(cli, &modules)?;
    make_stamps_folder(&cli.output)?;
    let jobs = cli
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, modules.len().max(1));
    let options = options_json(cli);
    let job = Job {
        cli,
        options_key: format!("{} {}", env!("CARGO_PKG_VERSION"), options),
        // One budget for all: each of the jobs may hold its share.
        budget_per_job: cli
            .run
            .check_numerics
            .is_some()
            .then(|| cli.run.memory_budget().bytes / jobs as u64),
    };
    // Largest first, so a large module does not start last and finish
    // alone.
    let mut order: Vec<usize> = (0..modules.len()).collect();
    order.sort_by(|&a, &b| modules[b].size.cmp(&modules[a].size).then(a.cmp(&b)));
    let progress = summary::Progress::new(modules.len());
    let rows: Vec<Mutex<Option<Value>>> = modules.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&index) = order.get(k) else {
                    break;
                };
                let (row, reused) = job.module(&modules[index]);
                progress.finished(&row, reused);
                *rows[index].lock().unwrap_or_else(|e| e.into_inner()) = Some(row);
            });
        }
    });
    progress.done();
    let rows: Vec<Value> = rows
        .into_iter()
        .map(|r| {
            r.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .expect("every module ran")
        })
        .collect();
    let unread = unread
        .iter()
        .map(|u| json!({ "path": u.path.display().to_string(), "error": u.error }))
        .collect();
    let summary = Summary::new(options, rows, unread);
    summary.write(&cli.output)?;
    crate::util::diag(&summary.totals_text());
    Ok(summary)
}

/// Every file the batch may write, checked before any is: none may be a
/// module it reads (a file named on the command line inside OUT), or a
/// folder.
fn plan_outputs(cli: &BatchCli, modules: &[Found]) -> Result<(), String> {
    let mut plan = OutputPlan::new();
    for m in modules {
        plan.input("the module", &m.path);
        if let Source::NeuronCache {
            compile_flags: Some(flags),
            ..
        } = &m.source
        {
            plan.input("the compile flags", flags);
        }
    }
    let mut planned = |what: &str, path: PathBuf| plan.output(what, &path, Links::Replace);
    for m in modules {
        planned("the output", cli.output.join(output_name(cli, &m.id)))?;
        if cli.report_html {
            planned("the page", cli.output.join(page_name(&m.id)))?;
        }
        planned(
            "the stamp",
            cli.output.join(STAMPS).join(format!("{}.json", m.id)),
        )?;
    }
    for name in [summary::JSON, summary::HTML] {
        planned("the summary", cli.output.join(name))?;
    }
    Ok(())
}

/// OUT's folder of stamps, made if need be; a link there (to a folder
/// elsewhere) is refused, not written through.
fn make_stamps_folder(out: &Path) -> Result<(), String> {
    let stamps = out.join(STAMPS);
    if let Ok(meta) = std::fs::symlink_metadata(&stamps) {
        if !meta.is_dir() {
            return Err(format!(
                "{}: error: not a folder (a link there is not followed); nothing was written",
                stamps.display()
            ));
        }
    }
    std::fs::create_dir_all(&stamps).map_err(|e| format!("{}: error: {e}", out.display()))
}

/// A module's output file in OUT.
fn output_name(cli: &BatchCli, id: &str) -> String {
    let extension = if cli.output_format == "proto" {
        "pb"
    } else {
        "hlo"
    };
    format!("{id}.{extension}")
}

/// A module's report page in OUT.
fn page_name(id: &str) -> String {
    format!("{id}.html")
}

/// Which of `n` shares `id` falls in: stable across machines and runs.
fn shard_of(id: &str, n: u64) -> u64 {
    let digest = Sha256::digest(id.as_bytes());
    let mut head = [0u8; 8];
    head.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(head) % n
}

/// What every module of a batch shares.
struct Job<'a> {
    cli: &'a BatchCli,
    /// The tool's version and the options: part of every stamp.
    options_key: String,
    budget_per_job: Option<u64>,
}

impl Job<'_> {
    /// Runs one module (or finds its last result up to date): its summary
    /// row, and whether it was reused.
    fn module(&self, found: &Found) -> (Value, bool) {
        let start = Instant::now();
        let bytes = match read_bytes(&found.path) {
            Ok(b) => b,
            Err(e) => {
                let row = self.failed_row(found, e, start, None);
                self.forget_last_result(found, &row);
                return (row, false);
            }
        };
        let stamp = self.stamp(found, &bytes);
        if !self.cli.force {
            if let Some(row) = self.up_to_date(found, &stamp) {
                return (row, true);
            }
        }
        match self.run(found, bytes, start) {
            Ok((row, sha256)) => {
                let stamp_file = json!({ "stamp": stamp, "sha256": sha256, "row": row });
                let path = self.stamp_path(&found.id);
                if let Err(e) =
                    write_atomically(&path, |f| f.write_all(stamp_file.to_string().as_bytes()))
                {
                    warn(&path, e);
                }
                (row, false)
            }
            // A failed module is tried again next time, whatever its stamp.
            Err(row) => {
                self.forget_last_result(found, &row);
                (row, false)
            }
        }
    }

    /// After a failure, nothing of the module's last success stays in OUT
    /// to be taken for this run's: its stamp, and the output and page it
    /// wrote (a page this run wrote stays). Only this module's own file
    /// names are removed, whatever the stamp says.
    fn forget_last_result(&self, found: &Found, row: &Value) {
        let stamp = self.stamp_path(&found.id);
        let mut text = String::new();
        let Some(Ok(_)) = open_plain_file(&stamp).map(|mut f| f.read_to_string(&mut text)) else {
            return;
        };
        let last: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let id = &found.id;
        for name in [format!("{id}.hlo"), format!("{id}.pb"), page_name(id)] {
            let last_wrote = ["output", "page"].iter().any(|k| last["row"][k] == *name);
            let this_wrote = ["output", "page"].iter().any(|k| row[k] == *name);
            if last_wrote && !this_wrote {
                remove_stale(&self.cli.output.join(&name));
            }
        }
        remove_stale(&stamp);
    }

    fn stamp_path(&self, id: &str) -> PathBuf {
        self.cli.output.join(STAMPS).join(format!("{id}.json"))
    }

    /// The input's bytes (and its compile flags'), the options, the
    /// tool's version.
    fn stamp(&self, found: &Found, bytes: &[u8]) -> String {
        let mut h = Sha256::new();
        h.update(self.options_key.as_bytes());
        h.update([0]);
        h.update(bytes);
        if let Source::NeuronCache {
            compile_flags: Some(flags),
            ..
        } = &found.source
        {
            h.update(std::fs::read(flags).unwrap_or_default());
        }
        hex(&h.finalize())
    }

    /// The last result's row, when its stamp is `stamp` and its files are
    /// all still there.
    fn up_to_date(&self, found: &Found, stamp: &str) -> Option<Value> {
        let mut text = String::new();
        open_plain_file(&self.stamp_path(&found.id))?
            .read_to_string(&mut text)
            .ok()?;
        let mut stored: Value = serde_json::from_str(&text).ok()?;
        if stored["stamp"] != stamp {
            return None;
        }
        let row = stored["row"].take();
        // The output and the page as this module's last run wrote them,
        // not changed since.
        let intact = ["output", "page"]
            .iter()
            .all(|key| match row[key].as_str() {
                None => true,
                Some(name) => stored["sha256"][name].as_str().is_some_and(|hash| {
                    file_sha256(&self.cli.output.join(name)).as_deref() == Some(hash)
                }),
            });
        intact.then_some(row)
    }

    /// Runs the module and writes its output (and page): its row and the
    /// SHA-256 of each file written, by name; or the row of its failure.
    fn run(&self, found: &Found, bytes: Vec<u8>, start: Instant) -> Result<(Value, Value), Value> {
        let file_name = found.path.display().to_string();
        let module = match parse(&found.path, bytes, &file_name) {
            Ok(m) => m,
            Err(e) => return Err(self.failed_row(found, e, start, None)),
        };
        let instructions_before = module.instruction_count();
        let cli = self.cli;
        let budget = self.budget_per_job.unwrap_or(u64::MAX);
        let config = cli.run.config(
            || Budget::given(budget, "--memory-limit (shared by --jobs)"),
            cli.report_html.then(|| file_name.clone()),
        );
        let outcome = run::run(module, &config, &mut Quiet);
        let page = page_name(&found.id);
        let record = match &outcome {
            Ok(o) => o.record.as_ref(),
            Err(f) => f.record.as_ref(),
        };
        let mut sha256 = serde_json::Map::new();
        let page_written = match record {
            Some(record) => {
                let path = cli.output.join(&page);
                match write_atomically(&path, |f| {
                    let mut w = std::io::BufWriter::new(Hashing::new(f));
                    record.write(&mut w)?;
                    w.flush()?;
                    Ok::<_, std::io::Error>(w.get_ref().hex())
                }) {
                    Ok(hash) => {
                        sha256.insert(page.clone(), json!(hash));
                        Some(page)
                    }
                    Err(e) => {
                        let e = format!("{}: error: {e}", path.display());
                        return Err(self.failed_row(found, e, start, None));
                    }
                }
            }
            None => None,
        };
        let outcome = match outcome {
            Ok(o) => o,
            Err(failure) => {
                let violations = match &failure.error {
                    RunError::Contract(v) => v.len(),
                    _ => 0,
                };
                let mut row = self.failed_row(
                    found,
                    format!("{file_name}: error: {}", failure.error),
                    start,
                    page_written,
                );
                row["contract_violations"] = json!(violations);
                if let RunError::Numerics(_) = failure.error {
                    row["numerics"] = json!("failed");
                }
                row["instructions_before"] = json!(instructions_before);
                return Err(row);
            }
        };
        let proto = cli.output_format == "proto";
        let output = output_name(cli, &found.id);
        let path = cli.output.join(&output);
        let written = write_atomically(&path, |f| {
            let mut w = std::io::BufWriter::with_capacity(1 << 20, Hashing::new(f));
            crate::driver::input::write_module_output(
                &outcome.module,
                proto,
                false,
                &file_name,
                &mut w,
            )?;
            w.flush()?;
            Ok::<_, std::io::Error>(w.get_ref().hex())
        });
        match written {
            Ok(hash) => sha256.insert(output.clone(), json!(hash)),
            Err(e) => {
                let e = format!("{}: error: {e}", path.display());
                return Err(self.failed_row(found, e, start, page_written));
            }
        };
        let mut rewrites_by_pass = serde_json::Map::new();
        for r in &outcome.runs {
            let n = r
                .report
                .iter()
                .filter(|e| matches!(e, crate::passes::ReportEntry::Rewrote { .. }))
                .count();
            if n > 0 {
                rewrites_by_pass.insert(r.name.to_string(), json!(n));
            }
        }
        let rewrites = |pass: &str| {
            rewrites_by_pass
                .get(pass)
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        let numerics = if cli.run.check_numerics.is_none() {
            "off"
        } else if outcome.checks.iter().any(|c| !c.unchecked.is_empty()) {
            "unchecked regions"
        } else {
            "ok"
        };
        let mut row = self.row(found, "ok", None, start);
        row["instructions_before"] = json!(instructions_before);
        row["instructions_after"] = json!(outcome.module.instruction_count());
        row["softmax_forward"] = json!(rewrites("native-to-custom-softmax"));
        row["softmax_backward"] = json!(rewrites("native-to-custom-softmax-dx"));
        row["rewrites_by_pass"] = Value::Object(rewrites_by_pass);
        row["numerics"] = json!(numerics);
        row["output"] = json!(output);
        row["page"] = json!(page_written);
        // The process frees the module at exit; a batch frees it now.
        drop(outcome);
        Ok((row, Value::Object(sha256)))
    }

    fn row(&self, found: &Found, status: &str, error: Option<String>, start: Instant) -> Value {
        let mut source = json!({
            "kind": found.source.kind(),
            "path": found.path.display().to_string(),
        });
        match &found.source {
            Source::XlaDump { stage } => source["stage"] = json!(stage),
            Source::NeuronCache {
                version,
                compile_flags,
            } => {
                source["neuron_version"] = json!(version);
                source["compile_flags"] = compile_flags
                    .as_deref()
                    .and_then(|p| std::fs::read_to_string(p).ok())
                    .and_then(|t| serde_json::from_str(&t).ok())
                    .unwrap_or(Value::Null);
            }
            Source::File => {}
        }
        json!({
            "id": found.id,
            "source": source,
            "status": status,
            "error": error,
            "instructions_before": null,
            "instructions_after": null,
            "softmax_forward": 0,
            "softmax_backward": 0,
            "rewrites_by_pass": {},
            "contract_violations": 0,
            "numerics": if self.cli.run.check_numerics.is_some() { "not run" } else { "off" },
            "output": null,
            "page": null,
            "time_ms": (start.elapsed().as_secs_f64() * 1e4).round() / 10.0,
        })
    }

    fn failed_row(
        &self,
        found: &Found,
        error: String,
        start: Instant,
        page: Option<String>,
    ) -> Value {
        let mut row = self.row(found, "failed", Some(error), start);
        row["page"] = json!(page);
        row
    }
}

fn warn(path: &Path, e: impl std::fmt::Display) {
    crate::util::diag(&format!(
        "hlo-opt batch: {}: warning: {e}\n",
        path.display()
    ));
}

/// Removes a file of OUT's (a link there itself, not what it points at).
fn remove_stale(path: &Path) {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => warn(path, e),
        _ => {}
    }
}

/// The SHA-256 of a file's bytes, in hex; `None` if it cannot be read.
fn file_sha256(path: &Path) -> Option<String> {
    let mut h = Hashing::new(std::io::sink());
    std::io::copy(&mut open_plain_file(path)?, &mut h).ok()?;
    Some(h.hex())
}

/// `path` opened for reading if it is a regular file in OUT: not a link,
/// and not a FIFO, whose open would wait for a writer forever (anyone who
/// can write to OUT could hang every batch). Opened without blocking and
/// without following a link, then checked, so nothing can be swapped in
/// between.
fn open_plain_file(path: &Path) -> Option<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
    }
    let file = options.open(path).ok()?;
    file.metadata().ok()?.is_file().then_some(file)
}

/// A writer that hashes what goes through it (SHA-256).
struct Hashing<W> {
    inner: W,
    hash: Sha256,
}

impl<W: Write> Hashing<W> {
    fn new(inner: W) -> Self {
        Hashing {
            inner,
            hash: Sha256::new(),
        }
    }

    /// The hash of what was written so far, in hex.
    fn hex(&self) -> String {
        hex(&self.hash.clone().finalize())
    }
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The file's bytes, inflated when gzipped (the Neuron cache's
/// `model.hlo_module.pb.gz`, or a `.pb` holding gzip).
fn read_bytes(path: &Path) -> Result<Vec<u8>, String> {
    let error = |e: std::io::Error| format!("{}: error: {e}", path.display());
    let bytes = std::fs::read(path).map_err(error)?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut inflated = Vec::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_end(&mut inflated)
            .map_err(|e| format!("{}: error: not a whole gzip stream: {e}", path.display()))?;
        return Ok(inflated);
    }
    Ok(bytes)
}

/// Text or proto, as the single command tells them (a `.pb` name, else
/// the content); verified.
fn parse(path: &Path, bytes: Vec<u8>, file_name: &str) -> Result<crate::ir::Module, String> {
    let named_proto = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".pb") || n.ends_with(".pb.gz"));
    let module = if named_proto || crate::proto::looks_like_proto(&bytes) {
        match crate::proto::read_module(&bytes) {
            Ok(module) => module,
            Err(e) if !named_proto => {
                crate::driver::input::read_as_text_instead(bytes, file_name, &e.to_string())?.0
            }
            Err(e) => return Err(format!("{file_name}: error: {e}")),
        }
    } else {
        let text = String::from_utf8(bytes).map_err(|e| {
            format!(
                "{file_name}: error: not UTF-8 text (byte {})",
                e.utf8_error().valid_up_to()
            )
        })?;
        crate::text::parse_module_owned(text, file_name).map_err(|e| e.to_string())?
    };
    verify(&module).map_err(|e| {
        crate::text::error::located_error(
            file_name,
            Some(path),
            e.pos,
            &format!("invalid module: {e}"),
        )
    })?;
    Ok(module)
}

/// `--merge`: the shards' OUT folders into one, as one run would give.
/// Every shard is read and checked before anything is copied, so a
/// refused merge leaves OUT as it was.
fn merge(cli: &BatchCli) -> Result<Summary, String> {
    let mut options: Option<Value> = None;
    let mut rows: Vec<Value> = Vec::new();
    // Every shard searched the same folders: each unread path once.
    let mut unread = std::collections::BTreeMap::new();
    let mut ids = std::collections::BTreeSet::new();
    // (from, to) for every file of every module.
    let mut copies: Vec<(PathBuf, PathBuf)> = Vec::new();
    for dir in &cli.paths {
        let path = dir.join(summary::JSON);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("{}: error: {e}", path.display()))?;
        let shard: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{}: error: not a batch summary: {e}", path.display()))?;
        if shard["schema"] != summary::SCHEMA {
            return Err(format!(
                "{}: error: schema {} where {} is read",
                path.display(),
                shard["schema"],
                summary::SCHEMA
            ));
        }
        match &options {
            None => options = Some(shard["options"].clone()),
            Some(o) if *o != shard["options"] => {
                return Err(format!(
                    "{}: error: made with other options than {}: {} against {o}",
                    path.display(),
                    cli.paths[0].display(),
                    shard["options"]
                ))
            }
            Some(_) => {}
        }
        for u in shard["unread"].as_array().into_iter().flatten() {
            unread
                .entry(u["path"].as_str().unwrap_or_default().to_string())
                .or_insert_with(|| u.clone());
        }
        for row in shard["modules"].as_array().into_iter().flatten() {
            let id = row["id"].as_str().unwrap_or_default();
            // The files are named from the id: it must name nothing
            // outside OUT.
            if id.is_empty() || id == "." || id == ".." || id.contains(['/', '\\', '\0']) {
                return Err(format!(
                    "{}: error: module id {id:?} is not a file name",
                    path.display()
                ));
            }
            if !ids.insert(id.to_string()) {
                return Err(format!(
                    "{}: error: module {id} is in two shards",
                    path.display()
                ));
            }
            let own_names = [format!("{id}.hlo"), format!("{id}.pb"), page_name(id)];
            for key in ["output", "page"] {
                let Some(name) = row[key].as_str() else {
                    continue;
                };
                if !own_names.iter().any(|n| n == name) {
                    return Err(format!(
                        "{}: error: module {id}'s {key} {name:?} is not one of its files",
                        path.display()
                    ));
                }
                let from = dir.join(name);
                if !shard_file(&from)? {
                    return Err(format!("{}: error: missing", from.display()));
                }
                copies.push((from, cli.output.join(name)));
            }
            let stamp = Path::new(STAMPS).join(format!("{id}.json"));
            if shard_file(&dir.join(STAMPS))? && shard_file(&dir.join(&stamp))? {
                copies.push((dir.join(&stamp), cli.output.join(&stamp)));
            }
            rows.push(row.clone());
        }
    }
    make_stamps_folder(&cli.output)?;
    for (from, to) in &copies {
        copy_into(from, to)?;
    }
    rows.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    let summary = Summary::new(
        options.unwrap_or(Value::Null),
        rows,
        unread.into_values().collect(),
    );
    summary.write(&cli.output)?;
    crate::util::diag(&summary.totals_text());
    Ok(summary)
}

/// Whether a shard's file (or its stamps folder) is there: a link is
/// refused, as a batch never writes one into its OUT (whoever can write a
/// shard must not make the merge copy a file of the user's elsewhere).
fn shard_file(path: &Path) -> Result<bool, String> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(format!(
            "{}: error: a link, which a batch never writes; nothing was merged",
            path.display()
        )),
        Ok(_) => Ok(true),
        Err(_) => Ok(false),
    }
}

fn copy_into(from: &Path, to: &Path) -> Result<(), String> {
    if from == to {
        return Ok(());
    }
    write_atomically(to, |f| {
        let mut source = std::fs::File::open(from)?;
        std::io::copy(&mut source, f).map(|_| ())
    })
    .map_err(|e: std::io::Error| format!("{}: error: {e}", from.display()))
}
