"""The Python package against the repository's own data: round trips byte
for byte, every pass's goldens, the exceptions' fields, and evaluate
against the XLA:CPU refs."""

import json
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import hlo_opt

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
GOLDEN = ROOT / "tests" / "golden"

CORPUS = sorted(
    p for p in (DATA / "corpus").glob("*.hlo") if not p.name.endswith(".short.hlo")
)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_text_round_trip_is_byte_identical(path):
    text = path.read_text()
    assert hlo_opt.Module.from_text(text, str(path)).to_text() == text


@pytest.mark.parametrize("path", sorted((DATA / "corpus").glob("*.short.hlo")), ids=lambda p: p.name)
def test_short_form_round_trip(path):
    text = path.read_text()
    assert hlo_opt.Module.from_text(text).to_text(short=True) == text


@pytest.mark.parametrize("path", sorted((DATA / "corpus").glob("*.opt.pb")), ids=lambda p: p.name)
def test_proto_reads_as_the_command_reads_it(path):
    # `<case>.opt.from_pb.hlo` is what `hlo-opt --passes ''` prints of it.
    module = hlo_opt.Module.from_proto(path.read_bytes())
    expected = path.with_name(path.name.replace(".opt.pb", ".opt.from_pb.hlo"))
    assert module.to_text() == expected.read_text()
    again = hlo_opt.Module.from_proto(module.to_proto())
    assert again.to_text() == module.to_text()


def golden_cases():
    for d in sorted(p for p in GOLDEN.iterdir() if p.is_dir()):
        for case in sorted(d.glob("*.hlo")):
            if not case.name.endswith(".expected.hlo"):
                yield pytest.param(d.name, case, id=f"{d.name}/{case.name}")


@pytest.mark.parametrize("pass_name,case", list(golden_cases()))
def test_every_pass_matches_its_goldens(pass_name, case):
    text = case.read_text()
    module = hlo_opt.Module.from_text(text, str(case))
    out, report = hlo_opt.run(
        module,
        passes=[pass_name],
        all_computations=case.name.endswith(".all.hlo"),
        contract_checks=False,
    )
    expected = case.with_suffix(".expected.hlo").read_text()
    assert out.to_text() == expected
    [run] = report.passes
    assert run.name == pass_name
    assert run.changed == (expected != text)
    report_file = case.with_suffix(".report")
    lines = report_file.read_text().splitlines() if report_file.exists() else []
    assert [str(e) for e in run.entries] == lines
    for e in run.entries:
        assert e.kind in ("rewrote", "skipped")
        assert str(e).startswith(f"{e.kind} {e.computation}/{e.instruction}: {e.reason}"[:40])
    # The input module is left as it was.
    assert module.to_text() == text


def test_list_passes_is_the_registry():
    names = [p.name for p in hlo_opt.list_passes()]
    assert names[:2] == ["legalize-intrinsics", "legalize-softmax"]
    assert {d.name for d in GOLDEN.iterdir() if d.is_dir()} <= set(names)
    assert "dce" in names and not next(p for p in hlo_opt.list_passes() if p.name == "dce").default


def test_the_default_pipeline_raises_the_softmax_vjp():
    module = hlo_opt.Module.from_text((ROOT / "examples" / "softmax_vjp_f32.hlo").read_text())
    out, report = hlo_opt.run(module)
    assert report.changed
    assert [e.instruction for e in report.rewrote] == ["mul.13", "divide"]
    text = out.to_text()
    assert 'custom_call_target="AwsNeuronSoftmaxBackward"' in text
    assert 'custom_call_target="AwsNeuronSoftmax"' in text
    assert "native-to-custom-softmax" in str(report)


def test_parse_error_carries_file_line_and_column():
    bad = "HloModule m\n\nENTRY e {\n  ROOT a = f32[] bogus()\n}\n"
    with pytest.raises(hlo_opt.ParseError) as info:
        hlo_opt.Module.from_text(bad, "bad.hlo")
    e = info.value
    assert (e.file, e.line, e.column) == ("bad.hlo", 4, 18)
    assert e.source_line == "  ROOT a = f32[] bogus()"
    assert str(e).startswith("bad.hlo:4:18: error: ")
    assert isinstance(e, hlo_opt.HloOptError)


