//! Random and mutated PTX: the parser never panics nor hangs, and whatever parses runs
//! to an end (a result or a KernelFault) within its step limit.

mod common;
use std::time::{Duration, Instant};

use common::mutate::{mutate, SEEDS, VOCAB};
use common::*;
use cumock_ptx::{run, Module};

/// Runs every kernel of a module with small launches over scratch memory.
fn run_all(m: &Module) {
    let mut mem = TestMemory::new();
    let a = mem.map(&[0x5au8; 4096], true);
    let b = mem.map(&[0x11u8; 4096], false);
    let globals: Vec<u64> = m.globals.iter().map(|g| mem.map(&g.init, true)).collect();
    for (k, kernel) in m.kernels.iter().enumerate() {
        let vals: Vec<u64> = (0..kernel.params.len())
            .map(|i| [a, b, 64][i % 3])
            .collect();
        let p = params(kernel, &vals);
        let mut l = launch(2, 64, &p);
        l.globals = &globals;
        l.step_limit = Some(20_000);
        l.dynamic_shared_bytes = 1024;
        let _ = run(m, k, &l, &mem);
    }
}

#[test]
fn mutated_ptx_never_panics_and_what_parses_runs_to_an_end() {
    let seeds: Vec<String> = SEEDS
        .iter()
        .map(|f| ptx(&std::fs::read_to_string(repo_root().join("ptx/corpus").join(f)).unwrap()))
        .collect();
    let mut rng = fastrand::Rng::with_seed(2024);
    let start = Instant::now();
    let (mut parsed, mut rounds) = (0, 0);
    while rounds < 1500 && start.elapsed() < Duration::from_secs(40) {
        rounds += 1;
        let src = mutate(&seeds[rounds % seeds.len()], &mut rng);
        let t = Instant::now();
        let m = Module::parse(&src);
        assert!(
            t.elapsed() < Duration::from_secs(2),
            "parsing took {:?}",
            t.elapsed()
        );
        if let Ok(m) = m {
            parsed += 1;
            run_all(&m);
        }
    }
    println!("{rounds} mutants, {parsed} parsed and ran");
    assert!(
        parsed > 0,
        "no mutant parsed: the mutations are too coarse to test the executor"
    );
}

#[test]
fn random_text_never_panics() {
    let mut rng = fastrand::Rng::with_seed(7);
    for _ in 0..3000 {
        let n = rng.usize(..400);
        let s: String = if rng.bool() {
            (0..n).map(|_| rng.u8(..128) as char).collect()
        } else {
            let mut s = String::from(".version 9.0\n.target sm_90\n.address_size 64\n");
            for _ in 0..rng.usize(..60) {
                s.push_str(VOCAB[rng.usize(..VOCAB.len())]);
                s.push(if rng.u8(..5) == 0 { '\n' } else { ' ' });
            }
            s
        };
        if let Ok(m) = Module::parse(&s) {
            run_all(&m);
        }
    }
}
