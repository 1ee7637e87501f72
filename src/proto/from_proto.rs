//! `HloModuleProto` -> [`Module`], printing what XLA prints for the proto.
//!
//! What XLA does when it loads a proto, and so what this reader does:
//! - each computation's instructions are ordered by proto id, and printed in
//!   post order from that list (or in the schedule's order);
//! - computations are ordered by proto id and printed in XLA's computation
//!   post order (`MakeComputationPostOrder`);
//! - the stack-frame tables are rebuilt by walking the computations in proto
//!   order and their instructions in id order, each frame's chain added root
//!   first ([`ReadOptions::xla_order`]).
//!
//! The input is a [`Source`]: memory, or a file read by byte range, so
//! that a file is never held whole. The module's own fields are walked key
//! by key and the computations' places noted (`split_module`); then, on
//! all cores, each computation's bytes are read, split and converted
//! (`read_learning_ids`). What a computation cannot know while it converts
//! is settled after: the computations it calls that were not read yet get
//! stand-ins ([`CompIds`]), replaced once all are read, and its metadata
//! keeps the proto's stack frame ids, which XLA's numbering replaces once
//! every computation has said which frames it meets first.
//!
//! A fault stops that read, and the input is read again the way that
//! checks in the order faults are reported (`read_ids_first`): every
//! computation's id and stack frames first, then the conversion, so that
//! the error is the one a reader in byte order meets first.
//!
//! The reader streams. Per computation, pass 1 scans each encoded
//! instruction for its id, name, edges, stack frame and the bytes of its
//! shape (shapes are interned by those bytes); pass 2, in print order,
//! decodes each instruction into one reused message (metadata read in
//! place) and writes every name and attribute text of the computation into
//! one buffer the IR's strings are slices of. Computations convert on all
//! cores (`util::par_map_heavy_first`); the ids and frames are settled in
//! proto order, so the result does not depend on the thread count.

use super::err;
use super::read_async::fold_async_sugar;
use super::read_comp_ids::{CompIds, StandIns};
use super::read_computation::{ReadComputation, Reader};
use super::read_frames::{frame_ids, FrameRef, Frames};
use super::read_header::module_header;
use super::read_order::computation_order;
use super::read_scan::{split_computation, split_module, CompHead, ModuleData, Scan};
use super::read_source::Source;
use super::ProtoError;
use crate::ir::module::PrintOptions;
use crate::ir::{CompId, Computation, Module};
use crate::util::par_map_heavy_first;
use crate::util::FxMap;
use smallvec::SmallVec;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// How to read a proto.
#[derive(Clone, Copy, Debug)]
pub struct ReadOptions {
    /// Order the computations and renumber the stack-frame tables as XLA
    /// does when it loads a proto (true, the default: the text is what XLA
    /// prints). False keeps the proto's computation order and numbering, so
    /// that a module written by [`super::module_to_proto`] reads back as the
    /// text it was written from.
    pub xla_order: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions { xla_order: true }
    }
}

/// Reads a binary `HloModuleProto`.
pub fn module_from_proto(bytes: &[u8], options: &ReadOptions) -> Result<Module, ProtoError> {
    read(bytes, split_module(bytes), options)
}

/// Reads a module from `src` if it is plainly an `HloModuleProto` (it has a
/// field past 4: see [`super::unwrap_module`]); `None` if it may be
/// something else, or is not a proto at all.
pub(crate) fn module_from_source<S: Source + ?Sized>(
    src: &S,
    options: &ReadOptions,
) -> Option<Result<Module, ProtoError>> {
    let data = split_module(src);
    if !data.field_past_4 || data.fault.is_some() {
        return None;
    }
    Some(read(src, data, options))
}

/// Whether a module is worth converting on several threads.
fn worth_threads(comp_at: &[(usize, usize)]) -> bool {
    // About 120 bytes an instruction: 4,000 instructions.
    comp_at.len() > 1 && comp_at.iter().map(|c| c.1).sum::<usize>() > 480_000
}

