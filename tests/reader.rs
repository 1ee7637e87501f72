//! Reading a module as it comes (`parse_module_from_reader`): the same
//! module and the same errors as from text in memory, however the input
//! is cut into reads; and the windows the parser reads are cut right.

mod common;
use common::*;
use hlo_opt::ir::verify::verify;
use hlo_opt::text::{
    parse_module, parse_module_from_reader, print_module_with, ParseError, ReadError,
};
use std::io::{BufRead, Read};
use std::path::PathBuf;

/// A reader that hands out at most `chunk` bytes a read.
struct Chunked<'a> {
    rest: &'a [u8],
    chunk: usize,
}

impl Read for Chunked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.chunk.min(buf.len()).min(self.rest.len());
        buf[..n].copy_from_slice(&self.rest[..n]);
        self.rest = &self.rest[n..];
        Ok(n)
    }
}

impl BufRead for Chunked<'_> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        Ok(&self.rest[..self.chunk.min(self.rest.len())])
    }

    fn consume(&mut self, n: usize) {
        self.rest = &self.rest[n..];
    }
}

fn from_reader(text: &str, chunk: usize) -> Result<String, String> {
    let reader = Chunked {
        rest: text.as_bytes(),
        chunk,
    };
    match parse_module_from_reader(reader, "t.hlo") {
        Ok(m) => Ok(print_module_with(&m, &m.style)),
        Err(ReadError::Parse(e)) => Err(e.to_string()),
        Err(e) => panic!("not a parse error: {e}"),
    }
}

fn from_text(text: &str) -> Result<String, String> {
    parse_module(text, "t.hlo")
        .map(|m| print_module_with(&m, &m.style))
        .map_err(|e| e.to_string())
}

fn all_modules() -> Vec<PathBuf> {
    let mut paths = files("corpus", |n| n.ends_with(".hlo"));
    paths.extend(files("neuron", |n| n.ends_with(".txt")));
    for dir in ["long", "short", "nonroundtrip", "errors", "errors_nomsg"] {
        paths.extend(files(&format!("xla_parser/{dir}"), |n| n.ends_with(".hlo")));
    }
    paths
}

