//! Streams and events. Runtime handles are the driver's: cudaStream_t is the CUstream,
//! cudaStreamLegacy (1) and cudaStreamPerThread (2) are the driver's special handles.

use crate::boundary::{cudart_fn, out_ref};
use crate::error::{self, RtError, RtResult};
use crate::memory::stream_for;
use crate::runtime::{with_context, Runtime};
use cumock_abi::{CUevent, CUgraph, CUgraphNode, CUstream};
use std::ffi::{c_int, c_uint, c_void};

fn create_stream(flags: u32, priority: Option<i32>) -> RtResult<CUstream> {
    if flags > 1 {
        return Err(error::invalid(format!(
            "flags {flags:#x} are not cudaStreamDefault or cudaStreamNonBlocking"
        )));
    }
    let (d, rt, device) = with_context()?;
    let mut s = std::ptr::null_mut();
    match priority {
        None => d.cuStreamCreate(&mut s, flags)?,
        Some(p) => d.cuStreamCreateWithPriority(&mut s, flags, p)?,
    }
    let mut st = rt.state.lock();
    st.streams.insert(s as usize, device);
    st.stream_flags.insert(s as usize, flags);
    Ok(s)
}

cudart_fn! {
    fn cudaStreamCreate(stream: *mut CUstream) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let stream = unsafe { out_ref(stream)? };
        *stream = create_stream(0, None)?;
        Ok(())
    }
}

cudart_fn! {
    fn cudaStreamCreateWithFlags(stream: *mut CUstream, flags: c_uint) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let stream = unsafe { out_ref(stream)? };
        *stream = create_stream(flags, None)?;
        Ok(())
    }
}

cudart_fn! {
    fn cudaStreamCreateWithPriority(stream: *mut CUstream, flags: c_uint, priority: c_int) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let stream = unsafe { out_ref(stream)? };
        *stream = create_stream(flags, Some(priority))?;
        Ok(())
    }
}

cudart_fn! {
    fn cudaStreamDestroy(stream: CUstream) {
        let (d, rt, _) = with_context()?;
        if is_special(stream) {
            return Err(RtError::new(error::INVALID_RESOURCE_HANDLE, "the default streams cannot be destroyed"));
        }
        // Out of the tables first: a destroyed handle's value may be the next stream's.
        let (dev, flags) = {
            let mut st = rt.state.lock();
            (st.streams.remove(&(stream as usize)), st.stream_flags.remove(&(stream as usize)))
        };
        if let Err(e) = d.cuStreamDestroy(stream) {
            let mut st = rt.state.lock();
            if let Some(dev) = dev {
                st.streams.insert(stream as usize, dev);
            }
            if let Some(f) = flags {
                st.stream_flags.insert(stream as usize, f);
            }
            return Err(e);
        }
        Ok(())
    }
}

/// A stream's priority. On a driver without stream priorities (no cuStreamGetPriority)
/// every stream has the one priority there is, 0, as cudaDeviceGetStreamPriorityRange
/// then says; a stream this runtime does not know is still an error.
fn stream_priority(stream: CUstream, priority: *mut c_int) -> RtResult<()> {
    // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
    let priority = unsafe { out_ref(priority)? };
    let (d, rt, _) = with_context()?;
    match d.cuStreamGetPriority(stream, priority) {
        Err(e) if e.code == error::NOT_SUPPORTED => {
            known_stream(rt, stream)?;
            *priority = 0;
            Ok(())
        }
        r => r,
    }
}

/// A stream's flags. On a driver without cuStreamGetFlags, the flags this runtime created
/// the stream with (the default streams have none).
fn stream_flags(stream: CUstream, flags: *mut c_uint) -> RtResult<()> {
    // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
    let flags = unsafe { out_ref(flags)? };
    let (d, rt, _) = with_context()?;
    match d.cuStreamGetFlags(stream, flags) {
        Err(e) if e.code == error::NOT_SUPPORTED => {
            known_stream(rt, stream)?;
            *flags = rt
                .state
                .lock()
                .stream_flags
                .get(&(stream as usize))
                .copied()
                .unwrap_or(0);
            Ok(())
        }
        r => r,
    }
}

fn known_stream(rt: &Runtime, stream: CUstream) -> RtResult<()> {
    if is_special(stream) || rt.state.lock().streams.contains_key(&(stream as usize)) {
        Ok(())
    } else {
        Err(RtError::new(
            error::INVALID_RESOURCE_HANDLE,
            format!("{stream:?} is not a stream of this runtime"),
        ))
    }
}

fn is_special(s: CUstream) -> bool {
    (s as usize) <= 2
}

