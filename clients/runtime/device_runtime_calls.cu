// nvcc-options: -rdc=true -lcudadevrt
// The device runtime's queries and 2D/3D copies, called from a kernel (CDP2, CUDA 13's
// cuda_device_runtime_api.h): cudaDeviceGetLimit for every cudaLimit, the cache and
// shared-memory configurations, cudaGetDeviceCount/cudaGetDevice, cudaRuntimeGetVersion,
// cudaDeviceGetAttribute, cudaFuncGetAttributes and the occupancy calls, each compared
// with what the host's runtime answers; cudaMemcpy2DAsync, cudaMemcpy3DAsync,
// cudaMemset2DAsync, cudaMemset3DAsync and their errors; cudaEventRecord,
// cudaStreamWaitEvent, cudaPeekAtLastError and cudaGetLastError. (The header declares
// cudaEventRecordWithFlags for the device, but CUDA 13.0's libcudadevrt.a does not
// define __cudaCDP2EventRecordWithFlags: nvlink refuses a program calling it.)
#include "common.h"

__global__ void __launch_bounds__(256) target(int *p) {
    __shared__ int tile[64];
    tile[threadIdx.x % 64] = threadIdx.x;
    __syncthreads();
    p[threadIdx.x] = tile[(threadIdx.x + 1) % 64];
}

__device__ int helper(int x) { return x * 3; }

// What the kernel found: each call's cudaError_t and its answer.
struct Answers {
    int limit_err[8];
    unsigned long long limit[8];
    int cache_err, cache, shmem_err, shmem;
    int count_err, count, device_err, device, version_err, version;
    int attr_err[6], attr[6];
    int func_err, func_not_kernel_err;
    cudaFuncAttributes func;
    int occ_err, occ, occ_flags_err, occ_flags, occ_bad_err;
    int peek, last, last_again;
};

__global__ void queries(Answers *a) {
    for (int l = 0; l < 8; l++) {
        size_t v = 12345;
        a->limit_err[l] = cudaDeviceGetLimit(&v, (cudaLimit)l);
        a->limit[l] = v;
    }
    cudaFuncCache c = (cudaFuncCache)77;
    a->cache_err = cudaDeviceGetCacheConfig(&c);
    a->cache = c;
#pragma nv_diag_suppress 1444
    cudaSharedMemConfig s = (cudaSharedMemConfig)77;
    a->shmem_err = cudaDeviceGetSharedMemConfig(&s);
    a->shmem = s;
    a->count = -1;
    a->count_err = cudaGetDeviceCount(&a->count);
    a->device = -1;
    a->device_err = cudaGetDevice(&a->device);
    a->version = -1;
    a->version_err = cudaRuntimeGetVersion(&a->version);
    const cudaDeviceAttr attrs[4] = {cudaDevAttrMaxThreadsPerBlock, cudaDevAttrMultiProcessorCount,
                                     cudaDevAttrComputeCapabilityMajor, cudaDevAttrL2CacheSize};
    for (int i = 0; i < 4; i++) {
        a->attr[i] = -1;
        a->attr_err[i] = cudaDeviceGetAttribute(&a->attr[i], attrs[i], 0);
    }
    a->attr_err[4] = cudaDeviceGetAttribute(&a->attr[4], (cudaDeviceAttr)100000, 0);
    a->attr_err[5] = cudaDeviceGetAttribute(&a->attr[5], cudaDevAttrMaxThreadsPerBlock, 7);
    a->func_err = cudaFuncGetAttributes(&a->func, (const void *)target);
    cudaFuncAttributes scratch;
    a->func_not_kernel_err = cudaFuncGetAttributes(&scratch, (const void *)helper);
    a->occ_err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&a->occ, (const void *)target, 128, 0);
    a->occ_flags_err = cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        &a->occ_flags, (const void *)target, 256, 4096, cudaOccupancyDisableCachingOverride);
    int unused;
    a->occ_bad_err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&unused, (const void *)helper, 128, 0);
    a->peek = cudaPeekAtLastError();
    a->last = cudaGetLastError();
    a->last_again = cudaGetLastError();
}

__global__ void fill(unsigned char *p, int n) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) p[i] = (unsigned char)(i * 7 + 1);
}

__device__ cudaPitchedPtr pitched(void *p, size_t pitch, size_t x, size_t y) {
    cudaPitchedPtr r;
    r.ptr = p;
    r.pitch = pitch;
    r.xsize = x;
    r.ysize = y;
    return r;
}

