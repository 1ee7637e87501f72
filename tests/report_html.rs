//! `--report-html` and `--emit-graph`: what the page draws and what the
//! graph JSON holds, on the JAX softmax example and a PyTorch/XLA
//! transformer-encoder train step. (The page in a browser and the JSON in
//! Model Explorer's own classes: `python/tests/test_report_views.py`; the
//! graph JSON itself: `tests/graph_json.rs`.)

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the default pipeline on `input` with both views; returns the page,
/// the graph JSON, the overlay and the output module.
fn views(input: &str) -> (String, serde_json::Value, serde_json::Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let graph = dir.path().join("graph.json");
    let out = dir.path().join("out.hlo");
    let status = Command::new(env!("CARGO_BIN_EXE_hlo-opt"))
        .arg(root().join(input))
        .arg("--report-html")
        .arg(&page)
        .arg("--emit-graph")
        .arg(&graph)
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let read_json = |p: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    (
        std::fs::read_to_string(&page).unwrap(),
        read_json(&graph),
        read_json(&dir.path().join("graph.overlay.json")),
        std::fs::read_to_string(&out).unwrap(),
    )
}

/// The `data-name`s of the figure of `label` ("before", "after") of the
/// entry whose instruction is `instr`.
fn drawn(page: &str, instr: &str, label: &str) -> Vec<String> {
    let start = page
        .find(&format!("data-instruction=\"{instr}\""))
        .unwrap_or_else(|| panic!("no entry for {instr}"));
    let entry = &page[start..];
    let entry = &entry[..entry.find("</div>\n").unwrap()];
    let fig = entry
        .find(&format!("<figure class=\"{label}\">"))
        .unwrap_or_else(|| panic!("{instr} has no {label} drawing"));
    let fig = &entry[fig..];
    let fig = &fig[..fig.find("</figure>").unwrap()];
    fig.split("data-name=\"")
        .skip(1)
        .map(|s| s[..s.find('"').unwrap()].to_string())
        .collect()
}

#[test]
fn the_page_draws_each_raise_before_and_after() {
    let (page, _, _, out) = views("examples/softmax_vjp_f32.hlo");
    // Self-contained: nothing fetched, no script.
    assert!(!page.contains("<script"));
    assert!(!page.contains("src="));
    assert!(!page.contains("href=\"http"));
    let before = drawn(&page, "mul.13", "before");
    // The backward raise matched the gradient's chain, root first.
    assert_eq!(before[0], "mul.13");
    for name in ["mul.12", "reduce_sum.22", "add_any.1", "neg.1"] {
        assert!(before.contains(&name.to_string()), "{name} in {before:?}");
    }
    let after = drawn(&page, "mul.13", "after");
    // The call, and the softmax the gradient raise made for it.
    for name in ["SoftmaxBackward_mul.13", "divide", "g.1", "exp.1"] {
        assert!(after.contains(&name.to_string()), "{name} in {after:?}");
    }
    assert!(!after.contains(&"mul.12".to_string()));
    let fwd = drawn(&page, "divide", "after");
    assert!(fwd.contains(&"Softmax_divide".to_string()));
    assert!(fwd.contains(&"x.1".to_string()));
    // The calls the page shows are the output's.
    assert!(out.contains("%Softmax_divide = "));
    assert!(out.contains("ROOT %SoftmaxBackward_mul.13 = "));
    // Every node links to its line of HLO text.
    let links = page.matches("<a href=\"#p").count() - page.matches("<a href=\"#pass-").count();
    assert_eq!(links, page.matches("<g class=\"node").count());
    assert_eq!(links, page.matches("<span id=\"p").count());
}

#[test]
fn the_page_shows_every_raise_of_a_torch_train_step() {
    let (page, _, overlay, _) =
        views("tests/data/frontend/torch/torch_transformer_encoder_f32_train.hlo");
    // Two encoder layers: two forward softmaxes, two backward.
    for (instr, call) in [
        ("multiply.618", "SoftmaxBackward_multiply.618"),
        ("multiply.872", "SoftmaxBackward_multiply.872"),
        ("divide.181", "Softmax_divide.181"),
        ("divide.341", "Softmax_divide.341"),
    ] {
        assert_eq!(drawn(&page, instr, "before")[0], instr);
        assert!(drawn(&page, instr, "after").contains(&call.to_string()));
    }
    let results = overlay["SyncTensorsGraph.954 (after)"]["results"]
        .as_object()
        .unwrap();
    let mut marked: Vec<&str> = results.keys().map(|k| k.as_str()).collect();
    marked.sort();
    assert_eq!(
        marked,
        [
            "SoftmaxBackward_multiply.618",
            "SoftmaxBackward_multiply.872",
            "Softmax_divide.181",
            "Softmax_divide.341"
        ]
    );
}

