//! The functions the mock emulates, filed by the model's nouns: a file here is the C side
//! of the `model/` file of its name (`vmm.rs` of `model/vmm.rs`). An emulated function is
//! a method of its cuda.h group's trait of `cumock_abi` (`cuMemMap` of
//! `VirtualMemoryApi`, cuda.h's "Virtual Memory Management"); where a group is one noun,
//! its file implements the trait; where a group holds several (cuda.h's "Memory
//! Management" holds IPC, copies, host memory...), `methods_in_files!` below implements
//! it by a list that names, for each function, the file that writes it, as a `pub(super)`
//! free function of the declared signature. Each function converts and checks its
//! arguments and calls the model (`crate::model`); `grep -rn cuMemMap` finds the function
//! (and, for a listed group, the list naming its file) and, in `cases/`, the cases that
//! show its behaviour.
//!
//! | file | functions |
//! |---|---|
//! | `alloc.rs` | cuMemAlloc, cuMemFree, cuMemGetInfo, cuMemGetAddressRange |
//! | `copies.rs` | cuMemcpy, cuMemcpyHtoD/DtoH/DtoD, cuMemcpyPeer (and Async), cuMemsetD8/16/32 (and Async) |
//! | `copies2d.rs` | cuMemAllocPitch, cuMemcpy2D (Unaligned, Async), cuMemsetD2D8/16/32 (and Async) |
//! | `host_memory.rs` | cuMemHostAlloc, cuMemAllocHost, cuMemFreeHost, cuMemHostGetFlags, cuMemHostGetDevicePointer, cuMemHostRegister, cuMemHostUnregister |
//! | `ipc.rs` | cuIpcGetMemHandle, cuIpcOpenMemHandle, cuIpcCloseMemHandle, cuIpcGetEventHandle, cuIpcOpenEventHandle |
//! | `batches.rs` | cuMemcpyBatchAsync, cuMemcpy3DBatchAsync (12.8's and 13.0's), cuMemPrefetchBatchAsync, cuMemDiscardBatchAsync, cuMemDiscardAndPrefetchBatchAsync (unified.rs's methods call these), cuMemcpy3DPeer (and Async) |
//! | `managed.rs` | cuMemAllocManaged |
//! | `textures.rs` | CUDA arrays (cuArrayCreate..., cuMemcpyHtoA..., cuMemcpy3D), texture and surface objects |
//! | `exec.rs` | cuFuncGetName, cuFuncGetAttribute, cuFuncSetAttribute, cuFuncSetCacheConfig, cuFuncSetSharedMemConfig, cuLaunchHostFunc |
//! | `launch.rs` | cuLaunchKernel, cuLaunchCooperativeKernel, cuLaunchKernelEx |
//! | `devices.rs` | cuDevice*, and the PCI bus ids (cuDeviceGetPCIBusId, cuDeviceGetByPCIBusId) |
//! | `logs.rs` | cuLogs* (the error log, fed by every refused call) |
//! | the others | their group's trait, named in the file's first line |
//!
//! Every export of the real driver that is not a method here is not emulated: it returns
//! CUDA_ERROR_NOT_SUPPORTED and says so once. The groups the mock emulates
//! nothing of are listed at the end of this file, so that each group's trait is
//! implemented once (the exports below do not compile otherwise).
//!
//! To emulate a function:
//! 1. find its declaration in `abi/src/api.rs` (`unsafe fn cuModuleLoadData(module: *mut
//!    CUmodule, image: *const c_void) -> Self::Outcome`) and the trait it is in
//!    (`ModuleApi`; `EXPORTS` names it too);
//! 2. write the method in that trait's impl, in the file of that noun (a group with no
//!    file yet: move it from the list below to a new file), with that signature,
//!    returning `CuResult<()>` (parameter names may differ; the compiler checks the types
//!    against the declaration); for a group listed in `methods_in_files!`, write a
//!    `pub(super)` function of that name in the noun's file and add its name to the list;
//! 3. that is all: `boundary::export_all!` turns every method of the group traits into
//!    the C export of that name, with the panic guard, the trace, fault injection and the
//!    diagnostics, and cuGetProcAddress finds it. A function that delegates to another
//!    calls `Self::cuOther(..)` (in a listed group's file, the function `cuOther(..)`),
//!    in Rust, so the error keeps its message; never the C export.
//!
//! Variants with their base's parameters need no method: an older version
//! (`cuCtxDestroy`) runs the newest one of the same parameter types (`cuCtxDestroy_v2`),
//! a `_ptds`/`_ptsz` export its plain one on the calling thread's default stream (the
//! trait's defaults, which `FORWARD_OLDER_VERSIONS` and `FORWARD_PER_THREAD_VARIANTS`
//! switch on below). Write the variant only where it behaves otherwise.
#![allow(non_snake_case, clippy::missing_safety_doc)]

