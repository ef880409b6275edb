//! The exported functions the mock emulates, one per CUDA entry point. Each converts and
//! checks its arguments and calls the model (`crate::model`); `grep -n cuMemMap` finds
//! both the export and, in `cases/`, the cases that show its behaviour.
#![allow(non_snake_case, clippy::missing_safety_doc)]

use crate::boundary::{ctx_key, cuda_fn, drv, drv_any, input, out};
use crate::diagnostics::{created, Made};
use crate::model::error::*;
use crate::model::{HostOrDevice, Pattern};
use cumock_abi::consts::*;
use cumock_abi::result::*;
use cumock_abi::*;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::os::fd::IntoRawFd;

type CUdevicePtr = CUdeviceptr;

// ---------------------------------------------------------------- init and errors

cuda_fn! { fn cuInit(flags: c_uint) { drv_any()?.init(flags) } }

cuda_fn! {
    fn cuDriverGetVersion(version: *mut c_int) {
        out(version, drv_any()?.profile.driver_version)
    }
}

cuda_fn! {
    fn cuGetErrorName(error: CUresult, p_str: *mut *const c_char) {
        let name = crate::errors::name(error).ok_or_else(|| invalid(format!("{error} is not a CUresult")))?;
        out(p_str, name.as_ptr())
    }
}

cuda_fn! {
    fn cuGetErrorString(error: CUresult, p_str: *mut *const c_char) {
        let s = crate::errors::string(error).ok_or_else(|| invalid(format!("{error} is not a CUresult")))?;
        out(p_str, s.as_ptr())
    }
}

// ---------------------------------------------------------------- devices

cuda_fn! {
    fn cuDeviceGet(device: *mut CUdevice, ordinal: c_int) {
        let d = drv()?;
        d.device(ordinal)?;
        out(device, ordinal)
    }
}

cuda_fn! { fn cuDeviceGetCount(count: *mut c_int) { out(count, drv()?.device_count() as c_int) } }

cuda_fn! {
    fn cuDeviceGetName(name: *mut c_char, len: c_int, dev: CUdevice) {
        let d = drv()?.device(dev)?;
        if name.is_null() || len <= 0 {
            return Err(invalid("name is NULL or len is not positive"));
        }
        copy_c_string(&d.name, name, len as usize);
        Ok(())
    }
}

cuda_fn! {
    fn cuDeviceGetAttribute(pi: *mut c_int, attrib: c_int, dev: CUdevice) {
        let d = drv()?;
        if pi.is_null() {
            return Err(invalid("pi is NULL"));
        }
        let p = d.device(dev)?;
        let v = p.attribute(attrib).ok_or_else(|| invalid(format!("{attrib} is not a CUdevice_attribute")))?;
        out(pi, v)
    }
}

cuda_fn! {
    fn cuDeviceTotalMem_v2(bytes: *mut usize, dev: CUdevice) {
        let d = drv()?;
        if bytes.is_null() { return Err(invalid("bytes is NULL")); }
        out(bytes, d.device(dev)?.total_mem as usize)
    }
}

cuda_fn! {
    fn cuDeviceGetUuid(uuid: *mut CUuuid, dev: CUdevice) {
        let d = drv()?;
        if uuid.is_null() { return Err(invalid("uuid is NULL")); }
        let p = d.device(dev)?;
        let bytes = crate::model::profile::uuid_bytes(&p.uuid).expect("validated profile");
        out(uuid, CUuuid { bytes })
    }
}

cuda_fn! { fn cuDeviceGetUuid_v2(uuid: *mut CUuuid, dev: CUdevice) { result(cuDeviceGetUuid(uuid, dev)) } }

cuda_fn! {
    fn cuDeviceGetPCIBusId(pci_bus_id: *mut c_char, len: c_int, dev: CUdevice) {
        let d = drv()?.device(dev)?;
        if pci_bus_id.is_null() || len <= 0 {
            return Err(invalid("pciBusId is NULL or len is not positive"));
        }
        copy_c_string(&d.pci_bus_id, pci_bus_id, len as usize);
        Ok(())
    }
}

cuda_fn! {
    fn cuDeviceGetByPCIBusId(dev: *mut CUdevice, pci_bus_id: *const c_char) {
        let d = drv()?;
        if pci_bus_id.is_null() { return Err(invalid("pciBusId is NULL")); }
        // Safety: a non-NULL C string, per cuda.h.
        let want = unsafe { CStr::from_ptr(pci_bus_id) }.to_string_lossy().to_ascii_uppercase();
        let found = d.profile.devices.iter().position(|p| {
            let id = p.pci_bus_id.to_ascii_uppercase();
            id == want || id.ends_with(&format!(":{want}")) || id.trim_start_matches('0') == want.trim_start_matches('0')
        });
        match found {
            Some(i) => out(dev, i as CUdevice),
            None => Err(invalid_device(format!("no device at PCI bus id {want}"))),
        }
    }
}

