//! One-dimensional copies and memsets over `model::copies`: cuMemcpyHtoD, DtoH, DtoD,
//! cuMemcpy (unified addresses), cuMemcpyPeer, their Async forms, cuMemsetD8/16/32 and
//! their Async forms (the per-thread default stream variants are the trait's defaults),
//! and how each is ordered: on the legacy stream, queued on a stream's worker, staged
//! from pageable memory, or captured into a graph. cuda.h files them under `MemoryApi`,
//! whose methods (exports/mod.rs) call these.

use super::{async_op, capturing, legacy_order, CUdevicePtr};
use crate::boundary::{device_ptr, drv, given, host_bytes, Handle};
use crate::model::error::*;
use crate::model::{Driver, HostBytes, HostOrDevice, Pattern};
use cumock_abi::*;
use std::ffi::c_void;

pub(super) unsafe fn cuMemcpyHtoD_v2(
    dst: CUdevicePtr,
    src: *const c_void,
    n: usize,
) -> CuResult<()> {
    // Safety: cuda.h requires `src` readable for n bytes.
    if unsafe { staged_htod(dst, src, n) }? {
        return Ok(());
    }
    legacy_order()?;
    let d = drv()?;
    // Safety: cuda.h requires `src` readable for n bytes.
    let src = unsafe { host_side(d, src, n, false, "srcHost") }?;
    d.copy(device_side(d, dst, n, true)?, src, n as u64)
}

pub(super) unsafe fn cuMemcpyDtoH_v2(dst: *mut c_void, src: CUdevicePtr, n: usize) -> CuResult<()> {
    legacy_order()?;
    let d = drv()?;
    // Safety: cuda.h requires `dst` writable for n bytes.
    let dst = unsafe { host_side(d, dst, n, true, "dstHost") }?;
    d.copy(dst, device_side(d, src, n, false)?, n as u64)
}

pub(super) unsafe fn cuMemcpyDtoD_v2(dst: CUdevicePtr, src: CUdevicePtr, n: usize) -> CuResult<()> {
    legacy_order()?;
    let d = drv()?;
    d.copy(
        device_side(d, dst, n, true)?,
        device_side(d, src, n, false)?,
        n as u64,
    )
}

pub(super) unsafe fn cuMemcpy(dst: CUdevicePtr, src: CUdevicePtr, n: usize) -> CuResult<()> {
    legacy_order()?;
    let d = drv()?;
    // Safety: cuda.h requires a host `dst` writable, and a host `src` readable, for n
    // bytes.
    let dst = unsafe { unified_side(d, dst, n, true, "dst") }?;
    let src = unsafe { unified_side(d, src, n, false, "src") }?;
    d.copy(dst, src, n as u64)
}

pub(super) unsafe fn cuMemcpyHtoDAsync_v2(
    dst: CUdevicePtr,
    src: *const c_void,
    n: usize,
    s: CUstream,
) -> CuResult<()> {
    let from = src as usize;
    // Safety: the program keeps `src` readable until the copy has run (cuda.h).
    let body = move || unsafe { cuMemcpyHtoD_v2(dst, from as *const c_void, n) };
    // Safety: as above.
    unsafe {
        async_copy(
            s,
            dst,
            src as u64,
            n,
            true,
            || format!("HtoD {n} bytes"),
            body,
        )
    }
}

pub(super) unsafe fn cuMemcpyDtoHAsync_v2(
    dst: *mut c_void,
    src: CUdevicePtr,
    n: usize,
    s: CUstream,
) -> CuResult<()> {
    let to = dst as usize;
    // Safety: the program keeps `dst` writable until the copy has run (cuda.h).
    let body = move || unsafe { cuMemcpyDtoH_v2(to as *mut c_void, src, n) };
    // Safety: as above.
    unsafe {
        async_copy(
            s,
            dst as u64,
            src,
            n,
            true,
            || format!("DtoH {n} bytes"),
            body,
        )
    }
}

pub(super) unsafe fn cuMemcpyDtoDAsync_v2(
    dst: CUdevicePtr,
    src: CUdevicePtr,
    n: usize,
    s: CUstream,
) -> CuResult<()> {
    // Safety: device addresses only, checked when the copy runs.
    let body = move || unsafe { cuMemcpyDtoD_v2(dst, src, n) };
    // Safety: both sides are device addresses, or page-locked memory the driver holds.
    unsafe { async_copy(s, dst, src, n, true, || format!("DtoD {n} bytes"), body) }
}

