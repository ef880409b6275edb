//! wmma's sub-byte shapes in the executor: m8n8k32 s4/u4 and m8n8k128 b1 (`.xor.popc`,
//! `.and.popc`), GEMMs by nvcuda::wmma's experimental fragments (load, mma, store) checked
//! against host GEMMs on both engines; which register holds which element is the
//! corpus's (`corpus/tensor_cores.cu`: `wmma_subbyte`).

mod common;
use common::*;
use cumock_ptx::{run, Engine, Module};

const SRC: &str = r#"
#include <mma.h>
using namespace nvcuda::wmma;
#define K extern "C" __global__ void

// D (16x16) = A (16xKK, row-major, packed) · B (KKx16, column-major, packed) + C, one warp
// per 8x8 tile; D stored row-major, or column-major at the transposed tile (D^T).
template <typename P, int KK, int STEP>
__device__ void gemm(const unsigned char* A, const unsigned char* B, const int* C, int* D, bool trans, int op) {
  int warp = threadIdx.x / 32, tm = warp / 2, tn = warp % 2;
  const int bits = STEP == 32 ? 4 : 1;
  fragment<matrix_a, 8, 8, STEP, P, row_major> fa;
  fragment<matrix_b, 8, 8, STEP, P, col_major> fb;
  fragment<accumulator, 8, 8, STEP, int> fc;
  load_matrix_sync(fc, C + tm * 8 * 16 + tn * 8, 16, mem_row_major);
  for (int kk = 0; kk < KK; kk += STEP) {
    load_matrix_sync(fa, A + (tm * 8 * KK + kk) * bits / 8, KK);
    load_matrix_sync(fb, B + (tn * 8 * KK + kk) * bits / 8, KK);
    if constexpr (STEP == 32) {
      mma_sync(fc, fa, fb, fc);
    } else if (op) {
      bmma_sync(fc, fa, fb, fc, experimental::bmmaBitOpAND, experimental::bmmaAccumulateOpPOPC);
    } else {
      bmma_sync(fc, fa, fb, fc, experimental::bmmaBitOpXOR, experimental::bmmaAccumulateOpPOPC);
    }
  }
  if (trans) store_matrix_sync(D + tn * 8 * 16 + tm * 8, fc, 16, mem_col_major);
  else store_matrix_sync(D + tm * 8 * 16 + tn * 8, fc, 16, mem_row_major);
}
K wmma_s4(const unsigned char* A, const unsigned char* B, const int* C, int* D) { gemm<experimental::precision::s4, 64, 32>(A, B, C, D, false, 0); }
K wmma_u4(const unsigned char* A, const unsigned char* B, const int* C, int* D) { gemm<experimental::precision::u4, 64, 32>(A, B, C, D, true, 0); }
K wmma_b1_xor(const unsigned char* A, const unsigned char* B, const int* C, int* D) { gemm<experimental::precision::b1, 256, 128>(A, B, C, D, false, 0); }
K wmma_b1_and(const unsigned char* A, const unsigned char* B, const int* C, int* D) { gemm<experimental::precision::b1, 256, 128>(A, B, C, D, true, 1); }
"#;

/// Packs elements of `bits` each, element i from bit `i * bits` (low bits first).
fn pack(v: &[i64], bits: usize) -> Vec<u8> {
    let mut out = vec![0u8; v.len() * bits / 8];
    for (i, &x) in v.iter().enumerate() {
        let at = i * bits;
        out[at / 8] |= ((x as u8) & ((1u16 << bits) - 1) as u8) << (at % 8);
    }
    out
}

fn run_gemm(m: &Module, kernel: &str, a: &[u8], b: &[u8], c: &[i32], engine: Engine) -> Vec<i32> {
    let k = m.kernel(kernel).unwrap();
    let mut mem = TestMemory::new();
    let c_bytes: Vec<u8> = c.iter().flat_map(|x| x.to_le_bytes()).collect();
    let (da, db, dc) = (
        mem.map(a, false),
        mem.map(b, false),
        mem.map(&c_bytes, false),
    );
    let dd = mem.map(&vec![0u8; c_bytes.len()], true);
    let p = params(&m.kernels[k], &[da, db, dc, dd]);
    let mut l = launch(1, 128, &p);
    l.engine = engine;
    run(m, k, &l, &mem).unwrap_or_else(|f| panic!("{kernel} ({engine:?}): {f}"));
    to_u32s(&mem.read(dd))
        .into_iter()
        .map(|x| x as i32)
        .collect()
}

