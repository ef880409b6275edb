//! Library management (cuda.h's group CUDA_LIBRARY): context-independent modules and
//! their kernels, loaded from memory or files.

use super::jit::JitOutputs;
use super::{image_bytes, read_image_file, Mock};
use crate::boundary::{Handle, 
    drv, out,
};
use crate::model::error::*;
use cumock_abi::*;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

impl LibraryApi for Mock {
    unsafe fn cuLibraryLoadData(
        library: *mut CUlibrary,
        code: *const c_void,
        jit_options: *mut CUjit_option,
        jit_option_values: *mut *mut c_void,
        num_jit_options: c_uint,
        _library_options: *mut CUlibraryOption,
        _library_option_values: *mut *mut c_void,
        _num_library_options: c_uint,
    ) -> CuResult<()> {
        // Safety: cuda.h's contract for the option arrays.
        let jit = unsafe { JitOutputs::read(num_jit_options, jit_options, jit_option_values) }?;
        let r = (|| {
            let d = drv()?;
            if library.is_null() {
                return Err(invalid("library is NULL"));
            }
            let image = image_bytes(code)?;
            out(library, CUlibrary::of(d.library_load(image)?))
        })();
        // Safety: as above; the arrays outlive the call.
        unsafe { jit.finish_with(&r) };
        r
    }

    unsafe fn cuLibraryLoadFromFile(
        library: *mut CUlibrary,
        file_name: *const c_char,
        jit_options: *mut CUjit_option,
        jit_option_values: *mut *mut c_void,
        num_jit_options: c_uint,
        _library_options: *mut CUlibraryOption,
        _library_option_values: *mut *mut c_void,
        _num_library_options: c_uint,
    ) -> CuResult<()> {
        // Safety: cuda.h's contract for the option arrays.
        let jit = unsafe { JitOutputs::read(num_jit_options, jit_options, jit_option_values) }?;
        let r = (|| {
            let d = drv()?;
            if library.is_null() || file_name.is_null() {
                return Err(invalid("library or fileName is NULL"));
            }
            let image = read_image_file(file_name)?;
            out(library, CUlibrary::of(d.library_load(image)?))
        })();
        // Safety: as above; the arrays outlive the call.
        unsafe { jit.finish_with(&r) };
        r
    }

    unsafe fn cuLibraryUnload(library: CUlibrary) -> CuResult<()> {
        drv()?.library_unload(Handle::key(library))
    }

    unsafe fn cuLibraryGetModule(p_mod: *mut CUmodule, library: CUlibrary) -> CuResult<()> {
        let d = drv()?;
        out(
            p_mod,
            CUmodule::of(d.library_get_module(Handle::key(library))?),
        )
    }

    unsafe fn cuLibraryGetKernel(
        p_kernel: *mut CUkernel,
        library: CUlibrary,
        name: *const c_char,
    ) -> CuResult<()> {
        let d = drv()?;
        if p_kernel.is_null() || name.is_null() {
            return Err(invalid("pKernel or name is NULL"));
        }
        // Safety: a non-NULL C string, per cuda.h.
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
        out(
            p_kernel,
            CUkernel::of(d.library_get_kernel(Handle::key(library), &name)?),
        )
    }

    unsafe fn cuLibraryGetGlobal(
        dptr: *mut CUdeviceptr,
        bytes: *mut usize,
        library: CUlibrary,
        name: *const c_char,
    ) -> CuResult<()> {
        let module = drv()?.library_get_module(Handle::key(library))?;
        Self::cuModuleGetGlobal_v2(dptr, bytes, CUmodule::of(module), name)
    }

    unsafe fn cuKernelGetFunction(p_func: *mut CUfunction, kernel: CUkernel) -> CuResult<()> {
        let d = drv()?;
        out(
            p_func,
            CUfunction::of(d.kernel_get_function(Handle::key(kernel))?),
        )
    }

    unsafe fn cuKernelGetName(name: *mut *const c_char, kernel: CUkernel) -> CuResult<()> {
        let f = drv()?.kernel_get_function(Handle::key(kernel))?;
        Self::cuFuncGetName(name, CUfunction::of(f))
    }

    unsafe fn cuKernelGetAttribute(
        pi: *mut c_int,
        attrib: CUfunction_attribute,
        kernel: CUkernel,
        dev: CUdevice,
    ) -> CuResult<()> {
        let d = drv()?;
        // As the H200 answers a device it does not have (probe kernels, kernel-attributes).
        d.device(dev)?;
        let f = d.kernel_get_function(Handle::key(kernel))?;
        Self::cuFuncGetAttribute(pi, attrib, CUfunction::of(f))
    }

    /// The kernel's function in the mock is one for every device (the mock's devices
    /// are copies of one), so the attribute is set on it whichever device is named.
    unsafe fn cuKernelSetAttribute(
        attrib: CUfunction_attribute,
        val: c_int,
        kernel: CUkernel,
        dev: CUdevice,
    ) -> CuResult<()> {
        let d = drv()?;
        let f = d.kernel_get_function(Handle::key(kernel))?;
        d.device(dev)?;
        d.function_set_attribute(f, attrib, val)
    }

    unsafe fn cuKernelSetCacheConfig(
        kernel: CUkernel,
        config: CUfunc_cache,
        dev: CUdevice,
    ) -> CuResult<()> {
        let d = drv()?;
        let f = d.kernel_get_function(Handle::key(kernel))?;
        d.device(dev)?;
        d.function_set_cache_config(f, config)
    }
}
