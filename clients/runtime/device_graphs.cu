// nvcc-options: -rdc=true -lcudadevrt
// Device graph launch (CUDA 12+, the programming guide's "Device Graph Launch"): graphs
// instantiated with cudaGraphInstantiateFlagDeviceLaunch, uploaded, and launched by a
// kernel node of another graph: fire-and-forget, as a sibling, as a tail launch (after
// the launching graph and all its work), a scheduler relaunching itself through
// cudaGetCurrentGraphExec; the same graph launched from the host; the refusals at
// instantiation (a host node, an empty graph, a kernel using dynamic parallelism); then
// the device's launches of a graph not for the device (which faults on the H200: sticky),
// not uploaded, launched from a kernel outside any graph, into a stream that is not one of
// the named three, the same graph queued twice, and the guide's limit of 120
// fire-and-forget launches in one run, each in a process of its own (this program run
// again with the case's name) so that a fault loses only its own case. Each device-side
// code is printed by name.
#include "common.h"
#include <errno.h>
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

#define LOG_WORDS 512

// Appends `tag` to a log (a count, then the tags in the order they ran).
__device__ void note(int *log, int tag) {
    int at = atomicAdd(&log[0], 1);
    if (at < LOG_WORDS - 1) log[1 + at] = tag;
}

__global__ void append(int *log, int tag) { note(log, tag); }

// Launches `g` into `stream` from thread 0; its code and whether a graph is current.
__global__ void launch_graph(cudaGraphExec_t g, cudaStream_t stream, int *codes) {
    if (threadIdx.x != 0) return;
    codes[0] = cudaGraphLaunch(g, stream);
    codes[1] = cudaGetLastError();
    codes[2] = cudaGetCurrentGraphExec() != 0;
}

// The same graph queued twice into one stream.
__global__ void launch_twice(cudaGraphExec_t g, cudaStream_t stream, int *codes) {
    if (threadIdx.x != 0) return;
    codes[0] = cudaGraphLaunch(g, stream);
    codes[1] = cudaGraphLaunch(g, stream);
}

// Fire-and-forget launches of `n` graphs: how many succeeded, and the first failure.
__global__ void launch_many(cudaGraphExec_t *g, int n, int *codes) {
    if (threadIdx.x != 0) return;
    codes[0] = 0;
    codes[1] = 0;
    for (int i = 0; i < n; i++) {
        int e = cudaGraphLaunch(g[i], cudaStreamGraphFireAndForget);
        if (e == 0) codes[0]++;
        else if (codes[1] == 0) codes[1] = e;
    }
}

// The scheduler: logs 100 + the count left and relaunches its own graph as a tail launch
// until the count runs out; the first run also tries to queue itself a second time.
__global__ void countdown(int *left, int *log, unsigned long long *current, int *codes) {
    if (threadIdx.x != 0) return;
    note(log, 100 + *left);
    *current = (unsigned long long)cudaGetCurrentGraphExec();
    int first = codes[0] == -1;
    if (--*left > 0) {
        int e = cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch);
        if (first) {
            codes[0] = e;
            codes[1] = cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch);
        }
    }
}

// A kernel using dynamic parallelism, which a device graph may not hold.
__global__ void launches_kernel(int *log) { append<<<1, 1>>>(log, 7); }

static void host_fn(void *) {}

static const char *name(int e) { return cudaGetErrorName((cudaError_t)e); }

// A graph of one kernel node appending `tag`.
static cudaGraph_t kernel_graph(int *log, int tag, cudaGraphNode_t *node = nullptr) {
    cudaGraph_t g;
    T(cudaGraphCreate(&g, 0));
    cudaKernelNodeParams p = {};
    void *args[] = {&log, &tag};
    p.func = (void *)append;
    p.gridDim = dim3(1);
    p.blockDim = dim3(1);
    p.kernelParams = args;
    cudaGraphNode_t n;
    T(cudaGraphAddKernelNode(&n, g, nullptr, 0, &p));
    if (node) *node = n;
    return g;
}

