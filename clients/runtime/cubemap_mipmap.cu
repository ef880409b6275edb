// simpleCubemapTexture's and bindlessTexture's patterns: a cubemap array
// (cudaArrayCubemap, and a layered one) written face by face with cudaMemcpy3D and read
// back through texCubemap / texCubemapLayered at every texel's centre; a mipmapped array
// (cudaMallocMipmappedArray) filled level by level (cudaGetMipmappedArrayLevel) and
// sampled with tex2DLod and tex2DGrad. What the documents fix (the programming guide's
// cubemap face table, level sizes, blends of levels at exact fractions) is checked; what
// they leave open (which face a tie picks, a linear sample at a face's edge, how the
// level of detail is rounded, tex2DGrad's formula) is printed bit for bit, for the
// H200's record.
#include "common.h"

#define N 8

// Face f of cube c, texel (x, y): a value that names all four.
static float cube_value(int c, int f, int x, int y) { return (float)(1000 * c + 100 * f + 10 * y + x); }

// The direction through the centre of texel (x, y) of face f, from the programming
// guide's table (face coordinates ((s/m + 1)/2, (t/m + 1)/2) with m = 1).
__device__ static float3 face_direction(int f, int x, int y) {
    float s = (x + 0.5f) / N * 2.0f - 1.0f, t = (y + 0.5f) / N * 2.0f - 1.0f;
    switch (f) {
    case 0: return make_float3(1.0f, -t, -s);
    case 1: return make_float3(-1.0f, -t, s);
    case 2: return make_float3(s, 1.0f, t);
    case 3: return make_float3(s, -1.0f, -t);
    case 4: return make_float3(s, -t, 1.0f);
    default: return make_float3(-s, -t, -1.0f);
    }
}

// simpleCubemapTexture's kernel: every texel of every face read back through its
// direction (one block a face, one thread a texel), cube `c` of a layered cubemap.
__global__ void read_faces(cudaTextureObject_t tex, float *out, int c, int layered) {
    int f = blockIdx.x, x = threadIdx.x, y = threadIdx.y;
    float3 d = face_direction(f, x, y);
    float v = layered ? texCubemapLayered<float>(tex, d.x, d.y, d.z, c) : texCubemap<float>(tex, d.x, d.y, d.z);
    out[(f * N + y) * N + x] = v;
}

__global__ void lookup(cudaTextureObject_t tex, const float4 *dirs, float *out, int n) {
    int i = threadIdx.x;
    if (i < n) out[i] = texCubemap<float>(tex, dirs[i].x, dirs[i].y, dirs[i].z);
}

__global__ void lod_samples(cudaTextureObject_t tex, const float *lods, float *out, int n, float u, float v) {
    int i = threadIdx.x;
    if (i < n) out[i] = tex2DLod<float>(tex, u, v, lods[i]);
}

__global__ void grad_samples(cudaTextureObject_t tex, const float4 *g, float *out, int n) {
    int i = threadIdx.x;
    if (i < n) out[i] = tex2DGrad<float>(tex, 0.5f, 0.5f, make_float2(g[i].x, g[i].y), make_float2(g[i].z, g[i].w));
}

static void print_bits(const char *what, const float *v, int n) {
    printf("    %s:", what);
    for (int i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, &v[i], 4);
        printf(" %08x", b);
    }
    printf("\n");
    fflush(stdout);
}

static cudaTextureObject_t texture_over(cudaResourceType type, void *handle, cudaTextureFilterMode filter,
                                        cudaTextureFilterMode mip_filter, float max_level) {
    cudaResourceDesc res;
    memset(&res, 0, sizeof(res));
    res.resType = type;
    if (type == cudaResourceTypeArray)
        res.res.array.array = (cudaArray_t)handle;
    else
        res.res.mipmap.mipmap = (cudaMipmappedArray_t)handle;
    cudaTextureDesc td;
    memset(&td, 0, sizeof(td));
    td.normalizedCoords = 1;
    td.filterMode = filter;
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = cudaAddressModeClamp;
    td.readMode = cudaReadModeElementType;
    td.mipmapFilterMode = mip_filter;
    td.maxMipmapLevelClamp = max_level;
    cudaTextureObject_t tex = 0;
    T(cudaCreateTextureObject(&tex, &res, &td, NULL));
    return tex;
}

