//! The in-memory HLO IR.
//!
//! A [`Module`] owns [`Computation`]s; a computation owns its
//! [`Instruction`]s in an arena. Both are named by typed ids ([`CompId`],
//! [`InstrId`]) that stay valid until the thing they name is removed.
//! Operands are ids into the same computation and every instruction knows
//! its users, so replacing an instruction costs as much as its use count.
//! All mutation goes through [`Module::add_instruction`],
//! [`Computation::replace_all_uses`], [`Module::replace_instruction`] and
//! the dead-code removers; [`verify`] checks the invariants.

pub mod attrs;
pub mod computation;
pub mod instruction;
pub mod literal;
pub mod module;
pub mod opcode;
pub mod shape;
pub mod shared_str;
pub mod signature;
pub mod types;
pub mod verify;

pub use computation::{Computation, SourcePos};
pub use instruction::{
    ApiVersion, Attr, AttrValue, ComparisonDirection, ComparisonType, Instruction, Payload,
};
pub use literal::Literal;
pub use module::{
    Module, PrintOptions, ProgramShape, ProtoFrames, StackFrameIndex, StackFramePositions,
};
pub use opcode::Opcode;
pub use shape::{ArrayShape, Layout, LayoutExtras, Shape};
pub use shared_str::SharedStr;
pub use types::PrimitiveType;

macro_rules! id_type {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(u32);

        impl $name {
            pub(crate) fn new(index: usize) -> Self {
                $name(u32::try_from(index).expect("fewer than 2^32 entities"))
            }
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id_type!(
    /// An instruction of one computation.
    InstrId
);
id_type!(
    /// A computation of one module.
    CompId
);

/// The bytes a name may hold (letters, digits, `_`, `.`, `-`), as a
/// table: names are a good part of a module's text, and one lookup per
/// byte beats four comparisons.
const NAME_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'-';
        b += 1;
    }
    table
};

/// Whether a name may hold this byte.
pub(crate) fn is_name_byte(b: u8) -> bool {
    NAME_BYTES[b as usize]
}
