/* Probe: texture views and descriptors at the driver, where NVIDIA's runtime left
 * questions (clients/runtime/texture_views.cu's first recording refused every level and
 * layer subrange it tried, and read a uchar4 view of a u32 array in element type as
 * normalized floats; per_thread_arrays read a border colour back as 0):
 * - which level subranges of a mipmapped array a view may name, with which extent
 *   (the original resource's, the first level's), and what level 0 of the view reads;
 * - which layer subranges of a layered array and of a cubemap array, with which depth;
 * - a uchar4 view of a u32 array read with and without CU_TRSF_READ_AS_INTEGER, and a BC1
 *   view of a u32x2 array both ways: does the driver honour the flag for views;
 * - what cuTexObjectGetTextureDesc answers for a border colour no address mode uses;
 * - (added after the first recording) what a kernel reads through views of a cubemap
 *   array's layer subranges, and how far past a resource's levels and layers a view
 *   may end, and what it reads there;
 * - (added after the second) what a layer past a layered array's end reads by integer
 *   and by float coordinates, of u32 and float arrays, point and linear; views that
 *   begin two past a resource's levels and layers; cubemap-array views of layers that
 *   are no whole cubes (1..7).
 * Texels are read by a PTX kernel and printed bit for bit. */
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
    /* Texel (0.5, 0.5) at a level of detail. */
    ".visible .entry read_lod(.param .u64 tex, .param .u64 out, .param .f32 lod)\n"
    "{\n"
    "  .reg .b64 %rd<4>; .reg .f32 %f<8>;\n"
    "  ld.param.u64 %rd1, [tex];\n"
    "  ld.param.f32 %f5, [lod];\n"
    "  mov.f32 %f6, 0f3F000000;\n"
    "  tex.level.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f6, %f6}], %f5;\n"
    "  ld.param.u64 %rd2, [out];\n"
    "  cvta.to.global.u64 %rd3, %rd2;\n"
    "  st.global.v4.f32 [%rd3], {%f1, %f2, %f3, %f4};\n"
    "  ret;\n"
    "}\n"
    /* Texel (0, 0) of a layer. */
    ".visible .entry read_layer(.param .u64 tex, .param .u64 out, .param .u32 layer)\n"
    "{\n"
    "  .reg .b32 %r<4>; .reg .b64 %rd<4>; .reg .f32 %f<5>;\n"
    "  ld.param.u64 %rd1, [tex];\n"
    "  ld.param.u32 %r1, [layer];\n"
    "  mov.u32 %r2, 0;\n"
    "  tex.a2d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [%rd1, {%r1, %r2, %r2, %r2}];\n"
    "  ld.param.u64 %rd2, [out];\n"
    "  cvta.to.global.u64 %rd3, %rd2;\n"
    "  st.global.v4.f32 [%rd3], {%f1, %f2, %f3, %f4};\n"
    "  ret;\n"
    "}\n"
    /* Cube `cube` of a cubemap array in direction (x, y, z), read as integers. */
    ".visible .entry read_cube(.param .u64 tex, .param .u64 out, .param .u32 cube, .param .f32 x,\n"
    "                          .param .f32 y, .param .f32 z)\n"
    "{\n"
    "  .reg .b32 %r<6>; .reg .b64 %rd<4>; .reg .f32 %f<4>;\n"
    "  ld.param.u64 %rd1, [tex];\n"
    "  ld.param.u32 %r1, [cube];\n"
    "  ld.param.f32 %f1, [x];\n"
    "  ld.param.f32 %f2, [y];\n"
    "  ld.param.f32 %f3, [z];\n"
    "  tex.acube.v4.u32.f32 {%r2, %r3, %r4, %r5}, [%rd1, {%r1, %f1, %f2, %f3}];\n"
    "  ld.param.u64 %rd2, [out];\n"
    "  cvta.to.global.u64 %rd3, %rd2;\n"
    "  st.global.v4.u32 [%rd3], {%r2, %r3, %r4, %r5};\n"
    "  ret;\n"
    "}\n"
    /* Thread t reads layer t - 1 (-1 first) at texel (0, 0) by integer coordinates, and
     * writes its first channel. */
    ".visible .entry layers_s32(.param .u64 tex, .param .u64 out, .param .u32 n)\n"
    "{\n"
    "  .reg .b32 %r<6>; .reg .b64 %rd<6>; .reg .f32 %f<5>; .reg .pred %p;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  ld.param.u32 %r2, [n];\n"
    "  setp.ge.u32 %p, %r1, %r2;\n"
    "  @%p bra DONE;\n"
    "  sub.s32 %r3, %r1, 1;\n"
    "  mov.u32 %r4, 0;\n"
    "  ld.param.u64 %rd1, [tex];\n"
    "  tex.a2d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [%rd1, {%r3, %r4, %r4, %r4}];\n"
    "  ld.param.u64 %rd2, [out];\n"
    "  cvta.to.global.u64 %rd3, %rd2;\n"
    "  mul.wide.u32 %rd4, %r1, 4;\n"
    "  add.s64 %rd5, %rd3, %rd4;\n"
    "  st.global.f32 [%rd5], %f1;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n"
    /* The same by float coordinates: layer t - 1 at (0.5, 0.5), texel (0, 0)'s centre. */
    ".visible .entry layers_f32(.param .u64 tex, .param .u64 out, .param .u32 n)\n"
    "{\n"
    "  .reg .b32 %r<6>; .reg .b64 %rd<6>; .reg .f32 %f<7>; .reg .pred %p;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  ld.param.u32 %r2, [n];\n"
    "  setp.ge.u32 %p, %r1, %r2;\n"
    "  @%p bra DONE;\n"
    "  sub.s32 %r3, %r1, 1;\n"
    "  mov.f32 %f5, 0f3F000000;\n"
    "  mov.f32 %f6, 0f00000000;\n"
    "  ld.param.u64 %rd1, [tex];\n"
    "  tex.a2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%r3, %f5, %f5, %f6}];\n"
    "  ld.param.u64 %rd2, [out];\n"
    "  cvta.to.global.u64 %rd3, %rd2;\n"
    "  mul.wide.u32 %rd4, %r1, 4;\n"
    "  add.s64 %rd5, %rd3, %rd4;\n"
    "  st.global.f32 [%rd5], %f1;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n";