/// Where an error in the `i`-th computation is: `bytes`, read from offset
/// `at` of the input.
fn in_computation(e: ProtoError, i: usize, name: &str, bytes: &[u8], at: usize) -> ProtoError {
    e.context(format!("computation {name}"))
        .in_path(&format!("HloModuleProto.computations[{i}]"), bytes)
        .located_at(bytes, at)
}

/// Where a bad stack frame id reached from an instruction's metadata is:
/// the instruction (computation, name, message path and offset) and its
/// `stack_frame_id`; `e` names the table entry.
fn in_metadata<S: Source + ?Sized>(
    src: &S,
    data: &ModuleData,
    i: usize,
    r: FrameRef,
    e: ProtoError,
) -> ProtoError {
    let comp = data.comps.get(i).map_or("", |c| c.name.as_str());
    let frame = r.frame;
    // Read again, only for the error: the instruction's name and bytes.
    let mut buf = Vec::new();
    let bytes = data
        .comp_at
        .get(i)
        .and_then(|&(at, len)| Some((at, src.read(at, len, &mut buf).ok()?)));
    let instr = bytes.and_then(|(_, b)| split_computation(b).ok()?.instrs.get(r.index).copied());
    let name = instr.and_then(|b| Scan::new(b).ok()).map_or_else(
        || String::from("?"),
        |s| String::from_utf8_lossy(s.name).into_owned(),
    );
    let e = e.context(format!(
        "computation {comp}, instruction {name}, metadata.stack_frame_id {frame}"
    ));
    let (Some((at, bytes)), Some(instr)) = (bytes, instr) else {
        return e;
    };
    e.in_path(&format!("instructions[{}]", r.index), instr)
        .in_path(&format!("HloModuleProto.computations[{i}]"), bytes)
        .located_at(bytes, at)
}

/// Each computation's fields but the instructions, and (if asked for) the
/// stack frame ids of its instructions: read in parallel; a fault in
/// splitting is reported first, as a sequential read would, and a fault
/// in the frames when they are numbered.
fn read_heads<S: Source + ?Sized>(
    src: &S,
    data: &mut ModuleData,
    with_frames: bool,
    parallel: bool,
) -> Result<Vec<Result<Vec<FrameRef>, ProtoError>>, ProtoError> {
    let by_len = |&(_, len): &(usize, usize)| len;
    let results = par_map_heavy_first(
        &data.comp_at,
        parallel,
        by_len,
        Vec::new,
        |buf, i, &(at, len)| {
            let bytes = src.read(at, len, buf)?;
            let mut c = split_computation(bytes).map_err(|e| {
                e.in_path(&format!("computations[{i}]"), bytes)
                    .prefix_path("HloModuleProto")
                    .located_at(bytes, at)
            })?;
            let frames = if with_frames {
                frame_ids(&c).map_err(|e| in_computation(e, i, &c.shell.name, bytes, at))
            } else {
                Ok(Vec::new())
            };
            let head = CompHead {
                at,
                len,
                id: c.shell.id,
                name: std::mem::take(&mut c.shell.name),
            };
            Ok::<_, ProtoError>((head, frames))
        },
    );
    let mut frames = Vec::with_capacity(results.len());
    for r in results {
        let (head, f) = r?;
        data.comps.push(head);
        frames.push(f);
    }
    Ok(frames)
}

fn read<S: Source + ?Sized>(
    src: &S,
    data: ModuleData,
    options: &ReadOptions,
) -> Result<Module, ProtoError> {
    let parallel = worth_threads(&data.comp_at);
    read_on(src, data, options, parallel)
}

/// [`read`], on all cores if `parallel`.
fn read_on<S: Source + ?Sized>(
    src: &S,
    mut data: ModuleData,
    options: &ReadOptions,
    parallel: bool,
) -> Result<Module, ProtoError> {
    if data.fault.is_none() {
        if let Some(module) = read_learning_ids(src, &mut data, options, parallel) {
            return Ok(module);
        }
        data.comps.clear();
    }
    read_ids_first(src, data, options, parallel)
}

