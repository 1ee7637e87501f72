//! `.npy` arrays in `.npz` archives, in the layout of `corpus/refs/`:
//! `in0, in1, ...` and `out0, out1, ...`, C order. Types numpy cannot
//! store (bf16, the 8-bit floats) are stored as their raw bits (`uint16`,
//! `uint8`) and named in a sidecar `<file>.json`
//! (`{"in0": "bf16", "out1": "f8e8m0fnu"}`).
//!
//! The zip container is the `zip` crate (deflate through `flate2`'s pure
//! Rust backend); the `.npy` format itself is a small header and raw
//! little-endian data, read and written here.

use super::array::{element_count, Array, Data};
use super::convert::from_bits;
use super::{err, Result};
use crate::ir::PrimitiveType;
use crate::output::{Destination, Staged};
use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// One array as a `.npy` file holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct NpyArray {
    /// numpy's type string: `<f4`, `|b1`, `<u2`, ...
    pub descr: String,
    pub shape: Vec<usize>,
    /// Little-endian element bytes, C order.
    pub bytes: Vec<u8>,
}

/// What a `.npy` header says its data holds, read before any of the data.
#[derive(Clone, Debug, PartialEq)]
pub struct NpyHeader {
    /// numpy's type string as the file has it (`<f4`, `>i8`, `|b1`, ...).
    pub descr: String,
    pub fortran_order: bool,
    pub shape: Vec<usize>,
}

/// The longest `.npy` header read (numpy writes a few hundred bytes).
const MAX_HEADER: usize = 1 << 16;

impl NpyHeader {
    /// Reads the magic, version and header of a `.npy` stream, and no more.
    pub fn read(r: &mut impl Read) -> Result<NpyHeader> {
        let mut lead = [0u8; 8];
        r.read_exact(&mut lead)
            .map_err(|_| err("not a .npy file (too short)"))?;
        if &lead[..6] != b"\x93NUMPY" {
            return Err(err("not a .npy file (bad magic)"));
        }
        let hlen = match lead[6] {
            1 => {
                let mut b = [0u8; 2];
                r.read_exact(&mut b)
                    .map_err(|_| err("truncated .npy header"))?;
                usize::from(u16::from_le_bytes(b))
            }
            2 | 3 => {
                let mut b = [0u8; 4];
                r.read_exact(&mut b)
                    .map_err(|_| err("truncated .npy header"))?;
                u32::from_le_bytes(b) as usize
            }
            v => return Err(err(format!(".npy format version {v} is not supported"))),
        };
        if hlen > MAX_HEADER {
            return Err(err(format!(
                ".npy header of {hlen} bytes (at most {MAX_HEADER} are read)"
            )));
        }
        let mut header = vec![0u8; hlen];
        r.read_exact(&mut header)
            .map_err(|_| err("truncated .npy header"))?;
        let header = std::str::from_utf8(&header).map_err(|_| err(".npy header is not text"))?;
        let field = |key: &str| -> Result<&str> {
            let pat = format!("'{key}':");
            let at = header
                .find(&pat)
                .ok_or_else(|| err(format!(".npy header has no {key}")))?;
            Ok(header[at + pat.len()..].trim_start())
        };
        let d = field("descr")?;
        let descr = d
            .strip_prefix('\'')
            .and_then(|s| s.split('\'').next())
            .ok_or_else(|| err("cannot read the .npy descr"))?
            .to_string();
        let fortran_order = field("fortran_order")?.starts_with("True");
        let s = field("shape")?;
        let s = s
            .strip_prefix('(')
            .and_then(|s| s.split(')').next())
            .ok_or_else(|| err("cannot read the .npy shape"))?;
        let shape: Vec<usize> = s
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(|t| t.parse::<usize>().map_err(|_| err("bad .npy shape")))
            .collect::<Result<_>>()?;
        descr_width(&descr)?;
        Ok(NpyHeader {
            descr,
            fortran_order,
            shape,
        })
    }

    /// The bytes of data the header declares.
    pub fn data_bytes(&self) -> Result<usize> {
        let n = element_count(&self.shape)?;
        n.checked_mul(descr_width(&self.descr)?)
            .ok_or_else(|| err("the .npy shape is too large"))
    }

    /// `f32[2,3] (<f4)`, as errors name what a member holds.
    fn describe(&self) -> String {
        let ty = natural_type(&self.descr).map_or_else(|_| "?".to_string(), |t| t.to_string());
        format!(
            "{ty}[{}] ({})",
            super::array::dims_text(&self.shape),
            self.descr
        )
    }

