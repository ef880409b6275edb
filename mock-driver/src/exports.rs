//! The functions the mock emulates: the implementation of `cumock_abi::DriverApi`, one
//! method per CUDA entry point. Each converts and checks its arguments and calls the model
//! (`crate::model`); `grep -n cuMemMap` finds both the method and, in `cases/`, the cases
//! that show its behaviour. Every export of the real driver that is not a method here is
//! not emulated: it returns CUDA_ERROR_NOT_SUPPORTED and says so once.
//!
//! To emulate a function:
//! 1. find its declaration in `abi/src/api.rs` (`unsafe fn cuModuleLoadData(module: *mut
//!    CUmodule, image: *const c_void) -> Self::Outcome`);
//! 2. write the method below with that signature, returning `CuResult<()>` (parameter
//!    names may differ; the compiler checks the types against the declaration);
//! 3. that is all: `boundary::export_all!` turns every method of `DriverApi` into the C
//!    export of that name, with the panic guard, the trace, fault injection and the
//!    diagnostics, and cuGetProcAddress finds it. A function that delegates to another
//!    (a `_ptsz` variant to its base) calls `Self::cuOther(..)`, in Rust, so the error
//!    keeps its message; never the C export.
#![allow(non_snake_case, clippy::missing_safety_doc)]

use crate::boundary::{
    ctx_handle, ctx_key, drv, drv_any, event_handle, event_key, export_all, function_handle,
    function_key, input, kernel_handle, kernel_key, library_handle, library_key, module_handle,
    module_key, out, stream_handle, stream_key,
};
use crate::diagnostics::{created, Made};
use crate::model::error::*;
use crate::model::module::{Image, LaunchRequest};
use crate::model::{HostOrDevice, Pattern};
use cumock_abi::consts::*;
use cumock_abi::result::*;
use cumock_abi::*;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::os::fd::IntoRawFd;

type CUdevicePtr = CUdeviceptr;

/// The mock driver: the `DriverApi` methods it writes are what it emulates.
pub struct Mock;

impl DriverApi for Mock {
    type Outcome = CuResult<()>;

    fn not_emulated(name: &'static str) -> CuResult<()> {
        Err(crate::boundary::not_emulated(name))
    }

    unsafe fn cuInit(flags: c_uint) -> CuResult<()> {
        drv_any()?.init(flags)
    }

    unsafe fn cuDriverGetVersion(version: *mut c_int) -> CuResult<()> {
        out(version, drv_any()?.profile.driver_version)
    }

    unsafe fn cuGetErrorName(error: CUresult, p_str: *mut *const c_char) -> CuResult<()> {
        let name =
            crate::errors::name(error).ok_or_else(|| invalid(format!("{error} is not a CUresult")));
        zero_on_failure(p_str, name.map(|n| n.as_ptr()))
    }

    unsafe fn cuGetErrorString(error: CUresult, p_str: *mut *const c_char) -> CuResult<()> {
        let s = crate::errors::string(error)
            .ok_or_else(|| invalid(format!("{error} is not a CUresult")));
        zero_on_failure(p_str, s.map(|s| s.as_ptr()))
    }

    // ---------------------------------------------------------------- devices

    unsafe fn cuDeviceGet(device: *mut CUdevice, ordinal: c_int) -> CuResult<()> {
        let d = drv()?;
        d.device(ordinal)?;
        out(device, ordinal)
    }

    unsafe fn cuDeviceGetCount(count: *mut c_int) -> CuResult<()> {
        out(count, drv()?.device_count() as c_int)
    }

    unsafe fn cuDeviceGetName(name: *mut c_char, len: c_int, dev: CUdevice) -> CuResult<()> {
        let d = drv()?.device(dev)?;
        if name.is_null() || len <= 0 {
            return Err(invalid("name is NULL or len is not positive"));
        }
        copy_c_string(&d.name, name, len as usize);
        Ok(())
    }

    unsafe fn cuDeviceGetAttribute(pi: *mut c_int, attrib: c_int, dev: CUdevice) -> CuResult<()> {
        let d = drv()?;
        if pi.is_null() {
            return Err(invalid("pi is NULL"));
        }
        let p = d.device(dev)?;
        let v = p
            .attribute(attrib)
            .ok_or_else(|| invalid(format!("{attrib} is not a CUdevice_attribute")))?;
        out(pi, v)
    }

    unsafe fn cuDeviceTotalMem_v2(bytes: *mut usize, dev: CUdevice) -> CuResult<()> {
        let d = drv()?;
        if bytes.is_null() {
            return Err(invalid("bytes is NULL"));
        }
        out(bytes, d.device(dev)?.total_mem as usize)
    }

    unsafe fn cuDeviceGetUuid(uuid: *mut CUuuid, dev: CUdevice) -> CuResult<()> {
        let d = drv()?;
        if uuid.is_null() {
            return Err(invalid("uuid is NULL"));
        }
        let p = d.device(dev)?;
        let bytes = crate::model::profile::uuid_bytes(&p.uuid).expect("validated profile");
        out(uuid, CUuuid { bytes })
    }

