//! An ordering bug of the virtual memory API under CUMOCK_MISUSE=1: cuMemUnmap of a
//! mapping a kernel wrote, with nothing ordering the unmap after the kernel, is reported
//! naming both; the same program synchronised first draws no report. The program is
//! tests/ordering_vmm.c.

mod common;

use std::process::Command;

fn run(mode: &str) -> String {
    static EXE: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let exe = EXE.get_or_init(|| {
        let dir = common::scratch(&format!("ordering-vmm-{}", std::process::id()));
        let exe = dir.join("ordering_vmm");
        let src = common::workspace().join("mock-driver/tests/ordering_vmm.c");
        let lib = common::mock_dir();
        common::build_c(&src, &exe, &["-g", "-L", lib.to_str().unwrap(), "-lcuda"]);
        exe
    });
    let out = Command::new(exe)
        .arg(mode)
        .env("LD_LIBRARY_PATH", common::mock_dir())
        .env("CUMOCK_MISUSE", "1")
        .env("CUMOCK_DEVICE_MEMORY", "64M")
        .output()
        .expect("running the program");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{mode}: {}\n{stderr}", out.status);
    stderr
}

#[test]
fn an_unmap_of_memory_a_kernel_wrote_unordered_is_reported_with_both_sites() {
    let err = run("unmap");
    let report = err
        .split("cumock: ordering bug: ")
        .find(|r| r.starts_with("cuMemUnmap frees memory that the launch of kernel put"))
        .unwrap_or_else(|| panic!("no report of the unmap:\n{err}"));
    // The report's own lines (a warning may follow it).
    let report: Vec<&str> = std::iter::once(report.lines().next().unwrap_or(""))
        .chain(
            report
                .lines()
                .skip(1)
                .take_while(|l| l.starts_with("cumock:   ")),
        )
        .collect();
    let report = report.join("\n");
    assert_eq!(
        report.matches(" main (").count(),
        2,
        "the unmap and the launch, both in main:\n{report}"
    );
}

#[test]
fn an_unmap_after_synchronising_draws_no_report() {
    let err = run("unmap-fixed");
    assert!(!err.contains("ordering bug"), "{err}");
}
