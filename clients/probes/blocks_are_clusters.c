/* `.blocksareclusters` (PTX ISA 9.0): a kernel whose launch grid counts clusters of its
 * `.reqnctapercluster` blocks. For clusters of 1, 2, 4 and 2x2 blocks, with and without the
 * directive, launched by cuLaunchKernel and by cuLaunchKernelEx (no cluster attribute, the
 * kernel's shape, another shape): each launch's result, how many blocks ran and what each
 * saw of %nctaid, %ctaid, %nclusterid, %clusterid, %cluster_nctarank, %cluster_ctarank
 * and %cluster_nctaid.x; and the directive under PTX ISA 8.0 (refused by ptxas).
 * First asked by an exploration whose record is runs/2026-12-03-h200-session15/explore/
 * blocksareclusters*.txt. No kernel waits on anything. */
#include "probe.h"

#define SLOTS 4096
#define WORDS 11

static const char *ptx_fmt =
    ".version %s\n.target sm_90\n.address_size 64\n"
    ".visible .entry k(.param .u64 out) .reqntid 32 .reqnctapercluster %s %s\n{\n"
    "  .reg .b32 %%r<20>;\n  .reg .b64 %%rd<6>;\n  .reg .pred %%p<2>;\n"
    "  mov.u32 %%r1, %%tid.x;\n  setp.ne.u32 %%p1, %%r1, 0;\n  @%%p1 bra DONE;\n"
    "  ld.param.u64 %%rd1, [out];\n"
    "  atom.global.add.u32 %%r2, [%%rd1], 1;\n"
    "  min.u32 %%r2, %%r2, 4094;\n"
    "  mul.wide.u32 %%rd2, %%r2, 44;\n  add.u64 %%rd3, %%rd1, %%rd2;\n  add.u64 %%rd3, %%rd3, 44;\n"
    "  mov.u32 %%r3, %%nctaid.x;\n  st.global.u32 [%%rd3], %%r3;\n"
    "  mov.u32 %%r4, %%nctaid.y;\n  st.global.u32 [%%rd3+4], %%r4;\n"
    "  mov.u32 %%r5, %%ctaid.x;\n  st.global.u32 [%%rd3+8], %%r5;\n"
    "  mov.u32 %%r6, %%ctaid.y;\n  st.global.u32 [%%rd3+12], %%r6;\n"
    "  mov.u32 %%r7, %%nclusterid.x;\n  st.global.u32 [%%rd3+16], %%r7;\n"
    "  mov.u32 %%r8, %%nclusterid.y;\n  st.global.u32 [%%rd3+20], %%r8;\n"
    "  mov.u32 %%r9, %%clusterid.x;\n  st.global.u32 [%%rd3+24], %%r9;\n"
    "  mov.u32 %%r10, %%clusterid.y;\n  st.global.u32 [%%rd3+28], %%r10;\n"
    "  mov.u32 %%r11, %%cluster_nctarank;\n  st.global.u32 [%%rd3+32], %%r11;\n"
    "  mov.u32 %%r12, %%cluster_ctarank;\n  st.global.u32 [%%rd3+36], %%r12;\n"
    "  mov.u32 %%r13, %%cluster_nctaid.x;\n  st.global.u32 [%%rd3+40], %%r13;\n"
    "DONE:\n  ret;\n}\n";


/* Blocks in (ctaid.y, ctaid.x) order, so that two drivers' lines compare. */
static int by_block(const void *a, const void *b) {
    const unsigned *x = a, *y = b;
    unsigned kx = x[3] * 65536 + x[2], ky = y[3] * 65536 + y[2];
    return (kx > ky) - (kx < ky);
}

