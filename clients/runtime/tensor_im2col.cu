// Im2col tensor maps (cuTensorMapEncodeIm2col) and the loads that use them
// (cp.async.bulk.tensor.{3,4,5}d...im2col): NWC, NHWC and NDHWC tensors of f32 and f16,
// padded bounding boxes, im2col offsets, traversal strides, zero and NaN fills, 64B and
// 128B swizzles, walks that wrap into the next image and past the batch; each box checked
// against the host's model of the PTX ISA's "im2col mode" (the filter base walks the
// bounding box W first, then H, D and N; each pixel its channels from C coordinate c),
// and the differences printed. Then cuTensorMapEncodeIm2col's answers to arguments
// cuda.h rules out.
#include <cuda.h>
#include "common.h"

typedef CUresult (*EncodeIm2col)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                 const cuuint64_t *, const int *, const int *, cuuint32_t, cuuint32_t,
                                 const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

enum { BOX_WORDS = 2048 };

// One im2col box: coordinates c, w[, h[, d]], n and the offsets as the rank takes them;
// the shared buffer starts as 0xabababab so that what the copy left is seen too.
__global__ void load_im2col(const __grid_constant__ CUtensorMap tm, int rank, int c, int w, int h, int d, int n,
                            unsigned short ow, unsigned short oh, unsigned short od, unsigned bytes,
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
        if (rank == 3)
            asm volatile(
                "cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                " [%0], [%1, {%2, %3, %4}], [%5], {%6};" ::"r"(s),
                "l"(&tm), "r"(c), "r"(w), "r"(n), "r"(b), "h"(ow)
                : "memory");
        else if (rank == 4)
            asm volatile(
                "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                " [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};" ::"r"(s),
                "l"(&tm), "r"(c), "r"(w), "r"(h), "r"(n), "r"(b), "h"(ow), "h"(oh)
                : "memory");
        else
            asm volatile(
                "cp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
                " [%0], [%1, {%2, %3, %4, %5, %6}], [%7], {%8, %9, %10};" ::"r"(s),
                "l"(&tm), "r"(c), "r"(w), "r"(h), "r"(d), "r"(n), "r"(b), "h"(ow), "h"(oh), "h"(od)
                : "memory");
        asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.shared.b64 p, [%0], 0; @!p bra W; }" ::"r"(b)
                     : "memory");
    }
    __syncthreads();
    for (int i = threadIdx.x; i < words; i += blockDim.x) out[i] = box[i];
}

struct Case {
    const char *name;
    int rank, elem;  // elem: bytes, 4 (f32) or 2 (f16)
    cuuint64_t dims[5];
    int lower[3], upper[3];
    unsigned channels, pixels;
    cuuint32_t estrides[5];
    CUtensorMapSwizzle swizzle;
    CUtensorMapFloatOOBfill fill;
    int coords[5];  // c, w, h, d, n (the ones the rank has)
    unsigned short offs[3];
};

// Element i of the tensor: distinct bits that no fill gives (a f32 above 2^-126, a f16
// above 2^-14).
static unsigned element(long i, int elem) {
    return elem == 4 ? 0x01000000u + (unsigned)i : 0x0400u + (unsigned)(i % 0x7000);
}

