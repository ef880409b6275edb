//! The instruction corpus (ptx/corpus/): small kernels per instruction family, compiled
//! by nvcc 13.0 here and run in the executor on the inputs the H200 ran them on; outputs
//! compared with what the H200 computed (ptx/corpus/expected/, recorded by
//! ci/gpu-corpus.sh). Kernels added to the manifest since (no NAME.out.hex or NAME.error
//! in expected/) are named as awaiting a recording, still run to show they load and
//! execute without a fault, and compared once it is made.

mod common;
use common::corpus_input as generate;

use std::collections::HashMap;
use std::path::PathBuf;

use common::*;
use cumock_ptx::{run, Module};

struct Entry {
    kernel: String,
    file: String,
    grid: [u32; 2],
    block: [u32; 2],
    shmem: u32,
    nin: usize,
    nout: usize,
    approx: bool,
    /// The launch's cluster shape (x, y), when the manifest gives one.
    cluster: Option<[u32; 2]>,
}

fn corpus_dir() -> PathBuf {
    repo_root().join("ptx/corpus")
}

fn dims(s: &str) -> [u32; 2] {
    let mut it = s.split(',').map(|x| x.parse::<u32>().expect("dimension"));
    [it.next().unwrap(), it.next().unwrap_or(1)]
}

fn manifest() -> Vec<Entry> {
    let text = std::fs::read_to_string(corpus_dir().join("manifest.txt")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert!(matches!(f.len(), 8 | 9), "manifest line: {l}");
            Entry {
                kernel: f[0].into(),
                file: f[1].into(),
                grid: dims(f[2]),
                block: dims(f[3]),
                shmem: f[4].parse().unwrap(),
                nin: f[5].parse().unwrap(),
                nout: f[6].parse().unwrap(),
                approx: f[7] == "approx",
                cluster: f.get(8).map(|c| dims(c)),
            }
        })
        .collect()
}

fn read_hex(path: &std::path::Path) -> Vec<u32> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.split_whitespace()
        .map(|w| u32::from_str_radix(w, 16).expect("hex word"))
        .collect()
}

/// Runs one corpus kernel; Err describes a load or run failure.
fn execute(m: &Module, e: &Entry, input: &[u32]) -> Result<Vec<u32>, String> {
    let k = m
        .kernel(&e.kernel)
        .ok_or_else(|| format!("no kernel {}", e.kernel))?;
    let mut mem = TestMemory::new();
    let din = mem.map(&u32s(input), true);
    let dout = mem.map(&vec![0u8; e.nout * 4], true);
    let globals = mem.map_globals(m);
    let p = params(&m.kernels[k], &[din, dout, e.nin as u64]);
    let mut l = launch(e.grid[0], e.block[0], &p);
    l.grid = [e.grid[0], e.grid[1], 1];
    l.block = [e.block[0], e.block[1], 1];
    l.dynamic_shared_bytes = e.shmem;
    l.globals = &globals;
    l.cluster = e.cluster.map(|[x, y]| [x, y, 1]);
    run(m, k, &l, &mem).map_err(|f| f.to_string())?;
    Ok(to_u32s(&mem.read(dout)))
}

fn modules(entries: &[Entry]) -> HashMap<String, Result<Module, String>> {
    let mut out = HashMap::new();
    for e in entries {
        out.entry(e.file.clone()).or_insert_with(|| {
            let src = std::fs::read_to_string(corpus_dir().join(&e.file)).unwrap();
            Module::parse(&corpus_ptx(&src)).map_err(|err| format!("{}: {err}", e.file))
        });
    }
    out
}

fn close_f32(a: u32, b: u32) -> bool {
    let (x, y) = (f32::from_bits(a), f32::from_bits(b));
    if a == b || x.is_nan() && y.is_nan() {
        return true;
    }
    // The approximations' documented bounds are relative (ex2, rsqrt, division) or
    // absolute (sin, cos, lg2 near 1): either, with margin.
    let tol = 2f32.powi(-19);
    (x - y).abs() <= x.abs().max(y.abs()) * tol
        || (x - y).abs() <= tol
        || (a as i64 - b as i64).abs() <= 4
}