static CUmodule mod;
static CUdeviceptr out;

static void setup(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    MUST(cuModuleLoadData(&mod, PTX));
    MUST(cuMemAlloc(&out, 64 * 16));
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

static CUDA_RESOURCE_VIEW_DESC view(CUresourceViewFormat f, size_t w, size_t h, size_t d) {
    CUDA_RESOURCE_VIEW_DESC v;
    memset(&v, 0, sizeof v);
    v.format = f;
    v.width = w;
    v.height = h;
    v.depth = d;
    return v;
}

static CUDA_RESOURCE_DESC over_array(CUarray a) {
    CUDA_RESOURCE_DESC r;
    memset(&r, 0, sizeof r);
    r.resType = CU_RESOURCE_TYPE_ARRAY;
    r.res.array.hArray = a;
    return r;
}

static CUDA_ARRAY3D_DESCRIPTOR desc3(size_t w, size_t h, size_t d, CUarray_format f, unsigned ch,
                                     unsigned flags) {
    CUDA_ARRAY3D_DESCRIPTOR a;
    memset(&a, 0, sizeof a);
    a.Width = w;
    a.Height = h;
    a.Depth = d;
    a.Format = f;
    a.NumChannels = ch;
    a.Flags = flags;
    return a;
}

static CUarray array3(size_t w, size_t h, size_t d, CUarray_format f, unsigned ch, unsigned flags) {
    CUDA_ARRAY3D_DESCRIPTOR a = desc3(w, h, d, f, ch, flags);
    CUarray arr;
    MUST(cuArray3DCreate(&arr, &a));
    return arr;
}

/* cuMemcpyHtoA is for 1D arrays only on the H200 (INVALID_VALUE for a 2D one). */
static void to_array(CUarray a, const void *host, size_t row_bytes, size_t rows) {
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = host;
    c.srcPitch = row_bytes;
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    c.dstArray = a;
    c.WidthInBytes = row_bytes;
    c.Height = rows;
    MUST(cuMemcpy2D(&c));
}

static void print_words(const char *what, int words) {
    uint32_t host[64 * 4];
    MUST(cuCtxSynchronize());
    MUST(cuMemcpyDtoH(host, out, (size_t)words * 4));
    printf("  %s:", what);
    for (int i = 0; i < words; i++) printf(" %08x", host[i]);
    printf("\n");
    fflush(stdout);
}

/* Reads w x h texels of `tex` and prints them (four words a texel). */
static void read_texels(const char *what, CUtexObject tex, unsigned w, unsigned h) {
    CUfunction f;
    MUST(cuModuleGetFunction(&f, mod, "read2d"));
    MUST(cuMemsetD8(out, 0, 64 * 16));
    unsigned n = w * h;
    void *args[] = {&tex, &out, &w, &n};
    if (CALL("launch read2d", cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, NULL, args, NULL)) == CUDA_SUCCESS)
        print_words(what, (int)n * 4);
}

/* Launches one thread of `kernel` (parameters `tex`, out and `*arg`), said as `launch`,
 * and prints the texel it wrote. */
static void read_one(const char *what, const char *kernel, const char *launch, CUtexObject tex, void *arg) {
    CUfunction f;
    MUST(cuModuleGetFunction(&f, mod, kernel));
    MUST(cuMemsetD8(out, 0, 16));
    void *args[] = {&tex, &out, arg};
    if (CALL(launch, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL)) == CUDA_SUCCESS)
        print_words(what, 1);
}

static void read_lod(const char *what, CUtexObject tex, float lod) {
    read_one(what, "read_lod", "launch read_lod", tex, &lod);
}

static void read_layer(const char *what, CUtexObject tex, unsigned layer) {
    read_one(what, "read_layer", "launch read_layer", tex, &layer);
}

/* A 16 x 16 float mipmapped array of 5 levels, level L holding 10 + L, as a resource. */
static CUDA_RESOURCE_DESC five_levels(CUmipmappedArray *mip) {
    CUDA_ARRAY3D_DESCRIPTOR a = desc3(16, 16, 0, CU_AD_FORMAT_FLOAT, 1, 0);
    MUST(cuMipmappedArrayCreate(mip, &a, 5));
    for (unsigned l = 0; l < 5; l++) {
        CUarray level;
        MUST(cuMipmappedArrayGetLevel(&level, *mip, l));
        unsigned n = 16 >> l;
        float host[256];
        for (unsigned i = 0; i < n * n; i++) host[i] = 10.0f + (float)l;
        to_array(level, host, n * 4, n);
    }
    CUDA_RESOURCE_DESC r;
    memset(&r, 0, sizeof r);
    r.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
    r.res.mipmap.hMipmappedArray = *mip;
    return r;
}

