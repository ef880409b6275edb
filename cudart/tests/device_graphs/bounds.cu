// The mock's bounds on device graphs that a GPU would let run on (never run on a GPU: the
// second case relaunches itself forever). (1) A chain of fire-and-forget launches nested
// 30 deep, each graph's kernel firing the next: how deep the launches got, and the first
// refusal's code. (2) A graph relaunching itself as its own tail launch without end: the
// host's cudaDeviceSynchronize must return (CUMOCK_KERNEL_TIMEOUT bounds the chain).
#include <cstdio>
#include <cuda_runtime.h>

constexpr int DEPTH = 30;

__global__ void fire_next(cudaGraphExec_t *chain, int at, int *reached, int *refused) {
    atomicMax(reached, at);
    if (at + 1 < DEPTH) {
        cudaError_t e = cudaGraphLaunch(chain[at + 1], cudaStreamGraphFireAndForget);
        if (e != cudaSuccess && *refused == 0) *refused = (int)e;
    }
}

__global__ void forever(int *count) {
    atomicAdd(count, 1);
    cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch);
}

static cudaGraphExec_t device_graph(void *kernel, void **args) {
    cudaGraph_t g;
    cudaGraphCreate(&g, 0);
    cudaKernelNodeParams p = {};
    p.func = kernel;
    p.gridDim = dim3(1);
    p.blockDim = dim3(1);
    p.kernelParams = args;
    cudaGraphNode_t n;
    cudaGraphAddKernelNode(&n, g, nullptr, 0, &p);
    cudaGraphExec_t e;
    cudaError_t r = cudaGraphInstantiate(&e, g, cudaGraphInstantiateFlagDeviceLaunch);
    if (r != cudaSuccess) printf("instantiate: %s\n", cudaGetErrorName(r));
    cudaGraphUpload(e, 0);
    return e;
}

int main() {
    cudaGraphExec_t *chain;
    int *reached, *refused, *count;
    cudaMallocManaged(&chain, DEPTH * sizeof *chain);
    cudaMallocManaged(&reached, sizeof(int));
    cudaMallocManaged(&refused, sizeof(int));
    cudaMallocManaged(&count, sizeof(int));
    *reached = -1, *refused = 0, *count = 0;
    static int levels[DEPTH];
    for (int i = 0; i < DEPTH; i++) {
        levels[i] = i;
        void *args[] = {&chain, &levels[i], &reached, &refused};
        chain[i] = device_graph((void *)fire_next, args);
    }
    cudaGraphLaunch(chain[0], 0);
    cudaError_t s = cudaDeviceSynchronize();
    printf("nested fire-and-forget: sync %s, deepest level %d, first refusal %d\n",
           cudaGetErrorName(s), *reached, *refused);
    void *args[] = {&count};
    cudaGraphExec_t f = device_graph((void *)forever, args);
    cudaGraphLaunch(f, 0);
    s = cudaDeviceSynchronize();
    printf("self-relaunching graph: sync %s, ran more than once: %s\n", cudaGetErrorName(s),
           *count > 1 ? "yes" : "no");
    return 0;
}
