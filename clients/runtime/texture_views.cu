// A probe, for the H200's record: texture objects with a resource view
// (cudaResourceViewDesc), what they read and what the getter answers. The runtime API's
// documentation gives the rules (a view reinterprets an array's format, the BC views read
// arrays of 2 or 4 unsigned 32-bit channels as 4 x 4 blocks, firstMipmapLevel becomes
// level 0, firstLayer layer 0) but not how the block-compressed texels are rounded,
// what a view's width must be over a later level, or what a layer of a cubemap array is
// to a view. Printed bit for bit: a same-size reinterpretation, a level subrange and its
// clamps, a layer subrange, one block of each BC format (interpolated texels included),
// and which views are refused. Checked: the FLOAT view reads the array's bits.
#include "common.h"

// Thread t reads texel (t % w, t / w) by integer coordinates.
__global__ void fetch(cudaTextureObject_t tex, float4 *out, int w, int n) {
    int t = threadIdx.x;
    if (t < n) out[t] = tex2D<float4>(tex, t % w, t / w);
}

__global__ void fetch_u(cudaTextureObject_t tex, uint4 *out, int w, int n) {
    int t = threadIdx.x;
    if (t < n) out[t] = tex2D<uint4>(tex, t % w, t / w);
}

__global__ void fetch_layer(cudaTextureObject_t tex, uint4 *out, int layer) {
    out[0] = tex2DLayered<uint4>(tex, 0, 0, layer);
}

__global__ void at_level(cudaTextureObject_t tex, float *out, float lod) {
    out[0] = tex2DLod<float>(tex, 0.0f, 0.0f, lod);
}

static void print_bits(const char *what, const void *v, int words) {
    printf("    %s:", what);
    const uint32_t *w = (const uint32_t *)v;
    for (int i = 0; i < words; i++) printf(" %08x", w[i]);
    printf("\n");
    fflush(stdout);
}

static cudaResourceViewDesc view(cudaResourceViewFormat f, size_t w, size_t h, size_t d) {
    cudaResourceViewDesc v;
    memset(&v, 0, sizeof(v));
    v.format = f;
    v.width = w;
    v.height = h;
    v.depth = d;
    return v;
}

static cudaTextureDesc point(int normalized, cudaTextureReadMode mode) {
    cudaTextureDesc td;
    memset(&td, 0, sizeof(td));
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;
    td.readMode = mode;
    td.normalizedCoords = normalized;
    td.maxMipmapLevelClamp = 100;
    return td;
}

static cudaResourceDesc over_array(cudaArray_t a) {
    cudaResourceDesc r;
    memset(&r, 0, sizeof(r));
    r.resType = cudaResourceTypeArray;
    r.res.array.array = a;
    return r;
}

static float4 *d_f;
static uint4 *d_u;

// Reads the view's w x h texels as floats and prints them, one line a row.
static void print_texels(const char *what, cudaTextureObject_t tex, int w, int h) {
    T(cudaMemset(d_f, 0, 64 * sizeof(float4)));
    fetch<<<1, 64>>>(tex, d_f, w, w * h);
    T(cudaDeviceSynchronize());
    float4 host[64];
    T(cudaMemcpy(host, d_f, sizeof(host), cudaMemcpyDeviceToHost));
    for (int y = 0; y < h; y++) {
        char label[64];
        snprintf(label, sizeof(label), "%s row %d", what, y);
        print_bits(label, &host[y * w], 4 * w);
    }
}

// One block (2 or 4 words) of a BC format, read through a 4 x 4 view, printed.
static void bc_block(const char *what, cudaResourceViewFormat f, const uint32_t *block, int words) {
    cudaChannelFormatDesc fd = words == 2 ? cudaCreateChannelDesc(32, 32, 0, 0, cudaChannelFormatKindUnsigned)
                                          : cudaCreateChannelDesc(32, 32, 32, 32, cudaChannelFormatKindUnsigned);
    cudaArray_t a = NULL;
    T(cudaMallocArray(&a, &fd, 1, 1));
    if (!a) return;
    T(cudaMemcpy2DToArray(a, 0, 0, block, words * 4, words * 4, 1, cudaMemcpyHostToDevice));
    cudaResourceDesc r = over_array(a);
    // Element type: NVIDIA's runtime refuses normalized reads of the 32-bit array under
    // the view (cudaErrorInvalidNormSetting, first recording); the BC view reads floats.
    cudaTextureDesc td = point(0, cudaReadModeElementType);
    cudaResourceViewDesc v = view(f, 4, 4, 0);
    cudaTextureObject_t tex = 0;
    printf("%s\n", what);
    if (T(cudaCreateTextureObject(&tex, &r, &td, &v)) == cudaSuccess) {
        print_texels(what, tex, 4, 4);
        T(cudaDestroyTextureObject(tex));
    }
    T(cudaFreeArray(a));
}

