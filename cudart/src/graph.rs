//! Stream capture and CUDA graphs: the runtime's calls over the driver's
//! (cuStreamBeginCapture, cuGraph*). Handles are the driver's. What the runtime adds is
//! the translation of its node parameters: a kernel node names the host-side stub nvcc
//! made for a `__global__` function, which becomes the driver function of the current
//! device's context exactly as cudaLaunchKernel finds it (`kernel::function`); a copy
//! described by `cudaMemcpy3DParms` (pitched pointers, positions, an extent) becomes
//! cuda.h's `CUDA_MEMCPY3D`, with the memory types the `cudaMemcpyKind` names.

use crate::boundary::{cudart_fn, out_ref};
use crate::driver::Driver;
use crate::error::{self, RtError, RtResult};
use crate::kernel::Dim3;
use crate::memory::stream_for;
use crate::runtime::{current_context, with_context};
use crate::texture::Extent;
use cumock_abi::{
    CUcontext, CUevent, CUfunction, CUgraph, CUgraphExec, CUgraphNode, CUstream, CUuserObject,
};
use std::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void};

/// `cudaKernelNodeParams` (driver_types.h).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KernelNodeParams {
    func: *mut c_void,
    grid: Dim3,
    block: Dim3,
    shared: c_uint,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
}

/// `CUDA_KERNEL_NODE_PARAMS_v2` (cuda.h), what cuGraphAddKernelNode takes at CUDA 12.0 and
/// later: `kern` and `ctx` NULL, so `func` is used in the current context.
#[repr(C)]
struct DriverKernelParams {
    func: CUfunction,
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared: c_uint,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
    kern: *mut c_void,
    ctx: CUcontext,
}

/// `cudaPos`, `cudaPitchedPtr` and `cudaMemcpy3DParms` (driver_types.h; `cudaExtent` is
/// texture.rs's).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Pos {
    x: usize,
    y: usize,
    z: usize,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct PitchedPtr {
    ptr: *mut c_void,
    pitch: usize,
    xsize: usize,
    ysize: usize,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Memcpy3DParms {
    src_array: *mut c_void,
    src_pos: Pos,
    src_ptr: PitchedPtr,
    dst_array: *mut c_void,
    dst_pos: Pos,
    dst_ptr: PitchedPtr,
    extent: Extent,
    kind: c_int,
}

/// One side of cuda.h's `CUDA_MEMCPY3D`.
#[repr(C)]
#[derive(Clone, Copy)]
struct Memcpy3DSide {
    x_in_bytes: usize,
    y: usize,
    z: usize,
    lod: usize,
    memory_type: c_uint,
    host: *const c_void,
    device: u64,
    array: *mut c_void,
    reserved: *mut c_void,
    pitch: usize,
    height: usize,
}

/// `CUDA_MEMCPY3D`.
#[repr(C)]
#[derive(Clone, Copy)]
struct DriverMemcpy3D {
    src: Memcpy3DSide,
    dst: Memcpy3DSide,
    width_in_bytes: usize,
    height: usize,
    depth: usize,
}

/// `CUmemorytype`.
const MEMORY_HOST: c_uint = 1;
const MEMORY_DEVICE: c_uint = 2;
const MEMORY_UNIFIED: c_uint = 4;

/// `cudaMemsetParams` and `cudaHostNodeParams` share cuda.h's layouts
/// (`CUDA_MEMSET_NODE_PARAMS`, `CUDA_HOST_NODE_PARAMS`): passed on as they are.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct MemsetParams {
    dst: *mut c_void,
    pitch: usize,
    value: c_uint,
    element_size: c_uint,
    width: usize,
    height: usize,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct HostNodeParams {
    f: cumock_abi::CUhostFn,
    user_data: *mut c_void,
}

/// The current context, which the driver's copy and memset nodes are made for.
fn current() -> RtResult<(&'static Driver, CUcontext)> {
    let (d, _, _) = with_context()?;
    let mut ctx = std::ptr::null_mut();
    d.cuCtxGetCurrent(&mut ctx)?;
    Ok((d, ctx))
}

/// The driver's kernel node parameters for the runtime's: the stub is the kernel's
/// CUfunction in the current context (loading its module if need be).
///
/// # Safety
/// `p` is NULL or the program's `cudaKernelNodeParams`.
unsafe fn kernel_params(
    p: *const KernelNodeParams,
) -> RtResult<(&'static Driver, DriverKernelParams)> {
    // Safety: the caller's contract.
    let p = unsafe { p.as_ref() }.ok_or_else(|| error::invalid("pNodeParams is NULL"))?;
    let (d, f) = crate::kernel::function(p.func)?;
    Ok((
        d,
        DriverKernelParams {
            func: f,
            grid: [p.grid.x, p.grid.y, p.grid.z],
            block: [p.block.x, p.block.y, p.block.z],
            shared: p.shared,
            kernel_params: p.kernel_params,
            extra: p.extra,
            kern: std::ptr::null_mut(),
            ctx: std::ptr::null_mut(),
        },
    ))
}

/// The memory types of a copy's (source, destination) for a `cudaMemcpyKind`.
fn memory_types(kind: c_int) -> RtResult<(c_uint, c_uint)> {
    Ok(match kind {
        0 => (MEMORY_HOST, MEMORY_HOST),
        1 => (MEMORY_HOST, MEMORY_DEVICE),
        2 => (MEMORY_DEVICE, MEMORY_HOST),
        3 => (MEMORY_DEVICE, MEMORY_DEVICE),
        // cudaMemcpyDefault: the driver tells from the address (unified addressing).
        4 => (MEMORY_UNIFIED, MEMORY_UNIFIED),
        k => {
            return Err(RtError::new(
                error::INVALID_MEMCPY_DIRECTION,
                format!("{k} is not a cudaMemcpyKind"),
            ))
        }
    })
}

fn side(memory_type: c_uint, ptr: &PitchedPtr, pos: &Pos) -> Memcpy3DSide {
    Memcpy3DSide {
        x_in_bytes: pos.x,
        y: pos.y,
        z: pos.z,
        lod: 0,
        memory_type,
        host: if memory_type == MEMORY_HOST {
            ptr.ptr
        } else {
            std::ptr::null()
        },
        device: if memory_type == MEMORY_HOST {
            0
        } else {
            ptr.ptr as u64
        },
        array: std::ptr::null_mut(),
        reserved: std::ptr::null_mut(),
        pitch: ptr.pitch,
        height: ptr.ysize,
    }
}

/// cuda.h's copy for the runtime's: linear memory only (CUDA arrays are not among what
/// this runtime implements).
fn memcpy3d(p: &Memcpy3DParms) -> RtResult<DriverMemcpy3D> {
    if !p.src_array.is_null() || !p.dst_array.is_null() {
        return Err(error::not_supported(
            "cumock's runtime has no CUDA arrays: copy nodes take pitched pointers only",
        ));
    }
    let (src, dst) = memory_types(p.kind)?;
    Ok(DriverMemcpy3D {
        src: side(src, &p.src_ptr, &p.src_pos),
        dst: side(dst, &p.dst_ptr, &p.dst_pos),
        width_in_bytes: p.extent.width,
        height: p.extent.height,
        depth: p.extent.depth,
    })
}

fn add_memcpy(
    node: *mut CUgraphNode,
    graph: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    copy: &DriverMemcpy3D,
) -> RtResult<()> {
    let (d, ctx) = current()?;
    // Safety: `node` and `deps` are the program's, as cuda_runtime_api.h requires them (the
    // driver checks NULL); `copy` is ours.
    unsafe {
        d.cuGraphAddMemcpyNode(
            node,
            graph,
            deps,
            n,
            (copy as *const DriverMemcpy3D).cast(),
            ctx,
        )
    }
}

// ---- capture ---------------------------------------------------------------------------

fn begin_capture(stream: CUstream, mode: c_int) -> RtResult<()> {
    let (d, _, _) = with_context()?;
    d.cuStreamBeginCapture(stream, mode)
}

fn end_capture(stream: CUstream, graph: *mut CUgraph) -> RtResult<()> {
    let (d, _, _) = with_context()?;
    // Safety: the program's out-pointer, NULL or writable as the header requires, passed
    // on (with NULL the capture ends, its graph kept only if it is the program's).
    unsafe { d.cuStreamEndCapture(stream, graph) }
}

cudart_fn! {
    fn cudaStreamBeginCapture(stream: CUstream, mode: c_int) {
        begin_capture(stream_for(stream, false), mode)
    }
}

cudart_fn! {
    fn cudaStreamBeginCapture_ptsz(stream: CUstream, mode: c_int) {
        begin_capture(stream_for(stream, true), mode)
    }
}

/// cudaStreamBeginCaptureToGraph: the driver's, with the runtime's stream; the edge data
/// (`cudaGraphEdgeData`) has the driver's layout.
fn begin_capture_to_graph(
    stream: CUstream,
    graph: CUgraph,
    deps: *const CUgraphNode,
    edges: *const c_void,
    n: usize,
    mode: c_int,
) -> RtResult<()> {
    let (d, _, _) = with_context()?;
    // Safety: the program's arrays of `n`, or NULL, passed on as cuda.h's.
    unsafe { d.cuStreamBeginCaptureToGraph(stream, graph, deps, edges.cast(), n, mode as _) }
}

cudart_fn! {
    fn cudaStreamBeginCaptureToGraph(stream: CUstream, graph: CUgraph, deps: *const CUgraphNode, edges: *const c_void, n: usize, mode: c_int) {
        begin_capture_to_graph(stream_for(stream, false), graph, deps, edges, n, mode)
    }
}

cudart_fn! {
    fn cudaStreamBeginCaptureToGraph_ptsz(stream: CUstream, graph: CUgraph, deps: *const CUgraphNode, edges: *const c_void, n: usize, mode: c_int) {
        begin_capture_to_graph(stream_for(stream, true), graph, deps, edges, n, mode)
    }
}

cudart_fn! {
    fn cudaStreamEndCapture(stream: CUstream, graph: *mut CUgraph) {
        end_capture(stream_for(stream, false), graph)
    }
}

cudart_fn! {
    fn cudaStreamEndCapture_ptsz(stream: CUstream, graph: *mut CUgraph) {
        end_capture(stream_for(stream, true), graph)
    }
}

// ---- graphs ----------------------------------------------------------------------------

cudart_fn! {
    fn cudaGraphCreate(graph: *mut CUgraph, flags: c_uint) {
        // Safety: the program's out-pointer: NULL (refused) or writable.
        let graph = unsafe { out_ref(graph)? };
        // A sticky error does not stop it (see `current_context`).
        let (d, _, _) = current_context()?;
        d.cuGraphCreate(graph, flags)
    }
}

cudart_fn! {
    fn cudaGraphDestroy(graph: CUgraph) {
        let (d, _, _) = with_context()?;
        d.cuGraphDestroy(graph)
    }
}

cudart_fn! {
    fn cudaGraphAddKernelNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, params: *const KernelNodeParams) {
        // Safety: the program's struct, as the header requires.
        let (d, p) = unsafe { kernel_params(params)? };
        // Safety: `node` and `deps` are the program's, as the header requires them (the
        // driver checks NULL); the kernel's arguments are copied by the driver now.
        unsafe { d.cuGraphAddKernelNode(node, graph, deps, n, (&p as *const DriverKernelParams).cast()) }
    }
}

