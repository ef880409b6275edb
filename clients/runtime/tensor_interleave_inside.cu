// Interleaved tiled tensor maps (CU_TENSOR_MAP_INTERLEAVE_16B and _32B) with boxes wholly
// inside the tensor: NC/8HWC8 tensors of f16 (16-byte slices) and of f32 (32-byte
// slices), loaded with cp.async.bulk.tensor.4d (no swizzle, 32B, 128B; a traversal
// stride on W) and stored back with its shared-to-global form, each checked against the
// model (one slice a row of the box, rows W first, then H, then C/8, swizzled as a tiled
// box is). tensor_interleave (recorded) found the H200's boxes past the tensor's edge
// neither filled nor, for 16B, completed; this program records what it does inside, and
// last dumps one 32B box past the edge over memory marked 0xee, for the next fit.
#include <cuda.h>
#include "common.h"

typedef CUresult (*EncodeTiled)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

enum { BOX_WORDS = 2048, TENSOR_BYTES = 1 << 16 };

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
        // A bounded wait: a load whose bytes never all arrive is said, not waited for.
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

// Box words 0x5000 + i stored at (x, y, z, v).
__global__ void store_4d(const __grid_constant__ CUtensorMap tm, int x, int y, int z, int v) {
    __shared__ alignas(1024) unsigned box[BOX_WORDS];
    for (int i = threadIdx.x; i < BOX_WORDS; i += blockDim.x) box[i] = 0x5000 + i;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3, %4}], [%5];" ::"l"(&tm),
                     "r"(x), "r"(y), "r"(z), "r"(v), "r"((unsigned)__cvta_generic_to_shared(box))
                     : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
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

static unsigned span_bits(CUtensorMapSwizzle s) {
    return s == CU_TENSOR_MAP_SWIZZLE_128B ? 3 : s == CU_TENSOR_MAP_SWIZZLE_64B ? 2 : s == CU_TENSOR_MAP_SWIZZLE_32B ? 1 : 0;
}

// Calls f(box byte offset after the swizzle, linear index of the tensor element, inside?)
// for each element of the box, in the model's order.
template <typename F>
static void each(const Case &k, F f) {
    unsigned n[4];
    for (int i = 0; i < 4; i++) n[i] = (k.box[i] + k.es[i] - 1) / k.es[i];
    unsigned span = span_bits(k.swizzle), e = 0;
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
                    unsigned off = e * k.elem;
                    off ^= ((off >> 7) & ((1u << span) - 1)) << 4;
                    f(off, lin, inside);
                }
}

static unsigned box_bytes(const Case &k) {
    unsigned elems = 1;
    for (int i = 0; i < 4; i++) elems *= (k.box[i] + k.es[i] - 1) / k.es[i];
    return elems * k.elem;
}

