//! The device heap behind kernels' `malloc` and `free` (the driver's device-library
//! functions, declared `.extern .func` without a body in PTX): the bookkeeping of one
//! range of device memory the driver allocated for a context (`CU_LIMIT_MALLOC_HEAP_SIZE`
//! bytes). The memory itself is the driver's, reached like any device memory through
//! [`crate::Memory::translate`], so kernels' accesses to it are checked as every other;
//! this type only says which of its bytes are handed out.
//!
//! First fit over the free ranges, coalesced on free; every block 16-byte aligned, as
//! CUDA's `malloc` guarantees. One lock for all: blocks running on several host threads
//! allocate from the same heap, as a GPU's blocks do.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

/// CUDA's `malloc` returns memory aligned for any type: 16 bytes.
const ALIGN: u64 = 16;

#[derive(Debug)]
pub struct DeviceHeap {
    base: u64,
    size: u64,
    inner: Mutex<Blocks>,
}

#[derive(Debug, Default)]
struct Blocks {
    /// Free ranges by offset: their lengths. Adjacent ranges are always merged.
    free: BTreeMap<u64, u64>,
    /// Blocks handed out by offset: their lengths.
    live: HashMap<u64, u64>,
}

impl DeviceHeap {
    /// A heap over device addresses `base..base + size`, all free.
    pub fn new(base: u64, size: u64) -> DeviceHeap {
        let mut free = BTreeMap::new();
        // Whole blocks only: a tail shorter than the alignment is never handed out.
        let usable = size / ALIGN * ALIGN;
        if usable > 0 {
            free.insert(0, usable);
        }
        DeviceHeap {
            base,
            size,
            inner: Mutex::new(Blocks {
                free,
                live: HashMap::new(),
            }),
        }
    }

    /// Device address of the heap's first byte.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// The heap's bytes (`CU_LIMIT_MALLOC_HEAP_SIZE` when it was made).
    pub fn size(&self) -> u64 {
        self.size
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Blocks> {
        // The bookkeeping is consistent after every operation: a panic elsewhere leaves
        // nothing half-done here.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `malloc(bytes)`: the device address of a fresh block, or 0 (NULL) when no free
    /// range is large enough. `malloc(0)` gives a block of its own too (C allows NULL
    /// or a unique pointer; a unique pointer is what a program that checks for NULL
    /// expects of a heap with room).
    pub fn malloc(&self, bytes: u64) -> u64 {
        self.malloc_aligned(bytes, ALIGN)
    }

    /// `__nv_aligned_device_malloc(bytes, align)`: a block whose device address is a
    /// multiple of `align`, or 0 (NULL) when `align` is not a power of two or no free
    /// range holds such a block.
    pub fn malloc_aligned(&self, bytes: u64, align: u64) -> u64 {
        if !align.is_power_of_two() {
            return 0;
        }
        let align = align.max(ALIGN);
        let Some(want) = bytes.max(1).checked_next_multiple_of(ALIGN) else {
            return 0;
        };
        let mut b = self.lock();
        // The first free range holding `want` bytes from an aligned address in it.
        let fit = b.free.iter().find_map(|(&at, &len)| {
            let start = (self.base + at).checked_next_multiple_of(align)? - self.base;
            let end = start.checked_add(want)?;
            (end <= at + len).then_some((at, len, start))
        });
        let Some((at, len, start)) = fit else {
            return 0;
        };
        b.free.remove(&at);
        if start > at {
            b.free.insert(at, start - at);
        }
        if at + len > start + want {
            b.free.insert(start + want, at + len - start - want);
        }
        b.live.insert(start, want);
        self.base + start
    }

    /// `free(addr)`: 0 does nothing (as C's free); the start of a live block returns it
    /// to the heap; anything else is the caller's error, explained.
    pub fn free(&self, addr: u64) -> Result<(), String> {
        if addr == 0 {
            return Ok(());
        }
        let mut b = self.lock();
        let off = addr.wrapping_sub(self.base);
        let Some(len) = (addr >= self.base).then(|| b.live.remove(&off)).flatten() else {
            let what = if addr >= self.base && off < self.size {
                "inside the device heap, but not the start of a block malloc returned \
                 and not yet freed (a double free, or a pointer into a block)"
            } else {
                "not in the device heap (free takes only what device-side malloc returned)"
            };
            return Err(format!(
                "free({addr:#x}): {what}; the heap is {:#x}..{:#x}",
                self.base,
                self.base + self.size
            ));
        };
        // Merge with the free ranges on either side.
        let (mut start, mut end) = (off, off + len);
        if let Some((&p, &plen)) = b.free.range(..start).next_back() {
            if p + plen == start {
                b.free.remove(&p);
                start = p;
            }
        }
        if let Some(nlen) = b.free.remove(&end) {
            end += nlen;
        }
        b.free.insert(start, end - start);
        Ok(())
    }

    /// Bytes handed out and not freed.
    pub fn in_use(&self) -> u64 {
        self.lock().live.values().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned_distinct_and_exhaust_to_null() {
        let h = DeviceHeap::new(0x1000, 64);
        let a = h.malloc(1);
        let b = h.malloc(20);
        assert_eq!(a, 0x1000);
        assert_eq!(b, 0x1010);
        assert_eq!(
            h.malloc(32),
            0,
            "16 + 32 bytes are taken of 64: 32 more do not fit"
        );
        assert_eq!(h.malloc(16), 0x1030);
        assert_eq!(h.in_use(), 64);
    }

    #[test]
    fn aligned_blocks_start_at_their_alignment_and_leave_the_gap_free() {
        let h = DeviceHeap::new(0x1010, 4096);
        let a = h.malloc_aligned(8, 256);
        assert_eq!(a, 0x1100);
        assert_eq!(
            h.malloc(16),
            0x1010,
            "the gap before the aligned block is free"
        );
        assert_eq!(h.malloc_aligned(8, 3), 0, "not a power of two");
        h.free(a).unwrap();
    }

    #[test]
    fn free_coalesces_and_refuses_what_malloc_did_not_give() {
        let h = DeviceHeap::new(0x1000, 48);
        let (a, b, c) = (h.malloc(16), h.malloc(16), h.malloc(16));
        h.free(b).unwrap();
        h.free(a).unwrap();
        h.free(c).unwrap();
        assert_eq!(h.malloc(48), 0x1000, "the three ranges merged into one");
        assert!(h.free(0x1008).unwrap_err().contains("not the start"));
        assert!(h.free(0x10).unwrap_err().contains("not in the device heap"));
        h.free(0x1000).unwrap();
        assert!(h.free(0x1000).unwrap_err().contains("double free"));
        h.free(0).unwrap();
    }
}