cudart_fn! {
    fn cudaGraphKernelNodeSetParams(node: CUgraphNode, params: *const KernelNodeParams) {
        // Safety: as for cudaGraphAddKernelNode.
        let (d, p) = unsafe { kernel_params(params)? };
        // Safety: ours, for the call.
        unsafe { d.cuGraphKernelNodeSetParams(node, (&p as *const DriverKernelParams).cast()) }
    }
}

cudart_fn! {
    fn cudaGraphExecKernelNodeSetParams(exec: CUgraphExec, node: CUgraphNode, params: *const KernelNodeParams) {
        // Safety: as for cudaGraphAddKernelNode.
        let (d, p) = unsafe { kernel_params(params)? };
        // Safety: ours, for the call.
        unsafe { d.cuGraphExecKernelNodeSetParams(exec, node, (&p as *const DriverKernelParams).cast()) }
    }
}

cudart_fn! {
    fn cudaGraphAddMemcpyNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, params: *const Memcpy3DParms) {
        // Safety: the program's struct (NULL refused), as the header requires.
        let p = unsafe { params.as_ref() }.ok_or_else(|| error::invalid("pCopyParams is NULL"))?;
        add_memcpy(node, graph, deps, n, &memcpy3d(p)?)
    }
}

cudart_fn! {
    fn cudaGraphAddMemcpyNode1D(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, dst: *mut c_void, src: *const c_void, count: usize, kind: c_int) {
        let p = Memcpy3DParms {
            src_array: std::ptr::null_mut(),
            src_pos: Pos { x: 0, y: 0, z: 0 },
            src_ptr: PitchedPtr { ptr: src.cast_mut(), pitch: count, xsize: count, ysize: 1 },
            dst_array: std::ptr::null_mut(),
            dst_pos: Pos { x: 0, y: 0, z: 0 },
            dst_ptr: PitchedPtr { ptr: dst, pitch: count, xsize: count, ysize: 1 },
            extent: Extent { width: count, height: 1, depth: 1 },
            kind,
        };
        add_memcpy(node, graph, deps, n, &memcpy3d(&p)?)
    }
}

