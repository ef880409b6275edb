// Calls that are not inlined: .param passing, return values, divergent calls, a call
// chain, and special registers.
#define K extern "C" __global__ void

__device__ __noinline__ unsigned mix(unsigned a, unsigned b) { return (a ^ (b << 7)) * 2654435761u + (a >> 3); }
__device__ __noinline__ unsigned long long widen(unsigned a, float f) { return ((unsigned long long)a << 20) + (unsigned long long)(f * 8.0f); }
__device__ __noinline__ unsigned chain(unsigned a) { return mix(a, a + 1) + mix(a + 2, a); }

K calls(const unsigned* in, unsigned* out, int n) {
  unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= n) return;
  unsigned v = in[g];
  unsigned r = mix(v, g);
  if (v & 1) r += chain(v);  // divergent call
  unsigned long long w = widen(v & 0xfff, (float)(v & 0xff) * 0.125f);
  out[3 * g] = r; out[3 * g + 1] = (unsigned)w; out[3 * g + 2] = (unsigned)(w >> 32);
}

K special_registers(const unsigned* in, unsigned* out, int n) {
  unsigned g = (blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x;
  if (g >= n) return;
  unsigned lane, lt, ge;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
  asm("mov.u32 %0, %%lanemask_ge;" : "=r"(ge));
  unsigned* o = out + 8 * g;
  o[0] = threadIdx.x; o[1] = threadIdx.y; o[2] = blockIdx.x; o[3] = blockDim.x * 100 + gridDim.x;
  o[4] = lane; o[5] = lt; o[6] = ge; o[7] = in[g] + warpSize;
}
