//! Stream capture: between cuStreamBeginCapture and cuStreamEndCapture, the work issued
//! on a stream (launches, async copies and memsets, host functions, launched graphs)
//! becomes nodes of a graph instead of running, each depending on the stream's previous
//! node(s). A stream joins a capture by waiting on an event recorded in it (fork); the
//! origin stream waits on an event recorded by the other stream to join it back.
//!
//! The capture modes (cuda.h, cuThreadExchangeStreamCaptureMode) decide which threads
//! may not make "potentially unsafe" calls (synchronous copies and memsets, cuMemAlloc,
//! cuCtxSynchronize) while a capture is in progress: such a call fails with
//! CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates the capture(s) it would break.
//! Synchronising or querying a capturing stream does the same.

use super::error::*;
use super::graphs::{GraphId, NodeId, NodeOp};
use super::ids::{EventId, StreamId};
use super::launch::{LaunchFunction, LaunchRequest};
use super::stream_queues::{self, Order};
use super::{Driver, State};
// Ids the mock hands out as keys: Fx hashing, not SipHash (a launch looks up several).
use rustc_hash::FxHashMap as HashMap;
use std::thread::ThreadId;

pub const CUDA_ERROR_ILLEGAL_STATE: u32 = 401;
pub const STREAM_CAPTURE_UNSUPPORTED: u32 = 900;
pub const STREAM_CAPTURE_INVALIDATED: u32 = 901;
pub const STREAM_CAPTURE_MERGE: u32 = 902;
pub const STREAM_CAPTURE_UNMATCHED: u32 = 903;
pub const STREAM_CAPTURE_UNJOINED: u32 = 904;
pub const STREAM_CAPTURE_IMPLICIT: u32 = 906;
pub const CUDA_ERROR_CAPTURED_EVENT: u32 = 907;
pub const STREAM_CAPTURE_WRONG_THREAD: u32 = 908;

/// `CUstreamCaptureMode`.
pub const MODE_GLOBAL: i32 = 0;
pub const MODE_THREAD_LOCAL: i32 = 1;
pub const MODE_RELAXED: i32 = 2;

/// `CUstreamCaptureStatus`.
pub const STATUS_NONE: i32 = 0;
pub const STATUS_ACTIVE: i32 = 1;
pub const STATUS_INVALIDATED: i32 = 2;

thread_local! {
    /// The calling thread's capture interaction mode (cuThreadExchangeStreamCaptureMode).
    static THREAD_MODE: std::cell::Cell<i32> = const { std::cell::Cell::new(MODE_GLOBAL) };
}

/// A stream, as captures know it: the per-thread default stream is each thread's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct StreamKey(StreamId, u64);

impl StreamKey {
    fn of(s: StreamId) -> Self {
        if s == StreamId::PER_THREAD {
            StreamKey(s, stream_queues::thread_serial())
        } else {
            StreamKey(s, 0)
        }
    }
}

struct Capture {
    graph: GraphId,
    /// The nodes the graph had when the capture began: a graph the program gave
    /// (cuStreamBeginCaptureToGraph) keeps them, and they are not the capture's to join.
    /// None for a graph the capture made, which goes when the capture fails.
    given: Option<std::collections::HashSet<NodeId>>,
    mode: i32,
    thread: ThreadId,
    origin: StreamKey,
    /// Why the capture was invalidated, if it was.
    invalidated: Option<String>,
    /// Whether a stream of the capture is a blocking one (the legacy stream then may not
    /// be used: it would synchronise with the capture).
    blocking: bool,
}

/// A stream in a capture: the capture, and the nodes its next node will depend on.
struct Member {
    capture: u64,
    frontier: Vec<NodeId>,
    /// Zeroed `CUgraphEdgeData` for each of `frontier` (cuStreamGetCaptureInfo_v3).
    edges: Vec<[u8; 8]>,
}

