/* Driver calls modern programs make (cuda.core, cudart's cudaFuncGetParamInfo and
 * cudaLibrary*, frameworks' cache and flag settings) that the mock emulated late: module,
 * library and kernel queries, context configuration, and small ones (available dynamic
 * shared memory, SYNC_MEMOPS, range attributes, CUdevprop, 1D linear texture width,
 * atomic capabilities, resource views). Each section takes normal use and edge inputs
 * (NULL out-parameters, bad handles, bad flags, out-of-range indices).
 *
 * Recorded on the H200 (clients/probes/goldens/NVIDIA_H200-580.159.04/api_gaps.txt) and
 * compared section by section (mock-driver/tests/probes.rs). The H200 crashed on a NULL
 * out-pointer or array in three sections; those calls are asked alone in sections run
 * last (*-null-crash, declared in divergences.txt), so that the rest runs. Questions
 * cuda.h leaves open that the recording settled (the mock answers as the H200):
 * cuFuncIsLoaded of an enumerated function under lazy loading; cuLibraryGetManaged of a
 * variable that is not managed, and with both outputs NULL; cuCtxSetFlags on the primary
 * context and cuDevicePrimaryCtxGetState; cuDeviceGetExecAffinitySupport;
 * cuOccupancyAvailableDynamicSMemPerBlock's rounding.
 * What those sections ask after the moved calls was recorded once they had moved: the
 * mock answers as the H200 there but for cuDeviceGetTexture1DLinearMaxWidth by element
 * size (declared). The word that is not device memory is asked last, as a GPU may fault.
 * No wait is left unsatisfied (it would hang the GPU's stream).
 * Functions and modules are not used after their module is unloaded (a crash-prone
 * question). No multicast API is called. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "probe.h"

static const char PTX[] =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    ".visible .global .attribute(.managed) .align 4 .u32 counter;\n"
    ".visible .global .align 8 .u64 plain;\n"
    ".visible .entry first(.param .u8 a, .param .u64 b, .param .align 16 .b8 c[24], .param .u32 d)\n"
    "{\n"
    "    ret;\n"
    "}\n"
    ".visible .entry second()\n"
    "{\n"
    "    .shared .align 4 .b8 buf[4096];\n"
    "    ret;\n"
    "}\n";

static const char *fname(CUfunction f) {
    const char *n = NULL;
    if (cuFuncGetName(&n, f) != CUDA_SUCCESS || !n) return "(no name)";
    return n;
}

static void param_info(CUfunction f, const char *who) {
    for (size_t i = 0; i < 5; i++) {
        size_t offset = SENTINEL, size = SENTINEL;
        char what[64];
        snprintf(what, sizeof what, "%s param %zu", who, i);
        if (CALL(what, cuFuncGetParamInfo(f, i, &offset, &size)) == CUDA_SUCCESS)
            SAY("offset %zu size %zu", offset, size);
        else {
            OUT(offset);
            OUT(size);
        }
    }
}

static void module_queries(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmoduleLoadingMode mode = (CUmoduleLoadingMode)0;
    CALL("loading mode", cuModuleGetLoadingMode(&mode));
    SAY("mode %d (CUDA_MODULE_LOADING %s)", (int)mode, getenv("CUDA_MODULE_LOADING") ? getenv("CUDA_MODULE_LOADING") : "unset");
    CUmodule m;
    MUST(cuModuleLoadData(&m, PTX));
    unsigned count = 99;
    CALL("function count", cuModuleGetFunctionCount(&count, m));
    SAY("count %u", count);
    CALL("function count, NULL", cuModuleGetFunctionCount(NULL, m));
    CALL("function count, NULL module", cuModuleGetFunctionCount(&count, NULL));
    CUfunction fs[3];
    FILL(fs);
    CALL("enumerate, room 3", cuModuleEnumerateFunctions(fs, 3, m));
    SAY("order: %s, %s", fname(fs[0]), fname(fs[1]));
    OUT(fs[2]);
    CUfunction first = NULL, second = NULL;
    MUST(cuModuleGetFunction(&first, m, "first"));
    SAY("cuModuleGetFunction's handle enumerated: %s", (fs[0] == first || fs[1] == first) ? "yes" : "no");
    CUfunction one[2];
    FILL(one);
    CALL("enumerate, room 1", cuModuleEnumerateFunctions(one, 1, m));
    SAY("first entry %s", one[0] == fs[0] ? "the same" : "other");
    OUT(one[1]);
    CALL("enumerate, room 0", cuModuleEnumerateFunctions(one, 0, m));
    CALL("enumerate, NULL array", cuModuleEnumerateFunctions(NULL, 2, m));
    CALL("enumerate, NULL module", cuModuleEnumerateFunctions(fs, 2, NULL));

    CUmodule owner = NULL;
    CALL("func get module", cuFuncGetModule(&owner, first));
    SAY("module %s", owner == m ? "the module" : "other");
    CALL("func get module, NULL out", cuFuncGetModule(NULL, first));
    CALL("func get module, NULL function", cuFuncGetModule(&owner, NULL));

    param_info(first, "first");
    MUST(cuModuleGetFunction(&second, m, "second"));
    param_info(second, "second");
    size_t offset = SENTINEL;
    CALL("param info, NULL size", cuFuncGetParamInfo(first, 1, &offset, NULL));
    SAY("offset %zu", offset);
    CALL("param info, NULL offset", cuFuncGetParamInfo(first, 1, NULL, NULL));
    CALL("param info, NULL function", cuFuncGetParamInfo(NULL, 0, &offset, NULL));
    CALL("param info, huge index", cuFuncGetParamInfo(first, (size_t)-1, &offset, NULL));
    cuModuleUnload(m);
}

static void loading_state(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m;
    MUST(cuModuleLoadData(&m, PTX));
    CUfunction fs[2];
    MUST(cuModuleEnumerateFunctions(fs, 2, m));
    for (int i = 0; i < 2; i++) {
        CUfunctionLoadingState s = (CUfunctionLoadingState)99;
        CALL("is loaded, enumerated", cuFuncIsLoaded(&s, fs[i]));
        SAY("%s: state %d", fname(fs[i]), (int)s);
    }
    CUfunction f = strcmp(fname(fs[0]), "second") == 0 ? fs[0] : fs[1];
    CUfunction g = f == fs[0] ? fs[1] : fs[0];
    CUfunctionLoadingState s = (CUfunctionLoadingState)99;
    CALL("load", cuFuncLoad(g));
    CALL("is loaded, after cuFuncLoad", cuFuncIsLoaded(&s, g));
    SAY("state %d", (int)s);
    CALL("load again", cuFuncLoad(g));
    CALL("launch second", cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CALL("synchronize", cuCtxSynchronize());
    CALL("is loaded, after a launch", cuFuncIsLoaded(&s, f));
    SAY("state %d", (int)s);
    CALL("is loaded, NULL out", cuFuncIsLoaded(NULL, f));
    CALL("is loaded, NULL function", cuFuncIsLoaded(&s, NULL));
    CALL("load, NULL function", cuFuncLoad(NULL));
    cuModuleUnload(m);
}

static void library_queries(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUlibrary lib;
    MUST(cuLibraryLoadData(&lib, PTX, NULL, NULL, 0, NULL, NULL, 0));
    unsigned count = 99;
    CALL("kernel count", cuLibraryGetKernelCount(&count, lib));
    SAY("count %u", count);
    CALL("kernel count, NULL", cuLibraryGetKernelCount(NULL, lib));
    CALL("kernel count, NULL library", cuLibraryGetKernelCount(&count, NULL));
    CUkernel ks[3];
    FILL(ks);
    CALL("enumerate kernels, room 3", cuLibraryEnumerateKernels(ks, 3, lib));
    OUT(ks[2]);
    CUkernel first = NULL;
    MUST(cuLibraryGetKernel(&first, lib, "first"));
    SAY("cuLibraryGetKernel's handle enumerated: %s", (ks[0] == first || ks[1] == first) ? "yes" : "no");
    CALL("enumerate kernels, NULL array", cuLibraryEnumerateKernels(NULL, 2, lib));
    CUlibrary owner = NULL;
    CALL("kernel get library", cuKernelGetLibrary(&owner, first));
    SAY("library %s", owner == lib ? "the library" : "other");
    CALL("kernel get library, NULL out", cuKernelGetLibrary(NULL, first));
    CALL("kernel get library, NULL kernel", cuKernelGetLibrary(&owner, NULL));
    for (size_t i = 0; i < 5; i++) {
        size_t offset = SENTINEL, size = SENTINEL;
        char what[64];
        snprintf(what, sizeof what, "kernel param %zu", i);
        if (CALL(what, cuKernelGetParamInfo(first, i, &offset, &size)) == CUDA_SUCCESS)
            SAY("offset %zu size %zu", offset, size);
    }
    size_t offset = SENTINEL;
    CALL("kernel param, NULL offset", cuKernelGetParamInfo(first, 0, NULL, NULL));
    CALL("kernel param, NULL kernel", cuKernelGetParamInfo(NULL, 0, &offset, NULL));

    CUdeviceptr dptr, global;
    size_t bytes, global_bytes;
    FILL(dptr);
    FILL(bytes);
    CALL("managed counter", cuLibraryGetManaged(&dptr, &bytes, lib, "counter"));
    SAY("bytes %zu", bytes);
    MUST(cuLibraryGetGlobal(&global, &global_bytes, lib, "counter"));
    SAY("same as cuLibraryGetGlobal: %s", global == dptr && global_bytes == bytes ? "yes" : "no");
    FILL(dptr);
    FILL(bytes);
    CALL("managed plain (not managed)", cuLibraryGetManaged(&dptr, &bytes, lib, "plain"));
    OUT(dptr);
    OUT(bytes);
    FILL(dptr);
    FILL(bytes);
    CALL("managed missing", cuLibraryGetManaged(&dptr, &bytes, lib, "missing"));
    OUT(dptr);
    OUT(bytes);
    CALL("managed, NULL dptr", cuLibraryGetManaged(NULL, &bytes, lib, "counter"));
    CALL("managed, NULL bytes", cuLibraryGetManaged(&dptr, NULL, lib, "counter"));
    CALL("managed, both NULL", cuLibraryGetManaged(NULL, NULL, lib, "counter"));
    CALL("managed, NULL name", cuLibraryGetManaged(&dptr, &bytes, lib, NULL));
    CALL("managed, NULL library", cuLibraryGetManaged(&dptr, &bytes, NULL, "counter"));
    void *fp = (void *)SENTINEL;
    CALL("unified function first", cuLibraryGetUnifiedFunction(&fp, lib, "first"));
    OUT(fp);
    CALL("unified function missing", cuLibraryGetUnifiedFunction(&fp, lib, "missing"));
    CALL("unified function, NULL out", cuLibraryGetUnifiedFunction(NULL, lib, "first"));
    CALL("unified function, NULL library", cuLibraryGetUnifiedFunction(&fp, NULL, "first"));
    cuLibraryUnload(lib);
}

static void context_config(void) {
    CUfunc_cache c = (CUfunc_cache)99;
    MUST(cuInit(0));
    CALL("cache config, no context", cuCtxGetCacheConfig(&c));
    CUcontext ctx;
    init_primary(0, &ctx);
    CALL("cache config", cuCtxGetCacheConfig(&c));
    SAY("config %d", (int)c);
    for (int v = 0; v <= 4; v++) {
        char what[64];
        snprintf(what, sizeof what, "set cache config %d", v);
        if (CALL(what, cuCtxSetCacheConfig((CUfunc_cache)v)) == CUDA_SUCCESS) {
            c = (CUfunc_cache)99;
            CALL("  read back", cuCtxGetCacheConfig(&c));
            SAY("config %d", (int)c);
        }
    }
    CALL("cache config, NULL", cuCtxGetCacheConfig(NULL));

    CUsharedconfig sc = (CUsharedconfig)99;
    CALL("shared config", cuCtxGetSharedMemConfig(&sc));
    SAY("config %d", (int)sc);
    for (int v = 0; v <= 3; v++) {
        char what[64];
        snprintf(what, sizeof what, "set shared config %d", v);
        if (CALL(what, cuCtxSetSharedMemConfig((CUsharedconfig)v)) == CUDA_SUCCESS) {
            sc = (CUsharedconfig)99;
            CALL("  read back", cuCtxGetSharedMemConfig(&sc));
            SAY("config %d", (int)sc);
        }
    }
    CALL("shared config, NULL", cuCtxGetSharedMemConfig(NULL));
    CUmodule m;
    CUfunction f;
    MUST(cuModuleLoadData(&m, PTX));
    MUST(cuModuleGetFunction(&f, m, "first"));
    CALL("func shared config 2", cuFuncSetSharedMemConfig(f, CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE));
    CALL("func shared config 3", cuFuncSetSharedMemConfig(f, (CUsharedconfig)3));
    CALL("func shared config, NULL function", cuFuncSetSharedMemConfig(NULL, CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE));

    unsigned flags = 99;
    CALL("ctx flags", cuCtxGetFlags(&flags));
    SAY("flags %#x", flags);
    unsigned tries[] = {CU_CTX_SCHED_BLOCKING_SYNC, CU_CTX_SCHED_SPIN | CU_CTX_SYNC_MEMOPS, CU_CTX_LMEM_RESIZE_TO_MAX, 3, 0x100, 0};
    for (unsigned i = 0; i < sizeof tries / sizeof *tries; i++) {
        char what[64];
        snprintf(what, sizeof what, "set flags %#x", tries[i]);
        if (CALL(what, cuCtxSetFlags(tries[i])) == CUDA_SUCCESS) {
            flags = 99;
            CALL("  read back", cuCtxGetFlags(&flags));
            unsigned pflags = 99;
            int active = -1;
            CALL("  primary state", cuDevicePrimaryCtxGetState(0, &pflags, &active));
            SAY("flags %#x, primary flags %#x active %d", flags, pflags, active);
        }
    }

    CUexecAffinityParam p;
    FILL(p);
    int sms = 0;
    MUST(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
    if (CALL("exec affinity SM count", cuCtxGetExecAffinity(&p, CU_EXEC_AFFINITY_TYPE_SM_COUNT)) == CUDA_SUCCESS)
        SAY("type %d, SMs %u (the device has %d)", (int)p.type, p.param.smCount.val, sms);
    CALL("exec affinity, type 1", cuCtxGetExecAffinity(&p, (CUexecAffinityType)1));
    CALL("exec affinity, NULL", cuCtxGetExecAffinity(NULL, CU_EXEC_AFFINITY_TYPE_SM_COUNT));
    int supported = 99;
    CALL("affinity support", cuDeviceGetExecAffinitySupport(&supported, CU_EXEC_AFFINITY_TYPE_SM_COUNT, 0));
    SAY("supported %d", supported);
    CALL("affinity support, type 1", cuDeviceGetExecAffinitySupport(&supported, (CUexecAffinityType)1, 0));
    CALL("affinity support, device 7", cuDeviceGetExecAffinitySupport(&supported, CU_EXEC_AFFINITY_TYPE_SM_COUNT, 7));
    CALL("affinity support, NULL", cuDeviceGetExecAffinitySupport(NULL, CU_EXEC_AFFINITY_TYPE_SM_COUNT, 0));

    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUcontext sc_ctx = NULL;
    CUgreenCtx green = (CUgreenCtx)SENTINEL;
    CALL("stream ctx v2", cuStreamGetCtx_v2(s, &sc_ctx, &green));
    SAY("ctx %s", sc_ctx == ctx ? "the primary" : "other");
    OUT(green);
    CALL("stream ctx v2, NULL ctx", cuStreamGetCtx_v2(s, NULL, &green));
    CALL("stream ctx v2, NULL green", cuStreamGetCtx_v2(s, &sc_ctx, NULL));
    CALL("stream ctx v2, both NULL", cuStreamGetCtx_v2(s, NULL, NULL));
    CALL("stream ctx v2, NULL stream", cuStreamGetCtx_v2(NULL, &sc_ctx, &green));
    SAY("ctx %s", sc_ctx == ctx ? "the primary" : "other");
    cuStreamDestroy(s);
    cuModuleUnload(m);
}

static void small_ones(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m;
    CUfunction f;
    MUST(cuModuleLoadData(&m, PTX));
    MUST(cuModuleGetFunction(&f, m, "second"));
    int shapes[][2] = {{1, 128}, {2, 256}, {3, 64}, {8, 32}, {16, 128}, {32, 64}, {64, 1024}, {0, 32}, {1, 0}, {1, 2048}};
    for (unsigned i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        size_t smem = SENTINEL;
        char what[80];
        snprintf(what, sizeof what, "available smem, %d blocks of %d", shapes[i][0], shapes[i][1]);
        if (CALL(what, cuOccupancyAvailableDynamicSMemPerBlock(&smem, f, shapes[i][0], shapes[i][1])) == CUDA_SUCCESS)
            SAY("%zu bytes", smem);
    }
    size_t smem;
    CALL("available smem, NULL function", cuOccupancyAvailableDynamicSMemPerBlock(&smem, NULL, 1, 32));

    CUdeviceptr p;
    MUST(cuMemAlloc(&p, 1 << 20));
    unsigned v = 99, one = 1, zero = 0;
    CALL("sync memops", cuPointerGetAttribute(&v, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p));
    SAY("value %u", v);
    CALL("set sync memops", cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p + 4096));
    CALL("  read back at the base", cuPointerGetAttribute(&v, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p));
    SAY("value %u", v);
    CALL("set sync memops 0", cuPointerSetAttribute(&zero, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p));
    CALL("  read back", cuPointerGetAttribute(&v, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p));
    SAY("value %u", v);
    CALL("set CONTEXT", cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_CONTEXT, p));
    CALL("set sync memops, NULL value", cuPointerSetAttribute(NULL, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p));
    CALL("set sync memops, unknown pointer", cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, 0x1000));
    cuMemFree(p);

    CUdeviceptr mp;
    MUST(cuMemAllocManaged(&mp, 2 << 20, CU_MEM_ATTACH_GLOBAL));
    CUmemLocation loc = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    MUST(cuMemAdvise(mp, 2 << 20, CU_MEM_ADVISE_SET_READ_MOSTLY, loc));
    int read_mostly = 99, accessed[2] = {99, 99};
    void *data[2] = {&read_mostly, accessed};
    size_t sizes[2] = {4, 8};
    CUmem_range_attribute attrs[2] = {CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY};
    CALL("range attributes", cuMemRangeGetAttributes(data, sizes, attrs, 2, mp, 2 << 20));
    SAY("read mostly %d, accessed by %d %d", read_mostly, accessed[0], accessed[1]);
    sizes[0] = 3;
    CALL("range attributes, size 3", cuMemRangeGetAttributes(data, sizes, attrs, 2, mp, 2 << 20));
    sizes[0] = 4;
    attrs[1] = (CUmem_range_attribute)99;
    CALL("range attributes, attribute 99", cuMemRangeGetAttributes(data, sizes, attrs, 2, mp, 2 << 20));
    attrs[1] = CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY;
    CALL("range attributes, 0 of them", cuMemRangeGetAttributes(data, sizes, attrs, 0, mp, 2 << 20));
    CALL("range attributes, NULL data", cuMemRangeGetAttributes(NULL, sizes, attrs, 2, mp, 2 << 20));
    CALL("range attributes, NULL sizes", cuMemRangeGetAttributes(data, NULL, attrs, 2, mp, 2 << 20));
    CALL("range attributes, NULL attributes", cuMemRangeGetAttributes(data, sizes, NULL, 2, mp, 2 << 20));
    CALL("range attributes, not managed", cuMemRangeGetAttributes(data, sizes, attrs, 2, 0x1000, 4096));
    cuMemFree(mp);

    CUdevprop prop;
    FILL(prop);
    if (CALL("device properties", cuDeviceGetProperties(&prop, 0)) == CUDA_SUCCESS) {
        SAY("threads %d dims %d %d %d grid %d %d %d", prop.maxThreadsPerBlock, prop.maxThreadsDim[0], prop.maxThreadsDim[1], prop.maxThreadsDim[2], prop.maxGridSize[0], prop.maxGridSize[1], prop.maxGridSize[2]);
        SAY("shared %d const %d simd %d pitch %d regs %d clock %d texalign %d", prop.sharedMemPerBlock, prop.totalConstantMemory, prop.SIMDWidth, prop.memPitch, prop.regsPerBlock, prop.clockRate, prop.textureAlign);
    }
    CALL("device properties, NULL", cuDeviceGetProperties(NULL, 0));
    CALL("device properties, device 9", cuDeviceGetProperties(&prop, 9));

    struct { CUarray_format f; unsigned ch; } elems[] = {
        {CU_AD_FORMAT_UNSIGNED_INT8, 1}, {CU_AD_FORMAT_UNSIGNED_INT8, 4}, {CU_AD_FORMAT_HALF, 2},
        {CU_AD_FORMAT_FLOAT, 1}, {CU_AD_FORMAT_FLOAT, 4}, {CU_AD_FORMAT_FLOAT, 3},
        {CU_AD_FORMAT_FLOAT, 0}, {(CUarray_format)0, 1}, {(CUarray_format)0x77, 1}};
    for (unsigned i = 0; i < sizeof elems / sizeof *elems; i++) {
        size_t w = SENTINEL;
        char what[80];
        snprintf(what, sizeof what, "1D linear width, format %#x x%u", (unsigned)elems[i].f, elems[i].ch);
        if (CALL(what, cuDeviceGetTexture1DLinearMaxWidth(&w, elems[i].f, elems[i].ch, 0)) == CUDA_SUCCESS)
            SAY("%zu elements", w);
    }
    size_t w;
    CALL("1D linear width, NULL", cuDeviceGetTexture1DLinearMaxWidth(NULL, CU_AD_FORMAT_FLOAT, 1, 0));
    CALL("1D linear width, device 9", cuDeviceGetTexture1DLinearMaxWidth(&w, CU_AD_FORMAT_FLOAT, 1, 9));

    CUatomicOperation ops[13];
    unsigned caps[13];
    for (int i = 0; i < 13; i++) ops[i] = (CUatomicOperation)i;
    memset(caps, 0xA5, sizeof caps);
    if (CALL("host atomic capabilities", cuDeviceGetHostAtomicCapabilities(caps, ops, 13, 0)) == CUDA_SUCCESS)
        for (int i = 0; i < 13; i++) SAY("operation %d: %#x", i, caps[i]);
    CUatomicOperation bad = (CUatomicOperation)13;
    CALL("host atomics, operation 13", cuDeviceGetHostAtomicCapabilities(caps, &bad, 1, 0));
    CALL("host atomics, count 0", cuDeviceGetHostAtomicCapabilities(caps, ops, 0, 0));
    CALL("host atomics, NULL capabilities", cuDeviceGetHostAtomicCapabilities(NULL, ops, 1, 0));
    CALL("host atomics, NULL operations", cuDeviceGetHostAtomicCapabilities(caps, NULL, 1, 0));
    CALL("host atomics, device 9", cuDeviceGetHostAtomicCapabilities(caps, ops, 1, 9));
    CALL("p2p atomics, device 0 and itself", cuDeviceGetP2PAtomicCapabilities(caps, ops, 1, 0, 0));
    CALL("p2p atomics, device 0 and 9", cuDeviceGetP2PAtomicCapabilities(caps, ops, 1, 0, 9));

    CUdeviceptr lin;
    MUST(cuMemAlloc(&lin, 4096));
    CUDA_RESOURCE_DESC res;
    memset(&res, 0, sizeof res);
    res.resType = CU_RESOURCE_TYPE_LINEAR;
    res.res.linear.devPtr = lin;
    res.res.linear.format = CU_AD_FORMAT_FLOAT;
    res.res.linear.numChannels = 1;
    res.res.linear.sizeInBytes = 4096;
    CUDA_TEXTURE_DESC tex;
    memset(&tex, 0, sizeof tex);
    CUtexObject t;
    MUST(cuTexObjectCreate(&t, &res, &tex, NULL));
    CUDA_RESOURCE_VIEW_DESC view;
    FILL(view);
    CALL("resource view of a texture made without one", cuTexObjectGetResourceViewDesc(&view, t));
    SAY("format field %s", view.format == (CUresourceViewFormat)0xA5A5A5A5 ? "untouched" : "written");
    CALL("resource view, NULL out", cuTexObjectGetResourceViewDesc(NULL, t));
    cuTexObjectDestroy(t);
    cuMemFree(lin);
    cuModuleUnload(m);
}

static void stream_memops(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    const CUdevice_attribute attrs[] = {
        CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1,
        CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS,
        CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES};
    for (unsigned i = 0; i < sizeof attrs / sizeof *attrs; i++) {
        int v = -1;
        cuDeviceGetAttribute(&v, attrs[i], 0);
        SAY("attribute %d = %d", (int)attrs[i], v);
    }
    CUstream a, b;
    MUST(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
    MUST(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
    CUdeviceptr p;
    MUST(cuMemAlloc(&p, 64));
    MUST(cuMemsetD32(p, 0, 16));
    MUST(cuCtxSynchronize());
    CUdeviceptr flag = p, result = p + 8;
    CALL("wait32 GEQ 3", cuStreamWaitValue32_v2(a, flag, 3, CU_STREAM_WAIT_VALUE_GEQ));
    CALL("write32 after it", cuStreamWriteValue32_v2(a, result, 7, 0));
    usleep(20000);
    CALL("query while waiting", cuStreamQuery(a));
    CALL("write32 2 on b", cuStreamWriteValue32_v2(b, flag, 2, 0));
    MUST(cuStreamSynchronize(b));
    usleep(20000);
    CALL("query, 2 < 3", cuStreamQuery(a));
    CALL("write32 3 on b", cuStreamWriteValue32_v2(b, flag, 3, 0));
    CALL("synchronize a", cuStreamSynchronize(a));
    unsigned w[6] = {0};
    MUST(cuMemcpyDtoH(w, p, sizeof w));
    SAY("flag %u result %u", w[0], w[2]);
    CALL("write64", cuStreamWriteValue64_v2(b, p + 16, 0x100000002ull, 0));
    CALL("wait64 EQ", cuStreamWaitValue64_v2(a, p + 16, 0x100000002ull, CU_STREAM_WAIT_VALUE_EQ));
    CALL("wait32 AND", cuStreamWaitValue32_v2(a, flag, 2, CU_STREAM_WAIT_VALUE_AND));
    CALL("wait32 NOR", cuStreamWaitValue32_v2(a, flag, ~7u, CU_STREAM_WAIT_VALUE_NOR));
    CALL("wait32 GEQ cyclic", cuStreamWaitValue32_v2(a, flag, 0xfffffff0u, CU_STREAM_WAIT_VALUE_GEQ));
    CALL("write32 8", cuStreamWriteValue32_v2(a, result, 8, 0));
    CALL("synchronize a", cuStreamSynchronize(a));
    MUST(cuMemcpyDtoH(w, p, sizeof w));
    SAY("result %u, 64-bit word %#x %#x", w[2], w[4], w[5]);

    unsigned *host = NULL;
    MUST(cuMemHostAlloc((void **)&host, 4096, CU_MEMHOSTALLOC_DEVICEMAP));
    host[0] = 0;
    host[1] = 0;
    CUdeviceptr hd = 0;
    MUST(cuMemHostGetDevicePointer(&hd, host, 0));
    CALL("wait on page-locked memory", cuStreamWaitValue32_v2(a, hd, 5, CU_STREAM_WAIT_VALUE_EQ));
    CALL("write page-locked memory", cuStreamWriteValue32_v2(a, hd + 4, 11, 0));
    usleep(20000);
    CALL("query before the host writes", cuStreamQuery(a));
    *(volatile unsigned *)host = 5;
    CALL("synchronize a", cuStreamSynchronize(a));
    SAY("host word %u", ((volatile unsigned *)host)[1]);

    CALL("write32 misaligned", cuStreamWriteValue32_v2(a, p + 2, 1, 0));
    CALL("write64 misaligned", cuStreamWriteValue64_v2(a, p + 4, 1, 0));
    CALL("wait32 condition 4", cuStreamWaitValue32_v2(a, flag, 1, 4));
    CALL("wait32 FLUSH", cuStreamWaitValue32_v2(a, flag, 1, CU_STREAM_WAIT_VALUE_GEQ | CU_STREAM_WAIT_VALUE_FLUSH));
    CALL("write32 v2 NO_MEMORY_BARRIER", cuStreamWriteValue32_v2(a, result, 1, CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER));
    CALL("write32 flags 2", cuStreamWriteValue32_v2(a, result, 1, 2));
    /* cuda.h's names are the _v2 exports: the v1 ones by their symbols. */
    typedef CUresult (*op32)(CUstream, CUdeviceptr, cuuint32_t, unsigned);
    typedef CUresult (*op64)(CUstream, CUdeviceptr, cuuint64_t, unsigned);
    op32 v1_write32 = (op32)dlsym(RTLD_DEFAULT, "cuStreamWriteValue32");
    op32 v1_wait32 = (op32)dlsym(RTLD_DEFAULT, "cuStreamWaitValue32");
    op64 v1_write64 = (op64)dlsym(RTLD_DEFAULT, "cuStreamWriteValue64");
    if (v1_write32 && v1_wait32 && v1_write64) {
        CALL("v1 write32", v1_write32(a, result, 12, 0));
        CALL("v1 write32 NO_MEMORY_BARRIER", v1_write32(a, result, 12, CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER));
        CALL("v1 wait32, satisfied", v1_wait32(a, result, 0, CU_STREAM_WAIT_VALUE_GEQ));
        CALL("v1 write64", v1_write64(a, p + 16, 1, 0));
    } else
        SAY("no v1 exports");
    CALL("synchronize a", cuStreamSynchronize(a));
    CALL("write32 on the legacy stream", cuStreamWriteValue32_v2(NULL, result, 13, 0));
    CALL("synchronize", cuCtxSynchronize());
    MUST(cuMemcpyDtoH(w, p, sizeof w));
    SAY("result %u", w[2]);
    CUstreamBatchMemOpParams ops[3];
    memset(ops, 0, sizeof ops);
    MUST(cuMemsetD32(p, 0, 16));
    MUST(cuCtxSynchronize());
    ops[0].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
    ops[0].waitValue.address = flag;
    ops[0].waitValue.value = 1;
    ops[0].waitValue.flags = CU_STREAM_WAIT_VALUE_EQ;
    ops[1].memoryBarrier.operation = CU_STREAM_MEM_OP_BARRIER;
    ops[1].memoryBarrier.flags = CU_STREAM_MEMORY_BARRIER_TYPE_GPU;
    ops[2].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
    ops[2].writeValue.address = p + 16;
    ops[2].writeValue.value64 = 0x700000005ull;
    CALL("batch: wait, barrier, write64", cuStreamBatchMemOp_v2(a, 3, ops, 0));
    usleep(20000);
    CALL("query while the batch waits", cuStreamQuery(a));
    CUstreamBatchMemOpParams w1;
    memset(&w1, 0, sizeof w1);
    w1.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
    w1.writeValue.address = flag;
    w1.writeValue.value = 1;
    CALL("batch on b: write32", cuStreamBatchMemOp_v2(b, 1, &w1, 0));
    CALL("synchronize a", cuStreamSynchronize(a));
    MUST(cuMemcpyDtoH(w, p, sizeof w));
    SAY("64-bit word %#x %#x", w[4], w[5]);
    CUstreamBatchMemOpParams bad[2];
    memset(bad, 0, sizeof bad);
    bad[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
    bad[0].writeValue.address = p + 8;
    bad[0].writeValue.value = 9;
    bad[1] = bad[0];
    bad[1].writeValue.address = p + 2;
    CALL("batch, second misaligned", cuStreamBatchMemOp_v2(a, 2, bad, 0));
    CALL("synchronize a", cuStreamSynchronize(a));
    MUST(cuMemcpyDtoH(w, p, sizeof w));
    SAY("first write %s", w[2] == 9 ? "done" : "not done");
    CALL("batch, flags 1", cuStreamBatchMemOp_v2(a, 1, &w1, 1));
    CALL("batch, count 0", cuStreamBatchMemOp_v2(a, 0, &w1, 0));
    CUstreamBatchMemOpParams odd;
    memset(&odd, 0, sizeof odd);
    odd.operation = (CUstreamBatchMemOpType)7;
    CALL("batch, operation 7", cuStreamBatchMemOp_v2(a, 1, &odd, 0));
    odd.flushRemoteWrites.operation = CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES;
    CALL("batch, flush remote writes", cuStreamBatchMemOp_v2(a, 1, &odd, 0));
    odd.memoryBarrier.operation = CU_STREAM_MEM_OP_BARRIER;
    odd.memoryBarrier.flags = 2;
    CALL("batch, barrier flags 2", cuStreamBatchMemOp_v2(a, 1, &odd, 0));
    typedef CUresult (*batch_fn)(CUstream, unsigned, CUstreamBatchMemOpParams *, unsigned);
    batch_fn v1_batch = (batch_fn)dlsym(RTLD_DEFAULT, "cuStreamBatchMemOp");
    if (v1_batch) CALL("v1 batch", v1_batch(a, 1, &w1, 0));
    CALL("synchronize a", cuStreamSynchronize(a));
    CALL("write32 to no memory", cuStreamWriteValue32_v2(a, 0x1000, 1, 0));
    CALL("synchronize a", cuStreamSynchronize(a));
    cuMemFreeHost(host);
}

/* The calls the H200 crashed on (SIGSEGV), each alone in a section run last, so that the
 * sections they came from run to their end. */
static void module_queries_null_crash(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CALL("loading mode, NULL", cuModuleGetLoadingMode(NULL));
}

static void small_ones_null_crash(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m;
    CUfunction f;
    MUST(cuModuleLoadData(&m, PTX));
    MUST(cuModuleGetFunction(&f, m, "second"));
    CALL("available smem, NULL", cuOccupancyAvailableDynamicSMemPerBlock(NULL, f, 1, 32));
    cuModuleUnload(m);
}

static void stream_memops_null_crash(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUstream a;
    MUST(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
    CALL("batch, NULL array", cuStreamBatchMemOp_v2(a, 1, NULL, 0));
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    section("module-queries", module_queries);
    section("loading-state", loading_state);
    section("library-queries", library_queries);
    section("context-config", context_config);
    section("small-ones", small_ones);
    section("stream-memops", stream_memops);
    section("module-queries-null-crash", module_queries_null_crash);
    section("small-ones-null-crash", small_ones_null_crash);
    section("stream-memops-null-crash", stream_memops_null_crash);
    return 0;
}
