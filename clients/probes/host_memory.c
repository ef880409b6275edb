/* Host memory, managed memory, pitched 2D memory, peer copies and async memsets: what
 * the real driver answers for valid use and for each kind of bad input, and what
 * cuPointerGetAttribute / cuMemGetAddressRange say about each kind of memory.
 * No raw address is printed: only results, sizes, flags, comparisons and values. */
#include "probe.h"
#include <sys/mman.h>

/* A pointer out-parameter: untouched (the sentinel), zero, or written. */
#define PTR(var)                                                                                  \
    do {                                                                                          \
        uint64_t v_ = 0;                                                                          \
        memcpy(&v_, &(var), sizeof(var) < 8 ? sizeof(var) : 8);                                   \
        printf("  %s %s\n", #var, v_ == SENTINEL ? "untouched" : v_ == 0 ? "zero" : "written");  \
        fflush(stdout);                                                                           \
    } while (0)

static uint32_t checksum(const void *p, size_t n) {
    const unsigned char *b = p;
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 16777619u;
    return h;
}

static CUcontext cur_ctx;

/* What the driver says about the memory at p (an address; host is the host pointer the
 * caller knows, or NULL). */
static void attrs(const char *label, CUdeviceptr p, const void *host) {
    printf("  attributes of %s:\n", label);
    fflush(stdout);
    unsigned int mt;
    FILL(mt);
    CUresult r = CALL("    MEMORY_TYPE", cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p));
    if (r == CUDA_SUCCESS) SAY("  memory type = %u", mt);
    CUdeviceptr dp;
    FILL(dp);
    r = CALL("    DEVICE_POINTER", cuPointerGetAttribute(&dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, p));
    if (r == CUDA_SUCCESS) SAY("  device pointer == address: %d, == host pointer: %d", dp == p, host && dp == (CUdeviceptr)(uintptr_t)host);
    void *hp;
    FILL(hp);
    r = CALL("    HOST_POINTER", cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, p));
    if (r == CUDA_SUCCESS) SAY("  host pointer == address: %d, null: %d", (CUdeviceptr)(uintptr_t)hp == p, hp == NULL);
    unsigned int managed;
    FILL(managed);
    r = CALL("    IS_MANAGED", cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p));
    if (r == CUDA_SUCCESS) SAY("  is managed = %u", managed);
    CUcontext c;
    FILL(c);
    r = CALL("    CONTEXT", cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, p));
    if (r == CUDA_SUCCESS) SAY("  context null: %d, == current: %d", c == NULL, c == cur_ctx);
    int ord;
    FILL(ord);
    r = CALL("    DEVICE_ORDINAL", cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p));
    if (r == CUDA_SUCCESS) SAY("  device ordinal = %d", ord);
    int mapped;
    FILL(mapped);
    r = CALL("    MAPPED", cuPointerGetAttribute(&mapped, CU_POINTER_ATTRIBUTE_MAPPED, p));
    if (r == CUDA_SUCCESS) SAY("  mapped = %d", mapped);
    CUdeviceptr start;
    FILL(start);
    r = CALL("    RANGE_START_ADDR", cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p));
    if (r == CUDA_SUCCESS) SAY("  range start == address: %d, address - range start = %lld", start == p, (long long)(p - start));
    size_t rs;
    FILL(rs);
    r = CALL("    RANGE_SIZE", cuPointerGetAttribute(&rs, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p));
    if (r == CUDA_SUCCESS) SAY("  range size = %zu", rs);
    CUdeviceptr base;
    size_t size;
    FILL(base);
    FILL(size);
    r = CALL("    cuMemGetAddressRange", cuMemGetAddressRange(&base, &size, p));
    if (r == CUDA_SUCCESS)
        SAY("  base == address: %d, address - base = %lld, size = %zu", base == p, (long long)(p - base), size);
    else {
        PTR(base);
        PTR(size);
    }
}

#define HP(p) ((CUdeviceptr)(uintptr_t)(p))

/* 1. cuMemAllocHost: sizes, host access, copies both ways, frees, attributes. */
static void alloc_host(void) {
    init_primary(0, &cur_ctx);
    size_t sizes[] = {1, 4096, 3u << 20, 0};
    for (int i = 0; i < 4; i++) {
        char what[64];
        snprintf(what, sizeof what, "alloc-host %zu", sizes[i]);
        void *p;
        FILL(p);
        CUresult r = CALL(what, cuMemAllocHost(&p, sizes[i]));
        PTR(p);
        if (r != CUDA_SUCCESS || p == NULL || p == (void *)(uintptr_t)SENTINEL) continue;
        SAY("page aligned: %d", ((uintptr_t)p & 4095) == 0);
        if (sizes[i]) {
            pattern(p, sizes[i], 7);
            SAY("host write/read back ok: %d", is_pattern(p, sizes[i], 7));
        }
        attrs(what, HP(p), p);
        if (sizes[i] > 1) attrs("its last byte", HP(p) + sizes[i] - 1, (char *)p + sizes[i] - 1);
        CALL("free-host", cuMemFreeHost(p));
    }
    void *np;
    CALL("alloc-host NULL out-param", cuMemAllocHost(NULL, 4096));
    FILL(np);
    CALL("alloc-host 1 TiB", cuMemAllocHost(&np, (size_t)1 << 40));
    PTR(np);

    size_t n = 3u << 20;
    void *h = NULL;
    CUdeviceptr d = 0, d2 = 0;
    MUST(cuMemAllocHost(&h, n));
    MUST(cuMemAlloc(&d, n));
    MUST(cuMemAlloc(&d2, n));
    pattern(h, n, 1);
    CALL("htod from pinned", cuMemcpyHtoD(d, h, n));
    memset(h, 0, n);
    CALL("dtoh into pinned", cuMemcpyDtoH(h, d, n));
    SAY("round trip ok: %d", is_pattern(h, n, 1));
    pattern(h, n, 2);
    CALL("cuMemcpy pinned -> device", cuMemcpy(d2, HP(h), n));
    memset(h, 0, n);
    CALL("cuMemcpy device -> pinned", cuMemcpy(HP(h), d2, n));
    SAY("cuMemcpy round trip ok: %d", is_pattern(h, n, 2));
    void *h2 = NULL;
    MUST(cuMemAllocHost(&h2, 4096));
    pattern(h, 4096, 3);
    memset(h2, 0, 4096);
    CALL("cuMemcpy pinned -> pinned", cuMemcpy(HP(h2), HP(h), 4096));
    SAY("pinned -> pinned ok: %d", is_pattern(h2, 4096, 3));
    CALL("dtoh size 0", cuMemcpyDtoH(h, d, 0));

    CALL("free-host NULL", cuMemFreeHost(NULL));
    CALL("mem-free (device free) of pinned", cuMemFree(HP(h2)));
    CALL("free-host interior pointer", cuMemFreeHost((char *)h + 4096));
    CALL("free-host", cuMemFreeHost(h));
    CALL("free-host again", cuMemFreeHost(h));
    unsigned int mt;
    FILL(mt);
    CALL("MEMORY_TYPE after free", cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, HP(h)));
    OUT(mt);
    CALL("htod past the end of the device buffer", cuMemcpyHtoD(d2 + n - 16, h2, 4096));
    CALL("free-host of a device pointer", cuMemFreeHost((void *)(uintptr_t)d));
    CALL("mem-free device", cuMemFree(d));
}

