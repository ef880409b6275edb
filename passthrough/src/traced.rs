//! The traced set: the calls an allocator makes, recorded after the real driver ran them
//! with their arguments, what they returned through out-pointers, and the result. Each
//! is a method of its group's trait of `cumock_abi` (`VirtualMemoryApi`, `MemoryApi`...)
//! with the declared signature; `forward.rs` calls it around every export.

use cumock_abi::*;
use serde_json::{json, Value};
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

type P = *mut c_void;

/// Reads an out-pointer after the call; NULL reads as null.
///
/// # Safety
/// `p` is NULL or points to a `T` the real driver just wrote (or left as it was).
unsafe fn rd<T: Copy + Into<Value>>(p: *const T) -> Value {
    if p.is_null() {
        Value::Null
    } else {
        // Safety: per this function's contract.
        unsafe { p.read_unaligned() }.into()
    }
}

unsafe fn prop(p: *const CUmemAllocationProp) -> Value {
    if p.is_null() {
        return Value::Null;
    }
    // Safety: a prop the program passed, as cuda.h requires it to be readable.
    let p = unsafe { p.read_unaligned() };
    json!({"type": p.type_, "loc_type": p.location.type_, "loc_id": p.location.id, "handle_types": p.requested_handle_types, "compression": p.alloc_flags.compression_type})
}

unsafe fn loc(p: *const CUmemLocation) -> Value {
    if p.is_null() {
        return Value::Null;
    }
    // Safety: as above.
    let l = unsafe { p.read_unaligned() };
    json!([l.type_, l.id])
}

unsafe fn descs(p: *const CUmemAccessDesc, n: usize) -> Value {
    if p.is_null() || n > 64 {
        return Value::Null;
    }
    // Safety: cuda.h: `n` descriptors at `p`.
    let d = unsafe { std::slice::from_raw_parts(p, n) };
    d.iter()
        .map(|x| json!([x.location.type_, x.location.id, x.flags]))
        .collect()
}

/// What runs after the real function returned: it reads what the driver wrote and
/// records the call (or, for cuGetProcAddress, hands out our own functions).
pub type After = Box<dyn FnOnce(CUresult)>;

