//! Transcripts: what each step of a case returned, normalised so that nothing in it
//! changes from run to run (addresses relative to their reservation, handles and fds by
//! name, free memory relative to the first reading).

use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepRecord {
    pub line: usize,
    /// The step as written in the case file.
    pub step: String,
    /// The CUresult name, `ok` for harness-only steps, or `crash: SIGSEGV`.
    pub result: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<(String, String)>,
    /// `child` for steps run in the second process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Completed,
    Crash { signal: String },
    Timeout { seconds: u64 },
    Skipped { reason: String },
    HarnessError { message: String },
}

impl Outcome {
    pub fn show(&self) -> String {
        match self {
            Outcome::Completed => "completed".into(),
            Outcome::Crash { signal } => format!("crash: {signal}"),
            Outcome::Timeout { seconds } => format!("timeout after {seconds} s"),
            Outcome::Skipped { reason } => format!("skipped: {reason}"),
            Outcome::HarnessError { message } => format!("harness error: {message}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transcript {
    pub case: String,
    pub steps: Vec<StepRecord>,
    pub outcome: Outcome,
}

impl Transcript {
    /// The text form kept in goldens and snapshots: one line a step.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for r in &self.steps {
            let _ = write!(s, "{:>3}: ", r.line);
            if let Some(p) = &r.process {
                let _ = write!(s, "[{p}] ");
            }
            let _ = write!(s, "{} -> {}", r.step, r.result);
            for (k, v) in &r.outputs {
                let _ = write!(s, " {k}={v}");
            }
            s.push('\n');
        }
        let _ = writeln!(s, "end: {}", self.outcome.show());
        s
    }

    /// The form the insta snapshots (`harness/tests/snapshots/`) were first reviewed in:
    /// line numbers unpadded and the outcome as JSON. Goldens use [`Transcript::render`];
    /// the snapshots keep theirs so that a change in them is always a change of the mock.
    pub fn render_snapshot(&self) -> String {
        let mut s = String::new();
        for r in &self.steps {
            let _ = write!(s, "{}: ", r.line);
            if let Some(p) = &r.process {
                let _ = write!(s, "[{p}] ");
            }
            let _ = write!(s, "{} -> {}", r.step, r.result);
            for (k, v) in &r.outputs {
                let _ = write!(s, " {k}={v}");
            }
            s.push('\n');
        }
        let outcome = serde_json::to_string(&self.outcome).expect("outcomes serialise");
        let _ = writeln!(s, "end: {outcome}");
        s
    }

    /// Parses the text form back (for goldens on disk).
    pub fn parse(case: &str, text: &str) -> Result<Self, String> {
        let mut steps = Vec::new();
        let mut outcome = None;
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            if let Some(rest) = line.strip_prefix("end: ") {
                outcome = Some(parse_outcome(rest));
                continue;
            }
            let (num, rest) = line
                .split_once(": ")
                .ok_or_else(|| format!("line {}: expected `N: step -> result`", i + 1))?;
            let lineno: usize = num
                .trim()
                .parse()
                .map_err(|_| format!("line {}: `{num}` is not a line number", i + 1))?;
            let (process, rest) = match rest.strip_prefix('[') {
                Some(r) => {
                    let (p, r) = r
                        .split_once("] ")
                        .ok_or_else(|| format!("line {}: unclosed `[`", i + 1))?;
                    (Some(p.to_owned()), r)
                }
                None => (None, rest),
            };
            let (step, res) = rest
                .rsplit_once(" -> ")
                .ok_or_else(|| format!("line {}: expected ` -> `", i + 1))?;
            let (result, outputs) = split_result(res);
            steps.push(StepRecord {
                line: lineno,
                step: step.to_owned(),
                result,
                outputs,
                process,
            });
        }
        Ok(Self {
            case: case.to_owned(),
            steps,
            outcome: outcome.ok_or("no `end:` line")?,
        })
    }
}

fn split_result(res: &str) -> (String, Vec<(String, String)>) {
    // The result may itself hold a space (`crash: SIGSEGV`); outputs are KEY=VALUE after it.
    let mut parts: Vec<&str> = Vec::new();
    let mut outputs = Vec::new();
    let mut in_outputs = false;
    let mut rest = res;
    while !rest.is_empty() {
        let (tok, tail) = next_token(rest);
        rest = tail;
        if !in_outputs && tok.contains('=') && !parts.is_empty() {
            in_outputs = true;
        }
        if in_outputs {
            if let Some((k, v)) = tok.split_once('=') {
                outputs.push((k.to_owned(), v.to_owned()));
            }
        } else {
            parts.push(tok);
        }
    }
    (parts.join(" "), outputs)
}

/// One whitespace-separated token, where a `"quoted string"` may hold spaces.
fn next_token(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    let mut in_quote = false;
    for (i, c) in s.char_indices() {
        match c {
            '"' => in_quote = !in_quote,
            ' ' if !in_quote => return (&s[..i], &s[i + 1..]),
            _ => {}
        }
    }
    (s, "")
}

fn parse_outcome(s: &str) -> Outcome {
    if s == "completed" {
        Outcome::Completed
    } else if let Some(sig) = s.strip_prefix("crash: ") {
        Outcome::Crash {
            signal: sig.to_owned(),
        }
    } else if let Some(t) = s.strip_prefix("timeout after ") {
        Outcome::Timeout {
            seconds: t.trim_end_matches(" s").parse().unwrap_or(0),
        }
    } else if let Some(r) = s.strip_prefix("skipped: ") {
        Outcome::Skipped {
            reason: r.to_owned(),
        }
    } else {
        Outcome::HarnessError {
            message: s.trim_start_matches("harness error: ").to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_form_round_trips() {
        let t = Transcript {
            case: "c".into(),
            steps: vec![
                StepRecord {
                    line: 3,
                    step: "map va size=g handle=h".into(),
                    result: "CUDA_ERROR_NOT_SUPPORTED".into(),
                    outputs: vec![],
                    process: None,
                },
                StepRecord {
                    line: 9,
                    step: "device-name 0".into(),
                    result: "CUDA_SUCCESS".into(),
                    outputs: vec![("name".into(), "\"NVIDIA H200\"".into())],
                    process: Some("child".into()),
                },
            ],
            outcome: Outcome::Crash {
                signal: "SIGSEGV".into(),
            },
        };
        let text = t.render();
        assert_eq!(Transcript::parse("c", &text).unwrap(), t);
        assert_eq!(
            t.render_snapshot(),
            "3: map va size=g handle=h -> CUDA_ERROR_NOT_SUPPORTED\n\
             9: [child] device-name 0 -> CUDA_SUCCESS name=\"NVIDIA H200\"\n\
             end: {\"crash\":{\"signal\":\"SIGSEGV\"}}\n"
        );
    }
}