    unsafe fn cuDeviceGetUuid_v2(uuid: *mut CUuuid, dev: CUdevice) -> CuResult<()> {
        Self::cuDeviceGetUuid(uuid, dev)
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

    unsafe fn cuDeviceCanAccessPeer(
        can: *mut c_int,
        dev: CUdevice,
        peer: CUdevice,
    ) -> CuResult<()> {
        let d = drv()?;
        if can.is_null() {
            return Err(invalid("canAccessPeer is NULL"));
        }
        d.device(dev)?;
        d.device(peer)?;
        out(
            can,
            d.profile.can_access_peer(dev as usize, peer as usize) as c_int,
        )
    }

    unsafe fn cuDeviceComputeCapability(
        major: *mut c_int,
        minor: *mut c_int,
        dev: CUdevice,
    ) -> CuResult<()> {
        let d = drv()?.device(dev)?;
        out(
            major,
            d.attributes
                .get("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR")
                .copied()
                .unwrap_or(0),
        )?;
        out(
            minor,
            d.attributes
                .get("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR")
                .copied()
                .unwrap_or(0),
        )
    }

    // ---------------------------------------------------------------- contexts

    unsafe fn cuDevicePrimaryCtxRetain(pctx: *mut CUcontext, dev: CUdevice) -> CuResult<()> {
        let d = drv()?;
        if pctx.is_null() {
            return Err(invalid("pctx is NULL"));
        }
        out(pctx, ctx_handle(d.primary_retain(dev)?))
    }

    unsafe fn cuDevicePrimaryCtxRelease_v2(dev: CUdevice) -> CuResult<()> {
        drv()?.primary_release(dev)
    }

    unsafe fn cuDevicePrimaryCtxRelease(dev: CUdevice) -> CuResult<()> {
        drv()?.primary_release(dev)
    }

    unsafe fn cuDevicePrimaryCtxReset_v2(dev: CUdevice) -> CuResult<()> {
        drv()?.primary_reset(dev)
    }

    unsafe fn cuDevicePrimaryCtxReset(dev: CUdevice) -> CuResult<()> {
        drv()?.primary_reset(dev)
    }

    unsafe fn cuDevicePrimaryCtxSetFlags_v2(dev: CUdevice, flags: c_uint) -> CuResult<()> {
        drv()?.primary_set_flags(dev, flags)
    }

    unsafe fn cuDevicePrimaryCtxSetFlags(dev: CUdevice, flags: c_uint) -> CuResult<()> {
        drv()?.primary_set_flags(dev, flags)
    }

    unsafe fn cuDevicePrimaryCtxGetState(
        dev: CUdevice,
        flags: *mut c_uint,
        active: *mut c_int,
    ) -> CuResult<()> {
        let d = drv()?;
        if flags.is_null() || active.is_null() {
            return Err(invalid("flags or active is NULL"));
        }
        let (f, a) = d.primary_state(dev)?;
        out(flags, f)?;
        out(active, a as c_int)
    }

    unsafe fn cuCtxCreate_v2(pctx: *mut CUcontext, flags: c_uint, dev: CUdevice) -> CuResult<()> {
        let d = drv()?;
        if pctx.is_null() {
            return Err(invalid("pctx is NULL"));
        }
        out(pctx, ctx_handle(d.ctx_create(flags, dev)?))
    }

    unsafe fn cuCtxCreate(pctx: *mut CUcontext, flags: c_uint, dev: CUdevice) -> CuResult<()> {
        Self::cuCtxCreate_v2(pctx, flags, dev)
    }

    unsafe fn cuCtxCreate_v3(
        pctx: *mut CUcontext,
        params: *mut CUexecAffinityParam,
        num_params: c_int,
        flags: c_uint,
        dev: CUdevice,
    ) -> CuResult<()> {
        if num_params > 0 || !params.is_null() {
            return Err(not_supported(
                "execution affinity parameters are not emulated",
            ));
        }
        Self::cuCtxCreate_v2(pctx, flags, dev)
    }

    unsafe fn cuCtxCreate_v4(
        pctx: *mut CUcontext,
        params: *mut CUctxCreateParams,
        flags: c_uint,
        dev: CUdevice,
    ) -> CuResult<()> {
        if !params.is_null() {
            let p = input(params.cast_const(), "ctxCreateParams")?;
            if p.num_exec_affinity_params > 0 || !p.cig_params.is_null() {
                return Err(not_supported(
                    "execution affinity and CIG parameters are not emulated",
                ));
            }
        }
        Self::cuCtxCreate_v2(pctx, flags, dev)
    }

    unsafe fn cuCtxDestroy_v2(ctx: CUcontext) -> CuResult<()> {
        let key = ctx_key(ctx).ok_or_else(|| invalid("ctx is NULL"))?;
        drv()?.ctx_destroy(key)
    }

    unsafe fn cuCtxDestroy(ctx: CUcontext) -> CuResult<()> {
        Self::cuCtxDestroy_v2(ctx)
    }

    unsafe fn cuCtxSetCurrent(ctx: CUcontext) -> CuResult<()> {
        drv()?.ctx_set_current(ctx_key(ctx))
    }

    unsafe fn cuCtxGetCurrent(pctx: *mut CUcontext) -> CuResult<()> {
        let d = drv()?;
        out(pctx, ctx_handle(d.ctx_current().unwrap_or(0)))
    }

    unsafe fn cuCtxPushCurrent_v2(ctx: CUcontext) -> CuResult<()> {
        let key = ctx_key(ctx).ok_or_else(|| invalid("ctx is NULL"))?;
        drv()?.ctx_push(key)
    }

    unsafe fn cuCtxPushCurrent(ctx: CUcontext) -> CuResult<()> {
        Self::cuCtxPushCurrent_v2(ctx)
    }

    unsafe fn cuCtxPopCurrent_v2(pctx: *mut CUcontext) -> CuResult<()> {
        let c = drv()?.ctx_pop()?;
        if !pctx.is_null() {
            out(pctx, ctx_handle(c))?;
        }
        Ok(())
    }

    unsafe fn cuCtxPopCurrent(pctx: *mut CUcontext) -> CuResult<()> {
        Self::cuCtxPopCurrent_v2(pctx)
    }

    unsafe fn cuCtxGetDevice(device: *mut CUdevice) -> CuResult<()> {
        let d = drv()?;
        if device.is_null() {
            return Err(invalid("device is NULL"));
        }
        out(device, d.ctx_device(None)? as CUdevice)
    }

    unsafe fn cuCtxGetDevice_v2(device: *mut CUdevice, ctx: CUcontext) -> CuResult<()> {
        let d = drv()?;
        if device.is_null() {
            return Err(invalid("device is NULL"));
        }
        out(device, d.ctx_device(ctx_key(ctx))? as CUdevice)
    }

    unsafe fn cuCtxSynchronize() -> CuResult<()> {
        drv()?.ctx_synchronize(None)
    }

    unsafe fn cuCtxSynchronize_v2(ctx: CUcontext) -> CuResult<()> {
        drv()?.ctx_synchronize(ctx_key(ctx))
    }

    unsafe fn cuCtxGetFlags(flags: *mut c_uint) -> CuResult<()> {
        let d = drv()?;
        if flags.is_null() {
            return Err(invalid("flags is NULL"));
        }
        out(flags, d.ctx_flags()?)
    }

    unsafe fn cuCtxGetApiVersion(ctx: CUcontext, version: *mut c_uint) -> CuResult<()> {
        let d = drv()?;
        if version.is_null() {
            return Err(invalid("version is NULL"));
        }
        match ctx_key(ctx) {
            Some(c) => {
                d.ctx_device(Some(c))?;
            }
            None => {
                d.ctx_device(None)?;
            }
        }
        // The API version of contexts made by this driver generation.
        out(version, 3020)
    }

    unsafe fn cuCtxGetId(ctx: CUcontext, id: *mut u64) -> CuResult<()> {
        let d = drv()?;
        if id.is_null() {
            return Err(invalid("ctxId is NULL"));
        }
        let key = match ctx_key(ctx) {
            Some(c) => c,
            None => d
                .ctx_current()
                .ok_or_else(|| invalid_context("no current context"))?,
        };
        d.ctx_device(Some(key))?;
        out(id, key & 0xffff_ffff)
    }

    unsafe fn cuCtxEnablePeerAccess(peer: CUcontext, flags: c_uint) -> CuResult<()> {
        let key = ctx_key(peer).ok_or_else(|| invalid_context("peerContext is NULL"))?;
        drv()?.ctx_enable_peer_access(key, flags)
    }

    unsafe fn cuCtxDisablePeerAccess(peer: CUcontext) -> CuResult<()> {
        let key = ctx_key(peer).ok_or_else(|| invalid_context("peerContext is NULL"))?;
        drv()?.ctx_disable_peer_access(key)
    }

    // ---------------------------------------------------------------- VMM

    unsafe fn cuMemGetAllocationGranularity(
        granularity: *mut usize,
        prop: *const CUmemAllocationProp,
        option: c_int,
    ) -> CuResult<()> {
        let d = drv()?;
        let p = input(prop, "prop")?;
        if granularity.is_null() {
            return Err(invalid("granularity is NULL"));
        }
        let g = d.granularity(p.location.type_, p.location.id, option)?;
        out(granularity, g as usize)
    }

    unsafe fn cuMemAddressReserve(
        ptr: *mut CUdevicePtr,
        size: usize,
        alignment: usize,
        addr: CUdevicePtr,
        flags: u64,
    ) -> CuResult<()> {
        let d = drv()?;
        if ptr.is_null() {
            return Err(invalid("ptr is NULL"));
        }
        out(
            ptr,
            created(
                Made::Reservation,
                d.address_reserve(size as u64, alignment as u64, addr, flags)?,
            ),
        )
    }

    unsafe fn cuMemAddressFree(ptr: CUdevicePtr, size: usize) -> CuResult<()> {
        drv()?.address_free(ptr, size as u64)
    }

    unsafe fn cuMemCreate(
        handle: *mut CUmemGenericAllocationHandle,
        size: usize,
        prop: *const CUmemAllocationProp,
        flags: u64,
    ) -> CuResult<()> {
        let d = drv()?;
        if handle.is_null() {
            return Err(invalid("handle is NULL"));
        }
        let p = d.check_prop(&input(prop, "prop")?)?;
        out(
            handle,
            created(Made::Allocation, d.create(size as u64, p, flags)?),
        )
    }

    unsafe fn cuMemRelease(handle: CUmemGenericAllocationHandle) -> CuResult<()> {
        drv()?.release(handle)
    }

    unsafe fn cuMemMap(
        ptr: CUdevicePtr,
        size: usize,
        offset: usize,
        handle: CUmemGenericAllocationHandle,
        flags: u64,
    ) -> CuResult<()> {
        drv()?.map(ptr, size as u64, offset as u64, handle, flags)?;
        created(Made::Mapping, ptr);
        Ok(())
    }

    unsafe fn cuMemUnmap(ptr: CUdevicePtr, size: usize) -> CuResult<()> {
        for w in drv()?.unmap(ptr, size as u64)? {
            crate::diagnostics::warn("cuMemUnmap", &w);
        }
        Ok(())
    }

    unsafe fn cuMemSetAccess(
        ptr: CUdevicePtr,
        size: usize,
        desc: *const CUmemAccessDesc,
        count: usize,
    ) -> CuResult<()> {
        let d = drv()?;
        if desc.is_null() || count == 0 {
            return Err(invalid("desc is NULL or count is 0"));
        }
        if count > 4096 {
            return Err(invalid(format!(
                "count {count} is more descriptors than there can be devices"
            )));
        }
        // Safety: cuda.h: desc points to count descriptors.
        let descs = unsafe { std::slice::from_raw_parts(desc, count) };
        let grants: Vec<(i32, i32, i32)> = descs
            .iter()
            .map(|x| (x.location.type_, x.location.id, x.flags))
            .collect();
        for w in d.set_access(ptr, size as u64, &grants)? {
            crate::diagnostics::warn("cuMemSetAccess", &w);
        }
        Ok(())
    }

    unsafe fn cuMemGetAccess(
        flags: *mut u64,
        location: *const CUmemLocation,
        ptr: CUdevicePtr,
    ) -> CuResult<()> {
        let d = drv()?;
        let loc = input(location, "location")?;
        if flags.is_null() {
            return Err(invalid("flags is NULL"));
        }
        match d.get_access(loc.type_, loc.id, ptr) {
            // A location the driver rejects leaves the flags alone; an address without a
            // mapping zeroes them (probe out-params-on-failure).
            Err(e) if e.code == CUDA_ERROR_INVALID_DEVICE => Err(e),
            r => zero_on_failure(flags, r),
        }
    }

    unsafe fn cuMemExportToShareableHandle(
        shareable: *mut c_void,
        handle: CUmemGenericAllocationHandle,
        handle_type: c_int,
        flags: u64,
    ) -> CuResult<()> {
        let d = drv()?;
        if shareable.is_null() {
            return Err(invalid("shareableHandle is NULL"));
        }
        let fd = d.export(handle, handle_type, flags)?;
        crate::diagnostics::note_exported_fd(&fd);
        out(shareable.cast::<c_int>(), fd.into_raw_fd())
    }

    unsafe fn cuMemImportFromShareableHandle(
        handle: *mut CUmemGenericAllocationHandle,
        os_handle: *mut c_void,
        handle_type: c_int,
    ) -> CuResult<()> {
        let d = drv()?;
        if handle.is_null() {
            return Err(invalid("handle is NULL"));
        }
        // For POSIX file descriptors, the fd travels in the pointer's value.
        let fd = os_handle as usize as i64;
        let fd = i32::try_from(fd).unwrap_or(-1);
        out(
            handle,
            created(Made::Allocation, d.import(fd, handle_type)?),
        )
    }

    unsafe fn cuMemRetainAllocationHandle(
        handle: *mut CUmemGenericAllocationHandle,
        addr: *mut c_void,
    ) -> CuResult<()> {
        let d = drv()?;
        if handle.is_null() {
            return Err(invalid("handle is NULL"));
        }
        out(handle, d.retain_allocation_handle(addr as u64)?)
    }

    unsafe fn cuMemGetAllocationPropertiesFromHandle(
        prop: *mut CUmemAllocationProp,
        handle: CUmemGenericAllocationHandle,
    ) -> CuResult<()> {
        let d = drv()?;
        if prop.is_null() {
            return Err(invalid("prop is NULL"));
        }
        let p = d.allocation_properties(handle)?;
        out(
            prop,
            CUmemAllocationProp {
                type_: CU_MEM_ALLOCATION_TYPE_PINNED,
                requested_handle_types: p.handle_types,
                location: CUmemLocation {
                    type_: p.location_type,
                    id: p.location_id,
                },
                win32_handle_meta_data: std::ptr::null_mut(),
                alloc_flags: CUmemAllocFlags {
                    compression_type: p.compression,
                    gpu_direct_rdma_capable: p.gpu_direct_rdma,
                    usage: p.usage,
                    reserved: [0; 4],
                },
            },
        )
    }

    // ---------------------------------------------------------------- memory queries and data

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
        unsafe_copy(d, device_side(dst), host_side(d, src, n)?, n as u64)
    }

