//! The ABI checked against NVIDIA's cuda.h (CUDA 13.0, from the registry package): a C
//! file compiled against the header prints sizes, offsets, enum values and the parameter
//! sizes of every emulated function's signature, and the Rust side compares.

mod common;

use cumock_abi::*;
use std::collections::BTreeMap;
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
            "offsetof(CUctxCreateParams, numExecAffinityParams)".into(),
            offset_of!(CUctxCreateParams, num_exec_affinity_params) as i64,
        ),
        (
            "offsetof(CUctxCreateParams, cigParams)".into(),
            offset_of!(CUctxCreateParams, cig_params) as i64,
        ),
    ];
    macro_rules! values {
        ($module:ident: $($name:ident),* $(,)?) => { $( v.push((stringify!($name).into(), $module::$name as i64)); )* };
    }
    values!(consts: CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_INVALID, CU_MEM_LOCATION_TYPE_DEVICE,
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

/// The emulated exports' parameter types, read from the macro calls in exports.rs.
fn rust_signatures() -> BTreeMap<String, Vec<String>> {
    let src = include_str!("../src/exports.rs");
    let mut out = BTreeMap::new();
    for chunk in src.split("cuda_fn!").skip(1) {
        let Some(rest) = chunk.split_once("fn ").map(|x| x.1) else {
            continue;
        };
        let (name, rest) = rest.split_once('(').expect("fn NAME(");
        let params = &rest[..rest.find(')').expect("closing paren")];
        let types = params
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| p.split_once(':').expect("name: type").1.trim().to_owned())
            .collect();
        out.insert(name.trim().to_owned(), types);
    }
    out
}

fn rust_size(ty: &str) -> i64 {
    match ty {
        t if t.starts_with('*') => 8,
        "u8" => 1,
        "u16" => 2,
        "c_int" | "c_uint" | "i32" | "u32" | "CUresult" | "CUdevice" | "f32" => 4,
        "u64"
        | "usize"
        | "CUdevicePtr"
        | "CUdeviceptr"
        | "CUmemGenericAllocationHandle"
        | "CUcontext"
        | "CUstream"
        | "CUevent" => 8,
        other => panic!("no size known for the Rust type {other}"),
    }
}

/// The C parameter types of `PFN_<base>_v<version>[_ptds|_ptsz]` in cudaTypedefs.h.
fn c_params(typedefs: &str, pfn: &str) -> Option<Vec<String>> {
    let at = typedefs.find(&format!("*{pfn})("))?;
    let rest = &typedefs[at + pfn.len() + 3..];
    let params = &rest[..rest.find(");")?];
    if params.trim() == "void" {
        return Some(Vec::new());
    }
    Some(
        params
            .split(',')
            .map(|p| {
                let p = p.trim();
                // Drop the parameter's name: the identifier after the last '*' or space.
                let cut = p.rfind(['*', ' ']).map(|i| i + 1).unwrap_or(0);
                p[..cut].trim().to_owned()
            })
            .collect(),
    )
}

#[test]
fn struct_layouts_enum_values_and_signatures_match_cuda_h() {
    let include = common::cuda_include();
    let typedefs = std::fs::read_to_string(include.join("cudaTypedefs.h")).unwrap();
    let checks = layout_checks();
    let mut c = String::from("#include <cuda.h>\n#include <cudaTypedefs.h>\n#include <stddef.h>\n#include <stdio.h>\nint main(void) {\n");
    for (expr, _) in &checks {
        let _ = writeln!(c, "    printf(\"%lld\\n\", (long long)({expr}));");
    }
    // Each emulated export: the sizes of its parameters in cuda.h's typedef for it.
    let mut sig_rows = Vec::new();
    for (name, rust_types) in rust_signatures() {
        let Some(entry) = PROC_ENTRIES.iter().find(|e| e.3 == name) else {
            panic!("{name} is exported as emulated but has no entry in cudaTypedefs.h's table");
        };
        let suffix = match entry.2 {
            "ptds" if name.ends_with("_ptsz") => "_ptsz",
            "ptds" => "_ptds",
            _ => "",
        };
        let pfn = format!("PFN_{}_v{}{}", entry.0, entry.1, suffix);
        let params =
            c_params(&typedefs, &pfn).unwrap_or_else(|| panic!("no typedef {pfn} for {name}"));
        let sizes: Vec<String> = params
            .iter()
            .map(|t| format!("(long long)sizeof({t})"))
            .collect();
        let fmt = vec!["%lld"; params.len()].join(" ");
        let args = if sizes.is_empty() {
            String::new()
        } else {
            format!(", {}", sizes.join(", "))
        };
        let _ = writeln!(c, "    printf(\"{fmt}\\n\"{args});");
        sig_rows.push((name, pfn, rust_types));
    }
    c.push_str("    return 0;\n}\n");
    let dir = common::scratch("header");
    std::fs::write(dir.join("abi.c"), &c).unwrap();
    common::build_c(&dir.join("abi.c"), &dir.join("abi"), &[]);
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
    for (name, pfn, rust_types) in &sig_rows {
        let c: Vec<i64> = lines
            .next()
            .expect("a line per signature")
            .split_whitespace()
            .map(|s| s.parse().unwrap())
            .collect();
        let r: Vec<i64> = rust_types.iter().map(|t| rust_size(t)).collect();
        if c != r {
            wrong.push(format!(
                "{name} ({pfn}): parameter sizes in cuda.h {c:?}, in Rust {r:?}"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "the ABI differs from cuda.h:\n{}",
        wrong.join("\n")
    );
    assert!(
        sig_rows.len() > 100,
        "only {} signatures checked",
        sig_rows.len()
    );
}
