//! The stream-ordered memory allocator (cuda.h's group CUDA_MALLOC_ASYNC): cuMemAllocAsync
//! and cuMemFreeAsync, memory pools (create, destroy, attributes, trimming, access), and
//! exporting a pool as a file descriptor. The model is `model::pools`; the device's
//! default and current pools (cuDeviceGetDefaultMemPool...) are in `devices.rs`, as cuda.h
//! files them. A pool and its allocations shared with another process
//! (cuMemPoolImportFromShareableHandle, cuMemPoolExportPointer, cuMemPoolImportPointer)
//! are `model::pool_ipc`'s.

use super::Mock;
use crate::boundary::out;
use crate::diagnostics::{created, Made};
use crate::model::error::*;
use crate::model::ids::PoolId;
use crate::model::pools::{attribute_is_int, PoolAttribute};
use cumock_abi::*;
use std::ffi::c_int;
use std::os::fd::IntoRawFd;

/// Notes where a pool allocation was made (0, for 0 bytes, is nothing).
fn made(p: u64) -> u64 {
    if p == 0 {
        p
    } else {
        created(Made::PoolAllocation, p)
    }
}

impl StreamOrderedMemoryAllocatorApi for Mock {
    emulate! {
        fn cuMemAllocAsync(d; dptr, bytesize, s) {
            // Observed: a failure (out of memory) writes 0.
            dptr.zero_on_failure(d.alloc_async(bytesize as u64, s, None).map(made))
        }

        fn cuMemAllocFromPoolAsync(d; dptr, bytesize, pool, s) {
            // Observed: a NULL pool writes 0 too.
            dptr.zero_on_failure(d.alloc_async(bytesize as u64, s, Some(pool)).map(made))
        }

        fn cuMemFreeAsync(d; dptr, s) {
            d.free_async(dptr.get(), s)
        }

        fn cuMemPoolCreate(d; pool, props) {
            pool.write_key(created_pool(d.pool_create(&props)?))
        }

        fn cuMemPoolDestroy(d; pool) {
            d.pool_destroy(pool)
        }

        fn cuMemPoolGetAttribute(d; pool, attr, #[nonnull] value) {
            match d.pool_attribute(pool, attr)? {
                PoolAttribute::Int(v) => out(value.cast::<c_int>(), v),
                PoolAttribute::Bytes(v) => out(value.cast::<u64>(), v),
            }
        }

        fn cuMemPoolSetAttribute(d; pool, attr, value) {
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
            d.pool_set_attribute(pool, attr, v)
        }

        fn cuMemPoolTrimTo(d; pool, keep) {
            d.pool_trim(pool, keep as u64)
        }

        // Observed: nothing to change (a count of 0) succeeds; NULL with a count is an
        // ordinary error on the H200, not a crash.
        fn cuMemPoolSetAccess(d; pool, #[slice] descs, _count) {
            d.pool_set_access(pool, &super::access_grants(descs)?)
        }

        fn cuMemPoolGetAccess(d; flags, pool, location) {
            let f = d.pool_access(pool, location.type_, location.id)?;
            flags.write(CUmemAccess_flags::from(f))
        }

        // The handle's type says what is written: a POSIX file descriptor, an int.
        fn cuMemPoolExportToShareableHandle(d; #[nonnull] handle_out, pool, handle_type, flags) {
            let fd = d.pool_export(pool, handle_type, flags)?;
            crate::diagnostics::note_exported_fd(&fd);
            out(handle_out.cast::<c_int>(), fd.into_raw_fd())
        }

        /// The handle is the exporter's fd, passed by value (cuda.h: `(void *)(uintptr_t)fd`).
        fn cuMemPoolImportFromShareableHandle(d; pool_out, #[raw] handle, handle_type, flags) {
            let fd = i32::try_from(handle as usize)
                .map_err(|_| invalid(format!("{:#x} is not a file descriptor", handle as usize)))?;
            // The H200 destroys nothing through the pool variable a failed import was
            // given (probe api_gaps2: cuMemPoolDestroy of it, after an import from
            // /dev/null failed, is CUDA_ERROR_INVALID_VALUE): the mock takes that as the
            // driver writing NULL there on failure.
            match d.pool_import(fd, handle_type, flags) {
                Ok(pool) => pool_out.write_key(created_pool(pool)),
                Err(e) => {
                    pool_out.write(std::ptr::null_mut())?;
                    Err(e)
                }
            }
        }

        fn cuMemPoolExportPointer(d; share_data_out, ptr) {
            let data = d.pool_export_pointer(ptr.get())?;
            // Safety: cuda.h's CUmemPoolPtrExportData is 64 bytes.
            unsafe { share_data_out.cast::<[u8; 64]>() }.write(data)
        }

        // cuda.h declares shareData without `const`; the call reads it (roles.txt: in).
        fn cuMemPoolImportPointer(d; ptr_out, pool, #[nonnull] share_data) {
            // Safety: cuda.h: 64 bytes of a CUmemPoolPtrExportData (read unaligned: the
            // program's).
            let data = unsafe { share_data.cast::<[u8; 64]>().read_unaligned() };
            ptr_out.write(d.pool_import_pointer(pool, &data)?)
        }

        // CUDA 13's pools by location and allocation type.

        fn cuMemGetDefaultMemPool(d; pool_out, location, type_) {
            let at = d.pool_place(type_, location.type_, location.id)?;
            pool_out.write_key(d.default_pool_at(at)?)
        }

        fn cuMemGetMemPool(d; pool_out, location, type_) {
            let at = d.pool_place(type_, location.type_, location.id)?;
            pool_out.write_key(d.current_pool_at(at)?)
        }

        fn cuMemSetMemPool(d; location, type_, pool) {
            let at = d.pool_place(type_, location.type_, location.id)?;
            d.set_current_pool_at(at, pool)
        }
    }
}

/// Notes where the program made a pool, when leak checking is on (as [`created`] does for
/// the handles the model keeps by number).
fn created_pool(pool: PoolId) -> PoolId {
    PoolId::from_handle(created(Made::Pool, pool.handle()))
}