cudart_fn! {
    fn cudaGraphAddMemsetNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, params: *const MemsetParams) {
        if params.is_null() {
            return Err(error::invalid("pMemsetParams is NULL"));
        }
        let (d, ctx) = current()?;
        // Safety: the program's pointers, as the header requires them; cudaMemsetParams
        // is laid out as CUDA_MEMSET_NODE_PARAMS.
        unsafe { d.cuGraphAddMemsetNode(node, graph, deps, n, params.cast(), ctx) }
    }
}

cudart_fn! {
    fn cudaGraphAddHostNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, params: *const HostNodeParams) {
        if params.is_null() {
            return Err(error::invalid("pNodeParams is NULL"));
        }
        let (d, _, _) = with_context()?;
        // Safety: as above; cudaHostNodeParams is laid out as CUDA_HOST_NODE_PARAMS.
        unsafe { d.cuGraphAddHostNode(node, graph, deps, n, params.cast()) }
    }
}

cudart_fn! {
    fn cudaGraphAddEmptyNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize) {
        let (d, _, _) = with_context()?;
        // Safety: the program's pointers, as the header requires them.
        unsafe { d.cuGraphAddEmptyNode(node, graph, deps, n) }
    }
}

cudart_fn! {
    fn cudaGraphAddDependencies(graph: CUgraph, from: *const CUgraphNode, to: *const CUgraphNode, edges: *const c_void, n: usize) {
        let (d, _, _) = with_context()?;
        // Safety: the program's arrays of `n`, as the header requires (cudaGraphEdgeData is
        // CUgraphEdgeData).
        unsafe { d.cuGraphAddDependencies(graph, from, to, edges.cast(), n) }
    }
}

cudart_fn! {
    fn cudaGraphGetNodes(graph: CUgraph, nodes: *mut CUgraphNode, n: *mut usize) {
        let (d, _, _) = with_context()?;
        // Safety: the program's array and count, as the header requires.
        unsafe { d.cuGraphGetNodes(graph, nodes, n) }
    }
}

cudart_fn! {
    fn cudaGraphGetRootNodes(graph: CUgraph, nodes: *mut CUgraphNode, n: *mut usize) {
        let (d, _, _) = with_context()?;
        // Safety: as above.
        unsafe { d.cuGraphGetRootNodes(graph, nodes, n) }
    }
}

cudart_fn! {
    fn cudaGraphGetEdges(graph: CUgraph, from: *mut CUgraphNode, to: *mut CUgraphNode, edges: *mut c_void, n: *mut usize) {
        let (d, _, _) = with_context()?;
        // Safety: as above.
        unsafe { d.cuGraphGetEdges(graph, from, to, edges.cast(), n) }
    }
}

cudart_fn! {
    fn cudaGraphNodeGetType(node: CUgraphNode, kind: *mut c_int) {
        // Safety: the program's out-pointer: NULL (refused) or writable.
        let kind = unsafe { out_ref(kind)? };
        let (d, _, _) = with_context()?;
        // cudaGraphNodeType's values are CUgraphNodeType's.
        d.cuGraphNodeGetType(node, kind)
    }
}

cudart_fn! {
    fn cudaGraphClone(clone: *mut CUgraph, graph: CUgraph) {
        // Safety: the program's out-pointer: NULL (refused) or writable.
        let clone = unsafe { out_ref(clone)? };
        let (d, _, _) = with_context()?;
        d.cuGraphClone(clone, graph)
    }
}

fn instantiate(exec: *mut CUgraphExec, graph: CUgraph, flags: c_ulonglong) -> RtResult<()> {
    // Safety: the program's out-pointer: NULL (refused) or writable.
    let exec = unsafe { out_ref(exec)? };
    let (d, _, _) = with_context()?;
    // cudaGraphInstantiateFlags are CUgraphInstantiate_flags.
    d.cuGraphInstantiateWithFlags(exec, graph, flags)
}

cudart_fn! {
    fn cudaGraphInstantiate(exec: *mut CUgraphExec, graph: CUgraph, flags: c_ulonglong) {
        instantiate(exec, graph, flags)
    }
}

cudart_fn! {
    fn cudaGraphInstantiateWithFlags(exec: *mut CUgraphExec, graph: CUgraph, flags: c_ulonglong) {
        instantiate(exec, graph, flags)
    }
}

cudart_fn! {
    fn cudaGraphLaunch(exec: CUgraphExec, stream: CUstream) {
        let (d, _, _) = with_context()?;
        d.cuGraphLaunch(exec, stream_for(stream, false))
    }
}

cudart_fn! {
    fn cudaGraphLaunch_ptsz(exec: CUgraphExec, stream: CUstream) {
        let (d, _, _) = with_context()?;
        d.cuGraphLaunch(exec, stream_for(stream, true))
    }
}

cudart_fn! {
    fn cudaGraphExecDestroy(exec: CUgraphExec) {
        let (d, _, _) = with_context()?;
        d.cuGraphExecDestroy(exec)
    }
}

cudart_fn! {
    fn cudaGraphExecUpdate(exec: CUgraphExec, graph: CUgraph, info: *mut c_void) {
        let (d, _, _) = with_context()?;
        // Safety: the program's cudaGraphExecUpdateResultInfo (CUgraphExecUpdateResultInfo's
        // layout), as the header requires.
        unsafe { d.cuGraphExecUpdate(exec, graph, info.cast()) }
    }
}

cudart_fn! {
    fn cudaGraphDebugDotPrint(graph: CUgraph, path: *const c_char, flags: c_uint) {
        if path.is_null() {
            return Err(error::invalid("path is NULL"));
        }
        let (d, _, _) = with_context()?;
        // Safety: a NUL-terminated path, as the header requires; cudaGraphDebugDotFlags
        // are CUgraphDebugDot_flags.
        unsafe { d.cuGraphDebugDotPrint(graph, path, flags) }
    }
}

// ---- graph memory nodes (the driver's: cudaMemAllocNodeParams is CUDA_MEM_ALLOC_NODE_PARAMS,
// cudaGraphMemAttributeType is CUgraphMem_attribute) --------------------------------------

cudart_fn! {
    fn cudaGraphAddMemAllocNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, params: *mut c_void) {
        let (d, _, _) = with_context()?;
        // Safety: the program's pointers, as the header requires them; the driver writes
        // the allocation's address into `params`.
        unsafe { d.cuGraphAddMemAllocNode(node, graph, deps, n, params.cast()) }
    }
}

cudart_fn! {
    fn cudaGraphAddMemFreeNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, dptr: *mut c_void) {
        let (d, _, _) = with_context()?;
        // Safety: as above.
        unsafe { d.cuGraphAddMemFreeNode(node, graph, deps, n, dptr as u64) }
    }
}

cudart_fn! {
    fn cudaGraphMemAllocNodeGetParams(node: CUgraphNode, params: *mut c_void) {
        if params.is_null() {
            return Err(error::invalid("params_out is NULL"));
        }
        let (d, _, _) = with_context()?;
        // Safety: the program's cudaMemAllocNodeParams, writable, as the header requires.
        unsafe { d.cuGraphMemAllocNodeGetParams(node, params.cast()) }
    }
}

