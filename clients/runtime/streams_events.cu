// Streams (flags, priorities, the default streams), events and elapsed time, capture
// status outside a capture, async copies and memsets.
#include "common.h"

int main(void) {
    cudaStream_t s = NULL, nb = NULL, pr = NULL;
    T(cudaStreamCreate(&s));
    OUT("s is %s", s ? "a handle" : "NULL");
    T(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking));
    T(cudaStreamCreateWithFlags(&nb, 0x10));
    T(cudaGetLastError());
    T(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking));
    int lo = 0, hi = 0;
    T(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    OUT("priorities least=%d greatest=%d", lo, hi);
    T(cudaStreamCreateWithPriority(&pr, cudaStreamDefault, hi));
    int prio = 99;
    unsigned fl = 99;
    T(cudaStreamGetPriority(pr, &prio));
    OUT("priority=%d", prio);
    T(cudaStreamGetFlags(nb, &fl));
    OUT("flags=%u", fl);
    T(cudaGetLastError());

    cudaStreamCaptureStatus st = (cudaStreamCaptureStatus)7;
    T(cudaStreamIsCapturing(s, &st));
    OUT("capturing=%d", (int)st);
    T(cudaStreamIsCapturing(0, &st));
    OUT("capturing=%d", (int)st);
    T(cudaStreamIsCapturing(cudaStreamPerThread, &st));
    OUT("capturing=%d", (int)st);
    unsigned long long id = 0;
    T(cudaStreamGetCaptureInfo(s, &st, &id));
    OUT("capture status=%d", (int)st);

    // Async copies and memsets on a stream, with the data checked after a synchronize.
    enum { N = 1 << 16 };
    unsigned char *h = NULL;
    T(cudaMallocHost(&h, N));
    NEED(h);
    for (int i = 0; i < N; i++) h[i] = (unsigned char)i;
    void *d = NULL;
    T(cudaMalloc(&d, N));
    cudaEvent_t a, b, nt;
    T(cudaEventCreate(&a));
    T(cudaEventCreate(&b));
    T(cudaEventCreateWithFlags(&nt, cudaEventDisableTiming));
    T(cudaEventCreateWithFlags(&nt, 0x40));
    T(cudaGetLastError());
    T(cudaEventCreateWithFlags(&nt, cudaEventDisableTiming));
    T(cudaEventRecord(a, s));
    T(cudaMemcpyAsync(d, h, N, cudaMemcpyHostToDevice, s));
    T(cudaMemsetAsync(d, 0x7f, 16, s));
    T(cudaMemcpyAsync(h, d, N, cudaMemcpyDeviceToHost, s));
    T(cudaEventRecord(b, s));
    T(cudaEventRecord(nt, s));
    T(cudaStreamWaitEvent(nb, b, 0));
    T(cudaStreamSynchronize(s));
    T(cudaStreamQuery(s));
    T(cudaEventQuery(b));
    T(cudaEventSynchronize(b));
    CHECK(h[0] == 0x7f && h[15] == 0x7f && h[16] == 16 && h[N - 1] == (unsigned char)(N - 1));
    float ms = -1;
    T(cudaEventElapsedTime(&ms, a, b));
    OUT("elapsed >= 0: %d", ms >= 0);
    T(cudaEventElapsedTime(&ms, a, nt));
    T(cudaGetLastError());

    // The default streams.
    T(cudaMemcpyAsync(d, h, 64, cudaMemcpyHostToDevice, 0));
    T(cudaMemcpyAsync(d, h, 64, cudaMemcpyHostToDevice, cudaStreamLegacy));
    T(cudaMemcpyAsync(d, h, 64, cudaMemcpyHostToDevice, cudaStreamPerThread));
    T(cudaStreamSynchronize(0));
    T(cudaStreamSynchronize(cudaStreamPerThread));
    T(cudaStreamQuery(cudaStreamLegacy));
    T(cudaDeviceSynchronize());

    T(cudaEventDestroy(a));
    T(cudaEventDestroy(b));
    T(cudaEventDestroy(nt));
    T(cudaStreamDestroy(s));
    T(cudaStreamDestroy(nb));
    T(cudaStreamDestroy(pr));
    T(cudaFree(d));
    T(cudaFreeHost(h));
    return finish();
}
