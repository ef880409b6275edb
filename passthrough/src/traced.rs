//! Recording wrappers: the calls an allocator makes, forwarded to the real driver with
//! their arguments, what they returned through out-pointers, and the result recorded.

use cumock_abi::{CUmemAccessDesc, CUmemAllocationProp, CUmemLocation};
use serde_json::{json, Value};
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};

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

macro_rules! traced {
    ($($name:ident($($a:ident: $t:ty),*) => ($args:expr, $out:expr);)*) => {
        #[allow(non_upper_case_globals)]
        mod real {
            use std::sync::atomic::AtomicUsize;
            $(pub static $name: AtomicUsize = AtomicUsize::new(0);)*
        }
        $(
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn $name($($a: $t),*) -> u32 {
                // Safety: the slot holds the real driver's function of this name and
                // signature (or `missing`, which ignores its arguments).
                let f: unsafe extern "C" fn($($t),*) -> u32 = unsafe { std::mem::transmute(real::$name.load(Ordering::Relaxed)) };
                let r = unsafe { f($($a),*) };
                // Safety: the recorders read what the program passed and the driver wrote.
                #[allow(unused_unsafe)]
                let (args, out) = unsafe { ($args, $out) };
                crate::record::call(stringify!($name), args, out, r);
                r
            }
        )*
        /// The names recorded here; cuGetProcAddress hands out these wrappers for them.
        pub const TRACED: &[&str] = &[$(stringify!($name)),*];
        pub fn fill() {
            $(real::$name.store(crate::forward::resolve(stringify!($name)), Ordering::Relaxed);)*
        }
    };
}