/// The usual read: each computation converts as soon as it is read, the
/// computation ids it calls learned on the way ([`CompIds::Learned`]) and
/// its metadata given the proto's stack frame ids, which XLA's numbering
/// replaces after. `None` at any fault: [`read_ids_first`] then reads the
/// input again, in the order of checks that says which fault is reported.
fn read_learning_ids<S: Source + ?Sized>(
    src: &S,
    data: &mut ModuleData,
    options: &ReadOptions,
    parallel: bool,
) -> Option<Module> {
    let shell = &data.shell;
    let mut module = Module::new(shell.name.as_str());
    let comp_refs: Vec<CompId> = data
        .comp_at
        .iter()
        .map(|_| module.reserve_computation())
        .collect();
    let comp_ids = CompIds::learned(comp_refs.len());
    let renumber = options.xla_order && shell.stack_frame_index.is_some();
    let scheduled = shell.schedule.is_some();
    let failed = AtomicBool::new(false);
    let results = par_map_heavy_first(
        &data.comp_at,
        parallel,
        |&(_, len)| len,
        || (Reader::new(&comp_ids, None, renumber, shell), Vec::new()),
        |(r, buf), i, &(at, len)| {
            // After a fault the rest is read again anyway.
            if failed.load(Ordering::Relaxed) {
                return None;
            }
            let read = (|| {
                let bytes = src.read(at, len, buf).ok()?;
                let mut c = split_computation(bytes).ok()?;
                comp_ids.define(c.shell.id, i).then_some(())?;
                let read = r.computation(&c, scheduled).ok()?;
                let name = std::mem::take(&mut c.shell.name);
                let head = CompHead {
                    at,
                    len,
                    id: c.shell.id,
                    name,
                };
                Some((head, read))
            })();
            if read.is_none() {
                failed.store(true, Ordering::Relaxed);
            }
            read
        },
    );
    let mut converted = Converted::with_capacity(results.len());
    let mut heads = Vec::with_capacity(results.len());
    let mut first_frames = Vec::with_capacity(results.len());
    for r in results {
        let (head, mut c) = r?;
        heads.push(head);
        first_frames.push(std::mem::take(&mut c.first_frames));
        converted.push(c);
    }
    let learned = comp_ids.into_learned()?;
    let stand_ins = learned.resolve()?;
    let entry = learned.get(shell.entry_computation_id)?.index();
    // XLA numbers the stack frames walking the computations in proto
    // order and their instructions in id order; a frame met before keeps
    // its number, so each computation's first use of each is enough.
    let mut frames = Frames::new(shell.stack_frame_index.as_ref(), options.xla_order);
    for refs in &first_frames {
        for r in refs {
            frames.map(r.frame).ok()?;
        }
    }
    settle(&mut converted, &stand_ins, &frames, parallel);
    data.comps = heads;
    assemble(data, options, module, converted, &comp_refs, entry, frames).ok()
}

/// What the computations could not know as they converted: the
/// computations they call that were read after them (stand-ins), and
/// XLA's numbers for their metadata's stack frames.
fn settle(converted: &mut Converted, stand_ins: &StandIns, frames: &Frames<'_>, parallel: bool) {
    let renumber = frames.renumbers();
    if stand_ins.is_empty() && !renumber {
        return;
    }
    let comps: Vec<Mutex<(&mut Computation, &mut Calls)>> = converted
        .built
        .iter_mut()
        .zip(converted.calls.iter_mut())
        .filter_map(|(c, calls)| Some(Mutex::new((c.as_mut()?, calls))))
        .collect();
    par_map_heavy_first(
        &comps,
        parallel,
        |c| c.lock().map_or(0, |c| c.0.slot_count()),
        FxMap::default,
        |seen, _, c| {
            let mut c = c.lock().unwrap_or_else(|e| e.into_inner());
            let (comp, calls) = &mut *c;
            let calls_stand_ins = stand_ins.replace_in_calls(calls);
            if !calls_stand_ins && !renumber {
                return;
            }
            for (_, instr) in comp.slots_mut() {
                for attr in instr.attrs.iter_mut() {
                    if calls_stand_ins {
                        stand_ins.replace_in(&mut attr.value);
                    }
                    if renumber {
                        frames.renumber(&mut attr.value, seen);
                    }
                }
            }
        },
    );
}

