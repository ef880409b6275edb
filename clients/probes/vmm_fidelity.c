/* Where the VMM model may still differ from a real driver (issue 13): handles released
 * while mapped, access across holes, out-parameters on failure, reservation placement,
 * cuMemGetAddressRange on VMM memory, HOST-location allocations. */
#include "probe.h"
#include <fcntl.h>
#include <setjmp.h>


/* A handle released while still mapped: what is it still good for? */
static void released_while_mapped(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmemAllocationProp p = prop_dev(0, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    CUdeviceptr va = 0, vb = 0;
    CUmemGenericAllocationHandle h = 0, h2 = 0;
    MUST(cuMemAddressReserve(&va, 2 * g, 0, 0, 0));
    MUST(cuMemAddressReserve(&vb, 2 * g, 0, 0, 0));
    MUST(cuMemCreate(&h, 2 * g, &p, 0));
    MUST(cuMemMap(va, 2 * g, 0, h, 0));
    CUmemAccessDesc d = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    MUST(cuMemSetAccess(va, 2 * g, &d, 1));
    CALL("release h (mapped at va)", cuMemRelease(h));
    CUmemAllocationProp got;
    FILL(got);
    CALL("props h after release", cuMemGetAllocationPropertiesFromHandle(&got, h));
    int fd = -1;
    CALL("export h after release", cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    SAY("fd %s", fd >= 0 ? "is an fd" : "untouched");
    CALL("map h at vb after release", cuMemMap(vb, 2 * g, 0, h, 0));
    FILL(h2);
    CALL("retain va", cuMemRetainAllocationHandle(&h2, (void *)va));
    SAY("retained handle %s the released one", h2 == h ? "equals" : "differs from");
    CALL("address-free va while mapped", cuMemAddressFree(va, 2 * g));
    CALL("unmap va", cuMemUnmap(va, 2 * g));
    CALL("release retained", cuMemRelease(h2));
    CALL("address-free va", cuMemAddressFree(va, 2 * g));
}

/* cuMemSetAccess / cuMemGetAccess over ranges that cross unmapped holes. */
static void access_across_holes(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmemAllocationProp p = prop_dev(0, 0);
    CUdeviceptr va = 0;
    CUmemGenericAllocationHandle a, b;
    MUST(cuMemAddressReserve(&va, 8 * g, 0, 0, 0));
    MUST(cuMemCreate(&a, 2 * g, &p, 0));
    MUST(cuMemCreate(&b, 2 * g, &p, 0));
    MUST(cuMemMap(va, 2 * g, 0, a, 0));           /* [0, 2g) */
    MUST(cuMemMap(va + 4 * g, 2 * g, 0, b, 0));   /* [4g, 6g), hole [2g, 4g) */
    CUmemAccessDesc rw = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CUmemAccessDesc ro = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_READ);
    CUmemLocation loc = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    unsigned long long f;
    CALL("set-access [0,6g) rw across the hole", cuMemSetAccess(va, 6 * g, &rw, 1));
    FILL(f); CALL("get-access 0", cuMemGetAccess(&f, &loc, va)); OUT(f);
    FILL(f); CALL("get-access 4g", cuMemGetAccess(&f, &loc, va + 4 * g)); OUT(f);
    FILL(f); CALL("get-access 2g (hole)", cuMemGetAccess(&f, &loc, va + 2 * g)); OUT(f);
    CALL("set-access [0,2g) rw", cuMemSetAccess(va, 2 * g, &rw, 1));
    CALL("set-access [0,6g) ro across the hole", cuMemSetAccess(va, 6 * g, &ro, 1));
    FILL(f); CALL("get-access 0", cuMemGetAccess(&f, &loc, va)); OUT(f);
    FILL(f); CALL("get-access 4g", cuMemGetAccess(&f, &loc, va + 4 * g)); OUT(f);
    CALL("set-access [2g,6g) starting in the hole", cuMemSetAccess(va + 2 * g, 4 * g, &rw, 1));
    FILL(f); CALL("get-access 4g", cuMemGetAccess(&f, &loc, va + 4 * g)); OUT(f);
    CALL("set-access [4g,8g) ending in a hole", cuMemSetAccess(va + 4 * g, 4 * g, &rw, 1));
    FILL(f); CALL("get-access 4g", cuMemGetAccess(&f, &loc, va + 4 * g)); OUT(f);
    CALL("set-access [2g,4g) only the hole", cuMemSetAccess(va + 2 * g, 2 * g, &rw, 1));
    CALL("set-access [4g,6g) rw", cuMemSetAccess(va + 4 * g, 2 * g, &rw, 1));
    FILL(f); CALL("get-access 4g", cuMemGetAccess(&f, &loc, va + 4 * g)); OUT(f);
    FILL(f); CALL("get-access 6g-1", cuMemGetAccess(&f, &loc, va + 6 * g - 1)); OUT(f);
    FILL(f); CALL("get-access 0 after", cuMemGetAccess(&f, &loc, va)); OUT(f);
    CALL("unmap [0,6g) across the hole", cuMemUnmap(va, 6 * g));
    FILL(f); CALL("get-access 4g after unmap", cuMemGetAccess(&f, &loc, va + 4 * g)); OUT(f);
    CALL("release a", cuMemRelease(a));
    CALL("release b", cuMemRelease(b));
    CALL("address-free", cuMemAddressFree(va, 8 * g));
}

/* What failing calls write to their out-parameters. */
static void out_params_on_failure(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmemAllocationProp p = prop_dev(0, 0);
    CUdeviceptr va = 0;
    CUmemGenericAllocationHandle h;
    MUST(cuMemAddressReserve(&va, 4 * g, 0, 0, 0));
    MUST(cuMemCreate(&h, 2 * g, &p, 0));
    MUST(cuMemMap(va, 2 * g, 0, h, 0));
    CUmemLocation loc = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    unsigned long long flags;
    FILL(flags); CALL("get-access unmapped", cuMemGetAccess(&flags, &loc, va + 2 * g)); OUT(flags);
    FILL(flags); CALL("get-access mapped, no access set", cuMemGetAccess(&flags, &loc, va)); OUT(flags);
    CUmemLocation badloc = {CU_MEM_LOCATION_TYPE_DEVICE, 99};
    FILL(flags); CALL("get-access bad device", cuMemGetAccess(&flags, &badloc, va)); OUT(flags);
    CUdeviceptr base; size_t size;
    FILL(base); FILL(size); CALL("address-range vmm", cuMemGetAddressRange(&base, &size, va)); OUT(base); OUT(size);
    FILL(base); FILL(size); CALL("address-range 0x1000", cuMemGetAddressRange(&base, &size, 0x1000)); OUT(base); OUT(size);
    unsigned int mt;
    FILL(mt); CALL("pointer-attribute MEMORY_TYPE 0x1000", cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, 0x1000)); OUT(mt);
    int ord;
    FILL(ord); CALL("pointer-attribute DEVICE_ORDINAL 0x1000", cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, 0x1000)); OUT(ord);
    CUdeviceptr start;
    FILL(start); CALL("pointer-attribute RANGE_START unmapped vmm", cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, va + 2 * g)); OUT(start);
    CUmemAllocationProp got;
    FILL(got); CALL("props handle 0", cuMemGetAllocationPropertiesFromHandle(&got, 0)); OUT(got.type); OUT(got.location);
    CUdeviceptr r;
    FILL(r); CALL("reserve size 0", cuMemAddressReserve(&r, 0, 0, 0, 0)); OUT(r);
    FILL(r); CALL("reserve unaligned size", cuMemAddressReserve(&r, 4096, 0, 0, 0)); OUT(r);
    FILL(r); CALL("reserve align 3", cuMemAddressReserve(&r, g, 3, 0, 0)); OUT(r);
    CUmemGenericAllocationHandle nh;
    FILL(nh); CALL("create size 0", cuMemCreate(&nh, 0, &p, 0)); OUT(nh);
    FILL(nh); CALL("create unaligned", cuMemCreate(&nh, 4096, &p, 0)); OUT(nh);
    CUmemAllocationProp bad = prop_dev(99, 0);
    FILL(nh); CALL("create bad device", cuMemCreate(&nh, g, &bad, 0)); OUT(nh);
    FILL(nh); CALL("create huge", cuMemCreate(&nh, (size_t)1 << 50, &p, 0)); OUT(nh);
    FILL(nh); CALL("retain unmapped", cuMemRetainAllocationHandle(&nh, (void *)(va + 2 * g))); OUT(nh);
    FILL(nh); CALL("retain 0x1000", cuMemRetainAllocationHandle(&nh, (void *)0x1000)); OUT(nh);
    int fd;
    FILL(fd); CALL("export non-exportable", cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)); OUT(fd);
    FILL(nh); CALL("import /dev/null fd", cuMemImportFromShareableHandle(&nh, (void *)(intptr_t)open("/dev/null", 0), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)); OUT(nh);
    FILL(nh); CALL("import fd -1", cuMemImportFromShareableHandle(&nh, (void *)(intptr_t)-1, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)); OUT(nh);
    size_t gran;
    CUmemAllocationProp badtype = prop_dev(0, 0);
    badtype.type = (CUmemAllocationType)7;
    FILL(gran); CALL("granularity bad type", cuMemGetAllocationGranularity(&gran, &badtype, CU_MEM_ALLOC_GRANULARITY_MINIMUM)); OUT(gran);
    FILL(gran); CALL("granularity bad option", cuMemGetAllocationGranularity(&gran, &p, (CUmemAllocationGranularity_flags)5)); OUT(gran);
    CUdevice dev;
    FILL(dev); CALL("device-get 99", cuDeviceGet(&dev, 99)); OUT(dev);
    int attr;
    FILL(attr); CALL("attribute 9999", cuDeviceGetAttribute(&attr, (CUdevice_attribute)9999, 0)); OUT(attr);
    FILL(attr); CALL("attribute bad device", cuDeviceGetAttribute(&attr, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 99)); OUT(attr);
    CUdeviceptr dp;
    FILL(dp); CALL("mem-alloc 0", cuMemAlloc(&dp, 0)); OUT(dp);
    FILL(dp); CALL("mem-alloc huge", cuMemAlloc(&dp, (size_t)1 << 50)); OUT(dp);
    size_t fr, tot;
    CUcontext none = NULL;
    MUST(cuCtxSetCurrent(NULL));
    FILL(fr); FILL(tot); CALL("mem-info without context", cuMemGetInfo(&fr, &tot)); OUT(fr); OUT(tot);
    CUcontext cur;
    FILL(cur); CALL("ctx-get-current none", cuCtxGetCurrent(&cur)); OUT(cur);
    FILL(dev); CALL("ctx-get-device none", cuCtxGetDevice(&dev)); OUT(dev);
    FILL(cur); CALL("ctx-pop empty", cuCtxPopCurrent(&cur)); OUT(cur);
    unsigned int cf;
    FILL(cf); CALL("ctx-get-flags none", cuCtxGetFlags(&cf)); OUT(cf);
    (void)none;
    MUST(cuCtxSetCurrent(ctx));
    unsigned long long ver;
    FILL(ver); CALL("ctx-get-api-version null ctx->current", cuCtxGetApiVersion(NULL, (unsigned int *)&ver)); OUT(ver);
    CUstream s;
    FILL(s); CALL("stream-create bad flags", cuStreamCreate(&s, 0x80)); OUT(s);
    CUevent e;
    FILL(e); CALL("event-create bad flags", cuEventCreate(&e, 0x80)); OUT(e);
    void *fn; CUdriverProcAddressQueryResult st;
    FILL(fn); FILL(st); CALL("proc-address unknown", cuGetProcAddress("cuNoSuchThing", &fn, 12000, 0, &st)); OUT(fn); OUT(st);
    FILL(fn); FILL(st); CALL("proc-address version 0", cuGetProcAddress("cuMemMap", &fn, 0, 0, &st)); OUT(fn); OUT(st);
    FILL(fn); FILL(st); CALL("proc-address version 99999", cuGetProcAddress("cuMemMap", &fn, 99999, 0, &st)); OUT(fn); OUT(st);
    const char *str;
    FILL(str); CALL("error-name 9999", cuGetErrorName((CUresult)9999, &str)); OUT(str);
    FILL(str); CALL("error-string 9999", cuGetErrorString((CUresult)9999, &str)); OUT(str);
    CALL("unmap", cuMemUnmap(va, 2 * g));
    CALL("release", cuMemRelease(h));
    CALL("address-free", cuMemAddressFree(va, 4 * g));
}