cudart_fn! {
    fn cudaGraphMemFreeNodeGetParams(node: CUgraphNode, dptr: *mut c_void) {
        // Safety: the program's out-pointer (a void *): NULL (refused) or writable.
        let dptr = unsafe { out_ref(dptr.cast::<u64>())? };
        let (d, _, _) = with_context()?;
        d.cuGraphMemFreeNodeGetParams(node, dptr)
    }
}

cudart_fn! {
    fn cudaDeviceGraphMemTrim(device: c_int) {
        let (d, rt, _) = with_context()?;
        rt.check_device(device)?;
        d.cuDeviceGraphMemTrim(device)
    }
}

cudart_fn! {
    fn cudaDeviceGetGraphMemAttribute(device: c_int, attr: c_int, value: *mut c_void) {
        if value.is_null() {
            return Err(error::invalid("value is NULL"));
        }
        let (d, rt, _) = with_context()?;
        rt.check_device(device)?;
        // Safety: the program's cuuint64_t, writable, as the header requires.
        unsafe { d.cuDeviceGetGraphMemAttribute(device, attr, value) }
    }
}

cudart_fn! {
    fn cudaDeviceSetGraphMemAttribute(device: c_int, attr: c_int, value: *mut c_void) {
        if value.is_null() {
            return Err(error::invalid("value is NULL"));
        }
        let (d, rt, _) = with_context()?;
        rt.check_device(device)?;
        // Safety: the program's cuuint64_t, as the header requires.
        unsafe { d.cuDeviceSetGraphMemAttribute(device, attr, value) }
    }
}

// ---- conditional nodes -------------------------------------------------------------------

cudart_fn! {
    fn cudaGraphConditionalHandleCreate(handle: *mut u64, graph: CUgraph, default: c_uint, flags: c_uint) {
        if handle.is_null() {
            return Err(error::invalid("pHandle_out is NULL"));
        }
        let (d, _, _) = with_context()?;
        let mut ctx: CUcontext = std::ptr::null_mut();
        d.cuCtxGetCurrent(&mut ctx)?;
        // Safety: a writable handle, checked non-NULL.
        unsafe { d.cuGraphConditionalHandleCreate(handle, graph, ctx, default, flags) }
    }
}

/// `cudaGraphNodeType`s whose parameters the runtime translates or writes back.
const NODE_TYPE_KERNEL: i32 = 0;
const NODE_TYPE_MEMCPY: i32 = 1;
const NODE_TYPE_MEMSET: i32 = 2;
const NODE_TYPE_MEM_ALLOC: i32 = 10;
const NODE_TYPE_CONDITIONAL: i32 = 13;

/// `cudaMemcpyNodeParams` (driver_types.h): flags, three reserved words, the copy.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct MemcpyNodeParams {
    flags: c_int,
    reserved: [c_int; 3],
    pub(crate) copy: Memcpy3DParms,
}

/// `CUDA_MEMCPY_NODE_PARAMS` (cuda.h): flags, a reserved word, the copy's context.
#[repr(C)]
struct DriverMemcpyNodeParams {
    flags: c_int,
    reserved: c_int,
    ctx: CUcontext,
    copy: DriverMemcpy3D,
}

/// `CUDA_MEMSET_NODE_PARAMS_v2` (cuda.h): `cudaMemsetParamsV2`, then a context.
#[repr(C)]
struct DriverMemsetParams {
    memset: MemsetParams,
    ctx: CUcontext,
}

/// The byte of `cudaGraphNodeParams` (and of `CUgraphNodeParams`) where the union starts.
pub(crate) const UNION: usize = 16;

/// Writes `value` at the union of a `CUgraphNodeParams`.
fn put_union<T>(p: &mut [u8; 256], value: T) {
    assert!(
        UNION + std::mem::size_of::<T>() <= 256 - 8,
        "the union is 232 bytes"
    );
    // Safety: in bounds (checked above), written unaligned.
    unsafe { p.as_mut_ptr().add(UNION).cast::<T>().write_unaligned(value) };
}

/// cuda.h's `CUgraphNodeParams` for the program's `cudaGraphNodeParams`: both are 256
/// bytes (the type, then the union at byte 16). Host, child graph, event, allocation and
/// free nodes are laid out alike; a kernel node names the host stub nvcc made (the
/// kernel's CUfunction in the current context, as cudaGraphAddKernelNode finds it), a
/// copy is described by `cudaMemcpy3DParms` and a memset or copy has no context (the
/// current one is given), a conditional node neither. Returns the type too.
///
/// # Safety
/// `params` is the program's `cudaGraphNodeParams` (NULL refused).
unsafe fn driver_node_params(params: *const c_void) -> RtResult<(&'static Driver, [u8; 256], i32)> {
    if params.is_null() {
        return Err(error::invalid("nodeParams is NULL"));
    }
    let (d, ctx) = current()?;
    let mut p = [0u8; 256];
    // Safety: the program's cudaGraphNodeParams, 256 bytes, as the header lays it out.
    unsafe { std::ptr::copy_nonoverlapping(params.cast::<u8>(), p.as_mut_ptr(), 256) };
    let kind = i32::from_ne_bytes(p[..4].try_into().expect("4 bytes"));
    let union = p.as_ptr().wrapping_add(UNION);
    match kind {
        NODE_TYPE_KERNEL => {
            // Safety: the union holds cudaKernelNodeParamsV2, laid out as
            // cudaKernelNodeParams.
            let k = unsafe { union.cast::<KernelNodeParams>().read_unaligned() };
            // Safety: ours, read above.
            let (_, driver) = unsafe { kernel_params(&k)? };
            p[UNION..256 - 8].fill(0);
            put_union(&mut p, driver);
        }
        NODE_TYPE_MEMCPY => {
            // Safety: the union holds cudaMemcpyNodeParams.
            let m = unsafe { union.cast::<MemcpyNodeParams>().read_unaligned() };
            if m.reserved != [0; 3] {
                return Err(error::invalid("memcpy.reserved must be zero"));
            }
            let copy = memcpy3d(&m.copy)?;
            p[UNION..256 - 8].fill(0);
            put_union(
                &mut p,
                DriverMemcpyNodeParams {
                    flags: m.flags,
                    reserved: 0,
                    ctx,
                    copy,
                },
            );
        }
        NODE_TYPE_MEMSET => {
            // Safety: the union holds cudaMemsetParamsV2.
            let memset = unsafe { union.cast::<MemsetParams>().read_unaligned() };
            put_union(&mut p, DriverMemsetParams { memset, ctx });
        }
        NODE_TYPE_CONDITIONAL => {
            // The runtime's conditional parameters end before the context.
            p[UNION + 24..UNION + 32].copy_from_slice(&(ctx as usize as u64).to_ne_bytes());
        }
        _ => {}
    }
    Ok((d, p, kind))
}

