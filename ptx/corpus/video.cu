// Issue 21's "all of PTX 9.0 for sm_90": the video instructions (scalar vadd...vset with
// byte/half selectors, .sat, secondary operations and merges; vmad with negation, .po
// and scaling; the SIMD vop2/vop4 with selectors, masks, .sat and .add), dp2a, fns,
// slct, cvt.pack.sat, sad (stack_system.cu has alloca and the system's registers).
// Threads 0..63 take their operands from a table of edge values (bytes and halves at
// their limits in every position), the others from the input words.
#define K extern "C" __global__ void

__device__ unsigned edge(int i) {
  const unsigned e[16] = {0u,          1u,          0x7fu,       0x80u,
                          0xffu,       0x7fffu,     0x8000u,     0xffffu,
                          0x7fffffffu, 0x80000000u, 0xffffffffu, 0x80ff7f01u,
                          0x0180ff7fu, 0x12345678u, 0xfffe0002u, 33u};
  return e[i & 15];
}

// The three operands of thread t.
__device__ void operands(const unsigned* in, int t, unsigned* a, unsigned* b, unsigned* c) {
  if (t < 64) {
    *a = edge(t);
    *b = edge(t / 4 + t);
    *c = edge(t * 7 + 3);
  } else {
    *a = in[3 * t];
    *b = in[3 * t + 1];
    *c = in[3 * t + 2];
  }
}

#define V(k, form) asm(form " %0, %1, %2;" : "=r"(r[k]) : "r"(a), "r"(b))
#define V3(k, form, sel) asm(form " %0" sel ", %1, %2, %3;" : "=r"(r[k]) : "r"(a), "r"(b), "r"(c))

