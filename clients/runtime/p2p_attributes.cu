// topologyQuery's and p2pBandwidthLatencyTest's questions: cudaDeviceGetP2PAttribute for
// every attribute between two devices both ways, a device as its own peer, an unknown
// attribute and device, a NULL value; and each device's link to the host. Needs two GPUs
// (on the mock: CUMOCK_DEVICES=2); exits 77 with fewer.
#include "common.h"

int main(void) {
    int n = 0;
    T(cudaGetDeviceCount(&n));
    if (n < 2) {
        printf("SKIP: %d device(s); a link needs two\n", n);
        return SKIP_EXIT;
    }
    const struct {
        const char *name;
        enum cudaDeviceP2PAttr attr;
    } attrs[] = {
        {"PerformanceRank", cudaDevP2PAttrPerformanceRank},
        {"AccessSupported", cudaDevP2PAttrAccessSupported},
        {"NativeAtomicSupported", cudaDevP2PAttrNativeAtomicSupported},
        {"CudaArrayAccessSupported", cudaDevP2PAttrCudaArrayAccessSupported},
        {"OnlyPartialNativeAtomicSupported", cudaDevP2PAttrOnlyPartialNativeAtomicSupported},
    };
    for (int src = 0; src < 2; src++) {
        for (unsigned i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
            int v = -7;
            cudaError_t e = cudaDeviceGetP2PAttribute(&v, attrs[i].attr, src, 1 - src);
            printf("cudaDeviceGetP2PAttribute(%s, %d, %d) -> %s\n", attrs[i].name, src, 1 - src,
                   cudaGetErrorName(e));
            if (e == cudaSuccess) OUT("value %d", v);
        }
    }
    int v = -7;
    T(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrAccessSupported, 0, 0));
    T(cudaDeviceGetP2PAttribute(&v, (enum cudaDeviceP2PAttr)99, 0, 1));
    T(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrAccessSupported, 0, n));
    T(cudaDeviceGetP2PAttribute(NULL, cudaDevP2PAttrAccessSupported, 0, 1));
    T(cudaGetLastError());
    for (int d = 0; d < 2; d++) {
        int atomics = -7;
        T(cudaDeviceGetAttribute(&atomics, cudaDevAttrHostNativeAtomicSupported, d));
        OUT("device %d host native atomics %d", d, atomics);
    }
    return finish();
}
