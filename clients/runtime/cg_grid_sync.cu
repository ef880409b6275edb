// In the spirit of NVIDIA's reductionMultiBlockCG sample: a cooperative launch (every
// block resident at once) whose blocks meet at grid-wide syncs (cooperative groups'
// grid_group::sync). A sum over many blocks, reduced by block 0 after the sync; a chain of
// rounds where each block reads its neighbour's value from the round before, which only a
// real grid barrier orders; the occupancy limit a cooperative grid must fit, and the error
// past it; the same launch through cudaLaunchKernelExC's cooperative attribute.
#include <cooperative_groups.h>
#include "common.h"

namespace cg = cooperative_groups;

enum { THREADS = 256 };

// Each block sums a grid-strided share of `in` into `partial[block]`; after the grid sync,
// block 0 adds the partials. Integers, so every order of addition gives the same bits.
__global__ void reduce_sum(const unsigned *in, unsigned long long *partial,
                           unsigned long long *out, unsigned n) {
    cg::thread_block block = cg::this_thread_block();
    cg::grid_group grid = cg::this_grid();
    extern __shared__ unsigned long long sdata[];
    unsigned long long s = 0;
    for (unsigned long long i = grid.thread_rank(); i < n; i += grid.size()) s += in[i];
    sdata[block.thread_rank()] = s;
    cg::sync(block);
    for (unsigned stride = block.size() / 2; stride > 0; stride >>= 1) {
        if (block.thread_rank() < stride) sdata[block.thread_rank()] += sdata[block.thread_rank() + stride];
        cg::sync(block);
    }
    if (block.thread_rank() == 0) partial[blockIdx.x] = sdata[0];
    grid.sync();
    if (blockIdx.x == 0) {
        unsigned long long t = 0;
        for (unsigned i = block.thread_rank(); i < gridDim.x; i += block.size()) t += partial[i];
        sdata[block.thread_rank()] = t;
        cg::sync(block);
        for (unsigned stride = block.size() / 2; stride > 0; stride >>= 1) {
            if (block.thread_rank() < stride) sdata[block.thread_rank()] += sdata[block.thread_rank() + stride];
            cg::sync(block);
        }
        if (block.thread_rank() == 0) *out = sdata[0];
    }
}

// Round r: every block reads its right neighbour's value (written in round r-1), syncs,
// then writes its own as that plus one. Without a grid-wide barrier between the read and
// the write, some block would see a value of the wrong round.
__global__ void rounds(int *v, int *wrong, int n_rounds) {
    cg::grid_group grid = cg::this_grid();
    for (int r = 0; r < n_rounds; r++) {
        int seen = 0;
        if (threadIdx.x == 0) {
            seen = v[(blockIdx.x + 1) % gridDim.x];
            if (seen != r) atomicAdd(wrong, 1);
        }
        grid.sync();
        if (threadIdx.x == 0) v[blockIdx.x] = seen + 1;
        grid.sync();
    }
}

int main(void) {
    int dev = 0, coop = 0, sms = 0, per_sm = 0;
    T(cudaSetDevice(dev));
    T(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
    OUT("cooperative launches: %s", coop ? "yes" : "no");
    if (!coop) return SKIP_EXIT;
    T(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    size_t shared = THREADS * sizeof(unsigned long long);
    T(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_sum, THREADS, shared));
    OUT("%d SMs, %d blocks of %d threads resident per SM", sms, per_sm, THREADS);
    int blocks = sms * per_sm;

    const unsigned n = 1u << 20;
    unsigned *h = (unsigned *)malloc(n * sizeof(unsigned));
    NEED(h);
    unsigned long long want = 0;
    for (unsigned i = 0; i < n; i++) {
        h[i] = (i * 2654435761u) >> 20;
        want += h[i];
    }
    unsigned *in = NULL;
    unsigned long long *partial = NULL, *out = NULL;
    T(cudaMalloc((void **)&in, n * sizeof(unsigned)));
    T(cudaMalloc((void **)&partial, blocks * sizeof(unsigned long long)));
    T(cudaMalloc((void **)&out, sizeof(unsigned long long)));
    NEED(in);
    NEED(partial);
    NEED(out);
    T(cudaMemcpy(in, h, n * sizeof(unsigned), cudaMemcpyHostToDevice));

    // The whole device's worth of blocks, as the sample launches.
    unsigned nn = n;
    void *args[] = {&in, &partial, &out, &nn};
    T(cudaMemset(out, 0, sizeof(unsigned long long)));
    T(cudaLaunchCooperativeKernel((void *)reduce_sum, dim3(blocks), dim3(THREADS), args, shared, 0));
    T(cudaDeviceSynchronize());
    unsigned long long got = 0;
    T(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
    OUT("sum over %d blocks: %s", blocks, got == want ? "right" : "WRONG");
    CHECK(got == want);

    // One block more than fits: refused at the launch, nothing runs, nothing sticks.
    T(cudaMemset(out, 0, sizeof(unsigned long long)));
    T(cudaLaunchCooperativeKernel((void *)reduce_sum, dim3(blocks + 1), dim3(THREADS), args, shared, 0));
    T(cudaGetLastError());
    T(cudaDeviceSynchronize());
    T(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
    OUT("after the refused launch the sum is %s", got == 0 ? "untouched" : "WRITTEN");
    CHECK(got == 0);

    // Two blocks per SM, twenty rounds of two grid syncs each.
    int *v = NULL, *wrong = NULL;
    int rblocks = 2 * sms, n_rounds = 20;
    T(cudaMalloc((void **)&v, rblocks * sizeof(int)));
    T(cudaMalloc((void **)&wrong, sizeof(int)));
    NEED(v);
    NEED(wrong);
    T(cudaMemset(v, 0, rblocks * sizeof(int)));
    T(cudaMemset(wrong, 0, sizeof(int)));
    void *rargs[] = {&v, &wrong, &n_rounds};
    T(cudaLaunchCooperativeKernel((void *)rounds, dim3(rblocks), dim3(64), rargs, 0, 0));
    T(cudaDeviceSynchronize());
    int nwrong = -1;
    int *hv = (int *)malloc(rblocks * sizeof(int));
    NEED(hv);
    T(cudaMemcpy(&nwrong, wrong, sizeof nwrong, cudaMemcpyDeviceToHost));
    T(cudaMemcpy(hv, v, rblocks * sizeof(int), cudaMemcpyDeviceToHost));
    int all = 1;
    for (int i = 0; i < rblocks; i++) all &= hv[i] == n_rounds;
    OUT("%d rounds over %d blocks: %d reads of the wrong round, every block at round %d: %s",
        n_rounds, rblocks, nwrong, n_rounds, all ? "yes" : "no");
    CHECK(nwrong == 0 && all);

    // The cooperative attribute of cudaLaunchKernelExC: the same launch.
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeCooperative;
    attr[0].val.cooperative = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(THREADS);
    config.dynamicSmemBytes = shared;
    config.stream = 0;
    config.attrs = attr;
    config.numAttrs = 1;
    T(cudaMemset(out, 0, sizeof(unsigned long long)));
    T(cudaLaunchKernelExC(&config, (void *)reduce_sum, args));
    T(cudaDeviceSynchronize());
    T(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
    OUT("sum through the launch attribute: %s", got == want ? "right" : "WRONG");
    CHECK(got == want);

    T(cudaFree(in));
    T(cudaFree(partial));
    T(cudaFree(out));
    T(cudaFree(v));
    T(cudaFree(wrong));
    free(h);
    free(hv);
    return finish();
}
