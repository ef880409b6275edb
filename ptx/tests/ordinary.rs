//! Ordinary kernels as people write them (tests/ordinary.cu: tiled SGEMM, softmax with warp
//! reductions, a shared-memory histogram, a tiled transpose, float and double math
//! library calls, 64-bit division with a struct parameter), compiled by nvcc -O3 and
//! checked against the same computation on the host.

mod common;
use common::*;
use cumock_ptx::{run, Launch, Module};

fn module() -> Module {
    let src = std::fs::read_to_string(repo_root().join("ptx/tests/ordinary.cu")).unwrap();
    Module::parse(&ptx(&src)).unwrap()
}

/// The same kernels built for the debugger (`-G`): unoptimised code, a local-memory
/// stack (`%SP`, `cvta.local`), debug sections.
fn debug_module() -> Module {
    let src = std::fs::read_to_string(repo_root().join("ptx/tests/ordinary.cu")).unwrap();
    let text = String::from_utf8(nvcc(&src, &["-ptx", "-arch=compute_90", "-G"])).unwrap();
    Module::parse(&text).unwrap()
}

/// Runs a kernel with the module's variables (the math library's tables) mapped.
fn go(
    m: &Module,
    k: usize,
    grid: [u32; 2],
    block: [u32; 2],
    p: &[u8],
    mem: &mut TestMemory,
    threads: usize,
) {
    let globals: Vec<u64> = m.globals.iter().map(|g| mem.map(&g.init, false)).collect();
    let l = Launch {
        grid: [grid[0], grid[1], 1],
        block: [block[0], block[1], 1],
        globals: &globals,
        host_threads: threads,
        step_limit: Some(1 << 26),
        time_limit: None,
        engine: cumock_ptx::Engine::default(),
        ..launch(1, 1, p)
    };
    run(m, k, &l, mem).unwrap();
}

fn rng_f32(n: usize, seed: u64) -> Vec<f32> {
    let mut r = fastrand::Rng::with_seed(seed);
    (0..n).map(|_| r.f32() * 4.0 - 2.0).collect()
}

#[test]
fn tiled_sgemm_matches_the_host_bit_for_bit() {
    let m = module();
    let k = m.kernel("sgemm").unwrap();
    let n = 40usize; // not a multiple of the tile: the edges are exercised
    let (a, b) = (rng_f32(n * n, 1), rng_f32(n * n, 2));
    let mut mem = TestMemory::new();
    let (da, db, dc) = (
        mem.map(&f32s(&a), false),
        mem.map(&f32s(&b), false),
        mem.map(&vec![0u8; n * n * 4], true),
    );
    let p = params(&m.kernels[k], &[da, db, dc, n as u64]);
    let tiles = n.div_ceil(16) as u32;
    go(&m, k, [tiles, tiles], [16, 16], &p, &mut mem, 2);
    let c = to_f32s(&mem.read(dc));
    for row in 0..n {
        for col in 0..n {
            // The kernel's order: tile by tile, k ascending, fused multiply-adds, zeros
            // past the edge.
            let mut acc = 0f32;
            for k0 in (0..n).step_by(16) {
                for kk in 0..16 {
                    let (x, y) = if k0 + kk < n {
                        (a[row * n + k0 + kk], b[(k0 + kk) * n + col])
                    } else {
                        (0.0, 0.0)
                    };
                    acc = x.mul_add(y, acc);
                }
            }
            assert_eq!(c[row * n + col], acc, "C[{row}][{col}]");
        }
    }
}

#[test]
fn softmax_with_warp_shuffles_sums_to_one() {
    let m = module();
    let k = m.kernel("softmax").unwrap();
    let n = 1000usize;
    let x = rng_f32(n, 3);
    let mut mem = TestMemory::new();
    let (dx, dy) = (mem.map(&f32s(&x), false), mem.map(&vec![0u8; n * 4], true));
    let p = params(&m.kernels[k], &[dx, dy, n as u64]);
    go(&m, k, [1, 1], [32, 1], &p, &mut mem, 2);
    let y = to_f32s(&mem.read(dy));
    let mx = x.iter().cloned().fold(f32::MIN, f32::max);
    let s: f64 = x.iter().map(|v| ((v - mx) as f64).exp()).sum();
    for i in 0..n {
        let want = ((x[i] - mx) as f64).exp() / s;
        assert!(
            (y[i] as f64 - want).abs() <= want * 1e-5,
            "y[{i}] = {}, want {want}",
            y[i]
        );
    }
}