#[derive(Default)]
pub struct Captures {
    captures: HashMap<u64, Capture>,
    streams: HashMap<StreamKey, Member>,
    /// Events recorded in a capture: the capture and the nodes they stand for.
    events: HashMap<EventId, (u64, Vec<NodeId>)>,
    /// Events last recorded in a capture that has ended: neither queried nor waited for
    /// until recorded again (`Driver::capture_check_event`).
    ended_events: std::collections::HashSet<EventId>,
    next: u64,
}

/// What an event's use may do to the capture it was last recorded in.
#[derive(Clone, Copy, PartialEq)]
pub enum EventUse {
    /// cuEventQuery and cuEventSynchronize: refused, and the capture invalidated.
    Waits,
    /// cuEventElapsedTime: refused, the capture going on.
    Reads,
}

impl Captures {
    /// The events of capture `id`, which has ended, kept as such.
    fn end_events(&mut self, id: u64) {
        let ended = &mut self.ended_events;
        self.events.retain(|e, (cap, _)| {
            if *cap == id {
                ended.insert(*e);
            }
            *cap != id
        });
    }

    /// An event recorded outside a capture (on a stream, for a context, by a graph's
    /// node): no longer an ended capture's.
    pub fn recorded_outside(&mut self, event: EventId) {
        self.ended_events.remove(&event);
    }

    /// An event destroyed.
    pub fn forget_event(&mut self, event: EventId) {
        self.events.remove(&event);
        self.ended_events.remove(&event);
    }

    /// An event used as `how` says: CUDA_ERROR_CAPTURED_EVENT while its capture goes on
    /// (the capture invalidated by a wait), CUDA_ERROR_INVALID_VALUE once that capture has
    /// ended. Recorded on the H200 (probe cudarc): cuEventQuery and cuEventSynchronize of
    /// such an event invalidate the capture in every mode (its end is
    /// CUDA_ERROR_STREAM_CAPTURE_INVALIDATED), and both are CUDA_ERROR_INVALID_VALUE after
    /// the end; cuEventElapsedTime is CUDA_ERROR_CAPTURED_EVENT and the capture goes on.
    pub fn check_event(&mut self, event: EventId, how: EventUse) -> CuResult<()> {
        if let Some(&(cap, _)) = self.events.get(&event) {
            // Observed (random_graphs seeds 3 line 40, 29 line 119): an event of a capture
            // that was invalidated (not yet ended) is refused as an ended one's.
            if self
                .captures
                .get(&cap)
                .is_some_and(|c| c.invalidated.is_some())
            {
                return Err(invalid(
                    "the event was last recorded in a capture that was invalidated",
                ));
            }
            if how == EventUse::Waits {
                self.invalidate(cap, "an event recorded in it was queried or waited for");
            }
            return Err(capture_error(
                CUDA_ERROR_CAPTURED_EVENT,
                format!("the event was last recorded in capture {cap}, which is still going on"),
            ));
        }
        if self.ended_events.contains(&event) {
            return Err(invalid(
                "the event was last recorded in a capture that has ended: record it again first",
            ));
        }
        Ok(())
    }

    pub fn graph_in_capture(&self, g: GraphId) -> bool {
        self.captures.values().any(|c| c.graph == g)
    }

    fn invalidate(&mut self, capture: u64, why: &str) {
        if let Some(c) = self.captures.get_mut(&capture) {
            c.invalidated.get_or_insert_with(|| why.to_string());
        }
    }

    /// The captures a potentially unsafe call of this thread would break, under its mode.
    fn broken_by_unsafe_call(&self) -> Vec<u64> {
        let me = std::thread::current().id();
        let mode = THREAD_MODE.get();
        self.captures
            .iter()
            .filter(|(_, c)| match mode {
                MODE_RELAXED => false,
                MODE_THREAD_LOCAL => c.thread == me && c.mode != MODE_RELAXED,
                _ => (c.thread == me && c.mode != MODE_RELAXED) || c.mode == MODE_GLOBAL,
            })
            .map(|(id, _)| *id)
            .collect()
    }
}

