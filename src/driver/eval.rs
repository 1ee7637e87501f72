//! `hlo-opt eval`: run a module on inputs and write (or compare) its
//! outputs.

use crate::interp::array::shape_dims;
use crate::interp::array::{Array, Value};
use crate::interp::budget::{check_parameter_sizes, estimate, parse_size, Budget};
use crate::interp::capture::{Capture, CaptureRequest};
use crate::interp::compare::{compare_with_operands, Bound};
use crate::interp::npy::{read_outputs_within, read_parameters, sidecar_path, write_npz};
use crate::interp::{random::random_inputs, Interpreter};
use crate::ir::verify::verify;
use crate::ir::{InstrId, Module, Opcode};
use crate::output::{Destination, Links, OutputPlan, Staged};
use crate::text::error::located_error;
use clap::Args;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

/// Evaluate an HLO module with the reference interpreter.
///
/// Inputs come from an .npz file (in0, in1, ... in parameter order; bf16
/// and 8-bit floats as raw bits named in a sidecar <file>.json), or are
/// seeded random values. Outputs (out0, out1, ...: the root tuple's
/// elements) are written as .npz in the same layout, or compared with a
/// reference .npz.
#[derive(Args, Debug)]
pub struct EvalCli {
    /// The HLO text module; `-` reads standard input.
    pub input: String,

    /// Inputs as an .npz file (default: seeded random inputs).
    #[arg(long, value_name = "NPZ")]
    pub inputs: Option<PathBuf>,

    /// Seed of the random inputs.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,

    /// Write the outputs here as .npz (and the sidecar .json when needed).
    #[arg(short, long, value_name = "NPZ")]
    pub output: Option<PathBuf>,

    /// Compare the outputs with out0, out1, ... of this .npz (exit 1 when
    /// one is beyond tolerance).
    #[arg(long, value_name = "NPZ")]
    pub compare: Option<PathBuf>,

    /// Multiply the comparison tolerances by this factor.
    #[arg(long, default_value_t = 1.0)]
    pub tolerance_scale: f64,

    /// Run these passes first ('default' for the default pipeline).
    #[arg(long, value_name = "A,B,C")]
    pub passes: Option<String>,

    /// Passes walk every computation.
    #[arg(long)]
    pub all_computations: bool,

    /// Print the time evaluation took.
    #[arg(long)]
    pub time: bool,

    /// The memory the evaluation may hold at once (`512M`, `4G`, `4GiB`,
    /// bytes); a module needing more is refused before it runs. Default:
    /// half of the memory available at the start (or of what `ulimit -v`
    /// allows, if less).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub memory_limit: Option<u64>,
}

/// The interpreter frees arrays and allocates ones of the same sizes op
/// after op: blocks up to 32 MiB (glibc's largest threshold) stay in the
/// heap once freed and are reused, instead of new pages from the kernel
/// (faulted in and zeroed) for every array over the 1 MiB `main` sets for
/// parsing. A third of the evaluation's time went to those faults on
/// `gpt48_fwd_f32.hlo`.
pub fn reuse_freed_arrays() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt(3) only sets parameters of glibc's malloc, which
    // takes its own lock; no allocation of ours depends on them.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
    }
}

/// Runs `hlo-opt eval`; returns the exit status.
pub fn main(cli: &EvalCli) -> u8 {
    reuse_freed_arrays();
    crate::interp::warm_up_in_background();
    let failed = match run(cli) {
        Ok(failed) => failed,
        Err(message) => {
            crate::util::diag(&format!("hlo-opt eval: {message}\n"));
            true
        }
    };
    u8::from(failed || crate::util::diagnostics_lost())
}

/// Writes `text` to standard output; a failure is an error, not a panic.
fn write_stdout(text: &str) -> Result<(), String> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| format!("<stdout>: error: {e}"))
}

