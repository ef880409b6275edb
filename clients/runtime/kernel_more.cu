// More of the kernel API: a device variable's address, and cudaLaunchKernelExC.
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
    NEED(x);
    NEED(y);
    T(cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice));
    T(cudaMemcpy(y, hy, sizeof hy, cudaMemcpyHostToDevice));
    int two = 2;
    cudaError_t e = T(cudaMemcpyToSymbol(scale, &two, sizeof two));
    if (e == cudaErrorNotSupported) {
        printf("SKIP: the driver does not load modules (cuModuleLoadData is not supported), so kernels cannot run\n");
        return SKIP_EXIT;
    }
    int n = N;
    float a = 0.0f;
    void *args[] = {(void *)&n, (void *)&a, (void *)&x, (void *)&y};
    void *addr = NULL;
    T(cudaGetSymbolAddress(&addr, scale));
    OUT("scale's address is %s", alignment(addr));
    int via_address = 0;
    T(cudaMemcpy(&via_address, addr, sizeof via_address, cudaMemcpyDeviceToHost));
    CHECK(via_address == 2);

    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDim = dim3(4);
    cfg.blockDim = dim3(256);
    CHECK(T(cudaLaunchKernelExC(&cfg, (const void *)saxpy, args)) == cudaSuccess);
    T(cudaDeviceSynchronize());
    T(cudaMemcpy(hy, y, sizeof hy, cudaMemcpyDeviceToHost));
    CHECK(hy[10] == 2.0f);

    T(cudaFree(x));
    T(cudaFree(y));
    return finish();
}