traced! {
    cuInit(flags: c_uint) => (json!({"flags": flags}), Value::Null);
    cuDevicePrimaryCtxRetain(pctx: *mut P, dev: c_int) => (json!({"dev": dev}), json!({"ctx": rd(pctx as *const usize)}));
    cuDevicePrimaryCtxRelease_v2(dev: c_int) => (json!({"dev": dev}), Value::Null);
    cuDevicePrimaryCtxReset_v2(dev: c_int) => (json!({"dev": dev}), Value::Null);
    cuCtxCreate_v2(pctx: *mut P, flags: c_uint, dev: c_int) => (json!({"flags": flags, "dev": dev}), json!({"ctx": rd(pctx as *const usize)}));
    cuCtxCreate_v4(pctx: *mut P, params: P, flags: c_uint, dev: c_int) => (json!({"flags": flags, "dev": dev, "params": params as usize}), json!({"ctx": rd(pctx as *const usize)}));
    cuCtxDestroy_v2(ctx: P) => (json!({"ctx": ctx as usize}), Value::Null);
    cuCtxSetCurrent(ctx: P) => (json!({"ctx": ctx as usize}), Value::Null);
    cuCtxPushCurrent_v2(ctx: P) => (json!({"ctx": ctx as usize}), Value::Null);
    cuCtxPopCurrent_v2(pctx: *mut P) => (Value::Null, json!({"ctx": rd(pctx as *const usize)}));
    cuCtxSynchronize() => (Value::Null, Value::Null);
    cuStreamSynchronize(stream: P) => (json!({"stream": stream as usize}), Value::Null);
    cuMemGetAllocationGranularity(g: *mut usize, p: *const CUmemAllocationProp, option: c_int) => (json!({"prop": prop(p), "option": option}), json!({"granularity": rd(g)}));
    cuMemAddressReserve(ptr: *mut u64, size: usize, align: usize, addr: u64, flags: u64) => (json!({"size": size, "align": align, "addr": addr, "flags": flags}), json!({"ptr": rd(ptr)}));
    cuMemAddressFree(ptr: u64, size: usize) => (json!({"ptr": ptr, "size": size}), Value::Null);
    cuMemCreate(h: *mut u64, size: usize, p: *const CUmemAllocationProp, flags: u64) => (json!({"size": size, "prop": prop(p), "flags": flags}), json!({"handle": rd(h)}));
    cuMemRelease(h: u64) => (json!({"handle": h}), Value::Null);
    cuMemMap(ptr: u64, size: usize, offset: usize, h: u64, flags: u64) => (json!({"ptr": ptr, "size": size, "offset": offset, "handle": h, "flags": flags}), Value::Null);
    cuMemUnmap(ptr: u64, size: usize) => (json!({"ptr": ptr, "size": size}), Value::Null);
    cuMemSetAccess(ptr: u64, size: usize, d: *const CUmemAccessDesc, count: usize) => (json!({"ptr": ptr, "size": size, "desc": descs(d, count), "count": count}), Value::Null);
    cuMemGetAccess(flags: *mut u64, l: *const CUmemLocation, ptr: u64) => (json!({"location": loc(l), "ptr": ptr}), json!({"flags": rd(flags)}));
    cuMemExportToShareableHandle(sh: P, h: u64, ty: c_int, flags: u64) => (json!({"handle": h, "type": ty, "flags": flags}), json!({"fd": if ty == 1 { rd(sh as *const i32) } else { Value::Null }}));
    cuMemImportFromShareableHandle(h: *mut u64, os: P, ty: c_int) => (json!({"fd": os as usize, "type": ty}), json!({"handle": rd(h)}));
    cuMemRetainAllocationHandle(h: *mut u64, addr: P) => (json!({"addr": addr as usize}), json!({"handle": rd(h)}));
    cuMemGetAllocationPropertiesFromHandle(p: *mut CUmemAllocationProp, h: u64) => (json!({"handle": h}), json!({"prop": prop(p)}));
    cuMemGetInfo_v2(free: *mut usize, total: *mut usize) => (Value::Null, json!({"free": rd(free), "total": rd(total)}));
    cuMemAlloc_v2(ptr: *mut u64, size: usize) => (json!({"size": size}), json!({"ptr": rd(ptr)}));
    cuMemFree_v2(ptr: u64) => (json!({"ptr": ptr}), Value::Null);
    cuMemcpyHtoD_v2(dst: u64, src: *const c_void, n: usize) => (json!({"dst": dst, "n": n, "src": src as usize}), Value::Null);
    cuMemcpyDtoH_v2(dst: P, src: u64, n: usize) => (json!({"dst": dst as usize, "src": src, "n": n}), Value::Null);
    cuMemcpyDtoD_v2(dst: u64, src: u64, n: usize) => (json!({"dst": dst, "src": src, "n": n}), Value::Null);
    cuMemcpyHtoDAsync_v2(dst: u64, src: *const c_void, n: usize, s: P) => (json!({"dst": dst, "n": n, "src": src as usize, "stream": s as usize}), Value::Null);
    cuMemcpyDtoHAsync_v2(dst: P, src: u64, n: usize, s: P) => (json!({"dst": dst as usize, "src": src, "n": n, "stream": s as usize}), Value::Null);
    cuMemcpyDtoDAsync_v2(dst: u64, src: u64, n: usize, s: P) => (json!({"dst": dst, "src": src, "n": n, "stream": s as usize}), Value::Null);
    cuMemcpyAsync(dst: u64, src: u64, n: usize, s: P) => (json!({"dst": dst, "src": src, "n": n, "stream": s as usize}), Value::Null);
    cuMemsetD8_v2(dst: u64, v: u8, n: usize) => (json!({"dst": dst, "value": v, "n": n}), Value::Null);
    cuMemsetD32_v2(dst: u64, v: u32, n: usize) => (json!({"dst": dst, "value": v, "n": n}), Value::Null);
}

/// cuGetProcAddress: the real driver resolves the name and version; for a traced
/// function we hand out our recording wrapper of the same exported name instead.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetProcAddress_v2(
    symbol: *const c_char,
    pfn: *mut P,
    version: c_int,
    flags: u64,
    status: *mut c_int,
) -> u32 {
    static REAL: AtomicUsize = AtomicUsize::new(0);
    if REAL.load(Ordering::Relaxed) == 0 {
        REAL.store(
            crate::forward::resolve("cuGetProcAddress_v2"),
            Ordering::Relaxed,
        );
    }
    // Safety: the real function's signature in cuda.h.
    let f: unsafe extern "C" fn(*const c_char, *mut P, c_int, u64, *mut c_int) -> u32 =
        unsafe { std::mem::transmute(REAL.load(Ordering::Relaxed)) };
    let r = unsafe { f(symbol, pfn, version, flags, status) };
    if r == 0 && !pfn.is_null() && !symbol.is_null() {
        // Safety: a NUL-terminated name, per cuda.h; the real driver wrote pfn.
        let name = unsafe { CStr::from_ptr(symbol) }.to_string_lossy();
        unsafe { swap_for_wrapper(&name, version, flags, pfn) };
    }
    r
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetProcAddress(
    symbol: *const c_char,
    pfn: *mut P,
    version: c_int,
    flags: u64,
) -> u32 {
    // Safety: forwarding the program's arguments.
    unsafe { cuGetProcAddress_v2(symbol, pfn, version, flags, std::ptr::null_mut()) }
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
