//! Everything the harness prints: progress, the results table, JSON and JUnit reports,
//! diff reports. Logic elsewhere never prints.

use crate::diff::Report;
use crate::transcript::{Outcome, Transcript};
use serde::Serialize;
use std::io::IsTerminal;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Pass,
    Fail,
    Skipped,
    /// Differs from the golden only where the case declares a divergence.
    Declared,
    /// Ran cleanly against a golden set that has no golden for it, and it has no expected
    /// results: nothing checked it (a case not yet recorded on a GPU).
    Unchecked,
}

#[derive(Debug, Serialize)]
pub struct CaseResult {
    pub case: String,
    pub status: Status,
    /// Why it failed: expectations, differences from the golden, crashes.
    pub problems: Vec<String>,
    /// Differences from the golden on a case that declares a divergence.
    pub declared: Vec<String>,
    pub transcript: Transcript,
    #[serde(skip)]
    pub elapsed: Duration,
}

pub fn progress(n: usize, total: usize, name: &str, outcome: &Outcome) {
    let tty = std::io::stderr().is_terminal();
    if tty {
        eprint!("\r\x1b[K[{n}/{total}] {name}");
        if n == total {
            eprintln!();
        }
    } else if n == total
        || n.is_multiple_of(20)
        || !matches!(outcome, Outcome::Completed | Outcome::Skipped { .. })
    {
        eprintln!("[{n}/{total}] {name}: {}", outcome.show());
    }
}

pub fn table(
    results: &[CaseResult],
    driver: &str,
    golden: Option<&str>,
    elapsed: Duration,
) -> String {
    let mut s = String::new();
    let width = results
        .iter()
        .map(|r| r.case.len())
        .max()
        .unwrap_or(4)
        .max(4);
    s.push_str(&format!(
        "{:width$}  {:8}  {:>5}  notes\n",
        "case", "status", "steps"
    ));
    for r in results {
        let status = match r.status {
            Status::Pass => "pass",
            Status::Fail => "FAIL",
            Status::Skipped => "skipped",
            Status::Declared => "declared",
            Status::Unchecked => "unchecked",
        };
        let note = match (
            &r.transcript.outcome,
            r.problems.first(),
            r.declared.first(),
        ) {
            (Outcome::Skipped { reason }, _, _) => reason.clone(),
            (_, Some(p), _) => p.clone(),
            (_, None, Some(d)) => d.clone(),
            (o, None, None) if *o != Outcome::Completed => o.show(),
            _ if r.status == Status::Unchecked => {
                "no golden and no expected results: record it on a GPU".to_owned()
            }
            _ => String::new(),
        };
        s.push_str(&format!(
            "{:width$}  {:8}  {:>5}  {}\n",
            r.case,
            status,
            r.transcript.steps.len(),
            note
        ));
        for p in r.problems.iter().skip(1) {
            s.push_str(&format!("{:width$}  {:8}  {:>5}  {}\n", "", "", "", p));
        }
    }
    let count = |st: Status| results.iter().filter(|r| r.status == st).count();
    s.push_str(&format!(
        "\n{} cases against {driver}{}: {} passed, {} failed, {} skipped, {} declared divergences, {} unchecked, in {:.2} s\n",
        results.len(),
        golden.map(|g| format!(", compared with golden {g}")).unwrap_or_default(),
        count(Status::Pass),
        count(Status::Fail),
        count(Status::Skipped),
        count(Status::Declared),
        count(Status::Unchecked),
        elapsed.as_secs_f64()
    ));
    // The plain closing line CI systems read; unchecked cases are not passes.
    let unchecked = match count(Status::Unchecked) {
        0 => String::new(),
        n => format!(", {n} unchecked"),
    };
    s.push_str(&format!(
        "{} passed, {} failed, {} skipped{unchecked}\n",
        count(Status::Pass) + count(Status::Declared),
        count(Status::Fail),
        count(Status::Skipped)
    ));
    s
}

pub fn json(results: &[CaseResult]) -> String {
    serde_json::to_string_pretty(results).expect("results serialise")
}

pub fn junit(results: &[CaseResult]) -> String {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut suite = TestSuite::new("cumock cases");
    for r in results {
        let status = match r.status {
            Status::Pass | Status::Declared => TestCaseStatus::success(),
            Status::Skipped => TestCaseStatus::skipped(),
            Status::Unchecked => {
                let mut st = TestCaseStatus::skipped();
                st.set_message("no golden and no expected results: nothing checked it");
                st
            }
            Status::Fail => {
                let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
                st.set_message(r.problems.first().cloned().unwrap_or_default());
                st.set_description(r.problems.join("\n"));
                st
            }
        };
        let mut tc = TestCase::new(r.case.clone(), status);
        tc.set_time(r.elapsed);
        tc.set_system_out(r.transcript.render());
        suite.add_test_case(tc);
    }
    let mut report = Report::new("cumock");
    report.add_test_suite(suite);
    report
        .to_string()
        .unwrap_or_else(|e| format!("<!-- junit: {e} -->"))
}

pub fn diff_report(r: &Report, a: &str, b: &str) -> String {
    let mut s = String::new();
    s.push_str(&format!("A: {a}\nB: {b}\n\n"));
    for d in &r.differ {
        let tag = if d.declared.is_empty() {
            "DIFFERS"
        } else {
            "differs (declared)"
        };
        s.push_str(&format!("{}: {tag}\n", d.case));
        for reason in &d.declared {
            s.push_str(&format!("    declared: {reason}\n"));
        }
        for l in &d.lines {
            s.push_str(&format!("    {l}\n"));
        }
    }
    for c in &r.only_a {
        s.push_str(&format!("{c}: only in A\n"));
    }
    for c in &r.only_b {
        s.push_str(&format!("{c}: only in B\n"));
    }
    let declared = r.differ.iter().filter(|d| !d.declared.is_empty()).count();
    s.push_str(&format!(
        "\n{} cases: {} same, {} differ ({} declared, {} not), {} only in A, {} only in B\n",
        r.same.len() + r.differ.len() + r.only_a.len() + r.only_b.len(),
        r.same.len(),
        r.differ.len(),
        declared,
        r.differ.len() - declared,
        r.only_a.len(),
        r.only_b.len()
    ));
    s
}
