//! `mma.sync.aligned.m8n8k4` with f16 A and B (sm_70's quad-pair shape): four
//! independent 8x8x4 products, one per quad pair of lanes, each A and B `.row` or `.col`,
//! f16 or f32 accumulators. The host lays the operands out in the lanes' registers by
//! the PTX ISA's formulas ("Matrix Fragments for mma.m8n8k4 with .f16 floating point
//! type"), a kernel runs the instruction, and D is compared with host GEMMs on both
//! engines. Small integers: sums exact; how the H200 rounds (ptxas's f32 steps on the
//! CUDA cores) is `mma.rs`'s unit tests' and the corpus's (`corpus/tensor_cores.cu`:
//! `mma_m8n8k4`). An f32 D from an f16 C takes the f32 accumulator's layout, not C's, as
//! the H200 places it (the corpus).

mod common;
use common::*;
use cumock_ptx::{run, Engine, Module};

const SRC: &str = r#"
#define K extern "C" __global__ void
#define LOAD(N, X, P) unsigned X[N]; for (int i = 0; i < N; i++) X[i] = P[i * 32 + l];
// C f32 (eight registers), D f32.
#define F32(NAME, LAYOUT)                                                                  \
  K NAME(const unsigned* A, const unsigned* B, const unsigned* C, unsigned* D) {           \
    unsigned l = threadIdx.x; LOAD(2, a, A) LOAD(2, b, B) LOAD(8, c, C) unsigned d[8];     \
    asm volatile("mma.sync.aligned.m8n8k4." LAYOUT ".f32.f16.f16.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, {%12,%13,%14,%15,%16,%17,%18,%19};" \
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]), "=r"(d[4]), "=r"(d[5]), "=r"(d[6]), "=r"(d[7]) \
        : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), \
          "r"(c[4]), "r"(c[5]), "r"(c[6]), "r"(c[7]));                                    \
    for (int i = 0; i < 8; i++) D[i * 32 + l] = d[i];                                      \
  }
// C f16 (four registers), D f16.
#define F16(NAME, LAYOUT)                                                                  \
  K NAME(const unsigned* A, const unsigned* B, const unsigned* C, unsigned* D) {           \
    unsigned l = threadIdx.x; LOAD(2, a, A) LOAD(2, b, B) LOAD(4, c, C) unsigned d[4];     \
    asm volatile("mma.sync.aligned.m8n8k4." LAYOUT ".f16.f16.f16.f16 {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, {%8,%9,%10,%11};" \
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])                                   \
        : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3])); \
    for (int i = 0; i < 4; i++) D[i * 32 + l] = d[i];                                      \
  }
// C f16, D f32.
#define MIXED(NAME, LAYOUT)                                                                \
  K NAME(const unsigned* A, const unsigned* B, const unsigned* C, unsigned* D) {           \
    unsigned l = threadIdx.x; LOAD(2, a, A) LOAD(2, b, B) LOAD(4, c, C) unsigned d[8];     \
    asm volatile("mma.sync.aligned.m8n8k4." LAYOUT ".f32.f16.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, {%12,%13,%14,%15};" \
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]), "=r"(d[4]), "=r"(d[5]), "=r"(d[6]), "=r"(d[7]) \
        : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3])); \
    for (int i = 0; i < 8; i++) D[i * 32 + l] = d[i];                                      \
  }
F32(f32_row_col, "row.col")
F32(f32_col_row, "col.row")
F16(f16_row_row, "row.row")
F16(f16_col_col, "col.col")
MIXED(mixed_row_col, "row.col")
MIXED(mixed_col_col, "col.col")
"#;

fn f16_bits(x: i64) -> u32 {
    let b = (x as f32).to_bits();
    if x == 0 {
        return 0;
    }
    let e = ((b >> 23) & 0xff) as i32 - 127 + 15;
    ((b >> 16) & 0x8000) | (e as u32) << 10 | ((b >> 13) & 0x3ff)
}

/// (product, row, column) of element `i` of `lane`'s fragment, the ISA's formulas.
fn a_at(col: bool, lane: u32, i: u32) -> (u32, u32, u32) {
    let (q, hi) = ((lane >> 2) & 3, if lane < 16 { 0 } else { 4 });
    if col {
        (q, i % 4 + hi, lane % 4)
    } else {
        (q, lane % 4 + hi, i)
    }
}

fn b_at(col: bool, lane: u32, i: u32) -> (u32, u32, u32) {
    let (q, hi) = ((lane >> 2) & 3, if lane < 16 { 0 } else { 4 });
    if col {
        (q, i, lane % 4 + hi)
    } else {
        (q, lane % 4, i + hi)
    }
}

fn acc_at(f32: bool, lane: u32, i: u32) -> (u32, u32, u32) {
    let (q, hi) = ((lane >> 2) & 3, if lane < 16 { 0 } else { 4 });
    if f32 {
        let x = (lane & 1) + (i & 2);
        (q, x + hi, (i & 4) + (lane & 2) + (i & 1))
    } else {
        (q, lane % 4 + hi, i)
    }
}

