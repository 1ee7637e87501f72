//! A reference interpreter for HLO modules.
//!
//! [`evaluate`] runs the entry computation on input values and returns its
//! result. Every op it knows has XLA's semantics per element type; an op
//! it does not know, an unknown custom-call target, an elided constant, or
//! operands whose shapes do not fit are errors naming the instruction,
//! never a guess. The Neuron custom calls have the meanings of
//! CONTRACT.md section 13, computed in f64 and rounded once.
//!
//! Numerics, where HLO leaves a choice: f32 elementwise ops run in f32;
//! f16, bf16 and the 8-bit floats run in f32 and round back after each op;
//! add- and multiply-reductions of floats accumulate in f64 and round once
//! (more accurate than XLA:CPU's f32 tree, and independent of order);
//! f32 dots use an f32 GEMM, other float dots an f64 one.
//!
//! - [`array`]: arrays and values; [`convert`]: element conversions;
//! - [`npy`]: `.npy`/`.npz` input and output;
//! - [`check`]: output comparison and the per-pass numeric check;
//! - [`rng_bits`]: `rng-bit-generator` with XLA's three_fry and philox bits;
//! - [`collective`]: collectives, and [`evaluate_devices`], which runs
//!   every device of a multi-device module in lockstep;
//! - [`cli`]: the `hlo-opt eval` command.

pub mod array;
pub mod attrs;
pub mod batchnorm;
pub mod budget;
pub mod cancel;
pub mod capture;
mod chain;
pub mod collective;
pub mod compare;
pub mod complex;
pub mod control;
pub mod convert;
pub mod convolution;
pub mod custom;
pub mod dot;
pub mod elementwise;
pub mod fft;
pub mod intbin;
pub mod linalg;
pub mod local;
mod narrow;
pub mod npy;
pub mod par;
pub mod random;
pub mod reduce;
pub mod region;
mod reuse;
pub mod rng_bits;
pub mod scalar_prog;
pub mod select_scatter;
pub mod shape_ops;
pub mod sort;
mod splat;

use crate::ir::literal::Literal;
use crate::ir::{CompId, Computation, InstrId, Instruction, Module, Opcode};
use crate::util::FxMap;
pub use array::{Array, Data, Value};
pub use cancel::Cancel;
pub use collective::{evaluate_devices, evaluate_devices_with, Topology};
use std::cell::{OnceCell, RefCell};
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;

/// Why an evaluation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The module or its inputs are wrong (shapes that do not fit, a bad
    /// attribute, ...), or the interpreter has a bug.
    Invalid,
    /// The interpreter does not evaluate this (an op or form it lacks, an
    /// unknown custom-call target, an elided constant, a dynamic shape, a
    /// collective that needs other devices): a fact about the interpreter,
    /// not about the module.
    Unsupported,
    /// A size limit: an array past [`array::MAX_ELEMENTS`], a `while` past
    /// its iteration limit.
    Limit,
    /// Stopped from outside ([`EvalOptions::cancel`]): says nothing about
    /// the module.
    Cancelled,
    /// The evaluation needs more memory than its budget
    /// ([`budget::Budget`]), or the system refused an allocation. Not a
    /// reason to try smaller pieces instead: the run stops.
    Memory,
}

/// An evaluation failure: what went wrong, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalError {
    pub kind: ErrorKind,
    pub message: String,
    pub computation: Option<String>,
    pub instruction: Option<String>,
    /// The call/while/fusion/... instructions that led here, innermost first.
    pub callers: Vec<String>,
}

pub type Result<T> = std::result::Result<T, EvalError>;

impl From<std::io::Error> for EvalError {
    fn from(e: std::io::Error) -> Self {
        err(e.to_string())
    }
}

/// An error with no location yet; the evaluator adds the instruction.
pub fn err(message: impl Into<String>) -> EvalError {
    EvalError {
        kind: ErrorKind::Invalid,
        message: message.into(),
        computation: None,
        instruction: None,
        callers: Vec::new(),
    }
}

/// Something the interpreter does not evaluate ([`ErrorKind::Unsupported`]).
pub fn unsupported(message: impl Into<String>) -> EvalError {
    EvalError {
        kind: ErrorKind::Unsupported,
        ..err(message)
    }
}

/// A size limit was hit ([`ErrorKind::Limit`]).
pub fn limit(message: impl Into<String>) -> EvalError {
    EvalError {
        kind: ErrorKind::Limit,
        ..err(message)
    }
}

/// The evaluation was stopped by its [`EvalOptions::cancel`] hook.
pub fn cancelled() -> EvalError {
    EvalError {
        kind: ErrorKind::Cancelled,
        ..err("evaluation interrupted")
    }
}

