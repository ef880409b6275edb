//! Leak reports (`CUMOCK_LEAKS=1`): what the program never gave back at exit, each with
//! where it made it (`created` notes the call site while leak checking is on).

use super::call_sites::CallSite;
use crate::model::ids::AllocationId;
use cumock_support::ForkSafeMutex;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a call site is kept for, so that a leak report can say where the program made
/// what it never gave back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Made {
    /// cuMemAddressReserve or cuMemAlloc, by base address.
    Reservation,
    /// cuMemCreate or cuMemImportFromShareableHandle, by the handle the program holds.
    Allocation,
    /// cuMemMap, by start address.
    Mapping,
    /// cuMemPoolCreate, by pool handle.
    Pool,
    /// cuMemAllocAsync or cuMemAllocFromPoolAsync, by address.
    PoolAllocation,
}

/// Where the program made each live thing, while leak checking is on, with the order it
/// was noted in. Entries of things since freed are dropped in batches (`prune_origins`),
/// so the table stays about as large as what is live, without a hook on every freeing
/// call. This lock is never held together with the model's (fork safety, see
/// `before_fork`).
static ORIGINS: ForkSafeMutex<BTreeMap<(Made, u64), (u64, CallSite)>> =
    ForkSafeMutex::new(BTreeMap::new());
static ORIGINS_SEQ: AtomicU64 = AtomicU64::new(0);
static ORIGINS_PRUNE_AT: AtomicU64 = AtomicU64::new(4096);

/// cuMemAlloc memory the driver allocated for itself (each context's device heap, for
/// kernels' malloc): not the program's to free, so never reported as a leak.
static DRIVER_OWNED: Mutex<std::collections::BTreeSet<u64>> =
    Mutex::new(std::collections::BTreeSet::new());

/// Marks (or, when it is freed, unmarks) the allocation at `base` as the driver's own.
pub fn driver_owned(base: u64, owned: bool) {
    let mut set = DRIVER_OWNED.lock();
    if owned {
        set.insert(base);
    } else {
        set.remove(&base);
    }
}

/// Handles carry a tag in their high bits; the model keys allocations by the low ones.
fn origin_key(what: Made, key: u64) -> (Made, u64) {
    match what {
        Made::Allocation => (what, AllocationId::from_handle(key).serial()),
        _ => (what, key),
    }
}

/// Notes where the program made `key`, when leak checking is on; returns `key`, so a call
/// site reads `out(ptr, created(Made::Reservation, d.address_reserve(..)?))`.
#[inline]
pub fn created(what: Made, key: u64) -> u64 {
    if super::settings().leaks {
        note_origin(what, key);
    }
    key
}

/// Records where `key` was made (leak checking is on).
#[cold]
#[inline(never)]
fn note_origin(what: Made, key: u64) {
    let site = CallSite::capture();
    let seq = ORIGINS_SEQ.fetch_add(1, Ordering::Relaxed);
    let len = {
        let mut origins = ORIGINS.lock();
        origins.insert(origin_key(what, key), (seq, site));
        origins.len() as u64
    };
    if len >= ORIGINS_PRUNE_AT.load(Ordering::Relaxed) {
        prune_origins();
    }
}

/// Drops the origins of what is no longer live: the model's keys are copied first, then
/// the table is pruned, never holding both locks. What was noted after the copy stays.
fn prune_origins() {
    let Ok(d) = crate::model::driver() else {
        return;
    };
    let before = ORIGINS_SEQ.load(Ordering::Relaxed);
    let live: std::collections::HashSet<(Made, u64)> = d.with_state(|vmm, pools| {
        let reservations = vmm.reservations().map(|(k, _)| (Made::Reservation, k));
        let allocations = vmm
            .allocations()
            .map(|(k, _)| (Made::Allocation, k.serial()));
        let mappings = vmm.mappings().map(|m| (Made::Mapping, m.start));
        let pool_list = pools
            .created()
            .into_iter()
            .map(|k| (Made::Pool, k.handle()));
        let blocks = pools.blocks().map(|(k, _)| (Made::PoolAllocation, k));
        reservations
            .chain(allocations)
            .chain(mappings)
            .chain(pool_list)
            .chain(blocks)
            .collect()
    });
    let mut origins = ORIGINS.lock();
    origins.retain(|key, (seq, _)| *seq >= before || live.contains(key));
    ORIGINS_PRUNE_AT.store((origins.len() as u64 * 2).max(4096), Ordering::Relaxed);
}

