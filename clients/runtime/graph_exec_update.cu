// Changing an instantiated graph without instantiating it again, as a program that
// replays one graph with new inputs does: the per-node exec setters of every node type
// (kernel, memcpy and its 1D form, memset, host, child graph, event record and wait),
// cudaGraphExecNodeSetParams, cudaGraphNodeSetEnabled/GetEnabled, and cudaGraphExecUpdate
// from a graph of the same topology, then from graphs that change it (a node more, an
// edge from elsewhere, a node of another type, a copy to host memory, a 2D memset's
// width), with the result and error node each one reports; cudaGraphUpload,
// cudaGraphExecGetFlags, cudaGraphNodeFindInClone and cudaGraphDestroyNode. Every launch
// is checked by the data it leaves.
#include "common.h"

#define N 256

// p[i] += v for i < n.
__global__ void add(int *p, int n, int v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += v;
}

// p[i] *= v for i < n.
__global__ void scale(int *p, int n, int v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] *= v;
}

static int calls[2];
static void CUDART_CB count(void *p) { (*(int *)p)++; }

// The value every element holds, or -1 when they differ.
static int uniform(const int *d) {
    static int h[N];
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    for (int i = 1; i < N; i++)
        if (h[i] != h[0]) return -1;
    return h[0];
}

static cudaKernelNodeParams kernel(void *f, void **args) {
    cudaKernelNodeParams k = {};
    k.func = f;
    k.gridDim = dim3(N / 64);
    k.blockDim = dim3(64);
    k.kernelParams = args;
    return k;
}

static cudaMemsetParams fill(int *d, int value, size_t width, size_t height, size_t pitch) {
    cudaMemsetParams m = {};
    m.dst = d;
    m.value = value;
    m.elementSize = 4;
    m.width = width;
    m.height = height;
    m.pitch = pitch;
    return m;
}

static void launch(cudaGraphExec_t exec, cudaStream_t s) {
    T(cudaGraphLaunch(exec, s));
    T(cudaStreamSynchronize(s));
}

static const char *result_name(cudaGraphExecUpdateResult r) {
    switch (r) {
    case cudaGraphExecUpdateSuccess: return "Success";
    case cudaGraphExecUpdateError: return "Error";
    case cudaGraphExecUpdateErrorTopologyChanged: return "TopologyChanged";
    case cudaGraphExecUpdateErrorNodeTypeChanged: return "NodeTypeChanged";
    case cudaGraphExecUpdateErrorFunctionChanged: return "FunctionChanged";
    case cudaGraphExecUpdateErrorParametersChanged: return "ParametersChanged";
    case cudaGraphExecUpdateErrorNotSupported: return "NotSupported";
    case cudaGraphExecUpdateErrorUnsupportedFunctionChange: return "UnsupportedFunctionChange";
    case cudaGraphExecUpdateErrorAttributesChanged: return "AttributesChanged";
    }
    return "?";
}

static void show(const cudaGraphExecUpdateResultInfo &info, cudaGraphNode_t node, cudaGraphNode_t from) {
    OUT("result %s, error node %s, from node %s", result_name(info.result),
        info.errorNode == NULL ? "NULL" : info.errorNode == node ? "the changed node" : "another",
        info.errorFromNode == NULL ? "NULL" : info.errorFromNode == from ? "the changed dependency" : "another");
}

// memset(a) -> kernel add(a) -> host; copy a -> b after the kernel; memset(c) 2D;
// event record after the copy. Nodes in that order.
static cudaGraph_t build(cudaGraphNode_t n[6], int *a, int *b, int *c, void **args, cudaEvent_t ev, int *counter) {
    cudaGraph_t g;
    cudaGraphCreate(&g, 0);
    cudaMemsetParams m = fill(a, 1, N, 1, 0);
    cudaGraphAddMemsetNode(&n[0], g, NULL, 0, &m);
    cudaKernelNodeParams k = kernel((void *)add, args);
    cudaGraphAddKernelNode(&n[1], g, &n[0], 1, &k);
    cudaHostNodeParams h = {count, counter};
    cudaGraphAddHostNode(&n[2], g, &n[1], 1, &h);
    cudaGraphAddMemcpyNode1D(&n[3], g, &n[1], 1, b, a, N * sizeof(int), cudaMemcpyDeviceToDevice);
    cudaMemsetParams m2 = fill(c, 5, 16, 4, 256);
    cudaGraphAddMemsetNode(&n[4], g, NULL, 0, &m2);
    cudaGraphAddEventRecordNode(&n[5], g, &n[3], 1, ev);
    return g;
}

