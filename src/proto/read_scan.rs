//! Splitting a module into its computations and instructions without
//! decoding them, and pass 1 over each instruction ([`Scan`]).

use super::err;
use super::messages::*;
use super::read_source::Source;
use super::wire::{
    decode_key, decode_varint, fields, merge_into, repeated_i64, skip_field, take_delimited,
    varint, wrong_wire_type,
};
use super::ProtoError;
use crate::util::FxMap;
use prost::encoding::WireType;
use smallvec::SmallVec;

/// A computation before conversion: its fields but the instructions, and
/// the encoded instructions.
pub(super) struct CompData<'a> {
    pub(super) shell: HloComputationProto,
    pub(super) instrs: Vec<&'a [u8]>,
}

/// Where a computation is in the input, and what the module needs of it
/// before it is converted (the rest is read again, in [`CompData`]).
pub(crate) struct CompHead {
    pub(super) at: usize,
    pub(super) len: usize,
    pub(super) id: i64,
    pub(super) name: String,
}

/// The top of a module: every field but the computations, and where the
/// computations are, in proto order.
pub(crate) struct ModuleData {
    pub shell: HloModuleProto,
    /// The encoded fields the IR does not model ([`Module::proto_extras`]).
    pub(super) extras: Vec<u8>,
    /// Where each computation's encoded message is, in proto order.
    pub(super) comp_at: Vec<(usize, usize)>,
    /// Whether a field past 4 was seen: then the input is a module, not an
    /// `HloProto` or `HloSnapshot` ([`super::unwrap_module`]).
    pub(super) field_past_4: bool,
    /// Filled by [`super::from_proto`] from `comp_at`.
    pub(super) comps: Vec<CompHead>,
    /// The fault that ended the walk of the module's fields, if one did:
    /// reported after any in the computations before it, as a walk in
    /// byte order finds them.
    pub(super) fault: Option<ProtoError>,
}

/// `HloModuleProto` fields the IR does not model, kept as bytes: `id`,
/// `cross_program_prefetches`, `is_dynamic`, `spmd_output_sharding`,
/// `profile_info`, `spmd_parameters_shardings`, `device_assignment`,
/// `use_auto_spmd_partitioning`, `payloads` (decoded too, for the backend
/// configs that refer to them; kept for anything else that may).
pub(super) const MODULE_EXTRA_FIELDS: &[u32] = &[5, 10, 11, 12, 13, 14, 15, 16, 22];

/// Decodes the module's own fields and finds its computations without
/// reading them: the field keys are read one by one from `src`, and a
/// computation's bytes are skipped. A malformed field ends the walk
/// ([`ModuleData::fault`]).
pub(crate) fn split_module<S: Source + ?Sized>(src: &S) -> ModuleData {
    let mut data = ModuleData {
        shell: HloModuleProto::default(),
        extras: Vec::new(),
        comp_at: Vec::new(),
        field_past_4: false,
        comps: Vec::new(),
        fault: None,
    };
    if let Err(e) = module_fields(src, &mut data) {
        data.fault = Some(e);
    }
    data
}

