// What texture hardware does where the CUDA programming guide leaves it open, printed
// bit for bit so that the H200's transcript is a record to compare the mock with: the
// rounding of linear filtering's 1.8 fixed-point weight, the order of the bilinear sum,
// each address mode at coordinates past the edges (normalized and not), the conversion
// of 8- and 16-bit integers to normalized floats, what absent channels read, half
// floats, gathers (tld4), layered textures, texture fetches from linear and pitch-linear
// memory, and surface reads past the edge with each boundary mode.
// Each section also checks the H200's rules as recorded (written again here, as the mock
// follows them); a CHECK FAILED says where a platform departs from them.
#include "common.h"
#include <math.h>

__global__ void fetch1d(float4 *out, cudaTextureObject_t t, const float *xs, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<float4>(t, xs[i]);
}

__global__ void fetch2d(float4 *out, cudaTextureObject_t t, const float2 *xy, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float4>(t, xy[i].x, xy[i].y);
}

__global__ void gather2d(float4 *out, cudaTextureObject_t t, const float2 *xy, int n, int comp) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    switch (comp) {
        case 0: out[i] = tex2Dgather<float4>(t, xy[i].x, xy[i].y, 0); break;
        default: out[i] = tex2Dgather<float4>(t, xy[i].x, xy[i].y, 1); break;
    }
}

__global__ void layered2d(float *out, cudaTextureObject_t t, const float2 *xy, int n, int layers) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2DLayered<float>(t, xy[i].x, xy[i].y, i % (layers + 2) - 1);
}

__global__ void fetch_linear(int *out, cudaTextureObject_t t, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<int>(t, i - 2);
}

__global__ void surf_edges(int *out, cudaSurfaceObject_t s, int w) {
    out[0] = surf2Dread<int>(s, (w + 3) * 4, 1, cudaBoundaryModeZero);
    out[1] = surf2Dread<int>(s, (w + 3) * 4, 1, cudaBoundaryModeClamp);
    out[2] = surf2Dread<int>(s, -8, -1, cudaBoundaryModeClamp);
    surf2Dwrite(777, s, (w + 5) * 4, 0, cudaBoundaryModeZero);  // dropped
}

