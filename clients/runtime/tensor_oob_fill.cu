// A tensor map's out-of-bound fill: a 2D box loaded with cp.async.bulk.tensor half past
// the tensor's edge, for f32 and f16 maps encoded with CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE
// (zeros) and CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA (a NaN: its bits are
// what this records), printing the bits the box holds past the edge.
#include <cuda.h>
#include <cuda/barrier>
#include <cuda/ptx>
#include "common.h"

using block_barrier = cuda::barrier<cuda::thread_scope_block>;

enum { W = 24, H = 6, BW = 16, BH = 4 };

typedef CUresult (*EncodeTiled)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// One box at (x0, y0), its bytes copied out as they landed in shared memory.
__global__ void load_box(const __grid_constant__ CUtensorMap tm, int x0, int y0, unsigned *out, int words) {
    __shared__ alignas(128) unsigned box[BW * BH];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ block_barrier bar;
    if (threadIdx.x == 0) {
        init(&bar, blockDim.x);
        cuda::device::experimental::fence_proxy_async_shared_cta();
    }
    __syncthreads();
    block_barrier::arrival_token tok;
    if (threadIdx.x == 0) {
        cuda::device::experimental::cp_async_bulk_tensor_2d_global_to_shared(box, &tm, x0, y0, bar);
        tok = cuda::device::barrier_arrive_tx(bar, 1, words * 4);
    } else {
        tok = bar.arrive();
    }
    bar.wait(std::move(tok));
    for (int i = threadIdx.x; i < words; i += blockDim.x) out[i] = box[i];
}

int main(void) {
    static float host[W * H];
    for (int i = 0; i < W * H; i++) host[i] = (float)(i + 1);
    float *d = NULL;
    unsigned *dout = NULL;
    T(cudaMalloc(&d, sizeof host));
    T(cudaMalloc(&dout, BW * BH * 4));
    NEED(d && dout);
    T(cudaMemcpy(d, host, sizeof host, cudaMemcpyHostToDevice));
    void *fn = NULL;
    cudaDriverEntryPointQueryResult q;
    T(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q));
    NEED(fn);
    EncodeTiled encode = (EncodeTiled)fn;
    static const struct {
        CUtensorMapDataType type;
        unsigned elem, width;
        const char *name;
    } types[] = {{CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, W, "f32"}, {CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, 2 * W, "f16"}};
    static const struct {
        CUtensorMapFloatOOBfill fill;
        const char *name;
    } fills[] = {{CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE, "none"},
                 {CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA, "nan"}};
    for (int t = 0; t < 2; t++)
        for (int f = 0; f < 2; f++) {
            // The same bytes, seen as W x H floats or 2W x H halves.
            alignas(64) CUtensorMap tm;
            cuuint64_t dims[2] = {types[t].width, H}, strides[1] = {W * sizeof(float)};
            cuuint32_t box[2] = {BW * 4 / types[t].elem, BH}, estrides[2] = {1, 1};
            CUresult r = encode(&tm, types[t].type, 2, d, dims, strides, box, estrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE, fills[f].fill);
            OUT("%s, fill %s: encode %d", types[t].name, fills[f].name, (int)r);
            if (r != CUDA_SUCCESS) continue;
            // The box's right half and bottom row lie past the tensor's edge.
            int x0 = (int)types[t].width - (int)box[0] / 2, y0 = H - BH + 1;
            T(cudaMemset(dout, 0xab, BW * BH * 4));
            load_box<<<1, 32>>>(tm, x0, y0, dout, BW * BH);
            T(cudaGetLastError());
            unsigned got[BW * BH];
            T(cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost));
            for (int row = 0; row < BH; row++) {
                char line[BW * 9 + 1];
                for (int w = 0; w < BW; w++) snprintf(line + 9 * w, 10, "%08x ", got[row * BW + w]);
                OUT("  row %d: %s", row, line);
            }
        }
    T(cudaFree(d));
    T(cudaFree(dout));
    return finish();
}
