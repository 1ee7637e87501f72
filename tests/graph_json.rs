//! `--emit-graph`: Model Explorer's graph JSON of a run, on real frontend
//! modules: two graphs (the input before the passes, the output after),
//! nodes in the layers of their `op_name`, no reducer body at the top,
//! while bodies nested where called, and in both graphs the nodes each pass
//! matched or made named by the pass (node attributes, colour, overlay).

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The graph JSON and overlay of the default pipeline on `input`.
fn graph(input: &str) -> (Value, Value) {
    let dir = tempfile::tempdir().unwrap();
    let graph = dir.path().join("g.json");
    let out = Command::new(env!("CARGO_BIN_EXE_hlo-opt"))
        .arg(root().join(input))
        .arg("--emit-graph")
        .arg(&graph)
        .arg("-o")
        .arg(dir.path().join("out.hlo"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read =
        |p: &Path| -> Value { serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap() };
    (read(&graph), read(&dir.path().join("g.overlay.json")))
}

fn attr<'a>(node: &'a Value, key: &str) -> Option<&'a str> {
    node["attrs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["key"] == key)
        .map(|a| a["value"].as_str().unwrap())
}

fn nodes(g: &Value) -> &Vec<Value> {
    g["nodes"].as_array().unwrap()
}

/// Before and after: ids, each graph's nodes unique and its edges between
/// them.
fn sides(graph: &Value) -> (&Value, &Value) {
    let graphs = graph["graphs"].as_array().unwrap();
    assert_eq!(graphs.len(), 2);
    let (before, after) = (&graphs[0], &graphs[1]);
    assert!(before["id"].as_str().unwrap().ends_with(" (before)"));
    assert!(after["id"].as_str().unwrap().ends_with(" (after)"));
    for g in [before, after] {
        let ids: BTreeSet<&str> = nodes(g).iter().map(|n| n["id"].as_str().unwrap()).collect();
        assert_eq!(ids.len(), nodes(g).len());
        for n in nodes(g) {
            for e in n["incomingEdges"].as_array().unwrap() {
                assert!(ids.contains(e["sourceNodeId"].as_str().unwrap()), "{e}");
            }
        }
    }
    (before, after)
}

/// The nodes a pass marked (attribute), with the role and the overlay's
/// value and colour agreeing.
fn marked<'a>(g: &'a Value, overlay: &Value, role: &str) -> Vec<&'a Value> {
    let results = overlay[g["id"].as_str().unwrap()]["results"]
        .as_object()
        .unwrap();
    let marked: Vec<&Value> = nodes(g)
        .iter()
        .filter(|n| attr(n, "hlo_opt_pass").is_some())
        .collect();
    assert_eq!(marked.len(), results.len());
    for n in &marked {
        let r = &results[n["id"].as_str().unwrap()];
        assert_eq!(r["value"].as_str(), attr(n, "hlo_opt_pass"));
        assert_eq!(r["bgColor"], n["style"]["backgroundColor"]);
        assert_eq!(attr(n, "hlo_opt_role"), Some(role));
        assert!(attr(n, "hlo_opt_reason").unwrap().starts_with("rewrote "));
    }
    marked
}

