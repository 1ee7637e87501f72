//! The `backend_config`s of Neuron's calls, read once into typed values.
//!
//! A reading keeps every field as it was found (absent, of its type, or of
//! another type) instead of stopping at the first problem: the contract
//! checks report every problem of a call, the passes refuse at the first,
//! and the interpreter takes the defaults. Each decides what a field's
//! absence or wrong type means; none of them parses the text again.

use crate::ir::PrimitiveType;
use crate::util::clip;
use serde_json::{Map, Value};

/// The two MX-FP8 element types (OCP MX: `float8_e4m3fn`, `float8_e5m2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MxType {
    E4m3fn,
    E5m2,
}

impl MxType {
    /// From the configs' `dtype` / `element_dtype` spelling.
    pub fn from_dtype(name: &str) -> Option<MxType> {
        match name {
            "float8_e4m3fn" => Some(MxType::E4m3fn),
            "float8_e5m2" => Some(MxType::E5m2),
            _ => None,
        }
    }

    /// From the kernel-name suffix (`QuantizeMX_bf16_e4m3fn`).
    pub fn from_suffix(suffix: &str) -> Option<MxType> {
        match suffix {
            "e4m3fn" => Some(MxType::E4m3fn),
            "e5m2" => Some(MxType::E5m2),
            _ => None,
        }
    }

    pub fn from_element_type(ty: PrimitiveType) -> Option<MxType> {
        match ty {
            PrimitiveType::F8E4M3FN => Some(MxType::E4m3fn),
            PrimitiveType::F8E5M2 => Some(MxType::E5m2),
            _ => None,
        }
    }

    pub fn suffix(self) -> &'static str {
        match self {
            MxType::E4m3fn => "e4m3fn",
            MxType::E5m2 => "e5m2",
        }
    }

    pub fn element_type(self) -> PrimitiveType {
        match self {
            MxType::E4m3fn => PrimitiveType::F8E4M3FN,
            MxType::E5m2 => PrimitiveType::F8E5M2,
        }
    }
}

/// One field of a JSON config object, as found.
#[derive(Debug, Clone, PartialEq)]
pub enum Field<T> {
    Absent,
    Found(T),
    /// Present with another JSON type; the JSON text, clipped, for messages.
    WrongType(String),
}

impl<T> Field<T> {
    /// The value, the default when absent, or the JSON text when ill-typed.
    pub fn or(self, default: T) -> Result<T, String> {
        match self {
            Field::Absent => Ok(default),
            Field::Found(v) => Ok(v),
            Field::WrongType(found) => Err(found),
        }
    }

    pub fn found(&self) -> Option<&T> {
        match self {
            Field::Found(v) => Some(v),
            _ => None,
        }
    }
}

/// Why a config is not a JSON object.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfigError {
    /// No text at all.
    Empty,
    /// Not JSON: serde's message.
    NotJson(String),
    /// JSON, but not an object.
    NotObject,
    /// The object named holds another JSON type (its text, clipped).
    InnerNotObject { key: &'static str, found: String },
}

/// The QuantizeMX `backend_config`, `{"dtype": .., "dim": .., "block_size":
/// .., "scale_method": ..}`.
#[derive(Debug, Clone, PartialEq)]
pub struct QuantizeMxConfig {
    pub dtype: Field<String>,
    pub dim: Field<i64>,
    pub block_size: Field<i64>,
    pub scale_method: Field<String>,
}

impl QuantizeMxConfig {
    pub fn read(text: &str) -> Result<QuantizeMxConfig, ConfigError> {
        if text.trim().is_empty() {
            return Err(ConfigError::Empty);
        }
        let obj = object(text)?;
        Ok(QuantizeMxConfig {
            dtype: string(&obj, "dtype"),
            dim: integer(&obj, "dim"),
            block_size: integer(&obj, "block_size"),
            scale_method: string(&obj, "scale_method"),
        })
    }
}

