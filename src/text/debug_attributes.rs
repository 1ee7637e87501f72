//! The module header's `debug_attributes={...}`: for each original array,
//! what the `xla.debug.Log` calls on it ask for.
//!
//! ```text
//! debug_attributes={
//!   {"constant"}:({log_mode=default,callback_id=123,partitioned=true}),
//!   {"tuple.2" {1}}:({callback_id=1},{callback_id=2,op_id=1})
//! }
//! ```
//!
//! The text parser checks the table with [`parse`]; the proto writer and
//! reader go through [`DebugAttributeEntry`], so the syntax lives here only.

use super::blank_len;
use super::number::{c_escape, c_unescape};

pub use crate::ir::attrs::{DebugAttributeEntry, DebugAttributeSet, LogMode};

/// Reads the value of `debug_attributes=` (from its `{`). An error gives
/// the byte offset into `s` where reading stopped, and what it expected.
pub fn parse(s: &str) -> Result<Vec<DebugAttributeEntry>, (usize, String)> {
    let mut c = Cursor { s, pos: 0 };
    c.table().map_err(|e| (c.pos, e))
}

/// The table as XLA prints it: one entry per line, each set with the
/// fields not at their default, in the proto's order.
pub fn print(table: &[DebugAttributeEntry]) -> String {
    let mut t = String::from("{\n");
    for (i, e) in table.iter().enumerate() {
        if i > 0 {
            t.push_str(",\n");
        }
        // The name as `origin={...}` prints it: instruction names need no
        // escapes.
        t.push_str("  {\"");
        t.push_str(&e.instruction_name);
        t.push('"');
        if !e.shape_index.is_empty() {
            let index: Vec<String> = e.shape_index.iter().map(i64::to_string).collect();
            t.push_str(&format!(" {{{}}}", index.join(",")));
        }
        t.push_str("}:(");
        for (j, d) in e.sets.iter().enumerate() {
            if j > 0 {
                t.push(',');
            }
            let mut fields: Vec<String> = Vec::new();
            if d.log_mode != LogMode::None {
                fields.push(format!("log_mode={}", d.log_mode.name()));
            }
            if d.callback_id != 0 {
                fields.push(format!("callback_id={}", d.callback_id));
            }
            if d.op_id != 0 {
                fields.push(format!("op_id={}", d.op_id));
            }
            if d.partitioned {
                fields.push("partitioned=true".into());
            }
            if !d.operands_sharding.is_empty() {
                let mut q = String::from("operands_sharding=\"");
                c_escape(&d.operands_sharding, &mut q);
                q.push('"');
                fields.push(q);
            }
            t.push('{');
            t.push_str(&fields.join(","));
            t.push('}');
        }
        t.push(')');
    }
    t.push_str("\n}");
    t
}