cuda_fn! {
    fn cuDeviceCanAccessPeer(can: *mut c_int, dev: CUdevice, peer: CUdevice) {
        let d = drv()?;
        if can.is_null() { return Err(invalid("canAccessPeer is NULL")); }
        d.device(dev)?;
        d.device(peer)?;
        out(can, d.profile.can_access_peer(dev as usize, peer as usize) as c_int)
    }
}

cuda_fn! {
    fn cuDeviceComputeCapability(major: *mut c_int, minor: *mut c_int, dev: CUdevice) {
        let d = drv()?.device(dev)?;
        out(major, d.attributes.get("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR").copied().unwrap_or(0))?;
        out(minor, d.attributes.get("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR").copied().unwrap_or(0))
    }
}

// ---------------------------------------------------------------- contexts

cuda_fn! {
    fn cuDevicePrimaryCtxRetain(pctx: *mut CUcontext, dev: CUdevice) {
        let d = drv()?;
        if pctx.is_null() { return Err(invalid("pctx is NULL")); }
        out(pctx, d.primary_retain(dev)? as CUcontext)
    }
}
cuda_fn! { fn cuDevicePrimaryCtxRelease_v2(dev: CUdevice) { drv()?.primary_release(dev) } }
cuda_fn! { fn cuDevicePrimaryCtxRelease(dev: CUdevice) { drv()?.primary_release(dev) } }
cuda_fn! { fn cuDevicePrimaryCtxReset_v2(dev: CUdevice) { drv()?.primary_reset(dev) } }
cuda_fn! { fn cuDevicePrimaryCtxReset(dev: CUdevice) { drv()?.primary_reset(dev) } }
cuda_fn! { fn cuDevicePrimaryCtxSetFlags_v2(dev: CUdevice, flags: c_uint) { drv()?.primary_set_flags(dev, flags) } }
cuda_fn! { fn cuDevicePrimaryCtxSetFlags(dev: CUdevice, flags: c_uint) { drv()?.primary_set_flags(dev, flags) } }

cuda_fn! {
    fn cuDevicePrimaryCtxGetState(dev: CUdevice, flags: *mut c_uint, active: *mut c_int) {
        let d = drv()?;
        if flags.is_null() || active.is_null() { return Err(invalid("flags or active is NULL")); }
        let (f, a) = d.primary_state(dev)?;
        out(flags, f)?;
        out(active, a as c_int)
    }
}

cuda_fn! {
    fn cuCtxCreate_v2(pctx: *mut CUcontext, flags: c_uint, dev: CUdevice) {
        let d = drv()?;
        if pctx.is_null() { return Err(invalid("pctx is NULL")); }
        out(pctx, d.ctx_create(flags, dev)? as CUcontext)
    }
}
cuda_fn! { fn cuCtxCreate(pctx: *mut CUcontext, flags: c_uint, dev: CUdevice) { result(cuCtxCreate_v2(pctx, flags, dev)) } }

cuda_fn! {
    fn cuCtxCreate_v3(pctx: *mut CUcontext, params: *mut c_void, num_params: c_int, flags: c_uint, dev: CUdevice) {
        if num_params > 0 || !params.is_null() {
            return Err(not_supported("execution affinity parameters are not emulated"));
        }
        result(cuCtxCreate_v2(pctx, flags, dev))
    }
}

cuda_fn! {
    fn cuCtxCreate_v4(pctx: *mut CUcontext, params: *const CUctxCreateParams, flags: c_uint, dev: CUdevice) {
        if !params.is_null() {
            let p = input(params, "ctxCreateParams")?;
            if p.num_exec_affinity_params > 0 || !p.cig_params.is_null() {
                return Err(not_supported("execution affinity and CIG parameters are not emulated"));
            }
        }
        result(cuCtxCreate_v2(pctx, flags, dev))
    }
}

cuda_fn! {
    fn cuCtxDestroy_v2(ctx: CUcontext) {
        let key = ctx_key(ctx).ok_or_else(|| invalid("ctx is NULL"))?;
        drv()?.ctx_destroy(key)
    }
}
cuda_fn! { fn cuCtxDestroy(ctx: CUcontext) { result(cuCtxDestroy_v2(ctx)) } }

