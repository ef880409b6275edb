//! CUDA graphs: a graph is nodes (kernels, copies, memsets, host functions, events, child
//! graphs) and the dependencies between them; an executable graph (CUgraphExec) is a
//! graph checked and put in a topological order once. cuGraphLaunch queues the whole
//! graph as one piece of work on its stream (`Driver::enqueue_work`), so it is
//! asynchronous and ordered like a launch; the stream's worker runs the nodes one after
//! another in that order, which respects every dependency (a GPU may run independent
//! nodes concurrently; running them in sequence orders more, never less). The nodes are
//! prepared for the worker (a kernel node's launch checked and resolved) at the first
//! launch and kept (`Plan`): a setter prepares again only the node it changes.
//!
//! A kernel node keeps a copy of its parameters, made when it is added or set, as the
//! driver does: `kernelParams` points into the caller's memory, which may change or die
//! before the graph runs. Copies, memsets and host functions are built by the C
//! boundary (which alone may read the program's pointers) as `NodeAction`s.

use super::conditional::{self, CondNode};
use super::copies::HostOrDevice;
use super::error::*;
use super::graph_memory::AllocNode;
use super::ids::DevicePtr;
use super::ids::{ContextId, EventId, StreamId};
use super::module::{LaunchRequest, PreparedLaunch};
use super::stream_memops::MemOp;
use super::stream_queues;
use super::textures::BoundObjects;
use super::Driver;
use crate::host_bytes::HostBytes;
use cumock_abi::result::CUDA_ERROR_OUT_OF_MEMORY;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

mod device;
use device::DEVICE_LAUNCH;
pub use device::{DeviceGraphRefusal, GraphEnv};

const GRAPH_TAG: u64 = 0x0067_0000_0000_0000;
const NODE_TAG: u64 = 0x006e_0000_0000_0000;
const EXEC_TAG: u64 = 0x00ec_0000_0000_0000;

/// CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE.
pub const GRAPH_EXEC_UPDATE_FAILURE: u32 = 910;

pub use super::ids::{ExecId, GraphId, NodeId};

/// Work of a node that the C boundary built (a copy, a memset, a host function): it reads
/// or writes the program's memory, which only the boundary may touch.
pub type NodeAction = Arc<dyn Fn() -> CuResult<()> + Send + Sync>;

/// `CUgraphNodeType`.
pub mod node_type {
    pub const KERNEL: i32 = 0;
    pub const MEMCPY: i32 = 1;
    pub const MEMSET: i32 = 2;
    pub const HOST: i32 = 3;
    pub const GRAPH: i32 = 4;
    pub const EMPTY: i32 = 5;
    pub const WAIT_EVENT: i32 = 6;
    pub const EVENT_RECORD: i32 = 7;
    pub const MEM_ALLOC: i32 = 10;
    pub const MEM_FREE: i32 = 11;
    pub const BATCH_MEM_OP: i32 = 12;
    pub const CONDITIONAL: i32 = 13;
}

/// `CUgraphExecUpdateResult`.
pub mod update_result {
    pub const SUCCESS: i32 = 0;
    pub const ERROR: i32 = 1;
    pub const TOPOLOGY_CHANGED: i32 = 2;
    pub const NODE_TYPE_CHANGED: i32 = 3;
    pub const PARAMETERS_CHANGED: i32 = 5;
    pub const UNSUPPORTED_FUNCTION_CHANGE: i32 = 7;
}

/// One memory operand of a memcpy or memset node, as the executable graph's setters and
/// cuGraphExecUpdate compare it: cuda.h lets neither the memory type of a copy's side nor
/// the context and device its memory belongs to change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operand {
    /// `CUmemorytype` as the node names it (1 host, 2 device, 4 unified; a memset's is 2).
    pub memory_type: u32,
    /// The context (None for VMM and pool memory, which have none) and device of the
    /// memory, where the driver knows the address when the node is made; None for
    /// pageable host memory and for a graph allocation not yet mapped (which only a
    /// launch maps): those are compared by memory type alone.
    pub owner: Option<(Option<ContextId>, usize)>,
}

impl Operand {
    /// Whether `new` may replace `self` in an instantiated node.
    fn keeps(&self, new: &Operand) -> bool {
        self.memory_type == new.memory_type
            && match (self.owner, new.owner) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    }
}

/// A memcpy or memset node's operands and dimensions: what cuda.h lets an executable
/// graph's node change (cuGraphExecMemcpyNodeSetParams, cuGraphExecMemsetNodeSetParams,
/// cuGraphExecNodeSetParams, cuGraphExecUpdate) and what not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A one-dimensional copy (the mock's memcpy nodes all are).
    Copy {
        src: Operand,
        dst: Operand,
        bytes: usize,
    },
    Fill {
        dst: Operand,
        element_size: u32,
        width: usize,
        height: usize,
        pitch: usize,
    },
}

impl Shape {
    /// Why `new` may not replace `self` in an instantiated node (cuda.h): a memory type,
    /// context or device changed, an operation of zero bytes, any dimension of a 2D
    /// memset or the height of a 1D one. A 1D memset's width and element size "are
    /// opportunistically allowed if the resulting work maps onto the work resources
    /// already allocated for the node": the mock allows them, as the H200 did for 4-byte
    /// elements 16 -> 8 and 64 wide and 2-byte elements (probe graph_exec_update).
    pub fn refuses(&self, new: &Shape) -> Option<String> {
        match (self, new) {
            (Shape::Copy { .. }, Shape::Copy { bytes: 0, .. })
            | (Shape::Fill { .. }, Shape::Fill { width: 0, .. }) => {
                Some("an operation of zero bytes cannot be set on an executable graph".into())
            }
            (Shape::Copy { src, dst, .. }, Shape::Copy { src: s, dst: d, .. }) => {
                if !src.keeps(s) {
                    Some(format!(
                        "the source changes memory type or owner ({src:?} -> {s:?})"
                    ))
                } else if !dst.keeps(d) {
                    Some(format!(
                        "the destination changes memory type or owner ({dst:?} -> {d:?})"
                    ))
                } else {
                    None
                }
            }
            (
                Shape::Fill {
                    dst,
                    element_size,
                    width,
                    height,
                    pitch,
                },
                Shape::Fill {
                    dst: d,
                    element_size: e,
                    width: w,
                    height: h,
                    pitch: p,
                },
            ) => {
                if !dst.keeps(d) {
                    Some(format!(
                        "the destination changes memory type or owner ({dst:?} -> {d:?})"
                    ))
                } else if *height > 1 && (element_size, width, height, pitch) != (e, w, h, p) {
                    Some(format!(
                        "a 2D memset's dimensions cannot change ({width}x{height} of {element_size} \
                         bytes, pitch {pitch} -> {w}x{h} of {e}, pitch {p})"
                    ))
                } else if height != h {
                    Some(format!("a 1D memset's height cannot change (to {h})"))
                } else {
                    None
                }
            }
            _ => Some("the node's type changes".into()),
        }
    }
}

/// A kernel node: the launch, with its own copy of the parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelNode {
    pub launch: LaunchRequest,
    /// The offset of each parameter in `launch.params` (for cuGraphKernelNodeGetParams).
    pub offsets: Vec<usize>,
    /// The address of each parameter in the node's own `launch.params`, once
    /// cuGraphKernelNodeGetParams asked: the `kernelParams` array it hands out.
    pub arg_addrs: Vec<u64>,
    /// Attributes kept as data (cuGraphKernelNodeSetAttribute); the cooperative and
    /// cluster ones are the launch's own (`launch.cooperative`, `launch.cluster`).
    pub attrs: KernelAttrs,
}

/// The kernel-node attributes the executor has no use for but a program reads back.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelAttrs {
    /// `CUaccessPolicyWindow` as given (32 bytes): an L2 persistence hint, which a host
    /// executor has no cache to apply to.
    pub access_policy_window: [u32; 8],
    /// CU_LAUNCH_ATTRIBUTE_PRIORITY: blocks of a host executor run in no priority order.
    pub priority: i32,
    /// CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP (two bytes) and _MEM_SYNC_DOMAIN: which
    /// domain a kernel's memory fences cover; a host executor's fences cover everything.
    pub mem_sync_domain_map: [u32; 1],
    pub mem_sync_domain: u32,
}

/// Kernel-node attributes (`CUlaunchAttributeID`) the mock keeps.
pub mod kernel_attr {
    pub const ACCESS_POLICY_WINDOW: i32 = 1;
    pub const COOPERATIVE: i32 = 2;
    pub const CLUSTER_DIMENSION: i32 = 4;
    pub const PRIORITY: i32 = 8;
    pub const MEM_SYNC_DOMAIN_MAP: i32 = 9;
    pub const MEM_SYNC_DOMAIN: i32 = 10;
}

impl KernelNode {
    /// The attribute `id`'s value, as the 64-byte `CUlaunchAttributeValue` union.
    pub fn attribute(&self, id: i32) -> CuResult<[u32; 16]> {
        let mut v = [0u32; 16];
        match id {
            kernel_attr::ACCESS_POLICY_WINDOW => {
                v[..8].copy_from_slice(&self.attrs.access_policy_window)
            }
            kernel_attr::COOPERATIVE => v[0] = u32::from(self.launch.cooperative),
            kernel_attr::CLUSTER_DIMENSION => {
                v[..3].copy_from_slice(&self.launch.cluster.unwrap_or([0; 3]))
            }
            kernel_attr::PRIORITY => v[0] = self.attrs.priority as u32,
            kernel_attr::MEM_SYNC_DOMAIN_MAP => v[0] = self.attrs.mem_sync_domain_map[0],
            kernel_attr::MEM_SYNC_DOMAIN => v[0] = self.attrs.mem_sync_domain,
            _ => return Err(unsupported_attribute(id)),
        }
        Ok(v)
    }

    /// Sets the attribute `id` from the 64-byte union `v`: the cooperative flag and the
    /// cluster shape change how the node's kernel is launched (checked at launch, as a
    /// cuLaunchKernelEx with them is); the others are kept.
    pub fn set_attribute(&mut self, id: i32, v: &[u32; 16]) -> CuResult<()> {
        match id {
            kernel_attr::ACCESS_POLICY_WINDOW => {
                self.attrs.access_policy_window.copy_from_slice(&v[..8])
            }
            kernel_attr::COOPERATIVE => self.launch.cooperative = v[0] != 0,
            kernel_attr::CLUSTER_DIMENSION => {
                let dims = [v[0], v[1], v[2]];
                self.launch.cluster = (dims != [0; 3]).then_some(dims);
            }
            kernel_attr::PRIORITY => self.attrs.priority = v[0] as i32,
            // The map is two bytes (default, remote); the domain one enum.
            kernel_attr::MEM_SYNC_DOMAIN_MAP => self.attrs.mem_sync_domain_map = [v[0] & 0xffff],
            kernel_attr::MEM_SYNC_DOMAIN => self.attrs.mem_sync_domain = v[0],
            _ => return Err(unsupported_attribute(id)),
        }
        Ok(())
    }

    /// New parameters (cuGraphKernelNodeSetParams, cuGraphExecKernelNodeSetParams) leave
    /// the attributes as they were: `self` takes `old`'s.
    fn keeping_attributes_of(mut self, old: &KernelNode) -> Self {
        self.attrs = old.attrs.clone();
        self.launch.cooperative = old.launch.cooperative;
        self.launch.cluster = old.launch.cluster;
        self
    }
}

fn unsupported_attribute(id: i32) -> CuError {
    not_supported(format!(
        "kernel-node attribute {id} is not emulated (the mock keeps the access policy \
         window, cooperative, cluster dimension, priority and memory sync domain attributes)"
    ))
}

/// What a node does.
#[derive(Clone)]
pub enum NodeOp {
    Kernel(KernelNode),
    Memcpy {
        action: NodeAction,
        what: String,
        shape: Shape,
        /// The `CUDA_MEMCPY3D` it was given, as bytes (cuGraphMemcpyNodeGetParams); a
        /// captured copy's as the capture made it (`exports::graphs::captured_copy`).
        given: Arc<[u8]>,
    },
    Memset {
        action: NodeAction,
        what: String,
        shape: Shape,
        /// The `CUDA_MEMSET_NODE_PARAMS` it was given, as bytes
        /// (cuGraphMemsetNodeGetParams); a captured memset's as the capture made it.
        given: Arc<[u8]>,
    },
    Host {
        action: NodeAction,
        what: String,
        /// The function and its data, as given (cuGraphHostNodeGetParams).
        given: (usize, usize),
    },
    Empty,
    EventRecord(EventId),
    EventWait(EventId),
    /// A copy of the child graph, taken when the node was added (as cuda.h says), kept as
    /// a graph the node owns: cuGraphChildGraphNodeGetGraph hands it out, and changes to
    /// it are the node's ("This call does not clone the graph").
    Child(GraphId),
    /// A graph allocation (graph_memory.rs): its address is `dptr`, fixed when added.
    MemAlloc(Arc<AllocNode>),
    /// Frees the graph allocation at this address.
    MemFree(u64),
    /// IF, WHILE or SWITCH over body graphs (conditional.rs).
    Conditional(Arc<CondNode>),
    /// Stream memory operations (cuGraphAddBatchMemOpNode, or captured).
    BatchMemOp(Arc<MemOpNode>),
}

/// A batch memory-operation node: its operations, checked when it was made or set, run in
/// their order when the graph's stream reaches the node (model/stream_memops.rs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemOpNode {
    /// The node's context (`CUDA_BATCH_MEM_OP_NODE_PARAMS::ctx`, NULL taken as the
    /// current one) and its device, whose view of memory the operations use.
    pub ctx: ContextId,
    pub device: usize,
    pub ops: Vec<MemOp>,
    /// The operations as given, `CUstreamBatchMemOpParams` (48-byte unions): the node's
    /// own copy, which cuGraphBatchMemOpNodeGetParams hands out.
    pub given: Vec<[u64; 6]>,
    pub flags: u32,
}