// First: its macros are in scope in the files below.
#[macro_use]
mod emulate;

mod alloc;
mod batches;
mod checkpoints;
mod contexts;
mod copies;
mod copies2d;
mod coredump;
mod devices;
mod entry_points;
mod error_handling;
mod events;
mod exec;
mod graphs;
mod green_contexts;
mod host_memory;
mod init;
mod ipc;
mod jit;
mod launch;
mod libraries;
pub(crate) mod logs;
mod malloc_async;
mod managed;
mod modules;
mod occupancy;
mod peer_access;
mod primary_context;
mod stream_memops;
mod streams;
mod tensor_maps;
mod textures;
mod unified;
mod version;
mod vmm;

use crate::boundary::{drv, export_all, Handle, Out, Room};
use crate::model::error::*;
use crate::model::images;
use crate::model::module::Image;
use cumock_abi::*;
use std::ffi::{c_void, CStr};

type CUdevicePtr = CUdeviceptr;

/// The mock driver: the methods of the group traits it writes are what it emulates.
pub struct Mock;

impl ApiOutcome for Mock {
    type Outcome = CuResult<()>;

    fn not_emulated(_name: &'static str) -> CuResult<()> {
        // `boundary::report` names the export the program called.
        Err(crate::boundary::not_emulated())
    }

    // A `_ptds`/`_ptsz` export the mock does not write runs as its plain export, on the
    // calling thread's per-thread default stream.
    const FORWARD_PER_THREAD_VARIANTS: bool = true;

    // An older export the mock does not write (`cuCtxDestroy`) runs as the newest one of
    // its base name with the same parameters (`cuCtxDestroy_v2`).
    const FORWARD_OLDER_VERSIONS: bool = true;

    fn per_thread_default_stream(call: impl FnOnce() -> CuResult<()>) -> CuResult<()> {
        let _order = per_thread_order()?;
        call()
    }

    fn per_thread_stream(stream: CUstream) -> CUstream {
        per_thread(stream)
    }
}

/// Implements each group's trait with no method: every function of the group is not
/// emulated.
macro_rules! not_emulated {
    ($($group:ident),* $(,)?) => {
        $(impl $group for Mock {})*
    };
}

// The groups the mock emulates nothing of, in cuda.h's order. A group's trait that is
// neither here nor implemented in a noun's file fails the build at `export_all!`.
not_emulated! {
    MulticastObjectApi,
    ExternalResourceInteroperabilityApi,
    GraphicsInteroperabilityApi,
    OpenGLInteroperabilityApi,
    EglInteroperabilityApi,
    VdpauInteroperabilityApi,
}

// cuda.h's "Execution Control" (`ExecutionControlApi`): functions' attributes and host
// functions, and kernel launches.
methods_in_files! {
    ExecutionControlApi {
        exec: cuFuncGetName, cuFuncGetAttribute, cuFuncSetAttribute, cuFuncSetCacheConfig,
            cuFuncGetModule, cuFuncGetParamInfo, cuFuncIsLoaded, cuFuncLoad,
            cuFuncSetSharedMemConfig, cuLaunchHostFunc;
        launch: cuLaunchKernel, cuLaunchCooperativeKernel, cuLaunchKernelEx,
            cuLaunchKernelEx_ptsz, cuFuncSetBlockShape, cuFuncSetSharedSize, cuParamSetSize,
            cuParamSeti, cuParamSetf, cuParamSetv, cuParamSetTexRef, cuLaunch, cuLaunchGrid,
            cuLaunchGridAsync;
    }
}