pub(super) unsafe fn cuMemcpyAsync(
    dst: CUdevicePtr,
    src: CUdevicePtr,
    n: usize,
    s: CUstream,
) -> CuResult<()> {
    // Safety: the program keeps host addresses valid until the copy has run (cuda.h).
    let body = move || unsafe { cuMemcpy(dst, src, n) };
    // Safety: as above; a NULL side is left to the copy's own error.
    let queueable = dst != 0 && src != 0;
    unsafe { async_copy(s, dst, src, n, queueable, || format!("{n} bytes"), body) }
}

// Per-thread default stream variants: a synchronous one is issued on the calling
// thread's default stream, an async one's NULL stream is that stream.

pub(super) unsafe fn cuMemsetD8_v2(dst: CUdevicePtr, v: u8, n: usize) -> CuResult<()> {
    memset_sync(dst, Pattern::D8(v), n)
}

pub(super) unsafe fn cuMemsetD16_v2(dst: CUdevicePtr, v: u16, n: usize) -> CuResult<()> {
    memset_sync(dst, Pattern::D16(v), n)
}

pub(super) unsafe fn cuMemsetD32_v2(dst: CUdevicePtr, v: u32, n: usize) -> CuResult<()> {
    memset_sync(dst, Pattern::D32(v), n)
}

pub(super) unsafe fn cuMemsetD8Async(
    dst: CUdevicePtr,
    v: u8,
    n: usize,
    s: CUstream,
) -> CuResult<()> {
    // Safety: a device address, checked when the memset runs.
    let body = move || unsafe { cuMemsetD8_v2(dst, v, n) };
    if memset_async_queued(s, dst, Pattern::D8(v), n)? {
        return Ok(());
    }
    async_op(
        s,
        || super::graphs::Captured {
            what: format!("D8 {n} elements"),
            shape: fill_shape(dst, 1, n),
            given: super::graphs::captured_fill(dst, v as u32, 1, n),
        },
        body,
    )
}

pub(super) unsafe fn cuMemsetD16Async(
    dst: CUdevicePtr,
    v: u16,
    n: usize,
    s: CUstream,
) -> CuResult<()> {
    // Safety: a device address, checked when the memset runs.
    let body = move || unsafe { cuMemsetD16_v2(dst, v, n) };
    if memset_async_queued(s, dst, Pattern::D16(v), n)? {
        return Ok(());
    }
    async_op(
        s,
        || super::graphs::Captured {
            what: format!("D16 {n} elements"),
            shape: fill_shape(dst, 2, n),
            given: super::graphs::captured_fill(dst, v as u32, 2, n),
        },
        body,
    )
}

pub(super) unsafe fn cuMemsetD32Async(
    dst: CUdevicePtr,
    v: u32,
    n: usize,
    s: CUstream,
) -> CuResult<()> {
    // Safety: a device address, checked when the memset runs.
    let body = move || unsafe { cuMemsetD32_v2(dst, v, n) };
    if memset_async_queued(s, dst, Pattern::D32(v), n)? {
        return Ok(());
    }
    async_op(
        s,
        || super::graphs::Captured {
            what: format!("D32 {n} elements"),
            shape: fill_shape(dst, 4, n),
            given: super::graphs::captured_fill(dst, v, 4, n),
        },
        body,
    )
}

pub(super) unsafe fn cuMemcpyPeer(
    dst: CUdevicePtr,
    dst_ctx: CUcontext,
    src: CUdevicePtr,
    src_ctx: CUcontext,
    n: usize,
) -> CuResult<()> {
    legacy_order()?;
    let d = drv()?;
    // Observed: NULL stands for the current context on either side. With every
    // device's memory in one address space, the copy is the DtoD copy once both
    // contexts are known to be live.
    for c in [dst_ctx, src_ctx] {
        if let Some(k) = c.key() {
            d.ctx_device(Some(k))?;
        }
    }
    cuMemcpyDtoD_v2(dst, src, n)
}

pub(super) unsafe fn cuMemcpyPeerAsync(
    dst: CUdevicePtr,
    dst_ctx: CUcontext,
    src: CUdevicePtr,
    src_ctx: CUcontext,
    n: usize,
    s: CUstream,
) -> CuResult<()> {
    let d = drv()?;
    for c in [dst_ctx, src_ctx] {
        if let Some(k) = c.key() {
            d.ctx_device(Some(k))?;
        }
    }
    // A copy between two devices' memory: queued like any device-to-device copy (the
    // contexts as addresses, so that the fallback's body may cross threads).
    let (dc, sc) = (dst_ctx as usize, src_ctx as usize);
    // Safety: device addresses, checked when the copy runs.
    let body = move || unsafe { cuMemcpyPeer(dst, dc as CUcontext, src, sc as CUcontext, n) };
    // Safety: both sides are device addresses (or page-locked memory the driver holds).
    unsafe { async_copy(s, dst, src, n, true, || format!("peer {n} bytes"), body) }
}

