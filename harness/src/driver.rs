//! A driver library loaded by path (the mock, or NVIDIA's libcuda.so.1), with the entry
//! points the harness calls. A missing symbol is an error of the step that needs it.
//!
//! This module is the only place that loads a driver: the harness never links the
//! mock's Rust code, so a process never holds two definitions of a `cu*` name.
#![allow(non_snake_case)]

use std::ffi::{c_char, c_int, c_uint, c_void};

macro_rules! api {
    ($($name:ident: fn($($t:ty),* $(,)?);)*) => {
        pub struct Api {
            pub path: String,
            // Kept alive for the function pointers below.
            _lib: libloading::Library,
            $(pub $name: Option<unsafe extern "C" fn($($t),*) -> u32>,)*
        }

        impl Api {
            pub fn load(path: &str) -> anyhow::Result<Self> {
                // Safety: loading a driver runs its initialisers; that is the point of the
                // harness, and a crash there is caught by the parent process.
                let lib = unsafe { libloading::Library::new(path) }
                    .map_err(|e| anyhow::anyhow!("cannot load driver {path}: {e}"))?;
                Ok(Self {
                    path: path.to_owned(),
                    $($name: {
                        // Safety: the type is the function's signature in cuda.h.
                        unsafe { lib.get::<unsafe extern "C" fn($($t),*) -> u32>(concat!(stringify!($name), "\0").as_bytes()) }
                            .ok()
                            .map(|s| *s)
                    },)*
                    _lib: lib,
                })
            }
        }
    };
}

type Ptr = *mut c_void;