/// cuThreadExchangeStreamCaptureMode: sets the calling thread's mode, returns the old.
pub fn exchange_thread_mode(mode: i32) -> CuResult<i32> {
    if !(MODE_GLOBAL..=MODE_RELAXED).contains(&mode) {
        return Err(invalid(format!("{mode} is not a CUstreamCaptureMode")));
    }
    Ok(THREAD_MODE.replace(mode))
}

fn capture_error(code: u32, message: String) -> CuError {
    CuError::new(code, message)
}

impl Driver {
    /// The capture `stream` is in (active or invalidated), if any; the stream must live.
    pub fn capture_of(&self, stream: StreamId) -> CuResult<Option<u64>> {
        let st = self.state.lock();
        st.contexts.check_stream(stream)?;
        Ok(st
            .captures
            .streams
            .get(&StreamKey::of(stream))
            .map(|m| m.capture))
    }

    /// cuStreamBeginCapture.
    pub fn begin_capture(&self, stream: StreamId, mode: i32) -> CuResult<()> {
        self.begin_capture_into(stream, mode, None)
    }

    /// cuStreamBeginCaptureToGraph: the capture adds its nodes to graph `g`, the first
    /// ones depending on `deps` (distinct nodes of `g`); cuStreamEndCapture gives `g` back.
    pub fn begin_capture_to_graph(
        &self,
        stream: StreamId,
        g: GraphId,
        deps: &[NodeId],
        mode: i32,
    ) -> CuResult<()> {
        self.begin_capture_into(stream, mode, Some((g, deps)))
    }

    /// A capture into a graph of its own (`into` None) or into the program's graph, from
    /// those of its nodes.
    fn begin_capture_into(
        &self,
        stream: StreamId,
        mode: i32,
        into: Option<(GraphId, &[NodeId])>,
    ) -> CuResult<()> {
        if !(MODE_GLOBAL..=MODE_RELAXED).contains(&mode) {
            return Err(invalid(format!("{mode} is not a CUstreamCaptureMode")));
        }
        if stream == StreamId::NULL || stream == StreamId::LEGACY {
            return Err(capture_error(
                STREAM_CAPTURE_UNSUPPORTED,
                "the legacy NULL stream cannot be captured: capture a stream of your own".into(),
            ));
        }
        let order = self.stream_order(stream)?;
        let mut st = self.state.lock();
        st.contexts.require_current()?;
        let key = StreamKey::of(stream);
        if st.captures.streams.contains_key(&key) {
            return Err(capture_error(
                CUDA_ERROR_ILLEGAL_STATE,
                format!("stream {stream:#x} is being captured already"),
            ));
        }
        let (graph, given, frontier) = match into {
            None => (st.graphs.create(), None, Vec::new()),
            Some((g, deps)) => {
                let body = st.graphs.graph(g)?;
                for (i, d) in deps.iter().enumerate() {
                    if !body.nodes.contains_key(d) || deps[..i].contains(d) {
                        return Err(invalid(format!(
                            "dependency {i} ({d:#x}) is not a node of graph {g:#x}, or is given twice"
                        )));
                    }
                }
                if st.captures.graph_in_capture(g) {
                    return Err(capture_error(
                        CUDA_ERROR_ILLEGAL_STATE,
                        format!("graph {g:#x} is being built by another capture"),
                    ));
                }
                let before = body.order.iter().copied().collect();
                (g, Some(before), deps.to_vec())
            }
        };
        st.captures.next += 1;
        let id = st.captures.next;
        st.captures.captures.insert(
            id,
            Capture {
                graph,
                given,
                mode,
                thread: std::thread::current().id(),
                origin: key,
                invalidated: None,
                blocking: order == Order::Blocking,
            },
        );
        st.captures.streams.insert(
            key,
            Member {
                capture: id,
                edges: vec![[0; 8]; frontier.len()],
                frontier,
            },
        );
        Ok(())
    }

