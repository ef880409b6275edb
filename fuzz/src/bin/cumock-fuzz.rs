//! The deterministic engine from the command line (stable Rust, no coverage):
//!
//! ```text
//! cumock-fuzz TARGET|all [SECONDS] [SEED]    # replay fuzz/corpus/TARGET, then mutate
//! cumock-fuzz TARGET --replay FILE...        # run inputs once each, say how each ends
//! ```
//!
//! New inputs (a signature not seen before) are saved to `$CUMOCK_FUZZ_SAVE/TARGET/` when
//! that is set; failing inputs go to `fuzz/crashes/`.

use cumock_fuzz::engine::{Config, Session};
use cumock_fuzz::{fuzz_dir, target, TARGETS};
use std::path::PathBuf;
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(name) = args.first() else {
        eprintln!(
            "usage: cumock-fuzz TARGET|all [SECONDS] [SEED] | TARGET --replay FILE...\ntargets: {}",
            TARGETS.iter().map(|t| t.name).collect::<Vec<_>>().join(" ")
        );
        std::process::exit(2);
    };
    if args.get(1).map(String::as_str) == Some("--replay") {
        let t = target(name).unwrap_or_else(|| panic!("no target {name}"));
        let mut failed = 0;
        for f in &args[2..] {
            let data = std::fs::read(f).unwrap_or_else(|e| panic!("{f}: {e}"));
            let r = std::panic::catch_unwind(|| cumock_fuzz::engine::run_checked(t, &data));
            match &r {
                Ok(sig) => println!("{f}: ok (signature {sig:016x})"),
                Err(_) => println!("{f}: FAILED"),
            }
            failed += usize::from(r.is_err());
        }
        std::process::exit(i32::from(failed > 0));
    }
    let seconds: u64 = args.get(1).map_or(60, |s| s.parse().expect("SECONDS"));
    let seed: u64 = args.get(2).map_or_else(
        || {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        },
        |s| s.parse().expect("SEED"),
    );
    let chosen: Vec<_> = if name == "all" {
        TARGETS.iter().collect()
    } else {
        vec![target(name).unwrap_or_else(|| panic!("no target {name}"))]
    };
    let per = Duration::from_secs(seconds) / chosen.len() as u32;
    let mut found = 0;
    for t in chosen {
        let dir = fuzz_dir();
        let cfg = Config {
            iterations: u64::MAX,
            time: per,
            seed,
            corpus: vec![
                dir.join("corpus").join(t.name),
                dir.join("regressions").join(t.name),
            ],
            crashes: dir.join("crashes"),
            save_new: std::env::var_os("CUMOCK_FUZZ_SAVE").map(|d| PathBuf::from(d).join(t.name)),
            deadline: Duration::from_secs(20),
            stack: cumock_fuzz::engine::PROGRAM_STACK,
        };
        let r = Session::new(t, cfg).run();
        println!(
            "{}: seed {seed}, {} replayed, {} mutated in {:.0?}, {} signatures, {} finding(s)",
            t.name,
            r.replayed,
            r.mutated,
            r.elapsed,
            r.signatures,
            r.findings.len()
        );
        for f in &r.findings {
            println!(
                "  {:?}: {}\n    input: {}",
                f.kind,
                f.message,
                f.input.display()
            );
        }
        found += r.findings.len();
    }
    std::process::exit(i32::from(found > 0));
}
