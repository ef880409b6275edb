//! The stream-ordered memory allocator (cuda.h's group CUDA_MALLOC_ASYNC): cuMemAllocAsync
//! and cuMemFreeAsync, memory pools (create, destroy, attributes, trimming, access), and
//! exporting a pool as a file descriptor. The model is `model::pools`; the device's
//! default and current pools (cuDeviceGetDefaultMemPool...) are in `devices.rs`, as cuda.h
//! files them. Importing a pool or its pointers into another process
//! (cuMemPoolImportFromShareableHandle, cuMemPoolExportPointer, cuMemPoolImportPointer)
//! is not emulated.

use super::{zero_on_failure, CUdevicePtr, Mock};
use crate::boundary::{Handle, drv, input, out, stream_key};
use crate::diagnostics::{created, Made};
use crate::model::error::*;
use crate::model::pools::{attribute_is_int, Place, PoolAttribute};
use cumock_abi::*;
use std::ffi::{c_int, c_ulonglong, c_void};
use std::os::fd::IntoRawFd;

/// Notes where a pool allocation was made (0, for 0 bytes, is nothing).
fn made(p: u64) -> u64 {
    if p == 0 {
        p
    } else {
        created(Made::PoolAllocation, p)
    }
}

/// The place (location and allocation type) a CUDA 13 location-based pool call names.
fn place(d: &crate::model::Driver, location: *mut CUmemLocation, type_: c_int) -> CuResult<Place> {
    // Safety: cuda.h: NULL or a CUmemLocation.
    let loc = unsafe { input(location.cast_const(), "location") }?;
    d.pool_place(type_, loc.type_, loc.id)
}

impl StreamOrderedMemoryAllocatorApi for Mock {
    unsafe fn cuMemAllocAsync(
        dptr: *mut CUdevicePtr,
        bytesize: usize,
        s: CUstream,
    ) -> CuResult<()> {
        let d = drv()?;
        if dptr.is_null() {
            return Err(invalid("dptr is NULL"));
        }
        // Observed: a failure (out of memory) writes 0.
        zero_on_failure(
            dptr,
            d.alloc_async(bytesize as u64, stream_key(s), None)
                .map(made),
        )
    }

    unsafe fn cuMemAllocFromPoolAsync(
        dptr: *mut CUdevicePtr,
        bytesize: usize,
        pool: CUmemoryPool,
        s: CUstream,
    ) -> CuResult<()> {
        let d = drv()?;
        if dptr.is_null() {
            return Err(invalid("dptr is NULL"));
        }
        // Observed: a NULL pool writes 0 too.
        zero_on_failure(
            dptr,
            d.alloc_async(bytesize as u64, stream_key(s), Some(Handle::key(pool)))
                .map(made),
        )
    }

    unsafe fn cuMemFreeAsync(dptr: CUdevicePtr, s: CUstream) -> CuResult<()> {
        drv()?.free_async(dptr, stream_key(s))
    }

    unsafe fn cuMemPoolCreate(
        pool: *mut CUmemoryPool,
        props: *const CUmemPoolProps,
    ) -> CuResult<()> {
        let d = drv()?;
        let p = input(props, "poolProps")?;
        if pool.is_null() {
            return Err(invalid("pool is NULL"));
        }
        out(pool, CUmemoryPool::of(created(Made::Pool, d.pool_create(&p)?)))
    }

    unsafe fn cuMemPoolDestroy(pool: CUmemoryPool) -> CuResult<()> {
        drv()?.pool_destroy(Handle::key(pool))
    }

    unsafe fn cuMemPoolGetAttribute(
        pool: CUmemoryPool,
        attr: c_int,
        value: *mut c_void,
    ) -> CuResult<()> {
        let d = drv()?;
        if value.is_null() {
            return Err(invalid("value is NULL"));
        }
        match d.pool_attribute(Handle::key(pool), attr)? {
            PoolAttribute::Int(v) => out(value.cast::<c_int>(), v),
            PoolAttribute::Bytes(v) => out(value.cast::<u64>(), v),
        }
    }