static int cubemaps(void) {
    printf("-- cubemaps\n");
    cudaChannelFormatDesc fd = cudaCreateChannelDesc<float>();
    cudaArray_t cube = NULL, cubes = NULL, bad = NULL;
    T(cudaMalloc3DArray(&cube, &fd, make_cudaExtent(N, N, 6), cudaArrayCubemap));
    T(cudaMalloc3DArray(&cubes, &fd, make_cudaExtent(N, N, 12), cudaArrayCubemap | cudaArrayLayered));
    NEED(cube);
    NEED(cubes);
    // The header: Width == Height, Depth 6 (a multiple of 6 when layered).
    T(cudaMalloc3DArray(&bad, &fd, make_cudaExtent(N, N + 1, 6), cudaArrayCubemap));
    T(cudaMalloc3DArray(&bad, &fd, make_cudaExtent(N, N, 5), cudaArrayCubemap));
    T(cudaMalloc3DArray(&bad, &fd, make_cudaExtent(N, N, 9), cudaArrayCubemap | cudaArrayLayered));
    T(cudaGetLastError()); // the failures above set it
    cudaExtent e;
    unsigned flags = 0;
    T(cudaArrayGetInfo(NULL, &e, &flags, cubes));
    OUT("extent %zu x %zu x %zu, flags %#x", e.width, e.height, e.depth, flags);

    static float host[12 * N * N];
    for (int c = 0; c < 2; c++)
        for (int f = 0; f < 6; f++)
            for (int y = 0; y < N; y++)
                for (int x = 0; x < N; x++) host[((c * 6 + f) * N + y) * N + x] = cube_value(c, f, x, y);
    // One cudaMemcpy3D for the cube, face by face for the layered one.
    cudaMemcpy3DParms p;
    memset(&p, 0, sizeof(p));
    p.srcPtr = make_cudaPitchedPtr(host, N * sizeof(float), N, N);
    p.dstArray = cube;
    p.extent = make_cudaExtent(N, N, 6);
    p.kind = cudaMemcpyHostToDevice;
    T(cudaMemcpy3D(&p));
    int face_copies = 0;
    for (int z = 0; z < 12; z++) {
        memset(&p, 0, sizeof(p));
        p.srcPtr = make_cudaPitchedPtr(host, N * sizeof(float), N, N);
        p.srcPos = make_cudaPos(0, 0, z);
        p.dstArray = cubes;
        p.dstPos = make_cudaPos(0, 0, z);
        p.extent = make_cudaExtent(N, N, 1);
        p.kind = cudaMemcpyHostToDevice;
        face_copies += cudaMemcpy3D(&p) == cudaSuccess;
    }
    OUT("%d of 12 face copies succeeded", face_copies);

    float *d_out = NULL;
    T(cudaMalloc(&d_out, 6 * N * N * sizeof(float)));
    NEED(d_out);
    static float out[6 * N * N];
    for (int filter = 0; filter < 2; filter++) {
        cudaTextureFilterMode fm = filter ? cudaFilterModeLinear : cudaFilterModePoint;
        cudaTextureObject_t t1 = texture_over(cudaResourceTypeArray, cube, fm, cudaFilterModePoint, 0);
        cudaTextureObject_t t2 = texture_over(cudaResourceTypeArray, cubes, fm, cudaFilterModePoint, 0);
        for (int c = -1; c < 2; c++) {
            read_faces<<<6, dim3(N, N)>>>(c < 0 ? t1 : t2, d_out, c, c >= 0);
            T(cudaGetLastError());
            T(cudaMemcpy(out, d_out, sizeof(out), cudaMemcpyDeviceToHost));
            // At a texel's centre both filters read the texel (the linear weights are 0).
            int wrong = 0;
            for (int f = 0; f < 6; f++)
                for (int y = 0; y < N; y++)
                    for (int x = 0; x < N; x++) wrong += out[(f * N + y) * N + x] != cube_value(c < 0 ? 0 : c, f, x, y);
            OUT("%s, %s: %d of %d texels differ", filter ? "linear" : "point", c < 0 ? "cubemap" : (c ? "cube 1" : "cube 0"),
                wrong, 6 * N * N);
            CHECK(wrong == 0);
        }
        T(cudaDestroyTextureObject(t1));
        T(cudaDestroyTextureObject(t2));
    }

    // For the record: ties between the largest components, a zero direction, and linear
    // samples at and across a face's edge (seamless filtering is off by default).
    static const float4 dirs[] = {
        {1, 1, 0, 0},  {1, 0, 1, 0},  {0, 1, 1, 0},   {1, 1, 1, 0},    {-1, -1, -1, 0}, {-1, 1, 0, 0},
        {0, 0, 0, 0},  {1, -0.999f, 0.2f, 0}, {1, -0.9999f, 0.9999f, 0}, {0.5f, 0.3f, -0.5f, 0},
    };
    const int nd = sizeof(dirs) / sizeof(dirs[0]);
    float4 *d_dirs = NULL;
    T(cudaMalloc(&d_dirs, sizeof(dirs)));
    NEED(d_dirs);
    T(cudaMemcpy(d_dirs, dirs, sizeof(dirs), cudaMemcpyHostToDevice));
    for (int filter = 0; filter < 2; filter++) {
        cudaTextureFilterMode fm = filter ? cudaFilterModeLinear : cudaFilterModePoint;
        cudaTextureObject_t t = texture_over(cudaResourceTypeArray, cube, fm, cudaFilterModePoint, 0);
        lookup<<<1, 32>>>(t, d_dirs, d_out, nd);
        T(cudaMemcpy(out, d_out, nd * sizeof(float), cudaMemcpyDeviceToHost));
        print_bits(filter ? "ties and edges, linear" : "ties and edges, point", out, nd);
        T(cudaDestroyTextureObject(t));
    }
    T(cudaFree(d_dirs));
    T(cudaFree(d_out));
    T(cudaFreeArray(cube));
    T(cudaFreeArray(cubes));
    return 0;
}

