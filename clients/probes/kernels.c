/* Modules and kernels on a driver: loading good and bad images, launch configurations,
 * and what a faulting kernel does to the context (when the error shows, which later
 * calls fail, what recovers). Usage: kernels DIR (the folder of probe_kernels.*). */
#include "probe.h"
/* cudaProfiler.h declares these; the headers the probes build against lack it. */
CUresult CUDAAPI cuProfilerStart(void);
CUresult CUDAAPI cuProfilerStop(void);
#include <fcntl.h>
#include <sys/stat.h>

static const char *dir;

static char *slurp(const char *name, size_t *len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) { printf("  cannot open %s\n", path); _exit(4); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = calloc(1, n + 1);
    if (fread(buf, 1, n, f) != (size_t)n) _exit(4);
    fclose(f);
    if (len) *len = n;
    return buf;
}

static CUmodule load_ptx(void) {
    CUmodule m;
    MUST(cuModuleLoadData(&m, slurp("probe_kernels.ptx", NULL)));
    return m;
}

static void module_loading(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m;
    size_t n;
    char *ptx = slurp("probe_kernels.ptx", &n);
    FILL(m); CALL("load PTX", cuModuleLoadData(&m, ptx));
    CUfunction f;
    FILL(f); CALL("get-function write_one", cuModuleGetFunction(&f, m, "write_one"));
    FILL(f); CALL("get-function missing", cuModuleGetFunction(&f, m, "no_such_kernel")); OUT(f);
    CALL("get-function NULL name", cuModuleGetFunction(&f, m, NULL));
    CUdeviceptr gp; size_t gs;
    FILL(gs); CALL("get-global counter", cuModuleGetGlobal(&gp, &gs, m, "counter")); OUT(gs);
    FILL(gs); CALL("get-global table (const)", cuModuleGetGlobal(&gp, &gs, m, "table")); OUT(gs);
    int t[4] = {0};
    CALL("read table", cuMemcpyDtoH(t, gp, sizeof t));
    SAY("table = %d %d %d %d", t[0], t[1], t[2], t[3]);
    FILL(gs); FILL(gp); CALL("get-global missing", cuModuleGetGlobal(&gp, &gs, m, "nothing")); OUT(gp); OUT(gs);
    CALL("get-global size only", cuModuleGetGlobal(NULL, &gs, m, "counter"));
    const char *name = NULL;
    MUST(cuModuleGetFunction(&f, m, "write_one"));
    CALL("func-get-name write_one", cuFuncGetName(&name, f));
    SAY("name %s", name ? name : "(null)");
    int v;
    const struct { CUfunction_attribute a; const char *n; } attrs[] = {
        {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "MAX_THREADS_PER_BLOCK"}, {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "SHARED_SIZE_BYTES"},
        {CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, "CONST_SIZE_BYTES"}, {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "LOCAL_SIZE_BYTES"},
        {CU_FUNC_ATTRIBUTE_PTX_VERSION, "PTX_VERSION"}, {CU_FUNC_ATTRIBUTE_BINARY_VERSION, "BINARY_VERSION"},
        {CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "MAX_DYNAMIC_SHARED_SIZE_BYTES"},
        {CU_FUNC_ATTRIBUTE_CACHE_MODE_CA, "CACHE_MODE_CA"}, {(CUfunction_attribute)999, "999"}};
    for (unsigned i = 0; i < sizeof attrs / sizeof *attrs; i++) {
        FILL(v);
        CUresult r = cuFuncGetAttribute(&v, attrs[i].a, f);
        SAY("attribute %s = %s %d", attrs[i].n, rname(r), r ? -1 : v);
    }
    CUfunction big;
    MUST(cuModuleGetFunction(&big, m, "big_static_shared"));
    FILL(v); CALL("big_static_shared SHARED_SIZE_BYTES", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, big)); OUT(v);
    CALL("set MAX_DYNAMIC_SHARED 64 KiB", cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536));
    CALL("set MAX_DYNAMIC_SHARED 1 MiB", cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1 << 20));
    int blocks = -1, minGrid = -1, bs = -1;
    CALL("occupancy active blocks 256", cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 256, 0));
    SAY("blocks per SM %d", blocks);
    CALL("occupancy potential block size", cuOccupancyMaxPotentialBlockSize(&minGrid, &bs, f, NULL, 0, 0));
    SAY("min grid %d, block %d", minGrid, bs);
    CALL("unload", cuModuleUnload(m));
    /* Images. */
    size_t fn;
    char *fat = slurp("probe_kernels.fatbin", &fn);
    FILL(m); CALL("load fatbin sm_90+PTX", cuModuleLoadData(&m, fat));
    CALL("load fatbin via LoadFatBinary", cuModuleLoadFatBinary(&m, fat));
    char *sass80 = slurp("probe_kernels_sm80_sass.fatbin", NULL);
    FILL(m); CALL("load SASS-only sm_80 fatbin", cuModuleLoadData(&m, sass80)); OUT(m);
    char *cubin = slurp("probe_kernels_sm90.cubin", NULL);
    FILL(m); CALL("load sm_90 cubin", cuModuleLoadData(&m, cubin));
    char path[4096];
    snprintf(path, sizeof path, "%s/probe_kernels.ptx", dir);
    CALL("load PTX file", cuModuleLoad(&m, path));
    CALL("load missing file", cuModuleLoad(&m, "/nonexistent/x.ptx"));
    FILL(m); CALL("load garbage", cuModuleLoadData(&m, "hello, world")); OUT(m);
    CALL("load empty string", cuModuleLoadData(&m, ""));
    CALL("load NULL", cuModuleLoadData(&m, NULL));
    CALL("load NULL module out", cuModuleLoadData(NULL, ptx));
    char *half = strndup(ptx, n / 2);
    CALL("load truncated PTX", cuModuleLoadData(&m, half));
    char *newer = strdup(ptx);
    char *ver = strstr(newer, ".version 9.0");
    if (ver) memcpy(ver, ".version 9.9", 12);
    CALL("load PTX .version 9.9", cuModuleLoadData(&m, newer));
    char *syntax = strdup(ptx);
    char *st = strstr(syntax, "st.global.u32");
    if (st) memcpy(st, "st.glibal.u32", 13);
    CALL("load PTX with a bad instruction", cuModuleLoadData(&m, syntax));
    char *target = strdup(ptx);
    char *tg = strstr(target, ".target sm_90");
    if (tg) memcpy(tg, ".target sm_99", 13);
    CALL("load PTX .target sm_99", cuModuleLoadData(&m, target));
    char *trunc_fat = malloc(fn);
    memcpy(trunc_fat, fat, fn);
    ((unsigned int *)trunc_fat)[2] = 100;  /* header says a tiny size */
    CALL("load fatbin with a wrong size", cuModuleLoadData(&m, trunc_fat));
    CUlibrary lib;
    CALL("library load PTX", cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
    CUkernel k;
    CALL("library get kernel", cuLibraryGetKernel(&k, lib, "add_one"));
    CALL("library get kernel missing", cuLibraryGetKernel(&k, lib, "nope"));
    CALL("kernel get function", cuKernelGetFunction(&f, k));
    CALL("library get module", cuLibraryGetModule(&m, lib));
    CALL("library unload", cuLibraryUnload(lib));
}

