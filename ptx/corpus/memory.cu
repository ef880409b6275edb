// State spaces: local arrays indexed at run time (a .local depot), vector loads and
// stores, ld.global.nc, __constant__ and __device__ variables, generic pointers into
// shared and global memory, dynamic shared memory, 8- and 16-bit accesses.
#define K extern "C" __global__ void

__constant__ unsigned table[16] = {1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987, 1597};
__device__ unsigned counter_base = 1000;
__device__ float scale[4] = {0.5f, 2.0f, -1.0f, 3.25f};

K local_array(const unsigned* in, unsigned* out, int n) {
  unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= n) return;
  unsigned a[24];
  for (int k = 0; k < 24; k++) a[k] = in[(g + k) % n] ^ k;
  unsigned i = in[g] % 24, j = (in[g] >> 8) % 24;
  a[i] += a[j];
  out[2 * g] = a[j] + a[(i + 5) % 24];
  out[2 * g + 1] = table[in[g] & 15] + counter_base;
}

K vectors(const unsigned* __restrict__ in, unsigned* out, int n) {
  unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  if (4 * g + 3 >= n) return;
  uint4 v = reinterpret_cast<const uint4*>(in)[g];
  uint2 w = reinterpret_cast<const uint2*>(in)[2 * g + 1];
  float4 f = make_float4(__uint_as_float(v.x & 0x3fffffff), __uint_as_float(v.y & 0x3fffffff), 1.0f, 2.0f);
  f.x *= scale[v.z & 3];
  f.y += scale[v.w & 3];
  reinterpret_cast<uint4*>(out)[2 * g] = make_uint4(v.w, v.z + w.x, v.y ^ w.y, v.x);
  reinterpret_cast<float4*>(out)[2 * g + 1] = f;
}

__device__ __noinline__ unsigned through_generic(unsigned* p, unsigned k) { return p[k] * 3 + 1; }

K generic_pointers(const unsigned* in, unsigned* out, int n) {
  __shared__ unsigned s[128];
  unsigned t = threadIdx.x, g = blockIdx.x * blockDim.x + t;
  s[t] = g < n ? in[g] : 0;
  __syncthreads();
  // A generic pointer, shared or global (the input: other blocks write `out`).
  unsigned* p = (in[g % n] & 1) ? s : const_cast<unsigned*>(in);
  unsigned r = through_generic(p, t);
  __syncthreads();
  if (g < n) out[g] = r + __isShared(p);
}

K dynamic_shared(const unsigned* in, unsigned* out, int n) {
  extern __shared__ unsigned dyn[];
  unsigned t = threadIdx.x, g = blockIdx.x * blockDim.x + t;
  dyn[t] = g < n ? in[g] : 0;
  dyn[blockDim.x + t] = t;
  __syncthreads();
  if (g < n) out[g] = dyn[blockDim.x - 1 - t] + dyn[blockDim.x + (t * 7) % blockDim.x];
}

K narrow_accesses(const unsigned* in, unsigned* out, int n) {
  unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= n) return;
  const unsigned char* b = reinterpret_cast<const unsigned char*>(in);
  const short* h = reinterpret_cast<const short*>(in);
  unsigned char* ob = reinterpret_cast<unsigned char*>(out);
  ob[4 * g] = b[4 * g + 3];
  ob[4 * g + 1] = b[(7 * g) % (4 * n)] + 1;
  reinterpret_cast<short*>(out)[2 * g + 1] = (short)(h[2 * g] >> 3);
}
