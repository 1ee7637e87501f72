//! What a batch tells its user: a line per module on standard error as it
//! finishes (under a progress bar when that is a terminal), the totals,
//! and `summary.json` and `index.html` in OUT. The JSON's schema is in
//! docs/batch.md; keys are sorted and modules ordered by id, so two runs
//! diff line by line (but for `time_ms`).

use serde_json::{json, Value};
use std::io::IsTerminal;
use std::path::Path;
use std::sync::Mutex;

pub const SCHEMA: &str = "hlo-opt-batch/1";

/// The batch's summary files in OUT.
pub const JSON: &str = "summary.json";
pub const HTML: &str = "index.html";

/// The batch's rows, with their totals.
pub struct Summary {
    json: Value,
}

impl Summary {
    /// `unread`: the paths under the PATHs that could not be read, each
    /// `{"path", "error"}`, sorted by path.
    pub fn new(options: Value, modules: Vec<Value>, unread: Vec<Value>) -> Summary {
        let count = |key: &str| {
            modules
                .iter()
                .map(|m| m[key].as_u64().unwrap_or(0))
                .sum::<u64>()
        };
        let mut by_pass = serde_json::Map::new();
        for m in &modules {
            for (pass, n) in m["rewrites_by_pass"].as_object().into_iter().flatten() {
                let total = by_pass.get(pass).and_then(Value::as_u64).unwrap_or(0);
                by_pass.insert(pass.clone(), json!(total + n.as_u64().unwrap_or(0)));
            }
        }
        let failed = modules.iter().filter(|m| m["status"] != "ok").count();
        let numerics_failed = modules.iter().filter(|m| m["numerics"] == "failed").count();
        let totals = json!({
            "modules": modules.len(),
            "failed": failed,
            "instructions_before": count("instructions_before"),
            "instructions_after": count("instructions_after"),
            "softmax_forward": count("softmax_forward"),
            "softmax_backward": count("softmax_backward"),
            "rewrites_by_pass": by_pass,
            "contract_violations": count("contract_violations"),
            "numerics_failed": numerics_failed,
            "unread": unread.len(),
        });
        Summary {
            json: json!({
                "schema": SCHEMA,
                "tool_version": env!("CARGO_PKG_VERSION"),
                "options": options,
                "modules": modules,
                "unread": unread,
                "totals": totals,
            }),
        }
    }

    /// Whether every module ran and passed, and every path was read.
    pub fn all_passed(&self) -> bool {
        let totals = &self.json["totals"];
        totals["failed"] == 0 && totals["unread"] == 0
    }

    /// OUT/summary.json and OUT/index.html, each written whole or not at
    /// all.
    pub fn write(&self, out: &Path) -> Result<(), String> {
        let mut text = serde_json::to_string_pretty(&self.json).expect("a JSON value prints");
        text.push('\n');
        let page = super::index_html::page(&self.json);
        for (name, bytes) in [(JSON, text), (HTML, page)] {
            let path = out.join(name);
            crate::output::write_atomically(&path, |f| {
                use std::io::Write;
                f.write_all(bytes.as_bytes())
            })
            .map_err(|e: std::io::Error| format!("{}: error: {e}", path.display()))?;
        }
        Ok(())
    }

    /// The totals, for standard error.
    pub fn totals_text(&self) -> String {
        let t = &self.json["totals"];
        let by_pass: Vec<String> = t["rewrites_by_pass"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(p, n)| format!("{p} {n}"))
            .collect();
        let unread = match t["unread"].as_u64().unwrap_or(0) {
            0 => String::new(),
            1 => "; 1 path could not be read".to_string(),
            n => format!("; {n} paths could not be read"),
        };
        format!(
            "{} modules, {} failed; {} instructions; softmax raised {} forward, {} backward; rewrites: {}; {} contract violations{unread}\n",
            t["modules"],
            t["failed"],
            t["instructions_before"],
            t["softmax_forward"],
            t["softmax_backward"],
            if by_pass.is_empty() { "none".to_string() } else { by_pass.join(", ") },
            t["contract_violations"],
        )
    }
}

/// A line per module as it finishes; a bar when standard error is a
/// terminal.
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    heading_printed: Mutex<bool>,
}

impl Progress {
    pub fn new(total: usize) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(total as u64);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:40} {pos}/{len} modules, {elapsed} ({eta} left)",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            bar
        });
        Progress {
            bar,
            heading_printed: Mutex::new(false),
        }
    }

    pub fn finished(&self, row: &Value, reused: bool) {
        let mut text = String::new();
        {
            let mut printed = self
                .heading_printed
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if !*printed {
                text.push_str(&format!(
                    "{:<48} {:<10} {:>9} {:>4} {:>4} {:>10}  {}\n",
                    "module", "status", "instrs", "fwd", "bwd", "time", "numerics"
                ));
                *printed = true;
            }
        }
        let status = match (row["status"].as_str(), reused) {
            (Some("ok"), true) => "up to date",
            (Some(s), _) => s,
            (None, _) => "?",
        };
        text.push_str(&format!(
            "{:<48} {:<10} {:>9} {:>4} {:>4} {:>8.1} ms  {}\n",
            row["id"].as_str().unwrap_or_default(),
            status,
            row["instructions_before"]
                .as_u64()
                .map_or("-".to_string(), |n| n.to_string()),
            row["softmax_forward"].as_u64().unwrap_or(0),
            row["softmax_backward"].as_u64().unwrap_or(0),
            if reused {
                0.0
            } else {
                row["time_ms"].as_f64().unwrap_or(0.0)
            },
            row["numerics"].as_str().unwrap_or_default(),
        ));
        if let Some(error) = row["error"].as_str() {
            for line in error.lines() {
                text.push_str(&format!("    {line}\n"));
            }
        }
        match &self.bar {
            Some(bar) => {
                bar.suspend(|| crate::util::diag(&text));
                bar.inc(1);
            }
            None => crate::util::diag(&text),
        }
    }

    pub fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
