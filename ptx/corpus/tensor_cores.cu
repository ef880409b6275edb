// Tensor cores: mma.sync for the shapes and types of sm_90 (f16, bf16 with f32 and f16
// accumulators, tf32, f64, s8/u8, s4/u4, b1), ldmatrix/stmatrix/movmatrix, and wmma's
// fragments as nvcuda::wmma writes them. Each warp takes its fragments straight from the
// input words (32 lanes x W words), shaped by the warp's mode so that the sums expose how
// the hardware adds: 0 varied magnitudes, 1 products that cancel in pairs (what is left
// is C, cut or not by the alignment to the largest product), 2 subnormals and tiny
// accumulators, 3 raw words (NaN, infinities). Outputs: every lane's D registers.
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#define K extern "C" __global__ void

__device__ unsigned warp_mode() {
  return ((blockIdx.x * blockDim.x + threadIdx.x) >> 5) & 3;
}

// A half (f16, or bf16 when `bf`) from a raw word, shaped by the mode.
__device__ unsigned short shape_half(unsigned x, unsigned mode, bool bf) {
  unsigned sign = (x >> 15) & 1, man = x & (bf ? 0x7f : 0x3ff), e = (x >> 16) & 0xff;
  unsigned ebits = bf ? 8 : 5, emax = bf ? 254 : 30, bias = bf ? 127 : 15;
  unsigned ex;
  if (mode == 3) return (unsigned short)x;
  if (mode == 2) ex = e % 3;                                  // subnormals and the smallest normals
  else ex = bias - 12 + e % 25;                                // 2^-12 .. 2^12
  if (ex > emax) ex = emax;
  return (unsigned short)((sign << 15) | (ex << (15 - ebits)) | man);
}

__device__ unsigned shape_half2(unsigned x, unsigned y, unsigned mode, bool bf) {
  return shape_half(x, mode, bf) | (unsigned)shape_half(y ^ (x >> 7), mode, bf) << 16;
}

// An f32 accumulator from a raw word: exponents 2^-30..2^30, tiny ones in mode 2.
__device__ unsigned shape_f32(unsigned x, unsigned mode) {
  if (mode == 3) return x;
  unsigned e = (x >> 23) & 0xff;
  unsigned ex = mode == 2 ? e % 4 : 97 + e % 61;
  return (x & 0x807fffff) | (ex << 23);
}

// Mode 1: the second half of k negates the first (products cancel in pairs).
#define PAIR(lo, hi) if (mode == 1) hi = lo ^ 0x80008000u