    unsafe fn cuMemPoolSetAttribute(
        pool: CUmemoryPool,
        attr: c_int,
        value: *mut c_void,
    ) -> CuResult<()> {
        let d = drv()?;
        let is_int = attribute_is_int(attr)
            .ok_or_else(|| invalid(format!("{attr} is not a CUmemPool_attribute")))?;
        if value.is_null() {
            // Observed: the H200 crashes here (cuMemPoolGetAttribute refuses it).
            return Err(CuError::would_crash(
                "value is NULL (the real driver crashes here)",
            ));
        }
        // Safety: cuda.h: value points to an int for the reuse attributes, to a
        // cuuint64_t for the others.
        let v = unsafe {
            if is_int {
                PoolAttribute::Int(value.cast::<c_int>().read_unaligned())
            } else {
                PoolAttribute::Bytes(value.cast::<u64>().read_unaligned())
            }
        };
        d.pool_set_attribute(Handle::key(pool), attr, v)
    }

    unsafe fn cuMemPoolTrimTo(pool: CUmemoryPool, keep: usize) -> CuResult<()> {
        drv()?.pool_trim(Handle::key(pool), keep as u64)
    }

    unsafe fn cuMemPoolSetAccess(
        pool: CUmemoryPool,
        map: *const CUmemAccessDesc,
        count: usize,
    ) -> CuResult<()> {
        let d = drv()?;
        if count == 0 {
            // Observed: nothing to change succeeds.
            return d.pool_set_access(Handle::key(pool), &[]);
        }
        if map.is_null() {
            // Observed: an ordinary error on the H200, not a crash.
            return Err(invalid("map is NULL with a non-zero count"));
        }
        if count > 4096 {
            return Err(invalid(format!(
                "count {count} is more descriptors than there can be devices"
            )));
        }
        // Safety: cuda.h: map points to count descriptors.
        let descs = unsafe { std::slice::from_raw_parts(map, count) };
        let grants: Vec<(i32, i32, i32)> = descs
            .iter()
            .map(|x| (x.location.type_, x.location.id, x.flags))
            .collect();
        d.pool_set_access(Handle::key(pool), &grants)
    }

    unsafe fn cuMemPoolGetAccess(
        flags: *mut CUmemAccess_flags,
        pool: CUmemoryPool,
        location: *mut CUmemLocation,
    ) -> CuResult<()> {
        let d = drv()?;
        let loc = input(location.cast_const(), "location")?;
        if flags.is_null() {
            return Err(invalid("flags is NULL"));
        }
        let f = d.pool_access(Handle::key(pool), loc.type_, loc.id)?;
        out(flags, CUmemAccess_flags::from(f))
    }

    unsafe fn cuMemPoolExportToShareableHandle(
        handle_out: *mut c_void,
        pool: CUmemoryPool,
        handle_type: CUmemAllocationHandleType,
        flags: c_ulonglong,
    ) -> CuResult<()> {
        let d = drv()?;
        if handle_out.is_null() {
            return Err(invalid("handle_out is NULL"));
        }
        let fd = d.pool_export(Handle::key(pool), handle_type, flags)?;
        crate::diagnostics::note_exported_fd(&fd);
        out(handle_out.cast::<c_int>(), fd.into_raw_fd())
    }

    unsafe fn cuMemGetDefaultMemPool(
        pool_out: *mut CUmemoryPool,
        location: *mut CUmemLocation,
        type_: CUmemAllocationType,
    ) -> CuResult<()> {
        let d = drv()?;
        if pool_out.is_null() {
            return Err(invalid("pool_out is NULL"));
        }
        let at = place(d, location, type_)?;
        out(pool_out, CUmemoryPool::of(d.default_pool_at(at)?))
    }

    unsafe fn cuMemGetMemPool(
        pool_out: *mut CUmemoryPool,
        location: *mut CUmemLocation,
        type_: CUmemAllocationType,
    ) -> CuResult<()> {
        let d = drv()?;
        if pool_out.is_null() {
            return Err(invalid("pool is NULL"));
        }
        let at = place(d, location, type_)?;
        out(pool_out, CUmemoryPool::of(d.current_pool_at(at)?))
    }

    unsafe fn cuMemSetMemPool(
        location: *mut CUmemLocation,
        type_: CUmemAllocationType,
        pool: CUmemoryPool,
    ) -> CuResult<()> {
        let d = drv()?;
        let at = place(d, location, type_)?;
        d.set_current_pool_at(at, Handle::key(pool))
    }
}