/* Level subranges of a 16 x 16 float mipmapped array of 5 levels (level L holds 10 + L):
 * the view's extent the original resource's, then the first level's. */
static void mip_level_views(void) {
    setup();
    CUmipmappedArray mip;
    CUDA_RESOURCE_DESC r = five_levels(&mip);
    CUDA_TEXTURE_DESC t = point(0);
    t.mipmapFilterMode = CU_TR_FILTER_MODE_POINT;
    static const unsigned ranges[][2] = {{0, 0}, {0, 4}, {1, 1}, {1, 2}, {1, 4}, {4, 4}, {2, 5}};
    for (unsigned i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        unsigned first = ranges[i][0], last = ranges[i][1];
        size_t sizes[] = {16, (size_t)16 >> (first > 4 ? 4 : first)};
        for (unsigned s = 0; s < 2; s++) {
            if (s == 1 && sizes[1] == sizes[0]) continue;
            CUDA_RESOURCE_VIEW_DESC v = view(CU_RES_VIEW_FORMAT_FLOAT_1X32, sizes[s], sizes[s], 0);
            v.firstMipmapLevel = first;
            v.lastMipmapLevel = last;
            char what[96];
            snprintf(what, sizeof what, "levels %u..%u, extent %zu", first, last, sizes[s]);
            CUtexObject o;
            if (CALL(what, cuTexObjectCreate(&o, &r, &t, &v)) == CUDA_SUCCESS) {
                read_lod("lod 0", o, 0.0f);
                read_lod("lod 1", o, 1.0f);
                CUDA_RESOURCE_VIEW_DESC back;
                FILL(back);
                if (CALL("its view", cuTexObjectGetResourceViewDesc(&back, o)) == CUDA_SUCCESS)
                    SAY("view: format %d %zux%zux%zu levels %u..%u layers %u..%u", (int)back.format,
                        back.width, back.height, back.depth, back.firstMipmapLevel, back.lastMipmapLevel,
                        back.firstLayer, back.lastLayer);
                cuTexObjectDestroy(o);
            }
        }
    }
    /* A view with no format of its own over the mipmapped array. */
    CUDA_RESOURCE_VIEW_DESC v = view(CU_RES_VIEW_FORMAT_FLOAT_1X32, 8, 8, 0);
    v.firstMipmapLevel = 1;
    v.lastMipmapLevel = 1;
    v.format = CU_RES_VIEW_FORMAT_NONE;
    CUtexObject o;
    if (CALL("levels 1..1, extent 8, format NONE", cuTexObjectCreate(&o, &r, &t, &v)) == CUDA_SUCCESS)
        cuTexObjectDestroy(o);
    MUST(cuMipmappedArrayDestroy(mip));
}

/* Layer subranges of a 2 x 2 x 4 layered u32 array (layer L holds 100 + L), then of a
 * 2 x 2 cubemap array of two cubemaps (12 layers). */
static void layers(const char *kind, unsigned count, unsigned flags, const unsigned (*ranges)[2], unsigned n) {
    CUarray a = array3(2, 2, count, CU_AD_FORMAT_UNSIGNED_INT32, 1, flags);
    uint32_t host[2 * 2 * 12];
    for (unsigned i = 0; i < 4 * count; i++) host[i] = 100 + i / 4;
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = host;
    c.srcPitch = 8;
    c.srcHeight = 2;
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    c.dstArray = a;
    c.WidthInBytes = 8;
    c.Height = 2;
    c.Depth = count;
    MUST(cuMemcpy3D(&c));
    CUDA_RESOURCE_DESC r = over_array(a);
    CUDA_TEXTURE_DESC t = point(CU_TRSF_READ_AS_INTEGER);
    for (unsigned i = 0; i < n; i++) {
        unsigned first = ranges[i][0], last = ranges[i][1];
        size_t depths[] = {0, count, last - first + 1};
        for (unsigned s = 0; s < 3; s++) {
            if (s == 2 && depths[2] == depths[1]) continue;
            CUDA_RESOURCE_VIEW_DESC v = view(CU_RES_VIEW_FORMAT_UINT_1X32, 2, 2, depths[s]);
            v.firstLayer = first;
            v.lastLayer = last;
            char what[96];
            snprintf(what, sizeof what, "%s layers %u..%u, depth %zu", kind, first, last, depths[s]);
            CUtexObject o;
            if (CALL(what, cuTexObjectCreate(&o, &r, &t, &v)) == CUDA_SUCCESS) {
                if (!(flags & CUDA_ARRAY3D_CUBEMAP)) {
                    read_layer("layer 0", o, 0);
                    read_layer("layer 1", o, 1);
                }
                cuTexObjectDestroy(o);
            }
        }
    }
    MUST(cuArrayDestroy(a));
}

static void layer_views(void) {
    setup();
    static const unsigned ranges[][2] = {{0, 3}, {0, 0}, {1, 1}, {1, 2}, {2, 3}, {3, 4}};
    layers("layered", 4, CUDA_ARRAY3D_LAYERED, ranges, sizeof ranges / sizeof ranges[0]);
}

