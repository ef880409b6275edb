// The definitions link_a.cu's kernel needs, and a static helper of its own.
__device__ int bias = 100;
static __device__ __noinline__ int helper(int x) { return x * 3; }
__device__ int scale(int x) { return helper(x); }