impl EvalError {
    pub(crate) fn locate(mut self, comp: &Computation, instr: &Instruction) -> EvalError {
        if self.instruction.is_none() {
            self.instruction = Some(instr.name.to_string());
            self.computation = Some(comp.name.to_string());
        } else {
            self.callers.push(instr.name.to_string());
        }
        self
    }
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let (Some(c), Some(i)) = (&self.computation, &self.instruction) {
            write!(f, "in computation {c}, instruction {i}: ")?;
        }
        f.write_str(&self.message)?;
        // A deep chain is named by its innermost and outermost callers.
        const SHOWN: usize = 6;
        match self.callers.len() {
            0 => {}
            n if n <= 2 * SHOWN => write!(f, " (called from {})", self.callers.join(" <- "))?,
            n => write!(
                f,
                " (called from {} <- ... {} more ... <- {})",
                self.callers[..SHOWN].join(" <- "),
                n - 2 * SHOWN,
                self.callers[n - SHOWN..].join(" <- ")
            )?,
        }
        Ok(())
    }
}

impl std::error::Error for EvalError {}

/// Limits that keep a bad module from running forever, and a way to stop
/// a long one.
#[derive(Clone, Debug)]
pub struct EvalOptions {
    /// A `while` that runs more iterations than this is an error.
    pub max_while_iterations: u64,
    /// Computations nested deeper than this (a call in a while body in a
    /// call ...) are an error naming the instruction: each level of
    /// nesting is a level of the host's stack, and this bound keeps it
    /// within a 2 MiB thread stack (what tests and threads get).
    pub max_call_depth: usize,
    /// Asked now and then whether to stop ([`cancel`]'s rate); `None`:
    /// the evaluation runs to its end.
    pub cancel: Option<Cancel>,
}

/// The default [`EvalOptions::max_call_depth`].
pub const MAX_CALL_DEPTH: usize = 200;

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions {
            max_while_iterations: 10_000_000,
            max_call_depth: MAX_CALL_DEPTH,
            cancel: None,
        }
    }
}

/// What a computation needs evaluated, in order, and how often each value
/// is used (so it can be dropped after its last use).
pub(crate) struct Plan {
    pub(crate) order: Vec<InstrId>,
    /// Per instruction slot: how many instructions of `order` use it.
    pub(crate) uses: Vec<u32>,
    pub(crate) slots: usize,
    /// Per instruction slot: a broadcast of a scalar whose users read the
    /// scalar ([`splat`]); its slot holds the scalar.
    splat: Vec<bool>,
    /// Chains of unsigned elementwise ops evaluated together ([`chain`]).
    chains: chain::Chains,
    root: InstrId,
}

impl Plan {
    /// What `root` depends on, in post order, with each value's use
    /// count: the order the interpreter evaluates `comp` in (and the
    /// memory estimate walks).
    pub(crate) fn of(comp: &Computation, root: InstrId) -> Plan {
        let slots = comp.sequence().map(|i| i.index() + 1).max().unwrap_or(0);
        let mut live = vec![false; slots];
        let mut stack = vec![root];
        while let Some(id) = stack.pop() {
            if live[id.index()] {
                continue;
            }
            live[id.index()] = true;
            stack.extend(comp.instr(id).operands().iter().copied());
        }
        let order: Vec<InstrId> = comp
            .post_order()
            .into_iter()
            .filter(|i| live[i.index()])
            .collect();
        let mut uses = vec![0u32; slots];
        for &id in &order {
            for &op in comp.instr(id).operands() {
                uses[op.index()] += 1;
            }
        }
        let splat = splat::splats(comp, &order, root, slots);
        let chains = chain::find(comp, &order, root, &splat, slots);
        Plan {
            order,
            uses,
            slots,
            splat,
            chains,
            root,
        }
    }
}

/// The interpreter for one module, on one device.
pub struct Interpreter<'m> {
    pub module: &'m Module,
    pub options: EvalOptions,
    plans: RefCell<FxMap<CompId, Rc<Plan>>>,
    combiners: RefCell<FxMap<CompId, Combiner>>,
    /// Reducers and comparators compiled to [`scalar_prog::Prog`] (None:
    /// not of that form).
    progs: RefCell<FxMap<CompId, Option<Rc<scalar_prog::Prog>>>>,
    /// The device this interpreter runs (its flattened id), which
    /// `partition-id`, `replica-id` and the collectives see.
    device: usize,
    /// The module's devices, read from it when a collective first needs
    /// them.
    topology: OnceCell<Topology>,
    /// Part of a lockstep evaluation, where only the collectives of nested
    /// computations reach this interpreter (for their error message).
    lockstep: bool,
    /// How many computations are being evaluated, one inside another.
    depth: std::cell::Cell<usize>,
    /// Work done since the cancel hook was last asked ([`cancel`]).
    work_since_poll: std::cell::Cell<u64>,
    /// Values to keep while evaluating (`--check-numerics`' region inputs).
    capture: Option<Rc<capture::Capture>>,
}

