//! Collectives, and the lockstep evaluator that runs every device of a
//! replicated or SPMD-partitioned module together.
//!
//! XLA runs one program on `replica_count x num_partitions` devices; the
//! device of replica r and partition p has the flattened id
//! `r * num_partitions + p` (XLA's default device assignment), which is
//! the device index used here. [`evaluate_devices`] walks the entry
//! computation once and evaluates each instruction for every device, each
//! with its own inputs; a collective of the entry computation receives the
//! operands of every device and gives each device its result.
//!
//! Who meets whom follows XLA's `CollectiveOpGroupMode`
//! (`collective_ops_utils.h`), chosen by `channel_id` and
//! `use_global_device_ids`:
//!
//! - no channel_id: replica_groups hold replica ids, one group per
//!   partition (cross-replica);
//! - channel_id, and an op without use_global_device_ids (all-to-all,
//!   collective-permute): partition ids, one group per replica
//!   (cross-partition);
//! - channel_id, use_global_device_ids=false or absent on all-reduce,
//!   all-gather, reduce-scatter (whose flag is a plain bool in XLA):
//!   replica ids, each group taking every partition of its replicas
//!   (cross-replica-and-partition);
//! - channel_id, use_global_device_ids=true: flattened device ids.
//!
//! `replica_groups={}` is one group of every replica (every partition in
//! cross-partition mode); the iota form `[G,S]<=[dims]T(perm)` and the
//! mesh form `mesh['a'=2,'b'=4] {'b'}` (whole axes) are read too.
//! A collective inside a called computation (a while body, a call) runs
//! on one device only, so there it must be the identity (every group a
//! single device) or it is an error naming it; so is any collective for
//! the one-device [`super::evaluate`].
//!
//! Reductions (all-reduce, reduce-scatter) compute one result per group,
//! which every member gets, as on a device: float add and multiply
//! accumulate in f64 and round once, like `reduce`.

use super::array::{shape_dims, Array, Data, Value};
use super::elementwise::{self as ew, BinOp};
use super::reduce::scalar_at;
use super::{
    err, instruction_work, shape_ops, Combiner, EvalError, EvalOptions, Interpreter, Result,
};
use crate::ir::attrs::{AxisRef, Iota, MeshAxis, MeshDevices, ReplicaGroups, Sharding, Typed};
use crate::ir::{AttrValue, Computation, Instruction, Module, Opcode, PrimitiveType, Shape};
use std::sync::Arc;

/// How many devices run the module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Topology {
    pub replicas: usize,
    pub partitions: usize,
    /// Whether the module says how many devices there are (its header,
    /// or device ids it names). Without that, `replica_groups={}` ("every
    /// device") is an error rather than a guess of one device.
    pub known: bool,
}

impl Topology {
    /// One device, as for a module without collectives.
    pub const SINGLE: Topology = Topology {
        replicas: 1,
        partitions: 1,
        known: false,
    };

    pub fn devices(&self) -> usize {
        self.replicas * self.partitions
    }

    pub fn replica_of(&self, device: usize) -> usize {
        device / self.partitions
    }

    pub fn partition_of(&self, device: usize) -> usize {
        device % self.partitions
    }
}

/// The ops that exchange data between devices.
pub fn is_collective(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::AllReduce
            | Opcode::AllReduceStart
            | Opcode::AllGather
            | Opcode::AllGatherStart
            | Opcode::ReduceScatter
            | Opcode::AllToAll
            | Opcode::CollectivePermute
            | Opcode::CollectivePermuteStart
            | Opcode::CollectiveBroadcast
    )
}

/// `all-reduce-done` (the result itself) and `all-gather-done` /
/// `collective-permute-done` (the results of the -start's (operands,
/// results, ...) tuple).
pub fn done(instr: &Instruction, ops: &[&Value]) -> Result<Value> {
    super::expect_operands(instr, ops, 1)?;
    if instr.opcode == Opcode::AllReduceDone {
        return Ok(ops[0].clone());
    }
    ops[0].tuple_elements()?.get(1).cloned().ok_or_else(|| {
        err(format!(
            "{} of a tuple without results",
            instr.opcode.name()
        ))
    })
}

fn replica_groups(instr: &Instruction) -> Option<&Typed<ReplicaGroups>> {
    match instr.attr("replica_groups")? {
        AttrValue::ReplicaGroups(g) => Some(g),
        _ => None,
    }
}

fn source_target_pairs(instr: &Instruction) -> Option<&Typed<Vec<(i64, i64)>>> {
    match instr.attr("source_target_pairs")? {
        AttrValue::Pairs(p) => Some(p),
        _ => None,
    }
}

/// A value as its text says it, for messages.
fn shown<T: std::fmt::Debug>(v: Option<&Typed<T>>) -> String {
    match v {
        Some(w) => w
            .text()
            .map_or_else(|| format!("{:?}", w.value()), str::to_string),
        None => "{}".to_string(),
    }
}

