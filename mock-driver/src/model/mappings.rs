//! The table of live mappings.
//!
//! Mapping and unmapping are the hottest calls of an allocator that grows and shrinks, and
//! every copy, memset and kernel access asks which mapping covers an address. So the table
//! is a radix tree over the address space with one entry per granule (the profile's
//! minimum granularity, to which every mapping is aligned), naming the mapping that covers
//! it: finding the mapping at an address is three array reads, and mapping or unmapping
//! `k` granules writes `k` entries, with no search and no rebalancing. The mappings
//! themselves sit in a slab; empty parts of the tree are freed, so the tree's size follows
//! what is mapped, not what is reserved. Walks over a range skip empty subtrees (a
//! gigabyte, then half a terabyte, at a time).

use super::vmm::Mapping;
use slab::Slab;

/// Granules per leaf, and leaves per middle node.
const FAN_BITS: u32 = 9;
const FAN: usize = 1 << FAN_BITS;
/// Addresses the table covers: 48 bits, enough for x86-64 and aarch64 user space.
const ADDRESS_BITS: u32 = 48;

#[derive(Debug)]
struct Leaf {
    /// Slot + 1 of the mapping covering each granule; 0 for none.
    entries: [u32; FAN],
    live: u32,
}

#[derive(Debug)]
struct Mid {
    leaves: [Option<Box<Leaf>>; FAN],
    live: u32,
}

#[derive(Debug)]
pub struct Mappings {
    /// log2 of the granule.
    shift: u32,
    top: Vec<Option<Box<Mid>>>,
    slots: Slab<Mapping>,
    spare_mid: Option<Box<Mid>>,
    spare_leaf: Option<Box<Leaf>>,
}

impl Mappings {
    /// A table for mappings aligned to `granularity` (a power of two).
    pub fn new(granularity: u64) -> Self {
        assert!(
            granularity.is_power_of_two(),
            "granularity {granularity:#x}"
        );
        let shift = granularity.trailing_zeros();
        let top_bits = ADDRESS_BITS.saturating_sub(shift + 2 * FAN_BITS);
        Self {
            shift,
            top: (0..1usize << top_bits).map(|_| None).collect(),
            slots: Slab::new(),
            spare_mid: None,
            spare_leaf: None,
        }
    }

    fn unit(&self, addr: u64) -> u64 {
        addr >> self.shift
    }

    /// The entry of granule `u`: slot + 1, or 0.
    fn entry(&self, u: u64) -> u32 {
        let Some(Some(mid)) = self.top.get((u >> (2 * FAN_BITS)) as usize) else {
            return 0;
        };
        match &mid.leaves[(u >> FAN_BITS) as usize % FAN] {
            Some(leaf) => leaf.entries[u as usize % FAN],
            None => 0,
        }
    }

    /// Sets granule `u`'s entry, making or freeing the nodes on its path as needed.
    fn set(&mut self, u: u64, value: u32) {
        let t = (u >> (2 * FAN_BITS)) as usize;
        let m = (u >> FAN_BITS) as usize % FAN;
        let l = u as usize % FAN;
        if self.top[t].is_none() {
            self.top[t] = Some(self.spare_mid.take().unwrap_or_else(|| {
                Box::new(Mid {
                    leaves: std::array::from_fn(|_| None),
                    live: 0,
                })
            }));
        }
        let mid = self.top[t].as_mut().expect("made above");
        if mid.leaves[m].is_none() {
            mid.leaves[m] = Some(self.spare_leaf.take().unwrap_or_else(|| {
                Box::new(Leaf {
                    entries: [0; FAN],
                    live: 0,
                })
            }));
            mid.live += 1;
        }
        let leaf = mid.leaves[m].as_mut().expect("made above");
        match (leaf.entries[l] != 0, value != 0) {
            (false, true) => leaf.live += 1,
            (true, false) => leaf.live -= 1,
            _ => {}
        }
        leaf.entries[l] = value;
        if leaf.live == 0 {
            // Empty nodes are all zeroes: one of each is kept for the next map, so a
            // program mapping and unmapping one range over and over allocates nothing.
            self.spare_leaf = mid.leaves[m].take();
            mid.live -= 1;
            if mid.live == 0 {
                self.spare_mid = self.top[t].take();
            }
        }
    }

    /// The first granule in `[u, last]` with an entry, and the entry.
    fn next_set(&self, mut u: u64, last: u64) -> Option<(u64, u32)> {
        while u <= last {
            let slot = self.top.get((u >> (2 * FAN_BITS)) as usize)?;
            let Some(mid) = slot else {
                u = ((u >> (2 * FAN_BITS)) + 1) << (2 * FAN_BITS);
                continue;
            };
            if let Some(leaf) = &mid.leaves[(u >> FAN_BITS) as usize % FAN] {
                let base = u & !(FAN as u64 - 1);
                for i in (u - base) as usize..FAN {
                    let g = base + i as u64;
                    if g > last {
                        return None;
                    }
                    if leaf.entries[i] != 0 {
                        return Some((g, leaf.entries[i]));
                    }
                }
            }
            u = ((u >> FAN_BITS) + 1) << FAN_BITS;
        }
        None
    }

