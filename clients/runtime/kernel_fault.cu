// A kernel writing where it may not: the launch succeeds, the fault surfaces at the next
// synchronisation as cudaErrorIllegalAddress, and stays: every later call returns it,
// cudaGetLastError cannot clear it, cudaDeviceReset does.
#include "common.h"

__global__ void poke(int *p) { *p = 42; }

int main(void) {
    void *d = NULL;
    T(cudaMalloc(&d, 4096));
    poke<<<1, 1>>>((int *)d);
    cudaError_t e = T(cudaGetLastError());
    if (e == cudaErrorNotSupported) {
        printf("SKIP: the driver does not load modules (cuModuleLoadData is not supported), so kernels cannot run\n");
        return SKIP_EXIT;
    }
    T(cudaDeviceSynchronize());
    T(cudaFree(d));

    // The fault: a write into a freed allocation.
    poke<<<1, 1>>>((int *)d);
    T(cudaGetLastError());
    T(cudaDeviceSynchronize());
    T(cudaGetLastError());
    T(cudaGetLastError());
    T(cudaPeekAtLastError());
    void *e2 = NULL;
    T(cudaMalloc(&e2, 4096));
    int x = 0;
    T(cudaMemcpy(&x, e2, 4, cudaMemcpyDeviceToHost));
    cudaStream_t s;
    T(cudaStreamCreate(&s));
    int n = -1;
    T(cudaGetDeviceCount(&n));
    OUT("count=%d", n);
    T(cudaGetDevice(&n));
    T(cudaDeviceReset());
    T(cudaGetLastError());
    T(cudaMalloc(&e2, 4096));
    T(cudaMemcpy(&x, e2, 4, cudaMemcpyDeviceToHost));
    T(cudaFree(e2));
    return finish();
}
