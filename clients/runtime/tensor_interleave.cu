// Interleaved tiled tensor maps (CU_TENSOR_MAP_INTERLEAVE_16B and _32B): NC/8HWC8 tensors
// of f16 (a 16-byte slice of 8 channels) and NC/8HWC8 of f32 (a 32-byte slice, with the
// 32B swizzle cuda.h requires), boxes loaded with cp.async.bulk.tensor.4d past the
// tensor's edges, with a traversal stride on W, each checked against the host's model
// (one slice a row of the box, packed as a tiled box is, rows swizzled as the map says);
// then what cuTensorMapEncodeTiled answers for interleaved boxes whose row is not one
// slice, and for the rules cuda.h gives interleaved maps.
#include <cuda.h>
#include "common.h"

typedef CUresult (*EncodeTiled)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

enum { BOX_WORDS = 2048 };

__device__ unsigned incomplete;

__global__ void load_4d(const __grid_constant__ CUtensorMap tm, int x, int y, int z, int v, unsigned bytes,
                        unsigned *out, int words) {
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
        asm volatile(
            "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3, %4, %5}], [%6];" ::"r"(s),
            "l"(&tm), "r"(x), "r"(y), "r"(z), "r"(v), "r"(b)
            : "memory");
        // A bounded wait: a load whose bytes never all arrive (the H200 hung here once,
        // at the first interleaved box) is said, not waited for forever.
        unsigned done = 0;
        for (int t = 0; t < (1 << 16) && !done; t++)
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                         : "=r"(done)
                         : "r"(b)
                         : "memory");
        if (!done) incomplete = 1;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < words; i += blockDim.x) out[i] = box[i];
}

struct Case {
    const char *name;
    int elem;
    CUtensorMapInterleave interleave;
    CUtensorMapSwizzle swizzle;
    cuuint64_t dims[4];  // C8, W, H, C/8
    cuuint32_t box[4], es[4];
    int at[4];
};

static unsigned element(long i, int elem) {
    return elem == 4 ? 0x01000000u + (unsigned)i : 0x0400u + (unsigned)(i % 0x7000);
}