cuda_fn! { fn cuCtxSetCurrent(ctx: CUcontext) { drv()?.ctx_set_current(ctx_key(ctx)) } }

cuda_fn! {
    fn cuCtxGetCurrent(pctx: *mut CUcontext) {
        let d = drv()?;
        out(pctx, d.ctx_current().unwrap_or(0) as CUcontext)
    }
}

cuda_fn! {
    fn cuCtxPushCurrent_v2(ctx: CUcontext) {
        let key = ctx_key(ctx).ok_or_else(|| invalid("ctx is NULL"))?;
        drv()?.ctx_push(key)
    }
}
cuda_fn! { fn cuCtxPushCurrent(ctx: CUcontext) { result(cuCtxPushCurrent_v2(ctx)) } }

cuda_fn! {
    fn cuCtxPopCurrent_v2(pctx: *mut CUcontext) {
        let c = drv()?.ctx_pop()?;
        if !pctx.is_null() {
            out(pctx, c as CUcontext)?;
        }
        Ok(())
    }
}
cuda_fn! { fn cuCtxPopCurrent(pctx: *mut CUcontext) { result(cuCtxPopCurrent_v2(pctx)) } }

cuda_fn! {
    fn cuCtxGetDevice(device: *mut CUdevice) {
        let d = drv()?;
        if device.is_null() { return Err(invalid("device is NULL")); }
        out(device, d.ctx_device(None)? as CUdevice)
    }
}

cuda_fn! {
    fn cuCtxGetDevice_v2(device: *mut CUdevice, ctx: CUcontext) {
        let d = drv()?;
        if device.is_null() { return Err(invalid("device is NULL")); }
        out(device, d.ctx_device(ctx_key(ctx))? as CUdevice)
    }
}

cuda_fn! { fn cuCtxSynchronize() { drv()?.ctx_synchronize(None) } }
cuda_fn! { fn cuCtxSynchronize_v2(ctx: CUcontext) { drv()?.ctx_synchronize(ctx_key(ctx)) } }

cuda_fn! {
    fn cuCtxGetFlags(flags: *mut c_uint) {
        let d = drv()?;
        if flags.is_null() { return Err(invalid("flags is NULL")); }
        out(flags, d.ctx_flags()?)
    }
}

cuda_fn! {
    fn cuCtxGetApiVersion(ctx: CUcontext, version: *mut c_uint) {
        let d = drv()?;
        if version.is_null() { return Err(invalid("version is NULL")); }
        match ctx_key(ctx) {
            Some(c) => { d.ctx_device(Some(c))?; }
            None => { d.ctx_device(None)?; }
        }
        // The API version of contexts made by this driver generation.
        out(version, 3020)
    }
}

cuda_fn! {
    fn cuCtxGetId(ctx: CUcontext, id: *mut u64) {
        let d = drv()?;
        if id.is_null() { return Err(invalid("ctxId is NULL")); }
        let key = match ctx_key(ctx) { Some(c) => c, None => d.ctx_current().ok_or_else(|| invalid_context("no current context"))? };
        d.ctx_device(Some(key))?;
        out(id, key & 0xffff_ffff)
    }
}

cuda_fn! {
    fn cuCtxEnablePeerAccess(peer: CUcontext, flags: c_uint) {
        let key = ctx_key(peer).ok_or_else(|| invalid_context("peerContext is NULL"))?;
        drv()?.ctx_enable_peer_access(key, flags)
    }
}

cuda_fn! {
    fn cuCtxDisablePeerAccess(peer: CUcontext) {
        let key = ctx_key(peer).ok_or_else(|| invalid_context("peerContext is NULL"))?;
        drv()?.ctx_disable_peer_access(key)
    }
}

// ---------------------------------------------------------------- VMM

cuda_fn! {
    fn cuMemGetAllocationGranularity(granularity: *mut usize, prop: *const CUmemAllocationProp, option: c_int) {
        let d = drv()?;
        let p = input(prop, "prop")?;
        if granularity.is_null() { return Err(invalid("granularity is NULL")); }
        let g = d.granularity(p.location.type_, p.location.id, option)?;
        out(granularity, g as usize)
    }
}

cuda_fn! {
    fn cuMemAddressReserve(ptr: *mut CUdevicePtr, size: usize, alignment: usize, addr: CUdevicePtr, flags: u64) {
        let d = drv()?;
        if ptr.is_null() { return Err(invalid("ptr is NULL")); }
        out(ptr, created(Made::Reservation, d.address_reserve(size as u64, alignment as u64, addr, flags)?))
    }
}

