//! Tensor-core instructions in the executor, checked against host GEMMs: fragments built
//! in CUDA from the PTX ISA's layout formulas (or by ldmatrix, or by wmma's loads), the
//! product by `mma`/`wmma`, and D compared with the host's. Inputs are small integers and
//! halves, whose sums are exact under any order of addition: these tests check layouts
//! and operand plumbing; how the hardware rounds is the corpus's (`tensor_cores.cu`).

mod common;
use common::*;
use cumock_ptx::{run, Module};

const SRC: &str = r#"
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
using namespace nvcuda;
#define K extern "C" __global__ void

// A 16x16 f16 (row-major) times B 16x8 (K x N, row-major) plus C 16x8 f32: A by ldmatrix.x4,
// B by ldmatrix.x2.trans, D stored by the PTX ISA's accumulator layout.
K ldmatrix_mma(const half* A, const half* B, const float* C, float* D) {
  __shared__ __align__(16) half sa[256], sb[128];
  unsigned l = threadIdx.x;
  for (int i = l; i < 256; i += 32) sa[i] = A[i];
  for (int i = l; i < 128; i += 32) sb[i] = B[i];
  __syncwarp();
  unsigned j = l / 8, r = l % 8;
  unsigned pa = (unsigned)__cvta_generic_to_shared(sa + ((j & 1) * 8 + r) * 16 + (j >> 1) * 8);
  unsigned pb = (unsigned)__cvta_generic_to_shared(sb + (l % 16) * 8);
  unsigned a[4], b[2];
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(pa));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(b[0]), "=r"(b[1]) : "r"(pb));
  unsigned g = l >> 2, t = l & 3;
  float c[4], d[4];
  for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
  for (int i = 0; i < 4; i++) D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
}

// s8 m16n8k32 (A 16x32, B 32x8, both row-major bytes), fragments by the PTX ISA's formulas.
K mma_s8(const signed char* A, const signed char* B, const int* C, int* D) {
  unsigned l = threadIdx.x, g = l >> 2, t = l & 3;
  unsigned a[4] = {0, 0, 0, 0}, b[2] = {0, 0};
  for (int i = 0; i < 16; i++) {
    unsigned row = g + 8 * ((i >> 2) & 1), col = 4 * t + (i & 3) + 16 * (i >> 3);
    a[i / 4] |= (unsigned)(unsigned char)A[row * 32 + col] << (8 * (i % 4));
  }
  for (int i = 0; i < 8; i++) {
    unsigned row = 4 * t + (i & 3) + 16 * (i >> 2);
    b[i / 4] |= (unsigned)(unsigned char)B[row * 8 + g] << (8 * (i % 4));
  }
  int c[4], d[4];
  for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
  asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  for (int i = 0; i < 4; i++) D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
}

