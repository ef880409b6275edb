/* Stream-ordered memory pools, legacy IPC (cuIpc*), host callbacks and stream/event
 * waits: what the real driver answers, valid use first, then each kind of bad input.
 * The ipc-legacy section re-execs this program (/proc/self/exe ipc-child HEX) so that a
 * second process opens the parent's handle. Never calls multicast APIs. */
#include "probe.h"
#include <errno.h>
#include <time.h>

#define MiB ((size_t)1 << 20)

/* ---------- helpers ---------- */

static const char *same(int eq) { return eq ? "equal" : "differ"; }
static const char *written(const float *f) {
    uint32_t v;
    memcpy(&v, f, 4);
    return v == 0xA5A5A5A5u ? "untouched" : v == 0 ? "zero" : "written";
}

static void show_pool_attrs(CUmemoryPool pool, const char *when) {
    static const struct { CUmemPool_attribute a; const char *n; int is_int; } attrs[] = {
        {CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, "REUSE_FOLLOW_EVENT_DEPENDENCIES", 1},
        {CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, "REUSE_ALLOW_OPPORTUNISTIC", 1},
        {CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, "REUSE_ALLOW_INTERNAL_DEPENDENCIES", 1},
        {CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, "RELEASE_THRESHOLD", 0},
        {CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, "RESERVED_MEM_CURRENT", 0},
        {CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, "RESERVED_MEM_HIGH", 0},
        {CU_MEMPOOL_ATTR_USED_MEM_CURRENT, "USED_MEM_CURRENT", 0},
        {CU_MEMPOOL_ATTR_USED_MEM_HIGH, "USED_MEM_HIGH", 0},
    };
    SAY("pool attributes %s:", when);
    for (unsigned i = 0; i < sizeof attrs / sizeof *attrs; i++) {
        char what[96];
        snprintf(what, sizeof what, "  get %s", attrs[i].n);
        if (attrs[i].is_int) {
            int v;
            FILL(v);
            if (CALL(what, cuMemPoolGetAttribute(pool, attrs[i].a, &v)) == CUDA_SUCCESS) SAY("  %s = %d", attrs[i].n, v);
        } else {
            cuuint64_t v;
            FILL(v);
            if (CALL(what, cuMemPoolGetAttribute(pool, attrs[i].a, &v)) == CUDA_SUCCESS)
                SAY("  %s = %llu", attrs[i].n, (unsigned long long)v);
        }
    }
}

static CUmemPoolProps pool_props(CUmemLocationType type, int id, int handle_types) {
    CUmemPoolProps p;
    memset(&p, 0, sizeof p);
    p.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.handleTypes = (CUmemAllocationHandleType)handle_types;
    p.location.type = type;
    p.location.id = id;
    return p;
}

/* Reads back one 32-bit word of device memory; says what it holds or why it could not. */
static void read_word(const char *what, CUdeviceptr p) {
    unsigned v = 0;
    CUresult r = cuMemcpyDtoH(&v, p, sizeof v);
    if (r == CUDA_SUCCESS)
        SAY("%s reads 0x%08x", what, v);
    else
        SAY("%s: read back = %s", what, rname(r));
}

/* ---------- 1. default-pool ---------- */

static void default_pool(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    int supported = -1;
    CALL("attribute MEMORY_POOLS_SUPPORTED", cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 0));
    SAY("memory pools supported = %d", supported);
    int types = -1;
    CALL("attribute MEMPOOL_SUPPORTED_HANDLE_TYPES", cuDeviceGetAttribute(&types, CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, 0));
    SAY("mempool supported handle types = %d", types);
    CUmemoryPool def, cur, def2;
    FILL(def); FILL(cur); FILL(def2);
    CUresult rd = CALL("get-default-mem-pool dev 0", cuDeviceGetDefaultMemPool(&def, 0));
    CALL("get-default-mem-pool again", cuDeviceGetDefaultMemPool(&def2, 0));
    CALL("get-mem-pool dev 0", cuDeviceGetMemPool(&cur, 0));
    if (rd == CUDA_SUCCESS) {
        SAY("default pool is non-null: %s", def ? "yes" : "no");
        SAY("default twice: %s", same(def == def2));
        SAY("current pool and default: %s", same(cur == def));
    }
    CUmemoryPool bad;
    FILL(bad); CALL("get-default-mem-pool dev 99", cuDeviceGetDefaultMemPool(&bad, 99)); OUT(bad);
    FILL(bad); CALL("get-mem-pool dev 99", cuDeviceGetMemPool(&bad, 99)); OUT(bad);
    FILL(bad); CALL("get-default-mem-pool dev -1", cuDeviceGetDefaultMemPool(&bad, -1)); OUT(bad);
    CALL("get-default-mem-pool NULL out", cuDeviceGetDefaultMemPool(NULL, 0));
    CALL("get-mem-pool NULL out", cuDeviceGetMemPool(NULL, 0));
    if (rd != CUDA_SUCCESS) return;

    show_pool_attrs(def, "at first");
    int v;
    FILL(v); CALL("get attribute 99", cuMemPoolGetAttribute(def, (CUmemPool_attribute)99, &v)); OUT(v);
    CALL("get attribute NULL value", cuMemPoolGetAttribute(def, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, NULL));
    FILL(v); CALL("get attribute NULL pool", cuMemPoolGetAttribute(NULL, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &v)); OUT(v);

    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    size_t sizes[] = {1, MiB, 40 * MiB};
    CUdeviceptr p[3] = {0, 0, 0};
    CUresult ra[3];
    for (int i = 0; i < 3; i++) {
        char what[64];
        snprintf(what, sizeof what, "alloc-async %zu bytes", sizes[i]);
        ra[i] = CALL(what, cuMemAllocAsync(&p[i], sizes[i], s));
    }
    CALL("stream-synchronize", cuStreamSynchronize(s));
    show_pool_attrs(def, "with 1 B + 1 MiB + 40 MiB allocated");
    for (int i = 0; i < 3; i++) {
        if (ra[i] != CUDA_SUCCESS) continue;
        char what[64];
        snprintf(what, sizeof what, "free-async %zu bytes", sizes[i]);
        CALL(what, cuMemFreeAsync(p[i], s));
    }
    CALL("stream-synchronize", cuStreamSynchronize(s));
    show_pool_attrs(def, "after free-async + synchronize");
    CALL("trim-to 0", cuMemPoolTrimTo(def, 0));
    show_pool_attrs(def, "after trim-to 0");
    cuuint64_t zero = 0;
    CALL("reset RESERVED_MEM_HIGH to 0", cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &zero));
    CALL("reset USED_MEM_HIGH to 0", cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &zero));
    cuuint64_t one = 1;
    CALL("set USED_MEM_HIGH to 1", cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &one));
    CALL("set RESERVED_MEM_CURRENT (read-only)", cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &zero));
    CALL("set USED_MEM_CURRENT (read-only)", cuMemPoolSetAttribute(def, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &zero));
    show_pool_attrs(def, "after resetting the high marks");
    CALL("trim-to NULL pool", cuMemPoolTrimTo(NULL, 0));
    CALL("trim-to huge", cuMemPoolTrimTo(def, (size_t)1 << 50));
    CALL("stream-destroy", cuStreamDestroy(s));
}

/* ---------- 2. alloc-async ---------- */

