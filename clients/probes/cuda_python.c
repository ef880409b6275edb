/* What NVIDIA's cuda-python test suites, run unchanged on the mock
 * (docs/frameworks/cuda-python.md), showed the mock answering otherwise than their GPUs:
 * the name getters given a NULL function or kernel, the process's coredump settings, the
 * device ordinal cuPointerGetAttributes gives of NULL, and ACCESSED_BY with the host.
 *
 * Recorded on the H200 (clients/probes/goldens/NVIDIA_H200-580.159.04/cuda_python.txt)
 * and compared (mock-driver/tests/probes.rs): the mock answers as it does. The questions
 * cuda.h leaves open, as the recording settled them:
 * - the size a path setting asks for: 1024 bytes, whatever the path; a get into too small
 *   a buffer: INVALID_VALUE;
 * - the default FILE path: empty; setting LIGHTWEIGHT sets GENERATION_FLAGS (63);
 * - turning dumps on: accepted (the mock keeps the setting and writes none; the probe
 *   turns them off again). */
#include "probe.h"

static void name_getters(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    const char *name = (const char *)SENTINEL;
    CALL("func-get-name NULL function", cuFuncGetName(&name, NULL));
    OUT(name);
    name = (const char *)SENTINEL;
    CALL("kernel-get-name NULL kernel", cuKernelGetName(&name, NULL));
    OUT(name);
    CALL("func-get-name NULL both", cuFuncGetName(NULL, NULL));
}

static void show_bool(const char *what, CUcoredumpSettings a) {
    unsigned char b = 0xA5;
    size_t size = 1;
    if (CALL(what, cuCoredumpGetAttributeGlobal(a, &b, &size)) == CUDA_SUCCESS) SAY("value %u size %zu", b, size);
}

static void coredump(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    const struct { CUcoredumpSettings a; const char *n; } all[] = {
        {CU_COREDUMP_ENABLE_ON_EXCEPTION, "ENABLE_ON_EXCEPTION"}, {CU_COREDUMP_TRIGGER_HOST, "TRIGGER_HOST"},
        {CU_COREDUMP_LIGHTWEIGHT, "LIGHTWEIGHT"}, {CU_COREDUMP_ENABLE_USER_TRIGGER, "ENABLE_USER_TRIGGER"},
        {CU_COREDUMP_FILE, "FILE"}, {CU_COREDUMP_PIPE, "PIPE"}, {CU_COREDUMP_GENERATION_FLAGS, "GENERATION_FLAGS"},
        {(CUcoredumpSettings)99, "99"}};
    char what[96];
    size_t file_size = 0;
    for (unsigned i = 0; i < sizeof all / sizeof *all; i++) {
        size_t size = SENTINEL;
        snprintf(what, sizeof what, "size of %s", all[i].n);
        if (CALL(what, cuCoredumpGetAttributeGlobal(all[i].a, NULL, &size)) != CUDA_SUCCESS) continue;
        /* A path's size may depend on the host's name and the process id: said below. */
        if (all[i].a == CU_COREDUMP_FILE) file_size = size;
        if (all[i].a == CU_COREDUMP_FILE || all[i].a == CU_COREDUMP_PIPE)
            SAY("size %s", size == 1024 ? "1024" : size == SENTINEL ? "untouched" : "other");
        else
            SAY("size %zu", size);
    }
    show_bool("default TRIGGER_HOST", CU_COREDUMP_TRIGGER_HOST);
    show_bool("default LIGHTWEIGHT", CU_COREDUMP_LIGHTWEIGHT);
    char path[1024];
    size_t size = sizeof path;
    memset(path, 0, sizeof path);
    if (CALL("default FILE", cuCoredumpGetAttributeGlobal(CU_COREDUMP_FILE, path, &size)) == CUDA_SUCCESS)
        SAY("starts %.10s, asked size is its length + 1: %s", path, file_size == strlen(path) + 1 ? "yes" : "no");
    int flags = 0x5A5A;
    size = sizeof flags;
    if (CALL("default GENERATION_FLAGS", cuCoredumpGetAttributeGlobal(CU_COREDUMP_GENERATION_FLAGS, &flags, &size)) == CUDA_SUCCESS)
        SAY("value %d size %zu", flags, size);

    unsigned char off = 0, on = 1;
    size = 1;
    CALL("set TRIGGER_HOST false", cuCoredumpSetAttributeGlobal(CU_COREDUMP_TRIGGER_HOST, &off, &size));
    show_bool("TRIGGER_HOST after", CU_COREDUMP_TRIGGER_HOST);
    size = 1;
    CALL("set LIGHTWEIGHT true", cuCoredumpSetAttributeGlobal(CU_COREDUMP_LIGHTWEIGHT, &on, &size));
    show_bool("LIGHTWEIGHT after", CU_COREDUMP_LIGHTWEIGHT);
    size = sizeof flags;
    flags = 0x5A5A;
    if (CALL("GENERATION_FLAGS after LIGHTWEIGHT", cuCoredumpGetAttributeGlobal(CU_COREDUMP_GENERATION_FLAGS, &flags, &size)) == CUDA_SUCCESS)
        SAY("value %d", flags);

    char file[] = "corefile";
    size = strlen(file); /* as cuda-python gives it: no NUL counted */
    CALL("set FILE corefile, size without NUL", cuCoredumpSetAttributeGlobal(CU_COREDUMP_FILE, file, &size));
    size = SENTINEL;
    if (CALL("size of FILE after", cuCoredumpGetAttributeGlobal(CU_COREDUMP_FILE, NULL, &size)) == CUDA_SUCCESS)
        SAY("size %zu", size);
    memset(path, 0, sizeof path);
    size = sizeof path;
    if (CALL("FILE after", cuCoredumpGetAttributeGlobal(CU_COREDUMP_FILE, path, &size)) == CUDA_SUCCESS)
        SAY("value %s size %zu", path, size);
    memset(path, 0, sizeof path);
    size = 4;
    CALL("FILE into 4 bytes", cuCoredumpGetAttributeGlobal(CU_COREDUMP_FILE, path, &size));
    static char longpath[1100];
    memset(longpath, 'x', sizeof longpath - 1);
    size = sizeof longpath;
    CALL("set FILE of 1099 characters", cuCoredumpSetAttributeGlobal(CU_COREDUMP_FILE, longpath, &size));
    size = 1;
    CALL("get NULL size", cuCoredumpGetAttributeGlobal(CU_COREDUMP_TRIGGER_HOST, &on, NULL));

    /* Turned on, recorded, turned off again at once: no exception is raised here. */
    size = 1;
    CALL("set ENABLE_USER_TRIGGER true", cuCoredumpSetAttributeGlobal(CU_COREDUMP_ENABLE_USER_TRIGGER, &on, &size));
    size = 1;
    CALL("set ENABLE_USER_TRIGGER false", cuCoredumpSetAttributeGlobal(CU_COREDUMP_ENABLE_USER_TRIGGER, &off, &size));
    size = 1;
    CALL("set ENABLE_ON_EXCEPTION false", cuCoredumpSetAttributeGlobal(CU_COREDUMP_ENABLE_ON_EXCEPTION, &off, &size));
}

