//! Memory management (cuda.h's group CUDA_MEM): cuMemAlloc and cuMemFree, memory info,
//! address ranges, copies and memsets (with their per-thread default stream variants),
//! and the PCI bus ids cuda.h files here.

use super::{copy_c_string, stream, zero_on_failure, CUdevicePtr, Mock};
use crate::boundary::{ctx_key, drv, input, out};
use crate::diagnostics::{created, Made};
use crate::model::copies2d::Plane;
use crate::model::error::*;
use crate::model::{HostOrDevice, Pattern};
use cumock_abi::consts::{CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST};
use cumock_abi::*;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

impl MemoryApi for Mock {
    unsafe fn cuDeviceGetPCIBusId(
        pci_bus_id: *mut c_char,
        len: c_int,
        dev: CUdevice,
    ) -> CuResult<()> {
        let d = drv()?.device(dev)?;
        if pci_bus_id.is_null() || len <= 0 {
            return Err(invalid("pciBusId is NULL or len is not positive"));
        }
        copy_c_string(&d.pci_bus_id, pci_bus_id, len as usize);
        Ok(())
    }

    unsafe fn cuDeviceGetByPCIBusId(dev: *mut CUdevice, pci_bus_id: *const c_char) -> CuResult<()> {
        let d = drv()?;
        if pci_bus_id.is_null() {
            return Err(invalid("pciBusId is NULL"));
        }
        // Safety: a non-NULL C string, per cuda.h.
        let want = unsafe { CStr::from_ptr(pci_bus_id) }
            .to_string_lossy()
            .to_ascii_uppercase();
        let found = d.profile.devices.iter().position(|p| {
            let id = p.pci_bus_id.to_ascii_uppercase();
            id == want
                || id.ends_with(&format!(":{want}"))
                || id.trim_start_matches('0') == want.trim_start_matches('0')
        });
        match found {
            Some(i) => out(dev, i as CUdevice),
            None => Err(invalid_device(format!("no device at PCI bus id {want}"))),
        }
    }