K video_scalar(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (3 * t + 2 >= n) return;
  unsigned a, b, c, r[40];
  operands(in, t, &a, &b, &c);
  asm("vadd.u32.u32.u32 %0, %1, %2;" : "=r"(r[0]) : "r"(a), "r"(b));
  asm("vadd.s32.u32.s32.sat %0, %1, %2;" : "=r"(r[1]) : "r"(a), "r"(b));
  asm("vadd.s32.s32.s32.sat %0, %1.b0, %2.h1;" : "=r"(r[2]) : "r"(a), "r"(b));
  asm("vadd.u32.s32.u32.sat %0, %1.h0, %2.b3;" : "=r"(r[3]) : "r"(a), "r"(b));
  asm("vsub.u32.u32.u32.sat %0, %1, %2;" : "=r"(r[4]) : "r"(a), "r"(b));
  asm("vsub.s32.s32.s32 %0, %1.b2, %2.b1;" : "=r"(r[5]) : "r"(a), "r"(b));
  asm("vsub.s32.u32.u32.sat %0, %1, %2;" : "=r"(r[6]) : "r"(a), "r"(b));
  asm("vabsdiff.u32.s32.s32 %0, %1, %2;" : "=r"(r[7]) : "r"(a), "r"(b));
  asm("vabsdiff.s32.s32.u32.sat %0, %1.h1, %2.h0;" : "=r"(r[8]) : "r"(a), "r"(b));
  asm("vmin.s32.s32.u32 %0, %1, %2;" : "=r"(r[9]) : "r"(a), "r"(b));
  asm("vmax.u32.s32.s32.sat %0, %1.b3, %2.b0;" : "=r"(r[10]) : "r"(a), "r"(b));
  V3(11, "vadd.s32.s32.s32.add", "");
  V3(12, "vadd.u32.u32.u32.sat.add", "");
  V3(13, "vsub.s32.s32.s32.min", "");
  V3(14, "vabsdiff.u32.u32.u32.max", "");
  V3(15, "vmin.u32.u32.s32.min", "");
  V3(16, "vmax.s32.u32.s32.sat.max", "");
  // Merges: the result's byte or half into c.
  V3(17, "vadd.u32.u32.u32", ".b0");
  V3(18, "vadd.s32.s32.s32.sat", ".b1");
  V3(19, "vsub.u32.u32.u32.sat", ".b2");
  V3(20, "vabsdiff.s32.u32.u32.sat", ".b3");
  V3(21, "vmax.s32.s32.s32.sat", ".h0");
  V3(22, "vsub.u32.s32.s32.sat", ".h1");
  // Shifts: b is .u32, .clamp stops at 32, .wrap takes it mod 32.
  asm("vshl.u32.u32.u32.clamp %0, %1, %2;" : "=r"(r[23]) : "r"(a), "r"(b));
  asm("vshl.u32.u32.u32.wrap %0, %1, %2;" : "=r"(r[24]) : "r"(a), "r"(b));
  asm("vshl.s32.s32.u32.sat.clamp %0, %1, %2.b0;" : "=r"(r[25]) : "r"(a), "r"(b));
  asm("vshr.s32.s32.u32.clamp %0, %1, %2;" : "=r"(r[26]) : "r"(a), "r"(b));
  asm("vshr.u32.u32.u32.wrap %0, %1.h1, %2.b0;" : "=r"(r[27]) : "r"(a), "r"(b));
  asm("vshr.s32.s32.u32.wrap.add %0, %1.b1, %2.b0, %3;" : "=r"(r[28]) : "r"(a), "r"(b), "r"(c));
  asm("vshl.u32.u32.u32.sat.clamp %0.h1, %1.b0, %2.b0, %3;" : "=r"(r[29]) : "r"(a), "r"(b), "r"(c));
  // vset: an unsigned 0 or 1.
  asm("vset.u32.u32.lt %0, %1, %2;" : "=r"(r[30]) : "r"(a), "r"(b));
  asm("vset.s32.u32.lt %0, %1, %2;" : "=r"(r[31]) : "r"(a), "r"(b));
  asm("vset.s32.s32.ge %0, %1.b0, %2.b1;" : "=r"(r[32]) : "r"(a), "r"(b));
  asm("vset.u32.s32.eq.add %0, %1.h0, %2.h1, %3;" : "=r"(r[33]) : "r"(a), "r"(b), "r"(c));
  asm("vset.s32.s32.ne.min %0, %1, %2, %3;" : "=r"(r[34]) : "r"(a), "r"(b), "r"(c));
  asm("vset.u32.u32.gt.max %0, %1, %2, %3;" : "=r"(r[35]) : "r"(a), "r"(b), "r"(c));
  asm("vset.s32.u32.le %0.b2, %1.b3, %2.h0, %3;" : "=r"(r[36]) : "r"(a), "r"(b), "r"(c));
  // The same operand twice, and a with c.
  asm("vsub.s32.s32.s32.sat %0, %1, %1;" : "=r"(r[37]) : "r"(a));
  asm("vmin.s32.s32.s32.add %0, %1.h1, %2.b2, %1;" : "=r"(r[38]) : "r"(a), "r"(c));
  asm("vmax.u32.u32.u32.sat.min %0, %1.b1, %2.h1, %2;" : "=r"(r[39]) : "r"(b), "r"(c));
  for (int k = 0; k < 40; k++) out[40 * t + k] = r[k];
}

K video_mad(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (3 * t + 2 >= n) return;
  unsigned a, b, c, r[16];
  operands(in, t, &a, &b, &c);
#define M(k, form, ops) asm(form " %0, " ops ";" : "=r"(r[k]) : "r"(a), "r"(b), "r"(c))
  M(0, "vmad.u32.u32.u32", "%1, %2, %3");
  M(1, "vmad.u32.u32.u32.sat", "%1, %2, %3");
  M(2, "vmad.s32.s32.s32.sat", "%1, %2, %3");
  M(3, "vmad.u32.u32.u32.shr15", "%1.h0, %2.h0, %3");
  M(4, "vmad.s32.s32.u32.shr7", "%1, %2.b1, %3");
  M(5, "vmad.s32.u32.u32", "%1, %2, -%3");
  M(6, "vmad.s32.u32.u32.sat", "%1.h1, %2.h1, -%3");
  M(7, "vmad.s32.s32.s32", "-%1, %2, %3");
  M(8, "vmad.s32.s32.u32.sat", "%1.b0, -%2.b2, %3");
  M(9, "vmad.s32.s32.s32", "-%1, -%2, %3");
  M(10, "vmad.u32.u32.u32.po", "%1, %2, %3");
  M(11, "vmad.u32.u32.u32.po.shr7", "%1.b0, %2.b1, %3");
  M(12, "vmad.s32.s32.s32.po.sat.shr15", "%1, %2, %3");
  M(13, "vmad.s32.u32.s32.sat.shr15", "%1, -%2.h0, %3");
  M(14, "vmad.s32.s32.s32.shr7", "%1.h1, %2.h0, -%3");
  M(15, "vmad.u32.u32.u32.sat.shr7", "%1, %2, %3");
  for (int k = 0; k < 16; k++) out[16 * t + k] = r[k];
}

