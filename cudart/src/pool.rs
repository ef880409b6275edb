//! The stream-ordered allocator: cudaMallocAsync/FreeAsync and memory pools. Over a
//! driver with memory pools (NVIDIA's, and cumock's mock, which emulates them) every call
//! goes to the driver's cuMemPool*, and the runtime only notes what is live for its leak
//! report; over one without (cuDeviceGetDefaultMemPool says CUDA_ERROR_NOT_SUPPORTED) the
//! runtime keeps its pools itself, as the H200's pools were seen to behave (clients/runtime/goldens, pool): memory is reserved in chunks of 32 MiB
//! (or one chunk the size of a larger allocation, rounded to the granularity), each an
//! ordinary allocation; allocations are carved from the chunks (512-byte aligned, first
//! fit) and counted as used at their exact size; a chunk wholly free goes back to the
//! driver at the next synchronisation while the pool holds more than its release threshold
//! (0 by default), or at cudaMemPoolTrimTo.
//!
//! Stream order is kept by waiting: cudaFreeAsync waits for its stream before the block
//! can be reused, so a block is never handed out while earlier work may still touch it.

use crate::boundary::{cudart_fn, out_ref};
use crate::driver::Driver;
use crate::error::{self, RtError, RtResult};
use crate::memory::{allocate, granularity, release, stream_for};
use crate::runtime::{runtime, with_context, Runtime};
use cumock_abi::{CUmemoryPool, CUstream};
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::ffi::{c_int, c_void};

/// `cudaMemPoolAttr`.
const REUSE_FOLLOW_EVENT_DEPENDENCIES: i32 = 1;
const REUSE_ALLOW_INTERNAL_DEPENDENCIES: i32 = 3;
const RELEASE_THRESHOLD: i32 = 4;
const RESERVED_MEM_CURRENT: i32 = 5;
const RESERVED_MEM_HIGH: i32 = 6;
const USED_MEM_CURRENT: i32 = 7;
const USED_MEM_HIGH: i32 = 8;

/// `struct cudaMemPoolProps` (= CUmemPoolProps).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CudaMemPoolProps {
    pub alloc_type: c_int,
    pub handle_types: c_int,
    pub location: cumock_abi::CUmemLocation,
    pub win32_security_attributes: *mut c_void,
    pub max_size: usize,
    pub usage: u16,
    pub reserved: [u8; 54],
}

#[derive(Debug, Default)]
struct Pool {
    device: i32,
    release_threshold: u64,
    reuse: [i32; 3],
    reserved: u64,
    reserved_high: u64,
    used: u64,
    used_high: u64,
    /// The chunks reserved from the driver, by base address.
    chunks: BTreeMap<u64, Chunk>,
    destroyed: bool,
}

/// One reservation of a pool: its free ranges, by offset.
#[derive(Debug)]
struct Chunk {
    size: u64,
    free: BTreeMap<u64, u64>,
}

impl Chunk {
    fn new(size: u64) -> Self {
        Self {
            size,
            free: BTreeMap::from([(0, size)]),
        }
    }

    fn is_free(&self) -> bool {
        self.free.get(&0) == Some(&self.size)
    }

    /// The offset of `len` bytes carved from the first free range that holds them.
    fn carve(&mut self, len: u64) -> Option<u64> {
        let (&off, &flen) = self.free.iter().find(|(_, &l)| l >= len)?;
        self.free.remove(&off);
        if flen > len {
            self.free.insert(off + len, flen - len);
        }
        Some(off)
    }

    /// Gives `len` bytes at `off` back, joined with the free ranges beside them.
    fn give_back(&mut self, off: u64, len: u64) {
        let (mut start, mut end) = (off, off + len);
        if let Some((&prev, &plen)) = self.free.range(..off).next_back() {
            if prev + plen == off {
                self.free.remove(&prev);
                start = prev;
            }
        }
        if let Some(&nlen) = self.free.get(&end) {
            self.free.remove(&end);
            end += nlen;
        }
        self.free.insert(start, end - start);
    }
}

/// The H200's pools reserved 32 MiB for their first allocations, of 1 to 5000 bytes.
const CHUNK: u64 = 32 << 20;
/// Carved allocations start on this boundary.
const ALIGNMENT: u64 = 512;

