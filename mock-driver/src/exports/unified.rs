//! Unified addressing (cuda.h's group CUDA_UNIFIED): what the driver knows of a pointer
//! (cuPointerGetAttribute and cuPointerGetAttributes).

use super::{CUdevicePtr, Mock};
use crate::boundary::{drv, out};
use crate::model::error::*;
use cumock_abi::consts::*;
use cumock_abi::*;
use std::ffi::{c_int, c_uint, c_void};

impl UnifiedAddressingApi for Mock {
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
        // Observed: neither VMM nor pool memory can be shared with cuIpcGetMemHandle.
        CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE => {
            out(data.cast::<u32>(), u32::from(!i.vmm && i.pool == 0))
        }
        CU_POINTER_ATTRIBUTE_RANGE_START_ADDR => out(data.cast::<u64>(), i.range.0),
        CU_POINTER_ATTRIBUTE_RANGE_SIZE => out(data.cast::<u64>(), i.range.1),
        CU_POINTER_ATTRIBUTE_MAPPED => out(data.cast::<u32>(), 1),
        CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES => out(data.cast::<u64>(), i.handle_types as u64),
        CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE => {
            out(data.cast::<u32>(), u32::from(i.rdma))
        }
        CU_POINTER_ATTRIBUTE_ACCESS_FLAGS => out(data.cast::<u32>(), u32::from(i.access)),
        CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE => out(data.cast::<u64>(), i.pool),
        CU_POINTER_ATTRIBUTE_MAPPING_SIZE => out(data.cast::<u64>(), i.mapping.1),
        CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR => out(data.cast::<u64>(), i.mapping.0),
        CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID => out(data.cast::<u64>(), i.buffer_id),
        other => Err(invalid(format!("{other} is not a CUpointer_attribute"))),
    }
}
