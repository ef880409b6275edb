/* An allocator with one planted bug per mode, for the mock's diagnostics to find:
 *   leak               maps memory and exports an fd, and frees nothing
 *   misaligned         asks for a size that is not a multiple of the granularity
 *   free-before-unmap  frees the reservation while it is still mapped
 *   unknown-handle     releases a handle it never had
 *   no-access          copies into memory it never granted itself
 *   no-peer            copies from device 0 into memory only device 1 may access
 *   unmap-in-flight    unmaps right after a copy, without synchronising
 *   oom                grows until cuMemCreate fails, then frees its cache and retries
 *   clean              does everything right
 * It checks results the way real allocators do, carrying on where they would. */
#include "common.h"

static size_t gran;

static void setup(void) {
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CHECK(cuCtxSetCurrent(ctx));
    CUmemAllocationProp p = prop_on(0, 1);
    CHECK(cuMemGetAllocationGranularity(&gran, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
}

static CUdeviceptr mapped(CUmemGenericAllocationHandle *h, size_t size, int grant) {
    CUdeviceptr va;
    CUmemAllocationProp p = prop_on(0, 1);
    CHECK(cuMemAddressReserve(&va, size, 0, 0, 0));
    CHECK(cuMemCreate(h, size, &p, 0));
    CHECK(cuMemMap(va, size, 0, *h, 0));
    if (grant) {
        CUmemAccessDesc d = rw_for(0);
        CHECK(cuMemSetAccess(va, size, &d, 1));
    }
    return va;
}

static void teardown(CUdeviceptr va, CUmemGenericAllocationHandle h, size_t size) {
    CHECK(cuMemUnmap(va, size));
    CHECK(cuMemRelease(h));
    CHECK(cuMemAddressFree(va, size));
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "clean";
    setup();
    CUmemGenericAllocationHandle h;
    int v = 42;
    if (!strcmp(mode, "leak")) {
        mapped(&h, gran, 1);
        int fd;
        CHECK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    } else if (!strcmp(mode, "misaligned")) {
        CUmemAllocationProp p = prop_on(0, 0);
        if (cuMemCreate(&h, gran + 4096, &p, 0) != CUDA_SUCCESS) fprintf(stderr, "allocator: create failed, falling back\n");
    } else if (!strcmp(mode, "free-before-unmap")) {
        CUdeviceptr va = mapped(&h, gran, 1);
        if (cuMemAddressFree(va, gran) != CUDA_SUCCESS) fprintf(stderr, "allocator: free failed\n");
        teardown(va, h, gran);
    } else if (!strcmp(mode, "unknown-handle")) {
        if (cuMemRelease((CUmemGenericAllocationHandle)0x1234) != CUDA_SUCCESS) fprintf(stderr, "allocator: release failed\n");
    } else if (!strcmp(mode, "no-access")) {
        CUdeviceptr va = mapped(&h, gran, 0);
        if (cuMemcpyHtoD(va, &v, sizeof v) != CUDA_SUCCESS) fprintf(stderr, "allocator: copy failed\n");
        teardown(va, h, gran);
    } else if (!strcmp(mode, "no-peer")) {
        CUdeviceptr va;
        CUmemAllocationProp p = prop_on(1, 0);
        CHECK(cuMemAddressReserve(&va, gran, 0, 0, 0));
        CHECK(cuMemCreate(&h, gran, &p, 0));
        CHECK(cuMemMap(va, gran, 0, h, 0));
        CUmemAccessDesc d = rw_for(1);
        CHECK(cuMemSetAccess(va, gran, &d, 1));
        if (cuMemcpyHtoD(va, &v, sizeof v) != CUDA_SUCCESS) fprintf(stderr, "allocator: copy failed\n");
        teardown(va, h, gran);
    } else if (!strcmp(mode, "unmap-in-flight")) {
        CUdeviceptr va = mapped(&h, gran, 1);
        CHECK(cuMemcpyHtoD(va, &v, sizeof v));
        teardown(va, h, gran); /* no cuCtxSynchronize: the copy may still be in flight */
    } else if (!strcmp(mode, "oom")) {
        /* Grow a cache of blocks until the driver says out of memory, then drop the cache
         * and retry once: the path PyTorch takes before raising OutOfMemoryError. */
        enum { MAX = 64 };
        CUmemGenericAllocationHandle cache[MAX];
        CUmemAllocationProp p = prop_on(0, 0);
        int n = 0, recovered = 0;
        for (int i = 0; i < MAX; i++) {
            CUresult r = cuMemCreate(&cache[n], gran, &p, 0);
            if (r == CUDA_ERROR_OUT_OF_MEMORY) {
                while (n > 0) CHECK(cuMemRelease(cache[--n]));
                CHECK(cuMemCreate(&cache[n], gran, &p, 0));
                recovered = 1;
            } else {
                CHECK(r);
            }
            n++;
        }
        while (n > 0) CHECK(cuMemRelease(cache[--n]));
        printf(recovered ? "recovered after out of memory\n" : "never ran out of memory\n");
    } else {
        CUdeviceptr va = mapped(&h, gran, 1);
        CHECK(cuMemcpyHtoD(va, &v, sizeof v));
        CHECK(cuCtxSynchronize());
        teardown(va, h, gran);
    }
    CHECK(cuDevicePrimaryCtxRelease(0));
    printf("done %s\n", mode);
    return 0;
}
