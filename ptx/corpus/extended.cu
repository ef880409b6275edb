// Carry chains (add.cc/addc/sub.cc/subc/mad.cc), packed half and bfloat16 arithmetic,
// dp4a, elect.sync.
#define K extern "C" __global__ void

K carry_chains(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (4 * t + 3 >= n) return;
  unsigned a0 = in[4 * t], a1 = in[4 * t + 1], b0 = in[4 * t + 2], b1 = in[4 * t + 3];
  unsigned s0, s1, s2, d0, d1, d2, m0, m1;
  asm("add.cc.u32 %0, %3, %5;\n\taddc.cc.u32 %1, %4, %6;\n\taddc.u32 %2, 0, 0;"
      : "=r"(s0), "=r"(s1), "=r"(s2) : "r"(a0), "r"(a1), "r"(b0), "r"(b1));
  asm("sub.cc.u32 %0, %3, %5;\n\tsubc.cc.u32 %1, %4, %6;\n\tsubc.u32 %2, 0, 0;"
      : "=r"(d0), "=r"(d1), "=r"(d2) : "r"(a0), "r"(a1), "r"(b0), "r"(b1));
  asm("mad.lo.cc.u32 %0, %2, %3, %4;\n\tmadc.hi.u32 %1, %2, %3, %5;" : "=r"(m0), "=r"(m1) : "r"(a0), "r"(b0), "r"(a1), "r"(b1));
  unsigned long long w = ((unsigned long long)a1 << 32 | a0) * ((unsigned long long)b1 << 32 | b0);
  unsigned* o = out + 10 * t;
  o[0] = s0; o[1] = s1; o[2] = s2; o[3] = d0; o[4] = d1; o[5] = d2; o[6] = m0; o[7] = m1;
  o[8] = (unsigned)w; o[9] = (unsigned)(w >> 32);
}

K packed_halves(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (3 * t + 2 >= n) return;
  // Inputs as half pairs; finite-ish ones mostly (mask the exponents' top bit).
  unsigned a = in[3 * t] & 0xbfffbfff, b = in[3 * t + 1] & 0xbfffbfff, c = in[3 * t + 2] & 0xbfffbfff;
  unsigned r[8];
  asm("add.rn.f16x2 %0, %1, %2;" : "=r"(r[0]) : "r"(a), "r"(b));
  asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r[1]) : "r"(a), "r"(b));
  asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r[2]) : "r"(a), "r"(b), "r"(c));
  asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(r[3]) : "r"(a), "r"(b), "r"(c));
  asm("add.rn.bf16x2 %0, %1, %2;" : "=r"(r[4]) : "r"(a), "r"(b));
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r[5]) : "f"(__uint_as_float(in[3 * t])), "f"(__uint_as_float(in[3 * t + 1])));
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r[6]) : "f"(__uint_as_float(in[3 * t])), "f"(__uint_as_float(in[3 * t + 1])));
  asm("neg.f16x2 %0, %1;" : "=r"(r[7]) : "r"(a));
  for (int k = 0; k < 8; k++) out[8 * t + k] = r[k];
}

K dp4a_elect(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  unsigned a = in[t], b = in[(t + 1) % n], c = in[(t + 2) % n];
  unsigned leader = 0, is_leader = 0;
  if (a & 4) {
    asm("{ .reg .pred p; elect.sync %0|p, 0xffffffff; selp.u32 %1, 1, 0, p; }" : "=r"(leader), "=r"(is_leader));
  }
  unsigned* o = out + 4 * t;
  o[0] = __dp4a(a, b, c); o[1] = (unsigned)__dp4a((int)a, (int)b, (int)c); o[2] = leader; o[3] = is_leader;
}
