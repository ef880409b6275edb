// A probe, for the H200's record: tex2DGrad (tex.grad) over a mipmapped texture with
// cudaTextureDesc::maxAnisotropy 1 to 16, and texCubemapGrad (tex.grad.cube). The CUDA
// documents name maxAnisotropy and no formula: how many samples, where, at which level.
// The mock takes EXT_texture_filter_anisotropic's footprint (N = min(ceil(Pmax/Pmin),
// maxAnisotropy) samples along the longer derivative, at level log2(Pmax/N)); this
// program prints, bit for bit, what each gives, and a sweep of isotropic gradients to
// settle tex.grad's level of detail, which the H200 computes by an undocumented formula
// (clients/runtime/goldens/differences.txt, cubemap_mipmap). Checked: a zero gradient
// reads level 0 whatever the anisotropy, and maxAnisotropy 0 and 1 agree.
#include "common.h"

#define M 16
#define LEVELS 5

// Level l, texel (x, y): the level in the hundreds, x and y below (exact under any of
// the 1/256 weights of filtering).
static float texel_value(int l, int x, int y) { return (float)(100 * l + 4 * x + y); }

// Each sample's derivatives: (dPdx.x, dPdx.y, dPdy.x, dPdy.y), in texels of level 0.
__global__ void grad_samples(cudaTextureObject_t tex, const float4 *g, float *out, int n, float u, float v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex2DGrad<float>(tex, u, v, make_float2(g[i].x / M, g[i].y / M), make_float2(g[i].z / M, g[i].w / M));
}

