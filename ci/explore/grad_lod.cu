// How the H200 turns tex2DGrad's two gradient vectors into a level of detail, for
// fitting the mock's (clients/runtime/goldens/differences.txt: the isotropic sweep of
// texture_anisotropic fits `max + K*min` of the axes, cubemap_mipmap's (0,2)/(2,2) pair
// does not). A 256 x 256 float texture of 9 levels, level L holding L everywhere, point
// filtering inside a level and linear between levels: a sample's value is the level of
// detail the hardware chose (clamped to [0, 8]). Gradients: dx of length a at angle t,
// dy of length b at angle t + phi (texels). Prints "a b phi t value" per sample.
//   nvcc -arch=sm_90 ci/explore/grad_lod.cu -o grad_lod && ./grad_lod
#include <cmath>
#include <cstdio>
#include <vector>

__global__ void lod(cudaTextureObject_t tex, const float4 *g, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex2DGrad<float>(tex, 0.5f, 0.5f, make_float2(g[i].x, g[i].y), make_float2(g[i].z, g[i].w));
}

int main() {
    const int W = 256, LEVELS = 9;
    cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
    cudaMipmappedArray_t mip;
    if (cudaMallocMipmappedArray(&mip, &f, make_cudaExtent(W, W, 0), LEVELS) != cudaSuccess) return 1;
    for (int l = 0; l < LEVELS; l++) {
        cudaArray_t a;
        cudaGetMipmappedArrayLevel(&a, mip, l);
        int w = W >> l;
        std::vector<float> v(w * w, (float)l);
        cudaMemcpy2DToArray(a, 0, 0, v.data(), w * 4, w * 4, w, cudaMemcpyHostToDevice);
    }
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeMipmappedArray;
    res.res.mipmap.mipmap = mip;
    cudaTextureDesc td = {};
    td.normalizedCoords = 1;
    td.filterMode = cudaFilterModePoint;
    td.mipmapFilterMode = cudaFilterModeLinear;
    td.maxMipmapLevelClamp = LEVELS - 1;
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t tex;
    if (cudaCreateTextureObject(&tex, &res, &td, NULL) != cudaSuccess) return 2;
    const float as[] = {1, 1.5f, 2, 3, 4, 6, 8, 16};
    const float bs[] = {0, 0.5f, 1, 2, 3, 4, 6, 8};
    std::vector<float4> g;
    std::vector<float> meta;
    for (float a : as)
        for (float b : bs)
            for (int phi = 0; phi <= 180; phi += 15)
                for (int t = 0; t <= 45; t += 15) {
                    double tr = t * M_PI / 180, pr = (t + phi) * M_PI / 180;
                    g.push_back(make_float4(a * cos(tr) / W, a * sin(tr) / W, b * cos(pr) / W, b * sin(pr) / W));
                    meta.insert(meta.end(), {a, b, (float)phi, (float)t});
                }
    int n = (int)g.size();
    float4 *dg;
    float *dout;
    cudaMalloc(&dg, n * sizeof(float4));
    cudaMalloc(&dout, n * sizeof(float));
    cudaMemcpy(dg, g.data(), n * sizeof(float4), cudaMemcpyHostToDevice);
    lod<<<(n + 127) / 128, 128>>>(tex, dg, dout, n);
    std::vector<float> out(n);
    if (cudaMemcpy(out.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) return 3;
    printf("# a b phi t value (a, b: gradient lengths in texels; phi: angle between them; t: rotation)\n");
    for (int i = 0; i < n; i++)
        printf("%g %g %g %g %.9g\n", meta[4 * i], meta[4 * i + 1], meta[4 * i + 2], meta[4 * i + 3], out[i]);
    return 0;
}