/// fork() while another thread holds the origins' lock would leave the child with a lock
/// no thread releases: it is taken across the fork, as the model's is.
pub(super) extern "C" fn before_fork() {
    ORIGINS.hold_for_fork();
}

pub(super) extern "C" fn after_fork_parent() {
    // Safety: before_fork took the lock in this thread.
    unsafe { ORIGINS.release_in_parent() };
}

pub(super) extern "C" fn after_fork_child() {
    // Safety: this thread is the only one in the child, and it holds the lock (taken in
    // before_fork).
    unsafe { ORIGINS.reset_in_child() };
}

/// One thing that leaked, and where the program made it when that was recorded.
pub struct Leak {
    pub what: String,
    pub site: Option<CallSite>,
}

/// What leaked, one line each; empty when nothing did.
pub fn leak_report() -> Vec<String> {
    leaks().into_iter().map(|l| l.what).collect()
}

/// What leaked, with where each was made.
pub fn leaks() -> Vec<Leak> {
    let mut out: Vec<(String, Option<(Made, u64)>)> = Vec::new();
    // Read before the model's lock is taken (the set's lock is taken under no other).
    let driver_owned = DRIVER_OWNED.lock().clone();
    if let Ok(d) = crate::model::driver() {
        d.with_state(|vmm, pools| {
        for (base, r) in vmm.reservations() {
            let what = match r.kind {
                crate::model::vmm::ReservationKind::Vmm => format!(
                    "reservation {base:#x}+{:#x} never freed (cuMemAddressFree)",
                    r.size
                ),
                crate::model::vmm::ReservationKind::Alloc { .. } if driver_owned.contains(&base) => {
                    continue
                }
                crate::model::vmm::ReservationKind::Alloc { requested, .. } => format!(
                    "cuMemAlloc memory {base:#x} ({requested} bytes) never freed (cuMemFree)"
                ),
                // A pool's own address space: what leaks is its allocations (below).
                crate::model::vmm::ReservationKind::Pool { .. }
                | crate::model::vmm::ReservationKind::Graph => continue,
            };
            out.push((what, Some((Made::Reservation, base))));
        }
        for m in vmm.mappings() {
            let is_alloc = vmm
                .reservation(m.reservation)
                .is_some_and(|r| r.kind != crate::model::vmm::ReservationKind::Vmm);
            if !is_alloc {
                out.push((
                    format!(
                        "mapping {:#x}+{:#x} never unmapped (cuMemUnmap)",
                        m.start, m.size
                    ),
                    Some((Made::Mapping, m.start)),
                ));
            }
        }
        for (ptr, b) in pools.blocks() {
            out.push((
                format!(
                    "stream-ordered memory {ptr:#x} ({} bytes, pool {:#x}) never freed (cuMemFreeAsync)",
                    b.requested, b.pool
                ),
                Some((Made::PoolAllocation, ptr)),
            ));
        }
        for pool in pools.created() {
            out.push((
                format!("memory pool {pool:#x} never destroyed (cuMemPoolDestroy)"),
                Some((Made::Pool, pool.handle())),
            ));
        }
        let mut handles: Vec<_> = vmm
            .allocations()
            .filter(|(_, a)| a.user_refs > 0)
            .collect();
        handles.sort_by_key(|(id, _)| id.serial());
        for (id, a) in handles {
            out.push((format!(
                "allocation handle #{} ({:#x} bytes) never released: {} reference(s) left (cuMemRelease)",
                id.serial(), a.size, a.user_refs
            ), Some((Made::Allocation, id.serial()))));
        }
        });
    }
    // The model's lock is released before the origins' is taken: `created` takes them
    // in the other order.
    let origins = ORIGINS.lock();
    let mut leaks: Vec<Leak> = out
        .into_iter()
        .map(|(what, key)| Leak {
            what,
            site: key.and_then(|k| origins.get(&k).map(|(_, site)| site.clone())),
        })
        .collect();
    drop(origins);
    leaks.extend(super::exported_fds::still_open());
    leaks
}
