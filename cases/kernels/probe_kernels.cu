// Kernels the probes launch on real GPUs and on the mock: faults of each kind, and
// kernels to check launch configurations. Compiled by clients/probes/kernels/build.sh.
#include <assert.h>

extern "C" __global__ void write_one(int *p, int v) { p[threadIdx.x] = v; }

extern "C" __global__ void read_one(const int *p, int *out) { out[threadIdx.x] = p[threadIdx.x]; }

extern "C" __global__ void add_one(int *p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += 1;
}

extern "C" __global__ void trap_kernel(int *p) {
    if (threadIdx.x == 5) asm volatile("trap;");
    p[threadIdx.x] = 1;
}

extern "C" __global__ void assert_kernel(int x) { assert(x == 42); }

extern "C" __global__ void shared_index(int idx, int *out) {
    extern __shared__ int dyn[];
    dyn[idx] = 7;
    __syncthreads();
    out[threadIdx.x] = dyn[idx];
}

extern "C" __global__ void misaligned(char *p) { *(int *)(p + 1) = 5; }

__device__ int counter;
__constant__ int table[4] = {1, 2, 3, 4};

extern "C" __global__ void use_globals(int *out) {
    atomicAdd(&counter, 1);
    out[threadIdx.x] = table[threadIdx.x & 3] + counter * 0;
}

extern "C" __global__ void big_static_shared(int *out) {
    __shared__ int s[12288];  // 48 KiB: the static limit
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x];
}
