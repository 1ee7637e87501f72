//! The IR verifier: run after parsing (text or proto: one verifier for both
//! fronts) and after every pass.
//!
//! It checks the invariants the rest of the code assumes: operands defined,
//! user lists exact, names unique and spellable in the text, roots set,
//! called computations present and the call graph free of cycles, operand
//! counts and required attributes as XLA's parser has them, every dimension
//! number and index an attribute holds in range of the rank it indexes,
//! layouts of the rank of their shapes, the stack-frame tables and the ids
//! that point into them, the `entry_computation_layout` against the entry's
//! signature, and the shapes of the common ops. Passes, the printer, the
//! proto writer and the interpreter rely on all of it.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::instruction::AttrValue;
use super::{CompId, Computation, InstrId, Module, Opcode, Shape, SourcePos};
use crate::util::FxSet;
use std::collections::HashSet;
use std::fmt;
use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyError {
    pub computation: String,
    pub instruction: Option<String>,
    pub message: String,
    /// Where the instruction was read, when the module was parsed.
    pub pos: Option<SourcePos>,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.instruction {
            None if self.computation.is_empty() => f.write_str(&self.message),
            Some(i) => write!(
                f,
                "in computation {}, instruction {}: {}",
                self.computation, i, self.message
            ),
            None => write!(f, "in computation {}: {}", self.computation, self.message),
        }
    }
}

impl std::error::Error for VerifyError {}

/// Checks every invariant; returns the first fault found.
pub fn verify(module: &Module) -> Result<(), VerifyError> {
    // Hashes of the names seen: half the memory of the names' set on a
    // million-instruction module. A hash seen again is a name seen again,
    // or (once in 2^64) not: the names before tell. SipHash, as FxHash
    // gives thousands of names of a large module the same 64 bits.
    let mut name_hashes: FxSet<u64> = FxSet::default();
    name_hashes.reserve(module.instruction_count());
    let hasher = BuildHasherDefault::<DefaultHasher>::default();
    let Some(entry) = module.entry_opt() else {
        return Err(VerifyError {
            computation: String::new(),
            instruction: None,
            message: "module has no entry computation".into(),
            pos: None,
        });
    };
    if module.get_comp(entry).is_none() {
        return Err(VerifyError {
            computation: String::new(),
            instruction: None,
            message: "entry computation does not exist".into(),
            pos: None,
        });
    }
    if let Err(m) = check_name(&module.name, false) {
        return Err(VerifyError {
            computation: String::new(),
            instruction: None,
            message: format!("module name {:?}: {m}", module.name),
            pos: None,
        });
    }
    let mut comp_names: HashSet<&str> = HashSet::new();
    for (cid, comp) in module.computations() {
        if !comp_names.insert(&comp.name) {
            return Err(VerifyError {
                computation: comp.name.to_string(),
                instruction: None,
                message: format!("computation name {} is not unique in the module", comp.name),
                pos: None,
            });
        }
        if let Err(m) = check_name(&comp.name, true) {
            return Err(VerifyError {
                computation: format!("{:?}", &*comp.name),
                instruction: None,
                message: format!("computation name {:?}: {m}", comp.name),
                pos: None,
            });
        }
        let fail = |instr: Option<InstrId>, message: String| VerifyError {
            computation: comp.name.to_string(),
            instruction: instr.and_then(|i| comp.get(i)).map(|i| i.name.to_string()),
            message,
            pos: instr.and_then(|i| comp.source_pos(i)),
        };
        match comp.root_opt() {
            None => return Err(fail(None, "computation has no root".into())),
            Some(r) if !comp.is_live(r) => {
                return Err(fail(None, "root instruction was removed".into()))
            }
            _ => {}
        }
        let mut param_numbers = HashSet::new();
        for (id, instr) in comp.instructions() {
            let iname = Some(id);
            if let Err(m) = check_name(&instr.name, false) {
                return Err(VerifyError {
                    instruction: Some(format!("{:?}", instr.name.as_str())),
                    ..fail(
                        None,
                        format!("instruction name {:?}: {m}", instr.name.as_str()),
                    )
                });
            }
            if !name_hashes.insert(hasher.hash_one(instr.name.as_str()))
                && named_before(module, cid, id, &instr.name)
            {
                return Err(fail(
                    iname,
                    format!(
                        "instruction name {} is not unique in the module",
                        instr.name
                    ),
                ));
            }
            for (i, &op) in instr
                .operands()
                .iter()
                .chain(instr.control_predecessors())
                .enumerate()
            {
                let Some(o) = comp.get(op) else {
                    return Err(fail(
                        iname,
                        format!("operand {i} is not an instruction of this computation"),
                    ));
                };
                if !o.users().contains(&id) {
                    return Err(fail(
                        iname,
                        format!("operand {} does not list it as a user", o.name),
                    ));
                }
            }
            for &u in instr.users() {
                let Some(user) = comp.get(u) else {
                    return Err(fail(iname, "a user was removed but is still listed".into()));
                };
                if !user.operands().contains(&id) && !user.control_predecessors().contains(&id) {
                    return Err(fail(
                        iname,
                        format!("{} is listed as a user but does not use it", user.name),
                    ));
                }
            }
            let distinct: HashSet<InstrId> = instr.users().iter().copied().collect();
            if distinct.len() != instr.users().len() {
                return Err(fail(iname, "a user is listed twice".into()));
            }
            for c in instr.called_computations() {
                if module.get_comp(c).is_none() {
                    return Err(fail(
                        iname,
                        "calls a computation that does not exist".into(),
                    ));
                }
            }
            if let Some(n) = instr.parameter_number() {
                if !param_numbers.insert(n) {
                    return Err(fail(iname, format!("duplicate parameter number {n}")));
                }
            }
            if let Err(m) = check_layouts(&instr.shape) {
                return Err(fail(iname, m));
            }
            if let Err(m) = check_shape(module, cid, id) {
                return Err(fail(iname, m));
            }
            if let Err(m) = check_operands_and_attrs(module, cid, id) {
                return Err(fail(iname, m));
            }
            if let Err(m) = check_dimension_numbers(comp, instr) {
                return Err(fail(iname, m));
            }
            if let Err(m) = check_frame_ref(module, instr) {
                return Err(fail(iname, m));
            }
        }
        for n in 0..param_numbers.len() as i64 {
            if !param_numbers.contains(&n) {
                return Err(fail(
                    None,
                    format!("parameter numbers are not contiguous: {n} is missing"),
                ));
            }
        }
    }
    check_call_graph(module)?;
    check_stack_frames(module)?;
    check_entry_layout(module)?;
    Ok(())
}

