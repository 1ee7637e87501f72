//! `hlo_opt._hlo_opt`: the Python binding of hlo-opt. The public API is
//! `hlo_opt/__init__.py`, which wraps this module (it turns numpy arrays
//! into bytes and back, and defines the exceptions raised here).

use hlo_opt::driver::check_numerics::{CheckConfig, CheckError, PassCheck};
use hlo_opt::driver::graph_json;
use hlo_opt::driver::report_html::RunRecord;
use hlo_opt::driver::run::{self as driver_run, DumpFiles, RunConfig, RunError};
use hlo_opt::interp::array::{Array, Value};
use hlo_opt::interp::budget::{check_parameter_sizes, estimate, parse_size, Budget};
use hlo_opt::interp::compare::Bound as ToleranceBound;
use hlo_opt::interp::npy::NpyArray;
use hlo_opt::interp::{Cancel, EvalOptions};
use hlo_opt::ir::verify::{verify, VerifyError};
use hlo_opt::ir::{Module, PrintOptions};
use hlo_opt::neuron::contract::Violation;
use hlo_opt::output::{Destination, Links, OutputPlan, Staged};
use hlo_opt::passes::{registry, PassError, PassRun, ReportEntry};
use hlo_opt::text::ParseError;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple, PyType};
use pyo3::{IntoPyObjectExt, PyClass};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// An HLO module, immutable: passes give a new one.
#[pyclass(name = "Module", module = "hlo_opt", frozen)]
struct HloModule {
    inner: Module,
    /// Read from a binary proto (or made by passes from one): it is
    /// pickled as a proto, whose ids and fields its text would lose.
    from_proto: bool,
    /// How the frontend's arguments map to the parameters (`from_jax`'s
    /// `JaxSignature`), kept through passes, copies and pickles.
    signature: Option<Py<PyAny>>,
}

#[pymethods]
impl HloModule {
    /// Parses and verifies HLO text; `file` names it in errors.
    #[staticmethod]
    #[pyo3(signature = (text, file = None), text_signature = "(text, file='<string>')")]
    fn from_text(
        py: Python<'_>,
        text: &Bound<'_, PyString>,
        file: Option<&Bound<'_, PyString>>,
    ) -> PyResult<HloModule> {
        // The name is only shown in messages: a character UTF-8 cannot
        // hold is shown replaced.
        let file = match file {
            None => "<string>".to_string(),
            Some(f) => lossy(f)?,
        };
        let bytes = text
            .encode_utf8()
            .map_err(|e| not_utf8_error(py, text, &file, e))?;
        let text = std::str::from_utf8(bytes.as_bytes())
            .map_err(|e| parse_error(py, &ParseError::at(&file, "", 0, e.to_string())))?;
        let module = py
            .detach(|| hlo_opt::text::parse_module(text, &file))
            .map_err(|e| parse_error(py, &e))?;
        verified(py, module, &file, Some(text))
    }

    /// Reads and verifies a binary `HloModuleProto`.
    #[staticmethod]
    fn from_proto(py: Python<'_>, data: &[u8]) -> PyResult<HloModule> {
        let module = py
            .detach(|| hlo_opt::proto::read_module(data))
            .map_err(|e| proto_error(py, &e.to_string()))?;
        verified(py, module, "<proto>", None).map(|m| HloModule {
            from_proto: true,
            ..m
        })
    }

    /// `from_proto` for a frontend that records how its arguments map to
    /// the parameters (`hlo_opt.from_jax`): the map is kept when the
    /// entry has the `parameter_count` parameters it fills.
    #[staticmethod]
    fn _from_proto_with_signature(
        py: Python<'_>,
        data: &[u8],
        signature: Py<PyAny>,
        parameter_count: usize,
    ) -> PyResult<HloModule> {
        let module = Self::from_proto(py, data)?;
        let entry = module.inner.comp(module.inner.entry());
        let fits = entry.parameters().len() == parameter_count;
        Ok(HloModule {
            signature: fits.then_some(signature),
            ..module
        })
    }

    /// The frontend's argument map, or `None`.
    #[getter]
    fn _signature(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.signature.as_ref().map(|s| s.clone_ref(py))
    }

    /// The module as HLO text: as it was written, or XLA's short form.
    #[pyo3(signature = (short = false))]
    fn to_text(&self, py: Python<'_>, short: bool) -> String {
        let options = if short {
            PrintOptions::short_form()
        } else {
            self.inner.style
        };
        py.detach(|| hlo_opt::text::print_module_with(&self.inner, &options))
    }

