// corpus-arch: compute_90a
// Warpgroup MMA (wgmma.mma_async, sm_90a) and FP8 mma.sync, as CUTLASS writes them: inline
// PTX, shared-memory tiles written by the threads in the PTX ISA's canonical layouts
// (K-major and MN-major, each swizzle mode), descriptors built by hand, fence /
// mma_async / commit_group / wait_group. Operands come from the input words, floats shaped
// by their row so that the sums show how the H200 adds: rows 16i..16i+13 magnitudes
// 2^-12..2^12 (E4M3: 2^-6..2^6), row 16i+14 subnormals and the smallest normals, row
// 16i+15 raw bits (NaNs, infinities); integers and b1 raw (C's large words saturate).
// 128 threads: one warpgroup.
#define K extern "C" __global__ void

// Swizzle<B,4,3> on a shared address: the 16-byte chunk bits XOR the row bits.
__device__ unsigned swz(unsigned a, unsigned w) { return a ^ (((a >> 7) & (w - 1)) << 4); }
// Byte (r, c) of a K-major image: r the M or N index, c the byte along K.
__device__ unsigned kmaj(unsigned r, unsigned c, unsigned w, unsigned lbo, unsigned sbo) {
  return w == 1 ? (r % 8) * 16 + (r / 8) * sbo + (c / 16) * lbo + c % 16
                : (r % 8) * 16 * w + (r / 8) * sbo + c;
}
// Byte (k, c) of an MN-major image: c the byte along M or N.
__device__ unsigned mnmaj(unsigned k, unsigned c, unsigned w, unsigned lbo, unsigned sbo) {
  unsigned mc = c / 16;
  return w == 1 ? mc * sbo + (k % 8) * 16 + (k / 8) * lbo + c % 16
                : (mc % w) * 16 + (mc / w) * lbo + (k % 8) * 16 * w + (k / 8) * sbo + c % 16;
}
// Element kinds: 0 raw (integers, b1), 1 f16, 2 bf16, 3 tf32 or f32, 4 E4M3, 5 E5M2; plus 8:
// magnitudes 2^-6..2^6 only (operands of f16 accumulators, whose range is 2^16).
__device__ unsigned mode_of(unsigned row) { return row % 16 == 15 ? 3 : row % 16 == 14 ? 2 : 0; }
__device__ unsigned shape(unsigned x, unsigned kind, unsigned mode) {
  unsigned lim = kind & 8 ? 6 : 12;
  kind &= 7;
  if (kind == 0 || mode == 3) return x;
  const unsigned ebits[] = {0, 5, 8, 8, 4, 5}, mbits[] = {0, 10, 7, 23, 3, 2};
  unsigned eb = ebits[kind], mb = mbits[kind];
  unsigned bias = (1u << (eb - 1)) - 1, range = bias - 1 < lim ? bias - 1 : lim;
  unsigned sign = (x >> (eb + mb)) & 1, man = x & ((1u << mb) - 1), e = (x * 2654435761u) >> 26;
  unsigned ex = mode == 2 ? e % 3 : bias - range + e % (2 * range + 1);
  if (kind == 4 && ex == 15 && man == 7) man = 6;  // E4M3's NaN
  return (sign << (eb + mb)) | (ex << mb) | man;
}
// An image of rows x cols bytes from global memory into its layout in shared memory, in
// elements of `eb` bytes shaped as `kind` (by their M or N index).
__device__ void place(unsigned char* s, const unsigned char* img, unsigned rows, unsigned cols,
                      bool kmajor, unsigned w, unsigned lbo, unsigned sbo, unsigned eb, unsigned kind) {
  unsigned base = (unsigned)__cvta_generic_to_shared(s);
  for (unsigned i = threadIdx.x; i < rows * cols / eb; i += blockDim.x) {
    unsigned r = i * eb / cols, c = i * eb % cols, x = 0;
    for (unsigned j = 0; j < eb; j++) x |= (unsigned)img[i * eb + j] << (8 * j);
    x = shape(x, kind, mode_of(kmajor ? r : c / eb));  // by M or N index
    unsigned off = kmajor ? kmaj(r, c, w, lbo, sbo) : mnmaj(r, c, w, lbo, sbo);
    for (unsigned j = 0; j < eb; j++) s[swz(base + off, w) - base + j] = x >> (8 * j);
  }
}
// A matrix descriptor: start, LBO, SBO (bytes), swizzle mode (0 none, 1 128B, 2 64B, 3 32B).
__device__ unsigned long long desc(const void* p, unsigned lbo, unsigned sbo, unsigned mode) {
  unsigned long long a = (unsigned)__cvta_generic_to_shared(p);
  return ((a & 0x3ffff) >> 4) | ((unsigned long long)(lbo >> 4) << 16) |
         ((unsigned long long)(sbo >> 4) << 32) | ((unsigned long long)mode << 62);
}
// The accumulator fragment: element i of this thread is row 16w + g + 8((i/2)%2), column
// 8(i/4) + 2t + i%2 of the 64xN D; f16 elements two to a register.
__device__ unsigned drow(unsigned i) {
  unsigned l = threadIdx.x % 32;
  return 16 * (threadIdx.x / 32 % 4) + l / 4 + 8 * ((i / 2) % 2);
}
__device__ unsigned dcol(unsigned i) { return 8 * (i / 4) + 2 * (threadIdx.x % 4) + i % 2; }
__device__ void load_d(unsigned* d, const unsigned* c, unsigned n, unsigned kind) {
  for (unsigned i = 0; i < n / 2; i++) d[i] = shape(c[drow(i) * n + dcol(i)], kind, mode_of(drow(i)));
}
__device__ void store_d(const unsigned* d, unsigned* out, unsigned n) {
  for (unsigned i = 0; i < n / 2; i++) out[drow(i) * n + dcol(i)] = d[i];
}
__device__ void load_d16(unsigned* d, const unsigned short* c, unsigned n) {
  for (unsigned i = 0; i < n / 4; i++) d[i] = 0;
  for (unsigned i = 0; i < n / 2; i++)
    d[i / 2] |= shape(c[drow(i) * n + dcol(i)], 1, mode_of(drow(i))) << (16 * (i % 2));
}
__device__ void store_d16(const unsigned* d, unsigned short* out, unsigned n) {
  for (unsigned i = 0; i < n / 2; i++) out[drow(i) * n + dcol(i)] = d[i / 2] >> (16 * (i % 2));
}
// An A in registers: mma's m16n8kK A fragment of this warp's 16 rows of a K-major image
// (rows of `cols` bytes; K step s at byte 32s), v elements of `eb` bytes to a register,
// shaped as `kind`.
__device__ void load_a(unsigned* a, const unsigned char* img, unsigned cols, unsigned s, unsigned v, unsigned eb,
                       unsigned kind) {
  unsigned l = threadIdx.x % 32, g = l / 4, t = l % 4;
  for (int i = 0; i < 4; i++) a[i] = 0;
  for (unsigned i = 0; i < 4 * v; i++) {
    unsigned row = 16 * (threadIdx.x / 32 % 4) + g + 8 * ((i / v) & 1);
    unsigned col = v * t + i % v + 4 * v * (i / (2 * v));
    unsigned x = 0;
    for (unsigned by = 0; by < eb; by++) x |= (unsigned)img[row * cols + 32 * s + col * eb + by] << (8 * by);
    a[i / v] |= shape(x, kind, mode_of(row)) << (8 * (i % v) * eb);
  }
}

