/* Probe: texel formats whose reads no recording has pinned yet. texture_views.cu and
 * probe views (section bc-view-read-modes) recorded one block of each BC format read
 * through a resource view; the decoder fitted to them (ptx/src/texture/bc.rs) is pinned
 * only at the endpoints those blocks hold. This asks:
 * - norm-arrays: arrays of the UNORM/SNORM 8- and 16-bit formats (CU_AD_FORMAT_UNORM_INT8X1
 *   and kin) read through a plain texture object, flags 0 and CU_TRSF_READ_AS_INTEGER (and
 *   CU_TRSF_SRGB on UNORM_INT8X4): normalized floats or integers;
 * - srgb-u8: every 8-bit value of a u8x4 array read with CU_TRSF_SRGB (the BC1 reads were
 *   rounded to 8 significant bits: is a u8 texture's sRGB decode the same);
 * - bc-arrays: arrays of the BC formats (CU_AD_FORMAT_BC1_UNORM and kin): whether a block
 *   copies in, and what a plain texture object over one reads, flags 0, READ_AS_INTEGER
 *   and SRGB;
 * - bc-blends: BC views of blocks whose endpoints are not 0 and 255: BC4/BC5 and BC3's
 *   alpha at other differences, signed -128, BC1 with mid-range endpoints, BC2/BC3
 *   colours whose first endpoint is not the greater;
 * - bc-srgb: CU_TRSF_SRGB through BC2, BC3, BC7, BC4 and BC6H views;
 * - bc-linear: linear filtering between decoded BC texels (weights 1/2 and 1/4);
 * - and later sections, each with its question above it (norm-linear: the precision of
 *   linear filtering of each channel type; norm-views: resource views over UNORM/SNORM
 *   and R10G10B10A2 arrays).
 * Texels are read by a PTX kernel and printed bit for bit, 16 a line. */
#include "probe.h"

static const char *PTX =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    /* Thread t reads texel (t % w, t / w) by integer coordinates. */
    ".visible .entry read2d(.param .u64 tex, .param .u64 out, .param .u32 w, .param .u32 n)\n"
    "{\n"
    "  .reg .b32 %r<8>; .reg .b64 %rd<8>; .reg .f32 %f<5>; .reg .pred %p;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  ld.param.u32 %r2, [n];\n"
    "  setp.ge.u32 %p, %r1, %r2;\n"
    "  @%p bra DONE;\n"
    "  ld.param.u32 %r3, [w];\n"
    "  rem.u32 %r4, %r1, %r3;\n"
    "  div.u32 %r5, %r1, %r3;\n"
    "  ld.param.u64 %rd1, [tex];\n"
    "  tex.2d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [%rd1, {%r4, %r5}];\n"
    "  ld.param.u64 %rd2, [out];\n"
    "  cvta.to.global.u64 %rd3, %rd2;\n"
    "  mul.wide.u32 %rd4, %r1, 16;\n"
    "  add.s64 %rd5, %rd3, %rd4;\n"
    "  st.global.v4.f32 [%rd5], {%f1, %f2, %f3, %f4};\n"
    "DONE:\n"
    "  ret;\n"
    "}\n"
    /* Thread t samples at unnormalized (t % w + dx, t / w + 0.5). */
    ".visible .entry sample2d(.param .u64 tex, .param .u64 out, .param .u32 w, .param .u32 n,\n"
    "                         .param .f32 dx)\n"
    "{\n"
    "  .reg .b32 %r<8>; .reg .b64 %rd<8>; .reg .f32 %f<10>; .reg .pred %p;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  ld.param.u32 %r2, [n];\n"
    "  setp.ge.u32 %p, %r1, %r2;\n"
    "  @%p bra DONE;\n"
    "  ld.param.u32 %r3, [w];\n"
    "  rem.u32 %r4, %r1, %r3;\n"
    "  div.u32 %r5, %r1, %r3;\n"
    "  cvt.rn.f32.u32 %f5, %r4;\n"
    "  cvt.rn.f32.u32 %f6, %r5;\n"
    "  ld.param.f32 %f7, [dx];\n"
    "  add.f32 %f5, %f5, %f7;\n"
    "  add.f32 %f6, %f6, 0f3F000000;\n"
    "  ld.param.u64 %rd1, [tex];\n"
    "  tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}];\n"
    "  ld.param.u64 %rd2, [out];\n"
    "  cvta.to.global.u64 %rd3, %rd2;\n"
    "  mul.wide.u32 %rd4, %r1, 16;\n"
    "  add.s64 %rd5, %rd3, %rd4;\n"
    "  st.global.v4.f32 [%rd5], {%f1, %f2, %f3, %f4};\n"
    "DONE:\n"
    "  ret;\n"
    "}\n"
    /* Thread t samples at unnormalized (x + t * sx, y + t * sy). */
    ".visible .entry sample_line(.param .u64 tex, .param .u64 out, .param .u32 n, .param .f32 x,\n"
    "                            .param .f32 y, .param .f32 sx, .param .f32 sy)\n"
    "{\n"
    "  .reg .b32 %r<4>; .reg .b64 %rd<8>; .reg .f32 %f<12>; .reg .pred %p;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  ld.param.u32 %r2, [n];\n"
    "  setp.ge.u32 %p, %r1, %r2;\n"
    "  @%p bra DONE;\n"
    "  cvt.rn.f32.u32 %f5, %r1;\n"
    "  ld.param.f32 %f6, [x];\n"
    "  ld.param.f32 %f7, [y];\n"
    "  ld.param.f32 %f8, [sx];\n"
    "  ld.param.f32 %f9, [sy];\n"
    "  fma.rn.f32 %f6, %f5, %f8, %f6;\n"
    "  fma.rn.f32 %f7, %f5, %f9, %f7;\n"
    "  ld.param.u64 %rd1, [tex];\n"
    "  tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f6, %f7}];\n"
    "  ld.param.u64 %rd2, [out];\n"
    "  cvta.to.global.u64 %rd3, %rd2;\n"
    "  mul.wide.u32 %rd4, %r1, 16;\n"
    "  add.s64 %rd5, %rd3, %rd4;\n"
    "  st.global.v4.f32 [%rd5], {%f1, %f2, %f3, %f4};\n"
    "DONE:\n"
    "  ret;\n"
    "}\n";

#define MAX_TEXELS 64

static CUmodule mod;
static CUdeviceptr out;

static void setup(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    MUST(cuModuleLoadData(&mod, PTX));
    MUST(cuMemAlloc(&out, MAX_TEXELS * 16));
}

static CUDA_TEXTURE_DESC point(unsigned flags) {
    CUDA_TEXTURE_DESC t;
    memset(&t, 0, sizeof t);
    t.addressMode[0] = t.addressMode[1] = t.addressMode[2] = CU_TR_ADDRESS_MODE_CLAMP;
    t.filterMode = CU_TR_FILTER_MODE_POINT;
    t.flags = flags;
    t.maxMipmapLevelClamp = 100;
    return t;
}

