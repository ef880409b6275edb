//! What the tests that load the mock share: finding the built library (laid out as a
//! folder with libcuda.so.1 and libcuda.so), NVIDIA's cuda.h, and a C compiler.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_owned()
}

/// The folder cargo put this test binary's libraries in (`target/<profile>`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>")
        .to_owned()
}

/// A folder holding `libcuda.so.1` and `libcuda.so`, both the mock. Laid out once per
/// test process (tests run on threads), each link made under a temporary name and
/// renamed, so parallel test processes never see a half-made one.
pub fn mock_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let profile = profile_dir();
        let built = [profile.join("libcuda.so"), profile.join("deps/libcuda.so")]
            .into_iter()
            .find(|p| p.is_file())
            .unwrap_or_else(|| {
                panic!(
                    "the mock libcuda.so is not built in {}: run `cargo build` first",
                    profile.display()
                )
            });
        let dir = profile.join("cumock-lib-tests");
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["libcuda.so.1", "libcuda.so"] {
            let link = dir.join(name);
            let tmp = dir.join(format!(".{name}.{}", std::process::id()));
            let _ = std::fs::remove_file(&tmp);
            std::os::unix::fs::symlink(&built, &tmp).unwrap();
            std::fs::rename(&tmp, &link).unwrap();
        }
        dir
    })
    .clone()
}

pub fn mock_lib() -> PathBuf {
    mock_dir().join("libcuda.so.1")
}

/// NVIDIA's headers from the registry package `nvidia-cuda-runtime` (13.0), which
/// `ci/test.sh` installs into target/cuda-headers; `CUMOCK_CUDA_INCLUDE` overrides.
pub fn cuda_include() -> PathBuf {
    let dir = std::env::var_os("CUMOCK_CUDA_INCLUDE")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target/cuda-headers/nvidia/cu13/include"));
    assert!(
        dir.join("cuda.h").is_file(),
        "NVIDIA's cuda.h is not in {}: run ci/test.sh, or \
         `pip install --target target/cuda-headers 'nvidia-cuda-runtime==13.0.*'`",
        dir.display()
    );
    dir
}

/// The C compiler the `cc` crate picks, set up outside a build script.
pub fn c_compiler() -> Command {
    let target = "x86_64-unknown-linux-gnu";
    cc::Build::new()
        .target(target)
        .host(target)
        .opt_level(1)
        .cargo_metadata(false)
        .get_compiler()
        .to_command()
}

/// Compiles one C file into an executable, against cuda.h.
pub fn build_c(src: &Path, out: &Path, extra: &[&str]) {
    let mut cmd = c_compiler();
    cmd.arg("-std=gnu11")
        .arg("-Wall")
        .arg("-I")
        .arg(cuda_include())
        .arg(src)
        .arg("-o")
        .arg(out)
        .args(extra);
    let o = cmd.output().expect("running the C compiler");
    assert!(
        o.status.success(),
        "compiling {} failed:\n{}",
        src.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

pub fn scratch(name: &str) -> PathBuf {
    let d = profile_dir().join("cumock-test-scratch").join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The `cumock` binary of this build (built by `cargo build`, as ci/test.sh does).
pub fn cumock() -> PathBuf {
    let p = profile_dir().join("cumock");
    assert!(
        p.is_file(),
        "{} is not built: run `cargo build --workspace` first",
        p.display()
    );
    p
}

/// Builds one of the client programs of clients/c, linked with -lcuda against the mock.
pub fn client(name: &str) -> PathBuf {
    // Built once per test process: tests run on threads, and rewriting a binary another
    // test is running fails with "text file busy".
    static BUILT: std::sync::Mutex<Vec<(String, PathBuf)>> = std::sync::Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap();
    if let Some((_, p)) = built.iter().find(|(n, _)| n == name) {
        return p.clone();
    }
    let dir = scratch(&format!("clients-{}", std::process::id()));
    let exe = dir.join(name);
    let src = workspace().join("clients/c").join(format!("{name}.c"));
    let lib = mock_dir();
    let link: Vec<&str> = if name == "dlopen_client" {
        vec!["-ldl"]
    } else {
        vec!["-L", lib.to_str().unwrap(), "-lcuda"]
    };
    build_c(&src, &exe, &link);
    built.push((name.to_owned(), exe.clone()));
    exe
}

/// An example program of this package (built by `cargo test` beside the tests).
pub fn example(name: &str) -> PathBuf {
    let p = profile_dir().join("examples").join(name);
    assert!(
        p.is_file(),
        "{} is not built: `cargo test` builds examples",
        p.display()
    );
    p
}

/// Runs `body` in a child process of this test binary (only the test named `test`), with
/// at most `data_limit` bytes of private memory (RLIMIT_DATA: heap and anonymous
/// mappings, what a runaway allocation uses) and `deadline` to finish: a regression to
/// an endless loop or an unbounded allocation fails the test instead of hanging CI or
/// waking the host's OOM killer. `env` is set in the child (the mock reads its settings
/// once, at the first call). Returns the child's stderr.
pub fn guarded(
    test: &str,
    env: &[(&str, &str)],
    data_limit: u64,
    deadline: std::time::Duration,
    body: impl FnOnce(),
) -> String {
    use std::os::unix::process::CommandExt;
    const CHILD: &str = "CUMOCK_GUARDED_TEST";
    if std::env::var(CHILD).as_deref() == Ok(test) {
        body();
        // The child's work ends here: what the caller checks of stderr is the parent's.
        std::process::exit(0);
    }
    let mut cmd = Command::new(std::env::current_exe().expect("the test binary"));
    cmd.args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, test)
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    // Safety: setrlimit is async-signal-safe, and the closure touches nothing else.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: data_limit,
                rlim_max: data_limit,
            };
            if libc::setrlimit(libc::RLIMIT_DATA, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
    let mut child = cmd.spawn().expect("spawning the guarded test");
    let stderr = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut std::io::BufReader::new(stderr), &mut s);
        s
    });
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().expect("waiting for the guarded test") {
            break st;
        }
        if start.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{test}: still running after {deadline:?} (a hang, or a runaway loop)");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let err = reader.join().unwrap_or_default();
    assert!(
        status.success(),
        "{test}: the guarded child failed ({status}; over {data_limit} bytes of memory \
         shows as an allocation failure or abort):\n{err}"
    );
    err
}

/// nvcc 13.0's toolkit root (bin/nvcc, lib/): `CUMOCK_NVCC_ROOT`, or the registry
/// packages ci/install-nvcc.sh installs.
pub fn nvcc_root() -> PathBuf {
    if let Some(root) = std::env::var_os("CUMOCK_NVCC_ROOT") {
        return PathBuf::from(root);
    }
    let out = Command::new(workspace().join("ci/install-nvcc.sh"))
        .output()
        .expect("running ci/install-nvcc.sh");
    assert!(
        out.status.success(),
        "ci/install-nvcc.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}