cudart_fn! {
    fn cudaGraphAddNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, edges: *const c_void, n: usize, params: *mut c_void) {
        // Safety: the program's struct, as the header requires.
        let (d, mut p, kind) = unsafe { driver_node_params(params)? };
        // Safety: the program's arrays of `n` and a full CUgraphNodeParams.
        unsafe { d.cuGraphAddNode(node, graph, deps, edges.cast(), n, p.as_mut_ptr().cast()) }?;
        // What the driver wrote back goes to the program's struct: an allocation's
        // address, a conditional's array of body graphs (`phGraph_out`, at the same place
        // in both structs; the runtime's ends there).
        let back = match kind {
            NODE_TYPE_MEM_ALLOC => 232,
            NODE_TYPE_CONDITIONAL => 24,
            _ => 0,
        };
        // Safety: as above.
        unsafe { std::ptr::copy_nonoverlapping(p.as_ptr().add(UNION), params.cast::<u8>().add(UNION), back) };
        Ok(())
    }
}

cudart_fn! {
    fn cudaGraphNodeSetParams(node: CUgraphNode, params: *mut c_void) {
        // Safety: the program's struct, as the header requires.
        let (d, mut p, _) = unsafe { driver_node_params(params)? };
        // Safety: ours, a full CUgraphNodeParams.
        unsafe { d.cuGraphNodeSetParams(node, p.as_mut_ptr().cast()) }
    }
}

cudart_fn! {
    fn cudaGraphExecNodeSetParams(exec: CUgraphExec, node: CUgraphNode, params: *mut c_void) {
        // Safety: the program's struct, as the header requires.
        let (d, mut p, _) = unsafe { driver_node_params(params)? };
        // Safety: ours, a full CUgraphNodeParams.
        unsafe { d.cuGraphExecNodeSetParams(exec, node, p.as_mut_ptr().cast()) }
    }
}

// ---- child graph and event nodes, and the setters of instantiated graphs (the driver's:
// cudaMemsetParams and cudaHostNodeParams are cuda.h's layouts, copies translated as for
// cudaGraphAddMemcpyNode) ------------------------------------------------------------------

cudart_fn! {
    fn cudaGraphAddChildGraphNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, child: CUgraph) {
        let (d, _, _) = with_context()?;
        // Safety: the program's pointers, as the header requires them (the driver checks
        // NULL).
        unsafe { d.cuGraphAddChildGraphNode(node, graph, deps, n, child) }
    }
}

cudart_fn! {
    fn cudaGraphAddEventRecordNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, event: CUevent) {
        let (d, _, _) = with_context()?;
        // Safety: as above.
        unsafe { d.cuGraphAddEventRecordNode(node, graph, deps, n, event) }
    }
}

cudart_fn! {
    fn cudaGraphAddEventWaitNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, event: CUevent) {
        let (d, _, _) = with_context()?;
        // Safety: as above.
        unsafe { d.cuGraphAddEventWaitNode(node, graph, deps, n, event) }
    }
}

cudart_fn! {
    fn cudaGraphEventRecordNodeGetEvent(node: CUgraphNode, event: *mut CUevent) {
        // Safety: the program's out-pointer: NULL (refused) or writable.
        let event = unsafe { out_ref(event)? };
        let (d, _, _) = with_context()?;
        d.cuGraphEventRecordNodeGetEvent(node, event)
    }
}

cudart_fn! {
    fn cudaGraphEventWaitNodeGetEvent(node: CUgraphNode, event: *mut CUevent) {
        // Safety: as above.
        let event = unsafe { out_ref(event)? };
        let (d, _, _) = with_context()?;
        d.cuGraphEventWaitNodeGetEvent(node, event)
    }
}

cudart_fn! {
    fn cudaGraphEventRecordNodeSetEvent(node: CUgraphNode, event: CUevent) {
        let (d, _, _) = with_context()?;
        d.cuGraphEventRecordNodeSetEvent(node, event)
    }
}

cudart_fn! {
    fn cudaGraphEventWaitNodeSetEvent(node: CUgraphNode, event: CUevent) {
        let (d, _, _) = with_context()?;
        d.cuGraphEventWaitNodeSetEvent(node, event)
    }
}

cudart_fn! {
    fn cudaGraphExecEventRecordNodeSetEvent(exec: CUgraphExec, node: CUgraphNode, event: CUevent) {
        let (d, _, _) = with_context()?;
        d.cuGraphExecEventRecordNodeSetEvent(exec, node, event)
    }
}

cudart_fn! {
    fn cudaGraphExecEventWaitNodeSetEvent(exec: CUgraphExec, node: CUgraphNode, event: CUevent) {
        let (d, _, _) = with_context()?;
        d.cuGraphExecEventWaitNodeSetEvent(exec, node, event)
    }
}

cudart_fn! {
    fn cudaGraphExecChildGraphNodeSetParams(exec: CUgraphExec, node: CUgraphNode, child: CUgraph) {
        let (d, _, _) = with_context()?;
        d.cuGraphExecChildGraphNodeSetParams(exec, node, child)
    }
}

/// A 1D copy of `count` bytes as `cudaMemcpy3DParms`, for the `...1D` setters.
fn copy_1d(dst: *mut c_void, src: *const c_void, count: usize, kind: c_int) -> Memcpy3DParms {
    Memcpy3DParms {
        src_array: std::ptr::null_mut(),
        src_pos: Pos { x: 0, y: 0, z: 0 },
        src_ptr: PitchedPtr {
            ptr: src.cast_mut(),
            pitch: count,
            xsize: count,
            ysize: 1,
        },
        dst_array: std::ptr::null_mut(),
        dst_pos: Pos { x: 0, y: 0, z: 0 },
        dst_ptr: PitchedPtr {
            ptr: dst,
            pitch: count,
            xsize: count,
            ysize: 1,
        },
        extent: Extent {
            width: count,
            height: 1,
            depth: 1,
        },
        kind,
    }
}

/// The driver's copy for the program's `cudaMemcpy3DParms` (NULL refused).
///
/// # Safety
/// `params` is NULL or the program's struct.
unsafe fn copy_params(params: *const Memcpy3DParms) -> RtResult<DriverMemcpy3D> {
    // Safety: the caller's contract.
    let p = unsafe { params.as_ref() }.ok_or_else(|| error::invalid("pNodeParams is NULL"))?;
    memcpy3d(p)
}

cudart_fn! {
    fn cudaGraphMemcpyNodeSetParams(node: CUgraphNode, params: *const Memcpy3DParms) {
        // Safety: the program's struct, as the header requires.
        let copy = unsafe { copy_params(params)? };
        let (d, _, _) = with_context()?;
        // Safety: ours, for the call.
        unsafe { d.cuGraphMemcpyNodeSetParams(node, (&copy as *const DriverMemcpy3D).cast()) }
    }
}