// FP8 (sm_89): m16n8k32 e4m3 x e5m2 -> f32, and m16n8k16 e5m2 x e4m3 -> f16 (A 16xK, B
// Kx8 as row-major bytes, C and D as raw 32- or 16-bit words), fragments by the PTX ISA's
// formulas (s8's layouts).
K mma_fp8(const unsigned char* A, const unsigned char* B, const unsigned* C, unsigned* D) {
  unsigned l = threadIdx.x, g = l >> 2, t = l & 3;
  unsigned a[4] = {0, 0, 0, 0}, b[2] = {0, 0}, c[4], d[4];
  for (int i = 0; i < 16; i++)
    a[i / 4] |= (unsigned)A[(g + 8 * ((i >> 2) & 1)) * 32 + 4 * t + (i & 3) + 16 * (i >> 3)] << (8 * (i % 4));
  for (int i = 0; i < 8; i++) b[i / 4] |= (unsigned)B[(4 * t + (i & 3) + 16 * (i >> 2)) * 8 + g] << (8 * (i % 4));
  for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
  asm("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  for (int i = 0; i < 4; i++) D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
}
K mma_fp8_f16(const unsigned char* A, const unsigned char* B, const unsigned short* C, unsigned short* D) {
  unsigned l = threadIdx.x, g = l >> 2, t = l & 3;
  unsigned a[2] = {0, 0}, b = 0, c[2] = {0, 0}, d[2];
  for (int i = 0; i < 8; i++) a[i / 4] |= (unsigned)A[(g + 8 * (i >> 2)) * 16 + 4 * t + (i & 3)] << (8 * (i % 4));
  for (int i = 0; i < 4; i++) b |= (unsigned)B[(4 * t + i) * 8 + g] << (8 * i);
  for (int i = 0; i < 4; i++) c[i / 2] |= (unsigned)C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] << (16 * (i & 1));
  asm("mma.sync.aligned.m16n8k16.row.col.f16.e5m2.e4m3.f16 {%0,%1}, {%2,%3}, {%4}, {%5,%6};"
      : "=r"(d[0]), "=r"(d[1]) : "r"(a[0]), "r"(a[1]), "r"(b), "r"(c[0]), "r"(c[1]));
  for (int i = 0; i < 4; i++) D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i / 2] >> (16 * (i & 1));
}

// f64 m16n8k16 and tf32 m16n8k8, fragments by the PTX ISA's formulas.
K mma_f64(const double* A, const double* B, const double* C, double* D) {
  unsigned l = threadIdx.x, g = l >> 2, t = l & 3;
  double a[8], b[4], c[4], d[4];
  for (int i = 0; i < 8; i++) a[i] = A[(g + 8 * (i % 2)) * 16 + 4 * (i / 2) + t];
  for (int i = 0; i < 4; i++) b[i] = B[(t + 4 * i) * 8 + g];
  for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
  asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%16,%17,%18,%19};"
      : "=d"(d[0]), "=d"(d[1]), "=d"(d[2]), "=d"(d[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
        "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]), "d"(c[0]), "d"(c[1]), "d"(c[2]), "d"(c[3]));
  for (int i = 0; i < 4; i++) D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
}

K mma_tf32(const float* A, const float* B, const float* C, float* D) {
  unsigned l = threadIdx.x, g = l >> 2, t = l & 3;
  float a[4], b[2], c[4], d[4];
  for (int i = 0; i < 4; i++) a[i] = A[(g + 8 * (i & 1)) * 8 + t + 4 * (i >> 1)];
  for (int i = 0; i < 2; i++) b[i] = B[(t + 4 * i) * 8 + g];
  for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(__float_as_uint(a[0])), "r"(__float_as_uint(a[1])), "r"(__float_as_uint(a[2])), "r"(__float_as_uint(a[3])),
        "r"(__float_as_uint(b[0])), "r"(__float_as_uint(b[1])), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
  for (int i = 0; i < 4; i++) D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
}

// wmma GEMMs of 32x32x32 (f16/bf16 -> f32, tf32, s8) and 8x8x8 (f64), one warp per
// output tile, as NVIDIA's simpleTensorCoreGEMM: A row-major, B column-major.
template <typename T, typename Acc, int M, int N, int KK>
__device__ void gemm(const T* A, const T* B, const Acc* C, Acc* D, int m, int n, int k) {
  int warp = threadIdx.x / 32, tm = warp / (n / N), tn = warp % (n / N);
  wmma::fragment<wmma::matrix_a, M, N, KK, T, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, M, N, KK, T, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, M, N, KK, Acc> fc;
  wmma::load_matrix_sync(fc, C + tm * M * n + tn * N, n, wmma::mem_row_major);
  for (int kk = 0; kk < k; kk += KK) {
    wmma::load_matrix_sync(fa, A + tm * M * k + kk, k);
    wmma::load_matrix_sync(fb, B + tn * N * k + kk, k);
    wmma::mma_sync(fc, fa, fb, fc);
  }
  wmma::store_matrix_sync(D + tm * M * n + tn * N, fc, n, wmma::mem_row_major);
}
K wmma_f16(const half* A, const half* B, const float* C, float* D) { gemm<half, float, 16, 16, 16>(A, B, C, D, 32, 32, 32); }
K wmma_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, const float* C, float* D) { gemm<__nv_bfloat16, float, 16, 16, 16>(A, B, C, D, 32, 32, 32); }
K wmma_s8(const signed char* A, const signed char* B, const int* C, int* D) { gemm<signed char, int, 16, 16, 16>(A, B, C, D, 32, 32, 32); }
K wmma_f16_m32n8(const half* A, const half* B, const float* C, float* D) { gemm<half, float, 32, 8, 16>(A, B, C, D, 32, 32, 32); }
K wmma_bf16_m8n32(const __nv_bfloat16* A, const __nv_bfloat16* B, const float* C, float* D) { gemm<__nv_bfloat16, float, 8, 32, 16>(A, B, C, D, 32, 32, 32); }
K wmma_u8_m8n32(const unsigned char* A, const unsigned char* B, const int* C, int* D) { gemm<unsigned char, int, 8, 32, 16>(A, B, C, D, 32, 32, 32); }
K wmma_s8_m32n8(const signed char* A, const signed char* B, const int* C, int* D) { gemm<signed char, int, 32, 8, 16>(A, B, C, D, 32, 32, 32); }
K wmma_f64(const double* A, const double* B, const double* C, double* D) { gemm<double, double, 8, 8, 4>(A, B, C, D, 8, 8, 8); }
K wmma_tf32(const float* A, const float* B, const float* C, float* D) {
  int warp = threadIdx.x / 32, tm = warp / 2, tn = warp % 2;
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> fc;
  wmma::load_matrix_sync(fc, C + tm * 16 * 32 + tn * 16, 32, wmma::mem_row_major);
  for (int kk = 0; kk < 32; kk += 8) {
    wmma::load_matrix_sync(fa, A + tm * 16 * 32 + kk, 32);
    wmma::load_matrix_sync(fb, B + tn * 16 * 32 + kk, 32);
    for (int i = 0; i < fa.num_elements; i++) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
    for (int i = 0; i < fb.num_elements; i++) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
    wmma::mma_sync(fc, fa, fb, fc);
  }
  wmma::store_matrix_sync(D + tm * 16 * 32 + tn * 16, fc, 32, wmma::mem_row_major);
}

