"""The adapter Model Explorer loads (``--extensions=hlo_opt.model_explorer``
imports this module); see the package's documentation."""

from typing import Dict

from model_explorer import Adapter, AdapterMetadata, ModelExplorerGraphs
from model_explorer import graph_builder as gb

import hlo_opt


def _value(v):
    # A node attribute's value is text, or a list of node ids.
    if isinstance(v, dict) and v.get("type") == "node_ids":
        return gb.NodeIdsNodeAttributeValue(nodeIds=list(v.get("nodeIds", [])))
    return v


def _key_values(items) -> list:
    return [gb.KeyValue(key=a["key"], value=_value(a["value"])) for a in items]


def _node(n: dict) -> gb.GraphNode:
    style = n.get("style")
    return gb.GraphNode(
        id=n["id"],
        label=n["label"],
        namespace=n.get("namespace", ""),
        subgraphIds=list(n.get("subgraphIds", [])),
        attrs=_key_values(n.get("attrs", [])),
        incomingEdges=[
            gb.IncomingEdge(
                sourceNodeId=e["sourceNodeId"],
                sourceNodeOutputId=e.get("sourceNodeOutputId", "0"),
                targetNodeInputId=e.get("targetNodeInputId", "0"),
            )
            for e in n.get("incomingEdges", [])
        ],
        outputsMetadata=[
            gb.MetadataItem(id=m["id"], attrs=_key_values(m.get("attrs", [])))
            for m in n.get("outputsMetadata", [])
        ],
        style=gb.GraphNodeStyle(**style) if style else None,
    )


def to_graph_collection(data: dict) -> gb.GraphCollection:
    """The graph JSON of ``--emit-graph`` (``Report.graph()``) as Model
    Explorer's ``GraphCollection``."""
    return gb.GraphCollection(
        label=data["label"],
        graphs=[gb.Graph(id=g["id"], nodes=[_node(n) for n in g["nodes"]])
                for g in data["graphs"]],
    )


def read_module(model_path: str) -> "hlo_opt.Module":
    """A module from HLO text (``.hlo``, ``.txt``) or proto (``.pb``)."""
    if model_path.endswith(".pb"):
        with open(model_path, "rb") as f:
            return hlo_opt.Module.from_proto(f.read())
    with open(model_path, encoding="utf-8") as f:
        return hlo_opt.Module.from_text(f.read(), model_path)


class HloOptAdapter(Adapter):
    """An HLO module before and after hlo-opt's default pipeline."""

    metadata = AdapterMetadata(
        id="hlo_opt_adapter",
        name="hlo-opt: HLO before and after the Neuron passes",
        description=(
            "Reads an XLA HLO module (text or proto), runs hlo-opt's passes "
            "and shows the input and the output, the nodes each pass matched "
            "and made coloured by pass, in the layers of their op_name."),
        source_repo="",
        fileExts=["hlo", "txt", "pb"],
    )

    def __init__(self):
        super().__init__()

    def convert(self, model_path: str, settings: Dict) -> ModelExplorerGraphs:
        module = read_module(model_path)
        _, report = hlo_opt.run(module)
        return {"graphCollections": [to_graph_collection(report.graph())]}
