/* Malformed and oversized images (issue 19, "a sandbox that holds"): what the driver
 * answers, call by call, for fatbin wrappers that point to themselves, truncated fatbin
 * headers, declared sizes past the buffer, kernels declaring too much .param, .shared or
 * .local, .b128 initialisers, a 4 GiB initialised .global, zstd entries larger than they
 * declare, and module files that are devices. Every image is built here (PTX text,
 * fatbins of one entry laid out as nvcc 13.0 writes them); no nvcc needed. Sizes are
 * bounded (the largest allocation a driver could be led to make is 4 GiB of device
 * memory and 1 GiB of host memory), never a multicast call. Usage: sandbox_images */
#include "probe.h"
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/resource.h>

#define WRAPPER_MAGIC 0x466243b1u
#define FATBIN_MAGIC 0xBA55ED50u

struct wrapper {
    unsigned magic, version;
    const void *data;
    void *rest;
};

static const char *HEAD80 = ".version 8.0\n.target sm_90\n.address_size 64\n";
static const char *HEAD81 = ".version 8.1\n.target sm_90\n.address_size 64\n";
static const char *TINY = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n";

static char *fmt(const char *f, ...) {
    static char buf[4][4096];
    static int i;
    char *b = buf[i++ % 4];
    va_list ap;
    va_start(ap, f);
    vsnprintf(b, sizeof buf[0], f, ap);
    va_end(ap);
    return b;
}

static CUresult load(CUmodule *m, const void *image) {
    *m = NULL;
    return cuModuleLoadData(m, image);
}

/* `n` bytes at the very end of a readable page followed by a PROT_NONE one: a reader
 * that goes one byte past them faults. */
static void *at_guard_page(const void *bytes, size_t n) {
    unsigned char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || mprotect(p + 4096, 4096, PROT_NONE) != 0) _exit(4);
    memcpy(p + 4096 - n, bytes, n);
    return p + 4096 - n;
}

/* A fatbin of one PTX entry for sm_90, as nvcc 13.0 lays it out: a 16-byte header, an
 * 80-byte entry header (kind 1, padded size, compressed size, SM 90, flags, uncompressed
 * size), then the payload padded to 8. Returns its length in *len. */
static unsigned char *fatbin_of(const void *payload, size_t n, uint64_t flags, uint64_t uncompressed, size_t *len) {
    size_t padded = (n + 7) & ~(size_t)7;
    size_t total = 16 + 80 + padded;
    unsigned char *f = calloc(1, total);
    uint32_t u32;
    uint16_t u16;
    uint64_t u64;
    u32 = FATBIN_MAGIC; memcpy(f, &u32, 4);
    u16 = 1; memcpy(f + 4, &u16, 2);
    u16 = 16; memcpy(f + 6, &u16, 2);
    u64 = 80 + padded; memcpy(f + 8, &u64, 8);
    unsigned char *e = f + 16;
    u16 = 1; memcpy(e, &u16, 2);
    u16 = 0x0101; memcpy(e + 2, &u16, 2);
    u32 = 80; memcpy(e + 4, &u32, 4);
    u64 = padded; memcpy(e + 8, &u64, 8);
    u32 = (flags & 0xA000) ? (uint32_t)n : 0; memcpy(e + 16, &u32, 4);
    u32 = 0x40; memcpy(e + 20, &u32, 4);
    u32 = 0x00090000; memcpy(e + 24, &u32, 4);
    u32 = 90; memcpy(e + 28, &u32, 4);
    memcpy(e + 40, &flags, 8);
    memcpy(e + 56, &uncompressed, 8);
    u64 = 0x48; memcpy(e + 64, &u64, 8);
    memcpy(e + 80, payload, n);
    *len = total;
    return f;
}

/* A zstd frame (RFC 8878): 128 KiB window, no content size, no checksum; one raw block
 * of `raw` then `rle` RLE blocks of 128 KiB of spaces (4 bytes of payload each). */
static unsigned char *zstd_frame(const void *raw, size_t n, size_t rle, size_t *len) {
    unsigned char *f = malloc(6 + 3 + n + rle * 4);
    size_t at = 0;
    uint32_t magic = 0xFD2FB528u;
    memcpy(f, &magic, 4);
    at = 4;
    f[at++] = 0;      /* frame header descriptor */
    f[at++] = 7 << 3; /* window 2^(10+7) */
    uint32_t h = (rle == 0) | (0u << 1) | ((uint32_t)n << 3);
    memcpy(f + at, &h, 3); at += 3;
    memcpy(f + at, raw, n); at += n;
    for (size_t i = 0; i < rle; i++) {
        h = (i + 1 == rle) | (1u << 1) | ((128u << 10) << 3);
        memcpy(f + at, &h, 3); at += 3;
        f[at++] = ' ';
    }
    *len = at;
    return f;
}