/// What a reducer/scatter/sort computation does, when it is one op.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Combiner {
    /// `op(p0, p1)` on two scalars.
    Bin(elementwise::BinOp),
    /// Returns parameter 1 (scatter's overwrite).
    TakeUpdate,
    /// `compare(p0, p1)` (sort comparators).
    Compare(
        crate::ir::ComparisonDirection,
        Option<crate::ir::ComparisonType>,
    ),
    /// Anything else: run the computation.
    General,
}

/// Does ahead what the first evaluation in a process would otherwise pay
/// for inside it: starts the loop pool's threads, and has the GEMM read
/// the CPU's cache sizes (some hundred small files under
/// /sys/devices/system/cpu, 0.3 ms: more than a small product takes).
/// A driver runs it on a thread of its own while it reads the module and
/// the inputs ([`warm_up_in_background`]).
pub fn warm_up() {
    par::start_pool();
    let _ = gemm_common::cache::CACHE_INFO[0].cache_bytes;
}

/// [`warm_up`] on a thread of its own (nothing, if no thread can be
/// started: the first evaluation then does it).
pub fn warm_up_in_background() {
    let _ = std::thread::Builder::new()
        .name("hlo-opt-warm-up".into())
        .spawn(warm_up);
}

/// Evaluates the entry computation of `module` on `args`.
pub fn evaluate(module: &Module, args: &[Value]) -> Result<Value> {
    Interpreter::new(module).run(args)
}

/// [`evaluate`] under `options` (limits, a cancel hook).
pub fn evaluate_with(module: &Module, args: &[Value], options: &EvalOptions) -> Result<Value> {
    Interpreter::with_options(module, options.clone()).run(args)
}

/// [`evaluate`] on literals.
pub fn evaluate_literals(module: &Module, args: &[Literal]) -> Result<Literal> {
    let vals = args
        .iter()
        .map(Value::from_literal)
        .collect::<Result<Vec<_>>>()?;
    Ok(evaluate(module, &vals)?.to_literal())
}

/// The outputs as the refs files list them: the root tuple's leaves in
/// order, or the single array.
pub fn flat_outputs(v: &Value) -> Vec<Arc<Array>> {
    v.leaves()
}

impl<'m> Interpreter<'m> {
    pub fn new(module: &'m Module) -> Interpreter<'m> {
        Interpreter {
            module,
            options: EvalOptions::default(),
            plans: RefCell::new(FxMap::default()),
            combiners: RefCell::new(FxMap::default()),
            progs: RefCell::new(FxMap::default()),
            device: 0,
            topology: OnceCell::new(),
            lockstep: false,
            depth: std::cell::Cell::new(0),
            work_since_poll: std::cell::Cell::new(0),
            capture: None,
        }
    }

    /// Keeps the values `capture` asks for while evaluating.
    pub fn with_capture(mut self, capture: Rc<capture::Capture>) -> Interpreter<'m> {
        self.capture = Some(capture);
        self
    }

    pub fn with_options(module: &'m Module, options: EvalOptions) -> Interpreter<'m> {
        Interpreter {
            options,
            ..Interpreter::new(module)
        }
    }

    /// Counts `work` ([`cancel::POLL_WORK`]'s unit) and, once enough was
    /// done since the last time, asks the cancel hook whether to stop.
    pub(crate) fn tick(&self, work: u64) -> Result<()> {
        let Some(cancel) = &self.options.cancel else {
            return Ok(());
        };
        let done = self.work_since_poll.get().saturating_add(work);
        if done < cancel::POLL_WORK {
            self.work_since_poll.set(done);
            return Ok(());
        }
        self.work_since_poll.set(0);
        if cancel.requested() {
            return Err(cancelled());
        }
        Ok(())
    }

    /// Asks the cancel hook now (once per `while` iteration: an iteration
    /// may be one heavy op).
    pub(crate) fn poll_cancel(&self) -> Result<()> {
        self.tick(cancel::POLL_WORK)
    }

    /// The interpreter of device `device` of `topology`, in a lockstep
    /// evaluation ([`evaluate_devices`]).
    pub fn for_device(
        module: &'m Module,
        topology: Topology,
        device: usize,
        options: EvalOptions,
    ) -> Interpreter<'m> {
        Interpreter {
            device,
            lockstep: true,
            topology: OnceCell::from(topology),
            ..Interpreter::with_options(module, options)
        }
    }

