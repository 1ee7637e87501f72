//! XLA's element types, with the numbers of `xla_data.proto` and the names
//! of its text format.

use crate::util::NameMap;
use std::fmt;
use std::sync::LazyLock;

/// How a narrow floating-point format encodes its values.
///
/// The 8- and 4-bit types have no Rust type of their own; their values are
/// kept as raw bits and converted through this description.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MiniFloat {
    pub exponent_bits: u32,
    pub mantissa_bits: u32,
    pub bias: i32,
    /// Has a sign bit (all but E8M0).
    pub signed: bool,
    /// Encodes infinities IEEE-style (all-ones exponent, zero mantissa).
    pub has_inf: bool,
    pub nan: NanEncoding,
}

/// Where a narrow format keeps its NaNs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NanEncoding {
    /// IEEE: all-ones exponent with a non-zero mantissa.
    Ieee,
    /// "FN": only all-ones exponent and mantissa is NaN; the rest are finite.
    AllOnes,
    /// "FNUZ": the bit pattern of negative zero is the one NaN.
    NegativeZero,
    /// No NaN at all (F4E2M1FN).
    None,
}

macro_rules! primitive_types {
    ($($variant:ident = $num:expr, $name:expr;)*) => {
        /// An XLA element type. The discriminant is the `PrimitiveType` number.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(i32)]
        pub enum PrimitiveType {
            $($variant = $num,)*
        }

        impl PrimitiveType {
            pub const ALL: &'static [PrimitiveType] = &[$(PrimitiveType::$variant,)*];

            /// The name used in HLO text (`f32`, `bf16`, `pred`, ...).
            pub fn name(self) -> &'static str {
                match self { $(PrimitiveType::$variant => $name,)* }
            }

            /// The `xla_data.proto` number.
            pub fn from_number(n: i32) -> Option<Self> {
                match n { $($num => Some(PrimitiveType::$variant),)* _ => None }
            }
        }
    };
}

primitive_types! {
    Invalid = 0, "invalid";
    Pred = 1, "pred";
    S8 = 2, "s8";
    S16 = 3, "s16";
    S32 = 4, "s32";
    S64 = 5, "s64";
    U8 = 6, "u8";
    U16 = 7, "u16";
    U32 = 8, "u32";
    U64 = 9, "u64";
    F16 = 10, "f16";
    F32 = 11, "f32";
    F64 = 12, "f64";
    Tuple = 13, "tuple";
    OpaqueType = 14, "opaque";
    C64 = 15, "c64";
    Bf16 = 16, "bf16";
    Token = 17, "token";
    C128 = 18, "c128";
    F8E5M2 = 19, "f8e5m2";
    F8E4M3FN = 20, "f8e4m3fn";
    S4 = 21, "s4";
    U4 = 22, "u4";
    F8E4M3B11FNUZ = 23, "f8e4m3b11fnuz";
    F8E5M2FNUZ = 24, "f8e5m2fnuz";
    F8E4M3FNUZ = 25, "f8e4m3fnuz";
    S2 = 26, "s2";
    U2 = 27, "u2";
    F8E4M3 = 28, "f8e4m3";
    F8E3M4 = 29, "f8e3m4";
    S1 = 30, "s1";
    U1 = 31, "u1";
    F4E2M1FN = 32, "f4e2m1fn";
    F8E8M0FNU = 33, "f8e8m0fnu";
}

impl PrimitiveType {
    /// Parses a text name; `None` for anything that is not an array element
    /// type name (`tuple`, `invalid` are not written in shapes).
    pub fn from_name(name: &str) -> Option<Self> {
        // A map, not a scan: every shape of a module's text names one.
        static BY_NAME: LazyLock<NameMap<'static, PrimitiveType>> =
            LazyLock::new(|| PrimitiveType::ALL.iter().map(|&t| (t.name(), t)).collect());
        let ty = *BY_NAME.get(name)?;
        match ty {
            PrimitiveType::Invalid | PrimitiveType::Tuple => None,
            _ => Some(ty),
        }
    }

    pub fn is_array_element(self) -> bool {
        !matches!(
            self,
            PrimitiveType::Invalid
                | PrimitiveType::Tuple
                | PrimitiveType::OpaqueType
                | PrimitiveType::Token
        )
    }

    pub fn is_float(self) -> bool {
        matches!(
            self,
            PrimitiveType::F16 | PrimitiveType::F32 | PrimitiveType::F64 | PrimitiveType::Bf16
        ) || self.minifloat().is_some()
    }

    pub fn is_complex(self) -> bool {
        matches!(self, PrimitiveType::C64 | PrimitiveType::C128)
    }

    pub fn is_signed_int(self) -> bool {
        use PrimitiveType::*;
        matches!(self, S1 | S2 | S4 | S8 | S16 | S32 | S64)
    }

