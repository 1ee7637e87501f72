//! The memory an evaluation needs, known before it starts, and the budget
//! it must fit in.
//!
//! [`estimate`] walks the entry computation in the interpreter's order and
//! keeps the arrays alive at each step (an array lives from the
//! instruction that makes it to its last use; a tuple, `get-tuple-element`,
//! `copy` or a nested computation's parameter shares its operand's arrays
//! rather than making new ones). At each instruction it adds the working
//! space of the op (8 bytes per element of the largest of its result and
//! operands: index maps and f64 copies) and, for an instruction that calls
//! computations, the callee's own peak; a `while` or `scan` holds its
//! carried state besides one iteration's temporaries. Elements count at
//! the interpreter's storage width (every integer is 8 bytes, pred 1).
//!
//! [`Budget::available`] is the default budget: half of the memory the
//! machine has available at the start (`MemAvailable`), or of the address
//! space `ulimit -v` still allows, whichever is smaller (docs/eval.md says
//! why half). [`probe`] is the fallible allocation the interpreter makes
//! before each large result, so that a system that refuses memory gives an
//! error rather than an abort.

use super::array::{storage, Storage};
use super::{ErrorKind, EvalError, Result};
use crate::ir::{CompId, Instruction, Module, Opcode, Shape};
use crate::util::{FxMap, FxSet};

/// How many bytes one element takes in the interpreter.
fn element_bytes(shape: &crate::ir::ArrayShape) -> u64 {
    match storage(shape.element_type) {
        Ok(Storage::Pred | Storage::Mini(_)) => 1,
        Ok(Storage::F16 | Storage::Bf16) => 2,
        Ok(Storage::F32) => 4,
        Ok(Storage::S | Storage::U | Storage::F64 | Storage::C64) => 8,
        Ok(Storage::C128) => 16,
        Err(_) => 0,
    }
}

fn element_count(shape: &crate::ir::ArrayShape) -> u64 {
    u64::try_from(shape.element_count()).unwrap_or(0)
}

/// The bytes of the arrays of `shape` (tuples summed).
pub fn shape_bytes(shape: &Shape) -> u64 {
    match shape {
        Shape::Array(a) => element_count(a).saturating_mul(element_bytes(a)),
        Shape::Tuple(t) => t.iter().map(shape_bytes).fold(0, u64::saturating_add),
        _ => 0,
    }
}

/// The bytes of each array leaf of `shape`, in leaf order.
fn leaf_bytes(shape: &Shape, out: &mut Vec<u64>) {
    match shape {
        Shape::Tuple(t) => t.iter().for_each(|s| leaf_bytes(s, out)),
        s => out.push(shape_bytes(s)),
    }
}

/// The element count of the largest array leaf of `shape`.
fn largest_leaf(shape: &Shape) -> u64 {
    match shape {
        Shape::Array(a) => element_count(a),
        Shape::Tuple(t) => t.iter().map(largest_leaf).max().unwrap_or(0),
        _ => 0,
    }
}

/// One of the largest instructions, for the error message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Big {
    pub computation: String,
    pub instruction: String,
    pub shape: String,
    pub bytes: u64,
}

/// What an evaluation of a module needs.
#[derive(Clone, Debug, Default)]
pub struct Need {
    /// The most bytes of arrays alive at once, inputs and outputs included.
    pub peak: u64,
    /// The entry's parameters (the inputs).
    pub inputs: u64,
    /// The entry's result.
    pub outputs: u64,
    /// The element count of the largest output array.
    pub largest_output: u64,
    /// The largest instructions of the module, largest first.
    pub largest: Vec<Big>,
}

/// How many of the largest instructions an error names.
const NAMED: usize = 3;

