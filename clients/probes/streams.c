/* Streams as frameworks query them: the priority range, streams created with a priority
 * (in and out of range), their flags, context and device; and context limits. */
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

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    section("stream-priorities", priorities);
    section("context-limits", limits);
    return 0;
}
