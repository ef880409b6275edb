// simpleTexture's, simpleSurfaceWrite's and simpleTexture3D's patterns: an image in a
// CUDA array rotated through a 2D float texture (linear filtering, normalized
// coordinates, wrap), written through a surface object and read back, and a volume
// sampled through a 3D texture. Results are checked against a host model of the
// hardware's filtering (the CUDA programming guide's "Texture Fetching": weights in 1.8
// fixed point; the rest as the H200 showed it) and printed as checksums of their bits,
// so a transcript says whether the model is bit-exact.
#include "common.h"
#include <math.h>

#define W 128
#define H 96

static float image(int x, int y) { return (float)((x * 7 + y * 13) % 251) / 251.0f; }

// The rotated coordinate, computed the same way on both sides (no contraction).
__host__ __device__ static float rot_u(int x, int y, float c, float s) {
    float u = (float)x - (float)W / 2, v = (float)y - (float)H / 2;
#ifdef __CUDA_ARCH__
    return __fadd_rn(__fdiv_rn(__fsub_rn(__fmul_rn(u, c), __fmul_rn(v, s)), (float)W), 0.5f);
#else
    volatile float a = u * c, b = v * s;
    volatile float d = (a - b) / (float)W;
    return d + 0.5f;
#endif
}

__host__ __device__ static float rot_v(int x, int y, float c, float s) {
    float u = (float)x - (float)W / 2, v = (float)y - (float)H / 2;
#ifdef __CUDA_ARCH__
    return __fadd_rn(__fdiv_rn(__fadd_rn(__fmul_rn(v, c), __fmul_rn(u, s)), (float)H), 0.5f);
#else
    volatile float a = v * c, b = u * s;
    volatile float d = (a + b) / (float)H;
    return d + 0.5f;
#endif
}

__global__ void transformKernel(float *out, float c, float s, cudaTextureObject_t tex) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < W && y < H) out[y * W + x] = tex2D<float>(tex, rot_u(x, y, c, s), rot_v(x, y, c, s));
}

__global__ void surfaceWriteKernel(cudaSurfaceObject_t surf, float scale) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < W && y < H) {
        float v = surf2Dread<float>(surf, x * 4, y);
        surf2Dwrite(v * scale + (float)x, surf, x * 4, y);
    }
}

__global__ void sample3d(float *out, cudaTextureObject_t tex, int n, float off) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n * n * n) {
        int x = i % n, y = (i / n) % n, z = i / (n * n);
        out[i] = tex3D<float>(tex, (x + off) / n, (y + off) / n, (z + off) / n);
    }
}

// The H200's linear filter (texture_probe records its rules): a normalized coordinate
// floored to 2^-21 and scaled by the size; the texel-space coordinate less half a texel
// rounded to 1/256 (halves up); corner weights that are multiples of 1/256 (the
// all-upper corner's product rounded, halves up, the others what is left); the weighted
// sum rounded once, halves away from zero.
static long fixed_q8(float u, int n) {
    double uq = floor((double)u * 2097152.0) / 2097152.0;
    return (long)floor((uq * n - 0.5) * 256.0 + 0.5);
}

static float round_half_away(double x) {
    float r = (float)x;
    if (fabs(x) <= fabs((double)r)) return r;
    float next = nextafterf(r, x > 0 ? INFINITY : -INFINITY);
    return x - (double)r == (double)next - x ? next : r;
}

static int wrap(int i, int n) { return ((i % n) + n) % n; }

static float bilinear_wrap(const float *img, int w, int h, float u, float v) {
    long qx = fixed_q8(u, w), qy = fixed_q8(v, h);
    int i = (int)(qx >> 8), j = (int)(qy >> 8), a = (int)(qx & 255), b = (int)(qy & 255);
    int ab = (a * b + 128) >> 8;
    double acc = (double)(256 - a - b + ab) * img[wrap(j, h) * w + wrap(i, w)] +
                 (double)(a - ab) * img[wrap(j, h) * w + wrap(i + 1, w)] +
                 (double)(b - ab) * img[wrap(j + 1, h) * w + wrap(i, w)] +
                 (double)ab * img[wrap(j + 1, h) * w + wrap(i + 1, w)];
    return round_half_away(acc / 256.0);
}

