/* Green contexts, what probe green_contexts left unrecorded: its streams section ended at
 * the first call (a refused cuGreenCtxStreamCreate writes phStream), its descriptors
 * section crashed before its last calls, and the SM counts of descriptors mixing
 * resources, cuCtxRecordEvent on the primary context while a green context's stream is
 * busy, CU_STREAM_PER_THREAD with a green context's context current, and a stream left
 * after its green context is destroyed were never asked.
 *
 * Recorded on the H200 (ci/gpu-all.sh PARTS=probes PROBES=green_contexts2) and fitted
 * (mock-driver/src/model/green_contexts.rs), except sections descriptor-zero and
 * descriptor-edges, split off descriptor-counts after that recording crashed in it:
 * awaiting a re-recording. Handles are printed as comparisons, never as values. */
#include "probe.h"

static const char *yes(int c) { return c ? "yes" : "no"; }

/* spin(cycles): one thread waits `cycles` clock64 ticks (about 0.1 s at 1e8). */
static const char *ptx =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    ".visible .entry spin(.param .u64 cycles)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b64 %rd<5>;\n"
    "  ld.param.u64 %rd1, [cycles];\n"
    "  mov.u64 %rd2, %clock64;\n"
    "LOOP:\n"
    "  mov.u64 %rd3, %clock64;\n"
    "  sub.u64 %rd4, %rd3, %rd2;\n"
    "  setp.lt.u64 %p1, %rd4, %rd1;\n"
    "  @%p1 bra LOOP;\n"
    "  ret;\n"
    "}\n";

static CUdevResource device_sm(void) {
    CUdevResource r;
    memset(&r, 0, sizeof r);
    MUST(cuDeviceGetDevResource(0, &r, CU_DEV_RESOURCE_TYPE_SM));
    return r;
}

static CUgreenCtx green_of(const CUdevResource *rs, unsigned n) {
    CUdevResourceDesc desc;
    MUST(cuDevResourceGenerateDesc(&desc, (CUdevResource *)rs, n));
    CUgreenCtx g;
    MUST(cuGreenCtxCreate(&g, desc, 0, CU_GREEN_CTX_DEFAULT_STREAM));
    return g;
}

static CUgreenCtx green_of_8(void) {
    CUdevResource whole = device_sm(), g[1];
    unsigned n = 1;
    MUST(cuDevSmResourceSplitByCount(g, &n, &whole, NULL, 0, 8));
    return green_of(g, 1);
}

static void show_green(const char *what, const CUdevResource *rs, unsigned n) {
    CUdevResourceDesc desc;
    if (CALL(what, cuDevResourceGenerateDesc(&desc, (CUdevResource *)rs, n)) != CUDA_SUCCESS) return;
    CUgreenCtx g;
    if (CALL("  its green context", cuGreenCtxCreate(&g, desc, 0, CU_GREEN_CTX_DEFAULT_STREAM)) != CUDA_SUCCESS) return;
    CUdevResource r;
    FILL(r);
    if (CALL("  its resource", cuGreenCtxGetDevResource(g, &r, CU_DEV_RESOURCE_TYPE_SM)) == CUDA_SUCCESS)
        SAY("smCount %u, minSmPartitionSize %u, smCoscheduledAlignment %u", r.sm.smCount, r.sm.minSmPartitionSize,
            r.sm.smCoscheduledAlignment);
    unsigned groups = 0;
    if (CALL("  its count query, minCount 8", cuDevSmResourceSplitByCount(NULL, &groups, &r, NULL, 0, 8)) == CUDA_SUCCESS)
        SAY("nbGroups %u", groups);
    MUST(cuGreenCtxDestroy(g));
}

static void descriptor_counts(void) {
    CUcontext primary;
    init_primary(0, &primary);
    CUdevResource whole = device_sm(), a[3], b[2], rem;
    unsigned n = 3, m = 2;
    MUST(cuDevSmResourceSplitByCount(a, &n, &whole, &rem, 0, 8));
    MUST(cuDevSmResourceSplitByCount(b, &m, &whole, NULL, 0, 16));
    show_green("the whole device", &whole, 1);
    CUdevResource wholes[2] = {whole, whole};
    show_green("the whole device twice", wholes, 2);
    CUdevResource same[2] = {a[0], a[0]};
    show_green("one group twice", same, 2);
    CUdevResource two[2] = {a[0], b[0]};
    show_green("groups of two splits (8 and 16)", two, 2);
    CUdevResource with_whole[2] = {a[0], whole};
    show_green("a group and the whole device", with_whole, 2);
    CUdevResource mix[2] = {a[0], rem};
    show_green("a group and the remaining", mix, 2);
    show_green("the remaining alone", &rem, 1);
}

