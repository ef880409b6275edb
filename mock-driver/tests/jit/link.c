/* The driver's JIT linker over relocatable PTX (nvcc -ptx -rdc=true):
 *   link A.ptx B.ptx B.fatbin
 * links A (a file) with B (data), launches the kernel and checks it; then links A with
 * B's fatbin; then prints what the driver answers to an undefined reference, a
 * duplicate definition and a cubin input (the Rust test checks the mock's answers; on a
 * GPU the same program records NVIDIA's). Exit 1 on a failed check. */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(c, ...) do { if (!(c)) { failures++; printf("FAIL %s: ", #c); printf(__VA_ARGS__); printf("\n"); } } while (0)

static char *slurp(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) { printf("FAIL cannot open %s\n", path); exit(1); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = calloc(1, n + 1);
    if (fread(b, 1, n, f) != (size_t)n) { printf("FAIL read %s\n", path); exit(1); }
    fclose(f);
    *size = n;
    return b;
}

static const char *name(CUresult r) {
    const char *s = "?";
    cuGetErrorName(r, &s);
    return s;
}

static char err_log[4096];
static void *values[3];

static CUlinkState create(void) {
    static CUjit_option opts[3] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                                   CU_JIT_WALL_TIME};
    CUlinkState s = NULL;
    memset(err_log, 0, sizeof err_log);
    values[0] = err_log;
    values[1] = (void *)(uintptr_t)sizeof err_log;
    values[2] = 0;
    CUresult r = cuLinkCreate(3, opts, values, &s);
    CHECK(r == CUDA_SUCCESS, "cuLinkCreate %s", name(r));
    return s;
}

static void run(void *cubin, const char *what) {
    CUmodule m;
    CUfunction f;
    CUresult r = cuModuleLoadData(&m, cubin);
    CHECK(r == CUDA_SUCCESS, "%s: load %s", what, name(r));
    if (r) return;
    r = cuModuleGetFunction(&f, m, "k");
    CHECK(r == CUDA_SUCCESS, "%s: function %s", what, name(r));
    CUdeviceptr out;
    cuMemAlloc(&out, 64 * sizeof(int));
    void *args[] = {&out};
    r = cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL);
    CHECK(r == CUDA_SUCCESS, "%s: launch %s", what, name(r));
    r = cuCtxSynchronize();
    CHECK(r == CUDA_SUCCESS, "%s: sync %s", what, name(r));
    int host[64];
    cuMemcpyDtoH(host, out, sizeof host);
    for (int i = 0; i < 64; i++)
        CHECK(host[i] == i * 3 + 1 + 100, "%s: out[%d] = %d", what, i, host[i]);
    CUdeviceptr counter;
    size_t bytes;
    r = cuModuleGetGlobal(&counter, &bytes, m, "counter");
    CHECK(r == CUDA_SUCCESS && bytes == 4, "%s: counter %s %zu", what, name(r), bytes);
    int c = 0;
    cuMemcpyDtoH(&c, counter, 4);
    CHECK(c == 64, "%s: counter = %d", what, c);
    cuMemFree(out);
    cuModuleUnload(m);
    printf("%s: ok\n", what);
}

int main(int argc, char **argv) {
    if (argc != 4) { printf("usage: link A.ptx B.ptx B.fatbin\n"); return 2; }
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
        cuCtxSetCurrent(ctx)) {
        printf("FAIL setup\n");
        return 1;
    }
    size_t bsize, fsize;
    char *b = slurp(argv[2], &bsize);
    char *fat = slurp(argv[3], &fsize);

    /* A from a file, B as data (with its NUL). */
    CUlinkState s = create();
    CUresult r = cuLinkAddFile(s, CU_JIT_INPUT_PTX, argv[1], 0, NULL, NULL);
    CHECK(r == CUDA_SUCCESS, "add A %s: %s", name(r), err_log);
    r = cuLinkAddData(s, CU_JIT_INPUT_PTX, b, bsize + 1, "link_b.ptx", 0, NULL, NULL);
    CHECK(r == CUDA_SUCCESS, "add B %s: %s", name(r), err_log);
    void *cubin = NULL;
    size_t size = 0;
    r = cuLinkComplete(s, &cubin, &size);
    CHECK(r == CUDA_SUCCESS && cubin && size > 0, "complete %s: %s", name(r), err_log);
    float ms;
    memcpy(&ms, &values[2], sizeof ms);
    CHECK(ms >= 0.0f, "wall time %f", ms);
    if (!r) run(cubin, "ptx+ptx");
    CHECK(cuLinkDestroy(s) == CUDA_SUCCESS, "destroy");

    /* A with B's fatbin. */
    s = create();
    r = cuLinkAddFile(s, CU_JIT_INPUT_PTX, argv[1], 0, NULL, NULL);
    CHECK(r == CUDA_SUCCESS, "add A %s", name(r));
    r = cuLinkAddData(s, CU_JIT_INPUT_FATBINARY, fat, fsize, "link_b.fatbin", 0, NULL, NULL);
    CHECK(r == CUDA_SUCCESS, "add B fatbin %s: %s", name(r), err_log);
    r = cuLinkComplete(s, &cubin, &size);
    CHECK(r == CUDA_SUCCESS, "complete %s: %s", name(r), err_log);
    if (!r) run(cubin, "ptx+fatbin");
    cuLinkDestroy(s);

    /* A alone: `scale` and `bias` are undefined. */
    s = create();
    r = cuLinkAddFile(s, CU_JIT_INPUT_PTX, argv[1], 0, NULL, NULL);
    printf("add A alone = %s\n", name(r));
    r = cuLinkComplete(s, &cubin, &size);
    printf("complete A alone = %s\nlog: %s\n", name(r), err_log);
    cuLinkDestroy(s);

    /* B twice: `scale` and `bias` are defined twice. */
    s = create();
    r = cuLinkAddData(s, CU_JIT_INPUT_PTX, b, bsize + 1, "b1", 0, NULL, NULL);
    r = cuLinkAddData(s, CU_JIT_INPUT_PTX, b, bsize + 1, "b2", 0, NULL, NULL);
    printf("add B twice = %s\n", name(r));
    r = cuLinkComplete(s, &cubin, &size);
    printf("complete B twice = %s\nlog: %s\n", name(r), err_log);
    cuLinkDestroy(s);

    /* PTX text given as a cubin. */
    s = create();
    r = cuLinkAddData(s, CU_JIT_INPUT_CUBIN, b, bsize + 1, "not-a-cubin", 0, NULL, NULL);
    printf("add PTX as cubin = %s\nlog: %s\n", name(r), err_log);
    cuLinkDestroy(s);

    printf(failures ? "failed\n" : "ok\n");
    return failures ? 1 : 0;
}
