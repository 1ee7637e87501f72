//! The checks XLA's parser makes on attribute values as it reads them,
//! kept apart from the grammar in [`super::parser`] (what each opcode takes
//! is [`crate::ir::signature`]).

/// `dim_labels=b01f_01io->b01f` (XLA's `ParseConvolutionDimensionNumbers`).
pub fn check_dim_labels(s: &str) -> Result<(), String> {
    let pattern_err = || format!("expects dim labels pattern, e.g., 'bf0_0io->0bf', but sees {s}");
    let (lhs, rest) = s.split_once('_').ok_or_else(pattern_err)?;
    let (rhs, out) = rest.split_once("->").ok_or_else(pattern_err)?;
    let ok_chars = |part: &str, extra: &[u8]| {
        part.len() >= 2
            && part
                .bytes()
                .all(|c| c.is_ascii_digit() || c == b'?' || extra.contains(&c))
    };
    if !ok_chars(lhs, b"bf") || !ok_chars(rhs, b"io") || !ok_chars(out, b"bf") || out.contains('_')
    {
        return Err(pattern_err());
    }
    let spatial = |part: &str, what: &str, letters: &str| -> Result<usize, String> {
        let mut seen = [false; 256];
        for c in part.bytes().filter(|&c| c != b'?') {
            if std::mem::replace(&mut seen[c as usize], true) {
                return Err(format!(
                    "expects unique {what} dimension numbers, but sees {part}"
                ));
            }
        }
        let n = part.len();
        for c in part.bytes() {
            let is_letter = letters.as_bytes().contains(&c);
            if c != b'?' && !is_letter && !(c.is_ascii_digit() && usize::from(c - b'0') < n) {
                return Err(format!(
                    "expects [0-{}{letters}?] in {what} dimension numbers",
                    n.saturating_sub(1)
                ));
            }
        }
        Ok(part
            .bytes()
            .filter(|c| !letters.as_bytes().contains(c) && *c != b'?')
            .count())
    };
    let (i, k, o) = (
        spatial(lhs, "lhs", "bf")?,
        spatial(rhs, "rhs", "io")?,
        spatial(out, "output", "bf")?,
    );
    if i != k || i != o {
        return Err(format!(
            "input, kernel, and output must have same number of spatial dimensions, but got {i}, {k}, {o}, respectively."
        ));
    }
    Ok(())
}

fn split_ints(s: &str, sep: char) -> Option<Vec<i64>> {
    s.split(sep).map(|p| p.parse::<i64>().ok()).collect()
}

/// `window={size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=... rhs_dilate=...
/// rhs_reversal=...}` (XLA's `ParseWindow`).
pub fn check_window(s: &str) -> Result<(), String> {
    let inner = s
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .ok_or("expected '{' to start window attribute")?;
    let mut size_len = None;
    let mut other_lens: Vec<(&str, usize)> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for field in inner.split_ascii_whitespace() {
        let (name, value) = field
            .split_once('=')
            .ok_or_else(|| format!("expects sub-attributes in window, but sees {field}"))?;
        if seen.contains(&name) {
            return Err(format!("sub-attribute '{name}=' already exists"));
        }
        seen.push(name);
        let len = match name {
            "size" | "stride" | "lhs_dilate" | "rhs_dilate" | "rhs_reversal" => {
                split_ints(value, 'x')
                    .ok_or_else(|| format!("expects sub-attribute '{name}=ixj...'"))?
                    .len()
            }
            "pad" => {
                let dims: Vec<&str> = value.split('x').collect();
                for d in &dims {
                    match split_ints(d, '_') {
                        Some(v) if v.len() == 2 => {}
                        _ => {
                            return Err(
                                "expects padding_low and padding_high separated by '_'".into()
                            )
                        }
                    }
                }
                dims.len()
            }
            _ => return Err(format!("unexpected attribute name: {name}")),
        };
        if name == "size" {
            size_len = Some(len);
        } else {
            other_lens.push((name, len));
        }
    }
    let size_len = size_len.unwrap_or(0);
    for (name, len) in other_lens {
        if len != size_len {
            return Err(format!("expects '{name}=' has the same size as 'size='"));
        }
    }
    Ok(())
}

/// `padding=0_0x1_2_1` of a pad (XLA's `ParsePaddingConfig`).
pub fn check_padding_config(s: &str) -> Result<(), String> {
    for d in s.split('x') {
        match split_ints(d, '_') {
            Some(v) if v.len() == 2 || v.len() == 3 => {}
            _ => {
                return Err(
                    "expects padding config pattern like 'low_high_interior' or 'low_high'".into(),
                )
            }
        }
    }
    Ok(())
}

