/* Two GPUs (the primary contexts of devices 0 and 1): peer copies and peer access,
 * pinned host memory made under one context and used under the other, stream-ordered
 * pools across devices, managed memory prefetched and advised to either device, and VMM
 * memory of device 1 mapped for one device only. What the real driver answers, so that
 * the mock can match it. Prints `## skipped: needs 2 devices` where there are fewer.
 * No raw address or handle is printed: only results, sizes, flags, comparisons and
 * values read back. Never calls multicast APIs. */
#include "probe.h"
#include <sys/mman.h>

#define MiB ((size_t)1 << 20)
#define HP(p) ((CUdeviceptr)(uintptr_t)(p))

/* ---------- helpers ---------- */

static CUcontext c0, c1;

/* Initialises the driver in this section's child, retains both primary contexts and
 * makes device 0's current. */
static void init_two(void) {
    MUST(cuInit(0));
    MUST(cuDevicePrimaryCtxRetain(&c0, 0));
    MUST(cuDevicePrimaryCtxRetain(&c1, 1));
    MUST(cuCtxSetCurrent(c0));
    g = granularity();
}

static void use(CUcontext c) { MUST(cuCtxSetCurrent(c)); }

static const char *ctx_name(CUcontext c) {
    if (c == NULL) return "null";
    if (c == c0) return "device 0's";
    if (c == c1) return "device 1's";
    return "another";
}

static int is_zero(const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i]) return 0;
    return 1;
}

/* Writes the pattern `seed` into device memory with `ctx` current (then restores the
 * current context). */
static void fill_dev(CUcontext ctx, CUdeviceptr p, size_t n, unsigned seed) {
    CUcontext was = NULL;
    MUST(cuCtxGetCurrent(&was));
    use(ctx);
    void *h = malloc(n);
    pattern(h, n, seed);
    MUST(cuMemcpyHtoD(p, h, n));
    /* From pageable memory the copy may return before the bytes land (seen on the H200):
     * the section's next async copy on a non-blocking stream would race it. */
    MUST(cuCtxSynchronize());
    free(h);
    use(was);
}

/* Zeroes device memory with `ctx` current. */
static void clear_dev(CUcontext ctx, CUdeviceptr p, size_t n) {
    CUcontext was = NULL;
    MUST(cuCtxGetCurrent(&was));
    use(ctx);
    MUST(cuMemsetD8(p, 0, n)); MUST(cuCtxSynchronize());
    MUST(cuCtxSynchronize());
    use(was);
}

/* Reads device memory back with `ctx` current and says whether it holds the pattern
 * `seed`, zeroes, or something else. */
static void check_dev(const char *what, CUcontext ctx, CUdeviceptr p, size_t n, unsigned seed) {
    CUcontext was = NULL;
    MUST(cuCtxGetCurrent(&was));
    use(ctx);
    void *h = malloc(n);
    memset(h, 0xA5, n);
    CUresult r = cuMemcpyDtoH(h, p, n);
    if (r == CUDA_SUCCESS)
        SAY("%s: %s", what, is_pattern(h, n, seed) ? "copied" : is_zero(h, n) ? "still zero" : "other bytes");
    else
        SAY("%s: read back = %s", what, rname(r));
    free(h);
    cuCtxSetCurrent(was);
}

static void ordinal(const char *what, CUdeviceptr p) {
    int ord;
    FILL(ord);
    char w[128];
    snprintf(w, sizeof w, "DEVICE_ORDINAL of %s", what);
    if (CALL(w, cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p)) == CUDA_SUCCESS)
        SAY("device ordinal = %d", ord);
    else
        OUT(ord);
}

static void context_of(const char *what, CUdeviceptr p) {
    CUcontext c;
    FILL(c);
    char w[128];
    snprintf(w, sizeof w, "CONTEXT of %s", what);
    if (CALL(w, cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, p)) == CUDA_SUCCESS) {
        CUcontext cur = NULL;
        cuCtxGetCurrent(&cur);
        SAY("context is %s, == current: %d", ctx_name(c), c == cur);
    }
}

static CUmemLocation loc(CUmemLocationType t, int id) {
    CUmemLocation l;
    memset(&l, 0, sizeof l);
    l.type = t;
    l.id = id;
    return l;
}

/* ---------- 1. peer-copies ---------- */