    unsafe fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) -> CuResult<()> {
        let d = drv()?;
        if free.is_null() || total.is_null() {
            return Err(invalid("free or total is NULL"));
        }
        let (f, t) = match d.mem_info() {
            Ok(info) => info,
            Err(e) => {
                // The H200 zeroes both when it fails (no current context, say).
                out(free, 0)?;
                out(total, 0)?;
                return Err(e);
            }
        };
        out(free, f as usize)?;
        out(total, t as usize)
    }

    unsafe fn cuMemAlloc_v2(dptr: *mut CUdevicePtr, bytesize: usize) -> CuResult<()> {
        let d = drv()?;
        if dptr.is_null() {
            return Err(invalid("dptr is NULL"));
        }
        zero_on_failure(
            dptr,
            d.mem_alloc(bytesize as u64)
                .map(|p| created(Made::Reservation, p)),
        )
    }

    unsafe fn cuMemFree_v2(dptr: CUdevicePtr) -> CuResult<()> {
        drv()?.mem_free(dptr)
    }

    unsafe fn cuMemGetAddressRange_v2(
        pbase: *mut CUdevicePtr,
        psize: *mut usize,
        dptr: CUdevicePtr,
    ) -> CuResult<()> {
        let d = drv()?;
        d.ctx_device(None)?;
        let (b, s) = match d.address_range(dptr) {
            Ok(found) => found,
            Err(e) => {
                // The H200 zeroes what it was asked for when nothing is found.
                if !pbase.is_null() {
                    out(pbase, 0)?;
                }
                if !psize.is_null() {
                    out(psize, 0)?;
                }
                return Err(e);
            }
        };
        if !pbase.is_null() {
            out(pbase, b)?;
        }
        if !psize.is_null() {
            out(psize, s as usize)?;
        }
        Ok(())
    }

    unsafe fn cuMemcpyHtoD_v2(dst: CUdevicePtr, src: *const c_void, n: usize) -> CuResult<()> {
        let d = drv()?;
        unsafe_copy(d, device_side(d, dst, n)?, host_side(d, src, n)?, n as u64)
    }

    unsafe fn cuMemcpyDtoH_v2(dst: *mut c_void, src: CUdevicePtr, n: usize) -> CuResult<()> {
        let d = drv()?;
        unsafe_copy(d, host_side(d, dst, n)?, device_side(d, src, n)?, n as u64)
    }

    unsafe fn cuMemcpyDtoD_v2(dst: CUdevicePtr, src: CUdevicePtr, n: usize) -> CuResult<()> {
        let d = drv()?;
        unsafe_copy(
            d,
            device_side(d, dst, n)?,
            device_side(d, src, n)?,
            n as u64,
        )
    }

    unsafe fn cuMemcpy(dst: CUdevicePtr, src: CUdevicePtr, n: usize) -> CuResult<()> {
        let d = drv()?;
        unsafe_copy(d, unified_side(d, dst)?, unified_side(d, src)?, n as u64)
    }

    unsafe fn cuMemcpyHtoDAsync_v2(
        dst: CUdevicePtr,
        src: *const c_void,
        n: usize,
        s: CUstream,
    ) -> CuResult<()> {
        stream(s)?;
        Self::cuMemcpyHtoD_v2(dst, src, n)
    }

    unsafe fn cuMemcpyDtoHAsync_v2(
        dst: *mut c_void,
        src: CUdevicePtr,
        n: usize,
        s: CUstream,
    ) -> CuResult<()> {
        stream(s)?;
        Self::cuMemcpyDtoH_v2(dst, src, n)
    }

    unsafe fn cuMemcpyDtoDAsync_v2(
        dst: CUdevicePtr,
        src: CUdevicePtr,
        n: usize,
        s: CUstream,
    ) -> CuResult<()> {
        stream(s)?;
        Self::cuMemcpyDtoD_v2(dst, src, n)
    }

    unsafe fn cuMemcpyAsync(
        dst: CUdevicePtr,
        src: CUdevicePtr,
        n: usize,
        s: CUstream,
    ) -> CuResult<()> {
        stream(s)?;
        Self::cuMemcpy(dst, src, n)
    }

    // Per-thread default stream variants: the mock runs everything in order, so they are
    // the same operations.
    unsafe fn cuMemcpyHtoD_v2_ptds(dst: CUdevicePtr, src: *const c_void, n: usize) -> CuResult<()> {
        Self::cuMemcpyHtoD_v2(dst, src, n)
    }

    unsafe fn cuMemcpyDtoH_v2_ptds(dst: *mut c_void, src: CUdevicePtr, n: usize) -> CuResult<()> {
        Self::cuMemcpyDtoH_v2(dst, src, n)
    }

    unsafe fn cuMemcpyDtoD_v2_ptds(dst: CUdevicePtr, src: CUdevicePtr, n: usize) -> CuResult<()> {
        Self::cuMemcpyDtoD_v2(dst, src, n)
    }

    unsafe fn cuMemcpy_ptds(dst: CUdevicePtr, src: CUdevicePtr, n: usize) -> CuResult<()> {
        Self::cuMemcpy(dst, src, n)
    }

    unsafe fn cuMemcpyHtoDAsync_v2_ptsz(
        dst: CUdevicePtr,
        src: *const c_void,
        n: usize,
        s: CUstream,
    ) -> CuResult<()> {
        Self::cuMemcpyHtoDAsync_v2(dst, src, n, s)
    }

    unsafe fn cuMemcpyDtoHAsync_v2_ptsz(
        dst: *mut c_void,
        src: CUdevicePtr,
        n: usize,
        s: CUstream,
    ) -> CuResult<()> {
        Self::cuMemcpyDtoHAsync_v2(dst, src, n, s)
    }

    unsafe fn cuMemcpyDtoDAsync_v2_ptsz(
        dst: CUdevicePtr,
        src: CUdevicePtr,
        n: usize,
        s: CUstream,
    ) -> CuResult<()> {
        Self::cuMemcpyDtoDAsync_v2(dst, src, n, s)
    }

    unsafe fn cuMemcpyAsync_ptsz(
        dst: CUdevicePtr,
        src: CUdevicePtr,
        n: usize,
        s: CUstream,
    ) -> CuResult<()> {
        Self::cuMemcpyAsync(dst, src, n, s)
    }

    unsafe fn cuMemsetD8_v2(dst: CUdevicePtr, v: u8, n: usize) -> CuResult<()> {
        drv()?.memset(dst, Pattern::D8(v), n as u64)
    }

    unsafe fn cuMemsetD16_v2(dst: CUdevicePtr, v: u16, n: usize) -> CuResult<()> {
        drv()?.memset(dst, Pattern::D16(v), n as u64)
    }

    unsafe fn cuMemsetD32_v2(dst: CUdevicePtr, v: u32, n: usize) -> CuResult<()> {
        drv()?.memset(dst, Pattern::D32(v), n as u64)
    }

    unsafe fn cuMemsetD8Async(dst: CUdevicePtr, v: u8, n: usize, s: CUstream) -> CuResult<()> {
        stream(s)?;
        Self::cuMemsetD8_v2(dst, v, n)
    }

    unsafe fn cuMemsetD16Async(dst: CUdevicePtr, v: u16, n: usize, s: CUstream) -> CuResult<()> {
        stream(s)?;
        Self::cuMemsetD16_v2(dst, v, n)
    }

    unsafe fn cuMemsetD32Async(dst: CUdevicePtr, v: u32, n: usize, s: CUstream) -> CuResult<()> {
        stream(s)?;
        Self::cuMemsetD32_v2(dst, v, n)
    }

    unsafe fn cuMemsetD8_v2_ptds(dst: CUdevicePtr, v: u8, n: usize) -> CuResult<()> {
        Self::cuMemsetD8_v2(dst, v, n)
    }

    unsafe fn cuMemsetD16_v2_ptds(dst: CUdevicePtr, v: u16, n: usize) -> CuResult<()> {
        Self::cuMemsetD16_v2(dst, v, n)
    }

    unsafe fn cuMemsetD32_v2_ptds(dst: CUdevicePtr, v: u32, n: usize) -> CuResult<()> {
        Self::cuMemsetD32_v2(dst, v, n)
    }

    unsafe fn cuMemsetD8Async_ptsz(dst: CUdevicePtr, v: u8, n: usize, s: CUstream) -> CuResult<()> {
        Self::cuMemsetD8Async(dst, v, n, s)
    }

    unsafe fn cuMemsetD16Async_ptsz(
        dst: CUdevicePtr,
        v: u16,
        n: usize,
        s: CUstream,
    ) -> CuResult<()> {
        Self::cuMemsetD16Async(dst, v, n, s)
    }

    unsafe fn cuMemsetD32Async_ptsz(
        dst: CUdevicePtr,
        v: u32,
        n: usize,
        s: CUstream,
    ) -> CuResult<()> {
        Self::cuMemsetD32Async(dst, v, n, s)
    }

    // ---- page-locked host memory, peer copies, pitched (2D) memory, managed memory ----

    unsafe fn cuMemAllocManaged(
        dptr: *mut CUdevicePtr,
        bytesize: usize,
        flags: c_uint,
    ) -> CuResult<()> {
        let d = drv()?;
        if dptr.is_null() {
            return Err(invalid("dptr is NULL"));
        }
        zero_on_failure(
            dptr,
            d.mem_alloc_managed(bytesize as u64, flags)
                .map(|p| created(Made::Reservation, p)),
        )
    }

    unsafe fn cuMemAllocHost_v2(pp: *mut *mut c_void, bytesize: usize) -> CuResult<()> {
        Self::cuMemHostAlloc(pp, bytesize, 0)
    }

    unsafe fn cuMemHostAlloc(pp: *mut *mut c_void, bytesize: usize, flags: c_uint) -> CuResult<()> {
        let d = drv()?;
        if pp.is_null() {
            return Err(invalid("pp is NULL"));
        }
        match d.host_alloc(bytesize as u64, flags) {
            Ok(p) => out(pp, p as *mut c_void),
            Err(e) => {
                // Observed: the H200 writes NULL when it fails.
                out(pp, std::ptr::null_mut())?;
                Err(e)
            }
        }
    }

    unsafe fn cuMemFreeHost(p: *mut c_void) -> CuResult<()> {
        drv()?.host_free(p as u64)
    }

    unsafe fn cuMemHostGetFlags(pflags: *mut c_uint, p: *mut c_void) -> CuResult<()> {
        let d = drv()?;
        if pflags.is_null() {
            return Err(invalid("pFlags is NULL"));
        }
        out(pflags, d.host_flags(p as u64)?)
    }

    unsafe fn cuMemHostGetDevicePointer_v2(
        pdptr: *mut CUdevicePtr,
        p: *mut c_void,
        flags: c_uint,
    ) -> CuResult<()> {
        let d = drv()?;
        if pdptr.is_null() {
            return Err(invalid("pdptr is NULL"));
        }
        zero_on_failure(pdptr, d.host_device_pointer(p as u64, flags))
    }

    unsafe fn cuMemHostRegister_v2(p: *mut c_void, bytesize: usize, flags: c_uint) -> CuResult<()> {
        drv()?.host_register(p as u64, bytesize as u64, flags)
    }

    unsafe fn cuMemHostUnregister(p: *mut c_void) -> CuResult<()> {
        drv()?.host_unregister(p as u64)
    }

    unsafe fn cuMemcpyPeer(
        dst: CUdevicePtr,
        dst_ctx: CUcontext,
        src: CUdevicePtr,
        src_ctx: CUcontext,
        n: usize,
    ) -> CuResult<()> {
        let d = drv()?;
        // Observed: NULL stands for the current context on either side. With every
        // device's memory in one address space, the copy is the DtoD copy once both
        // contexts are known to be live.
        for c in [dst_ctx, src_ctx] {
            if let Some(k) = ctx_key(c) {
                d.ctx_device(Some(k))?;
            }
        }
        Self::cuMemcpyDtoD_v2(dst, src, n)
    }

    unsafe fn cuMemcpyPeerAsync(
        dst: CUdevicePtr,
        dst_ctx: CUcontext,
        src: CUdevicePtr,
        src_ctx: CUcontext,
        n: usize,
        s: CUstream,
    ) -> CuResult<()> {
        stream(s)?;
        Self::cuMemcpyPeer(dst, dst_ctx, src, src_ctx, n)
    }

    unsafe fn cuMemcpyPeer_ptds(
        dst: CUdevicePtr,
        dst_ctx: CUcontext,
        src: CUdevicePtr,
        src_ctx: CUcontext,
        n: usize,
    ) -> CuResult<()> {
        Self::cuMemcpyPeer(dst, dst_ctx, src, src_ctx, n)
    }

    unsafe fn cuMemcpyPeerAsync_ptsz(
        dst: CUdevicePtr,
        dst_ctx: CUcontext,
        src: CUdevicePtr,
        src_ctx: CUcontext,
        n: usize,
        s: CUstream,
    ) -> CuResult<()> {
        Self::cuMemcpyPeerAsync(dst, dst_ctx, src, src_ctx, n, s)
    }

    unsafe fn cuMemAllocPitch_v2(
        dptr: *mut CUdevicePtr,
        ppitch: *mut usize,
        width: usize,
        height: usize,
        element_size: c_uint,
    ) -> CuResult<()> {
        let d = drv()?;
        if dptr.is_null() || ppitch.is_null() {
            return Err(invalid("dptr or pPitch is NULL"));
        }
        match d.mem_alloc_pitch(width as u64, height as u64, element_size) {
            Ok((p, pitch)) => {
                out(ppitch, pitch as usize)?;
                out(dptr, created(Made::Reservation, p))
            }
            Err(e) => {
                // Observed: the H200 zeroes both when it refuses.
                out(dptr, 0)?;
                out(ppitch, 0)?;
                Err(e)
            }
        }
    }

    unsafe fn cuMemcpy2D_v2(copy: *const CUDA_MEMCPY2D) -> CuResult<()> {
        let d = drv()?;
        let c = input(copy, "pCopy")?;
        copy_2d(d, &c)
    }

    unsafe fn cuMemcpy2DUnaligned_v2(copy: *const CUDA_MEMCPY2D) -> CuResult<()> {
        Self::cuMemcpy2D_v2(copy)
    }

    unsafe fn cuMemcpy2DAsync_v2(copy: *const CUDA_MEMCPY2D, s: CUstream) -> CuResult<()> {
        stream(s)?;
        Self::cuMemcpy2D_v2(copy)
    }

    unsafe fn cuMemcpy2D_v2_ptds(copy: *const CUDA_MEMCPY2D) -> CuResult<()> {
        Self::cuMemcpy2D_v2(copy)
    }

    unsafe fn cuMemcpy2DUnaligned_v2_ptds(copy: *const CUDA_MEMCPY2D) -> CuResult<()> {
        Self::cuMemcpy2D_v2(copy)
    }

    unsafe fn cuMemcpy2DAsync_v2_ptsz(copy: *const CUDA_MEMCPY2D, s: CUstream) -> CuResult<()> {
        Self::cuMemcpy2DAsync_v2(copy, s)
    }

    unsafe fn cuMemsetD2D8_v2(
        dst: CUdevicePtr,
        pitch: usize,
        v: u8,
        w: usize,
        h: usize,
    ) -> CuResult<()> {
        drv()?.memset_2d(dst, pitch as u64, Pattern::D8(v), w as u64, h as u64)
    }

    unsafe fn cuMemsetD2D16_v2(
        dst: CUdevicePtr,
        pitch: usize,
        v: u16,
        w: usize,
        h: usize,
    ) -> CuResult<()> {
        drv()?.memset_2d(dst, pitch as u64, Pattern::D16(v), w as u64, h as u64)
    }

    unsafe fn cuMemsetD2D32_v2(
        dst: CUdevicePtr,
        pitch: usize,
        v: c_uint,
        w: usize,
        h: usize,
    ) -> CuResult<()> {
        drv()?.memset_2d(dst, pitch as u64, Pattern::D32(v), w as u64, h as u64)
    }

    unsafe fn cuMemsetD2D8Async(
        dst: CUdevicePtr,
        pitch: usize,
        v: u8,
        w: usize,
        h: usize,
        s: CUstream,
    ) -> CuResult<()> {
        stream(s)?;
        Self::cuMemsetD2D8_v2(dst, pitch, v, w, h)
    }

    unsafe fn cuMemsetD2D16Async(
        dst: CUdevicePtr,
        pitch: usize,
        v: u16,
        w: usize,
        h: usize,
        s: CUstream,
    ) -> CuResult<()> {
        stream(s)?;
        Self::cuMemsetD2D16_v2(dst, pitch, v, w, h)
    }

    unsafe fn cuMemsetD2D32Async(
        dst: CUdevicePtr,
        pitch: usize,
        v: c_uint,
        w: usize,
        h: usize,
        s: CUstream,
    ) -> CuResult<()> {
        stream(s)?;
        Self::cuMemsetD2D32_v2(dst, pitch, v, w, h)
    }

    unsafe fn cuMemsetD2D8_v2_ptds(
        dst: CUdevicePtr,
        pitch: usize,
        v: u8,
        w: usize,
        h: usize,
    ) -> CuResult<()> {
        Self::cuMemsetD2D8_v2(dst, pitch, v, w, h)
    }

    unsafe fn cuMemsetD2D16_v2_ptds(
        dst: CUdevicePtr,
        pitch: usize,
        v: u16,
        w: usize,
        h: usize,
    ) -> CuResult<()> {
        Self::cuMemsetD2D16_v2(dst, pitch, v, w, h)
    }

    unsafe fn cuMemsetD2D32_v2_ptds(
        dst: CUdevicePtr,
        pitch: usize,
        v: c_uint,
        w: usize,
        h: usize,
    ) -> CuResult<()> {
        Self::cuMemsetD2D32_v2(dst, pitch, v, w, h)
    }

    unsafe fn cuMemsetD2D8Async_ptsz(
        dst: CUdevicePtr,
        pitch: usize,
        v: u8,
        w: usize,
        h: usize,
        s: CUstream,
    ) -> CuResult<()> {
        Self::cuMemsetD2D8Async(dst, pitch, v, w, h, s)
    }

    unsafe fn cuMemsetD2D16Async_ptsz(
        dst: CUdevicePtr,
        pitch: usize,
        v: u16,
        w: usize,
        h: usize,
        s: CUstream,
    ) -> CuResult<()> {
        Self::cuMemsetD2D16Async(dst, pitch, v, w, h, s)
    }

    unsafe fn cuMemsetD2D32Async_ptsz(
        dst: CUdevicePtr,
        pitch: usize,
        v: c_uint,
        w: usize,
        h: usize,
        s: CUstream,
    ) -> CuResult<()> {
        Self::cuMemsetD2D32Async(dst, pitch, v, w, h, s)
    }
}