/* 1b. Host pointers the driver did not hand out (each may crash the driver). */
static void bad_host_pointers(void) {
    init_primary(0, &cur_ctx);
    CUdeviceptr d = 0;
    MUST(cuMemAlloc(&d, 4096));
    CALL("dtoh with NULL host", cuMemcpyDtoH(NULL, d, 16));
    CALL("htod from NULL host", cuMemcpyHtoD(d, NULL, 16));
    void *m = malloc(4096);
    CALL("free-host of a malloc'd pointer", cuMemFreeHost(m));
    SAY("survived");
}

/* 2. cuMemHostAlloc flags, cuMemHostGetFlags, cuMemHostGetDevicePointer. */
static void host_alloc_flags(void) {
    init_primary(0, &cur_ctx);
    struct { const char *name; unsigned f; } fl[] = {
        {"0", 0},
        {"PORTABLE", CU_MEMHOSTALLOC_PORTABLE},
        {"DEVICEMAP", CU_MEMHOSTALLOC_DEVICEMAP},
        {"WRITECOMBINED", CU_MEMHOSTALLOC_WRITECOMBINED},
        {"all three", 7},
        {"0x8 (invalid)", 8},
        {"0x80000000 (invalid)", 0x80000000u},
    };
    size_t n = 8192;
    void *buf = malloc(n);
    for (unsigned i = 0; i < sizeof fl / sizeof fl[0]; i++) {
        char what[96];
        snprintf(what, sizeof what, "host-alloc flags %s", fl[i].name);
        void *p;
        FILL(p);
        CUresult r = CALL(what, cuMemHostAlloc(&p, n, fl[i].f));
        PTR(p);
        if (r != CUDA_SUCCESS) continue;
        unsigned int f;
        FILL(f);
        if (CALL("  get-flags", cuMemHostGetFlags(&f, p)) == CUDA_SUCCESS) SAY("flags = 0x%x", f);
        CALL("  get-flags interior", cuMemHostGetFlags(&f, (char *)p + 100));
        CUdeviceptr dp;
        FILL(dp);
        r = CALL("  get-device-pointer flags 0", cuMemHostGetDevicePointer(&dp, p, 0));
        if (r == CUDA_SUCCESS) {
            SAY("device pointer == host pointer: %d", dp == HP(p));
            pattern(p, n, i);
            memset(buf, 0, n);
            CALL("  dtoh from the device pointer", cuMemcpyDtoH(buf, dp, n));
            SAY("read through device pointer ok: %d", is_pattern(buf, n, i));
        } else
            PTR(dp);
        FILL(dp);
        r = CALL("  get-device-pointer interior", cuMemHostGetDevicePointer(&dp, (char *)p + 100, 0));
        if (r == CUDA_SUCCESS) SAY("interior device pointer == interior host pointer: %d", dp == HP(p) + 100);
        FILL(dp);
        CALL("  get-device-pointer flags 1", cuMemHostGetDevicePointer(&dp, p, 1));
        PTR(dp);
        attrs(what, HP(p), p);
        CALL("  free-host", cuMemFreeHost(p));
    }
    void *p;
    FILL(p);
    CALL("host-alloc size 0", cuMemHostAlloc(&p, 0, 0));
    PTR(p);
    CALL("host-alloc NULL out-param", cuMemHostAlloc(NULL, 4096, 0));
    unsigned int f;
    FILL(f);
    CALL("get-flags of a malloc'd pointer", cuMemHostGetFlags(&f, buf));
    OUT(f);
    CUdeviceptr d = 0;
    MUST(cuMemAlloc(&d, 4096));
    FILL(f);
    CALL("get-flags of a device pointer", cuMemHostGetFlags(&f, (void *)(uintptr_t)d));
    OUT(f);
    CUdeviceptr dp;
    FILL(dp);
    CALL("get-device-pointer of a malloc'd pointer", cuMemHostGetDevicePointer(&dp, buf, 0));
    PTR(dp);
    FILL(dp);
    CALL("get-device-pointer of a device pointer", cuMemHostGetDevicePointer(&dp, (void *)(uintptr_t)d, 0));
    PTR(dp);
    void *ah = NULL;
    MUST(cuMemAllocHost(&ah, 4096));
    FILL(f);
    if (CALL("get-flags of alloc-host memory", cuMemHostGetFlags(&f, ah)) == CUDA_SUCCESS) SAY("flags = 0x%x", f);
    FILL(dp);
    if (CALL("get-device-pointer of alloc-host memory", cuMemHostGetDevicePointer(&dp, ah, 0)) == CUDA_SUCCESS)
        SAY("device pointer == host pointer: %d", dp == HP(ah));
    CALL("get-flags NULL out-param", cuMemHostGetFlags(NULL, ah));
    CALL("get-device-pointer NULL out-param", cuMemHostGetDevicePointer(NULL, ah, 0));
    CALL("free-host", cuMemFreeHost(ah));
    FILL(f);
    CALL("get-flags after free", cuMemHostGetFlags(&f, ah));
    OUT(f);
}