cudart_fn! {
    fn cudaGraphMemcpyNodeSetParams1D(node: CUgraphNode, dst: *mut c_void, src: *const c_void, count: usize, kind: c_int) {
        let copy = memcpy3d(&copy_1d(dst, src, count, kind))?;
        let (d, _, _) = with_context()?;
        // Safety: ours, for the call.
        unsafe { d.cuGraphMemcpyNodeSetParams(node, (&copy as *const DriverMemcpy3D).cast()) }
    }
}

/// A 1D copy to (`to_symbol`) or from a symbol, as `cudaMemcpy3DParms`: `host` is the
/// other side, whatever memory it is (`kind` says).
fn symbol_copy_1d(
    to_symbol: bool,
    symbol: *const c_void,
    other: *mut c_void,
    count: usize,
    offset: usize,
    kind: c_int,
) -> RtResult<DriverMemcpy3D> {
    let dev = crate::kernel::symbol_bytes(to_symbol, symbol, count, offset, kind)?;
    let p = if to_symbol {
        copy_1d(dev, other, count, kind)
    } else {
        copy_1d(other, dev, count, kind)
    };
    memcpy3d(&p)
}

cudart_fn! {
    fn cudaGraphAddMemcpyNodeToSymbol(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, symbol: *const c_void, src: *const c_void, count: usize, offset: usize, kind: c_int) {
        let copy = symbol_copy_1d(true, symbol, src.cast_mut(), count, offset, kind)?;
        add_memcpy(node, graph, deps, n, &copy)
    }
}

cudart_fn! {
    fn cudaGraphAddMemcpyNodeFromSymbol(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, dst: *mut c_void, symbol: *const c_void, count: usize, offset: usize, kind: c_int) {
        let copy = symbol_copy_1d(false, symbol, dst, count, offset, kind)?;
        add_memcpy(node, graph, deps, n, &copy)
    }
}

cudart_fn! {
    fn cudaGraphMemcpyNodeSetParamsToSymbol(node: CUgraphNode, symbol: *const c_void, src: *const c_void, count: usize, offset: usize, kind: c_int) {
        let copy = symbol_copy_1d(true, symbol, src.cast_mut(), count, offset, kind)?;
        let (d, _, _) = with_context()?;
        // Safety: ours, for the call.
        unsafe { d.cuGraphMemcpyNodeSetParams(node, (&copy as *const DriverMemcpy3D).cast()) }
    }
}

cudart_fn! {
    fn cudaGraphMemcpyNodeSetParamsFromSymbol(node: CUgraphNode, dst: *mut c_void, symbol: *const c_void, count: usize, offset: usize, kind: c_int) {
        let copy = symbol_copy_1d(false, symbol, dst, count, offset, kind)?;
        let (d, _, _) = with_context()?;
        // Safety: ours, for the call.
        unsafe { d.cuGraphMemcpyNodeSetParams(node, (&copy as *const DriverMemcpy3D).cast()) }
    }
}

cudart_fn! {
    fn cudaGraphExecMemcpyNodeSetParamsToSymbol(exec: CUgraphExec, node: CUgraphNode, symbol: *const c_void, src: *const c_void, count: usize, offset: usize, kind: c_int) {
        let copy = symbol_copy_1d(true, symbol, src.cast_mut(), count, offset, kind)?;
        let (d, ctx) = current()?;
        // Safety: ours, for the call.
        unsafe { d.cuGraphExecMemcpyNodeSetParams(exec, node, (&copy as *const DriverMemcpy3D).cast(), ctx) }
    }
}

cudart_fn! {
    fn cudaGraphExecMemcpyNodeSetParamsFromSymbol(exec: CUgraphExec, node: CUgraphNode, dst: *mut c_void, symbol: *const c_void, count: usize, offset: usize, kind: c_int) {
        let copy = symbol_copy_1d(false, symbol, dst, count, offset, kind)?;
        let (d, ctx) = current()?;
        // Safety: ours, for the call.
        unsafe { d.cuGraphExecMemcpyNodeSetParams(exec, node, (&copy as *const DriverMemcpy3D).cast(), ctx) }
    }
}

/// The runtime's `cudaMemcpyKind` for a driver copy's memory types: one side unified
/// (or both) is cudaMemcpyDefault, as the runtime made it (`memory_types`).
fn kind_of(src: c_uint, dst: c_uint) -> RtResult<c_int> {
    Ok(match (src, dst) {
        (MEMORY_HOST, MEMORY_HOST) => 0,
        (MEMORY_HOST, MEMORY_DEVICE) => 1,
        (MEMORY_DEVICE, MEMORY_HOST) => 2,
        (MEMORY_DEVICE, MEMORY_DEVICE) => 3,
        (MEMORY_UNIFIED, _) | (_, MEMORY_UNIFIED) => 4,
        _ => {
            return Err(error::not_supported(
                "the copy node has a CUDA array side: cumock's runtime has no CUDA arrays",
            ))
        }
    })
}

fn pitched(s: &Memcpy3DSide, width: usize) -> (PitchedPtr, Pos) {
    let ptr = if s.memory_type == MEMORY_HOST {
        s.host.cast_mut()
    } else {
        s.device as *mut c_void
    };
    (
        PitchedPtr {
            ptr,
            pitch: s.pitch,
            // Not kept by the driver's CUDA_MEMCPY3D: the copy's width. What NVIDIA's
            // runtime answers is not recorded (graph_node_params prints the extent only).
            xsize: width,
            ysize: s.height,
        },
        Pos {
            x: s.x_in_bytes,
            y: s.y,
            z: s.z,
        },
    )
}

cudart_fn! {
    fn cudaGraphMemcpyNodeGetParams(node: CUgraphNode, params: *mut Memcpy3DParms) {
        if params.is_null() {
            return Err(error::invalid("pNodeParams is NULL"));
        }
        let (d, _, _) = with_context()?;
        // Safety: zeroed CUDA_MEMCPY3D is valid (null pointers, zero sizes).
        let mut copy: DriverMemcpy3D = unsafe { std::mem::zeroed() };
        // Safety: ours, written by the driver.
        unsafe { d.cuGraphMemcpyNodeGetParams(node, (&mut copy as *mut DriverMemcpy3D).cast())? };
        let kind = kind_of(copy.src.memory_type, copy.dst.memory_type)?;
        let (src_ptr, src_pos) = pitched(&copy.src, copy.width_in_bytes);
        let (dst_ptr, dst_pos) = pitched(&copy.dst, copy.width_in_bytes);
        let p = Memcpy3DParms {
            src_array: std::ptr::null_mut(),
            src_pos,
            src_ptr,
            dst_array: std::ptr::null_mut(),
            dst_pos,
            dst_ptr,
            extent: Extent {
                width: copy.width_in_bytes,
                height: copy.height,
                depth: copy.depth,
            },
            kind,
        };
        // Safety: a non-NULL cudaMemcpy3DParms of the program's.
        unsafe { params.write_unaligned(p) };
        Ok(())
    }
}