#define FENCE asm volatile("fence.proxy.async.shared::cta;\n wgmma.fence.sync.aligned;" ::: "memory")
#define DONE asm volatile("wgmma.commit_group.sync.aligned;\n wgmma.wait_group.sync.aligned 0;" ::: "memory")
#define R4 "{%0,%1,%2,%3}"
#define R8 "{%0,%1,%2,%3,%4,%5,%6,%7}"
#define R12 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11}"
#define R16 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}"
#define O4(d) "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
#define O8(d) O4(d), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7])
#define O12(d) O8(d), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11])
#define O16(d) O12(d), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15])
// scale-d from a register, as CUTLASS passes it.
#define SCALE(n) "{\n .reg .pred p;\n setp.ne.b32 p, %" #n ", 0;\n"

// m64n32k16 f32 += f16 . f16, both K-major with 128-byte swizzle: K = 64 in four steps,
// the descriptors' start 32 bytes further each step.
// in: A 64x64 halves (2048 words), B 32x64 halves (K-major, 1024), C 64x32 f32 (2048).
K wgmma_f16(const unsigned* in, unsigned* out, int n) {
  __shared__ __align__(1024) unsigned char sa[8192], sb[4096];
  const unsigned char* img = (const unsigned char*)in;
  place(sa, img, 64, 128, true, 8, 16, 1024, 2, 1);
  place(sb, img + 8192, 32, 128, true, 8, 16, 1024, 2, 1);
  __syncthreads();
  unsigned d[16];
  load_d(d, in + 3072, 32, 3);
  FENCE;
  for (unsigned s = 0; s < 4; s++) {
    unsigned long long da = desc(sa + 32 * s, 16, 1024, 1), db = desc(sb + 32 * s, 16, 1024, 1);
    asm volatile(SCALE(18) " wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 " R16 ", %16, %17, p, 1, 1, 0, 0;\n}"
                 : O16(d) : "l"(da), "l"(db), "r"(1));
  }
  DONE;
  store_d(d, out, 32);
}

