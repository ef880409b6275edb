// The library object of the separate-compilation test (tests/separate_compilation.rs):
// a device function and a device variable that main.cu's kernels use across the device
// link, a kernel of its own, and the host functions that reach them by symbol.
#include <cuda_runtime.h>

__device__ int bias = 0;

__device__ int scaled(int x) { return 3 * x + bias; }

__global__ void fill(int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = scaled(i);
}

cudaError_t set_bias(int b) { return cudaMemcpyToSymbol(bias, &b, sizeof b); }

cudaError_t launch_fill(int *out, int n) {
  fill<<<(n + 127) / 128, 128>>>(out, n);
  return cudaGetLastError();
}
