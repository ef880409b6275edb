//! The compiled engine against the interpreter: the instruction corpus (ptx/corpus), the
//! sample kernels (tests/ordinary.cu) and mutated corpus kernels (as tests/fuzz.rs makes
//! them) run under both, on one host thread (so which block faults first is fixed), and
//! must leave the same bytes in every buffer, count the same instructions and end in the
//! same fault with the same message.

mod common;

use common::mutate::{mutate, SEEDS};
use common::*;
use cumock_ptx::{run, Engine, JitInfo, Launch, Module};

/// Device buffers and a launch, made afresh for each engine.
struct Setup {
    mem: TestMemory,
    buffers: Vec<u64>,
    params: Vec<u8>,
    globals: Vec<u64>,
}

/// Runs kernel `k` under both engines; a description of the first difference, if any.
fn differ(
    m: &Module,
    k: usize,
    make: &dyn Fn(&Module) -> Setup,
    configure: &dyn Fn(&mut Launch),
) -> Option<String> {
    let mut outcomes = Vec::new();
    for engine in [Engine::Interp, Engine::Jit] {
        let s = make(m);
        let mut l = launch(1, 32, &s.params);
        l.globals = &s.globals;
        l.host_threads = 1;
        configure(&mut l);
        l.engine = engine;
        let r = run(m, k, &l, &s.mem).map_err(|f| f.to_string());
        let bytes: Vec<Vec<u8>> = s
            .buffers
            .iter()
            .chain(&s.globals)
            .map(|b| s.mem.read(*b))
            .collect();
        outcomes.push((r, bytes));
    }
    let (a, b) = (&outcomes[0], &outcomes[1]);
    if a.0 != b.0 {
        return Some(format!("interp {:?}\n    jit    {:?}", a.0, b.0));
    }
    for (i, (x, y)) in a.1.iter().zip(&b.1).enumerate() {
        if let Some(at) = x.iter().zip(y).position(|(p, q)| p != q) {
            return Some(format!(
                "buffer {i} differs first at byte {at}: interp {:02x?}, jit {:02x?} ({:?})",
                &x[at..(at + 8).min(x.len())],
                &y[at..(at + 8).min(y.len())],
                a.0
            ));
        }
    }
    None
}

fn corpus_dir() -> std::path::PathBuf {
    repo_root().join("ptx/corpus")
}

/// Inputs rich in special values (zeros, infinities, NaNs, limits), from a seed.
fn input(seed: &str, n: usize) -> Vec<u32> {
    const SPECIAL: [u32; 16] = [
        0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7fa00001, 0x7fffffff, 1, 0x807fffff,
        0x3f800000, 0xffffffff, 31, 32, 33, 0x0000ffff, 0x00000080,
    ];
    let mut rng = fastrand::Rng::with_seed(seed.bytes().map(u64::from).sum());
    (0..n)
        .map(|_| {
            if rng.u8(..4) == 0 {
                SPECIAL[rng.usize(..SPECIAL.len())]
            } else {
                rng.u32(..)
            }
        })
        .collect()
}

/// The generator of ptx/corpus/runner.c, word for word.
fn generate(kernel: &str, n: usize) -> Vec<u32> {
    const SPECIAL: [u32; 40] = [
        0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7fa00001,
        0x7fffffff, 0x00000001, 0x807fffff, 0x00800000, 0x7f7fffff, 0xff7fffff, 0x3f800000,
        0xbf800000, 0x3f000000, 0x4f000000, 0xcf000000, 0x5f000000, 0x4b000001, 0x3fc00000,
        0x40200000, 0xbfc00000, 0x477fe000, 0x477ff000, 0x33800000, 0xffffffff, 0x0000001f,
        0x00000020, 0x00000021, 0x0000003f, 0x00000040, 0x7fffffff, 0x80000001, 0x0000ffff,
        0x00008000, 0x000000ff, 0x00000080, 0x40490fdb, 0x3eaaaaab,
    ];
    let mut x = kernel
        .bytes()
        .fold(2166136261u32, |h, b| (h ^ b as u32).wrapping_mul(16777619))
        | 1;
    let mut step = || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    (0..n)
        .map(|_| {
            let r = step();
            let y = step();
            if r & 3 == 0 {
                SPECIAL[(y % SPECIAL.len() as u32) as usize]
            } else {
                y
            }
        })
        .collect()
}