static CUDA_RESOURCE_DESC over_array(CUarray a) {
    CUDA_RESOURCE_DESC r;
    memset(&r, 0, sizeof r);
    r.resType = CU_RESOURCE_TYPE_ARRAY;
    r.res.array.hArray = a;
    return r;
}

static CUarray array2(size_t w, size_t h, CUarray_format f, unsigned ch) {
    CUDA_ARRAY3D_DESCRIPTOR a;
    memset(&a, 0, sizeof a);
    a.Width = w;
    a.Height = h;
    a.Format = f;
    a.NumChannels = ch;
    CUarray arr = NULL;
    if (CALL("cuArray3DCreate", cuArray3DCreate(&arr, &a)) != CUDA_SUCCESS) return NULL;
    return arr;
}

/* Copies `rows` rows of `row_bytes` into the array (cuMemcpyHtoA is for 1D arrays only on
 * the H200); said as `what`. */
static CUresult to_array(const char *what, CUarray a, const void *host, size_t row_bytes, size_t rows) {
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = host;
    c.srcPitch = row_bytes;
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    c.dstArray = a;
    c.WidthInBytes = row_bytes;
    c.Height = rows;
    return CALL(what, cuMemcpy2D(&c));
}

/* Prints n texels from `out`, 16 a line. */
static void print_texels(unsigned n) {
    uint32_t host[MAX_TEXELS * 4];
    MUST(cuCtxSynchronize());
    MUST(cuMemcpyDtoH(host, out, (size_t)n * 16));
    for (unsigned t = 0; t < n; t += 16) {
        printf("  texels %u..%u:", t, (t + 16 < n ? t + 16 : n) - 1);
        for (unsigned i = 4 * t; i < 4 * (t + 16) && i < 4 * n; i++) printf(" %08x", host[i]);
        printf("\n");
    }
    fflush(stdout);
}

/* Reads w x h texels of `tex` by integer coordinates and prints them. */
static void read_texels(CUtexObject tex, unsigned w, unsigned h) {
    CUfunction f;
    MUST(cuModuleGetFunction(&f, mod, "read2d"));
    MUST(cuMemsetD8(out, 0, MAX_TEXELS * 16));
    unsigned n = w * h;
    void *args[] = {&tex, &out, &w, &n};
    if (CALL("launch read2d", cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, NULL, args, NULL)) == CUDA_SUCCESS)
        print_texels(n);
}

/* Samples w x h points of `tex`, each `dx` right of a texel's left edge, and prints them. */
static void sample_texels(CUtexObject tex, unsigned w, unsigned h, float dx) {
    CUfunction f;
    MUST(cuModuleGetFunction(&f, mod, "sample2d"));
    MUST(cuMemsetD8(out, 0, MAX_TEXELS * 16));
    unsigned n = w * h;
    void *args[] = {&tex, &out, &w, &n, &dx};
    if (CALL("launch sample2d", cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, NULL, args, NULL)) == CUDA_SUCCESS)
        print_texels(n);
}

/* Samples n points of `tex` along a line, from unnormalized (x, y) in steps (sx, sy), and
 * prints them. */
static void sample_line(CUtexObject tex, unsigned n, float x, float y, float sx, float sy) {
    CUfunction f;
    MUST(cuModuleGetFunction(&f, mod, "sample_line"));
    MUST(cuMemsetD8(out, 0, MAX_TEXELS * 16));
    void *args[] = {&tex, &out, &n, &x, &y, &sx, &sy};
    if (CALL("launch sample_line", cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, NULL, args, NULL)) == CUDA_SUCCESS)
        print_texels(n);
}

/* A texture object over `r` (with view `v`, or none), said as `what`, its w x h texels
 * read by integer coordinates. */
static void read_object(const char *what, CUDA_RESOURCE_DESC r, CUDA_TEXTURE_DESC t, const CUDA_RESOURCE_VIEW_DESC *v,
                        unsigned w, unsigned h) {
    CUtexObject o;
    if (CALL(what, cuTexObjectCreate(&o, &r, &t, v)) == CUDA_SUCCESS) {
        read_texels(o, w, h);
        cuTexObjectDestroy(o);
    }
}

static const struct {
    CUarray_format f;
    unsigned channels, bytes;
    const char *name;
} NORM[] = {
    {CU_AD_FORMAT_UNORM_INT8X1, 1, 1, "UNORM_INT8X1"},   {CU_AD_FORMAT_UNORM_INT8X2, 2, 2, "UNORM_INT8X2"},
    {CU_AD_FORMAT_UNORM_INT8X4, 4, 4, "UNORM_INT8X4"},   {CU_AD_FORMAT_SNORM_INT8X1, 1, 1, "SNORM_INT8X1"},
    {CU_AD_FORMAT_SNORM_INT8X4, 4, 4, "SNORM_INT8X4"},   {CU_AD_FORMAT_UNORM_INT16X1, 1, 2, "UNORM_INT16X1"},
    {CU_AD_FORMAT_UNORM_INT16X2, 2, 4, "UNORM_INT16X2"}, {CU_AD_FORMAT_UNORM_INT16X4, 4, 8, "UNORM_INT16X4"},
    {CU_AD_FORMAT_SNORM_INT16X1, 1, 2, "SNORM_INT16X1"}, {CU_AD_FORMAT_SNORM_INT16X4, 4, 8, "SNORM_INT16X4"},
};

/* Four texels of each UNORM/SNORM format (bytes 00 01 7f 80 81 fe ff 40 ... repeating),
 * read with flags 0 and READ_AS_INTEGER, and with SRGB where 8-bit unsigned. */
static void norm_arrays(void) {
    setup();
    static const uint8_t bytes[32] = {0x00, 0x01, 0x7f, 0x80, 0x81, 0xfe, 0xff, 0x40, 0x00, 0x80, 0xff,
                                      0x7f, 0x01, 0x00, 0x55, 0xaa, 0x33, 0xcc, 0x02, 0xfd, 0x10, 0xef,
                                      0x9a, 0x65, 0x00, 0x00, 0xff, 0xff, 0x80, 0x7f, 0x01, 0x81};
    for (unsigned i = 0; i < sizeof NORM / sizeof NORM[0]; i++) {
        printf("%s\n", NORM[i].name);
        CUarray a = array2(4, 1, NORM[i].f, NORM[i].channels);
        if (!a) continue;
        if (to_array("copy in", a, bytes, 4 * NORM[i].bytes, 1) == CUDA_SUCCESS) {
            CUDA_RESOURCE_DESC r = over_array(a);
            read_object("flags 0", r, point(0), NULL, 4, 1);
            read_object("READ_AS_INTEGER", r, point(CU_TRSF_READ_AS_INTEGER), NULL, 4, 1);
            if (NORM[i].f == CU_AD_FORMAT_UNORM_INT8X4) read_object("SRGB", r, point(CU_TRSF_SRGB), NULL, 4, 1);
        }
        cuArrayDestroy(a);
    }
}

/* Every 8-bit value through a u8x4 array read as normalized floats with SRGB: texel i of
 * the first read holds 4i .. 4i+3, of the second 4i+3 in red, green and blue (alpha 0). */
