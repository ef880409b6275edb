// Warp operations on divergent code: shuffles of every kind (width, clamp, out-of-range
// sources), votes and ballots inside branches, activemask, match, redux, and a loop
// whose trip count differs per lane.
#define K extern "C" __global__ void

K shuffles(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  unsigned v = in[t], lane = threadIdx.x & 31;
  unsigned* o = out + 12 * t;
  o[0] = __shfl_sync(0xffffffff, v, in[t] & 31);
  o[1] = __shfl_up_sync(0xffffffff, v, 3);
  o[2] = __shfl_down_sync(0xffffffff, v, 5);
  o[3] = __shfl_xor_sync(0xffffffff, v, 9);
  o[4] = __shfl_sync(0xffffffff, v, lane + 3, 8);
  o[5] = __shfl_up_sync(0xffffffff, v, 2, 16);
  o[6] = __shfl_down_sync(0xffffffff, v, 6, 4);
  o[7] = __shfl_xor_sync(0xffffffff, v, 1, 2);
  unsigned r, p;
  asm("{ .reg .pred q; shfl.sync.down.b32 %0|q, %2, 7, 0x1f, 0xffffffff; selp.u32 %1, 1, 0, q; }" : "=r"(r), "=r"(p) : "r"(v));
  o[8] = r; o[9] = p;
  unsigned w = 0;
  if (lane % 3 == 0) {
    // Only every third lane: shuffle within them.
    w = __shfl_sync(0x49249249, v, (lane + 3) % 30);
  }
  o[10] = w;
  float f = __uint_as_float(v & 0x3fffffff);
  o[11] = __float_as_uint(__shfl_xor_sync(0xffffffff, f, 16));
}

K votes(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  unsigned v = in[t], lane = threadIdx.x & 31;
  unsigned* o = out + 10 * t;
  int p = v & 1;
  o[0] = __ballot_sync(0xffffffff, p);
  o[1] = __all_sync(0xffffffff, p);
  o[2] = __any_sync(0xffffffff, p);
  o[3] = __activemask();
  o[4] = 0; o[5] = 0; o[6] = 0;
  if (v & 2) {
    unsigned m = __activemask();
    o[4] = m;
    o[5] = __ballot_sync(m, p);
    o[6] = __popc(__ballot_sync(m, lane < 16));
  } else {
    o[4] = ~__activemask();
  }
  o[7] = __match_any_sync(0xffffffff, v & 3);
  int pred = 0;
  unsigned all = __match_all_sync(0xffffffff, v >> 31, &pred);
  o[8] = all ^ (pred << 1);
  o[9] = __reduce_add_sync(0xffffffff, v & 0xffff) ^ __reduce_max_sync(0xffffffff, v) ^ __reduce_or_sync(0xffffffff, v & 0xf0f);
}

K divergent_loop(const unsigned* in, unsigned* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  unsigned v = in[t], acc = 0;
  // Per-lane trip counts, a shuffle after reconvergence, early exit for some lanes.
  for (unsigned k = 0; k < (v & 15); k++) {
    acc = acc * 31 + k;
    if (acc & 64) acc ^= v;
  }
  acc += __shfl_xor_sync(0xffffffff, acc, 1);
  if ((v & 0x30) == 0x30) { out[2 * t] = acc; out[2 * t + 1] = 1; return; }
  unsigned s = 0;
  while (v > 1) { v = (v & 1) ? 3 * v + 1 : v / 2; s++; if (s > 200) break; }
  out[2 * t] = acc + s;
  // Which lanes run together here is the compiler's reconvergence point (BSSY/BSYNC in
  // the SASS), not a language guarantee: a difference in this word alone says so.
  out[2 * t + 1] = __activemask();
}
