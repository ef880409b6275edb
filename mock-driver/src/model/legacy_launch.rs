//! The legacy launch (cuda.h's deprecated execution control): a function's own parameter
//! buffer (cuParamSetSize, cuParamSeti/f/v), block shape (cuFuncSetBlockShape) and dynamic
//! shared memory (cuFuncSetSharedSize), launched by cuLaunch, cuLaunchGrid and
//! cuLaunchGridAsync through the same launch as cuLaunchKernel (`Driver::launch`).
//!
//! Recorded on the H200 (probe api_gaps3, legacy-launch and legacy-launch-errors):
//! - the settings are one state per function, which cuLaunchKernel sets too: a cuLaunch
//!   after a cuLaunchKernel runs with that launch's block and parameters;
//! - a block shape the device cannot run (a 0, or more than its limits) and dynamic
//!   shared memory past the function's limit are CUDA_ERROR_INVALID_VALUE, the state
//!   kept; a bad grid of cuLaunchGrid is the launch's own CUDA_ERROR_INVALID_VALUE;
//! - a parameter size up to 32764 bytes is taken (any size, not the kernel's), 32768 is
//!   CUDA_ERROR_INVALID_VALUE; cuParamSeti past the size set is CUDA_SUCCESS, and at 4096
//!   past it the H200 crashes (SIGSEGV): the mock keeps writes within the largest size
//!   and refuses the rest;
//! - a function never set launches (a kernel without parameters, `cuLaunch` of it).
//!
//! Recorded too (legacy-launch-errors2): a misaligned offset is taken; cuParamSetv of
//! NULL is CUDA_ERROR_INVALID_VALUE even for 0 bytes; a launch with fewer parameter bytes
//! set than the kernel takes runs (the rest read as zeros: a kernel launched with nothing
//! set wrote through a NULL pointer, CUDA_ERROR_ILLEGAL_ADDRESS), one with more is
//! CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES; NULL functions are CUDA_ERROR_INVALID_HANDLE;
//! cuFuncSetBlockShape and cuLaunch without a current context are
//! CUDA_ERROR_INVALID_CONTEXT. A negative offset crashed the H200
//! (legacy-launch-negative-offset-crash): the mock refuses it.

use super::error::*;
use super::ids::{FunctionId, StreamId};
use super::launch::LaunchRequest;
use super::module::attr::{DEV_MAX_BLOCK_DIM, DEV_MAX_THREADS_PER_BLOCK};
use super::Driver;
use cumock_abi::result::*;

/// The largest parameter buffer the H200 takes (cuParamSetSize of 32764 is CUDA_SUCCESS,
/// 32768 CUDA_ERROR_INVALID_VALUE): CUDA 12.1's limit on a kernel's parameters.
pub const MAX_PARAM_BYTES: usize = 32764;

/// One function's legacy launch settings.
#[derive(Clone, Debug)]
pub struct LegacyLaunch {
    pub block: [u32; 3],
    pub shared: u32,
    /// The size cuParamSetSize set (0 until then).
    pub param_size: usize,
    /// The bytes written, which may run past `param_size` (the H200 takes such writes);
    /// never longer than `MAX_PARAM_BYTES`.
    pub params: Vec<u8>,
}

impl Default for LegacyLaunch {
    /// A function never set: a launch of it with no shape set runs on the H200 (a kernel
    /// without parameters); its block of one thread is the mock's choice, which a kernel
    /// that does nothing cannot show.
    fn default() -> Self {
        LegacyLaunch {
            block: [1, 1, 1],
            shared: 0,
            param_size: 0,
            params: Vec::new(),
        }
    }
}

impl LegacyLaunch {
    /// The parameter buffer a launch of a kernel taking `size` bytes passes: what was
    /// written within the size set, zeros after it.
    fn buffer(&self, size: usize) -> Vec<u8> {
        let mut buf = vec![0u8; size.max(self.param_size)];
        let n = self.params.len().min(self.param_size);
        buf[..n].copy_from_slice(&self.params[..n]);
        buf
    }
}

impl Driver {
    /// cuFuncSetBlockShape: a current context is needed (legacy-launch-errors2).
    pub fn legacy_block_shape(&self, f: FunctionId, x: i32, y: i32, z: i32) -> CuResult<()> {
        let mut st = self.state.lock();
        let (handle, r) = st.modules.function(f)?;
        st.contexts.require_current()?;
        let device = st.modules.module(r.module)?.device;
        let limit = |a: i32, d: i32| self.device_attribute(device, a, d);
        let max = [
            limit(DEV_MAX_BLOCK_DIM[0], 1024),
            limit(DEV_MAX_BLOCK_DIM[1], 1024),
            limit(DEV_MAX_BLOCK_DIM[2], 64),
        ];
        let shape = [x, y, z];
        if shape.iter().zip(max).any(|(&n, m)| n < 1 || n > m) {
            return Err(invalid(format!(
                "block {x}x{y}x{z}: each dimension is 1 to the device's {max:?}"
            )));
        }
        let threads = i64::from(x) * i64::from(y) * i64::from(z);
        let max_threads = limit(DEV_MAX_THREADS_PER_BLOCK, 1024);
        if threads > i64::from(max_threads) {
            return Err(invalid(format!(
                "block {x}x{y}x{z} is {threads} threads: the device runs at most {max_threads} a block"
            )));
        }
        st.modules.legacy.entry(handle).or_default().block = shape.map(|n| n as u32);
        Ok(())
    }

