//! Contexts (primary and created), the per-thread current-context stack, streams and
//! events. The mock runs every operation synchronously, so streams and events only need
//! to exist, belong to a context, and be checked. Below the tables, the driver's calls on
//! contexts (primary contexts, cuCtx*, peer access); those on streams and events are in
//! `streams.rs`.

use super::error::*;
use super::ids::{ContextId, EventId, StreamId};
use super::vmm::ReservationKind;
use super::{Driver, State};
use cumock_abi::consts::*;
use std::cell::RefCell;
use std::mem::ManuallyDrop;
// Ids the mock hands out as keys: Fx hashing, not SipHash (a launch looks up several).
use rustc_hash::FxHashMap as HashMap;
use std::time::Instant;

const CONTEXT_TAG: u64 = 0x00c7_0000_0000_0000;
const STREAM_TAG: u64 = 0x005e_0000_0000_0000;
const EVENT_TAG: u64 = 0x00e7_0000_0000_0000;

#[derive(Debug, Clone)]
pub struct Context {
    pub device: usize,
    pub flags: u32,
    pub primary: bool,
    pub peers: Vec<usize>,
    /// cuCtxSetCacheConfig's CUfunc_cache, read back by cuCtxGetCacheConfig: a
    /// preference that changes nothing the program can see (PREFER_NONE at creation).
    pub cache_config: i32,
    /// cuCtxAttach's count, which cuCtxDetach takes back (`Driver::ctx_detach`).
    pub attached: u32,
}

/// cuCtxGetLimit's answers on the H200 before any cuCtxSetLimit (probe context-limits),
/// by `CUlimit`; `None`: CUDA_ERROR_UNSUPPORTED_LIMIT there.
pub const DEFAULT_LIMITS: [Option<u64>; 8] = [
    Some(1024),     // STACK_SIZE
    Some(8650752),  // PRINTF_FIFO_SIZE
    Some(8388608),  // MALLOC_HEAP_SIZE
    None,           // DEV_RUNTIME_SYNC_DEPTH
    Some(2048),     // DEV_RUNTIME_PENDING_LAUNCH_COUNT
    Some(64),       // MAX_L2_FETCH_GRANULARITY
    Some(11796480), // PERSISTING_L2_CACHE_SIZE
    // SHMEM_SIZE ("a CIG context's"; query only): on the H200's ordinary context, the
    // device's shared memory per block opt-in (runtime program device_runtime_calls,
    // host and device alike).
    Some(232448),
];

/// What cuStreamGetFlags and cuStreamGetPriority report.
#[derive(Debug, Default, Clone, Copy)]
pub struct StreamProps {
    pub flags: u32,
    pub priority: i32,
}

/// The stream priorities of the H200 (cuCtxGetStreamPriorityRange): 0 the lowest, -5 the
/// highest; a priority outside is clamped into it, as cuda.h documents.
pub const STREAM_PRIORITY_LEAST: i32 = 0;
pub const STREAM_PRIORITY_GREATEST: i32 = -5;

#[derive(Debug, Default, Clone)]
pub struct PrimaryContext {
    pub context: Option<ContextId>,
    pub refcount: u32,
    pub flags: u32,
}

#[derive(Debug, Default)]
pub struct Contexts {
    contexts: HashMap<ContextId, Context>,
    primary: Vec<PrimaryContext>,
    next_id: u64,
    streams: HashMap<StreamId, ContextId>,
    /// The ids cuStreamGetId reports.
    stream_numbers: StreamNumbers,
    /// Limits set with cuCtxSetLimit, per context.
    limits: HashMap<(ContextId, i32), u64>,
    /// The flags and priority each stream was created with.
    stream_props: HashMap<StreamId, StreamProps>,
    /// Attributes set with cuStreamSetAttribute, by context and stream (a default stream
    /// is each context's own; NULL is the legacy stream). Unset: the defaults.
    stream_attrs: HashMap<(ContextId, StreamId), super::stream_attrs::StreamAttrs>,
    /// Priorities set on a context's default streams (a created stream's is in its props).
    default_priorities: HashMap<(ContextId, StreamId), i32>,
    events: HashMap<EventId, Option<Instant>>,
    /// Events created with CU_EVENT_DISABLE_TIMING: cuEventElapsedTime refuses them.
    untimed_events: std::collections::HashSet<EventId>,
    /// Events created with CU_EVENT_BLOCKING_SYNC: cuEventSynchronize sleeps at once.
    blocking_events: std::collections::HashSet<EventId>,
    /// The context each event was created in (cuCtxRecordEvent wants the same).
    event_contexts: HashMap<EventId, ContextId>,
    /// Contexts destroyed (handles are never reused): cuCtxGetDevResource tells them from
    /// handles never given (CUDA_ERROR_CONTEXT_IS_DESTROYED, probe green_contexts).
    destroyed: std::collections::HashSet<ContextId>,
    /// Destroyed green contexts' contexts, whose handles linger (probe green_contexts,
    /// destroy): they stay on the stacks they were on, cuCtxPushCurrent takes them, and
    /// a call in them fails with CUDA_ERROR_CONTEXT_IS_DESTROYED.
    lingering: std::collections::HashSet<ContextId>,
    /// Contexts that have no per-thread default stream: green contexts' (see
    /// `check_stream`).
    without_per_thread: std::collections::HashSet<ContextId>,
    /// Streams whose context was destroyed under them: green contexts' (see
    /// `check_stream`). Handles are never reused, so they are never forgotten.
    stranded: std::collections::HashSet<StreamId>,
}

