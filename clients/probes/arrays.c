/* CUDA arrays, mipmapped arrays, texture and surface objects off their successful paths:
 * what the driver refuses and what it answers. The H200 was recorded only on the paths
 * programs take (clients/runtime/texture_*.cu, surface_formatted.cu, cubemap_*); this
 * probe asks the validation: cuArrayCreate and cuArray3DCreate of every CUarray_format
 * cuda.h 13 names (and one it does not) with NumChannels 0..5, extents 0, 1, the
 * device's maxima and one past them, every CUDA_ARRAY3D_* flag alone and in the
 * combinations cuda.h describes; descriptors read back (and of the other kind); memory
 * requirements, sparse properties and planes; mipmapped arrays' levels; the copies with
 * array operands in and out of bounds; cuTexObjectCreate over each resource type with
 * each field wrong, with and without a resource view, and its getters; cuSurfObjectCreate
 * over each resource type.
 *
 * Awaiting its recording on the H200 (PROBES=arrays ci/gpu-probes.sh DIR). NULL
 * pointers, handles never given out and handles already destroyed crash the H200 in
 * other probes: each such call runs alone in a section of its own (named *-crash here
 * whether or not it does), run last, so that a crash loses one answer only. Every
 * section makes its own objects. No kernel is launched; no multicast API is called.
 * Extents at a maximum are asked one dimension at a time (the others 1), except the
 * cubemap, whose faces are square: 6 faces of 32768^2 bytes, 6 GiB. */
#define _GNU_SOURCE
#include "probe.h"

struct named {
    int value;
    const char *name;
};

/* Every CUarray_format of cuda.h 13, and 0x77, which it does not name. */
static const struct named formats[] = {
    {0x01, "UNSIGNED_INT8"}, {0x02, "UNSIGNED_INT16"}, {0x03, "UNSIGNED_INT32"},
    {0x08, "SIGNED_INT8"}, {0x09, "SIGNED_INT16"}, {0x0a, "SIGNED_INT32"},
    {0x10, "HALF"}, {0x20, "FLOAT"}, {0xb0, "NV12"},
    {0xc0, "UNORM_INT8X1"}, {0xc1, "UNORM_INT8X2"}, {0xc2, "UNORM_INT8X4"},
    {0xc3, "UNORM_INT16X1"}, {0xc4, "UNORM_INT16X2"}, {0xc5, "UNORM_INT16X4"},
    {0xc6, "SNORM_INT8X1"}, {0xc7, "SNORM_INT8X2"}, {0xc8, "SNORM_INT8X4"},
    {0xc9, "SNORM_INT16X1"}, {0xca, "SNORM_INT16X2"}, {0xcb, "SNORM_INT16X4"},
    {0x91, "BC1_UNORM"}, {0x92, "BC1_UNORM_SRGB"}, {0x93, "BC2_UNORM"},
    {0x94, "BC2_UNORM_SRGB"}, {0x95, "BC3_UNORM"}, {0x96, "BC3_UNORM_SRGB"},
    {0x97, "BC4_UNORM"}, {0x98, "BC4_SNORM"}, {0x99, "BC5_UNORM"}, {0x9a, "BC5_SNORM"},
    {0x9b, "BC6H_UF16"}, {0x9c, "BC6H_SF16"}, {0x9d, "BC7_UNORM"},
    {0x9e, "BC7_UNORM_SRGB"}, {0x9f, "P010"}, {0xa1, "P016"}, {0xa2, "NV16"},
    {0xa3, "P210"}, {0xa4, "P216"}, {0xa5, "YUY2"}, {0xa6, "Y210"}, {0xa7, "Y216"},
    {0xa8, "AYUV"}, {0xa9, "Y410"}, {0xb1, "Y416"}, {0xb2, "Y444_PLANAR8"},
    {0xb3, "Y444_PLANAR10"}, {0xb4, "YUV444_8bit_SemiPlanar"},
    {0xb5, "YUV444_16bit_SemiPlanar"}, {0x50, "UNORM_INT_101010_2"}, {0x77, "(0x77)"},
};
#define NFORMATS (sizeof formats / sizeof formats[0])

static const struct named flags[] = {
    {CUDA_ARRAY3D_LAYERED, "LAYERED"},
    {CUDA_ARRAY3D_SURFACE_LDST, "SURFACE_LDST"},
    {CUDA_ARRAY3D_CUBEMAP, "CUBEMAP"},
    {CUDA_ARRAY3D_TEXTURE_GATHER, "TEXTURE_GATHER"},
    {CUDA_ARRAY3D_DEPTH_TEXTURE, "DEPTH_TEXTURE"},
    {CUDA_ARRAY3D_COLOR_ATTACHMENT, "COLOR_ATTACHMENT"},
    {CUDA_ARRAY3D_SPARSE, "SPARSE"},
    {CUDA_ARRAY3D_DEFERRED_MAPPING, "DEFERRED_MAPPING"},
    {0x100, "VIDEO_ENCODE_DECODE"},
    {0x200, "0x200 (unnamed)"},
    {(int)0x80000000u, "0x80000000 (unnamed)"},
};
#define NFLAGS (sizeof flags / sizeof flags[0])

static const char *handle_state(const void *p, size_t n) {
    uint64_t v = 0;
    memcpy(&v, p, n < 8 ? n : 8);
    if (v == SENTINEL) return "untouched";
    return v ? "set" : "NULL";
}
#define HANDLE(h) handle_state(&(h), sizeof(h))

static int attr(CUdevice_attribute a) {
    int v = -1;
    MUST(cuDeviceGetAttribute(&v, a, 0));
    return v;
}

static CUDA_ARRAY3D_DESCRIPTOR desc3(size_t w, size_t h, size_t d, int fmt, unsigned ch,
                                     unsigned fl) {
    CUDA_ARRAY3D_DESCRIPTOR x;
    memset(&x, 0, sizeof x);
    x.Width = w;
    x.Height = h;
    x.Depth = d;
    x.Format = (CUarray_format)fmt;
    x.NumChannels = ch;
    x.Flags = fl;
    return x;
}

static CUDA_ARRAY_DESCRIPTOR desc2(size_t w, size_t h, int fmt, unsigned ch) {
    CUDA_ARRAY_DESCRIPTOR x;
    memset(&x, 0, sizeof x);
    x.Width = w;
    x.Height = h;
    x.Format = (CUarray_format)fmt;
    x.NumChannels = ch;
    return x;
}

static void say3(const char *what, const CUDA_ARRAY3D_DESCRIPTOR *d) {
    SAY("%s: %zux%zux%zu format 0x%x channels %u flags 0x%x", what, d->Width, d->Height,
        d->Depth, (unsigned)d->Format, d->NumChannels, d->Flags);
}

static void say2(const char *what, const CUDA_ARRAY_DESCRIPTOR *d) {
    SAY("%s: %zux%zu format 0x%x channels %u", what, d->Width, d->Height, (unsigned)d->Format,
        d->NumChannels);
}

/* cuArray3DCreate of one descriptor, said as `label = RESULT`; destroyed when made. */
static CUresult try3(const char *label, CUDA_ARRAY3D_DESCRIPTOR d) {
    CUarray a;
    FILL(a);
    CUresult r = cuArray3DCreate(&a, &d);
    printf("%s = %s", label, rname(r));
    if (r == CUDA_SUCCESS)
        cuArrayDestroy(a);
    else if (strcmp(HANDLE(a), "untouched") != 0)
        printf(", handle %s", HANDLE(a));
    printf("\n");
    fflush(stdout);
    return r;
}

static CUresult try2(const char *label, CUDA_ARRAY_DESCRIPTOR d) {
    CUarray a;
    FILL(a);
    CUresult r = cuArrayCreate(&a, &d);
    printf("%s = %s", label, rname(r));
    if (r == CUDA_SUCCESS)
        cuArrayDestroy(a);
    else if (strcmp(HANDLE(a), "untouched") != 0)
        printf(", handle %s", HANDLE(a));
    printf("\n");
    fflush(stdout);
    return r;
}

static CUarray make3(size_t w, size_t h, size_t d, int fmt, unsigned ch, unsigned fl) {
    CUDA_ARRAY3D_DESCRIPTOR x = desc3(w, h, d, fmt, ch, fl);
    CUarray a = NULL;
    MUST(cuArray3DCreate(&a, &x));
    return a;
}

/* ---- creation ---- */

/* A line per format: each NumChannels' answer; the descriptor read back of the first made. */
static void format_sweep(int three_d) {
    CUcontext ctx;
    init_primary(0, &ctx);
    for (size_t i = 0; i < NFORMATS; i++) {
        printf("%s:", formats[i].name);
        CUDA_ARRAY3D_DESCRIPTOR back;
        int shown = 0;
        for (unsigned ch = 0; ch <= 5; ch++) {
            CUarray a = NULL;
            CUresult r;
            if (three_d) {
                CUDA_ARRAY3D_DESCRIPTOR d = desc3(16, 16, 4, formats[i].value, ch, 0);
                r = cuArray3DCreate(&a, &d);
            } else {
                CUDA_ARRAY_DESCRIPTOR d = desc2(16, 16, formats[i].value, ch);
                r = cuArrayCreate(&a, &d);
            }
            printf(" %u %s%s", ch, rname(r), ch < 5 ? "," : "\n");
            if (r == CUDA_SUCCESS) {
                if (!shown && cuArray3DGetDescriptor(&back, a) == CUDA_SUCCESS) shown = 1 + ch;
                cuArrayDestroy(a);
            }
        }
        fflush(stdout);
        if (shown) say3("read back (first made)", &back);
    }
}

static void formats_2d(void) { format_sweep(0); }
static void formats_3d(void) { format_sweep(1); }

/* Block-compressed and planar formats at extents that are not whole blocks or pairs. */
static void format_extents(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    const struct { int f; unsigned ch; } fs[] = {{0x91, 4}, {0x97, 1}, {0xb0, 1}, {0xb0, 3}, {0xa5, 2}};
    const size_t ext[][2] = {{16, 16}, {6, 6}, {4, 4}, {3, 3}, {1, 1}, {15, 16}, {16, 15}, {16, 0}};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        for (size_t j = 0; j < sizeof ext / sizeof ext[0]; j++) {
            char what[96];
            snprintf(what, sizeof what, "format 0x%x x%u %zux%zu", fs[i].f, fs[i].ch, ext[j][0],
                     ext[j][1]);
            try2(what, desc2(ext[j][0], ext[j][1], fs[i].f, fs[i].ch));
        }
}

static void dims_1d(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    int w = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH);
    int lw = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH);
    int ll = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS);
    int sw = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH);
    SAY("maxima: 1D width %d, layered width %d layers %d, surface 1D width %d", w, lw, ll, sw);
    try2("cuArrayCreate 0x0", desc2(0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1));
    try2("cuArrayCreate 1x0", desc2(1, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1));
    try2("cuArrayCreate max x0", desc2(w, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1));
    try2("cuArrayCreate max+1 x0", desc2(w + 1, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1));
    try2("cuArrayCreate max x0, float4", desc2(w, 0, CU_AD_FORMAT_FLOAT, 4));
    try3("3D 0x0x0", desc3(0, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0));
    try3("3D 1x0x0", desc3(1, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0));
    try3("3D max x0x0", desc3(w, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0));
    try3("3D max+1 x0x0", desc3(w + 1, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0));
    try3("SURFACE_LDST surface max", desc3(sw, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1, CUDA_ARRAY3D_SURFACE_LDST));
    try3("SURFACE_LDST surface max+1", desc3(sw + 1, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1, CUDA_ARRAY3D_SURFACE_LDST));
    try3("SURFACE_LDST texture max", desc3(w, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1, CUDA_ARRAY3D_SURFACE_LDST));
    unsigned L = CUDA_ARRAY3D_LAYERED;
    try3("layered 1x0x1", desc3(1, 0, 1, CU_AD_FORMAT_UNSIGNED_INT8, 1, L));
    try3("layered 1x0x0", desc3(1, 0, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1, L));
    try3("layered 0x0x1", desc3(0, 0, 1, CU_AD_FORMAT_UNSIGNED_INT8, 1, L));
    try3("layered max width x0x1", desc3(lw, 0, 1, CU_AD_FORMAT_UNSIGNED_INT8, 1, L));
    try3("layered max+1 width x0x1", desc3(lw + 1, 0, 1, CU_AD_FORMAT_UNSIGNED_INT8, 1, L));
    try3("layered 1x0x max layers", desc3(1, 0, ll, CU_AD_FORMAT_UNSIGNED_INT8, 1, L));
    try3("layered 1x0x max+1 layers", desc3(1, 0, ll + 1, CU_AD_FORMAT_UNSIGNED_INT8, 1, L));
}