// Forms the first recording did not hold, where the executor's rules come from the SASS
// ptxas writes for them (src/video.rs): the .h1 merge without .sat, unsigned .sat of
// whole results into .min/.max, vset's c in a's sign, saturated shifts into merges, shifts
// into .min/.max, and vmad's signed multiply, sign-extended c and logical scale.
K video_scalar_h200(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (3 * t + 2 >= n) return;
  unsigned a, b, c, r[16];
  operands(in, t, &a, &b, &c);
  V3(0, "vadd.u32.u32.u32", ".h1");
  V3(1, "vabsdiff.u32.s32.s32.sat.max", "");
  V3(2, "vset.u32.s32.lt.min", "");
  V3(3, "vset.s32.u32.gt.max", "");
  asm("vshr.s32.s32.u32.sat.clamp %0.h1, %1, %2.b0, %3;" : "=r"(r[4]) : "r"(a), "r"(b), "r"(c));
  asm("vshl.s32.s32.u32.sat.wrap %0.b1, %1.h0, %2, %3;" : "=r"(r[5]) : "r"(a), "r"(b), "r"(c));
  asm("vshl.u32.u32.u32.clamp.max %0, %1, %2.b0, %3;" : "=r"(r[6]) : "r"(a), "r"(b), "r"(c));
  asm("vshr.u32.s32.u32.wrap.min %0, %1, %2, %3;" : "=r"(r[7]) : "r"(a), "r"(b), "r"(c));
  V(8, "vmin.u32.s32.s32.sat");
  V(9, "vabsdiff.u32.s32.u32.sat");
  V3(10, "vmax.s32.u32.u32.sat.min", "");
  V3(11, "vsub.u32.u32.u32.max", "");
  V3(12, "vadd.s32.s32.s32.sat.min", "");
  asm("vshl.u32.s32.u32.sat.clamp %0, %1.b2, %2.b1;" : "=r"(r[13]) : "r"(a), "r"(b));
  V3(14, "vabsdiff.s32.s32.s32.sat", ".h1");
  asm("vset.s32.s32.lt %0.h1, %1.b1, %2.h0, %3;" : "=r"(r[15]) : "r"(a), "r"(b), "r"(c));
  for (int k = 0; k < 16; k++) out[16 * t + k] = r[k];
}

K video_mad_h200(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (3 * t + 2 >= n) return;
  unsigned a, b, c, r[8];
  operands(in, t, &a, &b, &c);
  M(0, "vmad.u32.u32.u32.shr7", "%1, %2, %3");
  M(1, "vmad.s32.u32.u32.po.sat", "%1, %2, %3");
  M(2, "vmad.s32.s32.u32.sat.shr15", "%1, %2, -%3");
  M(3, "vmad.s32.u32.s32", "-%1.h1, %2, %3");
  M(4, "vmad.u32.s32.s32.sat.shr7", "%1, %2, %3");
  M(5, "vmad.s32.u32.u32.sat", "-%1.b3, %2.h0, %3");
  M(6, "vmad.u32.u32.u32.po.sat.shr15", "%1, %2, %3");
  M(7, "vmad.s32.s32.s32.sat.shr7", "%1.b2, -%2.b3, %3");
  for (int k = 0; k < 8; k++) out[8 * t + k] = r[k];
}

