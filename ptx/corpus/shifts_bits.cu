// Shifts by amounts at and beyond the width (PTX clamps; C would be undefined), bit
// field extract/insert, popc/clz/brev/bfind, prmt in every mode, lop3.
#define K extern "C" __global__ void

K shifts(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  unsigned a = in[t], s = t % 70;  // 0..69: below, at and beyond 32 and 64
  unsigned r0, r1, r2; unsigned long long a64 = ((unsigned long long)a << 32) | (a ^ 0x5a5a5a5a), r3, r4, r5;
  asm("shl.b32 %0, %1, %2;" : "=r"(r0) : "r"(a), "r"(s));
  asm("shr.u32 %0, %1, %2;" : "=r"(r1) : "r"(a), "r"(s));
  asm("shr.s32 %0, %1, %2;" : "=r"(r2) : "r"(a), "r"(s));
  asm("shl.b64 %0, %1, %2;" : "=l"(r3) : "l"(a64), "r"(s));
  asm("shr.u64 %0, %1, %2;" : "=l"(r4) : "l"(a64), "r"(s));
  asm("shr.s64 %0, %1, %2;" : "=l"(r5) : "l"(a64), "r"(s));
  unsigned short h = (unsigned short)a, r6;
  asm("shl.b16 %0, %1, %2;" : "=h"(r6) : "h"(h), "r"(s));
  unsigned* o = out + 10 * t;
  o[0] = r0; o[1] = r1; o[2] = r2; o[3] = (unsigned)r3; o[4] = (unsigned)(r3 >> 32);
  o[5] = (unsigned)r4; o[6] = (unsigned)(r4 >> 32); o[7] = (unsigned)r5; o[8] = (unsigned)(r5 >> 32); o[9] = r6;
}

K bitfields(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (2 * t + 1 >= n) return;
  unsigned a = in[2 * t], b = in[2 * t + 1];
  unsigned pos = b & 0x3f, len = (b >> 8) & 0x3f;  // includes pos+len beyond 32
  unsigned r0, r1, r2, r3, r4, r5;
  asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r0) : "r"(a), "r"(pos), "r"(len));
  asm("bfe.s32 %0, %1, %2, %3;" : "=r"(r1) : "r"(a), "r"(pos), "r"(len));
  asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r2) : "r"(a), "r"(b), "r"(pos), "r"(len));
  asm("bfind.u32 %0, %1;" : "=r"(r3) : "r"(a >> (b & 31)));
  asm("bfind.s32 %0, %1;" : "=r"(r4) : "r"(a >> (b & 31)));
  asm("bfind.shiftamt.u32 %0, %1;" : "=r"(r5) : "r"(a >> (b & 31)));
  unsigned* o = out + 10 * t;
  o[0] = r0; o[1] = r1; o[2] = r2; o[3] = r3; o[4] = r4; o[5] = r5;
  o[6] = __popc(a); o[7] = __clz(a >> (b & 31)); o[8] = __brev(a); o[9] = __ffs(a & b);
}

K permute_lop3(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (3 * t + 2 >= n) return;
  unsigned a = in[3 * t], b = in[3 * t + 1], c = in[3 * t + 2];
  unsigned r[9];
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r[0]) : "r"(a), "r"(b), "r"(c));
  asm("prmt.b32.f4e %0, %1, %2, %3;" : "=r"(r[1]) : "r"(a), "r"(b), "r"(c));
  asm("prmt.b32.b4e %0, %1, %2, %3;" : "=r"(r[2]) : "r"(a), "r"(b), "r"(c));
  asm("prmt.b32.rc8 %0, %1, %2, %3;" : "=r"(r[3]) : "r"(a), "r"(b), "r"(c));
  asm("prmt.b32.ecl %0, %1, %2, %3;" : "=r"(r[4]) : "r"(a), "r"(b), "r"(c));
  asm("prmt.b32.ecr %0, %1, %2, %3;" : "=r"(r[5]) : "r"(a), "r"(b), "r"(c));
  asm("prmt.b32.rc16 %0, %1, %2, %3;" : "=r"(r[6]) : "r"(a), "r"(b), "r"(c));
  asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(r[7]) : "r"(a), "r"(b), "r"(c));
  asm("lop3.b32 %0, %1, %2, %3, 0xe8;" : "=r"(r[8]) : "r"(a), "r"(b), "r"(c));
  for (int k = 0; k < 9; k++) out[9 * t + k] = r[k];
}