#[derive(Default)]
struct Pools {
    /// Whether the driver has pools (decided at first use).
    driver_pools: Option<bool>,
    pools: HashMap<usize, Pool>,
    /// Each device's default pool and current pool (cudaDeviceSetMemPool).
    default: HashMap<i32, usize>,
    current: HashMap<i32, usize>,
    /// Live allocations: address -> where they were carved.
    live: HashMap<u64, Carved>,
    /// Live allocations of the driver's pools, for the leak report: address -> (device,
    /// size, the pool named, if one was).
    driver_live: HashMap<u64, (i32, usize, Option<usize>)>,
    next: usize,
}

#[derive(Debug, Clone, Copy)]
struct Carved {
    pool: usize,
    chunk: u64,
    len: u64,
    requested: u64,
}

static POOLS: Mutex<Option<Pools>> = Mutex::new(None);

fn with_pools<T>(f: impl FnOnce(&mut Pools) -> T) -> T {
    let mut g = POOLS.lock();
    f(g.get_or_insert_with(|| Pools {
        next: 0x1000,
        ..Default::default()
    }))
}

/// Whether the driver has memory pools: cuDeviceGetDefaultMemPool answers, or says it has
/// none (CUDA_ERROR_NOT_SUPPORTED).
fn driver_pools(d: &Driver, device: i32) -> RtResult<bool> {
    if let Some(v) = with_pools(|p| p.driver_pools) {
        return Ok(v);
    }
    let mut pool = std::ptr::null_mut();
    let v = match d.cuDeviceGetDefaultMemPool(&mut pool, device) {
        Ok(()) => true,
        Err(e) if e.code == error::NOT_SUPPORTED => false,
        Err(e) => return Err(e),
    };
    Ok(with_pools(|p| *p.driver_pools.get_or_insert(v)))
}

fn new_pool(p: &mut Pools, device: i32) -> usize {
    p.next += 0x10;
    let h = p.next;
    p.pools.insert(
        h,
        Pool {
            device,
            reuse: [1, 1, 1],
            ..Default::default()
        },
    );
    h
}

/// The device's pool for cudaMallocAsync (runtime pools).
fn current_pool(device: i32) -> usize {
    with_pools(|p| {
        if let Some(&h) = p.current.get(&device) {
            return h;
        }
        let h = default_pool(p, device);
        p.current.insert(device, h);
        h
    })
}

fn default_pool(p: &mut Pools, device: i32) -> usize {
    if let Some(&h) = p.default.get(&device) {
        return h;
    }
    let h = new_pool(p, device);
    p.default.insert(device, h);
    h
}

fn known_pool(h: CUmemoryPool) -> RtResult<usize> {
    let h = h as usize;
    if with_pools(|p| p.pools.get(&h).is_some_and(|pool| !pool.destroyed)) {
        Ok(h)
    } else {
        Err(error::invalid(format!("{h:#x} is not a live memory pool")))
    }
}

fn pool_alloc(d: &Driver, rt: &Runtime, h: usize, size: usize) -> RtResult<u64> {
    let overflow = || RtError::new(error::MEMORY_ALLOCATION, format!("{size} bytes overflow"));
    let requested = size as u64;
    let len = requested
        .max(1)
        .checked_next_multiple_of(ALIGNMENT)
        .ok_or_else(overflow)?;
    let carve = |p: &mut Pools| -> Option<u64> {
        let pool = p.pools.get_mut(&h)?;
        let (base, off) = pool
            .chunks
            .iter_mut()
            .find_map(|(b, c)| c.carve(len).map(|o| (*b, o)))?;
        pool.used += requested;
        pool.used_high = pool.used_high.max(pool.used);
        p.live.insert(
            base + off,
            Carved {
                pool: h,
                chunk: base,
                len,
                requested,
            },
        );
        Some(base + off)
    };
    if let Some(ptr) = with_pools(carve) {
        return Ok(ptr);
    }
    let device = with_pools(|p| p.pools[&h].device);
    let size = len
        .checked_next_multiple_of(granularity(d, device)? as u64)
        .ok_or_else(overflow)?
        .max(CHUNK);
    let base = allocate(d, rt, device, size as usize)?;
    // The chunk is the pool's, not the program's: only the pool's report names what is
    // carved from it.
    if let Some(a) = rt.state.lock().allocations.get_mut(&base) {
        a.pooled = true;
    }
    with_pools(|p| {
        let pool = p.pools.get_mut(&h).expect("checked");
        pool.chunks.insert(base, Chunk::new(size));
        pool.reserved += size;
        pool.reserved_high = pool.reserved_high.max(pool.reserved);
    });
    with_pools(carve).ok_or_else(|| {
        RtError::new(
            error::UNKNOWN,
            "a fresh chunk could not hold its allocation",
        )
    })
}