macro_rules! stream_fns {
    ($($name:ident, $ptsz:ident => $f:ident;)*) => {$(
        cudart_fn! {
            fn $name(stream: CUstream) {
                let (d, _, _) = with_context()?;
                d.$f(stream_for(stream, false))?;
                after_wait(stream_for(stream, false));
                Ok(())
            }
        }
        cudart_fn! {
            fn $ptsz(stream: CUstream) {
                let (d, _, _) = with_context()?;
                d.$f(stream_for(stream, true))?;
                after_wait(stream_for(stream, true));
                Ok(())
            }
        }
    )*};
}

stream_fns! {
    cudaStreamSynchronize, cudaStreamSynchronize_ptsz => cuStreamSynchronize;
    cudaStreamQuery, cudaStreamQuery_ptsz => cuStreamQuery;
}

/// A synchronising call finished: stream-ordered frees may give memory back.
fn after_wait(_stream: CUstream) {
    crate::pool::release_on_synchronize();
}

fn wait_event(stream: CUstream, event: CUevent, flags: u32) -> RtResult<()> {
    let (d, _, _) = with_context()?;
    d.cuStreamWaitEvent(stream, event, flags)
}

cudart_fn! {
    fn cudaStreamWaitEvent(stream: CUstream, event: CUevent, flags: c_uint) {
        wait_event(stream_for(stream, false), event, flags)
    }
}

cudart_fn! {
    fn cudaStreamWaitEvent_ptsz(stream: CUstream, event: CUevent, flags: c_uint) {
        wait_event(stream_for(stream, true), event, flags)
    }
}

cudart_fn! {
    fn cudaStreamGetPriority(stream: CUstream, priority: *mut c_int) {
        stream_priority(stream_for(stream, false), priority)
    }
}

cudart_fn! {
    fn cudaStreamGetFlags(stream: CUstream, flags: *mut c_uint) {
        stream_flags(stream_for(stream, false), flags)
    }
}

/// `cudaStreamCaptureStatus` of a stream. A driver without cuStreamIsCapturing has no
/// stream capture at all (cuStreamBeginCapture is one of its functions), so no stream of
/// it is capturing: the answer is cudaStreamCaptureStatusNone, for a stream it knows.
fn capture_status(rt: &Runtime, d: &crate::driver::Driver, stream: CUstream) -> RtResult<i32> {
    let mut status = 0;
    match d.cuStreamIsCapturing(stream, &mut status) {
        Ok(()) => Ok(status),
        Err(e) if e.code == error::NOT_SUPPORTED => {
            if is_special(stream) || rt.state.lock().streams.contains_key(&(stream as usize)) {
                Ok(0)
            } else {
                Err(RtError::new(
                    error::INVALID_RESOURCE_HANDLE,
                    format!("{stream:?} is not a stream of this runtime"),
                ))
            }
        }
        Err(e) => Err(e),
    }
}

cudart_fn! {
    fn cudaStreamIsCapturing(stream: CUstream, status: *mut c_int) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let status = unsafe { out_ref(status)? };
        let (d, rt, _) = with_context()?;
        *status = capture_status(rt, d, stream_for(stream, false))?;
        Ok(())
    }
}

cudart_fn! {
    fn cudaStreamIsCapturing_ptsz(stream: CUstream, status: *mut c_int) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let status = unsafe { out_ref(status)? };
        let (d, rt, _) = with_context()?;
        *status = capture_status(rt, d, stream_for(stream, true))?;
        Ok(())
    }
}

/// cudaStreamGetCaptureInfo: the driver's answer (cuStreamGetCaptureInfo, CUDA 12.3's
/// signature, which the runtime's shares); outside a capture only the status is written.
/// A driver without capture has no capturing stream: cudaStreamCaptureStatusNone.
#[allow(clippy::too_many_arguments)]
fn capture_info(
    stream: CUstream,
    status: *mut c_int,
    id: *mut u64,
    graph: *mut CUgraph,
    deps: *mut *const CUgraphNode,
    edges: *mut *const std::ffi::c_void,
    num_deps: *mut usize,
) -> RtResult<()> {
    if status.is_null() {
        return Err(error::invalid("pCaptureStatus is NULL"));
    }
    let (d, rt, _) = with_context()?;
    // Safety: the program's out-pointers, NULL or writable, as the header requires; the
    // driver checks the ones it needs.
    match unsafe {
        d.cuStreamGetCaptureInfo(stream, status, id, graph, deps, edges.cast(), num_deps)
    } {
        Err(e) if e.code == error::NOT_SUPPORTED => {
            let s = capture_status(rt, d, stream)?;
            // Safety: checked non-NULL above.
            unsafe { status.write(s) };
            Ok(())
        }
        r => r,
    }
}

