//! The stream-ordered allocator: memory pools (cuda.h's "Stream Ordered Memory
//! Allocator"), as the H200 was seen to run them (probe pools_ipc, clients/runtime pool).
//!
//! A pool takes address space from the VMM model in regions it reserves for itself
//! (reservations of kind [`ReservationKind::Pool`]), and physical memory in chunks of
//! [`CHUNK`] bytes, each an ordinary allocation of the model mapped into a region, with
//! the pool's access rights: copies, memsets, kernels, pointer attributes and access
//! checks treat pool memory as any mapping. A region grows chunk by chunk at its end, so
//! an allocation may span two chunks: 1 B, 1 MiB and 40 MiB take 64 MiB on the H200, the
//! 40 MiB starting in the first chunk's free tail and running into a second one.
//!
//! Allocations are carved from the chunks' free ranges, first fit by address, their sizes
//! rounded up to [`ALIGNMENT`] (two 100-byte allocations in a row are 512 bytes apart, two
//! of 1 MiB 1 MiB apart), and counted as used at the size asked for. A chunk wholly free
//! goes back at the next synchronisation (stream, event, context) while the pool holds
//! more than its release threshold, or at cuMemPoolTrimTo; never below the threshold or
//! the bytes to keep.
//!
//! The mock runs work in order as it is issued, so a free returns its range to the pool
//! at once: no work can still be using it, and the stream-ordering attributes (reuse
//! across streams) change nothing the program can see. A destroyed pool lives on, out of
//! the program's reach, until its last allocation is freed (cuda.h; the H200 reads such
//! memory after the destroy).

use super::error::*;
use super::graph_memory::AllocNode;
use super::graphs::NodeOp;
use super::host_memory::HostMemory;
use super::ids::{DevicePtr, PoolId, StreamId};
use super::profile::Profile;
use super::vmm::{AccessTable, AllocationProp, ReservationKind, Vmm};
use super::{Driver, State};
use cumock_abi::consts::*;
use cumock_abi::result::*;
use cumock_abi::{CUmemLocation, CUmemPoolProps};
use std::collections::{BTreeMap, HashMap};
use std::os::fd::{FromRawFd, OwnedFd};

/// Pools take physical memory in chunks this large, or in one chunk of a multiple of it
/// for an allocation that needs more (H200: 32 MiB for a pool's first allocations, of 1
/// byte to 5000; 64 MiB for 1 B + 1 MiB + 40 MiB).
pub const CHUNK: u64 = 32 << 20;

/// Allocations start on this boundary and take a multiple of it (H200: 100-byte
/// allocations 512 bytes apart).
pub const ALIGNMENT: u64 = 512;

/// The address space a pool reserves at a time, in which its chunks are mapped side by
/// side; an allocation larger than this gets a region of its own size.
const REGION: u64 = 32 << 30;

/// Pool handles are tagged numbers, never pointers: a wrong value is found in no table.
const POOL_TAG: u64 = 0x0090_0000_0000_0000;

/// Buffer ids of pool allocations (CU_POINTER_ATTRIBUTE_BUFFER_ID): apart from those of
/// the model's own allocations, which count from 1.
const BLOCK_ID_BASE: u64 = 1 << 40;

/// `CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS`.
const USAGE_HW_DECOMPRESS: u16 = 0x2;

/// A pool attribute's value: the reuse attributes are ints, the others cuuint64_t.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolAttribute {
    Int(i32),
    Bytes(u64),
}

/// Whether `attr` is an int attribute (Some(true)), a cuuint64_t one (Some(false)), or
/// not a `CUmemPool_attribute` at all.
pub fn attribute_is_int(attr: i32) -> Option<bool> {
    match attr {
        CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES
            ..=CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES => Some(true),
        CU_MEMPOOL_ATTR_RELEASE_THRESHOLD..=CU_MEMPOOL_ATTR_USED_MEM_HIGH => Some(false),
        _ => None,
    }
}

fn destroyed(pool: PoolId) -> CuError {
    CuError::would_crash(format!(
        "pool {pool:#x} was destroyed (cuMemPoolDestroy; the real driver may crash here)"
    ))
}

fn unknown_attribute(attr: i32) -> CuError {
    invalid(format!("{attr} is not a CUmemPool_attribute"))
}

/// Where a pool's memory is, and of what kind (cuda.h 13: a pool has a location and an
/// allocation type; each such place has a default pool and a current one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Place {
    /// Pinned memory of a device (CU_MEM_LOCATION_TYPE_DEVICE).
    Device(usize),
    /// Page-locked host memory: CU_MEM_LOCATION_TYPE_HOST (None) or HOST_NUMA (its node).
    Host(Option<i32>),
    /// Managed memory, by its preferred location as (CUmemLocationType, id): NONE, a
    /// device, HOST or a HOST_NUMA node.
    Managed(i32, i32),
}

impl Place {
    /// The place a location and an allocation type name (cuMemGetDefaultMemPool,
    /// cuMemGetMemPool, cuMemSetMemPool, cuMemPoolCreate); `devices`: how many there are.
    /// cuda.h 13: DEVICE, HOST and HOST_NUMA for either type, and NONE for managed
    /// memory; anything else is CUDA_ERROR_INVALID_VALUE.
    pub fn of(alloc_type: i32, location_type: i32, id: i32, devices: usize) -> CuResult<Self> {
        // Observed (probe pools_ipc, location-pools): a device that does not exist is
        // CUDA_ERROR_INVALID_VALUE in these calls, HOST_NUMA_CURRENT NOT_SUPPORTED.
        let device = || {
            if (0..devices as i64).contains(&i64::from(id)) {
                Ok(id)
            } else {
                Err(invalid(format!("device {id} does not exist")))
            }
        };
        // The mock's host is one NUMA node, 0 (as cuMemCreate's host memory reports).
        let node = || {
            if id == 0 {
                Ok(id)
            } else {
                Err(invalid(format!(
                    "host NUMA node {id}: the mock's host has one node, 0"
                )))
            }
        };
        match (alloc_type, location_type) {
            (CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_DEVICE) => {
                Ok(Place::Device(device()? as usize))
            }
            (CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_HOST) => Ok(Place::Host(None)),
            (CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_HOST_NUMA) => {
                Ok(Place::Host(Some(node()?)))
            }
            (CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_NONE) => {
                Ok(Place::Managed(CU_MEM_LOCATION_TYPE_NONE, 0))
            }
            (CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_DEVICE) => {
                Ok(Place::Managed(location_type, device()?))
            }
            (CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_HOST) => {
                Ok(Place::Managed(location_type, 0))
            }
            (CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_HOST_NUMA) => {
                Ok(Place::Managed(location_type, node()?))
            }
            (
                CU_MEM_ALLOCATION_TYPE_PINNED | CU_MEM_ALLOCATION_TYPE_MANAGED,
                CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT,
            ) => Err(not_supported(
                "CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT names no pool: name the node \
                 (HOST_NUMA) or the host (HOST)",
            )),
            (t, l) => Err(invalid(format!(
                "allocation type {t} at location type {l} has no memory pool"
            ))),
        }
    }