static void peer_copies(void) {
    init_two();
    int can01, can10;
    FILL(can01);
    FILL(can10);
    CALL("can-access-peer 0 -> 1", cuDeviceCanAccessPeer(&can01, 0, 1));
    CALL("can-access-peer 1 -> 0", cuDeviceCanAccessPeer(&can10, 1, 0));
    SAY("can access: 0 -> 1 = %d, 1 -> 0 = %d", can01, can10);
    CALL("can-access-peer 0 -> 2 (no such device)", cuDeviceCanAccessPeer(&can01, 0, 2));
    static const struct { CUdevice_P2PAttribute a; const char *n; } p2p[] = {
        {CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, "PERFORMANCE_RANK"},
        {CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, "ACCESS_SUPPORTED"},
        {CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, "NATIVE_ATOMIC_SUPPORTED"},
        {CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED, "CUDA_ARRAY_ACCESS_SUPPORTED"},
    };
    for (unsigned i = 0; i < sizeof p2p / sizeof *p2p; i++) {
        char w[96];
        int v;
        FILL(v);
        snprintf(w, sizeof w, "p2p attribute %s 0 -> 1", p2p[i].n);
        if (CALL(w, cuDeviceGetP2PAttribute(&v, p2p[i].a, 0, 1)) == CUDA_SUCCESS) SAY("value = %d", v);
    }

    size_t n = MiB;
    CUdeviceptr a0 = 0, a1 = 0;
    use(c0);
    MUST(cuMemAlloc(&a0, n));
    use(c1);
    MUST(cuMemAlloc(&a1, n));
    use(c0);
    ordinal("device 0's buffer", a0);
    ordinal("device 1's buffer", a1);
    context_of("device 1's buffer (device 0 current)", a1);
    fill_dev(c0, a0, n, 1);

    /* without peer access */
    SAY("-- no peer access enabled");
    for (int cur = 0; cur < 2; cur++) {
        CUcontext cc = cur ? c1 : c0;
        char w[128];
        use(cc);
        clear_dev(c1, a1, n);
        snprintf(w, sizeof w, "peer 0 -> 1, device %d current", cur);
        CALL(w, cuMemcpyPeer(a1, c1, a0, c0, n));
        check_dev("device 1's buffer", c1, a1, n, 1);

        clear_dev(c1, a1, n);
        snprintf(w, sizeof w, "peer-async 0 -> 1 null stream, device %d current", cur);
        CALL(w, cuMemcpyPeerAsync(a1, c1, a0, c0, n, NULL));
        CALL("  ctx-synchronize", cuCtxSynchronize());
        check_dev("device 1's buffer", c1, a1, n, 1);

        CUstream s = NULL;
        MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
        clear_dev(c1, a1, n);
        snprintf(w, sizeof w, "peer-async 0 -> 1 on a stream of device %d", cur);
        CALL(w, cuMemcpyPeerAsync(a1, c1, a0, c0, n, s));
        CALL("  stream-synchronize", cuStreamSynchronize(s));
        check_dev("device 1's buffer", c1, a1, n, 1);

        clear_dev(c1, a1, n);
        snprintf(w, sizeof w, "dtod 0 -> 1, device %d current", cur);
        CALL(w, cuMemcpyDtoD(a1, a0, n));
        check_dev("device 1's buffer", c1, a1, n, 1);

        clear_dev(c1, a1, n);
        snprintf(w, sizeof w, "dtod-async 0 -> 1 on a stream of device %d", cur);
        CALL(w, cuMemcpyDtoDAsync(a1, a0, n, s));
        CALL("  stream-synchronize", cuStreamSynchronize(s));
        check_dev("device 1's buffer", c1, a1, n, 1);

        clear_dev(c1, a1, n);
        snprintf(w, sizeof w, "cuMemcpy 0 -> 1, device %d current", cur);
        CALL(w, cuMemcpy(a1, a0, n));
        check_dev("device 1's buffer", c1, a1, n, 1);
        MUST(cuStreamDestroy(s));
    }

    /* wrong context arguments */
    use(c0);
    clear_dev(c1, a1, n);
    CALL("peer with the contexts swapped", cuMemcpyPeer(a1, c0, a0, c1, n));
    check_dev("device 1's buffer", c1, a1, n, 1);
    clear_dev(c1, a1, n);
    CALL("peer with device 0's context for both", cuMemcpyPeer(a1, c0, a0, c0, n));
    check_dev("device 1's buffer", c1, a1, n, 1);
    clear_dev(c1, a1, n);
    CALL("peer with device 1's context for both", cuMemcpyPeer(a1, c1, a0, c1, n));
    check_dev("device 1's buffer", c1, a1, n, 1);
    clear_dev(c1, a1, n);
    CALL("peer-async with the contexts swapped", cuMemcpyPeerAsync(a1, c0, a0, c1, n, NULL));
    CALL("  ctx-synchronize", cuCtxSynchronize());
    check_dev("device 1's buffer", c1, a1, n, 1);

    /* enable peer access */
    SAY("-- enable peer access");
    use(c0);
    CALL("ctx-enable-peer-access flags 1 (invalid)", cuCtxEnablePeerAccess(c1, 1));
    CALL("ctx-enable-peer-access to itself", cuCtxEnablePeerAccess(c0, 0));
    CALL("ctx-enable-peer-access NULL peer", cuCtxEnablePeerAccess(NULL, 0));
    CALL("ctx-enable-peer-access 0 -> 1", cuCtxEnablePeerAccess(c1, 0));
    CALL("ctx-enable-peer-access 0 -> 1 again", cuCtxEnablePeerAccess(c1, 0));
    use(c1);
    CALL("ctx-enable-peer-access 1 -> 0", cuCtxEnablePeerAccess(c0, 0));
    context_of("device 0's buffer (device 1 current)", a0);
    for (int cur = 0; cur < 2; cur++) {
        CUcontext cc = cur ? c1 : c0;
        char w[128];
        use(cc);
        clear_dev(c1, a1, n);
        snprintf(w, sizeof w, "peer 0 -> 1 with access, device %d current", cur);
        CALL(w, cuMemcpyPeer(a1, c1, a0, c0, n));
        check_dev("device 1's buffer", c1, a1, n, 1);
        clear_dev(c1, a1, n);
        snprintf(w, sizeof w, "peer-async 0 -> 1 with access, device %d current", cur);
        CALL(w, cuMemcpyPeerAsync(a1, c1, a0, c0, n, NULL));
        CALL("  ctx-synchronize", cuCtxSynchronize());
        check_dev("device 1's buffer", c1, a1, n, 1);
        clear_dev(c1, a1, n);
        snprintf(w, sizeof w, "dtod 0 -> 1 with access, device %d current", cur);
        CALL(w, cuMemcpyDtoD(a1, a0, n));
        check_dev("device 1's buffer", c1, a1, n, 1);
    }
    /* read another device's memory straight to the host */
    fill_dev(c1, a1, n, 2);
    check_dev("device 1's buffer read with device 0 current", c0, a1, n, 2);

    /* disable */
    SAY("-- disable peer access");
    use(c0);
    CALL("ctx-disable-peer-access 0 -> 1", cuCtxDisablePeerAccess(c1));
    CALL("ctx-disable-peer-access 0 -> 1 again", cuCtxDisablePeerAccess(c1));
    CALL("ctx-disable-peer-access to itself", cuCtxDisablePeerAccess(c0));
    CALL("ctx-disable-peer-access NULL", cuCtxDisablePeerAccess(NULL));
    clear_dev(c1, a1, n);
    CALL("peer 0 -> 1 after disable, device 0 current", cuMemcpyPeer(a1, c1, a0, c0, n));
    check_dev("device 1's buffer", c1, a1, n, 1);
    clear_dev(c1, a1, n);
    CALL("dtod 0 -> 1 after disable, device 0 current", cuMemcpyDtoD(a1, a0, n));
    check_dev("device 1's buffer", c1, a1, n, 1);
    use(c1);
    CALL("ctx-disable-peer-access 1 -> 0", cuCtxDisablePeerAccess(c0));
    clear_dev(c1, a1, n);
    CALL("dtod 0 -> 1 after both disabled, device 1 current", cuMemcpyDtoD(a1, a0, n));
    check_dev("device 1's buffer", c1, a1, n, 1);
    use(c0);
    CALL("ctx-enable-peer-access 0 -> 1 after disable", cuCtxEnablePeerAccess(c1, 0));

    use(c1);
    CALL("mem-free device 0's buffer with device 1 current", cuMemFree(a0));
    use(c0);
    CALL("mem-free device 1's buffer with device 0 current", cuMemFree(a1));
}

