"""hlo_opt: parse, print, legalize for AWS Neuron and evaluate XLA HLO
modules. See docs/python.md."""

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
    check_numerics as _check_numerics,
    list_passes,
)
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
    "HloOptError",
    "ParseError",
    "ContractViolation",
    "PassError",
    "NumericsError",
    "EvalError",
]

Passes = Union[None, str, Sequence[str]]


class Report:
    """What a pipeline run did: one ``PassReport`` per pass, in order."""

    def __init__(self, passes: List[PassReport]) -> None:
        self.passes = passes

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
) -> Tuple[Module, Report]:
    """Runs passes (default: the default pipeline) on a copy of ``module``,
    after Neuron's contract checks as the command does; returns the new
    module and the report."""
    out, reports = _hlo_opt.run(module, _names(passes), all_computations, contract_checks)
    return out, Report(reports)


def check_numerics(
    module: Module,
    passes: Passes = None,
    seed: int = 0,
    all_computations: bool = False,
    accept_unchecked: bool = False,
    memory_limit: Union[None, int, str] = None,
) -> List[PassCheckInfo]:
    """Runs passes under the reference interpreter, checking every pass that
    changed the module against the module before the passes on seeded
    random inputs; returns each pass's table (``str()`` prints it).
    ``memory_limit`` (bytes, or a size such as ``"4G"``) bounds the memory
    the evaluations hold at once; by default half of what is available."""
    return _check_numerics(
        module, _names(passes), seed, all_computations, accept_unchecked, memory_limit
    )


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
    inputs: Optional[Mapping[str, object]] = None,
    seed: int = 0,
    memory_limit: Union[None, int, str] = None,
) -> Dict[str, np.ndarray]:
    """Evaluates ``module`` with the reference interpreter. ``inputs`` maps
    each entry parameter's name to an array of its type (bf16 and fp8 as
    ``ml_dtypes`` arrays); ``None`` uses seeded random inputs, as
    ``hlo-opt eval`` does. Returns the outputs (the leaves of the result)
    as ``out0``, ``out1``, ..., as ``hlo-opt eval -o`` names them.
    ``memory_limit`` (bytes, or a size such as ``"4G"``) bounds the memory
    the evaluation holds at once: a module needing more raises
    ``EvalError`` before it runs; by default half of what is available."""
    raw = None
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
