//! Memory management (cuda.h's group CUDA_MEM): cuMemAlloc and cuMemFree, memory info,
//! address ranges, copies and memsets (with their per-thread default stream variants),
//! and the PCI bus ids cuda.h files here.

use super::{copy_c_string, out_pair, stream, zero_on_failure, CUdevicePtr, Mock};
use crate::boundary::{device_ptr, drv, event_handle, event_key, out};
use crate::diagnostics::{created, Made};
use crate::model::error::*;
use crate::model::{Driver, HostBytes, HostOrDevice, Pattern};
use cumock_abi::*;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

/// CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING: what an opened event is.
const CU_EVENT_INTERPROCESS_FLAGS: c_uint = 0x4 | 0x2;

impl MemoryApi for Mock {
    // ---- legacy IPC (model/ipc.rs) ----

    unsafe fn cuIpcGetMemHandle(handle: *mut CUipcMemHandle, dptr: CUdevicePtr) -> CuResult<()> {
        let d = drv()?;
        if handle.is_null() {
            return Err(invalid("pHandle is NULL"));
        }
        let bytes = d.ipc_get_mem_handle(dptr)?;
        out(
            handle,
            CUipcMemHandle {
                reserved: bytes.map(|b| b as c_char),
            },
        )
    }

    unsafe fn cuIpcOpenMemHandle_v2(
        pdptr: *mut CUdevicePtr,
        handle: CUipcMemHandle,
        flags: c_uint,
    ) -> CuResult<()> {
        let d = drv()?;
        if pdptr.is_null() {
            return Err(invalid("pdptr is NULL"));
        }
        out(
            pdptr,
            d.ipc_open_mem_handle(&handle.reserved.map(|b| b as u8), flags)?,
        )
    }

    unsafe fn cuIpcOpenMemHandle(
        pdptr: *mut CUdevicePtr,
        handle: CUipcMemHandle,
        flags: c_uint,
    ) -> CuResult<()> {
        Self::cuIpcOpenMemHandle_v2(pdptr, handle, flags)
    }

    unsafe fn cuIpcCloseMemHandle(dptr: CUdevicePtr) -> CuResult<()> {
        drv()?.ipc_close_mem_handle(dptr)
    }

    unsafe fn cuIpcGetEventHandle(handle: *mut CUipcEventHandle, event: CUevent) -> CuResult<()> {
        let d = drv()?;
        if handle.is_null() || event.is_null() {
            return Err(invalid("pHandle or event is NULL"));
        }
        match d.ipc_get_event_handle(event_key(event)) {
            Ok(bytes) => out(
                handle,
                CUipcEventHandle {
                    reserved: bytes.map(|b| b as c_char),
                },
            ),
            Err((e, zeroed)) => {
                // Observed: the H200 writes the handle of a live event that is not
                // interprocess before refusing it.
                if zeroed {
                    out(handle, CUipcEventHandle { reserved: [0; 64] })?;
                }
                Err(e)
            }
        }
    }

    unsafe fn cuIpcOpenEventHandle(ph: *mut CUevent, handle: CUipcEventHandle) -> CuResult<()> {
        let d = drv()?;
        if ph.is_null() {
            return Err(invalid("phEvent is NULL"));
        }
        d.ipc_check_event_handle(&handle.reserved.map(|b| b as u8))?;
        // Another process's event. The mock finishes device work before the call that
        // issues it returns, so whatever that process recorded is complete by the time
        // this one can learn of it: an event of this process that is complete stands
        // for it (interprocess events have no timing, as CUDA requires).
        let e = d.event_create(CU_EVENT_INTERPROCESS_FLAGS)?;
        d.ipc_event_created(e);
        out(ph, event_handle(e))
    }

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
        // The H200 zeroes both when it fails (no current context, say).
        let info = d.mem_info().map(|(f, t)| (f as usize, t as usize));
        out_pair(free, total, info, |_| true)
    }

    unsafe fn cuMemAlloc_v2(dptr: *mut CUdevicePtr, bytesize: usize) -> CuResult<()> {
        let d = drv()?;
        if dptr.is_null() {
            return Err(invalid("dptr is NULL"));
        }
        zero_on_failure(
            dptr,
            d.mem_alloc(bytesize as u64)
                .map(|p| created(Made::Reservation, p.get())),
        )
    }

    unsafe fn cuMemFree_v2(dptr: CUdevicePtr) -> CuResult<()> {
        drv()?.mem_free(device_ptr(dptr))
    }

    unsafe fn cuMemGetAddressRange_v2(
        pbase: *mut CUdevicePtr,
        psize: *mut usize,
        dptr: CUdevicePtr,
    ) -> CuResult<()> {
        let d = drv()?;
        d.ctx_device(None)?;
        // The H200 zeroes what it was asked for when nothing is found.
        let found = d
            .address_range(device_ptr(dptr))
            .map(|(b, s)| (b.get(), s as usize));
        out_pair(pbase, psize, found, |_| true)
    }

    unsafe fn cuMemcpyHtoD_v2(dst: CUdevicePtr, src: *const c_void, n: usize) -> CuResult<()> {
        let d = drv()?;
        // Safety: cuda.h requires `src` readable for n bytes.
        let src = unsafe { host_side(d, src, n, false) }?;
        d.copy(device_side(dst), src, n as u64)
    }

    unsafe fn cuMemcpyDtoH_v2(dst: *mut c_void, src: CUdevicePtr, n: usize) -> CuResult<()> {
        let d = drv()?;
        // Safety: cuda.h requires `dst` writable for n bytes.
        let dst = unsafe { host_side(d, dst, n, true) }?;
        d.copy(dst, device_side(src), n as u64)
    }

    unsafe fn cuMemcpyDtoD_v2(dst: CUdevicePtr, src: CUdevicePtr, n: usize) -> CuResult<()> {
        drv()?.copy(device_side(dst), device_side(src), n as u64)
    }

    unsafe fn cuMemcpy(dst: CUdevicePtr, src: CUdevicePtr, n: usize) -> CuResult<()> {
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
        drv()?.memset(device_ptr(dst), Pattern::D8(v), n as u64)
    }

    unsafe fn cuMemsetD16_v2(dst: CUdevicePtr, v: u16, n: usize) -> CuResult<()> {
        drv()?.memset(device_ptr(dst), Pattern::D16(v), n as u64)
    }

    unsafe fn cuMemsetD32_v2(dst: CUdevicePtr, v: u32, n: usize) -> CuResult<()> {
        drv()?.memset(device_ptr(dst), Pattern::D32(v), n as u64)
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

fn device_side(dptr: CUdevicePtr) -> HostOrDevice<'static> {
    HostOrDevice::Device(device_ptr(dptr))
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