#[test]
fn a_pass_that_skips_draws_the_candidate() {
    // add-logit-output reports the softmax whose logits it made an output.
    let (page, _, _, _) = views("examples/softmax_shared_max_f32.hlo");
    assert!(page.contains("class=\"entry"));
    assert!(page.contains("<figure"));
}

/// The page of `text` (an HLO module) under the default pipeline.
fn page_of(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.hlo");
    std::fs::write(&input, text).unwrap();
    let page = dir.path().join("report.html");
    let status = Command::new(env!("CARGO_BIN_EXE_hlo-opt"))
        .arg(&input)
        .arg("--report-html")
        .arg(&page)
        .arg("-o")
        .arg(dir.path().join("out.hlo"))
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::read_to_string(&page).unwrap()
}

/// The text of the entry whose instruction is `instr`, to its drawings.
fn entry_head<'p>(page: &'p str, instr: &str) -> &'p str {
    let start = page
        .find(&format!("data-instruction=\"{instr}\""))
        .unwrap_or_else(|| panic!("no entry for {instr}"));
    let entry = &page[start..];
    &entry[..entry.find("<div class=\"drawings\">").unwrap()]
}

#[test]
fn each_rewrite_names_the_users_source_line() {
    // JAX's stack-frame tables: frame 5 is gen_corpus.py line 124.
    let page =
        page_of(&std::fs::read_to_string(root().join("examples/softmax_vjp_f32.hlo")).unwrap());
    for instr in ["mul.13", "divide"] {
        let head = entry_head(&page, instr);
        assert!(
            head.contains("<p class=\"source\">from <code title=\"gen_corpus.py:124 in _softmax_vjp.&lt;locals&gt;.&lt;lambda&gt;\">gen_corpus.py:124</code></p>"),
            "{head}"
        );
    }
    // torch-xla's source_file/source_line metadata, the file by its last
    // component.
    let text = std::fs::read_to_string(root().join("examples/softmax_vjp_f32.hlo"))
        .unwrap()
        .replace(
            "transpose(jvp())/mul\" stack_frame_id=5}",
            "transpose(jvp())/mul\" source_file=\"/home/u/model/attention.py\" source_line=42}",
        );
    let page = page_of(&text);
    let head = entry_head(&page, "mul.13");
    assert!(
        head.contains("<code title=\"/home/u/model/attention.py:42\">attention.py:42</code>"),
        "{head}"
    );
}

#[test]
fn a_rewrite_with_many_users_folds_them() {
    // The gradient's result used forty times: its users fold into one node.
    let text = std::fs::read_to_string(root().join("examples/softmax_vjp_f32.hlo")).unwrap();
    let users: String = (0..40)
        .map(|k| format!("  %use.{k} = f32[64,512]{{1,0}} negate(%mul.13)\n"))
        .collect();
    let names: Vec<String> = (0..40).map(|k| format!("%use.{k}")).collect();
    let tuple_shape = format!("({})", vec!["f32[64,512]{1,0}"; 40].join(", "));
    let text = text
        .replace(
            "->f32[64,512]{1,0}}",
            &format!("->{tuple_shape}}}"),
        )
        .replace("-> f32[64,512] {", &format!("-> ({}) {{", vec!["f32[64,512]"; 40].join(", ")))
        .replace("ROOT %mul.13 = ", "%mul.13 = ")
        .replace(
            "transpose(jvp())/mul\" stack_frame_id=5}\n}",
            &format!(
                "transpose(jvp())/mul\" stack_frame_id=5}}\n{users}  ROOT %out = {tuple_shape} tuple({})\n}}",
                names.join(", ")
            ),
        );
    let page = page_of(&text);
    let before = drawn(&page, "mul.13", "before");
    assert_eq!(before[0], "mul.13");
    assert!(!before.iter().any(|n| n.starts_with("use.")), "{before:?}");
    // All forty, though a drawing lists 32 around a region at most.
    assert!(before.contains(&"40 users".to_string()), "{before:?}");
    assert!(page.contains("class=\"node context folded\""));
}
