// A denser record than grad_lod.cu's for fitting how the H200 combines tex2DGrad's two
// gradient vectors into one level of detail (ptx/src/texture.rs, grad_lod: single vectors
// fit bit for bit, 194 pairs of grad_lod.txt's 3328 samples do not), and how it blends two
// linearly filtered mip levels (trilinear: the H200's results were multiples of 1/256,
// clients/runtime/goldens/differences.txt, texture_anisotropic).
//
// Sections, one sample a line, the section's letter first:
//  G x1 y1 x2 y2 value   dx = (x1, y1), dy = (x2, y2) in whole texels of level 0 (exact
//                        inputs): x1 0..12, y1 0..x1, x2 -12..12, y2 0..12.
//  L x value            dx = (x, 0), dy = 0: x = 1 + k/1024 and 4 + k/256 for k 0..1023,
//                        every 8-bit significand four times (how the length is cut,
//                        and the log2 of each significand).
//  A a b phi t value     dx of length a at angle t degrees, dy of length b at t + phi
//                        (texels; built in double, then float, as grad_lod.cu does):
//                        t 0..45 step 3, phi 0..180 step 3, a 1.7 and 3.1, b/a in RATIOS.
//  E a phi t value       as A with b = a, a = 2^(k/16) for k 0..64, phi step 10, t 0 20 45.
// G, A and E sample a 256 x 256 float texture of 9 levels, level L holding L everywhere,
// point filtering inside a level and linear between levels: the value is the level of
// detail the hardware chose (clamped to [0, 8]), through its blend of L and L + 1.
//  T filter u v lod value  tex2DLod of a 64 x 64 float texture of 7 levels, texel (x, y)
//                        of level L holding (x * 73 + y * 151 + L * 199) % 256, at the
//                        level of detail k/256 for k 0..767 (levels 0 to 3), filter 1
//                        linear inside levels, 0 point (both linear between levels), at
//                        the coordinates in UV (normalized, clamp): how the two levels'
//                        filtered values (and their weights) are blended and rounded.
//   nvcc -arch=sm_90 ci/explore/grad_lod2.cu -o grad_lod2 && ./grad_lod2 > grad_lod2.txt
#include <cmath>
#include <cstdio>
#include <vector>

#include "mip_levels.cuh"

__global__ void grad(cudaTextureObject_t tex, const float4 *g, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex2DGrad<float>(tex, 0.5f, 0.5f, make_float2(g[i].x, g[i].y), make_float2(g[i].z, g[i].w));
}

__global__ void at_level(cudaTextureObject_t tex, const float4 *q, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex2DLod<float>(tex, q[i].x, q[i].y, q[i].z);
}

static cudaTextureObject_t texture(cudaMipmappedArray_t mip, cudaTextureFilterMode filter, int last) {
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeMipmappedArray;
    res.res.mipmap.mipmap = mip;
    cudaTextureDesc td = {};
    td.normalizedCoords = 1;
    td.filterMode = filter;
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.mipmapFilterMode = cudaFilterModeLinear;
    td.maxMipmapLevelClamp = last;
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t tex = 0;
    if (cudaCreateTextureObject(&tex, &res, &td, NULL) != cudaSuccess) return 0;
    return tex;
}

static float level_value(int l, int, int) { return (float)l; }
static float mixed_value(int l, int x, int y) { return (float)((x * 73 + y * 151 + l * 199) % 256); }

// Runs `kernel` over `in`, the results in `out`; false on any error.
static bool run(void (*kernel)(cudaTextureObject_t, const float4 *, float *, int), cudaTextureObject_t tex,
                const std::vector<float4> &in, std::vector<float> &out) {
    int n = (int)in.size();
    float4 *d_in = NULL;
    float *d_out = NULL;
    if (cudaMalloc(&d_in, n * sizeof(float4)) != cudaSuccess || cudaMalloc(&d_out, n * sizeof(float)) != cudaSuccess)
        return false;
    cudaMemcpy(d_in, in.data(), n * sizeof(float4), cudaMemcpyHostToDevice);
    kernel<<<(n + 127) / 128, 128>>>(tex, d_in, d_out, n);
    out.resize(n);
    bool ok = cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess;
    cudaFree(d_in);
    cudaFree(d_out);
    return ok;
}