/* Where consecutive reservations land, and calls that straddle two of them. */
static void reservation_placement(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    /* Where a reservation lands depends on what came before it; after a few of the
     * same size, the driver's next ones follow each other upwards. */
    size_t sizes[] = {g, 2 * g, 64 * g, (size_t)1 << 30, (size_t)1 << 36};
    for (unsigned i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        CUdeviceptr r[6] = {0};
        for (int k = 0; k < 6; k++) MUST(cuMemAddressReserve(&r[k], sizes[i], 0, 0, 0));
        int ascending = 1;
        for (int k = 3; k < 6; k++) ascending &= r[k] == r[k - 1] + sizes[i];
        SAY("size %zu MiB: the 4th to 6th follow each other upwards: %s", sizes[i] >> 20, ascending ? "yes" : "no");
        for (int k = 5; k >= 0; k--) MUST(cuMemAddressFree(r[k], sizes[i]));
    }
    /* Two reservations that happen to be adjacent: map, unmap and free across both. */
    CUdeviceptr a = 0, b = 0;
    MUST(cuMemAddressReserve(&a, 2 * g, 0, 0, 0));
    MUST(cuMemAddressReserve(&b, 2 * g, 0, 0, 0));
    CUdeviceptr lo = a < b ? a : b, hi = a < b ? b : a;
    SAY("two 4 MiB reservations: %s", hi - lo == 2 * g ? "adjacent" : "not adjacent");
    if (hi - lo == 2 * g) {
        CUmemAllocationProp p = prop_dev(0, 0);
        CUmemGenericAllocationHandle h;
        MUST(cuMemCreate(&h, 2 * g, &p, 0));
        CALL("map straddling both", cuMemMap(lo + g, 2 * g, 0, h, 0));
        CALL("unmap straddling both", cuMemUnmap(lo + g, 2 * g));
        CALL("map in the first", cuMemMap(lo, 2 * g, 0, h, 0));
        CALL("unmap both ranges at once", cuMemUnmap(lo, 4 * g));
        CALL("release", cuMemRelease(h));
        CALL("address-free both at once", cuMemAddressFree(lo, 4 * g));
        CALL("address-free first", cuMemAddressFree(lo, 2 * g));
        CALL("address-free second", cuMemAddressFree(hi, 2 * g));
    } else {
        MUST(cuMemAddressFree(a, 2 * g));
        MUST(cuMemAddressFree(b, 2 * g));
    }
    /* Frees of what was never reserved, and partial frees. */
    CUdeviceptr r = 0;
    MUST(cuMemAddressReserve(&r, 4 * g, 0, 0, 0));
    CALL("address-free first half", cuMemAddressFree(r, 2 * g));
    CALL("address-free interior", cuMemAddressFree(r + g, g));
    CALL("address-free wrong size", cuMemAddressFree(r, 3 * g));
    CALL("address-free bigger size", cuMemAddressFree(r, 8 * g));
    CALL("address-free unaligned ptr", cuMemAddressFree(r + 4096, 4 * g));
    CALL("address-free size 0", cuMemAddressFree(r, 0));
    CALL("address-free whole", cuMemAddressFree(r, 4 * g));
    CALL("address-free again", cuMemAddressFree(r, 4 * g));
    CALL("address-free 0", cuMemAddressFree(0, 2 * g));
    CALL("address-free never reserved", cuMemAddressFree(r + ((size_t)1 << 40), 2 * g));
    /* Unmap with sizes that are not multiples of the granularity. */
    CUmemAllocationProp p = prop_dev(0, 0);
    CUmemGenericAllocationHandle h;
    MUST(cuMemAddressReserve(&r, 4 * g, 0, 0, 0));
    MUST(cuMemCreate(&h, 2 * g, &p, 0));
    MUST(cuMemMap(r, 2 * g, 0, h, 0));
    CALL("unmap size 2g+4096", cuMemUnmap(r, 2 * g + 4096));
    CALL("map again", cuMemMap(r, 2 * g, 0, h, 0));
    CALL("unmap size 2g-4096", cuMemUnmap(r, 2 * g - 4096));
    CALL("unmap unaligned ptr", cuMemUnmap(r + 4096, 2 * g));
    CALL("unmap size 3g", cuMemUnmap(r, 3 * g));
    CALL("map after", cuMemMap(r, 2 * g, 0, h, 0));
    CALL("unmap", cuMemUnmap(r, 2 * g));
    CALL("release", cuMemRelease(h));
    CALL("address-free", cuMemAddressFree(r, 4 * g));
}

