"""From JAX to a Module in one call. JAX is not a dependency of hlo_opt:
it is imported when these are called."""

from typing import Any, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ._hlo_opt import Module
from .errors import EvalError


def _import_jax(caller: str):
    try:
        import jax
    except ImportError as e:
        raise ImportError(
            f"hlo_opt.{caller} needs jax, which is not installed "
            "(pip install jax; hlo_opt itself does not depend on it)"
        ) from e
    return jax


class JaxSignature:
    """How the arguments of the function ``from_jax`` lowered become the
    module's parameters: JAX flattens ``(args, kwargs)`` into leaves
    (``in_tree``), and the leaves listed in ``kept`` become the entry's
    parameters, in order. ``out_tree`` is the structure of the result.
    ``evaluate`` uses it to take the arguments the function took."""

    def __init__(self, in_tree, kept: Sequence[int], dtypes: Sequence[Any], out_tree) -> None:
        self.in_tree = in_tree
        self.kept = tuple(kept)
        # Each leaf's dtype, so that a Python scalar argument becomes an
        # array of the type JAX gave its parameter.
        self.dtypes = tuple(np.dtype(d) for d in dtypes)
        self.out_tree = out_tree

    def parameters_of(self, args: tuple, kwargs: Mapping[str, Any]) -> Optional[List[Any]]:
        """The parameter values for ``fn(*args, **kwargs)``, or ``None``
        when ``(args, kwargs)`` is not of the structure lowered."""
        jax = _import_jax("evaluate")
        leaves, tree = jax.tree_util.tree_flatten((tuple(args), dict(kwargs)))
        if tree != self.in_tree:
            return None
        return [_as_array(leaves[i], self.dtypes[i]) for i in self.kept]

    def __repr__(self) -> str:
        return f"JaxSignature({self.in_tree}, {len(self.kept)} parameters)"


def _as_array(leaf, dtype: np.dtype):
    # A Python number is weakly typed in JAX: it takes its parameter's
    # type. An array keeps its own (a wrong one is an error, not a cast).
    if isinstance(leaf, (bool, int, float, complex)):
        return np.asarray(leaf, dtype=dtype)
    return np.asarray(leaf)


def from_jax(fn, *args, **kwargs) -> Module:
    """The module JAX hands XLA for ``fn(*args, **kwargs)``: lowered with
    ``jax.jit(fn, keep_unused=True).lower(*args, **kwargs)`` (a function
    already jitted is lowered as it is, with its own options), read as the
    ``HloModuleProto`` (every constant's value and each instruction's
    ``op_name`` kept). The module records the arguments' structure, so
    ``evaluate(module, args)`` takes what ``fn`` took."""
    jax = _import_jax("from_jax")
    jitted = fn if hasattr(fn, "lower") else jax.jit(fn, keep_unused=True)
    return from_jax_lowered(jitted.lower(*args, **kwargs))


def from_jax_lowered(lowered) -> Module:
    """The module of a ``jax.jit(...).lower(...)`` result (a
    ``jax.stages.Lowered``), as :func:`from_jax` reads it."""
    _import_jax("from_jax_lowered")
    proto = lowered.compiler_ir("hlo").as_serialized_hlo_module_proto()
    signature = _signature(lowered)
    # Arguments packed into one tuple parameter (or any other layout than
    # a parameter per kept leaf) leave the module without the map.
    return Module._from_proto_with_signature(proto, signature, len(signature.kept))


def _signature(lowered) -> JaxSignature:
    jax = _import_jax("from_jax_lowered")
    leaves = jax.tree_util.tree_leaves(lowered.args_info)
    kept = _kept_leaves(lowered, len(leaves))
    dtypes = [leaf._aval.dtype if hasattr(leaf, "_aval") else leaf.dtype for leaf in leaves]
    return JaxSignature(lowered.in_tree, kept, dtypes, lowered.out_tree)


def _kept_leaves(lowered, count: int) -> Tuple[int, ...]:
    # jit drops unused arguments unless keep_unused=True; which it kept is
    # only in the lowering's compile arguments. That is not a public API:
    # without it every leaf is taken as kept, and from_jax_lowered keeps
    # the map only if the parameters are as many.
    try:
        kept = sorted(lowered._lowering.compile_args["kept_var_idx"])
    except (AttributeError, KeyError, TypeError):
        kept = range(count)
    return tuple(i for i in kept if 0 <= i < count)


def parameters_for(module: Module, inputs: tuple, kwargs: Optional[Mapping[str, Any]]):
    """``evaluate``'s inputs for a module from ``from_jax`` given the
    function's arguments; ``None`` when ``inputs`` is not of their shape
    (then it is read as the parameters in order)."""
    signature = module._signature
    if signature is None:
        if kwargs:
            raise EvalError("kwargs: only a module from hlo_opt.from_jax takes the function's arguments")
        return None
    values = signature.parameters_of(inputs, kwargs or {})
    if values is None and kwargs:
        jax = _import_jax("evaluate")
        _, given = jax.tree_util.tree_flatten((tuple(inputs), dict(kwargs)))
        raise EvalError(f"inputs: the function was lowered for {signature.in_tree}, given {given}")
    return values
