//! Where device memory and device addresses come from on the host: ranges of a few large
//! sparse arenas (`DeviceMemory`) and of a few large PROT_NONE chunks of address space
//! (`AddressPool`). Both are plain bookkeeping over free lists, so cuMemCreate,
//! cuMemRelease, cuMemAddressReserve and cuMemAddressFree make no system call in the
//! common case, and the host's fds and mappings do not grow with the number of
//! allocations or reservations.

use crate::os::{AddressSpace, Arena, HostPtr};
use std::collections::{BTreeMap, BTreeSet};
use std::io;

/// Free ranges with best-fit allocation and coalescing. Keys are (space, offset): a space
/// is an arena or a chunk, and ranges of different spaces never merge.
#[derive(Debug, Default)]
struct FreeRanges {
    by_place: BTreeMap<(usize, u64), u64>,
    by_size: BTreeSet<(u64, usize, u64)>,
    /// Ranges given back lately, not yet merged into the trees: an allocator that frees
    /// and allocates the same sizes (the common case) takes them back at the cost of a
    /// short scan, without the half-dozen tree updates of a merge and a split.
    recent: Vec<(usize, u64, u64)>,
}

/// How many ranges `recent` holds before the older half is merged.
const RECENT: usize = 256;

impl FreeRanges {
    /// Gives a range back, merged later (see `recent`).
    fn put(&mut self, space: usize, start: u64, len: u64) {
        if self.recent.len() == RECENT {
            let old: Vec<_> = self.recent.drain(..RECENT / 2).collect();
            for (s, o, l) in old {
                self.insert(s, o, l);
            }
        }
        self.recent.push((space, start, len));
    }

    /// Merges every recent range into the trees.
    fn flush(&mut self) {
        for (s, o, l) in std::mem::take(&mut self.recent) {
            self.insert(s, o, l);
        }
    }

    fn insert(&mut self, space: usize, mut start: u64, mut len: u64) {
        if let Some((&(s, o), &l)) = self.by_place.range(..(space, start)).next_back() {
            if s == space && o + l == start {
                self.remove(s, o, l);
                start = o;
                len += l;
            }
        }
        if let Some(&l) = self.by_place.get(&(space, start + len)) {
            self.remove(space, start + len, l);
            len += l;
        }
        self.by_place.insert((space, start), len);
        self.by_size.insert((len, space, start));
    }

    fn remove(&mut self, space: usize, start: u64, len: u64) {
        self.by_place.remove(&(space, start));
        self.by_size.remove(&(len, space, start));
    }

    /// The smallest free range that holds `len` bytes at an `align`ed start (looking at a
    /// few candidates only, so a fragmented list never makes this slow), carved out.
    fn take(&mut self, len: u64, align: u64) -> Option<(usize, u64)> {
        if let Some(i) = self
            .recent
            .iter()
            .rposition(|&(_, o, l)| l == len && super::vmm::aligned(o, align))
        {
            let (space, start, _) = self.recent.swap_remove(i);
            return Some((space, start));
        }
        let (flen, space, fstart, at) =
            self.by_size
                .range((len, 0, 0)..)
                .take(64)
                .find_map(|&(flen, space, fstart)| {
                    let at = fstart.checked_next_multiple_of(align)?;
                    (at + len <= fstart + flen).then_some((flen, space, fstart, at))
                })?;
        self.remove(space, fstart, flen);
        if at > fstart {
            self.insert(space, fstart, at - fstart);
        }
        if at + len < fstart + flen {
            self.insert(space, at + len, fstart + flen - at - len);
        }
        Some((space, at))
    }

    /// Carves exactly `[start, start+len)` of `space` if it is free.
    fn take_at(&mut self, space: usize, start: u64, len: u64) -> bool {
        self.flush();
        let Some((&(s, fstart), &flen)) = self.by_place.range(..=(space, start)).next_back() else {
            return false;
        };
        if s != space || fstart + flen < start + len {
            return false;
        }
        self.remove(s, fstart, flen);
        if start > fstart {
            self.insert(space, fstart, start - fstart);
        }
        if start + len < fstart + flen {
            self.insert(space, start + len, fstart + flen - start - len);
        }
        true
    }

