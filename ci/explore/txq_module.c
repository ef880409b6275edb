/* What else a kernel the H200's JIT compiles no code for (txq.filter_mode on a texture
 * object: ci/explore/txq_jit.c) takes with it, in a module of three kernels: `width`
 * (txq.width, compiled), `sampler` (txq.filter_mode) and `calls_levels` (calls a .func
 * asking txq.num_mipmap_levels). Run once as is (lazy loading) and once with
 * CUDA_MODULE_LOADING=EAGER: whether the other kernels are found, what
 * cuModuleGetFunctionCount / cuModuleEnumerateFunctions list, what cuFuncIsLoaded and
 * cuFuncLoad answer for an enumerated handle, and cuLibraryGetKernel's answers.
 * The mock's answers (mock-driver/tests/api_gaps.rs, txq_the_jit_does_not_compile_*)
 * await this recording.
 *   gcc -I$CUDA/include ci/explore/txq_module.c -lcuda -o txq_module && ./txq_module
 *   CUDA_MODULE_LOADING=EAGER ./txq_module */
#include <cuda.h>
#include <stdio.h>

static const char *PTX =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".func (.param .b32 r) levels(.param .b64 t)\n{\n .reg .b32 %q;\n .reg .b64 %s;\n"
    " ld.param.b64 %s, [t];\n txq.num_mipmap_levels.b32 %q, [%s];\n st.param.b32 [r], %q;\n ret;\n}\n"
    ".visible .entry width(.param .u64 t, .param .u64 o)\n{\n .reg .b32 %r<2>;\n .reg .b64 %rd<3>;\n"
    " ld.param.u64 %rd1, [t];\n ld.param.u64 %rd2, [o];\n txq.width.b32 %r1, [%rd1];\n"
    " st.global.u32 [%rd2], %r1;\n ret;\n}\n"
    ".visible .entry sampler(.param .u64 t, .param .u64 o)\n{\n .reg .b32 %r<2>;\n .reg .b64 %rd<3>;\n"
    " ld.param.u64 %rd1, [t];\n ld.param.u64 %rd2, [o];\n txq.filter_mode.b32 %r1, [%rd1];\n"
    " st.global.u32 [%rd2], %r1;\n ret;\n}\n"
    ".visible .entry calls_levels(.param .u64 t)\n{\n .reg .b64 %rd<2>;\n ld.param.u64 %rd1, [t];\n"
    " {\n .param .b64 a;\n .param .b32 b;\n st.param.b64 [a], %rd1;\n call (b), levels, (a);\n }\n ret;\n}\n";

static const char *names[] = {"width", "sampler", "calls_levels"};

static const char *nm(CUresult r) {
    const char *s = "?";
    cuGetErrorName(r, &s);
    return s;
}

int main(void) {
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) {
        printf("no device\n");
        return 1;
    }
    CUmoduleLoadingMode mode;
    cuModuleGetLoadingMode(&mode);
    printf("loading mode %d\n", (int)mode);
    CUmodule m;
    CUresult r = cuModuleLoadData(&m, PTX);
    printf("module load %s\n", nm(r));
    if (r == CUDA_SUCCESS) {
        for (int i = 0; i < 3; i++) {
            CUfunction f;
            printf("cuModuleGetFunction(%s) %s\n", names[i], nm(cuModuleGetFunction(&f, m, names[i])));
        }
        unsigned n = 0;
        r = cuModuleGetFunctionCount(&n, m);
        printf("cuModuleGetFunctionCount %s: %u\n", nm(r), n);
        CUfunction fs[8];
        r = cuModuleEnumerateFunctions(fs, n < 8 ? n : 8, m);
        printf("cuModuleEnumerateFunctions %s\n", nm(r));
        for (unsigned i = 0; r == CUDA_SUCCESS && i < n && i < 8; i++) {
            const char *name = "?";
            CUresult g = cuFuncGetName(&name, fs[i]);
            CUfunctionLoadingState before = 0, after = 0;
            CUresult b = cuFuncIsLoaded(&before, fs[i]);
            CUresult l = cuFuncLoad(fs[i]);
            CUresult a = cuFuncIsLoaded(&after, fs[i]);
            printf("  [%u] name %s %s, loaded %s %d, cuFuncLoad %s, loaded %s %d\n", i, nm(g),
                   g ? "" : name, nm(b), (int)before, nm(l), nm(a), (int)after);
        }
        printf("unload %s\n", nm(cuModuleUnload(m)));
    }
    CUlibrary lib;
    r = cuLibraryLoadData(&lib, PTX, NULL, NULL, 0, NULL, NULL, 0);
    printf("library load %s\n", nm(r));
    if (r == CUDA_SUCCESS) {
        for (int i = 0; i < 3; i++) {
            CUkernel k;
            CUresult g = cuLibraryGetKernel(&k, lib, names[i]);
            CUfunction f;
            CUresult h = g ? g : cuKernelGetFunction(&f, k);
            printf("cuLibraryGetKernel(%s) %s, cuKernelGetFunction %s\n", names[i], nm(g), nm(h));
        }
        printf("library unload %s\n", nm(cuLibraryUnload(lib)));
    }
    return 0;
}
