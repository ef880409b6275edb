/* Texture and surface references at launch (the deprecated reference API), what probe
 * api_gaps3's texture-references section leaves open: PTX kernels naming module-scope
 * `.texref`/`.surfref` variables, bound to a 2D array (point, linear, normalized
 * coordinates, clamp and wrap), to linear memory through cuTexRefSetAddress's ByteOffset
 * and to a surface array; a module reference's state before any Set; what a launch sees
 * when the reference is rebound before its kernel runs; a reference of another module of
 * the same name; the handle `mov` takes of a reference (istypep, tex through it); the
 * format rules (SetAddress before SetFormat, SetFormat after SetAddress2D, a format that
 * differs from the bound array's); and, each alone, a kernel reading an unbound reference
 * or one whose array was destroyed, and cuTexRefDestroy of a module's reference; then
 * what those recordings left open (a wider format, other bindings destroyed, the mipmap
 * setters, CU_TRSF_SEAMLESS_CUBEMAP by binding), and what a kernel reads through a
 * reference after cuTexRefSetArray of a mipmapped array's level.
 * Values read by kernels are printed as numbers: the mock's test texref.rs expects what
 * cuda.h and the programming guide say, and this asks the H200. */
#define _GNU_SOURCE
#define CUDA_ENABLE_DEPRECATED
#include "probe.h"

#include <math.h>

static const char KERNELS[] =
    ".version 9.0\n.target sm_90\n.address_size 64\n"
    ".global .texref arr_tex;\n"
    ".global .texref lin_tex;\n"
    ".global .surfref surf;\n"
    ".global .texref unbound_tex;\n"
    ".visible .entry read_array(.param .u64 out, .param .f32 x, .param .f32 y)\n"
    "{ .reg .f32 %f<7>; .reg .b64 %rd<2>;\n"
    "  ld.param.u64 %rd1, [out]; ld.param.f32 %f5, [x]; ld.param.f32 %f6, [y];\n"
    "  tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [arr_tex, {%f5, %f6}];\n"
    "  st.global.f32 [%rd1], %f1; ret; }\n"
    ".visible .entry read_linear(.param .u64 out, .param .u32 i)\n"
    "{ .reg .b32 %r<6>; .reg .b64 %rd<2>;\n"
    "  ld.param.u64 %rd1, [out]; ld.param.u32 %r5, [i];\n"
    "  tex.1d.v4.u32.s32 {%r1, %r2, %r3, %r4}, [lin_tex, {%r5}];\n"
    "  st.global.u32 [%rd1], %r1; ret; }\n"
    ".visible .entry surface_step(.param .u32 from, .param .u32 to)\n"
    "{ .reg .b32 %r<5>;\n"
    "  ld.param.u32 %r1, [from]; ld.param.u32 %r2, [to]; mov.u32 %r3, 0;\n"
    "  suld.b.2d.b32.trap {%r4}, [surf, {%r1, %r3}];\n"
    "  add.u32 %r4, %r4, 40;\n"
    "  sust.b.2d.b32.trap [surf, {%r2, %r3}], {%r4}; ret; }\n"
    ".visible .entry handle_of(.param .u64 out)\n"
    "{ .reg .pred %p<3>; .reg .f32 %f<7>; .reg .b32 %r<3>; .reg .b64 %rd<3>;\n"
    "  ld.param.u64 %rd1, [out]; mov.u64 %rd2, arr_tex;\n"
    "  istypep.texref %p1, %rd2; istypep.surfref %p2, %rd2;\n"
    "  selp.u32 %r1, 1, 0, %p1; selp.u32 %r2, 1, 0, %p2;\n"
    "  st.global.u32 [%rd1], %r1; st.global.u32 [%rd1+4], %r2;\n"
    "  mov.f32 %f5, 0f40200000; mov.f32 %f6, 0f3FC00000;\n"
    "  tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd2, {%f5, %f6}];\n"
    "  st.global.f32 [%rd1+8], %f1; ret; }\n"
    ".visible .entry read_unbound(.param .u64 out)\n"
    "{ .reg .b32 %r<6>; .reg .b64 %rd<2>;\n"
    "  ld.param.u64 %rd1, [out]; mov.u32 %r5, 0;\n"
    "  tex.1d.v4.u32.s32 {%r1, %r2, %r3, %r4}, [unbound_tex, {%r5}];\n"
    "  st.global.u32 [%rd1], %r1; st.global.u32 [%rd1+4], %r2; ret; }\n"
    ".visible .entry wait_for_host(.param .u64 flag)\n"
    "{ .reg .pred %p; .reg .b32 %r<2>; .reg .b64 %rd<2>;\n"
    "  ld.param.u64 %rd1, [flag];\n"
    "SPIN: ld.volatile.global.u32 %r1, [%rd1]; setp.eq.u32 %p, %r1, 0; @%p bra SPIN; ret; }\n";