int main(void) {
    void *fn = NULL;
    cudaDriverEntryPointQueryResult q;
    T(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q));
    NEED(fn);
    EncodeTiled encode = (EncodeTiled)fn;
    enum { TENSOR_BYTES = 1 << 18 };
    unsigned char *d = NULL;
    unsigned *dout = NULL;
    T(cudaMalloc(&d, TENSOR_BYTES));
    T(cudaMalloc(&dout, BOX_WORDS * 4));
    NEED(d && dout);
    static const Case cases[] = {
        {"16B f16 NC/8HWC8", 2, CU_TENSOR_MAP_INTERLEAVE_16B, CU_TENSOR_MAP_SWIZZLE_NONE, {8, 12, 7, 3}, {8, 8, 4, 2}, {1, 1, 1, 1}, {0, 6, 5, 1}},
        {"16B f16 W stride 2, 32B swizzle", 2, CU_TENSOR_MAP_INTERLEAVE_16B, CU_TENSOR_MAP_SWIZZLE_32B, {8, 12, 7, 3}, {8, 8, 4, 2}, {1, 2, 1, 1}, {0, -2, 0, 0}},
        {"16B f16 128B swizzle", 2, CU_TENSOR_MAP_INTERLEAVE_16B, CU_TENSOR_MAP_SWIZZLE_128B, {8, 12, 7, 3}, {8, 16, 4, 1}, {1, 1, 1, 1}, {0, 0, 2, 2}},
        {"32B f32 NC/8HWC8", 4, CU_TENSOR_MAP_INTERLEAVE_32B, CU_TENSOR_MAP_SWIZZLE_32B, {8, 10, 6, 2}, {8, 8, 4, 2}, {1, 1, 1, 1}, {0, 5, 4, 1}},
    };
    static unsigned char host[TENSOR_BYTES];
    for (const Case &k : cases) {
        long count = (long)(k.dims[0] * k.dims[1] * k.dims[2] * k.dims[3]);
        for (long i = 0; i < count; i++) {
            unsigned v = element(i, k.elem);
            memcpy(host + i * k.elem, &v, k.elem);
        }
        T(cudaMemcpy(d, host, count * k.elem, cudaMemcpyHostToDevice));
        cuuint64_t strides[3] = {k.dims[0] * k.elem, k.dims[0] * k.dims[1] * k.elem,
                                 k.dims[0] * k.dims[1] * k.dims[2] * k.elem};
        alignas(64) CUtensorMap tm;
        CUresult r = encode(&tm, k.elem == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4, d,
                            k.dims, strides, k.box, k.es, k.interleave, k.swizzle, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        OUT("%s: encode %d", k.name, (int)r);
        // A driver that does not emulate interleaved layouts says so.
        if (r == CUDA_ERROR_NOT_SUPPORTED) continue;
        CHECK(r == CUDA_SUCCESS);
        if (r != CUDA_SUCCESS) continue;
        unsigned n[4];
        for (int i = 0; i < 4; i++) n[i] = (k.box[i] + k.es[i] - 1) / k.es[i];
        unsigned elems = n[0] * n[1] * n[2] * n[3], bytes = elems * k.elem;
        int words = (int)((bytes + 3) / 4);
        load_4d<<<1, 128>>>(tm, k.at[0], k.at[1], k.at[2], k.at[3], bytes, dout, words);
        T(cudaGetLastError());
        // A driver that does not emulate boxes past an interleaved tensor's edge ends the
        // kernel (cumock's mock: the H200 neither filled nor completed them, below).
        if (T(cudaDeviceSynchronize()) != cudaSuccess) {
            OUT("  the load ended the context: no more loads");
            break;
        }
        unsigned stuck = 0;
        T(cudaMemcpyFromSymbol(&stuck, incomplete, sizeof stuck));
        if (stuck) {
            OUT("  the load did not complete: its mbarrier phase never passed");
            unsigned zero = 0;
            T(cudaMemcpyToSymbol(incomplete, &zero, sizeof zero));
            continue;
        }
        static unsigned got[BOX_WORDS], want[BOX_WORDS];
        T(cudaMemcpy(got, dout, words * 4, cudaMemcpyDeviceToHost));
        memset(want, 0xab, sizeof want);
        unsigned span = k.swizzle == CU_TENSOR_MAP_SWIZZLE_128B ? 3 : k.swizzle == CU_TENSOR_MAP_SWIZZLE_64B ? 2
                                                              : k.swizzle == CU_TENSOR_MAP_SWIZZLE_32B   ? 1
                                                                                                          : 0;
        unsigned e = 0;
        for (unsigned iv = 0; iv < n[3]; iv++)
            for (unsigned iz = 0; iz < n[2]; iz++)
                for (unsigned iy = 0; iy < n[1]; iy++)
                    for (unsigned ix = 0; ix < n[0]; ix++, e++) {
                        long g[4] = {k.at[0] + (long)(ix * k.es[0]), k.at[1] + (long)(iy * k.es[1]),
                                     k.at[2] + (long)(iz * k.es[2]), k.at[3] + (long)(iv * k.es[3])};
                        bool inside = true;
                        long lin = 0, mul = 1;
                        for (int i = 0; i < 4; i++) {
                            if (g[i] < 0 || g[i] >= (long)k.dims[i]) inside = false;
                            lin += g[i] * mul;
                            mul *= (long)k.dims[i];
                        }
                        unsigned v = inside ? element(lin, k.elem) : 0;
                        unsigned off = e * k.elem;
                        off ^= ((off >> 7) & ((1u << span) - 1)) << 4;
                        memcpy((unsigned char *)want + off, &v, k.elem);
                    }
        int diff = 0;
        for (int i = 0; i < words; i++)
            if (got[i] != want[i]) {
                if (diff < 8) OUT("  word %d: %08x, the model %08x", i, got[i], want[i]);
                diff++;
            }
        OUT("  %d bytes, %d words differ from the model", bytes, diff);
        CHECK(diff == 0);
    }

    // What the driver answers: boxes whose row is not one slice (the mock: not emulated),
    // and cuda.h's rules for interleaved maps.
    static const struct {
        const char *what;
        int rank, elem;
        CUtensorMapInterleave interleave;
        CUtensorMapSwizzle swizzle;
        cuuint32_t box0;
        unsigned address_off;
    } other[] = {
        {"16B, a row of 4 f16 (8 bytes)", 4, 2, CU_TENSOR_MAP_INTERLEAVE_16B, CU_TENSOR_MAP_SWIZZLE_NONE, 4, 0},
        {"16B, a row of 16 f16 (32 bytes)", 4, 2, CU_TENSOR_MAP_INTERLEAVE_16B, CU_TENSOR_MAP_SWIZZLE_NONE, 16, 0},
        {"32B, a row of 4 f32 (16 bytes)", 4, 4, CU_TENSOR_MAP_INTERLEAVE_32B, CU_TENSOR_MAP_SWIZZLE_32B, 4, 0},
        {"32B without the 32B swizzle", 4, 4, CU_TENSOR_MAP_INTERLEAVE_32B, CU_TENSOR_MAP_SWIZZLE_NONE, 8, 0},
        {"32B at an address 16 bytes off 32", 4, 4, CU_TENSOR_MAP_INTERLEAVE_32B, CU_TENSOR_MAP_SWIZZLE_32B, 8, 16},
        {"16B at rank 2", 2, 2, CU_TENSOR_MAP_INTERLEAVE_16B, CU_TENSOR_MAP_SWIZZLE_NONE, 8, 0},
    };
    for (const auto &o : other) {
        cuuint64_t dims[4] = {8, 12, 7, 3}, strides[3] = {8u * o.elem, 96u * o.elem, 672u * o.elem};
        cuuint32_t box[4] = {o.box0, 8, 4, 1}, es[4] = {1, 1, 1, 1};
        alignas(64) CUtensorMap tm;
        CUresult r = encode(&tm, o.elem == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                            o.rank, d + o.address_off, dims, strides, box, es, o.interleave, o.swizzle,
                            CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        OUT("%s: encode %d", o.what, (int)r);
    }
    T(cudaFree(d));
    T(cudaFree(dout));
    return finish();
}
