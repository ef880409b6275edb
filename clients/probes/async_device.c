/* An asynchronous device: what each synchronising call waits for, and what it does not
 * (the legacy default stream, blocking and non-blocking streams, the per-thread default
 * stream, another thread's cuCtxSynchronize), cuStreamQuery and cuEventQuery while work
 * is pending, and the rules of event timing.
 *
 * The kernel `wait_flag` spins until a flag in mapped page-locked memory is set, bounded
 * by clock64 (about a second), then writes 1 (released) or 2 (timed out) to mapped
 * memory the host reads. Every call that may wait is preceded by a thread of the probe's
 * own that sets the flag after RELEASE_MS: a call that waits for the kernel returns once
 * it is released (the transcript says the kernel was done), one that does not returns at
 * once (the kernel still running). Nothing waits unboundedly on a real GPU. The kernels
 * are PTX text, loaded with cuModuleLoadData: no nvcc needed.
 *
 * Section async-copies-behind-a-kernel (recorded on the H200) says which async
 * copies (pageable sources small and large, to pageable memory, host to host, 2D, 3D,
 * peer) return while their stream's kernel still runs, and whether a pageable source
 * changed right after the call still gave the bytes of the call's time. */
#include "probe.h"
#include <pthread.h>
#include <time.h>

#define RELEASE_MS 300
/* About a second at the H200's clock (and the mock's clock64, 2 per ns). */
#define TIMEOUT_CYCLES 2000000000ull

static const char *ptx =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    ".visible .entry wait_flag(.param .u64 flag, .param .u64 done, .param .u64 cycles)\n"
    "{\n"
    "  .reg .pred %p<3>;\n"
    "  .reg .b32 %r<4>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  ld.param.u64 %rd1, [flag];\n"
    "  ld.param.u64 %rd2, [done];\n"
    "  ld.param.u64 %rd3, [cycles];\n"
    "  mov.u64 %rd4, %clock64;\n"
    "  mov.u32 %r2, 2;\n"
    "WAIT:\n"
    "  ld.volatile.global.u32 %r1, [%rd1];\n"
    "  setp.ne.u32 %p1, %r1, 0;\n"
    "  @%p1 bra RELEASED;\n"
    "  mov.u64 %rd5, %clock64;\n"
    "  sub.s64 %rd6, %rd5, %rd4;\n"
    "  setp.lt.u64 %p2, %rd6, %rd3;\n"
    "  @%p2 bra WAIT;\n"
    "  bra DONE;\n"
    "RELEASED:\n"
    "  mov.u32 %r2, 1;\n"
    "DONE:\n"
    "  st.volatile.global.u32 [%rd2], %r2;\n"
    "  membar.sys;\n"
    "  ret;\n"
    "}\n"
    ".visible .entry add_one(.param .u64 p)\n"
    "{\n"
    "  .reg .b32 %r<3>;\n"
    "  .reg .b64 %rd<2>;\n"
    "  ld.param.u64 %rd1, [p];\n"
    "  ld.global.u32 %r1, [%rd1];\n"
    "  add.u32 %r2, %r1, 1;\n"
    "  st.global.u32 [%rd1], %r2;\n"
    "  ret;\n"
    "}\n";

static CUcontext ctx;
static CUfunction waitk, addk;
static volatile unsigned *flag, *done;
static CUdeviceptr dflag, ddone, dbuf;

static void setup(void) {
    init_primary(0, &ctx);
    CUmodule m;
    MUST(cuModuleLoadData(&m, ptx));
    MUST(cuModuleGetFunction(&waitk, m, "wait_flag"));
    MUST(cuModuleGetFunction(&addk, m, "add_one"));
    void *p = NULL;
    MUST(cuMemHostAlloc(&p, 4096, CU_MEMHOSTALLOC_DEVICEMAP));
    flag = (volatile unsigned *)p;
    done = (volatile unsigned *)((char *)p + 256);
    MUST(cuMemHostGetDevicePointer(&dflag, (void *)flag, 0));
    MUST(cuMemHostGetDevicePointer(&ddone, (void *)done, 0));
    MUST(cuMemAlloc(&dbuf, 4096));
    MUST(cuMemsetD8(dbuf, 0, 4096));
}

/* Launches wait_flag on `s`, armed: the flag down, nothing done. */
static CUresult launch_wait(CUstream s) {
    *flag = 0;
    *done = 0;
    __sync_synchronize();
    unsigned long long cycles = TIMEOUT_CYCLES;
    void *args[] = {&dflag, &ddone, &cycles};
    return cuLaunchKernel(waitk, 1, 1, 1, 1, 1, 1, 0, s, args, NULL);
}