static void dims_2d(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    int w = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH);
    int h = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT);
    int lw = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH);
    int lh = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT);
    int ll = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS);
    int gw = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH);
    int gh = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT);
    int sw = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH);
    int sh = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT);
    SAY("maxima: 2D %dx%d, layered %dx%d layers %d, gather %dx%d, surface %dx%d", w, h, lw, lh,
        ll, gw, gh, sw, sh);
    const int u8 = CU_AD_FORMAT_UNSIGNED_INT8;
    try2("cuArrayCreate 0x1", desc2(0, 1, u8, 1));
    try2("cuArrayCreate 1x1", desc2(1, 1, u8, 1));
    try2("cuArrayCreate max width x1", desc2(w, 1, u8, 1));
    try2("cuArrayCreate max+1 width x1", desc2(w + 1, 1, u8, 1));
    try2("cuArrayCreate 1x max height", desc2(1, h, u8, 1));
    try2("cuArrayCreate 1x max+1 height", desc2(1, h + 1, u8, 1));
    try3("3D max width x1x0", desc3(w, 1, 0, u8, 1, 0));
    try3("3D max+1 width x1x0", desc3(w + 1, 1, 0, u8, 1, 0));
    try3("3D 1x max height x0", desc3(1, h, 0, u8, 1, 0));
    try3("3D 1x max+1 height x0", desc3(1, h + 1, 0, u8, 1, 0));
    unsigned G = CUDA_ARRAY3D_TEXTURE_GATHER, S = CUDA_ARRAY3D_SURFACE_LDST, L = CUDA_ARRAY3D_LAYERED;
    try3("gather max width x1", desc3(gw, 1, 0, u8, 1, G));
    try3("gather max+1 width x1", desc3(gw + 1, 1, 0, u8, 1, G));
    try3("gather 1x max height", desc3(1, gh, 0, u8, 1, G));
    try3("gather 1x max+1 height", desc3(1, gh + 1, 0, u8, 1, G));
    try3("surface max width x1", desc3(sw, 1, 0, u8, 1, S));
    try3("surface max+1 width x1", desc3(sw + 1, 1, 0, u8, 1, S));
    try3("surface 1x max height", desc3(1, sh, 0, u8, 1, S));
    try3("surface 1x max+1 height", desc3(1, sh + 1, 0, u8, 1, S));
    try3("layered 1x1x1", desc3(1, 1, 1, u8, 1, L));
    try3("layered 1x1x0", desc3(1, 1, 0, u8, 1, L));
    try3("layered max width x1x1", desc3(lw, 1, 1, u8, 1, L));
    try3("layered max+1 width x1x1", desc3(lw + 1, 1, 1, u8, 1, L));
    try3("layered 1x max height x1", desc3(1, lh, 1, u8, 1, L));
    try3("layered 1x max+1 height x1", desc3(1, lh + 1, 1, u8, 1, L));
    try3("layered 1x1x max layers", desc3(1, 1, ll, u8, 1, L));
    try3("layered 1x1x max+1 layers", desc3(1, 1, ll + 1, u8, 1, L));
}

static void dims_3d(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    int w = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH);
    int h = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT);
    int d = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH);
    int aw = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE);
    int ah = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE);
    int ad = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE);
    int sw = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH);
    int sd = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH);
    SAY("maxima: 3D %dx%dx%d, alternate %dx%dx%d, surface width %d depth %d", w, h, d, aw, ah, ad,
        sw, sd);
    const int u8 = CU_AD_FORMAT_UNSIGNED_INT8;
    try3("1x1x1", desc3(1, 1, 1, u8, 1, 0));
    try3("0x1x1", desc3(0, 1, 1, u8, 1, 0));
    try3("1x0x1", desc3(1, 0, 1, u8, 1, 0));
    try3("max width x1x1", desc3(w, 1, 1, u8, 1, 0));
    try3("max+1 width x1x1", desc3(w + 1, 1, 1, u8, 1, 0));
    try3("1x max height x1", desc3(1, h, 1, u8, 1, 0));
    try3("1x max+1 height x1", desc3(1, h + 1, 1, u8, 1, 0));
    try3("1x1x max depth", desc3(1, 1, d, u8, 1, 0));
    try3("1x1x max+1 depth (under the alternate)", desc3(1, 1, d + 1, u8, 1, 0));
    try3("1x1x alternate depth", desc3(1, 1, ad, u8, 1, 0));
    try3("1x1x alternate depth+1", desc3(1, 1, ad + 1, u8, 1, 0));
    try3("alternate width+1 x1x max+1 depth", desc3(aw + 1, 1, d + 1, u8, 1, 0));
    try3("1x alternate height+1 x max+1 depth", desc3(1, ah + 1, d + 1, u8, 1, 0));
    try3("surface max width x1x1", desc3(sw, 1, 1, u8, 1, CUDA_ARRAY3D_SURFACE_LDST));
    try3("surface max+1 width x1x1", desc3(sw + 1, 1, 1, u8, 1, CUDA_ARRAY3D_SURFACE_LDST));
    try3("surface 1x1x max depth", desc3(1, 1, sd, u8, 1, CUDA_ARRAY3D_SURFACE_LDST));
    try3("surface 1x1x max+1 depth", desc3(1, 1, sd + 1, u8, 1, CUDA_ARRAY3D_SURFACE_LDST));
}

static void dims_cubemap(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    int w = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH);
    int lw = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH);
    int ll = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS);
    SAY("maxima: cubemap %d, layered %d layers %d", w, lw, ll);
    const int u8 = CU_AD_FORMAT_UNSIGNED_INT8;
    unsigned C = CUDA_ARRAY3D_CUBEMAP, L = CUDA_ARRAY3D_LAYERED;
    try3("1x1x6", desc3(1, 1, 6, u8, 1, C));
    try3("max", desc3(w, w, 6, u8, 1, C));
    try3("max+1", desc3(w + 1, w + 1, 6, u8, 1, C));
    try3("layered 1x1x6", desc3(1, 1, 6, u8, 1, C | L));
    try3("layered 1x1x(6 * max layers)", desc3(1, 1, 6 * (size_t)ll, u8, 1, C | L));
    try3("layered 1x1x(6 * (max layers + 1))", desc3(1, 1, 6 * ((size_t)ll + 1), u8, 1, C | L));
    try3("layered 1x1x max layers", desc3(1, 1, ll, u8, 1, C | L));
    try3("layered max+1 x max+1 x6", desc3(lw + 1, lw + 1, 6, u8, 1, C | L));
}

static void flags_alone(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    const struct { size_t w, h, d; const char *shape; } shapes[] = {
        {16, 0, 0, "1D 16"}, {16, 16, 0, "2D 16x16"}, {16, 16, 6, "3D 16x16x6"}};
    for (size_t s = 0; s < 3; s++)
        for (size_t i = 0; i < NFLAGS; i++) {
            char what[96];
            snprintf(what, sizeof what, "%s %s", shapes[s].shape, flags[i].name);
            try3(what, desc3(shapes[s].w, shapes[s].h, shapes[s].d, CU_AD_FORMAT_FLOAT, 1,
                             (unsigned)flags[i].value));
        }
}

static void flag_combinations(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    const int f = CU_AD_FORMAT_FLOAT;
    unsigned L = CUDA_ARRAY3D_LAYERED, S = CUDA_ARRAY3D_SURFACE_LDST, C = CUDA_ARRAY3D_CUBEMAP,
             G = CUDA_ARRAY3D_TEXTURE_GATHER, D = CUDA_ARRAY3D_DEPTH_TEXTURE,
             A = CUDA_ARRAY3D_COLOR_ATTACHMENT;
    /* cuda.h: a cubemap is Width == Height, Depth 6; layered, Depth a multiple of 6. */
    try3("CUBEMAP 16x16x6", desc3(16, 16, 6, f, 1, C));
    try3("CUBEMAP 16x8x6", desc3(16, 8, 6, f, 1, C));
    try3("CUBEMAP 16x16x5", desc3(16, 16, 5, f, 1, C));
    try3("CUBEMAP 16x16x12", desc3(16, 16, 12, f, 1, C));
    try3("CUBEMAP 16x16x0", desc3(16, 16, 0, f, 1, C));
    try3("CUBEMAP|LAYERED 16x16x6", desc3(16, 16, 6, f, 1, C | L));
    try3("CUBEMAP|LAYERED 16x16x12", desc3(16, 16, 12, f, 1, C | L));
    try3("CUBEMAP|LAYERED 16x16x7", desc3(16, 16, 7, f, 1, C | L));
    try3("CUBEMAP|LAYERED 16x16x0", desc3(16, 16, 0, f, 1, C | L));
    try3("CUBEMAP|LAYERED 16x8x12", desc3(16, 8, 12, f, 1, C | L));
    /* cuda.h: texture gather is for 2D arrays only. */
    try3("TEXTURE_GATHER 2D 16x16", desc3(16, 16, 0, f, 1, G));
    try3("TEXTURE_GATHER 1D 16", desc3(16, 0, 0, f, 1, G));
    try3("TEXTURE_GATHER 3D 16x16x4", desc3(16, 16, 4, f, 1, G));
    try3("TEXTURE_GATHER|LAYERED 16x16x4", desc3(16, 16, 4, f, 1, G | L));
    try3("TEXTURE_GATHER|CUBEMAP 16x16x6", desc3(16, 16, 6, f, 1, G | C));
    /* Depth textures, by format. */
    const struct named dfs[] = {{0x01, "UNSIGNED_INT8"}, {0x02, "UNSIGNED_INT16"},
                                {0x03, "UNSIGNED_INT32"}, {0x08, "SIGNED_INT8"},
                                {0x10, "HALF"}, {0x20, "FLOAT"}};
    for (size_t i = 0; i < sizeof dfs / sizeof dfs[0]; i++) {
        char what[96];
        snprintf(what, sizeof what, "DEPTH_TEXTURE 2D %s x1", dfs[i].name);
        try3(what, desc3(16, 16, 0, dfs[i].value, 1, D));
        snprintf(what, sizeof what, "DEPTH_TEXTURE 2D %s x2", dfs[i].name);
        try3(what, desc3(16, 16, 0, dfs[i].value, 2, D));
    }
    try3("DEPTH_TEXTURE 1D FLOAT", desc3(16, 0, 0, f, 1, D));
    try3("DEPTH_TEXTURE 3D FLOAT", desc3(16, 16, 4, f, 1, D));
    try3("DEPTH_TEXTURE|LAYERED FLOAT", desc3(16, 16, 4, f, 1, D | L));
    try3("DEPTH_TEXTURE|CUBEMAP FLOAT", desc3(16, 16, 6, f, 1, D | C));
    try3("DEPTH_TEXTURE|TEXTURE_GATHER FLOAT", desc3(16, 16, 0, f, 1, D | G));
    try3("DEPTH_TEXTURE|SURFACE_LDST FLOAT", desc3(16, 16, 0, f, 1, D | S));
    /* Surfaces of each shape. */
    try3("SURFACE_LDST|LAYERED 16x16x4", desc3(16, 16, 4, f, 1, S | L));
    try3("SURFACE_LDST|CUBEMAP 16x16x6", desc3(16, 16, 6, f, 1, S | C));
    try3("SURFACE_LDST|CUBEMAP|LAYERED 16x16x12", desc3(16, 16, 12, f, 1, S | C | L));
    try3("SURFACE_LDST|TEXTURE_GATHER 16x16", desc3(16, 16, 0, f, 1, S | G));
    try3("COLOR_ATTACHMENT|SURFACE_LDST 16x16", desc3(16, 16, 0, f, 1, A | S));
    try3("COLOR_ATTACHMENT|LAYERED 16x16x4", desc3(16, 16, 4, f, 1, A | L));
    try3("COLOR_ATTACHMENT|CUBEMAP 16x16x6", desc3(16, 16, 6, f, 1, A | C));
    try3("every named flag but sparse 16x16x6", desc3(16, 16, 6, f, 1, L | S | C | G | D | A));
}

