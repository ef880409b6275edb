// sm_90's asynchronous copies and mbarriers: cp.async of 4, 8 and 16 bytes with source
// sizes (zero-filled) and ignore-src, its groups and cp.async.mbarrier.arrive; mbarrier
// phases (init, arrive with counts, arrive_drop, expect_tx/complete_tx, test_wait and
// try_wait on states and parities, pending_count); 1-D bulk copies global -> shared
// completing transaction bytes (twice: a copy from shared::cta to shared::cluster is an
// illegal instruction on the H200 without clusters), and
// shared -> global in bulk groups; and the mbarrier's 64-bit words as a program can read
// them (opaque in PTX: mbarrier_words records what the H200 keeps there).
#define K extern "C" __global__ void

__device__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ unsigned wait_parity(unsigned bar, unsigned parity) {
  unsigned done;
  asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
               : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  return done;
}

__device__ void spin_parity(unsigned bar, unsigned parity) {
  asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1; @!p bra W; }"
               :: "r"(bar), "r"(parity) : "memory");
}

// Per thread: a 16-byte shared slot prefilled with a pattern, then cp.async of 16, 8 and 4
// bytes with source sizes taken from the input (0..cp-size), ignore-src on some threads.
// 12 words a thread: the three slots after the copies.
K cp_async_sizes(const unsigned* in, unsigned* out, int n) {
  __shared__ alignas(16) unsigned s[128 * 12];
  unsigned t = threadIdx.x, g = blockIdx.x * blockDim.x + t;
  unsigned* mine = s + 12 * t;
  for (int k = 0; k < 12; k++) mine[k] = 0xa5a50000u | (t << 4) | k;
  const unsigned* src = in + 4 * (g % (n / 4));
  unsigned r = in[(g * 7) % n];
  unsigned size16 = r % 17, size8 = (r >> 8) % 9, size4 = (r >> 16) % 5;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(smem_addr(mine)), "l"(src), "r"(size16) : "memory");
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" :: "r"(smem_addr(mine + 4)), "l"(src + 2), "r"(size8) : "memory");
  asm volatile("cp.async.ca.shared::cta.global [%0], [%1], 4, %2;" :: "r"(smem_addr(mine + 6)), "l"(src + 1), "r"(size4) : "memory");
  asm volatile("cp.async.commit_group;" ::: "memory");
  asm volatile("{ .reg .pred p; setp.ne.u32 p, %2, 0; cp.async.ca.shared.global [%0], [%1], 16, p; }"
               :: "r"(smem_addr(mine + 8)), "l"(src), "r"(r & 0x1000) : "memory");
  asm volatile("cp.async.ca.shared.global.L2::128B [%0], [%1], 4;" :: "r"(smem_addr(mine + 7)), "l"(src + 3) : "memory");
  asm volatile("cp.async.commit_group;" ::: "memory");
  asm volatile("cp.async.wait_group 1;" ::: "memory");
  asm volatile("cp.async.wait_all;" ::: "memory");
  for (int k = 0; k < 12; k++) out[12 * g + k] = mine[k];
}

// One thread walks an mbarrier through three phases; 16 words a block: what each step
// reports (test_wait/try_wait results as 0/1, pending counts of states).
K mbarrier_phases(const unsigned* in, unsigned* out, int n) {
  __shared__ alignas(8) unsigned long long bar;
  unsigned b = smem_addr(&bar), r[16];
  if (threadIdx.x != 0) return;
  unsigned count = 3 + in[blockIdx.x] % 5, tx = 16 * (1 + in[blockIdx.x + 1] % 8);
  unsigned long long s0, s1, s2;
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(b), "r"(count) : "memory");
  // pending_count is defined on the states of arrivals that complete no phase
  // (`.noComplete`): the pending count before them.
  asm volatile("mbarrier.arrive.noComplete.shared::cta.b64 %0, [%1], 1;" : "=l"(s0) : "r"(b) : "memory");
  asm volatile("mbarrier.arrive.noComplete.shared.b64 %0, [%1], %2;" : "=l"(s1) : "r"(b), "r"(count - 2) : "memory");
  asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(r[0]) : "l"(s0));
  asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(r[1]) : "l"(s1));
  asm volatile("{ .reg .pred p; mbarrier.test_wait.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }" : "=r"(r[2]) : "r"(b), "l"(s1) : "memory");
  r[3] = wait_parity(b, 0);
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" :: "r"(b), "r"(tx) : "memory");
  asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(s2) : "r"(b) : "memory");
  r[4] = wait_parity(b, 0);
  asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" :: "r"(b), "r"(tx - 16) : "memory");
  r[5] = wait_parity(b, 0);
  asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], 16;" :: "r"(b) : "memory");
  asm volatile("{ .reg .pred p; mbarrier.test_wait.acquire.cta.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }" : "=r"(r[6]) : "r"(b), "l"(s2) : "memory");
  asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0, 1000; selp.u32 %0, 1, 0, p; }" : "=r"(r[7]) : "r"(b) : "memory");
  r[8] = wait_parity(b, 1);
  // Phase 1: arrive_drop lowers the expected count of the phases after it.
  asm volatile("mbarrier.arrive_drop.noComplete.shared::cta.b64 %0, [%1], %2;" : "=l"(s0) : "r"(b), "r"(count - 1) : "memory");
  asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(r[9]) : "l"(s0));
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(tx) : "memory");
  r[10] = wait_parity(b, 1);
  asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" :: "r"(b), "r"(tx) : "memory");
  r[11] = wait_parity(b, 1);
  // Phase 2 expects one arrival; phase 1 (parity 1) is the one before it.
  r[12] = wait_parity(b, 1);
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 %0, [%1];" : "=l"(s0) : "r"(b) : "memory");
  asm volatile("{ .reg .pred p; mbarrier.try_wait.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }" : "=r"(r[13]) : "r"(b), "l"(s0) : "memory");
  r[14] = wait_parity(b, 0);
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" :: "r"(b) : "memory");
  r[15] = count | tx << 8;
  for (int k = 0; k < 16; k++) out[16 * blockIdx.x + k] = r[k];
}