/// The object inside a block-scaled dot's config.
pub const SCALED_DOT_KEY: &str = "scaled_dot_backend_config";

/// The `__op$block_scaled_dot` `backend_config`: empty, `None`, or JSON
/// whose object `scaled_dot_backend_config` and its fields are all
/// optional (an absent object reads as every field absent; fields outside
/// it are ignored).
#[derive(Debug, Clone, PartialEq)]
pub struct BlockScaledDotConfig {
    pub lhs_batch: Field<Vec<i64>>,
    pub rhs_batch: Field<Vec<i64>>,
    pub lhs_contracting: Field<Vec<i64>>,
    pub rhs_contracting: Field<Vec<i64>>,
    pub element_dtype: Field<String>,
}

impl BlockScaledDotConfig {
    const ABSENT: BlockScaledDotConfig = BlockScaledDotConfig {
        lhs_batch: Field::Absent,
        rhs_batch: Field::Absent,
        lhs_contracting: Field::Absent,
        rhs_contracting: Field::Absent,
        element_dtype: Field::Absent,
    };

    pub fn read(text: &str) -> Result<BlockScaledDotConfig, ConfigError> {
        if text.trim().is_empty() || text == "None" {
            return Ok(Self::ABSENT);
        }
        let top = object(text)?;
        let obj = match top.get(SCALED_DOT_KEY) {
            None => return Ok(Self::ABSENT),
            Some(Value::Object(o)) => o,
            Some(v) => {
                return Err(ConfigError::InnerNotObject {
                    key: SCALED_DOT_KEY,
                    found: json_text(v),
                })
            }
        };
        Ok(BlockScaledDotConfig {
            lhs_batch: integers(obj, "lhs_batch_dimensions"),
            rhs_batch: integers(obj, "rhs_batch_dimensions"),
            lhs_contracting: integers(obj, "lhs_contracting_dimensions"),
            rhs_contracting: integers(obj, "rhs_contracting_dimensions"),
            element_dtype: string(obj, "element_dtype"),
        })
    }
}

/// A `backend_config` that must be a bare base-10 integer (the softmax
/// axis, TopK's k), as the seeds parse it with `strtol(.., 10)` and a check
/// that all text was consumed.
pub fn decimal_config(text: &str) -> Option<i64> {
    if !is_integer_text(text) {
        return None;
    }
    text.parse().ok()
}

/// Whether `text` is a bare base-10 integer of any size: tells an integer
/// out of range apart from text that is no integer at all, for errors.
pub fn is_integer_text(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// The softmax axis of a call in any form the frontends write: the bare
/// integer of the Neuron frontends (what the passes read), JSON
/// `{"dim": 1}`, or the MLIR attribute dictionary of a typed-FFI call
/// (`{dim = -1 : i64, ...}`).
pub fn softmax_axis(config: &str) -> Option<i64> {
    let text = config.trim();
    if let Some(axis) = decimal_config(text) {
        return Some(axis);
    }
    if let Ok(Value::Object(m)) = serde_json::from_str::<Value>(text) {
        return m.get("dim").and_then(Value::as_i64);
    }
    let inner = text.strip_prefix('{')?.strip_suffix('}')?;
    inner.split(',').find_map(|field| {
        let (key, value) = field.split_once('=')?;
        let value = value.split(':').next()?.trim();
        (key.trim() == "dim").then(|| decimal_config(value))?
    })
}

fn object(text: &str) -> Result<Map<String, Value>, ConfigError> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(obj)) => Ok(obj),
        Ok(_) => Err(ConfigError::NotObject),
        Err(e) => Err(ConfigError::NotJson(e.to_string())),
    }
}

fn json_text(v: &Value) -> String {
    clip(&v.to_string())
}

fn string(obj: &Map<String, Value>, key: &str) -> Field<String> {
    match obj.get(key) {
        None => Field::Absent,
        Some(Value::String(s)) => Field::Found(s.clone()),
        Some(v) => Field::WrongType(json_text(v)),
    }
}

