// cudaMalloc/Free, free-memory accounting, copies of every kind, memsets, 2D, pointer
// attributes, cudaMemGetInfo.
#include "common.h"

static size_t free_now(void) {
    size_t f = 0, t = 0;
    cudaMemGetInfo(&f, &t);
    return f;
}

int main(void) {
    T(cudaFree(0));
    size_t f0 = free_now();
    void *d = NULL, *e = NULL, *z = (void *)1;
    T(cudaMalloc(&d, 1 << 20));
    OUT("d is %s", alignment(d));
    NEED(d);
    size_t f1 = free_now();
    OUT("free dropped by %zu", f0 - f1);
    T(cudaMalloc(&e, 1));
    OUT("e is %s", alignment(e));
    OUT("free dropped by %zu", f1 - free_now());
    T(cudaMalloc(&z, 0));
    OUT("malloc(0) gave %s", alignment(z));
    T(cudaMalloc(NULL, 16));
    T(cudaMalloc(&z, (size_t)1 << 50));
    OUT("huge malloc gave %s", alignment(z));
    T(cudaGetLastError());

    // Copies of every kind, with the data checked.
    enum { N = 1 << 20 };
    unsigned char *h = (unsigned char *)malloc(N), *back = (unsigned char *)malloc(N);
    for (int i = 0; i < N; i++) h[i] = (unsigned char)(i * 7 + 3);
    T(cudaMemcpy(d, h, N, cudaMemcpyHostToDevice));
    memset(back, 0, N);
    T(cudaMemcpy(back, d, N, cudaMemcpyDeviceToHost));
    CHECK(memcmp(h, back, N) == 0);
    void *d2 = NULL;
    T(cudaMalloc(&d2, N));
    T(cudaMemcpy(d2, d, N, cudaMemcpyDeviceToDevice));
    memset(back, 0, N);
    T(cudaMemcpy(back, d2, N, cudaMemcpyDefault));
    CHECK(memcmp(h, back, N) == 0);
    T(cudaMemcpy(back, h, 64, cudaMemcpyHostToHost));
    T(cudaMemcpy(d2, h, 0, cudaMemcpyHostToDevice));
    T(cudaMemcpy(d2, h, 16, (cudaMemcpyKind)7));
    T(cudaGetLastError());
    // Past the end of the allocation (its 2 MiB page included): 4 MiB into a 1 MiB one.
    unsigned char *big = (unsigned char *)calloc(4, N);
    T(cudaMemcpy(d2, big, 4 * N, cudaMemcpyHostToDevice));
    T(cudaGetLastError());
    free(big);

    // Memsets: the low byte of the value.
    T(cudaMemset(d, 0x1ab, 4096));
    T(cudaMemcpy(back, d, 4096, cudaMemcpyDeviceToHost));
    int ok = 1;
    for (int i = 0; i < 4096; i++) ok &= back[i] == 0xab;
    CHECK(ok);
    OUT("memset bytes are 0xab: %d", ok);
    T(cudaMemset(d, 0, 0));

    // 2D: 8 rows of 100 bytes, pitches 128 (device) and 100 (host).
    unsigned char rows[800], rows_back[800];
    for (int i = 0; i < 800; i++) rows[i] = (unsigned char)i;
    T(cudaMemset2D(d, 128, 0x55, 128, 8));
    T(cudaMemcpy2D(d, 128, rows, 100, 100, 8, cudaMemcpyHostToDevice));
    T(cudaMemcpy2D(rows_back, 100, d, 128, 100, 8, cudaMemcpyDeviceToHost));
    CHECK(memcmp(rows, rows_back, 800) == 0);
    T(cudaMemcpy(back, d, 128 * 8, cudaMemcpyDeviceToHost));
    OUT("padding byte after row 0 = %#x", back[100]);
    T(cudaMemcpy2D(d, 64, rows, 100, 100, 8, cudaMemcpyHostToDevice));
    T(cudaGetLastError());

    // Pointer attributes: device memory, an interior address, host memory, NULL.
    cudaPointerAttributes a;
    memset(&a, 0x5a, sizeof a);
    T(cudaPointerGetAttributes(&a, d));
    OUT("type=%d device=%d devicePointer==d:%d hostPointer=%s", a.type, a.device, a.devicePointer == d,
        alignment(a.hostPointer));
    T(cudaPointerGetAttributes(&a, (char *)d + 100));
    OUT("type=%d device=%d devicePointer==d+100:%d", a.type, a.device, a.devicePointer == (char *)d + 100);
    memset(&a, 0x5a, sizeof a);
    T(cudaPointerGetAttributes(&a, h));
    OUT("type=%d device=%d devicePointer=%s hostPointer==h:%d", a.type, a.device, alignment(a.devicePointer),
        a.hostPointer == h);
    T(cudaPointerGetAttributes(&a, NULL));
    OUT("type=%d device=%d", a.type, a.device);
    T(cudaGetLastError());

    // Frees, and the memory coming back.
    T(cudaFree(d));
    T(cudaFree(e));
    T(cudaFree(d2));
    OUT("free back to start: %d", free_now() == f0);
    T(cudaFree(d));
    T(cudaGetLastError());
    T(cudaFree((char *)h));
    T(cudaGetLastError());
    T(cudaFree(NULL));

    // Peer copy within the one device.
    void *p1 = NULL, *p2 = NULL;
    T(cudaMalloc(&p1, 4096));
    T(cudaMalloc(&p2, 4096));
    T(cudaMemcpy(p1, h, 4096, cudaMemcpyHostToDevice));
    T(cudaMemcpyPeer(p2, 0, p1, 0, 4096));
    memset(back, 0, 4096);
    T(cudaMemcpy(back, p2, 4096, cudaMemcpyDeviceToHost));
    CHECK(memcmp(back, h, 4096) == 0);
    T(cudaFree(p1));
    T(cudaFree(p2));
    free(h);
    free(back);
    return finish();
}