    /// cuStreamEndCapture: the graph built, or why there is none. The capture ends either
    /// way (unless the stream is not its origin, or the program gave nowhere to put the
    /// graph: `wants_graph` false, which only a capture into its own graph may do).
    pub fn end_capture(&self, stream: StreamId, wants_graph: bool) -> CuResult<Option<GraphId>> {
        let mut st = self.state.lock();
        st.contexts.check_stream(stream)?;
        let key = StreamKey::of(stream);
        let Some(id) = st.captures.streams.get(&key).map(|m| m.capture) else {
            return Err(capture_error(
                CUDA_ERROR_ILLEGAL_STATE,
                format!("stream {stream:#x} is not being captured"),
            ));
        };
        let c = &st.captures.captures[&id];
        if c.origin != key {
            st.captures.invalidate(
                id,
                "cuStreamEndCapture was called on a stream that joined it",
            );
            return Err(capture_error(
                STREAM_CAPTURE_UNMATCHED,
                format!(
                    "stream {stream:#x} joined the capture but did not begin it: end it on the stream that began it"
                ),
            ));
        }
        if c.mode != MODE_RELAXED && c.thread != std::thread::current().id() {
            return Err(capture_error(
                STREAM_CAPTURE_WRONG_THREAD,
                "the capture was begun on another thread (only a RELAXED capture may end elsewhere)".into(),
            ));
        }
        let c = st.captures.captures.remove(&id).expect("found");
        let origin_frontier = st.captures.streams[&key].frontier.clone();
        st.captures.streams.retain(|_, m| m.capture != id);
        st.captures.end_events(id);
        // A graph the program gave stays its own, with what was captured into it (as on the
        // H200: probe streams, capture-ends).
        let drop_graph = |st: &mut State| {
            if c.given.is_none() {
                let _ = st.graphs.destroy(c.graph);
            }
        };
        if let Some(why) = &c.invalidated {
            drop_graph(&mut st);
            return Err(capture_error(
                STREAM_CAPTURE_INVALIDATED,
                format!("the capture was invalidated: {why}"),
            ));
        }
        // Every node no other node depends on must be one the origin stream's work
        // depends on: else another stream forked from the capture was never joined back.
        let body = st.graphs.graph(c.graph)?;
        let unjoined = body
            .order
            .iter()
            .find(|n| {
                !c.given.as_ref().is_some_and(|before| before.contains(n))
                    && !origin_frontier.contains(n)
                    && !body.nodes.values().any(|m| m.deps.contains(n))
            })
            .copied();
        if let Some(n) = unjoined {
            drop_graph(&mut st);
            return Err(capture_error(
                STREAM_CAPTURE_UNJOINED,
                format!(
                    "work captured on a forked stream (node {n:#x}) was not joined back into the origin stream (record an event there and cuStreamWaitEvent on the origin stream)"
                ),
            ));
        }
        // Observed (probe streams, capture-ends): an ordinary capture ended with a NULL
        // phGraph succeeds and ends; its graph, which nobody can name, goes.
        if !wants_graph {
            drop_graph(&mut st);
            return Ok(None);
        }
        Ok(Some(c.graph))
    }