    fn drop_space(&mut self, space: usize) {
        self.flush();
        let gone: Vec<_> = self
            .by_place
            .range((space, 0)..(space + 1, 0))
            .map(|(&(s, o), &l)| (s, o, l))
            .collect();
        for (s, o, l) in gone {
            self.remove(s, o, l);
        }
    }
}

/// Each arena is this large (sparse: it costs only the pages touched), or as large as the
/// one allocation that needs more.
const ARENA_BYTES: u64 = 256 << 30;

/// The physical memory of allocations that only this process can reach.
#[derive(Debug, Default)]
pub struct DeviceMemory {
    arenas: Vec<Option<ArenaSlot>>,
    free: FreeRanges,
    /// Set by `after_fork_child`, acted on at the next allocation or release (a fork
    /// handler should not allocate).
    forked: bool,
    /// Released ranges that may hold pages, not yet given back: see `release`.
    dirty: Vec<ArenaRange>,
    dirty_bytes: u64,
    /// `DIRTY_RANGES` unless a test asks for another batch (`set_dirty_ranges`).
    dirty_ranges: Option<usize>,
}

/// At most this many released ranges that may hold pages wait to be given back, and at
/// most this many bytes of them (an upper bound of the pages they hold).
const DIRTY_RANGES: usize = 64;
const DIRTY_BYTES: u64 = 256 << 20;

#[derive(Debug)]
struct ArenaSlot {
    arena: Arena,
    /// Made before a fork, in a child: the parent still uses the arena, so the child
    /// neither carves new allocations from it nor gives its pages back.
    inherited: bool,
}

/// A range of an arena: where one allocation's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArenaRange {
    pub arena: usize,
    pub offset: u64,
    pub len: u64,
}

impl DeviceMemory {
    /// A zero-filled range of `len` bytes.
    pub fn allocate(&mut self, len: u64) -> io::Result<ArenaRange> {
        self.settle_fork();
        if let Some((arena, offset)) = self.free.take(len, 1) {
            return Ok(ArenaRange { arena, offset, len });
        }
        let size = len.max(ARENA_BYTES);
        let bytes = usize::try_from(size).map_err(|_| io::ErrorKind::OutOfMemory)?;
        let arena = Arena::create(bytes)?;
        let index = self.arenas.len();
        self.arenas.push(Some(ArenaSlot {
            arena,
            inherited: false,
        }));
        self.free.insert(index, 0, size);
        let (arena, offset) = self.free.take(len, 1).expect("a fresh arena holds it");
        Ok(ArenaRange { arena, offset, len })
    }

    /// Takes a range back. A range never read or written holds no pages and is free for
    /// reuse at once. One that may hold pages must give them back first (hole punching),
    /// so that the next allocation there reads zeros and the host holds only what live
    /// allocations touched; a punch costs several microseconds whatever its size (about
    /// 9 us for 2 MiB on the 2-core CI machine, more than the real driver's cuMemRelease),
    /// so such ranges wait until 64 of them or 256 MiB have gathered, and adjacent ones
    /// (an allocator freeing what it allocated together) go back in one punch.
    pub fn release(&mut self, r: ArenaRange, touched: bool) {
        self.settle_fork();
        let Some(Some(slot)) = self.arenas.get(r.arena) else {
            return;
        };
        if slot.inherited {
            return;
        }
        let arena_len = slot.arena.len() as u64;
        if r.len < arena_len {
            if touched {
                self.dirty.push(r);
                self.dirty_bytes += r.len;
                let batch = self.dirty_ranges.unwrap_or(DIRTY_RANGES);
                if self.dirty.len() >= batch || self.dirty_bytes >= DIRTY_BYTES {
                    self.give_back_dirty();
                }
            } else {
                self.free.put(r.arena, r.offset, r.len);
            }
            return;
        }
        if touched && slot.arena.punch(r.offset as usize, r.len as usize).is_err() {
            // The pages could not be given back (not seen on Linux's memfd): the range is
            // not reused, so no new allocation reads old data.
            return;
        }
        // An arena made for one huge allocation goes back to the host with it, unless it
        // is the only one.
        self.free.insert(r.arena, r.offset, r.len);
        if self.free.by_place.get(&(r.arena, 0)) == Some(&arena_len)
            && self.arenas.iter().flatten().count() > 1
        {
            self.free.drop_space(r.arena);
            self.arenas[r.arena] = None;
        }
    }

