/* Green contexts (cuda.h's group CUDA_GREEN_CONTEXTS, CUDA 12.4+): what the driver answers
 * where cuda.h leaves it open. The device's SM resource (smCount, minSmPartitionSize,
 * smCoscheduledAlignment), cuDevSmResourceSplitByCount with various minCount and flags
 * (the count query, groups asked, the remaining SMs, bad inputs), cuDevResourceGenerateDesc
 * over one and several resources, cuGreenCtxCreate's flags, the context cuCtxFromGreenCtx
 * gives (pushed: memory, a PTX kernel, the SMs it runs on, occupancy), streams of
 * cuGreenCtxStreamCreate (flags, priority, their contexts), events, ids, destroy and use
 * after destroy, NULL and bad arguments for each. Handles are printed as comparisons
 * ("same as the primary context: yes"), never as values.
 *
 * Recorded on the H200 (ci/gpu-all.sh PARTS=probes PROBES=green_contexts); the mock is
 * fitted to it, the one section the H200 crashed in declared. No multicast API is called. */
#include "probe.h"

static const char *yes(int c) { return c ? "yes" : "no"; }

/* sms(out): out[0] = %nsmid; out[1] = the number of blocks; out[2 + smid / 32] |= the
 * bit of %smid: which SMs ran a block. */
static const char *ptx =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    ".visible .entry sms(.param .u64 out)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<10>;\n"
    "  .reg .b64 %rd<6>;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  setp.ne.u32 %p1, %r1, 0;\n"
    "  @%p1 bra DONE;\n"
    "  mov.u32 %r2, %nsmid;\n"
    "  st.global.u32 [%rd1], %r2;\n"
    "  atom.global.add.u32 %r3, [%rd1+4], 1;\n"
    "  mov.u32 %r4, %smid;\n"
    "  shr.u32 %r5, %r4, 5;\n"
    "  and.b32 %r6, %r4, 31;\n"
    "  mov.u32 %r7, 1;\n"
    "  shl.b32 %r8, %r7, %r6;\n"
    "  mul.wide.u32 %rd2, %r5, 4;\n"
    "  add.u64 %rd3, %rd1, %rd2;\n"
    "  atom.global.or.b32 %r9, [%rd3+8], %r8;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n";

static void show_sm(const char *what, const CUdevResource *r) {
    SAY("%s: type %d, smCount %u, minSmPartitionSize %u, smCoscheduledAlignment %u", what,
        (int)r->type, r->sm.smCount, r->sm.minSmPartitionSize, r->sm.smCoscheduledAlignment);
}

static CUdevResource device_sm(void) {
    CUdevResource r;
    memset(&r, 0, sizeof r);
    MUST(cuDeviceGetDevResource(0, &r, CU_DEV_RESOURCE_TYPE_SM));
    return r;
}

/* A green context of `groups` groups of `min` SMs (one split), or of the whole device
 * when `groups` is 0. */
static CUgreenCtx make_green(unsigned groups, unsigned min) {
    CUdevResource whole = device_sm(), parts[8];
    CUdevResourceDesc desc;
    if (groups == 0) {
        MUST(cuDevResourceGenerateDesc(&desc, &whole, 1));
    } else {
        unsigned n = groups;
        MUST(cuDevSmResourceSplitByCount(parts, &n, &whole, NULL, 0, min));
        MUST(cuDevResourceGenerateDesc(&desc, parts, n));
    }
    CUgreenCtx g;
    MUST(cuGreenCtxCreate(&g, desc, 0, CU_GREEN_CTX_DEFAULT_STREAM));
    return g;
}