fn module_fields<S: Source + ?Sized>(src: &S, data: &mut ModuleData) -> Result<(), ProtoError> {
    const WHAT: &str = "HloModuleProto";
    let total = src.len();
    let mut buf = Vec::new();
    let mut pos = 0;
    while pos < total {
        let field = |e: ProtoError| e.prefix_path(WHAT).at_offset(pos);
        // A key and a length are at most 15 bytes.
        let head = src.read(pos, (total - pos).min(16), &mut buf)?;
        let mut b = head;
        let (tag, wt) = decode_key(&mut b).map_err(|e| field(ProtoError::decode(WHAT, e)))?;
        let key_len = head.len() - b.len();
        data.field_past_4 |= tag > 4;
        if tag == 3 {
            if wt != WireType::LengthDelimited {
                return Err(field(ProtoError::new(
                    "HloModuleProto.computations: wrong wire type",
                )));
            }
            let len = varint(&mut b, "HloModuleProto.computations").map_err(field)?;
            let at = pos + (head.len() - b.len());
            let len = usize::try_from(len).unwrap_or(usize::MAX);
            if len > total - at {
                return Err(field(ProtoError::new(
                    "HloModuleProto.computations: truncated (a field runs past the end of its message)",
                )));
            }
            data.comp_at.push((at, len));
            pos = at + len;
            continue;
        }
        // The field's value: what its wire type says, else the rest (for
        // the error the decoder gives).
        let value_at = pos + key_len;
        let rest = total - value_at;
        let len = match wt {
            WireType::Varint => rest.min(10),
            WireType::SixtyFourBit => rest.min(8),
            WireType::ThirtyTwoBit => rest.min(4),
            WireType::LengthDelimited => varint(&mut b, WHAT)
                .ok()
                .and_then(|l| usize::try_from(l).ok())
                .map_or(rest, |l| (l + (head.len() - b.len()) - key_len).min(rest)),
            // Groups are not a module's; the decoder says so.
            _ => rest,
        };
        let value = src.read(value_at, len, &mut buf)?;
        let mut v = value;
        if MODULE_EXTRA_FIELDS.contains(&tag) || !HloModuleProtoFields::knows(tag) {
            // Decoded too, so that a malformed one is an error.
            merge_into(&mut data.shell, tag, wt, &mut v, WHAT).map_err(field)?;
            let used = value.len() - v.len();
            prost::encoding::encode_key(tag, wt, &mut data.extras);
            data.extras.extend_from_slice(&value[..used]);
        } else {
            merge_into(&mut data.shell, tag, wt, &mut v, WHAT).map_err(field)?;
        }
        pos = value_at + (value.len() - v.len());
    }
    Ok(())
}

pub(super) fn split_computation(bytes: &[u8]) -> Result<CompData<'_>, ProtoError> {
    let mut shell = HloComputationProto::default();
    let mut instrs = Vec::new();
    fields(bytes, "HloComputationProto", |tag, wt, buf| {
        if tag == 2 {
            if wt != WireType::LengthDelimited {
                return err("HloComputationProto.instructions: wrong wire type");
            }
            let at = *buf;
            let i = take_delimited(buf, "HloComputationProto.instructions")
                .map_err(|e| e.in_path(&format!("instructions[{}]", instrs.len()), at))?;
            instrs.push(i);
            Ok(())
        } else if tag == 4 {
            // The program shape: XLA derives it from the instructions, and so
            // does the writer.
            skip_field(tag, wt, buf)
        } else {
            merge_into(&mut shell, tag, wt, buf, "HloComputationProto")
        }
    })?;
    Ok(CompData { shell, instrs })
}

/// What pass 1 reads of an encoded instruction: its id, name, edges,
/// stack frame and encoded shape.
pub(super) struct Scan<'a> {
    pub(super) id: i64,
    pub(super) name: &'a [u8],
    /// The last `shape` field, and how many there are (several merge).
    pub(super) shape: Option<&'a [u8]>,
    pub(super) shape_fields: u32,
    pub(super) operands: SmallVec<[i64; 4]>,
    pub(super) control: SmallVec<[i64; 1]>,
    pub(super) called: SmallVec<[i64; 2]>,
    pub(super) stack_frame_id: i32,
}