/// The memory one evaluation of `module`'s entry computation needs.
pub fn estimate(module: &Module) -> Need {
    let Some(entry) = module.entry_opt() else {
        return Need::default();
    };
    let mut e = Estimator {
        module,
        peaks: FxMap::default(),
        largest: Vec::new(),
    };
    // Callees before callers, so that no walk recurses: calls nest as
    // deep as a module is long, far past what the host's stack holds.
    // Only what the entry reaches runs.
    let order = module.computation_post_order();
    let mut reached: FxSet<CompId> = FxSet::default();
    reached.insert(entry);
    for &cid in order.iter().rev() {
        if reached.contains(&cid) {
            let comp = module.comp(cid);
            for (_, instr) in comp.instructions() {
                reached.extend(instr.called_computations());
            }
        }
    }
    let mut noted = Vec::new();
    for cid in order.into_iter().filter(|c| reached.contains(c)) {
        let p = e.walk(cid, cid == entry);
        e.peaks.insert(cid, p);
        noted.push(std::mem::take(&mut e.largest));
    }
    // Callers' first: of instructions the same size, the one nearer the
    // entry is named.
    for big in noted.into_iter().rev().flatten() {
        keep_largest(&mut e.largest, big.bytes, || big);
    }
    let peak = e.peaks.get(&entry).copied().unwrap_or(0);
    let comp = module.comp(entry);
    let inputs = comp
        .parameters()
        .iter()
        .map(|&p| shape_bytes(&comp.instr(p).shape))
        .fold(0, u64::saturating_add);
    let (outputs, largest_output) = comp.root_opt().map_or((0, 0), |r| {
        let s = &comp.instr(r).shape;
        (shape_bytes(s), largest_leaf(s))
    });
    Need {
        peak,
        inputs,
        outputs,
        largest_output,
        largest: e.largest,
    }
}

struct Estimator<'m> {
    module: &'m Module,
    /// Each computation's peak, once estimated (a callee without one is in
    /// a cycle, which the verifier refuses, and counts nothing).
    peaks: FxMap<CompId, u64>,
    /// The largest instructions of the computation being walked.
    largest: Vec<Big>,
}

/// `largest` keeps the [`NAMED`] largest, the first of equal sizes; `big`
/// is made only if kept.
fn keep_largest(largest: &mut Vec<Big>, bytes: u64, big: impl FnOnce() -> Big) {
    let at = largest.partition_point(|b| b.bytes >= bytes);
    if at < NAMED {
        largest.insert(at, big());
        largest.truncate(NAMED);
    }
}

/// How an instruction's value holds arrays: one entry per array leaf, the
/// buffer it shares, or `None` for what the caller holds.
type Leaves = Vec<Option<usize>>;

impl Estimator<'_> {
    fn note(&mut self, comp: &str, instr: &Instruction, bytes: u64) {
        if bytes == 0 {
            return;
        }
        keep_largest(&mut self.largest, bytes, || Big {
            computation: comp.to_string(),
            instruction: instr.name.to_string(),
            shape: instr.shape.to_text(false),
            bytes,
        });
    }

    /// The peak of computation `cid`, its callees' known; the entry's
    /// parameters are its inputs, a nested computation's are its caller's
    /// arrays.
    fn walk(&mut self, cid: CompId, is_entry: bool) -> u64 {
        let module = self.module;
        let Some(comp) = module.get_comp(cid) else {
            return 0;
        };
        let Some(root) = comp.root_opt() else {
            return 0;
        };
        // What the root depends on, in the interpreter's order.
        let super::Plan {
            order,
            mut uses,
            slots,
            ..
        } = super::Plan::of(comp, root);
        // Buffers: their bytes and how many live values share each.
        let mut buffer_bytes: Vec<u64> = Vec::new();
        let mut sharers: Vec<u32> = Vec::new();
        let mut values: Vec<Leaves> = vec![Vec::new(); slots];
        let (mut live, mut peak) = (0u64, 0u64);
        for &id in &order {
            let instr = comp.instr(id);
            let leaves = shared_leaves(comp, instr, &values, is_entry);
            let made = leaves.is_none();
            let leaves = leaves.unwrap_or_else(|| {
                let mut sizes = Vec::new();
                leaf_bytes(&instr.shape, &mut sizes);
                sizes
                    .into_iter()
                    .map(|b| {
                        buffer_bytes.push(b);
                        sharers.push(0);
                        Some(buffer_bytes.len() - 1)
                    })
                    .collect()
            });
            let mut bytes = 0u64;
            for b in leaves.iter().flatten() {
                if sharers[*b] == 0 {
                    bytes = bytes.saturating_add(buffer_bytes[*b]);
                }
                sharers[*b] += 1;
            }
            if made {
                self.note(&comp.name, instr, bytes);
            }
            let callee = instr
                .called_computations()
                .map(|c| self.peaks.get(&c).copied().unwrap_or(0))
                .max()
                .unwrap_or(0);
            let at = match instr.opcode {
                // The carried state, and one iteration's temporaries
                // (which hold the next state).
                Opcode::While | Opcode::Scan => live.saturating_add(bytes).saturating_add(callee),
                // The callee's root becomes the result.
                Opcode::Call | Opcode::Fusion | Opcode::Conditional | Opcode::AsyncStart => {
                    live.saturating_add(bytes.max(callee))
                }
                _ if made => live
                    .saturating_add(bytes)
                    .saturating_add(working_space(comp, instr).max(callee)),
                _ => live.saturating_add(bytes),
            };
            peak = peak.max(at);
            live = live.saturating_add(bytes);
            values[id.index()] = leaves;
            for &op in instr.operands() {
                let u = &mut uses[op.index()];
                *u -= 1;
                if *u == 0 && op != root {
                    for b in std::mem::take(&mut values[op.index()])
                        .into_iter()
                        .flatten()
                    {
                        sharers[b] -= 1;
                        if sharers[b] == 0 {
                            live = live.saturating_sub(buffer_bytes[b]);
                        }
                    }
                }
            }
        }
        peak.max(live)
    }
}

