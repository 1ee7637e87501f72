//! Parse errors that point at the input: file, line, column, the line, a caret.

use crate::ir::SourcePos;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The file name as the user gave it (`<stdin>`, `<string>`, a path).
    pub file: String,
    /// 1-based.
    pub line: usize,
    /// 1-based, in characters.
    pub column: usize,
    pub message: String,
    /// The offending source line, without its newline; of a line longer
    /// than 64 KiB (a whole module can be one line), only the characters
    /// around the column.
    pub source_line: String,
    /// The characters of the line before `source_line` (0 unless cut).
    pub source_from: usize,
}

/// Lines longer than this keep only an excerpt around the column: an
/// error must not need memory in proportion to its input.
const LONG_LINE: usize = 1 << 16;
/// Characters an excerpt keeps on each side of the column (more than a
/// message shows).
const EXCERPT: usize = 1000;

impl ParseError {
    /// An error at `line` and `column` (1-based, in characters) of a line
    /// whose text is `line_text`.
    pub fn new(
        file: &str,
        line: usize,
        column: usize,
        message: impl Into<String>,
        line_text: &str,
    ) -> ParseError {
        let (source_from, source_line) = match line_text.len() <= LONG_LINE {
            true => (0, line_text.to_string()),
            false => {
                let from = column.saturating_sub(1 + EXCERPT);
                let start = line_text
                    .char_indices()
                    .nth(from)
                    .map_or(line_text.len(), |(i, _)| i);
                let end = line_text[start..]
                    .char_indices()
                    .nth(2 * EXCERPT)
                    .map_or(line_text.len(), |(i, _)| start + i);
                (from, line_text[start..end].to_string())
            }
        };
        ParseError {
            file: file.to_string(),
            line,
            column,
            message: message.into(),
            source_line,
            source_from,
        }
    }

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
        ParseError::new(file, line, column, message, &text[line_start..line_end])
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}:{}:{}: error: {}",
            self.file, self.line, self.column, self.message
        )?;
        // Long lines (a 73 MB module has some) are cut around the column,
        // walking only to the cut: a line may be most of the input.
        let col = self.column.saturating_sub(1);
        let (start, prefix) = if col > 100 {
            (col - 60, "...")
        } else {
            (0, "")
        };
        let mut rest = self
            .source_line
            .chars()
            .skip(start.saturating_sub(self.source_from));
        let shown: String = rest.by_ref().take(160).collect();
        let suffix = if rest.next().is_some() { "..." } else { "" };
        writeln!(f, "{prefix}{shown}{suffix}")?;
        write!(f, "{}^", " ".repeat(prefix.len() + col - start))
    }
}

impl std::error::Error for ParseError {}

/// Why a module could not be read from a reader.
#[derive(Debug)]
pub enum ReadError {
    Io(std::io::Error),
    /// Byte `offset` of the input is not UTF-8.
    NotUtf8 {
        offset: usize,
    },
    Parse(ParseError),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "{e}"),
            ReadError::NotUtf8 { offset } => write!(f, "not UTF-8 text (byte {offset})"),
            ReadError::Parse(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ReadError {}

impl From<std::io::Error> for ReadError {
    fn from(e: std::io::Error) -> ReadError {
        ReadError::Io(e)
    }
}

impl From<ParseError> for ReadError {
    fn from(e: ParseError) -> ReadError {
        ReadError::Parse(e)
    }
}

/// An error at an instruction of a module parsed earlier, as `file:line:col:
/// error: message` with the line and a caret, the line read again from
/// `path` (standard input cannot be read again: no line then).
pub fn located_error(
    file: &str,
    path: Option<&Path>,
    pos: Option<SourcePos>,
    message: &str,
) -> String {
    let Some(pos) = pos else {
        return format!("{file}: error: {message}");
    };
    let (line, column) = (pos.line as usize, pos.column as usize);
    match path.and_then(|p| read_line(p, line)) {
        Some(source_line) => ParseError::new(file, line, column, message, &source_line).to_string(),
        None => format!("{file}:{line}:{column}: error: {message}"),
    }
}

/// Line `n` (from 1) of a regular file (a FIFO read once is not there
/// any more, and opening it again would wait for a writer), without its
/// newline.
fn read_line(path: &Path, n: usize) -> Option<String> {
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let mut reader = BufReader::new(File::open(path).ok()?);
    let mut line = Vec::new();
    for _ in 0..n {
        line.clear();
        if reader.read_until(b'\n', &mut line).ok()? == 0 {
            return None;
        }
    }
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    Some(String::from_utf8_lossy(&line).into_owned())
}

#[cfg(test)]
mod tests {
    use super::ParseError;

    /// A line past 64 KiB keeps only an excerpt, and the message shows
    /// the same cut of it as of the whole line.
    #[test]
    fn a_long_lines_excerpt_shows_what_the_whole_line_would() {
        let line: String = (0..200_000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let long = format!("x\n{line}\ny");
        for column in [1, 90, 150_000, 200_000, 200_001] {
            let pos = 2 + column - 1;
            let e = ParseError::at("f", &long, pos, "m");
            assert!(e.source_line.len() <= 2001, "{}", e.source_line.len());
            let col = column - 1;
            let start = if col > 100 { col - 60 } else { 0 };
            let end = (start + 160).min(line.len());
            let prefix = if start > 0 { "..." } else { "" };
            let suffix = if end < line.len() { "..." } else { "" };
            let caret = " ".repeat(prefix.len() + col - start);
            let want = format!(
                "f:2:{column}: error: m\n{prefix}{}{suffix}\n{caret}^",
                &line[start.min(end)..end]
            );
            assert_eq!(e.to_string(), want, "column {column}");
        }
    }
}
