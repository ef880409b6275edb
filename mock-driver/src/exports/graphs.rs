//! Graph management (cuda.h's group CUDA_GRAPH): graphs built node by node, cloned,
//! instantiated, updated and launched (model/graphs.rs), and the node parameters of
//! cuda.h read from the program's structs. Copies, memsets and host functions become
//! `NodeAction`s here, the one place that may touch the program's pointers: they run
//! the synchronous export's body in the graph's stream order. Graph memory nodes are
//! model/graph_memory.rs's; batch memory-operation nodes are built by
//! exports/stream_memops.rs; external semaphore nodes are not emulated. cuGraphAddNode
//! builds every type the mock has, from `CUgraphNodeParams`; cuGraphNodeSetParams and
//! cuGraphExecNodeSetParams set kernel, memcpy, memset, host and batch memory-operation
//! nodes.

use super::exec::{param_buffer, ProgramData};
use super::{in_stream_order, Mock};
use crate::boundary::{drv, input, out, slice, Filled, Handle, Late, Out};
use crate::model::error::*;
use crate::model::graph_memory::AllocNode;
use crate::model::graphs::{self, GraphId, KernelNode, NodeAction, NodeId, NodeOp, Operand, Shape};
use crate::model::ids::{EventId, StreamId};
use crate::model::module::LaunchRequest;
use crate::model::Driver;
use cumock_abi::*;
use std::ffi::{c_char, c_uint, c_void};
use std::sync::Arc;

/// `CUDA_KERNEL_NODE_PARAMS_v1` as cuda.h lays it out.
#[repr(C)]
#[derive(Clone, Copy)]
struct KernelParamsV1 {
    func: CUfunction,
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared: c_uint,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
}

/// `CUDA_KERNEL_NODE_PARAMS_v2`: v1, then a CUkernel (used instead of `func` when set) and
/// a context.
#[repr(C)]
#[derive(Clone, Copy)]
struct KernelParamsV2 {
    v1: KernelParamsV1,
    kern: CUkernel,
    ctx: CUcontext,
}

/// `CUDA_MEMSET_NODE_PARAMS_v1`.
#[repr(C)]
#[derive(Clone, Copy)]
struct MemsetParams {
    dst: CUdeviceptr,
    pitch: usize,
    value: c_uint,
    element_size: c_uint,
    width: usize,
    height: usize,
}

/// `CUDA_HOST_NODE_PARAMS_v1`.
#[repr(C)]
#[derive(Clone, Copy)]
struct HostParams {
    f: CUhostFn,
    user_data: *mut c_void,
}

/// `CUDA_MEM_ALLOC_NODE_PARAMS_v1` (v2 has the same layout).
#[repr(C)]
#[derive(Clone, Copy)]
struct AllocNodeParams {
    pool_props: CUmemPoolProps,
    access_descs: *const CUmemAccessDesc,
    access_desc_count: usize,
    bytesize: usize,
    dptr: CUdeviceptr,
}

/// `CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH` and `_DEVICE_LAUNCH`.
const AUTO_FREE_ON_LAUNCH: u64 = 1;
const DEVICE_LAUNCH: u64 = 4;
/// `CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD`: upload into the parameters' stream.
const UPLOAD: u64 = 2;
/// `CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY`.
const USE_NODE_PRIORITY: u64 = 8;

/// cuGraphInstantiateWithFlags and cuGraphInstantiateWithParams: the flags checked, then
/// the graph instantiated. AUTO_FREE_ON_LAUNCH is graph_memory.rs's, DEVICE_LAUNCH
/// graphs/device.rs's; UPLOAD and USE_NODE_PRIORITY change nothing the mock runs.
fn instantiate(d: &Driver, g: GraphId, flags: u64) -> CuResult<graphs::ExecId> {
    instantiate_flags(flags)?;
    // Observed (random_graphs: 26 of 26 executables instantiated with flags 8):
    // cuGraphExecGetFlags does not report USE_NODE_PRIORITY.
    d.graph_instantiate(g, flags & !USE_NODE_PRIORITY)
}

/// The refusals of cuGraphInstantiate's flags, which come before the graph's: a graph
/// with a cycle is then CUDA_GRAPH_INSTANTIATE_ERROR, not INVALID_STRUCTURE (random_graphs
/// session 18: flags 5, 26 of 26 calls result 1, two of them on a graph with a cycle,
/// seed 12 line 62 and seed 34 line 374).
fn instantiate_flags(flags: u64) -> CuResult<()> {
    if flags & (AUTO_FREE_ON_LAUNCH | DEVICE_LAUNCH) == AUTO_FREE_ON_LAUNCH | DEVICE_LAUNCH {
        // cuda.h: "cannot be used in conjunction"; observed: CUDA_ERROR_INVALID_VALUE.
        return Err(invalid(
            "CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH cannot go with AUTO_FREE_ON_LAUNCH",
        ));
    }
    // Observed (random_graphs: flags 16, 32 of 32 calls of both functions):
    // INVALID_VALUE. Only 16 was tried; every flag cuda.h does not name is taken alike.
    if flags & !(AUTO_FREE_ON_LAUNCH | UPLOAD | DEVICE_LAUNCH | USE_NODE_PRIORITY) != 0 {
        return Err(invalid(format!(
            "graph instantiate flags {flags:#x}: not CUgraphInstantiate_flags"
        )));
    }
    Ok(())
}

/// `CUDA_GRAPH_INSTANTIATE_PARAMS`.
#[repr(C)]
#[derive(Clone, Copy)]
struct InstantiateParams {
    flags: u64,
    upload_stream: CUstream,
    err_node: CUgraphNode,
    result: u32,
}

/// `CUgraphExecUpdateResultInfo`.
#[repr(C)]
#[derive(Clone, Copy)]
struct UpdateResultInfo {
    result: u32,
    error_node: CUgraphNode,
    error_from_node: CUgraphNode,
}

/// The model's keys of the nodes of an array parameter (`emulate!`'s `#[slice]`).
fn node_keys(nodes: &[CUgraphNode]) -> Vec<NodeId> {
    nodes.iter().map(|n| n.key()).collect()
}

/// The dependencies a node is added with, for the calls that read their arrays
/// themselves (stream capture into a graph).
///
/// # Safety
/// `deps` is NULL or holds `n` node handles (cuda.h).
pub(super) unsafe fn deps(deps: *const CUgraphNode, n: usize) -> CuResult<Vec<NodeId>> {
    // Safety: the caller's contract.
    Ok(node_keys(unsafe { slice(deps, n, "dependencies") }?))
}

/// The edges `from[i] -> to[i]` that cuGraphAddDependencies and cuGraphRemoveDependencies
/// take.
fn edges(from: &[CUgraphNode], to: &[CUgraphNode]) -> Vec<(NodeId, NodeId)> {
    node_keys(from).into_iter().zip(node_keys(to)).collect()
}

/// Writes a list of handles the way cuGraphGetNodes and its kin do ([`Filled::fill`]), for
/// cuGraphGetEdges, whose two arrays share one count.
///
/// # Safety
/// `count` is NULL or a `usize`; `out` is NULL or holds `*count` handles.
unsafe fn list_out<T: Copy>(items: &[T], out: *mut T, count: *mut usize, null: T) -> CuResult<()> {
    Filled::new(out, count, "the count pointer is NULL").fill(items, null)
}

/// A kernel node from cuda.h's params: the parameters copied now, as the driver does.
///
/// # Safety
/// The params' pointers are the program's, as for cuLaunchKernel.
unsafe fn kernel_node(p: &KernelParamsV1, kern: CUkernel) -> CuResult<KernelNode> {
    let d = drv()?;
    let function = if kern.is_null() {
        Handle::key(p.func)
    } else {
        Handle::key(kern).as_function()
    };
    // Safety: the caller's contract.
    let params = unsafe { param_buffer(d, function, p.kernel_params, p.extra)? };
    d.kernel_node(LaunchRequest {
        function,
        grid: p.grid,
        block: p.block,
        shared: p.shared,
        stream: StreamId::NULL,
        params,
        cooperative: false,
        cluster: None,
    })
}