static CUmodule mod;
static CUdeviceptr mem, out;

static void setup(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    MUST(cuModuleLoadData(&mod, KERNELS));
    MUST(cuMemAlloc(&mem, 1 << 16));
    MUST(cuMemsetD32(mem, 0, 1 << 14));
    out = mem + 8192;
}

static CUfunction fn(const char *name) {
    CUfunction f;
    MUST(cuModuleGetFunction(&f, mod, name));
    return f;
}

static CUtexref texref(CUmodule m, const char *name) {
    CUtexref t;
    MUST(cuModuleGetTexRef(&t, m, name));
    return t;
}

static CUresult launch(const char *kernel, CUstream s, void **args) {
    return cuLaunchKernel(fn(kernel), 1, 1, 1, 1, 1, 1, 0, s, args, NULL);
}

static unsigned word(CUdeviceptr at) {
    unsigned v = 0xA5A5A5A5u;
    MUST(cuMemcpyDtoH(&v, at, 4));
    return v;
}

static float real(CUdeviceptr at) {
    float v = -1;
    MUST(cuMemcpyDtoH(&v, at, 4));
    return v;
}

/* A 2D float array of 4 x 2, texel (x, y) = 10 y + x. Filled by cuMemcpy2D: the H200
 * refuses cuMemcpyHtoA past an array's first row. */
static CUarray float_array(void) {
    CUDA_ARRAY_DESCRIPTOR d = {4, 2, CU_AD_FORMAT_FLOAT, 1};
    CUarray a;
    MUST(cuArrayCreate(&a, &d));
    float t[8];
    for (int i = 0; i < 8; i++) t[i] = (float)(10 * (i / 4) + i % 4);
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = t;
    c.srcPitch = 4 * sizeof(float);
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    c.dstArray = a;
    c.WidthInBytes = 4 * sizeof(float);
    c.Height = 2;
    MUST(cuMemcpy2D(&c));
    return a;
}

static void sample(float x, float y) {
    void *args[] = {&out, &x, &y};
    MUST(cuMemsetD32(out, 0xA5A5A5A5u, 1));
    CUresult r = CALL("launch read_array", launch("read_array", NULL, args));
    CUresult s = cuCtxSynchronize();
    if (r != CUDA_SUCCESS) return;
    if (s == CUDA_SUCCESS)
        SAY("(%g, %g) -> %g", x, y, real(out));
    else
        SAY("(%g, %g): synchronize %s", x, y, rname(s));
}

static void module_defaults(void) {
    setup();
    CUtexref t = texref(mod, "arr_tex");
    CUarray_format f = (CUarray_format)0xA5;
    int ch = -1;
    if (CALL("get format", cuTexRefGetFormat(&f, &ch, t)) == CUDA_SUCCESS) SAY("format %#x channels %d", (unsigned)f, ch);
    for (int d = 0; d < 4; d++) {
        CUaddress_mode am = (CUaddress_mode)99;
        char what[64];
        snprintf(what, sizeof what, "get address mode %d", d);
        if (CALL(what, cuTexRefGetAddressMode(&am, t, d)) == CUDA_SUCCESS) SAY("mode %d", (int)am);
    }
    CUfilter_mode fm = (CUfilter_mode)99;
    if (CALL("get filter", cuTexRefGetFilterMode(&fm, t)) == CUDA_SUCCESS) SAY("filter %d", (int)fm);
    fm = (CUfilter_mode)99;
    if (CALL("get mipmap filter", cuTexRefGetMipmapFilterMode(&fm, t)) == CUDA_SUCCESS) SAY("mipmap filter %d", (int)fm);
    float bias = -7, lo = -7, hi = -7;
    if (CALL("get bias", cuTexRefGetMipmapLevelBias(&bias, t)) == CUDA_SUCCESS) SAY("bias %g", bias);
    if (CALL("get clamp", cuTexRefGetMipmapLevelClamp(&lo, &hi, t)) == CUDA_SUCCESS) SAY("clamp %g %g", lo, hi);
    int aniso = -1;
    if (CALL("get anisotropy", cuTexRefGetMaxAnisotropy(&aniso, t)) == CUDA_SUCCESS) SAY("anisotropy %d", aniso);
    float border[4] = {-7, -7, -7, -7};
    if (CALL("get border", cuTexRefGetBorderColor(border, t)) == CUDA_SUCCESS)
        SAY("border %g %g %g %g", border[0], border[1], border[2], border[3]);
    unsigned flags = 99;
    if (CALL("get flags", cuTexRefGetFlags(&flags, t)) == CUDA_SUCCESS) SAY("flags %#x", flags);
    CUmipmappedArray mm = (CUmipmappedArray)SENTINEL;
    CALL("get mipmapped array", cuTexRefGetMipmappedArray(&mm, t));
    OUT(mm);
    CUsurfref s;
    MUST(cuModuleGetSurfRef(&s, mod, "surf"));
    CUarray a = (CUarray)SENTINEL;
    CALL("surfref get array", cuSurfRefGetArray(&a, s));
    OUT(a);
    CUtexref again = NULL;
    CALL("get texref arr_tex again", cuModuleGetTexRef(&again, mod, "arr_tex"));
    SAY("the same handle: %s", again == t ? "yes" : "no");
}