int main(void) {
    int *a = NULL, *b = NULL, *c = NULL, *host = NULL;
    T(cudaMalloc(&a, N * sizeof(int)));
    T(cudaMalloc(&b, N * sizeof(int)));
    T(cudaMalloc(&c, 8 * 256));
    T(cudaMallocHost(&host, N * sizeof(int)));
    NEED(a);
    NEED(b);
    NEED(c);
    NEED(host);
    cudaStream_t s;
    T(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t ev, ev2;
    T(cudaEventCreate(&ev));
    T(cudaEventCreate(&ev2));

    int n = N, v = 2;
    void *args[] = {&a, &n, &v};
    cudaGraphNode_t nodes[6];
    cudaGraph_t g = build(nodes, a, b, c, args, ev, &calls[0]);
    cudaGraphExec_t e;
    T(cudaGraphInstantiate(&e, g, 0));
    launch(e, s);
    OUT("a = %d, b = %d, host calls %d", uniform(a), uniform(b), calls[0]);
    CHECK(uniform(a) == 3 && uniform(b) == 3 && calls[0] == 1);

    // ---- the per-node setters -----------------------------------------------------------
    printf("-- setters\n");
    int w = 10;
    void *args10[] = {&b, &n, &w};
    cudaKernelNodeParams k10 = kernel((void *)scale, args10);
    T(cudaGraphExecKernelNodeSetParams(e, nodes[1], &k10));
    cudaMemsetParams m7 = fill(a, 7, N, 1, 0);
    T(cudaGraphExecMemsetNodeSetParams(e, nodes[0], &m7));
    cudaHostNodeParams h1 = {count, &calls[1]};
    T(cudaGraphExecHostNodeSetParams(e, nodes[2], &h1));
    // The copy now goes a -> b first, then the kernel scales b: the copy node runs after
    // the kernel node, so b holds a's 7 scaled only at the next launch.
    T(cudaGraphExecMemcpyNodeSetParams1D(e, nodes[3], b, a, N * sizeof(int), cudaMemcpyDeviceToDevice));
    T(cudaGraphExecEventRecordNodeSetEvent(e, nodes[5], ev2));
    cudaEvent_t start;
    T(cudaEventCreate(&start));
    T(cudaEventRecord(start, s));
    launch(e, s);
    OUT("a = %d, b = %d, host calls %d and %d", uniform(a), uniform(b), calls[0], calls[1]);
    CHECK(uniform(a) == 7 && uniform(b) == 7 && calls[0] == 1 && calls[1] == 1);
    float ms = -1;
    T(cudaEventElapsedTime(&ms, start, ev2));
    OUT("the new event was recorded after the start: %s", ms >= 0 ? "yes" : "no");
    cudaEvent_t got = NULL;
    T(cudaGraphEventRecordNodeGetEvent(nodes[5], &got));
    OUT("the graph's node still records the first event: %s", got == ev ? "yes" : "no");

    // The copy through cudaMemcpy3DParms, then a copy to host memory (another memory
    // type) and a 2D memset's width, which cuda.h says an executable graph refuses.
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr(a, N * sizeof(int), N * sizeof(int), 1);
    p.dstPtr = make_cudaPitchedPtr(b, N * sizeof(int), N * sizeof(int), 1);
    p.extent = make_cudaExtent(N * sizeof(int), 1, 1);
    p.kind = cudaMemcpyDeviceToDevice;
    T(cudaGraphExecMemcpyNodeSetParams(e, nodes[3], &p));
    cudaMemcpy3DParms toh = p;
    toh.dstPtr = make_cudaPitchedPtr(host, N * sizeof(int), N * sizeof(int), 1);
    toh.kind = cudaMemcpyDeviceToHost;
    T(cudaGraphExecMemcpyNodeSetParams(e, nodes[3], &toh));
    cudaMemsetParams wider = fill(c, 5, 32, 4, 256);
    T(cudaGraphExecMemsetNodeSetParams(e, nodes[4], &wider));
    cudaMemsetParams c2 = fill(c + 64, 9, 16, 4, 256);
    T(cudaGraphExecMemsetNodeSetParams(e, nodes[4], &c2));
    T(cudaGraphExecHostNodeSetParams(e, nodes[1], &h1));
    launch(e, s);
    int row[16];
    T(cudaMemcpy(row, c + 64, sizeof row, cudaMemcpyDeviceToHost));
    OUT("b = %d, the 2D memset's new rows hold %d", uniform(b), row[15]);
    CHECK(uniform(b) == 7 && row[15] == 9);

    // ---- enabling and disabling ---------------------------------------------------------
    printf("-- enable\n");
    unsigned on = 7;
    T(cudaGraphNodeGetEnabled(e, nodes[1], &on));
    OUT("kernel enabled = %u", on);
    T(cudaGraphNodeSetEnabled(e, nodes[1], 0));
    T(cudaGraphNodeSetEnabled(e, nodes[3], 0));
    T(cudaGraphNodeGetEnabled(e, nodes[1], &on));
    OUT("kernel enabled = %u", on);
    T(cudaMemset(a, 0, N * sizeof(int)));
    T(cudaMemset(b, 0, N * sizeof(int)));
    add<<<N / 64, 64, 0, s>>>(b, N, 1);
    T(cudaGetLastError());
    launch(e, s);
    OUT("a = %d, b = %d (the memset ran; the kernel and the copy did not)", uniform(a), uniform(b));
    CHECK(uniform(a) == 7 && uniform(b) == 1);
    T(cudaGraphNodeSetEnabled(e, nodes[2], 0));
    T(cudaGraphNodeSetEnabled(e, nodes[1], 1));
    launch(e, s);
    OUT("b = %d (the kernel enabled again)", uniform(b));
    CHECK(uniform(b) == 10);
    T(cudaGraphNodeSetEnabled(e, nodes[3], 1));
    launch(e, s);
    OUT("b = %d (the copy too)", uniform(b));
    CHECK(uniform(b) == 7);

    // ---- the generic setter and child graphs --------------------------------------------
    printf("-- child graphs\n");
    cudaGraph_t child, outer;
    T(cudaGraphCreate(&child, 0));
    cudaGraphNode_t cm, ck, cn;
    cudaMemsetParams m1 = fill(a, 1, N, 1, 0);
    T(cudaGraphAddMemsetNode(&cm, child, NULL, 0, &m1));
    int three = 3;
    void *args3[] = {&a, &n, &three};
    cudaKernelNodeParams k3 = kernel((void *)add, args3);
    T(cudaGraphAddKernelNode(&ck, child, &cm, 1, &k3));
    T(cudaGraphCreate(&outer, 0));
    T(cudaGraphAddChildGraphNode(&cn, outer, NULL, 0, child));
    cudaGraphNode_t wait;
    T(cudaGraphAddEventWaitNode(&wait, outer, &cn, 1, ev));
    cudaGraphExec_t oe;
    T(cudaGraphInstantiate(&oe, outer, 0));
    launch(oe, s);
    OUT("a = %d", uniform(a));
    CHECK(uniform(a) == 4);
    cudaGraph_t same;
    T(cudaGraphClone(&same, child));
    cudaGraphNode_t sn[2];
    size_t count_nodes = 2;
    T(cudaGraphGetNodes(same, sn, &count_nodes));
    int forty = 40;
    void *args40[] = {&a, &n, &forty};
    cudaKernelNodeParams k40 = kernel((void *)add, args40);
    T(cudaGraphKernelNodeSetParams(sn[1], &k40));
    T(cudaGraphExecChildGraphNodeSetParams(oe, cn, same));
    launch(oe, s);
    OUT("a = %d", uniform(a));
    CHECK(uniform(a) == 41);
    cudaGraphNodeParams gp = {cudaGraphNodeTypeGraph};
    gp.graph.graph = child;
    T(cudaGraphExecNodeSetParams(oe, cn, &gp));
    launch(oe, s);
    OUT("a = %d", uniform(a));
    CHECK(uniform(a) == 4);
    cudaGraph_t bigger;
    T(cudaGraphClone(&bigger, child));
    cudaGraphNode_t extra;
    T(cudaGraphAddEmptyNode(&extra, bigger, NULL, 0));
    T(cudaGraphExecChildGraphNodeSetParams(oe, cn, bigger));
    T(cudaGraphExecEventWaitNodeSetEvent(oe, wait, ev2));
    cudaGraphNodeParams ep = {cudaGraphNodeTypeWaitEvent};
    ep.eventWait.event = ev;
    T(cudaGraphExecNodeSetParams(oe, wait, &ep));
    launch(oe, s);

    // ---- cudaGraphExecUpdate ------------------------------------------------------------
    printf("-- update\n");
    cudaGraphExecUpdateResultInfo info;
    int v5 = 5;
    void *args5[] = {&a, &n, &v5};
    cudaGraphNode_t m[6];
    cudaGraph_t u = build(m, a, b, c, args5, ev2, &calls[1]);
    memset(&info, 0xA5, sizeof info);
    T(cudaGraphExecUpdate(e, u, &info));
    show(info, NULL, NULL);
    calls[1] = 0;
    launch(e, s);
    OUT("a = %d, b = %d, host calls %d", uniform(a), uniform(b), calls[1]);
    CHECK(uniform(a) == 6 && uniform(b) == 6 && calls[1] == 1);

    u = build(m, a, b, c, args5, ev2, &calls[1]);
    T(cudaGraphAddEmptyNode(&extra, u, NULL, 0));
    memset(&info, 0xA5, sizeof info);
    T(cudaGraphExecUpdate(e, u, &info));
    show(info, NULL, NULL);

    u = build(m, a, b, c, args5, ev2, &calls[1]);
    T(cudaGraphRemoveDependencies(u, &m[3], &m[5], NULL, 1));
    T(cudaGraphAddDependencies(u, &m[2], &m[5], NULL, 1));
    memset(&info, 0xA5, sizeof info);
    T(cudaGraphExecUpdate(e, u, &info));
    show(info, m[5], m[2]);

    u = build(m, a, b, c, args5, ev2, &calls[1]);
    T(cudaGraphMemcpyNodeSetParams(m[3], &toh));
    memset(&info, 0xA5, sizeof info);
    T(cudaGraphExecUpdate(e, u, &info));
    show(info, m[3], NULL);

    u = build(m, a, b, c, args5, ev2, &calls[1]);
    T(cudaGraphMemsetNodeSetParams(m[4], &wider));
    memset(&info, 0xA5, sizeof info);
    T(cudaGraphExecUpdate(e, u, &info));
    show(info, m[4], NULL);

    cudaGraph_t t;
    T(cudaGraphCreate(&t, 0));
    cudaMemsetParams mt = fill(a, 1, N, 1, 0);
    T(cudaGraphAddMemsetNode(&m[0], t, NULL, 0, &mt));
    cudaKernelNodeParams kt = kernel((void *)add, args5);
    T(cudaGraphAddKernelNode(&m[1], t, &m[0], 1, &kt));
    T(cudaGraphAddEmptyNode(&m[2], t, &m[1], 1));
    memset(&info, 0xA5, sizeof info);
    T(cudaGraphExecUpdate(e, t, &info));
    show(info, NULL, NULL);

    launch(e, s);
    OUT("after the refused updates: a = %d, b = %d", uniform(a), uniform(b));
    CHECK(uniform(a) == 6 && uniform(b) == 6);

    // ---- upload, flags, clones ------------------------------------------------------------
    printf("-- upload, flags, clones\n");
    unsigned long long flags = 99;
    T(cudaGraphExecGetFlags(e, &flags));
    OUT("flags %llu", flags);
    T(cudaGraphUpload(e, s));
    launch(e, s);
    OUT("a = %d", uniform(a));
    CHECK(uniform(a) == 6);
    cudaGraph_t cl;
    T(cudaGraphClone(&cl, g));
    cudaGraphNode_t found = NULL;
    T(cudaGraphNodeFindInClone(&found, nodes[2], cl));
    {
        cudaGraphNodeType type;
        T(cudaGraphNodeGetType(found, &type));
        OUT("the copy of the host node is a host node: %s", type == cudaGraphNodeTypeHost ? "yes" : "no");
    }
    T(cudaGraphDestroyNode(found));
    size_t cnt = 0;
    T(cudaGraphGetNodes(cl, NULL, &cnt));
    OUT("the clone has %zu nodes", cnt);
    CHECK(cnt == 5);
    T(cudaGraphNodeFindInClone(&found, nodes[2], cl));
    T(cudaGraphDestroy(cl));

    // ---- queries with edge data, instantiation with parameters, user objects ----------
    printf("-- queries and user objects\n");
    cudaGraphNode_t deps[4];
    cudaGraphEdgeData edges[4];
    memset(edges, 0xA5, sizeof edges);
    size_t ndeps = 4;
    T(cudaGraphNodeGetDependencies(nodes[1], deps, edges, &ndeps));
    OUT("the kernel depends on %zu node(s), the memset: %s; default edge: %s", ndeps,
        ndeps == 1 && deps[0] == nodes[0] ? "yes" : "no",
        edges[0].type == cudaGraphDependencyTypeDefault && edges[0].from_port == 0 ? "yes" : "no");
    CHECK(ndeps == 1 && deps[0] == nodes[0]);
    ndeps = 4;
    T(cudaGraphNodeGetDependentNodes(nodes[1], deps, NULL, &ndeps));
    OUT("%zu node(s) depend on the kernel", ndeps);
    CHECK(ndeps == 2);
    cudaKernelNodeParams kp = {};
    T(cudaGraphKernelNodeGetParams(nodes[1], &kp));
    int kv = kp.kernelParams ? *(int *)kp.kernelParams[2] : -1;
    OUT("the kernel node: add %s, grid %u, block %u, its v %d", kp.func == (void *)add ? "yes" : "no",
        kp.gridDim.x, kp.blockDim.x, kv);
    CHECK(kp.func == (void *)add && kp.gridDim.x == N / 64 && kp.blockDim.x == 64 && kv == 2);
    cudaHostNodeParams hp = {};
    T(cudaGraphHostNodeGetParams(nodes[2], &hp));
    OUT("the host node's function and data: %s", hp.fn == count && hp.userData == &calls[0] ? "as given" : "other");
    CHECK(hp.fn == count && hp.userData == &calls[0]);
    cudaMemsetParams mp = {};
    T(cudaGraphMemsetNodeGetParams(nodes[4], &mp));
    OUT("the 2D memset: value %u, %zux%zu of %u bytes, pitch %zu, dst %s", mp.value, mp.width,
        mp.height, mp.elementSize, mp.pitch, mp.dst == c ? "as given" : "other");
    CHECK(mp.value == 5 && mp.width == 16 && mp.height == 4 && mp.pitch == 256 && mp.dst == c);
    cudaGraphInstantiateParams ip = {};
    ip.flags = cudaGraphInstantiateFlagUpload;
    ip.uploadStream = s;
    cudaGraphExec_t pe = NULL;
    T(cudaGraphInstantiateWithParams(&pe, g, &ip));
    OUT("result %d", (int)ip.result_out);
    launch(pe, s);
    CHECK(uniform(a) == 3);
    T(cudaGraphExecDestroy(pe));
    static int destroyed;
    cudaUserObject_t object;
    T(cudaUserObjectCreate(&object, &destroyed, count, 1, cudaUserObjectNoDestructorSync));
    T(cudaGraphRetainUserObject(g, object, 1, cudaGraphUserObjectMove));
    cudaGraph_t holder;
    T(cudaGraphClone(&holder, g));
    T(cudaGraphDestroy(holder));
    OUT("destroyed after the clone went: %d", destroyed);
    CHECK(destroyed == 0);

    T(cudaGraphExecDestroy(oe));
    T(cudaGraphExecDestroy(e));
    T(cudaGraphDestroy(outer));
    T(cudaGraphDestroy(g));
    // Its destructor runs once the graph went, on a thread of the driver's, with no
    // synchronisation promised (cudaUserObjectNoDestructorSync): not looked at here.
    T(cudaFree(a));
    T(cudaFree(b));
    T(cudaFree(c));
    T(cudaFreeHost(host));
    return finish();
}
