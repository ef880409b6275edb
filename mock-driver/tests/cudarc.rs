//! What cudarc's own unit tests (crate cudarc 0.19.10, run unchanged by
//! ci/cudarc-suite.sh: docs/frameworks/cudarc.md) found the mock answering otherwise than
//! cuda.h says, each checked here in the driver's own terms. The questions cuda.h leaves
//! open are asked of the H200 by clients/probes/cudarc.c (awaiting a recording).

use cuda::exports::*;
use cumock_abi::*;
use std::ptr::null_mut;

/// cuda.h's CUDA_ERROR_CAPTURED_EVENT.
const CUDA_ERROR_CAPTURED_EVENT: CUresult = 907;
const CAPTURE_MODE_THREAD_LOCAL: CUstreamCaptureMode = 1;
const CAPTURE_MODE_RELAXED: CUstreamCaptureMode = 2;

fn setup() {
    // Safety: a live out-pointer.
    unsafe {
        assert_eq!(cuInit(0), 0);
        let mut ctx: CUcontext = null_mut();
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
    }
}

/// test_event_try_is_complete_preserves_capture_error: cuEventQuery of an event last
/// recorded in a capture still going on is CUDA_ERROR_CAPTURED_EVENT (cuda.h: refused
/// even in relaxed mode); recorded again on a stream that does not capture, it is an
/// ordinary event again.
#[test]
fn querying_an_event_last_recorded_in_a_capture_is_a_captured_event_error() {
    setup();
    // Safety: live out-pointers; every handle is created here.
    unsafe {
        let (mut s, mut plain, mut e) = (null_mut(), null_mut(), null_mut());
        assert_eq!(cuStreamCreate(&mut s, 1), 0);
        assert_eq!(cuStreamCreate(&mut plain, 1), 0);
        assert_eq!(cuEventCreate(&mut e, 0), 0);
        for mode in [CAPTURE_MODE_THREAD_LOCAL, CAPTURE_MODE_RELAXED] {
            assert_eq!(cuStreamBeginCapture_v2(s, mode), 0);
            assert_eq!(cuEventRecord(e, s), 0);
            assert_eq!(cuEventQuery(e), CUDA_ERROR_CAPTURED_EVENT, "mode {mode}");
            // Recorded outside the capture, it stands for no captured work any more.
            assert_eq!(cuEventRecord(e, plain), 0);
            assert_eq!(cuStreamSynchronize(plain), 0);
            assert_eq!(cuEventQuery(e), 0, "mode {mode}");
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
