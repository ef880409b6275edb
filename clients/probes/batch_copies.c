/* CUDA 12.8 and 13.0's batched memory calls and the 3D copies between contexts:
 * cuMemcpyBatchAsync (13.0's _v2 through cuda.h's name, 12.8's form with failIdx through
 * cuGetProcAddress at 12080), cuMemcpy3DBatchAsync (pointers and CUDA arrays, both forms),
 * cuMemPrefetchBatchAsync, cuMemDiscardBatchAsync, cuMemDiscardAndPrefetchBatchAsync,
 * cuMemcpy3DPeer and cuMemcpy3DPeerAsync. Each section copies (and checks) normal
 * batches first, then asks the edge inputs cuda.h's rules name.
 *
 * Recorded on the H200 (clients/probes/goldens/NVIDIA_H200-580.159.04/batch_copies.txt),
 * which settled what cuda.h leaves open: an empty batch is INVALID_VALUE; failIdx is
 * SIZE_MAX on success and for errors of the batch or its attributes, the copy's index for
 * one copy's, untouched for the legacy stream; a refused batch had issued its earlier
 * copies; a batch's prefetch locations may repeat a first index and a device that does
 * not exist is INVALID_VALUE there; a discarded range prefetched to the device no longer
 * holds what the host wrote; cuMemcpy3DPeer takes srcLOD 1 (and crashes on a NULL
 * pCopy: asked alone in section memcpy3d-peer-null-crash, run last). Section batch-zero-and-order, added after that recording, asks what it left
 * open: whether the refused copy was refused for its 0 bytes or for being read during the
 * call from device memory, and which of two locations for the same first range wins.
 * NULL arrays with a count are asked last, each in a section of its own (the H200 crashes
 * on some; the mock: INVALID_VALUE).
 * No multicast API is called. */
#include "probe.h"

typedef CUresult (*memcpy_batch_v1)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t,
                                    CUmemcpyAttributes *, size_t *, size_t, size_t *, CUstream);
typedef CUresult (*memcpy_3d_batch_v1)(size_t, CUDA_MEMCPY3D_BATCH_OP *, size_t *,
                                       unsigned long long, CUstream);

static void *entry(const char *name, int version) {
    void *p = NULL;
    CUdriverProcAddressQueryResult q;
    if (cuGetProcAddress(name, &p, version, CU_GET_PROC_ADDRESS_DEFAULT, &q) != CUDA_SUCCESS)
        return NULL;
    return p;
}

static CUmemcpyAttributes attr(CUmemcpySrcAccessOrder order) {
    CUmemcpyAttributes a;
    memset(&a, 0, sizeof a);
    a.srcAccessOrder = order;
    return a;
}

/* One 16-byte copy from `src` to `dst` through 13.0's form, with the attributes and
 * indices given. */
static void one_copy(const char *what, CUdeviceptr dst, CUdeviceptr src, size_t n,
                     CUmemcpyAttributes *attrs, size_t *idxs, size_t num, CUstream s) {
    CUdeviceptr d[1] = {dst}, sr[1] = {src};
    size_t sizes[1] = {n};
    CALL(what, cuMemcpyBatchAsync(d, sr, sizes, 1, attrs, idxs, num, s));
}