    /// Reads exactly the declared data after the header, and refuses a
    /// stream with more: no more than the declared bytes are taken in.
    pub fn read_data(self, r: &mut impl Read) -> Result<NpyArray> {
        let n = self.data_bytes()?;
        let mut bytes = super::budget::try_vec(n, 0u8)?;
        r.read_exact(&mut bytes).map_err(|_| {
            err(format!(
                ".npy data is shorter than the {n} bytes shape {:?} of {} needs",
                self.shape, self.descr
            ))
        })?;
        let mut more = [0u8; 1];
        let extra = loop {
            match r.read(&mut more) {
                Ok(k) => break k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(err(e.to_string())),
            }
        };
        if extra > 0 {
            return Err(err(format!(
                ".npy data goes on past the {n} bytes its header declares ({} {:?})",
                self.descr, self.shape
            )));
        }
        self.finish(bytes)
    }

    /// The array of `bytes` (exactly the declared data): little-endian, C
    /// order.
    fn finish(self, mut bytes: Vec<u8>) -> Result<NpyArray> {
        let width = descr_width(&self.descr)?;
        let descr = self.descr;
        if descr.starts_with('>') && width > 1 {
            // A complex element is two floats, each swapped on its own.
            let unit = if descr[1..].starts_with('c') {
                width / 2
            } else {
                width
            };
            for c in bytes.chunks_mut(unit) {
                c.reverse();
            }
        }
        let mut a = NpyArray {
            descr: format!("<{}", &descr[1..]),
            shape: self.shape,
            bytes,
        };
        if width == 1 {
            a.descr = format!("|{}", &descr[1..]);
        }
        if self.fortran_order && a.shape.len() > 1 {
            // Column-major: reorder to C order.
            let rev: Vec<usize> = a.shape.iter().rev().copied().collect();
            let mut out = super::budget::try_vec(a.bytes.len(), 0u8)?;
            let cst = super::array::strides(&a.shape);
            let fst = super::array::strides(&rev);
            for (i, chunk) in a.bytes.chunks(width).enumerate() {
                // i is the Fortran-order position: decode with reversed dims.
                let mut c = 0;
                for k in 0..rev.len() {
                    let idx = (i / fst[k]) % rev[k];
                    c += idx * cst[rev.len() - 1 - k];
                }
                out[c * width..(c + 1) * width].copy_from_slice(chunk);
            }
            a.bytes = out;
        }
        Ok(a)
    }
}

/// Parses a `.npy` file held in memory.
pub fn parse_npy(buf: &[u8]) -> Result<NpyArray> {
    let mut r = buf;
    NpyHeader::read(&mut r)?.read_data(&mut r)
}

fn descr_width(descr: &str) -> Result<usize> {
    let kind = descr.get(1..).unwrap_or("");
    match kind {
        "b1" | "i1" | "u1" => Ok(1),
        "i2" | "u2" | "f2" => Ok(2),
        "i4" | "u4" | "f4" => Ok(4),
        "i8" | "u8" | "f8" | "c8" => Ok(8),
        "c16" => Ok(16),
        _ => Err(err(format!("numpy dtype {descr} is not supported"))),
    }
}

/// The HLO type numpy's type string stands for.
fn natural_type(descr: &str) -> Result<PrimitiveType> {
    use PrimitiveType as T;
    Ok(match descr.get(1..).unwrap_or("") {
        "b1" => T::Pred,
        "i1" => T::S8,
        "i2" => T::S16,
        "i4" => T::S32,
        "i8" => T::S64,
        "u1" => T::U8,
        "u2" => T::U16,
        "u4" => T::U32,
        "u8" => T::U64,
        "f2" => T::F16,
        "f4" => T::F32,
        "f8" => T::F64,
        "c8" => T::C64,
        "c16" => T::C128,
        _ => return Err(err(format!("numpy dtype {descr} is not supported"))),
    })
}