/* ---------- 2. pinned-on-both ---------- */

static void pinned_on_both(void) {
    init_two();
    size_t n = 64 * 1024;
    use(c1);
    CUdeviceptr d1 = 0;
    MUST(cuMemAlloc(&d1, n));
    CUstream s1 = NULL;
    MUST(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    use(c0);

    enum { K = 5 };
    const char *names[K] = {"alloc-host", "host-alloc PORTABLE", "host-alloc DEVICEMAP", "registered 0", "registered PORTABLE"};
    void *h[K] = {0};
    SAY("-- made while device 0's context is current");
    CALL("alloc-host", cuMemAllocHost(&h[0], n));
    CALL("host-alloc PORTABLE", cuMemHostAlloc(&h[1], n, CU_MEMHOSTALLOC_PORTABLE));
    CALL("host-alloc DEVICEMAP", cuMemHostAlloc(&h[2], n, CU_MEMHOSTALLOC_DEVICEMAP));
    for (int i = 3; i < 5; i++) {
        void *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            SAY("mmap failed");
            _exit(3);
        }
        h[i] = m;
    }
    CALL("host-register flags 0", cuMemHostRegister(h[3], n, 0));
    CALL("host-register PORTABLE", cuMemHostRegister(h[4], n, CU_MEMHOSTREGISTER_PORTABLE));

    SAY("-- used while device 1's context is current");
    use(c1);
    for (int i = 0; i < K; i++) {
        if (!h[i]) continue;
        SAY("%s:", names[i]);
        CUdeviceptr dp;
        FILL(dp);
        CUresult r = CALL("  get-device-pointer", cuMemHostGetDevicePointer(&dp, h[i], 0));
        if (r == CUDA_SUCCESS) SAY("  device pointer == host pointer: %d", dp == HP(h[i]));
        unsigned int f;
        FILL(f);
        if (CALL("  get-flags", cuMemHostGetFlags(&f, h[i])) == CUDA_SUCCESS) SAY("  flags = 0x%x", f);
        unsigned int mt;
        FILL(mt);
        if (CALL("  MEMORY_TYPE", cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, HP(h[i]))) == CUDA_SUCCESS)
            SAY("  memory type = %u", mt);
        ordinal(names[i], HP(h[i]));
        context_of(names[i], HP(h[i]));
        int mapped;
        FILL(mapped);
        if (CALL("  MAPPED", cuPointerGetAttribute(&mapped, CU_POINTER_ATTRIBUTE_MAPPED, HP(h[i]))) == CUDA_SUCCESS)
            SAY("  mapped = %d", mapped);

        pattern(h[i], n, 10 + i);
        MUST(cuMemsetD8(d1, 0, n)); MUST(cuCtxSynchronize());
        CALL("  htod into device 1 memory", cuMemcpyHtoD(d1, h[i], n));
        check_dev("  device 1's buffer", c1, d1, n, 10 + i);
        MUST(cuMemsetD8(d1, 0, n)); MUST(cuCtxSynchronize());
        CALL("  htod-async on a stream of device 1", cuMemcpyHtoDAsync(d1, h[i], n, s1));
        CALL("  stream-synchronize", cuStreamSynchronize(s1));
        check_dev("  device 1's buffer", c1, d1, n, 10 + i);
        fill_dev(c1, d1, n, 20 + i);
        memset(h[i], 0, n);
        CALL("  dtoh-async from device 1 memory", cuMemcpyDtoHAsync(h[i], d1, n, s1));
        CALL("  stream-synchronize", cuStreamSynchronize(s1));
        SAY("  host sees device 1's bytes: %d", is_pattern(h[i], n, 20 + i));
        if (r == CUDA_SUCCESS) {
            pattern(h[i], n, 30 + i);
            MUST(cuMemsetD8(d1, 0, n)); MUST(cuCtxSynchronize());
            CALL("  dtod from its device pointer into device 1 memory", cuMemcpyDtoD(d1, dp, n));
            check_dev("  device 1's buffer", c1, d1, n, 30 + i);
        }
    }

    SAY("-- freed while device 1's context is current");
    CALL("free-host alloc-host", cuMemFreeHost(h[0]));
    CALL("free-host host-alloc PORTABLE", cuMemFreeHost(h[1]));
    CALL("free-host host-alloc DEVICEMAP", cuMemFreeHost(h[2]));
    CALL("host-unregister registered 0", cuMemHostUnregister(h[3]));
    CALL("host-unregister registered PORTABLE", cuMemHostUnregister(h[4]));
    unsigned int mt;
    FILL(mt);
    CALL("MEMORY_TYPE of the freed alloc-host", cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, HP(h[0])));
    OUT(mt);

    SAY("-- made while device 1's context is current, freed under device 0's");
    void *p = NULL;
    CALL("alloc-host", cuMemAllocHost(&p, n));
    use(c0);
    ordinal("it (device 0 current)", HP(p));
    context_of("it (device 0 current)", HP(p));
    CALL("free-host with device 0 current", cuMemFreeHost(p));
    munmap(h[3], n);
    munmap(h[4], n);
}

