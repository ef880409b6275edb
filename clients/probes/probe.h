/* Probes: C programs that explore what a driver does and print it as a transcript, one
 * line a call, normalised so that two runs (and two drivers) can be diffed. Each section
 * runs in a forked child, so a driver that crashes on one question (the real one does
 * on some bad input) loses only that section: its line says `crash: SIGNAL`.
 * Built against NVIDIA's cuda.h, linked with -lcuda; run on the mock and on real GPUs
 * (ci/gpu-probes.sh); goldens in clients/probes/goldens/<GPU>-<driver>/. */
#pragma once
#include <cuda.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static inline const char *rname(CUresult r) {
    const char *n = NULL;
    if (cuGetErrorName(r, &n) != CUDA_SUCCESS || !n) {
        static char buf[32];
        snprintf(buf, sizeof buf, "CUresult(%d)", (int)r);
        return buf;
    }
    return n;
}

/* Prints `what = RESULT` and gives the result back. */
#define CALL(what, call)                                 \
    ({                                                   \
        CUresult r_ = (call);                            \
        printf("%s = %s\n", (what), rname(r_));          \
        fflush(stdout);                                  \
        r_;                                              \
    })
/* A call whose success the section needs: a failure ends the section. */
#define MUST(call)                                                                \
    do {                                                                          \
        CUresult r_ = (call);                                                     \
        if (r_ != CUDA_SUCCESS) {                                                 \
            printf("  setup failed: %s = %s\n", #call, rname(r_));                \
            fflush(stdout);                                                       \
            _exit(3);                                                             \
        }                                                                         \
    } while (0)
#define SAY(...)                  \
    do {                          \
        printf("  " __VA_ARGS__); \
        printf("\n");             \
        fflush(stdout);           \
    } while (0)

/* What an out-parameter holds after a call: untouched (the sentinel), or its value. */
#define SENTINEL 0xA5A5A5A5A5A5A5A5ull
static inline void show_out(const char *name, const void *p, size_t n) {
    uint64_t v = 0;
    memcpy(&v, p, n < 8 ? n : 8);
    uint64_t s = SENTINEL;
    if (n < 8) s &= (1ull << (8 * n)) - 1;
    if (v == s)
        printf("  %s untouched\n", name);
    else
        printf("  %s = %s0x%llx\n", name, v == 0 ? "zero " : "", (unsigned long long)v);
    fflush(stdout);
}
#define OUT(var) show_out(#var, &(var), sizeof(var))

/* Fills `n` bytes with a pattern that differs by `seed`, and checks for it: what a copy
 * moved, told apart from zeroes and from another copy's bytes. */
static inline void pattern(void *p, size_t n, unsigned seed) {
    unsigned char *b = p;
    for (size_t i = 0; i < n; i++) b[i] = (unsigned char)(i * 31 + seed);
}

static inline int is_pattern(const void *p, size_t n, unsigned seed) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i] != (unsigned char)(i * 31 + seed)) return 0;
    return 1;
}
#define FILL(var) memset(&(var), 0xA5, sizeof(var))


static inline CUmemAllocationProp prop_dev(int device, int handle_types) {
    CUmemAllocationProp p;
    memset(&p, 0, sizeof p);
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = device;
    p.requestedHandleTypes = (CUmemAllocationHandleType)handle_types;
    return p;
}

static inline CUmemAccessDesc access_for(CUmemLocationType type, int id, CUmemAccess_flags flags) {
    CUmemAccessDesc d;
    memset(&d, 0, sizeof d);
    d.location.type = type;
    d.location.id = id;
    d.flags = flags;
    return d;
}

static inline size_t granularity(void) {
    CUmemAllocationProp p = prop_dev(0, 0);
    size_t g = 0;
    MUST(cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    return g;
}

/* The minimum granularity of device 0, set by init_primary. */
static size_t g;

/* Initialises the driver in this process (a section's child: the real driver refuses
 * a process forked after cuInit, with CUDA_ERROR_NOT_INITIALIZED) and makes the
 * device's primary context current. */
static inline void init_primary(int dev, CUcontext *ctx) {
    MUST(cuInit(0));
    MUST(cuDevicePrimaryCtxRetain(ctx, dev));
    MUST(cuCtxSetCurrent(*ctx));
    g = granularity();
}

/* Runs one section in a child process and says how it ended. */
static inline void section(const char *name, void (*body)(void)) {
    printf("## %s\n", name);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(60);
        body();
        fflush(stdout);
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (WIFSIGNALED(st))
        printf("  crash: %s\n", WTERMSIG(st) == SIGSEGV ? "SIGSEGV" : WTERMSIG(st) == SIGABRT ? "SIGABRT" : WTERMSIG(st) == SIGALRM ? "timeout" : "signal");
    else if (WEXITSTATUS(st) != 0)
        printf("  exit %d\n", WEXITSTATUS(st));
    fflush(stdout);
}
