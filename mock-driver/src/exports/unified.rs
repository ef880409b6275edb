//! Unified addressing (cuda.h's group CUDA_UNIFIED): what the driver knows of a pointer
//! (cuPointerGetAttribute and cuPointerGetAttributes).

use super::{CUdevicePtr, Mock};
use crate::boundary::{device_ptr, out};
use crate::model::error::*;
use cumock_abi::consts::*;
use cumock_abi::*;
use std::ffi::{c_int, c_void};

impl UnifiedAddressingApi for Mock {
    emulate! {
        fn cuPointerGetAttribute(d; #[nonnull] data, attribute, ptr) {
            write_pointer_attribute(d, data, attribute, ptr.get(), true)
        }

        fn cuPointerGetAttributes(d; num, #[nonempty] attrs, #[nonempty] outs, ptr) {
            if num > 64 {
                return Err(invalid(format!(
                    "numAttributes {num} is more than there are attributes"
                )));
            }
            for (a, o) in attrs.iter().zip(outs) {
                if !o.is_null() {
                    // The plural form reports unknown pointers as zeroed attributes, not errors.
                    write_pointer_attribute(d, *o, *a, ptr.get(), false)?;
                }
            }
            Ok(())
        }

        /// cuda.h: SYNC_MEMOPS is the only attribute that may be set; `value` points to
        /// an unsigned int (0 or not).
        fn cuPointerSetAttribute(d; value, attribute, ptr) {
            if attribute != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS {
                return Err(invalid(format!(
                    "attribute {attribute} cannot be set: CU_POINTER_ATTRIBUTE_SYNC_MEMOPS is the only one"
                )));
            }
            // Safety: cuda.h: value points to an unsigned int, where not NULL.
            let on = unsafe { crate::boundary::input(value.cast::<u32>(), "value") }? != 0;
            d.pointer_set_sync_memops(ptr, on)
        }

        // ---- managed memory: advice, prefetches, range attributes ----

        fn cuMemAdvise_v2(d; ptr, count, advice, location) {
            d.mem_advise(ptr.get(), count as u64, advice, location.type_, location.id)
        }

        fn cuMemPrefetchAsync_v2(d; ptr, count, location, flags, s) {
            d.stream_check(s)?;
            d.mem_prefetch(ptr.get(), count as u64, location.type_, location.id, flags)
        }

        /// The plural of cuMemRangeGetAttribute: each attribute as the singular answers
        /// it, the first failure the call's.
        fn cuMemRangeGetAttributes(d; #[nonempty] data, #[nonempty] data_sizes, #[nonempty] attributes, _num_attributes, ptr, count) {
            d.ctx_device(None)?;
            for ((&out, &size), &attribute) in data.iter().zip(data_sizes).zip(attributes) {
                Self::cuMemRangeGetAttribute(out, size, attribute, ptr.get(), count)?;
            }
            Ok(())
        }

        // The attribute is read before the pointer is checked (`#[late]`).
        fn cuMemRangeGetAttribute(d; #[late] data, data_size, attribute, ptr, count) {
            use crate::model::managed::RangeAttribute as A;
            let a = match attribute {
                1 => A::ReadMostly,
                2 => A::Preferred,
                3 => A::AccessedBy,
                4 => A::LastPrefetch,
                5 => A::PreferredType,
                6 => A::PreferredId,
                7 => A::LastPrefetchType,
                8 => A::LastPrefetchId,
                other => return Err(invalid(format!("{other} is not a CUmem_range_attribute"))),
            };
            let data = data.check()?.as_ptr();
            let fits = if a == A::AccessedBy {
                data_size > 0 && data_size.is_multiple_of(4)
            } else {
                data_size == 4
            };
            if !fits {
                return Err(invalid(format!(
                    "dataSize {data_size} does not fit the attribute (4 bytes, or a multiple of 4 \
                     for ACCESSED_BY)"
                )));
            }
            let values = d.mem_range_attribute(ptr.get(), count as u64, a, data_size / 4)?;
            for (i, v) in values.into_iter().enumerate() {
                // Safety: cuda.h: data holds dataSize bytes, 4 for each value.
                out(unsafe { data.cast::<i32>().add(i) }, v)?;
            }
            Ok(())
        }
    }

    // ---- managed memory: advice, prefetches, range attributes ----

    unsafe fn cuMemAdvise(
        ptr: CUdevicePtr,
        count: usize,
        advice: CUmem_advise,
        device: CUdevice,
    ) -> CuResult<()> {
        Self::cuMemAdvise_v2(ptr, count, advice, legacy_location(device))
    }

    unsafe fn cuMemPrefetchAsync(
        ptr: CUdevicePtr,
        count: usize,
        device: CUdevice,
        s: CUstream,
    ) -> CuResult<()> {
        Self::cuMemPrefetchAsync_v2(ptr, count, legacy_location(device), 0, s)
    }

