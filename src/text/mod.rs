//! HLO text: the parser and the printer.

pub mod attrs;
pub mod checks;
pub mod debug_attributes;
pub mod error;
mod input;
pub mod number;
pub mod parser;
pub mod printer;

pub use error::{ParseError, ReadError};
pub use parser::{parse_module, parse_module_from_reader, parse_module_owned};
pub use printer::{print_module, print_module_with, write_module};

/// How many bytes of blanks and comments (`/* ... */`, `// ...` to the end
/// of the line) `s` starts with, as XLA's lexer skips them; `Err` with the
/// offset of a `/*` that is never closed.
#[inline]
pub(crate) fn blank_len(s: &str) -> Result<usize, usize> {
    let b = s.as_bytes();
    let mut i = 0;
    loop {
        match b.get(i) {
            Some(b' ' | b'\t' | b'\n' | b'\r') => i += 1,
            Some(b'/') if b.get(i + 1) == Some(&b'*') => match s[i + 2..].find("*/") {
                Some(e) => i += e + 4,
                None => return Err(i),
            },
            Some(b'/') if b.get(i + 1) == Some(&b'/') => {
                i = s[i..].find('\n').map_or(b.len(), |e| i + e);
            }
            _ => return Ok(i),
        }
    }
}
