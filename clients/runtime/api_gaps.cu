// The runtime calls that reach the driver functions the mock emulated late (probe
// api_gaps asks the driver itself): a kernel's parameter layout, the dynamic shared
// memory a block may have at an occupancy, the cache and (deprecated) shared-memory
// configurations, range attributes in one call, and the host's atomic capabilities.
// Recorded on the H200 with NVIDIA's runtime (goldens/NVIDIA_H200-580.159.04/).
#include "common.h"

struct Wide {
    double d[3];
};

__global__ void params(char a, long long b, Wide c, int d) {
    if (a == 1 && b == 2 && c.d[0] == 3.0 && d == 4) asm volatile("trap;");
}

__global__ void with_shared(int *out) {
    __shared__ int buf[1024];
    buf[threadIdx.x] = threadIdx.x;
    __syncthreads();
    if (out) out[threadIdx.x] = buf[threadIdx.x];
}

int main(void) {
    for (size_t i = 0; i < 5; i++) {
        size_t offset = 99, size = 99;
        if (T(cudaFuncGetParamInfo((const void *)params, i, &offset, &size)) == cudaSuccess)
            OUT("param %zu: offset %zu size %zu", i, offset, size);
    }
    size_t offset = 99;
    T(cudaFuncGetParamInfo((const void *)params, 3, &offset, NULL));
    OUT("offset %zu", offset);
    CHECK(offset == 40);
    T(cudaFuncGetParamInfo((const void *)params, 0, NULL, NULL));

    int shapes[][2] = {{1, 128}, {4, 256}, {8, 32}, {64, 1024}};
    for (int k = 0; k < 4; k++) {
        size_t smem = 99;
        if (T(cudaOccupancyAvailableDynamicSMemPerBlock(&smem, (const void *)with_shared, shapes[k][0], shapes[k][1])) != cudaSuccess)
            continue;
        OUT("%d blocks of %d: %zu bytes", shapes[k][0], shapes[k][1], smem);
        if (smem > 0) {
            int blocks = 0;
            // The H200's answer leaves out the 1 KiB each block reserves, so these blocks
            // need not all fit with it (recorded: 8 blocks of 32 get 25088 bytes, with
            // which 7 fit).
            T(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, with_shared, shapes[k][1], smem));
            OUT("%d blocks fit with it", blocks);
        }
    }

    enum cudaFuncCache c = cudaFuncCachePreferNone;
    T(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));
    T(cudaDeviceGetCacheConfig(&c));
    OUT("cache config %d", (int)c);
    CHECK(c == cudaFuncCachePreferShared);
    T(cudaDeviceSetCacheConfig(cudaFuncCachePreferNone));
    T(cudaFuncSetCacheConfig((const void *)params, cudaFuncCachePreferL1));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    enum cudaSharedMemConfig sc = cudaSharedMemBankSizeDefault;
    T(cudaDeviceGetSharedMemConfig(&sc));
    OUT("shared config %d", (int)sc);
    T(cudaDeviceSetSharedMemConfig(cudaSharedMemBankSizeEightByte));
    T(cudaFuncSetSharedMemConfig((const void *)params, cudaSharedMemBankSizeFourByte));
#pragma GCC diagnostic pop

    int *managed = NULL;
    T(cudaMallocManaged((void **)&managed, 2 << 20));
    NEED(managed);
    cudaMemLocation dev = {cudaMemLocationTypeDevice, 0};
    T(cudaMemAdvise(managed, 2 << 20, cudaMemAdviseSetReadMostly, dev));
    int read_mostly = 99, accessed[2] = {99, 99};
    void *data[2] = {&read_mostly, accessed};
    size_t sizes[2] = {4, 8};
    enum cudaMemRangeAttribute attrs[2] = {cudaMemRangeAttributeReadMostly, cudaMemRangeAttributeAccessedBy};
    T(cudaMemRangeGetAttributes(data, sizes, attrs, 2, managed, 2 << 20));
    OUT("read mostly %d, accessed by %d %d", read_mostly, accessed[0], accessed[1]);
    CHECK(read_mostly == 1);
    T(cudaFree(managed));

    enum cudaAtomicOperation ops[3] = {cudaAtomicOperationIntegerAdd, cudaAtomicOperationCAS, cudaAtomicOperationFloatAdd};
    unsigned caps[3] = {99, 99, 99};
    T(cudaDeviceGetHostAtomicCapabilities(caps, ops, 3, 0));
    OUT("host atomics: %#x %#x %#x", caps[0], caps[1], caps[2]);
    T(cudaDeviceGetHostAtomicCapabilities(caps, ops, 0, 0));
    return finish();
}