cudart_fn! {
    fn cudaStreamGetCaptureInfo(stream: CUstream, status: *mut c_int, id: *mut u64, graph: *mut CUgraph, deps: *mut *const CUgraphNode, edges: *mut *const std::ffi::c_void, num_deps: *mut usize) {
        capture_info(stream_for(stream, false), status, id, graph, deps, edges, num_deps)
    }
}

cudart_fn! {
    fn cudaStreamGetCaptureInfo_ptsz(stream: CUstream, status: *mut c_int, id: *mut u64, graph: *mut CUgraph, deps: *mut *const CUgraphNode, edges: *mut *const std::ffi::c_void, num_deps: *mut usize) {
        capture_info(stream_for(stream, true), status, id, graph, deps, edges, num_deps)
    }
}

// ---- events ---------------------------------------------------------------------------

fn create_event(flags: u32) -> RtResult<CUevent> {
    if flags & !0x7 != 0 {
        return Err(error::invalid(format!(
            "flags {flags:#x} are not cudaEvent*"
        )));
    }
    let (d, rt, device) = with_context()?;
    let mut e = std::ptr::null_mut();
    // cudaEvent flags are CUevent_flags: blocking sync 1, disable timing 2, interprocess 4.
    d.cuEventCreate(&mut e, flags)?;
    let mut st = rt.state.lock();
    st.events.insert(e as usize, device);
    if flags & 0x2 != 0 {
        st.untimed_events.insert(e as usize);
    } else {
        st.untimed_events.remove(&(e as usize));
    }
    Ok(e)
}

cudart_fn! {
    fn cudaEventCreate(event: *mut CUevent) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let event = unsafe { out_ref(event)? };
        *event = create_event(0)?;
        Ok(())
    }
}

cudart_fn! {
    fn cudaEventCreateWithFlags(event: *mut CUevent, flags: c_uint) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let event = unsafe { out_ref(event)? };
        *event = create_event(flags)?;
        Ok(())
    }
}

cudart_fn! {
    fn cudaEventDestroy(event: CUevent) {
        let (d, rt, _) = with_context()?;
        let dev = rt.state.lock().events.remove(&(event as usize));
        if let Err(e) = d.cuEventDestroy(event) {
            if let Some(dev) = dev {
                rt.state.lock().events.insert(event as usize, dev);
            }
            return Err(e);
        }
        Ok(())
    }
}

cudart_fn! {
    fn cudaEventRecord(event: CUevent, stream: CUstream) {
        let (d, _, _) = with_context()?;
        d.cuEventRecord(event, stream_for(stream, false))
    }
}

cudart_fn! {
    fn cudaEventRecord_ptsz(event: CUevent, stream: CUstream) {
        let (d, _, _) = with_context()?;
        d.cuEventRecord(event, stream_for(stream, true))
    }
}

cudart_fn! {
    fn cudaEventSynchronize(event: CUevent) {
        let (d, _, _) = with_context()?;
        d.cuEventSynchronize(event)?;
        crate::pool::release_on_synchronize();
        Ok(())
    }
}

cudart_fn! {
    fn cudaEventQuery(event: CUevent) {
        let (d, _, _) = with_context()?;
        d.cuEventQuery(event)
    }
}

cudart_fn! {
    fn cudaEventElapsedTime(ms: *mut f32, start: CUevent, end: CUevent) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let ms = unsafe { out_ref(ms)? };
        let (d, rt, _) = with_context()?;
        // An event made without timing has no time to give: an invalid handle here, as
        // NVIDIA's runtime said on the H200 (streams_events), whatever the driver would.
        let untimed = {
            let st = rt.state.lock();
            [start, end].iter().any(|e| st.untimed_events.contains(&(*e as usize)))
        };
        if untimed {
            return Err(RtError::new(error::INVALID_RESOURCE_HANDLE, "an event was created with cudaEventDisableTiming"));
        }
        d.cuEventElapsedTime(ms, start, end)
    }
}

thread_local! {
    /// This thread's stream capture mode, on a driver without capture (see below).
    static CAPTURE_MODE: std::cell::Cell<c_int> = const { std::cell::Cell::new(0) };
}

