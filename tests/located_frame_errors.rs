//! A bad id in a proto's stack-frame tables is an error that says where it
//! is (issue 29, item 8): which instruction's metadata led to it (its
//! computation and name, and the message path with the byte offset), and
//! which table entry holds the bad id. These errors used to say only
//! `file name id 9 does not exist`.

mod common;

use common::data;
use hlo_opt::proto;
use hlo_opt::proto::messages::*;
use prost::Message;

/// The corpus's softmax module with one instruction left carrying a stack
/// frame (`frame`): the entry's second-to-last, whose computation and name
/// are returned with the proto.
fn module_with_one_frame(frame: i32) -> (HloModuleProto, String, String, usize) {
    let bytes = std::fs::read(data("corpus/nrn_softmax_fwd_bwd_f32.pb")).unwrap();
    let mut m = HloModuleProto::decode(&bytes[..]).unwrap();
    assert!(
        m.stack_frame_index.is_some(),
        "the corpus module has frames"
    );
    for c in &mut m.computations {
        for i in &mut c.instructions {
            if let Some(md) = &mut i.metadata {
                md.stack_frame_id = 0;
            }
        }
    }
    let entry = m.entry_computation_id;
    let ci = m.computations.iter().position(|c| c.id == entry).unwrap();
    let c = &mut m.computations[ci];
    let k = c.instructions.len() - 2;
    let comp = c.name.clone();
    let instr = &mut c.instructions[k];
    instr
        .metadata
        .get_or_insert_with(Default::default)
        .stack_frame_id = frame;
    let name = instr.name.clone();
    (m, comp, name, k)
}

fn frames(m: &mut HloModuleProto) -> &mut StackFrameIndexProto {
    m.stack_frame_index.as_mut().unwrap()
}

/// Reads `m`, which must be refused with every one of `wanted` in the
/// message, and the instruction named by its computation, its name and
/// its message path.
fn refused(m: &HloModuleProto, comp: &str, name: &str, k: usize, wanted: &[&str]) {
    let e = proto::read_module(&m.encode_to_vec()).unwrap_err();
    let text = e.to_string();
    let ci = m.computations.iter().position(|c| c.name == comp).unwrap();
    let path = format!("HloModuleProto.computations[{ci}].instructions[{k}]");
    assert!(e.path.starts_with(&path), "{text}\n(path {path})");
    assert!(e.offset.is_some(), "{text}: a byte offset");
    let instruction = format!("computation {comp}, instruction {name}");
    for w in std::iter::once(instruction.as_str()).chain(wanted.iter().copied()) {
        assert!(text.contains(w), "{text}\nshould contain: {w}");
    }
}

#[test]
fn a_bad_file_or_function_name_id_names_the_location_and_the_instruction() {
    let (mut m, comp, name, k) = module_with_one_frame(1);
    let loc = frames(&mut m).stack_frames[0].file_location_id;
    let j = (loc - 1) as usize;
    frames(&mut m).file_locations[j].file_name_id = 99;
    let n = frames(&mut m).file_names.len();
    refused(
        &m,
        &comp,
        &name,
        k,
        &[&format!(
            "metadata.stack_frame_id 1: stack_frame_index.file_locations[{j}].file_name_id 99 \
                 names no entry of stack_frame_index.file_names (the table has {n})"
        )],
    );

    let (mut m, comp, name, k) = module_with_one_frame(1);
    frames(&mut m).file_locations[j].function_name_id = -3;
    refused(
        &m,
        &comp,
        &name,
        k,
        &[&format!(
            "stack_frame_index.file_locations[{j}].function_name_id -3 names no entry of \
             stack_frame_index.function_names"
        )],
    );
}

#[test]
fn a_bad_file_location_or_parent_id_names_the_frame_and_the_instruction() {
    let (mut m, comp, name, k) = module_with_one_frame(2);
    frames(&mut m).stack_frames[1].file_location_id = 77;
    refused(
        &m,
        &comp,
        &name,
        k,
        &["metadata.stack_frame_id 2: stack_frame_index.stack_frames[1].file_location_id 77 names no entry of stack_frame_index.file_locations"],
    );

    let (mut m, comp, name, k) = module_with_one_frame(2);
    let count = frames(&mut m).stack_frames.len();
    frames(&mut m).stack_frames[1].parent_frame_id = 500;
    refused(
        &m,
        &comp,
        &name,
        k,
        &[
            &format!(
                "stack_frame_index.stack_frames[1].parent_frame_id 500 names no frame (the table has {count})"
            ),
        ],
    );

    // The instruction's own id, past the table.
    let (m, comp, name, k) = module_with_one_frame(4000);
    refused(
        &m,
        &comp,
        &name,
        k,
        &[&format!(
            "metadata.stack_frame_id 4000: names no frame (stack_frame_index.stack_frames has {count})"
        )],
    );
}

#[test]
fn a_parent_cycle_names_the_frames_and_the_instruction() {
    let (mut m, comp, name, k) = module_with_one_frame(1);
    let t = frames(&mut m);
    t.stack_frames[0].parent_frame_id = 3;
    t.stack_frames[2].parent_frame_id = 2;
    t.stack_frames[1].parent_frame_id = 3;
    refused(
        &m,
        &comp,
        &name,
        k,
        &[
            "metadata.stack_frame_id 1: stack_frame_index.stack_frames[2]: its parent chain has a \
             cycle (frames 3 -> 2 -> 3)",
        ],
    );
}