static void array_filtering(void) {
    setup();
    CUtexref t = texref(mod, "arr_tex");
    CALL("set array", cuTexRefSetArray(t, float_array(), CU_TRSA_OVERRIDE_FORMAT));
    sample(2.5f, 1.5f);
    sample(2.9f, 1.2f);
    CALL("set filter linear", cuTexRefSetFilterMode(t, CU_TR_FILTER_MODE_LINEAR));
    sample(1.0f, 0.5f);
    sample(3.5f, 1.0f);
    sample(1.2f, 0.5f);
    CALL("set filter point", cuTexRefSetFilterMode(t, CU_TR_FILTER_MODE_POINT));
    CALL("set flags normalized", cuTexRefSetFlags(t, CU_TRSF_NORMALIZED_COORDINATES));
    sample(0.625f, 0.75f);
    CALL("set address mode 0 clamp", cuTexRefSetAddressMode(t, 0, CU_TR_ADDRESS_MODE_CLAMP));
    sample(1.5f, 0.25f);
    CALL("set address mode 0 wrap", cuTexRefSetAddressMode(t, 0, CU_TR_ADDRESS_MODE_WRAP));
    sample(1.125f, 0.25f);
    CALL("set address mode 0 border", cuTexRefSetAddressMode(t, 0, CU_TR_ADDRESS_MODE_BORDER));
    float border[4] = {5, 6, 7, 8};
    CALL("set border", cuTexRefSetBorderColor(t, border));
    sample(1.5f, 0.25f);
    CALL("set flags 0 (unnormalized), wrap", cuTexRefSetFlags(t, 0));
    CALL("set address mode 0 wrap", cuTexRefSetAddressMode(t, 0, CU_TR_ADDRESS_MODE_WRAP));
    sample(5.5f, 0.5f);
}

static void linear_offset(void) {
    setup();
    CUtexref t = texref(mod, "lin_tex");
    unsigned w[16];
    for (int i = 0; i < 16; i++) w[i] = 100 + i;
    MUST(cuMemcpyHtoD(mem, w, sizeof w));
    size_t off = SENTINEL;
    CALL("set address before any format", cuTexRefSetAddress(&off, t, mem, 64));
    OUT(off);
    CALL("set format u32 x1", cuTexRefSetFormat(t, CU_AD_FORMAT_UNSIGNED_INT32, 1));
    CALL("set flags READ_AS_INTEGER", cuTexRefSetFlags(t, CU_TRSF_READ_AS_INTEGER));
    off = SENTINEL;
    CALL("set address", cuTexRefSetAddress(&off, t, mem, 64));
    OUT(off);
    off = SENTINEL;
    CALL("set address + 4", cuTexRefSetAddress(&off, t, mem + 4, 60));
    OUT(off);
    CUdeviceptr at = SENTINEL;
    if (CALL("get address", cuTexRefGetAddress(&at, t)) == CUDA_SUCCESS)
        SAY("address: %s", at == mem + 4 ? "the pointer" : at == mem ? "the aligned base" : "other");
    for (unsigned i = 0; i < 4; i++) {
        void *args[] = {&out, &i};
        CALL("launch read_linear", launch("read_linear", NULL, args));
        CALL("synchronize", cuCtxSynchronize());
        SAY("index %u -> %u", i, word(out));
    }
    CALL("set address 0 (unbind?)", cuTexRefSetAddress(&off, t, 0, 64));
    at = SENTINEL;
    CALL("get address after", cuTexRefGetAddress(&at, t));
    SAY("address is 0: %s", at == 0 ? "yes" : "no");
}

