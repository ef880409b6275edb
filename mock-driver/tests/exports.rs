//! The mock exports every symbol of the real 580.159.04 driver, under SONAME libcuda.so.1.

mod common;

use object::{Object, ObjectSymbol};

fn dynamic_symbols() -> Vec<String> {
    let lib = common::mock_lib();
    let data = std::fs::read(std::fs::canonicalize(&lib).unwrap()).unwrap();
    let file = object::File::parse(&*data).unwrap();
    file.dynamic_symbols()
        .filter(|s| s.is_definition() && s.is_global())
        .filter_map(|s| s.name().ok().map(str::to_owned))
        .collect()
}

#[test]
fn all_707_names_of_the_real_driver_are_exported() {
    let want: Vec<&str> = include_str!("../../abi/gen/exports-580.159.04.txt")
        .split_whitespace()
        .collect();
    assert_eq!(want.len(), 707);
    let have: std::collections::HashSet<String> = dynamic_symbols().into_iter().collect();
    let missing: Vec<&&str> = want.iter().filter(|n| !have.contains(**n)).collect();
    assert!(missing.is_empty(), "missing exports: {missing:?}");
}

#[test]
fn nothing_but_the_driver_api_is_exported() {
    let want: std::collections::HashSet<&str> =
        include_str!("../../abi/gen/exports-580.159.04.txt")
            .split_whitespace()
            .collect();
    let extra: Vec<String> = dynamic_symbols()
        .into_iter()
        .filter(|n| !want.contains(n.as_str()))
        .collect();
    // Rust's own runtime symbols are not exported from a cdylib; anything else would be
    // a name a program could link by mistake.
    assert!(
        extra.is_empty(),
        "exports not in the real driver: {extra:?}"
    );
}

#[test]
fn the_soname_is_libcuda_so_1() {
    let lib = std::fs::canonicalize(common::mock_lib()).unwrap();
    let out = std::process::Command::new("readelf")
        .arg("-d")
        .arg(&lib)
        .output()
        .expect("readelf (binutils)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Library soname: [libcuda.so.1]"), "{text}");
}

/// Each delegating export family, called wrongly once: (the export, what it was asked).
/// The child process below makes these calls; the parent reads its stderr.
const DELEGATING_CALLS: &[&str] = &[
    // Copies into and out of memory without access: async, per-thread and
    // per-thread-stream variants delegate to the synchronous copy.
    "cuMemcpyHtoD_v2",
    "cuMemcpyHtoDAsync_v2",
    "cuMemcpyHtoD_v2_ptds",
    "cuMemcpyHtoDAsync_v2_ptsz",
    "cuMemcpyDtoHAsync_v2",
    "cuMemcpyDtoH_v2_ptds",
    "cuMemcpyDtoDAsync_v2",
    "cuMemcpyDtoD_v2_ptds",
    "cuMemcpyAsync",
    "cuMemcpy_ptds",
    "cuMemcpyAsync_ptsz",
    // Memsets into memory without access.
    "cuMemsetD8Async",
    "cuMemsetD16_v2_ptds",
    "cuMemsetD32Async_ptsz",
    // Contexts on a device that does not exist, and handles that are not contexts.
    "cuCtxCreate",
    "cuCtxCreate_v3",
    "cuCtxCreate_v4",
    "cuCtxDestroy",
    "cuCtxPushCurrent",
    "cuCtxPopCurrent",
    // Devices, streams, events and cuGetProcAddress with NULL or bogus arguments.
    "cuDeviceGetUuid_v2",
    "cuStreamCreateWithPriority",
    "cuStreamSynchronize_ptsz",
    "cuStreamQuery_ptsz",
    "cuStreamWaitEvent_ptsz",
    "cuEventRecord_ptsz",
    "cuEventElapsedTime",
    "cuGetProcAddress",
];