unsafe fn read_kernel_v1(p: *const CUDA_KERNEL_NODE_PARAMS_v1) -> CuResult<KernelNode> {
    // Safety: the program's struct, as cuda.h lays it out.
    let p = unsafe { input(p.cast::<KernelParamsV1>(), "nodeParams")? };
    unsafe { kernel_node(&p, std::ptr::null_mut()) }
}

unsafe fn read_kernel_v2(p: *const CUDA_KERNEL_NODE_PARAMS) -> CuResult<KernelNode> {
    // Safety: as above.
    let p = unsafe { input(p.cast::<KernelParamsV2>(), "nodeParams")? };
    unsafe { kernel_node(&p.v1, p.kern) }
}

/// Writes a kernel node's params: `kernelParams` points at the node's own copy.
fn write_kernel_params(d: &Driver, n: NodeId) -> CuResult<KernelParamsV1> {
    let k = d.kernel_node_get(n)?;
    let args = d.kernel_node_param_pointers(n)?;
    Ok(KernelParamsV1 {
        func: CUfunction::of(k.launch.function),
        grid: k.launch.grid,
        block: k.launch.block,
        shared: k.launch.shared,
        kernel_params: args as *mut *mut c_void,
        extra: std::ptr::null_mut(),
    })
}

/// A copy's or memset's operand at `addr`, as an executable graph compares it: the memory
/// type the node names (a unified side stays unified: the H200 refuses the same device
/// memory named UNIFIED instead of DEVICE), a captured copy's (`declared` None) resolved
/// to where the address is (device memory or the host), with the context and device the
/// driver knows the memory by.
pub(super) fn operand(addr: u64, declared: Option<u32>) -> Operand {
    let Ok(d) = drv() else {
        return Operand {
            memory_type: declared.unwrap_or(0),
            owner: None,
        };
    };
    let on_device = || {
        if d.is_device_address(crate::boundary::device_ptr(addr)) {
            2
        } else {
            1
        }
    };
    let memory_type = declared.unwrap_or_else(on_device);
    let owner = d
        .pointer_info(crate::boundary::device_ptr(addr))
        .map(|i| (i.context, i.device));
    Operand { memory_type, owner }
}

/// Refuses a node's device range that runs past the end of the allocation holding its
/// start, as the H200 refused memset and memcpy nodes so when added or set (random_graphs:
/// 16 of 16, e.g. seed 12 line 20). An address the model knows no allocation of is left to
/// the node's run, as before.
fn within_allocation(addr: u64, bytes: usize, which: &str) -> CuResult<()> {
    let Ok((base, size)) = drv()?.address_range(crate::boundary::device_ptr(addr)) else {
        return Ok(());
    };
    let end = base.get().saturating_add(size);
    if addr.saturating_add(bytes as u64) > end {
        return Err(invalid(format!(
            "the {which} range of {bytes} bytes at {addr:#x} runs past the end of its \
             allocation ({size} bytes at {:#x})",
            base.get()
        )));
    }
    Ok(())
}

/// An event node's event: NULL is INVALID_VALUE (random_graphs: 45 of 45 record and
/// wait nodes, e.g. seed 29 line 7), where another call's NULL event is INVALID_HANDLE.
fn no_event(event: EventId) -> CuResult<()> {
    if event.is_null() {
        return Err(invalid("the event node's event is NULL"));
    }
    Ok(())
}

/// A memcpy node's copy: one-dimensional copies (Height and Depth 1) between host and
/// device memory; arrays and 2D/3D copies are not emulated in graphs.
fn memcpy_action(p: &CUDA_MEMCPY3D) -> CuResult<(NodeAction, String, Shape)> {
    // Observed (random_graphs, every such node added or set: e.g. seed 31 line 8, seed
    // 40 line 37): nothing to copy is INVALID_VALUE.
    if p.width_in_bytes == 0 || p.depth == 0 {
        return Err(invalid(format!(
            "WidthInBytes {} and Depth {}: a copy of nothing",
            p.width_in_bytes, p.depth
        )));
    }
    if p.height > 1 || p.depth > 1 || p.src_y | p.src_z | p.dst_y | p.dst_z != 0 {
        return Err(not_supported(
            "cumock's graph memcpy nodes copy one-dimensional ranges only (Height and Depth 1)",
        ));
    }
    let address = |memory_type: u32, host: u64, device: u64, x: usize, which: &str| {
        let base = match memory_type {
            1 => host,
            2 | 4 => device,
            3 => {
                return Err(not_supported(format!(
                    "cumock's graph memcpy nodes do not copy CUDA arrays ({which})"
                )))
            }
            t => return Err(invalid(format!("{t} is not a CUmemorytype ({which})"))),
        };
        if base == 0 {
            return Err(invalid(format!("the {which} address is NULL")));
        }
        Ok(base.wrapping_add(x as u64))
    };
    let (src, dst, n) = (
        address(
            p.src_memory_type,
            p.src_host as u64,
            p.src_device,
            p.src_x_in_bytes,
            "source",
        )?,
        address(
            p.dst_memory_type,
            p.dst_host as u64,
            p.dst_device,
            p.dst_x_in_bytes,
            "destination",
        )?,
        p.width_in_bytes,
    );
    if p.src_memory_type == 2 {
        within_allocation(src, n, "source")?;
    }
    if p.dst_memory_type == 2 {
        within_allocation(dst, n, "destination")?;
    }
    let action: NodeAction = Arc::new(move || {
        // Safety: the addresses the program gave for the node, which it keeps valid while
        // the graph may run (cuda.h).
        in_stream_order(|| unsafe { <Mock as MemoryApi>::cuMemcpy(dst, src, n) })
    });
    let shape = Shape::Copy {
        src: operand(src, Some(p.src_memory_type)),
        dst: operand(dst, Some(p.dst_memory_type)),
        bytes: n,
    };
    Ok((action, format!("{n} bytes {src:#x} -> {dst:#x}"), shape))
}

/// The bytes of a cuda.h struct of the program's, kept for cuGraph*NodeGetParams.
fn bytes_of<T: Copy>(v: &T) -> Arc<[u8]> {
    // Safety: a plain C struct of `size_of::<T>()` bytes, read as bytes; its padding is
    // what the program wrote there (handed back as it was).
    unsafe { std::slice::from_raw_parts((v as *const T).cast::<u8>(), std::mem::size_of::<T>()) }
        .into()
}

/// A memcpy node's work.
fn memcpy_op(p: &CUDA_MEMCPY3D) -> CuResult<NodeOp> {
    let (action, what, shape) = memcpy_action(p)?;
    Ok(NodeOp::Memcpy {
        action,
        what,
        shape,
        given: bytes_of(p),
    })
}

/// A memset node's work.
fn memset_op(p: &MemsetParams) -> CuResult<NodeOp> {
    let (action, what, shape) = memset_action(p)?;
    Ok(NodeOp::Memset {
        action,
        what,
        shape,
        given: bytes_of(p),
    })
}