// The box as the PTX ISA's im2col mode describes it, in the buffer's bytes.
static void model(const Case &k, unsigned char *bytes) {
    int sp = k.rank - 2;
    long base[5] = {k.coords[0], k.coords[1], k.coords[2], k.coords[3], k.coords[4]};
    // base[1..sp] are W, H, D; the batch is base[4].
    long stride[5] = {0};
    stride[0] = k.elem;
    for (int i = 1; i < k.rank; i++) stride[i] = stride[i - 1] * (long)k.dims[i - 1];
    unsigned span = k.swizzle == CU_TENSOR_MAP_SWIZZLE_128B ? 3 : k.swizzle == CU_TENSOR_MAP_SWIZZLE_64B ? 2
                                                          : k.swizzle == CU_TENSOR_MAP_SWIZZLE_32B   ? 1
                                                                                                      : 0;
    long nmax = (long)k.dims[k.rank - 1];
    for (unsigned p = 0; p < k.pixels; p++) {
        for (unsigned ch = 0; ch < k.channels; ch++) {
            long g[5];
            g[0] = base[0] + ch;
            for (int s = 0; s < sp; s++) g[s + 1] = base[s + 1] + k.offs[s];
            g[k.rank - 1] = base[4];
            bool inside = true;
            long at = 0;
            for (int i = 0; i < k.rank; i++) {
                if (g[i] < 0 || g[i] >= (long)k.dims[i]) inside = false;
                at += g[i] * stride[i];
            }
            (void)nmax;
            unsigned v = inside ? element(at / k.elem, k.elem)
                                : k.fill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE ? 0u
                                                                              : 0x7ff77ff7u;
            unsigned off = (p * k.channels + ch) * k.elem;
            off ^= ((off >> 7) & ((1u << span) - 1)) << 4;
            memcpy(bytes + off, &v, k.elem);
        }
        // The next filter base: W first, wrapping inside the bounding box.
        int s = 0;
        for (;;) {
            if (s == sp) {
                // N by its traversal stride too (as the H200 does: recorded).
                base[4] += k.estrides[k.rank - 1];
                break;
            }
            long hi = (long)k.dims[s + 1] - 1 + k.upper[s];
            base[s + 1] += k.estrides[s + 1];
            if (base[s + 1] <= hi) break;
            base[s + 1] = k.lower[s];
            s++;
        }
    }
}

