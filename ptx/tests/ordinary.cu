#include <stdint.h>
struct Params { float alpha; int n; double beta; int4 q; };
extern "C" __global__ void sgemm(const float* A, const float* B, float* C, int N) {
  __shared__ float As[16][16], Bs[16][16];
  int tx = threadIdx.x, ty = threadIdx.y, row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;
  float acc = 0;
  for (int k0 = 0; k0 < N; k0 += 16) {
    As[ty][tx] = (row < N && k0 + tx < N) ? A[row * N + k0 + tx] : 0;
    Bs[ty][tx] = (col < N && k0 + ty < N) ? B[(k0 + ty) * N + col] : 0;
    __syncthreads();
    #pragma unroll
    for (int k = 0; k < 16; k++) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < N && col < N) C[row * N + col] = acc;
}
extern "C" __global__ void softmax(const float* x, float* y, int n) {
  float m = -INFINITY;
  for (int i = threadIdx.x; i < n; i += 32) m = fmaxf(m, x[i]);
  for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(~0u, m, o));
  float s = 0;
  for (int i = threadIdx.x; i < n; i += 32) s += expf(x[i] - m);
  for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(~0u, s, o);
  for (int i = threadIdx.x; i < n; i += 32) y[i] = expf(x[i] - m) / s;
}
extern "C" __global__ void histogram(const unsigned char* d, unsigned* h, int n) {
  __shared__ unsigned sh[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) sh[i] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) atomicAdd(&sh[d[i]], 1);
  __syncthreads();
  for (int i = threadIdx.x; i < 256; i += blockDim.x) atomicAdd(&h[i], sh[i]);
}
extern "C" __global__ void dmath(const double* x, double* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = sin(x[i]) + exp(x[i] * 0.1) + log(fabs(x[i]) + 1) + pow(fabs(x[i]), 0.3) + sqrt(fabs(x[i])) / 3.0;
}
extern "C" __global__ void fmath(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = sinf(x[i]) + cosf(x[i]) + powf(fabsf(x[i]), 1.7f) + erff(x[i]) + tanhf(x[i]) + logf(fabsf(x[i]) + 1) + atan2f(x[i], 2.0f) + cbrtf(x[i]);
}
extern "C" __global__ void idiv(const int64_t* a, const int64_t* b, int64_t* c, Params p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n) c[i] = a[i] / (b[i] | 1) + a[i] % 7 + (int64_t)(p.alpha * p.beta) + p.q.z + (a[i] / 3u);
}
extern "C" __global__ void transpose(const float* in, float* out, int w, int h) {
  __shared__ float tile[32][33];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8) if (x < w && y + j < h) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8) if (x < h && y + j < w) out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}
// Registers every lane computes alike from uniform operands, but after the lanes parted
// (a loop each leaves at its own count, a branch on the lane): the compiler's uniformity
// analysis must not compute them once for the warp.
extern "C" __global__ void parted_lanes(const float* x, float* y, int n) {
  int t = threadIdx.x + blockIdx.x * blockDim.x;
  int k = n, j = n * 2;
  for (int i = 0; i < (threadIdx.x & 7); i++) k = k * 3 + 1;
  if (threadIdx.x & 4) j = __float_as_int(x[t & 31]) & 0xff;
  int u = n * 5 + blockIdx.x;
  for (int i = 0; i < n; i += 7) u = u * 3 + (u >> 2);
  int kk = k * 5 + n;  // uniform operands, a value per lane
  if (t < 8 * n) y[t] = (float)(kk + j * 7 + u + (k ^ j));
}
