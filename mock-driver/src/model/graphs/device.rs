//! Device graph launch (CUDA 12 and later): a graph instantiated with
//! `CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH` and uploaded may be launched by a kernel
//! node of a running graph, `cudaGraphLaunch(exec, stream)` on the device (the
//! executor's device runtime hands the call to `Driver::device_graph_launch`), into one
//! of three named streams. The CUDA programming guide's rules ("Device Graph Launch"):
//!
//! - fire-and-forget (`cudaStreamGraphFireAndForget`): runs at once, independently of
//!   the launching graph, as a child of its execution environment: the launching graph
//!   completes only once it has; at most 120 such launches in one run of a graph;
//! - sibling (`cudaStreamGraphFireAndForgetAsSibling`): a fire-and-forget launch from
//!   the launching graph's parent environment, which does not hold back its tail
//!   launches;
//! - tail (`cudaStreamGraphTailLaunch`): runs once the launching graph and everything it
//!   launched have completed, the graphs it queued in their order, and the tail launches
//!   a tail graph queues before the rest of the list; at most 255 pending; a graph may
//!   queue itself (`cudaGetCurrentGraphExec`), once at a time;
//! - a device graph launched from the device while a launch of it is still running:
//!   cudaErrorInvalidValue.
//!
//! The schedule, one the guide allows: a kernel node's fire-and-forget and sibling
//! launches run, each with its own tail launches, right after the kernel (before the
//! graph's next node), so before the launching graph completes; the tail launches after
//! the launching graph's last node, on the same stream's worker, so the host's stream
//! order sees all of it. A graph not instantiated for device launch faults the
//! launching kernel with an illegal address, as the H200 does (recorded: runtime program
//! device_graphs; sticky, as any kernel's fault). Also recorded: a device graph not
//! uploaded, a stream that is none of the three, a graph queued twice and the 121st
//! fire-and-forget launch are refused with cudaErrorInvalidValue, which the device leaves
//! out of the thread's last error; a kernel calling cudaGraphLaunch is refused at its
//! launch into a stream (CUDA_ERROR_NOT_SUPPORTED, model/launch.rs). The code past the
//! 255 pending tail launches is the mock's choice, awaiting a record.

use super::*;
use std::collections::VecDeque;

/// `CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH`.
pub(super) const DEVICE_LAUNCH: u64 = 4;

/// The named streams of cuda_device_runtime_api.h.
const TAIL_LAUNCH: u64 = 0x0100_0000_0000_0000;
const FIRE_AND_FORGET: u64 = 0x0200_0000_0000_0000;
const SIBLING: u64 = 0x0300_0000_0000_0000;

/// The guide's limits: fire-and-forget launches in one run of a graph (the H200 refuses
/// the 121st with cudaErrorInvalidValue: recorded), tail launches pending (its code past
/// the limit awaits a recording).
const MAX_FIRE_AND_FORGET: u32 = 120;
const MAX_PENDING_TAILS: usize = 255;

/// How deep fire-and-forget launches may nest (a fired graph's kernel firing another...):
/// the mock runs each nested one on the worker's stack, so it bounds the nesting where
/// the guide gives no number; past it the launch answers cudaErrorInvalidValue, as the
/// H200 does past the 120 fire-and-forget launches of one run (recorded). 24 is the depth
/// legacy dynamic parallelism allowed.
const MAX_FIRE_AND_FORGET_NESTING: u32 = 24;

/// The `cudaError_t`s the device's cudaGraphLaunch answers.
const SUCCESS: i32 = 0;
const INVALID_VALUE: i32 = 1;
const LAUNCH_PENDING_COUNT_EXCEEDED: i32 = 69;

/// `CUgraphInstantiateResult` of a refused device graph.
pub mod instantiate_result {
    pub const NODE_OPERATION_NOT_SUPPORTED: u32 = 3;
}

/// One run of a graph (its execution environment): what its kernels launched.
pub struct GraphEnv {
    /// `cudaGetCurrentGraphExec`: the graph's handle if it is a device graph, else 0.
    current: u64,
    /// How many fire-and-forget launches this run is nested in (0: launched by the host).
    depth: u32,
    launched: parking_lot::Mutex<Launched>,
}

#[derive(Default)]
struct Launched {
    /// Fire-and-forget and sibling launches not yet run.
    fired: Vec<ExecId>,
    /// How many this run has made.
    fired_count: u32,
    tails: Vec<ExecId>,
    /// Whether the graph has queued itself.
    self_tail: bool,
}

