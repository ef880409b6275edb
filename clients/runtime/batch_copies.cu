// CUDA 12.8 and 13.0's batched memory calls through the runtime (probe batch_copies asks
// the driver itself): cudaMemcpyBatchAsync with two attributes (a stack source read in
// the call), cudaMemcpy3DBatchAsync between pitched memory and a CUDA array,
// cudaMemPrefetchBatchAsync, cudaMemDiscardBatchAsync and
// cudaMemDiscardAndPrefetchBatchAsync on managed memory, cudaMemcpy3DPeer(Async) on one
// device; each with the misuse cuda_runtime_api.h names (the legacy stream, bad attribute
// indices). NVIDIA's transcript on the H200 is recorded (goldens/), and cumock's matches it.
#include "common.h"

static void pattern(unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(i * 31 + seed);
}

static int is_pattern(const unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(i * 31 + seed)) return 0;
    return 1;
}

static cudaMemcpyAttributes attr(cudaMemcpySrcAccessOrder order) {
    cudaMemcpyAttributes a;
    memset(&a, 0, sizeof a);
    a.srcAccessOrder = order;
    return a;
}

int main(void) {
    cudaStream_t s;
    T(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    unsigned char *a = NULL, *b = NULL;
    T(cudaMalloc(&a, 4096));
    T(cudaMalloc(&b, 4096));
    NEED(a);
    NEED(b);
    static unsigned char first[4096], back[4096];
    pattern(first, sizeof first, 1);
    unsigned char ephemeral[64];
    pattern(ephemeral, sizeof ephemeral, 2);

    void *dsts[2] = {a, b};
    const void *srcs[2] = {first, ephemeral};
    size_t sizes[2] = {4096, 64};
    cudaMemcpyAttributes attrs[2] = {attr(cudaMemcpySrcAccessOrderStream), attr(cudaMemcpySrcAccessOrderDuringApiCall)};
    size_t idxs[2] = {0, 1};
    T(cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, attrs, idxs, 2, s));
    memset(ephemeral, 0, sizeof ephemeral);
    T(cudaStreamSynchronize(s));
    T(cudaMemcpy(back, a, 4096, cudaMemcpyDeviceToHost));
    OUT("pageable source copied: %s", is_pattern(back, 4096, 1) ? "yes" : "no");
    CHECK(is_pattern(back, 4096, 1));
    T(cudaMemcpy(back, b, 64, cudaMemcpyDeviceToHost));
    OUT("stack source copied: %s", is_pattern(back, 64, 2) ? "yes" : "no");
    CHECK(is_pattern(back, 64, 2));
    size_t bad_idxs[2] = {1, 0};
    T(cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, attrs, bad_idxs, 2, s));
    T(cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, attrs, idxs, 2, 0));
    T(cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, attrs, idxs, 2, cudaStreamPerThread));
    T(cudaStreamSynchronize(cudaStreamPerThread));

    // A 4x3x2 box of a pitched host volume into a float array and back, packed.
    cudaArray_t arr = NULL;
    cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
    T(cudaMalloc3DArray(&arr, &f, make_cudaExtent(4, 3, 2)));
    NEED(arr);
    float volume[2][5][8], packed[24];
    for (int i = 0; i < 80; i++) (&volume[0][0][0])[i] = (float)i;
    cudaMemcpy3DBatchOp op;
    memset(&op, 0, sizeof op);
    op.src.type = cudaMemcpyOperandTypePointer;
    op.src.op.ptr.ptr = volume;
    op.src.op.ptr.rowLength = 8;
    op.src.op.ptr.layerHeight = 5;
    op.dst.type = cudaMemcpyOperandTypeArray;
    op.dst.op.array.array = arr;
    op.extent = make_cudaExtent(4, 3, 2);
    op.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    T(cudaMemcpy3DBatchAsync(1, &op, 0, s));
    cudaMemcpy3DBatchOp back_op = op;
    back_op.src = op.dst;
    back_op.dst.type = cudaMemcpyOperandTypePointer;
    back_op.dst.op.ptr.ptr = packed;
    back_op.dst.op.ptr.rowLength = 0;
    back_op.dst.op.ptr.layerHeight = 0;
    T(cudaMemcpy3DBatchAsync(1, &back_op, 0, s));
    T(cudaStreamSynchronize(s));
    int ok = 1;
    for (int z = 0; z < 2; z++)
        for (int y = 0; y < 3; y++)
            for (int x = 0; x < 4; x++) ok &= packed[z * 12 + y * 4 + x] == volume[z][y][x];
    OUT("box through the array: %s", ok ? "yes" : "no");
    CHECK(ok);
    T(cudaMemcpy3DBatchAsync(1, &op, 1, s));
    op.extent.depth = 0;
    T(cudaMemcpy3DBatchAsync(1, &op, 0, s));

    // Managed memory: prefetches, a discard, both.
    unsigned char *m = NULL;
    T(cudaMallocManaged(&m, 1 << 16));
    NEED(m);
    void *ptrs[1] = {m};
    size_t msizes[1] = {1 << 16};
    cudaMemLocation dev0 = {cudaMemLocationTypeDevice, 0}, host = {cudaMemLocationTypeHost, 0};
    size_t zero[1] = {0};
    T(cudaMemPrefetchBatchAsync(ptrs, msizes, 1, &host, zero, 1, 0, s));
    T(cudaStreamSynchronize(s));
    int loc = 99;
    T(cudaMemRangeGetAttribute(&loc, 4, cudaMemRangeAttributeLastPrefetchLocation, m, 1 << 16));
    OUT("last prefetch location %d", loc);
    T(cudaMemDiscardBatchAsync(ptrs, msizes, 1, 0, s));
    T(cudaMemDiscardAndPrefetchBatchAsync(ptrs, msizes, 1, &dev0, zero, 1, 0, s));
    T(cudaStreamSynchronize(s));
    T(cudaMemRangeGetAttribute(&loc, 4, cudaMemRangeAttributeLastPrefetchLocation, m, 1 << 16));
    OUT("last prefetch location %d", loc);
    CHECK(loc == 0);
    void *dev_ptrs[1] = {a};
    T(cudaMemPrefetchBatchAsync(dev_ptrs, msizes, 1, &dev0, zero, 1, 0, s));
    T(cudaMemDiscardBatchAsync(ptrs, msizes, 1, 0, 0));

    // A 3D copy between two allocations of device 0, as a peer copy.
    cudaMemcpy3DPeerParms p;
    memset(&p, 0, sizeof p);
    p.srcPtr = make_cudaPitchedPtr(a, 64, 16, 3);
    p.dstPtr = make_cudaPitchedPtr(b, 32, 16, 3);
    p.srcDevice = 0;
    p.dstDevice = 0;
    p.extent = make_cudaExtent(16, 3, 1);
    T(cudaMemset(b, 0, 4096));
    T(cudaMemcpy3DPeer(&p));
    T(cudaMemcpy(back, b, 96, cudaMemcpyDeviceToHost));
    ok = 1;
    for (int y = 0; y < 3; y++) ok &= memcmp(back + y * 32, first + y * 64, 16) == 0;
    OUT("peer box copied: %s", ok ? "yes" : "no");
    CHECK(ok);
    T(cudaMemcpy3DPeerAsync(&p, s));
    T(cudaStreamSynchronize(s));
    p.dstDevice = 9;
    T(cudaMemcpy3DPeer(&p));
    T(cudaGetLastError());

    T(cudaFreeArray(arr));
    T(cudaFree(m));
    T(cudaFree(a));
    T(cudaFree(b));
    T(cudaStreamDestroy(s));
    return finish();
}
