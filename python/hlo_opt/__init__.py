"""hlo_opt: parse, print, legalize for AWS Neuron and evaluate XLA HLO
modules. See docs/python.md."""

import json
import os
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _hlo_opt
from ._hlo_opt import (
    Module,
    OutputCheck,
    PassCheckInfo,
    PassInfo,
    PassReport,
    ReportEntryInfo,
    list_passes,
)
from ._jax import JaxSignature, from_jax, from_jax_lowered, parameters_for
from ._torch_xla import from_torch_xla, torch_xla_inputs
from .errors import (
    ContractViolation,
    EvalError,
    HloOptError,
    NumericsError,
    ParseError,
    PassError,
)

__all__ = [
    "Module",
    "Report",
    "PassReport",
    "ReportEntryInfo",
    "PassInfo",
    "PassCheckInfo",
    "OutputCheck",
    "list_passes",
    "run",
    "check_numerics",
    "evaluate",
    "from_jax",
    "from_jax_lowered",
    "from_torch_xla",
    "torch_xla_inputs",
    "JaxSignature",
    "HloOptError",
    "ParseError",
    "ContractViolation",
    "PassError",
    "NumericsError",
    "EvalError",
]

Passes = Union[None, str, Sequence[str]]


class Report:
    """What a pipeline run did: one ``PassReport`` per pass, in order; the
    numerics tables (``checks``) when the run proved its rewrites; and the
    page and graph the command writes (``html()``, ``graph()``,
    ``overlay()``)."""

    def __init__(
        self,
        passes: List[PassReport],
        checks: Optional[List[PassCheckInfo]] = None,
        drawings=None,
    ) -> None:
        self.passes = passes
        self.checks = checks or []
        # Drawn on demand; a copy or a pickle holds them drawn.
        self._drawings = drawings
        self._drawn: Dict[str, str] = {}

    def _drawn_text(self, what: str) -> str:
        if what not in self._drawn:
            if self._drawings is None:
                raise HloOptError("this report has no record of the run to draw")
            if what == "notebook":
                # Ids apart from any other report's in the same notebook.
                text = self._drawings.notebook(_REWRITES_SHOWN, f"r{id(self):x}-")
            else:
                text = getattr(self._drawings, what)()
            self._drawn[what] = text
        return self._drawn[what]

    def html(self) -> str:
        """The self-contained HTML page of ``--report-html``."""
        return self._drawn_text("html")

    def save_html(self, path) -> None:
        """Writes :meth:`html` to ``path`` as ``--report-html`` writes it:
        through a temporary file beside it, renamed into place when
        complete; a link is followed and an existing file keeps its mode."""
        _hlo_opt.write_text(path, self.html(), "save_html")

    def graph(self, as_text: bool = False):
        """The Model Explorer graph JSON of ``--emit-graph`` (a dict, or
        the text with ``as_text=True``)."""
        text = self._drawn_text("graph")
        return text if as_text else json.loads(text)

    def overlay(self, as_text: bool = False):
        """The node-data overlay ``--emit-graph`` writes beside the graph."""
        text = self._drawn_text("overlay")
        return text if as_text else json.loads(text)

    def _repr_html_(self) -> Optional[str]:
        """Jupyter's view: the pass table and, for each rewrite (the first
        few), its before and after drawings side by side, as the page
        draws them (inline SVG, no external resource). A report made by
        hand, with no record of a run, has only its text view."""
        if self._drawings is None and "notebook" not in self._drawn:
            return None
        return self._drawn_text("notebook")

    def __getstate__(self):
        if self._drawings is not None:
            for what in ("html", "graph", "overlay", "notebook"):
                self._drawn_text(what)
        return {"passes": self.passes, "checks": self.checks, "_drawn": dict(self._drawn)}

    def __setstate__(self, state) -> None:
        self.passes = state["passes"]
        self.checks = state["checks"]
        self._drawings = None
        self._drawn = state["_drawn"]

    @property
    def changed(self) -> bool:
        return any(p.changed for p in self.passes)

    @property
    def rewrote(self) -> List[ReportEntryInfo]:
        return [e for p in self.passes for e in p.entries if e.kind == "rewrote"]

    @property
    def skipped(self) -> List[ReportEntryInfo]:
        return [e for p in self.passes for e in p.entries if e.kind == "skipped"]

    def __str__(self) -> str:
        # As `hlo-opt --report` prints it.
        if not self.passes:
            return "no passes ran\n"
        lines = []
        for p in self.passes:
            state = "changed" if p.changed else "unchanged"
            lines.append(f"{p.name:<32} {state:<10} {p.time * 1e3:>10.3f} ms")
            lines.extend(f"    {e}" for e in p.entries)
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        return f"<Report {len(self.passes)} passes, {len(self.rewrote)} rewrites>"


