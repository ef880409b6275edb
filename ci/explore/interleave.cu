// Exploration, not a test: what an interleaved tensor map's cp.async.bulk.tensor load
// moves on the GPU. For each case, the mbarrier's expected byte count is tried from 16 up
// until the phase completes (only the exact count completes it), then the box is printed
// as tensor element indices (-1: a word the load left alone, -2: zero). Run with
//   nvcc -arch=sm_90 -o /tmp/il ci/explore/interleave.cu -lcuda && /tmp/il
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

typedef CUresult (*EncodeTiled)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
enum { BOX_WORDS = 4096 };
__device__ unsigned completed;

__global__ void load_4d(const __grid_constant__ CUtensorMap tm, int x, int y, int z, int v, unsigned bytes,
                        unsigned *out) {
    __shared__ alignas(1024) unsigned box[BOX_WORDS];
    __shared__ alignas(8) unsigned long long bar;
    unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
    unsigned s = (unsigned)__cvta_generic_to_shared(box);
    for (int i = threadIdx.x; i < BOX_WORDS; i += blockDim.x) box[i] = 0xabababab;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"(b));
        asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" ::"r"(b), "r"(bytes));
        asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3, %4, %5}], [%6];" ::"r"(s),
                     "l"(&tm), "r"(x), "r"(y), "r"(z), "r"(v), "r"(b)
                     : "memory");
        unsigned done = 0;
        for (int t = 0; t < (1 << 12) && !done; t++)
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                         : "=r"(done)
                         : "r"(b)
                         : "memory");
        completed = done;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < BOX_WORDS; i += blockDim.x) out[i] = box[i];
}

struct Case {
    const char *name;
    int elem;
    CUtensorMapInterleave il;
    CUtensorMapSwizzle sw;
    cuuint64_t dims[4];
    cuuint32_t box[4], es[4];
    int at[4];
};

int main(void) {
    cuInit(0);
    void *fn = NULL;
    cudaDriverEntryPointQueryResult q;
    cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q);
    EncodeTiled encode = (EncodeTiled)fn;
    unsigned char *d = NULL;
    unsigned *dout = NULL;
    cudaMalloc(&d, 1 << 20);
    cudaMalloc(&dout, BOX_WORDS * 4);
    static const Case cases[] = {
        {"16B f16 box 8x2x1x1", 2, CU_TENSOR_MAP_INTERLEAVE_16B, CU_TENSOR_MAP_SWIZZLE_NONE, {8, 12, 7, 3}, {8, 2, 1, 1}, {1, 1, 1, 1}, {0, 0, 0, 0}},
        {"16B f16 box 8x4x2x1", 2, CU_TENSOR_MAP_INTERLEAVE_16B, CU_TENSOR_MAP_SWIZZLE_NONE, {8, 12, 7, 3}, {8, 4, 2, 1}, {1, 1, 1, 1}, {0, 0, 0, 0}},
        {"16B f16 box 1x4x2x1", 2, CU_TENSOR_MAP_INTERLEAVE_16B, CU_TENSOR_MAP_SWIZZLE_NONE, {8, 12, 7, 3}, {1, 4, 2, 1}, {1, 1, 1, 1}, {0, 0, 0, 0}},
        {"16B f32 box 4x4x2x1", 4, CU_TENSOR_MAP_INTERLEAVE_16B, CU_TENSOR_MAP_SWIZZLE_NONE, {4, 12, 7, 3}, {4, 4, 2, 1}, {1, 1, 1, 1}, {0, 0, 0, 0}},
        {"16B f32 box 1x4x2x1", 4, CU_TENSOR_MAP_INTERLEAVE_16B, CU_TENSOR_MAP_SWIZZLE_NONE, {4, 12, 7, 3}, {1, 4, 2, 1}, {1, 1, 1, 1}, {0, 0, 0, 0}},
        {"32B f32 box 8x4x2x1", 4, CU_TENSOR_MAP_INTERLEAVE_32B, CU_TENSOR_MAP_SWIZZLE_32B, {8, 10, 6, 2}, {8, 4, 2, 1}, {1, 1, 1, 1}, {0, 0, 0, 0}},
        {"32B f32 box 8x4x2x1 no swizzle", 4, CU_TENSOR_MAP_INTERLEAVE_32B, CU_TENSOR_MAP_SWIZZLE_NONE, {8, 10, 6, 2}, {8, 4, 2, 1}, {1, 1, 1, 1}, {0, 0, 0, 0}},
        {"32B f32 box 2x4x2x1", 4, CU_TENSOR_MAP_INTERLEAVE_32B, CU_TENSOR_MAP_SWIZZLE_32B, {8, 10, 6, 2}, {2, 4, 2, 1}, {1, 1, 1, 1}, {0, 0, 0, 0}},
        {"16B f16 box 8x4x2x1 at 0,6,5,1", 2, CU_TENSOR_MAP_INTERLEAVE_16B, CU_TENSOR_MAP_SWIZZLE_NONE, {8, 12, 7, 3}, {8, 4, 2, 1}, {1, 1, 1, 1}, {0, 10, 5, 1}},
    };
    static unsigned char host[1 << 20];
    for (const Case &k : cases) {
        long count = (long)(k.dims[0] * k.dims[1] * k.dims[2] * k.dims[3]);
        for (long i = 0; i < count; i++) {
            unsigned v = k.elem == 4 ? 0x01000000u + (unsigned)i : 0x0400u + (unsigned)(i % 0x7000);
            memcpy(host + i * k.elem, &v, k.elem);
        }
        cudaMemcpy(d, host, count * k.elem, cudaMemcpyHostToDevice);
        cuuint64_t strides[3] = {k.dims[0] * k.elem, k.dims[0] * k.dims[1] * k.elem,
                                 k.dims[0] * k.dims[1] * k.dims[2] * k.elem};
        alignas(64) CUtensorMap tm;
        CUresult r = encode(&tm, k.elem == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4, d,
                            k.dims, strides, k.box, k.es, k.il, k.sw, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        printf("== %s: encode %d\n", k.name, (int)r);
        if (r) continue;
        unsigned found = 0;
        for (unsigned bytes = 16; bytes <= 8192 && !found; bytes += 16) {
            unsigned zero = 0;
            cudaMemcpyToSymbol(completed, &zero, 4);
            load_4d<<<1, 128>>>(tm, k.at[0], k.at[1], k.at[2], k.at[3], bytes, dout);
            cudaError_t e = cudaDeviceSynchronize();
            if (e) { printf("  launch: %s\n", cudaGetErrorString(e)); return 1; }
            unsigned c = 0;
            cudaMemcpyFromSymbol(&c, completed, 4);
            if (c) found = bytes;
        }
        printf("  completes at %u bytes\n", found);
        static unsigned got[BOX_WORDS];
        cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost);
        int last = BOX_WORDS - 1;
        while (last >= 0 && got[last] == 0xabababau) last--;
        for (int i = 0; i <= last; i++) {
            if (k.elem == 4) {
                if (got[i] == 0xabababau) printf(" -1"); else if (got[i] == 0) printf(" z"); else printf(" %d", (int)(got[i] - 0x01000000u));
            } else {
                for (int h = 0; h < 2; h++) {
                    unsigned short v = (unsigned short)(got[i] >> (16 * h));
                    if (v == 0xabab) printf(" -1"); else if (v == 0) printf(" z"); else printf(" %d", (int)(v - 0x400));
                }
            }
            if ((i + 1) % 16 == 0) printf("\n");
        }
        printf("\n");
    }
    return 0;
}
