// The L1/shared-memory preference and the shared-memory bank size, per device and per
// kernel (cudaDevice{Get,Set}CacheConfig, cudaDevice{Get,Set}SharedMemConfig,
// cudaFunc{SetCacheConfig,SetSharedMemConfig}): older programs set them before their
// launches. The cache preference set is the one read back; the H200's banks are four
// bytes wide, fixed, so a bank-size setting does nothing (cuda.h) and the answer stays
// four bytes; values outside the enums are refused.
#include "common.h"

__global__ void store_one(int *p) { *p = 1; }

int main() {
    enum cudaFuncCache cache = (enum cudaFuncCache)-1;
    T(cudaDeviceGetCacheConfig(&cache));
    OUT("cache config %d", (int)cache);
    T(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));
    T(cudaDeviceGetCacheConfig(&cache));
    OUT("cache config %d", (int)cache);
    CHECK(cache == cudaFuncCachePreferShared);
    T(cudaDeviceSetCacheConfig((enum cudaFuncCache)7));
    T(cudaGetLastError());
    T(cudaDeviceGetCacheConfig(&cache));
    OUT("cache config %d", (int)cache);
    T(cudaDeviceSetCacheConfig(cudaFuncCachePreferNone));

    enum cudaSharedMemConfig banks = (enum cudaSharedMemConfig)-1;
    T(cudaDeviceGetSharedMemConfig(&banks));
    OUT("bank size config %d", (int)banks);
    T(cudaDeviceSetSharedMemConfig(cudaSharedMemBankSizeEightByte));
    T(cudaDeviceGetSharedMemConfig(&banks));
    OUT("bank size config %d", (int)banks);
    T(cudaDeviceSetSharedMemConfig((enum cudaSharedMemConfig)5));
    T(cudaGetLastError());
    T(cudaDeviceSetSharedMemConfig(cudaSharedMemBankSizeDefault));

    T(cudaFuncSetCacheConfig(store_one, cudaFuncCachePreferL1));
    T(cudaFuncSetSharedMemConfig(store_one, cudaSharedMemBankSizeEightByte));
    T(cudaFuncSetSharedMemConfig(store_one, (enum cudaSharedMemConfig)9));
    T(cudaGetLastError());

    // The kernel runs as before.
    int *d = NULL;
    T(cudaMalloc(&d, sizeof(int)));
    NEED(d);
    store_one<<<1, 1>>>(d);
    T(cudaGetLastError());
    int h = 0;
    T(cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(h == 1);
    T(cudaFree(d));
    return finish();
}
