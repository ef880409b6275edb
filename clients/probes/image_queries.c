/* What txq and suq answer of texture and surface references (module-scope .texref and
 * .surfref variables) and objects, where the PTX ISA leaves the values to the source
 * language's API: ci/explore/txq_jit.c showed that the driver's JIT compiles txq of a
 * texture OBJECT in a register for width, height and depth only; here, whether it
 * compiles the others for a named reference, and what the extents read for each shape
 * (1D, 2D, 3D, layered, mipmapped arrays, linear and pitch2D memory). One module per
 * query (a query the JIT refuses fails alone), each reference bound in turn to arrays of
 * several formats and shapes, with two sampler settings; the value each launch reads is
 * printed, or the error. First recorded as ci/explore/txq_refs.c
 * (runs/2026-12-03-h200-session18/call5): the extents are those the resource was made
 * with (depth 0 but for 3D and layered arrays, whose layers it counts; height 0 for
 * linear memory and a 1D array's surface, 1 for its texture); suq's array_size, channel
 * and layout queries are refused at load; txq.force_unnormalized_coords of a .texref is
 * INVALID_PTX. No multicast API is called. */
#include "probe.h"

static const char *TXQ[] = {
    "width", "height", "depth", "channel_data_type", "channel_order", "normalized_coords",
    "filter_mode", "addr_mode_0", "addr_mode_1", "addr_mode_2", "array_size",
    "num_mipmap_levels", "num_samples", "force_unnormalized_coords",
};
static const char *SUQ[] = {
    "width", "height", "depth", "channel_data_type", "channel_order", "array_size", "memory_layout",
};

struct shape {
    const char *what;
    CUarray_format fmt;
    unsigned ch;
    size_t w, h, d;
    unsigned flags;
};

static const struct shape SHAPES[] = {
    {"u8x1 2D 4x2", CU_AD_FORMAT_UNSIGNED_INT8, 1, 4, 2, 0, 0},
    {"s16x2 2D 4x2", CU_AD_FORMAT_SIGNED_INT16, 2, 4, 2, 0, 0},
    {"f32x4 2D 4x2", CU_AD_FORMAT_FLOAT, 4, 4, 2, 0, 0},
    {"halfx1 2D 4x2", CU_AD_FORMAT_HALF, 1, 4, 2, 0, 0},
    {"u32x2 2D 4x2", CU_AD_FORMAT_UNSIGNED_INT32, 2, 4, 2, 0, 0},
    {"s8x4 2D 4x2", CU_AD_FORMAT_SIGNED_INT8, 4, 4, 2, 0, 0},
    {"u16x1 3D 4x2x3", CU_AD_FORMAT_UNSIGNED_INT16, 1, 4, 2, 3, 0},
    {"f32x1 layered 4x2, 5 layers", CU_AD_FORMAT_FLOAT, 1, 4, 2, 5, CUDA_ARRAY3D_LAYERED},
    {"s32x1 1D 8", CU_AD_FORMAT_SIGNED_INT32, 1, 8, 0, 0, 0},
};

static CUdeviceptr out;

/* Launches `f` and prints the word it wrote to `out`: `f` takes `out` alone (a kernel
 * asking a module's reference) or, `handle` non-NULL, the object's handle first. */
static void read_one(CUfunction f, const unsigned long long *handle, const char *what) {
    unsigned v = 0xA5A5A5A5u;
    cuMemcpyHtoD(out, &v, 4);
    unsigned long long h = handle ? *handle : 0;
    void *by_reference[] = {&out}, *by_handle[] = {&h, &out};
    CUresult r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, handle ? by_handle : by_reference, NULL);
    CUresult s = cuCtxSynchronize();
    if (r != CUDA_SUCCESS || s != CUDA_SUCCESS) {
        printf("  %s: launch %s, synchronize %s\n", what, rname(r), rname(s));
        return;
    }
    cuMemcpyDtoH(&v, out, 4);
    printf("  %s: %u (%#x)\n", what, v, v);
}

/* The kernel `q` of a module asking `op.q` (txq or suq) of `image`: a module-scope
 * reference (`.texref t` or `.surfref s`) or, `image` NULL, the object whose handle is
 * the kernel's first parameter. The module is loaded with its JIT's error log asked for
 * (the log's words are ptxas's on a GPU and cumock's on the mock, so only the result is
 * printed, under `label`); NULL where the load or the function fails. */
