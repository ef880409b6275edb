//! Memory management (cuda.h's group CUDA_MEM): cuMemAlloc and cuMemFree, memory info,
//! address ranges, copies and memsets (with their per-thread default stream variants),
//! and the PCI bus ids cuda.h files here.

use super::textures;
use super::{
    async_op, capturing, copy_c_string, legacy_order, out_pair, stream, CUdevicePtr, Mock,
};
use crate::boundary::{ctx_key, device_ptr, drv, input};
use crate::diagnostics::{created, Made};
use crate::model::copies2d::{Plane, PlaneStart};
use crate::model::error::*;
use crate::model::{Driver, HostBytes, HostOrDevice, Pattern};
use cumock_abi::consts::{CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST};
use cumock_abi::*;
use std::ffi::{c_char, c_uint, c_void};

/// CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING: what an opened event is.
const CU_EVENT_INTERPROCESS_FLAGS: c_uint = 0x4 | 0x2;

impl MemoryApi for Mock {
    emulate! {
        // ---- legacy IPC (model/ipc.rs) ----

        fn cuIpcGetMemHandle(d; handle, dptr) {
            let bytes = d.ipc_get_mem_handle(dptr.get())?;
            handle.write(CUipcMemHandle {
                reserved: bytes.map(|b| b as c_char),
            })
        }

        fn cuIpcOpenMemHandle_v2(d; pdptr, handle, flags) {
            pdptr.write(d.ipc_open_mem_handle(&handle.reserved.map(|b| b as u8), flags)?)
        }

        fn cuIpcCloseMemHandle(d; dptr) {
            d.ipc_close_mem_handle(dptr.get())
        }

        fn cuIpcGetEventHandle(d; handle, event) {
            if event.handle() == 0 {
                return Err(invalid("event is NULL"));
            }
            match d.ipc_get_event_handle(event) {
                Ok(bytes) => handle.write(CUipcEventHandle {
                    reserved: bytes.map(|b| b as c_char),
                }),
                Err((e, zeroed)) => {
                    // Observed: the H200 writes the handle of a live event that is not
                    // interprocess before refusing it.
                    if zeroed {
                        handle.write(CUipcEventHandle { reserved: [0; 64] })?;
                    }
                    Err(e)
                }
            }
        }

        fn cuIpcOpenEventHandle(d; ph, handle) {
            d.ipc_check_event_handle(&handle.reserved.map(|b| b as u8))?;
            // Another process's event. The mock finishes device work before the call that
            // issues it returns, so whatever that process recorded is complete by the time
            // this one can learn of it: an event of this process that is complete stands
            // for it (interprocess events have no timing, as CUDA requires).
            let e = d.event_create(CU_EVENT_INTERPROCESS_FLAGS)?;
            d.ipc_event_created(e);
            ph.write_key(e)
        }

        fn cuDeviceGetPCIBusId(d; pci_bus_id, len, dev) {
            let p = d.device(dev)?;
            if pci_bus_id.is_null() || len <= 0 {
                return Err(invalid("pciBusId is NULL or len is not positive"));
            }
            copy_c_string(&p.pci_bus_id, pci_bus_id, len as usize);
            Ok(())
        }

        // The device is looked for before the out-parameter is checked.
        fn cuDeviceGetByPCIBusId(d; #[late] dev, pci_bus_id) {
            let want = pci_bus_id.to_string_lossy().to_ascii_uppercase();
            let found = d.profile.devices.iter().position(|p| {
                let id = p.pci_bus_id.to_ascii_uppercase();
                id == want
                    || id.ends_with(&format!(":{want}"))
                    || id.trim_start_matches('0') == want.trim_start_matches('0')
            });
            match found {
                Some(i) => dev.write(i as CUdevice),
                None => Err(invalid_device(format!("no device at PCI bus id {want}"))),
            }
        }

        fn cuMemGetInfo_v2(d; free, total) {
            // The H200 zeroes both when it fails (no current context, say).
            let info = d.mem_info().map(|(f, t)| (f as usize, t as usize));
            out_pair(Some(free), Some(total), info, |_| true)
        }

        fn cuMemAlloc_v2(d; dptr, bytesize) {
            d.capture_check_unsafe("cuMemAlloc")?;
            dptr.zero_on_failure(
                d.mem_alloc(bytesize as u64)
                    .map(|p| created(Made::Reservation, p.get())),
            )
        }

        fn cuMemFree_v2(d; dptr) {
            d.mem_free(dptr)
        }

        fn cuMemGetAddressRange_v2(d; pbase, psize, dptr) {
            d.ctx_device(None)?;
            // The H200 zeroes what it was asked for when nothing is found.
            let found = d.address_range(dptr).map(|(b, s)| (b.get(), s as usize));
            out_pair(pbase, psize, found, |_| true)
        }

        // ---- page-locked host memory, pitched memory, managed memory ----

        fn cuMemAllocManaged(d; dptr, bytesize, flags) {
            dptr.zero_on_failure(
                d.mem_alloc_managed(bytesize as u64, flags)
                    .map(|p| created(Made::Reservation, p)),
            )
        }

        fn cuMemHostAlloc(d; pp, bytesize, flags) {
            match d.host_alloc(bytesize as u64, flags) {
                Ok(p) => pp.write(p as *mut c_void),
                Err(e) => {
                    // Observed: the H200 writes NULL when it fails.
                    pp.write(std::ptr::null_mut())?;
                    Err(e)
                }
            }
        }

        fn cuMemFreeHost(d; p) {
            d.host_free(p as u64)
        }

        fn cuMemHostGetFlags(d; pflags, p) {
            pflags.write(d.host_flags(p as u64)?)
        }

        fn cuMemHostGetDevicePointer_v2(d; pdptr, p, flags) {
            pdptr.zero_on_failure(d.host_device_pointer(p as u64, flags))
        }

        fn cuMemHostRegister_v2(d; p, bytesize, flags) {
            d.host_register(p as u64, bytesize as u64, flags)
        }

        fn cuMemHostUnregister(d; p) {
            d.host_unregister(p as u64)
        }

        fn cuMemAllocPitch_v2(d; dptr, ppitch, width, height, element_size) {
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

    unsafe fn cuMemcpyHtoD_v2(dst: CUdevicePtr, src: *const c_void, n: usize) -> CuResult<()> {
        // Safety: cuda.h requires `src` readable for n bytes.
        if unsafe { staged_htod(dst, src, n) }? {
            return Ok(());
        }
        legacy_order()?;
        let d = drv()?;
        // Safety: cuda.h requires `src` readable for n bytes.
        let src = unsafe { host_side(d, src, n, false) }?;
        d.copy(device_side(d, dst, n, true)?, src, n as u64)
    }

    unsafe fn cuMemcpyDtoH_v2(dst: *mut c_void, src: CUdevicePtr, n: usize) -> CuResult<()> {
        legacy_order()?;
        let d = drv()?;
        // Safety: cuda.h requires `dst` writable for n bytes.
        let dst = unsafe { host_side(d, dst, n, true) }?;
        d.copy(dst, device_side(d, src, n, false)?, n as u64)
    }

    unsafe fn cuMemcpyDtoD_v2(dst: CUdevicePtr, src: CUdevicePtr, n: usize) -> CuResult<()> {
        legacy_order()?;
        let d = drv()?;
        d.copy(
            device_side(d, dst, n, true)?,
            device_side(d, src, n, false)?,
            n as u64,
        )
    }

    unsafe fn cuMemcpy(dst: CUdevicePtr, src: CUdevicePtr, n: usize) -> CuResult<()> {
        legacy_order()?;
        let d = drv()?;
        // Safety: cuda.h requires a host `dst` writable, and a host `src` readable, for n
        // bytes.
        let dst = unsafe { unified_side(d, dst, n, true) }?;
        let src = unsafe { unified_side(d, src, n, false) }?;
        d.copy(dst, src, n as u64)
    }

    unsafe fn cuMemcpyHtoDAsync_v2(
        dst: CUdevicePtr,
        src: *const c_void,
        n: usize,
        s: CUstream,
    ) -> CuResult<()> {
        let from = src as usize;
        // Safety: the program keeps `src` readable until the copy has run (cuda.h).
        let body = move || unsafe { Self::cuMemcpyHtoD_v2(dst, from as *const c_void, n) };
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

    unsafe fn cuMemcpyDtoHAsync_v2(
        dst: *mut c_void,
        src: CUdevicePtr,
        n: usize,
        s: CUstream,
    ) -> CuResult<()> {
        let to = dst as usize;
        // Safety: the program keeps `dst` writable until the copy has run (cuda.h).
        let body = move || unsafe { Self::cuMemcpyDtoH_v2(to as *mut c_void, src, n) };
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

    unsafe fn cuMemcpyDtoDAsync_v2(
        dst: CUdevicePtr,
        src: CUdevicePtr,
        n: usize,
        s: CUstream,
    ) -> CuResult<()> {
        // Safety: device addresses only, checked when the copy runs.
        let body = move || unsafe { Self::cuMemcpyDtoD_v2(dst, src, n) };
        // Safety: both sides are device addresses, or page-locked memory the driver holds.
        unsafe { async_copy(s, dst, src, n, true, || format!("DtoD {n} bytes"), body) }
    }

    unsafe fn cuMemcpyAsync(
        dst: CUdevicePtr,
        src: CUdevicePtr,
        n: usize,
        s: CUstream,
    ) -> CuResult<()> {
        // Safety: the program keeps host addresses valid until the copy has run (cuda.h).
        let body = move || unsafe { Self::cuMemcpy(dst, src, n) };
        // Safety: as above; a NULL side is left to the copy's own error.
        let queueable = dst != 0 && src != 0;
        unsafe { async_copy(s, dst, src, n, queueable, || format!("{n} bytes"), body) }
    }

    // Per-thread default stream variants: a synchronous one is issued on the calling
    // thread's default stream, an async one's NULL stream is that stream.

    unsafe fn cuMemsetD8_v2(dst: CUdevicePtr, v: u8, n: usize) -> CuResult<()> {
        memset_sync(dst, Pattern::D8(v), n)
    }

    unsafe fn cuMemsetD16_v2(dst: CUdevicePtr, v: u16, n: usize) -> CuResult<()> {
        memset_sync(dst, Pattern::D16(v), n)
    }

    unsafe fn cuMemsetD32_v2(dst: CUdevicePtr, v: u32, n: usize) -> CuResult<()> {
        memset_sync(dst, Pattern::D32(v), n)
    }

    unsafe fn cuMemsetD8Async(dst: CUdevicePtr, v: u8, n: usize, s: CUstream) -> CuResult<()> {
        // Safety: a device address, checked when the memset runs.
        let body = move || unsafe { Self::cuMemsetD8_v2(dst, v, n) };
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

    unsafe fn cuMemsetD16Async(dst: CUdevicePtr, v: u16, n: usize, s: CUstream) -> CuResult<()> {
        // Safety: a device address, checked when the memset runs.
        let body = move || unsafe { Self::cuMemsetD16_v2(dst, v, n) };
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

    unsafe fn cuMemsetD32Async(dst: CUdevicePtr, v: u32, n: usize, s: CUstream) -> CuResult<()> {
        // Safety: a device address, checked when the memset runs.
        let body = move || unsafe { Self::cuMemsetD32_v2(dst, v, n) };
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

    // ---- peer copies, pitched (2D) copies ----

    unsafe fn cuMemAllocHost_v2(pp: *mut *mut c_void, bytesize: usize) -> CuResult<()> {
        Self::cuMemHostAlloc(pp, bytesize, 0)
    }

    // CUDA 4.0's version, which the _v2 of CUDA 6.5 replaced with the same parameters:
    // what the H200 answers to it is not recorded, so it is not emulated, rather than
    // taking _v2's behaviour by default.
    unsafe fn cuMemHostRegister(_p: *mut c_void, _bytesize: usize, _flags: c_uint) -> CuResult<()> {
        Self::not_emulated("cuMemHostRegister")
    }

    unsafe fn cuMemcpyPeer(
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
        let d = drv()?;
        for c in [dst_ctx, src_ctx] {
            if let Some(k) = ctx_key(c) {
                d.ctx_device(Some(k))?;
            }
        }
        // A copy between two devices' memory: queued like any device-to-device copy (the
        // contexts as addresses, so that the fallback's body may cross threads).
        let (dc, sc) = (dst_ctx as usize, src_ctx as usize);
        // Safety: device addresses, checked when the copy runs.
        let body =
            move || unsafe { Self::cuMemcpyPeer(dst, dc as CUcontext, src, sc as CUcontext, n) };
        // Safety: both sides are device addresses (or page-locked memory the driver holds).
        unsafe { async_copy(s, dst, src, n, true, || format!("peer {n} bytes"), body) }
    }

    unsafe fn cuMemcpy2D_v2(copy: *const CUDA_MEMCPY2D) -> CuResult<()> {
        legacy_order()?;
        let d = drv()?;
        let c = input(copy, "pCopy")?;
        if textures::has_array(&c) {
            return textures::copy_2d_arrays(d, &c);
        }
        copy_2d(d, &c)
    }

    // ---- CUDA arrays (textures.rs)

    emulate! {
        /// A 1D (Height 0) or 2D array.
        fn cuArrayCreate_v2(d; p, desc) {
            let h = d.array_create(CUDA_ARRAY3D_DESCRIPTOR {
                width: desc.width,
                height: desc.height,
                depth: 0,
                format: desc.format,
                num_channels: desc.num_channels,
                flags: 0,
            })?;
            p.write_key(h)
        }

        fn cuArray3DCreate_v2(d; p, desc) {
            p.write_key(d.array_create(desc)?)
        }

        // The getters look the array up before they check the out-parameter.

        fn cuArrayGetDescriptor_v2(d; #[late] p, h) {
            let a = d.array_descriptor(h)?;
            p.write(CUDA_ARRAY_DESCRIPTOR {
                width: a.width,
                height: a.height,
                format: a.format,
                num_channels: a.num_channels,
            })
        }

        fn cuArray3DGetDescriptor_v2(d; #[late] p, h) {
            p.write(d.array_descriptor(h)?)
        }

        fn cuArrayDestroy(d; h) {
            d.array_destroy(h)
        }
    }

    unsafe fn cuMemcpyHtoA_v2(
        dst: CUarray,
        dst_offset: usize,
        src: *const c_void,
        count: usize,
    ) -> CuResult<()> {
        let s = textures::host_side(src)?;
        textures::copy_bytes(textures::array_side(dst), dst_offset, s, 0, count)
    }

    unsafe fn cuMemcpyHtoAAsync_v2(
        dst: CUarray,
        dst_offset: usize,
        src: *const c_void,
        count: usize,
        s: CUstream,
    ) -> CuResult<()> {
        let _order = stream(s)?;
        Self::cuMemcpyHtoA_v2(dst, dst_offset, src, count)
    }

    unsafe fn cuMemcpyAtoH_v2(
        dst: *mut c_void,
        src: CUarray,
        src_offset: usize,
        count: usize,
    ) -> CuResult<()> {
        let d = textures::host_side(dst)?;
        textures::copy_bytes(d, 0, textures::array_side(src), src_offset, count)
    }

    unsafe fn cuMemcpyAtoHAsync_v2(
        dst: *mut c_void,
        src: CUarray,
        src_offset: usize,
        count: usize,
        s: CUstream,
    ) -> CuResult<()> {
        let _order = stream(s)?;
        Self::cuMemcpyAtoH_v2(dst, src, src_offset, count)
    }

    unsafe fn cuMemcpyDtoA_v2(
        dst: CUarray,
        dst_offset: usize,
        src: CUdeviceptr,
        count: usize,
    ) -> CuResult<()> {
        let s = textures::device_side(src);
        textures::copy_bytes(textures::array_side(dst), dst_offset, s, 0, count)
    }

    unsafe fn cuMemcpyAtoD_v2(
        dst: CUdeviceptr,
        src: CUarray,
        src_offset: usize,
        count: usize,
    ) -> CuResult<()> {
        let d = textures::device_side(dst);
        textures::copy_bytes(d, 0, textures::array_side(src), src_offset, count)
    }

    unsafe fn cuMemcpyAtoA_v2(
        dst: CUarray,
        dst_offset: usize,
        src: CUarray,
        src_offset: usize,
        count: usize,
    ) -> CuResult<()> {
        textures::copy_bytes(
            textures::array_side(dst),
            dst_offset,
            textures::array_side(src),
            src_offset,
            count,
        )
    }

    unsafe fn cuMemcpy3D_v2(copy: *const CUDA_MEMCPY3D) -> CuResult<()> {
        textures::memcpy_3d(copy)
    }

    unsafe fn cuMemcpy3DAsync_v2(copy: *const CUDA_MEMCPY3D, s: CUstream) -> CuResult<()> {
        textures::memcpy_3d_async(copy, s)
    }

    unsafe fn cuMemcpy2DUnaligned_v2(copy: *const CUDA_MEMCPY2D) -> CuResult<()> {
        Self::cuMemcpy2D_v2(copy)
    }

    unsafe fn cuMemcpy2DAsync_v2(copy: *const CUDA_MEMCPY2D, s: CUstream) -> CuResult<()> {
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
        Self::cuMemcpy2D_v2(copy)
    }

    unsafe fn cuMemsetD2D8_v2(
        dst: CUdevicePtr,
        pitch: usize,
        v: u8,
        w: usize,
        h: usize,
    ) -> CuResult<()> {
        legacy_order()?;
        drv()?.memset_2d(dst, pitch as u64, Pattern::D8(v), w as u64, h as u64)
    }

    unsafe fn cuMemsetD2D16_v2(
        dst: CUdevicePtr,
        pitch: usize,
        v: u16,
        w: usize,
        h: usize,
    ) -> CuResult<()> {
        legacy_order()?;
        drv()?.memset_2d(dst, pitch as u64, Pattern::D16(v), w as u64, h as u64)
    }

    unsafe fn cuMemsetD2D32_v2(
        dst: CUdevicePtr,
        pitch: usize,
        v: c_uint,
        w: usize,
        h: usize,
    ) -> CuResult<()> {
        legacy_order()?;
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
        if memset_2d_async_queued(s, dst, pitch, Pattern::D8(v), w, h)? {
            return Ok(());
        }
        let _order = stream(s)?;
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
        if memset_2d_async_queued(s, dst, pitch, Pattern::D16(v), w, h)? {
            return Ok(());
        }
        let _order = stream(s)?;
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
        if memset_2d_async_queued(s, dst, pitch, Pattern::D32(v), w, h)? {
            return Ok(());
        }
        let _order = stream(s)?;
        Self::cuMemsetD2D32_v2(dst, pitch, v, w, h)
    }
}

/// Which side of a copy a pointer the program calls "host" is really on.
///
/// # Safety
/// If `p` is host memory, it is readable for `len` bytes, and writable if `write`, while
/// the result lives (as cuda.h requires of the program).
unsafe fn host_side<'a>(
    d: &Driver,
    p: *const c_void,
    len: usize,
    write: bool,
) -> CuResult<HostOrDevice<'a>> {
    if p.is_null() && len > 0 {
        return Err(invalid("the host pointer is NULL"));
    }
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

/// An async copy between device and page-locked memory: checked now, queued on `s`, its
/// bytes moved by the stream's worker in stream order while the host goes on, as a GPU's
/// copy engine does (asyncAPI's pattern: copies and a kernel issued, then the host works
/// until an event says they are done). False when a side is pageable host memory: the
/// caller copies in place, after the work it follows.
///
/// # Safety
/// Host sides are the program's, valid as cuda.h requires of an async copy.
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
    drv()?.capture_check_legacy(crate::boundary::stream_key(s))?;
    drv()?.memset_queued_on(
        crate::boundary::stream_key(s),
        device_ptr(dst),
        pattern,
        n as u64,
    )
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
    drv()?.capture_check_legacy(crate::boundary::stream_key(s))?;
    drv()?.memset_2d_queued_on(
        crate::boundary::stream_key(s),
        dst,
        pitch as u64,
        pattern,
        w as u64,
        h as u64,
    )
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
        crate::boundary::stream_key(s),
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
                    d.note_host_visible_writes(&[(a, a + n as u64, Touch::Write)]);
                }
            }
        }),
    )?;
    Ok(true)
}

fn device_ptr_of(side: &Option<QueuedSide>) -> Option<crate::model::ids::DevicePtr> {
    side.as_ref().and_then(QueuedSide::device)
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
        crate::boundary::stream_key(s),
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
) -> CuResult<HostOrDevice<'a>> {
    if p == 0 {
        return Err(invalid("the host pointer is NULL"));
    }
    // Safety: this function's contract.
    unsafe { host_side(d, p as *const c_void, len, write) }
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
            if host.is_null() && extent > 0 {
                return Err(invalid("the host pointer is NULL"));
            }
            if d.is_device_address(device_ptr(p)) {
                PlaneStart::Device(p)
            } else {
                PlaneStart::Host(p as *mut u8)
            }
        }
        CU_MEMORYTYPE_DEVICE => device_start(at_device)?,
        CU_MEMORYTYPE_UNIFIED => {
            if device == 0 {
                return Err(invalid("the host pointer is NULL"));
            }
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
