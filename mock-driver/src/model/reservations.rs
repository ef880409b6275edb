//! The table of live reservations (cuMemAddressReserve's, and the mock's own behind each
//! cuMemAlloc), ordered by base address.
//!
//! The newest few reservations wait in a short unsorted list before they join the ordered
//! index: an allocator that reserves and frees in pairs (a probe of the address space, a
//! temporary range) then never touches the B-tree, whose insert and remove cost most of
//! such a pair. Lookups check both, so nothing can tell where a reservation sits.

use super::vmm::Reservation;
use std::collections::BTreeMap;

/// How many reservations wait outside the index at most: few enough that scanning them
/// on every lookup costs less than one B-tree search.
const NEWEST: usize = 8;

#[derive(Debug, Default)]
pub struct Reservations {
    index: BTreeMap<u64, Reservation>,
    /// The newest reservations, not yet in `index`; base and reservation.
    newest: Vec<(u64, Reservation)>,
}

impl Reservations {
    // Inlined so that the caller builds the reservation where it is pushed: passed by
    // reference to an outlined insert, its fields were written as words and read back
    // as vectors, a store-forwarding stall that was a tenth of a reserve+free pair.
    #[inline]
    pub fn insert(&mut self, base: u64, r: Reservation) {
        if self.newest.len() == NEWEST {
            self.index_newest();
        }
        self.newest.push((base, r));
    }

    /// Moves the waiting reservations into the ordered index (once every `NEWEST`
    /// inserts at most, so kept out of `insert`'s inlined path).
    #[cold]
    #[inline(never)]
    fn index_newest(&mut self) {
        self.index.extend(self.newest.drain(..));
    }

    pub fn get(&self, base: &u64) -> Option<&Reservation> {
        match self.newest.iter().find(|(b, _)| b == base) {
            Some((_, r)) => Some(r),
            None => self.index.get(base),
        }
    }

    pub fn get_mut(&mut self, base: &u64) -> Option<&mut Reservation> {
        match self.newest.iter_mut().find(|(b, _)| b == base) {
            Some((_, r)) => Some(r),
            None => self.index.get_mut(base),
        }
    }

    /// Forgets the reservation at `base`, giving back its size: the only thing its
    /// callers need, and returning the whole reservation cost a cuMemAddressFree a few
    /// nanoseconds of copying it out.
    pub fn remove(&mut self, base: &u64) -> Option<u64> {
        match self.newest.iter().position(|(b, _)| b == base) {
            Some(i) => Some(self.newest.swap_remove(i).1.size),
            None => self.index.remove(base).map(|r| r.size),
        }
    }

    /// The reservation holding `addr`, with its base.
    pub fn containing(&self, addr: u64) -> Option<(u64, &Reservation)> {
        let newest = self
            .newest
            .iter()
            .find(|(b, r)| addr >= *b && addr - b < r.size)
            .map(|(b, r)| (*b, r));
        newest.or_else(|| {
            self.index
                .range(..=addr)
                .next_back()
                .filter(|(b, r)| addr - **b < r.size)
                .map(|(b, r)| (*b, r))
        })
    }

    /// Whether reservations side by side cover every byte of `[start, end)`.
    pub fn cover(&self, start: u64, end: u64) -> bool {
        let mut at = start;
        while at < end {
            match self.containing(at) {
                Some((base, r)) => at = base + r.size,
                None => return false,
            }
        }
        true
    }

    /// Every reservation, in address order (for reports and context teardown, not hot).
    pub fn iter(&self) -> impl Iterator<Item = (u64, &Reservation)> {
        let mut all: Vec<(u64, &Reservation)> = self
            .index
            .iter()
            .map(|(b, r)| (*b, r))
            .chain(self.newest.iter().map(|(b, r)| (*b, r)))
            .collect();
        all.sort_unstable_by_key(|(b, _)| *b);
        all.into_iter()
    }

    pub fn bases(&self) -> impl Iterator<Item = u64> + '_ {
        self.index
            .keys()
            .copied()
            .chain(self.newest.iter().map(|(b, _)| *b))
    }

    pub fn len(&self) -> usize {
        self.index.len() + self.newest.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::vmm::ReservationKind;

    fn r(size: u64) -> Reservation {
        Reservation {
            size,
            kind: ReservationKind::Vmm,
        }
    }

    #[test]
    fn lookups_see_reservations_in_the_index_and_the_newest_alike() {
        let mut t = Reservations::default();
        // More than NEWEST, so some are in the index and some are not.
        for i in 0..(NEWEST as u64 * 3) {
            t.insert(0x1000_0000 + i * 0x100, r(0x80));
        }
        assert_eq!(t.len(), NEWEST * 3);
        for i in 0..(NEWEST as u64 * 3) {
            let base = 0x1000_0000 + i * 0x100;
            assert_eq!(t.containing(base + 0x7f).map(|(b, _)| b), Some(base));
            assert!(
                t.containing(base + 0x80).is_none(),
                "the gap after {base:#x}"
            );
            assert!(t.get(&base).is_some());
        }
        let bases: Vec<u64> = t.iter().map(|(b, _)| b).collect();
        assert!(bases.windows(2).all(|w| w[0] < w[1]), "in address order");
        // Remove from both places; what is gone is found nowhere.
        for i in (0..(NEWEST as u64 * 3)).step_by(3) {
            let base = 0x1000_0000 + i * 0x100;
            assert_eq!(t.remove(&base), Some(0x80));
            assert!(t.containing(base).is_none() && t.get(&base).is_none());
        }
        assert_eq!(t.len(), NEWEST * 2);
        t.get_mut(&0x1000_0100).unwrap().size = 0x100;
        assert_eq!(t.containing(0x1000_01ff).map(|(b, _)| b), Some(0x1000_0100));
    }
}