    unsafe fn cuMemcpyDtoH_v2(dst: *mut c_void, src: CUdevicePtr, n: usize) -> CuResult<()> {
        let d = drv()?;
        unsafe_copy(d, host_side(d, dst, n)?, device_side(src), n as u64)
    }

    unsafe fn cuMemcpyDtoD_v2(dst: CUdevicePtr, src: CUdevicePtr, n: usize) -> CuResult<()> {
        unsafe_copy(drv()?, device_side(dst), device_side(src), n as u64)
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

    unsafe fn cuPointerGetAttribute(
        data: *mut c_void,
        attribute: c_int,
        ptr: CUdevicePtr,
    ) -> CuResult<()> {
        let d = drv()?;
        if data.is_null() {
            return Err(invalid("data is NULL"));
        }
        write_pointer_attribute(d, data, attribute, ptr, true)
    }

    unsafe fn cuPointerGetAttributes(
        num: c_uint,
        attributes: *mut CUpointer_attribute,
        data: *mut *mut c_void,
        ptr: CUdevicePtr,
    ) -> CuResult<()> {
        let d = drv()?;
        if num == 0 || attributes.is_null() || data.is_null() {
            return Err(invalid("numAttributes is 0, or attributes or data is NULL"));
        }
        if num > 64 {
            return Err(invalid(format!(
                "numAttributes {num} is more than there are attributes"
            )));
        }
        // Safety: cuda.h: both arrays hold numAttributes entries.
        let (attrs, outs) = unsafe {
            (
                std::slice::from_raw_parts(attributes, num as usize),
                std::slice::from_raw_parts(data, num as usize),
            )
        };
        for (a, o) in attrs.iter().zip(outs) {
            if !o.is_null() {
                // The plural form reports unknown pointers as zeroed attributes, not errors.
                write_pointer_attribute(d, *o, *a, ptr, false)?;
            }
        }
        Ok(())
    }

    unsafe fn cuStreamCreate(ph: *mut CUstream, flags: c_uint) -> CuResult<()> {
        let d = drv()?;
        if ph.is_null() {
            return Err(invalid("phStream is NULL"));
        }
        out(ph, stream_handle(d.stream_create(flags)?))
    }

    unsafe fn cuStreamCreateWithPriority(
        ph: *mut CUstream,
        flags: c_uint,
        priority: c_int,
    ) -> CuResult<()> {
        let d = drv()?;
        if ph.is_null() {
            return Err(invalid("phStream is NULL"));
        }
        out(
            ph,
            stream_handle(d.stream_create_with_priority(flags, priority)?),
        )
    }

    unsafe fn cuCtxGetStreamPriorityRange(least: *mut c_int, greatest: *mut c_int) -> CuResult<()> {
        let d = drv()?;
        d.ctx_device(None)?;
        // Either pointer may be NULL (cuda.h).
        if !least.is_null() {
            out(least, crate::model::context::STREAM_PRIORITY_LEAST)?;
        }
        if !greatest.is_null() {
            out(greatest, crate::model::context::STREAM_PRIORITY_GREATEST)?;
        }
        Ok(())
    }

    unsafe fn cuCtxGetLimit(pvalue: *mut usize, limit: CUlimit) -> CuResult<()> {
        let d = drv()?;
        if pvalue.is_null() {
            return Err(invalid("pvalue is NULL"));
        }
        out(pvalue, d.ctx_limit(limit, None)? as usize)
    }

    unsafe fn cuCtxSetLimit(limit: CUlimit, value: usize) -> CuResult<()> {
        drv()?.ctx_limit(limit, Some(value as u64)).map(|_| ())
    }

    unsafe fn cuStreamGetPriority(s: CUstream, priority: *mut c_int) -> CuResult<()> {
        let (_, _, props) = drv()?.stream_info(stream_key(s))?;
        out(priority, props.priority)
    }

    unsafe fn cuStreamGetPriority_ptsz(s: CUstream, priority: *mut c_int) -> CuResult<()> {
        Self::cuStreamGetPriority(s, priority)
    }

    unsafe fn cuStreamGetFlags(s: CUstream, flags: *mut c_uint) -> CuResult<()> {
        let (_, _, props) = drv()?.stream_info(stream_key(s))?;
        out(flags, props.flags)
    }

    unsafe fn cuStreamGetFlags_ptsz(s: CUstream, flags: *mut c_uint) -> CuResult<()> {
        Self::cuStreamGetFlags(s, flags)
    }

    unsafe fn cuStreamGetCtx(s: CUstream, pctx: *mut CUcontext) -> CuResult<()> {
        let (ctx, _, _) = drv()?.stream_info(stream_key(s))?;
        out(pctx, ctx_handle(ctx))
    }

    unsafe fn cuStreamGetCtx_ptsz(s: CUstream, pctx: *mut CUcontext) -> CuResult<()> {
        Self::cuStreamGetCtx(s, pctx)
    }

    unsafe fn cuStreamGetDevice(s: CUstream, device: *mut CUdevice) -> CuResult<()> {
        let (_, dev, _) = drv()?.stream_info(stream_key(s))?;
        out(device, dev as CUdevice)
    }

    unsafe fn cuStreamGetDevice_ptsz(s: CUstream, device: *mut CUdevice) -> CuResult<()> {
        Self::cuStreamGetDevice(s, device)
    }

    unsafe fn cuStreamGetId(s: CUstream, id: *mut u64) -> CuResult<()> {
        drv()?.stream_info(stream_key(s))?;
        // The handle's own number: unique among the process's live streams.
        out(id, stream_key(s) & 0xffff_ffff)
    }

    unsafe fn cuStreamGetId_ptsz(s: CUstream, id: *mut u64) -> CuResult<()> {
        Self::cuStreamGetId(s, id)
    }

    unsafe fn cuStreamDestroy_v2(s: CUstream) -> CuResult<()> {
        drv()?.stream_destroy(stream_key(s))
    }

    unsafe fn cuStreamDestroy(s: CUstream) -> CuResult<()> {
        drv()?.stream_destroy(stream_key(s))
    }

    unsafe fn cuStreamSynchronize(s: CUstream) -> CuResult<()> {
        let d = drv()?;
        d.ctx_device(None)?;
        stream(s)?;
        d.check_sticky_current()?;
        d.synchronized();
        Ok(())
    }

    unsafe fn cuStreamSynchronize_ptsz(s: CUstream) -> CuResult<()> {
        Self::cuStreamSynchronize(s)
    }

    unsafe fn cuStreamQuery(s: CUstream) -> CuResult<()> {
        let d = drv()?;
        d.ctx_device(None)?;
        stream(s)?;
        d.check_sticky_current()
    }

    unsafe fn cuStreamQuery_ptsz(s: CUstream) -> CuResult<()> {
        Self::cuStreamQuery(s)
    }

    unsafe fn cuStreamWaitEvent(s: CUstream, e: CUevent, _flags: c_uint) -> CuResult<()> {
        let d = drv()?;
        stream(s)?;
        d.event_check(event_key(e))
    }

    unsafe fn cuStreamWaitEvent_ptsz(s: CUstream, e: CUevent, flags: c_uint) -> CuResult<()> {
        Self::cuStreamWaitEvent(s, e, flags)
    }

    unsafe fn cuEventCreate(ph: *mut CUevent, flags: c_uint) -> CuResult<()> {
        let d = drv()?;
        if ph.is_null() {
            return Err(invalid("phEvent is NULL"));
        }
        out(ph, event_handle(d.event_create(flags)?))
    }

    unsafe fn cuEventRecord(e: CUevent, s: CUstream) -> CuResult<()> {
        drv()?.event_record(event_key(e), stream_key(s))
    }

    unsafe fn cuEventRecord_ptsz(e: CUevent, s: CUstream) -> CuResult<()> {
        Self::cuEventRecord(e, s)
    }

    unsafe fn cuEventSynchronize(e: CUevent) -> CuResult<()> {
        let d = drv()?;
        d.event_check(event_key(e))?;
        d.check_sticky_current()?;
        d.synchronized();
        Ok(())
    }

    unsafe fn cuEventQuery(e: CUevent) -> CuResult<()> {
        drv()?.event_check(event_key(e))
    }

    unsafe fn cuEventDestroy_v2(e: CUevent) -> CuResult<()> {
        drv()?.event_destroy(event_key(e))
    }

    unsafe fn cuEventDestroy(e: CUevent) -> CuResult<()> {
        drv()?.event_destroy(event_key(e))
    }

    unsafe fn cuEventElapsedTime_v2(ms: *mut f32, start: CUevent, end: CUevent) -> CuResult<()> {
        let d = drv()?;
        if ms.is_null() {
            return Err(invalid("pMilliseconds is NULL"));
        }
        out(ms, d.event_elapsed_ms(event_key(start), event_key(end))?)
    }

    unsafe fn cuEventElapsedTime(ms: *mut f32, start: CUevent, end: CUevent) -> CuResult<()> {
        Self::cuEventElapsedTime_v2(ms, start, end)
    }

    // ---------------------------------------------------------------- cuGetProcAddress

    unsafe fn cuGetProcAddress_v2(
        symbol: *const c_char,
        pfn: *mut *mut c_void,
        version: c_int,
        flags: u64,
        status: *mut c_int,
    ) -> CuResult<()> {
        if symbol.is_null() || pfn.is_null() {
            return Err(invalid("symbol or pfn is NULL"));
        }
        // Safety: a non-NULL C string, per cuda.h.
        let name = unsafe { CStr::from_ptr(symbol) }.to_string_lossy();
        let d = drv_any()?;
        let (ptr, found) =
            crate::procaddress::resolve(&name, version, flags, d.profile.driver_version)?;
        out(pfn, ptr)?;
        if !status.is_null() {
            out(status, found)?;
        }
        Ok(())
    }

    unsafe fn cuGetProcAddress(
        symbol: *const c_char,
        pfn: *mut *mut c_void,
        version: c_int,
        flags: u64,
    ) -> CuResult<()> {
        Self::cuGetProcAddress_v2(symbol, pfn, version, flags, std::ptr::null_mut())
    }

    // ---------------------------------------------------------------- modules and kernels

    unsafe fn cuModuleLoadData(module: *mut CUmodule, image: *const c_void) -> CuResult<()> {
        let d = drv()?;
        if module.is_null() {
            return Err(invalid("module is NULL"));
        }
        // Safety: the image is the program's, read as far as its own header says.
        let image = unsafe { image_bytes(image)? };
        out(module, module_handle(d.module_load(image)?))
    }
    unsafe fn cuModuleLoadDataEx(
        module: *mut CUmodule,
        image: *const c_void,
        _num_options: c_uint,
        _options: *mut CUjit_option,
        _option_values: *mut *mut c_void,
    ) -> CuResult<()> {
        // JIT options tune ptxas (optimisation level, log buffers); the host executor has
        // no use for them.
        Self::cuModuleLoadData(module, image)
    }
    unsafe fn cuModuleLoadFatBinary(
        module: *mut CUmodule,
        fat_cubin: *const c_void,
    ) -> CuResult<()> {
        Self::cuModuleLoadData(module, fat_cubin)
    }
    unsafe fn cuModuleLoad(module: *mut CUmodule, fname: *const c_char) -> CuResult<()> {
        let d = drv()?;
        if module.is_null() || fname.is_null() {
            return Err(invalid("module or fname is NULL"));
        }
        let image = read_image_file(fname)?;
        out(module, module_handle(d.module_load(image)?))
    }
    unsafe fn cuModuleUnload(hmod: CUmodule) -> CuResult<()> {
        drv()?.module_unload(module_key(hmod))
    }
    unsafe fn cuModuleGetFunction(
        hfunc: *mut CUfunction,
        hmod: CUmodule,
        name: *const c_char,
    ) -> CuResult<()> {
        let d = drv()?;
        if hfunc.is_null() || name.is_null() {
            return Err(invalid("hfunc or name is NULL"));
        }
        // Safety: a non-NULL C string, per cuda.h.
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
        match d.module_get_function(module_key(hmod), &name) {
            Ok(f) => out(hfunc, function_handle(f)),
            Err(e) => {
                // The H200 zeroes the function when the name is not found.
                if e.code == CUDA_ERROR_NOT_FOUND {
                    out(hfunc, std::ptr::null_mut())?;
                }
                Err(e)
            }
        }
    }
    unsafe fn cuModuleGetGlobal_v2(
        dptr: *mut CUdeviceptr,
        bytes: *mut usize,
        hmod: CUmodule,
        name: *const c_char,
    ) -> CuResult<()> {
        let d = drv()?;
        if name.is_null() {
            return Err(invalid("name is NULL"));
        }
        // Safety: a non-NULL C string, per cuda.h.
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
        let (addr, size) = match d.module_get_global(module_key(hmod), &name) {
            Ok(found) => found,
            Err(e) => {
                // The H200 zeroes both outputs when the name is not found.
                if e.code == CUDA_ERROR_NOT_FOUND {
                    if !dptr.is_null() {
                        out(dptr, 0)?;
                    }
                    if !bytes.is_null() {
                        out(bytes, 0)?;
                    }
                }
                return Err(e);
            }
        };
        if !dptr.is_null() {
            out(dptr, addr)?;
        }
        if !bytes.is_null() {
            out(bytes, size as usize)?;
        }
        Ok(())
    }
    unsafe fn cuFuncGetName(name: *mut *const c_char, hfunc: CUfunction) -> CuResult<()> {
        let d = drv()?;
        if name.is_null() {
            return Err(invalid("name is NULL"));
        }
        let n = d.function_name(function_key(hfunc))?;
        out(name, intern(&n))
    }
    unsafe fn cuFuncGetAttribute(
        pi: *mut c_int,
        attrib: CUfunction_attribute,
        hfunc: CUfunction,
    ) -> CuResult<()> {
        let d = drv()?;
        if pi.is_null() {
            return Err(invalid("pi is NULL"));
        }
        out(pi, d.function_attribute(function_key(hfunc), attrib)?)
    }
    unsafe fn cuFuncSetAttribute(
        hfunc: CUfunction,
        attrib: CUfunction_attribute,
        value: c_int,
    ) -> CuResult<()> {
        drv()?.function_set_attribute(function_key(hfunc), attrib, value)
    }
    unsafe fn cuOccupancyMaxActiveBlocksPerMultiprocessor(
        num_blocks: *mut c_int,
        func: CUfunction,
        block_size: c_int,
        dynamic_smem_size: usize,
    ) -> CuResult<()> {
        let d = drv()?;
        if num_blocks.is_null() {
            return Err(invalid("numBlocks is NULL"));
        }
        out(
            num_blocks,
            d.occupancy_blocks_per_sm(function_key(func), block_size, dynamic_smem_size)?,
        )
    }
    unsafe fn cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        num_blocks: *mut c_int,
        func: CUfunction,
        block_size: c_int,
        dynamic_smem_size: usize,
        _flags: c_uint,
    ) -> CuResult<()> {
        Self::cuOccupancyMaxActiveBlocksPerMultiprocessor(
            num_blocks,
            func,
            block_size,
            dynamic_smem_size,
        )
    }
    unsafe fn cuOccupancyMaxPotentialBlockSize(
        min_grid_size: *mut c_int,
        block_size: *mut c_int,
        func: CUfunction,
        block_to_smem: CUoccupancyB2DSize,
        dynamic_smem_size: usize,
        block_size_limit: c_int,
    ) -> CuResult<()> {
        let d = drv()?;
        if min_grid_size.is_null() || block_size.is_null() {
            return Err(invalid("minGridSize or blockSize is NULL"));
        }
        if block_to_smem.is_some() {
            return Err(not_supported(
                "a blockSizeToDynamicSMemSize callback is not emulated: pass NULL and dynamicSMemSize",
            ));
        }
        let (grid, block) = d.occupancy_potential_block_size(
            function_key(func),
            dynamic_smem_size,
            block_size_limit,
        )?;
        out(min_grid_size, grid)?;
        out(block_size, block)
    }
    unsafe fn cuOccupancyMaxPotentialBlockSizeWithFlags(
        min_grid_size: *mut c_int,
        block_size: *mut c_int,
        func: CUfunction,
        block_to_smem: CUoccupancyB2DSize,
        dynamic_smem_size: usize,
        block_size_limit: c_int,
        _flags: c_uint,
    ) -> CuResult<()> {
        Self::cuOccupancyMaxPotentialBlockSize(
            min_grid_size,
            block_size,
            func,
            block_to_smem,
            dynamic_smem_size,
            block_size_limit,
        )
    }
    unsafe fn cuLaunchKernel(
        f: CUfunction,
        grid_x: c_uint,
        grid_y: c_uint,
        grid_z: c_uint,
        block_x: c_uint,
        block_y: c_uint,
        block_z: c_uint,
        shared: c_uint,
        h_stream: CUstream,
        kernel_params: *mut *mut c_void,
        extra: *mut *mut c_void,
    ) -> CuResult<()> {
        let d = drv()?;
        // Safety: the parameter arrays are the program's, laid out as cuda.h says.
        let params = unsafe { param_buffer(d, function_key(f), kernel_params, extra)? };
        d.launch(LaunchRequest {
            function: function_key(f),
            grid: [grid_x, grid_y, grid_z],
            block: [block_x, block_y, block_z],
            shared,
            stream: stream_key(h_stream),
            params,
        })
    }
    unsafe fn cuLaunchKernel_ptsz(
        f: CUfunction,
        grid_x: c_uint,
        grid_y: c_uint,
        grid_z: c_uint,
        block_x: c_uint,
        block_y: c_uint,
        block_z: c_uint,
        shared: c_uint,
        h_stream: CUstream,
        kernel_params: *mut *mut c_void,
        extra: *mut *mut c_void,
    ) -> CuResult<()> {
        Self::cuLaunchKernel(
            f,
            grid_x,
            grid_y,
            grid_z,
            block_x,
            block_y,
            block_z,
            shared,
            h_stream,
            kernel_params,
            extra,
        )
    }
    unsafe fn cuLaunchKernelEx(
        config: *const CUlaunchConfig,
        f: CUfunction,
        kernel_params: *mut *mut c_void,
        extra: *mut *mut c_void,
    ) -> CuResult<()> {
        if config.is_null() {
            return Err(invalid("config is NULL"));
        }
        // Safety: a non-NULL CUlaunchConfig of the program's, laid out as cuda.h says.
        let c = unsafe { config.cast::<LaunchConfig>().read_unaligned() };
        if c.num_attrs != 0 {
            // Attributes (clusters, priorities, programmatic serialisation) change how a GPU
            // schedules blocks, not what a correct kernel computes; the executor has no use
            // for them, but says so.
            crate::diagnostics::warn(
                "cuLaunchKernelEx",
                &format!("{} launch attributes ignored: the host executor runs blocks without clusters or priorities", c.num_attrs),
            );
        }
        Self::cuLaunchKernel(
            f,
            c.grid[0],
            c.grid[1],
            c.grid[2],
            c.block[0],
            c.block[1],
            c.block[2],
            c.shared,
            c.stream,
            kernel_params,
            extra,
        )
    }
    unsafe fn cuLaunchKernelEx_ptsz(
        config: *const CUlaunchConfig,
        f: CUfunction,
        kernel_params: *mut *mut c_void,
        extra: *mut *mut c_void,
    ) -> CuResult<()> {
        Self::cuLaunchKernelEx(config, f, kernel_params, extra)
    }
    unsafe fn cuLibraryLoadData(
        library: *mut CUlibrary,
        code: *const c_void,
        _jit_options: *mut CUjit_option,
        _jit_option_values: *mut *mut c_void,
        _num_jit_options: c_uint,
        _library_options: *mut CUlibraryOption,
        _library_option_values: *mut *mut c_void,
        _num_library_options: c_uint,
    ) -> CuResult<()> {
        let d = drv()?;
        if library.is_null() {
            return Err(invalid("library is NULL"));
        }
        // Safety: the image is the program's, read as far as its own header says.
        let image = unsafe { image_bytes(code)? };
        out(library, library_handle(d.library_load(image)?))
    }
    unsafe fn cuLibraryLoadFromFile(
        library: *mut CUlibrary,
        file_name: *const c_char,
        _jit_options: *mut CUjit_option,
        _jit_option_values: *mut *mut c_void,
        _num_jit_options: c_uint,
        _library_options: *mut CUlibraryOption,
        _library_option_values: *mut *mut c_void,
        _num_library_options: c_uint,
    ) -> CuResult<()> {
        let d = drv()?;
        if library.is_null() || file_name.is_null() {
            return Err(invalid("library or fileName is NULL"));
        }
        let image = read_image_file(file_name)?;
        out(library, library_handle(d.library_load(image)?))
    }
    unsafe fn cuLibraryUnload(library: CUlibrary) -> CuResult<()> {
        drv()?.library_unload(library_key(library))
    }
    unsafe fn cuLibraryGetModule(p_mod: *mut CUmodule, library: CUlibrary) -> CuResult<()> {
        let d = drv()?;
        out(
            p_mod,
            module_handle(d.library_get_module(library_key(library))?),
        )
    }
    unsafe fn cuLibraryGetKernel(
        p_kernel: *mut CUkernel,
        library: CUlibrary,
        name: *const c_char,
    ) -> CuResult<()> {
        let d = drv()?;
        if p_kernel.is_null() || name.is_null() {
            return Err(invalid("pKernel or name is NULL"));
        }
        // Safety: a non-NULL C string, per cuda.h.
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
        out(
            p_kernel,
            kernel_handle(d.library_get_kernel(library_key(library), &name)?),
        )
    }
    unsafe fn cuLibraryGetGlobal(
        dptr: *mut CUdeviceptr,
        bytes: *mut usize,
        library: CUlibrary,
        name: *const c_char,
    ) -> CuResult<()> {
        let module = drv()?.library_get_module(library_key(library))?;
        Self::cuModuleGetGlobal_v2(dptr, bytes, module_handle(module), name)
    }
    unsafe fn cuKernelGetFunction(p_func: *mut CUfunction, kernel: CUkernel) -> CuResult<()> {
        let d = drv()?;
        out(
            p_func,
            function_handle(d.kernel_get_function(kernel_key(kernel))?),
        )
    }
    unsafe fn cuKernelGetName(name: *mut *const c_char, kernel: CUkernel) -> CuResult<()> {
        let f = drv()?.kernel_get_function(kernel_key(kernel))?;
        Self::cuFuncGetName(name, function_handle(f))
    }
    unsafe fn cuKernelGetAttribute(
        pi: *mut c_int,
        attrib: CUfunction_attribute,
        kernel: CUkernel,
        _dev: CUdevice,
    ) -> CuResult<()> {
        let f = drv()?.kernel_get_function(kernel_key(kernel))?;
        Self::cuFuncGetAttribute(pi, attrib, function_handle(f))
    }
    unsafe fn cuGetExportTable(
        _table: *mut *const c_void,
        _table_id: *const CUuuid,
    ) -> CuResult<()> {
        Err(CuError {
            code: CUDA_ERROR_NOT_SUPPORTED,
            message: "a library asked for the driver's private export tables, as NVIDIA's CUDA \
                      runtime does (a program built with nvcc's default `-cudart static`, or \
                      NVIDIA's libcudart.so). cumock does not imitate those tables. Build with \
                      `nvcc -cudart shared` and run with cumock's own runtime first in the \
                      library path: `cumock exec -- PROGRAM`, or \
                      LD_LIBRARY_PATH=$(cumock lib-path)"
                .into(),
            severity: Severity::WouldCrash,
        })
    }
}

