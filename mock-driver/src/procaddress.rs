//! cuGetProcAddress: a base name, a CUDA version and flags resolve to one exported
//! symbol through `cumock_abi::proc_address` (the declaration's table, which the
//! pass-through driver uses too); the function pointer is the mock's own export of that
//! name. What is the mock's own here: the checks of version and flags it observed on
//! the real driver.

use crate::model::error::*;
use cumock_abi::consts::*;
use cumock_abi::{proc_address, ProcLookup};
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
    if version > driver_version {
        // Observed: asking for a version newer than the driver is an error, not a miss.
        return Err(invalid(format!(
            "version {version} is newer than the driver's {driver_version}"
        )));
    }
    // Observed: version 0 (or less) is not an error, only too old for every function the
    // driver has; a name it does not have is not found at any version (probe
    // proc_address_table).
    match proc_address(
        name,
        version.max(0) as u32,
        flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM != 0,
    ) {
        ProcLookup::Found(sym) => match own_symbol(sym) {
            Some(p) => Ok((p, CU_GET_PROC_ADDRESS_SUCCESS)),
            None => Ok((std::ptr::null_mut(), CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND)),
        },
        ProcLookup::TooOld => Ok((
            std::ptr::null_mut(),
            CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT,
        )),
        ProcLookup::Unknown => Ok((std::ptr::null_mut(), CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND)),
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
