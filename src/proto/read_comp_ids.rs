//! Which of the module's computations a proto computation id names.
//!
//! Read first ([`CompIds::Known`]), the ids cost a pass over the whole
//! proto before any computation converts. Learned as the computations
//! convert ([`CompIds::Learned`]), that pass goes: a computation called
//! before its own id is read (the entry, converted first for its size,
//! calls everything) gets a stand-in, a [`CompId`] past the module's,
//! replaced once every computation is read ([`Learned::resolve`]).

use super::err;
use super::ProtoError;
use crate::ir::instruction::AttrValue;
use crate::ir::CompId;
use crate::util::FxMap;
use smallvec::SmallVec;
use std::sync::Mutex;

/// Proto computation id -> the module's computation.
pub(super) enum CompIds<'a> {
    /// Every computation's id, read before any converts: its position in
    /// the module, and the module's computations by position.
    Known {
        positions: &'a FxMap<i64, usize>,
        refs: &'a [CompId],
    },
    Learned(Mutex<Learned>),
}

/// The ids learned so far.
pub(super) struct Learned {
    /// The module's computations by position: `CompId`s `0..n`.
    count: usize,
    /// The computation each id names: its own once it was read, else a
    /// stand-in.
    by_id: FxMap<i64, CompId>,
    /// Each stand-in's computation (by stand-in index), once read.
    stand_ins: Vec<Option<CompId>>,
}

impl<'a> CompIds<'a> {
    /// A table to learn the ids of `count` computations into, whose
    /// `CompId`s are `0..count` (a fresh module's).
    pub(super) fn learned(count: usize) -> CompIds<'a> {
        CompIds::Learned(Mutex::new(Learned {
            count,
            by_id: FxMap::default(),
            stand_ins: Vec::new(),
        }))
    }

    /// The computation `id` names (a stand-in while learning, if it was not
    /// read yet).
    pub(super) fn lookup(&self, id: i64) -> Result<CompId, ProtoError> {
        match self {
            CompIds::Known { positions, refs } => match positions.get(&id) {
                Some(&i) => Ok(refs[i]),
                None => err(format!("called computation id {id} does not exist")),
            },
            CompIds::Learned(learned) => {
                let mut l = learned.lock().unwrap_or_else(|e| e.into_inner());
                let Learned {
                    count,
                    by_id,
                    stand_ins,
                } = &mut *l;
                Ok(*by_id.entry(id).or_insert_with(|| {
                    stand_ins.push(None);
                    CompId::new(*count + stand_ins.len() - 1)
                }))
            }
        }
    }

    /// Learns that the computation at `position` has proto id `id`; false
    /// if another has it too (the read that takes the ids first says so).
    pub(super) fn define(&self, id: i64, position: usize) -> bool {
        let CompIds::Learned(learned) = self else {
            return true;
        };
        let mut l = learned.lock().unwrap_or_else(|e| e.into_inner());
        let own = CompId::new(position);
        let count = l.count;
        match l.by_id.insert(id, own) {
            None => true,
            Some(c) if c.index() >= count => {
                if let Some(slot) = l.stand_ins.get_mut(c.index() - count) {
                    *slot = Some(own);
                }
                true
            }
            Some(_) => false,
        }
    }

    /// What was learned, once every computation was read; `None` for a
    /// [`CompIds::Known`] table.
    pub(super) fn into_learned(self) -> Option<Learned> {
        match self {
            CompIds::Known { .. } => None,
            CompIds::Learned(l) => Some(l.into_inner().unwrap_or_else(|e| e.into_inner())),
        }
    }
}

impl Learned {
    /// The computation `id` names, if one has it.
    pub(super) fn get(&self, id: i64) -> Option<CompId> {
        self.by_id
            .get(&id)
            .copied()
            .filter(|c| c.index() < self.count)
    }

    /// Each stand-in's computation; `None` if one stands for an id no
    /// computation has.
    pub(super) fn resolve(&self) -> Option<StandIns> {
        let targets = self.stand_ins.iter().copied().collect::<Option<Vec<_>>>()?;
        Some(StandIns {
            count: self.count,
            targets,
        })
    }
}

/// The computations the stand-ins stand for.
pub(super) struct StandIns {
    count: usize,
    targets: Vec<CompId>,
}

impl StandIns {
    pub(super) fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    fn fix(&self, c: &mut CompId) {
        if let Some(&t) = c
            .index()
            .checked_sub(self.count)
            .and_then(|k| self.targets.get(k))
        {
            *c = t;
        }
    }

    /// Replaces the stand-ins in a computation's list of calls; whether
    /// there were any (then its instructions call them too).
    pub(super) fn replace_in_calls(&self, calls: &mut [SmallVec<[CompId; 2]>]) -> bool {
        let mut any = false;
        for c in calls.iter_mut().flatten() {
            if c.index() >= self.count {
                self.fix(c);
                any = true;
            }
        }
        any
    }

    /// Replaces the stand-ins an attribute names.
    pub(super) fn replace_in(&self, value: &mut AttrValue) {
        match value {
            AttrValue::Comp(c) => self.fix(c),
            AttrValue::Comps(cs) => cs.iter_mut().for_each(|c| self.fix(c)),
            _ => {}
        }
    }
}
