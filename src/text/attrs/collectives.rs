//! The collectives' replica groups, as lists (`{{0,1},{2,3}}`) or iota
//! tiles (`[2,2]<=[4]`, `[2,2]<=[2,2]T(1,0)`; shardings write their
//! device assignments so too): read and printed.

use super::{ints, join, push_int, Cursor, PResult};
use crate::ir::attrs::*;
use crate::ir::SharedStr;

/// `<=[dims]` and an optional `T(perm)` (else the identity).
pub(super) fn iota(c: &mut Cursor<'_>) -> PResult<Iota> {
    c.expect("<=")?;
    let reshape_dims = c.bracket_ints()?;
    let transpose_perm = if c.peek_is("T(") {
        c.pos += 1;
        c.list("(", ")", |c| {
            c.int()
                .and_then(|v| i32::try_from(v).map_err(|_| "permutation out of range".into()))
        })?
    } else {
        (0..reshape_dims.len() as i32).collect()
    };
    Ok(Iota {
        reshape_dims,
        transpose_perm,
    })
}

pub(super) fn replica_groups(c: &mut Cursor<'_>, text: &SharedStr) -> PResult<ReplicaGroups> {
    if c.eat("mesh[") {
        let mut mesh = Vec::new();
        let mut devices = None;
        loop {
            if c.eat("device_ids") {
                c.expect("=")?;
                c.expect("(")?;
                devices = Some(if c.peek_is("[") {
                    let shape = c.bracket_ints()?;
                    MeshDevices::Iota {
                        shape,
                        iota: iota(c)?,
                    }
                } else {
                    let mut ids = Vec::new();
                    while !c.peek_is(")") {
                        ids.push(c.int()?);
                        if !c.eat(",") {
                            break;
                        }
                    }
                    MeshDevices::List(ids)
                });
                c.expect(")")?;
            } else {
                c.expect("'")?;
                let start = c.pos;
                let name = c.word();
                let name = text.sub(start, start + name.len());
                c.expect("'")?;
                c.expect("=")?;
                mesh.push(MeshAxis {
                    name,
                    size: c.int()?,
                });
            }
            if c.eat("]") {
                break;
            }
            c.expect(",")?;
        }
        let axes = c.list("{", "}", |c| {
            c.expect("'")?;
            let name = c.word();
            c.expect("'")?;
            let axis = mesh
                .iter()
                .position(|a| &*a.name == name)
                .ok_or("unknown mesh axis")? as i64;
            let sub_axis = if c.eat(":") {
                c.expect("(")?;
                let pre = c.int()?;
                c.expect(")")?;
                Some((pre, c.int()?))
            } else {
                None
            };
            Ok(AxisRef { axis, sub_axis })
        })?;
        return Ok(ReplicaGroups::Mesh {
            mesh,
            devices,
            axes,
        });
    }
    if c.peek_is("[") {
        let d = c.bracket_ints()?;
        let [groups, per_group] = d[..] else {
            return Err("expects [groups,devices per group]".into());
        };
        return Ok(ReplicaGroups::Iota {
            groups,
            per_group,
            iota: iota(c)?,
        });
    }
    Ok(ReplicaGroups::Explicit(c.int_lists()?))
}

/// `<=[dims]`, and `T(perm)` unless the permutation is the identity.
pub(super) fn iota_text(i: &Iota, t: &mut String) {
    t.push_str("<=[");
    join(t, &i.reshape_dims, ",", |t, x| push_int(t, *x));
    t.push(']');
    let identity = i
        .transpose_perm
        .iter()
        .enumerate()
        .all(|(k, &x)| x as usize == k);
    if !identity {
        t.push_str("T(");
        join(t, &i.transpose_perm, ",", |t, x| push_int(t, i64::from(*x)));
        t.push(')');
    }
}

pub(super) fn replica_groups_text(t: &mut String, r: &ReplicaGroups) {
    match r {
        ReplicaGroups::Explicit(groups) => {
            t.push('{');
            join(t, groups, ",", |t, g| ints(t, g));
            t.push('}');
        }
        ReplicaGroups::Iota {
            groups,
            per_group,
            iota,
        } => {
            t.push('[');
            push_int(t, *groups);
            t.push(',');
            push_int(t, *per_group);
            t.push(']');
            iota_text(iota, t);
        }
        ReplicaGroups::Mesh {
            mesh,
            devices,
            axes,
        } => {
            t.push_str("mesh[");
            join(t, mesh, ",", |t, ax| {
                t.push('\'');
                t.push_str(&ax.name);
                t.push_str("'=");
                push_int(t, ax.size);
            });
            match devices {
                Some(MeshDevices::List(ids)) => {
                    t.push_str(", device_ids=(");
                    join(t, ids, ",", |t, x| push_int(t, *x));
                    t.push(')');
                }
                Some(MeshDevices::Iota { shape, iota }) => {
                    t.push_str(", device_ids=([");
                    join(t, shape, ",", |t, x| push_int(t, *x));
                    t.push(']');
                    iota_text(iota, t);
                    t.push(')');
                }
                None => {}
            }
            t.push_str("] {");
            join(t, axes, ",", |t, r| {
                let name = usize::try_from(r.axis)
                    .ok()
                    .and_then(|i| mesh.get(i))
                    .map_or("?", |a| &*a.name);
                t.push('\'');
                t.push_str(name);
                t.push('\'');
                if let Some((pre, size)) = r.sub_axis {
                    t.push_str(":(");
                    push_int(t, pre);
                    t.push(')');
                    push_int(t, size);
                }
            });
            t.push('}');
        }
    }
}