/// The arrays an instruction shares with its operands rather than making
/// (`None`: it makes new ones).
fn shared_leaves(
    comp: &crate::ir::Computation,
    instr: &Instruction,
    values: &[Leaves],
    is_entry: bool,
) -> Option<Leaves> {
    let operand = |i: usize| -> Option<&Leaves> {
        let id = *instr.operands().get(i)?;
        values.get(id.index())
    };
    let leaves = match instr.opcode {
        Opcode::Parameter if !is_entry => vec![None; instr.shape.leaf_count()],
        Opcode::Tuple => {
            let mut all = Vec::new();
            for i in 0..instr.operands().len() {
                all.extend_from_slice(operand(i)?);
            }
            all
        }
        Opcode::Copy
        | Opcode::OptimizationBarrier
        | Opcode::Domain
        | Opcode::AddDependency
        | Opcode::AsyncUpdate => operand(0)?.clone(),
        Opcode::GetTupleElement => {
            element_leaves(comp, instr, operand(0)?, instr.int_attr("index")?)?
        }
        Opcode::AsyncDone => element_leaves(comp, instr, operand(0)?, 1)?,
        Opcode::CopyDone => element_leaves(comp, instr, operand(0)?, 0)?,
        _ => return None,
    };
    // A shape the leaves do not fit (a malformed module): counted as new.
    (leaves.len() == instr.shape.leaf_count()).then_some(leaves)
}

/// The leaves of element `index` of an instruction's tuple operand.
fn element_leaves(
    comp: &crate::ir::Computation,
    instr: &Instruction,
    tuple: &Leaves,
    index: i64,
) -> Option<Leaves> {
    let elements = comp
        .instr(*instr.operands().first()?)
        .shape
        .tuple_elements()?;
    let index = usize::try_from(index).ok()?;
    let start: usize = elements.get(..index)?.iter().map(Shape::leaf_count).sum();
    let n = elements.get(index)?.leaf_count();
    tuple.get(start..start + n).map(<[_]>::to_vec)
}

/// The op's own working space beside its result: 8 bytes per element of
/// the largest of its result and operands (an index map, an f64 copy).
fn working_space(comp: &crate::ir::Computation, instr: &Instruction) -> u64 {
    if matches!(instr.opcode, Opcode::Parameter | Opcode::Constant) {
        return 0;
    }
    let widest = instr
        .operands()
        .iter()
        .map(|&o| largest_leaf(&comp.instr(o).shape))
        .chain(std::iter::once(largest_leaf(&instr.shape)))
        .max()
        .unwrap_or(0);
    widest.saturating_mul(8)
}

