//! Event management (cuda.h's group CUDA_EVENT): creating, recording, querying and
//! destroying events, and the time between two.

use super::Mock;
use crate::boundary::{drv, event_handle, event_key, out, stream_key};
use crate::model::error::*;
use crate::model::stream_queues;
use cumock_abi::result::*;
use cumock_abi::*;
use std::ffi::c_uint;

impl EventApi for Mock {
    unsafe fn cuEventCreate(ph: *mut CUevent, flags: c_uint) -> CuResult<()> {
        let d = drv()?;
        if ph.is_null() {
            return Err(invalid("phEvent is NULL"));
        }
        // Observed: CU_EVENT_INTERPROCESS needs CU_EVENT_DISABLE_TIMING.
        if flags & 0x4 != 0 && flags & 0x2 == 0 {
            return Err(invalid(
                "CU_EVENT_INTERPROCESS needs CU_EVENT_DISABLE_TIMING as well",
            ));
        }
        let e = d.event_create(flags)?;
        if flags & 0x4 != 0 {
            d.ipc_event_created(e);
        }
        out(ph, event_handle(e))
    }

    unsafe fn cuEventRecord(e: CUevent, s: CUstream) -> CuResult<()> {
        let d = drv()?;
        d.stream_check(stream_key(s))?;
        // On a capturing stream the event stands for the captured work before it.
        if d.capture_record_event(event_key(e), stream_key(s))? {
            return Ok(());
        }
        d.event_record(event_key(e), stream_key(s))
    }

    unsafe fn cuEventSynchronize(e: CUevent) -> CuResult<()> {
        drv()?.event_synchronize(event_key(e))
    }

    unsafe fn cuEventQuery(e: CUevent) -> CuResult<()> {
        drv()?.event_check(event_key(e))?;
        if stream_queues::event_pending(event_key(e)).is_some() {
            return Err(CuError::new(
                CUDA_ERROR_NOT_READY,
                "the event waits for work queued before it",
            ));
        }
        crate::model::ordering::event_done(event_key(e));
        drv()?.settle_host_writes();
        Ok(())
    }

    unsafe fn cuEventDestroy_v2(e: CUevent) -> CuResult<()> {
        drv()?.event_destroy(event_key(e))?;
        stream_queues::forget_event(event_key(e));
        crate::model::ordering::forget_event(event_key(e));
        Ok(())
    }

    unsafe fn cuEventElapsedTime_v2(ms: *mut f32, start: CUevent, end: CUevent) -> CuResult<()> {
        let d = drv()?;
        if ms.is_null() {
            // Observed: CUDA_ERROR_INVALID_HANDLE, not INVALID_VALUE (probe pools_ipc).
            return Err(invalid_handle("pMilliseconds is NULL"));
        }
        out(ms, d.event_elapsed_ms(event_key(start), event_key(end))?)
    }
}
