//! The lockstep multi-device evaluator: collectives against results
//! computed by hand (2 and 4 devices, every group mode, the iota replica
//! groups, the -start/-done forms), errors for what it does not run, and
//! `--check-numerics` on the SPMD-partitioned torch-neuronx dump
//! (`graphhelper_misc_sharding_fsdp`), where a planted wrong rewrite of its
//! all-reduce is caught on the device it breaks.

use hlo_opt::driver::check_numerics::{run_checked, CheckConfig, CheckError, PassCheck};
use hlo_opt::interp::array::{Array, Data, Value};
use hlo_opt::interp::collective::{random_device_inputs, topology};
use hlo_opt::interp::{evaluate, evaluate_devices, Topology};
use hlo_opt::ir::{Module, Opcode};
use hlo_opt::passes::{Pass, PassContext, PassError, PassOptions};
use hlo_opt::text::parse_module;
use std::path::Path;
use std::process::Command;

fn module(text: &str) -> Module {
    parse_module(text, "test.hlo").unwrap_or_else(|e| panic!("{e}"))
}

fn f32s(v: &[f32]) -> Value {
    Value::array(
        Array::new(
            hlo_opt::ir::PrimitiveType::F32,
            vec![v.len()],
            Data::F32(v.to_vec()),
        )
        .unwrap(),
    )
}

fn s32s(v: &[i64]) -> Value {
    Value::array(
        Array::new(
            hlo_opt::ir::PrimitiveType::S32,
            vec![v.len()],
            Data::S(v.to_vec()),
        )
        .unwrap(),
    )
}

/// Runs `text` on every device, device d getting `inputs[d]`.
fn run(text: &str, inputs: Vec<Vec<Value>>) -> Vec<Value> {
    evaluate_devices(&module(text), &inputs).unwrap_or_else(|e| panic!("{e}"))
}

fn f32_data(v: &Value) -> Vec<f32> {
    match &v.as_array().unwrap().data {
        Data::F32(x) => x.clone(),
        d => panic!("not f32: {d:?}"),
    }
}

fn int_data(v: &Value) -> Vec<i64> {
    let a = v.as_array().unwrap();
    (0..a.len()).map(|i| a.index_at(i).unwrap()).collect()
}

const ADD: &str =
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n";
const ADD_S32: &str =
    "add_s {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT s = s32[] add(a, b)\n}\n\n";

#[test]
fn all_gather_concatenates_in_group_order() {
    // Flattened ids, the group listed as {1,0}: device 1's part first.
    let text = "HloModule m, num_partitions=2\n\nENTRY e {\n  p = f32[2]{0} parameter(0)\n  ROOT ag = f32[4]{0} all-gather(p), channel_id=1, replica_groups={{1,0}}, dimensions={0}, use_global_device_ids=true\n}\n";
    let out = run(text, vec![vec![f32s(&[1., 2.])], vec![f32s(&[3., 4.])]]);
    for v in &out {
        assert_eq!(f32_data(v), [3., 4., 1., 2.]);
    }
}

#[test]
fn all_reduce_over_explicit_and_iota_groups() {
    // Four replicas (no channel_id: replica ids); device d gives [d, 10d].
    let inputs = || {
        (0..4)
            .map(|d| vec![f32s(&[d as f32, 10. * d as f32])])
            .collect::<Vec<_>>()
    };
    let text = |groups: &str| {
        format!("HloModule m, replica_count=4\n\n{ADD}ENTRY e {{\n  p = f32[2]{{0}} parameter(0)\n  ROOT r = f32[2]{{0}} all-reduce(p), replica_groups={groups}, to_apply=add\n}}\n")
    };
    // {0,2} and {1,3}: 0+2, 1+3.
    let want = [[2., 20.], [4., 40.], [2., 20.], [4., 40.]];
    // The mesh form groups along the listed axis: 'a' varies fastest
    // within a group, so {0,2} and {1,3} again.
    for groups in [
        "{{0,2},{1,3}}",
        "[2,2]<=[2,2]T(1,0)",
        "mesh['a'=2,'b'=2] {'a'}",
    ] {
        let out = run(&text(groups), inputs());
        for (d, v) in out.iter().enumerate() {
            assert_eq!(f32_data(v), want[d], "{groups}, device {d}");
        }
    }
    // [2,2]<=[4] is {0,1},{2,3}: 0+1, 2+3; so is grouping along 'b', and
    // along 'a' of a mesh whose device_ids swap 1 and 2.
    let want = [[1., 10.], [1., 10.], [5., 50.], [5., 50.]];
    for groups in [
        "[2,2]<=[4]",
        "mesh['a'=2,'b'=2] {'b'}",
        "mesh['a'=2,'b'=2, device_ids=(0,2,1,3)] {'a'}",
    ] {
        let out = run(&text(groups), inputs());
        for (d, v) in out.iter().enumerate() {
            assert_eq!(f32_data(v), want[d], "{groups}, device {d}");
        }
    }
    // {} is every replica: 0+1+2+3.
    for v in run(&text("{}"), inputs()) {
        assert_eq!(f32_data(&v), [6., 60.]);
    }
}

