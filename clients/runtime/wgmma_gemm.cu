// nvcc-arch: sm_90a
// A small Hopper GEMM in the style of NVIDIA's samples, without TMA: D = alpha·A·B +
// beta·C (128x128x128, f16 inputs, f32 accumulators) with warpgroup MMA. Each block of
// 128 threads (one warpgroup) computes a 64x64 tile of D: for each 64-wide slice of K,
// the threads write A's and B's tiles into shared memory in the layout wgmma reads (K-
// major, 128-byte swizzle; or without swizzle, in 8x16-byte core matrices), build the
// matrix descriptors by hand, and issue wgmma.fence, four wgmma.mma_async m64n64k16 (the
// descriptors' start 32 bytes on each time, or two core matrices), commit_group and
// wait_group. Checked against the host's GEMM within a tolerance (the tensor cores add
// in their own order and rounding); PASS or FAIL per layout. Built with
// `-arch=sm_90a -gencode arch=compute_90a,code=compute_90a` (the first line says so).
#include <cuda_fp16.h>
#include <math.h>
#include "common.h"

enum { M = 128, N = 128, KD = 128, TM = 64, TN = 64, TK = 64 };

// Swizzle<3,4,3>, the 128-byte mode: a shared address's 16-byte chunk (bits 4-6) XOR its
// row in the 1024-byte pattern (bits 7-9).
__device__ unsigned swizzle128(unsigned addr) { return addr ^ (((addr >> 7) & 7) << 4); }

// Where element (row, k) of a K-major tile (rows x 64 halves) lies, from the tile's start:
// 128-byte swizzle: rows of 128 bytes, 8-row groups 1024 bytes apart (SBO); no swizzle:
// core matrices of 8 rows x 16 bytes, the next 8 halves of K 128 bytes on (LBO), the next
// 8 rows 1024 bytes on (SBO).
__device__ unsigned tile_offset(unsigned base, unsigned row, unsigned k, bool swizzled) {
    if (swizzled) return swizzle128(base + row * 128 + k * 2) - base;
    return (row / 8) * 1024 + (k / 8) * 128 + (row % 8) * 16 + (k % 8) * 2;
}

// The 64-bit matrix descriptor: start address, LBO and SBO (each >> 4), swizzle mode in
// bits 62-63 (1: 128-byte).
__device__ unsigned long long descriptor(const void *tile, unsigned lbo, unsigned sbo, bool swizzled) {
    unsigned long long addr = (unsigned)__cvta_generic_to_shared(tile);
    return ((addr & 0x3ffff) >> 4) | ((unsigned long long)(lbo >> 4) << 16) |
           ((unsigned long long)(sbo >> 4) << 32) | ((unsigned long long)(swizzled ? 1 : 0) << 62);
}

#define D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])

// a: M x KD row-major; b: N x KD (B column-major); c, d: M x N row-major.
__global__ void wgmma_gemm(const half *a, const half *b, const float *c, float *out, float alpha, float beta,
                           bool swizzled) {
#if !defined(__CUDA_ARCH_FEAT_SM90_ALL)
    // The compute_90 PTX nvcc adds beside sm_90a's has no wgmma: a GPU runs the sm_90a code.
    __trap();
#else
    __shared__ __align__(1024) half sa[TM * TK], sb[TN * TK];
    const unsigned bm = blockIdx.x / (N / TN), bn = blockIdx.x % (N / TN);
    const unsigned sa_base = (unsigned)__cvta_generic_to_shared(sa), sb_base = (unsigned)__cvta_generic_to_shared(sb);
    float d[32];
    for (int i = 0; i < 32; i++) d[i] = 0.0f;
    for (unsigned k0 = 0; k0 < KD; k0 += TK) {
        __syncthreads();  // the previous slice's MMAs are done (wait_group 0) before it is overwritten
        for (unsigned i = threadIdx.x; i < TM * TK; i += blockDim.x) {
            unsigned r = i / TK, k = i % TK;
            sa[tile_offset(sa_base, r, k, swizzled) / 2] = a[(bm * TM + r) * KD + k0 + k];
            sb[tile_offset(sb_base, r, k, swizzled) / 2] = b[(bn * TN + r) * KD + k0 + k];
        }
        __syncthreads();
        // The threads' writes, made visible to the tensor cores' (async proxy's) reads.
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        for (unsigned s = 0; s < TK / 16; s++) {
            // K step s: 32 bytes further into the swizzled rows, or two core matrices on.
            unsigned step = swizzled ? 32 * s : 256 * s;
            unsigned long long da = descriptor((char *)sa + step, swizzled ? 16 : 128, 1024, swizzled);
            unsigned long long db = descriptor((char *)sb + step, swizzled ? 16 : 128, 1024, swizzled);
            asm volatile(
                "{\n .reg .pred p;\n setp.ne.b32 p, %34, 0;\n"
                " wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
                "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
                "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 0, 0;\n}"
                : D8(0), D8(8), D8(16), D8(24)
                : "l"(da), "l"(db), "r"(k0 > 0 || s > 0 ? 1 : 0));
        }
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    }
    // The accumulator fragment: this thread's element i is row 16·warp + lane/4 + 8·((i/2)%2),
    // column 8·(i/4) + 2·(lane%4) + i%2 of the 64x64 tile.
    unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int i = 0; i < 32; i++) {
        unsigned row = bm * TM + 16 * warp + lane / 4 + 8 * ((i / 2) % 2);
        unsigned col = bn * TN + 8 * (i / 4) + 2 * (lane % 4) + i % 2;
        out[row * N + col] = alpha * d[i] + beta * c[row * N + col];
    }
