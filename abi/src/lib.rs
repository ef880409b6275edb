//! The part of the CUDA driver ABI that cumock speaks, written out from NVIDIA's `cuda.h`
//! (CUDA 13.0). `tests/header.rs` compiles a C file against the real header and compares
//! every size, offset and value here with it, so a mistake fails CI.
//!
//! Enum-typed arguments are kept as raw integers (`i32`/`u32`): a caller may pass any value,
//! and an out-of-range one must become an error code, not undefined behaviour.

use std::ffi::c_void;

mod generated;
pub use generated::{CU_DEVICE_ATTRIBUTES, CU_POINTER_ATTRIBUTES, CU_RESULTS, PROC_ENTRIES};

pub type CUresult = u32;
pub type CUdevice = i32;
pub type CUdeviceptr = u64;
pub type CUmemGenericAllocationHandle = u64;
pub type CUcontext = *mut c_void;
pub type CUstream = *mut c_void;
pub type CUevent = *mut c_void;

/// `CUmemLocation`: where an allocation lives, or which device an access grant is for.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CUmemLocation {
    /// `CUmemLocationType`, raw.
    pub type_: i32,
    pub id: i32,
}

/// The anonymous `allocFlags` struct inside `CUmemAllocationProp`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CUmemAllocFlags {
    pub compression_type: u8,
    pub gpu_direct_rdma_capable: u8,
    pub usage: u16,
    pub reserved: [u8; 4],
}

/// `CUmemAllocationProp` (32 bytes on the real driver).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CUmemAllocationProp {
    /// `CUmemAllocationType`, raw.
    pub type_: i32,
    /// `CUmemAllocationHandleType` bit set, raw.
    pub requested_handle_types: i32,
    pub location: CUmemLocation,
    pub win32_handle_meta_data: *mut c_void,
    pub alloc_flags: CUmemAllocFlags,
}

impl Default for CUmemAllocationProp {
    fn default() -> Self {
        Self {
            type_: 0,
            requested_handle_types: 0,
            location: CUmemLocation::default(),
            win32_handle_meta_data: std::ptr::null_mut(),
            alloc_flags: CUmemAllocFlags::default(),
        }
    }
}

/// `CUmemAccessDesc` (12 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CUmemAccessDesc {
    pub location: CUmemLocation,
    /// `CUmemAccess_flags`, raw.
    pub flags: i32,
}

/// `CUuuid`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CUuuid {
    pub bytes: [u8; 16],
}

/// `CUctxCreateParams` (CUDA 12.5+), taken by `cuCtxCreate_v4`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUctxCreateParams {
    pub exec_affinity_params: *mut c_void,
    pub num_exec_affinity_params: i32,
    pub cig_params: *mut c_void,
}

/// Result codes the mock returns. Values are `cudaError_enum`'s.
pub mod result {
    use super::CUresult;
    pub const CUDA_SUCCESS: CUresult = 0;
    pub const CUDA_ERROR_INVALID_VALUE: CUresult = 1;
    pub const CUDA_ERROR_OUT_OF_MEMORY: CUresult = 2;
    pub const CUDA_ERROR_NOT_INITIALIZED: CUresult = 3;
    pub const CUDA_ERROR_DEINITIALIZED: CUresult = 4;
    pub const CUDA_ERROR_NO_DEVICE: CUresult = 100;
    pub const CUDA_ERROR_INVALID_DEVICE: CUresult = 101;
    pub const CUDA_ERROR_INVALID_CONTEXT: CUresult = 201;
    pub const CUDA_ERROR_CONTEXT_ALREADY_CURRENT: CUresult = 202;
    pub const CUDA_ERROR_PEER_ACCESS_UNSUPPORTED: CUresult = 217;
    pub const CUDA_ERROR_INVALID_HANDLE: CUresult = 400;
    pub const CUDA_ERROR_NOT_FOUND: CUresult = 500;
    pub const CUDA_ERROR_NOT_READY: CUresult = 600;
    pub const CUDA_ERROR_ILLEGAL_ADDRESS: CUresult = 700;
    pub const CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED: CUresult = 704;
    pub const CUDA_ERROR_PEER_ACCESS_NOT_ENABLED: CUresult = 705;
    pub const CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE: CUresult = 708;
    pub const CUDA_ERROR_CONTEXT_IS_DESTROYED: CUresult = 709;
    pub const CUDA_ERROR_NOT_PERMITTED: CUresult = 800;
    pub const CUDA_ERROR_NOT_SUPPORTED: CUresult = 801;
    pub const CUDA_ERROR_UNKNOWN: CUresult = 999;
}

/// Other enum values the mock reads or writes.
pub mod consts {
    pub const CU_MEM_ALLOCATION_TYPE_PINNED: i32 = 1;
    pub const CU_MEM_ALLOCATION_TYPE_MAX: i32 = 0x7FFF_FFFF;

    pub const CU_MEM_LOCATION_TYPE_INVALID: i32 = 0;
    pub const CU_MEM_LOCATION_TYPE_DEVICE: i32 = 1;
    pub const CU_MEM_LOCATION_TYPE_HOST: i32 = 2;
    pub const CU_MEM_LOCATION_TYPE_HOST_NUMA: i32 = 3;
    pub const CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT: i32 = 4;

    pub const CU_MEM_HANDLE_TYPE_NONE: i32 = 0;
    pub const CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR: i32 = 1;
    pub const CU_MEM_HANDLE_TYPE_WIN32: i32 = 2;
    pub const CU_MEM_HANDLE_TYPE_WIN32_KMT: i32 = 4;
    pub const CU_MEM_HANDLE_TYPE_FABRIC: i32 = 8;