cudart_fn! {
    /// The driver's, where it has stream capture. A driver without it
    /// (cuThreadExchangeStreamCaptureMode not supported) captures nothing, so the mode
    /// affects nothing there; the thread's value is kept so that it round-trips, as
    /// allocators' guards set and restore it.
    fn cudaThreadExchangeStreamCaptureMode(mode: *mut c_int) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let mode = unsafe { out_ref(mode)? };
        if !(0..=2).contains(mode) {
            return Err(error::invalid(format!("{mode} is not a cudaStreamCaptureMode")));
        }
        let (d, _, _) = with_context()?;
        match d.cuThreadExchangeStreamCaptureMode(mode) {
            Err(e) if e.code == error::NOT_SUPPORTED => {
                *mode = CAPTURE_MODE.try_with(|m| m.replace(*mode)).unwrap_or(0);
                Ok(())
            }
            r => r,
        }
    }
}

cudart_fn! {
    fn cudaEventRecordWithFlags(event: CUevent, stream: CUstream, flags: c_uint) {
        let (d, _, _) = with_context()?;
        if flags == 0 {
            d.cuEventRecord(event, stream_for(stream, false))
        } else {
            d.cuEventRecordWithFlags(event, stream_for(stream, false), flags)
        }
    }
}

/// The device of a stream: the current one for the default streams, else the one the
/// runtime created it on.
fn stream_device(stream: CUstream, device: *mut c_int) -> RtResult<()> {
    // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
    let device = unsafe { out_ref(device)? };
    let (_, rt, current) = with_context()?;
    *device = if is_special(stream) {
        current
    } else {
        *rt.state
            .lock()
            .streams
            .get(&(stream as usize))
            .ok_or_else(|| {
                RtError::new(
                    error::INVALID_RESOURCE_HANDLE,
                    format!("{stream:?} is not a stream of this runtime"),
                )
            })?
    };
    Ok(())
}

cudart_fn! {
    fn cudaStreamGetDevice(stream: CUstream, device: *mut c_int) {
        stream_device(stream_for(stream, false), device)
    }
}

cudart_fn! {
    fn cudaStreamGetDevice_ptsz(stream: CUstream, device: *mut c_int) {
        stream_device(stream_for(stream, true), device)
    }
}

cudart_fn! {
    fn cudaStreamGetPriority_ptsz(stream: CUstream, priority: *mut c_int) {
        stream_priority(stream_for(stream, true), priority)
    }
}

cudart_fn! {
    fn cudaStreamGetFlags_ptsz(stream: CUstream, flags: *mut c_uint) {
        stream_flags(stream_for(stream, true), flags)
    }
}

cudart_fn! {
    fn cudaEventRecordWithFlags_ptsz(event: CUevent, stream: CUstream, flags: c_uint) {
        let (d, _, _) = with_context()?;
        if flags == 0 {
            d.cuEventRecord(event, stream_for(stream, true))
        } else {
            d.cuEventRecordWithFlags(event, stream_for(stream, true), flags)
        }
    }
}

/// A host function in stream order. On a driver without cuLaunchHostFunc the stream is
/// synchronised and the function runs at once on the calling thread: it still runs after
/// all the work before it and before all the work after it, which is the order promised;
/// the caller waits for it.
fn launch_host_func(
    stream: CUstream,
    f: cumock_abi::CUhostFn,
    user_data: *mut std::ffi::c_void,
) -> RtResult<()> {
    let Some(func) = f else {
        return Err(error::invalid("fn is NULL"));
    };
    let (d, _, _) = with_context()?;
    // Safety: the program's function and data, called as it asked.
    match unsafe { d.cuLaunchHostFunc(stream, f, user_data) } {
        Err(e) if e.code == error::NOT_SUPPORTED => {
            d.cuStreamSynchronize(stream)?;
            // Safety: as above; the stream's earlier work is done.
            unsafe { func(user_data) };
            Ok(())
        }
        r => r,
    }
}

cudart_fn! {
    fn cudaLaunchHostFunc(stream: CUstream, f: cumock_abi::CUhostFn, user_data: *mut std::ffi::c_void) {
        launch_host_func(stream_for(stream, false), f, user_data)
    }
}

cudart_fn! {
    fn cudaLaunchHostFunc_ptsz(stream: CUstream, f: cumock_abi::CUhostFn, user_data: *mut std::ffi::c_void) {
        launch_host_func(stream_for(stream, true), f, user_data)
    }
}