static void wrappers(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m;
    size_t n;
    unsigned char *fat = fatbin_of(TINY, strlen(TINY) + 1, 0x11, 0, &n);
    CALL("load handmade fatbin", load(&m, fat));
    struct wrapper w = {WRAPPER_MAGIC, 1, fat, NULL};
    CALL("load wrapper of the fatbin", load(&m, &w));
    CALL("load-fat-binary wrapper of the fatbin", cuModuleLoadFatBinary(&m, &w));
    struct wrapper ww = {WRAPPER_MAGIC, 1, &w, NULL};
    CALL("load wrapper of a wrapper of the fatbin", load(&m, &ww));
    struct wrapper self = {WRAPPER_MAGIC, 1, NULL, NULL};
    self.data = &self;
    FILL(m); CALL("load self-referencing wrapper", cuModuleLoadData(&m, &self)); OUT(m);
    CALL("load-fat-binary self-referencing wrapper", cuModuleLoadFatBinary(&m, &self));
    struct wrapper a = {WRAPPER_MAGIC, 1, NULL, NULL}, b = {WRAPPER_MAGIC, 1, &a, NULL};
    a.data = &b;
    CALL("load two wrappers pointing at each other", load(&m, &a));
    struct wrapper null_data = {WRAPPER_MAGIC, 1, NULL, NULL};
    CALL("load wrapper with NULL data", load(&m, &null_data));
    CALL("load good PTX afterwards", load(&m, TINY));
}

static void fatbin_truncated(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m;
    size_t n;
    unsigned char *fat = fatbin_of(TINY, strlen(TINY) + 1, 0x11, 0, &n);
    CALL("load fatbin before a guard page", load(&m, at_guard_page(fat, n)));
    CALL("load good PTX afterwards", load(&m, TINY));
}

/* A fatbin whose entry declares more than is readable, and PTX text running into unmapped
 * memory, each alone in a section run last (the H200 crashed on the first in
 * fatbin-truncated). */
static void fatbin_entry_over(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m;
    size_t n;
    unsigned char *fat = fatbin_of(TINY, strlen(TINY) + 1, 0x11, 0, &n);
    unsigned char entry_over[96];
    memcpy(entry_over, fat, sizeof entry_over);
    uint64_t padded = 1 << 20;
    memcpy(entry_over + 16 + 8, &padded, 8);
    CALL("load fatbin whose entry declares 1 MiB", load(&m, at_guard_page(entry_over, sizeof entry_over)));
}

static void ptx_without_nul(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m;
    CALL("load PTX text with no NUL before a guard page", load(&m, at_guard_page(TINY, strlen(TINY))));
}

/* Images that end before what their headers declare, each alone in a section run last:
 * the H200 crashed (SIGSEGV) on the 8- and then the 16-byte header in fatbin-truncated,
 * losing the section's later questions each time. */
static void fatbin_truncated_16(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m;
    size_t n;
    unsigned char *fat = fatbin_of(TINY, strlen(TINY) + 1, 0x11, 0, &n);
    CALL("load 16-byte fatbin header only", load(&m, at_guard_page(fat, 16)));
}

static void fatbin_truncated_declared(uint64_t declared, const char *what) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m;
    size_t n;
    unsigned char *fat = fatbin_of(TINY, strlen(TINY) + 1, 0x11, 0, &n);
    unsigned char over[96];
    memcpy(over, fat, sizeof over);
    memcpy(over + 8, &declared, 8);
    CALL(what, load(&m, at_guard_page(over, sizeof over)));
}

static void fatbin_truncated_1m(void) {
    fatbin_truncated_declared(1 << 20, "load fatbin declaring 1 MiB, 96 bytes readable");
}

static void fatbin_truncated_2_64(void) {
    fatbin_truncated_declared(~(uint64_t)0 - 64, "load fatbin declaring 2^64 bytes");
}

