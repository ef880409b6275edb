// Forms compilers write that issue 21 found missing: half and bfloat16 min/max (with
// .NaN, .ftz, packed) and comparisons (set/setp on halves, packed p|q), bmsk and szext,
// indexed addresses of module arrays, warp reductions and votes over lane-varying member
// masks (cooperative groups' labeled partitions), and the special registers %envreg<n>,
// %reserved_smem_offset_*, %dynamic_smem_size, %globaltimer_lo/hi with nanosleep.
#define K extern "C" __global__ void

K half_minmax(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (2 * t + 1 >= n) return;
  // Raw words: halves of every kind (NaNs, infinities, subnormals, signed zeros).
  unsigned a = in[2 * t], b = in[2 * t + 1];
  unsigned short ha = a, hb = b, hc = a >> 16;
  unsigned r[12];
  unsigned short h[8];
  asm("min.f16x2 %0, %1, %2;" : "=r"(r[0]) : "r"(a), "r"(b));
  asm("max.f16x2 %0, %1, %2;" : "=r"(r[1]) : "r"(a), "r"(b));
  asm("min.NaN.f16x2 %0, %1, %2;" : "=r"(r[2]) : "r"(a), "r"(b));
  asm("max.NaN.f16x2 %0, %1, %2;" : "=r"(r[3]) : "r"(a), "r"(b));
  asm("min.ftz.f16x2 %0, %1, %2;" : "=r"(r[4]) : "r"(a), "r"(b));
  asm("max.ftz.NaN.f16x2 %0, %1, %2;" : "=r"(r[5]) : "r"(a), "r"(b));
  asm("min.bf16x2 %0, %1, %2;" : "=r"(r[6]) : "r"(a), "r"(b));
  asm("max.bf16x2 %0, %1, %2;" : "=r"(r[7]) : "r"(a), "r"(b));
  asm("min.NaN.bf16x2 %0, %1, %2;" : "=r"(r[8]) : "r"(a), "r"(b));
  asm("max.NaN.bf16x2 %0, %1, %2;" : "=r"(r[9]) : "r"(a), "r"(b));
  asm("min.f16 %0, %1, %2;" : "=h"(h[0]) : "h"(ha), "h"(hb));
  asm("max.f16 %0, %1, %2;" : "=h"(h[1]) : "h"(ha), "h"(hc));
  asm("min.NaN.f16 %0, %1, %2;" : "=h"(h[2]) : "h"(ha), "h"(hb));
  asm("max.ftz.f16 %0, %1, %2;" : "=h"(h[3]) : "h"(ha), "h"(hb));
  asm("min.bf16 %0, %1, %2;" : "=h"(h[4]) : "h"(ha), "h"(hb));
  asm("max.bf16 %0, %1, %2;" : "=h"(h[5]) : "h"(ha), "h"(hc));
  asm("max.NaN.bf16 %0, %1, %2;" : "=h"(h[6]) : "h"(ha), "h"(hb));
  asm("min.NaN.bf16 %0, %1, %2;" : "=h"(h[7]) : "h"(ha), "h"(hc));
  r[10] = h[0] | (unsigned)h[1] << 16;
  r[11] = h[2] | (unsigned)h[3] << 16;
  unsigned* o = out + 14 * t;
  for (int k = 0; k < 12; k++) o[k] = r[k];
  o[12] = h[4] | (unsigned)h[5] << 16;
  o[13] = h[6] | (unsigned)h[7] << 16;
}

K half_compare(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (2 * t + 1 >= n) return;
  unsigned a = in[2 * t], b = in[2 * t + 1];
  unsigned short ha = a, hb = b;
  unsigned r[12];
  unsigned short h[4];
  // setp on halves: p|q of packed, one predicate of scalars, combined with a predicate.
  asm("{ .reg .pred p, q; .reg .b32 l, h; setp.lt.f16x2 p|q, %1, %2; selp.u32 l, 1, 0, p; selp.u32 h, 2, 0, q; or.b32 %0, l, h; }"
      : "=r"(r[0]) : "r"(a), "r"(b));
  asm("{ .reg .pred p, q; .reg .b32 l, h; setp.geu.bf16x2 p|q, %1, %2; selp.u32 l, 1, 0, p; selp.u32 h, 2, 0, q; or.b32 %0, l, h; }"
      : "=r"(r[1]) : "r"(a), "r"(b));
  asm("{ .reg .pred p, q, c; .reg .b32 l, h; setp.ne.u32 c, %3, 0; setp.equ.and.f16x2 p|q, %1, %2, c; selp.u32 l, 1, 0, p; selp.u32 h, 2, 0, q; or.b32 %0, l, h; }"
      : "=r"(r[2]) : "r"(a), "r"(b), "r"(a & 0x100));
  asm("{ .reg .pred p; setp.le.f16 p, %1, %2; selp.u32 %0, 1, 0, p; }" : "=r"(r[3]) : "h"(ha), "h"(hb));
  asm("{ .reg .pred p; setp.nan.bf16 p, %1, %2; selp.u32 %0, 1, 0, p; }" : "=r"(r[4]) : "h"(ha), "h"(hb));
  asm("{ .reg .pred p; setp.gt.ftz.f16 p, %1, %2; selp.u32 %0, 1, 0, p; }" : "=r"(r[5]) : "h"(ha), "h"(hb));
  // set on halves: 1.0 in the destination's format, or all ones.
  asm("set.lt.f16x2.f16x2 %0, %1, %2;" : "=r"(r[6]) : "r"(a), "r"(b));
  asm("set.gtu.u32.f16x2 %0, %1, %2;" : "=r"(r[7]) : "r"(a), "r"(b));
  asm("set.ne.bf16x2.bf16x2 %0, %1, %2;" : "=r"(r[8]) : "r"(a), "r"(b));
  asm("set.lt.u32.f16 %0, %1, %2;" : "=r"(r[9]) : "h"(ha), "h"(hb));
  asm("set.ge.f16.f16 %0, %1, %2;" : "=h"(h[0]) : "h"(ha), "h"(hb));
  asm("set.le.u16.f16 %0, %1, %2;" : "=h"(h[1]) : "h"(ha), "h"(hb));
  asm("set.eq.bf16.f32 %0, %1, %2;" : "=h"(h[2]) : "f"(__uint_as_float(a)), "f"(__uint_as_float(b)));
  asm("set.num.s16.bf16 %0, %1, %2;" : "=h"(h[3]) : "h"(ha), "h"(hb));
  r[10] = h[0] | (unsigned)h[1] << 16;
  r[11] = h[2] | (unsigned)h[3] << 16;
  for (int k = 0; k < 12; k++) out[12 * t + k] = r[k];
}

