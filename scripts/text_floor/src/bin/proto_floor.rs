//! The floor of proto -> text: `proto_floor IN.pb OUT.hlo`.
//!
//! Walks an `HloModuleProto` the way any reader must at the least: per
//! instruction its name, opcode, shape and metadata (each interned by its
//! bytes, the distinct ones decoded once), and its operand ids (each
//! looked up in the computation's id map), into a record; then prints a
//! line per instruction (name, shape, opcode, operands, metadata) from
//! the records. No other attribute, no checks, one thread. Phase times
//! go to standard error.

use std::collections::HashMap;
use std::io::Write;
use std::time::Instant;

type Map<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

fn varint(b: &[u8], i: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let c = *b.get(*i)?;
        *i += 1;
        v |= u64::from(c & 0x7f) << shift;
        if c < 0x80 {
            return Some(v);
        }
    }
    None
}

/// Calls `f(field, wire type, value bytes or varint)` for each field.
fn fields<'b>(b: &'b [u8], mut f: impl FnMut(u64, u64, &'b [u8], u64)) -> Option<()> {
    let mut i = 0;
    while i < b.len() {
        let key = varint(b, &mut i)?;
        let (field, wire) = (key >> 3, key & 7);
        match wire {
            0 => {
                let v = varint(b, &mut i)?;
                f(field, wire, &[], v);
            }
            1 => i += 8,
            2 => {
                let n = varint(b, &mut i)? as usize;
                f(field, wire, b.get(i..i + n)?, 0);
                i += n;
            }
            5 => i += 4,
            _ => return None,
        }
    }
    Some(())
}

fn packed(b: &[u8], out: &mut Vec<u64>) {
    let mut i = 0;
    while i < b.len() {
        match varint(b, &mut i) {
            Some(v) => out.push(v),
            None => return,
        }
    }
}

const TYPES: [&str; 32] = [
    "invalid",
    "pred",
    "s8",
    "s16",
    "s32",
    "s64",
    "u8",
    "u16",
    "u32",
    "u64",
    "f16",
    "f32",
    "f64",
    "tuple",
    "opaque",
    "c64",
    "bf16",
    "token",
    "c128",
    "f8e5m2",
    "f8e4m3fn",
    "s4",
    "u4",
    "f8e4m3b11fnuz",
    "f8e5m2fnuz",
    "f8e4m3fnuz",
    "s2",
    "u2",
    "f8e4m3",
    "f8e3m4",
    "f4e2m1fn",
    "f8e8m0fnu",
];

fn shape_text(b: &[u8], out: &mut String) {
    let (mut ty, mut dims, mut tuple, mut layout) = (0u64, Vec::new(), Vec::new(), Vec::new());
    fields(b, |field, wire, v, n| match (field, wire) {
        (2, 0) => ty = n,
        (3, 2) => packed(v, &mut dims),
        (3, 0) => dims.push(n),
        (4, 2) => tuple.push(v),
        (5, 2) => {
            fields(v, |f, w, lv, ln| match (f, w) {
                (1, 2) => packed(lv, &mut layout),
                (1, 0) => layout.push(ln),
                _ => {}
            });
        }
        _ => {}
    });
    if ty == 13 {
        out.push('(');
        for (k, t) in tuple.iter().enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            shape_text(t, out);
        }
        out.push(')');
        return;
    }
    out.push_str(TYPES.get(ty as usize).unwrap_or(&"?"));
    out.push('[');
    for (k, d) in dims.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push_str(&d.to_string());
    }
    out.push_str("]{");
    for (k, d) in layout.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push_str(&d.to_string());
    }
    out.push('}');
}

fn metadata_text(b: &[u8]) -> String {
    let mut t = String::from("metadata={");
    fields(b, |field, wire, v, n| match (field, wire) {
        (2, 2) => {
            t.push_str("op_name=\"");
            t.push_str(&String::from_utf8_lossy(v));
            t.push_str("\" ");
        }
        (15, 0) => t.push_str(&format!("stack_frame_id={n}")),
        _ => {}
    });
    t.push('}');
    t
}

