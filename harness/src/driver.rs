//! A driver library loaded by path (the mock, or NVIDIA's libcuda.so.1), with every entry
//! point the declaration in `cumock_abi` knows, typed as NVIDIA's headers declare it. A
//! missing symbol is an error of the step that needs it.
//!
//! This module is the only place that loads a driver: the harness never links the
//! mock's Rust code, so a process never holds two definitions of a `cu*` name.
#![allow(non_snake_case)]

use std::ffi::c_void;

/// Expanded by `cumock_abi::for_each_export!`: a function pointer for every export the
/// headers declare, typed as cudaTypedefs.h declares it, NULL where the driver lacks it.
/// Handles of every kind are `*mut c_void` here (the declaration's erased types, the
/// same ABI): a case keeps contexts, streams and events in one table of values.
macro_rules! api {
    (
        declared { $( $name:ident ( $( $arg:ident : $ty:ty | $erased:ty ),* ) in $group:ident; )* }
        undeclared { $( $undeclared:ident, )* }
    ) => {
        #[allow(dead_code)] // the harness calls some of them; a case may need any
        pub struct Api {
            pub path: String,
            // Kept alive for the function pointers below.
            _lib: libloading::Library,
            $(pub $name: Option<unsafe extern "C" fn($($erased),*) -> cumock_abi::CUresult>,)*
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
                        // Safety: the type is the function's declaration, from cuda.h.
                        unsafe {
                            lib.get::<unsafe extern "C" fn($($erased),*) -> cumock_abi::CUresult>(
                                concat!(stringify!($name), "\0").as_bytes(),
                            )
                        }
                        .ok()
                        .map(|s| *s)
                    },)*
                    _lib: lib,
                })
            }
        }
    };
}

cumock_abi::for_each_export!(api);

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