def run(
    module: Module,
    passes: Passes = None,
    all_computations: bool = False,
    contract_checks: bool = True,
    check_numerics: bool = False,
    dump_dir=None,
    check_seed: int = 0,
    accept_unchecked: bool = False,
    memory_limit: Union[None, int, str] = None,
    check_mode: str = "local",
) -> Tuple[Module, Report]:
    """One run of the passes, as the command runs it (docs/python.md has
    each option's flag): Neuron's contract checks, the passes (default:
    the default pipeline) on a copy of ``module``, each pass's module
    dumped into ``dump_dir`` when given, and with ``check_numerics`` every
    rewrite proved by the interpreter (the tables in ``report.checks``):
    each where it happened, and with ``check_mode="full"`` the whole
    module's outputs after every pass too (``--check-numerics=full``).
    Returns the new module and the report."""
    out, reports, checks, drawings = _hlo_opt.run(
        module,
        _names(passes),
        all_computations,
        contract_checks,
        check_numerics,
        None if dump_dir is None else os.fspath(dump_dir),
        check_seed,
        accept_unchecked,
        memory_limit,
        check_mode,
    )
    return out, Report(reports, checks, drawings)


def check_numerics(
    module: Module,
    passes: Passes = None,
    seed: int = 0,
    all_computations: bool = False,
    accept_unchecked: bool = False,
    memory_limit: Union[None, int, str] = None,
    mode: str = "local",
) -> List[PassCheckInfo]:
    """Runs passes under the reference interpreter, checking every pass that
    changed the module against the module before the passes on seeded
    random inputs; returns each pass's table (``str()`` prints it).
    ``memory_limit`` (bytes, or a size such as ``"4G"``) bounds the memory
    the evaluations hold at once; by default half of what is available.
    The same as ``run(..., check_numerics=True)[1].checks``."""
    _, report = run(
        module,
        passes,
        all_computations=all_computations,
        check_numerics=True,
        check_seed=seed,
        accept_unchecked=accept_unchecked,
        memory_limit=memory_limit,
        check_mode=mode,
    )
    return report.checks


# Rewrites drawn inline in a notebook cell at most.
_REWRITES_SHOWN = 8


def _names(passes: Passes) -> Optional[Union[str, List[str]]]:
    if passes is None or isinstance(passes, str):
        return passes
    return list(passes)


# HLO element types numpy lacks, and their ml_dtypes names.
_ML_DTYPES = {
    "bf16": "bfloat16",
    "f8e4m3fn": "float8_e4m3fn",
    "f8e5m2": "float8_e5m2",
    "f8e4m3fnuz": "float8_e4m3fnuz",
    "f8e5m2fnuz": "float8_e5m2fnuz",
    "f8e4m3b11fnuz": "float8_e4m3b11fnuz",
    "f8e4m3": "float8_e4m3",
    "f8e3m4": "float8_e3m4",
    "f8e8m0fnu": "float8_e8m0fnu",
    "f4e2m1fn": "float4_e2m1fn",
    "s4": "int4",
    "u4": "uint4",
    "s2": "int2",
    "u2": "uint2",
}


def _ml_dtype(hlo_type: str) -> Optional[np.dtype]:
    name = _ML_DTYPES.get(hlo_type)
    if name is None:
        return None
    import ml_dtypes

    t = getattr(ml_dtypes, name, None)
    return None if t is None else np.dtype(t)


