//! Keeping some instructions' values while a module is evaluated: the
//! real inputs of the regions `--check-numerics` proves rewrite by rewrite
//! (`region.rs`), taken from one evaluation of the module before the
//! passes.
//!
//! Only the first evaluation of each computation is kept (a while body's
//! first iteration, a called computation's first call): every evaluation
//! of a computation evaluates the same instructions, so the values kept
//! are one consistent set. A value may be kept cut down to a prefix block
//! of its dimensions (a sliced region reads only that), so the memory it
//! holds is what the check uses.

use super::array::{strides, Array, Value};
use super::Result;
use crate::ir::{CompId, InstrId, Module};
use crate::util::{FxMap, FxSet};
use std::cell::RefCell;
use std::sync::Arc;

/// What to keep: per computation, per instruction, the dimensions to keep
/// (a prefix block; the instruction's own dimensions keep it whole).
#[derive(Clone, Debug, Default)]
pub struct CaptureRequest {
    pub wanted: FxMap<CompId, FxMap<InstrId, Vec<usize>>>,
    /// Instructions of which only the largest finite magnitude is kept.
    pub magnitudes: FxMap<CompId, FxSet<InstrId>>,
}

impl CaptureRequest {
    pub fn add(&mut self, comp: CompId, instr: InstrId, dims: Vec<usize>) {
        self.wanted.entry(comp).or_default().insert(instr, dims);
    }

    pub fn add_magnitude(&mut self, comp: CompId, instr: InstrId) {
        self.magnitudes.entry(comp).or_default().insert(instr);
    }

    pub fn is_empty(&self) -> bool {
        self.wanted.values().all(|m| m.is_empty()) && self.magnitudes.values().all(|m| m.is_empty())
    }

    pub fn contains(&self, comp: CompId, instr: InstrId) -> bool {
        self.wanted
            .get(&comp)
            .is_some_and(|m| m.contains_key(&instr))
    }

    /// The bytes the kept values hold (at the interpreter's storage width).
    pub fn bytes(&self, module: &Module) -> u64 {
        let mut total = 0u64;
        for (&c, instrs) in &self.wanted {
            let comp = module.comp(c);
            for (&i, dims) in instrs {
                let ty = comp.instr(i).shape.element_type();
                let shape = crate::ir::Shape::array(ty, dims.iter().map(|&d| d as i64).collect());
                total = total.saturating_add(super::budget::shape_bytes(&shape));
            }
        }
        total
    }
}

/// The hook an [`super::Interpreter`] calls: keeps the requested values.
#[derive(Debug, Default)]
pub struct Capture {
    request: CaptureRequest,
    /// Computations whose first evaluation has begun.
    begun: RefCell<FxSet<CompId>>,
    kept: RefCell<FxMap<(CompId, InstrId), Arc<Array>>>,
    magnitudes: RefCell<FxMap<(CompId, InstrId), f64>>,
}

impl Capture {
    pub fn new(request: CaptureRequest) -> Capture {
        Capture {
            request,
            ..Capture::default()
        }
    }

    /// Called when computation `cid` starts evaluating: whether its
    /// instructions' values are wanted this time.
    pub(crate) fn begin(&self, cid: CompId) -> bool {
        (self.request.wanted.contains_key(&cid) || self.request.magnitudes.contains_key(&cid))
            && self.begun.borrow_mut().insert(cid)
    }

    /// Whether instruction `id` of some computation is to be kept whole
    /// (a sort that knows so computes all of its result, not only what
    /// its users read).
    pub(crate) fn may_keep(&self, id: InstrId) -> bool {
        self.request.wanted.values().any(|m| m.contains_key(&id))
    }

    /// Whether the value of instruction `id` of computation `cid` is kept
    /// (whole or as its magnitude).
    pub(crate) fn wants(&self, cid: CompId, id: InstrId) -> bool {
        self.request.contains(cid, id)
            || self
                .request
                .magnitudes
                .get(&cid)
                .is_some_and(|m| m.contains(&id))
    }

    /// Called with each value of a computation [`Capture::begin`] wanted.
    pub(crate) fn offer(&self, cid: CompId, id: InstrId, v: &Value) -> Result<()> {
        if let Value::Array(a) = v {
            if self
                .request
                .magnitudes
                .get(&cid)
                .is_some_and(|m| m.contains(&id))
            {
                self.magnitudes
                    .borrow_mut()
                    .insert((cid, id), super::compare::max_finite(a));
            }
        }
        let Some(dims) = self.request.wanted.get(&cid).and_then(|m| m.get(&id)) else {
            return Ok(());
        };
        let Value::Array(a) = v else {
            return Ok(());
        };
        let kept = if &a.dims == dims {
            a.clone()
        } else {
            Arc::new(prefix_block(a, dims)?)
        };
        self.kept.borrow_mut().insert((cid, id), kept);
        Ok(())
    }

    /// The magnitudes kept, by (computation, instruction).
    pub fn magnitudes(&self) -> FxMap<(CompId, InstrId), f64> {
        self.magnitudes.borrow().clone()
    }

    /// The values kept, by (computation, instruction).
    pub fn into_values(self) -> FxMap<(CompId, InstrId), Arc<Array>> {
        self.kept.into_inner()
    }
}

/// The block of `a` at the start of every dimension, `dims` long in each
/// (each no longer than `a`'s).
pub fn prefix_block(a: &Array, dims: &[usize]) -> Result<Array> {
    if dims.len() != a.dims.len() || dims.iter().zip(&a.dims).any(|(d, n)| d > n) {
        return Err(super::err(format!(
            "internal error: block {dims:?} of {}",
            a.shape_text()
        )));
    }
    let step: Vec<isize> = strides(&a.dims).iter().map(|&s| s as isize).collect();
    Array::new(a.ty, dims.to_vec(), a.data.strided(dims, &step, 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::array::Data;
    use crate::ir::PrimitiveType;

    #[test]
    fn prefix_block_keeps_the_leading_indices_of_each_dimension() {
        let dims = vec![3, 4, 5];
        let a = Array::new(
            PrimitiveType::F32,
            dims.clone(),
            Data::F32((0..60).map(|i| i as f32).collect()),
        )
        .unwrap();
        for block in [
            vec![3, 4, 5],
            vec![2, 3, 5],
            vec![3, 1, 2],
            vec![1, 4, 1],
            vec![0, 4, 5],
        ] {
            let mut want = Vec::new();
            for i in 0..block[0] {
                for j in 0..block[1] {
                    for k in 0..block[2] {
                        want.push((i * 20 + j * 5 + k) as f32);
                    }
                }
            }
            let got = prefix_block(&a, &block).unwrap();
            assert_eq!(got.dims, block);
            assert!(matches!(&got.data, Data::F32(v) if *v == want), "{block:?}");
        }
        assert!(prefix_block(&a, &[4, 4, 5]).is_err());
        assert!(prefix_block(&a, &[3, 4]).is_err());
    }
}
