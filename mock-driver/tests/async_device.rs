//! The device runs apart from the host, as a GPU does: a launch returns once its checks
//! pass, streams run concurrently, and what synchronises waits for exactly the work it
//! covers, whichever thread issued it. Each test here hung or read stale data when the
//! mock ran kernels inside cuLaunchKernel; each runs under a deadline, so that a
//! regression fails instead of hanging CI.

use cuda::exports::*;
use cumock_abi::result::*;
use std::ffi::c_void;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Spins until the word at `flag` is non-zero, then writes 1 to `done`: a persistent
/// kernel waiting for the host. `ld.volatile` re-reads memory every time, as nvcc emits
/// for a `volatile` pointer.
const WAITER: &str = r#"
.version 9.0
.target sm_90
.address_size 64
.visible .entry wait_for_host(.param .u64 flag, .param .u64 done)
{
    .reg .pred %p;
    .reg .b32 %r<3>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [flag];
    ld.param.u64 %rd2, [done];
SPIN:
    ld.volatile.global.u32 %r1, [%rd1];
    setp.eq.u32 %p, %r1, 0;
    @%p bra SPIN;
    mov.u32 %r2, 1;
    st.global.u32 [%rd2], %r2;
    ret;
}
"#;

/// Runs `body` on a thread of its own and fails if it takes longer than `limit` (the
/// thread is left behind: the test process ends with the failure).
fn within<T: Send + 'static>(
    limit: Duration,
    what: &str,
    body: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(body());
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("{what}: still running after {limit:?} (a hang)"))
}

struct Setup {
    ctx: cumock_abi::CUcontext,
    waiter: cumock_abi::CUfunction,
}

// Safety: a context and a function handle are values the driver checks; they may be
// passed between threads, as CUDA allows.
unsafe impl Send for Setup {}

/// A context current on this thread, the waiter kernel loaded.
fn setup() -> Setup {
    // Safety: pointers to live locals; a NUL-terminated PTX image.
    unsafe {
        assert_eq!(cuInit(0), 0);
        let mut ctx: cumock_abi::CUcontext = std::ptr::null_mut();
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
        let ptx = std::ffi::CString::new(WAITER).unwrap();
        let mut module: cumock_abi::CUmodule = std::ptr::null_mut();
        assert_eq!(cuModuleLoadData(&mut module, ptx.as_ptr().cast()), 0);
        let mut waiter: cumock_abi::CUfunction = std::ptr::null_mut();
        assert_eq!(
            cuModuleGetFunction(&mut waiter, module, c"wait_for_host".as_ptr()),
            0
        );
        Setup { ctx, waiter }
    }
}

/// Two zeroed words of device memory: the flag and the done word.
fn words() -> (u64, u64) {
    let mut p = 0u64;
    // Safety: a live local out-parameter; a current context.
    unsafe {
        assert_eq!(cuMemAlloc_v2(&mut p, 8), 0);
        assert_eq!(cuMemsetD32_v2(p, 0, 2), 0);
    }
    (p, p + 4)
}

