// A <<<>>> launch with its data checked, __device__ variables through
// cudaMemcpyToSymbol/FromSymbol, cudaFuncGetAttributes, occupancy.
#include "common.h"

__device__ int scale;

__global__ void saxpy(int n, float a, const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i] * scale;
}

int main(void) {
    enum { N = 1000 };
    float hx[N], hy[N];
    for (int i = 0; i < N; i++) {
        hx[i] = (float)i;
        hy[i] = 1.0f;
    }
    float *x = NULL, *y = NULL;
    T(cudaMalloc(&x, sizeof hx));
    T(cudaMalloc(&y, sizeof hy));
    T(cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice));
    T(cudaMemcpy(y, hy, sizeof hy, cudaMemcpyHostToDevice));
    int two = 2, back = 0;
    cudaError_t e = T(cudaMemcpyToSymbol(scale, &two, sizeof two));
    if (e == cudaErrorNotSupported) {
        printf("SKIP: the driver does not load modules (cuModuleLoadData is not supported), so kernels cannot run\n");
        return SKIP_EXIT;
    }
    T(cudaMemcpyFromSymbol(&back, scale, sizeof back));
    OUT("scale=%d", back);
    CHECK(back == 2);
    size_t sz = 0;
    T(cudaGetSymbolSize(&sz, scale));
    OUT("sizeof scale=%zu", sz);
    T(cudaMemcpyToSymbol(scale, &two, sizeof two, 4));
    T(cudaGetLastError());

    saxpy<<<(N + 255) / 256, 256>>>(N, 3.0f, x, y);
    T(cudaGetLastError());
    T(cudaDeviceSynchronize());
    T(cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost));
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= hy[i] == 3.0f * i + 2.0f;
    CHECK(ok);
    OUT("y[i] == 3*i + 2 for all i: %d", ok);

    void *args[] = {(void *)&two, (void *)&two, (void *)&x, (void *)&y};
    int n = N;
    float a = 1.0f;
    args[0] = &n;
    args[1] = &a;
    CHECK(T(cudaLaunchKernel((const void *)saxpy, dim3(4), dim3(256), args, 0, 0)) == cudaSuccess);
    T(cudaDeviceSynchronize());
    T(cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost));
    CHECK(hy[10] == 10.0f + 2.0f * (3.0f * 10 + 2.0f));

    cudaFuncAttributes fa;
    memset(&fa, 0, sizeof fa);
    CHECK(T(cudaFuncGetAttributes(&fa, saxpy)) == cudaSuccess);
    OUT("maxThreadsPerBlock=%d binaryVersion=%d", fa.maxThreadsPerBlock, fa.binaryVersion);
    int blocks = -1;
    T(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, saxpy, 256, 0));
    OUT("active blocks per SM > 0: %d", blocks > 0);
    CHECK(blocks > 0);
    T(cudaLaunchKernel((const void *)main, dim3(1), dim3(1), args, 0, 0));
    T(cudaGetLastError());
    T(cudaFree(x));
    T(cudaFree(y));
    return finish();
}