#[test]
fn histogram_with_shared_and_global_atomics_counts_everything() {
    let m = module();
    let k = m.kernel("histogram").unwrap();
    let mut r = fastrand::Rng::with_seed(4);
    let data: Vec<u8> = (0..100_000).map(|_| r.u8(..) / 3 * 3).collect();
    let mut mem = TestMemory::new();
    let (dd, dh) = (mem.map(&data, false), mem.map(&[0u8; 1024], true));
    let p = params(&m.kernels[k], &[dd, dh, data.len() as u64]);
    go(&m, k, [13, 1], [96, 1], &p, &mut mem, 3);
    let mut want = [0u32; 256];
    data.iter().for_each(|&b| want[b as usize] += 1);
    assert_eq!(to_u32s(&mem.read(dh)), want);
}

#[test]
fn tiled_transpose() {
    let m = module();
    let k = m.kernel("transpose").unwrap();
    let (w, h) = (70usize, 45usize);
    let x: Vec<f32> = (0..w * h).map(|i| i as f32).collect();
    let mut mem = TestMemory::new();
    let (di, dout) = (
        mem.map(&f32s(&x), false),
        mem.map(&vec![0u8; w * h * 4], true),
    );
    let p = params(&m.kernels[k], &[di, dout, w as u64, h as u64]);
    go(
        &m,
        k,
        [w.div_ceil(32) as u32, h.div_ceil(32) as u32],
        [32, 8],
        &p,
        &mut mem,
        2,
    );
    let y = to_f32s(&mem.read(dout));
    for r in 0..h {
        for c in 0..w {
            assert_eq!(y[c * h + r], x[r * w + c]);
        }
    }
}

#[test]
fn math_library_calls_are_close_to_the_hosts() {
    let m = module();
    let n = 256usize;
    let x = rng_f32(n, 5);
    let mut mem = TestMemory::new();
    let dx = mem.map(&f32s(&x), false);
    let dy = mem.map(&vec![0u8; n * 4], true);
    let k = m.kernel("fmath").unwrap();
    let p = params(&m.kernels[k], &[dx, dy, n as u64]);
    go(&m, k, [2, 1], [128, 1], &p, &mut mem, 2);
    let y = to_f32s(&mem.read(dy));
    for i in 0..n {
        let v = x[i] as f64;
        let erf = {
            // Abramowitz-Stegun 7.1.26 is too coarse; integrate instead.
            let steps = 2000;
            let h = v / steps as f64;
            (0..steps)
                .map(|j| (-(h * (j as f64 + 0.5)).powi(2)).exp())
                .sum::<f64>()
                * h
                * 2.0
                / std::f64::consts::PI.sqrt()
        };
        let want = v.sin()
            + v.cos()
            + v.abs().powf(1.7)
            + erf
            + v.tanh()
            + (v.abs() + 1.0).ln()
            + v.atan2(2.0)
            + v.cbrt();
        assert!(
            (y[i] as f64 - want).abs() < 1e-4 * want.abs().max(1.0),
            "fmath({v}) = {}, want {want}",
            y[i]
        );
    }
    let xd: Vec<f64> = x.iter().map(|&v| v as f64 * 3.0).collect();
    let dxd = mem.map(
        &xd.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>(),
        false,
    );
    let dyd = mem.map(&vec![0u8; n * 8], true);
    let k = m.kernel("dmath").unwrap();
    let p = params(&m.kernels[k], &[dxd, dyd, n as u64]);
    go(&m, k, [2, 1], [128, 1], &p, &mut mem, 2);
    let yd: Vec<f64> = mem
        .read(dyd)
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    for i in 0..n {
        let v = xd[i];
        let want = v.sin()
            + (v * 0.1).exp()
            + (v.abs() + 1.0).ln()
            + v.abs().powf(0.3)
            + v.abs().sqrt() / 3.0;
        assert!(
            (yd[i] - want).abs() < 1e-13 * want.abs().max(1.0),
            "dmath({v}) = {}, want {want}",
            yd[i]
        );
    }
}

