// A probe, for the H200's record: the last forms of `tex` the PTX ISA defines for sm_90,
// which C++ does not write. (1) f16 results (`tex.2d.v4.f16.f32` and
// `tex.2d.v2.f16x2.f32`, inline PTX): the ISA does not say how the f32 result becomes
// f16; the mock rounds to nearest, ties to even. Texels at ties, past f16's range, in
// its subnormals, NaN and -0, point-sampled, and linear samples between them. (2) An
// explicit sampler (`[t, s, c]`, independent texturing mode: `.target sm_90,
// texmode_independent` and module-scope `.samplerref`s), in a PTX module loaded with
// cuModuleLoadData and launched with cuLaunchKernel over the runtime's texture object;
// the mock takes the sampler's filter and address modes in place of the texture's, and
// `force_unnormalized_coords`. (3) A texture object's handle given as the sampler
// (a `.u64` register, which ptxas takes): what the hardware makes of it is undocumented,
// and the mock refuses the module. The driver's calls come through
// cudaGetDriverEntryPointByVersion, as the tensor-map programs get theirs.
#include "common.h"
#include <cuda.h>

static decltype(&cuGetErrorName) getErrorName;
static decltype(&cuModuleLoadData) moduleLoadData;
static decltype(&cuModuleGetFunction) moduleGetFunction;
static decltype(&cuModuleUnload) moduleUnload;
static decltype(&cuLaunchKernel) launchKernel;

static int entry_points(void) {
    cudaDriverEntryPointQueryResult q;
    void *fn[5] = {NULL, NULL, NULL, NULL, NULL};
    T(cudaGetDriverEntryPointByVersion("cuGetErrorName", &fn[0], 12000, cudaEnableDefault, &q));
    T(cudaGetDriverEntryPointByVersion("cuModuleLoadData", &fn[1], 12000, cudaEnableDefault, &q));
    T(cudaGetDriverEntryPointByVersion("cuModuleGetFunction", &fn[2], 12000, cudaEnableDefault, &q));
    T(cudaGetDriverEntryPointByVersion("cuModuleUnload", &fn[3], 12000, cudaEnableDefault, &q));
    T(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &fn[4], 12000, cudaEnableDefault, &q));
    for (int i = 0; i < 5; i++) NEED(fn[i]);
    getErrorName = (decltype(getErrorName))fn[0];
    moduleLoadData = (decltype(moduleLoadData))fn[1];
    moduleGetFunction = (decltype(moduleGetFunction))fn[2];
    moduleUnload = (decltype(moduleUnload))fn[3];
    launchKernel = (decltype(launchKernel))fn[4];
    return 0;
}

static void print_bits(const char *what, const uint32_t *v, int n) {
    printf("    %s:", what);
    for (int i = 0; i < n; i++) printf(" %08x", v[i]);
    printf("\n");
    fflush(stdout);
}

static CUresult drv(const char *call, CUresult r) {
    const char *name = NULL;
    getErrorName(r, &name);
    printf("%s -> %s\n", call, name ? name : "?");
    fflush(stdout);
    return r;
}
#define D(call) drv(#call, (call))

// Thread i samples at (xs[i], 0.5): the four f16s, then the two f16x2 words.
__global__ void halves(cudaTextureObject_t t, const float *xs, uint32_t *out, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    unsigned short h[4];
    uint32_t p[2];
    asm volatile("tex.2d.v4.f16.f32 {%0, %1, %2, %3}, [%4, {%5, %6}];"
                 : "=h"(h[0]), "=h"(h[1]), "=h"(h[2]), "=h"(h[3])
                 : "l"(t), "f"(xs[i]), "f"(0.5f));
    asm volatile("tex.2d.v2.f16x2.f32 {%0, %1}, [%2, {%3, %4}];"
                 : "=r"(p[0]), "=r"(p[1])
                 : "l"(t), "f"(xs[i]), "f"(0.5f));
    out[4 * i] = h[0] | (uint32_t)h[1] << 16;
    out[4 * i + 1] = h[2] | (uint32_t)h[3] << 16;
    out[4 * i + 2] = p[0];
    out[4 * i + 3] = p[1];
}