static void alloc_async(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUstream s;
    MUST(cuStreamCreate(&s, 0));
    CUmemoryPool def = NULL;
    CUresult rd = CALL("get-default-mem-pool", cuDeviceGetDefaultMemPool(&def, 0));

    CUdeviceptr a, b;
    FILL(a); CUresult rna = CALL("alloc-async 1 MiB NULL stream", cuMemAllocAsync(&a, MiB, NULL));
    FILL(b); CUresult rnb = CALL("alloc-async 1 MiB created stream", cuMemAllocAsync(&b, MiB, s));
    CUdeviceptr z;
    FILL(z); CALL("alloc-async size 0", cuMemAllocAsync(&z, 0, s)); OUT(z);
    CALL("alloc-async NULL out-param", cuMemAllocAsync(NULL, MiB, s));
    FILL(z); CALL("alloc-async huge", cuMemAllocAsync(&z, (size_t)1 << 50, s)); OUT(z);
    FILL(z); CALL("alloc-async CU_STREAM_LEGACY", cuMemAllocAsync(&z, 4096, CU_STREAM_LEGACY));
    if (*(uint64_t *)&z != SENTINEL) CALL("free-async CU_STREAM_LEGACY", cuMemFreeAsync(z, CU_STREAM_LEGACY));
    FILL(z); CALL("alloc-async CU_STREAM_PER_THREAD", cuMemAllocAsync(&z, 4096, CU_STREAM_PER_THREAD));
    if (*(uint64_t *)&z != SENTINEL) CALL("free-async CU_STREAM_PER_THREAD", cuMemFreeAsync(z, CU_STREAM_PER_THREAD));
    CALL("stream-synchronize", cuStreamSynchronize(s));
    CALL("ctx-synchronize", cuCtxSynchronize());

    if (rnb == CUDA_SUCCESS) {
        CALL("memset-d32-async b", cuMemsetD32Async(b, 0x5eed1234u, MiB / 4, s));
        unsigned back[2] = {0, 0};
        CALL("memcpy-dtoh-async b", cuMemcpyDtoHAsync(back, b + MiB - 8, 8, s));
        CALL("stream-synchronize", cuStreamSynchronize(s));
        SAY("b's last two words: 0x%08x 0x%08x", back[0], back[1]);
        CUdeviceptr base; size_t size;
        FILL(base); FILL(size);
        if (CALL("address-range b+100", cuMemGetAddressRange(&base, &size, b + 100)) == CUDA_SUCCESS)
            SAY("base is b: %s, size %zu", base == b ? "yes" : "no", size);
        unsigned mt; FILL(mt);
        if (CALL("pointer-attribute MEMORY_TYPE b", cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, b)) == CUDA_SUCCESS)
            SAY("memory type %u", mt);
        CUmemoryPool mp; FILL(mp);
        if (CALL("pointer-attribute MEMPOOL_HANDLE b", cuPointerGetAttribute(&mp, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, b)) == CUDA_SUCCESS)
            SAY("mempool handle and default pool: %s", rd == CUDA_SUCCESS ? same(mp == def) : "no default");
        size_t rs; FILL(rs);
        if (CALL("pointer-attribute RANGE_SIZE b+100", cuPointerGetAttribute(&rs, CU_POINTER_ATTRIBUTE_RANGE_SIZE, b + 100)) == CUDA_SUCCESS)
            SAY("range size %zu", rs);
        CUdeviceptr st; FILL(st);
        if (CALL("pointer-attribute RANGE_START_ADDR b+100", cuPointerGetAttribute(&st, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, b + 100)) == CUDA_SUCCESS)
            SAY("range start is b: %s", st == b ? "yes" : "no");
        int isvmm; FILL(isvmm);
        if (CALL("pointer-attribute IS_LEGACY_CUDA_IPC_CAPABLE b", cuPointerGetAttribute(&isvmm, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, b)) == CUDA_SUCCESS)
            SAY("legacy ipc capable %d", isvmm);
        if (CALL("pointer-attribute MAPPED b", cuPointerGetAttribute(&isvmm, CU_POINTER_ATTRIBUTE_MAPPED, b)) == CUDA_SUCCESS)
            SAY("mapped %d", isvmm);
    }
    if (rna == CUDA_SUCCESS && rnb == CUDA_SUCCESS) {
        CUdeviceptr lo = a < b ? a : b, hi = a < b ? b : a;
        SAY("NULL-stream then created-stream 1 MiB: second is %s, distance %llu bytes", b > a ? "above" : "below", (unsigned long long)(hi - lo));
    }
    /* Two consecutive allocations on one stream. */
    CUdeviceptr c, d;
    CUresult rc = CALL("alloc-async 1 MiB c", cuMemAllocAsync(&c, MiB, s));
    CUresult rdd = CALL("alloc-async 1 MiB d", cuMemAllocAsync(&d, MiB, s));
    if (rc == CUDA_SUCCESS && rdd == CUDA_SUCCESS) {
        CUdeviceptr lo = c < d ? c : d, hi = c < d ? d : c;
        SAY("consecutive 1 MiB: second is %s, distance %llu bytes", d > c ? "above" : "below", (unsigned long long)(hi - lo));
    }
    /* Sub-MiB sizes: how the pool rounds them. */
    CUdeviceptr e1, e2;
    CUresult r1 = CALL("alloc-async 100 bytes e1", cuMemAllocAsync(&e1, 100, s));
    CUresult r2 = CALL("alloc-async 100 bytes e2", cuMemAllocAsync(&e2, 100, s));
    if (r1 == CUDA_SUCCESS && r2 == CUDA_SUCCESS) {
        CUdeviceptr lo = e1 < e2 ? e1 : e2, hi = e1 < e2 ? e2 : e1;
        SAY("consecutive 100 B: distance %llu bytes", (unsigned long long)(hi - lo));
        size_t sz = 0; CUdeviceptr base;
        if (CALL("address-range e1", cuMemGetAddressRange(&base, &sz, e1)) == CUDA_SUCCESS) SAY("e1 range size %zu", sz);
    }
    if (r1 == CUDA_SUCCESS) CALL("free-async e1", cuMemFreeAsync(e1, s));
    if (r2 == CUDA_SUCCESS) CALL("free-async e2", cuMemFreeAsync(e2, s));
    if (rc == CUDA_SUCCESS) CALL("free-async c", cuMemFreeAsync(c, s));
    if (rdd == CUDA_SUCCESS) CALL("free-async d", cuMemFreeAsync(d, s));
    CALL("stream-synchronize", cuStreamSynchronize(s));
    /* Reuse: after free + sync, does the same size come back at the same place? */
    if (rc == CUDA_SUCCESS) {
        CUdeviceptr c2;
        if (CALL("alloc-async 1 MiB after freeing c", cuMemAllocAsync(&c2, MiB, s)) == CUDA_SUCCESS) {
            SAY("reused c's or d's address: %s", (c2 == c || c2 == d) ? "yes" : "no");
            CALL("free-async", cuMemFreeAsync(c2, s));
        }
    }

    /* Bad frees. */
    if (rna == CUDA_SUCCESS) {
        CALL("free-async a (NULL stream)", cuMemFreeAsync(a, NULL));
        CALL("ctx-synchronize", cuCtxSynchronize());
        CALL("free-async a again", cuMemFreeAsync(a, NULL));
        CALL("ctx-synchronize", cuCtxSynchronize());
    }
    if (rnb == CUDA_SUCCESS) {
        CALL("free-async b+4096 (interior)", cuMemFreeAsync(b + 4096, s));
        CALL("stream-synchronize", cuStreamSynchronize(s));
        CALL("mem-free b (async memory, cuMemFree)", cuMemFree(b));
        CALL("ctx-synchronize", cuCtxSynchronize());
        CALL("free-async b after cuMemFree", cuMemFreeAsync(b, s));
        CALL("stream-synchronize", cuStreamSynchronize(s));
    }
    CUdeviceptr m;
    if (CALL("mem-alloc 1 MiB", cuMemAlloc(&m, MiB)) == CUDA_SUCCESS) {
        CALL("free-async of cuMemAlloc memory", cuMemFreeAsync(m, s));
        CALL("stream-synchronize", cuStreamSynchronize(s));
        CALL("mem-free it after", cuMemFree(m));
    }
    CALL("free-async 0", cuMemFreeAsync(0, s));
    CALL("free-async 0x1000", cuMemFreeAsync(0x1000, s));
    CALL("stream-synchronize", cuStreamSynchronize(s));
    CALL("stream-destroy", cuStreamDestroy(s));
}

/* ---------- 3. pool-create ---------- */