/// Whether an instruction before `id` of `cid`, in the verifier's order,
/// is named `name`.
fn named_before(module: &Module, cid: CompId, id: InstrId, name: &str) -> bool {
    for (c, comp) in module.computations() {
        for (i, instr) in comp.instructions() {
            if (c, i) == (cid, id) {
                return false;
            }
            if &*instr.name == name {
                return true;
            }
        }
    }
    false
}

/// Shape rules of the common ops.
fn check_shape(module: &Module, cid: CompId, id: InstrId) -> Result<(), String> {
    let comp = module.comp(cid);
    let instr = comp.instr(id);
    let operand = |i: usize| -> Result<&Shape, String> {
        instr
            .operands()
            .get(i)
            .map(|&o| &*comp.instr(o).shape)
            .ok_or_else(|| format!("{} expects operand {i}", instr.opcode))
    };
    let same_dims = |a: &Shape, b: &Shape| a.dims() == b.dims();
    let op = instr.opcode;
    if op.is_elementwise_unary() {
        if instr.operands().len() != 1 {
            return Err(format!("{op} takes one operand"));
        }
        if !same_dims(operand(0)?, &instr.shape) {
            return Err(format!("{op} result dimensions differ from its operand's"));
        }
    } else if op.is_elementwise_binary() {
        if instr.operands().len() != 2 {
            return Err(format!("{op} takes two operands"));
        }
        let (a, b) = (operand(0)?, operand(1)?);
        if !same_dims(a, b) || !same_dims(a, &instr.shape) {
            return Err(format!(
                "{op} operands and result must have the same dimensions: {}, {} -> {}",
                a.to_text(true),
                b.to_text(true),
                instr.shape.to_text(true)
            ));
        }
    }
    match op {
        Opcode::Compare => {
            let (a, b) = (operand(0)?, operand(1)?);
            if !same_dims(a, b) || !same_dims(a, &instr.shape) {
                return Err("compare operands and result must have the same dimensions".into());
            }
            if instr.shape.element_type() != super::PrimitiveType::Pred {
                return Err("compare must produce pred".into());
            }
        }
        Opcode::Select => {
            let (p, t, f) = (operand(0)?, operand(1)?, operand(2)?);
            if !t.compatible(f)
                || !same_dims(t, &instr.shape)
                || (p.rank() != 0 && !same_dims(p, t))
            {
                return Err("select operands must agree in shape".into());
            }
        }
        Opcode::Tuple => {
            let elems = instr
                .shape
                .tuple_elements()
                .ok_or("tuple must have a tuple shape")?;
            if elems.len() != instr.operands().len() {
                return Err("tuple shape and operand count differ".into());
            }
            for (i, e) in elems.iter().enumerate() {
                if !e.compatible(operand(i)?) {
                    return Err(format!("tuple element {i} does not match its operand"));
                }
            }
        }
        Opcode::GetTupleElement => {
            let idx = instr
                .int_attr("index")
                .ok_or("get-tuple-element needs index")?;
            let elems = operand(0)?
                .tuple_elements()
                .ok_or("get-tuple-element of a non-tuple")?;
            let e = usize::try_from(idx)
                .ok()
                .and_then(|i| elems.get(i))
                .ok_or("get-tuple-element index out of range")?;
            if !e.compatible(&instr.shape) {
                return Err("get-tuple-element shape does not match the element".into());
            }
        }
        Opcode::Broadcast => {
            let o = operand(0)?;
            let dims = instr.dimensions().ok_or("broadcast needs dimensions")?;
            if dims.len() != o.rank() {
                return Err("broadcast dimensions must name every operand dimension".into());
            }
            for (i, &d) in dims.iter().enumerate() {
                let out = usize::try_from(d)
                    .ok()
                    .and_then(|d| instr.shape.dims().get(d));
                if out != o.dims().get(i) {
                    return Err(format!("broadcast dimension {i} does not match the result"));
                }
            }
        }
        Opcode::Reshape | Opcode::Bitcast if op == Opcode::Reshape => {
            let o = operand(0)?;
            if o.as_array().map(|a| a.element_count())
                != instr.shape.as_array().map(|a| a.element_count())
            {
                return Err("reshape changes the element count".into());
            }
        }
        Opcode::Call => {
            let callee = instr.to_apply().ok_or("call needs to_apply")?;
            let callee = module
                .get_comp(callee)
                .ok_or("call of a missing computation")?;
            let params = callee.parameters();
            if params.len() != instr.operands().len() {
                return Err(format!(
                    "call passes {} operands to {} parameters of {}",
                    instr.operands().len(),
                    params.len(),
                    callee.name
                ));
            }
            for (i, p) in params.iter().enumerate() {
                if !callee.instr(*p).shape.compatible(operand(i)?) {
                    return Err(format!(
                        "call operand {i} does not match parameter {i} of {}",
                        callee.name
                    ));
                }
            }
            let root = callee.root_opt().and_then(|r| callee.get(r));
            if !root.is_some_and(|r| r.shape.compatible(&instr.shape)) {
                return Err(format!(
                    "call result does not match the root of {}",
                    callee.name
                ));
            }
        }
        Opcode::Parameter if !instr.operands().is_empty() => {
            return Err("parameter takes no operands".into());
        }
        Opcode::CustomCall
            if !matches!(instr.attr("custom_call_target"), Some(AttrValue::Str(_))) =>
        {
            return Err("custom-call needs custom_call_target".into());
        }
        _ => {}
    }
    Ok(())
}

