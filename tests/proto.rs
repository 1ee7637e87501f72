//! Binary `HloModuleProto`: XLA's protos print as XLA prints them; text ->
//! proto -> text is the identity; proto -> IR -> proto keeps every field.

mod common;
use common::*;
use hlo_opt::ir::verify::verify;
use hlo_opt::proto;
use hlo_opt::text::print_module;
use prost::Message;
use std::path::Path;

/// The text XLA prints for `X.pb`: `X.from_pb.hlo` where it exists, else
/// `X.hlo`.
fn expected_text(pb: &Path) -> String {
    let s = pb.to_string_lossy();
    let stem = s.strip_suffix(".pb").expect(".pb file");
    let from_pb = format!("{stem}.from_pb.hlo");
    if Path::new(&from_pb).exists() {
        read(Path::new(&from_pb))
    } else {
        read(Path::new(&format!("{stem}.hlo")))
    }
}

fn check_protos_print_as_xla(dir: &str) {
    let paths = files(dir, |n| n.ends_with(".pb"));
    assert!(!paths.is_empty());
    let mut failures = Vec::new();
    for p in &paths {
        let bytes = std::fs::read(p).unwrap();
        let result = proto::read_module(&bytes)
            .map_err(|e| e.to_string())
            .and_then(|m| {
                verify(&m).map_err(|e| format!("verifier: {e}"))?;
                Ok(print_module(&m))
            });
        match result {
            Ok(text) => {
                let want = expected_text(p);
                if text != want {
                    failures.push(format!(
                        "{}: {}",
                        p.display(),
                        first_difference(&want, &text)
                    ));
                }
            }
            Err(e) => failures.push(format!("{}: {e}", p.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} protos differ:\n{}",
        failures.len(),
        paths.len(),
        failures.join("\n")
    );
}

/// The module a proto under `tests/data` holds.
fn read_data_module(rel: &str) -> hlo_opt::ir::Module {
    proto::read_module(&std::fs::read(data(rel)).unwrap()).unwrap()
}

#[test]
fn corpus_protos_print_as_xla_prints_them() {
    check_protos_print_as_xla("corpus");
}

#[test]
fn large_corpus_protos_print_as_xla_prints_them() {
    check_protos_print_as_xla("large");
}

/// Header attributes of XLA's `HloModuleConfig`, not of the proto.
const CONFIG_ATTRS: &[&str] = &[
    "allow_spmd_sharding_propagation_to_parameters",
    "allow_spmd_sharding_propagation_to_output",
    "num_partitions",
    "replica_count",
];

/// Instruction attributes that newer XLA prints at their default value
/// (`false`), which a proto cannot tell from unset: they read back
/// unprinted, as XLA before them (the corpus's) prints these protos.
const DEFAULTS_READ_BACK_UNPRINTED: &[&str] = &["is_stable", "has_dynamic_root"];

/// Leaves out the attributes of `DEFAULTS_READ_BACK_UNPRINTED`.
fn drop_printed_defaults(m: &mut hlo_opt::ir::Module) {
    let comps: Vec<_> = m.computation_ids().collect();
    for c in comps {
        let comp = m.comp_mut(c);
        let ids: Vec<_> = comp.sequence().collect();
        for i in ids {
            comp.instr_mut(i).attrs.retain(|a| {
                let unset = matches!(a.value, hlo_opt::ir::AttrValue::Bool(false));
                !(unset && DEFAULTS_READ_BACK_UNPRINTED.contains(&&*a.key))
            });
        }
    }
}

/// text -> proto -> text, reading back with the proto's own stack-frame
/// numbering (XLA would renumber the tables, as it does for any proto).
fn check_text_proto_text(dir: &str, keep: impl Fn(&str) -> bool) {
    let paths = files(dir, keep);
    assert!(!paths.is_empty());
    let options = proto::ReadOptions { xla_order: false };
    let mut failures = Vec::new();
    for p in &paths {
        let result = parse(p).and_then(|mut m| {
            // Module-config attributes are not part of an HloModuleProto (XLA
            // drops them too).
            m.header.retain(|a| !CONFIG_ATTRS.contains(&&*a.key));
            drop_printed_defaults(&mut m);
            let text = hlo_opt::text::print_module(&m);
            let bytes = proto::module_to_proto_bytes(&m).map_err(|e| e.to_string())?;
            let mut back = proto::read_module_with(&bytes, &options).map_err(|e| e.to_string())?;
            // Old dumps without an entry_computation_layout print back without.
            if m.entry_computation_layout().is_none() {
                back.header.retain(|a| a.key != "entry_computation_layout");
            }
            verify(&back).map_err(|e| format!("verifier: {e}"))?;
            Ok((text, hlo_opt::text::print_module_with(&back, &m.style)))
        });
        match result {
            Ok((text, t)) if t == text => {}
            Ok((text, t)) => {
                failures.push(format!("{}: {}", p.display(), first_difference(&text, &t)))
            }
            Err(e) => failures.push(format!("{}: {e}", p.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        paths.len(),
        failures.join("\n")
    );
}

#[test]
fn corpus_text_proto_text_is_the_identity() {
    check_text_proto_text("corpus", |n| n.ends_with(".hlo"));
}

#[test]
fn large_text_proto_text_is_the_identity() {
    check_text_proto_text("large", |n| n.ends_with(".hlo"));
}

#[test]
fn neuron_text_proto_text_is_the_identity() {
    check_text_proto_text("neuron", |n| {
        n.ends_with(".txt") && n != "dummy_hlo_nki_kernel.txt"
    });
}

/// neuronx-distributed's binary proto prints as its text (which was
/// printed in the long form, with operand shapes).
#[test]
fn neuron_proto_prints_as_its_text() {
    let bytes = std::fs::read(data("neuron/dummy_hlo_no_kernel_calls.txt.hlo")).unwrap();
    assert!(proto::looks_like_proto(&bytes));
    let m = proto::read_module(&bytes).unwrap();
    verify(&m).unwrap();
    let want = read(&data("neuron/dummy_hlo_no_kernel_calls.txt"));
    let style = parse(&data("neuron/dummy_hlo_no_kernel_calls.txt"))
        .unwrap()
        .style;
    let got = hlo_opt::text::print_module_with(&m, &style);
    assert_eq!(got, want, "{}", first_difference(&want, &got));
}

/// The hand-edited nki kernel dump: the proto is the faithful one (the
/// call in AddComputation.14 is `call.0`, with an f32[] operand for a bf16
/// parameter), so it reads but does not verify, as the MANIFEST says.
#[test]
fn neuron_nki_proto_reads_and_fails_verification_as_documented() {
    let m = read_data_module("neuron/dummy_hlo_nki_kernel.txt.hlo");
    let e = verify(&m).unwrap_err().to_string();
    assert!(e.contains("call.0"), "{e}");
}

#[test]
fn malformed_protos_are_errors() {
    let good = std::fs::read(data("corpus/softmax_fwd_lastaxis_f32.pb")).unwrap();
    // Truncated anywhere: an error or (rarely) a smaller valid message,
    // never a panic.
    for cut in (0..good.len()).step_by(7) {
        let _ = proto::read_module(&good[..cut]);
    }
    assert!(proto::read_module(&good[..good.len() / 2]).is_err());
    // Wrong wire type for the computations field.
    let e = proto::read_module(&[0x18, 0x01]).unwrap_err();
    assert!(e.message.contains("wire type"), "{e}");
    // An operand id that does not exist, and a computation calling itself.
    let mut m = proto::messages::HloModuleProto::decode(&good[..]).unwrap();
    let entry = m.computations.last_mut().unwrap();
    entry.instructions.last_mut().unwrap().operand_ids[0] = 999;
    let e = proto::read_module(&m.encode_to_vec()).unwrap_err();
    assert!(e.message.contains("operand id 999 does not exist"), "{e}");
    let mut m = proto::messages::HloModuleProto::decode(&good[..]).unwrap();
    let entry = m.computations.last_mut().unwrap();
    let root = entry.instructions.last_mut().unwrap();
    root.control_predecessor_ids.push(998);
    let e = proto::read_module(&m.encode_to_vec()).unwrap_err();
    assert!(
        e.message
            .contains("control predecessor id 998 does not exist"),
        "{e}"
    );
    let mut m = proto::messages::HloModuleProto::decode(&good[..]).unwrap();
    let first = &mut m.computations[0];
    let id = first.id;
    first.instructions[2].called_computation_ids = vec![id];
    let e = proto::read_module(&m.encode_to_vec()).unwrap_err();
    assert!(e.message.contains("calls itself"), "{e}");
}

/// proto -> IR -> proto keeps the module fields the IR does not model
/// (`id`, `device_assignment`, the spmd fields, ..., unknown fields).
#[test]
fn module_fields_the_ir_does_not_model_survive_proto_ir_proto() {
    use proto::messages::*;
    let good = std::fs::read(data("corpus/softmax_fwd_lastaxis_f32.pb")).unwrap();
    let mut m = HloModuleProto::decode(&good[..]).unwrap();
    m.id = 1234;
    m.is_dynamic = true;
    m.use_auto_spmd_partitioning = true;
    m.device_assignment = Some(
        DeviceAssignmentProtoFields {
            replica_count: 2,
            computation_count: 1,
            computation_devices: vec![DeviceAssignmentComputationDeviceFields {
                replica_device_ids: vec![0, 1],
            }
            .into()],
        }
        .into(),
    );
    let replicated: OpSharding = OpShardingFields {
        r#type: 0,
        ..Default::default()
    }
    .into();
    m.spmd_output_sharding = Some(replicated.clone());
    m.spmd_parameters_shardings = vec![replicated];
    m.cross_program_prefetches = vec![CrossProgramPrefetchFields {
        parameter: 0,
        index: vec![1],
        offset: 3,
    }
    .into()];
    // A field of a newer XLA.
    prost::encoding::encode_key(99, prost::encoding::WireType::Varint, &mut m.unknown);
    prost::encoding::encode_varint(7, &mut m.unknown);
    let bytes = m.encode_to_vec();
    let module = proto::read_module(&bytes).unwrap();
    let back = proto::module_to_proto(&module).unwrap();
    assert_eq!(back.id, m.id);
    assert_eq!(back.is_dynamic, m.is_dynamic);
    assert_eq!(
        back.use_auto_spmd_partitioning,
        m.use_auto_spmd_partitioning
    );
    assert_eq!(back.device_assignment, m.device_assignment);
    assert_eq!(back.spmd_output_sharding, m.spmd_output_sharding);
    assert_eq!(back.spmd_parameters_shardings, m.spmd_parameters_shardings);
    assert_eq!(back.cross_program_prefetches, m.cross_program_prefetches);
    assert_eq!(back.unknown, m.unknown);
    // And the corpus's own module ids.
    for p in files("corpus", |n| n.ends_with(".pb")) {
        let bytes = std::fs::read(&p).unwrap();
        let want = HloModuleProto::decode(proto::unwrap_module(&bytes).1).unwrap();
        let back = proto::module_to_proto(&proto::read_module(&bytes).unwrap()).unwrap();
        assert_eq!(back.id, want.id, "{}", p.display());
        assert_eq!(
            back.device_assignment,
            want.device_assignment,
            "{}",
            p.display()
        );
    }
}

/// Which kinds of fields differ between a proto and the proto written back
/// from its IR: computations are matched by name, instructions by name
/// within them (the writer may order either differently; repeated fields
/// are otherwise compared as they are, order included).
fn proto_ir_proto_differences(
    want: &proto::messages::HloModuleProto,
    got: &proto::messages::HloModuleProto,
) -> std::collections::BTreeSet<String> {
    use proto::messages::*;
    let mut d = std::collections::BTreeSet::new();
    let mut note = |cond: bool, what: &str| {
        if cond {
            d.insert(what.to_string());
        }
    };
    note(want.entry_computation_id != got.entry_computation_id, "ids");
    note(want.schedule != got.schedule, "ids");
    note(want.stack_frame_index != got.stack_frame_index, "frames");
    note(
        want.host_program_shape != got.host_program_shape,
        "program shapes",
    );
    note(
        want.computations.len() != got.computations.len(),
        "computations",
    );
    let mut wm = want.clone();
    let mut gm = got.clone();
    for m in [&mut wm, &mut gm] {
        m.entry_computation_id = 0;
        m.schedule = None;
        m.stack_frame_index = None;
        m.host_program_shape = None;
        m.computations.clear();
    }
    note(wm != gm, "module fields");
    for wc in &want.computations {
        let Some(gc) = got.computations.iter().find(|c| c.name == wc.name) else {
            note(true, "computations");
            continue;
        };
        note(wc.id != gc.id || wc.root_id != gc.root_id, "ids");
        note(wc.program_shape != gc.program_shape, "program shapes");
        note(
            wc.instructions.len() != gc.instructions.len(),
            "instructions",
        );
        let order = |c: &HloComputationProto| -> Vec<String> {
            c.instructions.iter().map(|i| i.name.clone()).collect()
        };
        note(order(wc) != order(gc), "instruction order");
        let mut wcc = wc.clone();
        let mut gcc = gc.clone();
        for c in [&mut wcc, &mut gcc] {
            c.id = 0;
            c.root_id = 0;
            c.program_shape = None;
            c.instructions.clear();
        }
        note(wcc != gcc, "computation fields");
        for wi in &wc.instructions {
            let Some(gi) = gc.instructions.iter().find(|i| i.name == wi.name) else {
                note(true, "instructions");
                continue;
            };
            note(
                wi.id != gi.id
                    || wi.operand_ids != gi.operand_ids
                    || wi.control_predecessor_ids != gi.control_predecessor_ids
                    || wi.called_computation_ids != gi.called_computation_ids,
                "ids",
            );
            let frame = |i: &HloInstructionProto| i.metadata.as_ref().map(|m| m.stack_frame_id);
            note(frame(wi) != frame(gi), "frames");
            let mut wii = wi.clone();
            let mut gii = gi.clone();
            for i in [&mut wii, &mut gii] {
                i.id = 0;
                i.operand_ids.clear();
                i.control_predecessor_ids.clear();
                i.called_computation_ids.clear();
                if let Some(m) = &mut i.metadata {
                    m.stack_frame_id = 0;
                }
            }
            note(wii.metadata != gii.metadata, "metadata");
            wii.metadata = None;
            gii.metadata = None;
            // By encoding: a NaN in a literal equals itself bit for bit.
            note(
                wii.encode_to_vec() != gii.encode_to_vec(),
                "instruction fields",
            );
        }
    }
    d
}

/// proto -> IR -> proto (read as `hlo-opt` reads it, in XLA's order),
/// compared field by field on every corpus proto.
#[test]
fn proto_ir_proto_decodes_to_the_same_message() {
    use proto::messages::*;
    let options = proto::ReadOptions { xla_order: true };
    let mut failures = Vec::new();
    for dir in ["corpus", "large"] {
        for p in files(dir, |n| n.ends_with(".pb")) {
            let bytes = std::fs::read(&p).unwrap();
            let want = HloModuleProto::decode(proto::unwrap_module(&bytes).1).unwrap();
            let module = proto::read_module_with(&bytes, &options).unwrap();
            let got = proto::module_to_proto(&module).unwrap();
            let d = proto_ir_proto_differences(&want, &got);
            if !d.is_empty() {
                failures.push(format!("{}: {d:?}", p.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The instructions of a written module, each checked to have an id no
/// other has.
fn written_instructions_each_id_once(
    p: &proto::messages::HloModuleProto,
) -> Vec<&proto::messages::HloInstructionProto> {
    let mut seen = std::collections::BTreeSet::new();
    let all: Vec<_> = p
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .collect();
    for i in &all {
        assert!(seen.insert(i.id), "instruction id {} twice", i.id);
    }
    all
}

/// Proto ids the IR keeps are written back only where they are unique: a
/// clash (here, every computation claiming one id) gets fresh ids, and the
/// module still reads back as it was.
#[test]
fn clashing_proto_ids_are_replaced_by_fresh_ones() {
    let mut m = read_data_module("corpus/control_flow_cond_while_f32.pb");
    let ids: Vec<_> = m.computation_ids().collect();
    assert!(ids.len() > 1);
    for &c in &ids {
        m.comp_mut(c).proto_id = Some(1);
    }
    let p = proto::module_to_proto(&m).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for c in &p.computations {
        assert!(seen.insert(c.id), "computation id {} twice", c.id);
    }
    let back = proto::read_module(&p.encode_to_vec()).unwrap();
    assert_eq!(print_module(&back), print_module(&m));
}

/// An instruction whose proto id an instruction written before it has
/// gets a fresh id, whether it comes before the ids its computation keeps
/// (the parameter below) or among them; the ids that do not clash are
/// kept.
#[test]
fn clashing_instruction_ids_get_fresh_ones_wherever_they_come() {
    let mut m = read_data_module("corpus/control_flow_cond_while_f32.pb");
    let comps: Vec<_> = m.computation_ids().collect();
    assert!(comps.len() > 2);
    // The first computation keeps id 1; every other numbers its
    // instructions 1, 2, ... by index, so its first one clashes.
    for (k, &c) in comps.iter().enumerate() {
        let n = m.comp(c).instructions().count() as i64;
        let ids: Vec<i64> = if k == 0 { vec![1] } else { (1..=n).collect() };
        m.comp_mut(c).set_proto_instr_ids(&ids);
    }
    let p = proto::module_to_proto(&m).unwrap();
    for i in written_instructions_each_id_once(&p) {
        // Each is one set above (1 and up) or a fresh one: none is left
        // without.
        assert!(i.id > 0, "{} has id {}", i.name, i.id);
    }
    // A later computation's second instruction keeps its id 2.
    let c = comps[1];
    let (second, _) = m.comp(c).instructions().nth(1).unwrap();
    let name = m.comp(c).instr(second).name.to_string();
    let written = p
        .computations
        .iter()
        .flat_map(|pc| &pc.instructions)
        .find(|i| i.name == name)
        .unwrap();
    assert_eq!(written.id, 2, "{name}");
    // The same computations read back. (In another order: the fresh ids
    // change the order of the reduces that call two of them, and with it
    // the post order the reader prints them in.)
    let back = proto::read_module(&p.encode_to_vec()).unwrap();
    let blocks = |text: String| {
        let mut b: Vec<String> = text.split("\n\n").map(str::to_string).collect();
        b.sort();
        b
    };
    assert_eq!(blocks(print_module(&back)), blocks(print_module(&m)));
}

/// A module changed after reading gets ids for its new instructions that
/// clash with none of the kept ones, and is written operands first.
#[test]
fn instructions_added_after_reading_get_fresh_ids() {
    use hlo_opt::ir::{Instruction, Opcode};
    let mut m = read_data_module("corpus/softmax_fwd_lastaxis_f32.pb");
    let entry = m.entry();
    let root = m.comp(entry).root();
    let shape = m.comp(entry).instr(root).shape.clone();
    let copy = m.add_instruction(
        entry,
        Instruction::new("", Opcode::Copy, shape).with_operands([root]),
    );
    m.comp_mut(entry).set_root(copy);
    verify(&m).unwrap();
    let p = proto::module_to_proto(&m).unwrap();
    written_instructions_each_id_once(&p);
    let e = p
        .computations
        .iter()
        .find(|c| c.id == p.entry_computation_id)
        .unwrap();
    assert_eq!(e.instructions.last().unwrap().id, e.root_id);
    let back = proto::read_module(&p.encode_to_vec()).unwrap();
    assert_eq!(print_module(&back), print_module(&m));
}

/// Stack frames: the proto's own tables and ids are written back while the
/// IR's tables are the ones read; once they change, the IR's are written.
#[test]
fn changed_stack_frame_tables_are_written_as_the_ir_has_them() {
    let mut found = false;
    for p in files("corpus", |n| n.ends_with(".pb")) {
        let bytes = std::fs::read(&p).unwrap();
        let mut m = proto::read_module(&bytes).unwrap();
        if m.proto_frames.is_none() {
            continue;
        }
        found = true;
        let original = m.proto_frames.as_ref().unwrap().original.clone();
        let kept = proto::module_to_proto(&m).unwrap();
        let idx = kept.stack_frame_index.as_ref().unwrap();
        assert_eq!(idx.file_names.len(), original.file_names.len());
        m.stack_frames
            .as_mut()
            .unwrap()
            .file_names
            .push("extra.py".into());
        let written = proto::module_to_proto(&m).unwrap();
        let idx = written.stack_frame_index.as_ref().unwrap();
        assert_eq!(idx.file_names.last().unwrap(), "extra.py");
        let options = proto::ReadOptions { xla_order: false };
        let back = proto::read_module_with(&written.encode_to_vec(), &options).unwrap();
        // The same tables and lines (the computations are in the proto's
        // order, which this read keeps).
        assert_eq!(back.stack_frames, m.stack_frames);
        let lines = |m: &hlo_opt::ir::Module| {
            let mut l: Vec<String> = print_module(m).lines().map(String::from).collect();
            l.sort();
            l
        };
        assert_eq!(lines(&back), lines(&m), "{}", p.display());
    }
    assert!(found);
}

/// The module header's `debug_attributes` is `HloModuleProto` field 24:
/// one entry per original array, its attribute sets in field 2.
#[test]
fn debug_attributes_are_module_field_24() {
    let m = parse(&data("xla_parser/long/DebugAttributes.hlo")).unwrap();
    let p = proto::module_to_proto(&m).unwrap();
    assert_eq!(p.debug_attributes.len(), 1);
    let e = &p.debug_attributes[0];
    assert_eq!(
        e.original_array
            .as_ref()
            .map(|a| a.instruction_name.as_str()),
        Some("constant")
    );
    assert_eq!(e.debug_attributes.len(), 1);
    let d = &e.debug_attributes[0];
    assert_eq!((d.log_mode, d.callback_id, d.op_id), (1, 123, 0));
    assert!(d.partitioned);
    // The field number itself: an entry's tag byte is (24 << 3) | 2, as
    // the two-byte varint 0xc2 0x01.
    let bytes = proto::module_to_proto_bytes(&m).unwrap();
    assert!(bytes.windows(2).any(|w| w == [0xc2, 0x01]));
}

/// Everything the table can hold, read from a proto and written back: several
/// arrays (one at a shape index), several sets per array, every field and
/// every log mode.
#[test]
fn debug_attributes_proto_text_proto_keeps_every_field() {
    use hlo_opt::proto::messages::*;
    let m = parse(&data("xla_parser/long/DebugAttributes.hlo")).unwrap();
    let mut p = proto::module_to_proto(&m).unwrap();
    let array = |name: &str, index: &[i64]| {
        Some(OriginalArrayProto::new(OriginalArrayProtoFields {
            instruction_name: name.into(),
            shape_index: index.to_vec(),
        }))
    };
    let set = |log_mode, callback_id, op_id, partitioned, sharding: &str| {
        DebugAttributesProto::new(DebugAttributesProtoFields {
            log_mode,
            callback_id,
            op_id,
            partitioned,
            operands_sharding: sharding.into(),
        })
    };
    let a = DebugAttributeTableEntryProto::new(DebugAttributeTableEntryProtoFields {
        original_array: array("constant", &[]),
        debug_attributes: vec![
            set(0, 0, 0, false, ""),
            set(2, 7, 3, true, "{devices=[2]0,1}"),
            set(3, -1, 0, false, ""),
        ],
    });
    let b = DebugAttributeTableEntryProto::new(DebugAttributeTableEntryProtoFields {
        original_array: array("tuple.2", &[1, 0]),
        debug_attributes: vec![set(4, 0, 1, false, "a \"q\"")],
    });
    p.debug_attributes = vec![a, b];
    let bytes = p.encode_to_vec();
    let read = proto::read_module(&bytes).unwrap();
    let text = print_module(&read);
    assert!(
        text.contains(concat!(
            "debug_attributes={\n",
            "  {\"constant\"}:({},{log_mode=fusion_debugger,callback_id=7,op_id=3,",
            "partitioned=true,operands_sharding=\"{devices=[2]0,1}\"},",
            "{log_mode=no_fusion,callback_id=-1}),\n",
            "  {\"tuple.2\" {1,0}}:({log_mode=guaranteed,op_id=1,",
            "operands_sharding=\"a \\\"q\\\"\"})\n",
            "}\n"
        )),
        "{text}"
    );
    let reparsed = hlo_opt::text::parse_module(&text, "test").unwrap();
    let again = proto::module_to_proto(&reparsed).unwrap();
    assert_eq!(again.debug_attributes, p.debug_attributes);
}

/// A malformed table is the parser's error, at its line and column; one
/// put in the IR by other means is the writer's, naming the attribute.
#[test]
fn malformed_debug_attributes_are_errors() {
    let text = read(&data("xla_parser/long/DebugAttributes.hlo"))
        .replace("partitioned=true", "partitioned=yes");
    let e = hlo_opt::text::parse_module(&text, "t.hlo")
        .unwrap_err()
        .to_string();
    assert!(e.contains("t.hlo:3:"), "{e}");
    assert!(e.contains("partitioned"), "{e}");

    let mut m = parse(&data("xla_parser/long/DebugAttributes.hlo")).unwrap();
    let attr = m.header.iter_mut().find(|a| a.key == "debug_attributes");
    // A value of the wrong kind (only text the writer does not parse).
    attr.unwrap().value = hlo_opt::ir::AttrValue::Raw("{ {\"c\"}:({op_id=x}) }".into());
    let e = proto::module_to_proto(&m).unwrap_err();
    assert!(e.message.contains("debug_attributes"), "{e}");
    assert!(e.message.contains("unexpected value"), "{e}");
}

/// A collective broadcast whose root is an operand is
/// `HloInstructionProto.has_dynamic_root` (field 100), and prints back so.
#[test]
fn dynamic_root_broadcasts_are_instruction_field_100() {
    let path = data("xla_parser/short/CollectiveBroadcastDynamicRoot.hlo");
    let m = parse(&path).unwrap();
    let p = proto::module_to_proto(&m).unwrap();
    let entry = p.computations.last().unwrap();
    let cb = entry
        .instructions
        .iter()
        .find(|i| i.opcode == "collective-broadcast");
    assert!(cb.unwrap().has_dynamic_root);
    let bytes = proto::module_to_proto_bytes(&m).unwrap();
    // Tag (100 << 3) | 0 as the varint 0xa0 0x06, then true.
    assert!(bytes.windows(3).any(|w| w == [0xa0, 0x06, 0x01]));
    let back = print_module(&proto::read_module(&bytes).unwrap());
    assert!(
        back.contains("replica_groups={{1,0},{2,3}}, has_dynamic_root=true\n"),
        "{back}"
    );
}

/// An in-place collective permute's slice sizes are one flat list in a
/// proto, split by the operands' shapes: a list that does not fit them is
/// an error.
#[test]
fn slice_sizes_that_do_not_fit_the_operands_are_errors() {
    let m = parse(&data(
        "xla_parser/short/CollectivePermuteInPlaceUpdateTupleMultipleReadWrite.hlo",
    ))
    .unwrap();
    let mut p = proto::module_to_proto(&m).unwrap();
    let permute = p.computations[0]
        .instructions
        .iter_mut()
        .find(|i| i.opcode == "collective-permute")
        .unwrap();
    assert_eq!(permute.dynamic_slice_sizes.len(), 12);
    permute.dynamic_slice_sizes.pop();
    let e = proto::read_module(&p.encode_to_vec()).unwrap_err();
    assert!(e.message.contains("dynamic_slice_sizes"), "{e}");
}

#[test]
fn xla_parser_text_proto_text_is_the_identity() {
    check_text_proto_text("xla_parser/long", |n| n.ends_with(".hlo"));
}

/// XLA's literals hold their values in the order of their layout, and so
/// do its protos: `{0,1}` is column-major.
#[test]
fn constants_are_written_in_their_layout_order() {
    let text = "HloModule m\n\nENTRY e {\n  ROOT c = f32[2,3]{0,1} constant({ { 1, 2, 3 }, { 4, 5, 6 } })\n}\n\n";
    let m = hlo_opt::text::parse_module(text, "m.hlo").unwrap();
    let p = proto::module_to_proto(&m).unwrap();
    let c = &p.computations[0].instructions[0];
    let values = &c.literal.as_ref().unwrap().f32s;
    assert_eq!(values, &[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    let back = proto::read_module(&p.encode_to_vec()).unwrap();
    assert!(print_module(&back).contains("constant({ { 1, 2, 3 }, { 4, 5, 6 } })"));
}

/// `custom-call-start(...)` is, in a proto as in XLA, an `async-start`
/// calling a computation of parameters and the custom call; the
/// `-update`/`-done` call none, and the thread is the computation's too.
#[test]
fn async_sugar_is_written_as_an_async_computation() {
    let m = parse(&data(
        "xla_parser/long/AsyncOpsWithSyntaxSugarAndThreadName.hlo",
    ))
    .unwrap();
    let p = proto::module_to_proto(&m).unwrap();
    assert_eq!(p.computations.len(), 2);
    let (wrapped, entry) = (&p.computations[0], &p.computations[1]);
    let ops: Vec<&str> = wrapped
        .instructions
        .iter()
        .map(|i| i.opcode.as_str())
        .collect();
    assert_eq!(ops, ["parameter", "custom-call"]);
    assert_eq!(wrapped.instructions[1].custom_call_target, "foo");
    assert_eq!(wrapped.execution_thread, "parallel_thread");
    let start = entry
        .instructions
        .iter()
        .find(|i| i.opcode == "async-start")
        .unwrap();
    assert_eq!(start.called_computation_ids, [wrapped.id]);
    assert_eq!(start.async_execution_thread, "parallel_thread");
    assert!(start.custom_call_target.is_empty());
    for op in ["async-update", "async-done"] {
        let i = entry.instructions.iter().find(|i| i.opcode == op).unwrap();
        assert!(i.called_computation_ids.is_empty(), "{op}");
    }
}

#[test]
fn xla_parser_short_text_proto_text_is_the_identity() {
    check_text_proto_text("xla_parser/short", |n| n.ends_with(".hlo"));
}

/// The command line parses text as it reads it when the first bytes read
/// tell text: they must never tell text for a proto, and always for text.
#[test]
fn the_first_bytes_tell_text_from_a_proto() {
    let mut protos = files("corpus", |n| n.ends_with(".pb"));
    protos.extend(files("neuron", |n| n.ends_with(".txt.hlo")));
    assert!(protos.len() > 10, "{} protos", protos.len());
    for p in &protos {
        let bytes = std::fs::read(p).unwrap();
        for head in [64, 4096, bytes.len()] {
            let head = &bytes[..head.min(bytes.len())];
            assert!(!proto::head_looks_like_text(head), "{}", p.display());
        }
    }
    let mut texts = files("corpus", |n| n.ends_with(".hlo"));
    texts.extend(files("neuron", |n| n.ends_with(".txt")));
    for p in &texts {
        let bytes = std::fs::read(p).unwrap();
        assert!(
            proto::head_looks_like_text(&bytes[..64.min(bytes.len())]),
            "{}",
            p.display()
        );
    }
}

/// `bytes` as field 1 of a message, after `before` and followed by `after`
/// (other fields, already encoded).
fn wrap(bytes: &[u8], before: &[u8], after: &[u8]) -> Vec<u8> {
    let mut out = before.to_vec();
    prost::encoding::bytes::encode(1, &bytes.to_vec(), &mut out);
    out.extend_from_slice(after);
    out
}

/// XLA's hlo-opt also takes an `HloProto` (the module in field 1, a buffer
/// assignment in field 3) and an `HloSnapshot` (the `HloProto` in field 1,
/// arguments, result and platform in 2-4); XLA also dumps an
/// `HloUnoptimizedSnapshot` (the module in field 1, inputs and version in
/// 2-3): each reads as the bare module.
#[test]
fn hlo_proto_and_hlo_snapshot_wrappers_read_as_their_module() {
    let mut other = Vec::new();
    prost::encoding::bytes::encode(3, &vec![8, 1, 16, 2], &mut other);
    let mut snapshot_fields = Vec::new();
    prost::encoding::bytes::encode(2, &vec![10, 0], &mut snapshot_fields);
    prost::encoding::string::encode(4, &"Host".to_string(), &mut snapshot_fields);
    let mut unoptimized_fields = Vec::new();
    prost::encoding::bytes::encode(2, &vec![10, 0], &mut unoptimized_fields);
    prost::encoding::int32::encode(3, &1, &mut unoptimized_fields);
    for p in files("corpus", |n| n.ends_with(".pb")).iter().take(20) {
        let bare = std::fs::read(p).unwrap();
        let want = print_module(&proto::read_module(&bare).unwrap());
        let hlo_proto = wrap(&bare, &[], &other);
        for (kind, bytes) in [
            ("HloProto", wrap(&bare, &[], &[])),
            ("HloProto with a buffer assignment", hlo_proto.clone()),
            ("HloSnapshot", wrap(&hlo_proto, &[], &snapshot_fields)),
            (
                "HloSnapshot, fields first",
                wrap(&hlo_proto, &snapshot_fields, &[]),
            ),
            // HloUnoptimizedSnapshot: the module, partitions' inputs, version.
            (
                "HloUnoptimizedSnapshot",
                wrap(&bare, &[], &unoptimized_fields),
            ),
        ] {
            let got = proto::read_module(&bytes).unwrap_or_else(|e| panic!("{kind}: {e}"));
            assert_eq!(print_module(&got), want, "{kind} of {}", p.display());
        }
    }
}

/// What tells a wrapper from a bare module cannot be fooled by the module's
/// name or by module fields newer than the reader.
#[test]
fn a_bare_module_is_not_taken_for_a_wrapper() {
    let bare = std::fs::read(data("corpus/softmax_fwd_lastaxis_f32.pb")).unwrap();
    let mut p = proto::messages::HloModuleProto::decode(&bare[..]).unwrap();
    // "0a" as a message is field 6 (entry_computation_id), varint 97.
    p.name = "0a".into();
    let renamed = p.encode_to_vec();
    let m = proto::read_module(&renamed).unwrap();
    assert_eq!(&*m.name, "0a");
    // A module with debug_attributes (field 24) inside an HloProto.
    let m = parse(&data("xla_parser/long/DebugAttributes.hlo")).unwrap();
    let bytes = proto::module_to_proto_bytes(&m).unwrap();
    let back = proto::read_module(&wrap(&bytes, &[], &[])).unwrap();
    assert!(print_module(&back).contains("debug_attributes={"));
}

/// Newer XLA may write an instruction's backend config as a `Payload`
/// (field 99): an id into the module's `payloads` (22) or inline. Either
/// reads as the config; the writer writes it inline in `backend_config`,
/// as XLA's `ToProto` does by default, and keeps the table.
#[test]
fn backend_config_payloads_read_as_the_config() {
    use hlo_opt::proto::messages::*;
    let path = data("corpus/softmax_fwd_lastaxis_f32.opt.pb");
    let bare = std::fs::read(&path).unwrap();
    let want = print_module(&proto::read_module(&bare).unwrap());
    let p = HloModuleProto::decode(&bare[..]).unwrap();
    let with_payloads = |inline: bool| {
        let mut p = p.clone();
        let mut payloads = Vec::new();
        for c in &mut p.computations {
            for i in &mut c.instructions {
                if i.backend_config.is_empty() {
                    continue;
                }
                let config = std::mem::take(&mut i.backend_config);
                i.backend_config_payload = Some(Payload::new(if inline {
                    PayloadFields {
                        value: Some(config),
                        id: None,
                    }
                } else {
                    payloads.push(config);
                    PayloadFields {
                        value: None,
                        id: Some(payloads.len() as i64 - 1),
                    }
                }));
            }
        }
        assert!(inline || !payloads.is_empty());
        p.payloads = payloads;
        p
    };
    for inline in [false, true] {
        let q = with_payloads(inline);
        let m = proto::read_module(&q.encode_to_vec()).unwrap();
        assert_eq!(print_module(&m), want, "inline: {inline}");
        let back = proto::module_to_proto(&m).unwrap();
        // The table stays, for anything else that may refer to it.
        assert_eq!(back.payloads, q.payloads);
        let configs = back.computations.iter().flat_map(|c| &c.instructions);
        assert!(configs.clone().all(|i| i.backend_config_payload.is_none()));
        assert!(configs.clone().any(|i| !i.backend_config.is_empty()));
    }
    let mut bad = with_payloads(false);
    bad.payloads.pop();
    let e = proto::read_module(&bad.encode_to_vec()).unwrap_err();
    assert!(e.message.contains("backend_config_payload id"), "{e}");
}

/// Fields of a newer XLA on instructions and computations (kept as bytes)
/// survive proto -> IR -> proto.
#[test]
fn unknown_instruction_and_computation_fields_survive_proto_ir_proto() {
    use hlo_opt::proto::messages::*;
    let bare = std::fs::read(data("corpus/softmax_fwd_lastaxis_f32.pb")).unwrap();
    let mut p = HloModuleProto::decode(&bare[..]).unwrap();
    // Instruction field 97 (conv_kind) = 2, field 1000 = "x"; computation
    // field 1001 = 7.
    let mut instr_extra = Vec::new();
    prost::encoding::int32::encode(97, &2, &mut instr_extra);
    prost::encoding::string::encode(1000, &"x".to_string(), &mut instr_extra);
    let mut comp_extra = Vec::new();
    prost::encoding::int64::encode(1001, &7, &mut comp_extra);
    for c in &mut p.computations {
        c.unknown = comp_extra.clone();
        for i in &mut c.instructions {
            i.unknown = instr_extra.clone();
        }
    }
    let bytes = p.encode_to_vec();
    let m = proto::read_module_with(&bytes, &proto::ReadOptions { xla_order: false }).unwrap();
    let back = proto::module_to_proto(&m).unwrap();
    assert_eq!(back.computations.len(), p.computations.len());
    for (c, d) in back.computations.iter().zip(&p.computations) {
        assert_eq!(c.unknown, comp_extra, "{}", c.name);
        for i in &c.instructions {
            assert_eq!(i.unknown, instr_extra, "{}", i.name);
        }
        assert_eq!(c.instructions.len(), d.instructions.len());
    }
}

/// Metadata fields the text does not show (code and working-set sizes,
/// profile info, a newer XLA's fields) survive proto -> IR -> proto, and
/// the text is as without them.
#[test]
fn unprinted_metadata_survives_proto_ir_proto() {
    use hlo_opt::proto::messages::*;
    let bare = std::fs::read(data("corpus/softmax_fwd_lastaxis_f32.pb")).unwrap();
    let options = proto::ReadOptions { xla_order: false };
    let want_text = print_module(&proto::read_module_with(&bare, &options).unwrap());
    let mut p = HloModuleProto::decode(&bare[..]).unwrap();
    let mut newer = Vec::new();
    prost::encoding::string::encode(1000, &"y".to_string(), &mut newer);
    let mut n = 0;
    for c in &mut p.computations {
        for (k, i) in c.instructions.iter_mut().enumerate() {
            // Every other instruction, with and without printed metadata.
            if k % 2 == 1 {
                continue;
            }
            let md = i.metadata.get_or_insert_with(Default::default);
            md.size_of_generated_code_in_bytes = 100 + k as i64;
            md.size_of_memory_working_set_in_bytes = 7;
            md.profile_info = Some(OpMetadataProfileInfo::new(OpMetadataProfileInfoFields {
                profile_type: vec![1, 2],
                relative_speedup: 1.5,
                ..Default::default()
            }));
            md.unknown = newer.clone();
            n += 1;
        }
    }
    assert!(n > 2);
    let m = proto::read_module_with(&p.encode_to_vec(), &options).unwrap();
    assert_eq!(print_module(&m), want_text);
    let back = HloModuleProto::decode(&proto::module_to_proto_bytes(&m).unwrap()[..]).unwrap();
    for (c, d) in back.computations.iter().zip(&p.computations) {
        for (i, j) in c.instructions.iter().zip(&d.instructions) {
            assert_eq!(i.name, j.name);
            assert_eq!(i.metadata, j.metadata, "{}", i.name);
        }
    }
}

/// A `debug_attributes` table the text cannot say (a newer XLA's log mode,
/// or fields) is kept as bytes, like any module field the IR does not
/// model: the module reads, prints without it, and writes it back.
#[test]
fn debug_attributes_the_text_cannot_say_are_kept_as_bytes() {
    use hlo_opt::proto::messages::*;
    let m = parse(&data("xla_parser/long/DebugAttributes.hlo")).unwrap();
    let mut p = proto::module_to_proto(&m).unwrap();
    p.debug_attributes[0].debug_attributes[0].log_mode = 5;
    let mut newer = p.clone();
    newer.debug_attributes[0].debug_attributes[0].log_mode = 1;
    prost::encoding::int64::encode(
        9,
        &3,
        &mut newer.debug_attributes[0].debug_attributes[0].unknown,
    );
    for q in [p, newer] {
        let read = proto::read_module(&q.encode_to_vec()).unwrap();
        assert!(!print_module(&read).contains("debug_attributes"));
        let back =
            HloModuleProto::decode(&proto::module_to_proto_bytes(&read).unwrap()[..]).unwrap();
        assert_eq!(back.debug_attributes, q.debug_attributes);
    }
}

/// A bool attribute that is neither `true` nor `false` is an error, not a
/// `false`. (Since issue 11 the text parser refuses what a proto cannot
/// hold, at the attribute; the writer still refuses it too.)
#[test]
fn has_dynamic_root_must_be_true_or_false() {
    let text = read(&data("xla_parser/short/CollectiveBroadcastDynamicRoot.hlo"))
        .replace("has_dynamic_root=true", "has_dynamic_root=yes");
    let message = match hlo_opt::text::parse_module(&text, "t.hlo") {
        Ok(m) => proto::module_to_proto(&m).unwrap_err().message,
        Err(e) => e.message,
    };
    assert!(message.contains("has_dynamic_root"), "{message}");
    assert!(message.contains("'yes'"), "{message}");
    assert!(message.contains("expects true or false"), "{message}");
}

/// Field 100 means something for a collective-broadcast only: on another
/// collective it is not printed (XLA's text has no such attribute there).
#[test]
fn has_dynamic_root_prints_on_collective_broadcasts_only() {
    let text = "HloModule m\n\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
                ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n  p = f32[4] parameter(0)\n  \
                ROOT r = f32[4] all-reduce(p), replica_groups={{0,1}}, to_apply=add\n}\n";
    let m = hlo_opt::text::parse_module(text, "t.hlo").unwrap();
    let mut p = proto::module_to_proto(&m).unwrap();
    for c in &mut p.computations {
        for i in &mut c.instructions {
            i.has_dynamic_root = i.opcode == "all-reduce";
        }
    }
    let printed = print_module(&proto::read_module(&p.encode_to_vec()).unwrap());
    assert!(!printed.contains("has_dynamic_root"), "{printed}");
    hlo_opt::text::parse_module(&printed, "back.hlo").unwrap();
}

/// An async computation with fields this crate does not model is not
/// folded into `<op>-start` sugar (which has nowhere to keep them): it
/// prints as an explicit computation and its fields survive.
#[test]
fn async_computations_with_unknown_fields_keep_them() {
    use hlo_opt::proto::messages::*;
    let path = data("xla_parser/long/AsyncOpsWithSyntaxSugar.hlo");
    let m = parse(&path).unwrap();
    let mut p = proto::module_to_proto(&m).unwrap();
    assert!(
        p.computations.len() > 1,
        "the sugar is written as a computation"
    );
    let mut extra = Vec::new();
    prost::encoding::string::encode(1000, &"z".to_string(), &mut extra);
    for c in &mut p.computations {
        c.unknown = extra.clone();
        for i in &mut c.instructions {
            i.unknown = extra.clone();
        }
    }
    let options = proto::ReadOptions { xla_order: false };
    let read = proto::read_module_with(&p.encode_to_vec(), &options).unwrap();
    let printed = print_module(&read);
    assert!(printed.contains("async-start("), "{printed}");
    hlo_opt::text::parse_module(&printed, "back.hlo").unwrap();
    let back = HloModuleProto::decode(&proto::module_to_proto_bytes(&read).unwrap()[..]).unwrap();
    assert_eq!(back.computations.len(), p.computations.len());
    for c in &back.computations {
        assert_eq!(c.unknown, extra, "{}", c.name);
        for i in &c.instructions {
            assert_eq!(i.unknown, extra, "{}", i.name);
        }
    }
}

/// Every layout a proto can hold, wherever a shape sits (an instruction's
/// shape, a custom call's `operand_layout_constraints`, an outfeed's
/// `outfeed_shape`), is either refused or printed as text that reads back
/// and prints the same. The fuzzer found three of these one at a time
/// (`{:D(S,C,D)}` with no minor-to-major); this holds the whole class.
#[test]
fn every_layout_a_proto_holds_is_refused_or_reads_back() {
    use proto::messages::*;
    let text = "HloModule m, entry_computation_layout={(f32[2,3]{1,0})->f32[2,3]{1,0}}\n\n\
        ENTRY e {\n  p = f32[2,3]{1,0} parameter(0)\n  \
        cc = f32[2,3]{1,0} custom-call(p), custom_call_target=\"foo\", operand_layout_constraints={f32[2,3]{1,0}}\n  \
        t = token[] after-all()\n  \
        o = token[] outfeed(cc, t), outfeed_shape=f32[2,3]{1,0}\n  \
        ROOT r = f32[2,3]{1,0} negate(cc)\n}\n";
    let module = hlo_opt::text::parse_module(text, "m.hlo").unwrap();
    let base = proto::module_to_proto(&module).unwrap();
    fn layout(edit: impl FnOnce(&mut LayoutProto)) -> LayoutProto {
        let mut l = LayoutProto::default();
        edit(&mut l);
        l
    }
    let tile = |dimensions: Vec<i64>| TileProto::from(TileProtoFields { dimensions });
    let layouts: Vec<(&str, LayoutProto)> = vec![
        (
            "dim level types, no minor-to-major",
            layout(|l| l.dim_level_types = vec![2, 1]),
        ),
        ("no minor-to-major at all", layout(|_| {})),
        (
            "a minor-to-major of the wrong rank",
            layout(|l| l.minor_to_major = vec![0]),
        ),
        (
            "a tile with no dimensions",
            layout(|l| {
                l.minor_to_major = vec![1, 0];
                l.tiles = vec![tile(vec![])];
            }),
        ),
        (
            "a physical shape",
            layout(|l| {
                l.minor_to_major = vec![1, 0];
                l.physical_shape = Some(Box::new(ShapeProto::from(ShapeProtoFields {
                    element_type: 11,
                    dimensions: vec![6],
                    ..Default::default()
                })));
            }),
        ),
        (
            "negative sizes and spaces",
            layout(|l| {
                l.minor_to_major = vec![1, 0];
                l.element_size_in_bits = -3;
                l.memory_space = -1;
                l.tail_padding_alignment_in_elements = 7;
                l.dynamic_shape_metadata_prefix_bytes = -8;
            }),
        ),
        (
            "index and pointer types that are not types",
            layout(|l| {
                l.minor_to_major = vec![1, 0];
                l.index_primitive_type = 999;
                l.pointer_primitive_type = 13;
            }),
        ),
        (
            "tiles with combined and negative dimensions",
            layout(|l| {
                l.minor_to_major = vec![0, 1];
                l.tiles = vec![tile(vec![i64::MIN, 8]), tile(vec![-2])];
            }),
        ),
        (
            "split configs",
            layout(|l| {
                l.minor_to_major = vec![1, 0];
                l.split_configs = vec![SplitConfigProto::from(SplitConfigProtoFields {
                    dimension: 0,
                    split_indices: vec![],
                })];
            }),
        ),
        (
            "more dim level types than dimensions",
            layout(|l| {
                l.minor_to_major = vec![1, 0];
                l.dim_level_types = vec![1, 2, 3, 7];
                l.dim_unique = vec![false];
                l.dim_ordered = vec![false, false];
            }),
        ),
    ];
    type Place = fn(&mut HloModuleProto) -> &mut ShapeProto;
    let places: [(&str, Place); 3] = [
        ("the custom call's shape", |m| {
            m.computations[0].instructions[1].shape.as_mut().unwrap()
        }),
        ("operand_layout_constraints", |m| {
            &mut m.computations[0].instructions[1].operand_shapes_with_layout[0]
        }),
        ("outfeed_shape", |m| {
            m.computations[0].instructions[3]
                .outfeed_shape
                .as_mut()
                .unwrap()
        }),
    ];
    let mut failures = Vec::new();
    for (what, layout) in &layouts {
        for (place, at) in &places {
            let mut m = base.clone();
            at(&mut m).layout = Some(layout.clone());
            let Ok(read) = proto::read_module(&m.encode_to_vec()) else {
                continue;
            };
            if verify(&read).is_err() {
                continue;
            }
            let printed = print_module(&read);
            match hlo_opt::text::parse_module(&printed, "printed.hlo") {
                Ok(again) if print_module(&again) == printed => {}
                Ok(again) => failures.push(format!(
                    "{what} in {place}: prints differently once read back:\n{printed}\n{}",
                    print_module(&again)
                )),
                Err(e) => failures.push(format!("{what} in {place}: {e}\n{printed}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The streamed writer encodes each distinct shape and metadata once and
/// splices the bytes into every instruction that shares it, and writes a
/// common instruction's other fields straight from the IR
/// (`proto::write_direct`): its bytes are still those of the whole message
/// encoded field by field, for every module the tests hold, read from text
/// and from proto (frame ids renumbered, metadata shared by the proto
/// reader).
#[test]
fn streamed_bytes_are_the_whole_message_encoded() {
    let mut modules = Vec::new();
    // XLA's parser tests: every kind of instruction and attribute, so
    // both the direct path and the message path are taken.
    let dirs = [
        "corpus",
        "neuron",
        "frontend/jax",
        "frontend/torch",
        "xla_parser/short",
        "xla_parser/long",
        "xla_parser/nonroundtrip",
    ];
    for dir in dirs {
        let keep = |n: &str| [".hlo", ".txt", ".pb"].iter().any(|e| n.ends_with(e));
        for p in files(dir, keep) {
            let read = hlo_opt::driver::input::read_module_input(p.to_str().unwrap(), None);
            if let Ok((m, _)) = read {
                modules.push((p, m));
            }
        }
    }
    assert!(modules.len() > 100, "{} modules", modules.len());
    let mut written = 0;
    for (p, m) in &modules {
        let Ok(whole) = proto::module_to_proto(m) else {
            continue;
        };
        let streamed = proto::module_to_proto_bytes(m).unwrap();
        assert!(
            streamed == whole.encode_to_vec(),
            "{}: streamed bytes differ",
            p.display()
        );
        written += 1;
    }
    assert!(written > 100, "{written} modules written");
}

/// A module whose parameter (and root) is `f32[]` in `depth` tuples, with
/// a constant of that shape too.
fn nested_tuples(depth: usize) -> String {
    let (mut shape, mut value) = ("f32[]".to_string(), "1".to_string());
    for _ in 0..depth {
        shape = format!("({shape})");
        value = format!("({value})");
    }
    format!(
        "HloModule m\n\nENTRY e {{\n  c = {shape} constant({value})\n  ROOT p = {shape} parameter(0)\n}}\n\n"
    )
}

#[test]
fn tuples_as_deep_as_a_proto_holds_and_no_deeper() {
    // The text once took tuples 256 deep, whose proto the reader (64 at
    // most) then refused: an output the tool could not read back.
    let depth = hlo_opt::ir::shape::MAX_TUPLE_DEPTH;
    let m = hlo_opt::text::parse_module(&nested_tuples(depth), "t.hlo").unwrap();
    verify(&m).unwrap();
    let bytes = proto::module_to_proto(&m).unwrap().encode_to_vec();
    let back = proto::read_module(&bytes).unwrap_or_else(|e| panic!("{e}"));
    let shapes = |m: &hlo_opt::ir::Module| {
        let (_, entry) = m.computations().last().unwrap();
        entry
            .instructions()
            .map(|(_, i)| i.shape.to_text(true))
            .collect::<Vec<_>>()
    };
    assert_eq!(shapes(&back), shapes(&m));
    assert_eq!(shapes(&m).len(), 2);
    let e = hlo_opt::text::parse_module(&nested_tuples(depth + 1), "t.hlo").unwrap_err();
    assert!(e.message.contains("tuples nested more than 64 deep"), "{e}");
    assert_eq!((e.line, e.column), (4, 6 + depth + 1), "{e}");
}
