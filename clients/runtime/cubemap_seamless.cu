// Seamless cubemap filtering (cudaTextureDesc::seamlessCubemap, the driver's
// CU_TRSF_SEAMLESS_CUBEMAP): the CUDA programming guide says a cubemap's linear filtering
// then reads across the faces' edges. Which texels of the neighbouring face are read,
// with which weights, and what a footprint over a cube corner (three texels) reads is
// not documented: this program prints linear samples at and near every kind of edge and
// corner, with and without the flag, and tld4.r.cube gathers there (inline PTX), bit for
// bit, for the H200's record. The H200 (recorded) reads the neighbouring face's edge
// texels with the weights of 2D filtering and, past a corner, 85/256 of each texel beside
// the missing one and 86/256 of the diagonal one; the mock does the same.
// Checked: samples inside a face and point samples are the same with and without the
// flag.
#include "common.h"

#define N 4

// Face f, texel (x, y): a value that names all three.
static float cube_value(int f, int x, int y) { return (float)(100 * f + 10 * y + x); }

__global__ void lookup(cudaTextureObject_t tex, const float4 *dirs, float *out, int n) {
    int i = threadIdx.x;
    if (i < n) out[i] = texCubemap<float>(tex, dirs[i].x, dirs[i].y, dirs[i].z);
}