impl<'a> Scan<'a> {
    fn empty() -> Scan<'a> {
        Scan {
            id: 0,
            name: &[],
            shape: None,
            shape_fields: 0,
            operands: SmallVec::new(),
            control: SmallVec::new(),
            called: SmallVec::new(),
            stack_frame_id: 0,
        }
    }

    pub(super) fn new(bytes: &'a [u8]) -> Result<Scan<'a>, ProtoError> {
        const WHAT: &str = "HloInstructionProto";
        let mut s = Scan::empty();
        fields(bytes, WHAT, |tag, wt, buf| {
            match (tag, wt) {
                (1, WireType::LengthDelimited) => s.name = take_delimited(buf, WHAT)?,
                (3, WireType::LengthDelimited) => {
                    s.shape = Some(take_delimited(buf, WHAT)?);
                    s.shape_fields += 1;
                }
                (7, WireType::LengthDelimited) => {
                    metadata_frame(take_delimited(buf, WHAT)?, &mut s.stack_frame_id)?;
                }
                (35, WireType::Varint) => s.id = varint(buf, WHAT)? as i64,
                (36, _) => repeated_i64(&mut s.operands, tag, wt, buf)?,
                (37, _) => repeated_i64(&mut s.control, tag, wt, buf)?,
                (38, _) => repeated_i64(&mut s.called, tag, wt, buf)?,
                (1 | 3 | 7 | 35, _) => return wrong_wire_type(WHAT, tag, wt),
                _ => skip_field(tag, wt, buf)?,
            }
            Ok(())
        })?;
        Ok(s)
    }

    /// Pass 1 over the `k`-th instruction of a computation: the quick walk,
    /// or the full one for what it does not take (and the error).
    pub(super) fn at(k: usize, bytes: &'a [u8]) -> Result<Scan<'a>, ProtoError> {
        Scan::quick(bytes).map_or_else(
            || Scan::new(bytes).map_err(|e| e.in_path(&format!("instructions[{k}]"), bytes)),
            Ok,
        )
    }

    /// [`Scan::new`] over well-formed bytes, as [`quick_id_and_frame`]
    /// walks them; `None` at anything unusual.
    fn quick(mut b: &'a [u8]) -> Option<Scan<'a>> {
        let mut s = Scan::empty();
        while !b.is_empty() {
            let key = quick_key(&mut b)?;
            match key {
                0x0a => s.name = quick_delimited(&mut b)?,
                0x1a => {
                    s.shape = Some(quick_delimited(&mut b)?);
                    s.shape_fields += 1;
                }
                0x3a => quick_metadata_frame(quick_delimited(&mut b)?, &mut s.stack_frame_id)?,
                0x118 => s.id = decode_varint(&mut b).ok()? as i64,
                0x120..=0x127 => quick_repeated_i64(&mut s.operands, key, &mut b)?,
                0x128..=0x12f => quick_repeated_i64(&mut s.control, key, &mut b)?,
                0x130..=0x137 => quick_repeated_i64(&mut s.called, key, &mut b)?,
                _ if matches!(key >> 3, 1 | 3 | 7 | 35) => return None,
                _ => quick_skip(key, &mut b)?,
            }
        }
        Some(s)
    }

    /// The `k`-th instruction's id and stack frame id only, at less cost
    /// than [`Scan::at`]: the other fields are skipped unread, so a fault
    /// in them is left for pass 1 to report.
    pub(super) fn id_and_frame(k: usize, bytes: &[u8]) -> Result<(i64, i32), ProtoError> {
        // Something the quick walk does not take: the full walk, for the
        // error it gives (or the rare field it reads right).
        quick_id_and_frame(bytes).map_or_else(
            || {
                full_id_and_frame(bytes)
                    .map_err(|e| e.in_path(&format!("instructions[{k}]"), bytes))
            },
            Ok,
        )
    }

    pub(super) fn name(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(self.name)
    }
}

fn full_id_and_frame(bytes: &[u8]) -> Result<(i64, i32), ProtoError> {
    const WHAT: &str = "HloInstructionProto";
    let (mut id, mut frame) = (0, 0);
    fields(bytes, WHAT, |tag, wt, buf| {
        match (tag, wt) {
            (7, WireType::LengthDelimited) => {
                metadata_frame(take_delimited(buf, WHAT)?, &mut frame)?
            }
            (35, WireType::Varint) => id = varint(buf, WHAT)? as i64,
            (7 | 35, _) => return wrong_wire_type(WHAT, tag, wt),
            _ => skip_field(tag, wt, buf)?,
        }
        Ok(())
    })?;
    Ok((id, frame))
}

/// [`Scan::id_and_frame`] over well-formed bytes, walked without closures
/// or errors (this pre-pass sees every instruction): `None` at anything
/// unusual (a key past two bytes, a group, a wrong wire type, a length or
/// value past the end), which the full walk then reads.
fn quick_id_and_frame(mut b: &[u8]) -> Option<(i64, i32)> {
    let (mut id, mut frame) = (0, 0);
    while !b.is_empty() {
        let key = quick_key(&mut b)?;
        match key {
            // Field 7 (metadata), length-delimited.
            0x3a => quick_metadata_frame(quick_delimited(&mut b)?, &mut frame)?,
            // Field 35 (id), varint.
            0x118 => id = decode_varint(&mut b).ok()? as i64,
            _ if key >> 3 == 7 || key >> 3 == 35 => return None,
            _ => quick_skip(key, &mut b)?,
        }
    }
    Some((id, frame))
}

/// [`metadata_frame`] the quick way (field 15, varint).
fn quick_metadata_frame(mut b: &[u8], frame: &mut i32) -> Option<()> {
    while !b.is_empty() {
        let key = quick_key(&mut b)?;
        match key {
            0x78 => *frame = decode_varint(&mut b).ok()? as i32,
            _ if key >> 3 == 15 => return None,
            _ => quick_skip(key, &mut b)?,
        }
    }
    Some(())
}

/// [`repeated_i64`] the quick way: one varint, or a packed list.
#[inline(always)]
fn quick_repeated_i64<A: smallvec::Array<Item = i64>>(
    out: &mut SmallVec<A>,
    key: u32,
    b: &mut &[u8],
) -> Option<()> {
    match key & 7 {
        0 => out.push(decode_varint(b).ok()? as i64),
        2 => {
            let mut packed = quick_delimited(b)?;
            while !packed.is_empty() {
                out.push(decode_varint(&mut packed).ok()? as i64);
            }
        }
        _ => return None,
    }
    Some(())
}

/// A key of one or two bytes with a field number (not 0).
#[inline(always)]
fn quick_key(b: &mut &[u8]) -> Option<u32> {
    let key = match **b {
        [k, ..] if k < 0x80 => {
            *b = &b[1..];
            u32::from(k)
        }
        [k0, k1, ..] if k1 < 0x80 => {
            *b = &b[2..];
            u32::from(k0 & 0x7f) | u32::from(k1) << 7
        }
        _ => return None,
    };
    (key >> 3 != 0).then_some(key)
}

#[inline(always)]
fn quick_delimited<'a>(b: &mut &'a [u8]) -> Option<&'a [u8]> {
    let len = usize::try_from(decode_varint(b).ok()?).ok()?;
    let value = b.get(..len)?;
    *b = &b[len..];
    Some(value)
}