impl MemOpNode {
    /// Why an executable graph's node may not take `new`'s operations: cuda.h lets only
    /// the words' addresses, the values and a wait's condition change, not the context,
    /// the count, the operations' types, a wait's FLUSH bit or a barrier.
    pub fn refuses(&self, new: &MemOpNode) -> Option<String> {
        if self.ctx != new.ctx {
            return Some("the node's context cannot change".into());
        }
        if self.ops.len() != new.ops.len() {
            return Some(format!(
                "the count cannot change ({} operations, not {})",
                self.ops.len(),
                new.ops.len()
            ));
        }
        for (i, (a, b)) in self.given.iter().zip(&new.given).enumerate() {
            // The type, and for a wait its FLUSH bit; a barrier's flags share the tag's word.
            let flush = |w: &[u64; 6]| w[3] as u32 & super::stream_memops::WAIT_VALUE_FLUSH;
            if a[0] as u32 != b[0] as u32 {
                return Some(format!("operation {i}: its type cannot change"));
            }
            match self.ops[i] {
                MemOp::Wait { .. } if flush(a) != flush(b) => {
                    return Some(format!(
                        "operation {i}: CU_STREAM_WAIT_VALUE_FLUSH cannot change"
                    ))
                }
                MemOp::Barrier if a[0] != b[0] => {
                    return Some(format!("operation {i}: a barrier cannot change"))
                }
                _ => {}
            }
        }
        None
    }
}

impl NodeOp {
    /// The graphs the node owns (a child graph, a conditional node's bodies): they go
    /// with it, and are copied with it.
    fn owned_graphs(&self) -> Vec<GraphId> {
        match self {
            NodeOp::Child(g) => vec![*g],
            NodeOp::Conditional(c) => c.bodies.clone(),
            _ => Vec::new(),
        }
    }

    pub fn node_type(&self) -> i32 {
        match self {
            NodeOp::Kernel(_) => node_type::KERNEL,
            NodeOp::Memcpy { .. } => node_type::MEMCPY,
            NodeOp::Memset { .. } => node_type::MEMSET,
            NodeOp::Host { .. } => node_type::HOST,
            NodeOp::Empty => node_type::EMPTY,
            NodeOp::EventRecord(_) => node_type::EVENT_RECORD,
            NodeOp::EventWait(_) => node_type::WAIT_EVENT,
            NodeOp::Child(_) => node_type::GRAPH,
            NodeOp::MemAlloc(_) => node_type::MEM_ALLOC,
            NodeOp::MemFree(_) => node_type::MEM_FREE,
            NodeOp::Conditional(_) => node_type::CONDITIONAL,
            NodeOp::BatchMemOp(_) => node_type::BATCH_MEM_OP,
        }
    }

    /// A label for cuGraphDebugDotPrint: the node's type (cuda.h's name, or the
    /// runtime's with RUNTIME_TYPES) and what identifies it (a kernel's function, a child
    /// graph's handle), then its parameters where `flags` ask for its type's (or VERBOSE).
    fn label(&self, driver: &Driver, flags: u32) -> String {
        use dot_flags::*;
        let on = |flag: u32| flags & (VERBOSE | flag) != 0;
        // RUNTIME_TYPES picks a naming, not more data: VERBOSE leaves cuda.h's names.
        let type_name = if flags & RUNTIME_TYPES != 0 {
            RUNTIME_NAMES
        } else {
            DRIVER_NAMES
        }
        .iter()
        .find(|(t, _)| *t == self.node_type())
        .map_or("?", |(_, name)| name);
        let details = match self {
            NodeOp::Kernel(k) => {
                let name = driver
                    .function_name(k.launch.function)
                    .unwrap_or_else(|_| "?".into());
                let mut d = format!(" {name}");
                if on(KERNEL_NODE_PARAMS) {
                    let _ = write!(
                        d,
                        " grid {:?} block {:?} shared {} params {} bytes",
                        k.launch.grid,
                        k.launch.block,
                        k.launch.shared,
                        k.launch.params.len()
                    );
                }
                if on(HANDLES) {
                    let _ = write!(d, " function {:#x}", k.launch.function);
                }
                d
            }
            NodeOp::Memcpy { what, .. } if on(MEMCPY_NODE_PARAMS) => format!(" {what}"),
            NodeOp::Memset { what, .. } if on(MEMSET_NODE_PARAMS) => format!(" {what}"),
            NodeOp::Host { what, given, .. } if on(HOST_NODE_PARAMS) => {
                format!(" function {what} data {:#x}", given.1)
            }
            NodeOp::EventRecord(e) | NodeOp::EventWait(e) if on(EVENT_NODE_PARAMS) => {
                format!(" event {e:#x}")
            }
            NodeOp::Child(g) => format!(" {g:#x}"),
            NodeOp::MemAlloc(a) if on(MEM_ALLOC_NODE_PARAMS) => format!(
                " {} bytes at {:#x} on device {}",
                a.bytesize, a.dptr, a.device
            ),
            NodeOp::MemFree(p) if on(MEM_FREE_NODE_PARAMS) => format!(" {p:#x}"),
            NodeOp::Conditional(c) if on(CONDITIONAL_NODE_PARAMS) => format!(
                " {} on handle {:#x}, {} bodies",
                ["IF", "WHILE", "SWITCH"]
                    .get(c.kind as usize)
                    .unwrap_or(&"?"),
                c.handle,
                c.bodies.len()
            ),
            _ => String::new(),
        };
        format!("{type_name}{details}")
    }
}

/// cuGraphDebugDotPrint's `CUgraphDebugDot_flags` that the mock's DOT output honours
/// (the others, for node types the mock does not build, change nothing). The layout of
/// the output is the mock's own: the H200's has not been recorded.
pub mod dot_flags {
    pub const VERBOSE: u32 = 1;
    pub const RUNTIME_TYPES: u32 = 1 << 1;
    pub const KERNEL_NODE_PARAMS: u32 = 1 << 2;
    pub const MEMCPY_NODE_PARAMS: u32 = 1 << 3;
    pub const MEMSET_NODE_PARAMS: u32 = 1 << 4;
    pub const HOST_NODE_PARAMS: u32 = 1 << 5;
    pub const EVENT_NODE_PARAMS: u32 = 1 << 6;
    pub const HANDLES: u32 = 1 << 10;
    pub const MEM_ALLOC_NODE_PARAMS: u32 = 1 << 11;
    pub const MEM_FREE_NODE_PARAMS: u32 = 1 << 12;
    pub const EXTRA_TOPO_INFO: u32 = 1 << 14;
    pub const CONDITIONAL_NODE_PARAMS: u32 = 1 << 15;

    use super::node_type::*;

    /// cuda.h's names of the node types (CU_GRAPH_NODE_TYPE_*).
    pub const DRIVER_NAMES: &[(i32, &str)] = &[
        (KERNEL, "KERNEL"),
        (MEMCPY, "MEMCPY"),
        (MEMSET, "MEMSET"),
        (HOST, "HOST"),
        (GRAPH, "GRAPH"),
        (EMPTY, "EMPTY"),
        (WAIT_EVENT, "WAIT_EVENT"),
        (EVENT_RECORD, "EVENT_RECORD"),
        (MEM_ALLOC, "MEM_ALLOC"),
        (MEM_FREE, "MEM_FREE"),
        (BATCH_MEM_OP, "BATCH_MEM_OP"),
        (CONDITIONAL, "CONDITIONAL"),
    ];

    /// cuda_runtime_api.h's names of the same types (cudaGraphNodeType*).
    pub const RUNTIME_NAMES: &[(i32, &str)] = &[
        (KERNEL, "cudaGraphNodeTypeKernel"),
        (MEMCPY, "cudaGraphNodeTypeMemcpy"),
        (MEMSET, "cudaGraphNodeTypeMemset"),
        (HOST, "cudaGraphNodeTypeHost"),
        (GRAPH, "cudaGraphNodeTypeGraph"),
        (EMPTY, "cudaGraphNodeTypeEmpty"),
        (WAIT_EVENT, "cudaGraphNodeTypeWaitEvent"),
        (EVENT_RECORD, "cudaGraphNodeTypeEventRecord"),
        (MEM_ALLOC, "cudaGraphNodeTypeMemAlloc"),
        (MEM_FREE, "cudaGraphNodeTypeMemFree"),
        (CONDITIONAL, "cudaGraphNodeTypeConditional"),
    ];
}

#[derive(Clone)]
pub struct GraphNode {
    pub op: NodeOp,
    /// The nodes this one depends on, in the order they were given.
    pub deps: Vec<NodeId>,
}

/// A graph's nodes, in the order they were added.
#[derive(Clone, Default)]
pub struct GraphBody {
    pub order: Vec<NodeId>,
    pub nodes: HashMap<NodeId, GraphNode>,
    /// A cuGraphAddMemAllocNode or cuGraphAddMemFreeNode call got as far as making the
    /// graph one with memory nodes before it failed (`Graphs::mark_memory_nodes`): the
    /// graph keeps that standing without the node.
    memory_marked: bool,
    /// Its edges (from, to) in the order they were made, whether with a node or by
    /// cuGraphAddDependencies (`edges_by_source`).
    edge_log: Vec<(NodeId, NodeId)>,
}

impl GraphBody {
    /// The nodes in an order in which every node follows its dependencies (Kahn's
    /// algorithm, taking ready nodes in the order they were added, so that the order is
    /// the same every time); a cycle is an error.
    pub fn topological(&self) -> CuResult<Vec<NodeId>> {
        let mut pending: HashMap<NodeId, usize> = self
            .order
            .iter()
            .map(|n| (*n, self.nodes[n].deps.len()))
            .collect();
        let mut done = Vec::with_capacity(self.order.len());
        while done.len() < self.order.len() {
            let before = done.len();
            for n in &self.order {
                if pending.get(n) == Some(&0) {
                    pending.remove(n);
                    done.push(*n);
                    for m in &self.order {
                        let deps = &self.nodes[m].deps;
                        let k = deps.iter().filter(|d| *d == n).count();
                        if let Some(c) = pending.get_mut(m) {
                            *c -= k;
                        }
                    }
                }
            }
            if done.len() == before {
                return Err(invalid(
                    "the graph's dependencies form a cycle: it has no order to run in",
                ));
            }
        }
        Ok(done)
    }

    /// The node a cycle is reported at: a depth-first walk along dependencies, starting
    /// from the nodes newest first and following each node's dependencies in the order
    /// they were made, names the first node it reaches again while still walking from
    /// it. Fitted to the three cycles the H200 named a node of (random_graphs session 18:
    /// seed 7 line 169, two cycles, n30; seed 13 line 424, a clone's, n58; seed 37 line
    /// 120, n3), where the first or last node of a cycle added would each miss one.
    pub fn cycle_node(&self) -> Option<NodeId> {
        #[derive(Clone, Copy, PartialEq)]
        enum Walk {
            Open,
            Done,
        }
        let mut seen: HashMap<NodeId, Walk> = HashMap::new();
        for start in self.order.iter().rev() {
            if seen.contains_key(start) {
                continue;
            }
            seen.insert(*start, Walk::Open);
            let mut path = vec![(*start, 0usize)];
            while let Some((n, next)) = path.last_mut() {
                let Some(d) = self.nodes[n].deps.get(*next).copied() else {
                    seen.insert(*n, Walk::Done);
                    path.pop();
                    continue;
                };
                *next += 1;
                match seen.get(&d) {
                    Some(Walk::Open) => return Some(d),
                    Some(Walk::Done) => {}
                    None => {
                        seen.insert(d, Walk::Open);
                        path.push((d, 0));
                    }
                }
            }
        }
        None
    }

    /// Whether it has allocation or free nodes (cuda.h: then it cannot be cloned, be a
    /// child graph, or have two executable graphs at once).
    pub fn has_memory_nodes(&self) -> bool {
        self.memory_marked
            || self
                .nodes
                .values()
                .any(|n| matches!(n.op, NodeOp::MemAlloc(_) | NodeOp::MemFree(_)))
    }

    /// The addresses that free nodes among `deps` and their ancestors free, each with
    /// how many such free nodes free it: an allocation node after them may take the
    /// address again (graph_memory.rs).
    pub fn frees_before(&self, deps: &[NodeId]) -> HashMap<u64, u32> {
        let mut seen = std::collections::HashSet::new();
        let mut stack = deps.to_vec();
        let mut freed = HashMap::new();
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            let node = &self.nodes[&n];
            if let NodeOp::MemFree(p) = node.op {
                *freed.entry(p).or_insert(0) += 1;
            }
            stack.extend(node.deps.iter().copied());
        }
        freed
    }

    /// The addresses of its allocation nodes.
    pub fn allocations(&self) -> Vec<u64> {
        self.order
            .iter()
            .filter_map(|n| match &self.nodes[n].op {
                NodeOp::MemAlloc(a) => Some(a.dptr),
                _ => None,
            })
            .collect()
    }

    /// Its allocations (true) and frees (false) in the order `order` runs them.
    fn memory_ops(&self, order: &[NodeId]) -> Vec<(bool, u64)> {
        order
            .iter()
            .filter_map(|n| match &self.nodes[n].op {
                NodeOp::MemAlloc(a) => Some((true, a.dptr)),
                NodeOp::MemFree(p) => Some((false, *p)),
                _ => None,
            })
            .collect()
    }

    /// Edges as cuGraphGetEdges lists them: by the order of `from`'s addition, and one
    /// node's edges in the order they were made. A list one short on the H200 always left
    /// out the last edge of the last node so ordered (random_graphs: 17 of 17 short
    /// lists, e.g. seed 4 line 101; seed 30 line 173: of n14's edges, n14 -> n1, made by
    /// a cuGraphAddDependencies after n20 was added with n14 -> n20).
    pub fn edges_by_source(&self) -> Vec<(NodeId, NodeId)> {
        let mut by_source: HashMap<NodeId, Vec<NodeId>> = HashMap::new();
        let mut listed = std::collections::HashSet::new();
        for &(from, to) in &self.edge_log {
            let live = self.nodes.get(&to).is_some_and(|n| n.deps.contains(&from));
            if live && listed.insert((from, to)) {
                by_source.entry(from).or_default().push(to);
            }
        }
        // Every edge is made by `Graphs::add` or `add_dependencies`, which log it.
        debug_assert_eq!(
            listed.len(),
            self.nodes.values().map(|n| n.deps.len()).sum::<usize>()
        );
        self.order
            .iter()
            .flat_map(|from| {
                by_source
                    .remove(from)
                    .unwrap_or_default()
                    .into_iter()
                    .map(move |to| (*from, to))
            })
            .collect()
    }

    /// Its nodes without dependencies, as cuGraphGetRootNodes lists them: the last added
    /// first. A list one short on the H200 always left out the first root added
    /// (random_graphs: 12 of 12 short lists, e.g. seed 10 line 15, seed 32 line 101 with
    /// 4 of 5); the reverse order is the simplest that fits them all.
    pub fn roots(&self) -> Vec<NodeId> {
        self.order
            .iter()
            .rev()
            .filter(|n| self.nodes[*n].deps.is_empty())
            .copied()
            .collect()
    }

    /// Edges as (from, to), by the order of `to`'s addition, then its dependencies' order.
    pub fn edges(&self) -> Vec<(NodeId, NodeId)> {
        self.order
            .iter()
            .flat_map(|to| self.nodes[to].deps.iter().map(move |from| (*from, *to)))
            .collect()
    }
}