static void format_rules(void) {
    setup();
    CUtexref t = texref(mod, "lin_tex");
    CUDA_ARRAY_DESCRIPTOR d = {4, 2, CU_AD_FORMAT_FLOAT, 1};
    int pa = 0;
    MUST(cuDeviceGetAttribute(&pa, CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT, 0));
    CALL("set address 2D", cuTexRefSetAddress2D(t, &d, mem, (size_t)pa));
    CUarray_format f = (CUarray_format)0xA5;
    int ch = -1;
    if (CALL("get format", cuTexRefGetFormat(&f, &ch, t)) == CUDA_SUCCESS) SAY("format %#x channels %d", (unsigned)f, ch);
    CALL("set format after 2D", cuTexRefSetFormat(t, CU_AD_FORMAT_UNSIGNED_INT32, 1));
    if (CALL("get format", cuTexRefGetFormat(&f, &ch, t)) == CUDA_SUCCESS) SAY("format %#x channels %d", (unsigned)f, ch);
    CALL("set address 2D, dptr + 4", cuTexRefSetAddress2D(t, &d, mem + 4, (size_t)pa));
    CALL("set address 2D, pitch + 4", cuTexRefSetAddress2D(t, &d, mem, (size_t)pa + 4));

    /* An array bound, then a format that is not the array's: what the kernel reads. */
    CUtexref a = texref(mod, "arr_tex");
    CALL("set array", cuTexRefSetArray(a, float_array(), CU_TRSA_OVERRIDE_FORMAT));
    if (CALL("get format", cuTexRefGetFormat(&f, &ch, a)) == CUDA_SUCCESS) SAY("format %#x channels %d", (unsigned)f, ch);
    CALL("set format u8 x1", cuTexRefSetFormat(a, CU_AD_FORMAT_UNSIGNED_INT8, 1));
    if (CALL("get format", cuTexRefGetFormat(&f, &ch, a)) == CUDA_SUCCESS) SAY("format %#x channels %d", (unsigned)f, ch);
    sample(2.5f, 1.5f);
}

static void rebind_after_launch(void) {
    setup();
    CUtexref t = texref(mod, "lin_tex");
    unsigned w[4] = {100, 101, 102, 103}, v[4] = {7, 8, 9, 10};
    MUST(cuMemcpyHtoD(mem, w, sizeof w));
    MUST(cuMemcpyHtoD(mem + 512, v, sizeof v));
    MUST(cuTexRefSetFormat(t, CU_AD_FORMAT_UNSIGNED_INT32, 1));
    MUST(cuTexRefSetFlags(t, CU_TRSF_READ_AS_INTEGER));
    MUST(cuTexRefSetAddress(NULL, t, mem, 16));
    CUstream s;
    MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    /* The flag the waiter spins on is mapped host memory the host writes directly: a
     * cuMemcpyHtoD to device memory never reached it on the H200 (the section timed out). */
    volatile unsigned *host_flag;
    MUST(cuMemHostAlloc((void **)&host_flag, 4, CU_MEMHOSTALLOC_DEVICEMAP));
    *host_flag = 0;
    CUdeviceptr flag;
    MUST(cuMemHostGetDevicePointer(&flag, (void *)host_flag, 0));
    unsigned zero = 0;
    void *wargs[] = {&flag};
    CALL("launch the waiter", launch("wait_for_host", s, wargs));
    CUdeviceptr o1 = out, o2 = out + 4;
    void *a1[] = {&o1, &zero}, *a2[] = {&o2, &zero};
    CALL("launch read_linear", launch("read_linear", s, a1));
    CALL("rebind", cuTexRefSetAddress(NULL, t, mem + 512, 16));
    CALL("launch read_linear again", launch("read_linear", s, a2));
    SAY("stream still waiting: %s", cuStreamQuery(s) == CUDA_ERROR_NOT_READY ? "yes" : "no");
    *host_flag = 1;
    CALL("synchronize", cuStreamSynchronize(s));
    SAY("queued before the rebinding read %u, after %u", word(o1), word(o2));
}

static void other_module(void) {
    setup();
    CUmodule other;
    MUST(cuModuleLoadData(&other, KERNELS));
    CUtexref mine = texref(mod, "arr_tex"), theirs = texref(other, "arr_tex");
    SAY("the same handle: %s", mine == theirs ? "yes" : "no");
    CALL("bind the other module's", cuTexRefSetArray(theirs, float_array(), CU_TRSA_OVERRIDE_FORMAT));
    CUarray got = (CUarray)SENTINEL;
    CALL("get array of this module's", cuTexRefGetArray(&got, mine));
    OUT(got);
    CALL("unload the other module", cuModuleUnload(other));
}

static void handle_and_surface(void) {
    setup();
    CUtexref t = texref(mod, "arr_tex");
    MUST(cuTexRefSetArray(t, float_array(), CU_TRSA_OVERRIDE_FORMAT));
    void *args[] = {&out};
    CALL("launch handle_of", launch("handle_of", NULL, args));
    CALL("synchronize", cuCtxSynchronize());
    SAY("istypep.texref %u istypep.surfref %u texel %g", word(out), word(out + 4), real(out + 8));

    CUsurfref s;
    MUST(cuModuleGetSurfRef(&s, mod, "surf"));
    CUDA_ARRAY3D_DESCRIPTOR d;
    memset(&d, 0, sizeof d);
    d.Width = 4;
    d.Height = 1;
    d.Format = CU_AD_FORMAT_UNSIGNED_INT32;
    d.NumChannels = 1;
    d.Flags = CUDA_ARRAY3D_SURFACE_LDST;
    CUarray a;
    MUST(cuArray3DCreate(&a, &d));
    unsigned v[4] = {1, 2, 3, 4};
    MUST(cuMemcpyHtoA(a, 0, v, sizeof v));
    CALL("surfref set array", cuSurfRefSetArray(s, a, 0));
    unsigned from = 4, to = 12;
    void *sargs[] = {&from, &to};
    CALL("launch surface_step", launch("surface_step", NULL, sargs));
    CALL("synchronize", cuCtxSynchronize());
    MUST(cuMemcpyAtoH(v, a, 0, sizeof v));
    SAY("array %u %u %u %u", v[0], v[1], v[2], v[3]);
}