fn integer(obj: &Map<String, Value>, key: &str) -> Field<i64> {
    match obj.get(key) {
        None => Field::Absent,
        Some(v) => v
            .as_i64()
            .map_or_else(|| Field::WrongType(json_text(v)), Field::Found),
    }
}

fn integers(obj: &Map<String, Value>, key: &str) -> Field<Vec<i64>> {
    match obj.get(key) {
        None => Field::Absent,
        Some(v @ Value::Array(items)) => items
            .iter()
            .map(Value::as_i64)
            .collect::<Option<Vec<_>>>()
            .map_or_else(|| Field::WrongType(json_text(v)), Field::Found),
        Some(v) => Field::WrongType(json_text(v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_configs() {
        assert_eq!(decimal_config("5"), Some(5));
        assert_eq!(decimal_config("-1"), Some(-1));
        for bad in [
            "",
            " 5",
            "5 ",
            "0x5",
            "+5",
            "{\"k\":5}",
            "5.0",
            "99999999999999999999",
        ] {
            assert_eq!(decimal_config(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn softmax_axes_in_every_form() {
        assert_eq!(softmax_axis("1"), Some(1));
        assert_eq!(softmax_axis(" -1 "), Some(-1));
        assert_eq!(softmax_axis("{\"dim\": 2}"), Some(2));
        assert_eq!(softmax_axis("{approx = true, dim = -1 : i64}"), Some(-1));
        assert_eq!(softmax_axis("{approx = true}"), None);
        assert_eq!(softmax_axis("x"), None);
    }

    #[test]
    fn quantize_mx_fields_as_found() {
        let c = QuantizeMxConfig::read(r#"{"dtype":"float8_e5m2","dim":"x"}"#).unwrap();
        assert_eq!(c.dtype, Field::Found("float8_e5m2".into()));
        assert_eq!(c.dim, Field::WrongType("\"x\"".into()));
        assert_eq!(c.block_size, Field::Absent);
        assert_eq!(QuantizeMxConfig::read(" "), Err(ConfigError::Empty));
        assert_eq!(QuantizeMxConfig::read("[1]"), Err(ConfigError::NotObject));
        assert!(matches!(
            QuantizeMxConfig::read("{"),
            Err(ConfigError::NotJson(_))
        ));
    }

    #[test]
    fn block_scaled_dot_fields_as_found() {
        for absent in ["", "None", "{}", r#"{"lhs_batch_dimensions":[0]}"#] {
            let c = BlockScaledDotConfig::read(absent).unwrap();
            assert_eq!(c, BlockScaledDotConfig::ABSENT, "{absent:?}");
        }
        let c = BlockScaledDotConfig::read(
            r#"{"scaled_dot_backend_config":{"lhs_contracting_dimensions":[1],"rhs_batch_dimensions":[1.5],"element_dtype":""}}"#,
        )
        .unwrap();
        assert_eq!(c.lhs_contracting, Field::Found(vec![1]));
        assert_eq!(c.rhs_batch, Field::WrongType("[1.5]".into()));
        assert_eq!(c.element_dtype, Field::Found(String::new()));
        assert_eq!(
            BlockScaledDotConfig::read(r#"{"scaled_dot_backend_config":3}"#),
            Err(ConfigError::InnerNotObject {
                key: SCALED_DOT_KEY,
                found: "3".into()
            })
        );
    }

    #[test]
    fn mx_types_by_every_name() {
        for t in [MxType::E4m3fn, MxType::E5m2] {
            assert_eq!(MxType::from_suffix(t.suffix()), Some(t));
            assert_eq!(MxType::from_element_type(t.element_type()), Some(t));
            assert_eq!(
                MxType::from_dtype(&format!("float8_{}", t.suffix())),
                Some(t)
            );
        }
    }
}
