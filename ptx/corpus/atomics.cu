// Global atomics from many blocks at once; order-independent results only.
#define K extern "C" __global__ void

K global_atomics(const unsigned* in, unsigned* out, int n) {
  unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= n) return;
  unsigned v = in[g];
  atomicAdd(&out[0], v & 0xff);
  atomicMax(&out[1], v);
  atomicMin(&out[2] , v | 0x80000000u);  // out[2] starts at 0: stays 0 unless...
  atomicMax((int*)&out[3], (int)v);
  atomicMin((int*)&out[4], (int)v);
  atomicAnd(&out[5], v | 0xfffff0ffu);
  atomicOr(&out[6], v & 0x01010101u);
  atomicXor(&out[7], v);
  atomicInc(&out[8], 37);
  atomicDec(&out[9], 1000);
  atomicAdd((unsigned long long*)&out[10], (unsigned long long)v << 8);
  atomicAdd((float*)&out[12], (float)(v & 7));  // exact in f32, so order does not matter
  atomicAdd((double*)&out[14], (double)(v & 0xffff));
  atomicCAS(&out[16 + (v & 3)], 0u, 1u);
  atomicExch(&out[20], 42u);
  unsigned long long old = atomicCAS((unsigned long long*)&out[22], 0ull, 5ull);
  (void)old;
}