    /// The module as an encoded `HloModuleProto`.
    fn to_proto<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py
            .detach(|| hlo_opt::proto::module_to_proto_bytes(&self.inner))
            .map_err(|e| error(py, "HloOptError", format!("cannot write a proto: {e}"), &[]))?;
        Ok(PyBytes::new(py, &bytes))
    }

    #[getter]
    fn name(&self) -> String {
        self.inner.name.to_string()
    }

    /// The entry computation's parameters: (name, shape, element type).
    #[getter]
    fn parameters(&self) -> Vec<(String, String, String)> {
        let entry = self.inner.comp(self.inner.entry());
        entry
            .parameters()
            .iter()
            .map(|&p| {
                let i = entry.instr(p);
                let ty = if i.shape.is_tuple() {
                    "tuple".to_string()
                } else {
                    i.shape.element_type().name().to_string()
                };
                (i.name.to_string(), i.shape.to_text(false), ty)
            })
            .collect()
    }

    #[getter]
    fn instruction_count(&self) -> usize {
        self.inner.instruction_count()
    }

    /// Instructions by opcode, over every computation.
    #[getter]
    fn opcode_counts(&self) -> std::collections::BTreeMap<&'static str, usize> {
        let mut counts = std::collections::BTreeMap::new();
        for (_, comp) in self.inner.computations() {
            for (_, instr) in comp.instructions() {
                *counts.entry(instr.opcode.name()).or_insert(0) += 1;
            }
        }
        counts
    }

    /// Custom calls by target, over every computation.
    #[getter]
    fn custom_call_targets(&self) -> std::collections::BTreeMap<String, usize> {
        let mut counts = std::collections::BTreeMap::new();
        for (_, comp) in self.inner.computations() {
            for (_, instr) in comp.instructions() {
                if let Some(target) = instr.custom_call_target() {
                    *counts.entry(target.to_string()).or_insert(0) += 1;
                }
            }
        }
        counts
    }

    fn __str__(&self, py: Python<'_>) -> String {
        self.to_text(py, false)
    }

    /// Jupyter's view: name, parameters, instructions by opcode (the
    /// most frequent; the rest summed) and the custom calls, Neuron's
    /// first. Bounded whatever the module's size.
    fn _repr_html_(&self) -> String {
        const OPCODES_SHOWN: usize = 12;
        const PARAMETERS_SHOWN: usize = 16;
        let esc = |t: &str| {
            t.replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('"', "&quot;")
        };
        let mut h = format!(
            "<div class=\"hlo-opt-module\"><b>HloModule {}</b>: {} instructions in {} computations",
            esc(&self.inner.name),
            self.inner.instruction_count(),
            self.inner.computations().count()
        );
        let params = self.parameters();
        h.push_str("<table><tr><th>parameter</th><th>shape</th></tr>");
        for (name, shape, _) in params.iter().take(PARAMETERS_SHOWN) {
            h.push_str(&format!(
                "<tr><td>{}</td><td><code>{}</code></td></tr>",
                esc(name),
                esc(shape)
            ));
        }
        if params.len() > PARAMETERS_SHOWN {
            h.push_str(&format!(
                "<tr><td colspan=2>... {} more</td></tr>",
                params.len() - PARAMETERS_SHOWN
            ));
        }
        h.push_str("</table>");
        let mut opcodes: Vec<_> = self.opcode_counts().into_iter().collect();
        opcodes.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        h.push_str("<table><tr><th>opcode</th><th>count</th></tr>");
        for (op, n) in opcodes.iter().take(OPCODES_SHOWN) {
            h.push_str(&format!("<tr><td>{op}</td><td>{n}</td></tr>"));
        }
        if opcodes.len() > OPCODES_SHOWN {
            let rest: usize = opcodes[OPCODES_SHOWN..].iter().map(|(_, n)| n).sum();
            h.push_str(&format!(
                "<tr><td>{} other opcodes</td><td>{rest}</td></tr>",
                opcodes.len() - OPCODES_SHOWN
            ));
        }
        h.push_str("</table>");
        let mut calls: Vec<_> = self.custom_call_targets().into_iter().collect();
        calls.sort_by_key(|(t, _)| (!t.starts_with("AwsNeuron"), t.clone()));
        if !calls.is_empty() {
            h.push_str("<table><tr><th>custom call</th><th>count</th></tr>");
            for (target, n) in calls.iter().take(OPCODES_SHOWN) {
                h.push_str(&format!(
                    "<tr><td><code>{}</code></td><td>{n}</td></tr>",
                    esc(target)
                ));
            }
            if calls.len() > OPCODES_SHOWN {
                h.push_str(&format!(
                    "<tr><td colspan=2>... {} more targets</td></tr>",
                    calls.len() - OPCODES_SHOWN
                ));
            }
            h.push_str("</table>");
        }
        h.push_str("</div>");
        h
    }

    fn __repr__(&self) -> String {
        format!(
            "<hlo_opt.Module {} ({} instructions)>",
            self.inner.name,
            self.inner.instruction_count()
        )
    }

    /// Pickled as its text, which prints back byte for byte (and keeps how
    /// it was written); a module read from a proto as the proto, whose
    /// ids and fields the text lacks.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let module = slf.get();
        let class = slf.get_type();
        if let Some(signature) = &module.signature {
            let data = if module.from_proto {
                module.to_proto(py)?.into_any()
            } else {
                module.to_text(py, false).into_pyobject(py)?.into_any()
            };
            let args = (data, module.from_proto, signature.clone_ref(py));
            return Ok((class.getattr("_restore")?, args.into_pyobject(py)?));
        }
        if module.from_proto {
            let bytes = module.to_proto(py)?;
            return Ok((class.getattr("from_proto")?, (bytes,).into_pyobject(py)?));
        }
        let args = (module.to_text(py, false),).into_pyobject(py)?;
        Ok((class.getattr("from_text")?, args))
    }

    /// Unpickles a module that carries a signature.
    #[staticmethod]
    fn _restore(
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        from_proto: bool,
        signature: Py<PyAny>,
    ) -> PyResult<HloModule> {
        let module = if from_proto {
            Self::from_proto(py, data.extract()?)?
        } else {
            Self::from_text(py, data.cast()?, None)?
        };
        Ok(HloModule {
            signature: Some(signature),
            ..module
        })
    }

    // Immutable: a copy is the module itself, as for a str.
    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }
}

