//! Loading and linking modules as compilers' runtimes do it: the JIT options' logs
//! (tests/jit/logs.c), the driver's linker over relocatable PTX (tests/jit/link.c), and
//! load failures said on stderr whatever the settings.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

/// Builds tests/jit/NAME.c against the mock, once per test process.
fn program(name: &str) -> PathBuf {
    static BUILT: std::sync::Mutex<Vec<(String, PathBuf)>> = std::sync::Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap();
    if let Some((_, p)) = built.iter().find(|(n, _)| n == name) {
        return p.clone();
    }
    let dir = common::scratch(&format!("jit-{}", std::process::id()));
    let exe = dir.join(name);
    let lib = common::mock_dir();
    common::build_c(
        &common::workspace().join(format!("mock-driver/tests/jit/{name}.c")),
        &exe,
        &["-L", lib.to_str().unwrap(), "-lcuda"],
    );
    built.push((name.into(), exe.clone()));
    exe
}

fn run(name: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(program(name));
    cmd.args(args).env("LD_LIBRARY_PATH", common::mock_dir());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn jit_log_buffers_hold_the_reason_and_a_failure_is_said_once() {
    let out = run("logs", &[], &[]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("module error log: cumock: "), "{stdout}");
    // Without CUMOCK_MISUSE the reason is on stderr, and once: the bad image failed four
    // times (two calls, two buffer sizes) for one cause.
    let said = stderr
        .lines()
        .filter(|l| l.starts_with("cumock: a module failed to load") && l.contains("frobnicate"))
        .count();
    assert_eq!(said, 1, "{stderr}");
}

#[test]
fn under_misuse_messages_a_load_failure_is_still_said_once() {
    let out = run("logs", &[], &[("CUMOCK_MISUSE", "1")]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{}\n{stderr}", text(&out.stdout));
    assert_eq!(stderr.matches("frobnicate").count(), 1, "{stderr}");
}
