//! The traced set: the calls an allocator makes, recorded after the real driver ran them
//! with their arguments, what they returned through out-pointers, and the result. Each
//! is a method of its group's trait of `cumock_abi` (`VirtualMemoryApi`, `MemoryApi`...)
//! with the declared signature; `forward.rs` calls it around every export.

use cumock_abi::*;
use cumock_trace::encode::TraceArg;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

type P = *mut c_void;

/// What runs after the real function returned: it reads what the driver wrote and
/// records the call (or, for cuGetProcAddress, hands out our own functions).
pub type After = Box<dyn FnOnce(CUresult)>;

/// The traced set, by group of the API: `traced Group` lists functions with their
/// declared signatures (the compiler holds each to `Group`, its trait in `cumock_abi`);
/// each is recorded after the call, its arguments encoded by their declared roles
/// (`cumock_trace::encode`, the mock's encoding too). `extra` holds the hand-written
/// methods of one group; `untraced` lists the groups with nothing traced, each of which
/// must be implemented too. Every other export is forwarded without a record.
macro_rules! traced {
    (
        $(traced $group:ident {
            $(fn $name:ident($($a:ident: $t:ty),*);)*
        })*
        extra $extra_group:ident { $($extra:item)* }
        untraced { $($untraced:ident,)* }
    ) => {
        /// The pass-through's side of the declaration: what happens after each call.
        pub struct Traced;

        impl cumock_abi::ApiOutcome for Traced {
            type Outcome = Option<After>;

            /// Not traced: forwarded, nothing recorded.
            fn not_emulated(_name: &'static str) -> Option<After> {
                None
            }
        }

        $(
            impl cumock_abi::$group for Traced {
                $(
                    unsafe fn $name($($a: $t),*) -> Option<After> {
                        Some(Box::new(move |r| {
                            crate::record::call(stringify!($name), &[$($a.arg()),*], r);
                        }))
                    }
                )*
            }
        )*

        impl cumock_abi::$extra_group for Traced {
            $($extra)*
        }

        $(impl cumock_abi::$untraced for Traced {})*

        /// The names recorded here; cuGetProcAddress hands out our functions for them.
        pub const TRACED: &[&str] = &[$($(stringify!($name),)*)*];
    };
}

traced! {
    traced InitializationApi {
        fn cuInit(flags: c_uint);
    }
    traced PrimaryContextApi {
        fn cuDevicePrimaryCtxRetain(pctx: *mut CUcontext, dev: c_int);
        fn cuDevicePrimaryCtxRelease_v2(dev: c_int);
        fn cuDevicePrimaryCtxReset_v2(dev: c_int);
    }
    traced ContextApi {
        fn cuCtxCreate_v2(pctx: *mut CUcontext, flags: c_uint, dev: c_int);
        fn cuCtxCreate_v4(pctx: *mut CUcontext, params: *mut CUctxCreateParams, flags: c_uint, dev: c_int);
        fn cuCtxDestroy_v2(ctx: CUcontext);
        fn cuCtxSetCurrent(ctx: CUcontext);
        fn cuCtxPushCurrent_v2(ctx: CUcontext);
        fn cuCtxPopCurrent_v2(pctx: *mut CUcontext);
        fn cuCtxSynchronize();
    }
    traced StreamApi {
        fn cuStreamSynchronize(stream: CUstream);
    }
    traced VirtualMemoryApi {
        fn cuMemGetAllocationGranularity(g: *mut usize, p: *const CUmemAllocationProp, option: c_int);
        fn cuMemAddressReserve(ptr: *mut u64, size: usize, align: usize, addr: u64, flags: u64);
        fn cuMemAddressFree(ptr: u64, size: usize);
        fn cuMemCreate(h: *mut u64, size: usize, p: *const CUmemAllocationProp, flags: u64);
        fn cuMemRelease(h: u64);
        fn cuMemMap(ptr: u64, size: usize, offset: usize, h: u64, flags: u64);
        fn cuMemUnmap(ptr: u64, size: usize);
        fn cuMemSetAccess(ptr: u64, size: usize, d: *const CUmemAccessDesc, count: usize);
        fn cuMemGetAccess(flags: *mut u64, l: *const CUmemLocation, ptr: u64);
        fn cuMemExportToShareableHandle(sh: P, h: u64, ty: c_int, flags: u64);
        fn cuMemImportFromShareableHandle(h: *mut u64, os: P, ty: c_int);
        fn cuMemRetainAllocationHandle(h: *mut u64, addr: P);
        fn cuMemGetAllocationPropertiesFromHandle(p: *mut CUmemAllocationProp, h: u64);
    }
    traced MemoryApi {
        fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize);
        fn cuMemAlloc_v2(ptr: *mut u64, size: usize);
        fn cuMemFree_v2(ptr: u64);
        fn cuMemcpyHtoD_v2(dst: u64, src: *const c_void, n: usize);
        fn cuMemcpyDtoH_v2(dst: P, src: u64, n: usize);
        fn cuMemcpyDtoD_v2(dst: u64, src: u64, n: usize);
        fn cuMemcpyHtoDAsync_v2(dst: u64, src: *const c_void, n: usize, s: CUstream);
        fn cuMemcpyDtoHAsync_v2(dst: P, src: u64, n: usize, s: CUstream);
        fn cuMemcpyDtoDAsync_v2(dst: u64, src: u64, n: usize, s: CUstream);
        fn cuMemcpyAsync(dst: u64, src: u64, n: usize, s: CUstream);
        fn cuMemsetD8_v2(dst: u64, v: u8, n: usize);
        fn cuMemsetD32_v2(dst: u64, v: u32, n: usize);
    }
    extra DriverEntryPointAccessApi {
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
    untraced {
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