/// Registers of `n` elements of `bits` each a lane, element i of lane l from `v(l, i)`.
fn regs(n: u32, bits: u32, v: impl Fn(u32, u32) -> u32) -> Vec<u32> {
    let per = 32 / bits;
    let mut out = vec![0u32; (n / per * 32) as usize];
    for l in 0..32 {
        for i in 0..n {
            out[(i / per * 32 + l) as usize] |= v(l, i) << (bits * (i % per));
        }
    }
    out
}

#[test]
fn m8n8k4_f16_matches_four_host_gemms_in_every_layout_and_engine() {
    let m = Module::parse(&ptx(SRC)).unwrap();
    let mut rng = fastrand::Rng::with_seed(884);
    // (kernel, A .col, B .col, C f32, D f32)
    for (kernel, a_col, b_col, c32, d32) in [
        ("f32_row_col", false, true, true, true),
        ("f32_col_row", true, false, true, true),
        ("f16_row_row", false, false, false, false),
        ("f16_col_col", true, true, false, false),
        ("mixed_row_col", false, true, false, true),
        ("mixed_col_col", true, true, false, true),
    ] {
        // Four products: A[q] 8x4, B[q] 4x8, C[q] 8x8.
        let a: Vec<i64> = (0..4 * 32).map(|_| rng.i64(-6..=6)).collect();
        let b: Vec<i64> = (0..4 * 32).map(|_| rng.i64(-6..=6)).collect();
        let c: Vec<i64> = (0..4 * 64).map(|_| rng.i64(-100..=100)).collect();
        let ar = regs(4, 16, |l, i| {
            let (q, r, k) = a_at(a_col, l, i);
            f16_bits(a[(q * 32 + r * 4 + k) as usize])
        });
        let br = regs(4, 16, |l, i| {
            let (q, k, col) = b_at(b_col, l, i);
            f16_bits(b[(q * 32 + k * 8 + col) as usize])
        });
        let acc = |f32: bool, x: i64| {
            if f32 {
                (x as f32).to_bits()
            } else {
                f16_bits(x)
            }
        };
        let cr = regs(8, if c32 { 32 } else { 16 }, |l, i| {
            let (q, r, col) = acc_at(c32, l, i);
            acc(c32, c[(q * 64 + r * 8 + col) as usize])
        });
        let want: Vec<i64> = (0..256)
            .map(|at| {
                let (q, r, col) = (at / 64, at % 64 / 8, at % 8);
                c[at]
                    + (0..4)
                        .map(|k| a[q * 32 + r * 4 + k] * b[q * 32 + k * 8 + col])
                        .sum::<i64>()
            })
            .collect();
        // D's layout follows D's type.
        let want = regs(8, if d32 { 32 } else { 16 }, |l, i| {
            let (q, r, col) = acc_at(d32, l, i);
            acc(d32, want[(q * 64 + r * 8 + col) as usize])
        });
        let k = m.kernel(kernel).unwrap();
        let mut got = Vec::new();
        for engine in [Engine::Interp, Engine::Jit] {
            let mut mem = TestMemory::new();
            let (da, db, dc) = (
                mem.map(&u32s(&ar), false),
                mem.map(&u32s(&br), false),
                mem.map(&u32s(&cr), false),
            );
            let dd = mem.map(&vec![0u8; want.len() * 4], true);
            let p = params(&m.kernels[k], &[da, db, dc, dd]);
            let mut l = launch(1, 32, &p);
            l.engine = engine;
            run(&m, k, &l, &mem).unwrap_or_else(|f| panic!("{kernel} ({engine:?}): {f}"));
            let d = to_u32s(&mem.read(dd));
            for (i, (x, y)) in d.iter().zip(&want).enumerate() {
                assert_eq!(
                    x,
                    y,
                    "{kernel} ({engine:?}): register {} lane {}",
                    i / 32,
                    i % 32
                );
            }
            got.push(d);
        }
        assert_eq!(got[0], got[1], "{kernel}: the engines differ");
    }
}

#[test]
fn m8n8k4_refuses_what_the_isa_lacks() {
    let load = |inst: &str| {
        let src = format!(
            ".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k() {{\n\
             .reg .b32 r<24>;\n{inst}\nret;\n}}\n"
        );
        Module::parse(&src).map(|_| ())
    };
    load("mma.sync.aligned.m8n8k4.col.row.f16.f16.f16.f16 {r0,r1,r2,r3}, {r4,r5}, {r6,r7}, {r8,r9,r10,r11};")
        .unwrap();
    for bad in [
        // D f16 from C f32.
        "mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f32 {r0,r1,r2,r3}, {r4,r5}, {r6,r7}, {r8,r9,r10,r11,r12,r13,r14,r15};",
        // No .satfinite for floats.
        "mma.sync.aligned.m8n8k4.row.col.satfinite.f16.f16.f16.f16 {r0,r1,r2,r3}, {r4,r5}, {r6,r7}, {r8,r9,r10,r11};",
        // Other layouts than row.col stay refused for the other shapes.
        "mma.sync.aligned.m16n8k16.col.col.f32.f16.f16.f32 {r0,r1,r2,r3}, {r4,r5,r6,r7}, {r8,r9}, {r10,r11,r12,r13};",
    ] {
        assert!(load(bad).is_err(), "{bad}");
    }
}