static void param_size(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m;
    const struct { const char *head; const char *v; unsigned long bytes; } cases[] = {
        {NULL, "8.0", 4096}, {NULL, "8.0", 4352}, {NULL, "8.0", 4356},
        {NULL, "8.1", 32764}, {NULL, "8.1", 32768}, {NULL, "8.1", 1ul << 30}};
    for (unsigned i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *head = cases[i].v[2] == '0' ? HEAD80 : HEAD81;
        char *ptx = fmt("%s.visible .entry k(.param .align 4 .b8 p[%lu]) { ret; }\n", head, cases[i].bytes);
        CALL(fmt("load PTX %s kernel with %lu bytes of .param", cases[i].v, cases[i].bytes), load(&m, ptx));
    }
}

static void static_shared(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m;
    const unsigned long sizes[] = {48ul << 10, (48ul << 10) + 4, 64ul << 10, 1ul << 30};
    for (unsigned i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        char *ptx = fmt("%s.visible .entry k() { .reg .b32 %%r<2>; .shared .align 4 .b8 s[%lu];\n"
                        "mov.u32 %%r1, s; st.shared.u32 [%%r1], 1; ret; }\n", HEAD80, sizes[i]);
        CALL(fmt("load kernel with %lu bytes of static .shared", sizes[i]), load(&m, ptx));
    }
}

/* A kernel whose `.local` frame of `bytes` cannot be optimised away: it stores at an
 * index the launch gives and reads another back into global memory. */
static CUresult load_local(CUmodule *m, unsigned long bytes) {
    char *ptx = fmt("%s.visible .entry k(.param .u64 out, .param .u32 idx) {\n"
                    ".reg .b64 %%rd<5>; .reg .b32 %%r<3>; .local .align 8 .b8 d[%lu];\n"
                    "ld.param.u64 %%rd1, [out]; ld.param.u32 %%r1, [idx];\n"
                    "mov.u64 %%rd2, d; cvt.u64.u32 %%rd3, %%r1; add.u64 %%rd4, %%rd2, %%rd3;\n"
                    "st.local.u32 [%%rd4], 7; ld.local.u32 %%r2, [%%rd2];\n"
                    "cvta.to.global.u64 %%rd1, %%rd1; st.global.u32 [%%rd1], %%r2; ret; }\n",
                    HEAD80, bytes);
    return load(m, ptx);
}

static CUresult launch_local(CUmodule m, unsigned threads, CUdeviceptr out) {
    CUfunction f;
    MUST(cuModuleGetFunction(&f, m, "k"));
    unsigned idx = 0;
    void *args[] = {&out, &idx};
    return cuLaunchKernel(f, 1, 1, 1, threads, 1, 1, 0, NULL, args, NULL);
}

static void local_at_launch(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUdeviceptr out;
    MUST(cuMemAlloc(&out, 4096));
    const unsigned long sizes[] = {16ul << 10, 256ul << 10, 512ul << 10, (512ul << 10) + 16, 1900000};
    const unsigned threads[] = {1, 32, 1024};
    for (unsigned i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        CUmodule m;
        CUresult r = CALL(fmt("load kernel with %lu bytes of .local", sizes[i]), load_local(&m, sizes[i]));
        if (r) continue;
        CUfunction f;
        MUST(cuModuleGetFunction(&f, m, "k"));
        int v = -1;
        cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f);
        SAY("LOCAL_SIZE_BYTES %d", v);
        for (unsigned t = 0; t < sizeof threads / sizeof *threads; t++) {
            CALL(fmt("  launch %u threads", threads[t]), launch_local(m, threads[t], out));
            CALL("  ctx-sync", cuCtxSynchronize());
        }
        unsigned got = 0;
        CALL("  read back", cuMemcpyDtoH(&got, out, 4));
        SAY("value %u", got);
        MUST(cuModuleUnload(m));
    }
}

/* The largest `.local` frame a launch of `threads` threads accepts, in steps of 16 bytes
 * between 16 KiB and 4 MiB: a bisection, each step a load and a launch. */
