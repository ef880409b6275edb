//! Legacy IPC between processes: the pools_ipc probe's parent hands its cuIpcGetMemHandle
//! handle to re-executed children, which open it, read the parent's word and write their
//! own, through the exporter's fd service (the only way to the memory); and handles forged
//! from what /proc shows, opened by another process, open nothing.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `command` to its end, killing it (and failing the test) after `limit`: a hang is a
/// failure, not a stuck test run.
fn output_within(command: &mut Command, limit: Duration) -> Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting the program");
    let start = Instant::now();
    while child.try_wait().expect("waiting").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("collecting");
            panic!(
                "still running after {limit:?}; killed. stdout:\n{}\nstderr:\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("collecting")
}

fn run_c(src: &Path, name: &str) -> String {
    let dir = common::scratch(&format!("ipc-{}", std::process::id()));
    let exe = dir.join(name);
    let lib = common::mock_dir();
    common::build_c(src, &exe, &["-L", lib.to_str().unwrap(), "-lcuda", "-ldl"]);
    let out = output_within(
        Command::new(&exe).env("LD_LIBRARY_PATH", &lib),
        Duration::from_secs(60),
    );
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("text")
}

#[test]
fn children_share_the_parents_bytes_through_the_fd_service() {
    let out = run_c(
        &common::workspace().join("clients/probes/pools_ipc.c"),
        "pools_ipc",
    );
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

/// Pool IPC's export data altered by the importer (another pool, a longer range, the fd
/// of a legacy IPC export or any other fd of the exporter) maps nothing: the exporter's fd
/// service serves a pool's chunks only for the pool's secret, which only the holder of
/// the pool's fd learns; the real data still maps the exporter's bytes.
#[test]
fn forged_pool_export_data_maps_nothing_in_another_process() {
    let out = run_c(
        &common::workspace().join("mock-driver/tests/pool_ipc_forged.c"),
        "pool_ipc_forged",
    );
    for want in [
        "import pool = CUDA_SUCCESS",
        "another pool = CUDA_ERROR_INVALID_VALUE",
        "a longer range = CUDA_ERROR_INVALID_VALUE",
        "the fd of a cuIpcGetMemHandle export = CUDA_ERROR_INVALID_VALUE",
        "another fd number = CUDA_ERROR_INVALID_VALUE",
        "the real data = CUDA_SUCCESS",
        "child reads 0x12345678",
        "free = CUDA_SUCCESS",
        "child exit 0",
    ] {
        assert!(out.lines().any(|l| l == want), "no `{want}` in:\n{out}");
    }
}

/// Every field of a real handle altered, and handles of VMM memory the exporter gave to
/// nobody, opened by another process: CUDA_ERROR_INVALID_VALUE each (the H200's answer for
/// a junk handle), while the real handle opens, even with a stalled client on the fd
/// service. The exporter never lets others ptrace it (a seccomp trap counts
/// prctl(PR_SET_PTRACER) calls), so pidfd_getfd cannot take its fds where Yama is on.
#[test]
fn forged_handles_open_nothing_in_another_process() {
    let out = run_c(
        &common::workspace().join("mock-driver/tests/ipc_forged.c"),
        "ipc_forged",
    );
    let mut want = vec![
        "the trap counts a PR_SET_PTRACER call: yes".to_owned(),
        "stalled client connected: yes".to_owned(),
        "open real = CUDA_SUCCESS".to_owned(),
        "real open took under 0.5 s: yes".to_owned(),
        "child reads 0xfeed0001".to_owned(),
        "child exit 0".to_owned(),
        "PR_SET_PTRACER calls in the exporter: 0".to_owned(),
    ];
    for forged in [
        "pid altered",
        "fd altered",
        "inode altered",
        "size altered",
        "secret altered (one bit)",
        "secret zero",
        "trailing bytes altered",
        "vmm fd with the real secret",
        "vmm fd with a zero secret",
        "stdin with the real secret",
    ] {
        want.push(format!("open {forged} = CUDA_ERROR_INVALID_VALUE"));
    }
    // Under Yama (ptrace_scope 1 or more) a child may not ptrace its parent unless the
    // parent allowed it: the fd stays the exporter's. Without Yama the kernel lets any
    // process of the user take it (and read its memory): nothing a library can change.
    let yama = std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope")
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok());
    match yama {
        Some(scope) if scope >= 1 => {
            want.push("pidfd_getfd of the exporter's fd: refused".to_owned())
        }
        _ => eprintln!(
            "no Yama here: pidfd_getfd between processes of a user is the kernel's to allow"
        ),
    }
    for w in &want {
        assert!(out.lines().any(|l| l == w), "no `{w}` in:\n{out}");
    }
}

unsafe extern "C" fn sleep_a_while(_: *mut std::ffi::c_void) {
    std::thread::sleep(Duration::from_millis(150));
}

/// Another process waits on an interprocess event through an event of its own, complete
/// at once (cuIpcOpenEventHandle): so a record of one returns only once the work before
/// it has run, where an ordinary event's record returns at once (cuda-samples simpleIPC:
/// without this, a sibling process's kernel ran before this one's had written its
/// buffer).
#[test]
fn a_record_of_an_interprocess_event_returns_once_the_work_before_it_ran() {
    use cuda::exports::*;
    // Safety: live locals; a host function that only sleeps.
    unsafe {
        assert_eq!(cuInit(0), 0);
        let mut ctx: cumock_abi::CUcontext = std::ptr::null_mut();
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
        let mut s: cumock_abi::CUstream = std::ptr::null_mut();
        assert_eq!(cuStreamCreate(&mut s, 1), 0);
        // CU_EVENT_DISABLE_TIMING, then with CU_EVENT_INTERPROCESS.
        for (flags, done_at_return) in [(0x2, false), (0x6, true)] {
            let mut e: cumock_abi::CUevent = std::ptr::null_mut();
            assert_eq!(cuEventCreate(&mut e, flags), 0);
            let start = Instant::now();
            assert_eq!(
                cuLaunchHostFunc(s, Some(sleep_a_while), std::ptr::null_mut()),
                0
            );
            assert_eq!(cuEventRecord(e, s), 0);
            let query = cuEventQuery(e);
            if done_at_return {
                assert_eq!(query, 0, "the interprocess event is reached at return");
                assert!(start.elapsed() >= Duration::from_millis(150));
            } else {
                assert_eq!(query, 600, "an ordinary event: CUDA_ERROR_NOT_READY");
            }
            assert_eq!(cuStreamSynchronize(s), 0);
            assert_eq!(cuEventDestroy_v2(e), 0);
        }
        assert_eq!(cuStreamDestroy_v2(s), 0);
    }
}
