//! Primary context management (cuda.h's group CUDA_PRIMARY_CTX): each device's one
//! shared context, retained and released by count, its flags and state.

use super::Mock;
use crate::boundary::{ctx_handle, drv, out};
use crate::model::error::*;
use cumock_abi::*;
use std::ffi::{c_int, c_uint};

impl PrimaryContextApi for Mock {
    unsafe fn cuDevicePrimaryCtxRetain(pctx: *mut CUcontext, dev: CUdevice) -> CuResult<()> {
        let d = drv()?;
        if pctx.is_null() {
            return Err(invalid("pctx is NULL"));
        }
        out(pctx, ctx_handle(d.primary_retain(dev)?))
    }

    unsafe fn cuDevicePrimaryCtxRelease_v2(dev: CUdevice) -> CuResult<()> {
        drv()?.primary_release(dev)
    }

    unsafe fn cuDevicePrimaryCtxReset_v2(dev: CUdevice) -> CuResult<()> {
        drv()?.primary_reset(dev)
    }

    unsafe fn cuDevicePrimaryCtxSetFlags_v2(dev: CUdevice, flags: c_uint) -> CuResult<()> {
        drv()?.primary_set_flags(dev, flags)
    }

    unsafe fn cuDevicePrimaryCtxGetState(
        dev: CUdevice,
        flags: *mut c_uint,
        active: *mut c_int,
    ) -> CuResult<()> {
        let d = drv()?;
        if flags.is_null() || active.is_null() {
            return Err(invalid("flags or active is NULL"));
        }
        let (f, a) = d.primary_state(dev)?;
        out(flags, f)?;
        out(active, a as c_int)
    }
}
