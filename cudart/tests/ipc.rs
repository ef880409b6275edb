//! The runtime's own IPC handles (made over a driver without cuIpcGetMemHandle) against
//! forgery: another process opening a handle with any field altered, an offset outside the
//! allocation (2^63 among them) or VMM memory the exporter gave to nobody gets
//! cudaErrorInvalidValue; the real handle opens, even with a stalled client on the
//! exporter's fd service; and the exporter never lets others ptrace it (a seccomp trap
//! counts prctl(PR_SET_PTRACER) calls).

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn forged_runtime_handles_open_nothing_in_another_process() {
    let root = common::toolkit();
    let lib = common::lib_dir();
    let exe = common::scratch("ipc").join("ipc_forged");
    let target = "x86_64-unknown-linux-gnu";
    let compiled = cc::Build::new()
        .target(target)
        .host(target)
        .opt_level(1)
        .cargo_metadata(false)
        .get_compiler()
        .to_command()
        .args(["-std=gnu11", "-Wall", "-I"])
        .arg(root.join("include"))
        .arg(common::workspace().join("cudart/tests/ipc_forged.c"))
        .arg("-o")
        .arg(&exe)
        .arg("-L")
        .arg(&lib)
        .args(["-lcudart", "-lcuda"])
        .output()
        .expect("running the C compiler");
    assert!(
        compiled.status.success(),
        "{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    // The mock has cuIpcGetMemHandle; answering NOT_SUPPORTED to the runtime's first call
    // (its question whether the driver has it) makes the runtime's own handles.
    let mut child = common::on_mock(&exe)
        .env(
            "CUMOCK_FAULT",
            "cuIpcGetMemHandle:1:CUDA_ERROR_NOT_SUPPORTED",
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running the program");
    let start = Instant::now();
    while child.try_wait().expect("waiting").is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("ipc_forged still running after 60 s; killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("collecting");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut want = vec![
        "the runtime's own handle: yes".to_owned(),
        "stalled client connected: yes".to_owned(),
        "open real = cudaSuccess".to_owned(),
        "real open took under 0.5 s: yes".to_owned(),
        "child reads 0x77 at the handle's offset".to_owned(),
        "child exit 0".to_owned(),
        "the trap counts a PR_SET_PTRACER call: yes".to_owned(),
        "PR_SET_PTRACER calls in the exporter: 0".to_owned(),
    ];
    for forged in [
        "pid altered",
        "fd altered",
        "size altered",
        "size zero",
        "offset 2^63",
        "offset at the end",
        "secret altered (one bit)",
        "secret zero",
        "inode altered",
        "trailing bytes altered",
        "vmm fd with the real secret",
        "vmm fd with a zero secret",
    ] {
        want.push(format!("open {forged} = cudaErrorInvalidValue"));
    }
    for w in &want {
        assert!(stdout.lines().any(|l| l == w), "no `{w}` in:\n{stdout}");
    }
}

/// A pool shared with another process through the runtime (cudaMemPoolExportToShareableHandle
/// and the three others, passed on to the driver), as NVIDIA's streamOrderedAllocationIPC
/// sample uses them: the re-exec'd importer reads the exporter's bytes and writes its own.
#[test]
fn a_pool_shared_through_the_runtime_maps_the_same_bytes() {
    let root = common::toolkit();
    let lib = common::lib_dir();
    let exe = common::scratch("ipc").join("pool_ipc");
    let target = "x86_64-unknown-linux-gnu";
    let compiled = cc::Build::new()
        .target(target)
        .host(target)
        .opt_level(1)
        .cargo_metadata(false)
        .get_compiler()
        .to_command()
        .args(["-std=gnu11", "-Wall", "-I"])
        .arg(root.join("include"))
        .arg(common::workspace().join("cudart/tests/pool_ipc.c"))
        .arg("-o")
        .arg(&exe)
        .arg("-L")
        .arg(&lib)
        .args(["-lcudart", "-lcuda"])
        .output()
        .expect("running the C compiler");
    assert!(
        compiled.status.success(),
        "{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let mut child = common::on_mock(&exe)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running the program");
    let start = Instant::now();
    while child.try_wait().expect("waiting").is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("pool_ipc still running after 60 s; killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("collecting");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for want in [
        "export pool = cudaSuccess",
        "export pointer = cudaSuccess",
        "child: import pool = cudaSuccess",
        "child: import pointer = cudaSuccess",
        "child reads 0x5a5a5a5a",
        "child: free = cudaSuccess",
        "child exit 0",
        "parent reads 0x5a5a5a5a 0xc0de0001",
        "destroy pool = cudaSuccess",
    ] {
        assert!(
            stdout.lines().any(|l| l == want),
            "no `{want}` in:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