/// Splits `a=1, b={...}, c=x` at top-level commas into `(name, value)`
/// pairs; an item without `=` has an empty name.
fn sub_attributes(s: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let bytes = s.as_bytes();
    for i in 0..=bytes.len() {
        let c = bytes.get(i).copied().unwrap_or(b',');
        match c {
            b'{' | b'(' | b'[' => depth += 1,
            b'}' | b')' | b']' => depth -= 1,
            b',' if depth <= 0 => {
                let item = s[start..i].trim();
                if !item.is_empty() {
                    out.push(match item.split_once('=') {
                        Some((k, v)) if !k.contains(['{', '(']) => (k.trim(), v.trim()),
                        _ => ("", item),
                    });
                }
                start = i + 1;
            }
            _ => {}
        }
    }
    out
}

/// `result_accuracy={mode=highest}` or
/// `result_accuracy={tolerance={rtol=0.5, atol=1.0, ulps=2}}`.
pub fn check_result_accuracy(s: &str) -> Result<(), String> {
    let inner = s
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .ok_or("expected '{' to start result precision list")?;
    let items = sub_attributes(inner);
    let Some(&(name, value)) = items.first() else {
        return Err("expects attribute name (mode= or tolerance=) in result_accuracy".into());
    };
    match name {
        "" => Err(format!(
            "expects attribute name (mode= or tolerance=) in result_accuracy, but sees {value}"
        )),
        "mode" => {
            if matches!(
                value.to_ascii_lowercase().as_str(),
                "default" | "highest" | "tolerance"
            ) {
                Ok(())
            } else {
                Err(format!("expects ResultAccuracy type but sees: {value}"))
            }
        }
        "tolerance" => {
            let tol = value
                .strip_prefix('{')
                .and_then(|r| r.strip_suffix('}'))
                .ok_or("expected '{' to start result accuracy list")?;
            for (k, v) in sub_attributes(tol) {
                match k {
                    "ulps" | "rtol" | "atol" => {
                        if v.parse::<f64>().is_err() {
                            return Err(format!(
                                "expects a number for result_accuracy {k}, but sees {v}"
                            ));
                        }
                    }
                    "" => return Err("expects string for result_accuracy tolerance type".into()),
                    _ => return Err(format!("invalid attribute name: {k}")),
                }
            }
            Ok(())
        }
        _ => Err(format!("invalid attribute name: {name}")),
    }
}

/// `{true,false}` of `parameter_replication`: the number of elements.
pub fn parameter_replication_len(s: &str) -> Result<usize, String> {
    let inner = s
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .ok_or("expected '{' to start parameter_replication attribute")?;
    if inner.trim().is_empty() {
        return Ok(0);
    }
    let mut n = 0;
    for item in inner.split(',') {
        if !matches!(item.trim(), "true" | "false") {
            return Err(format!(
                "expects true or false in parameter_replication, but sees {}",
                item.trim()
            ));
        }
        n += 1;
    }
    Ok(n)
}