    /// The last granule in `[0, u]` with an entry, and the entry.
    fn prev_set(&self, u: u64) -> Option<(u64, u32)> {
        let mut u = u.min(((self.top.len() as u64) << (2 * FAN_BITS)).checked_sub(1)?);
        loop {
            let Some(mid) = &self.top[(u >> (2 * FAN_BITS)) as usize] else {
                u = (u >> (2 * FAN_BITS) << (2 * FAN_BITS)).checked_sub(1)?;
                continue;
            };
            if let Some(leaf) = &mid.leaves[(u >> FAN_BITS) as usize % FAN] {
                let base = u & !(FAN as u64 - 1);
                for i in (0..=(u - base) as usize).rev() {
                    if leaf.entries[i] != 0 {
                        return Some((base + i as u64, leaf.entries[i]));
                    }
                }
            }
            u = (u >> FAN_BITS << FAN_BITS).checked_sub(1)?;
        }
    }

    fn mapping(&self, entry: u32) -> &Mapping {
        &self.slots[entry as usize - 1]
    }

    /// The granules a mapping covers.
    fn units_of(&self, m: &Mapping) -> std::ops::Range<u64> {
        self.unit(m.start)..self.unit(m.start + m.size - 1) + 1
    }

    /// The mapping that starts at `start`.
    pub fn get(&self, start: &u64) -> Option<&Mapping> {
        match self.entry(self.unit(*start)) {
            0 => None,
            e => Some(self.mapping(e)).filter(|m| m.start == *start),
        }
    }

    pub fn get_mut(&mut self, start: &u64) -> Option<&mut Mapping> {
        match self.entry(self.unit(*start)) {
            0 => None,
            e => Some(&mut self.slots[e as usize - 1]).filter(|m| m.start == *start),
        }
    }

    /// The mapping covering `addr`.
    pub fn covering(&self, addr: u64) -> Option<&Mapping> {
        match self.entry(self.unit(addr)) {
            0 => None,
            e => Some(self.mapping(e)).filter(|m| addr - m.start < m.size),
        }
    }

    /// Adds a mapping, aligned to the granularity and overlapping none (the caller checks
    /// both: `overlapping` says whether anything is in the way).
    pub fn insert(&mut self, m: Mapping) {
        debug_assert!(m.size > 0 && m.start.trailing_zeros() >= self.shift);
        debug_assert!(self.overlapping(m.start, m.start + m.size).next().is_none());
        let units = self.units_of(&m);
        let slot = self.slots.insert(m);
        let entry = u32::try_from(slot + 1)
            .expect("fewer than 2^32 live mappings: each needs its own granule of address space");
        for u in units {
            self.set(u, entry);
        }
    }

    pub fn remove(&mut self, start: &u64) -> Option<Mapping> {
        self.remove_if(*start, |_| true)
    }

    /// Removes the mapping starting at `start` if `pred` holds of it.
    pub fn remove_if(
        &mut self,
        start: u64,
        pred: impl FnOnce(&Mapping) -> bool,
    ) -> Option<Mapping> {
        let e = self.entry(self.unit(start));
        if e == 0 || self.mapping(e).start != start || !pred(self.mapping(e)) {
            return None;
        }
        for u in self.units_of(self.mapping(e)) {
            self.set(u, 0);
        }
        Some(self.slots.remove(e as usize - 1))
    }

    /// The mappings that overlap `[start, end)`, in address order.
    pub fn overlapping(&self, start: u64, end: u64) -> impl Iterator<Item = &Mapping> + '_ {
        let last = if end > start { self.unit(end - 1) } else { 0 };
        let mut u = if end > start {
            Some(self.unit(start))
        } else {
            None
        };
        std::iter::from_fn(move || {
            let (_, e) = self.next_set(u?, last)?;
            let m = self.mapping(e);
            // The next mapping starts at or after this one's end.
            u = Some(self.unit(m.start + m.size - 1) + 1);
            Some(m)
        })
    }

    /// The mappings that start in `[start, end)`, in address order.
    pub fn starting_in(&self, start: u64, end: u64) -> impl Iterator<Item = &Mapping> + '_ {
        self.overlapping(start, end)
            .filter(move |m| m.start >= start)
    }

    /// The last mapping starting at or before `addr` (it may end before `addr`).
    pub fn last_at_or_before(&self, addr: u64) -> Option<&Mapping> {
        self.prev_set(self.unit(addr)).map(|(_, e)| self.mapping(e))
    }

    /// Every mapping, in address order.
    pub fn iter(&self) -> impl Iterator<Item = &Mapping> + '_ {
        self.overlapping(0, u64::MAX)
    }

    pub fn starts(&self) -> impl Iterator<Item = u64> + '_ {
        self.slots.iter().map(|(_, m)| m.start)
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