/// The module's devices: the header's `replica_count` and `num_partitions`
/// when it names either (the other is 1).
///
/// Without them (torch-neuronx dumps leave `num_partitions` out), each
/// count is the largest id of its kind the module names, plus one:
/// replica ids in the replica_groups and source_target_pairs of
/// cross-replica collectives (see the module doc), partition ids in those
/// of cross-partition ones, the flattened ids of `use_global_device_ids`
/// groups and the devices of shardings (flattened ids are partition ids
/// when there is one replica). A module naming both replicas and
/// partitions beyond 0 is an error: which devices a flattened id means
/// then depends on counts only the header can give.
pub fn topology(module: &Module) -> Result<Topology> {
    let header = |key: &str| -> Result<Option<usize>> {
        let Some(a) = module.header.iter().find(|a| &*a.key == key) else {
            return Ok(None);
        };
        let text = match &a.value {
            AttrValue::Raw(s) => s.to_string(),
            AttrValue::Int(v) => v.to_string(),
            _ => String::new(),
        };
        match text.trim().parse::<usize>() {
            Ok(n) if (1..=MAX_DEVICES).contains(&n) => Ok(Some(n)),
            _ => Err(err(format!(
                "the module header's {key}={text} is not a device count"
            ))),
        }
    };
    let (replicas, partitions) = (header("replica_count")?, header("num_partitions")?);
    if replicas.is_some() || partitions.is_some() {
        let (r, p) = (replicas.unwrap_or(1), partitions.unwrap_or(1));
        if r.saturating_mul(p) > MAX_DEVICES {
            return Err(err(format!(
                "the module header asks for {r} replica(s) x {p} partition(s), more than the {MAX_DEVICES} devices the interpreter runs"
            )));
        }
        return Ok(Topology {
            replicas: r,
            partitions: p,
            known: true,
        });
    }
    // The largest replica and partition ids named.
    let (mut max_r, mut max_p): (Option<usize>, Option<usize>) = (None, None);
    let note = |max: &mut Option<usize>, ids: &mut dyn Iterator<Item = usize>| {
        for id in ids {
            *max = Some(max.map_or(id, |m| m.max(id)));
        }
    };
    for (_, comp) in module.computations() {
        for (_, instr) in comp.instructions() {
            if is_collective(instr.opcode) {
                // Malformed attributes are reported at the instruction
                // when it runs.
                let Ok(mode) = group_mode(instr) else {
                    continue;
                };
                let max = match mode {
                    Mode::CrossReplica | Mode::CrossReplicaAndPartition => &mut max_r,
                    Mode::CrossPartition | Mode::FlattenedId => &mut max_p,
                };
                if let Some(Ok(groups)) = replica_groups(instr).map(device_lists) {
                    note(max, &mut groups.into_iter().flatten());
                }
                if let Some(Ok(pairs)) = source_target_pairs(instr).map(device_pairs) {
                    note(max, &mut pairs.into_iter().flat_map(|(s, t)| [s, t]));
                }
            }
            if let Some(AttrValue::Sharding(s)) = instr.attr("sharding") {
                note(&mut max_p, &mut sharding_devices(s).into_iter());
            }
        }
    }
    let count = |max: Option<usize>| -> Result<usize> {
        max.map_or(Ok(1), |m| {
            m.checked_add(1)
                .filter(|&n| n <= MAX_DEVICES)
                .ok_or_else(|| err(format!("device id {m} is too large")))
        })
    };
    let (r, p) = (count(max_r)?, count(max_p)?);
    if r > 1 && p > 1 {
        return Err(err(format!(
            "the module names replica ids up to {} and partition ids up to {}, and its header gives no replica_count/num_partitions to tell which devices they are",
            r - 1,
            p - 1
        )));
    }
    Ok(Topology {
        replicas: r,
        partitions: p,
        // Naming only id 0 says nothing about how many devices there are.
        known: r > 1 || p > 1,
    })
}

/// More devices than any module of the corpus uses by far; a larger
/// count is a typo, not a program to run.
const MAX_DEVICES: usize = 4096;

/// The largest device id a sharding names (`devices=[2,1]0,1`,
/// `devices=[4,2]<=[8]`, `maximal device=3`, tuples of those).
fn sharding_devices(s: &Sharding) -> Option<usize> {
    let own = match (&s.iota, s.kind) {
        (Some(iota), _) => iota
            .reshape_dims
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(usize::try_from(d).ok()?))
            .filter(|&n| n > 0)
            .map(|n| n - 1),
        (None, _) => s
            .devices
            .iter()
            .filter_map(|&d| usize::try_from(d).ok())
            .max(),
    };
    s.tuple.iter().filter_map(sharding_devices).chain(own).max()
}

fn ids(v: &[i64]) -> Option<Vec<usize>> {
    v.iter().map(|&x| usize::try_from(x).ok()).collect()
}

