"""The Model Explorer extension (`--extensions=hlo_opt.model_explorer`):
its adapter's convert entry, called as Model Explorer's extension manager
calls it, on a Flax train step and a PyTorch/XLA train step written with
their metadata (tests/data/frontend/debuginfo, scripts/gen_debuginfo_models.py),
and the graphs it returns checked against Model Explorer's format."""

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

model_explorer = pytest.importorskip("model_explorer")
from model_explorer import graph_builder as gb  # noqa: E402
from model_explorer.extension_manager import ExtensionManager  # noqa: E402
from model_explorer.utils import convert_adapter_response  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DEBUGINFO = ROOT / "tests" / "data" / "frontend" / "debuginfo"
FLAX = DEBUGINFO / "jax_flax_bert_train_f32.hlo"
TORCH = DEBUGINFO / "torch_transformer_encoder_f32_train.hlo"


def convert(path: Path):
    """The extension as Model Explorer loads and runs it."""
    manager = ExtensionManager(["hlo_opt.model_explorer"])
    manager.load_extensions()
    [ext] = [e for e in manager.extensions if e.metadata.id == "hlo_opt_adapter"]
    assert set(ext.metadata.fileExts) == {"hlo", "txt", "pb"}
    adapter = ext.ext_class()
    resp = adapter.convert(str(path), {})
    # What the server sends the page: plain dicts through Model Explorer's own
    # conversion, then JSON.
    return json.loads(json.dumps(convert_adapter_response(resp)))


def check_format(graph: dict):
    """Every field as Model Explorer's dataclasses name it; edges between
    nodes of the graph; ids unique."""
    fields = {f.name for f in dataclasses.fields(gb.GraphNode)}
    ids = [n["id"] for n in graph["nodes"]]
    assert len(ids) == len(set(ids))
    known = set(ids)
    for n in graph["nodes"]:
        assert set(n) <= fields, set(n) - fields
        assert isinstance(n["label"], str) and n["label"]
        assert not n["namespace"].startswith("/") and "//" not in n["namespace"]
        for e in n["incomingEdges"]:
            assert e["sourceNodeId"] in known, (n["id"], e)
        for a in n["attrs"]:
            assert isinstance(a["key"], str) and isinstance(a["value"], str)


def attr(node: dict, key: str):
    return next((a["value"] for a in node["attrs"] if a["key"] == key), None)


def test_a_flax_train_step_before_and_after_in_its_layers():
    out = convert(FLAX)
    [collection] = out["graphCollections"]
    before, after = collection["graphs"]
    assert before["id"].endswith("(before)") and after["id"].endswith("(after)")
    for g in (before, after):
        check_format(g)
    nodes = {n["id"]: n for n in before["nodes"]}
    # The layers are the Flax modules (`jit(f)` dropped: the first view is
    # forward and backward, not one box).
    tops = {n["namespace"].split("/")[0] for n in before["nodes"]}
    assert {"jvp(FlaxBertModule)", "transpose(jvp(FlaxBertModule))"} <= tops
    assert not any(t.startswith("jit(") for t in tops)
    layers = {n["namespace"] for n in before["nodes"]}
    assert "jvp(FlaxBertModule)/encoder/layer/0/attention/self" in layers
    for n in before["nodes"]:
        name = attr(n, "op_name")
        if name and n["namespace"] and attr(n, "computation") == "main":
            assert name.endswith("/".join(n["namespace"].split("/")[-1:]) + "/" + name.split("/")[-1])
    # No reducer body is drawn: each is its reduce's attribute.
    assert not any(n["namespace"].startswith("region_") for g in (before, after) for n in g["nodes"])
    assert not any(attr(n, "computation", ).startswith("region_")
                   for g in (before, after) for n in g["nodes"])
    reduce = next(n for n in before["nodes"] if n["label"] == "reduce")
    assert attr(reduce, "to_apply").startswith("region_")
    # Both sides name the pass: what it matched (before), what it made (after).
    # (The call-inliner first inlines the embedding lookups' `_where` calls.)
    made = [n for n in after["nodes"] if attr(n, "hlo_opt_pass")]
    assert {attr(n, "hlo_opt_pass") for n in made} == {
        "call-inliner", "native-to-custom-softmax", "native-to-custom-softmax-dx"}
    raised = [n for n in made if attr(n, "hlo_opt_pass").startswith("native-to-custom")]
    assert {n["label"] for n in raised} == {"AwsNeuronSoftmax", "AwsNeuronSoftmaxBackward"}
    assert all(attr(n, "hlo_opt_role") == "made" and n["style"]["backgroundColor"] for n in made)
    assert all(attr(n, "hlo_opt_reason").startswith("rewrote ") for n in made)
    matched = [n for n in before["nodes"] if attr(n, "hlo_opt_pass")]
    assert {attr(n, "hlo_opt_role") for n in matched} == {"matched"}
    assert {n["label"] for n in matched} >= {"exponential", "divide", "reduce"}
    assert len(matched) > len(made)
    assert nodes  # the before graph is the input: more nodes than after
    assert len(before["nodes"]) > len(after["nodes"])