static int clampi(int i, int n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }

// In 3D each bilinear corner's weight splits again by the third fraction the same way.
static float trilinear_clamp(const float *vol, int n, float u, float v, float w) {
    float c[3] = {u, v, w};
    int b[3], f[3];
    for (int k = 0; k < 3; k++) {
        long q = fixed_q8(c[k], n);
        b[k] = (int)(q >> 8);
        f[k] = (int)(q & 255);
    }
    int ab = (f[0] * f[1] + 128) >> 8;
    int w2[4] = {256 - f[0] - f[1] + ab, f[0] - ab, f[1] - ab, ab};
    double acc = 0.0;
    for (int corner = 0; corner < 8; corner++) {
        int hi = (w2[corner & 3] * f[2] + 128) >> 8;
        int wt = corner & 4 ? hi : w2[corner & 3] - hi;
        int idx[3];
        for (int k = 0; k < 3; k++) idx[k] = clampi(b[k] + (corner >> k & 1), n);
        acc += (double)wt * vol[(idx[2] * n + idx[1]) * n + idx[0]];
    }
    return round_half_away(acc / 256.0);
}

static uint64_t checksum(const float *v, int n) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the bits
    for (int i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, &v[i], 4);
        for (int k = 0; k < 4; k++) h = (h ^ (b >> (8 * k) & 0xff)) * 1099511628211ull;
    }
    return h;
}

