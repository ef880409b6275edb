// A kernel writing where it may not: the launch succeeds, the fault surfaces at the next
// synchronisation as cudaErrorIllegalAddress, and stays: every later call that uses the
// context returns it (cudaGetLastError reports it once), and after cudaDeviceReset the
// device is unavailable to the process.
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
    CHECK(T(cudaGetLastError()) == cudaSuccess);
    CHECK(T(cudaDeviceSynchronize()) == cudaErrorIllegalAddress);
    // The last error is read once, as any other (H200); the context stays broken.
    CHECK(T(cudaGetLastError()) == cudaErrorIllegalAddress);
    CHECK(T(cudaGetLastError()) == cudaSuccess);
    CHECK(T(cudaPeekAtLastError()) == cudaSuccess);
    void *e2 = NULL;
    CHECK(T(cudaMalloc(&e2, 4096)) == cudaErrorIllegalAddress);
    int x = 0;
    CHECK(T(cudaMemcpy(&x, e2, 4, cudaMemcpyDeviceToHost)) == cudaErrorIllegalAddress);
    cudaStream_t s;
    CHECK(T(cudaStreamCreate(&s)) == cudaErrorIllegalAddress);
    // A graph is the runtime's object, not the context's: NVIDIA's runtime made one here
    // (runtime program device_graphs' first recording).
    cudaGraph_t g;
    T(cudaGraphCreate(&g, 0));
    int n = -1;
    T(cudaGetDeviceCount(&n));
    OUT("count=%d", n);
    T(cudaGetDevice(&n));
    T(cudaDeviceReset());
    T(cudaGetLastError());
    // Not even a reset makes the device usable again in this process (H200).
    CHECK(T(cudaMalloc(&e2, 4096)) == cudaErrorDevicesUnavailable);
    T(cudaMemcpy(&x, e2, 4, cudaMemcpyDeviceToHost));
    T(cudaFree(e2));
    return finish();
}
