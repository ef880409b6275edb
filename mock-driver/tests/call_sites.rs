//! Leaks and misuse name where the program made or did them: the native call stack of
//! the caller, symbolised, without the mock's own frames, as valgrind shows it.

mod common;

use std::path::PathBuf;
use std::process::Command;

/// The planted-bug allocator, built with debug information so frames have lines.
fn buggy_allocator() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let exe = common::scratch(&format!("call-sites-{}", std::process::id()))
                .join("buggy_allocator");
            let lib = common::mock_dir();
            common::build_c(
                &source(),
                &exe,
                &["-g", "-O0", "-L", lib.to_str().unwrap(), "-lcuda"],
            );
            exe
        })
        .clone()
}

fn source() -> PathBuf {
    common::workspace().join("clients/c/buggy_allocator.c")
}

/// The line of the source that holds `text` (searched from `after`), as `file:line`.
fn line_of(text: &str, after: &str) -> String {
    let src = std::fs::read_to_string(source()).unwrap();
    let start = src
        .find(after)
        .unwrap_or_else(|| panic!("{after} not in the source"));
    let at = start
        + src[start..]
            .find(text)
            .unwrap_or_else(|| panic!("{text} not after {after}"));
    format!("buggy_allocator.c:{}", src[..at].matches('\n').count() + 1)
}

fn run(mode: &str, env: &[(&str, &str)]) -> String {
    let mut c = Command::new(buggy_allocator());
    c.arg(mode).env("LD_LIBRARY_PATH", common::mock_dir());
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The call-site lines printed under the first report line containing `what`.
fn frames_under(report: &str, what: &str) -> Vec<String> {
    let mut lines = report.lines().skip_while(|l| !l.contains(what));
    assert!(lines.next().is_some(), "no {what:?} in:\n{report}");
    lines
        .take_while(|l| l.starts_with("cumock:       at ") || l.starts_with("cumock:       by "))
        .map(|l| l["cumock:       at ".len()..].to_owned())
        .collect()
}

#[test]
fn each_leak_names_where_the_program_made_it() {
    let report = run("leak", &[("CUMOCK_LEAKS", "1")]);
    let main = line_of("mapped(&h, gran, 1);", "\"leak\"");
    for (what, call) in [
        ("never freed (cuMemAddressFree)", "cuMemAddressReserve"),
        ("never released", "cuMemCreate"),
        ("never unmapped", "cuMemMap"),
    ] {
        let frames = frames_under(&report, what);
        let made = line_of(call, "static CUdeviceptr mapped");
        assert!(
            frames.len() == 2
                && frames[0].starts_with("mapped (")
                && frames[0].ends_with(&format!("{made})"))
                && frames[1].starts_with("main (")
                && frames[1].ends_with(&format!("{main})")),
            "{what}: expected mapped at {made} by main at {main}, got {frames:?} in:\n{report}"
        );
    }
    let export = line_of("cuMemExportToShareableHandle", "\"leak\"");
    let frames = frames_under(&report, "exported fd");
    assert!(
        frames.len() == 1 && frames[0].ends_with(&format!("{export})")),
        "the fd was exported at {export}: {frames:?} in:\n{report}"
    );
    assert!(
        !report.contains("cumock_driver") && !report.contains("diagnostics"),
        "the mock's own frames are dropped:\n{report}"
    );
}

#[test]
fn each_misuse_message_names_the_call_of_the_program() {
    for (mode, rule, call) in [
        (
            "misaligned",
            "not a non-zero multiple",
            "cuMemCreate(&h, gran + 4096",
        ),
        (
            "free-before-unmap",
            "cuMemAddressFree",
            "cuMemAddressFree(va, gran)",
        ),
        (
            "unknown-handle",
            "cuMemRelease",
            "cuMemRelease((CUmemGenericAllocationHandle)",
        ),
    ] {
        let report = run(mode, &[("CUMOCK_MISUSE", "1")]);
        let frames = frames_under(&report, rule);
        let at = line_of(call, &format!("\"{mode}\""));
        assert!(
            frames
                .first()
                .is_some_and(|f| f.starts_with("main (") && f.ends_with(&format!("{at})"))),
            "{mode}: expected main at {at}, got {frames:?} in:\n{report}"
        );
    }
    // A warning (not an error on the mock) names the program's function too.
    let report = run("unmap-in-flight", &[("CUMOCK_MISUSE", "1")]);
    let frames = frames_under(&report, "may still be in flight");
    let unmap = line_of("cuMemUnmap(va, size)", "static void teardown");
    assert!(
        frames.len() == 2
            && frames[0].ends_with(&format!("{unmap})"))
            && frames[1].starts_with("main ("),
        "expected teardown at {unmap} by main, got {frames:?} in:\n{report}"
    );
}

#[test]
fn without_leak_checking_nothing_is_captured_or_shown() {
    let report = run("leak", &[]);
    assert!(!report.contains("cumock:       at "), "{report}");
}

#[test]
fn call_sites_of_freed_things_are_dropped_and_the_live_ones_kept() {
    // 10,000 allocation handles made and released (handles are never reused, so the
    // table of call sites grows past 4096 and is pruned), then one reservation leaked: it
    // is the only leak, and its call site is right.
    let dir = common::scratch(&format!("call-sites-prune-{}", std::process::id()));
    let src = dir.join("churn.c");
    std::fs::write(
        &src,
        "#include <cuda.h>\n\
         int main(void) {\n\
         \x20   CUdeviceptr va; CUmemGenericAllocationHandle h; CUmemAllocationProp p = {0};\n\
         \x20   p.type = CU_MEM_ALLOCATION_TYPE_PINNED; p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;\n\
         \x20   if (cuInit(0)) return 1;\n\
         \x20   for (int i = 0; i < 10000; i++) {\n\
         \x20       if (cuMemCreate(&h, 2 << 20, &p, 0)) return 2;\n\
         \x20       if (cuMemRelease(h)) return 3;\n\
         \x20   }\n\
         \x20   return cuMemAddressReserve(&va, 2 << 20, 0, 0, 0) ? 4 : 0; /* leaked */\n\
         }\n",
    )
    .unwrap();
    let exe = dir.join("churn");
    let lib = common::mock_dir();
    common::build_c(
        &src,
        &exe,
        &["-g", "-O0", "-L", lib.to_str().unwrap(), "-lcuda"],
    );
    let o = Command::new(&exe)
        .env("LD_LIBRARY_PATH", &lib)
        .env("CUMOCK_LEAKS", "1")
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{report}");
    assert!(report.contains("leak report: 1 leak(s)"), "{report}");
    let frames = frames_under(&report, "never freed");
    assert!(
        frames.len() == 1 && frames[0].starts_with("main (") && frames[0].ends_with("churn.c:10)"),
        "{frames:?} in:\n{report}"
    );
}

#[test]
fn programs_that_fork_keep_working_with_call_sites_on() {
    // memMapIPCDrv-style sharing: the parent exports, forked children import and map.
    let o = Command::new(common::client("ipc"))
        .env("LD_LIBRARY_PATH", common::mock_dir())
        .env("CUMOCK_LEAKS", "1")
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{report}");
    assert!(report.contains("nothing leaked"), "{report}");
}
