//! Context management (cuda.h's group CUDA_CTX, with its deprecated part): creating and
//! destroying contexts, the thread's context stack, and a context's device, flags, limits
//! and stream priorities.

use super::Mock;
use crate::boundary::{ctx_handle, ctx_key, drv, input, out};
use crate::model::error::*;
use cumock_abi::*;
use std::ffi::{c_int, c_uint};

impl ContextApi for Mock {
    unsafe fn cuCtxCreate_v2(pctx: *mut CUcontext, flags: c_uint, dev: CUdevice) -> CuResult<()> {
        let d = drv()?;
        if pctx.is_null() {
            return Err(invalid("pctx is NULL"));
        }
        out(pctx, ctx_handle(d.ctx_create(flags, dev)?))
    }

    unsafe fn cuCtxCreate_v3(
        pctx: *mut CUcontext,
        params: *mut CUexecAffinityParam,
        num_params: c_int,
        flags: c_uint,
        dev: CUdevice,
    ) -> CuResult<()> {
        if num_params > 0 || !params.is_null() {
            return Err(not_supported(
                "execution affinity parameters are not emulated",
            ));
        }
        Self::cuCtxCreate_v2(pctx, flags, dev)
    }

    unsafe fn cuCtxCreate_v4(
        pctx: *mut CUcontext,
        params: *mut CUctxCreateParams,
        flags: c_uint,
        dev: CUdevice,
    ) -> CuResult<()> {
        if !params.is_null() {
            let p = input(params.cast_const(), "ctxCreateParams")?;
            if p.num_exec_affinity_params > 0 || !p.cig_params.is_null() {
                return Err(not_supported(
                    "execution affinity and CIG parameters are not emulated",
                ));
            }
        }
        Self::cuCtxCreate_v2(pctx, flags, dev)
    }

    unsafe fn cuCtxDestroy_v2(ctx: CUcontext) -> CuResult<()> {
        let key = ctx_key(ctx).ok_or_else(|| invalid("ctx is NULL"))?;
        drv()?.ctx_destroy(key)
    }

    unsafe fn cuCtxSetCurrent(ctx: CUcontext) -> CuResult<()> {
        drv()?.ctx_set_current(ctx_key(ctx))
    }

    unsafe fn cuCtxGetCurrent(pctx: *mut CUcontext) -> CuResult<()> {
        let d = drv()?;
        out(
            pctx,
            d.ctx_current().map_or(std::ptr::null_mut(), ctx_handle),
        )
    }

    unsafe fn cuCtxPushCurrent_v2(ctx: CUcontext) -> CuResult<()> {
        let key = ctx_key(ctx).ok_or_else(|| invalid("ctx is NULL"))?;
        drv()?.ctx_push(key)
    }

    unsafe fn cuCtxPopCurrent_v2(pctx: *mut CUcontext) -> CuResult<()> {
        let c = drv()?.ctx_pop()?;
        if !pctx.is_null() {
            out(pctx, ctx_handle(c))?;
        }
        Ok(())
    }

    unsafe fn cuCtxGetDevice(device: *mut CUdevice) -> CuResult<()> {
        let d = drv()?;
        if device.is_null() {
            return Err(invalid("device is NULL"));
        }
        out(device, d.ctx_device(None)? as CUdevice)
    }

    unsafe fn cuCtxGetDevice_v2(device: *mut CUdevice, ctx: CUcontext) -> CuResult<()> {
        let d = drv()?;
        if device.is_null() {
            return Err(invalid("device is NULL"));
        }
        out(device, d.ctx_device(ctx_key(ctx))? as CUdevice)
    }

    unsafe fn cuCtxSynchronize() -> CuResult<()> {
        Self::cuCtxSynchronize_v2(std::ptr::null_mut())
    }

    unsafe fn cuCtxSynchronize_v2(ctx: CUcontext) -> CuResult<()> {
        let d = drv()?;
        // It would wait for captured streams, which never run: refused during a capture
        // as the capture modes say.
        d.capture_check_unsafe("cuCtxSynchronize")?;
        d.ctx_synchronize(ctx_key(ctx))
    }

    unsafe fn cuCtxGetFlags(flags: *mut c_uint) -> CuResult<()> {
        let d = drv()?;
        if flags.is_null() {
            return Err(invalid("flags is NULL"));
        }
        out(flags, d.ctx_flags()?)
    }

    unsafe fn cuCtxGetApiVersion(ctx: CUcontext, version: *mut c_uint) -> CuResult<()> {
        let d = drv()?;
        if version.is_null() {
            return Err(invalid("version is NULL"));
        }
        match ctx_key(ctx) {
            Some(c) => {
                d.ctx_device(Some(c))?;
            }
            None => {
                d.ctx_device(None)?;
            }
        }
        // The API version of contexts made by this driver generation.
        out(version, 3020)
    }

    unsafe fn cuCtxGetId(ctx: CUcontext, id: *mut u64) -> CuResult<()> {
        let d = drv()?;
        if id.is_null() {
            return Err(invalid("ctxId is NULL"));
        }
        let key = match ctx_key(ctx) {
            Some(c) => c,
            None => d
                .ctx_current()
                .ok_or_else(|| invalid_context("no current context"))?,
        };
        d.ctx_device(Some(key))?;
        out(id, key.serial())
    }

    unsafe fn cuCtxGetStreamPriorityRange(least: *mut c_int, greatest: *mut c_int) -> CuResult<()> {
        let d = drv()?;
        d.ctx_device(None)?;
        // Either pointer may be NULL (cuda.h).
        if !least.is_null() {
            out(least, crate::model::context::STREAM_PRIORITY_LEAST)?;
        }
        if !greatest.is_null() {
            out(greatest, crate::model::context::STREAM_PRIORITY_GREATEST)?;
        }
        Ok(())
    }

    unsafe fn cuCtxGetLimit(pvalue: *mut usize, limit: CUlimit) -> CuResult<()> {
        let d = drv()?;
        if pvalue.is_null() {
            return Err(invalid("pvalue is NULL"));
        }
        out(pvalue, d.ctx_limit(limit, None)? as usize)
    }

    unsafe fn cuCtxSetLimit(limit: CUlimit, value: usize) -> CuResult<()> {
        drv()?.ctx_limit(limit, Some(value as u64)).map(|_| ())
    }
}
