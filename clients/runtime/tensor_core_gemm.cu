// In the style of NVIDIA's simpleTensorCoreGEMM, cudaTensorCoreGemm, bf16TensorCoreGemm,
// tf32TensorCoreGemm, dmmaTensorCoreGemm and immaTensorCoreGemm: D = alpha·A·B + beta·C
// with nvcuda::wmma, A row-major and B column-major, checked against a GEMM on the host:
// within a tolerance for the floating types (the tensor cores add in their own order and
// rounding), exactly for f64 on exact inputs and for int8. The f16 GEMM also runs
// cudaTensorCoreGemm's way: tiles staged through shared memory by the whole block.
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <math.h>
#include "common.h"

using namespace nvcuda;

enum { M = 128, N = 128, KD = 128 };

// One warp per 16x16 tile of D, straight from global memory (simpleTensorCoreGEMM).
template <typename T, typename FT, int TK>
__global__ void wmma_gemm(const T *a, const T *b, const float *c, float *d, float alpha, float beta) {
    int warp_m = (blockIdx.x * blockDim.x + threadIdx.x) / 32 / (N / 16);
    int warp_n = (blockIdx.x * blockDim.x + threadIdx.x) / 32 % (N / 16);
    wmma::fragment<wmma::matrix_a, 16, 16, TK, FT, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, TK, FT, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, TK, float> acc, fc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < KD; k += TK) {
        wmma::load_matrix_sync(fa, a + warp_m * 16 * KD + k, KD);
        wmma::load_matrix_sync(fb, b + warp_n * 16 * KD + k, KD);
        if constexpr (sizeof(T) == 4) {  // tf32: the program rounds, as the sample does
            for (int i = 0; i < fa.num_elements; i++) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
            for (int i = 0; i < fb.num_elements; i++) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
        }
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::load_matrix_sync(fc, c + warp_m * 16 * N + warp_n * 16, N, wmma::mem_row_major);
    for (int i = 0; i < fc.num_elements; i++) fc.x[i] = alpha * acc.x[i] + beta * fc.x[i];
    wmma::store_matrix_sync(d + warp_m * 16 * N + warp_n * 16, fc, N, wmma::mem_row_major);
}

// cudaTensorCoreGemm's way: a block of 4 warps computes a 32x32 tile of D; each K-slice
// of A and B is first copied to shared memory by the whole block.
enum { BT = 32, BK = 32, SKEW = 8 };
__global__ void shared_gemm(const half *a, const half *b, const float *c, float *d, float alpha, float beta) {
    __shared__ __align__(32) half sa[BT][BK + SKEW], sb[BT][BK + SKEW];
    int bm = blockIdx.x / (N / BT), bn = blockIdx.x % (N / BT);
    int warp = threadIdx.x / 32, wm = warp / 2, wn = warp % 2;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k0 = 0; k0 < KD; k0 += BK) {
        for (int i = threadIdx.x; i < BT * BK; i += blockDim.x) {
            int r = i / BK, k = i % BK;
            sa[r][k] = a[(bm * BT + r) * KD + k0 + k];
            sb[r][k] = b[(bn * BT + r) * KD + k0 + k];
        }
        __syncthreads();
        for (int k = 0; k < BK; k += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
            wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
            wmma::load_matrix_sync(fa, &sa[wm * 16][k], BK + SKEW);
            wmma::load_matrix_sync(fb, &sb[wn * 16][k], BK + SKEW);
            wmma::mma_sync(acc, fa, fb, acc);
        }
        __syncthreads();
    }
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    const int row = bm * BT + wm * 16, col = bn * BT + wn * 16;
    wmma::load_matrix_sync(fc, c + row * N + col, N, wmma::mem_row_major);
    for (int i = 0; i < fc.num_elements; i++) fc.x[i] = alpha * acc.x[i] + beta * fc.x[i];
    wmma::store_matrix_sync(d + row * N + col, fc, N, wmma::mem_row_major);
}

