// In the style of NVIDIA's globalToShmemAsyncCopy sample and CUDA's asynchronous-copy
// APIs on sm_90: a tiled matrix multiply whose tiles reach shared memory through
// cuda::memcpy_async and a multi-stage cuda::pipeline (cp.async with commit and wait
// groups), the same with cooperative groups' memcpy_async and wait, a stream of tiles
// staged through a cuda::barrier whose copies are bulk copies completing transaction
// bytes (cp.async.bulk, mbarrier expect_tx) and written back in bulk groups, and a
// producer warp feeding consumer warps through mbarriers. Every result is checked on the
// host, exactly (the inputs are small integers, so every sum is exact in float). Last,
// tiles of a matrix through tensor maps (cuTensorMapEncodeTiled from the driver's entry
// point, cp.async.bulk.tensor): a 128-byte swizzled box read back by the threads with
// CUDA's swizzle pattern, and stored back through a second map, the padding of each row
// untouched. With the argument `fault`: a cp.async from freed memory, which faults at the
// next synchronisation (the freed address on stderr, for the fault message to be checked).
#include <cuda.h>
#include <cuda/pipeline>
#include <cuda/barrier>
#include <cuda/ptx>
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include "common.h"

namespace cg = cooperative_groups;
using block_barrier = cuda::barrier<cuda::thread_scope_block>;

enum { DIM = 128, TILE = 16, STAGES = 3 };

// C = A·B, one TILE x TILE block of C per thread block, A's and B's tiles for the next
// STAGES-1 steps of k in flight while the current one is multiplied.
__global__ void matmul_pipeline(const float *a, const float *b, float *c) {
    __shared__ alignas(16) float sa[STAGES][TILE][TILE], sb[STAGES][TILE][TILE];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, STAGES> state;
    auto block = cg::this_thread_block();
    auto pipe = cuda::make_pipeline(block, &state);
    int tx = threadIdx.x % TILE, ty = threadIdx.x / TILE;
    int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
    const int steps = DIM / TILE;
    int fetch = 0;
    float acc = 0;
    for (int step = 0; step < steps; step++) {
        // Keep STAGES tiles in flight: a row of each tile per thread of the first column.
        for (; fetch < steps && fetch < step + STAGES; fetch++) {
            pipe.producer_acquire();
            int s = fetch % STAGES;
            for (int r = 0; r < TILE; r++) {
                cuda::memcpy_async(block, sa[s][r], a + (row0 + r) * DIM + fetch * TILE, sizeof(float) * TILE, pipe);
                cuda::memcpy_async(block, sb[s][r], b + (fetch * TILE + r) * DIM + col0, sizeof(float) * TILE, pipe);
            }
            pipe.producer_commit();
        }
        pipe.consumer_wait();
        int s = step % STAGES;
        for (int k = 0; k < TILE; k++) acc += sa[s][ty][k] * sb[s][k][tx];
        block.sync();
        pipe.consumer_release();
    }
    c[(row0 + ty) * DIM + col0 + tx] = acc;
}

// The sample's single-stage way: each thread copies its own element of each tile with
// cooperative groups' memcpy_async, the block waits for all of them.
__global__ void matmul_cg(const float *a, const float *b, float *c) {
    __shared__ alignas(16) float sa[TILE][TILE], sb[TILE][TILE];
    auto block = cg::this_thread_block();
    int tx = threadIdx.x % TILE, ty = threadIdx.x / TILE;
    int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
    float acc = 0;
    for (int k0 = 0; k0 < DIM; k0 += TILE) {
        for (int r = 0; r < TILE; r++) {
            cg::memcpy_async(block, sa[r], a + (row0 + r) * DIM + k0, sizeof(float) * TILE);
            cg::memcpy_async(block, sb[r], b + (k0 + r) * DIM + col0, sizeof(float) * TILE);
        }
        cg::wait(block);
        for (int k = 0; k < TILE; k++) acc += sa[ty][k] * sb[k][tx];
        block.sync();
    }
    c[(row0 + ty) * DIM + col0 + tx] = acc;
}

enum { CHUNK = 1024 };

