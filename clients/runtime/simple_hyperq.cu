// In the spirit of NVIDIA's simpleHyperQ sample: kernels on many streams run at the same
// time. Checked functionally, not by timing: each kernel says it has started, then waits
// (bounded by clock64) until every other stream's kernel has started too; it can only see
// them all if they are running concurrently.
#include "common.h"

enum { NSTREAMS = 8 };
// About a second at a GPU's clock rate: far longer than launching the others takes.
#define TIMEOUT_CYCLES 2000000000ll

__global__ void meet(int *started, int *saw_all, int me, int n) {
    if (threadIdx.x != 0) return;
    atomicAdd(started, 1);
    long long t0 = clock64();
    int seen = 0;
    while ((seen = atomicAdd(started, 0)) < n && clock64() - t0 < TIMEOUT_CYCLES) {
    }
    saw_all[me] = seen >= n;
}

__global__ void chain(int *v, int k) {
    // Stream order within a stream: each kernel sees its predecessor's value.
    if (threadIdx.x == 0 && *v == k) *v = k + 1;
}

int main(void) {
    int *started = NULL, *saw_all = NULL, *v = NULL;
    T(cudaMalloc((void **)&started, sizeof(int)));
    T(cudaMalloc((void **)&saw_all, NSTREAMS * sizeof(int)));
    T(cudaMalloc((void **)&v, NSTREAMS * sizeof(int)));
    NEED(started);
    NEED(saw_all);
    NEED(v);
    T(cudaMemset(started, 0, sizeof(int)));
    T(cudaMemset(saw_all, 0, NSTREAMS * sizeof(int)));
    T(cudaMemset(v, 0, NSTREAMS * sizeof(int)));
    cudaStream_t s[NSTREAMS];
    for (int k = 0; k < NSTREAMS; k++) T(cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking));
    for (int k = 0; k < NSTREAMS; k++) meet<<<1, 32, 0, s[k]>>>(started, saw_all, k, NSTREAMS);
    T(cudaGetLastError());
    // Behind each meeting, a chain of kernels in the same stream.
    for (int k = 0; k < NSTREAMS; k++)
        for (int j = 0; j < 4; j++) chain<<<1, 1, 0, s[k]>>>(v + k, j);
    T(cudaDeviceSynchronize());
    int h[NSTREAMS], c[NSTREAMS], n = 0;
    T(cudaMemcpy(h, saw_all, sizeof h, cudaMemcpyDeviceToHost));
    T(cudaMemcpy(&n, started, sizeof n, cudaMemcpyDeviceToHost));
    T(cudaMemcpy(c, v, sizeof c, cudaMemcpyDeviceToHost));
    int all = 1, chained = 1;
    for (int k = 0; k < NSTREAMS; k++) {
        all &= h[k];
        chained &= c[k] == 4;
    }
    OUT("%d kernels started", n);
    OUT("overlap: %s (each of %d streams' kernels saw all the others running)", all ? "yes" : "no", NSTREAMS);
    OUT("kernels within each stream in order: %s", chained ? "yes" : "no");
    CHECK(n == NSTREAMS && all && chained);
    for (int k = 0; k < NSTREAMS; k++) T(cudaStreamDestroy(s[k]));
    T(cudaFree(started));
    T(cudaFree(saw_all));
    T(cudaFree(v));
    return finish();
}