// dmmaTensorCoreGemm's type: 8x8x4 f64 tiles.
__global__ void dmma_gemm(const double *a, const double *b, const double *c, double *d) {
    int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32, wm = w / (N / 8), wn = w % (N / 8);
    wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 8, 8, 4, double> acc;
    wmma::load_matrix_sync(acc, c + wm * 8 * N + wn * 8, N, wmma::mem_row_major);
    for (int k = 0; k < KD; k += 4) {
        wmma::load_matrix_sync(fa, a + wm * 8 * KD + k, KD);
        wmma::load_matrix_sync(fb, b + wn * 8 * KD + k, KD);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(d + wm * 8 * N + wn * 8, acc, N, wmma::mem_row_major);
}

// immaTensorCoreGemm's type: s8 in, s32 out.
__global__ void imma_gemm(const signed char *a, const signed char *b, const int *c, int *d) {
    int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32, wm = w / (N / 16), wn = w % (N / 16);
    wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, int> acc;
    wmma::load_matrix_sync(acc, c + wm * 16 * N + wn * 16, N, wmma::mem_row_major);
    for (int k = 0; k < KD; k += 16) {
        wmma::load_matrix_sync(fa, a + wm * 16 * KD + k, KD);
        wmma::load_matrix_sync(fb, b + wn * 16 * KD + k, KD);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(d + wm * 16 * N + wn * 16, acc, N, wmma::mem_row_major);
}

static unsigned seed = 12345;
static float rnd(void) {  // [-1, 1)
    seed = seed * 1103515245u + 12345u;
    return (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
}

// The host's D from A (M x K row-major) and B (N x K: column-major K x N), in double.
static void host_gemm(const float *a, const float *b, const float *c, double *d, float alpha, float beta) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < KD; k++) s += (double)a[i * KD + k] * b[j * KD + k];
            d[i * N + j] = alpha * s + beta * c[i * N + j];
        }
}

// Largest error relative to the size of the terms (sum of |a||b| per element).
static int within(const float *got, const double *want, const float *a, const float *b, double tol) {
    int bad = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double mag = 1;
            for (int k = 0; k < KD; k++) mag += fabs((double)a[i * KD + k] * b[j * KD + k]);
            if (fabs(got[i * N + j] - want[i * N + j]) > tol * mag) bad++;
        }
    return bad == 0;
}

static float bf16_round(float x) { return __bfloat162float(__float2bfloat16(x)); }
static float half_round(float x) { return __half2float(__float2half(x)); }
static float tf32_round(float x) {  // round to nearest, ties away: cvt.rna.tf32.f32
    unsigned u;
    memcpy(&u, &x, 4);
    u = (u + 0x1000u) & ~0x1fffu;
    memcpy(&x, &u, 4);
    return x;
}

