//! Stack frames: XLA's renumbering of a proto's stack-frame tables, or
//! the tables as they are.

use super::err;
use super::messages::*;
use super::read_scan::{CompData, Scan};
use super::ProtoError;
use crate::ir::attrs::{typed, OpMetadata as MetadataValue};
use crate::ir::instruction::AttrValue;
use crate::ir::module::{FileLocation, ProtoFrames, StackFrame, StackFrameIndex};
use crate::util::{FxMap, FxSet};
use std::sync::Arc;

/// An instruction's nonzero stack frame id, and where the instruction is
/// in its computation's list (for an error about the frame).
#[derive(Clone, Copy, Debug)]
pub(super) struct FrameRef {
    pub(super) frame: i32,
    pub(super) index: usize,
}

/// The nonzero stack frame ids of a computation's instructions, in id order.
pub(super) fn frame_ids(c: &CompData<'_>) -> Result<Vec<FrameRef>, ProtoError> {
    let mut v: Vec<(i64, FrameRef)> = Vec::new();
    for (index, bytes) in c.instrs.iter().enumerate() {
        let (id, frame) = Scan::id_and_frame(index, bytes)?;
        if frame != 0 {
            v.push((id, FrameRef { frame, index }));
        }
    }
    v.sort_by_key(|x| x.0);
    Ok(v.into_iter().map(|x| x.1).collect())
}

/// Stack frames as XLA renumbers them, or as the proto has them.
pub(super) struct Frames<'p> {
    pub(super) index: Option<&'p StackFrameIndexProto>,
    pub(super) renumber: bool,
    /// The renumbered tables.
    out: StackFrameIndex,
    /// Proto frame id -> renumbered id.
    memo: FxMap<i32, i64>,
    /// The renumbered tables' entries, by value.
    files: FxMap<String, i64>,
    funcs: FxMap<String, i64>,
    locs: FxMap<(i64, i64, i64, i64, i64, i64), i64>,
    frames: FxMap<(i64, i64), i64>,
}

/// The module's stack-frame tables, and the proto's own where they differ.
pub(super) struct FrameTables {
    pub(super) stack_frames: Option<StackFrameIndex>,
    pub(super) proto_frames: Option<Arc<ProtoFrames>>,
}

/// The frames of a chain not numbered yet, leaf first, and the new id of
/// the first parent that is (0 if none).
struct UnnumberedChain {
    frames: Vec<i32>,
    parent: i64,
}

