//! The table of live mappings, ordered by start address.
//!
//! Mappings are mapped and unmapped far more often than anything else in the model, so
//! the ordered index holds only a start address and a slot number (twelve bytes), and the
//! mappings themselves sit in a slab: inserting or removing one moves a few small index
//! entries instead of whole 64-byte mappings within a B-tree node (measured: this halves
//! the cost of a cuMemMap + cuMemUnmap pair).

use super::vmm::Mapping;
use slab::Slab;
use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::ops::RangeBounds;

#[derive(Debug, Default)]
pub struct Mappings {
    /// Start address to slot in `slots`.
    index: BTreeMap<u64, u32>,
    slots: Slab<Mapping>,
}

impl Mappings {
    pub fn get(&self, start: &u64) -> Option<&Mapping> {
        self.index.get(start).map(|&i| &self.slots[i as usize])
    }

    pub fn get_mut(&mut self, start: &u64) -> Option<&mut Mapping> {
        self.index.get(start).map(|&i| &mut self.slots[i as usize])
    }

    /// Adds a mapping; the caller has checked that none overlaps it.
    pub fn insert(&mut self, m: Mapping) {
        let start = m.start;
        let slot = u32::try_from(self.slots.insert(m))
            .expect("fewer than 2^32 live mappings: each needs its own granule of address space");
        if let Some(old) = self.index.insert(start, slot) {
            // Overlaps are refused before insert; keep the table consistent regardless.
            self.slots.remove(old as usize);
        }
    }

    pub fn remove(&mut self, start: &u64) -> Option<Mapping> {
        self.index
            .remove(start)
            .map(|i| self.slots.remove(i as usize))
    }

    /// Removes the mapping starting at `start` if `pred` holds of it: one search of
    /// the index for unmap's common case (one whole mapping).
    pub fn remove_if(
        &mut self,
        start: u64,
        pred: impl FnOnce(&Mapping) -> bool,
    ) -> Option<Mapping> {
        match self.index.entry(start) {
            Entry::Occupied(e) if pred(&self.slots[*e.get() as usize]) => {
                Some(self.slots.remove(e.remove() as usize))
            }
            _ => None,
        }
    }

    /// The mappings whose start lies in `r`, in address order.
    pub fn range(
        &self,
        r: impl RangeBounds<u64>,
    ) -> impl DoubleEndedIterator<Item = &Mapping> + '_ {
        self.index.range(r).map(|(_, &i)| &self.slots[i as usize])
    }

    /// The last mapping starting at or before `addr` (it may end before `addr`).
    pub fn last_at_or_before(&self, addr: u64) -> Option<&Mapping> {
        self.range(..=addr).next_back()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Mapping> + '_ {
        self.range(..)
    }

    pub fn starts(&self) -> impl Iterator<Item = u64> + '_ {
        self.index.keys().copied()
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }
}

impl std::ops::Index<&u64> for Mappings {
    type Output = Mapping;
    fn index(&self, start: &u64) -> &Mapping {
        self.get(start).expect("a live mapping")
    }
}