/// The device groups replica_groups lists: explicit ones; the iota form
/// `[G,S]<=[d0,d1,...]T(p0,p1,...)`, G groups of S ids, the iota over `d`
/// transposed by `p`; or the mesh form (see [`mesh_groups`]).
fn device_lists(g: &Typed<ReplicaGroups>) -> Result<Vec<Vec<usize>>> {
    let bad = || err(format!("cannot read replica_groups={}", shown(Some(g))));
    match g.value() {
        ReplicaGroups::Explicit(groups) => groups.iter().map(|l| ids(l).ok_or_else(bad)).collect(),
        ReplicaGroups::Iota {
            groups,
            per_group,
            iota,
        } => {
            let shape = ids(&[*groups, *per_group]).ok_or_else(bad)?;
            let all = iota_ids(iota).ok_or_else(bad)?;
            match shape[..] {
                [g, n] if n > 0 && g.checked_mul(n) == Some(all.len()) => {
                    Ok(all.chunks(n).map(<[usize]>::to_vec).collect())
                }
                _ => Err(bad()),
            }
        }
        ReplicaGroups::Mesh {
            mesh,
            devices,
            axes,
        } => mesh_groups(mesh, devices.as_ref(), axes).ok_or_else(bad)?,
    }
}

/// The ids of an iota device list, in row-major order: the iota over
/// its dims, transposed by its permutation.
fn iota_ids(iota: &Iota) -> Option<Vec<usize>> {
    let dims = ids(&iota.reshape_dims)?;
    let perm: Vec<usize> = if iota.transpose_perm.is_empty() {
        (0..dims.len()).collect()
    } else {
        iota.transpose_perm
            .iter()
            .map(|&p| usize::try_from(p).ok())
            .collect::<Option<_>>()?
    };
    let n = dims
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&n| n <= MAX_DEVICES)?;
    transposed(&(0..n).collect::<Vec<_>>(), &dims, &perm)
}

