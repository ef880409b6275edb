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

/* Launches `f` (no parameters but `out`) and prints the word it wrote. */
static void read_one(CUfunction f, const char *what) {
    unsigned v = 0xA5A5A5A5u;
    cuMemcpyHtoD(out, &v, 4);
    void *args[] = {&out};
    CUresult r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL);
    CUresult s = cuCtxSynchronize();
    if (r != CUDA_SUCCESS || s != CUDA_SUCCESS) {
        printf("  %s: launch %s, synchronize %s\n", what, rname(r), rname(s));
        return;
    }
    cuMemcpyDtoH(&v, out, 4);
    printf("  %s: %u (%#x)\n", what, v, v);
}

/* The module of one query, loaded with its JIT's error log asked for (the log's words
 * are ptxas's on a GPU and cumock's on the mock, so only the result is printed). */
static CUmodule load(const char *ptx, const char *label) {
    char log[2048] = {0};
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {log, (void *)(size_t)sizeof log};
    CUmodule m = NULL;
    CUresult r = cuModuleLoadDataEx(&m, ptx, 2, opts, vals);
    printf("%s: load %s\n", label, rname(r));
    return r == CUDA_SUCCESS ? m : NULL;
}

static void texref_query(const char *q) {
    char ptx[1024], label[96];
    snprintf(ptx, sizeof ptx,
             ".version 8.0\n.target sm_90\n.address_size 64\n.global .texref t;\n"
             ".visible .entry q(.param .u64 out)\n{\n  .reg .b32 %%r<2>;\n  .reg .b64 %%rd<2>;\n"
             "  ld.param.u64 %%rd1, [out];\n  txq.%s.b32 %%r1, [t];\n"
             "  st.global.u32 [%%rd1], %%r1;\n  ret;\n}\n",
             q);
    snprintf(label, sizeof label, "txq.%s of a .texref", q);
    CUmodule m = load(ptx, label);
    if (!m) return;
    CUfunction f;
    CUresult g = cuModuleGetFunction(&f, m, "q");
    if (g != CUDA_SUCCESS) {
        printf("  function %s\n", rname(g));
        cuModuleUnload(m);
        return;
    }
    CUtexref t;
    cuModuleGetTexRef(&t, m, "t");
    for (unsigned i = 0; i < sizeof SHAPES / sizeof *SHAPES; i++) {
        const struct shape *s = &SHAPES[i];
        CUDA_ARRAY3D_DESCRIPTOR d;
        memset(&d, 0, sizeof d);
        d.Width = s->w;
        d.Height = s->h;
        d.Depth = s->d;
        d.Format = s->fmt;
        d.NumChannels = s->ch;
        d.Flags = s->flags;
        CUarray a;
        CUresult r = cuArray3DCreate(&a, &d);
        if (r != CUDA_SUCCESS) {
            printf("  %s: array %s\n", s->what, rname(r));
            continue;
        }
        cuTexRefSetArray(t, a, CU_TRSA_OVERRIDE_FORMAT);
        /* Two sampler settings an array of each shape is read with. */
        cuTexRefSetFilterMode(t, CU_TR_FILTER_MODE_POINT);
        cuTexRefSetAddressMode(t, 0, CU_TR_ADDRESS_MODE_CLAMP);
        cuTexRefSetAddressMode(t, 1, CU_TR_ADDRESS_MODE_CLAMP);
        cuTexRefSetAddressMode(t, 2, CU_TR_ADDRESS_MODE_CLAMP);
        cuTexRefSetFlags(t, 0);
        char what[128];
        snprintf(what, sizeof what, "%s, point, clamp, flags 0", s->what);
        read_one(f, what);
        cuTexRefSetFilterMode(t, CU_TR_FILTER_MODE_LINEAR);
        cuTexRefSetAddressMode(t, 0, CU_TR_ADDRESS_MODE_WRAP);
        cuTexRefSetAddressMode(t, 1, CU_TR_ADDRESS_MODE_MIRROR);
        cuTexRefSetAddressMode(t, 2, CU_TR_ADDRESS_MODE_BORDER);
        cuTexRefSetFlags(t, CU_TRSF_NORMALIZED_COORDINATES | CU_TRSF_READ_AS_INTEGER);
        snprintf(what, sizeof what, "%s, linear, wrap/mirror/border, normalized|integer", s->what);
        read_one(f, what);
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
            read_one(f, "f32x1 mipmapped 8x8, 3 levels");
        else
            printf("  mipmapped: bind %s\n", rname(r));
        cuMipmappedArrayDestroy(mm);
    }
    cuModuleUnload(m);
}