    /// The device whose memory the pool holds; None for the host's and managed memory.
    pub fn device(self) -> Option<usize> {
        match self {
            Place::Device(d) => Some(d),
            _ => None,
        }
    }
}

/// One memory pool.
#[derive(Debug)]
pub struct Pool {
    /// The device whose granularity its chunks take, and whose memory they are for a
    /// device pool (0 for the host's and managed pools).
    pub device: usize,
    pub place: Place,
    pub handle_types: i32,
    /// CUmemPoolProps::maxSize; 0: no limit but the device's memory.
    max_size: u64,
    usage: u16,
    is_default: bool,
    /// Destroyed with allocations outstanding: unreachable by its handle, gone with its
    /// last allocation.
    destroyed: bool,
    /// The three reuse attributes, as 0 or 1.
    reuse: [i32; 3],
    release_threshold: u64,
    reserved: u64,
    reserved_high: u64,
    used: u64,
    used_high: u64,
    /// Which devices may access its memory; every chunk's mapping has these rights.
    pub(super) access: AccessTable,
    /// Its regions of address space: base -> size.
    regions: BTreeMap<u64, u64>,
    /// Its chunks, mapped in the regions: address -> size.
    pub(super) chunks: BTreeMap<u64, u64>,
    /// The free ranges of the chunks, coalesced (across adjacent chunks too): address ->
    /// length.
    free: BTreeMap<u64, u64>,
    /// How many allocations of it are live.
    live: usize,
    /// Blocks given back by cuMemFreeAsync whose free has not completed (its stream has
    /// not reached it): cuda.h counts them as outstanding ("allocations that have been
    /// asynchronously freed but whose completion has not been observed on the host ...
    /// can count as outstanding"), so no trim or release takes their chunks while the
    /// work before the free may still use them.
    freeing: Vec<(u64, u64, Vec<super::stream_queues::Mark>)>,
    /// The file cuMemPoolExportToShareableHandle hands out (duplicated each time).
    pub(super) export: Option<OwnedFd>,
    /// The secret another process proves it imported the pool with, to be given its
    /// chunks' files (pool_ipc.rs); made at the pool's or a pointer's first export.
    pub(super) secret: Option<cumock_fd_passing::Secret>,
    /// For a pool imported from another process: which, and its secret.
    pub(super) origin: Option<super::pool_ipc::Origin>,
}

impl Pool {
    /// `devices`: how many there are, each of which reaches a managed pool's memory.
    pub(super) fn new(
        place: Place,
        devices: usize,
        handle_types: i32,
        max_size: u64,
        usage: u16,
        is_default: bool,
    ) -> Self {
        let mut access = AccessTable::none(0);
        match place {
            Place::Device(d) => access.set(d, CU_MEM_ACCESS_FLAGS_PROT_READWRITE as u8),
            // cuda.h: a host pool is reachable from the host CPU by default. Whether
            // devices reach it before cuMemPoolSetAccess is not in cuda.h; cuda-core's
            // PinnedMemoryResource calls its buffers device-accessible without granting
            // anything, so the mock lets every device reach them, as page-locked memory
            // from cuMemHostAlloc is. The H200 (probe pools_ipc, sections host-pool and
            // managed-pool, recorded) lets its copies reach such memory but reports no
            // access (cuMemPoolGetAccess 0): declared in the probes' divergences.txt.
            // Managed memory: every device reaches it, as cuMemAllocManaged's.
            Place::Host(_) | Place::Managed(..) => {
                for d in 0..devices {
                    access.set(d, CU_MEM_ACCESS_FLAGS_PROT_READWRITE as u8);
                }
            }
        }
        Self {
            device: place.device().unwrap_or(0),
            place,
            handle_types,
            max_size,
            usage,
            is_default,
            destroyed: false,
            reuse: [1; 3],
            release_threshold: 0,
            reserved: 0,
            reserved_high: 0,
            used: 0,
            used_high: 0,
            access,
            regions: BTreeMap::new(),
            chunks: BTreeMap::new(),
            free: BTreeMap::new(),
            live: 0,
            export: None,
            freeing: Vec::new(),
            secret: None,
            origin: None,
        }
    }
}

/// A live allocation of a pool.
#[derive(Clone, Copy, Debug)]
pub struct Block {
    pub pool: PoolId,
    /// What it takes of the pool: the size asked for, rounded up to [`ALIGNMENT`].
    pub len: u64,
    /// The size asked for: what the pool counts as used, and the range
    /// cuMemGetAddressRange and the pointer attributes give.
    pub requested: u64,
    /// Its buffer id (CU_POINTER_ATTRIBUTE_BUFFER_ID).
    pub id: u64,
}

/// Every pool of the process, and their live allocations.
#[derive(Debug, Default)]
pub struct Pools {
    pools: HashMap<PoolId, Pool>,
    /// Live allocations, by address.
    blocks: BTreeMap<u64, Block>,
    /// Each place's default pool, made on first use.
    default: HashMap<Place, PoolId>,
    /// Each place's current pool (cuDeviceSetMemPool, cuMemSetMemPool); none: its
    /// default.
    current: HashMap<Place, PoolId>,
    /// Another process's pool allocations mapped here (cuMemPoolImportPointer), by the
    /// address handed out.
    pub(super) imported: BTreeMap<u64, super::pool_ipc::ImportedPtr>,
    devices: usize,
    next_pool: u64,
    next_block: u64,
}

impl Pools {
    pub fn new(devices: usize) -> Self {
        Self {
            devices,
            next_pool: 1,
            ..Default::default()
        }
    }

    pub(super) fn insert(&mut self, pool: Pool) -> PoolId {
        let h = PoolId::from_handle(POOL_TAG | self.next_pool);
        self.next_pool += 1;
        self.pools.insert(h, pool);
        h
    }

    fn default_pool(&mut self, place: Place) -> PoolId {
        if let Some(h) = self.default.get(&place) {
            return *h;
        }
        // Observed: the default pool is not IPC capable (no handle types).
        let h = self.insert(Pool::new(place, self.devices, 0, 0, 0, true));
        self.default.insert(place, h);
        h
    }

    fn current_pool(&mut self, place: Place) -> PoolId {
        match self.current.get(&place) {
            Some(h) => *h,
            None => self.default_pool(place),
        }
    }

    /// Whether `pool` holds managed memory (the pointer attributes say so).
    pub fn is_managed(&self, pool: PoolId) -> bool {
        self.pools
            .get(&pool)
            .is_some_and(|p| matches!(p.place, Place::Managed(..)))
    }

    /// A pool the program may still use: NULL is an ordinary error (observed); anything
    /// else that is no live pool, the real driver dereferences.
    pub(super) fn live(&self, pool: PoolId) -> CuResult<&Pool> {
        if pool.is_null() {
            return Err(invalid("the pool is NULL"));
        }
        match self.pools.get(&pool) {
            Some(p) if !p.destroyed => Ok(p),
            // Handles count up: a tagged one below the next was a pool once.
            Some(_) => Err(destroyed(pool)),
            None if pool.handle() & !0xffff_ffff == POOL_TAG && pool.serial() < self.next_pool => {
                Err(destroyed(pool))
            }
            None => Err(CuError::would_crash(format!(
                "{pool:#x} was never a memory pool (the real driver crashes here)"
            ))),
        }
    }