/// A memset node's fill.
fn memset_action(p: &MemsetParams) -> CuResult<(NodeAction, String, Shape)> {
    let (dst, pitch, w, h, v) = (p.dst, p.pitch, p.width, p.height.max(1), p.value);
    let size = p.element_size;
    if ![1, 2, 4].contains(&size) {
        return Err(invalid(format!("elementSize {size} is not 1, 2 or 4")));
    }
    if h > 1 && pitch < w * size as usize {
        return Err(invalid(format!(
            "pitch {pitch} is less than a row of {w} elements"
        )));
    }
    // Observed (random_graphs, every such node added or set: e.g. seed 17 line 22):
    // INVALID_VALUE.
    if dst % size as u64 != 0 {
        return Err(invalid(format!(
            "{dst:#x} is not aligned to the elements of {size} bytes"
        )));
    }
    let rows = if h > 1 { pitch * (h - 1) } else { 0 };
    within_allocation(dst, rows + w * size as usize, "destination")?;
    let action: NodeAction = Arc::new(move || {
        in_stream_order(|| {
            // Safety: device addresses only: the model checks them.
            unsafe {
                match (size, h) {
                    (1, 1) => Mock::cuMemsetD8_v2(dst, v as u8, w),
                    (2, 1) => Mock::cuMemsetD16_v2(dst, v as u16, w),
                    (4, 1) => Mock::cuMemsetD32_v2(dst, v, w),
                    (1, _) => Mock::cuMemsetD2D8_v2(dst, pitch, v as u8, w, h),
                    (2, _) => Mock::cuMemsetD2D16_v2(dst, pitch, v as u16, w, h),
                    _ => Mock::cuMemsetD2D32_v2(dst, pitch, v, w, h),
                }
            }
        })
    });
    let shape = Shape::Fill {
        dst: operand(dst, Some(2)),
        element_size: size,
        width: w,
        height: h,
        pitch: if h > 1 { pitch } else { 0 },
    };
    Ok((
        action,
        format!("{w}x{h} elements of {size} bytes = {v:#x} at {dst:#x}"),
        shape,
    ))
}

fn host_action(f: unsafe extern "C" fn(*mut c_void), data: *mut c_void) -> NodeAction {
    // An address: the node may run on any stream's worker, as CUDA runs host nodes on a
    // thread of its own (see `ProgramData`).
    let data = data as usize;
    Arc::new(move || {
        let data = ProgramData(data as *mut c_void);
        // Safety: the program's function with its data, as it asked.
        unsafe { f(data.get()) };
        Ok(())
    })
}

/// A host node from `CUDA_HOST_NODE_PARAMS`.
///
/// # Safety
/// `p` is NULL or the program's struct.
unsafe fn host_op(p: *const CUDA_HOST_NODE_PARAMS) -> CuResult<NodeOp> {
    // Safety: the caller's contract.
    let p = unsafe { input(p.cast::<HostParams>(), "nodeParams")? };
    let f = p.f.ok_or_else(|| invalid("nodeParams->fn is NULL"))?;
    let what = format!("{:#x}", f as usize);
    Ok(NodeOp::Host {
        action: host_action(f, p.user_data),
        what,
        given: (f as usize, p.user_data as usize),
    })
}

/// cuLaunchHostFunc on a capturing stream: a host node.
pub(super) fn capture_host_node(
    s: CUstream,
    f: unsafe extern "C" fn(*mut c_void),
    data: *mut c_void,
) -> CuResult<()> {
    let what = format!("{:#x}", f as usize);
    drv()?.capture_node(
        s.key(),
        NodeOp::Host {
            action: host_action(f, data),
            what,
            given: (f as usize, data as usize),
        },
    )
}

/// What a captured copy or memset becomes: its label, its shape, and the cuda.h struct
/// cuGraph*NodeGetParams answers for it (`captured_fill`, `captured_copy`).
pub(super) struct Captured {
    pub what: String,
    pub shape: Shape,
    pub given: Arc<[u8]>,
}

/// The `CUDA_MEMSET_NODE_PARAMS` of a captured cuMemsetD*Async: `n` elements of `size`
/// bytes in one row (the H200 answers dst, value, element size, n x 1; its pitch is not
/// recorded: 0 here, as a one-row memset's pitch is unused).
pub(super) fn captured_fill(dst: CUdeviceptr, value: u32, size: u32, n: usize) -> Arc<[u8]> {
    bytes_of(&MemsetParams {
        dst,
        pitch: 0,
        value,
        element_size: size,
        width: n,
        height: 1,
    })
}

/// The `CUDA_MEMCPY3D` of a captured one-dimensional copy of `n` bytes: each side's
/// memory type where the address is (the H200 answers DEVICE for both sides of a
/// captured cuMemcpyDtoDAsync), its address as a host or device pointer, one row.
pub(super) fn captured_copy(src: u64, dst: u64, n: usize) -> Arc<[u8]> {
    let (s, d) = (
        operand(src, None).memory_type,
        operand(dst, None).memory_type,
    );
    let host = |t: u32, a: u64| if t == 1 { a } else { 0 };
    let device = |t: u32, a: u64| if t == 1 { 0 } else { a };
    bytes_of(&CUDA_MEMCPY3D {
        src_x_in_bytes: 0,
        src_y: 0,
        src_z: 0,
        src_lod: 0,
        src_memory_type: s,
        src_host: host(s, src) as *const c_void,
        src_device: device(s, src),
        src_array: std::ptr::null_mut(),
        reserved0: std::ptr::null_mut(),
        src_pitch: 0,
        src_height: 0,
        dst_x_in_bytes: 0,
        dst_y: 0,
        dst_z: 0,
        dst_lod: 0,
        dst_memory_type: d,
        dst_host: host(d, dst) as *mut c_void,
        dst_device: device(d, dst),
        dst_array: std::ptr::null_mut(),
        reserved1: std::ptr::null_mut(),
        dst_pitch: 0,
        dst_height: 0,
        width_in_bytes: n,
        height: 1,
        depth: 1,
    })
}

/// An async copy or memset on a capturing stream: a node that runs `body` in order.
pub(super) fn capture_op(
    s: CUstream,
    captured: Captured,
    body: impl Fn() -> CuResult<()> + Send + Sync + 'static,
) -> CuResult<()> {
    let action: NodeAction = Arc::new(move || in_stream_order(&body));
    let Captured { what, shape, given } = captured;
    let op = match shape {
        Shape::Fill { .. } => NodeOp::Memset {
            action,
            what,
            shape,
            given,
        },
        Shape::Copy { .. } => NodeOp::Memcpy {
            action,
            what,
            shape,
            given,
        },
    };
    drv()?.capture_node(s.key(), op)
}

/// Refuses edge data other than default edges (NULL: all default).
fn only_default_edges(edge_data: Option<&[CUgraphEdgeData]>) -> CuResult<()> {
    if edge_data.is_some_and(|e| e.iter().any(|e| *e != CUgraphEdgeData::default())) {
        return Err(not_supported(
            "cumock's graphs have default edges only (programmatic edges and ports are not emulated)",
        ));
    }
    Ok(())
}

/// [`only_default_edges`] for the calls that read their arrays themselves.
///
/// # Safety
/// `edge_data` is NULL or holds `n` CUgraphEdgeData.
pub(super) unsafe fn default_edges(edge_data: *const CUgraphEdgeData, n: usize) -> CuResult<()> {
    // Safety: the caller's contract.
    only_default_edges(unsafe { crate::boundary::slice_opt(edge_data, n, "edgeData") }?)
}

/// The edge data a `_v2` query writes beside its nodes: every edge of the mock's graphs
/// is a default one (all zero bytes), `*n` of them when the nodes are asked for.
///
/// # Safety
/// `n` is NULL or a `usize`; `edge_data` is NULL or holds `*n` CUgraphEdgeData.
unsafe fn default_edges_out(
    count_only: bool,
    edge_data: *mut CUgraphEdgeData,
    n: *mut usize,
) -> CuResult<()> {
    if edge_data.is_null() {
        return Ok(());
    }
    if count_only {
        return Err(invalid("edgeData needs the node array too"));
    }
    let room = input(n, "numDependencies")?;
    // Safety: edgeData holds numDependencies entries of 8 bytes (cuda.h).
    unsafe { std::ptr::write_bytes(edge_data.cast::<u8>(), 0, room * 8) };
    Ok(())
}

/// `CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE`: the node holds a copy of the child graph.
const CHILD_GRAPH_OWNERSHIP_CLONE: i32 = 0;

/// What `CUgraphNodeParams` sets on a node (cuGraphNodeSetParams,
/// cuGraphExecNodeSetParams): new work, or a child graph node's graph.
enum NodeSetting {
    Op(NodeOp),
    Child(GraphId),
}