/// `ids` (row-major over `dims`) transposed by `perm`, in row-major order;
/// `None` unless `perm` is a permutation of the dimensions.
fn transposed(ids: &[usize], dims: &[usize], perm: &[usize]) -> Option<Vec<usize>> {
    let mut sorted = perm.to_vec();
    sorted.sort_unstable();
    if sorted != (0..dims.len()).collect::<Vec<_>>() || ids.len() != dims.iter().product::<usize>()
    {
        return None;
    }
    let strides: Vec<usize> = (0..dims.len())
        .map(|k| dims[k + 1..].iter().product())
        .collect();
    let tdims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
    let mut out = Vec::with_capacity(ids.len());
    let mut idx = vec![0usize; tdims.len()];
    for _ in 0..ids.len() {
        out.push(
            ids[idx
                .iter()
                .zip(perm)
                .map(|(&i, &p)| i * strides[p])
                .sum::<usize>()],
        );
        for k in (0..idx.len()).rev() {
            idx[k] += 1;
            if idx[k] < tdims[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    Some(out)
}

/// The mesh form `mesh['a'=2,'b'=4] {'b'}`: the mesh's devices, one group
/// per index of the axes not listed, ordered along the listed axes (XLA's
/// `MeshAxesReplicaGroupList`), the devices `device_ids` lists if any. Sub-axes (`'a':(1)2`) are not read.
fn mesh_groups(
    mesh: &[MeshAxis],
    devices: Option<&MeshDevices>,
    axes: &[AxisRef],
) -> Option<Result<Vec<Vec<usize>>>> {
    let sizes: Vec<usize> = mesh
        .iter()
        .map(|a| usize::try_from(a.size).ok())
        .collect::<Option<_>>()?;
    let n = sizes
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&n| n <= MAX_DEVICES)?;
    let mut grouped = Vec::new();
    for a in axes {
        if a.sub_axis.is_some() {
            return Some(Err(super::unsupported(
                "unsupported op: mesh sub-axes in replica_groups are not implemented",
            )));
        }
        let axis = usize::try_from(a.axis)
            .ok()
            .filter(|&i| i < sizes.len() && !grouped.contains(&i))?;
        grouped.push(axis);
    }
    // The other axes outermost, then the grouped ones in the listed order.
    let perm: Vec<usize> = (0..sizes.len())
        .filter(|a| !grouped.contains(a))
        .chain(grouped.iter().copied())
        .collect();
    let per_group: usize = grouped.iter().map(|&a| sizes[a]).product();
    let all = match devices {
        Some(d) => ids(&d.ids()?)?,
        None => (0..n).collect(),
    };
    let ids = transposed(&all, &sizes, &perm)?;
    if per_group == 0 {
        return None;
    }
    Some(Ok(ids.chunks(per_group).map(<[usize]>::to_vec).collect()))
}

/// `source_target_pairs={{0,1},{1,0}}`.
fn device_pairs(p: &Typed<Vec<(i64, i64)>>) -> Result<Vec<(usize, usize)>> {
    p.iter()
        .map(|&(a, b)| Some((usize::try_from(a).ok()?, usize::try_from(b).ok()?)))
        .collect::<Option<_>>()
        .ok_or_else(|| {
            err(format!(
                "cannot read source_target_pairs={}",
                shown(Some(p))
            ))
        })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    CrossReplica,
    CrossPartition,
    CrossReplicaAndPartition,
    FlattenedId,
}

/// XLA's `GetCollectiveOpGroupMode`: all-reduce, all-gather and
/// reduce-scatter carry `use_global_device_ids` as a plain bool (absent
/// means false), the other collectives have none.
fn group_mode(instr: &Instruction) -> Result<Mode> {
    let channel = instr.attr("channel_id").is_some();
    let has_flag = matches!(
        instr.opcode,
        Opcode::AllReduce
            | Opcode::AllReduceStart
            | Opcode::AllGather
            | Opcode::AllGatherStart
            | Opcode::ReduceScatter
    );
    let global = super::attrs::bool_attr(instr, "use_global_device_ids")?.unwrap_or(false);
    Ok(match (channel, has_flag, global) {
        (false, _, false) => Mode::CrossReplica,
        (false, _, true) => {
            return Err(err(
                "use_global_device_ids=true needs a channel_id (XLA rejects this combination)",
            ))
        }
        (true, false, _) => Mode::CrossPartition,
        (true, true, false) => Mode::CrossReplicaAndPartition,
        (true, true, true) => Mode::FlattenedId,
    })
}

/// The device groups of a collective that has replica_groups, each in
/// XLA's participant order (the order all-gather concatenates in).
fn device_groups(instr: &Instruction, topo: &Topology) -> Result<Vec<Vec<usize>>> {
    let mode = group_mode(instr)?;
    let text = shown(replica_groups(instr));
    let mut groups = match replica_groups(instr) {
        Some(g) => device_lists(g)?,
        None => Vec::new(),
    };
    let (r, p) = (topo.replicas, topo.partitions);
    if groups.is_empty() {
        if mode == Mode::FlattenedId {
            return Err(err(
                "replica_groups={} with use_global_device_ids=true (XLA rejects it)",
            ));
        }
        if !topo.known {
            return Err(super::unsupported(format!(
                "unsupported op: {} over replica_groups={{}} means every device, and the module names no device count (no replica_count/num_partitions in its header, no device ids)",
                instr.opcode.name()
            )));
        }
        let n = if mode == Mode::CrossPartition { p } else { r };
        groups.push((0..n).collect());
    }
    let (limit, kind) = match mode {
        Mode::CrossReplica | Mode::CrossReplicaAndPartition => (r, "replica"),
        Mode::CrossPartition => (p, "partition"),
        Mode::FlattenedId => (r * p, "device"),
    };
    if let Some(&id) = groups.iter().flatten().find(|&&id| id >= limit) {
        return Err(err(format!(
            "{kind} id {id} in replica_groups={text} is out of range: the module runs {r} replica(s) x {p} partition(s)"
        )));
    }
    let dev = |replica: usize, partition: usize| replica * p + partition;
    let out: Vec<Vec<usize>> = match mode {
        Mode::CrossReplica => groups
            .iter()
            .flat_map(|g| (0..p).map(move |q| g.iter().map(|&x| dev(x, q)).collect()))
            .collect(),
        Mode::CrossPartition => groups
            .iter()
            .flat_map(|g| (0..r).map(move |q| g.iter().map(|&x| dev(q, x)).collect()))
            .collect(),
        Mode::CrossReplicaAndPartition => groups
            .iter()
            .map(|g| {
                g.iter()
                    .flat_map(|&x| (0..p).map(move |q| dev(x, q)))
                    .collect()
            })
            .collect(),
        Mode::FlattenedId => groups,
    };
    let mut seen = vec![false; r * p];
    for &d in out.iter().flatten() {
        if std::mem::replace(&mut seen[d], true) {
            return Err(err(format!(
                "device {d} appears twice in replica_groups={text}"
            )));
        }
    }
    Ok(out)
}

/// collective-permute's (source, target) device pairs: partition ids with
/// a channel_id, replica ids without, repeated for every replica
/// (partition).
fn permute_pairs(instr: &Instruction, topo: &Topology) -> Result<Vec<(usize, usize)>> {
    let text = shown(source_target_pairs(instr));
    let pairs = match source_target_pairs(instr) {
        Some(p) => device_pairs(p)?,
        None => Vec::new(),
    };
    let cross_partition = group_mode(instr)? == Mode::CrossPartition;
    let (r, p) = (topo.replicas, topo.partitions);
    let (limit, kind) = if cross_partition {
        (p, "partition")
    } else {
        (r, "replica")
    };
    if let Some(&(s, t)) = pairs.iter().find(|&&(s, t)| s >= limit || t >= limit) {
        return Err(err(format!(
            "{kind} id {} in source_target_pairs={text} is out of range: the module runs {r} replica(s) x {p} partition(s)",
            s.max(t)
        )));
    }
    let out: Vec<(usize, usize)> = if cross_partition {
        (0..r)
            .flat_map(|q| pairs.iter().map(move |&(s, t)| (q * p + s, q * p + t)))
            .collect()
    } else {
        (0..p)
            .flat_map(|q| pairs.iter().map(move |&(s, t)| (s * p + q, t * p + q)))
            .collect()
    };
    // XLA's verifier: every device sends at most once and receives at
    // most once.
    for (k, &(s, t)) in out.iter().enumerate() {
        if out[..k].iter().any(|&(s2, t2)| s2 == s || t2 == t) {
            return Err(err(format!(
                "source_target_pairs={text} names a source or target twice (pair {s} -> {t})"
            )));
        }
    }
    Ok(out)
}

/// Whether the collective moves data between devices: a group of more
/// than one device, or a permute pair between two devices.
fn crosses_devices(instr: &Instruction, topo: &Topology) -> Result<bool> {
    Ok(match instr.opcode {
        Opcode::CollectivePermute | Opcode::CollectivePermuteStart => {
            permute_pairs(instr, topo)?.iter().any(|&(s, t)| s != t)
        }
        _ => device_groups(instr, topo)?.iter().any(|g| g.len() > 1),
    })
}

/// The devices to evaluate in lockstep: 1 when one device suffices (the
/// module has no collective that moves data between devices), else all
/// of the module's [`topology`]. Errors name the collective.
pub fn lockstep_topology(module: &Module) -> Result<Option<Topology>> {
    let mut topo: Option<Topology> = None;
    for (_, comp) in module.computations() {
        for (_, instr) in comp.instructions() {
            if !is_collective(instr.opcode) {
                continue;
            }
            let t = match topo {
                Some(t) => t,
                None => *topo.insert(topology(module)?),
            };
            if crosses_devices(instr, &t).map_err(|e| e.locate(comp, instr))? && t.devices() > 1 {
                return Ok(Some(t));
            }
        }
    }
    Ok(None)
}

/// The error for a collective that needs devices this evaluation does
/// not run.
fn needs_others(it: &Interpreter, instr: &Instruction, topo: &Topology) -> EvalError {
    let (key, text) = match source_target_pairs(instr) {
        Some(p) => ("source_target_pairs", shown(Some(p))),
        None => ("replica_groups", shown(replica_groups(instr))),
    };
    let why = if it.lockstep {
        "; the lockstep evaluator exchanges data only at collectives of the entry computation, not inside called computations".to_string()
    } else {
        format!(
            " (the module runs on {} devices; --check-numerics and interp::evaluate_devices run them in lockstep)",
            topo.devices()
        )
    };
    super::unsupported(format!(
        "unsupported op: {} over {key}={text} needs other devices' data{why}",
        instr.opcode.name()
    ))
}

/// Evaluates collective `instr` for the devices `members` (ids of
/// `topo`), `ops[k]` being the operands of `members[k]`; returns each
/// one's result. Every device a member meets must be a member too.
pub fn exchange(
    it: &Interpreter,
    topo: &Topology,
    instr: &Instruction,
    members: &[usize],
    ops: &[Vec<&Value>],
) -> Result<Vec<Value>> {
    if ops.len() != members.len() {
        return Err(err(
            "internal error: operands for a different number of devices",
        ));
    }
    let position = |d: usize| members.iter().position(|&m| m == d);
    if matches!(
        instr.opcode,
        Opcode::CollectivePermute | Opcode::CollectivePermuteStart
    ) {
        let pairs = permute_pairs(instr, topo)?;
        return members
            .iter()
            .enumerate()
            .map(|(k, &d)| {
                let received = match pairs.iter().find(|&&(_, t)| t == d) {
                    Some(&(s, _)) => {
                        let j = position(s).ok_or_else(|| needs_others(it, instr, topo))?;
                        Some(&ops[j][..])
                    }
                    None => None,
                };
                permute_result(instr, &ops[k], received)
            })
            .collect();
    }
    let groups = device_groups(instr, topo)?;
    let mut out: Vec<Option<Value>> = vec![None; members.len()];
    for (k, &d) in members.iter().enumerate() {
        if out[k].is_some() {
            continue;
        }
        let group = groups.iter().find(|g| g.contains(&d)).ok_or_else(|| {
            err(format!(
                "device {d} is in none of replica_groups={}",
                shown(replica_groups(instr))
            ))
        })?;
        let idx: Vec<usize> = group
            .iter()
            .map(|&g| position(g).ok_or_else(|| needs_others(it, instr, topo)))
            .collect::<Result<_>>()?;
        let group_ops: Vec<&[&Value]> = idx.iter().map(|&j| &ops[j][..]).collect();
        for (j, v) in idx.into_iter().zip(group_results(it, instr, &group_ops)?) {
            out[j] = Some(v);
        }
    }
    out.into_iter()
        .map(|v| v.ok_or_else(|| err("internal error: a device got no result")))
        .collect()
}

/// One value from a list of results: the array itself for a one-operand
/// op with an array shape, else a tuple.
fn pack(vals: Vec<Value>, shape: &Shape) -> Value {
    if vals.len() == 1 && !shape.is_tuple() {
        vals.into_iter().next().unwrap_or(Value::Token)
    } else {
        Value::Tuple(vals.into())
    }
}

fn arrays<'a>(ops: &[&'a Value]) -> Result<Vec<&'a Arc<Array>>> {
    ops.iter().map(|v| v.as_array()).collect()
}

