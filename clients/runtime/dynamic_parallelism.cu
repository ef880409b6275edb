// nvcc-options: -rdc=true -lcudadevrt
// CUDA dynamic parallelism (CDP2): kernels launching kernels. A tree sum launched
// recursively four generations deep whose nodes combine their children's sums in tail
// launches; launches into one stream from a block, and into the block's NULL stream, in
// order; fire-and-forget launches; device-side streams, events, cudaMalloc/cudaFree,
// attributes and error strings; the errors a launch meets (a bad configuration, a
// non-blocking stream missing, the nesting depth, the pending-launch limit with tail
// launches); last a child
// that faults, its fault the host's at synchronisation (sticky).
#include "common.h"

#define LEAF 64

// out[node] = the sum of in[0..n): a leaf sums directly; a node launches its two halves
// as children (nodes 2i+1, 2i+2) and combines their sums in a tail launch, which runs
// after it and all its work.
__global__ void combine(int *out, int node) {
    out[node] = out[2 * node + 1] + out[2 * node + 2];
}

__global__ void tree_sum(const int *in, int n, int *out, int node, int depth, int *deepest) {
    if (n <= LEAF) {
        __shared__ int partial;
        if (threadIdx.x == 0) partial = 0;
        __syncthreads();
        if ((int)threadIdx.x < n) atomicAdd(&partial, in[threadIdx.x]);
        __syncthreads();
        if (threadIdx.x == 0) {
            out[node] = partial;
            atomicMax(deepest, depth);
        }
        return;
    }
    if (threadIdx.x == 0) {
        int half = n / 2;
        tree_sum<<<1, LEAF>>>(in, half, out, 2 * node + 1, depth + 1, deepest);
        tree_sum<<<1, LEAF>>>(in + half, n - half, out, 2 * node + 2, depth + 1, deepest);
        combine<<<1, 1, 0, cudaStreamTailLaunch>>>(out, node);
    }
}

// Each launch appends its tag to a log: the order the launches ran in.
__global__ void append(int *log, int tag) {
    int at = atomicAdd(&log[0], 1);
    log[1 + at] = tag;
}

__global__ void ordered_launches(int *stream_log, int *null_log, int *errors) {
    if (threadIdx.x != 0) return;
    cudaStream_t s;
    errors[0] = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    for (int tag = 1; tag <= 4; tag++) append<<<1, 1, 0, s>>>(stream_log, tag);
    errors[1] = cudaStreamDestroy(s);  // its launches still run
    for (int tag = 1; tag <= 4; tag++) append<<<1, 1>>>(null_log, tag);
    cudaEvent_t e;
    errors[2] = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    errors[3] = cudaEventRecord(e, 0);
    errors[4] = cudaEventDestroy(e);
    errors[5] = cudaGetLastError();
}

__global__ void set_flag(int *flag, int v) { flag[0] = v; }

__global__ void fire_and_forget(int *flags) {
    set_flag<<<1, 1, 0, cudaStreamFireAndForget>>>(flags + threadIdx.x, 100 + threadIdx.x);
}

// Device-side cudaMalloc from the device heap, used by a child, freed by the tail launch.
__global__ void use_buffer(int *p, int n, int *out) {
    int i = threadIdx.x;
    if (i < n) p[i] = i * i;
    __syncthreads();
    if (i == 0) {
        int s = 0;
        for (int k = 0; k < n; k++) s += p[k];
        out[0] = s;
    }
}

__global__ void release(int *p) { cudaFree(p); }

__global__ void device_memory(int *out, int *errors) {
    int *p = NULL;
    errors[0] = cudaMalloc((void **)&p, 32 * sizeof(int));
    if (errors[0] != cudaSuccess) return;
    use_buffer<<<1, 32>>>(p, 32, out);
    release<<<1, 1, 0, cudaStreamTailLaunch>>>(p);
    void *huge = NULL;
    errors[1] = cudaMalloc(&huge, (size_t)1 << 40);
    errors[2] = cudaGetLastError();
    errors[3] = huge == NULL;
}

__global__ void queries(int *values, int *errors, char *text, int len) {
    errors[0] = cudaDeviceGetAttribute(&values[0], cudaDevAttrMaxThreadsPerBlock, 0);
    errors[1] = cudaDeviceGetAttribute(&values[1], cudaDevAttrMultiProcessorCount, 0);
    errors[2] = cudaGetDevice(&values[2]);
    const char *s = cudaGetErrorString(cudaErrorLaunchMaxDepthExceeded);
    int i = 0;
    for (; s && s[i] && i < len - 1; i++) text[i] = s[i];
    text[i] = 0;
}

__global__ void nothing() {}