// cuda.h's "Memory Management" (`MemoryApi`): a method per function, calling the function
// of its name in its noun's file.
methods_in_files! {
    MemoryApi {
        alloc: cuMemGetInfo_v2, cuMemAlloc_v2, cuMemFree_v2, cuMemGetAddressRange_v2,
            cuMemGetHandleForAddressRange;
        copies: cuMemcpyHtoD_v2, cuMemcpyDtoH_v2, cuMemcpyDtoD_v2, cuMemcpy,
            cuMemcpyHtoDAsync_v2, cuMemcpyDtoHAsync_v2, cuMemcpyDtoDAsync_v2, cuMemcpyAsync,
            cuMemcpyPeer, cuMemcpyPeerAsync,
            cuMemsetD8_v2, cuMemsetD16_v2, cuMemsetD32_v2,
            cuMemsetD8Async, cuMemsetD16Async, cuMemsetD32Async;
        copies2d: cuMemAllocPitch_v2, cuMemcpy2D_v2, cuMemcpy2DUnaligned_v2, cuMemcpy2DAsync_v2,
            cuMemsetD2D8_v2, cuMemsetD2D16_v2, cuMemsetD2D32_v2,
            cuMemsetD2D8Async, cuMemsetD2D16Async, cuMemsetD2D32Async;
        devices: cuDeviceGetPCIBusId, cuDeviceGetByPCIBusId, cuDeviceRegisterAsyncNotification,
            cuDeviceUnregisterAsyncNotification;
        host_memory: cuMemHostAlloc, cuMemAllocHost_v2, cuMemFreeHost, cuMemHostGetFlags,
            cuMemHostGetDevicePointer_v2, cuMemHostRegister, cuMemHostRegister_v2,
            cuMemHostUnregister;
        ipc: cuIpcGetMemHandle, cuIpcOpenMemHandle_v2, cuIpcCloseMemHandle,
            cuIpcGetEventHandle, cuIpcOpenEventHandle;
        managed: cuMemAllocManaged;
        textures: cuArrayCreate_v2, cuArray3DCreate_v2, cuArrayGetDescriptor_v2,
            cuArray3DGetDescriptor_v2, cuArrayDestroy,
            cuMipmappedArrayCreate, cuMipmappedArrayGetLevel, cuMipmappedArrayDestroy,
            cuArrayGetMemoryRequirements, cuMipmappedArrayGetMemoryRequirements,
            cuArrayGetSparseProperties, cuMipmappedArrayGetSparseProperties, cuArrayGetPlane,
            cuMemcpyHtoA_v2, cuMemcpyHtoAAsync_v2, cuMemcpyAtoH_v2, cuMemcpyAtoHAsync_v2,
            cuMemcpyDtoA_v2, cuMemcpyAtoD_v2, cuMemcpyAtoA_v2,
            cuMemcpy3D_v2, cuMemcpy3DAsync_v2;
        batches: cuMemcpyBatchAsync, cuMemcpyBatchAsync_v2, cuMemcpy3DBatchAsync,
            cuMemcpy3DBatchAsync_v2, cuMemcpy3DPeer, cuMemcpy3DPeerAsync;
    }
}

/// cuProfilerStart and cuProfilerStop: no profiler is ever attached to the mock, and the
/// calls only bracket what a profiler attached to the process would collect, so they do
/// nothing but check for a current context, as the H200 answers with no profiler
/// attached (probe kernels, profiler: CUDA_SUCCESS, or CUDA_ERROR_INVALID_CONTEXT
/// without a context).
impl ProfilerControlApi for Mock {
    unsafe fn cuProfilerStart() -> CuResult<()> {
        crate::boundary::drv()?.ctx_device(None).map(|_| ())
    }