// Chunks of 1024 floats through shared memory: in by a bulk copy (cuda::memcpy_async of a
// 16-byte aligned size over a cuda::barrier, which completes transaction bytes), scaled
// and offset by the block, out by a bulk copy of the block's bulk group.
__global__ void scale_bulk(const float *in, float *out, int chunks, float scale) {
    __shared__ alignas(16) float buf[CHUNK];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ block_barrier bar;
    if (threadIdx.x == 0) {
        init(&bar, blockDim.x);
        cuda::device::experimental::fence_proxy_async_shared_cta();
    }
    __syncthreads();
    for (int ch = blockIdx.x; ch < chunks; ch += gridDim.x) {
        if (threadIdx.x == 0) {
            // The previous chunk's bulk store must have read buf before it is refilled.
            cuda::device::experimental::cp_async_bulk_wait_group_read<0>();
            cuda::memcpy_async(buf, in + ch * CHUNK, cuda::aligned_size_t<16>(sizeof(buf)), bar);
        }
        bar.arrive_and_wait();
        for (int i = threadIdx.x; i < CHUNK; i += blockDim.x) buf[i] = buf[i] * scale + ch;
        cuda::device::experimental::fence_proxy_async_shared_cta();
        __syncthreads();
        if (threadIdx.x == 0) {
            cuda::device::experimental::cp_async_bulk_shared_to_global(out + ch * CHUNK, buf, sizeof(buf));
            cuda::device::experimental::cp_async_bulk_commit_group();
        }
    }
    if (threadIdx.x == 0) cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<0>());
}

// Warp 0 produces tiles of 256 ints into a ring of two slots (bulk copies announced with
// cuda::device::memcpy_async_tx and barrier_arrive_tx on the slot's "full" barrier); warps
// 1-3 wait on "full", add up their part, and arrive on the slot's "empty" barrier, which
// the producer waits on before refilling it.
__global__ void producer_consumer(const int *in, int *sums, int tiles) {
    __shared__ alignas(16) int ring[2][256];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ block_barrier full[2], empty[2];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x == 0) {
        for (int s = 0; s < 2; s++) {
            init(&full[s], 1 + 96);  // the producer's arrival and the consumers'
            init(&empty[s], 96);
        }
        cuda::device::experimental::fence_proxy_async_shared_cta();
    }
    __syncthreads();
    if (warp == 0) {
        if (lane == 0) {
            for (int t = 0; t < tiles; t++) {
                int s = t % 2;
                // The consumers released this slot's previous tile: empty's phase t/2-1.
                if (t >= 2)
                    while (!cuda::ptx::mbarrier_try_wait_parity(cuda::device::barrier_native_handle(empty[s]),
                                                                (uint32_t)((t / 2 - 1) & 1))) {
                    }
                cuda::device::memcpy_async_tx(ring[s], in + t * 256, cuda::aligned_size_t<16>(sizeof(ring[s])), full[s]);
                (void)cuda::device::barrier_arrive_tx(full[s], 1, sizeof(ring[s]));
            }
        }
    } else {
        int acc = 0;
        for (int t = 0; t < tiles; t++) {
            int s = t % 2;
            full[s].arrive_and_wait();
            for (int i = threadIdx.x - 32; i < 256; i += 96) acc += ring[s][i];
            (void)empty[s].arrive();
        }
        sums[threadIdx.x - 32] = acc;
    }
}

enum { TW = 32, TH = 8, MW = 90, MH = 70, MPITCH = 92 };

// One TW x TH tile of the matrix per block: loaded with a 128B swizzle; each thread reads
// its element at the swizzled place (16-byte chunk XOR the 128-byte row's index) into
// `direct`; then the tile, doubled plus one in place, is stored through `tm_out`.
__global__ void tma_tiles(const __grid_constant__ CUtensorMap tm_in, const __grid_constant__ CUtensorMap tm_out, float *direct) {
    __shared__ alignas(1024) float box[TH * TW];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ block_barrier bar;
    int x0 = blockIdx.x * TW, y0 = blockIdx.y * TH;
    if (threadIdx.x == 0) {
        init(&bar, blockDim.x);
        cuda::device::experimental::fence_proxy_async_shared_cta();
    }
    __syncthreads();
    block_barrier::arrival_token tok;
    if (threadIdx.x == 0) {
        cuda::device::experimental::cp_async_bulk_tensor_2d_global_to_shared(box, &tm_in, x0, y0, bar);
        tok = cuda::device::barrier_arrive_tx(bar, 1, sizeof(box));
    } else {
        tok = bar.arrive();
    }
    bar.wait(std::move(tok));
    int r = threadIdx.x / TW, c = threadIdx.x % TW;
    unsigned at = (r * TW + c) * 4;
    at ^= ((at >> 7) & 7) << 4;
    if (y0 + r < MH && x0 + c < MW) direct[(y0 + r) * MPITCH + x0 + c] = box[at / 4];
    __syncthreads();
    box[threadIdx.x] = box[threadIdx.x] * 2 + 1;
    cuda::device::experimental::fence_proxy_async_shared_cta();
    __syncthreads();
    if (threadIdx.x == 0) {
        cuda::device::experimental::cp_async_bulk_tensor_2d_shared_to_global(&tm_out, x0, y0, box);
        cuda::device::experimental::cp_async_bulk_commit_group();
        cuda::device::experimental::cp_async_bulk_wait_group_read<0>();
    }
}

