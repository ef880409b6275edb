// A probe, for the H200's record: formatted surface stores (`sust.p`, which the C++ API
// does not expose: inline PTX). The PTX ISA: the 32-bit values are f32, u32 or s32 as
// the surface's channels are float, unsigned or signed, "converted from this type to the
// surface sample format"; values past the surface's channels are ignored, channels past
// the values "written with an unpredictable value". It does not say whether a value too
// wide for a narrower integer channel saturates or wraps. The rule, as the H200 recorded
// it and the mock follows: integers saturate, f32 to f16 rounds toward zero, channels
// past the values are written as zero. Each store's texel is printed byte by byte (after a fill of 0xab); a CHECK
// FAILED names a case the H200 converts otherwise. (A first recording passed x as a byte
// offset, which sust.p takes as a sample index: the store fell outside the surface and
// trapped, cudaErrorIllegalAddress, on the H200, where the mock then wrongly took bytes.)
#include "common.h"
#include <cuda_fp16.h>

__global__ void store4(cudaSurfaceObject_t s, const unsigned *v, int x) {
    asm volatile("sust.p.2d.v4.b32.trap [%0, {%1, %2}], {%3, %4, %5, %6};"
                 :: "l"(s), "r"(x), "r"(0), "r"(v[0]), "r"(v[1]), "r"(v[2]), "r"(v[3])
                 : "memory");
}

__global__ void store2(cudaSurfaceObject_t s, const unsigned *v, int x) {
    asm volatile("sust.p.2d.v2.b32.trap [%0, {%1, %2}], {%3, %4};"
                 :: "l"(s), "r"(x), "r"(0), "r"(v[0]), "r"(v[1]) : "memory");
}

static uint32_t fbits(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

// The mock's conversion of one value to a channel of `bits` of `kind` (0 unsigned,
// 1 signed, 2 float).
static uint64_t convert(int kind, int bits, uint32_t v) {
    if (kind == 2 && bits == 16) {
        float f;
        memcpy(&f, &v, 4);
        __half h = __float2half_rz(f);
        uint16_t r;
        memcpy(&r, &h, 2);
        return r;
    }
    if (kind == 2 || bits == 32) return v;
    if (kind == 0) {
        uint64_t max = (1ull << bits) - 1;
        return v > max ? max : v;
    }
    int64_t max = (1ll << (bits - 1)) - 1, x = (int32_t)v;
    return (uint64_t)(x > max ? max : x < -max - 1 ? -max - 1 : x);
}

struct Case {
    const char *name;
    cudaChannelFormatDesc desc;
    int kind, bits, channels;
};

int main(void) {
    struct Case cases[] = {
        {"uchar4", cudaCreateChannelDesc<uchar4>(), 0, 8, 4},
        {"char4", cudaCreateChannelDesc<char4>(), 1, 8, 4},
        {"ushort2", cudaCreateChannelDesc<ushort2>(), 0, 16, 2},
        {"short2", cudaCreateChannelDesc<short2>(), 1, 16, 2},
        {"half4", cudaCreateChannelDescHalf4(), 2, 16, 4},
        {"float", cudaCreateChannelDesc<float>(), 2, 32, 1},
        {"int2", cudaCreateChannelDesc<int2>(), 1, 32, 2},
    };
    // Value sets, four each: in range, past the top, negative, and float specials.
    const uint32_t values[][4] = {
        {1, 100, 127, 200},
        {255, 256, 65535, 65536},
        {0xffffffffu, 0x80000000u, 0xffff8000u, 0x7fffffffu},
        {fbits(1.0f), fbits(65520.0f), fbits(-0.0f), fbits(1.0f + 1.0f / 2048.0f)},
        {fbits(5.96e-8f), fbits(3.0e-8f), 0x7fc00001u, fbits(-65504.0f)},
    };
    unsigned *dv;
    T(cudaMalloc(&dv, 16));
    NEED(dv);
    for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct Case k = cases[c];
        int texel = k.bits / 8 * k.channels;
        for (int two = 0; two < 2; two++) {
            for (unsigned s = 0; s < sizeof(values) / sizeof(values[0]); s++) {
                cudaArray_t a = NULL;
                T(cudaMallocArray(&a, &k.desc, 2, 1, cudaArraySurfaceLoadStore));
                NEED(a);
                unsigned char fill[64];
                memset(fill, 0xab, sizeof(fill));
                T(cudaMemcpy2DToArray(a, 0, 0, fill, 2 * texel, 2 * texel, 1,
                                      cudaMemcpyHostToDevice));
                cudaResourceDesc res;
                memset(&res, 0, sizeof(res));
                res.resType = cudaResourceTypeArray;
                res.res.array.array = a;
                cudaSurfaceObject_t so = 0;
                T(cudaCreateSurfaceObject(&so, &res));
                T(cudaMemcpy(dv, values[s], 16, cudaMemcpyHostToDevice));
                // sust.p's x is a sample index (a byte offset only for sust.b): texel 1.
                if (two)
                    store2<<<1, 1>>>(so, dv, 1);
                else
                    store4<<<1, 1>>>(so, dv, 1);
                unsigned char got[64];
                T(cudaMemcpy2DFromArray(got, 2 * texel, a, 0, 0, 2 * texel, 1,
                                        cudaMemcpyDeviceToHost));
                char buf[256];
                int n = 0;
                for (int b = 0; b < 2 * texel; b++)
                    n += snprintf(buf + n, sizeof(buf) - n, " %02x", got[b]);
                OUT("%s v%d values %u:%s", k.name, two ? 2 : 4, s, buf);
                // Texel 0 keeps the fill; texel 1's channels past the values are zero.
                unsigned char want[64];
                memset(want, 0xab, sizeof(want));
                memset(want + texel, 0, texel);
                int w = k.bits / 8, stored = two ? 2 : 4;
                for (int ch = 0; ch < k.channels && ch < stored; ch++) {
                    uint64_t r = convert(k.kind, k.bits, values[s][ch]);
                    for (int b = 0; b < w; b++) want[texel + ch * w + b] = (unsigned char)(r >> (8 * b));
                }
                // A NaN stored into a half channel may be any NaN (its payload is the
                // hardware's): such channels compare as "both NaN".
                int same = 1;
                for (int ch = 0; ch < 2 * k.channels; ch++) {
                    int in_value = ch >= k.channels && ch - k.channels < stored;
                    uint32_t v = in_value ? values[s][ch - k.channels] : 0;
                    int nan_half = k.kind == 2 && k.bits == 16 && in_value &&
                                   (v & 0x7fffffffu) > 0x7f800000u;
                    if (nan_half) {
                        uint16_t h = (uint16_t)(got[ch * w] | got[ch * w + 1] << 8);
                        if ((h & 0x7fff) <= 0x7c00) same = 0;
                    } else if (memcmp(got + ch * w, want + ch * w, w) != 0) {
                        same = 0;
                    }
                }
                CHECK(same);
                T(cudaDestroySurfaceObject(so));
                T(cudaFreeArray(a));
            }
        }
    }
    T(cudaFree(dv));
    return finish();
}