    pub(super) fn live_mut(&mut self, pool: PoolId) -> CuResult<&mut Pool> {
        self.live(pool)?;
        Ok(self.pools.get_mut(&pool).expect("checked"))
    }

    /// The live allocation holding `addr` (within what it takes of the pool), with its
    /// address.
    pub fn block_containing(&self, addr: u64) -> Option<(u64, &Block)> {
        self.blocks
            .range(..=addr)
            .next_back()
            .filter(|(start, b)| addr - **start < b.len)
            .map(|(start, b)| (*start, b))
    }

    /// Live allocations, by address (for the leak report).
    pub fn blocks(&self) -> impl Iterator<Item = (u64, &Block)> {
        self.blocks.iter().map(|(a, b)| (*a, b))
    }

    /// Pools the program created and has not destroyed (for the leak report).
    pub fn created(&self) -> Vec<PoolId> {
        let mut v: Vec<PoolId> = self
            .pools
            .iter()
            .filter(|(_, p)| !p.is_default && !p.destroyed)
            .map(|(h, _)| *h)
            .collect();
        v.sort_unstable();
        v
    }

    /// Carves `len` bytes for an allocation of `requested` from `pool`, growing it when no
    /// free range holds them.
    fn allocate(
        &mut self,
        vmm: &mut Vmm,
        host: &mut HostMemory,
        profile: &Profile,
        pool: PoolId,
        requested: u64,
    ) -> CuResult<u64> {
        let len = requested
            .max(1)
            .checked_next_multiple_of(ALIGNMENT)
            .ok_or_else(|| out_of_memory(format!("{requested} bytes overflow")))?;
        let p = self.pools.get_mut(&pool).expect("the caller checked it");
        let start = match first_fit(&p.free, len) {
            Some(at) => at,
            None => grow(p, pool, vmm, host, profile, len)?,
        };
        carve_at(&mut p.free, start, len);
        p.used += requested;
        p.used_high = p.used_high.max(p.used);
        p.live += 1;
        let id = BLOCK_ID_BASE + self.next_block;
        self.next_block += 1;
        self.blocks.insert(
            start,
            Block {
                pool,
                len,
                requested,
                id,
            },
        );
        Ok(start)
    }

    /// Frees the live allocation at `ptr`; false if there is none there.
    fn free(
        &mut self,
        vmm: &mut Vmm,
        host: &mut HostMemory,
        ptr: u64,
        pending: Vec<super::stream_queues::Mark>,
    ) -> bool {
        let Some(b) = self.blocks.remove(&ptr) else {
            return false;
        };
        let p = self
            .pools
            .get_mut(&b.pool)
            .expect("a live allocation keeps its pool");
        give_back(&mut p.free, ptr, b.len);
        if !pending.is_empty() {
            // Frees that completed meanwhile go first, so that the list stays as short as
            // the work in flight.
            p.freeing
                .retain(|(_, _, marks)| marks.iter().any(|m| !m.reached()));
            p.freeing.push((ptr, b.len, pending));
        }
        p.used -= b.requested;
        p.live -= 1;
        if p.destroyed {
            release_chunks(p, vmm, host, 0, true);
            if p.live == 0 {
                let p = self.pools.remove(&b.pool).expect("found above");
                drop_pool(p, vmm, host);
            }
        }
        true
    }

    /// At a synchronisation: each pool above its release threshold gives its wholly free
    /// chunks back, down to the threshold.
    fn release_over_threshold(&mut self, vmm: &mut Vmm, host: &mut HostMemory) {
        for p in self.pools.values_mut() {
            if p.reserved > p.release_threshold {
                let keep = p.release_threshold;
                release_chunks(p, vmm, host, keep, false);
            }
        }
    }
}

/// The first free range, by address, that holds `len` bytes.
fn first_fit(free: &BTreeMap<u64, u64>, len: u64) -> Option<u64> {
    free.iter().find(|(_, l)| **l >= len).map(|(a, _)| *a)
}

/// Takes `[start, start+len)`, which lies in one free range, out of the free ranges.
fn carve_at(free: &mut BTreeMap<u64, u64>, start: u64, len: u64) {
    let (&f, &fl) = free.range(..=start).next_back().expect("the range is free");
    debug_assert!(start + len <= f + fl, "the range is free");
    free.remove(&f);
    if start > f {
        free.insert(f, start - f);
    }
    if f + fl > start + len {
        free.insert(start + len, f + fl - (start + len));
    }
}

/// Gives `[at, at+len)` back, joined with the free ranges beside it.
fn give_back(free: &mut BTreeMap<u64, u64>, at: u64, len: u64) {
    let (mut start, mut end) = (at, at + len);
    if let Some((&prev, &plen)) = free.range(..at).next_back() {
        if prev + plen == at {
            free.remove(&prev);
            start = prev;
        }
    }
    if let Some(nlen) = free.remove(&end) {
        end += nlen;
    }
    free.insert(start, end - start);
}

