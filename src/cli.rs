//! The `hlo-opt` command line: read a module, run passes, write it back.
//! The binary (`src/main.rs`) and the Python package's `hlo-opt` console
//! script both call [`main`].

use crate::driver::check_numerics::{self, PassCheck};
use crate::driver::run::{self, DumpFiles, RunConfig, RunError};
use crate::driver::run_args::RunArgs;
use crate::ir::verify::verify;
use crate::ir::Module;
use crate::neuron::contract::Violation;
use crate::output::{Destination, Links, OutputPlan, Staged};
use crate::passes::{self, PassRun};
use crate::text::error::located_error;
use crate::util as diag;
use clap::Parser;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Legalize an XLA HLO module for the AWS Neuron back end.
#[derive(Parser, Debug)]
#[command(
    name = "hlo-opt",
    version,
    about,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,

    /// The module to read: HLO text or a binary proto (see --input-format); `-` reads standard input.
    #[arg(required_unless_present = "list_passes")]
    input: Option<String>,

    /// Where to write the result (default: standard output). Written to a
    /// temporary file first and renamed, so a failure leaves nothing behind.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,

    /// Print the pass registry with each pass's place in the default pipeline.
    #[arg(long)]
    list_passes: bool,

    /// Print in XLA's short parsable form (no %, signatures, metadata).
    #[arg(long)]
    short: bool,

    /// Print per pass whether it changed the module, how long it took,
    /// what it rewrote and what it skipped and why (to standard error).
    #[arg(long)]
    report: bool,

    #[command(flatten)]
    run: RunArgs,

    /// Write the module after every pass that changed it into DIR (created
    /// if need be), as `NN.<pass>.hlo` in run order, and the input as
    /// `00.input.hlo`: what XLA's `--xla_dump_hlo_pass_re=.*` gives.
    #[arg(long, value_name = "DIR")]
    dump_dir: Option<PathBuf>,

    /// Write a self-contained HTML page of what the passes did: per pass,
    /// changed or not and its time; per rewrite, the neighbourhood before
    /// and after, drawn; per skipped candidate, why, and its neighbourhood.
    #[arg(long, value_name = "FILE")]
    report_html: Option<PathBuf>,

    /// Write the run as Model Explorer graph JSON: two graphs, the input
    /// module (before) and the output (after), nodes in the layers of
    /// their `op_name`; and beside it FILE's name with `.overlay.json`:
    /// node data naming the pass that matched (before) or made (after)
    /// each node (`model-explorer FILE.json --node_data_paths
    /// FILE.overlay.json`).
    #[arg(long, value_name = "FILE.json")]
    emit_graph: Option<PathBuf>,

    /// Input format: `text` (HLO text) or `proto` (binary HloModuleProto,
    /// HloProto or HloSnapshot). Default: `.pb` is proto, anything else by
    /// content (neuronx-distributed names its protos `.hlo`); UTF-8 that
    /// looks like a proto but does not read as one is read as text.
    #[arg(long, value_name = "FORMAT", value_parser = ["text", "proto"])]
    input_format: Option<String>,

    /// Output format: `text` or `proto` (binary HloModuleProto). Default:
    /// proto when -o names a `.pb` file, else text.
    #[arg(long, value_name = "FORMAT", value_parser = ["text", "proto"])]
    output_format: Option<String>,

    /// Log the passes' diagnostics (the original's own log lines) to
    /// standard error; `-vv` for more.
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Run a module with the reference interpreter on .npz or seeded
    /// inputs, and write, print or compare its outputs.
    Eval(crate::driver::eval::EvalCli),
    /// Run every module of a training program (an XLA dump folder, the
    /// Neuron compile cache, module files) in parallel: OUT/<id>.hlo per
    /// module, OUT/summary.json, OUT/index.html (docs/batch.md).
    Batch(crate::driver::batch::BatchCli),
}

