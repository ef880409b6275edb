// A probe, for the H200's record: what `txq` answers about a texture object's sampler
// and format, which the PTX ISA names but does not number. (1) Unified mode (inline PTX
// over a cudaTextureObject_t): filter_mode, addr_mode_0..2, normalized_coords and
// force_unnormalized_coords over textures of each filter and address mode, normalized
// or not. The mock answers CUDA's enumerations (CUfilter_mode: point 0, linear 1;
// CUaddress_mode: wrap 0, clamp 1, mirror 2, border 3), normalized_coords 1 or 0 and
// force_unnormalized_coords 0. (2) channel_data_type, channel_order and num_samples over
// textures of several formats, in a PTX module loaded with cuModuleLoadData: the ISA ties
// their values to "the source language API" (its table lists OpenCL's); the mock refuses
// the module (recorded: the H200 loads it, then cuModuleGetFunction finds no function,
// its JIT compiling none of these queries; clients/runtime/goldens/differences.txt). (3) Independent mode: txq of module-scope
// `.samplerref`s, whose initialisers name the values (`nearest`, `linear`, `wrap`,
// `mirror`, `clamp_ogl`, `clamp_to_edge`, `clamp_to_border`): the numbers the hardware
// gives those names; the mock refuses the module. The driver's calls come through
// cudaGetDriverEntryPointByVersion, as texture_forms gets them.
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

static CUresult drv(const char *call, CUresult r) {
    const char *name = NULL;
    getErrorName(r, &name);
    printf("%s -> %s\n", call, name ? name : "?");
    fflush(stdout);
    return r;
}
#define D(call) drv(#call, (call))

// (1) The six sampler queries of unified mode.
__global__ void sampler_queries(cudaTextureObject_t t, uint32_t *out) {
    uint32_t v[6];
    asm volatile("txq.filter_mode.b32 %0, [%1];" : "=r"(v[0]) : "l"(t));
    asm volatile("txq.addr_mode_0.b32 %0, [%1];" : "=r"(v[1]) : "l"(t));
    asm volatile("txq.addr_mode_1.b32 %0, [%1];" : "=r"(v[2]) : "l"(t));
    asm volatile("txq.addr_mode_2.b32 %0, [%1];" : "=r"(v[3]) : "l"(t));
    asm volatile("txq.normalized_coords.b32 %0, [%1];" : "=r"(v[4]) : "l"(t));
    asm volatile("txq.force_unnormalized_coords.b32 %0, [%1];" : "=r"(v[5]) : "l"(t));
    for (int k = 0; k < 6; k++) out[k] = v[k];
}

// (2) The format queries, loaded apart (the mock refuses them).
static const char *FORMAT_QUERIES =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    ".visible .entry formats(.param .u64 t, .param .u64 out)\n"
    "{\n"
    "  .reg .b32 %r<4>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [t];\n"
    "  ld.param.u64 %rd2, [out];\n"
    "  txq.channel_data_type.b32 %r1, [%rd1];\n"
    "  txq.channel_order.b32 %r2, [%rd1];\n"
    "  txq.num_samples.b32 %r3, [%rd1];\n"
    "  st.global.u32 [%rd2], %r1;\n"
    "  st.global.u32 [%rd2+4], %r2;\n"
    "  st.global.u32 [%rd2+8], %r3;\n"
    "  ret;\n"
    "}\n";

