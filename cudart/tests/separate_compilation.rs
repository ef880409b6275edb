//! Programs built with separate compilation (`nvcc -rdc=true`, NVIDIA's sample
//! simpleSeparateCompilation's build): nvlink links the objects' cubins into one image of
//! SASS, which the mock cannot run; the device-link wrapper also carries each object's own
//! fatbin, and where those hold PTX (`code=compute_90`) the runtime links them with the
//! driver's linker instead. tests/rdc/main.cu and library.cu call, point to and set each
//! other's device code across the link.

mod common;

use std::path::PathBuf;
use std::process::Command;

/// tests/rdc/main.cu and library.cu compiled with `-rdc=true` and the given code options.
fn build(exe_name: &str, gencode: &[&str]) -> PathBuf {
    let root = common::toolkit();
    let dir = common::workspace().join("cudart/tests/rdc");
    let exe = common::scratch("rdc").join(exe_name);
    let o = Command::new(root.join("bin/nvcc"))
        .args(["-cudart", "shared", "-rdc=true"])
        .args(gencode)
        .arg("-L")
        .arg(root.join("lib"))
        .arg(dir.join("main.cu"))
        .arg(dir.join("library.cu"))
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("running nvcc");
    assert!(
        o.status.success(),
        "nvcc -rdc=true failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    exe
}

#[test]
fn a_device_linked_program_runs_from_its_objects_ptx() {
    let exe = build(
        "rdc_ptx",
        &["-arch=sm_90", "-gencode", "arch=compute_90,code=compute_90"],
    );
    let o = common::on_mock(&exe).output().unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(
        o.status.success(),
        "{}\n--- stdout\n{out}\n--- stderr\n{err}",
        o.status
    );
    assert!(
        out.ends_with("1000 values checked, 0 wrong\n"),
        "--- stdout\n{out}"
    );
    // The mock says once that the SASS image did not load (it cannot know the runtime
    // goes on without it); what it says must not tell the user that the program they
    // just ran cannot run.
    for line in err.lines().filter(|l| l.contains("failed to load")) {
        assert!(
            line.contains("cumock's runtime links the objects' own PTX")
                && !line.contains("separate compilation"),
            "--- stderr\n{err}"
        );
    }
}

/// Objects compiled to SASS only leave nothing the mock can run: the launch fails with
/// cudaErrorNoKernelImageForDevice, and the reason (under CUMOCK_MISUSE, which shows the
/// runtime's messages) says that linking the objects found no PTX either.
#[test]
fn a_device_linked_program_without_ptx_is_told_why() {
    let exe = build("rdc_sass", &["-gencode", "arch=compute_90,code=sm_90"]);
    let o = common::on_mock(&exe)
        .env("CUMOCK_MISUSE", "1")
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "--- stdout\n{out}\n--- stderr\n{err}"
    );
    assert!(
        out.contains("launch_fill(d, n) -> cudaErrorNoKernelImageForDevice")
            || out.contains("set_bias(7) -> cudaErrorNoKernelImageForDevice"),
        "--- stdout\n{out}"
    );
    assert!(
        err.contains("linking the objects' own fatbins instead failed"),
        "--- stderr\n{err}"
    );
}
