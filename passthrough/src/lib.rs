//! The pass-through driver: installed as libcuda.so.1 ahead of NVIDIA's, it loads the
//! real driver by absolute path (`CUMOCK_REAL_DRIVER`, or the usual places), forwards
//! every one of its 707 exports, and records the calls an allocator makes (VMM, contexts,
//! copies, synchronisation) as JSON lines in `CUMOCK_PASSTHROUGH_TRACE` (default
//! `cumock-trace-<pid>.jsonl`). Programs that take their entry points from
//! cuGetProcAddress (the CUDA runtime, PyTorch, NVIDIA's Python bindings) get recording
//! wrappers for the traced functions from it, and the real functions for all others;
//! cuGetExportTable and everything else go straight to the real driver.
//!
//! `cumock trace2case` turns a trace into a case file.
#![allow(non_snake_case, clippy::missing_safety_doc)]

mod forward;
mod record;
mod traced;

use std::ffi::{c_void, CStr, CString};
use std::sync::OnceLock;

/// The real driver, opened once, at load.
pub(crate) struct Real {
    handle: usize,
    pub path: String,
}

pub(crate) fn real() -> &'static Real {
    static REAL: OnceLock<Real> = OnceLock::new();
    REAL.get_or_init(open_real)
}

fn own_path() -> Option<String> {
    // Safety: dladdr fills a plain struct about an address of this library.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(own_path as *const c_void, &mut info) == 0 || info.dli_fname.is_null() {
            return None;
        }
        std::fs::canonicalize(CStr::from_ptr(info.dli_fname).to_string_lossy().as_ref())
            .ok()
            .map(|p| p.display().to_string())
    }
}

fn open_real() -> Real {
    let me = own_path();
    let mut candidates: Vec<String> = cumock_support::settings()
        .real_driver
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    candidates.extend(
        [
            "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
            "/usr/lib64/libcuda.so.1",
            "/usr/local/nvidia/lib64/libcuda.so.1",
            "/usr/local/nvidia/lib/libcuda.so.1",
            "/usr/lib/libcuda.so.1",
            "/usr/lib/wsl/lib/libcuda.so.1",
            "/usr/local/cuda/compat/libcuda.so.1",
        ]
        .map(String::from),
    );
    for c in candidates {
        let Ok(real) = std::fs::canonicalize(&c) else {
            continue;
        };
        if Some(real.display().to_string()) == me {
            continue; // ourselves, through a link
        }
        let Ok(cpath) = CString::new(c.clone()) else {
            continue;
        };
        // Safety: dlopen of a driver library by absolute path; RTLD_LOCAL keeps its
        // symbols from shadowing ours.
        let h = unsafe { libc::dlopen(cpath.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if !h.is_null() {
            return Real {
                handle: h as usize,
                path: c,
            };
        }
    }
    eprintln!("cumock passthrough: no real libcuda.so.1 found (set CUMOCK_REAL_DRIVER); every call returns CUDA_ERROR_NO_DEVICE");
    Real {
        handle: 0,
        path: String::new(),
    }
}

impl Real {
    /// The real driver's function of that name, or NULL.
    pub fn symbol(&self, name: &str) -> *mut c_void {
        if self.handle == 0 {
            return std::ptr::null_mut();
        }
        let Ok(c) = CString::new(name) else {
            return std::ptr::null_mut();
        };
        // Safety: a live dlopen handle and a NUL-terminated name.
        unsafe { libc::dlsym(self.handle as *mut c_void, c.as_ptr()) }
    }
}

/// The address of one of this library's own exports (a wrapper or a forwarder).
pub(crate) fn own_symbol(name: &str) -> *mut c_void {
    static HANDLE: OnceLock<usize> = OnceLock::new();
    let h = *HANDLE.get_or_init(|| {
        // Safety: dladdr and a NOLOAD dlopen of this already-loaded library.
        unsafe {
            let mut info: libc::Dl_info = std::mem::zeroed();
            if libc::dladdr(own_symbol as *const c_void, &mut info) == 0 {
                return 0;
            }
            libc::dlopen(info.dli_fname, libc::RTLD_NOLOAD | libc::RTLD_LAZY) as usize
        }
    });
    let Ok(c) = CString::new(name) else {
        return std::ptr::null_mut();
    };
    if h == 0 {
        return std::ptr::null_mut();
    }
    // Safety: a live handle and a NUL-terminated name.
    unsafe { libc::dlsym(h as *mut c_void, c.as_ptr()) }
}

/// Fills every forwarding slot before the program's first call.
extern "C" fn init() {
    forward::fill();
    // The trace's first line says which driver it was recorded on.
    record::driver(&real().path);
}

#[used]
#[unsafe(link_section = ".init_array")]
static INIT: extern "C" fn() = init;