/* ---------- 3. pools-across-devices ---------- */

static void pool_access(const char *what, CUmemoryPool pool, int dev) {
    CUmemAccess_flags f;
    FILL(f);
    CUmemLocation l = loc(CU_MEM_LOCATION_TYPE_DEVICE, dev);
    if (CALL(what, cuMemPoolGetAccess(&f, pool, &l)) == CUDA_SUCCESS)
        SAY("access = %d", (int)f);
    else
        OUT(f);
}

/* Set before the pools-grant-only section (the fork inherits it): skips the copies
 * made before the grant, in case they leave device 1's context broken. */
static int skip_pre_grant;

static void pools_across_devices(void) {
    init_two();
    CUmemoryPool p0, p1, m1;
    FILL(p0);
    FILL(p1);
    FILL(m1);
    MUST(cuDeviceGetDefaultMemPool(&p0, 0));
    MUST(cuDeviceGetDefaultMemPool(&p1, 1));
    SAY("default pools of devices 0 and 1 equal: %d", p0 == p1);
    CALL("device-get-mem-pool 1", cuDeviceGetMemPool(&m1, 1));
    SAY("current pool of device 1 == its default: %d", m1 == p1);

    size_t n = MiB;
    use(c0);
    CUstream s0 = NULL;
    MUST(cuStreamCreate(&s0, CU_STREAM_NON_BLOCKING));
    use(c1);
    CUstream s1 = NULL;
    MUST(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    CUdeviceptr q1 = 0, d1 = 0;
    CALL("alloc-async on a stream of device 1", cuMemAllocAsync(&q1, n, s1));
    CALL("  stream-synchronize", cuStreamSynchronize(s1));
    MUST(cuMemAlloc(&d1, n));
    use(c0);
    CUdeviceptr q0 = 0;
    CALL("alloc-async on a stream of device 0", cuMemAllocAsync(&q0, n, s0));
    CALL("  stream-synchronize", cuStreamSynchronize(s0));
    ordinal("device 0's pool memory", q0);
    ordinal("device 1's pool memory", q1);
    fill_dev(c0, q0, n, 3);

    CUdeviceptr x = 0;
    use(c1);
    CUresult r = CALL("alloc-from-pool device 0's pool on a stream of device 1", cuMemAllocFromPoolAsync(&x, n, p0, s1));
    CALL("  stream-synchronize", cuStreamSynchronize(s1));
    if (r == CUDA_SUCCESS) {
        ordinal("it", x);
        CALL("  free-async on device 1's stream", cuMemFreeAsync(x, s1));
        CALL("  stream-synchronize", cuStreamSynchronize(s1));
    }
    use(c0);

    pool_access("pool-get-access device 0's pool for device 0", p0, 0);
    pool_access("pool-get-access device 0's pool for device 1", p0, 1);
    pool_access("pool-get-access device 1's pool for device 0", p1, 0);
    pool_access("pool-get-access device 0's pool for device 2 (no such device)", p0, 2);

    use(c1);
    if (!skip_pre_grant) {
        SAY("-- before the grant, device 1 current");
        MUST(cuMemsetD8(d1, 0, n)); MUST(cuCtxSynchronize());
        CALL("dtod device 0's pool memory -> device 1", cuMemcpyDtoD(d1, q0, n));
        check_dev("device 1's buffer", c1, d1, n, 3);
        MUST(cuMemsetD8(d1, 0, n)); MUST(cuCtxSynchronize());
        CALL("dtod-async device 0's pool memory -> device 1", cuMemcpyDtoDAsync(d1, q0, n, s1));
        CALL("  stream-synchronize", cuStreamSynchronize(s1));
        check_dev("device 1's buffer", c1, d1, n, 3);
        check_dev("device 0's pool memory read with device 1 current", c1, q0, n, 3);
    }

    SAY("-- grant");
    CUmemAccessDesc rw1 = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 1, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CUmemAccessDesc none0 = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_NONE);
    CUmemAccessDesc rd1 = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 1, CU_MEM_ACCESS_FLAGS_PROT_READ);
    CALL("pool-set-access device 0's pool: device 0 NONE (its owner)", cuMemPoolSetAccess(p0, &none0, 1));
    CALL("pool-set-access device 0's pool: device 1 READ", cuMemPoolSetAccess(p0, &rd1, 1));
    pool_access("pool-get-access device 0's pool for device 1", p0, 1);
    CALL("pool-set-access device 0's pool: device 1 READWRITE", cuMemPoolSetAccess(p0, &rw1, 1));
    pool_access("pool-get-access device 0's pool for device 1", p0, 1);
    pool_access("pool-get-access device 0's pool for device 0", p0, 0);
    pool_access("pool-get-access device 1's pool for device 0", p1, 0);

    SAY("-- after the grant, device 1 current");
    MUST(cuMemsetD8(d1, 0, n)); MUST(cuCtxSynchronize());
    CALL("dtod device 0's pool memory -> device 1", cuMemcpyDtoD(d1, q0, n));
    check_dev("device 1's buffer", c1, d1, n, 3);
    MUST(cuMemsetD8(d1, 0, n)); MUST(cuCtxSynchronize());
    CALL("dtod-async device 0's pool memory -> device 1", cuMemcpyDtoDAsync(d1, q0, n, s1));
    CALL("  stream-synchronize", cuStreamSynchronize(s1));
    check_dev("device 1's buffer", c1, d1, n, 3);
    fill_dev(c1, d1, n, 4);
    CALL("dtod device 1 -> device 0's pool memory", cuMemcpyDtoD(q0, d1, n));
    check_dev("device 0's pool memory", c0, q0, n, 4);

    SAY("-- revoke");
    CUmemAccessDesc no1 = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 1, CU_MEM_ACCESS_FLAGS_PROT_NONE);
    use(c0);
    CALL("pool-set-access device 0's pool: device 1 NONE", cuMemPoolSetAccess(p0, &no1, 1));
    pool_access("pool-get-access device 0's pool for device 1", p0, 1);

    use(c0);
    CALL("free-async device 0's pool memory", cuMemFreeAsync(q0, s0));
    CALL("  stream-synchronize", cuStreamSynchronize(s0));
    CALL("free-async device 1's pool memory on device 0's stream", cuMemFreeAsync(q1, s0));
    CALL("  stream-synchronize", cuStreamSynchronize(s0));
    use(c1);
    CALL("mem-free device 1's buffer", cuMemFree(d1));
}

