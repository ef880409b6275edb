//! Ordering-bug reports (CUMOCK_MISUSE=1, mock-driver/src/model/ordering.rs): each bug
//! planted in clients/runtime/ordering_bugs.cu is reported, naming both operations and
//! where the program issued each; correct programs (every runtime program, some also
//! built for the per-thread default stream) draw no report.

mod common;

use std::path::PathBuf;
use std::sync::OnceLock;

fn planted() -> PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    // With host debug information, so that call sites carry the program's lines.
    EXE.get_or_init(|| common::nvcc_with("ordering_bugs", "ordering_bugs_g", &["-g"]))
        .clone()
}

fn stderr_of(exe: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> (String, String) {
    let o = common::on_mock(exe)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    );
    assert!(
        o.status.success() || o.status.code() == Some(77),
        "{exe:?} {args:?} failed ({}):\n{out}\n{err}",
        o.status
    );
    (out, err)
}

/// The report and the two lines of ordering_bugs.cu it names.
fn report(kind: &str, says: &str) {
    report_under(kind, says, &[]);
}

/// As `report`, with more of the environment set.
fn report_under(kind: &str, says: &str, env: &[(&str, &str)]) {
    let mut env = env.to_vec();
    env.push(("CUMOCK_MISUSE", "1"));
    let (_, err) = stderr_of(&planted(), &[kind], &env);
    // The report that says it (a planted bug may draw others: a flag the host polls
    // is a load of bytes a kernel wrote).
    let at = err
        .match_indices("cumock: ordering bug:")
        .map(|(at, _)| at)
        .find(|at| err[*at..].lines().next().unwrap().contains(says))
        .unwrap_or_else(|| panic!("no ordering bug saying {says:?} reported for {kind}:\n{err}"));
    let report = &err[at..];
    let sites: Vec<&str> = report
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("cumock: ordering bug"))
        // The frame's function, not the path (a checkout may live under .../main/).
        .filter(|l| l.contains("ordering_bugs.cu:") && l.contains(" main ("))
        .collect();
    assert_eq!(
        sites.len(),
        2,
        "{kind}: both call sites in main should be named:\n{report}"
    );
    assert_ne!(sites[0], sites[1], "{kind}: two different call sites");
}

#[test]
fn two_streams_writing_the_same_bytes_are_reported() {
    report(
        "race",
        "(writes) and the launch of kernel _Z4fillPiii (writes)",
    );
}

#[test]
fn a_host_read_of_unfinished_device_writes_is_reported() {
    report("host-read", "a copy to the host (reads)");
}

#[test]
fn a_free_on_a_stream_not_ordered_after_its_use_is_reported() {
    report("free", "cuMemFreeAsync");
}

#[test]
fn a_host_store_to_page_locked_memory_a_kernel_writes_is_reported_at_the_synchronisation() {
    report("host-write", "the host stored to bytes");
}

#[test]
fn a_host_store_to_page_locked_memory_an_async_copy_writes_is_reported() {
    report("copy-write", "the host stored to bytes");
}

#[test]
fn a_host_store_to_managed_memory_a_kernel_writes_is_reported_at_the_synchronisation() {
    report("managed-write", "the host stored to bytes");
}

#[test]
fn a_host_load_of_page_locked_memory_a_kernel_wrote_is_reported() {
    report(
        "host-load",
        "the host loaded bytes that the launch of kernel _Z4fillPiii writes",
    );
}

#[test]
fn a_host_load_of_managed_memory_a_kernel_wrote_is_reported() {
    report(
        "managed-load",
        "the host loaded bytes that the launch of kernel _Z4fillPiii writes",
    );
}

/// A zero-copy kernel reads page-locked input and writes page-locked output, with weak
/// accesses only: its reads of host memory signal nothing, so the host's early load of
/// its output is still reported.
#[test]
fn a_host_load_of_a_zero_copy_kernels_output_is_reported() {
    report(
        "zero-copy-load",
        "the host loaded bytes that the launch of kernel _Z5twicePKiPii writes",
    );
}