/// cudaStreamAddCallback: as cudaLaunchHostFunc, the callback also told the stream and
/// its status.
fn add_callback(
    stream: CUstream,
    f: cumock_abi::CUstreamCallback,
    user_data: *mut std::ffi::c_void,
    flags: u32,
) -> RtResult<()> {
    if flags != 0 {
        return Err(error::invalid(format!("flags {flags:#x} must be 0")));
    }
    let Some(func) = f else {
        return Err(error::invalid("callback is NULL"));
    };
    let (d, _, _) = with_context()?;
    // Safety: the program's callback and data, called as it asked.
    match unsafe { d.cuStreamAddCallback(stream, f, user_data, 0) } {
        Err(e) if e.code == error::NOT_SUPPORTED => {
            let status = match d.cuStreamSynchronize(stream) {
                Ok(()) => error::SUCCESS,
                Err(e) => e.code,
            };
            // Safety: as above. The callback's cudaError_t is the driver's number
            // (CUstreamCallback types it as CUresult: the same bits).
            unsafe { func(stream, status as cumock_abi::CUresult, user_data) };
            Ok(())
        }
        r => r,
    }
}

cudart_fn! {
    fn cudaStreamAddCallback(stream: CUstream, f: cumock_abi::CUstreamCallback, user_data: *mut std::ffi::c_void, flags: c_uint) {
        add_callback(stream_for(stream, false), f, user_data, flags)
    }
}

cudart_fn! {
    fn cudaStreamAddCallback_ptsz(stream: CUstream, f: cumock_abi::CUstreamCallback, user_data: *mut std::ffi::c_void, flags: c_uint) {
        add_callback(stream_for(stream, true), f, user_data, flags)
    }
}

cudart_fn! {
    fn cudaStreamGetId(stream: CUstream, id: *mut u64) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let id = unsafe { out_ref(id)? };
        let (d, _, _) = with_context()?;
        d.cuStreamGetId(stream_for(stream, false), id)
    }
}

cudart_fn! {
    fn cudaStreamGetId_ptsz(stream: CUstream, id: *mut u64) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let id = unsafe { out_ref(id)? };
        let (d, _, _) = with_context()?;
        d.cuStreamGetId(stream_for(stream, true), id)
    }
}

cudart_fn! {
    fn cudaIpcGetEventHandle(handle: *mut cumock_abi::CUipcEventHandle, event: CUevent) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let handle = unsafe { out_ref(handle)? };
        let (d, _, _) = with_context()?;
        d.cuIpcGetEventHandle(handle, event)
    }
}

cudart_fn! {
    fn cudaIpcOpenEventHandle(event: *mut CUevent, handle: cumock_abi::CUipcEventHandle) {
        // Safety: the program's out-pointers: NULL (refused) or writable, as the header requires.
        let event = unsafe { out_ref(event)? };
        let (d, _, _) = with_context()?;
        d.cuIpcOpenEventHandle(event, handle)
    }
}

// Stream attributes: the driver's (cudaStreamAttrValue is laid out as CUstreamAttrValue,
// the 64-byte launch attribute union, and cudaStreamAttrID's values are the driver's).

fn get_attribute(stream: CUstream, attr: c_int, value: *mut c_void) -> RtResult<()> {
    let (d, _, _) = with_context()?;
    // Safety: the program's pointer, as the header requires (the driver checks NULL).
    unsafe { d.cuStreamGetAttribute(stream, attr, value.cast()) }
}

fn set_attribute(stream: CUstream, attr: c_int, value: *const c_void) -> RtResult<()> {
    let (d, _, _) = with_context()?;
    // Safety: as for get_attribute.
    unsafe { d.cuStreamSetAttribute(stream, attr, value.cast()) }
}

fn copy_attributes(dst: CUstream, src: CUstream) -> RtResult<()> {
    let (d, _, _) = with_context()?;
    d.cuStreamCopyAttributes(dst, src)
}

cudart_fn! {
    fn cudaStreamGetAttribute(stream: CUstream, attr: c_int, value: *mut c_void) {
        get_attribute(stream_for(stream, false), attr, value)
    }
}

cudart_fn! {
    fn cudaStreamGetAttribute_ptsz(stream: CUstream, attr: c_int, value: *mut c_void) {
        get_attribute(stream_for(stream, true), attr, value)
    }
}

cudart_fn! {
    fn cudaStreamSetAttribute(stream: CUstream, attr: c_int, value: *const c_void) {
        set_attribute(stream_for(stream, false), attr, value)
    }
}

cudart_fn! {
    fn cudaStreamSetAttribute_ptsz(stream: CUstream, attr: c_int, value: *const c_void) {
        set_attribute(stream_for(stream, true), attr, value)
    }
}

cudart_fn! {
    fn cudaStreamCopyAttributes(dst: CUstream, src: CUstream) {
        copy_attributes(stream_for(dst, false), stream_for(src, false))
    }
}

cudart_fn! {
    fn cudaStreamCopyAttributes_ptsz(dst: CUstream, src: CUstream) {
        copy_attributes(stream_for(dst, true), stream_for(src, true))
    }
}