    pub fn is_unsigned_int(self) -> bool {
        use PrimitiveType::*;
        matches!(self, U1 | U2 | U4 | U8 | U16 | U32 | U64)
    }

    pub fn is_integral(self) -> bool {
        self.is_signed_int() || self.is_unsigned_int()
    }

    /// Width of one element in bits (0 for non-array types).
    pub fn bit_width(self) -> u32 {
        use PrimitiveType::*;
        match self {
            Pred => 8,
            S1 | U1 => 1,
            S2 | U2 => 2,
            S4 | U4 | F4E2M1FN => 4,
            S8 | U8 => 8,
            S16 | U16 | F16 | Bf16 => 16,
            S32 | U32 | F32 => 32,
            S64 | U64 | F64 | C64 => 64,
            C128 => 128,
            F8E5M2 | F8E4M3FN | F8E4M3B11FNUZ | F8E5M2FNUZ | F8E4M3FNUZ | F8E4M3 | F8E3M4
            | F8E8M0FNU => 8,
            Invalid | Tuple | OpaqueType | Token => 0,
        }
    }

    /// The encoding of a float type narrower than 16 bits.
    pub fn minifloat(self) -> Option<MiniFloat> {
        use NanEncoding::*;
        use PrimitiveType::*;
        let f = |e, m, bias, has_inf, nan| MiniFloat {
            exponent_bits: e,
            mantissa_bits: m,
            bias,
            signed: true,
            has_inf,
            nan,
        };
        Some(match self {
            F8E5M2 => f(5, 2, 15, true, Ieee),
            F8E4M3 => f(4, 3, 7, true, Ieee),
            F8E3M4 => f(3, 4, 3, true, Ieee),
            F8E4M3FN => f(4, 3, 7, false, AllOnes),
            F8E4M3FNUZ => f(4, 3, 8, false, NegativeZero),
            F8E5M2FNUZ => f(5, 2, 16, false, NegativeZero),
            F8E4M3B11FNUZ => f(4, 3, 11, false, NegativeZero),
            F4E2M1FN => f(2, 1, 1, false, None),
            F8E8M0FNU => MiniFloat {
                exponent_bits: 8,
                mantissa_bits: 0,
                bias: 127,
                signed: false,
                has_inf: false,
                nan: AllOnes,
            },
            _ => return Option::None,
        })
    }
}

impl fmt::Display for PrimitiveType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl MiniFloat {
    fn total_bits(&self) -> u32 {
        self.exponent_bits + self.mantissa_bits + u32::from(self.signed)
    }

    /// Decodes raw bits to the exact value as an f64.
    pub fn to_f64(&self, bits: u8) -> f64 {
        let m_bits = self.mantissa_bits;
        let e_bits = self.exponent_bits;
        let sign_shift = e_bits + m_bits;
        let negative = self.signed && (bits >> sign_shift) & 1 == 1;
        let exp = ((bits >> m_bits) as u32) & ((1 << e_bits) - 1);
        let man = (bits as u32) & ((1 << m_bits) - 1);
        let max_exp = (1u32 << e_bits) - 1;
        let sign = if negative { -1.0 } else { 1.0 };
        match self.nan {
            NanEncoding::Ieee if exp == max_exp => {
                return if man == 0 && self.has_inf {
                    sign * f64::INFINITY
                } else {
                    sign * f64::NAN
                };
            }
            NanEncoding::AllOnes if exp == max_exp && man == (1 << m_bits) - 1 => {
                return sign * f64::NAN;
            }
            NanEncoding::NegativeZero if negative && exp == 0 && man == 0 => {
                return -f64::NAN;
            }
            _ => {}
        }
        let magnitude = if exp == 0 && self.signed {
            // Subnormal (E8M0 has no subnormals: exponent 0 is 2^-127).
            (man as f64) * 2f64.powi(1 - self.bias - m_bits as i32)
        } else {
            (1.0 + man as f64 / (1u32 << m_bits) as f64) * 2f64.powi(exp as i32 - self.bias)
        };
        sign * magnitude
    }