/* Sparse and deferred-mapping arrays: made, their memory requirements and sparse
 * properties asked, destroyed. */
static void sparse_deferred(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    SAY("sparse CUDA arrays supported: %d", attr(CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED));
    SAY("deferred mapping supported: %d", attr(CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED));
    const struct { size_t w, h, d; unsigned fl; const char *what; } cases[] = {
        {1024, 1024, 0, CUDA_ARRAY3D_SPARSE, "sparse 2D 1024x1024 float"},
        {1024, 0, 0, CUDA_ARRAY3D_SPARSE, "sparse 1D 1024 float"},
        {64, 64, 64, CUDA_ARRAY3D_SPARSE, "sparse 3D 64^3 float"},
        {1024, 1024, 0, CUDA_ARRAY3D_DEFERRED_MAPPING, "deferred 2D 1024x1024 float"},
        {1024, 1024, 0, CUDA_ARRAY3D_SPARSE | CUDA_ARRAY3D_DEFERRED_MAPPING, "sparse|deferred 2D"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CUDA_ARRAY3D_DESCRIPTOR d = desc3(cases[i].w, cases[i].h, cases[i].d, CU_AD_FORMAT_FLOAT, 1, cases[i].fl);
        CUarray a = NULL;
        if (CALL(cases[i].what, cuArray3DCreate(&a, &d)) != CUDA_SUCCESS) continue;
        CUDA_ARRAY_MEMORY_REQUIREMENTS mr;
        FILL(mr);
        if (CALL("  memory requirements", cuArrayGetMemoryRequirements(&mr, a, 0)) == CUDA_SUCCESS)
            SAY("  size %zu alignment %zu", mr.size, mr.alignment);
        CUDA_ARRAY_SPARSE_PROPERTIES sp;
        FILL(sp);
        if (CALL("  sparse properties", cuArrayGetSparseProperties(&sp, a)) == CUDA_SUCCESS)
            SAY("  tile %ux%ux%u miptail first level %u size %llu flags 0x%x",
                sp.tileExtent.width, sp.tileExtent.height, sp.tileExtent.depth,
                sp.miptailFirstLevel, (unsigned long long)sp.miptailSize, sp.flags);
        CUDA_ARRAY3D_DESCRIPTOR back;
        FILL(back);
        if (CALL("  descriptor", cuArray3DGetDescriptor(&back, a)) == CUDA_SUCCESS)
            say3("  read back", &back);
        CALL("  destroy", cuArrayDestroy(a));
    }
}

/* Sparse tiles by element size and shape (the recorded sparse-deferred asked float x1
 * only): a sparse array's tile extent, and a sparse mipmapped array's miptail, for each
 * element size from 1 to 16 bytes, in 2D, 3D and layered 2D. */
static void sparse_tiles(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    const struct { int fmt; unsigned ch; const char *what; } formats[] = {
        {CU_AD_FORMAT_UNSIGNED_INT8, 1, "u8x1"},   {CU_AD_FORMAT_UNSIGNED_INT8, 2, "u8x2"},
        {CU_AD_FORMAT_UNSIGNED_INT16, 1, "u16x1"}, {CU_AD_FORMAT_UNSIGNED_INT8, 4, "u8x4"},
        {CU_AD_FORMAT_HALF, 2, "halfx2"},          {CU_AD_FORMAT_FLOAT, 2, "floatx2"},
        {CU_AD_FORMAT_HALF, 4, "halfx4"},          {CU_AD_FORMAT_FLOAT, 4, "floatx4"},
        {CU_AD_FORMAT_BC1_UNORM, 4, "bc1"},        {CU_AD_FORMAT_BC7_UNORM, 4, "bc7"},
    };
    const struct { size_t w, h, d; unsigned fl; const char *what; } shapes[] = {
        {1024, 1024, 0, 0, "2D 1024x1024"},
        {64, 64, 64, 0, "3D 64^3"},
        {1024, 1024, 4, CUDA_ARRAY3D_LAYERED, "layered 2D 1024x1024x4"},
        {100, 60, 0, 0, "2D 100x60"},
    };
    for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            char label[96];
            snprintf(label, sizeof label, "%s %s", formats[f].what, shapes[i].what);
            CUDA_ARRAY3D_DESCRIPTOR d = desc3(shapes[i].w, shapes[i].h, shapes[i].d, formats[f].fmt,
                                              formats[f].ch, shapes[i].fl | CUDA_ARRAY3D_SPARSE);
            CUarray a = NULL;
            CUDA_ARRAY_SPARSE_PROPERTIES sp;
            if (CALL(label, cuArray3DCreate(&a, &d)) == CUDA_SUCCESS) {
                FILL(sp);
                if (CALL("  sparse properties", cuArrayGetSparseProperties(&sp, a)) == CUDA_SUCCESS)
                    SAY("  tile %ux%ux%u miptail first level %u size %llu flags 0x%x",
                        sp.tileExtent.width, sp.tileExtent.height, sp.tileExtent.depth,
                        sp.miptailFirstLevel, (unsigned long long)sp.miptailSize, sp.flags);
                cuArrayDestroy(a);
            }
            CUmipmappedArray m;
            snprintf(label, sizeof label, "%s %s, mipmapped, all levels", formats[f].what, shapes[i].what);
            unsigned levels = 1;
            for (size_t e = shapes[i].w > shapes[i].h ? shapes[i].w : shapes[i].h; e > 1; e /= 2) levels++;
            if (CALL(label, cuMipmappedArrayCreate(&m, &d, levels)) == CUDA_SUCCESS) {
                FILL(sp);
                if (CALL("  sparse properties", cuMipmappedArrayGetSparseProperties(&sp, m)) == CUDA_SUCCESS)
                    SAY("  tile %ux%ux%u miptail first level %u size %llu flags 0x%x",
                        sp.tileExtent.width, sp.tileExtent.height, sp.tileExtent.depth,
                        sp.miptailFirstLevel, (unsigned long long)sp.miptailSize, sp.flags);
                cuMipmappedArrayDestroy(m);
            }
        }
}

/* ---- queries ---- */

static void descriptors(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    const struct { size_t w, h, d; int f; unsigned ch, fl; const char *what; } shapes[] = {
        {64, 0, 0, CU_AD_FORMAT_HALF, 2, 0, "1D 64 half x2"},
        {64, 32, 0, CU_AD_FORMAT_FLOAT, 4, 0, "2D 64x32 float x4"},
        {16, 8, 4, CU_AD_FORMAT_UNSIGNED_INT16, 1, 0, "3D 16x8x4 u16"},
        {16, 0, 3, CU_AD_FORMAT_SIGNED_INT8, 4, CUDA_ARRAY3D_LAYERED, "layered 1D 16x0x3"},
        {16, 8, 3, CU_AD_FORMAT_SIGNED_INT32, 1, CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST, "layered 2D surface"},
        {8, 8, 6, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_CUBEMAP, "cubemap 8"},
        {16, 16, 0, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_TEXTURE_GATHER, "gather 2D"},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        SAY("%s", shapes[i].what);
        CUarray a = make3(shapes[i].w, shapes[i].h, shapes[i].d, shapes[i].f, shapes[i].ch, shapes[i].fl);
        CUDA_ARRAY3D_DESCRIPTOR d3;
        FILL(d3);
        if (CALL("cuArray3DGetDescriptor", cuArray3DGetDescriptor(&d3, a)) == CUDA_SUCCESS)
            say3("3D", &d3);
        CUDA_ARRAY_DESCRIPTOR d2;
        FILL(d2);
        if (CALL("cuArrayGetDescriptor", cuArrayGetDescriptor(&d2, a)) == CUDA_SUCCESS)
            say2("2D", &d2);
        MUST(cuArrayDestroy(a));
    }
    SAY("made by cuArrayCreate, 2D 32x16 u8 x2");
    CUDA_ARRAY_DESCRIPTOR in = desc2(32, 16, CU_AD_FORMAT_UNSIGNED_INT8, 2);
    CUarray a;
    MUST(cuArrayCreate(&a, &in));
    CUDA_ARRAY3D_DESCRIPTOR d3;
    FILL(d3);
    if (CALL("cuArray3DGetDescriptor", cuArray3DGetDescriptor(&d3, a)) == CUDA_SUCCESS) say3("3D", &d3);
    CUDA_ARRAY_DESCRIPTOR d2;
    FILL(d2);
    if (CALL("cuArrayGetDescriptor", cuArrayGetDescriptor(&d2, a)) == CUDA_SUCCESS) say2("2D", &d2);
    MUST(cuArrayDestroy(a));
}

static void requirements_and_planes(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    int count = 0;
    MUST(cuDeviceGetCount(&count));
    CUarray a = make3(64, 64, 0, CU_AD_FORMAT_FLOAT, 1, 0);
    CUDA_ARRAY_MEMORY_REQUIREMENTS mr;
    FILL(mr);
    CALL("memory requirements, plain array", cuArrayGetMemoryRequirements(&mr, a, 0));
    OUT(mr.size);
    CALL("memory requirements, device past the count", cuArrayGetMemoryRequirements(&mr, a, count));
    CUDA_ARRAY_SPARSE_PROPERTIES sp;
    FILL(sp);
    CALL("sparse properties, plain array", cuArrayGetSparseProperties(&sp, a));
    OUT(sp.miptailSize);
    CUarray p;
    FILL(p);
    CALL("plane 0 of a plain array", cuArrayGetPlane(&p, a, 0));
    SAY("plane %s", HANDLE(p));
    FILL(p);
    CALL("plane 1 of a plain array", cuArrayGetPlane(&p, a, 1));
    SAY("plane %s", HANDLE(p));
    MUST(cuArrayDestroy(a));

    /* Planar formats: the first NumChannels each takes, then its planes. */
    const struct named planar[] = {{0xb0, "NV12"}, {0x9f, "P010"}, {0xa2, "NV16"},
                                   {0xb2, "Y444_PLANAR8"}, {0xb4, "YUV444_8bit_SemiPlanar"}};
    for (size_t i = 0; i < sizeof planar / sizeof planar[0]; i++) {
        CUarray n = NULL;
        unsigned ch = 0;
        for (unsigned c = 1; c <= 4 && !n; c++) {
            CUDA_ARRAY3D_DESCRIPTOR d = desc3(64, 32, 0, planar[i].value, c, 0);
            if (cuArray3DCreate(&n, &d) == CUDA_SUCCESS) ch = c; else n = NULL;
        }
        if (!n) {
            SAY("%s: no NumChannels 1..4 makes a 64x32 array", planar[i].name);
            continue;
        }
        SAY("%s 64x32: made with NumChannels %u", planar[i].name, ch);
        for (unsigned k = 0; k < 4; k++) {
            char what[64];
            snprintf(what, sizeof what, "  plane %u", k);
            FILL(p);
            if (CALL(what, cuArrayGetPlane(&p, n, k)) != CUDA_SUCCESS) continue;
            CUDA_ARRAY3D_DESCRIPTOR d;
            FILL(d);
            if (CALL("  its descriptor", cuArray3DGetDescriptor(&d, p)) == CUDA_SUCCESS) say3("  plane", &d);
            CUarray pp;
            FILL(pp);
            CALL("  its plane 0", cuArrayGetPlane(&pp, p, 0));
        }
        CALL("  destroy", cuArrayDestroy(n));
    }
}

/* ---- mipmapped arrays ---- */