static void local_largest(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUdeviceptr out;
    MUST(cuMemAlloc(&out, 4096));
    const unsigned threads[] = {1, 1024};
    for (unsigned t = 0; t < 2; t++) {
        unsigned long lo = 16ul << 10, hi = 4ul << 20; /* lo accepted, hi refused (checked) */
        CUresult rlo = CUDA_ERROR_UNKNOWN, rhi = CUDA_ERROR_UNKNOWN;
        CUmodule m;
        if (load_local(&m, lo) == CUDA_SUCCESS) { rlo = launch_local(m, threads[t], out); cuCtxSynchronize(); cuModuleUnload(m); }
        if (load_local(&m, hi) == CUDA_SUCCESS) { rhi = launch_local(m, threads[t], out); cuCtxSynchronize(); cuModuleUnload(m); }
        SAY("%u threads: %lu bytes = %s, %lu bytes = %s", threads[t], lo, rname(rlo), hi, rname(rhi));
        if (rlo != CUDA_SUCCESS || rhi == CUDA_SUCCESS) continue;
        CUresult refused = rhi;
        while (hi - lo > 16) {
            unsigned long mid = (lo + (hi - lo) / 2) & ~15ul;
            if (mid <= lo) mid = lo + 16;
            CUresult r = load_local(&m, mid);
            if (r == CUDA_SUCCESS) {
                r = launch_local(m, threads[t], out);
                cuCtxSynchronize();
                cuModuleUnload(m);
            }
            if (r == CUDA_SUCCESS) lo = mid; else { hi = mid; refused = r; }
        }
        SAY("%u threads: largest accepted .local %lu bytes; %lu = %s", threads[t], lo, hi, rname(refused));
    }
}

static void b128_init(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m;
    char *ptx = fmt("%s.visible .global .align 16 .b128 wide[2] = {1, -1};\n.visible .entry k() { ret; }\n", HEAD81);
    if (CALL("load .b128 wide[2] = {1, -1}", load(&m, ptx)) == CUDA_SUCCESS) {
        CUdeviceptr p; size_t n;
        CALL("get-global wide", cuModuleGetGlobal(&p, &n, m, "wide"));
        uint64_t v[4] = {0};
        CALL("read wide", cuMemcpyDtoH(v, p, sizeof v));
        SAY("size %zu: %016llx %016llx %016llx %016llx", n, (unsigned long long)v[0], (unsigned long long)v[1],
            (unsigned long long)v[2], (unsigned long long)v[3]);
    }
    ptx = fmt("%s.visible .global .align 16 .b128 s = 7;\n.visible .entry k() { ret; }\n", HEAD81);
    CALL("load scalar .b128 s = 7", load(&m, ptx));
}

static void huge_global(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m;
    const char *decls[] = {".b8 big[4294967295] = {7, 8}", ".b32 big[1073741824] = {7}"};
    for (unsigned i = 0; i < 2; i++) {
        char *ptx = fmt("%s.visible .global .align 4 %s;\n.visible .entry k() { ret; }\n", HEAD80, decls[i]);
        if (CALL(fmt("load .global %s", decls[i]), load(&m, ptx)) != CUDA_SUCCESS) continue;
        CUdeviceptr p; size_t n;
        CALL("get-global big", cuModuleGetGlobal(&p, &n, m, "big"));
        unsigned char v[4] = {0};
        CALL("read big", cuMemcpyDtoH(v, p, 4));
        SAY("size %zu: %u %u %u %u", n, v[0], v[1], v[2], v[3]);
        CALL("unload", cuModuleUnload(m));
    }
}

/* The largest static .shared a kernel may declare at load, and whether a kernel over
 * 48 KiB of it launches: bisected between 48 KiB (loads) and 1 GiB (refused). */
static void static_shared_largest(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m;
    unsigned long ok = 48ul << 10, bad = 1ul << 30;
    while (bad - ok > 4) {
        unsigned long mid = ok + (bad - ok) / 2 / 4 * 4;
        char *ptx = fmt("%s.visible .entry k() { .reg .b32 %%r<2>; .shared .align 4 .b8 s[%lu];\n"
                        "mov.u32 %%r1, s; st.shared.u32 [%%r1], 1; ret; }\n", HEAD80, mid);
        if (load(&m, ptx) == CUDA_SUCCESS) { ok = mid; cuModuleUnload(m); } else bad = mid;
    }
    SAY("largest static .shared loaded: %lu bytes; %lu refused", ok, bad);
    char *ptx = fmt("%s.visible .entry k() { .reg .b32 %%r<2>; .shared .align 4 .b8 s[%lu];\n"
                    "mov.u32 %%r1, s; st.shared.u32 [%%r1], 1; ret; }\n", HEAD80, 64ul << 10);
    if (CALL("load kernel with 65536 bytes of static .shared", load(&m, ptx)) != CUDA_SUCCESS) return;
    CUfunction f;
    MUST(cuModuleGetFunction(&f, m, "k"));
    int v = -1;
    CALL("func-get-attribute SHARED_SIZE_BYTES", cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f));
    SAY("SHARED_SIZE_BYTES %d", v);
    CALL("launch it", cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CALL("ctx-sync", cuCtxSynchronize());
    CALL("unload", cuModuleUnload(m));
}