static void cubemap_views(void) {
    setup();
    static const unsigned ranges[][2] = {{0, 11}, {0, 5}, {6, 11}, {1, 1}, {0, 0}, {1, 6}};
    layers("cubemap array", 12, CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP, ranges,
           sizeof ranges / sizeof ranges[0]);
}

/* Cube `cube`'s faces +x (0) and -z (5) of `tex`, a cubemap array read as integers. */
static void read_cube_faces(CUtexObject tex, unsigned cube) {
    static const float dirs[2][3] = {{1, 0, 0}, {0, 0, -1}};
    CUfunction f;
    MUST(cuModuleGetFunction(&f, mod, "read_cube"));
    for (unsigned d = 0; d < 2; d++) {
        float x = dirs[d][0], y = dirs[d][1], z = dirs[d][2];
        MUST(cuMemsetD8(out, 0, 16));
        void *args[] = {&tex, &out, &cube, &x, &y, &z};
        char what[64];
        snprintf(what, sizeof what, "cube %u face %u", cube, d == 0 ? 0u : 5u);
        if (CALL("launch read_cube", cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL)) == CUDA_SUCCESS)
            print_words(what, 1);
    }
}

/* What a kernel reads through views of a 2 x 2 cubemap array of two cubes (face k of
 * the 12 holds 100 + k): which array face a view's cube and face name, for views of
 * whole cubes and of subranges that split them (cubemap-views took both); and without a
 * view, a cube past the array's. */
static void cubemap_view_reads(void) {
    setup();
    CUarray a = array3(2, 2, 12, CU_AD_FORMAT_UNSIGNED_INT32, 1, CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP);
    uint32_t host[2 * 2 * 12];
    for (unsigned i = 0; i < 48; i++) host[i] = 100 + i / 4;
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = host;
    c.srcPitch = 8;
    c.srcHeight = 2;
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    c.dstArray = a;
    c.WidthInBytes = 8;
    c.Height = 2;
    c.Depth = 12;
    MUST(cuMemcpy3D(&c));
    CUDA_RESOURCE_DESC r = over_array(a);
    CUDA_TEXTURE_DESC t = point(CU_TRSF_READ_AS_INTEGER);
    CUtexObject o;
    if (CALL("no view", cuTexObjectCreate(&o, &r, &t, NULL)) == CUDA_SUCCESS) {
        for (unsigned cube = 0; cube < 3; cube++) read_cube_faces(o, cube);
        cuTexObjectDestroy(o);
    }
    static const unsigned ranges[][2] = {{0, 11}, {6, 11}, {1, 6}, {1, 1}, {0, 5}};
    for (unsigned i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        CUDA_RESOURCE_VIEW_DESC v = view(CU_RES_VIEW_FORMAT_UINT_1X32, 2, 2, 12);
        v.firstLayer = ranges[i][0];
        v.lastLayer = ranges[i][1];
        char what[64];
        snprintf(what, sizeof what, "view of layers %u..%u", v.firstLayer, v.lastLayer);
        if (CALL(what, cuTexObjectCreate(&o, &r, &t, &v)) == CUDA_SUCCESS) {
            for (unsigned cube = 0; cube < 2; cube++) read_cube_faces(o, cube);
            cuTexObjectDestroy(o);
        }
    }
    MUST(cuArrayDestroy(a));
}

/* How far past a resource's levels and layers a view may end (mip-level-views and
 * layer-views took one past), what a level or layer it names but the resource lacks
 * reads, whether a first one the resource lacks is taken, and what a view of all of a
 * layered array's layers reads past them (a plain layered texture clamps to the last). */
static void view_bounds(void) {
    setup();
    CUmipmappedArray mip;
    CUDA_RESOURCE_DESC r = five_levels(&mip);
    CUDA_TEXTURE_DESC t = point(0);
    t.mipmapFilterMode = CU_TR_FILTER_MODE_POINT;
    static const unsigned levels[][2] = {{2, 5}, {2, 6}, {2, 31}, {2, 100}, {5, 5}, {4, 5}};
    for (unsigned i = 0; i < sizeof levels / sizeof levels[0]; i++) {
        CUDA_RESOURCE_VIEW_DESC v = view(CU_RES_VIEW_FORMAT_FLOAT_1X32, 16, 16, 0);
        v.firstMipmapLevel = levels[i][0];
        v.lastMipmapLevel = levels[i][1];
        char what[64];
        snprintf(what, sizeof what, "levels %u..%u", levels[i][0], levels[i][1]);
        CUtexObject o;
        if (CALL(what, cuTexObjectCreate(&o, &r, &t, &v)) == CUDA_SUCCESS) {
            read_lod("lod 0", o, 0.0f);
            read_lod("lod 2", o, 2.0f);
            read_lod("lod 3", o, 3.0f);
            cuTexObjectDestroy(o);
        }
    }
    MUST(cuMipmappedArrayDestroy(mip));

    CUarray arr = array3(2, 2, 4, CU_AD_FORMAT_UNSIGNED_INT32, 1, CUDA_ARRAY3D_LAYERED);
    uint32_t host[16];
    for (unsigned i = 0; i < 16; i++) host[i] = 100 + i / 4;
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = host;
    c.srcPitch = 8;
    c.srcHeight = 2;
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    c.dstArray = arr;
    c.WidthInBytes = 8;
    c.Height = 2;
    c.Depth = 4;
    MUST(cuMemcpy3D(&c));
    CUDA_RESOURCE_DESC lr = over_array(arr);
    CUDA_TEXTURE_DESC lt = point(CU_TRSF_READ_AS_INTEGER);
    CUtexObject o;
    if (CALL("layered, no view", cuTexObjectCreate(&o, &lr, &lt, NULL)) == CUDA_SUCCESS) {
        read_layer("layer 5", o, 5);
        cuTexObjectDestroy(o);
    }
    static const unsigned layers[][2] = {{0, 3}, {3, 5}, {3, 100}, {4, 4}, {4, 5}};
    for (unsigned i = 0; i < sizeof layers / sizeof layers[0]; i++) {
        CUDA_RESOURCE_VIEW_DESC v = view(CU_RES_VIEW_FORMAT_UINT_1X32, 2, 2, 4);
        v.firstLayer = layers[i][0];
        v.lastLayer = layers[i][1];
        char what[64];
        snprintf(what, sizeof what, "layers %u..%u", layers[i][0], layers[i][1]);
        if (CALL(what, cuTexObjectCreate(&o, &lr, &lt, &v)) == CUDA_SUCCESS) {
            read_layer("layer 0", o, 0);
            read_layer("layer 1", o, 1);
            read_layer("layer 5", o, 5);
            cuTexObjectDestroy(o);
        }
    }
    MUST(cuArrayDestroy(arr));
}