/// The results of a group's members (in group order), given each
/// member's operands.
fn group_results(it: &Interpreter, instr: &Instruction, ops: &[&[&Value]]) -> Result<Vec<Value>> {
    let n = ops.len();
    let nops = ops.first().map_or(0, |o| o.len());
    if nops == 0 || ops.iter().any(|o| o.len() != nops) {
        return Err(err(format!("{} without operands", instr.opcode.name())));
    }
    let members: Vec<Vec<&Arc<Array>>> = ops.iter().map(|o| arrays(o)).collect::<Result<_>>()?;
    // The k-th operand of every member.
    let column = |k: usize| -> Vec<&Array> { members.iter().map(|m| &**m[k]).collect() };
    let dim = |rank: usize| -> Result<usize> {
        let d = instr
            .dimensions()
            .and_then(|d| d.first().copied())
            .ok_or_else(|| err(format!("{} without dimensions", instr.opcode.name())))?;
        super::attrs::dim_index(d, rank, "collective dimension")
    };
    match instr.opcode {
        Opcode::AllGather | Opcode::AllGatherStart => {
            let gathered: Vec<Value> = (0..nops)
                .map(|k| {
                    let parts = column(k);
                    let d = dim(parts[0].rank())?;
                    Ok(Value::array(shape_ops::concatenate(&parts, d)?))
                })
                .collect::<Result<_>>()?;
            if instr.opcode == Opcode::AllGather {
                let v = pack(gathered, &instr.shape);
                return Ok(vec![v; n]);
            }
            // all-gather-start: (operands, results), each a tuple when
            // there are several.
            let single = nops == 1;
            let gathered = if single {
                gathered[0].clone()
            } else {
                Value::Tuple(gathered.into())
            };
            Ok(ops
                .iter()
                .map(|o| {
                    let own = if single {
                        o[0].clone()
                    } else {
                        Value::Tuple(o.iter().map(|v| (*v).clone()).collect())
                    };
                    Value::Tuple(vec![own, gathered.clone()].into())
                })
                .collect())
        }
        Opcode::AllReduce | Opcode::AllReduceStart => {
            let reduced: Vec<Value> = (0..nops)
                .map(|k| reduce_members(it, instr, &column(k)).map(Value::array))
                .collect::<Result<_>>()?;
            Ok(vec![pack(reduced, &instr.shape); n])
        }
        Opcode::ReduceScatter => {
            let mut per_member: Vec<Vec<Value>> = vec![Vec::with_capacity(nops); n];
            for k in 0..nops {
                let reduced = reduce_members(it, instr, &column(k))?;
                let d = dim(reduced.rank())?;
                for (j, piece) in split(&reduced, d, n)?.into_iter().enumerate() {
                    per_member[j].push(Value::array(piece));
                }
            }
            Ok(per_member
                .into_iter()
                .map(|v| pack(v, &instr.shape))
                .collect())
        }
        Opcode::AllToAll if instr.dimensions().is_some_and(|d| !d.is_empty()) => {
            // Array form: every member splits its operand along the
            // dimension into n blocks and sends block j to member j, which
            // concatenates what it receives in member order.
            if nops != 1 {
                return Err(err(format!(
                    "all-to-all with a split dimension takes 1 operand, has {nops}"
                )));
            }
            let d = dim(members[0][0].rank())?;
            let blocks: Vec<Vec<Array>> = members
                .iter()
                .map(|m| split(m[0], d, n))
                .collect::<Result<_>>()?;
            (0..n)
                .map(|j| {
                    let parts: Vec<&Array> = blocks.iter().map(|b| &b[j]).collect();
                    Ok(Value::array(shape_ops::concatenate(&parts, d)?))
                })
                .collect()
        }
        Opcode::CollectiveBroadcast => {
            // The group's first device sends its operands to every member.
            let root: Vec<Value> = ops[0].iter().map(|v| (*v).clone()).collect();
            Ok(vec![pack(root, &instr.shape); n])
        }
        Opcode::AllToAll => {
            // Tuple form: operand j of every member goes to member j.
            if nops != n {
                return Err(err(format!(
                    "all-to-all of {nops} operands over a group of {n} devices"
                )));
            }
            Ok((0..n)
                .map(|j| Value::Tuple(ops.iter().map(|o| o[j].clone()).collect()))
                .collect())
        }
        op => Err(err(format!(
            "internal error: {} is not a grouped collective",
            op.name()
        ))),
    }
}

