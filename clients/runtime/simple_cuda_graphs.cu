// In the spirit of NVIDIA's simpleCudaGraphs sample: a two-stage reduction (copy in,
// clear, reduce to partial sums per block, reduce the partials, copy the sum out, a host
// node that notes it) built once with the explicit graph API and once by capturing a
// stream's work, each instantiated once and launched several times with new input.
// Values are small integers in floats, so every sum is exact whatever the order.
#include "common.h"
#include <unistd.h>

enum { N = 1 << 16, THREADS = 256, BLOCKS = 64, LAUNCHES = 3 };

__global__ void reduce(const float *in, float *partial, int n) {
    __shared__ float s[THREADS];
    float sum = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) sum += in[i];
    s[threadIdx.x] = sum;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k /= 2) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}

__global__ void reduce_final(const float *partial, float *result, int n) {
    __shared__ float s[THREADS];
    float sum = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) sum += partial[i];
    s[threadIdx.x] = sum;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k /= 2) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) *result += s[0];
}

// What the host nodes saw, in the order they ran.
static float seen[16];
static int nseen = 0;

static void CUDART_CB note_result(void *data) {
    if (nseen < 16) seen[nseen++] = *(const float *)data;
}

// The input of launch `k`, and its sum.
static float fill(float *h, int k) {
    float sum = 0;
    for (int i = 0; i < N; i++) {
        h[i] = (float)((i * 7 + k) % 11);
        sum += h[i];
    }
    return sum;
}

// Launches `exec` LAUNCHES times, each with new input; returns how many sums were wrong.
static int launch_several(const char *what, cudaGraphExec_t exec, cudaStream_t s, float *h_in, float *h_out) {
    int bad = 0;
    for (int k = 0; k < LAUNCHES; k++) {
        float want = fill(h_in, k);
        int before = nseen;
        T(cudaGraphLaunch(exec, s));
        T(cudaStreamSynchronize(s));
        int ok = *h_out == want && nseen == before + 1 && seen[before] == want;
        OUT("%s launch %d: sum %.0f, expected %.0f, host node saw it: %s", what, k, *h_out, want,
            nseen == before + 1 && seen[before] == want ? "yes" : "no");
        CHECK(ok);
        bad += !ok;
    }
    return bad;
}

static size_t count_nodes(cudaGraph_t g, int roots) {
    size_t n = 0;
    if (roots)
        T(cudaGraphGetRootNodes(g, NULL, &n));
    else
        T(cudaGraphGetNodes(g, NULL, &n));
    return n;
}

