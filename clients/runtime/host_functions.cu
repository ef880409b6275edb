// Host functions and stream callbacks in stream order, and the profiler calls.
#include "common.h"

// From cuda_profiler_api.h, which the registry's nvcc packages do not ship.
extern "C" cudaError_t cudaProfilerStart(void);
extern "C" cudaError_t cudaProfilerStop(void);

static void CUDART_CB host_fn(void *p) { (*(int *)p)++; }
static void CUDART_CB callback(cudaStream_t, cudaError_t status, void *p) { *(int *)p = 10 + (int)status; }

int main(void) {
    enum { N = 1 << 16 };
    cudaStream_t s;
    T(cudaStreamCreate(&s));
    unsigned char *h = (unsigned char *)calloc(1, N);
    void *d = NULL;
    T(cudaMalloc(&d, N));
    NEED(d);
    int ran = 0, called = -1;
    T(cudaMemcpyAsync(d, h, N, cudaMemcpyHostToDevice, s));
    T(cudaLaunchHostFunc(s, host_fn, &ran));
    T(cudaStreamAddCallback(s, callback, &called, 0));
    T(cudaStreamSynchronize(s));
    OUT("host function ran %d time(s), callback saw %d", ran, called);
    CHECK(ran == 1 && called == 10);
    T(cudaStreamAddCallback(s, callback, &called, 1));
    T(cudaGetLastError());
    T(cudaProfilerStart());
    T(cudaProfilerStop());

    T(cudaFree(d));
    T(cudaStreamDestroy(s));
    free(h);
    return finish();
}