/// A pass this tool knows.
#[pyclass(module = "hlo_opt", frozen, get_all)]
struct PassInfo {
    name: String,
    summary: String,
    /// Whether the default pipeline runs it.
    default: bool,
}

#[pymethods]
impl PassInfo {
    #[new]
    fn new(name: String, summary: String, default: bool) -> Self {
        PassInfo {
            name,
            summary,
            default,
        }
    }

    fn __repr__(&self) -> String {
        format!("<PassInfo {}>", self.name)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Reduced<'py>> {
        let s = slf.get();
        reduced(slf, (&s.name, &s.summary, s.default))
    }

    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }
}

/// One line of a pass's report.
#[pyclass(module = "hlo_opt", frozen, get_all)]
struct ReportEntryInfo {
    /// "rewrote" or "skipped".
    kind: String,
    computation: String,
    instruction: String,
    /// What changed (rewrote), or why the candidate was left (skipped).
    reason: String,
    text: String,
}

#[pymethods]
impl ReportEntryInfo {
    #[new]
    fn new(
        kind: String,
        computation: String,
        instruction: String,
        reason: String,
        text: String,
    ) -> Self {
        ReportEntryInfo {
            kind,
            computation,
            instruction,
            reason,
            text,
        }
    }

    fn __str__(&self) -> String {
        self.text.clone()
    }

    fn __repr__(&self) -> String {
        format!("<ReportEntry {}>", self.text)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Reduced<'py>> {
        let s = slf.get();
        reduced(
            slf,
            (&s.kind, &s.computation, &s.instruction, &s.reason, &s.text),
        )
    }

    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }
}

/// What one pass did.
#[pyclass(module = "hlo_opt", frozen, get_all)]
struct PassReport {
    name: String,
    changed: bool,
    /// Seconds.
    time: f64,
    entries: Vec<Py<ReportEntryInfo>>,
}

#[pymethods]
impl PassReport {
    #[new]
    fn new(name: String, changed: bool, time: f64, entries: Vec<Py<ReportEntryInfo>>) -> Self {
        PassReport {
            name,
            changed,
            time,
            entries,
        }
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Reduced<'py>> {
        let s = slf.get();
        reduced(slf, (&s.name, s.changed, s.time, &s.entries))
    }

    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }

    fn __repr__(&self) -> String {
        format!(
            "<PassReport {} {} {:.3} ms, {} entries>",
            self.name,
            if self.changed { "changed" } else { "unchanged" },
            self.time * 1e3,
            self.entries.len()
        )
    }
}

/// One output compared after a pass.
#[pyclass(module = "hlo_opt", frozen, get_all)]
struct OutputCheck {
    name: String,
    shape: String,
    max_abs: f64,
    /// max |got - want| / max|want|.
    max_rel: f64,
    /// The relative tolerance, rtol.
    tolerance: f64,
    ok: bool,
    /// The tightest bound that held (`None` when not ok):
    /// "rtol*max|want|" or "rtol*(|want|+max|want|)"; "rounding noise"
    /// for a row not ok but within its rounding noise (inconclusive).
    bound: Option<String>,
    /// The rounding-noise allowance added to every element (0 if none).
    noise_floor: f64,
}

#[pymethods]
impl OutputCheck {
    #[new]
    #[pyo3(signature = (name, shape, max_abs, max_rel, tolerance, ok, bound = None, noise_floor = 0.0))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        name: String,
        shape: String,
        max_abs: f64,
        max_rel: f64,
        tolerance: f64,
        ok: bool,
        bound: Option<String>,
        noise_floor: f64,
    ) -> Self {
        OutputCheck {
            name,
            shape,
            max_abs,
            max_rel,
            tolerance,
            ok,
            bound,
            noise_floor,
        }
    }

    /// The row as the table prints it, under its heading.
    fn __repr__(&self) -> String {
        let w = self.name.len().max(8);
        format!("{}\n{}", output_table_heading(w), self.row(w))
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Reduced<'py>> {
        let s = slf.get();
        reduced(
            slf,
            (
                &s.name,
                &s.shape,
                s.max_abs,
                s.max_rel,
                s.tolerance,
                s.ok,
                &s.bound,
                s.noise_floor,
            ),
        )
    }

    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }
}

impl OutputCheck {
    /// One row of a table whose name column is `w` wide.
    fn row(&self, w: usize) -> String {
        let verdict = match self.bound.as_deref().and_then(ToleranceBound::from_name) {
            Some(bound) if self.ok => bound.verdict(self.noise_floor),
            // Past its tolerance, within its rounding noise (issue 31).
            Some(bound @ ToleranceBound::RoundingNoise) => bound.verdict(self.noise_floor),
            _ if self.ok => "ok".to_string(),
            _ => "FAIL".to_string(),
        };
        format!(
            "  {:<w$} {:<24} {:>12.3e} {:>12.3e} {:>10.0e}  {verdict}",
            self.name, self.shape, self.max_abs, self.max_rel, self.tolerance
        )
    }
}

fn output_table_heading(w: usize) -> String {
    format!(
        "  {:<w$} {:<24} {:>12} {:>12} {:>10}  result",
        "output", "shape", "max abs err", "max rel err", "rtol"
    )
}

/// What the numerical check saw after one pass.
#[pyclass(module = "hlo_opt", frozen, get_all)]
struct PassCheckInfo {
    name: String,
    changed: bool,
    /// How the pass was checked ("unchanged", "whole module", ...).
    how: String,
    outputs: Vec<Py<OutputCheck>>,
    /// Regions that could not be checked.
    unchecked: Vec<String>,
    /// The table the command line prints.
    table: String,
}

