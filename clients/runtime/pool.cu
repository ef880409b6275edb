// The stream-ordered allocator: cudaMallocAsync/FreeAsync on the default pool and on a
// pool of the program's, attributes, trimming, reuse.
#include "common.h"

static unsigned long long attr(cudaMemPool_t p, cudaMemPoolAttr a) {
    unsigned long long v = 0;
    cudaMemPoolGetAttribute(p, a, &v);
    return v;
}

static void show(cudaMemPool_t p) {
    OUT("reserved=%llu used=%llu reservedHigh=%llu usedHigh=%llu", attr(p, cudaMemPoolAttrReservedMemCurrent),
        attr(p, cudaMemPoolAttrUsedMemCurrent), attr(p, cudaMemPoolAttrReservedMemHigh),
        attr(p, cudaMemPoolAttrUsedMemHigh));
}

int main(void) {
    cudaStream_t s;
    T(cudaStreamCreate(&s));
    cudaMemPool_t def = NULL;
    T(cudaDeviceGetDefaultMemPool(&def, 0));
    unsigned long long thr = 12345;
    T(cudaMemPoolGetAttribute(def, cudaMemPoolAttrReleaseThreshold, &thr));
    OUT("release threshold=%llu", thr);
    show(def);

    void *a = NULL, *b = NULL;
    T(cudaMallocAsync(&a, 1 << 20, s));
    OUT("a is %s", alignment(a));
    NEED(a);
    T(cudaMallocAsync(&b, 3 << 20, s));
    show(def);
    unsigned char pattern[256];
    for (int i = 0; i < 256; i++) pattern[i] = (unsigned char)(255 - i);
    T(cudaMemcpyAsync(a, pattern, 256, cudaMemcpyHostToDevice, s));
    unsigned char back[256] = {0};
    T(cudaMemcpyAsync(back, a, 256, cudaMemcpyDeviceToHost, s));
    T(cudaStreamSynchronize(s));
    CHECK(memcmp(pattern, back, 256) == 0);
    T(cudaFreeAsync(a, s));
    T(cudaFreeAsync(b, s));
    show(def);
    T(cudaStreamSynchronize(s));
    OUT("after synchronize, threshold 0:");
    show(def);

    // Keep memory: a threshold, then reuse.
    thr = ~0ull;
    T(cudaMemPoolSetAttribute(def, cudaMemPoolAttrReleaseThreshold, &thr));
    T(cudaMallocAsync(&a, 1 << 20, s));
    T(cudaFreeAsync(a, s));
    T(cudaStreamSynchronize(s));
    show(def);
    void *again = NULL;
    T(cudaMallocAsync(&again, 1 << 20, s));
    OUT("reused the freed block: %d", again == a);
    T(cudaFreeAsync(again, s));
    T(cudaStreamSynchronize(s));
    T(cudaMemPoolTrimTo(def, 0));
    show(def);
    unsigned long long zero = 0;
    T(cudaMemPoolSetAttribute(def, cudaMemPoolAttrUsedMemHigh, &zero));
    T(cudaMemPoolSetAttribute(def, cudaMemPoolAttrReservedMemHigh, &zero));
    show(def);
    T(cudaMemPoolSetAttribute(def, cudaMemPoolAttrUsedMemCurrent, &zero));
    T(cudaGetLastError());
    int reuse = -1;
    T(cudaMemPoolGetAttribute(def, cudaMemPoolReuseAllowOpportunistic, &reuse));
    OUT("reuse opportunistic=%d", reuse);

    // A pool of the program's.
    cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t mine = NULL;
    T(cudaMemPoolCreate(&mine, &props));
    void *c = NULL;
    T(cudaMallocFromPoolAsync(&c, 5000, mine, s));
    show(mine);
    T(cudaMemsetAsync(c, 0x42, 5000, s));
    unsigned char cb[16] = {0};
    T(cudaMemcpyAsync(cb, (char *)c + 4990, 10, cudaMemcpyDeviceToHost, s));
    T(cudaStreamSynchronize(s));
    CHECK(cb[0] == 0x42 && cb[9] == 0x42);
    T(cudaFreeAsync(c, s));
    T(cudaStreamSynchronize(s));
    T(cudaMemPoolDestroy(mine));
    props.location.id = 99;
    T(cudaMemPoolCreate(&mine, &props));
    T(cudaGetLastError());

    // cudaFree of stream-ordered memory.
    T(cudaMallocAsync(&a, 4096, s));
    T(cudaFree(a));
    T(cudaMallocAsync(&a, 0, s));
    T(cudaGetLastError());
    T(cudaFreeAsync(NULL, s));
    T(cudaGetLastError());
    T(cudaStreamDestroy(s));
    return finish();
}
