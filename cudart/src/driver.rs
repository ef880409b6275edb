//! The driver under the runtime: `libcuda.so.1` opened at first use (whatever the loader
//! finds: NVIDIA's driver, or cumock's mock first in the library path) and every entry
//! point taken from `cuGetProcAddress_v2`, by base name and CUDA version, as NVIDIA's
//! runtime does. The private `cuGetExportTable` tables are never asked for.

use crate::error::{self, RtError, RtResult};
use cumock_abi::{
    CUmemAccessDesc, CUmemAllocationProp, CUresult, CUDA_ARRAY3D_DESCRIPTOR, CUDA_MEMCPY2D,
    CUDA_MEMCPY3D, CUDA_RESOURCE_DESC, CUDA_TEXTURE_DESC,
};
use std::ffi::{c_char, c_void, CString};
use std::sync::OnceLock;

/// The CUDA version this runtime is written against (cuda_runtime_api.h's CUDART_VERSION),
/// which is also the version it asks the driver's entry points for.
pub const CUDART_VERSION: i32 = 13000;

pub type CUcontext = *mut c_void;
pub type CUstream = *mut c_void;
pub type CUevent = *mut c_void;
pub type CUmodule = *mut c_void;
pub type CUfunction = *mut c_void;
pub type CUmemoryPool = *mut c_void;
pub type CUgraph = *mut c_void;
pub type CUgraphNode = *mut c_void;
pub type CUgraphExec = *mut c_void;

/// `CUipcMemHandle`: 64 opaque bytes, passed by value.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUipcMemHandle {
    pub reserved: [u8; 64],
}

/// `CUhostFn` / `cudaHostFn_t`.
pub type HostFn = Option<unsafe extern "C" fn(*mut c_void)>;
/// `CUstreamCallback` / `cudaStreamCallback_t`: (stream, status, user data).
pub type StreamCallback = Option<unsafe extern "C" fn(CUstream, i32, *mut c_void)>;

type GetProcAddress =
    unsafe extern "C" fn(*const c_char, *mut *mut c_void, i32, u64, *mut i32) -> CUresult;

/// Declares the driver functions the runtime uses, by the base name cuGetProcAddress
/// takes, with the signature of the version CUDA 13.0 resolves it to. `safe` ones take
/// only values and references to the runtime's own data; `unsafe` ones take pointers
/// the program gave, and their callers say why those are valid.
macro_rules! driver_functions {
    ($($kind:ident fn $name:ident($($arg:ident: $ty:ty),* $(,)?);)*) => {
        #[allow(non_snake_case)]
        struct Table {
            $($name: Option<unsafe extern "C" fn($($ty),*) -> CUresult>,)*
        }

        impl Table {
            fn resolve(get: impl Fn(&str) -> Option<*mut c_void>) -> Self {
                Self {
                    $($name: get(stringify!($name)).map(|p| {
                        // Safety: cuGetProcAddress gave this pointer for this name at
                        // CUDART_VERSION, whose signature cuda.h declares as written here.
                        unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($ty),*) -> CUresult>(p) }
                    }),)*
                }
            }
        }

        #[allow(non_snake_case, clippy::too_many_arguments)]
        impl Driver {
            $(driver_functions!(@method $kind $name($($arg: $ty),*));)*
        }
    };
    (@method safe $name:ident($($arg:ident: $ty:ty),*)) => {
        pub fn $name(&self, $($arg: $ty),*) -> RtResult<()> {
            let f = self.table.$name.ok_or_else(|| missing(stringify!($name)))?;
            // Safety: the arguments are values, or references to live data of the right
            // type, which is all cuda.h asks of them.
            check(stringify!($name), unsafe { f($($arg),*) })
        }
    };
    (@method unsafe $name:ident($($arg:ident: $ty:ty),*)) => {
        /// # Safety
        /// The pointer arguments are valid for what cuda.h says the driver does with them.
        pub unsafe fn $name(&self, $($arg: $ty),*) -> RtResult<()> {
            let f = self.table.$name.ok_or_else(|| missing(stringify!($name)))?;
            // Safety: the caller's contract.
            check(stringify!($name), unsafe { f($($arg),*) })
        }
    };
}