#[test]
fn a_reader_gives_what_the_text_gives_in_any_reads() {
    let paths = all_modules();
    assert!(paths.len() > 400, "{} files", paths.len());
    let mut failures = Vec::new();
    for p in &paths {
        let text = read(p);
        let want = from_text(&text);
        // Byte by byte only where that is quick.
        let chunks: &[usize] = if text.len() < 20_000 {
            &[1, 7, 4096]
        } else {
            &[997, 1 << 16]
        };
        for &chunk in chunks {
            let got = from_reader(&text, chunk);
            if got != want {
                failures.push(format!(
                    "{} (reads of {chunk}):\n  text:   {:?}\n  reader: {:?}",
                    p.display(),
                    want.as_ref().map(|t| t.len()),
                    got.as_ref().map(|t| t.len())
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn text_that_is_not_utf8_is_reported_with_its_offset() {
    let mut bytes = b"HloModule m\n\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n\n".to_vec();
    let at = bytes.len();
    bytes.extend_from_slice(b"c {\n  \xff\n}\n");
    match parse_module_from_reader(&bytes[..], "t.hlo") {
        Err(ReadError::NotUtf8 { offset }) => assert_eq!(offset, at + 6),
        other => panic!("{:?}", other.map(|_| ())),
    }
}

const ONE_LINE_LITERAL: &str =
    "HloModule m\n\nENTRY e {\n  ROOT c = f32[2,2]{1,0} constant({ {1, 2}, {3, 4} })\n}\n\n";

#[test]
fn a_closing_brace_line_inside_an_instruction_is_read_through() {
    // Windows end after `}, {3, 4` and after `} })`: the computation goes
    // on past both, so it is read again whole.
    let text = "HloModule m\n\nENTRY e {\n  ROOT c = f32[2,2]{1,0} constant({ {1, 2\n}, {3, 4\n} })\n}\n\n";
    let m = parse_module(text, "t.hlo").unwrap_or_else(|e| panic!("{e}"));
    verify(&m).unwrap();
    assert_eq!(
        print_module_with(&m, &m.style),
        from_text(ONE_LINE_LITERAL).unwrap()
    );
    assert_eq!(from_reader(text, 3), from_text(text));
}

#[test]
fn an_execution_thread_on_the_next_line_stays_with_its_computation() {
    let text = "HloModule m\n\nc {\n  ROOT p = f32[] parameter(0)\n}\n, execution_thread=\"t\"\n\nENTRY e {\n  ROOT p.1 = f32[] parameter(0)\n}\n\n";
    let m = parse_module(text, "t.hlo").unwrap_or_else(|e| panic!("{e}"));
    let c = m.find_computation("c").unwrap();
    assert_eq!(m.comp(c).execution_thread.as_deref(), Some("t"));
}

/// A module of `n` small computations (then the entry), each on 4 lines
/// after the 2 of the header.
fn computations(n: usize) -> String {
    let mut t = String::from("HloModule m\n\n");
    for i in 0..n {
        t.push_str(&format!(
            "c{i} {{\n  p{i} = f32[] parameter(0)\n  ROOT n{i} = f32[] negate(p{i})\n}}\n\n"
        ));
    }
    t.push_str("ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n\n");
    t
}

fn parse_error(text: &str) -> ParseError {
    match parse_module(text, "t.hlo") {
        Err(e) => e,
        Ok(_) => panic!("accepted:\n{text}"),
    }
}

#[test]
fn errors_in_a_later_window_point_at_their_line() {
    let text = computations(5).replace("negate(p3)", "negate(q3)");
    let e = parse_error(&text);
    assert_eq!((e.line, e.column), (2 + 3 * 5 + 3, 26), "{e}");
    assert_eq!(e.source_line, "  ROOT n3 = f32[] negate(q3)");
}

#[test]
fn a_computation_defined_again_names_the_first_definition() {
    let text = computations(5).replace("c3 {", "c1 {");
    let e = parse_error(&text);
    assert_eq!((e.line, e.column), (2 + 3 * 5 + 1, 1), "{e}");
    assert!(
        e.message
            .ends_with("was parsing 8:1: error: computation previously defined here\nc1 {\n^"),
        "{e}"
    );
}

#[test]
fn an_undefined_computation_is_reported_where_it_was_called() {
    let text = computations(5).replace(
        "ROOT n1 = f32[] negate(p1)",
        "ROOT n1 = f32[] call(p1), to_apply=nowhere",
    );
    let e = parse_error(&text);
    assert_eq!(e.message, "computation does not exist: nowhere");
    assert_eq!((e.line, e.column), (2 + 5 + 3, 38), "{e}");
}

/// A module whose entry comes first and calls `n` computations defined
/// after it, each a forward reference when the entry is read; with a
/// multi-byte character on every call line, before the callee.
fn entry_first(n: usize) -> String {
    let mut t = String::from("HloModule m\n\nENTRY e {\n  x = f32[] parameter(0)\n");
    let mut last = "x".to_string();
    for i in 0..n {
        t.push_str(&format!(
            "  k{i} = f32[] call({last}), metadata={{op_name=\"\u{e9}\"}}, to_apply=c{i}\n"
        ));
        last = format!("k{i}");
    }
    t.push_str(&format!("  ROOT r = f32[] negate({last})\n}}\n\n"));
    for i in 0..n {
        t.push_str(&format!(
            "c{i} {{\n  p{i} = f32[] parameter(0)\n  ROOT n{i} = f32[] negate(p{i})\n}}\n\n"
        ));
    }
    t
}

#[test]
fn forward_references_take_time_linear_in_the_window() {
    // Each forward reference was once located by counting the lines
    // before it from the window's start: 4.6 s for 20,000 of them in a
    // 3 MB module, 0.09 s now.
    let n = 20_000;
    let text = entry_first(n);
    let start = std::time::Instant::now();
    let m = parse_module(&text, "t.hlo").unwrap_or_else(|e| panic!("{e}"));
    let took = start.elapsed();
    assert_eq!(m.computations().count(), n + 1);
    let bound = if cfg!(debug_assertions) { 30.0 } else { 2.0 };
    assert!(
        took.as_secs_f64() < bound,
        "{n} forward references took {took:?}"
    );
    // The one never defined is reported where it was called, in
    // characters.
    let text = text.replace("c12345 {", "d12345 {");
    let e = parse_error(&text);
    assert_eq!(e.message, "computation does not exist: c12345");
    let line = "  k12345 = f32[] call(k12344), metadata={op_name=\"\u{e9}\"}, to_apply=c12345";
    // In characters: `\u{e9}` is two bytes.
    let column = line.find("c12345").unwrap() + 1;
    assert_eq!((e.line, e.column), (4 + 12345 + 1, column - 1), "{e}");
    assert_eq!(e.source_line, line);
}

#[test]
fn forward_references_on_one_line_take_time_linear_in_it() {
    // A conditional naming 20,000 branches defined after it: each
    // reference once kept its own copy of the 300 KB line, and counted its
    // column from the line's start (8,000 of them took 0.9 s and 1.4 GB).
    let n = 20_000;
    let branches: Vec<String> = (0..n).map(|i| format!("b{i}")).collect();
    let mut text = format!(
        "HloModule m\n\nENTRY e {{\n  i = s32[] parameter(0)\n  x = f32[] parameter(1)\n  \
         ROOT c = f32[] conditional(i, {}), branch_computations={{{}}}\n}}\n\n",
        vec!["x"; n].join(", "),
        branches.join(", ")
    );
    for b in &branches {
        text.push_str(&format!(
            "{b} {{\n  p.{b} = f32[] parameter(0)\n  ROOT n.{b} = f32[] negate(p.{b})\n}}\n\n"
        ));
    }
    let start = std::time::Instant::now();
    let m = parse_module(&text, "t.hlo").unwrap_or_else(|e| panic!("{e}"));
    let took = start.elapsed();
    assert_eq!(m.computations().count(), n + 1);
    let bound = if cfg!(debug_assertions) { 30.0 } else { 2.0 };
    assert!(took.as_secs_f64() < bound, "{n} references took {took:?}");
    // The last, never defined, is reported at its column on that line.
    let text = text.replace("\nb19999 {", "\nd19999 {");
    let e = parse_error(&text);
    assert_eq!(e.message, "computation does not exist: b19999");
    let line = text.lines().nth(5).unwrap();
    assert_eq!((e.line, e.column), (6, line.rfind("b19999").unwrap() + 1));
    // A line past 64 KiB keeps the characters around the column.
    assert_eq!(e.source_line, &line[e.source_from..]);
    assert_eq!(e.source_from, e.column - 1 - 1000);
}

#[test]
fn verifier_errors_point_at_the_instruction_read() {
    // `n1` again in a later computation: unique per computation, not per
    // module.
    let text = computations(5).replace("n3", "n1");
    let m = parse_module(&text, "t.hlo").unwrap_or_else(|e| panic!("{e}"));
    let e = verify(&m).unwrap_err();
    let pos = e.pos.expect("a position");
    assert_eq!((pos.line, pos.column), (2 + 3 * 5 + 3, 8), "{e}");
}

#[test]
fn a_window_read_again_is_undone_first() {
    // The second window holds `a` whole and `b` up to the `})` line:
    // reading it again must not define `a` twice nor name its nested
    // parameter twice.
    let cut = "HloModule m\n\nc0 {\n  ROOT p = f32[] parameter(0)\n}\n\na { ROOT x = f32[] negate(f32[] parameter(0)) }\nb {\n  ROOT c = f32[2]{0} constant({1,\n2\n})\n}\n\nENTRY e {\n  ROOT p.1 = f32[] parameter(0)\n}\n\n";
    let whole = cut.replace("{1,\n2\n}", "{1, 2}");
    let want = from_text(&whole).unwrap();
    assert!(
        want.contains("parameter.anon = f32[] parameter(0)"),
        "{want}"
    );
    assert_eq!(from_text(cut), Ok(want.clone()));
    assert_eq!(from_reader(cut, 5), Ok(want));
}

/// A reader that fails once `fail_at` bytes have been read.
struct FailingAt<'a> {
    rest: &'a [u8],
    read: usize,
    fail_at: usize,
}

impl Read for FailingAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.fill_buf()?.len().min(buf.len());
        buf[..n].copy_from_slice(&self.rest[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for FailingAt<'_> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.read >= self.fail_at {
            return Err(std::io::Error::other("the disk went away"));
        }
        let n = (self.fail_at - self.read)
            .min(64 << 10)
            .min(self.rest.len());
        Ok(&self.rest[..n])
    }

    fn consume(&mut self, n: usize) {
        self.rest = &self.rest[n..];
        self.read += n;
    }
}

/// An I/O error anywhere (in the first, sequential MiB, in the middle of a
/// group read ahead for the threads, in the entry) is the read's error:
/// no module, no panic, no hang.
#[test]
fn an_io_error_while_reading_ahead_is_the_reads_error() {
    let text = computations(80_000);
    assert!(
        text.len() > 4 << 20,
        "past the parallel threshold and a group"
    );
    for fail_at in [100, 1 << 20, (1 << 20) + 12_345, 3 << 20, text.len() - 10] {
        let reader = FailingAt {
            rest: text.as_bytes(),
            read: 0,
            fail_at,
        };
        match parse_module_from_reader(reader, "t.hlo") {
            Err(ReadError::Io(e)) => assert!(e.to_string().contains("the disk went away")),
            Err(e) => panic!("at {fail_at}: not the I/O error: {e}"),
            Ok(_) => panic!("at {fail_at}: a module from a failed read"),
        }
    }
    // The same text whole reads.
    let reader = FailingAt {
        rest: text.as_bytes(),
        read: 0,
        fail_at: usize::MAX,
    };
    assert!(parse_module_from_reader(reader, "t.hlo").is_ok());
}

#[test]
fn a_name_in_a_list_is_located_at_the_name() {
    // Not at the blank after the comma before it.
    let text = "HloModule m\n\nENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] negate(a), control-predecessors={a, zz}\n}\n";
    let e = parse_error(text);
    assert_eq!(e.message, "'zz' is not defined");
    assert_eq!((e.line, e.column), (5, 49), "{e}");
}
