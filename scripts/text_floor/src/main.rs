//! The floor of a text round trip: `text_floor IN.hlo OUT.hlo`.
//!
//! Reads XLA's HLO text the way any parser must at the least, and nothing
//! more: per instruction line its name (into the computation's name
//! map), its shape text, opcode, operands (each looked up by name) and
//! attribute texts (each interned by its text), into a 136-byte record;
//! then prints every line back from the records, and checks the least a
//! verifier would (operands defined before use, names unique by hash).
//! No checks of XLA's parser, no typed attribute values, no user lists,
//! no source positions, one thread. It assumes the layout XLA prints
//! (two-space indents, `name = shape opcode(operands), key=value`) and
//! skips any line it does not follow. Phase times go to standard error.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::io::Write;
use std::time::Instant;

type Map<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

/// What a parser keeps of an instruction at the least.
#[allow(dead_code)]
struct Record {
    /// Where its name is in the text.
    name: (u32, u32),
    opcode: u32,
    shape: u32,
    operands: [u32; 4],
    operand_count: u32,
    more_operands: Vec<u32>,
    /// (key, text) ids of up to three attributes.
    attrs: [(u32, u32); 3],
    attr_count: u32,
    /// Room for the rest a real IR holds (users, payload, control edges).
    rest: [u64; 6],
}

/// An id per distinct text.
#[derive(Default)]
struct Interner<'t> {
    ids: Map<&'t [u8], u32>,
    texts: Vec<&'t [u8]>,
}

impl<'t> Interner<'t> {
    fn id(&mut self, text: &'t [u8]) -> u32 {
        let next = self.texts.len() as u32;
        *self.ids.entry(text).or_insert_with(|| {
            self.texts.push(text);
            next
        })
    }

    fn text(&self, id: u32) -> &'t [u8] {
        self.texts.get(id as usize).copied().unwrap_or_default()
    }
}

/// Where the value starting at `i` ends: the first `,` or newline outside
/// brackets and strings, or an unmatched closing bracket.
fn value_end(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while let Some(&c) = b.get(i) {
        match c {
            b'"' => {
                i += 1;
                while let Some(&s) = b.get(i) {
                    if s == b'"' {
                        break;
                    }
                    i += if s == b'\\' { 2 } else { 1 };
                }
            }
            b'{' | b'(' | b'[' => depth += 1,
            b'}' | b')' | b']' if depth == 0 => return i,
            b'}' | b')' | b']' => depth -= 1,
            b',' | b'\n' if depth == 0 => return i,
            _ => {}
        }
        i += 1;
    }
    i
}

/// Where the first of `stops` is from `i` on (or the end).
fn find(b: &[u8], i: usize, stops: &[u8]) -> usize {
    i + b
        .get(i..)
        .unwrap_or_default()
        .iter()
        .position(|c| stops.contains(c))
        .unwrap_or(b.len().saturating_sub(i))
}

struct Module<'t> {
    computations: Vec<Vec<Record>>,
    shapes: Interner<'t>,
    opcodes: Interner<'t>,
    keys: Interner<'t>,
    texts: Interner<'t>,
}

fn parse(b: &[u8]) -> Module<'_> {
    let mut m = Module {
        computations: Vec::new(),
        shapes: Interner::default(),
        opcodes: Interner::default(),
        keys: Interner::default(),
        texts: Interner::default(),
    };
    let mut names: Map<&[u8], u32> = Map::default();
    let mut current: Vec<Record> = Vec::new();
    let mut pos = 0;
    while pos < b.len() {
        let end = find(b, pos, b"\n");
        let line = b.get(pos..end).unwrap_or_default();
        let start = pos;
        pos = end + 1;
        if line == b"}" {
            m.computations.push(std::mem::take(&mut current));
        } else if line.ends_with(b"{") {
            names.clear();
        } else if line.starts_with(b"  ") {
            if let Some(r) = instruction(b, start + 2, end, &mut m, &names) {
                names.insert(
                    &b[r.name.0 as usize..(r.name.0 + r.name.1) as usize],
                    current.len() as u32,
                );
                current.push(r);
            }
        }
    }
    m
}

