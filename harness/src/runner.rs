//! Runs cases in child processes: one process a case, so that a driver that crashes is
//! recorded as `crash: SIGSEGV` and one that hangs as a timeout, and the run goes on.

use crate::case::Case;
use crate::message::{CaseResult, Status};
use crate::transcript::{Outcome, StepRecord, Transcript};
use anyhow::{anyhow, bail, Context as _, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
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
        if let Some(child) = s.child() {
            check(child, Some("child"));
        }
    }
    out
}

/// The case's own process (`cumock __case`): runs the steps against the driver, one JSON
/// line a step on stdout, then how the case ended.
pub fn case_process(driver: &str, case: &Path) -> Result<()> {
    let c = crate::case::parse_file(case)?;
    let end = run_in_process(driver, &c, |exec, c| {
        if c.devices > 1 && !enough_devices(driver, c.devices)? {
            return Ok(Some(Outcome::Skipped {
                reason: format!("needs {} devices", c.devices),
            }));
        }
        exec.run(&c.steps).map(|_| None)
    });
    print_end(end);
    Ok(())
}

/// The second process of a `child { }` block at `line` (`cumock __child`).
pub fn child_process(driver: &str, case: &Path, line: usize) -> Result<()> {
    let c = crate::case::parse_file(case)?;
    let steps = c
        .steps
        .iter()
        .find(|s| s.line == line)
        .and_then(|s| s.child().map(<[_]>::to_vec))
        .ok_or_else(|| anyhow!("no child block at line {line}"))?;
    let vars: std::collections::HashMap<String, u64> =
        serde_json::from_str(&std::env::var("CUMOCK_CHILD_VARS").unwrap_or_else(|_| "{}".into()))?;
    let end = run_in_process(driver, &c, move |exec, _| {
        exec.adopt(vars);
        exec.run(&steps).map(|_| None)
    });
    print_end(end);
    Ok(())
}

fn enough_devices(driver: &str, need: u32) -> Result<bool> {
    let api = crate::driver::Api::load(driver)?;
    let (init, count) = (
        api.cuInit.ok_or_else(|| anyhow!("no cuInit"))?,
        api.cuDeviceGetCount
            .ok_or_else(|| anyhow!("no cuDeviceGetCount"))?,
    );
    let mut n = 0;
    // Safety: plain calls with an out-pointer to a local.
    let ok = unsafe { init(0) == 0 && count(&mut n) == 0 };
    Ok(ok && n >= need as i32)
}

fn run_in_process(
    driver: &str,
    c: &crate::case::Case,
    body: impl FnOnce(
        &mut crate::case_steps::Exec<'_>,
        &crate::case::Case,
    ) -> Result<Option<crate::transcript::Outcome>>,
) -> Result<Option<crate::transcript::Outcome>> {
    // The library stays loaded until the process exits (a static holds it): a driver's
    // destructors must not run before the last line of the transcript is out.
    static LOADED: std::sync::OnceLock<crate::driver::Api> = std::sync::OnceLock::new();
    let api = match LOADED.get() {
        Some(a) => a,
        None => {
            let a = crate::driver::Api::load(driver)?;
            LOADED.get_or_init(|| a)
        }
    };
    let mut sink = crate::case_steps::stdout_sink();
    let mut e = crate::case_steps::Exec::new(api, c, &mut sink);
    body(&mut e, c)
}

fn print_end(end: Result<Option<crate::transcript::Outcome>>) {
    let outcome = match end {
        Ok(None) => crate::transcript::Outcome::Completed,
        Ok(Some(o)) => o,
        Err(e) => crate::transcript::Outcome::HarnessError {
            message: format!("{e:#}"),
        },
    };
    println!(
        "{}",
        serde_json::to_string(&Line::End(outcome)).expect("serialises")
    );
}