    fn topology(&self) -> Result<Topology> {
        if let Some(t) = self.topology.get() {
            return Ok(*t);
        }
        let t = collective::topology(self.module)?;
        Ok(*self.topology.get_or_init(|| t))
    }

    /// Runs the entry computation, checking the arguments against its
    /// parameters.
    pub fn run(&self, args: &[Value]) -> Result<Value> {
        let entry = self.check_args(args)?;
        self.call(entry, args)
    }

    /// The entry computation, after checking `args` against its parameters.
    fn check_args(&self, args: &[Value]) -> Result<CompId> {
        let entry = self
            .module
            .entry_opt()
            .ok_or_else(|| err("module has no entry computation"))?;
        let comp = self.module.comp(entry);
        let params = comp.parameters();
        if params.len() != args.len() {
            return Err(err(format!(
                "the entry computation {} takes {} parameters, {} inputs given",
                comp.name,
                params.len(),
                args.len()
            )));
        }
        for (k, (&p, a)) in params.iter().zip(args).enumerate() {
            let instr = comp.instr(p);
            if !a.matches(&instr.shape) {
                return Err(err(format!(
                    "input {k} is {}, parameter {} is {}",
                    a.shape_text(),
                    instr.name,
                    instr.shape.to_text(false)
                )));
            }
        }
        Ok(entry)
    }

    fn plan(&self, cid: CompId) -> Result<Rc<Plan>> {
        if let Some(p) = self.plans.borrow().get(&cid) {
            return Ok(p.clone());
        }
        let comp = self
            .module
            .get_comp(cid)
            .ok_or_else(|| err("called computation does not exist"))?;
        let root = comp
            .root_opt()
            .ok_or_else(|| err(format!("computation {} has no root", comp.name)))?;
        let plan = Rc::new(Plan::of(comp, root));
        self.plans.borrow_mut().insert(cid, plan.clone());
        Ok(plan)
    }

    /// Evaluates computation `cid` on `args` (one per parameter number).
    pub fn call(&self, cid: CompId, args: &[Value]) -> Result<Value> {
        let depth = self.depth.get();
        if depth >= self.options.max_call_depth {
            return Err(err(format!(
                "computations nested more than {} deep (calls, while bodies, conditionals, \
                 fusions, reducers inside one another): the interpreter's limit",
                self.options.max_call_depth
            )));
        }
        self.depth.set(depth + 1);
        let r = self.call_inner(cid, args);
        self.depth.set(depth);
        r
    }

    fn call_inner(&self, cid: CompId, args: &[Value]) -> Result<Value> {
        let plan = self.plan(cid)?;
        let comp = self.module.comp(cid);
        let capture = self.capture.as_deref().filter(|c| c.begin(cid));
        let mut vals: Vec<Option<Value>> = vec![None; plan.slots];
        let mut remaining = plan.uses.clone();
        let splat = &plan.splat;
        for &id in &plan.order {
            let instr = comp.instr(id);
            if let Some(group) = plan.chains.group(id) {
                // A member is evaluated with the group, at its last member.
                if id == group.last() {
                    self.eval_chain(comp, group, &plan, &mut remaining, &mut vals, capture, cid)?;
                }
                continue;
            }
            if splat[id.index()] {
                let scalar = vals[instr.operand(0).index()].clone();
                // A value kept for a check is the whole array, as the
                // module has it.
                if let (Some(c), Some(s)) = (capture, &scalar) {
                    if c.wants(cid, id) {
                        let v = splat::materialize(instr, s).map_err(|e| e.locate(comp, instr))?;
                        c.offer(cid, id, &v).map_err(|e| e.locate(comp, instr))?;
                    }
                }
                vals[id.index()] = scalar;
                release_operands(instr, &plan, &mut remaining, &mut vals);
                continue;
            }
            let owned = take_last_use(instr, &plan, &remaining, &mut vals, splat);
            let v = self.eval_counted(comp, instr, &vals, owned, args, splat)?;
            if !v.matches(&instr.shape) {
                return Err(err(format!(
                    "the result is {}, the instruction's shape is {}",
                    v.shape_text(),
                    instr.shape.to_text(false)
                ))
                .locate(comp, instr));
            }
            if let Some(c) = capture {
                c.offer(cid, id, &v).map_err(|e| e.locate(comp, instr))?;
            }
            vals[id.index()] = Some(v);
            release_operands(instr, &plan, &mut remaining, &mut vals);
        }
        vals[plan.root.index()]
            .take()
            .ok_or_else(|| err("internal error: root not evaluated"))
    }

