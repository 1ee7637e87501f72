//! The IR verifier: run after parsing and after every pass in tests.
//!
//! It checks the invariants the rest of the code assumes (operands defined,
//! user lists exact, names unique, roots set, called computations present)
//! and the shapes of the common ops.

use super::instruction::AttrValue;
use super::{CompId, InstrId, Module, Opcode, Shape, SourcePos};
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
    for (cid, comp) in module.computations() {
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
            if let Err(m) = check_shape(module, cid, id) {
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
                if out != Some(&o.dims()[i]) {
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