/// Maps new memory into `p` so that `len` free bytes lie side by side, and returns where
/// they start: at the end of a run of chunks whose free tail then needs the fewest new
/// bytes, or in a new region.
fn grow(
    p: &mut Pool,
    handle: PoolId,
    vmm: &mut Vmm,
    host: &mut HostMemory,
    profile: &Profile,
    len: u64,
) -> CuResult<u64> {
    let dev = &profile.devices[p.device];
    let g = dev.granularity_minimum;
    let round = |n: u64| {
        n.checked_next_multiple_of(CHUNK)
            .and_then(|n| n.checked_next_multiple_of(g))
    };
    let too_big = || out_of_memory(format!("{len:#x} bytes do not fit the device"));
    // (bytes to map, where, where the allocation starts)
    let mut best: Option<(u64, u64, u64)> = None;
    for (&rb, &rs) in &p.regions {
        let end = rb + rs;
        let mut at = rb;
        let mut gaps = Vec::new();
        for (&c, &cs) in p.chunks.range(rb..end) {
            if c > at {
                gaps.push((at, c));
            }
            at = c + cs;
        }
        if at < end {
            gaps.push((at, end));
        }
        for (gs, ge) in gaps {
            let tail = p
                .free
                .range(..gs)
                .next_back()
                .filter(|(f, fl)| **f + **fl == gs)
                .map(|(_, fl)| *fl)
                .unwrap_or(0);
            let Some(more) = round(len - tail) else {
                continue;
            };
            if more <= ge - gs && best.is_none_or(|b| more < b.0) {
                best = Some((more, gs, gs - tail));
            }
        }
    }
    let more = match best {
        Some((more, ..)) => more,
        None => round(len).ok_or_else(too_big)?,
    };
    if p.max_size != 0 && p.reserved + more > p.max_size {
        return Err(out_of_memory(format!(
            "the pool would hold {:#x} bytes, more than its maxSize {:#x}",
            p.reserved + more,
            p.max_size
        )));
    }
    // A device pool's chunks take the device's memory; the host's and managed pools'
    // are host memory, bounded as cuMemHostAlloc's and cuMemAllocManaged's are.
    let free = match p.place {
        Place::Device(d) => {
            let free = dev.free_at_start.saturating_sub(vmm.used(d));
            if more > free {
                return Err(out_of_memory(format!(
                    "the pool needs {more:#x} more bytes, {free:#x} free on device {d}"
                )));
            }
            free
        }
        Place::Host(_) => {
            host.pin_pool_chunk(more)?;
            // New host memory, in one budget with the device memory the mock backs.
            if let Err(why) = vmm.backing.commit(more) {
                host.unpin_pool_chunk(more);
                return Err(host_limit(format!(
                    "a host memory pool's chunk of {more} bytes: {why}"
                )));
            }
            u64::MAX
        }
        Place::Managed(..) => {
            host.count_managed(
                more,
                &vmm.backing,
                &format!("a managed pool's chunk of {more} bytes"),
            )?;
            u64::MAX
        }
    };
    let (at, start, new_region) = match best {
        Some((_, at, start)) => (at, start, None),
        None => {
            let size = more
                .max(REGION)
                .checked_next_multiple_of(g)
                .ok_or_else(too_big)?;
            let base = vmm.address_reserve(size, 0, 0, 0, g)?;
            vmm.set_reservation_kind(base, ReservationKind::Pool { pool: handle });
            p.regions.insert(base, size);
            (base, base, Some(base))
        }
    };
    // Host memory reports itself as HOST_NUMA node 0, as cuMemCreate's does.
    let (location_type, location_id) = match p.place {
        Place::Device(d) => (CU_MEM_LOCATION_TYPE_DEVICE, d as i32),
        Place::Host(_) | Place::Managed(..) => (CU_MEM_LOCATION_TYPE_HOST_NUMA, 0),
    };
    let prop = AllocationProp {
        location_type,
        location_id,
        handle_types: p.handle_types,
        compression: CU_MEM_ALLOCATION_COMP_NONE,
        gpu_direct_rdma: 0,
        usage: p.usage,
    };
    if let Err(e) = map_chunk(vmm, handle, at, more, prop, g, free, p.access, p.place) {
        if let Some(base) = new_region {
            p.regions.remove(&base);
            vmm.remove_reservation(base);
        }
        uncount(p.place, host, vmm, more);
        return Err(e);
    }
    p.chunks.insert(at, more);
    p.reserved += more;
    p.reserved_high = p.reserved_high.max(p.reserved);
    give_back(&mut p.free, at, more);
    Ok(start)
}

/// Creates a chunk and maps it at `at`, in a region of the pool, with the pool's access.
#[allow(clippy::too_many_arguments)]
fn map_chunk(
    vmm: &mut Vmm,
    pool: PoolId,
    at: u64,
    size: u64,
    prop: AllocationProp,
    g: u64,
    free: u64,
    access: AccessTable,
    place: Place,
) -> CuResult<()> {
    let h = vmm.create(size, prop, 0, g, free)?;
    let (region, _) = vmm.reservation_at(at).expect("a region of the pool");
    // cuMemMap maps only into the program's own reservations: the region is one for the
    // length of the call.
    vmm.set_reservation_kind(region, ReservationKind::Vmm);
    let mapped = vmm.map(at, size, 0, h, 0, g);
    vmm.set_reservation_kind(region, ReservationKind::Pool { pool });
    let released = vmm.release(h);
    mapped?;
    released.expect("the mapping holds the allocation");
    vmm.set_mapping_access(at, access);
    if place.device().is_none() {
        // The host reaches host and managed pool memory at its address.
        if let Err(e) = vmm.set_host_access(at, size, CU_MEM_ACCESS_FLAGS_PROT_READWRITE as u8) {
            vmm.remove_mapping(at);
            return Err(e);
        }
    }
    Ok(())
}

/// Gives back what `grow` counted for a chunk of `size` bytes of host or managed memory.
fn uncount(place: Place, host: &mut HostMemory, vmm: &Vmm, size: u64) {
    match place {
        Place::Device(_) => {}
        Place::Host(_) => {
            host.unpin_pool_chunk(size);
            vmm.backing.uncommit(size);
        }
        Place::Managed(..) => host.uncount_managed(size, &vmm.backing),
    }
}

/// Gives wholly free chunks back, highest first, while that leaves the pool at least
/// `keep` bytes; chunks with work in flight (no synchronisation since a copy or memset
/// to them) stay unless `force`.
fn release_chunks(p: &mut Pool, vmm: &mut Vmm, host: &mut HostMemory, keep: u64, force: bool) {
    p.freeing
        .retain(|(_, _, marks)| marks.iter().any(|m| !m.reached()));
    let chunks: Vec<(u64, u64)> = p.chunks.iter().rev().map(|(c, s)| (*c, *s)).collect();
    for (c, size) in chunks {
        if p.reserved - size < keep {
            continue;
        }
        let freeing = p
            .freeing
            .iter()
            .any(|(a, len, _)| *a < c + size && c < a + len);
        if freeing && !force {
            continue;
        }
        let Some((&f, &fl)) = p.free.range(..=c).next_back() else {
            continue;
        };
        if f + fl < c + size {
            continue;
        }
        let busy = vmm
            .mapping_starting_at(c)
            .and_then(|m| vmm.mapped_allocation(m))
            .is_some_and(|a| a.in_flight);
        if busy && !force {
            continue;
        }
        vmm.remove_mapping(c);
        uncount(p.place, host, vmm, size);
        p.chunks.remove(&c);
        p.reserved -= size;
        p.free.remove(&f);
        if c > f {
            p.free.insert(f, c - f);
        }
        if f + fl > c + size {
            p.free.insert(c + size, f + fl - (c + size));
        }
    }
}

/// A pool gone for good: its chunks and regions go back to the model.
fn drop_pool(mut p: Pool, vmm: &mut Vmm, host: &mut HostMemory) {
    for (&c, &size) in &p.chunks {
        vmm.remove_mapping(c);
        uncount(p.place, host, vmm, size);
    }
    p.chunks.clear();
    for &base in p.regions.keys() {
        vmm.remove_reservation(base);
    }
}

/// A `memfd` standing for an exported pool: what cuMemPoolExportToShareableHandle gives,
/// holding `content` (pool_ipc.rs).
fn pool_file(pool: PoolId, content: &[u8]) -> std::io::Result<OwnedFd> {
    let name = std::ffi::CString::new(format!(
        "cumock-mempool {pool:#x} pid={}",
        std::process::id()
    ))
    .expect("no NUL in the name");
    // Safety: a NUL-terminated name and plain flags.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // Safety: a new fd that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    use std::os::unix::fs::FileExt;
    std::fs::File::from(fd.try_clone()?).write_all_at(content, 0)?;
    Ok(fd)
}

impl State {
    /// Frees the pool allocation at `ptr` (cuMemFreeAsync, and cuMemFree, which the H200
    /// lets free stream-ordered memory); false if no pool allocation starts there.
    /// `pending`: for cuMemFreeAsync, the work the free follows that has not run (the
    /// block's chunk stays until it has: `Pool::freeing`).
    pub fn free_pool_allocation(
        &mut self,
        ptr: u64,
        pending: Vec<super::stream_queues::Mark>,
    ) -> bool {
        self.pools.free(&mut self.vmm, &mut self.host, ptr, pending) || self.free_imported(ptr)
    }

