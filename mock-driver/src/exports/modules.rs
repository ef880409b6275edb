//! Module management (cuda.h's group CUDA_MODULE, with its deprecated part): loading
//! images (PTX, cubins, fatbins) from memory or files, and finding functions and globals
//! in them.

use super::jit::JitOutputs;
use super::{image_bytes, out_pair, read_image_file, Mock};
use crate::boundary::{drv, function_handle, module_handle, module_key, out};
use crate::model::error::*;
use cumock_abi::result::*;
use cumock_abi::*;
use std::ffi::{c_char, c_uint, c_void, CStr};

impl ModuleApi for Mock {
    unsafe fn cuModuleLoadData(module: *mut CUmodule, image: *const c_void) -> CuResult<()> {
        let d = drv()?;
        if module.is_null() {
            return Err(invalid("module is NULL"));
        }
        let image = image_bytes(image)?;
        out(module, module_handle(d.module_load(image)?))
    }

    unsafe fn cuModuleLoadDataEx(
        module: *mut CUmodule,
        image: *const c_void,
        num_options: c_uint,
        options: *mut CUjit_option,
        option_values: *mut *mut c_void,
    ) -> CuResult<()> {
        // Safety: cuda.h's contract for the option arrays.
        let jit = unsafe { JitOutputs::read(num_options, options, option_values) }?;
        let r = Self::cuModuleLoadData(module, image);
        // Safety: as above; the arrays outlive the call.
        unsafe { jit.finish_with(&r) };
        r
    }

    unsafe fn cuModuleLoadFatBinary(
        module: *mut CUmodule,
        fat_cubin: *const c_void,
    ) -> CuResult<()> {
        Self::cuModuleLoadData(module, fat_cubin)
    }

    unsafe fn cuModuleLoad(module: *mut CUmodule, fname: *const c_char) -> CuResult<()> {
        let d = drv()?;
        if module.is_null() || fname.is_null() {
            return Err(invalid("module or fname is NULL"));
        }
        let image = read_image_file(fname)?;
        out(module, module_handle(d.module_load(image)?))
    }

    unsafe fn cuModuleUnload(hmod: CUmodule) -> CuResult<()> {
        drv()?.module_unload(module_key(hmod))
    }

    unsafe fn cuModuleGetFunction(
        hfunc: *mut CUfunction,
        hmod: CUmodule,
        name: *const c_char,
    ) -> CuResult<()> {
        let d = drv()?;
        if hfunc.is_null() || name.is_null() {
            return Err(invalid("hfunc or name is NULL"));
        }
        // Safety: a non-NULL C string, per cuda.h.
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
        match d.module_get_function(module_key(hmod), &name) {
            Ok(f) => out(hfunc, function_handle(f)),
            Err(e) => {
                // The H200 zeroes the function when the name is not found.
                if e.code == CUDA_ERROR_NOT_FOUND {
                    out(hfunc, std::ptr::null_mut())?;
                }
                Err(e)
            }
        }
    }

    unsafe fn cuModuleGetGlobal_v2(
        dptr: *mut CUdeviceptr,
        bytes: *mut usize,
        hmod: CUmodule,
        name: *const c_char,
    ) -> CuResult<()> {
        let d = drv()?;
        if name.is_null() {
            return Err(invalid("name is NULL"));
        }
        // Safety: a non-NULL C string, per cuda.h.
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
        // The H200 zeroes both outputs when the name is not found.
        let found = d
            .module_get_global(module_key(hmod), &name)
            .map(|(addr, size)| (addr.get(), size as usize));
        out_pair(dptr, bytes, found, |e| e.code == CUDA_ERROR_NOT_FOUND)
    }
}