static void unbound_launch(void) {
    setup();
    MUST(cuMemsetD32(out, 0xA5A5A5A5u, 2));
    void *args[] = {&out};
    CALL("launch read_unbound", launch("read_unbound", NULL, args));
    CUresult r = CALL("synchronize", cuCtxSynchronize());
    if (r == CUDA_SUCCESS) SAY("read %#x %#x", word(out), word(out + 4));
}

static void destroyed_array_launch(void) {
    setup();
    CUtexref t = texref(mod, "arr_tex");
    CUarray a = float_array();
    MUST(cuTexRefSetArray(t, a, CU_TRSA_OVERRIDE_FORMAT));
    CALL("destroy the bound array", cuArrayDestroy(a));
    CUarray got = (CUarray)SENTINEL;
    CALL("get array", cuTexRefGetArray(&got, t));
    SAY("the destroyed array: %s", got == a ? "yes" : "no");
    sample(2.5f, 1.5f);
}

/* Added after format-rules' recording (the H200 read a float array's bytes through a u8
 * reference): a format of as wide elements in other channels (u8 x4), and of wider
 * elements than the bound array's (float x2 over float x1). */
static void format_wider(void) {
    setup();
    CUtexref a = texref(mod, "arr_tex");
    CALL("set array", cuTexRefSetArray(a, float_array(), CU_TRSA_OVERRIDE_FORMAT));
    CALL("set format u8 x4", cuTexRefSetFormat(a, CU_AD_FORMAT_UNSIGNED_INT8, 4));
    sample(2.5f, 1.5f);
    /* Last: where a launch faults, the context is lost. */
    CALL("set format float x2", cuTexRefSetFormat(a, CU_AD_FORMAT_FLOAT, 2));
    sample(1.5f, 1.5f);
}

/* Added after format-wider's recording (float x2 over a 4 x 2 float array read texel (1, 1)
 * as floats 6 and 7, rows 16 bytes apart as the array's): how wide the row is then, in
 * elements of the reference's format (texels 2 and 3 of float x2 lie past the array's
 * row, clamped, in the mock's answer), and float x4, a row's whole bytes an element. */
static void format_wider_edges(void) {
    setup();
    CUtexref a = texref(mod, "arr_tex");
    CALL("set array", cuTexRefSetArray(a, float_array(), CU_TRSA_OVERRIDE_FORMAT));
    CALL("set format float x2", cuTexRefSetFormat(a, CU_AD_FORMAT_FLOAT, 2));
    sample(0.5f, 1.5f);
    sample(2.5f, 0.5f);
    sample(3.5f, 1.5f);
    CALL("set format float x4", cuTexRefSetFormat(a, CU_AD_FORMAT_FLOAT, 4));
    sample(0.5f, 1.5f);
    sample(1.5f, 0.5f);
}

/* Added after destroyed-array-launch's recording (a texture reference is bound to no
 * array once its array is destroyed): a surface reference's and a mipmapped array's. */
static void destroyed_other_bindings(void) {
    setup();
    CUsurfref s;
    MUST(cuModuleGetSurfRef(&s, mod, "surf"));
    CUDA_ARRAY3D_DESCRIPTOR d;
    memset(&d, 0, sizeof d);
    d.Width = 4;
    d.Height = 1;
    d.Format = CU_AD_FORMAT_UNSIGNED_INT32;
    d.NumChannels = 1;
    d.Flags = CUDA_ARRAY3D_SURFACE_LDST;
    CUarray a;
    MUST(cuArray3DCreate(&a, &d));
    MUST(cuSurfRefSetArray(s, a, 0));
    CALL("destroy the surface's array", cuArrayDestroy(a));
    CUarray got = (CUarray)SENTINEL;
    CALL("surfref get array", cuSurfRefGetArray(&got, s));
    SAY("the destroyed array: %s", got == a ? "yes" : got == (CUarray)SENTINEL ? "untouched" : "other");

    CUtexref t = texref(mod, "arr_tex");
    CUDA_ARRAY3D_DESCRIPTOR m;
    memset(&m, 0, sizeof m);
    m.Width = 4;
    m.Height = 4;
    m.Format = CU_AD_FORMAT_FLOAT;
    m.NumChannels = 1;
    CUmipmappedArray mm;
    MUST(cuMipmappedArrayCreate(&mm, &m, 2));
    MUST(cuTexRefSetMipmappedArray(t, mm, CU_TRSA_OVERRIDE_FORMAT));
    CALL("destroy the mipmapped array", cuMipmappedArrayDestroy(mm));
    CUmipmappedArray gm = (CUmipmappedArray)SENTINEL;
    CALL("get mipmapped array", cuTexRefGetMipmappedArray(&gm, t));
    SAY("the destroyed mipmapped array: %s", gm == mm ? "yes" : gm == (CUmipmappedArray)SENTINEL ? "untouched" : "other");
    sample(0.5f, 0.5f);
}