/// The numpy type string an HLO type is stored as (bits for the types
/// numpy lacks), and whether it is bit-stored.
pub fn storage_descr(ty: PrimitiveType) -> Result<(&'static str, bool)> {
    use PrimitiveType as T;
    Ok(match ty {
        T::Pred => ("|b1", false),
        T::S8 | T::S4 | T::S2 | T::S1 => ("|i1", false),
        T::S16 => ("<i2", false),
        T::S32 => ("<i4", false),
        T::S64 => ("<i8", false),
        T::U8 | T::U4 | T::U2 | T::U1 => ("|u1", false),
        T::U16 => ("<u2", false),
        T::U32 => ("<u4", false),
        T::U64 => ("<u8", false),
        T::F16 => ("<f2", false),
        T::F32 => ("<f4", false),
        T::F64 => ("<f8", false),
        T::C64 => ("<c8", false),
        T::C128 => ("<c16", false),
        T::Bf16 => ("<u2", true),
        t if t.minifloat().is_some() => ("|u1", true),
        t => return Err(err(format!("cannot store {t} in .npy"))),
    })
}

impl NpyArray {
    /// Reads the array as HLO type `ty`: its own numpy type, or raw bits of
    /// a bit-stored type (`bits_of` names the sidecar's type, if any).
    pub fn to_array(&self, ty: PrimitiveType, bits_of: Option<PrimitiveType>) -> Result<Array> {
        let nat = natural_type(&self.descr)?;
        let width = descr_width(&self.descr)?;
        if nat.is_complex() || ty.is_complex() {
            return self.to_complex_array(ty, nat);
        }
        if nat == ty && bits_of.is_none() {
            // The common inputs, straight from their bytes.
            let data = match ty {
                PrimitiveType::F32 => Some(Data::F32(
                    self.bytes
                        .chunks_exact(4)
                        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                        .collect(),
                )),
                PrimitiveType::S32 => Some(Data::S(
                    self.bytes
                        .chunks_exact(4)
                        .map(|c| i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                        .collect(),
                )),
                _ => None,
            };
            if let Some(data) = data {
                check_type(&self.descr, &self.shape, ty, bits_of)?;
                return Array::new(ty, self.shape.clone(), data);
            }
        }
        let raw: Vec<u64> = self
            .bytes
            .chunks(width)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..width].copy_from_slice(c);
                u64::from_le_bytes(b)
            })
            .collect();
        check_type(&self.descr, &self.shape, ty, bits_of)?;
        let data = match nat {
            PrimitiveType::Pred if ty == PrimitiveType::Pred => {
                Data::Pred(raw.iter().map(|&b| b != 0).collect())
            }
            _ => {
                // Sign-extend signed storage before reading as `ty`.
                let raw: Vec<u64> = if nat.is_signed_int() {
                    let w = nat.bit_width();
                    raw.iter()
                        .map(|&b| super::array::wrap_s(b as i64, w) as u64)
                        .collect()
                } else {
                    raw
                };
                from_bits(ty, &raw)?
            }
        };
        Array::new(ty, self.shape.clone(), data)
    }

    /// A complex array (numpy's `<c8`/`<c16`: real, imaginary, little-endian).
    fn to_complex_array(&self, ty: PrimitiveType, nat: PrimitiveType) -> Result<Array> {
        if nat != ty {
            return Err(err(format!(
                "holds {}[{}] ({}), {} expected",
                nat,
                super::array::dims_text(&self.shape),
                self.descr,
                ty
            )));
        }
        let data = if ty == PrimitiveType::C64 {
            let f = |b: &[u8]| f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            Data::C64(
                self.bytes
                    .chunks_exact(8)
                    .map(|c| num_complex::Complex32::new(f(&c[..4]), f(&c[4..])))
                    .collect(),
            )
        } else {
            let f = |b: &[u8]| {
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                f64::from_le_bytes(a)
            };
            Data::C128(
                self.bytes
                    .chunks_exact(16)
                    .map(|c| num_complex::Complex64::new(f(&c[..8]), f(&c[8..])))
                    .collect(),
            )
        };
        Array::new(ty, self.shape.clone(), data)
    }

    /// The `.npy` form of an array.
    pub fn from_array(a: &Array) -> Result<NpyArray> {
        let (descr, _) = storage_descr(a.ty)?;
        let width = descr_width(descr)?;
        let mut bytes = Vec::with_capacity(a.len() * width);
        let push = |bytes: &mut Vec<u8>, v: u64| bytes.extend_from_slice(&v.to_le_bytes()[..width]);
        match &a.data {
            Data::Pred(v) => v.iter().for_each(|&b| bytes.push(u8::from(b))),
            Data::S(v) => v.iter().for_each(|&x| push(&mut bytes, x as u64)),
            Data::U(v) => v.iter().for_each(|&x| push(&mut bytes, x)),
            Data::F16(v) => v
                .iter()
                .for_each(|x| push(&mut bytes, u64::from(x.to_bits()))),
            Data::Bf16(v) => v
                .iter()
                .for_each(|x| push(&mut bytes, u64::from(x.to_bits()))),
            Data::F32(v) => v
                .iter()
                .for_each(|x| push(&mut bytes, u64::from(x.to_bits()))),
            Data::F64(v) => v.iter().for_each(|x| push(&mut bytes, x.to_bits())),
            Data::Mini(v) => bytes.extend_from_slice(v),
            Data::C64(v) => v.iter().for_each(|c| {
                bytes.extend_from_slice(&c.re.to_le_bytes());
                bytes.extend_from_slice(&c.im.to_le_bytes());
            }),
            Data::C128(v) => v.iter().for_each(|c| {
                bytes.extend_from_slice(&c.re.to_le_bytes());
                bytes.extend_from_slice(&c.im.to_le_bytes());
            }),
        }
        Ok(NpyArray {
            descr: descr.to_string(),
            shape: a.dims.clone(),
            bytes,
        })
    }

    /// The `.npy` file (format 1.0, as numpy writes it).
    pub fn to_npy_bytes(&self) -> Vec<u8> {
        let shape = match self.shape.len() {
            0 => "()".to_string(),
            1 => format!("({},)", self.shape[0]),
            _ => format!(
                "({})",
                self.shape
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let mut header = format!(
            "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
            self.descr
        );
        // Pad with spaces so that data starts at a multiple of 64.
        let total = 10 + header.len() + 1;
        let pad = (64 - total % 64) % 64;
        header.push_str(&" ".repeat(pad));
        header.push('\n');
        let mut out = Vec::with_capacity(10 + header.len() + self.bytes.len());
        out.extend_from_slice(b"\x93NUMPY\x01\x00");
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(&self.bytes);
        out
    }
}

/// An error unless an array of numpy type `descr` can be read as `ty`
/// (`bits_of`: the sidecar's type for it).
fn check_type(
    descr: &str,
    shape: &[usize],
    ty: PrimitiveType,
    bits_of: Option<PrimitiveType>,
) -> Result<()> {
    let nat = natural_type(descr)?;
    let (stored, bit_stored) = storage_descr(ty)?;
    let ok = if nat.is_complex() || ty.is_complex() {
        nat == ty
    } else if let Some(b) = bits_of {
        b == ty
    } else {
        // The stored form has `<` for a multi-byte type, `|` for one byte;
        // a big-endian file is read as little-endian.
        let little = match descr.get(1..) {
            Some(rest) if descr.len() > 1 => format!("{}{rest}", &stored[..1]),
            _ => descr.to_string(),
        };
        nat == ty || (bit_stored && stored == little) || narrow_int(ty, nat)
    };
    if ok {
        return Ok(());
    }
    Err(err(format!(
        "holds {}[{}] ({}), {} expected",
        nat,
        super::array::dims_text(shape),
        descr,
        ty
    )))
}

/// s4/u4 and the like are stored in the next byte-sized numpy type.
fn narrow_int(ty: PrimitiveType, nat: PrimitiveType) -> bool {
    use PrimitiveType as T;
    matches!(
        (ty, nat),
        (T::S4 | T::S2 | T::S1, T::S8) | (T::U4 | T::U2 | T::U1, T::U8)
    )
}

/// An `.npz` archive open for reading members one at a time: only the
/// central directory is read until a member is asked for.
struct Npz<'p> {
    path: &'p Path,
    zip: zip::ZipArchive<std::io::BufReader<std::fs::File>>,
}

