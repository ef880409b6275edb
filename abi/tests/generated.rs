//! The committed declaration is what the generator makes of NVIDIA's headers today: the
//! test reruns `abi/gen/gen.py --check` on them and fails, naming the stale file, if
//! anyone edited the generated code or changed the generator without rerunning it.

use std::path::PathBuf;
use std::process::Command;

/// NVIDIA's headers from the registry package `nvidia-cuda-runtime` (13.0), which
/// `ci/test.sh` installs into target/cuda-headers; `CUMOCK_CUDA_INCLUDE` overrides.
fn cuda_include() -> PathBuf {
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = std::env::var_os("CUMOCK_CUDA_INCLUDE")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target/cuda-headers/nvidia/cu13/include"));
    assert!(
        dir.join("cudaTypedefs.h").is_file(),
        "NVIDIA's headers are not in {}: run ci/test.sh, or \
         `pip install --target target/cuda-headers 'nvidia-cuda-runtime==13.0.*'`",
        dir.display()
    );
    dir
}

#[test]
fn the_committed_declaration_is_what_the_headers_generate() {
    let gen = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("gen/gen.py");
    let out = Command::new("python3")
        .arg(&gen)
        .arg(cuda_include())
        .arg("--check")
        .output()
        .expect("python3 runs the generator");
    assert!(
        out.status.success(),
        "{}\nrerun: python3 abi/gen/gen.py target/cuda-headers/nvidia/cu13/include",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_export_of_the_real_driver_is_declared_once() {
    let real: Vec<&str> = include_str!("../gen/exports-580.159.04.txt")
        .split_whitespace()
        .collect();
    assert_eq!(real.len(), 707);
    let names: Vec<&str> = cumock_abi::EXPORTS.iter().map(|e| e.name).collect();
    assert_eq!(names, real);
}

#[test]
fn versioned_variants_carry_their_base_and_version() {
    let proc = |name| cumock_abi::export(name).and_then(|e| e.proc).unwrap();
    let p = proc("cuMemcpyHtoD_v2_ptds");
    assert_eq!(
        (p.base, p.version, p.variant),
        ("cuMemcpyHtoD", 7000, "ptds")
    );
    let p = proc("cuMemcpyHtoDAsync_v2_ptsz");
    assert_eq!(
        (p.base, p.version, p.variant),
        ("cuMemcpyHtoDAsync", 7000, "ptsz")
    );
    let p = proc("cuMemAlloc");
    assert_eq!((p.base, p.version), ("cuMemAlloc", 2000));
    let p = proc("cuMemMap");
    assert_eq!((p.base, p.version, p.variant), ("cuMemMap", 10020, ""));
    let map = cumock_abi::export("cuMemMap").unwrap().params.unwrap();
    let types: Vec<&str> = map.iter().map(|p| p.c_type).collect();
    assert_eq!(
        types,
        [
            "CUdeviceptr_v2",
            "size_t",
            "size_t",
            "CUmemGenericAllocationHandle_v1",
            "unsigned long long"
        ]
    );
}

#[test]
fn each_export_is_in_the_group_of_its_base_name() {
    let group = |name| cumock_abi::export(name).and_then(|e| e.group).unwrap();
    assert_eq!(group("cuMemMap"), "VirtualMemoryApi");
    // Variants go with their base name.
    assert_eq!(group("cuMemcpyHtoD_v2_ptds"), "MemoryApi");
    assert_eq!(group("cuStreamQuery_ptsz"), "StreamApi");
    // cuda.h's deprecated context management is context management.
    assert_eq!(group("cuCtxAttach"), "ContextApi");
    // Declared in cuda.h under a macro's name (cuGraphInstantiate).
    assert_eq!(group("cuGraphInstantiateWithFlags"), "GraphApi");
    // Only in a typedef header, or outside any group.
    assert_eq!(group("cuProfilerStart"), "ProfilerControlApi");
    assert_eq!(group("cuGetExportTable"), "DriverEntryPointAccessApi");
    assert_eq!(group("cuGLGetDevices_v2"), "OpenGLInteroperabilityApi");
    assert!(cumock_abi::export("cudbgApiInit").unwrap().group.is_none());
}
