//! Shardings (`{devices=[2,1]0,1}`, `{replicated}`, tuples of them, with
//! their metadata), a domain's entry and exit shardings, and the header's
//! `spmd_parameters_shardings`: read and printed.

use super::collectives::{iota, iota_text};
use super::metadata::metadata;
use super::{join, metadata_text, push_int, Cursor, PResult};
use crate::ir::attrs::*;
use crate::ir::SharedStr;

fn sharding_type(w: &str) -> ShardingType {
    ShardingType::from_name(w).unwrap_or(ShardingType::Other)
}

pub(super) fn sharding(c: &mut Cursor<'_>, text: &SharedStr) -> PResult<Sharding> {
    let mut s = Sharding::default();
    c.expect("{")?;
    if c.peek_is("{") || c.peek_is("}") {
        s.kind = ShardingType::Tuple;
        if c.eat("}") {
            return Ok(s);
        }
        loop {
            s.tuple.push(sharding(c, text)?);
            if c.eat("}") {
                return Ok(s);
            }
            c.expect(",")?;
        }
    }
    s.kind = ShardingType::Other;
    loop {
        if c.eat("}") {
            break;
        }
        let w = c.word();
        match w {
            "replicated" => s.kind = ShardingType::Replicated,
            "manual" => s.kind = ShardingType::Manual,
            "unknown" => s.kind = ShardingType::Unknown,
            "unreduced" => s.kind = ShardingType::Unreduced,
            "maximal" => {
                s.kind = ShardingType::Maximal;
                c.expect("device")?;
                c.expect("=")?;
                s.devices = vec![c.int()?];
            }
            "devices" => {
                c.expect("=")?;
                s.tile_dims = c.bracket_ints()?;
                if c.peek_is("<=") {
                    s.iota = Some(iota(c)?);
                } else {
                    loop {
                        s.devices.push(c.int()?);
                        if !c.eat(",") {
                            break;
                        }
                    }
                }
            }
            "last_tile_dim_replicate" => s.last_tile_dim_replicate = true,
            "last_tile_dims" => {
                c.expect("=")?;
                s.last_tile_dims = c.list("{", "}", |c| Ok(sharding_type(c.word())))?;
            }
            "shard_as" | "shard_like" => s.shard_group = Some((w == "shard_like", c.int()?)),
            "metadata" => {
                c.expect("=")?;
                s.metadata = c.list("{", "}", |c| metadata(c, text))?;
            }
            "" => return Err(format!("unexpected text at offset {}", c.pos)),
            w => return Err(format!("unknown sharding field {w}")),
        }
    }
    Ok(s)
}

/// `{kind="sharding", entry={...}, exit={...}}`
pub(super) fn domain(c: &mut Cursor<'_>, text: &SharedStr) -> PResult<Domain> {
    c.expect("{")?;
    c.expect("kind")?;
    c.expect("=")?;
    let kind = c.string(text)?;
    if &*kind != "sharding" {
        return Err(format!("a domain of kind {kind} is not supported"));
    }
    c.expect(",")?;
    c.expect("entry")?;
    c.expect("=")?;
    let entry = sharding(c, text)?;
    c.expect(",")?;
    c.expect("exit")?;
    c.expect("=")?;
    let exit = sharding(c, text)?;
    c.expect("}")?;
    Ok(Domain { entry, exit })
}

/// The header's `spmd_parameters_shardings={{...}, {...}}`.
pub fn shardings(text: &SharedStr) -> PResult<Vec<Sharding>> {
    let mut c = Cursor::new(text);
    c.list("{", "}", |c| sharding(c, text))
}

/// `HloSharding::ToString`.
pub fn sharding_text(s: &Sharding, t: &mut String, metadata: bool) {
    if s.kind == ShardingType::Tuple {
        t.push('{');
        for (i, e) in s.tuple.iter().enumerate() {
            if i > 0 {
                t.push_str(", ");
                if i % 5 == 0 {
                    t.push_str("/*index=");
                    push_int(t, i as i64);
                    t.push_str("*/");
                }
            }
            sharding_text(e, t, metadata);
        }
        t.push('}');
        return;
    }
    t.push('{');
    match s.kind {
        ShardingType::Replicated => t.push_str("replicated"),
        ShardingType::Manual => t.push_str("manual"),
        ShardingType::Unknown => t.push_str("unknown"),
        ShardingType::Unreduced => t.push_str("unreduced"),
        ShardingType::Maximal => {
            t.push_str("maximal device=");
            push_int(t, *s.devices.first().unwrap_or(&0));
        }
        _ => {
            t.push_str("devices=[");
            join(t, &s.tile_dims, ",", |t, x| push_int(t, *x));
            t.push(']');
            match &s.iota {
                Some(i) => iota_text(i, t),
                None => join(t, &s.devices, ",", |t, x| push_int(t, *x)),
            }
            if s.last_tile_dim_replicate {
                t.push_str(" last_tile_dim_replicate");
            }
            if !s.last_tile_dims.is_empty() {
                t.push_str(" last_tile_dims={");
                join(t, &s.last_tile_dims, ", ", |t, x| t.push_str(x.name()));
                t.push('}');
            }
        }
    }
    if let Some((like, id)) = s.shard_group {
        t.push_str(if like { " shard_like " } else { " shard_as " });
        push_int(t, id);
    }
    if metadata && !s.metadata.is_empty() {
        t.push_str(" metadata={");
        join(t, &s.metadata, ", ", metadata_text);
        t.push('}');
    }
    t.push('}');
}