/// The host loads what a kernel still queued will write (CUMOCK_SCHEDULE=lazy keeps it
/// queued until the host synchronises): the trap armed at the launch sees the load.
#[test]
fn a_host_load_of_a_queued_kernels_output_is_reported() {
    report_under(
        "stale",
        "the host loaded bytes that the launch of kernel _Z4fillPiii writes",
        &[("CUMOCK_SCHEDULE", "lazy")],
    );
}

/// The host loads what a running kernel will write (it runs 300 ms; the host looks after
/// 50): the trap armed at the launch stays armed until the kernel ends.
#[test]
fn a_host_load_while_the_kernel_runs_is_reported() {
    report(
        "running-load",
        "the host loaded bytes that the launch of kernel _Z9late_fillPiiy writes",
    );
}

/// The same with the kernel a graph's node: the node arms what it may write when it
/// starts to run.
#[test]
fn a_host_load_while_a_graphs_kernel_runs_is_reported() {
    report(
        "graph-running-load",
        "the host loaded bytes that cuGraphLaunch writes",
    );
}

/// A missing synchronisation reads stale data every time under CUMOCK_SCHEDULE=lazy; the
/// same program, ordered, reads what the kernel wrote under every schedule.
#[test]
fn lazy_scheduling_shows_a_missing_synchronisation_every_time() {
    for _ in 0..3 {
        let (out, _) = stderr_of(&planted(), &["stale"], &[("CUMOCK_SCHEDULE", "lazy")]);
        assert!(out.contains("stale") && !out.contains("fresh"), "{out}");
    }
    for schedule in ["eager", "lazy", "random:3"] {
        let (_, err) = stderr_of(&planted(), &["fixed"], &[("CUMOCK_SCHEDULE", schedule)]);
        assert!(!err.contains("CHECK FAILED"), "{schedule}: {err}");
    }
}

/// A program to run: its name, executable, arguments and environment.
type Run = (
    String,
    PathBuf,
    Vec<&'static str>,
    Vec<(&'static str, &'static str)>,
);

/// Every runtime program is correctly ordered: none draws a report.
#[test]
fn correct_programs_draw_no_report() {
    let mut runs: Vec<Run> = Vec::new();
    for p in [
        "device_query",
        "memory",
        "host_memory",
        "streams_events",
        "host_functions",
        "entry_points",
        "pool",
        "ipc",
        "kernel_launch",
        "kernel_more",
        "kernel_fault",
        "async_api",
        "simple_streams",
        "simple_hyperq",
        "stream_priorities",
        "simple_callback",
        "threads",
        "leaky",
        "simple_cuda_graphs",
        "jacobi_graphs",
        "cg_grid_sync",
        "device_printf",
        "graph_memory_nodes",
        "graph_conditional_nodes",
        "graph_add_node",
        "graph_exec_update",
    ] {
        let exe = common::nvcc_with(p, &format!("{p}_ordering"), &[]);
        runs.push((p.to_owned(), exe, vec![], vec![]));
    }
    for p in [
        "memory",
        "pool",
        "async_api",
        "simple_streams",
        "simple_callback",
        "simple_cuda_graphs",
        "jacobi_graphs",
        "kernel_launch",
    ] {
        let exe = common::nvcc_with(
            p,
            &format!("{p}_ordering_ptds"),
            &["--default-stream", "per-thread"],
        );
        runs.push((format!("{p} (per-thread)"), exe, vec![], vec![]));
    }
    let peer = common::nvcc_with("peer", "peer_ordering", &[]);
    runs.push(("peer".into(), peer, vec![], vec![("CUMOCK_DEVICES", "2")]));
    runs.push((
        "ordering_bugs fixed".into(),
        planted(),
        vec!["fixed"],
        vec![],
    ));
    assert!(runs.len() >= 30);
    for (name, exe, args, mut env) in runs {
        env.push(("CUMOCK_MISUSE", "1"));
        let (_, err) = stderr_of(&exe, &args, &env);
        assert!(
            !err.contains("ordering bug"),
            "{name} is correctly ordered, but:\n{err}"
        );
    }
}