/* A view to try over an array: its format (NONE: no view), extent and read flags. */
struct try_view {
    const char *what;
    CUresourceViewFormat f;
    unsigned flags;
    size_t width, height;
};

/* Each try over `r`, its first row of four texels read where it is made. */
static void try_views(CUDA_RESOURCE_DESC r, const struct try_view *tries, unsigned n) {
    for (unsigned i = 0; i < n; i++) {
        CUDA_TEXTURE_DESC t = point(tries[i].flags);
        CUDA_RESOURCE_VIEW_DESC v = view(tries[i].f, tries[i].width, tries[i].height, 0);
        CUtexObject o;
        if (CALL(tries[i].what, cuTexObjectCreate(&o, &r, &t, tries[i].f == CU_RES_VIEW_FORMAT_NONE ? NULL : &v)) ==
            CUDA_SUCCESS) {
            read_texels("row 0", o, 4, 1);
            cuTexObjectDestroy(o);
        }
    }
}

/* A 4 x 1 u32 array holding one float, one negative float, bytes 1 2 3 4 and a mix;
 * read through a uchar4 view without and with CU_TRSF_READ_AS_INTEGER, and as itself. */
static void view_read_modes(void) {
    setup();
    CUarray a = array3(4, 1, 0, CU_AD_FORMAT_UNSIGNED_INT32, 1, 0);
    const uint32_t words[4] = {0x3fc00000u, 0xc0000000u, 0x04030201u, 0xff80007fu};
    to_array(a, words, sizeof words, 1);
    CUDA_RESOURCE_DESC r = over_array(a);
    static const struct try_view tries[] = {
        {"no view, flags 0", CU_RES_VIEW_FORMAT_NONE, 0, 4, 1},
        {"no view, READ_AS_INTEGER", CU_RES_VIEW_FORMAT_NONE, CU_TRSF_READ_AS_INTEGER, 4, 1},
        {"uchar4 view, flags 0", CU_RES_VIEW_FORMAT_UINT_4X8, 0, 4, 1},
        {"uchar4 view, READ_AS_INTEGER", CU_RES_VIEW_FORMAT_UINT_4X8, CU_TRSF_READ_AS_INTEGER, 4, 1},
        {"char4 view, flags 0", CU_RES_VIEW_FORMAT_SINT_4X8, 0, 4, 1},
        {"short2 view, READ_AS_INTEGER", CU_RES_VIEW_FORMAT_SINT_2X16, CU_TRSF_READ_AS_INTEGER, 4, 1},
        {"half2 view, flags 0", CU_RES_VIEW_FORMAT_FLOAT_2X16, 0, 4, 1},
        {"float view, READ_AS_INTEGER", CU_RES_VIEW_FORMAT_FLOAT_1X32, CU_TRSF_READ_AS_INTEGER, 4, 1},
    };
    try_views(r, tries, sizeof tries / sizeof tries[0]);
    MUST(cuArrayDestroy(a));
}

/* One BC1 block (colours 0xffff and 0x0000, indices 0 1 2 3 along each row) in a 1 x 1
 * u32x2 array, read through a 4 x 4 BC1 view without and with CU_TRSF_READ_AS_INTEGER,
 * and through BC1 sRGB. */
static void bc_view_read_modes(void) {
    setup();
    CUarray a = array3(1, 1, 0, CU_AD_FORMAT_UNSIGNED_INT32, 2, 0);
    const uint32_t block[2] = {0x0000ffffu, 0xe4e4e4e4u};
    to_array(a, block, sizeof block, 1);
    CUDA_RESOURCE_DESC r = over_array(a);
    static const struct try_view tries[] = {
        {"BC1, flags 0", CU_RES_VIEW_FORMAT_UNSIGNED_BC1, 0, 4, 4},
        {"BC1, READ_AS_INTEGER", CU_RES_VIEW_FORMAT_UNSIGNED_BC1, CU_TRSF_READ_AS_INTEGER, 4, 4},
        {"BC1, SRGB", CU_RES_VIEW_FORMAT_UNSIGNED_BC1, CU_TRSF_SRGB, 4, 4},
        {"BC1 view 8 x 4", CU_RES_VIEW_FORMAT_UNSIGNED_BC1, 0, 8, 4},
    };
    try_views(r, tries, sizeof tries / sizeof tries[0]);
    MUST(cuArrayDestroy(a));
}

