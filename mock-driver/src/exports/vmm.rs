//! Virtual memory management (cuda.h's group CUDA_VA), what cumock is for: reserving
//! address ranges, creating physical allocations, mapping them, granting access, sharing
//! them between processes as file descriptors, and the granularity all of it is in.

use super::{zero_on_failure, CUdevicePtr, Mock};
use crate::boundary::{device_ptr, drv, input, out};
use crate::diagnostics::{created, Made};
use crate::model::error::*;
use cumock_abi::consts::*;
use cumock_abi::result::*;
use cumock_abi::*;
use std::ffi::{c_int, c_void};
use std::os::fd::IntoRawFd;

impl VirtualMemoryApi for Mock {
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
                d.address_reserve(size as u64, alignment as u64, device_ptr(addr), flags)?
                    .get(),
            ),
        )
    }

    unsafe fn cuMemAddressFree(ptr: CUdevicePtr, size: usize) -> CuResult<()> {
        drv()?.address_free(device_ptr(ptr), size as u64)
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
        drv()?.map(device_ptr(ptr), size as u64, offset as u64, handle, flags)?;
        created(Made::Mapping, ptr);
        Ok(())
    }

    unsafe fn cuMemUnmap(ptr: CUdevicePtr, size: usize) -> CuResult<()> {
        for w in drv()?.unmap(device_ptr(ptr), size as u64)? {
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
        for w in d.set_access(device_ptr(ptr), size as u64, &grants)? {
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
        match d.get_access(loc.type_, loc.id, device_ptr(ptr)) {
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
        out(handle, d.retain_allocation_handle(device_ptr(addr as u64))?)
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
}
