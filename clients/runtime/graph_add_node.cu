// Graph nodes made and changed through the generic calls of CUDA 12.2 and later:
// cudaGraphAddNode with cudaGraphNodeParams for memset, kernel, memcpy, host and child
// graph nodes, then cudaGraphExecNodeSetParams on an executable graph's kernel and memset
// nodes and cudaGraphNodeSetParams on the graph's kernel node, each checked by the data
// the launches leave; and the answer to parameters of another node type.
#include "common.h"

#define N 256

// p[i] += v for i < n.
__global__ void add(int *p, int n, int v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += v;
}

static int host_calls = 0;
static void CUDART_CB count(void *) { host_calls++; }

static cudaGraphNodeParams kernel_params(void **args) {
    cudaGraphNodeParams p = {cudaGraphNodeTypeKernel};
    p.kernel.func = (void *)add;
    p.kernel.gridDim = dim3(N / 64);
    p.kernel.blockDim = dim3(64);
    p.kernel.kernelParams = args;
    return p;
}

static cudaGraphNodeParams memset_params(int *d, int value) {
    cudaGraphNodeParams p = {cudaGraphNodeTypeMemset};
    p.memset.dst = d;
    p.memset.value = value;
    p.memset.elementSize = 4;
    p.memset.width = N;
    p.memset.height = 1;
    return p;
}

static cudaGraphNode_t add_node(cudaGraph_t g, cudaGraphNode_t dep, cudaGraphNodeParams *p) {
    cudaGraphNode_t node = NULL;
    T(cudaGraphAddNode(&node, g, dep ? &dep : NULL, NULL, dep ? 1 : 0, p));
    return node;
}

// The value every element holds, or -1 when they differ.
static int uniform(const int *h) {
    for (int i = 1; i < N; i++)
        if (h[i] != h[0]) return -1;
    return h[0];
}

int main(void) {
    int *d = NULL;
    T(cudaMalloc(&d, N * sizeof(int)));
    NEED(d);
    static int h[N];
    cudaStream_t s;
    T(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    int n = N, v = 7;
    void *args[] = {&d, &n, &v};
    cudaGraph_t g, child;
    T(cudaGraphCreate(&g, 0));
    T(cudaGraphCreate(&child, 0));

    // memset 5 -> add 7 -> child graph (add 100) -> copy to the host -> host function.
    cudaGraphNodeParams pm = memset_params(d, 5);
    cudaGraphNode_t nm = add_node(g, NULL, &pm);
    cudaGraphNodeParams pk = kernel_params(args);
    cudaGraphNode_t nk = add_node(g, nm, &pk);
    int hundred = 100;
    void *child_args[] = {&d, &n, &hundred};
    cudaGraphNodeParams pck = kernel_params(child_args);
    add_node(child, NULL, &pck);
    cudaGraphNodeParams pg = {cudaGraphNodeTypeGraph};
    pg.graph.graph = child;
    cudaGraphNode_t ng = add_node(g, nk, &pg);
    cudaGraphNodeParams pc = {cudaGraphNodeTypeMemcpy};
    pc.memcpy.copyParams.srcPtr = make_cudaPitchedPtr(d, N * sizeof(int), N * sizeof(int), 1);
    pc.memcpy.copyParams.dstPtr = make_cudaPitchedPtr(h, N * sizeof(int), N * sizeof(int), 1);
    pc.memcpy.copyParams.extent = make_cudaExtent(N * sizeof(int), 1, 1);
    pc.memcpy.copyParams.kind = cudaMemcpyDeviceToHost;
    cudaGraphNode_t nc = add_node(g, ng, &pc);
    cudaGraphNodeParams ph = {cudaGraphNodeTypeHost};
    ph.host.fn = count;
    add_node(g, nc, &ph);

    size_t count_nodes = 0;
    T(cudaGraphGetNodes(g, NULL, &count_nodes));
    OUT("%zu nodes", count_nodes);
    cudaGraphNodeType type;
    T(cudaGraphNodeGetType(ng, &type));
    OUT("the child graph node is of type %d", (int)type);

    // The kernel's arguments were copied when the node was added.
    v = 1000;
    cudaGraphExec_t x;
    T(cudaGraphInstantiate(&x, g, 0));
    T(cudaGraphLaunch(x, s));
    T(cudaStreamSynchronize(s));
    OUT("after the first launch: %d everywhere, %d host call(s)", uniform(h), host_calls);
    CHECK(uniform(h) == 112 && host_calls == 1);

    // The executable graph's own kernel and memset change; the graph's do not.
    v = 1;
    cudaGraphNodeParams pk1 = kernel_params(args);
    T(cudaGraphExecNodeSetParams(x, nk, &pk1));
    cudaGraphNodeParams pm2 = memset_params(d, 2);
    T(cudaGraphExecNodeSetParams(x, nm, &pm2));
    T(cudaGraphLaunch(x, s));
    T(cudaStreamSynchronize(s));
    OUT("after setting the executable graph's nodes: %d everywhere", uniform(h));
    CHECK(uniform(h) == 103);

    // The graph's own kernel node changes: a new executable graph runs it.
    v = 10;
    cudaGraphNodeParams pk10 = kernel_params(args);
    T(cudaGraphNodeSetParams(nk, &pk10));
    cudaGraphExec_t x2;
    T(cudaGraphInstantiate(&x2, g, 0));
    T(cudaGraphLaunch(x2, s));
    T(cudaStreamSynchronize(s));
    OUT("a new executable graph of the changed graph: %d everywhere", uniform(h));
    CHECK(uniform(h) == 115);
    T(cudaGraphLaunch(x, s));
    T(cudaStreamSynchronize(s));
    OUT("the first executable graph again: %d everywhere, %d host call(s)", uniform(h), host_calls);
    CHECK(uniform(h) == 103 && host_calls == 4);

    // Parameters of another node type.
    T(cudaGraphNodeSetParams(nk, &pm2));
    T(cudaGraphExecNodeSetParams(x, nm, &pk1));
    T(cudaGetLastError());

    T(cudaGraphExecDestroy(x2));
    T(cudaGraphExecDestroy(x));
    T(cudaGraphDestroy(child));
    T(cudaGraphDestroy(g));
    T(cudaStreamDestroy(s));
    T(cudaFree(d));
    return finish();
}