/// The calls of `DELEGATING_CALLS`, made in a child process (this test binary, run again
/// with `CUMOCK_DELEGATION_CHILD` set) so that its stderr can be read.
#[test]
fn delegation_child() {
    if std::env::var_os("CUMOCK_DELEGATION_CHILD").is_none() {
        return;
    }
    use cuda::exports::*;
    use std::ffi::c_void;
    const G: usize = 2 << 20;
    // A handle value the mock never gave out, of whichever handle type a call takes.
    fn bogus<T>() -> *mut T {
        0x1234_5678usize as *mut T
    }
    let mut results = Vec::new();
    // Safety: pointers are NULL, bogus on purpose (the mock must refuse them), or point
    // to live locals of the right size.
    unsafe {
        assert_eq!(cuInit(0), 0);
        let mut ctx = std::ptr::null_mut();
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
        let mut va = 0u64;
        assert_eq!(cuMemAddressReserve(&mut va, G, 0, 0, 0), 0);
        let prop = cumock_abi::CUmemAllocationProp {
            type_: 1,
            location: cumock_abi::CUmemLocation { type_: 1, id: 0 },
            ..Default::default()
        };
        let mut h = 0u64;
        assert_eq!(cuMemCreate(&mut h, G, &prop, 0), 0);
        // Mapped, but no access granted: every copy and memset is refused.
        assert_eq!(cuMemMap(va, G, 0, h, 0), 0);
        let mut buf = [0u8; 16];
        let host = buf.as_mut_ptr().cast::<c_void>();
        let mut r = |name: &str, code: u32| results.push(format!("{name} {code}"));
        r("cuMemcpyHtoD_v2", cuMemcpyHtoD_v2(va, host, 16));
        r(
            "cuMemcpyHtoDAsync_v2",
            cuMemcpyHtoDAsync_v2(va, host, 16, std::ptr::null_mut()),
        );
        r("cuMemcpyHtoD_v2_ptds", cuMemcpyHtoD_v2_ptds(va, host, 16));
        r(
            "cuMemcpyHtoDAsync_v2_ptsz",
            cuMemcpyHtoDAsync_v2_ptsz(va, host, 16, std::ptr::null_mut()),
        );
        r(
            "cuMemcpyDtoHAsync_v2",
            cuMemcpyDtoHAsync_v2(host, va, 16, std::ptr::null_mut()),
        );
        r("cuMemcpyDtoH_v2_ptds", cuMemcpyDtoH_v2_ptds(host, va, 16));
        r(
            "cuMemcpyDtoDAsync_v2",
            cuMemcpyDtoDAsync_v2(va, va + 64, 16, std::ptr::null_mut()),
        );
        r(
            "cuMemcpyDtoD_v2_ptds",
            cuMemcpyDtoD_v2_ptds(va, va + 64, 16),
        );
        r(
            "cuMemcpyAsync",
            cuMemcpyAsync(va, host as u64, 16, std::ptr::null_mut()),
        );
        r("cuMemcpy_ptds", cuMemcpy_ptds(va, host as u64, 16));
        r(
            "cuMemcpyAsync_ptsz",
            cuMemcpyAsync_ptsz(va, host as u64, 16, std::ptr::null_mut()),
        );
        r(
            "cuMemsetD8Async",
            cuMemsetD8Async(va, 1, 16, std::ptr::null_mut()),
        );
        r("cuMemsetD16_v2_ptds", cuMemsetD16_v2_ptds(va, 1, 16));
        r(
            "cuMemsetD32Async_ptsz",
            cuMemsetD32Async_ptsz(va, 1, 16, std::ptr::null_mut()),
        );
        let mut c = std::ptr::null_mut();
        r("cuCtxCreate", cuCtxCreate(&mut c, 0, 99));
        r(
            "cuCtxCreate_v3",
            cuCtxCreate_v3(&mut c, std::ptr::null_mut(), 0, 0, 99),
        );
        r(
            "cuCtxCreate_v4",
            cuCtxCreate_v4(&mut c, std::ptr::null_mut(), 0, 99),
        );
        r("cuCtxDestroy", cuCtxDestroy(bogus()));
        r("cuCtxPushCurrent", cuCtxPushCurrent(bogus()));
        // The stack holds the primary context only as current, not pushed: popping twice
        // empties it, and the second pop has nothing to pop.
        let mut popped = std::ptr::null_mut();
        let _ = cuCtxPopCurrent_v2(&mut popped);
        r("cuCtxPopCurrent", cuCtxPopCurrent(&mut popped));
        r(
            "cuDeviceGetUuid_v2",
            cuDeviceGetUuid_v2(std::ptr::null_mut(), 0),
        );
        r(
            "cuStreamCreateWithPriority",
            cuStreamCreateWithPriority(std::ptr::null_mut(), 0, 0),
        );
        assert_eq!(cuCtxSetCurrent(ctx), 0);
        r(
            "cuStreamSynchronize_ptsz",
            cuStreamSynchronize_ptsz(bogus()),
        );
        r("cuStreamQuery_ptsz", cuStreamQuery_ptsz(bogus()));
        r(
            "cuStreamWaitEvent_ptsz",
            cuStreamWaitEvent_ptsz(std::ptr::null_mut(), bogus(), 0),
        );
        r(
            "cuEventRecord_ptsz",
            cuEventRecord_ptsz(bogus(), std::ptr::null_mut()),
        );
        r(
            "cuEventElapsedTime",
            cuEventElapsedTime(std::ptr::null_mut(), bogus(), bogus()),
        );
        r(
            "cuGetProcAddress",
            cuGetProcAddress(std::ptr::null(), std::ptr::null_mut(), 13000, 0),
        );
        // Not emulated, nor is the _v2 its default runs.
        let code = cuGraphicsResourceSetMapFlags(std::ptr::null_mut(), 0);
        println!("NOT_EMULATED cuGraphicsResourceSetMapFlags {code}");
    }
    println!("RESULTS {}", results.join(","));
}

