//! Stream attributes through the C exports (cuStreamGetAttribute, cuStreamSetAttribute,
//! cuStreamCopyAttributes and their `_ptsz` forms): a fresh stream's values, round trips,
//! the priority as cuStreamGetPriority reads it, copies between streams, and the errors
//! for ids cuda.h does not list for streams, dead streams and NULL values.

use cuda::exports::*;
use cumock_abi::result::*;
use cumock_abi::*;
use std::sync::Mutex;

const ACCESS_POLICY_WINDOW: i32 = 1;
const COOPERATIVE: i32 = 2;
const SYNCHRONIZATION_POLICY: i32 = 3;
const CLUSTER_DIMENSION: i32 = 4;
const PRIORITY: i32 = 8;
const MEM_SYNC_DOMAIN_MAP: i32 = 9;
const MEM_SYNC_DOMAIN: i32 = 10;

/// The default streams' attributes are the context's: the tests of this file run one at a
/// time.
static SERIAL: Mutex<()> = Mutex::new(());

fn setup() -> std::sync::MutexGuard<'static, ()> {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Safety: pointers to live locals.
    unsafe {
        assert_eq!(cuInit(0), 0);
        let mut ctx: CUcontext = std::ptr::null_mut();
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
    }
    guard
}

fn stream(priority: i32) -> CUstream {
    let mut s: CUstream = std::ptr::null_mut();
    // Safety: a pointer to a live local.
    assert_eq!(
        unsafe { cuStreamCreateWithPriority(&mut s, 1, priority) },
        0
    );
    s
}

/// The attribute's union as words, or the error.
fn get(s: CUstream, id: i32) -> Result<[u32; 16], CUresult> {
    let mut v = [0xdead_beefu32; 16];
    // Safety: a 64-byte buffer, the size of CUstreamAttrValue.
    let r = unsafe { cuStreamGetAttribute(s, id, v.as_mut_ptr().cast()) };
    if r == 0 {
        Ok(v)
    } else {
        Err(r)
    }
}

fn set(s: CUstream, id: i32, words: &[u32]) -> CUresult {
    let mut v = [0u32; 16];
    v[..words.len()].copy_from_slice(words);
    // Safety: as for `get`.
    unsafe { cuStreamSetAttribute(s, id, v.as_ptr().cast()) }
}

fn priority(s: CUstream) -> i32 {
    let mut p = 99;
    // Safety: a pointer to a live local.
    assert_eq!(unsafe { cuStreamGetPriority(s, &mut p) }, 0);
    p
}

#[test]
fn a_fresh_stream_answers_its_priority_and_the_defaults() {
    let _g = setup();
    let s = stream(-3);
    assert_eq!(get(s, ACCESS_POLICY_WINDOW).unwrap(), [0; 16]);
    assert_eq!(
        get(s, SYNCHRONIZATION_POLICY).unwrap()[0],
        u32::MAX,
        "no policy set: all bits, as the H200 answers"
    );
    assert_eq!(get(s, PRIORITY).unwrap()[0] as i32, -3);
    assert_eq!(
        get(s, MEM_SYNC_DOMAIN_MAP).unwrap()[0],
        0x100,
        "default 0, remote 1"
    );
    assert_eq!(get(s, MEM_SYNC_DOMAIN).unwrap()[0], 0);
    // The whole union is written, not only the member.
    assert_eq!(get(s, PRIORITY).unwrap()[1..], [0; 15]);
    // Safety: a live stream.
    assert_eq!(unsafe { cuStreamDestroy_v2(s) }, 0);
}

