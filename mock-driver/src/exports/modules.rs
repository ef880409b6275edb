//! Module management (cuda.h's group CUDA_MODULE, with its deprecated part): loading
//! images (PTX, cubins, fatbins) from memory or files, and finding functions and globals
//! in them.

use super::jit::{finish_link, forget_link_outputs, keep_link_outputs, JitOutputs};
use super::{image_bytes, out_pair, read_image_file, Mock};
use crate::boundary::c_str;
use crate::model::error::*;
use crate::model::images;
use cumock_abi::result::*;
use cumock_abi::*;
use std::ffi::{c_uint, c_void, CStr};

impl ModuleApi for Mock {
    emulate! {
        fn cuModuleLoadData(d; module, image) {
            let image = image_bytes(image)?;
            module.write_key(d.module_load(image)?)
        }

        fn cuModuleLoad(d; module, fname) {
            let image = read_image_file(fname)?;
            module.write_key(d.module_load(image)?)
        }

        fn cuModuleUnload(d; hmod) {
            d.module_unload(hmod)
        }

        fn cuModuleGetFunction(d; hfunc, hmod, name) {
            match d.module_get_function(hmod, &name.to_string_lossy()) {
                Ok(f) => hfunc.write_key(f),
                Err(e) => {
                    // The H200 zeroes the function when the name is not found.
                    if e.code == CUDA_ERROR_NOT_FOUND {
                        hfunc.write(std::ptr::null_mut())?;
                    }
                    Err(e)
                }
            }
        }

        /// A module's `.global .texref` by name; CUDA_ERROR_NOT_FOUND for another name.
        fn cuModuleGetTexRef(d; p_tex_ref, hmod, name) {
            let h = d.module_reference(hmod, &name.to_string_lossy(), false)?;
            p_tex_ref.write(h as CUtexref)
        }

        /// A module's `.global .surfref` by name; CUDA_ERROR_NOT_FOUND for another name.
        fn cuModuleGetSurfRef(d; p_surf_ref, hmod, name) {
            let h = d.module_reference(hmod, &name.to_string_lossy(), true)?;
            p_surf_ref.write(h as CUsurfref)
        }

        fn cuModuleGetGlobal_v2(d; dptr, bytes, hmod, name) {
            // The H200 zeroes both outputs when the name is not found.
            let found = d
                .module_get_global(hmod, &name.to_string_lossy())
                .map(|(addr, size)| (addr.get(), size as usize));
            out_pair(dptr, bytes, found, |e| e.code == CUDA_ERROR_NOT_FOUND)
        }

        fn cuLinkCreate_v2(d; num_options, options, option_values, state_out) {
            // Safety: cuda.h's contract for the option arrays, which also says they stay
            // valid until cuLinkDestroy (the logs are written at cuLinkComplete).
            let jit = unsafe { JitOutputs::read(num_options, options, option_values) }?;
            let link = d.link_create(jit.max_registers)?;
            keep_link_outputs(link, jit);
            state_out.write_key(link)
        }

        fn cuLinkAddData_v2(d; link, type_, data, size, name, num_options, options, option_values) {
            // Safety: cuda.h's contract for the option arrays.
            let jit = unsafe { JitOutputs::read(num_options, options, option_values) }?;
            let r = (|| {
                if data.is_null() || size == 0 {
                    return Err(invalid("data is NULL or size is 0"));
                }
                let bytes = images::bytes_at(&images::OwnProcess, data as u64, size as u64)?;
                d.link_add(link, type_, bytes, &input_name(name, "data"))
            })();
            // Safety: as above, and cuLinkCreate's arrays are valid until cuLinkDestroy.
            unsafe {
                jit.finish_with(&r);
                finish_link(link, &r, "");
            }
            r
        }

        fn cuModuleGetFunctionCount(d; count, hmod) {
            count.write(d.module_functions(hmod)?.len() as c_uint)
        }

        fn cuModuleEnumerateFunctions(d; #[late] functions, _num_functions, hmod) {
            super::write_handles(functions, &d.module_functions(hmod)?)
        }

        fn cuModuleGetLoadingMode(; mode) {
            mode.write(crate::model::module::module_loading_mode() as CUmoduleLoadingMode)
        }

        fn cuLinkDestroy(d; link) {
            d.link_destroy(link)?;
            forget_link_outputs(link);
            Ok(())
        }
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

    // The option arrays are read, and their outputs written, whatever the other arguments
    // are: the path and the outputs are checked inside the call's result (`#[raw]`,
    // `#[late]`), which the logs report.
    emulate! {
        fn cuLinkAddFile_v2(d; link, type_, #[raw] path, num_options, options, option_values) {
            // Safety: cuda.h's contract for the option arrays.
            let jit = unsafe { JitOutputs::read(num_options, options, option_values) }?;
            let r = (|| {
                // Safety: cuda.h's contract for a string.
                let path = unsafe { c_str(path, "path is NULL") }?;
                let name = input_name(Some(path), "file");
                let bytes = images::read_file(&name, images::MAX_IMAGE_BYTES).map_err(|e| {
                    CuError::new(CUDA_ERROR_FILE_NOT_FOUND, format!("{name}: {e}"))
                })?;
                d.link_add(link, type_, bytes, &name)
            })();
            // Safety: as in cuLinkAddData_v2.
            unsafe {
                jit.finish_with(&r);
                finish_link(link, &r, "");
            }
            r
        }

        // cuda.h says sizeOut is optional; the mock needs it (the cubin is the program's to
        // copy), and checks it when written, as cubinOut.
        fn cuLinkComplete(d; link, #[late] cubin_out, #[late] size_out) {
            let mut info = String::new();
            let r = (|| {
                let (cubin_out, size_out) = (cubin_out.check()?, size_out.check()?);
                let (addr, len, log) = d.link_complete(link)?;
                info = log;
                cubin_out.write(addr as *mut c_void)?;
                size_out.write(len)
            })();
            // Safety: cuLinkCreate's arrays are valid until cuLinkDestroy, per cuda.h.
            unsafe { finish_link(link, &r, &info) };
            r
        }
    }
}

/// An input's name for messages: the program's, or what it is.
fn input_name(name: Option<&CStr>, what: &str) -> String {
    name.map_or_else(|| format!("<{what}>"), |n| n.to_string_lossy().into_owned())
}
