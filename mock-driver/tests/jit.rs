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

fn nvcc() -> PathBuf {
    common::nvcc_root().join("bin/nvcc")
}

/// Compiles tests/jit/SRC with nvcc `args` into the scratch folder as OUT.
fn compile(src: &str, args: &[&str], out: &str) -> PathBuf {
    let dir = common::scratch(&format!("jit-{}", std::process::id()));
    let dst = dir.join(out);
    let o = Command::new(nvcc())
        .args(args)
        .arg(common::workspace().join("mock-driver/tests/jit").join(src))
        .arg("-o")
        .arg(&dst)
        .output()
        .expect("running nvcc");
    assert!(
        o.status.success(),
        "nvcc {args:?} {src} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    dst
}

#[test]
fn relocatable_ptx_of_two_files_links_loads_and_runs() {
    let rdc = ["-ptx", "-rdc=true", "-arch=compute_90", "-O3"];
    let a = compile("link_a.cu", &rdc, "link_a.ptx");
    let b = compile("link_b.cu", &rdc, "link_b.ptx");
    let fat = compile(
        "link_b.cu",
        &[
            "-fatbin",
            "-rdc=true",
            "-gencode",
            "arch=compute_90,code=compute_90",
        ],
        "link_b.fatbin",
    );
    let out = run(
        "link",
        &[
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            fat.to_str().unwrap(),
        ],
        &[],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("ptx+ptx: ok\nptx+fatbin: ok"), "{stdout}");
    assert!(
        stdout.contains("complete A alone = CUDA_ERROR_INVALID_SOURCE\nlog: cumock: CUDA_ERROR_INVALID_SOURCE: error   : Undefined reference to '_Z5scalei'"),
        "{stdout}"
    );
    assert!(
        stdout.contains("add B twice = CUDA_ERROR_INVALID_SOURCE\ncomplete B twice = CUDA_ERROR_INVALID_SOURCE\nlog: cumock: CUDA_ERROR_INVALID_SOURCE: error   : Multiple definition of '")
            && stdout.contains("' in 'b2', first defined in 'b1'"),
        "{stdout}"
    );
    assert!(
        stdout.contains("add PTX as cubin = CUDA_ERROR_INVALID_IMAGE\nlog: cumock: CUDA_ERROR_INVALID_IMAGE: not-a-cubin: CU_JIT_INPUT_CUBIN, but not an ELF cubin"),
        "{stdout}"
    );
}