// cvt to tf32 in its three roundings.
K to_tf32(const unsigned* in, unsigned* out) {
  unsigned x = in[threadIdx.x];
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(out[3 * threadIdx.x]) : "r"(x));
  asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(out[3 * threadIdx.x + 1]) : "r"(x));
  asm("cvt.rz.tf32.f32 %0, %1;" : "=r"(out[3 * threadIdx.x + 2]) : "r"(x));
}

// movmatrix and stmatrix: the 8x8 matrix held by the warp transposed, stored both ways.
K move_store(const unsigned* in, unsigned short* out) {
  __shared__ __align__(16) unsigned short s[128];
  unsigned l = threadIdx.x, v = in[l], m;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(m) : "r"(v));
  unsigned p = (unsigned)__cvta_generic_to_shared(s + (l % 16) * 8);
  asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" :: "r"(p), "r"(v), "r"(m) : "memory");
  __syncwarp();
  for (int i = l; i < 128; i += 32) out[i] = s[i];
}
"#;

fn module() -> Module {
    Module::parse(&ptx(SRC)).unwrap()
}

fn f16_bits(x: f32) -> u16 {
    // Exact for the small values used here.
    let b = x.to_bits();
    if x == 0.0 {
        return (b >> 16) as u16 & 0x8000;
    }
    let e = ((b >> 23) & 0xff) as i32 - 127 + 15;
    assert!(
        (1..31).contains(&e) && b & 0x1fff == 0,
        "{x} is not an exact f16"
    );
    ((b >> 16) & 0x8000) as u16 | (e as u16) << 10 | ((b >> 13) & 0x3ff) as u16
}

