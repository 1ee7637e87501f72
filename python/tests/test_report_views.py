"""`--report-html` in a real browser (headless Chromium: the rendered DOM,
no console errors, a screenshot kept under target/ci-artifacts/), and
`--emit-graph` read by Model Explorer's own Python graph classes.

`.ci/run` installs Chromium and sets HLO_OPT_BROWSER_TESTS=1, which makes a
missing browser a failure instead of a skip."""

import html
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("HLO_OPT_BIN", ROOT / "target" / "release" / "hlo-opt"))
ARTIFACTS = ROOT / "target" / "ci-artifacts"

CASES = {
    # A JAX softmax and its gradient: one forward, one backward raise.
    "softmax_vjp": ("examples/softmax_vjp_f32.hlo", ["mul.13", "divide"]),
    # A Flax BERT (two layers) train step: two forward, two backward.
    "flax_bert_train": (
        "tests/data/frontend/jax/flax_bert_train_f32.hlo",
        ["mul.261", "mul.301", "div.61", "div.75"],
    ),
    # A PyTorch/XLA two-layer transformer encoder (BERT-style) train step:
    # two forward and two backward softmaxes.
    "torch_encoder_train": (
        "tests/data/frontend/torch/torch_transformer_encoder_f32_train.hlo",
        ["multiply.618", "multiply.872", "divide.181", "divide.341"],
    ),
}


def hlo_opt(*args):
    if not BIN.exists():
        pytest.fail(f"{BIN} is not built (cargo build --release)")
    subprocess.run([str(BIN), *map(str, args)], check=True, capture_output=True)


def browser():
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if os.environ.get("HLO_OPT_BROWSER_TESTS") == "1":
            pytest.fail("chromium is not installed (apt-get install chromium)")
        pytest.skip("chromium is not installed")
    return path


def chromium(tmp_path, *args):
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
    ]
    return subprocess.run(
        [browser(), *flags, *args], capture_output=True, text=True, timeout=180
    )