// bf16 m64n16k16 with A from registers (negated) and B K-major, 64-byte swizzle, two K
// steps; then tf32 m64n8k8, A K-major with 32-byte swizzle, B without swizzle (negated),
// scale-d 0 (D's old values unused).
// in: bf16 A 64x32 (1024 words), B 16x32 (256), C 64x16 f32 (1024); tf32 A 64x8 (512),
// B 8x8 (64), D's old 64x8 (512). out: 64x16, then 64x8.
K wgmma_bf16_tf32(const unsigned* in, unsigned* out, int n) {
  __shared__ __align__(1024) unsigned char sb[1024], sa2[2048], sb2[256];
  const unsigned char* img = (const unsigned char*)in;
  place(sb, img + 4096, 16, 64, true, 4, 16, 512, 2, 2);
  place(sa2, img + 4096 + 1024 + 4096, 64, 32, true, 2, 16, 256, 4, 3);
  place(sb2, img + 4096 + 1024 + 4096 + 2048, 8, 32, true, 1, 128, 256, 4, 3);
  __syncthreads();
  unsigned d[8], a[4];
  load_d(d, in + 1280, 16, 3);
  FENCE;
  for (unsigned s = 0; s < 2; s++) {
    load_a(a, img, 64, s, 2, 2, 2);
    unsigned long long db = desc(sb + 32 * s, 16, 512, 2);
    asm volatile(SCALE(13) " wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 " R8 ", {%8,%9,%10,%11}, %12, p, -1, 1, 0;\n}"
                 : O8(d) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1));
  }
  DONE;
  store_d(d, out, 16);
  unsigned e[4];
  load_d(e, in + 2880, 8, 0);
  FENCE;
  asm volatile(SCALE(6) " wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 " R4 ", %4, %5, p, 1, -1;\n}"
               : O4(e) : "l"(desc(sa2, 16, 256, 3)), "l"(desc(sb2, 128, 256, 0)), "r"(0));
  DONE;
  store_d(e, out + 1024, 8);
}

