//! The runtime's diagnostics on a real program: the leak report (CUMOCK_LEAKS), fault
//! injection (CUMOCK_FAULT) and the trace (CUMOCK_TRACE), which the runtime appends to
//! the driver's file.

mod common;

use std::sync::OnceLock;

fn leaky() -> std::path::PathBuf {
    static EXE: OnceLock<std::path::PathBuf> = OnceLock::new();
    EXE.get_or_init(|| common::nvcc("leaky")).clone()
}

#[test]
fn the_leak_report_names_what_was_not_freed() {
    let o = common::on_mock(&leaky())
        .env("CUMOCK_LEAKS", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("the CUDA runtime's leak report, 5 at exit"),
        "{err}"
    );
    for what in [
        "device memory",
        "(2000 bytes, device 0) never freed (cudaFree)",
        "pinned host memory",
        "(3000 bytes) never freed (cudaFreeHost)",
        "never destroyed (cudaStreamDestroy)",
        "never destroyed (cudaEventDestroy)",
        "never freed (cudaFreeAsync)",
    ] {
        assert!(
            err.contains(what),
            "the report does not say {what:?}:\n{err}"
        );
    }
    assert!(
        !err.contains("1000 bytes"),
        "the freed allocation is reported:\n{err}"
    );
}

#[test]
fn no_report_unless_asked() {
    let o = common::on_mock(&leaky()).output().unwrap();
    assert!(!String::from_utf8_lossy(&o.stderr).contains("leak report"));
}

#[test]
fn a_planned_fault_fails_the_nth_call() {
    let o = common::on_mock(&leaky())
        .env("CUMOCK_FAULT", "cudaMalloc:2:cudaErrorMemoryAllocation")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("cudaMalloc(&a, 1000) -> cudaSuccess"), "{out}");
    assert!(
        out.contains("cudaMalloc(&b, 2000) -> cudaErrorMemoryAllocation"),
        "{out}"
    );
    assert!(
        out.contains("cudaMallocHost(&h, 3000) -> cudaSuccess"),
        "{out}"
    );
}

#[test]
fn the_trace_has_runtime_and_driver_lines_in_one_file() {
    let trace = common::scratch("trace").join(format!("trace-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&trace);
    let o = common::on_mock(&leaky())
        .env("CUMOCK_TRACE", &trace)
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = std::fs::read_to_string(&trace).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let runtime: Vec<&str> = lines
        .iter()
        .filter(|l| l["layer"] == "runtime")
        .map(|l| l["fn"].as_str().unwrap())
        .collect();
    assert_eq!(
        runtime,
        [
            "cudaMalloc",
            "cudaMalloc",
            "cudaMallocHost",
            "cudaStreamCreate",
            "cudaEventCreate",
            "cudaMallocAsync",
            "cudaStreamSynchronize",
            "cudaFree"
        ]
    );
    assert!(
        lines
            .iter()
            // cudaMalloc's driver call: cuMemAlloc over a driver with legacy IPC (the
            // mock's, now), cuMemCreate over one without (memory.rs: malloc_over_vmm).
            .any(|l| (l["fn"] == "cuMemAlloc_v2" || l["fn"] == "cuMemCreate")
                && l.get("layer").is_none()),
        "no driver line in {text}"
    );
    let first = lines.iter().find(|l| l["layer"] == "runtime").unwrap();
    assert_eq!(first["result"], "cudaSuccess");
    // Arguments by type, as the driver's lines write theirs: the size a number, the
    // pointer an address in hex.
    assert_eq!(first["args"]["size"], 1000, "{first}");
    let at = first["args"]["dev_ptr"].as_str().unwrap_or_default();
    assert!(
        at.starts_with("0x") && u64::from_str_radix(&at[2..], 16).is_ok(),
        "{first}"
    );
}