/// The setting `CUgraphNodeParams` describes, for cuGraphNodeSetParams and
/// cuGraphExecNodeSetParams: kernel, memcpy, memset, host, event record and wait, and
/// child graph nodes.
///
/// # Safety
/// `p` is NULL or a `CUgraphNodeParams`, as cuda.h lays it out.
unsafe fn node_params(p: *mut CUgraphNodeParams, call: &str) -> CuResult<NodeSetting> {
    // Safety: the caller's contract.
    let params = unsafe { input(p.cast_const().cast::<GraphNodeParams>(), "nodeParams")? };
    let union = p.cast::<u8>().wrapping_add(16);
    // Safety: as above; the union is at byte 16.
    if let Some(op) = unsafe { work_node(params.type_, union)? } {
        return Ok(NodeSetting::Op(op));
    }
    Ok(match params.type_ {
        // An empty node has no parameters: setting them succeeds (observed).
        graphs::node_type::EMPTY => NodeSetting::Op(NodeOp::Empty),
        graphs::node_type::EVENT_RECORD | graphs::node_type::WAIT_EVENT => {
            NodeSetting::Op(event_op(params.type_, (params.union[0] as CUevent).key())?)
        }
        // Safety: the union holds CUDA_CHILD_GRAPH_NODE_PARAMS.
        graphs::node_type::GRAPH => NodeSetting::Child(unsafe { child_params(union)? }),
        t => {
            return Err(not_supported(format!(
                "{call} of node type {t} is not emulated by cumock (kernel, memcpy, memset, \
                 host, event record and wait, and child graph nodes are)"
            )))
        }
    })
}

/// An event record (`kind` EVENT_RECORD) or wait node's work.
fn event_op(kind: i32, e: EventId) -> CuResult<NodeOp> {
    drv()?.event_check(e)?;
    Ok(if kind == graphs::node_type::EVENT_RECORD {
        NodeOp::EventRecord(e)
    } else {
        NodeOp::EventWait(e)
    })
}

/// The graph of `CUDA_CHILD_GRAPH_NODE_PARAMS`, which the node takes a copy of.
///
/// # Safety
/// `union` holds a `CUDA_CHILD_GRAPH_NODE_PARAMS`.
unsafe fn child_params(union: *const u8) -> CuResult<GraphId> {
    // Safety: the caller's contract.
    let c = unsafe { union.cast::<GraphChildParams>().read_unaligned() };
    if c.ownership != CHILD_GRAPH_OWNERSHIP_CLONE {
        return Err(not_supported(format!(
            "child graph ownership {}: cumock's child graph nodes take a copy of the \
             graph (CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE) only",
            c.ownership
        )));
    }
    Ok(c.graph.key())
}

/// `CUDA_CONDITIONAL_NODE_PARAMS`.
#[repr(C)]
#[derive(Clone, Copy)]
struct ConditionalParams {
    handle: u64,
    kind: i32,
    size: u32,
    graphs_out: *mut CUgraph,
    ctx: CUcontext,
}

/// A kernel, memcpy, memset or host node's work from `CUgraphNodeParams`' union (at
/// `union`, of node type `kind`): what cuGraphAddNode adds and cuGraphNodeSetParams and
/// cuGraphExecNodeSetParams set. None for the other types.
///
/// # Safety
/// `union` is the program's `CUgraphNodeParams`' union, 232 bytes, as cuda.h lays it out.
unsafe fn work_node(kind: i32, union: *const u8) -> CuResult<Option<NodeOp>> {
    let d = drv()?;
    Ok(Some(match kind {
        graphs::node_type::KERNEL => {
            // Safety: the union holds CUDA_KERNEL_NODE_PARAMS_v3.
            let k = unsafe { union.cast::<GraphKernelParams>().read_unaligned() };
            let v1 = KernelParamsV1 {
                func: k.func,
                grid: k.grid,
                block: k.block,
                shared: k.shared,
                kernel_params: k.kernel_params,
                extra: k.extra,
            };
            // Safety: the program's parameters, as for cuLaunchKernel.
            NodeOp::Kernel(unsafe { kernel_node(&v1, k.kern)? })
        }
        graphs::node_type::MEMCPY => {
            // Safety: the union holds CUDA_MEMCPY_NODE_PARAMS.
            let m = unsafe { union.cast::<GraphMemcpyParams>().read_unaligned() };
            if m.flags != 0 || m.reserved != 0 {
                return Err(invalid(format!(
                    "memcpy.flags {:#x} and memcpy.reserved {:#x} must be 0 (cuda.h)",
                    m.flags, m.reserved
                )));
            }
            // The context must be a live one (NULL: the current one).
            d.ctx_device(m.copy_ctx.key())?;
            memcpy_op(&m.copy_params)?
        }
        graphs::node_type::MEMSET => {
            // Safety: the union holds CUDA_MEMSET_NODE_PARAMS_v2.
            let m = unsafe { union.cast::<GraphMemsetParams>().read_unaligned() };
            d.ctx_device(m.ctx.key())?;
            memset_op(&MemsetParams {
                dst: m.dst,
                pitch: m.pitch,
                value: m.value,
                element_size: m.element_size,
                width: m.width,
                height: m.height,
            })?
        }
        graphs::node_type::BATCH_MEM_OP => {
            // Safety: the union holds CUDA_BATCH_MEM_OP_NODE_PARAMS_v2, whose array holds
            // its count of operations (cuda.h).
            unsafe { super::stream_memops::mem_op_node(union.cast())? }
        }
        graphs::node_type::HOST => {
            // Safety: the union holds CUDA_HOST_NODE_PARAMS_v2.
            let h = unsafe { union.cast::<GraphHostParams>().read_unaligned() };
            let f = h.f.ok_or_else(|| invalid("host.fn is NULL"))?;
            let what = format!("{:#x}", f as usize);
            NodeOp::Host {
                action: host_action(f, h.user_data),
                what,
                given: (f as usize, h.user_data as usize),
            }
        }
        _ => return Ok(None),
    }))
}

/// cuGraphAddNode: the node types the mock builds from `CUgraphNodeParams` (kernel,
/// memcpy, memset, host, child graph, empty, event record and wait, memory allocation and
/// free, conditional).
///
/// # Safety
/// `p` is NULL or a `CUgraphNodeParams`, as cuda.h lays it out.
unsafe fn add_node(
    d: &Driver,
    ph: Late<CUgraphNode>,
    g: GraphId,
    deps: Vec<NodeId>,
    p: *mut CUgraphNodeParams,
) -> CuResult<()> {
    // Safety: the caller's contract.
    let params = unsafe { input(p.cast_const().cast::<GraphNodeParams>(), "nodeParams")? };
    let ph = ph.check()?;
    let union = p.cast::<u8>().wrapping_add(16);
    // Safety: the caller's contract.
    if let Some(op) = unsafe { work_node(params.type_, union)? } {
        return ph.write_key(d.graph_add_node(g, &deps, op)?);
    }
    let node = match params.type_ {
        graphs::node_type::EMPTY => d.graph_add_node(g, &deps, NodeOp::Empty)?,
        graphs::node_type::GRAPH => {
            // Safety: the union holds CUDA_CHILD_GRAPH_NODE_PARAMS.
            let child = unsafe { child_params(union)? };
            d.graph_add_child(g, &deps, child)?
        }
        graphs::node_type::EVENT_RECORD | graphs::node_type::WAIT_EVENT => {
            let op = event_op(params.type_, (params.union[0] as CUevent).key())?;
            d.graph_add_node(g, &deps, op)?
        }
        graphs::node_type::MEM_FREE => d.graph_add_free_node(g, &deps, params.union[0])?,
        graphs::node_type::MEM_ALLOC => {
            let mut node: CUgraphNode = std::ptr::null_mut();
            // Safety: the union holds CUDA_MEM_ALLOC_NODE_PARAMS_v2, v1's layout; the
            // address goes back into it, as cuda.h says.
            unsafe {
                <Mock as GraphApi>::cuGraphAddMemAllocNode(
                    &raw mut node,
                    CUgraph::of(g),
                    deps.as_ptr().cast(),
                    deps.len(),
                    union.cast(),
                )?
            };
            node.key()
        }
        graphs::node_type::CONDITIONAL => {
            // Safety: the union holds CUDA_CONDITIONAL_NODE_PARAMS.
            let mut c = unsafe { union.cast::<ConditionalParams>().read_unaligned() };
            // The context must be a live one (NULL: the current one).
            d.ctx_device(c.ctx.key())?;
            let (node, cond) = d.graph_add_conditional(g, &deps, c.handle, c.kind, c.size)?;
            // cuda.h: phGraph_out is "CUDA-owned": the node's array of its body graphs
            // (graph handles are the model's ids), valid while the node lives.
            c.graphs_out = cond.bodies.as_ptr().cast_mut().cast();
            // Safety: as above; the program's struct, writable (cuGraphAddNode's params
            // are not const).
            unsafe { union.cast::<ConditionalParams>().write_unaligned(c) };
            node
        }
        t => {
            return Err(not_supported(format!(
                "cuGraphAddNode of node type {t} is not emulated by cumock"
            )))
        }
    };
    ph.write_key(node)
}

