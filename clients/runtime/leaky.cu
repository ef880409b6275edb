// A program that leaks on purpose (device, pinned and stream-ordered memory, a stream, an
// event), for cumock's leak report; and whose second cudaMalloc a fault may fail.
#include "common.h"

int main(void) {
    void *a = NULL, *b = NULL, *h = NULL, *s_mem = NULL;
    cudaStream_t s;
    cudaEvent_t e;
    T(cudaMalloc(&a, 1000));
    T(cudaMalloc(&b, 2000));
    T(cudaMallocHost(&h, 3000));
    T(cudaStreamCreate(&s));
    T(cudaEventCreate(&e));
    T(cudaMallocAsync(&s_mem, 4000, s));
    T(cudaStreamSynchronize(s));
    T(cudaFree(a));
    return 0;
}