/// An executable graph: the graph's nodes as instantiated, under the original graph's
/// node handles (cuGraphExecKernelNodeSetParams names them so).
pub struct GraphExec {
    /// Its nodes ready to run, made at its first launch and kept for the next ones.
    plan: Option<Arc<Plan>>,
    /// The graph's own kernel nodes as prepared, with the launch each was prepared from:
    /// a plan made again (after cuGraphExecUpdate, or in another context) prepares only
    /// the nodes whose launch changed.
    prepared: HashMap<NodeId, (LaunchRequest, Arc<PreparedLaunch>)>,
    /// The context `prepared` was prepared in, and `State::launch_epoch` then.
    prepared_in: Option<(ContextId, u64)>,
    /// Counts the changes of its nodes: a plan made while a setter ran is not kept.
    generation: u64,
    body: GraphBody,
    order: Vec<NodeId>,
    /// The graph it was instantiated from.
    graph: GraphId,
    /// CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH: a launch frees the allocations of
    /// the last one that are still live first.
    auto_free: bool,
    /// The flags it was instantiated with (cuGraphExecGetFlags).
    flags: u64,
    /// Its allocation (true) and free (false) nodes' addresses, in its order.
    memory_ops: Vec<(bool, u64)>,
    /// The bodies of its conditional nodes (at any depth) as instantiated.
    bodies: HashMap<GraphId, GraphBody>,
    /// Its nodes disabled by cuGraphNodeSetEnabled: they run as empty nodes.
    disabled: std::collections::HashSet<NodeId>,
    /// A device graph's upload (cuGraphUpload, or its first launch from the host), with
    /// the stream: until then the device cannot launch it (graphs/device.rs).
    uploaded: Option<StreamId>,
}

#[derive(Default)]
pub struct Graphs {
    graphs: HashMap<GraphId, GraphBody>,
    /// Which graph each live node belongs to.
    owner: HashMap<NodeId, GraphId>,
    execs: HashMap<ExecId, GraphExec>,
    /// Graphs that are conditional nodes' bodies: the nodes own them.
    pub bodies: std::collections::HashSet<GraphId>,
    /// For each graph made by cuGraphClone: original node -> its copy
    /// (cuGraphNodeFindInClone).
    clones: HashMap<GraphId, HashMap<NodeId, NodeId>>,
    next: u64,
    /// Handles of nodes cuGraphDestroyNode destroyed, the last first: the next node made
    /// (added, or a clone's) takes the last one, as on the H200, where a destroyed node's
    /// handle given as a dependency named the node made after its destruction (random
    /// graphs seeds 8, 32 and 40: `dead:n13` the next node added, a clone's first node).
    freed_nodes: Vec<NodeId>,
    /// Device graphs launched from the device and not yet complete, with how many
    /// launches of each (a self-relaunch makes two).
    device_running: HashMap<ExecId, u32>,
}

impl Graphs {
    /// One device launch of `e` has ended (run, or dropped by the time limit).
    pub(super) fn device_run_ended(&mut self, e: ExecId) {
        if let Some(n) = self.device_running.get_mut(&e) {
            *n -= 1;
            if *n == 0 {
                self.device_running.remove(&e);
            }
        }
    }

    /// Whether `g`, or a graph its nodes own (child graphs, conditional bodies) at any
    /// depth, has memory nodes.
    pub fn has_memory_nodes_deep(&self, g: GraphId) -> bool {
        let Ok(body) = self.graph(g) else {
            return false;
        };
        body.has_memory_nodes()
            || body.nodes.values().any(|n| {
                n.op.owned_graphs()
                    .iter()
                    .any(|b| self.has_memory_nodes_deep(*b))
            })
    }

    fn fresh(&mut self, tag: u64) -> u64 {
        self.next += 1;
        tag | self.next
    }

    /// A handle for a new node: the last destroyed node's, or a fresh one.
    fn fresh_node(&mut self) -> NodeId {
        match self.freed_nodes.pop() {
            Some(n) => n,
            None => NodeId::from_handle(self.fresh(NODE_TAG)),
        }
    }

    pub fn graph(&self, g: GraphId) -> CuResult<&GraphBody> {
        self.graphs
            .get(&g)
            .ok_or_else(|| invalid_handle(format!("{g:#x} is not a live graph")))
    }

    fn graph_mut(&mut self, g: GraphId) -> CuResult<&mut GraphBody> {
        self.graphs
            .get_mut(&g)
            .ok_or_else(|| invalid_handle(format!("{g:#x} is not a live graph")))
    }

    pub fn create(&mut self) -> GraphId {
        let g = GraphId::from_handle(self.fresh(GRAPH_TAG));
        self.graphs.insert(g, GraphBody::default());
        g
    }

    pub fn destroy(&mut self, g: GraphId) -> CuResult<()> {
        let body = self
            .graphs
            .remove(&g)
            .ok_or_else(|| invalid_handle(format!("{g:#x} is not a live graph")))?;
        self.clones.remove(&g);
        for n in &body.order {
            self.owner.remove(n);
            // A node's child graph and conditional bodies are its own: they go with it.
            for b in body.nodes[n].op.owned_graphs() {
                self.bodies.remove(&b);
                let _ = self.destroy(b);
            }
        }
        Ok(())
    }

    /// A node of a live graph, and the graph.
    pub fn node(&self, n: NodeId) -> CuResult<(GraphId, &GraphNode)> {
        let g = *self
            .owner
            .get(&n)
            .ok_or_else(|| invalid(format!("{n:#x} is not a node of a live graph")))?;
        Ok((g, &self.graphs[&g].nodes[&n]))
    }

    fn node_mut(&mut self, n: NodeId) -> CuResult<&mut GraphNode> {
        let g = self.node(n)?.0;
        Ok(self
            .graphs
            .get_mut(&g)
            .and_then(|b| b.nodes.get_mut(&n))
            .expect("owner is kept with the graphs"))
    }

    /// Checks that `deps` are distinct nodes of `g`.
    fn check_deps(&self, g: GraphId, deps: &[NodeId]) -> CuResult<()> {
        self.check_dep_owners(g, deps)?;
        check_distinct(deps)
    }

    /// Checks that `deps` are nodes of `g` (not that they are distinct).
    fn check_dep_owners(&self, g: GraphId, deps: &[NodeId]) -> CuResult<()> {
        for (i, d) in deps.iter().enumerate() {
            if self.owner.get(d) != Some(&g) {
                return Err(invalid(format!(
                    "dependency {i} ({d:#x}) is not a node of graph {g:#x}"
                )));
            }
        }
        Ok(())
    }

    /// A memory node's addition passed the checks of its graph, its dependencies' owner
    /// and (an allocation) its parameters: from here on the graph counts as one with
    /// memory nodes even if the call fails later, on a dependency given twice or (a free
    /// node) an address no graph allocated. The H200 answered so in random_graphs (seeds
    /// 1-40: every such failed call was followed by the answers of a graph with memory
    /// nodes: cuGraphClone, a child graph of it and cuGraphDestroyNode NOT_SUPPORTED,
    /// e.g. seed 15 line 63, seed 20 line 6); a call refused on its graph, a dependency
    /// of another graph, a NULL or destroyed one, or an allocation's parameters left the
    /// graph as it was (seeds 14 line 26, 22 line 18, 25 line 40).
    fn mark_memory_nodes(&mut self, g: GraphId) -> CuResult<()> {
        self.graph_mut(g)?.memory_marked = true;
        Ok(())
    }

    pub fn add(&mut self, g: GraphId, deps: &[NodeId], op: NodeOp) -> CuResult<NodeId> {
        self.graph(g)?;
        self.check_deps(g, deps)?;
        let n = self.fresh_node();
        let body = self.graph_mut(g)?;
        body.order.push(n);
        body.edge_log.extend(deps.iter().map(|d| (*d, n)));
        body.nodes.insert(
            n,
            GraphNode {
                op,
                deps: deps.to_vec(),
            },
        );
        self.owner.insert(n, g);
        Ok(n)
    }

    /// cuGraphAddDependencies: every edge's nodes are checked first (nodes of `g`, not one
    /// node twice); then the edges are added in turn, and one that exists already (made
    /// by this call too) ends the call with the edges before it kept. The H200's edge
    /// and root counts after 230 failed calls of random_graphs fit only this (e.g. seed
    /// 4 line 64: [n1->n3,n1->n5,n1->n5] refused, n1->n3 and n1->n5 kept; seed 30 line
    /// 148: n14 -> n1 three times refused, n14 -> n1 among the 13 edges after; adding
    /// none puts 6 more seeds of 40 out of step).
    pub fn add_dependencies(&mut self, g: GraphId, edges: &[(NodeId, NodeId)]) -> CuResult<()> {
        for &(from, to) in edges {
            self.check_deps(g, &[from, to])?;
        }
        let body = self.graph_mut(g)?;
        for &(from, to) in edges {
            let deps = &mut body.nodes.get_mut(&to).expect("checked").deps;
            if deps.contains(&from) {
                return Err(invalid(format!(
                    "the dependency {from:#x} -> {to:#x} exists already"
                )));
            }
            deps.push(from);
            body.edge_log.push((from, to));
        }
        Ok(())
    }

    /// cuGraphRemoveDependencies: each edge must exist (cuda.h: "Specifying a
    /// non-existing dependency will return an error").
    /// Whether `g`'s dependencies may be removed at all. The H200 refused every removal
    /// from a graph with memory nodes before looking at the edges, existing or not
    /// (random_graphs: 61 of 61 calls, e.g. seed 30 line 20), or at a NULL `from` array
    /// (session 18, seed 38 line 156).
    pub fn dependencies_removable(&self, g: GraphId) -> CuResult<()> {
        if self.graph(g)?.has_memory_nodes() {
            return Err(not_supported(format!(
                "graph {g:#x} has memory allocation or free nodes: its dependencies cannot be removed"
            )));
        }
        Ok(())
    }

    pub fn remove_dependencies(&mut self, g: GraphId, edges: &[(NodeId, NodeId)]) -> CuResult<()> {
        self.dependencies_removable(g)?;
        for (i, &(from, to)) in edges.iter().enumerate() {
            self.check_deps(g, &[from, to])?;
            let present = self.graph(g)?.nodes[&to].deps.contains(&from);
            if !present || edges[..i].contains(&(from, to)) {
                return Err(invalid(format!(
                    "there is no dependency {from:#x} -> {to:#x} to remove"
                )));
            }
        }
        let body = self.graph_mut(g)?;
        for &(from, to) in edges {
            body.nodes
                .get_mut(&to)
                .expect("checked")
                .deps
                .retain(|d| *d != from);
            body.edge_log.retain(|e| *e != (from, to));
        }
        Ok(())
    }

    /// `body` under new node handles (its dependencies renamed alike); returns it and
    /// the map old -> new.
    fn with_fresh_nodes(&mut self, body: GraphBody) -> (GraphBody, HashMap<NodeId, NodeId>) {
        let map: HashMap<NodeId, NodeId> =
            body.order.iter().map(|n| (*n, self.fresh_node())).collect();
        let renamed = GraphBody {
            memory_marked: body.memory_marked,
            order: body.order.iter().map(|n| map[n]).collect(),
            edge_log: body
                .edge_log
                .iter()
                .filter_map(|(from, to)| Some((*map.get(from)?, *map.get(to)?)))
                .collect(),
            nodes: body
                .nodes
                .into_iter()
                .map(|(n, node)| {
                    let deps = node.deps.iter().map(|d| map[d]).collect();
                    (map[&n], GraphNode { deps, op: node.op })
                })
                .collect(),
        };
        (renamed, map)
    }

    /// A copy of `g` under new node handles (conditional nodes with copies of their
    /// bodies); returns it and the map old -> new.
    fn copy_body(&mut self, g: GraphId) -> CuResult<(GraphBody, HashMap<NodeId, NodeId>)> {
        let mut body = self.graph(g)?.clone();
        // In the order the nodes were added: the copies' handles, and the first copy
        // that fails, are the same every time.
        for n in body.order.clone() {
            let node = body.nodes.get_mut(&n).expect("order lists the nodes");
            if let NodeOp::Child(c) = &node.op {
                let copy = self.child_copy(*c)?;
                node.op = NodeOp::Child(copy);
            }
            if let NodeOp::Conditional(c) = &node.op {
                let mut copy = (**c).clone();
                copy.bodies = c
                    .bodies
                    .iter()
                    .map(|b| self.clone_graph(*b))
                    .collect::<CuResult<_>>()?;
                self.bodies.extend(copy.bodies.iter().copied());
                node.op = NodeOp::Conditional(Arc::new(copy));
            }
        }
        Ok(self.with_fresh_nodes(body))
    }

