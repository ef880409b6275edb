/* Thread-block clusters: the device's attribute, the cluster function attributes (of an
 * ordinary kernel, of one compiled with `__cluster_dims__`, which nvcc writes as
 * `.explicitcluster .reqnctapercluster`, of one with `.maxclusterrank`), what
 * cuFuncSetAttribute lets a program set, the launch errors of misconfigured clusters
 * (the grid not a multiple of the cluster, more than 8 blocks portable or 16
 * non-portable, a shape other than the compiled one, none where one is required), the
 * occupancy calculator's cluster answers, the limit of a cooperative launch in clusters
 * (section cooperative-occupancy), and what a kernel sees: its cluster registers and its
 * neighbours' shared memory through mapa.
 *
 * No kernel waits for anything but a cluster barrier every block of its cluster
 * reaches: nothing can hang a real GPU. The kernels are PTX text: no nvcc needed. */
#include "probe.h"

static const char *ptx =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    /* plain(out): nothing to do with clusters. */
    ".visible .entry plain(.param .u64 out)\n"
    "{\n"
    "  ret;\n"
    "}\n"
    /* fixed(out): compiled for clusters of 2 (as nvcc writes __cluster_dims__(2,1,1)). */
    ".visible .entry fixed(.param .u64 out)\n"
    ".explicitcluster\n"
    ".reqnctapercluster 2, 1, 1\n"
    "{\n"
    "  ret;\n"
    "}\n"
    /* explicit_only(out): must be launched with a cluster shape, any. */
    ".visible .entry explicit_only(.param .u64 out)\n"
    ".explicitcluster\n"
    "{\n"
    "  ret;\n"
    "}\n"
    /* small(out): clusters of at most 4 blocks. */
    ".visible .entry small(.param .u64 out)\n"
    ".maxclusterrank 4\n"
    "{\n"
    "  ret;\n"
    "}\n"
    /* ring(out): thread t of each block writes its rank*1000+t into its shared array;
     * after a cluster barrier it reads element t of the next rank's array (mapa), adds
     * one to the previous rank's counter word (atom.shared::cluster); after a second
     * barrier it writes, per block, 8 words: the value read, its counter (the number of
     * threads of the next block), %cluster_ctarank, %cluster_nctarank,
     * %cluster_ctaid.x, %clusterid.x, %nclusterid.x, %is_explicit_cluster. */
    ".visible .entry ring(.param .u64 out)\n"
    "{\n"
    "  .reg .pred %p<3>;\n"
    "  .reg .b32 %r<30>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  .shared .align 4 .b32 buf[128];\n"
    "  .shared .align 4 .b32 hits;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  mov.u32 %r2, %cluster_ctarank;\n"
    "  mov.u32 %r3, %cluster_nctarank;\n"
    "  mul.lo.u32 %r4, %r2, 1000;\n"
    "  add.u32 %r4, %r4, %r1;\n"
    "  mov.u32 %r5, buf;\n"
    "  shl.b32 %r6, %r1, 2;\n"
    "  add.u32 %r7, %r5, %r6;\n"
    "  st.shared.u32 [%r7], %r4;\n"
    "  setp.eq.u32 %p1, %r1, 0;\n"
    "  @%p1 st.shared.u32 [hits], 0;\n"
    "  barrier.cluster.arrive.release.aligned;\n"
    "  barrier.cluster.wait.acquire.aligned;\n"
    "  add.u32 %r8, %r2, 1;\n"
    "  rem.u32 %r8, %r8, %r3;\n"
    "  mapa.shared::cluster.u32 %r9, %r7, %r8;\n"
    "  ld.shared::cluster.u32 %r10, [%r9];\n"
    "  add.u32 %r11, %r2, %r3;\n"
    "  sub.u32 %r11, %r11, 1;\n"
    "  rem.u32 %r11, %r11, %r3;\n"
    "  mov.u32 %r12, hits;\n"
    "  mapa.shared::cluster.u32 %r13, %r12, %r11;\n"
    "  atom.shared::cluster.add.u32 %r14, [%r13], 1;\n"
    "  barrier.cluster.arrive.release.aligned;\n"
    "  barrier.cluster.wait.acquire.aligned;\n"
    "  @!%p1 bra DONE;\n"
    "  ld.shared.u32 %r15, [hits];\n"
    "  mov.u32 %r16, %ctaid.x;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  mul.wide.u32 %rd2, %r16, 32;\n"
    "  add.u64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r10;\n"
    "  st.global.u32 [%rd3+4], %r15;\n"
    "  st.global.u32 [%rd3+8], %r2;\n"
    "  st.global.u32 [%rd3+12], %r3;\n"
    "  mov.u32 %r17, %cluster_ctaid.x;\n"
    "  st.global.u32 [%rd3+16], %r17;\n"
    "  mov.u32 %r18, %clusterid.x;\n"
    "  st.global.u32 [%rd3+20], %r18;\n"
    "  mov.u32 %r19, %nclusterid.x;\n"
    "  st.global.u32 [%rd3+24], %r19;\n"
    "  mov.pred %p2, %is_explicit_cluster;\n"
    "  selp.u32 %r20, 1, 0, %p2;\n"
    "  st.global.u32 [%rd3+28], %r20;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n";

