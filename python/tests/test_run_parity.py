"""One run, two faces: `hlo_opt.run` and the command give the same
outputs for the same module and options (the page, the graph and its
overlay, the per-pass dumps, the module), both being `driver::run`."""

import copy
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest

import hlo_opt

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def command():
    return str(Path(sys.executable).parent / "hlo-opt")


def without_times(page: str) -> str:
    # The page shows each pass's time; nothing else differs between runs.
    return re.sub(r"\d+\.\d+ ms", "T ms", page)


@pytest.mark.parametrize("name", ["softmax_vjp_f32.hlo", "nrn_custom_calls_ffi.hlo"])
def test_python_gives_what_the_command_writes(tmp_path, name):
    path = EXAMPLES / name
    out = subprocess.run(
        [command(), str(path), "--report-html", "r.html", "--emit-graph", "g.json",
         "--dump-dir", "dumps", "-o", "out.hlo"],
        cwd=tmp_path, capture_output=True, text=True,
    )
    assert out.returncode == 0, out.stderr
    module = hlo_opt.Module.from_text(path.read_text(), str(path))
    legal, report = hlo_opt.run(module, dump_dir=tmp_path / "py-dumps")
    assert legal.to_text() == (tmp_path / "out.hlo").read_text()
    assert report.graph(as_text=True) == (tmp_path / "g.json").read_text()
    assert report.overlay(as_text=True) == (tmp_path / "g.overlay.json").read_text()
    # The page's title is the input's name: the file for the command, the
    # module's name for Python.
    page = without_times(report.html())
    assert "<svg" in page
    expected = without_times((tmp_path / "r.html").read_text())
    assert page.replace(module.name, "TITLE") == expected.replace(str(path), "TITLE")
    dumps = sorted(p.name for p in (tmp_path / "dumps").iterdir())
    assert dumps == sorted(p.name for p in (tmp_path / "py-dumps").iterdir())
    for d in dumps:
        assert (tmp_path / "py-dumps" / d).read_bytes() == (tmp_path / "dumps" / d).read_bytes()


def test_the_report_saves_copies_and_pickles(tmp_path):
    module = hlo_opt.Module.from_text((EXAMPLES / "softmax_vjp_f32.hlo").read_text())
    _, report = hlo_opt.run(module, check_numerics=True)
    assert [c.name for c in report.checks] == [p.name for p in report.passes]
    report.save_html(tmp_path / "r.html")
    assert (tmp_path / "r.html").read_text() == report.html()
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]
    for other in (copy.deepcopy(report), pickle.loads(pickle.dumps(report))):
        assert other.html() == report.html()
        assert other.graph() == report.graph()
        assert str(other) == str(report)
        assert len(other.checks) == len(report.checks)