fn bytes<T: Copy>(v: &[T]) -> Vec<u8> {
    let n = std::mem::size_of_val(v);
    // Safety: plain numbers (f32, f64, i32, u16, i8) have no padding or invalid bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, n) }.to_vec()
}

/// Runs `kernel(A, B, C, D)` with `warps` warps; D's bytes.
fn run4(m: &Module, kernel: &str, warps: u32, a: &[u8], b: &[u8], c: &[u8]) -> Vec<u8> {
    let k = m.kernel(kernel).unwrap();
    let mut mem = TestMemory::new();
    let (da, db, dc) = (mem.map(a, false), mem.map(b, false), mem.map(c, false));
    let dd = mem.map(&vec![0u8; c.len()], true);
    let p = params(&m.kernels[k], &[da, db, dc, dd]);
    run(m, k, &launch(1, 32 * warps, &p), &mem).unwrap_or_else(|f| panic!("{kernel}: {f}"));
    mem.read(dd)
}

/// D = A·B + C on the host, A m×k row-major, B given as `b(kk, j)`.
fn host_gemm(
    m: usize,
    n: usize,
    k: usize,
    a: &[f64],
    b: impl Fn(usize, usize) -> f64,
    c: &[f64],
) -> Vec<f64> {
    let mut d = c.to_vec();
    for i in 0..m {
        for j in 0..n {
            for kk in 0..k {
                d[i * n + j] += a[i * k + kk] * b(kk, j);
            }
        }
    }
    d
}

fn small(i: usize, modulo: usize, scale: f64) -> f64 {
    ((i * 7919 + 13) % modulo) as f64 * scale - (modulo / 2) as f64 * scale
}

#[test]
fn ldmatrix_fragments_feed_mma_m16n8k16_as_the_ptx_isa_lays_them_out() {
    let m = module();
    let a: Vec<f64> = (0..256).map(|i| small(i, 9, 0.5)).collect();
    let b: Vec<f64> = (0..128).map(|i| small(i + 300, 7, 0.25)).collect();
    let c: Vec<f64> = (0..128).map(|i| small(i + 77, 11, 1.0)).collect();
    let h = |v: &[f64]| bytes(&v.iter().map(|&x| f16_bits(x as f32)).collect::<Vec<_>>());
    let cf: Vec<f32> = c.iter().map(|&x| x as f32).collect();
    let d = to_f32s(&run4(&m, "ldmatrix_mma", 1, &h(&a), &h(&b), &bytes(&cf)));
    let want = host_gemm(16, 8, 16, &a, |kk, j| b[kk * 8 + j], &c);
    for (i, (x, y)) in d.iter().zip(&want).enumerate() {
        assert_eq!(*x as f64, *y, "D[{}][{}]", i / 8, i % 8);
    }
}