static void device_resource(void) {
    CUcontext primary;
    init_primary(0, &primary);
    int sms = 0;
    MUST(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
    SAY("MULTIPROCESSOR_COUNT %d", sms);
    CUdevResource r;
    FILL(r);
    if (CALL("device 0, SM", cuDeviceGetDevResource(0, &r, CU_DEV_RESOURCE_TYPE_SM)) == CUDA_SUCCESS) {
        show_sm("device", &r);
        SAY("smCount is the multiprocessor count: %s", yes((int)r.sm.smCount == sms));
        SAY("smCount a multiple of the alignment: %s",
            yes(r.sm.smCoscheduledAlignment && r.sm.smCount % r.sm.smCoscheduledAlignment == 0));
    }
    FILL(r);
    CALL("device 0, type INVALID", cuDeviceGetDevResource(0, &r, CU_DEV_RESOURCE_TYPE_INVALID));
    SAY("type after it: %d", (int)r.type);
    CALL("device 0, type 2", cuDeviceGetDevResource(0, &r, (CUdevResourceType)2));
    CALL("device 0, NULL resource", cuDeviceGetDevResource(0, NULL, CU_DEV_RESOURCE_TYPE_SM));
    CALL("device -1", cuDeviceGetDevResource(-1, &r, CU_DEV_RESOURCE_TYPE_SM));
    CALL("device 64", cuDeviceGetDevResource(64, &r, CU_DEV_RESOURCE_TYPE_SM));

    FILL(r);
    if (CALL("primary context, SM", cuCtxGetDevResource(primary, &r, CU_DEV_RESOURCE_TYPE_SM)) == CUDA_SUCCESS)
        show_sm("primary context", &r);
    FILL(r);
    if (CALL("NULL context, SM", cuCtxGetDevResource(NULL, &r, CU_DEV_RESOURCE_TYPE_SM)) == CUDA_SUCCESS)
        show_sm("NULL context", &r);
    CALL("primary context, type 2", cuCtxGetDevResource(primary, &r, (CUdevResourceType)2));
    CALL("primary context, NULL resource", cuCtxGetDevResource(primary, NULL, CU_DEV_RESOURCE_TYPE_SM));
    CUcontext created;
    MUST(cuCtxCreate(&created, NULL, 0, 0));
    FILL(r);
    if (CALL("created context, SM", cuCtxGetDevResource(created, &r, CU_DEV_RESOURCE_TYPE_SM)) == CUDA_SUCCESS)
        show_sm("created context", &r);
    MUST(cuCtxDestroy(created));
    CALL("destroyed context", cuCtxGetDevResource(created, &r, CU_DEV_RESOURCE_TYPE_SM));
}

static void split_once(const char *what, const CUdevResource *in, unsigned asked, int with_result,
                       unsigned flags, unsigned min) {
    CUdevResource groups[200], rem;
    FILL(rem);
    for (int i = 0; i < 200; i++) FILL(groups[i]);
    unsigned n = asked;
    CUresult r = CALL(what, cuDevSmResourceSplitByCount(with_result ? groups : NULL, &n, in, &rem, flags, min));
    if (r != CUDA_SUCCESS) {
        SAY("nbGroups after it: %u", n);
        return;
    }
    SAY("nbGroups %u", n);
    unsigned total = 0;
    if (with_result) {
        int alike = 1;
        for (unsigned i = 0; i < n && i < 200; i++) {
            total += groups[i].sm.smCount;
            alike &= groups[i].sm.smCount == groups[0].sm.smCount;
        }
        if (n) show_sm("group 0", &groups[0]);
        SAY("groups alike: %s, their SMs %u", yes(alike), total);
        if (n < asked && n < 200) SAY("the entry past them untouched: %s", yes(groups[n].sm.smCount == 0xA5A5A5A5u));
    }
    if (rem.type == (CUdevResourceType)0xA5A5A5A5)
        SAY("remaining untouched");
    else
        show_sm("remaining", &rem);
}

static void split(void) {
    CUcontext primary;
    init_primary(0, &primary);
    CUdevResource whole = device_sm();
    unsigned mins[] = {0, 1, 2, 4, 7, 8, 9, 16, 24, 33, 66, 67, 132, 133};
    char what[96];
    for (unsigned i = 0; i < sizeof mins / sizeof *mins; i++) {
        snprintf(what, sizeof what, "count query, minCount %u", mins[i]);
        split_once(what, &whole, 0, 0, 0, mins[i]);
    }
    unsigned flag_sets[] = {CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING,
                            CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE, 3, 4, 0x80000000u};
    unsigned fmins[] = {1, 2, 3, 8, 9};
    for (unsigned f = 0; f < sizeof flag_sets / sizeof *flag_sets; f++)
        for (unsigned i = 0; i < sizeof fmins / sizeof *fmins; i++) {
            snprintf(what, sizeof what, "count query, flags %#x, minCount %u", flag_sets[f], fmins[i]);
            split_once(what, &whole, 0, 0, flag_sets[f], fmins[i]);
        }
    split_once("3 groups of 8", &whole, 3, 1, 0, 8);
    split_once("3 groups of 2", &whole, 3, 1, 0, 2);
    split_once("3 groups of 20", &whole, 3, 1, 0, 20);
    split_once("100 groups of 8", &whole, 100, 1, 0, 8);
    split_once("2 groups of 66", &whole, 2, 1, 0, 66);
    split_once("1 group of 132", &whole, 1, 1, 0, 132);
    split_once("0 groups of 8, result given", &whole, 0, 1, 0, 8);
    split_once("4 groups of 3, ignoring co-scheduling", &whole, 4, 1, CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING, 3);
    split_once("4 groups of 16, max cluster size", &whole, 4, 1, CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE, 16);

    /* Remaining NULL, nbGroups NULL, input NULL or not SM. */
    CUdevResource g[4];
    unsigned n = 2;
    CALL("remaining NULL", cuDevSmResourceSplitByCount(g, &n, &whole, NULL, 0, 8));
    SAY("nbGroups %u", n);
    CALL("nbGroups NULL, result NULL", cuDevSmResourceSplitByCount(NULL, NULL, &whole, NULL, 0, 8));
    CALL("nbGroups NULL, result given", cuDevSmResourceSplitByCount(g, NULL, &whole, NULL, 0, 8));
    n = 2;
    CALL("input NULL", cuDevSmResourceSplitByCount(g, &n, NULL, NULL, 0, 8));
    CUdevResource bad = whole;
    bad.type = CU_DEV_RESOURCE_TYPE_INVALID;
    n = 2;
    CALL("input of type INVALID", cuDevSmResourceSplitByCount(g, &n, &bad, NULL, 0, 8));
    CUdevResource zero;
    memset(&zero, 0, sizeof zero);
    zero.type = CU_DEV_RESOURCE_TYPE_SM;
    zero.sm.smCount = 132;
    n = 2;
    CALL("input built by hand (type SM, smCount 132)", cuDevSmResourceSplitByCount(g, &n, &zero, NULL, 0, 8));
    bad = whole;
    bad.sm.smCount = 16;
    n = 2;
    if (CALL("input's smCount changed to 16", cuDevSmResourceSplitByCount(g, &n, &bad, NULL, 0, 8)) == CUDA_SUCCESS)
        SAY("nbGroups %u", n);

    /* A split's outputs split again. */
    CUdevResource rem;
    n = 2;
    MUST(cuDevSmResourceSplitByCount(g, &n, &whole, &rem, 0, 16));
    split_once("a group split again", &g[0], 0, 0, 0, 8);
    split_once("the remaining split again", &rem, 0, 0, 0, 8);
}

static void descriptors(void) {
    CUcontext primary;
    init_primary(0, &primary);
    CUdevResource whole = device_sm(), a[4], b[4], rem_a, rem_b;
    unsigned n = 3, m = 2;
    MUST(cuDevSmResourceSplitByCount(a, &n, &whole, &rem_a, 0, 8));
    MUST(cuDevSmResourceSplitByCount(b, &m, &whole, &rem_b, 0, 16));
    CUdevResourceDesc d;
    CALL("the whole device", cuDevResourceGenerateDesc(&d, &whole, 1));
    CALL("one group", cuDevResourceGenerateDesc(&d, a, 1));
    CALL("three groups of one split", cuDevResourceGenerateDesc(&d, a, 3));
    CUdevResource mix[3] = {a[0], rem_a, a[1]};
    CALL("groups and the remaining of one split", cuDevResourceGenerateDesc(&d, mix, 3));
    CALL("the remaining alone", cuDevResourceGenerateDesc(&d, &rem_a, 1));
    CUdevResource two[2] = {a[0], b[0]};
    CALL("groups of two splits", cuDevResourceGenerateDesc(&d, two, 2));
    CUdevResource wholes[2] = {whole, whole};
    CALL("the whole device twice", cuDevResourceGenerateDesc(&d, wholes, 2));
    CUdevResource same[2] = {a[0], a[0]};
    CALL("one group twice", cuDevResourceGenerateDesc(&d, same, 2));
    CUdevResource with_whole[2] = {a[0], whole};
    CALL("a group and the whole device", cuDevResourceGenerateDesc(&d, with_whole, 2));
    CALL("NULL phDesc", cuDevResourceGenerateDesc(NULL, a, 1));
    CALL("NULL resources, 1", cuDevResourceGenerateDesc(&d, NULL, 1));
    CALL("nbResources 0", cuDevResourceGenerateDesc(&d, a, 0));
    CUdevResource bad = a[0];
    bad.type = CU_DEV_RESOURCE_TYPE_INVALID;
    CALL("a resource of type INVALID", cuDevResourceGenerateDesc(&d, &bad, 1));
    CUdevResource zero;
    memset(&zero, 0, sizeof zero);
    zero.type = CU_DEV_RESOURCE_TYPE_SM;
    zero.sm.smCount = 8;
    CALL("a resource built by hand (type SM, smCount 8)", cuDevResourceGenerateDesc(&d, &zero, 1));
}

static void create(void) {
    CUcontext primary;
    init_primary(0, &primary);
    unsigned pflags = 0;
    int active = 0;
    CUdevResource whole = device_sm(), g[2];
    unsigned n = 1;
    MUST(cuDevSmResourceSplitByCount(g, &n, &whole, NULL, 0, 16));
    CUdevResourceDesc desc, wdesc;
    MUST(cuDevResourceGenerateDesc(&desc, g, 1));
    MUST(cuDevResourceGenerateDesc(&wdesc, &whole, 1));
    CUgreenCtx h = NULL;
    CALL("flags 0", cuGreenCtxCreate(&h, desc, 0, 0));
    CALL("flags 2", cuGreenCtxCreate(&h, desc, 0, 2));
    CALL("flags 3", cuGreenCtxCreate(&h, desc, 0, 3));
    CALL("NULL phCtx", cuGreenCtxCreate(NULL, desc, 0, CU_GREEN_CTX_DEFAULT_STREAM));
    CALL("NULL desc", cuGreenCtxCreate(&h, NULL, 0, CU_GREEN_CTX_DEFAULT_STREAM));
    CALL("device -1", cuGreenCtxCreate(&h, desc, -1, CU_GREEN_CTX_DEFAULT_STREAM));
    CALL("device 64", cuGreenCtxCreate(&h, desc, 64, CU_GREEN_CTX_DEFAULT_STREAM));
    CUgreenCtx whole_green;
    CALL("the whole device's", cuGreenCtxCreate(&whole_green, wdesc, 0, CU_GREEN_CTX_DEFAULT_STREAM));
    CALL("destroy it", cuGreenCtxDestroy(whole_green));

    MUST(cuDevicePrimaryCtxGetState(0, &pflags, &active));
    SAY("before: primary active %d", active);
    if (CALL("16 SMs, DEFAULT_STREAM", cuGreenCtxCreate(&h, desc, 0, CU_GREEN_CTX_DEFAULT_STREAM)) != CUDA_SUCCESS) return;
    CUgreenCtx h2;
    CALL("a second of the same descriptor", cuGreenCtxCreate(&h2, desc, 0, CU_GREEN_CTX_DEFAULT_STREAM));
    SAY("the two differ: %s", yes(h != h2));
    CUcontext cur = NULL;
    MUST(cuCtxGetCurrent(&cur));
    SAY("the current context is still the primary: %s", yes(cur == primary));

    CUcontext gc = NULL, gc2 = NULL;
    CALL("cuCtxFromGreenCtx", cuCtxFromGreenCtx(&gc, h));
    SAY("its context is the primary: %s, NULL: %s", yes(gc == primary), yes(gc == NULL));
    CALL("cuCtxFromGreenCtx again", cuCtxFromGreenCtx(&gc2, h));
    SAY("the same context again: %s", yes(gc == gc2));
    CALL("cuCtxFromGreenCtx, NULL out", cuCtxFromGreenCtx(NULL, h));
    CALL("cuCtxFromGreenCtx, NULL green context", cuCtxFromGreenCtx(&gc2, NULL));

    CUdevResource r;
    FILL(r);
    if (CALL("cuGreenCtxGetDevResource", cuGreenCtxGetDevResource(h, &r, CU_DEV_RESOURCE_TYPE_SM)) == CUDA_SUCCESS)
        show_sm("green context", &r);
    CALL("cuGreenCtxGetDevResource, type 2", cuGreenCtxGetDevResource(h, &r, (CUdevResourceType)2));
    CALL("cuGreenCtxGetDevResource, NULL resource", cuGreenCtxGetDevResource(h, NULL, CU_DEV_RESOURCE_TYPE_SM));
    CALL("cuGreenCtxGetDevResource, NULL green context", cuGreenCtxGetDevResource(NULL, &r, CU_DEV_RESOURCE_TYPE_SM));
    FILL(r);
    if (CALL("cuCtxGetDevResource of its context", cuCtxGetDevResource(gc, &r, CU_DEV_RESOURCE_TYPE_SM)) == CUDA_SUCCESS)
        show_sm("its context", &r);
    /* Its resource split again (cuda.h: a green context's resource may be split). */
    split_once("its resource split by 8", &r, 4, 1, 0, 8);

    MUST(cuDevicePrimaryCtxGetState(0, &pflags, &active));
    SAY("after: primary active %d", active);

    CALL("push its context", cuCtxPushCurrent(gc));
    MUST(cuCtxGetCurrent(&cur));
    SAY("current is its context: %s", yes(cur == gc));
    CUdevice dev = -1;
    CALL("cuCtxGetDevice", cuCtxGetDevice(&dev));
    SAY("device %d", dev);
    unsigned flags = 0;
    CALL("cuCtxGetFlags", cuCtxGetFlags(&flags));
    SAY("flags %#x", flags);
    CUexecAffinityParam aff;
    memset(&aff, 0, sizeof aff);
    if (CALL("cuCtxGetExecAffinity SM_COUNT", cuCtxGetExecAffinity(&aff, CU_EXEC_AFFINITY_TYPE_SM_COUNT)) == CUDA_SUCCESS)
        SAY("SM count %u", aff.param.smCount.val);
    int sms = 0;
    MUST(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
    SAY("MULTIPROCESSOR_COUNT %d", sms);
    FILL(r);
    if (CALL("cuCtxGetDevResource, NULL context", cuCtxGetDevResource(NULL, &r, CU_DEV_RESOURCE_TYPE_SM)) == CUDA_SUCCESS)
        show_sm("current", &r);

    CUdeviceptr p = 0;
    if (CALL("cuMemAlloc 1 MiB", cuMemAlloc(&p, 1 << 20)) == CUDA_SUCCESS) {
        CUcontext owner = NULL;
        CALL("its CONTEXT attribute", cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, p));
        SAY("the green context's context: %s, the primary: %s", yes(owner == gc), yes(owner == primary));
    }
    CUmodule m;
    CUfunction f;
    MUST(cuModuleLoadData(&m, ptx));
    MUST(cuModuleGetFunction(&f, m, "sms"));
    int blocks = -1;
    CALL("cuOccupancyMaxActiveBlocksPerMultiprocessor, 128 threads", cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 128, 0));
    SAY("blocks an SM %d", blocks);
    int cluster = -1;
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = 132;
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 128;
    cfg.blockDimY = cfg.blockDimZ = 1;
    CALL("cuOccupancyMaxPotentialClusterSize", cuOccupancyMaxPotentialClusterSize(&cluster, f, &cfg));
    SAY("cluster size %d", cluster);
    int ac = -1;
    CUlaunchAttribute at;
    memset(&at, 0, sizeof at);
    at.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    at.value.clusterDim.x = 2;
    at.value.clusterDim.y = at.value.clusterDim.z = 1;
    cfg.attrs = &at;
    cfg.numAttrs = 1;
    CALL("cuOccupancyMaxActiveClusters, clusters of 2", cuOccupancyMaxActiveClusters(&ac, f, &cfg));
    SAY("active clusters %d", ac);
    if (p) {
        MUST(cuMemsetD8(p, 0, 64));
        void *args[] = {&p};
        CALL("launch 1024 blocks on the NULL stream", cuLaunchKernel(f, 1024, 1, 1, 128, 1, 1, 0, NULL, args, NULL));
        CALL("cuCtxSynchronize", cuCtxSynchronize());
        unsigned out[16];
        MUST(cuMemcpyDtoH(out, p, sizeof out));
        int used = 0;
        for (int i = 2; i < 16; i++) used += __builtin_popcount(out[i]);
        SAY("%%nsmid %u, blocks %u, SMs that ran one: at most 16: %s, at most 18: %s", out[0], out[1], yes(used <= 16), yes(used <= 18));
    }
    CUgreenCtx cg = (CUgreenCtx)1;
    CALL("cuStreamGetGreenCtx, NULL stream", cuStreamGetGreenCtx(NULL, &cg));
    SAY("the green context: %s", yes(cg == h));
    CUcontext sc = NULL;
    cg = (CUgreenCtx)1;
    CALL("cuStreamGetCtx_v2, NULL stream", cuStreamGetCtx_v2(NULL, &sc, &cg));
    SAY("pCtx the primary: %s, its context: %s; pGreenCtx the green context: %s", yes(sc == primary), yes(sc == gc), yes(cg == h));
    cg = (CUgreenCtx)1;
    CALL("cuStreamGetCtx_v2, CU_STREAM_PER_THREAD", cuStreamGetCtx_v2(CU_STREAM_PER_THREAD, &sc, &cg));
    CUstream plain;
    if (CALL("cuStreamCreate while it is current", cuStreamCreate(&plain, CU_STREAM_NON_BLOCKING)) == CUDA_SUCCESS) {
        cg = (CUgreenCtx)1;
        CALL("cuStreamGetGreenCtx of it", cuStreamGetGreenCtx(plain, &cg));
        SAY("the green context: %s", yes(cg == h));
        CALL("cuStreamGetCtx of it", cuStreamGetCtx(plain, &sc));
        SAY("its context: %s, the primary: %s", yes(sc == gc), yes(sc == primary));
        MUST(cuStreamDestroy(plain));
    }
    CALL("pop", cuCtxPopCurrent(&cur));
    SAY("popped its context: %s", yes(cur == gc));
    cg = (CUgreenCtx)1;
    CALL("cuStreamGetGreenCtx, NULL stream, primary current", cuStreamGetGreenCtx(NULL, &cg));
    SAY("NULL: %s", yes(cg == NULL));
    CALL("cuCtxSetCurrent to its context", cuCtxSetCurrent(gc));
    CALL("cuCtxSetCurrent back", cuCtxSetCurrent(primary));
    if (p) CALL("cuMemFree from the primary", cuMemFree(p));
    CALL("destroy the second", cuGreenCtxDestroy(h2));
    CALL("destroy", cuGreenCtxDestroy(h));
    MUST(cuDevicePrimaryCtxGetState(0, &pflags, &active));
    SAY("after destroy: primary active %d", active);
}