/* Library kernels' attributes and cache preference (cuKernelSetAttribute,
 * cuKernelGetAttribute, cuKernelSetCacheConfig, cuFuncSetCacheConfig), and the profiler
 * calls with no profiler attached. Recorded on the H200 (sections kernel-attributes and
 * profiler, matched). */
static void kernel_attributes(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUlibrary lib;
    MUST(cuLibraryLoadData(&lib, slurp("probe_kernels.ptx", NULL), NULL, NULL, 0, NULL, NULL, 0));
    CUkernel k;
    MUST(cuLibraryGetKernel(&k, lib, "add_one"));
    int v = -7;
    CALL("kernel get MAX_DYNAMIC_SHARED", cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k, 0));
    SAY("max dynamic shared %d", v);
    CALL("kernel set MAX_DYNAMIC_SHARED 64 KiB", cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536, k, 0));
    v = -7;
    CALL("kernel get MAX_DYNAMIC_SHARED", cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k, 0));
    SAY("max dynamic shared %d", v);
    CUfunction f;
    MUST(cuKernelGetFunction(&f, k));
    v = -7;
    CALL("its function's MAX_DYNAMIC_SHARED", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
    SAY("function max dynamic shared %d", v);
    CALL("kernel set MAX_DYNAMIC_SHARED 1 MiB", cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1 << 20, k, 0));
    CALL("kernel set MAX_DYNAMIC_SHARED -1", cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, -1, k, 0));
    CALL("kernel set CARVEOUT 50", cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50, k, 0));
    v = -7;
    CALL("kernel get CARVEOUT", cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, k, 0));
    SAY("carveout %d", v);
    CALL("kernel set NUM_REGS (read-only)", cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_NUM_REGS, 8, k, 0));
    CALL("kernel set attribute 999", cuKernelSetAttribute((CUfunction_attribute)999, 1, k, 0));
    CALL("kernel set device 99", cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024, k, 99));
    v = -7;
    CALL("kernel get device 99", cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k, 99));
    CALL("kernel get NULL out", cuKernelGetAttribute(NULL, CU_FUNC_ATTRIBUTE_NUM_REGS, k, 0));
    CALL("kernel set NULL kernel", cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1024, NULL, 0));
    CALL("kernel cache config PREFER_SHARED", cuKernelSetCacheConfig(k, CU_FUNC_CACHE_PREFER_SHARED, 0));
    CALL("kernel cache config PREFER_EQUAL", cuKernelSetCacheConfig(k, CU_FUNC_CACHE_PREFER_EQUAL, 0));
    CALL("kernel cache config 9", cuKernelSetCacheConfig(k, (CUfunc_cache)9, 0));
    CALL("kernel cache config device 99", cuKernelSetCacheConfig(k, CU_FUNC_CACHE_PREFER_L1, 99));
    CALL("kernel cache config NULL kernel", cuKernelSetCacheConfig(NULL, CU_FUNC_CACHE_PREFER_L1, 0));
    CALL("function cache config PREFER_L1", cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_L1));
    CALL("function cache config 9", cuFuncSetCacheConfig(f, (CUfunc_cache)9));
    CALL("library unload", cuLibraryUnload(lib));
}

