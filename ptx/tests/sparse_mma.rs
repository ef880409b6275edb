//! Sparse `mma.sp` / `mma.sp::ordered_metadata` in the executor, checked against host
//! GEMMs of the dense matrices: the host draws a 2:4 (tf32: 1:2; 4-bit: pairs, 4:8) A,
//! packs it and writes its metadata by the PTX ISA's "Sparse matrix storage" and
//! metadata figures, lays every operand out in the lanes' registers by the ISA's
//! fragment formulas, and a kernel per register count runs the instruction. Inputs are
//! small integers, whose sums are exact: these tests check the placement and the
//! operands; how the H200 rounds (and where its metadata lies, should it differ from
//! the figures as read here) is the corpus's (`corpus/tensor_cores.cu`: `mma_sparse`).

mod common;
use common::*;
use cumock_ptx::{run, Engine, Module};

const SRC: &str = r#"
#define K extern "C" __global__ void
#define LOAD(N, X, P) unsigned X[N]; for (int i = 0; i < N; i++) X[i] = P[i * 32 + l];
// D = A·B + C with A, B, C given as each lane's registers (register i of lane l at
// [i * 32 + l]) and each lane's metadata word in E.
#define SP_2_2_4(NAME, INST, SEL)                                                       \
  K NAME##_2_2_4(const unsigned* A, const unsigned* B, const unsigned* C, const unsigned* E, unsigned* D) { \
    unsigned l = threadIdx.x; LOAD(2, a, A) LOAD(2, b, B) LOAD(4, c, C) unsigned d[4];    \
    asm volatile(INST " {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, {%8,%9,%10,%11}, %12, " #SEL ";" \
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])                                  \
        : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(E[l])); \
    for (int i = 0; i < 4; i++) D[i * 32 + l] = d[i];                                     \
  }
#define SP_4_4_4(NAME, INST, SEL)                                                       \
  K NAME##_4_4_4(const unsigned* A, const unsigned* B, const unsigned* C, const unsigned* E, unsigned* D) { \
    unsigned l = threadIdx.x; LOAD(4, a, A) LOAD(4, b, B) LOAD(4, c, C) unsigned d[4];    \
    asm volatile(INST " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9,%10,%11}, {%12,%13,%14,%15}, %16, " #SEL ";" \
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])                                  \
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), \
          "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(E[l]));                        \
    for (int i = 0; i < 4; i++) D[i * 32 + l] = d[i];                                     \
  }
#define SP_2_2_2(NAME, INST, SEL)                                                       \
  K NAME##_2_2_2(const unsigned* A, const unsigned* B, const unsigned* C, const unsigned* E, unsigned* D) { \
    unsigned l = threadIdx.x; LOAD(2, a, A) LOAD(2, b, B) LOAD(2, c, C) unsigned d[2];    \
    asm volatile(INST " {%0,%1}, {%2,%3}, {%4,%5}, {%6,%7}, %8, " #SEL ";"                \
        : "=r"(d[0]), "=r"(d[1])                                                          \
        : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(E[l]));  \
    for (int i = 0; i < 2; i++) D[i * 32 + l] = d[i];                                     \
  }

