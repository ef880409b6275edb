// The kernel's file of the JIT-linking test: an extern device function and variable
// defined in link_b.cu, and a static helper (nvcc -rdc names it after its file).
extern __device__ int scale(int x);
extern __device__ int bias;
__device__ int counter;
static __device__ __noinline__ int helper(int x) { return x + 1; }
extern "C" __global__ void k(int *out) {
    int i = threadIdx.x;
    out[i] = helper(scale(i)) + bias;
    atomicAdd(&counter, 1);
}
