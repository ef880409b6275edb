//! `CUMOCK_SCHEDULE`: when the device's workers run queued work. Under `lazy` a missing
//! synchronisation reads stale data every time (a kernel's store to mapped memory read by
//! the host right after the launch; a copy on another stream with no event); under every
//! schedule, a correct program's synchronisations give the right data, and a polling loop
//! ends. The program is tests/schedule.c, run over the mock with each schedule.

mod common;

use std::collections::HashMap;
use std::process::Command;

fn run(schedule: &str) -> (HashMap<String, String>, String) {
    // Built once for the tests of this process: the tests run in parallel, and one
    // running the program while another writes it fails with "text file busy".
    static EXE: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let exe = EXE.get_or_init(|| {
        let dir = common::scratch(&format!("schedule-{}", std::process::id()));
        let exe = dir.join("schedule");
        let src = common::workspace().join("mock-driver/tests/schedule.c");
        let lib = common::mock_dir();
        common::build_c(&src, &exe, &["-L", lib.to_str().unwrap(), "-lcuda"]);
        exe
    });
    let out = Command::new(exe)
        .env("LD_LIBRARY_PATH", common::mock_dir())
        .env("CUMOCK_SCHEDULE", schedule)
        // A few words of device memory: not a claim on what the host has free now.
        .env("CUMOCK_DEVICE_MEMORY", "64M")
        .output()
        .expect("running the program");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "{schedule}: {}\n{stdout}\n{stderr}",
        out.status
    );
    let lines = stdout
        .lines()
        .map(|l| {
            let (k, v) = l.split_once(' ').unwrap_or((l, ""));
            (k.to_owned(), v.to_owned())
        })
        .collect();
    (lines, stderr)
}

/// What every schedule gives a correct program.
fn check_synchronised(schedule: &str, seen: &HashMap<String, String>) {
    assert_eq!(seen["synced-host-read"], "7", "{schedule}");
    assert_eq!(seen["ordered-copy"], "6", "{schedule}");
    assert!(seen.contains_key("polls-ended"), "{schedule}");
    assert_eq!(seen["chain"], "120", "{schedule}");
    assert_eq!(seen["graph-setters"], "111", "{schedule}");
    assert_eq!(seen["staged-htod"], "42", "{schedule}");
    assert_eq!(seen["staged-2d"], "85", "{schedule}");
    assert_eq!(seen["peer"], "42", "{schedule}");
    assert_eq!(seen["staged-3d"], "89", "{schedule}");
    assert_eq!(seen["staged-array"], "46", "{schedule}");
    assert_eq!(seen["sync-htod"], "42", "{schedule}");
    assert_eq!(seen["sync-memset"], "7", "{schedule}");
}

#[test]
fn lazy_shows_every_missing_synchronisation_as_stale_data() {
    // Every time, not by luck: three runs.
    for _ in 0..3 {
        let (seen, _) = run("lazy");
        assert_eq!(seen["unsynced-host-read"], "0", "{seen:?}");
        assert_eq!(seen["unordered-copy"], "0", "{seen:?}");
        assert_eq!(seen["unordered-graph"], "0", "{seen:?}");
        // Queued behind the stream's kernel, not copied in the call.
        assert_eq!(seen["unordered-staged"], "0", "{seen:?}");
        assert_eq!(seen["unordered-2d"], "0", "{seen:?}");
        assert_eq!(seen["unordered-peer"], "0", "{seen:?}");
        assert_eq!(seen["unordered-3d"], "0", "{seen:?}");
        assert_eq!(seen["unordered-array"], "0", "{seen:?}");
        // A synchronous copy from pageable memory and a synchronous memset land in the
        // legacy stream's order, after the call returned.
        assert_eq!(seen["unordered-sync-htod"], "0", "{seen:?}");
        assert_eq!(seen["unordered-sync-memset"], "0", "{seen:?}");
        check_synchronised("lazy", &seen);
    }
}

#[test]
fn eager_and_random_schedules_keep_a_correct_program_correct() {
    for schedule in ["eager", "random:1", "random:2", "random:12345"] {
        let (seen, _) = run(schedule);
        check_synchronised(schedule, &seen);
    }
}

#[test]
fn a_schedule_that_is_not_one_says_so_and_runs_eagerly() {
    let (seen, stderr) = run("sometimes");
    assert!(stderr.contains("CUMOCK_SCHEDULE=\"sometimes\""), "{stderr}");
    // The settings are read once, so said once, however many streams and threads ask.
    assert_eq!(stderr.matches("CUMOCK_SCHEDULE=").count(), 1, "{stderr}");
    check_synchronised("sometimes", &seen);
}
