//! Stream management (cuda.h's group CUDA_STREAM): creating, querying, synchronizing and
//! destroying streams, and waiting on events. The mock runs every operation in order, so
//! a stream is bookkeeping: its flags, priority, context and id.

use super::graphs::graph_key;
use super::{check_stream, Mock};
use crate::boundary::{ctx_handle, drv, event_key, out, stream_handle, stream_key};
use crate::model::capture::{self, CaptureInfo};
use crate::model::error::*;
use crate::model::graphs::NodeOp;
use crate::model::stream_queues;
use cumock_abi::result::*;
use cumock_abi::*;
use std::ffi::{c_int, c_uint, c_void};

/// What the H200 answers for CU_EVENT_WAIT_EXTERNAL outside a capture.
use cumock_abi::result::CUDA_ERROR_ILLEGAL_STATE;

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

    unsafe fn cuStreamGetFlags(s: CUstream, flags: *mut c_uint) -> CuResult<()> {
        let (_, _, props) = drv()?.stream_info(stream_key(s))?;
        out(flags, props.flags)
    }

    unsafe fn cuStreamGetCtx(s: CUstream, pctx: *mut CUcontext) -> CuResult<()> {
        let (ctx, _, _) = drv()?.stream_info(stream_key(s))?;
        out(pctx, ctx_handle(ctx))
    }

    unsafe fn cuStreamGetDevice(s: CUstream, device: *mut CUdevice) -> CuResult<()> {
        let (_, dev, _) = drv()?.stream_info(stream_key(s))?;
        out(device, dev as CUdevice)
    }

    unsafe fn cuStreamGetId(s: CUstream, id: *mut u64) -> CuResult<()> {
        drv()?.stream_info(stream_key(s))?;
        // The handle's own number: unique among the process's live streams.
        out(id, stream_key(s).serial())
    }

    unsafe fn cuStreamDestroy_v2(s: CUstream) -> CuResult<()> {
        drv()?.stream_destroy(stream_key(s))?;
        drv()?.capture_forget_stream(stream_key(s));
        // Its queued host functions still run (as cuda.h says of a stream's work).
        stream_queues::forget_stream(stream_key(s));
        Ok(())
    }

    unsafe fn cuStreamSynchronize(s: CUstream) -> CuResult<()> {
        drv()?.stream_synchronize(stream_key(s))
    }

    unsafe fn cuStreamQuery(s: CUstream) -> CuResult<()> {
        drv()?.stream_query(stream_key(s))
    }

    unsafe fn cuStreamWaitEvent(s: CUstream, e: CUevent, flags: c_uint) -> CuResult<()> {
        let d = drv()?;
        check_stream(s)?;
        // Observed: unknown flags are CUDA_ERROR_INVALID_VALUE; CU_EVENT_WAIT_EXTERNAL
        // (1) outside a stream capture, CUDA_ERROR_ILLEGAL_STATE.
        let capturing = d.capture_of(stream_key(s))?.is_some();
        match flags {
            0 => {}
            // In a capture, a wait on an event from outside it: an event wait node.
            1 if capturing => {
                d.event_check(event_key(e))?;
                return d.capture_node(stream_key(s), NodeOp::EventWait(event_key(e)));
            }
            1 => {
                return Err(CuError::new(
                    CUDA_ERROR_ILLEGAL_STATE,
                    "CU_EVENT_WAIT_EXTERNAL is only for a stream being captured",
                ))
            }
            _ => return Err(invalid(format!("flags {flags:#x} are not CU_EVENT_WAIT_*"))),
        }
        d.event_check(event_key(e))?;
        // Fork and join of captures: the stream joins the event's capture.
        if d.capture_wait_event(stream_key(s), event_key(e))? {
            return Ok(());
        }
        // An event still waiting for work: the stream's later work waits too.
        if let Some(m) = stream_queues::event_pending(event_key(e)) {
            super::exec::queue_host_work(s, "cuStreamWaitEvent", Box::new(move || m.wait()))?;
        }
        let d = drv()?;
        crate::model::ordering::stream_waited(
            crate::model::stream_queues::key_of(stream_key(s)),
            d.stream_order(stream_key(s))?,
            event_key(e),
        );
        Ok(())
    }

    unsafe fn cuStreamAddCallback(
        s: CUstream,
        callback: CUstreamCallback,
        user_data: *mut c_void,
        flags: c_uint,
    ) -> CuResult<()> {
        let d = drv()?;
        if flags != 0 {
            return Err(invalid(format!("flags {flags:#x} must be 0")));
        }
        let Some(f) = callback else {
            return Err(invalid("callback is NULL"));
        };
        d.ctx_device(None)?;
        check_stream(s)?;
        d.capture_refuse(
            stream_key(s),
            "cuStreamAddCallback (cuLaunchHostFunc is captured)",
        )?;
        let data = super::exec::ProgramData(user_data);
        let handle = super::exec::ProgramData(s.cast());
        // Safety: the program's callback, called with its stream and data, as it asked,
        // after the stream's earlier work: which succeeded, since the mock's device work
        // either fails when issued or not at all.
        super::exec::queue_host_work(
            s,
            "cuStreamAddCallback",
            Box::new(move || unsafe { f(handle.get().cast(), CUDA_SUCCESS, data.get()) }),
        )
    }

    unsafe fn cuStreamBeginCapture_v2(s: CUstream, mode: CUstreamCaptureMode) -> CuResult<()> {
        drv()?.begin_capture(stream_key(s), mode)
    }

    unsafe fn cuStreamBeginCaptureToGraph(
        s: CUstream,
        g: CUgraph,
        dependencies: *const CUgraphNode,
        dependency_data: *const CUgraphEdgeData,
        n: usize,
        mode: CUstreamCaptureMode,
    ) -> CuResult<()> {
        let d = drv()?;
        if g.is_null() {
            return Err(invalid("hGraph is NULL"));
        }
        // Safety: the caller's contract (cuda.h): `n` of each, or NULL.
        unsafe { super::graphs::default_edges(dependency_data, n)? };
        // Safety: as above.
        let deps = unsafe { super::graphs::deps(dependencies, n)? };
        d.begin_capture_to_graph(stream_key(s), graph_key(g), &deps, mode)
    }

    unsafe fn cuStreamBeginCapture(s: CUstream) -> CuResult<()> {
        Self::cuStreamBeginCapture_v2(super::per_thread(s), capture::MODE_GLOBAL)
    }

    unsafe fn cuStreamBeginCapture_ptsz(s: CUstream) -> CuResult<()> {
        // NULL is the calling thread's default stream here, as in every `_ptsz` export.
        Self::cuStreamBeginCapture_v2(super::per_thread(s), capture::MODE_GLOBAL)
    }

    unsafe fn cuStreamEndCapture(s: CUstream, ph: *mut CUgraph) -> CuResult<()> {
        let d = drv()?;
        if ph.is_null() {
            return Err(invalid("phGraph is NULL"));
        }
        // The graph, or NULL when the capture failed (as cuda.h says).
        let r = d.end_capture(stream_key(s));
        out(
            ph,
            r.as_ref().map_or(std::ptr::null_mut(), |g| *g as CUgraph),
        )?;
        r.map(|_| ())
    }

    unsafe fn cuStreamIsCapturing(s: CUstream, status: *mut CUstreamCaptureStatus) -> CuResult<()> {
        let info = drv()?.capture_info(stream_key(s))?;
        out(status, info.status)
    }

    unsafe fn cuStreamGetCaptureInfo(
        s: CUstream,
        status: *mut CUstreamCaptureStatus,
        id: *mut cuuint64_t,
    ) -> CuResult<()> {
        Self::cuStreamGetCaptureInfo_v3(
            s,
            status,
            id,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    }

    unsafe fn cuStreamGetCaptureInfo_v2(
        s: CUstream,
        status: *mut CUstreamCaptureStatus,
        id: *mut cuuint64_t,
        graph: *mut CUgraph,
        deps: *mut *const CUgraphNode,
        n: *mut usize,
    ) -> CuResult<()> {
        Self::cuStreamGetCaptureInfo_v3(s, status, id, graph, deps, std::ptr::null_mut(), n)
    }

    unsafe fn cuStreamGetCaptureInfo_v3(
        s: CUstream,
        status: *mut CUstreamCaptureStatus,
        id: *mut cuuint64_t,
        graph: *mut CUgraph,
        deps: *mut *const CUgraphNode,
        edges: *mut *const CUgraphEdgeData,
        n: *mut usize,
    ) -> CuResult<()> {
        let d = drv()?;
        if status.is_null() {
            return Err(invalid("captureStatus_out is NULL"));
        }
        if !edges.is_null() && deps.is_null() {
            return Err(invalid("edgeData_out needs dependencies_out"));
        }
        let info: CaptureInfo = d.capture_info(stream_key(s))?;
        out(status, info.status)?;
        // The rest only describes an active or invalidated capture.
        if info.status == capture::STATUS_NONE {
            return Ok(());
        }
        if !id.is_null() {
            out(id, info.id)?;
        }
        if !graph.is_null() {
            out(graph, info.graph as CUgraph)?;
        }
        if !deps.is_null() {
            out(deps, info.deps as *const CUgraphNode)?;
        }
        if !edges.is_null() {
            out(edges, info.edges as *const CUgraphEdgeData)?;
        }
        if !n.is_null() {
            out(n, info.count)?;
        }
        Ok(())
    }

    unsafe fn cuThreadExchangeStreamCaptureMode(mode: *mut CUstreamCaptureMode) -> CuResult<()> {
        drv()?;
        let new = crate::boundary::input(mode.cast_const(), "mode")?;
        out(mode, capture::exchange_thread_mode(new)?)
    }

    unsafe fn cuStreamUpdateCaptureDependencies_v2(
        s: CUstream,
        deps: *mut CUgraphNode,
        edge_data: *const CUgraphEdgeData,
        n: usize,
        flags: c_uint,
    ) -> CuResult<()> {
        // Safety: cuda.h: NULL or `n` entries.
        unsafe { super::graphs::default_edges(edge_data, n)? };
        Self::cuStreamUpdateCaptureDependencies(s, deps, n, flags)
    }

    unsafe fn cuStreamUpdateCaptureDependencies(
        s: CUstream,
        deps: *mut CUgraphNode,
        n: usize,
        flags: c_uint,
    ) -> CuResult<()> {
        let d = drv()?;
        // CU_STREAM_ADD_CAPTURE_DEPENDENCIES (0) or CU_STREAM_SET_CAPTURE_DEPENDENCIES (1).
        if flags > 1 {
            return Err(invalid(format!(
                "flags {flags:#x} are not CU_STREAM_*_CAPTURE_DEPENDENCIES"
            )));
        }
        if n > 0 && deps.is_null() {
            return Err(invalid("dependencies is NULL"));
        }
        let nodes: Vec<u64> = if n == 0 {
            Vec::new()
        } else {
            // Safety: `dependencies` holds n node handles (cuda.h).
            std::slice::from_raw_parts(deps, n)
                .iter()
                .map(|p| *p as u64)
                .collect()
        };
        d.capture_update_dependencies(stream_key(s), &nodes, flags == 1)
    }
}