// Launch errors: each returned by the launch (as cudaGetLastError has it after).
__global__ void bad_launches(int *errors) {
    nothing<<<1, 2048>>>();  // more threads than a block has
    errors[0] = cudaGetLastError();
    nothing<<<0, 1>>>();
    errors[1] = cudaGetLastError();
    errors[2] = cudaPeekAtLastError();  // cleared by the get before
    cudaStream_t s;
    errors[3] = cudaStreamCreateWithFlags(&s, cudaStreamDefault);  // must be non-blocking
    errors[4] = cudaGetLastError();
}

// Launches itself until a launch fails: the deepest generation that ran, and the error.
__global__ void nest(int depth, int *deepest, int *error) {
    atomicMax(deepest, depth);
    nest<<<1, 1>>>(depth + 1, deepest, error);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) error[0] = e;
}

// 64 threads making one tail launch each under a limit of 48 pending launches: a tail
// launch cannot begin before its parent ends, so all are pending at once.
__global__ void count_ran(int *ran) { atomicAdd(ran, 1); }

__global__ void many_launches(int *ran, int *ok, int *failed, int *error) {
    count_ran<<<1, 1, 0, cudaStreamTailLaunch>>>(ran);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) {
        atomicAdd(ok, 1);
    } else {
        atomicAdd(failed, 1);
        error[0] = e;
    }
}

__global__ void fault(int *p) { p[threadIdx.x] = 1; }

__global__ void faulting_parent(int *flag) {
    flag[0] = 1;
    fault<<<1, 1>>>(NULL);
}

