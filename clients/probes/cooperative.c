/* Cooperative launches: the device's attributes, the occupancy limit a cooperative grid
 * must fit (cuLaunchCooperativeKernel and cuLaunchKernelEx's cooperative attribute), what
 * the kernel sees of its grid workspace (%envreg1:%envreg2, where cooperative groups keep
 * the grid barrier), a grid-wide barrier built as nvcc 13.0 builds cooperative groups'
 * grid sync, and what a grid sync does in an ordinary launch.
 *
 * Every wait in the kernels is bounded by clock64 (about a second): nothing hangs a real
 * GPU. The kernels are PTX text: no nvcc needed. */
#include "probe.h"

/* About a second at the H200's clock (and the mock's clock64, 2 per ns). */
#define TIMEOUT_CYCLES 2000000000ull

static const char *ptx =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    /* workspace(out): thread 0 of block 0 writes whether %envreg1:%envreg2 is zero. */
    ".visible .entry workspace(.param .u64 out)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<6>;\n"
    "  .reg .b64 %rd<6>;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  mov.u32 %r2, %ctaid.x;\n"
    "  or.b32 %r3, %r1, %r2;\n"
    "  setp.ne.u32 %p1, %r3, 0;\n"
    "  @%p1 bra DONE;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  mov.u32 %r4, %envreg1;\n"
    "  mov.u32 %r5, %envreg2;\n"
    "  cvt.u64.u32 %rd2, %r4;\n"
    "  cvt.u64.u32 %rd3, %r5;\n"
    "  bfi.b64 %rd4, %rd2, %rd3, 32, 32;\n"
    "  setp.ne.u64 %p1, %rd4, 0;\n"
    "  selp.u32 %r4, 1, 0, %p1;\n"
    "  st.global.u32 [%rd1], %r4;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n"
    /* rounds(v, wrong, n, cycles): as cooperative groups' grid sync (nvcc 13.0): the
     * workspace from %envreg1:%envreg2 (a trap when it is zero), bar.sync, thread 0 of
     * each block adds to the barrier word at workspace+4 (block 0 adds 0x80000001 - the
     * number of blocks, the others 1) and spins until its top bit flips, bar.sync. Each
     * round, thread 0 of each block reads its right neighbour's value, syncs the grid,
     * writes its own as that plus one, syncs again; a read of the wrong round counts in
     * `wrong`, a spin past `cycles` in wrong too (and stops waiting). */
    ".visible .entry rounds(.param .u64 v, .param .u64 wrong, .param .u32 n, .param .u64 cycles)\n"
    "{\n"
    "  .reg .pred %p<8>;\n"
    "  .reg .b32 %r<30>;\n"
    "  .reg .b64 %rd<20>;\n"
    "  ld.param.u64 %rd1, [v];\n"
    "  ld.param.u64 %rd2, [wrong];\n"
    "  ld.param.u32 %r1, [n];\n"
    "  ld.param.u64 %rd3, [cycles];\n"
    "  mov.u32 %r2, %envreg2;\n"
    "  mov.u32 %r3, %envreg1;\n"
    "  cvt.u64.u32 %rd4, %r2;\n"
    "  cvt.u64.u32 %rd5, %r3;\n"
    "  bfi.b64 %rd6, %rd5, %rd4, 32, 32;\n"
    "  setp.ne.s64 %p1, %rd6, 0;\n"
    "  @%p1 bra HAVE_WS;\n"
    "  trap;\n"
    "HAVE_WS:\n"
    "  add.s64 %rd7, %rd6, 4;\n"
    "  mov.u32 %r4, %tid.x;\n"
    "  mov.u32 %r5, %ctaid.x;\n"
    "  mov.u32 %r6, %nctaid.x;\n"
    "  setp.eq.u32 %p2, %r4, 0;\n"
    /* what block 0 adds; the others add 1 */
    "  setp.eq.u32 %p3, %r5, 0;\n"
    "  mov.u32 %r7, -2147483647;\n"
    "  sub.s32 %r8, %r7, %r6;\n"
    "  selp.b32 %r9, %r8, 1, %p3;\n"
    /* neighbour's address */
    "  add.u32 %r10, %r5, 1;\n"
    "  rem.u32 %r10, %r10, %r6;\n"
    "  mul.wide.u32 %rd8, %r10, 4;\n"
    "  add.s64 %rd9, %rd1, %rd8;\n"
    "  mul.wide.u32 %rd10, %r5, 4;\n"
    "  add.s64 %rd11, %rd1, %rd10;\n"
    "  mov.u32 %r11, 0;\n"
    "ROUND:\n"
    "  setp.ge.u32 %p4, %r11, %r1;\n"
    "  @%p4 bra END;\n"
    "  mov.u32 %r12, 0;\n"
    "  @!%p2 bra SYNC1;\n"
    "  ld.global.u32 %r12, [%rd9];\n"
    "  setp.ne.u32 %p5, %r12, %r11;\n"
    "  @%p5 atom.global.add.u32 %r13, [%rd2], 1;\n"
    "SYNC1:\n"
    "  bar.sync 0;\n"
    "  @!%p2 bra AFTER1;\n"
    "  atom.add.release.gpu.u32 %r14, [%rd7], %r9;\n"
    "  mov.u64 %rd12, %clock64;\n"
    "SPIN1:\n"
    "  ld.acquire.gpu.u32 %r15, [%rd7];\n"
    "  xor.b32 %r16, %r15, %r14;\n"
    "  setp.lt.s32 %p6, %r16, 0;\n"
    "  @%p6 bra AFTER1;\n"
    "  mov.u64 %rd13, %clock64;\n"
    "  sub.s64 %rd14, %rd13, %rd12;\n"
    "  setp.lt.u64 %p7, %rd14, %rd3;\n"
    "  @%p7 bra SPIN1;\n"
    "  atom.global.add.u32 %r13, [%rd2], 1000;\n"
    "AFTER1:\n"
    "  bar.sync 0;\n"
    "  @%p2 add.u32 %r17, %r12, 1;\n"
    "  @%p2 st.global.u32 [%rd11], %r17;\n"
    "  bar.sync 0;\n"
    "  @!%p2 bra AFTER2;\n"
    "  atom.add.release.gpu.u32 %r14, [%rd7], %r9;\n"
    "  mov.u64 %rd12, %clock64;\n"
    "SPIN2:\n"
    "  ld.acquire.gpu.u32 %r15, [%rd7];\n"
    "  xor.b32 %r16, %r15, %r14;\n"
    "  setp.lt.s32 %p6, %r16, 0;\n"
    "  @%p6 bra AFTER2;\n"
    "  mov.u64 %rd13, %clock64;\n"
    "  sub.s64 %rd14, %rd13, %rd12;\n"
    "  setp.lt.u64 %p7, %rd14, %rd3;\n"
    "  @%p7 bra SPIN2;\n"
    "  atom.global.add.u32 %r13, [%rd2], 1000;\n"
    "AFTER2:\n"
    "  bar.sync 0;\n"
    "  add.u32 %r11, %r11, 1;\n"
    "  bra ROUND;\n"
    "END:\n"
    "  ret;\n"
    "}\n";