#[pymethods]
impl PassCheckInfo {
    #[new]
    fn new(
        name: String,
        changed: bool,
        how: String,
        outputs: Vec<Py<OutputCheck>>,
        unchecked: Vec<String>,
        table: String,
    ) -> Self {
        PassCheckInfo {
            name,
            changed,
            how,
            outputs,
            unchecked,
            table,
        }
    }

    fn __str__(&self) -> String {
        self.table.clone()
    }

    /// The table `--check-numerics` prints for the pass.
    fn __repr__(&self) -> String {
        self.table.trim_end().to_string()
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Reduced<'py>> {
        let s = slf.get();
        reduced(
            slf,
            (
                &s.name,
                s.changed,
                &s.how,
                &s.outputs,
                &s.unchecked,
                &s.table,
            ),
        )
    }

    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }
}

/// What `__reduce__` gives pickle: the class and its constructor's
/// arguments (the fields, in order).
type Reduced<'py> = (Bound<'py, PyType>, Bound<'py, PyTuple>);

fn reduced<'py, A>(slf: &Bound<'py, impl PyClass>, fields: A) -> PyResult<Reduced<'py>>
where
    A: IntoPyObject<'py, Target = PyTuple, Output = Bound<'py, PyTuple>>,
{
    let args = fields.into_pyobject(slf.py()).map_err(Into::into)?;
    Ok((slf.as_any().get_type(), args))
}

/// Every pass, in the registry's order.
#[pyfunction]
fn list_passes() -> Vec<PassInfo> {
    registry()
        .iter()
        .map(|p| PassInfo {
            name: p.name.to_string(),
            summary: p.summary.to_string(),
            default: p.order.is_some(),
        })
        .collect()
}

/// What the page and the graph of a run are drawn from: its record and
/// the module it made.
#[pyclass(module = "hlo_opt", frozen)]
struct RunDrawings {
    record: RunRecord,
    marks: graph_json::GraphMarks,
    /// The run's input, shared with the caller (frozen): no copy.
    input: Py<HloModule>,
    module: Module,
}

#[pymethods]
impl RunDrawings {
    /// The self-contained HTML page `--report-html` writes.
    fn html(&self, py: Python<'_>) -> PyResult<String> {
        py.detach(|| utf8(|w| self.record.write(w)))
            .map_err(|e| error(py, "HloOptError", e.to_string(), &[]))
    }

    /// The notebook's view: the page's table and its first `shown`
    /// rewrites, drawn before and after, in one self-styled `<div>`.
    fn notebook(&self, py: Python<'_>, shown: usize, id_prefix: &str) -> PyResult<String> {
        py.detach(|| utf8(|w| self.record.write_fragment(w, shown, id_prefix)))
            .map_err(|e| error(py, "HloOptError", e.to_string(), &[]))
    }

    /// The Model Explorer graph JSON `--emit-graph` writes.
    fn graph(&self, py: Python<'_>) -> PyResult<String> {
        let input = &self.input.get().inner;
        py.detach(|| utf8(|w| graph_json::write_graph(input, &self.module, &self.marks, w)))
            .map_err(|e| error(py, "HloOptError", e.to_string(), &[]))
    }

    /// The overlay `--emit-graph` writes beside the graph.
    fn overlay(&self, py: Python<'_>) -> PyResult<String> {
        let input = &self.input.get().inner;
        py.detach(|| utf8(|w| graph_json::write_overlay(input, &self.module, &self.marks, w)))
            .map_err(|e| error(py, "HloOptError", e.to_string(), &[]))
    }
}

/// What `write` writes, as a string.
fn utf8(
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> std::io::Result<String> {
    let mut bytes = Vec::new();
    write(&mut bytes)?;
    String::from_utf8(bytes).map_err(std::io::Error::other)
}

/// The Python face's callbacks: dumps staged into `dump_dir` (no signal
/// handler: Ctrl-C stays Python's), and Ctrl-C checked between passes.
struct PythonCallbacks<'a> {
    // Dropped in this order: the staged temporaries go before the dumps'
    // folder, which is removed if the run made it and it stayed empty.
    staged: Staged,
    dumps: DumpFiles,
    interrupts: &'a Interrupts,
}

impl driver_run::Callbacks for PythonCallbacks<'_> {
    fn dumps(&self) -> bool {
        !self.dumps.is_empty()
    }

    fn dump(&mut self, name: &str, module: &Module) -> Result<(), String> {
        self.dumps.stage(&mut self.staged, name, module)
    }

    fn after_pass(&mut self, run: &PassRun) -> Result<(), String> {
        self.interrupts
            .between_passes(run)
            .map_err(|e| e.to_string())
    }
}

/// The dump files of a run of `config` in `dir`, planned as the command
/// plans them; the folder is made.
fn plan_dumps(
    py: Python<'_>,
    dir: Option<&std::path::Path>,
    config: &RunConfig,
) -> PyResult<DumpFiles> {
    let fail = |message: String| error(py, "HloOptError", message, &[]);
    // The command refuses `--dump-dir ''`; here it would fill the
    // working folder.
    if dir.is_some_and(|d| d.as_os_str().is_empty()) {
        return Err(fail("dump_dir is empty; give a folder".to_string()));
    }
    let mut dumps =
        DumpFiles::plan(&mut OutputPlan::new(), "dump_dir", dir, config).map_err(fail)?;
    dumps.make_folder().map_err(fail)?;
    Ok(dumps)
}