#[test]
fn integer_f64_and_tf32_mma_match_host_gemms() {
    let m = module();
    // s8 m16n8k32: full range bytes, accumulators of any size.
    let a: Vec<i8> = (0..512).map(|i| (i * 37 + 11) as u8 as i8).collect();
    let b: Vec<i8> = (0..256).map(|i| (i * 101 + 5) as u8 as i8).collect();
    let c: Vec<i32> = (0..128).map(|i: i32| (i - 64) * 1_000_003).collect();
    let d = to_u32s(&run4(&m, "mma_s8", 1, &bytes(&a), &bytes(&b), &bytes(&c)));
    for i in 0..16 {
        for j in 0..8 {
            let want = c[i * 8 + j]
                + (0..32)
                    .map(|k| a[i * 32 + k] as i32 * b[k * 8 + j] as i32)
                    .sum::<i32>();
            assert_eq!(d[i * 8 + j] as i32, want, "s8 D[{i}][{j}]");
        }
    }
    // f64 m16n8k16: values whose sums are exact.
    let a: Vec<f64> = (0..256).map(|i| small(i, 13, 0.125)).collect();
    let b: Vec<f64> = (0..128).map(|i| small(i + 9, 5, 2.0)).collect();
    let c: Vec<f64> = (0..128).map(|i| small(i + 1, 17, 1.0)).collect();
    let d = run4(&m, "mma_f64", 1, &bytes(&a), &bytes(&b), &bytes(&c));
    let d: Vec<f64> = d
        .chunks(8)
        .map(|x| f64::from_le_bytes(x.try_into().unwrap()))
        .collect();
    assert_eq!(
        d,
        host_gemm(16, 8, 16, &a, |kk, j| b[kk * 8 + j], &c),
        "f64"
    );
    // tf32 m16n8k8 (what the tensor cores do with bits below tf32's is the corpus's).
    let a: Vec<f64> = (0..128).map(|i| small(i, 9, 0.5)).collect();
    let b: Vec<f64> = (0..64).map(|i| small(i + 3, 7, 1.0)).collect();
    let c: Vec<f64> = (0..128).map(|i| small(i, 5, 4.0)).collect();
    let f = |v: &[f64]| bytes(&v.iter().map(|&x| x as f32).collect::<Vec<_>>());
    let d = to_f32s(&run4(&m, "mma_tf32", 1, &f(&a), &f(&b), &f(&c)));
    let want = host_gemm(16, 8, 8, &a, |kk, j| b[kk * 8 + j], &c);
    for (i, (x, y)) in d.iter().zip(&want).enumerate() {
        assert_eq!(*x as f64, *y, "tf32 D[{}][{}]", i / 8, i % 8);
    }
}

/// Small integers (and halves) as FP8 bytes: E4M3 (bias 7, 3 mantissa bits) or E5M2
/// (f16's upper byte).
fn fp8(x: f64, e4m3: bool) -> u8 {
    if x == 0.0 {
        return 0;
    }
    let f = (x as f32).to_bits();
    let (e, sign) = (((f >> 23) & 0xff) as i32 - 127, (f >> 24) as u8 & 0x80);
    if e4m3 {
        assert_eq!(f & 0xf_ffff, 0, "{x} is not an exact E4M3");
        sign | ((e + 7) as u8) << 3 | ((f >> 20) & 7) as u8
    } else {
        assert_eq!(f & 0x1f_ffff, 0, "{x} is not an exact E5M2");
        sign | ((e + 15) as u8) << 2 | ((f >> 21) & 3) as u8
    }
}

#[test]
fn fp8_mma_matches_host_gemms() {
    let m = module();
    // m16n8k32 e4m3 · e5m2 + f32: sums exact in f32.
    let a: Vec<f64> = (0..512).map(|i| small(i, 7, 0.5)).collect();
    let b: Vec<f64> = (0..256).map(|i| small(i + 3, 5, 2.0)).collect();
    let c: Vec<f64> = (0..128).map(|i| small(i, 11, 1.0)).collect();
    let ab: Vec<u8> = a.iter().map(|&x| fp8(x, true)).collect();
    let bb: Vec<u8> = b.iter().map(|&x| fp8(x, false)).collect();
    let cb: Vec<f32> = c.iter().map(|&x| x as f32).collect();
    let d = to_f32s(&run4(&m, "mma_fp8", 1, &ab, &bb, &bytes(&cb)));
    let want = host_gemm(16, 8, 32, &a, |kk, j| b[kk * 8 + j], &c);
    for (i, (x, y)) in d.iter().zip(&want).enumerate() {
        assert_eq!(*x as f64, *y, "e4m3·e5m2 D[{}][{}]", i / 8, i % 8);
    }
    // m16n8k16 e5m2 · e4m3 + f16.
    let a: Vec<f64> = (0..256).map(|i| small(i, 5, 1.0)).collect();
    let b: Vec<f64> = (0..128).map(|i| small(i + 1, 7, 0.5)).collect();
    let c: Vec<f64> = (0..128).map(|i| small(i, 9, 2.0)).collect();
    let ab: Vec<u8> = a.iter().map(|&x| fp8(x, false)).collect();
    let bb: Vec<u8> = b.iter().map(|&x| fp8(x, true)).collect();
    let cb: Vec<u16> = c.iter().map(|&x| f16_bits(x as f32)).collect();
    let d = run4(&m, "mma_fp8_f16", 1, &ab, &bb, &bytes(&cb));
    let want = host_gemm(16, 8, 16, &a, |kk, j| b[kk * 8 + j], &c);
    for (i, y) in want.iter().enumerate() {
        let x = u16::from_le_bytes([d[2 * i], d[2 * i + 1]]);
        assert_eq!(x, f16_bits(*y as f32), "e5m2·e4m3 D[{}][{}]", i / 8, i % 8);
    }
}

