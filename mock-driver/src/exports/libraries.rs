//! Library management (cuda.h's group CUDA_LIBRARY): context-independent modules and
//! their kernels, loaded from memory or files.

use super::jit::JitOutputs;
use super::{image_bytes, read_image_file, Mock};
use crate::boundary::{drv, out, Handle};
use crate::model::error::*;
use cumock_abi::*;
use std::ffi::{c_char, c_uint, c_void, CStr};

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
            // Safety: not NULL (checked above), and cuda.h's contract for a string.
            let image = read_image_file(unsafe { CStr::from_ptr(file_name) })?;
            out(library, CUlibrary::of(d.library_load(image)?))
        })();
        // Safety: as above; the arrays outlive the call.
        unsafe { jit.finish_with(&r) };
        r
    }

    // The library's module and the kernel's function answer as a module's and a
    // function's do, after the handle is checked (`#[raw]`: their calls check the rest).
    emulate! {
        fn cuLibraryGetGlobal(d; #[raw] dptr, #[raw] bytes, library, #[raw] name) {
            let module = d.library_get_module(library)?;
            Self::cuModuleGetGlobal_v2(dptr, bytes, CUmodule::of(module), name)
        }

        // NULL: CUDA_ERROR_INVALID_VALUE, as cuFuncGetName's (test_cuKernelGetName_failure).
        fn cuKernelGetName(d; #[raw] name, #[nonnull] kernel) {
            let f = d.kernel_get_function(kernel)?;
            Self::cuFuncGetName(name, CUfunction::of(f))
        }
    }

    // The library's and kernel's getters check the handle before the out-parameter
    // (`#[late]`).
    emulate! {
        fn cuLibraryUnload(d; library) {
            d.library_unload(library)
        }

        fn cuLibraryGetModule(d; #[late] p_mod, library) {
            p_mod.write_key(d.library_get_module(library)?)
        }

        fn cuLibraryGetKernel(d; p_kernel, library, name) {
            p_kernel.write_key(d.library_get_kernel(library, &name.to_string_lossy())?)
        }

        fn cuKernelGetFunction(d; #[late] p_func, kernel) {
            p_func.write_key(d.kernel_get_function(kernel)?)
        }

        fn cuKernelGetAttribute(d; #[late] pi, attrib, kernel, dev) {
            // As the H200 answers a device it does not have (probe kernels, kernel-attributes).
            d.device(dev)?;
            let f = d.kernel_get_function(kernel)?;
            Self::cuFuncGetAttribute(pi.as_ptr(), attrib, CUfunction::of(f))
        }

        /// The kernel's function in the mock is one for every device (the mock's devices
        /// are copies of one), so the attribute is set on it whichever device is named.
        fn cuKernelSetAttribute(d; attrib, val, kernel, dev) {
            let f = d.kernel_get_function(kernel)?;
            d.device(dev)?;
            d.function_set_attribute(f, attrib, val)
        }

        fn cuKernelGetLibrary(d; #[late] p_lib, kernel) {
            p_lib.write_key(d.kernel_library(kernel)?)
        }

        // Observed: a NULL kernel is CUDA_ERROR_INVALID_VALUE here (`#[nonnull]`).
        fn cuKernelGetParamInfo(d; #[nonnull] kernel, param_index, #[late] param_offset, param_size) {
            let f = d.kernel_get_function(kernel)?;
            let (offset, size) = d.function_param_info(f, param_index)?;
            param_offset.write(offset)?;
            param_size.map_or(Ok(()), |p| p.write(size))
        }

        fn cuLibraryGetKernelCount(d; #[late] count, lib) {
            count.write(d.library_kernels(lib)?.len() as c_uint)
        }

        fn cuLibraryEnumerateKernels(d; #[late] kernels, _num_kernels, lib) {
            super::write_handles(kernels, &d.library_kernels(lib)?)
        }

        /// Observed (probe api_gaps): either output may be NULL, not both (roles.txt's
        /// `either` line); unlike cuLibraryGetGlobal's, the outputs are left as they were
        /// when the name is not found.
        fn cuLibraryGetManaged(d; dptr, bytes, library, name) {
            let (addr, size) = d.library_get_managed(library, &name.to_string_lossy())?;
            if let Some(p) = dptr {
                p.write(addr.get())?;
            }
            bytes.map_or(Ok(()), |p| p.write(size as usize))
        }

        fn cuLibraryGetUnifiedFunction(d; _fptr, library, symbol) {
            d.library_get_unified_function(library, &symbol.to_string_lossy())
        }

        fn cuKernelSetCacheConfig(d; kernel, config, dev) {
            let f = d.kernel_get_function(kernel)?;
            d.device(dev)?;
            d.function_set_cache_config(f, config)
        }
    }
}