/// `a` cut along `dim` into `n` equal blocks.
fn split(a: &Array, dim: usize, n: usize) -> Result<Vec<Array>> {
    let len = a.dims[dim];
    if n == 0 || len % n != 0 {
        return Err(err(format!(
            "dimension {dim} of {} does not split into {n} equal blocks",
            a.shape_text()
        )));
    }
    let b = len / n;
    (0..n)
        .map(|j| {
            let spec: Vec<(i64, i64, i64)> = a
                .dims
                .iter()
                .enumerate()
                .map(|(k, &x)| {
                    if k == dim {
                        ((j * b) as i64, ((j + 1) * b) as i64, 1)
                    } else {
                        (0, x as i64, 1)
                    }
                })
                .collect();
            shape_ops::slice(a, &spec)
        })
        .collect()
}

/// Elementwise reduction of the members' arrays with the op's `to_apply`.
/// Float add and multiply accumulate in f64 and round once, as `reduce`
/// does (so every device gets the same, order-independent result); other
/// single ops fold in group order; any other reducer runs per element.
fn reduce_members(it: &Interpreter, instr: &Instruction, parts: &[&Array]) -> Result<Array> {
    let first = parts[0];
    if let Some(p) = parts
        .iter()
        .find(|p| p.ty != first.ty || p.dims != first.dims)
    {
        return Err(err(format!(
            "devices give {} and {} to one {}",
            first.shape_text(),
            p.shape_text(),
            instr.opcode.name()
        )));
    }
    let comp = instr
        .to_apply()
        .ok_or_else(|| err("missing to_apply computation"))?;
    match it.combiner(comp) {
        Combiner::Bin(op @ (BinOp::Add | BinOp::Mul)) if first.ty.is_float() => {
            let mut acc = first.to_f64_vec();
            for p in &parts[1..] {
                for (a, x) in acc.iter_mut().zip(p.to_f64_vec()) {
                    *a = ew::fbin64(op, *a, x)?;
                }
            }
            let data = super::convert::from_f64_vec(first.ty, &acc)?;
            Array::new(first.ty, first.dims.clone(), data)
        }
        Combiner::Bin(op) => parts[1..]
            .iter()
            .try_fold(first.clone(), |acc, p| ew::binary(op, &acc, p)),
        _ => {
            let mut data = first.data.clone();
            for i in 0..first.len() {
                let mut acc = scalar_at(first, i);
                for p in &parts[1..] {
                    acc = it.call(comp, &[acc, scalar_at(p, i)])?;
                }
                let a = acc.as_array()?;
                if a.ty != first.ty || a.len() != 1 {
                    return Err(err(format!(
                        "the reducer returned {}, {}[] expected",
                        a.shape_text(),
                        first.ty
                    )));
                }
                data.set_from(i, &a.data, 0)?;
            }
            Array::new(first.ty, first.dims.clone(), data)
        }
    }
}