    /// Evaluates the members of `group` a block at a time ([`chain`]),
    /// keeping those read outside it (or captured) in `vals`.
    #[allow(clippy::too_many_arguments)]
    fn eval_chain(
        &self,
        comp: &Computation,
        group: &chain::Group,
        plan: &Plan,
        remaining: &mut [u32],
        vals: &mut [Option<Value>],
        capture: Option<&capture::Capture>,
        cid: CompId,
    ) -> Result<()> {
        let last = comp.instr(group.last());
        let wanted = |m| capture.is_some_and(|c| c.wants(cid, m));
        let made = chain::eval(group, vals, wanted).map_err(|e| e.locate(comp, last))?;
        for (m, v) in made {
            if let Some(c) = capture {
                let instr = comp.instr(m);
                c.offer(cid, m, &v).map_err(|e| e.locate(comp, instr))?;
            }
            vals[m.index()] = Some(v);
        }
        self.tick(group.work())?;
        for &m in &group.members {
            release_operands(comp.instr(m), plan, remaining, vals);
        }
        Ok(())
    }

    /// Evaluates `instr` on its operands' values in `vals` (and `owned`,
    /// operand k taken out of them as its last use, when there is one),
    /// counting the work for the cancel hook.
    fn eval_counted(
        &self,
        comp: &Computation,
        instr: &Instruction,
        vals: &[Option<Value>],
        owned: Option<(usize, Array)>,
        args: &[Value],
        splat: &[bool],
    ) -> Result<Value> {
        let value_of = |o: &InstrId| {
            vals[o.index()]
                .as_ref()
                .ok_or_else(|| err("internal error: operand not evaluated"))
        };
        let is_splat = |o: &InstrId| splat.get(o.index()).copied().unwrap_or(false);
        if instr.operands().iter().any(is_splat) {
            return self
                .eval_reading_splats(comp, instr, vals, owned, args, splat)
                .map_err(|e| e.locate(comp, instr));
        }
        let mut held = None;
        if let Some((k, arr)) = owned {
            let others = instr
                .operands()
                .iter()
                .enumerate()
                .map(|(i, o)| {
                    if i == k {
                        Ok(None)
                    } else {
                        value_of(o).map(Some)
                    }
                })
                .collect::<Result<Vec<Option<&Value>>>>()
                .map_err(|e| e.locate(comp, instr))?;
            let read = arr.len() as u64;
            match reuse::eval(comp, instr, k, arr, &others).map_err(|e| e.locate(comp, instr))? {
                Ok(a) => {
                    let v = Value::array(a);
                    let others: Vec<&Value> = others.iter().flatten().copied().collect();
                    self.tick(instruction_work(&others, &v).saturating_add(read))?;
                    return Ok(v);
                }
                Err(arr) => held = Some((k, Value::array(arr))),
            }
        }
        let ops = instr
            .operands()
            .iter()
            .enumerate()
            .map(|(i, o)| match &held {
                Some((k, v)) if *k == i => Ok(v),
                _ => value_of(o),
            })
            .collect::<Result<Vec<&Value>>>()
            .map_err(|e| e.locate(comp, instr))?;
        probe_result(comp, instr).map_err(|e| e.locate(comp, instr))?;
        let v = self
            .eval_instr(comp, instr, &ops, args)
            .map_err(|e| e.locate(comp, instr))?;
        self.tick(instruction_work(&ops, &v))?;
        Ok(v)
    }

