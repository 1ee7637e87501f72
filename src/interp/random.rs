//! Seeded inputs for a module's parameters (when no `.npz` is given), and
//! the `rng` op.
//!
//! `rng(a, b), distribution=rng_uniform` draws uniformly from [a, b) (for
//! integers, `a + u mod (b - a)`), `distribution=rng_normal` from
//! N(a, b^2) (mean a, standard deviation b), both with this SplitMix64
//! generator seeded from a hash of the instruction's name and its operands'
//! values, so one module gives the same draws on every run, before and
//! after a pass that keeps the instruction. XLA leaves the generator to the
//! backend (XLA:CPU uses its own Philox stream), so these draws are not
//! comparable with XLA's, only with themselves.
//!
//! Floats are N(0,1), rounded once to the type; e8m0 scales are 2^k for k
//! in [-4, 4]; integers are uniform in [0, 8) (small, so that loop bounds
//! and indices stay sensible); pred is a fair coin. The generator is
//! SplitMix64, so a seed gives the same inputs on every machine.

use super::array::{shape_dims, storage, Array, Data, Storage, Value};
use super::convert::{f64_to_bf16, f64_to_f16, from_f64_vec};
use super::{err, expect_operands, operand, Result};
use crate::ir::{Instruction, PrimitiveType, Shape};

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

    /// The generator `draws` draws ahead of this one, as if
    /// [`Rng::next_u64`] had been called that many times (SplitMix64's
    /// state is a counter).
    fn ahead(&self, draws: u64) -> Rng {
        Rng(self
            .0
            .wrapping_add(draws.wrapping_mul(0x9E37_79B9_7F4A_7C15)))
    }

    /// `n` standard normals, the same values as `n` calls of
    /// [`Rng::normal`] (two draws each) and leaving the generator where
    /// they would, computed on all cores when `n` is large.
    pub fn normals(&mut self, n: usize) -> Vec<f64> {
        self.normals_as(n, |x| x)
    }

    /// [`Rng::normals`], each rounded by `put` as it is drawn (no f64
    /// array for an f32 input).
    pub fn normals_as<T: Copy + Send>(
        &mut self,
        n: usize,
        put: impl Fn(f64) -> T + Sync,
    ) -> Vec<T> {
        let start = Rng(self.0);
        // A log and a cosine per element: worth both cores sooner than a
        // plain loop.
        let worth = n >= super::par::MIN_PARALLEL / 8;
        let out = super::par::collect_chunks(n, 1, worth, |at, out| {
            let mut rng = start.ahead(2 * at as u64);
            out.extend((0..out.room()).map(|_| put(rng.normal())));
        });
        *self = start.ahead(2 * n as u64);
        out
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
                // Small non-negative values (0..8), within the range of
                // the narrow types too (s2 holds 0..2, u2 0..4).
                Storage::S => {
                    let m = 8.min(1u64 << (ty.bit_width().max(1) - 1));
                    Data::S((0..n).map(|_| (rng.next_u64() % m) as i64).collect())
                }
                Storage::U => {
                    let m = 8.min(1u64 << ty.bit_width().min(3));
                    Data::U((0..n).map(|_| rng.next_u64() % m).collect())
                }
                Storage::C64 | Storage::C128 => {
                    let v: Vec<num_complex::Complex64> = (0..n)
                        .map(|_| num_complex::Complex64::new(rng.normal(), rng.normal()))
                        .collect();
                    super::complex::from_c128(ty, v)?
                }
                _ if ty == PrimitiveType::F8E8M0FNU => {
                    let v: Vec<f64> = (0..n)
                        .map(|_| 2f64.powi((rng.next_u64() % 9) as i32 - 4))
                        .collect();
                    from_f64_vec(ty, &v)?
                }
                Storage::F32 => Data::F32(rng.normals_as(n, |x| x as f32)),
                Storage::F64 => Data::F64(rng.normals(n)),
                Storage::Bf16 => Data::Bf16(rng.normals_as(n, f64_to_bf16)),
                Storage::F16 => Data::F16(rng.normals_as(n, f64_to_f16)),
                _ => from_f64_vec(ty, &rng.normals(n))?,
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

/// The `rng` instruction (see the module doc).
pub fn rng_op(instr: &Instruction, ops: &[&Value]) -> Result<Array> {
    expect_operands(instr, ops, 2)?;
    let (a, b) = (operand(ops, 0)?, operand(ops, 1)?);
    if a.len() != 1 || b.len() != 1 || a.ty != b.ty {
        return Err(err(format!(
            "rng parameters {} and {} must be scalars of one type",
            a.shape_text(),
            b.shape_text()
        )));
    }
    let normal = match instr.attr("distribution") {
        Some(crate::ir::AttrValue::Distribution(d)) => match d {
            crate::ir::attrs::RandomDistribution::Uniform => false,
            crate::ir::attrs::RandomDistribution::Normal => true,
            crate::ir::attrs::RandomDistribution::Invalid => {
                return Err(err("rng distribution rng_invalid"))
            }
        },
        _ => return Err(err("rng without distribution")),
    };
    let ty = instr.shape.element_type();
    let dims = shape_dims(&instr.shape)?;
    let n = super::array::element_count(&dims)?;
    let (lo, hi) = (a.to_f64_vec()[0], b.to_f64_vec()[0]);
    // A fixed seed per instruction: its name and parameters.
    let mut seed = 0xCBF2_9CE4_8422_2325u64;
    for byte in instr
        .name
        .bytes()
        .chain(lo.to_bits().to_le_bytes())
        .chain(hi.to_bits().to_le_bytes())
    {
        seed = (seed ^ u64::from(byte)).wrapping_mul(0x100_0000_01B3);
    }
    let mut rng = Rng::new(seed);
    let data = match storage(ty)? {
        Storage::S | Storage::U if !normal => {
            let (ia, ib) = (a.index_at(0)?, b.index_at(0)?);
            let span = ib.saturating_sub(ia).max(1) as u64;
            let v: Vec<i64> = (0..n)
                .map(|_| ia + (rng.next_u64() % span) as i64)
                .collect();
            if ty.is_signed_int() {
                Data::S(v)
            } else {
                Data::U(v.into_iter().map(|x| x as u64).collect())
            }
        }
        Storage::Pred if !normal => Data::Pred((0..n).map(|_| rng.next_u64() & 1 == 1).collect()),
        _ if ty.is_float() => {
            let v: Vec<f64> = (0..n)
                .map(|_| {
                    if normal {
                        lo + hi * rng.normal()
                    } else {
                        // [lo, hi): a draw that rounds up to hi is redrawn.
                        loop {
                            let x = lo + (hi - lo) * rng.uniform();
                            let r = from_f64_vec(ty, &[x])
                                .ok()
                                .map(|d| super::convert::to_f64_vec(&d, ty)[0]);
                            if r.is_none_or(|r| r < hi || lo >= hi) {
                                break x;
                            }
                        }
                    }
                })
                .collect();
            from_f64_vec(ty, &v)?
        }
        _ => return Err(super::unsupported(format!("rng of {ty} is not supported"))),
    };
    Array::new(ty, dims, data)
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn normals_on_all_cores_are_the_sequential_draws() {
        let n = super::super::par::MIN_PARALLEL * 2 + 3;
        let mut one = Rng::new(7);
        let want: Vec<u64> = (0..n).map(|_| one.normal().to_bits()).collect();
        let mut all = Rng::new(7);
        let got: Vec<u64> = all.normals(n).iter().map(|v| v.to_bits()).collect();
        assert_eq!(got, want);
        assert_eq!(all.next_u64(), one.next_u64());
    }
}
