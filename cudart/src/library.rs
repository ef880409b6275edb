//! The library API (CUDA 12.0): cudaLibrary_t is the driver's CUlibrary and cudaKernel_t
//! its CUkernel (cuda_runtime_api.h: the two are interchangeable), so each call is the
//! driver's. cudaJitOption and cudaLibraryOption number their values as CUjit_option and
//! CUlibraryOption do. Kernels handed out are remembered, so that cudaLaunchKernel and
//! the cudaFunc* calls take them where they take a host stub (`kernel::function`).

use crate::boundary::{cudart_fn, out_ref};
use crate::error::{self, RtResult};
use crate::kernel::{forget_library, remember_kernel};
use crate::runtime::with_context;
use cumock_abi::{CUkernel, CUlibrary};
use std::ffi::{c_char, c_int, c_uint, c_void};

cudart_fn! {
    fn cudaLibraryLoadData(library: *mut CUlibrary, code: *const c_void, jit_options: *mut c_int, jit_options_values: *mut *mut c_void, num_jit_options: c_uint, library_options: *mut c_int, library_option_values: *mut *mut c_void, num_library_options: c_uint) {
        let (d, _, _) = with_context()?;
        // Safety: the program's image and option arrays of the counts it gives; the
        // driver refuses a NULL library or code.
        unsafe {
            d.cuLibraryLoadData(library, code, jit_options, jit_options_values, num_jit_options, library_options, library_option_values, num_library_options)
        }
    }
}

cudart_fn! {
    fn cudaLibraryLoadFromFile(library: *mut CUlibrary, file_name: *const c_char, jit_options: *mut c_int, jit_options_values: *mut *mut c_void, num_jit_options: c_uint, library_options: *mut c_int, library_option_values: *mut *mut c_void, num_library_options: c_uint) {
        let (d, _, _) = with_context()?;
        // Safety: the program's NUL-terminated path and option arrays of the counts it
        // gives; the driver refuses NULL.
        unsafe {
            d.cuLibraryLoadFromFile(library, file_name, jit_options, jit_options_values, num_jit_options, library_options, library_option_values, num_library_options)
        }
    }
}

cudart_fn! {
    fn cudaLibraryUnload(library: CUlibrary) {
        let (d, _, _) = with_context()?;
        d.cuLibraryUnload(library)?;
        forget_library(library);
        Ok(())
    }
}

cudart_fn! {
    fn cudaLibraryGetKernel(kernel: *mut CUkernel, library: CUlibrary, name: *const c_char) {
        // Safety: the program's out-pointer: NULL (refused) or writable.
        let out = unsafe { out_ref(kernel)? };
        let (d, _, _) = with_context()?;
        let mut k = std::ptr::null_mut();
        // Safety: the program's NUL-terminated name (the driver refuses NULL).
        unsafe { d.cuLibraryGetKernel(&mut k, library, name)? };
        remember_kernel(k, library);
        *out = k;
        Ok(())
    }
}

cudart_fn! {
    fn cudaLibraryGetKernelCount(count: *mut c_uint, lib: CUlibrary) {
        // Safety: the program's out-pointer: NULL (refused) or writable.
        let count = unsafe { out_ref(count)? };
        let (d, _, _) = with_context()?;
        d.cuLibraryGetKernelCount(count, lib)
    }
}

cudart_fn! {
    fn cudaLibraryEnumerateKernels(kernels: *mut CUkernel, num_kernels: c_uint, lib: CUlibrary) {
        if kernels.is_null() {
            return Err(error::invalid("kernels is NULL"));
        }
        let (d, _, _) = with_context()?;
        let mut got = vec![std::ptr::null_mut(); num_kernels as usize];
        // Safety: a buffer of the runtime's, `num_kernels` handles long.
        unsafe { d.cuLibraryEnumerateKernels(got.as_mut_ptr(), num_kernels, lib)? };
        for (i, k) in got.into_iter().enumerate() {
            if !k.is_null() {
                remember_kernel(k, lib);
            }
            // Safety: the program says its array holds `num_kernels` handles.
            unsafe { kernels.add(i).write(k) };
        }
        Ok(())
    }
}

/// cudaLibraryGetGlobal / GetManaged: the variable in the current context.
fn library_variable(
    managed: bool,
    dptr: *mut *mut c_void,
    bytes: *mut usize,
    library: CUlibrary,
    name: *const c_char,
) -> RtResult<()> {
    let (d, _, _) = with_context()?;
    // Safety: the program's out-pointers (each NULL to skip it, as cuda.h allows) and
    // NUL-terminated name; CUdeviceptr and void* are both 8 bytes.
    unsafe {
        if managed {
            d.cuLibraryGetManaged(dptr.cast(), bytes, library, name)
        } else {
            d.cuLibraryGetGlobal(dptr.cast(), bytes, library, name)
        }
    }
}

cudart_fn! {
    fn cudaLibraryGetGlobal(dptr: *mut *mut c_void, bytes: *mut usize, library: CUlibrary, name: *const c_char) {
        library_variable(false, dptr, bytes, library, name)
    }
}

cudart_fn! {
    fn cudaLibraryGetManaged(dptr: *mut *mut c_void, bytes: *mut usize, library: CUlibrary, name: *const c_char) {
        library_variable(true, dptr, bytes, library, name)
    }
}

cudart_fn! {
    fn cudaLibraryGetUnifiedFunction(fptr: *mut *mut c_void, library: CUlibrary, symbol: *const c_char) {
        let (d, _, _) = with_context()?;
        // Safety: the program's out-pointer and NUL-terminated name (the driver refuses NULL).
        unsafe { d.cuLibraryGetUnifiedFunction(fptr, library, symbol) }
    }
}

cudart_fn! {
    /// cudaFuncAttribute's values are CUfunction_attribute's. The kernel is any CUkernel,
    /// the driver's to judge (the two handle types are one).
    fn cudaKernelSetAttributeForDevice(kernel: CUkernel, attr: c_int, value: c_int, device: c_int) {
        let (d, rt, _) = with_context()?;
        rt.check_device(device)?;
        d.cuKernelSetAttribute(attr, value, kernel, device)
    }
}