#[test]
fn all_reduce_with_other_reducers() {
    let max = "mx {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT m = s32[] maximum(a, b)\n}\n\n";
    // a + 2b, not a single op: runs the computation per element, folding
    // in group order: (x0 + 2 x1).
    let lin = "lin {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  c = s32[] constant(2)\n  m = s32[] multiply(b, c)\n  ROOT s = s32[] add(a, m)\n}\n\n";
    let text = format!("HloModule m, num_partitions=2\n\n{max}{lin}ENTRY e {{\n  p = s32[3]{{0}} parameter(0)\n  a = s32[3]{{0}} all-reduce(p), channel_id=1, replica_groups={{{{0,1}}}}, use_global_device_ids=true, to_apply=mx\n  b = s32[3]{{0}} all-reduce(p), channel_id=2, replica_groups={{{{1,0}}}}, use_global_device_ids=true, to_apply=lin\n  ROOT t = (s32[3]{{0}}, s32[3]{{0}}) tuple(a, b)\n}}\n");
    let out = run(
        &text,
        vec![vec![s32s(&[1, 5, -3])], vec![s32s(&[4, 2, -7])]],
    );
    for v in &out {
        let t = v.tuple_elements().unwrap();
        assert_eq!(int_data(&t[0]), [4, 5, -3]);
        // Device 1 first: x1 + 2 x0.
        assert_eq!(int_data(&t[1]), [6, 12, -13]);
    }
}

#[test]
fn reduce_scatter_gives_each_device_its_block() {
    // Four replicas, replica_groups={}: device d gives (d+1) * [1,2,3,4]
    // (s32, exact); the sum is [10,20,30,40] and device k gets block k.
    let text = format!("HloModule m, replica_count=4\n\n{ADD_S32}ENTRY e {{\n  p = s32[4]{{0}} parameter(0)\n  ROOT r = s32[1]{{0}} reduce-scatter(p), replica_groups={{}}, dimensions={{0}}, to_apply=add_s\n}}\n");
    let inputs = (0..4)
        .map(|d| vec![s32s(&[d + 1, 2 * (d + 1), 3 * (d + 1), 4 * (d + 1)])])
        .collect();
    let out = run(&text, inputs);
    for (d, v) in out.iter().enumerate() {
        assert_eq!(int_data(v), [10 * (d as i64 + 1)], "device {d}");
    }
    // Two groups of two partitions (flattened ids), f32: {0,3}, {1,2}.
    let text = format!("HloModule m, num_partitions=4\n\n{ADD}ENTRY e {{\n  p = f32[2]{{0}} parameter(0)\n  ROOT r = f32[1]{{0}} reduce-scatter(p), channel_id=3, replica_groups={{{{0,3}},{{1,2}}}}, use_global_device_ids=true, dimensions={{0}}, to_apply=add\n}}\n");
    let inputs = (0..4)
        .map(|d| vec![f32s(&[d as f32, 100. * d as f32])])
        .collect();
    let out = run(&text, inputs);
    // Position in the group picks the block: devices 0 and 1 come first.
    let want = [[3.], [3.], [300.], [300.]];
    for (d, v) in out.iter().enumerate() {
        assert_eq!(f32_data(v), want[d], "device {d}");
    }
}