    pub fn clone_graph(&mut self, g: GraphId) -> CuResult<GraphId> {
        let (copy, map) = self.copy_body(g)?;
        let c = GraphId::from_handle(self.fresh(GRAPH_TAG));
        for n in &copy.order {
            self.owner.insert(*n, c);
        }
        self.graphs.insert(c, copy);
        self.clones.insert(c, map);
        Ok(c)
    }

    /// cuGraphNodeFindInClone: the copy in `clone` (made by cuGraphClone) of `original`,
    /// while it is still a node of `clone`.
    pub fn find_in_clone(&self, original: NodeId, clone: GraphId) -> CuResult<NodeId> {
        self.graph(clone)?;
        let copy = self
            .clones
            .get(&clone)
            .ok_or_else(|| invalid(format!("graph {clone:#x} was not made by cuGraphClone")))?
            .get(&original)
            .ok_or_else(|| {
                invalid(format!(
                    "{original:#x} was not a node of the graph {clone:#x} was cloned from"
                ))
            })?;
        if self.owner.get(copy) != Some(&clone) {
            return Err(invalid(format!(
                "the copy of {original:#x} was removed from graph {clone:#x}"
            )));
        }
        Ok(*copy)
    }

    /// cuGraphDestroyNode: the node goes, with every dependency on it and of it (a
    /// conditional node's bodies with it). cuda.h: "Nodes which belong to a graph which
    /// contains allocation or free nodes cannot be destroyed."
    pub fn destroy_node(&mut self, n: NodeId) -> CuResult<()> {
        let (g, _) = self.node(n)?;
        // Observed: CUDA_ERROR_NOT_SUPPORTED (random_graphs seed 12 line 12, and every
        // such call of seeds 1-40).
        if self.graph(g)?.has_memory_nodes() {
            return Err(not_supported(format!(
                "node {n:#x} belongs to a graph with memory allocation or free nodes: it \
                 cannot be destroyed"
            )));
        }
        let body = self.graph_mut(g)?;
        let node = body
            .nodes
            .remove(&n)
            .expect("owner is kept with the graphs");
        body.order.retain(|m| *m != n);
        for other in body.nodes.values_mut() {
            other.deps.retain(|d| *d != n);
        }
        body.edge_log.retain(|(from, to)| *from != n && *to != n);
        self.owner.remove(&n);
        self.freed_nodes.push(n);
        for b in node.op.owned_graphs() {
            self.bodies.remove(&b);
            let _ = self.destroy(b);
        }
        Ok(())
    }

    /// The child graph as a node holds it: a copy, so that later changes to `g` do not
    /// reach the node, made a graph the node owns (`bodies`).
    pub fn child_copy(&mut self, g: GraphId) -> CuResult<GraphId> {
        let copy = self.clone_graph(g)?;
        self.clones.remove(&copy);
        self.bodies.insert(copy);
        Ok(copy)
    }

    /// Gives back a graph `child_copy` made that no node took.
    fn drop_child_copy(&mut self, g: GraphId) {
        self.bodies.remove(&g);
        let _ = self.destroy(g);
    }

    /// A graph a node will own, made from an executable graph's snapshot (`body`, with
    /// `bodies` for the graphs its nodes own): cuGraphLaunch into a stream capture adds
    /// the executable graph as a child graph node. Child graphs and conditional bodies are
    /// made graphs of their own too, owned by their nodes.
    fn register_snapshot(
        &mut self,
        body: &GraphBody,
        bodies: &HashMap<GraphId, GraphBody>,
    ) -> GraphId {
        let mut copy = body.clone();
        // In the order the nodes were added, so the new graphs' handles are the same
        // every time.
        for n in copy.order.clone() {
            let node = copy.nodes.get_mut(&n).expect("order lists the nodes");
            match &node.op {
                NodeOp::Child(c) => {
                    let inner = bodies.get(c).cloned().unwrap_or_default();
                    node.op = NodeOp::Child(self.register_snapshot(&inner, bodies));
                }
                NodeOp::Conditional(c) => {
                    let mut cond = (**c).clone();
                    cond.bodies = c
                        .bodies
                        .iter()
                        .map(|b| {
                            let inner = bodies.get(b).cloned().unwrap_or_default();
                            self.register_snapshot(&inner, bodies)
                        })
                        .collect();
                    node.op = NodeOp::Conditional(Arc::new(cond));
                }
                _ => {}
            }
        }
        let (renamed, _) = self.with_fresh_nodes(copy);
        let g = GraphId::from_handle(self.fresh(GRAPH_TAG));
        for n in &renamed.order {
            self.owner.insert(*n, g);
        }
        self.graphs.insert(g, renamed);
        self.bodies.insert(g);
        g
    }

    /// cuGraphChildGraphNodeGetGraph: the graph a child graph node owns.
    pub fn child_graph(&self, n: NodeId) -> CuResult<GraphId> {
        match &self.node(n)?.1.op {
            NodeOp::Child(g) => Ok(*g),
            _ => Err(invalid(format!("{n:#x} is not a child graph node"))),
        }
    }

    pub fn exec(&self, e: ExecId) -> CuResult<&GraphExec> {
        self.execs
            .get(&e)
            .ok_or_else(|| invalid_handle(format!("{e:#x} is not a live executable graph")))
    }

    fn exec_mut(&mut self, e: ExecId) -> CuResult<&mut GraphExec> {
        self.execs
            .get_mut(&e)
            .ok_or_else(|| invalid_handle(format!("{e:#x} is not a live executable graph")))
    }
}

/// Checks that no node is given twice among `deps`.
fn check_distinct(deps: &[NodeId]) -> CuResult<()> {
    for (i, d) in deps.iter().enumerate() {
        if deps[..i].contains(d) {
            return Err(invalid(format!("dependency {d:#x} is given twice")));
        }
    }
    Ok(())
}

/// A node of an executable graph, ready to run on a stream's worker.
#[derive(Clone)]
enum Step {
    Kernel(Arc<PreparedLaunch>),
    Action(NodeAction),
    Record(EventId),
    /// A conditional handle's default, written as its graph starts (conditional.rs).
    Default {
        word: u64,
        value: u32,
    },
    /// A batch memory-operation node's operations.
    MemOps(Arc<MemOpNode>),
    /// A conditional node: its handle's word, its type, its bodies' steps.
    Conditional {
        word: u64,
        kind: i32,
        bodies: Vec<Vec<Step>>,
    },
}

/// An executable graph's nodes ready to run on a stream's worker: made at its first
/// launch and kept, because preparing a kernel node (the launch's checks, the function,
/// its module, the device's limits, each under the state's lock) costs about what running
/// an empty kernel does, and a graph exists to be launched many times. What a launch must
/// read as it is issued (the events' last records, whether they are still alive) is
/// kept as lists, read at each launch.
#[derive(Clone)]
struct Plan {
    steps: Vec<Step>,
    /// The events of wait nodes, at any depth: a launch waits for their last records
    /// as of the launch.
    waits: Vec<EventId>,
    /// The events of every event node, at any depth: each launch checks they still live.
    events: Vec<EventId>,
    /// The events of the record nodes outside conditional bodies: each completes once the
    /// graph has run.
    records: Vec<EventId>,
    /// Where each kernel node of the graph itself (not of a child graph or a conditional
    /// body) is in `steps`: cuGraphExecKernelNodeSetParams prepares that one again.
    kernels: HashMap<NodeId, usize>,
    /// Whether any step, at any depth, is a kernel: a launch then fails on the device's
    /// sticky error, as the launch of a kernel does.
    has_kernels: bool,
    /// The context it was prepared in, and `State::launch_epoch` then: in another context,
    /// or once a module was unloaded or a function's attribute or a limit set, the plan is
    /// made again (and fails where a launch would).
    ctx: ContextId,
    epoch: u64,
}

/// What planning an executable graph gathers (`Driver::plan`).
struct Planning {
    stream: StreamId,
    bodies: HashMap<GraphId, GraphBody>,
    /// The executable graph's own kernel nodes as prepared for its last plan.
    reuse: HashMap<NodeId, (LaunchRequest, Arc<PreparedLaunch>)>,
    /// Its own kernel nodes as prepared for this plan.
    prepared: HashMap<NodeId, (LaunchRequest, Arc<PreparedLaunch>)>,
    kernels: HashMap<NodeId, usize>,
    waits: Vec<EventId>,
    events: Vec<EventId>,
    has_kernels: bool,
    /// The executable graph's own nodes disabled (cuGraphNodeSetEnabled).
    disabled: std::collections::HashSet<NodeId>,
}

/// The bodies of the conditional nodes in `body` (and in its child graphs), at any
/// depth, as they are now: what an executable graph runs.
fn snapshot_bodies(
    graphs: &Graphs,
    body: &GraphBody,
    out: &mut HashMap<GraphId, GraphBody>,
) -> CuResult<()> {
    // In the order the nodes were added: of two refused bodies, the error named is
    // the same every time.
    for node in body.order.iter().map(|n| &body.nodes[n]) {
        match &node.op {
            NodeOp::Conditional(c) => {
                for b in &c.bodies {
                    let bb = graphs.graph(*b)?.clone();
                    if bb.has_memory_nodes() {
                        // cuda.h: a body holds kernels, empty nodes, child graphs,
                        // memsets, copies and conditionals only.
                        return Err(invalid(
                            "a conditional node's body graph cannot hold memory allocation or free nodes",
                        ));
                    }
                    snapshot_bodies(graphs, &bb, out)?;
                    out.insert(*b, bb);
                }
            }
            NodeOp::Child(child) => {
                let cb = graphs.graph(*child)?.clone();
                if cb.has_memory_nodes() {
                    // cuda.h: "memory allocation/free nodes can't be present in the
                    // child graph" (observed at cuGraphAddChildGraphNode:
                    // CUDA_ERROR_NOT_SUPPORTED); added since through its handle.
                    return Err(not_supported(
                        "a child graph node's graph holds memory allocation or free nodes",
                    ));
                }
                snapshot_bodies(graphs, &cb, out)?;
                out.insert(*child, cb);
            }
            _ => {}
        }
    }
    Ok(())
}

/// Why cuGraphExecUpdate refused a graph: the error, the `CUgraphExecUpdateResult`, the
/// node of the new graph that differs and the dependency that does not match.
pub struct UpdateFailure {
    pub err: CuError,
    pub result: i32,
    pub node: Option<NodeId>,
    pub from: Option<NodeId>,
}

/// Where a graph cannot update an executable graph's nodes.
struct Mismatch {
    result: i32,
    node: Option<NodeId>,
    from: Option<NodeId>,
    why: String,
}

/// Pairs a graph's nodes with an executable graph's as cuGraphExecUpdate does, and checks
/// each pair. cuda.h says what is compared (node counts, exit nodes, dependencies "paired
/// based on edge order") but not in what order; the order here is the one the H200's
/// answers fit (probe graph_exec_update, program graph_exec_update): node counts, then
/// exit nodes (nodes no node depends on; fewer: TOPOLOGY_CHANGED with no node), paired
/// from the last added backwards, then pairs visited first in, first out, starting from
/// the last exit node: a pair's dependency counts, then its types, then its dependencies
/// (each new pair joins the queue), then its parameters. A moved edge is so reported at
/// the first node that finds its dependency paired elsewhere (an edge moved from one
/// dependent to another: the other dependent, the moved edge's source as the mismatched
/// dependency), or, where a walk pairs nodes of different types first, as a node of
/// another type. Child graphs and conditional bodies are paired the same way, a
/// difference inside one reported at the node inside (the H200: a child graph's node of
/// another type is reported at no node of the top-level graph, a child graph with a node
/// more at no node at all).
struct Pairing<'a> {
    modules: &'a super::module::Modules,
    /// The conditional bodies as the executable graph has them, and as the new graph does.
    old_bodies: &'a HashMap<GraphId, GraphBody>,
    new_bodies: &'a HashMap<GraphId, GraphBody>,
}

/// The nodes of `body` no node depends on, in the order they were added.
fn exit_nodes(body: &GraphBody) -> Vec<NodeId> {
    let depended: std::collections::HashSet<NodeId> = body
        .nodes
        .values()
        .flat_map(|n| n.deps.iter().copied())
        .collect();
    body.order
        .iter()
        .filter(|n| !depended.contains(n))
        .copied()
        .collect()
}