static void mipmapped(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    int mw = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH);
    int mh = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT);
    int m1 = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH);
    SAY("maxima: 2D mipmapped %dx%d, 1D mipmapped %d", mw, mh, m1);
    /* 64x16: log2(64) + 1 = 7 levels at most. */
    const unsigned levels[] = {0, 1, 7, 8, 100};
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
        CUDA_ARRAY3D_DESCRIPTOR d = desc3(64, 16, 0, CU_AD_FORMAT_FLOAT, 1, 0);
        CUmipmappedArray m;
        FILL(m);
        char what[64];
        snprintf(what, sizeof what, "64x16, numLevels %u", levels[i]);
        if (CALL(what, cuMipmappedArrayCreate(&m, &d, levels[i])) != CUDA_SUCCESS) continue;
        for (unsigned l = 0; l <= 8; l++) {
            CUarray a;
            FILL(a);
            CUresult r = cuMipmappedArrayGetLevel(&a, m, l);
            if (r != CUDA_SUCCESS) {
                SAY("level %u = %s, out %s", l, rname(r), HANDLE(a));
                break;
            }
            CUDA_ARRAY3D_DESCRIPTOR back;
            FILL(back);
            CUresult r2 = cuArray3DGetDescriptor(&back, a);
            SAY("level %u = %s: descriptor %s %zux%zux%zu flags 0x%x", l, rname(r), rname(r2),
                back.Width, back.Height, back.Depth, back.Flags);
        }
        CALL("destroy", cuMipmappedArrayDestroy(m));
    }
    const struct { size_t w, h, d; unsigned fl; const char *what; } shapes[] = {
        {0, 0, 0, 0, "0x0x0"},
        {16, 0, 0, 0, "1D 16"},
        {(size_t)m1, 0, 0, 0, "1D mipmapped max"},
        {(size_t)m1 + 1, 0, 0, 0, "1D mipmapped max+1"},
        {(size_t)mw, 1, 0, 0, "2D mipmapped max width x1"},
        {(size_t)mw + 1, 1, 0, 0, "2D mipmapped max+1 width x1"},
        {1, (size_t)mh + 1, 0, 0, "2D 1x mipmapped max+1 height"},
        {16, 8, 4, 0, "3D 16x8x4"},
        {16, 16, 6, CUDA_ARRAY3D_CUBEMAP, "cubemap 16"},
        {16, 16, 12, CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_LAYERED, "layered cubemap 16x2"},
        {16, 8, 3, CUDA_ARRAY3D_LAYERED, "layered 2D 16x8x3"},
        {16, 16, 0, CUDA_ARRAY3D_SURFACE_LDST, "2D 16 SURFACE_LDST"},
        {16, 16, 0, CUDA_ARRAY3D_TEXTURE_GATHER, "2D 16 TEXTURE_GATHER"},
        {16, 16, 0, CUDA_ARRAY3D_SPARSE, "2D 16 SPARSE"},
        {16, 16, 0, CUDA_ARRAY3D_DEFERRED_MAPPING, "2D 16 DEFERRED_MAPPING"},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        CUDA_ARRAY3D_DESCRIPTOR d = desc3(shapes[i].w, shapes[i].h, shapes[i].d, CU_AD_FORMAT_UNSIGNED_INT8, 1, shapes[i].fl);
        CUmipmappedArray m;
        FILL(m);
        if (CALL(shapes[i].what, cuMipmappedArrayCreate(&m, &d, 3)) != CUDA_SUCCESS) continue;
        unsigned l = 0;
        CUarray a;
        while (l < 4 && cuMipmappedArrayGetLevel(&a, m, l) == CUDA_SUCCESS) l++;
        CUDA_ARRAY3D_DESCRIPTOR back;
        FILL(back);
        if (l && cuMipmappedArrayGetLevel(&a, m, l - 1) == CUDA_SUCCESS &&
            cuArray3DGetDescriptor(&back, a) == CUDA_SUCCESS)
            SAY("%u levels; the last %zux%zux%zu flags 0x%x", l, back.Width, back.Height, back.Depth, back.Flags);
        CUDA_ARRAY_MEMORY_REQUIREMENTS mr;
        FILL(mr);
        if (CALL("  memory requirements", cuMipmappedArrayGetMemoryRequirements(&mr, m, 0)) == CUDA_SUCCESS)
            SAY("  size %zu alignment %zu", mr.size, mr.alignment);
        CUDA_ARRAY_SPARSE_PROPERTIES sp;
        FILL(sp);
        if (CALL("  sparse properties", cuMipmappedArrayGetSparseProperties(&sp, m)) == CUDA_SUCCESS)
            SAY("  tile %ux%ux%u miptail first level %u size %llu flags 0x%x", sp.tileExtent.width,
                sp.tileExtent.height, sp.tileExtent.depth, sp.miptailFirstLevel,
                (unsigned long long)sp.miptailSize, sp.flags);
        CALL("  destroy", cuMipmappedArrayDestroy(m));
    }
}

/* ---- copies ---- */

