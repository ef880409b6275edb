//! Pitched (2D) memory over `model::copies2d`: cuMemAllocPitch, cuMemcpy2D,
//! cuMemcpy2DUnaligned, cuMemcpy2DAsync, cuMemsetD2D8/16/32 and their Async forms, with
//! the planes of a CUDA_MEMCPY2D and the queueing of an async 2D copy (`textures.rs`
//! copies the 2D copies whose side is a CUDA array). cuda.h files them under
//! `MemoryApi`, whose methods (exports/mod.rs) call these.

use super::copies::STAGING_LIMIT;
use super::textures;
use super::{capturing, legacy_order, stream, CUdevicePtr};
use crate::boundary::{device_ptr, drv, given, host_bytes, input, Handle};
use crate::diagnostics::{created, Made};
use crate::model::copies2d::{Plane, PlaneStart};
use crate::model::error::*;
use crate::model::{HostBytes, Pattern};
use cumock_abi::consts::{CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST};
use cumock_abi::*;
use std::ffi::{c_uint, c_void};

emulate! {
    pub(super) fn cuMemAllocPitch_v2(d; dptr, ppitch, width, height, element_size) {
        match d.mem_alloc_pitch(width as u64, height as u64, element_size) {
            Ok((p, pitch)) => {
                ppitch.write(pitch as usize)?;
                dptr.write(created(Made::Reservation, p))
            }
            Err(e) => {
                // Observed: the H200 zeroes both when it refuses.
                dptr.write(0)?;
                ppitch.write(0)?;
                Err(e)
            }
        }
    }
}

pub(super) unsafe fn cuMemcpy2D_v2(copy: *const CUDA_MEMCPY2D) -> CuResult<()> {
    legacy_order()?;
    let d = drv()?;
    let c = input(copy, "pCopy")?;
    if textures::has_array(&c) {
        return textures::copy_2d_arrays(d, &c);
    }
    copy_2d(d, &c)
}

pub(super) unsafe fn cuMemcpy2DUnaligned_v2(copy: *const CUDA_MEMCPY2D) -> CuResult<()> {
    cuMemcpy2D_v2(copy)
}

pub(super) unsafe fn cuMemcpy2DAsync_v2(copy: *const CUDA_MEMCPY2D, s: CUstream) -> CuResult<()> {
    let c = input(copy, "pCopy")?;
    super::check_stream(s)?;
    // Safety: cuda.h's contract on the host sides of an async copy.
    if !capturing(s)? {
        // Safety: as above.
        let queued = unsafe {
            if textures::has_array(&c) {
                textures::queue_copy_2d_arrays(s, &c)?
            } else {
                queue_copy_2d(s, &c)?
            }
        };
        if queued {
            return Ok(());
        }
    }
    let _order = stream(s)?;
    cuMemcpy2D_v2(copy)
}

pub(super) unsafe fn cuMemsetD2D8_v2(
    dst: CUdevicePtr,
    pitch: usize,
    v: u8,
    w: usize,
    h: usize,
) -> CuResult<()> {
    memset_2d(dst, pitch, Pattern::D8(v), w, h)
}

pub(super) unsafe fn cuMemsetD2D16_v2(
    dst: CUdevicePtr,
    pitch: usize,
    v: u16,
    w: usize,
    h: usize,
) -> CuResult<()> {
    memset_2d(dst, pitch, Pattern::D16(v), w, h)
}

pub(super) unsafe fn cuMemsetD2D32_v2(
    dst: CUdevicePtr,
    pitch: usize,
    v: c_uint,
    w: usize,
    h: usize,
) -> CuResult<()> {
    memset_2d(dst, pitch, Pattern::D32(v), w, h)
}

pub(super) unsafe fn cuMemsetD2D8Async(
    dst: CUdevicePtr,
    pitch: usize,
    v: u8,
    w: usize,
    h: usize,
    s: CUstream,
) -> CuResult<()> {
    memset_2d_async(dst, pitch, Pattern::D8(v), w, h, s)
}

pub(super) unsafe fn cuMemsetD2D16Async(
    dst: CUdevicePtr,
    pitch: usize,
    v: u16,
    w: usize,
    h: usize,
    s: CUstream,
) -> CuResult<()> {
    memset_2d_async(dst, pitch, Pattern::D16(v), w, h, s)
}

pub(super) unsafe fn cuMemsetD2D32Async(
    dst: CUdevicePtr,
    pitch: usize,
    v: c_uint,
    w: usize,
    h: usize,
    s: CUstream,
) -> CuResult<()> {
    memset_2d_async(dst, pitch, Pattern::D32(v), w, h, s)
}

/// cuMemsetD2D8/16/32: after the legacy stream's work, in the call.
fn memset_2d(dst: CUdevicePtr, pitch: usize, pattern: Pattern, w: usize, h: usize) -> CuResult<()> {
    legacy_order()?;
    drv()?.memset_2d(dst, pitch as u64, pattern, w as u64, h as u64)
}

