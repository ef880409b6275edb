//! Comparing transcript sets: the mock with a golden, or one driver's goldens with
//! another's. Differences on cases that declare a divergence are reported as declared.

use crate::transcript::Transcript;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Default)]
pub struct CaseDiff {
    pub case: String,
    /// Step-level differences, one line each.
    pub lines: Vec<String>,
    /// The case declares a divergence from the real driver, with these reasons.
    pub declared: Vec<String>,
}

#[derive(Debug, Default)]
pub struct Report {
    pub same: Vec<String>,
    pub differ: Vec<CaseDiff>,
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
}

impl Report {
    pub fn undeclared(&self) -> usize {
        self.differ.iter().filter(|d| d.declared.is_empty()).count()
            + self.only_a.len()
            + self.only_b.len()
    }
}

/// Step by step: the n-th step of each process on one side against the n-th on the
/// other, so that a comment added to a case does not shift its golden; a step on one
/// side only is a difference.
pub fn compare(a: &Transcript, b: &Transcript) -> Vec<String> {
    let mut out = Vec::new();
    let (as_, bs) = (by_ordinal(a), by_ordinal(b));
    for (k, ra) in &as_ {
        let where_ = format!(
            "line {}{}",
            ra.line,
            k.0.as_ref().map(|p| format!(" [{p}]")).unwrap_or_default()
        );
        match bs.get(k) {
            None => out.push(format!(
                "{where_} `{}`: A {}, B did not run it",
                ra.step,
                show(ra)
            )),
            Some(rb) if rb.step != ra.step => out.push(format!(
                "{where_}: A ran `{}` -> {}, B ran `{}` -> {} (the cases differ)",
                ra.step,
                show(ra),
                rb.step,
                show(rb)
            )),
            Some(rb) if rb.result != ra.result || rb.outputs != ra.outputs => out.push(format!(
                "{where_} `{}`: A {}, B {}",
                ra.step,
                show(ra),
                show(rb)
            )),
            _ => {}
        }
    }
    for (k, rb) in &bs {
        if !as_.contains_key(k) {
            out.push(format!(
                "line {} `{}`: A did not run it, B {}",
                rb.line,
                rb.step,
                show(rb)
            ));
        }
    }
    if a.outcome != b.outcome {
        out.push(format!(
            "end: A {}, B {}",
            a.outcome.show(),
            b.outcome.show()
        ));
    }
    out
}

type Key = (Option<String>, usize);

/// Each record keyed by its process and its ordinal among that process's records.
fn by_ordinal(t: &Transcript) -> BTreeMap<Key, &crate::transcript::StepRecord> {
    let mut seen: BTreeMap<Option<String>, usize> = BTreeMap::new();
    t.steps
        .iter()
        .map(|r| {
            let n = seen.entry(r.process.clone()).or_default();
            *n += 1;
            ((r.process.clone(), *n), r)
        })
        .collect()
}

fn show(r: &crate::transcript::StepRecord) -> String {
    let mut s = r.result.clone();
    for (k, v) in &r.outputs {
        s.push_str(&format!(" {k}={v}"));
    }
    s
}

/// Compares two sets keyed by case name; `declared` gives each case's divergences.
pub fn compare_sets(
    a: &BTreeMap<String, Transcript>,
    b: &BTreeMap<String, Transcript>,
    declared: &BTreeMap<String, Vec<String>>,
) -> Report {
    let mut r = Report::default();
    for (name, ta) in a {
        match b.get(name) {
            None => r.only_a.push(name.clone()),
            Some(tb) => {
                let lines = compare(ta, tb);
                if lines.is_empty() {
                    r.same.push(name.clone());
                } else {
                    r.differ.push(CaseDiff {
                        case: name.clone(),
                        lines,
                        declared: declared.get(name).cloned().unwrap_or_default(),
                    });
                }
            }
        }
    }
    r.only_b = b.keys().filter(|k| !a.contains_key(*k)).cloned().collect();
    r
}

/// Reads a transcript set: a directory of `<case>.txt` files (a golden set), or a
/// single file.
pub fn load_set(path: &Path) -> anyhow::Result<BTreeMap<String, Transcript>> {
    let mut out = BTreeMap::new();
    let files: Vec<std::path::PathBuf> = if path.is_dir() {
        let mut v: Vec<_> = std::fs::read_dir(path)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "txt"))
            .collect();
        v.sort();
        v
    } else {
        vec![path.to_owned()]
    };
    for f in files {
        let name = f
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = std::fs::read_to_string(&f)?;
        let t =
            Transcript::parse(&name, &text).map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?;
        out.insert(name, t);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{Outcome, StepRecord};

    fn t(result: &str) -> Transcript {
        Transcript {
            case: "c".into(),
            steps: vec![StepRecord {
                line: 4,
                step: "map va size=g handle=h".into(),
                result: result.into(),
                outputs: vec![],
                process: None,
            }],
            outcome: Outcome::Completed,
        }
    }

    #[test]
    fn a_changed_result_is_one_line_naming_the_step() {
        let d = compare(&t("CUDA_SUCCESS"), &t("CUDA_ERROR_INVALID_VALUE"));
        assert_eq!(
            d,
            vec!["line 4 `map va size=g handle=h`: A CUDA_SUCCESS, B CUDA_ERROR_INVALID_VALUE"]
        );
        assert!(compare(&t("CUDA_SUCCESS"), &t("CUDA_SUCCESS")).is_empty());
    }

    #[test]
    fn sets_count_declared_and_missing_cases() {
        let a: BTreeMap<_, _> = [
            ("x".to_string(), t("CUDA_SUCCESS")),
            ("y".to_string(), t("CUDA_SUCCESS")),
        ]
        .into();
        let b: BTreeMap<_, _> = [
            ("x".to_string(), t("CUDA_ERROR_UNKNOWN")),
            ("z".to_string(), t("CUDA_SUCCESS")),
        ]
        .into();
        let declared: BTreeMap<_, _> = [("x".to_string(), vec!["why".to_string()])].into();
        let r = compare_sets(&a, &b, &declared);
        assert_eq!(r.differ.len(), 1);
        assert_eq!(r.only_a, vec!["y"]);
        assert_eq!(r.only_b, vec!["z"]);
        assert_eq!(r.undeclared(), 2);
    }
}