    /// cuStreamGetCaptureInfo: status, capture id, graph, and the stream's current
    /// dependencies (their address and count, and zeroed edge data: valid until the
    /// stream's next captured work).
    pub fn capture_info(&self, stream: StreamId) -> CuResult<CaptureInfo> {
        let st = self.state.lock();
        st.contexts.check_stream(stream)?;
        // The legacy stream's state is implicitly a blocking capturing stream's: asked
        // while one captures, the H200 answered STREAM_CAPTURE_IMPLICIT, leaving the
        // capture as it was (random_graphs: 18 of 18 cuStreamIsCapturing and
        // cuStreamGetCaptureInfo calls, e.g. seed 14 line 43; with only non-blocking
        // streams capturing, 16 of 16 answered "none").
        if (stream == StreamId::NULL || stream == StreamId::LEGACY)
            && st.captures.captures.values().any(|c| c.blocking)
        {
            return Err(capture_error(
                STREAM_CAPTURE_IMPLICIT,
                "the legacy NULL stream's capture state is asked while a blocking stream is \
                 captured"
                    .into(),
            ));
        }
        let Some(m) = st.captures.streams.get(&StreamKey::of(stream)) else {
            return Ok(CaptureInfo::default());
        };
        let c = &st.captures.captures[&m.capture];
        Ok(CaptureInfo {
            status: if c.invalidated.is_some() {
                STATUS_INVALIDATED
            } else {
                STATUS_ACTIVE
            },
            id: m.capture,
            graph: c.graph,
            deps: m.frontier.as_ptr() as u64,
            edges: m.edges.as_ptr() as u64,
            count: m.frontier.len(),
        })
    }

    /// Adds `op` as the capturing stream's next node.
    pub fn capture_node(&self, stream: StreamId, op: NodeOp) -> CuResult<()> {
        self.capture_node_with(stream, |_, _, _| Ok((op, ())))
    }

    /// A node of the capture's graph, made by `make` from the state, the graph and the
    /// stream's current dependencies (a graph allocation reserves its address so); returns
    /// what `make` returned beside the node.
    pub fn capture_node_with<T>(
        &self,
        stream: StreamId,
        make: impl FnOnce(&mut State, GraphId, &[NodeId]) -> CuResult<(NodeOp, T)>,
    ) -> CuResult<T> {
        let mut st = self.state.lock();
        let key = StreamKey::of(stream);
        let m = st.captures.streams.get(&key).ok_or_else(|| {
            capture_error(
                CUDA_ERROR_ILLEGAL_STATE,
                format!("stream {stream:#x} is not being captured"),
            )
        })?;
        let (id, deps) = (m.capture, m.frontier.clone());
        let c = &st.captures.captures[&id];
        if let Some(why) = &c.invalidated {
            return Err(capture_error(
                STREAM_CAPTURE_INVALIDATED,
                format!("the stream's capture was invalidated: {why}"),
            ));
        }
        let graph = c.graph;
        let (op, made) = make(&mut st, graph, &deps)?;
        let n = st.graphs.add(graph, &deps, op)?;
        let m = st.captures.streams.get_mut(&key).expect("found");
        m.frontier = vec![n];
        m.edges = vec![[0; 8]];
        Ok(made)
    }

    /// A launch of `function` on a capturing stream: checked as a launch, then a kernel
    /// node.
    pub fn capture_kernel(
        &self,
        stream: StreamId,
        function: &LaunchFunction,
        req: LaunchRequest,
    ) -> CuResult<()> {
        self.prepare_launch_of(function, &req)?;
        let mut launch = req;
        launch.stream = StreamId::NULL;
        let mut node = self.kernel_node(launch)?;
        // The node takes the stream's launch attributes, as the H200's captured nodes
        // answer them (probe streams, stream-attributes): its access policy window,
        // priority and memory sync domain and map.
        {
            let st = self.state.lock();
            if let Ok((ctx, props)) = st.contexts.stream(stream) {
                let a = st.contexts.stream_attrs(ctx, stream);
                node.attrs.access_policy_window = a.access_policy_window;
                node.attrs.priority = props.priority;
                node.attrs.mem_sync_domain_map = [a.mem_sync_domain_map];
                node.attrs.mem_sync_domain = a.mem_sync_domain;
            }
        }
        self.capture_node(stream, NodeOp::Kernel(node))
    }