    /// cuFuncSetSharedSize: up to the function's dynamic shared memory limit (the H200
    /// refuses 48 KiB + 1 for a kernel whose limit was not raised).
    pub fn legacy_shared_size(&self, f: FunctionId, bytes: u32) -> CuResult<()> {
        let mut st = self.state.lock();
        let (handle, r) = st.modules.function(f)?;
        let limit = self.dynamic_shared_limit(st.modules.module(r.module)?, &r);
        if bytes > limit {
            return Err(invalid(format!(
                "{bytes} bytes of dynamic shared memory: the kernel may use {limit} \
                 (cuFuncSetAttribute MAX_DYNAMIC_SHARED_SIZE_BYTES raises it)"
            )));
        }
        st.modules.legacy.entry(handle).or_default().shared = bytes;
        Ok(())
    }

    /// cuParamSetSize.
    pub fn legacy_param_size(&self, f: FunctionId, bytes: u32) -> CuResult<()> {
        let mut st = self.state.lock();
        let (handle, _) = st.modules.function(f)?;
        if bytes as usize > MAX_PARAM_BYTES {
            return Err(invalid(format!(
                "{bytes} bytes of parameters: a kernel takes at most {MAX_PARAM_BYTES}"
            )));
        }
        st.modules.legacy.entry(handle).or_default().param_size = bytes as usize;
        Ok(())
    }

    /// cuParamSeti, cuParamSetf and cuParamSetv: `bytes` at `offset` of the function's
    /// parameter buffer. Past the size set is taken, as on the H200; past the largest
    /// buffer the H200 writes out of bounds (SIGSEGV at 4096 past a 24-byte size): the
    /// mock refuses it.
    pub fn legacy_param_write(&self, f: FunctionId, offset: i32, bytes: &[u8]) -> CuResult<()> {
        let mut st = self.state.lock();
        let (handle, _) = st.modules.function(f)?;
        let end = usize::try_from(offset)
            .ok()
            .and_then(|o| o.checked_add(bytes.len()))
            .filter(|&end| end <= MAX_PARAM_BYTES)
            .ok_or_else(|| {
                invalid(format!(
                    "{} bytes at offset {offset}: outside the {MAX_PARAM_BYTES} bytes a kernel's \
                     parameters may take (the H200 writes out of bounds there and may crash)",
                    bytes.len()
                ))
            })?;
        let legacy = st.modules.legacy.entry(handle).or_default();
        if legacy.params.len() < end {
            legacy.params.resize(end, 0);
        }
        legacy.params[end - bytes.len()..end].copy_from_slice(bytes);
        Ok(())
    }

    /// cuLaunch (grid 1x1), cuLaunchGrid and cuLaunchGridAsync: the function's settings
    /// launched as cuLaunchKernel launches. More parameter bytes set than the kernel takes
    /// is CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES; fewer launch, the rest zeros (both recorded
    /// on the H200, legacy-launch-errors2).
    pub fn legacy_launch(
        &'static self,
        f: FunctionId,
        grid: [i32; 2],
        stream: StreamId,
    ) -> CuResult<()> {
        let function = self.launch_function(f)?;
        let (handle, settings) = {
            let st = self.state.lock();
            let (handle, _) = st.modules.function(f)?;
            (
                handle,
                st.modules.legacy.get(&handle).cloned().unwrap_or_default(),
            )
        };
        let size = Driver::params_size(function.params());
        if settings.param_size > size {
            return Err(CuError::new(
                CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
                format!(
                    "cuParamSetSize set {} bytes; the kernel's parameters take {size}",
                    settings.param_size
                ),
            ));
        }
        // A negative width or height is past any grid: the launch's check refuses it.
        let dim = |n: i32| u32::try_from(n).unwrap_or(u32::MAX);
        self.launch(
            &function,
            LaunchRequest {
                function: handle,
                grid: [dim(grid[0]), dim(grid[1]), 1],
                block: settings.block,
                shared: settings.shared,
                stream,
                params: settings.buffer(size),
                cooperative: false,
                cluster: None,
            },
        )
    }

    /// What a launch of `req.function` leaves as its legacy settings: the H200's cuLaunch
    /// after a cuLaunchKernel runs with that launch's block and parameters.
    pub(super) fn remember_launch(&self, req: &LaunchRequest) {
        let mut st = self.state.lock();
        let Ok((handle, _)) = st.modules.function(req.function) else {
            return;
        };
        let legacy = st.modules.legacy.entry(handle).or_default();
        legacy.block = req.block;
        legacy.shared = req.shared;
        legacy.param_size = req.params.len();
        legacy.params.clone_from(&req.params);
    }
}