static void memcpy_batch(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr a, b, c;
    MUST(cuMemAlloc(&a, 4096));
    MUST(cuMemAlloc(&b, 4096));
    MUST(cuMemAlloc(&c, 4096));
    MUST(cuMemsetD8(c, 0xEE, 4096));
    static unsigned char first[4096], back[4096], back2[64], tiny[16];
    pattern(first, sizeof first, 1);
    unsigned char ephemeral[64];
    pattern(ephemeral, sizeof ephemeral, 2);

    /* Pageable source in stream order, a stack source read in the call, a zero-byte
     * device-to-device copy; two attributes. */
    CUdeviceptr dsts[3] = {a, b, c}, srcs[3] = {(CUdeviceptr)first, (CUdeviceptr)ephemeral, a};
    size_t sizes[3] = {4096, 64, 0};
    CUmemcpyAttributes attrs[2] = {attr(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM),
                                   attr(CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL)};
    size_t idxs[2] = {0, 1};
    CALL("batch of 3, two attributes", cuMemcpyBatchAsync(dsts, srcs, sizes, 3, attrs, idxs, 2, s));
    memset(ephemeral, 0, sizeof ephemeral);
    MUST(cuStreamSynchronize(s));
    MUST(cuMemcpyDtoH(back, a, 4096));
    SAY("pageable source copied: %s", is_pattern(back, 4096, 1) ? "yes" : "no");
    MUST(cuMemcpyDtoH(back2, b, 64));
    SAY("stack source copied: %s", is_pattern(back2, 64, 2) ? "yes" : "no");
    MUST(cuMemcpyDtoH(back, c, 4096));
    SAY("zero-byte copy left the destination: %s", back[0] == 0xEE && back[4095] == 0xEE ? "yes" : "no");

    /* 12.8's form, device to host, one attribute for both copies. */
    memcpy_batch_v1 v1 = (memcpy_batch_v1)entry("cuMemcpyBatchAsync", 12080);
    SAY("12.8's cuMemcpyBatchAsync through cuGetProcAddress: %s", v1 ? "found" : "missing");
    if (v1) {
        memset(back, 0, sizeof back);
        memset(back2, 0, sizeof back2);
        CUdeviceptr d2[2] = {(CUdeviceptr)back, (CUdeviceptr)back2}, s2[2] = {a, b};
        size_t z2[2] = {4096, 64};
        CUmemcpyAttributes any = attr(CU_MEMCPY_SRC_ACCESS_ORDER_ANY);
        size_t zero = 0, fail = SENTINEL;
        CALL("12.8 form, device to host", v1(d2, s2, z2, 2, &any, &zero, 1, &fail, s));
        OUT(fail);
        MUST(cuStreamSynchronize(s));
        SAY("both copied: %s", is_pattern(back, 4096, 1) && is_pattern(back2, 64, 2) ? "yes" : "no");
        /* failIdx for errors of the batch and of one copy. */
        size_t bad_first = 1;
        fail = SENTINEL;
        CALL("12.8 form, attrsIdxs {1}", v1(d2, s2, z2, 2, &any, &bad_first, 1, &fail, s));
        OUT(fail);
        CUmemcpyAttributes two[2] = {any, attr(CU_MEMCPY_SRC_ACCESS_ORDER_INVALID)};
        size_t i01[2] = {0, 1};
        fail = SENTINEL;
        CALL("12.8 form, second attribute INVALID order", v1(d2, s2, z2, 2, two, i01, 2, &fail, s));
        OUT(fail);
        CUdeviceptr dn[2] = {(CUdeviceptr)back, 0};
        fail = SENTINEL;
        CALL("12.8 form, copy 1's destination NULL", v1(dn, s2, z2, 2, &any, &zero, 1, &fail, s));
        OUT(fail);
        fail = SENTINEL;
        CALL("12.8 form, legacy stream", v1(d2, s2, z2, 2, &any, &zero, 1, &fail, NULL));
        OUT(fail);
        CALL("12.8 form, failIdx NULL, legacy stream", v1(d2, s2, z2, 2, &any, &zero, 1, NULL, NULL));
    }

    /* Attribute indices and counts. */
    CUmemcpyAttributes st[3] = {attr(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM), attr(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM),
                                attr(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM)};
    CUdeviceptr d2[2] = {a, b}, s2[2] = {(CUdeviceptr)tiny, (CUdeviceptr)tiny};
    size_t z2[2] = {16, 16};
    size_t i0[1] = {0}, i1[1] = {1}, i00[2] = {0, 0}, i02[2] = {0, 2}, i10[2] = {1, 0}, i012[3] = {0, 1, 2};
    CALL("attrsIdxs {0}", cuMemcpyBatchAsync(d2, s2, z2, 2, st, i0, 1, s));
    CALL("attrsIdxs {1}", cuMemcpyBatchAsync(d2, s2, z2, 2, st, i1, 1, s));
    CALL("attrsIdxs {0, 0}", cuMemcpyBatchAsync(d2, s2, z2, 2, st, i00, 2, s));
    CALL("attrsIdxs {1, 0}", cuMemcpyBatchAsync(d2, s2, z2, 2, st, i10, 2, s));
    CALL("attrsIdxs {0, 2} of 2 copies", cuMemcpyBatchAsync(d2, s2, z2, 2, st, i02, 2, s));
    CALL("numAttrs 3 > count 2", cuMemcpyBatchAsync(d2, s2, z2, 2, st, i012, 3, s));
    CALL("numAttrs 0", cuMemcpyBatchAsync(d2, s2, z2, 2, st, i0, 0, s));
    CALL("count 0, numAttrs 0", cuMemcpyBatchAsync(d2, s2, z2, 0, st, i0, 0, s));

    /* Orders, flags, streams. */
    CUmemcpyAttributes o;
    o = attr(CU_MEMCPY_SRC_ACCESS_ORDER_INVALID);
    one_copy("srcAccessOrder INVALID (0)", a, (CUdeviceptr)tiny, 16, &o, i0, 1, s);
    o = attr((CUmemcpySrcAccessOrder)4);
    one_copy("srcAccessOrder 4", a, (CUdeviceptr)tiny, 16, &o, i0, 1, s);
    o = attr(CU_MEMCPY_SRC_ACCESS_ORDER_ANY);
    o.flags = CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE;
    one_copy("flags PREFER_OVERLAP_WITH_COMPUTE", a, (CUdeviceptr)tiny, 16, &o, i0, 1, s);
    o.flags = 2;
    one_copy("flags 2", a, (CUdeviceptr)tiny, 16, &o, i0, 1, s);
    o = attr(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
    one_copy("legacy stream (NULL)", a, (CUdeviceptr)tiny, 16, &o, i0, 1, NULL);
    one_copy("CU_STREAM_LEGACY", a, (CUdeviceptr)tiny, 16, &o, i0, 1, CU_STREAM_LEGACY);
    one_copy("CU_STREAM_PER_THREAD", a, (CUdeviceptr)tiny, 16, &o, i0, 1, CU_STREAM_PER_THREAD);
    one_copy("NULL source in a copy", a, 0, 16, &o, i0, 1, s);
    one_copy("device to device", b, a, 16, &o, i0, 1, s);
    MUST(cuStreamSynchronize(s));
    MUST(cuCtxSynchronize());
    /* Last: a range past its allocation (a GPU may fault instead). */
    one_copy("device range past its allocation", a + 4000, (CUdeviceptr)first, 200, &o, i0, 1, s);
    CALL("stream sync after", cuStreamSynchronize(s));
}

static CUmemcpy3DOperand ptr_operand(CUdeviceptr p, size_t row_length, size_t layer_height) {
    CUmemcpy3DOperand o;
    memset(&o, 0, sizeof o);
    o.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
    o.op.ptr.ptr = p;
    o.op.ptr.rowLength = row_length;
    o.op.ptr.layerHeight = layer_height;
    return o;
}

static CUmemcpy3DOperand array_operand(CUarray a, size_t x, size_t y, size_t z) {
    CUmemcpy3DOperand o;
    memset(&o, 0, sizeof o);
    o.type = CU_MEMCPY_OPERAND_TYPE_ARRAY;
    o.op.array.array = a;
    o.op.array.offset.x = x;
    o.op.array.offset.y = y;
    o.op.array.offset.z = z;
    return o;
}

static CUDA_MEMCPY3D_BATCH_OP op3d(CUmemcpy3DOperand src, CUmemcpy3DOperand dst, size_t w, size_t h, size_t d) {
    CUDA_MEMCPY3D_BATCH_OP op;
    memset(&op, 0, sizeof op);
    op.src = src;
    op.dst = dst;
    op.extent.width = w;
    op.extent.height = h;
    op.extent.depth = d;
    op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    return op;
}

static CUarray array3d(size_t w, size_t h, size_t d, CUarray_format f, unsigned channels) {
    CUDA_ARRAY3D_DESCRIPTOR desc;
    memset(&desc, 0, sizeof desc);
    desc.Width = w;
    desc.Height = h;
    desc.Depth = d;
    desc.Format = f;
    desc.NumChannels = channels;
    CUarray a;
    MUST(cuArray3DCreate(&a, &desc));
    return a;
}

static void memcpy_3d_batch(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    /* A 4x3x2 box of an 8-byte-row, 5-row-layer host volume to packed device memory. */
    static unsigned char volume[8 * 5 * 2], packed[24];
    for (unsigned i = 0; i < sizeof volume; i++) volume[i] = (unsigned char)i;
    CUdeviceptr dev;
    MUST(cuMemAlloc(&dev, 4096));
    CUDA_MEMCPY3D_BATCH_OP ops[2];
    ops[0] = op3d(ptr_operand((CUdeviceptr)volume, 8, 5), ptr_operand(dev, 0, 0), 4, 3, 2);
    CALL("pitched host box to packed device memory", cuMemcpy3DBatchAsync(1, ops, 0, s));
    MUST(cuStreamSynchronize(s));
    MUST(cuMemcpyDtoH(packed, dev, 24));
    int ok = 1;
    for (int z = 0; z < 2; z++)
        for (int y = 0; y < 3; y++)
            for (int x = 0; x < 4; x++) ok &= packed[z * 12 + y * 4 + x] == (unsigned char)(z * 40 + y * 8 + x);
    SAY("box as packed: %s", ok ? "yes" : "no");

    /* Host floats to an array at an offset, back with the source read in the call. */
    CUarray arr = array3d(4, 4, 2, CU_AD_FORMAT_FLOAT, 1);
    float in[8], out[8];
    for (int i = 0; i < 8; i++) in[i] = (float)i + 0.5f;
    ops[0] = op3d(ptr_operand((CUdeviceptr)in, 0, 0), array_operand(arr, 1, 2, 0), 2, 2, 2);
    CALL("host to array at (1,2,0)", cuMemcpy3DBatchAsync(1, ops, 0, s));
    memset(out, 0, sizeof out);
    ops[0] = op3d(array_operand(arr, 1, 2, 0), ptr_operand((CUdeviceptr)out, 0, 0), 2, 2, 2);
    ops[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL;
    CALL("array to host, DURING_API_CALL", cuMemcpy3DBatchAsync(1, ops, 0, s));
    MUST(cuStreamSynchronize(s));
    SAY("round trip: %s", memcmp(in, out, sizeof in) == 0 ? "yes" : "no");

    /* Array to array, and 12.8's form. */
    CUarray arr2 = array3d(4, 4, 2, CU_AD_FORMAT_FLOAT, 1);
    CUarray bytes2 = array3d(4, 4, 0, CU_AD_FORMAT_UNSIGNED_INT8, 2);
    CUarray half2 = array3d(4, 4, 0, CU_AD_FORMAT_HALF, 1);
    ops[0] = op3d(array_operand(arr, 0, 0, 0), array_operand(arr2, 0, 0, 0), 4, 4, 2);
    CALL("array to array", cuMemcpy3DBatchAsync(1, ops, 0, s));
    ops[0] = op3d(array_operand(bytes2, 0, 0, 0), array_operand(half2, 0, 0, 0), 2, 2, 1);
    CALL("arrays of 2-byte elements (uchar2, half)", cuMemcpy3DBatchAsync(1, ops, 0, s));
    ops[0] = op3d(array_operand(arr, 0, 0, 0), array_operand(half2, 0, 0, 0), 2, 2, 1);
    CALL("arrays of 4- and 2-byte elements", cuMemcpy3DBatchAsync(1, ops, 0, s));
    memcpy_3d_batch_v1 v1 = (memcpy_3d_batch_v1)entry("cuMemcpy3DBatchAsync", 12080);
    SAY("12.8's cuMemcpy3DBatchAsync through cuGetProcAddress: %s", v1 ? "found" : "missing");
    CUDA_MEMCPY3D_BATCH_OP good = op3d(ptr_operand((CUdeviceptr)volume, 0, 0), ptr_operand(dev, 0, 0), 16, 1, 1);
    if (v1) {
        size_t fail = SENTINEL;
        ops[0] = good;
        ops[1] = good;
        CALL("12.8 form, two copies", v1(2, ops, &fail, 0, s));
        OUT(fail);
        ops[1].extent.height = 0;
        fail = SENTINEL;
        CALL("12.8 form, copy 1's height 0", v1(2, ops, &fail, 0, s));
        OUT(fail);
        fail = SENTINEL;
        CALL("12.8 form, flags 1", v1(1, ops, &fail, 1, s));
        OUT(fail);
    }

    /* Each rule of an operation, as copy 1 of two. */
    struct {
        const char *what;
        CUDA_MEMCPY3D_BATCH_OP op;
    } bad[10];
    int n = 0;
    bad[n].what = "width 0"; bad[n].op = good; bad[n].op.extent.width = 0; n++;
    bad[n].what = "depth 0"; bad[n].op = good; bad[n].op.extent.depth = 0; n++;
    bad[n].what = "rowLength 8 < width 16"; bad[n].op = good; bad[n].op.src = ptr_operand((CUdeviceptr)volume, 8, 0); n++;
    bad[n].what = "layerHeight 2 < height 4"; bad[n].op = good; bad[n].op.extent.width = 4; bad[n].op.extent.height = 4;
    bad[n].op.dst = ptr_operand(dev, 0, 2); bad[n].op.extent.depth = 2; n++;
    bad[n].what = "operand type 0"; bad[n].op = good; bad[n].op.dst.type = (CUmemcpy3DOperandType)0; n++;
    bad[n].what = "operand type 3"; bad[n].op = good; bad[n].op.src.type = (CUmemcpy3DOperandType)3; n++;
    bad[n].what = "srcAccessOrder 0"; bad[n].op = good; bad[n].op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_INVALID; n++;
    bad[n].what = "op flags PREFER_OVERLAP"; bad[n].op = good; bad[n].op.flags = 1; n++;
    bad[n].what = "op flags 0x10"; bad[n].op = good; bad[n].op.flags = 0x10; n++;
    bad[n].what = "NULL pointer operand"; bad[n].op = good; bad[n].op.src = ptr_operand(0, 0, 0); n++;
    for (int i = 0; i < n; i++) {
        char what[96];
        snprintf(what, sizeof what, "copy 1: %s", bad[i].what);
        ops[0] = good;
        ops[1] = bad[i].op;
        CALL(what, cuMemcpy3DBatchAsync(2, ops, 0, s));
    }
    ops[0] = good;
    CALL("flags 1", cuMemcpy3DBatchAsync(1, ops, 1, s));
    CALL("numOps 0", cuMemcpy3DBatchAsync(0, ops, 0, s));
    CALL("legacy stream", cuMemcpy3DBatchAsync(1, ops, 0, NULL));
    CALL("CU_STREAM_PER_THREAD", cuMemcpy3DBatchAsync(1, ops, 0, CU_STREAM_PER_THREAD));
    MUST(cuCtxSynchronize());
    /* Last: a box past its device allocation. */
    ops[0] = op3d(ptr_operand((CUdeviceptr)volume, 0, 0), ptr_operand(dev, 256, 0), 16, 17, 1);
    static unsigned char big[256 * 17];
    ops[0].src = ptr_operand((CUdeviceptr)big, 256, 0);
    CALL("box past its allocation", cuMemcpy3DBatchAsync(1, ops, 0, s));
    CALL("stream sync after", cuStreamSynchronize(s));
}

static CUmemLocation device_loc(int id) {
    CUmemLocation l;
    l.type = CU_MEM_LOCATION_TYPE_DEVICE;
    l.id = id;
    return l;
}

static CUmemLocation host_loc(void) {
    CUmemLocation l;
    l.type = CU_MEM_LOCATION_TYPE_HOST;
    l.id = 0;
    return l;
}

static void last_prefetch(const char *what, CUdeviceptr p, size_t n) {
    int v = -7;
    if (CALL(what, cuMemRangeGetAttribute(&v, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, p, n)) == CUDA_SUCCESS)
        SAY("last prefetch location %d", v);
}

static void prefetch_batch(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr m1, m2, plain;
    MUST(cuMemAllocManaged(&m1, 1 << 16, CU_MEM_ATTACH_GLOBAL));
    MUST(cuMemAllocManaged(&m2, 1 << 16, CU_MEM_ATTACH_GLOBAL));
    MUST(cuMemAlloc(&plain, 4096));
    CUdeviceptr p[2] = {m1, m2};
    size_t z[2] = {1 << 16, 4096};
    CUmemLocation locs[2] = {host_loc(), device_loc(0)};
    size_t idx[2] = {0, 1}, i0[1] = {0}, i1[1] = {1}, i00[2] = {0, 0};
    CALL("m1 to the host, m2's first 4096 bytes to device 0",
         cuMemPrefetchBatchAsync(p, z, 2, locs, idx, 2, 0, s));
    MUST(cuStreamSynchronize(s));
    last_prefetch("m1's range", m1, 1 << 16);
    last_prefetch("m2's first 4096 bytes", m2, 4096);
    CUmemLocation dev0 = device_loc(0), dev9 = device_loc(9);
    CALL("both to device 0, one location", cuMemPrefetchBatchAsync(p, z, 2, &dev0, i0, 1, 0, s));
    MUST(cuStreamSynchronize(s));
    last_prefetch("m1's range", m1, 1 << 16);
    CUdeviceptr pp[1] = {plain};
    size_t z16[1] = {16}, zbig[1] = {1 << 17}, z0[1] = {0};
    CUdeviceptr pm[1] = {m1};
    CALL("device memory", cuMemPrefetchBatchAsync(pp, z16, 1, &dev0, i0, 1, 0, s));
    CALL("past the managed allocation", cuMemPrefetchBatchAsync(pm, zbig, 1, &dev0, i0, 1, 0, s));
    CALL("size 0", cuMemPrefetchBatchAsync(pm, z0, 1, &dev0, i0, 1, 0, s));
    CALL("device 9", cuMemPrefetchBatchAsync(pm, z16, 1, &dev9, i0, 1, 0, s));
    CALL("prefetchLocIdxs {1}", cuMemPrefetchBatchAsync(pm, z16, 1, &dev0, i1, 1, 0, s));
    CALL("prefetchLocIdxs {0, 0}", cuMemPrefetchBatchAsync(p, z, 2, locs, i00, 2, 0, s));
    CALL("numPrefetchLocs 2 > count 1", cuMemPrefetchBatchAsync(pm, z16, 1, locs, idx, 2, 0, s));
    CALL("numPrefetchLocs 0", cuMemPrefetchBatchAsync(pm, z16, 1, &dev0, i0, 0, 0, s));
    CALL("count 0", cuMemPrefetchBatchAsync(pm, z16, 0, &dev0, i0, 0, 0, s));
    CALL("flags 1", cuMemPrefetchBatchAsync(pm, z16, 1, &dev0, i0, 1, 1, s));
    CALL("legacy stream", cuMemPrefetchBatchAsync(pm, z16, 1, &dev0, i0, 1, 0, NULL));
    CALL("CU_STREAM_PER_THREAD", cuMemPrefetchBatchAsync(pm, z16, 1, &dev0, i0, 1, 0, CU_STREAM_PER_THREAD));
    CALL("stream sync", cuStreamSynchronize(s));
}

static void discard_batch(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr m1, plain;
    MUST(cuMemAllocManaged(&m1, 1 << 21, CU_MEM_ATTACH_GLOBAL));
    MUST(cuMemAlloc(&plain, 4096));
    pattern((void *)m1, 1 << 21, 3);
    CUdeviceptr p[1] = {m1};
    size_t z[1] = {1 << 21}, z16[1] = {16}, i0[1] = {0};
    CALL("discard the whole allocation", cuMemDiscardBatchAsync(p, z, 1, 0, s));
    MUST(cuStreamSynchronize(s));
    SAY("the host reads the bytes it wrote: %s (cuda.h: indeterminate)", is_pattern((void *)m1, 1 << 21, 3) ? "yes" : "no");
    pattern((void *)m1, 1 << 21, 4);
    CUmemLocation dev0 = device_loc(0);
    CALL("discard and prefetch to device 0", cuMemDiscardAndPrefetchBatchAsync(p, z, 1, &dev0, i0, 1, 0, s));
    MUST(cuStreamSynchronize(s));
    last_prefetch("the range", m1, 1 << 21);
    SAY("the host reads the bytes it wrote: %s (cuda.h: indeterminate)", is_pattern((void *)m1, 1 << 21, 4) ? "yes" : "no");
    CUdeviceptr pp[1] = {plain};
    CALL("discard device memory", cuMemDiscardBatchAsync(pp, z16, 1, 0, s));
    CALL("discard, flags 1", cuMemDiscardBatchAsync(p, z16, 1, 1, s));
    CALL("discard, count 0", cuMemDiscardBatchAsync(p, z16, 0, 0, s));
    CALL("discard, legacy stream", cuMemDiscardBatchAsync(p, z16, 1, 0, NULL));
    CALL("discard and prefetch, device memory", cuMemDiscardAndPrefetchBatchAsync(pp, z16, 1, &dev0, i0, 1, 0, s));
    CALL("discard and prefetch, legacy stream", cuMemDiscardAndPrefetchBatchAsync(p, z16, 1, &dev0, i0, 1, 0, CU_STREAM_LEGACY));
    CALL("stream sync", cuStreamSynchronize(s));
}

static CUDA_MEMCPY3D_PEER peer(CUdeviceptr src, CUcontext sc, CUdeviceptr dst, CUcontext dc) {
    CUDA_MEMCPY3D_PEER c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = src;
    c.srcContext = sc;
    c.srcPitch = 64;
    c.srcHeight = 3;
    c.dstXInBytes = 8;
    c.dstY = 1;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = dst;
    c.dstContext = dc;
    c.dstPitch = 32;
    c.dstHeight = 4;
    c.WidthInBytes = 16;
    c.Height = 3;
    c.Depth = 1;
    return c;
}

static void memcpy_3d_peer(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr src, dst;
    MUST(cuMemAlloc(&src, 64 * 4));
    MUST(cuMemAlloc(&dst, 32 * 5));
    static unsigned char bytes[256], got[160];
    pattern(bytes, sizeof bytes, 5);
    MUST(cuMemcpyHtoD(src, bytes, sizeof bytes));
    MUST(cuMemsetD8(dst, 0, 160));
    CUDA_MEMCPY3D_PEER c = peer(src, ctx, dst, ctx);
    CALL("3D peer, both contexts the primary", cuMemcpy3DPeer(&c));
    MUST(cuMemcpyDtoH(got, dst, 160));
    int ok = 1;
    for (int y = 0; y < 3; y++) ok &= memcmp(got + (y + 1) * 32 + 8, bytes + y * 64, 16) == 0;
    SAY("box copied: %s, row 0 untouched: %s", ok ? "yes" : "no", got[0] == 0 && got[31] == 0 ? "yes" : "no");
    MUST(cuMemsetD8(dst, 0, 160));
    c = peer(src, NULL, dst, NULL);
    CALL("3D peer, NULL contexts", cuMemcpy3DPeer(&c));
    CALL("3D peer async, NULL contexts", cuMemcpy3DPeerAsync(&c, s));
    CALL("stream sync", cuStreamSynchronize(s));
    MUST(cuMemcpyDtoH(got, dst, 160));
    SAY("row 1 copied: %s", memcmp(got + 40, bytes, 16) == 0 ? "yes" : "no");
    /* A host side and an array side (its context ignored). */
    CUarray arr = array3d(16, 3, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1);
    c = peer(src, ctx, 0, NULL);
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    c.dstArray = arr;
    c.dstXInBytes = 0;
    c.dstY = 0;
    CALL("3D peer to an array", cuMemcpy3DPeer(&c));
    c = peer(src, ctx, 0, NULL);
    c.dstMemoryType = CU_MEMORYTYPE_HOST;
    c.dstHost = got;
    CALL("3D peer to host memory", cuMemcpy3DPeer(&c));
    c = peer(src, ctx, dst, ctx);
    c.srcLOD = 1;
    CALL("srcLOD 1", cuMemcpy3DPeer(&c));
    c = peer(src, ctx, dst, ctx);
    c.WidthInBytes = 40;
    CALL("width past the destination's pitch", cuMemcpy3DPeer(&c));
    CALL("stream sync", cuStreamSynchronize(s));
    MUST(cuCtxSynchronize());
    /* Last: a box past the source's allocation. */
    c = peer(src, ctx, dst, ctx);
    c.Height = 5;
    c.srcHeight = 5;
    c.dstHeight = 5;
    c.dstY = 0;
    CALL("box past the source's allocation", cuMemcpy3DPeer(&c));
}

/* What the recording left open. "batch of 3, two attributes" was refused at its third
 * copy, of 0 bytes, device to device, read during the call: one of each, alone. Then
 * prefetchLocIdxs {0, 0} (taken): which location the range goes to. */
static void batch_zero_and_order(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr a, b, m;
    MUST(cuMemAlloc(&a, 4096));
    MUST(cuMemAlloc(&b, 4096));
    MUST(cuMemAllocManaged(&m, 1 << 16, CU_MEM_ATTACH_GLOBAL));
    static unsigned char tiny[16];
    size_t i0[1] = {0};
    CUmemcpyAttributes st = attr(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM);
    CUmemcpyAttributes during = attr(CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL);
    one_copy("0 bytes device to device, stream order", b, a, 0, &st, i0, 1, s);
    one_copy("0 bytes from the host, stream order", a, (CUdeviceptr)tiny, 0, &st, i0, 1, s);
    one_copy("16 bytes device to device, read during the call", b, a, 16, &during, i0, 1, s);
    memcpy_batch_v1 v1 = (memcpy_batch_v1)entry("cuMemcpyBatchAsync", 12080);
    if (v1) {
        CUdeviceptr d2[2] = {a, b}, s2[2] = {(CUdeviceptr)tiny, (CUdeviceptr)tiny};
        size_t z2[2] = {16, 0}, fail = SENTINEL;
        CALL("12.8 form, copy 1 of 0 bytes", v1(d2, s2, z2, 2, &st, i0, 1, &fail, s));
        OUT(fail);
    }
    CUdeviceptr p[2] = {m, m + (1 << 15)};
    size_t z[2] = {1 << 15, 1 << 15}, i00[2] = {0, 0};
    CUmemLocation locs[2] = {host_loc(), device_loc(0)};
    CALL("prefetchLocIdxs {0, 0}, the host then device 0", cuMemPrefetchBatchAsync(p, z, 2, locs, i00, 2, 0, s));
    CALL("stream sync", cuStreamSynchronize(s));
    last_prefetch("the first range", m, 1 << 15);
    last_prefetch("the second range", m + (1 << 15), 1 << 15);
}

/* NULL arrays with a count, each in a section of its own: the H200 crashes on some NULL
 * arrays (cuStreamBatchMemOp_v2's, probe api_gaps), which would lose what follows. */
static CUmemcpyAttributes nattr[1];

static CUstream null_setup(CUdeviceptr *m) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    MUST(cuMemAllocManaged(m, 4096, CU_MEM_ATTACH_GLOBAL));
    nattr[0].srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    return s;
}

static CUdeviceptr nm;
static size_t n16[2] = {16, 16}, nidx[1] = {0};
static CUmemLocation nloc[1] = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}};