/* What cuTexObjectGetTextureDesc answers for a border colour, by address modes. */
static void border_readback(void) {
    setup();
    CUarray a = array3(4, 4, 0, CU_AD_FORMAT_FLOAT, 1, 0);
    CUDA_RESOURCE_DESC r = over_array(a);
    static const struct {
        const char *what;
        CUaddress_mode m0, m1;
    } tries[] = {
        {"clamp, wrap", CU_TR_ADDRESS_MODE_CLAMP, CU_TR_ADDRESS_MODE_WRAP},
        {"border, clamp", CU_TR_ADDRESS_MODE_BORDER, CU_TR_ADDRESS_MODE_CLAMP},
        {"clamp, border", CU_TR_ADDRESS_MODE_CLAMP, CU_TR_ADDRESS_MODE_BORDER},
        {"mirror, mirror", CU_TR_ADDRESS_MODE_MIRROR, CU_TR_ADDRESS_MODE_MIRROR},
    };
    for (unsigned i = 0; i < sizeof tries / sizeof tries[0]; i++) {
        CUDA_TEXTURE_DESC t = point(0);
        t.addressMode[0] = tries[i].m0;
        t.addressMode[1] = tries[i].m1;
        t.addressMode[2] = CU_TR_ADDRESS_MODE_CLAMP;
        t.borderColor[0] = 0.25f;
        t.borderColor[2] = 0.5f;
        t.maxAnisotropy = 4;
        t.mipmapLevelBias = 1.5f;
        CUtexObject o;
        if (CALL(tries[i].what, cuTexObjectCreate(&o, &r, &t, NULL)) == CUDA_SUCCESS) {
            CUDA_TEXTURE_DESC back;
            FILL(back);
            if (CALL("its texture descriptor", cuTexObjectGetTextureDesc(&back, o)) == CUDA_SUCCESS)
                SAY("address %d %d %d border %g %g %g %g aniso %u bias %g clamp %g..%g flags 0x%x",
                    back.addressMode[0], back.addressMode[1], back.addressMode[2], back.borderColor[0],
                    back.borderColor[1], back.borderColor[2], back.borderColor[3], back.maxAnisotropy,
                    back.mipmapLevelBias, back.minMipmapLevelClamp, back.maxMipmapLevelClamp, back.flags);
            cuTexObjectDestroy(o);
        }
    }
    MUST(cuArrayDestroy(a));
}

/* A 2 x 2 x 4 layered array of `f` (u32 or float), layer L's texels holding 100 + L (u32)
 * or 10 + L (float). */
static CUarray layered4(CUarray_format f) {
    CUarray a = array3(2, 2, 4, f, 1, CUDA_ARRAY3D_LAYERED);
    uint32_t host[16];
    for (unsigned i = 0; i < 16; i++) {
        float v = 10.0f + (float)(i / 4);
        if (f == CU_AD_FORMAT_FLOAT)
            memcpy(&host[i], &v, 4);
        else
            host[i] = 100 + i / 4;
    }
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = host;
    c.srcPitch = 8;
    c.srcHeight = 2;
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    c.dstArray = a;
    c.WidthInBytes = 8;
    c.Height = 2;
    c.Depth = 4;
    MUST(cuMemcpy3D(&c));
    return a;
}

/* Layers -1 .. 5 of `tex` (a 4-layer texture) by `kernel`, one word a layer. */
static void read_layers(const char *what, const char *kernel, CUtexObject tex) {
    CUfunction f;
    MUST(cuModuleGetFunction(&f, mod, kernel));
    MUST(cuMemsetD8(out, 0, 64));
    unsigned n = 7;
    void *args[] = {&tex, &out, &n};
    char launch[64];
    snprintf(launch, sizeof launch, "launch %s", kernel);
    if (CALL(launch, cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, NULL, args, NULL)) == CUDA_SUCCESS)
        print_words(what, (int)n);
}

/* What a layer past a layered array's end (and layer -1) reads, by the fetch's coordinate
 * type, the array's format and the filter: view-bounds read 0 at layer 5 of a u32 array
 * by integer coordinates; runtime program texture_probe (section 6) read a float array's
 * last layer at -1 and past the end by float coordinates, filtering linearly. */