#[test]
fn a_delegating_export_says_why_once() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "delegation_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("CUMOCK_DELEGATION_CHILD", "1")
        .env("CUMOCK_MISUSE", "1")
        .env_remove("CUMOCK_STRICT")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the child failed:\n{stdout}\n{stderr}"
    );
    let results = stdout
        .lines()
        .find_map(|l| l.split_once("RESULTS ").map(|x| x.1))
        .unwrap_or_else(|| panic!("no results from the child:\n{stdout}"));
    let mut wrong = Vec::new();
    for (name, row) in DELEGATING_CALLS.iter().zip(results.split(',')) {
        let (called, code) = row.split_once(' ').unwrap();
        assert_eq!(called, *name);
        if code == "0" {
            wrong.push(format!("{name} succeeded; the test meant it to fail"));
            continue;
        }
        // The message names the export the program called, and says why, once.
        let said: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with(&format!("cumock: {name}: CUDA_ERROR_")))
            .collect();
        if said.len() != 1 {
            wrong.push(format!(
                "{name} (returned {code}) said {} times: {said:?}",
                said.len()
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{}\n--- stderr:\n{stderr}",
        wrong.join("\n")
    );
    assert_eq!(results.split(',').count(), DELEGATING_CALLS.len());
    // An older version the mock does not write runs its newest by default; when that is
    // not emulated either, the program is told so of the export it called.
    assert!(
        stdout.contains("NOT_EMULATED cuGraphicsResourceSetMapFlags 801"),
        "{stdout}"
    );
    let said = |name: &str| {
        let line = format!("cumock: {name} is not emulated; it returns CUDA_ERROR_NOT_SUPPORTED");
        stderr.lines().filter(|l| *l == line).count()
    };
    assert_eq!(said("cuGraphicsResourceSetMapFlags"), 1, "{stderr}");
    assert_eq!(said("cuGraphicsResourceSetMapFlags_v2"), 0, "{stderr}");
}