/* A 1D array of 64 u32 (256 bytes), and device memory and host buffers beside it. */
static void copies_linear(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUarray a = make3(64, 0, 0, CU_AD_FORMAT_UNSIGNED_INT32, 1, 0);
    CUarray b = make3(64, 0, 0, CU_AD_FORMAT_UNSIGNED_INT32, 1, 0);
    CUarray two = make3(16, 4, 0, CU_AD_FORMAT_UNSIGNED_INT32, 1, 0);
    CUdeviceptr dev;
    MUST(cuMemAlloc(&dev, 4096));
    unsigned char src[512], dst[512];
    pattern(src, sizeof src, 1);
    MUST(cuMemcpyHtoD(dev, src, 512));
    const struct { size_t off, n; const char *what; } cases[] = {
        {0, 256, "whole"}, {252, 4, "last element"}, {256, 4, "offset at the end"},
        {300, 4, "offset past the end"}, {0, 260, "overrunning by 4"}, {4, 256, "offset 4, 256"},
        {2, 4, "offset 2 (inside an element)"}, {0, 6, "size 6 (not whole elements)"},
        {0, 0, "size 0"}, {256, 0, "size 0 at the end"}, {1000, 0, "size 0 past the end"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t o = cases[i].off, n = cases[i].n;
        printf("%s (offset %zu, %zu bytes): HtoA %s", cases[i].what, o, n, rname(cuMemcpyHtoA(a, o, src, n)));
        printf(", AtoH %s", rname(cuMemcpyAtoH(dst, a, o, n)));
        printf(", DtoA %s", rname(cuMemcpyDtoA(a, o, dev, n)));
        printf(", AtoD %s", rname(cuMemcpyAtoD(dev + 1024, a, o, n)));
        printf(", AtoA dst %s", rname(cuMemcpyAtoA(b, o, a, 0, n)));
        printf(", AtoA src %s\n", rname(cuMemcpyAtoA(b, 0, a, o, n)));
        fflush(stdout);
    }
    /* What moved: the whole array through each path. */
    memset(dst, 0, sizeof dst);
    MUST(cuMemcpyHtoA(a, 0, src, 256));
    MUST(cuMemcpyAtoH(dst, a, 0, 256));
    SAY("HtoA then AtoH: pattern %s", is_pattern(dst, 256, 1) ? "yes" : "no");
    MUST(cuMemcpyAtoA(b, 8, a, 0, 248));
    memset(dst, 0, sizeof dst);
    MUST(cuMemcpyAtoH(dst, b, 8, 248));
    SAY("AtoA to offset 8: pattern %s", is_pattern(dst, 248, 1) ? "yes" : "no");
    MUST(cuMemcpyAtoD(dev + 2048, a, 4, 16));
    memset(dst, 0, sizeof dst);
    MUST(cuMemcpyDtoH(dst, dev + 2048, 16));
    SAY("AtoD from offset 4: bytes 4.. of the pattern %s", memcmp(dst, src + 4, 16) == 0 ? "yes" : "no");
    /* A 2D array (16x4 u32, 256 bytes) through the 1D calls. */
    printf("2D array: HtoA whole %s", rname(cuMemcpyHtoA(two, 0, src, 256)));
    printf(", HtoA one row %s", rname(cuMemcpyHtoA(two, 0, src, 64)));
    printf(", AtoH offset 64 %s", rname(cuMemcpyAtoH(dst, two, 64, 64)));
    printf(", DtoA %s", rname(cuMemcpyDtoA(two, 0, dev, 64)));
    printf(", AtoD %s", rname(cuMemcpyAtoD(dev, two, 0, 64)));
    printf(", AtoA from a 1D %s\n", rname(cuMemcpyAtoA(two, 0, a, 0, 64)));
    fflush(stdout);
    MUST(cuArrayDestroy(a));
    MUST(cuArrayDestroy(b));
    MUST(cuArrayDestroy(two));
    MUST(cuMemFree(dev));
}

static CUDA_MEMCPY2D host_to_array(const void *src, size_t pitch, CUarray a) {
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = src;
    c.srcPitch = pitch;
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    c.dstArray = a;
    return c;
}

/* A 2D array of 8x4 float4 (16-byte elements, rows of 128 bytes). */
static void copies_2d(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUarray a = make3(8, 4, 0, CU_AD_FORMAT_FLOAT, 4, 0);
    CUarray b = make3(8, 4, 0, CU_AD_FORMAT_FLOAT, 4, 0);
    static unsigned char src[4096], dst[4096];
    pattern(src, sizeof src, 3);
    const struct { size_t x, y, w, h, pitch; const char *what; } cases[] = {
        {0, 0, 128, 4, 128, "whole"},
        {0, 0, 120, 4, 128, "WidthInBytes 120 (7.5 elements)"},
        {0, 0, 8, 1, 128, "WidthInBytes 8 (half an element)"},
        {8, 0, 16, 1, 128, "XInBytes 8 (inside an element)"},
        {4, 0, 16, 1, 128, "XInBytes 4"},
        {16, 0, 112, 4, 128, "XInBytes 16, the rest of the rows"},
        {16, 0, 128, 1, 128, "XInBytes 16, overrunning a row"},
        {0, 0, 136, 1, 136, "WidthInBytes 136 (past a row)"},
        {0, 0, 128, 5, 128, "Height 5 (past)"},
        {0, 3, 128, 2, 128, "Y 3, Height 2 (past)"},
        {0, 4, 128, 1, 128, "Y 4 (at the end)"},
        {0, 0, 0, 4, 128, "WidthInBytes 0"},
        {0, 0, 128, 0, 128, "Height 0"},
        {0, 0, 0, 0, 128, "both 0"},
        {1000, 1000, 0, 0, 128, "both 0, X and Y past the end"},
        {0, 0, 128, 4, 64, "host pitch 64 (under the width)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CUDA_MEMCPY2D c = host_to_array(src, cases[i].pitch, a);
        c.dstXInBytes = cases[i].x;
        c.dstY = cases[i].y;
        c.WidthInBytes = cases[i].w;
        c.Height = cases[i].h;
        printf("%s: to the array %s", cases[i].what, rname(cuMemcpy2D(&c)));
        /* The same extent from the array to the host. */
        CUDA_MEMCPY2D r;
        memset(&r, 0, sizeof r);
        r.srcMemoryType = CU_MEMORYTYPE_ARRAY;
        r.srcArray = a;
        r.srcXInBytes = cases[i].x;
        r.srcY = cases[i].y;
        r.dstMemoryType = CU_MEMORYTYPE_HOST;
        r.dstHost = dst;
        r.dstPitch = cases[i].pitch;
        r.WidthInBytes = cases[i].w;
        r.Height = cases[i].h;
        printf(", from it %s", rname(cuMemcpy2D(&r)));
        printf(", unaligned call %s", rname(cuMemcpy2DUnaligned(&c)));
        CUDA_MEMCPY2D aa;
        memset(&aa, 0, sizeof aa);
        aa.srcMemoryType = CU_MEMORYTYPE_ARRAY;
        aa.srcArray = a;
        aa.srcXInBytes = cases[i].x;
        aa.srcY = cases[i].y;
        aa.dstMemoryType = CU_MEMORYTYPE_ARRAY;
        aa.dstArray = b;
        aa.WidthInBytes = cases[i].w;
        aa.Height = cases[i].h;
        printf(", array to array %s\n", rname(cuMemcpy2D(&aa)));
        fflush(stdout);
    }
    /* An array's pitch fields are not read: a nonsense dstPitch and srcPitch. */
    CUDA_MEMCPY2D c = host_to_array(src, 128, a);
    c.dstPitch = 1;
    c.WidthInBytes = 128;
    c.Height = 4;
    CALL("dstPitch 1 for an array destination", cuMemcpy2D(&c));
    CUDA_MEMCPY2D r;
    memset(&r, 0, sizeof r);
    r.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    r.srcArray = a;
    r.srcPitch = 3;
    r.dstMemoryType = CU_MEMORYTYPE_HOST;
    r.dstHost = dst;
    r.dstPitch = 128;
    r.WidthInBytes = 128;
    r.Height = 4;
    memset(dst, 0, sizeof dst);
    CALL("srcPitch 3 for an array source", cuMemcpy2D(&r));
    SAY("read back: pattern %s", is_pattern(dst, 512, 3) ? "yes" : "no");
    r.srcHost = src;
    r.srcDevice = 0x1000;
    CALL("array source with srcHost and srcDevice set", cuMemcpy2D(&r));
    CUDA_MEMCPY2D n = host_to_array(src, 128, NULL);
    n.WidthInBytes = 16;
    n.Height = 1;
    CALL("NULL dstArray", cuMemcpy2D(&n));
    MUST(cuArrayDestroy(a));
    MUST(cuArrayDestroy(b));
}

/* A 3D array of 8x4x3 u32x2 (8-byte elements, rows of 64 bytes). */
static void copies_3d(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUarray a = make3(8, 4, 3, CU_AD_FORMAT_UNSIGNED_INT32, 2, 0);
    CUarray flat = make3(8, 4, 0, CU_AD_FORMAT_UNSIGNED_INT32, 2, 0);
    static unsigned char src[4096], dst[4096];
    pattern(src, sizeof src, 5);
    const struct { size_t x, y, z, w, h, d; const char *what; } cases[] = {
        {0, 0, 0, 64, 4, 3, "whole"},
        {0, 0, 0, 60, 4, 3, "WidthInBytes 60 (7.5 elements)"},
        {4, 0, 0, 8, 1, 1, "XInBytes 4 (inside an element)"},
        {8, 0, 0, 56, 4, 3, "XInBytes 8, the rest"},
        {8, 0, 0, 64, 1, 1, "XInBytes 8, overrunning a row"},
        {0, 0, 0, 64, 5, 1, "Height 5 (past)"},
        {0, 0, 0, 64, 4, 4, "Depth 4 (past)"},
        {0, 0, 2, 64, 4, 2, "Z 2, Depth 2 (past)"},
        {0, 0, 3, 64, 1, 1, "Z 3 (at the end)"},
        {0, 0, 0, 0, 4, 3, "WidthInBytes 0"},
        {0, 0, 0, 64, 0, 3, "Height 0"},
        {0, 0, 0, 64, 4, 0, "Depth 0"},
        {0, 0, 0, 0, 0, 0, "all 0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CUDA_MEMCPY3D c;
        memset(&c, 0, sizeof c);
        c.srcMemoryType = CU_MEMORYTYPE_HOST;
        c.srcHost = src;
        c.srcPitch = 64;
        c.srcHeight = 4;
        c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
        c.dstArray = a;
        c.dstXInBytes = cases[i].x;
        c.dstY = cases[i].y;
        c.dstZ = cases[i].z;
        c.WidthInBytes = cases[i].w;
        c.Height = cases[i].h;
        c.Depth = cases[i].d;
        printf("%s: to the array %s", cases[i].what, rname(cuMemcpy3D(&c)));
        CUDA_MEMCPY3D r;
        memset(&r, 0, sizeof r);
        r.srcMemoryType = CU_MEMORYTYPE_ARRAY;
        r.srcArray = a;
        r.srcXInBytes = cases[i].x;
        r.srcY = cases[i].y;
        r.srcZ = cases[i].z;
        r.dstMemoryType = CU_MEMORYTYPE_HOST;
        r.dstHost = dst;
        r.dstPitch = 64;
        r.dstHeight = 4;
        r.WidthInBytes = cases[i].w;
        r.Height = cases[i].h;
        r.Depth = cases[i].d;
        printf(", from it %s\n", rname(cuMemcpy3D(&r)));
        fflush(stdout);
    }
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = src;
    c.srcPitch = 64;
    c.srcHeight = 4;
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    c.dstArray = a;
    c.dstPitch = 1;
    c.dstHeight = 1;
    c.WidthInBytes = 64;
    c.Height = 4;
    c.Depth = 3;
    CALL("dstPitch 1, dstHeight 1 for an array destination", cuMemcpy3D(&c));
    CUDA_MEMCPY3D r;
    memset(&r, 0, sizeof r);
    r.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    r.srcArray = a;
    r.dstMemoryType = CU_MEMORYTYPE_HOST;
    r.dstHost = dst;
    r.dstPitch = 64;
    r.dstHeight = 4;
    r.WidthInBytes = 64;
    r.Height = 4;
    r.Depth = 3;
    memset(dst, 0, sizeof dst);
    CALL("read it back", cuMemcpy3D(&r));
    SAY("pattern %s", is_pattern(dst, 768, 5) ? "yes" : "no");
    c.srcHeight = 2;
    CALL("host srcHeight 2 (under Height 4)", cuMemcpy3D(&c));
    c.srcHeight = 4;
    c.srcLOD = 1;
    CALL("srcLOD 1", cuMemcpy3D(&c));
    c.srcLOD = 0;
    c.dstLOD = 1;
    CALL("dstLOD 1", cuMemcpy3D(&c));
    /* A 2D array in a 3D copy. */
    c.dstLOD = 0;
    c.dstArray = flat;
    c.Depth = 1;
    CALL("2D array, Depth 1", cuMemcpy3D(&c));
    c.Depth = 2;
    CALL("2D array, Depth 2", cuMemcpy3D(&c));
    c.Depth = 1;
    c.dstZ = 1;
    CALL("2D array, dstZ 1", cuMemcpy3D(&c));
    MUST(cuArrayDestroy(a));
    MUST(cuArrayDestroy(flat));
}

/* ---- texture objects ---- */

static CUDA_RESOURCE_DESC res_array(CUarray a) {
    CUDA_RESOURCE_DESC r;
    memset(&r, 0, sizeof r);
    r.resType = CU_RESOURCE_TYPE_ARRAY;
    r.res.array.hArray = a;
    return r;
}

static CUDA_RESOURCE_DESC res_linear(CUdeviceptr p, int fmt, unsigned ch, size_t n) {
    CUDA_RESOURCE_DESC r;
    memset(&r, 0, sizeof r);
    r.resType = CU_RESOURCE_TYPE_LINEAR;
    r.res.linear.devPtr = p;
    r.res.linear.format = (CUarray_format)fmt;
    r.res.linear.numChannels = ch;
    r.res.linear.sizeInBytes = n;
    return r;
}

static CUDA_RESOURCE_DESC res_pitch(CUdeviceptr p, int fmt, unsigned ch, size_t w, size_t h,
                                    size_t pitch) {
    CUDA_RESOURCE_DESC r;
    memset(&r, 0, sizeof r);
    r.resType = CU_RESOURCE_TYPE_PITCH2D;
    r.res.pitch2D.devPtr = p;
    r.res.pitch2D.format = (CUarray_format)fmt;
    r.res.pitch2D.numChannels = ch;
    r.res.pitch2D.width = w;
    r.res.pitch2D.height = h;
    r.res.pitch2D.pitchInBytes = pitch;
    return r;
}

static CUDA_TEXTURE_DESC tex_point(void) {
    CUDA_TEXTURE_DESC t;
    memset(&t, 0, sizeof t);
    t.addressMode[0] = t.addressMode[1] = t.addressMode[2] = CU_TR_ADDRESS_MODE_CLAMP;
    t.filterMode = CU_TR_FILTER_MODE_POINT;
    return t;
}

/* cuTexObjectCreate said as `label = RESULT`; destroyed when made. */
static void try_tex(const char *label, CUDA_RESOURCE_DESC r, CUDA_TEXTURE_DESC t,
                    const CUDA_RESOURCE_VIEW_DESC *v) {
    CUtexObject o;
    FILL(o);
    CUresult res = cuTexObjectCreate(&o, &r, &t, v);
    printf("%s = %s", label, rname(res));
    if (res == CUDA_SUCCESS)
        cuTexObjectDestroy(o);
    else if (strcmp(HANDLE(o), "untouched") != 0)
        printf(", object %s", HANDLE(o));
    printf("\n");
    fflush(stdout);
}

static void tex_array(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUarray f = make3(16, 16, 0, CU_AD_FORMAT_FLOAT, 1, 0);
    CUarray u = make3(16, 16, 0, CU_AD_FORMAT_UNSIGNED_INT8, 4, 0);
    CUarray i32 = make3(16, 16, 0, CU_AD_FORMAT_SIGNED_INT32, 1, 0);
    CUDA_TEXTURE_DESC t = tex_point();
    try_tex("float array", res_array(f), t, NULL);
    CUDA_RESOURCE_DESC r = res_array(NULL);
    try_tex("hArray NULL", r, t, NULL);
    r = res_array(f);
    r.resType = (CUresourcetype)7;
    try_tex("resType 7", r, t, NULL);
    r = res_array(f);
    r.flags = 1;
    try_tex("resource flags 1", r, t, NULL);
    t = tex_point();
    t.addressMode[0] = (CUaddress_mode)7;
    try_tex("addressMode 7", res_array(f), t, NULL);
    t = tex_point();
    t.addressMode[2] = (CUaddress_mode)7;
    try_tex("addressMode[2] 7 on a 2D array", res_array(f), t, NULL);
    t = tex_point();
    t.addressMode[0] = CU_TR_ADDRESS_MODE_WRAP;
    try_tex("WRAP without normalized coordinates", res_array(f), t, NULL);
    t = tex_point();
    t.filterMode = (CUfilter_mode)2;
    try_tex("filterMode 2", res_array(f), t, NULL);
    t = tex_point();
    t.filterMode = CU_TR_FILTER_MODE_LINEAR;
    try_tex("LINEAR on float", res_array(f), t, NULL);
    try_tex("LINEAR on u8x4, normalized float reads", res_array(u), t, NULL);
    t.flags = CU_TRSF_READ_AS_INTEGER;
    try_tex("LINEAR on u8x4, READ_AS_INTEGER (element type)", res_array(u), t, NULL);
    try_tex("LINEAR on s32, READ_AS_INTEGER", res_array(i32), t, NULL);
    t.flags = 0;
    try_tex("LINEAR on s32, no flags", res_array(i32), t, NULL);
    t = tex_point();
    t.flags = CU_TRSF_READ_AS_INTEGER;
    try_tex("READ_AS_INTEGER on float", res_array(f), t, NULL);
    t.flags = CU_TRSF_SRGB;
    try_tex("SRGB on u8x4", res_array(u), t, NULL);
    try_tex("SRGB on float", res_array(f), t, NULL);
    t.flags = 0x80;
    try_tex("flags 0x80 (unnamed)", res_array(f), t, NULL);
    t = tex_point();
    t.mipmapFilterMode = (CUfilter_mode)2;
    try_tex("mipmapFilterMode 2", res_array(f), t, NULL);
    t = tex_point();
    t.maxAnisotropy = 17;
    try_tex("maxAnisotropy 17", res_array(f), t, NULL);
    t = tex_point();
    t.minMipmapLevelClamp = 4;
    t.maxMipmapLevelClamp = 1;
    try_tex("min clamp 4 > max clamp 1", res_array(f), t, NULL);
    t = tex_point();
    t.addressMode[0] = CU_TR_ADDRESS_MODE_BORDER;
    t.borderColor[0] = 1.5f;
    try_tex("BORDER, borderColor 1.5", res_array(f), t, NULL);
    MUST(cuArrayDestroy(f));
    MUST(cuArrayDestroy(u));
    MUST(cuArrayDestroy(i32));
}

static void tex_mipmapped(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUDA_ARRAY3D_DESCRIPTOR d = desc3(64, 64, 0, CU_AD_FORMAT_FLOAT, 1, 0);
    CUmipmappedArray m;
    MUST(cuMipmappedArrayCreate(&m, &d, 4));
    CUDA_RESOURCE_DESC r;
    memset(&r, 0, sizeof r);
    r.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
    r.res.mipmap.hMipmappedArray = m;
    CUDA_TEXTURE_DESC t = tex_point();
    t.flags = CU_TRSF_NORMALIZED_COORDINATES;
    t.maxMipmapLevelClamp = 3;
    try_tex("mipmapped array", r, t, NULL);
    t.mipmapFilterMode = CU_TR_FILTER_MODE_LINEAR;
    try_tex("mipmapFilterMode LINEAR", r, t, NULL);
    t.maxMipmapLevelClamp = 10;
    try_tex("max clamp 10 (past the levels)", r, t, NULL);
    t.minMipmapLevelClamp = -1;
    try_tex("min clamp -1", r, t, NULL);
    t = tex_point();
    try_tex("unnormalized coordinates", r, t, NULL);
    CUDA_RESOURCE_DESC n = r;
    n.res.mipmap.hMipmappedArray = NULL;
    try_tex("hMipmappedArray NULL", n, t, NULL);
    CUarray level;
    MUST(cuMipmappedArrayGetLevel(&level, m, 1));
    try_tex("a level as an array resource", res_array(level), t, NULL);
    MUST(cuMipmappedArrayDestroy(m));
}

static void tex_linear(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUdeviceptr p;
    MUST(cuMemAlloc(&p, 1 << 20));
    size_t maxw = 0;
    CALL("cuDeviceGetTexture1DLinearMaxWidth u32 x1", cuDeviceGetTexture1DLinearMaxWidth(&maxw, CU_AD_FORMAT_UNSIGNED_INT32, 1, 0));
    SAY("max width %zu elements; attribute %d; TEXTURE_ALIGNMENT %d", maxw,
        attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH), attr(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT));
    const int u32 = CU_AD_FORMAT_UNSIGNED_INT32;
    CUDA_TEXTURE_DESC t = tex_point();
    try_tex("1 MiB u32", res_linear(p, u32, 1, 1 << 20), t, NULL);
    try_tex("sizeInBytes 0", res_linear(p, u32, 1, 0), t, NULL);
    try_tex("sizeInBytes 4", res_linear(p, u32, 1, 4), t, NULL);
    try_tex("sizeInBytes 6 (not whole elements)", res_linear(p, u32, 1, 6), t, NULL);
    try_tex("sizeInBytes 2 MiB (past the allocation)", res_linear(p, u32, 1, 2 << 20), t, NULL);
    try_tex("sizeInBytes max width elements", res_linear(p, u32, 1, maxw * 4), t, NULL);
    try_tex("sizeInBytes max width + 1 elements", res_linear(p, u32, 1, maxw * 4 + 4), t, NULL);
    try_tex("devPtr + 4", res_linear(p + 4, u32, 1, 4096), t, NULL);
    try_tex("devPtr + 256", res_linear(p + 256, u32, 1, 4096), t, NULL);
    try_tex("devPtr + 512", res_linear(p + 512, u32, 1, 4096), t, NULL);
    try_tex("devPtr 0", res_linear(0, u32, 1, 4096), t, NULL);
    try_tex("numChannels 3", res_linear(p, u32, 3, 4096), t, NULL);
    try_tex("numChannels 0", res_linear(p, u32, 0, 4096), t, NULL);
    try_tex("format NV12", res_linear(p, CU_AD_FORMAT_NV12, 1, 4096), t, NULL);
    try_tex("format BC1", res_linear(p, 0x91, 4, 4096), t, NULL);
    try_tex("format 0x77", res_linear(p, 0x77, 1, 4096), t, NULL);
    t.filterMode = CU_TR_FILTER_MODE_LINEAR;
    try_tex("LINEAR filter", res_linear(p, CU_AD_FORMAT_FLOAT, 1, 4096), t, NULL);
    t.flags = CU_TRSF_READ_AS_INTEGER;
    try_tex("LINEAR filter, u32 READ_AS_INTEGER", res_linear(p, u32, 1, 4096), t, NULL);
    t = tex_point();
    t.flags = CU_TRSF_NORMALIZED_COORDINATES;
    try_tex("normalized coordinates", res_linear(p, CU_AD_FORMAT_FLOAT, 1, 4096), t, NULL);
    MUST(cuMemFree(p));
}

static void tex_pitch2d(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    int pa = attr(CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT);
    int lw = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH);
    int lh = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT);
    int lp = attr(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH);
    SAY("pitch alignment %d; linear 2D maxima: width %d height %d pitch %d", pa, lw, lh, lp);
    CUdeviceptr p;
    MUST(cuMemAlloc(&p, 32 << 20));
    const int f = CU_AD_FORMAT_FLOAT;
    CUDA_TEXTURE_DESC t = tex_point();
    try_tex("64x32 float, pitch 256", res_pitch(p, f, 1, 64, 32, 256), t, NULL);
    try_tex("pitch 264 (not a multiple of the alignment)", res_pitch(p, f, 1, 64, 32, 264), t, NULL);
    try_tex("pitch 256 + alignment", res_pitch(p, f, 1, 64, 32, 256 + pa), t, NULL);
    try_tex("pitch 128 (under the row's 256 bytes)", res_pitch(p, f, 1, 64, 32, 128), t, NULL);
    try_tex("pitch 0", res_pitch(p, f, 1, 64, 32, 0), t, NULL);
    try_tex("width 0", res_pitch(p, f, 1, 0, 32, 256), t, NULL);
    try_tex("height 0", res_pitch(p, f, 1, 64, 0, 256), t, NULL);
    try_tex("width 1 height 1 pitch 32", res_pitch(p, f, 1, 1, 1, 32), t, NULL);
    size_t wide = ((size_t)(lw + 1) * 4 + pa - 1) / pa * pa;
    try_tex("width max, pitch to fit", res_pitch(p, f, 1, lw, 1, (size_t)lw * 4), t, NULL);
    try_tex("width max+1, pitch to fit", res_pitch(p, f, 1, lw + 1, 1, wide), t, NULL);
    try_tex("height max, pitch 32", res_pitch(p, f, 1, 8, lh, 32), t, NULL);
    try_tex("height max+1, pitch 32", res_pitch(p, f, 1, 8, lh + 1, 32), t, NULL);
    size_t over = ((size_t)lp + pa) / pa * pa;
    try_tex("pitch max (rounded down to the alignment)", res_pitch(p, f, 1, 8, 2, (size_t)lp / pa * pa), t, NULL);
    try_tex("pitch past max", res_pitch(p, f, 1, 8, 2, over), t, NULL);
    try_tex("devPtr + 4", res_pitch(p + 4, f, 1, 64, 32, 256), t, NULL);
    try_tex("devPtr + 32", res_pitch(p + 32, f, 1, 64, 32, 256), t, NULL);
    try_tex("devPtr + 256", res_pitch(p + 256, f, 1, 64, 32, 256), t, NULL);
    try_tex("devPtr 0", res_pitch(0, f, 1, 64, 32, 256), t, NULL);
    try_tex("rows past the 32 MiB allocation (pitch 1024, height 60000)", res_pitch(p, f, 1, 64, 60000, 1024), t, NULL);
    t.filterMode = CU_TR_FILTER_MODE_LINEAR;
    try_tex("LINEAR on float", res_pitch(p, f, 1, 64, 32, 256), t, NULL);
    t.flags = CU_TRSF_READ_AS_INTEGER;
    try_tex("LINEAR on u16 READ_AS_INTEGER", res_pitch(p, CU_AD_FORMAT_UNSIGNED_INT16, 1, 64, 32, 256), t, NULL);
    MUST(cuMemFree(p));
}