K video_simd2(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (3 * t + 2 >= n) return;
  unsigned a, b, c, r[24];
  operands(in, t, &a, &b, &c);
#define S(k, form, ops) asm(form " %0" ops ";" : "=r"(r[k]) : "r"(a), "r"(b), "r"(c))
  S(0, "vadd2.u32.u32.u32", ", %1, %2, %3");
  S(1, "vadd2.u32.u32.u32.sat", ", %1, %2, %3");
  S(2, "vadd2.s32.s32.s32.sat", ", %1, %2, %3");
  S(3, "vadd2.s32.s32.u32.sat", ", %1, %2, %3");
  S(4, "vsub2.s32.s32.s32.sat", ".h0, %1.h10, %2.h32, %3");
  S(5, "vsub2.u32.u32.u32.sat", ".h1, %1.h01, %2.h23, %3");
  S(6, "vsub2.u32.s32.s32", ", %1.h32, %2.h10, %3");
  S(7, "vavrg2.u32.u32.u32", ", %1, %2, %3");
  S(8, "vavrg2.s32.s32.s32", ", %1, %2, %3");
  S(9, "vavrg2.s32.s32.u32.sat", ", %1.h11, %2.h00, %3");
  S(10, "vabsdiff2.u32.u32.u32", ", %1, %2, %3");
  S(11, "vabsdiff2.s32.s32.s32.sat", ", %1, %2, %3");
  S(12, "vmin2.s32.u32.u32.add", ".h10, %1.h00, %2.h22, %3");
  S(13, "vmin2.s32.s32.s32", ", %1, %2, %3");
  S(14, "vmax2.u32.u32.s32", ", %1.h02, %2.h31, %3");
  S(15, "vmax2.s32.s32.s32.add", ".h1, %1, %2, %3");
  S(16, "vadd2.s32.s32.s32.add", ", %1, %2, %3");
  S(17, "vsub2.u32.u32.u32.add", ", %1, %2, %3");
  S(18, "vabsdiff2.u32.u32.u32.add", ".h0, %1, %2, %3");
  S(19, "vset2.u32.u32.lt", ", %1, %2, %3");
  S(20, "vset2.s32.s32.ge", ".h0, %1.h30, %2.h12, %3");
  S(21, "vset2.s32.u32.ne.add", ", %1, %2, %3");
  S(22, "vset2.u32.s32.eq", ".h1, %1, %2, %3");
  S(23, "vset2.s32.s32.gt.add", ".h1, %1.h21, %2.h03, %3");
  for (int k = 0; k < 24; k++) out[24 * t + k] = r[k];
}

K video_simd4(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (3 * t + 2 >= n) return;
  unsigned a, b, c, r[24];
  operands(in, t, &a, &b, &c);
  S(0, "vadd4.u32.u32.u32", ", %1, %2, %3");
  S(1, "vadd4.u32.u32.u32.sat", ", %1, %2, %3");
  S(2, "vadd4.s32.s32.s32.sat", ", %1, %2, %3");
  S(3, "vadd4.u32.s32.s32.sat", ".b31, %1, %2, %3");
  S(4, "vsub4.s32.s32.s32.sat", ".b3210, %1.b0123, %2.b7654, %3");
  S(5, "vsub4.u32.u32.u32.sat", ".b20, %1.b4567, %2.b3210, %3");
  S(6, "vsub4.s32.u32.s32", ", %1.b7531, %2.b6420, %3");
  S(7, "vavrg4.u32.u32.u32", ", %1, %2, %3");
  S(8, "vavrg4.s32.s32.s32", ", %1, %2, %3");
  S(9, "vavrg4.s32.s32.u32.sat", ".b321, %1.b3300, %2.b4477, %3");
  S(10, "vabsdiff4.u32.u32.u32", ", %1, %2, %3");
  S(11, "vabsdiff4.s32.s32.s32.sat", ", %1, %2, %3");
  S(12, "vabsdiff4.u32.u32.u32.add", ", %1, %2, %3");
  S(13, "vabsdiff4.s32.s32.s32.add", ".b10, %1, %2, %3");
  S(14, "vmin4.s32.u32.u32.add", ".b3210, %1.b0000, %2.b7777, %3");
  S(15, "vmin4.s32.s32.s32", ", %1, %2, %3");
  S(16, "vmax4.u32.u32.s32", ".b2, %1.b1234, %2.b5670, %3");
  S(17, "vmax4.s32.s32.s32.add", ", %1, %2, %3");
  S(18, "vadd4.s32.s32.s32.add", ", %1, %2, %3");
  S(19, "vsub4.u32.u32.u32.add", ", %1, %2, %3");
  S(20, "vset4.u32.u32.lt", ", %1, %2, %3");
  S(21, "vset4.s32.s32.ge", ".b30, %1.b3120, %2.b4657, %3");
  S(22, "vset4.s32.u32.ne.add", ", %1, %2, %3");
  S(23, "vset4.u32.s32.le.add", ".b21, %1, %2, %3");
  for (int k = 0; k < 24; k++) out[24 * t + k] = r[k];
}