/// Which side of a copy a pointer the program calls "host" is really on.
fn host_side(d: &crate::model::Driver, p: *const c_void, len: usize) -> CuResult<HostOrDevice> {
    if p.is_null() && len > 0 {
        return Err(invalid("the host pointer is NULL"));
    }
    Ok(if d.is_device_address(p as u64) {
        HostOrDevice::Device(p as u64)
    } else {
        HostOrDevice::Host(p as *mut u8)
    })
}

/// A device address of a copy: page-locked host memory has the same address on the
/// device as on the host (unified addressing), and is copied as host memory.
fn device_side(d: &crate::model::Driver, dptr: CUdevicePtr, len: usize) -> CuResult<HostOrDevice> {
    Ok(match d.page_locked(dptr, len as u64) {
        Some(fits) => {
            fits?;
            HostOrDevice::Host(dptr as *mut u8)
        }
        None => HostOrDevice::Device(dptr),
    })
}

/// cuMemcpy on unified addresses: either side may be host or device memory.
fn unified_side(d: &crate::model::Driver, p: u64) -> CuResult<HostOrDevice> {
    host_side(d, p as *const c_void, 1)
}

/// # Safety
/// Host pointers in `dst`/`src` are valid for `len` bytes, as cuda.h requires.
unsafe fn unsafe_copy(
    d: &crate::model::Driver,
    dst: HostOrDevice,
    src: HostOrDevice,
    len: u64,
) -> CuResult<()> {
    // Safety: this function's own contract, passed on from the program's.
    unsafe { d.copy(dst, src, len) }
}

const CU_MEMORYTYPE_ARRAY: u32 = 3;
const CU_MEMORYTYPE_UNIFIED: u32 = 4;

/// One side of a cuMemcpy2D, from its memory type and fields, moved to its first byte.
#[allow(clippy::too_many_arguments)]
fn plane(
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
    let start = match memory_type {
        CU_MEMORYTYPE_HOST => host_side(d, host.wrapping_byte_add(offset), extent)?,
        CU_MEMORYTYPE_DEVICE => device_side(d, device.wrapping_add(offset as u64), extent)?,
        CU_MEMORYTYPE_UNIFIED => {
            match d.page_locked(device.wrapping_add(offset as u64), extent as u64) {
                Some(_) => device_side(d, device.wrapping_add(offset as u64), extent)?,
                None => unified_side(d, device.wrapping_add(offset as u64))?,
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