cudart_fn! {
    fn cudaGraphKernelNodeGetAttribute(node: CUgraphNode, attr: c_int, value: *mut c_void) {
        let (d, _, _) = with_context()?;
        // Safety: the program's pointer, as the header requires (the driver checks NULL);
        // cudaKernelNodeAttrValue is laid out as CUkernelNodeAttrValue.
        unsafe { d.cuGraphKernelNodeGetAttribute(node, attr, value.cast()) }
    }
}

cudart_fn! {
    fn cudaGraphKernelNodeSetAttribute(node: CUgraphNode, attr: c_int, value: *const c_void) {
        let (d, _, _) = with_context()?;
        // Safety: as for cudaGraphKernelNodeGetAttribute.
        unsafe { d.cuGraphKernelNodeSetAttribute(node, attr, value.cast()) }
    }
}

cudart_fn! {
    fn cudaGraphKernelNodeCopyAttributes(dst: CUgraphNode, src: CUgraphNode) {
        let (d, _, _) = with_context()?;
        d.cuGraphKernelNodeCopyAttributes(dst, src)
    }
}

cudart_fn! {
    fn cudaGraphExecMemcpyNodeSetParams(exec: CUgraphExec, node: CUgraphNode, params: *const Memcpy3DParms) {
        // Safety: the program's struct, as the header requires.
        let copy = unsafe { copy_params(params)? };
        let (d, ctx) = current()?;
        // Safety: ours, for the call.
        unsafe { d.cuGraphExecMemcpyNodeSetParams(exec, node, (&copy as *const DriverMemcpy3D).cast(), ctx) }
    }
}

cudart_fn! {
    fn cudaGraphExecMemcpyNodeSetParams1D(exec: CUgraphExec, node: CUgraphNode, dst: *mut c_void, src: *const c_void, count: usize, kind: c_int) {
        let copy = memcpy3d(&copy_1d(dst, src, count, kind))?;
        let (d, ctx) = current()?;
        // Safety: ours, for the call.
        unsafe { d.cuGraphExecMemcpyNodeSetParams(exec, node, (&copy as *const DriverMemcpy3D).cast(), ctx) }
    }
}

cudart_fn! {
    fn cudaGraphMemsetNodeSetParams(node: CUgraphNode, params: *const MemsetParams) {
        if params.is_null() {
            return Err(error::invalid("pNodeParams is NULL"));
        }
        let (d, _, _) = with_context()?;
        // Safety: the program's struct, laid out as CUDA_MEMSET_NODE_PARAMS.
        unsafe { d.cuGraphMemsetNodeSetParams(node, params.cast()) }
    }
}

cudart_fn! {
    fn cudaGraphExecMemsetNodeSetParams(exec: CUgraphExec, node: CUgraphNode, params: *const MemsetParams) {
        if params.is_null() {
            return Err(error::invalid("pNodeParams is NULL"));
        }
        let (d, ctx) = current()?;
        // Safety: as above.
        unsafe { d.cuGraphExecMemsetNodeSetParams(exec, node, params.cast(), ctx) }
    }
}

cudart_fn! {
    fn cudaGraphHostNodeSetParams(node: CUgraphNode, params: *const HostNodeParams) {
        if params.is_null() {
            return Err(error::invalid("pNodeParams is NULL"));
        }
        let (d, _, _) = with_context()?;
        // Safety: the program's struct, laid out as CUDA_HOST_NODE_PARAMS.
        unsafe { d.cuGraphHostNodeSetParams(node, params.cast()) }
    }
}

cudart_fn! {
    fn cudaGraphExecHostNodeSetParams(exec: CUgraphExec, node: CUgraphNode, params: *const HostNodeParams) {
        if params.is_null() {
            return Err(error::invalid("pNodeParams is NULL"));
        }
        let (d, _, _) = with_context()?;
        // Safety: as above.
        unsafe { d.cuGraphExecHostNodeSetParams(exec, node, params.cast()) }
    }
}

cudart_fn! {
    fn cudaGraphNodeSetEnabled(exec: CUgraphExec, node: CUgraphNode, enabled: c_uint) {
        let (d, _, _) = with_context()?;
        d.cuGraphNodeSetEnabled(exec, node, enabled)
    }
}

cudart_fn! {
    fn cudaGraphNodeGetEnabled(exec: CUgraphExec, node: CUgraphNode, enabled: *mut c_uint) {
        // Safety: the program's out-pointer: NULL (refused) or writable.
        let enabled = unsafe { out_ref(enabled)? };
        let (d, _, _) = with_context()?;
        d.cuGraphNodeGetEnabled(exec, node, enabled)
    }
}

cudart_fn! {
    fn cudaGraphRemoveDependencies(graph: CUgraph, from: *const CUgraphNode, to: *const CUgraphNode, edges: *const c_void, n: usize) {
        let (d, _, _) = with_context()?;
        // Safety: the program's arrays of `n`, as the header requires (cudaGraphEdgeData is
        // CUgraphEdgeData).
        unsafe { d.cuGraphRemoveDependencies(graph, from, to, edges.cast(), n) }
    }
}

cudart_fn! {
    fn cudaGraphUpload(exec: CUgraphExec, stream: CUstream) {
        let (d, _, _) = with_context()?;
        d.cuGraphUpload(exec, stream_for(stream, false))
    }
}

cudart_fn! {
    fn cudaGraphUpload_ptsz(exec: CUgraphExec, stream: CUstream) {
        let (d, _, _) = with_context()?;
        d.cuGraphUpload(exec, stream_for(stream, true))
    }
}

cudart_fn! {
    fn cudaGraphExecGetFlags(exec: CUgraphExec, flags: *mut c_ulonglong) {
        // Safety: the program's out-pointer: NULL (refused) or writable.
        let flags = unsafe { out_ref(flags)? };
        let (d, _, _) = with_context()?;
        // cudaGraphInstantiateFlags are CUgraphInstantiate_flags.
        d.cuGraphExecGetFlags(exec, flags)
    }
}

cudart_fn! {
    fn cudaGraphNodeFindInClone(node: *mut CUgraphNode, original: CUgraphNode, clone: CUgraph) {
        // Safety: as above.
        let node = unsafe { out_ref(node)? };
        let (d, _, _) = with_context()?;
        d.cuGraphNodeFindInClone(node, original, clone)
    }
}

cudart_fn! {
    fn cudaGraphDestroyNode(node: CUgraphNode) {
        let (d, _, _) = with_context()?;
        d.cuGraphDestroyNode(node)
    }
}