/* Which initialised .global .b8 arrays the driver loads, by size, ascending (a bisect
 * took the H200 past 200 s: each accepted load builds the whole initialised image). */
static void huge_global_largest(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m;
    const unsigned long long sizes[] = {64ull << 20, 256ull << 20, 1ull << 30, (2ull << 30) - 1,
                                        2ull << 30, (3ull << 30)};
    for (unsigned i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        char *ptx = fmt("%s.visible .global .align 4 .b8 big[%llu] = {7, 8};\n.visible .entry k() { ret; }\n", HEAD80, sizes[i]);
        if (CALL(fmt("load .global .b8 big[%llu] = {7, 8}", sizes[i]), load(&m, ptx)) == CUDA_SUCCESS)
            cuModuleUnload(m);
    }
    char *ptx = fmt("%s.visible .global .align 4 .b8 big[%llu];\n.visible .entry k() { ret; }\n", HEAD80, 4294967295ull);
    CALL("load .global .b8 big[4294967295] without initialiser", load(&m, ptx));
}

static void zstd_sizes(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m;
    size_t tn = strlen(TINY) + 1, zn, fn;
    unsigned char *z = zstd_frame(TINY, tn, 0, &zn);
    CALL("load zstd entry of its declared size", load(&m, fatbin_of(z, zn, 0x8011, tn, &fn)));
    CALL("load zstd entry declaring 1 byte less", load(&m, fatbin_of(z, zn, 0x8011, tn - 1, &fn)));
    CALL("load zstd entry declaring 8 GiB", load(&m, fatbin_of(z, zn, 0x8011, 8ull << 30, &fn)));
    /* 32 KB of payload that decompresses to 1 GiB (of spaces after the PTX's NUL). */
    unsigned char *bomb = zstd_frame(TINY, tn, 8192, &zn);
    CALL("load zstd entry of 1 GiB declaring 4 KiB", load(&m, fatbin_of(bomb, zn, 0x8011, 4096, &fn)));
    CALL("load good PTX afterwards", load(&m, TINY));
}

static void files(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m;
    CALL("load /dev/null", cuModuleLoad(&m, "/dev/null"));
    CALL("load /", cuModuleLoad(&m, "/"));
    /* /dev/zero has no end: give the driver 10 s and 8 GiB more of host memory. */
    struct rlimit old, lim;
    getrlimit(RLIMIT_DATA, &old);
    lim = old;
    if (lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur > (8ull << 30)) lim.rlim_cur = 8ull << 30;
    setrlimit(RLIMIT_DATA, &lim);
    alarm(10);
    CALL("load /dev/zero", cuModuleLoad(&m, "/dev/zero"));
    alarm(60);
    setrlimit(RLIMIT_DATA, &old);
}

/* The call the H200 crashed on (SIGSEGV) in fatbin-truncated, alone in a section run
 * last, so that fatbin-truncated runs to its end. */
static void fatbin_truncated_header_crash(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUmodule m;
    size_t n;
    unsigned char *fat = fatbin_of(TINY, strlen(TINY) + 1, 0x11, 0, &n);
    CALL("load 8-byte fatbin header before a guard page", load(&m, at_guard_page(fat, 8)));
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    section("wrappers", wrappers);
    section("fatbin-truncated", fatbin_truncated);
    section("param-size", param_size);
    section("static-shared", static_shared);
    section("local-at-launch", local_at_launch);
    section("local-largest", local_largest);
    section("b128-init", b128_init);
    section("static-shared-largest", static_shared_largest);
    section("zstd-sizes", zstd_sizes);
    section("files", files);
    /* Last: the driver's JIT may write 4 GiB of initialised data. */
    section("huge-global", huge_global);
    section("huge-global-largest", huge_global_largest);
    section("fatbin-truncated-header-crash", fatbin_truncated_header_crash);
    section("fatbin-truncated-16-byte-header", fatbin_truncated_16);
    section("fatbin-truncated-1-mib-declared", fatbin_truncated_1m);
    section("fatbin-truncated-2-64-declared", fatbin_truncated_2_64);
    section("fatbin-entry-declares-1-mib", fatbin_entry_over);
    section("ptx-without-nul", ptx_without_nul);
    return 0;
}
