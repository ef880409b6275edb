// A probe, for the H200's record: depth compare (`tex` and `tld4`'s operand f), which
// the C++ API does not expose: inline PTX. The PTX ISA: "each element fetched from
// texture is compared against value given in f operand. If comparison passes, result
// is 1.0; otherwise result is 0.0. These per-element comparison results are used for
// the filtering." Which comparison is the sampler's (its compare function), and CUDA's
// texture objects set none: what the H200 answers is undocumented. Recorded on the H200:
// the reference is ignored, `tex` gives the (filtered) texel in x and zeros, `tld4` the
// four texels, at references below, at and above each texel; the mock does the same.
#include "common.h"

// Thread i: tex.2d at (xs[i], 0.5) compared with refs[i]; then tld4.r at the same place.
__global__ void depth(float *out, cudaTextureObject_t t, const float *xs, const float *refs,
                      int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float r[4], g[4];
    asm volatile("tex.2d.v4.f32.f32 {%0, %1, %2, %3}, [%4, {%5, %6}], %7;"
                 : "=f"(r[0]), "=f"(r[1]), "=f"(r[2]), "=f"(r[3])
                 : "l"(t), "f"(xs[i]), "f"(0.5f), "f"(refs[i]));
    asm volatile("tld4.r.2d.v4.f32.f32 {%0, %1, %2, %3}, [%4, {%5, %6}], %7;"
                 : "=f"(g[0]), "=f"(g[1]), "=f"(g[2]), "=f"(g[3])
                 : "l"(t), "f"(xs[i]), "f"(0.5f), "f"(refs[i]));
    for (int k = 0; k < 4; k++) out[8 * i + k] = r[k];
    for (int k = 0; k < 4; k++) out[8 * i + 4 + k] = g[k];
}

static uint32_t bits(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

int main(void) {
    const int W = 4;
    float texels[W] = {0.25f, 0.5f, 0.75f, 1.0f};
    cudaChannelFormatDesc f1 = cudaCreateChannelDesc<float>();
    cudaArray_t a = NULL;
    T(cudaMallocArray(&a, &f1, W, 1, 0));
    NEED(a);
    T(cudaMemcpy2DToArray(a, 0, 0, texels, sizeof(texels), sizeof(texels), 1,
                          cudaMemcpyHostToDevice));
    // At texel 1's centre and a quarter past it, with references below, at and above.
    enum { N = 8 };
    float xs[N] = {1.5f, 1.5f, 1.5f, 1.5f, 1.75f, 1.75f, 1.75f, 1.75f};
    float refs[N] = {0.25f, 0.5f, 0.6f, 1.0f, 0.25f, 0.5f, 0.6f, 1.0f};
    float *dout, *dxs, *drefs;
    T(cudaMalloc(&dout, 8 * N * sizeof(float)));
    T(cudaMalloc(&dxs, sizeof(xs)));
    T(cudaMalloc(&drefs, sizeof(refs)));
    NEED(dout);
    NEED(dxs);
    NEED(drefs);
    T(cudaMemcpy(dxs, xs, sizeof(xs), cudaMemcpyHostToDevice));
    T(cudaMemcpy(drefs, refs, sizeof(refs), cudaMemcpyHostToDevice));
    for (int linear = 0; linear < 2; linear++) {
        cudaResourceDesc res;
        memset(&res, 0, sizeof(res));
        res.resType = cudaResourceTypeArray;
        res.res.array.array = a;
        cudaTextureDesc td;
        memset(&td, 0, sizeof(td));
        td.filterMode = linear ? cudaFilterModeLinear : cudaFilterModePoint;
        td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
        td.readMode = cudaReadModeElementType;
        cudaTextureObject_t t = 0;
        T(cudaCreateTextureObject(&t, &res, &td, NULL));
        depth<<<1, N>>>(dout, t, dxs, drefs, N);
        cudaError_t launched = T(cudaGetLastError());
        if (launched == cudaSuccess && T(cudaDeviceSynchronize()) == cudaSuccess) {
            float out[8 * N];
            T(cudaMemcpy(out, dout, sizeof(out), cudaMemcpyDeviceToHost));
            for (int i = 0; i < N; i++)
                OUT("%s x %g ref %g: tex %08x %08x %08x %08x, tld4.r %08x %08x %08x %08x",
                    linear ? "linear" : "point", xs[i], refs[i], bits(out[8 * i]),
                    bits(out[8 * i + 1]), bits(out[8 * i + 2]), bits(out[8 * i + 3]),
                    bits(out[8 * i + 4]), bits(out[8 * i + 5]), bits(out[8 * i + 6]),
                    bits(out[8 * i + 7]));
        } else {
            OUT("%s: depth compare did not run here", linear ? "linear" : "point");
        }
        T(cudaDestroyTextureObject(t));
    }
    T(cudaFree(dout));
    T(cudaFree(dxs));
    T(cudaFree(drefs));
    T(cudaFreeArray(a));
    return finish();
}