static void srgb_u8(void) {
    setup();
    uint8_t bytes[2][MAX_TEXELS * 4];
    for (unsigned i = 0; i < MAX_TEXELS; i++)
        for (unsigned c = 0; c < 4; c++) {
            bytes[0][4 * i + c] = (uint8_t)(4 * i + c);
            bytes[1][4 * i + c] = c < 3 ? (uint8_t)(4 * i + 3) : 0;
        }
    for (unsigned k = 0; k < 2; k++) {
        CUarray a = array2(MAX_TEXELS, 1, CU_AD_FORMAT_UNSIGNED_INT8, 4);
        if (!a) continue;
        if (to_array("copy in", a, bytes[k], sizeof bytes[k], 1) == CUDA_SUCCESS)
            read_object(k == 0 ? "values 4i..4i+3, SRGB" : "values 4i+3, SRGB", over_array(a), point(CU_TRSF_SRGB),
                        NULL, MAX_TEXELS, 1);
        cuArrayDestroy(a);
    }
}

static const uint32_t BLOCK16[4] = {0x12345643u, 0x9abcdef0u, 0x0f1e2d3cu, 0x8796a5b4u};
static const uint32_t BC1_FOUR[2] = {0x0000ffffu, 0xe4e4e4e4u};
static const uint32_t BC4_BLOCK[2] = {0xc68800ffu, 0xfac688fau};
static const uint32_t BC5_BLOCK[4] = {0xc68800ffu, 0xfac688fau, 0xc6883214u, 0xfac688fau};
static const uint32_t BC3_BLOCK[4] = {0xc68800ffu, 0xfac688fau, 0x07e0f800u, 0x1b1b1b1bu};
static const uint32_t BC2_BLOCK[4] = {0x76543210u, 0xfedcba98u, 0x0000ffffu, 0xe4e4e4e4u};

/* One block of each BC array format (the blocks texture_views.cu read through views),
 * copied in as one row of one block, then read through a plain texture object. */
static void bc_arrays(void) {
    setup();
    static const struct {
        CUarray_format f;
        unsigned channels;
        const char *name;
        const uint32_t *block;
        unsigned words;
    } bc[] = {
        {CU_AD_FORMAT_BC1_UNORM, 4, "BC1_UNORM", BC1_FOUR, 2},
        {CU_AD_FORMAT_BC1_UNORM_SRGB, 4, "BC1_UNORM_SRGB", BC1_FOUR, 2},
        {CU_AD_FORMAT_BC2_UNORM, 4, "BC2_UNORM", BC2_BLOCK, 4},
        {CU_AD_FORMAT_BC3_UNORM, 4, "BC3_UNORM", BC3_BLOCK, 4},
        {CU_AD_FORMAT_BC4_UNORM, 1, "BC4_UNORM", BC4_BLOCK, 2},
        {CU_AD_FORMAT_BC4_SNORM, 1, "BC4_SNORM", BC4_BLOCK, 2},
        {CU_AD_FORMAT_BC5_UNORM, 2, "BC5_UNORM", BC5_BLOCK, 4},
        {CU_AD_FORMAT_BC6H_UF16, 3, "BC6H_UF16", BLOCK16, 4},
        {CU_AD_FORMAT_BC6H_SF16, 3, "BC6H_SF16", BLOCK16, 4},
        {CU_AD_FORMAT_BC7_UNORM, 4, "BC7_UNORM", BLOCK16, 4},
        {CU_AD_FORMAT_BC7_UNORM_SRGB, 4, "BC7_UNORM_SRGB", BLOCK16, 4},
    };
    for (unsigned i = 0; i < sizeof bc / sizeof bc[0]; i++) {
        printf("%s\n", bc[i].name);
        CUarray a = array2(4, 4, bc[i].f, bc[i].channels);
        if (!a) continue;
        /* One row of one block; failing that, the block's bytes as 4 rows (of texels). */
        uint32_t four[16];
        for (unsigned k = 0; k < 4; k++) memcpy(four + k * bc[i].words, bc[i].block, 4 * bc[i].words);
        if (to_array("copy in one block", a, bc[i].block, 4 * bc[i].words, 1) == CUDA_SUCCESS ||
            to_array("copy in 4 rows of a block's bytes", a, four, 4 * bc[i].words, 4) == CUDA_SUCCESS) {
            CUDA_RESOURCE_DESC r = over_array(a);
            read_object("flags 0", r, point(0), NULL, 4, 4);
            read_object("READ_AS_INTEGER", r, point(CU_TRSF_READ_AS_INTEGER), NULL, 4, 4);
            read_object("SRGB", r, point(CU_TRSF_SRGB), NULL, 4, 4);
        }
        cuArrayDestroy(a);
    }
}

/* One block through a 4 x 4 BC view of a 1 x 1 u32 array of 2 or 4 channels. */
static void bc_view(const char *what, CUresourceViewFormat f, const uint32_t *block, unsigned words,
                    CUDA_TEXTURE_DESC t, float dx) {
    printf("%s\n", what);
    CUarray a = array2(1, 1, CU_AD_FORMAT_UNSIGNED_INT32, words);
    if (!a) return;
    if (to_array("copy in", a, block, 4 * words, 1) == CUDA_SUCCESS) {
        CUDA_RESOURCE_DESC r = over_array(a);
        CUDA_RESOURCE_VIEW_DESC v;
        memset(&v, 0, sizeof v);
        v.format = f;
        v.width = 4;
        v.height = 4;
        CUtexObject o;
        if (CALL("view", cuTexObjectCreate(&o, &r, &t, &v)) == CUDA_SUCCESS) {
            if (t.filterMode == CU_TR_FILTER_MODE_LINEAR)
                sample_texels(o, 4, 4, dx);
            else
                read_texels(o, 4, 4);
            cuTexObjectDestroy(o);
        }
    }
    cuArrayDestroy(a);
}

/* A channel block (BC4, or BC3's alpha) of endpoints e0 and e1, texel t of index t % 8. */
static void channel_block(uint32_t block[2], uint8_t e0, uint8_t e1) {
    block[0] = 0xc6880000u | (uint32_t)e1 << 8 | e0;
    block[1] = 0xfac688fau;
}