driver_functions! {
    safe fn cuInit(flags: u32);
    safe fn cuDriverGetVersion(version: &mut i32);
    safe fn cuGetErrorString(code: CUresult, s: &mut *const c_char);
    safe fn cuDeviceGetCount(count: &mut i32);
    unsafe fn cuDeviceGetName(name: *mut c_char, len: i32, dev: i32);
    safe fn cuDeviceGetAttribute(value: &mut i32, attrib: i32, dev: i32);
    safe fn cuDeviceTotalMem(bytes: &mut usize, dev: i32);
    safe fn cuDeviceGetUuid(uuid: &mut [u8; 16], dev: i32);
    unsafe fn cuDeviceGetPCIBusId(id: *mut c_char, len: i32, dev: i32);
    safe fn cuDeviceCanAccessPeer(can: &mut i32, dev: i32, peer: i32);
    safe fn cuDevicePrimaryCtxRetain(ctx: &mut CUcontext, dev: i32);
    safe fn cuDevicePrimaryCtxRelease(dev: i32);
    safe fn cuDevicePrimaryCtxReset(dev: i32);
    safe fn cuDevicePrimaryCtxGetState(dev: i32, flags: &mut u32, active: &mut i32);
    safe fn cuDevicePrimaryCtxSetFlags(dev: i32, flags: u32);
    safe fn cuCtxGetCurrent(ctx: &mut CUcontext);
    safe fn cuCtxSetCurrent(ctx: CUcontext);
    safe fn cuCtxGetDevice(dev: &mut i32, ctx: CUcontext);
    safe fn cuCtxSynchronize(ctx: CUcontext);
    safe fn cuCtxEnablePeerAccess(peer: CUcontext, flags: u32);
    safe fn cuCtxDisablePeerAccess(peer: CUcontext);
    safe fn cuCtxGetStreamPriorityRange(least: &mut i32, greatest: &mut i32);
    safe fn cuCtxGetLimit(value: &mut usize, limit: i32);
    safe fn cuCtxSetLimit(limit: i32, value: usize);
    safe fn cuMemGetInfo(free: &mut usize, total: &mut usize);
    safe fn cuMemAlloc(ptr: &mut u64, size: usize);
    safe fn cuMemFree(ptr: u64);
    safe fn cuMemHostAlloc(ptr: &mut *mut c_void, size: usize, flags: u32);
    unsafe fn cuMemFreeHost(ptr: *mut c_void);
    unsafe fn cuMemHostGetFlags(flags: &mut u32, ptr: *mut c_void);
    unsafe fn cuMemHostRegister(ptr: *mut c_void, size: usize, flags: u32);
    unsafe fn cuMemHostUnregister(ptr: *mut c_void);
    unsafe fn cuMemHostGetDevicePointer(dptr: &mut u64, ptr: *mut c_void, flags: u32);
    safe fn cuMemAllocManaged(ptr: &mut u64, size: usize, flags: u32);
    unsafe fn cuMemcpy(dst: u64, src: u64, n: usize);
    unsafe fn cuMemcpyHtoD(dst: u64, src: *const c_void, n: usize);
    unsafe fn cuMemcpyDtoH(dst: *mut c_void, src: u64, n: usize);
    unsafe fn cuMemcpyDtoD(dst: u64, src: u64, n: usize);
    unsafe fn cuMemcpyAsync(dst: u64, src: u64, n: usize, stream: CUstream);
    unsafe fn cuMemcpyHtoDAsync(dst: u64, src: *const c_void, n: usize, stream: CUstream);
    unsafe fn cuMemcpyDtoHAsync(dst: *mut c_void, src: u64, n: usize, stream: CUstream);
    unsafe fn cuMemcpyDtoDAsync(dst: u64, src: u64, n: usize, stream: CUstream);
    unsafe fn cuMemcpyPeer(dst: u64, dst_ctx: CUcontext, src: u64, src_ctx: CUcontext, n: usize);
    unsafe fn cuMemcpyPeerAsync(dst: u64, dst_ctx: CUcontext, src: u64, src_ctx: CUcontext, n: usize, stream: CUstream);
    unsafe fn cuMemsetD8(dst: u64, value: u8, n: usize);
    unsafe fn cuMemsetD8Async(dst: u64, value: u8, n: usize, stream: CUstream);
    unsafe fn cuPointerGetAttribute(data: *mut c_void, attribute: i32, ptr: u64);
    safe fn cuStreamCreate(stream: &mut CUstream, flags: u32);
    safe fn cuStreamCreateWithPriority(stream: &mut CUstream, flags: u32, priority: i32);
    safe fn cuStreamDestroy(stream: CUstream);
    safe fn cuStreamSynchronize(stream: CUstream);
    safe fn cuStreamQuery(stream: CUstream);
    safe fn cuStreamWaitEvent(stream: CUstream, event: CUevent, flags: u32);
    safe fn cuStreamGetPriority(stream: CUstream, priority: &mut i32);
    safe fn cuStreamGetFlags(stream: CUstream, flags: &mut u32);
    safe fn cuStreamIsCapturing(stream: CUstream, status: &mut i32);
    unsafe fn cuStreamGetCaptureInfo(stream: CUstream, status: *mut i32, id: *mut u64, graph: *mut *mut c_void, deps: *mut *const *mut c_void, edges: *mut *const c_void, n: *mut usize);
    unsafe fn cuLaunchHostFunc(stream: CUstream, f: HostFn, user_data: *mut c_void);
    unsafe fn cuStreamAddCallback(stream: CUstream, f: StreamCallback, user_data: *mut c_void, flags: u32);
    safe fn cuStreamGetId(stream: CUstream, id: &mut u64);
    safe fn cuMemAllocPitch(ptr: &mut u64, pitch: &mut usize, width: usize, height: usize, element_size: u32);
    safe fn cuIpcGetEventHandle(handle: &mut CUipcMemHandle, event: CUevent);
    safe fn cuIpcOpenEventHandle(event: &mut CUevent, handle: CUipcMemHandle);
    unsafe fn cuDeviceGetByPCIBusId(dev: &mut i32, id: *const c_char);
    safe fn cuCtxGetCacheConfig(config: &mut i32);
    safe fn cuCtxSetCacheConfig(config: i32);
    safe fn cuFuncSetCacheConfig(f: CUfunction, config: i32);
    unsafe fn cuLaunchCooperativeKernel(f: CUfunction, gx: u32, gy: u32, gz: u32, bx: u32, by: u32, bz: u32, shared: u32, stream: CUstream, params: *mut *mut c_void);
    unsafe fn cuLaunchKernelEx(config: *const c_void, f: CUfunction, params: *mut *mut c_void, extra: *mut *mut c_void);
    safe fn cuProfilerStart();
    safe fn cuProfilerStop();
    safe fn cuThreadExchangeStreamCaptureMode(mode: &mut i32);
    safe fn cuEventRecordWithFlags(event: CUevent, stream: CUstream, flags: u32);
    safe fn cuEventCreate(event: &mut CUevent, flags: u32);
    safe fn cuEventRecord(event: CUevent, stream: CUstream);
    safe fn cuEventSynchronize(event: CUevent);
    safe fn cuEventQuery(event: CUevent);
    safe fn cuEventDestroy(event: CUevent);
    safe fn cuEventElapsedTime(ms: &mut f32, start: CUevent, end: CUevent);
    safe fn cuArray3DCreate(array: &mut u64, desc: &CUDA_ARRAY3D_DESCRIPTOR);
    safe fn cuArray3DGetDescriptor(desc: &mut CUDA_ARRAY3D_DESCRIPTOR, array: u64);
    safe fn cuArrayDestroy(array: u64);
    unsafe fn cuMemcpy2D(copy: &CUDA_MEMCPY2D);
    unsafe fn cuMemcpy2DAsync(copy: &CUDA_MEMCPY2D, stream: CUstream);
    unsafe fn cuMemcpy3D(copy: &CUDA_MEMCPY3D);
    unsafe fn cuMemcpy3DAsync(copy: &CUDA_MEMCPY3D, stream: CUstream);
    unsafe fn cuMemcpyHtoA(dst: u64, offset: usize, src: *const c_void, n: usize);
    unsafe fn cuMemcpyAtoH(dst: *mut c_void, src: u64, offset: usize, n: usize);
    safe fn cuMemcpyDtoA(dst: u64, offset: usize, src: u64, n: usize);
    safe fn cuMemcpyAtoD(dst: u64, src: u64, offset: usize, n: usize);
    unsafe fn cuTexObjectCreate(tex: &mut u64, res: &CUDA_RESOURCE_DESC, desc: &CUDA_TEXTURE_DESC, view: *const c_void);
    safe fn cuTexObjectDestroy(tex: u64);
    safe fn cuSurfObjectCreate(surf: &mut u64, res: &CUDA_RESOURCE_DESC);
    safe fn cuSurfObjectDestroy(surf: u64);
    safe fn cuMemAddressReserve(ptr: &mut u64, size: usize, alignment: usize, addr: u64, flags: u64);
    safe fn cuMemAddressFree(ptr: u64, size: usize);
    safe fn cuMemCreate(handle: &mut u64, size: usize, prop: &CUmemAllocationProp, flags: u64);
    safe fn cuMemRelease(handle: u64);
    safe fn cuMemMap(ptr: u64, size: usize, offset: usize, handle: u64, flags: u64);
    safe fn cuMemUnmap(ptr: u64, size: usize);
    safe fn cuMemSetAccess(ptr: u64, size: usize, desc: &CUmemAccessDesc, count: usize);
    safe fn cuMemGetAllocationGranularity(granularity: &mut usize, prop: &CUmemAllocationProp, option: i32);
    safe fn cuMemExportToShareableHandle(fd: &mut i32, handle: u64, kind: i32, flags: u64);
    unsafe fn cuMemImportFromShareableHandle(handle: &mut u64, os_handle: *mut c_void, kind: i32);
    safe fn cuIpcGetMemHandle(handle: &mut CUipcMemHandle, ptr: u64);
    safe fn cuIpcOpenMemHandle(ptr: &mut u64, handle: CUipcMemHandle, flags: u32);
    safe fn cuIpcCloseMemHandle(ptr: u64);
    safe fn cuDeviceGetDefaultMemPool(pool: &mut CUmemoryPool, dev: i32);
    safe fn cuDeviceGetMemPool(pool: &mut CUmemoryPool, dev: i32);
    safe fn cuDeviceSetMemPool(dev: i32, pool: CUmemoryPool);
    safe fn cuMemAllocAsync(ptr: &mut u64, size: usize, stream: CUstream);
    safe fn cuMemFreeAsync(ptr: u64, stream: CUstream);
    unsafe fn cuMemPoolCreate(pool: &mut CUmemoryPool, props: *const c_void);
    safe fn cuMemPoolDestroy(pool: CUmemoryPool);
    unsafe fn cuMemPoolSetAttribute(pool: CUmemoryPool, attr: i32, value: *mut c_void);
    unsafe fn cuMemPoolGetAttribute(pool: CUmemoryPool, attr: i32, value: *mut c_void);
    safe fn cuMemPoolTrimTo(pool: CUmemoryPool, keep: usize);
    safe fn cuMemAllocFromPoolAsync(ptr: &mut u64, size: usize, pool: CUmemoryPool, stream: CUstream);
    unsafe fn cuModuleLoadData(module: &mut CUmodule, image: *const c_void);
    unsafe fn cuModuleLoadDataEx(module: &mut CUmodule, image: *const c_void, num_options: u32, options: *mut i32, values: *mut *mut c_void);
    safe fn cuModuleUnload(module: CUmodule);
    unsafe fn cuModuleGetFunction(f: &mut CUfunction, module: CUmodule, name: *const c_char);
    unsafe fn cuModuleGetGlobal(ptr: &mut u64, size: &mut usize, module: CUmodule, name: *const c_char);
    unsafe fn cuLaunchKernel(f: CUfunction, gx: u32, gy: u32, gz: u32, bx: u32, by: u32, bz: u32, shared: u32, stream: CUstream, params: *mut *mut c_void, extra: *mut *mut c_void);
    safe fn cuFuncGetAttribute(value: &mut i32, attr: i32, f: CUfunction);
    safe fn cuFuncSetAttribute(f: CUfunction, attr: i32, value: i32);
    safe fn cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(blocks: &mut i32, f: CUfunction, block_size: i32, shared: usize, flags: u32);
    unsafe fn cuOccupancyMaxActiveClusters(clusters: &mut i32, f: CUfunction, config: *const c_void);
    unsafe fn cuOccupancyMaxPotentialClusterSize(size: &mut i32, f: CUfunction, config: *const c_void);
    safe fn cuStreamBeginCapture(stream: CUstream, mode: i32);
    unsafe fn cuStreamBeginCaptureToGraph(stream: CUstream, graph: CUgraph, deps: *const CUgraphNode, edges: *const c_void, n: usize, mode: i32);
    safe fn cuStreamEndCapture(stream: CUstream, graph: &mut CUgraph);
    safe fn cuGraphCreate(graph: &mut CUgraph, flags: u32);
    safe fn cuGraphDestroy(graph: CUgraph);
    unsafe fn cuGraphAddKernelNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, params: *const c_void);
    unsafe fn cuGraphAddMemcpyNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, params: *const c_void, ctx: CUcontext);
    unsafe fn cuGraphAddMemsetNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, params: *const c_void, ctx: CUcontext);
    unsafe fn cuGraphAddHostNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, params: *const c_void);
    unsafe fn cuGraphAddEmptyNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize);
    unsafe fn cuGraphAddDependencies(graph: CUgraph, from: *const CUgraphNode, to: *const CUgraphNode, edges: *const c_void, n: usize);
    unsafe fn cuGraphGetNodes(graph: CUgraph, nodes: *mut CUgraphNode, n: *mut usize);
    unsafe fn cuGraphGetRootNodes(graph: CUgraph, nodes: *mut CUgraphNode, n: *mut usize);
    unsafe fn cuGraphGetEdges(graph: CUgraph, from: *mut CUgraphNode, to: *mut CUgraphNode, edges: *mut c_void, n: *mut usize);
    safe fn cuGraphNodeGetType(node: CUgraphNode, kind: &mut i32);
    safe fn cuGraphClone(clone: &mut CUgraph, graph: CUgraph);
    safe fn cuGraphInstantiateWithFlags(exec: &mut CUgraphExec, graph: CUgraph, flags: u64);
    safe fn cuGraphLaunch(exec: CUgraphExec, stream: CUstream);
    safe fn cuGraphExecDestroy(exec: CUgraphExec);
    unsafe fn cuGraphKernelNodeSetParams(node: CUgraphNode, params: *const c_void);
    unsafe fn cuGraphExecKernelNodeSetParams(exec: CUgraphExec, node: CUgraphNode, params: *const c_void);
    unsafe fn cuGraphExecUpdate(exec: CUgraphExec, graph: CUgraph, info: *mut c_void);
    unsafe fn cuGraphDebugDotPrint(graph: CUgraph, path: *const c_char, flags: u32);
    unsafe fn cuGraphAddMemAllocNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, params: *mut c_void);
    unsafe fn cuGraphAddMemFreeNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, dptr: u64);
    unsafe fn cuGraphMemAllocNodeGetParams(node: CUgraphNode, params: *mut c_void);
    safe fn cuGraphMemFreeNodeGetParams(node: CUgraphNode, dptr: &mut u64);
    safe fn cuDeviceGraphMemTrim(dev: i32);
    unsafe fn cuDeviceGetGraphMemAttribute(dev: i32, attr: i32, value: *mut c_void);
    unsafe fn cuDeviceSetGraphMemAttribute(dev: i32, attr: i32, value: *mut c_void);
    unsafe fn cuGraphConditionalHandleCreate(handle: *mut u64, graph: CUgraph, ctx: CUcontext, default: u32, flags: u32);
    unsafe fn cuGraphAddNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, edges: *const c_void, n: usize, params: *mut c_void);
    unsafe fn cuGraphNodeSetParams(node: CUgraphNode, params: *mut c_void);
    unsafe fn cuGraphExecNodeSetParams(exec: CUgraphExec, node: CUgraphNode, params: *mut c_void);
    unsafe fn cuGraphAddChildGraphNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, child: CUgraph);
    unsafe fn cuGraphAddEventRecordNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, event: CUevent);
    unsafe fn cuGraphAddEventWaitNode(node: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, event: CUevent);
    safe fn cuGraphEventRecordNodeGetEvent(node: CUgraphNode, event: &mut CUevent);
    safe fn cuGraphEventWaitNodeGetEvent(node: CUgraphNode, event: &mut CUevent);
    safe fn cuGraphEventRecordNodeSetEvent(node: CUgraphNode, event: CUevent);
    safe fn cuGraphEventWaitNodeSetEvent(node: CUgraphNode, event: CUevent);
    safe fn cuGraphExecEventRecordNodeSetEvent(exec: CUgraphExec, node: CUgraphNode, event: CUevent);
    safe fn cuGraphExecEventWaitNodeSetEvent(exec: CUgraphExec, node: CUgraphNode, event: CUevent);
    safe fn cuGraphExecChildGraphNodeSetParams(exec: CUgraphExec, node: CUgraphNode, child: CUgraph);
    unsafe fn cuGraphMemcpyNodeSetParams(node: CUgraphNode, params: *const c_void);
    unsafe fn cuGraphMemsetNodeSetParams(node: CUgraphNode, params: *const c_void);
    unsafe fn cuGraphHostNodeSetParams(node: CUgraphNode, params: *const c_void);
    unsafe fn cuGraphExecMemcpyNodeSetParams(exec: CUgraphExec, node: CUgraphNode, params: *const c_void, ctx: CUcontext);
    unsafe fn cuGraphExecMemsetNodeSetParams(exec: CUgraphExec, node: CUgraphNode, params: *const c_void, ctx: CUcontext);
    unsafe fn cuGraphExecHostNodeSetParams(exec: CUgraphExec, node: CUgraphNode, params: *const c_void);
    safe fn cuGraphNodeSetEnabled(exec: CUgraphExec, node: CUgraphNode, enabled: u32);
    safe fn cuGraphNodeGetEnabled(exec: CUgraphExec, node: CUgraphNode, enabled: &mut u32);
    unsafe fn cuGraphNodeGetDependencies(node: CUgraphNode, deps: *mut CUgraphNode, edges: *mut c_void, n: *mut usize);
    unsafe fn cuGraphNodeGetDependentNodes(node: CUgraphNode, deps: *mut CUgraphNode, edges: *mut c_void, n: *mut usize);
    unsafe fn cuGraphInstantiateWithParams(exec: *mut CUgraphExec, graph: CUgraph, params: *mut c_void);
    unsafe fn cuUserObjectCreate(object: *mut *mut c_void, ptr: *mut c_void, destroy: HostFn, refcount: u32, flags: u32);
    safe fn cuUserObjectRetain(object: *mut c_void, count: u32);
    safe fn cuUserObjectRelease(object: *mut c_void, count: u32);
    safe fn cuGraphRetainUserObject(graph: CUgraph, object: *mut c_void, count: u32, flags: u32);
    safe fn cuGraphReleaseUserObject(graph: CUgraph, object: *mut c_void, count: u32);
    unsafe fn cuStreamUpdateCaptureDependencies(stream: CUstream, deps: *mut CUgraphNode, edges: *const c_void, n: usize, flags: u32);
    unsafe fn cuGraphHostNodeGetParams(node: CUgraphNode, params: *mut c_void);
    unsafe fn cuGraphMemsetNodeGetParams(node: CUgraphNode, params: *mut c_void);
    safe fn cuGraphChildGraphNodeGetGraph(node: CUgraphNode, graph: &mut CUgraph);
    unsafe fn cuGraphKernelNodeGetParams(node: CUgraphNode, params: *mut c_void);
    safe fn cuGraphUpload(exec: CUgraphExec, stream: CUstream);
    safe fn cuGraphExecGetFlags(exec: CUgraphExec, flags: &mut u64);
    safe fn cuGraphNodeFindInClone(node: &mut CUgraphNode, original: CUgraphNode, clone: CUgraph);
    safe fn cuGraphDestroyNode(node: CUgraphNode);
    unsafe fn cuGraphRemoveDependencies(graph: CUgraph, from: *const CUgraphNode, to: *const CUgraphNode, edges: *const c_void, n: usize);
}

