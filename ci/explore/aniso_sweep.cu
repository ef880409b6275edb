// A record for fitting the H200's anisotropic filtering under tex2DGrad (maxAnisotropy
// 2 to 16). clients/runtime/texture_anisotropic.cu's 48 anisotropic samples fit no model
// whole: a research helper's best (session 19: the isotropic model's approximate lengths,
// N = min(ceil(Lmax/Lmin), K) probes at log2(Lmax/N) through the isotropic log2 table,
// the level's fraction sharpened, f' = clamp(floor(s (f - a)), 0, 256), s = 3/2, a = 42
// for K = 2 and s = 7/4, a = 54 for K = 4) matched 30 of 48, every one on the right pair
// of levels; the sharpening at K = 8 and 16 and where the probes sit were left open.
//
// Sections, one sample a line, the section's letter first:
//  F K a b value     a flat texture (level L holding L everywhere, linear filtering
//                    inside and between levels), dx = (a, 0), dy = (0, b) texels: the
//                    level of detail and its blend fraction as the hardware chose them,
//                    a in 1/16 steps from 1 to 64, b = a / r for ratios r of 1 to 24, K in
//                    1 2 4 8 16 (K 1: isotropic, the reference).
//  D K a r t value   as F with the vectors turned t degrees (0, 30, 45) and dy = dx
//                    turned 90 degrees scaled 1/r: whether the major axis' direction
//                    matters.
//  P K n a value     where the probes sit: level 0 only (a 64 x 64 texture, maxMipmap-
//                    LevelClamp 0), texel (x, y) = x (section P, n = 0) or a single
//                    texel of 256 at x = 32 on a zero row (n = 1), sampled at u = 32.5/64
//                    with dx = (a, 0), dy = (0, 1) texels, a from 1 to 16 in 1/4 steps: the
//                    mean position and spread of the probes along the major axis.
//   nvcc -arch=sm_90 ci/explore/aniso_sweep.cu -o aniso_sweep && ./aniso_sweep > aniso.txt
#include <cmath>
#include <cstdio>
#include <vector>

#include "mip_levels.cuh"

__global__ void grad(cudaTextureObject_t tex, const float4 *g, const float2 *uv, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2DGrad<float>(tex, uv[i].x, uv[i].y, make_float2(g[i].x, g[i].y), make_float2(g[i].z, g[i].w));
}

static cudaTextureObject_t texture(cudaMipmappedArray_t mip, int max_aniso, int last) {
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeMipmappedArray;
    res.res.mipmap.mipmap = mip;
    cudaTextureDesc td = {};
    td.normalizedCoords = 1;
    td.filterMode = cudaFilterModeLinear;
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.mipmapFilterMode = cudaFilterModeLinear;
    td.maxMipmapLevelClamp = (float)last;
    td.maxAnisotropy = max_aniso;
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t tex = 0;
    if (cudaCreateTextureObject(&tex, &res, &td, NULL) != cudaSuccess) return 0;
    return tex;
}

static float level_value(int l, int, int) { return (float)l; }
static float ramp_x(int, int x, int) { return (float)x; }
static float spike(int, int x, int y) { return x == 32 && y == 32 ? 256.0f : 0.0f; }

static bool run(cudaTextureObject_t tex, const std::vector<float4> &g, const std::vector<float2> &uv,
                std::vector<float> &out) {
    int n = (int)g.size();
    float4 *d_g = NULL;
    float2 *d_uv = NULL;
    float *d_out = NULL;
    if (cudaMalloc(&d_g, n * sizeof(float4)) != cudaSuccess || cudaMalloc(&d_uv, n * sizeof(float2)) != cudaSuccess ||
        cudaMalloc(&d_out, n * sizeof(float)) != cudaSuccess)
        return false;
    cudaMemcpy(d_g, g.data(), n * sizeof(float4), cudaMemcpyHostToDevice);
    cudaMemcpy(d_uv, uv.data(), n * sizeof(float2), cudaMemcpyHostToDevice);
    grad<<<(n + 127) / 128, 128>>>(tex, d_g, d_uv, d_out, n);
    out.resize(n);
    bool ok = cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess;
    cudaFree(d_g);
    cudaFree(d_uv);
    cudaFree(d_out);
    return ok;
}

