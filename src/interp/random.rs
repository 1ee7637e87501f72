//! Seeded inputs for a module's parameters (when no `.npz` is given).
//!
//! Floats are N(0,1), rounded once to the type; e8m0 scales are 2^k for k
//! in [-4, 4]; integers are uniform in [0, 8) (small, so that loop bounds
//! and indices stay sensible); pred is a fair coin. The generator is
//! SplitMix64, so a seed gives the same inputs on every machine.

use super::array::{shape_dims, storage, Array, Data, Storage, Value};
use super::convert::from_f64_vec;
use super::{err, Result};
use crate::ir::{PrimitiveType, Shape};

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform();
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

/// A random value of `shape`.
pub fn random_value(shape: &Shape, rng: &mut Rng) -> Result<Value> {
    match shape {
        Shape::Tuple(t) => Ok(Value::Tuple(
            t.iter()
                .map(|s| random_value(s, rng))
                .collect::<Result<Vec<_>>>()?
                .into(),
        )),
        Shape::Token => Ok(Value::Token),
        Shape::Opaque => Err(err("cannot make an opaque input")),
        Shape::Array(a) => {
            let dims = shape_dims(shape)?;
            let n = super::array::element_count(&dims)?;
            let ty = a.element_type;
            let data = match storage(ty)? {
                Storage::Pred => Data::Pred((0..n).map(|_| rng.next_u64() & 1 == 1).collect()),
                Storage::S => Data::S((0..n).map(|_| (rng.next_u64() % 8) as i64).collect()),
                Storage::U => Data::U((0..n).map(|_| rng.next_u64() % 8).collect()),
                _ if ty == PrimitiveType::F8E8M0FNU => {
                    let v: Vec<f64> = (0..n)
                        .map(|_| 2f64.powi((rng.next_u64() % 9) as i32 - 4))
                        .collect();
                    from_f64_vec(ty, &v)?
                }
                _ => {
                    let v: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
                    from_f64_vec(ty, &v)?
                }
            };
            Ok(Value::array(Array::new(ty, dims, data)?))
        }
    }
}

/// Random arguments for every parameter of the entry computation.
pub fn random_inputs(module: &crate::ir::Module, seed: u64) -> Result<Vec<Value>> {
    let entry = module
        .entry_opt()
        .ok_or_else(|| err("module has no entry computation"))?;
    let comp = module.comp(entry);
    let mut rng = Rng::new(seed);
    comp.parameters()
        .iter()
        .map(|&p| {
            let instr = comp.instr(p);
            random_value(&instr.shape, &mut rng).map_err(|e| {
                let n = instr.parameter_number().unwrap_or_default();
                let mut e = e.locate(comp, instr);
                e.message = format!("parameter {n}: {}", e.message);
                e
            })
        })
        .collect()
}