/// Which side of a copy a pointer the program calls "host" is really on; `what`, the
/// parameter's name, for a NULL with bytes to copy.
///
/// # Safety
/// If `p` is host memory, it is readable for `len` bytes, and writable if `write`, while
/// the result lives (as cuda.h requires of the program).
unsafe fn host_side<'a>(
    d: &Driver,
    p: *const c_void,
    len: usize,
    write: bool,
    what: &str,
) -> CuResult<HostOrDevice<'a>> {
    let p = host_bytes(p, len, what)?;
    Ok(if d.is_device_address(device_ptr(p as u64)) {
        HostOrDevice::Device(device_ptr(p as u64))
    } else if write {
        // Safety: this function's contract.
        HostOrDevice::Host(unsafe { HostBytes::writable(p as *mut u8, len) })
    } else {
        // Safety: this function's contract.
        HostOrDevice::Host(unsafe { HostBytes::readable(p as *const u8, len) })
    })
}

/// One side of an async copy queued on its stream.
#[derive(Clone)]
enum QueuedSide {
    /// Page-locked host memory: it stays mapped until cuMemFreeHost or
    /// cuMemHostUnregister, which wait for every stream's queued work first.
    PageLocked(u64),
    Device(u64),
    /// Pageable host memory read when the copy was issued (`stage`).
    Staged(std::sync::Arc<[u8]>),
}

/// The most bytes of pageable host memory an async copy to the device stages. The CUDA
/// documentation ("API synchronization behavior"): a copy from pageable host memory to
/// device memory "will return once the pageable buffer has been copied to the staging
/// memory for DMA transfer to device memory, but the DMA to final destination may not
/// have completed", and "if pageable memory must first be staged to pinned memory, the
/// driver may synchronize with the stream". So the source is read when the call is made
/// (the program may reuse it as soon as the call returns) and the bytes land in stream
/// order; a larger copy runs in place once the work it follows is done (the driver's
/// staging memory is bounded too), so that a burst of large copies does not hold the
/// host's memory twice.
pub(super) const STAGING_LIMIT: usize = 64 << 20;

/// `len` bytes of pageable host memory at `addr`, read now.
///
/// # Safety
/// `addr` is readable for `len` bytes (cuda.h's contract on an async copy's source).
unsafe fn stage(addr: u64, len: usize) -> QueuedSide {
    let mut buf = vec![0u8; len];
    // Safety: this function's contract; `buf` is ours.
    let src = unsafe { HostBytes::readable(addr as *const u8, len) };
    crate::host_bytes::host_to_host(HostBytes::from_mut_slice(&mut buf), src, len);
    QueuedSide::Staged(buf.into())
}

impl QueuedSide {
    /// The side of an async copy at `addr`, if a queued copy can hold it as it is: None
    /// for pageable host memory (which only a source to the device can be, staged).
    fn of(d: &Driver, addr: u64, len: usize) -> CuResult<Option<Self>> {
        match d.page_locked(addr, len as u64) {
            Some(fits) => fits.map(|()| Some(Self::PageLocked(addr))),
            None if d.is_device_address(device_ptr(addr)) => Ok(Some(Self::Device(addr))),
            None => Ok(None),
        }
    }

    fn device(&self) -> Option<crate::model::ids::DevicePtr> {
        match self {
            Self::Device(a) => Some(device_ptr(*a)),
            Self::PageLocked(_) | Self::Staged(_) => None,
        }
    }

    /// # Safety
    /// A page-locked side must still be the driver's, `len` bytes long; a staged side is
    /// a source, `len` bytes long.
    unsafe fn side(&self, len: usize, write: bool) -> HostOrDevice<'_> {
        match self {
            Self::Device(a) => HostOrDevice::Device(device_ptr(*a)),
            Self::Staged(buf) => HostOrDevice::Host(HostBytes::from_slice(&buf[..len])),
            // Safety: this function's contract.
            Self::PageLocked(a) if write => {
                HostOrDevice::Host(unsafe { HostBytes::writable(*a as *mut u8, len) })
            }
            // Safety: this function's contract.
            Self::PageLocked(a) => {
                HostOrDevice::Host(unsafe { HostBytes::readable(*a as *const u8, len) })
            }
        }
    }
}