/* 3. cuMemHostRegister / cuMemHostUnregister. */
static void host_register(void) {
    init_primary(0, &cur_ctx);
    size_t region = 64 * 4096;
    char *m = mmap(NULL, 16 * region, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        SAY("mmap failed");
        return;
    }
    memset(m, 0, 16 * region);
    attrs("mmap'd memory before registration", HP(m), m);

    /* a. plain registration of page-aligned mmap'd memory */
    char *a = m;
    CUresult r = CALL("register mmap'd, aligned, flags 0", cuMemHostRegister(a, region, 0));
    if (r == CUDA_SUCCESS) {
        attrs("registered base", HP(a), a);
        attrs("registered base + 100", HP(a) + 100, a + 100);
        unsigned int f;
        FILL(f);
        if (CALL("get-flags registered", cuMemHostGetFlags(&f, a)) == CUDA_SUCCESS) SAY("flags = 0x%x", f);
        CUdeviceptr dp;
        FILL(dp);
        if (CALL("get-device-pointer registered", cuMemHostGetDevicePointer(&dp, a, 0)) == CUDA_SUCCESS)
            SAY("device pointer == host pointer: %d", dp == HP(a));
        CUdeviceptr d = 0;
        MUST(cuMemAlloc(&d, region));
        pattern(a, region, 5);
        CALL("htod from registered", cuMemcpyHtoD(d, a, region));
        memset(a, 0, region);
        CALL("dtoh into registered", cuMemcpyDtoH(a, d, region));
        SAY("round trip ok: %d", is_pattern(a, region, 5));
        memset(a, 0, region);
        CALL("cuMemcpy device -> registered", cuMemcpy(HP(a), d, region));
        SAY("cuMemcpy ok: %d", is_pattern(a, region, 5));
        CALL("register same range again", cuMemHostRegister(a, region, 0));
        CALL("register overlapping range", cuMemHostRegister(a + region / 2, region, 0));
        CALL("register a sub-range", cuMemHostRegister(a + 4096, 4096, 0));
        CALL("unregister interior pointer", cuMemHostUnregister(a + 4096));
        CALL("unregister", cuMemHostUnregister(a));
        CALL("unregister again", cuMemHostUnregister(a));
        attrs("after unregistration", HP(a), a);
        CALL("mem-free device", cuMemFree(d));
    }

    /* b. flags, each on a fresh region */
    struct { const char *name; unsigned f; } fl[] = {
        {"PORTABLE", CU_MEMHOSTREGISTER_PORTABLE},
        {"DEVICEMAP", CU_MEMHOSTREGISTER_DEVICEMAP},
        {"READ_ONLY", CU_MEMHOSTREGISTER_READ_ONLY},
        {"IOMEMORY", CU_MEMHOSTREGISTER_IOMEMORY},
        {"PORTABLE|DEVICEMAP", 3},
        {"0x10 (invalid)", 0x10},
    };
    for (unsigned i = 0; i < sizeof fl / sizeof fl[0]; i++) {
        char *b = m + (1 + i) * region;
        char what[96];
        snprintf(what, sizeof what, "register flags %s", fl[i].name);
        if (CALL(what, cuMemHostRegister(b, region, fl[i].f)) != CUDA_SUCCESS) continue;
        unsigned int f;
        FILL(f);
        if (CALL("  get-flags", cuMemHostGetFlags(&f, b)) == CUDA_SUCCESS) SAY("flags = 0x%x", f);
        unsigned int mt;
        FILL(mt);
        if (CALL("  MEMORY_TYPE", cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, HP(b))) == CUDA_SUCCESS)
            SAY("memory type = %u", mt);
        CALL("  unregister", cuMemHostUnregister(b));
    }

    /* c. alignment, size 0, NULL */
    char *c = m + 8 * region;
    r = CALL("register unaligned pointer (base + 16), 4096", cuMemHostRegister(c + 16, 4096, 0));
    if (r == CUDA_SUCCESS) {
        attrs("unaligned registration", HP(c + 16), c + 16);
        attrs("its page start", HP(c), c);
        CALL("unregister page start", cuMemHostUnregister(c));
        CALL("unregister base + 16", cuMemHostUnregister(c + 16));
    }
    c = m + 9 * region;
    r = CALL("register aligned pointer, size 100", cuMemHostRegister(c, 100, 0));
    if (r == CUDA_SUCCESS) {
        size_t rs;
        FILL(rs);
        if (CALL("RANGE_SIZE", cuPointerGetAttribute(&rs, CU_POINTER_ATTRIBUTE_RANGE_SIZE, HP(c))) == CUDA_SUCCESS)
            SAY("range size = %zu", rs);
        CALL("unregister", cuMemHostUnregister(c));
    }
    CALL("register size 0", cuMemHostRegister(m + 10 * region, 0, 0));
    CALL("register NULL, 4096", cuMemHostRegister(NULL, 4096, 0));
    CALL("register NULL, 0", cuMemHostRegister(NULL, 0, 0));
    CALL("unregister never registered", cuMemHostUnregister(m + 11 * region));
    CALL("unregister NULL", cuMemHostUnregister(NULL));

    /* d. adjacent registrations */
    char *e = m + 12 * region;
    CALL("register [0, 4 pages)", cuMemHostRegister(e, 4 * 4096, 0));
    CALL("register adjacent [4, 8 pages)", cuMemHostRegister(e + 4 * 4096, 4 * 4096, 0));
    size_t rs;
    FILL(rs);
    if (CALL("RANGE_SIZE of the first", cuPointerGetAttribute(&rs, CU_POINTER_ATTRIBUTE_RANGE_SIZE, HP(e))) == CUDA_SUCCESS)
        SAY("range size = %zu", rs);
    CALL("unregister first", cuMemHostUnregister(e));
    CALL("unregister second", cuMemHostUnregister(e + 4 * 4096));

    /* e. read-only mapping */
    char *ro = m + 13 * region;
    mprotect(ro, region, PROT_READ);
    if (CALL("register PROT_READ memory, flags 0", cuMemHostRegister(ro, region, 0)) == CUDA_SUCCESS)
        CALL("  unregister", cuMemHostUnregister(ro));
    if (CALL("register PROT_READ memory, READ_ONLY", cuMemHostRegister(ro, region, CU_MEMHOSTREGISTER_READ_ONLY)) == CUDA_SUCCESS)
        CALL("  unregister", cuMemHostUnregister(ro));

    /* f. malloc'd and aligned_alloc'd memory */
    size_t mn = 100000;
    char *ml = malloc(mn);
    memset(ml, 0, mn);
    r = CALL("register malloc'd 100000", cuMemHostRegister(ml, mn, 0));
    if (r == CUDA_SUCCESS) {
        unsigned int mt;
        FILL(mt);
        if (CALL("  MEMORY_TYPE", cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, HP(ml))) == CUDA_SUCCESS)
            SAY("memory type = %u", mt);
        CALL("  unregister", cuMemHostUnregister(ml));
    }
    char *al = aligned_alloc(4096, 16 * 4096);
    memset(al, 0, 16 * 4096);
    r = CALL("register aligned_alloc'd 16 pages, DEVICEMAP", cuMemHostRegister(al, 16 * 4096, CU_MEMHOSTREGISTER_DEVICEMAP));
    if (r == CUDA_SUCCESS) {
        attrs("aligned_alloc'd registration", HP(al), al);
        CALL("  unregister", cuMemHostUnregister(al));
    }

    /* g. memory the driver already pinned */
    void *ah = NULL;
    MUST(cuMemAllocHost(&ah, 4096));
    CALL("register alloc-host memory", cuMemHostRegister(ah, 4096, 0));
    CALL("unregister alloc-host memory", cuMemHostUnregister(ah));
    CALL("free-host", cuMemFreeHost(ah));

    /* h. unmapped host memory */
    char *gone = m + 14 * region;
    munmap(gone, region);
    CALL("register munmap'd memory", cuMemHostRegister(gone, region, 0));

    /* i. munmap while registered */
    char *u = m + 15 * region;
    if (CALL("register then munmap", cuMemHostRegister(u, region, 0)) == CUDA_SUCCESS) {
        munmap(u, region);
        unsigned int mt;
        FILL(mt);
        CALL("  MEMORY_TYPE after munmap", cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, HP(u)));
        OUT(mt);
        CALL("  unregister after munmap", cuMemHostUnregister(u));
    }
}