#[test]
fn set_values_read_back_and_the_priority_is_the_streams() {
    let _g = setup();
    let s = stream(0);
    // An access policy window: base, bytes, hit ratio 0.5, PERSISTING, STREAMING.
    let window = [0x1000, 0x7f00, 4096, 0, 0.5f32.to_bits(), 2, 1, 0];
    assert_eq!(set(s, ACCESS_POLICY_WINDOW, &window), 0);
    assert_eq!(get(s, ACCESS_POLICY_WINDOW).unwrap()[..8], window);
    assert_eq!(set(s, SYNCHRONIZATION_POLICY, &[4]), 0);
    assert_eq!(get(s, SYNCHRONIZATION_POLICY).unwrap()[0], 4);
    assert_eq!(set(s, MEM_SYNC_DOMAIN_MAP, &[0x0100]), 0);
    assert_eq!(get(s, MEM_SYNC_DOMAIN_MAP).unwrap()[0], 0x0100);
    assert_eq!(set(s, MEM_SYNC_DOMAIN, &[1]), 0);
    assert_eq!(get(s, MEM_SYNC_DOMAIN).unwrap()[0], 1);
    assert_eq!(set(s, PRIORITY, &[-2i32 as u32]), 0);
    assert_eq!(get(s, PRIORITY).unwrap()[0] as i32, -2);
    assert_eq!(
        priority(s),
        -2,
        "cuStreamGetPriority reads the same priority"
    );
    // Out of the device's range: clamped, as cuStreamCreateWithPriority clamps.
    assert_eq!(set(s, PRIORITY, &[-9i32 as u32]), 0);
    assert_eq!(priority(s), -5);
    // Safety: a live stream.
    assert_eq!(unsafe { cuStreamDestroy_v2(s) }, 0);
    // A new stream starts from the defaults again.
    let t = stream(0);
    assert_eq!(get(t, SYNCHRONIZATION_POLICY).unwrap()[0], u32::MAX);
    // Safety: a live stream.
    assert_eq!(unsafe { cuStreamDestroy_v2(t) }, 0);
}

#[test]
fn copy_takes_every_attribute_of_the_source() {
    let _g = setup();
    let (src, dst) = (stream(-4), stream(0));
    assert_eq!(set(src, SYNCHRONIZATION_POLICY, &[3]), 0);
    assert_eq!(set(src, MEM_SYNC_DOMAIN, &[1]), 0);
    // Safety: live streams.
    assert_eq!(unsafe { cuStreamCopyAttributes(dst, src) }, 0);
    assert_eq!(get(dst, SYNCHRONIZATION_POLICY).unwrap()[0], 3);
    assert_eq!(get(dst, MEM_SYNC_DOMAIN).unwrap()[0], 1);
    assert_eq!(priority(dst), -4);
    // The source is unchanged, and a later set on it does not reach the copy.
    assert_eq!(set(src, SYNCHRONIZATION_POLICY, &[2]), 0);
    assert_eq!(get(dst, SYNCHRONIZATION_POLICY).unwrap()[0], 3);
    // The `_ptsz` form: NULL is the calling thread's default stream.
    // Safety: live streams.
    assert_eq!(
        unsafe { cuStreamCopyAttributes_ptsz(std::ptr::null_mut(), src) },
        0
    );
    let mut v = [0u32; 16];
    // Safety: a 64-byte buffer.
    let r = unsafe {
        cuStreamGetAttribute_ptsz(
            std::ptr::null_mut(),
            SYNCHRONIZATION_POLICY,
            v.as_mut_ptr().cast(),
        )
    };
    assert_eq!((r, v[0]), (0, 2));
    let per_thread = 2usize as CUstream;
    assert_eq!(get(per_thread, SYNCHRONIZATION_POLICY).unwrap()[0], 2);
    // The legacy stream is another stream.
    assert_eq!(
        get(std::ptr::null_mut(), SYNCHRONIZATION_POLICY).unwrap()[0],
        u32::MAX
    );
    // Restore the per-thread stream's defaults for the other tests.
    assert_eq!(set(per_thread, SYNCHRONIZATION_POLICY, &[1]), 0);
    assert_eq!(set(per_thread, MEM_SYNC_DOMAIN, &[0]), 0);
    assert_eq!(set(per_thread, PRIORITY, &[0]), 0);
    // Safety: live streams.
    unsafe {
        assert_eq!(cuStreamDestroy_v2(src), 0);
        assert_eq!(cuStreamDestroy_v2(dst), 0);
    }
}

#[test]
fn the_legacy_stream_keeps_its_attributes_under_both_names() {
    let _g = setup();
    let legacy = 1usize as CUstream;
    assert_eq!(set(std::ptr::null_mut(), MEM_SYNC_DOMAIN_MAP, &[0x0101]), 0);
    assert_eq!(get(legacy, MEM_SYNC_DOMAIN_MAP).unwrap()[0], 0x0101);
    assert_eq!(set(legacy, MEM_SYNC_DOMAIN_MAP, &[0]), 0);
    assert_eq!(
        get(std::ptr::null_mut(), MEM_SYNC_DOMAIN_MAP).unwrap()[0],
        0
    );
}

