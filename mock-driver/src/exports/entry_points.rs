//! Driver entry point access (cuda.h's group CUDA_DRIVER_ENTRY_POINT): cuGetProcAddress,
//! which hands out the mock's own exports by base name and version, and cuGetExportTable,
//! the driver's private tables, which the mock refuses with advice.

use super::Mock;
use crate::boundary::drv_any;
use crate::model::error::*;
use cumock_abi::result::*;
use cumock_abi::*;
use std::ffi::{c_char, c_int, c_void};

impl DriverEntryPointAccessApi for Mock {
    emulate! {
        // Before cuInit too.
        fn cuGetProcAddress_v2(; symbol, pfn, version, flags, status) {
            let d = drv_any()?;
            let (ptr, found) = crate::procaddress::resolve(
                &symbol.to_string_lossy(),
                version,
                flags,
                d.profile.driver_version,
            )?;
            pfn.write(ptr)?;
            if let Some(status) = status {
                status.write(found)?;
            }
            Ok(())
        }
    }

    unsafe fn cuGetProcAddress(
        symbol: *const c_char,
        pfn: *mut *mut c_void,
        version: c_int,
        flags: u64,
    ) -> CuResult<()> {
        Self::cuGetProcAddress_v2(symbol, pfn, version, flags, std::ptr::null_mut())
    }

    unsafe fn cuGetExportTable(
        _table: *mut *const c_void,
        _table_id: *const CUuuid,
    ) -> CuResult<()> {
        let caller = crate::diagnostics::caller_object();
        let exe = std::fs::read_link("/proc/self/exe").ok();
        let asker = Asker::of(caller.as_deref(), exe.as_deref());
        Err(CuError {
            code: CUDA_ERROR_NOT_SUPPORTED,
            message: asker.advice().into(),
            // Libraries that only probe for the tables go on without them: a note under
            // CUMOCK_MISUSE, not a warning every time.
            severity: if matches!(asker, Asker::Probing(_)) {
                Severity::Misuse
            } else {
                Severity::WouldCrash
            },
        })
    }
}

/// Who asked for the driver's private export tables (cuGetExportTable), from the object
/// that holds the caller's code: the advice depends on it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Asker {
    /// NVIDIA's shared runtime (libcudart.so.*) first in the library path.
    NvidiaSharedRuntime(String),
    /// The program itself: linked with NVIDIA's static runtime (nvcc's default).
    Program(String),
    /// A library that embeds NVIDIA's static runtime (warp, CuPy, PyTorch's kernels,
    /// NVIDIA's math libraries...).
    EmbeddedRuntime(String),
    /// A library that looks the tables up and works without them (NVRTC, nvJitLink,
    /// NVML, the PTX compiler library).
    Probing(String),
    /// No object found for the caller.
    Unknown,
}

/// Libraries that ask for the tables only to see whether they are there.
const PROBING: [&str; 4] = [
    "libnvrtc",
    "libnvJitLink",
    "libnvidia-ml",
    "libnvptxcompiler",
];

impl Asker {
    fn of(caller: Option<&str>, exe: Option<&std::path::Path>) -> Asker {
        let Some(path) = caller.filter(|p| !p.is_empty()) else {
            return Asker::Unknown;
        };
        let file = std::path::Path::new(path)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let same_file = |a: &std::path::Path| {
            std::fs::canonicalize(path).ok().as_deref() == std::fs::canonicalize(a).ok().as_deref()
        };
        if exe.is_some_and(same_file) {
            Asker::Program(path.to_owned())
        } else if file.starts_with("libcudart") {
            Asker::NvidiaSharedRuntime(path.to_owned())
        } else if PROBING.iter().any(|p| file.starts_with(p)) {
            Asker::Probing(path.to_owned())
        } else {
            Asker::EmbeddedRuntime(path.to_owned())
        }
    }

    fn advice(&self) -> String {
        const TABLES: &str = "asked for the driver's private export tables, which cumock does \
                              not imitate";
        const RUN: &str = "run with cumock's runtime first in the library path: `cumock exec \
                           -- PROGRAM`, or LD_LIBRARY_PATH=$(cumock lib-path)";
        match self {
            Asker::NvidiaSharedRuntime(p) => format!(
                "NVIDIA's CUDA runtime ({p}) {TABLES}: it was found before cumock's own \
                 libcudart.so.13; {RUN}"
            ),
            Asker::Program(p) => format!(
                "the program ({p}) {TABLES}: it is linked with NVIDIA's static CUDA runtime \
                 (nvcc's default, `-cudart static`). Build it with `nvcc -cudart shared` and \
                 {RUN}"
            ),
            Asker::EmbeddedRuntime(p) => format!(
                "{p} {TABLES}: it embeds NVIDIA's static CUDA runtime, so it cannot run on the \
                 mock (as warp, CuPy's cupy-cuda wheels, PyTorch's CUDA kernels and NVIDIA's \
                 math libraries; see the README's \"What cannot run on the mock\"). What runs: \
                 code that calls the driver API or a shared runtime (numba-cuda, cuda-core and \
                 cuda-python, cudarc, programs built with `nvcc -cudart shared`, CuPy built \
                 from its sdist against cumock's runtime: docs/frameworks/cupy.md)"
            ),
            Asker::Probing(p) => format!(
                "{p} looked for the driver's private export tables, which cumock does not \
                 imitate; it goes on without them"
            ),
            Asker::Unknown => format!(
                "a library {TABLES}, as NVIDIA's CUDA runtime does (a program built with \
                 nvcc's default `-cudart static`, or NVIDIA's libcudart.so). Build with `nvcc \
                 -cudart shared` and {RUN}"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_advice_follows_who_asked() {
        let exe = std::env::current_exe().unwrap();
        let me = exe.to_str().unwrap();
        assert_eq!(Asker::of(Some(me), Some(&exe)), Asker::Program(me.into()));
        let a = Asker::of(Some("/usr/lib/libcudart.so.13"), Some(&exe));
        assert!(matches!(a, Asker::NvidiaSharedRuntime(_)));
        assert!(a.advice().contains("cumock exec"), "{}", a.advice());
        let a = Asker::of(
            Some("/venv/lib/python3.12/site-packages/warp/bin/warp.so"),
            Some(&exe),
        );
        assert!(matches!(a, Asker::EmbeddedRuntime(_)));
        assert!(a.advice().contains("warp.so") && a.advice().contains("embeds NVIDIA's static"));
        let a = Asker::of(Some("/x/nvidia/cu13/lib/libnvrtc.so.13"), Some(&exe));
        assert!(matches!(a, Asker::Probing(_)));
        assert_eq!(Asker::of(None, Some(&exe)), Asker::Unknown);
        assert!(Asker::Program(me.into())
            .advice()
            .contains("-cudart shared"));
    }
}