    pub const CU_MEM_ACCESS_FLAGS_PROT_NONE: i32 = 0;
    pub const CU_MEM_ACCESS_FLAGS_PROT_READ: i32 = 1;
    pub const CU_MEM_ACCESS_FLAGS_PROT_READWRITE: i32 = 3;

    pub const CU_MEM_ALLOC_GRANULARITY_MINIMUM: i32 = 0;
    pub const CU_MEM_ALLOC_GRANULARITY_RECOMMENDED: i32 = 1;

    pub const CU_MEM_ALLOCATION_COMP_NONE: u8 = 0;
    pub const CU_MEM_ALLOCATION_COMP_GENERIC: u8 = 1;

    pub const CU_GET_PROC_ADDRESS_DEFAULT: u64 = 0;
    pub const CU_GET_PROC_ADDRESS_LEGACY_STREAM: u64 = 1;
    pub const CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM: u64 = 2;

    pub const CU_GET_PROC_ADDRESS_SUCCESS: i32 = 0;
    pub const CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND: i32 = 1;
    pub const CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT: i32 = 2;

    pub const CU_MEMORYTYPE_HOST: u32 = 1;
    pub const CU_MEMORYTYPE_DEVICE: u32 = 2;

    pub const CU_POINTER_ATTRIBUTE_CONTEXT: i32 = 1;
    pub const CU_POINTER_ATTRIBUTE_MEMORY_TYPE: i32 = 2;
    pub const CU_POINTER_ATTRIBUTE_DEVICE_POINTER: i32 = 3;
    pub const CU_POINTER_ATTRIBUTE_HOST_POINTER: i32 = 4;
    pub const CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: i32 = 6;
    pub const CU_POINTER_ATTRIBUTE_BUFFER_ID: i32 = 7;
    pub const CU_POINTER_ATTRIBUTE_IS_MANAGED: i32 = 8;
    pub const CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: i32 = 9;
    pub const CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE: i32 = 10;
    pub const CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: i32 = 11;
    pub const CU_POINTER_ATTRIBUTE_RANGE_SIZE: i32 = 12;
    pub const CU_POINTER_ATTRIBUTE_MAPPED: i32 = 13;
    pub const CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES: i32 = 14;
    pub const CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE: i32 = 15;
    pub const CU_POINTER_ATTRIBUTE_ACCESS_FLAGS: i32 = 16;
    pub const CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: i32 = 17;
    pub const CU_POINTER_ATTRIBUTE_MAPPING_SIZE: i32 = 18;
    pub const CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: i32 = 19;
    pub const CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: i32 = 20;

    pub const CU_CTX_SCHED_MASK: u32 = 0x07;
    pub const CU_CTX_MAP_HOST: u32 = 0x08;
    pub const CU_CTX_LMEM_RESIZE_TO_MAX: u32 = 0x10;
    pub const CU_CTX_COREDUMP_ENABLE: u32 = 0x20;
    pub const CU_CTX_USER_COREDUMP_ENABLE: u32 = 0x40;
    pub const CU_CTX_SYNC_MEMOPS: u32 = 0x80;
    pub const CU_CTX_FLAGS_MASK: u32 = 0xFF;
}

/// The name of a result code, as `cuGetErrorName` gives it.
pub fn result_name(code: CUresult) -> Option<&'static str> {
    CU_RESULTS
        .iter()
        .find(|(_, v)| *v == i64::from(code))
        .map(|(n, _)| *n)
}

/// The code of a result name (`"CUDA_ERROR_INVALID_VALUE"` -> 1).
pub fn result_code(name: &str) -> Option<CUresult> {
    CU_RESULTS
        .iter()
        .find(|(n, _)| *n == name)
        .and_then(|(_, v)| u32::try_from(*v).ok())
}

/// The value of a `CU_DEVICE_ATTRIBUTE_*` name.
pub fn device_attribute_code(name: &str) -> Option<i32> {
    CU_DEVICE_ATTRIBUTES
        .iter()
        .find(|(n, _)| *n == name)
        .and_then(|(_, v)| i32::try_from(*v).ok())
}

/// The canonical name of a device attribute value (the first name cuda.h gives it).
pub fn device_attribute_name(code: i32) -> Option<&'static str> {
    CU_DEVICE_ATTRIBUTES
        .iter()
        .find(|(n, v)| *v == i64::from(code) && *n != "CU_DEVICE_ATTRIBUTE_MAX")
        .map(|(n, _)| *n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_names_round_trip() {
        assert_eq!(
            result_name(result::CUDA_ERROR_INVALID_VALUE),
            Some("CUDA_ERROR_INVALID_VALUE")
        );
        assert_eq!(
            result_code("CUDA_ERROR_NOT_SUPPORTED"),
            Some(result::CUDA_ERROR_NOT_SUPPORTED)
        );
        assert_eq!(result_name(123_456), None);
    }

    #[test]
    fn struct_sizes_match_the_real_driver() {
        // Sizes the real H200 driver's header gave (shared reference table).
        assert_eq!(std::mem::size_of::<CUmemAllocationProp>(), 32);
        assert_eq!(std::mem::size_of::<CUmemLocation>(), 8);
        assert_eq!(std::mem::size_of::<CUmemAccessDesc>(), 12);
    }

    #[test]
    fn attribute_names_resolve() {
        assert_eq!(
            device_attribute_code("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT"),
            Some(16)
        );
        assert_eq!(
            device_attribute_name(16),
            Some("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT")
        );
    }
}