static void surfref_query(const char *q) {
    char ptx[1024], label[96];
    snprintf(ptx, sizeof ptx,
             ".version 8.0\n.target sm_90\n.address_size 64\n.global .surfref s;\n"
             ".visible .entry q(.param .u64 out)\n{\n  .reg .b32 %%r<2>;\n  .reg .b64 %%rd<2>;\n"
             "  ld.param.u64 %%rd1, [out];\n  suq.%s.b32 %%r1, [s];\n"
             "  st.global.u32 [%%rd1], %%r1;\n  ret;\n}\n",
             q);
    snprintf(label, sizeof label, "suq.%s of a .surfref", q);
    CUmodule m = load(ptx, label);
    if (!m) return;
    CUfunction f;
    CUresult g = cuModuleGetFunction(&f, m, "q");
    if (g != CUDA_SUCCESS) {
        printf("  function %s\n", rname(g));
        cuModuleUnload(m);
        return;
    }
    CUsurfref sr;
    cuModuleGetSurfRef(&sr, m, "s");
    for (unsigned i = 0; i < sizeof SHAPES / sizeof *SHAPES; i++) {
        const struct shape *s = &SHAPES[i];
        CUDA_ARRAY3D_DESCRIPTOR d;
        memset(&d, 0, sizeof d);
        d.Width = s->w;
        d.Height = s->h;
        d.Depth = s->d;
        d.Format = s->fmt;
        d.NumChannels = s->ch;
        d.Flags = s->flags | CUDA_ARRAY3D_SURFACE_LDST;
        CUarray a;
        CUresult r = cuArray3DCreate(&a, &d);
        if (r != CUDA_SUCCESS) {
            printf("  %s: array %s\n", s->what, rname(r));
            continue;
        }
        r = cuSurfRefSetArray(sr, a, 0);
        if (r == CUDA_SUCCESS)
            read_one(f, s->what);
        else
            printf("  %s: bind %s\n", s->what, rname(r));
        cuArrayDestroy(a);
    }
    cuModuleUnload(m);
}

/* suq of a surface object in a register (the texture objects' txq is txq_jit.c's). */
static void surfobj_query(const char *q) {
    char ptx[1024], label[96];
    snprintf(ptx, sizeof ptx,
             ".version 8.0\n.target sm_90\n.address_size 64\n"
             ".visible .entry q(.param .u64 s, .param .u64 out)\n{\n  .reg .b32 %%r<2>;\n"
             "  .reg .b64 %%rd<3>;\n  ld.param.u64 %%rd1, [s];\n  ld.param.u64 %%rd2, [out];\n"
             "  suq.%s.b32 %%r1, [%%rd1];\n  st.global.u32 [%%rd2], %%r1;\n  ret;\n}\n",
             q);
    snprintf(label, sizeof label, "suq.%s of a surface object", q);
    CUmodule m = load(ptx, label);
    if (!m) return;
    CUfunction f;
    CUresult g = cuModuleGetFunction(&f, m, "q");
    if (g != CUDA_SUCCESS) {
        printf("  function %s\n", rname(g));
        cuModuleUnload(m);
        return;
    }
    for (unsigned i = 0; i < sizeof SHAPES / sizeof *SHAPES; i++) {
        const struct shape *s = &SHAPES[i];
        CUDA_ARRAY3D_DESCRIPTOR d;
        memset(&d, 0, sizeof d);
        d.Width = s->w;
        d.Height = s->h;
        d.Depth = s->d;
        d.Format = s->fmt;
        d.NumChannels = s->ch;
        d.Flags = s->flags | CUDA_ARRAY3D_SURFACE_LDST;
        CUarray a;
        if (cuArray3DCreate(&a, &d) != CUDA_SUCCESS) continue;
        CUDA_RESOURCE_DESC rd;
        memset(&rd, 0, sizeof rd);
        rd.resType = CU_RESOURCE_TYPE_ARRAY;
        rd.res.array.hArray = a;
        CUsurfObject so;
        CUresult r = cuSurfObjectCreate(&so, &rd);
        if (r == CUDA_SUCCESS) {
            unsigned v = 0xA5A5A5A5u;
            cuMemcpyHtoD(out, &v, 4);
            void *args[] = {&so, &out};
            CUresult l = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL);
            CUresult y = cuCtxSynchronize();
            cuMemcpyDtoH(&v, out, 4);
            if (l == CUDA_SUCCESS && y == CUDA_SUCCESS)
                printf("  %s: %u (%#x)\n", s->what, v, v);
            else
                printf("  %s: launch %s, synchronize %s\n", s->what, rname(l), rname(y));
            cuSurfObjectDestroy(so);
        } else {
            printf("  %s: object %s\n", s->what, rname(r));
        }
        cuArrayDestroy(a);
    }
    cuModuleUnload(m);
}

/* txq of a texture object in a register: width, height and depth, the queries the JIT
 * compiles for objects (txq_jit.c), over the same shapes. */