/// Adds a node of `op`; the node's out-parameter is checked after the call's other
/// arguments (the dependencies, the node's parameters), before the graph changes.
fn add(
    d: &Driver,
    g: GraphId,
    deps: Vec<NodeId>,
    op: NodeOp,
    ph: Late<CUgraphNode>,
) -> CuResult<()> {
    let ph = ph.check()?;
    ph.write_key(d.graph_add_node(g, &deps, op)?)
}

/// Writes what node `n` of type `kind` was given into the program's struct at `p`.
///
/// # Safety
/// `p` is the program's struct of that type, writable.
unsafe fn given_out(d: &Driver, n: NodeId, kind: i32, p: *mut u8) -> CuResult<()> {
    let bytes = d.node_given(n, kind)?;
    // Safety: the caller's contract; `bytes` is the struct's size, as it was given.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
    Ok(())
}

/// A result the H200 would describe in its log buffer: the message, NUL-terminated.
///
/// # Safety
/// `buf` is NULL or holds `size` writable bytes, cuda.h's contract.
unsafe fn log_to(buf: *mut c_char, size: usize, message: &str) {
    if !buf.is_null() && size > 0 {
        // Safety: not NULL, and the caller's contract.
        let room = unsafe { std::slice::from_raw_parts_mut(buf, size) };
        crate::boundary::write_c_string(room, message);
    }
}

/// A list of node keys as the handles the program receives.
fn node_handles(nodes: Vec<NodeId>) -> Vec<CUgraphNode> {
    nodes.into_iter().map(CUgraphNode::of).collect()
}

