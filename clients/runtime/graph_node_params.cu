// Graph copy nodes to and from a __device__ symbol (cudaGraphAddMemcpyNodeToSymbol,
// ...FromSymbol, the node and exec setters of both), cudaGraphMemcpyNodeGetParams, and
// kernel-node attributes through the runtime (cudaGraphKernelNodeSet/GetAttribute,
// cudaGraphKernelNodeCopyAttributes): a cluster shape set on a node is the one its
// kernel runs with. Recorded on the H200 (goldens/NVIDIA_H200-580.159.04/).
#include "common.h"

__device__ int table[8];

__global__ void ranks(unsigned *out) {
    unsigned n;
    asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
    out[blockIdx.x] = n;
}

int main() {
    cudaStream_t s;
    T(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int in[8], out[8];
    for (int i = 0; i < 8; i++) in[i] = 100 + i;
    memset(out, 0, sizeof out);

    cudaGraph_t g;
    T(cudaGraphCreate(&g, 0));
    cudaGraphNode_t to, from;
    T(cudaGraphAddMemcpyNodeToSymbol(&to, g, NULL, 0, table, in, 4 * sizeof(int), 2 * sizeof(int), cudaMemcpyHostToDevice));
    T(cudaGraphAddMemcpyNodeFromSymbol(&from, g, &to, 1, out, table, 8 * sizeof(int), 0, cudaMemcpyDeviceToHost));
    cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    T(cudaGraphMemcpyNodeGetParams(from, &p));
    OUT("from-symbol node: kind %d, extent %zu x %zu x %zu, destination is out: %s", (int)p.kind,
        p.extent.width, p.extent.height, p.extent.depth, p.dstPtr.ptr == out ? "yes" : "no");
    CHECK(p.kind == cudaMemcpyDeviceToHost && p.extent.width == 8 * sizeof(int) && p.dstPtr.ptr == out);
    T(cudaGraphAddMemcpyNodeToSymbol(&to, g, NULL, 0, table, in, 8 * sizeof(int), 4, cudaMemcpyHostToDevice));
    T(cudaGraphAddMemcpyNodeFromSymbol(&from, g, NULL, 0, out, table, 4, 0, cudaMemcpyHostToDevice));
    cudaGraphExec_t e;
    T(cudaGraphInstantiate(&e, g, 0));
    T(cudaGraphLaunch(e, s));
    T(cudaStreamSynchronize(s));
    OUT("table as read back: %d %d %d %d %d %d", out[0], out[1], out[2], out[3], out[4], out[5]);
    CHECK(out[2] == 100 && out[5] == 103);
    T(cudaGraphExecDestroy(e));
    T(cudaGraphDestroy(g));

    // The setters: the first copy now writes 3 ints at offset 0, the second reads 2.
    T(cudaGraphCreate(&g, 0));
    int zero[8] = {0};
    T(cudaMemcpyToSymbol(table, zero, sizeof zero));
    T(cudaGraphAddMemcpyNodeToSymbol(&to, g, NULL, 0, table, in, sizeof(int), 0, cudaMemcpyHostToDevice));
    T(cudaGraphAddMemcpyNodeFromSymbol(&from, g, &to, 1, out, table, sizeof(int), 0, cudaMemcpyDeviceToHost));
    T(cudaGraphMemcpyNodeSetParamsToSymbol(to, table, in + 4, 3 * sizeof(int), 0, cudaMemcpyHostToDevice));
    T(cudaGraphMemcpyNodeSetParamsFromSymbol(from, out, table, 2 * sizeof(int), 0, cudaMemcpyDeviceToHost));
    T(cudaGraphInstantiate(&e, g, 0));
    memset(out, 0, sizeof out);
    T(cudaGraphLaunch(e, s));
    T(cudaStreamSynchronize(s));
    OUT("after the node setters: %d %d %d", out[0], out[1], out[2]);
    CHECK(out[0] == 104 && out[1] == 105 && out[2] == 0);
    T(cudaGraphExecMemcpyNodeSetParamsToSymbol(e, to, table, in, 3 * sizeof(int), sizeof(int), cudaMemcpyHostToDevice));
    T(cudaGraphExecMemcpyNodeSetParamsFromSymbol(e, from, out, table, 2 * sizeof(int), sizeof(int), cudaMemcpyDeviceToHost));
    memset(out, 0, sizeof out);
    T(cudaGraphLaunch(e, s));
    T(cudaStreamSynchronize(s));
    OUT("after the exec setters: %d %d %d", out[0], out[1], out[2]);
    CHECK(out[0] == 100 && out[1] == 101 && out[2] == 0);
    T(cudaGraphMemcpyNodeSetParamsToSymbol(to, table, in, 9 * sizeof(int), 0, cudaMemcpyHostToDevice));
    T(cudaGraphMemcpyNodeSetParamsToSymbol(to, table, in, sizeof(int), 0, cudaMemcpyDeviceToHost));
    T(cudaGraphExecDestroy(e));
    T(cudaGraphDestroy(g));

    // Kernel-node attributes.
    unsigned *d = NULL;
    T(cudaMalloc((void **)&d, 4 * sizeof(unsigned)));
    NEED(d);
    T(cudaGraphCreate(&g, 0));
    cudaKernelNodeParams k;
    memset(&k, 0, sizeof k);
    void *args[] = {&d};
    k.func = (void *)ranks;
    k.gridDim = dim3(4);
    k.blockDim = dim3(32);
    k.kernelParams = args;
    cudaGraphNode_t kn, kn2;
    T(cudaGraphAddKernelNode(&kn, g, NULL, 0, &k));
    T(cudaGraphAddKernelNode(&kn2, g, NULL, 0, &k));
    cudaKernelNodeAttrValue v;
    memset(&v, 0, sizeof v);
    v.clusterDim.x = 2;
    v.clusterDim.y = 1;
    v.clusterDim.z = 1;
    T(cudaGraphKernelNodeSetAttribute(kn, cudaLaunchAttributeClusterDimension, &v));
    T(cudaGraphKernelNodeCopyAttributes(kn2, kn));
    memset(&v, 0, sizeof v);
    T(cudaGraphKernelNodeGetAttribute(kn2, cudaLaunchAttributeClusterDimension, &v));
    OUT("second node's cluster: %u %u %u", v.clusterDim.x, v.clusterDim.y, v.clusterDim.z);
    CHECK(v.clusterDim.x == 2 && v.clusterDim.y == 1 && v.clusterDim.z == 1);
    T(cudaGraphDestroyNode(kn2));
    T(cudaGraphInstantiate(&e, g, 0));
    T(cudaGraphLaunch(e, s));
    T(cudaStreamSynchronize(s));
    unsigned seen[4] = {0};
    T(cudaMemcpy(seen, d, sizeof seen, cudaMemcpyDeviceToHost));
    OUT("cluster sizes the blocks saw: %u %u %u %u", seen[0], seen[1], seen[2], seen[3]);
    CHECK(seen[0] == 2 && seen[3] == 2);
    T(cudaGraphExecDestroy(e));
    T(cudaGraphDestroy(g));
    T(cudaFree(d));
    T(cudaStreamDestroy(s));
    return finish();
}
