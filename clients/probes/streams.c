/* Streams as frameworks query them: the priority range, streams created with a priority
 * (in and out of range), their flags, context and device; and context limits.
 * Section stream-attributes: cuStreamGetAttribute/SetAttribute/CopyAttributes, recorded
 * on the H200 (ci/gpu-probes.sh). Section capture-ends (how a capture ends: a NULL graph
 * pointer, a joined or the capturing stream destroyed) recorded too. No multicast API is
 * called. */
#include "probe.h"

static void priorities(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    int least = 99, greatest = 99;
    CALL("priority range", cuCtxGetStreamPriorityRange(&least, &greatest));
    SAY("least %d greatest %d", least, greatest);
    CALL("priority range, NULLs", cuCtxGetStreamPriorityRange(NULL, NULL));
    int prios[] = {0, -1, -5, -6, 3};
    for (unsigned i = 0; i < sizeof prios / sizeof *prios; i++) {
        CUstream s;
        char what[64];
        snprintf(what, sizeof what, "create with priority %d", prios[i]);
        if (CALL(what, cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, prios[i])) != CUDA_SUCCESS) continue;
        int p = 99;
        unsigned f = 99;
        CALL("  get priority", cuStreamGetPriority(s, &p));
        CALL("  get flags", cuStreamGetFlags(s, &f));
        SAY("priority %d flags %u", p, f);
        CUcontext c = NULL;
        CALL("  get ctx", cuStreamGetCtx(s, &c));
        SAY("ctx %s", c == ctx ? "the primary" : "other");
        CUdevice d = -1;
        CALL("  get device", cuStreamGetDevice(s, &d));
        SAY("device %d", d);
        CALL("  destroy", cuStreamDestroy(s));
    }
    int p = 99;
    unsigned f = 99;
    CALL("default stream priority", cuStreamGetPriority(NULL, &p));
    CALL("default stream flags", cuStreamGetFlags(NULL, &f));
    SAY("priority %d flags %u", p, f);
    CALL("legacy stream priority", cuStreamGetPriority(CU_STREAM_LEGACY, &p));
    CALL("per-thread stream priority", cuStreamGetPriority(CU_STREAM_PER_THREAD, &p));
    SAY("priority %d", p);
}

static void limits(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    const char *names[] = {"STACK_SIZE", "PRINTF_FIFO_SIZE", "MALLOC_HEAP_SIZE", "DEV_RUNTIME_SYNC_DEPTH",
                           "DEV_RUNTIME_PENDING_LAUNCH_COUNT", "MAX_L2_FETCH_GRANULARITY", "PERSISTING_L2_CACHE_SIZE"};
    for (int l = 0; l < 7; l++) {
        size_t v = 0;
        CUresult r = cuCtxGetLimit(&v, (CUlimit)l);
        SAY("limit %s = %s %zu", names[l], rname(r), r ? 0 : v);
    }
    size_t v = 0;
    CALL("limit 99", cuCtxGetLimit(&v, (CUlimit)99));
    CALL("set STACK_SIZE 4096", cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 4096));
    CALL("get STACK_SIZE", cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE));
    SAY("stack %zu", v);
}

/* One stream attribute's union as its first four words. */
static void show_attr(const char *what, CUstream s, CUstreamAttrID id) {
    CUstreamAttrValue v;
    memset(&v, 0, sizeof v);
    CUresult r = cuStreamGetAttribute(s, id, &v);
    const unsigned *w = (const unsigned *)&v;
    printf("%s: get %d = %s, words %u %u %u %u\n", what, (int)id, rname(r), w[0], w[1], w[2], w[3]);
    fflush(stdout);
}

static const char *empty_ptx =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    ".visible .entry nothing()\n"
    "{\n"
    "  ret;\n"
    "}\n";

