//! The stack frame tables (`FileNames` ... `StackFrames`): every id names
//! an entry of its table, no frame is its own ancestor, and an
//! instruction's `metadata` names a frame of the module's.

use super::{module_error, VerifyError};
use crate::ir::instruction::AttrValue;
use crate::ir::module::StackFrame;
use crate::ir::{Instruction, Module, SourcePos};

/// An instruction's `metadata={... stack_frame_id=N}` names a frame of the
/// module's table.
pub(super) fn check_frame_ref(module: &Module, instr: &Instruction) -> Result<(), String> {
    let Some(AttrValue::Metadata(md)) = instr.attr("metadata") else {
        return Ok(());
    };
    let id = md.stack_frame_id;
    let frames = module
        .stack_frames
        .as_ref()
        .map_or(0, |f| f.stack_frames.len());
    if id != 0 && usize::try_from(id).map_or(true, |i| i > frames) {
        return Err(format!(
            "metadata stack_frame_id={id} names no frame (the module has {frames})"
        ));
    }
    Ok(())
}

/// The stack-frame tables hold together: every id names an entry of its
/// table, and no frame is its own ancestor (what the proto reader needs
/// of the protos the writer makes).
pub(super) fn check_stack_frames(module: &Module) -> Result<(), VerifyError> {
    let Some(t) = &module.stack_frames else {
        return Ok(());
    };
    // Where the text wrote entry `k` of a table (a proto has no lines).
    let positions = module.stack_frame_positions.as_deref();
    let file_location = |k: usize| positions.and_then(|p| p.file_locations.get(k).copied());
    let frame = |k: usize| positions.and_then(|p| p.stack_frames.get(k).copied());
    let in_table = |id: i64, len: usize| usize::try_from(id).is_ok_and(|i| i >= 1 && i <= len);
    for (k, l) in t.file_locations.iter().enumerate() {
        if !in_table(l.file_name_id, t.file_names.len()) {
            return Err(entry_error(
                file_location(k),
                format!(
                "FileLocations entry {}: file_name_id={} names no entry of FileNames ({} entries)",
                k + 1,
                l.file_name_id,
                t.file_names.len()
            ),
            ));
        }
        if !in_table(l.function_name_id, t.function_names.len()) {
            return Err(entry_error(file_location(k), format!(
                "FileLocations entry {}: function_name_id={} names no entry of FunctionNames ({} entries)",
                k + 1,
                l.function_name_id,
                t.function_names.len()
            )));
        }
    }
    let n = t.stack_frames.len();
    for (k, f) in t.stack_frames.iter().enumerate() {
        if !in_table(f.file_location_id, t.file_locations.len()) {
            return Err(entry_error(frame(k), format!(
                "StackFrames entry {}: file_location_id={} names no entry of FileLocations ({} entries)",
                k + 1,
                f.file_location_id,
                t.file_locations.len()
            )));
        }
        // The text writes the parent plus one (1: no parent).
        if f.parent_frame_id != 0 && !in_table(f.parent_frame_id, n) {
            return Err(entry_error(
                frame(k),
                format!(
                "StackFrames entry {}: parent_frame_id={} names no frame ({n} frames; 1 is none)",
                k + 1,
                f.parent_frame_id + 1
            ),
            ));
        }
    }
    check_frame_chains(&t.stack_frames).map_err(|k| {
        entry_error(
            frame(k),
            format!("StackFrames entry {}: its parent chain has a cycle", k + 1),
        )
    })
}

/// A fault of a table entry, at its line when the text gave one.
fn entry_error(pos: Option<SourcePos>, message: String) -> VerifyError {
    VerifyError {
        pos,
        ..module_error(message)
    }
}

/// No frame is its own ancestor: each chain is followed at most n steps,
/// marking frames known to reach the root. The error is the index of a
/// frame whose chain has a cycle.
fn check_frame_chains(frames: &[StackFrame]) -> Result<(), usize> {
    let n = frames.len();
    let mut reaches_root = vec![false; n];
    for start in 0..n {
        let mut chain = Vec::new();
        let mut cur = start;
        loop {
            if reaches_root.get(cur).copied().unwrap_or(true) {
                break;
            }
            if chain.len() > n {
                return Err(start);
            }
            chain.push(cur);
            let parent = frames.get(cur).map_or(0, |f| f.parent_frame_id);
            match usize::try_from(parent - 1) {
                Ok(p) => cur = p,
                Err(_) => break,
            }
        }
        for c in chain {
            if let Some(r) = reaches_root.get_mut(c) {
                *r = true;
            }
        }
    }
    Ok(())
}