/// An async copy: a graph node on a capturing stream (`async_op`); else queued on the
/// stream's worker when both sides allow it (`queue_copy`, when `queueable`); else run
/// now, in the stream's order (`async_op` again).
///
/// # Safety
/// Host sides are the program's, valid as cuda.h requires of an async copy.
unsafe fn async_copy(
    s: CUstream,
    dst: u64,
    src: u64,
    n: usize,
    queueable: bool,
    what: impl FnOnce() -> String,
    body: impl Fn() -> CuResult<()> + Send + Sync + 'static,
) -> CuResult<()> {
    // Safety: the caller's contract.
    if queueable && !capturing(s)? && unsafe { queue_copy(s, dst, src, n) }? {
        return Ok(());
    }
    let what = || super::graphs::Captured {
        what: what(),
        shape: crate::model::graphs::Shape::Copy {
            src: super::graphs::operand(src, None),
            dst: super::graphs::operand(dst, None),
            bytes: n,
        },
        given: super::graphs::captured_copy(src, dst, n),
    };
    async_op(s, what, body)
}

/// A captured cuMemsetD*Async's node: `n` elements of `size` bytes at `dst`.
fn fill_shape(dst: CUdevicePtr, size: u32, n: usize) -> crate::model::graphs::Shape {
    crate::model::graphs::Shape::Fill {
        dst: super::graphs::operand(dst, Some(2)),
        element_size: size,
        width: n,
        height: 1,
        pitch: 0,
    }
}

/// A synchronous cuMemcpyHtoD from pageable host memory, as CUDA's "API synchronization
/// behavior" describes it: "a stream sync is performed before the copy is initiated" (the
/// legacy stream's order: the H200 returned from a 4-byte copy only after a blocking
/// stream's kernel, probe async_device, sync-copy-vs-blocking-stream), and the call "will
/// return once the pageable buffer has been copied to the staging memory for DMA
/// transfer to device memory, but the DMA to final destination may not have completed".
/// Under a deferring schedule (`stream_queues::deferred`) the source is staged and the
/// bytes land later in the legacy stream's order (`queue_copy`), so that work on a
/// non-blocking stream with nothing ordering it reads them stale; under `eager` they land
/// in the call, once the stream sync is done (nothing is pending then). False where the
/// copy runs in place: eager, inside an async export or a graph node (in its stream's
/// order already), a page-locked source ("synchronous with respect to the host"), a
/// managed or host destination, a source over the staging limit.
///
/// # Safety
/// `src` is readable for `n` bytes.
unsafe fn staged_htod(dst: CUdevicePtr, src: *const c_void, n: usize) -> CuResult<bool> {
    use crate::model::stream_queues::deferred;
    if !deferred() || super::IN_STREAM_ORDER.get() || src.is_null() || n == 0 {
        return Ok(false);
    }
    if n > STAGING_LIMIT {
        return Ok(false);
    }
    let d = drv()?;
    let pageable = d.page_locked(src as u64, n as u64).is_none()
        && !d.is_device_address(device_ptr(src as u64));
    if !pageable || !d.stream_ordered_destination(device_ptr(dst)) {
        return Ok(false);
    }
    // The stream sync (and the capture checks of a synchronous copy).
    legacy_order()?;
    // A blocking copy empties the printf FIFO, as the synchronising calls do.
    d.blocking_copy_flush();
    // Safety: the caller's contract.
    unsafe { queue_copy(std::ptr::null_mut(), dst, src as u64, n) }
}

/// A cuMemsetD8/16/32Async queued on its stream (`Driver::memset_queued_on`): false on a
/// capturing stream (a node), and where it runs in the call after the work it follows.
fn memset_async_queued(
    s: CUstream,
    dst: CUdevicePtr,
    pattern: Pattern,
    n: usize,
) -> CuResult<bool> {
    super::check_stream(s)?;
    if capturing(s)? {
        return Ok(false);
    }
    drv()?.capture_check_legacy(s.key())?;
    drv()?.memset_queued_on(s.key(), device_ptr(dst), pattern, n as u64)
}

