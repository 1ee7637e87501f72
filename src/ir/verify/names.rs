//! Names: each one the text can spell and read back as itself, and
//! unique in the module (computations among computations, instructions
//! among every instruction of the module).

use super::{comp_error, module_error, VerifyError};
use crate::ir::{CompId, Computation, InstrId, Instruction, Module};
use crate::util::FxSet;
use std::hash::BuildHasher;

/// A computation's name is unique in the module and one the text can
/// spell.
pub(super) fn check_computation_name<'m>(
    seen: &mut FxSet<&'m str>,
    comp: &'m Computation,
) -> Result<(), VerifyError> {
    if !seen.insert(&comp.name) {
        return Err(comp_error(
            comp,
            None,
            format!("computation name {} is not unique in the module", comp.name),
        ));
    }
    check_name(&comp.name, true).map_err(|m| VerifyError {
        computation: format!("{:?}", &*comp.name),
        ..module_error(format!("computation name {:?}: {m}", comp.name))
    })
}

/// The instruction names seen so far in the module, by their hashes: half
/// the memory of the names' set on a million-instruction module. A hash
/// seen again is a name seen again, or (once in 2^64) not: the names
/// before tell. Hashed by foldhash's quality variant: names of a large
/// module differ in a digit or two, and a weak hash would send thousands
/// of them down that slow path.
pub(super) struct SeenNames {
    hashes: FxSet<u64>,
}

pub(super) const NAME_HASHER: foldhash::quality::FixedState =
    foldhash::quality::FixedState::with_seed(0);

impl SeenNames {
    pub(super) fn new(capacity: usize) -> SeenNames {
        let mut hashes: FxSet<u64> = FxSet::default();
        hashes.reserve(capacity);
        SeenNames { hashes }
    }

    /// Records `name` of instruction `id` of `cid`; whether an instruction
    /// before it was named so.
    fn seen_before(&mut self, module: &Module, cid: CompId, id: InstrId, name: &str) -> bool {
        !self.hashes.insert(NAME_HASHER.hash_one(name)) && named_before(module, cid, id, name)
    }
}

/// An instruction's name is one the text can spell, and unique in the
/// module.
pub(super) fn check_instruction_name(
    module: &Module,
    cid: CompId,
    comp: &Computation,
    id: InstrId,
    instr: &Instruction,
    names: &mut SeenNames,
) -> Result<(), VerifyError> {
    if let Err(m) = check_name(&instr.name, false) {
        return Err(VerifyError {
            instruction: Some(format!("{:?}", instr.name.as_str())),
            ..comp_error(
                comp,
                None,
                format!("instruction name {:?}: {m}", instr.name.as_str()),
            )
        });
    }
    if names.seen_before(module, cid, id, &instr.name) {
        return Err(comp_error(
            comp,
            Some(id),
            format!(
                "instruction name {} is not unique in the module",
                instr.name
            ),
        ));
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

/// Whether a name can be written in the text and read back as itself:
/// the parser's name characters (`[A-Za-z0-9_.-]`), not empty, and not a
/// keyword the parser takes before a name (`ROOT` for instructions,
/// `ENTRY` for computations). Names from a proto can hold anything; XLA
/// would print them raw and fail to read its own text, so they are
/// refused here rather than printed in a form that does not parse.
pub(super) fn check_name(name: &str, computation: bool) -> Result<(), String> {
    if name.is_empty() {
        return Err("a name must not be empty".into());
    }
    if name.bytes().all(crate::ir::is_name_byte) && name != "ROOT" && name != "ENTRY" {
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