impl GraphApi for Mock {
    emulate! {
        fn cuGraphCreate(d; ph, flags) {
            ph.write_key(d.graph_create(flags)?)
        }

        fn cuGraphDestroy(d; g) {
            d.graph_destroy(g)
        }

        // A user object without a destructor is refused (`#[nonnull]`).
        fn cuUserObjectCreate(d; object_out, #[raw] ptr, #[nonnull] destroy, initial_refcount, flags) {
            let data = super::exec::ProgramData(ptr);
            // Safety: the program's destructor, called once with its pointer, as it asked,
            // on the mock's thread after the last reference went (model/user_objects.rs).
            let destructor = Box::new(move || unsafe { destroy(data.get()) });
            object_out.write_key(d.user_object_create(destructor, initial_refcount, flags)?)
        }

        fn cuUserObjectRetain(d; object, count) {
            d.user_object_retain(object, count)
        }

        fn cuUserObjectRelease(d; object, count) {
            d.user_object_release(object, count)
        }

        fn cuGraphRetainUserObject(d; g, object, count, flags) {
            d.graph_retain_user_object(g, object, count, flags)
        }

        fn cuGraphReleaseUserObject(d; g, object, count) {
            d.graph_release_user_object(g, object, count)
        }

        fn cuGraphAddKernelNode(d; #[late] ph, g, #[slice] dependencies, _n, #[raw] p) {
            let deps = node_keys(dependencies);
            add(d, g, deps, NodeOp::Kernel(read_kernel_v1(p)?), ph)
        }

        fn cuGraphAddKernelNode_v2(d; #[late] ph, g, #[slice] dependencies, _n, #[raw] p) {
            let deps = node_keys(dependencies);
            add(d, g, deps, NodeOp::Kernel(read_kernel_v2(p)?), ph)
        }

        fn cuGraphAddMemcpyNode(d; #[late] ph, g, #[slice] dependencies, _n, #[raw] copy, _ctx) {
            let deps = node_keys(dependencies);
            let p = input(copy, "copyParams")?;
            add(d, g, deps, memcpy_op(&p)?, ph)
        }

        fn cuGraphAddMemsetNode(d; #[late] ph, g, #[slice] dependencies, _n, #[raw] p, _ctx) {
            let deps = node_keys(dependencies);
            let p = input(p.cast::<MemsetParams>(), "memsetParams")?;
            add(d, g, deps, memset_op(&p)?, ph)
        }

        fn cuGraphAddHostNode(d; #[late] ph, g, #[slice] dependencies, _n, #[raw] p) {
            let deps = node_keys(dependencies);
            add(d, g, deps, host_op(p)?, ph)
        }

        fn cuGraphAddBatchMemOpNode(d; #[late] ph, g, #[slice] dependencies, _n, #[raw] p) {
            // Safety: NULL or the program's struct, as cuda.h lays it out.
            let deps = node_keys(dependencies);
            let op = unsafe { super::stream_memops::mem_op_node(p.cast())? };
            add(d, g, deps, op, ph)
        }

        /// The node's own copy of its operations: valid while the node lives and its
        /// parameters are not set again (cuda.h).
        fn cuGraphBatchMemOpNodeGetParams(d; node, #[late] p) {
            let m = d.mem_op_node(node)?;
            // Safety: MemOpNodeParams is cuda.h's CUDA_BATCH_MEM_OP_NODE_PARAMS.
            unsafe { p.cast::<super::stream_memops::MemOpNodeParams>() }.write(
                super::stream_memops::MemOpNodeParams {
                    ctx: CUcontext::of(Some(m.ctx)),
                    count: m.given.len() as c_uint,
                    param_array: m.given.as_ptr().cast_mut(),
                    flags: m.flags,
                },
            )
        }

        fn cuGraphBatchMemOpNodeSetParams(d; node, #[raw] p) {
            d.mem_op_node(node)?;
            // Safety: NULL or the program's struct, as cuda.h lays it out.
            let op = unsafe { super::stream_memops::mem_op_node(p.cast())? };
            d.graph_node_set(node, op)
        }

        fn cuGraphExecBatchMemOpNodeSetParams(d; e, node, #[raw] p) {
            // Safety: NULL or the program's struct, as cuda.h lays it out.
            let op = unsafe { super::stream_memops::mem_op_node(p.cast())? };
            d.graph_exec_node_set(e, node, op)
        }

        fn cuGraphAddEmptyNode(d; #[late] ph, g, #[slice] dependencies, _n) {
            add(d, g, node_keys(dependencies), NodeOp::Empty, ph)
        }

        fn cuGraphAddEventRecordNode(d; #[late] ph, g, #[slice] dependencies, _n, event) {
            no_event(event)?;
            d.event_check(event)?;
            add(d, g, node_keys(dependencies), NodeOp::EventRecord(event), ph)
        }

        fn cuGraphAddEventWaitNode(d; #[late] ph, g, #[slice] dependencies, _n, event) {
            no_event(event)?;
            d.event_check(event)?;
            add(d, g, node_keys(dependencies), NodeOp::EventWait(event), ph)
        }

        fn cuGraphAddChildGraphNode(d; ph, g, #[raw] dependencies, n, child) {
            // A child graph with memory nodes is refused before the dependencies are
            // read (random_graphs seed 19 line 90: a NULL array of 1, NOT_SUPPORTED).
            d.graph_check_child(child)?;
            let deps = deps(dependencies, n)?;
            ph.write_key(d.graph_add_child(g, &deps, child)?)
        }

        // Observed (probe graph_memory, alloc-node-errors): a NULL graph is
        // CUDA_ERROR_INVALID_VALUE.
        fn cuGraphAddMemAllocNode(d; #[late] ph, #[nonnull] g, #[slice] dependencies, _n, #[raw] p) {
            let deps = node_keys(dependencies);
            let mut params = input(p.cast_const().cast::<AllocNodeParams>(), "nodeParams")?;
            let ph = ph.check()?;
            let props = params.pool_props;
            if props.handle_types != 0 {
                // cuda.h: "handleTypes must be CU_MEM_HANDLE_TYPE_NONE. IPC is not
                // supported." Observed: CUDA_ERROR_NOT_SUPPORTED.
                return Err(not_supported(format!(
                    "poolProps.handleTypes {:#x}: graph allocations cannot be shared (IPC)",
                    props.handle_types
                )));
            }
            let count = params.access_desc_count;
            if count > d.device_count() {
                return Err(invalid(format!(
                    "accessDescCount {count} is more than the {} devices",
                    d.device_count()
                )));
            }
            let access = if count == 0 {
                Vec::new()
            } else if params.access_descs.is_null() {
                // Observed: the H200 crashes (SIGSEGV) here.
                return Err(CuError::would_crash(format!(
                    "accessDescs is NULL with {count} of them (the real driver crashes here)"
                )));
            } else {
                // Safety: cuda.h: accessDescs holds accessDescCount descriptors.
                std::slice::from_raw_parts(params.access_descs, count).to_vec()
            };
            let node = AllocNode {
                dptr: 0,
                bytesize: params.bytesize as u64,
                device: usize::try_from(props.location.id).unwrap_or(usize::MAX),
                alloc_type: props.alloc_type,
                location: props.location,
                max_size: props.max_size,
                usage: props.usage,
                access,
            };
            let (node, dptr) = d.graph_add_alloc_node(g, &deps, node)?;
            params.dptr = dptr;
            // Safety: checked non-NULL above (`input`); the program's struct, writable.
            unsafe { p.cast::<AllocNodeParams>().write_unaligned(params) };
            ph.write_key(node)
        }

        fn cuGraphAddMemFreeNode(d; #[late] ph, g, #[slice] dependencies, _n, #[raw] dptr) {
            let deps = node_keys(dependencies);
            let ph = ph.check()?;
            ph.write_key(d.graph_add_free_node(g, &deps, dptr)?)
        }

        fn cuGraphMemAllocNodeGetParams(d; node, #[late] p) {
            let a = d.alloc_node_get(node)?;
            // cuda.h: poolProps and accessDescs are owned by the node, valid while it
            // lives: the array is the node's own (its `Arc` lives in the graph). Observed:
            // not NULL with no descriptors either.
            let access_descs = a.access.as_ptr();
            // Safety: AllocNodeParams is cuda.h's layout of CUDA_MEM_ALLOC_NODE_PARAMS.
            unsafe { p.cast::<AllocNodeParams>() }.write(AllocNodeParams {
                pool_props: a.pool_props(),
                access_descs,
                access_desc_count: a.access.len(),
                bytesize: a.bytesize as usize,
                dptr: a.dptr,
            })
        }

        fn cuGraphMemFreeNodeGetParams(d; node, #[late] dptr) {
            dptr.write(d.free_node_get(node)?)
        }

        fn cuDeviceGraphMemTrim(d; device) {
            d.graph_mem_trim(device)
        }

        fn cuDeviceGetGraphMemAttribute(d; device, attr, #[late] value) {
            let v = d.graph_mem_attribute(device, attr)?;
            // cuda.h: value points to a cuuint64_t.
            // Safety: cuda.h: value points to a cuuint64_t.
            unsafe { value.cast::<u64>() }.write(v)
        }

        fn cuDeviceSetGraphMemAttribute(d; device, attr, #[raw] value) {
            // Safety: cuda.h: value points to a cuuint64_t.
            let v = input(value.cast_const().cast::<u64>(), "value")?;
            d.graph_mem_reset_high(device, attr, v)
        }

        // Observed: a NULL graph is CUDA_ERROR_INVALID_VALUE (`#[nonnull]`), a NULL context
        // CUDA_ERROR_INVALID_CONTEXT (not the current one).
        fn cuGraphConditionalHandleCreate(d; h, #[nonnull] g, ctx, default, flags) {
            let ctx = ctx.ok_or_else(|| invalid_context("ctx is NULL"))?;
            let device = d.ctx_device(Some(ctx))?;
            h.write(d.conditional_handle_create(g, device, default, flags)?)
        }

        fn cuGraphAddNode(d; #[late] ph, g, #[slice] dependencies, _n, #[raw] p) {
            let deps = node_keys(dependencies);
            add_node(d, ph, g, deps, p)
        }

        fn cuGraphAddNode_v2(d; #[late] ph, g, #[raw] dependencies, #[slice] edge_data, n, #[raw] p) {
            // The edges first (a refusal of them comes before the nodes').
            only_default_edges(edge_data)?;
            let deps = deps(dependencies, n)?;
            add_node(d, ph, g, deps, p)
        }

        fn cuGraphNodeSetParams(d; node, #[raw] p) {
            match node_params(p, "cuGraphNodeSetParams")? {
                NodeSetting::Op(op) => d.graph_node_set(node, op),
                NodeSetting::Child(g) => d.graph_node_set_child(node, g),
            }
        }

        fn cuGraphExecNodeSetParams(d; e, node, #[raw] p) {
            match node_params(p, "cuGraphExecNodeSetParams")? {
                NodeSetting::Op(op) => d.graph_exec_node_set(e, node, op),
                NodeSetting::Child(g) => d.graph_exec_child_set(e, node, g),
            }
        }

        fn cuGraphEventRecordNodeSetEvent(d; node, event) {
            let op = event_op(graphs::node_type::EVENT_RECORD, event)?;
            d.graph_node_set(node, op)
        }

        fn cuGraphEventWaitNodeSetEvent(d; node, event) {
            let op = event_op(graphs::node_type::WAIT_EVENT, event)?;
            d.graph_node_set(node, op)
        }

        // Observed: a NULL event is CUDA_ERROR_INVALID_VALUE (`#[nonnull]`; a destroyed
        // event's is INVALID_HANDLE).
        fn cuGraphExecEventRecordNodeSetEvent(d; e, node, #[nonnull] event) {
            let op = event_op(graphs::node_type::EVENT_RECORD, event)?;
            d.graph_exec_node_set(e, node, op)
        }

        fn cuGraphExecEventWaitNodeSetEvent(d; e, node, event) {
            let op = event_op(graphs::node_type::WAIT_EVENT, event)?;
            d.graph_exec_node_set(e, node, op)
        }

        // Observed: a NULL child graph is CUDA_ERROR_INVALID_VALUE (`#[nonnull]`).
        fn cuGraphExecChildGraphNodeSetParams(d; e, node, #[nonnull] child) {
            d.graph_exec_child_set(e, node, child)
        }

        fn cuGraphHostNodeGetParams(d; node, p) {
            given_out(d, node, graphs::node_type::HOST, p.as_ptr().cast())
        }

        fn cuGraphMemsetNodeGetParams(d; node, p) {
            given_out(d, node, graphs::node_type::MEMSET, p.as_ptr().cast())
        }

        fn cuGraphMemcpyNodeGetParams(d; node, p) {
            given_out(d, node, graphs::node_type::MEMCPY, p.as_ptr().cast())
        }

        fn cuGraphChildGraphNodeGetGraph(d; node, ph) {
            ph.write_key(d.graph_child_graph(node)?)
        }

        fn cuGraphExecGetFlags(d; e, flags) {
            flags.write(d.graph_exec_flags(e)?)
        }

        fn cuGraphNodeFindInClone(d; ph, original, clone) {
            ph.write_key(d.graph_find_in_clone(original, clone)?)
        }

        fn cuGraphDestroyNode(d; node) {
            d.graph_destroy_node(node)
        }

        // Observed: a NULL executable graph is CUDA_ERROR_INVALID_VALUE (`#[nonnull]`).
        fn cuGraphUpload(d; #[nonnull] e, s) {
            d.graph_upload(e, s)
        }

        fn cuGraphNodeSetEnabled(d; e, node, enabled) {
            d.graph_exec_set_enabled(e, node, enabled != 0)
        }

        fn cuGraphNodeGetEnabled(d; e, node, enabled) {
            enabled.write(c_uint::from(d.graph_exec_enabled(e, node)?))
        }

        fn cuGraphMemcpyNodeSetParams(d; node, copy) {
            d.graph_node_set(node, memcpy_op(&copy)?)
        }

        fn cuGraphExecMemcpyNodeSetParams(d; e, node, copy, _ctx) {
            // cuda.h: "Returns CUDA_ERROR_INVALID_VALUE if ... either the original or new
            // memory operands are multidimensional" (graph_exec_node_set compares the
            // rest).
            if copy.height > 1 || copy.depth > 1 {
                return Err(invalid(format!(
                    "copyParams is {}x{}x{}: an executable graph's copy is one-dimensional",
                    copy.width_in_bytes, copy.height, copy.depth
                )));
            }
            d.graph_exec_node_set(e, node, memcpy_op(&copy)?)
        }

        fn cuGraphMemsetNodeSetParams(d; node, #[raw] p) {
            let op = memset_op(&input(p.cast::<MemsetParams>(), "nodeParams")?)?;
            d.graph_node_set(node, op)
        }

        fn cuGraphExecMemsetNodeSetParams(d; e, node, #[raw] p, _ctx) {
            let op = memset_op(&input(p.cast::<MemsetParams>(), "memsetParams")?)?;
            d.graph_exec_node_set(e, node, op)
        }

        fn cuGraphHostNodeSetParams(d; node, #[raw] p) {
            d.graph_node_set(node, host_op(p)?)
        }

        fn cuGraphExecHostNodeSetParams(d; e, node, #[raw] p) {
            d.graph_exec_node_set(e, node, host_op(p)?)
        }

        fn cuGraphAddDependencies(d; g, #[slice] from, #[slice] to, _n) {
            d.graph_add_dependencies(g, &edges(from, to))
        }

        fn cuGraphAddDependencies_v2(d; g, #[raw] from, #[raw] to, #[slice] edge_data, n) {
            // The edges' data first (a refusal of it comes before the nodes').
            only_default_edges(edge_data)?;
            // Safety: cuda.h's contract for two arrays of `n` nodes.
            let (from, to) = unsafe { (slice(from, n, "from")?, slice(to, n, "to")?) };
            d.graph_add_dependencies(g, &edges(from, to))
        }

        fn cuGraphRemoveDependencies(d; g, #[raw] from, #[raw] to, n) {
            d.graph_dependencies_removable(g)?;
            // Safety: cuda.h's contract for two arrays of `n` nodes.
            let (from, to) = unsafe { (slice(from, n, "from")?, slice(to, n, "to")?) };
            d.graph_remove_dependencies(g, &edges(from, to))
        }

        fn cuGraphRemoveDependencies_v2(d; g, #[raw] from, #[raw] to, #[slice] edge_data, n) {
            // The edges' data first (a refusal of it comes before the nodes').
            only_default_edges(edge_data)?;
            d.graph_dependencies_removable(g)?;
            // Safety: cuda.h's contract for two arrays of `n` nodes.
            let (from, to) = unsafe { (slice(from, n, "from")?, slice(to, n, "to")?) };
            d.graph_remove_dependencies(g, &edges(from, to))
        }

        fn cuGraphGetNodes(d; g, #[filled] nodes, _n) {
            let list = node_handles(d.graph_nodes(g)?);
            nodes.refuse_no_room()?;
            nodes.fill(&list, std::ptr::null_mut())
        }

        fn cuGraphGetRootNodes(d; g, #[filled] nodes, _n) {
            let list = node_handles(d.graph_root_nodes(g)?);
            nodes.refuse_no_room()?;
            nodes.fill(&list, std::ptr::null_mut())
        }

        fn cuGraphNodeGetDependencies(d; node, #[filled] nodes, _n) {
            let list = node_handles(d.graph_node_neighbours(node, false)?);
            nodes.fill(&list, std::ptr::null_mut())
        }

        fn cuGraphNodeGetDependentNodes(d; node, #[filled] nodes, _n) {
            let list = node_handles(d.graph_node_neighbours(node, true)?);
            nodes.fill(&list, std::ptr::null_mut())
        }

        fn cuGraphNodeGetType(d; node, #[late] t) {
            t.write(d.graph_node_type(node)?)
        }

        fn cuGraphKernelNodeGetParams(d; node, #[late] p) {
            let v = write_kernel_params(d, node)?;
            // Safety: KernelParamsV1 is cuda.h's layout of CUDA_KERNEL_NODE_PARAMS_v1.
            unsafe { p.cast::<KernelParamsV1>() }.write(v)
        }

        fn cuGraphKernelNodeGetParams_v2(d; node, #[late] p) {
            let v1 = write_kernel_params(d, node)?;
            let v = KernelParamsV2 {
                v1,
                kern: std::ptr::null_mut(),
                ctx: std::ptr::null_mut(),
            };
            // Safety: KernelParamsV2 is cuda.h's layout of CUDA_KERNEL_NODE_PARAMS_v2.
            unsafe { p.cast::<KernelParamsV2>() }.write(v)
        }

        fn cuGraphKernelNodeSetParams(d; node, #[raw] p) {
            d.kernel_node_set(node, read_kernel_v1(p)?)
        }

        fn cuGraphKernelNodeSetParams_v2(d; node, #[raw] p) {
            d.kernel_node_set(node, read_kernel_v2(p)?)
        }

        fn cuGraphKernelNodeGetAttribute(d; node, attr, value) {
            let v = d.kernel_node_attribute(node, attr)?;
            // Safety: a CUkernelNodeAttrValue of the program's is the 64-byte union.
            unsafe { value.cast::<[u32; 16]>() }.write(v)
        }

        fn cuGraphKernelNodeSetAttribute(d; node, attr, #[raw] value) {
            // Safety: a CUkernelNodeAttrValue of the program's, the 64-byte union.
            let v = input(value.cast::<[u32; 16]>(), "value")?;
            d.kernel_node_set_attribute(node, attr, &v)
        }

        fn cuGraphKernelNodeCopyAttributes(d; dst, src) {
            d.kernel_node_copy_attributes(dst, src)
        }

        fn cuGraphEventRecordNodeGetEvent(d; node, #[late] e) {
            if d.graph_node_type(node)? != graphs::node_type::EVENT_RECORD {
                return Err(invalid("the node is not an event record node"));
            }
            e.write_key(d.event_node_get(node)?)
        }

        fn cuGraphEventWaitNodeGetEvent(d; node, #[late] e) {
            if d.graph_node_type(node)? != graphs::node_type::WAIT_EVENT {
                return Err(invalid("the node is not an event wait node"));
            }
            e.write_key(d.event_node_get(node)?)
        }

        fn cuGraphClone(d; ph, g) {
            ph.write_key(d.graph_clone(g)?)
        }

        fn cuGraphInstantiateWithFlags(d; ph, g, flags) {
            // Observed (random_graphs: 25 of 25 calls, e.g. seed 3 line 12):
            // INVALID_VALUE; an upload needs cuGraphInstantiateWithParams's stream.
            if flags & UPLOAD != 0 {
                return Err(invalid(
                    "CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD is cuGraphInstantiateWithParams's",
                ));
            }
            ph.write_key(instantiate(d, g, flags)?)
        }

        fn cuGraphLaunch(d; e, s) {
            d.graph_launch(e, s)
        }

        fn cuGraphExecDestroy(d; e) {
            d.graph_exec_destroy(e)
        }

        fn cuGraphExecKernelNodeSetParams(d; e, node, #[raw] p) {
            d.graph_exec_node_present(e, node)?;
            d.graph_exec_kernel_set(e, node, read_kernel_v1(p)?)
        }

        fn cuGraphExecKernelNodeSetParams_v2(d; e, node, #[raw] p) {
            d.graph_exec_node_present(e, node)?;
            d.graph_exec_kernel_set(e, node, read_kernel_v2(p)?)
        }

        fn cuGraphExecUpdate_v2(d; e, g, info) {
            let (r, result, node, from) = match d.graph_exec_update(e, g) {
                Ok(()) => (Ok(()), graphs::update_result::SUCCESS, None, None),
                Err(f) => (Err(f.err), f.result, f.node, f.from),
            };
            // Safety: UpdateResultInfo is cuda.h's layout of CUgraphExecUpdateResultInfo.
            unsafe { info.cast::<UpdateResultInfo>() }.write(UpdateResultInfo {
                result: result as u32,
                error_node: node.map_or(std::ptr::null_mut(), CUgraphNode::of),
                error_from_node: from.map_or(std::ptr::null_mut(), CUgraphNode::of),
            })?;
            r
        }

        fn cuGraphDebugDotPrint(d; g, path, flags) {
            let dot = d.graph_dot(g, flags)?;
            let path = path.to_string_lossy().into_owned();
            std::fs::write(&path, dot)
                .map_err(|e| invalid(format!("cannot write the DOT file {path}: {e}")))
        }

        /// The two arrays share one count: both or neither (roles.txt's `both` line),
        /// refused before the check for cuInit.
        fn cuGraphGetEdges(; g, from, to, n) {
            let edges = drv()?.graph_edges(g)?;
            let froms: Vec<CUgraphNode> = edges.iter().map(|e| CUgraphNode::of(e.0)).collect();
            let tos: Vec<CUgraphNode> = edges.iter().map(|e| CUgraphNode::of(e.1)).collect();
            Filled::new(from, n, "numEdges").refuse_no_room()?;
            Filled::new(to, n, "numEdges").refuse_no_room()?;
            if !from.is_null() {
                let room = input(n, "numEdges")?;
                list_out(&froms, from, n, std::ptr::null_mut())?;
                out(n, room)?;
            }
            list_out(&tos, to, n, std::ptr::null_mut())
        }
    }