static void profiler(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CALL("profiler start", cuProfilerStart());
    CALL("profiler start again", cuProfilerStart());
    CALL("profiler stop", cuProfilerStop());
    CALL("profiler stop again", cuProfilerStop());
    MUST(cuCtxSetCurrent(NULL));
    CALL("profiler start without a context", cuProfilerStart());
    CALL("profiler stop without a context", cuProfilerStop());
}

static void launch_configs(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m = load_ptx();
    CUfunction f;
    MUST(cuModuleGetFunction(&f, m, "add_one"));
    CUdeviceptr buf;
    MUST(cuMemAlloc(&buf, 1 << 20));
    MUST(cuMemsetD8(buf, 0, 1 << 20));
    int n = 1024;
    void *args[] = {&buf, &n};
    CALL("launch 4x256", cuLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, 0, args, NULL));
    CALL("sync", cuCtxSynchronize());
    int h[1024];
    MUST(cuMemcpyDtoH(h, buf, sizeof h));
    SAY("data %d %d %d", h[0], h[511], h[1023]);
    /* The configuration checks launch with n = 0: the kernel writes nothing, so racing
     * threads (64 of them on index 0) cannot make the data differ between drivers. */
    int zero = 0;
    void *noop[] = {&buf, &zero};
    CALL("grid x 0", cuLaunchKernel(f, 0, 1, 1, 256, 1, 1, 0, 0, args, NULL));
    CALL("block x 0", cuLaunchKernel(f, 1, 1, 1, 0, 1, 1, 0, 0, noop, NULL));
    CALL("block 1025 threads", cuLaunchKernel(f, 1, 1, 1, 1025, 1, 1, 0, 0, noop, NULL));
    CALL("block 1024x2", cuLaunchKernel(f, 1, 1, 1, 1024, 2, 1, 0, 0, noop, NULL));
    CALL("block z 65", cuLaunchKernel(f, 1, 1, 1, 1, 1, 65, 0, 0, noop, NULL));
    CALL("block z 64", cuLaunchKernel(f, 1, 1, 1, 1, 1, 64, 0, 0, noop, NULL));
    CALL("grid y 65536", cuLaunchKernel(f, 1, 65536, 1, 1, 1, 1, 0, 0, noop, NULL));
    CALL("grid x 2^31", cuLaunchKernel(f, 0x80000000u, 1, 1, 1, 1, 1, 0, 0, noop, NULL));
    CALL("shared 48 KiB", cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 48 << 10, 0, noop, NULL));
    CALL("shared 48 KiB + 1", cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, (48 << 10) + 1, 0, noop, NULL));
    CALL("shared 1 MiB", cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 1 << 20, 0, noop, NULL));
    CALL("null function", cuLaunchKernel(NULL, 1, 1, 1, 32, 1, 1, 0, 0, args, NULL));
    /* The parameters as the kernel lays them out: a pointer, an int, 12 bytes; a buffer
     * of another size is refused. */
    struct { CUdeviceptr p; int n; } packed = {buf, 1024};
    size_t wrong = sizeof packed;
    void *extra_wrong[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &wrong, CU_LAUNCH_PARAM_END};
    CALL("extra buffer of 16 bytes for 12", cuLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, 0, NULL, extra_wrong));
    size_t psize = 12;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &psize, CU_LAUNCH_PARAM_END};
    CALL("extra buffer", cuLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, 0, NULL, extra));
    CALL("both params and extra", cuLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, 0, args, extra));
    CALL("sync", cuCtxSynchronize());
    MUST(cuMemcpyDtoH(h, buf, sizeof h));
    SAY("data %d %d %d", h[0], h[511], h[1023]);
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = 4; cfg.gridDimY = 1; cfg.gridDimZ = 1;
    cfg.blockDimX = 256; cfg.blockDimY = 1; cfg.blockDimZ = 1;
    CALL("launch-ex", cuLaunchKernelEx(&cfg, f, args, NULL));
    CALL("sync", cuCtxSynchronize());
    MUST(cuMemcpyDtoH(h, buf, sizeof h));
    SAY("data %d %d %d", h[0], h[511], h[1023]);
    CUfunction sh;
    MUST(cuModuleGetFunction(&sh, m, "shared_index"));
    int idx = 100;
    void *sargs[] = {&idx, &buf};
    CALL("dynamic shared in range", cuLaunchKernel(sh, 1, 1, 1, 32, 1, 1, 4096, 0, sargs, NULL));
    CALL("sync", cuCtxSynchronize());
    MUST(cuMemcpyDtoH(h, buf, 4));
    SAY("shared read back %d", h[0]);
    CUfunction gl;
    MUST(cuModuleGetFunction(&gl, m, "use_globals"));
    void *gargs[] = {&buf};
    CALL("globals kernel", cuLaunchKernel(gl, 2, 1, 1, 64, 1, 1, 0, 0, gargs, NULL));
    CALL("sync", cuCtxSynchronize());
    CUdeviceptr cp; size_t cs;
    MUST(cuModuleGetGlobal(&cp, &cs, m, "counter"));
    int c = 0;
    MUST(cuMemcpyDtoH(&c, cp, 4));
    MUST(cuMemcpyDtoH(h, buf, 16));
    SAY("counter %d, out %d %d %d %d", c, h[0], h[1], h[2], h[3]);
    MUST(cuCtxSetCurrent(NULL));
    CALL("launch without a context", cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, 0, args, NULL));
}