/* cuMemGetAddressRange on VMM memory, in several states. */
static void address_range_states(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmemAllocationProp p = prop_dev(0, 0);
    CUdeviceptr va = 0, base;
    size_t size;
    CUmemGenericAllocationHandle a, b;
    MUST(cuMemAddressReserve(&va, 8 * g, 0, 0, 0));
    CALL("reserved only", cuMemGetAddressRange(&base, &size, va));
    MUST(cuMemCreate(&a, 2 * g, &p, 0));
    MUST(cuMemCreate(&b, 2 * g, &p, 0));
    MUST(cuMemMap(va, 2 * g, 0, a, 0));
    CALL("mapped, no access", cuMemGetAddressRange(&base, &size, va));
    CUmemAccessDesc rw = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    MUST(cuMemSetAccess(va, 2 * g, &rw, 1));
    FILL(base); FILL(size);
    if (CALL("mapped, rw", cuMemGetAddressRange(&base, &size, va + 5)) == CUDA_SUCCESS)
        SAY("base = va%+lld MiB, size %zu MiB", ((long long)base - (long long)va) / (1 << 20), size >> 20);
    char buf[64] = {1};
    MUST(cuMemcpyHtoD(va, buf, sizeof buf));
    MUST(cuCtxSynchronize());
    CALL("after a copy", cuMemGetAddressRange(&base, &size, va));
    MUST(cuMemMap(va + 2 * g, 2 * g, 0, b, 0));
    MUST(cuMemSetAccess(va + 2 * g, 2 * g, &rw, 1));
    FILL(base); FILL(size);
    if (CALL("second mapping", cuMemGetAddressRange(&base, &size, va + 3 * g)) == CUDA_SUCCESS)
        SAY("base = va%+lld MiB, size %zu MiB", ((long long)base - (long long)va) / (1 << 20), size >> 20);
    CUmemAccessDesc none = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_NONE);
    MUST(cuMemSetAccess(va, 2 * g, &none, 1));
    FILL(base); FILL(size);
    if (CALL("first mapping after access revoked", cuMemGetAddressRange(&base, &size, va)) == CUDA_SUCCESS)
        SAY("base = va%+lld MiB, size %zu MiB", ((long long)base - (long long)va) / (1 << 20), size >> 20);
    MUST(cuMemSetAccess(va, 2 * g, &rw, 1));
    CALL("base only, first", cuMemGetAddressRange(&base, NULL, va));
    CALL("size only, first", cuMemGetAddressRange(NULL, &size, va));
    CALL("both null", cuMemGetAddressRange(NULL, NULL, va));
    MUST(cuCtxSetCurrent(NULL));
    CALL("no context current", cuMemGetAddressRange(&base, &size, va));
    MUST(cuCtxSetCurrent(ctx));
    CUdeviceptr m;
    MUST(cuMemAlloc(&m, 3 << 20));
    FILL(base); FILL(size);
    CALL("cuMemAlloc interior", cuMemGetAddressRange(&base, &size, m + 100));
    SAY("base %s, size %zu", base == m ? "= the allocation" : "other", size);
    MUST(cuCtxSetCurrent(NULL));
    CALL("cuMemAlloc, no context current", cuMemGetAddressRange(&base, &size, m));
    MUST(cuCtxSetCurrent(ctx));
    CALL("cuMemAlloc past end", cuMemGetAddressRange(&base, &size, m + (3 << 20)));
    MUST(cuMemFree(m));
    CALL("cuMemAlloc after free", cuMemGetAddressRange(&base, &size, m));
    CALL("unmap", cuMemUnmap(va, 4 * g));
    CALL("release a", cuMemRelease(a));
    CALL("release b", cuMemRelease(b));
    CALL("free", cuMemAddressFree(va, 8 * g));
}

