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
pub mod check;
pub mod cli;
pub mod collective;
pub mod convert;
pub mod custom;
pub mod dot;
pub mod elementwise;
pub mod npy;
pub mod random;
pub mod reduce;
pub mod region;
pub mod rng_bits;
pub mod shape_ops;
pub mod sort;

use crate::ir::literal::Literal;
use crate::ir::{CompId, Computation, InstrId, Instruction, Module, Opcode};
use crate::util::FxMap;
use array::shape_dims;
pub use array::{Array, Data, Value};
pub use collective::{evaluate_devices, Topology};
use std::cell::{OnceCell, RefCell};
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;

/// An evaluation failure: what went wrong, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalError {
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
        message: message.into(),
        computation: None,
        instruction: None,
        callers: Vec::new(),
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

/// Limits that keep a bad module from running forever.
#[derive(Clone, Debug)]
pub struct EvalOptions {
    /// A `while` that runs more iterations than this is an error.
    pub max_while_iterations: u64,
    /// Computations nested deeper than this (a call in a while body in a
    /// call ...) are an error naming the instruction: each level of
    /// nesting is a level of the host's stack, and this bound keeps it
    /// within a 2 MiB thread stack (what tests and threads get).
    pub max_call_depth: usize,
}

/// The default [`EvalOptions::max_call_depth`].
pub const MAX_CALL_DEPTH: usize = 200;

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions {
            max_while_iterations: 10_000_000,
            max_call_depth: MAX_CALL_DEPTH,
        }
    }
}

/// What a computation needs evaluated, in order, and how often each value
/// is used (so it can be dropped after its last use).
struct Plan {
    order: Vec<InstrId>,
    uses: Vec<u32>,
    slots: usize,
    root: InstrId,
}

/// The interpreter for one module, on one device.
pub struct Interpreter<'m> {
    pub module: &'m Module,
    pub options: EvalOptions,
    plans: RefCell<FxMap<CompId, Rc<Plan>>>,
    combiners: RefCell<FxMap<CompId, Combiner>>,
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