/// Launches the waiter on `stream`; returns at once on an asynchronous device.
fn launch_waiter(f: cumock_abi::CUfunction, stream: cumock_abi::CUstream, flag: u64, done: u64) {
    let (mut a, mut b) = (flag, done);
    let mut params = [
        (&mut a as *mut u64).cast::<c_void>(),
        (&mut b as *mut u64).cast(),
    ];
    // Safety: params point to live locals of the kernel's parameter types.
    let r = unsafe {
        cuLaunchKernel(
            f,
            1,
            1,
            1,
            1,
            1,
            1,
            0,
            stream,
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(r, 0);
}

/// Releases a waiter when dropped, even when an assertion failed first, so that one
/// failing test does not leave a kernel running that every later test's copies wait for.
struct Release(u64);

impl Drop for Release {
    fn drop(&mut self) {
        let one = 1u32;
        let mut s: cumock_abi::CUstream = std::ptr::null_mut();
        // Safety: a live local; a non-blocking stream's copy waits for no kernel.
        unsafe {
            cuStreamCreate(&mut s, 1);
            cuMemcpyHtoDAsync_v2(self.0, (&one as *const u32).cast(), 4, s);
            cuStreamDestroy_v2(s);
        }
    }
}

fn read_word(at: u64) -> u32 {
    let mut v = 0u32;
    // Safety: a live local of 4 bytes.
    assert_eq!(
        unsafe { cuMemcpyDtoH_v2((&mut v as *mut u32).cast(), at, 4) },
        0
    );
    v
}

fn write_word(at: u64, v: u32) {
    // Safety: a live local of 4 bytes.
    assert_eq!(
        unsafe { cuMemcpyHtoD_v2(at, (&v as *const u32).cast(), 4) },
        0
    );
}

#[test]
fn a_persistent_kernel_on_a_non_blocking_stream_lets_the_host_poll_and_release_it() {
    within(Duration::from_secs(60), "persistent kernel", || {
        let s = setup();
        let (flag, done) = words();
        let _release = Release(flag);
        let mut stream: cumock_abi::CUstream = std::ptr::null_mut();
        // Safety: a live out-parameter; CU_STREAM_NON_BLOCKING.
        assert_eq!(unsafe { cuStreamCreate(&mut stream, 1) }, 0);
        let t = Instant::now();
        launch_waiter(s.waiter, stream, flag, done);
        assert!(
            t.elapsed() < Duration::from_secs(2),
            "the launch returned only after {:?}",
            t.elapsed()
        );
        // The kernel is running: the stream is not done, and a copy on the legacy
        // stream (which does not wait for a non-blocking stream) reads its memory.
        for _ in 0..3 {
            // Safety: a live stream.
            assert_eq!(unsafe { cuStreamQuery(stream) }, CUDA_ERROR_NOT_READY);
            assert_eq!(read_word(done), 0, "the kernel cannot be done yet");
            std::thread::sleep(Duration::from_millis(10));
        }
        write_word(flag, 1);
        // Safety: a live stream.
        assert_eq!(unsafe { cuStreamSynchronize(stream) }, 0);
        assert_eq!(read_word(done), 1, "the kernel saw the host's flag");
        // Safety: a live stream.
        assert_eq!(unsafe { cuStreamQuery(stream) }, 0);
        assert_eq!(unsafe { cuStreamDestroy_v2(stream) }, 0);
    });
}

#[test]
fn another_threads_ctx_synchronize_waits_for_this_threads_kernel() {
    within(Duration::from_secs(60), "cross-thread synchronise", || {
        let s = setup();
        let (flag, done) = words();
        let _release = Release(flag);
        let mut stream: cumock_abi::CUstream = std::ptr::null_mut();
        // Safety: a live out-parameter.
        assert_eq!(unsafe { cuStreamCreate(&mut stream, 1) }, 0);
        launch_waiter(s.waiter, stream, flag, done);
        let ctx = s.ctx as usize;
        let (tx, rx) = mpsc::channel();
        let b = std::thread::spawn(move || {
            // Safety: the context made above, current on this thread too.
            unsafe {
                assert_eq!(cuCtxSetCurrent(ctx as cumock_abi::CUcontext), 0);
                let r = cuCtxSynchronize();
                tx.send(Instant::now()).unwrap();
                assert_eq!(r, 0);
                // After the synchronisation the kernel's result is there.
                assert_eq!(read_word(done), 1, "thread B read a stale result");
            }
        });
        std::thread::sleep(Duration::from_millis(100));
        assert!(
            rx.try_recv().is_err(),
            "thread B's cuCtxSynchronize returned while thread A's kernel still ran"
        );
        let released = Instant::now();
        write_word(flag, 1);
        let returned = rx.recv().unwrap();
        assert!(returned >= released, "returned before the kernel could end");
        b.join().unwrap();
        // Safety: a live stream.
        assert_eq!(unsafe { cuStreamDestroy_v2(stream) }, 0);
    });
}

#[test]
fn exports_and_ipc_handles_do_not_wait_for_another_threads_kernel() {
    use cumock_abi::{CUmemAllocationProp, CUmemLocation};
    within(Duration::from_secs(60), "export during a kernel", || {
        let s = setup();
        let (flag, done) = words();
        let _release = Release(flag);
        let mut stream: cumock_abi::CUstream = std::ptr::null_mut();
        // Safety: a live out-parameter.
        assert_eq!(unsafe { cuStreamCreate(&mut stream, 1) }, 0);
        launch_waiter(s.waiter, stream, flag, done);
        // Give the kernel time to start and to translate its addresses.
        std::thread::sleep(Duration::from_millis(50));
        let ctx = s.ctx as usize;
        let buf = within(
            Duration::from_secs(10),
            "export on another thread",
            move || {
                // Safety: live locals; the context made above.
                unsafe {
                    assert_eq!(cuCtxSetCurrent(ctx as cumock_abi::CUcontext), 0);
                    let prop = CUmemAllocationProp {
                        type_: 1,
                        requested_handle_types: 1,
                        location: CUmemLocation { type_: 1, id: 0 },
                        ..Default::default()
                    };
                    let mut h = 0u64;
                    assert_eq!(cuMemCreate(&mut h, 2 << 20, &prop, 0), 0);
                    let mut fd = -1i32;
                    assert_eq!(
                        cuMemExportToShareableHandle((&mut fd as *mut i32).cast(), h, 1, 0),
                        0
                    );
                    assert!(fd >= 0);
                    libc::close(fd);
                    assert_eq!(cuMemRelease(h), 0);
                    let mut buf = 0u64;
                    assert_eq!(cuMemAlloc_v2(&mut buf, 4096), 0);
                    let mut handle = [0u8; 64];
                    assert_eq!(cuIpcGetMemHandle(handle.as_mut_ptr().cast(), buf), 0);
                    // Freed after the kernel: cuMemFree waits for the device's work.
                    buf
                }
            },
        );
        write_word(flag, 1);
        // Safety: a live stream; memory of ours.
        assert_eq!(unsafe { cuStreamSynchronize(stream) }, 0);
        assert_eq!(read_word(done), 1);
        assert_eq!(unsafe { cuMemFree_v2(buf) }, 0);
        assert_eq!(unsafe { cuStreamDestroy_v2(stream) }, 0);
    });
}

#[test]
fn blocking_streams_follow_the_legacy_stream_and_non_blocking_ones_do_not() {
    within(Duration::from_secs(60), "legacy stream order", || {
        let s = setup();
        let (flag, done) = words();
        let _release = Release(flag);
        // A waiter on the legacy stream: a blocking stream's later work waits for it,
        // a non-blocking stream's does not.
        launch_waiter(s.waiter, std::ptr::null_mut(), flag, done);
        let (mut blocking, mut free): (cumock_abi::CUstream, cumock_abi::CUstream) =
            (std::ptr::null_mut(), std::ptr::null_mut());
        // Safety: live out-parameters.
        unsafe {
            assert_eq!(cuStreamCreate(&mut blocking, 0), 0);
            assert_eq!(cuStreamCreate(&mut free, 1), 0);
        }
        let mut word = 0u64;
        // Safety: a live out-parameter.
        assert_eq!(unsafe { cuMemAlloc_v2(&mut word, 8) }, 0);
        // Safety: device memory of ours, live streams.
        unsafe {
            assert_eq!(
                cuMemsetD32Async(word, 7, 1, free),
                0,
                "non-blocking: runs now"
            );
            assert_eq!(cuStreamQuery(free), 0);
            let mut ev: cumock_abi::CUevent = std::ptr::null_mut();
            assert_eq!(cuEventCreate(&mut ev, 0), 0);
            assert_eq!(cuEventRecord(ev, blocking), 0);
            assert_eq!(
                cuEventQuery(ev),
                CUDA_ERROR_NOT_READY,
                "a blocking stream's event waits for the legacy stream's kernel"
            );
            // The host releases the kernel through a non-blocking stream's copy.
            let one = 1u32;
            assert_eq!(
                cuMemcpyHtoDAsync_v2(flag, (&one as *const u32).cast(), 4, free),
                0
            );
            assert_eq!(cuEventSynchronize(ev), 0);
            assert_eq!(cuStreamQuery(blocking), 0);
            assert_eq!(cuCtxSynchronize(), 0);
            assert_eq!(cuEventDestroy_v2(ev), 0);
            assert_eq!(cuStreamDestroy_v2(blocking), 0);
            assert_eq!(cuStreamDestroy_v2(free), 0);
        }
        assert_eq!(read_word(done), 1);
    });
}

#[test]
fn event_timing_measures_the_work_between_two_records() {
    within(Duration::from_secs(60), "event timing", || {
        let s = setup();
        let (flag, done) = words();
        let _release = Release(flag);
        let mut stream: cumock_abi::CUstream = std::ptr::null_mut();
        // Safety: live out-parameters and handles made here.
        unsafe {
            assert_eq!(cuStreamCreate(&mut stream, 1), 0);
            let (mut a, mut b): (cumock_abi::CUevent, cumock_abi::CUevent) =
                (std::ptr::null_mut(), std::ptr::null_mut());
            assert_eq!(cuEventCreate(&mut a, 0), 0);
            assert_eq!(cuEventCreate(&mut b, 0), 0);
            assert_eq!(cuEventRecord(a, stream), 0);
            launch_waiter(s.waiter, stream, flag, done);
            assert_eq!(cuEventRecord(b, stream), 0);
            let mut ms = 0f32;
            assert_eq!(
                cuEventElapsedTime_v2(&mut ms, a, b),
                CUDA_ERROR_NOT_READY,
                "the second event is not reached while the kernel runs"
            );
            std::thread::sleep(Duration::from_millis(120));
            write_word(flag, 1);
            assert_eq!(cuEventSynchronize(b), 0);
            assert_eq!(cuEventElapsedTime_v2(&mut ms, a, b), 0);
            assert!(
                (100.0..60_000.0).contains(&ms),
                "{ms} ms between the records around a kernel that ran 120 ms"
            );
            assert_eq!(cuStreamDestroy_v2(stream), 0);
        }
    });
}

/// cuMemsetD32Async and cuMemsetD2D32Async behind a kernel still running on their stream
/// are queued there: the calls return (it used to wait for the kernel in the calling thread, a hang here, since the
/// kernel waits for the host), and the memset lands after the kernel.
#[test]
fn an_async_memset_behind_a_running_kernel_returns_and_lands_after_it() {
    within(Duration::from_secs(60), "async memset", || {
        let s = setup();
        let (flag, done) = words();
        let (other, _) = words();
        let _release = Release(flag);
        let mut stream: cumock_abi::CUstream = std::ptr::null_mut();
        // Safety: a live out-parameter; CU_STREAM_NON_BLOCKING.
        assert_eq!(unsafe { cuStreamCreate(&mut stream, 1) }, 0);
        launch_waiter(s.waiter, stream, flag, done);
        // Safety: device words of this test; a live stream.
        assert_eq!(unsafe { cuMemsetD32Async(done, 5, 1, stream) }, 0);
        assert_eq!(unsafe { cuMemsetD32Async(other, 6, 1, stream) }, 0);
        let (rows, _) = words();
        // Two rows of one word, 4 bytes apart.
        assert_eq!(unsafe { cuMemsetD2D32Async(rows, 4, 9, 1, 2, stream) }, 0);
        assert_eq!(
            unsafe { cuStreamQuery(stream) },
            CUDA_ERROR_NOT_READY,
            "the kernel still waits for the host"
        );
        write_word(flag, 1);
        // Safety: a live stream.
        assert_eq!(unsafe { cuStreamSynchronize(stream) }, 0);
        // The kernel wrote 1 to `done`; the memset, after it, 5.
        assert_eq!(read_word(done), 5);
        assert_eq!(read_word(other), 6);
        assert_eq!((read_word(rows), read_word(rows + 4)), (9, 9));
        let _ = s.ctx;
    });
}

/// cuEventRecordWithFlags: CU_EVENT_RECORD_DEFAULT records as cuEventRecord (the event
/// completes with the work before it); CU_EVENT_RECORD_EXTERNAL outside a capture is
/// CUDA_ERROR_ILLEGAL_STATE, as on the H200 (probe api_gaps3, event-record-flags); other
/// flags are refused.
#[test]
fn an_event_recorded_with_default_flags_waits_for_the_work_before_it() {
    within(Duration::from_secs(60), "event record with flags", || {
        let s = setup();
        let (flag, done) = words();
        let _release = Release(flag);
        let mut stream: cumock_abi::CUstream = std::ptr::null_mut();
        // Safety: live out-parameters and handles made here.
        unsafe {
            assert_eq!(cuStreamCreate(&mut stream, 1), 0);
            let mut e: cumock_abi::CUevent = std::ptr::null_mut();
            assert_eq!(cuEventCreate(&mut e, 0), 0);
            launch_waiter(s.waiter, stream, flag, done);
            assert_eq!(cuEventRecordWithFlags(e, stream, 0), 0);
            assert_eq!(cuEventQuery(e), CUDA_ERROR_NOT_READY);
            assert_eq!(
                cuEventRecordWithFlags(e, stream, 1),
                CUDA_ERROR_ILLEGAL_STATE
            );
            assert_eq!(
                cuEventRecordWithFlags(e, stream, 2),
                CUDA_ERROR_INVALID_VALUE
            );
            write_word(flag, 1);
            assert_eq!(cuEventSynchronize(e), 0);
            assert_eq!(cuEventQuery(e), 0);
            assert_eq!(cuStreamDestroy_v2(stream), 0);
        }
    });
}