    /// cuEventRecord on a capturing stream: the event stands for the stream's current
    /// dependencies (no node; a GPU records nothing either). `Ok(false)`: the stream is
    /// not capturing, and the event, recorded outside any capture now, stands for no
    /// captured work any more.
    pub fn capture_record_event(&self, event: EventId, stream: StreamId) -> CuResult<bool> {
        let mut st = self.state.lock();
        st.contexts.event(event)?;
        let Some(m) = st.captures.streams.get(&StreamKey::of(stream)) else {
            st.captures.ended_events.remove(&event);
            st.captures.events.remove(&event);
            return Ok(false);
        };
        // Observed (random_graphs, e.g. seed 33 line 9, seed 13 line 26): into an
        // invalidated capture, STREAM_CAPTURE_INVALIDATED, as the stream's other work.
        if let Some(why) = &st.captures.captures[&m.capture].invalidated {
            return Err(capture_error(
                STREAM_CAPTURE_INVALIDATED,
                format!("the stream's capture was invalidated: {why}"),
            ));
        }
        // A record refused above leaves the event as it was (random_graphs seed 15 line
        // 361: still an ended capture's).
        let entry = (m.capture, m.frontier.clone());
        st.captures.ended_events.remove(&event);
        st.captures.events.insert(event, entry);
        Ok(true)
    }

    /// cuEventQuery, cuEventSynchronize and cuEventElapsedTime of an event recorded in a
    /// capture (`Captures::check_event`).
    pub fn capture_check_event(&self, event: EventId, how: EventUse) -> CuResult<()> {
        self.state.lock().captures.check_event(event, how)
    }

    /// cuEventQuery: as `capture_check_event`; of another event it is a potentially
    /// unsafe call (`capture_check_unsafe`): the H200 refused it so, with
    /// STREAM_CAPTURE_UNSUPPORTED, in random_graphs (e.g. seed 2 line 31, seed 16 line
    /// 35: an event recorded before any capture, queried during a global or thread-local
    /// one, which was invalidated).
    pub fn capture_check_event_query(&self, event: EventId) -> CuResult<()> {
        self.capture_check_event(event, EventUse::Waits)?;
        self.capture_check_unsafe("cuEventQuery")
    }

    /// cuStreamWaitEvent in capture: on an event recorded in a capture, the stream joins
    /// that capture (or, in it already, depends on the event's nodes too). `Ok(false)`:
    /// neither the event nor the stream is in a capture.
    pub fn capture_wait_event(&self, stream: StreamId, event: EventId) -> CuResult<bool> {
        let order = self.stream_order(stream)?;
        let mut st = self.state.lock();
        st.contexts.event(event)?;
        let key = StreamKey::of(stream);
        let member = st.captures.streams.get(&key).map(|m| m.capture);
        // Observed (random_graphs seed 8 line 126): a stream of an invalidated capture
        // waiting is STREAM_CAPTURE_INVALIDATED, as its other work.
        if let Some(why) = member.and_then(|c| st.captures.captures[&c].invalidated.as_ref()) {
            return Err(capture_error(
                STREAM_CAPTURE_INVALIDATED,
                format!("the stream's capture was invalidated: {why}"),
            ));
        }
        // Observed (random_graphs seeds 15, 25, 26, 31: 6 of 6): a stream outside any
        // capture waiting on an event last recorded in one that has ended is refused, as
        // a query of that event is (`Captures::check_event`).
        if member.is_none() && st.captures.ended_events.contains(&event) {
            return Err(invalid(
                "the event was last recorded in a capture that has ended: record it again first",
            ));
        }
        let Some((cap, nodes)) = st.captures.events.get(&event).cloned() else {
            if member.is_some() {
                // Work before an event recorded outside the capture was issued before the
                // capture's: the graph, launched later, follows it in the program's order.
                crate::diagnostics::warn(
                    "cuStreamWaitEvent",
                    "the event was not recorded in this capture: the captured graph does not wait for it",
                );
                return Ok(true);
            }
            return Ok(false);
        };
        match member {
            None => {
                let blocking = order == Order::Blocking;
                let c = st
                    .captures
                    .captures
                    .get_mut(&cap)
                    .expect("events die with captures");
                c.blocking |= blocking;
                let edges = vec![[0; 8]; nodes.len()];
                st.captures.streams.insert(
                    key,
                    Member {
                        capture: cap,
                        frontier: nodes,
                        edges,
                    },
                );
            }
            Some(c) if c == cap => {
                let m = st.captures.streams.get_mut(&key).expect("found");
                for n in nodes {
                    if !m.frontier.contains(&n) {
                        m.frontier.push(n);
                    }
                }
                m.edges = vec![[0; 8]; m.frontier.len()];
            }
            Some(other) => {
                st.captures
                    .invalidate(other, "a wait on an event of another capture");
                st.captures
                    .invalidate(cap, "a wait on an event of another capture");
                return Err(capture_error(
                    STREAM_CAPTURE_MERGE,
                    "the event was recorded in another capture: two captures cannot be merged"
                        .into(),
                ));
            }
        }
        Ok(true)
    }

