// UnifiedMemoryPerf's pattern: managed memory given hints through the runtime.
// cudaMemAdvise and cudaMemPrefetchAsync (to the host, then to the device on a stream that a
// kernel holds spinning on a pinned latch until the host has queued everything), what
// cudaMemRangeGetAttribute reads back of them, cudaStreamAttachMemAsync's associations, and
// the arguments each call refuses; the data a kernel computes between the prefetches is
// checked on the host.
#include "common.h"

__global__ void spin_until_set(volatile unsigned int *latch) {
    while (latch[0] < 1) {
    }
}

__global__ void add(float *c, const float *a, const float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

static cudaMemLocation host_location(void) {
    cudaMemLocation l;
    l.type = cudaMemLocationTypeHost;
    l.id = 0;
    return l;
}

static cudaMemLocation device_location(int id) {
    cudaMemLocation l;
    l.type = cudaMemLocationTypeDevice;
    l.id = id;
    return l;
}

// One int-valued range attribute, printed.
static void range_int(const char *name, enum cudaMemRangeAttribute attr, const void *p, size_t n) {
    int v = -7;
    cudaError_t e = cudaMemRangeGetAttribute(&v, sizeof v, attr, p, n);
    printf("cudaMemRangeGetAttribute(%s) -> %s\n", name, cudaGetErrorName(e));
    if (e == cudaSuccess) OUT("value %d", v);
}

int main(void) {
    int dev = 0, concurrent = 0;
    T(cudaSetDevice(dev));
    T(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, dev));
    OUT("concurrentManagedAccess %d", concurrent);

    const int n = 4096;
    const size_t size = n * sizeof(float);
    float *a = NULL, *b = NULL, *c = NULL;
    T(cudaMallocManaged(&a, size, cudaMemAttachGlobal));
    T(cudaMallocManaged(&b, size, cudaMemAttachGlobal));
    T(cudaMallocManaged(&c, size, cudaMemAttachGlobal));
    NEED(a);
    NEED(b);
    NEED(c);

    // Advice, and what the range reports of it.
    range_int("ReadMostly, fresh", cudaMemRangeAttributeReadMostly, a, size);
    T(cudaMemAdvise(a, size, cudaMemAdviseSetReadMostly, device_location(dev)));
    range_int("ReadMostly, set", cudaMemRangeAttributeReadMostly, a, size);
    T(cudaMemAdvise(a, size, cudaMemAdviseUnsetReadMostly, device_location(dev)));
    range_int("ReadMostly, unset", cudaMemRangeAttributeReadMostly, a, size);
    T(cudaMemAdvise(b, size, cudaMemAdviseSetPreferredLocation, device_location(dev)));
    range_int("PreferredLocation", cudaMemRangeAttributePreferredLocation, b, size);
    T(cudaMemAdvise(b, size, cudaMemAdviseSetPreferredLocation, host_location()));
    range_int("PreferredLocation, host", cudaMemRangeAttributePreferredLocation, b, size);
    T(cudaMemAdvise(b, size, cudaMemAdviseUnsetPreferredLocation, device_location(dev)));
    range_int("PreferredLocation, unset", cudaMemRangeAttributePreferredLocation, b, size);
    T(cudaMemAdvise(c, size, cudaMemAdviseSetAccessedBy, device_location(dev)));
    {
        int by[2] = {-7, -7};
        T(cudaMemRangeGetAttribute(by, sizeof by, cudaMemRangeAttributeAccessedBy, c, size));
        OUT("accessed by %d %d", by[0], by[1]);
    }
    T(cudaMemAdvise(c, size, cudaMemAdviseUnsetAccessedBy, device_location(dev)));

    // The sample's first step: everything to the host.
    T(cudaMemPrefetchAsync(a, size, host_location(), 0, 0));
    T(cudaMemPrefetchAsync(b, size, host_location(), 0, 0));
    T(cudaMemPrefetchAsync(c, size, host_location(), 0, 0));
    range_int("LastPrefetchLocation, host", cudaMemRangeAttributeLastPrefetchLocation, a, size);
    for (int i = 0; i < n; i++) {
        a[i] = (float)i;
        b[i] = (float)(2 * i);
        c[i] = -1.0f;
    }

    // Then: a kernel holds the stream until the host has queued the prefetches to the
    // device, the computation and the prefetches back, and only then sets the latch.
    unsigned int *latch = NULL;
    T(cudaMallocHost(&latch, sizeof *latch));
    NEED(latch);
    *latch = 0;
    cudaStream_t s;
    T(cudaStreamCreate(&s));
    spin_until_set<<<1, 1, 0, s>>>(latch);
    T(cudaGetLastError());
    T(cudaMemPrefetchAsync(a, size, device_location(dev), 0, s));
    T(cudaMemPrefetchAsync(b, size, device_location(dev), 0, s));
    T(cudaMemPrefetchAsync(c, size, device_location(dev), 0, s));
    add<<<(n + 255) / 256, 256, 0, s>>>(c, a, b, n);
    T(cudaGetLastError());
    T(cudaMemPrefetchAsync(c, size, host_location(), 0, s));
    T(cudaStreamQuery(s));
    *latch = 1;
    T(cudaStreamSynchronize(s));
    range_int("LastPrefetchLocation, host again", cudaMemRangeAttributeLastPrefetchLocation, c, size);
    range_int("LastPrefetchLocation, device", cudaMemRangeAttributeLastPrefetchLocation, a, size);
    int wrong = 0;
    for (int i = 0; i < n; i++) wrong += c[i] != (float)(3 * i);
    OUT("wrong sums %d", wrong);
    CHECK(wrong == 0);

    // Stream association (the path for devices without concurrent managed access).
    T(cudaStreamAttachMemAsync(s, a, 0, cudaMemAttachSingle));
    T(cudaStreamAttachMemAsync(s, b, size, cudaMemAttachHost));
    T(cudaStreamAttachMemAsync(s, c, 0, cudaMemAttachGlobal));
    T(cudaStreamSynchronize(s));

    // What each call refuses.
    float *plain = NULL;
    T(cudaMalloc(&plain, size));
    T(cudaMemPrefetchAsync(plain, size, device_location(dev), 0, s));
    T(cudaMemPrefetchAsync(a, size, device_location(dev), 1, s));
    T(cudaMemPrefetchAsync(a, size, device_location(99), 0, s));
    T(cudaMemPrefetchAsync(a, 2 * size, device_location(dev), 0, s));
    T(cudaMemAdvise(a, size, (enum cudaMemoryAdvise)99, device_location(dev)));
    T(cudaMemAdvise(plain, size, cudaMemAdviseSetReadMostly, device_location(dev)));
    T(cudaStreamAttachMemAsync(s, a, 0, 8));
    T(cudaStreamAttachMemAsync(0, a, 0, cudaMemAttachSingle));
    T(cudaStreamAttachMemAsync(s, a, 16, cudaMemAttachGlobal));
    T(cudaStreamAttachMemAsync(s, plain, 0, cudaMemAttachGlobal));
    {
        int v = 0;
        T(cudaMemRangeGetAttribute(&v, 2, cudaMemRangeAttributeReadMostly, a, size));
        T(cudaMemRangeGetAttribute(&v, sizeof v, cudaMemRangeAttributeReadMostly, plain, size));
    }
    T(cudaGetLastError());

    T(cudaStreamDestroy(s));
    T(cudaFree(plain));
    T(cudaFreeHost(latch));
    T(cudaFree(a));
    T(cudaFree(b));
    T(cudaFree(c));
    return finish();
}