impl<'p> Npz<'p> {
    fn open(path: &'p Path) -> Result<Npz<'p>> {
        let fail = |e: &dyn std::fmt::Display| err(format!("{}: {e}", path.display()));
        let f = std::fs::File::open(path).map_err(|e| fail(&e))?;
        let zip = zip::ZipArchive::new(std::io::BufReader::new(f)).map_err(|e| fail(&e))?;
        Ok(Npz { path, zip })
    }

    fn error(&self, message: impl std::fmt::Display) -> super::EvalError {
        err(format!("{}: {message}", self.path.display()))
    }

    /// The member's name in the archive (`key.npy`, or `key` as is).
    fn member(&self, key: &str) -> Option<String> {
        [format!("{key}.npy"), key.to_string()]
            .into_iter()
            .find(|n| self.zip.index_for_name(n).is_some())
    }

    /// The members' names, for an error.
    fn names(&self) -> String {
        let mut names: Vec<&str> = self
            .zip
            .file_names()
            .map(|n| n.strip_suffix(".npy").unwrap_or(n))
            .collect();
        names.sort_unstable();
        names.join(", ")
    }

    /// Member `key`: its header is read, `check`ed (before any data is
    /// inflated), then exactly its declared data.
    fn read(
        &mut self,
        key: &str,
        check: impl FnOnce(&NpyHeader) -> Result<()>,
    ) -> Result<Option<NpyArray>> {
        let Some(name) = self.member(key) else {
            return Ok(None);
        };
        let path = self.path;
        let fail = |e: &dyn std::fmt::Display| err(format!("{}: {key}: {e}", path.display()));
        let mut member = self.zip.by_name(&name).map_err(|e| fail(&e))?;
        let header = NpyHeader::read(&mut member).map_err(|e| fail(&e.message))?;
        check(&header).map_err(|e| fail(&e.message))?;
        header
            .read_data(&mut member)
            .map(Some)
            .map_err(|e| fail(&e.message))
    }
}

/// The sidecar `<file>.json` beside an `.npz`: name -> HLO type of the
/// bit-stored arrays (empty when there is none).
pub fn read_sidecar(npz: &Path) -> Result<BTreeMap<String, PrimitiveType>> {
    let p = sidecar_path(npz);
    let mut out = BTreeMap::new();
    // A sidecar names a few types: a large one is not a sidecar.
    const MAX_SIDECAR: u64 = 1 << 20;
    let Ok(file) = std::fs::File::open(&p) else {
        return Ok(out);
    };
    let mut text = String::new();
    file.take(MAX_SIDECAR + 1)
        .read_to_string(&mut text)
        .map_err(|e| err(format!("{}: {e}", p.display())))?;
    if text.len() as u64 > MAX_SIDECAR {
        return Err(err(format!(
            "{}: a sidecar of more than {MAX_SIDECAR} bytes",
            p.display()
        )));
    }
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| err(format!("{}: {e}", p.display())))?;
    let obj = v
        .as_object()
        .ok_or_else(|| err(format!("{}: not a JSON object", p.display())))?;
    for (k, v) in obj {
        let name = v.as_str().unwrap_or("");
        let ty = PrimitiveType::from_name(name)
            .ok_or_else(|| err(format!("{}: unknown type {name}", p.display())))?;
        out.insert(k.clone(), ty);
    }
    Ok(out)
}

