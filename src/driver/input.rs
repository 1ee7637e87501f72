//! Reading a module from a file or standard input, as HLO text or a
//! binary proto, and writing one: what `hlo-opt`, `hlo-opt eval` and
//! `hlo-opt batch` share.

use crate::text::{parse_module_from_reader, parse_module_owned, ReadError};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// The read buffer: large enough that the parser's window refills rarely.
const CHUNK: usize = 1 << 20;

/// Reads the input as HLO text or as a binary proto (`--input-format`,
/// else a `.pb` extension, else the content: neuronx-distributed names its
/// binary protos `.hlo`). Text is parsed as it is read, never held whole.
pub fn read_module_input(
    input: &str,
    format: Option<&str>,
) -> Result<(crate::ir::Module, String), String> {
    let file_name = if input == "-" { "<stdin>" } else { input }.to_string();
    let read_error = |e: std::io::Error| format!("{file_name}: error: {e}");
    // A regular file's own handle too, for positioned reads.
    let mut file = None;
    let mut reader: Box<dyn BufRead> = if input == "-" {
        Box::new(BufReader::with_capacity(CHUNK, std::io::stdin().lock()))
    } else {
        let f = std::fs::File::open(input).map_err(read_error)?;
        if f.metadata().is_ok_and(|m| m.is_file()) {
            file = Some(f.try_clone().map_err(read_error)?);
        }
        Box::new(BufReader::with_capacity(CHUNK, f))
    };
    let ext = Path::new(input).extension().and_then(|e| e.to_str());
    let streamed = match (format, ext) {
        (Some(f), _) => f == "text",
        (None, Some("pb")) => false,
        _ => crate::proto::head_looks_like_text(reader.fill_buf().map_err(read_error)?),
    };
    let not_utf8 = |offset: usize| {
        format!(
            "{file_name}: error: not UTF-8 text (byte {offset}); for a binary proto use --input-format proto"
        )
    };
    if streamed {
        let module = parse_module_from_reader(reader, &file_name).map_err(|e| match e {
            ReadError::Parse(e) => e.to_string(),
            ReadError::NotUtf8 { offset } => not_utf8(offset),
            ReadError::Io(e) => read_error(e),
        })?;
        return Ok((module, file_name));
    }
    // Taken for a proto by its first bytes alone: text that starts oddly
    // (a stray `}`) can look like one.
    let guessed = format.is_none() && ext != Some("pb");
    // A proto in a regular file is read one computation at a time.
    #[cfg(unix)]
    if let Some(file) = &file {
        if let Some(module) = crate::proto::read_module_file(file).map_err(read_error)? {
            return match module {
                Ok(module) => Ok((module, file_name)),
                Err(e) if guessed => {
                    let bytes = std::fs::read(input).map_err(read_error)?;
                    read_as_text_instead(bytes, &file_name, &e.to_string())
                }
                Err(e) => Err(format!("{file_name}: error: {e}")),
            };
        }
    }
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes).map_err(read_error)?;
    let is_proto = match (format, ext) {
        (Some(f), _) => f == "proto",
        (None, Some("pb")) => true,
        _ => crate::proto::looks_like_proto(&bytes),
    };
    if is_proto {
        return match crate::proto::read_module(&bytes) {
            Ok(module) => Ok((module, file_name)),
            Err(e) if guessed => read_as_text_instead(bytes, &file_name, &e.to_string()),
            Err(e) => Err(format!("{file_name}: error: {e}")),
        };
    }
    let text = String::from_utf8(bytes).map_err(|e| not_utf8(e.utf8_error().valid_up_to()))?;
    let module = parse_module_owned(text, &file_name).map_err(|e| e.to_string())?;
    Ok((module, file_name))
}

/// An input guessed to be a proto that does not read as one: if it is
/// UTF-8, it is read as the text it more likely is, and a fault is the
/// text parser's, with its line and column; else the proto's error.
pub(crate) fn read_as_text_instead(
    bytes: Vec<u8>,
    file_name: &str,
    proto_error: &str,
) -> Result<(crate::ir::Module, String), String> {
    match String::from_utf8(bytes) {
        Ok(text) => match parse_module_owned(text, file_name) {
            Ok(module) => Ok((module, file_name.to_string())),
            Err(e) => Err(e.to_string()),
        },
        Err(_) => Err(format!("{file_name}: error: {proto_error}")),
    }
}

/// Writes `module` as the command writes its output: a binary proto, or
/// text as it was written (XLA's short form with `short`).
pub fn write_module_output(
    module: &crate::ir::Module,
    proto: bool,
    short: bool,
    file_name: &str,
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    use crate::proto::to_proto::{write_module_proto, WriteError};
    if proto {
        // Streamed: a computation's bytes at a time, never the whole proto.
        return write_module_proto(module, w).map_err(|e| match e {
            WriteError::Io(e) => e,
            WriteError::Proto(e) => {
                std::io::Error::other(format!("cannot write {file_name} as a proto: {e}"))
            }
        });
    }
    let options = if short {
        crate::ir::PrintOptions::short_form()
    } else {
        module.style
    };
    crate::text::write_module(module, &options, w)
}
