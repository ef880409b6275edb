//! Virtual memory management (cuda.h's group CUDA_VA), what cumock is for: reserving
//! address ranges, creating physical allocations, mapping them, granting access, sharing
//! them between processes as file descriptors, and the granularity all of it is in.

use super::Mock;
use crate::boundary::{device_ptr, out};
use crate::diagnostics::{created, Made};
use cumock_abi::consts::*;
use cumock_abi::result::*;
use cumock_abi::*;
use std::ffi::c_int;
use std::os::fd::IntoRawFd;

impl VirtualMemoryApi for Mock {
    emulate! {
        fn cuMemGetAllocationGranularity(d; granularity, prop, option) {
            let g = d.granularity(prop.location.type_, prop.location.id, option)?;
            granularity.write(g as usize)
        }

        fn cuMemAddressReserve(d; ptr, size, alignment, addr, flags) {
            let range = d.address_reserve(size as u64, alignment as u64, addr, flags)?;
            ptr.write(created(Made::Reservation, range.get()))
        }

        fn cuMemAddressFree(d; ptr, size) {
            d.address_free(ptr, size as u64)
        }

        fn cuMemCreate(d; handle, size, prop, flags) {
            let p = d.check_create(size as u64, &prop)?;
            handle.write(created(Made::Allocation, d.create(size as u64, p, flags)?))
        }

        fn cuMemRelease(d; handle) {
            d.release(handle)
        }

        fn cuMemMap(d; ptr, size, offset, handle, flags) {
            d.map(ptr, size as u64, offset as u64, handle, flags)?;
            created(Made::Mapping, ptr.get());
            Ok(())
        }

        fn cuMemUnmap(d; ptr, size) {
            for w in d.unmap(ptr, size as u64)? {
                crate::diagnostics::warn("cuMemUnmap", &w);
            }
            Ok(())
        }

        fn cuMemGetAccess(d; flags, location, ptr) {
            match d.get_access(location.type_, location.id, ptr) {
                // A location the driver rejects leaves the flags alone; an address without a
                // mapping zeroes them (probe out-params-on-failure).
                Err(e) if e.code == CUDA_ERROR_INVALID_DEVICE => Err(e),
                r => flags.zero_on_failure(r),
            }
        }

        fn cuMemImportFromShareableHandle(d; handle, os_handle, handle_type) {
            // For POSIX file descriptors, the fd travels in the pointer's value.
            let fd = os_handle as usize as i64;
            let fd = i32::try_from(fd).unwrap_or(-1);
            handle.write(created(Made::Allocation, d.import(fd, handle_type)?))
        }

        fn cuMemRetainAllocationHandle(d; handle, addr) {
            handle.write(d.retain_allocation_handle(device_ptr(addr as u64))?)
        }

        fn cuMemGetAllocationPropertiesFromHandle(d; prop, handle) {
            let p = d.allocation_properties(handle)?;
            prop.write(CUmemAllocationProp {
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
            })
        }

        fn cuMemSetAccess(d; ptr, size, #[nonempty] descs, _count) {
            for w in d.set_access(ptr, size as u64, &super::access_grants(descs)?)? {
                crate::diagnostics::warn("cuMemSetAccess", &w);
            }
            Ok(())
        }

        // The handle's type says what is written: a POSIX file descriptor, an int.
        fn cuMemExportToShareableHandle(d; #[nonnull] shareable, handle, handle_type, flags) {
            let fd = d.export(handle, handle_type, flags)?;
            crate::diagnostics::note_exported_fd(&fd);
            out(shareable.cast::<c_int>(), fd.into_raw_fd())
        }
    }
}