#[test]
fn collective_permute_sends_along_pairs_and_zeros_the_rest() {
    let text = |pairs: &str| {
        format!("HloModule m, replica_count=4\n\nENTRY e {{\n  p = f32[2]{{0}} parameter(0)\n  ROOT c = f32[2]{{0}} collective-permute(p), source_target_pairs={pairs}\n}}\n")
    };
    let inputs = || {
        (0..4)
            .map(|d| vec![f32s(&[d as f32 + 1., -(d as f32) - 1.])])
            .collect::<Vec<_>>()
    };
    // A ring: device k gets device k-1's operand.
    let out = run(&text("{{0,1},{1,2},{2,3},{3,0}}"), inputs());
    for (d, v) in out.iter().enumerate() {
        let s = ((d + 3) % 4) as f32 + 1.;
        assert_eq!(f32_data(v), [s, -s], "device {d}");
    }
    // A chain: nothing reaches device 0, which gets zeros.
    let out = run(&text("{{0,1},{1,2},{2,3}}"), inputs());
    assert_eq!(f32_data(&out[0]), [0., 0.]);
    assert_eq!(f32_data(&out[3]), [3., -3.]);
}

#[test]
fn group_modes_follow_xla() {
    // Two replicas x two partitions; device = replica * 2 + partition
    // gives [device].
    let inputs = || (0..4).map(|d| vec![f32s(&[d as f32])]).collect::<Vec<_>>();
    let gather = |attrs: &str, n: usize| {
        format!("HloModule m, replica_count=2, num_partitions=2\n\nENTRY e {{\n  p = f32[1]{{0}} parameter(0)\n  ROOT ag = f32[{n}]{{0}} all-gather(p), {attrs}, dimensions={{0}}\n}}\n")
    };
    // No channel_id: replica ids, per partition: {0,2} and {1,3}.
    let out = run(&gather("replica_groups={{0,1}}", 2), inputs());
    let want = [[0., 2.], [1., 3.], [0., 2.], [1., 3.]];
    for (d, v) in out.iter().enumerate() {
        assert_eq!(f32_data(v), want[d], "cross-replica, device {d}");
    }
    // channel_id without use_global_device_ids: replica ids, all of their
    // partitions, replica by replica: {1,0} is devices 2,3,0,1.
    let out = run(&gather("channel_id=1, replica_groups={{1,0}}", 4), inputs());
    for v in &out {
        assert_eq!(f32_data(v), [2., 3., 0., 1.], "cross-replica-and-partition");
    }
    // Flattened ids.
    let out = run(
        &gather(
            "channel_id=1, replica_groups={{3,0},{1,2}}, use_global_device_ids=true",
            2,
        ),
        inputs(),
    );
    let want = [[3., 0.], [1., 2.], [1., 2.], [3., 0.]];
    for (d, v) in out.iter().enumerate() {
        assert_eq!(f32_data(v), want[d], "flattened, device {d}");
    }
    // collective-permute with a channel_id: partition ids, per replica.
    let text = "HloModule m, replica_count=2, num_partitions=2\n\nENTRY e {\n  p = f32[1]{0} parameter(0)\n  ROOT c = f32[1]{0} collective-permute(p), channel_id=1, source_target_pairs={{0,1},{1,0}}\n}\n";
    let out = run(text, inputs());
    let want = [[1.], [0.], [3.], [2.]];
    for (d, v) in out.iter().enumerate() {
        assert_eq!(f32_data(v), want[d], "cross-partition permute, device {d}");
    }
    // partition-id and replica-id.
    let text = "HloModule m, replica_count=2, num_partitions=2\n\nENTRY e {\n  p = u32[] partition-id()\n  r = u32[] replica-id()\n  ROOT t = (u32[], u32[]) tuple(p, r)\n}\n";
    let out = run(text, vec![vec![]; 4]);
    for (d, v) in out.iter().enumerate() {
        let t = v.tuple_elements().unwrap();
        assert_eq!(int_data(&t[0]), [d as i64 % 2], "partition of {d}");
        assert_eq!(int_data(&t[1]), [d as i64 / 2], "replica of {d}");
    }
}