static void say_view(const char *what, const CUDA_RESOURCE_VIEW_DESC *v) {
    SAY("%s: format %d %zux%zux%zu levels %u..%u layers %u..%u", what, (int)v->format, v->width,
        v->height, v->depth, v->firstMipmapLevel, v->lastMipmapLevel, v->firstLayer, v->lastLayer);
}

/* Resource views (the mock does not emulate them): which the H200 takes, and what its
 * getter answers after. */
static void tex_views(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUarray a = make3(16, 16, 0, CU_AD_FORMAT_UNSIGNED_INT32, 1, 0);
    CUDA_TEXTURE_DESC t = tex_point();
    CUDA_RESOURCE_VIEW_DESC v;
    memset(&v, 0, sizeof v);
    v.format = CU_RES_VIEW_FORMAT_UINT_1X32;
    v.width = 16;
    v.height = 16;
    CUDA_RESOURCE_DESC r = res_array(a);
    CUtexObject o;
    FILL(o);
    if (CALL("array with a matching view", cuTexObjectCreate(&o, &r, &t, &v)) == CUDA_SUCCESS) {
        CUDA_RESOURCE_VIEW_DESC back;
        FILL(back);
        if (CALL("its view", cuTexObjectGetResourceViewDesc(&back, o)) == CUDA_SUCCESS)
            say_view("view", &back);
        cuTexObjectDestroy(o);
    }
    CUDA_RESOURCE_VIEW_DESC w = v;
    w.format = CU_RES_VIEW_FORMAT_NONE;
    try_tex("view format NONE", r, t, &w);
    w = v;
    w.format = CU_RES_VIEW_FORMAT_FLOAT_1X32;
    try_tex("view format FLOAT_1X32 over u32", r, t, &w);
    w = v;
    w.format = CU_RES_VIEW_FORMAT_UINT_2X16;
    try_tex("view format UINT_2X16 over u32", r, t, &w);
    w = v;
    w.width = 32;
    try_tex("view wider than the array", r, t, &w);
    w = v;
    w.width = 8;
    w.height = 8;
    try_tex("view smaller than the array", r, t, &w);
    w = v;
    w.lastMipmapLevel = 1;
    try_tex("view lastMipmapLevel 1", r, t, &w);
    w = v;
    w.lastLayer = 1;
    try_tex("view lastLayer 1", r, t, &w);
    memset(&w, 0, sizeof w);
    try_tex("view all zero", r, t, &w);
    CUdeviceptr p;
    MUST(cuMemAlloc(&p, 4096));
    w = v;
    w.width = 1024;
    w.height = 0;
    try_tex("view over linear memory", res_linear(p, CU_AD_FORMAT_UNSIGNED_INT32, 1, 4096), t, &w);
    /* Without a view: the getter. */
    MUST(cuTexObjectCreate(&o, &r, &t, NULL));
    CUDA_RESOURCE_VIEW_DESC back;
    FILL(back);
    CALL("no view: its view", cuTexObjectGetResourceViewDesc(&back, o));
    OUT(back.width);
    cuTexObjectDestroy(o);
    MUST(cuMemFree(p));
    MUST(cuArrayDestroy(a));
}

static void say_tex(const CUDA_TEXTURE_DESC *t) {
    SAY("texture: address %d %d %d filter %d flags 0x%x aniso %u mipfilter %d bias %g clamp %g..%g border %g",
        t->addressMode[0], t->addressMode[1], t->addressMode[2], t->filterMode, t->flags,
        t->maxAnisotropy, t->mipmapFilterMode, t->mipmapLevelBias, t->minMipmapLevelClamp,
        t->maxMipmapLevelClamp, t->borderColor[0]);
}

