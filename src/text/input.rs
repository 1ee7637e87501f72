//! The parser's input, cut into windows of whole computations so that a
//! module is read without ever holding its text whole.
//!
//! A window ends after a line that starts with `}` (XLA's printer closes a
//! computation so) when what follows does not continue it. A cut in the
//! wrong place (a `}` line inside a multi-line literal) only makes the
//! window's parse fail; the parser then reads the rest of the input as one
//! window (see `parse_windows` in the parser).

use memchr::memmem;
use std::io::{self, BufRead};

/// Bytes read from a reader at a time.
const CHUNK: usize = 1 << 20;

/// Where the parser's text comes from.
pub(super) trait Source {
    /// The bytes read and not taken yet.
    fn available(&self) -> &[u8];
    /// Reads more (nothing at the end of the input).
    fn fill(&mut self) -> io::Result<()>;
    /// Whether everything has been read.
    fn at_end(&self) -> bool;
    /// Takes the first `n` available bytes (`n` at a line's end or at the
    /// end) into `window`, replacing its text.
    fn take(&mut self, n: usize, window: &mut String) -> Result<(), TakeError>;
}

/// Why a window could not be taken.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum TakeError {
    /// Byte `i` of the window is not UTF-8.
    NotUtf8(usize),
    /// No memory for the window's copy (text with no end of a computation
    /// in gigabytes): an error, not an abort.
    OutOfMemory,
}

/// `window` holding a copy of `text`, if there is memory for it.
fn copy_into(window: &mut String, text: &str) -> Result<(), TakeError> {
    window.clear();
    window
        .try_reserve(text.len())
        .map_err(|_| TakeError::OutOfMemory)?;
    window.push_str(text);
    Ok(())
}

/// Text already in memory.
pub(super) struct TextSource<'t> {
    rest: &'t str,
}

impl<'t> TextSource<'t> {
    pub(super) fn new(text: &'t str) -> TextSource<'t> {
        TextSource { rest: text }
    }
}

impl Source for TextSource<'_> {
    fn available(&self) -> &[u8] {
        self.rest.as_bytes()
    }

    fn fill(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn at_end(&self) -> bool {
        true
    }

    /// Already UTF-8: `n` only needs to fall on a character boundary.
    fn take(&mut self, n: usize, window: &mut String) -> Result<(), TakeError> {
        let (text, rest) = match self.rest.split_at_checked(n) {
            Some(parts) => parts,
            None => return Err(TakeError::NotUtf8(0)),
        };
        copy_into(window, text)?;
        self.rest = rest;
        Ok(())
    }
}

/// Text read from a reader, a chunk at a time.
pub(super) struct ReaderSource<R> {
    reader: R,
    buf: Vec<u8>,
    /// Where the bytes not taken yet start in `buf`.
    start: usize,
    end: bool,
}

impl<R: BufRead> ReaderSource<R> {
    pub(super) fn new(reader: R) -> ReaderSource<R> {
        ReaderSource {
            reader,
            buf: Vec::new(),
            start: 0,
            end: false,
        }
    }
}

impl<R: BufRead> Source for ReaderSource<R> {
    fn available(&self) -> &[u8] {
        self.buf.get(self.start..).unwrap_or_default()
    }