__device__ cudaExtent extent(size_t w, size_t h, size_t d) {
    cudaExtent r;
    r.width = w;
    r.height = h;
    r.depth = d;
    return r;
}

// src: 4 slices of 4 rows of 32 bytes, filled by a child first (the copies follow it in
// the NULL stream's order). dst2: 5 rows of 8 bytes from 5 rows of 16 bytes at (3, 0).
// dst3: 3 slices of 2 rows of 6 bytes of a 12-byte pitch, from (2, 1, 1). set2: 3 rows
// of 5 bytes of a 10-byte pitch; set3: 2 slices of 2 rows of 3 bytes of a 4-byte pitch.
__global__ void copies(unsigned char *src, unsigned char *dst2, unsigned char *dst3,
                       unsigned char *set2, unsigned char *set3, int *err) {
    fill<<<1, 64>>>(src, 512);
    err[0] = cudaMemcpy2DAsync(dst2, 8, src + 3, 32, 8, 5, cudaMemcpyDeviceToDevice, 0);
    err[1] = cudaMemcpy2DAsync(dst2, 4, src, 32, 8, 5, cudaMemcpyDeviceToDevice, 0);
    err[2] = cudaMemcpy2DAsync(dst2, 8, src, 32, 8, 5, cudaMemcpyHostToDevice, 0);
    cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.srcPtr = pitched(src, 32, 32, 4);
    p.srcPos.x = 2;
    p.srcPos.y = 1;
    p.srcPos.z = 1;
    p.dstPtr = pitched(dst3, 12, 12, 2);
    p.extent = extent(6, 2, 3);
    p.kind = cudaMemcpyDefault;
    err[3] = cudaMemcpy3DAsync(&p, 0);
    err[4] = cudaMemset2DAsync(set2, 10, 0x5a, 5, 3, 0);
    err[5] = cudaMemset3DAsync(pitched(set3, 4, 4, 2), 0xa5, extent(3, 2, 2), 0);
    err[6] = cudaMemset2DAsync(set2, 4, 0x5a, 5, 3, 0);
    p.kind = cudaMemcpyDeviceToHost;
    err[7] = cudaMemcpy3DAsync(&p, 0);
    // Zero rows: nothing to do.
    err[8] = cudaMemcpy2DAsync(dst2, 8, src, 32, 8, 0, cudaMemcpyDeviceToDevice, 0);
    err[9] = cudaGetLastError();
}

// Events and waits made on the device.
__global__ void events(int *err) {
    cudaStream_t s;
    cudaEvent_t e;
    err[0] = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    err[1] = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    err[2] = cudaEventRecord(e, s);
    err[3] = cudaStreamWaitEvent(0, e, 0);
    // (No record of an event that is none: the H200's device runtime takes the handle
    // as its event's address and faults, cudaErrorIllegalAddress, as it did when this
    // program asked it.)
    err[4] = cudaStreamWaitEvent(0, e, 7);
    err[5] = cudaEventDestroy(e);
    err[6] = cudaStreamDestroy(s);
    err[7] = cudaGetLastError();
}

static const char *name(int e) { return cudaGetErrorName((cudaError_t)e); }

