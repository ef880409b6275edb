/* A striped allocation over every device, in the style of NVIDIA's vectorAddMMAP sample:
 * one reservation, its stripes backed by memory on each device in turn, read-write access
 * granted to every device that can reach all the others, data written and checked from
 * each device's context. */
#include "common.h"

int main(void) {
    CHECK(cuInit(0));
    int n = 0;
    CHECK(cuDeviceGetCount(&n));
    EXPECT(n >= 1);
    CUcontext ctx[16];
    int m = n > 16 ? 16 : n;
    for (int d = 0; d < m; d++) {
        int vmm = 0;
        CHECK(cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, d));
        EXPECT(vmm == 1);
        CHECK(cuDevicePrimaryCtxRetain(&ctx[d], d));
    }
    /* Devices that can map each other's memory (the sample's "mapping devices"). */
    CUmemAccessDesc access[16];
    int k = 0;
    for (int d = 0; d < m; d++) {
        int ok = 1;
        for (int p = 0; p < m; p++) {
            int can = 1;
            if (p != d) CHECK(cuDeviceCanAccessPeer(&can, d, p));
            ok &= can;
        }
        if (ok) access[k++] = rw_for(d);
    }
    EXPECT(k >= 1);
    size_t gran = 0, g;
    for (int d = 0; d < m; d++) {
        CUmemAllocationProp p = prop_on(d, 0);
        CHECK(cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
        if (g > gran) gran = g;
    }
    const int stripes = 2 * m;
    size_t stripe = gran, size = stripes * stripe;
    CUdeviceptr va;
    CHECK(cuMemAddressReserve(&va, size, 0, 0, 0));
    CUmemGenericAllocationHandle h[32];
    for (int s = 0; s < stripes; s++) {
        CUmemAllocationProp p = prop_on(s % m, 0);
        CHECK(cuMemCreate(&h[s], stripe, &p, 0));
        CHECK(cuMemMap(va + s * stripe, stripe, 0, h[s], 0));
        CHECK(cuMemRelease(h[s])); /* the mapping keeps it, as in the sample */
    }
    CHECK(cuMemSetAccess(va, size, access, k));

    /* Written from the first device's context, read back from every mapping device's. */
    unsigned *host = malloc(size), *back = malloc(size);
    for (size_t i = 0; i < size / 4; i++) host[i] = (unsigned)(i * 2654435761u);
    CHECK(cuCtxSetCurrent(ctx[access[0].location.id]));
    CHECK(cuMemcpyHtoD(va, host, size));
    for (int a = 0; a < k; a++) {
        CHECK(cuCtxSetCurrent(ctx[access[a].location.id]));
        memset(back, 0, size);
        CHECK(cuMemcpyDtoH(back, va, size));
        EXPECT(memcmp(host, back, size) == 0);
        int ord = -1;
        CHECK(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, va + stripe));
        EXPECT(ord == 1 % m);
    }
    CHECK(cuMemUnmap(va, size));
    CHECK(cuMemAddressFree(va, size));
    CHECK(cuCtxSetCurrent(NULL));
    for (int d = 0; d < m; d++) CHECK(cuDevicePrimaryCtxRelease(d));
    free(host);
    free(back);
    printf("ok %d device(s), %d stripes\n", m, stripes);
    return 0;
}
