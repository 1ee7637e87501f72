//! The `hlo-opt` command line: read a module, run passes, write it back.

use clap::Parser;
use hlo_opt::driver::check_numerics::{self, CheckConfig, NumericsCheck, PassCheck};
use hlo_opt::driver::report_html::RunRecord;
use hlo_opt::ir::verify::verify;
use hlo_opt::ir::{Module, PrintOptions};
use hlo_opt::output::write_atomically;
use hlo_opt::passes::{self, PassError, PassRun};
use hlo_opt::text::error::located_error;
use hlo_opt::text::write_module;
use hlo_opt::util as diag;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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

    /// Comma-separated passes to run, in this order; '' runs none (a pure
    /// round trip). Without it, the default pipeline runs.
    #[arg(long, value_name = "A,B,C")]
    passes: Option<String>,

    /// Print the pass registry with each pass's place in the default pipeline.
    #[arg(long)]
    list_passes: bool,

    /// Print in XLA's short parsable form (no %, signatures, metadata).
    #[arg(long)]
    short: bool,

    /// Make every pass walk every computation (while bodies, conditionals,
    /// calls, fusions), not only the ones the original pass walks.
    #[arg(long)]
    all_computations: bool,

    /// Print per pass whether it changed the module, how long it took,
    /// what it rewrote and what it skipped and why (to standard error).
    #[arg(long)]
    report: bool,

    /// Skip the contract checks of the Neuron custom calls (QuantizeMX,
    /// __op$block_scaled_dot, AwsNeuronTopK, AwsNeuronSoftmax[Backward])
    /// that run after parsing and before the passes.
    #[arg(long)]
    no_contract_checks: bool,

    /// Prove the rewrites numerically: evaluate the module (reference
    /// interpreter, seeded inputs) before the passes and after every pass
    /// that changed it, print a table per pass (stderr), and fail naming
    /// the pass and the output when one moves beyond its tolerance.
    #[arg(long)]
    check_numerics: bool,

    /// Seed of --check-numerics' inputs.
    #[arg(long, value_name = "N", default_value_t = 0)]
    check_seed: u64,

    /// With --check-numerics: succeed even when some rewritten regions
    /// could not be checked (they hold an op the interpreter does not
    /// evaluate); they are still listed.
    #[arg(long, requires = "check_numerics")]
    accept_unchecked: bool,

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

    /// Write the output module as Model Explorer graph JSON (each
    /// computation a namespace), and beside it FILE's name with
    /// `.overlay.json`: node data colouring what each pass made or rewrote
    /// (`model-explorer FILE.json`, then load the overlay).
    #[arg(long, value_name = "FILE.json")]
    emit_graph: Option<PathBuf>,

    /// Input format: `text` (HLO text) or `proto` (binary HloModuleProto,
    /// HloProto or HloSnapshot). Default: by extension (`.pb` is proto,
    /// `.hlo`/`.txt` text), else by content.
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
    Eval(hlo_opt::driver::eval::EvalCli),
}

/// Large blocks (over 1 MiB: a computation's bytes, a batch's text) get
/// pages of their own, given back when freed. glibc would raise its
/// threshold to the largest block freed (up to 32 MiB), after which such
/// blocks stay in the heap once freed: 4-5 MiB more peak memory on the
/// 528k-instruction module (docs/performance.md).
fn fix_mmap_threshold() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt(3) only sets a parameter of glibc's malloc, which
    // takes its own lock; this runs first in `main`, before any other
    // thread or allocation of ours.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