// (3) Independent mode: samplers whose initialisers name every value.
static const char *SAMPLERREF_QUERIES =
    ".version 8.0\n"
    ".target sm_90, texmode_independent\n"
    ".address_size 64\n"
    ".global .samplerref a = { filter_mode = linear, addr_mode_0 = wrap, addr_mode_1 = mirror, addr_mode_2 = clamp_to_edge };\n"
    ".global .samplerref b = { filter_mode = nearest, addr_mode_0 = clamp_to_border, addr_mode_1 = clamp_ogl, addr_mode_2 = wrap, force_unnormalized_coords = 1 };\n"
    ".visible .entry samplers(.param .u64 out)\n"
    "{\n"
    "  .reg .b32 %r<6>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd2, [out];\n"
    "  txq.filter_mode.b32 %r1, [a];\n"
    "  txq.addr_mode_0.b32 %r2, [a];\n"
    "  txq.addr_mode_1.b32 %r3, [a];\n"
    "  txq.addr_mode_2.b32 %r4, [a];\n"
    "  txq.force_unnormalized_coords.b32 %r5, [a];\n"
    "  st.global.v4.u32 [%rd2], {%r1, %r2, %r3, %r4};\n"
    "  st.global.u32 [%rd2+16], %r5;\n"
    "  txq.filter_mode.b32 %r1, [b];\n"
    "  txq.addr_mode_0.b32 %r2, [b];\n"
    "  txq.addr_mode_1.b32 %r3, [b];\n"
    "  txq.addr_mode_2.b32 %r4, [b];\n"
    "  txq.force_unnormalized_coords.b32 %r5, [b];\n"
    "  st.global.v4.u32 [%rd2+32], {%r1, %r2, %r3, %r4};\n"
    "  st.global.u32 [%rd2+48], %r5;\n"
    "  ret;\n"
    "}\n";

static cudaTextureObject_t texture(cudaArray_t a, cudaTextureFilterMode f, const cudaTextureAddressMode m[3],
                                   int normalized, cudaTextureReadMode read) {
    cudaResourceDesc res;
    memset(&res, 0, sizeof(res));
    res.resType = cudaResourceTypeArray;
    res.res.array.array = a;
    cudaTextureDesc td;
    memset(&td, 0, sizeof(td));
    td.filterMode = f;
    for (int k = 0; k < 3; k++) td.addressMode[k] = m[k];
    td.normalizedCoords = normalized;
    td.readMode = read;
    cudaTextureObject_t t = 0;
    T(cudaCreateTextureObject(&t, &res, &td, NULL));
    return t;
}

static void print_words(const char *what, const uint32_t *v, int n) {
    printf("    %s:", what);
    for (int i = 0; i < n; i++) printf(" %u", v[i]);
    printf("\n");
    fflush(stdout);
}