/// A device's collective-permute result: what its source sent, or zeros
/// when no pair targets it (XLA's semantics). The -start form is
/// `(operands, results, context...)`, the context zeros.
fn permute_result(
    instr: &Instruction,
    own: &[&Value],
    received: Option<&[&Value]>,
) -> Result<Value> {
    // The in-place form (operand, output, start indices, slice_sizes=).
    if instr.attr("slice_sizes").is_some() || own.iter().any(|v| matches!(v, Value::Tuple(_))) {
        return Err(super::unsupported(
            "unsupported op: in-place collective-permute (slice_sizes=) is not implemented",
        ));
    }
    let shapes: &[Shape] = match (instr.opcode, &*instr.shape) {
        (Opcode::CollectivePermuteStart, Shape::Tuple(t)) if t.len() >= 2 => t,
        (Opcode::CollectivePermuteStart, _) => {
            return Err(err("collective-permute-start's shape is not a tuple"))
        }
        _ => std::slice::from_ref(&*instr.shape),
    };
    let result_shape = if instr.opcode == Opcode::CollectivePermuteStart {
        &shapes[1]
    } else {
        &shapes[0]
    };
    let result = match received {
        Some(vals) => pack(vals.iter().map(|v| (*v).clone()).collect(), result_shape),
        None => zeros(result_shape)?,
    };
    if instr.opcode == Opcode::CollectivePermute {
        return Ok(result);
    }
    let mine = pack(own.iter().map(|v| (*v).clone()).collect(), &shapes[0]);
    let mut elems = vec![mine, result];
    for s in &shapes[2..] {
        elems.push(zeros(s)?);
    }
    Ok(Value::Tuple(elems.into()))
}

/// A value of `shape` with every element zero.
fn zeros(shape: &Shape) -> Result<Value> {
    match shape {
        Shape::Tuple(t) => Ok(Value::Tuple(
            t.iter().map(zeros).collect::<Result<Vec<_>>>()?.into(),
        )),
        Shape::Token => Ok(Value::Token),
        Shape::Opaque => Err(err("cannot make an opaque value")),
        Shape::Array(a) => {
            let dims = shape_dims(shape)?;
            let n = super::array::element_count(&dims)?;
            Ok(Value::array(Array::new(
                a.element_type,
                dims,
                Data::zeros(a.element_type, n)?,
            )?))
        }
    }
}

/// Evaluates the entry computation of `module` on every device of its
/// [`topology`] in lockstep; `args[d]` are device d's inputs (the device
/// of replica r, partition p is `r * num_partitions + p`). Returns each
/// device's result.
pub fn evaluate_devices(module: &Module, args: &[Vec<Value>]) -> Result<Vec<Value>> {
    evaluate_devices_with(module, args, &EvalOptions::default())
}

