//! OUT/index.html: the batch's table, one row per module linking its
//! output and its report page; sortable by any column (a few lines of
//! inline script); self-contained, nothing fetched.

use serde_json::Value;

const STYLE: &str = "body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: 2px 8px; text-align: left; }
th { cursor: pointer; background: #f4f4f4; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.failed td { background: #fde2e2; } .error { font-family: ui-monospace, monospace; font-size: 12px; white-space: pre-wrap; }";

// Sorts by the clicked column: numbers as numbers (data-v), the rest as
// text; a second click reverses.
const SCRIPT: &str = "document.querySelectorAll('th').forEach((th, col) => th.addEventListener('click', () => {
  const body = th.closest('table').tBodies[0];
  const rows = Array.from(body.rows);
  const dir = th.dataset.dir === 'asc' ? -1 : 1; th.dataset.dir = dir === 1 ? 'asc' : 'desc';
  const key = r => { const c = r.cells[col]; const v = c.dataset.v; return v !== undefined ? parseFloat(v) : c.textContent; };
  rows.sort((a, b) => { const x = key(a), y = key(b); return (x < y ? -1 : x > y ? 1 : 0) * dir; });
  rows.forEach(r => body.appendChild(r));
}));";

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

pub fn page(summary: &Value) -> String {
    let totals = &summary["totals"];
    let mut h = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>hlo-opt batch</title><style>{STYLE}</style></head><body>\n\
         <h1>hlo-opt batch</h1>\n<p>{} modules, {} failed; softmax raised {} forward, {} backward; {} contract violations. hlo-opt {}.</p>\n",
        totals["modules"],
        totals["failed"],
        totals["softmax_forward"],
        totals["softmax_backward"],
        totals["contract_violations"],
        escape(summary["tool_version"].as_str().unwrap_or_default()),
    );
    for u in summary["unread"].as_array().into_iter().flatten() {
        h.push_str(&format!(
            "<p class=\"error\">{}: {}; skipped.</p>\n",
            escape(u["path"].as_str().unwrap_or_default()),
            escape(u["error"].as_str().unwrap_or_default()),
        ));
    }
    h.push_str("<table><thead><tr><th>module</th><th>source</th><th>status</th><th>instructions</th><th>softmax fwd</th><th>softmax bwd</th><th>rewrites</th><th>contract</th><th>numerics</th><th>time (ms)</th><th>page</th></tr></thead><tbody>\n");
    for m in summary["modules"].as_array().into_iter().flatten() {
        let id = m["id"].as_str().unwrap_or_default();
        let failed = m["status"] != "ok";
        let num = |v: &Value| match v.as_f64() {
            Some(x) => format!("<td class=\"num\" data-v=\"{x}\">{v}</td>"),
            None => "<td class=\"num\" data-v=\"-1\">-</td>".to_string(),
        };
        let rewrites: Vec<String> = m["rewrites_by_pass"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(p, n)| format!("{} {n}", escape(p)))
            .collect();
        let link = |key: &str, text: &str| match m[key].as_str() {
            Some(name) => format!("<a href=\"{}\">{text}</a>", escape(name)),
            None => String::new(),
        };
        let status = match m["error"].as_str() {
            Some(e) => format!("failed<div class=\"error\">{}</div>", escape(e)),
            None => "ok".to_string(),
        };
        h.push_str(&format!(
            "<tr{}><td>{}</td><td>{}</td><td>{status}</td>{}{}{}<td>{}</td>{}<td>{}</td>{}<td>{}</td></tr>\n",
            if failed { " class=\"failed\"" } else { "" },
            if m["output"].is_string() { link("output", &escape(id)) } else { escape(id) },
            escape(m["source"]["kind"].as_str().unwrap_or_default()),
            num(&m["instructions_before"]),
            num(&m["softmax_forward"]),
            num(&m["softmax_backward"]),
            rewrites.join("<br>"),
            num(&m["contract_violations"]),
            escape(m["numerics"].as_str().unwrap_or_default()),
            num(&m["time_ms"]),
            link("page", "report"),
        ));
    }
    h.push_str("</tbody></table>\n<script>");
    h.push_str(SCRIPT);
    h.push_str("</script>\n</body></html>\n");
    h
}