#[test]
fn a_flax_train_step_is_drawn_in_its_layers_before_and_after() {
    let (graph, overlay) = graph("tests/data/frontend/debuginfo/jax_flax_bert_train_f32.hlo");
    let (before, after) = sides(&graph);
    for g in [before, after] {
        let layers: BTreeSet<&str> = nodes(g)
            .iter()
            .map(|n| n["namespace"].as_str().unwrap())
            .collect();
        // The user's modules, forward and backward; `jit(f)` dropped.
        assert!(layers.contains("jvp(FlaxBertModule)/encoder/layer/0/attention/self"));
        assert!(layers.contains("transpose(jvp(FlaxBertModule))/encoder/layer/1/attention/self"));
        assert!(layers.iter().all(|l| !l.starts_with("jit(")));
        // A node's layer is its op_name without the op.
        let dot = nodes(g)
            .iter()
            .find(|n| {
                attr(n, "op_name")
                    == Some("jit(flax_bert_train_f32)/jvp(FlaxBertModule)/encoder/layer/0/attention/self/query/dot_general")
            })
            .unwrap();
        assert_eq!(
            dot["namespace"],
            "jvp(FlaxBertModule)/encoder/layer/0/attention/self/query"
        );
        // No reducer body at the top, nor anywhere: the reduce holds it.
        assert!(nodes(g)
            .iter()
            .all(|n| !attr(n, "computation").unwrap().starts_with("region_")));
        let reduce = nodes(g).iter().find(|n| n["label"] == "reduce").unwrap();
        let body = attr(reduce, "to_apply").unwrap();
        assert!(
            body.starts_with("region_") && body.contains("ROOT "),
            "{body}"
        );
    }
    let made = marked(after, &overlay, "made");
    let raise = |n: &&&Value| {
        attr(n, "hlo_opt_pass")
            .unwrap()
            .starts_with("native-to-custom")
    };
    let labels: Vec<&str> = made
        .iter()
        .filter(raise)
        .map(|n| n["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels.len(), 4);
    assert_eq!(
        labels.iter().filter(|l| **l == "AwsNeuronSoftmax").count(),
        2,
        "{labels:?}"
    );
    let matched = marked(before, &overlay, "matched");
    let passes: BTreeSet<&str> = matched
        .iter()
        .map(|n| attr(n, "hlo_opt_pass").unwrap())
        .collect();
    // The call-inliner first inlines the three `_where` calls of the
    // embedding lookups (`_take`).
    assert_eq!(
        passes,
        BTreeSet::from([
            "call-inliner",
            "native-to-custom-softmax",
            "native-to-custom-softmax-dx"
        ])
    );
    // The matched softmaxes: their exponentials, divides and reduces.
    for op in ["exponential", "divide", "reduce"] {
        assert!(matched.iter().any(|n| n["label"] == op), "{op}");
    }
    // One colour per pass.
    let colours: BTreeSet<(&str, &str)> = matched
        .iter()
        .chain(&made)
        .map(|n| {
            (
                attr(n, "hlo_opt_pass").unwrap(),
                n["style"]["backgroundColor"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(colours.len(), 3);
}

#[test]
fn a_torch_train_step_marks_each_raise_by_pass() {
    let (graph, overlay) =
        graph("tests/data/frontend/debuginfo/torch_transformer_encoder_f32_train.hlo");
    let (before, after) = sides(&graph);
    let made: BTreeSet<(&str, &str)> = marked(after, &overlay, "made")
        .iter()
        .map(|n| (n["id"].as_str().unwrap(), attr(n, "hlo_opt_pass").unwrap()))
        .collect();
    assert_eq!(
        made,
        BTreeSet::from([
            (
                "SoftmaxBackward_multiply.624",
                "native-to-custom-softmax-dx"
            ),
            (
                "SoftmaxBackward_multiply.879",
                "native-to-custom-softmax-dx"
            ),
            ("Softmax_divide.184", "native-to-custom-softmax"),
            ("Softmax_divide.347", "native-to-custom-softmax"),
        ])
    );
    // The rewritten instructions are marked before, by the same passes.
    let matched = marked(before, &overlay, "matched");
    for (id, pass) in [
        ("divide.184", "native-to-custom-softmax"),
        ("multiply.624", "native-to-custom-softmax-dx"),
    ] {
        let n = matched.iter().find(|n| n["id"] == id).unwrap();
        assert_eq!(attr(n, "hlo_opt_pass"), Some(pass));
        assert!(attr(n, "hlo_opt_reason").unwrap().contains(id));
    }
    // torch-xla's metadata (written with python/hlo_opt/torch_module_paths.py):
    // the nn.Module path, then the aten op; its Python line.
    let n = nodes(before)
        .iter()
        .find(|n| n["id"] == "divide.184")
        .unwrap();
    assert_eq!(
        attr(n, "op_name"),
        Some("TransformerEncoder/layers.0/self_attn/aten__softmax")
    );
    assert!(attr(n, "source_file").is_some());
    // The layers are the modules, forward and backward, in both graphs; the
    // raised softmaxes are in theirs.
    for g in [before, after] {
        let layers: BTreeSet<&str> = nodes(g)
            .iter()
            .map(|n| n["namespace"].as_str().unwrap())
            .collect();
        // torch-xla's own scope of its scalar adds (`aten__add.4/aten__add`)
        // is no layer: such a node is in the layer its neighbours share.
        assert!(layers.iter().all(|l| !l.contains("aten__")), "{layers:?}");
        let residual = nodes(g).iter().find(|n| n["id"] == "add.231").unwrap();
        assert_eq!(attr(residual, "op_name"), Some("aten__add.4/aten__add"));
        assert_eq!(residual["namespace"], "TransformerEncoder/layers.0");
        for layer in [
            "TransformerEncoder/layers.0/self_attn",
            "TransformerEncoder/layers.1/linear1",
            "backward/TransformerEncoder/layers.1/self_attn",
            "backward/TransformerEncoder/layers.0/norm2",
        ] {
            assert!(layers.contains(layer), "{layer}: {layers:?}");
        }
    }
    for (id, layer) in [
        (
            "Softmax_divide.184",
            "TransformerEncoder/layers.0/self_attn",
        ),
        (
            "Softmax_divide.347",
            "TransformerEncoder/layers.1/self_attn",
        ),
        (
            "SoftmaxBackward_multiply.624",
            "backward/TransformerEncoder/layers.1/self_attn",
        ),
    ] {
        let n = nodes(after).iter().find(|n| n["id"] == id).unwrap();
        assert_eq!(n["namespace"], layer, "{id}");
    }
}

#[test]
fn while_bodies_are_nested_where_called() {
    let (graph, _) = graph("tests/data/frontend/jax/flax_scan_transformer_train_f32.hlo");
    let (before, _) = sides(&graph);
    let g = nodes(before);
    let whiles: Vec<&Value> = g.iter().filter(|n| n["label"] == "while").collect();
    assert_eq!(whiles.len(), 2);
    for w in whiles {
        let id = w["id"].as_str().unwrap();
        let body = attr(w, "body").unwrap();
        let inside: Vec<&Value> = g
            .iter()
            .filter(|n| attr(n, "computation") == Some(body))
            .collect();
        assert!(!inside.is_empty());
        let layer = format!("{id} body");
        assert!(inside
            .iter()
            .all(|n| n["namespace"].as_str().unwrap().starts_with(&layer)));
        // The body's parameter is fed by the while's operand, and the while
        // by the body's root.
        let param = inside.iter().find(|n| n["label"] == "parameter").unwrap();
        let operand = &w["incomingEdges"][0]["sourceNodeId"];
        assert_eq!(&param["incomingEdges"][0]["sourceNodeId"], operand);
        let edges = w["incomingEdges"].as_array().unwrap();
        assert!(edges
            .iter()
            .any(|e| e["targetNodeInputId"] == layer.as_str()));
    }
    // Only the entry is at the top: every other computation's nodes are in
    // a layer.
    let entry = attr(&g[g.len() - 1], "computation").unwrap();
    assert!(g
        .iter()
        .filter(|n| n["namespace"] == "")
        .all(|n| attr(n, "computation") == Some(entry)));
}

#[test]
fn conditional_branches_are_nested_and_a_comparator_is_an_attribute() {
    let (graph, _) = graph("tests/data/graph/conditional_sort.hlo");
    let (before, _) = sides(&graph);
    let by_id = |id: &str| nodes(before).iter().find(|n| n["id"] == id).unwrap();
    let edges = |id: &str| -> Vec<String> {
        by_id(id)["incomingEdges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                format!(
                    "{}:{}",
                    e["sourceNodeId"].as_str().unwrap(),
                    e["targetNodeInputId"].as_str().unwrap()
                )
            })
            .collect()
    };
    // Each branch in a layer beside the conditional, fed by its operand.
    assert_eq!(by_id("t")["namespace"], "model/c true");
    assert_eq!(edges("t"), ["x:0"]);
    assert_eq!(by_id("f")["namespace"], "model/c false");
    assert_eq!(edges("f"), ["y:0"]);
    assert_eq!(by_id("n")["namespace"], "model/c true/cond/branch_1_fun");
    assert_eq!(edges("c"), ["p:0", "x:1", "y:2", "n:c true", "e:c false"]);
    // The comparator is not drawn; the sort holds it as text.
    assert!(nodes(before).iter().all(|n| n["id"] != "lt"));
    let body = attr(by_id("s"), "to_apply").unwrap();
    assert!(
        body.contains("ROOT lt = pred[] compare(a, b), direction=LT"),
        "{body}"
    );
}
