"""hlo_opt.from_torch_xla: the ImportError naming torch_xla when it is
absent (always run: the import is blocked), and, where torch_xla is
installed, the module against torch-xla itself: every constant's value,
the parameters in the order of the device data, the numbers torch-xla
computes, and the very graph a sync compiles. CI has no torch_xla;
scripts/check_from_torch_xla.py makes a venv with the pinned one and runs
this file in it."""

import importlib.util
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import hlo_opt
from hlo_opt._torch_xla import from_torch_xla, torch_xla_inputs

INSTALL_HINT = r"needs torch_xla \(pip install torch-xla\)"


@pytest.mark.parametrize("function", [from_torch_xla, torch_xla_inputs], ids=lambda f: f.__name__)
def test_import_error_names_the_package(monkeypatch, function):
    # None in sys.modules makes `import torch_xla` raise, installed or not.
    monkeypatch.setitem(sys.modules, "torch_xla", None)
    with pytest.raises(ImportError, match=rf"^hlo_opt\.{function.__name__} {INSTALL_HINT}") as e:
        function([])
    assert e.value.name == "torch_xla"


def test_importing_the_module_needs_no_torch():
    code = (
        "import sys; sys.modules['torch'] = None; sys.modules['torch_xla'] = None; "
        "from hlo_opt._torch_xla import from_torch_xla"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


@pytest.fixture(scope="module")
def xla():
    if importlib.util.find_spec("torch_xla") is None:
        pytest.skip("torch_xla is not installed (scripts/check_from_torch_xla.py)")
    os.environ.setdefault("PJRT_DEVICE", "CPU")
    import torch
    import torch_xla

    return torch, torch_xla, torch_xla.device()


def test_a_large_constant_keeps_its_values(xla):
    torch, torch_xla, dev = xla
    torch.manual_seed(0)
    x = torch.randn(4096).to(dev)
    y = x + torch.arange(4096, device=dev)
    # torch-xla's text dump elides it: why the module is read from a proto.
    assert "s64[4096]{0} constant({...})" in torch_xla._XLAC._get_xla_tensors_hlo([y])

    module = from_torch_xla(y)
    inputs = torch_xla_inputs(y)
    text = module.to_text()
    constant = re.search(r"s64\[4096\]\{0\} constant\(\{([^}]*)\}\)", text)
    assert constant, text[:2000]
    assert constant.group(1) == ", ".join(map(str, range(4096)))
    assert [p[1] for p in module.parameters] == ["f32[4096]"]

    got = hlo_opt.evaluate(module, inputs)["out0"]
    np.testing.assert_array_equal(got, y.cpu().numpy())


def test_a_host_tensor_is_a_parameter_not_a_constant(xla):
    torch, _torch_xla_mod, dev = xla
    torch.manual_seed(1)
    x = torch.randn(12).to(dev)
    values = [float(i) - 5.5 for i in range(12)]
    c = torch.tensor(values, device=dev)  # copied to the device: data
    z = x * c

    module = from_torch_xla([z])
    inputs = torch_xla_inputs([z])
    assert "constant({" not in module.to_text()
    assert [p[1] for p in module.parameters] == ["f32[12]", "f32[12]"]
    assert any(np.array_equal(a, np.array(values, np.float32)) for a in inputs)
    np.testing.assert_array_equal(hlo_opt.evaluate(module, inputs)["out0"], z.cpu().numpy())


def test_parameters_are_the_graphs_device_data_in_order(xla):
    torch, torch_xla, dev = xla
    torch.manual_seed(2)
    linear = torch.nn.Linear(16, 8).to(dev)
    x = torch.randn(4, 16).to(dev)
    y = linear(x) * 2.5  # 2.5 is passed as device data, not a constant

    module = from_torch_xla(y)
    inputs = torch_xla_inputs(y)
    ids, _values = torch_xla._XLAC._get_tensors_xla_device_data_node([y])
    by_id = {torch_xla._XLAC._xla_get_tensor_id(t): t for t in (linear.weight, linear.bias, x)}
    assert set(by_id) <= set(ids)
    assert len(module.parameters) == len(inputs) == len(ids) == 4
    for (name, shape, _ty), value, tid in zip(module.parameters, inputs, ids):
        assert shape == "f32[%s]" % ",".join(map(str, value.shape)), name
        if tid in by_id:
            np.testing.assert_array_equal(value, by_id[tid].detach().cpu().numpy())
        else:
            assert value.shape == () and value == np.float32(2.5)

    got = hlo_opt.evaluate(module, inputs)["out0"]
    np.testing.assert_allclose(got, y.detach().cpu().numpy(), rtol=1e-6, atol=1e-6)


def test_outputs_come_in_the_order_given(xla):
    torch, _torch_xla_mod, dev = xla
    x = torch.randn(3, 5).to(dev)
    a, b = x.sum(0), x * 3
    module = from_torch_xla((b, a, b))
    outs = hlo_opt.evaluate(module, torch_xla_inputs((b, a, b)))
    np.testing.assert_array_equal(outs["out0"], b.cpu().numpy())
    np.testing.assert_allclose(outs["out1"], a.cpu().numpy(), rtol=1e-6)
    np.testing.assert_array_equal(outs["out2"], outs["out0"])


def test_bf16_inputs_come_as_ml_dtypes(xla):
    torch, _torch_xla_mod, dev = xla
    import ml_dtypes

    w = torch.randn(8, dtype=torch.bfloat16).to(dev)
    y = w * 3
    inputs = torch_xla_inputs(y)
    assert ml_dtypes.bfloat16 in [a.dtype for a in inputs]
    got = hlo_opt.evaluate(from_torch_xla(y), inputs)["out0"]
    assert got.dtype == ml_dtypes.bfloat16
    want = y.cpu().view(torch.int16).numpy()
    np.testing.assert_array_equal(got.view(np.int16), want)


def test_random_numbers_come_from_the_seed_parameter(xla):
    # torch.rand on the device reads torch-xla's seed as device data (an
    # s64 parameter); the interpreter's rng-bit-generator gives XLA's bits.
    torch, _torch_xla_mod, dev = xla
    x = torch.randn(5).to(dev)
    r = torch.rand(1000, device=dev) + x[:1]
    module = from_torch_xla(r)
    inputs = torch_xla_inputs(r)
    assert "s64[]" in [p[1] for p in module.parameters]
    assert "rng-bit-generator" in module.opcode_counts
    np.testing.assert_array_equal(hlo_opt.evaluate(module, inputs)["out0"], r.cpu().numpy())

def test_a_softmax_model_is_raised(xla):
    torch, _torch_xla_mod, dev = xla
    torch.manual_seed(3)
    linear = torch.nn.Linear(32, 16).to(dev)
    x = torch.randn(4, 32).to(dev)
    y = torch.nn.functional.softmax(linear(x), dim=-1)

    module = from_torch_xla(y)
    inputs = torch_xla_inputs(y)
    raised, report = hlo_opt.run(module, check_numerics=True)
    assert raised.custom_call_targets == {"AwsNeuronSoftmax": 1}
    assert [e.instruction for e in report.rewrote] and report.checks
    want = y.detach().cpu().numpy()
    for m in (module, raised):
        np.testing.assert_allclose(hlo_opt.evaluate(m, inputs)["out0"], want, rtol=1e-5, atol=1e-7)


def test_the_module_is_the_graph_a_sync_compiles(xla, tmp_path):
    # XLA's own dump of what torch_xla.sync() compiles (before XLA's
    # optimizations, constants printed whole) against our module: the same
    # but for the module's name. XLA_FLAGS is read once per process.
    ours = tmp_path / "ours.pb"
    code = textwrap.dedent(
        f"""
        import torch, torch_xla
        from hlo_opt._torch_xla import from_torch_xla
        dev = torch_xla.device()
        x = torch.randn(4096).to(dev)
        torch_xla.sync()
        y = torch.softmax((x + torch.arange(4096, device=dev)).reshape(64, 64) * 0.5, -1)
        open({str(ours)!r}, "wb").write(from_torch_xla(y).to_proto())
        torch_xla.sync()
        """
    )
    dump = tmp_path / "dump"
    env = dict(
        os.environ,
        PJRT_DEVICE="CPU",
        XLA_FLAGS=f"--xla_dump_to={dump} --xla_dump_hlo_as_text --xla_dump_large_constants",
    )
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-3000:]
    compiled = sorted(dump.glob("*SyncTensorsGraph*.before_optimizations.txt"))
    assert len(compiled) == 1, [c.name for c in compiled]
    theirs = hlo_opt.Module.from_text(compiled[0].read_text(), str(compiled[0]))
    ours_module = hlo_opt.Module.from_proto(ours.read_bytes())
    assert "constant({0, 1, 2" in theirs.to_text()
    assert ours_module.to_text().replace(ours_module.name, "M") == theirs.to_text().replace(theirs.name, "M")


def test_tensors_torch_xla_would_drop_or_not_compile_are_refused(xla):
    torch, torch_xla, dev = xla
    x = torch.randn(3).to(dev)
    y = x + 1
    with pytest.raises(ValueError, match=r"tensors\[1\] is on cpu, not an XLA device"):
        from_torch_xla([y, torch.ones(3)])
    with pytest.raises(ValueError, match="no tensors given"):
        from_torch_xla([])
    with pytest.raises(TypeError, match=r"tensors\[0\] is not a torch tensor \(int\)"):
        from_torch_xla([3])
    with pytest.raises(TypeError, match="not dict"):
        from_torch_xla({"y": y})
    torch_xla.sync()
    with pytest.raises(ValueError, match="already computed"):
        from_torch_xla([y, x])