static CUcontext ctx;
static CUdevice dev;
static CUfunction wsk, roundsk;
static CUdeviceptr dv, dwrong, dout;
static int sms, per_sm;

static void setup(void) {
    init_primary(0, &ctx);
    MUST(cuDeviceGet(&dev, 0));
    CUmodule m;
    MUST(cuModuleLoadData(&m, ptx));
    MUST(cuModuleGetFunction(&wsk, m, "workspace"));
    MUST(cuModuleGetFunction(&roundsk, m, "rounds"));
    MUST(cuMemAlloc(&dv, 4096 * 4));
    MUST(cuMemAlloc(&dwrong, 4));
    MUST(cuMemAlloc(&dout, 4));
    MUST(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
}

static void attributes(void) {
    setup();
    int a = -1, b = -1;
    CALL("cuDeviceGetAttribute(COOPERATIVE_LAUNCH)",
         cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, dev));
    SAY("cooperative launch = %d", a);
    CALL("cuDeviceGetAttribute(COOPERATIVE_MULTI_DEVICE_LAUNCH)",
         cuDeviceGetAttribute(&b, CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH, dev));
    SAY("cooperative multi-device launch = %d", b);
    SAY("SMs = %d", sms);
}

/* The largest grid that fits, one block more, and the limit with more shared memory. */
static void limits(void) {
    setup();
    int threads[] = {32, 256, 1024};
    for (int i = 0; i < 3; i++) {
        per_sm = -1;
        CALL("cuOccupancyMaxActiveBlocksPerMultiprocessor",
             cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, wsk, threads[i], 0));
        SAY("%d threads: %d blocks per SM", threads[i], per_sm);
        void *args[] = {&dout};
        unsigned fit = (unsigned)(per_sm * sms);
        printf("cooperative %u blocks of %d: ", fit, threads[i]);
        CALL("", cuLaunchCooperativeKernel(wsk, fit, 1, 1, threads[i], 1, 1, 0, 0, args));
        printf("cooperative %u blocks of %d: ", fit + 1, threads[i]);
        CALL("", cuLaunchCooperativeKernel(wsk, fit + 1, 1, 1, threads[i], 1, 1, 0, 0, args));
        /* The same grid as 2D: the limit counts blocks, not the x dimension. */
        printf("cooperative %u x 2 blocks of %d: ", (fit + 2) / 2, threads[i]);
        CALL("", cuLaunchCooperativeKernel(wsk, (fit + 2) / 2, 2, 1, threads[i], 1, 1, 0, 0, args));
        CALL("cuCtxSynchronize", cuCtxSynchronize());
    }
    /* Dynamic shared memory lowers what fits. */
    per_sm = -1;
    CALL("cuOccupancyMaxActiveBlocksPerMultiprocessor(256 threads, 40 KiB shared)",
         cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, wsk, 256, 40 << 10));
    SAY("%d blocks per SM", per_sm);
    void *args[] = {&dout};
    printf("cooperative %d blocks with 40 KiB: ", per_sm * sms);
    CALL("", cuLaunchCooperativeKernel(wsk, per_sm * sms, 1, 1, 256, 1, 1, 40 << 10, 0, args));
    printf("cooperative %d blocks with 40 KiB: ", per_sm * sms + 1);
    CALL("", cuLaunchCooperativeKernel(wsk, per_sm * sms + 1, 1, 1, 256, 1, 1, 40 << 10, 0, args));
    printf("cooperative 0 blocks: ");
    CALL("", cuLaunchCooperativeKernel(wsk, 0, 1, 1, 256, 1, 1, 0, 0, args));
    CALL("cuCtxSynchronize", cuCtxSynchronize());
}

