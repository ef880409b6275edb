//! Streams, events and the context limits (the tables are in `context.rs`). Their work
//! runs in stream order on workers (`stream_queues.rs`); a synchronisation waits for it
//! without the state's lock, then reports a kernel's sticky fault, or marks the work in
//! flight as done.

use super::context;
use super::error::*;
use super::ids::{ContextId, EventId, StreamId};
use super::stream_queues::{self, Job, Order};
use super::Driver;

impl Driver {
    /// Writes the device printf output of the kernels that have ended to stdout, as a GPU
    /// empties its printf FIFO at the host's synchronising calls (cuCtxSynchronize,
    /// cuStreamSynchronize, cuEventSynchronize, a synchronous copy), before they report a
    /// kernel's fault. One buffer serves every context: a synchronisation prints what any
    /// kernel printed (a GPU prints only its context's). Not emulated: the flushes CUDA
    /// also makes at a launch, a module load or unload and a context's destruction.
    pub(super) fn flush_printf(&self) {
        let (out, err) = {
            let mut st = self.state.lock();
            (
                std::mem::take(&mut st.printf_out),
                std::mem::take(&mut st.printf_err),
            )
        };
        if !out.is_empty() {
            crate::os::write_c_stdout(&out);
        }
        // A failed assert's message goes to stderr, as the H200 prints it.
        if !err.is_empty() {
            use std::io::Write;
            let _ = std::io::stderr().write_all(&err);
        }
    }

    /// After cuStreamSynchronize, cuEventSynchronize, cuCtxSynchronize have waited: the
    /// work in flight is done.
    pub(super) fn synchronized(&self) {
        let mut st = self.state.lock();
        st.vmm.synchronized();
        // Memory pools above their release threshold give memory back (as at
        // cuCtxSynchronize).
        st.release_pool_memory();
    }

    /// How `stream` orders its work against the legacy default stream (from its flags).
    pub fn stream_order(&self, stream: StreamId) -> CuResult<Order> {
        if stream == StreamId::NULL || stream == StreamId::LEGACY {
            return Ok(Order::Legacy);
        }
        if stream == StreamId::PER_THREAD {
            return Ok(Order::Blocking);
        }
        let st = self.state.lock();
        let (_, props) = st.contexts.stream(stream)?;
        Ok(if props.flags & 1 != 0 {
            Order::NonBlocking
        } else {
            Order::Blocking
        })
    }

    /// Queues device work on a live stream: it runs after the work it must follow.
    /// `what` names the work in ordering-bug reports.
    pub fn enqueue_work(&self, stream: StreamId, what: &str, job: Job) -> CuResult<()> {
        let order = self.stream_order(stream)?;
        self.capture_check_legacy(stream)?;
        stream_queues::enqueue(stream, order, what, job).map_err(|e| {
            CuError::new(
                cumock_abi::result::CUDA_ERROR_OUT_OF_MEMORY,
                format!("no thread for the stream's work: {e}"),
            )
        })
    }

    /// Waits for what a synchronisation of `stream` covers (cuStreamSynchronize).
    pub fn drain_stream(&self, stream: StreamId) -> CuResult<()> {
        let order = self.stream_order(stream)?;
        stream_queues::blocking_sync(self.blocking_sync(None), || {
            stream_queues::drain(stream, order)
        });
        stream_queues::seen_done(stream, order);
        self.settle_host_writes();
        Ok(())
    }

    /// Waits for the work that work issued now on `stream` in the calling thread (a copy,
    /// a memset) must follow: for a blocking stream, the legacy stream's too.
    pub fn follow_stream(&self, stream: StreamId) -> CuResult<()> {
        let order = self.stream_order(stream)?;
        stream_queues::blocking_sync(self.blocking_sync(None), || {
            stream_queues::follow(stream, order)
        });
        Ok(())
    }

    pub fn stream_create(&self, flags: u32) -> CuResult<StreamId> {
        self.stream_create_with_priority(flags, 0)
    }