static void attributes(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUstreamAttrID ids[] = {CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY,
                            CU_STREAM_ATTRIBUTE_PRIORITY, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP,
                            CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN};
    CUstream s, t;
    MUST(cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, -3));
    MUST(cuStreamCreate(&t, CU_STREAM_NON_BLOCKING));
    for (int i = 0; i < 5; i++) show_attr("fresh stream, priority -3", s, ids[i]);
    for (int i = 0; i < 5; i++) show_attr("the legacy stream", CU_STREAM_LEGACY, ids[i]);
    show_attr("the per-thread stream", CU_STREAM_PER_THREAD, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY);

    CUstreamAttrValue v;
    memset(&v, 0, sizeof v);
    v.accessPolicyWindow.base_ptr = (void *)(uintptr_t)0x10000;
    v.accessPolicyWindow.num_bytes = 4096;
    v.accessPolicyWindow.hitRatio = 0.5f;
    v.accessPolicyWindow.hitProp = CU_ACCESS_PROPERTY_PERSISTING;
    v.accessPolicyWindow.missProp = CU_ACCESS_PROPERTY_STREAMING;
    CALL("set an access policy window", cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v));
    memset(&v, 0, sizeof v);
    CALL("get it", cuStreamGetAttribute(s, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v));
    SAY("base %#lx, bytes %zu, hit ratio %.2f, hit %d, miss %d", (unsigned long)(uintptr_t)v.accessPolicyWindow.base_ptr,
        v.accessPolicyWindow.num_bytes, v.accessPolicyWindow.hitRatio, (int)v.accessPolicyWindow.hitProp,
        (int)v.accessPolicyWindow.missProp);
    memset(&v, 0, sizeof v);
    v.syncPolicy = CU_SYNC_POLICY_BLOCKING_SYNC;
    CALL("set sync policy BLOCKING_SYNC", cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v));
    show_attr("after it", s, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY);
    memset(&v, 0, sizeof v);
    v.syncPolicy = (CUsynchronizationPolicy)9;
    CALL("set sync policy 9", cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v));
    show_attr("after it", s, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY);
    memset(&v, 0, sizeof v);
    v.memSyncDomainMap.default_ = 0;
    v.memSyncDomainMap.remote = 1;
    CALL("set mem sync domain map 0/1", cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP, &v));
    show_attr("after it", s, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP);
    memset(&v, 0, sizeof v);
    v.memSyncDomain = CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE;
    CALL("set mem sync domain REMOTE", cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN, &v));
    show_attr("after it", s, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN);

    int p = 99;
    memset(&v, 0, sizeof v);
    v.priority = -1;
    CALL("set priority -1", cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_PRIORITY, &v));
    show_attr("after it", s, CU_STREAM_ATTRIBUTE_PRIORITY);
    CALL("  cuStreamGetPriority", cuStreamGetPriority(s, &p));
    SAY("priority %d", p);
    memset(&v, 0, sizeof v);
    v.priority = -9;
    CALL("set priority -9", cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_PRIORITY, &v));
    show_attr("after it", s, CU_STREAM_ATTRIBUTE_PRIORITY);
    CALL("  cuStreamGetPriority", cuStreamGetPriority(s, &p));
    SAY("priority %d", p);

    /* Work after the sets: a kernel launched on the stream, and one captured from it. */
    CUmodule mod;
    CUfunction f;
    MUST(cuModuleLoadData(&mod, empty_ptx));
    MUST(cuModuleGetFunction(&f, mod, "nothing"));
    CALL("launch on the stream", cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
    CALL("synchronize", cuStreamSynchronize(s));
    if (CALL("capture on the stream", cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED)) == CUDA_SUCCESS) {
        CALL("  launch", cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
        CUgraph g = NULL;
        CALL("  end capture", cuStreamEndCapture(s, &g));
        CUgraphNode n;
        size_t count = 1;
        if (g && CALL("  the graph's node", cuGraphGetNodes(g, &n, &count)) == CUDA_SUCCESS && count == 1) {
            CUkernelNodeAttrID kids[] = {CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, CU_LAUNCH_ATTRIBUTE_PRIORITY,
                                         CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP, CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN};
            for (int i = 0; i < 4; i++) {
                CUkernelNodeAttrValue kv;
                memset(&kv, 0, sizeof kv);
                CUresult r = cuGraphKernelNodeGetAttribute(n, kids[i], &kv);
                const unsigned *w = (const unsigned *)&kv;
                SAY("captured kernel node: get %d = %s, words %u %u %u %u", (int)kids[i], rname(r), w[0], w[1], w[2],
                    w[3]);
            }
        }
        if (g) MUST(cuGraphDestroy(g));
    }

    CALL("copy the attributes to a second stream", cuStreamCopyAttributes(t, s));
    for (int i = 0; i < 5; i++) show_attr("second stream", t, ids[i]);
    CALL("  cuStreamGetPriority", cuStreamGetPriority(t, &p));
    SAY("priority %d", p);
    CALL("copy from the legacy stream", cuStreamCopyAttributes(t, CU_STREAM_LEGACY));
    show_attr("second stream", t, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY);
    show_attr("second stream", t, CU_STREAM_ATTRIBUTE_PRIORITY);

    memset(&v, 0, sizeof v);
    v.syncPolicy = CU_SYNC_POLICY_YIELD;
    CALL("set sync policy YIELD on the legacy stream", cuStreamSetAttribute(CU_STREAM_LEGACY, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v));
    show_attr("the NULL stream", NULL, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY);
    v.syncPolicy = CU_SYNC_POLICY_AUTO;
    CALL("set it back to AUTO", cuStreamSetAttribute(CU_STREAM_LEGACY, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v));

    CUstreamAttrID bad[] = {(CUstreamAttrID)0, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
                            (CUstreamAttrID)15, (CUstreamAttrID)99};
    for (int i = 0; i < 5; i++) {
        show_attr("bad id", s, bad[i]);
        memset(&v, 0, sizeof v);
        char what[64];
        snprintf(what, sizeof what, "set bad id %d", (int)bad[i]);
        CALL(what, cuStreamSetAttribute(s, bad[i], &v));
    }

    CUcontext other;
    if (CALL("create a second context", cuCtxCreate(&other, NULL, 0, 0)) == CUDA_SUCCESS) {
        CUstream u;
        MUST(cuStreamCreate(&u, CU_STREAM_NON_BLOCKING));
        CALL("copy between streams of two contexts", cuStreamCopyAttributes(u, s));
        MUST(cuStreamDestroy(u));
        MUST(cuCtxDestroy(other));
        MUST(cuCtxSetCurrent(ctx));
    }

    MUST(cuStreamDestroy(t));
    MUST(cuModuleUnload(mod));
    CALL("destroy the stream", cuStreamDestroy(s));
}

