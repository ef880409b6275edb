//! The runtime's ABI checked against NVIDIA's headers (CUDA 13.0, from the registry
//! package `nvidia-cuda-runtime`): a C file compiled against cuda_runtime_api.h prints
//! sizes, offsets and values, and each is compared with what this crate says. A unit test,
//! since a cdylib's types are not visible to integration tests.

use crate::device_prop::{CudaDeviceProp, PROP_ATTRIBUTES};
use crate::graph;
use crate::ipc::FdHandleSize;
use crate::kernel::{CudaFuncAttributes, Dim3, LaunchConfig};
use crate::memory::CudaPointerAttributes;
use crate::pool::CudaMemPoolProps;
use crate::texture::{ChannelFormatDesc, Memcpy3DParms, ResourceDesc, TextureDesc};
use std::mem::{offset_of, size_of};
use std::path::PathBuf;
use std::process::Command;

fn include_dir() -> PathBuf {
    let dir = std::env::var_os("CUMOCK_CUDA_INCLUDE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../target/cuda-headers/nvidia/cu13/include")
        });
    assert!(
        dir.join("cuda_runtime_api.h").is_file(),
        "NVIDIA's cuda_runtime_api.h is not in {}: run ci/test.sh, or \
         `pip install --target target/cuda-headers 'nvidia-cuda-runtime==13.0.*'`",
        dir.display()
    );
    dir
}