/* ---------- 4. managed-on-two ---------- */

static void range_attr(const char *what, CUmem_range_attribute a, CUdeviceptr p, size_t n) {
    int v;
    FILL(v);
    if (CALL(what, cuMemRangeGetAttribute(&v, sizeof v, a, p, n)) == CUDA_SUCCESS)
        SAY("value = %d", v);
    else
        OUT(v);
}

static void last_prefetch(CUdeviceptr p, size_t n) {
    range_attr("  range LAST_PREFETCH_LOCATION", CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, p, n);
    range_attr("  range LAST_PREFETCH_LOCATION_TYPE", CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE, p, n);
    range_attr("  range LAST_PREFETCH_LOCATION_ID", CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID, p, n);
}

static void accessed_by(CUdeviceptr p, size_t n) {
    int acc[4];
    memset(acc, 0xA5, sizeof acc);
    if (CALL("  range ACCESSED_BY (4 ints)", cuMemRangeGetAttribute(acc, sizeof acc, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, p, n)) == CUDA_SUCCESS)
        SAY("accessed by = %d %d %d %d", acc[0], acc[1], acc[2], acc[3]);
}

static void managed_on_two(void) {
    init_two();
    for (int d = 0; d < 2; d++) {
        int v;
        FILL(v);
        char w[96];
        snprintf(w, sizeof w, "device %d CONCURRENT_MANAGED_ACCESS", d);
        if (CALL(w, cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, d)) == CUDA_SUCCESS) SAY("value = %d", v);
    }
    size_t n = 2 * MiB;
    CUdeviceptr mp = 0;
    use(c0);
    MUST(cuMemAllocManaged(&mp, n, CU_MEM_ATTACH_GLOBAL));
    unsigned char *h = (unsigned char *)(uintptr_t)mp;
    pattern(h, n, 5);
    ordinal("managed memory", mp);
    context_of("managed memory (device 0 current)", mp);
    CUmemLocation dev0 = loc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
    CUmemLocation dev1 = loc(CU_MEM_LOCATION_TYPE_DEVICE, 1);
    CUmemLocation dev2 = loc(CU_MEM_LOCATION_TYPE_DEVICE, 2);
    last_prefetch(mp, n);

    CALL("prefetch to device 1, device 0 current, null stream", cuMemPrefetchAsync(mp, n, dev1, 0, NULL));
    CALL("  ctx-synchronize", cuCtxSynchronize());
    last_prefetch(mp, n);

    use(c1);
    CUstream s1 = NULL;
    MUST(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    CUdeviceptr d1 = 0;
    MUST(cuMemAlloc(&d1, n));
    MUST(cuMemsetD8(d1, 0, n)); MUST(cuCtxSynchronize());
    CALL("dtod managed -> device 1, device 1 current", cuMemcpyDtoD(d1, mp, n));
    check_dev("device 1's buffer", c1, d1, n, 5);

    CALL("prefetch first half to device 0 on a stream of device 1", cuMemPrefetchAsync(mp, n / 2, dev0, 0, s1));
    CALL("  stream-synchronize", cuStreamSynchronize(s1));
    range_attr("  range LAST_PREFETCH_LOCATION first half", CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, mp, n / 2);
    range_attr("  range LAST_PREFETCH_LOCATION whole (mixed)", CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, mp, n);
    use(c0);
    CALL("prefetch to device 0, device 0 current", cuMemPrefetchAsync(mp, n, dev0, 0, NULL));
    CALL("  ctx-synchronize", cuCtxSynchronize());
    last_prefetch(mp, n);
    CALL("prefetch to device 2 (no such device)", cuMemPrefetchAsync(mp, n, dev2, 0, NULL));
    SAY("host sees the data after the prefetches: %d", is_pattern(h, n, 5));

    SAY("-- advice");
    range_attr("  range PREFERRED_LOCATION before advice", CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, mp, n);
    CALL("advise SET_PREFERRED_LOCATION device 1", cuMemAdvise(mp, n, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, dev1));
    range_attr("  range PREFERRED_LOCATION", CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, mp, n);
    range_attr("  range PREFERRED_LOCATION_TYPE", CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, mp, n);
    range_attr("  range PREFERRED_LOCATION_ID", CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID, mp, n);
    accessed_by(mp, n);
    CALL("advise SET_ACCESSED_BY device 0", cuMemAdvise(mp, n, CU_MEM_ADVISE_SET_ACCESSED_BY, dev0));
    accessed_by(mp, n);
    CALL("advise SET_ACCESSED_BY device 1", cuMemAdvise(mp, n, CU_MEM_ADVISE_SET_ACCESSED_BY, dev1));
    accessed_by(mp, n);
    CALL("advise SET_ACCESSED_BY device 2 (no such device)", cuMemAdvise(mp, n, CU_MEM_ADVISE_SET_ACCESSED_BY, dev2));
    CALL("advise UNSET_ACCESSED_BY device 0", cuMemAdvise(mp, n, CU_MEM_ADVISE_UNSET_ACCESSED_BY, dev0));
    accessed_by(mp, n);
    CALL("advise SET_READ_MOSTLY", cuMemAdvise(mp, n, CU_MEM_ADVISE_SET_READ_MOSTLY, dev1));
    range_attr("  range READ_MOSTLY", CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, mp, n);

    SAY("-- reads through device 1 after the advice");
    use(c1);
    MUST(cuMemsetD8(d1, 0, n)); MUST(cuCtxSynchronize());
    CALL("dtod managed -> device 1, device 1 current", cuMemcpyDtoD(d1, mp, n));
    check_dev("device 1's buffer", c1, d1, n, 5);
    MUST(cuMemsetD8(d1, 0, n)); MUST(cuCtxSynchronize());
    CALL("dtod-async managed -> device 1 on a stream of device 1", cuMemcpyDtoDAsync(d1, mp, n, s1));
    CALL("  stream-synchronize", cuStreamSynchronize(s1));
    check_dev("device 1's buffer", c1, d1, n, 5);
    fill_dev(c1, d1, n, 6);
    CALL("dtod device 1 -> managed, device 1 current", cuMemcpyDtoD(mp, d1, n));
    SAY("host sees device 1's bytes: %d", is_pattern(h, n, 6));
    last_prefetch(mp, n);

    use(c1);
    CALL("mem-free managed with device 1 current", cuMemFree(mp));
    CALL("mem-free device 1's buffer", cuMemFree(d1));
}

