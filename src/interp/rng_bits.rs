//! `rng-bit-generator` with XLA's exact bit streams.
//!
//! XLA has no kernel for the op: its `RngBitGeneratorExpander` rewrites it
//! into arithmetic (`xla/service/rng_bit_generator_expander.cc` on the
//! generators of `xla/client/lib/prng.cc`, later `xla/hlo/builder/lib/`).
//! This module computes what that arithmetic computes, element by element:
//!
//! - the state is `u64[n]`; its word 0 is the key, which is passed through;
//! - **three_fry** (state `u64[2]`): Threefry-2x32 with 20 rounds, keyed by
//!   the key's (low, high) 32-bit halves, on counters `state[1] + i`. For
//!   32-bit output the shape is split in two along its first even dimension
//!   (else its first largest one, rounded up), counter `i` runs over the
//!   half shape, and the two output words of counter `i` land at positions
//!   `2j` and `2j+1` of the split dimension. For 64-bit output counter `i`
//!   is the element's row-major index and the element is `lo | hi << 32`.
//!   The new state word 1 is `state[1]` plus the number of counters used;
//! - **philox** (state `u64[2]` or `u64[3]`): Philox-4x32 with 10 rounds,
//!   keyed by the key's halves, on the 128-bit counter `(low, high)` =
//!   `(state[1], state[0])` for `u64[2]` (XLA reverses the vector) or
//!   `(state[1], state[2])` for `u64[3]`, plus `j` for block `j`. The four
//!   words of block `j` are elements `4j..4j+4` in row-major order (64-bit
//!   output: words (0,1) and (2,3) make elements `2j` and `2j+1`). The new
//!   counter is the old plus the number of blocks; a `u64[2]` state keeps
//!   only its low word;
//! - **rng_default** is philox, the algorithm XLA:CPU and XLA:GPU pass to
//!   the expander (`RngBitGeneratorExpander(RandomAlgorithm::RNG_PHILOX)`).
//!   What a Neuron device draws for `rng_default` is not specified here;
//!   a pass that keeps the op keeps the bits, which is what the per-pass
//!   check compares.
//!
//! Outputs narrower than 32 bits take the low bits of the 32-bit stream, as
//! XLA's expander does. Output elements are integers (signed ones hold the
//! same bits); any other element type is an error.

use super::array::{shape_dims, wrap_s, Array, Data, Value};
use super::{err, expect_operands, operand, Result};
use crate::ir::{Instruction, PrimitiveType};

/// The `rng-bit-generator` instruction: (new state, bits).
pub fn eval(instr: &Instruction, ops: &[&Value]) -> Result<Value> {
    expect_operands(instr, ops, 1)?;
    let alg = match instr.attr("algorithm") {
        Some(crate::ir::AttrValue::RngAlgorithm(a)) => Algorithm::from_attr(a.name())?,
        _ => Algorithm::Philox,
    };
    let st = operand(ops, 0)?;
    let state: Vec<u64> = match (&st.data, st.ty, st.rank()) {
        (Data::U(v), PrimitiveType::U64, 1) => v.clone(),
        _ => {
            return Err(err(format!(
                "rng-bit-generator state is {}, not u64[n]",
                st.shape_text()
            )))
        }
    };
    let out = instr
        .shape
        .tuple_elements()
        .and_then(|t| t.get(1))
        .ok_or_else(|| err("rng-bit-generator shape is not a (state, bits) tuple"))?;
    let (new_state, bits) = rng_bit_generator(alg, &state, out.element_type(), &shape_dims(out)?)?;
    let n = new_state.len();
    let st = Array::new(st.ty, vec![n], Data::U(new_state))?;
    Ok(Value::Tuple(
        vec![Value::array(st), Value::array(bits)].into(),
    ))
}

/// Which generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    ThreeFry,
    Philox,
}

impl Algorithm {
    /// From the `algorithm=` attribute (`rng_default` is XLA:CPU's philox).
    pub fn from_attr(s: &str) -> Result<Algorithm> {
        match s {
            "rng_three_fry" => Ok(Algorithm::ThreeFry),
            "rng_philox" | "rng_default" => Ok(Algorithm::Philox),
            _ => Err(err(format!("unknown rng-bit-generator algorithm={s}"))),
        }
    }
}