    /// How many touched ranges wait before they are given back together: tests ask for
    /// fewer, so that released memory is reused soon and must read zeros.
    pub fn set_dirty_ranges(&mut self, n: usize) {
        self.dirty_ranges = Some(n.max(1));
    }

    /// Punches the waiting ranges, adjacent ones together, and frees them for reuse.
    pub fn give_back_dirty(&mut self) {
        let mut dirty = std::mem::take(&mut self.dirty);
        self.dirty_bytes = 0;
        dirty.sort_by_key(|r| (r.arena, r.offset));
        let mut i = 0;
        while i < dirty.len() {
            let (arena, start) = (dirty[i].arena, dirty[i].offset);
            let mut end = start + dirty[i].len;
            let mut j = i + 1;
            while j < dirty.len() && dirty[j].arena == arena && dirty[j].offset == end {
                end += dirty[j].len;
                j += 1;
            }
            let punched = self.arenas[arena].as_ref().is_some_and(|s| {
                s.arena
                    .punch(start as usize, (end - start) as usize)
                    .is_ok()
            });
            // A range whose pages could not be given back is not reused (see above).
            if punched {
                self.free.insert(arena, start, end - start);
            }
            i = j;
        }
    }

    pub fn ptr(&self, r: ArenaRange) -> HostPtr {
        self.slot(r).arena.ptr(r.offset as usize)
    }

    /// The pieces of the range holding pages, as (offset in the range, length).
    pub fn data_extents(&self, r: ArenaRange) -> Vec<(usize, usize)> {
        self.slot(r)
            .arena
            .data_extents(r.offset as usize, r.len as usize)
    }

    fn slot(&self, r: ArenaRange) -> &ArenaSlot {
        self.arenas[r.arena]
            .as_ref()
            .expect("a live range's arena lives")
    }

    /// In a child after fork: the parent's arenas are left alone (see `ArenaSlot`). Only
    /// a flag here: this runs in a fork handler.
    pub fn after_fork_child(&mut self) {
        self.forked = true;
    }

    fn settle_fork(&mut self) {
        if !std::mem::take(&mut self.forked) {
            return;
        }
        self.dirty.clear();
        self.dirty_bytes = 0;
        for i in 0..self.arenas.len() {
            if let Some(s) = &mut self.arenas[i] {
                s.inherited = true;
                self.free.drop_space(i);
            }
        }
    }

    /// Host fds and mappings held: one each per arena.
    pub fn arenas(&self) -> usize {
        self.arenas.iter().flatten().count()
    }
}

/// Address space is reserved from the host in chunks this large (PROT_NONE, MAP_NORESERVE:
/// free), or larger for one reservation that needs more.
const CHUNK_BYTES: u64 = 1 << 40;

/// The address space reservations are carved from. Freed ranges stay PROT_NONE, so a host
/// dereference of a device address faults whether it is reserved, mapped or freed.
#[derive(Debug, Default)]
pub struct AddressPool {
    chunks: Vec<Option<AddressSpace>>,
    free: FreeRanges,
}

impl AddressPool {
    /// `len` bytes aligned to `align`, at `hint` if that range is free.
    pub fn reserve(&mut self, len: u64, align: u64, hint: u64) -> io::Result<u64> {
        if hint != 0 {
            if let Some(at) = self.take_at(hint, len) {
                return Ok(at);
            }
            // Not in a chunk of ours: a chunk of its own at the hint, if the host has the
            // range free.
            if let (Ok(l), Ok(h)) = (usize::try_from(len), usize::try_from(hint)) {
                if let Ok(space) = AddressSpace::reserve(l, align as usize, h) {
                    if space.base() == h {
                        let i = self.add_chunk(space);
                        let taken = self.free.take_at(i, hint, len);
                        debug_assert!(taken);
                        return Ok(hint);
                    }
                }
            }
        }
        if let Some((_, at)) = self.free.take(len, align) {
            return Ok(at);
        }
        let size = len.max(CHUNK_BYTES);
        let (s, a) = match (usize::try_from(size), usize::try_from(align.max(2 << 20))) {
            (Ok(s), Ok(a)) => (s, a),
            _ => return Err(io::ErrorKind::OutOfMemory.into()),
        };
        let space = match AddressSpace::reserve(s, a, 0) {
            Ok(space) => space,
            // Less than a chunk left in the host's address space: exactly what is asked.
            Err(_) if size > len => AddressSpace::reserve(len as usize, a, 0)?,
            Err(e) => return Err(e),
        };
        self.add_chunk(space);
        Ok(self
            .free
            .take(len, align)
            .expect("a fresh chunk holds it")
            .1)
    }