static const char *INDEPENDENT =
    ".version 8.0\n"
    ".target sm_90, texmode_independent\n"
    ".address_size 64\n"
    ".global .samplerref lin = { filter_mode = linear, addr_mode_0 = clamp_to_edge, addr_mode_1 = clamp_to_edge };\n"
    ".global .samplerref bord = { addr_mode_0 = clamp_to_border, addr_mode_1 = clamp_to_border, filter_mode = nearest };\n"
    ".global .samplerref wrapn = { addr_mode_0 = wrap, addr_mode_1 = wrap, filter_mode = nearest };\n"
    ".global .samplerref unnorm = { force_unnormalized_coords = 1 };\n"
    ".global .samplerref partial = { addr_mode_0 = mirror };\n"
    ".visible .entry indep(.param .u64 t, .param .u64 out, .param .f32 x, .param .f32 y)\n"
    "{\n"
    "  .reg .f32 %f<8>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [t];\n"
    "  ld.param.u64 %rd2, [out];\n"
    "  ld.param.f32 %f6, [x];\n"
    "  ld.param.f32 %f7, [y];\n"
    "  tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, lin, {%f6, %f7}];\n"
    "  st.global.f32 [%rd2], %f1;\n"
    "  tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, bord, {%f6, %f7}];\n"
    "  st.global.f32 [%rd2+4], %f1;\n"
    "  tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, wrapn, {%f6, %f7}];\n"
    "  st.global.f32 [%rd2+8], %f1;\n"
    "  tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, unnorm, {%f6, %f7}];\n"
    "  st.global.f32 [%rd2+12], %f1;\n"
    "  tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, partial, {%f6, %f7}];\n"
    "  st.global.f32 [%rd2+16], %f1;\n"
    "  tld4.r.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, bord, {%f6, %f7}];\n"
    "  st.global.v4.f32 [%rd2+32], {%f1, %f2, %f3, %f4};\n"
    "  ret;\n"
    "}\n";

static const char *REGISTER_SAMPLER =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    ".visible .entry regs(.param .u64 t, .param .u64 s, .param .u64 out, .param .f32 x, .param .f32 y)\n"
    "{\n"
    "  .reg .f32 %f<8>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [t];\n"
    "  ld.param.u64 %rd3, [s];\n"
    "  ld.param.u64 %rd2, [out];\n"
    "  ld.param.f32 %f6, [x];\n"
    "  ld.param.f32 %f7, [y];\n"
    "  tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, %rd3, {%f6, %f7}];\n"
    "  st.global.f32 [%rd2], %f1;\n"
    "  ret;\n"
    "}\n";

static cudaTextureObject_t texture_over(cudaArray_t a, cudaTextureFilterMode f, cudaTextureAddressMode m, int normalized) {
    cudaResourceDesc res;
    memset(&res, 0, sizeof(res));
    res.resType = cudaResourceTypeArray;
    res.res.array.array = a;
    cudaTextureDesc td;
    memset(&td, 0, sizeof(td));
    td.filterMode = f;
    td.addressMode[0] = td.addressMode[1] = m;
    td.normalizedCoords = normalized;
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t t = 0;
    T(cudaCreateTextureObject(&t, &res, &td, NULL));
    return t;
}