/// Writes `text` to `path` as the command writes `--report-html`: through
/// a temporary beside it, renamed into place when complete; a link is
/// followed, a new file gets 0666 under the umask, an existing one keeps
/// its mode and owner, and an error names `path`.
#[pyfunction]
fn write_text(py: Python<'_>, path: std::path::PathBuf, text: &str, what: &str) -> PyResult<()> {
    let written = py.detach(|| -> Result<(), String> {
        let destination = Destination::new(what, &path, Links::Follow)
            .map_err(|e| format!("{}: error: {e}", path.display()))?;
        let mut staged = Staged::without_signal_handlers();
        staged.write(&destination, |f| {
            std::io::Write::write_all(f, text.as_bytes())
        })?;
        staged.commit()
    });
    written.map_err(|e| error(py, "HloOptError", e, &[]))
}

/// A run's outcome as the Python side wraps it: the module, each pass's
/// report, the numerics tables, and the drawings.
type RunResult = (HloModule, Vec<PassReport>, Vec<PassCheckInfo>, RunDrawings);

/// One run of the driver (`hlo_opt::driver::run`), as the command runs
/// it: contract checks, the passes, per-pass dumps into `dump_dir`, the
/// numeric check when asked, and the record of the page and the graph.
#[pyfunction]
#[pyo3(signature = (module, passes = None, all_computations = false, contract_checks = true, check_numerics = false, dump_dir = None, check_seed = 0, accept_unchecked = false, memory_limit = None, check_mode = None))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    module: &Bound<'_, HloModule>,
    passes: Option<&Bound<'_, PyAny>>,
    all_computations: bool,
    contract_checks: bool,
    check_numerics: bool,
    dump_dir: Option<std::path::PathBuf>,
    check_seed: u64,
    accept_unchecked: bool,
    memory_limit: Option<MemoryLimit>,
    check_mode: Option<String>,
) -> PyResult<RunResult> {
    let module_ref = module;
    let module = module_ref.get();
    let list = pass_list(passes)?;
    // "local" (each rewrite where it happened) or "full" (the whole
    // module's outputs too), as `--check-numerics[=full]`.
    let mode = match check_mode.as_deref() {
        None => hlo_opt::driver::check_numerics::CheckMode::default(),
        Some(m) => hlo_opt::driver::check_numerics::CheckMode::from_name(m).ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err(format!(
                "check_mode {m:?}: expected \"local\" or \"full\""
            ))
        })?,
    };
    pipeline(py, list.as_deref(), all_computations)?;
    let interrupts = Interrupts::new();
    let config = RunConfig {
        passes: list,
        all_computations,
        no_contract_checks: !contract_checks,
        check_numerics: if check_numerics {
            Some(CheckConfig {
                seed: check_seed,
                accept_unchecked,
                eval: interrupts.eval_options(),
                memory_budget: memory_budget(py, memory_limit)?,
                mode,
                ..CheckConfig::default()
            })
        } else {
            None
        },
        record: Some(module.inner.name.to_string()),
        // Names only; the graph's input is `module` itself.
        graph: true,
    };
    let mut callbacks = PythonCallbacks {
        staged: Staged::without_signal_handlers(),
        dumps: plan_dumps(py, dump_dir.as_deref(), &config)?,
        interrupts: &interrupts,
    };
    let input = module.inner.clone();
    let outcome = py.detach(|| driver_run::run(input, &config, &mut callbacks));
    // The dumps are written whatever the outcome, as the command's are.
    let committed = callbacks.staged.commit();
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(failure) => {
            if let Some(interrupt) = interrupts.raised() {
                return Err(interrupt);
            }
            return Err(run_error(py, &failure.error)?);
        }
    };
    committed.map_err(|e| error(py, "HloOptError", e, &[]))?;
    let reports = outcome
        .runs
        .iter()
        .map(|r| pass_report(py, r))
        .collect::<PyResult<_>>()?;
    let checks = outcome
        .checks
        .iter()
        .map(|c| pass_check(py, c))
        .collect::<PyResult<_>>()?;
    let drawings = RunDrawings {
        record: outcome.record.expect("asked for"),
        marks: outcome.graph.expect("asked for"),
        input: module_ref.clone().unbind(),
        module: outcome.module.clone(),
    };
    let mut out = HloModule {
        inner: outcome.module,
        from_proto: module.from_proto,
        signature: None,
    };
    // The frontend's map holds while the entry's parameters do (no pass
    // of ours changes them).
    if out.parameters() == module.parameters() {
        out.signature = module.signature.as_ref().map(|s| s.clone_ref(py));
    }
    Ok((out, reports, checks, drawings))
}

/// A failed run as the Python exception for it.
fn run_error(py: Python<'_>, e: &RunError) -> PyResult<PyErr> {
    Ok(match e {
        RunError::Pipeline(message) => error(py, "PassError", message.clone(), &[]),
        RunError::Contract(violations) => contract_error(py, violations)?,
        RunError::Pass(e) => pass_error(py, e),
        RunError::Numerics(CheckError::Pass(e)) => pass_error(py, e),
        RunError::Numerics(e) => {
            let pass = match e {
                CheckError::Eval { pass, .. } => pass.map(str::to_string),
                CheckError::Mismatch { pass, .. } => Some(pass.to_string()),
                _ => None,
            };
            error(
                py,
                "NumericsError",
                e.to_string(),
                &[("pass_name", py_obj(py, pass)?)],
            )
        }
    })
}

