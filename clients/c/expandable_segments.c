/* An expandable-segment allocator in the style of PyTorch's CUDA caching allocator
 * (c10/cuda/CUDACachingAllocator.cpp, ExpandableSegment): one large reservation per
 * segment; physical handles of a fixed size (2 MiB for small pools, 20 MiB for large)
 * mapped as the segment grows and unmapped as it shrinks; one cuMemSetAccess per growth,
 * over the newly mapped range. Tensors are carved out of the mapped prefix. */
#include "common.h"

typedef struct {
    CUdeviceptr base;
    size_t reserved, handle_size, mapped_handles;
    CUmemGenericAllocationHandle *handles;
    int device;
} Segment;

static void segment_init(Segment *s, int device, size_t handle_size, size_t max_bytes) {
    s->device = device;
    s->handle_size = handle_size;
    s->reserved = (max_bytes + handle_size - 1) / handle_size * handle_size;
    s->mapped_handles = 0;
    s->handles = calloc(s->reserved / handle_size, sizeof *s->handles);
    CHECK(cuMemAddressReserve(&s->base, s->reserved, 0, 0, 0));
}

/* Maps enough handles that [base, base+bytes) is backed; returns 0 when out of memory,
 * leaving the segment as it was (the caller frees its cache and retries, as PyTorch does). */
static int segment_map(Segment *s, size_t bytes) {
    size_t want = (bytes + s->handle_size - 1) / s->handle_size;
    if (want <= s->mapped_handles) return 1;
    EXPECT(want * s->handle_size <= s->reserved);
    CUmemAllocationProp prop = prop_on(s->device, 0);
    size_t first = s->mapped_handles;
    for (size_t i = first; i < want; i++) {
        CUresult r = cuMemCreate(&s->handles[i], s->handle_size, &prop, 0);
        if (r == CUDA_ERROR_OUT_OF_MEMORY) {
            for (size_t j = first; j < i; j++) {
                CHECK(cuMemUnmap(s->base + j * s->handle_size, s->handle_size));
                CHECK(cuMemRelease(s->handles[j]));
            }
            return 0;
        }
        CHECK(r);
        CHECK(cuMemMap(s->base + i * s->handle_size, s->handle_size, 0, s->handles[i], 0));
    }
    CUmemAccessDesc d = rw_for(s->device);
    CHECK(cuMemSetAccess(s->base + first * s->handle_size, (want - first) * s->handle_size, &d, 1));
    s->mapped_handles = want;
    return 1;
}

static void segment_unmap_to(Segment *s, size_t bytes) {
    size_t keep = (bytes + s->handle_size - 1) / s->handle_size;
    if (keep >= s->mapped_handles) return;
    CHECK(cuCtxSynchronize()); /* PyTorch synchronises before giving memory back */
    CHECK(cuMemUnmap(s->base + keep * s->handle_size, (s->mapped_handles - keep) * s->handle_size));
    for (size_t i = keep; i < s->mapped_handles; i++) CHECK(cuMemRelease(s->handles[i]));
    s->mapped_handles = keep;
}

static void segment_destroy(Segment *s) {
    segment_unmap_to(s, 0);
    CHECK(cuMemAddressFree(s->base, s->reserved));
    free(s->handles);
}

static void fill_and_check(CUdeviceptr at, size_t n, unsigned seed) {
    unsigned char *h = malloc(n), *b = malloc(n);
    for (size_t i = 0; i < n; i++) h[i] = (unsigned char)(i * 7 + seed);
    CHECK(cuMemcpyHtoD(at, h, n));
    CHECK(cuMemcpyDtoH(b, at, n));
    EXPECT(memcmp(h, b, n) == 0);
    free(h);
    free(b);
}

int main(void) {
    CUdevice dev;
    CUcontext ctx;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    size_t gran = 0;
    CUmemAllocationProp prop = prop_on(0, 0);
    CHECK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    size_t free0, total;
    CHECK(cuMemGetInfo(&free0, &total));

    /* The small pool (2 MiB handles) and the large pool (20 MiB handles). */
    Segment small, large;
    segment_init(&small, 0, gran, (size_t)1 << 30);
    segment_init(&large, 0, 10 * gran, total); /* as big as the device, like PyTorch */

    /* Tensors of varied sizes: the segments grow, data crosses handle boundaries. */
    size_t sizes[] = {512, 3 << 20, 1 << 20, 50 << 20, 7 << 20, 130 << 20};
    size_t used_small = 0, used_large = 0;
    for (unsigned i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        Segment *s = sizes[i] < (1 << 20) * 2 ? &small : &large;
        size_t *used = s == &small ? &used_small : &used_large;
        EXPECT(segment_map(s, *used + sizes[i]));
        fill_and_check(s->base + *used, sizes[i], i);
        *used += sizes[i];
    }
    size_t free1;
    CHECK(cuMemGetInfo(&free1, &total));
    EXPECT(free0 - free1 == (small.mapped_handles * small.handle_size + large.mapped_handles * large.handle_size));

    /* Shrink the large segment (empty_cache), then grow it again: data below survives. */
    fill_and_check(large.base, 4096, 99);
    unsigned char probe[4096];
    segment_unmap_to(&large, 20 << 20);
    CHECK(cuMemcpyDtoH(probe, large.base, sizeof probe));
    EXPECT(probe[1] == (unsigned char)(1 * 7 + 99));
    EXPECT(cuMemcpyDtoH(probe, large.base + (40 << 20), sizeof probe) != CUDA_SUCCESS); /* unmapped now */
    EXPECT(segment_map(&large, 200 << 20));
    fill_and_check(large.base + (150 << 20), 1 << 20, 5);

    /* Out of memory: a growth larger than the device fails cleanly and changes nothing. */
    size_t before = large.mapped_handles;
    EXPECT(large.reserved >= total);
    int grown = segment_map(&large, large.reserved);
    if (!grown) EXPECT(large.mapped_handles == before);

    segment_destroy(&small);
    segment_destroy(&large);
    size_t free2;
    CHECK(cuMemGetInfo(&free2, &total));
    EXPECT(free2 == free0);
    CHECK(cuDevicePrimaryCtxRelease(dev));
    printf("ok\n");
    return 0;
}