    /// At a stream, event or context synchronisation: pools give memory back down to
    /// their release thresholds.
    pub fn release_pool_memory(&mut self) {
        self.pools
            .release_over_threshold(&mut self.vmm, &mut self.host);
    }
}

impl Driver {
    /// cuDeviceGetDefaultMemPool.
    pub fn default_mem_pool(&self, device: i32) -> CuResult<PoolId> {
        self.device(device)?;
        self.default_pool_at(Place::Device(device as usize))
    }

    /// cuDeviceGetMemPool: the device's current pool. Observed: a device that does not
    /// exist is CUDA_ERROR_INVALID_VALUE here (INVALID_DEVICE for the default pool).
    pub fn current_mem_pool(&self, device: i32) -> CuResult<PoolId> {
        self.device(device).map_err(|e| invalid(e.message))?;
        self.current_pool_at(Place::Device(device as usize))
    }

    /// cuDeviceSetMemPool.
    pub fn set_current_mem_pool(&self, device: i32, pool: PoolId) -> CuResult<()> {
        self.device(device).map_err(|e| invalid(e.message))?;
        self.set_current_pool_at(Place::Device(device as usize), pool)
    }

    /// The place a CUDA 13 location-based call names (see [`Place::of`]).
    pub fn pool_place(&self, alloc_type: i32, location_type: i32, id: i32) -> CuResult<Place> {
        Place::of(alloc_type, location_type, id, self.device_count())
    }

    /// cuMemGetDefaultMemPool (and cuDeviceGetDefaultMemPool): made on first use.
    pub fn default_pool_at(&self, place: Place) -> CuResult<PoolId> {
        Ok(self.state.lock().pools.default_pool(place))
    }

    /// cuMemGetMemPool: the place's current pool, its default until one is set.
    pub fn current_pool_at(&self, place: Place) -> CuResult<PoolId> {
        Ok(self.state.lock().pools.current_pool(place))
    }

    /// cuMemSetMemPool: cuda.h: the pool's location and allocation type must be the
    /// place's, else CUDA_ERROR_INVALID_VALUE.
    pub fn set_current_pool_at(&self, place: Place, pool: PoolId) -> CuResult<()> {
        let mut st = self.state.lock();
        let p = st.pools.live(pool)?;
        if p.origin.is_some() {
            // cuda.h: imported pools "may not be used in cuDeviceSetMemPool".
            return Err(invalid(format!(
                "pool {pool:#x} was imported from another process: it cannot be a current pool"
            )));
        }
        if p.place != place {
            return Err(invalid(format!(
                "pool {pool:#x} is a pool of {:?}, not of {place:?}",
                p.place
            )));
        }
        st.pools.default_pool(place);
        st.pools.current.insert(place, pool);
        Ok(())
    }

    /// cuMemPoolCreate: checks the properties as the H200 does (every bad field is
    /// CUDA_ERROR_INVALID_VALUE).
    pub fn pool_create(&self, props: &CUmemPoolProps) -> CuResult<PoolId> {
        match props.alloc_type {
            CU_MEM_ALLOCATION_TYPE_PINNED | CU_MEM_ALLOCATION_TYPE_MANAGED => {}
            other => {
                return Err(invalid(format!(
                    "allocType {other} is not CU_MEM_ALLOCATION_TYPE_PINNED (1) or MANAGED (2)"
                )))
            }
        }
        // cuda.h: HOST_NUMA_CURRENT is INVALID_VALUE; so is a device that does not exist.
        let place = self
            .pool_place(props.alloc_type, props.location.type_, props.location.id)
            .map_err(|e| invalid(e.message))?;
        let types = props.handle_types;
        match place {
            // cuda.h: a HOST pool's handleTypes must be 0 (a HOST_NUMA pool may have
            // some).
            Place::Host(None) if types != 0 => {
                return Err(invalid(format!(
                    "handle types {types:#x}: pools located on CU_MEM_LOCATION_TYPE_HOST are \
                     not IPC capable (HOST_NUMA pools may be)"
                )))
            }
            // Observed (probe pools_ipc, managed-pool): refused as a bad property.
            Place::Managed(..) if types != 0 => {
                return Err(invalid(format!(
                    "handle types {types:#x}: a managed memory pool cannot be shared"
                )))
            }
            _ => {}
        }
        if types & !0xF != 0 {
            return Err(invalid(format!(
                "handle types {types:#x} have bits no CUmemAllocationHandleType has"
            )));
        }
        if types & (CU_MEM_HANDLE_TYPE_WIN32 | CU_MEM_HANDLE_TYPE_WIN32_KMT) != 0 {
            return Err(invalid("Win32 handle types cannot be requested on Linux"));
        }
        if types & CU_MEM_HANDLE_TYPE_FABRIC != 0 {
            // As cuMemCreate on the captured H200: fabric handles need an IMEX channel.
            return Err(CuError::new(
                CUDA_ERROR_NOT_PERMITTED,
                "fabric handles need an IMEX channel (CUDA_ERROR_NOT_PERMITTED, as cuMemCreate on the captured H200)",
            ));
        }
        if props.reserved.iter().any(|b| *b != 0) {
            return Err(invalid("the reserved bytes of CUmemPoolProps must be zero"));
        }
        match props.usage {
            0 => {}
            USAGE_HW_DECOMPRESS => return Err(not_supported(
                "CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS: the device has no decompression engine",
            )),
            other => return Err(invalid(format!("usage {other:#x} has unknown bits"))),
        }
        let mut st = self.state.lock();
        let devices = st.pools.devices;
        Ok(st.pools.insert(Pool::new(
            place,
            devices,
            types,
            props.max_size as u64,
            props.usage,
            false,
        )))
    }

    /// cuMemPoolDestroy: at once if nothing of it is live, else once its last allocation
    /// is freed; the device's current pool becomes its default again.
    pub fn pool_destroy(&self, pool: PoolId) -> CuResult<()> {
        let mut st = self.state.lock();
        let st = &mut *st;
        let p = st.pools.live(pool)?;
        if p.is_default {
            return Err(invalid(
                "a device's default memory pool cannot be destroyed",
            ));
        }
        let place = p.place;
        if st.pools.current.get(&place) == Some(&pool) {
            st.pools.current.remove(&place);
        }
        let p = st.pools.pools.get_mut(&pool).expect("checked");
        if p.live == 0 {
            let p = st.pools.pools.remove(&pool).expect("checked");
            drop_pool(p, &mut st.vmm, &mut st.host);
        } else {
            p.destroyed = true;
            release_chunks(p, &mut st.vmm, &mut st.host, 0, true);
        }
        Ok(())
    }

    /// cuMemPoolGetAttribute.
    pub fn pool_attribute(&self, pool: PoolId, attr: i32) -> CuResult<PoolAttribute> {
        let st = self.state.lock();
        let p = st.pools.live(pool)?;
        Ok(match attr {
            CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES
                ..=CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES => {
                PoolAttribute::Int(p.reuse[(attr - 1) as usize])
            }
            CU_MEMPOOL_ATTR_RELEASE_THRESHOLD => PoolAttribute::Bytes(p.release_threshold),
            CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT => PoolAttribute::Bytes(p.reserved),
            CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH => PoolAttribute::Bytes(p.reserved_high),
            CU_MEMPOOL_ATTR_USED_MEM_CURRENT => PoolAttribute::Bytes(p.used),
            CU_MEMPOOL_ATTR_USED_MEM_HIGH => PoolAttribute::Bytes(p.used_high),
            other => return Err(unknown_attribute(other)),
        })
    }