static CUmemLocation loc(CUmemLocationType t, int id) {
    CUmemLocation l;
    l.type = t;
    l.id = id;
    return l;
}

static void range_attr(const char *what, CUmem_range_attribute a, CUdeviceptr p, size_t n) {
    int v;
    FILL(v);
    CUresult r = CALL(what, cuMemRangeGetAttribute(&v, sizeof v, a, p, n));
    if (r == CUDA_SUCCESS)
        SAY("value = %d", v);
    else
        OUT(v);
}

/* 4. cuMemAllocManaged, advice, prefetch, range attributes. */
static void managed(void) {
    init_primary(0, &cur_ctx);
    int v = -1;
    MUST(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 0));
    SAY("MANAGED_MEMORY = %d", v);
    MUST(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 0));
    SAY("CONCURRENT_MANAGED_ACCESS = %d", v);
    struct { const char *name; unsigned f; } fl[] = {
        {"GLOBAL", CU_MEM_ATTACH_GLOBAL}, {"HOST", CU_MEM_ATTACH_HOST}, {"0", 0},
        {"SINGLE", CU_MEM_ATTACH_SINGLE}, {"GLOBAL|HOST", 3}, {"0x8", 8},
    };
    for (unsigned i = 0; i < sizeof fl / sizeof fl[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "alloc-managed flags %s", fl[i].name);
        CUdeviceptr p;
        FILL(p);
        CUresult r = CALL(what, cuMemAllocManaged(&p, 65536, fl[i].f));
        PTR(p);
        if (r == CUDA_SUCCESS) {
            unsigned int im;
            FILL(im);
            if (CALL("  IS_MANAGED", cuPointerGetAttribute(&im, CU_POINTER_ATTRIBUTE_IS_MANAGED, p)) == CUDA_SUCCESS)
                SAY("is managed = %u", im);
            CALL("  mem-free", cuMemFree(p));
        }
    }
    CUdeviceptr p;
    FILL(p);
    CALL("alloc-managed size 0", cuMemAllocManaged(&p, 0, CU_MEM_ATTACH_GLOBAL));
    PTR(p);
    CALL("alloc-managed NULL out-param", cuMemAllocManaged(NULL, 4096, CU_MEM_ATTACH_GLOBAL));

    size_t n = 2u << 20;
    CUdeviceptr mp = 0;
    MUST(cuMemAllocManaged(&mp, n, CU_MEM_ATTACH_GLOBAL));
    char *h = (char *)(uintptr_t)mp;
    attrs("managed", mp, h);
    attrs("managed + 1 MiB", mp + (1u << 20), h + (1u << 20));
    pattern(h, n, 9);
    SAY("host write/read back ok: %d", is_pattern(h, n, 9));
    char *buf = malloc(n);
    memset(buf, 0, n);
    CALL("dtoh from managed", cuMemcpyDtoH(buf, mp, n));
    SAY("device sees host writes: %d", is_pattern(buf, n, 9));
    pattern(buf, n, 10);
    CALL("htod into managed", cuMemcpyHtoD(mp, buf, n));
    CALL("ctx-synchronize", cuCtxSynchronize());
    SAY("host sees copied data: %d", is_pattern(h, n, 10));
    CUdeviceptr d = 0;
    MUST(cuMemAlloc(&d, n));
    CALL("cuMemcpy managed -> device", cuMemcpy(d, mp, n));
    CALL("memset-d8 managed 0x5a", cuMemsetD8(mp, 0x5a, n));
    CALL("ctx-synchronize", cuCtxSynchronize());
    size_t good = 0;
    for (size_t i = 0; i < n; i++) good += h[i] == 0x5a;
    SAY("host sees memset bytes: %zu of %zu", good, n);
    CALL("cuMemcpy device -> managed", cuMemcpy(mp, d, n));
    CALL("ctx-synchronize", cuCtxSynchronize());
    SAY("host sees device copy: %d", is_pattern(h, n, 10));

    /* advice */
    CUmemLocation dev0 = loc(CU_MEM_LOCATION_TYPE_DEVICE, 0);
    CUmemLocation host = loc(CU_MEM_LOCATION_TYPE_HOST, 0);
    CUmemLocation dev99 = loc(CU_MEM_LOCATION_TYPE_DEVICE, 99);
    CUmemLocation none = loc(CU_MEM_LOCATION_TYPE_INVALID, 0);
    CUmemLocation numa0 = loc(CU_MEM_LOCATION_TYPE_HOST_NUMA, 0);
    range_attr("range READ_MOSTLY before advice", CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, mp, n);
    range_attr("range PREFERRED_LOCATION before advice", CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, mp, n);
    range_attr("range LAST_PREFETCH_LOCATION before prefetch", CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, mp, n);
    CALL("advise SET_READ_MOSTLY (device 0)", cuMemAdvise(mp, n, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0));
    range_attr("range READ_MOSTLY", CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, mp, n);
    range_attr("range READ_MOSTLY first half", CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, mp, n / 2);
    CALL("advise UNSET_READ_MOSTLY second half", cuMemAdvise(mp + n / 2, n / 2, CU_MEM_ADVISE_UNSET_READ_MOSTLY, dev0));
    range_attr("range READ_MOSTLY whole (mixed)", CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, mp, n);
    range_attr("range READ_MOSTLY first half", CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, mp, n / 2);
    CALL("advise SET_PREFERRED_LOCATION device 0", cuMemAdvise(mp, n, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, dev0));
    range_attr("range PREFERRED_LOCATION", CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, mp, n);
    range_attr("range PREFERRED_LOCATION_TYPE", CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, mp, n);
    range_attr("range PREFERRED_LOCATION_ID", CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID, mp, n);
    CALL("advise SET_PREFERRED_LOCATION host", cuMemAdvise(mp, n, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, host));
    range_attr("range PREFERRED_LOCATION", CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, mp, n);
    range_attr("range PREFERRED_LOCATION_TYPE", CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, mp, n);
    CALL("advise SET_PREFERRED_LOCATION host NUMA 0", cuMemAdvise(mp, n, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, numa0));
    range_attr("range PREFERRED_LOCATION_TYPE", CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, mp, n);
    CALL("advise SET_PREFERRED_LOCATION device 99", cuMemAdvise(mp, n, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, dev99));
    CALL("advise SET_PREFERRED_LOCATION type INVALID", cuMemAdvise(mp, n, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, none));
    CALL("advise UNSET_PREFERRED_LOCATION", cuMemAdvise(mp, n, CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, dev0));
    range_attr("range PREFERRED_LOCATION", CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, mp, n);
    CALL("advise SET_ACCESSED_BY device 0", cuMemAdvise(mp, n, CU_MEM_ADVISE_SET_ACCESSED_BY, dev0));
    int acc[4];
    memset(acc, 0xA5, sizeof acc);
    if (CALL("range ACCESSED_BY (4 ints)", cuMemRangeGetAttribute(acc, sizeof acc, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, mp, n)) == CUDA_SUCCESS)
        SAY("accessed by = %d %d %d %d", acc[0], acc[1], acc[2], acc[3]);
    CALL("advise SET_ACCESSED_BY host", cuMemAdvise(mp, n, CU_MEM_ADVISE_SET_ACCESSED_BY, host));
    CALL("advise UNSET_ACCESSED_BY device 0", cuMemAdvise(mp, n, CU_MEM_ADVISE_UNSET_ACCESSED_BY, dev0));
    CALL("advise advice 0 (invalid)", cuMemAdvise(mp, n, (CUmem_advise)0, dev0));
    CALL("advise advice 99 (invalid)", cuMemAdvise(mp, n, (CUmem_advise)99, dev0));
    CALL("advise count 0", cuMemAdvise(mp, 0, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0));
    CALL("advise unaligned start and count", cuMemAdvise(mp + 100, 1000, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0));
    CALL("advise past the end", cuMemAdvise(mp, 2 * n, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0));
    CALL("advise on cuMemAlloc memory", cuMemAdvise(d, n, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0));
    CALL("advise on malloc'd memory", cuMemAdvise(HP(buf), 4096, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0));
    CALL("advise on address 0", cuMemAdvise(0, 4096, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0));

    /* range attributes, bad input */
    int small = 0;
    CALL("range READ_MOSTLY dataSize 2", cuMemRangeGetAttribute(&small, 2, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, mp, n));
    CALL("range READ_MOSTLY NULL data", cuMemRangeGetAttribute(NULL, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, mp, n));
    range_attr("range attribute 99", (CUmem_range_attribute)99, mp, n);
    range_attr("range READ_MOSTLY count 0", CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, mp, 0);
    range_attr("range READ_MOSTLY on cuMemAlloc memory", CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, d, n);

    /* prefetch */
    CALL("prefetch to device 0", cuMemPrefetchAsync(mp, n, dev0, 0, NULL));
    CALL("ctx-synchronize", cuCtxSynchronize());
    range_attr("range LAST_PREFETCH_LOCATION", CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, mp, n);
    range_attr("range LAST_PREFETCH_LOCATION_TYPE", CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE, mp, n);
    range_attr("range LAST_PREFETCH_LOCATION_ID", CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID, mp, n);
    CALL("prefetch first half to host", cuMemPrefetchAsync(mp, n / 2, host, 0, NULL));
    CALL("ctx-synchronize", cuCtxSynchronize());
    range_attr("range LAST_PREFETCH_LOCATION first half", CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, mp, n / 2);
    range_attr("range LAST_PREFETCH_LOCATION whole (mixed)", CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, mp, n);
    range_attr("range LAST_PREFETCH_LOCATION_TYPE first half", CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE, mp, n / 2);
    SAY("data intact after prefetches: %d", is_pattern(h, n, 10));
    CALL("prefetch to host NUMA 0", cuMemPrefetchAsync(mp, n, numa0, 0, NULL));
    CALL("prefetch to device 99", cuMemPrefetchAsync(mp, n, dev99, 0, NULL));
    CALL("prefetch to type INVALID", cuMemPrefetchAsync(mp, n, none, 0, NULL));
    CALL("prefetch flags 1", cuMemPrefetchAsync(mp, n, dev0, 1, NULL));
    CALL("prefetch count 0", cuMemPrefetchAsync(mp, 0, dev0, 0, NULL));
    CALL("prefetch past the end", cuMemPrefetchAsync(mp, 2 * n, dev0, 0, NULL));
    CALL("prefetch cuMemAlloc memory", cuMemPrefetchAsync(d, n, dev0, 0, NULL));
    CUstream s = NULL;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CALL("prefetch on a created stream", cuMemPrefetchAsync(mp, n, dev0, 0, s));
    CALL("stream-synchronize", cuStreamSynchronize(s));
    CALL("ctx-synchronize", cuCtxSynchronize());

    CALL("mem-free-host of managed", cuMemFreeHost(h));
    CALL("mem-free interior of managed", cuMemFree(mp + 4096));
    CALL("mem-free managed", cuMemFree(mp));
    CALL("mem-free managed again", cuMemFree(mp));
    unsigned int im;
    FILL(im);
    CALL("IS_MANAGED after free", cuPointerGetAttribute(&im, CU_POINTER_ATTRIBUTE_IS_MANAGED, mp));
    OUT(im);
}