static CUcontext ctx;
static CUdevice dev;
static CUfunction plaink, fixedk, explicitk, smallk, ringk;
static CUdeviceptr dout;

static void setup(void) {
    init_primary(0, &ctx);
    MUST(cuDeviceGet(&dev, 0));
    CUmodule m;
    MUST(cuModuleLoadData(&m, ptx));
    MUST(cuModuleGetFunction(&plaink, m, "plain"));
    MUST(cuModuleGetFunction(&fixedk, m, "fixed"));
    MUST(cuModuleGetFunction(&explicitk, m, "explicit_only"));
    MUST(cuModuleGetFunction(&smallk, m, "small"));
    MUST(cuModuleGetFunction(&ringk, m, "ring"));
    MUST(cuMemAlloc(&dout, 64 * 32));
}

/* cuLaunchKernelEx of `f` with `grid` blocks of `threads`, in clusters of `cx` x `cy`
 * (no cluster attribute when cx is 0). */
static CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned threads, unsigned cx,
                       unsigned cy) {
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = cx;
    attr.value.clusterDim.y = cy;
    attr.value.clusterDim.z = 1;
    CUlaunchConfig c;
    memset(&c, 0, sizeof c);
    c.gridDimX = gx;
    c.gridDimY = gy;
    c.gridDimZ = 1;
    c.blockDimX = threads;
    c.blockDimY = c.blockDimZ = 1;
    c.attrs = cx ? &attr : NULL;
    c.numAttrs = cx ? 1 : 0;
    void *args[] = {&dout};
    return cuLaunchKernelEx(&c, f, args, NULL);
}

static void show_attributes(const char *name, CUfunction f) {
    static const struct {
        CUfunction_attribute a;
        const char *n;
    } attrs[] = {
        {CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET, "CLUSTER_SIZE_MUST_BE_SET"},
        {CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, "REQUIRED_CLUSTER_WIDTH"},
        {CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT, "REQUIRED_CLUSTER_HEIGHT"},
        {CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, "REQUIRED_CLUSTER_DEPTH"},
        {CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, "NON_PORTABLE_CLUSTER_SIZE_ALLOWED"},
        {CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE,
         "CLUSTER_SCHEDULING_POLICY_PREFERENCE"},
    };
    for (unsigned i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        int v = -7;
        CUresult r = cuFuncGetAttribute(&v, attrs[i].a, f);
        printf("%s %s = %s, %d\n", name, attrs[i].n, rname(r), v);
    }
}

static void attributes(void) {
    setup();
    int a = -1;
    CALL("cuDeviceGetAttribute(CLUSTER_LAUNCH)",
         cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, dev));
    SAY("cluster launch = %d", a);
    show_attributes("plain", plaink);
    show_attributes("fixed", fixedk);
    show_attributes("explicit_only", explicitk);
    show_attributes("small", smallk);
}