static void bc_blends(void) {
    setup();
    CUDA_TEXTURE_DESC t = point(0);
    /* BC4 and BC3's alpha at endpoint pairs of other differences (eight and six values). */
    static const uint8_t pairs[][2] = {{200, 13}, {13, 200}, {129, 128}, {128, 129}, {100, 37}, {255, 254}, {3, 0}};
    char what[96];
    for (unsigned i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        uint32_t b4[2], b3[4];
        channel_block(b4, pairs[i][0], pairs[i][1]);
        snprintf(what, sizeof what, "BC4 unsigned %u %u", pairs[i][0], pairs[i][1]);
        bc_view(what, CU_RES_VIEW_FORMAT_UNSIGNED_BC4, b4, 2, t, 0);
        snprintf(what, sizeof what, "BC4 signed %d %d", (int8_t)pairs[i][0], (int8_t)pairs[i][1]);
        bc_view(what, CU_RES_VIEW_FORMAT_SIGNED_BC4, b4, 2, t, 0);
        channel_block(b3, pairs[i][0], pairs[i][1]);
        b3[2] = 0x07e0f800u;
        b3[3] = 0x1b1b1b1bu;
        snprintf(what, sizeof what, "BC3 alpha %u %u", pairs[i][0], pairs[i][1]);
        bc_view(what, CU_RES_VIEW_FORMAT_UNSIGNED_BC3, b3, 4, t, 0);
    }
    /* Signed endpoints -128 (0x80) with 127 and with -127: does -128 read as -127. */
    static const uint8_t signed_pairs[][2] = {{0x80, 0x7f}, {0x7f, 0x80}, {0x80, 0x81}, {0x30, 0xe5}};
    for (unsigned i = 0; i < sizeof signed_pairs / sizeof signed_pairs[0]; i++) {
        uint32_t b4[2], b5[4];
        channel_block(b4, signed_pairs[i][0], signed_pairs[i][1]);
        snprintf(what, sizeof what, "BC4 signed %d %d", (int8_t)signed_pairs[i][0], (int8_t)signed_pairs[i][1]);
        bc_view(what, CU_RES_VIEW_FORMAT_SIGNED_BC4, b4, 2, t, 0);
        channel_block(b5, signed_pairs[i][0], signed_pairs[i][1]);
        channel_block(b5 + 2, signed_pairs[i][1], signed_pairs[i][0]);
        snprintf(what, sizeof what, "BC5 signed %d %d / %d %d", (int8_t)signed_pairs[i][0],
                 (int8_t)signed_pairs[i][1], (int8_t)signed_pairs[i][1], (int8_t)signed_pairs[i][0]);
        bc_view(what, CU_RES_VIEW_FORMAT_SIGNED_BC5, b5, 4, t, 0);
    }
    /* BC1 with mid-range 5:6:5 endpoints, four and three colours (indices 0..3 a row). */
    static const uint32_t bc1[][2] = {
        {0x1a2bc9e4u, 0xe4e4e4e4u}, /* c0 (25, 15, 4) > c1 (3, 17, 11) */
        {0xc9e41a2bu, 0xe4e4e4e4u}, /* the same swapped: three colours */
        {0x8410739cu, 0xe4e4e4e4u}, /* neighbouring greys */
        {0x0821f7beu, 0xe4e4e4e4u},
        {0x07ff0000u, 0xe4e4e4e4u}, /* black < cyan: three colours */
    };
    for (unsigned i = 0; i < sizeof bc1 / sizeof bc1[0]; i++) {
        snprintf(what, sizeof what, "BC1 %08x %08x", bc1[i][0], bc1[i][1]);
        bc_view(what, CU_RES_VIEW_FORMAT_UNSIGNED_BC1, bc1[i], 2, t, 0);
        /* BC2 and BC3 with the same colour block: four colours whatever the order. */
        uint32_t b2[4] = {0x76543210u, 0xfedcba98u, bc1[i][0], bc1[i][1]};
        snprintf(what, sizeof what, "BC2 colours %08x %08x", bc1[i][0], bc1[i][1]);
        bc_view(what, CU_RES_VIEW_FORMAT_UNSIGNED_BC2, b2, 4, t, 0);
        uint32_t b3[4] = {0xc68800ffu, 0xfac688fau, bc1[i][0], bc1[i][1]};
        snprintf(what, sizeof what, "BC3 colours %08x %08x", bc1[i][0], bc1[i][1]);
        bc_view(what, CU_RES_VIEW_FORMAT_UNSIGNED_BC3, b3, 4, t, 0);
    }
}

static void bc_srgb(void) {
    setup();
    CUDA_TEXTURE_DESC t = point(CU_TRSF_SRGB);
    static const uint32_t mid[2] = {0x1a2bc9e4u, 0xe4e4e4e4u};
    bc_view("BC1 mid-range, SRGB", CU_RES_VIEW_FORMAT_UNSIGNED_BC1, mid, 2, t, 0);
    bc_view("BC2, SRGB", CU_RES_VIEW_FORMAT_UNSIGNED_BC2, BC2_BLOCK, 4, t, 0);
    bc_view("BC3, SRGB", CU_RES_VIEW_FORMAT_UNSIGNED_BC3, BC3_BLOCK, 4, t, 0);
    bc_view("BC4 unsigned, SRGB", CU_RES_VIEW_FORMAT_UNSIGNED_BC4, BC4_BLOCK, 2, t, 0);
    bc_view("BC5 unsigned, SRGB", CU_RES_VIEW_FORMAT_UNSIGNED_BC5, BC5_BLOCK, 4, t, 0);
    bc_view("BC6H unsigned, SRGB", CU_RES_VIEW_FORMAT_UNSIGNED_BC6H, BLOCK16, 4, t, 0);
    bc_view("BC7, SRGB", CU_RES_VIEW_FORMAT_UNSIGNED_BC7, BLOCK16, 4, t, 0);
}

/* Linear filtering inside one block: each sample dx right of a texel's left edge, half
 * a texel down, so 1.0 blends texels x and x + 1 by halves and 0.75 by 3/4 and 1/4. */
static void bc_linear(void) {
    setup();
    CUDA_TEXTURE_DESC t = point(0);
    t.filterMode = CU_TR_FILTER_MODE_LINEAR;
    static const float dxs[] = {1.0f, 0.75f};
    char what[64];
    for (unsigned i = 0; i < 2; i++) {
        snprintf(what, sizeof what, "BC1, linear, dx %g", dxs[i]);
        bc_view(what, CU_RES_VIEW_FORMAT_UNSIGNED_BC1, BC1_FOUR, 2, t, dxs[i]);
        snprintf(what, sizeof what, "BC4 unsigned, linear, dx %g", dxs[i]);
        bc_view(what, CU_RES_VIEW_FORMAT_UNSIGNED_BC4, BC4_BLOCK, 2, t, dxs[i]);
        snprintf(what, sizeof what, "BC4 signed, linear, dx %g", dxs[i]);
        bc_view(what, CU_RES_VIEW_FORMAT_SIGNED_BC4, BC4_BLOCK, 2, t, dxs[i]);
        snprintf(what, sizeof what, "BC6H unsigned, linear, dx %g", dxs[i]);
        bc_view(what, CU_RES_VIEW_FORMAT_UNSIGNED_BC6H, BLOCK16, 4, t, dxs[i]);
        snprintf(what, sizeof what, "BC7, linear, dx %g", dxs[i]);
        bc_view(what, CU_RES_VIEW_FORMAT_UNSIGNED_BC7, BLOCK16, 4, t, dxs[i]);
    }
}

/* A BC7 mode 6 block (one subset, 7-bit endpoints with a p-bit each, 4-bit indices) from
 * endpoint e0 (p-bit 1) to e1 (p-bit 0), texel i of index i. */