    unsafe fn cuGraphGetEdges_v2(
        g: CUgraph,
        from: *mut CUgraphNode,
        to: *mut CUgraphNode,
        edge_data: *mut CUgraphEdgeData,
        n: *mut usize,
    ) -> CuResult<()> {
        if !edge_data.is_null() && !n.is_null() {
            let room = input(n, "numEdges")?;
            // Safety: edgeData holds numEdges entries of 8 bytes: all default edges.
            std::ptr::write_bytes(edge_data.cast::<u8>(), 0, room * 8);
        }
        Self::cuGraphGetEdges(g, from, to, n)
    }

    unsafe fn cuGraphNodeGetDependencies_v2(
        node: CUgraphNode,
        deps: *mut CUgraphNode,
        edge_data: *mut CUgraphEdgeData,
        n: *mut usize,
    ) -> CuResult<()> {
        default_edges_out(deps.is_null(), edge_data, n)?;
        Self::cuGraphNodeGetDependencies(node, deps, n)
    }

    unsafe fn cuGraphNodeGetDependentNodes_v2(
        node: CUgraphNode,
        deps: *mut CUgraphNode,
        edge_data: *mut CUgraphEdgeData,
        n: *mut usize,
    ) -> CuResult<()> {
        default_edges_out(deps.is_null(), edge_data, n)?;
        Self::cuGraphNodeGetDependentNodes(node, deps, n)
    }