K int_forms_issue21(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (3 * t + 2 >= n) return;
  unsigned a, b, c, r[24];
  operands(in, t, &a, &b, &c);
  asm("dp2a.lo.u32.u32 %0, %1, %2, %3;" : "=r"(r[0]) : "r"(a), "r"(b), "r"(c));
  asm("dp2a.hi.u32.u32 %0, %1, %2, %3;" : "=r"(r[1]) : "r"(a), "r"(b), "r"(c));
  asm("dp2a.lo.s32.u32 %0, %1, %2, %3;" : "=r"(r[2]) : "r"(a), "r"(b), "r"(c));
  asm("dp2a.hi.u32.s32 %0, %1, %2, %3;" : "=r"(r[3]) : "r"(a), "r"(b), "r"(c));
  asm("dp2a.hi.s32.s32 %0, %1, %2, %3;" : "=r"(r[4]) : "r"(a), "r"(b), "r"(c));
  // fns: the base in 0..31, the offset small and signed (and, once, anything).
  unsigned base = b & 31;
  int off = (int)(c % 9) - 4;
  asm("fns.b32 %0, %1, %2, %3;" : "=r"(r[5]) : "r"(a), "r"(base), "r"(off));
  asm("fns.b32 %0, %1, %2, %3;" : "=r"(r[6]) : "r"(a), "r"(base), "r"(0));
  asm("fns.b32 %0, %1, %2, %3;" : "=r"(r[7]) : "r"(a), "r"(base), "r"(c));
  asm("fns.b32 %0, %1, %2, %3;" : "=r"(r[8]) : "r"(~a), "r"(31 - base), "r"(-off));
  // slct on an integer and a float c (NaNs, signed zeros, subnormals from the inputs).
  asm("slct.u32.s32 %0, %1, %2, %3;" : "=r"(r[9]) : "r"(a), "r"(b), "r"(c));
  asm("slct.b32.f32 %0, %1, %2, %3;" : "=r"(r[10]) : "r"(a), "r"(b), "f"(__uint_as_float(c)));
  asm("slct.ftz.s32.f32 %0, %1, %2, %3;" : "=r"(r[11]) : "r"(a), "r"(b), "f"(__uint_as_float(c)));
  asm("slct.b32.f32 %0, %1, %2, %3;" : "=r"(r[12]) : "r"(a), "r"(b), "f"(__uint_as_float(c | 0x80000000u) * 0.0f));
  asm("slct.b32.f32 %0, %1, %2, %3;" : "=r"(r[13]) : "r"(a), "r"(b), "f"(__uint_as_float((c & 0x807fffffu))));
  asm("slct.ftz.b32.f32 %0, %1, %2, %3;" : "=r"(r[14]) : "r"(a), "r"(b), "f"(__uint_as_float((c & 0x807fffffu))));
  // cvt.pack.sat: b low, a above, c's low bits on top.
  asm("cvt.pack.sat.u8.s32.b32 %0, %1, %2, %3;" : "=r"(r[15]) : "r"(a), "r"(b), "r"(c));
  asm("cvt.pack.sat.s8.s32.b32 %0, %1, %2, %3;" : "=r"(r[16]) : "r"(a), "r"(b), "r"(c));
  asm("cvt.pack.sat.u16.s32 %0, %1, %2;" : "=r"(r[17]) : "r"(a), "r"(b));
  asm("cvt.pack.sat.s16.s32 %0, %1, %2;" : "=r"(r[18]) : "r"(a), "r"(b));
  asm("cvt.pack.sat.u8.s32.b32 %0, %1, %2, %3;" : "=r"(r[19]) : "r"((int)(a >> 23) - 256), "r"((int)(b >> 23) - 256), "r"(c));
  asm("cvt.pack.sat.s8.s32.b32 %0, %1, %2, %3;" : "=r"(r[20]) : "r"((int)(a >> 22) - 512), "r"((int)(b >> 24) - 128), "r"(c));
  // sad.
  asm("sad.u32 %0, %1, %2, %3;" : "=r"(r[21]) : "r"(a), "r"(b), "r"(c));
  asm("sad.s32 %0, %1, %2, %3;" : "=r"(r[22]) : "r"(a), "r"(b), "r"(c));
  unsigned short h;
  asm("sad.s16 %0, %1, %2, %3;" : "=h"(h) : "h"((unsigned short)a), "h"((unsigned short)b), "h"((unsigned short)c));
  r[23] = h;
  for (int k = 0; k < 24; k++) out[24 * t + k] = r[k];
}