impl GraphEnv {
    pub(in crate::model) fn new(current: u64, depth: u32) -> Self {
        GraphEnv {
            current,
            depth,
            launched: parking_lot::Mutex::new(Launched::default()),
        }
    }

    pub fn current(&self) -> u64 {
        self.current
    }

    pub(super) fn depth(&self) -> u32 {
        self.depth
    }

    pub(super) fn take_fired(&self) -> Vec<ExecId> {
        std::mem::take(&mut self.launched.lock().fired)
    }

    pub(super) fn take_tails(&self) -> Vec<ExecId> {
        std::mem::take(&mut self.launched.lock().tails)
    }
}

/// Why a graph cannot be instantiated for device launch, for
/// cuGraphInstantiateWithParams's outputs.
pub struct DeviceGraphRefusal {
    pub err: CuError,
    pub result: u32,
    pub node: Option<NodeId>,
}

impl Driver {
    /// cuda.h's rules for a graph instantiated for device launch: only kernel, memcpy,
    /// memset and child graph nodes, at least one that does work, no kernel launching
    /// kernels (CUDA dynamic parallelism). The H200's answer awaits a recording; cuda.h
    /// names CUDA_ERROR_INVALID_VALUE and CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED.
    pub fn device_graph_check(&self, g: GraphId) -> Result<(), DeviceGraphRefusal> {
        let refuse = |node: Option<NodeId>, why: String| DeviceGraphRefusal {
            err: invalid(format!(
                "graph {g:#x} cannot be launched from the device: {why}"
            )),
            result: instantiate_result::NODE_OPERATION_NOT_SUPPORTED,
            node,
        };
        let mut kernels = Vec::new();
        let mut work = 0;
        {
            let st = self.state.lock();
            let mut graphs = vec![g];
            while let Some(g) = graphs.pop() {
                let body = st.graphs.graph(g).map_err(|err| DeviceGraphRefusal {
                    err,
                    result: 1,
                    node: None,
                })?;
                // In creation order: the node named in hErrNode_out must not depend on
                // a hash map's order.
                for n in &body.order {
                    let Some(node) = body.nodes.get(n) else {
                        continue;
                    };
                    match &node.op {
                        NodeOp::Kernel(k) => kernels.push((*n, k.launch.function)),
                        NodeOp::Memcpy { .. } | NodeOp::Memset { .. } => {}
                        NodeOp::Child(c) => {
                            graphs.push(*c);
                            continue;
                        }
                        op => {
                            return Err(refuse(
                                Some(*n),
                                format!(
                                    "its node {n:#x} is of type {}: a device graph holds only \
                                     kernel, memcpy, memset and child graph nodes",
                                    op.node_type()
                                ),
                            ))
                        }
                    }
                    work += 1;
                }
            }
        }
        // Observed (random_graphs seed 31 line 74, an empty graph): a plain error,
        // CUDA_GRAPH_INSTANTIATE_ERROR with no node. One graph without work was recorded,
        // an empty one; one with only child graphs without work is taken alike.
        if work == 0 {
            return Err(DeviceGraphRefusal {
                err: invalid(format!(
                    "graph {g:#x} cannot be launched from the device: it has no kernel, \
                     memcpy or memset node"
                )),
                result: 1,
                node: None,
            });
        }
        for (n, f) in kernels {
            if self
                .function_launches_on_device(f)
                .map_err(|err| DeviceGraphRefusal {
                    err,
                    result: 1,
                    node: Some(n),
                })?
            {
                return Err(refuse(
                    Some(n),
                    format!(
                        "the kernel of node {n:#x} launches kernels on the device (CUDA \
                         dynamic parallelism)"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A kernel node of `env`'s graph calls `cudaGraphLaunch(exec, stream)`: checked and
    /// queued on `env`; the `cudaError_t`, or why the calling thread faults.
    pub(in crate::model) fn device_graph_launch(
        &self,
        env: &GraphEnv,
        exec: u64,
        stream: u64,
    ) -> Result<i32, String> {
        let e = ExecId::from_handle(exec);
        let mut st = self.state.lock();
        match st.graphs.exec(e) {
            // Recorded on the H200 (device_graphs): the launching kernel faults with an
            // illegal address, even for a graph uploaded with cudaGraphUpload; the
            // device-side call never returns.
            Ok(x) if x.flags & DEVICE_LAUNCH == 0 => {
                return Err(format!(
                    "cudaGraphLaunch on the device of graph exec {exec:#x}, a graph not \
                     instantiated for device launch (the H200 faults)"
                ))
            }
            Ok(x) if x.uploaded.is_some() => {}
            _ => return Ok(INVALID_VALUE),
        }
        let running = st.graphs.device_running.get(&e).is_some_and(|&n| n > 0);
        let mut l = env.launched.lock();
        match stream {
            TAIL_LAUNCH => {
                let itself = exec == env.current;
                if (itself && l.self_tail) || (!itself && running) {
                    return Ok(INVALID_VALUE);
                }
                if l.tails.len() >= MAX_PENDING_TAILS {
                    return Ok(LAUNCH_PENDING_COUNT_EXCEEDED);
                }
                l.self_tail |= itself;
                l.tails.push(e);
            }
            FIRE_AND_FORGET | SIBLING => {
                if running {
                    return Ok(INVALID_VALUE);
                }
                if l.fired_count >= MAX_FIRE_AND_FORGET || env.depth >= MAX_FIRE_AND_FORGET_NESTING
                {
                    return Ok(INVALID_VALUE);
                }
                l.fired_count += 1;
                l.fired.push(e);
            }
            _ => return Ok(INVALID_VALUE),
        }
        *st.graphs.device_running.entry(e).or_default() += 1;
        Ok(SUCCESS)
    }

    /// Runs device-launched graphs in order, each as its own environment (`depth`
    /// fire-and-forget launches deep): its nodes (and the fire-and-forget graphs its
    /// kernels launch), then the tail launches it queued, before the rest of `list`.
    /// A chain of tail launches that outlasts CUMOCK_KERNEL_TIMEOUT (a graph relaunching
    /// itself without end, which a GPU would run forever) ends as a timed-out launch,
    /// CUDA_ERROR_LAUNCH_TIMEOUT, sticky as a kernel's: the host's synchronisation
    /// returns rather than hang.
    pub(super) fn run_device_graphs(
        &'static self,
        list: Vec<ExecId>,
        device: usize,
        bound: &BoundObjects,
        depth: u32,
    ) {
        let started = std::time::Instant::now();
        let limit = crate::diagnostics::settings().kernel_timeout;
        let mut queue: VecDeque<ExecId> = list.into();
        while let Some(e) = queue.pop_front() {
            if limit.is_some_and(|l| started.elapsed() > l) {
                self.device_work_failed(
                    device,
                    CuError::new(
                        cumock_abi::result::CUDA_ERROR_LAUNCH_TIMEOUT,
                        format!(
                            "device graphs launched one another for longer than the kernel \
                             time limit ({:?}, CUMOCK_KERNEL_TIMEOUT); {} launches left undone",
                            limit.unwrap_or_default(),
                            queue.len() + 1
                        ),
                    ),
                );
                let mut st = self.state.lock();
                for left in std::iter::once(e).chain(queue.drain(..)) {
                    st.graphs.device_run_ended(left);
                }
                return;
            }
            let env = GraphEnv::new(e.handle(), depth);
            match self.device_plan(e) {
                Ok(plan) => self.run_steps(&plan.steps, device, bound, &env),
                Err(err) => self.device_work_failed(device, err),
            }
            self.state.lock().graphs.device_run_ended(e);
            for t in env.take_tails().into_iter().rev() {
                queue.push_front(t);
            }
        }
    }

    /// The plan a device launch of `e` runs: the one its upload made, made again where a
    /// module was loaded or a limit set since (the context is the launching graph's,
    /// current on this worker).
    fn device_plan(&self, e: ExecId) -> CuResult<Arc<Plan>> {
        let (kept, stream, ctx) = {
            let st = self.state.lock();
            let (ctx, _) = st.contexts.require_current()?;
            let exec = st.graphs.exec(e)?;
            let kept = exec
                .plan
                .as_ref()
                .filter(|p| p.ctx == ctx && p.epoch == st.launch_epoch)
                .cloned();
            (kept, exec.uploaded.unwrap_or(StreamId::NULL), ctx)
        };
        match kept {
            Some(plan) => Ok(plan),
            None => self.make_plan(e, stream, ctx),
        }
    }
}