cuda_fn! { fn cuMemAddressFree(ptr: CUdevicePtr, size: usize) { drv()?.address_free(ptr, size as u64) } }

cuda_fn! {
    fn cuMemCreate(handle: *mut CUmemGenericAllocationHandle, size: usize, prop: *const CUmemAllocationProp, flags: u64) {
        let d = drv()?;
        if handle.is_null() { return Err(invalid("handle is NULL")); }
        let p = d.check_prop(&input(prop, "prop")?)?;
        out(handle, created(Made::Allocation, d.create(size as u64, p, flags)?))
    }
}

cuda_fn! { fn cuMemRelease(handle: CUmemGenericAllocationHandle) { drv()?.release(handle) } }

cuda_fn! {
    fn cuMemMap(ptr: CUdevicePtr, size: usize, offset: usize, handle: CUmemGenericAllocationHandle, flags: u64) {
        drv()?.map(ptr, size as u64, offset as u64, handle, flags)?;
        created(Made::Mapping, ptr);
        Ok(())
    }
}

cuda_fn! {
    fn cuMemUnmap(ptr: CUdevicePtr, size: usize) {
        for w in drv()?.unmap(ptr, size as u64)? {
            crate::diagnostics::warn("cuMemUnmap", &w);
        }
        Ok(())
    }
}

cuda_fn! {
    fn cuMemSetAccess(ptr: CUdevicePtr, size: usize, desc: *const CUmemAccessDesc, count: usize) {
        let d = drv()?;
        if desc.is_null() || count == 0 {
            return Err(invalid("desc is NULL or count is 0"));
        }
        if count > 4096 {
            return Err(invalid(format!("count {count} is more descriptors than there can be devices")));
        }
        // Safety: cuda.h: desc points to count descriptors.
        let descs = unsafe { std::slice::from_raw_parts(desc, count) };
        let grants: Vec<(i32, i32, i32)> = descs.iter().map(|x| (x.location.type_, x.location.id, x.flags)).collect();
        for w in d.set_access(ptr, size as u64, &grants)? {
            crate::diagnostics::warn("cuMemSetAccess", &w);
        }
        Ok(())
    }
}

cuda_fn! {
    fn cuMemGetAccess(flags: *mut u64, location: *const CUmemLocation, ptr: CUdevicePtr) {
        let d = drv()?;
        let loc = input(location, "location")?;
        if flags.is_null() { return Err(invalid("flags is NULL")); }
        out(flags, d.get_access(loc.type_, loc.id, ptr)?)
    }
}

cuda_fn! {
    fn cuMemExportToShareableHandle(shareable: *mut c_void, handle: CUmemGenericAllocationHandle, handle_type: c_int, flags: u64) {
        let d = drv()?;
        if shareable.is_null() { return Err(invalid("shareableHandle is NULL")); }
        let fd = d.export(handle, handle_type, flags)?;
        crate::diagnostics::note_exported_fd(&fd);
        out(shareable.cast::<c_int>(), fd.into_raw_fd())
    }
}

cuda_fn! {
    fn cuMemImportFromShareableHandle(handle: *mut CUmemGenericAllocationHandle, os_handle: *mut c_void, handle_type: c_int) {
        let d = drv()?;
        if handle.is_null() { return Err(invalid("handle is NULL")); }
        // For POSIX file descriptors, the fd travels in the pointer's value.
        let fd = os_handle as usize as i64;
        let fd = i32::try_from(fd).unwrap_or(-1);
        out(handle, created(Made::Allocation, d.import(fd, handle_type)?))
    }
}

cuda_fn! {
    fn cuMemRetainAllocationHandle(handle: *mut CUmemGenericAllocationHandle, addr: *mut c_void) {
        let d = drv()?;
        if handle.is_null() { return Err(invalid("handle is NULL")); }
        out(handle, d.retain_allocation_handle(addr as u64)?)
    }
}

cuda_fn! {
    fn cuMemGetAllocationPropertiesFromHandle(prop: *mut CUmemAllocationProp, handle: CUmemGenericAllocationHandle) {
        let d = drv()?;
        if prop.is_null() { return Err(invalid("prop is NULL")); }
        let p = d.allocation_properties(handle)?;
        out(prop, CUmemAllocationProp {
            type_: CU_MEM_ALLOCATION_TYPE_PINNED,
            requested_handle_types: p.handle_types,
            location: CUmemLocation { type_: p.location_type, id: p.location_id },
            win32_handle_meta_data: std::ptr::null_mut(),
            alloc_flags: CUmemAllocFlags {
                compression_type: p.compression,
                gpu_direct_rdma_capable: p.gpu_direct_rdma,
                usage: p.usage,
                reserved: [0; 4],
            },
        })
    }
}

