//! `CUMOCK_LENIENT=1`: what the real driver lets pass although CUDA forbids it. A map past
//! the end of its reservation is refused by default (with a message naming the setting)
//! and, leniently, behaves as on the H200: the whole transcript equals its golden.

mod common;

use std::process::Command;

fn transcript(lenient: bool) -> String {
    let dir = common::scratch(&format!("lenient-{lenient}-{}", std::process::id()));
    let case = common::workspace().join("cases/map-past-end.case");
    let mut cmd = Command::new(common::cumock());
    cmd.arg("run").arg(&case).arg("--transcripts").arg(&dir);
    if lenient {
        cmd.env("CUMOCK_LENIENT", "1");
    } else {
        cmd.env_remove("CUMOCK_LENIENT");
    }
    cmd.output().expect("running cumock");
    std::fs::read_to_string(dir.join("map-past-end.txt")).expect("the transcript")
}

#[test]
fn a_map_past_the_end_is_refused_unless_lenient() {
    let strict = transcript(false);
    assert!(
        strict.contains("map va+g size=2g handle=h -> CUDA_ERROR_INVALID_VALUE"),
        "{strict}"
    );
}

#[test]
fn leniently_a_map_past_the_end_behaves_as_on_the_h200() {
    let golden = std::fs::read_to_string(
        common::workspace().join("cases/goldens/NVIDIA_H200-580.159.04/map-past-end.txt"),
    )
    .unwrap();
    assert_eq!(transcript(true), golden);
}