static void layers_past_the_end(void) {
    setup();
    static const struct {
        const char *what;
        CUarray_format f;
        unsigned flags;
        CUfilter_mode filter;
        int view;
    } tries[] = {
        {"u32, READ_AS_INTEGER", CU_AD_FORMAT_UNSIGNED_INT32, CU_TRSF_READ_AS_INTEGER, CU_TR_FILTER_MODE_POINT, 0},
        {"float, point", CU_AD_FORMAT_FLOAT, 0, CU_TR_FILTER_MODE_POINT, 0},
        {"float, linear", CU_AD_FORMAT_FLOAT, 0, CU_TR_FILTER_MODE_LINEAR, 0},
        {"float, point, view of layers 0..3", CU_AD_FORMAT_FLOAT, 0, CU_TR_FILTER_MODE_POINT, 1},
    };
    for (unsigned i = 0; i < sizeof tries / sizeof tries[0]; i++) {
        CUarray a = layered4(tries[i].f);
        CUDA_RESOURCE_DESC r = over_array(a);
        CUDA_TEXTURE_DESC t = point(tries[i].flags);
        t.filterMode = tries[i].filter;
        CUDA_RESOURCE_VIEW_DESC v = view(CU_RES_VIEW_FORMAT_FLOAT_1X32, 2, 2, 4);
        v.lastLayer = 3;
        CUtexObject o;
        if (CALL(tries[i].what, cuTexObjectCreate(&o, &r, &t, tries[i].view ? &v : NULL)) == CUDA_SUCCESS) {
            read_layers("layers -1..5, integer coordinates", "layers_s32", o);
            read_layers("layers -1..5, float coordinates", "layers_f32", o);
            cuTexObjectDestroy(o);
        }
        MUST(cuArrayDestroy(a));
    }
}

/* Views that begin two or more past a resource's levels (a 16 x 16 float array of 5,
 * level L holding 10 + L) and layers (a u32 array of 4, layer L holding 100 + L):
 * view-bounds took those that begin one past. Taken or refused, the view they read back
 * and what they read. */
static void views_two_past(void) {
    setup();
    CUmipmappedArray mip;
    CUDA_RESOURCE_DESC r = five_levels(&mip);
    CUDA_TEXTURE_DESC t = point(0);
    t.mipmapFilterMode = CU_TR_FILTER_MODE_POINT;
    static const unsigned levels[][2] = {{6, 6}, {7, 7}, {5, 6}, {6, 100}};
    CUtexObject o;
    for (unsigned i = 0; i < sizeof levels / sizeof levels[0]; i++) {
        CUDA_RESOURCE_VIEW_DESC v = view(CU_RES_VIEW_FORMAT_FLOAT_1X32, 16, 16, 0);
        v.firstMipmapLevel = levels[i][0];
        v.lastMipmapLevel = levels[i][1];
        char what[64];
        snprintf(what, sizeof what, "levels %u..%u", levels[i][0], levels[i][1]);
        if (CALL(what, cuTexObjectCreate(&o, &r, &t, &v)) == CUDA_SUCCESS) {
            CUDA_RESOURCE_VIEW_DESC back;
            FILL(back);
            if (CALL("its view", cuTexObjectGetResourceViewDesc(&back, o)) == CUDA_SUCCESS)
                SAY("view: levels %u..%u", back.firstMipmapLevel, back.lastMipmapLevel);
            read_lod("lod 0", o, 0.0f);
            read_lod("lod 2", o, 2.0f);
            cuTexObjectDestroy(o);
        }
    }
    MUST(cuMipmappedArrayDestroy(mip));

    CUarray arr = layered4(CU_AD_FORMAT_UNSIGNED_INT32);
    CUDA_RESOURCE_DESC lr = over_array(arr);
    CUDA_TEXTURE_DESC lt = point(CU_TRSF_READ_AS_INTEGER);
    static const unsigned layers[][2] = {{5, 5}, {6, 6}, {5, 6}, {5, 100}};
    for (unsigned i = 0; i < sizeof layers / sizeof layers[0]; i++) {
        CUDA_RESOURCE_VIEW_DESC v = view(CU_RES_VIEW_FORMAT_UINT_1X32, 2, 2, 4);
        v.firstLayer = layers[i][0];
        v.lastLayer = layers[i][1];
        char what[64];
        snprintf(what, sizeof what, "layers %u..%u", layers[i][0], layers[i][1]);
        if (CALL(what, cuTexObjectCreate(&o, &lr, &lt, &v)) == CUDA_SUCCESS) {
            CUDA_RESOURCE_VIEW_DESC back;
            FILL(back);
            if (CALL("its view", cuTexObjectGetResourceViewDesc(&back, o)) == CUDA_SUCCESS)
                SAY("view: layers %u..%u depth %zu", back.firstLayer, back.lastLayer, back.depth);
            read_layers("layers -1..5, integer coordinates", "layers_s32", o);
            read_layers("layers -1..5, float coordinates", "layers_f32", o);
            cuTexObjectDestroy(o);
        }
    }
    MUST(cuArrayDestroy(arr));
}

/* Views of a 2 x 2 cubemap array of two cubes (face k of the 12 holds 100 + k) whose
 * layers are no whole cubes and cross or reach the second cube's: which faces cubes
 * 0, 1 and 2 of the view read (cubemap-view-reads: 1..6 read layer 7 as cube 1's face 0
 * and 0 as its face 5; 1..1 read cube 1 as cube 0). */