pub fn sidecar_path(npz: &Path) -> PathBuf {
    npz.with_extension("json")
}

/// The zip crate's error, with the system's reason when it is one (its
/// own text for that is just "i/o error").
fn zip_error(e: zip::result::ZipError) -> super::EvalError {
    match e {
        zip::result::ZipError::Io(e) => e.into(),
        e => err(e.to_string()),
    }
}

/// A writer that, once a write has failed, takes every later write
/// without writing it: a `ZipWriter` dropped after an error (a full disk)
/// finishes its archive in `drop` and prints that second failure itself;
/// the first error is already on its way to the user, and the staged
/// file is thrown away. Positions are kept as if the writes had landed,
/// so the archive's offsets still add up for the finishing writer.
struct QuietAfterError<W> {
    inner: W,
    failed: bool,
    position: u64,
    end: u64,
}

impl<W> QuietAfterError<W> {
    fn new(inner: W) -> Self {
        QuietAfterError {
            inner,
            failed: false,
            position: 0,
            end: 0,
        }
    }

    fn moved_to(&mut self, position: u64) -> u64 {
        self.position = position;
        self.end = self.end.max(position);
        position
    }

    /// Notes a failure; an interrupted call is retried by its caller
    /// (`write_all`), so it is none.
    fn note<T>(&mut self, result: std::io::Result<T>) -> std::io::Result<T> {
        self.failed |= result
            .as_ref()
            .is_err_and(|e| e.kind() != std::io::ErrorKind::Interrupted);
        result
    }
}

impl<W: Write> Write for QuietAfterError<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let result = if self.failed {
            Ok(buf.len())
        } else {
            self.inner.write(buf)
        };
        if let Ok(n) = result {
            self.moved_to(self.position + n as u64);
        }
        self.note(result)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.failed {
            return Ok(());
        }
        let result = self.inner.flush();
        self.note(result)
    }
}