/// An allocation of the driver's pools was freed (cudaFreeAsync, or cudaFree, which the
/// driver lets free it).
pub fn forget_driver_allocation(ptr: u64) {
    with_pools(|p| p.driver_live.remove(&ptr));
}

pub fn owns(ptr: u64) -> bool {
    with_pools(|p| p.live.contains_key(&ptr))
}

/// Returns an allocation to its chunk once `stream`'s earlier work is done.
pub fn free(ptr: u64, stream: CUstream) -> RtResult<()> {
    let (d, rt, _) = with_context()?;
    let Some(c) = with_pools(|p| p.live.get(&ptr).copied()) else {
        return Err(error::invalid(format!(
            "{ptr:#x} is not stream-ordered memory"
        )));
    };
    d.cuStreamSynchronize(stream)?;
    let gone = with_pools(|p| {
        // Gone already if another thread freed it meanwhile.
        p.live.remove(&ptr)?;
        let pool = p
            .pools
            .get_mut(&c.pool)
            .expect("live allocations keep their pool");
        pool.used -= c.requested;
        let chunk = pool
            .chunks
            .get_mut(&c.chunk)
            .expect("live allocations keep their chunk");
        chunk.give_back(ptr - c.chunk, c.len);
        // A destroyed pool's chunks go as soon as they are free.
        let (size, free) = (chunk.size, chunk.is_free());
        if pool.destroyed && free {
            pool.reserved -= size;
            pool.chunks.remove(&c.chunk);
            Some(c.chunk)
        } else {
            None
        }
    });
    match gone {
        Some(base) => release(d, rt, base),
        None => Ok(()),
    }
}

/// Gives a pool's wholly free chunks back until it holds at most `keep` bytes.
fn trim(d: &Driver, rt: &Runtime, h: usize, keep: u64) -> RtResult<()> {
    loop {
        let victim = with_pools(|p| {
            let pool = p.pools.get_mut(&h)?;
            if pool.reserved <= keep {
                return None;
            }
            let (&base, chunk) = pool.chunks.iter().rev().find(|(_, c)| c.is_free())?;
            pool.reserved -= chunk.size;
            pool.chunks.remove(&base);
            Some(base)
        });
        match victim {
            Some(base) => release(d, rt, base)?,
            None => return Ok(()),
        }
    }
}

/// At a synchronisation (stream, event, device), pools above their release threshold
/// give their free chunks back.
pub fn release_on_synchronize() {
    let (Ok(rt), Ok(d)) = (runtime(), crate::driver::driver()) else {
        return;
    };
    let pools: Vec<(usize, u64)> = with_pools(|p| {
        p.pools
            .iter()
            .map(|(h, pool)| (*h, pool.release_threshold))
            .collect()
    });
    for (h, threshold) in pools {
        if let Err(e) = trim(d, rt, h, threshold) {
            eprintln!("cumock: giving a pool's memory back failed: {}", e.message);
        }
    }
}

/// cudaDeviceReset: the device's pools go with its context.
pub fn forget_device(device: i32) {
    with_pools(|p| {
        let gone: Vec<usize> = p
            .pools
            .iter()
            .filter(|(_, pool)| pool.device == device)
            .map(|(h, _)| *h)
            .collect();
        for h in &gone {
            p.pools.remove(h);
        }
        p.live.retain(|_, c| !gone.contains(&c.pool));
        p.driver_live.retain(|_, (d, ..)| *d != device);
        p.default.remove(&device);
        p.current.remove(&device);
    });
}

pub fn leak_report() -> Vec<String> {
    with_pools(|p| {
        let mut v: Vec<String> = p
            .live
            .iter()
            .map(|(ptr, c)| format!("stream-ordered memory {ptr:#x} ({} bytes, pool {:#x}) never freed (cudaFreeAsync)", c.requested, c.pool))
            .chain(p.driver_live.iter().map(|(ptr, (device, size, pool))| match pool {
                Some(h) => format!("stream-ordered memory {ptr:#x} ({size} bytes, pool {h:#x}) never freed (cudaFreeAsync)"),
                None => format!("stream-ordered memory {ptr:#x} ({size} bytes, device {device}'s current pool) never freed (cudaFreeAsync)"),
            }))
            .collect();
        v.sort();
        v
    })
}