#define NULL_SECTION(fn, what, call)          \
    static void fn(void) {                    \
        CUstream s = null_setup(&nm);         \
        CUdeviceptr p[2] = {nm, nm + 64};     \
        (void)p;                              \
        CALL(what, call);                     \
        CALL("stream sync", cuStreamSynchronize(s)); \
    }
NULL_SECTION(null_dsts, "NULL dsts", cuMemcpyBatchAsync(NULL, p, n16, 2, nattr, nidx, 1, s))
NULL_SECTION(null_srcs, "NULL srcs", cuMemcpyBatchAsync(p, NULL, n16, 2, nattr, nidx, 1, s))
NULL_SECTION(null_sizes, "NULL sizes", cuMemcpyBatchAsync(p, p, NULL, 2, nattr, nidx, 1, s))
NULL_SECTION(null_attrs, "NULL attrs", cuMemcpyBatchAsync(p, p, n16, 2, NULL, nidx, 1, s))
NULL_SECTION(null_attrs_idxs, "NULL attrsIdxs", cuMemcpyBatchAsync(p, p, n16, 2, nattr, NULL, 1, s))
NULL_SECTION(null_op_list, "NULL opList", cuMemcpy3DBatchAsync(1, NULL, 0, s))
NULL_SECTION(null_dptrs, "NULL dptrs", cuMemPrefetchBatchAsync(NULL, n16, 1, nloc, nidx, 1, 0, s))
NULL_SECTION(null_locs, "NULL prefetchLocs", cuMemPrefetchBatchAsync(p, n16, 1, NULL, nidx, 1, 0, s))
NULL_SECTION(null_loc_idxs, "NULL prefetchLocIdxs", cuMemPrefetchBatchAsync(p, n16, 1, nloc, NULL, 1, 0, s))
NULL_SECTION(null_discard_sizes, "NULL sizes", cuMemDiscardBatchAsync(p, NULL, 1, 0, s))
NULL_SECTION(null_discard_locs, "NULL prefetchLocs", cuMemDiscardAndPrefetchBatchAsync(p, n16, 1, NULL, nidx, 1, 0, s))

