// Separate compilation (`nvcc -rdc=true main.cu library.cu`): kernels of two objects, a
// call from one object into the other, a __device__ function pointer initialised with the
// other object's function, a variable set through its symbol. nvlink links the objects'
// cubins; the runtime has to load that program where only PTX runs (the mock) from the
// objects' own fatbins. Prints what it checked; exit 1 when a value is wrong.
#include <cstdio>
#include <cuda_runtime.h>

extern __device__ int scaled(int x);
cudaError_t set_bias(int b);
cudaError_t launch_fill(int *out, int n);

typedef int (*unary)(int);
__device__ unary scaled_ptr = scaled;

__global__ void apply(int *v, unary f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = f(v[i]) + scaled(0);
}

#define CHECK(call)                                                     \
  do {                                                                  \
    cudaError_t e = (call);                                             \
    printf("%s -> %s\n", #call, cudaGetErrorName(e));                   \
    if (e != cudaSuccess) return 1;                                     \
  } while (0)

int main() {
  const int n = 1000;
  int *d = nullptr;
  CHECK(cudaMalloc(&d, n * sizeof(int)));
  CHECK(set_bias(7));
  CHECK(launch_fill(d, n));
  unary f = nullptr;
  CHECK(cudaMemcpyFromSymbol(&f, scaled_ptr, sizeof f));
  apply<<<(n + 255) / 256, 256>>>(d, f, n);
  CHECK(cudaGetLastError());
  // Once more through its cudaKernel_t (cudaGetKernel), which shares the program's
  // device variables (the bias library.cu set) with <<<>>>.
  cudaKernel_t k = nullptr;
  CHECK(cudaGetKernel(&k, (const void *)apply));
  int count = n;
  void *args[] = {&d, &f, &count};
  CHECK(cudaLaunchKernel((const void *)k, dim3((n + 255) / 256), dim3(256), args, 0, 0));
  static int h[n];
  CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  CHECK(cudaFree(d));
  // fill: 3i + 7; apply: 3(3i + 7) + 7 + scaled(0) = 9i + 35; again: 27i + 119.
  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    if (h[i] != 27 * i + 119) {
      if (wrong++ < 4) printf("    h[%d] = %d, expected %d\n", i, h[i], 27 * i + 119);
    }
  }
  printf("%d values checked, %d wrong\n", n, wrong);
  return wrong ? 1 : 0;
}
