//! Record and replay: the pass-through driver, installed over a driver (here the mock
//! stands in for NVIDIA's, which CI does not have), records an allocator's calls; the
//! trace becomes a case; the case replays with the results the trace recorded.

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn cumock() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cumock"));
    c.current_dir(workspace());
    c
}

#[test]
fn an_allocator_traced_over_a_driver_replays_as_a_case() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("trace");
    std::fs::create_dir_all(&dir).unwrap();
    let include = std::env::var_os("CUMOCK_CUDA_INCLUDE")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target/cuda-headers/nvidia/cu13/include"));
    assert!(
        include.join("cuda.h").is_file(),
        "cuda.h is not in {}: run ci/test.sh",
        include.display()
    );
    // The "real" driver: the mock, by absolute path.
    let lib = String::from_utf8(cumock().arg("lib-path").output().unwrap().stdout).unwrap();
    let real = std::fs::canonicalize(Path::new(lib.trim()).join("libcuda.so.1")).unwrap();
    let exe = dir.join("expandable_segments");
    let target = "x86_64-unknown-linux-gnu";
    let mut cc = cc::Build::new()
        .target(target)
        .host(target)
        .opt_level(1)
        .cargo_metadata(false)
        .get_compiler()
        .to_command();
    let st = cc
        .arg("-I")
        .arg(&include)
        .arg(workspace().join("clients/c/expandable_segments.c"))
        .arg("-o")
        .arg(&exe)
        .arg("-L")
        .arg(lib.trim())
        .arg("-lcuda")
        .status()
        .unwrap();
    assert!(st.success());
    let trace = dir.join("trace.jsonl");
    let _ = std::fs::remove_file(&trace);
    let o = cumock()
        .args(["trace", "--out"])
        .arg(&trace)
        .arg("--driver")
        .arg(&real)
        .arg("--")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let lines = std::fs::read_to_string(&trace).unwrap();
    assert!(
        lines.lines().any(|l| l.contains("\"fn\":\"cuMemMap\"")),
        "no cuMemMap in the trace"
    );
    let case = dir.join("traced.case");
    let o = cumock()
        .arg("trace2case")
        .arg(&trace)
        .arg("--out")
        .arg(&case)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&case).unwrap();
    assert!(
        text.contains("va1 = reserve") && text.contains("map va"),
        "{text}"
    );
    // Every step expects what the traced driver returned; the mock must agree.
    let o = cumock()
        .args(["run", "--no-golden"])
        .arg(&case)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
}

/// The mock's own trace (`cumock exec --trace`) is the same event as the pass-through
/// driver's: a program traced on the mock becomes a case that replays on it.
#[test]
fn a_program_traced_on_the_mock_replays_as_a_case() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mock-trace");
    std::fs::create_dir_all(&dir).unwrap();
    let include = std::env::var_os("CUMOCK_CUDA_INCLUDE")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target/cuda-headers/nvidia/cu13/include"));
    let lib = String::from_utf8(cumock().arg("lib-path").output().unwrap().stdout).unwrap();
    let exe = dir.join("buggy_allocator");
    let target = "x86_64-unknown-linux-gnu";
    let st = cc::Build::new()
        .target(target)
        .host(target)
        .opt_level(1)
        .cargo_metadata(false)
        .get_compiler()
        .to_command()
        .arg("-I")
        .arg(&include)
        .arg(workspace().join("clients/c/buggy_allocator.c"))
        .arg("-o")
        .arg(&exe)
        .arg("-L")
        .arg(lib.trim())
        .arg("-lcuda")
        .status()
        .unwrap();
    assert!(st.success());
    let trace = dir.join("trace.jsonl");
    let _ = std::fs::remove_file(&trace);
    let o = cumock()
        .args(["exec", "--trace"])
        .arg(&trace)
        .arg("--")
        .arg(&exe)
        .arg("clean")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines = std::fs::read_to_string(&trace).unwrap();
    // Readable: handles by name, enums by name.
    assert!(
        lines.contains(r#""out":{"handle":"handle#1"}"#)
            && lines.contains(r#""option":"CU_MEM_ALLOC_GRANULARITY_MINIMUM""#),
        "{lines}"
    );
    let case = dir.join("traced.case");
    let o = cumock()
        .arg("trace2case")
        .arg(&trace)
        .arg("--out")
        .arg(&case)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&case).unwrap();
    assert!(
        text.contains("h1 = create 2MiB device=0 handle-types=1") && text.contains("release h1"),
        "{text}"
    );
    let o = cumock()
        .args(["run", "--no-golden"])
        .arg(&case)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
}

#[test]
fn the_pytorch_trace_from_the_h200_replays_on_the_mock() {
    let o = cumock()
        .args([
            "run",
            "cases/trace-pytorch-expandable-segments.case",
            "cases/trace-cuda-core-vmr.case",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && text.contains("compared with golden"),
        "{text}"
    );
}