/// Runs the command on `args` (the program name first); returns the
/// exit status.
pub fn main<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version are "errors" that print and succeed,
            // unless what they print cannot be written (`> /dev/full`).
            let printed = e
                .print()
                .and_then(|()| std::io::Write::flush(&mut std::io::stdout()));
            if printed.is_err() && e.exit_code() == 0 {
                crate::util::diag("hlo-opt: error: cannot write to standard output\n");
                return 1;
            }
            return e.exit_code().try_into().unwrap_or(2);
        }
    };
    match &cli.command {
        Some(Command::Eval(eval)) => return crate::driver::eval::main(eval),
        Some(Command::Batch(batch)) => return crate::driver::batch::main(batch),
        None => {}
    }
    let level = match cli.verbose {
        0 => log::LevelFilter::Warn,
        1 => log::LevelFilter::Debug,
        _ => log::LevelFilter::Trace,
    };
    diag::init_logger(level);
    let result = run(&cli);
    if let Err(message) = &result {
        diag::diag(&format!("hlo-opt: {message}\n"));
    }
    // A diagnostic that could not be written (stderr full or closed) is a
    // failure too: the user did not see what was meant for them.
    u8::from(result.is_err() || diag::diagnostics_lost())
}

/// Every file the run may write, checked against the input and each
/// other before anything is read or written.
struct Outputs {
    module: Option<Destination>,
    report_html: Option<Destination>,
    graph: Option<(Destination, Destination)>,
    /// Every dump the run may write.
    dumps: DumpFiles,
}

fn plan_outputs(cli: &Cli, input: &str, config: &RunConfig) -> Result<Outputs, String> {
    let mut plan = OutputPlan::new();
    if input == "-" {
        plan.stdin_input();
    } else {
        plan.input("the input", Path::new(input));
    }
    let module = cli
        .output
        .as_deref()
        .map(|p| plan.output("-o", p, Links::Follow))
        .transpose()?;
    if module.is_none() {
        plan.stdout_output()?;
    }
    let report_html = cli
        .report_html
        .as_deref()
        .map(|p| plan.output("--report-html", p, Links::Follow))
        .transpose()?;
    let graph = match &cli.emit_graph {
        Some(p) => Some((
            plan.output("--emit-graph", p, Links::Follow)?,
            plan.output("--emit-graph's overlay", &overlay_path(p), Links::Follow)?,
        )),
        None => None,
    };
    let dumps = DumpFiles::plan(&mut plan, "--dump-dir", cli.dump_dir.as_deref(), config)?;
    Ok(Outputs {
        module,
        report_html,
        graph,
        dumps,
    })
}

/// What the command does while the run goes on: dumps staged with the
/// other outputs, numerics tables printed as they come.
struct CommandCallbacks<'a> {
    dumps: &'a DumpFiles,
    staged: &'a mut Staged,
}

impl run::Callbacks for CommandCallbacks<'_> {
    fn dumps(&self) -> bool {
        !self.dumps.is_empty()
    }

    fn dump(&mut self, name: &str, module: &Module) -> Result<(), String> {
        self.dumps.stage(self.staged, name, module)
    }

    fn numerics(&mut self, check: &PassCheck) {
        diag::diag(&check.table());
    }
}