int main(void) {
    // (1) One row of four-channel float texels; the sample x's are their centres, then
    // halfway between neighbours (linear).
    enum { W = 8 };
    const float inf = __builtin_inff(), nan = __builtin_nanf("");
    float row[W][4] = {
        {1.0f / 3, 1 + 1.0f / 2048, 1 + 3.0f / 2048, -2.5f},      // round down, ties to even, up
        {65504, 65519.99f, 65520, -65536},                       // f16's largest, ties to infinity
        {1e-5f, 2.98e-8f, 5.96e-8f, -1e-8f},                      // subnormals, below half the least
        {inf, -inf, nan, -0.0f},
        {0.1f, 0.2f, 0.3f, 0.7f},
        {1000.1f, 2049, 4097, 0.000061f},
        {6e-5f, -6.1e-5f, 3e-8f, 1},
        {2, 4, 8, 16},
    };
    cudaChannelFormatDesc f4 = cudaCreateChannelDesc<float4>();
    cudaArray_t a = NULL;
    T(cudaMallocArray(&a, &f4, W, 1, 0));
    NEED(a);
    T(cudaMemcpy2DToArray(a, 0, 0, row, sizeof(row), sizeof(row), 1, cudaMemcpyHostToDevice));
    enum { NX = 2 * W - 1 };
    float xs[NX];
    for (int i = 0; i < W; i++) xs[i] = i + 0.5f;
    for (int i = 0; i < W - 1; i++) xs[W + i] = i + 1.0f;
    float *d_xs = NULL;
    uint32_t *d_out = NULL;
    T(cudaMalloc(&d_xs, sizeof(xs)));
    T(cudaMalloc(&d_out, 4 * NX * sizeof(uint32_t)));
    NEED(d_xs);
    NEED(d_out);
    T(cudaMemcpy(d_xs, xs, sizeof(xs), cudaMemcpyHostToDevice));
    for (int linear = 0; linear < 2; linear++) {
        cudaTextureObject_t t = texture_over(a, linear ? cudaFilterModeLinear : cudaFilterModePoint, cudaAddressModeClamp, 0);
        halves<<<1, 32>>>(t, d_xs, d_out, NX);
        T(cudaGetLastError());
        uint32_t out[4 * NX];
        T(cudaMemcpy(out, d_out, sizeof(out), cudaMemcpyDeviceToHost));
        // The two forms give the same halves.
        int same = 0;
        for (int i = 0; i < NX; i++) same += out[4 * i] == out[4 * i + 2] && out[4 * i + 1] == out[4 * i + 3];
        OUT("%s: .v4.f16 and .v2.f16x2 agree at %d of %d", linear ? "linear" : "point", same, NX);
        CHECK(same == NX);
        print_bits(linear ? "f16 results, linear" : "f16 results, point", out, 4 * NX);
        T(cudaDestroyTextureObject(t));
    }

    // (2) and (3): a 4 x 4 ramp, texel (x, y) = 4y + x + 1, a texture that samples
    // points, clamps and reads normalized coordinates.
    float ramp[16];
    for (int i = 0; i < 16; i++) ramp[i] = (float)(i + 1);
    cudaChannelFormatDesc f1 = cudaCreateChannelDesc<float>();
    cudaArray_t b = NULL;
    T(cudaMallocArray(&b, &f1, 4, 4, 0));
    NEED(b);
    T(cudaMemcpy2DToArray(b, 0, 0, ramp, 16, 16, 4, cudaMemcpyHostToDevice));
    if (entry_points()) return 1;
    cudaTextureObject_t t = texture_over(b, cudaFilterModePoint, cudaAddressModeClamp, 1);
    cudaTextureObject_t other = texture_over(b, cudaFilterModeLinear, cudaAddressModeBorder, 1);
    CUmodule mod = NULL, regs = NULL;
    CUfunction f = NULL, g = NULL;
    if (D(moduleLoadData(&mod, INDEPENDENT)) == CUDA_SUCCESS && D(moduleGetFunction(&f, mod, "indep")) == CUDA_SUCCESS) {
        // Inside, past the right edge, past both edges, and at an unnormalized (1.5, 2.5).
        const float at[][2] = {{0.3125f, 0.125f}, {1.1f, 0.4f}, {-0.2f, 1.3f}, {1.5f, 2.5f}};
        for (int i = 0; i < 4; i++) {
            float x = at[i][0], y = at[i][1];
            CUdeviceptr o = (CUdeviceptr)d_out;
            unsigned long long th = t;
            void *args[] = {&th, &o, &x, &y};
            D(launchKernel(f, 1, 1, 1, 1, 1, 1, 0, 0, args, NULL));
            T(cudaDeviceSynchronize());
            uint32_t out[12];
            T(cudaMemcpy(out, d_out, sizeof(out), cudaMemcpyDeviceToHost));
            // Words 5 to 7 are not written.
            uint32_t shown[9] = {out[0], out[1], out[2], out[3], out[4], out[8], out[9], out[10], out[11]};
            char what[96];
            snprintf(what, sizeof(what), "(%g, %g): lin, bord, wrapn, unnorm, partial, tld4.r bord", x, y);
            print_bits(what, shown, 9);
        }
        D(moduleUnload(mod));
    }
    if (D(moduleLoadData(&regs, REGISTER_SAMPLER)) == CUDA_SUCCESS && D(moduleGetFunction(&g, regs, "regs")) == CUDA_SUCCESS) {
        // The point/clamp texture with the linear/border one's handle as the sampler.
        float x = 1.1f, y = 0.375f;
        CUdeviceptr o = (CUdeviceptr)d_out;
        unsigned long long th = t, sh = other;
        void *args[] = {&th, &sh, &o, &x, &y};
        D(launchKernel(g, 1, 1, 1, 1, 1, 1, 0, 0, args, NULL));
        T(cudaDeviceSynchronize());
        uint32_t out[1];
        T(cudaMemcpy(out, d_out, sizeof(out), cudaMemcpyDeviceToHost));
        print_bits("a texture object's handle as the sampler", out, 1);
        D(moduleUnload(regs));
    }
    T(cudaDestroyTextureObject(t));
    T(cudaDestroyTextureObject(other));
    T(cudaFree(d_xs));
    T(cudaFree(d_out));
    T(cudaFreeArray(a));
    T(cudaFreeArray(b));
    return finish();
}
