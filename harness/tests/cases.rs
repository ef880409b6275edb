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
