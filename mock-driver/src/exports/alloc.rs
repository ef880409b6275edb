//! Device memory allocations over `model::alloc`: cuMemAlloc, cuMemFree, cuMemGetInfo,
//! cuMemGetAddressRange (what allocation an address lies in) and
//! cuMemGetHandleForAddressRange (a dma-buf of a range). cuda.h files them under
//! `MemoryApi`, whose methods (exports/mod.rs) call these.

use super::out_pair;
use crate::diagnostics::{created, Made};
use crate::model::error::*;

emulate! {

    /// A dma-buf is a kernel object the GPU's kernel driver exports, which an RDMA NIC or
    /// another device driver imports: the mock's device memory is the host's, with no
    /// kernel driver to export it, so a range the H200 would export is
    /// CUDA_ERROR_NOT_SUPPORTED, said. What the H200 refuses is refused alike (probe
    /// api_gaps3, dma-buf): a handle type other than CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
    /// flags other than 0 (the PCIe mapping flag CUDA_ERROR_NOT_SUPPORTED), a range not
    /// page-aligned or empty, or not all device memory (past a cuMemAlloc allocation, an
    /// unmapped part of a reservation, page-locked host or managed memory).
    pub(super) fn cuMemGetHandleForAddressRange(d; #[nonnull] handle, dptr, size, handle_type, flags) {
        const DMA_BUF_FD: i32 = 1;
        const MAPPING_TYPE_PCIE: u64 = 1;
        if handle_type != DMA_BUF_FD {
            return Err(invalid(format!(
                "handle type {handle_type}: CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD (1) is the only one"
            )));
        }
        if flags & !MAPPING_TYPE_PCIE != 0 {
            return Err(invalid(format!(
                "flags {flags:#x}: 0 or CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE (1)"
            )));
        }
        if size == 0 || !dptr.get().is_multiple_of(4096) || !size.is_multiple_of(4096) {
            return Err(invalid(format!(
                "{size} bytes at {:#x}: a range of whole 4 KiB pages",
                dptr.get()
            )));
        }
        // Past its arguments' checks the H200 sets the fd to -1 before it fails.
        // Safety: the program's room for the fd (an int), as cuda.h says of a dma-buf.
        unsafe { handle.cast::<std::ffi::c_int>().write_unaligned(-1) };
        if flags == MAPPING_TYPE_PCIE {
            return Err(not_supported(
                "CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE: the H200 maps no dma-buf over PCIe",
            ));
        }
        d.check_device_memory_range(dptr, size as u64)?;
        Err(not_supported(
            "cuMemGetHandleForAddressRange: the mock's device memory is the host's, and no \
             kernel driver exports it as a dma-buf",
        ))
    }

    pub(super) fn cuMemGetInfo_v2(d; free, total) {
        // The H200 zeroes both when it fails (no current context, say).
        let info = d.mem_info().map(|(f, t)| (f as usize, t as usize));
        out_pair(Some(free), Some(total), info, |_| true)
    }

    pub(super) fn cuMemAlloc_v2(d; dptr, bytesize) {
        d.capture_check_unsafe("cuMemAlloc")?;
        dptr.zero_on_failure(
            d.mem_alloc(bytesize as u64)
                .map(|p| created(Made::Reservation, p.get())),
        )
    }

    pub(super) fn cuMemFree_v2(d; dptr) {
        d.mem_free(dptr)
    }

    pub(super) fn cuMemGetAddressRange_v2(d; pbase, psize, dptr) {
        d.ctx_device(None)?;
        // The H200 zeroes what it was asked for when nothing is found.
        let found = d.address_range(dptr).map(|(b, s)| (b.get(), s as usize));
        out_pair(pbase, psize, found, |_| true)
    }
}
