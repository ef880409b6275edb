//! What cudarc's own unit tests (crate cudarc 0.19.10, run unchanged by
//! ci/cudarc-suite.sh: docs/frameworks/cudarc.md) found the mock answering otherwise than
//! cuda.h says, each checked here in the driver's own terms. The questions cuda.h leaves
//! open were asked of the H200 by clients/probes/cudarc.c (recorded: its golden).

#[path = "common/context.rs"]
mod context;
use context::{event, primary_context, stream};
use cuda::exports::*;
use cumock_abi::*;
use std::ptr::null_mut;

/// cuda.h's CUDA_ERROR_CAPTURED_EVENT.
const CUDA_ERROR_CAPTURED_EVENT: CUresult = 907;
/// cuda.h's CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED.
const CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: CUresult = 900;
const CAPTURE_MODE_THREAD_LOCAL: CUstreamCaptureMode = 1;
const CAPTURE_MODE_RELAXED: CUstreamCaptureMode = 2;
const CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: CUresult = 901;
const CAPTURE_STATUS_INVALIDATED: CUstreamCaptureStatus = 2;
/// CU_STREAM_NON_BLOCKING.
const NON_BLOCKING: u32 = 1;

/// test_event_try_is_complete_preserves_capture_error: cuEventQuery of an event last
/// recorded in a capture still going on is CUDA_ERROR_CAPTURED_EVENT (cuda.h: refused
/// even in relaxed mode; the H200 too, probe cudarc); recorded again on a stream that does
/// not capture, it is an ordinary event again.
#[test]
fn querying_an_event_last_recorded_in_a_capture_is_a_captured_event_error() {
    primary_context();
    // Safety: live out-pointers; every handle is created here.
    unsafe {
        let (s, plain, e) = (stream(NON_BLOCKING), stream(NON_BLOCKING), event(0));
        for mode in [CAPTURE_MODE_THREAD_LOCAL, CAPTURE_MODE_RELAXED] {
            assert_eq!(cuStreamBeginCapture_v2(s, mode), 0);
            assert_eq!(cuEventRecord(e, s), 0);
            assert_eq!(cuEventQuery(e), CUDA_ERROR_CAPTURED_EVENT, "mode {mode}");
            // Recorded outside the capture, it stands for no captured work any more: a
            // query of it is then an ordinary one, which outside relaxed mode is a
            // potentially unsafe call during a capture (STREAM_CAPTURE_UNSUPPORTED, as
            // the H200 answered in random_graphs, seed 16 line 35).
            assert_eq!(cuEventRecord(e, plain), 0);
            assert_eq!(cuStreamSynchronize(plain), 0);
            let ordinary = if mode == CAPTURE_MODE_RELAXED {
                0
            } else {
                CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
            };
            assert_eq!(cuEventQuery(e), ordinary, "mode {mode}");
            let mut g = null_mut();
            cuStreamEndCapture(s, &mut g);
            if !g.is_null() {
                assert_eq!(cuGraphDestroy(g), 0);
            }
        }
        // An event recorded outside any capture is queried as ever while a stream captures.
        assert_eq!(cuStreamBeginCapture_v2(s, CAPTURE_MODE_RELAXED), 0);
        assert_eq!(cuEventQuery(e), 0);
        let mut g = null_mut();
        assert_eq!(cuStreamEndCapture(s, &mut g), 0);
        assert_eq!(cuGraphDestroy(g), 0);
        assert_eq!(cuEventDestroy_v2(e), 0);
        assert_eq!(cuStreamDestroy_v2(s), 0);
        assert_eq!(cuStreamDestroy_v2(plain), 0);
    }
}