impl Default for Mappings {
    /// A table for the 2 MiB granularity of every NVIDIA GPU profiled so far.
    fn default() -> Self {
        Self::new(2 << 20)
    }
}

impl std::ops::Index<&u64> for Mappings {
    type Output = Mapping;
    fn index(&self, start: &u64) -> &Mapping {
        self.get(start).expect("a live mapping")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::vmm::AccessTable;
    use proptest::prelude::*;

    const G: u64 = 2 << 20;

    fn mapping(start: u64, size: u64) -> Mapping {
        Mapping {
            start,
            size,
            handle: start,
            access: AccessTable::none(1),
            reservation: 0,
            host_access: 0,
            host_view: false,
        }
    }

    /// An operation on the table; addresses in granules, spread over a few gigabytes and
    /// over two far-apart regions, so leaves, middle nodes and top entries all come and go.
    #[derive(Debug, Clone)]
    enum Op {
        Map { at: u64, len: u64 },
        Unmap { at: u64 },
        Probe { at: u64, len: u64 },
    }

    fn granule() -> impl Strategy<Value = u64> {
        prop_oneof![0u64..2048, (1u64 << 24)..(1u64 << 24) + 2048]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (granule(), 1u64..700).prop_map(|(at, len)| Op::Map { at, len }),
            granule().prop_map(|at| Op::Unmap { at }),
            (granule(), 1u64..3000).prop_map(|(at, len)| Op::Probe { at, len }),
        ]
    }

    proptest! {
        /// The radix table answers every query as a plain list of (start, size) would.
        #[test]
        fn answers_as_a_plain_list_does(ops in proptest::collection::vec(op(), 1..200)) {
            let mut t = Mappings::new(G);
            let mut model: Vec<(u64, u64)> = Vec::new();
            let overlaps = |model: &Vec<(u64, u64)>, s: u64, e: u64| -> Vec<u64> {
                let mut v: Vec<u64> = model.iter().filter(|(ms, mz)| *ms < e && ms + mz > s).map(|m| m.0).collect();
                v.sort();
                v
            };
            for op in ops {
                match op {
                    Op::Map { at, len } => {
                        let (s, e) = (at * G, (at + len) * G);
                        let found: Vec<u64> = t.overlapping(s, e).map(|m| m.start).collect();
                        prop_assert_eq!(&found, &overlaps(&model, s, e));
                        if found.is_empty() {
                            t.insert(mapping(s, e - s));
                            model.push((s, e - s));
                        }
                    }
                    Op::Unmap { at } => {
                        let s = at * G;
                        let expect = model.iter().position(|m| m.0 == s).map(|i| model.swap_remove(i));
                        prop_assert_eq!(t.remove(&s).map(|m| (m.start, m.size)), expect);
                    }
                    Op::Probe { at, len } => {
                        let (s, e) = (at * G + G / 2, (at + len) * G);
                        prop_assert_eq!(t.overlapping(s, e).map(|m| m.start).collect::<Vec<_>>(), overlaps(&model, s, e));
                        let starting: Vec<u64> = overlaps(&model, s, e).into_iter().filter(|ms| *ms >= s).collect();
                        prop_assert_eq!(t.starting_in(s, e).map(|m| m.start).collect::<Vec<_>>(), starting);
                        let covering = model.iter().find(|(ms, mz)| s >= *ms && s - ms < *mz).map(|m| m.0);
                        prop_assert_eq!(t.covering(s).map(|m| m.start), covering);
                        let before = model.iter().filter(|m| m.0 <= s).map(|m| m.0).max();
                        prop_assert_eq!(t.last_at_or_before(s).map(|m| m.start), before);
                        prop_assert_eq!(t.get(&(at * G)).map(|m| m.start), model.iter().find(|m| m.0 == at * G).map(|m| m.0));
                    }
                }
                prop_assert_eq!(t.len(), model.len());
                let mut all: Vec<u64> = model.iter().map(|m| m.0).collect();
                all.sort();
                prop_assert_eq!(t.iter().map(|m| m.start).collect::<Vec<_>>(), all);
            }
        }
    }

    #[test]
    fn the_tree_follows_what_is_mapped_not_what_was() {
        let mut t = Mappings::new(G);
        // Across a 512 GiB boundary, so two top entries hold it.
        let start = (1u64 << 39) - 4 * G;
        t.insert(mapping(start, 8 * G));
        assert_eq!(t.top.iter().flatten().count(), 2);
        assert_eq!(t.covering(1 << 39).map(|m| m.start), Some(start));
        t.remove(&start).unwrap();
        assert_eq!(
            t.top.iter().flatten().count(),
            0,
            "every node freed (one kept spare)"
        );
        assert!(t.is_empty() && t.iter().next().is_none());
    }
}
