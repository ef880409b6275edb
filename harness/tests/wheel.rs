//! The Python wheel, as a user gets it: built with maturin (python/build-wheel.sh),
//! installed into a fresh virtual environment with nothing else of cumock's, and used
//! there: `cumock lib-path` finds the mock inside the environment, `cumock exec -- pytest`
//! runs a session on it, and the pytest plugin's own tests and its cuda-python and
//! cuda-core examples pass. ci/test.sh installs maturin (target/py-tools) and downloads
//! pytest's wheels (target/py-wheels); NVIDIA's Python packages are in target/py-clients.
//!
//! Also the `cargo install` layout: a `cumock` binary alone in <root>/bin says how to
//! install the library, and finds it in <root>/lib/cumock/ once it is there.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn run(cmd: &mut Command) -> String {
    let o = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    assert!(o.status.success(), "{cmd:?} failed:\n{}", text(&o));
    text(&o)
}

fn needed(path: PathBuf, what: &str) -> PathBuf {
    assert!(
        path.exists(),
        "{} is missing: {what} (ci/test.sh sets it up)",
        path.display()
    );
    path
}

#[test]
fn the_wheel_installs_into_a_fresh_venv_and_runs_pytest_on_the_mock() {
    let ws = workspace();
    let maturin = std::env::var_os("CUMOCK_MATURIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            needed(
                ws.join("target/py-tools/bin/maturin"),
                "`python3 -m venv target/py-tools && target/py-tools/bin/pip install maturin`",
            )
        });
    let wheels = needed(
        ws.join("target/py-wheels"),
        "`pip download -d target/py-wheels pytest`",
    );
    let clients = needed(
        ws.join("target/py-clients/cuda/core"),
        "NVIDIA's cuda-bindings and cuda-core",
    );
    let clients = clients.parent().unwrap().parent().unwrap();
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("wheel");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();

    // Built with the debug profile the tests use, so nothing is compiled twice.
    let out = run(Command::new(ws.join("python/build-wheel.sh"))
        .arg(tmp.join("dist"))
        .args(["--profile", "dev"])
        .env("MATURIN", &maturin));
    let wheel = out
        .split_whitespace()
        .rfind(|w| w.ends_with(".whl") && Path::new(w).is_file())
        .unwrap_or_else(|| panic!("no wheel named in:\n{out}"))
        .to_owned();

    let venv = tmp.join("venv");
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    run(Command::new(venv.join("bin/pip"))
        .args([
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-index",
            "--find-links",
        ])
        .arg(&wheels)
        .arg(&wheel)
        .arg("pytest"));
    let cumock = venv.join("bin/cumock");

    // The library comes from inside the environment, not from this build.
    let lib = run(Command::new(&cumock)
        .arg("lib-path")
        .env_remove("CUMOCK_LIB"));
    let lib = PathBuf::from(lib.trim());
    assert_eq!(lib, venv.join("lib/cumock"), "cumock lib-path");
    assert!(lib.join("libcuda.so.1").is_file() && lib.join("libcuda.so").is_file());

    // `cumock exec -- pytest`: the whole session on the mock.
    let pytest = venv.join("bin/pytest");
    let out = run(Command::new(&cumock)
        .args(["exec", "--leaks", "--strict", "--"])
        .arg(&pytest)
        .arg(ws.join("python/tests/check_on_mock.py"))
        .args(["-q", "-p", "no:cacheprovider"])
        .current_dir(&tmp)
        .env_remove("CUMOCK_LIB")
        .env_remove("LD_LIBRARY_PATH"));
    assert!(out.contains("1 passed"), "{out}");

    // The plugin's own tests, and the cuda-python / cuda-core examples marked for it.
    let out = run(Command::new(&pytest)
        .arg(ws.join("python/tests"))
        .args(["-q", "-rA", "-p", "no:cacheprovider"])
        .current_dir(&tmp)
        .env("PYTHONPATH", clients)
        .env_remove("CUMOCK_LIB")
        .env_remove("LD_LIBRARY_PATH"));
    let summary = out.lines().last().unwrap_or_default();
    assert!(
        summary.contains(" passed") && !summary.contains("skipped"),
        "{out}"
    );
    for test in [
        "test_plugin.py::test_a_planted_leak_fails_under_strict_with_the_leak_report",
        "test_plugin.py::test_fault_injection_reaches_the_marked_test_only",
        "test_clients.py::test_bindings_allocator_recovers_from_out_of_memory",
        "test_clients.py::test_core_virtual_memory_resource_surfaces_out_of_memory",
    ] {
        assert!(
            out.lines()
                .any(|l| l.starts_with("PASSED") && l.ends_with(test)),
            "{test} did not pass:\n{out}"
        );
    }
    // cuda-core's leaked reference comes back into the report, with its call stack.
    assert!(
        out.contains("never released: 1 reference(s) left (cuMemRelease)")
            && out.contains("cumock:       at "),
        "{out}"
    );
}

#[test]
fn an_installed_binary_says_how_to_install_the_library_then_finds_it() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("installed");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(tmp.join("bin")).unwrap();
    let exe = tmp.join("bin/cumock");
    std::fs::copy(env!("CARGO_BIN_EXE_cumock"), &exe).unwrap();
    let o = Command::new(&exe)
        .arg("lib-path")
        .env_remove("CUMOCK_LIB")
        .output()
        .unwrap();
    let said = text(&o);
    let place = tmp.join("lib/cumock/libcuda.so.1");
    assert!(
        !o.status.success()
            && said.contains("cargo build --release -p cumock-driver")
            && said.contains(&place.display().to_string())
            && said.contains("CUMOCK_LIB"),
        "{said}"
    );
    let built = Path::new(env!("CARGO_BIN_EXE_cumock"))
        .parent()
        .unwrap()
        .join("libcuda.so");
    std::fs::create_dir_all(place.parent().unwrap()).unwrap();
    std::fs::copy(needed(built, "the mock, built by `cargo build`"), &place).unwrap();
    let dir = run(Command::new(&exe).arg("lib-path").env_remove("CUMOCK_LIB"));
    let dir = PathBuf::from(dir.trim());
    assert!(
        dir.starts_with(tmp.join("lib/cumock"))
            && dir.join("libcuda.so.1").is_file()
            && dir.join("libcuda.so").is_file(),
        "{}",
        dir.display()
    );
}
