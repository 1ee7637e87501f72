//! `hlo-opt`: read XLA HLO modules, legalize them for AWS Neuron, write them
//! back exactly as XLA would.
//!
//! - [`ir`]: the module, computations and instructions, and the one
//!   mutation API every pass uses;
//! - [`text`]: the HLO text parser and printer;
//! - [`passes`]: the pass interface, registry and pipeline;
//! - [`proto`]: binary `HloModuleProto` reading and writing;
//! - [`contract`]: the checks of the Neuron custom calls run before the passes;
//! - [`interp`]: the reference interpreter, `.npz` I/O and `--check-numerics`;
//! - [`output`]: writing files without ever leaving a partial one.

pub mod cli;
pub mod driver;
pub mod interp;
pub mod ir;
pub mod neuron;
pub mod output;
pub mod passes;
pub mod proto;
pub mod text;
pub mod util;
