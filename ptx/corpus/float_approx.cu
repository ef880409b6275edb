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
