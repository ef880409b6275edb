// The forms the PTX ISA 9.0 audit (ptx/coverage/isa-9.0.txt) added, where the H200 might
// read the ISA otherwise than the mock does: mad24.hi (sm_90 has no 24-bit multiplier:
// ptxas emulates it, .sat clamping the sum of the product's bits 47..16 and c to s32),
// lop3's predicate form (p = (d != 0) BoolOp q), and fma.{rz,rm,rp}.f64 rounded once from
// the exact sum (subnormals, cancellation, NaN results included).
#define K extern "C" __global__ void

K isa_audit_edges(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (6 * t + 5 >= n) return;
  const unsigned* w = in + 6 * t;
  unsigned* o = out + 14 * t;
  unsigned a = w[0], b = w[1], c = w[2];
  // Products at the 24-bit extremes on some threads, so that .sat clamps.
  if ((t & 3) == 1) a = b = 0x7fffff;
  if ((t & 3) == 2) a = b = 0x800000;
  asm("mad24.hi.u32 %0, %1, %2, %3;" : "=r"(o[0]) : "r"(a), "r"(b), "r"(c));
  asm("mad24.hi.s32 %0, %1, %2, %3;" : "=r"(o[1]) : "r"(a), "r"(b), "r"(c));
  asm("mad24.hi.sat.s32 %0, %1, %2, %3;" : "=r"(o[2]) : "r"(a), "r"(b), "r"(c));
  // lop3 with a predicate: four LUTs, q alternating by thread; p's bits in word 7.
  unsigned d[4], p = 0, q = t & 1;
  asm("{ .reg .pred q, r; setp.ne.u32 q, %2, 0;\n"
      "lop3.and.b32 %0|r, %3, %4, %5, 0x80, q; selp.u32 %1, 1, 0, r; }"
      : "=r"(d[0]), "=r"(p) : "r"(q), "r"(a), "r"(b), "r"(c));
  o[7] = p;
  asm("{ .reg .pred q, r; setp.ne.u32 q, %2, 0;\n"
      "lop3.or.b32 %0|r, %3, %4, %5, 0x96, q; selp.u32 %1, 2, 0, r; }"
      : "=r"(d[1]), "=r"(p) : "r"(q), "r"(a), "r"(b), "r"(c));
  o[7] |= p;
  asm("{ .reg .pred q, r; setp.ne.u32 q, %2, 0;\n"
      "lop3.and.b32 %0|r, %3, %4, %5, 0xe8, !q; selp.u32 %1, 4, 0, r; }"
      : "=r"(d[2]), "=r"(p) : "r"(q), "r"(a), "r"(b), "r"(c));
  o[7] |= p;
  asm("{ .reg .pred q, r; setp.ne.u32 q, %2, 0;\n"
      "lop3.or.b32 %0|r, %3, %4, %5, 0x01, q; selp.u32 %1, 8, 0, r; }"
      : "=r"(d[3]), "=r"(p) : "r"(q), "r"(a), "r"(b), "r"(c));
  o[7] |= p;
  for (int k = 0; k < 4; k++) o[3 + k] = d[k];
  // fma.{rz,rm,rp}.f64 of doubles from the input's word pairs; odd threads cancel the
  // product (c = -(a*b) rounded), threads 2 mod 8 scale a into the subnormal range.
  double x = __hiloint2double(w[0], w[1]), y = __hiloint2double(w[2], w[3]);
  double z = __hiloint2double(w[4], w[5]);
  if ((t & 7) == 2) x = __dmul_rn(x, 0x1p-1000);
  if (t & 1) z = -__dmul_rn(x, y);
  double r[3];
  asm("fma.rz.f64 %0, %1, %2, %3;" : "=d"(r[0]) : "d"(x), "d"(y), "d"(z));
  asm("fma.rm.f64 %0, %1, %2, %3;" : "=d"(r[1]) : "d"(x), "d"(y), "d"(z));
  asm("fma.rp.f64 %0, %1, %2, %3;" : "=d"(r[2]) : "d"(x), "d"(y), "d"(z));
  for (int k = 0; k < 3; k++) {
    unsigned long long bits = __double_as_longlong(r[k]);
    o[8 + 2 * k] = (unsigned)bits;
    o[9 + 2 * k] = (unsigned)(bits >> 32);
  }
}

// Half-precision bulk reductions into global memory (cp.reduce.async.bulk .add.noftz of
// .f16/.bf16, .min/.max of them): thread t writes 16 bytes of destination (in words
// 8t..8t+3) and 16 bytes of source in shared memory (8t+4..8t+7), then reduces, the
// operation chosen by t mod 4. The mock rounds each add once to nearest, keeps
// subnormals (.noftz), and takes the non-NaN operand in min/max, as `atom`'s do.
K bulk_half_reductions(const unsigned* in, unsigned* out, int n) {
  __shared__ __align__(16) unsigned src[128 * 4];
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (8 * t + 7 >= n) return;
  unsigned* d = out + 4 * t;
  unsigned* s = src + 4 * threadIdx.x;
  for (int k = 0; k < 4; k++) {
    d[k] = in[8 * t + k];
    s[k] = in[8 * t + 4 + k];
  }
  unsigned sa = (unsigned)__cvta_generic_to_shared(s);
  asm volatile("fence.proxy.async;" ::: "memory");
  switch (t & 3) {
    case 0:
      asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.f16 [%0], [%1], 16;"
                   :: "l"(d), "r"(sa) : "memory");
      break;
    case 1:
      asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.bf16 [%0], [%1], 16;"
                   :: "l"(d), "r"(sa) : "memory");
      break;
    case 2:
      asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.min.f16 [%0], [%1], 16;"
                   :: "l"(d), "r"(sa) : "memory");
      break;
    default:
      asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.max.bf16 [%0], [%1], 16;"
                   :: "l"(d), "r"(sa) : "memory");
  }
  asm volatile("cp.async.bulk.commit_group;\ncp.async.bulk.wait_group 0;" ::: "memory");
}