/// An input or output array as numpy sees it: type string, shape, bytes.
type RawArray = (String, Vec<usize>, Vec<u8>);

/// `memory_limit=`: bytes, or a size as the command line takes it (`"4G"`).
#[derive(FromPyObject)]
enum MemoryLimit {
    Bytes(u64),
    Text(String),
}

/// The budget `memory_limit` sets, or half of the memory available now.
fn memory_budget(py: Python<'_>, limit: Option<MemoryLimit>) -> PyResult<Budget> {
    const SETTER: &str = "memory_limit=";
    Ok(match limit {
        None => Budget::available(SETTER),
        Some(MemoryLimit::Bytes(b)) => Budget::given(b, SETTER),
        Some(MemoryLimit::Text(t)) => Budget::given(
            parse_size(&t)
                .map_err(|e| error(py, "HloOptError", format!("memory_limit: {e}"), &[]))?,
            SETTER,
        ),
    })
}

/// Evaluates the module on `inputs` (the entry's parameters in order, as
/// raw arrays) or on seeded random inputs; returns each output as
/// (HLO element type, raw array).
#[pyfunction]
#[pyo3(signature = (module, inputs = None, seed = 0, memory_limit = None))]
fn evaluate_raw(
    py: Python<'_>,
    module: &HloModule,
    inputs: Option<Vec<RawArray>>,
    seed: u64,
    memory_limit: Option<MemoryLimit>,
) -> PyResult<Vec<(String, RawArray)>> {
    let m = &module.inner;
    let eval_error = |message: String| error(py, "EvalError", message, &[]);
    // Before any input is converted or made: the evaluation, and its
    // outputs copied twice on their way to numpy.
    check_parameter_sizes(m).map_err(|e| eval_error(e.to_string()))?;
    let need = estimate(m);
    memory_budget(py, memory_limit)?
        .check(
            "the evaluation",
            need.peak.saturating_add(need.outputs.saturating_mul(2)),
            &need,
        )
        .map_err(|e| eval_error(e.to_string()))?;
    let args: Vec<Value> = match inputs {
        Some(raw) => {
            let entry = m.comp(m.entry());
            let params = entry.parameters();
            if raw.len() != params.len() {
                return Err(eval_error(format!(
                    "the module takes {} parameters, {} inputs given",
                    params.len(),
                    raw.len()
                )));
            }
            let mut args = Vec::with_capacity(raw.len());
            for (&p, (descr, shape, bytes)) in params.iter().zip(raw) {
                let instr = entry.instr(p);
                if instr.shape.is_tuple() {
                    return Err(eval_error(format!(
                        "parameter {} is a tuple: pass its elements' arrays instead",
                        instr.name
                    )));
                }
                let npy = NpyArray {
                    descr,
                    shape,
                    bytes,
                };
                let array = npy
                    .to_array(instr.shape.element_type(), None)
                    .map_err(|e| eval_error(format!("input {}: {e}", instr.name)))?;
                let want: Vec<usize> = instr
                    .shape
                    .dims()
                    .iter()
                    .map(|&d| usize::try_from(d).unwrap_or(usize::MAX))
                    .collect();
                if array.dims != want {
                    return Err(eval_error(format!(
                        "input {}: shape {:?}, the parameter is {}",
                        instr.name,
                        array.dims,
                        instr.shape.to_text(false)
                    )));
                }
                args.push(Value::array(array));
            }
            args
        }
        None => hlo_opt::interp::random::random_inputs(m, seed)
            .map_err(|e| eval_error(e.to_string()))?,
    };
    let interrupts = Interrupts::new();
    let options = interrupts.eval_options();
    let result = py
        .detach(|| hlo_opt::interp::evaluate_with(m, &args, &options))
        .map_err(|e| {
            interrupts
                .raised()
                .unwrap_or_else(|| eval_error(e.to_string()))
        })?;
    result
        .leaves()
        .iter()
        .map(|a| raw_output(a).map_err(|e| eval_error(e.to_string())))
        .collect()
}

fn raw_output(a: &Array) -> hlo_opt::interp::Result<(String, RawArray)> {
    let npy = NpyArray::from_array(a)?;
    Ok((a.ty.name().to_string(), (npy.descr, npy.shape, npy.bytes)))
}

/// The passes a `passes` argument names, as `--passes` would: `None` the
/// default pipeline, else a comma-separated string or a list of names.
fn pass_list(passes: Option<&Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    Ok(match passes {
        None => None,
        Some(p) if p.is_none() => None,
        Some(p) => match p.extract::<String>() {
            Ok(s) => Some(s),
            Err(_) => Some(
                p.extract::<Vec<String>>()
                    .map_err(|_| PyTypeError::new_err("passes: a str or a list of str"))?
                    .join(","),
            ),
        },
    })
}

/// The pipeline of [`pass_list`]'s names (`PassError` if one is unknown).
fn pipeline(
    py: Python<'_>,
    list: Option<&str>,
    all_computations: bool,
) -> PyResult<hlo_opt::passes::Pipeline> {
    hlo_opt::driver::pipeline(list, all_computations).map_err(|e| error(py, "PassError", e, &[]))
}