impl Pairing<'_> {
    /// The context a kernel node's function belongs to (its module's).
    fn function_context(&self, k: &KernelNode) -> Option<ContextId> {
        let (_, r) = self.modules.function(k.launch.function).ok()?;
        Some(self.modules.module(r.module).ok()?.context)
    }

    /// Pairs `new`'s nodes with `old`'s; returns new node -> old node.
    fn body(&self, old: &GraphBody, new: &GraphBody) -> Result<HashMap<NodeId, NodeId>, Mismatch> {
        let topology = |node: Option<NodeId>, from: Option<NodeId>, why: String| Mismatch {
            result: update_result::TOPOLOGY_CHANGED,
            node,
            from,
            why,
        };
        if new.order.len() != old.order.len() {
            return Err(topology(
                None,
                None,
                format!(
                    "the graph has {} nodes, the executable graph {}",
                    new.order.len(),
                    old.order.len()
                ),
            ));
        }
        // Fewer exit nodes: no node named (the H200, an edge more or moved so). More: the
        // exits are paired from the last ones added, and a mismatch found then names its
        // node but no dependency. Edge counts alone decide nothing (an edge less is
        // reported at the node that lost it).
        let (new_exits, old_exits) = (exit_nodes(new), exit_nodes(old));
        if new_exits.len() < old_exits.len() {
            return Err(topology(
                None,
                None,
                format!(
                    "the graph has {} exit nodes, the executable graph {}",
                    new_exits.len(),
                    old_exits.len()
                ),
            ));
        }
        let more_exits = new_exits.len() > old_exits.len();
        let mut pair: HashMap<NodeId, NodeId> = HashMap::new();
        let mut paired: HashMap<NodeId, NodeId> = HashMap::new();
        let mut queue = std::collections::VecDeque::new();
        for (n, o) in new_exits.iter().rev().zip(old_exits.iter().rev()) {
            pair.insert(*n, *o);
            paired.insert(*o, *n);
            queue.push_back((*n, *o));
        }
        while let Some((n, o)) = queue.pop_front() {
            let (a, b) = (&new.nodes[&n], &old.nodes[&o]);
            if a.deps.len() != b.deps.len() {
                return Err(topology(
                    Some(n),
                    None,
                    format!(
                        "node {n:#x} has {} dependencies, its pair {}",
                        a.deps.len(),
                        b.deps.len()
                    ),
                ));
            }
            if a.op.node_type() != b.op.node_type() {
                return Err(Mismatch {
                    result: update_result::NODE_TYPE_CHANGED,
                    node: Some(n),
                    from: None,
                    why: format!("node {n:#x} is of another type than its pair"),
                });
            }
            for (d, e) in a.deps.iter().zip(&b.deps) {
                match (pair.get(d), paired.get(e)) {
                    (None, None) => {
                        pair.insert(*d, *e);
                        paired.insert(*e, *d);
                        queue.push_back((*d, *e));
                    }
                    (Some(x), _) if x == e => {}
                    _ => {
                        return Err(topology(
                            Some(n),
                            (!more_exits).then_some(*d),
                            format!(
                                "node {n:#x} depends on {d:#x}, which is paired with another \
                                 node than its pair's dependency"
                            ),
                        ))
                    }
                }
            }
            self.parameters(n, b, a)?;
        }
        Ok(pair)
    }

    /// Whether new node `n` (`a`) may replace its pair `b` in the executable graph.
    fn parameters(&self, n: NodeId, b: &GraphNode, a: &GraphNode) -> Result<(), Mismatch> {
        let parameters = |why: String| Mismatch {
            result: update_result::PARAMETERS_CHANGED,
            node: Some(n),
            from: None,
            why: format!("node {n:#x}: {why}"),
        };
        match (&b.op, &a.op) {
            // cuda.h: "The owning context of the function cannot change"; the H200 reports
            // it as UNSUPPORTED_FUNCTION_CHANGE.
            (NodeOp::Kernel(x), NodeOp::Kernel(y))
                if self.function_context(x) != self.function_context(y) =>
            {
                return Err(Mismatch {
                    result: update_result::UNSUPPORTED_FUNCTION_CHANGE,
                    node: Some(n),
                    from: None,
                    why: format!("node {n:#x}'s function belongs to another context"),
                });
            }
            (NodeOp::Memcpy { shape: x, .. }, NodeOp::Memcpy { shape: y, .. })
            | (NodeOp::Memset { shape: x, .. }, NodeOp::Memset { shape: y, .. }) => {
                if let Some(why) = x.refuses(y) {
                    return Err(parameters(why));
                }
            }
            (NodeOp::BatchMemOp(x), NodeOp::BatchMemOp(y)) => {
                if let Some(why) = x.refuses(y) {
                    return Err(parameters(why));
                }
            }
            (NodeOp::MemAlloc(x), NodeOp::MemAlloc(y)) if x.dptr != y.dptr => {
                return Err(parameters("it allocates another address".into()))
            }
            (NodeOp::MemFree(x), NodeOp::MemFree(y)) if x != y => {
                return Err(parameters("it frees another address".into()))
            }
            (NodeOp::Child(x), NodeOp::Child(y)) => {
                match (self.old_bodies.get(x), self.new_bodies.get(y)) {
                    (Some(ox), Some(ny)) => {
                        self.body(ox, ny)?;
                    }
                    _ => return Err(parameters("a child graph is missing".into())),
                }
            }
            (NodeOp::Conditional(x), NodeOp::Conditional(y)) => {
                // cuda.h: "Changing node parameters is not supported." Its type and
                // size, here; a graph built again has handles of its own, and the
                // mock runs the new one (not recorded on the H200 yet).
                if (x.kind, x.bodies.len()) != (y.kind, y.bodies.len()) {
                    return Err(parameters(
                        "a conditional node's type or size cannot change".into(),
                    ));
                }
                for (bx, by) in x.bodies.iter().zip(&y.bodies) {
                    match (self.old_bodies.get(bx), self.new_bodies.get(by)) {
                        (Some(ox), Some(ny)) => {
                            self.body(ox, ny)?;
                        }
                        _ => return Err(parameters("a body graph is missing".into())),
                    }
                }
            }
            // Host functions and events may change freely (cuda.h's table for
            // cuGraphExecNodeSetParams: "Unrestricted").
            _ => {}
        }
        Ok(())
    }
}

/// `n` is a node of a live graph: cuda.h's setters name the node of the graph the
/// executable graph came from, which "must not have been removed" (the H200 refuses a
/// node whose graph was destroyed with CUDA_ERROR_INVALID_VALUE, seen through the
/// runtime's simple_cuda_graphs).
fn live_node(graphs: &Graphs, n: NodeId) -> CuResult<()> {
    if graphs.owner.contains_key(&n) {
        Ok(())
    } else {
        Err(invalid(format!(
            "{n:#x} is no live node: the graph it belonged to was destroyed"
        )))
    }
}

/// cuGraphNodeSetEnabled and GetEnabled take kernel, memset and memcpy nodes of the
/// graph `exec` came from.
fn enableable(exec: &GraphExec, e: ExecId, n: NodeId) -> CuResult<()> {
    match exec.body.nodes.get(&n).map(|node| node.op.node_type()) {
        Some(node_type::KERNEL | node_type::MEMCPY | node_type::MEMSET) => Ok(()),
        Some(t) => Err(invalid(format!(
            "node {n:#x} is of type {t}: only kernel, memset and memcpy nodes can be enabled \
             or disabled (cuda.h)"
        ))),
        None => Err(invalid(format!(
            "{n:#x} is not a node of the graph executable graph {e:#x} came from"
        ))),
    }
}

impl Driver {
    pub fn graph_create(&self, flags: u32) -> CuResult<GraphId> {
        if flags != 0 {
            return Err(invalid(format!("graph flags {flags:#x} must be 0")));
        }
        Ok(self.state.lock().graphs.create())
    }

    pub fn graph_destroy(&self, g: GraphId) -> CuResult<()> {
        let allocations = {
            let st = self.state.lock();
            // Observed (probe graph_exec_update, capture-to-graph): ILLEGAL_STATE.
            if st.captures.graph_in_capture(g) {
                return Err(CuError::new(
                    cumock_abi::result::CUDA_ERROR_ILLEGAL_STATE,
                    format!(
                        "graph {g:#x} is being built by a stream capture: end the capture first"
                    ),
                ));
            }
            // Observed: CUDA_ERROR_INVALID_VALUE.
            if st.graphs.bodies.contains(&g) {
                return Err(invalid(format!(
                    "graph {g:#x} is a conditional node's body or a child graph node's \
                     graph: it goes with its node"
                )));
            }
            st.graphs.graph(g)?.allocations()
        };
        self.release_graph_allocations(&allocations, Some(g));
        let dead = {
            let mut st = self.state.lock();
            st.graphs.destroy(g)?;
            st.user_objects.drop_holder(g)
        };
        super::user_objects::run_destructors(dead);
        Ok(())
    }

    /// A graph or an executable graph holding allocation nodes goes: addresses nothing
    /// holds any more go back, after the queued work that may still use them.
    fn release_graph_allocations(&self, allocations: &[u64], graph: Option<GraphId>) {
        if allocations.is_empty() && graph.is_none() {
            return;
        }
        if self
            .state
            .lock()
            .graph_memory
            .release_frees_addresses(allocations)
        {
            stream_queues::drain_all();
        }
        let mut st = self.state.lock();
        let st = &mut *st;
        st.graph_memory.release(&mut st.vmm, allocations, graph);
    }

    /// cuGraphAddMemAllocNode (and cuMemAllocAsync on a capturing stream): the node and
    /// the address it reserved.
    pub fn graph_add_alloc_node(
        &self,
        g: GraphId,
        deps: &[NodeId],
        mut node: AllocNode,
    ) -> CuResult<(NodeId, u64)> {
        self.check_alloc_node(&node)?;
        let granularity = self.profile.devices[node.device].granularity_minimum;
        let mut st = self.state.lock();
        let st = &mut *st;
        st.graphs.graph(g)?;
        st.graphs.check_dep_owners(g, deps)?;
        st.graphs.mark_memory_nodes(g)?;
        check_distinct(deps)?;
        let freed = st.graphs.graph(g)?.frees_before(deps);
        node.dptr = st
            .graph_memory
            .reserve(&mut st.vmm, g, &node, granularity, &freed)?;
        let dptr = node.dptr;
        let n = st.graphs.add(g, deps, NodeOp::MemAlloc(Arc::new(node)))?;
        Ok((n, dptr))
    }

    /// cuGraphAddMemFreeNode (and cuMemFreeAsync on a capturing stream).
    pub fn graph_add_free_node(&self, g: GraphId, deps: &[NodeId], ptr: u64) -> CuResult<NodeId> {
        let mut st = self.state.lock();
        st.graphs.graph(g)?;
        st.graphs.check_dep_owners(g, deps)?;
        st.graphs.mark_memory_nodes(g)?;
        check_distinct(deps)?;
        st.graph_memory.add_free(g, ptr)?;
        st.graphs.add(g, deps, NodeOp::MemFree(ptr))
    }

    /// An allocation node's parameters.
    pub fn alloc_node_get(&self, n: NodeId) -> CuResult<Arc<AllocNode>> {
        match &self.state.lock().graphs.node(n)?.1.op {
            NodeOp::MemAlloc(a) => Ok(a.clone()),
            _ => Err(invalid(format!("{n:#x} is not a memory allocation node"))),
        }
    }

    /// A free node's address.
    pub fn free_node_get(&self, n: NodeId) -> CuResult<u64> {
        match &self.state.lock().graphs.node(n)?.1.op {
            NodeOp::MemFree(p) => Ok(*p),
            _ => Err(invalid(format!("{n:#x} is not a memory free node"))),
        }
    }

    /// A kernel node for `launch`, its parameters already copied: the function must be a
    /// loaded one and the buffer its parameters' size.
    pub fn kernel_node(&self, launch: LaunchRequest) -> CuResult<KernelNode> {
        let layout = self.function_params(launch.function)?;
        let size = Self::params_size(&layout);
        if launch.params.len() != size {
            return Err(invalid(format!(
                "the parameter buffer is {} bytes; the kernel's parameters take {size}",
                launch.params.len()
            )));
        }
        if launch.grid.contains(&0) || launch.block.contains(&0) {
            return Err(invalid(format!(
                "grid {:?} and block {:?}: no dimension may be 0",
                launch.grid, launch.block
            )));
        }
        self.check_node_block(&launch)?;
        Ok(KernelNode {
            launch,
            offsets: layout.iter().map(|p| p.offset as usize).collect(),
            arg_addrs: Vec::new(),
            attrs: KernelAttrs::default(),
        })
    }

    /// Adds a node. A graph being captured into takes nodes too: cuda.h
    /// (cuStreamGetCaptureInfo): "all operations other than destroy and node removal are
    /// permitted on the graph while the capture sequence is in progress", which is how a
    /// conditional node joins a capture (cuGraphAddNode after the capture's dependencies,
    /// then cuStreamUpdateCaptureDependencies).
    pub fn graph_add_node(&self, g: GraphId, deps: &[NodeId], op: NodeOp) -> CuResult<NodeId> {
        self.state.lock().graphs.add(g, deps, op)
    }

    /// A graph a child graph node may hold: cuda.h (CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE,
    /// the default): "memory allocation/free nodes can't be present in the child graph".
    pub fn graph_check_child(&self, child: GraphId) -> CuResult<()> {
        let st = self.state.lock();
        st.graphs.graph(child)?;
        // Observed: CUDA_ERROR_NOT_SUPPORTED, before the dependencies are looked at
        // (random_graphs seed 19 line 90), for a graph made its own child too.
        if st.graphs.has_memory_nodes_deep(child) {
            return Err(not_supported(
                "a child graph node cannot hold a graph with memory allocation or free nodes",
            ));
        }
        Ok(())
    }

    pub fn graph_add_child(&self, g: GraphId, deps: &[NodeId], child: GraphId) -> CuResult<NodeId> {
        self.graph_check_child(child)?;
        let mut st = self.state.lock();
        if g == child {
            // The H200 checked the dependencies first (seeds 14 line 248, 24 line 28:
            // INVALID_VALUE), then crashed (SIGSEGV) on every graph without memory nodes
            // made its own child, empty or not (seeds 5, 6, 7, 36, 38, 39).
            st.graphs.check_deps(g, deps)?;
            return Err(CuError::would_crash(
                "a graph made its own child graph (the real driver crashes here)",
            ));
        }
        // A graph being captured into takes nodes too (cuda.h, as in graph_add_node).
        let copy = st.graphs.child_copy(child)?;
        st.graphs
            .add(g, deps, NodeOp::Child(copy))
            .inspect_err(|_| st.graphs.drop_child_copy(copy))
    }

    /// cuGraphChildGraphNodeGetGraph.
    pub fn graph_child_graph(&self, n: NodeId) -> CuResult<GraphId> {
        self.state.lock().graphs.child_graph(n)
    }