/// A stream as its attributes are kept: NULL is the legacy default stream. (The
/// per-thread default stream's attributes are shared by the context's threads.)
fn attrs_key(stream: StreamId) -> StreamId {
    if stream == StreamId::NULL {
        StreamId::LEGACY
    } else {
        stream
    }
}

thread_local! {
    /// The calling thread's context stack; its top is the current context. Stale entries
    /// (destroyed on another thread) are detected by lookup. Without a destructor: glibc's
    /// exit() runs the main thread's thread-local destructors before the program's exit
    /// handlers and static destructors, and those still have the thread's current
    /// context on NVIDIA's driver (a global object freeing device memory at exit).
    /// `StackRelease` gives the buffer back when any other thread ends.
    static STACK: ManuallyDrop<RefCell<Vec<ContextId>>> =
        const { ManuallyDrop::new(RefCell::new(Vec::new())) };
    static STACK_RELEASE: StackRelease = const { StackRelease };
}

/// Empties the thread's context stack when the thread ends, unless it is the main thread,
/// whose stack the process's exit handlers may still use (see `STACK`).
struct StackRelease;

impl Drop for StackRelease {
    fn drop(&mut self) {
        // Safety: getpid and gettid take no arguments and cannot fail.
        let main = unsafe { libc::getpid() as libc::c_long == libc::syscall(libc::SYS_gettid) };
        if !main {
            let _ = STACK.try_with(|s| std::mem::take(&mut *s.borrow_mut()));
        }
    }
}

/// The thread's stack grows: make sure its buffer is given back when the thread ends.
fn arm_stack_release() {
    let _ = STACK_RELEASE.try_with(|_| ());
}

impl Contexts {
    pub fn new(devices: usize) -> Self {
        Self {
            primary: vec![PrimaryContext::default(); devices],
            next_id: 1,
            ..Default::default()
        }
    }