fn contract_error(py: Python<'_>, violations: &[Violation]) -> PyResult<PyErr> {
    let Some(first) = violations.first() else {
        return Ok(error(py, "ContractViolation", String::new(), &[]));
    };
    let all: Vec<String> = violations.iter().map(|v| v.to_string()).collect();
    Ok(error(
        py,
        "ContractViolation",
        first.to_string(),
        &[
            ("id", py_obj(py, first.check.code())?),
            ("cause", py_obj(py, first.cause.clone())?),
            ("resolution", py_obj(py, first.resolution.clone())?),
            ("computation", py_obj(py, first.computation.clone())?),
            ("instruction", py_obj(py, first.instruction.clone())?),
            ("violations", py_obj(py, all)?),
        ],
    ))
}

fn proto_error(py: Python<'_>, message: &str) -> PyErr {
    let message = format!("<proto>: error: {message}");
    error_with(py, "ParseError", message, || {
        Ok(vec![("file", py_obj(py, "<proto>")?)])
    })
}

/// `module` once the verifier accepts it; `text` (what it was parsed
/// from) gives a refusal its source line, as the command line shows it.
fn verified(py: Python<'_>, module: Module, file: &str, text: Option<&str>) -> PyResult<HloModule> {
    match verify(&module) {
        Ok(()) => Ok(HloModule {
            inner: module,
            from_proto: false,
            signature: None,
        }),
        Err(e) => Err(verify_error(py, &e, file, text)),
    }
}

fn verify_error(py: Python<'_>, e: &VerifyError, file: &str, text: Option<&str>) -> PyErr {
    let message = format!("invalid module: {e}");
    let Some(pos) = e.pos else {
        return error_with(
            py,
            "ParseError",
            format!("{file}: error: {message}"),
            || Ok(vec![("file", py_obj(py, file)?)]),
        );
    };
    let (line, column) = (pos.line as usize, pos.column as usize);
    let source_line = text.and_then(|t| t.split('\n').nth(line.checked_sub(1)?));
    match source_line {
        Some(source_line) => parse_error(
            py,
            &ParseError::new(file, line, column, message, source_line),
        ),
        None => error_with(
            py,
            "ParseError",
            format!("{file}:{line}:{column}: error: {message}"),
            || {
                Ok(vec![
                    ("file", py_obj(py, file)?),
                    ("line", py_obj(py, line)?),
                    ("column", py_obj(py, column)?),
                ])
            },
        ),
    }
}

/// A `ParseError` at the first character of `text` UTF-8 cannot hold (a
/// lone surrogate), from the `UnicodeEncodeError` encoding it raised.
fn not_utf8_error(
    py: Python<'_>,
    text: &Bound<'_, PyString>,
    file: &str,
    encode_error: PyErr,
) -> PyErr {
    let located = || -> PyResult<PyErr> {
        let start: usize = encode_error.value(py).getattr("start")?.extract()?;
        let bad = text.get_item(start)?;
        let code: u32 = py
            .import("builtins")?
            .getattr("ord")?
            .call1((bad,))?
            .extract()?;
        let lossy = lossy(text)?;
        let offset: usize = lossy.chars().take(start).map(char::len_utf8).sum();
        let message = format!(
            "U+{code:04X} is a lone surrogate, which UTF-8 cannot hold (HLO text is UTF-8)"
        );
        Ok(parse_error(
            py,
            &ParseError::at(file, &lossy, offset, message),
        ))
    };
    located().unwrap_or(encode_error)
}

/// `s` with each lone surrogate replaced by one U+FFFD (UTF-8's lossy
/// decoding would make three), so that characters count as Python's do.
fn lossy(s: &Bound<'_, PyString>) -> PyResult<String> {
    let utf16 = s.call_method1("encode", ("utf-16-le", "surrogatepass"))?;
    let units: Vec<u16> = utf16
        .cast::<PyBytes>()?
        .as_bytes()
        .chunks_exact(2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .collect();
    Ok(String::from_utf16_lossy(&units))
}

/// Python's signals (Ctrl-C) while the binding runs without the GIL. The
/// interpreter's cancel hook and the pipeline between passes ask
/// [`Interrupts::poll`], which takes the GIL at most every
/// [`SIGNAL_INTERVAL`] to run Python's signal handlers; the exception a
/// handler raised (`KeyboardInterrupt`) stops the run and is raised in
/// place of the run's own error.
struct Interrupts {
    state: Mutex<InterruptState>,
}

struct InterruptState {
    last_check: Instant,
    raised: Option<PyErr>,
}

/// How often the GIL is taken to check for signals: well under the second
/// a user waits after Ctrl-C, and rare enough to cost nothing.
const SIGNAL_INTERVAL: Duration = Duration::from_millis(50);

impl Interrupts {
    fn new() -> Arc<Interrupts> {
        Arc::new(Interrupts {
            state: Mutex::new(InterruptState {
                last_check: Instant::now(),
                raised: None,
            }),
        })
    }

    /// Whether a signal handler raised: then the run must stop.
    fn poll(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.raised.is_some() {
            return true;
        }
        if state.last_check.elapsed() < SIGNAL_INTERVAL {
            return false;
        }
        if let Err(e) = Python::attach(|py| py.check_signals()) {
            state.raised = Some(e);
            return true;
        }
        state.last_check = Instant::now();
        false
    }

    /// The interpreter's options, with [`Self::poll`] as its cancel hook.
    fn eval_options(self: &Arc<Self>) -> EvalOptions {
        let me = Arc::clone(self);
        EvalOptions {
            cancel: Some(Cancel::new(move || me.poll())),
            ..EvalOptions::default()
        }
    }

    /// Stops a pipeline after `run`'s pass when a signal handler raised.
    fn between_passes(&self, run: &PassRun) -> Result<(), PassError> {
        if self.poll() {
            return Err(PassError::After {
                pass: run.name,
                message: "interrupted".to_string(),
            });
        }
        Ok(())
    }

    /// The exception a signal handler raised, if one stopped the run.
    fn raised(&self) -> Option<PyErr> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.raised.take()
    }
}