// FP8: m64n16k32 f32 += e4m3 . e5m2 without swizzle; m64n8k32 f16 += e5m2 . e4m3 with A
// from registers and B 32-byte swizzled.
// in: A 64x32 bytes (512 words), B 16x32 (128), C 64x16 f32 (1024); A2 64x32 (512), B2
// 8x32 (64), C2 64x8 f16 (256). out: 64x16 words, then 64x8 halves.
K wgmma_fp8(const unsigned* in, unsigned* out, int n) {
  __shared__ __align__(1024) unsigned char sa[2048], sb[512], sb2[256];
  const unsigned char* img = (const unsigned char*)in;
  place(sa, img, 64, 32, true, 1, 128, 256, 1, 4);
  place(sb, img + 2048, 16, 32, true, 1, 128, 256, 1, 5);
  place(sb2, img + 2048 + 512 + 4096 + 2048, 8, 32, true, 2, 16, 256, 1, 4);
  __syncthreads();
  unsigned d[8], e[2], a[4];
  load_d(d, in + 640, 16, 3);
  load_d16(e, (const unsigned short*)(in + 640 + 1024 + 512 + 64), 8);
  load_a(a, img + 2048 + 512 + 4096, 32, 0, 4, 1, 13);
  FENCE;
  asm volatile(SCALE(10) " wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e5m2 " R8 ", %8, %9, p, 1, 1;\n}"
               : O8(d) : "l"(desc(sa, 128, 256, 0)), "l"(desc(sb, 128, 256, 0)), "r"(1));
  asm volatile(SCALE(7) " wgmma.mma_async.sync.aligned.m64n8k32.f16.e5m2.e4m3 {%0,%1}, {%2,%3,%4,%5}, %6, p, 1, 1;\n}"
               : "+r"(e[0]), "+r"(e[1]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc(sb2, 16, 256, 3)), "r"(1));
  DONE;
  store_d(d, out, 16);
  store_d16(e, (unsigned short*)(out + 1024), 8);
}

// Integers: m64n16k32 s32 += s8 . u8 .satfinite (64-byte swizzle, two K steps; C's large
// words saturate); m64n24k32 s32 += u8 . s8 without swizzle; m64n8k256 b1 .and.popc.
// in: A 64x64 (1024 words), B 16x64 (256), C 64x16 (1024); A2 64x32 (512), B2 24x32 (192),
// C2 64x24 (1536); A3 64x32 (512), B3 8x32 (64), C3 64x8 (512). out: the three Ds.
K wgmma_int(const unsigned* in, unsigned* out, int n) {
  __shared__ __align__(1024) unsigned char sa[4096], sb[1024], sa2[2048], sb2[768], sa3[2048], sb3[256];
  const unsigned char* img = (const unsigned char*)in;
  place(sa, img, 64, 64, true, 4, 16, 512, 1, 0);
  place(sb, img + 4096, 16, 64, true, 4, 16, 512, 1, 0);
  const unsigned char* i2 = img + 4096 + 1024 + 4096;
  place(sa2, i2, 64, 32, true, 1, 128, 256, 1, 0);
  place(sb2, i2 + 2048, 24, 32, true, 1, 128, 256, 1, 0);
  const unsigned char* i3 = i2 + 2048 + 768 + 6144;
  place(sa3, i3, 64, 32, true, 1, 128, 256, 1, 0);
  place(sb3, i3 + 2048, 8, 32, true, 1, 128, 256, 1, 0);
  __syncthreads();
  unsigned d[8], e[12], f[4];
  load_d(d, in + 1280, 16, 0);
  load_d(e, in + 2304 + 704, 24, 0);
  load_d(f, in + 2304 + 2240 + 576, 8, 0);
  FENCE;
  for (unsigned s = 0; s < 2; s++)
    asm volatile(SCALE(10) " wgmma.mma_async.sync.aligned.m64n16k32.satfinite.s32.s8.u8 " R8 ", %8, %9, p;\n}"
                 : O8(d) : "l"(desc(sa + 32 * s, 16, 512, 2)), "l"(desc(sb + 32 * s, 16, 512, 2)), "r"(1));
  asm volatile(SCALE(14) " wgmma.mma_async.sync.aligned.m64n24k32.s32.u8.s8 " R12 ", %12, %13, p;\n}"
               : O12(e) : "l"(desc(sa2, 128, 256, 0)), "l"(desc(sb2, 128, 256, 0)), "r"(1));
  asm volatile(SCALE(6) " wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc " R4 ", %4, %5, p;\n}"
               : O4(f) : "l"(desc(sa3, 128, 256, 0)), "l"(desc(sb3, 128, 256, 0)), "r"(1));
  DONE;
  store_d(d, out, 16);
  store_d(e, out + 1024, 24);
  store_d(f, out + 2560, 8);
}

