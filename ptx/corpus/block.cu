// Barriers with block semantics: in loops over shared memory, reductions through
// bar.red (count/and/or), threads that exit before a barrier the others then pass.
#define K extern "C" __global__ void

K barrier_loop(const unsigned* in, unsigned* out, int n) {
  __shared__ unsigned s[256];
  unsigned t = threadIdx.x, g = blockIdx.x * blockDim.x + t;
  s[t] = g < n ? in[g] : 0;
  __syncthreads();
  // Prefix sum (Hillis-Steele): every step reads neighbours written the step before.
  for (unsigned d = 1; d < blockDim.x; d *= 2) {
    unsigned x = t >= d ? s[t - d] : 0;
    __syncthreads();
    s[t] += x;
    __syncthreads();
  }
  if (g < n) out[g] = s[t];
}

K barrier_reductions(const unsigned* in, unsigned* out, int n) {
  unsigned t = threadIdx.x, g = blockIdx.x * blockDim.x + t;
  unsigned v = g < n ? in[g] : 0;
  int c = __syncthreads_count(v & 1);
  int a = __syncthreads_and(v & 3);
  int o = __syncthreads_or((v & 0xfff) == 7);
  if (g < n) out[g] = (unsigned)c * 4 + a * 2 + o;
}

K early_exit(const unsigned* in, unsigned* out, int n) {
  __shared__ unsigned s[256];
  unsigned t = threadIdx.x, g = blockIdx.x * blockDim.x + t;
  if (t % 5 == 3) return;  // these threads never reach the barrier
  s[t] = in[g % n];
  __syncthreads();
  unsigned x = s[(t + 1) % blockDim.x];
  if ((t + 1) % blockDim.x % 5 == 3) x = 0xdead;  // that neighbour never wrote
  if (g < n) out[g] = x ^ s[t];
}

K reduce_shared_atomics(const unsigned* in, unsigned* out, int n) {
  __shared__ unsigned sum, mx, mn, ored, cnt;
  unsigned t = threadIdx.x, g = blockIdx.x * blockDim.x + t;
  if (t == 0) { sum = 0; mx = 0; mn = 0xffffffff; ored = 0; cnt = 0; }
  __syncthreads();
  unsigned v = g < n ? in[g] : 0;
  atomicAdd(&sum, v & 0xffff); atomicMax(&mx, v); atomicMin(&mn, v); atomicOr(&ored, v & 0x1111);
  atomicInc(&cnt, 100);
  __syncthreads();
  if (t == 0) { unsigned* o = out + 5 * blockIdx.x; o[0] = sum; o[1] = mx; o[2] = mn; o[3] = ored; o[4] = cnt; }
}