    unsafe fn cuGraphInstantiate_v2(
        ph: *mut CUgraphExec,
        g: CUgraph,
        err_node: *mut CUgraphNode,
        log: *mut c_char,
        size: usize,
    ) -> CuResult<()> {
        let r = Self::cuGraphInstantiateWithFlags(ph, g, 0);
        // The error node is optional here (cuda.h's declaration says nothing of it).
        if let Some(err_node) = Out::maybe(err_node) {
            err_node.write(std::ptr::null_mut())?;
        }
        // Safety: cuda.h's contract for the log buffer.
        unsafe {
            match &r {
                Ok(()) => log_to(log, size, ""),
                Err(e) => log_to(log, size, &e.message),
            }
        }
        r
    }

    unsafe fn cuGraphInstantiateWithParams(
        ph: *mut CUgraphExec,
        g: CUgraph,
        p: *mut CUDA_GRAPH_INSTANTIATE_PARAMS,
    ) -> CuResult<()> {
        let mut params = input(
            p.cast_const().cast::<InstantiateParams>(),
            "instantiateParams",
        )?;
        if ph.is_null() {
            return Err(invalid("phGraphExec is NULL"));
        }
        // A graph the device could not launch: the node and the reason (cuda.h).
        // DEVICE_LAUNCH with AUTO_FREE_ON_LAUNCH is refused first, as a plain error
        // (random_graphs: 8 of 8 calls, result 1 and no node, e.g. seed 12 line 62).
        let refused = if params.flags & (DEVICE_LAUNCH | AUTO_FREE_ON_LAUNCH) == DEVICE_LAUNCH {
            drv()?.device_graph_check(g.key()).err()
        } else {
            None
        };
        let r = match &refused {
            Some(why) => Err(why.err.clone()),
            None => drv()
                .and_then(|d| instantiate(d, g.key(), params.flags))
                .and_then(|e| {
                    // Safety: cuda.h's contract: the program's place for the executable graph.
                    unsafe { out(ph, CUgraphExec::of(e)) }
                }),
        };
        // CUgraphInstantiateResult: SUCCESS 0, ERROR 1, INVALID_STRUCTURE 2 for a cycle
        // (cuda.h: "invalid structure, such as cycles"; the H200 in random_graphs, with a
        // node of the cycle: `GraphBody::cycle_node`).
        let cycle = if r.is_err() && refused.is_none() && instantiate_flags(params.flags).is_ok() {
            drv()?.graph_cycle_node(g.key())
        } else {
            None
        };
        (params.result, params.err_node) = match (refused, cycle) {
            (Some(why), _) => (
                why.result,
                why.node.map_or(std::ptr::null_mut(), CUgraphNode::of),
            ),
            (None, Some(n)) => (2, CUgraphNode::of(n)),
            (None, None) => (u32::from(r.is_err()), std::ptr::null_mut()),
        };
        if r.is_ok() && params.flags & UPLOAD != 0 {
            // Safety: `ph` was written by the instantiation that succeeded.
            let e = unsafe { *ph };
            drv()?.graph_upload(e.key(), params.upload_stream.key())?;
        }
        out(p.cast::<InstantiateParams>(), params)?;
        r
    }

    unsafe fn cuGraphExecUpdate(
        e: CUgraphExec,
        g: CUgraph,
        err_node: *mut CUgraphNode,
        result: *mut CUgraphExecUpdateResult,
    ) -> CuResult<()> {
        let mut info = UpdateResultInfo {
            result: 0,
            error_node: std::ptr::null_mut(),
            error_from_node: std::ptr::null_mut(),
        };
        let r = Self::cuGraphExecUpdate_v2(e, g, (&raw mut info).cast());
        // Both optional here: the CUDA 11 call's outputs, filled when given.
        if let Some(err_node) = Out::maybe(err_node) {
            err_node.write(info.error_node)?;
        }
        if let Some(result) = Out::maybe(result.cast::<u32>()) {
            result.write(info.result)?;
        }
        r
    }
}