/// cuMemsetD2D8/16/32Async: queued behind pending work, else in the call in the stream's
/// order.
fn memset_2d_async(
    dst: CUdevicePtr,
    pitch: usize,
    pattern: Pattern,
    w: usize,
    h: usize,
    s: CUstream,
) -> CuResult<()> {
    if memset_2d_async_queued(s, dst, pitch, pattern, w, h)? {
        return Ok(());
    }
    let _order = stream(s)?;
    memset_2d(dst, pitch, pattern, w, h)
}

/// A cuMemsetD2D8/16/32Async queued on its stream (`Driver::memset_2d_queued_on`), as
/// `memset_async_queued` queues the 1D ones.
fn memset_2d_async_queued(
    s: CUstream,
    dst: CUdevicePtr,
    pitch: usize,
    pattern: Pattern,
    w: usize,
    h: usize,
) -> CuResult<bool> {
    super::check_stream(s)?;
    if capturing(s)? {
        return Ok(false);
    }
    drv()?.capture_check_legacy(s.key())?;
    drv()?.memset_2d_queued_on(s.key(), dst, pitch as u64, pattern, w as u64, h as u64)
}

/// One side of a queued 2D copy, as a worker may hold it.
#[derive(Clone)]
enum QueuedPlane {
    Device(u64),
    /// Page-locked host memory (see `QueuedSide::PageLocked`).
    PageLocked(u64),
    /// The source's rows read when the copy was issued, `width` bytes apart.
    Staged(std::sync::Arc<[u8]>),
}

impl QueuedPlane {
    fn plane(&self, pitch: u64) -> Plane {
        match self {
            Self::Device(a) => Plane {
                start: PlaneStart::Device(*a),
                pitch,
            },
            Self::PageLocked(a) => Plane {
                start: PlaneStart::Host(*a as *mut u8),
                pitch,
            },
            Self::Staged(buf) => Plane {
                start: PlaneStart::Host(buf.as_ptr().cast_mut()),
                pitch,
            },
        }
    }
}

/// A cuMemcpy2DAsync between linear memory queued on `s`, as `queue_copy` queues a 1D
/// one: device and page-locked planes as they are, a pageable source to the device
/// staged (its rows read now); false where the caller must copy in place (a pageable
/// destination, host to host, a source over the staging limit).
///
/// # Safety
/// The host planes of `c` are valid for their extent, as cuda.h requires.
unsafe fn queue_copy_2d(s: CUstream, c: &CUDA_MEMCPY2D) -> CuResult<bool> {
    let d = drv()?;
    let (w, h) = (c.width_in_bytes, c.height);
    let extent = |pitch: usize| h.saturating_sub(1).saturating_mul(pitch).saturating_add(w);
    let src = plane(
        d,
        "source",
        c.src_memory_type,
        c.src_host,
        c.src_device,
        c.src_x_in_bytes,
        c.src_y,
        c.src_pitch,
        extent(c.src_pitch),
    )?;
    let dst = plane(
        d,
        "destination",
        c.dst_memory_type,
        c.dst_host,
        c.dst_device,
        c.dst_x_in_bytes,
        c.dst_y,
        c.dst_pitch,
        extent(c.dst_pitch),
    )?;
    // Each side as a worker may hold it: None for pageable host memory, and for a
    // page-locked range the copy runs past (which the copy in place reports).
    let queued = |p: &Plane, pitch: usize| match p.start {
        PlaneStart::Device(a) => Some(QueuedPlane::Device(a)),
        PlaneStart::Host(a) => match d.page_locked(a as u64, extent(pitch) as u64) {
            Some(Ok(())) => Some(QueuedPlane::PageLocked(a as u64)),
            _ => None,
        },
    };
    let pageable = |p: &Plane| match p.start {
        PlaneStart::Host(a) => d.page_locked(a as u64, 1).is_none(),
        PlaneStart::Device(_) => false,
    };
    let to = queued(&dst, c.dst_pitch);
    let from = match (&to, queued(&src, c.src_pitch)) {
        // A pageable source to the device is staged: read now, checked first so that a
        // refused copy reads nothing.
        (Some(QueuedPlane::Device(_)), None)
            if pageable(&src) && w.saturating_mul(h) <= STAGING_LIMIT =>
        {
            d.check_copy_2d(&dst, &src, w as u64, h as u64)?;
            // Safety: the caller's contract.
            Some(unsafe { stage_rows(&src, c.src_pitch, w, h) })
        }
        // Host to host is synchronous.
        (Some(QueuedPlane::PageLocked(_)), Some(QueuedPlane::PageLocked(_))) => None,
        (_, from) => from,
    };
    let (Some(to), Some(from)) = (to, from) else {
        return Ok(false);
    };
    let src_pitch = match from {
        QueuedPlane::Staged(_) => w as u64,
        _ => c.src_pitch as u64,
    };
    let dst_pitch = c.dst_pitch as u64;
    let device = d.ctx_device(None)?;
    d.check_copy_on(device, None, None, 0)?;
    d.check_copy_2d(
        &to.plane(dst_pitch),
        &from.plane(src_pitch),
        w as u64,
        h as u64,
    )?;
    d.enqueue_work(
        s.key(),
        "cuMemcpy2DAsync",
        Box::new(move || {
            let (dst, src) = (to.plane(dst_pitch), from.plane(src_pitch));
            // Safety: page-locked planes outlive the queued work (see QueuedSide), staged
            // rows are the job's own, and the extents were checked when it was issued.
            let r = unsafe { d.copy_2d_rows(Some(device), &dst, &src, w as u64, h as u64) };
            if let Err(e) = r {
                crate::diagnostics::warn(
                    "cuMemcpy2DAsync",
                    &format!("a queued copy failed: {}", e.message),
                );
            }
        }),
    )?;
    Ok(true)
}