// ---- exports --------------------------------------------------------------------------

fn malloc_async(
    ptr: *mut *mut c_void,
    size: usize,
    pool: Option<CUmemoryPool>,
    stream: CUstream,
) -> RtResult<()> {
    // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
    let ptr = unsafe { out_ref(ptr)? };
    let (d, rt, device) = with_context()?;
    if driver_pools(d, device)? {
        let mut p = 0;
        match pool {
            None => d.cuMemAllocAsync(&mut p, size, stream)?,
            Some(pool) => d.cuMemAllocFromPoolAsync(&mut p, size, pool, stream)?,
        }
        // Under capture the address is a graph allocation's: the graph owns it, and it may
        // be freed by the graph itself, so the runtime's leak report does not count it.
        let mut capturing = 0;
        d.cuStreamIsCapturing(stream, &mut capturing)?;
        if p != 0 && capturing == 0 {
            with_pools(|x| {
                x.driver_live
                    .insert(p, (device, size, pool.map(|h| h as usize)))
            });
        }
        *ptr = p as *mut c_void;
        return Ok(());
    }
    let h = match pool {
        None => current_pool(device),
        Some(pool) => known_pool(pool)?,
    };
    // 0 bytes: success with NULL, as on the H200.
    *ptr = std::ptr::null_mut();
    if size == 0 {
        return Ok(());
    }
    *ptr = pool_alloc(d, rt, h, size)? as *mut c_void;
    Ok(())
}

cudart_fn! {
    fn cudaMallocAsync(ptr: *mut *mut c_void, size: usize, stream: CUstream) {
        malloc_async(ptr, size, None, stream_for(stream, false))
    }
}

cudart_fn! {
    fn cudaMallocAsync_ptsz(ptr: *mut *mut c_void, size: usize, stream: CUstream) {
        malloc_async(ptr, size, None, stream_for(stream, true))
    }
}

cudart_fn! {
    fn cudaMallocFromPoolAsync(ptr: *mut *mut c_void, size: usize, pool: CUmemoryPool, stream: CUstream) {
        malloc_async(ptr, size, Some(pool), stream_for(stream, false))
    }
}

cudart_fn! {
    fn cudaMallocFromPoolAsync_ptsz(ptr: *mut *mut c_void, size: usize, pool: CUmemoryPool, stream: CUstream) {
        malloc_async(ptr, size, Some(pool), stream_for(stream, true))
    }
}

fn free_async(ptr: *mut c_void, stream: CUstream) -> RtResult<()> {
    let (d, _, device) = with_context()?;
    if driver_pools(d, device)? {
        d.cuMemFreeAsync(ptr as u64, stream)?;
        forget_driver_allocation(ptr as u64);
        return Ok(());
    }
    // Freeing NULL succeeds, as on the H200.
    if ptr.is_null() {
        return Ok(());
    }
    free(ptr as u64, stream)
}

cudart_fn! {
    fn cudaFreeAsync(ptr: *mut c_void, stream: CUstream) {
        free_async(ptr, stream_for(stream, false))
    }
}

cudart_fn! {
    fn cudaFreeAsync_ptsz(ptr: *mut c_void, stream: CUstream) {
        free_async(ptr, stream_for(stream, true))
    }
}

cudart_fn! {
    fn cudaDeviceGetDefaultMemPool(pool: *mut CUmemoryPool, device: c_int) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let pool = unsafe { out_ref(pool)? };
        let (d, rt, _) = with_context()?;
        rt.check_device(device)?;
        if driver_pools(d, device)? {
            return d.cuDeviceGetDefaultMemPool(pool, device);
        }
        *pool = with_pools(|p| default_pool(p, device)) as CUmemoryPool;
        Ok(())
    }
}

cudart_fn! {
    fn cudaDeviceGetMemPool(pool: *mut CUmemoryPool, device: c_int) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let pool = unsafe { out_ref(pool)? };
        let (d, rt, _) = with_context()?;
        rt.check_device(device)?;
        if driver_pools(d, device)? {
            return d.cuDeviceGetMemPool(pool, device);
        }
        *pool = current_pool(device) as CUmemoryPool;
        Ok(())
    }
}

