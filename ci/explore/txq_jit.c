/* Which txq queries the H200's driver JIT compiles (runtime program texture_queries saw
 * cudaErrorSymbolNotFound for a kernel of txq sampler queries on a texture object, and
 * CUDA_ERROR_NOT_FOUND from cuModuleGetFunction for the format queries): one PTX module
 * per query, each loaded eagerly with the JIT's error log and its function asked for.
 *   gcc -I$CUDA/include ci/explore/txq_jit.c -lcuda -o txq_jit && ./txq_jit */
#include <cuda.h>
#include <stdio.h>
#include <string.h>

static const char *queries[] = {
    "width", "height", "depth", "num_mipmap_levels", "filter_mode", "addr_mode_0",
    "addr_mode_1", "addr_mode_2", "normalized_coords", "force_unnormalized_coords",
    "channel_data_type", "channel_order", "num_samples", "array_size",
};

int main(void) {
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) {
        printf("no device\n");
        return 1;
    }
    for (unsigned i = 0; i < sizeof queries / sizeof *queries; i++) {
        char ptx[1024];
        snprintf(ptx, sizeof ptx,
                 ".version 8.0\n.target sm_90\n.address_size 64\n"
                 ".visible .entry q(.param .u64 t, .param .u64 out)\n{\n"
                 "  .reg .b32 %%r<2>;\n  .reg .b64 %%rd<3>;\n"
                 "  ld.param.u64 %%rd1, [t];\n  ld.param.u64 %%rd2, [out];\n"
                 "  txq.%s.b32 %%r1, [%%rd1];\n  st.global.u32 [%%rd2], %%r1;\n  ret;\n}\n",
                 queries[i]);
        char log[2048] = {0}, info[2048] = {0};
        CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                               CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
        void *vals[] = {log, (void *)(size_t)sizeof log, info, (void *)(size_t)sizeof info};
        CUmodule m;
        CUresult r = cuModuleLoadDataEx(&m, ptx, 4, opts, vals);
        const char *name = "?";
        cuGetErrorName(r, &name);
        printf("txq.%s: load %s", queries[i], name);
        if (r == CUDA_SUCCESS) {
            CUfunction f;
            CUresult g = cuModuleGetFunction(&f, m, "q");
            cuGetErrorName(g, &name);
            printf(", function %s", name);
            cuModuleUnload(m);
        }
        for (char *p = log; *p; p++)
            if (*p == '\n') *p = ' ';
        printf("%s%s\n", log[0] ? "; log: " : "", log);
    }
    return 0;
}