#[test]
fn ids_not_for_streams_dead_streams_and_null_values_are_refused() {
    let _g = setup();
    let s = stream(0);
    for id in [0, COOPERATIVE, CLUSTER_DIMENSION, 15, 99, -1] {
        assert_eq!(get(s, id), Err(CUDA_ERROR_INVALID_VALUE), "get {id}");
        assert_eq!(set(s, id, &[1]), CUDA_ERROR_INVALID_VALUE, "set {id}");
    }
    // A refused set changes nothing.
    assert_eq!(priority(s), 0);
    // Safety: NULL value pointers, which the mock refuses.
    unsafe {
        assert_eq!(
            cuStreamGetAttribute(s, PRIORITY, std::ptr::null_mut()),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuStreamSetAttribute(s, PRIORITY, std::ptr::null()),
            CUDA_ERROR_INVALID_VALUE
        );
    }
    let other = stream(0);
    // Safety: live streams, then dead ones.
    unsafe {
        assert_eq!(cuStreamDestroy_v2(s), 0);
        assert_eq!(get(s, PRIORITY), Err(CUDA_ERROR_INVALID_HANDLE));
        assert_eq!(set(s, PRIORITY, &[0]), CUDA_ERROR_INVALID_HANDLE);
        assert_eq!(cuStreamCopyAttributes(other, s), CUDA_ERROR_INVALID_HANDLE);
        assert_eq!(cuStreamCopyAttributes(s, other), CUDA_ERROR_INVALID_HANDLE);
        assert_eq!(cuStreamDestroy_v2(other), 0);
    }
}

/// simpleAttributes' sequence: the persisting L2 set-aside (the limit), a stream's access
/// policy window over a buffer, then cuCtxResetPersistingL2Cache. The mock has no L2 to
/// demote lines in: the reset succeeds in a context, leaves the limit and the window as
/// set, and needs a current context (CUDA_ERROR_INVALID_CONTEXT on a thread without one).
#[test]
fn resetting_persisting_l2_lines_keeps_the_limit_and_the_window() {
    const LIMIT_PERSISTING_L2_CACHE_SIZE: i32 = 6;
    let _g = setup();
    let s = stream(0);
    let mut buf: CUdeviceptr = 0;
    let mut limit = 0usize;
    // Safety: pointers to live locals.
    unsafe {
        assert_eq!(cuMemAlloc_v2(&mut buf, 1 << 20), 0);
        assert_eq!(cuCtxSetLimit(LIMIT_PERSISTING_L2_CACHE_SIZE, 1 << 20), 0);
    }
    // base_ptr, num_bytes, hitRatio 1.0, hitProp persisting (2), missProp normal (0).
    let window = [
        buf as u32,
        (buf >> 32) as u32,
        1 << 20,
        0,
        1.0f32.to_bits(),
        2,
        0,
    ];
    assert_eq!(set(s, ACCESS_POLICY_WINDOW, &window), 0);
    // Safety: no arguments.
    assert_eq!(unsafe { cuCtxResetPersistingL2Cache() }, CUDA_SUCCESS);
    // Safety: a pointer to a live local.
    assert_eq!(
        unsafe { cuCtxGetLimit(&mut limit, LIMIT_PERSISTING_L2_CACHE_SIZE) },
        0
    );
    assert_eq!(limit, 1 << 20);
    assert_eq!(get(s, ACCESS_POLICY_WINDOW).unwrap()[..7], window);
    let elsewhere = std::thread::spawn(|| {
        // Safety: no arguments.
        unsafe { cuCtxResetPersistingL2Cache() }
    });
    assert_eq!(elsewhere.join().unwrap(), CUDA_ERROR_INVALID_CONTEXT);
    // Safety: a stream and an allocation of this test.
    unsafe {
        assert_eq!(cuStreamDestroy_v2(s), 0);
        assert_eq!(cuMemFree_v2(buf), 0);
    }
}