/* Recorded at the end of descriptor-counts, the H200 crashed (SIGSEGV) after the last
 * count query: in cuGreenCtxDestroy of the remaining's green context, or in this call,
 * the next; alone here, a recording tells which. */
static void descriptor_zero(void) {
    CUcontext primary;
    init_primary(0, &primary);
    CUdevResource whole = device_sm(), a[1];
    unsigned n = 1;
    MUST(cuDevSmResourceSplitByCount(a, &n, &whole, NULL, 0, 8));
    CUdevResourceDesc d;
    CALL("nbResources 0", cuDevResourceGenerateDesc(&d, a, 0));
}

/* What descriptor-counts asked after the crash, unrecorded. */
static void descriptor_edges(void) {
    CUcontext primary;
    init_primary(0, &primary);
    CUdevResource whole = device_sm(), a[1];
    unsigned n = 1;
    MUST(cuDevSmResourceSplitByCount(a, &n, &whole, NULL, 0, 8));
    CUdevResourceDesc d;
    CUdevResource bad = a[0];
    bad.type = CU_DEV_RESOURCE_TYPE_INVALID;
    CALL("a resource of type INVALID", cuDevResourceGenerateDesc(&d, &bad, 1));
    CUdevResource zero;
    memset(&zero, 0, sizeof zero);
    zero.type = CU_DEV_RESOURCE_TYPE_SM;
    zero.sm.smCount = 8;
    CALL("a resource built by hand (type SM, smCount 8)", cuDevResourceGenerateDesc(&d, &zero, 1));
    CUdevResource g1[1], empty;
    n = 1;
    FILL(empty);
    MUST(cuDevSmResourceSplitByCount(g1, &n, &whole, &empty, 0, 132));
    CALL("an empty remaining (type INVALID)", cuDevResourceGenerateDesc(&d, &empty, 1));
    unsigned q = 0;
    CALL("count query, minCount 129", cuDevSmResourceSplitByCount(NULL, &q, &whole, NULL, 0, 129));
    SAY("nbGroups %u", q);
    CALL("count query, flags 0x5, minCount 8", cuDevSmResourceSplitByCount(NULL, &q, &whole, NULL, 0x5, 8));
    SAY("nbGroups %u", q);
}

static void streams(void) {
    CUcontext primary;
    init_primary(0, &primary);
    CUgreenCtx h = green_of_8();
    unsigned flags_set[] = {0, 2, 3};
    for (unsigned i = 0; i < 3; i++) {
        char what[64];
        snprintf(what, sizeof what, "flags %u", flags_set[i]);
        CUstream s = NULL;
        if (CALL(what, cuGreenCtxStreamCreate(&s, h, flags_set[i], 0)) == CUDA_SUCCESS) {
            MUST(cuStreamDestroy(s));
            continue;
        }
        SAY("phStream written: %s", yes(s != NULL));
        if (s) CALL("  destroy what it wrote", cuStreamDestroy(s));
    }
    CUstream s = NULL;
    int prios[] = {0, -1, -5, -10, 3};
    for (unsigned i = 0; i < 5; i++) {
        char what[64];
        snprintf(what, sizeof what, "NON_BLOCKING, priority %d", prios[i]);
        if (CALL(what, cuGreenCtxStreamCreate(&s, h, CU_STREAM_NON_BLOCKING, prios[i])) != CUDA_SUCCESS) continue;
        int prio = 99;
        unsigned flags = 99;
        MUST(cuStreamGetPriority(s, &prio));
        MUST(cuStreamGetFlags(s, &flags));
        SAY("priority %d, flags %u", prio, flags);
        MUST(cuStreamDestroy(s));
    }
    /* A stream left when the green context goes (cuda.h: CONTEXT_IS_DESTROYED). */
    MUST(cuGreenCtxStreamCreate(&s, h, CU_STREAM_NON_BLOCKING, 0));
    MUST(cuGreenCtxDestroy(h));
    CALL("cuStreamQuery after the green context's destroy", cuStreamQuery(s));
    CALL("cuStreamSynchronize after", cuStreamSynchronize(s));
    CUcontext sc = NULL;
    CALL("cuStreamGetCtx after", cuStreamGetCtx(s, &sc));
    CALL("cuStreamDestroy after", cuStreamDestroy(s));
}