/// The loaded driver.
pub struct Driver {
    table: Table,
    get_proc_address: GetProcAddress,
    /// Kept open for the life of the process: the table points into it.
    _library: libloading::Library,
}

/// The driver, opened and initialised at first use; the failure is kept and returned to
/// every later call, as NVIDIA's runtime does.
pub fn driver() -> RtResult<&'static Driver> {
    static DRIVER: OnceLock<Result<Driver, RtError>> = OnceLock::new();
    DRIVER
        .get_or_init(Driver::open)
        .as_ref()
        .map_err(Clone::clone)
}

impl Driver {
    fn open() -> RtResult<Self> {
        // Safety: loading the CUDA driver runs its initialisers, which is what it is for.
        let library = unsafe { libloading::Library::new("libcuda.so.1") }.map_err(|e| {
            RtError::new(
                error::INSUFFICIENT_DRIVER,
                format!("libcuda.so.1 could not be loaded ({e}): no CUDA driver, or not in the library path"),
            )
        })?;
        // Safety: cuGetProcAddress_v2 has this signature in cuda.h (CUDA 12.5 and later).
        let gpa: GetProcAddress = unsafe {
            *library
                .get::<GetProcAddress>(b"cuGetProcAddress_v2\0")
                .map_err(|e| {
                    RtError::new(
                        error::INSUFFICIENT_DRIVER,
                        format!("the driver has no cuGetProcAddress_v2 ({e}): it is older than CUDA 12.5"),
                    )
                })?
        };
        let get = |name: &str| -> Option<*mut c_void> {
            let c = CString::new(name).ok()?;
            let mut p = std::ptr::null_mut();
            let mut status = 0i32;
            // Safety: a NUL-terminated name and two live out-pointers.
            let r = unsafe { gpa(c.as_ptr(), &mut p, CUDART_VERSION, 0, &mut status) };
            (r == 0 && status == 0 && !p.is_null()).then_some(p)
        };
        let driver = Self {
            table: Table::resolve(get),
            get_proc_address: gpa,
            _library: library,
        };
        driver.cuInit(0)?;
        let mut version = 0;
        driver.cuDriverGetVersion(&mut version)?;
        if version < CUDART_VERSION {
            return Err(RtError::new(
                error::INSUFFICIENT_DRIVER,
                format!("the driver supports CUDA {version}, this runtime needs {CUDART_VERSION}"),
            ));
        }
        Ok(driver)
    }