#[test]
fn the_corpus_runs_the_same_under_both_engines() {
    let text = std::fs::read_to_string(corpus_dir().join("manifest.txt")).unwrap();
    let mut failures = Vec::new();
    let mut kernels = 0;
    let mut info = JitInfo {
        native: 0,
        via_interpreter: 0,
    };
    let mut modules = std::collections::HashMap::new();
    for l in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let f: Vec<&str> = l.split_whitespace().collect();
        let dims = |s: &str| -> [u32; 2] {
            let mut it = s.split(',').map(|x| x.parse::<u32>().unwrap());
            [it.next().unwrap(), it.next().unwrap_or(1)]
        };
        let (name, file, grid, block) = (f[0], f[1], dims(f[2]), dims(f[3]));
        let shmem: u32 = f[4].parse().unwrap();
        let (nin, nout): (usize, usize) = (f[5].parse().unwrap(), f[6].parse().unwrap());
        let m = modules.entry(file.to_string()).or_insert_with(|| {
            let src = std::fs::read_to_string(corpus_dir().join(file)).unwrap();
            Module::parse(&ptx(&src)).unwrap()
        });
        let k = m.kernel(name).unwrap();
        kernels += 1;
        if let Some(i) = m.jit_compile(k) {
            info.native += i.native;
            info.via_interpreter += i.via_interpreter;
        }
        let data = generate(name, nin);
        let make = |m: &Module| {
            let mut mem = TestMemory::new();
            let din = mem.map(&u32s(&data), true);
            let dout = mem.map(&vec![0u8; nout * 4], true);
            let globals = m.globals.iter().map(|g| mem.map(&g.init, true)).collect();
            let params = params(&m.kernels[k], &[din, dout, nin as u64]);
            Setup {
                mem,
                buffers: vec![din, dout],
                params,
                globals,
            }
        };
        let configure = |l: &mut Launch| {
            l.grid = [grid[0], grid[1], 1];
            l.block = [block[0], block[1], 1];
            l.dynamic_shared_bytes = shmem;
        };
        if let Some(d) = differ(m, k, &make, &configure) {
            failures.push(format!("{name}: {d}"));
        }
    }
    println!(
        "{kernels} corpus kernels; {} instructions compiled, {} through the interpreter's code",
        info.native, info.via_interpreter
    );
    // The differential test means something only if the compiler compiled.
    assert!(info.native > 500, "{info:?}");
    assert!(
        failures.is_empty(),
        "{} of {kernels} corpus kernels differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn ordinary_kernels_run_the_same_under_both_engines() {
    let src = std::fs::read_to_string(repo_root().join("ptx/tests/ordinary.cu")).unwrap();
    let mut failures = Vec::new();
    for text in [
        ptx(&src),
        // The debugger's build: unoptimised code over a local-memory stack.
        String::from_utf8(nvcc(&src, &["-ptx", "-arch=compute_90", "-G"])).unwrap(),
    ] {
        let m = Module::parse(&text).unwrap();
        for (k, kernel) in m.kernels.iter().enumerate() {
            // Every parameter a buffer (or its size): 64 KiB of varied data each, n = 1000.
            let make = |m: &Module| {
                let mut mem = TestMemory::new();
                let mut buffers = Vec::new();
                let mut vals = Vec::new();
                for (i, p) in m.kernels[k].params.iter().enumerate() {
                    if p.size == 8 && i + 1 < m.kernels[k].params.len() {
                        let data: Vec<f32> = input(&format!("{}{i}", kernel.name), 16384)
                            .iter()
                            .map(|x| (*x % 1000) as f32 / 250.0 - 2.0)
                            .collect();
                        let b = mem.map(&f32s(&data), true);
                        buffers.push(b);
                        vals.push(b);
                    } else {
                        vals.push(40);
                    }
                }
                let globals = m.globals.iter().map(|g| mem.map(&g.init, false)).collect();
                let params = params(&m.kernels[k], &vals);
                Setup {
                    mem,
                    buffers,
                    params,
                    globals,
                }
            };
            for (grid, block) in [([2, 2], [16, 16]), ([3, 1], [100, 1])] {
                let configure = |l: &mut Launch| {
                    l.grid = [grid[0], grid[1], 1];
                    l.block = [block[0], block[1], 1];
                    l.step_limit = Some(1 << 22);
                };
                if let Some(d) = differ(&m, k, &make, &configure) {
                    failures.push(format!("{} {grid:?}x{block:?}: {d}", kernel.name));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn mutated_kernels_run_the_same_under_both_engines() {
    let seeds: Vec<String> = SEEDS
        .iter()
        .map(|f| ptx(&std::fs::read_to_string(corpus_dir().join(f)).unwrap()))
        .collect();
    let mut rng = fastrand::Rng::with_seed(22);
    let (mut ran, mut faulted) = (0, 0);
    let mut failures = Vec::new();
    for round in 0..400 {
        let src = mutate(&seeds[round % seeds.len()], &mut rng);
        let Ok(m) = Module::parse(&src) else {
            continue;
        };
        for (k, kernel) in m.kernels.iter().enumerate() {
            let make = |m: &Module| {
                let mut mem = TestMemory::new();
                let a = mem.map(&[0x5au8; 4096], true);
                let b = mem.map(&[0x11u8; 4096], false);
                let vals: Vec<u64> = (0..m.kernels[k].params.len())
                    .map(|i| [a, b, 64][i % 3])
                    .collect();
                let globals = m.globals.iter().map(|g| mem.map(&g.init, true)).collect();
                Setup {
                    params: params(&m.kernels[k], &vals),
                    mem,
                    buffers: vec![a, b],
                    globals,
                }
            };
            let configure = |l: &mut Launch| {
                l.grid = [2, 1, 1];
                l.block = [64, 1, 1];
                l.step_limit = Some(20_000);
                l.dynamic_shared_bytes = 1024;
            };
            ran += 1;
            if let Some(d) = differ(&m, k, &make, &configure) {
                failures.push(format!("round {round}, kernel {}: {d}", kernel.name));
            }
            let s = make(&m);
            let mut l = launch(2, 64, &s.params);
            configure(&mut l);
            l.globals = &s.globals;
            faulted += run(&m, k, &l, &s.mem).is_err() as usize;
        }
    }
    println!("{ran} mutated kernels ran, {faulted} of them ended in a fault");
    assert!(ran > 100 && faulted > 10, "{ran} ran, {faulted} faulted");
    assert!(
        failures.is_empty(),
        "{} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
