// In the spirit of NVIDIA's asyncAPI sample: copies and a kernel issued on a stream return
// at once, and the host does work of its own, counted, while it polls an event until the
// device is done. Then cudaDeviceSynchronize from another thread waits for work this one
// issued.
#include "common.h"
#include <pthread.h>

__global__ void increment(int *g, int inc, int rounds) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    // Several rounds, so that the kernel takes a little while on any device.
    for (int r = 0; r < rounds; r++) g[i] += inc;
}

struct Waiter {
    const int *h;
    int n, want, ok;
    cudaError_t e;
};

static void *synchronize_elsewhere(void *p) {
    Waiter *w = (Waiter *)p;
    w->e = cudaDeviceSynchronize();
    // The device's work, issued by the main thread, is done: its results are here.
    w->ok = 1;
    for (int i = 0; i < w->n; i++)
        if (w->h[i] != w->want) w->ok = 0;
    return NULL;
}

int main(void) {
    const int n = 1 << 16, inc = 3, rounds = 16;
    const size_t bytes = n * sizeof(int);
    int *h = NULL, *d = NULL;
    T(cudaMallocHost((void **)&h, bytes));
    NEED(h);
    memset(h, 0, bytes);
    T(cudaMalloc((void **)&d, bytes));
    NEED(d);
    T(cudaMemset(d, 255, bytes));
    cudaEvent_t start, stop;
    T(cudaEventCreate(&start));
    T(cudaEventCreate(&stop));
    cudaStream_t s;
    T(cudaStreamCreate(&s));

    T(cudaEventRecord(start, s));
    T(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, s));
    increment<<<n / 256, 256, 0, s>>>(d, inc, rounds);
    T(cudaGetLastError());
    T(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, s));
    T(cudaEventRecord(stop, s));
    // The host's own work while the device runs.
    unsigned long counter = 0;
    cudaError_t q;
    while ((q = cudaEventQuery(stop)) == cudaErrorNotReady) counter++;
    printf("cudaEventQuery(stop) until not cudaErrorNotReady -> %s\n", cudaGetErrorName(q));
    OUT("host counted more than 0 iterations while waiting: %s", counter > 0 ? "yes" : "no");
    CHECK(counter > 0);
    float ms = -1;
    T(cudaEventElapsedTime(&ms, start, stop));
    OUT("elapsed time positive: %s", ms > 0 ? "yes" : "no");
    CHECK(ms > 0);
    int bad = 0;
    for (int i = 0; i < n; i++) bad += h[i] != inc * rounds;
    OUT("results correct: %s", bad ? "no" : "yes");
    CHECK(bad == 0);

    // Work issued here, waited for by cudaDeviceSynchronize in another thread.
    increment<<<n / 256, 256, 0, s>>>(d, inc, rounds);
    T(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, s));
    Waiter w = {h, n, 2 * inc * rounds, 0, cudaErrorUnknown};
    pthread_t t;
    pthread_create(&t, NULL, synchronize_elsewhere, &w);
    pthread_join(t, NULL);
    printf("cudaDeviceSynchronize() in another thread -> %s\n", cudaGetErrorName(w.e));
    OUT("the work was done when it returned: %s", w.ok ? "yes" : "no");
    CHECK(w.ok);

    T(cudaStreamDestroy(s));
    T(cudaEventDestroy(start));
    T(cudaEventDestroy(stop));
    T(cudaFree(d));
    T(cudaFreeHost(h));
    return finish();
}