/* One launch: its result, then the blocks that ran, summarised. */
static void launch(CUfunction f, CUdeviceptr out, unsigned gx, unsigned gy, int how, unsigned cx) {
    cuMemsetD8(out, 0, (SLOTS + 1) * WORDS * 4);
    void *args[] = {&out};
    CUresult r;
    if (how == 0) {
        r = cuLaunchKernel(f, gx, gy, 1, 32, 1, 1, 0, 0, args, NULL);
        printf("  cuLaunchKernel grid (%u,%u): %s", gx, gy, rname(r));
    } else {
        CUlaunchConfig c;
        memset(&c, 0, sizeof c);
        c.gridDimX = gx, c.gridDimY = gy, c.gridDimZ = 1, c.blockDimX = 32, c.blockDimY = 1, c.blockDimZ = 1;
        CUlaunchAttribute a;
        memset(&a, 0, sizeof a);
        a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        a.value.clusterDim.x = cx, a.value.clusterDim.y = 1, a.value.clusterDim.z = 1;
        c.attrs = &a;
        c.numAttrs = how == 2;
        r = cuLaunchKernelEx(&c, f, args, NULL);
        printf("  cuLaunchKernelEx grid (%u,%u)%s: %s", gx, gy, how == 2 ? " cluster attribute" : "", rname(r));
        if (how == 2) printf(" (cluster x %u)", cx);
    }
    CUresult s = cuCtxSynchronize();
    printf(", sync %s", rname(s));
    if (r || s) {
        printf("\n");
        return;
    }
    static unsigned buf[(SLOTS + 1) * WORDS];
    cuMemcpyDtoH(buf, out, sizeof buf);
    printf(", blocks %u\n", buf[0]);
    unsigned ran = buf[0] < SLOTS ? buf[0] : SLOTS;
    qsort(buf + WORDS, ran, WORDS * 4, by_block);
    for (unsigned i = 0; i < ran && i < 40; i++) {
        unsigned *w = buf + WORDS + i * WORDS;
        printf("    nctaid (%u,%u) ctaid (%u,%u) nclusterid (%u,%u) clusterid (%u,%u) "
               "cluster_nctarank %u cluster_ctarank %u cluster_nctaid.x %u\n",
               w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9], w[10]);
    }
}

static const char *shapes[] = {"1", "2", "4", "2, 2"};
static const unsigned cluster_x[] = {1, 2, 4, 2};

/* One kernel of shape `s`, with the directive or not, under `.version ver`. */
static void kernel_of(int s, int bac, const char *ver) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUdeviceptr out;
    MUST(cuMemAlloc(&out, (SLOTS + 1) * WORDS * 4));
    char ptx[4096], log[2048] = {0};
    snprintf(ptx, sizeof ptx, ptx_fmt, ver, shapes[s], bac ? ".blocksareclusters" : "");
    CUjit_option o[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *v[] = {log, (void *)(size_t)sizeof log};
    CUmodule m;
    CUresult r = CALL("load", cuModuleLoadDataEx(&m, ptx, 2, o, v));
    /* The log's wording is each JIT's own; whether it names the version needed is not. */
    if (log[0]) SAY("log names .version 9.0: %s", strstr(log, ".version 9.0") ? "yes" : "no");
    if (r) return;
    CUfunction f;
    if (CALL("function", cuModuleGetFunction(&f, m, "k"))) return;
    unsigned cx = cluster_x[s];
    launch(f, out, 3, 1, 0, cx);
    launch(f, out, 4, 2, 0, cx);
    launch(f, out, 4, 1, 1, cx);
    launch(f, out, 4, 2, 2, cx);
    launch(f, out, 8, 1, 2, cx == 1 ? 2 : 1);
}

#define SHAPE(s, bac, ver, label) \
    static void label(void) { kernel_of(s, bac, ver); }
SHAPE(0, 0, "9.0", one)
SHAPE(0, 1, "9.0", one_bac)
SHAPE(1, 0, "9.0", two)
SHAPE(1, 1, "9.0", two_bac)
SHAPE(2, 0, "9.0", four)
SHAPE(2, 1, "9.0", four_bac)
SHAPE(3, 0, "9.0", two_by_two)
SHAPE(3, 1, "9.0", two_by_two_bac)
SHAPE(1, 1, "8.0", two_bac_ptx80)

int main(void) {
    section("clusters-of-1", one);
    section("clusters-of-1-blocksareclusters", one_bac);
    section("clusters-of-2", two);
    section("clusters-of-2-blocksareclusters", two_bac);
    section("clusters-of-4", four);
    section("clusters-of-4-blocksareclusters", four_bac);
    section("clusters-of-2x2", two_by_two);
    section("clusters-of-2x2-blocksareclusters", two_by_two_bac);
    section("blocksareclusters-under-ptx-8.0", two_bac_ptx80);
    return 0;
}
