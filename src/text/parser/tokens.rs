//! The tokens of the text: blanks and comments, punctuation, keywords,
//! names, integers, quoted strings and the raw text of an attribute
//! value; and errors, located in the whole text.

use super::{PResult, Parser, MAX_DEPTH};
use crate::ir::is_name_byte;
use crate::ir::SharedStr;
use crate::text::error::ParseError;
use crate::text::number::c_unescape;

/// The bytes [`Parser::raw_value`] looks at; it skips the others in one
/// scan.
const RAW_VALUE_STOPS: [bool; 256] = byte_set(b"\"{[(}]),\n\r");

/// A table of the bytes in `bytes`, for one lookup per byte in a scan.
pub(super) const fn byte_set(bytes: &[u8]) -> [bool; 256] {
    let mut table = [false; 256];
    let mut k = 0;
    while k < bytes.len() {
        table[bytes[k] as usize] = true;
        k += 1;
    }
    table
}

impl<'a> Parser<'a> {
    /// `s`, a slice of the input, as a string of the module.
    pub(super) fn shared(&self, s: &'a str) -> SharedStr {
        let start = (s.as_ptr() as usize).wrapping_sub(self.text.as_ptr() as usize);
        SharedStr::slice(&self.src, start, start.wrapping_add(s.len())).unwrap_or_else(|| s.into())
    }

    #[cold]
    pub(super) fn err_at<T>(&self, pos: usize, msg: impl Into<String>) -> PResult<T> {
        Err(Box::new(self.error_at(pos, msg)))
    }

    /// An error at `pos` in the window, located in the whole text.
    pub(super) fn error_at(&self, pos: usize, msg: impl Into<String>) -> ParseError {
        let mut e = ParseError::at(self.file, self.text, pos, msg);
        e.line += self.at.line;
        e
    }

    pub(super) fn err<T>(&self, msg: impl Into<String>) -> PResult<T> {
        self.err_at(self.pos, msg)
    }