def test_an_invalid_module_is_a_parse_error_with_its_line():
    # Parses, but the verifier refuses it: a shape that does not match.
    bad = "HloModule m\n\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[3] negate(p)\n}\n"
    with pytest.raises(hlo_opt.ParseError) as info:
        hlo_opt.Module.from_text(bad, "bad.hlo")
    assert info.value.line == 5
    assert "invalid module" in str(info.value)


def test_a_bad_proto_is_a_parse_error():
    with pytest.raises(hlo_opt.ParseError) as info:
        hlo_opt.Module.from_proto(b"\x0a\xff\xff\xff")
    assert info.value.file == "<proto>"


INTEGER_TOPK = """HloModule m

ENTRY e {
  x = s32[8,64] parameter(0)
  ROOT t = (s32[8,5], u32[8,5]) custom-call(x), custom_call_target="AwsNeuronTopK", backend_config="5"
}
"""


def test_contract_violation_carries_its_id_cause_and_resolution():
    module = hlo_opt.Module.from_text(INTEGER_TOPK)
    with pytest.raises(hlo_opt.ContractViolation) as info:
        hlo_opt.run(module)
    e = info.value
    assert e.id == "HOC029"
    assert (e.computation, e.instruction) == ("e", "t")
    assert e.cause and e.resolution
    assert e.violations == [str(e)]
    # Without the checks, legalize-topk leaves it alone (CONTRACT.md 12).
    out, _ = hlo_opt.run(module, passes=["legalize-topk"], contract_checks=False)
    assert out.to_text() == module.to_text()


def test_unknown_pass_is_a_pass_error():
    module = hlo_opt.Module.from_text((ROOT / "examples" / "softmax_vjp_f32.hlo").read_text())
    with pytest.raises(hlo_opt.PassError, match="unknown pass 'nope'"):
        hlo_opt.run(module, passes="nope")


def test_a_pass_refusing_its_input_is_a_pass_error():
    path = DATA / "reliability" / "04-huge-last-dim-softmax-topk-abort" / "topk_2p40.hlo"
    module = hlo_opt.Module.from_text(path.read_text())
    with pytest.raises(hlo_opt.PassError) as info:
        hlo_opt.run(module, passes=["legalize-topk"], contract_checks=False)
    assert info.value.pass_name == "legalize-topk"
    assert info.value.instruction


def test_check_numerics_returns_a_table_per_pass():
    module = hlo_opt.Module.from_text((ROOT / "examples" / "softmax_vjp_f32.hlo").read_text())
    checks = hlo_opt.check_numerics(module, seed=1)
    assert [c.name for c in checks] == [p.name for p in hlo_opt.list_passes() if p.default]
    changed = [c for c in checks if c.changed]
    assert [c.name for c in changed] == ["native-to-custom-softmax-dx", "native-to-custom-softmax"]
    for c in changed:
        assert c.outputs and all(o.ok for o in c.outputs)
        assert c.name in str(c)


# Reference cases evaluated here: XLA:CPU computed their outputs.
REFS = sorted(p.stem for p in (DATA / "refs").glob("*.npz"))
ML_NAMES = {
    "bf16": "bfloat16",
    "f8e4m3fn": "float8_e4m3fn",
    "f8e5m2": "float8_e5m2",
    "f8e8m0fnu": "float8_e8m0fnu",
    "f4e2m1fn": "float4_e2m1fn",
}
TOLERANCE = {"float64": 1e-10, "float32": 1e-5, "float16": 2e-3, "bfloat16": 1e-2}
# As tests/interp_refs.rs: XLA:CPU rounds once where the HLO rounds twice.
SCALE = {"mha_fwd_bf16": 100.0}


