//! Driver calls modern programs make that the mock emulated late, second round (probe
//! api_gaps2 asks the H200 the same): a context's events (cuCtxRecordEvent,
//! cuCtxWaitEvent), stream memory operations in graphs, each with its edge inputs.

use cuda::exports::*;
use cumock_abi::result::*;
use cumock_abi::*;
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::Mutex;
use std::time::Duration;

/// The context's settings are shared: the tests of this file run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn setup() -> (std::sync::MutexGuard<'static, ()>, CUcontext) {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut ctx: CUcontext = null_mut();
    // Safety: pointers to live locals.
    unsafe {
        assert_eq!(cuInit(0), 0);
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
    }
    (guard, ctx)
}

fn nonblocking_stream() -> CUstream {
    let mut s: CUstream = null_mut();
    // Safety: a live out-pointer.
    assert_eq!(unsafe { cuStreamCreate(&mut s, 1) }, 0);
    s
}

fn event() -> CUevent {
    let mut e: CUevent = null_mut();
    // Safety: a live out-pointer.
    assert_eq!(unsafe { cuEventCreate(&mut e, 0) }, 0);
    e
}

/// Page-locked words the host writes and streams wait on (and write back).
struct Flags(*mut u32);

impl Flags {
    fn new() -> Self {
        let mut host: *mut c_void = null_mut();
        // Safety: a live out-pointer; 4 KiB zeroed below.
        unsafe {
            assert_eq!(cuMemHostAlloc(&mut host, 4096, 2), 0);
            std::ptr::write_bytes(host.cast::<u8>(), 0, 4096);
        }
        Self(host.cast())
    }
    fn addr(&self, i: usize) -> CUdeviceptr {
        self.0 as CUdeviceptr + 4 * i as CUdeviceptr
    }
    fn set(&self, i: usize, v: u32) {
        // Safety: word i of the page-locked page this owns (i < 1024).
        unsafe { self.0.add(i).write_volatile(v) }
    }
    fn get(&self, i: usize) -> u32 {
        // Safety: as in `set`.
        unsafe { self.0.add(i).read_volatile() }
    }
}

impl Drop for Flags {
    fn drop(&mut self) {
        // Safety: allocated in `new`; the streams using it are synchronised by then.
        unsafe { assert_eq!(cuMemFreeHost(self.0.cast()), 0) };
    }
}

fn settle() {
    std::thread::sleep(Duration::from_millis(30));
}

#[test]
fn a_context_event_stands_for_the_work_of_all_its_streams() {
    let (_g, ctx) = setup();
    let (a, b) = (nonblocking_stream(), nonblocking_stream());
    let f = Flags::new();
    let e = event();
    // Safety: live handles; the streams wait on page-locked words this test owns.
    unsafe {
        assert_eq!(cuStreamWaitValue32_v2(a, f.addr(0), 1, 1), 0);
        assert_eq!(cuStreamWaitValue32_v2(b, f.addr(1), 1, 1), 0);
        assert_eq!(cuCtxRecordEvent(ctx, e), 0);
        // Work issued after the record is not the event's.
        assert_eq!(cuStreamWaitValue32_v2(a, f.addr(2), 1, 1), 0);
        settle();
        assert_eq!(cuEventQuery(e), CUDA_ERROR_NOT_READY, "both streams wait");
        f.set(0, 1);
        settle();
        assert_eq!(cuEventQuery(e), CUDA_ERROR_NOT_READY, "b still waits");
        f.set(1, 1);
        assert_eq!(cuEventSynchronize(e), 0);
        assert_eq!(cuStreamQuery(a), CUDA_ERROR_NOT_READY, "a's later wait");
        f.set(2, 1);
        assert_eq!(cuStreamSynchronize(a), 0);
        // Nothing pending: complete at once, with a time.
        let e2 = event();
        assert_eq!(
            cuCtxRecordEvent(null_mut(), e2),
            0,
            "NULL: the current context"
        );
        assert_eq!(cuEventQuery(e2), 0);
        let mut ms = -1.0f32;
        assert_eq!(cuEventElapsedTime_v2(&mut ms, e, e2), 0);
        assert!(ms >= 0.0, "{ms}");
        for x in [e, e2] {
            assert_eq!(cuEventDestroy_v2(x), 0);
        }
        assert_eq!(cuStreamDestroy_v2(a), 0);
        assert_eq!(cuStreamDestroy_v2(b), 0);
    }
}