    /// [`Interpreter::eval_counted`] for an instruction with operands
    /// whose slots hold the scalar of a broadcast ([`splat`]).
    fn eval_reading_splats(
        &self,
        comp: &Computation,
        instr: &Instruction,
        vals: &[Option<Value>],
        mut owned: Option<(usize, Array)>,
        args: &[Value],
        splat: &[bool],
    ) -> Result<Value> {
        let value_of = |o: InstrId| {
            vals[o.index()]
                .as_ref()
                .ok_or_else(|| err("internal error: operand not evaluated"))
        };
        let is_splat = |o: InstrId| splat.get(o.index()).copied().unwrap_or(false);
        if let (Some(op), &[a, b]) = (
            elementwise::BinOp::from_opcode(instr.opcode),
            instr.operands(),
        ) {
            if is_splat(a) != is_splat(b) {
                let (scalar, k) = if is_splat(a) { (a, 1) } else { (b, 0) };
                let x = match owned.take() {
                    Some((j, arr)) if j == k => splat::Operand::Owned(arr),
                    other => {
                        owned = other;
                        splat::Operand::Shared(value_of(instr.operand(k))?.as_array()?)
                    }
                };
                let s = value_of(scalar)?.as_array()?.clone();
                let pattern = splat::pattern(comp, comp.instr(scalar))
                    .ok_or_else(|| err("internal error: a splat is not a broadcast"))?;
                match splat::binary(op, x, &s, pattern, k == 0)? {
                    Ok(r) => {
                        let v = Value::array(r);
                        // The array operand's elements read, and the result's written.
                        self.tick(instruction_work(&[&v], &v))?;
                        return Ok(v);
                    }
                    Err(splat::Operand::Owned(arr)) => owned = Some((k, arr)),
                    Err(splat::Operand::Shared(_)) => {}
                }
            }
        }
        // No loop here for this op or type: the broadcasts made after all.
        let ops = instr
            .operands()
            .iter()
            .enumerate()
            .map(|(i, &o)| match owned.take() {
                Some((k, arr)) if k == i => Ok(Value::array(arr)),
                other => {
                    owned = other;
                    let v = value_of(o)?;
                    if is_splat(o) {
                        splat::materialize(comp.instr(o), v)
                    } else {
                        Ok(v.clone())
                    }
                }
            })
            .collect::<Result<Vec<Value>>>()?;
        let ops: Vec<&Value> = ops.iter().collect();
        probe_result(comp, instr)?;
        let v = self.eval_instr(comp, instr, &ops, args)?;
        self.tick(instruction_work(&ops, &v))?;
        Ok(v)
    }

    /// What computation `cid` does, if it is a single op on its parameters.
    pub fn combiner(&self, cid: CompId) -> Combiner {
        if let Some(c) = self.combiners.borrow().get(&cid) {
            return *c;
        }
        let c = self.classify(cid);
        self.combiners.borrow_mut().insert(cid, c);
        c
    }

    /// Computation `cid` as a [`scalar_prog::Prog`], when it is one.
    pub fn scalar_prog(&self, cid: CompId) -> Option<Rc<scalar_prog::Prog>> {
        if let Some(p) = self.progs.borrow().get(&cid) {
            return p.clone();
        }
        let p = scalar_prog::Prog::compile(self.module, cid).map(Rc::new);
        self.progs.borrow_mut().insert(cid, p.clone());
        p
    }

    fn classify(&self, cid: CompId) -> Combiner {
        let Some(comp) = self.module.get_comp(cid) else {
            return Combiner::General;
        };
        let Some(root) = comp.root_opt() else {
            return Combiner::General;
        };
        let r = comp.instr(root);
        let param = |id: InstrId| comp.instr(id).parameter_number();
        if r.opcode == Opcode::Parameter && r.parameter_number() == Some(1) {
            let n = comp.parameters().len();
            if n == 2 {
                return Combiner::TakeUpdate;
            }
        }
        if r.operands().len() != 2 || !r.shape.dims().is_empty() {
            return Combiner::General;
        }
        let (a, b) = (param(r.operand(0)), param(r.operand(1)));
        if r.opcode == Opcode::Compare {
            if a == Some(0) && b == Some(1) {
                if let Some(d) = r.comparison_direction() {
                    return Combiner::Compare(d, r.comparison_type());
                }
            }
            return Combiner::General;
        }
        if comp.parameters().len() != 2 {
            return Combiner::General;
        }
        let Some(op) = elementwise::BinOp::from_opcode(r.opcode) else {
            return Combiner::General;
        };
        use elementwise::BinOp as B;
        let commutative = matches!(
            op,
            B::Add | B::Mul | B::Max | B::Min | B::And | B::Or | B::Xor
        );
        match (a, b) {
            (Some(0), Some(1)) => Combiner::Bin(op),
            (Some(1), Some(0)) if commutative => Combiner::Bin(op),
            _ => Combiner::General,
        }
    }

    pub(crate) fn called(&self, instr: &Instruction, key: &str) -> Result<CompId> {
        match instr.attr(key) {
            Some(crate::ir::AttrValue::Comp(c)) => Ok(*c),
            Some(crate::ir::AttrValue::Comps(cs)) if cs.len() == 1 => Ok(cs[0]),
            _ => Err(err(format!("missing called computation {key}="))),
        }
    }

