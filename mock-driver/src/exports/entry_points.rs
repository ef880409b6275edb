//! Driver entry point access (cuda.h's group CUDA_DRIVER_ENTRY_POINT): cuGetProcAddress,
//! which hands out the mock's own exports by base name and version, and cuGetExportTable,
//! the driver's private tables, which the mock refuses with advice.

use super::Mock;
use crate::boundary::{drv_any, out};
use crate::model::error::*;
use cumock_abi::result::*;
use cumock_abi::*;
use std::ffi::{c_char, c_int, c_void, CStr};

impl DriverEntryPointAccessApi for Mock {
    unsafe fn cuGetProcAddress_v2(
        symbol: *const c_char,
        pfn: *mut *mut c_void,
        version: c_int,
        flags: u64,
        status: *mut c_int,
    ) -> CuResult<()> {
        if symbol.is_null() || pfn.is_null() {
            return Err(invalid("symbol or pfn is NULL"));
        }
        // Safety: a non-NULL C string, per cuda.h.
        let name = unsafe { CStr::from_ptr(symbol) }.to_string_lossy();
        let d = drv_any()?;
        let (ptr, found) =
            crate::procaddress::resolve(&name, version, flags, d.profile.driver_version)?;
        out(pfn, ptr)?;
        if !status.is_null() {
            out(status, found)?;
        }
        Ok(())
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
        Err(CuError {
            code: CUDA_ERROR_NOT_SUPPORTED,
            message: "a library asked for the driver's private export tables, as NVIDIA's CUDA \
                      runtime does (a program built with nvcc's default `-cudart static`, or \
                      NVIDIA's libcudart.so). cumock does not imitate those tables. Build with \
                      `nvcc -cudart shared` and run with cumock's own runtime first in the \
                      library path: `cumock exec -- PROGRAM`, or \
                      LD_LIBRARY_PATH=$(cumock lib-path)"
                .into(),
            severity: Severity::WouldCrash,
        })
    }
}