/// Skips a value of wire type varint, fixed 64, length-delimited or fixed
/// 32 (as [`skip_field`] does).
#[inline(always)]
fn quick_skip(key: u32, b: &mut &[u8]) -> Option<()> {
    let len = match key & 7 {
        0 => b.iter().take(10).position(|x| x & 0x80 == 0)? + 1,
        1 => 8,
        2 => return quick_delimited(b).map(|_| ()),
        5 => 4,
        _ => return None,
    };
    *b = b.get(len..)?;
    Some(())
}

/// The stack frame id in an encoded `OpMetadata`, if it has one (the
/// last wins, as when merging).
fn metadata_frame(m: &[u8], frame: &mut i32) -> Result<(), ProtoError> {
    fields(m, "OpMetadata", |tag, wt, buf| match (tag, wt) {
        (15, WireType::Varint) => {
            *frame = varint(buf, "OpMetadata")? as i32;
            Ok(())
        }
        (15, _) => wrong_wire_type("OpMetadata", tag, wt),
        _ => skip_field(tag, wt, buf),
    })
}

/// Proto instruction id -> position in the computation: a table when the
/// ids are dense (XLA numbers them `computation << 32 | n`), else a map.
pub(super) struct IdIndex {
    pub(super) base: i64,
    pub(super) dense: Vec<u32>,
    pub(super) map: FxMap<i64, u32>,
    /// The ids increase in proto order.
    pub(super) sorted: bool,
}

