// f32/f64 arithmetic in every rounding mode, with NaN, infinities, signed zeros and
// subnormals among the inputs (the host program mixes them in); min/max with NaN.
#define K extern "C" __global__ void
#define F(x) __uint_as_float(x)
#define U(x) __float_as_uint(x)

K f32_rounding(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (3 * t + 2 >= n) return;
  float a = F(in[3 * t]), b = F(in[3 * t + 1]), c = F(in[3 * t + 2]);
  unsigned* o = out + 20 * t;
  o[0] = U(__fadd_rn(a, b)); o[1] = U(__fadd_rz(a, b)); o[2] = U(__fadd_rd(a, b)); o[3] = U(__fadd_ru(a, b));
  o[4] = U(__fmul_rn(a, b)); o[5] = U(__fmul_rz(a, b)); o[6] = U(__fmul_rd(a, b)); o[7] = U(__fmul_ru(a, b));
  o[8] = U(__fmaf_rn(a, b, c)); o[9] = U(__fmaf_rz(a, b, c)); o[10] = U(__fmaf_rd(a, b, c)); o[11] = U(__fmaf_ru(a, b, c));
  o[12] = U(__fdiv_rn(a, b)); o[13] = U(__fdiv_rz(a, b)); o[14] = U(__fdiv_rd(a, b)); o[15] = U(__fdiv_ru(a, b));
  o[16] = U(__fsqrt_rn(a)); o[17] = U(__fsqrt_rz(a)); o[18] = U(__frcp_rn(a)); o[19] = U(__fsub_rn(a, c));
}

K f32_misc(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (2 * t + 1 >= n) return;
  float a = F(in[2 * t]), b = F(in[2 * t + 1]);
  unsigned r0, r1, r2, r3, r4;
  asm("add.ftz.f32 %0, %1, %2;" : "=r"(r0) : "f"(a), "f"(b));
  asm("mul.ftz.sat.f32 %0, %1, %2;" : "=r"(r1) : "f"(a), "f"(b));
  asm("min.NaN.f32 %0, %1, %2;" : "=r"(r2) : "f"(a), "f"(b));
  asm("max.ftz.f32 %0, %1, %2;" : "=r"(r3) : "f"(a), "f"(b));
  asm("mul.rz.ftz.f32 %0, %1, %2;" : "=r"(r4) : "f"(a), "f"(b));
  unsigned* o = out + 12 * t;
  o[0] = U(fminf(a, b)); o[1] = U(fmaxf(a, b)); o[2] = U(fabsf(a)); o[3] = U(-a); o[4] = U(copysignf(a, b));
  o[5] = U(a / b); o[6] = U(sqrtf(a)); o[7] = r0; o[8] = r1; o[9] = r2; o[10] = r3; o[11] = r4;
}

K f64_ops(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (6 * t + 5 >= n) return;
  double a = __hiloint2double(in[6 * t], in[6 * t + 1]);
  double b = __hiloint2double(in[6 * t + 2], in[6 * t + 3]);
  double c = __hiloint2double(in[6 * t + 4], in[6 * t + 5]);
  double r[14] = {__dadd_rn(a, b), __dadd_rz(a, b), __dadd_rd(a, b), __dadd_ru(a, b), __dmul_rz(a, b), __dmul_ru(a, b),
                  __fma_rn(a, b, c), __ddiv_rn(a, b), __ddiv_rz(a, b), __dsqrt_rn(a), __drcp_rn(a), fmin(a, b), fmax(a, b), a / b};
  for (int k = 0; k < 14; k++) { out[28 * t + 2 * k] = __double2loint(r[k]); out[28 * t + 2 * k + 1] = __double2hiint(r[k]); }
}

K f32_compare(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (2 * t + 1 >= n) return;
  float a = F(in[2 * t]), b = F(in[2 * t + 1]);
  if (t % 4 == 0) b = a;  // equal operands, NaN included
  unsigned m = 0;
  m |= (a < b) << 0; m |= (a <= b) << 1; m |= (a > b) << 2; m |= (a >= b) << 3; m |= (a == b) << 4;
  m |= (a != b) << 5; m |= !(a < b) << 6; m |= !(a >= b) << 7; m |= isnan(a) << 8; m |= isinf(b) << 9;
  m |= isfinite(a) << 10; m |= signbit(a) << 11;
  unsigned s0, s1;
  asm("set.gtu.u32.f32 %0, %1, %2;" : "=r"(s0) : "f"(a), "f"(b));
  asm("set.le.f32.f32 %0, %1, %2;" : "=r"(s1) : "f"(a), "f"(b));
  unsigned* o = out + 4 * t;
  o[0] = m; o[1] = s0; o[2] = s1; o[3] = U(a < b ? a : b);
}