// A host graph whose one kernel node runs `launch_graph(g, stream, codes)`, then a node
// appending `after` (0: none).
static cudaGraphExec_t launcher(cudaGraphExec_t g, cudaStream_t stream, int *codes, int *log,
                                int after) {
    cudaGraph_t h;
    cudaGraphCreate(&h, 0);
    cudaKernelNodeParams p = {};
    void *args[] = {&g, &stream, &codes};
    p.func = (void *)launch_graph;
    p.gridDim = dim3(1);
    p.blockDim = dim3(32);
    p.kernelParams = args;
    cudaGraphNode_t k;
    cudaGraphAddKernelNode(&k, h, nullptr, 0, &p);
    if (after) {
        cudaKernelNodeParams q = {};
        void *qargs[] = {&log, &after};
        q.func = (void *)append;
        q.gridDim = dim3(1);
        q.blockDim = dim3(1);
        q.kernelParams = qargs;
        cudaGraphNode_t n;
        cudaGraphAddKernelNode(&n, h, &k, 1, &q);
    }
    cudaGraphExec_t e;
    T(cudaGraphInstantiate(&e, h, 0));
    cudaGraphDestroy(h);
    return e;
}

static void print_log(const char *what, const int *log) {
    printf("    %s: %d entries:", what, log[0]);
    for (int i = 0; i < log[0] && i < 16; i++) printf(" %d", log[1 + i]);
    printf("\n");
}

// A graph of one kernel node appending `tag`, instantiated (for device launch where
// `device`) and, where `upload`, uploaded to `s`.
static cudaGraphExec_t one_kernel_exec(int *log, int tag, bool device, bool upload,
                                       cudaStream_t s) {
    cudaGraph_t g = kernel_graph(log, tag);
    cudaGraphExec_t e;
    if (device)
        T(cudaGraphInstantiate(&e, g, cudaGraphInstantiateFlagDeviceLaunch));
    else
        T(cudaGraphInstantiate(&e, g, 0));
    if (upload) T(cudaGraphUpload(e, s));
    return e;
}