#[test]
fn corpus_kernels_load_and_run() {
    let entries = manifest();
    let mods = modules(&entries);
    let mut failures = Vec::new();
    // PTX_CORPUS_DUMP=DIR writes the executor's outputs as the runner writes the GPU's.
    let dump = std::env::var_os("PTX_CORPUS_DUMP").map(PathBuf::from);
    for e in &entries {
        let input = generate(&e.kernel, e.nin);
        let r = match &mods[&e.file] {
            Ok(m) => execute(m, e, &input).map(|out| {
                if let Some(d) = &dump {
                    std::fs::create_dir_all(d).unwrap();
                    let hex = |w: &[u32]| {
                        w.chunks(8)
                            .map(|c| {
                                c.iter()
                                    .map(|x| format!("{x:08x}"))
                                    .collect::<Vec<_>>()
                                    .join(" ")
                                    + "\n"
                            })
                            .collect::<String>()
                    };
                    std::fs::write(d.join(format!("{}.in.hex", e.kernel)), hex(&input)).unwrap();
                    std::fs::write(d.join(format!("{}.out.hex", e.kernel)), hex(&out)).unwrap();
                }
            }),
            Err(err) => Err(err.clone()),
        };
        if let Err(err) = r {
            failures.push(format!("{}: {err}", e.kernel));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} corpus kernels failed:\n{}",
        failures.len(),
        entries.len(),
        failures.join("\n")
    );
}

/// ptx/corpus/expected-differences.txt: kernel -> (declared words, reason).
fn declared_differences() -> HashMap<String, Vec<(std::ops::RangeInclusive<usize>, String)>> {
    let mut out: HashMap<String, Vec<_>> = HashMap::new();
    let path = corpus_dir().join("expected-differences.txt");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return out;
    };
    for l in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let (head, reason) = l
            .split_once(':')
            .unwrap_or_else(|| panic!("{}: no reason in {l:?}", path.display()));
        let (kernel, words) = head
            .trim()
            .split_once(' ')
            .unwrap_or_else(|| panic!("{}: no words in {l:?}", path.display()));
        assert!(
            !reason.trim().is_empty(),
            "{}: empty reason in {l:?}",
            path.display()
        );
        for part in words.trim().split(',') {
            let num = |x: &str| {
                x.trim()
                    .parse::<usize>()
                    .unwrap_or_else(|_| panic!("{}: bad word {x:?}", path.display()))
            };
            let range = match part.split_once('-') {
                Some((a, b)) => num(a)..=num(b),
                None => num(part)..=num(part),
            };
            out.entry(kernel.to_string())
                .or_default()
                .push((range, reason.trim().to_string()));
        }
    }
    out
}