    fn fresh(&mut self, tag: u64) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        tag | id
    }

    pub fn create(&mut self, device: usize, flags: u32, primary: bool) -> ContextId {
        let h = ContextId::from_handle(self.fresh(CONTEXT_TAG));
        self.stream_numbers.context_created(h);
        self.contexts.insert(
            h,
            Context {
                device,
                flags,
                primary,
                peers: Vec::new(),
                cache_config: 0,
                attached: 0,
            },
        );
        h
    }

    /// The flags of `device`'s primary context (cuDevicePrimaryCtxSetFlags').
    pub fn primary_flags(&self, device: usize) -> u32 {
        self.primary[device].flags
    }

    /// `device`'s primary context, while it lives.
    pub fn primary_context(&self, device: usize) -> Option<ContextId> {
        self.primary[device]
            .context
            .filter(|c| self.contexts.contains_key(c))
    }

    /// Brings a primary context back under its old handle after its last release.
    pub fn revive(&mut self, ctx: ContextId, device: usize, flags: u32) -> ContextId {
        self.contexts.insert(
            ctx,
            Context {
                device,
                flags,
                primary: true,
                peers: Vec::new(),
                cache_config: 0,
                attached: 0,
            },
        );
        ctx
    }

    pub fn get(&self, ctx: ContextId) -> CuResult<&Context> {
        self.contexts
            .get(&ctx)
            .ok_or_else(|| invalid_context(format!("{:#x} is not a live context", ctx.handle())))
    }

    pub fn context_mut(&mut self, ctx: ContextId) -> CuResult<&mut Context> {
        self.contexts
            .get_mut(&ctx)
            .ok_or_else(|| invalid_context(format!("{:#x} is not a live context", ctx.handle())))
    }

    /// The calling thread's current context, if it has one.
    pub fn current(&self) -> Option<ContextId> {
        // During thread teardown the stack may be gone already (a program releasing its
        // context from a destructor at exit): there is then no current context.
        STACK
            .try_with(|s| s.borrow().last().copied())
            .ok()
            .flatten()
    }

    /// The current context and its device, or CUDA_ERROR_INVALID_CONTEXT
    /// (CUDA_ERROR_CONTEXT_IS_DESTROYED for a lingering one).
    pub fn require_current(&self) -> CuResult<(ContextId, &Context)> {
        let Some(c) = self.current() else {
            // The H200's words (its error log, probe api_gaps3 logs-callback).
            return Err(invalid_context(
                "No CUDA context is current to the calling thread",
            ));
        };
        self.check_lingering(c)?;
        Ok((c, self.get(c)?))
    }

    fn check_lingering(&self, ctx: ContextId) -> CuResult<()> {
        if self.lingering.contains(&ctx) {
            return Err(CuError::new(
                cumock_abi::result::CUDA_ERROR_CONTEXT_IS_DESTROYED,
                format!(
                    "the current context {:#x} is a destroyed green context's",
                    ctx.handle()
                ),
            ));
        }
        Ok(())
    }

    /// Fails where the current context is a destroyed green context's: calls that need no
    /// context still refuse to run in one (probe green_contexts, destroy:
    /// cuMemGetAddressRange and cuMemFree).
    pub fn check_current_alive(&self) -> CuResult<()> {
        self.current().map_or(Ok(()), |c| self.check_lingering(c))
    }

    /// Whether `ctx` was a context, destroyed since.
    pub fn is_destroyed(&self, ctx: ContextId) -> bool {
        self.destroyed.contains(&ctx)
    }

    /// Keeps `ctx`'s handle usable as a current context once it is destroyed.
    pub fn linger(&mut self, ctx: ContextId) {
        self.lingering.insert(ctx);
    }

    /// A stream handle that names no stream, nor ever will.
    pub fn unused_stream_handle(&mut self) -> StreamId {
        StreamId::from_handle(self.fresh(STREAM_TAG))
    }

    /// A live context, or a lingering one (which may be made current).
    fn get_or_lingering(&self, ctx: ContextId) -> CuResult<()> {
        if !self.lingering.contains(&ctx) {
            self.get(ctx)?;
        }
        Ok(())
    }

    pub fn set_current(&self, ctx: Option<ContextId>) -> CuResult<()> {
        if let Some(c) = ctx {
            self.get_or_lingering(c)?;
        }
        arm_stack_release();
        STACK
            .try_with(|s| {
                let mut s = s.borrow_mut();
                s.pop();
                if let Some(c) = ctx {
                    s.push(c);
                }
            })
            .map_err(|_| invalid_context("the calling thread is exiting"))
    }

    pub fn push(&self, ctx: ContextId) -> CuResult<()> {
        self.get_or_lingering(ctx)?;
        arm_stack_release();
        STACK
            .try_with(|s| s.borrow_mut().push(ctx))
            .map_err(|_| invalid_context("the calling thread is exiting"))
    }

    pub fn pop(&self) -> CuResult<ContextId> {
        let top = STACK.try_with(|s| s.borrow_mut().pop()).ok().flatten();
        top.ok_or_else(|| invalid_context("the context stack is empty"))
    }

    /// Destroys a context: it leaves this thread's stack, and the handles of its streams
    /// and events die with it.
    pub fn destroy(&mut self, ctx: ContextId) -> CuResult<Context> {
        let c = self.contexts.remove(&ctx).ok_or_else(|| {
            invalid_context(format!(
                "{:#x} is not a live context (destroyed twice?)",
                ctx.handle()
            ))
        })?;
        self.destroyed.insert(ctx);
        if !self.lingering.contains(&ctx) {
            let _ = STACK.try_with(|s| s.borrow_mut().retain(|x| *x != ctx));
        }
        self.streams.retain(|_, owner| *owner != ctx);
        self.stream_numbers.context_destroyed(ctx);
        self.stream_attrs.retain(|(owner, _), _| *owner != ctx);
        self.default_priorities
            .retain(|(owner, _), _| *owner != ctx);
        Ok(c)
    }

    pub fn create_stream(&mut self, ctx: ContextId, props: StreamProps) -> StreamId {
        let h = StreamId::from_handle(self.fresh(STREAM_TAG));
        self.streams.insert(h, ctx);
        self.stream_props.insert(h, props);
        self.stream_numbers.stream_created(h);
        h
    }

    /// What cuStreamGetId reports of `stream`, a stream of `ctx` (the current context for
    /// the default streams).
    pub fn stream_number(&mut self, stream: StreamId, ctx: ContextId) -> u64 {
        self.stream_numbers.number(stream, ctx)
    }

    /// A stream's context (the current one for the default streams) and properties.
    pub fn stream(&self, stream: StreamId) -> CuResult<(ContextId, StreamProps)> {
        self.check_stream(stream)?;
        match self.streams.get(&stream) {
            Some(&ctx) => Ok((
                ctx,
                self.stream_props.get(&stream).copied().unwrap_or_default(),
            )),
            None => {
                let ctx = self.require_current()?.0;
                let priority = self
                    .default_priorities
                    .get(&(ctx, attrs_key(stream)))
                    .copied()
                    .unwrap_or_default();
                Ok((
                    ctx,
                    StreamProps {
                        priority,
                        ..StreamProps::default()
                    },
                ))
            }
        }
    }

    /// The attributes of `stream` of context `ctx` (cuStreamGetAttribute).
    pub fn stream_attrs(
        &self,
        ctx: ContextId,
        stream: StreamId,
    ) -> super::stream_attrs::StreamAttrs {
        self.stream_attrs
            .get(&(ctx, attrs_key(stream)))
            .copied()
            .unwrap_or_default()
    }

    /// Sets the attributes and priority of `stream` (a live stream of `ctx`).
    pub fn set_stream_attrs(
        &mut self,
        ctx: ContextId,
        stream: StreamId,
        attrs: super::stream_attrs::StreamAttrs,
        priority: i32,
    ) {
        let key = attrs_key(stream);
        self.stream_attrs.insert((ctx, key), attrs);
        match self.stream_props.get_mut(&stream) {
            Some(props) => props.priority = priority,
            None => {
                self.default_priorities.insert((ctx, key), priority);
            }
        }
    }

    /// Checks a stream handle: 0 and the special default streams exist, except
    /// CU_STREAM_PER_THREAD where the current context has none. This is where every call
    /// taking a stream decides what CU_STREAM_PER_THREAD is.
    pub fn check_stream(&self, stream: StreamId) -> CuResult<()> {
        // Probe green_contexts2 per-thread (and green_contexts create): with a green
        // context's context current, cuStreamGetGreenCtx, cuStreamGetCtx(_v2),
        // cuStreamQuery, cuStreamSynchronize and cuMemsetD8Async on it are all
        // CUDA_ERROR_INVALID_HANDLE, where CU_STREAM_LEGACY is accepted.
        if stream == StreamId::PER_THREAD
            && self
                .current()
                .is_some_and(|c| self.without_per_thread.contains(&c))
        {
            return Err(invalid_handle(
                "CU_STREAM_PER_THREAD: a green context's context has no per-thread default \
                 stream (use CU_STREAM_LEGACY or a stream of cuGreenCtxStreamCreate)",
            ));
        }
        if stream.is_default() || self.streams.contains_key(&stream) {
            return Ok(());
        }
        Err(self.dead_stream(stream))
    }

    /// Why `stream` names no live stream.
    fn dead_stream(&self, stream: StreamId) -> CuError {
        // Probe green_contexts2 streams: a green context's stream after cuGreenCtxDestroy
        // (cuStreamQuery, cuStreamSynchronize, cuStreamGetCtx, cuStreamDestroy).
        if self.stranded.contains(&stream) {
            return CuError::new(
                cumock_abi::result::CUDA_ERROR_CONTEXT_IS_DESTROYED,
                format!(
                    "stream {:#x}: its green context was destroyed",
                    stream.handle()
                ),
            );
        }
        invalid_handle(format!("{:#x} is not a live stream", stream.handle()))
    }

    /// Marks `ctx` as a green context's: no per-thread default stream.
    pub fn deny_per_thread(&mut self, ctx: ContextId) {
        self.without_per_thread.insert(ctx);
    }

    /// Before `ctx` is destroyed: its streams' handles are then CUDA_ERROR_CONTEXT_IS_DESTROYED.
    pub fn strand_streams(&mut self, ctx: ContextId) {
        let streams = self.streams_of(ctx);
        self.stranded.extend(streams);
    }

    pub fn destroy_stream(&mut self, stream: StreamId) -> CuResult<()> {
        self.stream_props.remove(&stream);
        self.stream_numbers.stream_destroyed(stream);
        self.stream_attrs.retain(|(_, s), _| *s != stream);
        self.streams
            .remove(&stream)
            .map(|_| ())
            .ok_or_else(|| self.dead_stream(stream))
    }

    pub fn create_event(&mut self, timing: bool, blocking: bool) -> EventId {
        let h = EventId::from_handle(self.fresh(EVENT_TAG));
        self.events.insert(h, None);
        if let Some(ctx) = self.current() {
            self.event_contexts.insert(h, ctx);
        }
        if !timing {
            self.untimed_events.insert(h);
        }
        if blocking {
            self.blocking_events.insert(h);
        }
        h
    }

    /// Whether `event` was created with CU_EVENT_BLOCKING_SYNC.
    pub fn is_blocking(&self, event: EventId) -> bool {
        self.blocking_events.contains(&event)
    }

    /// Forgets an event (the caller has checked that it lives).
    pub fn destroy_event(&mut self, event: EventId) {
        self.events.remove(&event);
        self.untimed_events.remove(&event);
        self.blocking_events.remove(&event);
        self.event_contexts.remove(&event);
    }

    /// The context `event` was created in.
    pub fn event_context(&self, event: EventId) -> Option<ContextId> {
        self.event_contexts.get(&event).copied()
    }

    /// The streams created in `ctx`.
    pub fn streams_of(&self, ctx: ContextId) -> std::collections::HashSet<StreamId> {
        self.streams
            .iter()
            .filter(|(_, owner)| **owner == ctx)
            .map(|(s, _)| *s)
            .collect()
    }

    /// Whether `event` was created without CU_EVENT_DISABLE_TIMING.
    pub fn is_timed(&self, event: EventId) -> bool {
        !self.untimed_events.contains(&event)
    }

    /// The value cuCtxSetLimit gave `limit` in `ctx`, if it did.
    pub fn limit(&self, ctx: ContextId, limit: i32) -> Option<u64> {
        self.limits.get(&(ctx, limit)).copied()
    }

    pub fn set_limit(&mut self, ctx: ContextId, limit: i32, value: u64) {
        self.limits.insert((ctx, limit), value);
    }

    pub fn event(&mut self, event: EventId) -> CuResult<&mut Option<Instant>> {
        self.events
            .get_mut(&event)
            .ok_or_else(|| invalid_handle(format!("{:#x} is not a live event", event.handle())))
    }
}

