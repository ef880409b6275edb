//! The error functions, versions of the API, and driver entry points.

use crate::boundary::{cudart_fn, peek_last_error, take_last_error};
use crate::driver::{driver, CUDART_VERSION};
use crate::error::{self, CudaError};
use crate::runtime::runtime;
use std::collections::HashMap;
use std::ffi::{c_char, c_uint, c_ulonglong, c_void, CStr, CString};
use std::sync::OnceLock;

/// cudaGetLastError: the thread's last error, reset to cudaSuccess. A sticky error is no
/// exception: on the H200, after a kernel's illegal address, cudaGetLastError returned it
/// once and then cudaSuccess, while every call using the context kept failing with it
/// (clients/runtime/goldens, kernel_fault). It is not itself an error of the call, so it
/// goes round the export macro (which would record it again).
#[no_mangle]
pub extern "C" fn cudaGetLastError() -> CudaError {
    let code = take_last_error();
    crate::diagnostics::trace("cudaGetLastError", code, &[]);
    code
}

#[no_mangle]
pub extern "C" fn cudaPeekAtLastError() -> CudaError {
    let code = peek_last_error();
    crate::diagnostics::trace("cudaPeekAtLastError", code, &[]);
    code
}

const UNRECOGNIZED: &CStr = c"unrecognized error code";

fn names() -> &'static HashMap<CudaError, CString> {
    static N: OnceLock<HashMap<CudaError, CString>> = OnceLock::new();
    N.get_or_init(|| {
        crate::generated::CUDA_ERRORS
            .iter()
            .filter_map(|(n, v)| Some((*v, CString::new(*n).ok()?)))
            .collect()
    })
}

fn strings() -> &'static HashMap<CudaError, CString> {
    static S: OnceLock<HashMap<CudaError, CString>> = OnceLock::new();
    S.get_or_init(|| {
        let d = driver().ok();
        crate::generated::CUDA_ERRORS
            .iter()
            .filter_map(|&(_, v)| {
                // The driver's description of the same-numbered result where it has one
                // (the runtime's codes are numbered after the driver's).
                // Only for codes that are the driver's (asking of others is a misuse a
                // checking driver reports against the program).
                let s = d
                    .filter(|_| cumock_abi::result_name(v as u32).is_some())
                    .and_then(|d| d.error_string(v as u32))
                    .map(CStr::to_owned)
                    .or_else(|| CString::new(error::fallback_string(v)).ok())?;
                Some((v, s))
            })
            .collect()
    })
}

/// cudaGetErrorName: never fails, never touches the last error.
#[no_mangle]
pub extern "C" fn cudaGetErrorName(code: CudaError) -> *const c_char {
    std::panic::catch_unwind(|| {
        names()
            .get(&code)
            .map_or(UNRECOGNIZED.as_ptr(), |s| s.as_ptr())
    })
    .unwrap_or(UNRECOGNIZED.as_ptr())
}

#[no_mangle]
pub extern "C" fn cudaGetErrorString(code: CudaError) -> *const c_char {
    std::panic::catch_unwind(|| {
        strings()
            .get(&code)
            .map_or(UNRECOGNIZED.as_ptr(), |s| s.as_ptr())
    })
    .unwrap_or(UNRECOGNIZED.as_ptr())
}

fn entry_point(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_uint,
    flags: c_ulonglong,
    status: *mut i32,
) -> crate::error::RtResult<()> {
    if symbol.is_null() || pfn.is_null() {
        return Err(error::invalid("symbol or funcPtr is NULL"));
    }
    runtime()?;
    let mut local_status = 0;
    let status = if status.is_null() {
        &mut local_status as *mut i32
    } else {
        status
    };
    // Safety: a NUL-terminated name and writable outputs, as the program promised;
    // cudaDriverEntryPointQueryResult's values are CUdriverProcAddressQueryResult's.
    unsafe { driver()?.get_proc_address(symbol, pfn, version as i32, flags, status) }
}

