// Approximate math: the hardware's results differ from correctly rounded ones in the
// last bits; the executor is compared with a tolerance (manifest: approx).
#define K extern "C" __global__ void
#define F(x) __uint_as_float(x)
#define U(x) __float_as_uint(x)

K f32_approx(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  // Moderate inputs: the approximations' errors are relative there.
  float a = (float)(int)(in[t] % 2000u - 1000) / 64.0f;
  float r0, r1, r2, r3;
  asm("tanh.approx.f32 %0, %1;" : "=f"(r0) : "f"(a));
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r1) : "f"(a / 8.0f));
  asm("lg2.approx.f32 %0, %1;" : "=f"(r2) : "f"(fabsf(a) + 1.0f));
  asm("rsqrt.approx.f32 %0, %1;" : "=f"(r3) : "f"(fabsf(a) + 0.5f));
  float r4;
  asm("div.full.f32 %0, %1, %2;" : "=f"(r4) : "f"(a), "f"(7.0f));  // within 2 ulp, not IEEE
  float r5, r6;
  asm("rcp.approx.f32 %0, %1;" : "=f"(r5) : "f"(a + 0.25f));
  asm("sqrt.approx.f32 %0, %1;" : "=f"(r6) : "f"(fabsf(a)));
  unsigned* o = out + 13 * t;
  o[0] = U(__expf(a / 8.0f)); o[1] = U(__logf(fabsf(a) + 1.0f)); o[2] = U(__sinf(a)); o[3] = U(__cosf(a));
  o[4] = U(__fdividef(a, 3.0f)); o[5] = U(expf(a / 8.0f)); o[6] = U(r0); o[7] = U(r1); o[8] = U(r2); o[9] = U(r3); o[10] = U(r4); o[11] = U(r5); o[12] = U(r6);
}

// The half-precision approximations: tanh and ex2 of f16 and bf16 pairs (sm_90's
// tanh.approx.bf16x2 and ex2.approx.ftz.bf16x2; f16's since sm_75), on raw halves and on
// halves scaled into the functions' interesting ranges.
K half_approx(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  unsigned x = in[t];
  // Two f16s of magnitude a quarter to one, and two bf16s a quarter to two, signs
  // from the word.
  unsigned s = ((x & 0x3ff) | 0x3400) | (x & 0x8000) | ((((x >> 16) & 0x3ff) | 0x3800 | ((x >> 16) & 0x8000)) << 16);
  unsigned b = ((x & 0x7f) | 0x3e80) | (x & 0x8000) | ((((x >> 16) & 0x7f) | 0x3f00 | ((x >> 16) & 0x8000)) << 16);
  unsigned r[8];
  asm("tanh.approx.f16x2 %0, %1;" : "=r"(r[0]) : "r"(x));
  asm("tanh.approx.f16x2 %0, %1;" : "=r"(r[1]) : "r"(s));
  asm("tanh.approx.bf16x2 %0, %1;" : "=r"(r[2]) : "r"(x));
  asm("tanh.approx.bf16x2 %0, %1;" : "=r"(r[3]) : "r"(b));
  asm("ex2.approx.f16x2 %0, %1;" : "=r"(r[4]) : "r"(s));
  asm("ex2.approx.ftz.bf16x2 %0, %1;" : "=r"(r[5]) : "r"(b));
  unsigned short h = (unsigned short)s, hb;
  asm("tanh.approx.bf16 %0, %1;" : "=h"(hb) : "h"((unsigned short)(b >> 16)));
  r[6] = hb;
  asm("tanh.approx.f16 %0, %1;" : "=h"(hb) : "h"(h));
  r[7] = hb;
  unsigned* o = out + 8 * t;
  for (int k = 0; k < 8; k++) o[k] = r[k];
}