// ---- the driver's context calls (cuDevicePrimaryCtx*, cuCtx*, peer access) ----

impl Driver {
    pub fn primary_retain(&self, device: i32) -> CuResult<ContextId> {
        self.device(device)?;
        let mut st = self.state.lock();
        let d = device as usize;
        self.check_sticky(&st, d)?;
        let pc = st.contexts.primary[d].clone();
        let ctx = match pc.context {
            Some(c) if st.contexts.contexts.contains_key(&c) => c,
            // Observed: the primary context keeps its handle across release and reset.
            Some(c) => st.contexts.revive(c, d, pc.flags),
            None => {
                let c = st.contexts.create(d, pc.flags, true);
                st.contexts.primary[d].context = Some(c);
                c
            }
        };
        st.contexts.primary[d].refcount += 1;
        Ok(ctx)
    }

    pub fn primary_release(&self, device: i32) -> CuResult<()> {
        self.device(device)?;
        let mut st = self.state.lock();
        let d = device as usize;
        if st.contexts.primary[d].refcount == 0 {
            return Err(invalid_context(format!(
                "device {device}'s primary context is not retained"
            )));
        }
        st.contexts.primary[d].refcount -= 1;
        if st.contexts.primary[d].refcount == 0 {
            if let Some(c) = st.contexts.primary[d].context {
                Self::destroy_context(&mut st, c)?;
            }
        }
        Ok(())
    }

