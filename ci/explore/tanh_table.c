/* The approximate functions (MUFU) on the GPU, densely, for fitting the executor to the
 * H200 bit for bit. tanh.approx.f32 was recorded so and fitted (math.rs,
 * tanh_approx_f32: a table of quadratic segments in fixed point with a truncated
 * squarer); the others (ex2, lg2, rsqrt, rcp, sqrt, sin, cos .approx.f32) are within
 * PTX's bounds but not bit-equal yet (corpus f32_approx: about half their words differ
 * in the last bits), and likely built the same way.
 *
 * Inputs, for MUFU_OP (tanh if unset): for each binade 2^e of the op's range, 4096 evenly
 * spaced mantissas (x = 2^e * (1 + k / 4096)) and, unless MUFU_EVEN_ONLY is set, 4096
 * pseudo-random full mantissas, both signs where the op takes them; then a few edges
 * (0, -0, the smallest normal, 16 .. 128). tanh's recording (runs/2026-12-03-h200-
 * session19/call2) has the even ones of e = -16..3 only (MUFU_EVEN_ONLY=1). With INPUTS,
 * the inputs are that file's instead (one f32's bits in hex a line, first column):
 * ci/explore/tanh_full_mantissa.txt holds 2,209 inputs of full mantissas with the
 * executor's tanh results. Writes OUTFILE: little-endian (input bits, result bits) pairs
 * of u32.
 *   gcc -O1 -I$CUDA/include ci/explore/tanh_table.c -o mufu_table -lcuda -lm
 *   MUFU_OP=ex2 ./mufu_table ex2.bin        (ops: tanh ex2 lg2 rsqrt rcp sqrt sin cos)
 *   ./mufu_table tanh_full.bin ci/explore/tanh_full_mantissa.txt */
#include <cuda.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name, *instruction;
    int lo, hi, negative;
} OPS[] = {
    {"tanh", "tanh.approx.f32", -16, 3, 1}, {"ex2", "ex2.approx.f32", -20, 7, 1},
    {"lg2", "lg2.approx.f32", -12, 12, 0},  {"rsqrt", "rsqrt.approx.f32", -6, 6, 0},
    {"rcp", "rcp.approx.f32", -6, 6, 1},    {"sqrt", "sqrt.approx.f32", -6, 6, 0},
    {"sin", "sin.approx.f32", -16, 5, 1},   {"cos", "cos.approx.f32", -16, 5, 1},
};

static const char *PTX_FORMAT =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry mufu_all(.param .u64 in, .param .u64 out, .param .u32 n)\n"
    "{\n"
    "  .reg .b32 %%r<4>; .reg .b64 %%rd<8>; .reg .f32 %%f<3>; .reg .pred %%p;\n"
    "  mov.u32 %%r1, %%ctaid.x; mov.u32 %%r2, %%ntid.x; mov.u32 %%r3, %%tid.x;\n"
    "  mad.lo.s32 %%r1, %%r1, %%r2, %%r3;\n"
    "  ld.param.u32 %%r2, [n]; setp.ge.u32 %%p, %%r1, %%r2; @%%p bra DONE;\n"
    "  ld.param.u64 %%rd1, [in]; ld.param.u64 %%rd2, [out];\n"
    "  mul.wide.u32 %%rd3, %%r1, 4; add.s64 %%rd4, %%rd1, %%rd3; add.s64 %%rd5, %%rd2, %%rd3;\n"
    "  ld.global.f32 %%f1, [%%rd4];\n"
    "  %s %%f2, %%f1;\n"
    "  st.global.f32 [%%rd5], %%f2;\n"
    "DONE:\n  ret;\n}\n";

#define CK(x)                                                              \
    do {                                                                   \
        CUresult r_ = (x);                                                 \
        if (r_) { fprintf(stderr, "%s = %d\n", #x, (int)r_); exit(1); } \
    } while (0)

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    const char *want = getenv("MUFU_OP") ? getenv("MUFU_OP") : "tanh";
    int op = -1;
    for (int i = 0; i < (int)(sizeof OPS / sizeof *OPS); i++)
        if (!strcmp(OPS[i].name, want)) op = i;
    if (op < 0) {
        fprintf(stderr, "MUFU_OP: one of tanh ex2 lg2 rsqrt rcp sqrt sin cos\n");
        return 2;
    }
    int even_only = getenv("MUFU_EVEN_ONLY") != NULL;
    unsigned n = 0, cap = (unsigned)(OPS[op].hi - OPS[op].lo + 1) * 4 * 8192 + 64;
    float *in = malloc(cap * sizeof *in), *out = malloc(cap * sizeof *out);
    uint32_t seed = 12345;
    for (int e = OPS[op].lo; e <= OPS[op].hi; e++)
        for (int k = 0; k < (even_only ? 4096 : 8192); k++) {
            float x;
            if (k < 4096) {
                x = ldexpf(1.0f + k / 4096.0f, e);
            } else {
                seed = seed * 1103515245u + 12345u;
                uint32_t bits = (uint32_t)(e + 127) << 23 | ((seed >> 4) & 0x7fffff);
                memcpy(&x, &bits, 4);
            }
            in[n++] = x;
            if (OPS[op].negative) in[n++] = -x;
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
    char ptx[2048];
    snprintf(ptx, sizeof ptx, PTX_FORMAT, OPS[op].instruction);
    CUdevice d;
    CUcontext c;
    CUmodule m;
    CUfunction f;
    CUdeviceptr din, dout;
    CK(cuInit(0));
    CK(cuDeviceGet(&d, 0));
    CK(cuDevicePrimaryCtxRetain(&c, d));
    CK(cuCtxSetCurrent(c));
    CK(cuModuleLoadData(&m, ptx));
    CK(cuModuleGetFunction(&f, m, "mufu_all"));
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
    printf("%s: %u values\n", OPS[op].instruction, n);
    return 0;
}