    // ---- batches of prefetches and discards (CUDA 13.0): exports/batches.rs ----

    unsafe fn cuMemPrefetchBatchAsync(
        dptrs: *mut CUdevicePtr,
        sizes: *mut usize,
        count: usize,
        locs: *mut CUmemLocation,
        loc_idxs: *mut usize,
        num_locs: usize,
        flags: u64,
        s: CUstream,
    ) -> CuResult<()> {
        // Safety: the export's contract, which the function it calls has too.
        unsafe {
            super::batches::prefetch_batch(
                dptrs, sizes, count, locs, loc_idxs, num_locs, flags, s, false,
            )
        }
    }

    unsafe fn cuMemDiscardAndPrefetchBatchAsync(
        dptrs: *mut CUdevicePtr,
        sizes: *mut usize,
        count: usize,
        locs: *mut CUmemLocation,
        loc_idxs: *mut usize,
        num_locs: usize,
        flags: u64,
        s: CUstream,
    ) -> CuResult<()> {
        // Safety: as above.
        unsafe {
            super::batches::prefetch_batch(
                dptrs, sizes, count, locs, loc_idxs, num_locs, flags, s, true,
            )
        }
    }

    unsafe fn cuMemDiscardBatchAsync(
        dptrs: *mut CUdevicePtr,
        sizes: *mut usize,
        count: usize,
        flags: u64,
        s: CUstream,
    ) -> CuResult<()> {
        // Safety: as above.
        unsafe { super::batches::discard_batch(dptrs, sizes, count, flags, s) }
    }
}

/// A legacy (CUDA 12) advice or prefetch target: a device ordinal, or CU_DEVICE_CPU.
fn legacy_location(device: CUdevice) -> CUmemLocation {
    if device == -1 {
        CUmemLocation {
            type_: CU_MEM_LOCATION_TYPE_HOST,
            id: 0,
        }
    } else {
        CUmemLocation {
            type_: CU_MEM_LOCATION_TYPE_DEVICE,
            id: device,
        }
    }
}

unsafe fn write_pointer_attribute(
    d: &crate::model::Driver,
    data: *mut c_void,
    attribute: c_int,
    ptr: CUdevicePtr,
    strict: bool,
) -> CuResult<()> {
    let info = d.pointer_info(device_ptr(ptr));
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
            // CU_DEVICE_INVALID wherever the driver gave nothing out: NULL, a stack
            // address, a reservation's unmapped part (the H200: probe cuda_python,
            // pointers-and-advice; case pointer-attributes-plural), not cuda.h's "default
            // NULL values" 0.
            CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL => out(data.cast::<i32>(), -2),
            _ => out(data.cast::<u32>(), 0),
        };
    };
    match attribute {
        CU_POINTER_ATTRIBUTE_CONTEXT => {
            out(data.cast::<u64>(), i.context.map_or(0, |c| c.handle()))
        }
        // Managed memory is device memory to the H200, wherever the mock keeps it.
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE if i.on_host && !i.managed => {
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
        CU_POINTER_ATTRIBUTE_SYNC_MEMOPS => out(
            data.cast::<u32>(),
            u32::from(d.pointer_sync_memops(i.buffer_id)),
        ),
        CU_POINTER_ATTRIBUTE_BUFFER_ID => out(data.cast::<u64>(), i.buffer_id),
        CU_POINTER_ATTRIBUTE_IS_MANAGED => out(data.cast::<u32>(), u32::from(i.managed)),
        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL => out(data.cast::<i32>(), i.device as i32),
        // Observed: neither VMM nor pool memory can be shared with cuIpcGetMemHandle.
        CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE => {
            out(data.cast::<u32>(), u32::from(!i.vmm && i.pool.is_none()))
        }
        CU_POINTER_ATTRIBUTE_RANGE_START_ADDR => out(data.cast::<u64>(), i.range.0),
        CU_POINTER_ATTRIBUTE_RANGE_SIZE => out(data.cast::<u64>(), i.range.1),
        CU_POINTER_ATTRIBUTE_MAPPED => out(data.cast::<u32>(), 1),
        CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES => out(data.cast::<u64>(), i.handle_types as u64),
        CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE => {
            out(data.cast::<u32>(), u32::from(i.rdma))
        }
        CU_POINTER_ATTRIBUTE_ACCESS_FLAGS => out(data.cast::<u32>(), u32::from(i.access)),
        CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE => out(
            data.cast::<u64>(),
            i.pool.map_or(0, crate::model::ids::PoolId::handle),
        ),
        CU_POINTER_ATTRIBUTE_MAPPING_SIZE => out(data.cast::<u64>(), i.mapping.1),
        CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR => out(data.cast::<u64>(), i.mapping.0),
        CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID => out(data.cast::<u64>(), i.buffer_id),
        other => Err(invalid(format!("{other} is not a CUpointer_attribute"))),
    }
}