/* A u8 x4 4x4 mipmapped array of 3 levels, made for the sections below. */
static CUmipmappedArray u8x4_mipmapped(void) {
    CUDA_ARRAY3D_DESCRIPTOR m;
    memset(&m, 0, sizeof m);
    m.Width = 4;
    m.Height = 4;
    m.Format = CU_AD_FORMAT_UNSIGNED_INT8;
    m.NumChannels = 4;
    CUmipmappedArray mm;
    MUST(cuMipmappedArrayCreate(&mm, &m, 3));
    return mm;
}

/* The mipmap setters' strictness: which filter modes, biases, clamps, anisotropies and
 * flags each setter takes, and what the getters give back; cuTexRefSetMipmappedArray with
 * flags 0 (cuTexRefSetArray's 0 was taken). */
static void mipmap_setters(void) {
    setup();
    CUtexref t = texref(mod, "arr_tex");
    const int filters[] = {0, 1, 2, 7, -1};
    for (size_t i = 0; i < sizeof filters / sizeof *filters; i++) {
        char what[64];
        snprintf(what, sizeof what, "set mipmap filter %d", filters[i]);
        CALL(what, cuTexRefSetMipmapFilterMode(t, (CUfilter_mode)filters[i]));
        CUfilter_mode fm = (CUfilter_mode)99;
        if (cuTexRefGetMipmapFilterMode(&fm, t) == CUDA_SUCCESS) SAY("  reads back %d", (int)fm);
    }
    const float biases[] = {0.5f, -20.0f, 1e30f, (float)NAN};
    for (size_t i = 0; i < sizeof biases / sizeof *biases; i++) {
        char what[64];
        snprintf(what, sizeof what, "set bias %g", biases[i]);
        CALL(what, cuTexRefSetMipmapLevelBias(t, biases[i]));
        float b = -7;
        if (cuTexRefGetMipmapLevelBias(&b, t) == CUDA_SUCCESS) SAY("  reads back %g", b);
    }
    const float clamps[][2] = {{0, 4}, {4, 0}, {-1, 2}, {0, 1e30f}, {(float)NAN, 1}};
    for (size_t i = 0; i < sizeof clamps / sizeof *clamps; i++) {
        char what[64];
        snprintf(what, sizeof what, "set clamp %g..%g", clamps[i][0], clamps[i][1]);
        CALL(what, cuTexRefSetMipmapLevelClamp(t, clamps[i][0], clamps[i][1]));
        float lo = -7, hi = -7;
        if (cuTexRefGetMipmapLevelClamp(&lo, &hi, t) == CUDA_SUCCESS) SAY("  reads back %g %g", lo, hi);
    }
    const int anisos[] = {0, 1, 16, 17, -1};
    for (size_t i = 0; i < sizeof anisos / sizeof *anisos; i++) {
        char what[64];
        snprintf(what, sizeof what, "set anisotropy %d", anisos[i]);
        CALL(what, cuTexRefSetMaxAnisotropy(t, (unsigned)anisos[i]));
        int a = -7;
        if (cuTexRefGetMaxAnisotropy(&a, t) == CUDA_SUCCESS) SAY("  reads back %d", a);
    }
    const unsigned flags[] = {0, CU_TRSF_READ_AS_INTEGER, CU_TRSF_NORMALIZED_COORDINATES, CU_TRSF_SRGB,
                              CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION, CU_TRSF_SEAMLESS_CUBEMAP, 0x100, 0x80000000u};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) {
        char what[64];
        snprintf(what, sizeof what, "set flags %#x", flags[i]);
        CALL(what, cuTexRefSetFlags(t, flags[i]));
        unsigned f = 99;
        if (cuTexRefGetFlags(&f, t) == CUDA_SUCCESS) SAY("  reads back %#x", f);
    }
    CALL("set flags 0 again", cuTexRefSetFlags(t, 0));
    CUmipmappedArray mm = u8x4_mipmapped();
    CALL("set mipmapped array, flags 0", cuTexRefSetMipmappedArray(t, mm, 0));
    CUarray_format f = (CUarray_format)0xA5;
    int ch = -1;
    if (cuTexRefGetFormat(&f, &ch, t) == CUDA_SUCCESS) SAY("  format %#x channels %d", (unsigned)f, ch);
    CALL("set mipmapped array, flags 2", cuTexRefSetMipmappedArray(t, mm, 2));
    CALL("set mipmapped array, OVERRIDE_FORMAT", cuTexRefSetMipmappedArray(t, mm, CU_TRSA_OVERRIDE_FORMAT));
    if (cuTexRefGetFormat(&f, &ch, t) == CUDA_SUCCESS) SAY("  format %#x channels %d", (unsigned)f, ch);
    cuMipmappedArrayDestroy(mm);
}