int main(void) {
    T(cudaMalloc(&d_f, 64 * sizeof(float4)));
    T(cudaMalloc(&d_u, 64 * sizeof(uint4)));
    NEED(d_f);
    NEED(d_u);

    // 1. A same-size reinterpretation: 4 u32s as floats, as 4 x u8 (normalized and not).
    cudaChannelFormatDesc u32 = cudaCreateChannelDesc<unsigned int>();
    cudaArray_t words = NULL;
    T(cudaMallocArray(&words, &u32, 4, 1));
    NEED(words);
    const uint32_t host_words[4] = {0x3fc00000u, 0xc0000000u, 0x04030201u, 0xff80007fu};
    T(cudaMemcpy2DToArray(words, 0, 0, host_words, 16, 16, 1, cudaMemcpyHostToDevice));
    cudaResourceDesc r = over_array(words);
    cudaTextureObject_t tex = 0;
    cudaResourceViewDesc v = view(cudaResViewFormatFloat1, 4, 1, 0);
    cudaTextureDesc el = point(0, cudaReadModeElementType);
    if (T(cudaCreateTextureObject(&tex, &r, &el, &v)) == cudaSuccess) {
        print_texels("float1 view", tex, 4, 1);
        float4 back[4];
        T(cudaMemcpy(back, d_f, sizeof(back), cudaMemcpyDeviceToHost));
        uint32_t bits;
        memcpy(&bits, &back[1].x, 4);
        CHECK(bits == host_words[1]);
        cudaResourceViewDesc got;
        memset(&got, 0xa5, sizeof(got));
        T(cudaGetTextureObjectResourceViewDesc(&got, tex));
        OUT("view: format %d %zux%zux%zu levels %u..%u layers %u..%u", (int)got.format, got.width, got.height,
            got.depth, got.firstMipmapLevel, got.lastMipmapLevel, got.firstLayer, got.lastLayer);
        T(cudaDestroyTextureObject(tex));
    }
    v = view(cudaResViewFormatUnsignedChar4, 4, 1, 0);
    if (T(cudaCreateTextureObject(&tex, &r, &el, &v)) == cudaSuccess) {
        fetch_u<<<1, 4>>>(tex, d_u, 4, 4);
        T(cudaDeviceSynchronize());
        uint4 back[4];
        T(cudaMemcpy(back, d_u, sizeof(back), cudaMemcpyDeviceToHost));
        print_bits("uchar4 view, element type", back, 16);
        T(cudaDestroyTextureObject(tex));
    }
    cudaTextureDesc nf = point(0, cudaReadModeNormalizedFloat);
    if (T(cudaCreateTextureObject(&tex, &r, &nf, &v)) == cudaSuccess) {
        print_texels("uchar4 view, normalized", tex, 4, 1);
        T(cudaDestroyTextureObject(tex));
    }
    v = view(cudaResViewFormatSignedShort2, 4, 1, 0);
    if (T(cudaCreateTextureObject(&tex, &r, &nf, &v)) == cudaSuccess) {
        print_texels("short2 view, normalized", tex, 4, 1);
        T(cudaDestroyTextureObject(tex));
    }
    // Without a view: the getter.
    if (T(cudaCreateTextureObject(&tex, &r, &el, NULL)) == cudaSuccess) {
        cudaResourceViewDesc got;
        memset(&got, 0xa5, sizeof(got));
        T(cudaGetTextureObjectResourceViewDesc(&got, tex));
        OUT("width word: %016zx", got.width);
        T(cudaDestroyTextureObject(tex));
    }
    // Refused or not: another size, the array's extent wrong, levels and layers it lacks.
    struct { const char *what; cudaResourceViewDesc v; } tries[] = {
        {"float2 view of u32", view(cudaResViewFormatFloat2, 4, 1, 0)},
        {"width 8", view(cudaResViewFormatFloat1, 8, 1, 0)},
        {"height 0", view(cudaResViewFormatFloat1, 4, 0, 0)},
        {"format none", view(cudaResViewFormatNone, 4, 1, 0)},
        {"all zero", view(cudaResViewFormatNone, 0, 0, 0)},
        {"BC1 of u32x1", view(cudaResViewFormatUnsignedBlockCompressed1, 16, 4, 0)},
    };
    for (unsigned i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
        printf("%s\n", tries[i].what);
        if (T(cudaCreateTextureObject(&tex, &r, &el, &tries[i].v)) == cudaSuccess) T(cudaDestroyTextureObject(tex));
    }
    v = view(cudaResViewFormatFloat1, 4, 1, 0);
    v.lastMipmapLevel = 1;
    printf("lastMipmapLevel 1 of an array\n");
    if (T(cudaCreateTextureObject(&tex, &r, &el, &v)) == cudaSuccess) T(cudaDestroyTextureObject(tex));
    T(cudaFreeArray(words));

    // 2. Levels 1..2 of a 16 x 16 float mipmapped array of 5 levels (level L holds 10 + L),
    // the view's width 16 as the docs say ("the original resource"), then 8 (level 1's);
    // minMipmapLevelClamp 0, then 1 (relative to the first level, cuda.h says).
    cudaChannelFormatDesc f32 = cudaCreateChannelDesc<float>();
    cudaMipmappedArray_t mip = NULL;
    T(cudaMallocMipmappedArray(&mip, &f32, make_cudaExtent(16, 16, 0), 5, 0));
    NEED(mip);
    for (int l = 0; l < 5; l++) {
        cudaArray_t level = NULL;
        T(cudaGetMipmappedArrayLevel(&level, mip, l));
        NEED(level);
        static float host[256];
        int n = 16 >> l;
        for (int i = 0; i < n * n; i++) host[i] = 10.0f + l;
        T(cudaMemcpy2DToArray(level, 0, 0, host, n * 4, n * 4, n, cudaMemcpyHostToDevice));
    }
    cudaResourceDesc mr;
    memset(&mr, 0, sizeof(mr));
    mr.resType = cudaResourceTypeMipmappedArray;
    mr.res.mipmap.mipmap = mip;
    for (int k = 0; k < 3; k++) {
        int width = k < 2 ? 16 : 8;
        v = view(cudaResViewFormatNone, width, width, 0);
        v.firstMipmapLevel = 1;
        v.lastMipmapLevel = 2;
        cudaTextureDesc td = point(1, cudaReadModeElementType);
        td.minMipmapLevelClamp = (float)(k == 1);
        printf("levels 1..2, width %d, min clamp %d\n", width, k == 1);
        if (T(cudaCreateTextureObject(&tex, &mr, &td, &v)) == cudaSuccess) {
            const float lods[] = {0.0f, 0.4f, 0.6f, 1.0f, 1.6f, 4.0f};
            float got[6];
            for (int i = 0; i < 6; i++) {
                at_level<<<1, 1>>>(tex, (float *)d_f, lods[i]);
                T(cudaMemcpy(&got[i], d_f, 4, cudaMemcpyDeviceToHost));
            }
            print_bits("at lod 0, 0.4, 0.6, 1, 1.6, 4", got, 6);
            T(cudaDestroyTextureObject(tex));
        }
    }
    T(cudaFreeMipmappedArray(mip));

    // 3. Layers 1..2 of a 2 x 2 u32 array of 4 layers (layer k holds 100 + k), read at
    // layers 0, 1, 2 and -1; then a cubemap array's layers 6..11.
    cudaArray_t layers = NULL;
    T(cudaMalloc3DArray(&layers, &u32, make_cudaExtent(2, 2, 4), cudaArrayLayered));
    NEED(layers);
    uint32_t lh[16];
    for (int i = 0; i < 16; i++) lh[i] = 100 + i / 4;
    cudaMemcpy3DParms p;
    memset(&p, 0, sizeof(p));
    p.srcPtr = make_cudaPitchedPtr(lh, 8, 2, 2);
    p.dstArray = layers;
    p.extent = make_cudaExtent(2, 2, 4);
    p.kind = cudaMemcpyHostToDevice;
    T(cudaMemcpy3D(&p));
    r = over_array(layers);
    v = view(cudaResViewFormatNone, 2, 2, 4);
    v.firstLayer = 1;
    v.lastLayer = 2;
    if (T(cudaCreateTextureObject(&tex, &r, &el, &v)) == cudaSuccess) {
        const int at[] = {0, 1, 2, -1};
        uint32_t got[4];
        for (int i = 0; i < 4; i++) {
            fetch_layer<<<1, 1>>>(tex, d_u, at[i]);
            uint4 u;
            T(cudaMemcpy(&u, d_u, sizeof(u), cudaMemcpyDeviceToHost));
            got[i] = u.x;
        }
        OUT("layers 0, 1, 2, -1: %u %u %u %u", got[0], got[1], got[2], got[3]);
        T(cudaDestroyTextureObject(tex));
    }
    T(cudaFreeArray(layers));
    cudaArray_t cubes = NULL;
    T(cudaMalloc3DArray(&cubes, &u32, make_cudaExtent(2, 2, 12), cudaArrayCubemap | cudaArrayLayered));
    NEED(cubes);
    r = over_array(cubes);
    v = view(cudaResViewFormatNone, 2, 2, 12);
    v.firstLayer = 6;
    v.lastLayer = 11;
    printf("cubemap array, layers 6..11\n");
    if (T(cudaCreateTextureObject(&tex, &r, &el, &v)) == cudaSuccess) T(cudaDestroyTextureObject(tex));
    v.firstLayer = 1;
    v.lastLayer = 1;
    printf("cubemap array, layers 1..1\n");
    if (T(cudaCreateTextureObject(&tex, &r, &el, &v)) == cudaSuccess) T(cudaDestroyTextureObject(tex));
    T(cudaFreeArray(cubes));

    // 4. One block of each BC format, interpolated texels included.
    // BC1: 4 colours (white > black), indices 0..3 along each row; then 3 colours (blue <=
    // red), indices 0..3 (index 2 is their mean, index 3 transparent black).
    const uint32_t bc1_four[2] = {0x0000ffffu, 0xe4e4e4e4u};
    const uint32_t bc1_three[2] = {0xf800001fu, 0xe4e4e4e4u};
    bc_block("BC1 four colours", cudaResViewFormatUnsignedBlockCompressed1, bc1_four, 2);
    bc_block("BC1 three colours", cudaResViewFormatUnsignedBlockCompressed1, bc1_three, 2);
    // BC4: endpoints 255 and 0 (eight values, none exact in 8 bits but the ends), texel t
    // index t % 8; signed: 127 and -127.
    const uint32_t bc4[2] = {0xc68800ffu, 0xfac688fau};
    bc_block("BC4 unsigned", cudaResViewFormatUnsignedBlockCompressed4, bc4, 2);
    const uint32_t bc4s[2] = {0xc688817fu, 0xfac688fau};
    bc_block("BC4 signed", cudaResViewFormatSignedBlockCompressed4, bc4s, 2);
    // BC2, BC3, BC5 and BC7 over 4 words, BC6H too: blocks with varied bits.
    const uint32_t bc2[4] = {0x76543210u, 0xfedcba98u, 0x0000ffffu, 0xe4e4e4e4u};
    bc_block("BC2", cudaResViewFormatUnsignedBlockCompressed2, bc2, 4);
    const uint32_t bc3[4] = {0xc68800ffu, 0xfac688fau, 0x07e0f800u, 0x1b1b1b1bu};
    bc_block("BC3", cudaResViewFormatUnsignedBlockCompressed3, bc3, 4);
    const uint32_t bc5[4] = {0xc68800ffu, 0xfac688fau, 0xc6883214u, 0xfac688fau};
    bc_block("BC5 unsigned", cudaResViewFormatUnsignedBlockCompressed5, bc5, 4);
    bc_block("BC5 signed", cudaResViewFormatSignedBlockCompressed5, bc5, 4);
    const uint32_t bc67[4] = {0x12345643u, 0x9abcdef0u, 0x0f1e2d3cu, 0x8796a5b4u};
    bc_block("BC6H unsigned", cudaResViewFormatUnsignedBlockCompressed6H, bc67, 4);
    bc_block("BC6H signed", cudaResViewFormatSignedBlockCompressed6H, bc67, 4);
    bc_block("BC7", cudaResViewFormatUnsignedBlockCompressed7, bc67, 4);

    T(cudaFree(d_f));
    T(cudaFree(d_u));
    return finish();
}