#[test]
fn subbyte_wmma_gemms_match_host_gemms_on_both_engines() {
    let m = Module::parse(&ptx(SRC)).unwrap();
    let mut rng = fastrand::Rng::with_seed(21);
    let c: Vec<i32> = (0..256).map(|_| rng.i32(-100_000..100_000)).collect();
    // (kernel, K, bits, signed, op, D stored transposed)
    for (kernel, kk, bits, signed, op, trans) in [
        ("wmma_s4", 64, 4, true, "mul", false),
        ("wmma_u4", 64, 4, false, "mul", true),
        ("wmma_b1_xor", 256, 1, false, "xor", false),
        ("wmma_b1_and", 256, 1, false, "and", true),
    ] {
        let val = |rng: &mut fastrand::Rng| match (bits, signed) {
            (4, true) => rng.i64(-8..8),
            (4, false) => rng.i64(0..16),
            _ => rng.i64(0..2),
        };
        // A row-major 16 x K; B column-major: column j's K elements at j * K.
        let a: Vec<i64> = (0..16 * kk).map(|_| val(&mut rng)).collect();
        let bt: Vec<i64> = (0..16 * kk).map(|_| val(&mut rng)).collect();
        let want: Vec<i64> = (0..256)
            .map(|at| {
                let (i, j) = (at / 16, at % 16);
                let sum: i64 = (0..kk)
                    .map(|x| {
                        let (p, q) = (a[i * kk + x], bt[j * kk + x]);
                        match op {
                            "mul" => p * q,
                            "xor" => p ^ q,
                            _ => p & q,
                        }
                    })
                    .sum();
                c[at] as i64 + sum
            })
            .collect();
        let mut got = Vec::new();
        for engine in [Engine::Interp, Engine::Jit] {
            let d = run_gemm(&m, kernel, &pack(&a, bits), &pack(&bt, bits), &c, engine);
            for at in 0..256 {
                let (i, j) = (at / 16, at % 16);
                let x = if trans { d[j * 16 + i] } else { d[at] };
                assert_eq!(x as i64, want[at], "{kernel} ({engine:?}) D[{i}][{j}]");
            }
            got.push(d);
        }
        assert_eq!(got[0], got[1], "{kernel}: the engines differ");
    }
}

#[test]
fn subbyte_wmma_takes_row_col_and_one_type_only() {
    let load = |inst: &str| {
        let src = format!(
            ".version 8.7\n.target sm_90\n.address_size 64\n.visible .entry k() {{\n\
             .reg .b32 r<8>;\n.reg .b64 p;\n{inst}\nret;\n}}\n"
        );
        Module::parse(&src).map(|_| ())
    };
    load("wmma.load.a.sync.aligned.row.m8n8k32.global.s4 {r0}, [p], 32;").unwrap();
    load("wmma.mma.xor.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {r0,r1}, {r2}, {r3}, {r4,r5};")
        .unwrap();
    for bad in [
        "wmma.load.a.sync.aligned.col.m8n8k32.global.s4 {r0}, [p], 32;",
        "wmma.load.b.sync.aligned.row.m8n8k128.global.b1 {r0}, [p], 128;",
        "wmma.mma.sync.aligned.row.row.m8n8k32.s32.s4.s4.s32 {r0,r1}, {r2}, {r3}, {r4,r5};",
        "wmma.mma.sync.aligned.row.col.m8n8k32.s32.s4.u4.s32 {r0,r1}, {r2}, {r3}, {r4,r5};",
        "wmma.mma.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {r0,r1}, {r2}, {r3}, {r4,r5};",
    ] {
        assert!(load(bad).is_err(), "{bad}");
    }
}
