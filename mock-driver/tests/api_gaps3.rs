//! The driver's error log (cuLogs*, CUDA 12.9) as the H200 keeps it (probe api_gaps3,
//! sections logs-*): two messages for each refused call (its reason, then the code it
//! returns), handed to the registered callbacks and dumped from an iterator, each dump
//! line prefixed with the time and the thread.

#[path = "common/context.rs"]
mod context;
use context::primary_context;
use cuda::exports::*;
use cumock_abi::result::*;
use cumock_abi::*;
use std::ffi::{c_char, c_void, CStr};
use std::ptr::null_mut;
use std::sync::Mutex;

/// The log is the process's: the tests of this file run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// What the callback received: its data, level and text.
static RECEIVED: Mutex<Vec<(usize, CUlogLevel, String)>> = Mutex::new(Vec::new());

unsafe extern "C" fn on_log(
    data: *mut c_void,
    level: CUlogLevel,
    message: *mut c_char,
    length: usize,
) {
    // Safety: the driver passes a NUL-terminated message of `length` bytes.
    let text = unsafe { CStr::from_ptr(message) }
        .to_string_lossy()
        .into_owned();
    assert_eq!(text.len(), length);
    RECEIVED.lock().unwrap().push((data as usize, level, text));
}

/// A call the driver refuses (with no context needed).
fn refuse_a_device() {
    let mut d: CUdevice = 0;
    // Safety: a live out-pointer.
    assert_eq!(
        unsafe { cuDeviceGet(&mut d, 99) },
        CUDA_ERROR_INVALID_DEVICE
    );
}

fn init() -> std::sync::MutexGuard<'static, ()> {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Safety: no pointers.
    assert_eq!(unsafe { cuInit(0) }, 0);
    RECEIVED.lock().unwrap().clear();
    guard
}

#[test]
fn a_refused_call_reaches_each_callback_until_it_is_unregistered() {
    let _g = init();
    let mut a: CUlogsCallbackHandle = null_mut();
    let mut b: CUlogsCallbackHandle = null_mut();
    // Safety: live out-pointers; the callback lives for the program.
    unsafe {
        assert_eq!(
            cuLogsRegisterCallback(Some(on_log), std::ptr::without_provenance_mut(1), &mut a),
            0
        );
        assert_eq!(
            cuLogsRegisterCallback(Some(on_log), std::ptr::without_provenance_mut(2), &mut b),
            0
        );
    }
    assert_ne!(a, b);
    refuse_a_device();
    {
        let got = RECEIVED.lock().unwrap();
        let datas: Vec<usize> = got.iter().map(|r| r.0).collect();
        assert_eq!(datas, [1, 2, 1, 2], "{got:?}");
        assert!(got.iter().all(|r| r.1 == 0), "CU_LOG_LEVEL_ERROR: {got:?}");
        assert!(
            !got[0].2.is_empty() && !got[0].2.contains("Returning"),
            "{got:?}"
        );
        assert_eq!(
            got[2].2, "Returning 101 (CUDA_ERROR_INVALID_DEVICE) from cuDeviceGet",
            "{got:?}"
        );
    }
    // Safety: handles from the registrations.
    unsafe {
        assert_eq!(cuLogsUnregisterCallback(b), 0);
        assert_eq!(cuLogsUnregisterCallback(b), CUDA_ERROR_INVALID_VALUE);
    }
    RECEIVED.lock().unwrap().clear();
    refuse_a_device();
    assert_eq!(RECEIVED.lock().unwrap().len(), 2);
    // Safety: a handle from its registration; NULL is refused.
    unsafe {
        assert_eq!(cuLogsUnregisterCallback(a), 0);
        assert_eq!(
            cuLogsRegisterCallback(None, null_mut(), &mut a),
            CUDA_ERROR_INVALID_VALUE
        );
    }
    // A successful call logs nothing.
    RECEIVED.lock().unwrap().clear();
    let mut count = 0;
    // Safety: a live out-pointer.
    assert_eq!(unsafe { cuDeviceGetCount(&mut count) }, 0);
    refuse_a_device();
    assert!(RECEIVED.lock().unwrap().is_empty());
}