def test_save_html_writes_as_the_command_writes_report_html(tmp_path):
    # It once wrote through Python's mkstemp: new files 0600, an existing
    # file's mode lost, a link replaced, and errors naming the temporary.
    import os
    import stat

    module = hlo_opt.Module.from_text((EXAMPLES / "softmax_vjp_f32.hlo").read_text())
    _, report = hlo_opt.run(module)
    old_umask = os.umask(0o022)
    try:
        report.save_html(tmp_path / "new.html")
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE((tmp_path / "new.html").stat().st_mode) == 0o644
    (tmp_path / "real").mkdir()
    kept = tmp_path / "real" / "page.html"
    kept.write_text("old")
    kept.chmod(0o664)
    (tmp_path / "link.html").symlink_to(kept)
    report.save_html(str(tmp_path / "link.html"))
    assert (tmp_path / "link.html").is_symlink()
    assert kept.read_text() == report.html()
    assert stat.S_IMODE(kept.stat().st_mode) == 0o664
    for bad, why in [(tmp_path / "missing" / "x.html", "does not exist"),
                     (tmp_path / "real", "is a folder")]:
        with pytest.raises(hlo_opt.HloOptError, match=why) as e:
            report.save_html(bad)
        assert str(bad) in str(e.value) and ".hlo-opt-" not in str(e.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.html", "new.html", "real"]
    assert [p.name for p in (tmp_path / "real").iterdir()] == ["page.html"]


def test_an_empty_dump_dir_is_refused(tmp_path, monkeypatch):
    # The command refuses `--dump-dir ''`; Python filled the working folder.
    monkeypatch.chdir(tmp_path)
    module = hlo_opt.Module.from_text((EXAMPLES / "softmax_vjp_f32.hlo").read_text())
    with pytest.raises(hlo_opt.HloOptError, match="dump_dir is empty"):
        hlo_opt.run(module, dump_dir="")
    assert list(tmp_path.iterdir()) == []


def test_a_contract_violation_is_raised_before_the_passes():
    # Any module whose Neuron call breaks its contract.
    bad = hlo_opt.Module.from_text(
        "HloModule m\n\nENTRY e {\n  x = f32[2,8] parameter(0)\n"
        "  ROOT s = f32[4,4] custom-call(x), custom_call_target=\"AwsNeuronSoftmax\"\n}\n"
    )
    with pytest.raises(hlo_opt.ContractViolation):
        hlo_opt.run(bad)
    legal, _ = hlo_opt.run(bad, contract_checks=False, passes=[])
    assert legal.to_text() == bad.to_text()


def test_jupyter_views_are_bounded_and_show_the_rewrites():
    module = hlo_opt.Module.from_text((EXAMPLES / "softmax_vjp_f32.hlo").read_text())
    view = module._repr_html_()
    assert module.name in view and "<table>" in view and "parameter" in view
    assert len(view) < 20_000
    legal, report = hlo_opt.run(module)
    assert "AwsNeuronSoftmax" in legal._repr_html_()
    assert legal.custom_call_targets == {"AwsNeuronSoftmax": 1, "AwsNeuronSoftmaxBackward": 1}
    assert sum(legal.opcode_counts.values()) == legal.instruction_count
    view = report._repr_html_()
    assert "native-to-custom-softmax" in view and "AwsNeuronSoftmaxBackward" in view
    # Each rewrite in its own block, drawn before and after side by side.
    blocks = view.split('<div class="entry rewrote"')[1:]
    assert len(blocks) == len(report.rewrote) == 2
    for block in blocks:
        figures = re.findall(r'<figure class="(\w+)"><figcaption>\w+</figcaption><svg', block)
        assert figures == ["before", "after"], figures
    # Styled on its own (only inside its div), arrows defined, nothing fetched.
    assert ".hlo-opt-report svg.graph" in view and "body {" not in view
    assert 'marker id="arrow"' in view
    assert not re.search(r'(src|href)="(https?:)?//', view)
    # Drawn once; a copy holds the drawing.
    assert report._repr_html_() is view
    assert copy.deepcopy(report)._repr_html_() == view
    # A report made by hand has only its text view.
    assert hlo_opt.Report(report.passes)._repr_html_() is None
    # Plain repr stays a terminal's one line.
    assert "\n" not in repr(legal)


def test_evaluate_takes_the_arrays_in_parameter_order():
    import numpy as np

    module = hlo_opt.Module.from_text((EXAMPLES / "softmax_vjp_f32.hlo").read_text())
    rng = np.random.default_rng(0)
    arrays = [
        rng.standard_normal(
            [int(d) for d in shape[shape.index("[") + 1 : shape.index("]")].split(",") if d],
            dtype=np.float32,
        )
        for _name, shape, _ty in module.parameters
    ]
    by_name = {name: a for (name, _s, _t), a in zip(module.parameters, arrays)}
    by_order = hlo_opt.evaluate(module, arrays)
    expected = hlo_opt.evaluate(module, by_name)
    assert by_order.keys() == expected.keys()
    for k in expected:
        assert np.array_equal(by_order[k], expected[k])
    assert hlo_opt.evaluate(module, tuple(arrays)).keys() == expected.keys()
    with pytest.raises(hlo_opt.EvalError, match="arrays given"):
        hlo_opt.evaluate(module, arrays[:-1])
