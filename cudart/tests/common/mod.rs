//! What the runtime's tests share: the built libraries laid out as one folder
//! (libcudart.so.13 is cumock's runtime, libcuda.so.1 the mock driver), and nvcc.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_owned()
}

/// `target/<profile>`, where cargo put this test binary's libraries.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>")
        .to_owned()
}

fn built(name: &str, crate_name: &str) -> PathBuf {
    let profile = profile_dir();
    [profile.join(name), profile.join("deps").join(name)]
        .into_iter()
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "{name} ({crate_name}) is not built in {}: run `cargo build --workspace` first",
                profile.display()
            )
        })
}

pub fn cudart_lib() -> PathBuf {
    built("libcudart.so", "cumock-cudart")
}

/// A folder holding cumock's runtime and the mock driver under the names programs look
/// for. Each link is made under a temporary name and renamed, so parallel test processes
/// never see a half-made one.
pub fn lib_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let cudart = cudart_lib();
        let cuda = built("libcuda.so", "cumock-driver");
        let dir = profile_dir().join("cumock-cudart-tests");
        std::fs::create_dir_all(&dir).unwrap();
        for (name, target) in [
            ("libcudart.so.13", &cudart),
            ("libcudart.so", &cudart),
            ("libcuda.so.1", &cuda),
            ("libcuda.so", &cuda),
        ] {
            let tmp = dir.join(format!(".{name}.{}", std::process::id()));
            let _ = std::fs::remove_file(&tmp);
            std::os::unix::fs::symlink(target, &tmp).unwrap();
            std::fs::rename(&tmp, dir.join(name)).unwrap();
        }
        dir
    })
    .clone()
}

/// The CUDA toolkit root (bin/nvcc, include/, lib/): `CUMOCK_NVCC_ROOT`, or what
/// ci/install-nvcc.sh installs and prints.
pub fn toolkit() -> PathBuf {
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        if let Some(r) = std::env::var_os("CUMOCK_NVCC_ROOT") {
            return PathBuf::from(r);
        }
        let o = Command::new(workspace().join("ci/install-nvcc.sh"))
            .output()
            .expect("running ci/install-nvcc.sh");
        assert!(
            o.status.success(),
            "ci/install-nvcc.sh failed:\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())
    })
    .clone()
}

pub fn scratch(name: &str) -> PathBuf {
    let d = profile_dir().join("cumock-cudart-scratch").join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Compiles clients/runtime/NAME.cu as NVIDIA's toolchain would for a program linked with
/// the shared runtime.
pub fn nvcc(program: &str) -> PathBuf {
    nvcc_with(program, program, &[])
}

/// A program's architecture: 90, or what its first line names (`// nvcc-arch: sm_90a`,
/// for wgmma), as ci/gpu-runtime.sh reads it.
pub fn program_arch(src: &Path) -> String {
    let text = std::fs::read_to_string(src).unwrap_or_default();
    let arch = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("// nvcc-arch: sm_"))
        .map(str::trim)
        .unwrap_or("90");
    assert!(
        arch.bytes().all(|b| b.is_ascii_alphanumeric()),
        "{}: nvcc-arch sm_{arch:?}",
        src.display()
    );
    arch.to_string()
}

/// The nvcc options a program's `// nvcc-options: ...` line (among its first lines)
/// adds after its source, as ci/gpu-runtime.sh reads them: `-rdc=true -lcudadevrt` for
/// dynamic parallelism.
pub fn program_options(src: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(src).unwrap_or_default();
    let options: Vec<String> = text
        .lines()
        .take(3)
        .find_map(|l| l.strip_prefix("// nvcc-options:"))
        .map(|o| o.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default();
    assert!(
        options.iter().all(|o| o.starts_with('-')
            && o.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-=_".contains(&b))),
        "{}: nvcc-options {options:?}",
        src.display()
    );
    options
}

/// As `nvcc`, with more nvcc options, into an executable of another name.
///
/// Each executable is compiled once per test binary: two tests of one program (run and
/// fault, say) would otherwise rewrite the file while the other executes it (ETXTBSY).
/// nvcc writes a temporary name that is renamed into place, so a half-written file is
/// never run.
pub fn nvcc_with(program: &str, exe_name: &str, options: &[&str]) -> PathBuf {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    static BUILT: OnceLock<Mutex<HashMap<String, Arc<OnceLock<PathBuf>>>>> = OnceLock::new();
    let key = format!("{program}\0{exe_name}\0{}", options.join("\0"));
    let cell = BUILT
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(key)
        .or_default()
        .clone();
    cell.get_or_init(|| compile(program, exe_name, options))
        .clone()
}

fn compile(program: &str, exe_name: &str, options: &[&str]) -> PathBuf {
    let root = toolkit();
    let src = workspace()
        .join("clients/runtime")
        .join(format!("{program}.cu"));
    let exe = scratch("programs").join(exe_name);
    let partial = scratch("programs").join(format!("{exe_name}.partial-{}", std::process::id()));
    let arch = program_arch(&src);
    let o = Command::new(root.join("bin/nvcc"))
        .args([
            "-cudart",
            "shared",
            &format!("-arch=sm_{arch}"),
            "-gencode",
            &format!("arch=compute_{arch},code=compute_{arch}"),
        ])
        .args(options)
        .arg("-L")
        .arg(root.join("lib"))
        .arg(&src)
        .args(program_options(&src))
        .arg("-o")
        .arg(&partial)
        .output()
        .expect("running nvcc");
    assert!(
        o.status.success(),
        "nvcc {} failed:\n{}",
        src.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::rename(&partial, &exe).expect("renaming the compiled program into place");
    exe
}

/// A command that runs `exe` with cumock's runtime and the mock first in its library path.
pub fn on_mock(exe: &Path) -> Command {
    let mut c = Command::new(exe);
    let mut path = lib_dir().into_os_string();
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
        path.push(":");
        path.push(old);
    }
    c.env("LD_LIBRARY_PATH", path);
    for k in [
        "CUMOCK_TRACE",
        "CUMOCK_FAULT",
        "CUMOCK_LEAKS",
        "CUMOCK_MISUSE",
        "CUMOCK_STRICT",
        "CUMOCK_DEVICES",
    ] {
        c.env_remove(k);
    }
    c
}