def test_a_torch_train_step_before_and_after():
    out = convert(TORCH)
    [collection] = out["graphCollections"]
    before, after = collection["graphs"]
    for g in (before, after):
        check_format(g)
    made = [n for n in after["nodes"] if attr(n, "hlo_opt_pass")]
    assert sorted(n["id"] for n in made) == [
        "SoftmaxBackward_multiply.624", "SoftmaxBackward_multiply.879",
        "Softmax_divide.184", "Softmax_divide.347"]
    # op_name is the module path and the aten op (python/hlo_opt/torch_module_paths.py):
    # the layers are the modules, forward and backward, in both graphs.
    call = next(n for n in made if n["id"] == "Softmax_divide.184")
    assert call["namespace"] == "TransformerEncoder/layers.0/self_attn"
    assert attr(call, "source_file")
    for g in (before, after):
        layers = {n["namespace"] for n in g["nodes"]}
        assert {"TransformerEncoder/layers.0/self_attn",
                "backward/TransformerEncoder/layers.1/self_attn"} <= layers
    assert not any(attr(n, "computation").startswith("region_")
                   for g in (before, after) for n in g["nodes"] if attr(n, "computation"))


def test_text_and_proto_files(tmp_path):
    import hlo_opt

    module = hlo_opt.Module.from_text(FLAX.read_text())
    (tmp_path / "m.pb").write_bytes(module.to_proto())
    shutil.copy(FLAX, tmp_path / "m.txt")
    a = convert(tmp_path / "m.txt")
    b = convert(tmp_path / "m.pb")
    # The same nodes (a proto keeps names; its computations' order is its own).
    ids = lambda out: [sorted(n["id"] for n in g["nodes"]) for g in out["graphCollections"][0]["graphs"]]  # noqa: E731
    assert ids(a) == ids(b)


def test_the_overlay_names_the_pass_in_both_graphs():
    import hlo_opt

    _, report = hlo_opt.run(hlo_opt.Module.from_text(FLAX.read_text()))
    graph, overlay = report.graph(), report.overlay()
    before, after = (g["id"] for g in graph["graphs"])
    assert set(overlay) == {before, after}
    data = model_explorer.node_data_builder
    for gid, g in zip((before, after), graph["graphs"]):
        side = overlay[gid]
        results = side["results"]
        assert results
        ids = {n["id"] for n in g["nodes"]}
        assert set(results) <= ids
        assert {r["value"] for r in results.values()} <= {
            "call-inliner", "native-to-custom-softmax", "native-to-custom-softmax-dx"}
        # Each pass one colour.
        colour = {}
        for r in results.values():
            assert colour.setdefault(r["value"], r["bgColor"]) == r["bgColor"]
        data.GraphNodeData(results={k: data.NodeDataResult(**v) for k, v in results.items()},
                           name=side["name"])