// tld4.r on the cube: the four texels bilinear filtering weighs (no C++ form).
__global__ void gather(cudaTextureObject_t tex, const float4 *dirs, float *out, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    float g[4];
    asm volatile("tld4.r.cube.v4.f32.f32 {%0, %1, %2, %3}, [%4, {%5, %6, %7, %8}];"
                 : "=f"(g[0]), "=f"(g[1]), "=f"(g[2]), "=f"(g[3])
                 : "l"(tex), "f"(dirs[i].x), "f"(dirs[i].y), "f"(dirs[i].z), "f"(0.0f));
    for (int k = 0; k < 4; k++) out[4 * i + k] = g[k];
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

static cudaTextureObject_t texture_over(cudaArray_t a, cudaTextureFilterMode filter, int seamless) {
    cudaResourceDesc res;
    memset(&res, 0, sizeof(res));
    res.resType = cudaResourceTypeArray;
    res.res.array.array = a;
    cudaTextureDesc td;
    memset(&td, 0, sizeof(td));
    td.normalizedCoords = 1;
    td.filterMode = filter;
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = cudaAddressModeClamp;
    td.readMode = cudaReadModeElementType;
    td.seamlessCubemap = seamless;
    cudaTextureObject_t tex = 0;
    T(cudaCreateTextureObject(&tex, &res, &td, NULL));
    return tex;
}

int main(void) {
    cudaChannelFormatDesc fd = cudaCreateChannelDesc<float>();
    cudaArray_t cube = NULL;
    T(cudaMalloc3DArray(&cube, &fd, make_cudaExtent(N, N, 6), cudaArrayCubemap));
    NEED(cube);
    static float host[6 * N * N];
    for (int f = 0; f < 6; f++)
        for (int y = 0; y < N; y++)
            for (int x = 0; x < N; x++) host[(f * N + y) * N + x] = cube_value(f, x, y);
    cudaMemcpy3DParms p;
    memset(&p, 0, sizeof(p));
    p.srcPtr = make_cudaPitchedPtr(host, N * sizeof(float), N, N);
    p.dstArray = cube;
    p.extent = make_cudaExtent(N, N, 6);
    p.kind = cudaMemcpyHostToDevice;
    T(cudaMemcpy3D(&p));

    // Inside faces first (NI of them), then edges: on the edge (a tie, picked z, y, x),
    // a quarter texel and an eighth of a texel inside it, on each face's four sides; then
    // corners: on the corner and just inside it.
    enum { NI = 4 };
    static const float4 dirs[] = {
        {0.3f, 0.1f, 1, 0}, {0.5f, 0.9f, -0.2f, 0}, {-0.6f, -1, 0.4f, 0}, {1, 0.05f, -0.3f, 0},
        // +z's four sides: x = -1, x = +1, y = +1, y = -1 (on the edge).
        {-1, 0.2f, 1, 0}, {1, -0.3f, 1, 0}, {0.1f, 1, 1, 0}, {0.35f, -1, 1, 0},
        // The same, a quarter and an eighth of a texel (of 4) inside +z.
        {-0.875f, 0.2f, 1, 0}, {-0.9375f, 0.2f, 1, 0}, {0.875f, -0.3f, 1, 0}, {0.9375f, -0.3f, 1, 0},
        {0.1f, 0.875f, 1, 0}, {0.1f, 0.9375f, 1, 0}, {0.35f, -0.875f, 1, 0}, {0.35f, -0.9375f, 1, 0},
        // Edges of the other faces: +x/-z, -x/+y, +y/-z, -y/-x.
        {1, 0.6f, -0.7f, 0}, {1, 0.6f, -0.9375f, 0}, {-1, 0.9375f, 0.3f, 0}, {-0.2f, 1, -0.9375f, 0},
        {-0.9375f, -1, 0.55f, 0},
        // Corners: on them, and an eighth of a texel inside (on +z, +x, -y).
        {-1, 1, 1, 0}, {1, -1, -1, 0}, {-0.9375f, 0.9375f, 1, 0}, {1, -0.9375f, -0.9375f, 0},
        {0.9375f, -1, 0.9375f, 0},
    };
    const int nd = sizeof(dirs) / sizeof(dirs[0]);
    float4 *d_dirs = NULL;
    float *d_out = NULL;
    T(cudaMalloc(&d_dirs, sizeof(dirs)));
    T(cudaMalloc(&d_out, 4 * nd * sizeof(float)));
    NEED(d_dirs);
    NEED(d_out);
    T(cudaMemcpy(d_dirs, dirs, sizeof(dirs), cudaMemcpyHostToDevice));
    static float out[2][2][4 * 32];
    for (int filter = 0; filter < 2; filter++) {
        for (int seamless = 0; seamless < 2; seamless++) {
            cudaTextureObject_t t =
                texture_over(cube, filter ? cudaFilterModeLinear : cudaFilterModePoint, seamless);
            lookup<<<1, 32>>>(t, d_dirs, d_out, nd);
            T(cudaGetLastError());
            T(cudaMemcpy(out[filter][seamless], d_out, nd * sizeof(float), cudaMemcpyDeviceToHost));
            char what[64];
            snprintf(what, sizeof(what), "%s, %s", filter ? "linear" : "point",
                     seamless ? "seamless" : "clamped at faces");
            print_bits(what, out[filter][seamless], nd);
            T(cudaDestroyTextureObject(t));
        }
    }
    // Point samples never leave their face; linear ones inside a face do not either.
    int same_point = 0, same_inside = 0;
    for (int i = 0; i < nd; i++) same_point += out[0][0][i] == out[0][1][i];
    for (int i = 0; i < NI; i++) same_inside += out[1][0][i] == out[1][1][i];
    OUT("point samples equal with and without the flag: %d of %d", same_point, nd);
    OUT("linear samples inside a face equal: %d of %d", same_inside, NI);
    CHECK(same_point == nd);
    CHECK(same_inside == NI);

    for (int seamless = 0; seamless < 2; seamless++) {
        cudaTextureObject_t t = texture_over(cube, cudaFilterModePoint, seamless);
        gather<<<1, 32>>>(t, d_dirs, d_out, nd);
        T(cudaGetLastError());
        static float g[4 * 32];
        T(cudaMemcpy(g, d_out, 4 * nd * sizeof(float), cudaMemcpyDeviceToHost));
        print_bits(seamless ? "tld4.r, seamless" : "tld4.r, clamped at faces", g, 4 * nd);
        T(cudaDestroyTextureObject(t));
    }
    T(cudaFree(d_dirs));
    T(cudaFree(d_out));
    T(cudaFreeArray(cube));
    return finish();
}