// ---------------------------------------------------------------- images and parameters

/// `CUlaunchConfig` as cuda.h lays it out (checked by tests/header.rs).
#[repr(C)]
#[derive(Clone, Copy)]
struct LaunchConfig {
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared: c_uint,
    stream: CUstream,
    attrs: *mut c_void,
    num_attrs: c_uint,
}

/// Reads a module image from memory: a fatbin (with or without the runtime's wrapper) or
/// an ELF as long as its header says, text up to its NUL.
///
/// # Safety
/// `image` points to an image the program built, as cuModuleLoadData requires.
unsafe fn image_bytes(image: *const c_void) -> CuResult<Image> {
    if image.is_null() {
        return Err(invalid("image is NULL"));
    }
    let p = image.cast::<u8>();
    // Safety: every image is at least a NUL byte; a magic is read only after checking the
    // first byte could start one, and the headers are read in the order they are laid out.
    let magic = unsafe { p.cast::<u32>().read_unaligned() };
    let len = match magic {
        // The runtime's wrapper: { magic, version, const void *fatbin, ... }.
        0x466243B1 => {
            let inner = unsafe { p.add(8).cast::<*const c_void>().read_unaligned() };
            return unsafe { image_bytes(inner) };
        }
        // A fatbin: { magic, u16 version, u16 header size, u64 payload size }.
        0xBA55ED50 => {
            let header = unsafe { p.add(6).cast::<u16>().read_unaligned() } as usize;
            let payload = unsafe { p.add(8).cast::<u64>().read_unaligned() } as usize;
            header
                .checked_add(payload)
                .filter(|n| *n <= 1 << 32)
                .ok_or_else(|| {
                    CuError::new(
                        CUDA_ERROR_INVALID_IMAGE,
                        "the fatbin's header gives an impossible size",
                    )
                })?
        }
        // An ELF64 cubin: up to the end of its section header table.
        0x464C457F => {
            let shoff = unsafe { p.add(0x28).cast::<u64>().read_unaligned() } as usize;
            let shentsize = unsafe { p.add(0x3A).cast::<u16>().read_unaligned() } as usize;
            let shnum = unsafe { p.add(0x3C).cast::<u16>().read_unaligned() } as usize;
            shoff.saturating_add(shentsize * shnum).min(1 << 32)
        }
        _ => unsafe { CStr::from_ptr(p.cast()) }.to_bytes().len(),
    };
    // Safety: the image's own header (or its NUL) says it is this long.
    Ok(Image::classify(unsafe {
        std::slice::from_raw_parts(p, len)
    }))
}