static void streams(void) {
    CUcontext primary;
    init_primary(0, &primary);
    CUgreenCtx h = make_green(1, 8);
    CUcontext gc;
    MUST(cuCtxFromGreenCtx(&gc, h));
    CUstream s = NULL;
    CALL("flags 0", cuGreenCtxStreamCreate(&s, h, 0, 0));
    if (s) MUST(cuStreamDestroy(s));
    s = NULL;
    CALL("flags 2", cuGreenCtxStreamCreate(&s, h, 2, 0));
    if (s) MUST(cuStreamDestroy(s));
    CALL("NULL phStream", cuGreenCtxStreamCreate(NULL, h, CU_STREAM_NON_BLOCKING, 0));
    CALL("NULL green context", cuGreenCtxStreamCreate(&s, NULL, CU_STREAM_NON_BLOCKING, 0));
    int prios[] = {0, -1, -5, -10, 3};
    for (unsigned i = 0; i < sizeof prios / sizeof *prios; i++) {
        char what[64];
        snprintf(what, sizeof what, "NON_BLOCKING, priority %d", prios[i]);
        s = NULL;
        if (CALL(what, cuGreenCtxStreamCreate(&s, h, CU_STREAM_NON_BLOCKING, prios[i])) != CUDA_SUCCESS) continue;
        int prio = 99;
        unsigned flags = 99;
        MUST(cuStreamGetPriority(s, &prio));
        MUST(cuStreamGetFlags(s, &flags));
        SAY("priority %d, flags %u", prio, flags);
        MUST(cuStreamDestroy(s));
    }
    CALL("a stream, primary current", cuGreenCtxStreamCreate(&s, h, CU_STREAM_NON_BLOCKING, 0));
    CUgreenCtx cg = NULL;
    CALL("cuStreamGetGreenCtx", cuStreamGetGreenCtx(s, &cg));
    SAY("the green context: %s", yes(cg == h));
    CALL("cuStreamGetGreenCtx, NULL out", cuStreamGetGreenCtx(s, NULL));
    CUcontext sc = NULL;
    CALL("cuStreamGetCtx", cuStreamGetCtx(s, &sc));
    SAY("its context: %s, the primary: %s", yes(sc == gc), yes(sc == primary));
    cg = NULL;
    CALL("cuStreamGetCtx_v2", cuStreamGetCtx_v2(s, &sc, &cg));
    SAY("pCtx the primary: %s, its context: %s; pGreenCtx the green context: %s", yes(sc == primary), yes(sc == gc), yes(cg == h));
    CALL("cuStreamGetCtx_v2, pCtx NULL", cuStreamGetCtx_v2(s, NULL, &cg));
    CALL("cuStreamGetCtx_v2, pGreenCtx NULL", cuStreamGetCtx_v2(s, &sc, NULL));
    CUdevice dev = -1;
    CALL("cuStreamGetDevice", cuStreamGetDevice(s, &dev));
    SAY("device %d", dev);
    CUstream ps;
    MUST(cuStreamCreate(&ps, CU_STREAM_NON_BLOCKING));
    cg = (CUgreenCtx)1;
    CALL("cuStreamGetGreenCtx of a primary stream", cuStreamGetGreenCtx(ps, &cg));
    SAY("NULL: %s", yes(cg == NULL));
    cg = (CUgreenCtx)1;
    CALL("cuStreamGetCtx_v2 of a primary stream", cuStreamGetCtx_v2(ps, &sc, &cg));
    SAY("pCtx the primary: %s; pGreenCtx NULL: %s", yes(sc == primary), yes(cg == NULL));

    /* Work on it, from the primary context. */
    CUdeviceptr p;
    MUST(cuMemAlloc(&p, 4096));
    CALL("cuMemsetD32Async on it", cuMemsetD32Async(p, 7, 1024, s));
    CALL("cuStreamSynchronize", cuStreamSynchronize(s));
    unsigned v = 0;
    MUST(cuMemcpyDtoH(&v, p, 4));
    SAY("wrote %u", v);
    CALL("cuStreamQuery", cuStreamQuery(s));
    CALL("cuStreamDestroy", cuStreamDestroy(s));
    MUST(cuStreamDestroy(ps));
    MUST(cuMemFree(p));
    /* A stream left when the green context goes (cuda.h: its calls then fail with
     * CONTEXT_IS_DESTROYED). */
    MUST(cuGreenCtxStreamCreate(&s, h, CU_STREAM_NON_BLOCKING, 0));
    MUST(cuGreenCtxDestroy(h));
    CALL("cuStreamQuery after the green context's destroy", cuStreamQuery(s));
    CALL("cuStreamDestroy after the green context's destroy", cuStreamDestroy(s));
}

