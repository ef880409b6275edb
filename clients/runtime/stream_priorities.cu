// In the spirit of NVIDIA's StreamPriorities sample: the device's range of stream
// priorities, streams created at each end of it (and beyond it, clamped), and work on
// them computing correct results whatever their priority.
#include "common.h"

__global__ void scale(const float *in, float *out, int n, float f) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = in[i] * f + 1.0f;
}

int main(void) {
    int least = 99, greatest = 99;
    T(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    OUT("least %d, greatest %d", least, greatest);
    CHECK(greatest <= least);
    T(cudaDeviceGetStreamPriorityRange(NULL, &greatest));
    T(cudaDeviceGetStreamPriorityRange(&least, NULL));

    const int asked[4] = {least, greatest, greatest - 1, least + 1};
    const char *names[4] = {"least", "greatest", "greatest - 1", "least + 1"};
    cudaStream_t s[4];
    for (int k = 0; k < 4; k++) {
        int p = 99;
        T(cudaStreamCreateWithPriority(&s[k], cudaStreamNonBlocking, asked[k]));
        T(cudaStreamGetPriority(s[k], &p));
        OUT("asked %s: got %s", names[k],
            p == least ? "least" : p == greatest ? "greatest" : "another");
    }
    int p = 99;
    T(cudaStreamGetPriority(0, &p));
    OUT("the default stream: %s", p == least ? "least" : p == greatest ? "greatest" : "another");
    cudaStream_t plain;
    T(cudaStreamCreate(&plain));
    T(cudaStreamGetPriority(plain, &p));
    OUT("cudaStreamCreate: %s", p == least ? "least" : p == greatest ? "greatest" : "another");

    enum { N = 1 << 18 };
    float *h_in = NULL, *h_out = NULL, *d_in = NULL, *d_out[2] = {NULL, NULL};
    T(cudaMallocHost((void **)&h_in, N * sizeof(float)));
    T(cudaMallocHost((void **)&h_out, 2 * N * sizeof(float)));
    NEED(h_in);
    NEED(h_out);
    for (int i = 0; i < N; i++) h_in[i] = (float)(i % 4096);
    T(cudaMalloc((void **)&d_in, N * sizeof(float)));
    T(cudaMalloc((void **)&d_out[0], N * sizeof(float)));
    T(cudaMalloc((void **)&d_out[1], N * sizeof(float)));
    NEED(d_in);
    NEED(d_out[0]);
    NEED(d_out[1]);
    T(cudaMemcpy(d_in, h_in, N * sizeof(float), cudaMemcpyHostToDevice));
    // The low-priority stream's kernel first, then the high-priority one's.
    cudaEvent_t ev[2][2];
    for (int k = 0; k < 2; k++) {
        T(cudaEventCreate(&ev[k][0]));
        T(cudaEventCreate(&ev[k][1]));
    }
    for (int k = 0; k < 2; k++) {
        T(cudaEventRecord(ev[k][0], s[k]));
        scale<<<64, 256, 0, s[k]>>>(d_in, d_out[k], N, k ? 3.0f : 2.0f);
        T(cudaEventRecord(ev[k][1], s[k]));
        T(cudaMemcpyAsync(h_out + k * N, d_out[k], N * sizeof(float), cudaMemcpyDeviceToHost, s[k]));
    }
    T(cudaDeviceSynchronize());
    int bad = 0;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < N; i++) bad += h_out[k * N + i] != h_in[i] * (k ? 3.0f : 2.0f) + 1.0f;
    OUT("results on both streams correct: %s", bad ? "no" : "yes");
    CHECK(bad == 0);
    for (int k = 0; k < 2; k++) {
        float ms = -1;
        T(cudaEventElapsedTime(&ms, ev[k][0], ev[k][1]));
        OUT("%s stream's kernel timed: %s", names[k], ms >= 0 ? "yes" : "no");
        CHECK(ms >= 0);
        T(cudaEventDestroy(ev[k][0]));
        T(cudaEventDestroy(ev[k][1]));
    }
    for (int k = 0; k < 4; k++) T(cudaStreamDestroy(s[k]));
    T(cudaStreamDestroy(plain));
    T(cudaFree(d_in));
    T(cudaFree(d_out[0]));
    T(cudaFree(d_out[1]));
    T(cudaFreeHost(h_in));
    T(cudaFreeHost(h_out));
    return finish();
}