/// The rows of a pageable source plane, read now into a buffer of the mock's (see
/// `STAGING_LIMIT`), `width` bytes apart.
///
/// # Safety
/// A host plane, readable for `height` rows of `width` bytes `pitch` apart.
unsafe fn stage_rows(src: &Plane, pitch: usize, width: usize, height: usize) -> QueuedPlane {
    let mut buf = vec![0u8; width * height];
    if let PlaneStart::Host(p) = src.start {
        for (y, row) in buf.chunks_mut(width.max(1)).enumerate().take(height) {
            // Safety: the row lies in the plane's extent (this function's contract).
            let from = unsafe { HostBytes::readable(p.wrapping_add(y * pitch), width) };
            crate::host_bytes::host_to_host(HostBytes::from_mut_slice(row), from, width);
        }
    }
    QueuedPlane::Staged(buf.into())
}

const CU_MEMORYTYPE_ARRAY: u32 = 3;
const CU_MEMORYTYPE_UNIFIED: u32 = 4;

/// One side of a cuMemcpy2D, from its memory type and fields, moved to its first byte.
#[allow(clippy::too_many_arguments)]
pub(super) fn plane(
    d: &crate::model::Driver,
    which: &str,
    memory_type: u32,
    host: *const c_void,
    device: CUdevicePtr,
    x: usize,
    y: usize,
    pitch: usize,
    extent: usize,
) -> CuResult<Plane> {
    let offset = y.saturating_mul(pitch).saturating_add(x);
    let at_device = device.wrapping_add(offset as u64);
    // Page-locked host memory is copied as host memory wherever its address is given.
    let device_start = |a: u64| -> CuResult<PlaneStart> {
        Ok(match d.page_locked(a, extent as u64) {
            Some(fits) => {
                fits?;
                PlaneStart::Host(a as *mut u8)
            }
            None => PlaneStart::Device(a),
        })
    };
    let start = match memory_type {
        CU_MEMORYTYPE_HOST => {
            let p = host.wrapping_byte_add(offset) as u64;
            host_bytes(host, extent, format_args!("the {which}'s host pointer"))?;
            if d.is_device_address(device_ptr(p)) {
                PlaneStart::Device(p)
            } else {
                PlaneStart::Host(p as *mut u8)
            }
        }
        CU_MEMORYTYPE_DEVICE => device_start(at_device)?,
        CU_MEMORYTYPE_UNIFIED => {
            given(device, format_args!("the {which}'s unified address"))?;
            if d.page_locked(at_device, extent as u64).is_some()
                || d.is_device_address(device_ptr(at_device))
            {
                device_start(at_device)?
            } else {
                PlaneStart::Host(at_device as *mut u8)
            }
        }
        CU_MEMORYTYPE_ARRAY => {
            return Err(not_supported(format!(
                "the {which} of cuMemcpy2D is a CUDA array, and the mock does not emulate arrays"
            )))
        }
        other => {
            return Err(invalid(format!(
                "{other} is not a CUmemorytype (the {which}'s memory type)"
            )))
        }
    };
    Ok(Plane {
        start,
        pitch: pitch as u64,
    })
}

/// cuMemcpy2D and its variants.
///
/// # Safety
/// The host sides of `c` are valid for their extent, as cuda.h requires.
unsafe fn copy_2d(d: &crate::model::Driver, c: &CUDA_MEMCPY2D) -> CuResult<()> {
    let (w, h) = (c.width_in_bytes, c.height);
    let extent = |pitch: usize| h.saturating_sub(1).saturating_mul(pitch).saturating_add(w);
    let src = plane(
        d,
        "source",
        c.src_memory_type,
        c.src_host,
        c.src_device,
        c.src_x_in_bytes,
        c.src_y,
        c.src_pitch,
        extent(c.src_pitch),
    )?;
    let dst = plane(
        d,
        "destination",
        c.dst_memory_type,
        c.dst_host,
        c.dst_device,
        c.dst_x_in_bytes,
        c.dst_y,
        c.dst_pitch,
        extent(c.dst_pitch),
    )?;
    // Safety: this function's contract.
    unsafe { d.copy_2d(dst, src, w as u64, h as u64) }
}
