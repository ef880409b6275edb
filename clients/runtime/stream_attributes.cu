// Stream attributes through the runtime: cudaStreamGetAttribute, cudaStreamSetAttribute
// and cudaStreamCopyAttributes on a stream of the program's, the legacy stream and
// cudaStreamPerThread: a fresh stream's values, round trips (an access policy window, the
// synchronization policy, the memory sync domain and its map, the priority as
// cudaStreamGetPriority reads it), a copy, ids not for streams, a NULL value, and a
// kernel launched after the sets still computing its result. Recorded on the H200, where
// NVIDIA's runtime crashes on the NULL value pointer (declared in goldens/differences.txt).
#include "common.h"

__global__ void add_one(int *p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += 1;
}

static void show(const char *what, cudaStream_t s, cudaStreamAttrID id) {
    cudaStreamAttrValue v;
    memset(&v, 0, sizeof v);
    cudaError_t e = cudaStreamGetAttribute(s, id, &v);
    const unsigned *w = (const unsigned *)&v;
    printf("cudaStreamGetAttribute(%s, %d) -> %s\n", what, (int)id, cudaGetErrorName(e));
    OUT("words %u %u %u %u", w[0], w[1], w[2], w[3]);
}

int main(void) {
    int least = 99, greatest = 99;
    T(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    cudaStream_t s, t;
    T(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, greatest));
    T(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking));
    cudaStreamAttrID ids[5] = {cudaStreamAttributeAccessPolicyWindow, cudaStreamAttributeSynchronizationPolicy,
                               cudaStreamAttributePriority, cudaStreamAttributeMemSyncDomainMap,
                               cudaStreamAttributeMemSyncDomain};
    for (int i = 0; i < 5; i++) show("fresh stream", s, ids[i]);
    show("legacy stream", 0, cudaStreamAttributeSynchronizationPolicy);
    show("per-thread stream", cudaStreamPerThread, cudaStreamAttributeSynchronizationPolicy);

    int *d = NULL;
    T(cudaMalloc((void **)&d, 256 * sizeof(int)));
    NEED(d);
    cudaStreamAttrValue v;
    memset(&v, 0, sizeof v);
    v.accessPolicyWindow.base_ptr = d;
    v.accessPolicyWindow.num_bytes = 256 * sizeof(int);
    v.accessPolicyWindow.hitRatio = 0.75f;
    v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    T(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
    memset(&v, 0, sizeof v);
    T(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
    OUT("base is d: %s, bytes %zu, hit ratio %.2f, hit %d, miss %d", v.accessPolicyWindow.base_ptr == d ? "yes" : "no",
        v.accessPolicyWindow.num_bytes, v.accessPolicyWindow.hitRatio, (int)v.accessPolicyWindow.hitProp,
        (int)v.accessPolicyWindow.missProp);
    CHECK(v.accessPolicyWindow.base_ptr == d && v.accessPolicyWindow.num_bytes == 256 * sizeof(int));

    memset(&v, 0, sizeof v);
    v.syncPolicy = cudaSyncPolicyYield;
    T(cudaStreamSetAttribute(s, cudaStreamAttributeSynchronizationPolicy, &v));
    show("after it", s, cudaStreamAttributeSynchronizationPolicy);
    memset(&v, 0, sizeof v);
    v.memSyncDomain = cudaLaunchMemSyncDomainRemote;
    T(cudaStreamSetAttribute(s, cudaStreamAttributeMemSyncDomain, &v));
    show("after it", s, cudaStreamAttributeMemSyncDomain);
    memset(&v, 0, sizeof v);
    v.memSyncDomainMap.default_ = 0;
    v.memSyncDomainMap.remote = 1;
    T(cudaStreamSetAttribute(s, cudaStreamAttributeMemSyncDomainMap, &v));
    show("after it", s, cudaStreamAttributeMemSyncDomainMap);
    memset(&v, 0, sizeof v);
    v.priority = least;
    T(cudaStreamSetAttribute(s, cudaStreamAttributePriority, &v));
    int p = 99;
    T(cudaStreamGetPriority(s, &p));
    OUT("priority: %s", p == least ? "least" : p == greatest ? "greatest" : "another");

    // Work after the sets computes what it computes on any stream.
    T(cudaMemsetAsync(d, 0, 256 * sizeof(int), s));
    add_one<<<2, 128, 0, s>>>(d, 256);
    T(cudaGetLastError());
    T(cudaStreamSynchronize(s));
    int h[256];
    T(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    int ones = 0;
    for (int i = 0; i < 256; i++) ones += h[i] == 1;
    OUT("%d of 256 elements are 1", ones);
    CHECK(ones == 256);

    T(cudaStreamCopyAttributes(t, s));
    for (int i = 1; i < 5; i++) show("the copy", t, ids[i]);
    T(cudaStreamGetPriority(t, &p));
    OUT("the copy's priority: %s", p == least ? "least" : p == greatest ? "greatest" : "another");

    T(cudaStreamGetAttribute(s, (cudaStreamAttrID)cudaLaunchAttributeCooperative, &v));
    T(cudaStreamSetAttribute(s, (cudaStreamAttrID)cudaLaunchAttributeClusterDimension, &v));
    T(cudaStreamGetAttribute(s, (cudaStreamAttrID)99, &v));
    T(cudaGetLastError());
    T(cudaStreamGetAttribute(s, cudaStreamAttributePriority, NULL));
    T(cudaGetLastError());

    T(cudaFree(d));
    T(cudaStreamDestroy(s));
    T(cudaStreamDestroy(t));
    return finish();
}