// A direction and its derivatives along x and y, in two float4s and one float4.
__global__ void cube_grad_samples(cudaTextureObject_t tex, const float4 *g, float *out, int n) {
    int i = threadIdx.x;
    if (i < n) {
        float4 d = g[3 * i], dx = g[3 * i + 1], dy = g[3 * i + 2];
        out[i] = texCubemapGrad<float>(tex, d.x, d.y, d.z, dx, dy);
    }
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

static cudaTextureObject_t texture_over(cudaMipmappedArray_t mip, unsigned aniso, float max_level) {
    cudaResourceDesc res;
    memset(&res, 0, sizeof(res));
    res.resType = cudaResourceTypeMipmappedArray;
    res.res.mipmap.mipmap = mip;
    cudaTextureDesc td;
    memset(&td, 0, sizeof(td));
    td.normalizedCoords = 1;
    td.filterMode = cudaFilterModeLinear;
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = cudaAddressModeClamp;
    td.readMode = cudaReadModeElementType;
    td.mipmapFilterMode = cudaFilterModeLinear;
    td.maxMipmapLevelClamp = max_level;
    td.maxAnisotropy = aniso;
    cudaTextureObject_t tex = 0;
    T(cudaCreateTextureObject(&tex, &res, &td, NULL));
    return tex;
}

static int fill_levels(cudaMipmappedArray_t mip, int n0, int levels, int faces, int flat) {
    for (int l = 0; l < levels; l++) {
        cudaArray_t level = NULL;
        T(cudaGetMipmappedArrayLevel(&level, mip, l));
        NEED(level);
        int n = n0 >> l;
        static float host[6 * M * M];
        for (int f = 0; f < faces; f++)
            for (int y = 0; y < n; y++)
                for (int x = 0; x < n; x++)
                    host[(f * n + y) * n + x] = flat ? (float)(10 * (1 << l) + f) : texel_value(l, x, y);
        cudaMemcpy3DParms p;
        memset(&p, 0, sizeof(p));
        p.srcPtr = make_cudaPitchedPtr(host, n * sizeof(float), n, n);
        p.dstArray = level;
        p.extent = make_cudaExtent(n, n, faces);
        p.kind = cudaMemcpyHostToDevice;
        T(cudaMemcpy3D(&p));
    }
    return 0;
}

int main(void) {
    cudaChannelFormatDesc fd = cudaCreateChannelDesc<float>();
    cudaMipmappedArray_t ramp = NULL, flat = NULL, cube = NULL;
    T(cudaMallocMipmappedArray(&ramp, &fd, make_cudaExtent(M, M, 0), LEVELS, 0));
    T(cudaMallocMipmappedArray(&flat, &fd, make_cudaExtent(M, M, 0), LEVELS, 0));
    T(cudaMallocMipmappedArray(&cube, &fd, make_cudaExtent(M, M, 6), LEVELS, cudaArrayCubemap));
    NEED(ramp);
    NEED(flat);
    NEED(cube);
    if (fill_levels(ramp, M, LEVELS, 1, 0) || fill_levels(flat, M, LEVELS, 1, 1) || fill_levels(cube, M, LEVELS, 6, 1))
        return 1;

    // Anisotropic footprints (4:1, 8:1, 2.5:1, 16:1, along x, y and a diagonal), an
    // isotropic one, a zero one, one with a zero minor axis.
    static const float4 aniso_g[] = {
        {4, 0, 0, 1},       {8, 0, 0, 1},     {0, 1, 5, 0},   {2.5f, 0, 0, 1},  {16, 0, 0, 1},
        {2.83f, 2.83f, -0.5f, 0.5f}, {2, 0, 0, 2}, {0, 0, 0, 0}, {6, 0, 0, 0},   {1, 0.5f, 0.25f, 3},
        {12, 3, -1, 4},    {0.5f, 0, 0, 0.125f},
    };
    const int na = sizeof(aniso_g) / sizeof(aniso_g[0]);
    // Isotropic gradients for the level of detail (over levels that each hold one value,
    // so a sample shows only the blend): lengths 1 to 9 along x in quarter texels, the
    // length 3 turned in steps of 15 degrees, and (3, 0) against (0, b) for b = 0 to 3.
    enum { NS = 33 + 12 + 7 };
    static float4 sweep[NS];
    for (int i = 0; i < 33; i++) sweep[i] = make_float4(1 + i * 0.25f, 0, 0, 0);
    for (int i = 0; i < 12; i++) {
        float a = i * 3.14159265f / 12;
        sweep[33 + i] = make_float4(3 * cosf(a), 3 * sinf(a), 0, 0);
    }
    for (int i = 0; i < 7; i++) sweep[45 + i] = make_float4(3, 0, 0, i * 0.5f);

    float4 *d_g = NULL;
    float *d_out = NULL;
    T(cudaMalloc(&d_g, sizeof(sweep) + sizeof(aniso_g)));
    T(cudaMalloc(&d_out, 64 * sizeof(float)));
    NEED(d_g);
    NEED(d_out);
    static float out[6][64];
    const unsigned anisos[] = {0, 1, 2, 4, 8, 16};
    T(cudaMemcpy(d_g, aniso_g, sizeof(aniso_g), cudaMemcpyHostToDevice));
    for (int k = 0; k < 6; k++) {
        cudaTextureObject_t t = texture_over(ramp, anisos[k], LEVELS - 1);
        grad_samples<<<1, 32>>>(t, d_g, d_out, na, 0.53f, 0.47f);
        T(cudaGetLastError());
        T(cudaMemcpy(out[k], d_out, na * sizeof(float), cudaMemcpyDeviceToHost));
        char what[64];
        snprintf(what, sizeof(what), "tex2DGrad, maxAnisotropy %u", anisos[k]);
        print_bits(what, out[k], na);
        T(cudaDestroyTextureObject(t));
    }
    int zero_ok = 0, same01 = 0;
    for (int k = 0; k < 6; k++) zero_ok += out[k][7] == out[0][7];
    for (int i = 0; i < na; i++) same01 += out[0][i] == out[1][i];
    OUT("a zero gradient reads alike at every anisotropy: %d of 6", zero_ok);
    OUT("maxAnisotropy 0 and 1 agree: %d of %d", same01, na);
    CHECK(zero_ok == 6);
    CHECK(same01 == na);

    T(cudaMemcpy(d_g, sweep, sizeof(sweep), cudaMemcpyHostToDevice));
    {
        cudaTextureObject_t t = texture_over(flat, 1, LEVELS - 1);
        grad_samples<<<2, 32>>>(t, d_g, d_out, NS, 0.5f, 0.5f);
        T(cudaGetLastError());
        static float s[NS];
        T(cudaMemcpy(s, d_out, sizeof(s), cudaMemcpyDeviceToHost));
        print_bits("isotropic level-of-detail sweep", s, NS);
        T(cudaDestroyTextureObject(t));
    }

    // texCubemapGrad: a direction on each face with derivatives across it, along its
    // major axis, and zero.
    static const float4 cube_g[] = {
        {0.2f, -1, 0.3f, 0}, {0.125f, 0, 0, 0}, {0, 0, 0, 0},
        {0.2f, -1, 0.3f, 0}, {0.5f, 0, 0, 0}, {0, 0, 0.25f, 0},
        {0.2f, -1, 0.3f, 0}, {0, 4, 0, 0}, {0, 0, 0, 0},
        {1, 0.4f, -0.2f, 0}, {0, 0.3f, 0, 0}, {0, 0, 0.6f, 0},
        {-0.3f, 0.1f, -2, 0}, {1, 0, 0, 0}, {0, 1, 0, 0},
        {0.6f, 1, 0.6f, 0}, {0.2f, 0.2f, 0.2f, 0}, {0, 0, 0, 0},
        {0, 0, 0, 0}, {1, 1, 1, 0}, {1, 1, 1, 0},
    };
    const int nc = sizeof(cube_g) / sizeof(cube_g[0]) / 3;
    T(cudaMemcpy(d_g, cube_g, sizeof(cube_g), cudaMemcpyHostToDevice));
    {
        cudaResourceDesc res;
        memset(&res, 0, sizeof(res));
        res.resType = cudaResourceTypeMipmappedArray;
        res.res.mipmap.mipmap = cube;
        cudaTextureDesc td;
        memset(&td, 0, sizeof(td));
        td.normalizedCoords = 1;
        td.filterMode = cudaFilterModeLinear;
        td.readMode = cudaReadModeElementType;
        td.mipmapFilterMode = cudaFilterModeLinear;
        td.maxMipmapLevelClamp = LEVELS - 1;
        cudaTextureObject_t t = 0;
        T(cudaCreateTextureObject(&t, &res, &td, NULL));
        cube_grad_samples<<<1, 32>>>(t, d_g, d_out, nc);
        T(cudaGetLastError());
        static float c[8];
        T(cudaMemcpy(c, d_out, nc * sizeof(float), cudaMemcpyDeviceToHost));
        print_bits("texCubemapGrad", c, nc);
        T(cudaDestroyTextureObject(t));
    }
    T(cudaFree(d_g));
    T(cudaFree(d_out));
    T(cudaFreeMipmappedArray(ramp));
    T(cudaFreeMipmappedArray(flat));
    T(cudaFreeMipmappedArray(cube));
    return finish();
}
