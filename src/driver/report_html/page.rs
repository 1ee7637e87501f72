//! The report's HTML: one file, its style inline, no script, nothing
//! fetched.

use super::graph::escape;
use super::{Entry, RunRecord};
use std::io::Write;

const STYLE: &str = r#"
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 2em; }
table.passes { border-collapse: collapse; }
table.passes td, table.passes th { border: 1px solid #ccc; padding: 2px 8px; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.changed { color: #0a6; font-weight: 600; } .unchanged { color: #888; }
.entry { border-left: 4px solid #ccc; padding: 4px 12px; margin: 1em 0; }
.entry.rewrote { border-color: #0a6; } .entry.skipped { border-color: #d80; }
.entry p { margin: 0.2em 0; font-family: ui-monospace, monospace; }
.drawings { display: flex; gap: 24px; flex-wrap: wrap; align-items: flex-start; }
figure { margin: 0; overflow-x: auto; max-width: 100%; }
figcaption { font-weight: 600; color: #555; }
svg.graph rect { stroke: #555; stroke-width: 1; }
svg.graph .matched rect { fill: #fde2c4; stroke: #d80; stroke-width: 2; }
svg.graph .new rect { fill: #c8f0d8; stroke: #0a6; stroke-width: 2; }
svg.graph .candidate rect { fill: #fff3b0; stroke: #b90; stroke-width: 2; }
svg.graph .context rect { fill: #f4f4f4; }
svg.graph text { font: 12px ui-monospace, monospace; fill: #222; }
svg.graph text.sub { fill: #555; font-size: 11px; }
svg.graph path.edge { stroke: #888; stroke-width: 1.2; fill: none; }
svg.graph .folded rect { stroke-dasharray: 4 3; }
.entry p.source { font-family: system-ui, sans-serif; color: #555; }
pre.hlo { font-size: 12px; background: #fafafa; border: 1px solid #eee; padding: 6px; overflow-x: auto; }
pre.hlo span:target { background: #ffef9e; }
.legend span { display: inline-block; padding: 0 6px; margin-right: 6px; border: 1px solid #999; }
"#;

// The arrow head every drawing's edges share, and the colours' legend.
const DEFS_AND_LEGEND: &[u8] = br##"<svg width="0" height="0" style="position:absolute"><defs><marker id="arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L8,4 L0,8 z" fill="#888"/></marker></defs></svg>
<p class="legend"><span style="background:#fde2c4">matched</span><span style="background:#c8f0d8">made by the pass</span><span style="background:#fff3b0">left alone</span><span style="background:#f4f4f4">operands and users</span></p>
"##;

pub(super) fn write(r: &RunRecord, out: &mut dyn Write) -> std::io::Result<()> {
    let title = escape(&r.title);
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>hlo-opt report: {title}</title><style>{STYLE}</style></head><body>\n\
         <h1>hlo-opt report: {title}</h1>\n"
    )?;
    out.write_all(DEFS_AND_LEGEND)?;
    passes_table(r, out, true)?;
    if r.passes.iter().all(|p| p.entries.is_empty()) {
        out.write_all(b"<p>No pass rewrote or skipped anything.</p>\n")?;
    }
    for (k, p) in r.passes.iter().enumerate() {
        if p.entries.is_empty() {
            continue;
        }
        let state = if p.changed { "changed" } else { "unchanged" };
        writeln!(
            out,
            "<section class=\"pass\" id=\"pass-{k}\"><h2>{} <span class=\"{state}\">{state}</span></h2>",
            p.name
        )?;
        for (j, e) in p.entries.iter().enumerate() {
            entry(out, e, &format!("p{k}e{j}"))?;
        }
        out.write_all(b"</section>\n")?;
    }
    out.write_all(b"</body></html>\n")
}

/// The page's pass table and its first `shown` rewrites, each with its
/// before and after drawings side by side, as one `<div>` that styles only
/// itself (a notebook cell's view: Jupyter's `_repr_html_`). `id_prefix`
/// keeps its element ids apart from another view's in the same document.
pub(super) fn write_fragment(
    r: &RunRecord,
    out: &mut dyn Write,
    shown: usize,
    id_prefix: &str,
) -> std::io::Result<()> {
    write!(
        out,
        "<div class=\"hlo-opt-report\"><style>{}</style>",
        scoped(STYLE, ".hlo-opt-report")
    )?;
    out.write_all(DEFS_AND_LEGEND)?;
    passes_table(r, out, false)?;
    let rewrites = r.passes.iter().enumerate().flat_map(|(k, p)| {
        p.entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.rewrote)
            .map(move |(j, e)| (k, p.name, j, e))
    });
    let mut total = 0;
    let mut heading = None;
    for (k, name, j, e) in rewrites {
        total += 1;
        if total > shown {
            continue;
        }
        if heading != Some(k) {
            writeln!(out, "<h4>{name}</h4>")?;
            heading = Some(k);
        }
        entry(out, e, &format!("{id_prefix}p{k}e{j}"))?;
    }
    if total > shown {
        writeln!(
            out,
            "<p>... {} more rewrites: the whole page is report.html()</p>",
            total - shown
        )?;
    }
    out.write_all(b"</div>\n")
}

/// `style` with every rule applied only inside `scope` (`body` is the
/// scope itself).
fn scoped(style: &str, scope: &str) -> String {
    let mut s = String::with_capacity(style.len() * 2);
    for rule in style.split('}') {
        let Some((selectors, body)) = rule.split_once('{') else {
            continue;
        };
        let selectors: Vec<String> = selectors
            .split(',')
            .map(|sel| match sel.trim() {
                "body" => scope.to_string(),
                sel => format!("{scope} {sel}"),
            })
            .collect();
        s.push_str(&format!("{} {{{}}}\n", selectors.join(", "), body));
    }
    s
}

/// The pass table; `links`: each pass with entries links to its section.
fn passes_table(r: &RunRecord, out: &mut dyn Write, links: bool) -> std::io::Result<()> {
    out.write_all(
        b"<table class=\"passes\"><tr><th>pass</th><th></th><th>time</th><th>rewrote</th><th>skipped</th></tr>\n",
    )?;
    for (k, p) in r.passes.iter().enumerate() {
        let rewrote = p.entries.iter().filter(|e| e.rewrote).count();
        let skipped = p.entries.len() - rewrote;
        let state = if p.changed { "changed" } else { "unchanged" };
        let name = if links && !p.entries.is_empty() {
            format!("<a href=\"#pass-{k}\">{}</a>", p.name)
        } else {
            p.name.to_string()
        };
        writeln!(
            out,
            "<tr><td>{name}</td><td class=\"{state}\">{state}</td>\
             <td class=\"num\">{:.3} ms</td><td class=\"num\">{rewrote}</td><td class=\"num\">{skipped}</td></tr>",
            p.elapsed.as_secs_f64() * 1e3
        )?;
    }
    out.write_all(b"</table>\n")
}

fn entry(out: &mut dyn Write, e: &Entry, id: &str) -> std::io::Result<()> {
    let kind = if e.rewrote { "rewrote" } else { "skipped" };
    writeln!(
        out,
        "<div class=\"entry {kind}\" data-computation=\"{}\" data-instruction=\"{}\"><p>{}</p>",
        escape(&e.computation),
        escape(&e.instruction),
        escape(&e.text)
    )?;
    if !e.sources.is_empty() {
        // The first few; the tooltip has each whole.
        const SHOWN: usize = 3;
        out.write_all(b"<p class=\"source\">from ")?;
        for (k, s) in e.sources.iter().take(SHOWN).enumerate() {
            let sep = if k == 0 { "" } else { ", " };
            write!(
                out,
                "{sep}<code title=\"{}\">{}</code>",
                escape(&s.long()),
                escape(&s.short())
            )?;
        }
        if e.sources.len() > SHOWN {
            write!(out, " and {} more", e.sources.len() - SHOWN)?;
        }
        out.write_all(b"</p>\n")?;
    }
    if e.drawings.is_empty() {
        return out.write_all(b"</div>\n");
    }
    out.write_all(b"<div class=\"drawings\">")?;
    // Each drawing's HLO text goes after all the drawings, in their order.
    let mut listings: Vec<u8> = Vec::new();
    for (label, g) in &e.drawings {
        let gid = format!("{id}-{label}");
        write!(
            out,
            "<figure class=\"{label}\"><figcaption>{label}</figcaption>{}</figure>",
            g.svg(&gid)
        )?;
        write!(
            listings,
            "<details><summary>HLO {label} ({})</summary><pre class=\"hlo\">",
            escape(&g.computation)
        )?;
        for (k, n) in g.nodes.iter().enumerate() {
            writeln!(
                listings,
                "<span id=\"{gid}-{k}\">{}</span>",
                escape(&n.text)
            )?;
        }
        listings.write_all(b"</pre></details>\n")?;
    }
    out.write_all(b"</div>\n")?;
    out.write_all(&listings)?;
    out.write_all(b"</div>\n")
}