    /// cuGetProcAddress_v2 itself, for cudaGetDriverEntryPoint.
    ///
    /// # Safety
    /// `symbol` is NUL-terminated; `pfn` and `status` are NULL or writable.
    pub unsafe fn get_proc_address(
        &self,
        symbol: *const c_char,
        pfn: *mut *mut c_void,
        version: i32,
        flags: u64,
        status: *mut i32,
    ) -> RtResult<()> {
        // Safety: the caller's contract.
        check("cuGetProcAddress", unsafe {
            (self.get_proc_address)(symbol, pfn, version, flags, status)
        })
    }

    /// The driver's description of one of its results, if it has one.
    pub fn error_string(&self, code: CUresult) -> Option<&'static std::ffi::CStr> {
        let mut s = std::ptr::null();
        self.cuGetErrorString(code, &mut s).ok()?;
        // Safety: the driver returns a pointer to a static NUL-terminated string.
        (!s.is_null()).then(|| unsafe { std::ffi::CStr::from_ptr(s) })
    }
}

fn missing(name: &str) -> RtError {
    error::not_supported(format!("the driver has no {name}"))
}

/// A driver result as the runtime's.
fn check(name: &str, r: CUresult) -> RtResult<()> {
    if r == 0 {
        return Ok(());
    }
    let code = error::from_driver(r);
    let driver_name = cumock_abi::result_name(r).unwrap_or("an unknown result");
    Err(RtError::new(
        code,
        format!("the driver's {name} returned {driver_name}"),
    ))
}