/// `replica_groups=mesh['a'=2,'b'=2, device_ids=(...)] {'a', 'b':(1)2}`:
/// axis references must name or index an axis of the mesh, and explicit
/// device ids must fill it. Other forms of replica groups are not checked.
pub fn check_mesh_replica_groups(s: &str) -> Result<(), String> {
    let Some(rest) = s.strip_prefix("mesh[") else {
        return Ok(());
    };
    let close = rest.find(']').ok_or("expected ']' to end mesh axes")?;
    let (mesh, axes) = (&rest[..close], rest[close + 1..].trim());
    let mut names: Vec<&str> = Vec::new();
    let mut sizes: Vec<i64> = Vec::new();
    let mut device_ids: Option<&str> = None;
    for (k, v) in sub_attributes(mesh) {
        if k == "device_ids" {
            device_ids = Some(v);
            continue;
        }
        let name = k
            .strip_prefix('\'')
            .and_then(|k| k.strip_suffix('\''))
            .ok_or_else(|| format!("expects a quoted axis name in mesh, but sees {k}"))?;
        let size = v
            .parse::<i64>()
            .map_err(|_| format!("expects integer axis size, but sees {v}"))?;
        names.push(name);
        sizes.push(size);
    }
    let mesh_text = format!("mesh[{mesh}]");
    if let Some(ids) = device_ids {
        let inner = ids
            .strip_prefix('(')
            .and_then(|r| r.strip_suffix(')'))
            .ok_or("expected '(' for device_ids")?;
        if !inner.trim_start().starts_with('[') {
            let given = if inner.trim().is_empty() {
                0
            } else {
                inner.split(',').count()
            };
            let expected = sizes.iter().fold(1i64, |a, &b| a.saturating_mul(b));
            if i64::try_from(given).ok() != Some(expected) {
                return Err(format!(
                    "Expected {expected} device_ids based on mesh axes, but got {given}"
                ));
            }
        }
    }
    let inner = axes
        .strip_prefix('{')
        .and_then(|r| r.strip_suffix('}'))
        .ok_or("expects a list of mesh axes in '{...}' after the mesh")?;
    for (_, item) in sub_attributes(inner) {
        let (axis, _sub) = match item.find("':") {
            Some(i) => (&item[..=i], Some(&item[i + 2..])),
            None => (item, None),
        };
        let axis = axis
            .strip_prefix('\'')
            .and_then(|a| a.strip_suffix('\''))
            .ok_or_else(|| format!("expects a quoted axis name or index, but sees {item}"))?;
        let index = match names.iter().position(|&n| n == axis) {
            Some(i) => i as i64,
            None => axis.parse::<i64>().map_err(|_| {
                format!("axis '{axis}' is not a valid axis name or index in mesh {mesh_text}")
            })?,
        };
        if index < 0 || index as usize >= names.len() {
            return Err(format!(
                "axis index {index} is out of bounds for mesh {mesh_text} which has {} axes",
                names.len()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dim_labels_follow_xla() {
        assert!(check_dim_labels("b01f_01io->b01f").is_ok());
        assert!(check_dim_labels("?b01f_0?1io->b01?f").is_ok());
        assert!(check_dim_labels("bf_io->bf").is_ok());
        assert!(check_dim_labels("00_01->10")
            .unwrap_err()
            .contains("expects unique lhs"));
        assert!(check_dim_labels("012_0123->210")
            .unwrap_err()
            .contains("same number of spatial"));
        assert!(check_dim_labels("013_0123->210")
            .unwrap_err()
            .contains("expects [0-2bf?]"));
    }

    #[test]
    fn windows_and_paddings() {
        assert!(check_window("{size=3x3 pad=1_2x1_2 lhs_dilate=2x2 rhs_reversal=1x1}").is_ok());
        assert!(check_window("{size=1x1x7x1 stride=1x4x1x1 pad=0_0x0_0x-3_3x0_0}").is_ok());
        assert!(check_window("{pad=1_1_0 size=1}")
            .unwrap_err()
            .contains("padding_low and padding_high"));
        assert!(check_window("{size=2 stride=1x1}")
            .unwrap_err()
            .contains("same size"));
        assert!(check_padding_config("0_0_0x0_-10_0x-1_-1_3").is_ok());
        assert!(check_padding_config("0_0_0_0").is_err());
    }

    #[test]
    fn result_accuracy_and_replication() {
        assert!(check_result_accuracy("{mode=highest}").is_ok());
        assert!(check_result_accuracy("{tolerance={rtol=0.5, atol=1.0, ulps=2}}").is_ok());
        assert!(check_result_accuracy("{mode=high}")
            .unwrap_err()
            .contains("expects ResultAccuracy type but sees: high"));
        assert!(check_result_accuracy("{0.5}")
            .unwrap_err()
            .contains("expects attribute name"));
        assert!(check_result_accuracy("{foo=10.0}")
            .unwrap_err()
            .contains("invalid attribute name"));
        assert_eq!(parameter_replication_len("{true,false,true}"), Ok(3));
        assert_eq!(parameter_replication_len("{}"), Ok(0));
    }

    #[test]
    fn mesh_groups() {
        assert!(check_mesh_replica_groups("mesh['axis_0'=2,'axis_1'=2] {'axis_1'}").is_ok());
        assert!(check_mesh_replica_groups("mesh['a'=2,'b'=4] {'b':(1)2}").is_ok());
        assert!(check_mesh_replica_groups("mesh['axis_0'=2,'axis_1'=2] {'1'}").is_ok());
        let e = check_mesh_replica_groups("mesh['axis_0'=2,'axis_1'=2] {'bogus'}").unwrap_err();
        assert!(e.contains("is not a valid axis name or index"), "{e}");
        let e = check_mesh_replica_groups("mesh['axis_0'=2,'axis_1'=2] {'5'}").unwrap_err();
        assert!(e.contains("out of bounds for mesh"), "{e}");
        let e =
            check_mesh_replica_groups("mesh['axis_0'=2,'axis_1'=2, device_ids=(0,1,2)] {'axis_0'}")
                .unwrap_err();
        assert!(e.contains("device_ids"), "{e}");
    }
}