#[test]
fn a_context_waits_on_an_event_on_all_its_streams_even_later_ones() {
    let (_g, ctx) = setup();
    let (x, a) = (nonblocking_stream(), nonblocking_stream());
    let f = Flags::new();
    let e = event();
    // Safety: live handles; the streams use page-locked words this test owns.
    unsafe {
        assert_eq!(cuStreamWaitValue32_v2(x, f.addr(0), 1, 1), 0);
        assert_eq!(cuEventRecord(e, x), 0);
        assert_eq!(cuCtxWaitEvent(ctx, e), 0);
        // A stream made after the wait, and one that never had work, wait too.
        let c = nonblocking_stream();
        assert_eq!(cuStreamWriteValue32_v2(a, f.addr(1), 7, 0), 0);
        assert_eq!(cuStreamWriteValue32_v2(c, f.addr(2), 9, 0), 0);
        settle();
        assert_eq!(
            (f.get(1), f.get(2)),
            (0, 0),
            "the writes wait for the event"
        );
        assert_eq!(cuStreamQuery(a), CUDA_ERROR_NOT_READY);
        assert_eq!(cuStreamQuery(c), CUDA_ERROR_NOT_READY);
        f.set(0, 1);
        assert_eq!(cuStreamSynchronize(a), 0);
        assert_eq!(cuStreamSynchronize(c), 0);
        assert_eq!((f.get(1), f.get(2)), (7, 9));
        // A complete event holds nothing back.
        assert_eq!(cuCtxWaitEvent(ctx, e), 0);
        assert_eq!(cuStreamWriteValue32_v2(a, f.addr(3), 5, 0), 0);
        assert_eq!(cuStreamSynchronize(a), 0);
        assert_eq!(f.get(3), 5);
        assert_eq!(cuEventDestroy_v2(e), 0);
        for s in [x, a, c] {
            assert_eq!(cuStreamDestroy_v2(s), 0);
        }
    }
}

#[test]
fn context_events_refuse_bad_handles_other_contexts_and_captures() {
    let (_g, ctx) = setup();
    let e = event();
    // Safety: live handles, and handles the mock never gave out (refused, not used).
    unsafe {
        assert_eq!(cuCtxRecordEvent(ctx, null_mut()), CUDA_ERROR_INVALID_HANDLE);
        assert_eq!(cuCtxWaitEvent(ctx, null_mut()), CUDA_ERROR_INVALID_HANDLE);
        let forged = 0x5eed_0000_0000_0001usize as CUevent;
        assert_eq!(cuCtxRecordEvent(ctx, forged), CUDA_ERROR_INVALID_HANDLE);
        let bad_ctx = 0x5eed_0000_0000_0002usize as CUcontext;
        assert_ne!(cuCtxRecordEvent(bad_ctx, e), 0);
        assert_ne!(cuCtxWaitEvent(bad_ctx, e), 0);

        // An event of another context: recorded there only, waited on anywhere.
        let mut other: CUcontext = null_mut();
        assert_eq!(cuCtxCreate_v2(&mut other, 0, 0), 0);
        let theirs = event();
        assert_eq!(cuCtxSetCurrent(ctx), 0);
        assert_eq!(cuCtxRecordEvent(ctx, theirs), CUDA_ERROR_INVALID_HANDLE);
        assert_eq!(cuCtxRecordEvent(other, theirs), 0);
        assert_eq!(cuCtxWaitEvent(ctx, theirs), 0);
        assert_eq!(cuEventDestroy_v2(theirs), 0);
        assert_eq!(cuCtxDestroy_v2(other), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);

        // A stream of the context captures: refused, and the capture invalidated.
        let s = nonblocking_stream();
        assert_eq!(cuStreamBeginCapture_v2(s, 2), 0, "relaxed");
        assert_eq!(cuCtxRecordEvent(ctx, e), 900, "STREAM_CAPTURE_UNSUPPORTED");
        let mut g: CUgraph = null_mut();
        assert_eq!(cuStreamEndCapture(s, &mut g), 901, "INVALIDATED");
        // An event recorded in a capture: a context may not wait on it.
        assert_eq!(cuStreamBeginCapture_v2(s, 2), 0);
        assert_eq!(cuEventRecord(e, s), 0);
        assert_eq!(cuCtxWaitEvent(ctx, e), 900);
        assert_eq!(cuStreamEndCapture(s, &mut g), 901);
        assert_eq!(cuStreamDestroy_v2(s), 0);
        assert_eq!(cuEventDestroy_v2(e), 0);
    }
}
