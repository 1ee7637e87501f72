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
    let bytes = std::fs::read(data("neuron/dummy_hlo_nki_kernel.txt.hlo")).unwrap();
    let m = proto::read_module(&bytes).unwrap();
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