/// Runs a suite: each case in its own process, compared with its expectations and,
/// where there is one, its golden.
pub fn run_suite(
    suite: &[crate::case::Case],
    target: &Target,
    golden: Option<&Path>,
    jobs: Option<usize>,
) -> Result<Vec<CaseResult>> {
    let exe = std::env::current_exe()?;
    let jobs = jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
            * 2
    });
    let goldens = match golden {
        Some(g) => crate::diff::load_set(g)?,
        None => BTreeMap::new(),
    };
    let start = Instant::now();
    // On a real GPU, cases that read free memory run alone, after the others: another
    // case allocating at the same time would move the figure they record.
    let alone = |c: &crate::case::Case| {
        !target.is_mock
            && c.steps
                .iter()
                .any(|s| s.operation == "mem-info" || s.child().is_some())
    };
    let (shared, solo): (Vec<usize>, Vec<usize>) =
        (0..suite.len()).partition(|i| !alone(&suite[*i]));
    let pick = |idx: &[usize]| idx.iter().map(|i| suite[*i].clone()).collect::<Vec<_>>();
    let mut by_index: Vec<Option<crate::transcript::Transcript>> = vec![None; suite.len()];
    for (idx, j) in [(shared, jobs), (solo, 1)] {
        for (i, t) in idx.iter().zip(run_all(&exe, target, &pick(&idx), j, true)) {
            by_index[*i] = Some(t);
        }
    }
    let transcripts: Vec<crate::transcript::Transcript> = by_index
        .into_iter()
        .map(|t| t.expect("every case ran"))
        .collect();
    let per_case = start.elapsed() / suite.len().max(1) as u32;
    Ok(suite
        .iter()
        .zip(transcripts)
        .map(|(c, t)| {
            let mut problems = Vec::new();
            let mut declared = Vec::new();
            let skipped = matches!(t.outcome, crate::transcript::Outcome::Skipped { .. });
            if let crate::transcript::Outcome::HarnessError { message } = &t.outcome {
                problems.push(format!("harness error: {message}"));
            }
            let expectation = expectation_failures(c, &t);
            if !skipped {
                if target.is_mock || c.diverges.is_empty() {
                    problems.extend(expectation);
                } else {
                    declared.extend(expectation);
                }
                let crash_expected = c.steps.iter().any(crate::case::Step::expects_crash);
                if target.is_mock
                    && !crash_expected
                    && matches!(
                        t.outcome,
                        crate::transcript::Outcome::Crash { .. }
                            | crate::transcript::Outcome::Timeout { .. }
                    )
                {
                    problems.push(format!("the mock must never {}", t.outcome.show()));
                }
            }
            if let (Some(g), false) = (goldens.get(&c.name), skipped) {
                let d = crate::diff::compare(g, &t);
                if c.diverges.is_empty() {
                    problems.extend(d.into_iter().map(|l| format!("golden: {l}")));
                } else {
                    declared.extend(d.into_iter().map(|l| format!("golden (declared): {l}")));
                }
            }
            let status = if !problems.is_empty() {
                Status::Fail
            } else if skipped {
                Status::Skipped
            } else if !declared.is_empty() {
                Status::Declared
            } else if golden.is_some() && !goldens.contains_key(&c.name) && !c.has_expectations() {
                Status::Unchecked
            } else {
                Status::Pass
            };
            CaseResult {
                case: c.name.clone(),
                status,
                problems,
                declared,
                transcript: t,
                elapsed: per_case,
            }
        })
        .collect())
}

/// Writes each transcript as DIR/<case>.txt, in the goldens' text form.
pub fn write_transcripts(dir: &Path, results: &[CaseResult]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for r in results {
        if matches!(
            r.transcript.outcome,
            crate::transcript::Outcome::Skipped { .. }
        ) {
            continue;
        }
        std::fs::write(dir.join(format!("{}.txt", r.case)), r.transcript.render())?;
    }
    Ok(())
}

/// Case files from the arguments (files, or folders of `*.case`), or the whole suite.
pub fn load_cases(args: &[PathBuf]) -> Result<Vec<crate::case::Case>> {
    let roots: Vec<PathBuf> = if args.is_empty() {
        vec![cases_root(args)]
    } else {
        args.to_vec()
    };
    let mut files = Vec::new();
    for r in roots {
        if r.is_dir() {
            let mut v: Vec<_> = std::fs::read_dir(&r)
                .with_context(|| format!("reading {}", r.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "case"))
                .collect();
            v.sort();
            files.extend(v);
        } else if r.exists() {
            files.push(r);
        } else {
            bail!("{}: no such case file or folder", r.display());
        }
    }
    if files.is_empty() {
        bail!("no case files found");
    }
    let mut errors = Vec::new();
    let mut cases = Vec::new();
    for f in files {
        match crate::case::parse_file(&f) {
            Ok(c) => cases.push(c),
            Err(e) => errors.push(e.to_string()),
        }
    }
    if !errors.is_empty() {
        bail!(
            "{} case file(s) do not parse:\n{}",
            errors.len(),
            errors.join("\n")
        );
    }
    Ok(cases)
}

/// The suite's folder: `cases/` here, or beside the binary's repository.
pub fn cases_root(args: &[PathBuf]) -> PathBuf {
    if let Some(first) = args.first() {
        let dir = if first.is_dir() {
            first.clone()
        } else {
            first.parent().map(Path::to_owned).unwrap_or_default()
        };
        return dir;
    }
    let here = PathBuf::from("cases");
    if here.is_dir() {
        return here;
    }
    std::env::current_exe()
        .ok()
        .and_then(|e| {
            e.ancestors()
                .find(|a| a.join("cases").is_dir())
                .map(|a| a.join("cases"))
        })
        .unwrap_or(here)
}