#[test]
fn a_dump_holds_the_messages_since_its_iterator_and_advances_it() {
    let _g = init();
    let mut it: CUlogIterator = 0;
    let truncated = cuda::model::logs::TRUNCATED;
    // Safety: live pointers throughout; the buffer's room is its length.
    unsafe {
        // Flags, which cuda.h reserves, are taken (the H200 takes 1).
        assert_eq!(cuLogsCurrent(null_mut(), 0), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(cuLogsCurrent(&mut it, 1), 0);
        let start = it;
        refuse_a_device();
        refuse_a_device();
        let mut buf = vec![b'Z' as c_char; 4096];
        let mut size = buf.len();
        assert_eq!(
            cuLogsDumpToMemory(&mut it, buf.as_mut_ptr(), &mut size, 0),
            0
        );
        let text = CStr::from_ptr(buf.as_ptr()).to_str().unwrap().to_owned();
        assert_eq!(text.len(), size, "the size excludes the NUL");
        assert_eq!(text.lines().count(), 4, "{text}");
        assert!(
            text.lines()
                .all(|l| l.starts_with('[') && l.contains("][CUDA][E] ")),
            "{text}"
        );
        assert!(text
            .lines()
            .nth(1)
            .unwrap()
            .ends_with("][CUDA][E] Returning 101 (CUDA_ERROR_INVALID_DEVICE) from cuDeviceGet"));
        assert_eq!(it, start + 4);
        // Nothing new since: size 0, the buffer as it was.
        let mut again = buf.len();
        buf[0] = b'Z' as c_char;
        assert_eq!(
            cuLogsDumpToMemory(&mut it, buf.as_mut_ptr(), &mut again, 0),
            0
        );
        assert_eq!((again, buf[0]), (0, b'Z' as c_char));
        // Too small for the truncation line: refused, size 0, the iterator kept; the
        // refusal is logged too (two messages).
        let mut from = start;
        let mut tiny = 16;
        assert_eq!(
            cuLogsDumpToMemory(&mut from, buf.as_mut_ptr(), &mut tiny, 0),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!((tiny, from), (0, start));
        // Room past the truncation line: it, then the newest message (the refusal's
        // code), the room filled with no NUL, the size the whole dump's.
        let mut room = truncated.len() + 2;
        buf.fill(b'Z' as c_char);
        assert_eq!(
            cuLogsDumpToMemory(&mut from, buf.as_mut_ptr(), &mut room, 0),
            0
        );
        assert_eq!(from, start + 6);
        let held: Vec<u8> = buf[..truncated.len() + 3]
            .iter()
            .map(|&c| c as u8)
            .collect();
        assert_eq!(
            &held[..truncated.len() + 2],
            format!("{truncated}\n[").as_bytes()
        );
        assert_eq!(held[truncated.len() + 2], b'Z', "nothing past the room");
        assert!(room > truncated.len() + 2, "the whole dump's size: {room}");
        let mut past = start + 100;
        let mut size = buf.len();
        assert_eq!(
            cuLogsDumpToMemory(&mut past, buf.as_mut_ptr(), &mut size, 0),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuLogsDumpToMemory(&mut from, null_mut(), &mut size, 0),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuLogsDumpToMemory(&mut from, buf.as_mut_ptr(), null_mut(), 0),
            CUDA_ERROR_INVALID_VALUE
        );

        // To a file: the same text, then an empty file when nothing is new.
        let path = std::env::temp_dir().join(format!("cumock-logs-{}.txt", std::process::id()));
        let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        let mut from = start;
        assert_eq!(cuLogsDumpToFile(&mut from, c_path.as_ptr(), 0), 0);
        assert!(std::fs::read_to_string(&path).unwrap().starts_with(&text));
        let mut now = 0;
        assert_eq!(cuLogsCurrent(&mut now, 0), 0);
        assert_eq!(from, now);
        assert_eq!(cuLogsDumpToFile(&mut from, c_path.as_ptr(), 0), 0);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
        std::fs::remove_file(&path).unwrap();
        assert_eq!(
            cuLogsDumpToFile(&mut from, c"/nonexistent-dir/x".as_ptr(), 0),
            CUDA_ERROR_INVALID_VALUE
        );
    }
}

/// cuStreamGetId: NULL and CU_STREAM_LEGACY are one stream (one id), the per-thread stream
/// another, and no created stream reports either's id (its serial started at 1 too, and
/// did); two live streams never share one.
#[test]
fn stream_ids_are_unique_among_live_streams() {
    // Safety: live out-pointers; the streams are created here.
    unsafe {
        primary_context();
        let id = |s: CUstream| {
            let mut v = 0u64;
            assert_eq!(cuStreamGetId(s, &mut v), 0);
            v
        };
        let (null, legacy, per_thread) = (id(null_mut()), id(1 as CUstream), id(2 as CUstream));
        assert_eq!(null, legacy);
        assert_ne!(legacy, per_thread);
        let mut created = Vec::new();
        for _ in 0..4 {
            let mut s: CUstream = null_mut();
            assert_eq!(cuStreamCreate(&mut s, 0), 0);
            created.push((s, id(s)));
        }
        let mut ids: Vec<u64> = created.iter().map(|c| c.1).collect();
        ids.extend([legacy, per_thread]);
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 6, "ids {ids:?}");
        for (s, _) in created {
            assert_eq!(cuStreamDestroy_v2(s), 0);
        }
    }
}
