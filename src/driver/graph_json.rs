//! `--emit-graph FILE.json`: the output module as Model Explorer's graph
//! JSON (a graph collection of one graph; each computation a namespace,
//! each instruction a node with its opcode, shape, `op_name` and source
//! file), and beside it `FILE.overlay.json`, Model Explorer node data that
//! colours the nodes the passes made or rewrote by pass.
//!
//! Written as a stream: a node at a time, never a JSON tree of the whole
//! module.

use crate::ir::instruction::AttrValue;
use crate::ir::{Instruction, Module};
use crate::util::FxMap;
use std::io::{self, Write};

/// Which pass made or rewrote each instruction, by (computation,
/// instruction) name.
pub type MadeBy = FxMap<(String, String), &'static str>;

/// Background colours of the passes' nodes, in pipeline order.
const PASS_COLOURS: &[&str] = &[
    "#f4a261", "#2a9d8f", "#e76f51", "#8ab17d", "#e9c46a", "#6d597a", "#b56576", "#457b9d",
    "#90be6d", "#f28482",
];

/// The graph's id (and the overlay's key for it): the module's name.
fn graph_id(module: &Module) -> String {
    let name = module.name.to_string();
    if name.is_empty() {
        "module".to_string()
    } else {
        name
    }
}

fn string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

/// Writes the graph JSON.
pub fn write_graph(module: &Module, made: &MadeBy, out: &mut dyn Write) -> io::Result<()> {
    let id = string(&graph_id(module));
    write!(
        out,
        "{{\"label\":{id},\"graphs\":[{{\"id\":{id},\"nodes\":["
    )?;
    let mut first = true;
    for (_, comp) in module.computations() {
        let namespace = string(&comp.name);
        for (_, instr) in comp.instructions() {
            if !first {
                out.write_all(b",\n")?;
            }
            first = false;
            let pass = made
                .get(&(comp.name.to_string(), instr.name.to_string()))
                .copied();
            node(out, comp, instr, &namespace, pass)?;
        }
    }
    out.write_all(b"]}]}\n")
}

fn node(
    out: &mut dyn Write,
    comp: &crate::ir::Computation,
    instr: &Instruction,
    namespace: &str,
    pass: Option<&str>,
) -> io::Result<()> {
    let label = match instr.custom_call_target() {
        Some(t) => t.to_string(),
        None => instr.opcode.name().to_string(),
    };
    let shape = instr.shape.to_text(false);
    let mut attrs: Vec<(&str, String)> = vec![
        ("name", instr.name.to_string()),
        ("opcode", instr.opcode.name().to_string()),
        ("shape", shape.clone()),
    ];
    if let Some(AttrValue::Metadata(md)) = instr.attr("metadata") {
        if !md.op_name.is_empty() {
            attrs.push(("op_name", md.op_name.to_string()));
        }
        if !md.source_file.is_empty() {
            attrs.push(("source_file", md.source_file.to_string()));
            attrs.push(("source_line", md.source_line.to_string()));
        }
    }
    if let Some(p) = pass {
        attrs.push(("hlo_opt_pass", p.to_string()));
    }
    write!(
        out,
        "{{\"id\":{},\"label\":{},\"namespace\":{namespace},\"attrs\":[",
        string(&instr.name),
        string(&label)
    )?;
    for (k, (key, value)) in attrs.iter().enumerate() {
        let sep = if k == 0 { "" } else { "," };
        write!(
            out,
            "{sep}{{\"key\":{},\"value\":{}}}",
            string(key),
            string(value)
        )?;
    }
    out.write_all(b"],\"incomingEdges\":[")?;
    for (k, &op) in instr.operands().iter().enumerate() {
        let sep = if k == 0 { "" } else { "," };
        write!(
            out,
            "{sep}{{\"sourceNodeId\":{},\"sourceNodeOutputId\":\"0\",\"targetNodeInputId\":\"{k}\"}}",
            string(&comp.instr(op).name)
        )?;
    }
    write!(
        out,
        "],\"outputsMetadata\":[{{\"id\":\"0\",\"attrs\":[{{\"key\":\"shape\",\"value\":{}}}]}}]}}",
        string(&shape)
    )
}

/// Writes the node-data overlay: each node a pass made or rewrote gets the
/// pass's place in `passes` (from 1) as its value and the pass's colour.
pub fn write_overlay(
    module: &Module,
    made: &MadeBy,
    passes: &[&str],
    out: &mut dyn Write,
) -> io::Result<()> {
    let colour = |pass: &str| -> (usize, &str) {
        let k = passes.iter().position(|p| *p == pass).unwrap_or(0);
        (k + 1, PASS_COLOURS[k % PASS_COLOURS.len()])
    };
    write!(
        out,
        "{{{}:{{\"name\":\"hlo-opt passes\",\"results\":{{",
        string(&graph_id(module))
    )?;
    // What a later pass replaced is gone from the module.
    let present = |c: &str, i: &str| {
        module
            .find_computation(c)
            .is_some_and(|id| module.comp(id).find(i).is_some())
    };
    let mut rows: Vec<(&String, &str)> = made
        .iter()
        .filter(|((c, i), _)| present(c, i))
        .map(|((_, i), p)| (i, *p))
        .collect();
    rows.sort();
    for (k, (instr, pass)) in rows.iter().enumerate() {
        let (value, bg) = colour(pass);
        let sep = if k == 0 { "" } else { "," };
        write!(
            out,
            "{sep}\n{}:{{\"value\":{value},\"bgColor\":\"{bg}\"}}",
            string(instr)
        )?;
    }
    out.write_all(b"},\"thresholds\":[")?;
    for k in 0..passes.len() {
        let sep = if k == 0 { "" } else { "," };
        write!(
            out,
            "{sep}{{\"value\":{},\"bgColor\":\"{}\"}}",
            k + 1,
            PASS_COLOURS[k % PASS_COLOURS.len()],
        )?;
    }
    out.write_all(b"]}}\n")
}