    /// Rounds a value to the nearest representable one (ties to even) and
    /// returns its bits. Values beyond the range become infinity where the
    /// format has one, NaN otherwise (saturation is not XLA's conversion).
    pub fn from_f64(&self, value: f64) -> u8 {
        let sign_shift = self.exponent_bits + self.mantissa_bits;
        let sign_bit: u8 = if self.signed && value.is_sign_negative() {
            1 << sign_shift
        } else {
            0
        };
        if value.is_nan() {
            return self.nan_bits(value.is_sign_negative());
        }
        if !self.signed && value < 0.0 {
            return self.nan_bits(false);
        }
        let magnitude = value.abs();
        if magnitude.is_infinite() {
            return if self.has_inf {
                sign_bit | ((((1u32 << self.exponent_bits) - 1) << self.mantissa_bits) as u8)
            } else {
                self.nan_bits(value.is_sign_negative())
            };
        }
        // Search the positive encodings for the nearest value; at most 256 of
        // them, and ties go to the even (lower-bit) encoding.
        let count = 1u32 << (self.total_bits() - u32::from(self.signed));
        let mut best: Option<(u8, f64)> = None;
        for code in 0..count {
            let code = code as u8;
            let v = self.to_f64(code);
            if !v.is_finite() {
                continue;
            }
            let dist = (v - magnitude).abs();
            match best {
                Some((b, d)) if dist > d || (dist == d && (code & 1 == 1 || b & 1 == 0)) => {}
                _ => best = Some((code, dist)),
            }
        }
        let (code, _) = best.expect("every format has a finite value");
        let max_finite = self.max_finite_code();
        if magnitude > self.to_f64(max_finite) {
            // Past the largest finite value: round to it only when closer
            // than half an ulp beyond (IEEE overflow rule).
            let max = self.to_f64(max_finite);
            let prev = self.to_f64(max_finite - 1);
            if magnitude >= max + (max - prev) / 2.0 {
                return if self.has_inf {
                    sign_bit | ((((1u32 << self.exponent_bits) - 1) << self.mantissa_bits) as u8)
                } else {
                    self.nan_bits(value.is_sign_negative())
                };
            }
        }
        if code == 0 && self.nan == NanEncoding::NegativeZero {
            return 0; // FNUZ has no negative zero.
        }
        sign_bit | code
    }

    fn max_finite_code(&self) -> u8 {
        let count = 1u32 << (self.total_bits() - u32::from(self.signed));
        (0..count)
            .rev()
            .map(|c| c as u8)
            .find(|&c| self.to_f64(c).is_finite())
            .unwrap_or(0)
    }

    /// The canonical NaN bits of this format.
    pub fn nan_bits(&self, negative: bool) -> u8 {
        let sign_shift = self.exponent_bits + self.mantissa_bits;
        match self.nan {
            NanEncoding::NegativeZero => 1 << sign_shift,
            NanEncoding::AllOnes => {
                let mag = ((1u32 << sign_shift) - 1) as u8;
                if negative && self.signed {
                    mag | (1 << sign_shift)
                } else {
                    mag
                }
            }
            NanEncoding::Ieee => {
                let exp = (((1u32 << self.exponent_bits) - 1) << self.mantissa_bits) as u8;
                let quiet = 1u8 << (self.mantissa_bits - 1);
                let s = if negative { 1 << sign_shift } else { 0 };
                s | exp | quiet
            }
            // No NaN: XLA maps NaN to the largest-magnitude value.
            NanEncoding::None => ((1u32 << sign_shift) - 1) as u8,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_names_round_trip() {
        for &t in PrimitiveType::ALL {
            assert_eq!(PrimitiveType::from_number(t as i32), Some(t));
        }
        assert_eq!(
            PrimitiveType::from_name("f8e8m0fnu"),
            Some(PrimitiveType::F8E8M0FNU)
        );
        assert_eq!(PrimitiveType::F32 as i32, 11);
        assert_eq!(PrimitiveType::Bf16 as i32, 16);
        assert_eq!(PrimitiveType::F4E2M1FN as i32, 32);
        assert_eq!(PrimitiveType::from_name("tuple"), None);
    }

    #[test]
    fn minifloats_decode_known_values() {
        let e4m3fn = PrimitiveType::F8E4M3FN.minifloat().unwrap();
        assert_eq!(e4m3fn.to_f64(0x7e), 448.0);
        assert!(e4m3fn.to_f64(0x7f).is_nan());
        assert_eq!(e4m3fn.from_f64(448.0), 0x7e);
        assert_eq!(e4m3fn.from_f64(1.0), 0x38);
        let e5m2 = PrimitiveType::F8E5M2.minifloat().unwrap();
        assert_eq!(e5m2.to_f64(0x7c), f64::INFINITY);
        assert_eq!(e5m2.from_f64(f64::NEG_INFINITY), 0xfc);
        let e8m0 = PrimitiveType::F8E8M0FNU.minifloat().unwrap();
        assert_eq!(e8m0.to_f64(127), 1.0);
        assert!(e8m0.to_f64(255).is_nan());
        assert_eq!(e8m0.from_f64(0.5), 126);
        let e2m1 = PrimitiveType::F4E2M1FN.minifloat().unwrap();
        assert_eq!(e2m1.to_f64(0x7), 6.0);
        assert_eq!(e2m1.to_f64(0x1), 0.5);
        assert_eq!(e2m1.from_f64(-6.0), 0xf);
        let fnuz = PrimitiveType::F8E4M3FNUZ.minifloat().unwrap();
        assert!(fnuz.to_f64(0x80).is_nan());
        assert_eq!(fnuz.from_f64(-0.0), 0);
    }
}