#[test]
fn all_to_all_array_and_tuple_forms() {
    let text = "HloModule m, num_partitions=2\n\nENTRY e {\n  p = f32[4]{0} parameter(0)\n  ROOT a = f32[4]{0} all-to-all(p), channel_id=1, replica_groups={{0,1}}, dimensions={0}\n}\n";
    let out = run(
        text,
        vec![vec![f32s(&[1., 2., 3., 4.])], vec![f32s(&[5., 6., 7., 8.])]],
    );
    assert_eq!(f32_data(&out[0]), [1., 2., 5., 6.]);
    assert_eq!(f32_data(&out[1]), [3., 4., 7., 8.]);
    let text = "HloModule m, replica_count=2\n\nENTRY e {\n  a = f32[1]{0} parameter(0)\n  b = f32[1]{0} parameter(1)\n  ROOT t = (f32[1]{0}, f32[1]{0}) all-to-all(a, b), replica_groups={{0,1}}\n}\n";
    let out = run(
        text,
        vec![
            vec![f32s(&[1.]), f32s(&[2.])],
            vec![f32s(&[3.]), f32s(&[4.])],
        ],
    );
    let got = |v: &Value| -> Vec<f32> {
        v.tuple_elements()
            .unwrap()
            .iter()
            .flat_map(f32_data)
            .collect()
    };
    assert_eq!(got(&out[0]), [1., 3.]);
    assert_eq!(got(&out[1]), [2., 4.]);
}

#[test]
fn start_and_done_forms() {
    let text = format!("HloModule m, replica_count=2\n\n{ADD}ENTRY e {{\n  p = f32[2]{{0}} parameter(0)\n  rs = f32[2]{{0}} all-reduce-start(p), replica_groups={{{{0,1}}}}, to_apply=add\n  r = f32[2]{{0}} all-reduce-done(rs)\n  gs = (f32[2]{{0}}, f32[4]{{0}}) all-gather-start(p), replica_groups={{{{0,1}}}}, dimensions={{0}}\n  g = f32[4]{{0}} all-gather-done(gs)\n  cs = (f32[2]{{0}}, f32[2]{{0}}, u32[], u32[]) collective-permute-start(p), source_target_pairs={{{{0,1}},{{1,0}}}}\n  c = f32[2]{{0}} collective-permute-done(cs)\n  ROOT t = (f32[2]{{0}}, f32[4]{{0}}, f32[2]{{0}}) tuple(r, g, c)\n}}\n");
    let out = run(&text, vec![vec![f32s(&[1., 2.])], vec![f32s(&[10., 20.])]]);
    let swapped = [[10., 20.], [1., 2.]];
    for (d, v) in out.iter().enumerate() {
        let t = v.tuple_elements().unwrap();
        assert_eq!(f32_data(&t[0]), [11., 22.]);
        assert_eq!(f32_data(&t[1]), [1., 2., 10., 20.]);
        assert_eq!(f32_data(&t[2]), swapped[d]);
    }
}

#[test]
fn single_device_collectives_and_clear_errors() {
    // One-member groups stay the identity for the one-device evaluator.
    let text = format!("HloModule m\n\n{ADD}ENTRY e {{\n  p = f32[2]{{0}} parameter(0)\n  a = f32[2]{{0}} all-reduce(p), replica_groups={{{{0}},{{1}}}}, to_apply=add\n  ROOT g = f32[2]{{0}} all-gather(a), channel_id=1, replica_groups={{{{0}}}}, dimensions={{0}}\n}}\n");
    let v = evaluate(&module(&text), &[f32s(&[1., 2.])]).unwrap();
    assert_eq!(f32_data(&v), [1., 2.]);
    // A group of two needs the other device: the one-device evaluator says
    // so, naming the instruction.
    let text = format!("HloModule m, replica_count=2\n\n{ADD}ENTRY e {{\n  p = f32[2]{{0}} parameter(0)\n  ROOT a = f32[2]{{0}} all-reduce(p), replica_groups={{{{0,1}}}}, to_apply=add\n}}\n");
    let e = evaluate(&module(&text), &[f32s(&[1., 2.])])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("instruction a") && e.contains("needs other devices' data"),
        "{e}"
    );
    // Inside a while body, lockstep does not exchange: a clear error.
    let text = format!("HloModule m, replica_count=2\n\n{ADD}cond {{\n  s = (s32[], f32[2]{{0}}) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n  n = s32[] constant(2)\n  ROOT c = pred[] compare(i, n), direction=LT\n}}\n\nbody {{\n  s = (s32[], f32[2]{{0}}) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n  x = f32[2]{{0}} get-tuple-element(s), index=1\n  one = s32[] constant(1)\n  j = s32[] add(i, one)\n  y = f32[2]{{0}} all-reduce(x), replica_groups={{{{0,1}}}}, to_apply=add\n  ROOT t = (s32[], f32[2]{{0}}) tuple(j, y)\n}}\n\nENTRY e {{\n  p = f32[2]{{0}} parameter(0)\n  z = s32[] constant(0)\n  t = (s32[], f32[2]{{0}}) tuple(z, p)\n  ROOT w = (s32[], f32[2]{{0}}) while(t), condition=cond, body=body\n}}\n");
    let e = evaluate_devices(
        &module(&text),
        &[vec![f32s(&[1., 2.])], vec![f32s(&[3., 4.])]],
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("instruction y")
            && e.contains("called from w")
            && e.contains("not inside called computations"),
        "{e}"
    );
    // The wrong number of devices' inputs.
    let e = evaluate_devices(&module(&text), &[vec![f32s(&[1., 2.])]])
        .unwrap_err()
        .to_string();
    assert!(e.contains("runs on 2 devices"), "{e}");
    // replica_groups={} with no device count anywhere is not a guess.
    let text = format!("HloModule m\n\n{ADD}ENTRY e {{\n  p = f32[2]{{0}} parameter(0)\n  ROOT a = f32[2]{{0}} all-reduce(p), replica_groups={{}}, to_apply=add\n}}\n");
    let e = evaluate(&module(&text), &[f32s(&[1., 2.])])
        .unwrap_err()
        .to_string();
    assert!(e.contains("names no device count"), "{e}");
}