/// Threefry-2x32, 20 rounds (Salmon et al., SC 2011).
pub fn threefry2x32(key: [u32; 2], ctr: [u32; 2]) -> [u32; 2] {
    const ROT: [[u32; 4]; 2] = [[13, 15, 26, 6], [17, 29, 16, 24]];
    let ks = [key[0], key[1], 0x1BD1_1BDA ^ key[0] ^ key[1]];
    let mut x = [ctr[0].wrapping_add(ks[0]), ctr[1].wrapping_add(ks[1])];
    for s in 1..=5u32 {
        for &r in &ROT[((s - 1) % 2) as usize] {
            x[0] = x[0].wrapping_add(x[1]);
            x[1] = x[1].rotate_left(r) ^ x[0];
        }
        let s_us = s as usize;
        x[0] = x[0].wrapping_add(ks[s_us % 3]);
        x[1] = x[1].wrapping_add(ks[(s_us + 1) % 3]).wrapping_add(s);
    }
    x
}

/// Philox-4x32, 10 rounds (Salmon et al., SC 2011).
pub fn philox4x32(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    const MA: u64 = 0xD251_1F53;
    const MB: u64 = 0xCD9E_8D57;
    let (mut x, mut k) = (ctr, key);
    for _ in 0..10 {
        let p0 = u64::from(x[0]) * MA;
        let p1 = u64::from(x[2]) * MB;
        x = [
            (p1 >> 32) as u32 ^ x[1] ^ k[0],
            p1 as u32,
            (p0 >> 32) as u32 ^ x[3] ^ k[1],
            p0 as u32,
        ];
        k = [
            k[0].wrapping_add(0x9E37_79B9),
            k[1].wrapping_add(0xBB67_AE85),
        ];
    }
    x
}

fn halves(v: u64) -> [u32; 2] {
    [v as u32, (v >> 32) as u32]
}

/// The 32- or 64-bit stream of three_fry for `dims`, and the counters used.
fn three_fry_bits(key: u64, base: u64, dims: &[usize], wide: bool) -> (Vec<u64>, u64) {
    let n: usize = dims.iter().product();
    let k = halves(key);
    let gen = |i: u64| threefry2x32(k, halves(base.wrapping_add(i)));
    if wide {
        let out = (0..n as u64)
            .map(|i| {
                let [lo, hi] = gen(i);
                u64::from(lo) | (u64::from(hi) << 32)
            })
            .collect();
        return (out, n as u64);
    }
    if dims.is_empty() {
        return (vec![u64::from(gen(0)[0])], 1);
    }
    let split = dims.iter().position(|d| d % 2 == 0).unwrap_or_else(|| {
        // No even dimension: the first largest one.
        let mut best = 0;
        for (i, &d) in dims.iter().enumerate() {
            if d > dims[best] {
                best = i;
            }
        }
        best
    });
    let outer: usize = dims[..split].iter().product();
    let inner: usize = dims[split + 1..].iter().product();
    let (d, h) = (dims[split], dims[split].div_ceil(2));
    let mut out = Vec::with_capacity(n);
    for o in 0..outer {
        for j in 0..d {
            for t in 0..inner {
                let i = ((o * h + j / 2) * inner + t) as u64;
                out.push(u64::from(gen(i)[j % 2]));
            }
        }
    }
    (out, (outer * h * inner) as u64)
}

/// The 32- or 64-bit stream of philox for `n` elements from the 128-bit
/// counter `(lo, hi)`, and the number of blocks used.
fn philox_bits(key: u64, lo: u64, hi: u64, n: usize, wide: bool) -> (Vec<u64>, u64) {
    let k = halves(key);
    let words = if wide { 2 * n } else { n };
    let blocks = words.div_ceil(4) as u64;
    let mut out = Vec::with_capacity(n + 3);
    for j in 0..blocks {
        let c_lo = lo.wrapping_add(j);
        let c_hi = if c_lo < lo { hi.wrapping_add(1) } else { hi };
        let [a, b] = halves(c_lo);
        let [c, d] = halves(c_hi);
        let w = philox4x32([a, b, c, d], k);
        if wide {
            out.push(u64::from(w[0]) | (u64::from(w[1]) << 32));
            out.push(u64::from(w[2]) | (u64::from(w[3]) << 32));
        } else {
            out.extend(w.iter().map(|&x| u64::from(x)));
        }
    }
    out.truncate(n);
    (out, blocks)
}

