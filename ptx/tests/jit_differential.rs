//! The compiled engine against the interpreter: the instruction corpus (ptx/corpus), the
//! sample kernels (tests/ordinary.cu) and mutated corpus kernels (as tests/fuzz.rs makes
//! them) run under both, on one host thread (so which block faults first is fixed), and
//! must leave the same bytes in every buffer, count the same instructions and end in the
//! same fault with the same message.

mod common;
use common::corpus_input as generate;

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

#[test]
fn the_corpus_runs_the_same_under_both_engines() {
    let text = std::fs::read_to_string(corpus_dir().join("manifest.txt")).unwrap();
    let mut failures = Vec::new();
    let mut kernels = 0;
    let mut info = JitInfo {
        native: 0,
        via_interpreter: 0,
        texture: 0,
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
            Module::parse(&corpus_ptx(&src)).unwrap()
        });
        let k = m.kernel(name).unwrap();
        kernels += 1;
        if let Some(i) = m.jit_compile(k) {
            info.native += i.native;
            info.via_interpreter += i.via_interpreter;
            info.texture += i.texture;
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

/// Loads and stores the compiler emits itself (`jit::lower::Gen::mem`), each made to go
/// wrong at one lane: past shared memory's end or below its start (an address that wraps
/// around), misaligned, past a buffer's end, into a read-only buffer, into another
/// buffer (a TLB miss, lanes in two spans), with more buffers than the TLB holds, as
/// vectors, through generic addresses, under guards, with the parameter buffer cut
/// short. Both engines must end alike: same fault (lane, address, message), same bytes
/// (the lanes before a faulting one have stored), same instruction counts.
const MEM_KERNELS: &[(&str, &str)] = &[
    (
        "ld_shared",
        "st.shared.u32 [%rd20], %r3; bar.sync 0;
         ld.shared.u32 %r4, [%rd21]; st.global.u32 [%rd30], %r4;",
    ),
    (
        "st_shared",
        "st.shared.u32 [%rd20], 7; bar.sync 0; add.u32 %r5, %r3, 1;
         st.shared.u32 [%rd21], %r5; bar.sync 0;
         ld.shared.u32 %r4, [%rd20]; st.global.u32 [%rd30], %r4;",
    ),
    (
        "ld_global",
        "ld.global.u32 %r4, [%rd31]; st.global.u32 [%rd30], %r4;",
    ),
    ("st_global", "st.global.u32 [%rd32], %r3;"),
    (
        "generic_shared",
        "cvta.shared.u64 %rd40, %rd21; cvta.shared.u64 %rd41, %rd20;
         st.u32 [%rd41], %r3; bar.sync 0; ld.u32 %r4, [%rd40]; st.u32 [%rd40], %r1;
         bar.sync 0; ld.shared.u32 %r5, [%rd20]; add.u32 %r4, %r4, %r5;
         st.global.u32 [%rd30], %r4;",
    ),
    (
        "generic_global",
        "ld.u32 %r4, [%rd31]; add.u32 %r4, %r4, 1; st.u32 [%rd32], %r4;",
    ),
    (
        "vectors",
        "ld.global.v2.u32 {%r4, %r5}, [%rd33]; st.global.v2.u32 [%rd34], {%r5, %r4};
         st.shared.v4.u32 [%rd22], {%r3, %r4, %r5, %r1}; bar.sync 0;
         ld.shared.v4.u32 {%r6, %r7, %r8, %r9}, [%rd23];
         add.u32 %r6, %r6, %r7; add.u32 %r8, %r8, %r9; add.u32 %r6, %r6, %r8;
         st.global.u32 [%rd30], %r6;",
    ),
    (
        "signed_and_wide",
        "ld.global.s8 %r4, [%rd35]; ld.global.s16 %r5, [%rd36];
         ld.global.u8 %r6, [%rd35]; add.u32 %r4, %r4, %r5; add.u32 %r4, %r4, %r6;
         st.global.u32 [%rd30], %r4; ld.global.u64 %rd50, [%rd33];
         st.global.u64 [%rd34], %rd50; st.global.u16 [%rd36], %r4; st.global.u8 [%rd35], %r3;",
    ),
    (
        "guarded",
        "mov.u32 %r4, 9; @%p1 ld.global.u32 %r4, [%rd31]; @!%p1 ld.global.u32 %r4, [%rd37];
         @%p1 st.global.u32 [%rd32], %r4; @!%p1 st.global.u32 [%rd30], %r4;",
    ),
    (
        "many_buffers",
        "ld.global.u32 %r4, [%rd37]; ld.global.u32 %r5, [%rd38]; ld.global.u32 %r6, [%rd39];
         ld.global.u32 %r7, [%rd31]; add.u32 %r4, %r4, %r5; add.u32 %r4, %r4, %r6;
         add.u32 %r4, %r4, %r7; st.global.u32 [%rd32], %r4; ld.global.u32 %r8, [%rd30];
         add.u32 %r8, %r8, %r4; st.global.u32 [%rd30], %r8;",
    ),
    (
        "split_spans",
        "and.b32 %r6, %r3, 1; setp.eq.u32 %p2, %r6, 0; selp.b64 %rd42, %rd2, %rd3, %p2;
         add.s64 %rd42, %rd42, %rd7; ld.global.u32 %r4, [%rd42]; st.global.u32 [%rd30], %r4;",
    ),
    (
        "same_address",
        "st.shared.u32 [dsh], %r3; st.shared.u32 [dsh+4], %r1; bar.sync 0;
         ld.shared.u32 %r4, [dsh]; ld.shared.u32 %r5, [dsh+4]; add.u32 %r4, %r4, %r5;
         st.global.u32 [%rd30], %r4; st.global.u32 [%rd1], %r3;",
    ),
    (
        // A store, then a load of what another lane stored (interpreter order: every
        // lane's store first).
        "store_then_load",
        "st.global.u32 [%rd32], %r3; ld.global.u32 %r4, [%rd30]; add.u32 %r4, %r4, 100;
         add.s64 %rd45, %rd30, 2048; st.global.u32 [%rd45], %r4;",
    ),
    (
        // Reads a register before writing it: the next block on the host thread finds
        // what this one left (a register dead until the kernel ends is live again at its
        // entry, so compiled code must still store it).
        "stale_registers",
        "add.u32 %r11, %r3, 5; st.global.u32 [%rd30], %r12; mov.u32 %r12, %r11;",
    ),
    (
        // A forward branch over loads (if-converted: the body runs guarded in one run),
        // taken by some lanes: the body's load goes wrong at lane `bad` when it runs it.
        "if_converted",
        "mov.u32 %r4, 1; and.b32 %r6, %r3, 3; setp.eq.u32 %p2, %r6, 0;
         @%p2 bra $Lskip; ld.global.u32 %r4, [%rd31]; add.u32 %r4, %r4, %r6;
         $Lskip: add.u32 %r4, %r4, %r3; st.global.u32 [%rd30], %r4;",
    ),
    (
        // Taken by every lane (lane `bad` beyond the block) or by none: the body counts
        // as issued only when a lane runs it.
        "if_converted_uniform",
        "mov.u32 %r4, 2; setp.lt.u32 %p2, %r1, 64;
         @%p2 bra $Lskip; ld.global.u32 %r4, [%rd31]; add.u32 %r4, %r4, 7;
         $Lskip: st.global.u32 [%rd30], %r4;",
    ),
    (
        // Loads checked lane by lane (the run reads no register it writes): lanes before
        // the faulting one have written their registers when it goes back to the
        // interpreter, which runs the whole run again.
        "per_lane_loads",
        "bar.sync 0; ld.global.u32 %r4, [%rd31]; ld.global.u32 %r5, [%rd37];
         cvta.to.global.u64 %rd46, %rd31; ld.u32 %r6, [%rd46]; add.u32 %r4, %r4, %r5;
         add.u32 %r4, %r4, %r6; st.global.u32 [%rd30], %r4;",
    ),
    (
        // An accumulator (read, then written) in loads checked lane by lane, the lanes
        // in two buffers: the first odd lane misses the TLB and the interpreter runs the
        // run again, so the lanes before it must not have added to it yet.
        "accumulator_two_spans",
        "mov.u32 %r9, 5; ld.global.u32 %r8, [%rd2]; and.b32 %r6, %r3, 1; setp.eq.u32 %p2, %r6, 0;
         selp.b64 %rd42, %rd2, %rd3, %p2; add.s64 %rd42, %rd42, %rd7; bar.sync 0;
         ld.global.u32 %r5, [%rd42]; add.u32 %r9, %r9, %r5; ld.global.u32 %r7, [%rd31];
         add.u32 %r9, %r9, %r7; st.global.u32 [%rd30], %r9;",
    ),
    (
        // Loads through one base register at several offsets, checked once per lane as
        // a group (all the bytes from the lowest to the highest offset).
        "grouped_loads",
        "st.shared.u32 [%rd20], %r3; bar.sync 0; ld.global.u32 %r4, [%rd31];
         ld.global.u32 %r5, [%rd31+8]; ld.shared.u32 %r6, [%rd21]; ld.shared.u32 %r7, [%rd21+4];
         ld.global.u32 %r8, [%rd31+4]; add.u32 %r4, %r4, %r5; add.u32 %r4, %r4, %r6;
         add.u32 %r4, %r4, %r7; add.u32 %r4, %r4, %r8; st.global.u32 [%rd30], %r4;",
    ),
    (
        // A run that writes a register it read first: checked for every lane first.
        "rewrites_its_input",
        "bar.sync 0; add.s64 %rd31, %rd31, 0; ld.global.u32 %r4, [%rd31];
         add.u32 %r4, %r4, 3; st.global.u32 [%rd30], %r4;",
    ),
    (
        // Lanes 16-31 write %r5 in a run and never read it again; lanes 0-15, run after
        // them, read it through a shuffle: a register a shuffle reads stays live
        // everywhere, so the run stores it.
        "shuffle_of_a_dead_register",
        "mov.u32 %r5, 0; setp.lt.u32 %p2, %r3, 16; @%p2 bra $Llow; mul.lo.u32 %r5, %r3, 3;
         add.u32 %r5, %r5, %r1; bra $Ljoin;
         $Llow: shfl.sync.idx.b32 %r6, %r5, 20, 31, -1; st.global.u32 [%rd30], %r6;
         $Ljoin: ret;",
    ),
    (
        "const_space",
        "mov.u64 %rd43, tab; and.b64 %rd44, %rd4, 252; add.s64 %rd43, %rd43, %rd44;
         add.s64 %rd43, %rd43, %rd6; ld.const.u32 %r4, [%rd43]; st.global.u32 [%rd30], %r4;",
    ),
];

fn mem_module() -> String {
    let mut s = String::from(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
         .const .align 4 .b8 tab[256] = {1, 2, 3, 4, 5, 6, 7, 8, 9};\n\
         .extern .shared .align 16 .b8 dsh[];\n",
    );
    for (name, body) in MEM_KERNELS {
        s += &format!(
            ".visible .entry {name}(.param .u64 a, .param .u64 b, .param .u64 c, \
             .param .u64 d, .param .u64 e, .param .u32 bad, .param .u64 delta)\n{{\n\
             .reg .pred %p<4>; .reg .b32 %r<16>; .reg .b64 %rd<64>;\n\
             .shared .align 16 .b8 sh[1024];\n\
             ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b]; ld.param.u64 %rd3, [c];\n\
             ld.param.u64 %rd8, [d]; ld.param.u64 %rd9, [e];\n\
             ld.param.u32 %r1, [bad]; ld.param.u64 %rd10, [delta];\n\
             mov.u32 %r3, %tid.x; setp.eq.u32 %p1, %r3, %r1;\n\
             cvt.u64.u32 %rd11, %r3; shl.b64 %rd4, %rd11, 2; shl.b64 %rd5, %rd11, 3;\n\
             selp.b64 %rd6, %rd10, 0, %p1; add.s64 %rd7, %rd4, %rd6;\n\
             mov.u64 %rd12, sh; add.s64 %rd20, %rd12, %rd4; add.s64 %rd21, %rd12, %rd7;\n\
             shl.b64 %rd13, %rd11, 4; add.s64 %rd22, %rd12, %rd13;\n\
             add.s64 %rd23, %rd22, %rd6;\n\
             add.s64 %rd30, %rd1, %rd4; add.s64 %rd31, %rd2, %rd7; add.s64 %rd32, %rd1, %rd7;\n\
             add.s64 %rd14, %rd5, %rd6; add.s64 %rd33, %rd2, %rd14; add.s64 %rd34, %rd1, %rd14;\n\
             add.s64 %rd35, %rd2, %rd11; add.s64 %rd35, %rd35, %rd6;\n\
             shl.b64 %rd15, %rd11, 1; add.s64 %rd36, %rd1, %rd15; add.s64 %rd36, %rd36, %rd6;\n\
             add.s64 %rd37, %rd3, %rd4; add.s64 %rd38, %rd8, %rd4; add.s64 %rd39, %rd9, %rd4;\n\
             {body}\nret;\n}}\n"
        );
    }
    s
}

#[test]
fn compiled_loads_and_stores_fault_as_the_interpreter_does() {
    let m = Module::parse(&mem_module()).unwrap();
    let (mut clean, mut faulted, mut compiled) = (0, 0, 0);
    let mut failures = Vec::new();
    // Lanes of warp 0 and 1; 1000: no lane goes wrong.
    let lanes = [0u32, 13, 31, 45, 1000];
    let deltas: [u64; 8] = [
        4096,
        2,
        4,
        (-4i64) as u64,
        (-8i64) as u64,
        1 << 40,
        (-(1i64 << 40)) as u64,
        1 << 62,
    ];
    for (name, _) in MEM_KERNELS {
        let k = m.kernel(name).unwrap();
        let info = m.jit_compile(k).expect("compiles");
        // Every load and store is compiled: only `mov %tid`, the symbol addresses of
        // `.const` and `cvta` go through the interpreter's code.
        assert!(info.via_interpreter <= 3, "{name}: {info:?}");
        compiled += info.native;
        for &bad in &lanes {
            for &delta in &deltas {
                for cut in [false, true] {
                    if cut && (bad != 1000 || delta != 4) {
                        continue;
                    }
                    let make = |m: &Module| {
                        let mut mem = TestMemory::new();
                        // a read-write, b read-only, c/d/e readable: 4 KiB each, 1 TiB apart.
                        let data = |i: u32| u32s(&input(&format!("{name}{i}"), 1024));
                        let bufs: Vec<u64> = (0..5).map(|i| mem.map(&data(i), i == 0)).collect();
                        let globals = m.globals.iter().map(|g| mem.map(&g.init, false)).collect();
                        let mut vals = bufs.clone();
                        vals.extend([bad as u64, delta]);
                        let mut params = params(&m.kernels[k], &vals);
                        if cut {
                            // The launch passes fewer bytes than the kernel reads.
                            params.truncate(44);
                        }
                        Setup {
                            mem,
                            buffers: bufs,
                            params,
                            globals,
                        }
                    };
                    let configure = |l: &mut Launch| {
                        l.grid = [2, 1, 1];
                        l.block = [64, 1, 1];
                        l.dynamic_shared_bytes = 64;
                    };
                    if let Some(d) = differ(&m, k, &make, &configure) {
                        failures.push(format!("{name} lane {bad} delta {delta:#x} cut {cut}: {d}"));
                    }
                    let s = make(&m);
                    let mut l = launch(2, 64, &s.params);
                    configure(&mut l);
                    l.globals = &s.globals;
                    l.engine = Engine::Jit;
                    match run(&m, k, &l, &s.mem) {
                        Ok(_) => clean += 1,
                        Err(_) => faulted += 1,
                    }
                }
            }
        }
    }
    println!("{clean} launches ran clean, {faulted} faulted; {compiled} instructions compiled");
    // Both outcomes are exercised.
    assert!(
        clean > 40 && faulted > 150,
        "{clean} clean, {faulted} faulted"
    );
    assert!(
        failures.is_empty(),
        "{} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A loop whose if-converted body every lane skips on some trips, some lanes on others,
/// no lane on the rest, stopped by the step limit at many points: the body counts as
/// issued only on trips where a lane ran it, so both engines stop at the same
/// instruction of the same trip (the fault names the step count, the pc and the thread).
#[test]
fn if_converted_bodies_count_steps_as_the_interpreter_does() {
    let src = ".version 8.0\n.target sm_90\n.address_size 64\n\
        .visible .entry k(.param .u64 a)\n{\n\
        .reg .pred %p<4>; .reg .b32 %r<16>; .reg .b64 %rd<8>;\n\
        ld.param.u64 %rd1, [a]; mov.u32 %r3, %tid.x; mov.u32 %r4, 0; mov.u32 %r5, 0;\n\
        cvt.u64.u32 %rd2, %r3; shl.b64 %rd2, %rd2, 2; add.s64 %rd3, %rd1, %rd2;\n\
        $Lloop: and.b32 %r6, %r4, 3; setp.ge.u32 %p1, %r6, 2;\n\
        setp.eq.u32 %p2, %r6, 1; and.b32 %r7, %r3, 1; setp.eq.u32 %p3, %r7, 0;\n\
        and.pred %p2, %p2, %p3; or.pred %p1, %p1, %p2;\n\
        @%p1 bra $Lskip; ld.global.u32 %r8, [%rd3]; add.u32 %r5, %r5, %r8; add.u32 %r5, %r5, %r4;\n\
        $Lskip: add.u32 %r4, %r4, 1; setp.lt.u32 %p1, %r4, 40; @%p1 bra $Lloop;\n\
        st.global.u32 [%rd3], %r5; ret;\n}\n";
    let m = Module::parse(src).unwrap();
    let k = m.kernel("k").unwrap();
    let (mut stopped, mut failures) = (0, Vec::new());
    for limit in (20..700).step_by(7) {
        let make = |m: &Module| {
            let mut mem = TestMemory::new();
            let a = mem.map(&u32s(&input("steps", 64)), true);
            Setup {
                params: params(&m.kernels[k], &[a]),
                mem,
                buffers: vec![a],
                globals: Vec::new(),
            }
        };
        let configure = |l: &mut Launch| {
            l.block = [64, 1, 1];
            l.step_limit = Some(limit);
        };
        if let Some(d) = differ(&m, k, &make, &configure) {
            failures.push(format!("step limit {limit}: {d}"));
        }
        let s = make(&m);
        let mut l = launch(1, 64, &s.params);
        configure(&mut l);
        l.engine = Engine::Jit;
        stopped += run(&m, k, &l, &s.mem).is_err() as usize;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(stopped > 50, "only {stopped} launches met the step limit");
}

/// Chains of f32 arithmetic over NaNs of every payload, infinities and zeros: compiled
/// runs carry f32 results between instructions before their NaNs are made canonical, so
/// every way a value leaves such a chain is here: stored, read as integer bits (`mov.b32`,
/// an integer add), compared, selected, written under a guard, reread after an integer
/// write to the same register, and live after the run.
#[test]
fn f32_chains_keep_nan_bits_as_the_interpreter_does() {
    let src = ".version 8.0\n.target sm_90\n.address_size 64\n\
        .visible .entry k(.param .u64 a, .param .u64 b)\n{\n\
        .reg .pred %p<4>; .reg .b32 %r<16>; .reg .f32 %f<16>; .reg .b64 %rd<8>;\n\
        ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b]; mov.u32 %r1, %tid.x;\n\
        mul.wide.u32 %rd3, %r1, 16; add.s64 %rd4, %rd1, %rd3; add.s64 %rd5, %rd2, %rd3;\n\
        ld.global.f32 %f1, [%rd4]; ld.global.f32 %f2, [%rd4+4]; ld.global.f32 %f3, [%rd4+8];\n\
        ld.global.f32 %f4, [%rd4+12];\n\
        fma.rn.f32 %f5, %f1, %f2, %f3; mul.rn.f32 %f6, %f5, %f4; add.rn.f32 %f7, %f6, %f1;\n\
        sub.rn.f32 %f8, %f7, %f2; mov.b32 %r2, %f6; add.s32 %r3, %r2, 1;\n\
        setp.lt.f32 %p1, %f8, %f5; setp.nan.f32 %p2, %f7, %f6; selp.f32 %f9, %f8, %f5, %p1;\n\
        @%p2 add.rn.f32 %f9, %f9, %f3; fma.rn.f32 %f10, %f9, %f9, %f8;\n\
        mov.b32 %f11, %r3; add.rn.f32 %f11, %f11, %f10; mov.b32 %r4, %f5;\n\
        st.global.f32 [%rd5], %f10; st.global.b32 [%rd5+4], %r4;\n\
        @%p1 bra $Lskip; fma.rn.f32 %f12, %f8, %f7, %f6; st.global.f32 [%rd5+8], %f12;\n\
        $Lskip: st.global.f32 [%rd5+12], %f11;\n\
        ret;\n}\n";
    let m = Module::parse(src).unwrap();
    let k = m.kernel("k").unwrap();
    let info = m.jit_compile(k).expect("compiles");
    assert!(info.native > 20, "{info:?}");
    let mut failures = Vec::new();
    for seed in ["nan0", "nan1", "nan2", "nan3", "nan4", "nan5"] {
        let make = |m: &Module| {
            let mut mem = TestMemory::new();
            let a = mem.map(&u32s(&input(seed, 4 * 64)), false);
            let b = mem.map(&[0u8; 16 * 64], true);
            Setup {
                params: params(&m.kernels[k], &[a, b]),
                mem,
                buffers: vec![b],
                globals: Vec::new(),
            }
        };
        let configure = |l: &mut Launch| l.block = [64, 1, 1];
        if let Some(d) = differ(&m, k, &make, &configure) {
            failures.push(format!("{seed}: {d}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// If-converted bodies whose registers the lanes that skip them read afterwards: inside
/// the run (after the branch's target), after it (live out), and not at all (a body's
/// temporary, which compiled code may write in every lane): the skipping lanes must see
/// their old values wherever they look.
#[test]
fn if_converted_bodies_keep_what_skipping_lanes_read() {
    let src = ".version 8.0\n.target sm_90\n.address_size 64\n\
        .visible .entry k(.param .u64 a, .param .u64 b)\n{\n\
        .reg .pred %p<4>; .reg .b32 %r<16>; .reg .b64 %rd<8>;\n\
        ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b]; mov.u32 %r3, %tid.x;\n\
        mul.wide.u32 %rd4, %r3, 4; add.s64 %rd3, %rd1, %rd4; add.s64 %rd5, %rd2, %rd4;\n\
        ld.global.u32 %r1, [%rd3]; add.u32 %r8, %r3, 7; add.u32 %r9, %r3, 100;\n\
        and.b32 %r2, %r3, 3; setp.eq.u32 %p1, %r2, 0;\n\
        @%p1 bra $Lskip; ld.global.u32 %r8, [%rd3+256]; add.u32 %r9, %r8, 1;\n\
        add.u32 %r11, %r8, %r9;\n\
        $Lskip: add.u32 %r10, %r9, %r3;\n\
        st.global.u32 [%rd5], %r10; st.global.u32 [%rd5+256], %r8;\n\
        ret;\n}\n";
    let m = Module::parse(src).unwrap();
    let k = m.kernel("k").unwrap();
    let info = m.jit_compile(k).expect("compiles");
    assert!(info.native > 10, "{info:?}");
    let mut failures = Vec::new();
    for seed in ["skip0", "skip1", "skip2", "skip3"] {
        let make = |m: &Module| {
            let mut mem = TestMemory::new();
            let a = mem.map(&u32s(&input(seed, 128)), false);
            let b = mem.map(&[0u8; 512], true);
            Setup {
                params: params(&m.kernels[k], &[a, b]),
                mem,
                buffers: vec![b],
                globals: Vec::new(),
            }
        };
        let configure = |l: &mut Launch| l.block = [64, 1, 1];
        if let Some(d) = differ(&m, k, &make, &configure) {
            failures.push(format!("{seed}: {d}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Shuffles (the interpreter's code, called from compiled runs) of every mode with lane and clamp operands taken
/// from the data (any bits, segment masks included), under a guard some lanes fail, in a
/// partial warp, one writing its own source register: both engines alike.
#[test]
fn shuffles_run_the_same_under_both_engines() {
    let mut body = String::new();
    for (i, mode) in ["up", "down", "bfly", "idx"].iter().enumerate() {
        body += &format!(
            "shfl.sync.{mode}.b32 %r{d}|%p2, %r5, %r6, %r7, -1;\n\
             @%p1 shfl.sync.{mode}.b32 %r5|%p3, %r5, {imm}, 0x1f, -1;\n\
             selp.u32 %r{q}, 1, 0, %p2; selp.u32 %r{q2}, 1, 0, %p3;\n\
             st.global.u32 [%rd5+{o0}], %r{d}; st.global.u32 [%rd5+{o1}], %r{q};\n\
             st.global.u32 [%rd5+{o2}], %r5; st.global.u32 [%rd5+{o3}], %r{q2};\n",
            d = 10 + i,
            q = 20 + i,
            q2 = 30 + i,
            imm = 3 + 5 * i,
            o0 = 256 * (4 * i),
            o1 = 256 * (4 * i + 1),
            o2 = 256 * (4 * i + 2),
            o3 = 256 * (4 * i + 3),
        );
    }
    let src = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n\
        .visible .entry k(.param .u64 a, .param .u64 b)\n{{\n\
        .reg .pred %p<4>; .reg .b32 %r<40>; .reg .b64 %rd<8>;\n\
        ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b]; mov.u32 %r3, %tid.x;\n\
        mul.wide.u32 %rd4, %r3, 4; add.s64 %rd3, %rd1, %rd4; add.s64 %rd5, %rd2, %rd4;\n\
        ld.global.u32 %r5, [%rd3]; ld.global.u32 %r6, [%rd3+256]; ld.global.u32 %r7, [%rd3+512];\n\
        and.b32 %r8, %r5, 5; setp.ne.u32 %p1, %r8, 0;\n\
        {body}ret;\n}}\n"
    );
    let m = Module::parse(&src).unwrap();
    let k = m.kernel("k").unwrap();
    let info = m.jit_compile(k).expect("compiles");
    assert!(info.native > 20, "{info:?}");
    let mut failures = Vec::new();
    for seed in ["shfl0", "shfl1", "shfl2", "shfl3", "shfl4"] {
        for threads in [64u32, 48] {
            let make = |m: &Module| {
                let mut mem = TestMemory::new();
                let a = mem.map(&u32s(&input(seed, 3 * 64)), false);
                let b = mem.map(&[0u8; 16 * 256], true);
                Setup {
                    params: params(&m.kernels[k], &[a, b]),
                    mem,
                    buffers: vec![b],
                    globals: Vec::new(),
                }
            };
            let configure = |l: &mut Launch| l.block = [threads, 1, 1];
            if let Some(d) = differ(&m, k, &make, &configure) {
                failures.push(format!("{seed} {threads}: {d}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Registers a run gives one value in every lane (parameters, constants) are written
/// after its loop over the lanes, whole-warp or lane by lane: in groups of every size
/// (a divergent branch splits the warp at a launch parameter), only the group's lanes
/// get them.
#[test]
fn uniform_values_reach_only_the_groups_lanes() {
    let src = ".version 8.0\n.target sm_90\n.address_size 64\n\
        .visible .entry k(.param .u64 a, .param .u32 n)\n{\n\
        .reg .pred %p<4>; .reg .b32 %r<16>; .reg .f32 %f<4>; .reg .b64 %rd<8>;\n\
        ld.param.u64 %rd1, [a]; ld.param.u32 %r1, [n]; mov.u32 %r3, %tid.x;\n\
        mul.wide.u32 %rd4, %r3, 4; add.s64 %rd3, %rd1, %rd4;\n\
        add.u32 %r8, %r3, 1000; add.u32 %r9, %r3, 2000;\n\
        setp.lt.u32 %p1, %r3, %r1; @%p1 bra $Lx;\n\
        cvt.rn.f32.s32 %f1, %r3;\n\
        ld.param.u32 %r8, [n]; add.u32 %r9, %r8, 7; mov.u32 %r10, 55; add.u32 %r9, %r9, %r10;\n\
        $Lx: st.global.u32 [%rd3], %r8; st.global.u32 [%rd3+256], %r9;\n\
        ret;\n}\n";
    let m = Module::parse(src).unwrap();
    let k = m.kernel("k").unwrap();
    let mut failures = Vec::new();
    for n in [0u64, 1, 5, 31, 32, 33, 40, 63, 64] {
        let make = |m: &Module| {
            let mut mem = TestMemory::new();
            let a = mem.map(&[0u8; 512], true);
            Setup {
                params: params(&m.kernels[k], &[a, n]),
                mem,
                buffers: vec![a],
                globals: Vec::new(),
            }
        };
        let configure = |l: &mut Launch| l.block = [64, 1, 1];
        if let Some(d) = differ(&m, k, &make, &configure) {
            failures.push(format!("n {n}: {d}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The approximate and correctly rounded f32 and f64 functions and the float/integer
/// conversions, which compiled code calls lane by lane (`math::lane_of`, `cvt_lane`)
/// inside its runs instead of handing each to the interpreter: none goes through the
/// interpreter's code, and every bit agrees with it, special values included, under a
/// guard, on operands every lane shares (computed once) and on 64-bit sources.
#[test]
fn lane_functions_and_conversions_run_in_compiled_runs_as_the_interpreter_does() {
    let src = ".version 8.0\n.target sm_90\n.address_size 64\n\
        .visible .entry k(.param .u64 a, .param .u64 b, .param .f32 s)\n{\n\
        .reg .pred %p<4>; .reg .b32 %r<16>; .reg .f32 %f<32>; .reg .b64 %rd<16>;\n\
        .reg .f64 %fd<8>;\n\
        ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b]; ld.param.f32 %f20, [s];\n\
        mov.u32 %r1, %tid.x;\n\
        mul.wide.u32 %rd3, %r1, 16; add.s64 %rd4, %rd1, %rd3; mul.wide.u32 %rd6, %r1, 64;\n\
        add.s64 %rd5, %rd2, %rd6;\n\
        ld.global.f32 %f1, [%rd4]; ld.global.f32 %f2, [%rd4+4]; ld.global.u32 %r2, [%rd4+8];\n\
        ld.global.u64 %rd7, [%rd4+8];\n\
        ex2.approx.f32 %f3, %f1; lg2.approx.f32 %f4, %f2; rsqrt.approx.f32 %f5, %f1;\n\
        div.approx.f32 %f6, %f1, %f2; div.rn.f32 %f7, %f1, %f2; abs.f32 %f8, %f2;\n\
        sqrt.rn.f32 %f9, %f8; fma.rn.f32 %f10, %f3, %f4, %f6; neg.f32 %f11, %f7;\n\
        min.f32 %f12, %f10, %f11; ex2.approx.ftz.f32 %f13, %f20; div.rn.f32 %f14, %f13, %f20;\n\
        cvt.rn.f32.s32 %f15, %r2; cvt.rzi.s32.f32 %r3, %f1; cvt.rni.u32.f32 %r4, %f2;\n\
        cvt.f64.f32 %fd1, %f1; cvt.rn.f32.f64 %f16, %fd1; cvt.rn.f64.u64 %fd2, %rd7;\n\
        cvt.rmi.s64.f64 %rd8, %fd2; cvt.rn.f32.u64 %f17, %rd7; div.rn.f64 %fd3, %fd2, %fd1;\n\
        rcp.rn.f32 %f21, %f2; cvt.rn.f32.u32 %f22, %r2; add.f32 %f10, %f10, %f21;\n\
        add.f32 %f15, %f15, %f22;\n\
        setp.lt.f32 %p1, %f1, %f2; @%p1 lg2.approx.f32 %f12, %f1; @!%p1 cvt.rpi.s32.f32 %r3, %f2;\n\
        st.global.f32 [%rd5], %f5; st.global.f32 [%rd5+4], %f9; st.global.f32 [%rd5+8], %f12;\n\
        st.global.f32 [%rd5+12], %f14; st.global.f32 [%rd5+16], %f15; st.global.u32 [%rd5+20], %r3;\n\
        st.global.u32 [%rd5+24], %r4; st.global.f32 [%rd5+28], %f16; st.global.u64 [%rd5+32], %rd8;\n\
        st.global.f32 [%rd5+40], %f17; st.global.f64 [%rd5+48], %fd3; st.global.f32 [%rd5+56], %f13;\n\
        st.global.f32 [%rd5+60], %f10;\n\
        ret;\n}\n";
    let m = Module::parse(src).unwrap();
    let k = m.kernel("k").unwrap();
    let info = m.jit_compile(k).expect("compiles");
    assert_eq!(info.via_interpreter, 0, "{info:?}");
    let mut failures = Vec::new();
    for (seed, s) in [
        ("nan0", 1.5f32),
        ("nan1", -0.0),
        ("nan2", f32::NAN),
        ("nan3", 1e-40),
        ("nan4", f32::INFINITY),
        ("nan5", -3.25),
    ] {
        let make = |m: &Module| {
            let mut mem = TestMemory::new();
            let a = mem.map(&u32s(&input(seed, 4 * 64)), false);
            let b = mem.map(&[0u8; 64 * 64], true);
            Setup {
                params: params(&m.kernels[k], &[a, b, s.to_bits() as u64]),
                mem,
                buffers: vec![b],
                globals: Vec::new(),
            }
        };
        let configure = |l: &mut Launch| l.block = [64, 1, 1];
        if let Some(d) = differ(&m, k, &make, &configure) {
            failures.push(format!("{seed}: {d}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_tiered_engine_interprets_a_kernel_until_compiling_pays() {
    // A loop of `n` rounds per thread: little work at n = 1, much at n = 1 << 20.
    let src = r#"
extern "C" __global__ void spin(unsigned* out, unsigned n) {
  unsigned x = threadIdx.x;
  for (unsigned i = 0; i < n; ++i) x = x * 1664525u + 1013904223u;
  out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}
"#;
    let m = Module::parse(&ptx(src)).unwrap();
    let k = m.kernel("spin").unwrap();
    let expect =
        |t: u32, n: u32| (0..n).fold(t, |x, _| x.wrapping_mul(1664525).wrapping_add(1013904223));
    let go = |m: &Module, grid: u32, n: u32| {
        let mut mem = TestMemory::new();
        let out = mem.map(&vec![0u8; grid as usize * 32 * 4], true);
        let p = params(&m.kernels[k], &[out, n as u64]);
        let mut l = launch(grid, 32, &p);
        l.engine = Engine::Tiered;
        l.step_limit = None;
        let stats = run(m, k, &l, &mem).unwrap();
        let got = to_u32s(&mem.read(out));
        for (i, g) in got.iter().enumerate() {
            assert_eq!(*g, expect(i as u32 % 32, n), "thread {i}");
        }
        stats.instructions
    };
    // Small launches are interpreted, and their work counted, until it passes the bar.
    let mut ran = 0;
    while ran < cumock_ptx::TIER_UP_INSTRUCTIONS {
        assert!(!m.jit_compiled(k), "compiled after {ran} instructions");
        ran += go(&m, 1, 4096);
    }
    assert!(!m.jit_compiled(k));
    go(&m, 1, 1);
    assert!(m.jit_compiled(k), "compiled once {ran} instructions ran");
    // A launch of many threads compiles its kernel at once.
    let m = Module::parse(&ptx(src)).unwrap();
    go(&m, 1, 1);
    assert!(!m.jit_compiled(k));
    let blocks = (cumock_ptx::TIER_UP_THREADS / 32) as u32;
    go(&m, blocks, 1);
    assert!(m.jit_compiled(k));
}

#[test]
fn the_tiered_engine_compiles_a_long_launch_while_it_runs() {
    // One launch of one warp, each thread looping 2^21 times: about 2^24 * 6 thread
    // instructions, past TIER_UP_INSTRUCTIONS in the launch itself (cudarc's
    // slow_worker: one block that loops 10^9 times, interpreted past the time limit).
    let src = r#"
extern "C" __global__ void spin(unsigned* out, unsigned n) {
  unsigned x = threadIdx.x;
  for (unsigned i = 0; i < n; ++i) x = x * 1664525u + 1013904223u;
  out[threadIdx.x] = x;
}
"#;
    let m = Module::parse(&ptx(src)).unwrap();
    let k = m.kernel("spin").unwrap();
    let n = 1u32 << 21;
    let mut mem = TestMemory::new();
    let out = mem.map(&[0u8; 32 * 4], true);
    let p = params(&m.kernels[k], &[out, n as u64]);
    let mut l = launch(1, 32, &p);
    l.engine = Engine::Tiered;
    l.step_limit = None;
    l.host_threads = 1;
    let stats = run(&m, k, &l, &mem).unwrap();
    assert!(stats.instructions > 4 * cumock_ptx::TIER_UP_INSTRUCTIONS);
    assert!(
        m.jit_compiled(k),
        "a launch of {} thread instructions ended interpreted",
        stats.instructions
    );
    let got = to_u32s(&mem.read(out));
    for (t, g) in got.iter().enumerate() {
        let want = (0..n).fold(t as u32, |x, _| {
            x.wrapping_mul(1664525).wrapping_add(1013904223)
        });
        assert_eq!(*g, want, "thread {t}");
    }
}