    pub fn primary_reset(&self, device: i32) -> CuResult<()> {
        self.device(device)?;
        let mut st = self.state.lock();
        let d = device as usize;
        st.contexts.primary[d].refcount = 0;
        st.contexts.primary[d].flags = 0;
        if let Some(c) = st.contexts.primary[d].context {
            if st.contexts.contexts.contains_key(&c) {
                Self::destroy_context(&mut st, c)?;
            }
        }
        Ok(())
    }

    pub fn primary_state(&self, device: i32) -> CuResult<(u32, bool)> {
        self.device(device)?;
        let st = self.state.lock();
        let pc = &st.contexts.primary[device as usize];
        Ok((pc.flags, pc.refcount > 0))
    }

    /// cuDevicePrimaryCtxSetFlags_v2, or with `only_inactive` its first version, which
    /// refuses an active context after checking the flags (the H200's order, probe
    /// api_gaps3 device-deprecated).
    pub fn primary_set_flags(&self, device: i32, flags: u32, only_inactive: bool) -> CuResult<()> {
        self.device(device)?;
        check_ctx_flags(flags)?;
        let mut st = self.state.lock();
        let d = device as usize;
        if only_inactive && st.contexts.primary[d].refcount > 0 {
            return Err(CuError::new(
                cumock_abi::result::CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE,
                "the primary context is active: cuDevicePrimaryCtxSetFlags (v1) sets only an \
                 inactive one's flags",
            ));
        }
        st.contexts.primary[d].flags = flags;
        if let Some(c) = st.contexts.primary[d].context {
            if let Some(ctx) = st.contexts.contexts.get_mut(&c) {
                ctx.flags = flags;
            }
        }
        Ok(())
    }

    pub fn ctx_create(&self, flags: u32, device: i32) -> CuResult<ContextId> {
        self.device(device)?;
        check_ctx_flags(flags)?;
        let mut st = self.state.lock();
        self.check_sticky(&st, device as usize)?;
        let c = st.contexts.create(device as usize, flags, false);
        st.contexts.push(c)?;
        Ok(c)
    }

    pub fn ctx_destroy(&self, ctx: ContextId) -> CuResult<()> {
        let mut st = self.state.lock();
        if st.contexts.get(ctx)?.primary {
            return Err(invalid_context(
                "a primary context is released with cuDevicePrimaryCtxRelease, not destroyed",
            ));
        }
        Self::destroy_context(&mut st, ctx)
    }

    pub(super) fn destroy_context(st: &mut State, ctx: ContextId) -> CuResult<()> {
        st.contexts.destroy(ctx)?;
        // Its modules go with it (their variables are cuMemAlloc memory of it, freed below);
        // so do executable graphs' prepared launches of them.
        st.modules.modules.retain(|_, m| m.context != ctx);
        st.launch_epoch += 1;
        // Its device heap is cuMemAlloc memory of it, freed below.
        if let Some(heap) = st.modules.heaps.remove(&ctx) {
            crate::diagnostics::driver_owned(heap.base(), false);
        }
        if let Some(pool) = st.modules.devrt_pools.remove(&ctx) {
            crate::diagnostics::driver_owned(pool.base(), false);
        }
        let modules = &st.modules.modules;
        st.modules
            .functions
            .retain(|_, f| modules.contains_key(&f.module));
        let functions = &st.modules.functions;
        st.modules.legacy.retain(|f, _| functions.contains_key(f));
        // cuMemAlloc memory dies with its context; VMM mappings do not (observed).
        let owned: Vec<u64> = st
            .vmm
            .reservations()
            .filter(
                |(_, r)| matches!(r.kind, ReservationKind::Alloc { context, .. } if context == ctx),
            )
            .map(|(b, _)| b)
            .collect();
        for b in owned {
            Self::free_alloc(&mut st.vmm, b)?;
        }
        Ok(())
    }