    pub fn graph_add_dependencies(&self, g: GraphId, edges: &[(NodeId, NodeId)]) -> CuResult<()> {
        self.state.lock().graphs.add_dependencies(g, edges)
    }

    pub fn graph_remove_dependencies(
        &self,
        g: GraphId,
        edges: &[(NodeId, NodeId)],
    ) -> CuResult<()> {
        let mut st = self.state.lock();
        if st.captures.graph_in_capture(g) {
            return Err(invalid(format!(
                "graph {g:#x} is being built by a stream capture"
            )));
        }
        st.graphs.remove_dependencies(g, edges)
    }

    /// The refusals of cuGraphRemoveDependencies that come before its node arrays are read.
    pub fn graph_dependencies_removable(&self, g: GraphId) -> CuResult<()> {
        self.state.lock().graphs.dependencies_removable(g)
    }

    /// The refusals of cuGraphExec*NodeSetParams that come before the parameters are
    /// read: a node that is not one of the executable graph's is INVALID_VALUE where a
    /// NULL function would be INVALID_HANDLE (random_graphs, session 18, seed 35 line 210).
    pub fn graph_exec_node_present(&self, e: ExecId, n: NodeId) -> CuResult<()> {
        let st = self.state.lock();
        live_node(&st.graphs, n)?;
        if st.graphs.exec(e)?.body.nodes.contains_key(&n) {
            Ok(())
        } else {
            Err(invalid(format!(
                "{n:#x} is not a node of the graph executable graph {e:#x} came from"
            )))
        }
    }

    /// The graph's nodes, in the order they were added.
    pub fn graph_nodes(&self, g: GraphId) -> CuResult<Vec<NodeId>> {
        Ok(self.state.lock().graphs.graph(g)?.order.clone())
    }

    pub fn graph_root_nodes(&self, g: GraphId) -> CuResult<Vec<NodeId>> {
        Ok(self.state.lock().graphs.graph(g)?.roots())
    }

    pub fn graph_edges(&self, g: GraphId) -> CuResult<Vec<(NodeId, NodeId)>> {
        Ok(self.state.lock().graphs.graph(g)?.edges_by_source())
    }

    pub fn graph_node_type(&self, n: NodeId) -> CuResult<i32> {
        Ok(self.state.lock().graphs.node(n)?.1.op.node_type())
    }

    /// The node's dependencies (`dependents`: the nodes that depend on it instead).
    pub fn graph_node_neighbours(&self, n: NodeId, dependents: bool) -> CuResult<Vec<NodeId>> {
        let st = self.state.lock();
        let (g, node) = st.graphs.node(n)?;
        if !dependents {
            return Ok(node.deps.clone());
        }
        let b = st.graphs.graph(g)?;
        Ok(b.order
            .iter()
            .filter(|m| b.nodes[m].deps.contains(&n))
            .copied()
            .collect())
    }

    /// A kernel node's launch, and where in the model's copy each parameter starts.
    pub fn kernel_node_get(&self, n: NodeId) -> CuResult<KernelNode> {
        match &self.state.lock().graphs.node(n)?.1.op {
            NodeOp::Kernel(k) => Ok(k.clone()),
            _ => Err(invalid(format!("{n:#x} is not a kernel node"))),
        }
    }

    /// What a memcpy, memset or host node was given (cuGraph*NodeGetParams): the
    /// cuda.h struct's bytes, for a node of type `kind`.
    pub fn node_given(&self, n: NodeId, kind: i32) -> CuResult<Vec<u8>> {
        let st = self.state.lock();
        let op = &st.graphs.node(n)?.1.op;
        if op.node_type() != kind {
            return Err(invalid(format!(
                "node {n:#x} is of type {}, not {kind}",
                op.node_type()
            )));
        }
        match op {
            NodeOp::Memcpy { given, .. } | NodeOp::Memset { given, .. } => Ok(given.to_vec()),
            NodeOp::Host { given, .. } => Ok([given.0.to_ne_bytes(), given.1.to_ne_bytes()]
                .concat()
                .to_vec()),
            _ => Err(invalid(format!(
                "node {n:#x} is of type {kind}, which keeps no struct"
            ))),
        }
    }

    /// A batch memory-operation node's operations (cuGraphBatchMemOpNodeGetParams).
    pub fn mem_op_node(&self, n: NodeId) -> CuResult<Arc<MemOpNode>> {
        match &self.state.lock().graphs.node(n)?.1.op {
            NodeOp::BatchMemOp(m) => Ok(m.clone()),
            _ => Err(invalid(format!(
                "{n:#x} is not a batch memory-operation node"
            ))),
        }
    }

    /// The address of an array of pointers to the node's own copy of each parameter
    /// (cuGraphKernelNodeGetParams's `kernelParams`): valid while the node's parameters
    /// are not set again.
    pub fn kernel_node_param_pointers(&self, n: NodeId) -> CuResult<u64> {
        let mut st = self.state.lock();
        match &mut st.graphs.node_mut(n)?.op {
            NodeOp::Kernel(k) => {
                let base = k.launch.params.as_ptr() as u64;
                k.arg_addrs = k.offsets.iter().map(|o| base + *o as u64).collect();
                Ok(k.arg_addrs.as_ptr() as u64)
            }
            _ => Err(invalid(format!("{n:#x} is not a kernel node"))),
        }
    }

    pub fn kernel_node_set(&self, n: NodeId, k: KernelNode) -> CuResult<()> {
        let mut st = self.state.lock();
        let node = st.graphs.node_mut(n)?;
        let NodeOp::Kernel(old) = &node.op else {
            return Err(invalid(format!("{n:#x} is not a kernel node")));
        };
        node.op = NodeOp::Kernel(k.keeping_attributes_of(old));
        Ok(())
    }

    /// cuGraphKernelNodeGetAttribute.
    pub fn kernel_node_attribute(&self, n: NodeId, id: i32) -> CuResult<[u32; 16]> {
        self.kernel_node_get(n)?.attribute(id)
    }

    /// cuGraphKernelNodeSetAttribute.
    pub fn kernel_node_set_attribute(&self, n: NodeId, id: i32, v: &[u32; 16]) -> CuResult<()> {
        let mut st = self.state.lock();
        match &mut st.graphs.node_mut(n)?.op {
            NodeOp::Kernel(k) => k.set_attribute(id, v),
            _ => Err(invalid(format!("{n:#x} is not a kernel node"))),
        }
    }

    /// cuGraphKernelNodeCopyAttributes: `dst` takes every attribute of `src` the mock
    /// keeps (both kernel nodes).
    pub fn kernel_node_copy_attributes(&self, dst: NodeId, src: NodeId) -> CuResult<()> {
        let from = self.kernel_node_get(src)?;
        let mut st = self.state.lock();
        match &mut st.graphs.node_mut(dst)?.op {
            NodeOp::Kernel(k) => {
                let params = std::mem::replace(k, from.clone());
                *k = KernelNode {
                    launch: LaunchRequest {
                        cooperative: from.launch.cooperative,
                        cluster: from.launch.cluster,
                        ..params.launch
                    },
                    attrs: from.attrs,
                    ..params
                };
                Ok(())
            }
            _ => Err(invalid(format!("{dst:#x} is not a kernel node"))),
        }
    }

    pub fn event_node_get(&self, n: NodeId) -> CuResult<EventId> {
        match &self.state.lock().graphs.node(n)?.1.op {
            NodeOp::EventRecord(e) | NodeOp::EventWait(e) => Ok(*e),
            _ => Err(invalid(format!("{n:#x} is not an event node"))),
        }
    }

    pub fn graph_clone(&self, g: GraphId) -> CuResult<GraphId> {
        let mut st = self.state.lock();
        // cuda.h (cuGraphAddMemAllocNode): "The graph cannot be cloned"; observed:
        // CUDA_ERROR_NOT_SUPPORTED, for memory nodes in a conditional's body too.
        st.graphs.graph(g)?;
        if st.graphs.has_memory_nodes_deep(g) {
            return Err(not_supported(format!(
                "graph {g:#x} has memory allocation or free nodes: it cannot be cloned"
            )));
        }
        let clone = st.graphs.clone_graph(g)?;
        st.user_objects.copy_holder(g, clone);
        Ok(clone)
    }

    /// The node of a cycle in `g`'s dependencies that cuGraphInstantiateWithParams names
    /// with CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE, if they form one.
    pub fn graph_cycle_node(&self, g: GraphId) -> Option<NodeId> {
        let st = self.state.lock();
        st.graphs.graph(g).ok()?.cycle_node()
    }

    /// cuGraphInstantiate: a snapshot of the graph in a topological order. `flags`: the
    /// CUgraphInstantiate_flags (AUTO_FREE_ON_LAUNCH is this model's; the others the
    /// boundary checked), kept for cuGraphExecGetFlags.
    pub fn graph_instantiate(&self, g: GraphId, flags: u64) -> CuResult<ExecId> {
        let auto_free = flags & 1 != 0;
        if flags & DEVICE_LAUNCH != 0 {
            self.device_graph_check(g).map_err(|r| r.err)?;
        }
        let mut st = self.state.lock();
        st.contexts.require_current()?;
        if st.captures.graph_in_capture(g) {
            return Err(invalid(format!(
                "graph {g:#x} is being built by a stream capture: end the capture first"
            )));
        }
        let body = st.graphs.graph(g)?.clone();
        let order = body.topological()?;
        let memory_ops = body.memory_ops(&order);
        let mut bodies = HashMap::new();
        snapshot_bodies(&st.graphs, &body, &mut bodies)?;
        // cuda.h: "Handles not associated with a conditional node may cause graph
        // instantiation to fail"; observed: CUDA_ERROR_INVALID_VALUE.
        let graphs: Vec<GraphId> = std::iter::once(g).chain(bodies.keys().copied()).collect();
        if let Some(h) = st.conditionals.unused_handle(&graphs) {
            return Err(invalid(format!(
                "conditional handle {h:#x} of graph {g:#x} belongs to no conditional node"
            )));
        }
        if body.has_memory_nodes() {
            // cuda.h: "at most one executable graph in existence for that graph at a
            // time"; observed: CUDA_ERROR_NOT_SUPPORTED.
            // Only an executable graph instantiated while the graph had memory nodes
            // counts (random_graphs seed 27 line 23, seed 8 line 53: one instantiated
            // before left the next free).
            if let Some((e, _)) = st
                .graphs
                .execs
                .iter()
                .find(|(_, x)| x.graph == g && x.body.has_memory_nodes())
            {
                return Err(not_supported(format!(
                    "graph {g:#x} has memory nodes and an executable graph already ({e:#x}): destroy it first"
                )));
            }
        }
        st.graph_memory.hold(&body.allocations());
        let e = ExecId::from_handle(st.graphs.fresh(EXEC_TAG));
        st.user_objects.copy_holder(g, e);
        st.graphs.execs.insert(
            e,
            GraphExec {
                plan: None,
                prepared: HashMap::new(),
                prepared_in: None,
                generation: 0,
                body,
                order,
                graph: g,
                auto_free,
                flags,
                memory_ops,
                bodies,
                disabled: Default::default(),
                uploaded: None,
            },
        );
        Ok(e)
    }

    pub fn graph_exec_destroy(&self, e: ExecId) -> CuResult<()> {
        let allocations = {
            let mut st = self.state.lock();
            st.graphs.exec(e)?;
            let exec = st.graphs.execs.remove(&e).expect("checked");
            (exec.body.allocations(), st.user_objects.drop_holder(e))
        };
        let (allocations, dead) = allocations;
        self.release_graph_allocations(&allocations, None);
        super::user_objects::run_destructors(dead);
        Ok(())
    }

    /// cuGraphNodeSetParams and the per-type setters: `op` replaces the node's work, of
    /// the same type.
    pub fn graph_node_set(&self, n: NodeId, op: NodeOp) -> CuResult<()> {
        let mut st = self.state.lock();
        let node = st.graphs.node_mut(n)?;
        if node.op.node_type() != op.node_type() {
            return Err(invalid(format!(
                "node {n:#x} is of type {}: parameters of type {} cannot be set on it",
                node.op.node_type(),
                op.node_type()
            )));
        }
        node.op = op;
        Ok(())
    }

    /// cuGraphNodeSetParams of a child graph node: it takes a copy of `child` (of any
    /// topology: only an executable graph's node must keep its own).
    pub fn graph_node_set_child(&self, n: NodeId, child: GraphId) -> CuResult<()> {
        let mut st = self.state.lock();
        let (g, node) = st.graphs.node(n)?;
        if !matches!(node.op, NodeOp::Child(_)) {
            return Err(invalid(format!("{n:#x} is not a child graph node")));
        }
        if g == child {
            return Err(invalid("a graph cannot be its own child"));
        }
        st.graphs.graph(child)?;
        if st.graphs.has_memory_nodes_deep(child) {
            // As cuGraphAddChildGraphNode (observed: CUDA_ERROR_NOT_SUPPORTED).
            return Err(not_supported(
                "a child graph node cannot hold a graph with memory allocation or free nodes",
            ));
        }
        let copy = st.graphs.child_copy(child)?;
        let old = std::mem::replace(&mut st.graphs.node_mut(n)?.op, NodeOp::Child(copy));
        for b in old.owned_graphs() {
            st.graphs.drop_child_copy(b);
        }
        Ok(())
    }

