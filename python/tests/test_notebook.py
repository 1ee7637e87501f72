"""The example notebook, executed headless as a user's Jupyter would run
it (nbclient, a fresh kernel of this Python), and its cells' rich outputs
checked: the pass table, a before and an after drawing per rewrite, the
raised calls. Needs jax, nbclient and ipykernel (scripts/test installs
them)."""

import re
from pathlib import Path

import pytest

pytest.importorskip("jax")
nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "attention_block.ipynb"


def html_of(cell) -> str:
    return "".join(o.get("data", {}).get("text/html", "") for o in cell.get("outputs", []))


def text_of(cell) -> str:
    parts = []
    for o in cell.get("outputs", []):
        parts.append(o.get("text", ""))
        parts.append(o.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def test_the_example_notebook_shows_the_run(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=600, resources={"metadata": {"path": str(tmp_path)}}).execute()
    cells = {c.source.split("\n")[0]: c for c in nb.cells if c.cell_type == "code"}
    for cell in cells.values():
        assert not [o for o in cell.outputs if o.output_type == "error"], cell.source

    module_view = html_of(cells["module = hlo_opt.from_jax(jax.value_and_grad(loss), params, x)"])
    assert "<b>HloModule jit_" in module_view and "parameter" in module_view

    report_view = html_of(cells["legal, report = hlo_opt.run(module, check_numerics=True)"])
    assert '<table class="passes">' in report_view
    for name in ("native-to-custom-softmax", "native-to-custom-softmax-dx"):
        assert re.search(rf"<tr><td>{name}</td><td class=\"changed\">changed</td>", report_view), name
    rewrites = report_view.split('<div class="entry rewrote"')[1:]
    # One softmax, forward and backward: one rewrite by each raise.
    assert len(rewrites) == 2
    for block in rewrites:
        assert re.findall(r'<figure class="(\w+)"><figcaption>\w+</figcaption><svg', block) == ["before", "after"]
    assert "AwsNeuronSoftmaxBackward" in report_view

    legal_view = html_of(cells["legal"])
    assert "<code>AwsNeuronSoftmax</code>" in legal_view and "<code>AwsNeuronSoftmaxBackward</code>" in legal_view

    tables = text_of(cells["for check in report.checks:"])
    assert "check-numerics: pass native-to-custom-softmax" in tables and "FAIL" not in tables

    agreement = text_of(cells["value, grads = jax.value_and_grad(loss)(params, x)"])
    assert float(agreement.split("max difference from JAX:")[1]) < 1e-5

    page = (tmp_path / "attention_report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count('<div class="entry rewrote"') == 2
