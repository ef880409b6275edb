// In the spirit of NVIDIA's simpleStreams sample: an array is processed in chunks, each
// chunk copied in, computed and copied out on a stream of its own, so that one stream's
// copies can overlap another's kernel; the same work on one stream gives the same result.
#include "common.h"

__global__ void compute(const int *in, int *out, int n, int factor) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int v = in[i];
        for (int r = 0; r < 8; r++) v = v * factor + r;
        out[i] = v;
    }
}

static int expected(int x, int factor) {
    for (int r = 0; r < 8; r++) x = x * factor + r;
    return x;
}

// Runs the work in `nstreams` chunks, each on its own stream; returns the wrong results.
static int run(const int *h_in, int *h_out, int *d_in, int *d_out, int n, cudaStream_t *streams,
               int nstreams, int factor) {
    int chunk = n / nstreams;
    memset(h_out, 0, n * sizeof(int));
    for (int k = 0; k < nstreams; k++) {
        int off = k * chunk;
        cudaMemcpyAsync(d_in + off, h_in + off, chunk * sizeof(int), cudaMemcpyHostToDevice, streams[k]);
        compute<<<(chunk + 255) / 256, 256, 0, streams[k]>>>(d_in + off, d_out + off, chunk, factor);
        cudaMemcpyAsync(h_out + off, d_out + off, chunk * sizeof(int), cudaMemcpyDeviceToHost, streams[k]);
    }
    int bad = 0;
    for (int k = 0; k < nstreams; k++) {
        if (cudaStreamSynchronize(streams[k]) != cudaSuccess) bad++;
    }
    for (int i = 0; i < n; i++) bad += h_out[i] != expected(h_in[i], factor);
    return bad;
}

int main(void) {
    enum { NSTREAMS = 4, N = 1 << 16 };
    int *h_in = NULL, *h_out = NULL, *d_in = NULL, *d_out = NULL;
    T(cudaHostAlloc((void **)&h_in, N * sizeof(int), cudaHostAllocDefault));
    T(cudaHostAlloc((void **)&h_out, N * sizeof(int), cudaHostAllocDefault));
    NEED(h_in);
    NEED(h_out);
    for (int i = 0; i < N; i++) h_in[i] = i % 1000 - 500;
    T(cudaMalloc((void **)&d_in, N * sizeof(int)));
    T(cudaMalloc((void **)&d_out, N * sizeof(int)));
    NEED(d_in);
    NEED(d_out);
    cudaStream_t streams[NSTREAMS];
    for (int k = 0; k < NSTREAMS; k++) T(cudaStreamCreate(&streams[k]));
    cudaEvent_t start, stop;
    T(cudaEventCreate(&start));
    T(cudaEventCreate(&stop));

    // One stream: the reference.
    T(cudaEventRecord(start, 0));
    int bad1 = run(h_in, h_out, d_in, d_out, N, streams, 1, 3);
    T(cudaEventRecord(stop, 0));
    T(cudaEventSynchronize(stop));
    float ms1 = -1;
    T(cudaEventElapsedTime(&ms1, start, stop));
    OUT("one stream: results correct: %s, time measured: %s", bad1 ? "no" : "yes", ms1 >= 0 ? "yes" : "no");
    CHECK(bad1 == 0 && ms1 >= 0);

    // NSTREAMS streams, each a chunk; the legacy stream's events enclose them all.
    T(cudaEventRecord(start, 0));
    int bad4 = run(h_in, h_out, d_in, d_out, N, streams, NSTREAMS, 5);
    T(cudaEventRecord(stop, 0));
    T(cudaEventSynchronize(stop));
    float ms4 = -1;
    T(cudaEventElapsedTime(&ms4, start, stop));
    OUT("%d streams: results correct: %s, time measured: %s", NSTREAMS, bad4 ? "no" : "yes", ms4 >= 0 ? "yes" : "no");
    CHECK(bad4 == 0 && ms4 >= 0);
    T(cudaGetLastError());

    // Streams that wait for each other: stream 1 computes from what stream 0 computed,
    // ordered by an event only.
    cudaEvent_t done0;
    T(cudaEventCreateWithFlags(&done0, cudaEventDisableTiming));
    T(cudaMemcpyAsync(d_in, h_in, N * sizeof(int), cudaMemcpyHostToDevice, streams[0]));
    compute<<<N / 256, 256, 0, streams[0]>>>(d_in, d_out, N, 2);
    T(cudaEventRecord(done0, streams[0]));
    T(cudaStreamWaitEvent(streams[1], done0, 0));
    compute<<<N / 256, 256, 0, streams[1]>>>(d_out, d_in, N, 1);
    T(cudaMemcpyAsync(h_out, d_in, N * sizeof(int), cudaMemcpyDeviceToHost, streams[1]));
    T(cudaStreamSynchronize(streams[1]));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += h_out[i] != expected(expected(h_in[i], 2), 1);
    OUT("a stream waiting on another's event sees its results: %s", bad ? "no" : "yes");
    CHECK(bad == 0);

    T(cudaEventDestroy(done0));
    T(cudaEventDestroy(start));
    T(cudaEventDestroy(stop));
    for (int k = 0; k < NSTREAMS; k++) T(cudaStreamDestroy(streams[k]));
    T(cudaFree(d_in));
    T(cudaFree(d_out));
    T(cudaFreeHost(h_in));
    T(cudaFreeHost(h_out));
    return finish();
}