    /// cuGraphExecNodeSetParams and the per-type exec setters: `op` replaces the work of
    /// node `n` (of the graph `e` was instantiated from) in `e`, of the same type. A
    /// kernel is prepared again alone; other work makes the next launch plan again.
    pub fn graph_exec_node_set(&self, e: ExecId, n: NodeId, op: NodeOp) -> CuResult<()> {
        if let NodeOp::Kernel(k) = op {
            return self.graph_exec_kernel_set(e, n, k);
        }
        let mut st = self.state.lock();
        live_node(&st.graphs, n)?;
        if let NodeOp::EventRecord(ev) | NodeOp::EventWait(ev) = &op {
            st.contexts.event(*ev)?;
        }
        let exec = st.graphs.exec_mut(e)?;
        match exec.body.nodes.get_mut(&n) {
            Some(node) if node.op.node_type() == op.node_type() => {
                if let (
                    NodeOp::Memcpy { shape: old, .. } | NodeOp::Memset { shape: old, .. },
                    NodeOp::Memcpy { shape: new, .. } | NodeOp::Memset { shape: new, .. },
                ) = (&node.op, &op)
                {
                    // cuda.h: CUDA_ERROR_INVALID_VALUE.
                    if let Some(why) = old.refuses(new) {
                        return Err(invalid(format!("node {n:#x}: {why}")));
                    }
                }
                if let (NodeOp::BatchMemOp(old), NodeOp::BatchMemOp(new)) = (&node.op, &op) {
                    // cuda.h: CUDA_ERROR_INVALID_VALUE.
                    if let Some(why) = old.refuses(new) {
                        return Err(invalid(format!("node {n:#x}: {why}")));
                    }
                }
                node.op = op
            }
            Some(node) => {
                return Err(invalid(format!(
                    "node {n:#x} is of type {}: parameters of type {} cannot be set on it",
                    node.op.node_type(),
                    op.node_type()
                )))
            }
            None => {
                return Err(invalid(format!(
                    "{n:#x} is not a node of the graph executable graph {e:#x} came from"
                )))
            }
        }
        exec.plan = None;
        exec.generation += 1;
        Ok(())
    }

    /// cuGraphExecKernelNodeSetParams: `n` is the node of the graph the executable graph
    /// was instantiated from; its function cannot change context. A launch planned
    /// already gets the node prepared again, alone.
    pub fn graph_exec_kernel_set(&self, e: ExecId, n: NodeId, mut k: KernelNode) -> CuResult<()> {
        let patch = {
            let mut st = self.state.lock();
            let st = &mut *st;
            live_node(&st.graphs, n)?;
            let context = |k: &KernelNode| {
                let (_, r) = st.modules.function(k.launch.function).ok()?;
                Some(st.modules.module(r.module).ok()?.context)
            };
            let exec = st.graphs.exec_mut(e)?;
            match exec.body.nodes.get_mut(&n).map(|node| &mut node.op) {
                // cuda.h: "The owning context of the function cannot change";
                // CUDA_ERROR_INVALID_VALUE.
                Some(NodeOp::Kernel(old)) if context(old) != context(&k) => {
                    return Err(invalid(format!(
                        "node {n:#x}: the function belongs to another context than the node's"
                    )))
                }
                Some(NodeOp::Kernel(old)) => {
                    k = k.keeping_attributes_of(old);
                    *old = k.clone();
                }
                Some(_) => return Err(invalid(format!("{n:#x} is not a kernel node"))),
                None => {
                    return Err(invalid(format!(
                        "{n:#x} is not a node of the graph executable graph {e:#x} came from"
                    )))
                }
            }
            exec.generation += 1;
            exec.prepared.remove(&n);
            let at = exec.plan.as_ref().and_then(|p| p.kernels.get(&n).copied());
            if at.is_none() {
                exec.plan = None;
            }
            at.map(|i| (i, exec.generation))
        };
        let Some((at, generation)) = patch else {
            return Ok(());
        };
        // Prepared now, so that the next launch need not; what fails here is the launch's
        // to report (as before the plan was kept): it only drops the plan.
        let prepared = self.prepare_launch(&k.launch).map(Arc::new);
        let mut st = self.state.lock();
        let st = &mut *st;
        let now = st
            .contexts
            .require_current()
            .ok()
            .map(|(ctx, _)| (ctx, st.launch_epoch));
        if let Ok(exec) = st.graphs.exec_mut(e) {
            if exec.generation == generation {
                match (prepared, exec.plan.as_mut()) {
                    (Ok(p), Some(plan)) if now == Some((plan.ctx, plan.epoch)) => {
                        Arc::make_mut(plan).steps[at] = Step::Kernel(p.clone());
                        if exec.prepared_in == now {
                            exec.prepared.insert(n, (k.launch, p));
                        }
                    }
                    _ => exec.plan = None,
                }
            }
        }
        Ok(())
    }

    /// cuGraphExecUpdate: the graph must have the executable graph's topology (nodes
    /// paired as `Pairing` says, of the same types, with the same dependencies, child
    /// graphs and conditional bodies alike) and change only what cuda.h lets an
    /// instantiated node change (`Pairing::parameters`); then its nodes'
    /// parameters replace the executable graph's. On failure: the error, the
    /// `CUgraphExecUpdateResult`, the node of `g` that differs and the dependency.
    pub fn graph_exec_update(&self, e: ExecId, g: GraphId) -> Result<(), UpdateFailure> {
        let mut st = self.state.lock();
        let fail = |err: CuError| UpdateFailure {
            err,
            result: update_result::ERROR,
            node: None,
            from: None,
        };
        let new = st.graphs.graph(g).map_err(fail)?.clone();
        // The new graph's conditional bodies replace the executable graph's.
        let mut bodies = HashMap::new();
        snapshot_bodies(&st.graphs, &new, &mut bodies).map_err(fail)?;
        let exec = st.graphs.exec(e).map_err(fail)?;
        // A graph with memory nodes another executable graph holds (one instantiated
        // while the graph had them, the one instantiation allows): the H200 refused the
        // update before comparing anything (random_graphs: 9 of 9 such calls, e.g. seed
        // 27 line 44; result SUCCESS, no node).
        if new.has_memory_nodes()
            && st
                .graphs
                .execs
                .iter()
                .any(|(k, x)| *k != e && x.graph == g && x.body.has_memory_nodes())
        {
            return Err(UpdateFailure {
                err: not_supported(format!(
                    "graph {g:#x} has memory nodes and another executable graph holds them"
                )),
                result: update_result::SUCCESS,
                node: None,
                from: None,
            });
        }
        let check = Pairing {
            modules: &st.modules,
            old_bodies: &exec.bodies,
            new_bodies: &bodies,
        };
        let pair = check.body(&exec.body, &new).map_err(|m| UpdateFailure {
            err: CuError::new(
                GRAPH_EXEC_UPDATE_FAILURE,
                format!("cuGraphExecUpdate: {}", m.why),
            ),
            result: m.result,
            node: m.node,
            from: m.from,
        })?;
        let exec = st.graphs.exec_mut(e).map_err(fail)?;
        for (n, old) in pair {
            exec.body.nodes.get_mut(&old).expect("paired").op = new.nodes[&n].op.clone();
        }
        exec.bodies = bodies;
        // Planned again at the next launch, which prepares only the kernel nodes whose
        // launch changed (`prepared`).
        exec.plan = None;
        exec.generation += 1;
        Ok(())
    }

    /// cuGraphExecChildGraphNodeSetParams: the child graph node `n` of executable graph
    /// `e` runs `child`'s nodes from now on; `child` must have the topology of the node's
    /// graph and change only what cuGraphExecUpdate may (cuda.h), else
    /// CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE as cuGraphExecUpdate (observed).
    pub fn graph_exec_child_set(&self, e: ExecId, n: NodeId, child: GraphId) -> CuResult<()> {
        let mut st = self.state.lock();
        let st = &mut *st;
        live_node(&st.graphs, n)?;
        let new = st.graphs.graph(child)?.clone();
        if st.graphs.has_memory_nodes_deep(child) {
            return Err(invalid(
                "a child graph node cannot hold a graph with memory allocation or free nodes",
            ));
        }
        // The child graph as it is now, and the graphs its nodes own: what the executable
        // graph runs from now on, under a key of its own (no live graph's).
        let mut new_bodies = HashMap::new();
        snapshot_bodies(&st.graphs, &new, &mut new_bodies)?;
        let key = GraphId::from_handle(st.graphs.fresh(GRAPH_TAG));
        let exec = st.graphs.exec(e)?;
        let old = match exec.body.nodes.get(&n).map(|node| &node.op) {
            Some(NodeOp::Child(old)) => *old,
            Some(_) => return Err(invalid(format!("{n:#x} is not a child graph node"))),
            None => {
                return Err(invalid(format!(
                    "{n:#x} is not a node of the graph executable graph {e:#x} came from"
                )))
            }
        };
        let old_body = exec
            .bodies
            .get(&old)
            .cloned()
            .ok_or_else(|| invalid(format!("child graph {old:#x} was not instantiated")))?;
        let check = Pairing {
            modules: &st.modules,
            old_bodies: &exec.bodies,
            new_bodies: &new_bodies,
        };
        // Observed: what cuGraphExecUpdate refuses, this refuses alike.
        check.body(&old_body, &new).map_err(|m| {
            CuError::new(
                GRAPH_EXEC_UPDATE_FAILURE,
                format!("the child graph cannot update node {n:#x}: {}", m.why),
            )
        })?;
        let exec = st.graphs.exec_mut(e)?;
        exec.bodies.extend(new_bodies);
        exec.bodies.insert(key, new);
        exec.body.nodes.get_mut(&n).expect("checked").op = NodeOp::Child(key);
        exec.plan = None;
        exec.generation += 1;
        Ok(())
    }

    /// cuGraphExecGetFlags.
    pub fn graph_exec_flags(&self, e: ExecId) -> CuResult<u64> {
        Ok(self.state.lock().graphs.exec(e)?.flags)
    }

    pub fn graph_find_in_clone(&self, original: NodeId, clone: GraphId) -> CuResult<NodeId> {
        self.state.lock().graphs.find_in_clone(original, clone)
    }

    pub fn graph_destroy_node(&self, n: NodeId) -> CuResult<()> {
        let mut st = self.state.lock();
        let g = st.graphs.node(n)?.0;
        if st.captures.graph_in_capture(g) {
            return Err(invalid(format!(
                "graph {g:#x} is being built by a stream capture"
            )));
        }
        st.graphs.destroy_node(n)
    }

    /// cuGraphUpload: the executable graph made ready for its launches on `stream`'s
    /// device, as its first launch would (`make_plan`), without running it. A plan that
    /// fails is left to the launch to report, as before an upload.
    pub fn graph_upload(&self, e: ExecId, stream: StreamId) -> CuResult<()> {
        let (ctx, kept) = {
            let st = self.state.lock();
            let (ctx, _) = st.contexts.require_current()?;
            st.contexts.check_stream(stream)?;
            let exec = st.graphs.exec(e)?;
            let kept = exec
                .plan
                .as_ref()
                .is_some_and(|p| p.ctx == ctx && p.epoch == st.launch_epoch);
            (ctx, kept)
        };
        if self.capture_of(stream)?.is_some() {
            return Err(not_supported(
                "cuGraphUpload on a capturing stream is not emulated by cumock",
            ));
        }
        if !kept {
            let _ = self.make_plan(e, stream, ctx);
        }
        if let Ok(exec) = self.state.lock().graphs.exec_mut(e) {
            exec.uploaded = Some(stream);
        }
        Ok(())
    }

    /// cuGraphNodeSetEnabled: a disabled node runs as an empty node until enabled again.
    /// cuda.h: "Currently only kernel, memset and memcpy nodes are supported".
    pub fn graph_exec_set_enabled(&self, e: ExecId, n: NodeId, enabled: bool) -> CuResult<()> {
        let mut st = self.state.lock();
        live_node(&st.graphs, n)?;
        let exec = st.graphs.exec_mut(e)?;
        enableable(exec, e, n)?;
        let changed = if enabled {
            exec.disabled.remove(&n)
        } else {
            exec.disabled.insert(n)
        };
        if changed {
            exec.plan = None;
            exec.generation += 1;
        }
        Ok(())
    }

    /// cuGraphNodeGetEnabled.
    pub fn graph_exec_enabled(&self, e: ExecId, n: NodeId) -> CuResult<bool> {
        let st = self.state.lock();
        live_node(&st.graphs, n)?;
        let exec = st.graphs.exec(e)?;
        enableable(exec, e, n)?;
        Ok(!exec.disabled.contains(&n))
    }

    /// Puts the nodes of `body` (child graphs in place) in `steps`, in their order; the
    /// checks of a kernel launch are made here, so that they fail cuGraphLaunch. `own`:
    /// the nodes are the executable graph's own (not a child graph's or a conditional
    /// body's), which `planning.reuse` may hold prepared already.
    fn plan(
        &self,
        body: &GraphBody,
        order: &[NodeId],
        own: bool,
        steps: &mut Vec<Step>,
        planning: &mut Planning,
    ) -> CuResult<()> {
        for n in order {
            if own && planning.disabled.contains(n) {
                continue;
            }
            match &body.nodes[n].op {
                NodeOp::Kernel(k) => {
                    let reused = own
                        .then(|| planning.reuse.remove(n))
                        .flatten()
                        .filter(|(launch, _)| *launch == k.launch);
                    let prepared = match reused {
                        Some((_, p)) => p,
                        None => {
                            let mut launch = k.launch.clone();
                            launch.stream = planning.stream;
                            Arc::new(self.prepare_launch(&launch)?)
                        }
                    };
                    if own {
                        planning.kernels.insert(*n, steps.len());
                        planning
                            .prepared
                            .insert(*n, (k.launch.clone(), prepared.clone()));
                    }
                    planning.has_kernels = true;
                    steps.push(Step::Kernel(prepared));
                }
                NodeOp::Memcpy { action, .. }
                | NodeOp::Memset { action, .. }
                | NodeOp::Host { action, .. } => steps.push(Step::Action(action.clone())),
                // Graph memory is allocated and freed by the launch itself, in API order
                // (graph_memory.rs); the mapping is in place before any node runs.
                NodeOp::Empty | NodeOp::MemAlloc(_) | NodeOp::MemFree(_) => {}
                NodeOp::BatchMemOp(m) => steps.push(Step::MemOps(m.clone())),
                NodeOp::EventRecord(e) => {
                    self.event_check(*e)?;
                    planning.events.push(*e);
                    steps.push(Step::Record(*e));
                }
                NodeOp::EventWait(e) => {
                    self.event_check(*e)?;
                    planning.events.push(*e);
                    planning.waits.push(*e);
                }
                NodeOp::Child(child) => {
                    let cb = planning.bodies.get(child).cloned().ok_or_else(|| {
                        invalid(format!("child graph {child:#x} was not instantiated"))
                    })?;
                    self.plan(&cb, &cb.topological()?, false, steps, planning)?;
                }
                NodeOp::Conditional(c) => {
                    let mut planned = Vec::with_capacity(c.bodies.len());
                    for b in &c.bodies {
                        let bb = planning.bodies.get(b).ok_or_else(|| {
                            invalid(format!(
                                "conditional body graph {b:#x} was not instantiated"
                            ))
                        })?;
                        let bb = bb.clone();
                        let mut s = self.conditional_defaults(*b);
                        self.plan(&bb, &bb.topological()?, false, &mut s, planning)?;
                        planned.push(s);
                    }
                    steps.push(Step::Conditional {
                        word: c.handle,
                        kind: c.kind,
                        bodies: planned,
                    });
                }
            }
        }
        Ok(())
    }