/// Whether a compared output failed, or why the run could not be done.
fn run(cli: &EvalCli) -> Result<bool, String> {
    if cli.output.is_none() && crate::util::stdout_was_closed() {
        return Err("<stdout>: error: standard output is closed (use -o FILE.npz)".into());
    }
    let outputs = plan_outputs(cli)?;
    let budget = match cli.memory_limit {
        Some(bytes) => Budget::given(bytes, "--memory-limit"),
        None => Budget::available("--memory-limit"),
    };
    let (mut module, file) = super::input::read_module_input(&cli.input, None)?;
    let file = &*file;
    let path = (cli.input != "-").then(|| Path::new(&cli.input));
    verify(&module)
        .map_err(|e| located_error(file, path, e.pos, &format!("invalid module: {e}")))?;
    if cli.passes.is_some() {
        let mut p = super::pipeline(cli.passes.as_deref(), cli.all_computations)
            .map_err(|e| format!("error: {e}"))?;
        p.run(&mut module).map_err(|e| format!("{file}: {e}"))?;
    }
    // Before any input is read or made: the evaluation's arrays, and
    // after it the outputs' f64 summaries or .npz bytes, or with
    // --compare the reference's arrays and the comparison's f64 copies.
    check_parameter_sizes(&module).map_err(|e| format!("{file}: {e}"))?;
    let need = estimate(&module);
    let after = if cli.compare.is_some() {
        need.outputs
            .saturating_add(need.largest_output.saturating_mul(16))
    } else {
        need.largest_output.saturating_mul(8)
    };
    budget
        .check("the evaluation", need.peak.saturating_add(after), &need)
        .map_err(|e| format!("{file}: {e}"))?;
    let entry = module.comp(module.entry());
    let param_types: Vec<_> = entry
        .parameters()
        .iter()
        .map(|&p| entry.instr(p).shape.clone())
        .collect();
    let inputs: Vec<Value> = match &cli.inputs {
        Some(path) => {
            let mut params = Vec::new();
            for (i, s) in param_types.iter().enumerate() {
                if s.is_tuple() {
                    return Err(format!(
                        "{file}: parameter {i} is a tuple ({}); .npz inputs hold arrays only",
                        s.to_text(false)
                    ));
                }
                let dims = shape_dims(s).map_err(|e| format!("{file}: parameter {i}: {e}"))?;
                params.push((s.element_type(), dims));
            }
            let params: Vec<_> = params
                .iter()
                .map(|(t, d)| (*t, Some(d.as_slice())))
                .collect();
            read_parameters(path, &params)
                .map_err(|e| format!("{file}: inputs {}: {e}", path.display()))?
                .into_iter()
                .map(Value::array)
                .collect()
        }
        None => random_inputs(&module, cli.seed).map_err(|e| format!("{file}: {e}"))?,
    };
    let start = Instant::now();
    // With --compare, the magnitude of what each output was computed from.
    let producers = cli
        .compare
        .as_ref()
        .map(|_| output_producers(&module))
        .unwrap_or_default();
    let capture = Rc::new(Capture::new({
        let mut request = CaptureRequest::default();
        for &id in producers.iter().flatten() {
            request.add_magnitude(module.entry(), id);
        }
        request
    }));
    let result = Interpreter::new(&module)
        .with_capture(capture.clone())
        .run(&inputs)
        .map_err(|e| format!("{file}: {e}"))?;
    let magnitudes = capture.magnitudes();
    let operand_scale = |k: usize| -> f64 {
        producers.get(k).map_or(0.0, |ids| {
            ids.iter()
                .filter_map(|&id| magnitudes.get(&(module.entry(), id)))
                .fold(0.0f64, |m, &x| m.max(x))
        })
    };
    if cli.time {
        crate::util::diag(&format!(
            "evaluated in {:.6} s\n",
            start.elapsed().as_secs_f64()
        ));
    }
    let outs = result.leaves();
    if let Some((npz, sidecar)) = &outputs {
        let named: Vec<(String, &Array)> = outs
            .iter()
            .enumerate()
            .map(|(i, a)| (format!("out{i}"), &**a))
            .collect();
        let mut staged = Staged::new();
        write_npz(npz, sidecar, &named, &mut staged).map_err(|e| e.to_string())?;
        staged.commit()?;
    }
    let mut failed = false;
    if let Some(path) = &cli.compare {
        let dims: Vec<Vec<usize>> = outs.iter().map(|a| a.dims.clone()).collect();
        let want = read_outputs_within(path, Some(&dims)).map_err(|e| e.to_string())?;
        if want.len() < outs.len() {
            // A pass may append outputs (add-logit-output).
            crate::util::diag(&format!(
                "note: the module returns {} outputs, {} holds {}: comparing the first {}\n",
                outs.len(),
                path.display(),
                want.len(),
                want.len()
            ));
        }
        let mut table = format!(
            "{:<8} {:<24} {:>12} {:>12} {:>10}  result\n",
            "output", "shape", "max abs err", "max rel err", "rtol"
        );
        for (i, (g, w)) in outs.iter().zip(&want).enumerate() {
            let d = compare_with_operands(g, w, cli.tolerance_scale, operand_scale(i));
            let verdict = match d.bound() {
                Some(Bound::OperandScale) => format!(
                    "ok (each err <= rtol*(|want|+max|operand|), max|operand| {:.3e})",
                    d.operand_scale
                ),
                Some(b) => b.verdict(0.0),
                None => {
                    failed = true;
                    format!("FAIL: {d}")
                }
            };
            table.push_str(&format!(
                "{:<8} {:<24} {:>12.3e} {:>12.3e} {:>10.0e}  {verdict}\n",
                format!("out{i}"),
                w.shape_text(),
                d.max_abs,
                d.max_rel,
                d.tolerance
            ));
        }
        write_stdout(&table)?;
    } else if cli.output.is_none() {
        let mut text = String::new();
        for (i, a) in outs.iter().enumerate() {
            text.push_str(&format!("out{i} {}\n", summary(a)));
        }
        write_stdout(&text)?;
    }
    Ok(failed)
}