fn main() -> ExitCode {
    fix_mmap_threshold();
    let cli = Cli::parse();
    if let Some(Command::Eval(eval)) = &cli.command {
        return hlo_opt::driver::eval::main(eval);
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
    if result.is_err() || diag::diagnostics_lost() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn run(cli: &Cli) -> Result<(), String> {
    if cli.list_passes {
        return write_output(None, |w| w.write_all(list_passes().as_bytes()));
    }
    if cli.output.is_none() && diag::stdout_was_closed() {
        return Err(
            "<stdout>: error: standard output is closed; the module would be written nowhere (use -o FILE)"
                .into(),
        );
    }
    let input = cli.input.as_deref().expect("clap requires INPUT here");
    let (mut module, file_name) =
        hlo_opt::driver::input::read_module_input(input, cli.input_format.as_deref())?;
    // Errors in the module point at its lines, read again from the file.
    let path = (input != "-").then(|| Path::new(input));
    verify(&module)
        .map_err(|e| located_error(&file_name, path, e.pos, &format!("invalid module: {e}")))?;
    let mut pipeline = hlo_opt::driver::pipeline(cli.passes.as_deref(), cli.all_computations)?;
    pipeline.contract_checks = !cli.no_contract_checks;
    // The checks guard the passes; a pure round trip (`--passes ''`), a
    // format conversion, needs none.
    if !cli.no_contract_checks && !pipeline.pass_names().is_empty() {
        check_contract(&module, &file_name, path)?;
    }
    if let Some(dir) = &cli.dump_dir {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: error: {e}", dir.display()))?;
        dump(dir, "00.input.hlo", &module)?;
    }
    let check_config = CheckConfig {
        seed: cli.check_seed,
        verify_each: pipeline.verify_each,
        accept_unchecked: cli.accept_unchecked,
        ..CheckConfig::default()
    };
    let mut print_table = |c: &PassCheck| diag::diag(&c.table());
    let mut check = cli.check_numerics.then(|| {
        diag::diag(&check_numerics::heading(cli.check_seed));
        NumericsCheck::new(&module, &check_config, &mut print_table)
    });
    // What the passes did, for the page and the graph's overlay.
    let mut record = (cli.report_html.is_some() || cli.emit_graph.is_some())
        .then(|| RunRecord::new(&module, &file_name));
    let mut step = 0;
    // The dump comes first: a module the check refuses is the one to see.
    let mut after = |run: &PassRun, m: &Module| {
        step += 1;
        if let Some(record) = &mut record {
            record.after(run, m)?;
        }
        if let (Some(dir), true) = (&cli.dump_dir, run.changed) {
            dump(dir, &format!("{step:02}.{}.hlo", run.name), m).map_err(|message| {
                PassError::After {
                    pass: run.name,
                    message,
                }
            })?;
        }
        match &mut check {
            Some(check) => check.after(run, m),
            None => Ok(()),
        }
    };
    let result = pipeline.run_with(&mut module, &mut after);
    // Written whatever the outcome: the passes that ran are on it.
    if let (Some(path), Some(record)) = (&cli.report_html, &record) {
        write_output(Some(path), |w| record.write(w))?;
    }
    let runs = match check {
        Some(check) => check
            .finish(result)
            .map(|(runs, _)| runs)
            .map_err(|e| e.to_string()),
        None => result.map_err(|e| e.to_string()),
    }
    .map_err(|e| format!("{file_name}: error: {e}"))?;
    if cli.report {
        let mut text = String::new();
        if runs.is_empty() {
            text.push_str("no passes ran\n");
        }
        for r in &runs {
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
        diag::diag(&text);
    }

    let options = if cli.short {
        PrintOptions::short_form()
    } else {
        module.style
    };
    let proto_out = match cli.output_format.as_deref() {
        Some(f) => f == "proto",
        None => cli
            .output
            .as_deref()
            .is_some_and(|p| p.extension().is_some_and(|e| e == "pb")),
    };
    if let (Some(path), Some(record)) = (&cli.emit_graph, &record) {
        write_output(Some(path), |w| {
            hlo_opt::driver::graph_json::write_graph(&module, record.made(), w)
        })?;
        write_output(Some(&overlay_path(path)), |w| {
            hlo_opt::driver::graph_json::write_overlay(
                &module,
                record.made(),
                &record.pass_names(),
                w,
            )
        })?;
    }
    let written = if proto_out {
        // Streamed: a computation's bytes at a time, never the whole proto.
        write_output(cli.output.as_deref(), |w| {
            hlo_opt::proto::to_proto::write_module_proto(&module, w).map_err(|e| match e {
                hlo_opt::proto::to_proto::WriteError::Io(e) => e,
                hlo_opt::proto::to_proto::WriteError::Proto(e) => {
                    std::io::Error::other(format!("cannot write {file_name} as a proto: {e}"))
                }
            })
        })
    } else {
        write_output(cli.output.as_deref(), |w| {
            write_module(&module, &options, w)
        })
    };
    // The process is about to exit and the OS takes the memory back at
    // once: freeing a large module's millions of allocations one by one
    // would cost about a twentieth of the command.
    std::mem::forget(module);
    written
}

/// `graph.json` -> `graph.overlay.json`.
fn overlay_path(graph: &Path) -> PathBuf {
    let stem = graph
        .file_stem()
        .map_or_else(|| "graph".into(), |s| s.to_string_lossy().to_string());
    graph.with_file_name(format!("{stem}.overlay.json"))
}

/// Writes `module` as `dir/name` (atomically), in its own form.
fn dump(dir: &Path, name: &str, module: &hlo_opt::ir::Module) -> Result<(), String> {
    write_output(Some(&dir.join(name)), |w| {
        write_module(module, &module.style, w)
    })
}

/// The contract checks (`hlo_opt::contract`): every violation, each
/// pointing at its instruction's line, with its resolution.
fn check_contract(
    module: &hlo_opt::ir::Module,
    file_name: &str,
    path: Option<&Path>,
) -> Result<(), String> {
    let violations = hlo_opt::neuron::contract::check(module);
    if violations.is_empty() {
        return Ok(());
    }
    let mut out = String::new();
    for v in &violations {
        let message = format!("contract violation {}", v.headline());
        out.push_str(&located_error(file_name, path, v.pos, &message));
        out.push_str(&format!("\n  resolution: {}\n", v.resolution));
    }
    out.push_str(&format!(
        "{} contract violation{}; --no-contract-checks skips these checks",
        violations.len(),
        if violations.len() == 1 { "" } else { "s" }
    ));
    Err(out)
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

/// Writes to stdout, or to `path` through [`write_atomically`] so that a
/// failure leaves nothing behind.
fn write_output(
    path: Option<&Path>,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), String> {
    let Some(path) = path else {
        let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
        return write(&mut stdout)
            .and_then(|()| stdout.flush())
            .map_err(|e| format!("<stdout>: error: {e}"));
    };
    write_atomically(path, |file| {
        let mut w = std::io::BufWriter::new(file);
        write(&mut w)?;
        w.flush()
    })
    .map_err(|e| format!("{}: error: {e}", path.display()))
}
