//! The ABI checked against NVIDIA's cuda.h (CUDA 13.0, from the registry package): a C
//! file compiled against the header prints sizes, offsets, enum values and the size and
//! kind of every parameter of every export the declaration (`cumock_abi::EXPORTS`) takes
//! from cudaTypedefs.h, and the Rust side compares. Emulated functions are methods of the
//! group traits (`cumock_abi::VirtualMemoryApi`...), so the compiler holds each to its
//! declaration.

mod common;

use cumock_abi::*;
use std::fmt::Write as _;
use std::mem::{offset_of, size_of};

/// (C expression, what the Rust side says it is).
fn layout_checks() -> Vec<(String, i64)> {
    let mut v: Vec<(String, i64)> = vec![
        (
            "sizeof(CUmemAllocationProp)".into(),
            size_of::<CUmemAllocationProp>() as i64,
        ),
        (
            "sizeof(CUmemLocation)".into(),
            size_of::<CUmemLocation>() as i64,
        ),
        (
            "sizeof(CUmemAccessDesc)".into(),
            size_of::<CUmemAccessDesc>() as i64,
        ),
        ("sizeof(CUuuid)".into(), size_of::<CUuuid>() as i64),
        // Passed by value: the declaration's shims and forwarders need their real size.
        (
            "sizeof(CUipcMemHandle)".into(),
            size_of::<CUipcMemHandle>() as i64,
        ),
        (
            "sizeof(CUipcEventHandle)".into(),
            size_of::<CUipcEventHandle>() as i64,
        ),
        ("sizeof(CUeglFrame)".into(), size_of::<CUeglFrame>() as i64),
        (
            "offsetof(CUeglFrame, width)".into(),
            offset_of!(CUeglFrame, width) as i64,
        ),
        (
            "offsetof(CUeglFrame, numChannels)".into(),
            offset_of!(CUeglFrame, num_channels) as i64,
        ),
        (
            "offsetof(CUeglFrame, cuFormat)".into(),
            offset_of!(CUeglFrame, cu_format) as i64,
        ),
        (
            "sizeof(CUdevResource)".into(),
            size_of::<CUdevResource>() as i64,
        ),
        (
            "offsetof(CUdevResource, sm)".into(),
            offset_of!(CUdevResource, sm) as i64,
        ),
        (
            "offsetof(CUdevResource, sm.minSmPartitionSize)".into(),
            (offset_of!(CUdevResource, sm) + offset_of!(CUdevSmResource, min_sm_partition_size))
                as i64,
        ),
        (
            "offsetof(CUdevResource, sm.smCoscheduledAlignment)".into(),
            (offset_of!(CUdevResource, sm) + offset_of!(CUdevSmResource, sm_coscheduled_alignment))
                as i64,
        ),
        (
            "sizeof(CUctxCreateParams)".into(),
            size_of::<CUctxCreateParams>() as i64,
        ),
        (
            "sizeof(CUdeviceptr)".into(),
            size_of::<CUdeviceptr>() as i64,
        ),
        (
            "sizeof(CUmemGenericAllocationHandle)".into(),
            size_of::<CUmemGenericAllocationHandle>() as i64,
        ),
        ("sizeof(CUresult)".into(), size_of::<CUresult>() as i64),
        ("sizeof(CUdevice)".into(), size_of::<CUdevice>() as i64),
        (
            "offsetof(CUmemAllocationProp, type)".into(),
            offset_of!(CUmemAllocationProp, type_) as i64,
        ),
        (
            "offsetof(CUmemAllocationProp, requestedHandleTypes)".into(),
            offset_of!(CUmemAllocationProp, requested_handle_types) as i64,
        ),
        (
            "offsetof(CUmemAllocationProp, location)".into(),
            offset_of!(CUmemAllocationProp, location) as i64,
        ),
        (
            "offsetof(CUmemAllocationProp, win32HandleMetaData)".into(),
            offset_of!(CUmemAllocationProp, win32_handle_meta_data) as i64,
        ),
        (
            "offsetof(CUmemAllocationProp, allocFlags)".into(),
            offset_of!(CUmemAllocationProp, alloc_flags) as i64,
        ),
        (
            "offsetof(CUmemAllocationProp, allocFlags.compressionType)".into(),
            (offset_of!(CUmemAllocationProp, alloc_flags)
                + offset_of!(CUmemAllocFlags, compression_type)) as i64,
        ),
        (
            "offsetof(CUmemAllocationProp, allocFlags.gpuDirectRDMACapable)".into(),
            (offset_of!(CUmemAllocationProp, alloc_flags)
                + offset_of!(CUmemAllocFlags, gpu_direct_rdma_capable)) as i64,
        ),
        (
            "offsetof(CUmemAllocationProp, allocFlags.usage)".into(),
            (offset_of!(CUmemAllocationProp, alloc_flags) + offset_of!(CUmemAllocFlags, usage))
                as i64,
        ),
        (
            "offsetof(CUmemLocation, id)".into(),
            offset_of!(CUmemLocation, id) as i64,
        ),
        (
            "offsetof(CUmemAccessDesc, flags)".into(),
            offset_of!(CUmemAccessDesc, flags) as i64,
        ),
        (
            "sizeof(CUmemPoolProps)".into(),
            size_of::<CUmemPoolProps>() as i64,
        ),
        (
            "offsetof(CUmemPoolProps, location)".into(),
            offset_of!(CUmemPoolProps, location) as i64,
        ),
        (
            "offsetof(CUmemPoolProps, win32SecurityAttributes)".into(),
            offset_of!(CUmemPoolProps, win32_security_attributes) as i64,
        ),
        (
            "offsetof(CUmemPoolProps, maxSize)".into(),
            offset_of!(CUmemPoolProps, max_size) as i64,
        ),
        (
            "offsetof(CUmemPoolProps, usage)".into(),
            offset_of!(CUmemPoolProps, usage) as i64,
        ),
        (
            "offsetof(CUmemPoolProps, reserved)".into(),
            offset_of!(CUmemPoolProps, reserved) as i64,
        ),
        (
            "offsetof(CUctxCreateParams, numExecAffinityParams)".into(),
            offset_of!(CUctxCreateParams, num_exec_affinity_params) as i64,
        ),
        (
            "offsetof(CUctxCreateParams, cigParams)".into(),
            offset_of!(CUctxCreateParams, cig_params) as i64,
        ),
        (
            "sizeof(CUDA_ARRAY_DESCRIPTOR)".into(),
            (size_of::<CUDA_ARRAY_DESCRIPTOR>()) as i64,
        ),
        (
            "offsetof(CUDA_ARRAY_DESCRIPTOR, NumChannels)".into(),
            (offset_of!(CUDA_ARRAY_DESCRIPTOR, num_channels)) as i64,
        ),
        (
            "sizeof(CUDA_ARRAY3D_DESCRIPTOR)".into(),
            (size_of::<CUDA_ARRAY3D_DESCRIPTOR>()) as i64,
        ),
        (
            "offsetof(CUDA_ARRAY3D_DESCRIPTOR, Flags)".into(),
            (offset_of!(CUDA_ARRAY3D_DESCRIPTOR, flags)) as i64,
        ),
        (
            "sizeof(CUgraphEdgeData)".into(),
            (size_of::<CUgraphEdgeData>()) as i64,
        ),
        (
            "offsetof(CUgraphEdgeData, type)".into(),
            (offset_of!(CUgraphEdgeData, type_)) as i64,
        ),
        (
            "offsetof(CUgraphEdgeData, reserved)".into(),
            (offset_of!(CUgraphEdgeData, reserved)) as i64,
        ),
        (
            "sizeof(CUDA_MEMCPY3D)".into(),
            (size_of::<CUDA_MEMCPY3D>()) as i64,
        ),
        (
            "offsetof(CUDA_MEMCPY3D, srcArray)".into(),
            (offset_of!(CUDA_MEMCPY3D, src_array)) as i64,
        ),
        (
            "offsetof(CUDA_MEMCPY3D, srcHeight)".into(),
            (offset_of!(CUDA_MEMCPY3D, src_height)) as i64,
        ),
        (
            "offsetof(CUDA_MEMCPY3D, dstMemoryType)".into(),
            (offset_of!(CUDA_MEMCPY3D, dst_memory_type)) as i64,
        ),
        (
            "offsetof(CUDA_MEMCPY3D, dstHeight)".into(),
            (offset_of!(CUDA_MEMCPY3D, dst_height)) as i64,
        ),
        (
            "offsetof(CUDA_MEMCPY3D, Depth)".into(),
            (offset_of!(CUDA_MEMCPY3D, depth)) as i64,
        ),
        (
            "sizeof(CUDA_MEMCPY3D_PEER)".into(),
            (size_of::<CUDA_MEMCPY3D_PEER>()) as i64,
        ),
        (
            "offsetof(CUDA_MEMCPY3D_PEER, srcContext)".into(),
            (offset_of!(CUDA_MEMCPY3D_PEER, src_context)) as i64,
        ),
        (
            "offsetof(CUDA_MEMCPY3D_PEER, dstContext)".into(),
            (offset_of!(CUDA_MEMCPY3D_PEER, dst_context)) as i64,
        ),
        (
            "offsetof(CUDA_MEMCPY3D_PEER, Depth)".into(),
            (offset_of!(CUDA_MEMCPY3D_PEER, depth)) as i64,
        ),
        (
            "sizeof(CUmemcpyAttributes)".into(),
            (size_of::<CUmemcpyAttributes>()) as i64,
        ),
        (
            "offsetof(CUmemcpyAttributes, dstLocHint)".into(),
            (offset_of!(CUmemcpyAttributes, dst_loc_hint)) as i64,
        ),
        (
            "offsetof(CUmemcpyAttributes, flags)".into(),
            (offset_of!(CUmemcpyAttributes, flags)) as i64,
        ),
        (
            "sizeof(CUmemcpy3DOperand)".into(),
            (size_of::<CUmemcpy3DOperand>()) as i64,
        ),
        (
            "offsetof(CUmemcpy3DOperand, op.ptr.rowLength)".into(),
            (offset_of!(CUmemcpy3DOperand, op) + 8) as i64,
        ),
        (
            "offsetof(CUmemcpy3DOperand, op.ptr.locHint)".into(),
            (offset_of!(CUmemcpy3DOperand, op) + 24) as i64,
        ),
        (
            "offsetof(CUmemcpy3DOperand, op.array.offset.z)".into(),
            (offset_of!(CUmemcpy3DOperand, op) + 24) as i64,
        ),
        (
            "sizeof(CUDA_MEMCPY3D_BATCH_OP)".into(),
            (size_of::<CUDA_MEMCPY3D_BATCH_OP>()) as i64,
        ),
        (
            "offsetof(CUDA_MEMCPY3D_BATCH_OP, dst)".into(),
            (offset_of!(CUDA_MEMCPY3D_BATCH_OP, dst)) as i64,
        ),
        (
            "offsetof(CUDA_MEMCPY3D_BATCH_OP, extent)".into(),
            (offset_of!(CUDA_MEMCPY3D_BATCH_OP, extent)) as i64,
        ),
        (
            "offsetof(CUDA_MEMCPY3D_BATCH_OP, srcAccessOrder)".into(),
            (offset_of!(CUDA_MEMCPY3D_BATCH_OP, src_access_order)) as i64,
        ),
        (
            "offsetof(CUDA_MEMCPY3D_BATCH_OP, flags)".into(),
            (offset_of!(CUDA_MEMCPY3D_BATCH_OP, flags)) as i64,
        ),
        (
            "sizeof(CUDA_RESOURCE_DESC)".into(),
            (size_of::<CUDA_RESOURCE_DESC>()) as i64,
        ),
        (
            "offsetof(CUDA_RESOURCE_DESC, res)".into(),
            (offset_of!(CUDA_RESOURCE_DESC, res)) as i64,
        ),
        (
            "offsetof(CUDA_RESOURCE_DESC, res.linear.format)".into(),
            (offset_of!(CUDA_RESOURCE_DESC, res) + 8) as i64,
        ),
        (
            "offsetof(CUDA_RESOURCE_DESC, res.linear.numChannels)".into(),
            (offset_of!(CUDA_RESOURCE_DESC, res) + 12) as i64,
        ),
        (
            "offsetof(CUDA_RESOURCE_DESC, res.linear.sizeInBytes)".into(),
            (offset_of!(CUDA_RESOURCE_DESC, res) + 16) as i64,
        ),
        (
            "offsetof(CUDA_RESOURCE_DESC, res.pitch2D.pitchInBytes)".into(),
            (offset_of!(CUDA_RESOURCE_DESC, res) + 32) as i64,
        ),
        (
            "offsetof(CUDA_RESOURCE_DESC, flags)".into(),
            (offset_of!(CUDA_RESOURCE_DESC, flags)) as i64,
        ),
        (
            "sizeof(CUlaunchConfig)".into(),
            size_of::<LaunchConfig>() as i64,
        ),
        (
            "offsetof(CUlaunchConfig, hStream)".into(),
            offset_of!(LaunchConfig, stream) as i64,
        ),
        (
            "offsetof(CUlaunchConfig, attrs)".into(),
            offset_of!(LaunchConfig, attrs) as i64,
        ),
        (
            "offsetof(CUlaunchConfig, numAttrs)".into(),
            offset_of!(LaunchConfig, num_attrs) as i64,
        ),
        (
            "sizeof(CUlaunchAttribute)".into(),
            size_of::<LaunchAttribute>() as i64,
        ),
        (
            "offsetof(CUlaunchAttribute, value)".into(),
            offset_of!(LaunchAttribute, value) as i64,
        ),
        (
            "sizeof(CUgraphNodeParams)".into(),
            size_of::<GraphNodeParams>() as i64,
        ),
        (
            "offsetof(CUgraphNodeParams, kernel)".into(),
            offset_of!(GraphNodeParams, union) as i64,
        ),
        (
            "offsetof(CUgraphNodeParams, reserved2)".into(),
            offset_of!(GraphNodeParams, reserved2) as i64,
        ),
        (
            "sizeof(CUDA_KERNEL_NODE_PARAMS_v3)".into(),
            size_of::<GraphKernelParams>() as i64,
        ),
        (
            "sizeof(CUDA_KERNEL_NODE_PARAMS_v2)".into(),
            size_of::<GraphKernelParams>() as i64,
        ),
        (
            "offsetof(CUDA_KERNEL_NODE_PARAMS_v3, sharedMemBytes)".into(),
            offset_of!(GraphKernelParams, shared) as i64,
        ),
        (
            "offsetof(CUDA_KERNEL_NODE_PARAMS_v3, kernelParams)".into(),
            offset_of!(GraphKernelParams, kernel_params) as i64,
        ),
        (
            "offsetof(CUDA_KERNEL_NODE_PARAMS_v3, kern)".into(),
            offset_of!(GraphKernelParams, kern) as i64,
        ),
        (
            "offsetof(CUDA_KERNEL_NODE_PARAMS_v3, ctx)".into(),
            offset_of!(GraphKernelParams, ctx) as i64,
        ),
        (
            "offsetof(CUDA_KERNEL_NODE_PARAMS_v2, ctx)".into(),
            offset_of!(GraphKernelParams, ctx) as i64,
        ),
        (
            "sizeof(CUDA_MEMCPY_NODE_PARAMS)".into(),
            size_of::<GraphMemcpyParams>() as i64,
        ),
        (
            "offsetof(CUDA_MEMCPY_NODE_PARAMS, copyCtx)".into(),
            offset_of!(GraphMemcpyParams, copy_ctx) as i64,
        ),
        (
            "offsetof(CUDA_MEMCPY_NODE_PARAMS, copyParams)".into(),
            offset_of!(GraphMemcpyParams, copy_params) as i64,
        ),
        (
            "sizeof(CUDA_MEMSET_NODE_PARAMS_v2)".into(),
            size_of::<GraphMemsetParams>() as i64,
        ),
        (
            "offsetof(CUDA_MEMSET_NODE_PARAMS_v2, elementSize)".into(),
            offset_of!(GraphMemsetParams, element_size) as i64,
        ),
        (
            "offsetof(CUDA_MEMSET_NODE_PARAMS_v2, height)".into(),
            offset_of!(GraphMemsetParams, height) as i64,
        ),
        (
            "offsetof(CUDA_MEMSET_NODE_PARAMS_v2, ctx)".into(),
            offset_of!(GraphMemsetParams, ctx) as i64,
        ),
        (
            "sizeof(CUDA_HOST_NODE_PARAMS_v2)".into(),
            size_of::<GraphHostParams>() as i64,
        ),
        (
            "offsetof(CUDA_HOST_NODE_PARAMS_v2, userData)".into(),
            offset_of!(GraphHostParams, user_data) as i64,
        ),
        (
            "sizeof(CUDA_CHILD_GRAPH_NODE_PARAMS)".into(),
            size_of::<GraphChildParams>() as i64,
        ),
        (
            "offsetof(CUDA_CHILD_GRAPH_NODE_PARAMS, ownership)".into(),
            offset_of!(GraphChildParams, ownership) as i64,
        ),
        (
            "CU_LAUNCH_ATTRIBUTE_COOPERATIVE".into(),
            CU_LAUNCH_ATTRIBUTE_COOPERATIVE as i64,
        ),
        (
            "sizeof(CUDA_TEXTURE_DESC)".into(),
            (size_of::<CUDA_TEXTURE_DESC>()) as i64,
        ),
        (
            "offsetof(CUDA_TEXTURE_DESC, flags)".into(),
            (offset_of!(CUDA_TEXTURE_DESC, flags)) as i64,
        ),
        (
            "offsetof(CUDA_TEXTURE_DESC, borderColor)".into(),
            (offset_of!(CUDA_TEXTURE_DESC, border_color)) as i64,
        ),
        (
            "sizeof(CUDA_RESOURCE_VIEW_DESC)".into(),
            size_of::<CUDA_RESOURCE_VIEW_DESC>() as i64,
        ),
        (
            "offsetof(CUDA_RESOURCE_VIEW_DESC, width)".into(),
            offset_of!(CUDA_RESOURCE_VIEW_DESC, width) as i64,
        ),
        (
            "offsetof(CUDA_RESOURCE_VIEW_DESC, firstMipmapLevel)".into(),
            offset_of!(CUDA_RESOURCE_VIEW_DESC, first_mipmap_level) as i64,
        ),
        (
            "offsetof(CUDA_RESOURCE_VIEW_DESC, lastLayer)".into(),
            offset_of!(CUDA_RESOURCE_VIEW_DESC, last_layer) as i64,
        ),
        (
            "sizeof(CUDA_MEMCPY2D)".into(),
            size_of::<CUDA_MEMCPY2D>() as i64,
        ),
        (
            "offsetof(CUDA_MEMCPY2D, srcHost)".into(),
            offset_of!(CUDA_MEMCPY2D, src_host) as i64,
        ),
        (
            "offsetof(CUDA_MEMCPY2D, dstMemoryType)".into(),
            offset_of!(CUDA_MEMCPY2D, dst_memory_type) as i64,
        ),
        (
            "offsetof(CUDA_MEMCPY2D, dstPitch)".into(),
            offset_of!(CUDA_MEMCPY2D, dst_pitch) as i64,
        ),
        (
            "offsetof(CUDA_MEMCPY2D, Height)".into(),
            offset_of!(CUDA_MEMCPY2D, height) as i64,
        ),
    ];
    macro_rules! values {
        ($module:ident: $($name:ident),* $(,)?) => { $( v.push((stringify!($name).into(), $module::$name as i64)); )* };
    }
    values!(consts: CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_ALLOCATION_TYPE_MANAGED,
        CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC,
        CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
        CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
        CU_MEMPOOL_ATTR_USED_MEM_HIGH, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, CU_MEM_LOCATION_TYPE_INVALID, CU_MEM_LOCATION_TYPE_DEVICE,
        CU_MEM_LOCATION_TYPE_HOST, CU_MEM_LOCATION_TYPE_HOST_NUMA, CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT,
        CU_MEM_HANDLE_TYPE_NONE, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, CU_MEM_HANDLE_TYPE_WIN32,
        CU_MEM_HANDLE_TYPE_WIN32_KMT, CU_MEM_HANDLE_TYPE_FABRIC, CU_MEM_ACCESS_FLAGS_PROT_NONE,
        CU_MEM_ACCESS_FLAGS_PROT_READ, CU_MEM_ACCESS_FLAGS_PROT_READWRITE, CU_MEM_ALLOC_GRANULARITY_MINIMUM,
        CU_MEM_ALLOC_GRANULARITY_RECOMMENDED, CU_MEM_ALLOCATION_COMP_NONE, CU_MEM_ALLOCATION_COMP_GENERIC,
        CU_GET_PROC_ADDRESS_DEFAULT, CU_GET_PROC_ADDRESS_LEGACY_STREAM, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
        CU_GET_PROC_ADDRESS_SUCCESS, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT,
        CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_DEVICE, CU_POINTER_ATTRIBUTE_CONTEXT, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
        CU_POINTER_ATTRIBUTE_DEVICE_POINTER, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
        CU_POINTER_ATTRIBUTE_MAPPED, CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, CU_POINTER_ATTRIBUTE_MAPPING_SIZE,
        CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID, CU_CTX_SCHED_MASK,
        CU_CTX_MAP_HOST, CU_CTX_SYNC_MEMOPS, CU_CTX_FLAGS_MASK);
    values!(result: CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_NOT_INITIALIZED,
        CUDA_ERROR_NO_DEVICE, CUDA_ERROR_INVALID_DEVICE, CUDA_ERROR_INVALID_CONTEXT, CUDA_ERROR_INVALID_HANDLE,
        CUDA_ERROR_NOT_FOUND, CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED,
        CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, CUDA_ERROR_NOT_PERMITTED, CUDA_ERROR_NOT_SUPPORTED, CUDA_ERROR_UNKNOWN);
    for (name, value) in CU_RESULTS
        .iter()
        .chain(CU_DEVICE_ATTRIBUTES)
        .chain(CU_POINTER_ATTRIBUTES)
    {
        v.push(((*name).to_owned(), *value));
    }
    v
}