/* The call the H200 crashed on (SIGSEGV) in memcpy3d-peer, alone in a section run last,
 * so that memcpy3d-peer runs to its end. */
static void memcpy_3d_peer_null_crash(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CALL("NULL pCopy", cuMemcpy3DPeer(NULL));
}

/* The next call the H200 crashed on (SIGSEGV) in memcpy3d-peer once the synchronous one
 * had moved out: alone, last. */
static void memcpy_3d_peer_async_null_crash(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CALL("NULL pCopy, async", cuMemcpy3DPeerAsync(NULL, s));
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    section("memcpy-batch", memcpy_batch);
    section("memcpy3d-batch", memcpy_3d_batch);
    section("prefetch-batch", prefetch_batch);
    section("discard-batch", discard_batch);
    section("memcpy3d-peer", memcpy_3d_peer);
    section("batch-zero-and-order", batch_zero_and_order);
    section("null-dsts", null_dsts);
    section("null-srcs", null_srcs);
    section("null-sizes", null_sizes);
    section("null-attrs", null_attrs);
    section("null-attrs-idxs", null_attrs_idxs);
    section("null-op-list", null_op_list);
    section("null-prefetch-dptrs", null_dptrs);
    section("null-prefetch-locs", null_locs);
    section("null-prefetch-loc-idxs", null_loc_idxs);
    section("null-discard-sizes", null_discard_sizes);
    section("null-discard-and-prefetch-locs", null_discard_locs);
    section("memcpy3d-peer-null-crash", memcpy_3d_peer_null_crash);
    section("memcpy3d-peer-async-null-crash", memcpy_3d_peer_async_null_crash);
    return 0;
}
