//! The PTX ISA 9.0 coverage table (ptx/coverage/isa-9.0.txt, issue 21), kept honest: each
//! line's kernel is assembled by ptxas for the line's target (cached like the other nvcc
//! outputs; a form that needs sm_100 must also be refused for sm_90a), then loaded by the
//! mock and run on both engines, or refused with the message the line states. A line whose
//! status no longer matches what the mock does fails the test, naming the line.

mod common;
use common::isa_table::{kernel, table, Line};
use common::*;
use cumock_ptx::{run, Engine, Module};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::process::Command;

fn ptxas_path() -> PathBuf {
    match std::env::var_os("CUMOCK_NVCC_ROOT") {
        Some(root) => PathBuf::from(root).join("bin/ptxas"),
        None => toolkit().join("bin/ptxas"),
    }
}

/// ptxas's verdict on `src` for `arch`: None if it assembles, else its message. Cached by
/// text and target under target/ptx-test-cache.
fn ptxas(src: &str, arch: &str) -> Option<String> {
    let mut h = DefaultHasher::new();
    src.hash(&mut h);
    arch.hash(&mut h);
    let key = format!("ptxas-{:016x}", h.finish());
    let dir = repo_root().join("target/ptx-test-cache");
    std::fs::create_dir_all(&dir).unwrap();
    let verdict = dir.join(format!("{key}.verdict"));
    if let Ok(v) = std::fs::read_to_string(&verdict) {
        return v.strip_prefix("err:").map(str::to_string);
    }
    let input = dir.join(format!("{key}.{}.ptx", std::process::id()));
    std::fs::write(&input, src).unwrap();
    let out = Command::new(ptxas_path())
        .arg(format!("-arch={arch}"))
        .arg(&input)
        .arg("-o")
        .arg("/dev/null")
        .output()
        .expect("run ptxas");
    let _ = std::fs::remove_file(&input);
    let v = if out.status.success() {
        "ok".to_string()
    } else {
        format!("err:{}", String::from_utf8_lossy(&out.stderr).trim())
    };
    std::fs::write(&verdict, &v).unwrap();
    v.strip_prefix("err:").map(str::to_string)
}

/// What the mock does with the line's kernel: Ok(()) if it loads and runs as the mode
/// says on both engines, else the load error or fault.
fn mock(line: &Line, src: &str) -> Result<(), String> {
    let m = Module::parse(src).map_err(|e| format!("load: {e}"))?;
    let k = m.kernels.iter().position(|k| k.name == "k").unwrap();
    let threads = match line.mode.as_str() {
        "load" => return Ok(()),
        "run1" => 1,
        "run128" => 128,
        _ => 32,
    };
    let expected_fault = line.mode.strip_prefix("fault=");
    for engine in [Engine::Interp, Engine::Jit] {
        let mut mem = TestMemory::new();
        let out = mem.map(&[0u8; 4096], true);
        let globals = mem.map_globals(&m);
        let p = params(&m.kernels[k], &[out]);
        let mut l = launch(1, threads, &p);
        l.grid = m.kernels[k]
            .grid_of_launch(l.grid)
            .ok_or("grid overflows")?;
        l.globals = &globals;
        l.engine = engine;
        l.step_limit = Some(1 << 20);
        match (run(&m, k, &l, &mem), expected_fault) {
            (Ok(_), None) => {}
            (Err(f), Some(kind)) if format!("{:?}", f.kind) == kind => {}
            (Ok(_), Some(kind)) => return Err(format!("{engine:?}: ran, expected {kind}")),
            (Err(f), _) => return Err(format!("{engine:?}: {:?}: {f}", f.kind)),
        }
    }
    Ok(())
}

#[test]
fn every_line_of_the_isa_table_does_what_it_says() {
    let lines = table();
    let mut problems = Vec::new();
    let (mut executed, mut refused, mut missing) = (0, 0, 0);
    let mut families = std::collections::HashSet::new();
    for line in &lines {
        let at = format!("isa-9.0.txt:{} {}", line.number, line.family);
        assert!(families.insert(&line.family), "{at}: family listed twice");
        // The real toolchain's verdict keeps the table's targets true.
        let real = kernel(line, &line.arch);
        if let Some(e) = ptxas(&real, &line.arch) {
            problems.push(format!("{at}: ptxas -arch={} refuses it:\n{e}", line.arch));
        }
        let needs_sm100 = line.arch.starts_with("sm_10");
        if needs_sm100 && ptxas(&kernel(line, "sm_90a"), "sm_90a").is_none() {
            problems.push(format!("{at}: ptxas takes it for sm_90a: not sm_100's"));
        }
        // The mock emulates sm_90a: the kernel as a module for it (or for sm_90).
        let target = if needs_sm100 { "sm_90a" } else { &line.arch };
        let got = mock(line, &kernel(line, target));
        let status = line.status.as_str();
        if status == "executed" || status.starts_with("executed(") {
            executed += 1;
            if let Err(e) = got {
                problems.push(format!("{at}: listed executed, but {e}"));
            }
        } else if let Some(why) = status.strip_prefix("refused(") {
            refused += 1;
            let fragment = why.split(':').next().unwrap().trim_end_matches(')');
            match got {
                Ok(()) => problems.push(format!("{at}: listed refused, but it runs")),
                Err(e) if !e.contains(fragment) => {
                    problems.push(format!("{at}: refused without naming `{fragment}`: {e}"))
                }
                Err(_) => {}
            }
        } else if status == "missing" {
            missing += 1;
            if got.is_ok() {
                problems.push(format!(
                    "{at}: listed missing, but it runs: update the table"
                ));
            }
        } else {
            problems.push(format!("{at}: unknown status `{status}`"));
        }
    }
    println!(
        "{} families: {executed} executed, {refused} refused by design, {missing} missing",
        lines.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