/// The window systems' types that cudaGL.h, cudaEGL.h and cudaVDPAU.h take from GL/gl.h,
/// EGL/egl.h and vdpau/vdpau.h (not installed in CI), as those headers define them and as
/// `abi/gen/gen.py`'s PLATFORM_TYPES maps them; returns the include folder.
fn window_system_stubs(dir: &std::path::Path) -> String {
    let stubs = dir.join("stubs");
    for (file, text) in [
        (
            "GL/gl.h",
            "typedef unsigned int GLuint;\ntypedef unsigned int GLenum;\n",
        ),
        (
            "EGL/egl.h",
            "#include <stdint.h>\ntypedef int32_t EGLint;\ntypedef void *EGLImageKHR;\n\
             typedef void *EGLStreamKHR;\ntypedef void *EGLSyncKHR;\n",
        ),
        ("EGL/eglext.h", ""),
        (
            "vdpau/vdpau.h",
            "#include <stdint.h>\ntypedef uint32_t VdpDevice;\ntypedef uint32_t VdpVideoSurface;\n\
             typedef uint32_t VdpOutputSurface;\n\
             typedef int VdpGetProcAddress(VdpDevice, uint32_t, void **);\n",
        ),
    ] {
        let path = stubs.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    stubs.display().to_string()
}

fn is_float(rust_type: &str) -> bool {
    matches!(rust_type, "f32" | "f64")
}

#[test]
fn struct_layouts_enum_values_and_signatures_match_cuda_h() {
    let include = common::cuda_include();
    // The typedef headers whose signatures are checked (cudaProfilerTypedefs.h needs
    // cudaProfiler.h, which the registry package lacks: its three functions are not).
    let typedefs: String = [
        "cudaTypedefs.h",
        "cudaGLTypedefs.h",
        "cudaEGLTypedefs.h",
        "cudaVDPAUTypedefs.h",
    ]
    .iter()
    .map(|h| std::fs::read_to_string(include.join(h)).unwrap())
    .collect();
    let dir = common::scratch("header");
    let stubs = window_system_stubs(&dir);
    let checks = layout_checks();
    // The old signatures (`PFN_cuMemAlloc_v2000`, `CUdeviceptr_v1`) are behind this macro.
    let mut c = String::from(
        "#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cudaGL.h>
#include <cudaGLTypedefs.h>
#include <cudaEGL.h>
#include <cudaEGLTypedefs.h>
#include <vdpau/vdpau.h>
#include <cudaVDPAU.h>
#include <cudaVDPAUTypedefs.h>
#include <stddef.h>
#include <stdio.h>
int main(void) {
",
    );
    for (expr, _) in &checks {
        let _ = writeln!(c, "    printf(\"%lld\\n\", (long long)({expr}));");
    }
    // Every export the declaration takes from the typedef headers: the size and
    // the kind (floating point or not: they travel in different registers) of each
    // parameter of its typedef, as the C compiler sees it. Emulated functions are
    // methods of their group's trait (`VirtualMemoryApi`...), so the compiler holds them to
    // these declarations.
    let mut sig_rows = Vec::new();
    for e in EXPORTS {
        let (Some(proc), Some(params)) = (e.proc, e.params) else {
            continue;
        };
        let suffix = match proc.variant {
            "" => String::new(),
            v => format!("_{v}"),
        };
        let pfn = format!("PFN_{}_v{}{}", proc.base, proc.version, suffix);
        if !typedefs.contains(&format!("*{pfn})")) {
            continue;
        }
        // The export's own prototype in cuda.h is that typedef, exactly: the declaration
        // paired the right symbol with the right version (the pass-through forwards with it).
        let _ = writeln!(
            c,
            "    _Static_assert(__builtin_types_compatible_p(__typeof__(&{name}), {pfn}), \"{name} is not {pfn}\");",
            name = e.name
        );
        let mut args = String::new();
        for p in params {
            let _ = write!(
                args,
                ", (long long)sizeof({c}), _Generic(*({c} *)0, float: 1, double: 1, default: 0)",
                c = p.c_type
            );
        }
        let fmt = vec!["%lld %d"; params.len()].join(" ");
        let _ = writeln!(c, "    printf(\"{fmt}\\n\"{args});");
        sig_rows.push(e);
    }
    c.push_str("    return 0;\n}\n");
    std::fs::write(dir.join("abi.c"), &c).unwrap();
    common::build_c(&dir.join("abi.c"), &dir.join("abi"), &["-I", &stubs]);
    let out = std::process::Command::new(dir.join("abi"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let mut wrong = Vec::new();
    for (expr, rust) in &checks {
        let c: i64 = lines
            .next()
            .expect("a line per check")
            .trim()
            .parse()
            .unwrap();
        if c != *rust {
            wrong.push(format!("{expr}: cuda.h {c}, Rust {rust}"));
        }
    }
    for e in &sig_rows {
        let c: Vec<i64> = lines
            .next()
            .expect("a line per signature")
            .split_whitespace()
            .map(|s| s.parse().unwrap())
            .collect();
        let params = e.params.unwrap_or_default();
        let r: Vec<i64> = params
            .iter()
            .flat_map(|p| [p.size as i64, i64::from(is_float(p.rust_type))])
            .collect();
        if c != r {
            wrong.push(format!(
                "{} ({:?}): parameter (size, float) in cuda.h {c:?}, in the declaration {r:?}",
                e.name, e.proc
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "the ABI differs from cuda.h:\n{}",
        wrong.join("\n")
    );
    // 671 exports are declared; all but the profiler's three are checked here.
    assert!(
        sig_rows.len() == 668,
        "only {} signatures checked",
        sig_rows.len()
    );
}

#[test]
fn the_declaration_covers_all_707_exports_of_the_real_driver() {
    let real: Vec<&str> = include_str!("../../abi/gen/exports-580.159.04.txt")
        .split_whitespace()
        .collect();
    let declared: Vec<&str> = EXPORTS.iter().map(|e| e.name).collect();
    assert_eq!(declared, real);
    // The headers declare all but the debugger's symbols and three internal ones.
    let undeclared: Vec<&str> = EXPORTS
        .iter()
        .filter(|e| e.params.is_none())
        .map(|e| e.name)
        .filter(|n| !n.starts_with("cudbg"))
        .collect();
    assert_eq!(
        undeclared,
        ["cuEGLApiInit", "cuMemGetAttribute", "cuMemGetAttribute_v2"]
    );
}
