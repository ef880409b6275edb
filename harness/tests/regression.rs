//! The driver-regression check: `cumock diff` between two drivers' goldens. Only one
//! driver version is at hand, so the "new driver" is the H200 golden altered on purpose.

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn copy_golden(name: &str) -> PathBuf {
    let src = workspace().join("cases/goldens/NVIDIA_H200-580.159.04");
    let dst = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dst);
    std::fs::create_dir_all(&dst).unwrap();
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, dst.join(p.file_name().unwrap())).unwrap();
    }
    dst
}

fn alter(dir: &Path, case: &str, from: &str, to: &str) {
    let f = dir.join(format!("{case}.txt"));
    let text = std::fs::read_to_string(&f).unwrap();
    assert!(text.contains(from), "{case} has no {from:?}");
    std::fs::write(&f, text.replacen(from, to, 1)).unwrap();
}

fn diff(a: &Path, b: &Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cumock"))
        .arg("diff")
        .arg(a)
        .arg(b)
        .current_dir(workspace())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn a_driver_that_changed_one_result_is_caught_step_by_step() {
    let old = workspace().join("cases/goldens/NVIDIA_H200-580.159.04");
    let new = copy_golden("new-driver");
    // The new driver accepts a misaligned reservation size.
    alter(
        &new,
        "reserve-sizes",
        "reserve g+1 -> CUDA_ERROR_INVALID_VALUE",
        "reserve g+1 -> CUDA_SUCCESS aligned=yes",
    );
    let (ok, report) = diff(&old, &new);
    assert!(!ok, "an undeclared change must fail the check:\n{report}");
    assert!(report.contains("reserve-sizes: DIFFERS"), "{report}");
    assert!(
        report.contains("`reserve g+1`: A CUDA_ERROR_INVALID_VALUE, B CUDA_SUCCESS aligned=yes"),
        "{report}"
    );
    assert!(report.contains("1 differ (0 declared, 1 not)"), "{report}");
}

#[test]
fn identical_goldens_are_the_same_and_a_missing_case_is_named() {
    let old = workspace().join("cases/goldens/NVIDIA_H200-580.159.04");
    let new = copy_golden("same-driver");
    let (ok, report) = diff(&old, &new);
    assert!(ok, "{report}");
    assert!(report.contains("0 differ"), "{report}");
    std::fs::remove_file(new.join("map-alias.txt")).unwrap();
    let (ok, report) = diff(&old, &new);
    assert!(!ok);
    assert!(report.contains("map-alias: only in A"), "{report}");
}

#[test]
fn a_change_in_a_case_that_declares_a_divergence_is_reported_as_declared() {
    let old = workspace().join("cases/goldens/NVIDIA_H200-580.159.04");
    let new = copy_golden("declared-driver");
    // A driver that stopped crashing on a bogus handle.
    alter(
        &new,
        "release-bogus-handle",
        "end: crash: SIGSEGV",
        "  5: release 0xdeadbeef -> CUDA_ERROR_INVALID_VALUE\nend: completed",
    );
    let (ok, report) = diff(&old, &new);
    assert!(ok, "declared divergences do not fail the check:\n{report}");
    assert!(
        report.contains("release-bogus-handle: differs (declared)"),
        "{report}"
    );
}