static void events(void) {
    CUcontext primary;
    init_primary(0, &primary);
    CUgreenCtx h = make_green(1, 8), other = make_green(1, 8);
    CUcontext gc;
    MUST(cuCtxFromGreenCtx(&gc, h));
    CUevent ep, eg, ec;
    MUST(cuEventCreate(&ep, 0));
    MUST(cuCtxPushCurrent(gc));
    MUST(cuEventCreate(&eg, 0));
    MUST(cuCtxPopCurrent(NULL));
    CUcontext created;
    MUST(cuCtxCreate(&created, NULL, 0, 0));
    MUST(cuEventCreate(&ec, 0));
    MUST(cuCtxSetCurrent(primary));
    CUstream s;
    MUST(cuGreenCtxStreamCreate(&s, h, CU_STREAM_NON_BLOCKING, 0));
    CUdeviceptr p;
    MUST(cuMemAlloc(&p, 4096));
    MUST(cuMemsetD8Async(p, 1, 4096, s));
    CALL("record an event of the primary", cuGreenCtxRecordEvent(h, ep));
    CALL("synchronize it", cuEventSynchronize(ep));
    CALL("record an event of its context", cuGreenCtxRecordEvent(h, eg));
    CALL("query it", cuEventQuery(eg));
    CALL("record an event of a created context", cuGreenCtxRecordEvent(h, ec));
    CALL("record an event of its context in another green context", cuGreenCtxRecordEvent(other, eg));
    CALL("record, NULL event", cuGreenCtxRecordEvent(h, NULL));
    CALL("record, NULL green context", cuGreenCtxRecordEvent(NULL, ep));
    CALL("cuCtxRecordEvent on its context, an event of the primary", cuCtxRecordEvent(gc, ep));
    CALL("cuCtxRecordEvent on the primary, an event of its context", cuCtxRecordEvent(primary, eg));
    CALL("wait on an event of the primary", cuGreenCtxWaitEvent(h, ep));
    CALL("wait on an event of a created context", cuGreenCtxWaitEvent(h, ec));
    CALL("wait, NULL event", cuGreenCtxWaitEvent(h, NULL));
    CALL("wait, NULL green context", cuGreenCtxWaitEvent(NULL, ep));
    CALL("synchronize the stream", cuStreamSynchronize(s));
    float ms = -1;
    if (CALL("elapsed between the two", cuEventElapsedTime(&ms, ep, eg)) == CUDA_SUCCESS) SAY("elapsed >= 0: %s", yes(ms >= 0));
    MUST(cuStreamDestroy(s));
    MUST(cuGreenCtxDestroy(h));
    CALL("record after the green context's destroy", cuGreenCtxRecordEvent(h, ep));
    CALL("query the event of its context after", cuEventQuery(eg));
    CALL("destroy the event of its context after", cuEventDestroy(eg));
    MUST(cuGreenCtxDestroy(other));
}