/* 5. cuMemAllocPitch, 2D memsets, cuMemcpy2D. */
static void pitch_2d(void) {
    init_primary(0, &cur_ctx);
    size_t widths[] = {1, 100, 512, 513, 4096};
    size_t heights[] = {1, 7};
    unsigned elems[] = {4, 8, 16};
    for (unsigned wi = 0; wi < 5; wi++)
        for (unsigned hi = 0; hi < 2; hi++)
            for (unsigned ei = 0; ei < 3; ei++) {
                char what[96];
                snprintf(what, sizeof what, "alloc-pitch width %zu height %zu elem %u", widths[wi], heights[hi], elems[ei]);
                CUdeviceptr d;
                size_t pitch;
                FILL(d);
                FILL(pitch);
                CUresult r = CALL(what, cuMemAllocPitch(&d, &pitch, widths[wi], heights[hi], elems[ei]));
                if (r == CUDA_SUCCESS) {
                    SAY("pitch = %zu", pitch);
                    size_t rs;
                    FILL(rs);
                    if (cuPointerGetAttribute(&rs, CU_POINTER_ATTRIBUTE_RANGE_SIZE, d) == CUDA_SUCCESS)
                        SAY("range size = %zu", rs);
                    cuMemFree(d);
                } else {
                    PTR(d);
                    OUT(pitch);
                }
            }
    struct { const char *name; size_t w, h; unsigned e; } bad[] = {
        {"elem 3", 100, 4, 3}, {"elem 32", 100, 4, 32}, {"elem 0", 100, 4, 0}, {"elem 1", 100, 4, 1},
        {"elem 2", 100, 4, 2}, {"width 0", 0, 4, 4}, {"height 0", 100, 0, 4}, {"width 1 GiB", 1u << 30, 2, 4},
    };
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char what[96];
        snprintf(what, sizeof what, "alloc-pitch %s", bad[i].name);
        CUdeviceptr d;
        size_t pitch;
        FILL(d);
        FILL(pitch);
        if (CALL(what, cuMemAllocPitch(&d, &pitch, bad[i].w, bad[i].h, bad[i].e)) == CUDA_SUCCESS) {
            SAY("pitch = %zu", pitch);
            cuMemFree(d);
        } else {
            PTR(d);
            OUT(pitch);
        }
    }
    size_t pitch = 0;
    CALL("alloc-pitch NULL dptr", cuMemAllocPitch(NULL, &pitch, 100, 4, 4));
    CUdeviceptr dn;
    CALL("alloc-pitch NULL pitch", cuMemAllocPitch(&dn, NULL, 100, 4, 4));

    /* 2D memsets over a width-513 height-8 allocation */
    const size_t W = 513, H = 8;
    CUdeviceptr d = 0;
    MUST(cuMemAllocPitch(&d, &pitch, W, H, 4));
    SAY("working pitch = %zu", pitch);
    MUST(cuMemsetD8(d, 0, pitch * H));
    CALL("memset-d2d8 0x11 100 x 4", cuMemsetD2D8(d, pitch, 0x11, 100, 4));
    CALL("memset-d2d16 0x2222 50 x 2 at row 4", cuMemsetD2D16(d + pitch * 4, pitch, 0x2222, 50, 2));
    CALL("memset-d2d32 0x33333333 25 x 2 at row 6", cuMemsetD2D32(d + pitch * 6, pitch, 0x33333333, 25, 2));
    unsigned char *hb = malloc(pitch * H);
    CALL("dtoh", cuMemcpyDtoH(hb, d, pitch * H));
    for (size_t y = 0; y < H; y++) {
        size_t nz = 0;
        for (size_t x = 0; x < W; x++) nz += hb[y * pitch + x] != 0;
        SAY("row %zu: nonzero bytes %zu, first byte 0x%02x, checksum 0x%08x", y, nz, hb[y * pitch], checksum(hb + y * pitch, W));
    }
    CALL("memset-d2d8 pitch < width", cuMemsetD2D8(d, 10, 0x44, 100, 2));
    CALL("memset-d2d16 odd pitch", cuMemsetD2D16(d, pitch + 1, 0x4444, 10, 2));
    CALL("memset-d2d16 odd address", cuMemsetD2D16(d + 1, pitch, 0x4444, 10, 2));
    CALL("memset-d2d32 pitch not a multiple of 4", cuMemsetD2D32(d, pitch + 2, 0x44444444, 10, 2));
    CALL("memset-d2d32 unaligned address", cuMemsetD2D32(d + 2, pitch, 0x44444444, 10, 2));
    CALL("memset-d2d8 width 0", cuMemsetD2D8(d, pitch, 0x44, 0, 2));
    CALL("memset-d2d8 height 0", cuMemsetD2D8(d, pitch, 0x44, 10, 0));
    CALL("memset-d2d8 pitch 0 height 1", cuMemsetD2D8(d, 0, 0x44, 10, 1));
    CALL("dtoh", cuMemcpyDtoH(hb, d, pitch * H));
    SAY("after the bad memsets: checksum of rows 0-7 = 0x%08x", checksum(hb, pitch * H));

    /* cuMemcpy2D */
    size_t sp = 600, dp2 = 520;
    unsigned char *src = calloc(sp, H + 100), *dst = malloc(dp2 * H);
    pattern(src, sp * H, 4);
    memset(dst, 0, dp2 * H);
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = src;
    c.srcPitch = sp;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = d;
    c.dstPitch = pitch;
    c.WidthInBytes = W;
    c.Height = H;
    CALL("2d host(pitch 600) -> device", cuMemcpy2D(&c));
    CUDA_MEMCPY2D b;
    memset(&b, 0, sizeof b);
    b.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    b.srcDevice = d;
    b.srcPitch = pitch;
    b.dstMemoryType = CU_MEMORYTYPE_HOST;
    b.dstHost = dst;
    b.dstPitch = dp2;
    b.WidthInBytes = W;
    b.Height = H;
    CALL("2d device -> host(pitch 520)", cuMemcpy2D(&b));
    int ok = 1;
    for (size_t y = 0; y < H; y++) ok &= memcmp(src + y * sp, dst + y * dp2, W) == 0;
    SAY("2D round trip ok: %d; dst padding untouched: %d", ok, dst[W] == 0 && dst[dp2 - 1] == 0);
    CUDA_MEMCPY2D x = b;
    x.srcXInBytes = 3;
    x.srcY = 1;
    x.dstXInBytes = 5;
    x.WidthInBytes = 100;
    x.Height = 2;
    memset(dst, 0, dp2 * H);
    CALL("2d with srcX 3 srcY 1 dstX 5", cuMemcpy2D(&x));
    SAY("offset copy ok: %d", memcmp(dst + 5, src + sp + 3, 100) == 0 && memcmp(dst + dp2 + 5, src + 2 * sp + 3, 100) == 0);
    x = c;
    x.srcPitch = 100;
    CALL("2d src pitch < width", cuMemcpy2D(&x));
    x = b;
    x.dstPitch = 100;
    CALL("2d dst pitch < width", cuMemcpy2D(&x));
    x = c;
    x.WidthInBytes = 0;
    CALL("2d width 0", cuMemcpy2D(&x));
    x = c;
    x.Height = 0;
    CALL("2d height 0", cuMemcpy2D(&x));
    x = c;
    x.srcMemoryType = (CUmemorytype)0;
    CALL("2d src memory type 0", cuMemcpy2D(&x));
    x = c;
    x.dstMemoryType = (CUmemorytype)7;
    CALL("2d dst memory type 7", cuMemcpy2D(&x));
    x = c;
    x.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
    x.srcDevice = HP(src);
    CALL("2d UNIFIED src (pageable host)", cuMemcpy2D(&x));
    x = c;
    x.dstDevice = d + 1;
    x.WidthInBytes = 100;
    x.Height = 2;
    CALL("2d unaligned device dst", cuMemcpy2D(&x));
    CALL("2d-unaligned same", cuMemcpy2DUnaligned(&x));
    CALL("2d NULL", cuMemcpy2D(NULL));
    CUDA_MEMCPY2D hh;
    memset(&hh, 0, sizeof hh);
    hh.srcMemoryType = CU_MEMORYTYPE_HOST;
    hh.srcHost = src;
    hh.srcPitch = sp;
    hh.dstMemoryType = CU_MEMORYTYPE_HOST;
    hh.dstHost = dst;
    hh.dstPitch = dp2;
    hh.WidthInBytes = W;
    hh.Height = H;
    memset(dst, 0, dp2 * H);
    CALL("2d host -> host", cuMemcpy2D(&hh));
    ok = 1;
    for (size_t y = 0; y < H; y++) ok &= memcmp(src + y * sp, dst + y * dp2, W) == 0;
    SAY("host -> host ok: %d", ok);
    CUdeviceptr d2 = 0;
    size_t pitch2 = 0;
    MUST(cuMemAllocPitch(&d2, &pitch2, W, H, 8));
    CUDA_MEMCPY2D dd;
    memset(&dd, 0, sizeof dd);
    dd.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    dd.srcDevice = d;
    dd.srcPitch = pitch;
    dd.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    dd.dstDevice = d2;
    dd.dstPitch = pitch2;
    dd.WidthInBytes = W;
    dd.Height = H;
    CALL("2d device -> device", cuMemcpy2D(&dd));
    b.srcDevice = d2;
    b.srcPitch = pitch2;
    memset(dst, 0, dp2 * H);
    CALL("2d device -> host", cuMemcpy2D(&b));
    ok = 1;
    for (size_t y = 0; y < H; y++) ok &= memcmp(src + y * sp, dst + y * dp2, W) == 0;
    SAY("device -> device ok: %d", ok);
    CALL("memset-d2d8 past the end", cuMemsetD2D8(d, pitch, 0x44, 10, H + 100));
    x = c;
    x.Height = H + 100;
    CALL("2d past the end of the device allocation", cuMemcpy2D(&x));
    CALL("mem-free", cuMemFree(d));
    CALL("mem-free", cuMemFree(d2));
}