static CUfunction query_kernel(const char *op, const char *q, const char *image, const char *label,
                               CUmodule *m) {
    char ptx[1024];
    if (image)
        snprintf(ptx, sizeof ptx,
                 ".version 8.0\n.target sm_90\n.address_size 64\n.global .%s %s;\n"
                 ".visible .entry q(.param .u64 out)\n{\n  .reg .b32 %%r<2>;\n  .reg .b64 %%rd<2>;\n"
                 "  ld.param.u64 %%rd1, [out];\n  %s.%s.b32 %%r1, [%s];\n"
                 "  st.global.u32 [%%rd1], %%r1;\n  ret;\n}\n",
                 image[0] == 't' ? "texref" : "surfref", image, op, q, image);
    else
        snprintf(ptx, sizeof ptx,
                 ".version 8.0\n.target sm_90\n.address_size 64\n"
                 ".visible .entry q(.param .u64 t, .param .u64 out)\n{\n  .reg .b32 %%r<2>;\n"
                 "  .reg .b64 %%rd<3>;\n  ld.param.u64 %%rd1, [t];\n  ld.param.u64 %%rd2, [out];\n"
                 "  %s.%s.b32 %%r1, [%%rd1];\n  st.global.u32 [%%rd2], %%r1;\n  ret;\n}\n",
                 op, q);
    char log[2048] = {0};
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {log, (void *)(size_t)sizeof log};
    CUresult r = cuModuleLoadDataEx(m, ptx, 2, opts, vals);
    printf("%s: load %s\n", label, rname(r));
    if (r != CUDA_SUCCESS) return NULL;
    CUfunction f;
    CUresult g = cuModuleGetFunction(&f, *m, "q");
    if (g != CUDA_SUCCESS) {
        printf("  function %s\n", rname(g));
        cuModuleUnload(*m);
        return NULL;
    }
    return f;
}

/* An array of `s`'s shape with `extra` flags, or the error printed. */
static CUresult make_array(const struct shape *s, unsigned extra, CUarray *a, int say) {
    CUDA_ARRAY3D_DESCRIPTOR d;
    memset(&d, 0, sizeof d);
    d.Width = s->w;
    d.Height = s->h;
    d.Depth = s->d;
    d.Format = s->fmt;
    d.NumChannels = s->ch;
    d.Flags = s->flags | extra;
    CUresult r = cuArray3DCreate(a, &d);
    if (r != CUDA_SUCCESS && say) printf("  %s: array %s\n", s->what, rname(r));
    return r;
}

static void texref_query(const char *q) {
    char label[96];
    snprintf(label, sizeof label, "txq.%s of a .texref", q);
    CUmodule m;
    CUfunction f = query_kernel("txq", q, "t", label, &m);
    if (!f) return;
    CUtexref t;
    cuModuleGetTexRef(&t, m, "t");
    for (unsigned i = 0; i < sizeof SHAPES / sizeof *SHAPES; i++) {
        const struct shape *s = &SHAPES[i];
        CUarray a;
        if (make_array(s, 0, &a, 1) != CUDA_SUCCESS) continue;
        cuTexRefSetArray(t, a, CU_TRSA_OVERRIDE_FORMAT);
        /* Two sampler settings an array of each shape is read with. */
        cuTexRefSetFilterMode(t, CU_TR_FILTER_MODE_POINT);
        cuTexRefSetAddressMode(t, 0, CU_TR_ADDRESS_MODE_CLAMP);
        cuTexRefSetAddressMode(t, 1, CU_TR_ADDRESS_MODE_CLAMP);
        cuTexRefSetAddressMode(t, 2, CU_TR_ADDRESS_MODE_CLAMP);
        cuTexRefSetFlags(t, 0);
        char what[128];
        snprintf(what, sizeof what, "%s, point, clamp, flags 0", s->what);
        read_one(f, NULL, what);
        cuTexRefSetFilterMode(t, CU_TR_FILTER_MODE_LINEAR);
        cuTexRefSetAddressMode(t, 0, CU_TR_ADDRESS_MODE_WRAP);
        cuTexRefSetAddressMode(t, 1, CU_TR_ADDRESS_MODE_MIRROR);
        cuTexRefSetAddressMode(t, 2, CU_TR_ADDRESS_MODE_BORDER);
        cuTexRefSetFlags(t, CU_TRSF_NORMALIZED_COORDINATES | CU_TRSF_READ_AS_INTEGER);
        snprintf(what, sizeof what, "%s, linear, wrap/mirror/border, normalized|integer", s->what);
        read_one(f, NULL, what);
        cuArrayDestroy(a);
    }
    /* A mipmapped array of 3 levels. */
    CUDA_ARRAY3D_DESCRIPTOR d;
    memset(&d, 0, sizeof d);
    d.Width = 8;
    d.Height = 8;
    d.Format = CU_AD_FORMAT_FLOAT;
    d.NumChannels = 1;
    CUmipmappedArray mm;
    if (cuMipmappedArrayCreate(&mm, &d, 3) == CUDA_SUCCESS) {
        CUresult r = cuTexRefSetMipmappedArray(t, mm, CU_TRSA_OVERRIDE_FORMAT);
        if (r == CUDA_SUCCESS)
            read_one(f, NULL, "f32x1 mipmapped 8x8, 3 levels");
        else
            printf("  mipmapped: bind %s\n", rname(r));
        cuMipmappedArrayDestroy(mm);
    }
    cuModuleUnload(m);
}