cudart_fn! {
    fn cudaDeviceSetMemPool(device: c_int, pool: CUmemoryPool) {
        let (d, rt, _) = with_context()?;
        rt.check_device(device)?;
        if driver_pools(d, device)? {
            return d.cuDeviceSetMemPool(device, pool);
        }
        let h = known_pool(pool)?;
        if with_pools(|p| p.pools[&h].device) != device {
            return Err(error::invalid(format!("pool {h:#x} is not device {device}'s")));
        }
        with_pools(|p| p.current.insert(device, h));
        Ok(())
    }
}

/// CUDA 13's pools by location: over a driver with pools, its cuMemGet/SetMemPool calls
/// (`cudaMemLocation` is `CUmemLocation`, the allocation types the driver's). Over the
/// runtime's own pools, only a device's pinned pool is one they have.
fn runtime_pool_device(
    location: *mut cumock_abi::CUmemLocation,
    alloc_type: c_int,
    rt: &Runtime,
) -> RtResult<i32> {
    // Safety: NULL (refused) or the program's location, as the header requires.
    let loc = unsafe { location.as_ref() }.ok_or_else(|| error::invalid("location is NULL"))?;
    if loc.type_ != cumock_abi::consts::CU_MEM_LOCATION_TYPE_DEVICE
        || alloc_type != cumock_abi::consts::CU_MEM_ALLOCATION_TYPE_PINNED
    {
        return Err(error::not_supported(format!(
            "the runtime's own pools are devices' pinned pools (location type {}, allocation type {alloc_type})",
            loc.type_
        )));
    }
    rt.check_device(loc.id)?;
    Ok(loc.id)
}

cudart_fn! {
    fn cudaMemGetDefaultMemPool(pool: *mut CUmemoryPool, location: *mut cumock_abi::CUmemLocation, alloc_type: c_int) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let pool = unsafe { out_ref(pool)? };
        let (d, rt, device) = with_context()?;
        if driver_pools(d, device)? {
            // Safety: the program's location (the driver refuses NULL).
            return unsafe { d.cuMemGetDefaultMemPool(pool, location, alloc_type) };
        }
        let dev = runtime_pool_device(location, alloc_type, rt)?;
        *pool = with_pools(|p| default_pool(p, dev)) as CUmemoryPool;
        Ok(())
    }
}

cudart_fn! {
    fn cudaMemGetMemPool(pool: *mut CUmemoryPool, location: *mut cumock_abi::CUmemLocation, alloc_type: c_int) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let pool = unsafe { out_ref(pool)? };
        let (d, rt, device) = with_context()?;
        if driver_pools(d, device)? {
            // Safety: the program's location (the driver refuses NULL).
            return unsafe { d.cuMemGetMemPool(pool, location, alloc_type) };
        }
        let dev = runtime_pool_device(location, alloc_type, rt)?;
        *pool = current_pool(dev) as CUmemoryPool;
        Ok(())
    }
}

cudart_fn! {
    fn cudaMemSetMemPool(location: *mut cumock_abi::CUmemLocation, alloc_type: c_int, pool: CUmemoryPool) {
        let (d, rt, device) = with_context()?;
        if driver_pools(d, device)? {
            // Safety: the program's location (the driver refuses NULL).
            return unsafe { d.cuMemSetMemPool(location, alloc_type, pool) };
        }
        let dev = runtime_pool_device(location, alloc_type, rt)?;
        let h = known_pool(pool)?;
        if with_pools(|p| p.pools[&h].device) != dev {
            return Err(error::invalid(format!("pool {h:#x} is not device {dev}'s")));
        }
        with_pools(|p| p.current.insert(dev, h));
        Ok(())
    }
}

cudart_fn! {
    fn cudaMemPoolCreate(pool: *mut CUmemoryPool, props: *const CudaMemPoolProps) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let pool = unsafe { out_ref(pool)? };
        // Safety: NULL or the program's props, as the header says.
        let props = unsafe { props.as_ref() }.ok_or_else(|| error::invalid("poolProps is NULL"))?;
        let (d, rt, device) = with_context()?;
        if driver_pools(d, device)? {
            // Safety: cudaMemPoolProps is CUmemPoolProps (the ABI test checks it).
            return unsafe { d.cuMemPoolCreate(pool, (props as *const CudaMemPoolProps).cast()) };
        }
        if props.alloc_type != cumock_abi::consts::CU_MEM_ALLOCATION_TYPE_PINNED {
            return Err(error::invalid(format!("allocType {} is not cudaMemAllocationTypePinned", props.alloc_type)));
        }
        if props.location.type_ != cumock_abi::consts::CU_MEM_LOCATION_TYPE_DEVICE {
            return Err(error::not_supported(format!("pools at location type {} are not implemented", props.location.type_)));
        }
        rt.check_device(props.location.id).map_err(|e| error::invalid(e.message))?;
        *pool = with_pools(|p| new_pool(p, props.location.id)) as CUmemoryPool;
        Ok(())
    }
}