/// The read that checks in the order faults are reported: every
/// computation's id and stack frames read first (in parallel, reported in
/// module order), the frames numbered, then the computations converted.
fn read_ids_first<S: Source + ?Sized>(
    src: &S,
    mut data: ModuleData,
    options: &ReadOptions,
    parallel: bool,
) -> Result<Module, ProtoError> {
    let renumber = options.xla_order && data.shell.stack_frame_index.is_some();
    let with_frames = renumber && data.fault.is_none();
    let frame_ids = read_heads(src, &mut data, with_frames, parallel)?;
    if let Some(fault) = data.fault.take() {
        return Err(fault);
    }
    let data = &data;
    let comp_ids = computation_ids(data)?;
    let mut frames = Frames::new(data.shell.stack_frame_index.as_ref(), options.xla_order);
    let shell = &data.shell;
    let mut module = Module::new(shell.name.as_str());
    let comp_refs: Vec<CompId> = data
        .comps
        .iter()
        .map(|_| module.reserve_computation())
        .collect();
    let entry = *comp_ids.get(&shell.entry_computation_id).ok_or_else(|| {
        ProtoError::new(format!(
            "the entry computation id {} does not exist",
            shell.entry_computation_id
        ))
    })?;
    for (i, refs) in frame_ids.into_iter().enumerate() {
        for r in refs? {
            frames
                .map(r.frame)
                .map_err(|e| in_metadata(src, data, i, r, e))?;
        }
    }
    let known = CompIds::Known {
        positions: &comp_ids,
        refs: &comp_refs,
    };
    let converted = convert_computations(src, data, &known, &frames, renumber, parallel)?;
    assemble(data, options, module, converted, &comp_refs, entry, frames)
}

/// The module from its computations: async sugar folded, the computations
/// in XLA's order, the header and the stack-frame tables.
fn assemble(
    data: &ModuleData,
    options: &ReadOptions,
    mut module: Module,
    mut converted: Converted,
    comp_refs: &[CompId],
    entry: usize,
    frames: Frames<'_>,
) -> Result<Module, ProtoError> {
    let shell = &data.shell;
    let folded = if converted.any_async_start {
        fold_async_sugar(&mut converted.built, comp_refs, entry)
    } else {
        vec![false; converted.built.len()]
    };
    // The module is fresh: its computations' ids are their positions.
    let mut order = computation_order(data, &converted.calls, entry)?;
    if !frames.renumber {
        order = (0..data.comps.len()).collect();
    }
    for i in order {
        if folded[i] {
            continue;
        }
        let mut comp = converted.built[i]
            .take()
            .expect("each computation is placed once");
        comp.proto_position = Some(i);
        module.define_computation(comp_refs[i], comp);
    }
    module.set_entry(comp_refs[entry]);
    let mut extras = data.extras.clone();
    module.header = module_header(shell, options, &mut extras)?;
    let tables = frames.into_tables();
    module.stack_frames = tables.stack_frames;
    if let Some(p) = tables.proto_frames {
        module.proto_frames = Some(p);
    }
    if !extras.is_empty() {
        module.proto_extras = Some(extras.into());
    }
    module.style = PrintOptions::default_form();
    Ok(module)
}

/// Proto computation id -> position in the module.
fn computation_ids(data: &ModuleData) -> Result<FxMap<i64, usize>, ProtoError> {
    let mut comp_ids = FxMap::default();
    for (i, c) in data.comps.iter().enumerate() {
        if comp_ids.insert(c.id, i).is_some() {
            return err(format!(
                "computation id {} is used twice ({})",
                c.id, c.name
            ));
        }
    }
    Ok(comp_ids)
}