cudart_fn! {
    fn cudaGetDriverEntryPoint(symbol: *const c_char, func_ptr: *mut *mut c_void, flags: c_ulonglong, status: *mut i32) {
        entry_point(symbol, func_ptr, CUDART_VERSION as u32, flags, status)
    }
}

cudart_fn! {
    fn cudaGetDriverEntryPoint_ptsz(symbol: *const c_char, func_ptr: *mut *mut c_void, flags: c_ulonglong, status: *mut i32) {
        entry_point(symbol, func_ptr, CUDART_VERSION as u32, flags, status)
    }
}

cudart_fn! {
    fn cudaGetDriverEntryPointByVersion(symbol: *const c_char, func_ptr: *mut *mut c_void, version: c_uint, flags: c_ulonglong, status: *mut i32) {
        entry_point(symbol, func_ptr, version, flags, status)
    }
}

cudart_fn! {
    fn cudaGetDriverEntryPointByVersion_ptsz(symbol: *const c_char, func_ptr: *mut *mut c_void, version: c_uint, flags: c_ulonglong, status: *mut i32) {
        entry_point(symbol, func_ptr, version, flags, status)
    }
}

/// cudaProfilerStart/Stop: the driver's; a driver without a profiler interface has no
/// profiler attached, for which these calls are no-ops that succeed (as NVIDIA's are when
/// no profiler runs).
fn profiler(start: bool) -> crate::error::RtResult<()> {
    let (d, _, _) = crate::runtime::with_context()?;
    let r = if start {
        d.cuProfilerStart()
    } else {
        d.cuProfilerStop()
    };
    match r {
        Err(e) if e.code == error::NOT_SUPPORTED => Ok(()),
        r => r,
    }
}

cudart_fn! {
    fn cudaProfilerStart() {
        profiler(true)
    }
}

cudart_fn! {
    fn cudaProfilerStop() {
        profiler(false)
    }
}

// ---- the driver's error log (CUDA 12.9): cudaLogs* forward to cuLogs* -------------------
//
// cudaLogsCallback_t is CUlogsCallback (data, level, message, length), cudaLogIterator
// CUlogIterator and cudaLogsCallbackHandle CUlogsCallbackHandle: the driver keeps the log,
// the runtime passes the program's arguments on.

cudart_fn! {
    fn cudaLogsRegisterCallback(callback_func: cumock_abi::CUlogsCallback, user_data: *mut c_void, callback_out: *mut cumock_abi::CUlogsCallbackHandle) {
        runtime()?;
        // Safety: the user data goes to the program's callback untouched; the handle's
        // out-pointer is the program's (the driver refuses NULL).
        unsafe { driver()?.cuLogsRegisterCallback(callback_func, user_data, callback_out) }
    }
}

cudart_fn! {
    fn cudaLogsUnregisterCallback(callback: cumock_abi::CUlogsCallbackHandle) {
        runtime()?;
        driver()?.cuLogsUnregisterCallback(callback)
    }
}

cudart_fn! {
    fn cudaLogsCurrent(iterator_out: *mut cumock_abi::CUlogIterator, flags: c_uint) {
        // Safety: the program's out-pointer: NULL (refused) or writable.
        let it = unsafe { crate::boundary::out_ref(iterator_out)? };
        runtime()?;
        driver()?.cuLogsCurrent(it, flags)
    }
}

cudart_fn! {
    fn cudaLogsDumpToFile(iterator: *mut cumock_abi::CUlogIterator, path_to_file: *const c_char, flags: c_uint) {
        runtime()?;
        // Safety: the program's iterator (NULL: the whole log) and NUL-terminated path.
        unsafe { driver()?.cuLogsDumpToFile(iterator, path_to_file, flags) }
    }
}

cudart_fn! {
    fn cudaLogsDumpToMemory(iterator: *mut cumock_abi::CUlogIterator, buffer: *mut c_char, size: *mut usize, flags: c_uint) {
        runtime()?;
        // Safety: the program's iterator, and its buffer of *size bytes.
        unsafe { driver()?.cuLogsDumpToMemory(iterator, buffer, size, flags) }
    }
}
