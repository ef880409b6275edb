/* Missing synchronisations under CUMOCK_SCHEDULE (mock-driver/tests/schedule.rs): each
 * line says what the host saw, so that the test can require `lazy` to show stale data
 * every time, and every schedule to give the right data after the synchronisations a
 * correct program makes.
 *   unsynced-host-read V   a kernel's store into mapped page-locked memory, read by the
 *                          host right after the launch (no synchronisation): 0 is stale
 *   synced-host-read V     the same after cuStreamSynchronize
 *   unordered-copy V       a copy on another non-blocking stream (no event) of what a
 *                          kernel writes: 0 is stale
 *   ordered-copy V         the same, ordered by an event
 *   polls-ended            a cuStreamQuery loop over a launch ended
 *   chain V                kernels on three streams ordered by events: their sum
 *   unordered-graph V      a copy on another non-blocking stream (no event) of what three
 *                          launches of an executable graph add: 0 is stale
 *   graph-setters V        the sum of those launches, each with the kernel parameter it
 *                          was launched with (1, then 10 set by
 *                          cuGraphExecKernelNodeSetParams, then 100 by cuGraphExecUpdate),
 *                          although none had run when the next was set
 *   unordered-staged V     a copy on another stream (no event) of what cuMemcpyHtoDAsync
 *                          from pageable memory writes: 0 is stale (the copy was queued)
 *   staged-htod V          the same after the stream's synchronisation: 42, although the
 *                          program reused its pageable source as soon as the call returned
 *   unordered-2d V         the same for cuMemcpy2DAsync of two pageable rows: 0 is stale
 *   staged-2d V            their sum after the synchronisation (42 + 43 = 85)
 *   unordered-peer V       the same for cuMemcpyPeerAsync of device memory: 0 is stale
 *   peer V                 the value it copied, after the synchronisation (42)
 *   unordered-3d V         the same for cuMemcpy3DAsync of two pageable slices: 0 is stale
 *   staged-3d V            their sum after the synchronisation (44 + 45 = 89)
 *   unordered-array V      the same for cuMemcpy2DAsync of a pageable row into a CUDA
 *                          array, read back by cuMemcpyAtoH on another thread's order: 0
 *                          is stale
 *   staged-array V         the array's word after the synchronisation (46)
 *   unordered-sync-htod V  a copy on another stream (no event) of what a synchronous
 *                          cuMemcpyHtoD from pageable memory wrote: 0 is stale (the call
 *                          returned once its source was staged)
 *   unordered-sync-memset V  the same for a synchronous cuMemsetD32 of 7: 0 is stale
 *   sync-htod V            the word after a synchronous cuMemcpyDtoH (the legacy
 *                          stream's order): 42, although the source was reused at once
 *   sync-memset V          the same for the memset: 7 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *ptx =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    ".visible .entry put(.param .u64 p, .param .u32 v)\n"
    "{\n"
    "  .reg .b32 %r<2>;\n"
    "  .reg .b64 %rd<2>;\n"
    "  ld.param.u64 %rd1, [p];\n"
    "  ld.param.u32 %r1, [v];\n"
    "  st.volatile.global.u32 [%rd1], %r1;\n"
    "  ret;\n"
    "}\n"
    ".visible .entry add(.param .u64 p, .param .u32 v)\n"
    "{\n"
    "  .reg .b32 %r<3>;\n"
    "  .reg .b64 %rd<2>;\n"
    "  ld.param.u64 %rd1, [p];\n"
    "  ld.param.u32 %r1, [v];\n"
    "  ld.global.u32 %r2, [%rd1];\n"
    "  add.u32 %r2, %r2, %r1;\n"
    "  st.global.u32 [%rd1], %r2;\n"
    "  ret;\n"
    "}\n";

#define MUST(call)                                                            \
    do {                                                                      \
        CUresult r_ = (call);                                                 \
        if (r_ != CUDA_SUCCESS) {                                             \
            printf("failed: %s = %d\n", #call, (int)r_);                      \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

static CUfunction put, add;

/* Zeroes `words` words, finished before the next work: a synchronous memset of device
 * memory is asynchronous with respect to the host, and nothing orders it with the work
 * of non-blocking streams (CUDA's "API synchronization behavior"; under `lazy` it lands
 * when something waits for the legacy stream). */
