//! HLO text: the parser and the printer.

pub mod checks;
pub mod error;
pub mod number;
pub mod parser;
pub mod printer;

pub use error::ParseError;
pub use parser::{parse_module, parse_module_owned};
pub use printer::{print_module, print_module_with, write_module};