/* Calls the real driver may crash on, each alone. */
static void use_after_unload(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m = load_ptx();
    CUfunction f;
    MUST(cuModuleGetFunction(&f, m, "write_one"));
    CALL("unload", cuModuleUnload(m));
    CALL("get-function after unload", cuModuleGetFunction(&f, m, "write_one"));
    CALL("unload again", cuModuleUnload(m));
}
static void function_after_unload(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m = load_ptx();
    CUfunction f;
    MUST(cuModuleGetFunction(&f, m, "add_one"));
    CALL("unload", cuModuleUnload(m));
    CUdeviceptr buf = 0;
    int n = 0;
    void *args[] = {&buf, &n};
    CALL("launch a function of an unloaded module", cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, 0, args, NULL));
    CALL("sync", cuCtxSynchronize());
}
static void launch_without_params(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m = load_ptx();
    CUfunction f;
    MUST(cuModuleGetFunction(&f, m, "add_one"));
    CALL("no params at all", cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, 0, NULL, NULL));
    CALL("sync", cuCtxSynchronize());
}
static void launch_bad_stream(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m = load_ptx();
    CUfunction f;
    MUST(cuModuleGetFunction(&f, m, "add_one"));
    CUdeviceptr buf = 0;
    int n = 0;
    void *args[] = {&buf, &n};
    CALL("bad stream 0x10", cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, (CUstream)0x10, args, NULL));
}