static void bc7_mode6(uint32_t block[4], const uint8_t e0[4], const uint8_t e1[4]) {
    memset(block, 0, 16);
    unsigned at = 0;
#define PUT(value, bits)                                                     \
    do {                                                                     \
        for (unsigned b_ = 0; b_ < (bits); b_++, at++)                       \
            if (((value) >> b_) & 1u) block[at / 32] |= 1u << (at % 32);     \
    } while (0)
    PUT(1u << 6, 7);
    for (unsigned c = 0; c < 4; c++) {
        PUT((unsigned)e0[c] >> 1, 7);
        PUT((unsigned)e1[c] >> 1, 7);
    }
    PUT(1u, 1);
    PUT(0u, 1);
    PUT(0u, 3); /* texel 0's index, its top bit implied 0 */
    for (unsigned i = 1; i < 16; i++) PUT(i, 4);
#undef PUT
}

/* Arrays of 6 x 5 texels, a width and height no multiple of a block's 4, of BC1 and BC7:
 * whether they are made and with which extent, which copies in take (rows of blocks: 2
 * rows of 2 blocks; 5 rows, one a texel row), and what 8 x 8 texels read, the 2 x 2
 * blocks' texels past 6 x 5 included. Block k (k = 2 * row + column) of the first two
 * rows goes from colour k (white, red, green, blue) to black; the rows a 5-row copy
 * adds are grey. */
static void bc_partial_blocks(void) {
    setup();
    static const uint16_t bc1_colour[4] = {0xffff, 0xf800, 0x07e0, 0x001f};
    static const uint8_t rgba[5][4] = {
        {255, 255, 255, 255}, {255, 0, 0, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}, {128, 128, 128, 128}};
    static const uint8_t black[4] = {0, 0, 0, 0};
    for (unsigned bc7 = 0; bc7 < 2; bc7++) {
        printf("%s 6 x 5\n", bc7 ? "BC7_UNORM" : "BC1_UNORM");
        unsigned words = bc7 ? 4 : 2;
        CUarray a = array2(6, 5, bc7 ? CU_AD_FORMAT_BC7_UNORM : CU_AD_FORMAT_BC1_UNORM, 4);
        if (!a) continue;
        CUDA_ARRAY3D_DESCRIPTOR d;
        FILL(d);
        if (CALL("cuArray3DGetDescriptor", cuArray3DGetDescriptor(&d, a)) == CUDA_SUCCESS)
            SAY("%zu x %zu x %zu format 0x%x channels %u flags 0x%x", d.Width, d.Height, d.Depth, (unsigned)d.Format,
                d.NumChannels, d.Flags);
        /* Five rows of two blocks; the first two are the array's two rows of blocks. */
        uint32_t blocks[5][2][4];
        for (unsigned row = 0; row < 5; row++)
            for (unsigned col = 0; col < 2; col++) {
                unsigned k = row < 2 ? 2 * row + col : 4;
                if (bc7) {
                    bc7_mode6(blocks[row][col], rgba[k], black);
                } else {
                    blocks[row][col][0] = k < 4 ? bc1_colour[k] : 0x8410u;
                    blocks[row][col][1] = 0xe4e4e4e4u;
                }
            }
        /* Packed rows: 2 blocks of `words` words. */
        uint32_t packed[5 * 2 * 4];
        for (unsigned row = 0; row < 5; row++)
            for (unsigned col = 0; col < 2; col++)
                memcpy(packed + (row * 2 + col) * words, blocks[row][col], 4 * words);
        to_array("copy in 5 rows of 2 blocks", a, packed, 2 * 4 * words, 5);
        if (to_array("copy in 2 rows of 2 blocks", a, packed, 2 * 4 * words, 2) == CUDA_SUCCESS) {
            read_object("flags 0", over_array(a), point(0), NULL, 8, 8);
        }
        cuArrayDestroy(a);
    }
}

/* sRGB over 16-bit channels: UNORM_INT16X4 and X1 arrays and u16 arrays of 4 and 1
 * channels read as normalized floats, flags 0 and CU_TRSF_SRGB. Texel i holds value i of
 * 16 in every channel (alpha, not decoded, shows it linear): values whose high bytes are
 * equal and low bytes differ tell a decode of the high byte from one of all 16 bits. */
static void srgb_16_bit(void) {
    setup();
    static const uint16_t values[16] = {0x0000, 0x0001, 0x00ff, 0x0100, 0x0180, 0x01ff, 0x0200, 0x4000,
                                        0x4080, 0x40ff, 0x8000, 0x8080, 0xbc00, 0xfeff, 0xff00, 0xffff};
    static const struct {
        CUarray_format f;
        unsigned channels;
        const char *name;
    } formats[] = {
        {CU_AD_FORMAT_UNORM_INT16X4, 4, "UNORM_INT16X4"},
        {CU_AD_FORMAT_UNORM_INT16X1, 1, "UNORM_INT16X1"},
        {CU_AD_FORMAT_UNSIGNED_INT16, 4, "UNSIGNED_INT16 x 4"},
        {CU_AD_FORMAT_UNSIGNED_INT16, 1, "UNSIGNED_INT16 x 1"},
    };
    for (unsigned i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        printf("%s\n", formats[i].name);
        unsigned ch = formats[i].channels;
        uint16_t host[16 * 4];
        for (unsigned t = 0; t < 16; t++)
            for (unsigned c = 0; c < ch; c++) host[t * ch + c] = values[t];
        CUarray a = array2(16, 1, formats[i].f, ch);
        if (!a) continue;
        if (to_array("copy in", a, host, 16 * 2 * ch, 1) == CUDA_SUCCESS) {
            read_object("flags 0", over_array(a), point(0), NULL, 16, 1);
            read_object("SRGB", over_array(a), point(CU_TRSF_SRGB), NULL, 16, 1);
        }
        cuArrayDestroy(a);
    }
}

/* CU_TRSF_SRGB with linear filtering: is the blend of two texels taken before the sRGB
 * decode or after it. An 8 x 1 u8x4 array (texel i holds v[i] in every channel, alpha
 * not decoded) sampled between texels by halves (dx 1) and 3/4 and 1/4 (dx 0.75), and
 * read point for the decoded texels; then BC1's four-colour block (white, black, 2/3,
 * 1/3 along each row) through a BC1 view and in BC1_UNORM and BC1_UNORM_SRGB arrays. */