    pub fn ctx_set_current(&self, ctx: Option<ContextId>) -> CuResult<()> {
        self.state.lock().contexts.set_current(ctx)
    }

    /// cuCtxAttach (deprecated): the current context, its count of attachments raised.
    /// Flags are none (the H200: 1 is CUDA_ERROR_INVALID_VALUE, probe api_gaps3
    /// device-deprecated).
    pub fn ctx_attach(&self, flags: u32) -> CuResult<ContextId> {
        if flags != 0 {
            return Err(invalid(format!("cuCtxAttach flags {flags:#x}: must be 0")));
        }
        let mut st = self.state.lock();
        let (c, _) = st.contexts.require_current()?;
        st.contexts.context_mut(c)?.attached += 1;
        Ok(c)
    }

    /// cuCtxDetach (deprecated): an attachment taken back; a created context with none
    /// left is destroyed, as cuCtxDestroy does. Recorded on the H200 (probe api_gaps3,
    /// device-deprecated): a created context attached once survives one detach and not a
    /// second, and the primary context attached once survives its detach. Detaching a
    /// primary context never attached is not recorded.
    pub fn ctx_detach(&self, ctx: ContextId) -> CuResult<()> {
        let mut st = self.state.lock();
        let c = st.contexts.context_mut(ctx)?;
        if c.attached > 0 {
            c.attached -= 1;
            return Ok(());
        }
        if c.primary {
            return Err(super::error::not_supported(
                "cuCtxDetach of a primary context never attached is not emulated (the H200's \
                 answer is not recorded)",
            ));
        }
        Self::destroy_context(&mut st, ctx)
    }

    pub fn ctx_current(&self) -> Option<ContextId> {
        self.state.lock().contexts.current()
    }

    pub fn ctx_push(&self, ctx: ContextId) -> CuResult<()> {
        self.state.lock().contexts.push(ctx)
    }

    pub fn ctx_pop(&self) -> CuResult<ContextId> {
        self.state.lock().contexts.pop()
    }

    pub fn ctx_device(&self, ctx: Option<ContextId>) -> CuResult<usize> {
        let st = self.state.lock();
        match ctx {
            Some(c) => Ok(st.contexts.get(c)?.device),
            None => Ok(st.contexts.require_current()?.1.device),
        }
    }

    /// cuCtxGetFlags: the context's flags, with CU_CTX_MAP_HOST always among them (as the
    /// H200 reports: mapped host memory needs no flag under unified addressing; probe
    /// api_gaps, context-config).
    pub fn ctx_flags(&self) -> CuResult<u32> {
        Ok(self.state.lock().contexts.require_current()?.1.flags | CU_CTX_MAP_HOST)
    }

    /// cuCtxSetFlags: the current context's flags, overwritten (cuda.h), checked as
    /// cuCtxCreate's. Of a primary context's, only CU_CTX_SYNC_MEMOPS reaches its device's
    /// primary flags (cuDevicePrimaryCtxGetState on the H200: probe api_gaps,
    /// context-config; the scheduling and other bits stay what cuDevicePrimaryCtxSetFlags
    /// set).
    pub fn ctx_set_flags(&self, flags: u32) -> CuResult<()> {
        check_ctx_flags(flags)?;
        let mut st = self.state.lock();
        let (ctx, c) = st.contexts.require_current()?;
        let (device, primary) = (c.device, c.primary);
        if let Some(c) = st.contexts.contexts.get_mut(&ctx) {
            c.flags = flags;
        }
        if primary {
            let p = &mut st.contexts.primary[device].flags;
            *p = (*p & !CU_CTX_SYNC_MEMOPS) | (flags & CU_CTX_SYNC_MEMOPS);
        }
        Ok(())
    }

    /// cuCtxGetExecAffinity(CU_EXEC_AFFINITY_TYPE_SM_COUNT, the only type): the SMs the
    /// current context may use. The mock makes no context with limited SMs (cuCtxCreate_v3
    /// refuses affinity parameters), so it is every SM of the device. A green context's
    /// context has no affinity (probe green_contexts, create: CUDA_ERROR_INVALID_CONTEXT).
    pub fn ctx_exec_affinity_sm_count(&self, kind: i32) -> CuResult<u32> {
        check_exec_affinity_type(kind)?;
        if self.green_current().is_some() {
            return Err(invalid_context(
                "a green context's context has no execution affinity",
            ));
        }
        let device = self.ctx_device(None)?;
        Ok(self.device_attribute(device, 16 /* MULTIPROCESSOR_COUNT */, 132) as u32)
    }

    /// cuCtxGetCacheConfig: the current context's preference, as set.
    pub fn ctx_cache_config(&self) -> CuResult<i32> {
        Ok(self.state.lock().contexts.require_current()?.1.cache_config)
    }