#[test]
fn corpus_matches_the_h200() {
    let expected = corpus_dir().join("expected");
    assert!(
        expected.is_dir(),
        "{} is absent: record it on the GPU machine with `ci/gpu-corpus.sh OUTDIR` and commit OUTDIR there",
        expected.display()
    );
    let entries = manifest();
    let mods = modules(&entries);
    // The GPU ran the PTX its own nvcc wrote; a different nvcc here is worth knowing.
    for file in entries
        .iter()
        .map(|e| e.file.as_str())
        .collect::<std::collections::BTreeSet<_>>()
    {
        let recorded = expected.join("ptx").join(file.replace(".cu", ".ptx"));
        if let Ok(theirs) = std::fs::read_to_string(&recorded) {
            let ours = corpus_ptx(&std::fs::read_to_string(corpus_dir().join(file)).unwrap());
            if theirs != ours {
                println!(
                    "note: {} differs from the PTX nvcc writes here",
                    recorded.display()
                );
            }
        }
    }
    let declared = declared_differences();
    for k in declared.keys() {
        assert!(
            entries.iter().any(|e| &e.kernel == k),
            "expected-differences.txt: no kernel {k}"
        );
    }
    // A kernel is recorded when the GPU left its output or its error: a session may
    // record only the kernels it added, without copying its manifest over the first
    // recording's. Kernels added since await one: they are run by
    // `corpus_kernels_load_and_run`, compared once recorded.
    let recorded: std::collections::HashSet<String> = entries
        .iter()
        .filter(|e| {
            expected.join(format!("{}.out.hex", e.kernel)).is_file()
                || expected.join(format!("{}.error", e.kernel)).is_file()
        })
        .map(|e| e.kernel.clone())
        .collect();
    let awaiting: Vec<&str> = entries
        .iter()
        .filter(|e| !recorded.contains(&e.kernel))
        .map(|e| e.kernel.as_str())
        .collect();
    if !awaiting.is_empty() {
        println!(
            "awaiting a recording on the H200 (ci/gpu-corpus.sh OUTDIR, then commit OUTDIR as ptx/corpus/expected/): {}",
            awaiting.join(", ")
        );
    }
    let mut failures = Vec::new();
    let mut compared = 0;
    let mut declared_count = 0;
    for e in entries.iter().filter(|e| recorded.contains(&e.kernel)) {
        let err_file = expected.join(format!("{}.error", e.kernel));
        if err_file.exists() {
            failures.push(format!(
                "{}: failed on the GPU: {}",
                e.kernel,
                std::fs::read_to_string(&err_file).unwrap().trim()
            ));
            continue;
        }
        let input = read_hex(&expected.join(format!("{}.in.hex", e.kernel)));
        assert_eq!(
            input,
            generate(&e.kernel, e.nin),
            "{}: recorded input differs from the generator",
            e.kernel
        );
        let want = read_hex(&expected.join(format!("{}.out.hex", e.kernel)));
        let got = match &mods[&e.file] {
            Ok(m) => execute(m, e, &input),
            Err(err) => Err(err.clone()),
        };
        let got = match got {
            Ok(g) => g,
            Err(err) => {
                failures.push(format!("{}: {err}", e.kernel));
                continue;
            }
        };
        compared += 1;
        let differs = |i: usize| {
            if e.approx {
                !close_f32(got[i], want[i])
            } else {
                got[i] != want[i]
            }
        };
        let ours = declared.get(&e.kernel).map(Vec::as_slice).unwrap_or(&[]);
        let is_declared = |i: usize| ours.iter().any(|(r, _)| r.contains(&i));
        // A declared difference that no longer differs makes the list untrue.
        for (r, reason) in ours {
            let stale: Vec<usize> = r
                .clone()
                .filter(|&i| i >= want.len() || !differs(i))
                .collect();
            if !stale.is_empty() {
                failures.push(format!(
                    "{}: words {stale:?} are declared to differ ({reason}) but match the H200 now; update ptx/corpus/expected-differences.txt",
                    e.kernel
                ));
            }
            declared_count += r.clone().count();
        }
        let bad: Vec<usize> = (0..want.len())
            .filter(|&i| differs(i) && !is_declared(i))
            .collect();
        if !bad.is_empty() {
            if std::env::var_os("CORPUS_DIFF_WORDS").is_some() {
                // Every differing word as expected-differences.txt writes them, to declare.
                eprintln!("{} {}: REASON", e.kernel, word_ranges(&bad));
            }
            let show: Vec<String> = bad
                .iter()
                .take(8)
                .map(|&i| format!("  word {i}: H200 {:08x}, executor {:08x}", want[i], got[i]))
                .collect();
            failures.push(format!(
                "{}: {} of {} words differ\n{}",
                e.kernel,
                bad.len(),
                want.len(),
                show.join("\n")
            ));
        }
    }
    println!(
        "{compared} corpus kernels compared with the H200; {declared_count} words differ as declared in ptx/corpus/expected-differences.txt"
    );
    assert!(
        failures.is_empty(),
        "{} corpus kernels differ from the H200:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Sorted word indices as `a-b,c,...` (expected-differences.txt's form).
fn word_ranges(words: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut k = 0;
    while k < words.len() {
        let mut j = k;
        while j + 1 < words.len() && words[j + 1] == words[j] + 1 {
            j += 1;
        }
        out.push(if j == k {
            words[k].to_string()
        } else {
            format!("{}-{}", words[k], words[j])
        });
        k = j + 1;
    }
    out.join(",")
}
