//! Runs cases in child processes: one process a case, so that a driver that crashes is
//! recorded as `crash: SIGSEGV` and one that hangs as a timeout, and the run goes on.

use crate::case::Case;
use crate::transcript::{Outcome, StepRecord, Transcript};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One line from a case process: a step's record, or how the case ended.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Line {
    Step(StepRecord),
    End(Outcome),
}

#[derive(Debug, Clone)]
pub struct Target {
    /// The driver library to load.
    pub driver: PathBuf,
    /// The mock gets `CUMOCK_DEVICES` for multi-device cases; a real driver gets
    /// `CUDA_VISIBLE_DEVICES`, so a 2-GPU host records 1-GPU cases as one GPU.
    pub is_mock: bool,
    pub timeout: Duration,
}

pub fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGSEGV => "SIGSEGV".into(),
        libc::SIGBUS => "SIGBUS".into(),
        libc::SIGABRT => "SIGABRT".into(),
        libc::SIGILL => "SIGILL".into(),
        libc::SIGFPE => "SIGFPE".into(),
        libc::SIGKILL => "SIGKILL".into(),
        other => format!("signal {other}"),
    }
}

/// Runs one case in a child process of `exe` (this harness's own binary).
pub fn run_case(exe: &Path, target: &Target, case: &Case) -> Transcript {
    let mut cmd = Command::new(exe);
    cmd.arg("__case")
        .arg("--driver")
        .arg(&target.driver)
        .arg(&case.path);
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::null());
    if target.is_mock {
        if case.devices > 1 && std::env::var_os("CUMOCK_PROFILE").is_none() {
            cmd.env("CUMOCK_DEVICES", case.devices.to_string());
        }
    } else if std::env::var_os("CUDA_VISIBLE_DEVICES").is_none() {
        let list: Vec<String> = (0..case.devices).map(|d| d.to_string()).collect();
        cmd.env("CUDA_VISIBLE_DEVICES", list.join(","));
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return ended(
                case,
                Vec::new(),
                Outcome::HarnessError {
                    message: format!("cannot start {}: {e}", exe.display()),
                },
            )
        }
    };
    let stdout = child.stdout.take().expect("piped");
    let stderr = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut steps = Vec::new();
        let mut end = None;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            match serde_json::from_str::<Line>(&line) {
                Ok(Line::Step(s)) => steps.push(s),
                Ok(Line::End(o)) => end = Some(o),
                Err(_) => {}
            }
        }
        (steps, end)
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut BufReader::new(stderr), &mut s);
        s
    });
    let deadline = Instant::now() + target.timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(_) => break None,
        }
    };
    let (steps, end) = reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    let outcome = match status {
        None => Outcome::Timeout {
            seconds: target.timeout.as_secs(),
        },
        Some(st) => match std::os::unix::process::ExitStatusExt::signal(&st) {
            Some(sig) => Outcome::Crash {
                signal: signal_name(sig),
            },
            None => end.unwrap_or_else(|| Outcome::HarnessError {
                message: format!(
                    "the case process exited ({st}) without finishing: {}",
                    stderr.lines().last().unwrap_or("")
                ),
            }),
        },
    };
    ended(case, steps, outcome)
}

fn ended(case: &Case, steps: Vec<StepRecord>, outcome: Outcome) -> Transcript {
    Transcript {
        case: case.name.clone(),
        steps,
        outcome,
    }
}

/// Runs cases on `jobs` threads, each case in its own process; results in input order.
pub fn run_all(
    exe: &Path,
    target: &Target,
    cases: &[Case],
    jobs: usize,
    progress: bool,
) -> Vec<Transcript> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Arc<Mutex<Vec<Option<Transcript>>>> =
        Arc::new(Mutex::new(vec![None; cases.len()]));
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= cases.len() {
                    break;
                }
                let t = run_case(exe, target, &cases[i]);
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                if progress {
                    crate::message::progress(n, cases.len(), &cases[i].name, &t.outcome);
                }
                results.lock().expect("no panics hold it")[i] = Some(t);
            });
        }
    });
    let v = std::mem::take(&mut *results.lock().expect("no panics hold it"));
    v.into_iter().map(|t| t.expect("every case ran")).collect()
}

/// What an expectation in the case file says against what happened.
pub fn expectation_failures(case: &Case, t: &Transcript) -> Vec<String> {
    let mut out = Vec::new();
    let mut check = |steps: &[crate::case::Step], process: Option<&str>| {
        for s in steps {
            let Some(e) = &s.expect else { continue };
            let rec = t
                .steps
                .iter()
                .find(|r| r.line == s.line && r.process.as_deref() == process);
            if e.result == "crash" {
                // The process must die at this step: no record of it, a crash outcome.
                if rec.is_some() || !matches!(t.outcome, Outcome::Crash { .. }) {
                    out.push(format!(
                        "line {}: `{}` expected the process to crash here ({})",
                        s.line,
                        s.source,
                        t.outcome.show()
                    ));
                }
                continue;
            }
            match rec {
                None => out.push(format!(
                    "line {}: `{}` expected {}, but the step never ran ({})",
                    s.line,
                    s.source,
                    e.result,
                    t.outcome.show()
                )),
                Some(r) => {
                    if r.result != e.result {
                        out.push(format!(
                            "line {}: `{}` expected {}, got {}",
                            s.line, s.source, e.result, r.result
                        ));
                    }
                    for (k, v) in &e.outputs {
                        match r.outputs.iter().find(|(rk, _)| rk == k) {
                            Some((_, rv)) if rv == v || rv.trim_matches('"') == v => {}
                            Some((_, rv)) => out.push(format!(
                                "line {}: `{}` expected {k}={v}, got {k}={rv}",
                                s.line, s.source
                            )),
                            None => out.push(format!(
                                "line {}: `{}` expected {k}={v}, got no {k}",
                                s.line, s.source
                            )),
                        }
                    }
                }
            }
        }
    };
    check(&case.steps, None);
    for s in &case.steps {
        if let Some(child) = &s.child {
            check(child, Some("child"));
        }
    }
    out
}