int main(void) {
    void *fn = NULL;
    cudaDriverEntryPointQueryResult q;
    T(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q));
    NEED(fn);
    EncodeTiled encode = (EncodeTiled)fn;
    unsigned char *d = NULL;
    unsigned *dout = NULL;
    T(cudaMalloc(&d, TENSOR_BYTES));
    T(cudaMalloc(&dout, BOX_WORDS * 4));
    NEED(d && dout);
    static const Case cases[] = {
        {"16B f16", 2, CU_TENSOR_MAP_INTERLEAVE_16B, CU_TENSOR_MAP_SWIZZLE_NONE, {8, 12, 7, 3}, {8, 8, 4, 2}, {1, 1, 1, 1}, {0, 2, 1, 0}},
        {"16B f16, W stride 2, 32B swizzle", 2, CU_TENSOR_MAP_INTERLEAVE_16B, CU_TENSOR_MAP_SWIZZLE_32B, {8, 12, 7, 3}, {8, 8, 4, 2}, {1, 2, 1, 1}, {0, 1, 2, 1}},
        {"16B f16, 128B swizzle", 2, CU_TENSOR_MAP_INTERLEAVE_16B, CU_TENSOR_MAP_SWIZZLE_128B, {8, 12, 7, 3}, {8, 8, 4, 1}, {1, 1, 1, 1}, {0, 4, 3, 2}},
        {"32B f32, 32B swizzle", 4, CU_TENSOR_MAP_INTERLEAVE_32B, CU_TENSOR_MAP_SWIZZLE_32B, {8, 10, 6, 2}, {8, 8, 4, 2}, {1, 1, 1, 1}, {0, 1, 1, 0}},
        {"32B f32, no swizzle", 4, CU_TENSOR_MAP_INTERLEAVE_32B, CU_TENSOR_MAP_SWIZZLE_NONE, {8, 10, 6, 2}, {8, 8, 4, 2}, {1, 1, 1, 1}, {0, 2, 2, 0}},
    };
    static const Case edge = {"32B f32 past W and H", 4, CU_TENSOR_MAP_INTERLEAVE_32B, CU_TENSOR_MAP_SWIZZLE_32B,
                              {8, 10, 6, 2}, {8, 8, 4, 2}, {1, 1, 1, 1}, {0, 5, 4, 1}};
    static unsigned char host[TENSOR_BYTES];
    static unsigned got[BOX_WORDS], want[BOX_WORDS];
    // Each case loads its box, then stores box words 0x5000 + i at the same corner.
    for (int c = 0; c <= (int)(sizeof cases / sizeof cases[0]); c++) {
        const Case &k = c < (int)(sizeof cases / sizeof cases[0]) ? cases[c] : edge;
        bool is_edge = &k == &edge;
        long count = (long)(k.dims[0] * k.dims[1] * k.dims[2] * k.dims[3]);
        memset(host, 0xee, sizeof host);
        for (long i = 0; i < count; i++) {
            unsigned v = element(i, k.elem);
            memcpy(host + i * k.elem, &v, k.elem);
        }
        T(cudaMemcpy(d, host, TENSOR_BYTES, cudaMemcpyHostToDevice));
        cuuint64_t strides[3] = {k.dims[0] * k.elem, k.dims[0] * k.dims[1] * k.elem,
                                 k.dims[0] * k.dims[1] * k.dims[2] * k.elem};
        alignas(64) CUtensorMap tm;
        CUresult r = encode(&tm, k.elem == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4, d,
                            k.dims, strides, k.box, k.es, k.interleave, k.swizzle, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        OUT("%s: encode %d", k.name, (int)r);
        CHECK(r == CUDA_SUCCESS);
        if (r != CUDA_SUCCESS) continue;
        unsigned bytes = box_bytes(k);
        int words = (int)((bytes + 3) / 4);
        load_4d<<<1, 128>>>(tm, k.at[0], k.at[1], k.at[2], k.at[3], bytes, dout, words);
        T(cudaGetLastError());
        if (T(cudaDeviceSynchronize()) != cudaSuccess) {
            // A driver that does not emulate boxes past the edge ends the kernel (cumock).
            OUT("  the load ended the context");
            break;
        }
        unsigned stuck = 0;
        T(cudaMemcpyFromSymbol(&stuck, incomplete, sizeof stuck));
        if (stuck) OUT("  the load did not complete: its mbarrier phase never passed");
        T(cudaMemcpy(got, dout, words * 4, cudaMemcpyDeviceToHost));
        if (is_edge) {
            // Each box row's first word: which element (0x01000000 + index), a zero fill,
            // or memory past the tensor (0xeeeeeeee).
            for (int row = 0; row < words / 8; row += 8) {
                char line[160];
                int at = 0;
                for (int i = row; i < row + 8 && i < words / 8; i++)
                    at += snprintf(line + at, sizeof line - at, " %08x", got[8 * i]);
                OUT("  rows %d-%d:%s", row, row + 7, line);
            }
            unsigned zero = 0;
            T(cudaMemcpyToSymbol(incomplete, &zero, sizeof zero));
            continue;
        }
        memset(want, 0xab, sizeof want);
        each(k, [&](unsigned off, long lin, bool inside) {
            unsigned v = inside ? element(lin, k.elem) : 0;
            memcpy((unsigned char *)want + off, &v, k.elem);
        });
        int diff = 0;
        for (int i = 0; i < words; i++)
            if (got[i] != want[i]) {
                if (diff < 8) OUT("  word %d: %08x, the model %08x", i, got[i], want[i]);
                diff++;
            }
        OUT("  load: %u bytes, %d words differ from the model", bytes, diff);
        CHECK(diff == 0 && !stuck);
        if (stuck) {
            unsigned zero = 0;
            T(cudaMemcpyToSymbol(incomplete, &zero, sizeof zero));
        }
        store_4d<<<1, 128>>>(tm, k.at[0], k.at[1], k.at[2], k.at[3]);
        T(cudaGetLastError());
        T(cudaDeviceSynchronize());
        static unsigned char after[TENSOR_BYTES], model[TENSOR_BYTES];
        T(cudaMemcpy(after, d, TENSOR_BYTES, cudaMemcpyDeviceToHost));
        memcpy(model, host, sizeof model);
        static unsigned shared_words[BOX_WORDS];
        for (int i = 0; i < BOX_WORDS; i++) shared_words[i] = 0x5000 + i;
        each(k, [&](unsigned off, long lin, bool inside) {
            if (inside) memcpy(model + lin * k.elem, (unsigned char *)shared_words + off, k.elem);
        });
        int bad = 0;
        for (int i = 0; i < TENSOR_BYTES; i++) bad += after[i] != model[i];
        OUT("  store: %d bytes differ from the model", bad);
        CHECK(bad == 0);
    }
    T(cudaFree(d));
    T(cudaFree(dout));
    return finish();
}