#[test]
fn sixty_four_bit_division_and_a_struct_parameter() {
    let m = module();
    let k = m.kernel("idiv").unwrap();
    let kern = &m.kernels[k];
    // struct Params { float alpha; int n; double beta; int4 q; }: one .param of 32 bytes.
    assert_eq!(
        kern.params
            .iter()
            .map(|p| (p.size, p.align))
            .collect::<Vec<_>>(),
        [(8, 8), (8, 8), (8, 8), (32, 16)]
    );
    let n = 300usize;
    let mut r = fastrand::Rng::with_seed(6);
    let a: Vec<i64> = (0..n).map(|_| r.i64(..) >> r.u32(0..60)).collect();
    let b: Vec<i64> = (0..n).map(|_| r.i64(..) >> r.u32(0..63)).collect();
    let bytes = |v: &[i64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>();
    let mut mem = TestMemory::new();
    let (da, db, dc) = (
        mem.map(&bytes(&a), false),
        mem.map(&bytes(&b), false),
        mem.map(&vec![0u8; n * 8], true),
    );
    let mut p = vec![0u8; kern.params[3].offset as usize + 32];
    for (i, v) in [da, db, dc].iter().enumerate() {
        p[kern.params[i].offset as usize..][..8].copy_from_slice(&v.to_le_bytes());
    }
    let s = kern.params[3].offset as usize;
    p[s..s + 4].copy_from_slice(&1.5f32.to_le_bytes());
    p[s + 4..s + 8].copy_from_slice(&(n as i32).to_le_bytes());
    p[s + 8..s + 16].copy_from_slice(&(-2.25f64).to_le_bytes());
    p[s + 24..s + 28].copy_from_slice(&77i32.to_le_bytes());
    go(&m, k, [3, 1], [128, 1], &p, &mut mem, 2);
    let c: Vec<i64> = mem
        .read(dc)
        .chunks_exact(8)
        .map(|x| i64::from_le_bytes(x.try_into().unwrap()))
        .collect();
    for i in 0..n {
        let want = (a[i] / (b[i] | 1)) + a[i] % 7 + (1.5f32 as f64 * -2.25) as i64 + 77 + a[i] / 3; // `a / 3u`: 3u becomes int64_t
        assert_eq!(c[i], want, "i={i} a={} b={}", a[i], b[i]);
    }
}

#[test]
fn debug_builds_compute_what_optimised_builds_compute() {
    let (opt, dbg) = (module(), debug_module());
    // Transpose and histogram: exact.
    let (w, h) = (40usize, 33usize);
    let x: Vec<f32> = (0..w * h).map(|i| i as f32 * 0.5).collect();
    let mut r = fastrand::Rng::with_seed(8);
    let data: Vec<u8> = (0..5000).map(|_| r.u8(..)).collect();
    let mut results = Vec::new();
    for m in [&opt, &dbg] {
        let mut mem = TestMemory::new();
        let (di, dout) = (
            mem.map(&f32s(&x), false),
            mem.map(&vec![0u8; w * h * 4], true),
        );
        let k = m.kernel("transpose").unwrap();
        let p = params(&m.kernels[k], &[di, dout, w as u64, h as u64]);
        go(m, k, [2, 2], [32, 8], &p, &mut mem, 2);
        let (dd, dh) = (mem.map(&data, false), mem.map(&[0u8; 1024], true));
        let k = m.kernel("histogram").unwrap();
        let p = params(&m.kernels[k], &[dd, dh, data.len() as u64]);
        go(m, k, [3, 1], [64, 1], &p, &mut mem, 2);
        let n = 24usize;
        let (a, b) = (rng_f32(n * n, 9), rng_f32(n * n, 10));
        let (da, db, dc) = (
            mem.map(&f32s(&a), false),
            mem.map(&f32s(&b), false),
            mem.map(&vec![0u8; n * n * 4], true),
        );
        let k = m.kernel("sgemm").unwrap();
        let p = params(&m.kernels[k], &[da, db, dc, n as u64]);
        go(m, k, [2, 2], [16, 16], &p, &mut mem, 2);
        results.push((mem.read(dout), mem.read(dh), to_f32s(&mem.read(dc))));
    }
    assert_eq!(results[0].0, results[1].0, "transpose");
    assert_eq!(results[0].1, results[1].1, "histogram");
    for (i, (x, y)) in results[0].2.iter().zip(&results[1].2).enumerate() {
        assert!(
            (x - y).abs() <= 1e-5 * x.abs().max(1.0),
            "sgemm C[{i}]: {x} vs {y}"
        );
    }
}