/// [`evaluate_devices`] under `options` (limits, a cancel hook).
pub fn evaluate_devices_with(
    module: &Module,
    args: &[Vec<Value>],
    options: &EvalOptions,
) -> Result<Vec<Value>> {
    let topo = topology(module)?;
    let n = topo.devices();
    if args.len() != n {
        return Err(err(format!(
            "the module runs on {n} devices ({} replica(s) x {} partition(s)), inputs for {} given",
            topo.replicas,
            topo.partitions,
            args.len()
        )));
    }
    let interps: Vec<Interpreter> = (0..n)
        .map(|d| Interpreter::for_device(module, topo, d, options.clone()))
        .collect();
    let entry = module
        .entry_opt()
        .ok_or_else(|| err("module has no entry computation"))?;
    for (d, (it, a)) in interps.iter().zip(args).enumerate() {
        it.check_args(a).map_err(|e| on_device(e, d, n))?;
    }
    let plan = interps[0].plan(entry)?;
    let comp = module.comp(entry);
    let all: Vec<usize> = (0..n).collect();
    let mut vals: Vec<Vec<Option<Value>>> = vec![vec![None; plan.slots]; n];
    let mut remaining = plan.uses.clone();
    for &id in &plan.order {
        let instr = comp.instr(id);
        let results = {
            let ops: Vec<Vec<&Value>> = vals
                .iter()
                .map(|dv| {
                    instr
                        .operands()
                        .iter()
                        .map(|o| {
                            dv[o.index()]
                                .as_ref()
                                .ok_or_else(|| err("internal error: operand not evaluated"))
                        })
                        .collect::<Result<Vec<&Value>>>()
                })
                .collect::<Result<_>>()
                .map_err(|e| e.locate(comp, instr))?;
            super::probe_result(comp, instr).map_err(|e| e.locate(comp, instr))?;
            let results: Vec<Value> = if is_collective(instr.opcode) {
                exchange(&interps[0], &topo, instr, &all, &ops)
            } else {
                interps
                    .iter()
                    .zip(&ops)
                    .zip(args)
                    .enumerate()
                    .map(|(d, ((it, o), a))| {
                        it.eval_instr(comp, instr, o, a)
                            .map_err(|e| on_device(e, d, n))
                    })
                    .collect()
            }
            .map_err(|e| e.locate(comp, instr))?;
            let work = ops
                .iter()
                .zip(&results)
                .map(|(o, v)| instruction_work(o, v))
                .fold(0, u64::saturating_add);
            interps[0].tick(work)?;
            results
        };
        for (d, v) in results.into_iter().enumerate() {
            if !v.matches(&instr.shape) {
                let e = err(format!(
                    "the result is {}, the instruction's shape is {}",
                    v.shape_text(),
                    instr.shape.to_text(false)
                ));
                return Err(on_device(e, d, n).locate(comp, instr));
            }
            vals[d][id.index()] = Some(v);
        }
        for &op in instr.operands() {
            let r = &mut remaining[op.index()];
            *r -= 1;
            if *r == 0 && op != plan.root {
                vals.iter_mut().for_each(|dv| dv[op.index()] = None);
            }
        }
    }
    vals.iter_mut()
        .map(|dv| {
            dv[plan.root.index()]
                .take()
                .ok_or_else(|| err("internal error: root not evaluated"))
        })
        .collect()
}

/// Says which device an error happened on, when there are several.
fn on_device(mut e: EvalError, d: usize, n: usize) -> EvalError {
    if n > 1 && !e.message.contains("(device ") {
        e.message = format!("{} (device {d})", e.message);
    }
    e
}

/// Seeded inputs for every device of `topo`: device 0 gets
/// `random_inputs(module, seed)`, each other device its own seed.
///
/// torch-neuronx passes the partition id as a scalar integer parameter
/// named `partition-id.N` (instead of a `partition-id` instruction); a
/// scalar integer entry parameter named `partition-id*` (`replica-id*`)
/// gets the device's partition (replica) id, so the module runs as it
/// does on the devices (a random id would also do for a before/after
/// comparison, but would rarely take the branch of partition 0).
pub fn random_device_inputs(
    module: &Module,
    topo: &Topology,
    seed: u64,
) -> Result<Vec<Vec<Value>>> {
    let entry = module
        .entry_opt()
        .ok_or_else(|| err("module has no entry computation"))?;
    let comp = module.comp(entry);
    (0..topo.devices())
        .map(|d| {
            let mut inputs = super::random::random_inputs(module, device_seed(seed, d))?;
            for (k, &p) in comp.parameters().iter().enumerate() {
                if let (Some(id), Some(slot)) =
                    (device_id_parameter(comp, p, topo, d), inputs.get_mut(k))
                {
                    let instr = comp.instr(p);
                    *slot = Value::array(Array::scalar_f64(instr.shape.element_type(), id as f64)?);
                }
            }
            Ok(inputs)
        })
        .collect()
}

/// The id a torch-neuronx `partition-id.N` / `replica-id.N` parameter
/// stands for on device `d`, if `p` is one.
fn device_id_parameter(
    comp: &Computation,
    p: crate::ir::InstrId,
    topo: &Topology,
    d: usize,
) -> Option<usize> {
    let instr = comp.instr(p);
    let ty = instr.shape.element_type();
    let scalar_int = instr.shape.as_array().is_some_and(|a| a.dims.is_empty())
        && (ty.is_signed_int() || ty.is_unsigned_int())
        && ty != PrimitiveType::Pred;
    if !scalar_int {
        return None;
    }
    if instr.name.starts_with("partition-id") {
        Some(topo.partition_of(d))
    } else if instr.name.starts_with("replica-id") {
        Some(topo.replica_of(d))
    } else {
        None
    }
}

/// Device d's input seed: `seed` for device 0, unrelated streams for the
/// others (the multiplier is odd and far from SplitMix64's increment, so
/// the streams do not overlap in practice).
pub fn device_seed(seed: u64, d: usize) -> u64 {
    seed ^ (d as u64).wrapping_mul(0xD1B5_4A32_D192_ED03)
}