impl<'p> Frames<'p> {
    pub(super) fn new(index: Option<&'p StackFrameIndexProto>, renumber: bool) -> Frames<'p> {
        Frames {
            index,
            renumber,
            out: StackFrameIndex::default(),
            memo: FxMap::default(),
            files: FxMap::default(),
            funcs: FxMap::default(),
            locs: FxMap::default(),
            frames: FxMap::default(),
        }
    }

    /// The id to print for a proto stack frame id. An error names the table
    /// entry that holds a bad id (`stack_frame_index.stack_frames[2]...`);
    /// the caller adds the instruction whose metadata led there.
    pub(super) fn map(&mut self, id: i32) -> Result<i64, ProtoError> {
        if id == 0 || !self.renumber {
            return Ok(i64::from(id));
        }
        if let Some(&n) = self.memo.get(&id) {
            return Ok(n);
        }
        let Some(index) = self.index else {
            return err(format!(
                "stack_frame_id {id} but the module has no stack frame index"
            ));
        };
        let chain = self.unnumbered_chain(index, id)?;
        let mut parent_new = chain.parent;
        for &fid in chain.frames.iter().rev() {
            let new_id = self.add_frame(index, fid, parent_new)?;
            self.memo.insert(fid, new_id);
            parent_new = new_id;
        }
        Ok(parent_new)
    }

    /// The chain of `id`, stopping at a frame already numbered.
    fn unnumbered_chain(
        &self,
        index: &StackFrameIndexProto,
        id: i32,
    ) -> Result<UnnumberedChain, ProtoError> {
        let mut chain = UnnumberedChain {
            frames: Vec::new(),
            parent: 0,
        };
        let n = index.stack_frames.len();
        let mut cur = id;
        while cur != 0 {
            if let Some(&new_id) = self.memo.get(&cur) {
                chain.parent = new_id;
                break;
            }
            // Past n frames one repeats: the chain has entered a cycle.
            if chain.frames.len() > n {
                return err(cycle_message(&chain.frames, cur));
            }
            let Some(frame) = usize::try_from(cur - 1)
                .ok()
                .and_then(|i| index.stack_frames.get(i))
            else {
                return err(match chain.frames.last() {
                    None => format!("names no frame (stack_frame_index.stack_frames has {n})"),
                    Some(child) => format!(
                        "{}.parent_frame_id {cur} names no frame (the table has {n})",
                        frame_entry(*child)
                    ),
                });
            };
            chain.frames.push(cur);
            cur = frame.parent_frame_id;
        }
        Ok(chain)
    }

    /// Numbers proto frame `fid`, whose parent is numbered `parent`: its
    /// file, function, location and frame are added where new.
    fn add_frame(
        &mut self,
        index: &StackFrameIndexProto,
        fid: i32,
        parent: i64,
    ) -> Result<i64, ProtoError> {
        let frame = &index.stack_frames[(fid - 1) as usize];
        let loc_index = usize::try_from(frame.file_location_id - 1).ok();
        let Some((loc_index, loc)) =
            loc_index.and_then(|i| Some((i, index.file_locations.get(i)?)))
        else {
            return err(format!(
                "{}.file_location_id {} names no entry of stack_frame_index.file_locations \
                 (the table has {})",
                frame_entry(fid),
                frame.file_location_id,
                index.file_locations.len()
            ));
        };
        let name = |list: &[String], i: i32, field: &str, table: &str| {
            usize::try_from(i - 1)
                .ok()
                .and_then(|i| list.get(i))
                .cloned()
                .ok_or_else(|| {
                    ProtoError::new(format!(
                        "stack_frame_index.file_locations[{loc_index}].{field} {i} names no entry \
                         of stack_frame_index.{table} (the table has {})",
                        list.len()
                    ))
                })
        };
        let file = name(
            &index.file_names,
            loc.file_name_id,
            "file_name_id",
            "file_names",
        )?;
        let func = name(
            &index.function_names,
            loc.function_name_id,
            "function_name_id",
            "function_names",
        )?;
        let out = &mut self.out;
        let file_id = intern(&mut self.files, &mut out.file_names, file);
        let func_id = intern(&mut self.funcs, &mut out.function_names, func);
        let l = file_location(loc, file_id, func_id);
        let key = (
            l.file_name_id,
            l.function_name_id,
            l.line,
            l.end_line,
            l.column,
            l.end_column,
        );
        let loc_id = *self.locs.entry(key).or_insert_with(|| {
            out.file_locations.push(l);
            out.file_locations.len() as i64
        });
        Ok(*self.frames.entry((loc_id, parent)).or_insert_with(|| {
            out.stack_frames.push(StackFrame {
                file_location_id: loc_id,
                parent_frame_id: parent,
            });
            out.stack_frames.len() as i64
        }))
    }

    /// The id to print for a proto stack frame id [`Frames::map`] has seen.
    pub(super) fn lookup(&self, id: i32) -> Result<i64, ProtoError> {
        if id == 0 || !self.renumber {
            return Ok(i64::from(id));
        }
        match (self.memo.get(&id), self.index) {
            (Some(&n), _) => Ok(n),
            (None, None) => err(format!(
                "stack_frame_id {id} but the module has no stack frame index"
            )),
            (None, Some(_)) => err(format!("stack frame id {id} was not numbered")),
        }
    }

    /// Whether some frame [`Frames::map`] saw gets a number other than its
    /// proto id.
    pub(super) fn renumbers(&self) -> bool {
        self.renumber && self.memo.iter().any(|(&id, &n)| i64::from(id) != n)
    }

    /// Gives metadata read with the proto's stack frame id the number
    /// [`Frames::map`] gave that. `seen` holds each shared value renumbered
    /// beside the value it replaces (kept alive, so that its address, the
    /// key, is not reused).
    pub(super) fn renumber(
        &self,
        value: &mut AttrValue,
        seen: &mut FxMap<usize, (AttrValue, AttrValue)>,
    ) {
        let AttrValue::Metadata(m) = &*value else {
            return;
        };
        let Some(&n) = self.memo.get(&m.stack_frame_id) else {
            return;
        };
        if n == i64::from(m.stack_frame_id) {
            return;
        }
        let renumbered = || {
            AttrValue::Metadata(typed(MetadataValue {
                stack_frame_id: n as i32,
                ..m.value().clone()
            }))
        };
        *value = if Arc::strong_count(m) == 1 {
            renumbered()
        } else {
            let key = Arc::as_ptr(m) as usize;
            let (_, new) = seen
                .entry(key)
                .or_insert_with(|| (value.clone(), renumbered()));
            new.clone()
        };
    }

    /// The module's tables; where renumbered, the proto's own too, and
    /// which new id each proto id got, so that the module can be written
    /// back with them.
    pub(super) fn into_tables(self) -> FrameTables {
        let kept = match self.index {
            Some(index) if self.renumber => {
                let mut renumbered = vec![0i64; index.stack_frames.len()];
                for (&orig, &new) in &self.memo {
                    if let Some(slot) = usize::try_from(orig - 1)
                        .ok()
                        .and_then(|i| renumbered.get_mut(i))
                    {
                        *slot = new;
                    }
                }
                Some((index_from_proto(index), renumbered))
            }
            _ => None,
        };
        let stack_frames = self.finish();
        let mut proto_frames = None;
        if let Some((original, renumbered)) = kept {
            let read_as = stack_frames.clone().unwrap_or_default();
            if original != read_as {
                proto_frames = Some(Arc::new(ProtoFrames {
                    original,
                    read_as,
                    renumbered: renumbered.into(),
                }));
            }
        }
        FrameTables {
            stack_frames,
            proto_frames,
        }
    }

    fn finish(self) -> Option<StackFrameIndex> {
        if !self.renumber {
            return Some(index_from_proto(self.index?))
                .filter(|i| *i != StackFrameIndex::default());
        }
        (self.out != StackFrameIndex::default()).then_some(self.out)
    }
}

/// The table entry of proto frame id `id` (1-based; the entry 0-based).
fn frame_entry(id: i32) -> String {
    format!("stack_frame_index.stack_frames[{}]", i64::from(id) - 1)
}

/// A chain followed until `next` came round again: the entry where the
/// chain enters its cycle, and the cycle from there (`3 -> 2 -> 3`).
fn cycle_message(chain: &[i32], next: i32) -> String {
    let start = chain.iter().rposition(|&f| f == next).unwrap_or(0);
    let on_cycle: FxSet<i32> = chain[start..].iter().copied().collect();
    let entry = chain
        .iter()
        .position(|f| on_cycle.contains(f))
        .unwrap_or(start);
    let cycle: Vec<String> = chain[entry..]
        .iter()
        .take(on_cycle.len())
        .chain(chain.get(entry))
        .map(i32::to_string)
        .collect();
    format!(
        "{}: its parent chain has a cycle (frames {})",
        frame_entry(chain.get(entry).copied().unwrap_or(next)),
        cycle.join(" -> ")
    )
}

/// A name's id in a renumbered table, adding it if new.
fn intern<T: From<String>>(ids: &mut FxMap<String, i64>, list: &mut Vec<T>, name: String) -> i64 {
    *ids.entry(name.clone()).or_insert_with(|| {
        list.push(name.into());
        list.len() as i64
    })
}

fn file_location(l: &FileLocationProto, file_name_id: i64, function_name_id: i64) -> FileLocation {
    FileLocation {
        file_name_id,
        function_name_id,
        line: l.line.into(),
        end_line: l.end_line.into(),
        column: l.column.into(),
        end_column: l.end_column.into(),
    }
}

/// A proto's stack-frame tables, as they are.
pub(super) fn index_from_proto(index: &StackFrameIndexProto) -> StackFrameIndex {
    StackFrameIndex {
        file_names: index.file_names.iter().map(|s| s.as_str().into()).collect(),
        function_names: index
            .function_names
            .iter()
            .map(|s| s.as_str().into())
            .collect(),
        file_locations: index
            .file_locations
            .iter()
            .map(|l| file_location(l, l.file_name_id.into(), l.function_name_id.into()))
            .collect(),
        stack_frames: index
            .stack_frames
            .iter()
            .map(|f| StackFrame {
                file_location_id: f.file_location_id.into(),
                parent_frame_id: f.parent_frame_id.into(),
            })
            .collect(),
    }
}