SP_2_2_4(f16_k16_s3, "mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 3)
SP_2_2_2(f16_k16_s1, "mma.sp.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", 1)
SP_4_4_4(f16_k32_s1, "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32", 1)
SP_4_4_4(bf16_k32_s0, "mma.sp.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32", 0)
SP_2_2_4(tf32_k8_s2, "mma.sp::ordered_metadata.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 2)
SP_4_4_4(tf32_k16_s1, "mma.sp.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32", 1)
SP_2_2_4(s8_k32_s1, "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32", 1)
SP_4_4_4(u8_k64_s0, "mma.sp.sync.aligned.m16n8k64.row.col.satfinite.s32.u8.s8.s32", 0)
SP_2_2_4(s4_k64_s0, "mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.s32.s4.u4.s32", 0)
SP_4_4_4(u4_k128_s0, "mma.sp.sync.aligned.m16n8k128.row.col.s32.u4.s4.s32", 0)
SP_4_4_4(e4m3_k64_s0, "mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f32.e4m3.e4m3.f32", 0)
SP_4_4_4(e5m2_k64_s0, "mma.sp.sync.aligned.m16n8k64.row.col.f32.e5m2.e4m3.f32", 0)
"#;

#[derive(Clone, Copy, PartialEq, Debug)]
enum T {
    F16,
    BF16,
    TF32,
    S8,
    U8,
    S4,
    U4,
    E4M3,
    E5M2,
}

impl T {
    fn bits(self) -> u32 {
        match self {
            T::F16 | T::BF16 => 16,
            T::TF32 => 32,
            T::S8 | T::U8 | T::E4M3 | T::E5M2 => 8,
            T::S4 | T::U4 => 4,
        }
    }

    fn is_float(self) -> bool {
        matches!(self, T::F16 | T::BF16 | T::TF32 | T::E4M3 | T::E5M2)
    }

    /// A value of the type: small integers (floats), anything (integers).
    fn value(self, rng: &mut fastrand::Rng) -> i64 {
        match self {
            T::F16 | T::BF16 | T::TF32 | T::E4M3 | T::E5M2 => rng.i64(-4..=4),
            T::S8 => rng.i64(-128..=127),
            T::U8 => rng.i64(0..=255),
            T::S4 => rng.i64(-8..=7),
            T::U4 => rng.i64(0..=15),
        }
    }

    /// Raw bits of an exact value.
    fn raw(self, x: i64) -> u32 {
        let f = (x as f32).to_bits();
        match self {
            T::F16 => f16_bits(x as f32) as u32,
            T::BF16 => f >> 16,
            T::TF32 => f,
            T::S8 | T::U8 => x as u8 as u32,
            T::S4 | T::U4 => x as u32 & 0xf,
            // FP8 of -4..=4: 1.m × 2^e, e4m3's exponent bias 7 (3 mantissa bits), e5m2's
            // 15 (2 bits).
            T::E4M3 | T::E5M2 => {
                if x == 0 {
                    return 0;
                }
                let (mbits, bias) = if self == T::E4M3 { (3, 7) } else { (2, 15) };
                let m = x.unsigned_abs() as u32;
                let e = 31 - m.leading_zeros();
                let frac = (m - (1 << e)) << mbits >> e;
                (u32::from(x < 0) << 7) | (e + bias) << mbits | frac
            }
        }
    }
}

fn f16_bits(x: f32) -> u16 {
    let b = x.to_bits();
    if x == 0.0 {
        return 0;
    }
    let e = ((b >> 23) & 0xff) as i32 - 127 + 15;
    ((b >> 16) & 0x8000) as u16 | (e as u16) << 10 | ((b >> 13) & 0x3ff) as u16
}

fn f16_value(h: u32) -> f64 {
    let (s, e, m) = ((h >> 15) & 1, (h >> 10) & 0x1f, h & 0x3ff);
    assert!(e != 0 && e != 31 || h & 0x7fff == 0, "{h:#x}");
    let v = if h & 0x7fff == 0 {
        0.0
    } else {
        (1.0 + m as f64 / 1024.0) * 2f64.powi(e as i32 - 15)
    };
    if s == 1 {
        -v
    } else {
        v
    }
}

struct Case {
    kernel: &'static str,
    a: T,
    b: T,
    k: u32,
    sel: u32,
    /// f16 accumulators (two registers), else f32 or s32.
    c_f16: bool,
    satfinite: bool,
}

/// (row, column) of element `i` of `lane`'s A fragment of a dense m16n8kK (`k` columns),
/// the PTX ISA's formulas.
fn a_coord(t: T, k: u32, lane: u32, i: u32) -> (u32, u32) {
    let (g, q) = (lane / 4, lane % 4);
    if t == T::TF32 {
        return (g + 8 * (i & 1), q + 4 * (i >> 1));
    }
    let v = 32 / t.bits();
    if k == 4 * v {
        (g + 8 * (i / v), v * q + i % v)
    } else {
        (g + 8 * ((i / v) & 1), v * q + i % v + 4 * v * (i / (2 * v)))
    }
}

fn b_coord(t: T, k: u32, lane: u32, i: u32) -> (u32, u32) {
    let (g, q) = (lane / 4, lane % 4);
    if t == T::TF32 {
        return (q + 4 * i, g);
    }
    let v = 32 / t.bits();
    if k == 4 * v {
        (v * q + i, g)
    } else {
        (v * q + i % v + 4 * v * (i / v), g)
    }
}

fn c_coord(lane: u32, i: u32) -> (u32, u32) {
    (lane / 4 + 8 * (i >> 1), 2 * (lane % 4) + (i & 1))
}

/// Registers (`regs` of them, 32 lanes each) holding a matrix's elements as `coord`
/// places them, `bits` wide.
fn pack(
    regs: usize,
    bits: u32,
    coord: impl Fn(u32, u32) -> (u32, u32),
    elem: impl Fn(u32, u32) -> u32,
) -> Vec<u32> {
    let per = 32 / bits;
    let mut out = vec![0u32; regs * 32];
    for lane in 0..32 {
        for i in 0..regs as u32 * per {
            let (r, c) = coord(lane, i);
            let mask = if bits == 32 { !0 } else { (1 << bits) - 1 };
            out[(i / per * 32 + lane) as usize] |= (elem(r, c) & mask) << ((i % per) * bits);
        }
    }
    out
}

/// Runs one case on `engine`: D's registers, and the host's D in the same registers.
fn run_case(m: &Module, c: &Case, engine: Engine, seed: u64) -> (Vec<u32>, Vec<u32>) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let (ab, kk) = (c.a.bits(), c.k);
    // A chunk: four 16-bit units (f16/bf16/tf32) or four bytes (8- and 4-bit), of which
    // the metadata's two indices keep two.
    let unit = if ab >= 16 { 16 } else { 8 };
    let chunk_elems = 4 * unit / ab;
    let chunks = kk / chunk_elems;
    let mut dense = vec![0i64; (16 * kk) as usize];
    let mut packed = vec![0i64; (16 * kk / 2) as usize];
    let mut nibbles = vec![0u32; (16 * chunks) as usize];
    for r in 0..16 {
        for ch in 0..chunks {
            // Two distinct unit indices, in increasing order (`::ordered_metadata`).
            let (i0, i1) = if ab == 32 {
                // tf32: one element of two, its two units.
                if rng.bool() {
                    (0, 1)
                } else {
                    (2, 3)
                }
            } else {
                let x = rng.u32(0..4);
                let y = (x + rng.u32(1..4)) % 4;
                (x.min(y), x.max(y))
            };
            nibbles[(r * chunks + ch) as usize] = i0 | i1 << 2;
            // The stored elements, in order, and where they go in the dense row.
            let places: Vec<u32> = match ab {
                32 => vec![i0 / 2],
                4 => vec![2 * i0, 2 * i0 + 1, 2 * i1, 2 * i1 + 1],
                _ => vec![i0, i1],
            };
            for (w, p) in places.iter().enumerate() {
                let v = c.a.value(&mut rng);
                let j = ch * places.len() as u32 + w as u32;
                packed[(r * kk / 2 + j) as usize] = v;
                dense[(r * kk + ch * chunk_elems + p) as usize] = v;
            }
        }
    }
    let b: Vec<i64> = (0..kk * 8).map(|_| c.b.value(&mut rng)).collect();
    let cm: Vec<i64> = (0..128)
        .map(|_| {
            if c.a.is_float() {
                rng.i64(-64..=64)
            } else {
                rng.i64(i32::MIN as i64..=i32::MAX as i64)
            }
        })
        .collect();
    // Metadata words: the figures' placement (see `mma::sparse_k`).
    let mut e = vec![0u32; 32];
    for r in 0..16 {
        for ch in 0..chunks {
            let (lane, bit) = if unit == 16 {
                (
                    4 * (r % 8) + (chunks / 4) * c.sel + ch / 4,
                    16 * (r / 8) + 4 * (ch % 4),
                )
            } else if chunks == 16 {
                (4 * (r % 8) + r / 8 + 2 * (ch / 8), 4 * (ch % 8))
            } else {
                (4 * (r % 8) + 2 * c.sel + r / 8, 4 * ch)
            };
            e[lane as usize] |= nibbles[(r * chunks + ch) as usize] << bit;
        }
    }
    // The other lanes' metadata is not read: garbage there must not matter.
    for (l, w) in e.iter_mut().enumerate() {
        let used = if unit == 16 {
            l as u32 % 4 / (chunks / 4) == c.sel
        } else {
            chunks == 16 || l as u32 % 4 / 2 == c.sel
        };
        if !used {
            *w = rng.u32(..);
        }
    }
    let a_regs = (16 * kk / 2 * ab / 1024) as usize;
    let ar = pack(
        a_regs,
        ab,
        |l, i| a_coord(c.a, kk / 2, l, i),
        |r, col| c.a.raw(packed[(r * kk / 2 + col) as usize]),
    );
    let b_regs = (kk * 8 * c.b.bits() / 32 / 32) as usize;
    let br = pack(
        b_regs,
        c.b.bits(),
        |l, i| b_coord(c.b, kk, l, i),
        |r, col| c.b.raw(b[(r * 8 + col) as usize]),
    );
    let acc = |x: i64| -> u32 {
        if c.c_f16 {
            f16_bits(x as f32) as u32
        } else if c.a.is_float() {
            (x as f32).to_bits()
        } else {
            x as i32 as u32
        }
    };
    let (c_regs, c_bits) = if c.c_f16 { (2, 16) } else { (4, 32) };
    let cr = pack(c_regs, c_bits, c_coord, |r, col| {
        acc(cm[(r * 8 + col) as usize])
    });
    // The host's D, from the dense A.
    let want: Vec<i64> = (0..128)
        .map(|at| {
            let (r, col) = (at / 8, at % 8);
            let sum: i64 = (0..kk as usize)
                .map(|x| dense[r * kk as usize + x] * b[x * 8 + col])
                .sum::<i64>()
                + cm[at];
            if c.a.is_float() {
                sum
            } else if c.satfinite {
                sum.clamp(i32::MIN as i64, i32::MAX as i64)
            } else {
                sum as i32 as i64
            }
        })
        .collect();
    let want = pack(c_regs, c_bits, c_coord, |r, col| {
        acc(want[(r * 8 + col) as usize])
    });
    let name = format!("{}_{}_{}_{}", c.kernel, a_regs, b_regs, c_regs);
    let k = m
        .kernel(&name)
        .unwrap_or_else(|| panic!("no kernel {name}"));
    let mut mem = TestMemory::new();
    let bytes = |v: &[u32]| u32s(v);
    let (da, db, dc, de) = (
        mem.map(&bytes(&ar), false),
        mem.map(&bytes(&br), false),
        mem.map(&bytes(&cr), false),
        mem.map(&bytes(&e), false),
    );
    let dd = mem.map(&vec![0u8; cr.len() * 4], true);
    let p = params(&m.kernels[k], &[da, db, dc, de, dd]);
    let mut l = launch(1, 32, &p);
    l.engine = engine;
    run(m, k, &l, &mem).unwrap_or_else(|f| panic!("{name} ({engine:?}): {f}"));
    (to_u32s(&mem.read(dd)), want)
}

fn cases() -> Vec<Case> {
    let case = |kernel, a, b, k, sel, c_f16, satfinite| Case {
        kernel,
        a,
        b,
        k,
        sel,
        c_f16,
        satfinite,
    };
    vec![
        case("f16_k16_s3", T::F16, T::F16, 16, 3, false, false),
        case("f16_k16_s1", T::F16, T::F16, 16, 1, true, false),
        case("f16_k32_s1", T::F16, T::F16, 32, 1, false, false),
        case("bf16_k32_s0", T::BF16, T::BF16, 32, 0, false, false),
        case("tf32_k8_s2", T::TF32, T::TF32, 8, 2, false, false),
        case("tf32_k16_s1", T::TF32, T::TF32, 16, 1, false, false),
        case("s8_k32_s1", T::S8, T::U8, 32, 1, false, false),
        case("u8_k64_s0", T::U8, T::S8, 64, 0, false, true),
        case("s4_k64_s0", T::S4, T::U4, 64, 0, false, false),
        case("u4_k128_s0", T::U4, T::S4, 128, 0, false, false),
        case("e4m3_k64_s0", T::E4M3, T::E4M3, 64, 0, false, false),
        case("e5m2_k64_s0", T::E5M2, T::E4M3, 64, 0, false, false),
    ]
}

#[test]
fn sparse_mma_matches_host_gemms_of_the_dense_a_in_every_type_and_engine() {
    let m = Module::parse(&ptx(SRC)).unwrap();
    for c in cases() {
        for seed in 0..3 {
            let mut got = Vec::new();
            for engine in [Engine::Interp, Engine::Jit] {
                let (d, want) = run_case(&m, &c, engine, seed);
                for (i, (x, y)) in d.iter().zip(&want).enumerate() {
                    let show = |v: u32| {
                        if c.c_f16 {
                            format!("{} {}", f16_value(v & 0xffff), f16_value(v >> 16))
                        } else if c.a.is_float() {
                            format!("{}", f32::from_bits(v))
                        } else {
                            format!("{}", v as i32)
                        }
                    };
                    assert_eq!(
                        x,
                        y,
                        "{} seed {seed} ({engine:?}): register {} lane {}: {} but the host says {}",
                        c.kernel,
                        i / 32,
                        i % 32,
                        show(*x),
                        show(*y)
                    );
                }
                got.push(d);
            }
            assert_eq!(got[0], got[1], "{}: the engines differ", c.kernel);
        }
    }
}

#[test]
fn sparse_mma_refuses_what_sm_90_lacks() {
    let load = |inst: &str| {
        let src = format!(
            ".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k() {{\n\
             .reg .b32 r<20>;\n{inst}\nret;\n}}\n"
        );
        Module::parse(&src).map(|_| ()).map_err(|e| e.to_string())
    };
    let ok = "mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {r0,r1,r2,r3}, {r4,r5}, {r6,r7}, {r8,r9,r10,r11}, r12, 3;";
    load(ok).unwrap();
    for (inst, why) in [
        // The selector past the shape's range (k32: a thread pair).
        ("mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {r0,r1,r2,r3}, {r4,r5,r13,r14}, {r6,r7,r15,r16}, {r8,r9,r10,r11}, r12, 2;", "0..=1"),
        // k64 8-bit: every thread's metadata, selector 0.
        ("mma.sp.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32 {r0,r1,r2,r3}, {r4,r5,r13,r14}, {r6,r7,r15,r16}, {r8,r9,r10,r11}, r12, 1;", "0..=0"),
        // A selector in a register.
        ("mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {r0,r1,r2,r3}, {r4,r5}, {r6,r7}, {r8,r9,r10,r11}, r12, r13;", "selector"),
        // FP8: m16n8k64 with f32 accumulators only, as ptxas 13 for sm_90.
        ("mma.sp.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {r0,r1,r2,r3}, {r4,r5}, {r6,r7}, {r8,r9,r10,r11}, r12, 0;", "sm_90"),
        ("mma.sp.sync.aligned.m16n8k64.row.col.f16.e4m3.e4m3.f16 {r0,r1}, {r4,r5,r13,r14}, {r6,r7,r15,r16}, {r8,r9}, r12, 0;", "sm_90"),
        // No sparse b1, nor a k16 8-bit shape.
        ("mma.sp.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {r0,r1,r2,r3}, {r4}, {r6}, {r8,r9,r10,r11}, r12, 0;", "no such sparse"),
    ] {
        let e = load(inst).expect_err(inst);
        assert!(e.contains(why), "{inst}: {e}");
    }
}