impl<W: Seek> Seek for QuietAfterError<W> {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        if self.failed {
            let at = match to {
                SeekFrom::Start(n) => n,
                SeekFrom::Current(d) => self.position.saturating_add_signed(d),
                SeekFrom::End(d) => self.end.saturating_add_signed(d),
            };
            return Ok(self.moved_to(at));
        }
        let result = self.inner.seek(to);
        if let Ok(at) = result {
            self.moved_to(at);
        }
        self.note(result)
    }
}

/// Stages arrays (name, array) as an `.npz` (deflated, fixed timestamps)
/// and, when some are bit-stored, its `sidecar` `.json`; a stale sidecar
/// is removed otherwise. Nothing lands before `staged` is committed.
pub fn write_npz(
    npz: &Destination,
    sidecar: &Destination,
    arrays: &[(String, &Array)],
    staged: &mut Staged,
) -> Result<()> {
    let fail = |e: &dyn std::fmt::Display| err(format!("{}: {e}", npz.path.display()));
    let bits = staged
        .write_with(npz, |file| -> Result<BTreeMap<String, String>> {
            let mut z = zip::ZipWriter::new(QuietAfterError::new(std::io::BufWriter::new(file)));
            let opts = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated)
                .last_modified_time(zip::DateTime::default())
                .large_file(true);
            let mut bits = BTreeMap::new();
            for (name, a) in arrays {
                let npy = NpyArray::from_array(a)?;
                if storage_descr(a.ty)?.1 {
                    bits.insert(name.clone(), a.ty.name().to_string());
                }
                z.start_file(format!("{name}.npy"), opts)
                    .map_err(zip_error)?;
                z.write_all(&npy.to_npy_bytes())?;
            }
            let mut w = z.finish().map_err(zip_error)?;
            w.flush()?;
            Ok(bits)
        })
        .map_err(|e| fail(&e.message))?;
    if bits.is_empty() {
        staged.remove(sidecar);
    } else {
        let mut text = String::from("{\n");
        let n = bits.len();
        for (i, (k, v)) in bits.iter().enumerate() {
            text.push_str(&format!(
                "\"{k}\": \"{v}\"{}\n",
                if i + 1 < n { "," } else { "" }
            ));
        }
        text.push_str("}\n");
        staged
            .write(sidecar, |file| file.write_all(text.as_bytes()))
            .map_err(err)?;
    }
    Ok(())
}

/// Reads `in0, in1, ...` from an `.npz` as the given parameter types
/// (any shape).
pub fn read_inputs(path: &Path, types: &[PrimitiveType]) -> Result<Vec<Array>> {
    let params: Vec<(PrimitiveType, Option<&[usize]>)> = types.iter().map(|&t| (t, None)).collect();
    read_parameters(path, &params)
}

/// Reads `in0, in1, ...` from an `.npz` as the given parameters (their
/// type, and their dimensions when given). Only these members are opened;
/// each one's header is checked against its parameter before its data is
/// inflated, and no more than the declared data is.
pub fn read_parameters(
    path: &Path,
    params: &[(PrimitiveType, Option<&[usize]>)],
) -> Result<Vec<Array>> {
    let mut npz = Npz::open(path)?;
    let side = read_sidecar(path)?;
    let mut out = Vec::with_capacity(params.len());
    for (i, &(ty, dims)) in params.iter().enumerate() {
        let key = format!("in{i}");
        let bits_of = side.get(&key).copied();
        let a = npz
            .read(&key, |h| {
                check_type(&h.descr, &h.shape, ty, bits_of)?;
                match dims {
                    Some(d) if d != h.shape => Err(err(format!(
                        "holds {}, parameter {i} is {ty}[{}]",
                        h.describe(),
                        super::array::dims_text(d)
                    ))),
                    _ => Ok(()),
                }
            })?
            .ok_or_else(|| {
                npz.error(format!("no {key} for parameter {i} (has: {})", npz.names()))
            })?;
        out.push(
            a.to_array(ty, bits_of)
                .map_err(|e| npz.error(format!("{key}: {}", e.message)))?,
        );
    }
    Ok(out)
}