/* 6. cuMemcpyPeer within one context / one GPU. */
static void peer_copy_one_gpu(void) {
    init_primary(0, &cur_ctx);
    int can = -1;
    CALL("can-access-peer 0 -> 0", cuDeviceCanAccessPeer(&can, 0, 0));
    SAY("can access = %d", can);
    CALL("ctx-enable-peer-access to itself", cuCtxEnablePeerAccess(cur_ctx, 0));
    size_t n = 1u << 20;
    CUdeviceptr a = 0, b = 0;
    MUST(cuMemAlloc(&a, n));
    MUST(cuMemAlloc(&b, n));
    unsigned char *h = malloc(n);
    pattern(h, n, 6);
    MUST(cuMemcpyHtoD(a, h, n));
    MUST(cuMemsetD8(b, 0, n));
    CUcontext ctx = cur_ctx;
    CALL("peer a -> b, same context", cuMemcpyPeer(b, ctx, a, ctx, n));
    memset(h, 0, n);
    CALL("dtoh b", cuMemcpyDtoH(h, b, n));
    SAY("peer copy ok: %d", is_pattern(h, n, 6));
    MUST(cuMemsetD8(b, 0, n));
    CALL("peer NULL dst context", cuMemcpyPeer(b, NULL, a, ctx, n));
    CALL("peer NULL src context", cuMemcpyPeer(b, ctx, a, NULL, n));
    CALL("peer both contexts NULL", cuMemcpyPeer(b, NULL, a, NULL, n));
    memset(h, 0, n);
    CALL("dtoh b", cuMemcpyDtoH(h, b, n));
    SAY("b after NULL-context copies: first byte 0x%02x, checksum 0x%08x", h[0], checksum(h, n));
    CALL("peer size 0", cuMemcpyPeer(b, ctx, a, ctx, 0));
    CALL("peer overlapping same buffer", cuMemcpyPeer(a + 16, ctx, a, ctx, 4096));
    MUST(cuMemsetD8(b, 0, n));
    CALL("peer-async stream 0", cuMemcpyPeerAsync(b, ctx, a, ctx, n, NULL));
    CALL("ctx-synchronize", cuCtxSynchronize());
    memset(h, 0, n);
    CALL("dtoh b", cuMemcpyDtoH(h, b, n));
    SAY("peer-async copy ok: %d", is_pattern(h, n, 6));
    CUstream s = NULL;
    MUST(cuStreamCreate(&s, 0));
    MUST(cuMemsetD8(b, 0, n));
    CALL("peer-async created stream", cuMemcpyPeerAsync(b, ctx, a, ctx, n, s));
    CALL("stream-synchronize", cuStreamSynchronize(s));
    memset(h, 0, n);
    CALL("dtoh b", cuMemcpyDtoH(h, b, n));
    SAY("copy ok: %d, checksum 0x%08x", is_pattern(h, n, 6), checksum(h, n));
    CALL("peer-async NULL dst context", cuMemcpyPeerAsync(b, NULL, a, ctx, n, s));
    CALL("peer-async size 0", cuMemcpyPeerAsync(b, ctx, a, ctx, 0, s));
    CALL("stream-synchronize", cuStreamSynchronize(s));
    MUST(cuMemsetD8(b, 0, n));
    CALL("dtod a -> b", cuMemcpyDtoD(b, a, n));
    memset(h, 0, n);
    CALL("dtoh b", cuMemcpyDtoH(h, b, n));
    SAY("copy ok: %d, checksum 0x%08x", is_pattern(h, n, 6), checksum(h, n));
    CALL("dtod size 0", cuMemcpyDtoD(b, a, 0));
    CALL("mem-free b", cuMemFree(b));
    CALL("peer from a freed buffer", cuMemcpyPeer(a, ctx, b, ctx, 4096));
    CALL("dtod from a freed buffer", cuMemcpyDtoD(a, b, 4096));
    CALL("peer past the end", cuMemcpyPeer(a + n - 16, ctx, a, ctx, 4096));
    CALL("dtod past the end", cuMemcpyDtoD(a + n - 16, a, 4096));
    CALL("stream-destroy", cuStreamDestroy(s));
    CALL("mem-free a", cuMemFree(a));
}