/// Reads a module image from a file (cuModuleLoad, cuLibraryLoadFromFile).
fn read_image_file(fname: *const c_char) -> CuResult<Image> {
    // Safety: a non-NULL C string, per cuda.h (checked by the callers).
    let path = unsafe { CStr::from_ptr(fname) }
        .to_string_lossy()
        .into_owned();
    let mut bytes = std::fs::read(&path)
        .map_err(|e| CuError::new(CUDA_ERROR_FILE_NOT_FOUND, format!("{path}: {e}")))?;
    // A text file has no NUL; a PTX image in memory ends at one.
    if let Some(n) = bytes.iter().position(|b| *b == 0) {
        if !ptx_binary(&bytes) {
            bytes.truncate(n);
        }
    }
    Ok(Image::classify(&bytes))
}

fn ptx_binary(bytes: &[u8]) -> bool {
    cumock_ptx::fatbin::is_fatbin(bytes) || cumock_ptx::fatbin::is_elf(bytes)
}

/// The kernel's parameter buffer, from `kernelParams` (one pointer per parameter) or from
/// `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE), with the H200's answers to misuse.
///
/// # Safety
/// The arrays are the program's, as cuLaunchKernel requires.
unsafe fn param_buffer(
    d: &crate::model::Driver,
    f: u64,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CuResult<Vec<u8>> {
    if f == 0 {
        return Err(invalid_handle("the function is NULL"));
    }
    let layout = d.function_params(f)?;
    let size = crate::model::Driver::params_size(&layout);
    let mut buf = vec![0u8; size];
    match (kernel_params.is_null(), extra.is_null()) {
        (false, false) => Err(invalid("both kernelParams and extra are given: pass one")),
        (true, true) if size > 0 => Err(invalid(format!(
            "the kernel takes {} parameters and neither kernelParams nor extra is given",
            layout.len()
        ))),
        (true, true) => Ok(buf),
        (false, true) => {
            for (i, p) in layout.iter().enumerate() {
                // Safety: kernelParams holds one pointer per parameter, each to a value of
                // the parameter's size (cuda.h).
                let src = unsafe { *kernel_params.add(i) };
                if src.is_null() {
                    return Err(invalid(format!("kernelParams[{i}] is NULL")));
                }
                let at = p.offset as usize;
                // Safety: as above.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        src.cast::<u8>(),
                        buf[at..].as_mut_ptr(),
                        p.size as usize,
                    )
                };
            }
            Ok(buf)
        }
        (true, false) => {
            let (mut pointer, mut len) = (std::ptr::null::<u8>(), None::<usize>);
            let mut i = 0;
            loop {
                // Safety: `extra` is a list of (key, value) pointers ending at
                // CU_LAUNCH_PARAM_END (cuda.h); it is read one key at a time.
                let key = unsafe { *extra.add(i) } as usize;
                match key {
                    0x00 => break,
                    0x01 => pointer = unsafe { *extra.add(i + 1) }.cast(),
                    0x02 => {
                        let p = unsafe { *extra.add(i + 1) }.cast::<usize>();
                        if p.is_null() {
                            return Err(invalid("CU_LAUNCH_PARAM_BUFFER_SIZE points to NULL"));
                        }
                        len = Some(unsafe { p.read_unaligned() });
                    }
                    other => {
                        return Err(invalid(format!("{other:#x} is not a CU_LAUNCH_PARAM key")))
                    }
                }
                i += 2;
                if i > 64 {
                    return Err(invalid("extra is not ended by CU_LAUNCH_PARAM_END"));
                }
            }
            let len = len.ok_or_else(|| invalid("extra has no CU_LAUNCH_PARAM_BUFFER_SIZE"))?;
            if pointer.is_null() {
                return Err(invalid("extra has no CU_LAUNCH_PARAM_BUFFER_POINTER"));
            }
            if len != size {
                // The H200 answers a buffer of another size than the kernel's parameters so.
                return Err(CuError::new(
                    CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
                    format!(
                        "the parameter buffer is {len} bytes; the kernel's parameters take {size}"
                    ),
                ));
            }
            // Safety: the program's buffer of `len` bytes.
            unsafe { std::ptr::copy_nonoverlapping(pointer, buf.as_mut_ptr(), len) };
            Ok(buf)
        }
    }
}

