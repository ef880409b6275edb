// In the spirit of NVIDIA's graphMemoryNodes sample: a graph that allocates its own
// buffers (cudaGraphAddMemAllocNode), computes with them and frees them
// (cudaGraphAddMemFreeNode), the same graph made by capturing cudaMallocAsync and
// cudaFreeAsync, an allocation that outlives its graph and is freed with cudaFreeAsync,
// several launches of each (the addresses stay), and the device's graph memory
// footprint (cudaDeviceGetGraphMemAttribute) before and after cudaDeviceGraphMemTrim.
// Values are small integers in floats, so every sum is exact.
#include "common.h"

enum { N = 1 << 16, THREADS = 256, LAUNCHES = 3 };

__global__ void fill(float *a, float *b, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i] = (float)(i % 7 + k);
        b[i] = (float)(i % 5);
    }
}

__global__ void add(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

static float expected(int i, int k) { return (float)(i % 7 + k) + (float)(i % 5); }

static int check_out(const float *h, int k) {
    int bad = 0;
    for (int i = 0; i < N; i++) bad += h[i] != expected(i, k);
    return bad;
}

// The device's graph memory attributes, in MiB.
static void footprint(const char *when) {
    unsigned long long v[4] = {0, 0, 0, 0};
    const cudaGraphMemAttributeType attrs[4] = {cudaGraphMemAttrUsedMemCurrent, cudaGraphMemAttrUsedMemHigh,
                                                cudaGraphMemAttrReservedMemCurrent, cudaGraphMemAttrReservedMemHigh};
    for (int a = 0; a < 4; a++) T(cudaDeviceGetGraphMemAttribute(0, attrs[a], &v[a]));
    OUT("%s: used %llu MiB (high %llu), reserved %llu MiB (high %llu)", when, v[0] >> 20, v[1] >> 20, v[2] >> 20,
        v[3] >> 20);
}

static cudaMemAllocNodeParams alloc_params(size_t bytes) {
    cudaMemAllocNodeParams p;
    memset(&p, 0, sizeof p);
    p.poolProps.allocType = cudaMemAllocationTypePinned;
    p.poolProps.location.type = cudaMemLocationTypeDevice;
    p.poolProps.location.id = 0;
    p.bytesize = bytes;
    return p;
}

static cudaKernelNodeParams kernel(void *f, void **args) {
    cudaKernelNodeParams kp;
    memset(&kp, 0, sizeof kp);
    kp.func = f;
    kp.gridDim = dim3((N + THREADS - 1) / THREADS);
    kp.blockDim = dim3(THREADS);
    kp.kernelParams = args;
    return kp;
}

// alloc a, alloc b, alloc c -> fill(a, b) -> add(a, b, c) -> copy c out -> free a, b, c.
static cudaGraph_t explicit_graph(float *h_out, int k, void **addresses) {
    cudaGraph_t g = NULL;
    T(cudaGraphCreate(&g, 0));
    cudaGraphNode_t alloc[3], k_fill, k_add, copy_out, free_node;
    cudaMemAllocNodeParams p[3];
    for (int i = 0; i < 3; i++) {
        p[i] = alloc_params(N * sizeof(float));
        T(cudaGraphAddMemAllocNode(&alloc[i], g, NULL, 0, &p[i]));
        addresses[i] = p[i].dptr;
        OUT("buffer %d: %s", i, alignment(p[i].dptr));
    }
    static int n = N;
    static int kk;
    kk = k;
    static void *fill_args[4], *add_args[4];
    static float *a, *b, *c;
    a = (float *)p[0].dptr;
    b = (float *)p[1].dptr;
    c = (float *)p[2].dptr;
    fill_args[0] = &a;
    fill_args[1] = &b;
    fill_args[2] = &n;
    fill_args[3] = &kk;
    cudaKernelNodeParams kp = kernel((void *)fill, fill_args);
    T(cudaGraphAddKernelNode(&k_fill, g, alloc, 2, &kp));
    add_args[0] = &a;
    add_args[1] = &b;
    add_args[2] = &c;
    add_args[3] = &n;
    kp = kernel((void *)add, add_args);
    cudaGraphNode_t before_add[] = {k_fill, alloc[2]};
    T(cudaGraphAddKernelNode(&k_add, g, before_add, 2, &kp));
    T(cudaGraphAddMemcpyNode1D(&copy_out, g, &k_add, 1, h_out, c, N * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < 3; i++) T(cudaGraphAddMemFreeNode(&free_node, g, &copy_out, 1, p[i].dptr));
    return g;
}

int main(void) {
    float *h_out = NULL;
    T(cudaMallocHost((void **)&h_out, N * sizeof(float)));
    NEED(h_out);
    cudaStream_t s;
    T(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    footprint("at start");

    // ---- allocation and free nodes, added one by one ------------------------------------
    void *addr[3];
    cudaGraph_t g = explicit_graph(h_out, 2, addr);
    size_t nodes = 0;
    T(cudaGraphGetNodes(g, NULL, &nodes));
    OUT("%zu nodes", nodes);
    cudaGraphNode_t first[1];
    size_t one = 1;
    T(cudaGraphGetRootNodes(g, first, &one));
    cudaMemAllocNodeParams got;
    T(cudaGraphMemAllocNodeGetParams(first[0], &got));
    OUT("a root allocation node: %zu bytes, at an address the nodes returned: %s", got.bytesize,
        (got.dptr == addr[0] || got.dptr == addr[1] || got.dptr == addr[2]) ? "yes" : "no");
    CHECK((got.dptr == addr[0] || got.dptr == addr[1] || got.dptr == addr[2]) && got.bytesize == N * sizeof(float));
    footprint("built");
    cudaGraphExec_t e = NULL;
    T(cudaGraphInstantiate(&e, g, 0));
    cudaGraphExec_t e2 = NULL;
    cudaError_t second = T(cudaGraphInstantiate(&e2, g, 0));
    CHECK(second != cudaSuccess);
    T(cudaGetLastError());
    for (int k = 0; k < LAUNCHES; k++) {
        memset(h_out, 0, N * sizeof(float));
        T(cudaGraphLaunch(e, s));
        T(cudaStreamSynchronize(s));
        int bad = check_out(h_out, 2);
        OUT("explicit graph launch %d: %d wrong", k, bad);
        CHECK(bad == 0);
    }
    footprint("after the explicit graph's launches");

    // ---- the same by stream capture ------------------------------------------------------
    cudaGraph_t cg = NULL;
    float *a = NULL, *b = NULL, *c = NULL;
    T(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    T(cudaMallocAsync((void **)&a, N * sizeof(float), s));
    T(cudaMallocAsync((void **)&b, N * sizeof(float), s));
    T(cudaMallocAsync((void **)&c, N * sizeof(float), s));
    OUT("captured buffers: %s %s %s", alignment(a), alignment(b), alignment(c));
    fill<<<(N + THREADS - 1) / THREADS, THREADS, 0, s>>>(a, b, N, 3);
    T(cudaGetLastError());
    add<<<(N + THREADS - 1) / THREADS, THREADS, 0, s>>>(a, b, c, N);
    T(cudaGetLastError());
    T(cudaMemcpyAsync(h_out, c, N * sizeof(float), cudaMemcpyDeviceToHost, s));
    T(cudaFreeAsync(a, s));
    T(cudaFreeAsync(b, s));
    T(cudaFreeAsync(c, s));
    T(cudaStreamEndCapture(s, &cg));
    T(cudaGraphGetNodes(cg, NULL, &nodes));
    OUT("captured graph: %zu nodes", nodes);
    cudaGraphExec_t ce = NULL;
    T(cudaGraphInstantiate(&ce, cg, 0));
    for (int k = 0; k < LAUNCHES; k++) {
        memset(h_out, 0, N * sizeof(float));
        T(cudaGraphLaunch(ce, s));
        T(cudaStreamSynchronize(s));
        int bad = check_out(h_out, 3);
        OUT("captured graph launch %d: %d wrong", k, bad);
        CHECK(bad == 0);
    }
    footprint("after the captured graph's launches");

    // ---- an allocation that outlives its graph -------------------------------------------
    cudaGraph_t lg = NULL;
    float *kept = NULL;
    T(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    T(cudaMallocAsync((void **)&kept, N * sizeof(float), s));
    fill<<<(N + THREADS - 1) / THREADS, THREADS, 0, s>>>(kept, kept, N, 0);
    T(cudaGetLastError());
    T(cudaStreamEndCapture(s, &lg));
    cudaGraphExec_t le = NULL;
    T(cudaGraphInstantiate(&le, lg, 0));
    for (int k = 0; k < 2; k++) {
        T(cudaGraphLaunch(le, s));
        T(cudaMemcpyAsync(h_out, kept, N * sizeof(float), cudaMemcpyDeviceToHost, s));
        T(cudaStreamSynchronize(s));
        int bad = 0;
        for (int i = 0; i < N; i++) bad += h_out[i] != (float)(i % 5);
        OUT("the graph's allocation read after launch %d: %d wrong", k, bad);
        CHECK(bad == 0);
        if (k == 0) {
            cudaError_t again = T(cudaGraphLaunch(le, s));
            OUT("relaunch while the allocation is live refused: %s", again != cudaSuccess ? "yes" : "no");
            CHECK(again != cudaSuccess);
            T(cudaGetLastError());
            T(cudaStreamSynchronize(s));
        }
        footprint("with the allocation live");
        T(cudaFreeAsync(kept, s));
        T(cudaStreamSynchronize(s));
    }

    // ---- auto-free on launch -------------------------------------------------------------
    cudaGraphExec_t ae = NULL;
    T(cudaGraphExecDestroy(le));
    T(cudaGraphInstantiateWithFlags(&ae, lg, cudaGraphInstantiateFlagAutoFreeOnLaunch));
    T(cudaGraphLaunch(ae, s));
    T(cudaGraphLaunch(ae, s));
    T(cudaStreamSynchronize(s));
    T(cudaFree(kept));

    // ---- the footprint goes back with a trim ---------------------------------------------
    T(cudaGraphExecDestroy(e));
    T(cudaGraphExecDestroy(ce));
    T(cudaGraphExecDestroy(ae));
    T(cudaGraphDestroy(g));
    T(cudaGraphDestroy(cg));
    T(cudaGraphDestroy(lg));
    footprint("all destroyed");
    T(cudaDeviceGraphMemTrim(0));
    footprint("after cudaDeviceGraphMemTrim");
    unsigned long long zero = 0;
    T(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &zero));
    T(cudaDeviceSetGraphMemAttribute(0, cudaGraphMemAttrReservedMemHigh, &zero));
    footprint("highs reset");
    T(cudaStreamDestroy(s));
    T(cudaFreeHost(h_out));
    return finish();
}