/// Evaluates `rng-bit-generator`: the new state and `ty[dims]` of bits.
pub fn rng_bit_generator(
    alg: Algorithm,
    state: &[u64],
    ty: PrimitiveType,
    dims: &[usize],
) -> Result<(Vec<u64>, Array)> {
    let bits = ty.bit_width();
    if !ty.is_integral() || !(bits == 8 || bits == 16 || bits == 32 || bits == 64) {
        return Err(err(format!(
            "rng-bit-generator output of type {ty} is not supported (integers of 8 to 64 bits)"
        )));
    }
    let n = super::array::element_count(dims)?;
    let wide = bits == 64;
    let (raw, new_state) = match (alg, state.len()) {
        (Algorithm::ThreeFry, 2) => {
            let (raw, used) = three_fry_bits(state[0], state[1], dims, wide);
            (raw, vec![state[0], state[1].wrapping_add(used)])
        }
        (Algorithm::Philox, 2 | 3) => {
            let (lo, hi) = if state.len() == 2 {
                (state[1], state[0])
            } else {
                (state[1], state[2])
            };
            let (raw, blocks) = philox_bits(state[0], lo, hi, n, wide);
            let new_lo = lo.wrapping_add(blocks);
            let new_hi = if new_lo < lo { hi.wrapping_add(1) } else { hi };
            let mut s = vec![state[0], new_lo];
            if state.len() == 3 {
                s.push(new_hi);
            }
            (raw, s)
        }
        (a, l) => {
            return Err(err(format!(
                "rng-bit-generator {a:?} with a state of {l} words is not supported \
                 (three_fry takes u64[2], philox u64[2] or u64[3])"
            )))
        }
    };
    let mask = if wide { u64::MAX } else { (1u64 << bits) - 1 };
    let data = if ty.is_signed_int() {
        Data::S(
            raw.iter()
                .map(|&v| wrap_s((v & mask) as i64, bits))
                .collect(),
        )
    } else {
        Data::U(raw.iter().map(|&v| v & mask).collect())
    };
    Ok((new_state, Array::new(ty, dims.to_vec(), data)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Random123's known-answer vectors (kat_vectors), which JAX's tests
    // also pin for its threefry_2x32.
    #[test]
    fn threefry_known_answers() {
        assert_eq!(threefry2x32([0, 0], [0, 0]), [0x6b20_0159, 0x99ba_4efe]);
        assert_eq!(
            threefry2x32([u32::MAX; 2], [u32::MAX; 2]),
            [0x1cb9_96fc, 0xbb00_2be7]
        );
        assert_eq!(
            threefry2x32([0x1319_8a2e, 0x0370_7344], [0x243f_6a88, 0x85a3_08d3]),
            [0xc492_3a9c, 0x483d_f7a0]
        );
    }

    #[test]
    fn philox_known_answers() {
        assert_eq!(
            philox4x32([0; 4], [0; 2]),
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]
        );
        assert_eq!(
            philox4x32([u32::MAX; 4], [u32::MAX; 2]),
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]
        );
        assert_eq!(
            philox4x32(
                [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
                [0xa409_3822, 0x299f_31d0]
            ),
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1]
        );
    }

    fn run(alg: Algorithm, ty: PrimitiveType, dims: &[usize]) -> (Vec<u64>, Vec<u64>) {
        let (st, a) = rng_bit_generator(alg, &[7, 42], ty, dims).unwrap();
        let bits = match a.data {
            Data::U(v) => v,
            _ => unreachable!(),
        };
        (st, bits)
    }

    // jax.lax.rng_bit_generator on XLA:CPU (jax 0.10.2), state u64[2]
    // [7, 42]: the outputs and new states. rng_default gave the same as
    // rng_philox there.
    #[test]
    fn matches_xla_cpu_philox() {
        use PrimitiveType::*;
        let a = Algorithm::from_attr("rng_default").unwrap();
        assert_eq!(
            run(a, U32, &[3, 3]),
            (
                vec![7, 45],
                vec![
                    1152053090, 2704721653, 3315919173, 1300955287, 2894365028, 3378036609,
                    3213232580, 551649830, 1599564945
                ]
            )
        );
        assert_eq!(run(a, U32, &[]), (vec![7, 43], vec![1152053090]));
        assert_eq!(
            run(a, U64, &[3]),
            (
                vec![7, 44],
                vec![
                    11616691045570113378,
                    5587560414539213125,
                    14508556763240104292
                ]
            )
        );
        assert_eq!(run(a, U8, &[5]), (vec![7, 44], vec![98, 245, 69, 151, 100]));
        assert_eq!(
            run(a, U16, &[2, 2, 2]),
            (
                vec![7, 44],
                vec![61282, 50933, 59717, 151, 33124, 49025, 2500, 33318]
            )
        );
    }

    // The same with a u64[3] state (the 128-bit counter in words 1, 2),
    // compiled from StableHLO by jaxlib 0.10.2's CPU client; the last two
    // carry from word 1 into word 2.
    #[test]
    fn matches_xla_cpu_philox_three_word_state() {
        let run3 = |s: [u64; 3]| {
            let (st, a) =
                rng_bit_generator(Algorithm::Philox, &s, PrimitiveType::U32, &[5]).unwrap();
            (st, a.data)
        };
        assert_eq!(
            run3([7, 42, 5]),
            (
                vec![7, 44, 5],
                Data::U(vec![
                    2804607078, 3790600501, 2264343352, 4255178537, 1002060434
                ])
            )
        );
        assert_eq!(
            run3([7, u64::MAX, 5]),
            (
                vec![7, 1, 6],
                Data::U(vec![
                    592388033, 4281800940, 662029415, 3118642158, 2900326916
                ])
            )
        );
        assert_eq!(
            run3([7, u64::MAX - 1, 9]),
            (
                vec![7, 0, 10],
                Data::U(vec![
                    3016999626, 1129036703, 4033705318, 1340205173, 847410044
                ])
            )
        );
    }

    #[test]
    fn matches_xla_cpu_three_fry() {
        use PrimitiveType::*;
        let a = Algorithm::from_attr("rng_three_fry").unwrap();
        assert_eq!(
            run(a, U32, &[5]),
            (
                vec![7, 45],
                vec![1840826595, 1626631394, 1787582443, 1661566107, 2332484343]
            )
        );
        assert_eq!(
            run(a, U32, &[3, 3]),
            (
                vec![7, 48],
                vec![
                    1840826595, 1787582443, 2332484343, 1626631394, 1661566107, 2268338908,
                    1844903883, 2455917801, 2859232078
                ]
            )
        );
        assert_eq!(
            run(a, U32, &[2, 3]),
            (
                vec![7, 45],
                vec![1840826595, 1787582443, 2332484343, 1626631394, 1661566107, 2268338908]
            )
        );
        assert_eq!(run(a, U32, &[]), (vec![7, 43], vec![1840826595]));
        assert_eq!(
            run(a, U64, &[3]),
            (
                vec![7, 45],
                vec![
                    6986328641717717219,
                    7136372091494619115,
                    9742441428436837111
                ]
            )
        );
        assert_eq!(
            run(a, U8, &[5]),
            (vec![7, 45], vec![227, 226, 235, 155, 247])
        );
        assert_eq!(
            run(a, U16, &[2, 2, 2]),
            (
                vec![7, 46],
                vec![51427, 22507, 58103, 65483, 27874, 31899, 6876, 37258]
            )
        );
    }

    #[test]
    fn bad_state_and_type_are_errors() {
        assert!(
            rng_bit_generator(Algorithm::ThreeFry, &[1, 2, 3], PrimitiveType::U32, &[4]).is_err()
        );
        assert!(rng_bit_generator(Algorithm::Philox, &[1], PrimitiveType::U32, &[4]).is_err());
        assert!(rng_bit_generator(Algorithm::Philox, &[1, 2], PrimitiveType::F32, &[4]).is_err());
    }
}