/* What %envreg1:%envreg2 holds in an ordinary and in a cooperative launch. */
static void workspace(void) {
    setup();
    void *args[] = {&dout};
    unsigned v = 7;
    MUST(cuMemsetD32(dout, 7, 1));
    CALL("cuLaunchKernel(workspace)", cuLaunchKernel(wsk, 4, 1, 1, 64, 1, 1, 0, 0, args, NULL));
    CALL("cuCtxSynchronize", cuCtxSynchronize());
    MUST(cuMemcpyDtoH(&v, dout, 4));
    SAY("ordinary launch: workspace %s", v == 0 ? "zero" : v == 1 ? "non-zero" : "not written");
    MUST(cuMemsetD32(dout, 7, 1));
    CALL("cuLaunchCooperativeKernel(workspace)",
         cuLaunchCooperativeKernel(wsk, 4, 1, 1, 64, 1, 1, 0, 0, args));
    CALL("cuCtxSynchronize", cuCtxSynchronize());
    MUST(cuMemcpyDtoH(&v, dout, 4));
    SAY("cooperative launch: workspace %s", v == 0 ? "zero" : v == 1 ? "non-zero" : "not written");
}

static void run_rounds(const char *how, unsigned blocks, int cooperative_attr) {
    unsigned n = 10;
    unsigned long long cycles = TIMEOUT_CYCLES;
    void *args[] = {&dv, &dwrong, &n, &cycles};
    MUST(cuMemsetD32(dv, 0, blocks));
    MUST(cuMemsetD32(dwrong, 0, 1));
    CUresult r;
    if (cooperative_attr) {
        CUlaunchAttribute attr;
        memset(&attr, 0, sizeof attr);
        attr.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        attr.value.cooperative = 1;
        CUlaunchConfig c;
        memset(&c, 0, sizeof c);
        c.gridDimX = blocks;
        c.gridDimY = c.gridDimZ = 1;
        c.blockDimX = 128;
        c.blockDimY = c.blockDimZ = 1;
        c.attrs = &attr;
        c.numAttrs = 1;
        r = cuLaunchKernelEx(&c, roundsk, args, NULL);
    } else {
        r = cuLaunchCooperativeKernel(roundsk, blocks, 1, 1, 128, 1, 1, 0, 0, args);
    }
    printf("%s %u blocks = %s\n", how, blocks, rname(r));
    CALL("cuCtxSynchronize", cuCtxSynchronize());
    unsigned wrong = 99, v0 = 0, vlast = 0;
    MUST(cuMemcpyDtoH(&wrong, dwrong, 4));
    MUST(cuMemcpyDtoH(&v0, dv, 4));
    MUST(cuMemcpyDtoH(&vlast, dv + 4 * (blocks - 1), 4));
    SAY("wrong reads %u, first block at round %u, last at round %u", wrong, v0, vlast);
}

/* A grid barrier as cooperative groups build it, over a few blocks and a full device. */
static void grid_sync(void) {
    setup();
    int fit = 0;
    MUST(cuOccupancyMaxActiveBlocksPerMultiprocessor(&fit, roundsk, 128, 0));
    run_rounds("cuLaunchCooperativeKernel", 3, 0);
    run_rounds("cuLaunchCooperativeKernel", 2 * sms, 0);
    run_rounds("cuLaunchKernelEx(COOPERATIVE)", 2 * sms, 1);
    unsigned full = (unsigned)(fit * sms) > 4096 ? 4096 : (unsigned)(fit * sms);
    run_rounds("cuLaunchCooperativeKernel (every block that fits)", full, 0);
}

/* The grid barrier in an ordinary launch: its workspace is zero, and the kernel traps. */
static void grid_sync_ordinary(void) {
    setup();
    unsigned n = 1;
    unsigned long long cycles = TIMEOUT_CYCLES;
    void *args[] = {&dv, &dwrong, &n, &cycles};
    CALL("cuLaunchKernel(rounds)", cuLaunchKernel(roundsk, 4, 1, 1, 128, 1, 1, 0, 0, args, NULL));
    CALL("cuCtxSynchronize", cuCtxSynchronize());
    CALL("cuCtxSynchronize again", cuCtxSynchronize());
}

int main(void) {
    section("attributes", attributes);
    section("limits", limits);
    section("workspace", workspace);
    section("grid-sync", grid_sync);
    section("grid-sync-ordinary-launch", grid_sync_ordinary);
    return 0;
}