impl IdIndex {
    pub(super) fn new(scans: &[Scan<'_>]) -> Result<IdIndex, ProtoError> {
        let n = scans.len();
        let min = scans.iter().map(|s| s.id).min().unwrap_or(0);
        let max = scans.iter().map(|s| s.id).max().unwrap_or(0);
        let sorted = scans.windows(2).all(|w| w[0].id < w[1].id);
        let span = i128::from(max) - i128::from(min);
        let mut index = IdIndex {
            base: min,
            dense: Vec::new(),
            map: FxMap::default(),
            sorted,
        };
        let twice = |s: &Scan<'_>| {
            err(format!(
                "instruction id {} is used twice ({})",
                s.id,
                s.name()
            ))
        };
        if span < 4 * n as i128 + 16 {
            index.dense = vec![u32::MAX; span as usize + 1];
            for (i, s) in scans.iter().enumerate() {
                let slot = &mut index.dense[(s.id - min) as usize];
                if *slot != u32::MAX {
                    return twice(s);
                }
                *slot = i as u32;
            }
        } else {
            index.map.reserve(n);
            for (i, s) in scans.iter().enumerate() {
                if index.map.insert(s.id, i as u32).is_some() {
                    return twice(s);
                }
            }
        }
        Ok(index)
    }

    pub(super) fn get(&self, id: i64) -> Option<usize> {
        if self.dense.is_empty() {
            return self.map.get(&id).map(|&l| l as usize);
        }
        let i = usize::try_from(id.checked_sub(self.base)?).ok()?;
        match self.dense.get(i) {
            Some(&l) if l != u32::MAX => Some(l as usize),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    /// The quick walks read what the full walks read, or leave the bytes
    /// to them: on instructions as XLA writes them, and on those bytes cut
    /// and changed anywhere.
    #[test]
    // The messages are `Ext` wrappers: their fields are set through
    // `DerefMut`, not in a struct literal.
    #[allow(clippy::field_reassign_with_default)]
    fn the_quick_walks_agree_with_the_full_ones() {
        let mut good = Vec::new();
        for (id, frame) in [(0i64, 0i32), (1 << 32 | 7, 3), (5, 0), (-1, i32::MAX)] {
            let mut meta = OpMetadata::default();
            meta.op_name = "jit(f)/add".into();
            meta.stack_frame_id = frame;
            let mut m = HloInstructionProto::default();
            m.name = "add.3".into();
            m.opcode = "add".into();
            m.id = id;
            m.operand_ids = vec![1, 2];
            m.control_predecessor_ids = vec![4];
            let mut shape = ShapeProto::default();
            shape.element_type = 11;
            shape.dimensions = vec![4, 128];
            m.shape = Some(shape);
            m.called_computation_ids = vec![id, 9];
            m.metadata = Some(meta);
            let bytes = m.encode_to_vec();
            assert_eq!(quick_id_and_frame(&bytes), Some((id, frame)));
            good.push(bytes);
        }
        let mut seed = 1u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        let mut quick = 0;
        for _ in 0..20_000 {
            let mut b = good[next() % good.len()].clone();
            match next() % 3 {
                0 => b.truncate(next() % (b.len() + 1)),
                _ => {
                    let i = next() % b.len();
                    b[i] = next() as u8;
                }
            }
            if let Some(found) = quick_id_and_frame(&b) {
                quick += 1;
                assert_eq!(full_id_and_frame(&b).ok(), Some(found), "{b:?}");
            }
            if let Some(q) = Scan::quick(&b) {
                let f = Scan::new(&b).unwrap_or_else(|e| panic!("{e}: {b:?}"));
                let fields = |s: &Scan<'_>| {
                    (
                        s.id,
                        s.name.to_vec(),
                        s.shape.map(<[u8]>::to_vec),
                        s.shape_fields,
                        s.operands.to_vec(),
                        s.control.to_vec(),
                        s.called.to_vec(),
                        s.stack_frame_id,
                    )
                };
                assert_eq!(fields(&q), fields(&f), "{b:?}");
            }
        }
        assert!(quick > 1000, "the quick walk took {quick} of 20000");
    }
}