/// For each instruction of a computation in id order that calls
/// computations, the computations it calls.
type Calls = Vec<SmallVec<[CompId; 2]>>;

/// The computations converted, in proto order.
struct Converted {
    built: Vec<Option<Computation>>,
    calls: Vec<Calls>,
    any_async_start: bool,
}

impl Converted {
    fn with_capacity(n: usize) -> Converted {
        Converted {
            built: Vec::with_capacity(n),
            calls: Vec::with_capacity(n),
            any_async_start: false,
        }
    }

    fn push(&mut self, c: ReadComputation) {
        self.built.push(Some(c.comp));
        self.calls.push(c.calls);
        self.any_async_start |= c.has_async_start;
    }
}

fn convert_computations<S: Source + ?Sized>(
    src: &S,
    data: &ModuleData,
    comp_ids: &CompIds<'_>,
    frames: &Frames<'_>,
    renumbered_frames: bool,
    parallel: bool,
) -> Result<Converted, ProtoError> {
    let shell = &data.shell;
    let scheduled = shell.schedule.is_some();
    let results = par_map_heavy_first(
        &data.comps,
        parallel,
        |head| head.len,
        || {
            let r = Reader::new(comp_ids, Some(frames), renumbered_frames, shell);
            (r, Vec::new())
        },
        |(r, buf), i, head| {
            let bytes = src.read(head.at, head.len, buf)?;
            let at = |e| in_computation(e, i, &head.name, bytes, head.at);
            // Split again: `read_heads` kept nothing that points into the
            // bytes, which it may have read into a buffer now reused.
            let c = split_computation(bytes).map_err(at)?;
            r.computation(&c, scheduled).map_err(at)
        },
    );
    let mut out = Converted::with_capacity(data.comps.len());
    for r in results {
        out.push(r?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::instruction::AttrValue;
    use crate::proto::messages::HloModuleProto;
    use crate::proto::{module_to_proto_bytes, unwrap_module};
    use crate::text::printer::print_module;
    use prost::Message;

    /// The module the usual read gives (which must succeed), and the one
    /// the read that takes the ids first gives.
    fn both_reads(bytes: &[u8], options: &ReadOptions, parallel: bool) -> (Module, Module) {
        let mut data = split_module(bytes);
        let learned = read_learning_ids(bytes, &mut data, options, parallel)
            .expect("the usual read succeeds on a valid module");
        let first = read_ids_first(bytes, split_module(bytes), options, parallel)
            .unwrap_or_else(|e| panic!("{e}"));
        (learned, first)
    }

    /// The corpus's binary protos, in name order.
    fn corpus_protos() -> Vec<std::path::PathBuf> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .expect("the corpus")
            .map(|e| e.expect("an entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "pb"))
            .collect();
        files.sort();
        files
    }

    /// The outcome of a read, comparable: the text, or the error.
    fn outcome(r: Result<Module, ProtoError>) -> Result<String, String> {
        r.map(|m| print_module(&m)).map_err(|e| e.to_string())
    }

    /// A fault the usual read meets makes it give way to the read that
    /// takes the ids first, so the error is the one that read reports:
    /// computations called that do not exist, ids used twice, a missing
    /// entry, stack frames that name no frame or a table the module lacks,
    /// on the corpus with such faults put in at random (seeded).
    #[test]
    // The messages are `Ext` wrappers: their fields are set through
    // `DerefMut`, not in a struct literal.
    #[allow(clippy::field_reassign_with_default)]
    fn a_fault_is_reported_as_the_ids_first_read_reports_it() {
        let files = corpus_protos();
        let mut seed = 13u64;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n.max(1)
        };
        let (mut faults, mut kinds) = (0, [0usize; 6]);
        for path in &files {
            let bytes = std::fs::read(path).expect("readable");
            let (_, module) = unwrap_module(&bytes);
            let original = HloModuleProto::decode(module).expect("a module");
            for _ in 0..8 {
                let mut p = original.clone();
                let kind = next(6);
                let n = p.computations.len();
                let c = next(n);
                let frames = p
                    .stack_frame_index
                    .as_ref()
                    .map_or(0, |f| f.stack_frames.len());
                match kind {
                    0 => {
                        p.computations.remove(c);
                    }
                    1 => {
                        let id = p.computations[next(n)].id;
                        p.computations[c].id = id;
                    }
                    2 => p.entry_computation_id = 1 << 40,
                    5 => p.stack_frame_index = None,
                    3 | 4 => {
                        let instrs = &mut p.computations[c].instructions;
                        let k = next(instrs.len());
                        let Some(instr) = instrs.get_mut(k) else {
                            continue;
                        };
                        if kind == 3 {
                            let mut md = instr.metadata.clone().unwrap_or_default();
                            md.stack_frame_id = next(2 * frames + 2) as i32;
                            instr.metadata = Some(md);
                        } else {
                            instr
                                .called_computation_ids
                                .push(next(4) as i64 + 1_000_000);
                        }
                    }
                    _ => unreachable!(),
                }
                kinds[kind] += 1;
                let input = p.encode_to_vec();
                for parallel in [false, true] {
                    let options = ReadOptions::default();
                    let data = split_module(&input[..]);
                    let usual = outcome(read_on(&input[..], data, &options, parallel));
                    let first = outcome(read_ids_first(
                        &input[..],
                        split_module(&input[..]),
                        &options,
                        parallel,
                    ));
                    assert_eq!(usual, first, "{} with fault {kind}", path.display());
                    faults += usize::from(first.is_err() && parallel);
                }
            }
        }
        assert!(faults > 300, "{faults} faults, by kind {kinds:?}");
    }

    /// Whether some instruction's metadata names another stack frame than
    /// its proto did.
    fn frames_renumbered(m: &Module) -> bool {
        m.computations().any(|(_, c)| {
            c.instructions()
                .any(|(id, i)| match (i.attr("metadata"), c.proto_frame_id(id)) {
                    (Some(AttrValue::Metadata(md)), Some(p)) => md.stack_frame_id != p,
                    _ => false,
                })
        })
    }

    /// Learning the computation ids while converting (stand-ins for those
    /// called before they are read) and numbering the stack frames after
    /// gives the module, text and proto, that reading the ids and frames
    /// first gives: on the corpus as XLA wrote it (callees first) and with
    /// its computations reversed (the entry first: every call a stand-in;
    /// the frames met in another order, so renumbered).
    #[test]
    fn ids_learned_while_converting_give_the_module_read_ids_first() {
        let files = corpus_protos();
        assert!(files.len() > 100, "{} protos", files.len());
        let (mut reversed_calls, mut renumbered) = (0, 0);
        for path in &files {
            let bytes = std::fs::read(path).expect("readable");
            let (_, module) = unwrap_module(&bytes);
            let mut proto = HloModuleProto::decode(module).expect("a module");
            let many = proto.computations.len() > 1;
            proto.computations.reverse();
            let reversed = proto.encode_to_vec();
            for (variant, input) in [("as written", module), ("reversed", &reversed[..])] {
                for xla_order in [true, false] {
                    for parallel in [false, true] {
                        let options = ReadOptions { xla_order };
                        let (learned, first) = both_reads(input, &options, parallel);
                        let what = format!("{} {variant}, {options:?}", path.display());
                        assert_eq!(print_module(&learned), print_module(&first), "{what}");
                        let proto = |m: &Module| module_to_proto_bytes(m).expect("writable");
                        assert!(proto(&learned) == proto(&first), "{what}: protos differ");
                        if variant == "reversed" && xla_order && !parallel {
                            reversed_calls += usize::from(many);
                            renumbered += usize::from(frames_renumbered(&learned));
                        }
                    }
                }
            }
        }
        assert!(
            reversed_calls > 20,
            "{reversed_calls} modules call computations read after them"
        );
        assert!(
            renumbered > 5,
            "{renumbered} modules have frames renumbered"
        );
    }
}
