/* tanh.approx.f32 on the GPU, densely, for fitting the executor to the H200's MUFU.TANH
 * (ptx/corpus/expected-differences.txt: the executor computes tanh exactly and rounds; the
 * H200's relative error oscillates up to about 2^-16.7). Inputs: for each binade 2^e,
 * e = -16 .. 3, 4096 evenly spaced mantissas (x = 2^e * (1 + k / 4096)), and their
 * negatives; plus 0, the smallest normals and 16 .. 128. Writes OUTFILE: little-endian
 * (input bits, result bits) pairs of u32. With INPUTS, the inputs are that file's instead
 * (one f32's bits in hex a line, first column): ci/explore/tanh_full_mantissa.txt holds
 * 2,209 inputs of full mantissas, each with the executor's model's result (math.rs,
 * tanh_approx_f32), which the 12-bit inputs above could not settle.
 *   gcc -O1 -I$CUDA/include ci/explore/tanh_table.c -o tanh_table -lcuda -lm
 *   ./tanh_table out.bin [INPUTS] */
#include <cuda.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *PTX =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry tanh_all(.param .u64 in, .param .u64 out, .param .u32 n)\n"
    "{\n"
    "  .reg .b32 %r<4>; .reg .b64 %rd<8>; .reg .f32 %f<3>; .reg .pred %p;\n"
    "  mov.u32 %r1, %ctaid.x; mov.u32 %r2, %ntid.x; mov.u32 %r3, %tid.x;\n"
    "  mad.lo.s32 %r1, %r1, %r2, %r3;\n"
    "  ld.param.u32 %r2, [n]; setp.ge.u32 %p, %r1, %r2; @%p bra DONE;\n"
    "  ld.param.u64 %rd1, [in]; ld.param.u64 %rd2, [out];\n"
    "  mul.wide.u32 %rd3, %r1, 4; add.s64 %rd4, %rd1, %rd3; add.s64 %rd5, %rd2, %rd3;\n"
    "  ld.global.f32 %f1, [%rd4];\n"
    "  tanh.approx.f32 %f2, %f1;\n"
    "  st.global.f32 [%rd5], %f2;\n"
    "DONE:\n  ret;\n}\n";

#define CK(x)                                                              \
    do {                                                                   \
        CUresult r_ = (x);                                                 \
        if (r_) { fprintf(stderr, "%s = %d\n", #x, (int)r_); exit(1); } \
    } while (0)

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    unsigned n = 0, cap = 2 * 20 * 4096 + 64;
    float *in = malloc(cap * sizeof *in), *out = malloc(cap * sizeof *out);
    for (int e = -16; e <= 3; e++)
        for (int k = 0; k < 4096; k++) {
            float x = ldexpf(1.0f + k / 4096.0f, e);
            in[n++] = x;
            in[n++] = -x;
        }
    in[n++] = 0.0f;
    in[n++] = -0.0f;
    in[n++] = 1.17549435e-38f;
    for (int k = 16; k <= 128; k += 8) in[n++] = (float)k;
    if (argc > 2) {
        FILE *list = fopen(argv[2], "r");
        if (!list) return 1;
        unsigned bits;
        n = 0;
        while (n < cap && fscanf(list, "%x%*[^\n]", &bits) == 1) memcpy(&in[n++], &bits, 4);
        fclose(list);
    }
    CUdevice d;
    CUcontext c;
    CUmodule m;
    CUfunction f;
    CUdeviceptr din, dout;
    CK(cuInit(0));
    CK(cuDeviceGet(&d, 0));
    CK(cuDevicePrimaryCtxRetain(&c, d));
    CK(cuCtxSetCurrent(c));
    CK(cuModuleLoadData(&m, PTX));
    CK(cuModuleGetFunction(&f, m, "tanh_all"));
    CK(cuMemAlloc(&din, n * 4));
    CK(cuMemAlloc(&dout, n * 4));
    CK(cuMemcpyHtoD(din, in, n * 4));
    void *args[] = {&din, &dout, &n};
    CK(cuLaunchKernel(f, (n + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    CK(cuMemcpyDtoH(out, dout, n * 4));
    FILE *o = fopen(argv[1], "wb");
    if (!o) return 1;
    for (unsigned i = 0; i < n; i++) {
        uint32_t pair[2];
        memcpy(&pair[0], &in[i], 4);
        memcpy(&pair[1], &out[i], 4);
        fwrite(pair, 4, 2, o);
    }
    fclose(o);
    printf("%u values\n", n);
    return 0;
}