/// Reads `out0, out1, ...` with their sidecar types (bit-stored arrays come
/// back as their real type; the rest as their numpy type).
pub fn read_outputs(path: &Path) -> Result<Vec<Array>> {
    read_outputs_within(path, None)
}

/// [`read_outputs`] for a module whose outputs have dimensions `dims`:
/// an archive with more outputs, or an output of other dimensions, is an
/// error before its data is inflated. `None`: any number, any shape.
pub fn read_outputs_within(path: &Path, dims: Option<&[Vec<usize>]>) -> Result<Vec<Array>> {
    let mut npz = Npz::open(path)?;
    let side = read_sidecar(path)?;
    let mut out = Vec::new();
    if let Some(d) = dims {
        let held = (0..)
            .take_while(|i| npz.member(&format!("out{i}")).is_some())
            .count();
        if held > d.len() {
            return Err(npz.error(format!(
                "holds {held} outputs, the module returns {}",
                d.len()
            )));
        }
        // Comparing nothing would pass whatever the module computes.
        if held == 0 && !d.is_empty() {
            return Err(npz.error(format!(
                "holds no out0, so nothing to compare the module's {} outputs with (has: {})",
                d.len(),
                npz.names()
            )));
        }
    }
    for i in 0.. {
        let key = format!("out{i}");
        let want = dims.map(|d| d.get(i));
        let read = npz.read(&key, |h| match want {
            Some(Some(d)) if *d != h.shape => Err(err(format!(
                "holds {}, the module's output {i} is [{}]",
                h.describe(),
                super::array::dims_text(d)
            ))),
            _ => Ok(()),
        })?;
        let Some(a) = read else { break };
        let ty = match side.get(&key) {
            Some(&t) => t,
            None => natural_type(&a.descr)?,
        };
        out.push(
            a.to_array(ty, side.get(&key).copied())
                .map_err(|e| npz.error(format!("{key}: {}", e.message)))?,
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// A file that takes `room` bytes and then is full, and whose first
    /// large write (one the buffer passes through) is interrupted (a
    /// signal).
    struct Disk {
        file: Cursor<Vec<u8>>,
        room: usize,
        interrupted: bool,
    }

    impl Write for Disk {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if buf.len() >= 8192 && !std::mem::replace(&mut self.interrupted, true) {
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            if self.file.position() as usize + buf.len() > self.room {
                return Err(std::io::Error::other("No space left on device"));
            }
            self.file.write(buf)
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Seek for Disk {
        fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
            self.file.seek(to)
        }
    }

    /// Three 60 KB entries zipped onto `disk`, as `write_npz` does.
    fn zip_onto(disk: &mut Disk) -> zip::result::ZipResult<()> {
        let mut z = zip::ZipWriter::new(QuietAfterError::new(std::io::BufWriter::new(disk)));
        // Stored: the sizes on disk are the entries' own.
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored)
            .large_file(true);
        for k in 0..3u8 {
            z.start_file(format!("out{k}.npy"), opts)?;
            z.write_all(&vec![k; 60_000])?;
        }
        z.finish()?.flush()?;
        Ok(())
    }

    #[test]
    fn an_interrupted_write_is_retried_and_the_archive_is_whole() {
        let mut disk = Disk {
            file: Cursor::new(Vec::new()),
            room: usize::MAX,
            interrupted: false,
        };
        zip_onto(&mut disk).unwrap();
        let mut archive = zip::ZipArchive::new(Cursor::new(disk.file.into_inner())).unwrap();
        for k in 0..3u8 {
            let mut bytes = Vec::new();
            archive
                .by_name(&format!("out{k}.npy"))
                .unwrap()
                .read_to_end(&mut bytes)
                .unwrap();
            assert_eq!(bytes, vec![k; 60_000]);
        }
    }

    /// The disk fills mid-archive: the error comes back, and the zip
    /// writer's `drop` finishes quietly (a debug build asserts that its
    /// offsets add up, which they do not if a seek says 0).
    #[test]
    fn a_disk_full_mid_archive_is_the_error_and_drop_is_quiet() {
        for room in [0, 100, 1_000, 70_000, 130_000] {
            let mut disk = Disk {
                file: Cursor::new(Vec::new()),
                room,
                interrupted: false,
            };
            match zip_onto(&mut disk) {
                Err(zip::result::ZipError::Io(e)) => {
                    assert!(e.to_string().contains("No space left"), "{room}: {e}");
                }
                other => panic!("{room}: {other:?}"),
            }
        }
    }
}