static void srgb_linear(void) {
    setup();
    static const uint8_t v[8] = {0, 255, 0, 128, 64, 192, 10, 250};
    uint8_t bytes[8 * 4];
    for (unsigned i = 0; i < 8; i++) memset(bytes + 4 * i, v[i], 4);
    CUDA_TEXTURE_DESC t = point(CU_TRSF_SRGB);
    t.filterMode = CU_TR_FILTER_MODE_LINEAR;
    static const float dxs[] = {1.0f, 0.75f};
    printf("u8x4 0 255 0 128 64 192 10 250\n");
    CUarray a = array2(8, 1, CU_AD_FORMAT_UNSIGNED_INT8, 4);
    if (a && to_array("copy in", a, bytes, sizeof bytes, 1) == CUDA_SUCCESS) {
        read_object("SRGB, point", over_array(a), point(CU_TRSF_SRGB), NULL, 8, 1);
        CUtexObject o;
        CUDA_RESOURCE_DESC r = over_array(a);
        if (CALL("SRGB, linear", cuTexObjectCreate(&o, &r, &t, NULL)) == CUDA_SUCCESS) {
            for (unsigned i = 0; i < 2; i++) {
                printf("dx %g\n", dxs[i]);
                sample_texels(o, 8, 1, dxs[i]);
            }
            cuTexObjectDestroy(o);
        }
    }
    if (a) cuArrayDestroy(a);
    char what[64];
    for (unsigned i = 0; i < 2; i++) {
        snprintf(what, sizeof what, "BC1 view, SRGB, linear, dx %g", dxs[i]);
        bc_view(what, CU_RES_VIEW_FORMAT_UNSIGNED_BC1, BC1_FOUR, 2, t, dxs[i]);
    }
    for (unsigned srgb = 0; srgb < 2; srgb++) {
        printf("%s, SRGB, linear\n", srgb ? "BC1_UNORM_SRGB" : "BC1_UNORM");
        CUarray b = array2(4, 4, srgb ? CU_AD_FORMAT_BC1_UNORM_SRGB : CU_AD_FORMAT_BC1_UNORM, 4);
        if (!b) continue;
        if (to_array("copy in one block", b, BC1_FOUR, sizeof BC1_FOUR, 1) == CUDA_SUCCESS) {
            CUtexObject o;
            CUDA_RESOURCE_DESC r = over_array(b);
            if (CALL("texture", cuTexObjectCreate(&o, &r, &t, NULL)) == CUDA_SUCCESS) {
                for (unsigned i = 0; i < 2; i++) {
                    printf("dx %g\n", dxs[i]);
                    sample_texels(o, 4, 4, dxs[i]);
                }
                cuTexObjectDestroy(o);
            }
        }
        cuArrayDestroy(b);
    }
}

/* R10G10B10A2 arrays through texture objects, and surfaces over the packed formats: which
 * the driver makes, and what a kernel reads and writes through them (the mock refuses
 * these today). Four R10G10B10A2 texels (each channel's extremes and a middle value) read
 * with flags 0 and READ_AS_INTEGER; then a surface object over a UNORM_INT8X4,
 * SNORM_INT16X2, R10G10B10A2 and BC1 array (CUDA_ARRAY3D_SURFACE_LDST): made or refused,
 * its first word read by suld.b, a word written by sust.b at byte 4 and the array's first
 * 8 bytes read back. */