#endif
}

static unsigned seed = 4242;
static float rnd(void) {  // [-1, 1)
    seed = seed * 1103515245u + 12345u;
    return (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
}

int main(void) {
    const float alpha = 1.5f, beta = -0.5f;
    static half ah[M * KD], bh[N * KD];
    static float a[M * KD], b[N * KD], c[M * N], got[M * N];
    static double want[M * N];
    for (int i = 0; i < M * KD; i++) { ah[i] = __float2half(rnd()); a[i] = __half2float(ah[i]); }
    for (int i = 0; i < N * KD; i++) { bh[i] = __float2half(rnd()); b[i] = __half2float(bh[i]); }
    for (int i = 0; i < M * N; i++) c[i] = rnd();
    // The host's D, in double, and each element's magnitude (1 + sum of |a||b|) for the
    // tolerance.
    static double mag[M * N];
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0, m = 1;
            for (int k = 0; k < KD; k++) {
                s += (double)a[i * KD + k] * b[j * KD + k];
                m += fabs((double)a[i * KD + k] * b[j * KD + k]);
            }
            want[i * N + j] = alpha * s + beta * c[i * N + j];
            mag[i * N + j] = m;
        }

    void *da = NULL, *db = NULL, *dc = NULL, *dd = NULL;
    T(cudaMalloc(&da, sizeof ah));
    T(cudaMalloc(&db, sizeof bh));
    T(cudaMalloc(&dc, sizeof c));
    T(cudaMalloc(&dd, sizeof got));
    NEED(da && db && dc && dd);
    T(cudaMemcpy(da, ah, sizeof ah, cudaMemcpyHostToDevice));
    T(cudaMemcpy(db, bh, sizeof bh, cudaMemcpyHostToDevice));
    T(cudaMemcpy(dc, c, sizeof c, cudaMemcpyHostToDevice));
    static float first[M * N];
    for (int swizzled = 1; swizzled >= 0; swizzled--) {
        T(cudaMemset(dd, 0, sizeof got));
        wgmma_gemm<<<(M / TM) * (N / TN), 128>>>((half *)da, (half *)db, (float *)dc, (float *)dd, alpha, beta,
                                                  swizzled);
        T(cudaGetLastError());
        T(cudaDeviceSynchronize());
        T(cudaMemcpy(got, dd, sizeof got, cudaMemcpyDeviceToHost));
        int bad = 0;
        for (int i = 0; i < M * N; i++) bad += !(fabs(got[i] - want[i]) <= 1e-5 * mag[i]);
        OUT("%s: %d of %d elements outside 1e-5 of their terms' magnitude: %s",
            swizzled ? "128-byte swizzle" : "no swizzle", bad, M * N, bad ? "FAIL" : "PASS");
        CHECK(bad == 0);
        if (swizzled) memcpy(first, got, sizeof got);
    }
    // The same products in the same order, whatever the layout: the same bits.
    CHECK(memcmp(first, got, sizeof got) == 0);
    T(cudaFree(da));
    T(cudaFree(db));
    T(cudaFree(dc));
    T(cudaFree(dd));
    return finish();
}