// ---------------------------------------------------------------- memory queries and data

cuda_fn! {
    fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) {
        let d = drv()?;
        if free.is_null() || total.is_null() { return Err(invalid("free or total is NULL")); }
        let (f, t) = d.mem_info()?;
        out(free, f as usize)?;
        out(total, t as usize)
    }
}

cuda_fn! {
    fn cuMemAlloc_v2(dptr: *mut CUdevicePtr, bytesize: usize) {
        let d = drv()?;
        if dptr.is_null() { return Err(invalid("dptr is NULL")); }
        out(dptr, created(Made::Reservation, d.mem_alloc(bytesize as u64)?))
    }
}

cuda_fn! {
    fn cuMemFree_v2(dptr: CUdevicePtr) {
        drv()?.mem_free(dptr)
    }
}

cuda_fn! {
    fn cuMemGetAddressRange_v2(pbase: *mut CUdevicePtr, psize: *mut usize, dptr: CUdevicePtr) {
        let d = drv()?;
        d.ctx_device(None)?;
        let (b, s) = d.address_range(dptr)?;
        if !pbase.is_null() { out(pbase, b)?; }
        if !psize.is_null() { out(psize, s as usize)?; }
        Ok(())
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

fn device_side(dptr: CUdevicePtr) -> HostOrDevice {
    HostOrDevice::Device(dptr)
}

/// cuMemcpy on unified addresses: either side may be host or device memory.
fn unified_side(d: &crate::model::Driver, p: u64) -> CuResult<HostOrDevice> {
    host_side(d, p as *const c_void, 1)
}

cuda_fn! {
    fn cuMemcpyHtoD_v2(dst: CUdevicePtr, src: *const c_void, n: usize) {
        let d = drv()?;
        unsafe_copy(d, device_side(dst), host_side(d, src, n)?, n as u64)
    }
}
cuda_fn! {
    fn cuMemcpyDtoH_v2(dst: *mut c_void, src: CUdevicePtr, n: usize) {
        let d = drv()?;
        unsafe_copy(d, host_side(d, dst, n)?, device_side(src), n as u64)
    }
}
cuda_fn! {
    fn cuMemcpyDtoD_v2(dst: CUdevicePtr, src: CUdevicePtr, n: usize) {
        unsafe_copy(drv()?, device_side(dst), device_side(src), n as u64)
    }
}
cuda_fn! {
    fn cuMemcpy(dst: CUdevicePtr, src: CUdevicePtr, n: usize) {
        let d = drv()?;
        unsafe_copy(d, unified_side(d, dst)?, unified_side(d, src)?, n as u64)
    }
}

cuda_fn! { fn cuMemcpyHtoDAsync_v2(dst: CUdevicePtr, src: *const c_void, n: usize, s: CUstream) { stream(s)?; result(cuMemcpyHtoD_v2(dst, src, n)) } }
cuda_fn! { fn cuMemcpyDtoHAsync_v2(dst: *mut c_void, src: CUdevicePtr, n: usize, s: CUstream) { stream(s)?; result(cuMemcpyDtoH_v2(dst, src, n)) } }
cuda_fn! { fn cuMemcpyDtoDAsync_v2(dst: CUdevicePtr, src: CUdevicePtr, n: usize, s: CUstream) { stream(s)?; result(cuMemcpyDtoD_v2(dst, src, n)) } }
cuda_fn! { fn cuMemcpyAsync(dst: CUdevicePtr, src: CUdevicePtr, n: usize, s: CUstream) { stream(s)?; result(cuMemcpy(dst, src, n)) } }

// Per-thread default stream variants: the mock runs everything in order, so they are the
// same operations.
cuda_fn! { fn cuMemcpyHtoD_v2_ptds(dst: CUdevicePtr, src: *const c_void, n: usize) { result(cuMemcpyHtoD_v2(dst, src, n)) } }
cuda_fn! { fn cuMemcpyDtoH_v2_ptds(dst: *mut c_void, src: CUdevicePtr, n: usize) { result(cuMemcpyDtoH_v2(dst, src, n)) } }
cuda_fn! { fn cuMemcpyDtoD_v2_ptds(dst: CUdevicePtr, src: CUdevicePtr, n: usize) { result(cuMemcpyDtoD_v2(dst, src, n)) } }
cuda_fn! { fn cuMemcpy_ptds(dst: CUdevicePtr, src: CUdevicePtr, n: usize) { result(cuMemcpy(dst, src, n)) } }
cuda_fn! { fn cuMemcpyHtoDAsync_v2_ptsz(dst: CUdevicePtr, src: *const c_void, n: usize, s: CUstream) { result(cuMemcpyHtoDAsync_v2(dst, src, n, s)) } }
cuda_fn! { fn cuMemcpyDtoHAsync_v2_ptsz(dst: *mut c_void, src: CUdevicePtr, n: usize, s: CUstream) { result(cuMemcpyDtoHAsync_v2(dst, src, n, s)) } }
cuda_fn! { fn cuMemcpyDtoDAsync_v2_ptsz(dst: CUdevicePtr, src: CUdevicePtr, n: usize, s: CUstream) { result(cuMemcpyDtoDAsync_v2(dst, src, n, s)) } }
cuda_fn! { fn cuMemcpyAsync_ptsz(dst: CUdevicePtr, src: CUdevicePtr, n: usize, s: CUstream) { result(cuMemcpyAsync(dst, src, n, s)) } }

cuda_fn! { fn cuMemsetD8_v2(dst: CUdevicePtr, v: u8, n: usize) { drv()?.memset(dst, Pattern::D8(v), n as u64) } }
cuda_fn! { fn cuMemsetD16_v2(dst: CUdevicePtr, v: u16, n: usize) { drv()?.memset(dst, Pattern::D16(v), n as u64) } }
cuda_fn! { fn cuMemsetD32_v2(dst: CUdevicePtr, v: u32, n: usize) { drv()?.memset(dst, Pattern::D32(v), n as u64) } }
cuda_fn! { fn cuMemsetD8Async(dst: CUdevicePtr, v: u8, n: usize, s: CUstream) { stream(s)?; result(cuMemsetD8_v2(dst, v, n)) } }
cuda_fn! { fn cuMemsetD16Async(dst: CUdevicePtr, v: u16, n: usize, s: CUstream) { stream(s)?; result(cuMemsetD16_v2(dst, v, n)) } }
cuda_fn! { fn cuMemsetD32Async(dst: CUdevicePtr, v: u32, n: usize, s: CUstream) { stream(s)?; result(cuMemsetD32_v2(dst, v, n)) } }
cuda_fn! { fn cuMemsetD8_v2_ptds(dst: CUdevicePtr, v: u8, n: usize) { result(cuMemsetD8_v2(dst, v, n)) } }
cuda_fn! { fn cuMemsetD16_v2_ptds(dst: CUdevicePtr, v: u16, n: usize) { result(cuMemsetD16_v2(dst, v, n)) } }
cuda_fn! { fn cuMemsetD32_v2_ptds(dst: CUdevicePtr, v: u32, n: usize) { result(cuMemsetD32_v2(dst, v, n)) } }
cuda_fn! { fn cuMemsetD8Async_ptsz(dst: CUdevicePtr, v: u8, n: usize, s: CUstream) { result(cuMemsetD8Async(dst, v, n, s)) } }
cuda_fn! { fn cuMemsetD16Async_ptsz(dst: CUdevicePtr, v: u16, n: usize, s: CUstream) { result(cuMemsetD16Async(dst, v, n, s)) } }
cuda_fn! { fn cuMemsetD32Async_ptsz(dst: CUdevicePtr, v: u32, n: usize, s: CUstream) { result(cuMemsetD32Async(dst, v, n, s)) } }

cuda_fn! {
    fn cuPointerGetAttribute(data: *mut c_void, attribute: c_int, ptr: CUdevicePtr) {
        let d = drv()?;
        if data.is_null() { return Err(invalid("data is NULL")); }
        write_pointer_attribute(d, data, attribute, ptr, true)
    }
}

cuda_fn! {
    fn cuPointerGetAttributes(num: c_uint, attributes: *const c_int, data: *mut *mut c_void, ptr: CUdevicePtr) {
        let d = drv()?;
        if num == 0 || attributes.is_null() || data.is_null() {
            return Err(invalid("numAttributes is 0, or attributes or data is NULL"));
        }
        if num > 64 {
            return Err(invalid(format!("numAttributes {num} is more than there are attributes")));
        }
        // Safety: cuda.h: both arrays hold numAttributes entries.
        let (attrs, outs) = unsafe {
            (std::slice::from_raw_parts(attributes, num as usize), std::slice::from_raw_parts(data, num as usize))
        };
        for (a, o) in attrs.iter().zip(outs) {
            if !o.is_null() {
                // The plural form reports unknown pointers as zeroed attributes, not errors.
                write_pointer_attribute(d, *o, *a, ptr, false)?;
            }
        }
        Ok(())
    }
}

unsafe fn write_pointer_attribute(
    d: &crate::model::Driver,
    data: *mut c_void,
    attribute: c_int,
    ptr: CUdevicePtr,
    strict: bool,
) -> CuResult<()> {
    let info = d.pointer_info(ptr);
    let Some(i) = info else {
        if strict {
            return Err(invalid(format!("{ptr:#x} is not memory the driver knows")));
        }
        // Safety: the caller's buffer holds at least the attribute's size; zeroing 4
        // bytes (the smallest attribute) is what an unknown pointer reports.
        return match attribute {
            CU_POINTER_ATTRIBUTE_CONTEXT
            | CU_POINTER_ATTRIBUTE_DEVICE_POINTER
            | CU_POINTER_ATTRIBUTE_HOST_POINTER
            | CU_POINTER_ATTRIBUTE_BUFFER_ID
            | CU_POINTER_ATTRIBUTE_RANGE_START_ADDR
            | CU_POINTER_ATTRIBUTE_RANGE_SIZE
            | CU_POINTER_ATTRIBUTE_MAPPING_SIZE
            | CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR
            | CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID
            | CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE => out(data.cast::<u64>(), 0),
            CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL => out(data.cast::<i32>(), -2),
            _ => out(data.cast::<u32>(), 0),
        };
    };
    match attribute {
        CU_POINTER_ATTRIBUTE_CONTEXT => out(data.cast::<u64>(), i.context),
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE => out(data.cast::<u32>(), CU_MEMORYTYPE_DEVICE),
        CU_POINTER_ATTRIBUTE_DEVICE_POINTER => out(data.cast::<u64>(), ptr),
        CU_POINTER_ATTRIBUTE_HOST_POINTER => Err(invalid("device memory has no host pointer")),
        CU_POINTER_ATTRIBUTE_SYNC_MEMOPS => out(data.cast::<u32>(), 0),
        CU_POINTER_ATTRIBUTE_BUFFER_ID => out(data.cast::<u64>(), i.buffer_id),
        CU_POINTER_ATTRIBUTE_IS_MANAGED => out(data.cast::<u32>(), 0),
        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL => out(data.cast::<i32>(), i.device as i32),
        CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE => out(data.cast::<u32>(), (!i.vmm) as u32),
        CU_POINTER_ATTRIBUTE_RANGE_START_ADDR => out(data.cast::<u64>(), i.range.0),
        CU_POINTER_ATTRIBUTE_RANGE_SIZE => out(data.cast::<u64>(), i.range.1),
        CU_POINTER_ATTRIBUTE_MAPPED => out(data.cast::<u32>(), 1),
        CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES => out(data.cast::<u64>(), i.handle_types as u64),
        CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE => {
            out(data.cast::<u32>(), u32::from(i.rdma))
        }
        CU_POINTER_ATTRIBUTE_ACCESS_FLAGS => out(data.cast::<u32>(), u32::from(i.access)),
        CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE => out(data.cast::<u64>(), 0),
        CU_POINTER_ATTRIBUTE_MAPPING_SIZE => out(data.cast::<u64>(), i.mapping.1),
        CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR => out(data.cast::<u64>(), i.mapping.0),
        CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID => out(data.cast::<u64>(), i.buffer_id),
        other => Err(invalid(format!("{other} is not a CUpointer_attribute"))),
    }
}

// ---------------------------------------------------------------- streams and events

/// Checks a stream argument of an async operation.
fn stream(s: CUstream) -> CuResult<()> {
    drv()?.stream_check(s as u64)
}

cuda_fn! {
    fn cuStreamCreate(ph: *mut CUstream, flags: c_uint) {
        let d = drv()?;
        if ph.is_null() { return Err(invalid("phStream is NULL")); }
        out(ph, d.stream_create(flags)? as CUstream)
    }
}
cuda_fn! {
    fn cuStreamCreateWithPriority(ph: *mut CUstream, flags: c_uint, _priority: c_int) {
        result(cuStreamCreate(ph, flags))
    }
}
cuda_fn! { fn cuStreamDestroy_v2(s: CUstream) { drv()?.stream_destroy(s as u64) } }
cuda_fn! { fn cuStreamDestroy(s: CUstream) { drv()?.stream_destroy(s as u64) } }
cuda_fn! { fn cuStreamSynchronize(s: CUstream) { let d = drv()?; d.ctx_device(None)?; stream(s)?; d.synchronized(); Ok(()) } }
cuda_fn! { fn cuStreamSynchronize_ptsz(s: CUstream) { result(cuStreamSynchronize(s)) } }
cuda_fn! { fn cuStreamQuery(s: CUstream) { let d = drv()?; d.ctx_device(None)?; stream(s) } }
cuda_fn! { fn cuStreamQuery_ptsz(s: CUstream) { result(cuStreamQuery(s)) } }
cuda_fn! {
    fn cuStreamWaitEvent(s: CUstream, e: CUevent, _flags: c_uint) {
        let d = drv()?;
        stream(s)?;
        d.event_check(e as u64)
    }
}
cuda_fn! { fn cuStreamWaitEvent_ptsz(s: CUstream, e: CUevent, flags: c_uint) { result(cuStreamWaitEvent(s, e, flags)) } }

cuda_fn! {
    fn cuEventCreate(ph: *mut CUevent, flags: c_uint) {
        let d = drv()?;
        if ph.is_null() { return Err(invalid("phEvent is NULL")); }
        out(ph, d.event_create(flags)? as CUevent)
    }
}
cuda_fn! { fn cuEventRecord(e: CUevent, s: CUstream) { drv()?.event_record(e as u64, s as u64) } }
cuda_fn! { fn cuEventRecord_ptsz(e: CUevent, s: CUstream) { result(cuEventRecord(e, s)) } }
cuda_fn! { fn cuEventSynchronize(e: CUevent) { let d = drv()?; d.event_check(e as u64)?; d.synchronized(); Ok(()) } }
cuda_fn! { fn cuEventQuery(e: CUevent) { drv()?.event_check(e as u64) } }
cuda_fn! { fn cuEventDestroy_v2(e: CUevent) { drv()?.event_destroy(e as u64) } }
cuda_fn! { fn cuEventDestroy(e: CUevent) { drv()?.event_destroy(e as u64) } }
cuda_fn! {
    fn cuEventElapsedTime_v2(ms: *mut f32, start: CUevent, end: CUevent) {
        let d = drv()?;
        if ms.is_null() { return Err(invalid("pMilliseconds is NULL")); }
        out(ms, d.event_elapsed_ms(start as u64, end as u64)?)
    }
}
cuda_fn! { fn cuEventElapsedTime(ms: *mut f32, start: CUevent, end: CUevent) { result(cuEventElapsedTime_v2(ms, start, end)) } }

// ---------------------------------------------------------------- cuGetProcAddress

cuda_fn! {
    fn cuGetProcAddress_v2(symbol: *const c_char, pfn: *mut *mut c_void, version: c_int, flags: u64, status: *mut c_int) {
        if symbol.is_null() || pfn.is_null() {
            return Err(invalid("symbol or pfn is NULL"));
        }
        // Safety: a non-NULL C string, per cuda.h.
        let name = unsafe { CStr::from_ptr(symbol) }.to_string_lossy();
        let d = drv_any()?;
        let (ptr, found) = crate::procaddress::resolve(&name, version, flags, d.profile.driver_version)?;
        out(pfn, ptr)?;
        if !status.is_null() {
            out(status, found)?;
        }
        Ok(())
    }
}

cuda_fn! {
    fn cuGetProcAddress(symbol: *const c_char, pfn: *mut *mut c_void, version: c_int, flags: u64) {
        result(cuGetProcAddress_v2(symbol, pfn, version, flags, std::ptr::null_mut()))
    }
}

// ---------------------------------------------------------------- helpers

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

/// Turns another export's result back into a CuResult, so one export can delegate.
fn result(code: CUresult) -> CuResult<()> {
    if code == CUDA_SUCCESS {
        Ok(())
    } else {
        // Already reported by the inner call; a quiet error carries the code out.
        Err(CuError {
            code,
            message: "".into(),
            severity: Severity::Misuse,
        })
    }
}

/// Copies `s` into a caller's buffer of `len` bytes, truncating, always NUL-terminated.
fn copy_c_string(s: &str, dst: *mut c_char, len: usize) {
    let n = s.len().min(len - 1);
    // Safety: cuda.h: dst holds len bytes; n + 1 <= len.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr().cast::<c_char>(), dst, n);
        *dst.add(n) = 0;
    }
}