    fn fill(&mut self) -> io::Result<()> {
        // Windows taken leave the buffer only now, so each byte moves once.
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        loop {
            match self.reader.fill_buf() {
                Ok([]) => {
                    self.end = true;
                    return Ok(());
                }
                Ok(chunk) => {
                    let n = chunk.len().min(CHUNK);
                    // Text that never ends a computation (`/dev/zero`)
                    // grows the buffer until memory runs out: an error,
                    // as `read_to_end` gives, not an abort.
                    self.buf
                        .try_reserve(n)
                        .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
                    self.buf.extend_from_slice(&chunk[..n]);
                    self.reader.consume(n);
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn at_end(&self) -> bool {
        self.end
    }

    fn take(&mut self, n: usize, window: &mut String) -> Result<(), TakeError> {
        let n = n.min(self.buf.len() - self.start);
        if self.start == 0 && self.buf.len() - n < n {
            // A window longer than what was read after it (a large
            // computation) moves out of the buffer rather than being
            // copied: its text is never in memory twice.
            let rest = self.buf.split_off(n);
            let bytes = std::mem::replace(&mut self.buf, rest);
            *window = String::from_utf8(bytes)
                .map_err(|e| TakeError::NotUtf8(e.utf8_error().valid_up_to()))?;
            return Ok(());
        }
        let bytes = &self.buf[self.start..self.start + n];
        let text = std::str::from_utf8(bytes).map_err(|e| TakeError::NotUtf8(e.valid_up_to()))?;
        copy_into(window, text)?;
        self.start += n;
        Ok(())
    }
}

/// Where the window at the start of the available bytes ends.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Cut {
    /// After this many bytes.
    At(usize),
    /// Not known without more input; search again from this offset.
    NeedMore(usize),
}

/// The end of the window that starts at `avail[0]`: just past the first
/// line at or after `from` that starts with `}`, unless the next
/// non-blank byte goes on with the computation (`, execution_thread=` or
/// a comment); then the next such line. At the end of the input a window
/// takes trailing blanks with it.
pub(super) fn window_end(avail: &[u8], from: usize, at_end: bool) -> Cut {
    let mut i = from;
    loop {
        let Some(brace) = avail
            .get(i..)
            .and_then(|rest| memmem::find(rest, b"\n}"))
            .map(|j| i + j + 1)
        else {
            return if at_end {
                Cut::At(avail.len())
            } else {
                // A `\n` at the very end may be followed by `}`.
                Cut::NeedMore(avail.len().saturating_sub(1).max(from))
            };
        };
        let Some(newline) = memchr::memchr(b'\n', &avail[brace..]).map(|j| brace + j) else {
            return if at_end {
                Cut::At(avail.len())
            } else {
                Cut::NeedMore(brace - 1)
            };
        };
        let end = newline + 1;
        match avail[end..]
            .iter()
            .find(|c| !matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
        {
            None if at_end => return Cut::At(avail.len()),
            None => return Cut::NeedMore(brace - 1),
            Some(b',' | b'/') => i = newline,
            Some(_) => return Cut::At(end),
        }
    }
}

/// Whether the text, without its trailing spaces and tabs, ends with a
/// blank line (as XLA's printer ends a module), tracked over the windows.
#[derive(Default)]
pub(super) struct TextEnd {
    /// The last byte so far.
    last: Option<u8>,
    /// The last byte that is not a space or a tab, and the one before it.
    end: [Option<u8>; 2],
}

impl TextEnd {
    pub(super) fn update(&mut self, bytes: &[u8]) {
        if let Some(i) = bytes.iter().rposition(|&c| c != b' ' && c != b'\t') {
            let before = match i {
                0 => self.last,
                _ => Some(bytes[i - 1]),
            };
            self.end = [before, Some(bytes[i])];
        }
        if let Some(&c) = bytes.last() {
            self.last = Some(c);
        }
    }

    pub(super) fn blank_line(&self) -> bool {
        self.end == [Some(b'\n'), Some(b'\n')]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_end_after_a_closing_brace_line() {
        let t = b"HloModule m\n\na {\n  x = f32[] parameter(0)\n}\n\nENTRY e {\n  y = f32[] parameter(0)\n}\n\n";
        let Cut::At(n) = window_end(t, 0, false) else {
            panic!("cut expected")
        };
        assert_eq!(&t[n..n + 7], b"\nENTRY ");
        assert_eq!(window_end(&t[n..], 0, true), Cut::At(t.len() - n));
        // Without the rest of the input the end is not known yet.
        assert!(matches!(window_end(&t[..n], 0, false), Cut::NeedMore(_)));
        assert!(matches!(
            window_end(&t[..n - 1], 0, false),
            Cut::NeedMore(_)
        ));
    }

    #[test]
    fn a_computation_that_goes_on_is_not_cut() {
        let t = b"a {\n  x = f32[] parameter(0)\n}\n, execution_thread=\"t\"\nb {\n}\nc";
        let Cut::At(n) = window_end(t, 0, false) else {
            panic!("cut expected")
        };
        assert_eq!(&t[n..], b"c");
        let t = b"a {\n}\n// note\nb {\n}\nc";
        assert_eq!(window_end(t, 0, true), Cut::At(t.len() - 1));
    }

    #[test]
    fn the_text_end_is_tracked_over_windows() {
        let mut e = TextEnd::default();
        for w in [&b"a}\n  "[..], b"\n", b"  "] {
            e.update(w);
        }
        assert!(!e.blank_line(), "a space before the last newline");
        let mut e = TextEnd::default();
        for w in [&b"a}\n"[..], b"\n", b" \t"] {
            e.update(w);
        }
        assert!(e.blank_line());
    }
}
