// The kernels of the sample-style clients (clients/c/vector_add_mmap.c,
// clients/c/ipc_kernels.c), as NVIDIA's vectorAddMMAP and memMapIPCDrv samples have them.
// Compiled by nvcc into a fatbin with SASS for sm_90 and PTX for compute_90: the real
// driver runs the SASS, the mock the PTX. The tests compile it (ci/install-nvcc.sh); the
// GPU script compiles it with the machine's nvcc.
extern "C" __global__ void VecAdd_kernel(const float *A, const float *B, float *C, int N) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < N) C[i] = A[i] + B[i];
}

// memMapIPCDrv's kernel: each process fills its slice with its own value.
extern "C" __global__ void memMapIpc_kernel(char *ptr, int sz, char val) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    for (; idx < sz; idx += (gridDim.x * blockDim.x)) ptr[idx] = val;
}

// A block reduction with shared memory and warp shuffles, to check data across stripes.
extern "C" __global__ void sum_kernel(const unsigned *in, unsigned long long *out, int n) {
    __shared__ unsigned partial[32];
    unsigned v = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += in[i];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < (blockDim.x + 31) / 32 ? partial[threadIdx.x] : 0;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
        if (threadIdx.x == 0) atomicAdd(out, (unsigned long long)v);
    }
}