int main(void) {
    void *fn = NULL;
    cudaDriverEntryPointQueryResult q;
    T(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeIm2col", &fn, 12000, cudaEnableDefault, &q));
    NEED(fn);
    EncodeIm2col encode = (EncodeIm2col)fn;
    enum { TENSOR_BYTES = 1 << 20 };
    unsigned char *d = NULL;
    unsigned *dout = NULL;
    T(cudaMalloc(&d, TENSOR_BYTES));
    T(cudaMalloc(&dout, BOX_WORDS * 4));
    NEED(d && dout);
    const CUtensorMapFloatOOBfill ZERO = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
    const CUtensorMapFloatOOBfill NAN_ = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    const CUtensorMapSwizzle NONE = CU_TENSOR_MAP_SWIZZLE_NONE;
    static const Case cases[] = {
        // NWC, a 1-D filter of 4 with padding 2 (bases -2..=18), at its tap 1.
        {"3d f32 padded", 3, 4, {8, 20, 2}, {-2}, {-1}, 8, 32, {1, 1, 1}, NONE, ZERO, {0, -2, 0, 0, 0}, {1}},
        // NHWC, 3x3 filter, padding 1, tap (2, 1), channels 4..11 of 16.
        {"4d f32 3x3", 4, 4, {16, 7, 6, 2}, {-1, -1}, {-1, -1}, 8, 64, {1, 1, 1, 1}, NONE, ZERO, {4, -1, -1, 0, 0}, {2, 1}},
        // From the last bases of image 1 on: past the batch, NaN-filled.
        {"4d f32 past the batch", 4, 4, {16, 7, 6, 2}, {-1, -1}, {-1, -1}, 8, 48, {1, 1, 1, 1}, NONE, NAN_, {8, 3, 4, 0, 1}, {1, 1}},
        // Channels 12..19 of 16: half of each pixel past C.
        {"4d f32 channels past C", 4, 4, {16, 7, 6, 2}, {0, 0}, {0, 0}, 8, 24, {1, 1, 1, 1}, NONE, NAN_, {12, 2, 3, 0, 0}, {0, 0}},
        // f16, 32 channels (64 bytes) under the 64B swizzle, no padding, a 3x3 filter's tap (1, 2).
        {"4d f16 64B swizzle", 4, 2, {32, 9, 5, 1}, {0, 0}, {-2, -2}, 32, 40, {1, 1, 1, 1}, CU_TENSOR_MAP_SWIZZLE_64B, ZERO, {0, 0, 0, 0, 0}, {1, 2}},
        // f32, 32 channels (128 bytes) under the 128B swizzle.
        {"4d f32 128B swizzle", 4, 4, {32, 5, 4, 2}, {-1, -1}, {-1, -1}, 32, 24, {1, 1, 1, 1}, CU_TENSOR_MAP_SWIZZLE_128B, ZERO, {0, -1, -1, 0, 0}, {1, 1}},
        // Traversal strides 2 in W and H (a stride-2 convolution's bases).
        {"4d f32 strides 2", 4, 4, {8, 9, 7, 2}, {-1, -1}, {-1, -1}, 8, 40, {1, 2, 2, 1}, NONE, ZERO, {0, -1, -1, 0, 0}, {1, 0}},
        // A traversal stride on N (the ISA names only D, H and W; the H200 steps N by it).
        {"4d f32 stride on N", 4, 4, {8, 3, 2, 4}, {0, 0}, {0, 0}, 8, 20, {1, 1, 1, 2}, NONE, ZERO, {0, 0, 0, 0, 0}, {0, 0}},
        // NDHWC, 3x3x3 filter, padding 1, tap (1, 1, 1).
        {"5d f32 3x3x3", 5, 4, {8, 4, 3, 3, 2}, {-1, -1, -1}, {-1, -1, -1}, 8, 80, {1, 1, 1, 1, 1}, NONE, ZERO, {0, -1, -1, -1, 0}, {1, 1, 1}},
        // A base right of the lower corner, the upper corner past the tensor (padding 2 right).
        {"5d f16 wide box", 5, 2, {16, 5, 2, 2, 1}, {-1, 0, 0}, {2, 0, 0}, 16, 30, {1, 1, 1, 1, 1}, NONE, NAN_, {0, 2, 0, 0, 0}, {0, 0, 0}},
    };
    static unsigned char host[TENSOR_BYTES];
    for (const Case &k : cases) {
        // The tensor, packed.
        long count = 1;
        for (int i = 0; i < k.rank; i++) count *= (long)k.dims[i];
        for (long i = 0; i < count; i++) {
            unsigned v = element(i, k.elem);
            memcpy(host + i * k.elem, &v, k.elem);
        }
        T(cudaMemcpy(d, host, count * k.elem, cudaMemcpyHostToDevice));
        cuuint64_t strides[4];
        strides[0] = k.dims[0] * k.elem;
        for (int i = 1; i < k.rank - 1; i++) strides[i] = strides[i - 1] * k.dims[i];
        alignas(64) CUtensorMap tm;
        CUresult r = encode(&tm, k.elem == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                            k.rank, d, k.dims, strides, k.lower, k.upper, k.channels, k.pixels, k.estrides,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, k.swizzle, CU_TENSOR_MAP_L2_PROMOTION_NONE, k.fill);
        OUT("%s: encode %d", k.name, (int)r);
        CHECK(r == CUDA_SUCCESS);
        if (r != CUDA_SUCCESS) continue;
        unsigned bytes = k.pixels * k.channels * k.elem;
        int words = (int)((bytes + 3) / 4);
        int sp = k.rank - 2;
        load_im2col<<<1, 128>>>(tm, k.rank, k.coords[0], k.coords[1], sp > 1 ? k.coords[2] : 0,
                                sp > 2 ? k.coords[3] : 0, k.coords[4], k.offs[0], k.offs[1], k.offs[2], bytes, dout,
                                words);
        T(cudaGetLastError());
        T(cudaDeviceSynchronize());
        static unsigned got[BOX_WORDS], want[BOX_WORDS];
        T(cudaMemcpy(got, dout, words * 4, cudaMemcpyDeviceToHost));
        memset(want, 0xab, sizeof want);
        model(k, (unsigned char *)want);
        int diff = 0;
        for (int i = 0; i < words; i++)
            if (got[i] != want[i]) {
                if (diff < 8) OUT("  word %d: %08x, the model %08x", i, got[i], want[i]);
                diff++;
            }
        OUT("  %d bytes, %d words differ from the model", bytes, diff);
        CHECK(diff == 0);
    }

    // cuda.h's requirements: what the driver answers to each broken one.
    static const struct {
        const char *what;
        int rank;
        int lower0, upper0;
        unsigned channels, pixels;
        CUtensorMapSwizzle swizzle;
        CUtensorMapDataType type;
        CUtensorMapFloatOOBfill fill;
        CUtensorMapInterleave interleave;
    } bad[] = {
        {"valid (the control)", 4, -1, -1, 8, 64, NONE, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, ZERO, CU_TENSOR_MAP_INTERLEAVE_NONE},
        {"rank 2", 2, -1, -1, 8, 64, NONE, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, ZERO, CU_TENSOR_MAP_INTERLEAVE_NONE},
        {"rank 6", 6, -1, -1, 8, 64, NONE, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, ZERO, CU_TENSOR_MAP_INTERLEAVE_NONE},
        {"lower corner -129 at rank 4", 4, -129, -1, 8, 64, NONE, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, ZERO, CU_TENSOR_MAP_INTERLEAVE_NONE},
        {"upper corner 128 at rank 4", 4, -1, 128, 8, 64, NONE, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, ZERO, CU_TENSOR_MAP_INTERLEAVE_NONE},
        {"an empty bounding box", 4, 5, -6, 8, 64, NONE, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, ZERO, CU_TENSOR_MAP_INTERLEAVE_NONE},
        {"0 channels", 4, -1, -1, 0, 64, NONE, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, ZERO, CU_TENSOR_MAP_INTERLEAVE_NONE},
        {"257 channels", 4, -1, -1, 257, 64, NONE, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, ZERO, CU_TENSOR_MAP_INTERLEAVE_NONE},
        {"0 pixels", 4, -1, -1, 8, 0, NONE, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, ZERO, CU_TENSOR_MAP_INTERLEAVE_NONE},
        {"1024 pixels", 4, -1, -1, 8, 1024, NONE, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, ZERO, CU_TENSOR_MAP_INTERLEAVE_NONE},
        {"1025 pixels", 4, -1, -1, 8, 1025, NONE, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, ZERO, CU_TENSOR_MAP_INTERLEAVE_NONE},
        {"64 f32 channels under the 128B swizzle", 4, -1, -1, 64, 16, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, ZERO, CU_TENSOR_MAP_INTERLEAVE_NONE},
        {"a NaN fill of u32", 4, -1, -1, 8, 64, NONE, CU_TENSOR_MAP_DATA_TYPE_UINT32, NAN_, CU_TENSOR_MAP_INTERLEAVE_NONE},
        {"a 32B interleave without the 32B swizzle", 4, -1, -1, 8, 64, NONE, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, ZERO, CU_TENSOR_MAP_INTERLEAVE_32B},
    };
    for (const auto &b : bad) {
        cuuint64_t dims[6] = {16, 7, 6, 2, 2, 2}, strides[5] = {64, 448, 2688, 5376, 10752};
        cuuint32_t es[6] = {1, 1, 1, 1, 1, 1};
        int lower[4] = {b.lower0, -1, -1, -1}, upper[4] = {b.upper0, -1, -1, -1};
        alignas(64) CUtensorMap tm;
        CUresult r = encode(&tm, b.type, b.rank, d, dims, strides, lower, upper, b.channels, b.pixels, es,
                            b.interleave, b.swizzle, CU_TENSOR_MAP_L2_PROMOTION_NONE, b.fill);
        OUT("%s: encode %d", b.what, (int)r);
    }
    T(cudaFree(d));
    T(cudaFree(dout));
    return finish();
}
