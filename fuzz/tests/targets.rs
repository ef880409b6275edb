//! The short run, one test a target (issue 19): the committed corpus and the regression
//! inputs replayed, then a few thousand seeded mutations, a few seconds each on a 2-core
//! machine. A finding fails the test, naming its input's file under `fuzz/crashes/`.
//! `CUMOCK_FUZZ_ITERATIONS` and `CUMOCK_FUZZ_SECONDS` change the bounds.

use cumock_fuzz::engine::{Config, Session};
use cumock_fuzz::{fuzz_dir, target};
use std::time::Duration;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn short_run(name: &str, iterations: u64) {
    let t = target(name).unwrap();
    let dir = fuzz_dir();
    let cfg = Config {
        iterations: env("CUMOCK_FUZZ_ITERATIONS", iterations),
        time: Duration::from_secs(env("CUMOCK_FUZZ_SECONDS", 20)),
        seed: 19,
        corpus: vec![
            dir.join("corpus").join(name),
            dir.join("regressions").join(name),
        ],
        crashes: dir.join("crashes"),
        save_new: None,
        deadline: Duration::from_secs(30),
        // A program's main thread's stack: the parsers bound their nesting, so deep input
        // must end in an error there, not in a stack overflow.
        stack: cumock_fuzz::engine::PROGRAM_STACK,
    };
    let r = Session::new(t, cfg).run();
    println!(
        "{name}: {} replayed, {} mutated in {:.1?}, {} signatures",
        r.replayed, r.mutated, r.elapsed, r.signatures
    );
    assert!(r.replayed > 0, "no corpus in fuzz/corpus/{name}");
    let known = std::fs::read_to_string(dir.join("pending/KNOWN")).unwrap_or_default();
    let known: Vec<&str> = known
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .collect();
    let (pending, findings): (Vec<_>, Vec<_>) = r
        .findings
        .into_iter()
        .partition(|f| known.iter().any(|k| f.message.contains(k)));
    for f in &pending {
        println!(
            "known, fix pending (fuzz/pending/KNOWN): {:?}: {}",
            f.kind, f.message
        );
    }
    assert!(
        findings.is_empty(),
        "{name}: {} finding(s):\n{}",
        findings.len(),
        findings
            .iter()
            .map(|f| format!("{:?}: {} (input: {})", f.kind, f.message, f.input.display()))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn ptx() {
    short_run("ptx", 8000);
}

#[test]
fn fatbin() {
    short_run("fatbin", 15000);
}

#[test]
fn case() {
    short_run("case", 15000);
}

#[test]
fn jit() {
    short_run("jit", 10000);
}

#[test]
fn engines() {
    short_run("engines", 600);
}

#[test]
fn api() {
    short_run("api", 3000);
}

/// Inputs that found a bug in an area being fixed elsewhere (`fuzz/pending/*/`, each
/// named for its symptom): replayed only when asked (`--ignored`). Once its fix lands,
/// an input moves to `fuzz/regressions/TARGET/`, which every run replays.
#[test]
#[ignore = "findings whose fixes are pending; run with --ignored to check a fix"]
fn pending_findings() {
    let dir = fuzz_dir().join("pending");
    let mut failed = Vec::new();
    for t in cumock_fuzz::TARGETS {
        let cfg = Config {
            iterations: 0,
            time: Duration::ZERO,
            seed: 0,
            corpus: vec![dir.join(t.name)],
            crashes: std::env::temp_dir().join("cumock-fuzz-pending"),
            save_new: None,
            deadline: Duration::from_secs(30),
            stack: cumock_fuzz::engine::PROGRAM_STACK,
        };
        let r = Session::new(t, cfg).run();
        failed.extend(
            r.findings
                .into_iter()
                .map(|f| format!("{}: {:?}: {}", t.name, f.kind, f.message)),
        );
    }
    assert!(failed.is_empty(), "still failing:\n{}", failed.join("\n"));
}