#[test]
fn wmma_gemms_match_host_gemms_in_every_type() {
    let m = module();
    let (n, k) = (32usize, 32usize);
    let a: Vec<f64> = (0..n * k).map(|i| small(i, 7, 0.5)).collect();
    let b: Vec<f64> = (0..n * k).map(|i| small(i + 5, 5, 0.25)).collect();
    let c: Vec<f64> = (0..n * n).map(|i| small(i + 2, 9, 1.0)).collect();
    // B column-major: element (kk, j) at j * k + kk.
    let want = host_gemm(n, n, k, &a, |kk, j| b[j * k + kk], &c);
    let cf: Vec<f32> = c.iter().map(|&x| x as f32).collect();
    let h = |v: &[f64]| bytes(&v.iter().map(|&x| f16_bits(x as f32)).collect::<Vec<_>>());
    let bf = |v: &[f64]| {
        bytes(
            &v.iter()
                .map(|&x| ((x as f32).to_bits() >> 16) as u16)
                .collect::<Vec<_>>(),
        )
    };
    let f = |v: &[f64]| bytes(&v.iter().map(|&x| x as f32).collect::<Vec<_>>());
    for (kernel, a_in, b_in) in [
        ("wmma_f16", h(&a), h(&b)),
        ("wmma_f16_m32n8", h(&a), h(&b)),
        ("wmma_bf16", bf(&a), bf(&b)),
        ("wmma_bf16_m8n32", bf(&a), bf(&b)),
        ("wmma_tf32", f(&a), f(&b)),
    ] {
        let d = to_f32s(&run4(&m, kernel, 4, &a_in, &b_in, &bytes(&cf)));
        for (i, (x, y)) in d.iter().zip(&want).enumerate() {
            assert_eq!(*x as f64, *y, "{kernel} D[{}][{}]", i / n, i % n);
        }
    }
    let ai: Vec<i8> = (0..n * k).map(|i| (i * 37 + 11) as u8 as i8).collect();
    let bi: Vec<i8> = (0..n * k).map(|i| (i * 101 + 5) as u8 as i8).collect();
    let ci: Vec<i32> = (0..n * n).map(|i| i as i32 * 1001 - 5000).collect();
    for (kernel, unsigned) in [
        ("wmma_s8", false),
        ("wmma_s8_m32n8", false),
        ("wmma_u8_m8n32", true),
    ] {
        let d = to_u32s(&run4(&m, kernel, 4, &bytes(&ai), &bytes(&bi), &bytes(&ci)));
        let v = |x: i8| if unsigned { x as u8 as i32 } else { x as i32 };
        for i in 0..n {
            for j in 0..n {
                let dot: i32 = (0..k).map(|kk| v(ai[i * k + kk]) * v(bi[j * k + kk])).sum();
                assert_eq!(
                    d[i * n + j] as i32,
                    ci[i * n + j] + dot,
                    "{kernel} D[{i}][{j}]"
                );
            }
        }
    }
    let a8: Vec<f64> = (0..64).map(|i| small(i, 11, 0.5)).collect();
    let b8: Vec<f64> = (0..64).map(|i| small(i + 1, 7, 3.0)).collect();
    let c8: Vec<f64> = (0..64).map(|i| small(i + 4, 13, 1.0)).collect();
    let d = run4(&m, "wmma_f64", 1, &bytes(&a8), &bytes(&b8), &bytes(&c8));
    let d: Vec<f64> = d
        .chunks(8)
        .map(|x| f64::from_le_bytes(x.try_into().unwrap()))
        .collect();
    assert_eq!(
        d,
        host_gemm(8, 8, 8, &a8, |kk, j| b8[j * 8 + kk], &c8),
        "wmma_f64"
    );
}

