//! `cumock report`: the conformance matrix, one row per case and one column per
//! implementation (the mock, and each GPU × driver release whose goldens are at hand), as
//! one self-contained HTML page. Each cell is judged with the harness's own checks (the
//! case's expectations, `diff::compare` against the reference golden) and links to its
//! step-by-step differences and transcript.

use crate::case::Case;
use crate::message::{CaseResult, Status};
use crate::transcript::{Outcome, Transcript};
use anyhow::{Context as _, Result};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What one implementation did with one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    /// Differs only where the case declares a divergence.
    Declared,
    Differs,
    Skipped,
}

impl Verdict {
    fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Declared => "declared",
            Verdict::Differs => "differs",
            Verdict::Skipped => "skipped",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Cell {
    pub verdict: Verdict,
    /// Step-by-step differences and failed expectations, or why it was skipped.
    pub lines: Vec<String>,
    pub transcript: Option<String>,
}

/// A set of golden transcripts: one GPU and driver release.
pub struct GoldenSet {
    pub name: String,
    pub transcripts: BTreeMap<String, Transcript>,
}

pub struct Matrix {
    /// The mock first, then the golden sets.
    pub columns: Vec<String>,
    /// The column every other is compared with.
    pub reference: Option<String>,
    pub rows: Vec<Row>,
}

pub struct Row {
    pub case: String,
    pub description: String,
    pub diverges: Vec<String>,
    pub cells: Vec<Cell>,
}

/// The golden sets under `root` (each folder of `<case>.txt`) and those given: a folder
/// of transcripts is one set, a folder of such folders is several.
pub fn golden_sets(root: &Path, given: &[PathBuf]) -> Result<Vec<GoldenSet>> {
    let mut folders = Vec::new();
    let holds_transcripts = |d: &Path| -> bool {
        std::fs::read_dir(d).is_ok_and(|mut it| {
            it.any(|e| e.is_ok_and(|e| e.path().extension().is_some_and(|x| x == "txt")))
        })
    };
    let subfolders = |d: &Path| -> Result<Vec<PathBuf>> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(d)
            .with_context(|| format!("reading {}", d.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        v.sort();
        Ok(v)
    };
    if root.is_dir() {
        folders.extend(subfolders(root)?);
    }
    for g in given {
        if !g.is_dir() {
            anyhow::bail!("{}: not a folder of golden transcripts", g.display());
        }
        if holds_transcripts(g) {
            folders.push(g.clone());
        } else {
            folders.extend(subfolders(g)?);
        }
    }
    let mut sets: Vec<GoldenSet> = Vec::new();
    for f in folders {
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| f.display().to_string());
        if sets.iter().any(|s| s.name == name) {
            continue;
        }
        sets.push(GoldenSet {
            name,
            transcripts: crate::diff::load_set(&f)?,
        });
    }
    Ok(sets)
}

/// The matrix: `mock` is `cumock run`'s verdict on each case (against the reference
/// golden); each golden set is judged by the case's expectations and, unless it is the
/// reference, by its differences from the reference.
pub fn build(
    suite: &[Case],
    mock: &[CaseResult],
    sets: &[GoldenSet],
    reference: Option<&str>,
) -> Matrix {
    let reference = reference.filter(|r| sets.iter().any(|s| s.name == *r));
    let refset = reference.and_then(|r| sets.iter().find(|s| s.name == r));
    let mut columns = vec!["mock".to_string()];
    columns.extend(sets.iter().map(|s| s.name.clone()));
    let rows = suite
        .iter()
        .map(|c| {
            let mut cells = Vec::new();
            cells.push(match mock.iter().find(|r| r.case == c.name) {
                Some(r) => mock_cell(r),
                None => skipped("not run"),
            });
            for s in sets {
                let against = refset
                    .filter(|r| r.name != s.name)
                    .map(|r| (r.name.as_str(), r.transcripts.get(&c.name)));
                cells.push(golden_cell(c, s.transcripts.get(&c.name), against));
            }
            Row {
                case: c.name.clone(),
                description: c.description.clone(),
                diverges: c.diverges.clone(),
                cells,
            }
        })
        .collect();
    Matrix {
        columns,
        reference: reference.map(str::to_owned),
        rows,
    }
}

fn skipped(why: &str) -> Cell {
    Cell {
        verdict: Verdict::Skipped,
        lines: vec![why.to_owned()],
        transcript: None,
    }
}

fn mock_cell(r: &CaseResult) -> Cell {
    let (verdict, lines) = match r.status {
        Status::Pass => (Verdict::Pass, Vec::new()),
        Status::Declared => (Verdict::Declared, r.declared.clone()),
        Status::Fail => (Verdict::Differs, r.problems.clone()),
        Status::Skipped => (Verdict::Skipped, vec![r.transcript.outcome.show()]),
        Status::Unchecked => (
            Verdict::Skipped,
            vec!["unchecked: no golden and no expected results".to_owned()],
        ),
    };
    Cell {
        verdict,
        lines,
        transcript: Some(r.transcript.render()),
    }
}

fn golden_cell(
    c: &Case,
    t: Option<&Transcript>,
    against: Option<(&str, Option<&Transcript>)>,
) -> Cell {
    let Some(t) = t else {
        // Goldens keep no transcript of a skipped case.
        return skipped(&if c.devices > 1 {
            format!("not recorded: needs {} devices", c.devices)
        } else {
            "not recorded in this set".to_string()
        });
    };
    if let Outcome::Skipped { reason } = &t.outcome {
        return skipped(reason);
    }
    let mut lines = crate::runner::expectation_failures(c, t);
    if let Some((name, Some(r))) = against {
        lines.extend(
            crate::diff::compare(r, t)
                .into_iter()
                .map(|l| format!("against {name} (A): {l}")),
        );
    }
    let verdict = if lines.is_empty() {
        Verdict::Pass
    } else if c.diverges.is_empty() {
        Verdict::Differs
    } else {
        Verdict::Declared
    };
    Cell {
        verdict,
        lines,
        transcript: Some(t.render()),
    }
}

impl Matrix {
    /// How many cells of each verdict a column has.
    pub fn counts(&self, column: usize) -> BTreeMap<&'static str, usize> {
        let mut m = BTreeMap::new();
        for r in &self.rows {
            *m.entry(r.cells[column].verdict.word()).or_default() += 1;
        }
        m
    }