    /// Evaluates one instruction: a dispatcher to each op family's file.
    pub(crate) fn eval_instr(
        &self,
        comp: &Computation,
        instr: &Instruction,
        ops: &[&Value],
        args: &[Value],
    ) -> Result<Value> {
        use Opcode as O;
        let op = instr.opcode;
        if elementwise::handles(op) {
            return elementwise::eval(instr, ops).map(Value::array);
        }
        if shape_ops::handles(op) {
            return shape_ops::eval(comp, instr, ops).map(Value::array);
        }
        if collective::is_collective(op) {
            return self.collective_alone(instr, ops);
        }
        match op {
            O::Parameter => parameter(instr, args),
            O::Constant => instr
                .literal()
                .ok_or_else(|| err("constant without a value"))
                .and_then(Value::from_literal),
            O::Copy | O::OptimizationBarrier | O::Domain => {
                expect_operands(instr, ops, 1)?;
                Ok(ops[0].clone())
            }
            O::AddDependency => ops
                .first()
                .map(|v| (*v).clone())
                .ok_or_else(|| err("add-dependency without an operand")),
            O::AfterAll => Ok(Value::Token),
            O::Tuple => Ok(Value::Tuple(ops.iter().map(|v| (*v).clone()).collect())),
            O::GetTupleElement => get_tuple_element(instr, ops),
            O::Dot => dot::eval(instr, ops).map(Value::array),
            O::RaggedDot => dot::ragged_dot(instr, ops).map(Value::array),
            O::ScaledDot => dot::scaled_dot(instr, ops).map(Value::array),
            O::Convolution => convolution::eval(instr, ops).map(Value::array),
            O::Fft => fft::eval(instr, ops).map(Value::array),
            O::Cholesky => linalg::cholesky_op(instr, ops).map(Value::array),
            O::TriangularSolve => linalg::triangular_solve_op(instr, ops).map(Value::array),
            O::Scatter => reduce::scatter(self, instr, ops),
            O::Reduce => reduce::reduce(self, instr, ops),
            O::ReduceWindow => reduce::reduce_window(self, instr, ops),
            O::SelectAndScatter => select_scatter::select_and_scatter(self, instr, ops),
            O::Map => reduce::map(self, instr, ops),
            O::Sort => sort::sort(self, comp, instr, ops),
            O::TopK => sort::topk_op(instr, ops),
            O::Call
            | O::Fusion
            | O::While
            | O::Conditional
            | O::Scan
            | O::AsyncStart
            | O::AsyncUpdate
            | O::AsyncDone
            | O::CopyStart
            | O::CopyDone => control::eval(self, comp, instr, ops, args),
            O::CustomCall => custom::custom_call(self, instr, ops),
            O::RngBitGenerator => rng_bits::eval(instr, ops),
            O::Rng => random::rng_op(instr, ops).map(Value::array),
            O::AllReduceDone | O::AllGatherDone | O::CollectivePermuteDone => {
                collective::done(instr, ops)
            }
            O::PartitionId | O::ReplicaId => {
                let topo = self.topology()?;
                let id = if op == O::PartitionId {
                    topo.partition_of(self.device)
                } else {
                    topo.replica_of(self.device)
                };
                Array::scalar_f64(instr.shape.element_type(), id as f64).map(Value::array)
            }
            O::BatchNormTraining => batchnorm::training(instr, ops),
            O::BatchNormInference => batchnorm::inference(instr, ops),
            O::BatchNormGrad => batchnorm::grad(instr, ops),
            _ => Err(unsupported(format!(
                "unsupported op: the interpreter does not implement {}",
                op.name()
            ))),
        }
    }

    /// A collective on one device: alone, a device can only meet itself
    /// (a lockstep evaluation handles the entry computation's collectives).
    fn collective_alone(&self, instr: &Instruction, ops: &[&Value]) -> Result<Value> {
        let topo = self.topology()?;
        let mut r = collective::exchange(self, &topo, instr, &[self.device], &[ops.to_vec()])?;
        r.pop()
            .ok_or_else(|| err("internal error: a collective gave no result"))
    }

    pub(crate) fn call_with(&self, c: CompId, ops: &[&Value]) -> Result<Value> {
        let args: Vec<Value> = ops.iter().map(|v| (*v).clone()).collect();
        self.call(c, &args)
    }
}

/// An operand of `instr` whose buffer its result may take
/// ([`reuse::candidates`]), taken out of `vals` with its position: this is
/// its last use, it is not the root, and nothing else holds its array (a
/// caller's argument, a tuple, a capture, another value's alias).
fn take_last_use(
    instr: &Instruction,
    plan: &Plan,
    remaining: &[u32],
    vals: &mut [Option<Value>],
    splat: &[bool],
) -> Option<(usize, Array)> {
    for &k in reuse::candidates(instr.opcode) {
        let Some(&o) = instr.operands().get(k) else {
            continue;
        };
        // One use left, this one: `o` appears once among the operands. A
        // splat's slot holds a scalar, not an array of the result's size.
        if o == plan.root || remaining[o.index()] != 1 || splat.get(o.index()) == Some(&true) {
            continue;
        }
        let slot = &mut vals[o.index()];
        if !matches!(slot, Some(Value::Array(a)) if Arc::strong_count(a) == 1 && Arc::weak_count(a) == 0)
        {
            continue;
        }
        if let Some(Value::Array(a)) = slot.take() {
            match Arc::try_unwrap(a) {
                Ok(arr) => return Some((k, arr)),
                Err(a) => *slot = Some(Value::Array(a)),
            }
        }
    }
    None
}

