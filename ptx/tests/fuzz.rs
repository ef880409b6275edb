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

/// Tokens of the forms the ISA 9.0 audit added or refuses by target, spliced into the
/// table's kernels below.
const AUDIT_VOCAB: &[&str] = &[
    "lop3.or.b32 %r10|%p2, %r1, %r2, %r3, 0x80, %p1;",
    "lop3.and.b32 %r10|%p2, %r1, %r2, %r3, 0x96;",
    "lop3.or.b32 %r10, %r1, %r2, %r3, 0x80, %p1;",
    "mad24.hi.sat.s32 %r10, %r1, %r2, %r3;",
    "mad24.lo.sat.s32 %r10, %r1, %r2, %r3;",
    "fma.rz.f64 %fd3, %fd1, %fd2, %fd1;",
    "fma.rp.f64 %fd3, %fd1, %fd2;",
    "ld.param::entry.u64 %rd10, [out];",
    "ld.param::entry.u64 %rd10, [%rd1];",
    "st.param::entry.u64 [out], %rd1;",
    "isspacep.param::entry %p2, %rd1;",
    "mov.u32 %r10, %clock_hi;",
    ".alias f, g;",
    ".alias k, k;",
    ".abi_preserve 8",
    ".blocksareclusters",
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.f16 [%rd1], [sm], 16;",
    "cp.reduce.async.bulk.global.shared::cta.bulk_group.min.bf16 [%rd1], [sm], 17;",
    "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [sm], 32;",
    "multimem.st.relaxed.sys.global.u32 [%rd1], %r1;",
    "ld.global.v8.f32 {%f4, %f5}, [%rd1];",
    "add.f32x2 %rd10, %rd4;",
    "min.f32 %f10, %f1, %f2, %f3;",
    "cvt.rs.f16x2.f32 %r10, %f1;",
    "mov.u32 %r10, (1 << 4) + ~2 % 3;",
    "mov.u32 %r10, 1 / 0;",
    "mov.u32 %r10, ((((1)))) ? -1 : 2.5;",
    "ld.global.u32 %r10, [%rd1+(2*8)-4];",
    "ld.global.u32 %r10, [%rd1+(1<<62)];",
    ".global .u32 ex = (1 << 8) ? 3 : 4;",
    ".global .u16 rows[][2] = {{1}, {2, 3}, {}};",
];

#[test]
fn mutated_isa_table_kernels_never_panic_and_what_parses_runs_to_an_end() {
    // Every kernel of ptx/coverage/isa-9.0.txt, mutated as the corpus is, and with the
    // audit's forms spliced in at random lines.
    let seeds: Vec<String> = isa_table::table()
        .iter()
        .map(|l| isa_table::kernel(l, "sm_90a"))
        .collect();
    let mut rng = fastrand::Rng::with_seed(90);
    let start = Instant::now();
    let (mut parsed, mut rounds) = (0, 0);
    while rounds < 3000 && start.elapsed() < Duration::from_secs(40) {
        rounds += 1;
        let seed = &seeds[rounds % seeds.len()];
        let src = if rng.bool() {
            mutate(seed, &mut rng)
        } else {
            let mut lines: Vec<&str> = seed.lines().collect();
            let at = rng.usize(..=lines.len());
            lines.insert(at, AUDIT_VOCAB[rng.usize(..AUDIT_VOCAB.len())]);
            lines.join("\n")
        };
        if let Ok(m) = Module::parse(&src) {
            parsed += 1;
            run_all(&m);
        }
    }
    println!("{rounds} mutants of the ISA table, {parsed} parsed and ran");
    assert!(parsed > 0, "no mutant parsed");
}
