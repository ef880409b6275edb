//! The PTX ISA 9.0 coverage table (ptx/coverage/isa-9.0.txt, issue 21), kept honest: each
//! line's kernel is assembled by ptxas for the line's target (cached like the other nvcc
//! outputs; a form that needs sm_100 must also be refused for sm_90a), then loaded by the
//! mock and run on both engines, or refused with the message the line states. A line whose
//! status no longer matches what the mock does fails the test, naming the line.

mod common;
use common::*;
use cumock_ptx::{run, Engine, Module};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::process::Command;

struct Line {
    number: usize,
    family: String,
    arch: String,
    mode: String,
    status: String,
    body: String,
}

fn table() -> Vec<Line> {
    let text = std::fs::read_to_string(repo_root().join("ptx/coverage/isa-9.0.txt")).unwrap();
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|(n, l)| {
            let f: Vec<&str> = l.splitn(5, " | ").collect();
            assert_eq!(f.len(), 5, "isa-9.0.txt:{}: five fields", n + 1);
            Line {
                number: n + 1,
                family: f[0].trim().to_string(),
                arch: f[1].trim().to_string(),
                mode: f[2].trim().to_string(),
                status: f[3].trim().to_string(),
                body: f[4].trim().to_string(),
            }
        })
        .collect()
}

/// The line's kernel for `target`: module text, entry directives and body split at `##`.
fn kernel(line: &Line, target: &str) -> String {
    let parts: Vec<&str> = line.body.split("##").map(str::trim).collect();
    let (module, dirs, body) = match parts.as_slice() {
        [b] => ("", "", *b),
        [m, d, b] => (*m, *d, *b),
        _ => panic!(
            "isa-9.0.txt:{}: body or MODULE ## DIRS ## BODY",
            line.number
        ),
    };
    format!(
        ".version 9.0\n.target {target}\n.address_size 64\n{module}\n\
         .visible .entry k(.param .u64 out)\n{dirs}\n{{\n\
         .reg .b64 %rd<32>;\n.reg .b32 %r<32>;\n.reg .b16 %h<16>;\n.reg .pred %p<8>;\n\
         .reg .f32 %f<16>;\n.reg .f64 %fd<8>;\n.reg .b128 %q<4>;\n\
         .shared .align 128 .b8 sm[2048];\n.local .align 16 .b8 lm[64];\n\
         ld.param.u64 %rd1, [out];\nmov.u32 %r0, %tid.x;\nmov.u64 %rd3, sm;\n\
         mov.u32 %r1, 1;\nmov.u32 %r2, 2;\nmov.u32 %r3, 3;\nmov.u32 %r4, 0x3f800000;\n\
         mov.u64 %rd4, 1;\nmov.u64 %rd5, 2;\nmov.b16 %h1, 0x3c00;\nmov.b16 %h2, 0x4000;\n\
         mov.f32 %f1, 0f3F800000;\nmov.f32 %f2, 0f40000000;\nmov.f32 %f3, 0f3F000000;\n\
         mov.f64 %fd1, 0d3FF0000000000000;\nmov.f64 %fd2, 0d4000000000000000;\n\
         setp.eq.u32 %p1, %r0, %r0;\n\
         {body}\nret;\n}}\n"
    )
}

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