static void print_pointer_attrs(CUdeviceptr ptr) {
    CUpointer_attribute names[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                   CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_MAPPED,
                                   CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES,
                                   CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
                                   CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE};
    const char *labels[] = {"MEMORY_TYPE", "DEVICE_ORDINAL", "IS_MANAGED", "MAPPED", "ACCESS_FLAGS",
                            "ALLOWED_HANDLE_TYPES", "IS_LEGACY_CUDA_IPC_CAPABLE", "MEMPOOL_HANDLE", "IS_GPU_DIRECT_RDMA_CAPABLE"};
    for (unsigned i = 0; i < sizeof names / sizeof *names; i++) {
        unsigned long long v;
        FILL(v);
        CUresult r = cuPointerGetAttribute(&v, names[i], ptr);
        if (r == CUDA_SUCCESS) {
            size_t n = names[i] == CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE ? 8 : names[i] == CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES ? 8 : 4;
            uint64_t x = 0;
            memcpy(&x, &v, n);
            if (n == 4) x &= 0xffffffffu;
            SAY("%s = %s 0x%llx", labels[i], rname(r), (unsigned long long)x);
        } else {
            SAY("%s = %s", labels[i], rname(r));
        }
    }
    CUdeviceptr hp;
    FILL(hp);
    CUresult r = cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, ptr);
    SAY("HOST_POINTER = %s %s", rname(r), r ? "" : hp == ptr ? "(the same address)" : hp == 0 ? "(zero)" : "(another address)");
    FILL(hp);
    r = cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, ptr);
    SAY("DEVICE_POINTER = %s %s", rname(r), r ? "" : hp == ptr ? "(the same address)" : hp == 0 ? "(zero)" : "(another address)");
}

