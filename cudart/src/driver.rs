//! The driver under the runtime: `libcuda.so.1` opened at first use (whatever the loader
//! finds: NVIDIA's driver, or cumock's mock first in the library path) and every entry
//! point taken from `cuGetProcAddress_v2`, by base name and CUDA version, as NVIDIA's
//! runtime does. The private `cuGetExportTable` tables are never asked for.

use crate::error::{self, RtError, RtResult};
use cumock_abi::CUresult;
use std::ffi::{c_char, c_void, CString};
use std::sync::OnceLock;

/// The CUDA version this runtime is written against (cuda_runtime_api.h's CUDART_VERSION),
/// which is also the version it asks the driver's entry points for.
pub const CUDART_VERSION: i32 = 13000;
// The declaration's signatures are those of this version.
const _: () = assert!(CUDART_VERSION as u32 == cumock_abi::CUDA_VERSION);

/// Declares the driver functions the runtime uses, by the base name cuGetProcAddress
/// takes. Their signatures are the declaration's (`cumock_abi::entry_point!`: the export
/// cuGetProcAddress gives at CUDA 13.0, typed as cudaTypedefs.h types it), never written
/// here. `safe` ones are called with values and references to the runtime's own data
/// (each outer pointer parameter becomes a reference, the same ABI); `unsafe` ones take
/// the declared pointers, and their callers say why those are valid.
macro_rules! driver_functions {
    ($($kind:ident $name:ident,)*) => {
        /// A typed pointer per function, None where the driver lacks it.
        #[allow(non_snake_case)]
        struct Table {
            $($name: Option<cumock_abi::entry_point!($name, pfn)>,)*
        }

        impl Table {
            fn resolve(get: impl Fn(&str) -> Option<*mut c_void>) -> Self {
                Self {
                    $($name: get(stringify!($name)).map(|p| {
                        // Safety: cuGetProcAddress gave this pointer for this name at
                        // CUDART_VERSION, whose signature the declaration gives.
                        unsafe { std::mem::transmute::<*mut c_void, cumock_abi::entry_point!($name, pfn)>(p) }
                    }),)*
                }
            }
        }

        #[allow(non_snake_case, clippy::too_many_arguments)]
        impl Driver {
            $(driver_functions!(@method $kind $name);)*
        }
    };
    (@method safe $name:ident) => { cumock_abi::entry_point!($name, safe_method); };
    (@method unsafe $name:ident) => { cumock_abi::entry_point!($name, unsafe_method); };
}

/// The pointer type of an entry point, from its declaration.
macro_rules! pfn {
    ($base:ident = $symbol:ident($($arg:ident: $ty:ty | $borrowed:ty),*)) => {
        unsafe extern "C" fn($($ty),*) -> CUresult
    };
}

/// cuGetProcAddress itself, taken from the library by its symbol (`cuGetProcAddress_v2`).
type GetProcAddress = cumock_abi::entry_point!(cuGetProcAddress, pfn);

/// A method that calls an entry point with values and references.
macro_rules! safe_method {
    ($base:ident = $symbol:ident($($arg:ident: $ty:ty | $borrowed:ty),*)) => {
        pub fn $base(&self, $($arg: $borrowed),*) -> RtResult<()> {
            let f = self.table.$base.ok_or_else(|| missing(stringify!($base)))?;
            // Safety: the arguments are values, or references to live data of the
            // declared type, which is all cuda.h asks of them.
            check(stringify!($base), unsafe { f($($arg),*) })
        }
    };
}

/// A method that calls an entry point with the declared pointers.
macro_rules! unsafe_method {
    ($base:ident = $symbol:ident($($arg:ident: $ty:ty | $borrowed:ty),*)) => {
        /// # Safety
        /// The pointer arguments are valid for what cuda.h says the driver does with them.
        pub unsafe fn $base(&self, $($arg: $ty),*) -> RtResult<()> {
            let f = self.table.$base.ok_or_else(|| missing(stringify!($base)))?;
            // Safety: the caller's contract.
            check(stringify!($base), unsafe { f($($arg),*) })
        }
    };
}