int main(void) {
    T(cudaDeviceSetLimit(cudaLimitStackSize, 4096));
    T(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 4096));
    T(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));
    T(cudaFuncSetAttribute(target, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536));
    T(cudaFuncSetAttribute(target, cudaFuncAttributePreferredSharedMemoryCarveout, 50));

    Answers *a = NULL;
    T(cudaMallocManaged(&a, sizeof *a));
    NEED(a);
    memset(a, 0, sizeof *a);
    queries<<<1, 1>>>(a);
    T(cudaGetLastError());
    T(cudaDeviceSynchronize());

    const char *limits[8] = {"cudaLimitStackSize", "cudaLimitPrintfFifoSize",
                             "cudaLimitMallocHeapSize", "cudaLimitDevRuntimeSyncDepth",
                             "cudaLimitDevRuntimePendingLaunchCount",
                             "cudaLimitMaxL2FetchGranularity", "cudaLimitPersistingL2CacheSize",
                             "limit 7"};
    printf("cudaDeviceGetLimit on the device, each limit, then the host's answer\n");
    for (int l = 0; l < 8; l++) {
        size_t host = 12345;
        cudaError_t he = cudaDeviceGetLimit(&host, (cudaLimit)l);
        if (a->limit_err[l] == cudaSuccess)
            OUT("%s: %s %llu (host: %s %s)", limits[l], name(a->limit_err[l]), a->limit[l],
                name(he), he == cudaSuccess && host == a->limit[l] ? "the same" : "differs");
        else
            OUT("%s: %s (host: %s)", limits[l], name(a->limit_err[l]), name(he));
        if (he == cudaSuccess && a->limit_err[l] == cudaSuccess) CHECK(host == a->limit[l]);
    }
    T(cudaGetLastError());  // the host's refusals above
    cudaFuncCache hc;
    T(cudaDeviceGetCacheConfig(&hc));
    printf("cudaDeviceGetCacheConfig on the device\n");
    OUT("%s %d (host %d)", name(a->cache_err), a->cache, (int)hc);
    printf("cudaDeviceGetSharedMemConfig on the device\n");
    OUT("%s %d", name(a->shmem_err), a->shmem);
    int hcount = 0, hdev = -1, hver = 0;
    T(cudaGetDeviceCount(&hcount));
    T(cudaGetDevice(&hdev));
    T(cudaRuntimeGetVersion(&hver));
    printf("cudaGetDeviceCount, cudaGetDevice, cudaRuntimeGetVersion on the device\n");
    OUT("count: %s %s the host's", name(a->count_err), a->count == hcount ? "equals" : "differs from");
    CHECK(a->count == hcount);
    OUT("device: %s %d", name(a->device_err), a->device);
    OUT("runtime version: %s %d (host %d)", name(a->version_err), a->version, hver);
    printf("cudaDeviceGetAttribute on the device\n");
    const cudaDeviceAttr attrs[4] = {cudaDevAttrMaxThreadsPerBlock, cudaDevAttrMultiProcessorCount,
                                     cudaDevAttrComputeCapabilityMajor, cudaDevAttrL2CacheSize};
    for (int i = 0; i < 4; i++) {
        int host = -1;
        cudaDeviceGetAttribute(&host, attrs[i], 0);
        OUT("attribute %d: %s, %s the host's", (int)attrs[i], name(a->attr_err[i]),
            host == a->attr[i] ? "equals" : "differs from");
        CHECK(host == a->attr[i]);
    }
    OUT("attribute 100000: %s", name(a->attr_err[4]));
    OUT("device 7: %s", name(a->attr_err[5]));

    cudaFuncAttributes hf;
    T(cudaFuncGetAttributes(&hf, target));
    cudaFuncAttributes &df = a->func;
    printf("cudaFuncGetAttributes on the device\n");
    OUT("%s; a function that is not a kernel: %s", name(a->func_err), name(a->func_not_kernel_err));
    OUT("sharedSizeBytes %zu constSizeBytes %s localSizeBytes %s", df.sharedSizeBytes,
        df.constSizeBytes == hf.constSizeBytes ? "as the host's" : "differs",
        df.localSizeBytes == hf.localSizeBytes ? "as the host's" : "differs");
    OUT("maxThreadsPerBlock %d numRegs %s ptxVersion %s binaryVersion %d cacheModeCA %d",
        df.maxThreadsPerBlock, df.numRegs == hf.numRegs ? "as the host's" : "differs",
        df.ptxVersion == hf.ptxVersion ? "as the host's" : "differs", df.binaryVersion,
        df.cacheModeCA);
    OUT("maxDynamicSharedSizeBytes %d preferredShmemCarveout %d", df.maxDynamicSharedSizeBytes,
        df.preferredShmemCarveout);
    OUT("clusterDimMustBeSet %d requiredCluster %dx%dx%d policy %d nonPortable %d",
        df.clusterDimMustBeSet, df.requiredClusterWidth, df.requiredClusterHeight,
        df.requiredClusterDepth, df.clusterSchedulingPolicyPreference,
        df.nonPortableClusterSizeAllowed);
    CHECK(df.sharedSizeBytes == hf.sharedSizeBytes);
    CHECK(df.maxThreadsPerBlock == hf.maxThreadsPerBlock);
    // Not checked against the host's: the H200's device runtime answers 0 for both after
    // the host's cudaFuncSetAttribute set them (recorded); the line above says them.
    CHECK(df.numRegs == hf.numRegs);

    int hocc = -1, hocc_flags = -1;
    T(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&hocc, target, 128, 0));
    T(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&hocc_flags, target, 256, 4096,
                                                             cudaOccupancyDisableCachingOverride));
    printf("cudaOccupancyMaxActiveBlocksPerMultiprocessor on the device\n");
    OUT("128 threads: %s %d (host %d)", name(a->occ_err), a->occ, hocc);
    OUT("256 threads, 4096 bytes, with flags: %s %d (host %d)", name(a->occ_flags_err),
        a->occ_flags, hocc_flags);
    OUT("a function that is not a kernel: %s", name(a->occ_bad_err));
    CHECK(a->occ == hocc && a->occ_flags == hocc_flags);
    printf("cudaPeekAtLastError, cudaGetLastError twice on the device\n");
    OUT("%s %s %s", name(a->peek), name(a->last), name(a->last_again));

    unsigned char *src, *dst2, *dst3, *set2, *set3;
    int *err;
    T(cudaMallocManaged(&src, 512));
    T(cudaMallocManaged(&dst2, 40));
    T(cudaMallocManaged(&dst3, 72));
    T(cudaMallocManaged(&set2, 30));
    T(cudaMallocManaged(&set3, 16));
    T(cudaMallocManaged(&err, 16 * sizeof(int)));
    NEED(src && dst2 && dst3 && set2 && set3 && err);
    memset(dst2, 0xee, 40);
    memset(dst3, 0xee, 72);
    memset(set2, 0, 30);
    memset(set3, 0, 16);
    copies<<<1, 1>>>(src, dst2, dst3, set2, set3, err);
    T(cudaGetLastError());
    T(cudaDeviceSynchronize());
    printf("cudaMemcpy2DAsync, a pitch below the width, from the host; cudaMemcpy3DAsync; "
           "cudaMemset2DAsync, cudaMemset3DAsync, a pitch below the width; cudaMemcpy3DAsync "
           "to the host; no rows; cudaGetLastError\n");
    OUT("%s %s %s %s %s %s %s %s %s %s", name(err[0]), name(err[1]), name(err[2]), name(err[3]),
        name(err[4]), name(err[5]), name(err[6]), name(err[7]), name(err[8]), name(err[9]));
    int bad = 0;
    for (int y = 0; y < 5; y++)
        for (int x = 0; x < 8; x++)
            bad += dst2[8 * y + x] != (unsigned char)((32 * y + 3 + x) * 7 + 1);
    OUT("2D copy: %d bytes wrong", bad);
    CHECK(bad == 0);
    bad = 0;
    int untouched = 0;
    for (int z = 0; z < 3; z++)
        for (int y = 0; y < 2; y++)
            for (int x = 0; x < 12; x++) {
                unsigned char v = dst3[24 * z + 12 * y + x];
                if (x < 6)
                    bad += v != (unsigned char)((128 * (z + 1) + 32 * (y + 1) + 2 + x) * 7 + 1);
                else
                    untouched += v == 0xee;
            }
    OUT("3D copy: %d bytes wrong, %d of 36 bytes past the rows untouched", bad, untouched);
    CHECK(bad == 0 && untouched == 36);
    int set = 0;
    for (int i = 0; i < 30; i++) set += set2[i] == 0x5a;
    bad = 0;
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 5; x++) bad += set2[10 * y + x] != 0x5a;
    // The H200 sets none of them (cudaSuccess, no byte written: ci/explore/devmemset.cu),
    // so the counts are reported, not checked.
    OUT("2D set: %d bytes set, %d wrong", set, bad);
    set = 0;
    for (int i = 0; i < 16; i++) set += set3[i] == 0xa5;
    bad = 0;
    for (int z = 0; z < 2; z++)
        for (int y = 0; y < 2; y++)
            for (int x = 0; x < 3; x++) bad += set3[8 * z + 4 * y + x] != 0xa5;
    OUT("3D set: %d bytes set, %d wrong", set, bad);

    events<<<1, 1>>>(err);
    T(cudaGetLastError());
    T(cudaDeviceSynchronize());
    printf("device streams and events: create, create, record, wait, "
           "wait with flags 7, destroy, destroy, cudaGetLastError\n");
    OUT("%s %s %s %s %s %s %s %s", name(err[0]), name(err[1]), name(err[2]), name(err[3]),
        name(err[4]), name(err[5]), name(err[6]), name(err[7]));

    T(cudaFree(a));
    T(cudaFree(src));
    T(cudaFree(dst2));
    T(cudaFree(dst3));
    T(cudaFree(set2));
    T(cudaFree(set3));
    T(cudaFree(err));
    return finish();
}