static void surfref_query(const char *q) {
    char label[96];
    snprintf(label, sizeof label, "suq.%s of a .surfref", q);
    CUmodule m;
    CUfunction f = query_kernel("suq", q, "s", label, &m);
    if (!f) return;
    CUsurfref sr;
    cuModuleGetSurfRef(&sr, m, "s");
    for (unsigned i = 0; i < sizeof SHAPES / sizeof *SHAPES; i++) {
        const struct shape *s = &SHAPES[i];
        CUarray a;
        if (make_array(s, CUDA_ARRAY3D_SURFACE_LDST, &a, 1) != CUDA_SUCCESS) continue;
        CUresult r = cuSurfRefSetArray(sr, a, 0);
        if (r == CUDA_SUCCESS)
            read_one(f, NULL, s->what);
        else
            printf("  %s: bind %s\n", s->what, rname(r));
        cuArrayDestroy(a);
    }
    cuModuleUnload(m);
}

/* Reads `f` of an object made over `rd` (a texture object, with a zeroed
 * texture description, or a surface object), or prints why there is none. */
static void read_object(CUfunction f, const CUDA_RESOURCE_DESC *rd, int surface, const char *what) {
    unsigned long long h;
    CUresult r;
    if (surface) {
        r = cuSurfObjectCreate(&h, rd);
    } else {
        CUDA_TEXTURE_DESC td;
        memset(&td, 0, sizeof td);
        r = cuTexObjectCreate(&h, rd, &td, NULL);
    }
    if (r != CUDA_SUCCESS) {
        printf("  %s: object %s\n", what, rname(r));
        return;
    }
    read_one(f, &h, what);
    if (surface)
        cuSurfObjectDestroy(h);
    else
        cuTexObjectDestroy(h);
}

/* `op.q` of an object in a register over each shape: suq of surface objects, txq of
 * texture objects (width, height and depth, the queries the JIT compiles for objects:
 * txq_jit.c), these over linear and pitch2D memory too. */
static void object_query(const char *op, const char *q) {
    int surface = op[0] == 's';
    char label[96];
    snprintf(label, sizeof label, "%s.%s of a %s object", op, q, surface ? "surface" : "texture");
    CUmodule m;
    CUfunction f = query_kernel(op, q, NULL, label, &m);
    if (!f) return;
    for (unsigned i = 0; i < sizeof SHAPES / sizeof *SHAPES; i++) {
        const struct shape *s = &SHAPES[i];
        CUarray a;
        if (make_array(s, surface ? CUDA_ARRAY3D_SURFACE_LDST : 0, &a, 0) != CUDA_SUCCESS) continue;
        CUDA_RESOURCE_DESC rd;
        memset(&rd, 0, sizeof rd);
        rd.resType = CU_RESOURCE_TYPE_ARRAY;
        rd.res.array.hArray = a;
        read_object(f, &rd, surface, s->what);
        cuArrayDestroy(a);
    }
    CUdeviceptr mem;
    if (!surface && cuMemAlloc(&mem, 1 << 16) == CUDA_SUCCESS) {
        CUDA_RESOURCE_DESC rd;
        memset(&rd, 0, sizeof rd);
        rd.resType = CU_RESOURCE_TYPE_LINEAR;
        rd.res.linear.devPtr = mem;
        rd.res.linear.format = CU_AD_FORMAT_FLOAT;
        rd.res.linear.numChannels = 1;
        rd.res.linear.sizeInBytes = 256;
        read_object(f, &rd, 0, "linear 64 floats");
        memset(&rd, 0, sizeof rd);
        rd.resType = CU_RESOURCE_TYPE_PITCH2D;
        rd.res.pitch2D.devPtr = mem;
        rd.res.pitch2D.format = CU_AD_FORMAT_FLOAT;
        rd.res.pitch2D.numChannels = 1;
        rd.res.pitch2D.width = 16;
        rd.res.pitch2D.height = 4;
        rd.res.pitch2D.pitchInBytes = 128;
        read_object(f, &rd, 0, "pitch2D 16x4 floats");
        cuMemFree(mem);
    }
    cuModuleUnload(m);
}

static void setup(void) {
    CUcontext ctx;
    init_primary(0, &ctx);
    MUST(cuMemAlloc(&out, 4));
}

static void txq_texref(void) {
    setup();
    for (unsigned i = 0; i < sizeof TXQ / sizeof *TXQ; i++) texref_query(TXQ[i]);
}

static void suq_surfref(void) {
    setup();
    for (unsigned i = 0; i < sizeof SUQ / sizeof *SUQ; i++) surfref_query(SUQ[i]);
}

static void suq_surface_object(void) {
    setup();
    for (unsigned i = 0; i < sizeof SUQ / sizeof *SUQ; i++) object_query("suq", SUQ[i]);
}

static void txq_texture_object(void) {
    setup();
    object_query("txq", "width");
    object_query("txq", "height");
    object_query("txq", "depth");
}

int main(void) {
    section("txq-texref", txq_texref);
    section("suq-surfref", suq_surfref);
    section("suq-surface-object", suq_surface_object);
    section("txq-texture-object", txq_texture_object);
    return 0;
}
