// A probe, for the H200's record: texel offsets (`tex` and `tld4`'s operand e, which the
// C++ API does not expose: inline PTX) and the residency predicate (`d|p`), printed bit
// for bit. The PTX ISA says the offset "is applied to coordinates before doing texture
// lookup", in -8..+7; it leaves open how an offset meets each address mode and what a
// value outside the range does. The mock's rule, checked here: the offset moves the
// texel index the coordinate gives (after normalized coordinates are scaled, and for
// linear filtering after the half-texel shift), then the address mode applies to the
// moved index (wrap and mirror of normalized coordinates fold it again, clamp clamps
// it, border reads the border colour); a register value outside -8..7 is taken as its
// low four bits, signed (9 reads as -7). The recording decides each: a CHECK FAILED
// names the case, the printed texels what the H200 read instead. Without sparse
// textures every texel is resident: p is 1.
#include "common.h"

// Thread i samples at xs[i] (texel 0.5 of row 1 in y) with offsets (ox[i], oy).
__global__ void tex_offsets(float *out, unsigned *resident, cudaTextureObject_t t,
                            const float *xs, const int *ox, float y, int oy, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float r[4];
    unsigned p;
    asm volatile("{\n .reg .pred q;\n"
                 " tex.2d.v4.f32.f32 {%0, %1, %2, %3}|q, [%5, {%6, %7}], {%8, %9};\n"
                 " selp.u32 %4, 1, 0, q;\n}"
                 : "=f"(r[0]), "=f"(r[1]), "=f"(r[2]), "=f"(r[3]), "=r"(p)
                 : "l"(t), "f"(xs[i]), "f"(y), "r"(ox[i]), "r"(oy));
    out[i] = r[0];
    resident[i] = p;
}

// tld4.r with offsets: the four texels of the footprint.
__global__ void gather_offsets(float4 *out, cudaTextureObject_t t, const float *xs,
                               const int *ox, float y, int oy, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float g[4];
    asm volatile("tld4.r.2d.v4.f32.f32 {%0, %1, %2, %3}, [%4, {%5, %6}], {%7, %8};"
                 : "=f"(g[0]), "=f"(g[1]), "=f"(g[2]), "=f"(g[3])
                 : "l"(t), "f"(xs[i]), "f"(y), "r"(ox[i]), "r"(oy));
    out[i] = make_float4(g[0], g[1], g[2], g[3]);
}