class Dom(HTMLParser):
    """The entries of the rendered page: per entry, its drawings' node names."""

    def __init__(self):
        super().__init__()
        self.entries = {}
        self.scripts = 0
        self._entry = None
        self._figure = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script":
            self.scripts += 1
        if tag == "div" and "entry" in a.get("class", "").split():
            self._entry = a["data-instruction"]
            self.entries[self._entry] = {}
        if tag == "figure" and self._entry is not None:
            self._figure = a["class"]
            self.entries[self._entry][self._figure] = []
        if tag == "g" and self._figure is not None and "data-name" in a:
            self.entries[self._entry][self._figure].append(a["data-name"])

    def handle_endtag(self, tag):
        if tag == "figure":
            self._figure = None


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_page_renders_each_raise_in_chromium(case, tmp_path):
    source, raised = CASES[case]
    page = tmp_path / f"{case}.html"
    hlo_opt(ROOT / source, "--report-html", page, "-o", tmp_path / "out.hlo")
    dom = chromium(tmp_path, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr
    console = [l for l in dom.stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l]
    assert console == []
    parsed = Dom()
    parsed.feed(dom.stdout)
    assert parsed.scripts == 0
    for instr in raised:
        figures = parsed.entries[instr]
        assert set(figures) == {"before", "after"}, instr
        # The region starts at the rewritten instruction; after, a Neuron call.
        assert figures["before"][0] == instr
        assert any(n.startswith("Softmax") for n in figures["after"]), figures["after"]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / f"report-{case}.png"
    r = chromium(tmp_path, f"--screenshot={shot}", "--window-size=1400,2400", page.as_uri())
    assert r.returncode == 0, r.stderr
    assert shot.stat().st_size > 10_000


# Run in the page by Chromium: per drawing, its rendered size and the
# labels whose text leaves their box (or is not the node's whole name),
# written into the DOM for --dump-dom to carry out.
MEASURE = """<script>
const figures = [];
for (const svg of document.querySelectorAll('svg.graph')) {
  const box = svg.getBoundingClientRect();
  const cut = [];
  for (const g of svg.querySelectorAll('g.node')) {
    const r = g.querySelector('rect').getBBox();
    const label = g.querySelector('text.label');
    if (!g.classList.contains('folded') && label.textContent !== g.dataset.name) {
      cut.push(label.textContent);
    }
    for (const t of g.querySelectorAll('text')) {
      const b = t.getBBox();
      if (b.width === 0) continue;
      if (b.x < r.x || b.x + b.width > r.x + r.width || b.y < r.y || b.y + b.height > r.y + r.height) {
        cut.push(t.textContent);
      }
    }
  }
  figures.push({
    entry: svg.closest('.entry').dataset.instruction,
    figure: svg.closest('figure').className,
    width: box.width,
    height: box.height,
    nodes: svg.querySelectorAll('g.node').length,
    cut: cut,
  });
}
const out = document.createElement('pre');
out.id = 'measured';
out.textContent = JSON.stringify(figures);
document.body.appendChild(out);
</script>"""


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_label_is_whole_and_no_figure_is_wide(case, tmp_path):
    source, raised = CASES[case]
    page = tmp_path / f"{case}.html"
    hlo_opt(ROOT / source, "--report-html", page, "-o", tmp_path / "out.hlo")
    # The page has no script of its own: a copy gets the measuring one.
    measured_page = tmp_path / f"{case}-measured.html"
    measured_page.write_text(page.read_text().replace("</body>", MEASURE + "</body>"))
    dom = chromium(tmp_path, "--dump-dom", measured_page.as_uri())
    assert dom.returncode == 0, dom.stderr
    found = re.search(r'<pre id="measured">(.*?)</pre>', dom.stdout, re.S)
    assert found, dom.stdout[-2000:]
    figures = json.loads(html.unescape(found.group(1)))
    drawn = {f["entry"] for f in figures}
    assert set(raised) <= drawn
    for f in figures:
        assert f["nodes"] > 0 and f["height"] > 0, f
        assert f["cut"] == [], f
        # Readable on a screen: never more than twice as wide as tall.
        assert f["width"] <= 2 * f["height"], f


def test_the_graph_loads_in_model_explorers_classes(tmp_path):
    try:
        from model_explorer import graph_builder as gb
        from model_explorer import node_data_builder as ndb
    except ImportError:
        if os.environ.get("HLO_OPT_BROWSER_TESTS") == "1":
            pytest.fail("ai-edge-model-explorer is not installed")
        pytest.skip("ai-edge-model-explorer is not installed")
    source, raised = CASES["torch_encoder_train"]
    graph = tmp_path / "graph.json"
    hlo_opt(ROOT / source, "--emit-graph", graph, "-o", tmp_path / "out.hlo")
    data = json.loads(graph.read_text())

    from hlo_opt.model_explorer.main import to_graph_collection

    # Two graphs: the input (before) and the output (after).
    collection = to_graph_collection(data)
    before, g = collection.graphs
    for side in (before, g):
        ids = {n.id for n in side.nodes}
        assert len(ids) == len(side.nodes)
        assert all(e.sourceNodeId in ids for n in side.nodes for e in n.incomingEdges)
    ids = {n.id for n in g.nodes}
    marked = sorted(
        n.label for n in g.nodes if any(a.key == "hlo_opt_pass" for a in n.attrs)
    )
    assert marked == ["AwsNeuronSoftmax"] * 2 + ["AwsNeuronSoftmaxBackward"] * 2
    overlay = json.loads((tmp_path / "graph.overlay.json").read_text())
    model_data = ndb.ModelNodeData(
        graphsData={
            k: ndb.GraphNodeData(
                name=v["name"],
                results={n: ndb.NodeDataResult(**r) for n, r in v["results"].items()},
                showExpandedSummaryOnGroupNode=v["showExpandedSummaryOnGroupNode"],
            )
            for k, v in overlay.items()
        }
    )
    results = model_data.graphsData[g.id].results
    assert set(results) <= ids and len(results) == len(raised)
    assert set(model_data.graphsData[before.id].results) <= {n.id for n in before.nodes}
    # And Model Explorer's own writer takes it back.
    assert json.loads(model_data.to_json_string())[g.id]["results"].keys() == results.keys()