#define M 16
#define LEVELS 5

static float level_value(int l) { return (float)(10 << l); }

static int mipmaps(void) {
    printf("-- mipmapped arrays\n");
    cudaChannelFormatDesc fd = cudaCreateChannelDesc<float>();
    cudaMipmappedArray_t mip = NULL;
    // Asked for 9 levels: the header clamps to 1 + floor(log2(16)) = 5.
    T(cudaMallocMipmappedArray(&mip, &fd, make_cudaExtent(M, M, 0), 9, 0));
    NEED(mip);
    static float host[M * M];
    for (int l = 0; l < LEVELS; l++) {
        cudaArray_t level = NULL;
        T(cudaGetMipmappedArrayLevel(&level, mip, l));
        NEED(level);
        cudaExtent e;
        T(cudaArrayGetInfo(NULL, &e, NULL, level));
        OUT("level %d: %zu x %zu x %zu", l, e.width, e.height, e.depth);
        CHECK(e.width == (size_t)(M >> l) && e.height == (size_t)(M >> l));
        int n = M >> l;
        for (int i = 0; i < n * n; i++) host[i] = level_value(l);
        T(cudaMemcpy2DToArray(level, 0, 0, host, n * sizeof(float), n * sizeof(float), n, cudaMemcpyHostToDevice));
    }
    cudaArray_t past = NULL;
    T(cudaGetMipmappedArrayLevel(&past, mip, LEVELS));
    T(cudaGetLastError());

    static const float lods[] = {-1.0f, 0.0f, 0.25f, 0.5f, 1.0f, 1.75f, 3.5f, 4.0f, 9.0f,
                                 // For the record: fractions off 1/256, halves, past the clamp.
                                 0.3f, 1.7f, 2.5f, 0.5f / 256, 1.5f / 256, 0.998f, 2.0f + 1.0f / 512};
    const int nl = sizeof(lods) / sizeof(lods[0]), exact = 9;
    float *d_lods = NULL, *d_out = NULL;
    T(cudaMalloc(&d_lods, sizeof(lods)));
    T(cudaMalloc(&d_out, 64 * sizeof(float)));
    NEED(d_lods);
    NEED(d_out);
    T(cudaMemcpy(d_lods, lods, sizeof(lods), cudaMemcpyHostToDevice));
    float out[64];
    for (int linear = 0; linear < 2; linear++) {
        cudaTextureObject_t t = texture_over(cudaResourceTypeMipmappedArray, mip, cudaFilterModeLinear,
                                             linear ? cudaFilterModeLinear : cudaFilterModePoint, LEVELS - 1);
        lod_samples<<<1, 32>>>(t, d_lods, d_out, nl, 0.3f, 0.7f);
        T(cudaGetLastError());
        T(cudaMemcpy(out, d_out, nl * sizeof(float), cudaMemcpyDeviceToHost));
        // Each level is one value, so a sample shows only the levels' blend: the level of
        // detail clamped to [0, 4]; linear blends floor and ceil by the fraction, point
        // reads the nearest (no halves among the checked ones).
        for (int i = 0; i < exact; i++) {
            float l = lods[i] < 0 ? 0 : (lods[i] > LEVELS - 1 ? LEVELS - 1 : lods[i]);
            int lo = (int)l;
            float f = l - lo;
            float want = linear ? (f == 0 ? level_value(lo) : (1 - f) * level_value(lo) + f * level_value(lo + 1))
                                : level_value((int)(l + 0.5f));
            if (out[i] != want) OUT("lod %g: %g, documented %g", lods[i], out[i], want);
            CHECK(out[i] == want);
        }
        print_bits(linear ? "tex2DLod, linear mipmaps" : "tex2DLod, point mipmaps", out, nl);
        T(cudaDestroyTextureObject(t));
    }

    // For the record: the level of detail's rounding, 1/1024 apart across 1 and 2.5,
    // under linear mipmaps (each sample shows its blend weight).
    {
        float sweep[64];
        for (int i = 0; i < 32; i++) sweep[i] = 1.0f + i / 1024.0f;
        for (int i = 0; i < 32; i++) sweep[32 + i] = 2.5f - 16 / 1024.0f + i / 1024.0f;
        float *d_sweep = NULL;
        T(cudaMalloc(&d_sweep, sizeof(sweep)));
        NEED(d_sweep);
        T(cudaMemcpy(d_sweep, sweep, sizeof(sweep), cudaMemcpyHostToDevice));
        for (int linear = 0; linear < 2; linear++) {
            cudaTextureObject_t t = texture_over(cudaResourceTypeMipmappedArray, mip, cudaFilterModeLinear,
                                                 linear ? cudaFilterModeLinear : cudaFilterModePoint, LEVELS - 1);
            lod_samples<<<1, 64>>>(t, d_sweep, d_out, 64, 0.5f, 0.5f);
            T(cudaMemcpy(out, d_out, sizeof(out), cudaMemcpyDeviceToHost));
            print_bits(linear ? "lod sweep, linear mipmaps" : "lod sweep, point mipmaps", out, 64);
            T(cudaDestroyTextureObject(t));
        }
        T(cudaFree(d_sweep));
    }

    // tex2DGrad: derivatives of one texel, four, 2 against 2*sqrt(2), zero, and
    // fractions for the record.
    static const float4 g[] = {
        {1.0f / M, 0, 0, 0}, {4.0f / M, 0, 0, 0.1f}, {0, 2.0f / M, 2.0f / M, 2.0f / M}, {0, 0, 0, 0},
        {3.0f / M, 0, 0, 0}, {0.3f / M, 0.2f / M, 0, 5.0f / M}, {100, 100, 0, 0},
    };
    const int ng = sizeof(g) / sizeof(g[0]);
    float4 *d_g = NULL;
    T(cudaMalloc(&d_g, sizeof(g)));
    NEED(d_g);
    T(cudaMemcpy(d_g, g, sizeof(g), cudaMemcpyHostToDevice));
    cudaTextureObject_t t = texture_over(cudaResourceTypeMipmappedArray, mip, cudaFilterModeLinear, cudaFilterModeLinear,
                                         LEVELS - 1);
    grad_samples<<<1, 32>>>(t, d_g, d_out, ng);
    T(cudaGetLastError());
    T(cudaMemcpy(out, d_out, ng * sizeof(float), cudaMemcpyDeviceToHost));
    // log2 of the longer derivative in texels: lods 0 and 2 exactly, and zero reads level 0.
    CHECK(out[0] == level_value(0));
    CHECK(out[1] == level_value(2));
    CHECK(out[3] == level_value(0));
    CHECK(out[6] == level_value(LEVELS - 1));
    print_bits("tex2DGrad", out, ng);
    T(cudaDestroyTextureObject(t));
    T(cudaFree(d_g));
    T(cudaFree(d_lods));
    T(cudaFree(d_out));
    T(cudaFreeMipmappedArray(mip));

    // For the record: whether the level count's clamp (the header: 1 + floor(log2(max(
    // width, height, depth)))) counts a layered array's layers, and the levels of a
    // mipmapped cubemap.
    cudaMipmappedArray_t layered = NULL, cubes = NULL;
    T(cudaMallocMipmappedArray(&layered, &fd, make_cudaExtent(4, 4, 16), 9, cudaArrayLayered));
    T(cudaMallocMipmappedArray(&cubes, &fd, make_cudaExtent(8, 8, 6), 9, cudaArrayCubemap));
    cudaMipmappedArray_t both[2] = {layered, cubes};
    for (int k = 0; k < 2; k++) {
        if (!both[k]) continue;
        int levels = 0;
        cudaExtent last = {0, 0, 0};
        for (int l = 0; l < 9; l++) {
            cudaArray_t a = NULL;
            if (cudaGetMipmappedArrayLevel(&a, both[k], l) != cudaSuccess) break;
            levels++;
            cudaArrayGetInfo(NULL, &last, NULL, a);
        }
        cudaGetLastError();
        OUT("%s: %d levels, the last %zu x %zu x %zu", k ? "cubemap 8x8" : "4x4, 16 layers", levels, last.width,
            last.height, last.depth);
        T(cudaFreeMipmappedArray(both[k]));
    }
    return 0;
}

int main(void) {
    if (cubemaps()) return 1;
    if (mipmaps()) return 1;
    return finish();
}
