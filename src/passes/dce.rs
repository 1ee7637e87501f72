//! `dce`: removes instructions no one uses.
//!
//! before => after: `%dead = f32[] negate(%x)` (no users, not root) => gone,
//! with every operand that dies with it. Parameters and side-effecting
//! instructions (collectives, send/recv, infeed/outfeed, custom calls
//! marked `custom_call_has_side_effect=true`) stay.

use super::{Pass, PassContext, PassError};
use crate::ir::Module;

pub struct Dce;

impl Pass for Dce {
    fn name(&self) -> &'static str {
        "dce"
    }

    fn run(&mut self, module: &mut Module, _ctx: &mut PassContext) -> Result<bool, PassError> {
        Ok(module.remove_dead_code() > 0)
    }
}