K mma_half(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned* w = in + 16 * t;
  unsigned* o = out + 24 * t;
  unsigned mode = warp_mode();
  unsigned a[4], b[2], bb[2], ab[4], c[4], h[2];
  for (int i = 0; i < 4; i++) a[i] = shape_half2(w[i], w[i + 8], mode, false);
  for (int i = 0; i < 4; i++) ab[i] = shape_half2(w[i], w[i + 8], mode, true);
  for (int i = 0; i < 2; i++) b[i] = shape_half2(w[4 + i], w[12 + i], mode, false);
  for (int i = 0; i < 2; i++) bb[i] = shape_half2(w[4 + i], w[12 + i], mode, true);
  for (int i = 0; i < 4; i++) c[i] = shape_f32(w[8 + i] * 2654435761u + w[i], mode);
  for (int i = 0; i < 2; i++) h[i] = shape_half2(w[14 + i], w[6 + i], mode == 1 ? 0 : mode, false);
  // k = 2t, 2t+1 in a[0], a[1]; k + 8 in a[2], a[3]; B: b[0] and b[1].
  PAIR(a[0], a[2]); PAIR(a[1], a[3]); PAIR(ab[0], ab[2]); PAIR(ab[1], ab[3]);
  if (mode == 1) { b[1] = b[0]; bb[1] = bb[0]; }
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
      : "=r"(o[0]), "=r"(o[1]), "=r"(o[2]), "=r"(o[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  asm("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};"
      : "=r"(o[4]), "=r"(o[5])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(h[0]), "r"(h[1]));
  asm("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3}, {%4}, {%5,%6};"
      : "=r"(o[6]), "=r"(o[7])
      : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(h[0]), "r"(h[1]));
  // A zero accumulator: the products' sum alone (and the sign of a zero sum).
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};"
      : "=r"(o[8]), "=r"(o[9]), "=r"(o[10]), "=r"(o[11])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(0u));
  asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
      : "=r"(o[12]), "=r"(o[13]), "=r"(o[14]), "=r"(o[15])
      : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
      : "=r"(o[16]), "=r"(o[17]), "=r"(o[18]), "=r"(o[19])
      : "r"(ab[0]), "r"(ab[1]), "r"(ab[2]), "r"(ab[3]), "r"(bb[0]), "r"(bb[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  asm("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
      : "=r"(o[20]), "=r"(o[21]), "=r"(o[22]), "=r"(o[23])
      : "r"(ab[0]), "r"(ab[2]), "r"(bb[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
}

K mma_tf32(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned* w = in + 12 * t;
  unsigned* o = out + 13 * t;
  unsigned mode = warp_mode();
  unsigned a[4], b[2], c[4];
  // cvt to tf32 of raw words (ties, NaNs, infinities, overflow).
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(o[8]) : "r"(w[0]));
  asm("cvt.rna.satfinite.tf32.f32 %0, %1;" : "=r"(o[9]) : "r"(w[1] | 0x7f7ff000u * (w[2] & 1)));
  asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(o[10]) : "r"(w[2] & 0xfffff000u | (w[3] & 0x1000u)));
  asm("cvt.rz.tf32.f32 %0, %1;" : "=r"(o[11]) : "r"(w[3]));
  asm("cvt.rn.relu.tf32.f32 %0, %1;" : "=r"(o[12]) : "r"(w[4]));
  // tf32 in f32 words: the low 13 bits are left as they come (do they count?).
  for (int i = 0; i < 4; i++) a[i] = shape_f32(w[i], mode == 1 ? 0 : mode);
  for (int i = 0; i < 2; i++) b[i] = shape_f32(w[4 + i], mode == 1 ? 0 : mode);
  for (int i = 0; i < 4; i++) c[i] = shape_f32(w[6 + i] ^ w[10 + (i & 1)], mode);
  // k = t in a[0], a[1], k = t + 4 in a[2], a[3]; B: b[0] (k = t), b[1] (k = t + 4).
  if (mode == 1) { a[2] = a[0] ^ 0x80000000u; a[3] = a[1] ^ 0x80000000u; b[1] = b[0]; }
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
      : "=r"(o[0]), "=r"(o[1]), "=r"(o[2]), "=r"(o[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  asm("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
      : "=r"(o[4]), "=r"(o[5]), "=r"(o[6]), "=r"(o[7])
      : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
}

__device__ double shape_f64(unsigned lo, unsigned hi, unsigned mode) {
  if (mode != 3) {
    unsigned e = (hi >> 20) & 0x7ff;
    hi = (hi & 0x800fffff) | ((1023 - 40 + e % 81) << 20);
  }
  return __hiloint2double(hi, lo);
}

K mma_f64(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned* w = in + 16 * t;
  unsigned long long* o = (unsigned long long*)(out + 2 * 14 * t);
  unsigned mode = warp_mode();
  double a[8], b[4], c[4], d[4];
  for (int i = 0; i < 8; i++) a[i] = shape_f64(w[i], w[(i + 3) & 15], mode);
  for (int i = 0; i < 4; i++) b[i] = shape_f64(w[8 + i], w[(i + 5) & 15], mode);
  for (int i = 0; i < 4; i++) c[i] = shape_f64(w[12 + i], w[i] ^ w[4 + i], mode);
  if (mode == 1) { a[1] = -a[0]; b[1] = b[0]; }
  asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%4,%5};"
      : "=d"(d[0]), "=d"(d[1]) : "d"(a[0]), "d"(b[0]), "d"(c[0]), "d"(c[1]));
  o[0] = __double_as_longlong(d[0]); o[1] = __double_as_longlong(d[1]);
  asm("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
      : "=d"(d[0]), "=d"(d[1]), "=d"(d[2]), "=d"(d[3]) : "d"(a[0]), "d"(a[1]), "d"(b[0]), "d"(c[0]), "d"(c[1]), "d"(c[2]), "d"(c[3]));
  for (int i = 0; i < 4; i++) o[2 + i] = __double_as_longlong(d[i]);
  asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
      : "=d"(d[0]), "=d"(d[1]), "=d"(d[2]), "=d"(d[3]) : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]), "d"(c[0]), "d"(c[1]), "d"(c[2]), "d"(c[3]));
  for (int i = 0; i < 4; i++) o[6 + i] = __double_as_longlong(d[i]);
  asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%16,%17,%18,%19};"
      : "=d"(d[0]), "=d"(d[1]), "=d"(d[2]), "=d"(d[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
        "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]), "d"(c[0]), "d"(c[1]), "d"(c[2]), "d"(c[3]));
  for (int i = 0; i < 4; i++) o[10 + i] = __double_as_longlong(d[i]);
}

K mma_int(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned* w = in + 12 * t;
  unsigned* o = out + 38 * t;
  unsigned a[4] = {w[0], w[1], w[2], w[3]}, b[2] = {w[4], w[5]};
  // Accumulators near the ends of s32 in half the warps: wrapping and saturation show.
  unsigned c[4];
  for (int i = 0; i < 4; i++) c[i] = (warp_mode() & 1) ? (w[6 + i] | 0x7fff0000u) ^ (w[10] & 0x80000000u) : w[6 + i] >> 8;
  asm("mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%0,%1}, {%2}, {%3}, {%4,%5};"
      : "=r"(o[0]), "=r"(o[1]) : "r"(a[0]), "r"(b[0]), "r"(c[0]), "r"(c[1]));
  asm("mma.sync.aligned.m8n8k16.row.col.satfinite.s32.u8.s8.s32 {%0,%1}, {%2}, {%3}, {%4,%5};"
      : "=r"(o[2]), "=r"(o[3]) : "r"(a[0]), "r"(b[0]), "r"(c[0]), "r"(c[1]));
  asm("mma.sync.aligned.m16n8k16.row.col.s32.u8.u8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
      : "=r"(o[4]), "=r"(o[5]), "=r"(o[6]), "=r"(o[7]) : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
      : "=r"(o[8]), "=r"(o[9]), "=r"(o[10]), "=r"(o[11]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  asm("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
      : "=r"(o[12]), "=r"(o[13]), "=r"(o[14]), "=r"(o[15]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  asm("mma.sync.aligned.m8n8k32.row.col.s32.s4.u4.s32 {%0,%1}, {%2}, {%3}, {%4,%5};"
      : "=r"(o[16]), "=r"(o[17]) : "r"(a[0]), "r"(b[0]), "r"(c[0]), "r"(c[1]));
  asm("mma.sync.aligned.m16n8k32.row.col.s32.s4.s4.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
      : "=r"(o[18]), "=r"(o[19]), "=r"(o[20]), "=r"(o[21]) : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  asm("mma.sync.aligned.m16n8k64.row.col.satfinite.s32.u4.s4.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
      : "=r"(o[22]), "=r"(o[23]), "=r"(o[24]), "=r"(o[25]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  asm("mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc {%0,%1}, {%2}, {%3}, {%4,%5};"
      : "=r"(o[26]), "=r"(o[27]) : "r"(a[0]), "r"(b[0]), "r"(c[0]), "r"(c[1]));
  asm("mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.and.popc {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
      : "=r"(o[28]), "=r"(o[29]), "=r"(o[30]), "=r"(o[31]) : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  asm("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
      : "=r"(o[32]), "=r"(o[33]), "=r"(o[34]), "=r"(o[35]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  o[36] = c[0]; o[37] = c[1];
}

// ldmatrix/stmatrix/movmatrix: each warp's 4 8x8 matrices of halves in shared memory,
// rows given by lanes in a permuted order; every register received, and the matrices
// stored back transposed and not.
K ldst_matrix(const unsigned* in, unsigned* out, int n) {
  __shared__ __align__(16) unsigned short tile[4][4 * 64 + 64];
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned short* s = tile[warp];
  for (int i = lane; i < 4 * 64 + 64; i += 32) s[i] = (unsigned short)(in[(t - lane) * 10 + i % 320] >> (i & 8));
  __syncwarp();
  // Matrix j's row r is at row (r * 3 + j) % 8 of block j, for lane 8j + r.
  unsigned j = lane >> 3, r = lane & 7;
  unsigned row = (unsigned)__cvta_generic_to_shared(s + j * 64 + ((r * 3 + j) & 7) * 8);
  unsigned* o = out + 24 * t;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(o[0]), "=r"(o[1]), "=r"(o[2]), "=r"(o[3]) : "r"(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(o[4]), "=r"(o[5]), "=r"(o[6]), "=r"(o[7]) : "r"(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(o[8]), "=r"(o[9]) : "r"(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(o[10]) : "r"(row));
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(o[11]) : "r"(o[0]));
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(o[12]) : "r"(in[t * 10 + 9]));
  __syncwarp();
  // Store back: x4 transposed into the matrices, x2 plain into the spare 64 halves... of
  // block 4 (rows of lanes 0-15 there).
  unsigned v[4] = {in[t * 10], in[t * 10 + 1], in[t * 10 + 2], in[t * 10 + 3]};
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1,%2,%3,%4};"
               :: "r"(row), "r"(v[0]), "r"(v[1]), "r"(v[2]), "r"(v[3]) : "memory");
  __syncwarp();
  unsigned row2 = (unsigned)__cvta_generic_to_shared(s + 4 * 64 + (lane & 7) * 8);
  asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" :: "r"(row2), "r"(v[0] ^ v[3]) : "memory");
  __syncwarp();
  for (int i = 0; i < 11; i++) {
    unsigned k = lane * 11 + i;
    o[13 + i] = k < 320 ? s[k] : 0;
  }
}

// wmma as nvcuda::wmma writes it: fragments loaded from the input (global and shared,
// row- and column-major, with strides), their raw registers (ptxas chooses the layout),
// a product, and the stored result.
using namespace nvcuda;

__device__ void frag_halves(unsigned short* dst, const unsigned* w, int count, unsigned mode, bool bf) {
  for (int i = 0; i < count; i++) dst[i] = shape_half(w[i % 64] ^ (i * 0x9e3779b9u), mode, bf);
}

K wmma_half(const unsigned* in, unsigned* out, int n) {
  __shared__ __align__(32) unsigned short sa[4][16 * 24], sb[4][16 * 24];
  __shared__ __align__(32) float sc[4][16 * 16];
  unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int gw = blockIdx.x * (blockDim.x >> 5) + warp;
  const unsigned* w = in + 128 * gw;
  unsigned mode = gw & 3;
  for (int i = lane; i < 16 * 24; i += 32) {
    sa[warp][i] = shape_half(w[i & 63] ^ (i * 0x9e3779b9u), mode, false);
    sb[warp][i] = shape_half(w[(i + 17) & 63] ^ (i * 0x85ebca6bu), mode, false);
  }
  for (int i = lane; i < 256; i += 32) sc[warp][i] = __uint_as_float(shape_f32(w[i & 63] * 2654435761u, mode));
  __syncwarp();
  unsigned* o = out + 64 * (blockIdx.x * blockDim.x + threadIdx.x);
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fragment<wmma::accumulator, 16, 16, 16, half> fh;
  wmma::load_matrix_sync(fa, (const half*)sa[warp], 24);
  wmma::load_matrix_sync(fb, (const half*)sb[warp], 24);
  wmma::load_matrix_sync(fc, sc[warp], 16, wmma::mem_col_major);
  // The raw fragments: which lane holds which element.
  for (int i = 0; i < 8; i++) o[i] = ((unsigned*)fa.x)[i];
  for (int i = 0; i < 8; i++) o[8 + i] = ((unsigned*)fb.x)[i];
  for (int i = 0; i < 8; i++) o[16 + i] = __float_as_uint(fc.x[i]);
  wmma::mma_sync(fc, fa, fb, fc);
  for (int i = 0; i < 8; i++) o[24 + i] = __float_as_uint(fc.x[i]);
  wmma::fill_fragment(fh, __float2half(0.25f));
  wmma::mma_sync(fh, fa, fb, fh);
  for (int i = 0; i < 4; i++) o[32 + i] = ((unsigned*)fh.x)[i];
  // bf16, loaded column-major A and row-major B from global memory.
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::col_major> ga;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> gb;
  wmma::load_matrix_sync(ga, (const __nv_bfloat16*)w, 8);   // raw words as bf16 pairs
  wmma::load_matrix_sync(gb, (const __nv_bfloat16*)(w + 8), 8);
  for (int i = 0; i < 4; i++) o[36 + i] = ((unsigned*)ga.x)[i];
  for (int i = 0; i < 4; i++) o[40 + i] = ((unsigned*)gb.x)[i];
  wmma::fill_fragment(fc, 1.0f);
  wmma::mma_sync(fc, ga, gb, fc);
  for (int i = 0; i < 8; i++) o[44 + i] = __float_as_uint(fc.x[i]);
  // Store: the f32 result row-major into shared memory, read back by this lane.
  wmma::store_matrix_sync(sc[warp], fc, 16, wmma::mem_row_major);
  __syncwarp();
  for (int i = 0; i < 8; i++) o[52 + i] = __float_as_uint(sc[warp][lane * 8 + i]);
  wmma::store_matrix_sync((half*)sa[warp], fh, 24, wmma::mem_col_major);
  __syncwarp();
  for (int i = 0; i < 4; i++) o[60 + i] = ((unsigned*)sa[warp])[lane * 4 + i];
}

K wmma_other(const unsigned* in, unsigned* out, int n) {
  unsigned lane = threadIdx.x & 31;
  int gw = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const unsigned* w = in + 512 * gw;
  unsigned mode = gw & 3;
  unsigned* o = out + 48 * (blockIdx.x * blockDim.x + threadIdx.x);
  // tf32 16x16x8: A and B as f32 words, rounded to tf32 by the program as the samples do.
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> ta;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> tb;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> tc;
  __shared__ __align__(32) float fa[4][128], fb[4][128];
  unsigned warp = threadIdx.x >> 5;
  for (int i = lane; i < 128; i += 32) {
    fa[warp][i] = __uint_as_float(shape_f32(w[i], mode == 1 ? 0 : mode));
    fb[warp][i] = __uint_as_float(shape_f32(w[128 + i], mode == 1 ? 0 : mode));
  }
  __syncwarp();
  wmma::load_matrix_sync(ta, fa[warp], 8);
  wmma::load_matrix_sync(tb, fb[warp], 8);
  for (int i = 0; i < 4; i++) o[i] = __float_as_uint(ta.x[i]);
  for (int i = 0; i < 4; i++) o[4 + i] = __float_as_uint(tb.x[i]);
  for (int i = 0; i < ta.num_elements; i++) ta.x[i] = wmma::__float_to_tf32(ta.x[i]);
  for (int i = 0; i < tb.num_elements; i++) tb.x[i] = wmma::__float_to_tf32(tb.x[i]);
  wmma::fill_fragment(tc, 0.5f);
  wmma::mma_sync(tc, ta, tb, tc);
  for (int i = 0; i < 8; i++) o[8 + i] = __float_as_uint(tc.x[i]);
  // f64 8x8x4.
  wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major> da;
  wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::col_major> db;
  wmma::fragment<wmma::accumulator, 8, 8, 4, double> dc;
  __shared__ __align__(32) double ds[4][64];
  for (int i = lane; i < 64; i += 32) ds[warp][i] = shape_f64(w[i], w[64 + i], mode);
  __syncwarp();
  wmma::load_matrix_sync(da, ds[warp], 4);
  wmma::load_matrix_sync(db, ds[warp] + 32, 4);
  wmma::load_matrix_sync(dc, ds[warp], 8, wmma::mem_row_major);
  wmma::mma_sync(dc, da, db, dc);
  o[16] = __double2loint(da.x[0]); o[17] = __double2hiint(da.x[0]);
  o[18] = __double2loint(db.x[0]); o[19] = __double2hiint(db.x[0]);
  for (int i = 0; i < 2; i++) { o[20 + 2 * i] = __double2loint(dc.x[i]); o[21 + 2 * i] = __double2hiint(dc.x[i]); }
  // s8 16x16x16 with s32 accumulators, straight from global memory.
  wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> ia;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::col_major> ib;
  wmma::fragment<wmma::accumulator, 16, 16, 16, int> ic;
  wmma::load_matrix_sync(ia, (const signed char*)w, 16);
  wmma::load_matrix_sync(ib, (const signed char*)(w + 64), 16);
  wmma::load_matrix_sync(ic, (const int*)(w + 128), 16, wmma::mem_row_major);
  o[24] = ((unsigned*)ia.x)[0]; o[25] = ((unsigned*)ia.x)[1];
  o[26] = ((unsigned*)ib.x)[0]; o[27] = ((unsigned*)ib.x)[1];
  wmma::mma_sync(ic, ia, ib, ic);
  for (int i = 0; i < 8; i++) o[28 + i] = ic.x[i];
  wmma::fragment<wmma::matrix_a, 16, 16, 16, unsigned char, wmma::col_major> ua;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, unsigned char, wmma::row_major> ub;
  wmma::load_matrix_sync(ua, (const unsigned char*)(w + 32), 32);
  wmma::load_matrix_sync(ub, (const unsigned char*)(w + 96), 32);
  wmma::mma_sync(ic, ua, ub, ic, true);
  for (int i = 0; i < 8; i++) o[36 + i] = ic.x[i];
  o[44] = ((unsigned*)ua.x)[0]; o[45] = ((unsigned*)ua.x)[1];
  o[46] = ((unsigned*)ub.x)[0]; o[47] = ((unsigned*)ub.x)[1];
}

// Targeted sums for m16n8k16 f16 -> f32 (and -> f16): D[R][c] = C + sum_k A[R][k] B[k][c]
// with B = +1 (even columns) or -1 (odd: the same sums negated, so truncation toward zero
// and toward minus infinity differ), C = +-{1, 2^10, 3, 0}[c/2]. Rows R (16 per warp):
// 0-15 R+1 terms of 2^-24 (how many bits below C's are kept); 16-31 one term 2^(R-16)
// and fifteen of 2^-10 (alignment to the largest product); 32-47 2^15 and -2^15 in
// k = 0 and k = 8 with fourteen terms 2^(-(R-32)) (one block of 16 or two of 8?); 48-63
// terms 1.75 * 2^(R-56) and -1.5 * 2^(R-56) alternating with 2^-12 (mixed exponents).
__device__ float probe_a(unsigned R, unsigned k) {
  if (R < 16) return k <= R ? 5.9604645e-8f : 0.0f;                  // 2^-24
  if (R < 32) return k == 0 ? (float)(1u << (R - 16)) : 0.0009765625f; // 2^-10
  if (R < 48) return k == 0 ? 32768.0f : k == 8 ? -32768.0f : exp2f(-(float)(R - 32));
  float s = exp2f((float)R - 56.0f);
  return k % 3 == 0 ? 1.75f * s : k % 3 == 1 ? -1.5f * s : 0.000244140625f;
}

K mma_probe(const unsigned* in, unsigned* out, int n) {
  unsigned lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  unsigned base = (threadIdx.x >> 5) * 16;
  const float cm[4] = {1.0f, 1024.0f, 3.0f, 0.0f};
  unsigned a[4], b[2], c[4], h[2];
  for (int i = 0; i < 8; i++) {
    unsigned row = g + 8 * ((i >> 1) & 1), k = 2 * t + (i & 1) + 8 * (i >> 2);
    unsigned short x = __half_as_ushort(__float2half_rn(probe_a(base + row, k)));
    if (i & 1) a[i / 2] |= (unsigned)x << 16; else a[i / 2] = x;
  }
  // B[k][col] = +-1 by the column: lane's column is g.
  unsigned one = (g & 1) ? 0xbc00u : 0x3c00u;
  b[0] = b[1] = one | one << 16;
  for (int i = 0; i < 4; i++) {
    unsigned col = 2 * t + (i & 1);
    float v = (col & 1) ? -cm[col / 2] : cm[col / 2];
    c[i] = __float_as_uint(v);
  }
  for (int i = 0; i < 2; i++) {
    unsigned short lo = __half_as_ushort(__float2half_rn(__uint_as_float(c[2 * i])));
    unsigned short hi = __half_as_ushort(__float2half_rn(__uint_as_float(c[2 * i + 1])));
    h[i] = lo | (unsigned)hi << 16;
  }
  unsigned* o = out + 6 * (blockIdx.x * blockDim.x + threadIdx.x);
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
      : "=r"(o[0]), "=r"(o[1]), "=r"(o[2]), "=r"(o[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  asm("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};"
      : "=r"(o[4]), "=r"(o[5])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(h[0]), "r"(h[1]));
}

// wmma's other shapes: m32n8k16 (f16, u8) and m8n32k16 (bf16), their raw fragments and
// products, from shared memory staged with shaped values.
K wmma_shapes(const unsigned* in, unsigned* out, int n) {
  __shared__ __align__(32) unsigned short sh[4][512 + 128 + 512];
  __shared__ __align__(32) float sf[4][256];
  unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int gw = blockIdx.x * (blockDim.x >> 5) + warp;
  const unsigned* w = in + 256 * gw;
  unsigned mode = gw & 3 & ~1u;  // varied magnitudes, or tiny ones
  for (int i = lane; i < 1152; i += 32) sh[warp][i] = shape_half(w[i & 255] ^ (i * 0x9e3779b9u), mode, i >= 640);
  for (int i = lane; i < 256; i += 32) sf[warp][i] = __uint_as_float(shape_f32(w[i] * 2654435761u, mode));
  __syncwarp();
  unsigned* o = out + 55 * (blockIdx.x * blockDim.x + threadIdx.x);
  wmma::fragment<wmma::matrix_a, 32, 8, 16, half, wmma::row_major> a1;
  wmma::fragment<wmma::matrix_b, 32, 8, 16, half, wmma::col_major> b1;
  wmma::fragment<wmma::accumulator, 32, 8, 16, float> c1;
  wmma::load_matrix_sync(a1, (const half*)sh[warp], 16);
  wmma::load_matrix_sync(b1, (const half*)sh[warp] + 512, 16);
  wmma::load_matrix_sync(c1, sf[warp], 8, wmma::mem_row_major);
  wmma::mma_sync(c1, a1, b1, c1);
  for (int i = 0; i < 8; i++) o[i] = ((unsigned*)a1.x)[i];
  for (int i = 0; i < 8; i++) o[8 + i] = ((unsigned*)b1.x)[i];
  for (int i = 0; i < 8; i++) o[16 + i] = __float_as_uint(c1.x[i]);
  wmma::fragment<wmma::matrix_a, 8, 32, 16, __nv_bfloat16, wmma::col_major> a2;
  wmma::fragment<wmma::matrix_b, 8, 32, 16, __nv_bfloat16, wmma::row_major> b2;
  wmma::fragment<wmma::accumulator, 8, 32, 16, float> c2;
  wmma::load_matrix_sync(a2, (const __nv_bfloat16*)sh[warp] + 640, 8);
  wmma::load_matrix_sync(b2, (const __nv_bfloat16*)sh[warp] + 640, 32);
  wmma::load_matrix_sync(c2, sf[warp], 8, wmma::mem_col_major);
  wmma::mma_sync(c2, a2, b2, c2);
  for (int i = 0; i < 2; i++) o[24 + i] = ((unsigned*)a2.x)[i];
  for (int i = 0; i < 8; i++) o[26 + i] = ((unsigned*)b2.x)[i];
  for (int i = 0; i < 8; i++) o[34 + i] = __float_as_uint(c2.x[i]);
  wmma::fragment<wmma::matrix_a, 32, 8, 16, unsigned char, wmma::row_major> a3;
  wmma::fragment<wmma::matrix_b, 32, 8, 16, unsigned char, wmma::col_major> b3;
  wmma::fragment<wmma::accumulator, 32, 8, 16, int> c3;
  wmma::load_matrix_sync(a3, (const unsigned char*)w, 16);
  wmma::load_matrix_sync(b3, (const unsigned char*)(w + 128), 16);
  wmma::fill_fragment(c3, (int)w[200]);
  wmma::mma_sync(c3, a3, b3, c3);
  for (int i = 0; i < 4; i++) o[42 + i] = ((unsigned*)a3.x)[i];
  o[46] = ((unsigned*)b3.x)[0];
  for (int i = 0; i < 8; i++) o[47 + i] = c3.x[i];
}

// Sparse mma.sp / mma.sp::ordered_metadata (2:4; tf32 1:2; 4-bit pairs) in every shape and
// type sm_90 has, selectors across their range: A's stored half and B straight from the
// input words (shaped by the mode), the metadata valid (two different indices a chunk,
// in increasing order; tf32 0b0100 or 0b1110) from a word that differs in every lane, so
// where the H200 reads each chunk's bits shows. The last, plain `.sp`, gives chunks'
// indices in either order (what `::ordered_metadata` forbids).
__device__ unsigned sparse_meta(unsigned x, int kind) {
  // kind 0: increasing pairs; 1: tf32; 2: any two different indices.
  const unsigned char ordered[6] = {0x4, 0x8, 0xc, 0x9, 0xd, 0xe};
  unsigned e = 0;
  for (int q = 0; q < 8; q++) {
    unsigned nib = (x >> (4 * q)) & 0xf, v;
    if (kind == 1) v = (nib & 1) ? 0xe : 0x4;
    else if (kind == 0) v = ordered[nib % 6];
    else { unsigned i0 = nib & 3, i1 = (i0 + 1 + (nib >> 2) % 3) & 3; v = i0 | i1 << 2; }
    e |= v << (4 * q);
  }
  return e;
}

K mma_sparse(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned* w = in + 16 * t;
  unsigned* o = out + 42 * t;
  unsigned mode = warp_mode();
  unsigned a[4], ab[4], af[4], b[4], bb[4], bf[4], c[4], h[2], ai[4], bi[4];
  for (int i = 0; i < 4; i++) {
    a[i] = shape_half2(w[i], w[i + 8], mode, false);
    ab[i] = shape_half2(w[i], w[i + 8], mode, true);
    af[i] = shape_f32(w[i] * 2246822519u + w[12], mode);
    b[i] = shape_half2(w[4 + i], w[12 + (i & 1)], mode, false);
    bb[i] = shape_half2(w[4 + i], w[12 + (i & 1)], mode, true);
    bf[i] = shape_f32(w[4 + i] ^ w[13], mode);
    c[i] = shape_f32(w[8 + i] * 2654435761u + w[i], mode);
    ai[i] = w[i] ^ w[14];
    bi[i] = w[4 + i] + w[15];
  }
  for (int i = 0; i < 2; i++) h[i] = shape_half2(w[14 + i], w[6 + i], mode == 1 ? 0 : mode, false);
  unsigned e = sparse_meta(w[15] ^ w[11], 0), et = sparse_meta(w[15] ^ w[10], 1), eu = sparse_meta(w[15] ^ w[9], 2);
#define SP4(INST, SEL, O, A, B, E)                                                        \
  asm(INST " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9,%10,%11}, {%12,%13,%14,%15}, %16, " #SEL ";" \
      : "=r"(o[O]), "=r"(o[O + 1]), "=r"(o[O + 2]), "=r"(o[O + 3])                        \
      : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]), "r"(B[2]), "r"(B[3]), \
        "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(E))
#define SP2(INST, SEL, O, A, B, E)                                                        \
  asm(INST " {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, {%8,%9,%10,%11}, %12, " #SEL ";"           \
      : "=r"(o[O]), "=r"(o[O + 1]), "=r"(o[O + 2]), "=r"(o[O + 3])                        \
      : "r"(A[0]), "r"(A[1]), "r"(B[0]), "r"(B[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(E))
  SP2("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 0, 0, a, b, e);
  asm("mma.sp.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3}, {%4,%5}, {%6,%7}, %8, 2;"
      : "=r"(o[4]), "=r"(o[5]) : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(h[0]), "r"(h[1]), "r"(e));
  SP4("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32", 1, 6, a, b, e);
  SP4("mma.sp.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32", 0, 10, ab, bb, e);
  SP2("mma.sp::ordered_metadata.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 3, 14, af, bf, et);
  SP4("mma.sp.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32", 1, 18, af, bf, et);
  SP2("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.u8.s32", 1, 22, ai, bi, e);
  SP4("mma.sp.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32", 0, 26, ai, bi, e);
  SP2("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.s32.s4.u4.s32", 1, 30, ai, bi, e);
  SP4("mma.sp.sync.aligned.m16n8k128.row.col.satfinite.s32.u4.s4.s32", 0, 34, ai, bi, e);
  SP2("mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 1, 38, a, b, eu);
#undef SP4
#undef SP2
}

// wmma's sub-byte shapes: m8n8k32 s4/u4 and m8n8k128 b1 (xor and and popc), loaded from
// the input words (A row-major, B column-major, 16 bytes a row or column), so which lane's
// register holds which element shows; D in registers and stored column-major.
K wmma_subbyte(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x, warp = t >> 5;
  const unsigned* w = in + 128 * warp;
  unsigned* o = out + 14 * t;
  unsigned a, b, c[2], cs[2], d[2];
  asm volatile("wmma.load.a.sync.aligned.row.m8n8k32.global.s4 {%0}, [%1], 32;" : "=r"(a) : "l"(w));
  asm volatile("wmma.load.b.sync.aligned.col.m8n8k32.global.s4 {%0}, [%1], 32;" : "=r"(b) : "l"(w + 32));
  asm volatile("wmma.load.c.sync.aligned.row.m8n8k32.global.s32 {%0,%1}, [%2], 8;" : "=r"(c[0]), "=r"(c[1]) : "l"(w + 64));
  o[0] = a; o[1] = b; o[2] = c[0]; o[3] = c[1];
  asm volatile("wmma.mma.sync.aligned.row.col.m8n8k32.s32.s4.s4.s32 {%0,%1}, {%2}, {%3}, {%4,%5};"
      : "=r"(d[0]), "=r"(d[1]) : "r"(a), "r"(b), "r"(c[0]), "r"(c[1]));
  o[4] = d[0]; o[5] = d[1];
  asm volatile("wmma.store.d.sync.aligned.col.m8n8k32.global.s32 [%0], {%1,%2}, 8;"
      :: "l"(out + 14 * 256 + 64 * warp), "r"(d[0]), "r"(d[1]) : "memory");
  // Accumulators near the ends of s32: saturation shows.
  for (int i = 0; i < 2; i++) cs[i] = (c[i] & 0x80000000u) ? 0x80000000u + (c[i] & 0x3fff) : 0x7fffc000u + (c[i] & 0x3fff);
  asm volatile("wmma.mma.sync.aligned.row.col.m8n8k32.s32.u4.u4.s32.satfinite {%0,%1}, {%2}, {%3}, {%4,%5};"
      : "=r"(o[6]), "=r"(o[7]) : "r"(a), "r"(b), "r"(cs[0]), "r"(cs[1]));
  asm volatile("wmma.load.a.sync.aligned.row.m8n8k128.global.b1 {%0}, [%1], 128;" : "=r"(a) : "l"(w + 32));
  asm volatile("wmma.load.b.sync.aligned.col.m8n8k128.global.b1 {%0}, [%1], 128;" : "=r"(b) : "l"(w));
  o[8] = a; o[9] = b;
  asm volatile("wmma.mma.xor.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {%0,%1}, {%2}, {%3}, {%4,%5};"
      : "=r"(o[10]), "=r"(o[11]) : "r"(a), "r"(b), "r"(c[0]), "r"(c[1]));
  asm volatile("wmma.mma.and.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {%0,%1}, {%2}, {%3}, {%4,%5};"
      : "=r"(o[12]), "=r"(o[13]) : "r"(a), "r"(b), "r"(c[0]), "r"(c[1]));
}

// mma.m8n8k4 with f16 A and B (sm_70's quad pairs: four 8x8x4 products a warp), every
// layout pair, f32 and f16 accumulators and f32 D from f16 C (whose D layout the ISA
// gives by .ctype), values shaped by the mode as mma_half's.
K mma_m8n8k4(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned* w = in + 16 * t;
  unsigned* o = out + 28 * t;
  unsigned mode = warp_mode();
  unsigned a[2], b[2], c[8], h[4];
  for (int i = 0; i < 2; i++) a[i] = shape_half2(w[i], w[i + 8], mode, false);
  for (int i = 0; i < 2; i++) b[i] = shape_half2(w[2 + i], w[10 + i], mode, false);
  for (int i = 0; i < 8; i++) c[i] = shape_f32(w[4 + i] * 2654435761u + w[i], mode);
  for (int i = 0; i < 4; i++) h[i] = shape_half2(w[12 + i], w[4 + i], mode == 1 ? 0 : mode, false);
  if (mode == 1) a[1] = a[0] ^ 0x80008000u;  // products that cancel in pairs
  asm("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, {%12,%13,%14,%15,%16,%17,%18,%19};"
      : "=r"(o[0]), "=r"(o[1]), "=r"(o[2]), "=r"(o[3]), "=r"(o[4]), "=r"(o[5]), "=r"(o[6]), "=r"(o[7])
      : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(c[5]), "r"(c[6]), "r"(c[7]));
  asm("mma.sync.aligned.m8n8k4.col.row.f16.f16.f16.f16 {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, {%8,%9,%10,%11};"
      : "=r"(o[8]), "=r"(o[9]), "=r"(o[10]), "=r"(o[11])
      : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(h[0]), "r"(h[1]), "r"(h[2]), "r"(h[3]));
  asm("mma.sync.aligned.m8n8k4.row.row.f32.f16.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, {%12,%13,%14,%15};"
      : "=r"(o[12]), "=r"(o[13]), "=r"(o[14]), "=r"(o[15]), "=r"(o[16]), "=r"(o[17]), "=r"(o[18]), "=r"(o[19])
      : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(h[0]), "r"(h[1]), "r"(h[2]), "r"(h[3]));
  asm("mma.sync.aligned.m8n8k4.col.col.f32.f16.f16.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, {%12,%12,%12,%12,%12,%12,%12,%12};"
      : "=r"(o[20]), "=r"(o[21]), "=r"(o[22]), "=r"(o[23]), "=r"(o[24]), "=r"(o[25]), "=r"(o[26]), "=r"(o[27])
      : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(0u));
}

// mma.m8n8k4's rounding steps, one case a warp, the same registers in every lane (A
// .row, B .col: each element of D sums a0*b0 .. a3*b3 in register order, plus C):
// ptxas's f32 chain rounds 1 + 2^-24 back to 1 (warp 0), rounds to nearest (1), starts
// from +0 (2: -0 products and C), keeps a subnormal C (3), and sums k in order (4).
// Words of a lane: f32 D from f32 C (8), f16 D (4), f32 D from f16 C (8).
K mma_m8n8k4_probe(const unsigned* in, unsigned* out, int n) {
  // A's halves a0..a3, B's b0..b3 (f16 bits), C as f32 and f16 bits.
  const unsigned short ab[5][8] = {
      {0x3c00, 0x0c00, 0x0c00, 0, 0x3c00, 0x0c00, 0x0c00, 0},
      {0x3c00, 0x1200, 0, 0, 0x3c00, 0x0c00, 0, 0},
      {0x8000, 0x3c00, 0x8000, 0x3c00, 0x3c00, 0x8000, 0x3c00, 0x8000},
      {0, 0, 0, 0, 0, 0, 0, 0},
      {0x0c00, 0x0c00, 0x3c00, 0, 0x0c00, 0x0c00, 0x3c00, 0},
  };
  const unsigned c32[5] = {0xbf800000u, 0, 0x80000000u, 1, 0xbf800000u};
  const unsigned short c16[5] = {0xbc00, 0, 0x8000, 1, 0xbc00};
  unsigned w = threadIdx.x >> 5;
  const unsigned short* x = ab[w];
  unsigned a0 = x[0] | (unsigned)x[1] << 16, a1 = x[2] | (unsigned)x[3] << 16;
  unsigned b0 = x[4] | (unsigned)x[5] << 16, b1 = x[6] | (unsigned)x[7] << 16;
  unsigned c = c32[w], h = c16[w] | (unsigned)c16[w] << 16;
  unsigned* o = out + 20 * threadIdx.x;
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, {%12,%12,%12,%12,%12,%12,%12,%12};"
      : "=r"(o[0]), "=r"(o[1]), "=r"(o[2]), "=r"(o[3]), "=r"(o[4]), "=r"(o[5]), "=r"(o[6]), "=r"(o[7])
      : "r"(a0), "r"(a1), "r"(b0), "r"(b1), "r"(c));
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f16 {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, {%8,%8,%8,%8};"
      : "=r"(o[8]), "=r"(o[9]), "=r"(o[10]), "=r"(o[11])
      : "r"(a0), "r"(a1), "r"(b0), "r"(b1), "r"(h));
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, {%12,%12,%12,%12};"
      : "=r"(o[12]), "=r"(o[13]), "=r"(o[14]), "=r"(o[15]), "=r"(o[16]), "=r"(o[17]), "=r"(o[18]), "=r"(o[19])
      : "r"(a0), "r"(a1), "r"(b0), "r"(b1), "r"(h));
}

// The other eight forms of mma.m8n8k4 f16 (layout pair and type), on the same values as
// mma_m8n8k4: with it, every one sm_90 has (each computed with f32 arithmetic on the CUDA
// cores; the executor's model of that arithmetic is what these recordings check).
K mma_m8n8k4_forms(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned* w = in + 16 * t;
  unsigned* o = out + 52 * t;
  unsigned mode = warp_mode();
  unsigned a[2], b[2], c[8], h[4];
  for (int i = 0; i < 2; i++) a[i] = shape_half2(w[i], w[i + 8], mode, false);
  for (int i = 0; i < 2; i++) b[i] = shape_half2(w[2 + i], w[10 + i], mode, false);
  for (int i = 0; i < 8; i++) c[i] = shape_f32(w[4 + i] * 2654435761u + w[i], mode);
  for (int i = 0; i < 4; i++) h[i] = shape_half2(w[12 + i], w[4 + i], mode == 1 ? 0 : mode, false);
  if (mode == 1) a[1] = a[0] ^ 0x80008000u;  // products that cancel in pairs
  asm("mma.sync.aligned.m8n8k4.row.row.f32.f16.f16.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, {%12,%13,%14,%15,%16,%17,%18,%19};"
      : "=r"(o[0]), "=r"(o[1]), "=r"(o[2]), "=r"(o[3]), "=r"(o[4]), "=r"(o[5]), "=r"(o[6]), "=r"(o[7])
      : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(c[5]), "r"(c[6]), "r"(c[7]));
  asm("mma.sync.aligned.m8n8k4.col.row.f32.f16.f16.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, {%12,%13,%14,%15,%16,%17,%18,%19};"
      : "=r"(o[8]), "=r"(o[9]), "=r"(o[10]), "=r"(o[11]), "=r"(o[12]), "=r"(o[13]), "=r"(o[14]), "=r"(o[15])
      : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(c[5]), "r"(c[6]), "r"(c[7]));
  asm("mma.sync.aligned.m8n8k4.row.row.f16.f16.f16.f16 {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, {%8,%9,%10,%11};"
      : "=r"(o[16]), "=r"(o[17]), "=r"(o[18]), "=r"(o[19])
      : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(h[0]), "r"(h[1]), "r"(h[2]), "r"(h[3]));
  asm("mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f16 {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, {%8,%9,%10,%11};"
      : "=r"(o[20]), "=r"(o[21]), "=r"(o[22]), "=r"(o[23])
      : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(h[0]), "r"(h[1]), "r"(h[2]), "r"(h[3]));
  asm("mma.sync.aligned.m8n8k4.col.col.f16.f16.f16.f16 {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, {%8,%9,%10,%11};"
      : "=r"(o[24]), "=r"(o[25]), "=r"(o[26]), "=r"(o[27])
      : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(h[0]), "r"(h[1]), "r"(h[2]), "r"(h[3]));
  asm("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, {%12,%13,%14,%15};"
      : "=r"(o[28]), "=r"(o[29]), "=r"(o[30]), "=r"(o[31]), "=r"(o[32]), "=r"(o[33]), "=r"(o[34]), "=r"(o[35])
      : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(h[0]), "r"(h[1]), "r"(h[2]), "r"(h[3]));
  asm("mma.sync.aligned.m8n8k4.col.row.f32.f16.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, {%12,%13,%14,%15};"
      : "=r"(o[36]), "=r"(o[37]), "=r"(o[38]), "=r"(o[39]), "=r"(o[40]), "=r"(o[41]), "=r"(o[42]), "=r"(o[43])
      : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(h[0]), "r"(h[1]), "r"(h[2]), "r"(h[3]));
  asm("mma.sync.aligned.m8n8k4.col.col.f32.f16.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, {%12,%13,%14,%15};"
      : "=r"(o[44]), "=r"(o[45]), "=r"(o[46]), "=r"(o[47]), "=r"(o[48]), "=r"(o[49]), "=r"(o[50]), "=r"(o[51])
      : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(h[0]), "r"(h[1]), "r"(h[2]), "r"(h[3]));
}
