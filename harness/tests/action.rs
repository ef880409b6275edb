//! The GitHub Actions composite action's run step (ci/cumock-action.sh, called by
//! action.yml), run here as GitHub would: a command on the mock, its JUnit report and the
//! mock's leak report kept, a step summary and an exit code written.

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

struct Run {
    status: i32,
    summary: String,
    output: String,
    report: String,
    out: PathBuf,
}

fn action(name: &str, strict: bool) -> Run {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("action")
        .join(name);
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let out = tmp.join("report");
    let junit = tmp.join("junit.xml");
    // A conformance case through `cumock run` (a JUnit report), then a program that leaks
    // a reservation.
    let command = format!(
        "cumock run --no-golden --format junit cases/reserve-sizes.case > {junit} && \
         python3 -c \"import ctypes; c = ctypes.CDLL('libcuda.so.1'); c.cuInit(0); \
         va = ctypes.c_uint64(); \
         assert c.cuMemAddressReserve(ctypes.byref(va), ctypes.c_size_t(2 << 20), \
         ctypes.c_size_t(0), ctypes.c_uint64(0), ctypes.c_uint64(0)) == 0\"",
        junit = junit.display()
    );
    let bin = Path::new(env!("CARGO_BIN_EXE_cumock")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = Command::new(workspace().join("ci/cumock-action.sh"))
        .arg(&out)
        .arg(&command)
        .current_dir(workspace())
        .env("PATH", path)
        .env("GITHUB_STEP_SUMMARY", tmp.join("summary.md"))
        .env("GITHUB_OUTPUT", tmp.join("output"))
        .env("CUMOCK_ACTION_STRICT", strict.to_string())
        .env("CUMOCK_ACTION_JUNIT", &junit)
        .env_remove("CUMOCK_LIB")
        .output()
        .unwrap();
    let read = |p: PathBuf| std::fs::read_to_string(&p).unwrap_or_default();
    Run {
        status: o.status.code().unwrap_or(-1),
        summary: read(tmp.join("summary.md")),
        output: read(tmp.join("output")),
        report: read(out.join("cumock-report.txt")),
        out,
    }
}

#[test]
fn the_action_reports_tests_and_leaks_and_passes_without_strict() {
    let r = action("lenient", false);
    assert_eq!(r.status, 0, "{}", r.summary);
    assert_eq!(r.output.trim(), "exit-code=0");
    for line in [
        "| exit status | 0 |",
        "| tests | 1 tests: 1 passed, 0 failed, 0 errors, 0 skipped |",
        "| leaks | 1 |",
        "| misuse messages | 0 |",
    ] {
        assert!(r.summary.contains(line), "{line} not in:\n{}", r.summary);
    }
    assert!(
        r.report.contains("never freed (cuMemAddressFree)")
            && r.report.contains("cumock:       at "),
        "{}",
        r.report
    );
    assert!(
        r.out.join("junit.xml").is_file(),
        "the JUnit report is kept for upload"
    );
}

#[test]
fn under_strict_the_leak_fails_the_step() {
    let r = action("strict", true);
    assert_eq!(r.status, 86, "{}", r.summary);
    assert_eq!(r.output.trim(), "exit-code=86");
    assert!(r.summary.contains("| exit status | 86 |"), "{}", r.summary);
}

#[test]
fn action_yml_runs_the_tested_script_with_every_input() {
    let yml = std::fs::read_to_string(workspace().join("action.yml")).unwrap();
    assert!(yml.contains("ci/cumock-action.sh"));
    for input in ["leaks", "misuse", "strict", "devices", "fault", "junit"] {
        assert!(
            yml.contains(&format!("  {input}:\n"))
                && yml.contains(&format!("${{{{ inputs.{input} }}}}")),
            "input {input} is declared and passed on"
        );
    }
}