fn fsdp() -> Module {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/neuron/graphhelper_misc_sharding_fsdp.txt");
    let text = std::fs::read_to_string(&path).unwrap();
    parse_module(&text, "fsdp").unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn fsdp_devices_come_from_its_ids_and_get_their_partition_id() {
    let m = fsdp();
    // No num_partitions in its header: replica_groups={{0,1}} and
    // sharding={devices=[2,1]0,1} name devices 0 and 1, as partitions.
    let t = topology(&m).unwrap();
    assert_eq!(
        t,
        Topology {
            replicas: 1,
            partitions: 2,
            known: true
        }
    );
    let inputs = random_device_inputs(&m, &t, 0).unwrap();
    // The `partition-id.2` parameter (the last) is each device's id; the
    // other inputs differ between devices.
    for (d, inp) in inputs.iter().enumerate() {
        assert_eq!(int_data(&inp[7]), [d as i64]);
    }
    assert_ne!(f32_data(&inputs[0][0]), f32_data(&inputs[1][0]));
}

#[test]
fn fsdp_passes_check_numerics_on_two_devices() {
    let mut m = fsdp();
    let names = hlo_opt::passes::default_pipeline();
    let passes = hlo_opt::driver::check_numerics::make_passes(&names).unwrap();
    let mut changed: Vec<PassCheck> = Vec::new();
    run_checked(
        &mut m,
        passes,
        &PassOptions::default(),
        &CheckConfig::default(),
        &mut |c| {
            if c.changed {
                changed.push(c.clone())
            }
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // legalize-intrinsics drops its AwsNeuronTransferWithStaticRing calls.
    assert!(!changed.is_empty());
    for c in &changed {
        assert_eq!(c.devices, 2);
        let names: Vec<&str> = c.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["d0:out0", "d1:out0"]);
    }
}

#[test]
fn fsdp_check_numerics_cli_reports_lockstep() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/neuron/graphhelper_misc_sharding_fsdp.txt");
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_hlo-opt"))
        .arg("--check-numerics")
        .arg(&path)
        .arg("-o")
        .arg(dir.path().join("o.hlo"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(
            "pass legalize-intrinsics: changed, outputs re-evaluated on 2 devices in lockstep"
        ),
        "{err}"
    );
    assert!(err.contains("d1:out0"), "{err}");
    assert!(!err.contains("FAIL"), "{err}");
}

/// A rewrite planted for the test: gives fsdp's all-reduce other
/// replica_groups. `{{1,0}}` is right (the same sum); `{{0},{1}}` drops the
/// exchange, which device 0 does not notice (it holds the only nonzero
/// contribution, its partition's `param.3`) and device 1 does.
struct PlantAllReduceGroups {
    groups: &'static str,
}

impl Pass for PlantAllReduceGroups {
    fn name(&self) -> &'static str {
        if self.groups == "{{1,0}}" {
            "plant-all-reduce-reordered"
        } else {
            "plant-all-reduce-dropped"
        }
    }

    fn run(&mut self, module: &mut Module, _: &mut PassContext) -> Result<bool, PassError> {
        let entry = module.entry();
        let comp = module.comp_mut(entry);
        let id = comp.find("all-reduce").expect("fsdp's all-reduce");
        let instr = comp.instr_mut(id);
        assert_eq!(instr.opcode, Opcode::AllReduce);
        let groups = hlo_opt::text::attrs::read(
            "replica_groups",
            Some(Opcode::AllReduce),
            &self.groups.into(),
        )
        .expect("planted groups read")
        .expect("replica_groups is typed");
        instr.set_attr("replica_groups", groups);
        Ok(true)
    }
}

fn check_plant(groups: &'static str) -> Result<(), CheckError> {
    let mut m = fsdp();
    let mut tables = String::new();
    let r = run_checked(
        &mut m,
        vec![Box::new(PlantAllReduceGroups { groups })],
        &PassOptions::default(),
        &CheckConfig::default(),
        &mut |c| tables.push_str(&c.table()),
    );
    eprint!("{tables}");
    r.map(|_| ())
}

#[test]
fn check_numerics_catches_a_wrong_collective_rewrite_on_the_device_it_breaks() {
    check_plant("{{1,0}}").unwrap();
    let e = check_plant("{{0},{1}}").unwrap_err();
    assert!(
        matches!(&e, CheckError::Mismatch { pass: "plant-all-reduce-dropped", output, .. } if output == "d1:out0"),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("pass plant-all-reduce-dropped changed output d1:out0"),
        "{e}"
    );
}

/// A sharding's tiles: the tile counts of the data dimensions and each
/// device's tile index (`None` for a replicated value). Reads the forms
/// the GPT module uses: `devices=[..]<=[..]T(..)` and explicit device
/// lists, with or without `last_tile_dim_replicate`.
fn tiles(sharding: &str) -> Option<(Vec<usize>, Vec<Vec<usize>>)> {
    let list =
        |t: &str| -> Vec<usize> { t.split(',').map(|x| x.trim().parse().unwrap()).collect() };
    let rest = sharding.split("devices=[").nth(1)?;
    let (dims, rest) = rest.split_once(']').unwrap();
    let dims = list(dims);
    // The tile assignment in row-major order over `dims`.
    let ids: Vec<usize> = match rest.strip_prefix("<=[") {
        Some(r) => {
            let (iota, r) = r.split_once(']').unwrap();
            let iota = list(iota);
            let perm = match r.strip_prefix("T(") {
                Some(t) => list(t.split(')').next().unwrap()),
                None => (0..iota.len()).collect(),
            };
            let strides: Vec<usize> = (0..iota.len())
                .map(|k| iota[k + 1..].iter().product())
                .collect();
            let tdims: Vec<usize> = perm.iter().map(|&p| iota[p]).collect();
            (0..tdims.iter().product::<usize>())
                .map(|mut flat| {
                    let mut id = 0;
                    for k in (0..tdims.len()).rev() {
                        id += (flat % tdims[k]) * strides[perm[k]];
                        flat /= tdims[k];
                    }
                    id
                })
                .collect()
        }
        None => list(rest.split([' ', '}']).next().unwrap()),
    };
    let data_rank = dims.len() - usize::from(sharding.contains("last_tile_dim_replicate"));
    let mut of_device = vec![Vec::new(); ids.len()];
    for (mut flat, &d) in ids.iter().enumerate() {
        let mut t = vec![0; dims.len()];
        for k in (0..dims.len()).rev() {
            t[k] = flat % dims[k];
            flat /= dims[k];
        }
        t.truncate(data_rank);
        of_device[d] = t;
    }
    dims.get(..data_rank).map(|dims| (dims.to_vec(), of_device))
}

/// Device `d`'s shard of the global array `a`.
fn shard(a: &Array, sharding: &str, d: usize) -> Array {
    let Some((dims, of_device)) = tiles(sharding) else {
        return a.clone();
    };
    let spec: Vec<(i64, i64, i64)> = a
        .dims
        .iter()
        .zip(&dims)
        .zip(&of_device[d])
        .map(|((&n, &tiles), &t)| {
            let b = n / tiles;
            ((t * b) as i64, ((t + 1) * b) as i64, 1)
        })
        .collect();
    hlo_opt::interp::shape_ops::slice(a, &spec).unwrap()
}

fn sharding_of(m: &Module, id: hlo_opt::ir::InstrId) -> String {
    let mut text = String::new();
    match m.comp(m.entry()).instr(id).attr("sharding") {
        Some(v) if hlo_opt::text::attrs::print(v, &mut text) => text,
        _ => "{replicated}".into(),
    }
}

/// XLA's own SPMD partitioning of the 4-layer GPT training step (8
/// partitions: data x model parallel, all-reduce over flattened ids,
/// all-to-all over mesh groups, collective-permute, partition-id), run on
/// 8 devices in lockstep, against the unpartitioned module: every device's
/// every output is its shard of the global output.
#[test]
fn xla_spmd_gpt_on_eight_devices_matches_the_global_module() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus");
    let read = |f: &str| parse_module(&std::fs::read_to_string(dir.join(f)).unwrap(), f).unwrap();
    let global = read("gpt4_train_sharded_f32.hlo");
    let spmd = read("gpt4_train_sharded_f32.opt.hlo");
    let inputs = hlo_opt::interp::random::random_inputs(&global, 0).unwrap();
    let want = evaluate(&global, &inputs).unwrap().leaves();
    let entry = global.comp(global.entry());
    let param_shardings: Vec<String> = entry
        .parameters()
        .iter()
        .map(|&p| sharding_of(&global, p))
        .collect();
    // The root's tuple sharding, one `{...}` per output.
    let root = sharding_of(&global, entry.root()).replace("/*index=", "");
    let inner = &root[1..root.len() - 1];
    let (mut out_shardings, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' if depth == 0 => {
                start = i;
                depth = 1;
            }
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    out_shardings.push(&inner[start..=i]);
                }
            }
            _ => {}
        }
    }
    assert_eq!(out_shardings.len(), want.len());
    assert_eq!(topology(&spmd).unwrap().devices(), 8);
    let device_inputs: Vec<Vec<Value>> = (0..8)
        .map(|d| {
            inputs
                .iter()
                .zip(&param_shardings)
                .map(|(v, s)| Value::array(shard(v.as_array().unwrap(), s, d)))
                .collect()
        })
        .collect();
    let got = evaluate_devices(&spmd, &device_inputs).unwrap_or_else(|e| panic!("{e}"));
    for (d, out) in got.iter().enumerate() {
        for (i, g) in out.leaves().iter().enumerate() {
            let w = shard(&want[i], out_shardings[i], d);
            // The partitioned sums add in another order (5e-5 of the
            // largest element at most).
            let diff = hlo_opt::interp::compare::compare_with(g, &w, 1e-4);
            assert!(diff.ok(), "device {d}, output {i}: {diff}");
        }
    }
}

#[test]
fn collective_broadcast_sends_each_groups_first_device_to_its_members() {
    // With a channel, groups hold partition ids; the first of each is its
    // root (XLA's order, not the smallest id).
    let text = "HloModule m, num_partitions=4\n\nENTRY e {\n  p = f32[2]{0} parameter(0)\n  ROOT b = f32[2]{0} collective-broadcast(p), channel_id=1, replica_groups={{2,0},{1,3}}\n}\n";
    let inputs = (0..4)
        .map(|d| vec![f32s(&[d as f32, 10. * d as f32])])
        .collect::<Vec<_>>();
    let out = run(text, inputs);
    let roots = [2., 1., 2., 1.];
    for (d, v) in out.iter().enumerate() {
        assert_eq!(f32_data(v), [roots[d], 10. * roots[d]], "device {d}");
    }
    // One device alone gets its own operand.
    let one = "HloModule m\n\nENTRY e {\n  p = s32[3]{0} parameter(0)\n  ROOT b = s32[3]{0} collective-broadcast(p), replica_groups={{0}}\n}\n";
    let out = run(one, vec![vec![s32s(&[7, 8, 9])]]);
    assert_eq!(int_data(&out[0]), [7, 8, 9]);
}