/// (C expression, what the Rust side says).
fn checks() -> Vec<(String, i64)> {
    let mut v: Vec<(String, i64)> = Vec::new();
    let mut add = |e: &str, x: usize| v.push((e.to_owned(), x as i64));
    add("sizeof(struct cudaDeviceProp)", size_of::<CudaDeviceProp>());
    macro_rules! prop_offsets {
        ($($f:ident),*) => { $(add(concat!("offsetof(struct cudaDeviceProp, ", stringify!($f), ")"), offset_of!(CudaDeviceProp, $f));)* };
    }
    prop_offsets!(
        name,
        uuid,
        luid,
        luidDeviceNodeMask,
        totalGlobalMem,
        sharedMemPerBlock,
        regsPerBlock,
        warpSize,
        memPitch,
        maxThreadsPerBlock,
        maxThreadsDim,
        maxGridSize,
        totalConstMem,
        major,
        minor,
        textureAlignment,
        multiProcessorCount,
        maxTexture2DLinear,
        maxSurfaceCubemapLayered,
        surfaceAlignment,
        pciBusID,
        l2CacheSize,
        sharedMemPerMultiprocessor,
        managedMemory,
        sharedMemPerBlockOptin,
        reservedSharedMemPerBlock,
        memoryPoolsSupported,
        memoryPoolSupportedHandleTypes,
        clusterLaunch,
        hostNumaId,
        gpuPciSubsystemID,
        hostNumaMultinodeIpcSupported,
        reserved
    );
    add(
        "sizeof(struct cudaPointerAttributes)",
        size_of::<CudaPointerAttributes>(),
    );
    add(
        "offsetof(struct cudaPointerAttributes, device)",
        offset_of!(CudaPointerAttributes, device),
    );
    add(
        "offsetof(struct cudaPointerAttributes, devicePointer)",
        offset_of!(CudaPointerAttributes, device_pointer),
    );
    add(
        "offsetof(struct cudaPointerAttributes, hostPointer)",
        offset_of!(CudaPointerAttributes, host_pointer),
    );
    // cudaMemPrefetchAsync and cudaMemAdvise pass cudaMemLocation by value as the
    // driver's CUmemLocation.
    add(
        "sizeof(struct cudaMemLocation)",
        size_of::<cumock_abi::CUmemLocation>(),
    );
    add(
        "offsetof(struct cudaMemLocation, id)",
        offset_of!(cumock_abi::CUmemLocation, id),
    );
    add(
        "sizeof(struct cudaChannelFormatDesc)",
        size_of::<ChannelFormatDesc>(),
    );
    add(
        "sizeof(struct cudaMemcpy3DPeerParms)",
        size_of::<crate::batches::Memcpy3DPeerParms>(),
    );
    add(
        "offsetof(struct cudaMemcpy3DPeerParms, dstArray)",
        offset_of!(crate::batches::Memcpy3DPeerParms, dst_array),
    );
    add(
        "offsetof(struct cudaMemcpy3DPeerParms, extent)",
        offset_of!(crate::batches::Memcpy3DPeerParms, extent),
    );
    // The batch structs forwarded to the driver as they are (batches.rs).
    add(
        "sizeof(struct cudaMemcpyAttributes)",
        size_of::<cumock_abi::CUmemcpyAttributes>(),
    );
    add(
        "offsetof(struct cudaMemcpyAttributes, flags)",
        offset_of!(cumock_abi::CUmemcpyAttributes, flags),
    );
    add(
        "sizeof(struct cudaMemcpy3DBatchOp)",
        size_of::<cumock_abi::CUDA_MEMCPY3D_BATCH_OP>(),
    );
    add(
        "offsetof(struct cudaMemcpy3DBatchOp, dst.op.array.offset.z)",
        offset_of!(cumock_abi::CUDA_MEMCPY3D_BATCH_OP, dst) + 32,
    );
    add(
        "offsetof(struct cudaMemcpy3DBatchOp, srcAccessOrder)",
        offset_of!(cumock_abi::CUDA_MEMCPY3D_BATCH_OP, src_access_order),
    );
    add(
        "sizeof(struct cudaMemcpy3DParms)",
        size_of::<Memcpy3DParms>(),
    );
    add(
        "offsetof(struct cudaMemcpy3DParms, dstArray)",
        offset_of!(Memcpy3DParms, dst_array),
    );
    add(
        "offsetof(struct cudaMemcpy3DParms, extent)",
        offset_of!(Memcpy3DParms, extent),
    );
    add(
        "offsetof(struct cudaMemcpy3DParms, kind)",
        offset_of!(Memcpy3DParms, kind),
    );
    add("sizeof(struct cudaGraphNodeParams)", 256);
    add("offsetof(struct cudaGraphNodeParams, kernel)", graph::UNION);
    add(
        "sizeof(struct cudaKernelNodeParamsV2)",
        size_of::<graph::KernelNodeParams>(),
    );
    add(
        "sizeof(struct cudaMemcpyNodeParams)",
        size_of::<graph::MemcpyNodeParams>(),
    );
    add(
        "offsetof(struct cudaMemcpyNodeParams, copyParams)",
        offset_of!(graph::MemcpyNodeParams, copy),
    );
    add(
        "sizeof(struct cudaMemsetParamsV2)",
        size_of::<graph::MemsetParams>(),
    );
    add(
        "sizeof(struct cudaHostNodeParamsV2)",
        size_of::<graph::HostNodeParams>(),
    );
    add("sizeof(struct cudaResourceDesc)", size_of::<ResourceDesc>());
    add(
        "offsetof(struct cudaResourceDesc, res)",
        offset_of!(ResourceDesc, res),
    );
    add(
        "offsetof(struct cudaResourceDesc, res.linear.desc)",
        offset_of!(ResourceDesc, res) + 8,
    );
    add(
        "offsetof(struct cudaResourceDesc, res.linear.sizeInBytes)",
        offset_of!(ResourceDesc, res) + 32,
    );
    add(
        "offsetof(struct cudaResourceDesc, res.pitch2D.pitchInBytes)",
        offset_of!(ResourceDesc, res) + 48,
    );
    add(
        "offsetof(struct cudaResourceDesc, flags)",
        offset_of!(ResourceDesc, flags),
    );
    add(
        "sizeof(struct cudaResourceViewDesc)",
        size_of::<cumock_abi::CUDA_RESOURCE_VIEW_DESC>(),
    );
    add(
        "offsetof(struct cudaResourceViewDesc, firstMipmapLevel)",
        offset_of!(cumock_abi::CUDA_RESOURCE_VIEW_DESC, first_mipmap_level),
    );
    add(
        "offsetof(struct cudaResourceViewDesc, lastLayer)",
        offset_of!(cumock_abi::CUDA_RESOURCE_VIEW_DESC, last_layer),
    );
    add("sizeof(struct cudaTextureDesc)", size_of::<TextureDesc>());
    add(
        "offsetof(struct cudaTextureDesc, borderColor)",
        offset_of!(TextureDesc, border_color),
    );
    add(
        "offsetof(struct cudaTextureDesc, normalizedCoords)",
        offset_of!(TextureDesc, normalized_coords),
    );
    add(
        "offsetof(struct cudaTextureDesc, seamlessCubemap)",
        offset_of!(TextureDesc, seamless_cubemap),
    );
    add(
        "sizeof(struct cudaPitchedPtr)",
        size_of::<crate::texture::PitchedPtr>(),
    );
    add(
        "sizeof(struct cudaArrayMemoryRequirements)",
        size_of::<crate::texture::ArrayMemoryRequirements>(),
    );
    add(
        "offsetof(struct cudaArrayMemoryRequirements, reserved)",
        offset_of!(crate::texture::ArrayMemoryRequirements, reserved),
    );
    add(
        "sizeof(struct cudaArraySparseProperties)",
        size_of::<crate::texture::ArraySparseProperties>(),
    );
    add(
        "offsetof(struct cudaArraySparseProperties, miptailSize)",
        offset_of!(crate::texture::ArraySparseProperties, miptail_size),
    );
    add(
        "offsetof(struct cudaArraySparseProperties, flags)",
        offset_of!(crate::texture::ArraySparseProperties, flags),
    );
    add(
        "sizeof(struct cudaFuncAttributes)",
        size_of::<CudaFuncAttributes>(),
    );
    add(
        "offsetof(struct cudaFuncAttributes, maxThreadsPerBlock)",
        offset_of!(CudaFuncAttributes, max_threads_per_block),
    );
    add(
        "offsetof(struct cudaFuncAttributes, binaryVersion)",
        offset_of!(CudaFuncAttributes, binary_version),
    );
    add(
        "offsetof(struct cudaFuncAttributes, clusterSchedulingPolicyPreference)",
        offset_of!(CudaFuncAttributes, cluster_scheduling_policy_preference),
    );
    add(
        "offsetof(struct cudaFuncAttributes, nonPortableClusterSizeAllowed)",
        offset_of!(CudaFuncAttributes, non_portable_cluster_size_allowed),
    );
    add(
        "offsetof(struct cudaFuncAttributes, reserved)",
        offset_of!(CudaFuncAttributes, reserved),
    );
    add(
        "sizeof(struct cudaMemPoolProps)",
        size_of::<CudaMemPoolProps>(),
    );
    add(
        "offsetof(struct cudaMemPoolProps, location)",
        offset_of!(CudaMemPoolProps, location),
    );
    add(
        "offsetof(struct cudaMemPoolProps, maxSize)",
        offset_of!(CudaMemPoolProps, max_size),
    );
    add(
        "offsetof(struct cudaMemPoolProps, usage)",
        offset_of!(CudaMemPoolProps, usage),
    );
    add(
        "sizeof(struct cudaMemAccessDesc)",
        size_of::<cumock_abi::CUmemAccessDesc>(),
    );
    add(
        "offsetof(struct cudaMemAccessDesc, flags)",
        offset_of!(cumock_abi::CUmemAccessDesc, flags),
    );
    add(
        "sizeof(struct cudaMemLocation)",
        size_of::<cumock_abi::CUmemLocation>(),
    );
    add("sizeof(cudaIpcMemHandle_t)", FdHandleSize);
    add("sizeof(dim3)", size_of::<Dim3>());
    add("sizeof(cudaLaunchConfig_t)", size_of::<LaunchConfig>());
    add(
        "offsetof(cudaLaunchConfig_t, dynamicSmemBytes)",
        std::mem::offset_of!(LaunchConfig, dynamic_smem_bytes),
    );
    add(
        "offsetof(cudaLaunchConfig_t, numAttrs)",
        std::mem::offset_of!(LaunchConfig, num_attrs),
    );
    // Every error code, and the values the runtime relies on being the driver's.
    for (name, value) in crate::generated::CUDA_ERRORS {
        v.push((format!("(int){name}"), *value as i64));
    }
    for (field, values, names) in PROP_ATTRIBUTES {
        for (value, name) in values.iter().zip(names.iter()) {
            v.push((
                format!("(int)CU_DEVICE_ATTRIBUTE_{name} /* {field} */"),
                *value as i64,
            ));
        }
    }
    for (rt, drv) in [
        (
            "cudaDevAttrMultiProcessorCount",
            "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT",
        ),
        (
            "cudaDevAttrMemoryPoolsSupported",
            "CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED",
        ),
        (
            "cudaDevAttrHostNumaMultinodeIpcSupported",
            "CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED",
        ),
        (
            "cudaMemPoolAttrUsedMemHigh",
            "CU_MEMPOOL_ATTR_USED_MEM_HIGH",
        ),
        (
            "cudaMemPoolAttrReleaseThreshold",
            "CU_MEMPOOL_ATTR_RELEASE_THRESHOLD",
        ),
        (
            "cudaFuncAttributeMaxDynamicSharedMemorySize",
            "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES",
        ),
        ("cudaLimitMallocHeapSize", "CU_LIMIT_MALLOC_HEAP_SIZE"),
        ("cudaEventInterprocess", "CU_EVENT_INTERPROCESS"),
        ("cudaHostRegisterReadOnly", "CU_MEMHOSTREGISTER_READ_ONLY"),
        (
            "cudaHostAllocWriteCombined",
            "CU_MEMHOSTALLOC_WRITECOMBINED",
        ),
        ("cudaStreamNonBlocking", "CU_STREAM_NON_BLOCKING"),
        ("cudaErrorIllegalAddress", "CUDA_ERROR_ILLEGAL_ADDRESS"),
        ("cudaErrorNotSupported", "CUDA_ERROR_NOT_SUPPORTED"),
        (
            "cudaErrorInvalidResourceHandle",
            "CUDA_ERROR_INVALID_HANDLE",
        ),
        (
            "cudaDriverEntryPointVersionNotSufficent",
            "CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT",
        ),
    ] {
        v.push((format!("(int){rt} - (int){drv}"), 0));
    }
    v.push(("(long)cudaStreamLegacy".into(), 1));
    v.push(("(long)cudaStreamPerThread".into(), 2));
    v.push((
        "CUDART_VERSION".into(),
        crate::driver::CUDART_VERSION as i64,
    ));
    v
}