/* ---------- 5. vmm-on-two ---------- */

static void get_access(const char *what, CUdeviceptr va, int dev) {
    unsigned long long f;
    FILL(f);
    CUmemLocation l = loc(CU_MEM_LOCATION_TYPE_DEVICE, dev);
    if (CALL(what, cuMemGetAccess(&f, &l, va)) == CUDA_SUCCESS)
        SAY("access = %llu", f);
    else
        OUT(f);
}

static void vmm_on_two(void) {
    init_two();
    CUmemAllocationProp p1 = prop_dev(1, 0);
    size_t g1 = 0;
    MUST(cuMemGetAllocationGranularity(&g1, &p1, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    SAY("granularity of device 1 == of device 0: %d", g1 == g);
    size_t n = 4096;

    use(c0);
    CUmemGenericAllocationHandle hd;
    MUST(cuMemCreate(&hd, g1, &p1, 0));
    CUmemAllocationProp got;
    memset(&got, 0, sizeof got);
    if (CALL("get-allocation-properties-from-handle", cuMemGetAllocationPropertiesFromHandle(&got, hd)) == CUDA_SUCCESS)
        SAY("location type = %d, id = %d", (int)got.location.type, got.location.id);
    CUdeviceptr va = 0;
    MUST(cuMemAddressReserve(&va, g1, 0, 0, 0));
    CALL("map device 1's memory", cuMemMap(va, g1, 0, hd, 0));
    get_access("get-access device 0 before set-access", va, 0);
    get_access("get-access device 1 before set-access", va, 1);
    CUmemAccessDesc rw0 = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CUmemAccessDesc rw1 = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 1, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CALL("set-access device 0 READWRITE only", cuMemSetAccess(va, g1, &rw0, 1));
    get_access("get-access device 0", va, 0);
    get_access("get-access device 1", va, 1);
    ordinal("device 1's VMM memory", va);
    MUST(cuMemsetD8(va, 0, g1)); MUST(cuCtxSynchronize());
    MUST(cuCtxSynchronize());

    void *buf = malloc(n);
    pattern(buf, n, 7);
    SAY("-- access for device 0 only");
    use(c1);
    CALL("htod into it, device 1 current", cuMemcpyHtoD(va, buf, n));
    check_dev("it, read with device 0 current", c0, va, n, 7);
    CUdeviceptr d1 = 0;
    MUST(cuMemAlloc(&d1, n));
    fill_dev(c1, d1, n, 8);
    CALL("dtod device 1 -> it, device 1 current", cuMemcpyDtoD(va, d1, n));
    check_dev("it, read with device 0 current", c0, va, n, 8);
    use(c0);
    pattern(buf, n, 9);
    CALL("htod into it, device 0 current", cuMemcpyHtoD(va, buf, n));
    check_dev("it, read with device 0 current", c0, va, n, 9);
    use(c0);
    CALL("memset-d32 it, device 0 current", cuMemsetD32(va, 0x01020304u, n / 4));
    CALL("  ctx-synchronize", cuCtxSynchronize());
    unsigned w = 0;
    if (CALL("dtoh a word of it, device 0 current", cuMemcpyDtoH(&w, va, 4)) == CUDA_SUCCESS) SAY("reads 0x%08x", w);

    SAY("-- access for both");
    CALL("set-access device 1 READWRITE", cuMemSetAccess(va, g1, &rw1, 1));
    get_access("get-access device 0", va, 0);
    get_access("get-access device 1", va, 1);
    use(c1);
    pattern(buf, n, 11);
    CALL("htod into it, device 1 current", cuMemcpyHtoD(va, buf, n));
    check_dev("it, read with device 1 current", c1, va, n, 11);
    check_dev("it, read with device 0 current", c0, va, n, 11);

    use(c0);
    CALL("unmap device 1's memory", cuMemUnmap(va, g1));
    CALL("release device 1's handle", cuMemRelease(hd));
    CALL("address-free", cuMemAddressFree(va, g1));
    free(buf);
}

/* ---------- 6. vmm-reverse: device 0's memory mapped for device 1 only ---------- */

static void vmm_reverse(void) {
    init_two();
    size_t n = 4096;
    void *buf = malloc(n);
    CUmemAccessDesc rw1 = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 1, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CUmemAllocationProp p0 = prop_dev(0, 0);
    CUmemGenericAllocationHandle h0;
    MUST(cuMemCreate(&h0, g, &p0, 0));
    CUdeviceptr vb = 0;
    MUST(cuMemAddressReserve(&vb, g, 0, 0, 0));
    MUST(cuMemMap(vb, g, 0, h0, 0));
    CALL("set-access device 1 READWRITE only", cuMemSetAccess(vb, g, &rw1, 1));
    get_access("get-access device 0", vb, 0);
    get_access("get-access device 1", vb, 1);
    use(c1);
    pattern(buf, n, 12);
    CALL("htod into it, device 1 current", cuMemcpyHtoD(vb, buf, n));
    check_dev("it, read with device 1 current", c1, vb, n, 12);
    clear_dev(c1, vb, g);
    use(c0);
    pattern(buf, n, 13);
    CALL("htod into it, device 0 current", cuMemcpyHtoD(vb, buf, n));
    check_dev("it, read with device 1 current", c1, vb, n, 13);

    use(c0);
    CALL("unmap device 0's memory", cuMemUnmap(vb, g));
    CALL("release device 0's handle", cuMemRelease(h0));
    CALL("address-free", cuMemAddressFree(vb, g));
    free(buf);
}

/* cuMemcpyPeer and cuMemcpyPeerAsync between the two devices' stream-ordered (pool)
 * memory, no access granted, device 0 current: what cudarc's tests peer_transfer_contexts
 * and test_peer_memcpy_waits_for_src_stream do (docs/frameworks/cudarc.md). Section
 * peer-copies asks it of cuMemAlloc's memory; pools-across-devices showed that a plain
 * DtoD copy of another device's pool memory is CUDA_ERROR_INVALID_VALUE. Whether the peer
 * copies, which name both contexts, are refused too awaits a recording. */
static void peer_copies_of_pool_memory(void) {
    init_two();
    const size_t n = 4096;
    CUstream s0, s1;
    MUST(cuStreamCreate(&s0, CU_STREAM_NON_BLOCKING));
    use(c1);
    MUST(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    CUdeviceptr q1;
    MUST(cuMemAllocAsync(&q1, n, s1));
    MUST(cuStreamSynchronize(s1));
    use(c0);
    CUdeviceptr q0;
    MUST(cuMemAllocAsync(&q0, n, s0));
    MUST(cuStreamSynchronize(s0));
    fill_dev(c0, q0, n, 7);
    clear_dev(c1, q1, n);
    CALL("peer device 0's pool memory -> device 1's", cuMemcpyPeer(q1, c1, q0, c0, n));
    check_dev("device 1's pool memory", c1, q1, n, 7);
    clear_dev(c1, q1, n);
    CALL("peer-async on device 0's stream", cuMemcpyPeerAsync(q1, c1, q0, c0, n, s0));
    CALL("  stream-synchronize", cuStreamSynchronize(s0));
    check_dev("device 1's pool memory", c1, q1, n, 7);
    clear_dev(c1, q1, n);
    CALL("peer-async on the NULL stream", cuMemcpyPeerAsync(q1, c1, q0, c0, n, NULL));
    CALL("  ctx-synchronize", cuCtxSynchronize());
    check_dev("device 1's pool memory", c1, q1, n, 7);
    fill_dev(c1, q1, n, 9);
    clear_dev(c0, q0, n);
    CALL("peer device 1's pool memory -> device 0's, on device 1's stream", cuMemcpyPeerAsync(q0, c0, q1, c1, n, s1));
    CALL("  stream-synchronize", cuStreamSynchronize(s1));
    check_dev("device 0's pool memory", c0, q0, n, 9);
    MUST(cuMemFreeAsync(q0, s0));
    MUST(cuStreamSynchronize(s0));
    use(c1);
    MUST(cuMemFreeAsync(q1, s1));
    MUST(cuStreamSynchronize(s1));
}

/* ---------- main ---------- */

/* How many devices there are, asked in a child (the parent must not call cuInit: its
 * sections' children would inherit an initialised driver). */
static int device_count(void) {
    pid_t pid = fork();
    if (pid == 0) {
        int c = 0;
        if (cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&c) != CUDA_SUCCESS) c = 0;
        _exit(c > 100 ? 100 : c);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 0;
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (device_count() < 2) {
        printf("## skipped: needs 2 devices\n");
        return 0;
    }
    section("peer-copies", peer_copies);
    section("pinned-on-both", pinned_on_both);
    section("pools-across-devices", pools_across_devices);
    skip_pre_grant = 1;
    section("pools-grant-only", pools_across_devices);
    section("managed-on-two", managed_on_two);
    section("vmm-on-two", vmm_on_two);
    section("vmm-reverse", vmm_reverse);
    section("peer-copies-of-pool-memory", peer_copies_of_pool_memory);
    return 0;
}