def ref_arrays(case):
    z = np.load(DATA / "refs" / f"{case}.npz")
    sidecar = DATA / "refs" / f"{case}.json"
    types = json.loads(sidecar.read_text()) if sidecar.exists() else {}
    arrays = {}
    for k in z.files:
        a = z[k]
        if k in types:
            # What numpy cannot hold is stored as bits; the sidecar names
            # the HLO type.
            a = a.view(getattr(ml_dtypes, ML_NAMES[types[k]]))
        arrays[k] = a
    return arrays


@pytest.mark.parametrize("case", REFS)
def test_evaluate_matches_xla_refs(case):
    module = hlo_opt.Module.from_text((DATA / "corpus" / f"{case}.hlo").read_text())
    arrays = ref_arrays(case)
    inputs = {name: arrays[f"in{i}"] for i, (name, _, _) in enumerate(module.parameters)}
    got = hlo_opt.evaluate(module, inputs)
    outs = sorted((k for k in arrays if k.startswith("out")), key=lambda k: int(k[3:]))
    assert len(got) == len(outs)
    for k in outs:
        want, have = arrays[k], got[k]
        assert have.shape == want.shape, k
        assert have.dtype == want.dtype, k
        tol = TOLERANCE.get(str(want.dtype))
        if tol is None:
            np.testing.assert_array_equal(have, want)
            continue
        w = want.astype(np.float64)
        h = have.astype(np.float64)
        finite = np.isfinite(w)
        assert np.array_equal(finite, np.isfinite(h)), k
        scale = max(1.0, float(np.abs(w[finite]).max(initial=0.0)))
        err = float(np.abs(h[finite] - w[finite]).max(initial=0.0))
        assert err <= tol * SCALE.get(case, 1.0) * scale, (k, err)


def test_evaluate_before_and_after_the_pipeline_agree_on_bf16():
    module = hlo_opt.Module.from_text((DATA / "corpus" / "softmax_upcast_bf16.hlo").read_text())
    out, report = hlo_opt.run(module)
    assert report.changed
    rng = np.random.default_rng(0)
    inputs = {
        name: rng.standard_normal([int(d) for d in shape[shape.index("[") + 1 : -1].split(",")])
        .astype(ml_dtypes.bfloat16)
        for name, shape, ty in module.parameters
    }
    before = hlo_opt.evaluate(module, inputs)
    after = hlo_opt.evaluate(out, inputs)
    for k, v in before.items():
        assert v.dtype == ml_dtypes.bfloat16
        np.testing.assert_allclose(
            after[k].astype(np.float32), v.astype(np.float32), rtol=2e-2, atol=2e-2
        )


def test_evaluate_names_what_is_wrong_with_the_inputs():
    module = hlo_opt.Module.from_text((DATA / "corpus" / "softmax_upcast_bf16.hlo").read_text())
    (name, _, _), *_ = module.parameters
    with pytest.raises(hlo_opt.EvalError, match="missing"):
        hlo_opt.evaluate(module, {})
    with pytest.raises(hlo_opt.EvalError, match="bfloat16"):
        hlo_opt.evaluate(module, {p[0]: np.zeros((1,), np.float32) for p in module.parameters})


def test_the_docs_python_examples_run_as_is(tmp_path, monkeypatch, capsys):
    pytest.importorskip("jax")
    monkeypatch.chdir(tmp_path)
    doc = (ROOT / "docs" / "python.md").read_text()
    blocks = [b.split("```", 1)[0] for b in doc.split("```python\n")[1:]]
    assert blocks
    namespace = {}
    for k, code in enumerate(blocks):
        exec(compile(code, f"docs/python.md, python block {k + 1}", "exec"), namespace)
    printed = capsys.readouterr().out
    # What the page says the first example prints.
    assert "-> AwsNeuronSoftmaxBackward" in printed and "-> AwsNeuronSoftmax\n" in printed
    assert float(printed.split("max difference:")[1].split()[0]) < 1e-6
