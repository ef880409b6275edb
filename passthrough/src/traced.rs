//! The traced set: the calls an allocator makes, recorded after the real driver ran them
//! with their arguments, what they returned through out-pointers, and the result.
//! `forward.rs` records them around the export, each argument encoded by its declared
//! role (`cumock_trace::encode`, the mock's encoding too): this file only names them, and
//! holds the one hand-written hook (cuGetProcAddress).

use cumock_abi::*;
use std::ffi::{c_char, c_int, c_void, CStr};

type P = *mut c_void;

/// What runs after the real function returned: it reads what the driver wrote (for
/// cuGetProcAddress, hands out our own functions).
pub type After = Box<dyn FnOnce(CUresult)>;

/// The names recorded; cuGetProcAddress hands out our functions for them.
pub const TRACED: &[&str] = &[
    "cuInit",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuDevicePrimaryCtxReset_v2",
    "cuCtxCreate_v2",
    "cuCtxCreate_v4",
    "cuCtxDestroy_v2",
    "cuCtxSetCurrent",
    "cuCtxPushCurrent_v2",
    "cuCtxPopCurrent_v2",
    "cuCtxSynchronize",
    "cuStreamSynchronize",
    "cuMemGetAllocationGranularity",
    "cuMemAddressReserve",
    "cuMemAddressFree",
    "cuMemCreate",
    "cuMemRelease",
    "cuMemMap",
    "cuMemUnmap",
    "cuMemSetAccess",
    "cuMemGetAccess",
    "cuMemExportToShareableHandle",
    "cuMemImportFromShareableHandle",
    "cuMemRetainAllocationHandle",
    "cuMemGetAllocationPropertiesFromHandle",
    "cuMemGetInfo_v2",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemcpyHtoD_v2",
    "cuMemcpyDtoH_v2",
    "cuMemcpyDtoD_v2",
    "cuMemcpyHtoDAsync_v2",
    "cuMemcpyDtoHAsync_v2",
    "cuMemcpyDtoDAsync_v2",
    "cuMemcpyAsync",
    "cuMemsetD8_v2",
    "cuMemsetD32_v2",
];

/// The pass-through's hooks: a method of its group's trait (`cumock_abi`) runs before
/// the real function and returns what runs after it. Only cuGetProcAddress has one;
/// every other export's method is the trait's default, nothing.
pub struct Traced;

impl cumock_abi::ApiOutcome for Traced {
    type Outcome = Option<After>;

    fn not_emulated(_name: &'static str) -> Option<After> {
        None
    }
}

macro_rules! no_hooks {
    ($($group:ident,)*) => {$(impl cumock_abi::$group for Traced {})*};
}

impl cumock_abi::DriverEntryPointAccessApi for Traced {
    /// cuGetProcAddress: the real driver resolves the name and version; for a traced
    /// function we hand out our recording function of the same exported name instead.
    unsafe fn cuGetProcAddress_v2(
        symbol: *const c_char,
        pfn: *mut *mut c_void,
        version: c_int,
        flags: cuuint64_t,
        _status: *mut CUdriverProcAddressQueryResult,
    ) -> Option<After> {
        Some(Box::new(move |r| {
            if r == 0 && !pfn.is_null() && !symbol.is_null() {
                // Safety: a NUL-terminated name, per cuda.h; the real driver wrote pfn.
                let name = unsafe { CStr::from_ptr(symbol) }.to_string_lossy();
                unsafe { swap_for_wrapper(&name, version, flags, pfn) };
            }
        }))
    }

    unsafe fn cuGetProcAddress(
        symbol: *const c_char,
        pfn: *mut *mut c_void,
        version: c_int,
        flags: cuuint64_t,
    ) -> Option<After> {
        // Safety: the same arguments, without the status pointer.
        unsafe { Self::cuGetProcAddress_v2(symbol, pfn, version, flags, std::ptr::null_mut()) }
    }
}

no_hooks! {
    InitializationApi,
    PrimaryContextApi,
    ContextApi,
    StreamApi,
    VirtualMemoryApi,
    MemoryApi,
    ErrorHandlingApi,
    VersionApi,
    DeviceApi,
    ModuleApi,
    LibraryApi,
    StreamOrderedMemoryAllocatorApi,
    MulticastObjectApi,
    UnifiedAddressingApi,
    EventApi,
    ExternalResourceInteroperabilityApi,
    StreamMemoryOperationsApi,
    ExecutionControlApi,
    GraphApi,
    OccupancyApi,
    TextureReferenceApi,
    SurfaceReferenceApi,
    TextureObjectApi,
    SurfaceObjectApi,
    TensorMapObjectApi,
    PeerContextMemoryAccessApi,
    GraphicsInteroperabilityApi,
    CoredumpAttributesControlApi,
    GreenContextsApi,
    ErrorLogApi,
    CheckpointingApi,
    OpenGLInteroperabilityApi,
    EglInteroperabilityApi,
    VdpauInteroperabilityApi,
    ProfilerControlApi,
}

/// Replaces the real function the driver found by our wrapper when that function is
/// traced, and by ourselves for cuGetProcAddress (the CUDA runtime asks for it through
/// itself, and would otherwise go round us from then on). The exported name comes from
/// the requested base name and version, as the real driver resolves them (the generated
/// table of cudaTypedefs.h), not from the pointer, which may be internal to the driver.
unsafe fn swap_for_wrapper(base: &str, version: c_int, flags: u64, pfn: *mut P) {
    // Safety: pfn is a valid out-pointer (checked non-NULL by the caller).
    if unsafe { *pfn }.is_null() {
        return;
    }
    let per_thread = flags & 2 != 0;
    let Ok(version) = u32::try_from(version) else {
        return;
    };
    let cumock_abi::ProcLookup::Found(exported) =
        cumock_abi::proc_address(base, version, per_thread)
    else {
        return;
    };
    if TRACED.contains(&exported) || exported.starts_with("cuGetProcAddress") {
        let ours = crate::own_symbol(exported);
        if !ours.is_null() {
            // Safety: as above.
            unsafe { *pfn = ours };
        }
    }
}
