"""From JAX in one call: `from_jax`, `from_jax_lowered`, and `evaluate`
taking the function's own arguments. CI installs jax (CPU); without it
only the ImportError test runs."""

import pickle
import sys

import numpy as np
import pytest

import hlo_opt


def test_without_jax_the_error_names_the_package(monkeypatch):
    # A None entry makes `import jax` raise ImportError, jax installed or not.
    monkeypatch.setitem(sys.modules, "jax", None)
    for call in (lambda: hlo_opt.from_jax(lambda x: x, 1.0), lambda: hlo_opt.from_jax_lowered(None)):
        with pytest.raises(ImportError, match=r"needs jax.*pip install jax"):
            call()


jax = pytest.importorskip("jax")
jnp = jax.numpy

# A constant of more than 10 elements: XLA's text printer elides those.
TABLE = np.random.default_rng(1).standard_normal((8, 8)).astype(np.float32)


def attention(x, params, scale=0.125):
    q = x @ params["wq"]
    k = x @ params["wk"]
    weights = jax.nn.softmax((q @ k.T) * scale + TABLE, axis=-1)
    return {"out": weights @ x, "total": weights.sum()}


def arguments():
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((8, 16)), jnp.float32)
    params = {
        "wq": jnp.asarray(rng.standard_normal((16, 16)) * 0.1, jnp.float32),
        "wk": jnp.asarray(rng.standard_normal((16, 16)) * 0.1, jnp.float32),
        "unused": jnp.ones(3, jnp.float32),
    }
    return x, params


def close(got, want):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-6, atol=2e-6)


def test_from_jax_keeps_every_argument_and_constant():
    x, params = arguments()
    module = hlo_opt.from_jax(attention, x, params, scale=0.25)
    # keep_unused: one parameter per leaf, the unused one too.
    assert [p[1] for p in module.parameters] == ["f32[8,16]", "f32[3]", "f32[16,16]", "f32[16,16]", "f32[]"]
    assert "{...}" not in module.to_text()
    # Read from the proto, op_name metadata included.
    assert 'op_name="jit(attention)/' in module.to_text()
    out = hlo_opt.evaluate(module, (x, params), kwargs={"scale": 0.25})
    want = attention(x, params, scale=0.25)
    # The result's leaves, in tree order: "out", then "total".
    close(out["out0"], want["out"])
    close(out["out1"], want["total"])


def test_the_raised_module_takes_the_same_arguments():
    x, params = arguments()
    module = hlo_opt.from_jax(attention, x, params)
    legal, report = hlo_opt.run(module, check_numerics=True)
    assert legal.custom_call_targets == {"AwsNeuronSoftmax": 1}
    assert [e.instruction for e in report.rewrote] and all(c.outputs or not c.changed for c in report.checks)
    before = hlo_opt.evaluate(module, (x, params))
    after = hlo_opt.evaluate(legal, (x, params))
    close(after["out0"], before["out0"])
    # Through pickle too.
    again = pickle.loads(pickle.dumps(legal))
    assert again._signature is not None
    close(hlo_opt.evaluate(again, (x, params))["out1"], after["out1"])


def test_leaves_in_parameter_order_still_work():
    x, params = arguments()
    module = hlo_opt.from_jax(attention, x, params)
    leaves = jax.tree_util.tree_leaves(((x, params), {}))
    close(hlo_opt.evaluate(module, leaves)["out1"], attention(x, params)["total"])


def test_a_python_number_takes_its_parameters_type():
    def f(x, s):
        return x * s

    module = hlo_opt.from_jax(f, jnp.ones(4, jnp.bfloat16), 3.0)
    # JAX gives a Python float a (weakly typed) f32 parameter; numpy's
    # would be f64, which evaluate refuses for an array.
    assert module.parameters[1][2] == "f32"
    out = hlo_opt.evaluate(module, (jnp.ones(4, jnp.bfloat16), 3.0))["out0"]
    assert out.dtype == jnp.bfloat16 and float(out[0]) == 3.0


def test_arguments_of_another_structure_are_refused():
    x, params = arguments()
    module = hlo_opt.from_jax(attention, x, params, scale=0.25)
    with pytest.raises(hlo_opt.EvalError, match="lowered for PyTreeDef"):
        hlo_opt.evaluate(module, (x,), kwargs={"scale": 0.25})
    # A tuple of another structure and no kwargs: read as the parameters
    # in order, and refused for its count.
    with pytest.raises(hlo_opt.EvalError, match="takes 5 parameters"):
        hlo_opt.evaluate(module, (x, x))
    plain = hlo_opt.Module.from_text(module.to_text())
    with pytest.raises(hlo_opt.EvalError, match="only a module from hlo_opt.from_jax"):
        hlo_opt.evaluate(plain, (x,), kwargs={"scale": 0.25})


def test_from_jax_lowered_keeps_the_users_options():
    def f(x, n, unused):
        return jnp.tile(x, n)

    lowered = jax.jit(f, static_argnums=1).lower(jnp.arange(3.0), 2, jnp.ones(5))
    module = hlo_opt.from_jax_lowered(lowered)
    # jit dropped the unused argument and the static one is no parameter.
    assert [p[1] for p in module.parameters] == ["f32[3]"]
    out = hlo_opt.evaluate(module, [np.arange(3, dtype=np.float32)])["out0"]
    assert out.tolist() == [0, 1, 2, 0, 1, 2]
    # A jitted function goes through from_jax as it is.
    assert hlo_opt.from_jax(jax.jit(f, static_argnums=1), jnp.arange(3.0), 2, jnp.ones(5)).parameters == module.parameters


def test_check_tables_print_as_tables():
    x, params = arguments()
    _, report = hlo_opt.run(hlo_opt.from_jax(attention, x, params), check_numerics=True)
    changed = [c for c in report.checks if c.changed]
    assert changed
    table = repr(changed[0])
    assert table.splitlines()[0].startswith("check-numerics: pass native-to-custom-softmax")
    assert "max rel err" in table and "rtol" in table
    row = repr(changed[0].outputs[0])
    heading, line = row.splitlines()
    assert heading.split() == ["output", "shape", "max", "abs", "err", "max", "rel", "err", "rtol", "result"]
    # Each rewrite is checked where it happened (issue 31): the row is
    # named by the instruction the pass's report names.
    assert line.split()[0] in {e.instruction for e in report.rewrote} and line.split()[-1] == "ok"
    assert changed[0].outputs[0].bound == "rtol*max|want|"
