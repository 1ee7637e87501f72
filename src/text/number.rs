//! Numbers and strings exactly as XLA writes them: `%g` floats
//! (`RoundTripFpToString`) and `absl::CEscape` strings.

use crate::ir::literal::LiteralData;
use crate::ir::types::PrimitiveType;

/// C's `%.{precision}g` of a finite or non-finite double, as absl formats it.
pub fn format_g(value: f64, precision: usize, out: &mut String) {
    let precision = precision.max(1);
    if value.is_nan() {
        out.push_str(if value.is_sign_negative() {
            "-nan"
        } else {
            "nan"
        });
        return;
    }
    if value.is_infinite() {
        out.push_str(if value < 0.0 { "-inf" } else { "inf" });
        return;
    }
    if value == 0.0 {
        out.push_str(if value.is_sign_negative() { "-0" } else { "0" });
        return;
    }
    // Rust's `{:e}` with a precision is correctly rounded: it gives the
    // digits and exponent %g starts from.
    let sci = format!("{:.*e}", precision - 1, value);
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` writes an exponent");
    let exp: i32 = exp.parse().expect("`{:e}` writes a decimal exponent");
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if negative {
        out.push('-');
    }
    if exp < -4 || exp >= precision as i32 {
        // d.ddde±XX
        let trimmed = digits.trim_end_matches('0');
        let trimmed = if trimmed.is_empty() { "0" } else { trimmed };
        out.push_str(&trimmed[..1]);
        if trimmed.len() > 1 {
            out.push('.');
            out.push_str(&trimmed[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let e = exp.unsigned_abs();
        if e < 10 {
            out.push('0');
        }
        out.push_str(&e.to_string());
    } else if exp >= 0 {
        let int_len = exp as usize + 1;
        let (int_part, frac) = digits.split_at(int_len.min(digits.len()));
        out.push_str(int_part);
        for _ in digits.len()..int_len {
            out.push('0');
        }
        let frac = frac.trim_end_matches('0');
        if !frac.is_empty() {
            out.push('.');
            out.push_str(frac);
        }
    } else {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(digits.trim_end_matches('0'));
    }
}

fn push_nan_payload(payload: u64, quiet: u64, out: &mut String) {
    if payload != quiet {
        out.push_str(&format!("(0x{payload:x})"));
    }
}

/// One element of a literal as XLA's `GetAsString` writes it.
pub fn format_element(
    data: &LiteralData,
    ty: PrimitiveType,
    i: usize,
    in_array: bool,
    out: &mut String,
) {
    match data {
        LiteralData::Pred(v) => out.push_str(match (v[i], in_array) {
            (true, true) => "1",
            (false, true) => "0",
            (true, false) => "true",
            (false, false) => "false",
        }),
        LiteralData::Int(v) => out.push_str(&v[i].to_string()),
        LiteralData::UInt(v) => out.push_str(&v[i].to_string()),
        LiteralData::F32(v) => format_f32(v[i], out),
        LiteralData::F64(v) => format_f64(v[i], out),
        LiteralData::F16(v) => {
            let x = v[i];
            format_g(x.to_f64(), 5, out);
            if x.is_nan() {
                push_nan_payload(u64::from(x.to_bits() & 0x3ff), 0x200, out);
            }
        }
        LiteralData::Bf16(v) => {
            let x = v[i];
            format_g(x.to_f64(), 4, out);
            if x.is_nan() {
                push_nan_payload(u64::from(x.to_bits() & 0x7f), 0x40, out);
            }
        }
        LiteralData::MiniFloat(v) => {
            let Some(m) = ty.minifloat() else { return };
            let value = m.to_f64(v[i]);
            let digits = (1.0 + f64::from(m.mantissa_bits + 1) * std::f64::consts::LOG10_2).ceil();
            if value.is_nan() {
                // The sign of a NaN shows as `-nan`, as the double cast keeps it.
                let negative = m.signed && (v[i] >> (m.exponent_bits + m.mantissa_bits)) & 1 == 1;
                out.push_str(if negative { "-nan" } else { "nan" });
                if m.nan == crate::ir::types::NanEncoding::Ieee {
                    let mask = (1u64 << m.mantissa_bits) - 1;
                    push_nan_payload(u64::from(v[i]) & mask, 1 << (m.mantissa_bits - 1), out);
                }
                return;
            }
            format_g(value, digits as usize, out);
        }
        LiteralData::C64(v) => {
            out.push('(');
            format_f32(v[i].0, out);
            out.push_str(", ");
            format_f32(v[i].1, out);
            out.push(')');
        }
        LiteralData::C128(v) => {
            out.push('(');
            format_f64(v[i].0, out);
            out.push_str(", ");
            format_f64(v[i].1, out);
            out.push(')');
        }
        LiteralData::Tuple(_) | LiteralData::Elided | LiteralData::Empty => {}
    }
}

pub fn format_f32(x: f32, out: &mut String) {
    let start = out.len();
    format_g(f64::from(x), 6, out);
    if x.is_nan() || out[start..].parse::<f32>().ok() != Some(x) {
        out.truncate(start);
        format_g(f64::from(x), 9, out);
    }
    if x.is_nan() {
        push_nan_payload(u64::from(x.to_bits() & 0x7f_ffff), 0x40_0000, out);
    }
}

pub fn format_f64(x: f64, out: &mut String) {
    let start = out.len();
    format_g(x, 15, out);
    if x.is_nan() || out[start..].parse::<f64>().ok() != Some(x) {
        out.truncate(start);
        format_g(x, 17, out);
    }
    if x.is_nan() {
        push_nan_payload(x.to_bits() & ((1 << 52) - 1), 1 << 51, out);
    }
}

/// `absl::CEscape`.
pub fn c_escape(s: &str, out: &mut String) {
    for &b in s.as_bytes() {
        match b {
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            b'"' => out.push_str("\\\""),
            b'\'' => out.push_str("\\'"),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                out.push('\\');
                out.push((b'0' + (b >> 6)) as char);
                out.push((b'0' + ((b >> 3) & 7)) as char);
                out.push((b'0' + (b & 7)) as char);
            }
        }
    }
}

/// Decodes the C escapes of a quoted string's body. `Err` names the bad
/// escape's byte offset within `body`.
pub fn c_unescape(body: &str) -> Result<String, usize> {
    if !body.contains('\\') {
        return Ok(body.to_string());
    }
    let bytes = body.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b != b'\\' {
            out.push(b);
            i += 1;
            continue;
        }
        let Some(&e) = bytes.get(i + 1) else {
            return Err(i);
        };
        i += 2;
        match e {
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'v' => out.push(11),
            b'\\' | b'"' | b'\'' | b'?' => out.push(e),
            b'0'..=b'7' => {
                let mut v = u32::from(e - b'0');
                let mut n = 1;
                while n < 3 && i < bytes.len() && (b'0'..=b'7').contains(&bytes[i]) {
                    v = v * 8 + u32::from(bytes[i] - b'0');
                    i += 1;
                    n += 1;
                }
                out.push(u8::try_from(v).map_err(|_| i)?);
            }
            b'x' => {
                let start = i;
                let mut v = 0u32;
                while i < bytes.len() && bytes[i].is_ascii_hexdigit() && i - start < 2 {
                    v = v * 16 + (bytes[i] as char).to_digit(16).unwrap_or(0);
                    i += 1;
                }
                if i == start {
                    return Err(start);
                }
                out.push(v as u8);
            }
            _ => return Err(i - 2),
        }
    }
    Ok(String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(v: f64, p: usize) -> String {
        let mut s = String::new();
        format_g(v, p, &mut s);
        s
    }

    fn f32s(v: f32) -> String {
        let mut s = String::new();
        format_f32(v, &mut s);
        s
    }

    #[test]
    fn g_format_matches_c() {
        assert_eq!(g(1e-7, 6), "1e-07");
        assert_eq!(g(0.0001, 6), "0.0001");
        assert_eq!(g(123456.0, 6), "123456");
        assert_eq!(g(1234567.0, 6), "1.23457e+06");
        assert_eq!(g(-0.0, 6), "-0");
        assert_eq!(g(100.0, 6), "100");
        assert_eq!(g(0.5, 6), "0.5");
    }

    #[test]
    fn f32_values_as_the_corpus_has_them() {
        assert_eq!(f32s(3.25), "3.25");
        assert_eq!(f32s(0.1), "0.1");
        assert_eq!(f32s(0.044715), "0.044715");
        assert_eq!(f32s(0.797_884_6), "0.797884583");
        assert_eq!(f32s(-3.402_823_5e38), "-3.40282347e+38");
        assert_eq!(f32s(1.192_092_9e-7), "1.1920929e-07");
        assert_eq!(f32s(f32::NAN), "nan");
        assert_eq!(f32s(f32::from_bits(0x7f80_0001)), "nan(0x1)");
        assert_eq!(f32s(f32::NEG_INFINITY), "-inf");
    }

    #[test]
    fn escapes_round_trip() {
        let mut s = String::new();
        c_escape("\"it's\n\u{e9}", &mut s);
        assert_eq!(s, "\\\"it\\'s\\n\\303\\251");
        assert_eq!(c_unescape(&s).unwrap(), "\"it's\n\u{e9}");
    }
}
