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

/// Normalisation passes. Each turns one kind of run-dependent value into a stable name;
/// they are append-only, so that old goldens keep passing when a pass is added.
pub mod normalize {
    use crate::expr::show_size;

    /// An address as `NAME+OFFSET` of the named region (reservation or allocation) that
    /// holds it; `0` stays `0`; anything else is `<unknown address>`.
    pub fn address(addr: u64, regions: &[(String, u64, u64)]) -> String {
        if addr == 0 {
            return "0".into();
        }
        for (name, base, size) in regions.iter().rev() {
            if addr >= *base && addr - base < (*size).max(1) {
                let off = addr - base;
                return if off == 0 {
                    name.clone()
                } else {
                    format!("{name}+{}", show_size(off))
                };
            }
        }
        "<unknown address>".into()
    }

    /// A handle by the name it was bound to, or `handle#N` in order of first appearance.
    pub fn handle(value: u64, names: &mut Vec<(u64, String)>) -> String {
        if value == 0 {
            return "0".into();
        }
        if let Some((_, n)) = names.iter().find(|(v, _)| *v == value) {
            return n.clone();
        }
        let n = format!("handle#{}", names.len() + 1);
        names.push((value, n.clone()));
        n
    }

    /// File descriptors differ from run to run: only their being one is kept.
    pub fn fd(value: i64) -> String {
        if value >= 0 {
            "<fd>".into()
        } else {
            value.to_string()
        }
    }

    /// Free memory relative to the first reading of the run (`F0`, `F0-128MiB`): the
    /// absolute figure moves between runs on a real GPU, the differences do not.
    pub fn free_memory(value: u64, baseline: &mut Option<u64>) -> String {
        let b = *baseline.get_or_insert(value);
        match value.cmp(&b) {
            std::cmp::Ordering::Equal => "F0".into(),
            std::cmp::Ordering::Less => format!("F0-{}", show_size(b - value)),
            std::cmp::Ordering::Greater => format!("F0+{}", show_size(value - b)),
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn addresses_are_relative_to_their_region() {
            let regions = vec![
                ("va".to_string(), 0x7f00_0000_0000, 8 << 20),
                ("p".to_string(), 0x7e00_0000_0000, 2 << 20),
            ];
            assert_eq!(address(0x7f00_0000_0000, &regions), "va");
            assert_eq!(address(0x7f00_0040_0000, &regions), "va+4MiB");
            assert_eq!(address(0x7e00_0000_0010, &regions), "p+16");
            assert_eq!(address(0x1234, &regions), "<unknown address>");
            assert_eq!(address(0, &regions), "0");
        }

        #[test]
        fn handles_get_names_in_order() {
            let mut names = vec![(0xabc, "h".to_string())];
            assert_eq!(handle(0xabc, &mut names), "h");
            assert_eq!(handle(0x111, &mut names), "handle#2");
            assert_eq!(handle(0x222, &mut names), "handle#3");
            assert_eq!(handle(0x111, &mut names), "handle#2");
        }

        #[test]
        fn fds_and_free_memory() {
            assert_eq!(fd(7), "<fd>");
            assert_eq!(fd(-1), "-1");
            let mut b = None;
            assert_eq!(free_memory(1000 << 20, &mut b), "F0");
            assert_eq!(free_memory(872 << 20, &mut b), "F0-128MiB");
            assert_eq!(free_memory(1000 << 20, &mut b), "F0");
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
    }
}