int main(void) {
    uint32_t *d_out = NULL;
    T(cudaMalloc(&d_out, 64 * sizeof(uint32_t)));
    NEED(d_out);

    // (1) A 4 x 4 x 4 float array (three address modes matter), under each filter and
    // address mode, normalized and not (wrap and mirror need normalized coordinates).
    cudaChannelFormatDesc f1 = cudaCreateChannelDesc<float>();
    cudaArray_t a = NULL;
    T(cudaMalloc3DArray(&a, &f1, make_cudaExtent(4, 4, 4), 0));
    NEED(a);
    struct Case {
        const char *name;
        cudaTextureFilterMode f;
        cudaTextureAddressMode m[3];
        int normalized;
    } cases[] = {
        {"point, clamp x3, unnormalized", cudaFilterModePoint, {cudaAddressModeClamp, cudaAddressModeClamp, cudaAddressModeClamp}, 0},
        {"linear, border x3, unnormalized", cudaFilterModeLinear, {cudaAddressModeBorder, cudaAddressModeBorder, cudaAddressModeBorder}, 0},
        {"linear, wrap/mirror/clamp, normalized", cudaFilterModeLinear, {cudaAddressModeWrap, cudaAddressModeMirror, cudaAddressModeClamp}, 1},
        {"point, border/wrap/mirror, normalized", cudaFilterModePoint, {cudaAddressModeBorder, cudaAddressModeWrap, cudaAddressModeMirror}, 1},
    };
    printf("(1) filter_mode, addr_mode_0, addr_mode_1, addr_mode_2, normalized_coords, force_unnormalized_coords\n");
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cudaTextureObject_t t = texture(a, cases[i].f, cases[i].m, cases[i].normalized, cudaReadModeElementType);
        T(cudaMemset(d_out, 0xff, 64 * sizeof(uint32_t)));
        sampler_queries<<<1, 1>>>(t, d_out);
        T(cudaGetLastError());
        uint32_t out[6];
        T(cudaMemcpy(out, d_out, sizeof(out), cudaMemcpyDeviceToHost));
        print_words(cases[i].name, out, 6);
        T(cudaDestroyTextureObject(t));
    }

    if (entry_points()) return 1;
    // (2) Formats: float, uchar4 read as normalized floats and as integers, short2, half.
    printf("(2) channel_data_type, channel_order, num_samples\n");
    CUmodule mod = NULL;
    CUfunction fn = NULL;
    if (D(moduleLoadData(&mod, FORMAT_QUERIES)) == CUDA_SUCCESS && D(moduleGetFunction(&fn, mod, "formats")) == CUDA_SUCCESS) {
        struct Format {
            const char *name;
            cudaChannelFormatDesc desc;
            cudaTextureReadMode read;
        } formats[] = {
            {"float", cudaCreateChannelDesc<float>(), cudaReadModeElementType},
            {"float4", cudaCreateChannelDesc<float4>(), cudaReadModeElementType},
            {"uchar4, normalized float", cudaCreateChannelDesc<uchar4>(), cudaReadModeNormalizedFloat},
            {"uchar4, element type", cudaCreateChannelDesc<uchar4>(), cudaReadModeElementType},
            {"short2, element type", cudaCreateChannelDesc<short2>(), cudaReadModeElementType},
            {"int, element type", cudaCreateChannelDesc<int>(), cudaReadModeElementType},
            {"half", cudaCreateChannelDescHalf(), cudaReadModeElementType},
        };
        const cudaTextureAddressMode clamp[3] = {cudaAddressModeClamp, cudaAddressModeClamp, cudaAddressModeClamp};
        for (unsigned i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
            cudaArray_t b = NULL;
            T(cudaMallocArray(&b, &formats[i].desc, 4, 4, 0));
            NEED(b);
            cudaTextureObject_t t = texture(b, cudaFilterModePoint, clamp, 0, formats[i].read);
            T(cudaMemset(d_out, 0xff, 64 * sizeof(uint32_t)));
            CUdeviceptr o = (CUdeviceptr)d_out;
            unsigned long long th = t;
            void *args[] = {&th, &o};
            D(launchKernel(fn, 1, 1, 1, 1, 1, 1, 0, 0, args, NULL));
            T(cudaDeviceSynchronize());
            uint32_t out[3];
            T(cudaMemcpy(out, d_out, sizeof(out), cudaMemcpyDeviceToHost));
            char what[96];
            snprintf(what, sizeof(what), "%s (as hex: %#x %#x)", formats[i].name, out[0], out[1]);
            print_words(what, out, 3);
            T(cudaDestroyTextureObject(t));
            T(cudaFreeArray(b));
        }
        D(moduleUnload(mod));
    }

    // (3) Independent mode's samplers.
    printf("(3) sampler a: linear, wrap, mirror, clamp_to_edge; b: nearest, clamp_to_border, clamp_ogl, wrap, "
           "force_unnormalized_coords = 1\n");
    if (D(moduleLoadData(&mod, SAMPLERREF_QUERIES)) == CUDA_SUCCESS && D(moduleGetFunction(&fn, mod, "samplers")) == CUDA_SUCCESS) {
        T(cudaMemset(d_out, 0xff, 64 * sizeof(uint32_t)));
        CUdeviceptr o = (CUdeviceptr)d_out;
        void *args[] = {&o};
        D(launchKernel(fn, 1, 1, 1, 1, 1, 1, 0, 0, args, NULL));
        T(cudaDeviceSynchronize());
        uint32_t out[13];
        T(cudaMemcpy(out, d_out, sizeof(out), cudaMemcpyDeviceToHost));
        print_words("a: filter_mode, addr_mode_0..2, force_unnormalized_coords", out, 5);
        print_words("b: filter_mode, addr_mode_0..2, force_unnormalized_coords", out + 8, 5);
        D(moduleUnload(mod));
    }
    T(cudaFreeArray(a));
    T(cudaFree(d_out));
    return finish();
}