    unsafe fn cuProfilerStop() -> CuResult<()> {
        crate::boundary::drv()?.ctx_device(None).map(|_| ())
    }
}

// ---------------------------------------------------------------- shared by several nouns

/// Reads a module image from the program's memory (a bare pointer, no length) without
/// trusting it: `model::images` reads it through the kernel, bounded by its declared
/// sizes and a cap, so a bad image is CUDA_ERROR_INVALID_IMAGE, never a fault.
fn image_bytes(image: *const c_void) -> CuResult<Image> {
    if image.is_null() {
        return Err(invalid("image is NULL"));
    }
    images::image_at(&images::OwnProcess, image as u64)
}

/// Reads a module image from a file (cuModuleLoad, cuLibraryLoadFromFile).
fn read_image_file(fname: &CStr) -> CuResult<Image> {
    images::image_file(&fname.to_string_lossy())
}

/// The access descriptors of cuMemSetAccess and cuMemPoolSetAccess as the model's grants
/// (location type, location id, flags), no more than there can be devices.
fn access_grants(descs: &[CUmemAccessDesc]) -> CuResult<Vec<(i32, i32, i32)>> {
    if descs.len() > 4096 {
        return Err(invalid(format!(
            "count {} is more descriptors than there can be devices",
            descs.len()
        )));
    }
    Ok(descs
        .iter()
        .map(|x| (x.location.type_, x.location.id, x.flags))
        .collect())
}

/// Writes a model's handles into a program's array (cuModuleEnumerateFunctions,
/// cuLibraryEnumerateKernels): as cuda.h says, at most its room; the entries past the
/// handles are left alone. NULL with room is CUDA_ERROR_INVALID_VALUE.
fn write_handles<T: crate::boundary::Handle<Key: Copy>>(
    room: Room<T>,
    keys: &[T::Key],
) -> CuResult<()> {
    for (slot, &k) in room.within()?.iter_mut().zip(keys) {
        *slot = T::of(k);
    }
    Ok(())
}

/// cuDeviceGetHostAtomicCapabilities and cuDeviceGetP2PAtomicCapabilities: each
/// operation's CUatomicOperationCapability bits, by `capability`. cuda.h: NULL arrays, a
/// count of 0 or an operation that is not a CUatomicOperation (0 to FLOAT_MAX 12) are
/// CUDA_ERROR_INVALID_VALUE.
fn write_atomic_capabilities(
    capabilities: Room<std::ffi::c_uint>,
    operations: &[CUatomicOperation],
    capability: impl Fn(CUatomicOperation) -> std::ffi::c_uint,
) -> CuResult<()> {
    let capabilities = capabilities.nonempty()?;
    if let Some(op) = operations.iter().find(|&&op| !(0..=12).contains(&op)) {
        return Err(invalid(format!("{op} is not a CUatomicOperation")));
    }
    for (slot, &op) in capabilities.iter_mut().zip(operations) {
        *slot = capability(op);
    }
    Ok(())
}

/// Writes a pair of out-parameters, each skipped if NULL: the values on success; on a
/// failure for which `zeroes` holds, zeros, as the H200 does (cuMemGetInfo,
/// cuMemGetAddressRange, cuModuleGetGlobal: probe out-params-on-failure).
fn out_pair<A: ZeroValue, B: ZeroValue>(
    a: Option<Out<A>>,
    b: Option<Out<B>>,
    r: CuResult<(A, B)>,
    zeroes: impl FnOnce(&CuError) -> bool,
) -> CuResult<()> {
    let (va, vb, result) = match r {
        Ok((va, vb)) => (va, vb, Ok(())),
        Err(e) => {
            if !zeroes(&e) {
                return Err(e);
            }
            (A::ZERO, B::ZERO, Err(e))
        }
    };
    if let Some(a) = a {
        a.write(va)?;
    }
    if let Some(b) = b {
        b.write(vb)?;
    }
    result
}

/// What a failed call writes to an out-parameter of this type.
trait ZeroValue {
    const ZERO: Self;
}
impl ZeroValue for u64 {
    const ZERO: Self = 0;
}
impl ZeroValue for usize {
    const ZERO: Self = 0;
}