    pub fn stream_create_with_priority(&self, flags: u32, priority: i32) -> CuResult<StreamId> {
        if flags > 1 {
            return Err(invalid(format!(
                "stream flags {flags} are not CU_STREAM_DEFAULT or CU_STREAM_NON_BLOCKING"
            )));
        }
        let mut st = self.state.lock();
        let (cur, c) = st.contexts.require_current()?;
        self.check_sticky(&st, c.device)?;
        let priority = priority.clamp(
            context::STREAM_PRIORITY_GREATEST,
            context::STREAM_PRIORITY_LEAST,
        );
        Ok(st
            .contexts
            .create_stream(cur, context::StreamProps { flags, priority }))
    }

    /// cuCtxGetLimit / cuCtxSetLimit on the current context.
    pub fn ctx_limit(&self, limit: i32, set: Option<u64>) -> CuResult<u64> {
        let mut st = self.state.lock();
        let (ctx, _) = st.contexts.require_current()?;
        let default = usize::try_from(limit)
            .ok()
            .and_then(|i| context::DEFAULT_LIMITS.get(i))
            .ok_or_else(|| invalid(format!("{limit} is not a CUlimit")))?
            .ok_or_else(|| {
                CuError::new(
                    cumock_abi::result::CUDA_ERROR_UNSUPPORTED_LIMIT,
                    format!("limit {limit} is not supported on this device"),
                )
            })?;
        // cuda.h: CU_LIMIT_SHMEM_SIZE "can only be queried, cannot be set".
        const SHMEM_SIZE: i32 = 7;
        if set.is_some() && limit == SHMEM_SIZE {
            return Err(invalid(
                "CU_LIMIT_SHMEM_SIZE can only be queried, not set (cuda.h)",
            ));
        }
        if let Some(v) = set {
            if limit == super::module::LIMIT_MALLOC_HEAP_SIZE && st.modules.heaps.contains_key(&ctx)
            {
                // cuCtxSetLimit's documentation: "Setting CU_LIMIT_MALLOC_HEAP_SIZE must be
                // performed before launching any kernel that uses the malloc() or free()
                // device system calls, otherwise CUDA_ERROR_INVALID_VALUE will be returned."
                return Err(invalid(
                    "CU_LIMIT_MALLOC_HEAP_SIZE cannot change after a kernel using malloc or free \
                     was launched in the context (its heap is allocated then)",
                ));
            }
            st.contexts.set_limit(ctx, limit, v);
            st.launch_epoch += 1;
        }
        Ok(st.contexts.limit(ctx, limit).unwrap_or(default))
    }

    /// A stream's context, device and properties (cuStreamGetCtx, GetDevice, GetFlags,
    /// GetPriority).
    pub fn stream_info(
        &self,
        stream: StreamId,
    ) -> CuResult<(ContextId, usize, context::StreamProps)> {
        let st = self.state.lock();
        let (ctx, props) = st.contexts.stream(stream)?;
        Ok((ctx, st.contexts.get(ctx)?.device, props))
    }

    /// cuStreamGetId: the id the H200's numbering gives `stream` (see `StreamNumbers`).
    pub fn stream_number(&self, stream: StreamId) -> CuResult<u64> {
        let mut st = self.state.lock();
        let (ctx, _) = st.contexts.stream(stream)?;
        Ok(st.contexts.stream_number(stream, ctx))
    }

    pub fn stream_check(&self, stream: StreamId) -> CuResult<()> {
        self.state.lock().contexts.check_stream(stream)
    }

    pub fn stream_destroy(&self, stream: StreamId) -> CuResult<()> {
        self.check_sticky_current()?;
        self.state.lock().contexts.destroy_stream(stream)
    }

    /// The sticky error of the current context's device, if a kernel faulted there (streams
    /// and events report it as the H200 does: probe fault-stream-sync).
    pub(super) fn check_sticky_current(&self) -> CuResult<()> {
        let st = self.state.lock();
        match st.contexts.require_current() {
            Ok((_, c)) => self.check_sticky(&st, c.device),
            Err(_) => Ok(()),
        }
    }