/* 7. Async memsets and 2D async copies on a stream. */
/* Memsets on page-locked host memory named by its device address (numba-cuda's
 * test_host_alloc sets mapped host memory so); past the range's end. Recorded on the H200
 * (section memset-page-locked, matched). */
static void memset_page_locked(void) {
    init_primary(0, &cur_ctx);
    void *h = NULL;
    MUST(cuMemHostAlloc(&h, 4096, CU_MEMHOSTALLOC_DEVICEMAP));
    CUdeviceptr d = 0;
    MUST(cuMemHostGetDevicePointer(&d, h, 0));
    memset(h, 0, 4096);
    CALL("memset-d8 0xab x 10 at 1", cuMemsetD8(d + 1, 0xab, 10));
    CALL("memset-d32 0x01020304 x 4 at 64", cuMemsetD32(d + 64, 0x01020304, 4));
    CALL("memset-d16-async 0xbeef x 3 at 128", cuMemsetD16Async(d + 128, 0xbeef, 3, NULL));
    CALL("ctx-synchronize", cuCtxSynchronize());
    unsigned char *b = h;
    SAY("bytes 0, 1, 10, 11 = %02x %02x %02x %02x; word at 64 = 0x%08x; bytes 128, 133, 134 = %02x %02x %02x",
        b[0], b[1], b[10], b[11], *(uint32_t *)(b + 64), b[128], b[133], b[134]);
    CALL("memset-d8 past the range's end", cuMemsetD8(d + 4090, 0xcd, 10));
    CALL("ctx-synchronize", cuCtxSynchronize());
    SAY("byte 4090 = %02x", b[4090]);
    MUST(cuMemFreeHost(h));
}