static uint32_t bits(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

// The H200's rules, for the checks: a texel-space coordinate less half a texel, rounded
// to 1/256 (halves up), gives linear filtering's weight of the upper texel, A/256.
static float weight(float t) { return roundf((t - floorf(t)) * 256.0f) / 256.0f; }

// Bilinear corners weigh multiples of 1/256: the upper-upper corner A*B/256 rounded (halves
// up), the others what is left of A, B and 256; the weighted sum is rounded once.
static float bilinear4(int a, int b, const float v[4]) {
    int ab = (a * b + 128) >> 8;
    double s = (double)(256 - a - b + ab) * v[0] + (double)(a - ab) * v[1] +
               (double)(b - ab) * v[2] + (double)ab * v[3];
    return (float)(s / 256.0);
}

static cudaTextureObject_t texture_of(cudaArray_t a, int filter, int mode, int normalized,
                                      int read, float border) {
    cudaResourceDesc res;
    memset(&res, 0, sizeof(res));
    res.resType = cudaResourceTypeArray;
    res.res.array.array = a;
    cudaTextureDesc td;
    memset(&td, 0, sizeof(td));
    td.filterMode = (cudaTextureFilterMode)filter;
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = (cudaTextureAddressMode)mode;
    td.normalizedCoords = normalized;
    td.readMode = (cudaTextureReadMode)read;
    for (int k = 0; k < 4; k++) td.borderColor[k] = border;
    cudaTextureObject_t t = 0;
    T(cudaCreateTextureObject(&t, &res, &td, NULL));
    return t;
}

static float4 *d4, h4[1024];
static float *dxs;
static float2 *dxy;

static void run1d(cudaTextureObject_t t, const float *xs, int n) {
    cudaMemcpy(dxs, xs, n * sizeof(float), cudaMemcpyHostToDevice);
    fetch1d<<<(n + 127) / 128, 128>>>(d4, t, dxs, n);
    T(cudaMemcpy(h4, d4, n * sizeof(float4), cudaMemcpyDeviceToHost));
}

static void run2d(cudaTextureObject_t t, const float2 *xy, int n) {
    cudaMemcpy(dxy, xy, n * sizeof(float2), cudaMemcpyHostToDevice);
    fetch2d<<<(n + 127) / 128, 128>>>(d4, t, dxy, n);
    T(cudaMemcpy(h4, d4, n * sizeof(float4), cudaMemcpyDeviceToHost));
}

int main(void) {
    T(cudaMalloc(&d4, sizeof(h4)));
    T(cudaMalloc(&dxs, 1024 * sizeof(float)));
    T(cudaMalloc(&dxy, 1024 * sizeof(float2)));
    NEED(d4);
    NEED(dxs);
    NEED(dxy);
    cudaChannelFormatDesc f1 = cudaCreateChannelDesc<float>();

    // ---- 1. the weight: texels 0 and 1, sampled between their centres
    {
        float ramp[2] = {0.0f, 1.0f};
        cudaArray_t a = NULL;
        T(cudaMallocArray(&a, &f1, 2, 0, 0));
        NEED(a);
        T(cudaMemcpy2DToArray(a, 0, 0, ramp, sizeof(ramp), sizeof(ramp), 1,
                              cudaMemcpyHostToDevice));
        cudaTextureObject_t t = texture_of(a, cudaFilterModeLinear, cudaAddressModeClamp, 0,
                                           cudaReadModeElementType, 0);
        // At k/256 + 1/512 (half a step: where rounding and truncation differ) and at
        // k/256 + 1/1024 (a quarter).
        float xs[512];
        for (int k = 0; k < 256; k++) {
            xs[k] = 0.5f + (k + 0.5f) / 256.0f;
            xs[256 + k] = 0.5f + (k + 0.25f) / 256.0f;
        }
        run1d(t, xs, 512);
        int model_off = 0;
        for (int half = 0; half < 2; half++) {
            OUT("weights x 256 at k/256 + %s (k = 0..255):", half ? "1/1024" : "1/512");
            for (int line = 0; line < 16; line++) {
                char buf[256];
                int n = 0;
                for (int k = 0; k < 16; k++) {
                    int i = half * 256 + line * 16 + k;
                    n += snprintf(buf + n, sizeof(buf) - n, " %g", h4[i].x * 256.0f);
                    if (h4[i].x != weight(xs[i] - 0.5f)) model_off++;
                }
                OUT("%s", buf);
            }
        }
        OUT("weights off the model: %d of 512", model_off);
        CHECK(model_off == 0);
        T(cudaDestroyTextureObject(t));
        T(cudaFreeArray(a));
    }

    // ---- 2. the bilinear sum's order and rounding: texels whose sums round
    {
        float v[4] = {0.1f, 0.7f, 1.3f, 2.9f};
        cudaArray_t a = NULL;
        T(cudaMallocArray(&a, &f1, 2, 2, 0));
        NEED(a);
        T(cudaMemcpy2DToArray(a, 0, 0, v, 8, 8, 2, cudaMemcpyHostToDevice));
        cudaTextureObject_t t = texture_of(a, cudaFilterModeLinear, cudaAddressModeClamp, 0,
                                           cudaReadModeElementType, 0);
        float2 xy[8];
        for (int k = 0; k < 8; k++) xy[k] = make_float2(0.5f + (37 + 29 * k) / 256.0f,
                                                       0.5f + (201 - 23 * k) / 256.0f);
        run2d(t, xy, 8);
        int model_off = 0;
        for (int k = 0; k < 8; k++) {
            int a_ = (int)(weight(xy[k].x - 0.5f) * 256.0f), b_ = (int)(weight(xy[k].y - 0.5f) * 256.0f);
            float m = bilinear4(a_, b_, v);
            OUT("bilinear at (%d/256, %d/256): %08x (model %08x)", 37 + 29 * k, 201 - 23 * k,
                bits(h4[k].x), bits(m));
            if (bits(h4[k].x) != bits(m)) model_off++;
        }
        CHECK(model_off == 0);
        T(cudaDestroyTextureObject(t));
        T(cudaFreeArray(a));
    }

    // ---- 3. address modes, point sampling, normalized and not; border colour -1
    {
        float v[4] = {10.0f, 11.0f, 12.0f, 13.0f};
        cudaArray_t a = NULL;
        T(cudaMallocArray(&a, &f1, 4, 0, 0));
        NEED(a);
        T(cudaMemcpy2DToArray(a, 0, 0, v, 16, 16, 1, cudaMemcpyHostToDevice));
        const char *names[4] = {"wrap", "clamp", "mirror", "border"};
        float xn[12] = {-1.3f, -0.6f, -0.1f, 0.05f, 0.4f, 0.99f, 1.0f, 1.1f, 1.6f, 2.3f, 3.7f, -2.2f};
        float xu[12] = {-5.0f, -0.5f, 0.0f, 0.99f, 3.5f, 3.99f, 4.0f, 4.5f, 6.0f, 9.0f, 17.0f, -9.0f};
        for (int norm = 1; norm >= 0; norm--) {
            for (int mode = 0; mode < 4; mode++) {
                cudaTextureObject_t t = texture_of(a, cudaFilterModePoint, mode, norm,
                                                   cudaReadModeElementType, -1.0f);
                run1d(t, norm ? xn : xu, 12);
                char buf[256];
                int n = 0;
                for (int k = 0; k < 12; k++) n += snprintf(buf + n, sizeof(buf) - n, " %g", h4[k].x);
                OUT("%s %s:%s", norm ? "normalized" : "unnormalized", names[mode], buf);
                T(cudaDestroyTextureObject(t));
            }
        }
        // Linear filtering across the edge, normalized, each mode.
        float xl[6] = {-0.05f, 0.01f, 0.5f, 0.97f, 1.02f, 1.3f};
        for (int mode = 0; mode < 4; mode++) {
            cudaTextureObject_t t = texture_of(a, cudaFilterModeLinear, mode, 1,
                                               cudaReadModeElementType, -1.0f);
            run1d(t, xl, 6);
            char buf[256];
            int n = 0;
            for (int k = 0; k < 6; k++) n += snprintf(buf + n, sizeof(buf) - n, " %08x", bits(h4[k].x));
            OUT("linear %s:%s", names[mode], buf);
            if (mode == 3) {
                // A 1D texture filters as 2D of height 1 at y = 0: half a texel above the
                // row's centre, so the row above (the border) weighs half.
                int border_off = 0;
                for (int k = 0; k < 6; k++) {
                    float x = xl[k] * 4.0f - 0.5f;
                    int q = (int)floorf(x * 256.0f + 0.5f), i = q >> 8;
                    float m4[4] = {-1.0f, -1.0f, i >= 0 && i < 4 ? v[i] : -1.0f,
                                   i + 1 >= 0 && i + 1 < 4 ? v[i + 1] : -1.0f};
                    if (bits(h4[k].x) != bits(bilinear4(q & 255, 128, m4))) border_off++;
                }
                CHECK(border_off == 0);
            }
            T(cudaDestroyTextureObject(t));
        }
        T(cudaFreeArray(a));
    }

    // ---- 4. integers read as normalized floats; absent channels
    {
        unsigned char u8[8] = {0, 1, 127, 128, 200, 254, 255, 51};
        cudaChannelFormatDesc c = cudaCreateChannelDesc<uchar4>();
        cudaArray_t a = NULL;
        T(cudaMallocArray(&a, &c, 2, 0, 0));
        NEED(a);
        T(cudaMemcpy2DToArray(a, 0, 0, u8, 8, 8, 1, cudaMemcpyHostToDevice));
        cudaTextureObject_t t = texture_of(a, cudaFilterModePoint, cudaAddressModeClamp, 0,
                                           cudaReadModeNormalizedFloat, 0);
        float xs[2] = {0.5f, 1.5f};
        run1d(t, xs, 2);
        int off = 0;
        for (int k = 0; k < 8; k++) {
            float got = (&h4[k / 4].x)[k % 4];
            OUT("u8 %3d -> %08x (%.9g)", u8[k], bits(got), got);
            if (got != (float)u8[k] / 255.0f) off++;
        }
        T(cudaDestroyTextureObject(t));
        T(cudaFreeArray(a));

        signed char s8[4] = {-128, -127, 1, 127};
        c = cudaCreateChannelDesc<char4>();
        T(cudaMallocArray(&a, &c, 1, 0, 0));
        NEED(a);
        T(cudaMemcpy2DToArray(a, 0, 0, s8, 4, 4, 1, cudaMemcpyHostToDevice));
        t = texture_of(a, cudaFilterModePoint, cudaAddressModeClamp, 0, cudaReadModeNormalizedFloat, 0);
        run1d(t, xs, 1);
        for (int k = 0; k < 4; k++) {
            float got = (&h4[0].x)[k];
            OUT("s8 %4d -> %08x (%.9g)", s8[k], bits(got), got);
            float m = (float)s8[k] / 127.0f;
            if (got != (m < -1.0f ? -1.0f : m)) off++;
        }
        T(cudaDestroyTextureObject(t));
        T(cudaFreeArray(a));

        unsigned short u16[2] = {1, 65535};
        c = cudaCreateChannelDesc<ushort2>();
        T(cudaMallocArray(&a, &c, 1, 0, 0));
        NEED(a);
        T(cudaMemcpy2DToArray(a, 0, 0, u16, 4, 4, 1, cudaMemcpyHostToDevice));
        t = texture_of(a, cudaFilterModePoint, cudaAddressModeClamp, 0, cudaReadModeNormalizedFloat, 0);
        run1d(t, xs, 1);
        OUT("u16 1, 65535 -> %08x %08x; absent z, w: %08x %08x", bits(h4[0].x), bits(h4[0].y),
            bits(h4[0].z), bits(h4[0].w));
        if (h4[0].x != 1.0f / 65535.0f || h4[0].y != 1.0f) off++;
        CHECK(h4[0].z == 0.0f && h4[0].w == 0.0f);  // absent channels read 0, w too
        T(cudaDestroyTextureObject(t));
        T(cudaFreeArray(a));

        // A 1-channel float texture read as float4: what y, z, w are.
        float one = 3.5f;
        T(cudaMallocArray(&a, &f1, 1, 0, 0));
        NEED(a);
        T(cudaMemcpy2DToArray(a, 0, 0, &one, 4, 4, 1, cudaMemcpyHostToDevice));
        t = texture_of(a, cudaFilterModePoint, cudaAddressModeClamp, 0, cudaReadModeElementType, 0);
        run1d(t, xs, 1);
        OUT("float x1 as float4: %08x %08x %08x %08x", bits(h4[0].x), bits(h4[0].y),
            bits(h4[0].z), bits(h4[0].w));
        CHECK(h4[0].y == 0.0f && h4[0].z == 0.0f && h4[0].w == 0.0f);
        T(cudaDestroyTextureObject(t));
        T(cudaFreeArray(a));

        // Half floats.
        unsigned short halves[2] = {0x3c00, 0xc555};  // 1.0, -5.333
        c = cudaCreateChannelDesc(16, 16, 0, 0, cudaChannelFormatKindFloat);
        T(cudaMallocArray(&a, &c, 1, 0, 0));
        NEED(a);
        T(cudaMemcpy2DToArray(a, 0, 0, halves, 4, 4, 1, cudaMemcpyHostToDevice));
        t = texture_of(a, cudaFilterModePoint, cudaAddressModeClamp, 0, cudaReadModeElementType, 0);
        run1d(t, xs, 1);
        OUT("half2 3c00 c555 -> %08x %08x", bits(h4[0].x), bits(h4[0].y));
        if (h4[0].x != 1.0f || bits(h4[0].y) != 0xc0aaa000u) off++;
        T(cudaDestroyTextureObject(t));
        T(cudaFreeArray(a));
        OUT("normalized reads off the model: %d", off);
        CHECK(off == 0);
    }

    // ---- 5. gathers (tld4) on a 3x3 float2 texture, both components, near an edge
    {
        float v[18];
        for (int k = 0; k < 18; k++) v[k] = (float)k;
        cudaChannelFormatDesc c = cudaCreateChannelDesc<float2>();
        cudaArray_t a = NULL;
        T(cudaMallocArray(&a, &c, 3, 3, cudaArrayTextureGather));
        NEED(a);
        T(cudaMemcpy2DToArray(a, 0, 0, v, 24, 24, 3, cudaMemcpyHostToDevice));
        cudaTextureObject_t t = texture_of(a, cudaFilterModePoint, cudaAddressModeClamp, 0,
                                           cudaReadModeElementType, 0);
        float2 xy[3] = {make_float2(1.0f, 1.0f), make_float2(2.7f, 0.2f), make_float2(0.1f, 2.9f)};
        cudaMemcpy(dxy, xy, sizeof(xy), cudaMemcpyHostToDevice);
        for (int comp = 0; comp < 2; comp++) {
            gather2d<<<1, 3>>>(d4, t, dxy, 3, comp);
            T(cudaMemcpy(h4, d4, 3 * sizeof(float4), cudaMemcpyDeviceToHost));
            for (int k = 0; k < 3; k++)
                OUT("gather comp %d at (%g, %g): %g %g %g %g", comp, xy[k].x, xy[k].y, h4[k].x,
                    h4[k].y, h4[k].z, h4[k].w);
        }
        // (1,1): i = j = 0: lower left (0,1), lower right (1,1), upper right (1,0), upper left (0,0).
        CHECK(h4[0].x == 7.0f && h4[0].y == 9.0f && h4[0].z == 3.0f && h4[0].w == 1.0f);
        T(cudaDestroyTextureObject(t));
        T(cudaFreeArray(a));
    }

    // ---- 6. a layered texture: layers -1 .. layers (past both ends)
    {
        const int L = 3;
        float v[2 * 2 * L];
        for (int k = 0; k < 4 * L; k++) v[k] = 100.0f * (k / 4) + (float)(k % 4);
        cudaArray_t a = NULL;
        T(cudaMalloc3DArray(&a, &f1, make_cudaExtent(2, 2, L), cudaArrayLayered));
        NEED(a);
        cudaExtent e;
        unsigned int flags = 0;
        T(cudaArrayGetInfo(NULL, &e, &flags, a));
        OUT("layered array %zux%zux%zu flags %u", e.width, e.height, e.depth, flags);
        cudaMemcpy3DParms p;
        memset(&p, 0, sizeof(p));
        p.srcPtr = make_cudaPitchedPtr(v, 8, 2, 2);
        p.dstArray = a;
        p.extent = make_cudaExtent(2, 2, L);
        p.kind = cudaMemcpyHostToDevice;
        T(cudaMemcpy3D(&p));
        cudaTextureObject_t t = texture_of(a, cudaFilterModeLinear, cudaAddressModeClamp, 0,
                                           cudaReadModeElementType, 0);
        float2 xy[L + 2];
        for (int k = 0; k < L + 2; k++) xy[k] = make_float2(1.25f, 0.75f);
        cudaMemcpy(dxy, xy, sizeof(xy), cudaMemcpyHostToDevice);
        layered2d<<<1, L + 2>>>((float *)d4, t, dxy, L + 2, L);
        float out[L + 2];
        T(cudaMemcpy(out, d4, sizeof(out), cudaMemcpyDeviceToHost));
        char buf[256];
        int n = 0;
        for (int k = 0; k < L + 2; k++) n += snprintf(buf + n, sizeof(buf) - n, " %g", out[k]);
        OUT("layers -1..%d at (1.25, 0.75):%s", L, buf);
        CHECK(out[1] == 1.25f && out[2] == 101.25f);
        // The layer is unsigned and clamped: -1 and L both read the last layer.
        CHECK(out[0] == 201.25f && out[L + 1] == 201.25f);
        T(cudaDestroyTextureObject(t));
        T(cudaFreeArray(a));
    }

    // ---- 7. linear memory through tex1Dfetch, border past both ends
    {
        int h[8], *d = NULL;
        for (int k = 0; k < 8; k++) h[k] = 1000 + k;
        T(cudaMalloc(&d, sizeof(h)));
        NEED(d);
        T(cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice));
        cudaResourceDesc res;
        memset(&res, 0, sizeof(res));
        res.resType = cudaResourceTypeLinear;
        res.res.linear.devPtr = d;
        res.res.linear.desc = cudaCreateChannelDesc<int>();
        res.res.linear.sizeInBytes = sizeof(h);
        cudaTextureDesc td;
        memset(&td, 0, sizeof(td));
        td.readMode = cudaReadModeElementType;
        cudaTextureObject_t t = 0;
        T(cudaCreateTextureObject(&t, &res, &td, NULL));
        int *dout = (int *)d4, out[12];
        fetch_linear<<<1, 12>>>(dout, t, 12);
        T(cudaMemcpy(out, dout, sizeof(out), cudaMemcpyDeviceToHost));
        char buf[256];
        int n = 0;
        for (int k = 0; k < 12; k++) n += snprintf(buf + n, sizeof(buf) - n, " %d", out[k]);
        OUT("tex1Dfetch at -2..9:%s", buf);
        CHECK(out[2] == 1000 && out[9] == 1007);
        CHECK(out[0] == 0 && out[1] == 0 && out[10] == 0 && out[11] == 0);  // zero past the ends
        T(cudaDestroyTextureObject(t));
        T(cudaFree(d));
    }

    // ---- 8. surface reads and writes past the edge
    {
        const int w = 4;
        int v[w * 2];
        for (int k = 0; k < w * 2; k++) v[k] = 50 + k;
        cudaChannelFormatDesc c = cudaCreateChannelDesc<int>();
        cudaArray_t a = NULL;
        T(cudaMallocArray(&a, &c, w, 2, cudaArraySurfaceLoadStore));
        NEED(a);
        T(cudaMemcpy2DToArray(a, 0, 0, v, w * 4, w * 4, 2, cudaMemcpyHostToDevice));
        cudaResourceDesc res;
        memset(&res, 0, sizeof(res));
        res.resType = cudaResourceTypeArray;
        res.res.array.array = a;
        cudaSurfaceObject_t s = 0;
        T(cudaCreateSurfaceObject(&s, &res));
        int out[3];
        surf_edges<<<1, 1>>>((int *)d4, s, w);
        T(cudaMemcpy(out, d4, sizeof(out), cudaMemcpyDeviceToHost));
        OUT("surface past the edge: zero %d, clamp %d, clamp below %d", out[0], out[1], out[2]);
        CHECK(out[0] == 0 && out[1] == v[w * 2 - 1] && out[2] == v[0]);
        int back[w * 2];
        T(cudaMemcpy2DFromArray(back, w * 4, a, 0, 0, w * 4, 2, cudaMemcpyDeviceToHost));
        CHECK(memcmp(back, v, sizeof(v)) == 0);
        T(cudaDestroySurfaceObject(s));
        // cuda.h says a surface's array needs cudaArraySurfaceLoadStore; the H200 makes one
        // without it all the same (destroyed untraced, the transcript as recorded).
        cudaArray_t plain = NULL;
        T(cudaMallocArray(&plain, &c, w, 2, 0));
        res.res.array.array = plain;
        CHECK(T(cudaCreateSurfaceObject(&s, &res)) == cudaSuccess);
        T(cudaGetLastError());
        cudaDestroySurfaceObject(s);
        T(cudaFreeArray(plain));
        T(cudaFreeArray(a));
    }

    T(cudaFree(d4));
    T(cudaFree(dxs));
    T(cudaFree(dxy));
    return finish();
}
