//! Splitting a module into its computations and instructions without
//! decoding them, and pass 1 over each instruction ([`Scan`]).

use super::err;
use super::messages::*;
use super::read_source::Source;
use super::wire::{
    decode_key, fields, merge_into, repeated_i64, skip_field, take_delimited, varint,
    wrong_wire_type,
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
    pub(super) fn new(bytes: &'a [u8]) -> Result<Scan<'a>, ProtoError> {
        const WHAT: &str = "HloInstructionProto";
        let mut s = Scan {
            id: 0,
            name: &[],
            shape: None,
            shape_fields: 0,
            operands: SmallVec::new(),
            control: SmallVec::new(),
            called: SmallVec::new(),
            stack_frame_id: 0,
        };
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

    /// Pass 1 over the `k`-th instruction of a computation.
    pub(super) fn at(k: usize, bytes: &'a [u8]) -> Result<Scan<'a>, ProtoError> {
        Scan::new(bytes).map_err(|e| e.in_path(&format!("instructions[{k}]"), bytes))
    }

    /// The `k`-th instruction's id and stack frame id only, at less cost
    /// than [`Scan::at`]: the other fields are skipped unread, so a fault
    /// in them is left for pass 1 to report.
    pub(super) fn id_and_frame(k: usize, bytes: &[u8]) -> Result<(i64, i32), ProtoError> {
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
        })
        .map_err(|e| e.in_path(&format!("instructions[{k}]"), bytes))?;
        Ok((id, frame))
    }

    pub(super) fn name(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(self.name)
    }
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