/* After a fault: the calls a program makes next, and whether anything recovers. */
static void after_fault(CUcontext ctx, CUmodule m) {
    CALL("  sync", cuCtxSynchronize());
    CALL("  sync again", cuCtxSynchronize());
    CUdeviceptr p;
    CALL("  mem-alloc", cuMemAlloc(&p, 1 << 20));
    char b[16] = {0};
    CALL("  copy HtoD to a fresh cuMemAlloc? (none) use 0", cuMemcpyHtoD(0, b, 16));
    size_t fr, tot;
    CALL("  mem-info", cuMemGetInfo(&fr, &tot));
    CUdevice d;
    CALL("  ctx-get-device", cuCtxGetDevice(&d));
    CUfunction f;
    CALL("  get-function", cuModuleGetFunction(&f, m, "add_one"));
    CUstream s;
    CALL("  stream-create", cuStreamCreate(&s, 0));
    CUevent e;
    CALL("  event-create", cuEventCreate(&e, 0));
    CUdeviceptr va;
    CALL("  reserve", cuMemAddressReserve(&va, g, 0, 0, 0));
    CUmemAllocationProp pr = prop_dev(0, 0);
    CUmemGenericAllocationHandle h;
    CALL("  create", cuMemCreate(&h, g, &pr, 0));
    CALL("  map", cuMemMap(va, g, 0, h, 0));
    CUmemAccessDesc rw = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CALL("  set-access", cuMemSetAccess(va, g, &rw, 1));
    CALL("  copy into new VMM memory", cuMemcpyHtoD(va, b, 16));
    CALL("  module-load", cuModuleLoadData(&m, slurp("probe_kernels.ptx", NULL)));
    const char *str;
    CALL("  get-error-name", cuGetErrorName(CUDA_ERROR_ILLEGAL_ADDRESS, &str));
    CUcontext other = NULL;
    if (CALL("  ctx-create another", cuCtxCreate(&other, NULL, 0, 0)) == CUDA_SUCCESS) {
        CALL("  sync in the other", cuCtxSynchronize());
        CALL("  ctx-destroy the other", cuCtxDestroy(other));
    }
    CALL("  set-current the primary", cuCtxSetCurrent(ctx));
    CALL("  primary-reset", cuDevicePrimaryCtxReset(0));
    CUcontext again = NULL;
    if (CALL("  primary-retain", cuDevicePrimaryCtxRetain(&again, 0)) != CUDA_SUCCESS) return;
    SAY("  primary handle %s", again == ctx ? "the same" : "new");
    CALL("  set-current", cuCtxSetCurrent(again));
    CALL("  sync after reset", cuCtxSynchronize());
    CALL("  mem-alloc after reset", cuMemAlloc(&p, 1 << 20));
}

static CUresult launch1(CUmodule m, const char *name, void **args, unsigned threads, unsigned shared) {
    CUfunction f;
    MUST(cuModuleGetFunction(&f, m, name));
    return cuLaunchKernel(f, 1, 1, 1, threads, 1, 1, shared, 0, args, NULL);
}

static void fault_unmapped(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m = load_ptx();
    CUdeviceptr va;
    MUST(cuMemAddressReserve(&va, 2 * g, 0, 0, 0));
    int v = 3;
    void *args[] = {&va, &v};
    CALL("launch write_one into a reserved-only range", launch1(m, "write_one", args, 32, 0));
    after_fault(ctx, m);
}

static void fault_no_access(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m = load_ptx();
    CUdeviceptr va;
    CUmemGenericAllocationHandle h;
    CUmemAllocationProp p = prop_dev(0, 0);
    MUST(cuMemAddressReserve(&va, g, 0, 0, 0));
    MUST(cuMemCreate(&h, g, &p, 0));
    MUST(cuMemMap(va, g, 0, h, 0));
    int v = 3;
    void *args[] = {&va, &v};
    CALL("launch write_one into a mapping without access", launch1(m, "write_one", args, 32, 0));
    CALL("sync", cuCtxSynchronize());
    CALL("sync again", cuCtxSynchronize());
}

static void fault_read_only(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m = load_ptx();
    CUdeviceptr va, out;
    CUmemGenericAllocationHandle h;
    CUmemAllocationProp p = prop_dev(0, 0);
    MUST(cuMemAddressReserve(&va, g, 0, 0, 0));
    MUST(cuMemCreate(&h, g, &p, 0));
    MUST(cuMemMap(va, g, 0, h, 0));
    CUmemAccessDesc ro = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_READ);
    MUST(cuMemSetAccess(va, g, &ro, 1));
    MUST(cuMemAlloc(&out, 4096));
    void *rargs[] = {&va, &out};
    CALL("launch read_one from a read-only mapping", launch1(m, "read_one", rargs, 32, 0));
    CALL("sync", cuCtxSynchronize());
    int v = 3;
    void *args[] = {&va, &v};
    CALL("launch write_one into a read-only mapping", launch1(m, "write_one", args, 32, 0));
    CALL("sync", cuCtxSynchronize());
    CALL("sync again", cuCtxSynchronize());
}

