/* JIT option outputs of a failing and a succeeding load: the error log says why,
 * NUL-terminated and cut to its buffer, its filled size written back; the wall time is
 * a float in its slot. Prints one line per check; exit 1 on a failed check. */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int failures;
#define CHECK(c, ...) do { if (!(c)) { failures++; printf("FAIL %s: ", #c); printf(__VA_ARGS__); printf("\n"); } } while (0)

static const char *bad =
    ".version 9.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry k()\n{\n  frobnicate.u32 %r1;\n  ret;\n}\n";
static const char *good =
    ".version 9.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry k()\n{\n  ret;\n}\n";

static CUresult load_ex(const char *image, char *err, size_t err_size, char *info,
                        size_t info_size, void **slots, int library) {
    CUjit_option opts[5] = {CU_JIT_WALL_TIME, CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                            CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
    float minus_one = -1.0f;
    slots[0] = 0;
    memcpy(&slots[0], &minus_one, sizeof minus_one);
    slots[1] = err;
    slots[2] = (void *)(uintptr_t)err_size;
    slots[3] = info;
    slots[4] = (void *)(uintptr_t)info_size;
    if (library) {
        CUlibrary lib;
        return cuLibraryLoadData(&lib, image, opts, slots, 5, NULL, NULL, 0);
    }
    CUmodule m;
    return cuModuleLoadDataEx(&m, image, 5, opts, slots);
}

int main(void) {
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
        cuCtxSetCurrent(ctx)) {
        printf("FAIL setup\n");
        return 1;
    }
    for (int library = 0; library < 2; library++) {
        char err[256], info[256];
        void *slots[5];
        memset(err, 'x', sizeof err);
        memset(info, 'x', sizeof info);
        CUresult r = load_ex(bad, err, sizeof err, info, sizeof info, slots, library);
        /* The H200 answers CUDA_SUCCESS for the library (it loads lazily) while it fills
         * the error log; the mock refuses it at once: printed, not checked. */
        printf("%s load of bad PTX = %d\n", library ? "library" : "module", r);
        if (!library)
            CHECK(r == CUDA_ERROR_NOT_SUPPORTED || r == CUDA_ERROR_INVALID_PTX, "result %d", r);
        CHECK(memchr(err, 0, sizeof err) != NULL, "error log not NUL-terminated");
        CHECK(strstr(err, "frobnicate") != NULL, "error log: %.*s", (int)sizeof err, err);
        /* The H200 writes back the log's length when it fits (and the buffer's size when
         * it was cut: below). */
        CHECK((uintptr_t)slots[2] == strlen(err), "error size %zu for %zu bytes",
              (size_t)(uintptr_t)slots[2], strlen(err));
        CHECK(info[0] == 0, "info log: %s", info);
        float ms;
        memcpy(&ms, &slots[0], sizeof ms);
        CHECK(ms >= 0.0f, "wall time %f", ms);
        printf("%s error log: %s\n", library ? "library" : "module", err);

        /* A log buffer smaller than the reason: cut, NUL-terminated, all of it filled. */
        char small[8];
        memset(small, 'x', sizeof small);
        r = load_ex(bad, small, sizeof small, info, sizeof info, slots, library);
        if (!library)
            CHECK(r != CUDA_SUCCESS, "small buffer result %d", r);
        CHECK(small[7] == 0 && strlen(small) == 7, "small log %.8s", small);
        CHECK((uintptr_t)slots[2] == 8, "small size %zu", (size_t)(uintptr_t)slots[2]);

        /* Success: an empty error log. */
        memset(err, 'x', sizeof err);
        r = load_ex(good, err, sizeof err, info, sizeof info, slots, library);
        CHECK(r == CUDA_SUCCESS, "good result %d", r);
        CHECK(err[0] == 0, "error log after success: %.20s", err);
    }
    /* NULL option arrays with a count are refused. */
    CUmodule m;
    CHECK(cuModuleLoadDataEx(&m, good, 2, NULL, NULL) == CUDA_ERROR_INVALID_VALUE, "NULL options");
    printf(failures ? "failed\n" : "ok\n");
    return failures ? 1 : 0;
}
