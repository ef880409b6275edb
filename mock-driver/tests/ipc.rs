//! Legacy IPC between processes: the pools_ipc probe's parent hands its cuIpcGetMemHandle
//! handle to re-executed children, which open it, read the parent's word and write their
//! own. Here through the exporter's fd service (CUMOCK_IPC=socket), the path taken where
//! pidfd_getfd is refused (probes.rs runs the same probe with pidfd_getfd first).

mod common;

fn run_pools_ipc(env: &[(&str, &str)]) -> String {
    let dir = common::scratch(&format!("ipc-{}", std::process::id()));
    let exe = dir.join("pools_ipc");
    let src = common::workspace().join("clients/probes/pools_ipc.c");
    let lib = common::mock_dir();
    common::build_c(&src, &exe, &["-L", lib.to_str().unwrap(), "-lcuda", "-ldl"]);
    let out = std::process::Command::new(&exe)
        .env("LD_LIBRARY_PATH", &lib)
        .envs(env.iter().copied())
        .output()
        .expect("running the probe");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("text")
}

#[test]
fn children_share_the_parents_bytes_through_the_fd_service() {
    let out = run_pools_ipc(&[("CUMOCK_IPC", "socket")]);
    for want in [
        "  child A: ipc-open = CUDA_SUCCESS",
        "    child A reads 0xab0000a1",
        "  parent: word 1 after child A reads 0xc0de0041",
        "    child B reads 0xab0000a2",
        "  parent: word 1 after child B reads 0xc0de0042",
        "    second open equals the first",
        // Freed memory: its fd closed with it, so the handle opens nothing.
        "  child C: ipc-open = CUDA_ERROR_INVALID_VALUE",
    ] {
        assert!(out.lines().any(|l| l == want), "no `{want}` in:\n{out}");
    }
}