    /// cuStreamUpdateCaptureDependencies: `replace` sets the stream's dependencies to
    /// `nodes`, else adds them.
    pub fn capture_update_dependencies(
        &self,
        stream: StreamId,
        nodes: &[NodeId],
        replace: bool,
    ) -> CuResult<()> {
        let mut st = self.state.lock();
        st.contexts.check_stream(stream)?;
        let key = StreamKey::of(stream);
        let Some(cap) = st.captures.streams.get(&key).map(|m| m.capture) else {
            return Err(capture_error(
                CUDA_ERROR_ILLEGAL_STATE,
                format!("stream {stream:#x} is not being captured"),
            ));
        };
        let graph = st.captures.captures[&cap].graph;
        for n in nodes {
            if st.graphs.node(*n).map(|(g, _)| g) != Ok(graph) {
                return Err(invalid(format!(
                    "{n:#x} is not a node of the stream's capture graph"
                )));
            }
        }
        let m = st.captures.streams.get_mut(&key).expect("found");
        if replace {
            m.frontier.clear();
        }
        for n in nodes {
            if !m.frontier.contains(n) {
                m.frontier.push(*n);
            }
        }
        m.edges = vec![[0; 8]; m.frontier.len()];
        Ok(())
    }

    /// A call that must not happen on a capturing stream (cuStreamSynchronize,
    /// cuStreamQuery, a copy the mock cannot capture): it fails, and the capture is
    /// invalidated.
    pub fn capture_refuse(&self, stream: StreamId, what: &str) -> CuResult<()> {
        let mut st = self.state.lock();
        let Some(m) = st.captures.streams.get(&StreamKey::of(stream)) else {
            return Ok(());
        };
        let cap = m.capture;
        st.captures
            .invalidate(cap, &format!("{what} on a capturing stream"));
        Err(capture_error(
            STREAM_CAPTURE_UNSUPPORTED,
            format!("{what} is not allowed on a stream being captured; the capture is invalidated"),
        ))
    }

    /// A potentially unsafe call (a synchronous copy or memset, cuMemAlloc,
    /// cuCtxSynchronize): refused, and the captures it would break invalidated, where the
    /// capture modes say so.
    pub fn capture_check_unsafe(&self, what: &str) -> CuResult<()> {
        let mut st = self.state.lock();
        if st.captures.captures.is_empty() {
            return Ok(());
        }
        let broken = st.captures.broken_by_unsafe_call();
        if broken.is_empty() {
            return Ok(());
        }
        for c in &broken {
            st.captures
                .invalidate(*c, &format!("{what} was called during the capture"));
        }
        Err(capture_error(
            STREAM_CAPTURE_UNSUPPORTED,
            format!(
                "{what} is not allowed while a stream capture is in progress (capture mode \
                 rules; cuThreadExchangeStreamCaptureMode to RELAXED permits it); the capture is invalidated"
            ),
        ))
    }

