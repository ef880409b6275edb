//! Context management (cuda.h's group CUDA_CTX, with its deprecated part): creating and
//! destroying contexts, the thread's context stack, and a context's device, flags, limits
//! and stream priorities.

use super::Mock;
use crate::boundary::{drv, input};
use crate::model::error::*;
use crate::model::ids::ContextId;
use cumock_abi::*;
use std::ffi::{c_int, c_uint};

impl ContextApi for Mock {
    emulate! {
        fn cuCtxCreate_v2(d; pctx, flags, dev) {
            pctx.write_key(Some(d.ctx_create(flags, dev)?))
        }

        fn cuCtxSetCurrent(d; ctx) {
            d.ctx_set_current(ctx)
        }

        fn cuCtxGetCurrent(d; pctx) {
            pctx.write_key(d.ctx_current())
        }

        fn cuCtxPopCurrent_v2(d; pctx) {
            let c = d.ctx_pop()?;
            match pctx {
                Some(p) => p.write_key(Some(c)),
                None => Ok(()),
            }
        }

        fn cuCtxGetDevice(d; device) {
            device.write(d.ctx_device(None)? as CUdevice)
        }

        fn cuCtxGetDevice_v2(d; device, ctx) {
            device.write(d.ctx_device(ctx)? as CUdevice)
        }

        fn cuCtxSynchronize_v2(d; ctx) {
            // It would wait for captured streams, which never run: refused during a capture
            // as the capture modes say.
            d.capture_check_unsafe("cuCtxSynchronize")?;
            d.ctx_synchronize(ctx)
        }

        fn cuCtxGetFlags(d; flags) {
            flags.write(d.ctx_flags()?)
        }

        fn cuCtxGetApiVersion(d; ctx, version) {
            d.ctx_device(ctx)?;
            // The API version of contexts made by this driver generation.
            version.write(3020)
        }

        fn cuCtxGetId(d; ctx, id) {
            let key = match ctx {
                Some(c) => c,
                None => d
                    .ctx_current()
                    .ok_or_else(|| invalid_context("no current context"))?,
            };
            d.ctx_device(Some(key))?;
            id.write(key.serial())
        }

        /// cuda.h (12.5): the event captures the work of all the context's streams.
        fn cuCtxRecordEvent(d; ctx, event) {
            d.ctx_record_event(named_context(ctx, "cuCtxRecordEvent")?, event)
        }

        /// cuda.h (12.5): all the context's later work waits for the event.
        fn cuCtxWaitEvent(d; ctx, event) {
            d.ctx_wait_event(named_context(ctx, "cuCtxWaitEvent")?, event)
        }

        fn cuCtxGetStreamPriorityRange(d; least, greatest) {
            d.ctx_device(None)?;
            if let Some(least) = least {
                least.write(crate::model::context::STREAM_PRIORITY_LEAST)?;
            }
            if let Some(greatest) = greatest {
                greatest.write(crate::model::context::STREAM_PRIORITY_GREATEST)?;
            }
            Ok(())
        }

        fn cuCtxGetLimit(d; pvalue, limit) {
            pvalue.write(d.ctx_limit(limit, None)? as usize)
        }

        fn cuCtxSetLimit(d; limit, value) {
            d.ctx_limit(limit, Some(value as u64)).map(|_| ())
        }

        fn cuCtxSetFlags(d; flags) {
            d.ctx_set_flags(flags)
        }

        fn cuCtxGetCacheConfig(d; pconfig) {
            pconfig.write(d.ctx_cache_config()? as CUfunc_cache)
        }

        fn cuCtxSetCacheConfig(d; config) {
            d.ctx_set_cache_config(config as i32)
        }

        /// Deprecated (see `check_shared_config`).
        fn cuCtxGetSharedMemConfig(d; p_config) {
            d.ctx_device(None)?;
            p_config.write(crate::model::context::SHARED_CONFIG_FOUR_BYTE as CUsharedconfig)
        }

        /// Deprecated (see `check_shared_config`).
        fn cuCtxSetSharedMemConfig(d; config) {
            d.ctx_device(None)?;
            crate::model::context::check_shared_config(config as i32)
        }

        fn cuCtxGetExecAffinity(d; p_exec_affinity, type_) {
            let sms = d.ctx_exec_affinity_sm_count(type_ as i32)?;
            // cuda.h's CUexecAffinityParam: { CUexecAffinityType type; union {
            // CUexecAffinitySmCount smCount; } param; }, smCount an unsigned int.
            let p = p_exec_affinity.as_ptr().cast::<u32>();
            // Safety: the out-parameter holds a CUexecAffinityParam, cuda.h's contract.
            unsafe {
                p.write_unaligned(type_ as u32);
                p.add(1).write_unaligned(sms);
            }
            Ok(())
        }

        fn cuCtxResetPersistingL2Cache(d;) {
            // The mock has no L2 cache, so no line persists and there is nothing to demote
            // to normal (the set-aside size stays the limit's): what is left is the
            // current context the call applies to.
            d.ctx_device(None).map(|_| ())
        }
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

    // NULL is refused before the check for cuInit (`#[nonnull]`, converted before the
    // body asks for the driver).
    emulate! {
        fn cuCtxDestroy_v2(; #[nonnull] ctx) {
            drv()?.ctx_destroy(ctx)
        }

        fn cuCtxPushCurrent_v2(; #[nonnull] ctx) {
            drv()?.ctx_push(ctx)
        }

        fn cuCtxAttach(d; pctx, flags) {
            pctx.write_key(Some(d.ctx_attach(flags)?))
        }

        // Observed (probe api_gaps3, device-deprecated): NULL is CUDA_ERROR_INVALID_CONTEXT.
        fn cuCtxDetach(d; ctx) {
            let ctx = ctx.ok_or_else(|| invalid_context("the context is NULL"))?;
            d.ctx_detach(ctx)
        }
    }

    unsafe fn cuCtxSynchronize() -> CuResult<()> {
        Self::cuCtxSynchronize_v2(std::ptr::null_mut())
    }
}

/// cuCtxRecordEvent and cuCtxWaitEvent take no current-context default: the H200 (580.159.04)
/// answers a NULL context with CUDA_ERROR_INVALID_CONTEXT even with one current (case
/// ctx-events).
fn named_context(ctx: Option<ContextId>, call: &str) -> CuResult<ContextId> {
    ctx.ok_or_else(|| {
        invalid_context(format!(
            "{call}: a NULL context (the H200 does not read it as the current one)"
        ))
    })
}
