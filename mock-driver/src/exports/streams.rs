//! Stream management (cuda.h's group CUDA_STREAM): creating, querying, synchronizing and
//! destroying streams, and waiting on events. The mock runs every operation in order, so
//! a stream is bookkeeping: its flags, priority, context and id.

use super::{stream, Mock};
use crate::boundary::{ctx_handle, drv, event_key, out, stream_handle, stream_key};
use crate::model::error::*;
use cumock_abi::*;
use std::ffi::{c_int, c_uint};

impl StreamApi for Mock {
    unsafe fn cuStreamCreate(ph: *mut CUstream, flags: c_uint) -> CuResult<()> {
        let d = drv()?;
        if ph.is_null() {
            return Err(invalid("phStream is NULL"));
        }
        out(ph, stream_handle(d.stream_create(flags)?))
    }

    unsafe fn cuStreamCreateWithPriority(
        ph: *mut CUstream,
        flags: c_uint,
        priority: c_int,
    ) -> CuResult<()> {
        let d = drv()?;
        if ph.is_null() {
            return Err(invalid("phStream is NULL"));
        }
        out(
            ph,
            stream_handle(d.stream_create_with_priority(flags, priority)?),
        )
    }

    unsafe fn cuStreamGetPriority(s: CUstream, priority: *mut c_int) -> CuResult<()> {
        let (_, _, props) = drv()?.stream_info(stream_key(s))?;
        out(priority, props.priority)
    }

    unsafe fn cuStreamGetPriority_ptsz(s: CUstream, priority: *mut c_int) -> CuResult<()> {
        Self::cuStreamGetPriority(s, priority)
    }

    unsafe fn cuStreamGetFlags(s: CUstream, flags: *mut c_uint) -> CuResult<()> {
        let (_, _, props) = drv()?.stream_info(stream_key(s))?;
        out(flags, props.flags)
    }

    unsafe fn cuStreamGetFlags_ptsz(s: CUstream, flags: *mut c_uint) -> CuResult<()> {
        Self::cuStreamGetFlags(s, flags)
    }

    unsafe fn cuStreamGetCtx(s: CUstream, pctx: *mut CUcontext) -> CuResult<()> {
        let (ctx, _, _) = drv()?.stream_info(stream_key(s))?;
        out(pctx, ctx_handle(ctx))
    }

    unsafe fn cuStreamGetCtx_ptsz(s: CUstream, pctx: *mut CUcontext) -> CuResult<()> {
        Self::cuStreamGetCtx(s, pctx)
    }

    unsafe fn cuStreamGetDevice(s: CUstream, device: *mut CUdevice) -> CuResult<()> {
        let (_, dev, _) = drv()?.stream_info(stream_key(s))?;
        out(device, dev as CUdevice)
    }

    unsafe fn cuStreamGetDevice_ptsz(s: CUstream, device: *mut CUdevice) -> CuResult<()> {
        Self::cuStreamGetDevice(s, device)
    }

    unsafe fn cuStreamGetId(s: CUstream, id: *mut u64) -> CuResult<()> {
        drv()?.stream_info(stream_key(s))?;
        // The handle's own number: unique among the process's live streams.
        out(id, stream_key(s).serial())
    }

    unsafe fn cuStreamGetId_ptsz(s: CUstream, id: *mut u64) -> CuResult<()> {
        Self::cuStreamGetId(s, id)
    }

    unsafe fn cuStreamDestroy_v2(s: CUstream) -> CuResult<()> {
        drv()?.stream_destroy(stream_key(s))
    }

    unsafe fn cuStreamDestroy(s: CUstream) -> CuResult<()> {
        drv()?.stream_destroy(stream_key(s))
    }

    unsafe fn cuStreamSynchronize(s: CUstream) -> CuResult<()> {
        drv()?.stream_synchronize(stream_key(s))
    }

    unsafe fn cuStreamSynchronize_ptsz(s: CUstream) -> CuResult<()> {
        Self::cuStreamSynchronize(s)
    }

    unsafe fn cuStreamQuery(s: CUstream) -> CuResult<()> {
        drv()?.stream_query(stream_key(s))
    }

    unsafe fn cuStreamQuery_ptsz(s: CUstream) -> CuResult<()> {
        Self::cuStreamQuery(s)
    }

    unsafe fn cuStreamWaitEvent(s: CUstream, e: CUevent, _flags: c_uint) -> CuResult<()> {
        let d = drv()?;
        stream(s)?;
        d.event_check(event_key(e))
    }

    unsafe fn cuStreamWaitEvent_ptsz(s: CUstream, e: CUevent, flags: c_uint) -> CuResult<()> {
        Self::cuStreamWaitEvent(s, e, flags)
    }
}