int main(void) {
    float *h_in = NULL, *h_out = NULL, *d_in = NULL, *d_partial = NULL, *d_result = NULL;
    T(cudaMallocHost((void **)&h_in, N * sizeof(float)));
    T(cudaMallocHost((void **)&h_out, sizeof(float)));
    T(cudaMalloc((void **)&d_in, N * sizeof(float)));
    T(cudaMalloc((void **)&d_partial, BLOCKS * sizeof(float)));
    T(cudaMalloc((void **)&d_result, sizeof(float)));
    NEED(h_in);
    NEED(h_out);
    NEED(d_in);
    NEED(d_partial);
    NEED(d_result);
    cudaStream_t s, fork;
    T(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    T(cudaStreamCreateWithFlags(&fork, cudaStreamNonBlocking));

    // ---- the explicit API -------------------------------------------------------------
    cudaGraph_t g = NULL;
    T(cudaGraphCreate(&g, 0));
    cudaGraphNode_t copy_in, clear_partial, clear_result, k_reduce, k_final, copy_out, host;

    cudaMemcpy3DParms cp = {0};
    cp.srcPtr = make_cudaPitchedPtr(h_in, N * sizeof(float), N, 1);
    cp.dstPtr = make_cudaPitchedPtr(d_in, N * sizeof(float), N, 1);
    cp.extent = make_cudaExtent(N * sizeof(float), 1, 1);
    cp.kind = cudaMemcpyHostToDevice;
    T(cudaGraphAddMemcpyNode(&copy_in, g, NULL, 0, &cp));

    cudaMemsetParams ms = {0};
    ms.dst = d_partial;
    ms.value = 0;
    ms.elementSize = sizeof(float);
    ms.width = BLOCKS;
    ms.height = 1;
    T(cudaGraphAddMemsetNode(&clear_partial, g, NULL, 0, &ms));
    ms.dst = d_result;
    ms.width = 1;
    T(cudaGraphAddMemsetNode(&clear_result, g, NULL, 0, &ms));

    int n = N, nb = BLOCKS;
    void *reduce_args[] = {&d_in, &d_partial, &n};
    cudaKernelNodeParams kp = {0};
    kp.func = (void *)reduce;
    kp.gridDim = dim3(BLOCKS);
    kp.blockDim = dim3(THREADS);
    kp.kernelParams = reduce_args;
    cudaGraphNode_t before_reduce[] = {copy_in, clear_partial};
    T(cudaGraphAddKernelNode(&k_reduce, g, before_reduce, 2, &kp));

    void *final_args[] = {&d_partial, &d_result, &nb};
    kp.func = (void *)reduce_final;
    kp.gridDim = dim3(1);
    kp.kernelParams = final_args;
    T(cudaGraphAddKernelNode(&k_final, g, &k_reduce, 1, &kp));
    // The final sum adds to *d_result, which must be cleared first: an edge added after.
    T(cudaGraphAddDependencies(g, &clear_result, &k_final, NULL, 1));

    T(cudaGraphAddMemcpyNode1D(&copy_out, g, &k_final, 1, h_out, d_result, sizeof(float), cudaMemcpyDeviceToHost));
    cudaHostNodeParams hp = {0};
    hp.fn = note_result;
    hp.userData = h_out;
    T(cudaGraphAddHostNode(&host, g, &copy_out, 1, &hp));
    cudaGraphNode_t tail;
    T(cudaGraphAddEmptyNode(&tail, g, &host, 1));

    size_t nodes = count_nodes(g, 0), roots = count_nodes(g, 1);
    OUT("explicit graph: %zu nodes, %zu roots", nodes, roots);
    CHECK(nodes == 8 && roots == 3);
    cudaGraphNodeType type;
    T(cudaGraphNodeGetType(k_reduce, &type));
    OUT("reduce node type is kernel: %s", type == cudaGraphNodeTypeKernel ? "yes" : "no");
    CHECK(type == cudaGraphNodeTypeKernel);

    char dot[] = "/tmp/cumock_simple_cuda_graphs_XXXXXX";
    int fd = mkstemp(dot);
    if (fd >= 0) close(fd);
    T(cudaGraphDebugDotPrint(g, dot, cudaGraphDebugDotFlagsVerbose));
    FILE *f = fopen(dot, "r");
    long dot_size = 0;
    if (f) {
        fseek(f, 0, SEEK_END);
        dot_size = ftell(f);
        fclose(f);
    }
    remove(dot);
    OUT("DOT description written: %s", dot_size > 0 ? "yes" : "no");
    CHECK(dot_size > 0);

    cudaGraphExec_t exec = NULL;
    T(cudaGraphInstantiate(&exec, g, 0));
    launch_several("explicit", exec, s, h_in, h_out);

    // A clone is a graph of its own: instantiated and launched the same.
    cudaGraph_t clone = NULL;
    T(cudaGraphClone(&clone, g));
    size_t clone_nodes = count_nodes(clone, 0);
    OUT("clone: %zu nodes", clone_nodes);
    CHECK(clone_nodes == nodes);
    cudaGraphExec_t clone_exec = NULL;
    T(cudaGraphInstantiateWithFlags(&clone_exec, clone, 0));
    launch_several("clone", clone_exec, s, h_in, h_out);

    // The executable graph's reduce node told to sum only the first half.
    int half = N / 2;
    void *half_args[] = {&d_in, &d_partial, &half};
    kp.func = (void *)reduce;
    kp.gridDim = dim3(BLOCKS);
    kp.kernelParams = half_args;
    T(cudaGraphExecKernelNodeSetParams(exec, k_reduce, &kp));
    fill(h_in, 0);
    float want_half = 0;
    for (int i = 0; i < half; i++) want_half += h_in[i];
    T(cudaGraphLaunch(exec, s));
    T(cudaStreamSynchronize(s));
    OUT("half the input: sum %.0f, expected %.0f", *h_out, want_half);
    CHECK(*h_out == want_half);
    // Its node handles die with the graph: the H200 then refuses them (invalid value).
    T(cudaGraphDestroy(g));
    cudaError_t gone = cudaGraphExecKernelNodeSetParams(exec, k_reduce, &kp);
    OUT("set params through a node of the destroyed graph: %s", cudaGetErrorName(gone));
    CHECK(gone == cudaErrorInvalidValue);

    // ---- stream capture ---------------------------------------------------------------
    cudaStreamCaptureStatus status;
    T(cudaStreamIsCapturing(s, &status));
    OUT("before the capture: %s", status == cudaStreamCaptureStatusNone ? "not capturing" : "capturing");
    cudaEvent_t forked, joined;
    T(cudaEventCreate(&forked));
    T(cudaEventCreate(&joined));
    T(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    T(cudaStreamIsCapturing(s, &status));
    OUT("during the capture: %s", status == cudaStreamCaptureStatusActive ? "active" : "not active");
    CHECK(status == cudaStreamCaptureStatusActive);
    // The other stream clears the result while the origin copies in and reduces.
    T(cudaEventRecord(forked, s));
    T(cudaStreamWaitEvent(fork, forked, 0));
    T(cudaMemsetAsync(d_result, 0, sizeof(float), fork));
    T(cudaEventRecord(joined, fork));
    T(cudaMemcpyAsync(d_in, h_in, N * sizeof(float), cudaMemcpyHostToDevice, s));
    reduce<<<BLOCKS, THREADS, 0, s>>>(d_in, d_partial, N);
    T(cudaGetLastError());
    T(cudaStreamWaitEvent(s, joined, 0));
    reduce_final<<<1, THREADS, 0, s>>>(d_partial, d_result, BLOCKS);
    T(cudaGetLastError());
    T(cudaMemcpyAsync(h_out, d_result, sizeof(float), cudaMemcpyDeviceToHost, s));
    T(cudaLaunchHostFunc(s, note_result, h_out));
    cudaGraph_t captured = NULL;
    T(cudaStreamEndCapture(s, &captured));
    T(cudaStreamIsCapturing(s, &status));
    OUT("after the capture: %s", status == cudaStreamCaptureStatusNone ? "not capturing" : "capturing");
    size_t captured_nodes = count_nodes(captured, 0), captured_roots = count_nodes(captured, 1);
    OUT("captured graph: %zu nodes, %zu roots", captured_nodes, captured_roots);
    CHECK(captured_nodes == 6 && captured_roots == 2);
    cudaGraphExec_t captured_exec = NULL;
    T(cudaGraphInstantiate(&captured_exec, captured, 0));
    launch_several("captured", captured_exec, s, h_in, h_out);

    // The same work captured again (into a new graph) updates the executable graph in
    // place; a graph of another shape cannot.
    T(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    T(cudaEventRecord(forked, s));
    T(cudaStreamWaitEvent(fork, forked, 0));
    T(cudaMemsetAsync(d_result, 0, sizeof(float), fork));
    T(cudaEventRecord(joined, fork));
    T(cudaMemcpyAsync(d_in, h_in, N * sizeof(float), cudaMemcpyHostToDevice, s));
    reduce<<<BLOCKS, THREADS, 0, s>>>(d_in, d_partial, N / 4);
    T(cudaStreamWaitEvent(s, joined, 0));
    reduce_final<<<1, THREADS, 0, s>>>(d_partial, d_result, BLOCKS);
    T(cudaMemcpyAsync(h_out, d_result, sizeof(float), cudaMemcpyDeviceToHost, s));
    T(cudaLaunchHostFunc(s, note_result, h_out));
    cudaGraph_t quarter = NULL;
    T(cudaStreamEndCapture(s, &quarter));
    cudaGraphExecUpdateResultInfo info;
    memset(&info, 0, sizeof info);
    T(cudaGraphExecUpdate(captured_exec, quarter, &info));
    OUT("update result: %s", info.result == cudaGraphExecUpdateSuccess ? "success" : "failure");
    CHECK(info.result == cudaGraphExecUpdateSuccess);
    fill(h_in, 1);
    float want_quarter = 0;
    for (int i = 0; i < N / 4; i++) want_quarter += h_in[i];
    T(cudaGraphLaunch(captured_exec, s));
    T(cudaStreamSynchronize(s));
    OUT("a quarter of the input: sum %.0f, expected %.0f", *h_out, want_quarter);
    CHECK(*h_out == want_quarter);
    memset(&info, 0, sizeof info);
    cudaError_t e = T(cudaGraphExecUpdate(captured_exec, clone, &info));
    OUT("update from another shape: %s, topology changed: %s", e == cudaSuccess ? "updated" : "refused",
        info.result == cudaGraphExecUpdateErrorTopologyChanged ? "yes" : "no");
    CHECK(e == cudaErrorGraphExecUpdateFailure && info.result == cudaGraphExecUpdateErrorTopologyChanged);
    T(cudaGetLastError());

    // The thread's capture mode round-trips.
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    T(cudaThreadExchangeStreamCaptureMode(&mode));
    OUT("mode was global: %s", mode == cudaStreamCaptureModeGlobal ? "yes" : "no");
    CHECK(mode == cudaStreamCaptureModeGlobal);
    T(cudaThreadExchangeStreamCaptureMode(&mode));
    OUT("mode was relaxed: %s", mode == cudaStreamCaptureModeRelaxed ? "yes" : "no");
    CHECK(mode == cudaStreamCaptureModeRelaxed);

    T(cudaGraphExecDestroy(exec));
    T(cudaGraphExecDestroy(clone_exec));
    T(cudaGraphExecDestroy(captured_exec));
    T(cudaGraphDestroy(clone));
    T(cudaGraphDestroy(captured));
    T(cudaGraphDestroy(quarter));
    T(cudaEventDestroy(forked));
    T(cudaEventDestroy(joined));
    T(cudaStreamDestroy(s));
    T(cudaStreamDestroy(fork));
    T(cudaFree(d_in));
    T(cudaFree(d_partial));
    T(cudaFree(d_result));
    T(cudaFreeHost(h_in));
    T(cudaFreeHost(h_out));
    return finish();
}
