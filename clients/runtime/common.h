// What the runtime programs share: a transcript, one line per call (the call as written,
// its cudaError_t by name), then indented normalised outputs. The same program prints the
// same transcript under NVIDIA's runtime on a GPU and under cumock's runtime on the mock,
// so the two can be diffed line by line (ci/gpu-runtime.sh, cudart/tests/programs.rs).
// Addresses are never printed: only whether they are NULL and how they are aligned.
#pragma once
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

static int failures = 0;

static cudaError_t record(const char *call, cudaError_t e) {
    printf("%s -> %s\n", call, cudaGetErrorName(e));
    fflush(stdout);
    return e;
}

// T(call): runs a runtime call and records it.
#define T(call) record(#call, (call))
#define OUT(...) (printf("    " __VA_ARGS__), printf("\n"), fflush(stdout))

// A check of the data, not of a result: failing makes the program exit non-zero.
#define CHECK(cond)                                                    \
    do {                                                               \
        if (!(cond)) {                                                 \
            printf("    CHECK FAILED: %s (line %d)\n", #cond, __LINE__); \
            failures++;                                                \
        }                                                              \
    } while (0)

// How an address is aligned, in words that do not depend on where it landed.
static const char *alignment(const void *p) {
    uintptr_t a = (uintptr_t)p;
    if (!a) return "NULL";
    if (a % (2u << 20) == 0) return "2MiB-aligned";
    if (a % 4096 == 0) return "4KiB-aligned";
    if (a % 512 == 0) return "512B-aligned";
    if (a % 256 == 0) return "256B-aligned";
    return "unaligned";
}

// Exit status 77 says "skipped" to the test that runs the program.
#define SKIP_EXIT 77

// An allocation the rest of the program needs: without it, stop (never touch NULL).
#define NEED(ptr)                                                   \
    do {                                                            \
        if (!(ptr)) {                                               \
            printf("    cannot go on without %s\n", #ptr);          \
            return 1;                                               \
        }                                                           \
    } while (0)

static int finish(void) {
    if (failures) printf("%d checks failed\n", failures);
    return failures ? 1 : 0;
}
