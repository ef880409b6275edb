//! What the mock bounds in device graphs where a GPU would run on
//! (tests/device_graphs/bounds.cu, never run on a GPU): fire-and-forget launches nested
//! deeper than 24 are refused (each runs on the stream worker's stack), and a graph that
//! relaunches itself without end ends as a timed-out launch once CUMOCK_KERNEL_TIMEOUT
//! passes, so the host's synchronisation returns.

mod common;

use std::process::Command;

#[test]
fn nested_fire_and_forget_and_endless_tail_launches_are_bounded() {
    let root = common::toolkit();
    let exe = common::scratch("device_graphs").join("bounds");
    let o = Command::new(root.join("bin/nvcc"))
        .args(["-cudart", "shared", "-rdc=true", "-arch=sm_90"])
        .args(["-gencode", "arch=compute_90,code=compute_90", "-L"])
        .arg(root.join("lib"))
        .arg(common::workspace().join("cudart/tests/device_graphs/bounds.cu"))
        .args(["-lcudadevrt", "-o"])
        .arg(&exe)
        .output()
        .expect("running nvcc");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = common::on_mock(&exe)
        .env("CUMOCK_KERNEL_TIMEOUT", "2")
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{out}\n{err}");
    assert!(
        out.contains(
            "nested fire-and-forget: sync cudaSuccess, deepest level 24, first refusal 1\n"
        ),
        "{out}\n{err}"
    );
    assert!(
        out.contains(
            "self-relaunching graph: sync cudaErrorLaunchTimeout, ran more than once: yes\n"
        ),
        "{out}\n{err}"
    );
    assert!(err.contains("CUMOCK_KERNEL_TIMEOUT"), "{err}");
}