driver_functions! {
    safe cuInit,
    safe cuDriverGetVersion,
    safe cuGetErrorString,
    safe cuDeviceGetCount,
    unsafe cuDeviceGetName,
    safe cuDeviceGetAttribute,
    safe cuDeviceTotalMem,
    safe cuDeviceGetUuid,
    unsafe cuDeviceGetPCIBusId,
    safe cuDeviceCanAccessPeer,
    safe cuDeviceGetP2PAttribute,
    safe cuDevicePrimaryCtxRetain,
    safe cuDevicePrimaryCtxRelease,
    safe cuDevicePrimaryCtxReset,
    safe cuDevicePrimaryCtxGetState,
    safe cuDevicePrimaryCtxSetFlags,
    safe cuCtxGetCurrent,
    safe cuCtxSetCurrent,
    safe cuCtxGetDevice,
    safe cuCtxSynchronize,
    safe cuCtxEnablePeerAccess,
    safe cuCtxDisablePeerAccess,
    safe cuCtxGetStreamPriorityRange,
    safe cuCtxGetLimit,
    safe cuCtxSetLimit,
    safe cuMemGetInfo,
    safe cuMemAlloc,
    safe cuMemFree,
    safe cuMemHostAlloc,
    unsafe cuMemFreeHost,
    unsafe cuMemHostGetFlags,
    unsafe cuMemHostRegister,
    unsafe cuMemHostUnregister,
    unsafe cuMemHostGetDevicePointer,
    safe cuMemAllocManaged,
    safe cuMemAdvise,
    safe cuMemPrefetchAsync,
    unsafe cuMemRangeGetAttribute,
    safe cuStreamAttachMemAsync,
    unsafe cuMemcpy,
    unsafe cuMemcpyHtoD,
    unsafe cuMemcpyDtoH,
    unsafe cuMemcpyDtoD,
    unsafe cuMemcpyAsync,
    unsafe cuMemcpyHtoDAsync,
    unsafe cuMemcpyDtoHAsync,
    unsafe cuMemcpyDtoDAsync,
    unsafe cuMemcpyPeer,
    unsafe cuMemcpyBatchAsync,
    unsafe cuMemcpy3DBatchAsync,
    unsafe cuMemPrefetchBatchAsync,
    unsafe cuMemDiscardBatchAsync,
    unsafe cuMemDiscardAndPrefetchBatchAsync,
    unsafe cuMemcpyPeerAsync,
    unsafe cuMemsetD8,
    unsafe cuMemsetD8Async,
    unsafe cuPointerGetAttribute,
    safe cuStreamCreate,
    safe cuStreamCreateWithPriority,
    safe cuStreamDestroy,
    safe cuStreamSynchronize,
    safe cuStreamQuery,
    safe cuStreamWaitEvent,
    safe cuStreamGetPriority,
    safe cuStreamGetFlags,
    safe cuStreamIsCapturing,
    unsafe cuStreamGetCaptureInfo,
    unsafe cuLaunchHostFunc,
    unsafe cuStreamAddCallback,
    safe cuStreamGetId,
    unsafe cuStreamGetAttribute,
    unsafe cuStreamSetAttribute,
    safe cuStreamCopyAttributes,
    safe cuMemAllocPitch,
    safe cuIpcGetEventHandle,
    safe cuIpcOpenEventHandle,
    unsafe cuDeviceGetByPCIBusId,
    safe cuCtxGetCacheConfig,
    safe cuCtxSetCacheConfig,
    safe cuFuncSetCacheConfig,
    unsafe cuFuncGetParamInfo,
    safe cuOccupancyAvailableDynamicSMemPerBlock,
    safe cuCtxGetSharedMemConfig,
    safe cuCtxSetSharedMemConfig,
    safe cuFuncSetSharedMemConfig,
    unsafe cuMemRangeGetAttributes,
    unsafe cuDeviceGetHostAtomicCapabilities,
    unsafe cuLaunchCooperativeKernel,
    unsafe cuLaunchKernelEx,
    safe cuProfilerStart,
    safe cuProfilerStop,
    safe cuThreadExchangeStreamCaptureMode,
    safe cuEventRecordWithFlags,
    safe cuEventCreate,
    safe cuEventRecord,
    safe cuEventSynchronize,
    safe cuEventQuery,
    safe cuEventDestroy,
    safe cuEventElapsedTime,
    safe cuArray3DCreate,
    safe cuArray3DGetDescriptor,
    safe cuArrayDestroy,
    safe cuMipmappedArrayCreate,
    safe cuMipmappedArrayGetLevel,
    safe cuMipmappedArrayDestroy,
    unsafe cuMemcpy2D,
    unsafe cuMemcpy2DAsync,
    unsafe cuMemcpy3D,
    unsafe cuMemcpy3DAsync,
    unsafe cuTexObjectCreate,
    safe cuTexObjectDestroy,
    unsafe cuTexObjectGetResourceViewDesc,
    safe cuSurfObjectCreate,
    safe cuSurfObjectDestroy,
    safe cuMemAddressReserve,
    safe cuMemAddressFree,
    safe cuMemCreate,
    safe cuMemRelease,
    safe cuMemMap,
    safe cuMemUnmap,
    safe cuMemSetAccess,
    safe cuMemGetAllocationGranularity,
    unsafe cuMemExportToShareableHandle,
    unsafe cuMemImportFromShareableHandle,
    safe cuIpcGetMemHandle,
    safe cuIpcOpenMemHandle,
    safe cuIpcCloseMemHandle,
    safe cuDeviceGetDefaultMemPool,
    safe cuDeviceGetMemPool,
    safe cuDeviceSetMemPool,
    safe cuMemAllocAsync,
    safe cuMemFreeAsync,
    unsafe cuMemPoolCreate,
    safe cuMemPoolDestroy,
    unsafe cuMemPoolSetAttribute,
    unsafe cuMemPoolGetAttribute,
    safe cuMemPoolTrimTo,
    unsafe cuMemPoolSetAccess,
    unsafe cuMemPoolGetAccess,
    unsafe cuMemPoolExportToShareableHandle,
    unsafe cuMemPoolImportFromShareableHandle,
    unsafe cuMemPoolExportPointer,
    unsafe cuMemPoolImportPointer,
    safe cuMemAllocFromPoolAsync,
    unsafe cuModuleLoadData,
    unsafe cuModuleLoadDataEx,
    unsafe cuLinkCreate,
    unsafe cuLinkAddData,
    unsafe cuLinkComplete,
    safe cuLinkDestroy,
    safe cuCtxResetPersistingL2Cache,
    safe cuModuleUnload,
    unsafe cuModuleGetFunction,
    unsafe cuModuleGetGlobal,
    unsafe cuLaunchKernel,
    safe cuFuncGetAttribute,
    safe cuFuncGetName,
    safe cuFuncSetAttribute,
    safe cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags,
    unsafe cuOccupancyMaxActiveClusters,
    unsafe cuOccupancyMaxPotentialClusterSize,
    safe cuStreamBeginCapture,
    unsafe cuStreamBeginCaptureToGraph,
    unsafe cuStreamEndCapture,
    safe cuGraphCreate,
    safe cuGraphDestroy,
    unsafe cuGraphAddKernelNode,
    unsafe cuGraphAddMemcpyNode,
    unsafe cuGraphAddMemsetNode,
    unsafe cuGraphAddHostNode,
    unsafe cuGraphAddEmptyNode,
    unsafe cuGraphAddDependencies,
    unsafe cuGraphGetNodes,
    unsafe cuGraphGetRootNodes,
    unsafe cuGraphGetEdges,
    safe cuGraphNodeGetType,
    safe cuGraphClone,
    safe cuGraphInstantiateWithFlags,
    safe cuGraphLaunch,
    safe cuGraphExecDestroy,
    unsafe cuGraphKernelNodeSetParams,
    unsafe cuGraphExecKernelNodeSetParams,
    unsafe cuGraphExecUpdate,
    unsafe cuGraphDebugDotPrint,
    unsafe cuGraphAddMemAllocNode,
    unsafe cuGraphAddMemFreeNode,
    unsafe cuGraphMemAllocNodeGetParams,
    safe cuGraphMemFreeNodeGetParams,
    safe cuDeviceGraphMemTrim,
    unsafe cuDeviceGetGraphMemAttribute,
    unsafe cuDeviceSetGraphMemAttribute,
    unsafe cuGraphConditionalHandleCreate,
    unsafe cuGraphAddNode,
    unsafe cuGraphNodeSetParams,
    unsafe cuGraphExecNodeSetParams,
    unsafe cuGraphAddChildGraphNode,
    unsafe cuGraphAddEventRecordNode,
    unsafe cuGraphAddEventWaitNode,
    safe cuGraphEventRecordNodeGetEvent,
    safe cuGraphEventWaitNodeGetEvent,
    safe cuGraphEventRecordNodeSetEvent,
    safe cuGraphEventWaitNodeSetEvent,
    safe cuGraphExecEventRecordNodeSetEvent,
    safe cuGraphExecEventWaitNodeSetEvent,
    safe cuGraphExecChildGraphNodeSetParams,
    unsafe cuGraphMemcpyNodeSetParams,
    unsafe cuGraphMemcpyNodeGetParams,
    unsafe cuGraphKernelNodeGetAttribute,
    unsafe cuGraphKernelNodeSetAttribute,
    safe cuGraphKernelNodeCopyAttributes,
    unsafe cuGraphMemsetNodeSetParams,
    unsafe cuGraphHostNodeSetParams,
    unsafe cuGraphExecMemcpyNodeSetParams,
    unsafe cuGraphExecMemsetNodeSetParams,
    unsafe cuGraphExecHostNodeSetParams,
    safe cuGraphNodeSetEnabled,
    safe cuGraphNodeGetEnabled,
    unsafe cuGraphNodeGetDependencies,
    unsafe cuGraphNodeGetDependentNodes,
    unsafe cuGraphInstantiateWithParams,
    unsafe cuUserObjectCreate,
    safe cuUserObjectRetain,
    safe cuUserObjectRelease,
    safe cuGraphRetainUserObject,
    safe cuGraphReleaseUserObject,
    unsafe cuStreamUpdateCaptureDependencies,
    unsafe cuGraphHostNodeGetParams,
    unsafe cuGraphMemsetNodeGetParams,
    safe cuGraphChildGraphNodeGetGraph,
    unsafe cuGraphKernelNodeGetParams,
    safe cuGraphUpload,
    safe cuGraphExecGetFlags,
    safe cuGraphNodeFindInClone,
    safe cuGraphDestroyNode,
    unsafe cuGraphRemoveDependencies,
    safe cuMemcpyAtoA,
    unsafe cuMemsetD2D8,
    unsafe cuMemsetD2D8Async,
    safe cuTexObjectGetResourceDesc,
    safe cuTexObjectGetTextureDesc,
    safe cuSurfObjectGetResourceDesc,
    safe cuDeviceGetTexture1DLinearMaxWidth,
    unsafe cuArrayGetMemoryRequirements,
    unsafe cuMipmappedArrayGetMemoryRequirements,
    safe cuArrayGetPlane,
    unsafe cuArrayGetSparseProperties,
    unsafe cuMipmappedArrayGetSparseProperties,
    safe cuFlushGPUDirectRDMAWrites,
    unsafe cuDeviceRegisterAsyncNotification,
    safe cuDeviceUnregisterAsyncNotification,
    safe cuLogsCurrent,
    unsafe cuLogsDumpToFile,
    unsafe cuLogsDumpToMemory,
    unsafe cuLogsRegisterCallback,
    safe cuLogsUnregisterCallback,
    unsafe cuLibraryLoadData,
    unsafe cuLibraryLoadFromFile,
    safe cuLibraryUnload,
    unsafe cuLibraryGetKernel,
    safe cuLibraryGetKernelCount,
    unsafe cuLibraryEnumerateKernels,
    unsafe cuLibraryGetGlobal,
    unsafe cuLibraryGetManaged,
    unsafe cuLibraryGetUnifiedFunction,
    safe cuLibraryGetModule,
    safe cuKernelGetFunction,
    safe cuKernelSetAttribute,
    unsafe cuMemGetDefaultMemPool,
    unsafe cuMemGetMemPool,
    unsafe cuMemSetMemPool,
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