    /// cuCtxSetCacheConfig: a CUfunc_cache, PREFER_NONE (0) to PREFER_EQUAL (3), kept for
    /// cuCtxGetCacheConfig; the mock has no L1 to split, as a device with a fixed split
    /// ignores it (cuda.h).
    pub fn ctx_set_cache_config(&self, config: i32) -> CuResult<()> {
        if !(0..=3).contains(&config) {
            return Err(invalid(format!(
                "{config} is not a CUfunc_cache (CU_FUNC_CACHE_PREFER_NONE 0 to PREFER_EQUAL 3)"
            )));
        }
        let mut st = self.state.lock();
        let (ctx, _) = st.contexts.require_current()?;
        if let Some(c) = st.contexts.contexts.get_mut(&ctx) {
            c.cache_config = config;
        }
        Ok(())
    }

    /// cuCtxSynchronize: waits for the work of every stream, whichever thread issued it
    /// (the state's lock is not held meanwhile), then reports a kernel's sticky fault.
    pub fn ctx_synchronize(&self, ctx: Option<ContextId>) -> CuResult<()> {
        let device = {
            let st = self.state.lock();
            match ctx {
                Some(c) => st.contexts.get(c)?.device,
                None => st.contexts.require_current()?.1.device,
            }
        };
        let blocking = self.blocking_sync(None);
        super::stream_queues::blocking_sync(blocking, super::stream_queues::drain_all);
        super::ordering::all_done();
        self.settle_host_writes();
        self.flush_printf();
        let mut st = self.state.lock();
        self.check_sticky(&st, device)?;
        st.vmm.synchronized();
        st.release_pool_memory();
        Ok(())
    }

    pub fn ctx_enable_peer_access(&self, peer: ContextId, flags: u32) -> CuResult<()> {
        if flags != 0 {
            return Err(invalid("flags must be 0"));
        }
        let mut st = self.state.lock();
        let (cur, c) = st.contexts.require_current()?;
        let me = c.device;
        let other = st
            .contexts
            .get(peer)
            .map_err(|_| invalid_context(format!("{:#x} is not a live context", peer.handle())))?
            .device;
        if !self.profile.can_access_peer(me, other) {
            return Err(CuError::new(
                cumock_abi::result::CUDA_ERROR_PEER_ACCESS_UNSUPPORTED,
                format!("device {me} cannot access device {other}"),
            ));
        }
        let c = st.contexts.contexts.get_mut(&cur).expect("current");
        if c.peers.contains(&other) {
            return Err(CuError::new(
                cumock_abi::result::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED,
                "peer access is already enabled",
            ));
        }
        c.peers.push(other);
        Ok(())
    }

    pub fn ctx_disable_peer_access(&self, peer: ContextId) -> CuResult<()> {
        let mut st = self.state.lock();
        let (cur, _) = st.contexts.require_current()?;
        let other = st
            .contexts
            .get(peer)
            .map_err(|_| invalid_context(format!("{:#x} is not a live context", peer.handle())))?
            .device;
        let c = st.contexts.contexts.get_mut(&cur).expect("current");
        let before = c.peers.len();
        c.peers.retain(|p| *p != other);
        if c.peers.len() == before {
            return Err(CuError::new(
                cumock_abi::result::CUDA_ERROR_PEER_ACCESS_NOT_ENABLED,
                "peer access was not enabled",
            ));
        }
        Ok(())
    }
}

impl Driver {
    /// Whether the calling thread's waits now should sleep at once rather than watch
    /// (`stream_queues::blocking_sync`): its current context was made with
    /// CU_CTX_SCHED_BLOCKING_SYNC, or `event` with CU_EVENT_BLOCKING_SYNC.
    pub(super) fn blocking_sync(&self, event: Option<EventId>) -> bool {
        let st = self.state.lock();
        event.is_some_and(|e| st.contexts.is_blocking(e))
            || st
                .contexts
                .require_current()
                .is_ok_and(|(_, c)| c.flags & CU_CTX_SCHED_MASK == CU_CTX_SCHED_BLOCKING_SYNC)
    }
}

/// A CUsharedconfig: DEFAULT_BANK_SIZE (0), FOUR_BYTE (1) or EIGHT_BYTE (2). The H200's
/// banks are 4 bytes, fixed: cuda.h says a device without a configurable bank size
/// ignores the setting, so the value is only checked.
pub fn check_shared_config(config: i32) -> CuResult<()> {
    if !(0..=2).contains(&config) {
        return Err(invalid(format!(
            "{config} is not a CUsharedconfig (CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE 0 to EIGHT_BYTE_BANK_SIZE 2)"
        )));
    }
    Ok(())
}

/// What cuCtxGetSharedMemConfig answers: the H200's fixed bank size,
/// CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE (cuda.h: "the fixed bank size of the hardware").
pub const SHARED_CONFIG_FOUR_BYTE: i32 = 1;

/// A CUexecAffinityType: CU_EXEC_AFFINITY_TYPE_SM_COUNT (0) is the only one.
pub fn check_exec_affinity_type(kind: i32) -> CuResult<()> {
    if kind != 0 {
        // Observed: CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY (probe api_gaps).
        return Err(CuError::new(
            224, // CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY
            format!(
                "{kind} is not a CUexecAffinityType (CU_EXEC_AFFINITY_TYPE_SM_COUNT 0 is the only one)"
            ),
        ));
    }
    Ok(())
}

