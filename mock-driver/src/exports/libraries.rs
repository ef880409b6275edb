//! Library management (cuda.h's group CUDA_LIBRARY): context-independent modules and
//! their kernels, loaded from memory or files.

use super::jit::JitOutputs;
use super::{image_bytes, read_image_file, Mock};
use crate::boundary::{c_str, drv, Handle};
use cumock_abi::*;
use std::ffi::c_uint;

impl LibraryApi for Mock {
    emulate! {
        /// The JIT options are read first, then the driver is asked for, then `library`
        /// checked (`#[late]`), then the image.
        fn cuLibraryLoadData(; #[late] library, code, jit_options, jit_values, num_jit, _lib_options, _lib_values, _num_lib) {
            // Safety: cuda.h's contract for the option arrays.
            let jit = unsafe { JitOutputs::read(num_jit, jit_options, jit_values) }?;
            let r = (|| {
                let d = drv()?;
                let library = library.check()?;
                let image = image_bytes(code)?;
                library.write_key(d.library_load(image)?)
            })();
            // Safety: as above; the arrays outlive the call.
            unsafe { jit.finish_with(&r) };
            r
        }

        /// As cuLibraryLoadData, the file's name checked after `library`.
        fn cuLibraryLoadFromFile(; #[late] library, #[raw] file_name, jit_options, jit_values, num_jit, _lib_options, _lib_values, _num_lib) {
            // Safety: cuda.h's contract for the option arrays.
            let jit = unsafe { JitOutputs::read(num_jit, jit_options, jit_values) }?;
            let r = (|| {
                let d = drv()?;
                let library = library.check()?;
                // Safety: cuda.h's contract for a string.
                let image = read_image_file(unsafe { c_str(file_name, "fileName is NULL") }?)?;
                library.write_key(d.library_load(image)?)
            })();
            // Safety: as above; the arrays outlive the call.
            unsafe { jit.finish_with(&r) };
            r
        }
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