api! {
    cuInit: fn(c_uint);
    cuDriverGetVersion: fn(*mut c_int);
    cuGetErrorName: fn(u32, *mut *const c_char);
    cuGetErrorString: fn(u32, *mut *const c_char);
    cuDeviceGet: fn(*mut c_int, c_int);
    cuDeviceGetCount: fn(*mut c_int);
    cuDeviceGetName: fn(*mut c_char, c_int, c_int);
    cuDeviceGetAttribute: fn(*mut c_int, c_int, c_int);
    cuDeviceTotalMem_v2: fn(*mut usize, c_int);
    cuDeviceGetUuid_v2: fn(*mut [u8; 16], c_int);
    cuDeviceGetPCIBusId: fn(*mut c_char, c_int, c_int);
    cuDeviceCanAccessPeer: fn(*mut c_int, c_int, c_int);
    cuDevicePrimaryCtxRetain: fn(*mut Ptr, c_int);
    cuDevicePrimaryCtxRelease_v2: fn(c_int);
    cuDevicePrimaryCtxReset_v2: fn(c_int);
    cuDevicePrimaryCtxGetState: fn(c_int, *mut c_uint, *mut c_int);
    cuDevicePrimaryCtxSetFlags_v2: fn(c_int, c_uint);
    cuCtxCreate_v2: fn(*mut Ptr, c_uint, c_int);
    cuCtxCreate_v4: fn(*mut Ptr, Ptr, c_uint, c_int);
    cuCtxDestroy_v2: fn(Ptr);
    cuCtxSetCurrent: fn(Ptr);
    cuCtxGetCurrent: fn(*mut Ptr);
    cuCtxPushCurrent_v2: fn(Ptr);
    cuCtxPopCurrent_v2: fn(*mut Ptr);
    cuCtxGetDevice: fn(*mut c_int);
    cuCtxSynchronize: fn();
    cuCtxEnablePeerAccess: fn(Ptr, c_uint);
    cuCtxDisablePeerAccess: fn(Ptr);
    cuMemGetAllocationGranularity: fn(*mut usize, *const cumock_abi::CUmemAllocationProp, c_int);
    cuMemAddressReserve: fn(*mut u64, usize, usize, u64, u64);
    cuMemAddressFree: fn(u64, usize);
    cuMemCreate: fn(*mut u64, usize, *const cumock_abi::CUmemAllocationProp, u64);
    cuMemRelease: fn(u64);
    cuMemMap: fn(u64, usize, usize, u64, u64);
    cuMemUnmap: fn(u64, usize);
    cuMemSetAccess: fn(u64, usize, *const cumock_abi::CUmemAccessDesc, usize);
    cuMemGetAccess: fn(*mut u64, *const cumock_abi::CUmemLocation, u64);
    cuMemExportToShareableHandle: fn(Ptr, u64, c_int, u64);
    cuMemImportFromShareableHandle: fn(*mut u64, Ptr, c_int);
    cuMemRetainAllocationHandle: fn(*mut u64, Ptr);
    cuMemGetAllocationPropertiesFromHandle: fn(*mut cumock_abi::CUmemAllocationProp, u64);
    cuMemGetInfo_v2: fn(*mut usize, *mut usize);
    cuMemAlloc_v2: fn(*mut u64, usize);
    cuMemFree_v2: fn(u64);
    cuMemcpyHtoD_v2: fn(u64, *const c_void, usize);
    cuMemcpyDtoH_v2: fn(*mut c_void, u64, usize);
    cuMemcpyDtoD_v2: fn(u64, u64, usize);
    cuMemcpy: fn(u64, u64, usize);
    cuMemcpyHtoDAsync_v2: fn(u64, *const c_void, usize, Ptr);
    cuMemcpyDtoHAsync_v2: fn(*mut c_void, u64, usize, Ptr);
    cuMemcpyDtoDAsync_v2: fn(u64, u64, usize, Ptr);
    cuMemsetD8_v2: fn(u64, u8, usize);
    cuMemsetD16_v2: fn(u64, u16, usize);
    cuMemsetD32_v2: fn(u64, u32, usize);
    cuMemsetD8Async: fn(u64, u8, usize, Ptr);
    cuMemsetD16Async: fn(u64, u16, usize, Ptr);
    cuMemsetD32Async: fn(u64, u32, usize, Ptr);
    cuMemGetAddressRange_v2: fn(*mut u64, *mut usize, u64);
    cuPointerGetAttribute: fn(Ptr, c_int, u64);
    cuPointerGetAttributes: fn(c_uint, *const c_int, *mut Ptr, u64);
    cuStreamCreate: fn(*mut Ptr, c_uint);
    cuStreamDestroy_v2: fn(Ptr);
    cuStreamSynchronize: fn(Ptr);
    cuEventCreate: fn(*mut Ptr, c_uint);
    cuEventRecord: fn(Ptr, Ptr);
    cuEventSynchronize: fn(Ptr);
    cuEventDestroy_v2: fn(Ptr);
    cuGetProcAddress_v2: fn(*const c_char, *mut Ptr, c_int, u64, *mut c_int);
}

/// Calls an entry point of a loaded driver: `anyhow::Error` when the driver does not
/// export it, the raw CUresult otherwise.
macro_rules! call {
    ($api:expr, $name:ident($($arg:expr),* $(,)?)) => {{
        let f = $api
            .$name
            .ok_or_else(|| anyhow::anyhow!(concat!("the driver does not export ", stringify!($name))))?;
        // Safety: the arguments match the signature in cuda.h; pointers are to live locals.
        unsafe { f($($arg),*) }
    }};
}
pub(crate) use call;

/// Like `call!`, and a result other than CUDA_SUCCESS is an error naming the call.
macro_rules! check {
    ($api:expr, $name:ident($($arg:expr),* $(,)?)) => {{
        let r = $crate::driver::call!($api, $name($($arg),*));
        if r != 0 {
            anyhow::bail!("{} failed: {}", stringify!($name), cumock_abi::result_name(r).unwrap_or("?"));
        }
    }};
}
pub(crate) use check;

/// The exported name at an address, for cuGetProcAddress results (`cuMemAlloc_v2`).
pub fn symbol_name(p: *mut c_void) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // Safety: dladdr only reads the loader's tables for the address.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(p, &mut info) == 0 || info.dli_sname.is_null() {
            return None;
        }
        Some(
            std::ffi::CStr::from_ptr(info.dli_sname)
                .to_string_lossy()
                .into_owned(),
        )
    }
}