/// cuda.h's CU_CTX_MAP_HOST and CU_CTX_SYNC_MEMOPS.
const CU_CTX_MAP_HOST: u32 = 0x08;
const CU_CTX_SYNC_MEMOPS: u32 = 0x80;

fn check_ctx_flags(flags: u32) -> CuResult<()> {
    let sched = flags & CU_CTX_SCHED_MASK;
    if flags & !CU_CTX_FLAGS_MASK != 0 || !matches!(sched, 0 | 1 | 2 | 4) {
        return Err(invalid(format!("context flags {flags:#x} are not valid")));
    }
    Ok(())
}

/// The ids cuStreamGetId reports, numbered as the H200 numbers them (probe api_gaps3,
/// stream-ids and stream-ids-numbering, the same in two recordings): one process-wide
/// counter from 1, which the driver's internal streams draw from too. Making a context
/// takes one id, then its NULL (legacy) stream's, then five more; the process's first
/// context takes five before those (a fresh process's primary NULL stream is 7, its first
/// created stream 13). A created stream takes the next id when it is made; a per-thread
/// stream when a thread first names it (so one thread's per-thread stream is 14 after a
/// stream 13 was made). Events take none. Whether the first five are once per process or
/// once per device is not recorded (one GPU): once per process here.
#[derive(Debug, Default)]
struct StreamNumbers {
    /// The last id given out (0: none yet).
    last: u64,
    null: HashMap<ContextId, u64>,
    per_thread: HashMap<(ContextId, std::thread::ThreadId), u64>,
    created: HashMap<StreamId, u64>,
}

impl StreamNumbers {
    /// Ids the process's first context takes before its own.
    const FIRST_CONTEXT_EXTRA: u64 = 5;
    /// Ids a context takes after its NULL stream's.
    const AFTER_NULL: u64 = 5;

    fn next(&mut self) -> u64 {
        self.last += 1;
        self.last
    }

    fn context_created(&mut self, ctx: ContextId) {
        if self.last == 0 {
            self.last = Self::FIRST_CONTEXT_EXTRA;
        }
        self.next();
        let null = self.next();
        self.null.insert(ctx, null);
        self.last += Self::AFTER_NULL;
    }

    fn context_destroyed(&mut self, ctx: ContextId) {
        self.null.remove(&ctx);
        self.per_thread.retain(|(owner, _), _| *owner != ctx);
    }

    fn stream_created(&mut self, stream: StreamId) {
        let id = self.next();
        self.created.insert(stream, id);
    }

    /// `stream`'s id; one the numbering has not met yet (a thread's per-thread stream
    /// named for the first time) takes the next.
    fn number(&mut self, stream: StreamId, ctx: ContextId) -> u64 {
        let last = &mut self.last;
        let take = || {
            *last += 1;
            *last
        };
        match stream {
            StreamId::NULL | StreamId::LEGACY => *self.null.entry(ctx).or_insert_with(take),
            StreamId::PER_THREAD => *self
                .per_thread
                .entry((ctx, std::thread::current().id()))
                .or_insert_with(take),
            s => *self.created.entry(s).or_insert_with(take),
        }
    }

    fn stream_destroyed(&mut self, stream: StreamId) {
        self.created.remove(&stream);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Probe api_gaps3, stream-ids-numbering, as the H200 answered it in a fresh process.
    #[test]
    fn streams_are_numbered_as_the_h200_numbers_them() {
        let mut cs = Contexts::new(1);
        let primary = cs.create(0, 0, true);
        let props = StreamProps::default();
        let a = cs.create_stream(primary, props);
        let a_id = cs.stream_number(a, primary);
        assert_eq!(a_id, 13, "a fresh process's first created stream");
        assert_eq!(cs.stream_number(StreamId::NULL, primary), a_id - 6);
        assert_eq!(cs.stream_number(StreamId::LEGACY, primary), a_id - 6);
        assert_eq!(cs.stream_number(StreamId::PER_THREAD, primary), a_id + 1);
        let next = cs.create_stream(primary, props);
        assert_eq!(cs.stream_number(next, primary), a_id + 2);
        let created = cs.create(0, 0, false);
        let after = cs.create_stream(created, props);
        assert_eq!(cs.stream_number(after, created), a_id + 10);
        assert_eq!(cs.stream_number(StreamId::NULL, created), a_id + 4);
        assert_eq!(cs.stream_number(StreamId::PER_THREAD, created), a_id + 11);
        let later = cs.create_stream(created, props);
        assert_eq!(cs.stream_number(later, created), a_id + 12);
        cs.create_event(true, false);
        let after_event = cs.create_stream(created, props);
        assert_eq!(cs.stream_number(after_event, created), a_id + 13);
        // The same stream asked again keeps its id; another thread's per-thread stream is
        // another stream.
        assert_eq!(cs.stream_number(StreamId::PER_THREAD, primary), a_id + 1);
        let other = std::thread::scope(|s| {
            s.spawn(|| cs.stream_number(StreamId::PER_THREAD, primary))
                .join()
                .unwrap()
        });
        assert_eq!(other, a_id + 14);
    }
}