static const char *SURF_PTX =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry rw(.param .u64 s, .param .u64 out)\n{\n"
    "  .reg .b32 %r<4>; .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [s];\n  ld.param.u64 %rd2, [out];\n  cvta.to.global.u64 %rd3, %rd2;\n"
    "  mov.b32 %r1, 0;\n"
    "  suld.b.2d.b32.trap {%r2}, [%rd1, {%r1, %r1}];\n"
    "  st.global.u32 [%rd3], %r2;\n"
    "  mov.b32 %r3, 4;\n"
    "  sust.b.2d.b32.trap [%rd1, {%r3, %r1}], {0x5a5b5c5d};\n"
    "  ret;\n}\n";

static void packed_and_surfaces(void) {
    setup();
    printf("UNORM_INT_101010_2\n");
    CUarray a = array2(4, 1, CU_AD_FORMAT_UNORM_INT_101010_2, 4);
    if (a) {
        /* R in bits 0-9, G 10-19, B 20-29, A 30-31. */
        static const uint32_t words[4] = {0x00000000u, 0xffffffffu, 0x3ff003ffu | (0x200u << 10), 0x80080201u};
        if (to_array("copy in", a, words, sizeof words, 1) == CUDA_SUCCESS) {
            read_object("  flags 0", over_array(a), point(0), NULL, 4, 1);
            read_object("  READ_AS_INTEGER", over_array(a), point(CU_TRSF_READ_AS_INTEGER), NULL, 4, 1);
        }
        cuArrayDestroy(a);
    }
    CUmodule m;
    MUST(cuModuleLoadData(&m, SURF_PTX));
    CUfunction f;
    MUST(cuModuleGetFunction(&f, m, "rw"));
    static const struct {
        CUarray_format f;
        unsigned ch;
        const char *name;
    } SURF[] = {
        {CU_AD_FORMAT_UNORM_INT8X4, 4, "UNORM_INT8X4"},
        {CU_AD_FORMAT_SNORM_INT16X2, 2, "SNORM_INT16X2"},
        {CU_AD_FORMAT_UNORM_INT_101010_2, 4, "UNORM_INT_101010_2"},
        {CU_AD_FORMAT_BC1_UNORM, 4, "BC1_UNORM"},
    };
    for (unsigned i = 0; i < sizeof SURF / sizeof *SURF; i++) {
        printf("surface over %s\n", SURF[i].name);
        CUDA_ARRAY3D_DESCRIPTOR d;
        memset(&d, 0, sizeof d);
        d.Width = 8;
        d.Height = 4;
        d.Format = SURF[i].f;
        d.NumChannels = SURF[i].ch;
        d.Flags = CUDA_ARRAY3D_SURFACE_LDST;
        CUarray sa;
        if (CALL("  array", cuArray3DCreate(&sa, &d)) != CUDA_SUCCESS) continue;
        uint32_t fill[32];
        for (unsigned k = 0; k < 32; k++) fill[k] = 0x01020304u * (k + 1);
        size_t row = SURF[i].f == CU_AD_FORMAT_BC1_UNORM ? 16 : 32;
        size_t rows = SURF[i].f == CU_AD_FORMAT_BC1_UNORM ? 1 : 4;
        to_array("  copy in", sa, fill, row, rows);
        CUDA_RESOURCE_DESC r = over_array(sa);
        CUsurfObject so;
        if (CALL("  surface object", cuSurfObjectCreate(&so, &r)) == CUDA_SUCCESS) {
            MUST(cuMemsetD8(out, 0, 16));
            void *args[] = {&so, &out};
            CALL("  launch rw", cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
            CUresult y = CALL("  synchronize", cuCtxSynchronize());
            if (y == CUDA_SUCCESS) {
                uint32_t word = 0, back[2] = {0, 0};
                MUST(cuMemcpyDtoH(&word, out, 4));
                CUDA_MEMCPY2D c;
                memset(&c, 0, sizeof c);
                c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
                c.srcArray = sa;
                c.dstMemoryType = CU_MEMORYTYPE_HOST;
                c.dstHost = back;
                c.dstPitch = 8;
                c.WidthInBytes = 8;
                c.Height = 1;
                CALL("  copy out", cuMemcpy2D(&c));
                SAY("  suld word 0: %08x; bytes 0-7 after sust at byte 4: %08x %08x", word, back[0], back[1]);
            }
            cuSurfObjectDestroy(so);
        }
        cuArrayDestroy(sa);
    }
    cuModuleUnload(m);
}

/* (Added after the third recording, awaiting one.) What srgb-linear left open:
 * - whether the colour channels of a blend share one exponent: texels (128, 10, 250, 255)
 *   and (64, 250, 10, 0) by halves, each channel's larger texel of another magnitude;
 *   the same without CU_TRSF_SRGB by halves and 3/4: is plain 8-bit UNORM blended in 16
 *   bits (257n) as the sRGB texture's alpha is (0 and 255 by halves: 32768/65535);
 * - whether a texel of weight 0 takes part: a 2 x 2 array, row 0 (64, 128 in every
 *   channel), row 1 all 255, sampled at row 0's centre between its texels;
 * - BC1 6 x 5 (bc-partial-blocks' first two rows of blocks) by float coordinates at the
 *   8 x 8 texel centres, point and linear (dx 1): 0 past its texels, or clamped. */
static void srgb_exponents_bc_float(void) {
    setup();
    CUDA_TEXTURE_DESC t = point(CU_TRSF_SRGB);
    t.filterMode = CU_TR_FILTER_MODE_LINEAR;
    CUtexObject o;
    static const uint8_t mixed[2][4] = {{128, 10, 250, 255}, {64, 250, 10, 0}};
    printf("u8x4 (128 10 250 255) (64 250 10 0)\n");
    CUarray a = array2(2, 1, CU_AD_FORMAT_UNSIGNED_INT8, 4);
    if (a && to_array("copy in", a, mixed, sizeof mixed, 1) == CUDA_SUCCESS) {
        CUDA_RESOURCE_DESC r = over_array(a);
        if (CALL("SRGB, linear", cuTexObjectCreate(&o, &r, &t, NULL)) == CUDA_SUCCESS) {
            sample_texels(o, 1, 1, 1.0f);
            cuTexObjectDestroy(o);
        }
        CUDA_TEXTURE_DESC plain = point(0);
        plain.filterMode = CU_TR_FILTER_MODE_LINEAR;
        if (CALL("flags 0, linear", cuTexObjectCreate(&o, &r, &plain, NULL)) == CUDA_SUCCESS) {
            sample_texels(o, 1, 1, 1.0f);
            sample_texels(o, 1, 1, 0.75f);
            cuTexObjectDestroy(o);
        }
    }
    if (a) cuArrayDestroy(a);
    uint8_t rows[2][2][4];
    memset(rows[0][0], 64, 4);
    memset(rows[0][1], 128, 4);
    memset(rows[1], 255, sizeof rows[1]);
    printf("u8x4 2 x 2: row 0 64 128, row 1 255 255\n");
    a = array2(2, 2, CU_AD_FORMAT_UNSIGNED_INT8, 4);
    if (a && to_array("copy in", a, rows, sizeof rows[0], 2) == CUDA_SUCCESS) {
        CUDA_RESOURCE_DESC r = over_array(a);
        if (CALL("SRGB, linear", cuTexObjectCreate(&o, &r, &t, NULL)) == CUDA_SUCCESS) {
            sample_texels(o, 1, 1, 1.0f);
            cuTexObjectDestroy(o);
        }
    }
    if (a) cuArrayDestroy(a);
    static const uint16_t bc1_colour[4] = {0xffff, 0xf800, 0x07e0, 0x001f};
    uint32_t packed[2 * 2 * 2];
    for (unsigned k = 0; k < 4; k++) {
        packed[2 * k] = bc1_colour[k];
        packed[2 * k + 1] = 0xe4e4e4e4u;
    }
    printf("BC1_UNORM 6 x 5\n");
    a = array2(6, 5, CU_AD_FORMAT_BC1_UNORM, 4);
    if (a && to_array("copy in 2 rows of 2 blocks", a, packed, 16, 2) == CUDA_SUCCESS) {
        CUDA_RESOURCE_DESC r = over_array(a);
        for (unsigned linear = 0; linear < 2; linear++) {
            CUDA_TEXTURE_DESC bt = point(0);
            if (linear) bt.filterMode = CU_TR_FILTER_MODE_LINEAR;
            if (CALL(linear ? "linear" : "point", cuTexObjectCreate(&o, &r, &bt, NULL)) == CUDA_SUCCESS) {
                sample_texels(o, 8, 8, linear ? 1.0f : 0.5f);
                cuTexObjectDestroy(o);
            }
        }
    }
    if (a) cuArrayDestroy(a);
}

/* Linear filtering of each channel type read as normalized floats (and half as it is):
 * which precision the blend keeps. A 2 x 2 array of 4-channel texels (row 0: texels a, b;
 * row 1: c, d), each channel's values at an edge or in the middle of the type's range,
 * sampled along row 0 (y exact: x weights 0, 17, 34 ... 255 256ths) and along a diagonal
 * (x by 17/256, y by 13/256). 8-bit unsigned blends as 16-bit UNORM
 * (srgb-exponents-bc-float); the other types were not recorded. */
static void norm_linear(void) {
    setup();
    static const struct {
        CUarray_format f;
        unsigned bytes;
        const char *name;
        int32_t v[4][4]; /* texels a, b, c, d; channels as integers (half: its bits) */
    } TYPES[] = {
        {CU_AD_FORMAT_UNSIGNED_INT8, 1, "UNSIGNED_INT8",
         {{0, 1, 100, 255}, {255, 254, 37, 0}, {10, 200, 77, 128}, {250, 3, 0, 64}}},
        {CU_AD_FORMAT_SIGNED_INT8, 1, "SIGNED_INT8",
         {{-128, -1, 100, 127}, {127, 1, -37, -127}, {-127, -2, 5, 64}, {126, 2, -5, -64}}},
        {CU_AD_FORMAT_UNSIGNED_INT16, 2, "UNSIGNED_INT16",
         {{0, 1, 40000, 65535}, {65535, 65534, 1234, 0}, {257, 32768, 3, 65280}, {65278, 32767, 9, 255}}},
        {CU_AD_FORMAT_SIGNED_INT16, 2, "SIGNED_INT16",
         {{-32768, -1, 30000, 32767}, {32767, 1, -1234, -32767}, {-32767, -2, 5, 16384}, {32766, 2, -5, -16384}}},
        /* 0 1 0.1 65504 / 1 1+2^-10 -3 0 / 0.5 -1 2^-24 -65504 / 0.25 1 -2^-24 1000 */
        {CU_AD_FORMAT_HALF, 2, "HALF",
         {{0x0000, 0x3c00, 0x2e66, 0x7bff}, {0x3c00, 0x3c01, 0xc200, 0x0000},
          {0x3800, 0xbc00, 0x0001, 0xfbff}, {0x3400, 0x3c00, 0x8001, 0x63d0}}},
        {CU_AD_FORMAT_UNORM_INT8X4, 1, "UNORM_INT8X4",
         {{0, 1, 100, 255}, {255, 254, 37, 0}, {10, 200, 77, 128}, {250, 3, 0, 64}}},
        {CU_AD_FORMAT_SNORM_INT16X4, 2, "SNORM_INT16X4",
         {{-32768, -1, 30000, 32767}, {32767, 1, -1234, -32767}, {-32767, -2, 5, 16384}, {32766, 2, -5, -16384}}},
    };
    for (unsigned i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++) {
        printf("%s", TYPES[i].name);
        for (unsigned k = 0; k < 4; k++)
            printf(" (%d %d %d %d)", TYPES[i].v[k][0], TYPES[i].v[k][1], TYPES[i].v[k][2], TYPES[i].v[k][3]);
        printf("\n");
        CUarray a = array2(2, 2, TYPES[i].f, 4);
        if (!a) continue;
        uint8_t bytes[4 * 4 * 2];
        unsigned n = 0;
        for (unsigned k = 0; k < 4; k++)
            for (unsigned c = 0; c < 4; c++)
                for (unsigned b = 0; b < TYPES[i].bytes; b++) bytes[n++] = (uint8_t)((uint32_t)TYPES[i].v[k][c] >> (8 * b));
        if (to_array("copy in", a, bytes, n / 2, 2) == CUDA_SUCCESS) {
            CUDA_RESOURCE_DESC r = over_array(a);
            CUDA_TEXTURE_DESC t = point(0);
            t.filterMode = CU_TR_FILTER_MODE_LINEAR;
            CUtexObject o;
            if (CALL("linear", cuTexObjectCreate(&o, &r, &t, NULL)) == CUDA_SUCCESS) {
                sample_line(o, 16, 0.5f, 0.5f, 17.0f / 256, 0.0f);
                sample_line(o, 16, 0.5f, 0.5f, 17.0f / 256, 13.0f / 256);
                cuTexObjectDestroy(o);
            }
        }
        cuArrayDestroy(a);
    }
}

/* Resource views over the UNORM/SNORM and R10G10B10A2 arrays (the mock refuses them, not
 * emulated): whether each view format is taken, and what a texture through it reads, flags
 * 0 and READ_AS_INTEGER. Four 4-byte texels: bytes 00 01 7f 80, 81 fe ff 40, 55 aa 33 cc,
 * 02 fd 10 ef. */
static void norm_views(void) {
    setup();
    static const uint8_t bytes[16] = {0x00, 0x01, 0x7f, 0x80, 0x81, 0xfe, 0xff, 0x40,
                                      0x55, 0xaa, 0x33, 0xcc, 0x02, 0xfd, 0x10, 0xef};
    static const struct {
        CUarray_format f;
        unsigned ch;
        const char *name;
    } ARR[] = {
        {CU_AD_FORMAT_UNORM_INT8X4, 4, "UNORM_INT8X4"},
        {CU_AD_FORMAT_SNORM_INT8X4, 4, "SNORM_INT8X4"},
        {CU_AD_FORMAT_UNORM_INT16X2, 2, "UNORM_INT16X2"},
        {CU_AD_FORMAT_SNORM_INT16X2, 2, "SNORM_INT16X2"},
        {CU_AD_FORMAT_UNORM_INT_101010_2, 4, "UNORM_INT_101010_2"},
    };
    static const struct {
        CUresourceViewFormat f;
        const char *name;
    } VIEW[] = {
        {CU_RES_VIEW_FORMAT_NONE, "NONE"},         {CU_RES_VIEW_FORMAT_UINT_4X8, "UINT_4X8"},
        {CU_RES_VIEW_FORMAT_SINT_4X8, "SINT_4X8"}, {CU_RES_VIEW_FORMAT_UINT_2X16, "UINT_2X16"},
        {CU_RES_VIEW_FORMAT_SINT_2X16, "SINT_2X16"}, {CU_RES_VIEW_FORMAT_UINT_1X32, "UINT_1X32"},
        {CU_RES_VIEW_FORMAT_FLOAT_1X32, "FLOAT_1X32"}, {CU_RES_VIEW_FORMAT_FLOAT_2X16, "FLOAT_2X16"},
    };
    for (unsigned i = 0; i < sizeof ARR / sizeof *ARR; i++) {
        printf("%s\n", ARR[i].name);
        CUarray a = array2(4, 1, ARR[i].f, ARR[i].ch);
        if (!a) continue;
        if (to_array("copy in", a, bytes, sizeof bytes, 1) == CUDA_SUCCESS) {
            for (unsigned k = 0; k < sizeof VIEW / sizeof *VIEW; k++) {
                CUDA_RESOURCE_VIEW_DESC v;
                memset(&v, 0, sizeof v);
                v.format = VIEW[k].f;
                v.width = 4;
                v.height = 1;
                char what[64];
                snprintf(what, sizeof what, "view %s, flags 0", VIEW[k].name);
                read_object(what, over_array(a), point(0), &v, 4, 1);
                snprintf(what, sizeof what, "view %s, READ_AS_INTEGER", VIEW[k].name);
                read_object(what, over_array(a), point(CU_TRSF_READ_AS_INTEGER), &v, 4, 1);
            }
        }
        cuArrayDestroy(a);
    }
}

/* Signed 8-bit linear filtering, densely (norm-linear's s8 blends fit no rule yet): a row
 * of 64 s8x4 texels of pseudo-random values (-128, -127, -1, 0, 1 and 127 among them),
 * sampled between each pair of neighbours at weights 1, 17, 64, 100, 128, 200 and 255
 * 256ths of the right one. */
static void s8_linear_sweep(void) {
    setup();
    int8_t v[64 * 4];
    uint32_t x = 12345;
    for (unsigned i = 0; i < sizeof v; i++) {
        x = x * 1103515245u + 12345u;
        v[i] = (int8_t)(x >> 16);
    }
    static const int8_t edges[] = {-128, -127, -1, 0, 1, 127, -128, 127, 127, -128, -127, 127};
    memcpy(v, edges, sizeof edges);
    printf("values:");
    for (unsigned i = 0; i < sizeof v; i++) printf(" %d", v[i]);
    printf("\n");
    CUarray a = array2(64, 1, CU_AD_FORMAT_SIGNED_INT8, 4);
    if (!a) return;
    if (to_array("copy in", a, v, sizeof v, 1) == CUDA_SUCCESS) {
        CUDA_TEXTURE_DESC t = point(0);
        t.filterMode = CU_TR_FILTER_MODE_LINEAR;
        CUtexObject o;
        CUDA_RESOURCE_DESC r = over_array(a);
        if (CALL("linear over the row", cuTexObjectCreate(&o, &r, &t, NULL)) == CUDA_SUCCESS) {
            static const int weights[] = {1, 17, 64, 100, 128, 200, 255};
            for (unsigned k = 0; k < sizeof weights / sizeof *weights; k++) {
                printf("weight %d\n", weights[k]);
                sample_line(o, 63, 0.5f + weights[k] / 256.0f, 0.5f, 1.0f, 0.0f);
            }
            cuTexObjectDestroy(o);
        }
    }
    cuArrayDestroy(a);
}

int main(void) {
    section("norm-arrays", norm_arrays);
    section("srgb-u8", srgb_u8);
    section("bc-arrays", bc_arrays);
    section("bc-blends", bc_blends);
    section("bc-srgb", bc_srgb);
    section("bc-linear", bc_linear);
    section("bc-partial-blocks", bc_partial_blocks);
    section("srgb-16-bit", srgb_16_bit);
    section("srgb-linear", srgb_linear);
    section("packed-and-surfaces", packed_and_surfaces);
    section("srgb-exponents-bc-float", srgb_exponents_bc_float);
    section("norm-linear", norm_linear);
    section("norm-views", norm_views);
    section("s8-linear-sweep", s8_linear_sweep);
    return 0;
}
