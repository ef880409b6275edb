// Eight threads at once, each with its own stream: cudaMalloc/Free, copies with the data
// checked, stream-ordered allocations. The runtime's state is shared; each new thread
// starts on device 0's primary context. Prints only a summary (the threads interleave).
#include "common.h"
#include <pthread.h>

enum { THREADS = 8, ROUNDS = 40 };
static int errors[THREADS];

static void *work(void *arg) {
    int id = (int)(intptr_t)arg;
    cudaStream_t s;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) { errors[id]++; return NULL; }
    unsigned char buf[4096], back[4096];
    for (int r = 0; r < ROUNDS; r++) {
        size_t size = 4096 + (size_t)(id * 7919 + r * 104729) % (3 << 20);
        void *d = NULL, *a = NULL;
        if (cudaMalloc(&d, size) != cudaSuccess) { errors[id]++; continue; }
        if (cudaMallocAsync(&a, size, s) != cudaSuccess) errors[id]++;
        memset(buf, id * 16 + r, sizeof buf);
        if (cudaMemcpyAsync(d, buf, sizeof buf, cudaMemcpyHostToDevice, s) != cudaSuccess) errors[id]++;
        if (a && cudaMemcpyAsync(a, d, sizeof buf, cudaMemcpyDeviceToDevice, s) != cudaSuccess) errors[id]++;
        if (cudaMemcpyAsync(back, a ? a : d, sizeof back, cudaMemcpyDeviceToHost, s) != cudaSuccess) errors[id]++;
        if (cudaStreamSynchronize(s) != cudaSuccess) errors[id]++;
        if (memcmp(buf, back, sizeof buf)) errors[id]++;
        if (a && cudaFreeAsync(a, s) != cudaSuccess) errors[id]++;
        if (cudaFree(d) != cudaSuccess) errors[id]++;
    }
    if (cudaStreamSynchronize(s) != cudaSuccess || cudaStreamDestroy(s) != cudaSuccess) errors[id]++;
    int dev = -1;
    if (cudaGetDevice(&dev) != cudaSuccess || dev != 0) errors[id]++;
    return NULL;
}

int main(void) {
    T(cudaFree(0));
    size_t f0 = 0, f1 = 0, t = 0;
    T(cudaMemGetInfo(&f0, &t));
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, work, (void *)(intptr_t)i);
    int total = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        total += errors[i];
    }
    OUT("%d threads x %d rounds: %d errors", THREADS, ROUNDS, total);
    CHECK(total == 0);
    T(cudaDeviceSynchronize());
    cudaMemPool_t pool;
    T(cudaDeviceGetDefaultMemPool(&pool, 0));
    T(cudaMemPoolTrimTo(pool, 0));
    T(cudaMemGetInfo(&f1, &t));
    OUT("all memory back: %d", f0 == f1);
    CHECK(f0 == f1);
    return finish();
}