    /// cuMemPoolSetAttribute. Observed: a reuse attribute reads back as 0 or 1 whatever
    /// was set (2 reads 1); the high-water marks can only be reset, to 0 (they then read
    /// the current value); the current amounts are read-only.
    pub fn pool_set_attribute(
        &self,
        pool: PoolId,
        attr: i32,
        value: PoolAttribute,
    ) -> CuResult<()> {
        let mut st = self.state.lock();
        let p = st.pools.live_mut(pool)?;
        match (attr, value) {
            (
                CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES
                    ..=CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
                PoolAttribute::Int(v),
            ) => p.reuse[(attr - 1) as usize] = i32::from(v != 0),
            (CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, PoolAttribute::Bytes(v)) => p.release_threshold = v,
            (CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, PoolAttribute::Bytes(0)) => {
                p.reserved_high = p.reserved
            }
            (CU_MEMPOOL_ATTR_USED_MEM_HIGH, PoolAttribute::Bytes(0)) => p.used_high = p.used,
            (CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH | CU_MEMPOOL_ATTR_USED_MEM_HIGH, _) => {
                return Err(invalid("a high-water mark can only be reset, to 0"))
            }
            (CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT | CU_MEMPOOL_ATTR_USED_MEM_CURRENT, _) => {
                return Err(invalid(format!("attribute {attr} is read-only")))
            }
            (other, _) => return Err(unknown_attribute(other)),
        }
        Ok(())
    }

    /// cuMemPoolTrimTo: wholly free chunks go back while the pool keeps at least
    /// `keep` bytes.
    pub fn pool_trim(&self, pool: PoolId, keep: u64) -> CuResult<()> {
        let mut st = self.state.lock();
        let st = &mut *st;
        let p = st.pools.live_mut(pool)?;
        release_chunks(p, &mut st.vmm, &mut st.host, keep, false);
        Ok(())
    }

    /// cuMemPoolSetAccess; `grants` are (location type, id, flags) as passed. Observed:
    /// a device that does not exist is CUDA_ERROR_INVALID_DEVICE, so is taking the
    /// owner's own access away; read-only access and the host are
    /// CUDA_ERROR_NOT_SUPPORTED. Nothing changes unless every grant is valid.
    pub fn pool_set_access(&self, pool: PoolId, grants: &[(i32, i32, i32)]) -> CuResult<()> {
        // A host pool has no owning device; every device may be granted it.
        let owner = self.state.lock().pools.live(pool)?.place.device();
        let mut checked = Vec::with_capacity(grants.len());
        for &(ty, id, flags) in grants {
            match ty {
                CU_MEM_LOCATION_TYPE_DEVICE => {}
                CU_MEM_LOCATION_TYPE_HOST
                | CU_MEM_LOCATION_TYPE_HOST_NUMA
                | CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT => {
                    // Observed for a device's pool; for the host's own pools, which the
                    // host reaches already, granting it is not emulated.
                    return Err(not_supported(
                        "the host cannot be granted access to a memory pool by \
                         cuMemPoolSetAccess (not emulated for the host's own pools)",
                    ));
                }
                other => {
                    return Err(invalid(format!(
                        "location type {other} is not valid for access"
                    )))
                }
            }
            self.device(id)?;
            let dev = id as usize;
            match flags {
                CU_MEM_ACCESS_FLAGS_PROT_READWRITE => {
                    if let Some(o) = owner {
                        if dev != o && !self.profile.can_access_peer(dev, o) {
                            return Err(invalid_device(format!(
                                "device {dev} cannot access device {o}'s memory (no peer access)"
                            )));
                        }
                    }
                }
                CU_MEM_ACCESS_FLAGS_PROT_READ => {
                    return Err(not_supported(
                        "pools grant read-write access or none, not read-only",
                    ))
                }
                CU_MEM_ACCESS_FLAGS_PROT_NONE if Some(dev) == owner => {
                    return Err(invalid_device(format!(
                        "device {dev} owns the pool's memory: its access cannot be taken away"
                    )))
                }
                CU_MEM_ACCESS_FLAGS_PROT_NONE => {}
                other => {
                    return Err(invalid(format!(
                        "access flags {other} are not PROT_NONE (0), PROT_READ (1) or PROT_READWRITE (3)"
                    )))
                }
            }
            checked.push((dev, flags as u8));
        }
        let mut st = self.state.lock();
        let st = &mut *st;
        let p = st.pools.live_mut(pool)?;
        for (dev, flags) in checked {
            p.access.set(dev, flags);
        }
        for c in p.chunks.keys() {
            st.vmm.set_mapping_access(*c, p.access);
        }
        // Another process's allocations imported through the pool follow it too.
        let access = p.access;
        for i in st.pools.imported.values().filter(|i| i.pool == pool) {
            for m in &i.maps {
                st.vmm.set_mapping_access(*m, access);
            }
        }
        Ok(())
    }

    /// cuMemPoolGetAccess. Observed: a device that does not exist is
    /// CUDA_ERROR_INVALID_VALUE; the host has no access to a device's pool (0).
    pub fn pool_access(&self, pool: PoolId, location_type: i32, location_id: i32) -> CuResult<u8> {
        let st = self.state.lock();
        let p = st.pools.live(pool)?;
        match location_type {
            CU_MEM_LOCATION_TYPE_DEVICE => {
                self.device(location_id).map_err(|e| invalid(e.message))?;
                Ok(p.access.get(location_id as usize))
            }
            CU_MEM_LOCATION_TYPE_HOST
            | CU_MEM_LOCATION_TYPE_HOST_NUMA
            | CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT => Ok(match p.place {
                // cuda.h: a host pool is reachable from the host CPU; managed memory too.
                Place::Host(_) | Place::Managed(..) => CU_MEM_ACCESS_FLAGS_PROT_READWRITE as u8,
                Place::Device(_) => 0,
            }),
            other => Err(invalid(format!(
                "location type {other} is not valid for access"
            ))),
        }
    }

    /// cuMemPoolExportToShareableHandle: a file descriptor of the pool, which holds what
    /// an importer needs (pool_ipc.rs).
    pub fn pool_export(&self, pool: PoolId, handle_type: i32, flags: u64) -> CuResult<OwnedFd> {
        let mut st = self.state.lock();
        let p = st.pools.live_mut(pool)?;
        if flags != 0 {
            return Err(invalid(format!("flags must be 0, not {flags}")));
        }
        if handle_type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR {
            return Err(invalid(format!(
                "handle type {handle_type}: only POSIX file descriptors (1) are emulated"
            )));
        }
        if p.handle_types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR == 0 {
            return Err(invalid(
                "the pool was created without CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR in \
                 handleTypes",
            ));
        }
        if p.export.is_none() {
            let content = super::pool_ipc::pool_file_content(pool, p)?;
            p.export = Some(
                pool_file(pool, &content)
                    .map_err(|e| out_of_memory(format!("a file for the pool: {e}")))?,
            );
        }
        p.export
            .as_ref()
            .expect("made above")
            .try_clone()
            .map_err(|e| out_of_memory(format!("no fd left: {e}")))
    }