static void record_on_primary(void) {
    CUcontext primary;
    init_primary(0, &primary);
    CUgreenCtx h = green_of_8();
    CUcontext gc;
    MUST(cuCtxFromGreenCtx(&gc, h));
    CUmodule m;
    CUfunction f;
    MUST(cuCtxPushCurrent(gc));
    MUST(cuModuleLoadData(&m, ptx));
    MUST(cuModuleGetFunction(&f, m, "spin"));
    MUST(cuCtxPopCurrent(NULL));
    CUstream s;
    MUST(cuGreenCtxStreamCreate(&s, h, CU_STREAM_NON_BLOCKING, 0));
    CUevent e;
    MUST(cuEventCreate(&e, 0));
    unsigned long long cycles = 400000000ull; /* about 0.2 s */
    void *args[] = {&cycles};
    struct { const char *what; int which; } cases[] = {
        {"cuCtxRecordEvent on the primary", 0},
        {"cuCtxRecordEvent on its context", 1},
        {"cuGreenCtxRecordEvent", 2},
        {"cuEventRecord on the primary's NULL stream", 3},
    };
    for (unsigned i = 0; i < 4; i++) {
        MUST(cuCtxPushCurrent(gc));
        MUST(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
        MUST(cuCtxPopCurrent(NULL));
        CUresult r = cases[i].which == 0   ? cuCtxRecordEvent(primary, e)
                     : cases[i].which == 1 ? cuCtxRecordEvent(gc, e)
                     : cases[i].which == 2 ? cuGreenCtxRecordEvent(h, e)
                                           : cuEventRecord(e, NULL);
        printf("%s, a green stream busy = %s\n", cases[i].what, rname(r));
        CALL("  query it at once (NOT_READY: it waits for the green stream)", cuEventQuery(e));
        MUST(cuStreamSynchronize(s));
        MUST(cuEventSynchronize(e));
    }
    MUST(cuStreamDestroy(s));
    MUST(cuGreenCtxDestroy(h));
}

static void per_thread(void) {
    CUcontext primary;
    init_primary(0, &primary);
    CUgreenCtx h = green_of_8();
    CUcontext gc;
    MUST(cuCtxFromGreenCtx(&gc, h));
    CUdeviceptr p;
    MUST(cuMemAlloc(&p, 4096));
    MUST(cuCtxPushCurrent(gc));
    CUgreenCtx g = (CUgreenCtx)1;
    CALL("cuStreamGetGreenCtx, CU_STREAM_PER_THREAD", cuStreamGetGreenCtx(CU_STREAM_PER_THREAD, &g));
    SAY("the green context: %s, NULL: %s", yes(g == h), yes(g == NULL));
    CUcontext c = NULL;
    CALL("cuStreamGetCtx, CU_STREAM_PER_THREAD", cuStreamGetCtx(CU_STREAM_PER_THREAD, &c));
    SAY("its context: %s, the primary: %s", yes(c == gc), yes(c == primary));
    CALL("cuStreamQuery, CU_STREAM_PER_THREAD", cuStreamQuery(CU_STREAM_PER_THREAD));
    CALL("cuMemsetD8Async, CU_STREAM_PER_THREAD", cuMemsetD8Async(p, 3, 4096, CU_STREAM_PER_THREAD));
    CALL("cuStreamSynchronize, CU_STREAM_PER_THREAD", cuStreamSynchronize(CU_STREAM_PER_THREAD));
    CALL("cuStreamGetCtx_v2, CU_STREAM_LEGACY", cuStreamGetCtx_v2(CU_STREAM_LEGACY, &c, &g));
    MUST(cuCtxPopCurrent(NULL));
    g = (CUgreenCtx)1;
    CALL("cuStreamGetCtx_v2, CU_STREAM_PER_THREAD, the primary current", cuStreamGetCtx_v2(CU_STREAM_PER_THREAD, &c, &g));
    MUST(cuMemFree(p));
    MUST(cuGreenCtxDestroy(h));
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    section("descriptor-counts", descriptor_counts);
    section("descriptor-zero", descriptor_zero);
    section("descriptor-edges", descriptor_edges);
    section("streams", streams);
    section("record-on-primary", record_on_primary);
    section("per-thread", per_thread);
    return 0;
}