/// An error naming the first entry parameter past the interpreter's
/// per-array limit: that refusal, more precise than the budget's, comes
/// first, as it would when the inputs are made.
pub fn check_parameter_sizes(module: &Module) -> Result<()> {
    let Some(entry) = module.entry_opt() else {
        return Ok(());
    };
    let comp = module.comp(entry);
    for p in comp.parameters() {
        let instr = comp.instr(p);
        let mut arrays = vec![&*instr.shape];
        while let Some(s) = arrays.pop() {
            match s {
                Shape::Tuple(t) => arrays.extend(t),
                Shape::Array(_) => {
                    let checked =
                        super::array::shape_dims(s).and_then(|d| super::array::element_count(&d));
                    if let Err(e) = checked {
                        let n = instr.parameter_number().unwrap_or_default();
                        let mut e = e.locate(comp, instr);
                        e.message = format!("parameter {n}: {}", e.message);
                        return Err(e);
                    }
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// The memory an evaluation may use.
#[derive(Clone, Debug)]
pub struct Budget {
    pub bytes: u64,
    /// Where the number comes from, for the error message.
    pub origin: String,
}

/// The share of the available memory the default budget takes.
pub const DEFAULT_SHARE: u64 = 2;

impl Budget {
    /// A budget given by the user; `setter` names how (`--memory-limit`).
    pub fn given(bytes: u64, setter: &str) -> Budget {
        Budget {
            bytes,
            origin: format!("set by {setter}"),
        }
    }

    /// No budget (library callers that bound memory themselves).
    pub fn unlimited() -> Budget {
        Budget {
            bytes: u64::MAX,
            origin: "unlimited".into(),
        }
    }

    /// Half of what is available now: `MemAvailable`, or the address
    /// space `ulimit -v` leaves this process, the smaller. `setter` names
    /// what sets another budget.
    pub fn available(setter: &str) -> Budget {
        let memory = mem_available();
        let address_space = address_space_left();
        let (bytes, what) = match (memory, address_space) {
            (Some(m), Some(a)) if a < m => (a, "address space ulimit -v leaves"),
            (Some(m), _) => (m, "memory available at the start"),
            (None, Some(a)) => (a, "address space ulimit -v leaves"),
            (None, None) => {
                return Budget {
                    bytes: u64::MAX,
                    origin: format!("no limit known; {setter} sets one"),
                }
            }
        };
        Budget {
            bytes: bytes / DEFAULT_SHARE,
            origin: format!(
                "half of the {} of {what}; {setter} sets another",
                size_text(bytes)
            ),
        }
    }

    /// An error unless `need` bytes (of which `need` from `estimate`) fit.
    pub fn check(&self, what: &str, total: u64, need: &Need) -> Result<()> {
        if total <= self.bytes {
            return Ok(());
        }
        let largest: Vec<String> = need
            .largest
            .iter()
            .map(|b| {
                format!(
                    "{} {} ({}, in {})",
                    b.instruction,
                    b.shape,
                    size_text(b.bytes),
                    b.computation
                )
            })
            .collect();
        Err(EvalError {
            kind: ErrorKind::Memory,
            ..super::err(format!(
                "{what} needs about {} of memory at once, more than the budget of {} ({}); \
                 the largest instructions: {}",
                size_text(total),
                size_text(self.bytes),
                self.origin,
                if largest.is_empty() {
                    "none".to_string()
                } else {
                    largest.join(", ")
                }
            ))
        })
    }
}

/// `MemAvailable` of /proc/meminfo, in bytes.
fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// What `ulimit -v` (RLIMIT_AS) still allows this process to map: the
/// limit less what is mapped now (`VmSize`). `None` without a limit.
fn address_space_left() -> Option<u64> {
    let limit = address_space_limit()?;
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let mapped = status
        .lines()
        .find(|l| l.starts_with("VmSize:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |kib| kib.saturating_mul(1024));
    Some(limit.saturating_sub(mapped))
}

#[cfg(unix)]
fn address_space_limit() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct we pass, which lives for
    // the call.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } == 0;
    // rlim_t is u64 on Linux, not on every unix.
    #[allow(clippy::unnecessary_cast)]
    let limit = r.rlim_cur as u64;
    (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(limit)
}

#[cfg(not(unix))]
fn address_space_limit() -> Option<u64> {
    None
}

/// Results at least this large are probed before they are computed.
pub const PROBE_ABOVE: u64 = 16 << 20;

/// Asks the allocator for `bytes` and gives them back: an error, not an
/// abort, when the system refuses (`ulimit -v`, no memory left), before
/// an op would allocate that much.
pub fn probe(bytes: u64, what: &str) -> Result<()> {
    if bytes < PROBE_ABOVE {
        return Ok(());
    }
    let mut v: Vec<u8> = Vec::new();
    usize::try_from(bytes)
        .ok()
        .and_then(|n| v.try_reserve_exact(n).ok())
        .ok_or_else(|| EvalError {
            kind: ErrorKind::Memory,
            ..super::err(format!(
                "cannot allocate {} for {what}: the system refused the memory \
                 (ulimit -v, or none left)",
                size_text(bytes)
            ))
        })
}

/// A vector of `n` elements, allocated fallibly.
pub fn try_vec<T: Clone>(n: usize, fill: T) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| EvalError {
        kind: ErrorKind::Memory,
        ..super::err(format!(
            "cannot allocate an array of {n} elements: the system refused the memory \
             (ulimit -v, or none left)"
        ))
    })?;
    v.resize(n, fill);
    Ok(v)
}

/// Parses a size: plain bytes, or a number with `K`, `M`, `G`, `T` (powers
/// of 1024; `KiB`, `MiB`, ... the same, `KB`, `MB`, ... powers of 1000).
pub fn parse_size(text: &str) -> std::result::Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let bad = || {
        format!(
            "bad size {text:?}: give bytes, or a number with K, M, G or T (e.g. 512M, 4G, 4GiB)"
        )
    };
    let value: f64 = number.parse().map_err(|_| bad())?;
    let scale: u64 = match unit.trim() {
        "" | "B" => 1,
        "K" | "k" | "KiB" => 1 << 10,
        "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        "T" | "TiB" => 1 << 40,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        _ => return Err(bad()),
    };
    let bytes = value * scale as f64;
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        return Err(bad());
    }
    Ok(bytes as u64)
}

/// `1.5 GiB`, `512.0 MiB`, `100 bytes`.
pub fn size_text(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::parser::parse_module;

    fn need(text: &str) -> Need {
        estimate(&parse_module(text, "t.hlo").unwrap())
    }

    const MIB: u64 = 1 << 20;

    /// The instructions named are those that run: a computation nothing
    /// calls (here the largest) is not; of equal sizes, the caller's come
    /// first (the callee's `n` is as large as the three named).
    #[test]
    fn the_largest_named_run_and_callers_come_first() {
        let n = need(
            "HloModule m
             dead {
  d = f32[1048576] parameter(0)
  ROOT e = f32[1048576] negate(d)
}
             c {
  q = f32[1024] parameter(0)
  ROOT n = f32[1024] negate(q)
}
             ENTRY main {
  x = f32[1024] parameter(0)
               r = f32[1024] call(x), to_apply=c
  ROOT s = f32[1024] negate(r)
}
",
        );
        let named: Vec<&str> = n.largest.iter().map(|b| b.instruction.as_str()).collect();
        assert_eq!(named, ["x", "r", "s"]);
        assert!(n.largest.iter().all(|b| b.computation != "dead"));
    }

    #[test]
    fn a_chain_holds_two_arrays_at_a_time_and_the_working_space() {
        // f32[262144] is 1 MiB; each negate holds its operand, its result
        // and 8 bytes per element of working space (2 MiB).
        let n = need(
            "HloModule m\nENTRY e {\n  p = f32[262144] parameter(0)\n  a = f32[262144] negate(p)\n  \
             b = f32[262144] negate(a)\n  ROOT c = f32[262144] negate(b)\n}\n",
        );
        assert_eq!(n.peak, 4 * MIB);
        assert_eq!(n.inputs, MIB);
        assert_eq!(n.outputs, MIB);
        assert_eq!(n.largest_output, 262144);
        assert_eq!(n.largest.len(), 3);
        assert_eq!(n.largest[0].shape, "f32[262144]");
    }

    #[test]
    fn a_tuple_shares_its_operands_arrays() {
        // Three 1 MiB arrays alive at once, then a tuple of them: not 6 MiB.
        let n = need(
            "HloModule m\nENTRY e {\n  c = f32[] constant(1)\n  \
             a = f32[262144] broadcast(c), dimensions={}\n  \
             b = f32[262144] broadcast(c), dimensions={}\n  \
             d = f32[262144] broadcast(c), dimensions={}\n  \
             t = (f32[262144], f32[262144], f32[262144]) tuple(a, b, d)\n  \
             ROOT g = f32[262144] get-tuple-element(t), index=1\n}\n",
        );
        // At d: a and b live, d and its working space (2 MiB).
        assert_eq!(n.peak, 3 * MIB + 2 * MIB + 4);
    }

    #[test]
    fn an_array_lives_until_its_last_use() {
        // a is used by the root, so it stays alive beside b and c.
        let n = need(
            "HloModule m\nENTRY e {\n  p = f32[262144] parameter(0)\n  a = f32[262144] negate(p)\n  \
             b = f32[262144] negate(p)\n  c = f32[262144] negate(b)\n  \
             ROOT r = f32[262144] add(a, c)\n}\n",
        );
        // At b: p and a live, b and 2 MiB of working space; at c: a and
        // b (p is gone after b), c and 2 MiB. Without a's liveness: 4 MiB.
        assert_eq!(n.peak, 5 * MIB);
    }

    #[test]
    fn a_while_holds_its_state_and_one_iterations_temporaries() {
        let n = need(
            "HloModule m\n\
             cond {\n  s = f32[262144] parameter(0)\n  ROOT t = pred[] constant(false)\n}\n\
             body {\n  s = f32[262144] parameter(0)\n  a = f32[262144] negate(s)\n  \
             ROOT b = f32[262144] negate(a)\n}\n\
             ENTRY e {\n  p = f32[262144] parameter(0)\n  \
             ROOT w = f32[262144] while(p), condition=cond, body=body\n}\n",
        );
        // The body: a, then b beside a with its working space (4 MiB).
        // The while: p, its state, and the body's peak.
        assert_eq!(n.peak, MIB + MIB + 4 * MIB);
    }

    #[test]
    fn a_call_adds_its_callees_peak() {
        let n = need(
            "HloModule m\n\
             f {\n  s = f32[262144] parameter(0)\n  a = f32[262144] negate(s)\n  \
             ROOT b = f32[262144] negate(a)\n}\n\
             ENTRY e {\n  p = f32[262144] parameter(0)\n  \
             ROOT c = f32[262144] call(p), to_apply=f\n}\n",
        );
        assert_eq!(n.peak, MIB + 4 * MIB);
    }

    #[test]
    fn integers_count_at_the_interpreters_eight_bytes() {
        let n = need("HloModule m\nENTRY e {\n  ROOT p = s8[1024] parameter(0)\n}\n");
        assert_eq!(n.inputs, 8192);
    }

    #[test]
    fn the_budget_error_names_the_budget_the_need_and_the_largest() {
        let n = need(
            "HloModule m\nENTRY e {\n  p = f32[262144] parameter(0)\n  \
             ROOT a = f64[262144] convert(p)\n}\n",
        );
        let e = Budget::given(MIB, "--memory-limit")
            .check("the evaluation", n.peak, &n)
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Memory);
        let m = e.message;
        assert!(m.contains("needs about 5.0 MiB"), "{m}");
        assert!(
            m.contains("budget of 1.0 MiB (set by --memory-limit)"),
            "{m}"
        );
        assert!(
            m.contains("largest instructions: a f64[262144] (2.0 MiB, in e), p f32[262144]"),
            "{m}"
        );
        assert!(Budget::given(n.peak, "x").check("e", n.peak, &n).is_ok());
    }

    #[test]
    fn sizes_parse_in_binary_and_decimal_units() {
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("4GiB"), Ok(4 << 30));
        assert_eq!(parse_size("4GB"), Ok(4_000_000_000));
        assert_eq!(parse_size("1.5K"), Ok(1536));
        assert_eq!(parse_size("12345"), Ok(12345));
        for bad in ["", "G", "4X", "-1", "4 G G", "1e30T"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        assert_eq!(size_text(100), "100 bytes");
        assert_eq!(size_text(3 << 29), "1.5 GiB");
    }

    #[test]
    fn the_default_budget_is_half_of_what_is_available() {
        let b = Budget::available("--memory-limit");
        if let Some(m) = mem_available() {
            assert!(b.bytes <= m / 2, "{b:?}");
            assert!(b.origin.starts_with("half of the"), "{b:?}");
        }
    }

    #[test]
    fn a_probe_the_system_cannot_meet_is_an_error() {
        assert!(probe(1 << 20, "x").is_ok());
        let e = probe(u64::MAX / 2, "the result f32[1]").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Memory);
        assert!(e.message.contains("cannot allocate"), "{}", e.message);
    }
}
