/* What `istypep` answers on the H200 for CUDA's handles (the PTX ISA says only "whether
 * a register points to an opaque variable of the specified type"): a texture object, a
 * surface object, 0 and a device pointer, each asked .texref, .samplerref and .surfref in
 * one kernel (word k: 1 if true, 0 if false). Also whether the JIT compiles istypep at all
 * (the load's and cuModuleGetFunction's results, as ci/explore/txq_jit.c asks of txq).
 * The mock answers texref 1 for a texture object only, surfref 1 for a surface object
 * only, samplerref 0 always (ptx/tests/textures.rs, istypep_*): awaiting this recording.
 *   gcc -I$CUDA/include ci/explore/istypep.c -lcuda -o istypep && ./istypep */
#include <cuda.h>
#include <stdio.h>
#include <string.h>

static const char *PTX =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry kinds(.param .u64 h, .param .u64 out)\n{\n"
    "  .reg .pred %p<4>;\n  .reg .b32 %r<4>;\n  .reg .b64 %rd<3>;\n"
    "  ld.param.u64 %rd1, [h];\n  ld.param.u64 %rd2, [out];\n"
    "  istypep.texref %p1, %rd1;\n  istypep.samplerref %p2, %rd1;\n  istypep.surfref %p3, %rd1;\n"
    "  selp.u32 %r1, 1, 0, %p1;\n  selp.u32 %r2, 1, 0, %p2;\n  selp.u32 %r3, 1, 0, %p3;\n"
    "  st.global.v2.u32 [%rd2], {%r1, %r2};\n  st.global.u32 [%rd2+8], %r3;\n  ret;\n}\n";

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
    CUmodule m;
    CUresult r = cuModuleLoadData(&m, PTX);
    printf("load %s\n", nm(r));
    if (r) return 0;
    CUfunction f;
    r = cuModuleGetFunction(&f, m, "kinds");
    printf("function %s\n", nm(r));
    if (r) return 0;

    CUDA_ARRAY3D_DESCRIPTOR ad;
    memset(&ad, 0, sizeof ad);
    ad.Width = 4, ad.Height = 4, ad.Format = CU_AD_FORMAT_FLOAT, ad.NumChannels = 1;
    ad.Flags = CUDA_ARRAY3D_SURFACE_LDST;
    CUarray a;
    printf("array %s\n", nm(cuArray3DCreate(&a, &ad)));
    CUDA_RESOURCE_DESC res;
    memset(&res, 0, sizeof res);
    res.resType = CU_RESOURCE_TYPE_ARRAY;
    res.res.array.hArray = a;
    CUDA_TEXTURE_DESC td;
    memset(&td, 0, sizeof td);
    CUtexObject tex = 0;
    CUsurfObject surf = 0;
    printf("texture object %s\n", nm(cuTexObjectCreate(&tex, &res, &td, NULL)));
    printf("surface object %s\n", nm(cuSurfObjectCreate(&surf, &res)));
    CUdeviceptr out = 0;
    cuMemAlloc(&out, 16);
    struct { const char *name; unsigned long long h; } handles[] = {
        {"texture object", tex}, {"surface object", surf}, {"0", 0}, {"a device pointer", out}};
    printf("handle: texref samplerref surfref\n");
    for (int i = 0; i < 4; i++) {
        unsigned w[3] = {9, 9, 9};
        cuMemsetD32(out, 9, 3);
        void *args[] = {&handles[i].h, &out};
        CUresult l = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, 0, args, NULL);
        CUresult s = cuCtxSynchronize();
        cuMemcpyDtoH(w, out, sizeof w);
        printf("%s: launch %s, sync %s: %u %u %u\n", handles[i].name, nm(l), nm(s), w[0], w[1], w[2]);
    }
    return 0;
}