fn run(cli: &Cli) -> Result<(), String> {
    if cli.list_passes {
        return write_stdout(|w| w.write_all(list_passes().as_bytes()));
    }
    if cli.output.is_none() && diag::stdout_was_closed() {
        return Err(
            "<stdout>: error: standard output is closed; the module would be written nowhere (use -o FILE)"
                .into(),
        );
    }
    let input = cli.input.as_deref().expect("clap requires INPUT here");
    let mut config = cli.run.config(|| cli.run.memory_budget(), None);
    config.graph = cli.emit_graph.is_some();
    let mut outputs = plan_outputs(cli, input, &config)?;
    outputs.dumps.make_folder()?;
    let (module, file_name) =
        crate::driver::input::read_module_input(input, cli.input_format.as_deref())?;
    // Errors in the module point at its lines, read again from the file.
    let path = (input != "-").then(|| Path::new(input));
    verify(&module)
        .map_err(|e| located_error(&file_name, path, e.pos, &format!("invalid module: {e}")))?;
    // What the passes did, for the page and the graph's overlay.
    if cli.report_html.is_some() || cli.emit_graph.is_some() {
        config.record = Some(file_name.clone());
    }
    if cli.run.check_numerics.is_some() {
        // The check evaluates: the interpreter's allocation pattern.
        crate::driver::eval::reuse_freed_arrays();
        crate::interp::warm_up_in_background();
        diag::diag(&check_numerics::heading(cli.run.check_seed));
    }
    // Every output is staged beside its destination and renamed into
    // place at the end, all together.
    let mut staged = Staged::new();
    let mut callbacks = CommandCallbacks {
        dumps: &outputs.dumps,
        staged: &mut staged,
    };
    // The graph draws the input beside the output: a copy, only then.
    let input_module = cli.emit_graph.is_some().then(|| module.clone());
    let outcome = run::run(module, &config, &mut callbacks);
    // The page is written whatever the outcome: the passes that ran are
    // on it, as the dumps are.
    let record = match &outcome {
        Ok(o) => o.record.as_ref(),
        Err(f) => f.record.as_ref(),
    };
    if let (Some(d), Some(record)) = (&outputs.report_html, record) {
        staged.write(d, |f| write_file(f, |w| record.write(w)))?;
    }
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(failure) => {
            staged.commit()?;
            return Err(match failure.error {
                RunError::Contract(violations) => contract_error(&violations, &file_name, path),
                e => format!("{file_name}: error: {e}"),
            });
        }
    };
    if cli.report {
        diag::diag(&report_text(&outcome.runs));
    }
    let module = outcome.module;
    let proto_out = match cli.output_format.as_deref() {
        Some(f) => f == "proto",
        None => cli
            .output
            .as_deref()
            .is_some_and(|p| p.extension().is_some_and(|e| e == "pb")),
    };
    if let (Some((graph, overlay)), Some(marks), Some(input)) =
        (&outputs.graph, &outcome.graph, &input_module)
    {
        use crate::driver::graph_json::{write_graph, write_overlay};
        staged.write(graph, |f| {
            write_file(f, |w| write_graph(input, &module, marks, w))
        })?;
        staged.write(overlay, |f| {
            write_file(f, |w| write_overlay(input, &module, marks, w))
        })?;
    }
    let write_module_to = |w: &mut dyn Write| {
        crate::driver::input::write_module_output(&module, proto_out, cli.short, &file_name, w)
    };
    match &outputs.module {
        Some(d) => staged.write(d, |f| write_file(f, write_module_to))?,
        // Standard output cannot be taken back: the files are committed
        // only once it is written.
        None => write_stdout(write_module_to)?,
    }
    staged.commit()?;
    // The process is about to exit and the OS takes the memory back at
    // once: freeing a large module's millions of allocations one by one
    // would cost about a twentieth of the command.
    std::mem::forget(module);
    Ok(())
}

/// The `--report` text: per pass, changed or not, its time, and what it
/// rewrote or skipped.
fn report_text(runs: &[PassRun]) -> String {
    let mut text = String::new();
    if runs.is_empty() {
        text.push_str("no passes ran\n");
    }
    for r in runs {
        text.push_str(&format!(
            "{:<32} {:<10} {:>10.3} ms\n",
            r.name,
            if r.changed { "changed" } else { "unchanged" },
            r.elapsed.as_secs_f64() * 1e3
        ));
        for entry in &r.report {
            text.push_str(&format!("    {entry}\n"));
        }
    }
    text
}

/// `graph.json` -> `graph.overlay.json`.
fn overlay_path(graph: &Path) -> PathBuf {
    let stem = graph
        .file_stem()
        .map_or_else(|| "graph".into(), |s| s.to_string_lossy().to_string());
    graph.with_file_name(format!("{stem}.overlay.json"))
}

/// The contract violations, each pointing at its instruction's line,
/// with its resolution.
fn contract_error(violations: &[Violation], file_name: &str, path: Option<&Path>) -> String {
    let mut out = String::new();
    for v in violations {
        let message = format!("contract violation {}", v.headline());
        out.push_str(&located_error(file_name, path, v.pos, &message));
        out.push_str(&format!("\n  resolution: {}\n", v.resolution));
    }
    out.push_str(&format!(
        "{} contract violation{}; --no-contract-checks skips these checks",
        violations.len(),
        if violations.len() == 1 { "" } else { "s" }
    ));
    out
}

fn list_passes() -> String {
    let mut s = String::from("order  pass                          what it does\n");
    let mut entries: Vec<_> = passes::registry().iter().collect();
    entries.sort_by_key(|p| (p.order.is_none(), p.order));
    for p in entries {
        let order = p.order.map_or("-".to_string(), |o| o.to_string());
        s.push_str(&format!("{order:>5}  {:<28}  {}\n", p.name, p.summary));
    }
    s
}

/// Writes to standard output.
fn write_stdout(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<(), String> {
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    write(&mut stdout)
        .and_then(|()| stdout.flush())
        .map_err(|e| format!("<stdout>: error: {e}"))
}

/// Writes to `file` through a buffer.
fn write_file(
    file: &mut std::fs::File,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut w = std::io::BufWriter::new(file);
    write(&mut w)?;
    w.flush()
}
