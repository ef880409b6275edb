//! cuGetProcAddress: a base name, a CUDA version and flags resolve to one exported
//! symbol (`cuMemAlloc` at 3020+ is `cuMemAlloc_v2`; with the per-thread flag,
//! `cuMemcpyHtoD` is `cuMemcpyHtoD_v2_ptds`), from the table generated out of NVIDIA's
//! cudaTypedefs.h. The function pointer is the mock's own export of that name.

use crate::model::error::*;
use cumock_abi::consts::*;
use std::ffi::{c_void, CString};
use std::sync::OnceLock;

/// Returns (function pointer or NULL, CUdriverProcAddressQueryResult).
pub fn resolve(
    name: &str,
    version: i32,
    flags: u64,
    driver_version: i32,
) -> CuResult<(*mut c_void, i32)> {
    if flags & !(CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
        != 0
    {
        return Err(invalid(format!(
            "flags {flags:#x} are not CU_GET_PROC_ADDRESS_*"
        )));
    }
    if version <= 0 {
        // Observed: not an error, only too old for anything.
        return Ok((
            std::ptr::null_mut(),
            CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT,
        ));
    }
    if version > driver_version {
        // Observed: asking for a version newer than the driver is an error, not a miss.
        return Err(invalid(format!(
            "version {version} is newer than the driver's {driver_version}"
        )));
    }
    match symbol_for(
        name,
        version as u32,
        flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM != 0,
    ) {
        Lookup::Found(sym) => match own_symbol(sym) {
            Some(p) => Ok((p, CU_GET_PROC_ADDRESS_SUCCESS)),
            None => Ok((std::ptr::null_mut(), CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND)),
        },
        Lookup::TooOld => Ok((
            std::ptr::null_mut(),
            CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT,
        )),
        Lookup::Unknown => Ok((std::ptr::null_mut(), CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND)),
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum Lookup {
    Found(&'static str),
    TooOld,
    Unknown,
}

/// The exported symbol for `base` at `version`: the newest entry not newer than it,
/// preferring the per-thread-default-stream variant when asked and one exists.
pub fn symbol_for(base: &str, version: u32, per_thread: bool) -> Lookup {
    let entries: Vec<_> = cumock_abi::PROC_ENTRIES
        .iter()
        .filter(|e| e.0 == base)
        .collect();
    if entries.is_empty() {
        return Lookup::Unknown;
    }
    let newest = |variant: &str| {
        entries
            .iter()
            .filter(|e| e.2 == variant && e.1 <= version)
            .max_by_key(|e| e.1)
            .map(|e| e.3)
    };
    let found = if per_thread {
        newest("ptds").or_else(|| newest(""))
    } else {
        newest("")
    };
    match found {
        Some(sym) => Lookup::Found(sym),
        None => Lookup::TooOld,
    }
}

/// The address of one of this library's own exports.
fn own_symbol(name: &str) -> Option<*mut c_void> {
    static HANDLE: OnceLock<usize> = OnceLock::new();
    let handle = *HANDLE.get_or_init(|| {
        // Safety: dladdr fills a plain struct about an address of this library; dlopen
        // with RTLD_NOLOAD only returns a handle to an object already loaded.
        unsafe {
            let mut info: libc::Dl_info = std::mem::zeroed();
            if libc::dladdr(own_symbol as *const c_void, &mut info) == 0 || info.dli_fname.is_null()
            {
                return 0;
            }
            libc::dlopen(info.dli_fname, libc::RTLD_NOLOAD | libc::RTLD_LAZY) as usize
        }
    });
    if handle == 0 {
        return None;
    }
    let c = CString::new(name).ok()?;
    // Safety: handle is a live dlopen handle (NOLOAD keeps it valid while we are loaded).
    let p = unsafe { libc::dlsym(handle as *mut c_void, c.as_ptr()) };
    (!p.is_null()).then_some(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_pick_the_right_variant() {
        assert_eq!(
            symbol_for("cuMemAlloc", 12000, false),
            Lookup::Found("cuMemAlloc_v2")
        );
        assert_eq!(
            symbol_for("cuMemAlloc", 3000, false),
            Lookup::Found("cuMemAlloc")
        );
        assert_eq!(
            symbol_for("cuCtxCreate", 13000, false),
            Lookup::Found("cuCtxCreate_v4")
        );
        assert_eq!(
            symbol_for("cuCtxCreate", 12000, false),
            Lookup::Found("cuCtxCreate_v3")
        );
        assert_eq!(symbol_for("cuMemCreate", 10000, false), Lookup::TooOld);
        assert_eq!(symbol_for("cuMemAlloc_v2", 12000, false), Lookup::Unknown);
        assert_eq!(
            symbol_for("cuMemcpyHtoD", 12000, true),
            Lookup::Found("cuMemcpyHtoD_v2_ptds")
        );
        assert_eq!(
            symbol_for("cuMemcpyHtoDAsync", 12000, true),
            Lookup::Found("cuMemcpyHtoDAsync_v2_ptsz")
        );
        assert_eq!(
            symbol_for("cuMemCreate", 12000, true),
            Lookup::Found("cuMemCreate")
        );
    }

    #[test]
    fn bad_versions_and_flags_are_errors() {
        assert!(resolve("cuMemCreate", 99999, 0, 13000).is_err());
        assert!(resolve("cuMemCreate", 13010, 0, 13000).is_err());
        assert_eq!(
            resolve("cuMemCreate", 0, 0, 13000).unwrap().1,
            CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
        );
        assert!(resolve("cuMemCreate", 12000, 8, 13000).is_err());
    }
}