static void cubemap_view_odd_layers(void) {
    setup();
    CUarray a = array3(2, 2, 12, CU_AD_FORMAT_UNSIGNED_INT32, 1, CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP);
    uint32_t host[2 * 2 * 12];
    for (unsigned i = 0; i < 48; i++) host[i] = 100 + i / 4;
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = host;
    c.srcPitch = 8;
    c.srcHeight = 2;
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    c.dstArray = a;
    c.WidthInBytes = 8;
    c.Height = 2;
    c.Depth = 12;
    MUST(cuMemcpy3D(&c));
    CUDA_RESOURCE_DESC r = over_array(a);
    CUDA_TEXTURE_DESC t = point(CU_TRSF_READ_AS_INTEGER);
    static const unsigned ranges[][2] = {{1, 7}, {0, 6}, {7, 7}, {5, 11}};
    for (unsigned i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        CUDA_RESOURCE_VIEW_DESC v = view(CU_RES_VIEW_FORMAT_UINT_1X32, 2, 2, 12);
        v.firstLayer = ranges[i][0];
        v.lastLayer = ranges[i][1];
        char what[64];
        snprintf(what, sizeof what, "view of layers %u..%u", v.firstLayer, v.lastLayer);
        CUtexObject o;
        if (CALL(what, cuTexObjectCreate(&o, &r, &t, &v)) == CUDA_SUCCESS) {
            for (unsigned cube = 0; cube < 3; cube++) read_cube_faces(o, cube);
            cuTexObjectDestroy(o);
        }
    }
    MUST(cuArrayDestroy(a));
}

/* (Added after the third recording, awaiting one.) How far past a resource's levels and
 * layers a view may begin (views-two-past took 7..7 of 5 levels and 6..6 of 4 layers):
 * levels and layers 31, 1000 and 0xffffffff; and what float layer coordinates read
 * through views that end past a 4-layer float array (layer L holding 10 + L), 3..5 and
 * 2..3: do they clamp to the view's last layer (reading 0 where the array lacks it) or to
 * the array's (layers-past-the-end: a view of 0..3 read layer 3 at -1, 4 and 5). */
static void views_far_past(void) {
    setup();
    CUmipmappedArray mip;
    CUDA_RESOURCE_DESC r = five_levels(&mip);
    CUDA_TEXTURE_DESC t = point(0);
    t.mipmapFilterMode = CU_TR_FILTER_MODE_POINT;
    static const unsigned far[] = {31, 1000, 0xffffffffu};
    CUtexObject o;
    for (unsigned i = 0; i < sizeof far / sizeof far[0]; i++) {
        CUDA_RESOURCE_VIEW_DESC v = view(CU_RES_VIEW_FORMAT_FLOAT_1X32, 16, 16, 0);
        v.firstMipmapLevel = v.lastMipmapLevel = far[i];
        char what[64];
        snprintf(what, sizeof what, "levels %u..%u", far[i], far[i]);
        if (CALL(what, cuTexObjectCreate(&o, &r, &t, &v)) == CUDA_SUCCESS) cuTexObjectDestroy(o);
    }
    MUST(cuMipmappedArrayDestroy(mip));
    CUarray arr = layered4(CU_AD_FORMAT_UNSIGNED_INT32);
    CUDA_RESOURCE_DESC lr = over_array(arr);
    CUDA_TEXTURE_DESC lt = point(CU_TRSF_READ_AS_INTEGER);
    for (unsigned i = 0; i < sizeof far / sizeof far[0]; i++) {
        CUDA_RESOURCE_VIEW_DESC v = view(CU_RES_VIEW_FORMAT_UINT_1X32, 2, 2, 4);
        v.firstLayer = v.lastLayer = far[i];
        char what[64];
        snprintf(what, sizeof what, "layers %u..%u", far[i], far[i]);
        if (CALL(what, cuTexObjectCreate(&o, &lr, &lt, &v)) == CUDA_SUCCESS) {
            read_layers("layers -1..5, integer coordinates", "layers_s32", o);
            cuTexObjectDestroy(o);
        }
    }
    MUST(cuArrayDestroy(arr));
    static const unsigned ranges[][2] = {{3, 5}, {2, 3}, {3, 100}};
    CUarray fa = layered4(CU_AD_FORMAT_FLOAT);
    CUDA_RESOURCE_DESC fr = over_array(fa);
    for (unsigned i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        CUDA_RESOURCE_VIEW_DESC v = view(CU_RES_VIEW_FORMAT_FLOAT_1X32, 2, 2, 4);
        v.firstLayer = ranges[i][0];
        v.lastLayer = ranges[i][1];
        char what[64];
        snprintf(what, sizeof what, "float, point, view of layers %u..%u", ranges[i][0], ranges[i][1]);
        CUDA_TEXTURE_DESC ft = point(0);
        if (CALL(what, cuTexObjectCreate(&o, &fr, &ft, &v)) == CUDA_SUCCESS) {
            read_layers("layers -1..5, integer coordinates", "layers_s32", o);
            read_layers("layers -1..5, float coordinates", "layers_f32", o);
            cuTexObjectDestroy(o);
        }
    }
    MUST(cuArrayDestroy(fa));
}

int main(void) {
    section("mip-level-views", mip_level_views);
    section("layer-views", layer_views);
    section("cubemap-views", cubemap_views);
    section("view-read-modes", view_read_modes);
    section("bc-view-read-modes", bc_view_read_modes);
    section("border-readback", border_readback);
    section("cubemap-view-reads", cubemap_view_reads);
    section("view-bounds", view_bounds);
    section("layers-past-the-end", layers_past_the_end);
    section("views-two-past", views_two_past);
    section("cubemap-view-odd-layers", cubemap_view_odd_layers);
    section("views-far-past", views_far_past);
    return 0;
}