fn instruction<'t>(
    b: &'t [u8],
    mut i: usize,
    end: usize,
    m: &mut Module<'t>,
    names: &Map<&[u8], u32>,
) -> Option<Record> {
    if b.get(i..)?.starts_with(b"ROOT ") {
        i += 5;
    }
    if b.get(i) == Some(&b'%') {
        i += 1;
    }
    let name_start = i;
    i = find(b, i, b" ");
    let name = (name_start as u32, (i - name_start) as u32);
    i += 3; // " = "
    let shape_start = i;
    i = match b.get(i)? {
        b'(' => value_end(b, i + 1) + 1,
        _ => find(b, i, b" "),
    };
    let shape = m.shapes.id(b.get(shape_start..i)?);
    let opcode_start = i + 1;
    i = find(b, opcode_start, b"(");
    let opcode_text = b.get(opcode_start..i)?;
    let opcode = m.opcodes.id(opcode_text);
    i += 1;
    let mut operands = [0u32; 4];
    let mut operand_count = 0usize;
    let mut more_operands = Vec::new();
    if matches!(opcode_text, b"parameter" | b"constant") {
        // A number or a literal, not operands.
        i = value_end(b, i);
    }
    while *b.get(i)? != b')' {
        match b.get(i)? {
            b',' | b' ' | b'%' => i += 1,
            // `/*index=5*/`
            b'/' => i = memchr::memmem::find(b.get(i..)?, b"*/")? + i + 2,
            _ => {
                let s = i;
                i = find(b, i, b",)");
                let id = names.get(b.get(s..i)?).copied().unwrap_or(u32::MAX);
                match operands.get_mut(operand_count) {
                    Some(slot) => *slot = id,
                    None => more_operands.push(id),
                }
                operand_count += 1;
            }
        }
    }
    i += 1;
    let mut attrs = [(0u32, 0u32); 3];
    let mut attr_count = 0usize;
    while i < end && b.get(i) == Some(&b',') {
        let key_start = i + 2;
        i = find(b, key_start, b"=");
        let key = m.keys.id(b.get(key_start..i)?);
        let value_start = i + 1;
        i = value_end(b, value_start);
        let text = m.texts.id(b.get(value_start..i)?);
        if let Some(slot) = attrs.get_mut(attr_count) {
            *slot = (key, text);
        }
        attr_count += 1;
    }
    Some(Record {
        name,
        opcode,
        shape,
        operands,
        operand_count: operand_count as u32,
        more_operands,
        attrs,
        attr_count: attr_count.min(3) as u32,
        rest: [0; 6],
    })
}

fn print(b: &[u8], m: &Module<'_>, out: &mut impl Write) -> std::io::Result<usize> {
    let name = |r: &Record| {
        b.get(r.name.0 as usize..(r.name.0 + r.name.1) as usize)
            .unwrap_or_default()
    };
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 20);
    let mut written = 0;
    for comp in &m.computations {
        buf.extend_from_slice(b"{\n");
        for r in comp {
            buf.extend_from_slice(b"  %");
            buf.extend_from_slice(name(r));
            buf.extend_from_slice(b" = ");
            buf.extend_from_slice(m.shapes.text(r.shape));
            buf.push(b' ');
            buf.extend_from_slice(m.opcodes.text(r.opcode));
            buf.push(b'(');
            let ops = r
                .operands
                .iter()
                .take(r.operand_count as usize)
                .chain(&r.more_operands);
            for (k, &o) in ops.enumerate() {
                if k > 0 {
                    buf.extend_from_slice(b", ");
                }
                buf.push(b'%');
                buf.extend_from_slice(comp.get(o as usize).map(name).unwrap_or_default());
            }
            buf.push(b')');
            for &(key, text) in r.attrs.iter().take(r.attr_count as usize) {
                buf.extend_from_slice(b", ");
                buf.extend_from_slice(m.keys.text(key));
                buf.push(b'=');
                buf.extend_from_slice(m.texts.text(text));
            }
            buf.push(b'\n');
            if buf.len() > (1 << 20) - (64 << 10) {
                out.write_all(&buf)?;
                written += buf.len();
                buf.clear();
            }
        }
        buf.extend_from_slice(b"}\n\n");
    }
    out.write_all(&buf)?;
    Ok(written + buf.len())
}

/// Operands defined before their users, and names unique (by hash).
fn verify(b: &[u8], m: &Module<'_>) -> bool {
    let hasher = foldhash::fast::FixedState::with_seed(0);
    let mut hashes = Vec::with_capacity(m.computations.iter().map(Vec::len).sum());
    let mut ordered = true;
    for comp in &m.computations {
        for (i, r) in comp.iter().enumerate() {
            let ops = r
                .operands
                .iter()
                .take(r.operand_count as usize)
                .chain(&r.more_operands);
            ordered &= ops.into_iter().all(|&o| (o as usize) < i);
            let name = b.get(r.name.0 as usize..(r.name.0 + r.name.1) as usize);
            hashes.push(hasher.hash_one(name.unwrap_or_default()));
        }
    }
    hashes.sort_unstable();
    ordered && hashes.windows(2).all(|w| w.first() != w.get(1))
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(input), Some(output)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: text_floor IN.hlo OUT.hlo");
        std::process::exit(2);
    };
    let t = Instant::now();
    let text = std::fs::read(input)?;
    let read = t.elapsed();
    let t = Instant::now();
    let module = parse(&text);
    let parsed = t.elapsed();
    let t = Instant::now();
    let holds = verify(&text, &module);
    let verified = t.elapsed();
    let t = Instant::now();
    let mut out = std::fs::File::create(output)?;
    let bytes = print(&text, &module, &mut out)?;
    let printed = t.elapsed();
    let instructions: usize = module.computations.iter().map(Vec::len).sum();
    eprintln!(
        "read {read:?}, parse {parsed:?}, verify {verified:?} (holds: {holds}), print and write {printed:?}: \
         {instructions} instructions, {} computations, {} shapes, {} attribute texts, {bytes} bytes out",
        module.computations.len(),
        module.shapes.texts.len(),
        module.texts.texts.len()
    );
    // As hlo-opt does: the process's exit frees the module.
    std::mem::forget(module);
    Ok(())
}