static uint32_t bits(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

int main(void) {
    static float h_img[W * H], h_out[W * H], want[W * H];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) h_img[y * W + x] = image(x, y);

    // ---- simpleTexture: rotate through a linear-filtered, wrapping texture
    cudaChannelFormatDesc fd = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    OUT("channel desc %d %d %d %d kind %d", fd.x, fd.y, fd.z, fd.w, (int)fd.f);
    cudaArray_t arr = NULL;
    T(cudaMallocArray(&arr, &fd, W, H, cudaArraySurfaceLoadStore));
    NEED(arr);
    cudaChannelFormatDesc got;
    cudaExtent ext;
    unsigned int flags = 99;
    T(cudaArrayGetInfo(&got, &ext, &flags, arr));
    OUT("array %zux%zux%zu flags %u, channel %d %d %d %d kind %d", ext.width, ext.height, ext.depth,
        flags, got.x, got.y, got.z, got.w, (int)got.f);
    T(cudaMemcpy2DToArray(arr, 0, 0, h_img, W * sizeof(float), W * sizeof(float), H,
                          cudaMemcpyHostToDevice));

    cudaResourceDesc res;
    memset(&res, 0, sizeof(res));
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaTextureDesc td;
    memset(&td, 0, sizeof(td));
    td.normalizedCoords = 1;
    td.filterMode = cudaFilterModeLinear;
    td.addressMode[0] = cudaAddressModeWrap;
    td.addressMode[1] = cudaAddressModeWrap;
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t tex = 0;
    T(cudaCreateTextureObject(&tex, &res, &td, NULL));
    OUT("texture object %s", tex ? "non-zero" : "zero");

    float *d_out = NULL;
    T(cudaMalloc(&d_out, sizeof(h_out)));
    NEED(d_out);
    float angle = 0.5f, c = cosf(angle), s = sinf(angle);
    dim3 block(16, 16), grid((W + 15) / 16, (H + 15) / 16);
    transformKernel<<<grid, block>>>(d_out, c, s, tex);
    T(cudaGetLastError());
    T(cudaMemcpy(h_out, d_out, sizeof(h_out), cudaMemcpyDeviceToHost));
    int off = 0;
    float worst = 0.0f;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int i = y * W + x;
            want[i] = bilinear_wrap(h_img, W, H, rot_u(x, y, c, s), rot_v(x, y, c, s));
            if (bits(h_out[i]) != bits(want[i])) off++;
            float e = fabsf(h_out[i] - want[i]);
            if (e > worst) worst = e;
        }
    OUT("rotated: %d of %d differ in bits from the 1.8 fixed-point model, worst by %.3g", off,
        W * H, worst);
    OUT("rotated checksum %016llx, model's %016llx", (unsigned long long)checksum(h_out, W * H),
        (unsigned long long)checksum(want, W * H));
    OUT("samples %08x %08x %08x %08x", bits(h_out[0]), bits(h_out[W * H / 2 + 7]),
        bits(h_out[W * 3 + 100]), bits(h_out[W * H - 1]));
    CHECK(worst < 1e-5f);

    // ---- simpleSurfaceWrite: read and write the same array through a surface object
    cudaSurfaceObject_t surf = 0;
    T(cudaCreateSurfaceObject(&surf, &res));
    surfaceWriteKernel<<<grid, block>>>(surf, 2.0f);
    T(cudaGetLastError());
    T(cudaMemcpy2DFromArray(h_out, W * sizeof(float), arr, 0, 0, W * sizeof(float), H,
                            cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            if (h_out[y * W + x] != h_img[y * W + x] * 2.0f + (float)x) bad++;
    OUT("surface write: %d of %d wrong", bad, W * H);
    CHECK(bad == 0);
    // A sub-rectangle out again, through the deprecated whole-row call.
    float row[8];
    T(cudaMemcpyFromArray(row, arr, 16, 5, sizeof(row), cudaMemcpyDeviceToHost));
    CHECK(row[0] == h_img[5 * W + 4] * 2.0f + 4.0f);
    T(cudaDestroySurfaceObject(surf));
    T(cudaDestroyTextureObject(tex));

    // ---- simpleTexture3D: a volume through cudaMemcpy3D, trilinear filtering, clamp
    const int N = 16;
    static float vol[N * N * N], h3[N * N * N];
    for (int i = 0; i < N * N * N; i++) vol[i] = (float)((i * 37) % 101) / 101.0f;
    cudaArray_t arr3 = NULL;
    T(cudaMalloc3DArray(&arr3, &fd, make_cudaExtent(N, N, N), 0));
    NEED(arr3);
    cudaMemcpy3DParms p;
    memset(&p, 0, sizeof(p));
    p.srcPtr = make_cudaPitchedPtr(vol, N * sizeof(float), N, N);
    p.dstArray = arr3;
    p.extent = make_cudaExtent(N, N, N);
    p.kind = cudaMemcpyHostToDevice;
    T(cudaMemcpy3D(&p));
    res.res.array.array = arr3;
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = cudaAddressModeClamp;
    T(cudaCreateTextureObject(&tex, &res, &td, NULL));
    float *d3 = NULL;
    T(cudaMalloc(&d3, sizeof(h3)));
    NEED(d3);
    sample3d<<<(N * N * N + 127) / 128, 128>>>(d3, tex, N, 0.3f);
    T(cudaGetLastError());
    T(cudaMemcpy(h3, d3, sizeof(h3), cudaMemcpyDeviceToHost));
    static float w3[N * N * N];
    off = 0;
    worst = 0.0f;
    for (int i = 0; i < N * N * N; i++) {
        int x = i % N, y = (i / N) % N, z = i / (N * N);
        w3[i] = trilinear_clamp(vol, N, (x + 0.3f) / N, (y + 0.3f) / N, (z + 0.3f) / N);
        if (bits(h3[i]) != bits(w3[i])) off++;
        float e = fabsf(h3[i] - w3[i]);
        if (e > worst) worst = e;
    }
    OUT("3D: %d of %d differ in bits from the model, worst by %.3g", off, N * N * N, worst);
    OUT("3D checksum %016llx, model's %016llx", (unsigned long long)checksum(h3, N * N * N),
        (unsigned long long)checksum(w3, N * N * N));
    CHECK(worst < 1e-5f);
    // The volume back out through cudaMemcpy3D, array to host.
    static float back[N * N * N];
    memset(&p, 0, sizeof(p));
    p.srcArray = arr3;
    p.dstPtr = make_cudaPitchedPtr(back, N * sizeof(float), N, N);
    p.extent = make_cudaExtent(N, N, N);
    p.kind = cudaMemcpyDeviceToHost;
    T(cudaMemcpy3D(&p));
    CHECK(memcmp(back, vol, sizeof(vol)) == 0);

    T(cudaDestroyTextureObject(tex));
    T(cudaFreeArray(arr3));
    T(cudaFreeArray(arr));
    T(cudaFree(d3));
    T(cudaFree(d_out));
    return finish();
}
