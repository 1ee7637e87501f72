//! HLO text: the parser and the printer.

pub mod checks;
pub mod debug_attributes;
pub mod error;
mod input;
pub mod number;
pub mod parser;
pub mod printer;

pub use error::{ParseError, ReadError};
pub use parser::{parse_module, parse_module_from_reader, parse_module_owned};
pub use printer::{print_module, print_module_with, write_module};