/* A destroyed stream's attributes, each alone in a section run last (the H200 crashed
 * asking its priority in stream-attributes). */
static void destroyed_stream(int set) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUstream s;
    MUST(cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, -3));
    MUST(cuStreamDestroy(s));
    CUstreamAttrValue v;
    memset(&v, 0, sizeof v);
    if (set)
        CALL("set on the destroyed stream", cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_PRIORITY, &v));
    else
        show_attr("destroyed stream", s, CU_STREAM_ATTRIBUTE_PRIORITY);
}
static void destroyed_stream_get(void) { destroyed_stream(0); }
static void destroyed_stream_set(void) { destroyed_stream(1); }

/* How a capture ends: cuStreamEndCapture with a NULL graph pointer, for an ordinary
 * capture and for one into the program's graph; a stream joined to a capture destroyed
 * before the capture ends; the capturing stream itself destroyed. */
static void capture_ends(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUstream s, t;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr d;
    MUST(cuMemAlloc(&d, 4096));
    CUstreamCaptureStatus st;

    if (CALL("begin a capture", cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL)) == CUDA_SUCCESS) {
        CALL("  a memset", cuMemsetD8Async(d, 1, 64, s));
        CALL("  end with a NULL graph pointer", cuStreamEndCapture(s, NULL));
        st = (CUstreamCaptureStatus)99;
        CALL("  is capturing", cuStreamIsCapturing(s, &st));
        SAY("status %d", (int)st);
        if (st != CU_STREAM_CAPTURE_STATUS_NONE) {
            CUgraph g = NULL;
            CALL("  end with a graph pointer", cuStreamEndCapture(s, &g));
            size_t n = 99;
            if (g && cuGraphGetNodes(g, NULL, &n) == CUDA_SUCCESS) SAY("%zu nodes", n);
            if (g) MUST(cuGraphDestroy(g));
        }
    }

    CUgraph own;
    MUST(cuGraphCreate(&own, 0));
    if (CALL("begin a capture into a graph", cuStreamBeginCaptureToGraph(s, own, NULL, NULL, 0, CU_STREAM_CAPTURE_MODE_GLOBAL)) == CUDA_SUCCESS) {
        CALL("  a memset", cuMemsetD8Async(d, 2, 64, s));
        CALL("  end with a NULL graph pointer", cuStreamEndCapture(s, NULL));
        st = (CUstreamCaptureStatus)99;
        CALL("  is capturing", cuStreamIsCapturing(s, &st));
        SAY("status %d", (int)st);
        size_t n = 99;
        MUST(cuGraphGetNodes(own, NULL, &n));
        SAY("%zu nodes in the graph", n);
    }
    MUST(cuGraphDestroy(own));

    MUST(cuStreamCreate(&t, CU_STREAM_NON_BLOCKING));
    CUevent fork;
    MUST(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
    if (CALL("begin a capture", cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL)) == CUDA_SUCCESS) {
        CALL("  a memset", cuMemsetD8Async(d, 3, 64, s));
        CALL("  record the fork", cuEventRecord(fork, s));
        CALL("  join a second stream", cuStreamWaitEvent(t, fork, 0));
        CALL("  a memset on it", cuMemsetD8Async(d + 64, 4, 64, t));
        CALL("  destroy the joined stream", cuStreamDestroy(t));
        CALL("  a memset on the first", cuMemsetD8Async(d + 128, 5, 64, s));
        CUgraph g = NULL;
        CALL("  end", cuStreamEndCapture(s, &g));
        size_t n = 99;
        if (g && cuGraphGetNodes(g, NULL, &n) == CUDA_SUCCESS) SAY("%zu nodes", n);
        CUgraphExec e;
        if (g && CALL("  instantiate", cuGraphInstantiateWithFlags(&e, g, 0)) == CUDA_SUCCESS) {
            MUST(cuMemsetD8(d, 0, 4096));
            CALL("  launch", cuGraphLaunch(e, s));
            CALL("  synchronize", cuStreamSynchronize(s));
            unsigned char h[192];
            MUST(cuMemcpyDtoH(h, d, sizeof h));
            SAY("bytes %u %u %u", h[0], h[64], h[128]);
            MUST(cuGraphExecDestroy(e));
        }
        if (g) MUST(cuGraphDestroy(g));
    }
    MUST(cuEventDestroy(fork));

    CUstream u;
    MUST(cuStreamCreate(&u, CU_STREAM_NON_BLOCKING));
    if (CALL("begin a capture on a third stream", cuStreamBeginCapture(u, CU_STREAM_CAPTURE_MODE_GLOBAL)) == CUDA_SUCCESS) {
        CALL("  a memset", cuMemsetD8Async(d, 6, 64, u));
        /* The handle is not used again: a destroyed stream's handle may crash the driver. */
        CALL("  destroy the capturing stream", cuStreamDestroy(u));
        st = (CUstreamCaptureStatus)99;
        CALL("  another stream's capture status", cuStreamIsCapturing(s, &st));
        SAY("status %d", (int)st);
        CALL("  a synchronous memset (GLOBAL mode forbids it during a capture)", cuMemsetD8(d, 7, 64));
    }
    MUST(cuStreamDestroy(s));
    MUST(cuMemFree(d));
}

/* The call the H200 crashed on (SIGSEGV) in stream-attributes, alone in a section run
 * last, so that stream-attributes runs to its end. */
static void stream_attributes_null_crash(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUstream s;
    MUST(cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, -3));
    CALL("get with a NULL value", cuStreamGetAttribute(s, CU_STREAM_ATTRIBUTE_PRIORITY, NULL));
}

/* The next call the H200 crashed on (SIGSEGV) in stream-attributes once the get had
 * moved out: alone, last. */
static void stream_attributes_set_null_crash(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUstream s;
    MUST(cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, -3));
    CALL("set with a NULL value", cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_PRIORITY, NULL));
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    section("stream-priorities", priorities);
    section("context-limits", limits);
    section("stream-attributes", attributes);
    section("capture-ends", capture_ends);
    section("stream-attributes-null-crash", stream_attributes_null_crash);
    section("stream-attributes-set-null-crash", stream_attributes_set_null_crash);
    section("destroyed-stream-get", destroyed_stream_get);
    section("destroyed-stream-set", destroyed_stream_set);
    return 0;
}