static void ids(void) {
    CUcontext primary;
    init_primary(0, &primary);
    CUgreenCtx a = make_green(1, 8), b = make_green(2, 8);
    unsigned long long ia = 0, ib = 0, in = 0, ca = 0, cp = 0;
    CALL("cuGreenCtxGetId a", cuGreenCtxGetId(a, &ia));
    CALL("cuGreenCtxGetId b", cuGreenCtxGetId(b, &ib));
    SAY("they differ: %s, neither 0: %s", yes(ia != ib), yes(ia && ib));
    CALL("cuGreenCtxGetId, NULL out", cuGreenCtxGetId(a, NULL));
    CALL("cuGreenCtxGetId NULL, the primary current", cuGreenCtxGetId(NULL, &in));
    CUcontext gc;
    MUST(cuCtxFromGreenCtx(&gc, a));
    MUST(cuCtxPushCurrent(gc));
    in = 0;
    CALL("cuGreenCtxGetId NULL, a's context current", cuGreenCtxGetId(NULL, &in));
    SAY("a's id: %s", yes(in == ia));
    CALL("cuCtxGetId of a's context", cuCtxGetId(gc, &ca));
    MUST(cuCtxGetId(primary, &cp));
    SAY("a's context's id is a's: %s, the primary's: %s", yes(ca == ia), yes(ca == cp));
    MUST(cuCtxPopCurrent(NULL));
    MUST(cuGreenCtxDestroy(a));
    CUgreenCtx c = make_green(1, 8);
    unsigned long long ic = 0;
    MUST(cuGreenCtxGetId(c, &ic));
    SAY("a later one's id is new: %s", yes(ic != ia && ic != ib));
    MUST(cuGreenCtxDestroy(b));
    MUST(cuGreenCtxDestroy(c));
}

