"""From PyTorch/XLA: the HLO torch-xla would compile for lazy tensors, every
constant with its value. torch and torch_xla are imported only when called:
neither is a dependency of hlo_opt.

The module is read from the ``HloModuleProto`` torch-xla serializes
(``torch_xla._XLAC._get_xla_tensors_hlo_proto``), not from the text of
``_get_xla_tensors_hlo``: that text is XLA's ``HloModule::ToString``, which
prints a constant of more than 10 elements as ``{...}``; a proto never
elides. See docs/python.md."""

from typing import List, Sequence

from ._hlo_opt import Module
from .errors import HloOptError

_INSTALL = "pip install torch-xla"


def _import_torch_xla(function: str):
    try:
        import torch
        import torch_xla
    except ImportError as e:
        raise ImportError(
            f"hlo_opt.{function} needs torch_xla ({_INSTALL}); importing it failed: {e}",
            name="torch_xla",
        ) from e
    return torch, torch_xla._XLAC


def _xla_tensors(torch, tensors, function: str) -> List:
    if isinstance(tensors, torch.Tensor):
        return [tensors]
    if isinstance(tensors, (str, bytes)) or not isinstance(tensors, Sequence):
        raise TypeError(
            f"hlo_opt.{function}: a torch tensor or a sequence of them, "
            f"not {type(tensors).__name__}"
        )
    if not tensors:
        raise ValueError(f"hlo_opt.{function}: no tensors given")
    for i, t in enumerate(tensors):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"hlo_opt.{function}: tensors[{i}] is not a torch tensor ({type(t).__name__})")
        # torch-xla leaves a tensor of another device out of the module
        # without a word, which would shift every later output.
        if t.device.type != "xla":
            raise ValueError(
                f"hlo_opt.{function}: tensors[{i}] is on {t.device}, not an XLA device "
                "(make it with device=torch_xla.device() or .to(torch_xla.device()))"
            )
    return list(tensors)


def from_torch_xla(tensors) -> Module:
    """The HLO module torch-xla would compile to compute ``tensors`` (one
    lazy XLA tensor or a sequence of them), with every constant's value.

    Its result is a tuple of the tensors, in the order given. Its entry
    parameters are the device data the graph reads (the tensors it starts
    from, and the scalars torch-xla passes as data rather than constants),
    in the order of :func:`torch_xla_inputs`, which gives their values.
    Nothing runs on the device and the tensors stay lazy."""
    torch, xlac = _import_torch_xla("from_torch_xla")
    tensors = _xla_tensors(torch, tensors, "from_torch_xla")
    if not any(xlac._check_tensor_need_materialization(tensors)):
        # Their module would only pass device data through: most often the
        # graph ran already (a sync, .cpu(), .item() or print).
        raise ValueError(
            "hlo_opt.from_torch_xla: every tensor is already computed (device data), "
            "torch-xla would compile nothing for them; call it before torch_xla.sync(), "
            ".cpu(), .item() or printing them"
        )
    proto = xlac._get_xla_tensors_hlo_proto(tensors)
    if not proto:
        raise HloOptError("hlo_opt.from_torch_xla: torch-xla gave no HLO for these tensors")
    return Module.from_proto(bytes(proto))


def torch_xla_inputs(tensors) -> list:
    """The values of the entry parameters of ``from_torch_xla(tensors)``,
    in parameter order, as numpy arrays (bf16 and fp8 as ``ml_dtypes``
    arrays): ``evaluate(module, torch_xla_inputs(tensors))`` computes what
    torch-xla computes. torch-xla's ``_get_tensors_xla_device_data_node``
    lists them; it is what its dynamo bridge feeds the compiled graph.
    Copies each value to the host; the tensors stay lazy."""
    torch, xlac = _import_torch_xla("torch_xla_inputs")
    tensors = _xla_tensors(torch, tensors, "torch_xla_inputs")
    _ids, values = xlac._get_tensors_xla_device_data_node(tensors)
    return [_to_numpy(torch, v) for v in values]


# torch dtypes numpy lacks: the ml_dtypes type and the same-width integer
# torch can view them as.
_ML_DTYPES = {
    "bfloat16": ("bfloat16", "int16"),
    "float8_e4m3fn": ("float8_e4m3fn", "uint8"),
    "float8_e5m2": ("float8_e5m2", "uint8"),
    "float8_e4m3fnuz": ("float8_e4m3fnuz", "uint8"),
    "float8_e5m2fnuz": ("float8_e5m2fnuz", "uint8"),
}


def _to_numpy(torch, tensor):
    t = tensor.detach().cpu()
    ml = _ML_DTYPES.get(str(t.dtype).replace("torch.", ""))
    if ml is None:
        return t.numpy()
    import ml_dtypes

    ml_name, storage = ml
    return t.view(getattr(torch, storage)).numpy().view(getattr(ml_dtypes, ml_name))


__all__ = ["from_torch_xla", "torch_xla_inputs"]