#[test]
fn movmatrix_transposes_and_stmatrix_stores_rows() {
    let m = module();
    let k = m.kernel("move_store").unwrap();
    // Lane l holds (row l/4, columns 2(l%4), 2(l%4)+1) of M; M(r, c) = 100 r + c.
    let input: Vec<u32> = (0..32u32)
        .map(|l| {
            let (r, c) = (l / 4, 2 * (l % 4));
            (100 * r + c) | (100 * r + c + 1) << 16
        })
        .collect();
    let mut mem = TestMemory::new();
    let din = mem.map(&u32s(&input), false);
    let dout = mem.map(&[0u8; 256], true);
    let p = params(&m.kernels[k], &[din, dout]);
    run(&m, k, &launch(1, 32, &p), &mem).unwrap();
    let out: Vec<u16> = mem
        .read(dout)
        .chunks(2)
        .map(|x| u16::from_le_bytes([x[0], x[1]]))
        .collect();
    for r in 0..8 {
        for c in 0..8 {
            assert_eq!(out[r * 8 + c] as usize, 100 * r + c, "M({r},{c})");
            assert_eq!(
                out[64 + r * 8 + c] as usize,
                100 * c + r,
                "transposed ({r},{c})"
            );
        }
    }
}

#[test]
fn cvt_to_tf32_rounds_to_ten_mantissa_bits() {
    let m = module();
    let k = m.kernel("to_tf32").unwrap();
    // (input, rna, rn, rz): a tie below an even bit, a tie below an odd one, above a tie
    // (negative), below a tie, a carry into the exponent, an infinity.
    let cases: [(u32, u32, u32, u32); 6] = [
        (0x3f80_1000, 0x3f80_2000, 0x3f80_0000, 0x3f80_0000),
        (0x3f80_3000, 0x3f80_4000, 0x3f80_4000, 0x3f80_2000),
        (0xbf80_1001, 0xbf80_2000, 0xbf80_2000, 0xbf80_0000),
        (0x3f80_0fff, 0x3f80_0000, 0x3f80_0000, 0x3f80_0000),
        (0x3fff_f000, 0x4000_0000, 0x4000_0000, 0x3fff_e000),
        (0xff80_0000, 0xff80_0000, 0xff80_0000, 0xff80_0000),
    ];
    let input: Vec<u32> = cases.iter().map(|c| c.0).collect();
    let mut mem = TestMemory::new();
    let din = mem.map(&u32s(&input), false);
    let dout = mem.map(&vec![0u8; 12 * cases.len()], true);
    let p = params(&m.kernels[k], &[din, dout]);
    run(&m, k, &launch(1, cases.len() as u32, &p), &mem).unwrap();
    let out = to_u32s(&mem.read(dout));
    for (i, c) in cases.iter().enumerate() {
        assert_eq!(&out[3 * i..3 * i + 3], &[c.1, c.2, c.3], "{:08x}", c.0);
    }
}
