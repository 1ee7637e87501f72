//! The reader the attribute syntaxes share: a cursor over a value's text
//! (blanks, punctuation, words, numbers, strings, lists, bracketed groups).

use super::PResult;
use crate::ir::SharedStr;
use crate::text::number::c_unescape;

/// A cursor over an attribute's text.
pub(crate) struct Cursor<'a> {
    s: &'a str,
    pub(crate) pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(s: &'a str) -> Cursor<'a> {
        Cursor { s, pos: 0 }
    }

    fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }

    pub(super) fn ws(&mut self) {
        self.pos += crate::text::blank_len(self.rest()).unwrap_or_else(|unclosed| unclosed);
    }

    pub(super) fn peek_is(&mut self, p: &str) -> bool {
        self.ws();
        self.rest().starts_with(p)
    }

    pub(super) fn eat(&mut self, p: &str) -> bool {
        let found = self.peek_is(p);
        if found {
            self.pos += p.len();
        }
        found
    }

    pub(super) fn expect(&mut self, p: &str) -> PResult<()> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(format!("expects '{p}'"))
        }
    }

    pub(super) fn word(&mut self) -> &'a str {
        self.ws();
        let r = self.rest();
        let n = r
            .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '-' || ch == '.'))
            .unwrap_or(r.len());
        self.pos += n;
        &r[..n]
    }

    /// A number's text (digits, sign, point, exponent, inf/nan).
    pub(super) fn number_word(&mut self) -> &'a str {
        self.ws();
        let r = self.rest();
        let n = r
            .find(|ch: char| !(ch.is_ascii_alphanumeric() || matches!(ch, '-' | '+' | '.')))
            .unwrap_or(r.len());
        self.pos += n;
        &r[..n]
    }

    pub(super) fn int(&mut self) -> PResult<i64> {
        let at = self.pos;
        let w = self.number_word();
        w.parse().map_err(|_| {
            self.pos = at;
            match w {
                "" => "expects an integer".to_string(),
                w => format!("expects an integer, not '{w}'"),
            }
        })
    }

    pub(super) fn boolean(&mut self) -> PResult<bool> {
        let at = self.pos;
        match self.word() {
            "true" => Ok(true),
            "false" => Ok(false),
            w => {
                self.pos = at;
                Err(format!("expects true or false, not '{w}'"))
            }
        }
    }

    /// A quoted string, decoded; a slice of `text` when it has no escapes.
    pub(super) fn string(&mut self, text: &SharedStr) -> PResult<SharedStr> {
        self.expect("\"")?;
        let start = self.pos;
        let b = self.s.as_bytes();
        let mut i = start;
        while i < b.len() && b[i] != b'"' {
            if b[i] == b'\\' {
                i += 1;
            }
            i += 1;
        }
        if i >= b.len() {
            return Err("unterminated string".into());
        }
        let body = &self.s[start..i];
        self.pos = i + 1;
        if !body.contains('\\') {
            return Ok(text.sub(start, i));
        }
        c_unescape(body)
            .map(SharedStr::from)
            .map_err(|at| format!("bad escape at offset {}", start + at))
    }

    pub(super) fn list<T>(
        &mut self,
        open: &str,
        close: &str,
        mut item: impl FnMut(&mut Self) -> PResult<T>,
    ) -> PResult<Vec<T>> {
        self.expect(open)?;
        let mut v = Vec::new();
        if self.eat(close) {
            return Ok(v);
        }
        loop {
            v.push(item(self)?);
            if self.eat(close) {
                return Ok(v);
            }
            self.expect(",")?;
        }
    }

    pub(super) fn ints(&mut self) -> PResult<Vec<i64>> {
        self.list("{", "}", Cursor::int)
    }

    pub(super) fn bracket_ints(&mut self) -> PResult<Vec<i64>> {
        self.list("[", "]", Cursor::int)
    }

    pub(super) fn int_lists(&mut self) -> PResult<Vec<Vec<i64>>> {
        self.list("{", "}", Cursor::ints)
    }

    pub(super) fn bools(&mut self) -> PResult<Vec<bool>> {
        self.list("{", "}", Cursor::boolean)
    }

    /// A balanced `{...}` group, whole.
    pub(super) fn group(&mut self) -> PResult<&'a str> {
        self.ws();
        let start = self.pos;
        let b = self.s.as_bytes();
        let mut depth = 0;
        let mut i = self.pos;
        while i < b.len() {
            match b[i] {
                b'"' => {
                    i += 1;
                    while i < b.len() && b[i] != b'"' {
                        if b[i] == b'\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                }
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        self.pos = i + 1;
                        return Ok(&self.s[start..=i]);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        Err("unbalanced braces".into())
    }
}
