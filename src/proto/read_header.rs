//! The module's header: what XLA prints from the proto's own fields
//! (schedule, aliasing, entry layout, attributes, recovery table).

use super::attrs;
use super::from_proto::{module_from_proto, ReadOptions};
use super::messages::*;
use super::read_shape::shape_from_proto;
use super::ProtoError;
use crate::ir::attrs::typed;
use crate::ir::instruction::{attr_key, Attr, AttrValue};
use crate::ir::module::ProgramShape;
use prost::Message;

/// The header's attributes. Debug attributes the text cannot say are
/// appended to `extras`, as bytes like any field the IR does not model.
pub(super) fn module_header(
    shell: &HloModuleProto,
    options: &ReadOptions,
    extras: &mut Vec<u8>,
) -> Result<Vec<Attr>, ProtoError> {
    let mut header: Vec<Attr> = Vec::new();
    let mut push = |key: &str, value: AttrValue| {
        header.push(Attr {
            key: attr_key(key),
            value,
        })
    };
    if shell.schedule.is_some() {
        push("is_scheduled", AttrValue::Bool(true));
    }
    if let Some(alias) = shell.input_output_alias.as_ref() {
        if !alias.entries.is_empty() {
            let v = typed(attrs::from_input_output_alias(alias));
            push("input_output_alias", AttrValue::InputOutputAlias(v));
        }
    }
    if let Some(donor) = shell.buffer_donor.as_ref() {
        if !donor.entries.is_empty() {
            let v = typed(attrs::from_buffer_donor(donor));
            push("buffer_donor", AttrValue::BufferDonor(v));
        }
    }
    if let Some(ps) = &shell.host_program_shape {
        let layout = entry_computation_layout(ps)?;
        push(
            "entry_computation_layout",
            AttrValue::ProgramShape(Box::new(layout)),
        );
    }
    if let Some(fa) = &shell.frontend_attributes {
        if !fa.map.is_empty() {
            let v = typed(attrs::from_frontend_attributes(fa));
            push("frontend_attributes", AttrValue::FrontendAttributes(v));
        }
    }
    if let Some(table) = &shell.original_value_recovery_table {
        if !table.entries.is_empty() {
            let v = typed(recovery_table(table, options)?);
            push("origin_recovery_table", AttrValue::RecoveryTable(v));
        }
    }
    if !shell.debug_attributes.is_empty() {
        match attrs::from_debug_attributes(&shell.debug_attributes) {
            Some(table) => push("debug_attributes", AttrValue::DebugAttributes(typed(table))),
            // What the text cannot say stays as bytes, like any field the
            // IR does not model.
            None => {
                for e in &shell.debug_attributes {
                    prost::encoding::message::encode(24, e, extras);
                }
            }
        }
    }
    Ok(header)
}

/// The host program shape, arrays without layouts given XLA's default.
fn entry_computation_layout(ps: &ProgramShapeProto) -> Result<ProgramShape, ProtoError> {
    let mut p = ProgramShape {
        parameters: ps
            .parameters
            .iter()
            .map(|s| shape_from_proto(s, 0))
            .collect::<Result<_, _>>()?,
        result: shape_from_proto(ps.result.as_ref().unwrap_or(&ShapeProto::default()), 0)?,
    };
    for s in p
        .parameters
        .iter_mut()
        .chain(std::iter::once(&mut p.result))
    {
        s.fill_default_layouts();
    }
    Ok(p)
}

/// The header's `origin_recovery_table={...}`: per entry a line `{"old"} :
/// {"new"}` and the recovery module's text, quoted (`"` and `\` escaped)
/// and indented on lines of its own.
fn recovery_table(
    table: &OriginalValueRecoveryTableProto,
    options: &ReadOptions,
) -> Result<Vec<crate::ir::attrs::RecoveryEntry>, ProtoError> {
    table
        .entries
        .iter()
        .map(|e| {
            let module = match &e.recovery_module {
                Some(m) => Some(Box::new(
                    module_from_proto(&m.encode_to_vec(), options)
                        .map_err(|e| e.context("origin_recovery_table"))?,
                )),
                None => None,
            };
            Ok(crate::ir::attrs::RecoveryEntry {
                old: attrs::from_original_array(&e.old_original_array.clone().unwrap_or_default()),
                new: attrs::from_original_array(&e.new_original_array.clone().unwrap_or_default()),
                module,
            })
        })
        .collect()
}
