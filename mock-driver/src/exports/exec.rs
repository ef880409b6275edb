//! Functions and host functions (cuda.h's group CUDA_EXEC, with its deprecated part,
//! `ExecutionControlApi`, whose methods in exports/mod.rs call these): functions' names
//! and attributes (cuFuncGetName, cuFuncGetAttribute, cuFuncSetAttribute,
//! cuFuncSetCacheConfig) and cuLaunchHostFunc. Kernel launches are in `launch.rs`.

use crate::boundary::{drv, Handle};
use crate::model::error::*;
use cumock_abi::*;
use std::ffi::{c_char, c_void};

// graphs.rs reads a kernel node's parameters from here.
pub(super) use super::launch::param_buffer;

emulate! {
    /// A NULL function is CUDA_ERROR_INVALID_VALUE, not INVALID_HANDLE: cuda-python's
    /// own suite asserts it on NVIDIA's GPUs (cuda_bindings/tests/test_cuda.py,
    /// test_cuFuncGetName_failure); probe cuda_python records the H200's answer.
    pub(super) fn cuFuncGetName(d; name, #[nonnull] hfunc) {
        name.write(intern(&d.function_name(hfunc)?))
    }

    pub(super) fn cuFuncGetAttribute(d; pi, attrib, hfunc) {
        pi.write(d.function_attribute(hfunc, attrib)?)
    }

    pub(super) fn cuFuncSetAttribute(d; hfunc, attrib, value) {
        d.function_set_attribute(hfunc, attrib, value)
    }

    pub(super) fn cuFuncSetCacheConfig(d; hfunc, config) {
        d.function_set_cache_config(hfunc, config)
    }

    // Observed (probe api_gaps, module-queries): a NULL function is CUDA_ERROR_INVALID_VALUE.
    pub(super) fn cuFuncGetModule(d; #[late] hmod, #[nonnull] hfunc) {
        hmod.write_key(d.function_module(hfunc)?)
    }

    // Observed (probe api_gaps, module-queries): a NULL function is CUDA_ERROR_INVALID_VALUE.
    pub(super) fn cuFuncGetParamInfo(d; #[nonnull] func, param_index, #[late] param_offset, param_size) {
        let (offset, size) = d.function_param_info(func, param_index)?;
        param_offset.write(offset)?;
        param_size.map_or(Ok(()), |p| p.write(size))
    }

    pub(super) fn cuFuncIsLoaded(d; #[late] state, hfunc) {
        // CU_FUNCTION_LOADING_STATE_LOADED 1, UNLOADED 0.
        state.write(d.function_is_loaded(hfunc)? as CUfunctionLoadingState)
    }

    pub(super) fn cuFuncLoad(d; hfunc) {
        d.function_load(hfunc)
    }

    /// Deprecated: the H200's shared-memory banks are 4 bytes, fixed; a device without a
    /// configurable bank size ignores the setting (cuda.h), so only its value is checked.
    pub(super) fn cuFuncSetSharedMemConfig(d; hfunc, config) {
        d.function_module(hfunc)?;
        crate::model::context::check_shared_config(config)
    }

    pub(super) fn cuLaunchHostFunc(d; s, #[nonnull] f, user_data) {
        d.ctx_device(None)?;
        d.stream_check(s)?;
        let handle = CUstream::of(s);
        if d.capture_of(s)?.is_some() {
            return super::graphs::capture_host_node(handle, f, user_data);
        }
        let data = ProgramData(user_data);
        // Safety: the program's function, called with its data, as it asked, after the
        // stream's earlier work (model/stream_queues.rs).
        queue_host_work(
            handle,
            "cuLaunchHostFunc",
            Box::new(move || unsafe { f(data.get()) }),
        )
    }
}

/// The program's pointer for its host function: the program promises it may be used on
/// the thread that runs the function, as CUDA runs it on a thread of its own.
pub(super) struct ProgramData(pub(super) *mut c_void);

// Safety: see above; the mock only passes the pointer on.
unsafe impl Send for ProgramData {}

impl ProgramData {
    /// Taken whole (not by field) so that a closure captures the `Send` wrapper.
    pub(super) fn get(&self) -> *mut c_void {
        self.0
    }
}

/// Queues host work on a stream (model/stream_queues.rs): the program's code, whose loads
/// of memory device work wrote are watched as a program thread's (`host_trap`).
pub(super) fn queue_host_work(
    s: CUstream,
    what: &str,
    job: Box<dyn FnOnce() + Send>,
) -> CuResult<()> {
    drv()?.enqueue_work(
        s.key(),
        what,
        Box::new(move || {
            let loads = crate::host_trap::program_code(job);
            crate::model::ordering::host_function_loaded(&loads);
        }),
    )
}

/// A C string that lives as long as the process (cuFuncGetName hands out pointers the
/// program never frees): one per distinct name.
fn intern(name: &str) -> *const c_char {
    static NAMES: std::sync::Mutex<Vec<std::ffi::CString>> = std::sync::Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = names.iter().find(|n| n.to_bytes() == name.as_bytes()) {
        return n.as_ptr();
    }
    let c = std::ffi::CString::new(name).unwrap_or_default();
    let p = c.as_ptr();
    names.push(c);
    p
}