    pub(super) fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.err(format!("maximum nesting depth ({MAX_DEPTH}) exceeded"));
        }
        Ok(())
    }

    pub(super) fn leave(&mut self) {
        self.depth -= 1;
    }

    #[inline(always)]
    pub(super) fn skip_ws(&mut self) -> PResult<()> {
        match self.b.get(self.pos) {
            // One space before a token, the common case, without a call.
            Some(b' ')
                if !matches!(
                    self.b.get(self.pos + 1),
                    Some(b' ' | b'\t' | b'\n' | b'\r' | b'/')
                ) =>
            {
                self.pos += 1;
                Ok(())
            }
            Some(b' ' | b'\t' | b'\n' | b'\r' | b'/') => self.skip_ws_slow(),
            _ => Ok(()),
        }
    }

    // Kept out of line: inlined, its frame made every `skip_ws` call save
    // six registers and reserve stack even for the one-space case (a third
    // of `skip_ws`'s samples were that prologue).
    #[inline(never)]
    fn skip_ws_slow(&mut self) -> PResult<()> {
        match crate::text::blank_len(&self.text[self.pos..]) {
            Ok(n) => {
                self.pos += n;
                Ok(())
            }
            Err(at) => self.err_at(self.pos + at, "/* unterminated comment"),
        }
    }

    #[inline]
    pub(super) fn peek(&mut self) -> PResult<Option<u8>> {
        self.skip_ws()?;
        Ok(self.b.get(self.pos).copied())
    }

    #[inline]
    pub(super) fn eat(&mut self, c: u8) -> PResult<bool> {
        if self.peek()? == Some(c) {
            self.pos += 1;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// The items of a list whose opening bracket is read, up to `close`,
    /// separated by commas (`between` says where a comma was expected).
    pub(super) fn items_until<T>(
        &mut self,
        close: u8,
        between: &str,
        mut item: impl FnMut(&mut Self) -> PResult<T>,
    ) -> PResult<Vec<T>> {
        let mut items = Vec::new();
        if !self.eat(close)? {
            loop {
                items.push(item(self)?);
                if self.eat(close)? {
                    break;
                }
                self.expect(b',', between)?;
            }
        }
        Ok(items)
    }

    pub(super) fn expect(&mut self, c: u8, what: &str) -> PResult<()> {
        if self.eat(c)? {
            Ok(())
        } else {
            let found = self.describe_here();
            self.err(format!("expects '{}' {what}, but sees {found}", c as char))
        }
    }

    #[cold]
    pub(super) fn describe_here(&self) -> String {
        match self.b.get(self.pos) {
            None => "end of file".to_string(),
            Some(_) => {
                let rest = &self.text[self.pos..];
                let end = rest
                    .char_indices()
                    .find(|&(i, ch)| i > 0 && !(ch.is_ascii_alphanumeric() || "_.-".contains(ch)))
                    .map_or(rest.len(), |(i, _)| i);
                let end = end.clamp(rest.chars().next().map_or(0, char::len_utf8), 40);
                format!("'{}'", &rest[..end.min(rest.len())])
            }
        }
    }

    pub(super) fn eat_keyword(&mut self, kw: &str) -> PResult<bool> {
        self.skip_ws()?;
        let end = self.pos + kw.len();
        if self.b.get(self.pos..end) == Some(kw.as_bytes())
            && !self.b.get(end).is_some_and(|&c| is_name_byte(c))
        {
            self.pos = end;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// An identifier-like word at the cursor, not consumed.
    #[inline]
    pub(super) fn peek_word(&mut self) -> PResult<&'a str> {
        self.skip_ws()?;
        let start = self.pos;
        Ok(&self.text[start..name_end(self.b, start)])
    }

    /// A name, with an optional `%` sigil (recorded for the print style).
    pub(super) fn name(&mut self, what: &str) -> PResult<&'a str> {
        self.skip_ws()?;
        if self.b.get(self.pos) == Some(&b'%') {
            self.pos += 1;
            self.st.saw_percent = true;
        }
        let start = self.pos;
        if !self.b.get(start).is_some_and(|&c| is_name_byte(c)) {
            let found = self.describe_here();
            return self.err(format!("expects {what}, but sees {found}"));
        }
        let end = name_end(self.b, start);
        self.pos = end;
        Ok(&self.text[start..end])
    }

    pub(super) fn int(&mut self) -> PResult<i64> {
        self.skip_ws()?;
        let start = self.pos;
        let mut end = start;
        if self.b.get(end) == Some(&b'-') {
            end += 1;
        }
        while end < self.b.len() && self.b[end].is_ascii_digit() {
            end += 1;
        }
        match self.text[start..end].parse::<i64>() {
            Ok(v) if end > start => {
                self.pos = end;
                Ok(v)
            }
            _ => {
                let found = self.describe_here();
                self.err(format!("expects integer, but sees {found}"))
            }
        }
    }

    /// A quoted string, decoded.
    pub(super) fn string(&mut self) -> PResult<String> {
        self.skip_ws()?;
        let start = self.pos;
        if self.b.get(start) != Some(&b'"') {
            let found = self.describe_here();
            return self.err(format!("expects string, but sees {found}"));
        }
        let end = self.string_end(start)?;
        self.pos = end;
        match c_unescape(&self.text[start + 1..end - 1]) {
            Ok(s) => Ok(s),
            Err(off) => self.err_at(start + 1 + off, "invalid escape sequence in string"),
        }
    }

    /// Byte offset just past the closing quote of the string at `start`.
    fn string_end(&self, start: usize) -> PResult<usize> {
        let mut i = start + 1;
        while let Some(off) = self
            .b
            .get(i..)
            .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
        {
            i += off;
            if self.b[i] == b'"' {
                return Ok(i + 1);
            }
            i += 2; // skip the escaped byte
        }
        self.err_at(start, "unterminated string")
    }

    /// The text of an attribute value this parser does not model: up to the
    /// next `,` or line end outside brackets and strings, or an unmatched
    /// closing bracket.
    pub(super) fn raw_value(&mut self) -> PResult<&'a str> {
        self.skip_ws()?;
        let start = self.pos;
        let mut stack: smallvec::SmallVec<[u8; 16]> = smallvec::SmallVec::new();
        let mut i = start;
        while i < self.b.len() {
            // Most bytes of a value are none of those matched below.
            let plain = self.b.get(i..).unwrap_or_default();
            i += plain
                .iter()
                .position(|&c| RAW_VALUE_STOPS[c as usize])
                .unwrap_or(plain.len());
            let Some(&c) = self.b.get(i) else { break };
            match c {
                b'"' => {
                    i = self.string_end(i)?;
                    continue;
                }
                b'{' | b'[' | b'(' => stack.push(c),
                b'}' | b']' | b')' => {
                    let open = match c {
                        b'}' => b'{',
                        b']' => b'[',
                        _ => b'(',
                    };
                    match stack.pop() {
                        Some(o) if o == open => {}
                        Some(_) => return self.err_at(i, format!("unbalanced '{}'", c as char)),
                        None => break,
                    }
                }
                b',' | b'\n' | b'\r' if stack.is_empty() => break,
                _ => {}
            }
            i += 1;
        }
        if !stack.is_empty() {
            return self.err_at(start, "unterminated attribute value");
        }
        let mut end = i;
        while end > start && matches!(self.b[end - 1], b' ' | b'\t') {
            end -= 1;
        }
        if end == start {
            return self.err("expects attribute value");
        }
        self.pos = end;
        Ok(&self.text[start..end])
    }
}

/// Where the name characters starting at `start` end.
#[inline]
fn name_end(b: &[u8], start: usize) -> usize {
    let rest = b.get(start..).unwrap_or_default();
    start
        + rest
            .iter()
            .position(|&c| !is_name_byte(c))
            .unwrap_or(rest.len())
}