    /// Plans executable graph `e` for a launch on `stream` in context `ctx`, and keeps the
    /// plan for the next launches (unless a setter changed a node meanwhile).
    fn make_plan(&self, e: ExecId, stream: StreamId, ctx: ContextId) -> CuResult<Arc<Plan>> {
        let (body, order, graph, generation, epoch, mut planning) = {
            let mut st = self.state.lock();
            let epoch = st.launch_epoch;
            let exec = st.graphs.exec_mut(e)?;
            // Prepared in another context, or before a module was unloaded or a
            // function's attribute or a limit set: nothing is reused.
            let reuse = if exec.prepared_in == Some((ctx, epoch)) {
                std::mem::take(&mut exec.prepared)
            } else {
                HashMap::new()
            };
            let planning = Planning {
                stream,
                bodies: exec.bodies.clone(),
                reuse,
                prepared: HashMap::new(),
                kernels: HashMap::new(),
                waits: Vec::new(),
                events: Vec::new(),
                has_kernels: false,
                disabled: exec.disabled.clone(),
            };
            (
                exec.body.clone(),
                exec.order.clone(),
                exec.graph,
                exec.generation,
                epoch,
                planning,
            )
        };
        let mut steps = self.conditional_defaults(graph);
        self.plan(&body, &order, true, &mut steps, &mut planning)?;
        let records = steps
            .iter()
            .filter_map(|s| match s {
                Step::Record(e) => Some(*e),
                _ => None,
            })
            .collect();
        let plan = Arc::new(Plan {
            steps,
            waits: planning.waits,
            events: planning.events,
            records,
            kernels: planning.kernels,
            has_kernels: planning.has_kernels,
            ctx,
            epoch,
        });
        let mut st = self.state.lock();
        if let Ok(exec) = st.graphs.exec_mut(e) {
            if exec.generation == generation {
                exec.plan = Some(plan.clone());
                exec.prepared = planning.prepared;
                exec.prepared_in = Some((ctx, epoch));
            }
        }
        Ok(plan)
    }

    /// What a kept plan's launch checks again: the device's sticky error (as a kernel's
    /// launch does), and that its events still live.
    fn check_plan(&self, plan: &Plan, device: usize) -> CuResult<()> {
        let mut st = self.state.lock();
        if plan.has_kernels {
            self.check_sticky(&st, device)?;
        }
        for e in &plan.events {
            st.contexts.event(*e)?;
        }
        Ok(())
    }

    /// The steps that assign the defaults of the handles created for `graph`.
    fn conditional_defaults(&self, graph: GraphId) -> Vec<Step> {
        self.state
            .lock()
            .conditionals
            .defaults_of(graph)
            .into_iter()
            .map(|(word, value)| Step::Default { word, value })
            .collect()
    }

    /// Runs a launch's steps on its stream's worker, conditional bodies as their
    /// handles' words say.
    /// `env`: the graph's launch, which its kernels' device-side cudaGraphLaunch calls
    /// go to; the fire-and-forget graphs a kernel launched run after it (graphs/device.rs).
    fn run_steps(
        &'static self,
        steps: &[Step],
        device: usize,
        bound: &BoundObjects,
        env: &GraphEnv,
    ) {
        for step in steps {
            match step {
                Step::Kernel(k) => {
                    k.run_in(self, bound, Some(env));
                    for fired in env.take_fired() {
                        self.run_device_graphs(vec![fired], device, bound, env.depth() + 1);
                    }
                }
                Step::Action(a) => {
                    if let Err(err) = a() {
                        self.device_work_failed(device, err);
                    }
                }
                Step::MemOps(m) => self.run_mem_ops(m.device, &m.ops),
                Step::Record(ev) => {
                    if let Ok(t) = self.state.lock().contexts.event(*ev) {
                        *t = Some(std::time::Instant::now());
                    }
                }
                Step::Default { word, value } => {
                    let bytes = value.to_ne_bytes();
                    let src = HostOrDevice::Host(HostBytes::from_slice(&bytes));
                    let dst = HostOrDevice::Device(DevicePtr::new(*word));
                    if let Err(err) = self.copy_on(device, dst, src, 4, false) {
                        self.device_work_failed(device, err);
                    }
                }
                Step::Conditional { word, kind, bodies } => {
                    // A fault (the device's sticky error) stops the reads, as it stops
                    // the GPU's work.
                    let read = || {
                        let mut b = [0u8; 4];
                        let dst = HostOrDevice::Host(HostBytes::from_mut_slice(&mut b));
                        let src = HostOrDevice::Device(DevicePtr::new(*word));
                        self.copy_on(device, dst, src, 4, false)
                            .map(|()| u32::from_ne_bytes(b))
                    };
                    match *kind {
                        conditional::kind::IF => match read() {
                            Ok(0) => {
                                if let Some(els) = bodies.get(1) {
                                    self.run_steps(els, device, bound, env);
                                }
                            }
                            Ok(_) => self.run_steps(&bodies[0], device, bound, env),
                            Err(_) => {}
                        },
                        conditional::kind::WHILE => {
                            while let Ok(v) = read() {
                                if v == 0 {
                                    break;
                                }
                                self.run_steps(&bodies[0], device, bound, env);
                            }
                        }
                        _ => {
                            if let Some(b) = read().ok().and_then(|v| bodies.get(v as usize)) {
                                self.run_steps(b, device, bound, env);
                            }
                        }
                    }
                }
            }
        }
    }

    /// cuGraphLaunch: the whole graph is one piece of work on `stream`. On a capturing
    /// stream it becomes a child graph node of the capture. The graph's nodes are planned
    /// at its first launch (`make_plan`), then only the events are read again.
    pub fn graph_launch(&'static self, e: ExecId, stream: StreamId) -> CuResult<()> {
        let (kept, memory_ops, auto_free, ctx, device, current) = {
            let st = self.state.lock();
            let (ctx, c) = st.contexts.require_current()?;
            let device = c.device;
            st.contexts.check_stream(stream)?;
            let exec = st.graphs.exec(e)?;
            // cudaGetCurrentGraphExec in its kernels: its handle if it is a device graph.
            let current = if exec.flags & DEVICE_LAUNCH != 0 {
                e.handle()
            } else {
                0
            };
            let kept = exec
                .plan
                .as_ref()
                .filter(|p| p.ctx == ctx && p.epoch == st.launch_epoch)
                .cloned();
            (
                kept,
                exec.memory_ops.clone(),
                exec.auto_free,
                ctx,
                device,
                current,
            )
        };
        if self.capture_of(stream)?.is_some() {
            if !memory_ops.is_empty() {
                return Err(invalid(
                    "an executable graph with memory nodes cannot be launched into a stream capture",
                ));
            }
            let child = {
                let mut st = self.state.lock();
                let exec = st.graphs.exec(e)?;
                let (body, bodies) = (exec.body.clone(), exec.bodies.clone());
                st.graphs.register_snapshot(&body, &bodies)
            };
            return self
                .capture_node(stream, NodeOp::Child(child))
                .inspect_err(|_| self.state.lock().graphs.drop_child_copy(child));
        }
        let plan = match kept {
            Some(plan) => {
                self.check_plan(&plan, device)?;
                plan
            }
            None => self.make_plan(e, stream, ctx)?,
        };
        // A launch from the host uploads a device graph (the programming guide).
        if let Ok(exec) = self.state.lock().graphs.exec_mut(e) {
            exec.uploaded.get_or_insert(stream);
        }
        // The events' last records as of the launch: earlier work, so the waits, taken
        // before the whole graph, can never wait on the graph itself.
        let waits: Vec<stream_queues::Mark> = plan
            .waits
            .iter()
            .filter_map(|ev| stream_queues::event_pending(*ev))
            .collect();
        let queue = stream_queues::key_of(stream);
        let regions = if memory_ops.is_empty() {
            Vec::new()
        } else {
            let mut st = self.state.lock();
            let st = &mut *st;
            st.graph_memory.check_launch(&memory_ops, auto_free)?;
            let profile = &self.profile;
            st.graph_memory.launch(
                &mut st.vmm,
                &memory_ops,
                queue,
                |vmm, d| profile.devices[d].free_at_start.saturating_sub(vmm.used(d)),
                |d| profile.devices[d].granularity_minimum,
            )?
        };
        let run = plan.clone();
        // The texture and surface objects live at the launch, kept for its kernels.
        let bound = self.bound_objects();
        self.enqueue_work(
            stream,
            "cuGraphLaunch",
            Box::new(move || {
                waits.iter().for_each(stream_queues::Mark::wait);
                // Copies and memsets need the launching thread's context, current here too.
                let pushed = self.state.lock().contexts.push(ctx).is_ok();
                let env = GraphEnv::new(current, 0);
                self.run_steps(&run.steps, device, &bound, &env);
                // The device graphs its kernels queued as tail launches: after the whole
                // graph, in their order.
                self.run_device_graphs(env.take_tails(), device, &bound, 0);
                if pushed {
                    let _ = self.state.lock().contexts.pop();
                }
                if !regions.is_empty() {
                    self.state.lock().graph_memory.landed(&regions, queue);
                }
            }),
        )?;
        // Each recorded event completes once the graph has run (after its node on a GPU:
        // here a little later, never sooner).
        if !plan.records.is_empty() {
            let order = self.stream_order(stream)?;
            // Recorded by the graph, an event last recorded in an ended capture is an
            // ordinary one again (capture.rs, `Captures::check_event`).
            {
                let mut st = self.state.lock();
                for ev in &plan.records {
                    st.captures.recorded_outside(*ev);
                }
            }
            for ev in &plan.records {
                stream_queues::record(*ev, stream, order, Box::new(|| ())).map_err(|err| {
                    CuError::new(
                        CUDA_ERROR_OUT_OF_MEMORY,
                        format!("no thread for the stream's work: {err}"),
                    )
                })?;
            }
        }
        Ok(())
    }

    /// A node's copy or memset failed while the graph ran: as a GPU's faulting work, it
    /// becomes the device's sticky error; past the device memory the host may back, the
    /// mock's limit, it is said once (`State::stopped`).
    fn device_work_failed(&self, device: usize, err: CuError) {
        let message = format!("a graph node failed: {}", err.message);
        crate::diagnostics::kernel_fault(&message);
        let mut st = self.state.lock();
        if err.severity == Severity::HostLimit {
            st.stopped[device].set(Some(CuError::new(err.code, message)));
        } else if st.sticky[device].is_none() {
            st.sticky[device] = Some(CuError::new(err.code, message));
        }
    }

    /// cuGraphDebugDotPrint's text: every node, labelled with its type and parameters,
    /// and every edge.
    /// cuGraphDebugDotPrint's DOT text of graph `g` (child graphs inside their nodes),
    /// as `flags` ask (`dot_flags`).
    pub fn graph_dot(&self, g: GraphId, flags: u32) -> CuResult<String> {
        let body = self.state.lock().graphs.graph(g)?.clone();
        let mut dot = format!("digraph cumock_graph_{g:x} {{\n");
        self.dot_body(&body, &mut dot, "", flags);
        dot.push_str("}\n");
        Ok(dot)
    }

    fn dot_body(&self, body: &GraphBody, dot: &mut String, prefix: &str, flags: u32) {
        let on = |flag: u32| flags & (dot_flags::VERBOSE | flag) != 0;
        for (i, n) in body.order.iter().enumerate() {
            let op = &body.nodes[n].op;
            let handle = if on(dot_flags::HANDLES) {
                format!(" node {n:#x}")
            } else {
                String::new()
            };
            let _ = writeln!(
                dot,
                "  \"{prefix}node{i}\" [label=\"{prefix}node{i}: {}{handle}\"];",
                op.label(self, flags).replace('"', "'")
            );
            if let NodeOp::Child(child) = op {
                let cb = self.state.lock().graphs.graph(*child).cloned();
                if let Ok(cb) = cb {
                    self.dot_body(&cb, dot, &format!("{prefix}node{i}."), flags);
                }
            }
        }
        let index: HashMap<NodeId, usize> = body
            .order
            .iter()
            .enumerate()
            .map(|(i, n)| (*n, i))
            .collect();
        for (k, (from, to)) in body.edges().into_iter().enumerate() {
            // EXTRA_TOPO_INFO: each edge numbered, in the order cuGraphGetEdges lists them.
            let number = if on(dot_flags::EXTRA_TOPO_INFO) {
                format!(" [label=\"edge {k}\"]")
            } else {
                String::new()
            };
            let _ = writeln!(
                dot,
                "  \"{prefix}node{}\" -> \"{prefix}node{}\"{number};",
                index[&from], index[&to]
            );
        }
    }
}