    /// Carves exactly `[start, start+len)` if it is free address space of ours.
    pub fn take_exactly(&mut self, start: u64, len: u64) -> bool {
        self.take_at(start, len).is_some()
    }

    fn take_at(&mut self, start: u64, len: u64) -> Option<u64> {
        let chunk = self.chunk_of(start)?;
        self.free.take_at(chunk, start, len).then_some(start)
    }

    fn chunk_of(&self, addr: u64) -> Option<usize> {
        self.chunks.iter().position(|c| {
            c.as_ref().is_some_and(|c| {
                addr >= c.base() as u64 && addr - (c.base() as u64) < c.len() as u64
            })
        })
    }

    fn add_chunk(&mut self, space: AddressSpace) -> usize {
        let (base, len) = (space.base() as u64, space.len() as u64);
        let i = match self.chunks.iter().position(Option::is_none) {
            Some(i) => {
                self.chunks[i] = Some(space);
                i
            }
            None => {
                self.chunks.push(Some(space));
                self.chunks.len() - 1
            }
        };
        self.free.insert(i, base, len);
        i
    }

    /// Takes a range back. A chunk larger than the usual size (made for one huge
    /// reservation) goes back to the host once wholly free, so that its address space is
    /// not held for nothing.
    pub fn free(&mut self, start: u64, len: u64) {
        let Some(i) = self.chunk_of(start) else {
            return;
        };
        let c = self.chunks[i].as_ref().expect("found above");
        let (base, clen) = (c.base() as u64, c.len() as u64);
        if clen == CHUNK_BYTES {
            self.free.put(i, start, len);
            return;
        }
        self.free.insert(i, start, len);
        if self.free.by_place.get(&(i, base)) == Some(&clen) {
            self.free.drop_space(i);
            self.chunks[i] = None;
        }
    }

    /// Whether every byte of `[start, start+len)` lies in address space of ours (chunks
    /// side by side make one run): the only host address space the mock may place views
    /// in, protect or clear.
    pub fn holds(&self, start: u64, len: u64) -> bool {
        let Some(end) = start.checked_add(len) else {
            return false;
        };
        let mut at = start;
        while at < end {
            let Some(i) = self.chunk_of(at) else {
                return false;
            };
            let c = self.chunks[i].as_ref().expect("chunk_of finds live chunks");
            at = c.base() as u64 + c.len() as u64;
        }
        true
    }