static sigjmp_buf touch_jmp;
static void on_fault(int sig) { siglongjmp(touch_jmp, sig); }

/* Whether the host may read (write) a byte at an address: a fault is caught, not fatal. */
static const char *host_touch(CUdeviceptr ptr, int write, unsigned char value) {
    static char buf[32];
    struct sigaction sa, old_segv, old_bus;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fault;
    sigaction(SIGSEGV, &sa, &old_segv);
    sigaction(SIGBUS, &sa, &old_bus);
    int sig = sigsetjmp(touch_jmp, 1);
    const char *res;
    if (sig == 0) {
        volatile unsigned char *b = (volatile unsigned char *)(uintptr_t)ptr;
        if (write) {
            *b = value;
            res = "ok";
        } else {
            snprintf(buf, sizeof buf, "ok 0x%02x", *b);
            res = buf;
        }
    } else {
        res = sig == SIGSEGV ? "SIGSEGV" : "SIGBUS";
    }
    sigaction(SIGSEGV, &old_segv, NULL);
    sigaction(SIGBUS, &old_bus, NULL);
    return res;
}

/* Allocations on the host (location HOST / HOST_NUMA): access, attributes, host use. */
static void host_location(int type, const char *label) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmemAllocationProp p = prop_dev(0, 0);
    p.location.type = (CUmemLocationType)type;
    p.location.id = 0;
    size_t hg = 0;
    CALL("granularity", cuMemGetAllocationGranularity(&hg, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    SAY("%s granularity %zu KiB", label, hg >> 10);
    CUdeviceptr va = 0;
    CUmemGenericAllocationHandle h;
    MUST(cuMemAddressReserve(&va, 2 * g, 0, 0, 0));
    if (CALL("create", cuMemCreate(&h, 2 * g, &p, 0)) != CUDA_SUCCESS) return;
    CALL("map", cuMemMap(va, 2 * g, 0, h, 0));
    SAY("host read before any access: %s", host_touch(va, 0, 0));
    print_pointer_attrs(va);
    CUmemAccessDesc host_rw = access_for((CUmemLocationType)type, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CUmemAccessDesc host_loc_rw = access_for(CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CUmemAccessDesc host_ro = access_for(CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_ACCESS_FLAGS_PROT_READ);
    CUmemAccessDesc dev_rw = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CALL("set-access for its own location rw", cuMemSetAccess(va, 2 * g, &host_rw, 1));
    CALL("set-access HOST rw", cuMemSetAccess(va, 2 * g, &host_loc_rw, 1));
    SAY("host write after HOST rw: %s", host_touch(va + 10, 1, 0x5a));
    SAY("host read after HOST rw: %s", host_touch(va + 10, 0, 0));
    CUmemLocation hl = {CU_MEM_LOCATION_TYPE_HOST, 0};
    CUmemLocation dl = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    unsigned long long f;
    FILL(f); CALL("get-access HOST", cuMemGetAccess(&f, &hl, va)); OUT(f);
    FILL(f); CALL("get-access device 0", cuMemGetAccess(&f, &dl, va)); OUT(f);
    CALL("set-access device 0 rw", cuMemSetAccess(va, 2 * g, &dev_rw, 1));
    unsigned char back[4] = {0};
    CALL("copy DtoH by the device", cuMemcpyDtoH(back, va + 10, 1));
    SAY("byte the device read: 0x%02x", back[0]);
    back[0] = 0x77;
    CALL("copy HtoD by the device", cuMemcpyHtoD(va + 11, back, 1));
    MUST(cuCtxSynchronize());
    SAY("host read of the device's write: %s", host_touch(va + 11, 0, 0));
    FILL(f); CALL("get-access HOST after device grant", cuMemGetAccess(&f, &hl, va)); OUT(f);
    CALL("set-access HOST read-only", cuMemSetAccess(va, 2 * g, &host_ro, 1));
    SAY("host read after HOST ro: %s", host_touch(va + 10, 0, 0));
    SAY("host write after HOST ro: %s", host_touch(va + 10, 1, 0x11));
    print_pointer_attrs(va);
    CUdeviceptr base; size_t size;
    CALL("address-range", cuMemGetAddressRange(&base, &size, va));
    CALL("unmap", cuMemUnmap(va, 2 * g));
    SAY("host read after unmap: %s", host_touch(va + 10, 0, 0));
    CALL("release", cuMemRelease(h));
    CALL("address-free", cuMemAddressFree(va, 2 * g));
}
static void host_location_host(void) { host_location(CU_MEM_LOCATION_TYPE_HOST, "HOST"); }
static void host_location_numa(void) { host_location(CU_MEM_LOCATION_TYPE_HOST_NUMA, "HOST_NUMA"); }

/* Device memory is never host-accessible, even with every grant. */
static void device_memory_host_touch(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmemAllocationProp p = prop_dev(0, 0);
    CUdeviceptr va = 0;
    CUmemGenericAllocationHandle h;
    MUST(cuMemAddressReserve(&va, 2 * g, 0, 0, 0));
    MUST(cuMemCreate(&h, 2 * g, &p, 0));
    MUST(cuMemMap(va, 2 * g, 0, h, 0));
    CUmemAccessDesc host_rw = access_for(CU_MEM_LOCATION_TYPE_HOST, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CALL("set-access HOST rw on device memory", cuMemSetAccess(va, 2 * g, &host_rw, 1));
    CUmemAccessDesc dev_rw = access_for(CU_MEM_LOCATION_TYPE_DEVICE, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    MUST(cuMemSetAccess(va, 2 * g, &dev_rw, 1));
    SAY("host read of device memory: %s", host_touch(va, 0, 0));
    print_pointer_attrs(va);
    MUST(cuMemUnmap(va, 2 * g));
    MUST(cuMemRelease(h));
    MUST(cuMemAddressFree(va, 2 * g));
}

/* Where between 16 MiB (placed elsewhere) and 32 MiB (taken) the lowest address hint
 * cuMemAddressReserve takes lies (case reserve-hint-floor): each 2 MiB step, a 4 MiB
 * reservation at it, then freed. */
static void hint_floor_steps(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    /* What the host has mapped below 64 MiB, on stderr (it differs between hosts): a hint
     * the host's range is taken at cannot be taken. */
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    while (maps && fgets(line, sizeof line, maps))
        if (strtoull(line, NULL, 16) < (64ull << 20)) fprintf(stderr, "hint-floor-steps maps: %s", line);
    if (maps) fclose(maps);
    for (size_t mib = 16; mib <= 34; mib += 2) {
        CUdeviceptr want = (CUdeviceptr)mib << 20, at = 0;
        if (CALL("reserve", cuMemAddressReserve(&at, 2 * g, 0, want, 0)) != CUDA_SUCCESS) continue;
        SAY("hint %zu MiB: %s", mib, at == want ? "taken" : "placed elsewhere");
        fprintf(stderr, "hint-floor-steps: hint %#llx -> %#llx\n", (unsigned long long)want, (unsigned long long)at);
        MUST(cuMemAddressFree(at, 2 * g));
    }
}

/* Whether a hint is taken depends on what came before (hint-floor-steps freed each
 * reservation before the next hint and 32 MiB was placed elsewhere; case
 * reserve-hint-floor kept them and 32 MiB was taken): hints in a fresh process, after
 * reservations kept, after one freed (of the same size and of another). */
static void hint_after_free(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUdeviceptr kept[8] = {0}, at = 0, freed = 0;
    unsigned k = 0;
#define HINT(what, mib, size)                                                                          \
    do {                                                                                               \
        CUdeviceptr want_ = (CUdeviceptr)(mib) << 20;                                                  \
        at = 0;                                                                                        \
        if (CALL(what, cuMemAddressReserve(&at, (size), 0, want_, 0)) == CUDA_SUCCESS)                 \
            SAY("hint %d MiB: %s", (int)(mib),                                                         \
                at == want_ ? "taken" : at == freed ? "at the freed reservation" : "placed elsewhere"); \
    } while (0)
    HINT("fresh, 4 MiB at 34 MiB", 34, 2 * g);
    kept[k++] = at;
    HINT("4 MiB at 16 MiB", 16, 2 * g);
    CUdeviceptr low = at;
    HINT("4 MiB at 40 MiB, the 16 MiB one kept", 40, 2 * g);
    kept[k++] = at;
    MUST(cuMemAddressFree(low, 2 * g));
    freed = low;
    HINT("4 MiB at 48 MiB, a 4 MiB one freed", 48, 2 * g);
    kept[k++] = at;
    HINT("4 MiB at 56 MiB, after that", 56, 2 * g);
    kept[k++] = at;
    MUST(cuMemAddressFree(kept[--k], 2 * g));
    freed = kept[k];
    HINT("8 MiB at 64 MiB, a 4 MiB one freed", 64, 4 * g);
    if (at) MUST(cuMemAddressFree(at, 4 * g));
    freed = 0;
    HINT("4 MiB at 20 MiB", 20, 2 * g);
    if (at) MUST(cuMemAddressFree(at, 2 * g));
    HINT("4 MiB at 24 MiB, a 4 MiB one just freed", 24, 2 * g);
    if (at) MUST(cuMemAddressFree(at, 2 * g));
    while (k) MUST(cuMemAddressFree(kept[--k], 2 * g));
#undef HINT
}

/* Case reserve-hint-floor, whose hints of 32 MiB to 768 MiB the H200 took, reserves with
 * no context (cuInit only); this probe's sections make the primary context current first.
 * The same hints, 4 MiB each, without a context and then with one. */
static void hints_and_contexts(void) {
    MUST(cuInit(0));
    static const unsigned long long mib[] = {16, 32, 64, 128, 512, 1024, 4096, 65536, 1048576};
    for (int with = 0; with < 2; with++) {
        CUcontext ctx = NULL;
        if (with) init_primary(0, &ctx);
        size_t size = (size_t)4 << 20;
        for (unsigned i = 0; i < sizeof mib / sizeof *mib; i++) {
            CUdeviceptr want = (CUdeviceptr)(mib[i] << 20), at = 0;
            CUresult r = cuMemAddressReserve(&at, size, 0, want, 0);
            SAY("%s a context, hint %llu MiB: %s", with ? "with" : "without", mib[i],
                r != CUDA_SUCCESS ? rname(r) : at == want ? "taken" : "placed elsewhere");
            if (r == CUDA_SUCCESS) MUST(cuMemAddressFree(at, size));
        }
    }
}

/* A process forked after cuInit: what the driver lets the child do. */
static void fork_after_init(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUdeviceptr va;
    MUST(cuMemAddressReserve(&va, 2 * g, 0, 0, 0));
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        CALL("child: cuInit", cuInit(0));
        int n = -1;
        CALL("child: device-count", cuDeviceGetCount(&n));
        CUcontext c;
        CALL("child: ctx-get-current", cuCtxGetCurrent(&c));
        CUdeviceptr vb;
        CALL("child: reserve", cuMemAddressReserve(&vb, 2 * g, 0, 0, 0));
        CALL("child: address-free the parent's", cuMemAddressFree(va, 2 * g));
        fflush(stdout);
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    CALL("parent: address-free", cuMemAddressFree(va, 2 * g));
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    section("released-while-mapped", released_while_mapped);
    section("access-across-holes", access_across_holes);
    section("out-params-on-failure", out_params_on_failure);
    section("reservation-placement", reservation_placement);
    section("address-range-states", address_range_states);
    section("host-location-HOST", host_location_host);
    section("host-location-HOST_NUMA", host_location_numa);
    section("device-memory-host-touch", device_memory_host_touch);
    section("fork-after-init", fork_after_init);
    section("hint-floor-steps", hint_floor_steps);
    section("hint-after-free", hint_after_free);
    section("hints-and-contexts", hints_and_contexts);
    return 0;
}
