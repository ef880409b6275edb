//! The harness facing drivers that crash, hang, or return garbage: each case becomes a
//! transcript that says so, and the run goes on.

use std::path::{Path, PathBuf};
use std::process::Command;

fn build(kind: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bad-drivers");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(format!("libcuda-{kind}.so"));
    let target = "x86_64-unknown-linux-gnu";
    let mut cc = cc::Build::new()
        .target(target)
        .host(target)
        .opt_level(0)
        .cargo_metadata(false)
        .get_compiler()
        .to_command();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/bad_driver.c");
    let st = cc
        .args([
            "-shared",
            "-fPIC",
            &format!("-DBAD_{}", kind.to_uppercase()),
        ])
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap();
    assert!(st.success());
    out
}

fn run(driver: &Path, cases: &[&str], timeout: &str) -> (serde_json::Value, bool) {
    let ws = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cumock"))
        .args(["run", "--format", "json", "--timeout", timeout, "--driver"])
        .arg(driver)
        .args(
            cases
                .iter()
                .map(|c| ws.join("cases").join(format!("{c}.case"))),
        )
        .output()
        .unwrap();
    (
        serde_json::from_slice(&out.stdout).unwrap(),
        out.status.success(),
    )
}

#[test]
fn a_segfaulting_driver_is_recorded_as_a_crash_and_the_run_goes_on() {
    let lib = build("crash");
    let (report, ok) = run(&lib, &["init-flags", "driver-version"], "20");
    assert!(!ok);
    let outcomes: Vec<_> = report
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["transcript"]["outcome"].clone())
        .collect();
    assert_eq!(outcomes.len(), 2);
    for o in outcomes {
        assert_eq!(o["crash"]["signal"], "SIGSEGV", "{o}");
    }
}

#[test]
fn a_hanging_driver_times_out_and_the_run_goes_on() {
    let lib = build("hang");
    let t = std::time::Instant::now();
    let (report, ok) = run(&lib, &["init-flags", "init-required"], "1");
    assert!(!ok);
    assert!(
        t.elapsed().as_secs() < 15,
        "the timeout did not stop the hung case"
    );
    for r in report.as_array().unwrap() {
        assert_eq!(r["transcript"]["outcome"]["timeout"]["seconds"], 1, "{r}");
    }
    // init-required's first steps ran before cuInit hung: they are in the transcript.
    let steps = report[1]["transcript"]["steps"].as_array().unwrap();
    assert!(!steps.is_empty());
}

#[test]
fn a_driver_returning_garbage_gives_a_transcript_not_a_harness_crash() {
    let lib = build("garbage");
    let (report, ok) = run(
        &lib,
        &["device-basics", "reserve-sizes", "error-names"],
        "20",
    );
    assert!(!ok, "the garbage driver must fail its expectations");
    for r in report.as_array().unwrap() {
        let o = &r["transcript"]["outcome"];
        assert!(o == "completed" || o.get("harness-error").is_some(), "{r}");
    }
    let text = serde_json::to_string(&report).unwrap();
    assert!(
        text.contains("CUresult(987654)"),
        "an unknown code is shown as a number"
    );
}

#[test]
fn a_case_cannot_aim_a_driver_at_memory_outside_its_own_regions() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("evil");
    std::fs::create_dir_all(&dir).unwrap();
    let case = dir.join("evil.case");
    std::fs::write(
        &case,
        "init\nctx = primary-retain 0\nset-current ctx\ncopy 0x1000 0x2000 16 unified=1\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cumock"))
        .args(["run", "--no-golden", "--format", "json"])
        .arg(&case)
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let outcome = &report[0]["transcript"]["outcome"];
    assert!(
        outcome["harness-error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("not in a region of this case"),
        "{outcome}"
    );
}