// m64n64k16 f16 += f16 . f16 with A M-major and B N-major (imm-trans 1), 128-byte swizzle:
// two K steps (the second 16 rows of K two atoms on, at SBO), the first with A negated.
// in: A 32 k-rows x 64 halves (1024 words), B 32 x 64 halves (1024), C 64x64 f16 (2048).
K wgmma_mn_f16acc(const unsigned* in, unsigned* out, int n) {
  __shared__ __align__(1024) unsigned char sa[4096], sb[4096];
  const unsigned char* img = (const unsigned char*)in;
  place(sa, img, 32, 128, false, 8, 1024, 1024, 2, 9);
  place(sb, img + 4096, 32, 128, false, 8, 1024, 1024, 2, 9);
  __syncthreads();
  unsigned d[16];
  load_d16(d, (const unsigned short*)(in + 2048), 64);
  FENCE;
  asm volatile(SCALE(18) " wgmma.mma_async.sync.aligned.m64n64k16.f16.f16.f16 " R16 ", %16, %17, p, -1, 1, 1, 1;\n}"
               : O16(d) : "l"(desc(sa, 1024, 1024, 1)), "l"(desc(sb, 1024, 1024, 1)), "r"(1));
  asm volatile(SCALE(18) " wgmma.mma_async.sync.aligned.m64n64k16.f16.f16.f16 " R16 ", %16, %17, p, 1, 1, 1, 1;\n}"
               : O16(d) : "l"(desc(sa + 2048, 1024, 1024, 1)), "l"(desc(sb + 2048, 1024, 1024, 1)), "r"(1));
  DONE;
  store_d16(d, (unsigned short*)out, 64);
}

