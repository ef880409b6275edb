//! Page-locked host memory over `model::host_memory`: cuMemHostAlloc, cuMemAllocHost,
//! cuMemFreeHost, cuMemHostGetFlags, cuMemHostGetDevicePointer, cuMemHostRegister and
//! cuMemHostUnregister. cuda.h files them under `MemoryApi`, whose methods
//! (exports/mod.rs) call these.

use super::Mock;
use crate::model::error::*;
use cumock_abi::*;
use std::ffi::{c_uint, c_void};

emulate! {
    pub(super) fn cuMemHostAlloc(d; pp, bytesize, flags) {
        match d.host_alloc(bytesize as u64, flags) {
            Ok(p) => pp.write(p as *mut c_void),
            Err(e) => {
                // Observed: the H200 writes NULL when it fails.
                pp.write(std::ptr::null_mut())?;
                Err(e)
            }
        }
    }

    pub(super) fn cuMemFreeHost(d; p) {
        d.host_free(p as u64)
    }

    pub(super) fn cuMemHostGetFlags(d; pflags, p) {
        pflags.write(d.host_flags(p as u64)?)
    }

    pub(super) fn cuMemHostGetDevicePointer_v2(d; pdptr, p, flags) {
        pdptr.zero_on_failure(d.host_device_pointer(p as u64, flags))
    }

    pub(super) fn cuMemHostRegister_v2(d; p, bytesize, flags) {
        d.host_register(p as u64, bytesize as u64, flags)
    }

    pub(super) fn cuMemHostUnregister(d; p) {
        d.host_unregister(p as u64)
    }
}

pub(super) unsafe fn cuMemAllocHost_v2(pp: *mut *mut c_void, bytesize: usize) -> CuResult<()> {
    cuMemHostAlloc(pp, bytesize, 0)
}

// CUDA 4.0's version, which the _v2 of CUDA 6.5 replaced with the same parameters:
// what the H200 answers to it is not recorded, so it is not emulated, rather than
// taking _v2's behaviour by default.
pub(super) unsafe fn cuMemHostRegister(
    _p: *mut c_void,
    _bytesize: usize,
    _flags: c_uint,
) -> CuResult<()> {
    Mock::not_emulated("cuMemHostRegister")
}
