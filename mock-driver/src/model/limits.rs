//! What the mock may take from the host, so that a program asking for more than the host
//! has ends in CUDA_ERROR_OUT_OF_MEMORY with a message instead of in the host's OOM
//! killer (issue 19).
//!
//! - **Page-locked memory** (cuMemAllocHost, cuMemHostAlloc, cuMemHostRegister): the real
//!   driver pins pages through its kernel module, which `RLIMIT_MEMLOCK` does not bound
//!   (pinned allocations of gigabytes work under the common 64 KiB `ulimit -l`); what
//!   bounds them is the physical memory the kernel can pin. So the mock bounds the live
//!   total by the host's physical memory less a reserve ([`page_locked_limit`]); what it
//!   allocates itself (cuMemAllocHost, cuMemHostAlloc, host pools' chunks; not the
//!   program's own memory it registers) counts in [`Backing`] too, with device memory.
//! - **Device memory** is sparse (pages come when touched), so the profile's 141 GB device
//!   costs nothing until a copy, memset or kernel touches it. The mock counts an
//!   allocation as committed, at its whole size, when its bytes are first handed out
//!   (`Vmm::segments`), and refuses the touch past [`Backing`]'s limit:
//!   `CUMOCK_DEVICE_MEMORY`, by default the host's available memory less the reserve.
//!   Counting at the first touch, not at cuMemCreate, keeps cuMemGetInfo and large
//!   reservations as on the GPU; counting the whole allocation (not pages) needs no
//!   system call and no fault handler, and over-counts only allocations touched in part.
//! - **Managed memory** is host memory the program touches directly, where the mock
//!   cannot count pages: it counts whole when allocated, in [`Backing`] with the device
//!   memory (one budget: both are the host's memory; counted apart, a program could take
//!   the host's memory twice over).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// What the mock leaves to the rest of the host: an eighth of physical memory, at least
/// 512 MiB (the kernel, the program itself, the CI runner).
pub fn reserve(physical: u64) -> u64 {
    (physical / 8).max(512 << 20)
}

/// The most page-locked memory (cuMemAllocHost, cuMemHostAlloc, cuMemHostRegister) the
/// process may hold at once: physical memory less the reserve.
pub fn page_locked_limit() -> u64 {
    static LIMIT: OnceLock<u64> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        let physical = crate::os::physical_memory();
        physical.saturating_sub(reserve(physical))
    })
}

/// Memory the host can give now: `MemAvailable`, and the cgroup's room if it has a limit
/// (a CI container's memory.max), whichever is less.
fn available_memory() -> u64 {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find_map(|l| l.strip_prefix("MemAvailable:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kib| kib.saturating_mul(1024))
    });
    let cgroup = || -> Option<u64> {
        let read = |f: &str| std::fs::read_to_string(format!("/sys/fs/cgroup/{f}")).ok();
        let max = read("memory.max")?.trim().parse::<u64>().ok()?;
        let current = read("memory.current")?.trim().parse::<u64>().ok()?;
        Some(max.saturating_sub(current))
    };
    let host = meminfo.unwrap_or_else(crate::os::physical_memory);
    cgroup().map_or(host, |room| room.min(host))
}

/// Device memory the mock backs with the host's: the bytes of allocations touched so far
/// (see the module's note), against a limit.
#[derive(Debug)]
pub struct Backing {
    limit: u64,
    /// How the limit was set, for the message.
    origin: String,
    committed: AtomicU64,
}

impl Default for Backing {
    fn default() -> Self {
        Self::with_limit(u64::MAX, "no limit".into())
    }
}

impl Backing {
    pub fn with_limit(limit: u64, origin: String) -> Self {
        Self {
            limit,
            origin,
            committed: AtomicU64::new(0),
        }
    }

    /// `CUMOCK_DEVICE_MEMORY`'s limit and how it was set, or (None) the host's available
    /// memory less the reserve.
    pub fn from_setting(setting: Option<(u64, String)>) -> Self {
        if let Some((limit, origin)) = setting {
            return Self::with_limit(limit, origin);
        }
        let available = available_memory();
        let limit = available.saturating_sub(reserve(crate::os::physical_memory()));
        Self::with_limit(
            limit,
            format!(
                "the default: the host's available memory, {} MiB, less a reserve; \
                 CUMOCK_DEVICE_MEMORY=SIZE sets it",
                available >> 20
            ),
        )
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    pub fn committed(&self) -> u64 {
        self.committed.load(Ordering::Relaxed)
    }

    /// Counts `bytes` more as backed, or says why not (nothing is counted then).
    pub fn commit(&self, bytes: u64) -> Result<(), String> {
        self.committed
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
                c.checked_add(bytes).filter(|&n| n <= self.limit)
            })
            .map(|_| ())
            .map_err(|c| {
                format!(
                    "the mock backs device memory with the host's: {bytes} bytes more would \
                     make {} bytes touched, past the {} bytes it may back ({}); touched \
                     allocations count whole until freed",
                    c.saturating_add(bytes),
                    self.limit,
                    self.origin
                )
            })
    }

    pub fn uncommit(&self, bytes: u64) {
        let _ = self
            .committed
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
                Some(c.saturating_sub(bytes))
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commits_stop_at_the_limit_and_say_so() {
        let b = Backing::with_limit(10 << 20, "CUMOCK_DEVICE_MEMORY=10M".into());
        b.commit(4 << 20).unwrap();
        b.commit(6 << 20).unwrap();
        let e = b.commit(1).unwrap_err();
        assert!(e.contains("CUMOCK_DEVICE_MEMORY=10M"), "{e}");
        assert_eq!(b.committed(), 10 << 20, "a refused commit counts nothing");
        b.uncommit(6 << 20);
        b.commit(2 << 20).unwrap();
        assert_eq!(b.committed(), 6 << 20);
        assert!(b.commit(u64::MAX).is_err(), "no wrap-around");
    }

    #[test]
    fn the_default_device_memory_leaves_the_reserve_of_what_is_available() {
        let b = Backing::from_setting(None);
        let physical = crate::os::physical_memory();
        assert!(b.limit() <= physical - reserve(physical));
        assert!(
            b.origin.contains("CUMOCK_DEVICE_MEMORY=SIZE"),
            "{}",
            b.origin
        );
    }

    #[test]
    fn the_page_locked_limit_leaves_a_reserve() {
        let physical = crate::os::physical_memory();
        assert!(page_locked_limit() < physical);
        assert!(page_locked_limit() >= physical - physical / 8 - (512 << 20));
    }
}