static void destroy(void) {
    CUcontext primary;
    init_primary(0, &primary);
    CALL("destroy NULL", cuGreenCtxDestroy(NULL));
    CUgreenCtx h = make_green(1, 8);
    CUcontext gc;
    MUST(cuCtxFromGreenCtx(&gc, h));
    MUST(cuCtxPushCurrent(gc));
    CUdeviceptr p;
    MUST(cuMemAlloc(&p, 4096));
    MUST(cuCtxPopCurrent(NULL));
    CALL("destroy while not current", cuGreenCtxDestroy(h));
    CUdevResource r;
    CUcontext c2;
    CUstream s;
    unsigned long long id;
    CALL("cuCtxFromGreenCtx after", cuCtxFromGreenCtx(&c2, h));
    CALL("cuGreenCtxGetDevResource after", cuGreenCtxGetDevResource(h, &r, CU_DEV_RESOURCE_TYPE_SM));
    CALL("cuGreenCtxStreamCreate after", cuGreenCtxStreamCreate(&s, h, CU_STREAM_NON_BLOCKING, 0));
    CALL("cuGreenCtxGetId after", cuGreenCtxGetId(h, &id));
    CALL("destroy twice", cuGreenCtxDestroy(h));
    CALL("cuCtxGetDevResource of its context after", cuCtxGetDevResource(gc, &r, CU_DEV_RESOURCE_TYPE_SM));
    CALL("cuCtxPushCurrent of its context after", cuCtxPushCurrent(gc));
    CUdeviceptr base = 0;
    size_t size = 0;
    CALL("its memory's range after", cuMemGetAddressRange(&base, &size, p));
    CALL("cuMemFree of its memory after", cuMemFree(p));

    /* Destroyed while current: the thread's current context after. */
    h = make_green(1, 8);
    MUST(cuCtxFromGreenCtx(&gc, h));
    MUST(cuCtxPushCurrent(gc));
    CALL("destroy while current", cuGreenCtxDestroy(h));
    CUcontext cur = (CUcontext)1;
    CALL("cuCtxGetCurrent after", cuCtxGetCurrent(&cur));
    SAY("the destroyed one's context: %s, the primary: %s, NULL: %s", yes(cur == gc), yes(cur == primary), yes(cur == NULL));
    CALL("cuMemAlloc after", cuMemAlloc(&p, 4096));
}