/// An id per distinct byte string, and its text.
#[derive(Default)]
struct Interner<'b> {
    ids: Map<&'b [u8], u32>,
    texts: Vec<String>,
}

impl<'b> Interner<'b> {
    fn id(&mut self, bytes: &'b [u8], text: impl FnOnce(&[u8]) -> String) -> u32 {
        let next = self.texts.len() as u32;
        *self.ids.entry(bytes).or_insert_with(|| {
            self.texts.push(text(bytes));
            next
        })
    }
}

#[allow(dead_code)]
struct Record<'b> {
    name: &'b [u8],
    opcode: u32,
    shape: u32,
    metadata: u32,
    operands: Vec<u32>,
    rest: [u64; 8],
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(input), Some(output)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: proto_floor IN.pb OUT.hlo");
        std::process::exit(2);
    };
    let t = Instant::now();
    let bytes = std::fs::read(input)?;
    let read = t.elapsed();
    let t = Instant::now();
    let (mut shapes, mut opcodes, mut metas) = (
        Interner::default(),
        Interner::default(),
        Interner::default(),
    );
    let none = metas.id(&[], |_| String::new());
    let mut computations: Vec<Vec<Record>> = Vec::new();
    let mut ids: Map<u64, u32> = Map::default();
    let mut operand_ids = Vec::new();
    fields(&bytes, |field, wire, comp, _| {
        if (field, wire) != (3, 2) {
            return;
        }
        let mut records = Vec::new();
        ids.clear();
        fields(comp, |f, w, instr, _| {
            if (f, w) != (2, 2) {
                return;
            }
            let (mut name, mut opcode, mut shape, mut meta, mut id) =
                (&[][..], &[][..], &[][..], none, 0);
            operand_ids.clear();
            fields(instr, |f, w, v, n| match (f, w) {
                (1, 2) => name = v,
                (2, 2) => opcode = v,
                (3, 2) => shape = v,
                (7, 2) => meta = metas.id(v, metadata_text),
                (35, 0) => id = n,
                (36, 2) => packed(v, &mut operand_ids),
                (36, 0) => operand_ids.push(n),
                _ => {}
            });
            let operands = operand_ids
                .iter()
                .map(|o| ids.get(o).copied().unwrap_or(u32::MAX))
                .collect();
            ids.insert(id, records.len() as u32);
            records.push(Record {
                name,
                opcode: opcodes.id(opcode, |b| String::from_utf8_lossy(b).into_owned()),
                shape: shapes.id(shape, |b| {
                    let mut s = String::new();
                    shape_text(b, &mut s);
                    s
                }),
                metadata: meta,
                operands,
                rest: [0; 8],
            });
        });
        computations.push(records);
    });
    let decoded = t.elapsed();
    let t = Instant::now();
    let mut out = std::fs::File::create(output)?;
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 20);
    let mut written = 0;
    for comp in &computations {
        buf.extend_from_slice(b"{\n");
        for r in comp {
            buf.extend_from_slice(b"  %");
            buf.extend_from_slice(r.name);
            buf.extend_from_slice(b" = ");
            buf.extend_from_slice(shapes.texts[r.shape as usize].as_bytes());
            buf.push(b' ');
            buf.extend_from_slice(opcodes.texts[r.opcode as usize].as_bytes());
            buf.push(b'(');
            for (k, &o) in r.operands.iter().enumerate() {
                if k > 0 {
                    buf.extend_from_slice(b", ");
                }
                buf.push(b'%');
                buf.extend_from_slice(comp.get(o as usize).map_or(&b"?"[..], |x| x.name));
            }
            buf.push(b')');
            if r.metadata != none {
                buf.extend_from_slice(b", ");
                buf.extend_from_slice(metas.texts[r.metadata as usize].as_bytes());
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
    written += buf.len();
    let printed = t.elapsed();
    let n: usize = computations.iter().map(Vec::len).sum();
    eprintln!(
        "read {read:?}, decode {decoded:?}, print and write {printed:?}: {n} instructions, {} computations, {} shapes, {} metadata, {written} bytes out",
        computations.len(),
        shapes.texts.len(),
        metas.texts.len()
    );
    std::mem::forget(computations);
    Ok(())
}