/* cuPointerGetAttributes' device ordinal of addresses the driver never gave out (the
 * mock: 0, cuda.h's default NULL value; a reservation's hole is CU_DEVICE_INVALID, as
 * case pointer-attributes-plural recorded), and ACCESSED_BY with the host advised. */
static void pointers_and_advice(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUpointer_attribute a = CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL;
    int ordinal = 0x5A5A;
    void *data[1] = {&ordinal};
    if (CALL("ordinal of NULL", cuPointerGetAttributes(1, &a, data, 0)) == CUDA_SUCCESS) SAY("value %d", ordinal);
    int local = 0;
    ordinal = 0x5A5A;
    if (CALL("ordinal of a stack address", cuPointerGetAttributes(1, &a, data, (CUdeviceptr)(uintptr_t)&local)) == CUDA_SUCCESS)
        SAY("value %d", ordinal);
    CUdeviceptr mp;
    size_t n = 4096;
    MUST(cuMemAllocManaged(&mp, n, CU_MEM_ATTACH_GLOBAL));
    CUmemLocation host = {CU_MEM_LOCATION_TYPE_HOST, CU_DEVICE_CPU}, dev0 = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    int acc[3];
    CALL("advise SET_ACCESSED_BY host", cuMemAdvise(mp, n, CU_MEM_ADVISE_SET_ACCESSED_BY, host));
    memset(acc, 0xA5, sizeof acc);
    if (CALL("range ACCESSED_BY", cuMemRangeGetAttribute(acc, sizeof acc, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, mp, n)) == CUDA_SUCCESS)
        SAY("accessed by = %d %d %d", acc[0], acc[1], acc[2]);
    CALL("advise SET_ACCESSED_BY device 0", cuMemAdvise(mp, n, CU_MEM_ADVISE_SET_ACCESSED_BY, dev0));
    memset(acc, 0xA5, sizeof acc);
    if (CALL("range ACCESSED_BY", cuMemRangeGetAttribute(acc, sizeof acc, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, mp, n)) == CUDA_SUCCESS)
        SAY("accessed by = %d %d %d", acc[0], acc[1], acc[2]);
    CALL("advise UNSET_ACCESSED_BY host", cuMemAdvise(mp, n, CU_MEM_ADVISE_UNSET_ACCESSED_BY, host));
    memset(acc, 0xA5, sizeof acc);
    if (CALL("range ACCESSED_BY", cuMemRangeGetAttribute(acc, sizeof acc, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, mp, n)) == CUDA_SUCCESS)
        SAY("accessed by = %d %d %d", acc[0], acc[1], acc[2]);
    MUST(cuMemFree(mp));
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    section("name-getters", name_getters);
    section("coredump", coredump);
    section("pointers-and-advice", pointers_and_advice);
    return 0;
}