    /// Host mappings held: one per chunk.
    pub fn chunks(&self) -> usize {
        self.chunks.iter().flatten().count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const G: u64 = 2 << 20;

    #[test]
    fn free_ranges_coalesce_and_fit_best() {
        let mut f = FreeRanges::default();
        f.insert(0, 0, 100 * G);
        let a = f.take(G, 1).unwrap();
        let b = f.take(G, 1).unwrap();
        let c = f.take(2 * G, 1).unwrap();
        assert_eq!((a, b, c), ((0, 0), (0, G), (0, 2 * G)));
        f.insert(0, G, G);
        // The 2 MiB hole is the best fit for 2 MiB; a 4 MiB request goes elsewhere.
        assert_eq!(f.take(2 * G, 1).unwrap(), (0, 4 * G));
        assert_eq!(f.take(G, 1).unwrap(), (0, G));
        f.insert(0, 0, G);
        f.insert(0, G, G);
        f.insert(0, 2 * G, 2 * G);
        f.insert(0, 4 * G, 2 * G);
        assert_eq!(f.by_place.len(), 1, "{:?}", f.by_place);
        assert_eq!(f.by_place[&(0, 0)], 100 * G);
    }

    #[test]
    fn aligned_takes_leave_the_head_free() {
        let mut f = FreeRanges::default();
        f.insert(0, G, 100 * G);
        assert_eq!(f.take(G, 8 * G).unwrap(), (0, 8 * G));
        assert_eq!(f.take(7 * G, 1).unwrap(), (0, G));
        assert!(f.take_at(0, 20 * G, G));
        assert!(!f.take_at(0, 20 * G, G));
    }

    #[test]
    fn ranges_of_two_spaces_never_merge() {
        let mut f = FreeRanges::default();
        f.insert(0, 0, G);
        f.insert(1, G, G);
        assert_eq!(f.by_place.len(), 2);
        assert_eq!(f.take(2 * G, 1), None);
    }

    #[test]
    fn reservations_come_from_few_chunks_and_are_reused() {
        let mut p = AddressPool::default();
        let a: Vec<u64> = (0..1000).map(|_| p.reserve(G, G, 0).unwrap()).collect();
        assert_eq!(p.chunks(), 1);
        for &x in &a {
            p.free(x, G);
        }
        assert_eq!(
            p.reserve(G, G, 0).unwrap(),
            a[999],
            "the last freed comes back first"
        );
        p.free(a[999], G);
        p.free.flush();
        assert_eq!(p.free.by_place.len(), 1, "all coalesced again");
        let big = p.reserve(64 << 40, G, 0).unwrap();
        assert_eq!(p.chunks(), 2);
        p.free(big, 64 << 40);
        assert_eq!(p.chunks(), 1, "the huge chunk goes back to the host");
        let hint = a[10];
        assert_eq!(p.reserve(G, G, hint).unwrap(), hint);
    }

    #[test]
    fn a_forked_child_leaves_the_parents_arenas_alone() {
        let mut m = DeviceMemory::default();
        let a = m.allocate(G).unwrap();
        // Safety: the range is 2 MiB of a live arena.
        unsafe { m.ptr(a).as_ptr().write(7) };
        m.after_fork_child();
        m.release(a, true);
        // Safety: as above: the inherited arena stays mapped.
        assert_eq!(unsafe { m.ptr(a).as_ptr().read() }, 7, "not punched");
        let b = m.allocate(G).unwrap();
        assert_ne!(b.arena, a.arena, "a new arena of the child's own");
        assert_eq!(m.arenas(), 2);
    }

    #[test]
    fn touched_ranges_go_back_together() {
        let mut m = DeviceMemory::default();
        let rs: Vec<_> = (0..DIRTY_RANGES).map(|_| m.allocate(G).unwrap()).collect();
        for r in &rs {
            // Safety: each range is 2 MiB of a live arena.
            unsafe { m.ptr(*r).as_ptr().write(9) };
        }
        for r in &rs[..DIRTY_RANGES - 1] {
            m.release(*r, true);
        }
        assert_eq!(m.dirty.len(), DIRTY_RANGES - 1);
        m.release(rs[DIRTY_RANGES - 1], true);
        assert!(m.dirty.is_empty(), "given back at the 64th");
        // Safety: as above; punched pages read zeros.
        assert!(rs.iter().all(|r| unsafe { m.ptr(*r).as_ptr().read() } == 0));
        m.free.flush();
        assert_eq!(
            m.free.by_place.len(),
            1,
            "one free range again: {:?}",
            m.free.by_place
        );
    }

    #[test]
    fn device_memory_reuses_ranges_and_zeroes_them() {
        let mut m = DeviceMemory::default();
        let a = m.allocate(G).unwrap();
        // Safety: the range is 2 MiB of a live arena.
        unsafe { m.ptr(a).as_ptr().write(7) };
        m.release(a, true);
        let c = m.allocate(G).unwrap();
        assert_ne!(a, c, "a touched range waits to be punched");
        m.give_back_dirty();
        m.release(c, false);
        assert_eq!(
            m.allocate(G).unwrap(),
            c,
            "an untouched one is reused at once"
        );
        let b = m.allocate(G).unwrap();
        assert_eq!(a, b);
        // Safety: as above.
        assert_eq!(unsafe { m.ptr(b).as_ptr().read() }, 0);
        assert_eq!(m.arenas(), 1);
    }
}