int main() {
    const int W = 256;
    cudaMipmappedArray_t flat = levels(W, 9, level_value);
    cudaTextureObject_t lod = flat ? texture(flat, cudaFilterModePoint, 8) : 0;
    if (!lod) return 1;

    // G: whole-texel gradients.
    std::vector<float4> g;
    std::vector<float> out;
    for (int x1 = 0; x1 <= 12; x1++)
        for (int y1 = 0; y1 <= x1; y1++)
            for (int x2 = -12; x2 <= 12; x2++)
                for (int y2 = 0; y2 <= 12; y2++)
                    g.push_back(make_float4((float)x1 / W, (float)y1 / W, (float)x2 / W, (float)y2 / W));
    if (!run(grad, lod, g, out)) return 2;
    printf("# G x1 y1 x2 y2 value (dx, dy in texels)\n");
    for (size_t i = 0; i < g.size(); i++)
        printf("G %g %g %g %g %.9g\n", g[i].x * W, g[i].y * W, g[i].z * W, g[i].w * W, out[i]);

    // L: single lengths along x.
    g.clear();
    for (int e = 0; e <= 2; e += 2)
        for (int k = 0; k < 1024; k++) g.push_back(make_float4((float)(1 << e) * (1 + k / 1024.0f) / W, 0, 0, 0));
    if (!run(grad, lod, g, out)) return 6;
    printf("# L x value (dx = (x, 0) texels, dy = 0)\n");
    for (size_t i = 0; i < g.size(); i++) printf("L %.9g %.9g\n", g[i].x * W, out[i]);

    // A and E: lengths and angles.
    const float as[] = {1.7f, 3.1f};
    const float ratios[] = {1, 0.9f, 0.75f, 0.6f, 0.5f, 0.35f};
    std::vector<float> meta;
    auto polar = [&](float a, float b, int phi, int t) {
        double tr = t * M_PI / 180, pr = (t + phi) * M_PI / 180;
        g.push_back(make_float4(a * cos(tr) / W, a * sin(tr) / W, b * cos(pr) / W, b * sin(pr) / W));
        meta.insert(meta.end(), {a, b, (float)phi, (float)t});
    };
    g.clear();
    for (float a : as)
        for (float r : ratios)
            for (int phi = 0; phi <= 180; phi += 3)
                for (int t = 0; t <= 45; t += 3) polar(a, a * r, phi, t);
    int na = (int)g.size();
    for (int k = 0; k <= 64; k++)
        for (int phi = 0; phi <= 180; phi += 10)
            for (int t : {0, 20, 45}) {
                float a = (float)exp2(k / 16.0);
                polar(a, a, phi, t);
            }
    if (!run(grad, lod, g, out)) return 3;
    printf("# A a b phi t value (a, b: lengths in texels; phi: angle between; t: rotation)\n");
    for (int i = 0; i < na; i++)
        printf("A %.9g %.9g %g %g %.9g\n", meta[4 * i], meta[4 * i + 1], meta[4 * i + 2], meta[4 * i + 3], out[i]);
    printf("# E a phi t value (b = a)\n");
    for (size_t i = na; i < g.size(); i++)
        printf("E %.9g %g %g %.9g\n", meta[4 * i], meta[4 * i + 2], meta[4 * i + 3], out[i]);

    // T: trilinear blends at explicit levels of detail.
    const int T = 64;
    cudaMipmappedArray_t mixed = levels(T, 7, mixed_value);
    const float uv[][2] = {{0.3712f, 0.6191f}, {0.1049f, 0.8377f}, {0.5533f, 0.2468f}, {0.7291f, 0.4402f},
                           {0.2217f, 0.0953f}, {0.9136f, 0.7709f}, {0.4581f, 0.5219f}, {0.6664f, 0.3338f}};
    printf("# T filter u v lod value (filter 1 linear, 0 point; 64 x 64, level L texel (x, y) = "
           "(x * 73 + y * 151 + L * 199) %% 256)\n");
    for (int filter = 1; filter >= 0; filter--) {
        cudaTextureObject_t tex = mixed ? texture(mixed, filter ? cudaFilterModeLinear : cudaFilterModePoint, 6) : 0;
        if (!tex) return 4;
        g.clear();
        int places = filter ? 8 : 2;
        for (int p = 0; p < places; p++)
            for (int k = 0; k < 768; k++) g.push_back(make_float4(uv[p][0], uv[p][1], k / 256.0f, 0));
        if (!run(at_level, tex, g, out)) return 5;
        for (size_t i = 0; i < g.size(); i++)
            printf("T %d %.9g %.9g %.9g %.9g\n", filter, g[i].x, g[i].y, g[i].z, out[i]);
        cudaDestroyTextureObject(tex);
    }
    cudaError_t e = cudaDeviceSynchronize();
    fprintf(stderr, "%s\n", cudaGetErrorString(e));
    return e != cudaSuccess;
}