/// A C string that lives as long as the process (cuFuncGetName hands out pointers the
/// program never frees): one per distinct name.
fn intern(name: &str) -> *const c_char {
    static NAMES: std::sync::Mutex<Vec<std::ffi::CString>> = std::sync::Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = names.iter().find(|n| n.to_bytes() == name.as_bytes()) {
        return n.as_ptr();
    }
    let c = std::ffi::CString::new(name).unwrap_or_default();
    let p = c.as_ptr();
    names.push(c);
    p
}

/// Writes a call's result to its out-parameter, or, when the call fails, zero there, as
/// the H200 does for many calls (probe out-params-on-failure); a NULL pointer is left
/// alone either way.
///
/// # Safety
/// `p` is NULL or valid for a write of `T`.
unsafe fn zero_on_failure<T: ZeroValue>(p: *mut T, r: CuResult<T>) -> CuResult<()> {
    match r {
        Ok(v) => out(p, v),
        Err(e) => {
            if !p.is_null() {
                out(p, T::ZERO)?;
            }
            Err(e)
        }
    }
}

/// What a failed call writes to an out-parameter of this type.
trait ZeroValue {
    const ZERO: Self;
}
impl ZeroValue for u64 {
    const ZERO: Self = 0;
}
impl ZeroValue for *const c_char {
    const ZERO: Self = std::ptr::null();
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
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE if i.on_host => {
            out(data.cast::<u32>(), CU_MEMORYTYPE_HOST)
        }
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE => out(data.cast::<u32>(), CU_MEMORYTYPE_DEVICE),
        CU_POINTER_ATTRIBUTE_DEVICE_POINTER | CU_POINTER_ATTRIBUTE_HOST_POINTER
            if i.on_host && !i.reachable =>
        {
            Err(invalid(
                "nothing has been granted access to this memory on the host yet",
            ))
        }
        CU_POINTER_ATTRIBUTE_DEVICE_POINTER => out(data.cast::<u64>(), ptr),
        CU_POINTER_ATTRIBUTE_HOST_POINTER if i.on_host => out(data.cast::<u64>(), ptr),
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

/// Checks a stream argument of an async operation.
fn stream(s: CUstream) -> CuResult<()> {
    drv()?.stream_check(stream_key(s))
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

/// Copies `s` into a caller's buffer of `len` bytes, truncating, always NUL-terminated.
fn copy_c_string(s: &str, dst: *mut c_char, len: usize) {
    let n = s.len().min(len - 1);
    // Safety: cuda.h: dst holds len bytes; n + 1 <= len.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr().cast::<c_char>(), dst, n);
        *dst.add(n) = 0;
    }
}

// The C exports: all 707 of the real driver, each calling `Mock`'s method of its name
// (the not-emulated default where there is none here). Nothing is listed by hand: the
// list is the declaration in `cumock_abi`, generated from NVIDIA's headers.
cumock_abi::for_each_export!(export_all);
