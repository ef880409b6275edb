//! The suite against the system's real libcuda.so.1, where an NVIDIA GPU and driver are
//! present; elsewhere each test says why it skips. Binaries come from
//! `cargo build --release` (or a debug build) of this workspace.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Why there is no real driver here, or None when there is one.
fn no_driver_reason() -> Option<String> {
    if !Path::new("/proc/driver/nvidia/version").exists() {
        return Some("no NVIDIA kernel driver (/proc/driver/nvidia/version is absent)".into());
    }
    let out = Command::new("nvidia-smi").arg("-L").output();
    match out {
        Ok(o) if o.status.success() && String::from_utf8_lossy(&o.stdout).contains("GPU") => None,
        Ok(o) => Some(format!(
            "nvidia-smi lists no GPU: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Some(format!("nvidia-smi cannot run: {e}")),
    }
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn cumock() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile = exe.parent().and_then(Path::parent).unwrap();
    let here = profile.join("cumock");
    let release = workspace().join("target/release/cumock");
    [here, release]
        .into_iter()
        .find(|p| p.is_file())
        .expect("cumock is not built: run `cargo build --release`")
}

macro_rules! require_gpu {
    () => {
        if let Some(why) = no_driver_reason() {
            eprintln!("skipped: {why}");
            return;
        }
    };
}

#[test]
fn the_suite_on_the_real_driver_matches_its_golden() {
    require_gpu!();
    let gpu = Command::new("nvidia-smi")
        .args(["--query-gpu=name,driver_version", "--format=csv,noheader"])
        .output()
        .unwrap();
    let line = String::from_utf8_lossy(&gpu.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned();
    let (name, release) = line.split_once(", ").unwrap_or(("", ""));
    let golden = workspace().join("cases/goldens").join(format!(
        "{}-{}",
        name.replace(' ', "_"),
        release.trim()
    ));
    if !golden.is_dir() {
        eprintln!("skipped: no golden recorded for {line:?} yet; record one with `cumock record --out cases/goldens`");
        return;
    }
    let out = Command::new(cumock())
        .args(["run", "--driver", "libcuda.so.1", "--golden"])
        .arg(&golden)
        .current_dir(workspace())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
}

#[test]
fn the_mock_and_the_real_driver_agree_on_the_suite() {
    require_gpu!();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("real-vs-mock");
    let _ = std::fs::remove_dir_all(&dir);
    let real = Command::new(cumock())
        .args(["record", "--out"])
        .arg(&dir)
        .current_dir(workspace())
        .output()
        .unwrap();
    assert!(
        real.status.success(),
        "{}",
        String::from_utf8_lossy(&real.stderr)
    );
    let set = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mock = Command::new(cumock())
        .args(["run", "--golden"])
        .arg(&set)
        .current_dir(workspace())
        .output()
        .unwrap();
    assert!(
        mock.status.success(),
        "{}",
        String::from_utf8_lossy(&mock.stdout)
    );
}