    /// cuCtxRecordEvent and cuCtxWaitEvent: refused (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
    /// while a stream of `ctx` captures, or while `event` stands for captured work, as
    /// cuda.h says; the captures in the way are invalidated.
    pub fn capture_check_context(
        &self,
        ctx: super::ids::ContextId,
        event: Option<EventId>,
        what: &str,
    ) -> CuResult<()> {
        let mut st = self.state.lock();
        let st = &mut *st;
        let mut hit: Vec<u64> = st
            .captures
            .streams
            .iter()
            .filter(|(k, _)| st.contexts.stream(k.0).is_ok_and(|(c, _)| c == ctx))
            .map(|(_, m)| m.capture)
            .collect();
        if let Some((cap, _)) = event.and_then(|e| st.captures.events.get(&e)) {
            hit.push(*cap);
        }
        if hit.is_empty() {
            return Ok(());
        }
        for c in &hit {
            st.captures
                .invalidate(*c, &format!("{what} was called during the capture"));
        }
        Err(capture_error(
            STREAM_CAPTURE_UNSUPPORTED,
            format!(
                "{what}: the context has a stream being captured, or the event stands for \
                 captured work; the capture is invalidated"
            ),
        ))
    }

    /// Work on the legacy stream synchronises with every blocking stream: with one that
    /// captures, it fails (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) and invalidates it.
    pub fn capture_check_legacy(&self, stream: StreamId) -> CuResult<()> {
        if stream != StreamId::NULL && stream != StreamId::LEGACY {
            return Ok(());
        }
        let mut st = self.state.lock();
        let hit: Vec<u64> = st
            .captures
            .captures
            .iter()
            .filter(|(_, c)| c.blocking)
            .map(|(id, _)| *id)
            .collect();
        if hit.is_empty() {
            return Ok(());
        }
        for c in &hit {
            st.captures.invalidate(
                *c,
                "the legacy stream was used while a blocking stream was captured",
            );
        }
        Err(capture_error(
            STREAM_CAPTURE_IMPLICIT,
            "work on the legacy NULL stream would synchronise with a blocking stream being \
             captured (use a CU_STREAM_NON_BLOCKING stream, or the capturing one); the capture is invalidated"
                .into(),
        ))
    }

    /// The stream is destroyed: it leaves its capture. A stream that joined it only
    /// leaves, its work staying in the graph: NVIDIA's graphMemoryNodes sample destroys
    /// its second stream, joined back, before ending the capture, and runs on the GPU;
    /// work it left unjoined is still found at cuStreamEndCapture (the graph's sinks).
    /// The stream that began the capture takes the capture with it: nothing could end
    /// it any more, and a global-mode capture left behind would refuse every later
    /// unsafe call. Its other streams stop capturing and its graph is dropped (unless
    /// it is the program's own, cuStreamBeginCaptureToGraph).
    pub fn capture_forget_stream(&self, stream: StreamId) {
        let mut st = self.state.lock();
        let key = StreamKey::of(stream);
        let Some(m) = st.captures.streams.remove(&key) else {
            return;
        };
        let id = m.capture;
        if st.captures.captures.get(&id).map(|c| c.origin) != Some(key) {
            return;
        }
        let c = st.captures.captures.remove(&id).expect("found");
        st.captures.streams.retain(|_, m| m.capture != id);
        st.captures.end_events(id);
        if c.given.is_none() {
            let _ = st.graphs.destroy(c.graph);
        }
    }
}

/// What cuStreamGetCaptureInfo reports.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CaptureInfo {
    pub status: i32,
    pub id: u64,
    pub graph: GraphId,
    /// Address of `count` node handles (the model's own array).
    pub deps: u64,
    /// Address of `count` zeroed `CUgraphEdgeData`.
    pub edges: u64,
    pub count: usize,
}