/// Counts one use of each operand of `instr` done, dropping the values
/// used for the last time (never the root's).
fn release_operands(
    instr: &Instruction,
    plan: &Plan,
    remaining: &mut [u32],
    vals: &mut [Option<Value>],
) {
    for &op in instr.operands() {
        let r = &mut remaining[op.index()];
        *r -= 1;
        if *r == 0 && op != plan.root {
            vals[op.index()] = None;
        }
    }
}

/// What evaluating an instruction cost, for [`Interpreter::tick`]: the
/// elements it read and wrote (a tuple is references), and a fixed cost.
pub(crate) fn instruction_work(ops: &[&Value], result: &Value) -> u64 {
    let elements = |v: &Value| match v {
        Value::Array(a) => a.len() as u64,
        _ => 0,
    };
    ops.iter().map(|v| elements(v)).fold(
        cancel::INSTRUCTION_WORK + elements(result),
        u64::saturating_add,
    )
}

/// Asks for an instruction's result and working space before it is
/// computed ([`budget::probe`]): what the system refuses is an error
/// naming the instruction, not an abort halfway through it.
pub(crate) fn probe_result(comp: &Computation, instr: &Instruction) -> Result<()> {
    if matches!(
        instr.opcode,
        Opcode::Parameter | Opcode::Tuple | Opcode::GetTupleElement | Opcode::Copy
    ) {
        return Ok(());
    }
    let result = budget::shape_bytes(&instr.shape);
    if result < budget::PROBE_ABOVE {
        return Ok(());
    }
    let widest = instr
        .operands()
        .iter()
        .map(|&o| array::largest_array(&comp.instr(o).shape))
        .chain(std::iter::once(array::largest_array(&instr.shape)))
        .max()
        .unwrap_or(0);
    let working = u64::try_from(widest).unwrap_or(0).saturating_mul(8);
    budget::probe(
        result.saturating_add(working),
        &format!("the result {}", instr.shape.to_text(false)),
    )
}

/// Operand `i` as an array.
pub(crate) fn operand<'a>(ops: &[&'a Value], i: usize) -> Result<&'a Arc<Array>> {
    ops.get(i)
        .ok_or_else(|| err(format!("missing operand {i}")))?
        .as_array()
}

/// An error unless `instr` has exactly `n` operands.
pub(crate) fn expect_operands(instr: &Instruction, ops: &[&Value], n: usize) -> Result<()> {
    if ops.len() != n {
        return Err(err(format!(
            "{} takes {n} operands, has {}",
            instr.opcode.name(),
            ops.len()
        )));
    }
    Ok(())
}

fn parameter(instr: &Instruction, args: &[Value]) -> Result<Value> {
    let n = instr
        .parameter_number()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| err("bad parameter number"))?;
    args.get(n).cloned().ok_or_else(|| {
        err(format!(
            "parameter {n} has no argument ({} given)",
            args.len()
        ))
    })
}

fn get_tuple_element(instr: &Instruction, ops: &[&Value]) -> Result<Value> {
    expect_operands(instr, ops, 1)?;
    let i = instr
        .int_attr("index")
        .ok_or_else(|| err("get-tuple-element without index"))?;
    let t = ops[0].tuple_elements()?;
    usize::try_from(i)
        .ok()
        .and_then(|i| t.get(i))
        .cloned()
        .ok_or_else(|| err(format!("tuple index {i} out of range ({})", t.len())))
}

/// Scalar integer operands (dynamic-slice start indices), or the older
/// form's single vector of them.
pub(crate) fn scalar_indices(ops: &[&Value]) -> Result<Vec<i64>> {
    if let [v] = ops {
        let a = v.as_array()?;
        if a.rank() == 1 {
            return (0..a.len()).map(|i| a.index_at(i)).collect();
        }
    }
    ops.iter()
        .map(|v| {
            let a = v.as_array()?;
            if a.len() != 1 {
                return Err(err(format!(
                    "start index {} is not a scalar",
                    a.shape_text()
                )));
            }
            a.index_at(0)
        })
        .collect()
}