    /// cuMemAllocAsync (`pool` None: the current pool of the stream's device) and
    /// cuMemAllocFromPoolAsync. 0 bytes succeed with address 0 (observed).
    pub fn alloc_async(&self, size: u64, stream: StreamId, pool: Option<PoolId>) -> CuResult<u64> {
        if self.capture_of(stream)?.is_some() {
            return self.capture_alloc(size, stream, pool);
        }
        let mut st = self.state.lock();
        let st = &mut *st;
        let (ctx, _) = st.contexts.stream(stream)?;
        let device = st.contexts.get(ctx)?.device;
        self.check_sticky(st, device)?;
        let pool = match pool {
            Some(p) => {
                if st.pools.live(p)?.origin.is_some() {
                    // cuda.h: "Imported memory pools do not support creating new allocations".
                    return Err(invalid(format!(
                        "pool {p:#x} was imported from another process: it makes no allocations"
                    )));
                }
                p
            }
            None => st.pools.current_pool(Place::Device(device)),
        };
        if size == 0 {
            return Ok(0);
        }
        let p = st
            .pools
            .allocate(&mut st.vmm, &mut st.host, &self.profile, pool, size)?;
        // Under the state's lock: see `free_in_order`.
        super::ordering::allocated(p, size);
        Ok(p)
    }

    /// cuMemAllocAsync on a capturing stream: an allocation node of the capture's graph on
    /// the stream's device, which the device alone may access (as its default pool's
    /// memory); the address is the node's.
    fn capture_alloc(&self, size: u64, stream: StreamId, pool: Option<PoolId>) -> CuResult<u64> {
        if pool.is_some() {
            return Err(not_supported(
                "cuMemAllocFromPoolAsync during stream capture (a graph allocation with the \
                 pool's properties) is not emulated by cumock",
            ));
        }
        let device = {
            let st = self.state.lock();
            let (ctx, _) = st.contexts.stream(stream)?;
            st.contexts.get(ctx)?.device
        };
        if size == 0 {
            return Ok(0);
        }
        let mut node = AllocNode {
            dptr: 0,
            bytesize: size,
            device,
            alloc_type: CU_MEM_ALLOCATION_TYPE_PINNED,
            location: CUmemLocation {
                type_: CU_MEM_LOCATION_TYPE_DEVICE,
                id: device as i32,
            },
            max_size: 0,
            usage: 0,
            access: Vec::new(),
        };
        self.check_alloc_node(&node)?;
        let granularity = self.profile.devices[device].granularity_minimum;
        self.capture_node_with(stream, move |st, g, deps| {
            let st = &mut *st;
            let freed = st.graphs.graph(g)?.frees_before(deps);
            node.dptr = st
                .graph_memory
                .reserve(&mut st.vmm, g, &node, granularity, &freed)?;
            let dptr = node.dptr;
            Ok((NodeOp::MemAlloc(std::sync::Arc::new(node)), dptr))
        })
    }