// One case of the device's refusals, run as `device_graphs CASE` in a process of its own
// (in_own_process): its own stream, log and codes, its transcript lines, then the
// context's state (a fault is sticky).
static int refusal_case(const char *which) {
    cudaStream_t s;
    T(cudaStreamCreate(&s));
    int *log, *codes;
    T(cudaMallocManaged(&log, LOG_WORDS * sizeof(int)));
    T(cudaMallocManaged(&codes, 8 * sizeof(int)));
    NEED(log && codes);
    memset(log, 0, LOG_WORDS * sizeof(int));
    for (int i = 0; i < 8; i++) codes[i] = -1;
    // A device launch by a host graph's kernel node into `stream`.
    auto from_graph = [&](const char *what, cudaGraphExec_t g, cudaStream_t stream) {
        cudaGraphExec_t l = launcher(g, stream, codes, log, 0);
        T(cudaGraphLaunch(l, s));
        T(cudaStreamSynchronize(s));
        OUT("%s: %s, last error %s, ran %d", what, name(codes[0]), name(codes[1]), log[0]);
    };
    if (!strcmp(which, "not_for_device")) {
        cudaGraphExec_t host_only = one_kernel_exec(log, 5, false, true, s);
        from_graph("a graph not instantiated for the device", host_only,
                   cudaStreamGraphFireAndForget);
    } else if (!strcmp(which, "not_uploaded")) {
        cudaGraphExec_t not_uploaded =
            one_kernel_exec(log, 5, true, false, s);
        from_graph("a device graph not uploaded", not_uploaded, cudaStreamGraphFireAndForget);
    } else if (!strcmp(which, "null_stream")) {
        cudaGraphExec_t dexec = one_kernel_exec(log, 5, true, true, s);
        from_graph("the NULL stream", dexec, 0);
    } else if (!strcmp(which, "kernel_tail")) {
        cudaGraphExec_t dexec = one_kernel_exec(log, 5, true, true, s);
        from_graph("cudaStreamTailLaunch (a kernel's)", dexec, cudaStreamTailLaunch);
    } else if (!strcmp(which, "host_stream")) {
        cudaGraphExec_t dexec = one_kernel_exec(log, 5, true, true, s);
        from_graph("a host stream", dexec, s);
    } else if (!strcmp(which, "no_graph")) {
        cudaGraphExec_t dexec = one_kernel_exec(log, 5, true, true, s);
        launch_graph<<<1, 32, 0, s>>>(dexec, cudaStreamGraphFireAndForget, codes);
        T(cudaStreamSynchronize(s));
        OUT("from a kernel in no graph: %s, a graph current: %d, ran %d", name(codes[0]),
            codes[2], log[0]);
    } else if (!strcmp(which, "tail_twice")) {
        cudaGraphExec_t dexec = one_kernel_exec(log, 5, true, true, s);
        cudaGraph_t tw;
        T(cudaGraphCreate(&tw, 0));
        cudaKernelNodeParams p = {};
        cudaStream_t ts = cudaStreamGraphTailLaunch;
        void *args[] = {&dexec, &ts, &codes};
        p.func = (void *)launch_twice;
        p.gridDim = dim3(1);
        p.blockDim = dim3(1);
        p.kernelParams = args;
        cudaGraphNode_t n;
        T(cudaGraphAddKernelNode(&n, tw, nullptr, 0, &p));
        cudaGraphExec_t twe;
        T(cudaGraphInstantiate(&twe, tw, 0));
        T(cudaGraphLaunch(twe, s));
        T(cudaStreamSynchronize(s));
        OUT("tail-launched twice: %s then %s, ran %d", name(codes[0]), name(codes[1]), log[0]);
    } else if (!strcmp(which, "many")) {
        const int n = 121;
        cudaGraphExec_t *execs;
        T(cudaMallocManaged(&execs, n * sizeof(*execs)));
        NEED(execs);
        cudaGraph_t g = kernel_graph(log, 6);
        int made = 0;
        for (int i = 0; i < n; i++) {
            if (cudaGraphInstantiate(&execs[i], g, cudaGraphInstantiateFlagDeviceLaunch) == 0 &&
                cudaGraphUpload(execs[i], s) == 0)
                made++;
        }
        OUT("instantiated and uploaded %d", made);
        cudaGraph_t m;
        T(cudaGraphCreate(&m, 0));
        cudaKernelNodeParams p = {};
        int count = n;
        void *args[] = {&execs, &count, &codes};
        p.func = (void *)launch_many;
        p.gridDim = dim3(1);
        p.blockDim = dim3(1);
        p.kernelParams = args;
        cudaGraphNode_t node;
        T(cudaGraphAddKernelNode(&node, m, nullptr, 0, &p));
        cudaGraphExec_t me;
        T(cudaGraphInstantiate(&me, m, 0));
        T(cudaGraphLaunch(me, s));
        T(cudaStreamSynchronize(s));
        OUT("launched %d, first failure %s, ran %d", codes[0], name(codes[1]), log[0]);
        CHECK(codes[0] == log[0]);
    } else {
        printf("    no case named %s\n", which);
        return 2;
    }
    T(cudaDeviceSynchronize());
    T(cudaGetLastError());
    return finish();
}