#[test]
fn the_runtime_abi_is_nvidias() {
    let checks = checks();
    let dir = std::env::temp_dir().join(format!("cumock-cudart-abi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut c = String::from("#include <stddef.h>\n#include <stdio.h>\n#include <cuda.h>\n#include <cuda_runtime_api.h>\nint main(void) {\n");
    for (e, _) in &checks {
        c.push_str(&format!("    printf(\"%lld\\n\", (long long)({e}));\n"));
    }
    c.push_str("    return 0;\n}\n");
    let src = dir.join("abi.c");
    let exe = dir.join("abi");
    std::fs::write(&src, c).unwrap();
    let target = "x86_64-unknown-linux-gnu";
    let compiler = cc::Build::new()
        .target(target)
        .host(target)
        .opt_level(0)
        .cargo_metadata(false)
        .get_compiler();
    let o = compiler
        .to_command()
        .arg("-I")
        .arg(include_dir())
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "compiling the ABI check failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = Command::new(&exe).output().unwrap();
    let values: Vec<i64> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(values.len(), checks.len());
    let wrong: Vec<String> = checks
        .iter()
        .zip(&values)
        .filter(|((_, ours), theirs)| ours != *theirs)
        .map(|((e, ours), theirs)| format!("{e}: the header says {theirs}, cudart says {ours}"))
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        wrong.is_empty(),
        "{} ABI differences:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// The size the C ABI gives a parameter of this Rust type, as written in this crate's
/// exports.
fn rust_param_size(ty: &str) -> Option<usize> {
    let ty = ty.trim();
    if ty.starts_with('*') || ty.starts_with('&') {
        return Some(8);
    }
    Some(match ty {
        "c_int" | "i32" | "c_uint" | "u32" | "f32" | "CudaError" => 4,
        "usize" | "u64" | "c_ulonglong" | "i64" => 8,
        "CUstream" | "CUevent" | "CUmemoryPool" | "CUfunction" | "CUcontext" | "CUmodule" => 8,
        "CUgraph" | "CUgraphExec" | "CUgraphNode" | "CUuserObject" => 8,
        "Dim3" => size_of::<Dim3>(),
        "Extent" => size_of::<crate::texture::Extent>(),
        "CUipcMemHandle" | "cumock_abi::CUipcMemHandle" => size_of::<cumock_abi::CUipcMemHandle>(),
        "cumock_abi::CUipcEventHandle" => size_of::<cumock_abi::CUipcEventHandle>(),
        "cumock_abi::CUmemLocation" => size_of::<cumock_abi::CUmemLocation>(),
        "cumock_abi::CUhostFn" | "cumock_abi::CUstreamCallback" => 8,
        "CUlibrary" | "CUkernel" => 8,
        "cumock_abi::CUasyncCallback" | "cumock_abi::CUasyncCallbackHandle" => 8,
        "cumock_abi::CUlogsCallback" | "cumock_abi::CUlogsCallbackHandle" => 8,
        "crate::texture::Extent" => size_of::<crate::texture::Extent>(),
        "crate::texture::PitchedPtr" => size_of::<crate::texture::PitchedPtr>(),
        _ => return None,
    })
}

/// Every `cuda*` export this crate implements, with its parameters' types, read from the
/// source (which is what was compiled).
fn implemented_signatures() -> Vec<(String, Vec<String>)> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .is_some_and(|n| n == "generated.rs" || n == "abi_check.rs")
        {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let mut rest = text.as_str();
        while let Some(i) = rest.find("fn cuda") {
            rest = &rest[i + 3..];
            let Some(open) = rest.find('(') else { break };
            let name = rest[..open].to_owned();
            if !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let close = open + rest[open..].find(')').unwrap();
            let params = rest[open + 1..close]
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(|p| p.split_once(':').map_or(p, |(_, t)| t).trim().to_owned())
                .collect();
            out.push((name, params));
        }
    }
    out.sort();
    out
}

#[test]
fn every_implemented_export_has_the_headers_signature() {
    let sigs = implemented_signatures();
    assert!(sigs.len() > 100, "only {} signatures read", sigs.len());
    // The header's function for each export: `_ptds`/`_ptsz` variants have their base's.
    let base = |n: &str| {
        n.trim_end_matches("_ptds")
            .trim_end_matches("_ptsz")
            .to_owned()
    };
    // Declared in cuda_profiler_api.h, which the registry package does not ship; both take
    // no arguments, as this crate's do (checked below).
    const NOT_IN_THESE_HEADERS: &[&str] = &["cudaProfilerStart", "cudaProfilerStop"];
    let sigs: Vec<(String, Vec<String>)> = sigs
        .into_iter()
        .filter(|(n, p)| {
            let outside = NOT_IN_THESE_HEADERS.contains(&n.as_str());
            assert!(!outside || p.is_empty(), "{n} takes no arguments");
            !outside
        })
        .collect();
    let mut bases: Vec<String> = sigs.iter().map(|(n, _)| base(n)).collect();
    bases.dedup();
    let dir = std::env::temp_dir().join(format!("cumock-cudart-sig-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut cpp = String::from(
        "#include <cuda_runtime_api.h>\n#include <cstdio>\n\
         template <typename F> struct Sig;\n\
         template <typename R, typename... A> struct Sig<R (*)(A...)> { static void print(const char *n) {\n\
         printf(\"%s %zu\", n, sizeof...(A)); ((printf(\" %zu\", sizeof(A))), ...); printf(\"\\n\"); } };\n\
         int main() {\n",
    );
    for b in &bases {
        // decltype: the header's type of the function, without linking against it.
        cpp.push_str(&format!("    Sig<decltype(&{b})>::print(\"{b}\");\n"));
    }
    cpp.push_str("    return 0;\n}\n");
    let src = dir.join("sig.cpp");
    let exe = dir.join("sig");
    std::fs::write(&src, cpp).unwrap();
    let target = "x86_64-unknown-linux-gnu";
    let compiler = cc::Build::new()
        .cpp(true)
        .target(target)
        .host(target)
        .opt_level(0)
        .cargo_metadata(false)
        .get_compiler();
    let o = compiler
        .to_command()
        .args(["-std=c++17", "-Wno-deprecated-declarations", "-I"])
        .arg(include_dir())
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "compiling the signature check failed (an export the header does not declare?):\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8(Command::new(&exe).output().unwrap().stdout).unwrap();
    let header: std::collections::HashMap<String, Vec<usize>> = out
        .lines()
        .map(|l| {
            let mut it = l.split_whitespace();
            let name = it.next().unwrap().to_owned();
            let sizes: Vec<usize> = it.map(|x| x.parse().unwrap()).collect();
            (name, sizes[1..].to_vec())
        })
        .collect();
    let mut wrong = Vec::new();
    for (name, params) in &sigs {
        let ours: Vec<usize> = params
            .iter()
            .map(|t| rust_param_size(t).unwrap_or_else(|| panic!("{name}: no size for type {t}")))
            .collect();
        let theirs = &header[&base(name)];
        if &ours != theirs {
            wrong.push(format!(
                "{name}: the header's parameters are {theirs:?} bytes, ours {ours:?}"
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        wrong.is_empty(),
        "{} signatures differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