int main(void) {
    const float alpha = 1.5f, beta = -0.5f;
    static float a[M * KD], b[N * KD], c[M * N], got[M * N];
    static double want[M * N];
    static half ah[M * KD], bh[N * KD];
    static __nv_bfloat16 abf[M * KD], bbf[N * KD];
    for (int i = 0; i < M * KD; i++) a[i] = rnd();
    for (int i = 0; i < N * KD; i++) b[i] = rnd();
    for (int i = 0; i < M * N; i++) c[i] = rnd();

    void *da = NULL, *db = NULL, *dc = NULL, *dd = NULL;
    T(cudaMalloc(&da, M * KD * 8));
    T(cudaMalloc(&db, N * KD * 8));
    T(cudaMalloc(&dc, M * N * 8));
    T(cudaMalloc(&dd, M * N * 8));
    NEED(da && db && dc && dd);
    T(cudaMemcpy(dc, c, sizeof c, cudaMemcpyHostToDevice));

    // f16: both kernels; the host multiplies the values rounded to half.
    static float ar[M * KD], br[N * KD];
    for (int i = 0; i < M * KD; i++) { ah[i] = __float2half(a[i]); ar[i] = half_round(a[i]); }
    for (int i = 0; i < N * KD; i++) { bh[i] = __float2half(b[i]); br[i] = half_round(b[i]); }
    host_gemm(ar, br, c, want, alpha, beta);
    T(cudaMemcpy(da, ah, sizeof ah, cudaMemcpyHostToDevice));
    T(cudaMemcpy(db, bh, sizeof bh, cudaMemcpyHostToDevice));
    wmma_gemm<half, half, 16><<<M * N / 256 / 4, 128>>>((half *)da, (half *)db, (float *)dc, (float *)dd, alpha, beta);
    T(cudaGetLastError());
    T(cudaMemcpy(got, dd, sizeof got, cudaMemcpyDeviceToHost));
    CHECK(within(got, want, ar, br, 1e-5));
    T(cudaMemset(dd, 0, M * N * 4));
    shared_gemm<<<(M / BT) * (N / BT), 128>>>((half *)da, (half *)db, (float *)dc, (float *)dd, alpha, beta);
    T(cudaGetLastError());
    static float got2[M * N];
    T(cudaMemcpy(got2, dd, sizeof got2, cudaMemcpyDeviceToHost));
    CHECK(within(got2, want, ar, br, 1e-5));
    // The same sums in the same tiles: the two kernels agree bit for bit.
    CHECK(memcmp(got, got2, sizeof got) == 0);

    // bf16.
    for (int i = 0; i < M * KD; i++) { abf[i] = __float2bfloat16(a[i]); ar[i] = bf16_round(a[i]); }
    for (int i = 0; i < N * KD; i++) { bbf[i] = __float2bfloat16(b[i]); br[i] = bf16_round(b[i]); }
    host_gemm(ar, br, c, want, alpha, beta);
    T(cudaMemcpy(da, abf, sizeof abf, cudaMemcpyHostToDevice));
    T(cudaMemcpy(db, bbf, sizeof bbf, cudaMemcpyHostToDevice));
    wmma_gemm<__nv_bfloat16, __nv_bfloat16, 16><<<M * N / 256 / 4, 128>>>((__nv_bfloat16 *)da, (__nv_bfloat16 *)db, (float *)dc, (float *)dd, alpha, beta);
    T(cudaGetLastError());
    T(cudaMemcpy(got, dd, sizeof got, cudaMemcpyDeviceToHost));
    CHECK(within(got, want, ar, br, 1e-5));

    // tf32: f32 in memory, rounded by the kernel (cvt.rna.tf32.f32).
    for (int i = 0; i < M * KD; i++) ar[i] = tf32_round(a[i]);
    for (int i = 0; i < N * KD; i++) br[i] = tf32_round(b[i]);
    host_gemm(ar, br, c, want, alpha, beta);
    T(cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice));
    T(cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice));
    wmma_gemm<float, wmma::precision::tf32, 8><<<M * N / 256 / 4, 128>>>((float *)da, (float *)db, (float *)dc, (float *)dd, alpha, beta);
    T(cudaGetLastError());
    T(cudaMemcpy(got, dd, sizeof got, cudaMemcpyDeviceToHost));
    CHECK(within(got, want, ar, br, 1e-5));

    // f64 on multiples of 1/64 below 2: every sum is exact, so is D.
    static double a64[M * KD], b64[N * KD], c64[M * N], d64[M * N];
    for (int i = 0; i < M * KD; i++) a64[i] = floor(a[i] * 64) / 64;
    for (int i = 0; i < N * KD; i++) b64[i] = floor(b[i] * 64) / 64;
    for (int i = 0; i < M * N; i++) c64[i] = floor(c[i] * 64) / 64;
    T(cudaMemcpy(da, a64, sizeof a64, cudaMemcpyHostToDevice));
    T(cudaMemcpy(db, b64, sizeof b64, cudaMemcpyHostToDevice));
    T(cudaMemcpy(dc, c64, sizeof c64, cudaMemcpyHostToDevice));
    dmma_gemm<<<M * N / 64 / 4, 128>>>((double *)da, (double *)db, (double *)dc, (double *)dd);
    T(cudaGetLastError());
    T(cudaMemcpy(d64, dd, sizeof d64, cudaMemcpyDeviceToHost));
    int exact = 1;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = c64[i * N + j];
            for (int k = 0; k < KD; k++) s += a64[i * KD + k] * b64[j * KD + k];
            exact &= s == d64[i * N + j];
        }
    CHECK(exact);

    // int8: exact.
    static signed char a8[M * KD], b8[N * KD];
    static int c32[M * N], d32[M * N];
    for (int i = 0; i < M * KD; i++) a8[i] = (signed char)(a[i] * 127);
    for (int i = 0; i < N * KD; i++) b8[i] = (signed char)(b[i] * 127);
    for (int i = 0; i < M * N; i++) c32[i] = (int)(c[i] * 100000);
    T(cudaMemcpy(da, a8, sizeof a8, cudaMemcpyHostToDevice));
    T(cudaMemcpy(db, b8, sizeof b8, cudaMemcpyHostToDevice));
    T(cudaMemcpy(dc, c32, sizeof c32, cudaMemcpyHostToDevice));
    imma_gemm<<<M * N / 256 / 4, 128>>>((signed char *)da, (signed char *)db, (int *)dc, (int *)dd);
    T(cudaGetLastError());
    T(cudaMemcpy(d32, dd, sizeof d32, cudaMemcpyDeviceToHost));
    exact = 1;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            int s = c32[i * N + j];
            for (int k = 0; k < KD; k++) s += a8[i * KD + k] * b8[j * KD + k];
            exact &= s == d32[i * N + j];
        }
    CHECK(exact);

    T(cudaFree(da));
    T(cudaFree(db));
    T(cudaFree(dc));
    T(cudaFree(dd));
    return finish();
}