cudart_fn! {
    fn cudaGraphNodeGetDependencies(node: CUgraphNode, deps: *mut CUgraphNode, edges: *mut c_void, n: *mut usize) {
        let (d, _, _) = with_context()?;
        // Safety: the program's arrays and count, as the header requires (cudaGraphEdgeData
        // is CUgraphEdgeData).
        unsafe { d.cuGraphNodeGetDependencies(node, deps, edges.cast(), n) }
    }
}

cudart_fn! {
    fn cudaGraphNodeGetDependentNodes(node: CUgraphNode, deps: *mut CUgraphNode, edges: *mut c_void, n: *mut usize) {
        let (d, _, _) = with_context()?;
        // Safety: as above.
        unsafe { d.cuGraphNodeGetDependentNodes(node, deps, edges.cast(), n) }
    }
}

cudart_fn! {
    fn cudaGraphInstantiateWithParams(exec: *mut CUgraphExec, graph: CUgraph, params: *mut c_void) {
        let (d, _, _) = with_context()?;
        // Safety: the program's pointers, as the header requires; cudaGraphInstantiateParams
        // is CUDA_GRAPH_INSTANTIATE_PARAMS (flags, upload stream, error node, result).
        unsafe { d.cuGraphInstantiateWithParams(exec, graph, params.cast()) }
    }
}

cudart_fn! {
    fn cudaGraphInstantiateWithParams_ptsz(exec: *mut CUgraphExec, graph: CUgraph, params: *mut c_void) {
        let (d, _, _) = with_context()?;
        // Safety: as above (the upload stream is not used).
        unsafe { d.cuGraphInstantiateWithParams(exec, graph, params.cast()) }
    }
}

cudart_fn! {
    fn cudaUserObjectCreate(object: *mut CUuserObject, ptr: *mut c_void, destroy: cumock_abi::CUhostFn, refcount: c_uint, flags: c_uint) {
        let (d, _, _) = with_context()?;
        // Safety: the program's out-pointer and destructor, as the header requires (the
        // driver checks NULL).
        unsafe { d.cuUserObjectCreate(object, ptr, destroy, refcount, flags) }
    }
}

cudart_fn! {
    fn cudaUserObjectRetain(object: CUuserObject, count: c_uint) {
        let (d, _, _) = with_context()?;
        d.cuUserObjectRetain(object, count)
    }
}

cudart_fn! {
    fn cudaUserObjectRelease(object: CUuserObject, count: c_uint) {
        let (d, _, _) = with_context()?;
        d.cuUserObjectRelease(object, count)
    }
}

cudart_fn! {
    fn cudaGraphRetainUserObject(graph: CUgraph, object: CUuserObject, count: c_uint, flags: c_uint) {
        let (d, _, _) = with_context()?;
        d.cuGraphRetainUserObject(graph, object, count, flags)
    }
}

cudart_fn! {
    fn cudaGraphReleaseUserObject(graph: CUgraph, object: CUuserObject, count: c_uint) {
        let (d, _, _) = with_context()?;
        d.cuGraphReleaseUserObject(graph, object, count)
    }
}

cudart_fn! {
    fn cudaStreamUpdateCaptureDependencies(stream: CUstream, deps: *mut CUgraphNode, edges: *const c_void, n: usize, flags: c_uint) {
        let (d, _, _) = with_context()?;
        // Safety: the program's arrays of `n`, as the header requires.
        unsafe { d.cuStreamUpdateCaptureDependencies(stream_for(stream, false), deps, edges.cast(), n, flags) }
    }
}

cudart_fn! {
    fn cudaStreamUpdateCaptureDependencies_ptsz(stream: CUstream, deps: *mut CUgraphNode, edges: *const c_void, n: usize, flags: c_uint) {
        let (d, _, _) = with_context()?;
        // Safety: as above.
        unsafe { d.cuStreamUpdateCaptureDependencies(stream_for(stream, true), deps, edges.cast(), n, flags) }
    }
}

cudart_fn! {
    fn cudaGraphHostNodeGetParams(node: CUgraphNode, params: *mut HostNodeParams) {
        if params.is_null() {
            return Err(error::invalid("pNodeParams is NULL"));
        }
        let (d, _, _) = with_context()?;
        // Safety: the program's struct, laid out as CUDA_HOST_NODE_PARAMS, writable.
        unsafe { d.cuGraphHostNodeGetParams(node, params.cast()) }
    }
}

cudart_fn! {
    fn cudaGraphMemsetNodeGetParams(node: CUgraphNode, params: *mut MemsetParams) {
        if params.is_null() {
            return Err(error::invalid("pNodeParams is NULL"));
        }
        let (d, _, _) = with_context()?;
        // Safety: the program's struct, laid out as CUDA_MEMSET_NODE_PARAMS, writable.
        unsafe { d.cuGraphMemsetNodeGetParams(node, params.cast()) }
    }
}

cudart_fn! {
    fn cudaGraphChildGraphNodeGetGraph(node: CUgraphNode, graph: *mut CUgraph) {
        // Safety: the program's out-pointer: NULL (refused) or writable.
        let graph = unsafe { out_ref(graph)? };
        let (d, _, _) = with_context()?;
        d.cuGraphChildGraphNodeGetGraph(node, graph)
    }
}

cudart_fn! {
    fn cudaGraphKernelNodeGetParams(node: CUgraphNode, params: *mut KernelNodeParams) {
        if params.is_null() {
            return Err(error::invalid("pNodeParams is NULL"));
        }
        let (d, _, device) = with_context()?;
        let mut p = DriverKernelParams {
            func: std::ptr::null_mut(),
            grid: [0; 3],
            block: [0; 3],
            shared: 0,
            kernel_params: std::ptr::null_mut(),
            extra: std::ptr::null_mut(),
            kern: std::ptr::null_mut(),
            ctx: std::ptr::null_mut(),
        };
        // Safety: ours, CUDA_KERNEL_NODE_PARAMS_v2's layout.
        unsafe { d.cuGraphKernelNodeGetParams(node, (&mut p as *mut DriverKernelParams).cast())? };
        // The node names a CUfunction; the program named the stub nvcc made for it.
        let func = crate::kernel::stub_of(p.func, device).ok_or_else(|| {
            RtError::new(
                error::INVALID_DEVICE_FUNCTION,
                "the kernel node's function was not launched through this runtime: it has no host stub to hand back",
            )
        })?;
        let out = KernelNodeParams {
            func,
            grid: Dim3 { x: p.grid[0], y: p.grid[1], z: p.grid[2] },
            block: Dim3 { x: p.block[0], y: p.block[1], z: p.block[2] },
            shared: p.shared,
            kernel_params: p.kernel_params,
            extra: p.extra,
        };
        // Safety: the program's struct, checked non-NULL, writable as the header requires.
        unsafe { params.write_unaligned(out) };
        Ok(())
    }
}
