// A mipmapped float array of `count` levels, level 0 `w` x `w`, texel (x, y) of level l
// holding value(l, x, y): shared by ci/explore/grad_lod2.cu and aniso_sweep.cu.
#pragma once
#include <vector>

static cudaMipmappedArray_t levels(int w, int count, float (*value)(int l, int x, int y)) {
    cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
    cudaMipmappedArray_t mip = NULL;
    if (cudaMallocMipmappedArray(&mip, &f, make_cudaExtent(w, w, 0), count) != cudaSuccess) return NULL;
    for (int l = 0; l < count; l++) {
        cudaArray_t a;
        cudaGetMipmappedArrayLevel(&a, mip, l);
        int n = w >> l;
        std::vector<float> v(n * n);
        for (int y = 0; y < n; y++)
            for (int x = 0; x < n; x++) v[y * n + x] = value(l, x, y);
        cudaMemcpy2DToArray(a, 0, 0, v.data(), n * 4, n * 4, n, cudaMemcpyHostToDevice);
    }
    return mip;
}
