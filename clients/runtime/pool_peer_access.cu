// A pool's peer access (cudaMemPoolSetAccess/GetAccess): device 0's default pool, mapped
// for device 1, read by a kernel on device 1 in stream order after device 0's copy, as
// stream-ordered allocation over peers is used. Needs two GPUs (on the mock:
// CUMOCK_DEVICES=2); exits 77 with fewer.
#include "common.h"

__global__ void twice(const int *src, int *dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = 2 * src[i];
}

static int access_of(cudaMemPool_t pool, int device) {
    cudaMemLocation loc = {};
    loc.type = cudaMemLocationTypeDevice;
    loc.id = device;
    cudaMemAccessFlags f = cudaMemAccessFlagsProtNone;
    T(cudaMemPoolGetAccess(&f, pool, &loc));
    return (int)f;
}

int main(void) {
    int n = 0;
    T(cudaGetDeviceCount(&n));
    if (n < 2) {
        printf("SKIP: %d device(s); peer access needs two\n", n);
        return SKIP_EXIT;
    }
    enum { N = 4096 };
    static int h[N], back[N];
    for (int i = 0; i < N; i++) h[i] = i * 7 - 3;

    cudaMemPool_t pool = NULL;
    T(cudaDeviceGetDefaultMemPool(&pool, 0));
    OUT("access of device 0 (owner)=%d, device 1=%d", access_of(pool, 0), access_of(pool, 1));

    T(cudaSetDevice(0));
    cudaStream_t s0, s1;
    cudaEvent_t copied;
    T(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
    T(cudaEventCreate(&copied));
    int *src = NULL;
    T(cudaMallocAsync(&src, sizeof h, s0));
    NEED(src);
    T(cudaMemcpyAsync(src, h, sizeof h, cudaMemcpyHostToDevice, s0));
    T(cudaEventRecord(copied, s0));

    T(cudaSetDevice(1));
    T(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    int *dst = NULL;
    T(cudaMallocAsync(&dst, sizeof h, s1));
    NEED(dst);
    cudaMemAccessDesc desc = {};
    desc.location.type = cudaMemLocationTypeDevice;
    desc.location.id = 1;
    desc.flags = cudaMemAccessFlagsProtReadWrite;
    T(cudaMemPoolSetAccess(pool, &desc, 1));
    OUT("after cudaMemPoolSetAccess: device 1=%d", access_of(pool, 1));
    // No descriptors: nothing changes.
    T(cudaMemPoolSetAccess(pool, &desc, 0));
    OUT("NULL map with a count: %s", cudaGetErrorName(cudaMemPoolSetAccess(pool, NULL, 1)));
    OUT("the last error it left: %s", cudaGetErrorName(cudaGetLastError()));

    T(cudaStreamWaitEvent(s1, copied, 0));
    twice<<<(N + 255) / 256, 256, 0, s1>>>(src, dst, N);
    T(cudaGetLastError());
    T(cudaMemcpyAsync(back, dst, sizeof back, cudaMemcpyDeviceToHost, s1));
    T(cudaFreeAsync(src, s1));
    T(cudaFreeAsync(dst, s1));
    T(cudaStreamSynchronize(s1));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += back[i] != 2 * h[i];
    OUT("mismatches=%d", bad);
    CHECK(bad == 0);
    T(cudaStreamDestroy(s1));
    T(cudaSetDevice(0));
    T(cudaStreamDestroy(s0));
    T(cudaEventDestroy(copied));
    OUT("done");
    return 0;
}