static const char *kernel_state(void) {
    __sync_synchronize();
    switch (*done) {
    case 0: return "still running";
    case 1: return "done (released)";
    case 2: return "done (timed out)";
    default: return "unknown";
    }
}

static void sleep_ms(int ms) {
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static void *releaser(void *arg) {
    (void)arg;
    sleep_ms(RELEASE_MS);
    *flag = 1;
    __sync_synchronize();
    return NULL;
}

static pthread_t release_later(void) {
    pthread_t t;
    pthread_create(&t, NULL, releaser, NULL);
    return t;
}

/* Lets the kernel go (if nothing did yet) and waits for the device, bounded by the
 * kernel's own timeout. */
static void settle(pthread_t t) {
    pthread_join(t, NULL);
    *flag = 1;
    __sync_synchronize();
    CALL("ctx-synchronize (settle)", cuCtxSynchronize());
    SAY("kernel finally: %s", kernel_state());
}

static void query_pending(void) {
    setup();
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_DEFAULT));
    CUevent e;
    MUST(cuEventCreate(&e, CU_EVENT_DEFAULT));
    CALL("launch wait_flag on a stream", launch_wait(s));
    CALL("record event after it", cuEventRecord(e, s));
    CALL("stream-query while it waits", cuStreamQuery(s));
    CALL("event-query while it waits", cuEventQuery(e));
    CALL("event-query an event never recorded", ({ CUevent f; MUST(cuEventCreate(&f, 0)); cuEventQuery(f); }));
    pthread_t t = release_later();
    CALL("stream-synchronize", cuStreamSynchronize(s));
    SAY("kernel when it returned: %s", kernel_state());
    CALL("stream-query after", cuStreamQuery(s));
    CALL("event-query after", cuEventQuery(e));
    settle(t);
}