    /// One line per column, for the terminal.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        for (j, c) in self.columns.iter().enumerate() {
            let counts = self
                .counts(j)
                .iter()
                .map(|(k, v)| format!("{v} {k}"))
                .collect::<Vec<_>>()
                .join(", ");
            let _ = writeln!(s, "{c}: {counts}");
        }
        s
    }

    /// The page: a table of links, and for each cell a drill-down that CSS shows when
    /// its link is followed (`:target`), so it needs no script and no network.
    pub fn html(&self, title: &str) -> String {
        let mut h = String::new();
        let _ = write!(
            h,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width\">\
             <title>{}</title><style>{STYLE}</style></head><body>\n",
            esc(title)
        );
        let _ = writeln!(h, "<h1>{}</h1>", esc(title));
        let _ = writeln!(
            h,
            "<p class=\"about\">{} cases, {} implementations. Each implementation's \
             transcript is checked against the case's expectations{}. A cell links to its \
             step-by-step differences and transcript.</p>",
            self.rows.len(),
            self.columns.len(),
            match &self.reference {
                Some(r) => format!(" and compared step by step with <b>{}</b>", esc(r)),
                None => String::new(),
            }
        );
        h.push_str("<table id=\"summary\"><tr><th>implementation</th>");
        for v in ["pass", "declared", "differs", "skipped"] {
            let _ = write!(h, "<th class=\"{v}\">{v}</th>");
        }
        h.push_str("</tr>\n");
        for (j, c) in self.columns.iter().enumerate() {
            let counts = self.counts(j);
            let _ = write!(h, "<tr><td>{}</td>", esc(c));
            for v in ["pass", "declared", "differs", "skipped"] {
                let _ = write!(h, "<td>{}</td>", counts.get(v).copied().unwrap_or(0));
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</table>\n");
        h.push_str(
            "<input type=\"checkbox\" id=\"only\"><label for=\"only\">only cases where an \
             implementation does not pass</label>\n",
        );
        h.push_str("<table id=\"matrix\"><thead><tr><th>case</th>");
        for c in &self.columns {
            let _ = write!(h, "<th>{}</th>", esc(c));
        }
        h.push_str("</tr></thead><tbody>\n");
        for (i, r) in self.rows.iter().enumerate() {
            let all_pass = r.cells.iter().all(|c| c.verdict == Verdict::Pass);
            let _ = write!(
                h,
                "<tr{}><th title=\"{}\">{}</th>",
                if all_pass { " class=\"allpass\"" } else { "" },
                esc(&r.description),
                esc(&r.case)
            );
            for (j, c) in r.cells.iter().enumerate() {
                let w = c.verdict.word();
                let _ = write!(
                    h,
                    "<td class=\"{w}\"><a href=\"#{}\">{w}</a></td>",
                    cell_id(i, j)
                );
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</tbody></table>\n");
        for (i, r) in self.rows.iter().enumerate() {
            for (j, c) in r.cells.iter().enumerate() {
                self.detail(&mut h, i, r, j, c);
            }
        }
        h.push_str("</body></html>\n");
        h
    }

    fn detail(&self, h: &mut String, i: usize, r: &Row, j: usize, c: &Cell) {
        let w = c.verdict.word();
        let _ = write!(
            h,
            "<section class=\"detail\" id=\"{}\"><h2>{} on {}: <span class=\"{w}\">{w}</span></h2>\
             <p>{}</p>",
            cell_id(i, j),
            esc(&r.case),
            esc(&self.columns[j]),
            esc(&r.description)
        );
        if !r.diverges.is_empty() {
            h.push_str("<p class=\"reasons\">The case declares a divergence: ");
            h.push_str(
                &r.diverges
                    .iter()
                    .map(|d| format!("<q>{}</q>", esc(d)))
                    .collect::<Vec<_>>()
                    .join("; "),
            );
            h.push_str("</p>");
        }
        if !c.lines.is_empty() {
            let heading = match c.verdict {
                Verdict::Skipped => "why",
                _ => "differences, step by step",
            };
            let _ = write!(h, "<h3>{heading}</h3><pre class=\"diff\">");
            for l in &c.lines {
                let _ = writeln!(h, "{}", esc(l));
            }
            h.push_str("</pre>");
        }
        if let Some(t) = &c.transcript {
            let _ = write!(
                h,
                "<details><summary>transcript</summary><pre>{}</pre></details>",
                esc(t)
            );
        }
        h.push_str("<p><a href=\"#matrix\">back to the matrix</a></p></section>\n");
    }
}

fn cell_id(row: usize, column: usize) -> String {
    format!("r{row}c{column}")
}

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

const STYLE: &str = "
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: left; }
#matrix thead th { position: sticky; top: 0; background: #f4f4f4; }
#matrix tbody th { font-weight: normal; font-family: ui-monospace, monospace; }
td a { color: inherit; text-decoration: none; display: block; }
.pass { background: #d9f2d9; }
.declared { background: #fff1c2; }
.differs { background: #f8c9c9; font-weight: bold; }
.skipped { background: #e8e8e8; color: #666; }
#only:checked ~ #matrix tr.allpass { display: none; }
.detail { display: none; border: 2px solid #888; padding: 0.5em 1em; margin: 1em 0; }
.detail:target { display: block; }
pre { background: #f7f7f7; padding: 0.5em; overflow-x: auto; }
pre.diff { background: #fff6f6; }
.reasons q { font-style: italic; }
";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::StepRecord;

    fn case(text: &str) -> Case {
        // A folder per call: tests run on threads, and each writes its own case.
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("cumock-report-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("c.case");
        std::fs::write(&f, text).unwrap();
        crate::case::parse_file(&f).unwrap()
    }

    fn transcript(result: &str) -> Transcript {
        Transcript {
            case: "c".into(),
            steps: vec![
                StepRecord {
                    line: 2,
                    step: "init".into(),
                    result: "CUDA_SUCCESS".into(),
                    outputs: vec![],
                    process: None,
                },
                StepRecord {
                    line: 3,
                    step: "va = reserve 4g".into(),
                    result: result.into(),
                    outputs: vec![],
                    process: None,
                },
            ],
            outcome: Outcome::Completed,
        }
    }

    fn set(name: &str, t: Option<Transcript>) -> GoldenSet {
        GoldenSet {
            name: name.into(),
            transcripts: t.into_iter().map(|t| ("c".to_string(), t)).collect(),
        }
    }

    #[test]
    fn a_golden_is_judged_by_expectations_and_against_the_reference() {
        let c = case("# reserve\ninit\nva = reserve 8MiB -> CUDA_SUCCESS\n");
        let sets = [
            set("ref", Some(transcript("CUDA_SUCCESS"))),
            set("new", Some(transcript("CUDA_ERROR_OUT_OF_MEMORY"))),
            set("none", None),
        ];
        let m = build(std::slice::from_ref(&c), &[], &sets, Some("ref"));
        let v: Vec<_> = m.rows[0].cells.iter().map(|c| c.verdict).collect();
        assert_eq!(
            v,
            [
                Verdict::Skipped,
                Verdict::Pass,
                Verdict::Differs,
                Verdict::Skipped
            ]
        );
        let lines = &m.rows[0].cells[2].lines;
        assert!(
            lines.iter().any(|l| l.contains("expected CUDA_SUCCESS"))
                && lines
                    .iter()
                    .any(|l| l.starts_with("against ref (A): line 3")),
            "{lines:?}"
        );
    }

    #[test]
    fn a_declared_divergence_is_its_own_verdict_with_its_reason() {
        let c = case("# reserve\ndiverges \"the real driver says so\"\ninit\nva = reserve 8MiB\n");
        let mut t = transcript("CUDA_ERROR_INVALID_VALUE");
        t.steps[0].line = 3;
        t.steps[1].line = 4;
        let mut r = t.clone();
        r.steps[1].result = "CUDA_SUCCESS".into();
        let sets = [set("ref", Some(r)), set("new", Some(t))];
        let m = build(std::slice::from_ref(&c), &[], &sets, Some("ref"));
        assert_eq!(m.rows[0].cells[2].verdict, Verdict::Declared);
        let page = m.html("t");
        assert!(page.contains("the real driver says so"), "{page}");
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
