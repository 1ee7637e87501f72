//! `result_accuracy={tolerance={atol=0,rtol=0,ulps=1}}` or
//! `{mode=highest}`: read and printed.

use super::{push_int, Cursor, PResult};
use crate::ir::attrs::*;
use crate::text::number::format_f64;

/// `{tolerance={atol=..,rtol=..,ulps=..}}` or `{mode=...}` (checked by
/// [`checks::check_result_accuracy`] first).
pub(super) fn result_accuracy(v: &str) -> PResult<ResultAccuracy> {
    let mut c = Cursor::new(v);
    c.expect("{")?;
    if c.eat("mode") {
        c.expect("=")?;
        let w = c.word();
        let mode = match w {
            "default" => 0,
            "highest" => 1,
            _ => return Err(format!("unknown result accuracy mode {w}")),
        };
        return Ok(ResultAccuracy::Mode(mode));
    }
    c.expect("tolerance")?;
    c.expect("=")?;
    c.expect("{")?;
    let (mut atol, mut rtol, mut ulps) = (0.0, 0.0, 0);
    while !c.eat("}") {
        let key = c.word();
        c.expect("=")?;
        match key {
            "atol" | "rtol" => {
                let w = c.number_word();
                let x: f64 = w.parse().map_err(|_| format!("bad {key} {w}"))?;
                if key == "atol" {
                    atol = x
                } else {
                    rtol = x
                }
            }
            "ulps" => ulps = c.int()?,
            k => return Err(format!("unknown tolerance field {k}")),
        }
        c.eat(",");
    }
    Ok(ResultAccuracy::Tolerance { atol, rtol, ulps })
}

pub(super) fn result_accuracy_text(t: &mut String, r: &ResultAccuracy) {
    match r {
        ResultAccuracy::Tolerance { atol, rtol, ulps } => {
            t.push_str("{tolerance={atol=");
            format_f64(*atol, t);
            t.push_str(",rtol=");
            format_f64(*rtol, t);
            t.push_str(",ulps=");
            push_int(t, *ulps);
            t.push_str("}}");
        }
        ResultAccuracy::Mode(m) => {
            t.push_str("{mode=");
            t.push_str(if *m == 1 { "highest" } else { "default" });
            t.push('}');
        }
    }
}