def _c_order(a: np.ndarray) -> np.ndarray:
    # Not np.ascontiguousarray, which makes a scalar an array of one.
    return a if a.flags.c_contiguous else a.copy(order="C")


def _raw_input(name: str, hlo_type: str, value: object) -> Tuple[str, List[int], bytes]:
    a = np.asarray(value)
    ml = _ml_dtype(hlo_type)
    if ml is not None:
        if a.dtype != ml:
            raise EvalError(f"input {name}: {a.dtype} given, {ml} ({hlo_type}) expected")
        # The interpreter reads these types' bits.
        storage = {1: np.uint8, 2: np.uint16}[ml.itemsize]
        if hlo_type in ("s4", "s2"):
            storage = np.int8
        a = _c_order(a).view(storage)
    a = _c_order(a)
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    return a.dtype.str, list(a.shape), a.tobytes()


def _array_output(hlo_type: str, descr: str, shape: List[int], data: bytes) -> np.ndarray:
    a = np.frombuffer(data, dtype=np.dtype(descr)).reshape(shape)
    ml = _ml_dtype(hlo_type)
    if ml is not None:
        a = a.view(ml)
    return a.copy()


def evaluate(
    module: Module,
    inputs: Union[None, Mapping[str, object], Sequence[object]] = None,
    seed: int = 0,
    memory_limit: Union[None, int, str] = None,
    *,
    kwargs: Optional[Mapping[str, object]] = None,
) -> Dict[str, np.ndarray]:
    """Evaluates ``module`` with the reference interpreter. ``inputs`` maps
    each entry parameter's name to an array of its type (bf16 and fp8 as
    ``ml_dtypes`` arrays); ``None`` uses seeded random inputs, as
    ``hlo-opt eval`` does. A sequence (list or tuple) gives the arrays in
    parameter order instead, so ``jax.tree_util.tree_leaves(args)`` goes
    straight in. For a module from :func:`from_jax` (or a run of one), a
    tuple of the function's own arguments works too, with ``kwargs`` its
    keyword arguments: ``evaluate(m, (x, params))`` computes ``fn(x,
    params)``. Returns the outputs (the leaves of the result)
    as ``out0``, ``out1``, ..., as ``hlo-opt eval -o`` names them.
    ``memory_limit`` (bytes, or a size such as ``"4G"``) bounds the memory
    the evaluation holds at once: a module needing more raises
    ``EvalError`` before it runs; by default half of what is available."""
    raw = None
    if isinstance(inputs, tuple) or kwargs is not None:
        as_arguments = parameters_for(module, inputs if inputs is not None else (), kwargs)
        if as_arguments is not None:
            inputs = as_arguments
    if inputs is not None and not isinstance(inputs, Mapping):
        if isinstance(inputs, (str, bytes)) or not isinstance(inputs, Sequence):
            raise EvalError("inputs: a mapping of parameter names, or a sequence in parameter order")
        params = module.parameters
        if len(inputs) != len(params):
            raise EvalError(
                f"inputs: the module takes {len(params)} parameters "
                f"({[p[0] for p in params]}), {len(inputs)} arrays given"
            )
        inputs = {name: value for (name, _shape, _ty), value in zip(params, inputs)}
    if inputs is not None:
        params = module.parameters
        names = [p[0] for p in params]
        unknown = sorted(set(inputs) - set(names))
        missing = [n for n in names if n not in inputs]
        if unknown or missing:
            raise EvalError(
                f"inputs: the parameters are {names}"
                + (f"; missing {missing}" if missing else "")
                + (f"; unknown {unknown}" if unknown else "")
            )
        raw = [_raw_input(n, ty, inputs[n]) for n, _shape, ty in params]
    outs = _hlo_opt.evaluate_raw(module, raw, seed, memory_limit)
    return {
        f"out{i}": _array_output(ty, descr, shape, data)
        for i, (ty, (descr, shape, data)) in enumerate(outs)
    }