static void memset_async_and_2d_async(void) {
    init_primary(0, &cur_ctx);
    CUstream s = NULL;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    size_t n = 1u << 20;
    CUdeviceptr d = 0;
    MUST(cuMemAlloc(&d, n));
    unsigned char *h = malloc(n);
    CALL("memset-d8-async 0xab whole", cuMemsetD8Async(d, 0xab, n, s));
    CALL("memset-d32-async 0x01020304 x 256 at 4096", cuMemsetD32Async(d + 4096, 0x01020304, 256, s));
    CALL("memset-d16-async 0xbeef x 10 at 8192", cuMemsetD16Async(d + 8192, 0xbeef, 10, s));
    CALL("memset-d32-async unaligned address", cuMemsetD32Async(d + 2, 0, 4, s));
    CALL("memset-d16-async odd address", cuMemsetD16Async(d + 1, 0, 4, s));
    CALL("memset-d8-async size 0", cuMemsetD8Async(d, 0, 0, s));
    CALL("memset-d8-async on stream 0", cuMemsetD8Async(d + 12288, 0x77, 16, NULL));
    CALL("stream-synchronize", cuStreamSynchronize(s));
    CALL("ctx-synchronize", cuCtxSynchronize());
    memset(h, 0, n);
    CALL("dtoh", cuMemcpyDtoH(h, d, n));
    uint32_t w;
    memcpy(&w, h + 4096, 4);
    SAY("byte 0 = 0x%02x, word at 4096 = 0x%08x, byte at 4096+1024 = 0x%02x, byte 8192 = 0x%02x, byte 12288 = 0x%02x, checksum 0x%08x",
        h[0], w, h[4096 + 1024], h[8192], h[12288], checksum(h, n));

    CUdeviceptr p = 0;
    size_t pitch = 0;
    MUST(cuMemAllocPitch(&p, &pitch, 256, 16, 4));
    MUST(cuMemsetD8(p, 0, pitch * 16));
    CALL("memset-d2d32-async 0xdeadbeef 16 x 8", cuMemsetD2D32Async(p, pitch, 0xdeadbeef, 16, 8, s));
    CALL("memset-d2d8-async 0x5c 10 x 2 at row 10", cuMemsetD2D8Async(p + 10 * pitch, pitch, 0x5c, 10, 2, s));
    CALL("memset-d2d16-async 0x1234 8 x 2 at row 12", cuMemsetD2D16Async(p + 12 * pitch, pitch, 0x1234, 8, 2, s));
    CALL("memset-d2d32-async pitch < width", cuMemsetD2D32Async(p, 16, 0, 16, 2, s));
    CALL("memset-d2d32-async unaligned pitch", cuMemsetD2D32Async(p, pitch + 2, 0, 4, 2, s));
    CALL("stream-synchronize", cuStreamSynchronize(s));
    unsigned char *hp = malloc(pitch * 16);
    CALL("dtoh", cuMemcpyDtoH(hp, p, pitch * 16));
    for (size_t y = 0; y < 16; y++)
        SAY("row %zu: first word 0x%08x, checksum of 256 bytes 0x%08x", y, *(uint32_t *)(hp + y * pitch), checksum(hp + y * pitch, 256));

    /* 2D async copies: pageable and pinned host memory */
    size_t sp = 300;
    unsigned char *src = malloc(sp * 16);
    pattern(src, sp * 16, 8);
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = src;
    c.srcPitch = sp;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = p;
    c.dstPitch = pitch;
    c.WidthInBytes = 256;
    c.Height = 16;
    CALL("2d-async pageable host -> device", cuMemcpy2DAsync(&c, s));
    void *pin = NULL;
    MUST(cuMemAllocHost(&pin, 256 * 16));
    memset(pin, 0, 256 * 16);
    CUDA_MEMCPY2D b;
    memset(&b, 0, sizeof b);
    b.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    b.srcDevice = p;
    b.srcPitch = pitch;
    b.dstMemoryType = CU_MEMORYTYPE_HOST;
    b.dstHost = pin;
    b.dstPitch = 256;
    b.WidthInBytes = 256;
    b.Height = 16;
    CALL("2d-async device -> pinned host (pitch 256)", cuMemcpy2DAsync(&b, s));
    CALL("stream-synchronize", cuStreamSynchronize(s));
    int ok = 1;
    for (size_t y = 0; y < 16; y++) ok &= memcmp(src + y * sp, (char *)pin + y * 256, 256) == 0;
    SAY("2D async round trip ok: %d", ok);
    CUDA_MEMCPY2D x = c;
    x.srcPitch = 10;
    CALL("2d-async src pitch < width", cuMemcpy2DAsync(&x, s));
    x = c;
    x.Height = 0;
    CALL("2d-async height 0", cuMemcpy2DAsync(&x, s));
    CALL("2d-async on stream 0", cuMemcpy2DAsync(&b, NULL));
    CALL("2d-async NULL", cuMemcpy2DAsync(NULL, s));
    CALL("stream-synchronize", cuStreamSynchronize(s));
    CALL("ctx-synchronize", cuCtxSynchronize());
    CALL("stream-query", cuStreamQuery(s));
    CALL("memset-d8-async past the end", cuMemsetD8Async(d + n - 16, 0, 4096, s));
    CALL("stream-synchronize after it", cuStreamSynchronize(s));
    CALL("free-host", cuMemFreeHost(pin));
    CALL("mem-free", cuMemFree(p));
    CALL("mem-free", cuMemFree(d));
    CALL("stream-destroy", cuStreamDestroy(s));
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    section("alloc-host", alloc_host);
    section("bad-host-pointers", bad_host_pointers);
    section("host-alloc-flags", host_alloc_flags);
    section("host-register", host_register);
    section("managed", managed);
    section("pitch-2d", pitch_2d);
    section("peer-copy-one-gpu", peer_copy_one_gpu);
    section("memset-async-and-2d-async", memset_async_and_2d_async);
    section("memset-page-locked", memset_page_locked);
    return 0;
}