static void tex_getters(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUarray a = make3(16, 16, 0, CU_AD_FORMAT_HALF, 2, 0);
    CUdeviceptr p;
    MUST(cuMemAlloc(&p, 1 << 16));
    CUDA_TEXTURE_DESC t = tex_point();
    t.addressMode[0] = CU_TR_ADDRESS_MODE_MIRROR;
    t.addressMode[1] = CU_TR_ADDRESS_MODE_BORDER;
    t.addressMode[2] = CU_TR_ADDRESS_MODE_WRAP;
    t.filterMode = CU_TR_FILTER_MODE_LINEAR;
    t.flags = CU_TRSF_NORMALIZED_COORDINATES | CU_TRSF_SEAMLESS_CUBEMAP;
    t.maxAnisotropy = 4;
    t.mipmapLevelBias = 0.5f;
    t.maxMipmapLevelClamp = 2;
    t.borderColor[0] = 0.25f;
    CUDA_RESOURCE_DESC rs[3] = {res_array(a), res_linear(p + 512, CU_AD_FORMAT_FLOAT, 2, 4096),
                                res_pitch(p, CU_AD_FORMAT_SIGNED_INT16, 4, 16, 8, 128)};
    const char *names[3] = {"array", "linear", "pitch2D"};
    for (int i = 0; i < 3; i++) {
        SAY("%s", names[i]);
        CUtexObject o;
        if (CALL("create", cuTexObjectCreate(&o, &rs[i], &t, NULL)) != CUDA_SUCCESS) continue;
        CUDA_RESOURCE_DESC r;
        FILL(r);
        if (CALL("resource", cuTexObjectGetResourceDesc(&r, o)) == CUDA_SUCCESS) {
            SAY("type %d flags %u same as given: %s", r.resType, r.flags,
                memcmp(&r.res, &rs[i].res, sizeof r.res) == 0 ? "yes" : "no");
            if (r.resType == CU_RESOURCE_TYPE_LINEAR)
                SAY("linear: format 0x%x channels %u size %zu, devPtr offset %lld",
                    r.res.linear.format, r.res.linear.numChannels, r.res.linear.sizeInBytes,
                    (long long)(r.res.linear.devPtr - p));
            if (r.resType == CU_RESOURCE_TYPE_PITCH2D)
                SAY("pitch2D: format 0x%x channels %u %zux%zu pitch %zu", r.res.pitch2D.format,
                    r.res.pitch2D.numChannels, r.res.pitch2D.width, r.res.pitch2D.height,
                    r.res.pitch2D.pitchInBytes);
        }
        CUDA_TEXTURE_DESC back;
        FILL(back);
        if (CALL("texture", cuTexObjectGetTextureDesc(&back, o)) == CUDA_SUCCESS) say_tex(&back);
        CALL("destroy", cuTexObjectDestroy(o));
    }
    MUST(cuMemFree(p));
    MUST(cuArrayDestroy(a));
}

/* tex-getters' descriptor, one field at a time over its three resources (the H200 refused
 * the whole descriptor over each: which field). */
static void tex_desc_fields(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUarray a = make3(16, 16, 0, CU_AD_FORMAT_HALF, 2, 0);
    CUarray cube = make3(16, 16, 6, CU_AD_FORMAT_HALF, 2, CUDA_ARRAY3D_CUBEMAP);
    CUdeviceptr p;
    MUST(cuMemAlloc(&p, 1 << 16));
    CUDA_RESOURCE_DESC rs[4] = {res_array(a), res_linear(p + 512, CU_AD_FORMAT_FLOAT, 2, 4096),
                                res_pitch(p, CU_AD_FORMAT_SIGNED_INT16, 4, 16, 8, 128),
                                res_array(cube)};
    const char *names[4] = {"array", "linear", "pitch2D", "cubemap"};
    for (int i = 0; i < 4; i++) {
        char what[96];
        CUDA_TEXTURE_DESC t = tex_point();
#define ONE(label, change)                                          \
    do {                                                            \
        t = tex_point();                                            \
        change;                                                     \
        snprintf(what, sizeof what, "%s: %s", names[i], label);     \
        try_tex(what, rs[i], t, NULL);                              \
    } while (0)
        ONE("point, clamp", (void)0);
        ONE("addressMode[0] MIRROR", t.addressMode[0] = CU_TR_ADDRESS_MODE_MIRROR);
        ONE("addressMode[1] BORDER", t.addressMode[1] = CU_TR_ADDRESS_MODE_BORDER);
        ONE("addressMode[2] WRAP", t.addressMode[2] = CU_TR_ADDRESS_MODE_WRAP);
        ONE("filter LINEAR", t.filterMode = CU_TR_FILTER_MODE_LINEAR);
        ONE("NORMALIZED_COORDINATES", t.flags = CU_TRSF_NORMALIZED_COORDINATES);
        ONE("SEAMLESS_CUBEMAP", t.flags = CU_TRSF_SEAMLESS_CUBEMAP);
        ONE("DISABLE_TRILINEAR_OPTIMIZATION", t.flags = CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION);
        ONE("maxAnisotropy 4", t.maxAnisotropy = 4);
        ONE("mipmapLevelBias 0.5", t.mipmapLevelBias = 0.5f);
        ONE("maxMipmapLevelClamp 2", t.maxMipmapLevelClamp = 2);
        ONE("borderColor[0] 0.25", t.borderColor[0] = 0.25f);
        ONE("LINEAR, normalized, MIRROR", (t.filterMode = CU_TR_FILTER_MODE_LINEAR,
                                          t.flags = CU_TRSF_NORMALIZED_COORDINATES,
                                          t.addressMode[0] = CU_TR_ADDRESS_MODE_MIRROR));
        ONE("LINEAR, maxAnisotropy 4", (t.filterMode = CU_TR_FILTER_MODE_LINEAR,
                                       t.maxAnisotropy = 4));
        ONE("NORMALIZED_COORDINATES | SEAMLESS_CUBEMAP",
            t.flags = CU_TRSF_NORMALIZED_COORDINATES | CU_TRSF_SEAMLESS_CUBEMAP);
        ONE("every field of tex-getters",
            (t.addressMode[0] = CU_TR_ADDRESS_MODE_MIRROR,
             t.addressMode[1] = CU_TR_ADDRESS_MODE_BORDER,
             t.addressMode[2] = CU_TR_ADDRESS_MODE_WRAP, t.filterMode = CU_TR_FILTER_MODE_LINEAR,
             t.flags = CU_TRSF_NORMALIZED_COORDINATES | CU_TRSF_SEAMLESS_CUBEMAP,
             t.maxAnisotropy = 4, t.mipmapLevelBias = 0.5f, t.maxMipmapLevelClamp = 2,
             t.borderColor[0] = 0.25f));
#undef ONE
        (void)t;
    }
    MUST(cuMemFree(p));
    MUST(cuArrayDestroy(a));
    MUST(cuArrayDestroy(cube));
}

/* ---- surface objects ---- */

static void try_surf(const char *label, CUDA_RESOURCE_DESC r) {
    CUsurfObject o;
    FILL(o);
    CUresult res = cuSurfObjectCreate(&o, &r);
    printf("%s = %s", label, rname(res));
    if (res == CUDA_SUCCESS) {
        CUDA_RESOURCE_DESC back;
        FILL(back);
        CUresult g2 = cuSurfObjectGetResourceDesc(&back, o);
        printf(", resource %s type %d same as given %s", rname(g2), back.resType,
               memcmp(&back.res, &r.res, sizeof r.res) == 0 ? "yes" : "no");
        cuSurfObjectDestroy(o);
    } else if (strcmp(HANDLE(o), "untouched") != 0)
        printf(", object %s", HANDLE(o));
    printf("\n");
    fflush(stdout);
}

static void surfaces(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    CUarray ld = make3(16, 16, 0, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_SURFACE_LDST);
    CUarray plain = make3(16, 16, 0, CU_AD_FORMAT_FLOAT, 1, 0);
    CUarray layered = make3(16, 16, 2, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_SURFACE_LDST | CUDA_ARRAY3D_LAYERED);
    CUarray cube = make3(16, 16, 6, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_SURFACE_LDST | CUDA_ARRAY3D_CUBEMAP);
    try_surf("array with SURFACE_LDST", res_array(ld));
    try_surf("array without SURFACE_LDST", res_array(plain));
    try_surf("layered SURFACE_LDST", res_array(layered));
    try_surf("cubemap SURFACE_LDST", res_array(cube));
    try_surf("hArray NULL", res_array(NULL));
    CUDA_RESOURCE_DESC r = res_array(ld);
    r.flags = 1;
    try_surf("resource flags 1", r);
    CUDA_ARRAY3D_DESCRIPTOR d = desc3(16, 16, 0, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_SURFACE_LDST);
    CUmipmappedArray m;
    MUST(cuMipmappedArrayCreate(&m, &d, 3));
    CUDA_RESOURCE_DESC mr;
    memset(&mr, 0, sizeof mr);
    mr.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
    mr.res.mipmap.hMipmappedArray = m;
    try_surf("mipmapped array", mr);
    CUarray level;
    MUST(cuMipmappedArrayGetLevel(&level, m, 1));
    try_surf("a mipmapped array's level", res_array(level));
    CUdeviceptr p;
    MUST(cuMemAlloc(&p, 1 << 16));
    try_surf("linear memory", res_linear(p, CU_AD_FORMAT_FLOAT, 1, 4096));
    try_surf("pitch2D memory", res_pitch(p, CU_AD_FORMAT_FLOAT, 1, 16, 16, 64));
    r = res_array(ld);
    r.resType = (CUresourcetype)7;
    try_surf("resType 7", r);
    MUST(cuMipmappedArrayDestroy(m));
    MUST(cuMemFree(p));
    MUST(cuArrayDestroy(ld));
    MUST(cuArrayDestroy(plain));
    MUST(cuArrayDestroy(layered));
    MUST(cuArrayDestroy(cube));
}

/* ---- alone: NULL pointers, handles never given out, handles destroyed ---- */

#define ALONE(name, ...)               \
    static void name(void) {           \
        CUcontext ctx_;                \
        init_primary(0, &ctx_);        \
        __VA_ARGS__                    \
    }

static const CUDA_ARRAY_DESCRIPTOR d2_ok = {16, 16, CU_AD_FORMAT_FLOAT, 1};
static const CUDA_ARRAY3D_DESCRIPTOR d3_ok = {16, 16, 0, CU_AD_FORMAT_FLOAT, 1, 0};
/* A handle no call gave out (it points at nothing the driver made, and at no memory). */
#define BOGUS ((void *)0x10000)

ALONE(null_array_create_handle, CALL("cuArrayCreate, NULL pHandle", cuArrayCreate(NULL, &d2_ok));)
ALONE(null_array_create_desc, CUarray a; FILL(a);
      CALL("cuArrayCreate, NULL descriptor", cuArrayCreate(&a, NULL)); SAY("handle %s", HANDLE(a));)
ALONE(null_array3d_create_handle, CALL("cuArray3DCreate, NULL pHandle", cuArray3DCreate(NULL, &d3_ok));)
ALONE(null_array3d_create_desc, CUarray a; FILL(a);
      CALL("cuArray3DCreate, NULL descriptor", cuArray3DCreate(&a, NULL)); SAY("handle %s", HANDLE(a));)
ALONE(null_get_descriptor, CUarray a; MUST(cuArrayCreate(&a, &d2_ok));
      CALL("cuArrayGetDescriptor, NULL out", cuArrayGetDescriptor(NULL, a));)
ALONE(null_get_descriptor3d, CUarray a; MUST(cuArrayCreate(&a, &d2_ok));
      CALL("cuArray3DGetDescriptor, NULL out", cuArray3DGetDescriptor(NULL, a));)
ALONE(null_get_descriptor_array, CUDA_ARRAY3D_DESCRIPTOR d; FILL(d);
      CALL("cuArray3DGetDescriptor, NULL array", cuArray3DGetDescriptor(&d, NULL));)
ALONE(null_mipmapped_create, CALL("cuMipmappedArrayCreate, NULL pHandle", cuMipmappedArrayCreate(NULL, &d3_ok, 2));)
ALONE(null_mipmapped_level, CUmipmappedArray m; MUST(cuMipmappedArrayCreate(&m, &d3_ok, 2));
      CALL("cuMipmappedArrayGetLevel, NULL out", cuMipmappedArrayGetLevel(NULL, m, 0));)
ALONE(null_get_plane, CUarray a; MUST(cuArrayCreate(&a, &d2_ok));
      CALL("cuArrayGetPlane, NULL out", cuArrayGetPlane(NULL, a, 0));)
ALONE(array_destroy_null, CALL("cuArrayDestroy(NULL)", cuArrayDestroy(NULL));)
ALONE(array_destroy_twice, CUarray a; MUST(cuArrayCreate(&a, &d2_ok));
      CALL("first destroy", cuArrayDestroy(a)); CALL("second destroy", cuArrayDestroy(a));)
ALONE(array_destroy_bogus, CALL("cuArrayDestroy of a handle never given out", cuArrayDestroy((CUarray)BOGUS));)
ALONE(array_descriptor_destroyed, CUarray a; MUST(cuArrayCreate(&a, &d2_ok)); MUST(cuArrayDestroy(a));
      CUDA_ARRAY_DESCRIPTOR d; FILL(d);
      CALL("cuArrayGetDescriptor of a destroyed array", cuArrayGetDescriptor(&d, a));)
