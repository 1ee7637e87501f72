//! Parse errors that point at the input: file, line, column, the line, a caret.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The file name as the user gave it (`<stdin>`, `<string>`, a path).
    pub file: String,
    /// 1-based.
    pub line: usize,
    /// 1-based, in characters.
    pub column: usize,
    pub message: String,
    /// The offending source line, without its newline.
    pub source_line: String,
}

impl ParseError {
    /// Builds an error at byte offset `pos` of `text`.
    pub fn at(file: &str, text: &str, pos: usize, message: impl Into<String>) -> ParseError {
        let pos = pos.min(text.len());
        let mut pos = pos;
        while !text.is_char_boundary(pos) {
            pos -= 1;
        }
        let line_start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
        let line = text[..line_start].bytes().filter(|&b| b == b'\n').count() + 1;
        let column = text[line_start..pos].chars().count() + 1;
        ParseError {
            file: file.to_string(),
            line,
            column,
            message: message.into(),
            source_line: text[line_start..line_end].to_string(),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}:{}:{}: error: {}",
            self.file, self.line, self.column, self.message
        )?;
        // Long lines (a 73 MB module has some) are cut around the column.
        let chars: Vec<char> = self.source_line.chars().collect();
        let col = self.column.saturating_sub(1);
        let (start, prefix) = if col > 100 {
            (col - 60, "...")
        } else {
            (0, "")
        };
        let end = (start + 160).min(chars.len());
        let suffix = if end < chars.len() { "..." } else { "" };
        let shown: String = chars[start.min(end)..end].iter().collect();
        writeln!(f, "{prefix}{shown}{suffix}")?;
        write!(f, "{}^", " ".repeat(prefix.len() + col - start))
    }
}

impl std::error::Error for ParseError {}