int main(void) {
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) {
        printf("SKIP: no device\n");
        return SKIP_EXIT;
    }

    // The pending-launch limit, lowered before any kernel that uses the device runtime
    // runs (the reserve is sized then); no host launch below makes more than 45 launches
    // but the last.
    size_t pending = 0;
    T(cudaDeviceGetLimit(&pending, cudaLimitDevRuntimePendingLaunchCount));
    OUT("pending launch limit %zu", pending);
    T(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 48));
    T(cudaDeviceGetLimit(&pending, cudaLimitDevRuntimePendingLaunchCount));
    OUT("pending launch limit %zu", pending);

    // The tree sum: 1024 values, leaves of 64: four generations below the host's.
    const int n = 1024, nodes = 64;
    int *in, *out, *deepest;
    T(cudaMallocManaged(&in, n * sizeof(int)));
    T(cudaMallocManaged(&out, nodes * sizeof(int)));
    T(cudaMallocManaged(&deepest, sizeof(int)));
    NEED(in);
    NEED(out);
    NEED(deepest);
    long expect = 0;
    for (int i = 0; i < n; i++) {
        in[i] = (i * 37) % 101 - 50;
        expect += in[i];
    }
    memset(out, 0, nodes * sizeof(int));
    *deepest = -1;
    tree_sum<<<1, LEAF>>>(in, n, out, 0, 0, deepest);
    T(cudaGetLastError());
    T(cudaDeviceSynchronize());
    OUT("sum %d (expected %ld), deepest generation %d", out[0], expect, *deepest);
    CHECK(out[0] == expect);
    CHECK(*deepest == 4);
    // Every inner node combined its children.
    int inner_ok = 1;
    for (int i = 0; i < 15; i++)
        if (out[i] != out[2 * i + 1] + out[2 * i + 2]) inner_ok = 0;
    OUT("inner nodes are their children's sums: %s", inner_ok ? "yes" : "no");
    CHECK(inner_ok);

    // Launches into one stream, and into the block's NULL stream, run in order.
    int *stream_log, *null_log, *errors;
    T(cudaMallocManaged(&stream_log, 8 * sizeof(int)));
    T(cudaMallocManaged(&null_log, 8 * sizeof(int)));
    T(cudaMallocManaged(&errors, 8 * sizeof(int)));
    NEED(stream_log);
    NEED(null_log);
    NEED(errors);
    memset(stream_log, 0, 8 * sizeof(int));
    memset(null_log, 0, 8 * sizeof(int));
    memset(errors, 0xff, 8 * sizeof(int));
    ordered_launches<<<1, 32>>>(stream_log, null_log, errors);
    T(cudaDeviceSynchronize());
    OUT("stream: %d launches ran, in order %d %d %d %d", stream_log[0], stream_log[1], stream_log[2],
        stream_log[3], stream_log[4]);
    OUT("NULL stream: %d launches ran, in order %d %d %d %d", null_log[0], null_log[1], null_log[2],
        null_log[3], null_log[4]);
    for (int i = 1; i <= 4; i++) {
        CHECK(stream_log[i] == i);
        CHECK(null_log[i] == i);
    }
    OUT("stream create %s, destroy %s; event create %s, record %s, destroy %s; last error %s",
        cudaGetErrorName((cudaError_t)errors[0]), cudaGetErrorName((cudaError_t)errors[1]),
        cudaGetErrorName((cudaError_t)errors[2]), cudaGetErrorName((cudaError_t)errors[3]),
        cudaGetErrorName((cudaError_t)errors[4]), cudaGetErrorName((cudaError_t)errors[5]));

    // Fire-and-forget launches: done when the device is.
    int *flags;
    T(cudaMallocManaged(&flags, 4 * sizeof(int)));
    NEED(flags);
    memset(flags, 0, 4 * sizeof(int));
    fire_and_forget<<<1, 4>>>(flags);
    T(cudaDeviceSynchronize());
    OUT("fire-and-forget flags %d %d %d %d", flags[0], flags[1], flags[2], flags[3]);
    for (int i = 0; i < 4; i++) CHECK(flags[i] == 100 + i);

    // Device-side cudaMalloc/cudaFree.
    int *sum;
    T(cudaMallocManaged(&sum, sizeof(int)));
    NEED(sum);
    *sum = -1;
    memset(errors, 0xff, 8 * sizeof(int));
    device_memory<<<1, 1>>>(sum, errors);
    T(cudaDeviceSynchronize());
    OUT("cudaMalloc %s, the child's sum %d; cudaMalloc(1 TiB) %s, last error %s, pointer %s",
        cudaGetErrorName((cudaError_t)errors[0]), *sum, cudaGetErrorName((cudaError_t)errors[1]),
        cudaGetErrorName((cudaError_t)errors[2]), errors[3] ? "NULL" : "set");
    CHECK(*sum == 10416);  // 0^2 + ... + 31^2

    // Queries on the device, against the host's answers.
    int *values;
    char *text;
    T(cudaMallocManaged(&values, 4 * sizeof(int)));
    T(cudaMallocManaged(&text, 128));
    NEED(values);
    NEED(text);
    memset(errors, 0xff, 8 * sizeof(int));
    queries<<<1, 1>>>(values, errors, text, 128);
    T(cudaDeviceSynchronize());
    int host_threads = 0, host_sms = 0;
    T(cudaDeviceGetAttribute(&host_threads, cudaDevAttrMaxThreadsPerBlock, 0));
    T(cudaDeviceGetAttribute(&host_sms, cudaDevAttrMultiProcessorCount, 0));
    OUT("device: %s %s %s; max threads %s the host's, SMs %s the host's, device %d", 
        cudaGetErrorName((cudaError_t)errors[0]), cudaGetErrorName((cudaError_t)errors[1]),
        cudaGetErrorName((cudaError_t)errors[2]), values[0] == host_threads ? "equal to" : "unlike",
        values[1] == host_sms ? "equal to" : "unlike", values[2]);
    CHECK(values[0] == host_threads && values[1] == host_sms && values[2] == 0);
    OUT("cudaGetErrorString(cudaErrorLaunchMaxDepthExceeded) on the device: \"%s\"", text);
    CHECK(strcmp(text, cudaGetErrorString(cudaErrorLaunchMaxDepthExceeded)) == 0);

    // Launch errors.
    memset(errors, 0xff, 8 * sizeof(int));
    bad_launches<<<1, 1>>>(errors);
    T(cudaDeviceSynchronize());
    OUT("2048 threads: %s; grid 0: %s, then peek %s; blocking stream: %s, last error %s",
        cudaGetErrorName((cudaError_t)errors[0]), cudaGetErrorName((cudaError_t)errors[1]),
        cudaGetErrorName((cudaError_t)errors[2]), cudaGetErrorName((cudaError_t)errors[3]),
        cudaGetErrorName((cudaError_t)errors[4]));

    // The nesting depth.
    *deepest = -1;
    memset(errors, 0, 8 * sizeof(int));
    nest<<<1, 1>>>(0, deepest, errors);
    T(cudaDeviceSynchronize());
    OUT("nesting: the deepest generation that ran %d, the launch below it %s", *deepest,
        cudaGetErrorName((cudaError_t)errors[0]));

    // The pending-launch limit (set to 48 at the start).
    int *counts;
    T(cudaMallocManaged(&counts, 4 * sizeof(int)));
    NEED(counts);
    memset(counts, 0, 4 * sizeof(int));
    many_launches<<<1, 64>>>(&counts[0], &counts[1], &counts[2], &counts[3]);
    T(cudaDeviceSynchronize());
    OUT("64 tail launches under a limit of 48: %d ran, %d succeeded, %d failed%s%s", counts[0],
        counts[1], counts[2], counts[2] ? " with " : "",
        counts[2] ? cudaGetErrorName((cudaError_t)counts[3]) : "");
    CHECK(counts[0] == counts[1] && counts[1] + counts[2] == 64);

    // Last: a child's fault is the host's, at synchronisation, and sticky.
    int *flag;
    T(cudaMallocManaged(&flag, sizeof(int)));
    NEED(flag);
    *flag = 0;
    faulting_parent<<<1, 1>>>(flag);
    T(cudaGetLastError());
    T(cudaDeviceSynchronize());
    T(cudaDeviceSynchronize());
    return finish();
}