static void zero(CUdeviceptr p, size_t words) {
    MUST(cuMemsetD32(p, 0, words));
    MUST(cuCtxSynchronize());
}

static void launch(CUfunction f, CUstream s, CUdeviceptr p, unsigned v) {
    void *args[] = {&p, &v};
    MUST(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, NULL));
}

int main(void) {
    CUcontext ctx;
    CUmodule m;
    MUST(cuInit(0));
    MUST(cuDevicePrimaryCtxRetain(&ctx, 0));
    MUST(cuCtxSetCurrent(ctx));
    MUST(cuModuleLoadData(&m, ptx));
    MUST(cuModuleGetFunction(&put, m, "put"));
    MUST(cuModuleGetFunction(&add, m, "add"));
    CUstream a, b, c;
    MUST(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
    MUST(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
    MUST(cuStreamCreate(&c, CU_STREAM_NON_BLOCKING));
    volatile unsigned *host = NULL;
    MUST(cuMemHostAlloc((void **)&host, 4096, CU_MEMHOSTALLOC_DEVICEMAP));
    CUdeviceptr dhost, dev;
    MUST(cuMemHostGetDevicePointer(&dhost, (void *)host, 0));
    MUST(cuMemAlloc(&dev, 4096));

    /* The host reads what a kernel writes, without synchronising first. */
    host[0] = 0;
    launch(put, a, dhost, 7);
    printf("unsynced-host-read %u\n", host[0]);
    MUST(cuStreamSynchronize(a));
    printf("synced-host-read %u\n", host[0]);

    /* Stream b copies what stream a's kernel writes, with no event between them. */
    zero(dev, 1);
    unsigned *out = (unsigned *)host + 16;
    out[0] = 99;
    launch(put, a, dev, 5);
    MUST(cuMemcpyDtoHAsync(out, dev, 4, b));
    MUST(cuStreamSynchronize(b));
    printf("unordered-copy %u\n", out[0]);
    MUST(cuStreamSynchronize(a));

    /* The same, ordered by an event. */
    zero(dev, 1);
    CUevent e;
    MUST(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    launch(put, a, dev, 6);
    MUST(cuEventRecord(e, a));
    MUST(cuStreamWaitEvent(b, e, 0));
    MUST(cuMemcpyDtoHAsync(out, dev, 4, b));
    MUST(cuStreamSynchronize(b));
    printf("ordered-copy %u\n", out[0]);

    /* A polling loop ends: a query that says "not ready" asks for the work. */
    launch(put, a, dev, 1);
    unsigned long polls = 0;
    while (cuStreamQuery(a) == CUDA_ERROR_NOT_READY) polls++;
    printf("polls-ended\n");

    /* A chain over three streams, ordered by events: 1 + 2 + 3 on a zeroed word. */
    zero(dev, 1);
    CUevent e1, e2;
    MUST(cuEventCreate(&e1, CU_EVENT_DISABLE_TIMING));
    MUST(cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING));
    for (int round = 0; round < 20; round++) {
        launch(add, a, dev, 1);
        MUST(cuEventRecord(e1, a));
        MUST(cuStreamWaitEvent(b, e1, 0));
        launch(add, b, dev, 2);
        MUST(cuEventRecord(e2, b));
        MUST(cuStreamWaitEvent(c, e2, 0));
        launch(add, c, dev, 3);
        MUST(cuEventRecord(e, c));
        MUST(cuStreamWaitEvent(a, e, 0));
    }
    MUST(cuCtxSynchronize());
    unsigned sum = 0;
    MUST(cuMemcpyDtoH(&sum, dev, 4));
    printf("chain %u\n", sum);

    /* An executable graph of one `add` node, launched three times with its parameter set
     * between the launches: each launch keeps the parameter it was launched with. */
    zero(dev, 1);
    CUdeviceptr gp = dev;
    unsigned gv = 1;
    void *gargs[] = {&gp, &gv};
    CUDA_KERNEL_NODE_PARAMS kp;
    memset(&kp, 0, sizeof kp);
    kp.func = add;
    kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
    kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
    kp.kernelParams = gargs;
    CUgraph g, g2;
    CUgraphNode k, k2;
    CUgraphExec x;
    MUST(cuGraphCreate(&g, 0));
    MUST(cuGraphAddKernelNode(&k, g, NULL, 0, &kp));
    MUST(cuGraphInstantiateWithFlags(&x, g, 0));
    MUST(cuGraphLaunch(x, a));
    gv = 10;
    MUST(cuGraphExecKernelNodeSetParams(x, k, &kp));
    MUST(cuGraphLaunch(x, a));
    gv = 100;
    MUST(cuGraphCreate(&g2, 0));
    MUST(cuGraphAddKernelNode(&k2, g2, NULL, 0, &kp));
    CUgraphExecUpdateResultInfo info;
    MUST(cuGraphExecUpdate(x, g2, &info));
    MUST(cuGraphLaunch(x, a));
    out[0] = 99;
    MUST(cuMemcpyDtoHAsync(out, dev, 4, b));
    MUST(cuStreamSynchronize(b));
    printf("unordered-graph %u\n", out[0]);
    MUST(cuStreamSynchronize(a));
    MUST(cuMemcpyDtoH(&sum, dev, 4));
    printf("graph-setters %u\n", sum);

    /* Async copies from pageable memory, 2D copies and peer copies are queued: the
     * stream has a kernel pending, and the copy waits for it without holding the host. */
    CUdeviceptr rows, peer;
    MUST(cuMemAlloc(&rows, 2 * 512));
    MUST(cuMemAlloc(&peer, 4));
    zero(dev, 1);
    zero(rows, 2 * 128);
    zero(peer, 1);
    launch(put, a, dhost, 3);
    unsigned pageable = 42;
    MUST(cuMemcpyHtoDAsync(dev, &pageable, 4, a));
    pageable = 0; /* the driver read it before returning */
    unsigned two[2][64];
    memset(two, 0, sizeof two);
    two[0][0] = 42;
    two[1][0] = 43;
    CUDA_MEMCPY2D c2;
    memset(&c2, 0, sizeof c2);
    c2.srcMemoryType = CU_MEMORYTYPE_HOST;
    c2.srcHost = two;
    c2.srcPitch = sizeof two[0];
    c2.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c2.dstDevice = rows;
    c2.dstPitch = 512;
    c2.WidthInBytes = 4;
    c2.Height = 2;
    MUST(cuMemcpy2DAsync(&c2, a));
    two[0][0] = two[1][0] = 0;
    MUST(cuMemcpyPeerAsync(peer, ctx, dev, ctx, 4, a));
    unsigned *seen = (unsigned *)host + 32;
    seen[0] = seen[1] = seen[2] = seen[3] = 99;
    MUST(cuMemcpyDtoHAsync(seen, dev, 4, b));
    MUST(cuMemcpyDtoHAsync(seen + 1, rows, 4, b));
    MUST(cuMemcpyDtoHAsync(seen + 2, rows + 512, 4, b));
    MUST(cuMemcpyDtoHAsync(seen + 3, peer, 4, b));
    MUST(cuStreamSynchronize(b));
    printf("unordered-staged %u\n", seen[0]);
    printf("unordered-2d %u\n", seen[1] + seen[2]);
    printf("unordered-peer %u\n", seen[3]);
    MUST(cuStreamSynchronize(a));
    unsigned back[3];
    MUST(cuMemcpyDtoH(&back[0], dev, 4));
    MUST(cuMemcpyDtoH(&back[1], rows, 4));
    MUST(cuMemcpyDtoH(&back[2], rows + 512, 4));
    printf("staged-htod %u\n", back[0]);
    printf("staged-2d %u\n", back[1] + back[2]);
    MUST(cuMemcpyDtoH(&back[0], peer, 4));
    printf("peer %u\n", back[0]);

    /* A 3D copy of two pageable slices, and a 2D copy of a pageable row into an array. */
    CUdeviceptr box;
    MUST(cuMemAlloc(&box, 2 * 512));
    zero(box, 2 * 128);
    CUDA_ARRAY_DESCRIPTOR ad;
    memset(&ad, 0, sizeof ad);
    ad.Width = 4;
    ad.Height = 1;
    ad.Format = CU_AD_FORMAT_UNSIGNED_INT32;
    ad.NumChannels = 1;
    CUarray arr;
    MUST(cuArrayCreate(&arr, &ad));
    unsigned zero4[4] = {0, 0, 0, 0};
    MUST(cuMemcpyHtoA(arr, 0, zero4, sizeof zero4));
    launch(put, a, dhost, 4);
    unsigned slices[2][16];
    memset(slices, 0, sizeof slices);
    slices[0][0] = 44;
    slices[1][0] = 45;
    CUDA_MEMCPY3D c3;
    memset(&c3, 0, sizeof c3);
    c3.srcMemoryType = CU_MEMORYTYPE_HOST;
    c3.srcHost = slices;
    c3.srcPitch = sizeof slices[0];
    c3.srcHeight = 1;
    c3.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c3.dstDevice = box;
    c3.dstPitch = 512;
    c3.dstHeight = 1;
    c3.WidthInBytes = 4;
    c3.Height = 1;
    c3.Depth = 2;
    MUST(cuMemcpy3DAsync(&c3, a));
    slices[0][0] = slices[1][0] = 0;
    unsigned row[4] = {46, 0, 0, 0};
    CUDA_MEMCPY2D ca;
    memset(&ca, 0, sizeof ca);
    ca.srcMemoryType = CU_MEMORYTYPE_HOST;
    ca.srcHost = row;
    ca.srcPitch = sizeof row;
    ca.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    ca.dstArray = arr;
    ca.WidthInBytes = sizeof row;
    ca.Height = 1;
    MUST(cuMemcpy2DAsync(&ca, a));
    row[0] = 0;
    seen[0] = seen[1] = 99;
    MUST(cuMemcpyDtoHAsync(seen, box, 4, b));
    MUST(cuMemcpyDtoHAsync(seen + 1, box + 512, 4, b));
    MUST(cuStreamSynchronize(b));
    printf("unordered-3d %u\n", seen[0] + seen[1]);
    unsigned from_array[4] = {99, 99, 99, 99};
    MUST(cuMemcpyAtoHAsync(from_array, arr, 0, sizeof from_array, b));
    MUST(cuStreamSynchronize(b));
    printf("unordered-array %u\n", from_array[0]);
    MUST(cuStreamSynchronize(a));
    MUST(cuMemcpyDtoH(&back[0], box, 4));
    MUST(cuMemcpyDtoH(&back[1], box + 512, 4));
    printf("staged-3d %u\n", back[0] + back[1]);
    MUST(cuMemcpyAtoH(from_array, arr, 0, sizeof from_array));
    printf("staged-array %u\n", from_array[0]);

    /* A synchronous copy from pageable memory and a synchronous memset on the legacy
     * stream, read by stream b with nothing ordering them. */
    zero(dev, 2);
    unsigned word = 42;
    MUST(cuMemcpyHtoD(dev, &word, 4));
    word = 0; /* staged before the call returned */
    MUST(cuMemsetD32(dev + 4, 7, 1));
    seen[0] = seen[1] = 99;
    MUST(cuMemcpyDtoHAsync(seen, dev, 8, b));
    MUST(cuStreamSynchronize(b));
    printf("unordered-sync-htod %u\n", seen[0]);
    printf("unordered-sync-memset %u\n", seen[1]);
    MUST(cuMemcpyDtoH(back, dev, 8));
    printf("sync-htod %u\n", back[0]);
    printf("sync-memset %u\n", back[1]);
    return 0;
}
