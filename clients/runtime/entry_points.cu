// Driver entry points through the runtime, as PyTorch and NVIDIA's Python bindings get
// them: found, too old, unknown, per-thread variants, bad input.
#include "common.h"

// cudaGetDriverEntryPoint is deprecated in CUDA 13 but still exported and used.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

int main(void) {
    void *fn = NULL;
    cudaDriverEntryPointQueryResult q = (cudaDriverEntryPointQueryResult)-1;
    T(cudaGetDriverEntryPoint("cuMemCreate", &fn, cudaEnableDefault, &q));
    OUT("cuMemCreate: found=%d status=%d", fn != NULL, (int)q);
    fn = NULL;
    T(cudaGetDriverEntryPointByVersion("cuMemCreate", &fn, 12000, cudaEnableDefault, &q));
    OUT("cuMemCreate@12000: found=%d status=%d", fn != NULL, (int)q);
    fn = NULL;
    T(cudaGetDriverEntryPointByVersion("cuMemCreate", &fn, 10000, cudaEnableDefault, &q));
    OUT("cuMemCreate@10000: found=%d status=%d", fn != NULL, (int)q);
    fn = NULL;
    T(cudaGetDriverEntryPoint("cuNoSuchFunction", &fn, cudaEnableDefault, &q));
    OUT("cuNoSuchFunction: found=%d status=%d", fn != NULL, (int)q);
    T(cudaGetDriverEntryPoint("cuMemcpyAsync", &fn, cudaEnablePerThreadDefaultStream, &q));
    OUT("cuMemcpyAsync per-thread: found=%d status=%d", fn != NULL, (int)q);
    T(cudaGetDriverEntryPoint(NULL, &fn, cudaEnableDefault, &q));
    T(cudaGetLastError());

    return finish();
}