cudart_fn! {
    fn cudaMemPoolDestroy(pool: CUmemoryPool) {
        let (d, rt, device) = with_context()?;
        if driver_pools(d, device)? {
            return d.cuMemPoolDestroy(pool);
        }
        let h = known_pool(pool)?;
        if with_pools(|p| p.default.values().any(|&x| x == h)) {
            return Err(error::invalid("a device's default pool cannot be destroyed"));
        }
        trim(d, rt, h, 0)?;
        with_pools(|p| {
            p.pools.get_mut(&h).expect("known").destroyed = true;
            p.current.retain(|_, c| *c != h);
        });
        Ok(())
    }
}

cudart_fn! {
    fn cudaMemPoolTrimTo(pool: CUmemoryPool, min_bytes_to_keep: usize) {
        let (d, rt, device) = with_context()?;
        if driver_pools(d, device)? {
            return d.cuMemPoolTrimTo(pool, min_bytes_to_keep);
        }
        let h = known_pool(pool)?;
        trim(d, rt, h, min_bytes_to_keep as u64)
    }
}

/// The runtime's own pools (a driver without memory pools) have no peer mappings to give.
fn own_pools_have_no_access(what: &str) -> RtError {
    error::not_supported(format!(
        "{what} on the runtime's own pools (the driver has no memory pools) is not implemented"
    ))
}

cudart_fn! {
    fn cudaMemPoolSetAccess(pool: CUmemoryPool, map: *const cumock_abi::CUmemAccessDesc, count: usize) {
        let (d, _, device) = with_context()?;
        if driver_pools(d, device)? {
            // Safety: the program's `count` descriptors, or NULL, passed on: a
            // cudaMemAccessDesc is a CUmemAccessDesc (the ABI test checks it).
            return unsafe { d.cuMemPoolSetAccess(pool, map, count) };
        }
        Err(own_pools_have_no_access("cudaMemPoolSetAccess"))
    }
}

// Sharing a pool with another process: the driver's, passed on (the runtime's own pools,
// over a driver without pools, are not shared).

cudart_fn! {
    fn cudaMemPoolExportToShareableHandle(handle: *mut c_void, pool: CUmemoryPool, handle_type: c_int, flags: u32) {
        let (d, _, device) = with_context()?;
        if driver_pools(d, device)? {
            // Safety: the program's out-pointer (an int for a POSIX fd), or NULL, which
            // the driver refuses.
            return unsafe { d.cuMemPoolExportToShareableHandle(handle, pool, handle_type, u64::from(flags)) };
        }
        Err(own_pools_have_no_access("cudaMemPoolExportToShareableHandle"))
    }
}

cudart_fn! {
    fn cudaMemPoolImportFromShareableHandle(pool: *mut CUmemoryPool, handle: *mut c_void, handle_type: c_int, flags: u32) {
        let (d, _, device) = with_context()?;
        if driver_pools(d, device)? {
            // Safety: the program's out-pointer, or NULL (the driver refuses it); the
            // handle is a value (the fd).
            return unsafe { d.cuMemPoolImportFromShareableHandle(pool, handle, handle_type, u64::from(flags)) };
        }
        Err(own_pools_have_no_access("cudaMemPoolImportFromShareableHandle"))
    }
}

cudart_fn! {
    fn cudaMemPoolExportPointer(data: *mut c_void, ptr: *mut c_void) {
        let (d, _, device) = with_context()?;
        if driver_pools(d, device)? {
            // Safety: the program's 64-byte cudaMemPoolPtrExportData (the driver's
            // CUmemPoolPtrExportData), or NULL, which the driver refuses.
            return unsafe { d.cuMemPoolExportPointer(data.cast(), ptr as u64) };
        }
        Err(own_pools_have_no_access("cudaMemPoolExportPointer"))
    }
}