    /// cuStreamSynchronize: a current context and a live stream are needed; then, once its
    /// work has run, the device's sticky error is reported, or the work marked as done.
    pub fn stream_synchronize(&self, stream: StreamId) -> CuResult<()> {
        self.ctx_device(None)?;
        self.stream_check(stream)?;
        self.capture_refuse(stream, "cuStreamSynchronize")?;
        self.drain_stream(stream)?;
        self.flush_printf();
        self.check_sticky_current()?;
        self.synchronized();
        Ok(())
    }

    /// cuStreamQuery: CUDA_ERROR_NOT_READY while the stream's work has not all run (a
    /// kernel's fault reaches the host only once it has), else as cuStreamSynchronize
    /// without marking anything.
    pub fn stream_query(&self, stream: StreamId) -> CuResult<()> {
        self.ctx_device(None)?;
        self.stream_check(stream)?;
        self.capture_refuse(stream, "cuStreamQuery")?;
        let order = self.stream_order(stream)?;
        if stream_queues::pending(stream, order) {
            return Err(CuError::new(
                cumock_abi::result::CUDA_ERROR_NOT_READY,
                "work queued on the stream has not all run",
            ));
        }
        stream_queues::seen_done(stream, order);
        self.settle_host_writes();
        self.check_sticky_current()?;
        Ok(())
    }

    /// cuEventSynchronize: a live event; once the work before its record has run, the
    /// sticky error or the work marked as done.
    pub fn event_synchronize(&self, event: EventId) -> CuResult<()> {
        self.event_check(event)?;
        if let Some(m) = stream_queues::event_pending(event) {
            stream_queues::blocking_sync(self.blocking_sync(Some(event)), || m.wait());
        }
        self.flush_printf();
        super::ordering::event_done(event);
        self.settle_host_writes();
        self.check_sticky_current()?;
        self.synchronized();
        Ok(())
    }

    pub fn event_create(&self, flags: u32) -> CuResult<EventId> {
        if flags & !0xF != 0 {
            return Err(invalid(format!("event flags {flags:#x} have unknown bits")));
        }
        let mut st = self.state.lock();
        let device = st.contexts.require_current()?.1.device;
        self.check_sticky(&st, device)?;
        // CU_EVENT_DISABLE_TIMING, CU_EVENT_BLOCKING_SYNC.
        Ok(st.contexts.create_event(flags & 0x2 == 0, flags & 0x1 != 0))
    }

    /// cuEventRecord: the event takes its time, and completes, when the stream's work
    /// before it has run.
    pub fn event_record(&'static self, event: EventId, stream: StreamId) -> CuResult<()> {
        {
            let mut st = self.state.lock();
            st.contexts.check_stream(stream)?;
            st.contexts.event(event)?;
            st.captures.recorded_outside(event);
        }
        let order = self.stream_order(stream)?;
        let stamp = Box::new(move || {
            // Destroyed meanwhile: nothing to stamp.
            if let Ok(t) = self.state.lock().contexts.event(event) {
                *t = Some(std::time::Instant::now());
            }
        });
        stream_queues::record(event, stream, order, stamp).map_err(|e| {
            CuError::new(
                cumock_abi::result::CUDA_ERROR_OUT_OF_MEMORY,
                format!("no thread for the stream's work: {e}"),
            )
        })?;
        // Another process waits on an interprocess event through an event of its own
        // that is complete at once (cuIpcOpenEventHandle): it learns of a record only by
        // the programs' own messages after this call, so the record returns once the
        // work before it has run (cuda-samples simpleIPC: a sibling's kernel ran over
        // the buffer this process wrote, its wait on the event not waiting). The GPU
        // returns at once; only the time differs.
        if self.state.lock().ipc.is_interprocess(event) {
            if let Some(m) = stream_queues::event_pending(event) {
                m.wait();
            }
        }
        Ok(())
    }

    /// The context a cuCtx*Event call names, live (NULL is refused at the export, as the
    /// H200 does: case ctx-events, probe api_gaps2).
    fn event_ctx(&self, ctx: ContextId) -> CuResult<ContextId> {
        self.state.lock().contexts.get(ctx).map(|_| ctx)
    }