    /// cuMemFreeAsync: pool memory goes back to its pool; cuMemAlloc memory is freed as
    /// cuMemFree frees it (observed: both succeed).
    pub fn free_async(&self, ptr: u64, stream: StreamId) -> CuResult<()> {
        self.state.lock().contexts.stream(stream)?;
        if self.capture_of(stream)?.is_some() {
            // A free node of the capture's graph: cuda.h's rules for cuGraphAddMemFreeNode
            // (the address must be a graph allocation's).
            return self.capture_node_with(stream, |st, g, _| {
                st.graph_memory.add_free(g, ptr)?;
                Ok((NodeOp::MemFree(ptr), ()))
            });
        }
        if ptr == 0 {
            return self.mem_free(DevicePtr::new(ptr));
        }
        if self.free_imported_async(ptr, stream)? {
            return Ok(());
        }
        let order = self.stream_order(stream)?;
        self.free_in_order(ptr, Some((stream, order)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host_bytes::HostBytes;
    use crate::model::HostOrDevice;

    const MIB: u64 = 1 << 20;

    fn driver(n: usize) -> Driver {
        let d = Driver::new(Profile::builtin_with_devices(n).unwrap());
        d.init(0).unwrap();
        let ctx = d.primary_retain(0).unwrap();
        d.ctx_set_current(Some(ctx)).unwrap();
        d
    }

    fn attr(d: &Driver, pool: PoolId, a: i32) -> u64 {
        match d.pool_attribute(pool, a).unwrap() {
            PoolAttribute::Int(v) => v as u64,
            PoolAttribute::Bytes(v) => v,
        }
    }

    fn props(device: i32, handle_types: i32) -> CUmemPoolProps {
        CUmemPoolProps {
            alloc_type: CU_MEM_ALLOCATION_TYPE_PINNED,
            handle_types,
            location: cumock_abi::CUmemLocation {
                type_: CU_MEM_LOCATION_TYPE_DEVICE,
                id: device,
            },
            ..Default::default()
        }
    }

    #[test]
    fn an_allocation_runs_on_into_the_next_chunk_as_on_the_h200() {
        let d = driver(1);
        let pool = d.default_mem_pool(0).unwrap();
        let a = d.alloc_async(1, StreamId::NULL, None).unwrap();
        let b = d.alloc_async(MIB, StreamId::NULL, None).unwrap();
        let c = d.alloc_async(40 * MIB, StreamId::NULL, None).unwrap();
        assert_eq!(a % (2 * MIB), 0, "the first allocation starts a chunk");
        assert_eq!((b - a, c - b), (512, MIB));
        d.synchronized();
        assert_eq!(
            attr(&d, pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT),
            64 * MIB
        );
        assert_eq!(
            attr(&d, pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT),
            1 + MIB + 40 * MIB
        );
        // The 40 MiB read back across the chunks' boundary.
        let data: Vec<u8> = (0..40 * MIB).map(|i| (i % 253) as u8).collect();
        let mut back = vec![0u8; data.len()];
        {
            d.copy(
                HostOrDevice::Device(DevicePtr::new(c)),
                HostOrDevice::Host(HostBytes::from_slice(&data)),
                40 * MIB,
            )
            .unwrap();
            d.copy(
                HostOrDevice::Host(HostBytes::from_mut_slice(&mut back)),
                HostOrDevice::Device(DevicePtr::new(c)),
                40 * MIB,
            )
            .unwrap();
        }
        assert!(back == data);
        let free0 = d.mem_info().unwrap().0;
        for p in [a, b, c] {
            d.free_async(p, StreamId::NULL).unwrap();
        }
        assert_eq!(
            attr(&d, pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT),
            64 * MIB,
            "until a synchronisation"
        );
        d.synchronized();
        assert_eq!(attr(&d, pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 0);
        assert_eq!(attr(&d, pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH), 64 * MIB);
        assert_eq!(
            d.mem_info().unwrap().0,
            free0 + 64 * MIB,
            "the device has it back"
        );
    }

    #[test]
    fn small_allocations_are_512_bytes_apart_and_freed_ranges_are_reused() {
        let d = driver(1);
        let e1 = d.alloc_async(100, StreamId::NULL, None).unwrap();
        let e2 = d.alloc_async(100, StreamId::NULL, None).unwrap();
        let big = d.alloc_async(MIB, StreamId::NULL, None).unwrap();
        assert_eq!((e2 - e1, big - e2), (512, 512));
        assert_eq!(
            d.address_range(DevicePtr::new(e1 + 50)).unwrap(),
            (DevicePtr::new(e1), 100)
        );
        assert!(
            d.address_range(DevicePtr::new(e1 + 100)).is_err(),
            "past what was asked for"
        );
        d.free_async(e1, StreamId::NULL).unwrap();
        d.free_async(e2, StreamId::NULL).unwrap();
        assert_eq!(
            d.alloc_async(1000, StreamId::NULL, None).unwrap(),
            e1,
            "first fit, joined"
        );
        assert_eq!(
            d.free_async(e1 + 512, StreamId::NULL).unwrap_err().code,
            CUDA_ERROR_INVALID_VALUE,
            "an interior address"
        );
    }

    #[test]
    fn the_release_threshold_keeps_memory_across_synchronisations() {
        let d = driver(1);
        let pool = d.pool_create(&props(0, 0)).unwrap();
        d.pool_set_attribute(
            pool,
            CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            PoolAttribute::Bytes(u64::MAX),
        )
        .unwrap();
        let a = d.alloc_async(MIB, StreamId::NULL, Some(pool)).unwrap();
        d.free_async(a, StreamId::NULL).unwrap();
        d.ctx_synchronize(None).unwrap();
        assert_eq!(
            attr(&d, pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT),
            32 * MIB
        );
        assert_eq!(d.alloc_async(MIB, StreamId::NULL, Some(pool)).unwrap(), a);
        d.free_async(a, StreamId::NULL).unwrap();
        d.pool_trim(pool, 1).unwrap();
        assert_eq!(
            attr(&d, pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT),
            32 * MIB,
            "kept: at least 1 byte"
        );
        d.pool_trim(pool, 0).unwrap();
        assert_eq!(attr(&d, pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 0);
        d.pool_destroy(pool).unwrap();
    }

    #[test]
    fn a_destroyed_pool_lives_until_its_last_allocation_is_freed() {
        let d = driver(1);
        let def = d.default_mem_pool(0).unwrap();
        let pool = d.pool_create(&props(0, 0)).unwrap();
        d.set_current_mem_pool(0, pool).unwrap();
        let p = d.alloc_async(MIB, StreamId::NULL, None).unwrap();
        assert_eq!(d.pointer_info(DevicePtr::new(p)).unwrap().pool, Some(pool));
        d.memset(DevicePtr::new(p), crate::model::Pattern::D32(0xabcd0001), 4)
            .unwrap();
        let used = d.state.lock().vmm.used(0);
        d.pool_destroy(pool).unwrap();
        assert_eq!(d.current_mem_pool(0).unwrap(), def);
        assert_eq!(
            d.pool_attribute(pool, 1).unwrap_err().severity,
            Severity::WouldCrash
        );
        let mut w = [0u8; 4];
        d.copy(
            HostOrDevice::Host(HostBytes::from_mut_slice(&mut w)),
            HostOrDevice::Device(DevicePtr::new(p)),
            4,
        )
        .unwrap();
        assert_eq!(u32::from_ne_bytes(w), 0xabcd0001);
        d.mem_free(DevicePtr::new(p)).unwrap();
        assert_eq!(d.state.lock().vmm.used(0), used - 32 * MIB);
        assert!(
            d.state.lock().vmm.reservations().next().is_none(),
            "its region went too"
        );
    }

    #[test]
    fn access_follows_the_pool_onto_every_chunk() {
        let d = driver(2);
        let pool = d.pool_create(&props(0, 0)).unwrap();
        let p = d.alloc_async(MIB, StreamId::NULL, Some(pool)).unwrap();
        assert_eq!(
            d.pool_access(pool, CU_MEM_LOCATION_TYPE_DEVICE, 1).unwrap(),
            0
        );
        assert!(d
            .translate(DevicePtr::new(p), 8, 1, crate::model::vmm::Need::Read)
            .is_err());
        d.pool_set_access(pool, &[(CU_MEM_LOCATION_TYPE_DEVICE, 1, 3)])
            .unwrap();
        let q = d.alloc_async(64 * MIB, StreamId::NULL, Some(pool)).unwrap();
        assert!(d
            .translate(DevicePtr::new(p), 8, 1, crate::model::vmm::Need::Write)
            .is_ok());
        assert!(
            d.translate(
                DevicePtr::new(q + 60 * MIB),
                8,
                1,
                crate::model::vmm::Need::Write
            )
            .is_ok(),
            "a later chunk"
        );
        assert_eq!(
            d.pool_set_access(pool, &[(CU_MEM_LOCATION_TYPE_DEVICE, 0, 0)])
                .unwrap_err()
                .code,
            CUDA_ERROR_INVALID_DEVICE
        );
        assert_eq!(
            d.pool_set_access(pool, &[(CU_MEM_LOCATION_TYPE_DEVICE, 1, 1)])
                .unwrap_err()
                .code,
            CUDA_ERROR_NOT_SUPPORTED
        );
        d.pool_set_access(pool, &[(CU_MEM_LOCATION_TYPE_DEVICE, 1, 0)])
            .unwrap();
        assert!(d
            .translate(DevicePtr::new(p), 8, 1, crate::model::vmm::Need::Read)
            .is_err());
    }

    #[test]
    fn more_than_the_device_or_the_pool_holds_is_out_of_memory() {
        let d = driver(1);
        assert_eq!(
            d.alloc_async(1 << 50, StreamId::NULL, None)
                .unwrap_err()
                .code,
            CUDA_ERROR_OUT_OF_MEMORY
        );
        let mut small = props(0, 0);
        small.max_size = 64 << 20;
        let pool = d.pool_create(&small).unwrap();
        d.alloc_async(40 * MIB, StreamId::NULL, Some(pool)).unwrap();
        assert_eq!(
            d.alloc_async(40 * MIB, StreamId::NULL, Some(pool))
                .unwrap_err()
                .code,
            CUDA_ERROR_OUT_OF_MEMORY
        );
        assert!(d.state.lock().pools.blocks().count() == 1);
    }

    #[test]
    fn pools_keep_their_place_in_a_busy_address_space() {
        // cuMemAlloc between two growths does not stop a pool from growing at its end.
        let d = driver(1);
        let pool = d.pool_create(&props(0, 0)).unwrap();
        let a = d.alloc_async(20 * MIB, StreamId::NULL, Some(pool)).unwrap();
        let m = d.mem_alloc(MIB).unwrap();
        let b = d.alloc_async(20 * MIB, StreamId::NULL, Some(pool)).unwrap();
        assert_eq!(b, a + 20 * MIB);
        assert_eq!(
            attr(&d, pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT),
            64 * MIB
        );
        d.mem_free(m).unwrap();
    }
}
