// Integer arithmetic of every width: wrap-around, high halves, division edge cases
// (by zero, INT_MIN / -1), min/max/abs, sad, funnel shifts.
#include <stdint.h>
#define K extern "C" __global__ void

K int32_ops(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (2 * t + 1 >= n) return;
  unsigned a = in[2 * t], b = in[2 * t + 1];
  int sa = (int)a, sb = (int)b;
  unsigned* o = out + 16 * t;
  o[0] = a + b; o[1] = a - b; o[2] = a * b; o[3] = __umulhi(a, b);
  o[4] = (unsigned)__mulhi(sa, sb); o[5] = max(sa, sb); o[6] = min(a, b); o[7] = (unsigned)abs(sa);
  o[8] = __usad(a, b, 7u); o[9] = __funnelshift_l(a, b, b); o[10] = __funnelshift_rc(a, b, a);
  o[11] = __mul24(sa, sb); o[12] = __umul24(a, b); o[13] = __hadd(sa, sb); o[14] = __urhadd(a, b);
  o[15] = (unsigned)(sa * 3 + sb);
}

K int32_div(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (2 * t + 1 >= n) return;
  unsigned a = in[2 * t], b = in[2 * t + 1];
  // Small divisors often, so quotients are interesting; never 0 or INT_MIN/-1 (undefined in C).
  if (t % 3 == 0) b &= 0xff;
  if (b == 0) b = 3;
  int sa = (int)a, sb = (int)b;
  if (sa == INT32_MIN && sb == -1) sb = 1;
  unsigned* o = out + 4 * t;
  o[0] = a / b; o[1] = a % b; o[2] = (unsigned)(sa / sb); o[3] = (unsigned)(sa % sb);
}

K int_div_ptx_edges(const unsigned* in, unsigned* out, int n) {
  // PTX div/rem by zero and INT_MIN / -1: defined by the hardware, not by C.
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  unsigned a = in[t];
  unsigned z = 0, m1 = 0xffffffffu;
  unsigned r0, r1, r2, r3, r4, r5;
  asm("div.u32 %0, %1, %2;" : "=r"(r0) : "r"(a), "r"(z));
  asm("rem.u32 %0, %1, %2;" : "=r"(r1) : "r"(a), "r"(z));
  asm("div.s32 %0, %1, %2;" : "=r"(r2) : "r"(a), "r"(z));
  asm("rem.s32 %0, %1, %2;" : "=r"(r3) : "r"(a), "r"(z));
  asm("div.s32 %0, %1, %2;" : "=r"(r4) : "r"(0x80000000u), "r"(m1));
  asm("rem.s32 %0, %1, %2;" : "=r"(r5) : "r"(0x80000000u), "r"(m1));
  unsigned* o = out + 6 * t;
  o[0] = r0; o[1] = r1; o[2] = r2; o[3] = r3; o[4] = r4; o[5] = r5;
}

K int64_ops(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (4 * t + 3 >= n) return;
  uint64_t a = ((uint64_t)in[4 * t] << 32) | in[4 * t + 1];
  uint64_t b = ((uint64_t)in[4 * t + 2] << 32) | in[4 * t + 3];
  int64_t sa = (int64_t)a, sb = (int64_t)b;
  uint64_t bd = b | 1;
  if (t % 2) bd &= 0xffff;
  int64_t sbd = (int64_t)bd;
  if (sa == INT64_MIN && sbd == -1) sbd = 7;
  uint64_t r[10] = {a + b, a - b, a * b, __umul64hi(a, b), (uint64_t)__mul64hi(sa, sb), a / bd, a % bd,
                    (uint64_t)(sa / sbd), (uint64_t)(sa % sbd), (uint64_t)max(sa, sb)};
  for (int k = 0; k < 10; k++) { out[20 * t + 2 * k] = (unsigned)r[k]; out[20 * t + 2 * k + 1] = (unsigned)(r[k] >> 32); }
}

K int16_8_ops(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  unsigned a = in[t];
  short s0 = (short)a, s1 = (short)(a >> 16);
  unsigned char c0 = (unsigned char)a, c1 = (unsigned char)(a >> 8);
  signed char d0 = (signed char)(a >> 16);
  unsigned* o = out + 6 * t;
  o[0] = (unsigned)(short)(s0 + s1); o[1] = (unsigned)(short)(s0 * s1); o[2] = (unsigned)(unsigned char)(c0 * c1);
  o[3] = (unsigned)(int)d0; o[4] = (unsigned)(s0 / (s1 | 1)); o[5] = (unsigned)(c0 >> (c1 & 7));
}
