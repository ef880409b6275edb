//! Kernels nvcc really emits, on the mock: NVIDIA's VMM samples in spirit
//! (clients/c/vector_add_mmap.c, clients/c/ipc_kernels.c) with their kernels compiled by
//! nvcc 13.0 from clients/kernels/samples.cu into a fatbin of SASS and PTX, as a user
//! would build them; the mock runs the PTX.

mod common;

use std::path::PathBuf;
use std::process::Command;

/// nvcc 13.0 from the registry packages (ci/install-nvcc.sh installs it once).
fn nvcc() -> PathBuf {
    let out = Command::new(common::workspace().join("ci/install-nvcc.sh"))
        .output()
        .expect("running ci/install-nvcc.sh");
    assert!(
        out.status.success(),
        "ci/install-nvcc.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim()).join("bin/nvcc")
}

/// clients/kernels/samples.cu as a fatbin (sm_90 SASS + compute_90 PTX), built once.
fn samples_fatbin() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let out =
                common::scratch(&format!("kernels-{}", std::process::id())).join("samples.fatbin");
            let o = Command::new(nvcc())
                .args(["-fatbin", "-O3"])
                .args(["-gencode", "arch=compute_90,code=sm_90"])
                .args(["-gencode", "arch=compute_90,code=compute_90"])
                .arg(common::workspace().join("clients/kernels/samples.cu"))
                .arg("-o")
                .arg(&out)
                .output()
                .expect("running nvcc");
            assert!(
                o.status.success(),
                "nvcc failed: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            out
        })
        .clone()
}

fn run_client(name: &str, devices: usize) -> String {
    let exe = common::client(name);
    let out = Command::new(&exe)
        .arg(samples_fatbin())
        .env("LD_LIBRARY_PATH", common::mock_dir())
        .env("CUMOCK_DEVICES", devices.to_string())
        .env("CUMOCK_STRICT", "1")
        .env("CUMOCK_MISUSE", "1")
        .env("CUMOCK_LEAKS", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{name} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn vector_add_mmap_runs_vecadd_and_a_reduction_over_stripes_of_one_device() {
    let out = run_client("vector_add_mmap", 1);
    assert!(out.starts_with("ok 1 device(s), 2 stripes"), "{out}");
}

#[test]
fn vector_add_mmap_stripes_over_four_devices() {
    let out = run_client("vector_add_mmap", 4);
    assert!(out.starts_with("ok 4 device(s), 8 stripes"), "{out}");
}

#[test]
fn ipc_children_each_fill_their_slice_with_a_kernel() {
    let out = run_client("ipc_kernels", 1);
    assert!(out.starts_with("ok 3 children"), "{out}");
}

#[test]
fn a_kernel_writing_memory_without_access_poisons_the_device_as_on_the_h200() {
    // The fault is reported at the next synchronisation, and stays: the kernels probe's
    // fault sections (compared with the H200 in tests/probes.rs) cover the calls after it;
    // here, the message a user reads.
    let src = common::workspace().join("clients/probes/kernels.c");
    let dir = common::scratch(&format!("kernel-fault-{}", std::process::id()));
    let probe = dir.join("kernels_probe");
    let lib = common::mock_dir();
    common::build_c(&src, &probe, &["-L", lib.to_str().unwrap(), "-lcuda"]);
    let out = Command::new(&probe)
        .arg(common::workspace().join("clients/probes/kernels"))
        .env("LD_LIBRARY_PATH", &lib)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let section = stdout
        .split("## fault-no-access")
        .nth(1)
        .expect("the section ran");
    assert!(
        section.contains("launch write_one into a mapping without access = CUDA_SUCCESS"),
        "{section}"
    );
    assert!(
        section
            .contains("sync = CUDA_ERROR_ILLEGAL_ADDRESS\nsync again = CUDA_ERROR_ILLEGAL_ADDRESS"),
        "{section}"
    );
    // The message names the kernel, the thread, the PTX line, the address and the rule.
    let msg = stderr
        .lines()
        .find(|l| l.contains("kernel fault") && l.contains("has no read-write access"))
        .unwrap_or_else(|| panic!("no fault message in:\n{stderr}"));
    for part in [
        "`write_one`",
        "block (0,0,0)",
        "thread (0,0,0)",
        "PTX line",
        "st.global.u32",
        "device 0",
    ] {
        assert!(msg.contains(part), "`{part}` missing from: {msg}");
    }
}