struct Cursor<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }

    /// Skips blanks and comments (up to an unclosed `/*`, which then
    /// fails to parse).
    fn ws(&mut self) {
        self.pos += blank_len(self.rest()).unwrap_or_else(|unclosed| unclosed);
    }

    fn eat(&mut self, p: &str) -> bool {
        self.ws();
        let found = self.rest().starts_with(p);
        if found {
            self.pos += p.len();
        }
        found
    }

    fn expect(&mut self, p: &str) -> Result<(), String> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(format!("expects '{p}'"))
        }
    }

    fn word(&mut self) -> &'a str {
        self.ws();
        let r = self.rest();
        let n = r
            .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '-'))
            .unwrap_or(r.len());
        self.pos += n;
        &r[..n]
    }

    fn int(&mut self) -> Result<i64, String> {
        let at = self.pos;
        let w = self.word();
        w.parse().map_err(|_| {
            self.pos = at;
            match w {
                "" => "expects an integer".to_string(),
                w => format!("expects an integer, not '{w}'"),
            }
        })
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect("\"")?;
        let r = self.rest();
        let b = r.as_bytes();
        let mut i = 0;
        while i < b.len() && b[i] != b'"' {
            i += if b[i] == b'\\' { 2 } else { 1 };
        }
        if i >= b.len() {
            return Err("unterminated string".into());
        }
        let text = c_unescape(&r[..i]).map_err(|o| {
            self.pos += o;
            "bad escape in a string".to_string()
        })?;
        self.pos += i + 1;
        Ok(text)
    }

    fn table(&mut self) -> Result<Vec<DebugAttributeEntry>, String> {
        let mut table = Vec::new();
        self.expect("{")?;
        if !self.eat("}") {
            loop {
                table.push(self.entry()?);
                if self.eat("}") {
                    break;
                }
                self.expect(",")?;
            }
        }
        self.ws();
        if !self.rest().is_empty() {
            return Err("unexpected text after the table".into());
        }
        Ok(table)
    }

    fn entry(&mut self) -> Result<DebugAttributeEntry, String> {
        let mut e = DebugAttributeEntry::default();
        self.expect("{")?;
        e.instruction_name = self.string()?;
        if !self.eat("}") {
            self.expect("{")?;
            if !self.eat("}") {
                loop {
                    e.shape_index.push(self.int()?);
                    if self.eat("}") {
                        break;
                    }
                    self.expect(",")?;
                }
            }
            self.expect("}")?;
        }
        self.expect(":")?;
        self.expect("(")?;
        if !self.eat(")") {
            loop {
                e.sets.push(self.set()?);
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        Ok(e)
    }

    fn set(&mut self) -> Result<DebugAttributeSet, String> {
        let mut d = DebugAttributeSet::default();
        self.expect("{")?;
        if self.eat("}") {
            return Ok(d);
        }
        loop {
            self.ws();
            let at = self.pos;
            let key = self.word();
            if key.is_empty() {
                return Err("expects an attribute name".into());
            }
            self.expect("=")?;
            self.ws();
            let value_at = self.pos;
            match key {
                "log_mode" => {
                    let mode = self.word();
                    d.log_mode = LogMode::from_name(mode).ok_or_else(|| {
                        self.pos = value_at;
                        format!("Invalid debug_log_mode value: {mode}")
                    })?;
                }
                "callback_id" => d.callback_id = self.int()?,
                "op_id" => d.op_id = self.int()?,
                "partitioned" => {
                    d.partitioned = match self.word() {
                        "true" => true,
                        "false" => false,
                        w => {
                            self.pos = value_at;
                            return Err(format!(
                                "expects true or false for partitioned, not '{w}'"
                            ));
                        }
                    }
                }
                "operands_sharding" => d.operands_sharding = self.string()?,
                _ => {
                    self.pos = at;
                    return Err(format!("unknown debug attribute '{key}'"));
                }
            }
            if self.eat("}") {
                return Ok(d);
            }
            self.expect(",")?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_xla_s_forms_and_prints_them_back() {
        let text = "{\n  {\"constant\"}:({log_mode=default,callback_id=123,partitioned=true})\n}";
        let table = parse(text).unwrap();
        assert_eq!(table[0].sets[0].log_mode, LogMode::Default);
        assert_eq!(print(&table), text);
        // Defaults written out, several sets and entries, a shape index.
        let table = parse(
            "{ {\"A\"}:({log_mode=default,callback_id=1,op_id=0,partitioned=false}),\
             {\"B\" {1,0}}:({callback_id=1},{log_mode=GUARANTEED}) }",
        )
        .unwrap();
        assert_eq!(
            print(&table),
            "{\n  {\"A\"}:({log_mode=default,callback_id=1}),\n  \
             {\"B\" {1,0}}:({callback_id=1},{log_mode=guaranteed})\n}"
        );
    }

    #[test]
    fn comments_are_blanks() {
        let table =
            parse("{ /* logged */ {\"c\"}:({log_mode=default, // why\n callback_id=1}) }").unwrap();
        assert_eq!(table[0].sets[0].callback_id, 1);
    }

    #[test]
    fn every_log_mode_is_its_proto_number() {
        for (n, name) in [
            "none",
            "default",
            "fusion_debugger",
            "no_fusion",
            "guaranteed",
        ]
        .into_iter()
        .enumerate()
        {
            let mode = LogMode::from_name(name).unwrap();
            assert_eq!(mode.number(), n as i32);
            assert_eq!(LogMode::from_number(n as i32), Some(mode));
            assert_eq!(mode.name(), name);
        }
        assert_eq!(LogMode::from_number(5), None);
    }

    #[test]
    fn bad_tables_are_errors() {
        let bad = |s: &str| parse(s).unwrap_err().1;
        assert_eq!(
            parse("{ {\"c\"}:({log_mode=invalid_mode}) }").unwrap_err(),
            (19, "Invalid debug_log_mode value: invalid_mode".to_string())
        );
        assert!(bad("{ {\"c\"}:({partitioned=yes}) }").contains("partitioned"));
        assert!(bad("{ {\"c\"}:({colour=1}) }").contains("unknown debug attribute 'colour'"));
        assert!(bad("{ {\"c\"}:({callback_id=x}) }").contains("integer"));
        assert!(bad("{ {\"c\"}({}) }").contains("expects ':'"));
        assert!(bad("{ {\"c}:({}) }").contains("unterminated"));
        assert!(bad("{ {\"c\"}:({}) } x").contains("unexpected text"));
        assert_eq!(parse("{ {\"c\"}:({colour=1}) }").unwrap_err().0, 10);
        assert_eq!(
            bad("{ {\"c\"}:({callback_id=1,}) }"),
            "expects an attribute name"
        );
        assert_eq!(bad("{ {\"c\"}:({op_id=}) }"), "expects an integer");
    }
}