static void pool_create(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUmemoryPool def = NULL;
    CALL("get-default-mem-pool", cuDeviceGetDefaultMemPool(&def, 0));

    CUmemPoolProps pp = pool_props(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_NONE);
    CUmemoryPool pool, pfd, bad;
    FILL(pool); CUresult rp = CALL("pool-create device 0, handle type none", cuMemPoolCreate(&pool, &pp));
    CUmemPoolProps pf = pool_props(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    FILL(pfd); CUresult rf = CALL("pool-create device 0, POSIX fd", cuMemPoolCreate(&pfd, &pf));
    if (rp == CUDA_SUCCESS && rf == CUDA_SUCCESS) SAY("two pools: %s", same(pool == pfd));
    if (rp == CUDA_SUCCESS) SAY("new pool and default: %s", same(pool == def));

    CUmemPoolProps pb = pool_props(CU_MEM_LOCATION_TYPE_DEVICE, 99, 0);
    FILL(bad); CALL("pool-create device 99", cuMemPoolCreate(&bad, &pb)); OUT(bad);
    pb = pool_props(CU_MEM_LOCATION_TYPE_INVALID, 0, 0);
    FILL(bad); CALL("pool-create location INVALID", cuMemPoolCreate(&bad, &pb)); OUT(bad);
    pb = pool_props((CUmemLocationType)77, 0, 0);
    FILL(bad); CALL("pool-create location type 77", cuMemPoolCreate(&bad, &pb)); OUT(bad);
    pb = pool_props(CU_MEM_LOCATION_TYPE_DEVICE, 0, 0);
    pb.allocType = CU_MEM_ALLOCATION_TYPE_INVALID;
    FILL(bad); CALL("pool-create alloc type INVALID", cuMemPoolCreate(&bad, &pb)); OUT(bad);
    pb = pool_props(CU_MEM_LOCATION_TYPE_DEVICE, 0, 0x40);
    FILL(bad); CALL("pool-create handle types 0x40", cuMemPoolCreate(&bad, &pb)); OUT(bad);
    pb = pool_props(CU_MEM_LOCATION_TYPE_DEVICE, 0, 0);
    pb.reserved[0] = 1;
    FILL(bad); CALL("pool-create reserved byte set", cuMemPoolCreate(&bad, &pb));
    if (*(uint64_t *)&bad != SENTINEL) { SAY("  (a pool came back; destroying it)"); cuMemPoolDestroy(bad); }
    FILL(bad); CALL("pool-create NULL props", cuMemPoolCreate(&bad, NULL)); OUT(bad);
    CALL("pool-create NULL out", cuMemPoolCreate(NULL, &pp));

    if (rp != CUDA_SUCCESS) { CALL("stream-destroy", cuStreamDestroy(s)); return; }
    show_pool_attrs(pool, "of a new pool");
    cuuint64_t thr = 64 * MiB, thr_back;
    CALL("set RELEASE_THRESHOLD 64 MiB", cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &thr));
    FILL(thr_back);
    if (CALL("get RELEASE_THRESHOLD", cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &thr_back)) == CUDA_SUCCESS)
        SAY("release threshold %llu", (unsigned long long)thr_back);
    thr = ~0ull;
    CALL("set RELEASE_THRESHOLD max", cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &thr));
    FILL(thr_back);
    if (CALL("get RELEASE_THRESHOLD", cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &thr_back)) == CUDA_SUCCESS)
        SAY("release threshold %llu", (unsigned long long)thr_back);
    int off = 0, two = 2, back;
    CALL("set REUSE_ALLOW_OPPORTUNISTIC 0", cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &off));
    FILL(back);
    if (CALL("get REUSE_ALLOW_OPPORTUNISTIC", cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &back)) == CUDA_SUCCESS)
        SAY("opportunistic %d", back);
    CALL("set REUSE_FOLLOW_EVENT_DEPENDENCIES 2", cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, &two));
    FILL(back);
    if (CALL("get REUSE_FOLLOW_EVENT_DEPENDENCIES", cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, &back)) == CUDA_SUCCESS)
        SAY("follow event dependencies %d", back);
    CALL("set attribute 99", cuMemPoolSetAttribute(pool, (CUmemPool_attribute)99, &off));

    /* Allocations from it. */
    CUdeviceptr p1, p2;
    FILL(p1); CUresult r1 = CALL("alloc-from-pool 1 MiB", cuMemAllocFromPoolAsync(&p1, MiB, pool, s));
    FILL(p2); CUresult r2 = CALL("alloc-from-pool 3 MiB", cuMemAllocFromPoolAsync(&p2, 3 * MiB, pool, s));
    CUdeviceptr z;
    FILL(z); CALL("alloc-from-pool size 0", cuMemAllocFromPoolAsync(&z, 0, pool, s)); OUT(z);
    FILL(z); CALL("alloc-from-pool NULL pool", cuMemAllocFromPoolAsync(&z, MiB, NULL, s)); OUT(z);
    CALL("alloc-from-pool NULL out", cuMemAllocFromPoolAsync(NULL, MiB, pool, s));
    CALL("stream-synchronize", cuStreamSynchronize(s));
    if (r1 == CUDA_SUCCESS) {
        CUmemoryPool mp; FILL(mp);
        if (CALL("pointer-attribute MEMPOOL_HANDLE p1", cuPointerGetAttribute(&mp, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p1)) == CUDA_SUCCESS)
            SAY("p1's pool and the created pool: %s; and the default: %s", same(mp == pool), same(mp == def));
        CALL("memset-d32 p1", cuMemsetD32(p1, 0xabcd0001u, MiB / 4));
        read_word("p1", p1);
    }
    show_pool_attrs(pool, "with 1 MiB + 3 MiB allocated");

    /* Access. */
    CUmemLocation loc0 = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    CUmemAccess_flags fl;
    FILL(fl); CALL("pool-get-access device 0", cuMemPoolGetAccess(&fl, pool, &loc0)); OUT(fl);
    CUmemAccessDesc rw = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CUmemAccessDesc none = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_NONE);
    CUmemAccessDesc ro = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_READ);
    CUmemAccessDesc d99 = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 99, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CUmemAccessDesc host = access_for(CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CALL("pool-set-access device 0 rw", cuMemPoolSetAccess(pool, &rw, 1));
    FILL(fl); CALL("pool-get-access device 0", cuMemPoolGetAccess(&fl, pool, &loc0)); OUT(fl);
    CALL("pool-set-access device 0 read-only", cuMemPoolSetAccess(pool, &ro, 1));
    CALL("pool-set-access device 0 none (owner)", cuMemPoolSetAccess(pool, &none, 1));
    FILL(fl); CALL("pool-get-access device 0", cuMemPoolGetAccess(&fl, pool, &loc0)); OUT(fl);
    CALL("pool-set-access device 99", cuMemPoolSetAccess(pool, &d99, 1));
    CALL("pool-set-access host", cuMemPoolSetAccess(pool, &host, 1));
    CALL("pool-set-access count 0", cuMemPoolSetAccess(pool, &rw, 0));
    CUmemLocation loc99 = {CU_MEM_LOCATION_TYPE_DEVICE, 99};
    FILL(fl); CALL("pool-get-access device 99", cuMemPoolGetAccess(&fl, pool, &loc99)); OUT(fl);
    CUmemLocation lochost = {CU_MEM_LOCATION_TYPE_HOST, 0};
    FILL(fl); CALL("pool-get-access host", cuMemPoolGetAccess(&fl, pool, &lochost)); OUT(fl);
    FILL(fl); CALL("pool-get-access default pool device 0", cuMemPoolGetAccess(&fl, def, &loc0)); OUT(fl);

    /* The device's current pool. */
    CALL("device-set-mem-pool created", cuDeviceSetMemPool(0, pool));
    CUmemoryPool cur; FILL(cur);
    if (CALL("device-get-mem-pool", cuDeviceGetMemPool(&cur, 0)) == CUDA_SUCCESS)
        SAY("current and created: %s; current and default: %s", same(cur == pool), same(cur == def));
    CUdeviceptr q;
    if (CALL("alloc-async 1 MiB (current = created)", cuMemAllocAsync(&q, MiB, s)) == CUDA_SUCCESS) {
        CUmemoryPool mp; FILL(mp);
        if (CALL("pointer-attribute MEMPOOL_HANDLE", cuPointerGetAttribute(&mp, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, q)) == CUDA_SUCCESS)
            SAY("its pool and the created pool: %s", same(mp == pool));
        CALL("free-async it", cuMemFreeAsync(q, s));
    }
    CALL("device-set-mem-pool dev 99", cuDeviceSetMemPool(99, pool));
    CALL("device-set-mem-pool NULL", cuDeviceSetMemPool(0, NULL));
    CALL("device-set-mem-pool default", cuDeviceSetMemPool(0, def));
    FILL(cur);
    if (CALL("device-get-mem-pool", cuDeviceGetMemPool(&cur, 0)) == CUDA_SUCCESS) SAY("current and default: %s", same(cur == def));

    /* Destroy with allocations outstanding, then use what was outstanding. */
    CALL("device-set-mem-pool created (again)", cuDeviceSetMemPool(0, pool));
    CALL("pool-destroy with allocations outstanding and set as current", cuMemPoolDestroy(pool));
    FILL(cur);
    if (CALL("device-get-mem-pool after destroy", cuDeviceGetMemPool(&cur, 0)) == CUDA_SUCCESS)
        SAY("current and destroyed: %s; current and default: %s", same(cur == pool), same(cur == def));
    if (r1 == CUDA_SUCCESS) read_word("p1 after pool-destroy", p1);
    if (r1 == CUDA_SUCCESS) CALL("free-async p1 after pool-destroy", cuMemFreeAsync(p1, s));
    if (r2 == CUDA_SUCCESS) CALL("free-async p2 after pool-destroy", cuMemFreeAsync(p2, s));
    CALL("stream-synchronize", cuStreamSynchronize(s));
    if (rf == CUDA_SUCCESS) {
        CUdeviceptr x;
        CUresult rx = CALL("alloc-from-pool fd pool 1 MiB", cuMemAllocFromPoolAsync(&x, MiB, pfd, s));
        int fd = -1;
        if (CALL("pool-export fd pool", cuMemPoolExportToShareableHandle(&fd, pfd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)) == CUDA_SUCCESS) {
            SAY("fd %s", fd >= 0 ? "is an fd" : "is negative");
            if (fd >= 0) close(fd);
        }
        if (rx == CUDA_SUCCESS) CALL("free-async", cuMemFreeAsync(x, s));
        CALL("stream-synchronize", cuStreamSynchronize(s));
        CALL("pool-destroy fd pool (empty)", cuMemPoolDestroy(pfd));
    }
    CALL("pool-destroy default pool", cuMemPoolDestroy(def));
    CALL("pool-destroy NULL", cuMemPoolDestroy(NULL));
    CALL("stream-destroy", cuStreamDestroy(s));
    /* Last, the likeliest to crash: NULL pointers and a destroyed pool. */
    CUmemoryPool p2nd;
    if (cuMemPoolCreate(&p2nd, &pp) == CUDA_SUCCESS) {
        FILL(fl); CALL("pool-get-access NULL location", cuMemPoolGetAccess(&fl, p2nd, NULL)); OUT(fl);
        CALL("pool-set-access NULL map", cuMemPoolSetAccess(p2nd, NULL, 1));
        cuMemPoolDestroy(p2nd);
    }
    int v; FILL(v);
    CALL("get attribute of the destroyed pool", cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &v));
    CALL("pool-destroy again", cuMemPoolDestroy(pool));
}

/* ---------- 4. ipc-legacy ---------- */

static void to_hex(const unsigned char *b, size_t n, char *out) {
    for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", b[i]);
    out[2 * n] = 0;
}
static int from_hex(const char *s, unsigned char *b, size_t n) {
    if (strlen(s) != 2 * n) return -1;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1) return -1;
        b[i] = (unsigned char)v;
    }
    return 0;
}