typedef CUresult (*EncodeTiled)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// Each thread copies 16 bytes of `in` into shared memory with cp.async.
__global__ void copy_in(const int4 *in, int4 *out) {
    __shared__ int4 t[64];
    auto pipe = cuda::make_pipeline();
    pipe.producer_acquire();
    cuda::memcpy_async(&t[threadIdx.x], &in[threadIdx.x], sizeof(int4), pipe);
    pipe.producer_commit();
    pipe.consumer_wait();
    out[threadIdx.x] = t[threadIdx.x];
}

static int fault(void) {
    int4 *d = NULL, *out = NULL;
    T(cudaMalloc(&d, 64 * sizeof(int4)));
    T(cudaMalloc(&out, 64 * sizeof(int4)));
    NEED(d && out);
    T(cudaFree(d));
    fprintf(stderr, "freed %p\n", (void *)d);
    copy_in<<<1, 64>>>(d, out);
    CHECK(T(cudaGetLastError()) == cudaSuccess);
    CHECK(T(cudaDeviceSynchronize()) == cudaErrorIllegalAddress);
    return finish();
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "fault")) return fault();
    static float a[DIM * DIM], b[DIM * DIM], c[DIM * DIM], want[DIM * DIM];
    for (int i = 0; i < DIM * DIM; i++) {
        a[i] = (float)((i * 7 + 3) % 11) - 5;
        b[i] = (float)((i * 5 + 1) % 9) - 4;
    }
    for (int r = 0; r < DIM; r++)
        for (int col = 0; col < DIM; col++) {
            float s = 0;
            for (int k = 0; k < DIM; k++) s += a[r * DIM + k] * b[k * DIM + col];
            want[r * DIM + col] = s;
        }
    float *da = NULL, *db = NULL, *dc = NULL;
    T(cudaMalloc(&da, sizeof a));
    T(cudaMalloc(&db, sizeof b));
    T(cudaMalloc(&dc, sizeof c));
    NEED(da && db && dc);
    T(cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice));
    T(cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice));

    dim3 grid(DIM / TILE, DIM / TILE);
    T(cudaMemset(dc, 0, sizeof c));
    matmul_pipeline<<<grid, TILE * TILE>>>(da, db, dc);
    T(cudaGetLastError());
    T(cudaMemcpy(c, dc, sizeof c, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < DIM * DIM; i++) bad += c[i] != want[i];
    OUT("matmul_pipeline (%d stages): %d of %d elements differ from the host's", STAGES, bad, DIM * DIM);
    CHECK(bad == 0);

    T(cudaMemset(dc, 0, sizeof c));
    matmul_cg<<<grid, TILE * TILE>>>(da, db, dc);
    T(cudaGetLastError());
    T(cudaMemcpy(c, dc, sizeof c, cudaMemcpyDeviceToHost));
    bad = 0;
    for (int i = 0; i < DIM * DIM; i++) bad += c[i] != want[i];
    OUT("matmul_cg: %d of %d elements differ from the host's", bad, DIM * DIM);
    CHECK(bad == 0);

    enum { CHUNKS = 24 };
    static float in[CHUNKS * CHUNK], out[CHUNKS * CHUNK];
    for (int i = 0; i < CHUNKS * CHUNK; i++) in[i] = (float)(i % 97) - 48;
    float *din = NULL, *dout = NULL;
    T(cudaMalloc(&din, sizeof in));
    T(cudaMalloc(&dout, sizeof out));
    NEED(din && dout);
    T(cudaMemcpy(din, in, sizeof in, cudaMemcpyHostToDevice));
    T(cudaMemset(dout, 0, sizeof out));
    scale_bulk<<<5, 256>>>(din, dout, CHUNKS, 3.0f);
    T(cudaGetLastError());
    T(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
    bad = 0;
    for (int i = 0; i < CHUNKS * CHUNK; i++) bad += out[i] != in[i] * 3.0f + i / CHUNK;
    OUT("scale_bulk: %d of %d elements differ from the host's", bad, CHUNKS * CHUNK);
    CHECK(bad == 0);

    enum { TILES = 11 };
    static int ints[TILES * 256], sums[96];
    for (int i = 0; i < TILES * 256; i++) ints[i] = (i * 13) % 101 - 50;
    int *dints = NULL, *dsums = NULL;
    T(cudaMalloc(&dints, sizeof ints));
    T(cudaMalloc(&dsums, sizeof sums));
    NEED(dints && dsums);
    T(cudaMemcpy(dints, ints, sizeof ints, cudaMemcpyHostToDevice));
    producer_consumer<<<1, 128>>>(dints, dsums, TILES);
    T(cudaGetLastError());
    T(cudaMemcpy(sums, dsums, sizeof sums, cudaMemcpyDeviceToHost));
    bad = 0;
    for (int c0 = 0; c0 < 96; c0++) {
        int s = 0;
        for (int t = 0; t < TILES; t++)
            for (int i = c0; i < 256; i += 96) s += ints[t * 256 + i];
        bad += sums[c0] != s;
    }
    OUT("producer_consumer: %d of 96 consumer sums differ from the host's", bad);
    CHECK(bad == 0);

    static float mat[MH * MPITCH], back[MH * MPITCH], direct[MH * MPITCH];
    for (int i = 0; i < MH * MPITCH; i++) mat[i] = (float)(i % 251) - 100;
    float *dmat = NULL, *dback = NULL, *ddirect = NULL;
    T(cudaMalloc(&dmat, sizeof mat));
    T(cudaMalloc(&dback, sizeof back));
    T(cudaMalloc(&ddirect, sizeof direct));
    NEED(dmat && dback && ddirect);
    T(cudaMemcpy(dmat, mat, sizeof mat, cudaMemcpyHostToDevice));
    T(cudaMemset(dback, 0, sizeof back));
    T(cudaMemset(ddirect, 0, sizeof direct));
    void *fn = NULL;
    cudaDriverEntryPointQueryResult q;
    T(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q));
    NEED(fn);
    EncodeTiled encode = (EncodeTiled)fn;
    alignas(64) CUtensorMap tm_in, tm_out;
    cuuint64_t dims[2] = {MW, MH}, strides[1] = {MPITCH * sizeof(float)};
    cuuint32_t box[2] = {TW, TH}, estrides[2] = {1, 1};
    CUresult r1 = encode(&tm_in, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, dmat, dims, strides, box, estrides,
                         CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                         CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    CUresult r2 = encode(&tm_out, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, dback, dims, strides, box, estrides,
                         CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                         CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    // A stride that is not a multiple of 16 bytes is refused.
    cuuint64_t odd[1] = {MW * sizeof(float)};
    CUtensorMap tm_bad;
    CUresult r3 = encode(&tm_bad, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, dmat, dims, odd, box, estrides,
                         CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                         CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    OUT("cuTensorMapEncodeTiled: in %d, out %d, stride of 360 bytes %d", (int)r1, (int)r2, (int)r3);
    CHECK(r1 == CUDA_SUCCESS && r2 == CUDA_SUCCESS && r3 == CUDA_ERROR_INVALID_VALUE);
    dim3 tgrid((MW + TW - 1) / TW, (MH + TH - 1) / TH);
    tma_tiles<<<tgrid, TW * TH>>>(tm_in, tm_out, ddirect);
    T(cudaGetLastError());
    T(cudaMemcpy(back, dback, sizeof back, cudaMemcpyDeviceToHost));
    T(cudaMemcpy(direct, ddirect, sizeof direct, cudaMemcpyDeviceToHost));
    // The row's padding (x >= MW): the threads never write it; the tensor store writes
    // whole 16-byte units of a row (the H200 wrote floats 90 and 91 of each 90-float
    // row), so `back` may hold what the kernel stores for the zeros the load read past
    // the row (0 * 2 + 1), and nothing else.
    int bad_direct = 0, bad_back = 0, bad_pad = 0, pad_stored = 0;
    for (int y = 0; y < MH; y++)
        for (int x = 0; x < MPITCH; x++) {
            int i = y * MPITCH + x;
            if (x < MW) {
                bad_direct += direct[i] != mat[i];
                bad_back += back[i] != mat[i] * 2 + 1;
            } else {
                bad_pad += direct[i] != 0 || (back[i] != 0 && back[i] != 1.0f);
                pad_stored += back[i] != 0;
            }
        }
    OUT("tma_tiles: %d swizzled reads and %d stored elements differ from the host's, %d padding elements written wrongly, %d by the store",
        bad_direct, bad_back, bad_pad, pad_stored);
    CHECK(bad_direct == 0 && bad_back == 0 && bad_pad == 0);

    T(cudaFree(dmat));
    T(cudaFree(dback));
    T(cudaFree(ddirect));
    T(cudaFree(da));
    T(cudaFree(db));
    T(cudaFree(dc));
    T(cudaFree(din));
    T(cudaFree(dout));
    T(cudaFree(dints));
    T(cudaFree(dsums));
    return finish();
}