thread_local! {
    /// Set while an async copy or memset, ordered on its own stream, runs the synchronous
    /// export's body: that body must not also order itself on the legacy stream, which
    /// would wait for work the async operation's stream need not follow (a non-blocking
    /// stream never waits for a blocking stream's kernel).
    static IN_STREAM_ORDER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// While it lives, the calling thread's copy or memset is in a stream's order already.
#[must_use = "the order lasts while the value lives"]
struct StreamOrder(bool);

impl Drop for StreamOrder {
    fn drop(&mut self) {
        IN_STREAM_ORDER.set(self.0);
    }
}

/// Checks a stream argument of an async copy or memset, and waits for the work the
/// operation must follow (model/stream_queues.rs): its bytes then move now, in order.
fn stream(s: CUstream) -> CuResult<StreamOrder> {
    check_stream(s)?;
    if drv()?.capture_of(s.key())?.is_some() {
        return Err(not_supported(
            "cumock does not capture this operation into a graph (it captures kernels, \
             host functions, events, one-dimensional async copies and memsets)",
        ));
    }
    drv()?.follow_stream(s.key())?;
    Ok(StreamOrder(IN_STREAM_ORDER.replace(true)))
}

/// cuda.h's CU_STREAM_PER_THREAD.
const PER_THREAD: CUstream = 0x2 as CUstream;

/// The stream of a `_ptsz` export (what nvcc's `--default-stream per-thread` calls): there,
/// NULL is the calling thread's own default stream, not the legacy one.
fn per_thread(s: CUstream) -> CUstream {
    if s.is_null() {
        PER_THREAD
    } else {
        s
    }
}

/// A `_ptds` export's synchronous copy or memset is issued on the calling thread's
/// default stream: it follows that stream's work (and, as that stream is a blocking one,
/// the legacy stream's), not the other threads'.
fn per_thread_order() -> CuResult<StreamOrder> {
    stream(PER_THREAD)
}

/// A synchronous copy or memset is issued on the legacy default stream: it follows that
/// stream's work and the blocking streams' (unless an async export ordered it already).
fn legacy_order() -> CuResult<()> {
    if IN_STREAM_ORDER.get() {
        return Ok(());
    }
    let d = drv()?;
    d.capture_check_unsafe("a synchronous copy or memset")?;
    d.capture_check_legacy(crate::model::ids::StreamId::NULL)?;
    d.follow_stream(crate::model::ids::StreamId::NULL)
}

/// Runs a copy's or memset's body as in a stream's order already (a graph's node, run by
/// the stream's worker: it must not wait for the legacy stream).
fn in_stream_order<R>(body: impl FnOnce() -> R) -> R {
    let _order = StreamOrder(IN_STREAM_ORDER.replace(true));
    body()
}

/// An async copy or memset: on a capturing stream a graph node running `body`, else run
/// now in the stream's order.
fn async_op(
    s: CUstream,
    what: impl FnOnce() -> graphs::Captured,
    body: impl Fn() -> CuResult<()> + Send + Sync + 'static,
) -> CuResult<()> {
    check_stream(s)?;
    if drv()?.capture_of(s.key())?.is_some() {
        return graphs::capture_op(s, what(), body);
    }
    // On the legacy stream it would follow a blocking stream being captured.
    drv()?.capture_check_legacy(s.key())?;
    let _order = stream(s)?;
    body()
}

/// Whether `s` is capturing into a graph (its work becomes nodes instead of running).
fn capturing(s: CUstream) -> CuResult<bool> {
    Ok(drv()?.capture_of(s.key())?.is_some())
}

/// Checks a stream argument.
fn check_stream(s: CUstream) -> CuResult<()> {
    drv()?.stream_check(s.key())
}

// The C exports: all 707 of the real driver, each calling `Mock`'s method of its name
// (the not-emulated default where there is none here). Nothing is listed by hand: the
// list is the declaration in `cumock_abi`, generated from NVIDIA's headers.
cumock_abi::for_each_export!(export_all);