// Runs `CASE` of this program (`program CASE`) in a process of its own, started before
// it makes any CUDA call (posix_spawn: a new program, never a fork of this one's CUDA
// state), and waits for it: its transcript goes to the same stdout, after this one's
// lines. A child that fails or dies counts as a failed check here.
static void in_own_process(const char *program, const char *which) {
    printf("-- %s, in a process of its own\n", which);
    fflush(stdout);
    char *args[] = {(char *)program, (char *)which, nullptr};
    pid_t pid;
    int e = posix_spawn(&pid, program, nullptr, nullptr, args, environ);
    if (e != 0) {
        printf("    %s: cannot start a process (%s)\n", which, strerror(e));
        failures++;
        return;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    fflush(stdout);
    if (WIFSIGNALED(status)) {
        printf("    %s: the process died (signal %d)\n", which, WTERMSIG(status));
        failures++;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        failures++;
    }
}

int main(int argc, char **argv) {
    if (argc == 2) return refusal_case(argv[1]);
    cudaStream_t s;
    T(cudaStreamCreate(&s));
    int *log, *codes, *mark, *mark_copy, *left;
    unsigned long long *current;
    T(cudaMallocManaged(&log, LOG_WORDS * sizeof(int)));
    T(cudaMallocManaged(&codes, 8 * sizeof(int)));
    T(cudaMallocManaged(&mark, sizeof(int)));
    T(cudaMallocManaged(&mark_copy, sizeof(int)));
    T(cudaMallocManaged(&left, sizeof(int)));
    T(cudaMallocManaged(&current, sizeof(*current)));
    NEED(log && codes && mark && mark_copy && left && current);
    auto reset = [&]() {
        cudaDeviceSynchronize();
        memset(log, 0, LOG_WORDS * sizeof(int));
        for (int i = 0; i < 8; i++) codes[i] = -1;
    };

    printf("-- a device graph: memset, kernel, memcpy\n");
    cudaGraph_t dg;
    cudaGraphNode_t kn, set, copy;
    dg = kernel_graph(log, 1, &kn);
    cudaMemsetParams sp = {};
    sp.dst = mark;
    sp.value = 0x2a;
    sp.elementSize = 1;
    sp.width = 4;
    sp.height = 1;
    T(cudaGraphAddMemsetNode(&set, dg, nullptr, 0, &sp));
    T(cudaGraphAddDependencies(dg, &set, &kn, nullptr, 1));
    T(cudaGraphAddMemcpyNode1D(&copy, dg, &kn, 1, mark_copy, mark, sizeof(int),
                               cudaMemcpyDeviceToDevice));
    cudaGraphExec_t dexec;
    T(cudaGraphInstantiate(&dexec, dg, cudaGraphInstantiateFlagDeviceLaunch));
    unsigned long long flags = 0;
    T(cudaGraphExecGetFlags(dexec, &flags));
    OUT("flags %llu", flags);
    T(cudaGraphUpload(dexec, s));

    printf("-- fire-and-forget from a host graph's kernel\n");
    reset();
    *mark_copy = 0;
    cudaGraphExec_t ff = launcher(dexec, cudaStreamGraphFireAndForget, codes, log, 0);
    T(cudaGraphLaunch(ff, s));
    T(cudaStreamSynchronize(s));
    OUT("launch %s, last error %s, a graph current: %d", name(codes[0]), name(codes[1]), codes[2]);
    print_log("log", log);
    OUT("copied 0x%08x", *mark_copy);
    CHECK(codes[0] == 0 && log[0] == 1 && log[1] == 1 && *mark_copy == 0x2a2a2a2a);

    printf("-- sibling\n");
    reset();
    cudaGraphExec_t sib = launcher(dexec, cudaStreamGraphFireAndForgetAsSibling, codes, log, 0);
    T(cudaGraphLaunch(sib, s));
    T(cudaStreamSynchronize(s));
    OUT("launch %s", name(codes[0]));
    print_log("log", log);
    CHECK(codes[0] == 0 && log[0] == 1);

    printf("-- tail launch: after the launching graph's next node\n");
    reset();
    cudaGraphExec_t tail = launcher(dexec, cudaStreamGraphTailLaunch, codes, log, 2);
    T(cudaGraphLaunch(tail, s));
    T(cudaStreamSynchronize(s));
    OUT("launch %s", name(codes[0]));
    print_log("log", log);
    CHECK(codes[0] == 0 && log[0] == 2 && log[1] == 2 && log[2] == 1);

    printf("-- the device graph launched from the host\n");
    reset();
    T(cudaGraphLaunch(dexec, s));
    T(cudaStreamSynchronize(s));
    print_log("log", log);
    CHECK(log[0] == 1 && log[1] == 1);

    printf("-- a scheduler relaunching itself (cudaGetCurrentGraphExec)\n");
    reset();
    *left = 5;
    *current = 0;
    cudaGraph_t sg;
    T(cudaGraphCreate(&sg, 0));
    {
        cudaKernelNodeParams p = {};
        void *args[] = {&left, &log, &current, &codes};
        p.func = (void *)countdown;
        p.gridDim = dim3(1);
        p.blockDim = dim3(32);
        p.kernelParams = args;
        cudaGraphNode_t n;
        T(cudaGraphAddKernelNode(&n, sg, nullptr, 0, &p));
    }
    cudaGraphExec_t sexec;
    T(cudaGraphInstantiate(&sexec, sg, cudaGraphInstantiateFlagDeviceLaunch));
    T(cudaGraphLaunch(sexec, s));
    T(cudaStreamSynchronize(s));
    OUT("relaunch %s, a second relaunch %s", name(codes[0]), name(codes[1]));
    print_log("log", log);
    OUT("current is the graph: %s", *current == (unsigned long long)sexec ? "yes" : "no");
    CHECK(log[0] >= 5 && log[1] == 105 && log[5] == 101 && *left <= 0);

    printf("-- refused at instantiation\n");
    {
        cudaGraph_t hg = kernel_graph(log, 3);
        cudaHostNodeParams hp = {host_fn, nullptr};
        cudaGraphNode_t hn;
        T(cudaGraphAddHostNode(&hn, hg, nullptr, 0, &hp));
        cudaGraphExec_t e;
        T(cudaGraphInstantiate(&e, hg, cudaGraphInstantiateFlagDeviceLaunch));
        cudaGraphInstantiateParams ip = {};
        ip.flags = cudaGraphInstantiateFlagDeviceLaunch;
        T(cudaGraphInstantiateWithParams(&e, hg, &ip));
        OUT("result %d, errNode is the host node: %s", (int)ip.result_out,
            ip.errNode_out == hn ? "yes" : "no");
        cudaGraph_t empty;
        T(cudaGraphCreate(&empty, 0));
        T(cudaGraphInstantiate(&e, empty, cudaGraphInstantiateFlagDeviceLaunch));
        cudaGraph_t en = kernel_graph(log, 3);
        cudaGraphNode_t enode;
        T(cudaGraphAddEmptyNode(&enode, en, nullptr, 0));
        T(cudaGraphInstantiate(&e, en, cudaGraphInstantiateFlagDeviceLaunch));
        cudaGraph_t cdp;
        T(cudaGraphCreate(&cdp, 0));
        cudaKernelNodeParams p = {};
        void *args[] = {&log};
        p.func = (void *)launches_kernel;
        p.gridDim = dim3(1);
        p.blockDim = dim3(1);
        p.kernelParams = args;
        cudaGraphNode_t n;
        T(cudaGraphAddKernelNode(&n, cdp, nullptr, 0, &p));
        T(cudaGraphInstantiate(&e, cdp, cudaGraphInstantiateFlagDeviceLaunch));
        T(cudaGraphInstantiate(&e, cdp, cudaGraphInstantiateFlagDeviceLaunch |
                                            cudaGraphInstantiateFlagAutoFreeOnLaunch));
        cudaGraph_t up = kernel_graph(log, 4);
        ip = {};
        ip.flags = cudaGraphInstantiateFlagDeviceLaunch | cudaGraphInstantiateFlagUpload;
        ip.uploadStream = s;
        T(cudaGraphInstantiateWithParams(&e, up, &ip));
        OUT("result %d, errNode NULL: %s", (int)ip.result_out, ip.errNode_out ? "no" : "yes");
        reset();
        cudaGraphExec_t via = launcher(e, cudaStreamGraphFireAndForget, codes, log, 0);
        T(cudaGraphLaunch(via, s));
        T(cudaStreamSynchronize(s));
        OUT("uploaded at instantiation, launched from the device: %s", name(codes[0]));
        print_log("log", log);
    }

    // A refused device launch may fault the launching kernel, which ends the context (the
    // H200 faults for a graph not instantiated for device launch): each such case, and the
    // two that launch the most, in a process of its own, so a dead context loses only its
    // own case.
    printf("-- refused at the device's launch\n");
    for (const char *c : {"not_for_device", "not_uploaded", "null_stream", "kernel_tail",
                          "host_stream", "no_graph", "tail_twice"})
        in_own_process(argv[0], c);
    printf("-- 121 fire-and-forget launches from one run\n");
    in_own_process(argv[0], "many");

    T(cudaDeviceSynchronize());
    T(cudaGetLastError());
    return finish();
}
