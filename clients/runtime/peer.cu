// Two devices: cudaSetDevice switching primary contexts, memory on each, peer access, peer
// copies and cudaMemcpyDefault between devices with the data checked. Needs two GPUs
// (on the mock: CUMOCK_DEVICES=2); exits 77 with fewer.
#include "common.h"

int main(void) {
    int n = 0;
    T(cudaGetDeviceCount(&n));
    if (n < 2) {
        printf("SKIP: %d device(s); peer access needs two\n", n);
        return SKIP_EXIT;
    }
    int can01 = -1, can10 = -1, dev = -1;
    T(cudaDeviceCanAccessPeer(&can01, 0, 1));
    T(cudaDeviceCanAccessPeer(&can10, 1, 0));
    OUT("canAccessPeer 0->1=%d 1->0=%d", can01, can10);

    enum { N = 1 << 20 };
    unsigned char *h = (unsigned char *)malloc(N), *back = (unsigned char *)malloc(N);
    for (int i = 0; i < N; i++) h[i] = (unsigned char)(i * 13 + 1);
    void *d0 = NULL, *d1 = NULL;
    T(cudaSetDevice(0));
    T(cudaMalloc(&d0, N));
    NEED(d0);
    T(cudaSetDevice(1));
    T(cudaGetDevice(&dev));
    OUT("device=%d", dev);
    T(cudaMalloc(&d1, N));
    NEED(d1);
    cudaPointerAttributes a;
    T(cudaPointerGetAttributes(&a, d0));
    OUT("d0: type=%d device=%d", a.type, a.device);
    T(cudaPointerGetAttributes(&a, d1));
    OUT("d1: type=%d device=%d", a.type, a.device);

    T(cudaSetDevice(0));
    T(cudaMemcpy(d0, h, N, cudaMemcpyHostToDevice));
    T(cudaDeviceEnablePeerAccess(1, 0));
    T(cudaDeviceEnablePeerAccess(1, 0));
    T(cudaGetLastError());
    T(cudaMemcpyPeer(d1, 1, d0, 0, N));
    T(cudaSetDevice(1));
    memset(back, 0, N);
    T(cudaMemcpy(back, d1, N, cudaMemcpyDeviceToHost));
    CHECK(memcmp(h, back, N) == 0);
    T(cudaMemset(d1, 0, N));
    T(cudaMemcpy(d1, d0, N, cudaMemcpyDefault));
    memset(back, 0, N);
    T(cudaMemcpy(back, d1, N, cudaMemcpyDeviceToHost));
    CHECK(memcmp(h, back, N) == 0);
    cudaStream_t s1;
    T(cudaStreamCreate(&s1));
    T(cudaMemcpyPeerAsync(d0, 0, d1, 1, 4096, s1));
    T(cudaStreamSynchronize(s1));
    T(cudaStreamDestroy(s1));
    T(cudaSetDevice(0));
    T(cudaDeviceDisablePeerAccess(1));
    T(cudaDeviceDisablePeerAccess(1));
    T(cudaGetLastError());
    T(cudaFree(d0));
    T(cudaSetDevice(1));
    T(cudaFree(d1));
    T(cudaSetDevice(2));
    T(cudaGetLastError());
    free(h);
    free(back);
    return finish();
}