/// A synchronous cuMemsetD8/16/32: queued on the legacy stream when work it must follow
/// is pending (`Driver::memset_queued`), else run now; run now too where an async export
/// or a graph node runs it already in its stream's order.
fn memset_sync(dst: CUdevicePtr, pattern: Pattern, n: usize) -> CuResult<()> {
    let d = drv()?;
    if !super::IN_STREAM_ORDER.get() {
        d.capture_check_unsafe("a synchronous copy or memset")?;
        d.capture_check_legacy(crate::model::ids::StreamId::NULL)?;
        if d.memset_queued(device_ptr(dst), pattern, n as u64)? {
            return Ok(());
        }
    }
    legacy_order()?;
    d.memset(device_ptr(dst), pattern, n as u64)
}

/// Queues an async copy on `s` when its sides allow it (device or page-locked memory, or
/// a pageable source to the device, staged): false when the caller must copy in place.
///
/// # Safety
/// Host sides are the program's, valid as cuda.h requires of an async copy.
unsafe fn queue_copy(s: CUstream, dst: u64, src: u64, n: usize) -> CuResult<bool> {
    let d = drv()?;
    super::check_stream(s)?;
    let to = QueuedSide::of(d, dst, n)?;
    let from = match (&to, QueuedSide::of(d, src, n)?) {
        // Pageable host memory to the device (never host to host: that is synchronous).
        (Some(QueuedSide::Device(_)), None) if src != 0 && n <= STAGING_LIMIT => {
            d.check_copy_on(d.ctx_device(None)?, device_ptr_of(&to), None, n as u64)?;
            // Safety: the caller's contract.
            Some(unsafe { stage(src, n) })
        }
        (_, from) => from,
    };
    let (Some(to), Some(from)) = (to, from) else {
        return Ok(false);
    };
    // "For transfers from any host memory to any host memory, the function is fully
    // synchronous with respect to the host" (the same documentation).
    if matches!(
        (&to, &from),
        (QueuedSide::PageLocked(_), QueuedSide::PageLocked(_))
    ) {
        return Ok(false);
    }
    let device = d.ctx_device(None)?;
    d.check_copy_on(device, to.device(), from.device(), n as u64)?;
    d.enqueue_work(
        s.key(),
        "cuMemcpyAsync",
        Box::new(move || {
            // Safety: page-locked sides outlive the queued work (see QueuedSide), and
            // their lengths were checked when the copy was issued.
            let (dst, src) = unsafe { (to.side(n, true), from.side(n, false)) };
            // Checked when issued: what fails now was freed meanwhile (on a GPU, a fault).
            if let Err(e) = d.copy_on(device, dst, src, n as u64, false) {
                crate::diagnostics::warn(
                    "cuMemcpyAsync",
                    &format!("a queued copy failed: {}", e.message),
                );
            } else if let QueuedSide::PageLocked(a) = to {
                // What the host must not store to before it synchronises with the copy.
                if crate::model::ordering::enabled() {
                    use crate::model::ordering::Touch;
                    d.note_host_visible_writes(&[(a, a + n as u64, Touch::Write)], false);
                }
            }
        }),
    )?;
    Ok(true)
}

fn device_ptr_of(side: &Option<QueuedSide>) -> Option<crate::model::ids::DevicePtr> {
    side.as_ref().and_then(QueuedSide::device)
}

/// A device address of a copy: page-locked host memory has the same address on the
/// device as on the host (unified addressing), and is copied as host memory.
fn device_side(
    d: &Driver,
    dptr: CUdevicePtr,
    len: usize,
    write: bool,
) -> CuResult<HostOrDevice<'static>> {
    Ok(match d.page_locked(dptr, len as u64) {
        Some(fits) => {
            fits?;
            let p = dptr as *mut u8;
            // Safety: the driver holds this page-locked range (allocated or registered,
            // so mapped and, for a write, writable) and `fits` says the copy stays in it.
            HostOrDevice::Host(unsafe {
                if write {
                    HostBytes::writable(p, len)
                } else {
                    HostBytes::readable(p, len)
                }
            })
        }
        None => HostOrDevice::Device(device_ptr(dptr)),
    })
}

/// cuMemcpy on unified addresses: either side may be host or device memory; NULL is
/// refused whatever the length.
///
/// # Safety
/// As `host_side`'s.
unsafe fn unified_side<'a>(
    d: &Driver,
    p: u64,
    len: usize,
    write: bool,
    what: &str,
) -> CuResult<HostOrDevice<'a>> {
    let p = given(p, what)?;
    // Safety: this function's contract.
    unsafe { host_side(d, p as *const c_void, len, write, what) }
}