cudart_fn! {
    fn cudaMemPoolImportPointer(ptr: *mut *mut c_void, pool: CUmemoryPool, data: *mut c_void) {
        let (d, _, device) = with_context()?;
        if driver_pools(d, device)? {
            // Safety: the program's out-pointer (a CUdeviceptr is pointer-sized) and its
            // 64-byte export data, or NULL, which the driver refuses.
            return unsafe { d.cuMemPoolImportPointer(ptr.cast(), pool, data.cast()) };
        }
        Err(own_pools_have_no_access("cudaMemPoolImportPointer"))
    }
}

cudart_fn! {
    fn cudaMemPoolGetAccess(flags: *mut c_int, pool: CUmemoryPool, location: *mut cumock_abi::CUmemLocation) {
        let (d, _, device) = with_context()?;
        if driver_pools(d, device)? {
            // Safety: the program's out-pointer and location, or NULL (the driver refuses
            // NULL); cudaMemAccessFlags and cudaMemLocation are the driver's types.
            return unsafe { d.cuMemPoolGetAccess(flags.cast(), pool, location) };
        }
        Err(own_pools_have_no_access("cudaMemPoolGetAccess"))
    }
}

cudart_fn! {
    fn cudaMemPoolSetAttribute(pool: CUmemoryPool, attr: c_int, value: *mut c_void) {
        if value.is_null() {
            return Err(error::invalid("value is NULL"));
        }
        let (d, _, device) = with_context()?;
        if driver_pools(d, device)? {
            // Safety: the program's value, of the attribute's type.
            return unsafe { d.cuMemPoolSetAttribute(pool, attr, value) };
        }
        let h = known_pool(pool)?;
        // Safety (reads below): the header says value points to an int for the reuse
        // attributes and to a cuuint64_t for the others.
        let int = || unsafe { *(value as *const i32) };
        let u64v = || unsafe { *(value as *const u64) };
        with_pools(|p| {
            let pool = p.pools.get_mut(&h).expect("known");
            match attr {
                REUSE_FOLLOW_EVENT_DEPENDENCIES..=REUSE_ALLOW_INTERNAL_DEPENDENCIES => pool.reuse[(attr - 1) as usize] = int(),
                RELEASE_THRESHOLD => pool.release_threshold = u64v(),
                // Only resetting the high-water marks is allowed (to the current value).
                RESERVED_MEM_HIGH if u64v() == 0 => pool.reserved_high = pool.reserved,
                USED_MEM_HIGH if u64v() == 0 => pool.used_high = pool.used,
                _ => return Err(error::invalid(format!("attribute {attr} cannot be set to that value"))),
            }
            Ok(())
        })
    }
}

cudart_fn! {
    fn cudaMemPoolGetAttribute(pool: CUmemoryPool, attr: c_int, value: *mut c_void) {
        if value.is_null() {
            return Err(error::invalid("value is NULL"));
        }
        let (d, _, device) = with_context()?;
        if driver_pools(d, device)? {
            // Safety: the program's value, of the attribute's type.
            return unsafe { d.cuMemPoolGetAttribute(pool, attr, value) };
        }
        let h = known_pool(pool)?;
        let (int, u64v) = with_pools(|p| {
            let pool = &p.pools[&h];
            match attr {
                REUSE_FOLLOW_EVENT_DEPENDENCIES..=REUSE_ALLOW_INTERNAL_DEPENDENCIES => Ok((Some(pool.reuse[(attr - 1) as usize]), None)),
                RELEASE_THRESHOLD => Ok((None, Some(pool.release_threshold))),
                RESERVED_MEM_CURRENT => Ok((None, Some(pool.reserved))),
                RESERVED_MEM_HIGH => Ok((None, Some(pool.reserved_high))),
                USED_MEM_CURRENT => Ok((None, Some(pool.used))),
                USED_MEM_HIGH => Ok((None, Some(pool.used_high))),
                _ => Err(error::invalid(format!("{attr} is not a cudaMemPoolAttr"))),
            }
        })?;
        // Safety: value points to the attribute's type, as the header says.
        unsafe {
            if let Some(v) = int {
                *(value as *mut i32) = v;
            }
            if let Some(v) = u64v {
                *(value as *mut u64) = v;
            }
        }
        Ok(())
    }
}
