//! A C program compiled against NVIDIA's cuda.h and linked with -lcuda runs on the mock:
//! reserve, grow, access, copy across chunks, alias, share with a second process.

mod common;

#[test]
fn the_allocator_program_runs_unchanged_on_the_mock() {
    let exe = common::client("vmm_program");
    let lib = common::mock_dir();
    let out = std::process::Command::new(&exe)
        .env("LD_LIBRARY_PATH", &lib)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the program failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert_eq!(stdout.trim(), "ok");
}

#[test]
fn the_program_records_libcuda_so_1_and_gets_the_mock() {
    // The link records the SONAME; the loader must then resolve it to the mock.
    let exe = common::client("vmm_program");
    let lib = common::mock_dir();
    let out = std::process::Command::new("ldd")
        .arg(&exe)
        .env("LD_LIBRARY_PATH", &lib)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("libcuda.so.1"))
        .unwrap_or_else(|| panic!("no libcuda.so.1 in:\n{text}"));
    assert!(line.contains(lib.to_str().unwrap()), "{line}");
}