/// The `.npz` written with `-o` and its sidecar, and standard output,
/// checked against every file the run reads (the module, `--inputs`,
/// `--compare` and their sidecars) before anything is read.
fn plan_outputs(cli: &EvalCli) -> Result<Option<(Destination, Destination)>, String> {
    let mut plan = OutputPlan::new();
    if cli.input == "-" {
        plan.stdin_input();
    } else {
        plan.input("the module", Path::new(&cli.input));
    }
    for (what, path) in [("--inputs", &cli.inputs), ("--compare", &cli.compare)] {
        if let Some(path) = path {
            plan.input(what, path);
            plan.input(&format!("{what}' sidecar"), &sidecar_path(path));
        }
    }
    // The summary (or the comparison's table) goes to standard output,
    // which must not be an input.
    if cli.output.is_none() || cli.compare.is_some() {
        plan.stdout_output()?;
    }
    let Some(npz) = &cli.output else {
        return Ok(None);
    };
    let sidecar = sidecar_path(npz);
    Ok(Some((
        plan.output("-o", npz, Links::Follow)?,
        plan.output("-o's sidecar", &sidecar, Links::Follow)?,
    )))
}

/// `f32[2,3] min -1 max 2 mean 0.5 [first values...]`.
fn summary(a: &Array) -> String {
    if a.ty.is_complex() {
        let v = crate::interp::complex::to_c128(&a.data);
        let head: Vec<String> = v.iter().take(6).map(|c| format!("{c}")).collect();
        let finite = v
            .iter()
            .filter(|c| c.re.is_finite() && c.im.is_finite())
            .count();
        return format!(
            "{} non-finite {} [{}{}]",
            a.shape_text(),
            v.len() - finite,
            head.join(", "),
            if v.len() > 6 { ", ..." } else { "" }
        );
    }
    let v = a.to_f64_vec();
    let finite: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    let (mn, mx) = finite
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    let mean = if finite.is_empty() {
        f64::NAN
    } else {
        finite.iter().sum::<f64>() / finite.len() as f64
    };
    let head: Vec<String> = v.iter().take(6).map(|x| format!("{x}")).collect();
    format!(
        "{} min {mn} max {mx} mean {mean:.6} non-finite {} [{}{}]",
        a.shape_text(),
        v.len() - finite.len(),
        head.join(", "),
        if v.len() > 6 { ", ..." } else { "" }
    )
}

/// Per output (the entry root's leaves, in order): the operands of the
/// instruction that computed it, looking through moves (copy, reshape,
/// transpose, bitcast, convert). An output that is a parameter, a
/// constant or an element of a loop's or call's result has none.
fn output_producers(module: &Module) -> Vec<Vec<InstrId>> {
    let comp = module.comp(module.entry());
    let mut leaves = Vec::new();
    let mut stack = vec![comp.root()];
    while let Some(id) = stack.pop() {
        let instr = comp.instr(id);
        if instr.opcode == Opcode::Tuple {
            stack.extend(instr.operands().iter().rev());
        } else {
            leaves.push(id);
        }
    }
    leaves
        .into_iter()
        .map(|mut id| loop {
            let instr = comp.instr(id);
            match instr.opcode {
                Opcode::Copy
                | Opcode::Reshape
                | Opcode::Transpose
                | Opcode::Bitcast
                | Opcode::Convert => id = instr.operands()[0],
                Opcode::Parameter
                | Opcode::Constant
                | Opcode::GetTupleElement
                | Opcode::While
                | Opcode::Call
                | Opcode::Conditional
                | Opcode::CustomCall => return Vec::new(),
                _ => {
                    return instr
                        .operands()
                        .iter()
                        .copied()
                        .filter(|&o| {
                            comp.instr(o)
                                .shape
                                .as_array()
                                .is_some_and(|a| a.element_type.is_float())
                        })
                        .collect()
                }
            }
        })
        .collect()
}
