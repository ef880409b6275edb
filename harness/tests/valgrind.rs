//! The whole suite under valgrind memcheck: no invalid access and no definite leak, in
//! the mock or in the harness that drives it. Needs valgrind (`apt-get install valgrind`).

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

#[test]
fn every_case_is_clean_under_memcheck() {
    let have = Command::new("valgrind").arg("--version").output();
    assert!(
        have.is_ok_and(|o| o.status.success()),
        "valgrind is not installed: `apt-get install valgrind` (ci/test.sh does)"
    );
    let ws = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let exe = env!("CARGO_BIN_EXE_cumock");
    let lib =
        String::from_utf8(Command::new(exe).arg("lib-path").output().unwrap().stdout).unwrap();
    let lib = Path::new(lib.trim()).join("libcuda.so.1");
    let mut cases: Vec<_> = std::fs::read_dir(ws.join("cases"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "case"))
        .collect();
    // A case that crashes on purpose (a host dereference of device memory) is an invalid
    // access by design, not one inside the mock.
    cases.retain(|p| !std::fs::read_to_string(p).unwrap().contains("-> crash"));
    cases.sort();
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
        {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(case) = cases.get(i) else { break };
                let out = Command::new("valgrind")
                    .args([
                        "-q",
                        "--error-exitcode=99",
                        "--leak-check=full",
                        "--errors-for-leak-kinds=definite",
                        "--show-leak-kinds=definite",
                    ])
                    .arg(exe)
                    .args(["__case", "--driver"])
                    .arg(&lib)
                    .arg(case)
                    .output()
                    .unwrap();
                if out.status.code() == Some(99) {
                    failures.lock().unwrap().push(format!(
                        "{}:\n{}",
                        case.display(),
                        String::from_utf8_lossy(&out.stderr)
                    ));
                }
            });
        }
    });
    let f = failures.into_inner().unwrap();
    assert!(
        f.is_empty(),
        "memcheck found errors in {} case(s):\n{}",
        f.len(),
        f.join("\n")
    );
    eprintln!("valgrind: {} cases clean", cases.len());
}
