//! Every case file of the suite against the mock, each transcript kept as an insta
//! snapshot (a change of the mock's behaviour shows in review); and the whole suite
//! against the committed H200 goldens.

use cumock::transcript::Transcript;
use rstest::rstest;
use std::path::{Path, PathBuf};
use std::process::Command;

fn cumock() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cumock"))
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

#[rstest]
fn case_on_the_mock(#[files("../cases/*.case")] path: PathBuf) {
    let out = cumock()
        .args(["run", "--no-golden", "--format", "json"])
        .arg(&path)
        .current_dir(workspace())
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let r = &report[0];
    assert_eq!(
        r["status"],
        "pass",
        "{}: {}",
        path.display(),
        serde_json::to_string_pretty(&r["problems"]).unwrap()
    );
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    let transcript: Transcript = serde_json::from_value(r["transcript"].clone()).unwrap();
    let text = transcript.render_snapshot();
    insta::with_settings!({ snapshot_path => "snapshots", prepend_module_to_snapshot => false, omit_expression => true }, {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn the_mock_matches_the_h200_goldens_but_for_declared_divergences() {
    let out = cumock()
        .args(["run"])
        .current_dir(workspace())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("compared with golden"), "{text}");
    let cases = std::fs::read_dir(workspace().join("cases"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "case")
        })
        .count();
    assert!(cases >= 80, "only {cases} cases");
}

/// A case that a golden set has no transcript of, and that expects nothing itself, is
/// reported as unchecked, not as a pass; one with expected results still passes on them.
#[test]
fn a_case_no_golden_and_no_expectation_checks_is_unchecked() {
    let dir = tempfile::tempdir().unwrap();
    let goldens = dir.path().join("goldens");
    std::fs::create_dir(&goldens).unwrap();
    let bare = dir.path().join("bare.case");
    std::fs::write(
        &bare,
        "# expects nothing\ninit\ng = granularity min device=0\n",
    )
    .unwrap();
    let expecting = dir.path().join("expecting.case");
    std::fs::write(&expecting, "# expects success\ninit -> CUDA_SUCCESS\n").unwrap();
    let out = cumock()
        .args(["run", "--format", "json", "--golden"])
        .arg(&goldens)
        .arg(&bare)
        .arg(&expecting)
        .current_dir(workspace())
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let status = |name: &str| {
        report
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["case"] == name)
            .map(|r| r["status"].clone())
    };
    assert_eq!(status("bare"), Some("unchecked".into()), "{report}");
    assert_eq!(status("expecting"), Some("pass".into()), "{report}");
    let text = cumock()
        .args(["run", "--golden"])
        .arg(&goldens)
        .arg(&bare)
        .current_dir(workspace())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.trim_end()
            .ends_with("0 passed, 0 failed, 0 skipped, 1 unchecked"),
        "{text}"
    );
}