    /// cuCtxRecordEvent: the event completes, and takes its time, once the work queued so
    /// far on every stream of the context has run (stream_queues::record_all).
    pub fn ctx_record_event(&'static self, ctx: ContextId, event: EventId) -> CuResult<()> {
        let ctx = self.event_ctx(ctx)?;
        let streams = {
            let mut st = self.state.lock();
            st.contexts.event(event)?;
            if !st
                .contexts
                .event_context(event)
                .is_some_and(|e| st.same_primary(e, ctx))
            {
                return Err(invalid_handle(format!(
                    "event {:#x} was not created in context {:#x} (cuda.h: they must be of \
                     the same context)",
                    event.handle(),
                    ctx.handle()
                )));
            }
            self.check_sticky(&st, st.contexts.get(ctx)?.device)?;
            st.streams_recorded_by(ctx)
        };
        self.capture_check_context(ctx, None, "cuCtxRecordEvent")?;
        self.state.lock().captures.recorded_outside(event);
        let stamp = Box::new(move || {
            // Destroyed meanwhile: nothing to stamp.
            if let Ok(t) = self.state.lock().contexts.event(event) {
                *t = Some(std::time::Instant::now());
            }
        });
        stream_queues::record_all(event, |s| streams.contains(&s), stamp).map_err(|e| {
            CuError::new(
                cumock_abi::result::CUDA_ERROR_OUT_OF_MEMORY,
                format!("no thread for the stream's work: {e}"),
            )
        })
    }

    /// cuCtxWaitEvent: the context's later work, on every stream of it (and streams made
    /// later), waits for what the event stands for; the event may be of another context
    /// or device.
    pub fn ctx_wait_event(&self, ctx: ContextId, event: EventId) -> CuResult<()> {
        let ctx = self.event_ctx(ctx)?;
        let streams = {
            let mut st = self.state.lock();
            st.contexts.event(event)?;
            self.check_sticky(&st, st.contexts.get(ctx)?.device)?;
            st.contexts.streams_of(ctx)
        };
        self.capture_check_context(ctx, Some(event), "cuCtxWaitEvent")?;
        let pending = stream_queues::event_pending(event);
        for (key, order) in stream_queues::wait_all(|s| streams.contains(&s), pending) {
            super::ordering::stream_waited(key, order, event);
        }
        Ok(())
    }

    pub fn event_check(&self, event: EventId) -> CuResult<()> {
        self.state.lock().contexts.event(event).map(|_| ())
    }

    pub fn event_destroy(&self, event: EventId) -> CuResult<()> {
        let mut st = self.state.lock();
        st.contexts.event(event)?;
        st.contexts.destroy_event(event);
        st.ipc.forget_event(event);
        st.captures.forget_event(event);
        Ok(())
    }

    pub fn event_elapsed_ms(&self, start: EventId, end: EventId) -> CuResult<f32> {
        let mut st = self.state.lock();
        for e in [start, end] {
            st.contexts.event(e)?;
            st.captures
                .check_event(e, super::capture::EventUse::Reads)?;
            if stream_queues::event_pending(e).is_some() {
                return Err(CuError::new(
                    cumock_abi::result::CUDA_ERROR_NOT_READY,
                    format!("event {:#x} has not been reached yet", e.handle()),
                ));
            }
        }
        for e in [start, end] {
            st.contexts.event(e)?;
            if !st.contexts.is_timed(e) {
                // As the H200 answers (seen by cumock's runtime's programs).
                return Err(invalid_handle(format!(
                    "event {:#x} was created with CU_EVENT_DISABLE_TIMING",
                    e.handle()
                )));
            }
        }
        let a = (*st.contexts.event(start)?)
            .ok_or_else(|| invalid_handle("the start event was never recorded"))?;
        let b = (*st.contexts.event(end)?)
            .ok_or_else(|| invalid_handle("the end event was never recorded"))?;
        // Signed: an end recorded before the start gives a negative time, as on a GPU.
        Ok(match b.checked_duration_since(a) {
            Some(d) => d.as_secs_f32() * 1000.0,
            None => -(a.duration_since(b).as_secs_f32() * 1000.0),
        })
    }
}