// Every thread takes part: two mbarriers, rounds of arrivals with counts from the input,
// waits on parities in try_wait loops (warps waiting while others still arrive), and
// cp.async tracked by cp.async.mbarrier.arrive(.noinc). 4 words a thread.
K mbarrier_block(const unsigned* in, unsigned* out, int n) {
  __shared__ alignas(8) unsigned long long bars[2];
  __shared__ alignas(16) unsigned data[256 * 4];
  unsigned t = threadIdx.x, g = blockIdx.x * blockDim.x + t, nt = blockDim.x;
  unsigned b0 = smem_addr(&bars[0]), b1 = smem_addr(&bars[1]);
  if (t == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(b0), "r"(nt) : "memory");
    // Each thread's copy arrival counts (.noinc): 2 arrivals a thread.
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(b1), "r"(2 * nt) : "memory");
  }
  __syncthreads();
  unsigned acc = 0;
  for (int round = 0; round < 3; round++) {
    // Each thread copies 16 bytes of the input, announced on b1 when complete.
    unsigned src = (g * 4 + round * 64) % (n - 4) & ~3u;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(smem_addr(&data[4 * t])), "l"(in + src) : "memory");
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" :: "r"(b1) : "memory");
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(b1) : "memory");
    spin_parity(b1, round & 1);
    // Everyone's copy has landed: read a neighbour's.
    unsigned v = data[4 * ((t + 37) % nt) + round];
    acc = acc * 31 + v;
    // b0: arrive (threads of odd warps arrive late, after spinning on a test_wait).
    if ((t / 32) % 2) {
      // This round's phase cannot complete before these threads arrive: four failed polls.
      unsigned polls = 0;
      while (!wait_parity(b0, round & 1) && polls < 4) polls++;
      acc += polls;
    }
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(b0) : "memory");
    spin_parity(b0, round & 1);
    // The data must not be overwritten before every thread has read: b0's phase.
    out[4 * g + round] = v;
  }
  out[4 * g + 3] = acc;
}

// Bulk copies: 512 words of the input into shared memory through an mbarrier's
// transaction bytes, copied within shared memory (shared::cta -> shared::cluster, the
// block's own), altered, and stored back to `out` as a bulk group. 1024 words a block.
K bulk_copies(const unsigned* in, unsigned* out, int n) {
  __shared__ alignas(16) unsigned a[512], c[512];
  // Two mbarriers, one phase each: a warp still waiting for the first phase of one
  // must not see the parity of a later phase.
  __shared__ alignas(8) unsigned long long bars[2];
  unsigned t = threadIdx.x, ba = smem_addr(&bars[0]), bc = smem_addr(&bars[1]);
  if (t == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(ba) : "memory");
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bc) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  if (t == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 2048;" :: "r"(ba) : "memory");
    // Two halves, the second first.
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 1024, [%2];"
                 :: "r"(smem_addr(a + 256)), "l"(in + blockIdx.x * 512 + 256), "r"(ba) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 1024, [%2];"
                 :: "r"(smem_addr(a)), "l"(in + blockIdx.x * 512), "r"(ba) : "memory");
  }
  spin_parity(ba, 0);
  if (t == 0) {
    // (A copy from shared::cta to shared::cluster here is an illegal instruction on the
    // H200 in a launch without clusters: the second phase copies from global memory.)
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], 2048;" :: "r"(bc) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 2048, [%2];"
                 :: "r"(smem_addr(c)), "l"(in + ((blockIdx.x + 1) % gridDim.x) * 512), "r"(bc) : "memory");
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bc) : "memory");
  }
  spin_parity(bc, 0);
  for (unsigned k = t; k < 512; k += blockDim.x) c[k] = c[k] * 3 + a[511 - k];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (t == 0) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 2048;"
                 :: "l"(out + blockIdx.x * 1024), "r"(smem_addr(c)) : "memory");
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 1024;"
                 :: "l"(out + blockIdx.x * 1024 + 512), "r"(smem_addr(a + 256)) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
  // The rest of the block's words, from the threads.
  for (unsigned k = t; k < 256; k += blockDim.x) out[blockIdx.x * 1024 + 768 + k] = a[k] ^ c[k];
}