/* The re-exec'd child: opens the parent's handle, reads the parent's word, writes its own. */
static int ipc_child(const char *hex, const char *tag) {
    alarm(20);
    setvbuf(stdout, NULL, _IOLBF, 0);
    CUipcMemHandle h;
    if (from_hex(hex, (unsigned char *)h.reserved, sizeof h.reserved) != 0) {
        printf("  child %s: bad handle argument\n", tag);
        return 2;
    }
    CUcontext ctx;
    CUresult r = cuInit(0);
    if (r == CUDA_SUCCESS) r = cuDevicePrimaryCtxRetain(&ctx, 0);
    if (r == CUDA_SUCCESS) r = cuCtxSetCurrent(ctx);
    if (r != CUDA_SUCCESS) { printf("  child %s: setup = %s\n", tag, rname(r)); return 3; }
    char what[96];
    CUdeviceptr p, p2;
    FILL(p);
    snprintf(what, sizeof what, "  child %s: ipc-open", tag);
    r = CALL(what, cuIpcOpenMemHandle(&p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    if (r != CUDA_SUCCESS) { OUT(p); return 0; }
    unsigned v = 0;
    snprintf(what, sizeof what, "  child %s: read", tag);
    if (CALL(what, cuMemcpyDtoH(&v, p, sizeof v)) == CUDA_SUCCESS) printf("    child %s reads 0x%08x\n", tag, v);
    unsigned mine = 0xC0DE0000u | (unsigned)(tag[0] & 0xff);
    snprintf(what, sizeof what, "  child %s: write", tag);
    CALL(what, cuMemcpyHtoD(p + 4, &mine, sizeof mine));
    CUdeviceptr base; size_t size;
    snprintf(what, sizeof what, "  child %s: address-range", tag);
    if (CALL(what, cuMemGetAddressRange(&base, &size, p + 4)) == CUDA_SUCCESS)
        printf("    base is the opened pointer: %s, size %zu\n", base == p ? "yes" : "no", size);
    FILL(p2);
    snprintf(what, sizeof what, "  child %s: ipc-open again while open", tag);
    if (CALL(what, cuIpcOpenMemHandle(&p2, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)) == CUDA_SUCCESS) {
        printf("    second open %s the first\n", p2 == p ? "equals" : "differs from");
        snprintf(what, sizeof what, "  child %s: ipc-close second", tag);
        CALL(what, cuIpcCloseMemHandle(p2));
    } else OUT(p2);
    snprintf(what, sizeof what, "  child %s: ipc-close interior pointer", tag);
    CALL(what, cuIpcCloseMemHandle(p + 4));
    snprintf(what, sizeof what, "  child %s: ipc-close", tag);
    CALL(what, cuIpcCloseMemHandle(p));
    snprintf(what, sizeof what, "  child %s: ipc-close again", tag);
    CALL(what, cuIpcCloseMemHandle(p));
    snprintf(what, sizeof what, "  child %s: read after close", tag);
    CALL(what, cuMemcpyDtoH(&v, p, sizeof v));
    snprintf(what, sizeof what, "  child %s: ctx-synchronize", tag);
    CALL(what, cuCtxSynchronize());
    return 0;
}

/* Runs the re-exec'd child with a 30 s limit and says how it ended. */
static void run_ipc_child(const CUipcMemHandle *h, const char *tag) {
    char hex[2 * CU_IPC_HANDLE_SIZE + 1];
    to_hex((const unsigned char *)h->reserved, CU_IPC_HANDLE_SIZE, hex);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", "pools_ipc", "ipc-child", hex, tag, (char *)NULL);
        printf("  child %s: exec failed\n", tag);
        fflush(stdout);
        _exit(127);
    }
    if (pid < 0) { SAY("fork failed"); return; }
    int st = 0;
    for (int i = 0; i < 300; i++) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) break;
        if (i == 299) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            SAY("child %s: timeout", tag);
            return;
        }
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (WIFSIGNALED(st))
        SAY("child %s: crash: %s", tag, WTERMSIG(st) == SIGSEGV ? "SIGSEGV" : WTERMSIG(st) == SIGABRT ? "SIGABRT" : WTERMSIG(st) == SIGALRM ? "timeout" : "signal");
    else
        SAY("child %s: exit %d", tag, WEXITSTATUS(st));
}