ALONE(array_destroy_level, CUmipmappedArray m; MUST(cuMipmappedArrayCreate(&m, &d3_ok, 2));
      CUarray l; MUST(cuMipmappedArrayGetLevel(&l, m, 1));
      CALL("cuArrayDestroy of a mipmapped array's level", cuArrayDestroy(l));
      CALL("then the mipmapped array's destroy", cuMipmappedArrayDestroy(m));)
ALONE(array_destroy_plane, CUDA_ARRAY3D_DESCRIPTOR d = desc3(64, 32, 0, CU_AD_FORMAT_NV12, 1, 0);
      CUarray a; CUarray p;
      if (CALL("NV12 64x32 x1", cuArray3DCreate(&a, &d)) != CUDA_SUCCESS) return;
      if (CALL("its plane 1", cuArrayGetPlane(&p, a, 1)) != CUDA_SUCCESS) return;
      CALL("cuArrayDestroy of the plane", cuArrayDestroy(p));
      CALL("then the array's destroy", cuArrayDestroy(a));)
ALONE(mipmapped_destroy_twice, CUmipmappedArray m; MUST(cuMipmappedArrayCreate(&m, &d3_ok, 2));
      CALL("first destroy", cuMipmappedArrayDestroy(m)); CALL("second destroy", cuMipmappedArrayDestroy(m));)
ALONE(mipmapped_destroy_null, CALL("cuMipmappedArrayDestroy(NULL)", cuMipmappedArrayDestroy(NULL));)
ALONE(mipmapped_level_after_destroy, CUmipmappedArray m; MUST(cuMipmappedArrayCreate(&m, &d3_ok, 2));
      CUarray l; MUST(cuMipmappedArrayGetLevel(&l, m, 0)); MUST(cuMipmappedArrayDestroy(m));
      CUDA_ARRAY3D_DESCRIPTOR d; FILL(d);
      CALL("descriptor of a level of a destroyed mipmapped array", cuArray3DGetDescriptor(&d, l));)
ALONE(copy_destroyed_array, CUarray a; MUST(cuArrayCreate(&a, &d2_ok)); MUST(cuArrayDestroy(a));
      char buf[64] = {0};
      CALL("cuMemcpyHtoA to a destroyed array", cuMemcpyHtoA(a, 0, buf, 64));)
ALONE(null_tex_create_object, CUarray a; MUST(cuArrayCreate(&a, &d2_ok));
      CUDA_RESOURCE_DESC r = res_array(a); CUDA_TEXTURE_DESC t = tex_point();
      CALL("cuTexObjectCreate, NULL pTexObject", cuTexObjectCreate(NULL, &r, &t, NULL));)
ALONE(null_tex_create_resource, CUDA_TEXTURE_DESC t = tex_point(); CUtexObject o; FILL(o);
      CALL("cuTexObjectCreate, NULL resource", cuTexObjectCreate(&o, NULL, &t, NULL)); SAY("object %s", HANDLE(o));)
ALONE(null_tex_create_texture, CUarray a; MUST(cuArrayCreate(&a, &d2_ok));
      CUDA_RESOURCE_DESC r = res_array(a); CUtexObject o; FILL(o);
      CALL("cuTexObjectCreate, NULL texture descriptor", cuTexObjectCreate(&o, &r, NULL, NULL)); SAY("object %s", HANDLE(o));)
ALONE(tex_destroy_twice, CUarray a; MUST(cuArrayCreate(&a, &d2_ok));
      CUDA_RESOURCE_DESC r = res_array(a); CUDA_TEXTURE_DESC t = tex_point(); CUtexObject o;
      MUST(cuTexObjectCreate(&o, &r, &t, NULL));
      CALL("first destroy", cuTexObjectDestroy(o)); CALL("second destroy", cuTexObjectDestroy(o));)
ALONE(tex_destroy_zero, CALL("cuTexObjectDestroy(0)", cuTexObjectDestroy(0));)
ALONE(tex_destroy_bogus, CALL("cuTexObjectDestroy of an object never given out", cuTexObjectDestroy(0x123456789ull));)
ALONE(tex_get_destroyed, CUarray a; MUST(cuArrayCreate(&a, &d2_ok));
      CUDA_RESOURCE_DESC r = res_array(a); CUDA_TEXTURE_DESC t = tex_point(); CUtexObject o;
      MUST(cuTexObjectCreate(&o, &r, &t, NULL)); MUST(cuTexObjectDestroy(o));
      CUDA_RESOURCE_DESC back; FILL(back);
      CALL("cuTexObjectGetResourceDesc of a destroyed object", cuTexObjectGetResourceDesc(&back, o));)
ALONE(tex_get_zero, CUDA_RESOURCE_DESC back; FILL(back);
      CALL("cuTexObjectGetResourceDesc(0)", cuTexObjectGetResourceDesc(&back, 0));
      CUDA_TEXTURE_DESC t; FILL(t);
      CALL("cuTexObjectGetTextureDesc(0)", cuTexObjectGetTextureDesc(&t, 0));)
ALONE(null_tex_getters, CUarray a; MUST(cuArrayCreate(&a, &d2_ok));
      CUDA_RESOURCE_DESC r = res_array(a); CUDA_TEXTURE_DESC t = tex_point(); CUtexObject o;
      MUST(cuTexObjectCreate(&o, &r, &t, NULL));
      CALL("cuTexObjectGetResourceDesc, NULL out", cuTexObjectGetResourceDesc(NULL, o));)
ALONE(null_tex_getters2, CUarray a; MUST(cuArrayCreate(&a, &d2_ok));
      CUDA_RESOURCE_DESC r = res_array(a); CUDA_TEXTURE_DESC t = tex_point(); CUtexObject o;
      MUST(cuTexObjectCreate(&o, &r, &t, NULL));
      CALL("cuTexObjectGetTextureDesc, NULL out", cuTexObjectGetTextureDesc(NULL, o));)
ALONE(tex_array_destroyed_first, CUarray a; MUST(cuArrayCreate(&a, &d2_ok));
      CUDA_RESOURCE_DESC r = res_array(a); CUDA_TEXTURE_DESC t = tex_point(); CUtexObject o;
      MUST(cuTexObjectCreate(&o, &r, &t, NULL));
      CALL("cuArrayDestroy of an array a texture object uses", cuArrayDestroy(a));
      CALL("then the object's destroy", cuTexObjectDestroy(o));)
ALONE(null_surf_create, CUarray a; MUST(cuArray3DCreate(&a, &d3_ok));
      CUDA_RESOURCE_DESC r = res_array(a);
      CALL("cuSurfObjectCreate, NULL pSurfObject", cuSurfObjectCreate(NULL, &r));)
ALONE(null_surf_resource, CUsurfObject o; FILL(o);
      CALL("cuSurfObjectCreate, NULL resource", cuSurfObjectCreate(&o, NULL)); SAY("object %s", HANDLE(o));)
ALONE(surf_destroy_twice, CUDA_ARRAY3D_DESCRIPTOR d = desc3(16, 16, 0, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_SURFACE_LDST);
      CUarray a; MUST(cuArray3DCreate(&a, &d)); CUDA_RESOURCE_DESC r = res_array(a); CUsurfObject o;
      MUST(cuSurfObjectCreate(&o, &r));
      CALL("first destroy", cuSurfObjectDestroy(o)); CALL("second destroy", cuSurfObjectDestroy(o));)
ALONE(surf_destroy_zero, CALL("cuSurfObjectDestroy(0)", cuSurfObjectDestroy(0));)
ALONE(surf_get_destroyed, CUDA_ARRAY3D_DESCRIPTOR d = desc3(16, 16, 0, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_SURFACE_LDST);
      CUarray a; MUST(cuArray3DCreate(&a, &d)); CUDA_RESOURCE_DESC r = res_array(a); CUsurfObject o;
      MUST(cuSurfObjectCreate(&o, &r)); MUST(cuSurfObjectDestroy(o));
      CUDA_RESOURCE_DESC back; FILL(back);
      CALL("cuSurfObjectGetResourceDesc of a destroyed object", cuSurfObjectGetResourceDesc(&back, o));)
ALONE(null_surf_getter, CUDA_ARRAY3D_DESCRIPTOR d = desc3(16, 16, 0, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_SURFACE_LDST);
      CUarray a; MUST(cuArray3DCreate(&a, &d)); CUDA_RESOURCE_DESC r = res_array(a); CUsurfObject o;
      MUST(cuSurfObjectCreate(&o, &r));
      CALL("cuSurfObjectGetResourceDesc, NULL out", cuSurfObjectGetResourceDesc(NULL, o));)

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    section("formats-2d", formats_2d);
    section("formats-3d", formats_3d);
    section("format-extents", format_extents);
    section("dims-1d", dims_1d);
    section("dims-2d", dims_2d);
    section("dims-3d", dims_3d);
    section("dims-cubemap", dims_cubemap);
    section("flags-alone", flags_alone);
    section("flag-combinations", flag_combinations);
    section("sparse-deferred", sparse_deferred);
    section("sparse-tiles", sparse_tiles);
    section("descriptors", descriptors);
    section("requirements-planes", requirements_and_planes);
    section("mipmapped", mipmapped);
    section("copies-linear", copies_linear);
    section("copies-2d", copies_2d);
    section("copies-3d", copies_3d);
    section("tex-array", tex_array);
    section("tex-mipmapped", tex_mipmapped);
    section("tex-linear", tex_linear);
    section("tex-pitch2d", tex_pitch2d);
    section("tex-views", tex_views);
    section("tex-getters", tex_getters);
    section("tex-desc-fields", tex_desc_fields);
    section("surfaces", surfaces);
    /* Alone, last: each may crash the H200. */
    section("array-create-null-handle-crash", null_array_create_handle);
    section("array-create-null-descriptor-crash", null_array_create_desc);
    section("array3d-create-null-handle-crash", null_array3d_create_handle);
    section("array3d-create-null-descriptor-crash", null_array3d_create_desc);
    section("get-descriptor-null-crash", null_get_descriptor);
    section("get-descriptor3d-null-crash", null_get_descriptor3d);
    section("get-descriptor-null-array-crash", null_get_descriptor_array);
    section("mipmapped-create-null-crash", null_mipmapped_create);
    section("mipmapped-level-null-crash", null_mipmapped_level);
    section("get-plane-null-crash", null_get_plane);
    section("array-destroy-null-crash", array_destroy_null);
    section("array-destroy-twice-crash", array_destroy_twice);
    section("array-destroy-bogus-crash", array_destroy_bogus);
    section("array-descriptor-destroyed-crash", array_descriptor_destroyed);
    section("array-destroy-level-crash", array_destroy_level);
    section("array-destroy-plane-crash", array_destroy_plane);
    section("mipmapped-destroy-twice-crash", mipmapped_destroy_twice);
    section("mipmapped-destroy-null-crash", mipmapped_destroy_null);
    section("mipmapped-level-after-destroy-crash", mipmapped_level_after_destroy);
    section("copy-destroyed-array-crash", copy_destroyed_array);
    section("tex-create-null-object-crash", null_tex_create_object);
    section("tex-create-null-resource-crash", null_tex_create_resource);
    section("tex-create-null-texture-crash", null_tex_create_texture);
    section("tex-destroy-twice-crash", tex_destroy_twice);
    section("tex-destroy-zero-crash", tex_destroy_zero);
    section("tex-destroy-bogus-crash", tex_destroy_bogus);
    section("tex-get-destroyed-crash", tex_get_destroyed);
    section("tex-get-zero-crash", tex_get_zero);
    section("tex-get-resource-null-crash", null_tex_getters);
    section("tex-get-texture-null-crash", null_tex_getters2);
    section("tex-array-destroyed-first-crash", tex_array_destroyed_first);
    section("surf-create-null-object-crash", null_surf_create);
    section("surf-create-null-resource-crash", null_surf_resource);
    section("surf-destroy-twice-crash", surf_destroy_twice);
    section("surf-destroy-zero-crash", surf_destroy_zero);
    section("surf-get-destroyed-crash", surf_get_destroyed);
    section("surf-get-resource-null-crash", null_surf_getter);
    return 0;
}