fn parse_error(py: Python<'_>, e: &ParseError) -> PyErr {
    error_with(py, "ParseError", e.to_string(), || {
        Ok(vec![
            ("file", py_obj(py, e.file.clone())?),
            ("line", py_obj(py, e.line)?),
            ("column", py_obj(py, e.column)?),
            ("source_line", py_obj(py, e.source_line.clone())?),
        ])
    })
}

fn pass_error(py: Python<'_>, e: &PassError) -> PyErr {
    let (pass, instruction) = match e {
        PassError::BadInput {
            pass, instruction, ..
        } => (*pass, Some(instruction.clone())),
        PassError::Verifier { pass, error } => (*pass, error.instruction.clone()),
        PassError::Contract { pass, violations } => {
            (*pass, violations.first().map(|v| v.instruction.clone()))
        }
        PassError::After { pass, .. } => (*pass, None),
    };
    error_with(py, "PassError", e.to_string(), || {
        Ok(vec![
            ("pass_name", py_obj(py, pass)?),
            ("instruction", py_obj(py, instruction)?),
        ])
    })
}

/// `v` as a Python object.
fn py_obj<'py, T: IntoPyObject<'py>>(py: Python<'py>, v: T) -> PyResult<Py<PyAny>> {
    v.into_bound_py_any(py).map(Bound::unbind)
}

/// An exception of `hlo_opt.errors`: `class(message, **attrs)`.
fn error(py: Python<'_>, class: &str, message: String, attrs: &[(&str, Py<PyAny>)]) -> PyErr {
    let make = || -> PyResult<PyErr> {
        let cls = py.import("hlo_opt.errors")?.getattr(class)?;
        let kwargs = PyDict::new(py);
        for (k, v) in attrs {
            kwargs.set_item(k, v)?;
        }
        let value = cls.call((message.clone(),), Some(&kwargs))?;
        Ok(PyErr::from_value(value))
    };
    make().unwrap_or_else(|e| e)
}

/// [`error`] with attributes made by `attrs`; if one cannot be made, that
/// failure is the error instead.
fn error_with(
    py: Python<'_>,
    class: &str,
    message: String,
    attrs: impl FnOnce() -> PyResult<Vec<(&'static str, Py<PyAny>)>>,
) -> PyErr {
    match attrs() {
        Ok(attrs) => error(py, class, message, &attrs),
        Err(e) => e,
    }
}

fn pass_report(py: Python<'_>, r: &PassRun) -> PyResult<PassReport> {
    let entries = r
        .report
        .iter()
        .map(|e| {
            let (kind, computation, instruction, reason) = match e {
                ReportEntry::Rewrote {
                    computation,
                    instruction,
                    detail,
                } => ("rewrote", computation, instruction, detail),
                ReportEntry::Skipped {
                    computation,
                    instruction,
                    reason,
                } => ("skipped", computation, instruction, reason),
            };
            Py::new(
                py,
                ReportEntryInfo {
                    kind: kind.to_string(),
                    computation: computation.clone(),
                    instruction: instruction.clone(),
                    reason: reason.clone(),
                    text: e.to_string(),
                },
            )
        })
        .collect::<PyResult<_>>()?;
    Ok(PassReport {
        name: r.name.to_string(),
        changed: r.changed,
        time: r.elapsed.as_secs_f64(),
        entries,
    })
}

fn pass_check(py: Python<'_>, c: &PassCheck) -> PyResult<PassCheckInfo> {
    let outputs = c
        .rows
        .iter()
        .map(|r| {
            Py::new(
                py,
                OutputCheck {
                    name: r.name.clone(),
                    shape: r.shape.clone(),
                    max_abs: r.diff.max_abs,
                    max_rel: r.diff.max_rel,
                    tolerance: r.diff.tolerance,
                    ok: r.diff.ok(),
                    bound: r.diff.bound().map(|b| b.name().to_string()),
                    noise_floor: r.diff.noise_floor,
                },
            )
        })
        .collect::<PyResult<_>>()?;
    Ok(PassCheckInfo {
        name: c.pass.to_string(),
        changed: c.changed,
        how: c.how(),
        outputs,
        unchecked: c.unchecked.clone(),
        table: c.table(),
    })
}

/// The `hlo-opt` command, in this process (the package's console
/// script): `argv` as `sys.argv`, the program name first. Returns the exit
/// status; the command prints to the process's standard output and error.
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<std::ffi::OsString>) -> u8 {
    py.detach(|| hlo_opt::cli::main(argv))
}

#[pymodule]
fn _hlo_opt(m: &Bound<'_, pyo3::types::PyModule>) -> PyResult<()> {
    m.add_class::<HloModule>()?;
    m.add_class::<PassInfo>()?;
    m.add_class::<PassReport>()?;
    m.add_class::<ReportEntryInfo>()?;
    m.add_class::<PassCheckInfo>()?;
    m.add_class::<OutputCheck>()?;
    m.add_class::<RunDrawings>()?;
    m.add_function(wrap_pyfunction!(list_passes, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate_raw, m)?)?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(write_text, m)?)?;
    Ok(())
}