int main() {
    const int W = 256, LEVELS = 9;
    const int ks[] = {1, 2, 4, 8, 16};
    cudaMipmappedArray_t flat = levels(W, LEVELS, level_value);
    if (!flat) return 1;
    std::vector<float4> g;
    std::vector<float2> uv;
    std::vector<float> out;
    printf("# F K a b value (flat: level L holds L; dx = (a, 0), dy = (0, b) texels of 256)\n");
    const float ratios[] = {1, 1.25f, 1.5f, 2, 2.5f, 3, 3.5f, 4, 5, 6, 7, 8, 10, 12, 16, 20, 24};
    for (int k : ks) {
        cudaTextureObject_t tex = texture(flat, k, LEVELS - 1);
        if (!tex) return 2;
        g.clear();
        uv.clear();
        for (int s = 16; s <= 1024; s++)
            for (float r : ratios) {
                float a = s / 16.0f;
                g.push_back(make_float4(a / W, 0, 0, a / r / W));
                uv.push_back(make_float2(0.5f, 0.5f));
            }
        if (!run(tex, g, uv, out)) return 3;
        for (size_t i = 0; i < g.size(); i++)
            printf("F %d %.9g %.9g %.9g\n", k, g[i].x * W, g[i].w * W, out[i]);
        // D: the same footprints turned.
        g.clear();
        uv.clear();
        std::vector<float> meta;
        for (int t : {0, 30, 45})
            for (int s = 16; s <= 256; s += 4)
                for (float r : {2.0f, 3.0f, 5.0f, 8.0f, 16.0f}) {
                    double tr = t * M_PI / 180;
                    float a = s / 16.0f;
                    g.push_back(make_float4((float)(a * cos(tr) / W), (float)(a * sin(tr) / W),
                                            (float)(-a / r * sin(tr) / W), (float)(a / r * cos(tr) / W)));
                    uv.push_back(make_float2(0.5f, 0.5f));
                    meta.insert(meta.end(), {a, r, (float)t});
                }
        if (!run(tex, g, uv, out)) return 4;
        for (size_t i = 0; i < g.size(); i++)
            printf("D %d %.9g %g %g %.9g\n", k, meta[3 * i], meta[3 * i + 1], meta[3 * i + 2], out[i]);
        cudaDestroyTextureObject(tex);
    }
    // P: where the probes sit, on level 0 only.
    const int PW = 64;
    printf("# P K n a value (64 x 64, level 0 only: n 0 texel (x, y) = x, n 1 a texel of 256 at (32, 32))\n");
    for (int n = 0; n < 2; n++) {
        cudaMipmappedArray_t m = levels(PW, 1, n ? spike : ramp_x);
        if (!m) return 5;
        for (int k : ks) {
            cudaTextureObject_t tex = texture(m, k, 0);
            if (!tex) return 6;
            g.clear();
            uv.clear();
            for (int s = 4; s <= 64; s++) {
                float a = s / 4.0f;
                g.push_back(make_float4(a / PW, 0, 0, 1.0f / PW));
                uv.push_back(make_float2(32.5f / PW, 32.5f / PW));
            }
            if (!run(tex, g, uv, out)) return 7;
            for (size_t i = 0; i < g.size(); i++) printf("P %d %d %.9g %.9g\n", k, n, g[i].x * PW, out[i]);
            cudaDestroyTextureObject(tex);
        }
    }
    cudaError_t e = cudaDeviceSynchronize();
    fprintf(stderr, "%s\n", cudaGetErrorString(e));
    return e != cudaSuccess;
}