static uint32_t bits(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

#define W 8
#define H 4
static float texels[H][W];

static cudaTextureObject_t texture_of(cudaArray_t a, int filter, int mode, int normalized) {
    cudaResourceDesc res;
    memset(&res, 0, sizeof(res));
    res.resType = cudaResourceTypeArray;
    res.res.array.array = a;
    cudaTextureDesc td;
    memset(&td, 0, sizeof(td));
    td.filterMode = (cudaTextureFilterMode)filter;
    td.addressMode[0] = td.addressMode[1] = (cudaTextureAddressMode)mode;
    td.normalizedCoords = normalized;
    td.readMode = cudaReadModeElementType;
    td.borderColor[0] = -1.0f;
    cudaTextureObject_t t = 0;
    T(cudaCreateTextureObject(&t, &res, &td, NULL));
    return t;
}

// The mock's rule for an index i of n texels under mode (0 wrap, 1 clamp, 2 mirror,
// 3 border: -1 for the border colour). Wrap and mirror apply to normalized coordinates
// only; unnormalized ones clamp.
static int address(int i, int n, int mode, int normalized) {
    if (!normalized && (mode == 0 || mode == 2)) mode = 1;
    switch (mode) {
        case 0: return ((i % n) + n) % n;
        case 1: return i < 0 ? 0 : i >= n ? n - 1 : i;
        case 2: {
            int period = i >= 0 ? i / n : -((-i + n - 1) / n);
            int r = ((i % n) + n) % n;
            return period % 2 == 0 ? r : n - 1 - r;
        }
        default: return i < 0 || i >= n ? -1 : i;
    }
}

static float texel_at(int i, int j, int mode, int normalized) {
    int x = address(i, W, mode, normalized), y = address(j, H, mode, normalized);
    return x < 0 || y < 0 ? -1.0f : texels[y][x];
}

static int four_bits(int v) { return (int)((unsigned)v << 28) >> 28; }
// tld4's offset field is six bits (recorded on the H200: 8, 9, 15 and -9 move the footprint
// that far, 100 is -28).
static int six_bits(int v) { return (int)((unsigned)v << 26) >> 26; }

int main(void) {
    for (int j = 0; j < H; j++)
        for (int i = 0; i < W; i++) texels[j][i] = (float)(j * 16 + i);
    cudaChannelFormatDesc f1 = cudaCreateChannelDesc<float>();
    cudaArray_t a = NULL;
    T(cudaMallocArray(&a, &f1, W, H, 0));
    NEED(a);
    T(cudaMemcpy2DToArray(a, 0, 0, texels, W * 4, W * 4, H, cudaMemcpyHostToDevice));
    // Offsets -8..7 and five outside the range, at texel centres 0, 3 and 7 (0.25 past a
    // centre for linear filtering, which then weighs 1/4 of the next texel).
    enum { N_OFF = 21, N_X = 3, N = N_OFF * N_X };
    int offs[N_OFF];
    for (int k = 0; k < 16; k++) offs[k] = k - 8;
    offs[16] = 8, offs[17] = 9, offs[18] = -9, offs[19] = 15, offs[20] = 100;
    const int centres[N_X] = {0, 3, 7};
    float *dout, *dxs;
    unsigned *dres;
    int *dox;
    float4 *dg;
    T(cudaMalloc(&dout, N * sizeof(float)));
    T(cudaMalloc(&dxs, N * sizeof(float)));
    T(cudaMalloc(&dres, N * sizeof(unsigned)));
    T(cudaMalloc(&dox, N * sizeof(int)));
    T(cudaMalloc(&dg, N * sizeof(float4)));
    NEED(dout);
    NEED(dxs);
    NEED(dres);
    NEED(dox);
    NEED(dg);
    int ox[N];
    for (int c = 0; c < N_X; c++)
        for (int k = 0; k < N_OFF; k++) ox[c * N_OFF + k] = offs[k];
    T(cudaMemcpy(dox, ox, sizeof(ox), cudaMemcpyHostToDevice));
    const char *modes[4] = {"wrap", "clamp", "mirror", "border"};
    const int oy = -2;  // from row 1: row -1, which each mode resolves its own way
    for (int norm = 1; norm >= 0; norm--) {
        for (int linear = 0; linear < 2; linear++) {
            for (int mode = 0; mode < 4; mode++) {
                cudaTextureObject_t t = texture_of(a, linear, mode, norm);
                float xs[N];
                for (int c = 0; c < N_X; c++)
                    for (int k = 0; k < N_OFF; k++) {
                        float u = centres[c] + 0.5f + (linear ? 0.25f : 0.0f);
                        xs[c * N_OFF + k] = norm ? u / W : u;
                    }
                float y = norm ? 1.5f / H : 1.5f;
                T(cudaMemcpy(dxs, xs, sizeof(xs), cudaMemcpyHostToDevice));
                tex_offsets<<<1, N>>>(dout, dres, t, dxs, dox, y, oy, N);
                float out[N];
                unsigned res[N];
                T(cudaMemcpy(out, dout, sizeof(out), cudaMemcpyDeviceToHost));
                T(cudaMemcpy(res, dres, sizeof(res), cudaMemcpyDeviceToHost));
                int off_model = 0, not_resident = 0;
                for (int c = 0; c < N_X; c++) {
                    char buf[512];
                    int n = 0;
                    for (int k = 0; k < N_OFF; k++) {
                        int i = c * N_OFF + k;
                        n += snprintf(buf + n, sizeof(buf) - n, " %08x", bits(out[i]));
                        int dx = four_bits(offs[k]), dy = four_bits(oy);
                        int tx = centres[c] + dx, ty = 1 + dy;
                        float m = texel_at(tx, ty, mode, norm);
                        if (linear) {
                            // 1/4 of the next texel in x, none in y (y at a centre).
                            double s = 0.75 * m + 0.25 * texel_at(tx + 1, ty, mode, norm);
                            m = (float)s;
                        }
                        if (bits(out[i]) != bits(m)) off_model++;
                        if (res[i] != 1) not_resident++;
                    }
                    OUT("%s %s %s, texel %d + offsets -8..7, 8, 9, -9, 15, 100:%s",
                        norm ? "normalized" : "unnormalized", linear ? "linear" : "point",
                        modes[mode], centres[c], buf);
                }
                OUT("  off the model: %d of %d; not resident: %d", off_model, N, not_resident);
                CHECK(off_model == 0);
                CHECK(not_resident == 0);
                if (!linear && mode == 1) {
                    // tld4.r's footprint with the same offsets (point sampling is not
                    // used by a gather: it reads the four texels linear filtering would).
                    gather_offsets<<<1, N>>>(dg, t, dxs, dox, y, oy, N);
                    float4 g[N];
                    T(cudaMemcpy(g, dg, sizeof(g), cudaMemcpyDeviceToHost));
                    int g_off = 0;
                    for (int c = 0; c < N_X; c++) {
                        char buf[1024];
                        int n = 0;
                        for (int k = 0; k < N_OFF; k++) {
                            int i = c * N_OFF + k;
                            n += snprintf(buf + n, sizeof(buf) - n, " %g/%g/%g/%g", g[i].x,
                                          g[i].y, g[i].z, g[i].w);
                            // At texel centre (c + 0.5, 1.5) the footprint's (i, j), the
                            // coordinate less half a texel, is (c, 1); then the offsets.
                            int ti = centres[c] + six_bits(offs[k]), tj = 1 + six_bits(oy);
                            float want[4] = {texel_at(ti, tj + 1, mode, norm),
                                             texel_at(ti + 1, tj + 1, mode, norm),
                                             texel_at(ti + 1, tj, mode, norm),
                                             texel_at(ti, tj, mode, norm)};
                            if (g[i].x != want[0] || g[i].y != want[1] || g[i].z != want[2] ||
                                g[i].w != want[3])
                                g_off++;
                        }
                        OUT("tld4.r %s clamp, texel %d + offsets:%s",
                            norm ? "normalized" : "unnormalized", centres[c], buf);
                    }
                    OUT("  tld4 off the model: %d of %d", g_off, N);
                    CHECK(g_off == 0);
                }
                T(cudaDestroyTextureObject(t));
            }
        }
    }
    T(cudaFree(dout));
    T(cudaFree(dxs));
    T(cudaFree(dres));
    T(cudaFree(dox));
    T(cudaFree(dg));
    T(cudaFreeArray(a));
    return finish();
}