/// The traced set, by group of the API: `traced Group` lists functions with their
/// declared signatures (the compiler holds each to `Group`, its trait in `cumock_abi`) and
/// what to record of them; `extra` holds the hand-written methods of one group;
/// `untraced` lists the groups with nothing traced, each of which must be implemented too.
/// Every other export is forwarded without a record.
macro_rules! traced {
    (
        $(traced $group:ident {
            $(fn $name:ident($($a:ident: $t:ty),*) => ($args:expr, $out:expr);)*
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
                            // Safety: the recorders read what the program passed and the
                            // driver wrote, as cuda.h lets the caller read them after the
                            // call.
                            #[allow(unused_unsafe)]
                            let (args, out) = unsafe { ($args, $out) };
                            crate::record::call(stringify!($name), args, out, r);
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
        fn cuInit(flags: c_uint) => (json!({"flags": flags}), Value::Null);
    }
    traced PrimaryContextApi {
        fn cuDevicePrimaryCtxRetain(pctx: *mut CUcontext, dev: c_int) => (json!({"dev": dev}), json!({"ctx": rd(pctx as *const usize)}));
        fn cuDevicePrimaryCtxRelease_v2(dev: c_int) => (json!({"dev": dev}), Value::Null);
        fn cuDevicePrimaryCtxReset_v2(dev: c_int) => (json!({"dev": dev}), Value::Null);
    }
    traced ContextApi {
        fn cuCtxCreate_v2(pctx: *mut CUcontext, flags: c_uint, dev: c_int) => (json!({"flags": flags, "dev": dev}), json!({"ctx": rd(pctx as *const usize)}));
        fn cuCtxCreate_v4(pctx: *mut CUcontext, params: *mut CUctxCreateParams, flags: c_uint, dev: c_int) => (json!({"flags": flags, "dev": dev, "params": params as usize}), json!({"ctx": rd(pctx as *const usize)}));
        fn cuCtxDestroy_v2(ctx: CUcontext) => (json!({"ctx": ctx as usize}), Value::Null);
        fn cuCtxSetCurrent(ctx: CUcontext) => (json!({"ctx": ctx as usize}), Value::Null);
        fn cuCtxPushCurrent_v2(ctx: CUcontext) => (json!({"ctx": ctx as usize}), Value::Null);
        fn cuCtxPopCurrent_v2(pctx: *mut CUcontext) => (Value::Null, json!({"ctx": rd(pctx as *const usize)}));
        fn cuCtxSynchronize() => (Value::Null, Value::Null);
    }
    traced StreamApi {
        fn cuStreamSynchronize(stream: CUstream) => (json!({"stream": stream as usize}), Value::Null);
    }
    traced VirtualMemoryApi {
        fn cuMemGetAllocationGranularity(g: *mut usize, p: *const CUmemAllocationProp, option: c_int) => (json!({"prop": prop(p), "option": option}), json!({"granularity": rd(g)}));
        fn cuMemAddressReserve(ptr: *mut u64, size: usize, align: usize, addr: u64, flags: u64) => (json!({"size": size, "align": align, "addr": addr, "flags": flags}), json!({"ptr": rd(ptr)}));
        fn cuMemAddressFree(ptr: u64, size: usize) => (json!({"ptr": ptr, "size": size}), Value::Null);
        fn cuMemCreate(h: *mut u64, size: usize, p: *const CUmemAllocationProp, flags: u64) => (json!({"size": size, "prop": prop(p), "flags": flags}), json!({"handle": rd(h)}));
        fn cuMemRelease(h: u64) => (json!({"handle": h}), Value::Null);
        fn cuMemMap(ptr: u64, size: usize, offset: usize, h: u64, flags: u64) => (json!({"ptr": ptr, "size": size, "offset": offset, "handle": h, "flags": flags}), Value::Null);
        fn cuMemUnmap(ptr: u64, size: usize) => (json!({"ptr": ptr, "size": size}), Value::Null);
        fn cuMemSetAccess(ptr: u64, size: usize, d: *const CUmemAccessDesc, count: usize) => (json!({"ptr": ptr, "size": size, "desc": descs(d, count), "count": count}), Value::Null);
        fn cuMemGetAccess(flags: *mut u64, l: *const CUmemLocation, ptr: u64) => (json!({"location": loc(l), "ptr": ptr}), json!({"flags": rd(flags)}));
        fn cuMemExportToShareableHandle(sh: P, h: u64, ty: c_int, flags: u64) => (json!({"handle": h, "type": ty, "flags": flags}), json!({"fd": if ty == 1 { rd(sh as *const i32) } else { Value::Null }}));
        fn cuMemImportFromShareableHandle(h: *mut u64, os: P, ty: c_int) => (json!({"fd": os as usize, "type": ty}), json!({"handle": rd(h)}));
        fn cuMemRetainAllocationHandle(h: *mut u64, addr: P) => (json!({"addr": addr as usize}), json!({"handle": rd(h)}));
        fn cuMemGetAllocationPropertiesFromHandle(p: *mut CUmemAllocationProp, h: u64) => (json!({"handle": h}), json!({"prop": prop(p)}));
    }
    traced MemoryApi {
        fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) => (Value::Null, json!({"free": rd(free), "total": rd(total)}));
        fn cuMemAlloc_v2(ptr: *mut u64, size: usize) => (json!({"size": size}), json!({"ptr": rd(ptr)}));
        fn cuMemFree_v2(ptr: u64) => (json!({"ptr": ptr}), Value::Null);
        fn cuMemcpyHtoD_v2(dst: u64, src: *const c_void, n: usize) => (json!({"dst": dst, "n": n, "src": src as usize}), Value::Null);
        fn cuMemcpyDtoH_v2(dst: P, src: u64, n: usize) => (json!({"dst": dst as usize, "src": src, "n": n}), Value::Null);
        fn cuMemcpyDtoD_v2(dst: u64, src: u64, n: usize) => (json!({"dst": dst, "src": src, "n": n}), Value::Null);
        fn cuMemcpyHtoDAsync_v2(dst: u64, src: *const c_void, n: usize, s: CUstream) => (json!({"dst": dst, "n": n, "src": src as usize, "stream": s as usize}), Value::Null);
        fn cuMemcpyDtoHAsync_v2(dst: P, src: u64, n: usize, s: CUstream) => (json!({"dst": dst as usize, "src": src, "n": n, "stream": s as usize}), Value::Null);
        fn cuMemcpyDtoDAsync_v2(dst: u64, src: u64, n: usize, s: CUstream) => (json!({"dst": dst, "src": src, "n": n, "stream": s as usize}), Value::Null);
        fn cuMemcpyAsync(dst: u64, src: u64, n: usize, s: CUstream) => (json!({"dst": dst, "src": src, "n": n, "stream": s as usize}), Value::Null);
        fn cuMemsetD8_v2(dst: u64, v: u8, n: usize) => (json!({"dst": dst, "value": v, "n": n}), Value::Null);
        fn cuMemsetD32_v2(dst: u64, v: u32, n: usize) => (json!({"dst": dst, "value": v, "n": n}), Value::Null);
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