/* The H200 crashed (SIGSEGV) on cuTexRefSetMipmappedArray given a plain CUarray's handle,
 * the last question of mipmap-setters as first recorded: alone here, after the binding
 * that section made before it. */
static void mipmap_setters_plain_array_crash(void) {
    setup();
    CUtexref t = texref(mod, "arr_tex");
    CUmipmappedArray mm = u8x4_mipmapped();
    MUST(cuTexRefSetMipmappedArray(t, mm, CU_TRSA_OVERRIDE_FORMAT));
    CUarray plain = float_array();
    CALL("set mipmapped array, a plain array's handle", cuTexRefSetMipmappedArray(t, (CUmipmappedArray)plain, CU_TRSA_OVERRIDE_FORMAT));
    cuArrayDestroy(plain);
    cuMipmappedArrayDestroy(mm);
}

/* A mipmapped array's level bound by cuTexRefSetArray, over the reference's binding of
 * the mipmapped array (asked after the crash above in mipmap-setters as first recorded,
 * so never answered there). */
static void mipmap_level_as_array(void) {
    setup();
    CUtexref t = texref(mod, "arr_tex");
    CUmipmappedArray mm = u8x4_mipmapped();
    MUST(cuTexRefSetMipmappedArray(t, mm, CU_TRSA_OVERRIDE_FORMAT));
    CUarray level0;
    MUST(cuMipmappedArrayGetLevel(&level0, mm, 0));
    CALL("set array, a mipmapped array's level 0", cuTexRefSetArray(t, level0, CU_TRSA_OVERRIDE_FORMAT));
    CUarray got = (CUarray)SENTINEL;
    CALL("get array", cuTexRefGetArray(&got, t));
    SAY("  level 0: %s", got == level0 ? "yes" : got == (CUarray)SENTINEL ? "untouched" : "other");
    CUmipmappedArray gm = (CUmipmappedArray)SENTINEL;
    CALL("get mipmapped array", cuTexRefGetMipmappedArray(&gm, t));
    SAY("  the mipmapped array: %s", gm == mm ? "yes" : gm == (CUmipmappedArray)SENTINEL ? "untouched" : "other");
    cuMipmappedArrayDestroy(mm);
}

/* Level L of `mm` (u8x4_mipmapped's), every texel's channels 10 (L + 1), read as 10 (L + 1)
 * / 255. */
static void fill_levels(CUmipmappedArray mm) {
    for (unsigned l = 0; l < 3; l++) {
        CUarray level;
        MUST(cuMipmappedArrayGetLevel(&level, mm, l));
        unsigned n = 4 >> l;
        unsigned char t[4 * 4 * 4];
        memset(t, (int)(10 * (l + 1)), sizeof t);
        CUDA_MEMCPY2D c;
        memset(&c, 0, sizeof c);
        c.srcMemoryType = CU_MEMORYTYPE_HOST;
        c.srcHost = t;
        c.srcPitch = 4 * n;
        c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
        c.dstArray = level;
        c.WidthInBytes = 4 * n;
        c.Height = n;
        MUST(cuMemcpy2D(&c));
    }
}

/* What the reference is bound to, by its getters. */
static void bound_to(CUtexref t, CUarray a, CUarray level, CUmipmappedArray mm) {
    CUarray got = (CUarray)SENTINEL;
    if (CALL("get array", cuTexRefGetArray(&got, t)) == CUDA_SUCCESS)
        SAY("  %s", got == a ? "the plain array" : got == level ? "the level" : "other");
    CUmipmappedArray gm = (CUmipmappedArray)SENTINEL;
    if (CALL("get mipmapped array", cuTexRefGetMipmappedArray(&gm, t)) == CUDA_SUCCESS)
        SAY("  %s", gm == mm ? "the mipmapped array" : "other");
}

/* mipmap-level-as-array recorded cuTexRefSetArray of a mipmapped array's level 0 taken,
 * the getters answering as for the mipmapped array bound before. What a kernel reads
 * then, at (2.5, 1.5) of arr_tex (levels hold 10 (L + 1) / 255: 0.0392 0.0784 0.118; the
 * float array 10 y + x: 12), after binding a level to a reference never bound, to one bound
 * to a plain float array, and to one bound to the level's mipmapped array (level 1). */