// The mbarrier's 64-bit word as ld.shared reads it after each step (PTX keeps it opaque:
// this records what the H200 stores, for the executor's layout to be compared with).
// 16 words a block: 8 values, low and high halves.
K mbarrier_words(const unsigned* in, unsigned* out, int n) {
  __shared__ alignas(8) unsigned long long bar;
  unsigned b = smem_addr(&bar);
  if (threadIdx.x != 0) return;
  unsigned long long w[8];
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 5;" :: "r"(b) : "memory");
  w[0] = *(volatile unsigned long long*)&bar;
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0], 2;" :: "r"(b) : "memory");
  w[1] = *(volatile unsigned long long*)&bar;
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], 64;" :: "r"(b) : "memory");
  w[2] = *(volatile unsigned long long*)&bar;
  asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], 80;" :: "r"(b) : "memory");
  w[3] = *(volatile unsigned long long*)&bar;
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], 16;" :: "r"(b) : "memory");
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0], 3;" :: "r"(b) : "memory");
  w[4] = *(volatile unsigned long long*)&bar;
  asm volatile("mbarrier.arrive_drop.shared::cta.b64 _, [%0], 1;" :: "r"(b) : "memory");
  w[5] = *(volatile unsigned long long*)&bar;
  unsigned long long s;
  asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1], 2;" : "=l"(s) : "r"(b) : "memory");
  w[6] = s;
  w[7] = *(volatile unsigned long long*)&bar;
  for (int k = 0; k < 8; k++) {
    out[16 * blockIdx.x + 2 * k] = (unsigned)w[k];
    out[16 * blockIdx.x + 2 * k + 1] = (unsigned)(w[k] >> 32);
  }
}

// Bulk reductions from shared memory into `out`, one block so their order is the
// program's: add, max, min, inc, dec of 32-bit integers, xor/and/or of 64- and 32-bit
// words, f32 add (zeros, NaNs, subnormals and all). 448 words.

#define REDUCE(OP, dst, src, bytes)                                                                \
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group." OP " [%0], [%1], %2;"          \
               :: "l"(dst), "r"(smem_addr(src)), "r"(bytes) : "memory")

#define WAIT_ALL()                                              \
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");     \
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory")

K bulk_reductions(const unsigned* in, unsigned* out, int n) {
  __shared__ alignas(16) unsigned a[64], b[64];
  __shared__ alignas(16) unsigned long long x[64], y[64];
  unsigned t = threadIdx.x;
  a[t] = in[t];
  b[t] = in[64 + t];
  x[t] = in[2 * t] | (unsigned long long)in[2 * t + 1] << 32;
  y[t] = in[64 + t] | (unsigned long long)in[t] << 32;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (t == 0) {
    // Bulk operations of one group may complete in any order: each that another on the
    // same words must follow is waited for first.
    REDUCE("add.u32", out, a, 256);
    REDUCE("add.u32", out, b, 256);
    REDUCE("max.u32", out + 64, a, 256);
    REDUCE("inc.u32", out + 128, a, 256);
    REDUCE("xor.b64", out + 192, x, 512);
    REDUCE("add.f32", out + 320, a, 256);
    REDUCE("or.b32", out + 384, a, 256);
    WAIT_ALL();
    REDUCE("min.s32", out + 64, b, 256);
    REDUCE("dec.u32", out + 128, b, 256);
    REDUCE("and.b64", out + 192, y, 512);
    REDUCE("add.f32", out + 320, b, 256);
    REDUCE("and.b32", out + 384, b, 256);
    WAIT_ALL();
    REDUCE("or.b64", out + 192, x, 256);
    WAIT_ALL();
  }
}
