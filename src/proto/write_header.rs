//! The module's own fields from its header: host program shape,
//! aliasing, attributes, recovery table, stack-frame tables.

// Messages are `Ext` wrappers (known fields behind `Deref`), which struct
// literals cannot fill: fields are set one by one.
#![allow(clippy::field_reassign_with_default)]

use super::attrs;
use super::err;
use super::messages::*;
use super::to_proto::module_to_proto;
use super::write_shape::shape_to_proto;
use super::ProtoError;
use crate::ir::instruction::{Attr, AttrValue};
use crate::ir::module::StackFrameIndex;
use crate::ir::Module;

/// The written entry layout, or the entry's own.
pub(super) fn host_program_shape(m: &Module) -> Option<ProgramShapeProto> {
    let l = m
        .entry_computation_layout()
        .cloned()
        .or_else(|| m.derived_entry_layout())?;
    let mut ps = ProgramShapeProto::default();
    ps.parameters = l.parameters.iter().map(shape_to_proto).collect();
    ps.result = Some(shape_to_proto(&l.result));
    // XLA's `ComputationLayout::ComputeProgramShape` names them so.
    ps.parameter_names = (0..ps.parameters.len()).map(|i| format!("p{i}")).collect();
    Some(ps)
}

/// The header attributes' fields (aliasing, donors and frontend
/// attributes written even where empty, as XLA does).
pub(super) fn header_to_proto(header: &[Attr], p: &mut HloModuleProto) -> Result<(), ProtoError> {
    let mut alias = HloInputOutputAliasProto::default();
    let mut donor = HloBufferDonorProto::default();
    let mut fa = FrontendAttributes::default();
    for a in header {
        match (&*a.key, &a.value) {
            ("input_output_alias", AttrValue::InputOutputAlias(v)) => {
                alias = attrs::to_input_output_alias(v)
            }
            ("buffer_donor", AttrValue::BufferDonor(v)) => donor = attrs::to_buffer_donor(v),
            ("frontend_attributes", AttrValue::FrontendAttributes(v)) => {
                fa = attrs::to_frontend_attributes(v)
            }
            ("origin_recovery_table", AttrValue::RecoveryTable(v)) => {
                p.original_value_recovery_table = Some(recovery_table(v)?)
            }
            ("debug_attributes", AttrValue::DebugAttributes(v)) => {
                p.debug_attributes = attrs::to_debug_attributes(v)
            }
            (
                key @ ("input_output_alias"
                | "buffer_donor"
                | "frontend_attributes"
                | "origin_recovery_table"
                | "debug_attributes"),
                _,
            ) => return err(format!("header attribute {key}: unexpected value")),
            _ => {}
        }
    }
    p.input_output_alias = Some(alias);
    p.buffer_donor = Some(donor);
    p.frontend_attributes = Some(fa);
    Ok(())
}

pub(super) fn stack_frame_index(sf: &StackFrameIndex) -> StackFrameIndexProto {
    let mut idx = StackFrameIndexProto::default();
    idx.file_names = sf.file_names.iter().map(|s| s.to_string()).collect();
    idx.function_names = sf.function_names.iter().map(|s| s.to_string()).collect();
    idx.file_locations = sf
        .file_locations
        .iter()
        .map(|l| {
            let mut x = FileLocationProto::default();
            x.file_name_id = l.file_name_id as i32;
            x.function_name_id = l.function_name_id as i32;
            x.line = l.line as i32;
            x.end_line = l.end_line as i32;
            x.column = l.column as i32;
            x.end_column = l.end_column as i32;
            x
        })
        .collect();
    idx.stack_frames = sf
        .stack_frames
        .iter()
        .map(|f| {
            let mut x = StackFrameProto::default();
            x.file_location_id = f.file_location_id as i32;
            x.parent_frame_id = f.parent_frame_id as i32;
            x
        })
        .collect();
    idx
}

/// The header's `origin_recovery_table`, each recovery module written as
/// a module of its own.
fn recovery_table(
    entries: &[crate::ir::attrs::RecoveryEntry],
) -> Result<OriginalValueRecoveryTableProto, ProtoError> {
    let mut table = OriginalValueRecoveryTableProto::default();
    for e in entries {
        let mut x = OriginalValueRecoveryTableEntry::default();
        x.old_original_array = Some(attrs::to_original_array(&e.old));
        x.new_original_array = Some(attrs::to_original_array(&e.new));
        if let Some(m) = &e.module {
            let module = module_to_proto(m).map_err(|e| e.context("origin_recovery_table"))?;
            x.recovery_module = Some(Box::new(module));
        }
        table.entries.push(x);
    }
    Ok(table)
}
