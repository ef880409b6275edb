// Conversions between every type with rounding and saturation: float to int (NaN, out of
// range), int to float in each mode, f64 to f32, half and bfloat16, cvt.sat narrowing.
#define K extern "C" __global__ void
#define F(x) __uint_as_float(x)
#define U(x) __float_as_uint(x)

K cvt_float_int(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  unsigned x = in[t];
  float a = F(x);
  if (t % 3 == 1) a = (float)(int)x / 16.0f;  // halves and quarters for the ties
  unsigned long long l = __float2ull_rz(a);
  unsigned* o = out + 18 * t;
  o[0] = __float2int_rn(a); o[1] = __float2int_rz(a); o[2] = __float2int_rd(a); o[3] = __float2int_ru(a);
  o[4] = __float2uint_rn(a); o[5] = __float2uint_rz(a);
  o[6] = (unsigned)__float2ll_rn(a); o[7] = (unsigned)(__float2ll_rn(a) >> 32); o[8] = (unsigned)l; o[9] = (unsigned)(l >> 32);
  o[10] = U(__int2float_rn((int)x)); o[11] = U(__int2float_rz((int)x)); o[12] = U(__uint2float_rd(x)); o[13] = U(__uint2float_ru(x));
  o[14] = U(rintf(a)); o[15] = U(truncf(a)); o[16] = U(floorf(a)); o[17] = U(ceilf(a));
}

K cvt_wide(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (2 * t + 1 >= n) return;
  long long v = (long long)(((unsigned long long)in[2 * t] << 32) | in[2 * t + 1]);
  if (t % 2) v >>= (in[2 * t] & 31);
  double d = __hiloint2double(in[2 * t], in[2 * t + 1]);
  unsigned* o = out + 10 * t;
  o[0] = U(__ll2float_rn(v)); o[1] = U(__ll2float_rz(v)); o[2] = U(__ull2float_rd((unsigned long long)v));
  double dv = __ll2double_rz(v);
  o[3] = __double2loint(dv); o[4] = __double2hiint(dv);
  o[5] = U(__double2float_rn(d)); o[6] = U(__double2float_rz(d)); o[7] = U(__double2float_rd(d)); o[8] = U(__double2float_ru(d));
  o[9] = (unsigned)__double2int_rn(d);
}

K cvt_half_sat(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  unsigned x = in[t];
  float a = F(x);
  // Half and bfloat16 through PTX directly (cuda_fp16.h needs headers the registry
  // packages lack).
  unsigned short h, hz, bf;
  float h2, bff;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(a));
  asm("cvt.rz.f16.f32 %0, %1;" : "=h"(hz) : "f"(a));
  asm("cvt.f32.f16 %0, %1;" : "=f"(h2) : "h"((unsigned short)x));
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(bf) : "f"(a));
  asm("cvt.f32.bf16 %0, %1;" : "=f"(bff) : "h"(bf));
  int s = (int)x;
  unsigned r0, r1, r2, r3;
  asm("cvt.sat.s8.s32 %0, %1;" : "=r"(r0) : "r"(s));
  asm("cvt.sat.u16.s32 %0, %1;" : "=r"(r1) : "r"(s));
  asm("cvt.rzi.sat.u8.f32 %0, %1;" : "=r"(r2) : "f"(a));
  asm("cvt.sat.f32.f32 %0, %1;" : "=r"(r3) : "f"(a));
  unsigned* o = out + 10 * t;
  o[0] = h; o[1] = U(h2); o[2] = bf; o[3] = U(bff);
  o[4] = hz; o[5] = r0 & 0xff; o[6] = r1 & 0xffff; o[7] = r2 & 0xff; o[8] = r3;
  o[9] = U(__saturatef(a));
}

// sm_89/sm_90's FP8 conversions (what cuda_fp8.h's intrinsics emit): f32 pairs and f16x2
// to e4m3x2/e5m2x2 (round to nearest even, saturating to the largest finite), with and
// without .relu, and back to f16x2. Raw words bring the specials (NaN, infinities,
// zeros, subnormals); a scaled value per word sweeps the formats' own ranges.
K cvt_fp8(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  unsigned x = in[t];
  float a = F(x);
  float c = ldexpf(1.0f + (x & 0xffff) / 65536.0f, (int)((x >> 16) % 48) - 24);
  if (x & 0x80000000u) c = -c;
  unsigned short r[8];
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r[0]) : "f"(a), "f"(c));
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(r[1]) : "f"(a), "f"(c));
  asm("cvt.rn.satfinite.relu.e4m3x2.f32 %0, %1, %2;" : "=h"(r[2]) : "f"(c), "f"(a));
  asm("cvt.rn.satfinite.relu.e5m2x2.f32 %0, %1, %2;" : "=h"(r[3]) : "f"(c), "f"(a));
  asm("cvt.rn.satfinite.e4m3x2.f16x2 %0, %1;" : "=h"(r[4]) : "r"(x));
  asm("cvt.rn.satfinite.e5m2x2.f16x2 %0, %1;" : "=h"(r[5]) : "r"(x));
  asm("cvt.rn.satfinite.relu.e4m3x2.f16x2 %0, %1;" : "=h"(r[6]) : "r"(x));
  asm("cvt.rn.satfinite.relu.e5m2x2.f16x2 %0, %1;" : "=h"(r[7]) : "r"(x));
  unsigned h[6];
  unsigned short lo = (unsigned short)x, hi = (unsigned short)(x >> 16);
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h[0]) : "h"(lo));
  asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(h[1]) : "h"(lo));
  asm("cvt.rn.relu.f16x2.e4m3x2 %0, %1;" : "=r"(h[2]) : "h"(hi));
  asm("cvt.rn.relu.f16x2.e5m2x2 %0, %1;" : "=r"(h[3]) : "h"(hi));
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h[4]) : "h"(hi));
  asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(h[5]) : "h"(hi));
  unsigned* o = out + 10 * t;
  o[0] = r[0] | (unsigned)r[1] << 16; o[1] = r[2] | (unsigned)r[3] << 16;
  o[2] = r[4] | (unsigned)r[5] << 16; o[3] = r[6] | (unsigned)r[7] << 16;
  for (int k = 0; k < 6; k++) o[4 + k] = h[k];
}