static void texobj_query(const char *q) {
    char ptx[1024], label[96];
    snprintf(ptx, sizeof ptx,
             ".version 8.0\n.target sm_90\n.address_size 64\n"
             ".visible .entry q(.param .u64 t, .param .u64 out)\n{\n  .reg .b32 %%r<2>;\n"
             "  .reg .b64 %%rd<3>;\n  ld.param.u64 %%rd1, [t];\n  ld.param.u64 %%rd2, [out];\n"
             "  txq.%s.b32 %%r1, [%%rd1];\n  st.global.u32 [%%rd2], %%r1;\n  ret;\n}\n",
             q);
    snprintf(label, sizeof label, "txq.%s of a texture object", q);
    CUmodule m = load(ptx, label);
    if (!m) return;
    CUfunction f;
    CUresult g = cuModuleGetFunction(&f, m, "q");
    if (g != CUDA_SUCCESS) {
        printf("  function %s\n", rname(g));
        cuModuleUnload(m);
        return;
    }
    for (unsigned i = 0; i < sizeof SHAPES / sizeof *SHAPES; i++) {
        const struct shape *s = &SHAPES[i];
        CUDA_ARRAY3D_DESCRIPTOR d;
        memset(&d, 0, sizeof d);
        d.Width = s->w;
        d.Height = s->h;
        d.Depth = s->d;
        d.Format = s->fmt;
        d.NumChannels = s->ch;
        d.Flags = s->flags;
        CUarray a;
        if (cuArray3DCreate(&a, &d) != CUDA_SUCCESS) continue;
        CUDA_RESOURCE_DESC rd;
        memset(&rd, 0, sizeof rd);
        rd.resType = CU_RESOURCE_TYPE_ARRAY;
        rd.res.array.hArray = a;
        CUDA_TEXTURE_DESC td;
        memset(&td, 0, sizeof td);
        CUtexObject to;
        CUresult r = cuTexObjectCreate(&to, &rd, &td, NULL);
        if (r == CUDA_SUCCESS) {
            unsigned v = 0xA5A5A5A5u;
            cuMemcpyHtoD(out, &v, 4);
            void *args[] = {&to, &out};
            CUresult l = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL);
            CUresult y = cuCtxSynchronize();
            cuMemcpyDtoH(&v, out, 4);
            if (l == CUDA_SUCCESS && y == CUDA_SUCCESS)
                printf("  %s: %u (%#x)\n", s->what, v, v);
            else
                printf("  %s: launch %s, synchronize %s\n", s->what, rname(l), rname(y));
            cuTexObjectDestroy(to);
        } else {
            printf("  %s: object %s\n", s->what, rname(r));
        }
        cuArrayDestroy(a);
    }
    /* Linear and pitch2D memory. */
    CUdeviceptr mem;
    if (cuMemAlloc(&mem, 1 << 16) == CUDA_SUCCESS) {
        for (int kind = 0; kind < 2; kind++) {
            CUDA_RESOURCE_DESC rd;
            memset(&rd, 0, sizeof rd);
            if (kind == 0) {
                rd.resType = CU_RESOURCE_TYPE_LINEAR;
                rd.res.linear.devPtr = mem;
                rd.res.linear.format = CU_AD_FORMAT_FLOAT;
                rd.res.linear.numChannels = 1;
                rd.res.linear.sizeInBytes = 256;
            } else {
                rd.resType = CU_RESOURCE_TYPE_PITCH2D;
                rd.res.pitch2D.devPtr = mem;
                rd.res.pitch2D.format = CU_AD_FORMAT_FLOAT;
                rd.res.pitch2D.numChannels = 1;
                rd.res.pitch2D.width = 16;
                rd.res.pitch2D.height = 4;
                rd.res.pitch2D.pitchInBytes = 128;
            }
            CUDA_TEXTURE_DESC td;
            memset(&td, 0, sizeof td);
            CUtexObject to;
            CUresult r = cuTexObjectCreate(&to, &rd, &td, NULL);
            const char *what = kind == 0 ? "linear 64 floats" : "pitch2D 16x4 floats";
            if (r != CUDA_SUCCESS) {
                printf("  %s: object %s\n", what, rname(r));
                continue;
            }
            unsigned v = 0xA5A5A5A5u;
            cuMemcpyHtoD(out, &v, 4);
            void *args[] = {&to, &out};
            CUresult l = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL);
            CUresult y = cuCtxSynchronize();
            cuMemcpyDtoH(&v, out, 4);
            if (l == CUDA_SUCCESS && y == CUDA_SUCCESS)
                printf("  %s: %u (%#x)\n", what, v, v);
            else
                printf("  %s: launch %s, synchronize %s\n", what, rname(l), rname(y));
            cuTexObjectDestroy(to);
        }
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
    for (unsigned i = 0; i < sizeof SUQ / sizeof *SUQ; i++) surfobj_query(SUQ[i]);
}

static void txq_texture_object(void) {
    setup();
    texobj_query("width");
    texobj_query("height");
    texobj_query("depth");
}

int main(void) {
    section("txq-texref", txq_texref);
    section("suq-surfref", suq_surfref);
    section("suq-surface-object", suq_surface_object);
    section("txq-texture-object", txq_texture_object);
    return 0;
}