/// As the H200 answered (probe cudarc, captured-event-*): a query or a synchronize of an
/// event recorded in a capture invalidates the capture, in every mode; after its end both
/// are CUDA_ERROR_INVALID_VALUE until the event is recorded again; an elapsed time is
/// CUDA_ERROR_CAPTURED_EVENT and the capture goes on.
#[test]
fn waiting_for_a_captured_event_invalidates_its_capture_and_reading_it_does_not() {
    primary_context();
    // Safety: live out-pointers; every handle is created here.
    unsafe {
        let (s, plain) = (stream(NON_BLOCKING), stream(NON_BLOCKING));
        let (e, done) = (event(0), event(0));
        assert_eq!(cuEventRecord(done, plain), 0);
        assert_eq!(cuStreamSynchronize(plain), 0);
        let wait_query = |e| cuEventQuery(e);
        let wait_sync = |e| cuEventSynchronize(e);
        for (mode, wait) in [
            (
                CAPTURE_MODE_THREAD_LOCAL,
                &wait_query as &dyn Fn(CUevent) -> CUresult,
            ),
            (CAPTURE_MODE_RELAXED, &wait_sync),
        ] {
            assert_eq!(cuStreamBeginCapture_v2(s, mode), 0);
            assert_eq!(cuEventRecord(e, s), 0);
            assert_eq!(wait(e), CUDA_ERROR_CAPTURED_EVENT, "mode {mode}");
            let mut status = 0;
            assert_eq!(cuStreamIsCapturing(s, &mut status), 0);
            assert_eq!(status, CAPTURE_STATUS_INVALIDATED);
            let mut g = null_mut();
            assert_eq!(
                cuStreamEndCapture(s, &mut g),
                CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
            );
            assert!(g.is_null());
            assert_eq!(
                cuEventQuery(e),
                cumock_abi::result::CUDA_ERROR_INVALID_VALUE
            );
            assert_eq!(
                cuEventSynchronize(e),
                cumock_abi::result::CUDA_ERROR_INVALID_VALUE
            );
        }
        assert_eq!(cuStreamBeginCapture_v2(s, CAPTURE_MODE_RELAXED), 0);
        assert_eq!(cuEventRecord(e, s), 0);
        let mut ms = -1.0f32;
        assert_eq!(
            cuEventElapsedTime_v2(&mut ms, done, e),
            CUDA_ERROR_CAPTURED_EVENT
        );
        assert_eq!(
            cuEventElapsedTime_v2(&mut ms, e, done),
            CUDA_ERROR_CAPTURED_EVENT
        );
        let mut g = null_mut();
        assert_eq!(cuStreamEndCapture(s, &mut g), 0);
        assert_eq!(cuGraphDestroy(g), 0);
        // Recorded again outside a capture, it is an ordinary event.
        assert_eq!(cuEventRecord(e, plain), 0);
        assert_eq!(cuEventSynchronize(e), 0);
        for ev in [e, done] {
            assert_eq!(cuEventDestroy_v2(ev), 0);
        }
        assert_eq!(cuStreamDestroy_v2(s), 0);
        assert_eq!(cuStreamDestroy_v2(plain), 0);
    }
}

/// An event last recorded in a capture that has ended is CUDA_ERROR_INVALID_VALUE to a
/// query until recorded again, by a graph's event record node too (the mock's rule after
/// a clean end awaits the H200's answer: probe cudarc, captured-event-after-a-clean-end).
#[test]
fn an_event_of_an_ended_capture_is_ordinary_once_a_graph_records_it() {
    primary_context();
    // Safety: live out-pointers; every handle is created here.
    unsafe {
        let (s, e) = (stream(NON_BLOCKING), event(0));
        let capture = |flags: u32| {
            let mut g = null_mut();
            assert_eq!(cuStreamBeginCapture_v2(s, CAPTURE_MODE_RELAXED), 0);
            assert_eq!(cuEventRecordWithFlags(e, s, flags), 0);
            assert_eq!(cuStreamEndCapture(s, &mut g), 0);
            g
        };
        assert_eq!(cuGraphDestroy(capture(0)), 0);
        assert_eq!(
            cuEventQuery(e),
            cumock_abi::result::CUDA_ERROR_INVALID_VALUE
        );
        // CU_EVENT_RECORD_EXTERNAL: an event record node, which records it at launch.
        let g = capture(1);
        assert_eq!(
            cuEventQuery(e),
            cumock_abi::result::CUDA_ERROR_INVALID_VALUE
        );
        let mut exec = null_mut();
        assert_eq!(cuGraphInstantiateWithFlags(&mut exec, g, 0), 0);
        assert_eq!(cuGraphLaunch(exec, s), 0);
        assert_eq!(cuStreamSynchronize(s), 0);
        assert_eq!(cuEventQuery(e), 0);
        assert_eq!(cuGraphExecDestroy(exec), 0);
        assert_eq!(cuGraphDestroy(g), 0);
        assert_eq!(cuEventDestroy_v2(e), 0);
        assert_eq!(cuStreamDestroy_v2(s), 0);
    }
}