/// Whether a name can be written in the text and read back as itself:
/// the parser's name characters (`[A-Za-z0-9_.-]`), not empty, and not a
/// keyword the parser takes before a name (`ROOT` for instructions,
/// `ENTRY` for computations). Names from a proto can hold anything; XLA
/// would print them raw and fail to read its own text, so they are
/// refused here rather than printed in a form that does not parse.
fn check_name(name: &str, computation: bool) -> Result<(), String> {
    if name.is_empty() {
        return Err("a name must not be empty".into());
    }
    let name_byte = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-');
    if name.as_bytes().iter().all(name_byte) && name != "ROOT" && name != "ENTRY" {
        return Ok(());
    }
    if let Some(c) = name
        .chars()
        .find(|&c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
    {
        return Err(format!(
            "the text cannot spell {c:?} in a name (names are letters, digits, '_', '.' and '-')"
        ));
    }
    let keyword = if computation { "ENTRY" } else { "ROOT" };
    if name == keyword {
        return Err(format!("{keyword} is a keyword of the text, not a name"));
    }
    Ok(())
}

/// Every array in a shape has a layout of its own rank, if any.
fn check_layouts(shape: &Shape) -> Result<(), String> {
    match shape {
        Shape::Array(a) => match &a.layout {
            Some(l) if l.minor_to_major.len() != a.rank() => Err(format!(
                "the layout of {} has {} minor-to-major entries for rank {}",
                shape.to_text(false),
                l.minor_to_major.len(),
                a.rank()
            )),
            _ => Ok(()),
        },
        Shape::Tuple(elems) => elems.iter().try_for_each(check_layouts),
        _ => Ok(()),
    }
}

/// Operand counts and required attributes, as XLA's parser checks them
/// (`super::signature`), so that a module read from a proto is held to
/// what its text would be.
fn check_operands_and_attrs(module: &Module, cid: CompId, id: InstrId) -> Result<(), String> {
    use super::signature as checks;
    let comp = module.comp(cid);
    let instr = comp.instr(id);
    let op = instr.opcode;
    let n = instr.operands().len();
    let first_shape = instr.operands().first().map(|&o| &*comp.instr(o).shape);
    let pred_branch = op == Opcode::Conditional
        && first_shape.is_some_and(|s| {
            s.rank() == 0 && s.element_type() == super::PrimitiveType::Pred && !s.is_tuple()
        });
    if !matches!(
        op,
        Opcode::AsyncStart | Opcode::AsyncUpdate | Opcode::AsyncDone
    ) {
        if let Some(want) = checks::fixed_operand_count(op) {
            if n != want {
                return Err(format!(
                    "{op} expects {want} operands, but has {n} operands"
                ));
            }
        }
        checks::check_variadic_operands(op, n)?;
    }
    for key in checks::required_attrs(op, instr.async_wrapped, pred_branch) {
        if instr.attr(key).is_none() {
            return Err(format!("attribute {key} is expected but not seen"));
        }
    }
    if op == Opcode::Conditional {
        let branches = if pred_branch {
            2
        } else {
            match instr.attr("branch_computations") {
                Some(AttrValue::Comps(c)) => c.len(),
                _ => 0,
            }
        };
        if branches == 0 {
            return Err("conditional needs at least one branch computation".into());
        }
        if n != branches + 1 {
            return Err(format!(
                "conditional with {branches} branches expects {} operands, but has {n}",
                branches + 1
            ));
        }
    }
    Ok(())
}

/// `{1,2}` of an attribute; `None` when absent.
fn int_list(instr: &super::Instruction, key: &str) -> Result<Option<Vec<i64>>, String> {
    match instr.attr(key) {
        None => Ok(None),
        Some(AttrValue::Ints(v)) => Ok(Some(v.to_vec())),
        Some(AttrValue::Int(v)) => Ok(Some(vec![*v])),
        Some(_) => Err(format!("{key} is not a list of integers")),
    }
}

/// An integer attribute; `None` when absent.
fn int_value(instr: &super::Instruction, key: &str) -> Result<Option<i64>, String> {
    match instr.attr(key) {
        None => Ok(None),
        Some(AttrValue::Int(v)) => Ok(Some(*v)),
        Some(_) => Err(format!("{key} is not an integer")),
    }
}

/// Each of `dims` names a dimension of a rank-`rank` array; with
/// `distinct`, none twice; with `sorted`, in increasing order.
fn dims_in_range(
    what: &str,
    dims: &[i64],
    rank: usize,
    distinct: bool,
    sorted: bool,
) -> Result<(), String> {
    for (i, &d) in dims.iter().enumerate() {
        if usize::try_from(d).map_or(true, |d| d >= rank) {
            return Err(format!(
                "{what}: dimension {d} is out of range for rank {rank}"
            ));
        }
        let before = dims.get(..i).unwrap_or_default();
        if distinct && before.contains(&d) {
            return Err(format!("{what}: dimension {d} is named twice"));
        }
        if sorted && before.last().is_some_and(|&p| p >= d) {
            return Err(format!(
                "{what}: dimensions must be in increasing order, found {dims:?}"
            ));
        }
    }
    Ok(())
}

/// Every dimension number, index and window an instruction's attributes
/// hold, against the rank it indexes (XLA's shape inference rules), so
/// that nothing downstream indexes a shape out of bounds.
fn check_dimension_numbers(comp: &Computation, instr: &super::Instruction) -> Result<(), String> {
    let operand_shape = |i: usize| -> Option<&Shape> {
        instr
            .operands()
            .get(i)
            .and_then(|&o| comp.get(o))
            .map(|o| &*o.shape)
    };
    let operand_rank = |i: usize| operand_shape(i).map_or(0, Shape::rank);
    let rank = instr.shape.rank();
    let op = match (instr.opcode, instr.async_wrapped) {
        (Opcode::AsyncStart, Some(w)) => w,
        (op, _) => op,
    };
    let dims = || int_list(instr, "dimensions");
    match op {
        Opcode::Reduce => {
            if let Some(d) = dims()? {
                let inputs = instr.operands().len() / 2;
                for i in 0..inputs {
                    dims_in_range("reduce dimensions", &d, operand_rank(i), true, false)?;
                }
            }
        }
        Opcode::Transpose => {
            if let Some(d) = dims()? {
                let r = operand_rank(0);
                if d.len() != r {
                    return Err(format!(
                        "transpose dimensions {d:?} must be a permutation of the operand's {r} dimensions"
                    ));
                }
                dims_in_range("transpose dimensions", &d, r, true, false)?;
                if rank != r {
                    return Err("transpose changes the rank".into());
                }
            }
        }
        Opcode::Broadcast => {
            if let Some(d) = dims()? {
                dims_in_range("broadcast dimensions", &d, rank, true, false)?;
            }
        }
        Opcode::Reverse => {
            if let Some(d) = dims()? {
                dims_in_range("reverse dimensions", &d, operand_rank(0), true, false)?;
            }
        }
        Opcode::Sort
        | Opcode::Concatenate
        | Opcode::AllGather
        | Opcode::AllGatherStart
        | Opcode::ReduceScatter
        | Opcode::AllToAll
        | Opcode::RaggedAllToAll
        | Opcode::GetDimensionSize
        | Opcode::SetDimensionSize => {
            if let Some(d) = dims()? {
                // Each operand for sort and concatenate; the first for the
                // rest (the collectives' variadic forms may carry scalars,
                // as torch-xla's all-gather does).
                let n = match op {
                    Opcode::Sort | Opcode::Concatenate => instr.operands().len(),
                    _ => 1,
                };
                for i in 0..n {
                    dims_in_range(
                        &format!("{op} dimensions"),
                        &d,
                        operand_rank(i),
                        true,
                        false,
                    )?;
                }
            }
        }
        Opcode::Iota => {
            if let Some(d) = int_value(instr, "iota_dimension")? {
                dims_in_range("iota_dimension", &[d], rank, false, false)?;
            }
        }
        Opcode::BatchNormTraining | Opcode::BatchNormInference | Opcode::BatchNormGrad => {
            if let Some(d) = int_value(instr, "feature_index")? {
                dims_in_range("feature_index", &[d], operand_rank(0), false, false)?;
            }
        }
        Opcode::Dot => {
            let l = operand_rank(0);
            let r = operand_rank(1);
            let lc = int_list(instr, "lhs_contracting_dims")?.unwrap_or_default();
            let rc = int_list(instr, "rhs_contracting_dims")?.unwrap_or_default();
            let lb = int_list(instr, "lhs_batch_dims")?.unwrap_or_default();
            let rb = int_list(instr, "rhs_batch_dims")?.unwrap_or_default();
            dims_in_range("lhs_contracting_dims", &lc, l, true, false)?;
            dims_in_range("rhs_contracting_dims", &rc, r, true, false)?;
            dims_in_range("lhs_batch_dims", &lb, l, true, false)?;
            dims_in_range("rhs_batch_dims", &rb, r, true, false)?;
            if lc.len() != rc.len() || lb.len() != rb.len() {
                return Err(
                    "dot: lhs and rhs must name as many contracting (and batch) dimensions".into(),
                );
            }
            if lc.iter().any(|d| lb.contains(d)) || rc.iter().any(|d| rb.contains(d)) {
                return Err("dot: a dimension is both contracting and batch".into());
            }
        }
        Opcode::Gather => check_gather(instr, operand_rank(0), operand_shape(1), rank)?,
        Opcode::Scatter => {
            let inputs = instr.operands().len() / 2;
            check_scatter(
                instr,
                operand_rank(0),
                operand_shape(inputs),
                operand_rank(inputs + 1),
            )?
        }
        Opcode::Slice => {
            if let Some(AttrValue::Slice(s)) = instr.attr("slice") {
                let (n, r) = (s.len(), operand_rank(0));
                if n != r {
                    return Err(format!(
                        "slice has {n} dimensions, the operand has rank {r}"
                    ));
                }
            }
        }
        Opcode::DynamicSlice => {
            if let Some(sizes) = int_list(instr, "dynamic_slice_sizes")? {
                let dims = operand_shape(0).map(Shape::dims).unwrap_or_default();
                if sizes.len() != dims.len() {
                    return Err(format!(
                        "dynamic_slice_sizes has {} sizes, the operand has rank {}",
                        sizes.len(),
                        dims.len()
                    ));
                }
                for (&s, &d) in sizes.iter().zip(dims) {
                    if s < 0 || (d >= 0 && s > d) {
                        return Err(format!(
                            "dynamic_slice_sizes {sizes:?} do not fit in the operand's dimensions {dims:?}"
                        ));
                    }
                }
            }
        }
        Opcode::Pad => {
            if let Some(AttrValue::Padding(p)) = instr.attr("padding") {
                let (n, r) = (p.len(), operand_rank(0));
                if n != r {
                    return Err(format!(
                        "padding has {n} dimensions, the operand has rank {r}"
                    ));
                }
            }
        }
        Opcode::CustomCall => {
            // One layout constraint per operand, each of its shape (as the
            // text parser checks it).
            if let Some(AttrValue::Shapes(shapes)) = instr.attr("operand_layout_constraints") {
                if shapes.len() != instr.operands().len() {
                    return Err(format!(
                        "Expected {} operand layout constraints, {} given",
                        instr.operands().len(),
                        shapes.len()
                    ));
                }
                for (i, s) in shapes.iter().enumerate() {
                    if !operand_shape(i).is_some_and(|o| s.compatible(o)) {
                        return Err(format!(
                            "operand layout constraint {i} ({}) is not compatible with the operand",
                            s.to_text(true)
                        ));
                    }
                }
            }
        }
        Opcode::ReduceWindow => {
            if let Some(AttrValue::Window(w)) = instr.attr("window") {
                let (n, r) = (w.dims.len(), operand_rank(0));
                if n != r {
                    return Err(format!(
                        "window has {n} dimensions, the operand has rank {r}"
                    ));
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// The size of a gather's or scatter's index vector: dimension
/// `index_vector_dim` of the indices, or 1 when it is their rank.
fn index_vector_size(indices: Option<&Shape>, ivd: i64) -> Option<i64> {
    let dims = indices?.dims();
    match usize::try_from(ivd).ok()? {
        d if d == dims.len() => Some(1),
        d => dims.get(d).copied(),
    }
}

fn check_gather(
    instr: &super::Instruction,
    operand_rank: usize,
    indices: Option<&Shape>,
    rank: usize,
) -> Result<(), String> {
    let get = |k: &str| int_list(instr, k).map(Option::unwrap_or_default);
    let offset = get("offset_dims")?;
    let collapsed = get("collapsed_slice_dims")?;
    let start_map = get("start_index_map")?;
    let batching = get("operand_batching_dims")?;
    let indices_batching = get("start_indices_batching_dims")?;
    let indices_rank = indices.map_or(0, Shape::rank);
    dims_in_range("gather offset_dims", &offset, rank, true, true)?;
    dims_in_range(
        "gather collapsed_slice_dims",
        &collapsed,
        operand_rank,
        true,
        true,
    )?;
    dims_in_range(
        "gather start_index_map",
        &start_map,
        operand_rank,
        true,
        false,
    )?;
    dims_in_range(
        "gather operand_batching_dims",
        &batching,
        operand_rank,
        true,
        true,
    )?;
    let ivd = int_value(instr, "index_vector_dim")?.unwrap_or(indices_rank as i64);
    if usize::try_from(ivd).map_or(true, |d| d > indices_rank) {
        return Err(format!(
            "gather index_vector_dim {ivd} is out of range for indices of rank {indices_rank}"
        ));
    }
    dims_in_range(
        "gather start_indices_batching_dims",
        &indices_batching,
        indices_rank,
        true,
        false,
    )?;
    if offset.len() + collapsed.len() + batching.len() != operand_rank {
        return Err(format!(
            "gather: offset_dims ({}), collapsed_slice_dims ({}) and operand_batching_dims ({}) must cover the operand's {operand_rank} dimensions",
            offset.len(),
            collapsed.len(),
            batching.len()
        ));
    }
    if index_vector_size(indices, ivd) != Some(start_map.len() as i64) {
        return Err(format!(
            "gather start_index_map has {} entries, the index vector has {}",
            start_map.len(),
            index_vector_size(indices, ivd).unwrap_or(0)
        ));
    }
    if let Some(sizes) = int_list(instr, "slice_sizes")? {
        if sizes.len() != operand_rank {
            return Err(format!(
                "gather slice_sizes has {} sizes, the operand has rank {operand_rank}",
                sizes.len()
            ));
        }
    }
    Ok(())
}

fn check_scatter(
    instr: &super::Instruction,
    operand_rank: usize,
    indices: Option<&Shape>,
    updates_rank: usize,
) -> Result<(), String> {
    let get = |k: &str| int_list(instr, k).map(Option::unwrap_or_default);
    let window = get("update_window_dims")?;
    let inserted = get("inserted_window_dims")?;
    let to_operand = get("scatter_dims_to_operand_dims")?;
    let batching = get("input_batching_dims")?;
    let indices_batching = get("scatter_indices_batching_dims")?;
    let indices_rank = indices.map_or(0, Shape::rank);
    dims_in_range(
        "scatter update_window_dims",
        &window,
        updates_rank,
        true,
        true,
    )?;
    dims_in_range(
        "scatter inserted_window_dims",
        &inserted,
        operand_rank,
        true,
        true,
    )?;
    dims_in_range(
        "scatter scatter_dims_to_operand_dims",
        &to_operand,
        operand_rank,
        true,
        false,
    )?;
    dims_in_range(
        "scatter input_batching_dims",
        &batching,
        operand_rank,
        true,
        true,
    )?;
    let ivd = int_value(instr, "index_vector_dim")?.unwrap_or(indices_rank as i64);
    if usize::try_from(ivd).map_or(true, |d| d > indices_rank) {
        return Err(format!(
            "scatter index_vector_dim {ivd} is out of range for indices of rank {indices_rank}"
        ));
    }
    dims_in_range(
        "scatter scatter_indices_batching_dims",
        &indices_batching,
        indices_rank,
        true,
        false,
    )?;
    if window.len() + inserted.len() + batching.len() != operand_rank {
        return Err(format!(
            "scatter: update_window_dims ({}), inserted_window_dims ({}) and input_batching_dims ({}) must cover the operand's {operand_rank} dimensions",
            window.len(),
            inserted.len(),
            batching.len()
        ));
    }
    if index_vector_size(indices, ivd) != Some(to_operand.len() as i64) {
        return Err(format!(
            "scatter scatter_dims_to_operand_dims has {} entries, the index vector has {}",
            to_operand.len(),
            index_vector_size(indices, ivd).unwrap_or(0)
        ));
    }
    Ok(())
}

/// An instruction's `metadata={... stack_frame_id=N}` names a frame of the
/// module's table.
fn check_frame_ref(module: &Module, instr: &super::Instruction) -> Result<(), String> {
    let Some(AttrValue::Metadata(md)) = instr.attr("metadata") else {
        return Ok(());
    };
    let id = md.stack_frame_id;
    let frames = module
        .stack_frames
        .as_ref()
        .map_or(0, |f| f.stack_frames.len());
    if id != 0 && usize::try_from(id).map_or(true, |i| i > frames) {
        return Err(format!(
            "metadata stack_frame_id={id} names no frame (the module has {frames})"
        ));
    }
    Ok(())
}

/// The stack-frame tables hold together: every id names an entry of its
/// table, and no frame is its own ancestor (what the proto reader needs
/// of the protos the writer makes).
fn check_stack_frames(module: &Module) -> Result<(), VerifyError> {
    let Some(t) = &module.stack_frames else {
        return Ok(());
    };
    let fail = |message: String| VerifyError {
        computation: String::new(),
        instruction: None,
        message,
        pos: None,
    };
    let in_table = |id: i64, len: usize| usize::try_from(id).is_ok_and(|i| i >= 1 && i <= len);
    for (k, l) in t.file_locations.iter().enumerate() {
        if !in_table(l.file_name_id, t.file_names.len()) {
            return Err(fail(format!(
                "FileLocations entry {}: file_name_id={} names no entry of FileNames ({} entries)",
                k + 1,
                l.file_name_id,
                t.file_names.len()
            )));
        }
        if !in_table(l.function_name_id, t.function_names.len()) {
            return Err(fail(format!(
                "FileLocations entry {}: function_name_id={} names no entry of FunctionNames ({} entries)",
                k + 1,
                l.function_name_id,
                t.function_names.len()
            )));
        }
    }
    let n = t.stack_frames.len();
    for (k, f) in t.stack_frames.iter().enumerate() {
        if !in_table(f.file_location_id, t.file_locations.len()) {
            return Err(fail(format!(
                "StackFrames entry {}: file_location_id={} names no entry of FileLocations ({} entries)",
                k + 1,
                f.file_location_id,
                t.file_locations.len()
            )));
        }
        // The text writes the parent plus one (1: no parent).
        if f.parent_frame_id != 0 && !in_table(f.parent_frame_id, n) {
            return Err(fail(format!(
                "StackFrames entry {}: parent_frame_id={} names no frame ({n} frames; 1 is none)",
                k + 1,
                f.parent_frame_id + 1
            )));
        }
    }
    // No cycles: follow each chain at most n steps, marking frames known
    // to reach the root.
    let mut reaches_root = vec![false; n];
    for start in 0..n {
        let mut chain = Vec::new();
        let mut cur = start;
        loop {
            if reaches_root.get(cur).copied().unwrap_or(true) {
                break;
            }
            if chain.len() > n {
                return Err(fail(format!(
                    "StackFrames entry {}: its parent chain has a cycle",
                    start + 1
                )));
            }
            chain.push(cur);
            let parent = t.stack_frames.get(cur).map_or(0, |f| f.parent_frame_id);
            match usize::try_from(parent - 1) {
                Ok(p) => cur = p,
                Err(_) => break,
            }
        }
        for c in chain {
            if let Some(r) = reaches_root.get_mut(c) {
                *r = true;
            }
        }
    }
    Ok(())
}

/// No computation calls itself, directly or through others (a call graph
/// with a cycle has no evaluation and no XLA post order). Depth-first with
/// an explicit stack: call graphs of generated modules are deep.
fn check_call_graph(module: &Module) -> Result<(), VerifyError> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let ids: Vec<CompId> = module.computation_ids().collect();
    let slots = ids.iter().map(|c| c.index() + 1).max().unwrap_or(0);
    let mut mark = vec![Mark::New; slots];
    // Per computation: its calling instructions and what each calls.
    let calls_of = |c: CompId| -> Vec<(InstrId, CompId)> {
        module.get_comp(c).map_or_else(Vec::new, |comp| {
            comp.instructions()
                .flat_map(|(i, instr)| instr.called_computations().map(move |c| (i, c)))
                .collect()
        })
    };
    for &root in &ids {
        if mark.get(root.index()) != Some(&Mark::New) {
            continue;
        }
        // (caller, its calls, the next call to follow)
        type Frame = (CompId, Vec<(InstrId, CompId)>, usize);
        let mut stack: Vec<Frame> = vec![(root, calls_of(root), 0)];
        if let Some(m) = mark.get_mut(root.index()) {
            *m = Mark::Open;
        }
        while let Some(top) = stack.last_mut() {
            let (caller, calls, next) = (top.0, &top.1, top.2);
            let Some(&(instr, callee)) = calls.get(next) else {
                if let Some(m) = mark.get_mut(caller.index()) {
                    *m = Mark::Done;
                }
                stack.pop();
                continue;
            };
            top.2 += 1;
            match mark.get(callee.index()) {
                Some(Mark::New) => {
                    if let Some(m) = mark.get_mut(callee.index()) {
                        *m = Mark::Open;
                    }
                    let calls = calls_of(callee);
                    stack.push((callee, calls, 0));
                }
                Some(Mark::Open) => {
                    let comp = module.comp(caller);
                    let callee_name = module
                        .get_comp(callee)
                        .map_or_else(String::new, |c| c.name.to_string());
                    return Err(VerifyError {
                        computation: comp.name.to_string(),
                        instruction: comp.get(instr).map(|i| i.name.to_string()),
                        message: format!(
                            "computation {callee_name} calls itself through computation {}",
                            comp.name
                        ),
                        pos: comp.source_pos(instr),
                    });
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// The header's `entry_computation_layout`, if written, has the entry's
/// signature: as many parameters, each of the parameter's type and
/// dimensions, and the root's (layouts may differ: that is what the
/// attribute is for).
fn check_entry_layout(module: &Module) -> Result<(), VerifyError> {
    let (Some(layout), Some(entry)) = (
        module.entry_computation_layout(),
        module.entry_opt().and_then(|e| module.get_comp(e)),
    ) else {
        return Ok(());
    };
    let fail = |message: String| VerifyError {
        computation: entry.name.to_string(),
        instruction: None,
        message: format!("entry_computation_layout: {message}"),
        pos: None,
    };
    let params = entry.parameters();
    if params.len() != layout.parameters.len() {
        return Err(fail(format!(
            "{} parameters, but the entry computation {} has {}",
            layout.parameters.len(),
            entry.name,
            params.len()
        )));
    }
    for (k, (p, s)) in params.iter().zip(&layout.parameters).enumerate() {
        let have = &entry.instr(*p).shape;
        if !same_type_and_dims(have, s) {
            return Err(fail(format!(
                "parameter {k} is {}, but the entry computation's parameter {} is {}",
                s.to_text(true),
                entry.instr(*p).name,
                have.to_text(true)
            )));
        }
    }
    if let Some(root) = entry.root_opt().and_then(|r| entry.get(r)) {
        if !same_type_and_dims(&root.shape, &layout.result) {
            return Err(fail(format!(
                "the result is {}, but the entry computation's root {} is {}",
                layout.result.to_text(true),
                root.name,
                root.shape.to_text(true)
            )));
        }
    }
    Ok(())
}

/// XLA's `ShapeUtil::Compatible`: equal ignoring layouts and which
/// dimensions are dynamic.
fn same_type_and_dims(a: &Shape, b: &Shape) -> bool {
    match (a, b) {
        (Shape::Array(x), Shape::Array(y)) => x.element_type == y.element_type && x.dims == y.dims,
        (Shape::Tuple(x), Shape::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_type_and_dims(p, q))
        }
        (Shape::Token, Shape::Token) | (Shape::Opaque, Shape::Opaque) => true,
        _ => false,
    }
}