/* A context's handle passed as a green context's: last, one call a section, in case the
 * driver reads through it. */
static CUcontext bad_primary(void) {
    CUcontext primary;
    init_primary(0, &primary);
    return primary;
}
static void bad_from(void) {
    CUcontext c;
    CALL("cuCtxFromGreenCtx, a context as green context", cuCtxFromGreenCtx(&c, (CUgreenCtx)bad_primary()));
}
static void bad_stream(void) {
    CUstream s;
    CALL("cuGreenCtxStreamCreate, a context as green context", cuGreenCtxStreamCreate(&s, (CUgreenCtx)bad_primary(), CU_STREAM_NON_BLOCKING, 0));
}
static void bad_id(void) {
    unsigned long long id;
    CALL("cuGreenCtxGetId, a context as green context", cuGreenCtxGetId((CUgreenCtx)bad_primary(), &id));
}
static void bad_destroy(void) {
    CALL("cuGreenCtxDestroy, a context as green context", cuGreenCtxDestroy((CUgreenCtx)bad_primary()));
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    section("device-resource", device_resource);
    section("split", split);
    section("descriptors", descriptors);
    section("create", create);
    section("streams", streams);
    section("events", events);
    section("ids", ids);
    section("destroy", destroy);
    section("bad-from", bad_from);
    section("bad-stream-create", bad_stream);
    section("bad-id", bad_id);
    section("bad-destroy", bad_destroy);
    return 0;
}