static void set_attributes(void) {
    setup();
    CALL("set fixed REQUIRED_CLUSTER_WIDTH 4",
         cuFuncSetAttribute(fixedk, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 4));
    CALL("set plain REQUIRED_CLUSTER_WIDTH 2",
         cuFuncSetAttribute(plaink, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 2));
    CALL("set plain REQUIRED_CLUSTER_HEIGHT 1",
         cuFuncSetAttribute(plaink, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT, 1));
    CALL("set plain REQUIRED_CLUSTER_DEPTH 1",
         cuFuncSetAttribute(plaink, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, 1));
    show_attributes("plain", plaink);
    printf("plain, no cluster attribute, 4 blocks: ");
    CALL("", launch(plaink, 4, 1, 32, 0, 0));
    printf("plain, no cluster attribute, 3 blocks: ");
    CALL("", launch(plaink, 3, 1, 32, 0, 0));
    CALL("cuCtxSynchronize", cuCtxSynchronize());
    CALL("set plain NON_PORTABLE_CLUSTER_SIZE_ALLOWED 1",
         cuFuncSetAttribute(plaink, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
    CALL("set plain NON_PORTABLE_CLUSTER_SIZE_ALLOWED 2",
         cuFuncSetAttribute(plaink, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 2));
    CALL("set plain CLUSTER_SCHEDULING_POLICY_PREFERENCE 1",
         cuFuncSetAttribute(plaink, CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, 1));
    CALL("set plain CLUSTER_SCHEDULING_POLICY_PREFERENCE 3",
         cuFuncSetAttribute(plaink, CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE, 3));
    CALL("set plain CLUSTER_SIZE_MUST_BE_SET 1",
         cuFuncSetAttribute(plaink, CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET, 1));
    show_attributes("plain", plaink);
}

static void launch_errors(void) {
    setup();
    static const struct {
        const char *what;
        unsigned gx, gy, cx, cy;
    } cases[] = {
        {"4 blocks in clusters of 2", 4, 1, 2, 1},
        {"3 blocks in clusters of 2", 3, 1, 2, 1},
        {"4x3 blocks in clusters of 2x2", 4, 3, 2, 2},
        {"8 blocks in clusters of 8", 8, 1, 8, 1},
        {"16 blocks in clusters of 16", 16, 1, 16, 1},
        {"4 blocks in clusters of 0", 4, 1, 0, 1},
        {"1 block in a cluster of 1", 1, 1, 1, 1},
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        printf("plain, %s: ", cases[i].what);
        if (cases[i].cx == 0) {
            /* The attribute given with a zero width. */
            CUlaunchAttribute attr;
            memset(&attr, 0, sizeof attr);
            attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
            attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
            CUlaunchConfig c;
            memset(&c, 0, sizeof c);
            c.gridDimX = cases[i].gx;
            c.gridDimY = c.gridDimZ = 1;
            c.blockDimX = 32;
            c.blockDimY = c.blockDimZ = 1;
            c.attrs = &attr;
            c.numAttrs = 1;
            void *args[] = {&dout};
            CALL("", cuLaunchKernelEx(&c, plaink, args, NULL));
        } else {
            CALL("", launch(plaink, cases[i].gx, cases[i].gy, 32, cases[i].cx, cases[i].cy));
        }
    }
    CALL("cuCtxSynchronize", cuCtxSynchronize());
    CALL("set plain NON_PORTABLE_CLUSTER_SIZE_ALLOWED 1",
         cuFuncSetAttribute(plaink, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
    printf("plain non-portable, 16 blocks in clusters of 16: ");
    CALL("", launch(plaink, 16, 1, 32, 16, 1));
    printf("plain non-portable, 32 blocks in clusters of 32: ");
    CALL("", launch(plaink, 32, 1, 32, 32, 1));
    printf("plain non-portable, 32 blocks in clusters of 16 with 1024 threads: ");
    CALL("", launch(plaink, 32, 1, 1024, 16, 1));
    CALL("cuCtxSynchronize", cuCtxSynchronize());
    printf("fixed, cuLaunchKernel of 4 blocks: ");
    void *args[] = {&dout};
    CALL("", cuLaunchKernel(fixedk, 4, 1, 1, 32, 1, 1, 0, 0, args, NULL));
    printf("fixed, cuLaunchKernel of 3 blocks: ");
    CALL("", cuLaunchKernel(fixedk, 3, 1, 1, 32, 1, 1, 0, 0, args, NULL));
    printf("fixed, clusters of 2: ");
    CALL("", launch(fixedk, 4, 1, 32, 2, 1));
    printf("fixed, clusters of 4: ");
    CALL("", launch(fixedk, 4, 1, 32, 4, 1));
    printf("explicit_only, cuLaunchKernel: ");
    CALL("", cuLaunchKernel(explicitk, 4, 1, 1, 32, 1, 1, 0, 0, args, NULL));
    printf("explicit_only, clusters of 4: ");
    CALL("", launch(explicitk, 4, 1, 32, 4, 1));
    {
        /* Cooperative and clustered at once. */
        CUlaunchAttribute attrs[2];
        memset(attrs, 0, sizeof attrs);
        attrs[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attrs[0].value.clusterDim.x = 2;
        attrs[0].value.clusterDim.y = attrs[0].value.clusterDim.z = 1;
        attrs[1].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        attrs[1].value.cooperative = 1;
        CUlaunchConfig c;
        memset(&c, 0, sizeof c);
        c.gridDimX = 4;
        c.gridDimY = c.gridDimZ = 1;
        c.blockDimX = 32;
        c.blockDimY = c.blockDimZ = 1;
        c.attrs = attrs;
        c.numAttrs = 2;
        printf("plain, cooperative, clusters of 2: ");
        CALL("", cuLaunchKernelEx(&c, plaink, args, NULL));
    }
    printf("small, clusters of 4: ");
    CALL("", launch(smallk, 8, 1, 32, 4, 1));
    printf("small, clusters of 8: ");
    CALL("", launch(smallk, 8, 1, 32, 8, 1));
    CALL("cuCtxSynchronize", cuCtxSynchronize());
}

static void occupancy(void) {
    setup();
    static const unsigned threads[] = {32, 256, 1024};
    static const unsigned sizes[] = {1, 2, 4, 8, 16};
    for (unsigned t = 0; t < 3; t++) {
        CUlaunchConfig c;
        memset(&c, 0, sizeof c);
        c.gridDimX = 16;
        c.gridDimY = c.gridDimZ = 1;
        c.blockDimX = threads[t];
        c.blockDimY = c.blockDimZ = 1;
        int n = -7;
        CUresult r = cuOccupancyMaxPotentialClusterSize(&n, plaink, &c);
        printf("cuOccupancyMaxPotentialClusterSize(%u threads) = %s, %d\n", threads[t], rname(r),
               n);
        n = -7;
        r = cuOccupancyMaxActiveClusters(&n, plaink, &c);
        printf("cuOccupancyMaxActiveClusters(%u threads, no cluster) = %s, %d\n", threads[t],
               rname(r), n);
        for (unsigned s = 0; s < 5; s++) {
            CUlaunchAttribute attr;
            memset(&attr, 0, sizeof attr);
            attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
            attr.value.clusterDim.x = sizes[s];
            attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
            c.attrs = &attr;
            c.numAttrs = 1;
            n = -7;
            r = cuOccupancyMaxActiveClusters(&n, plaink, &c);
            printf("cuOccupancyMaxActiveClusters(%u threads, clusters of %u) = %s, %d\n",
                   threads[t], sizes[s], rname(r), n);
            c.attrs = NULL;
            c.numAttrs = 0;
        }
    }
    CUlaunchConfig c;
    memset(&c, 0, sizeof c);
    c.gridDimX = 16;
    c.gridDimY = c.gridDimZ = 1;
    c.blockDimX = 128;
    c.blockDimY = c.blockDimZ = 1;
    int n = -7;
    CUresult r = cuOccupancyMaxPotentialClusterSize(&n, fixedk, &c);
    printf("cuOccupancyMaxPotentialClusterSize(fixed) = %s, %d\n", rname(r), n);
    n = -7;
    r = cuOccupancyMaxActiveClusters(&n, fixedk, &c);
    printf("cuOccupancyMaxActiveClusters(fixed, no cluster) = %s, %d\n", rname(r), n);
    MUST(cuFuncSetAttribute(plaink, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
    n = -7;
    r = cuOccupancyMaxPotentialClusterSize(&n, plaink, &c);
    printf("cuOccupancyMaxPotentialClusterSize(non-portable) = %s, %d\n", rname(r), n);
}

/* cuOccupancyMaxActiveClusters for every cluster size (1-16, non-portable allowed) and
 * several block sizes: the occupancy section's answers fit GPCs of 16/16/16/16/16/16/14/14
 * SMs for clusters of 4 and 8; this says whether the other sizes follow the same rule. */
static void occupancy_sizes(void) {
    setup();
    MUST(cuFuncSetAttribute(plaink, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
    static const unsigned threads[] = {32, 128, 384, 512, 1024};
    for (unsigned t = 0; t < 5; t++) {
        printf("%u threads:", threads[t]);
        for (unsigned size = 1; size <= 16; size++) {
            CUlaunchConfig c;
            memset(&c, 0, sizeof c);
            c.gridDimX = 16 * 15 * 14 * 13 * 11;
            c.gridDimY = c.gridDimZ = 1;
            c.blockDimX = threads[t];
            c.blockDimY = c.blockDimZ = 1;
            CUlaunchAttribute attr;
            memset(&attr, 0, sizeof attr);
            attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
            attr.value.clusterDim.x = size;
            attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
            c.attrs = &attr;
            c.numAttrs = 1;
            int n = -7;
            CUresult r = cuOccupancyMaxActiveClusters(&n, plaink, &c);
            if (r == CUDA_SUCCESS)
                printf(" %d", n);
            else
                printf(" %s", rname(r));
        }
        printf("\n");
    }
}

/* A cooperative cuLaunchKernelEx of `plain` in clusters of `size`: `clusters` of them. */
static CUresult launch_cooperative(unsigned clusters, unsigned size, unsigned threads) {
    CUlaunchAttribute attrs[2];
    memset(attrs, 0, sizeof attrs);
    attrs[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[0].value.clusterDim.x = size;
    attrs[0].value.clusterDim.y = attrs[0].value.clusterDim.z = 1;
    attrs[1].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    attrs[1].value.cooperative = 1;
    CUlaunchConfig c;
    memset(&c, 0, sizeof c);
    c.gridDimX = clusters * size;
    c.gridDimY = c.gridDimZ = 1;
    c.blockDimX = threads;
    c.blockDimY = c.blockDimZ = 1;
    c.attrs = attrs;
    c.numAttrs = 2;
    void *args[] = {&dout};
    return cuLaunchKernelEx(&c, plaink, args, NULL);
}

/* The occupancy limit of cooperative launches with clusters: for each block and cluster
 * size, what cuOccupancyMaxActiveClusters answers (n), and a cooperative launch of n
 * clusters, of n + 1, and of as many clusters as the blocks-per-SM limit of an ordinary
 * cooperative launch allows (blocks per SM times SMs, over the cluster size). The mock
 * refuses more than n clusters (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE). `plain` does
 * nothing: nothing waits. */
static void cooperative_occupancy(void) {
    setup();
    int sms = 0;
    MUST(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    static const unsigned threads[] = {32, 256, 1024};
    static const unsigned sizes[] = {2, 4, 8};
    for (unsigned t = 0; t < 3; t++) {
        int per_sm = 0;
        MUST(cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, plaink, threads[t], 0));
        for (unsigned s = 0; s < 3; s++) {
            CUlaunchAttribute attr;
            memset(&attr, 0, sizeof attr);
            attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
            attr.value.clusterDim.x = sizes[s];
            attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
            CUlaunchConfig c;
            memset(&c, 0, sizeof c);
            c.gridDimX = sizes[s];
            c.gridDimY = c.gridDimZ = 1;
            c.blockDimX = threads[t];
            c.blockDimY = c.blockDimZ = 1;
            c.attrs = &attr;
            c.numAttrs = 1;
            int n = -7;
            CUresult r = cuOccupancyMaxActiveClusters(&n, plaink, &c);
            printf("%u threads, clusters of %u: cuOccupancyMaxActiveClusters = %s, %d\n",
                   threads[t], sizes[s], rname(r), n);
            if (r != CUDA_SUCCESS || n <= 0) continue;
            printf("  cooperative, %d clusters: ", n);
            CALL("", launch_cooperative(n, sizes[s], threads[t]));
            printf("  cooperative, %d clusters: ", n + 1);
            CALL("", launch_cooperative(n + 1, sizes[s], threads[t]));
            unsigned by_blocks = (unsigned)(per_sm * sms) / sizes[s];
            if (by_blocks > (unsigned)n + 1) {
                printf("  cooperative, %u clusters (%d blocks an SM): ", by_blocks, per_sm);
                CALL("", launch_cooperative(by_blocks, sizes[s], threads[t]));
            }
            CALL("  cuCtxSynchronize", cuCtxSynchronize());
        }
    }
}

static void shared_memory(void) {
    setup();
    unsigned out[64 * 8];
    static const struct {
        unsigned blocks, cluster;
    } runs[] = {{8, 2}, {12, 4}, {16, 8}, {2, 0}};
    for (unsigned i = 0; i < 4; i++) {
        MUST(cuMemsetD32(dout, 0xdead, 64 * 8));
        printf("ring, %u blocks of 128 in clusters of %u: ", runs[i].blocks, runs[i].cluster);
        CALL("", launch(ringk, runs[i].blocks, 1, 128, runs[i].cluster, 1));
        CALL("cuCtxSynchronize", cuCtxSynchronize());
        MUST(cuMemcpyDtoH(out, dout, runs[i].blocks * 32));
        for (unsigned b = 0; b < runs[i].blocks; b++) {
            unsigned *o = out + 8 * b;
            SAY("block %u: read %u, hits %u, rank %u of %u, cluster_ctaid %u, clusterid %u of "
                "%u, explicit %u",
                b, o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7]);
        }
    }
}

int main(void) {
    section("attributes", attributes);
    section("set-attributes", set_attributes);
    section("launch-errors", launch_errors);
    section("occupancy", occupancy);
    section("shared-memory", shared_memory);
    section("occupancy-sizes", occupancy_sizes);
    section("cooperative-occupancy", cooperative_occupancy);
    return 0;
}