static void fault_host_pointer(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m = load_ptx();
    int *host = calloc(64, sizeof(int));
    CUdeviceptr hp = (CUdeviceptr)(uintptr_t)host;
    int v = 3;
    void *args[] = {&hp, &v};
    CALL("launch write_one into malloc'd host memory", launch1(m, "write_one", args, 32, 0));
    CALL("sync", cuCtxSynchronize());
    SAY("host memory %s", host[0] == 3 ? "written" : "untouched");
}

static void fault_null(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m = load_ptx();
    CUdeviceptr z = 0;
    int v = 3;
    void *args[] = {&z, &v};
    CALL("launch write_one at NULL", launch1(m, "write_one", args, 32, 0));
    CALL("sync", cuCtxSynchronize());
}

static void fault_misaligned(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m = load_ptx();
    CUdeviceptr p;
    MUST(cuMemAlloc(&p, 4096));
    void *args[] = {&p};
    CALL("launch misaligned", launch1(m, "misaligned", args, 1, 0));
    CALL("sync", cuCtxSynchronize());
    CALL("sync again", cuCtxSynchronize());
}

static void fault_trap(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m = load_ptx();
    CUdeviceptr p;
    MUST(cuMemAlloc(&p, 4096));
    void *args[] = {&p};
    CALL("launch trap", launch1(m, "trap_kernel", args, 32, 0));
    CALL("sync", cuCtxSynchronize());
    CALL("sync again", cuCtxSynchronize());
}

static void fault_assert(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m = load_ptx();
    int x = 41;
    void *args[] = {&x};
    CALL("launch assert(x == 42) with 41", launch1(m, "assert_kernel", args, 1, 0));
    CALL("sync", cuCtxSynchronize());
    CALL("sync again", cuCtxSynchronize());
}

static void fault_shared(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m = load_ptx();
    CUdeviceptr p;
    MUST(cuMemAlloc(&p, 4096));
    int idx = 1 << 20;
    void *args[] = {&idx, &p};
    CALL("launch shared index 2^20 of 4 KiB", launch1(m, "shared_index", args, 32, 4096));
    CALL("sync", cuCtxSynchronize());
    CALL("sync again", cuCtxSynchronize());
}

static void fault_stream_sync(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m = load_ptx();
    CUdeviceptr va;
    MUST(cuMemAddressReserve(&va, 2 * g, 0, 0, 0));
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUfunction f;
    MUST(cuModuleGetFunction(&f, m, "write_one"));
    int v = 3;
    void *args[] = {&va, &v};
    CALL("launch on a stream into reserved-only", cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, args, NULL));
    CALL("stream-query", cuStreamQuery(s));
    CALL("stream-sync", cuStreamSynchronize(s));
    CUstream s2;
    CALL("stream-create", cuStreamCreate(&s2, 0));
    CALL("launch again", cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, args, NULL));
    CALL("stream-destroy", cuStreamDestroy(s));
    CALL("ctx-sync", cuCtxSynchronize());
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    dir = argc > 1 ? argv[1] : "clients/probes/kernels";
    section("module-loading", module_loading);
    section("launch-configs", launch_configs);
    section("use-after-unload", use_after_unload);
    section("function-after-unload", function_after_unload);
    section("launch-without-params", launch_without_params);
    section("launch-bad-stream", launch_bad_stream);
    section("fault-unmapped", fault_unmapped);
    section("fault-no-access", fault_no_access);
    section("fault-read-only", fault_read_only);
    section("fault-host-pointer", fault_host_pointer);
    section("fault-null", fault_null);
    section("fault-misaligned", fault_misaligned);
    section("fault-trap", fault_trap);
    section("fault-assert", fault_assert);
    section("fault-shared", fault_shared);
    section("fault-stream-sync", fault_stream_sync);
    section("kernel-attributes", kernel_attributes);
    section("profiler", profiler);
    return 0;
}