static void mipmap_level_reads(void) {
    setup();
    CUtexref t = texref(mod, "arr_tex");
    CUmipmappedArray mm = u8x4_mipmapped();
    fill_levels(mm);
    CUarray level0, level1;
    MUST(cuMipmappedArrayGetLevel(&level0, mm, 0));
    MUST(cuMipmappedArrayGetLevel(&level1, mm, 1));
    CUarray a = float_array();
    CALL("never bound: set array, level 0", cuTexRefSetArray(t, level0, CU_TRSA_OVERRIDE_FORMAT));
    bound_to(t, a, level0, mm);
    sample(2.5f, 1.5f);
    CALL("set array, the float array", cuTexRefSetArray(t, a, CU_TRSA_OVERRIDE_FORMAT));
    CALL("set array, level 0", cuTexRefSetArray(t, level0, CU_TRSA_OVERRIDE_FORMAT));
    bound_to(t, a, level0, mm);
    sample(2.5f, 1.5f);
    CALL("set mipmapped array", cuTexRefSetMipmappedArray(t, mm, CU_TRSA_OVERRIDE_FORMAT));
    sample(2.5f, 1.5f);
    CALL("set array, level 1", cuTexRefSetArray(t, level1, CU_TRSA_OVERRIDE_FORMAT));
    bound_to(t, a, level1, mm);
    sample(2.5f, 1.5f);
    cuMipmappedArrayDestroy(mm);
    cuArrayDestroy(a);
}

/* CU_TRSF_SEAMLESS_CUBEMAP, refused by cuTexRefSetFlags of an unbound module reference
 * (mipmap-setters), where cuTexObjectCreate takes it over a cubemap (probe arrays,
 * tex-desc-fields): refused by cuTexRefCreate's reference too, and once bound to a
 * cubemap array or a 2D one? */
static void seamless_cubemap_flag(void) {
    setup();
    unsigned f = 99;
    CUtexref c;
    MUST(cuTexRefCreate(&c));
    CALL("created: set flags 0x40", cuTexRefSetFlags(c, CU_TRSF_SEAMLESS_CUBEMAP));
    if (cuTexRefGetFlags(&f, c) == CUDA_SUCCESS) SAY("  reads back %#x", f);
    CUtexref t = texref(mod, "arr_tex");
    CUDA_ARRAY3D_DESCRIPTOR d;
    memset(&d, 0, sizeof d);
    d.Width = 4;
    d.Height = 4;
    d.Depth = 6;
    d.Format = CU_AD_FORMAT_FLOAT;
    d.NumChannels = 1;
    d.Flags = CUDA_ARRAY3D_CUBEMAP;
    CUarray cube;
    MUST(cuArray3DCreate(&cube, &d));
    CALL("set array, a cubemap", cuTexRefSetArray(t, cube, CU_TRSA_OVERRIDE_FORMAT));
    CALL("bound to a cubemap: set flags 0x40", cuTexRefSetFlags(t, CU_TRSF_SEAMLESS_CUBEMAP));
    if (cuTexRefGetFlags(&f, t) == CUDA_SUCCESS) SAY("  reads back %#x", f);
    CALL("set array, 2D", cuTexRefSetArray(t, float_array(), CU_TRSA_OVERRIDE_FORMAT));
    CALL("bound to a 2D array: set flags 0x40", cuTexRefSetFlags(t, CU_TRSF_SEAMLESS_CUBEMAP));
    if (cuTexRefGetFlags(&f, t) == CUDA_SUCCESS) SAY("  reads back %#x", f);
    cuTexRefDestroy(c);
}

static void destroy_module_texref(void) {
    setup();
    CALL("destroy a module's texref", cuTexRefDestroy(texref(mod, "arr_tex")));
    CALL("unload the module", cuModuleUnload(mod));
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    section("module-defaults", module_defaults);
    section("array-filtering", array_filtering);
    section("linear-offset", linear_offset);
    section("format-rules", format_rules);
    section("rebind-after-launch", rebind_after_launch);
    section("other-module", other_module);
    section("handle-and-surface", handle_and_surface);
    section("unbound-launch", unbound_launch);
    section("destroyed-array-launch", destroyed_array_launch);
    section("destroy-module-texref", destroy_module_texref);
    section("format-wider", format_wider);
    section("destroyed-other-bindings", destroyed_other_bindings);
    section("mipmap-setters", mipmap_setters);
    section("mipmap-setters-plain-array-crash", mipmap_setters_plain_array_crash);
    section("mipmap-level-as-array", mipmap_level_as_array);
    section("seamless-cubemap-flag", seamless_cubemap_flag);
    section("format-wider-edges", format_wider_edges);
    section("mipmap-level-reads", mipmap_level_reads);
    return 0;
}