static void ipc_legacy(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUdeviceptr m;
    MUST(cuMemAlloc(&m, 2 * MiB));
    CUipcMemHandle h, h2, hi;
    FILL(h);
    CUresult rh = CALL("ipc-get-mem-handle cuMemAlloc", cuIpcGetMemHandle(&h, m));
    FILL(h2);
    if (CALL("ipc-get-mem-handle again", cuIpcGetMemHandle(&h2, m)) == CUDA_SUCCESS && rh == CUDA_SUCCESS)
        SAY("two handles of one allocation: %s", same(memcmp(&h, &h2, sizeof h) == 0));
    FILL(hi);
    if (CALL("ipc-get-mem-handle interior pointer", cuIpcGetMemHandle(&hi, m + 4096)) == CUDA_SUCCESS && rh == CUDA_SUCCESS)
        SAY("interior handle and base handle: %s", same(memcmp(&h, &hi, sizeof h) == 0));
    CALL("ipc-get-mem-handle NULL out", cuIpcGetMemHandle(NULL, m));
    CUipcMemHandle hb;
    FILL(hb); CALL("ipc-get-mem-handle 0", cuIpcGetMemHandle(&hb, 0)); SAY("handle %s", *(uint64_t *)&hb == SENTINEL ? "untouched" : "written");
    FILL(hb); CALL("ipc-get-mem-handle 0x1000", cuIpcGetMemHandle(&hb, 0x1000)); SAY("handle %s", *(uint64_t *)&hb == SENTINEL ? "untouched" : "written");
    FILL(hb); CALL("ipc-get-mem-handle one past the end", cuIpcGetMemHandle(&hb, m + 2 * MiB)); SAY("handle %s", *(uint64_t *)&hb == SENTINEL ? "untouched" : "written");
    void *hostp = NULL;
    if (cuMemAllocHost(&hostp, 4096) == CUDA_SUCCESS) {
        FILL(hb); CALL("ipc-get-mem-handle pinned host memory", cuIpcGetMemHandle(&hb, (CUdeviceptr)(uintptr_t)hostp));
        cuMemFreeHost(hostp);
    }
    /* VMM memory. */
    {
        CUmemAllocationProp p = prop_dev(0, 0);
        CUdeviceptr va = 0;
        CUmemGenericAllocationHandle vh;
        if (cuMemAddressReserve(&va, g, 0, 0, 0) == CUDA_SUCCESS && cuMemCreate(&vh, g, &p, 0) == CUDA_SUCCESS &&
            cuMemMap(va, g, 0, vh, 0) == CUDA_SUCCESS) {
            CUmemAccessDesc d = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
            cuMemSetAccess(va, g, &d, 1);
            FILL(hb); CALL("ipc-get-mem-handle VMM memory", cuIpcGetMemHandle(&hb, va));
            SAY("handle %s", *(uint64_t *)&hb == SENTINEL ? "untouched" : "written");
            cuMemUnmap(va, g);
            cuMemRelease(vh);
            cuMemAddressFree(va, g);
        } else SAY("VMM setup failed");
    }
    /* Async-pool memory. */
    {
        CUdeviceptr ap;
        if (cuMemAllocAsync(&ap, MiB, NULL) == CUDA_SUCCESS) {
            cuCtxSynchronize();
            FILL(hb); CALL("ipc-get-mem-handle async-pool memory", cuIpcGetMemHandle(&hb, ap));
            SAY("handle %s", *(uint64_t *)&hb == SENTINEL ? "untouched" : "written");
            cuMemFreeAsync(ap, NULL);
            cuCtxSynchronize();
        } else SAY("async-pool setup failed");
    }
    if (rh == CUDA_SUCCESS) {
        CUdeviceptr self;
        FILL(self); CALL("ipc-open own handle in the same process", cuIpcOpenMemHandle(&self, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)); OUT(self);
        FILL(self); CALL("ipc-open own handle, flags 0", cuIpcOpenMemHandle(&self, h, 0)); OUT(self);
        CUipcMemHandle junk;
        memset(&junk, 0x5a, sizeof junk);
        FILL(self); CALL("ipc-open junk handle", cuIpcOpenMemHandle(&self, junk, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)); OUT(self);
        CALL("ipc-open NULL out", cuIpcOpenMemHandle(NULL, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
        CALL("ipc-close cuMemAlloc memory", cuIpcCloseMemHandle(m));
        CALL("ipc-close 0", cuIpcCloseMemHandle(0));

        unsigned w = 0xAB0000A1u;
        MUST(cuMemsetD32(m, 0, 2 * MiB / 4));
        MUST(cuMemcpyHtoD(m, &w, sizeof w));
        MUST(cuCtxSynchronize());
        run_ipc_child(&h, "A");
        read_word("parent: word 1 after child A", m + 4);
        w = 0xAB0000A2u;
        MUST(cuMemcpyHtoD(m, &w, sizeof w));
        MUST(cuCtxSynchronize());
        run_ipc_child(&h, "B");
        read_word("parent: word 1 after child B", m + 4);
        CALL("mem-free", cuMemFree(m));
        run_ipc_child(&h, "C"); /* the allocation is gone */
    } else {
        CALL("mem-free", cuMemFree(m));
    }

    /* Events. */
    CUevent ie, pe;
    CUresult rie = CALL("event-create INTERPROCESS|DISABLE_TIMING", cuEventCreate(&ie, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
    CUevent x;
    FILL(x); CALL("event-create INTERPROCESS alone", cuEventCreate(&x, CU_EVENT_INTERPROCESS));
    if (*(uint64_t *)&x != SENTINEL) { SAY("  (an event came back)"); }
    CUresult rpe = CALL("event-create plain", cuEventCreate(&pe, 0));
    CUipcEventHandle eh, eh2;
    if (rie == CUDA_SUCCESS) {
        FILL(eh); CUresult r = CALL("ipc-get-event-handle interprocess event", cuIpcGetEventHandle(&eh, ie));
        FILL(eh2);
        if (CALL("ipc-get-event-handle again", cuIpcGetEventHandle(&eh2, ie)) == CUDA_SUCCESS && r == CUDA_SUCCESS)
            SAY("two handles of one event: %s", same(memcmp(&eh, &eh2, sizeof eh) == 0));
        if (r == CUDA_SUCCESS) {
            CUevent o;
            FILL(o); CALL("ipc-open-event-handle own handle", cuIpcOpenEventHandle(&o, eh));
            SAY("event %s", *(uint64_t *)&o == SENTINEL ? "untouched" : "written");
            if (*(uint64_t *)&o != SENTINEL && o) {
                SAY("opened and original: %s", same(o == ie));
                CALL("event-record original", cuEventRecord(ie, NULL));
                CALL("event-synchronize opened", cuEventSynchronize(o));
                CALL("event-query opened", cuEventQuery(o));
                CALL("event-destroy opened", cuEventDestroy(o));
            }
        }
        CALL("ipc-get-event-handle NULL out", cuIpcGetEventHandle(NULL, ie));
        CALL("event-destroy interprocess", cuEventDestroy(ie));
    }
    if (rpe == CUDA_SUCCESS) {
        FILL(eh); CALL("ipc-get-event-handle plain event", cuIpcGetEventHandle(&eh, pe));
        SAY("handle %s", *(uint64_t *)&eh == SENTINEL ? "untouched" : "written");
        CALL("event-destroy plain", cuEventDestroy(pe));
    }
    CUipcEventHandle junk;
    memset(&junk, 0x5a, sizeof junk);
    CUevent o;
    FILL(o); CALL("ipc-open-event-handle junk", cuIpcOpenEventHandle(&o, junk));
    SAY("event %s", *(uint64_t *)&o == SENTINEL ? "untouched" : "written");
    CALL("ipc-get-event-handle NULL event", cuIpcGetEventHandle(&eh, NULL));
}

/* ---------- 5. host-callbacks ---------- */

static volatile int counter;
static volatile int seen[8];
static volatile unsigned seen_word;
static volatile unsigned *pinned_word;
static volatile CUresult cb_status[4];
static volatile int cb_stream_match[4];
static CUstream cb_expected_stream;

static void hf_record(void *u) { seen[(intptr_t)u] = ++counter; }
static void hf_read_pinned(void *u) {
    seen[(intptr_t)u] = ++counter;
    seen_word = pinned_word ? *pinned_word : 0;
}
static void hf_sleep(void *u) {
    struct timespec ts = {0, 300 * 1000 * 1000};
    nanosleep(&ts, NULL);
    seen[(intptr_t)u] = ++counter;
}
static void CUDA_CB scb(CUstream st, CUresult status, void *u) {
    intptr_t i = (intptr_t)u;
    cb_status[i] = status;
    cb_stream_match[i] = st == cb_expected_stream;
    seen[4 + i] = ++counter;
}

static void show_seen(const char *when) {
    SAY("%s: counter %d, order [%d %d %d %d | %d %d %d %d]", when, counter, seen[0], seen[1], seen[2], seen[3], seen[4], seen[5], seen[6], seen[7]);
}
static void reset_seen(void) {
    counter = 0;
    for (int i = 0; i < 8; i++) seen[i] = 0;
}

static void host_callbacks(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    cb_expected_stream = s;
    CUdeviceptr d;
    MUST(cuMemAlloc(&d, MiB));
    void *hp = NULL;
    CUresult rh = CALL("mem-alloc-host 4 KiB", cuMemAllocHost(&hp, 4096));
    if (rh == CUDA_SUCCESS) { pinned_word = (volatile unsigned *)hp; *pinned_word = 0; }

    /* memset, copy to pinned, then a callback that reads the pinned word. */
    reset_seen();
    CALL("memset-d32-async 0x600df00d", cuMemsetD32Async(d, 0x600df00du, MiB / 4, s));
    if (rh == CUDA_SUCCESS) CALL("memcpy-dtoh-async to pinned", cuMemcpyDtoHAsync(hp, d + 64, 4, s));
    CALL("launch-host-func read pinned", cuLaunchHostFunc(s, hf_read_pinned, (void *)0));
    CALL("launch-host-func record", cuLaunchHostFunc(s, hf_record, (void *)1));
    CALL("stream-synchronize", cuStreamSynchronize(s));
    show_seen("after synchronize");
    SAY("the callback saw the pinned word 0x%08x", seen_word);

    /* A slow callback: is the stream busy right after, and does later work wait? */
    reset_seen();
    CALL("launch-host-func sleep 300 ms", cuLaunchHostFunc(s, hf_sleep, (void *)0));
    CALL("launch-host-func record", cuLaunchHostFunc(s, hf_record, (void *)1));
    CALL("stream-query right after", cuStreamQuery(s));
    show_seen("right after launching");
    CALL("stream-synchronize", cuStreamSynchronize(s));
    show_seen("after synchronize");
    CALL("stream-query after synchronize", cuStreamQuery(s));

    /* The NULL stream and the special handles. */
    reset_seen();
    CALL("launch-host-func NULL stream", cuLaunchHostFunc(NULL, hf_record, (void *)0));
    CALL("ctx-synchronize", cuCtxSynchronize());
    CALL("launch-host-func CU_STREAM_LEGACY", cuLaunchHostFunc(CU_STREAM_LEGACY, hf_record, (void *)1));
    CALL("launch-host-func CU_STREAM_PER_THREAD", cuLaunchHostFunc(CU_STREAM_PER_THREAD, hf_record, (void *)2));
    CALL("ctx-synchronize", cuCtxSynchronize());
    show_seen("after ctx-synchronize");

    /* cuStreamAddCallback. */
    reset_seen();
    for (int i = 0; i < 4; i++) { cb_status[i] = (CUresult)-1; cb_stream_match[i] = -1; }
    CALL("launch-host-func sleep 300 ms", cuLaunchHostFunc(s, hf_sleep, (void *)0));
    CALL("stream-add-callback flags 0", cuStreamAddCallback(s, scb, (void *)0, 0));
    CALL("stream-query right after", cuStreamQuery(s));
    CALL("stream-add-callback flags 1", cuStreamAddCallback(s, scb, (void *)1, 1));
    CALL("stream-synchronize", cuStreamSynchronize(s));
    show_seen("after synchronize");
    SAY("callback 0: status %s, stream matches %d", cb_status[0] == (CUresult)-1 ? "not called" : rname(cb_status[0]), cb_stream_match[0]);
    SAY("callback 1: status %s, stream matches %d", cb_status[1] == (CUresult)-1 ? "not called" : rname(cb_status[1]), cb_stream_match[1]);
    cb_expected_stream = NULL;
    CALL("stream-add-callback NULL stream", cuStreamAddCallback(NULL, scb, (void *)2, 0));
    CALL("ctx-synchronize", cuCtxSynchronize());
    SAY("callback 2: status %s, stream is NULL %d", cb_status[2] == (CUresult)-1 ? "not called" : rname(cb_status[2]), cb_stream_match[2]);

    /* Bad input, the likeliest to crash last. */
    CALL("stream-add-callback NULL callback", cuStreamAddCallback(s, NULL, NULL, 0));
    CALL("launch-host-func NULL function", cuLaunchHostFunc(s, NULL, NULL));
    CALL("stream-synchronize", cuStreamSynchronize(s));
    if (rh == CUDA_SUCCESS) { pinned_word = NULL; cuMemFreeHost(hp); }
    CALL("mem-free", cuMemFree(d));
    CALL("stream-destroy", cuStreamDestroy(s));
    CALL("launch-host-func on a destroyed stream", ({
        CUstream t;
        CUresult r0 = cuStreamCreate(&t, 0);
        r0 == CUDA_SUCCESS ? (cuStreamDestroy(t), cuLaunchHostFunc(t, hf_record, (void *)3)) : r0;
    }));
}

/* ---------- 6. stream-wait-and-events ---------- */

static void stream_wait_and_events(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUstream s1, s2;
    MUST(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    MUST(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CUevent ev, never, nt1, nt2, t1, t2;
    MUST(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    MUST(cuEventCreate(&never, 0));
    MUST(cuEventCreate(&nt1, CU_EVENT_DISABLE_TIMING));
    MUST(cuEventCreate(&nt2, CU_EVENT_DISABLE_TIMING));
    MUST(cuEventCreate(&t1, 0));
    MUST(cuEventCreate(&t2, 0));

    /* s2 waits for an event recorded on s1 after a slow host function. */
    reset_seen();
    CALL("launch-host-func s1 sleep 300 ms", cuLaunchHostFunc(s1, hf_sleep, (void *)0));
    CALL("event-record ev on s1", cuEventRecord(ev, s1));
    CALL("stream-wait-event s2 on ev", cuStreamWaitEvent(s2, ev, 0));
    CALL("launch-host-func s2 record", cuLaunchHostFunc(s2, hf_record, (void *)1));
    CALL("event-query ev right after", cuEventQuery(ev));
    CALL("stream-query s2 right after", cuStreamQuery(s2));
    CALL("stream-synchronize s2", cuStreamSynchronize(s2));
    show_seen("after synchronizing s2 only");
    CALL("event-query ev", cuEventQuery(ev));
    CALL("stream-synchronize s1", cuStreamSynchronize(s1));
    CALL("stream-wait-event flags 0x80", cuStreamWaitEvent(s2, ev, 0x80));
    CALL("stream-wait-event flags EXTERNAL (1)", cuStreamWaitEvent(s2, ev, 1));
    CALL("stream-wait-event NULL event", cuStreamWaitEvent(s2, NULL, 0));
    CALL("stream-wait-event never-recorded event", cuStreamWaitEvent(s2, never, 0));
    CALL("stream-wait-event NULL stream", cuStreamWaitEvent(NULL, ev, 0));
    CALL("stream-wait-event same stream", cuStreamWaitEvent(s1, ev, 0));
    CALL("stream-synchronize s2", cuStreamSynchronize(s2));

    /* Never-recorded events. */
    CALL("event-query never recorded", cuEventQuery(never));
    CALL("event-synchronize never recorded", cuEventSynchronize(never));
    float ms;
    FILL(ms); CALL("elapsed-time never recorded pair", cuEventElapsedTime(&ms, never, t2)); SAY("ms %s", written(&ms));

    /* Elapsed time. */
    CALL("event-record nt1", cuEventRecord(nt1, s1));
    CALL("event-record nt2", cuEventRecord(nt2, s1));
    CALL("event-record t1", cuEventRecord(t1, s1));
    CALL("memset-d32-async on s1", ({
        CUdeviceptr d;
        CUresult r0 = cuMemAlloc(&d, MiB);
        r0 == CUDA_SUCCESS ? cuMemsetD32Async(d, 7, MiB / 4, s1) : r0;
    }));
    CALL("event-record t2", cuEventRecord(t2, s1));
    CALL("stream-synchronize s1", cuStreamSynchronize(s1));
    FILL(ms); CALL("elapsed-time DISABLE_TIMING pair", cuEventElapsedTime(&ms, nt1, nt2)); SAY("ms %s", written(&ms));
    FILL(ms); CALL("elapsed-time timing start, DISABLE_TIMING end", cuEventElapsedTime(&ms, t1, nt2)); SAY("ms %s", written(&ms));
    FILL(ms);
    if (CALL("elapsed-time timing pair", cuEventElapsedTime(&ms, t1, t2)) == CUDA_SUCCESS) SAY("elapsed >= 0: %s", ms >= 0 ? "yes" : "no");
    FILL(ms);
    if (CALL("elapsed-time reversed pair", cuEventElapsedTime(&ms, t2, t1)) == CUDA_SUCCESS) SAY("elapsed <= 0: %s", ms <= 0 ? "yes" : "no");
    CALL("elapsed-time NULL out", cuEventElapsedTime(NULL, t1, t2));
    FILL(ms); CALL("elapsed-time NULL start", cuEventElapsedTime(&ms, NULL, t2)); SAY("ms %s", written(&ms));

    /* Stream properties. */
    int least = 0, greatest = 0;
    if (CALL("ctx-get-stream-priority-range", cuCtxGetStreamPriorityRange(&least, &greatest)) == CUDA_SUCCESS)
        SAY("priorities: least %d, greatest %d", least, greatest);
    CUstream sp, sd;
    CUresult rsp = CALL("stream-create-with-priority greatest, flags 0", cuStreamCreateWithPriority(&sp, 0, greatest));
    CUresult rsd = CALL("stream-create-with-priority -100 (out of range)", cuStreamCreateWithPriority(&sd, CU_STREAM_NON_BLOCKING, -100));
    struct { const char *n; CUstream s; int ok; } ss[] = {
        {"created NON_BLOCKING", s1, 1}, {"with priority", sp, rsp == CUDA_SUCCESS}, {"priority -100", sd, rsd == CUDA_SUCCESS},
        {"NULL", NULL, 1}, {"CU_STREAM_LEGACY", CU_STREAM_LEGACY, 1}, {"CU_STREAM_PER_THREAD", CU_STREAM_PER_THREAD, 1},
    };
    for (unsigned i = 0; i < sizeof ss / sizeof *ss; i++) {
        if (!ss[i].ok) continue;
        char what[96];
        unsigned fl; FILL(fl);
        snprintf(what, sizeof what, "stream-get-flags %s", ss[i].n);
        if (CALL(what, cuStreamGetFlags(ss[i].s, &fl)) == CUDA_SUCCESS) SAY("flags %u", fl);
        int pr; FILL(pr);
        snprintf(what, sizeof what, "stream-get-priority %s", ss[i].n);
        if (CALL(what, cuStreamGetPriority(ss[i].s, &pr)) == CUDA_SUCCESS) SAY("priority %d", pr);
        CUcontext c; FILL(c);
        snprintf(what, sizeof what, "stream-get-ctx %s", ss[i].n);
        if (CALL(what, cuStreamGetCtx(ss[i].s, &c)) == CUDA_SUCCESS) SAY("context is the primary: %s", c == ctx ? "yes" : "no");
    }
    CALL("stream-get-flags NULL out", cuStreamGetFlags(s1, NULL));
    CALL("stream-get-priority NULL out", cuStreamGetPriority(s1, NULL));
    CALL("stream-get-ctx NULL out", cuStreamGetCtx(s1, NULL));
    CUstream bad;
    FILL(bad); CALL("stream-create flags 0x80", cuStreamCreate(&bad, 0x80)); OUT(bad);
    FILL(bad); CALL("stream-create flags 2", cuStreamCreate(&bad, 2));
    SAY("stream %s", *(uint64_t *)&bad == SENTINEL ? "untouched" : "written");
    CALL("stream-create NULL out", cuStreamCreate(NULL, 0));
    CUevent be;
    FILL(be); CALL("event-create flags 0x40", cuEventCreate(&be, 0x40)); OUT(be);
    CALL("event-create NULL out", cuEventCreate(NULL, 0));

    /* Destroyed objects. */
    CALL("stream-destroy s2", cuStreamDestroy(s2));
    CALL("stream-destroy s1", cuStreamDestroy(s1));
    CALL("event-destroy ev", cuEventDestroy(ev));
    CALL("event-query destroyed (last: may crash)", cuEventQuery(ev));
}

/* ---- CUDA 13's pools by location and allocation type: the host's page-locked memory
 * and managed memory (cuMemGetDefaultMemPool, cuMemGetMemPool, cuMemSetMemPool,
 * cuMemPoolCreate with HOST, HOST_NUMA, MANAGED). Recorded on the H200; where the mock
 * differs (sections location-pools, host-pool, managed-pool) divergences.txt says why. */

static CUmemLocation loc(CUmemLocationType type, int id) {
    CUmemLocation l;
    memset(&l, 0, sizeof l);
    l.type = type;
    l.id = id;
    return l;
}

static struct {
    const char *name;
    CUmemAllocationType type;
    CUmemLocationType lt;
    int id;
} places[] = {
    {"PINNED DEVICE 0", CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_DEVICE, 0},
    {"PINNED DEVICE 99", CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_DEVICE, 99},
    {"PINNED HOST", CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_HOST, 0},
    {"PINNED HOST id 5", CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_HOST, 5},
    {"PINNED HOST_NUMA 0", CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_HOST_NUMA, 0},
    {"PINNED HOST_NUMA 99", CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_HOST_NUMA, 99},
    {"PINNED HOST_NUMA_CURRENT", CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0},
    {"PINNED NONE", CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_LOCATION_TYPE_NONE, 0},
    {"MANAGED NONE", CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_NONE, 0},
    {"MANAGED DEVICE 0", CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_DEVICE, 0},
    {"MANAGED DEVICE 99", CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_DEVICE, 99},
    {"MANAGED HOST", CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_HOST, 0},
    {"MANAGED HOST_NUMA 0", CU_MEM_ALLOCATION_TYPE_MANAGED, CU_MEM_LOCATION_TYPE_HOST_NUMA, 0},
    {"INVALID DEVICE 0", CU_MEM_ALLOCATION_TYPE_INVALID, CU_MEM_LOCATION_TYPE_DEVICE, 0},
    {"type 7 DEVICE 0", (CUmemAllocationType)7, CU_MEM_LOCATION_TYPE_DEVICE, 0},
};
#define PLACES (sizeof places / sizeof places[0])

/* What the pointer attributes say of pool memory. */
static void show_pool_ptr(const char *what, CUdeviceptr p, CUmemoryPool pool) {
    SAY("pointer attributes of %s:", what);
    unsigned long long v;
    v = 0; if (CALL("  MEMORY_TYPE", cuPointerGetAttribute(&v, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p)) == CUDA_SUCCESS) SAY("  memory type %u", (unsigned)v);
    v = 0; if (CALL("  DEVICE_ORDINAL", cuPointerGetAttribute(&v, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p)) == CUDA_SUCCESS) SAY("  device ordinal %d", (int)v);
    v = 0; if (CALL("  IS_MANAGED", cuPointerGetAttribute(&v, CU_POINTER_ATTRIBUTE_IS_MANAGED, p)) == CUDA_SUCCESS) SAY("  is managed %u", (unsigned)(v & 0xff));
    v = 0; if (CALL("  MAPPED", cuPointerGetAttribute(&v, CU_POINTER_ATTRIBUTE_MAPPED, p)) == CUDA_SUCCESS) SAY("  mapped %u", (unsigned)(v & 0xff));
    v = 0; if (CALL("  ACCESS_FLAGS", cuPointerGetAttribute(&v, CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, p)) == CUDA_SUCCESS) SAY("  access flags %u", (unsigned)v);
    v = 0; if (CALL("  IS_LEGACY_CUDA_IPC_CAPABLE", cuPointerGetAttribute(&v, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, p)) == CUDA_SUCCESS) SAY("  legacy ipc capable %u", (unsigned)(v & 0xff));
    v = 0; if (CALL("  ALLOWED_HANDLE_TYPES", cuPointerGetAttribute(&v, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, p)) == CUDA_SUCCESS) SAY("  allowed handle types %llu", v);
    CUmemoryPool mp = NULL;
    if (CALL("  MEMPOOL_HANDLE", cuPointerGetAttribute(&mp, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p)) == CUDA_SUCCESS) SAY("  its pool: %s", same(mp == pool));
    CUcontext c = (CUcontext)1;
    if (CALL("  CONTEXT", cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, p)) == CUDA_SUCCESS) SAY("  context %s", c ? "non-null" : "null");
    void *hp = NULL;
    if (CALL("  HOST_POINTER", cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, p)) == CUDA_SUCCESS) SAY("  host pointer and address: %s", same((CUdeviceptr)(uintptr_t)hp == p));
    CUdeviceptr dp = 0;
    if (CALL("  DEVICE_POINTER", cuPointerGetAttribute(&dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, p)) == CUDA_SUCCESS) SAY("  device pointer and address: %s", same(dp == p));
    CUdeviceptr rb = 0; size_t rs = 0;
    if (CALL("  RANGE_START_ADDR", cuPointerGetAttribute(&rb, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p)) == CUDA_SUCCESS) SAY("  range start and address: %s", same(rb == p));
    if (CALL("  RANGE_SIZE", cuPointerGetAttribute(&rs, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p)) == CUDA_SUCCESS) SAY("  range size %zu", rs);
    unsigned hf = 0;
    if (CALL("  mem-host-get-flags", cuMemHostGetFlags(&hf, (void *)(uintptr_t)p)) == CUDA_SUCCESS) SAY("  host flags %#x", hf);
}

static void location_pools(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmemoryPool defs[PLACES];
    CUresult got[PLACES];
    for (size_t i = 0; i < PLACES; i++) {
        char what[128];
        CUmemLocation l = loc(places[i].lt, places[i].id);
        CUmemoryPool d, c;
        FILL(d);
        snprintf(what, sizeof what, "mem-get-default-mem-pool %s", places[i].name);
        got[i] = CALL(what, cuMemGetDefaultMemPool(&d, &l, places[i].type));
        if (got[i] != CUDA_SUCCESS) OUT(d);
        defs[i] = d;
        FILL(c);
        snprintf(what, sizeof what, "mem-get-mem-pool %s", places[i].name);
        CUresult rc = CALL(what, cuMemGetMemPool(&c, &l, places[i].type));
        if (rc != CUDA_SUCCESS) OUT(c);
        if (got[i] == CUDA_SUCCESS && rc == CUDA_SUCCESS) SAY("current and default: %s", same(c == d));
    }
    CUmemoryPool dev_def;
    MUST(cuDeviceGetDefaultMemPool(&dev_def, 0));
    SAY("PINNED DEVICE 0 and cuDeviceGetDefaultMemPool: %s", same(got[0] == CUDA_SUCCESS && defs[0] == dev_def));
    /* Which places share a default pool. */
    for (size_t i = 0; i < PLACES; i++)
        for (size_t j = i + 1; j < PLACES; j++)
            if (got[i] == CUDA_SUCCESS && got[j] == CUDA_SUCCESS && defs[i] == defs[j])
                SAY("one default pool: %s and %s", places[i].name, places[j].name);
    CUmemLocation l = loc(CU_MEM_LOCATION_TYPE_HOST, 0);
    CUmemoryPool p;
    CALL("mem-get-default-mem-pool NULL out", cuMemGetDefaultMemPool(NULL, &l, CU_MEM_ALLOCATION_TYPE_PINNED));
    FILL(p); CALL("mem-get-default-mem-pool NULL location", cuMemGetDefaultMemPool(&p, NULL, CU_MEM_ALLOCATION_TYPE_PINNED)); OUT(p);
    CALL("mem-get-mem-pool NULL out", cuMemGetMemPool(NULL, &l, CU_MEM_ALLOCATION_TYPE_PINNED));

    /* cuMemSetMemPool with pools of each place. */
    CUmemPoolProps hp = pool_props(CU_MEM_LOCATION_TYPE_HOST, 0, 0);
    CUmemoryPool host_pool = NULL, dev_pool = NULL;
    CUresult rh = CALL("pool-create HOST", cuMemPoolCreate(&host_pool, &hp));
    CUmemPoolProps dp = pool_props(CU_MEM_LOCATION_TYPE_DEVICE, 0, 0);
    MUST(cuMemPoolCreate(&dev_pool, &dp));
    if (rh == CUDA_SUCCESS) {
        CALL("mem-set-mem-pool PINNED HOST, a HOST pool", cuMemSetMemPool(&l, CU_MEM_ALLOCATION_TYPE_PINNED, host_pool));
        FILL(p);
        if (CALL("mem-get-mem-pool PINNED HOST", cuMemGetMemPool(&p, &l, CU_MEM_ALLOCATION_TYPE_PINNED)) == CUDA_SUCCESS)
            SAY("current and the HOST pool: %s", same(p == host_pool));
        CUmemLocation ln = loc(CU_MEM_LOCATION_TYPE_HOST_NUMA, 0);
        CALL("mem-set-mem-pool PINNED HOST_NUMA 0, a HOST pool", cuMemSetMemPool(&ln, CU_MEM_ALLOCATION_TYPE_PINNED, host_pool));
        CUmemLocation ld = loc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
        CALL("mem-set-mem-pool PINNED DEVICE 0, a HOST pool", cuMemSetMemPool(&ld, CU_MEM_ALLOCATION_TYPE_PINNED, host_pool));
        CALL("mem-set-mem-pool MANAGED HOST, a HOST pool", cuMemSetMemPool(&l, CU_MEM_ALLOCATION_TYPE_MANAGED, host_pool));
        CALL("device-set-mem-pool 0, a HOST pool", cuDeviceSetMemPool(0, host_pool));
    }
    CALL("mem-set-mem-pool PINNED HOST, a DEVICE 0 pool", cuMemSetMemPool(&l, CU_MEM_ALLOCATION_TYPE_PINNED, dev_pool));
    CUmemLocation ld = loc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
    CALL("mem-set-mem-pool PINNED DEVICE 0, a DEVICE 0 pool", cuMemSetMemPool(&ld, CU_MEM_ALLOCATION_TYPE_PINNED, dev_pool));
    FILL(p);
    if (CALL("device-get-mem-pool 0", cuDeviceGetMemPool(&p, 0)) == CUDA_SUCCESS) SAY("device's current and the pool: %s", same(p == dev_pool));
    CALL("mem-set-mem-pool PINNED HOST, NULL", cuMemSetMemPool(&l, CU_MEM_ALLOCATION_TYPE_PINNED, NULL));
    CALL("mem-set-mem-pool NULL location", cuMemSetMemPool(NULL, CU_MEM_ALLOCATION_TYPE_PINNED, dev_pool));
    if (rh == CUDA_SUCCESS) {
        CALL("pool-destroy the current HOST pool", cuMemPoolDestroy(host_pool));
        FILL(p);
        if (CALL("mem-get-mem-pool PINNED HOST", cuMemGetMemPool(&p, &l, CU_MEM_ALLOCATION_TYPE_PINNED)) == CUDA_SUCCESS)
            SAY("current and default after destroy: %s", same(p == defs[2]));
    }
    CALL("pool-destroy the DEVICE pool", cuMemPoolDestroy(dev_pool));
}

/* Allocates 1 B, 1 MiB and 40 MiB from `pool`, says where, what the memory is and what
 * the host and copies see of it, then frees them. */
static void use_pool(CUmemoryPool pool, CUstream s, const char *what) {
    size_t sizes[] = {1, MiB, 40 * MiB};
    CUdeviceptr p[3] = {0, 0, 0};
    char line[160];
    for (int i = 0; i < 3; i++) {
        snprintf(line, sizeof line, "alloc-from-pool %s %zu bytes", what, sizes[i]);
        CALL(line, cuMemAllocFromPoolAsync(&p[i], sizes[i], pool, s));
    }
    CALL("stream-synchronize", cuStreamSynchronize(s));
    if (!p[0] || !p[1] || !p[2]) return;
    SAY("1 MiB minus 1 B: %lld, 40 MiB minus 1 MiB: %lld", (long long)(p[1] - p[0]), (long long)(p[2] - p[1]));
    show_pool_attrs(pool, "with 1 B + 1 MiB + 40 MiB allocated");
    show_pool_ptr("the 1 MiB", p[1], pool);
    CUcontext c = NULL;
    CUdeviceptr base = 0; size_t size = 0;
    if (CALL("get-address-range 1 MiB + 10", cuMemGetAddressRange(&base, &size, p[1] + 10)) == CUDA_SUCCESS)
        SAY("base and the allocation: %s, size %zu", same(base == p[1]), size);
    (void)c;
    /* Copies and memsets on the device's side. */
    unsigned char src[4096], back[4096];
    pattern(src, sizeof src, 3);
    CALL("memcpy-htod into the 1 MiB", cuMemcpyHtoD(p[1], src, sizeof src));
    memset(back, 0, sizeof back);
    if (CALL("memcpy-dtoh from it", cuMemcpyDtoH(back, p[1], sizeof back)) == CUDA_SUCCESS)
        SAY("read back: %s", is_pattern(back, sizeof back, 3) ? "the pattern" : "other bytes");
    CALL("memset-d32-async on the 40 MiB", cuMemsetD32Async(p[2], 0xabcd0123u, 10 * MiB, s));
    CALL("stream-synchronize", cuStreamSynchronize(s));
    CUdeviceptr dev = 0;
    MUST(cuMemAlloc(&dev, 4096));
    CALL("memcpy-dtod device memory from it", cuMemcpyDtoD(dev, p[1], 4096));
    memset(back, 0, sizeof back);
    CALL("memcpy-dtoh", cuMemcpyDtoH(back, dev, sizeof back));
    SAY("through device memory: %s", is_pattern(back, sizeof back, 3) ? "the pattern" : "other bytes");
    MUST(cuMemFree(dev));
    /* The host at the address: last, since it may fault. */
    SAY("host reads the 40 MiB's last word:");
    SAY("  %#x", ((volatile unsigned *)(uintptr_t)p[2])[10 * MiB - 1]);
    ((volatile unsigned char *)(uintptr_t)p[1])[5] = 0x5a;
    MUST(cuMemcpyDtoH(back, p[1], 8));
    SAY("host wrote, a copy reads: %#x", back[5]);
    for (int i = 0; i < 3; i++) {
        snprintf(line, sizeof line, "free-async %zu bytes", sizes[i]);
        CALL(line, cuMemFreeAsync(p[i], s));
    }
    CALL("stream-synchronize", cuStreamSynchronize(s));
    show_pool_attrs(pool, "after free-async + synchronize");
}

static void host_pool(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    unsigned long long v = 0;
    CUdevice d0;
    MUST(cuDeviceGet(&d0, 0));
    int a = -1;
    CALL("attribute HOST_MEMORY_POOLS_SUPPORTED", cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED, d0)); SAY("host memory pools supported %d", a);
    a = -1;
    CALL("attribute HOST_NUMA_MEMORY_POOLS_SUPPORTED", cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED, d0)); SAY("host NUMA memory pools supported %d", a);
    a = -1;
    CALL("attribute HOST_NUMA_ID", cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, d0)); SAY("host NUMA id %d", a);
    (void)v;
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUmemoryPool pool, bad;
    CUmemPoolProps pp = pool_props(CU_MEM_LOCATION_TYPE_HOST, 0, 0);
    FILL(pool); CUresult rp = CALL("pool-create HOST", cuMemPoolCreate(&pool, &pp));
    CUmemPoolProps pb = pool_props(CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    FILL(bad); if (CALL("pool-create HOST, POSIX fd", cuMemPoolCreate(&bad, &pb)) == CUDA_SUCCESS) cuMemPoolDestroy(bad); else OUT(bad);
    pb = pool_props(CU_MEM_LOCATION_TYPE_HOST_NUMA, 0, 0);
    FILL(bad); if (CALL("pool-create HOST_NUMA 0", cuMemPoolCreate(&bad, &pb)) == CUDA_SUCCESS) cuMemPoolDestroy(bad); else OUT(bad);
    pb = pool_props(CU_MEM_LOCATION_TYPE_HOST_NUMA, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    FILL(bad); if (CALL("pool-create HOST_NUMA 0, POSIX fd", cuMemPoolCreate(&bad, &pb)) == CUDA_SUCCESS) cuMemPoolDestroy(bad); else OUT(bad);
    pb = pool_props(CU_MEM_LOCATION_TYPE_HOST_NUMA, 99, 0);
    FILL(bad); if (CALL("pool-create HOST_NUMA 99", cuMemPoolCreate(&bad, &pb)) == CUDA_SUCCESS) cuMemPoolDestroy(bad); else OUT(bad);
    pb = pool_props(CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, 0, 0);
    FILL(bad); if (CALL("pool-create HOST_NUMA_CURRENT", cuMemPoolCreate(&bad, &pb)) == CUDA_SUCCESS) cuMemPoolDestroy(bad); else OUT(bad);
    if (rp != CUDA_SUCCESS) return;
    CUmemAccess_flags f;
    CUmemLocation lh = loc(CU_MEM_LOCATION_TYPE_HOST, 0), ld = loc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
    FILL(f); if (CALL("pool-get-access HOST", cuMemPoolGetAccess(&f, pool, &lh)) == CUDA_SUCCESS) SAY("host access %d", (int)f);
    FILL(f); if (CALL("pool-get-access DEVICE 0", cuMemPoolGetAccess(&f, pool, &ld)) == CUDA_SUCCESS) SAY("device 0 access %d", (int)f);
    show_pool_attrs(pool, "of a new HOST pool");
    use_pool(pool, s, "HOST pool");
    CUmemAccessDesc acc = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CALL("pool-set-access DEVICE 0 read-write", cuMemPoolSetAccess(pool, &acc, 1));
    FILL(f); if (CALL("pool-get-access DEVICE 0", cuMemPoolGetAccess(&f, pool, &ld)) == CUDA_SUCCESS) SAY("device 0 access %d", (int)f);
    acc = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_NONE);
    CALL("pool-set-access DEVICE 0 none", cuMemPoolSetAccess(pool, &acc, 1));
    FILL(f); if (CALL("pool-get-access DEVICE 0", cuMemPoolGetAccess(&f, pool, &ld)) == CUDA_SUCCESS) SAY("device 0 access %d", (int)f);
    acc = access_for(CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CALL("pool-set-access HOST read-write", cuMemPoolSetAccess(pool, &acc, 1));
    int fd = -1;
    CALL("pool-export HOST pool", cuMemPoolExportToShareableHandle(&fd, pool, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    CALL("pool-destroy", cuMemPoolDestroy(pool));
    /* The default HOST pool. */
    CUmemoryPool def;
    MUST(cuMemGetDefaultMemPool(&def, &lh, CU_MEM_ALLOCATION_TYPE_PINNED));
    FILL(f); if (CALL("default HOST pool get-access DEVICE 0", cuMemPoolGetAccess(&f, def, &ld)) == CUDA_SUCCESS) SAY("device 0 access %d", (int)f);
    show_pool_attrs(def, "of the default HOST pool");
    use_pool(def, s, "default HOST pool");
}

static void managed_pool(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUmemoryPool pool, bad;
    CUmemPoolProps pp = pool_props(CU_MEM_LOCATION_TYPE_NONE, 0, 0);
    pp.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
    FILL(pool); CUresult rp = CALL("pool-create MANAGED NONE", cuMemPoolCreate(&pool, &pp));
    if (rp != CUDA_SUCCESS) OUT(pool);
    CUmemPoolProps pb = pool_props(CU_MEM_LOCATION_TYPE_DEVICE, 0, 0);
    pb.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
    FILL(bad); if (CALL("pool-create MANAGED DEVICE 0", cuMemPoolCreate(&bad, &pb)) == CUDA_SUCCESS) cuMemPoolDestroy(bad); else OUT(bad);
    pb = pool_props(CU_MEM_LOCATION_TYPE_HOST, 0, 0);
    pb.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
    FILL(bad); if (CALL("pool-create MANAGED HOST", cuMemPoolCreate(&bad, &pb)) == CUDA_SUCCESS) cuMemPoolDestroy(bad); else OUT(bad);
    pb = pool_props(CU_MEM_LOCATION_TYPE_NONE, 0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    pb.allocType = CU_MEM_ALLOCATION_TYPE_MANAGED;
    FILL(bad); if (CALL("pool-create MANAGED NONE, POSIX fd", cuMemPoolCreate(&bad, &pb)) == CUDA_SUCCESS) cuMemPoolDestroy(bad); else OUT(bad);
    CUmemAccess_flags f;
    CUmemLocation lh = loc(CU_MEM_LOCATION_TYPE_HOST, 0), ld = loc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
    if (rp == CUDA_SUCCESS) {
        FILL(f); if (CALL("pool-get-access HOST", cuMemPoolGetAccess(&f, pool, &lh)) == CUDA_SUCCESS) SAY("host access %d", (int)f);
        FILL(f); if (CALL("pool-get-access DEVICE 0", cuMemPoolGetAccess(&f, pool, &ld)) == CUDA_SUCCESS) SAY("device 0 access %d", (int)f);
        show_pool_attrs(pool, "of a new MANAGED pool");
        use_pool(pool, s, "MANAGED pool");
        CALL("pool-destroy", cuMemPoolDestroy(pool));
    }
    CUmemoryPool def;
    CUmemLocation ln = loc(CU_MEM_LOCATION_TYPE_NONE, 0);
    MUST(cuMemGetDefaultMemPool(&def, &ln, CU_MEM_ALLOCATION_TYPE_MANAGED));
    show_pool_attrs(def, "of the default MANAGED pool");
    use_pool(def, s, "default MANAGED pool");
}

/* The call the H200 crashed on (SIGSEGV) in pool-create, alone in a section run last, so
 * that pool-create runs to its end. */
static void pool_create_null_crash(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmemPoolProps pp = pool_props(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_HANDLE_TYPE_NONE);
    CUmemoryPool pool;
    MUST(cuMemPoolCreate(&pool, &pp));
    CALL("set attribute NULL value", cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, NULL));
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "ipc-child") == 0) return ipc_child(argv[2], argv[3]);
    setvbuf(stdout, NULL, _IOLBF, 0);
    section("default-pool", default_pool);
    section("alloc-async", alloc_async);
    section("pool-create", pool_create);
    section("ipc-legacy", ipc_legacy);
    section("host-callbacks", host_callbacks);
    section("stream-wait-and-events", stream_wait_and_events);
    section("location-pools", location_pools);
    section("host-pool", host_pool);
    section("managed-pool", managed_pool);
    section("pool-create-null-crash", pool_create_null_crash);
    return 0;
}
