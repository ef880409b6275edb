//! Event management (cuda.h's group CUDA_EVENT): creating, recording, querying and
//! destroying events, and the time between two.

use super::Mock;
use crate::boundary::{drv, out, Handle};
use crate::model::capture::EventUse;
use crate::model::error::*;
use crate::model::stream_queues;
use cumock_abi::result::*;
use cumock_abi::*;

impl EventApi for Mock {
    emulate! {
        fn cuEventCreate(d; ph, flags) {
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
            ph.write_key(e)
        }

        fn cuEventRecord(d; e, s) {
            record(d, e, s)
        }

        fn cuEventRecordWithFlags(d; e, s, flags) {
            match flags {
                // CU_EVENT_RECORD_DEFAULT: cuEventRecord.
                0 => record(d, e, s),
                // CU_EVENT_RECORD_EXTERNAL: an event record node in the capture's graph,
                // which records the event when the graph runs; outside a capture
                // CUDA_ERROR_ILLEGAL_STATE (the H200, probe api_gaps3 event-record-flags).
                1 => {
                    d.event_check(e)?;
                    d.stream_check(s)?;
                    if d.capture_of(s)?.is_none() {
                        return Err(CuError::new(
                            CUDA_ERROR_ILLEGAL_STATE,
                            "CU_EVENT_RECORD_EXTERNAL records into a stream capture: the stream \
                             is not capturing",
                        ));
                    }
                    d.capture_node(s, crate::model::graphs::NodeOp::EventRecord(e))
                }
                _ => Err(invalid(format!(
                    "flags {flags:#x} are not CU_EVENT_RECORD_DEFAULT or CU_EVENT_RECORD_EXTERNAL"
                ))),
            }
        }

        fn cuEventSynchronize(d; e) {
            d.event_check(e)?;
            d.capture_check_event(e, EventUse::Waits)?;
            d.event_synchronize(e)
        }

        fn cuEventQuery(d; e) {
            d.event_check(e)?;
            d.capture_check_event_query(e)?;
            if stream_queues::event_pending(e).is_some() {
                return Err(CuError::new(
                    CUDA_ERROR_NOT_READY,
                    "the event waits for work queued before it",
                ));
            }
            crate::model::ordering::event_done(e);
            d.settle_host_writes();
            Ok(())
        }

        fn cuEventDestroy_v2(d; e) {
            d.event_destroy(e)?;
            stream_queues::forget_event(e);
            crate::model::ordering::forget_event(e);
            Ok(())
        }
    }

    // Written by hand: a NULL result is CUDA_ERROR_INVALID_HANDLE here, not the
    // conversion's CUDA_ERROR_INVALID_VALUE (probe pools_ipc).
    unsafe fn cuEventElapsedTime_v2(ms: *mut f32, start: CUevent, end: CUevent) -> CuResult<()> {
        let d = drv()?;
        if ms.is_null() {
            return Err(invalid_handle("pMilliseconds is NULL"));
        }
        out(ms, d.event_elapsed_ms(start.key(), end.key())?)
    }
}

/// cuEventRecord, and cuEventRecordWithFlags with CU_EVENT_RECORD_DEFAULT.
fn record(
    d: &'static crate::model::Driver,
    e: crate::model::ids::EventId,
    s: crate::model::ids::StreamId,
) -> CuResult<()> {
    d.stream_check(s)?;
    // On a capturing stream the event stands for the captured work before it.
    if d.capture_record_event(e, s)? {
        return Ok(());
    }
    d.event_record(e, s)
}