/// Evaluates the entry computation of `module` on `args`.
pub fn evaluate(module: &Module, args: &[Value]) -> Result<Value> {
    Interpreter::new(module).run(args)
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
            device: 0,
            topology: OnceCell::new(),
            lockstep: false,
            depth: std::cell::Cell::new(0),
        }
    }

    /// The interpreter of device `device` of `topology`, in a lockstep
    /// evaluation ([`evaluate_devices`]).
    pub fn for_device(module: &'m Module, topology: Topology, device: usize) -> Interpreter<'m> {
        Interpreter {
            device,
            lockstep: true,
            topology: OnceCell::from(topology),
            ..Interpreter::new(module)
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
        let slots = comp.sequence().map(|i| i.index() + 1).max().unwrap_or(0);
        // Only what the root depends on.
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
        let plan = Rc::new(Plan {
            order,
            uses,
            slots,
            root,
        });
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
        let mut vals: Vec<Option<Value>> = vec![None; plan.slots];
        let mut remaining = plan.uses.clone();
        for &id in &plan.order {
            let instr = comp.instr(id);
            let v = {
                let ops = instr
                    .operands()
                    .iter()
                    .map(|o| {
                        vals[o.index()]
                            .as_ref()
                            .ok_or_else(|| err("internal error: operand not evaluated"))
                    })
                    .collect::<Result<Vec<&Value>>>()
                    .map_err(|e| e.locate(comp, instr))?;
                self.eval_instr(comp, instr, &ops, args)
                    .map_err(|e| e.locate(comp, instr))?
            };
            if !v.matches(&instr.shape) {
                return Err(err(format!(
                    "the result is {}, the instruction's shape is {}",
                    v.shape_text(),
                    instr.shape.to_text(false)
                ))
                .locate(comp, instr));
            }
            vals[id.index()] = Some(v);
            for &op in instr.operands() {
                let r = &mut remaining[op.index()];
                *r -= 1;
                if *r == 0 && op != plan.root {
                    vals[op.index()] = None;
                }
            }
        }
        vals[plan.root.index()]
            .take()
            .ok_or_else(|| err("internal error: root not evaluated"))
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

    fn called(&self, instr: &Instruction, key: &str) -> Result<CompId> {
        match instr.attr(key) {
            Some(crate::ir::AttrValue::Comp(c)) => Ok(*c),
            Some(crate::ir::AttrValue::Comps(cs)) if cs.len() == 1 => Ok(cs[0]),
            _ => Err(err(format!("missing called computation {key}="))),
        }
    }

    fn eval_instr(
        &self,
        comp: &Computation,
        instr: &Instruction,
        ops: &[&Value],
        args: &[Value],
    ) -> Result<Value> {
        use elementwise as ew;
        let arr = |i: usize| -> Result<&Arc<Array>> {
            ops.get(i)
                .ok_or_else(|| err(format!("missing operand {i}")))?
                .as_array()
        };
        let nops = |n: usize| -> Result<()> {
            if ops.len() != n {
                return Err(err(format!(
                    "{} takes {n} operands, has {}",
                    instr.opcode.name(),
                    ops.len()
                )));
            }
            Ok(())
        };
        let out_ty = instr.shape.element_type();
        let op = instr.opcode;
        if let Some(b) = ew::BinOp::from_opcode(op) {
            nops(2)?;
            return Ok(Value::array(ew::binary(b, arr(0)?, arr(1)?)?));
        }
        if let Some(u) = ew::UnOp::from_opcode(op) {
            nops(1)?;
            return Ok(Value::array(ew::unary(u, arr(0)?)?));
        }
        let v = match op {
            Opcode::Parameter => {
                let n = instr
                    .parameter_number()
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or_else(|| err("bad parameter number"))?;
                let v = args.get(n).ok_or_else(|| {
                    err(format!(
                        "parameter {n} has no argument ({} given)",
                        args.len()
                    ))
                })?;
                return Ok(v.clone());
            }
            Opcode::Constant => {
                let lit = instr
                    .literal()
                    .ok_or_else(|| err("constant without a value"))?;
                return Value::from_literal(lit);
            }
            Opcode::Copy | Opcode::OptimizationBarrier | Opcode::Domain => {
                nops(1)?;
                return Ok(ops[0].clone());
            }
            Opcode::AddDependency => {
                return ops
                    .first()
                    .map(|v| (*v).clone())
                    .ok_or_else(|| err("add-dependency without an operand"))
            }
            Opcode::AfterAll => return Ok(Value::Token),
            Opcode::Tuple => return Ok(Value::Tuple(ops.iter().map(|v| (*v).clone()).collect())),
            Opcode::GetTupleElement => {
                nops(1)?;
                let i = instr
                    .int_attr("index")
                    .ok_or_else(|| err("get-tuple-element without index"))?;
                let t = ops[0].tuple_elements()?;
                return usize::try_from(i)
                    .ok()
                    .and_then(|i| t.get(i))
                    .cloned()
                    .ok_or_else(|| err(format!("tuple index {i} out of range ({})", t.len())));
            }
            Opcode::IsFinite => {
                nops(1)?;
                ew::is_finite(arr(0)?)?
            }
            Opcode::Compare => {
                nops(2)?;
                let d = instr
                    .comparison_direction()
                    .ok_or_else(|| err("compare without direction"))?;
                ew::compare(arr(0)?, arr(1)?, d, instr.comparison_type())?
            }
            Opcode::Select => {
                nops(3)?;
                ew::select(arr(0)?, arr(1)?, arr(2)?)?
            }
            Opcode::Clamp => {
                nops(3)?;
                ew::clamp(arr(0)?, arr(1)?, arr(2)?)?
            }
            Opcode::Convert => {
                nops(1)?;
                convert::convert(arr(0)?, out_ty)?
            }
            Opcode::BitcastConvert => {
                nops(1)?;
                convert::bitcast_convert(arr(0)?, out_ty, shape_dims(&instr.shape)?)?
            }
            Opcode::Broadcast => {
                nops(1)?;
                let dims = instr.dimensions().unwrap_or(&[]);
                shape_ops::broadcast(arr(0)?, &shape_dims(&instr.shape)?, dims)?
            }
            Opcode::Reshape => {
                nops(1)?;
                shape_ops::reshape(arr(0)?, &shape_dims(&instr.shape)?)?
            }
            Opcode::Bitcast => {
                nops(1)?;
                // The operand's declared shape carries its layout.
                let from = &comp.instr(instr.operand(0)).shape;
                shape_ops::bitcast(arr(0)?, from, &instr.shape)?
            }
            Opcode::Transpose => {
                nops(1)?;
                let a = arr(0)?;
                let perm: Vec<usize> = instr
                    .dimensions()
                    .unwrap_or(&[])
                    .iter()
                    .map(|&d| attrs::dim_index(d, a.rank(), "transpose dimension"))
                    .collect::<Result<_>>()?;
                shape_ops::transpose(a, &perm)?
            }
            Opcode::Slice => {
                nops(1)?;
                shape_ops::slice(arr(0)?, &attrs::slice_attr(instr)?)?
            }
            Opcode::DynamicSlice => {
                let a = arr(0)?;
                let starts = scalar_indices(&ops[1..])?;
                let sizes: Vec<usize> = attrs::int_list_req(instr, "dynamic_slice_sizes")?
                    .iter()
                    .map(|&s| usize::try_from(s).map_err(|_| err("negative slice size")))
                    .collect::<Result<_>>()?;
                shape_ops::dynamic_slice(a, &starts, &sizes)?
            }
            Opcode::DynamicUpdateSlice => {
                if ops.len() < 2 {
                    return Err(err("dynamic-update-slice needs an update"));
                }
                let starts = scalar_indices(&ops[2..])?;
                shape_ops::dynamic_update_slice(arr(0)?, arr(1)?, &starts)?
            }
            Opcode::Concatenate => {
                let parts = (0..ops.len())
                    .map(|i| arr(i).map(|a| &**a))
                    .collect::<Result<Vec<_>>>()?;
                let d = instr
                    .dimensions()
                    .and_then(|d| d.first().copied())
                    .unwrap_or(-1);
                let rank = parts.first().map_or(0, |a| a.rank());
                shape_ops::concatenate(&parts, attrs::dim_index(d, rank, "concatenate dimension")?)?
            }
            Opcode::Pad => {
                nops(2)?;
                shape_ops::pad(arr(0)?, arr(1)?, &attrs::padding_attr(instr)?)?
            }
            Opcode::Iota => {
                let d = instr
                    .int_attr("iota_dimension")
                    .ok_or_else(|| err("iota without iota_dimension"))?;
                let dims = shape_dims(&instr.shape)?;
                let rank = dims.len();
                shape_ops::iota(out_ty, &dims, attrs::dim_index(d, rank, "iota dimension")?)?
            }
            Opcode::Reverse => {
                nops(1)?;
                shape_ops::reverse(arr(0)?, instr.dimensions().unwrap_or(&[]))?
            }
            Opcode::Dot => {
                nops(2)?;
                let dd = dot::DotDims {
                    lhs_batch: attrs::int_list(instr, "lhs_batch_dims")?,
                    lhs_contract: attrs::int_list(instr, "lhs_contracting_dims")?,
                    rhs_batch: attrs::int_list(instr, "rhs_batch_dims")?,
                    rhs_contract: attrs::int_list(instr, "rhs_contracting_dims")?,
                };
                dot::dot(arr(0)?, arr(1)?, &dd, out_ty)?
            }
            Opcode::Gather => {
                nops(2)?;
                let us = |k: &str, req: bool| -> Result<Vec<usize>> {
                    let v = if req {
                        attrs::int_list_req(instr, k)?
                    } else {
                        attrs::int_list(instr, k)?
                    };
                    v.iter()
                        .map(|&x| usize::try_from(x).map_err(|_| err(format!("negative {k}"))))
                        .collect()
                };
                let g = shape_ops::GatherDims {
                    offset_dims: us("offset_dims", false)?,
                    collapsed_slice_dims: us("collapsed_slice_dims", false)?,
                    start_index_map: us("start_index_map", false)?,
                    index_vector_dim: attrs::int_attr(instr, "index_vector_dim")?
                        .and_then(|v| usize::try_from(v).ok())
                        .ok_or_else(|| err("gather without index_vector_dim"))?,
                    operand_batching_dims: us("operand_batching_dims", false)?,
                    start_indices_batching_dims: us("start_indices_batching_dims", false)?,
                    slice_sizes: us("slice_sizes", true)?,
                };
                shape_ops::gather(arr(0)?, arr(1)?, &g, &shape_dims(&instr.shape)?)?
            }
            Opcode::Scatter => return reduce::scatter(self, instr, ops),
            Opcode::Reduce => return reduce::reduce(self, instr, ops),
            Opcode::ReduceWindow => return reduce::reduce_window(self, instr, ops),
            Opcode::Map => return reduce::map(self, instr, ops),
            Opcode::Sort => return sort::sort(self, instr, ops),
            Opcode::TopK => return sort::topk_op(instr, ops),
            Opcode::Call => {
                let c = self.called(instr, "to_apply")?;
                return self.call_with(c, ops);
            }
            Opcode::Fusion => {
                let c = self.called(instr, "calls")?;
                return self.call_with(c, ops);
            }
            Opcode::While => {
                nops(1)?;
                let cond = self.called(instr, "condition")?;
                let body = self.called(instr, "body")?;
                let mut state = ops[0].clone();
                let mut n = 0u64;
                loop {
                    let c = self.call(cond, std::slice::from_ref(&state))?;
                    let c = c.as_array()?;
                    match &c.data {
                        Data::Pred(v) if v.len() == 1 => {
                            if !v[0] {
                                break;
                            }
                        }
                        _ => return Err(err("while condition did not return pred[]")),
                    }
                    n += 1;
                    if n > self.options.max_while_iterations {
                        return Err(err(format!(
                            "while loop ran more than {} iterations",
                            self.options.max_while_iterations
                        )));
                    }
                    state = self.call(body, std::slice::from_ref(&state))?;
                }
                return Ok(state);
            }
            Opcode::Conditional => {
                let sel = arr(0)?;
                let branches: Vec<CompId> = match instr.attr("branch_computations") {
                    Some(crate::ir::AttrValue::Comps(cs)) => cs.to_vec(),
                    _ => vec![
                        self.called(instr, "true_computation")?,
                        self.called(instr, "false_computation")?,
                    ],
                };
                if branches.is_empty() || ops.len() != branches.len() + 1 {
                    return Err(err(format!(
                        "conditional with {} branches has {} operands",
                        branches.len(),
                        ops.len()
                    )));
                }
                let b = match &sel.data {
                    // pred: true runs the first branch.
                    Data::Pred(v) if v.len() == 1 => usize::from(!v[0]),
                    _ if sel.len() == 1 => {
                        // Out-of-range indices run the last branch.
                        let i = sel.index_at(0)?;
                        usize::try_from(i)
                            .ok()
                            .filter(|&i| i < branches.len())
                            .unwrap_or(branches.len() - 1)
                    }
                    _ => return Err(err("conditional selector is not a scalar")),
                };
                return self.call(branches[b], std::slice::from_ref(ops[b + 1]));
            }
            Opcode::CustomCall => return custom::custom_call(self, instr, ops),
            Opcode::RngBitGenerator => {
                nops(1)?;
                let alg = match instr.attr("algorithm") {
                    Some(crate::ir::AttrValue::RngAlgorithm(a)) => {
                        rng_bits::Algorithm::from_attr(a.name())?
                    }
                    _ => rng_bits::Algorithm::Philox,
                };
                let st = arr(0)?;
                let state: Vec<u64> = match (&st.data, st.ty, st.rank()) {
                    (Data::U(v), crate::ir::PrimitiveType::U64, 1) => v.clone(),
                    _ => {
                        return Err(err(format!(
                            "rng-bit-generator state is {}, not u64[n]",
                            st.shape_text()
                        )))
                    }
                };
                let out = instr
                    .shape
                    .tuple_elements()
                    .and_then(|t| t.get(1))
                    .ok_or_else(|| err("rng-bit-generator shape is not a (state, bits) tuple"))?;
                let (new_state, bits) = rng_bits::rng_bit_generator(
                    alg,
                    &state,
                    out.element_type(),
                    &shape_dims(out)?,
                )?;
                let n = new_state.len();
                let st = Array::new(st.ty, vec![n], Data::U(new_state))?;
                return Ok(Value::Tuple(
                    vec![Value::array(st), Value::array(bits)].into(),
                ));
            }
            op if collective::is_collective(op) => {
                // Alone, a device can only meet itself (a lockstep
                // evaluation handles the entry computation's collectives).
                let topo = self.topology()?;
                let mut r =
                    collective::exchange(self, &topo, instr, &[self.device], &[ops.to_vec()])?;
                return r
                    .pop()
                    .ok_or_else(|| err("internal error: a collective gave no result"));
            }
            Opcode::AllReduceDone => {
                nops(1)?;
                return Ok(ops[0].clone());
            }
            Opcode::AllGatherDone | Opcode::CollectivePermuteDone => {
                // The -start's (operands, results, ...) tuple.
                nops(1)?;
                return ops[0]
                    .tuple_elements()?
                    .get(1)
                    .cloned()
                    .ok_or_else(|| err(format!("{} of a tuple without results", op.name())));
            }
            Opcode::PartitionId | Opcode::ReplicaId => {
                let topo = self.topology()?;
                let id = if op == Opcode::PartitionId {
                    topo.partition_of(self.device)
                } else {
                    topo.replica_of(self.device)
                };
                Array::scalar_f64(out_ty, id as f64)?
            }
            Opcode::BatchNormTraining => return batchnorm::training(instr, ops),
            Opcode::BatchNormInference => return batchnorm::inference(instr, ops),
            Opcode::BatchNormGrad => return batchnorm::grad(instr, ops),
            Opcode::GetDimensionSize => {
                nops(1)?;
                let d = instr
                    .dimensions()
                    .and_then(|d| d.first().copied())
                    .ok_or_else(|| err("get-dimension-size without dimensions"))?;
                let a = arr(0)?;
                let d = attrs::dim_index(d, a.rank(), "dimension")?;
                Array::scalar_f64(out_ty, a.dims[d] as f64)?
            }
            _ => {
                return Err(err(format!(
                    "unsupported op: the interpreter does not implement {}",
                    op.name()
                )))
            }
        };
        Ok(Value::array(v))
    }

    fn call_with(&self, c: CompId, ops: &[&Value]) -> Result<Value> {
        let args: Vec<Value> = ops.iter().map(|v| (*v).clone()).collect();
        self.call(c, &args)
    }
}

/// Scalar integer operands (dynamic-slice start indices), or the older
/// form's single vector of them.
fn scalar_indices(ops: &[&Value]) -> Result<Vec<i64>> {
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