static void blocking_stream_vs_legacy(void) {
    setup();
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_DEFAULT));
    CALL("launch wait_flag on the legacy stream", launch_wait(NULL));
    pthread_t t = release_later();
    CALL("stream-synchronize an empty blocking stream", cuStreamSynchronize(s));
    SAY("kernel when it returned: %s", kernel_state());
    CALL("stream-query the empty blocking stream", cuStreamQuery(s));
    CALL("stream-query the legacy stream", cuStreamQuery(CU_STREAM_LEGACY));
    settle(t);
    /* Work issued on the blocking stream after the legacy kernel waits for it. */
    CALL("launch wait_flag on the legacy stream", launch_wait(NULL));
    void *args[] = {&dbuf};
    CALL("launch add_one on the blocking stream", cuLaunchKernel(addk, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
    CALL("stream-query the blocking stream", cuStreamQuery(s));
    t = release_later();
    CALL("stream-synchronize the blocking stream", cuStreamSynchronize(s));
    SAY("kernel when it returned: %s", kernel_state());
    settle(t);
}

static void *sync_elsewhere(void *arg) {
    CUresult *r = arg;
    cuCtxSetCurrent(ctx);
    *r = cuCtxSynchronize();
    return NULL;
}

static void ctx_synchronize_from_another_thread(void) {
    setup();
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CALL("launch wait_flag on a non-blocking stream", launch_wait(s));
    pthread_t t = release_later();
    CUresult r = CUDA_ERROR_UNKNOWN;
    pthread_t other;
    pthread_create(&other, NULL, sync_elsewhere, &r);
    pthread_join(other, NULL);
    printf("ctx-synchronize in another thread = %s\n", rname(r));
    SAY("kernel when it returned: %s", kernel_state());
    settle(t);
}

static void sync_copy_vs_stream(unsigned flags, const char *what) {
    setup();
    CUstream s;
    MUST(cuStreamCreate(&s, flags));
    char line[128];
    snprintf(line, sizeof line, "launch wait_flag on a %s stream", what);
    CALL(line, launch_wait(s));
    unsigned v = 7;
    pthread_t t = release_later();
    CALL("memcpy DtoH (synchronous, legacy stream)", cuMemcpyDtoH(&v, dbuf, sizeof v));
    SAY("kernel when it returned: %s", kernel_state());
    settle(t);
    t = release_later();
    CALL(line, launch_wait(s));
    CALL("memcpy HtoD (synchronous, legacy stream)", cuMemcpyHtoD(dbuf, &v, sizeof v));
    SAY("kernel when it returned: %s", kernel_state());
    settle(t);
    t = release_later();
    CALL(line, launch_wait(s));
    CALL("memset D8 (synchronous, legacy stream)", cuMemsetD8(dbuf, 0, 16));
    SAY("kernel when it returned: %s", kernel_state());
    settle(t);
}

static void sync_copy_vs_nonblocking(void) { sync_copy_vs_stream(CU_STREAM_NON_BLOCKING, "non-blocking"); }
static void sync_copy_vs_blocking(void) { sync_copy_vs_stream(CU_STREAM_DEFAULT, "blocking"); }

/* What freeing waits for: cuMemFree and cuMemFreeHost of memory the running kernel does
 * not use, and cuMemAlloc, while a kernel waits for the host on a non-blocking stream. */
static void frees_vs_a_running_kernel(void) {
    setup();
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr other = 0;
    MUST(cuMemAlloc(&other, 4096));
    pthread_t t = release_later();
    CALL("launch wait_flag on a non-blocking stream", launch_wait(s));
    CALL("mem-free of other memory", cuMemFree(other));
    SAY("kernel when it returned: %s", kernel_state());
    settle(t);
    void *host = NULL;
    MUST(cuMemAllocHost(&host, 4096));
    t = release_later();
    CALL("launch wait_flag on a non-blocking stream", launch_wait(s));
    CALL("mem-free-host of other memory", cuMemFreeHost(host));
    SAY("kernel when it returned: %s", kernel_state());
    settle(t);
    t = release_later();
    CALL("launch wait_flag on a non-blocking stream", launch_wait(s));
    CALL("mem-alloc", cuMemAlloc(&other, 4096));
    SAY("kernel when it returned: %s", kernel_state());
    settle(t);
    CALL("mem-free", cuMemFree(other));
}

static void release_through_a_copy(void) {
    /* Releasing a kernel through device-side work: an async copy on a non-blocking stream
     * writes the flag while the kernel spins on another stream. */
    setup();
    CUstream a, b;
    MUST(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
    MUST(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
    static unsigned one = 1;
    unsigned *pinned_one = NULL;
    MUST(cuMemAllocHost((void **)&pinned_one, sizeof *pinned_one));
    *pinned_one = one;
    CALL("launch wait_flag on stream a", launch_wait(a));
    CALL("memcpy HtoD async of 1 to the flag on stream b", cuMemcpyHtoDAsync(dflag, pinned_one, sizeof one, b));
    CALL("stream-synchronize a", cuStreamSynchronize(a));
    SAY("kernel when it returned: %s", kernel_state());
    pthread_t t = release_later();
    settle(t);
    CALL("free host", cuMemFreeHost(pinned_one));
}

static void event_timing(void) {
    setup();
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUevent a, b, never, untimed;
    MUST(cuEventCreate(&a, CU_EVENT_DEFAULT));
    MUST(cuEventCreate(&b, CU_EVENT_DEFAULT));
    MUST(cuEventCreate(&never, CU_EVENT_DEFAULT));
    MUST(cuEventCreate(&untimed, CU_EVENT_DISABLE_TIMING));
    float ms = -12345;
    CALL("elapsed, neither recorded", cuEventElapsedTime(&ms, a, b));
    CALL("record a (idle stream)", cuEventRecord(a, s));
    CALL("launch wait_flag", launch_wait(s));
    CALL("record b after the kernel", cuEventRecord(b, s));
    ms = -12345;
    CALL("elapsed a..b while b is pending", cuEventElapsedTime(&ms, a, b));
    SAY("ms %s", ms == -12345 ? "untouched" : "written");
    CALL("elapsed a..never recorded", cuEventElapsedTime(&ms, a, never));
    pthread_t t = release_later();
    CALL("event-synchronize b", cuEventSynchronize(b));
    SAY("kernel when it returned: %s", kernel_state());
    ms = -12345;
    CALL("elapsed a..b", cuEventElapsedTime(&ms, a, b));
    SAY("a..b %s", ms >= RELEASE_MS / 2 ? "covers the kernel's wait" : ms >= 0 ? "short" : "negative");
    ms = 12345;
    CALL("elapsed b..a", cuEventElapsedTime(&ms, b, a));
    SAY("b..a %s", ms < 0 ? "negative" : ms == 12345 ? "untouched" : "not negative");
    CALL("elapsed a..a", cuEventElapsedTime(&ms, a, a));
    SAY("a..a %s", ms == 0 ? "zero" : "not zero");
    CALL("record untimed", cuEventRecord(untimed, s));
    CALL("event-synchronize untimed", cuEventSynchronize(untimed));
    CALL("elapsed a..untimed", cuEventElapsedTime(&ms, a, untimed));
    CALL("elapsed untimed..b", cuEventElapsedTime(&ms, untimed, b));
    CALL("event-query untimed", cuEventQuery(untimed));
    /* A re-record while pending: the event is pending again. */
    CALL("launch wait_flag", launch_wait(s));
    CALL("re-record a after it", cuEventRecord(a, s));
    CALL("event-query a", cuEventQuery(a));
    CALL("elapsed a..b with a pending", cuEventElapsedTime(&ms, a, b));
    settle(t);
    t = release_later();
    settle(t);
}

struct QueryArgs {
    CUresult own, legacy;
};

static void *query_elsewhere(void *arg) {
    struct QueryArgs *q = arg;
    cuCtxSetCurrent(ctx);
    q->own = cuStreamQuery(CU_STREAM_PER_THREAD);
    q->legacy = cuStreamQuery(CU_STREAM_LEGACY);
    return NULL;
}

static void per_thread_default_stream(void) {
    setup();
    CALL("launch wait_flag on CU_STREAM_PER_THREAD", launch_wait(CU_STREAM_PER_THREAD));
    CALL("stream-query CU_STREAM_PER_THREAD (this thread's)", cuStreamQuery(CU_STREAM_PER_THREAD));
    struct QueryArgs q = {CUDA_ERROR_UNKNOWN, CUDA_ERROR_UNKNOWN};
    pthread_t other;
    pthread_create(&other, NULL, query_elsewhere, &q);
    pthread_join(other, NULL);
    printf("another thread: stream-query CU_STREAM_PER_THREAD = %s\n", rname(q.own));
    printf("another thread: stream-query CU_STREAM_LEGACY = %s\n", rname(q.legacy));
    fflush(stdout);
    CALL("stream-query CU_STREAM_LEGACY (this thread)", cuStreamQuery(CU_STREAM_LEGACY));
    CUstream nb;
    MUST(cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING));
    CALL("stream-query an empty non-blocking stream", cuStreamQuery(nb));
    pthread_t t = release_later();
    CALL("stream-synchronize CU_STREAM_LEGACY", cuStreamSynchronize(CU_STREAM_LEGACY));
    SAY("kernel when it returned: %s", kernel_state());
    settle(t);
    t = release_later();
    CALL("launch wait_flag on CU_STREAM_PER_THREAD", launch_wait(CU_STREAM_PER_THREAD));
    CALL("stream-synchronize CU_STREAM_PER_THREAD", cuStreamSynchronize(CU_STREAM_PER_THREAD));
    SAY("kernel when it returned: %s", kernel_state());
    settle(t);
}

/* What each async copy does when its stream has a kernel still running: whether the
 * call returned before the kernel was done, and (for pageable sources, changed as soon as
 * the call returned) whether the bytes copied were those of the call's time. */
static void copy_behind_a_kernel(CUstream s, const char *what, CUresult (*copy)(CUstream),
                                 void (*after)(void)) {
    pthread_t t = release_later();
    CALL("launch wait_flag on a non-blocking stream", launch_wait(s));
    CALL(what, copy(s));
    SAY("kernel when it returned: %s", kernel_state());
    if (after) after();
    settle(t);
}

static unsigned pageable_word;
static unsigned pageable_rows[2][64];
static unsigned pageable_back;
static CUdeviceptr dpeer;
#define LARGE (80u << 20)
static unsigned char *pageable_large;
static CUdeviceptr dlarge;

static CUresult htod_pageable(CUstream s) {
    pageable_word = 42;
    return cuMemcpyHtoDAsync(dbuf, &pageable_word, 4, s);
}
static CUresult htod_pageable_large(CUstream s) {
    pageable_large[0] = 42;
    return cuMemcpyHtoDAsync(dlarge, pageable_large, LARGE, s);
}
static CUresult dtoh_pageable(CUstream s) { return cuMemcpyDtoHAsync(&pageable_back, dbuf, 4, s); }
static CUresult htoh_pageable(CUstream s) {
    pageable_word = 43;
    return cuMemcpyAsync((CUdeviceptr)&pageable_back, (CUdeviceptr)&pageable_word, 4, s);
}
static unsigned *pinned_pair;
static CUresult htoh_pinned(CUstream s) {
    pinned_pair[0] = 48;
    return cuMemcpyAsync((CUdeviceptr)&pinned_pair[1], (CUdeviceptr)&pinned_pair[0], 4, s);
}
static CUresult copy_2d_pageable(CUstream s) {
    pageable_rows[0][0] = 44;
    pageable_rows[1][0] = 45;
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = pageable_rows;
    c.srcPitch = sizeof pageable_rows[0];
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = dbuf;
    c.dstPitch = 512;
    c.WidthInBytes = 4;
    c.Height = 2;
    return cuMemcpy2DAsync(&c, s);
}
static CUresult copy_3d_pageable(CUstream s) {
    pageable_rows[0][0] = 46;
    pageable_rows[1][0] = 47;
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = pageable_rows;
    c.srcPitch = sizeof pageable_rows[0];
    c.srcHeight = 1;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = dbuf;
    c.dstPitch = 512;
    c.dstHeight = 1;
    c.WidthInBytes = 4;
    c.Height = 1;
    c.Depth = 2;
    return cuMemcpy3DAsync(&c, s);
}
static CUresult peer_copy(CUstream s) { return cuMemcpyPeerAsync(dpeer, ctx, dbuf, ctx, 4, s); }

/* The source changed as soon as the call returned. */
static void clear_word(void) { pageable_word = 0; }
static void clear_rows(void) { pageable_rows[0][0] = pageable_rows[1][0] = 0; }
static void clear_large(void) { pageable_large[0] = 0; }

static unsigned device_word(CUdeviceptr p) {
    unsigned v = 0;
    MUST(cuMemcpyDtoH(&v, p, 4));
    return v;
}

static void async_copies_behind_a_kernel(void) {
    setup();
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    MUST(cuMemAlloc(&dpeer, 4));
    pageable_large = calloc(1, LARGE);
    MUST(cuMemAlloc(&dlarge, LARGE));
    copy_behind_a_kernel(s, "memcpy HtoD async, 4 pageable bytes", htod_pageable, clear_word);
    SAY("the device got %u (42: read before the call returned)", device_word(dbuf));
    copy_behind_a_kernel(s, "memcpy HtoD async, 80 MiB pageable", htod_pageable_large, clear_large);
    SAY("the device got %u (42: read before the call returned)", device_word(dlarge));
    copy_behind_a_kernel(s, "memcpy DtoH async to pageable memory", dtoh_pageable, NULL);
    SAY("the host got %u", pageable_back);
    copy_behind_a_kernel(s, "memcpy async pageable to pageable", htoh_pageable, clear_word);
    SAY("the host got %u", pageable_back);
    MUST(cuMemAllocHost((void **)&pinned_pair, 2 * sizeof *pinned_pair));
    copy_behind_a_kernel(s, "memcpy async page-locked to page-locked", htoh_pinned, NULL);
    SAY("the host got %u", pinned_pair[1]);
    copy_behind_a_kernel(s, "memcpy 2D async, 2 pageable rows to the device", copy_2d_pageable, clear_rows);
    SAY("the device got %u and %u (44 and 45: read before the call returned)", device_word(dbuf),
        device_word(dbuf + 512));
    copy_behind_a_kernel(s, "memcpy 3D async, 2 pageable slices to the device", copy_3d_pageable, clear_rows);
    SAY("the device got %u and %u (46 and 47: read before the call returned)", device_word(dbuf),
        device_word(dbuf + 512));
    copy_behind_a_kernel(s, "memcpy peer async, device to device", peer_copy, NULL);
    SAY("the copy got %u", device_word(dpeer));
    MUST(cuMemFree(dlarge));
    free(pageable_large);
}

int main(void) {
    section("query-pending", query_pending);
    section("blocking-stream-vs-legacy", blocking_stream_vs_legacy);
    section("ctx-synchronize-from-another-thread", ctx_synchronize_from_another_thread);
    section("sync-copy-vs-nonblocking-stream", sync_copy_vs_nonblocking);
    section("sync-copy-vs-blocking-stream", sync_copy_vs_blocking);
    section("release-through-a-copy", release_through_a_copy);
    section("frees-vs-a-running-kernel", frees_vs_a_running_kernel);
    section("event-timing", event_timing);
    section("per-thread-default-stream", per_thread_default_stream);
    section("async-copies-behind-a-kernel", async_copies_behind_a_kernel);
    return 0;
}
