//! The trap on host loads of page-locked memory (mock-driver/src/host_trap.rs) under
//! CUMOCK_MISUSE=1: a load of bytes a kernel wrote, before synchronising, is reported with
//! both sites and proceeds with the kernel's value; a fault at an address of the
//! program's own goes to the program's SIGSEGV handler installed before the mock's, or,
//! with none, ends the process by SIGSEGV. The program is tests/host_trap.c.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Output};

fn run(mode: &str) -> Output {
    static EXE: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let exe = EXE.get_or_init(|| {
        let dir = common::scratch(&format!("host-trap-{}", std::process::id()));
        let exe = dir.join("host_trap");
        let src = common::workspace().join("mock-driver/tests/host_trap.c");
        let lib = common::mock_dir();
        common::build_c(&src, &exe, &["-g", "-L", lib.to_str().unwrap(), "-lcuda"]);
        exe
    });
    Command::new(exe)
        .arg(mode)
        .env("LD_LIBRARY_PATH", common::mock_dir())
        .env("CUMOCK_MISUSE", "1")
        .env("CUMOCK_DEVICE_MEMORY", "64M")
        .output()
        .expect("running the program")
}

fn check_report(out: &Output) {
    check_report_in(out, "main", "main");
}

/// The report of the load, naming the launch in `launched_in` and the load in `loaded_in`.
fn check_report_in(out: &Output, launched_in: &str, loaded_in: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("loaded 7"), "{stdout}\n{stderr}");
    assert!(!stdout.contains("not reached"), "{stdout}");
    let report = stderr
        .split("cumock: ordering bug: ")
        .find(|r| r.starts_with("the host loaded bytes that the launch of kernel put writes"))
        .unwrap_or_else(|| panic!("no report of the load:\n{stderr}"));
    assert!(report.contains("host_trap.c:"), "{report}");
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
    let (launch, load) = report.split_once(" was issued").expect("the launch's site");
    let _ = launch;
    assert!(
        load.contains(&format!(" {launched_in} (")) && report.contains(&format!(" {loaded_in} (")),
        "the load in {loaded_in} and the launch in {launched_in}:\n{report}"
    );
    assert_eq!(
        report.matches("host_trap.c:").count(),
        2,
        "two sites in the program:\n{report}"
    );
}

#[test]
fn a_host_functions_load_unordered_after_the_kernel_is_reported() {
    let out = run("host-function");
    check_report_in(&out, "main", "reader");
    assert!(out.status.success(), "{:?}", out.status);
}

#[test]
fn a_fault_of_the_program_goes_to_its_own_handler() {
    let out = run("chain");
    check_report(&out);
    assert_eq!(out.status.code(), Some(3), "{:?}", out.status);
    assert!(String::from_utf8_lossy(&out.stderr).contains("own handler"));
}

#[test]
fn a_fault_of_the_program_without_a_handler_ends_it_by_sigsegv() {
    let out = run("default");
    check_report(&out);
    assert_eq!(out.status.signal(), Some(libc::SIGSEGV), "{:?}", out.status);
}