// FP8 mma.sync (sm_89), one warp each: m16n8k32 f32 += e4m3 . e4m3; m16n8k32 f32 += e5m2 .
// e4m3; m16n8k16 f32 += e4m3 . e5m2; m16n8k32 f16 += e5m2 . e5m2. Rows 14, 15 of A and C
// and columns 6, 7 of B take the subnormal and raw shapes. Fragments by the PTX
// ISA's formulas. in: per warp A 16x32 bytes (128 words), B 32x8 bytes (64), C 16x8 (128
// words; f16: the first 64). out: per warp 128 words (f16: 64 words of halves).
// Elements shaped by row (A) and column (B) as `shape` says, of kinds ka and kb.
__device__ void frag8(const unsigned char* A, const unsigned char* B, unsigned k, unsigned ka, unsigned kb,
                      unsigned* a, unsigned* b) {
  unsigned l = threadIdx.x % 32, g = l / 4, t = l % 4;
  for (int i = 0; i < 4; i++) a[i] = 0;
  b[0] = b[1] = 0;
  if (k == 32) {
    for (int i = 0; i < 16; i++) {
      unsigned row = g + 8 * ((i >> 2) & 1);
      a[i / 4] |= shape(A[row * 32 + 4 * t + (i & 3) + 16 * (i >> 3)], ka, mode_of(row)) << (8 * (i % 4));
    }
    for (int i = 0; i < 8; i++)
      b[i / 4] |= shape(B[(4 * t + (i & 3) + 16 * (i >> 2)) * 8 + g], kb, mode_of(g + 8)) << (8 * (i % 4));
  } else {
    for (int i = 0; i < 8; i++) {
      unsigned row = g + 8 * (i >> 2);
      a[i / 4] |= shape(A[row * 32 + 4 * t + (i & 3)], ka, mode_of(row)) << (8 * (i % 4));
    }
    for (int i = 0; i < 4; i++) b[0] |= shape(B[(4 * t + i) * 8 + g], kb, mode_of(g + 8)) << (8 * i);
  }
}
K mma_fp8(const unsigned* in, unsigned* out, int n) {
  unsigned w = threadIdx.x / 32, l = threadIdx.x % 32, g = l / 4, t = l % 4;
  const unsigned* base = in + 320 * w;
  const unsigned char* A = (const unsigned char*)base;
  const unsigned char* B = (const unsigned char*)(base + 128);
  const unsigned* C = base + 192;
  unsigned a[4], b[2], c[4], d[4];
  frag8(A, B, w == 2 ? 16 : 32, (w & 1 ? 5 : 4) | (w == 3 ? 8 : 0), (w >= 2 ? 5 : 4) | (w == 3 ? 8 : 0), a, b);
  for (int i = 0; i < 4; i++) c[i] = shape(C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)], 3, mode_of(g + 8 * (i >> 1)));
  if (w == 0)
    asm("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  else if (w == 1)
    asm("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  else if (w == 2)
    asm("mma.sync.aligned.m16n8k16.row.col.f32.e4m3.e5m2.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  if (w < 3) {
    for (int i = 0; i < 4; i++) out[128 * w + (g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
    return;
  }
  // f16 accumulators: C's halves, two to a register.
  const unsigned short* C16 = (const unsigned short*)C;
  unsigned c16[2], d16[2];
  for (int i = 0; i < 2; i++)
    c16[i] = shape(C16[(g + 8 * i) * 8 + 2 * t], 1, mode_of(g + 8 * i)) |
             shape(C16[(g + 8 * i) * 8 + 2 * t + 1], 1, mode_of(g + 8 * i)) << 16;
  asm("mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e5m2.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};"
      : "=r"(d16[0]), "=r"(d16[1])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c16[0]), "r"(c16[1]));
  unsigned short* O = (unsigned short*)(out + 128 * w);
  for (int i = 0; i < 2; i++) {
    O[(g + 8 * i) * 8 + 2 * t] = d16[i] & 0xffff;
    O[(g + 8 * i) * 8 + 2 * t + 1] = d16[i] >> 16;
  }
}

// Sparse wgmma (wgmma.mma_async.sp, 2:4): A's rows stored packed (64 x K/2), the place of
// each stored element in its chunk of four given by 4-bit metadata from the input (one of
// the six ordered pairs), every thread's different, so a metadata read from the wrong
// thread, bit or selector shows. f16 m64n32k32 f32 += A (packed 64x16, K-major, 32-byte
// swizzle) . B (32x32, K-major, 64-byte swizzle), selector 0; bf16 m64n16k32 with the
// packed A from registers (m16n8k16's A fragment of the packed rows), negated, B 64-byte
// swizzled, selector 1 (threads 2 and 3 of each four).
// in: A 64x16 halves (512 words), B 32x32 (512), C 64x32 f32 (2048); A2 64x16 bf16 (512),
// B2 16x32 (256), C2 64x16 f32 (1024); metadata words (2 x 128). out: 64x32, then 64x16.
__device__ unsigned sparse_meta(unsigned x) {
  const unsigned pairs[6] = {0x4, 0x8, 0xc, 0x9, 0xd, 0xe};  // (0,1) (0,2) (0,3) (1,2) (1,3) (2,3)
  unsigned m = 0;
  for (int i = 0; i < 8; i++) m |= pairs[((x >> (4 * i)) & 0xf) % 6] << (4 * i);
  return m;
}
K wgmma_sparse(const unsigned* in, unsigned* out, int n) {
  __shared__ __align__(1024) unsigned char sa[2048], sb[2048], sb2[1024];
  const unsigned char* img = (const unsigned char*)in;
  place(sa, img, 64, 32, true, 2, 16, 256, 2, 1);
  place(sb, img + 2048, 32, 64, true, 4, 16, 512, 2, 1);
  const unsigned char* i2 = img + 2048 + 2048 + 8192;
  place(sb2, i2 + 2048, 16, 64, true, 4, 16, 512, 2, 2);
  __syncthreads();
  const unsigned* metas = in + 512 + 512 + 2048 + 512 + 256 + 1024;
  unsigned e0 = sparse_meta(metas[threadIdx.x]), e1 = sparse_meta(metas[128 + threadIdx.x]);
  unsigned d[16], e[8], a[4];
  load_d(d, in + 1024, 32, 3);
  load_d(e, in + 512 + 512 + 2048 + 512 + 256, 16, 3);
  load_a(a, i2, 32, 0, 2, 2, 2);
  FENCE;
  asm volatile(SCALE(19) " wgmma.mma_async.sp.sync.aligned.m64n32k32.f32.f16.f16 " R16 ", %16, %17, %18, 0, p, 1, 1, 0, 0;\n}"
               : O16(d) : "l"(desc(sa, 16, 256, 3)), "l"(desc(sb, 16, 512, 2)), "r"(e0), "r"(1));
  asm volatile(SCALE(14) " wgmma.mma_async.sp.sync.aligned.m64n16k32.f32.bf16.bf16 " R8 ", {%8,%9,%10,%11}, %12, %13, 1, p, -1, 1, 0;\n}"
               : O8(e) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc(sb2, 16, 512, 2)), "r"(e1), "r"(1));
  DONE;
  store_d(d, out, 32);
  store_d(e, out + 2048, 16);
}

// Sparse wgmma of the other kinds: tf32 m64n8k16 (1:2, metadata nibbles 0b0100 or 0b1110,
// selector 1), A packed 64x8 with 32-byte swizzle, B 8x16 with 64-byte swizzle; s8
// m64n16k64 (2:4, every thread's metadata, selector 0), A packed 64x32 bytes with
// 32-byte swizzle, B 16x64 bytes with 64-byte swizzle, C's raw words wrapping.
// in: tf32 A (512 words), B (128), C 64x8 f32 (512); s8 A (512), B (256), C 64x16 (1024);
// metadata words (2 x 128). out: 64x8 f32, then 64x16 s32.
K wgmma_sparse_tf32_s8(const unsigned* in, unsigned* out, int n) {
  __shared__ __align__(1024) unsigned char sa[2048], sb[512], sa2[2048], sb2[1024];
  const unsigned char* img = (const unsigned char*)in;
  place(sa, img, 64, 32, true, 2, 16, 256, 4, 3);
  place(sb, img + 2048, 8, 64, true, 4, 16, 512, 4, 3);
  const unsigned char* i2 = img + 4 * (512 + 128 + 512);
  place(sa2, i2, 64, 32, true, 2, 16, 256, 1, 0);
  place(sb2, i2 + 2048, 16, 64, true, 4, 16, 512, 1, 0);
  __syncthreads();
  const unsigned* metas = in + 512 + 128 + 512 + 512 + 256 + 1024;
  unsigned x = metas[threadIdx.x], e0 = 0;
  for (int i = 0; i < 8; i++) e0 |= ((x >> i) & 1 ? 0xeu : 0x4u) << (4 * i);
  unsigned e1 = sparse_meta(metas[128 + threadIdx.x]);
  unsigned d[4], e[8];
  load_d(d, in + 640, 8, 3);
  load_d(e, in + 512 + 128 + 512 + 512 + 256, 16, 0);
  FENCE;
  asm volatile(SCALE(7) " wgmma.mma_async.sp.sync.aligned.m64n8k16.f32.tf32.tf32 " R4 ", %4, %5, %6, 1, p, 1, 1;\n}"
               : O4(d) : "l"(desc(sa, 16, 256, 3)), "l"(desc(sb, 16, 512, 2)), "r"(e0), "r"(1));
  asm volatile(SCALE(11) " wgmma.mma_async.sp.sync.aligned.m64n16k64.s32.s8.s8 " R8 ", %8, %9, %10, 0, p;\n}"
               : O8(e) : "l"(desc(sa2, 16, 256, 3)), "l"(desc(sb2, 16, 512, 2)), "r"(e1), "r"(1));
  DONE;
  store_d(d, out, 8);
  store_d(e, out + 512, 16);
}