K bmsk_szext(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (2 * t + 1 >= n) return;
  unsigned a = in[2 * t], b = in[2 * t + 1];
  // Positions and widths around 0, 32 and 255, and raw words.
  unsigned p = (t & 1) ? a : a % 40, w = (t & 2) ? b : b % 40;
  unsigned* o = out + 6 * t;
  asm("bmsk.clamp.b32 %0, %1, %2;" : "=r"(o[0]) : "r"(p), "r"(w));
  asm("bmsk.wrap.b32 %0, %1, %2;" : "=r"(o[1]) : "r"(p), "r"(w));
  asm("szext.clamp.s32 %0, %1, %2;" : "=r"(o[2]) : "r"(a), "r"(w));
  asm("szext.wrap.s32 %0, %1, %2;" : "=r"(o[3]) : "r"(a), "r"(w));
  asm("szext.clamp.u32 %0, %1, %2;" : "=r"(o[4]) : "r"(a), "r"(w));
  asm("szext.wrap.u32 %0, %1, %2;" : "=r"(o[5]) : "r"(a), "r"(w));
}

__constant__ unsigned table[64] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3};
__device__ unsigned garr[64];

K array_addresses(const unsigned* in, unsigned* out, int n) {
  __shared__ unsigned sarr[64];
  int t = threadIdx.x;
  // One writer a slot: threads t and t+64 writing the same one would race, and which
  // wins is the GPU's warp schedule, not the instruction's meaning.
  if (t < 64) sarr[t] = in[blockIdx.x * blockDim.x + t];
  if (t < 64) garr[t] = in[t] ^ 0x5a5a5a5a;
  __syncthreads();
  // Constant indices: nvcc addresses these as [sarr+16], [table+8], [garr+4].
  unsigned* o = out + 6 * (blockIdx.x * blockDim.x + t);
  o[0] = sarr[4] + sarr[0];
  o[1] = table[2] * table[0] + table[t % 16];
  o[2] = garr[1] + garr[0];
  o[3] = (unsigned)(size_t)&table[2] - (unsigned)(size_t)&table[0];
  o[4] = (unsigned)(size_t)&sarr[3] - (unsigned)(size_t)&sarr[0];
  o[5] = sarr[(t + 5) % 64];
}

K partitions(const unsigned* in, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = in[i];
  // What cooperative groups' labeled_partition + reduce compile to.
  unsigned g = __match_any_sync(__activemask(), v & 3);
  unsigned* o = out + 6 * i;
  o[0] = __reduce_add_sync(g, v);
  o[1] = __reduce_min_sync(g, v);
  o[2] = __reduce_max_sync(g, (unsigned)v);
  o[3] = __ballot_sync(g, v & 4);
  o[4] = __all_sync(g, v & 8);
  o[5] = g;
}

K special_registers_issue21(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned* o = out + 16 * t;
  unsigned r[13];
  asm("mov.u32 %0, %%envreg0;" : "=r"(r[0]));
  asm("mov.u32 %0, %%envreg1;" : "=r"(r[1]));
  asm("mov.u32 %0, %%envreg2;" : "=r"(r[2]));
  asm("mov.u32 %0, %%envreg31;" : "=r"(r[3]));
  asm("mov.u32 %0, %%reserved_smem_offset_begin;" : "=r"(r[4]));
  asm("mov.u32 %0, %%reserved_smem_offset_end;" : "=r"(r[5]));
  asm("mov.u32 %0, %%reserved_smem_offset_cap;" : "=r"(r[6]));
  asm("mov.u32 %0, %%reserved_smem_offset_0;" : "=r"(r[7]));
  asm("mov.u32 %0, %%reserved_smem_offset_1;" : "=r"(r[8]));
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r[9]));
  // The global timer counts up; its halves agree with the whole.
  unsigned long long g0, g1;
  unsigned lo, hi;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
  asm volatile("nanosleep.u32 1000;");
  asm volatile("mov.u32 %0, %%globaltimer_hi;" : "=r"(hi));
  asm volatile("mov.u32 %0, %%globaltimer_lo;" : "=r"(lo));
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
  r[10] = g1 > g0;
  r[11] = hi == (unsigned)(g1 >> 32) || hi + 1 == (unsigned)(g1 >> 32);
  r[12] = (g1 >> 32) == (g0 >> 32) ? lo >= (unsigned)g0 && lo <= (unsigned)g1 : 1;
  for (int k = 0; k < 13; k++) o[k] = r[k];
  o[13] = 0; o[14] = 0; o[15] = 0;
}
