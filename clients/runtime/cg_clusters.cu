// A cooperative launch in thread-block clusters: every cluster resident at once, blocks
// meeting at grid-wide syncs (cooperative groups' grid_group::sync) while the blocks of
// each cluster meet at cluster barriers (cluster_group::sync) and read each other's shared
// memory (cluster_group::map_shared_rank). A sum over every cluster that fits the device
// (cudaOccupancyMaxActiveClusters), each cluster's rank 0 adding its blocks' sums from
// their shared memory, block 0 adding the clusters' after the grid sync; one cluster more
// refused; rounds where each cluster reads the next cluster's value of the round before
// (only a grid barrier orders that) and hands it to its blocks through shared memory;
// the same rounds in a kernel compiled for clusters (__cluster_dims__) launched with
// cudaLaunchCooperativeKernel. All checked against the host.
#include <cooperative_groups.h>
#include "common.h"

namespace cg = cooperative_groups;

enum { THREADS = 128, CLUSTER = 4 };

// Each block sums a grid-strided share of `in` in shared memory; after the cluster sync,
// rank 0 adds its cluster's block sums (read from each block's shared memory) into
// `partial[cluster]`; after the grid sync, block 0 adds the partials into `*out`.
__global__ void cluster_sum(const unsigned *in, unsigned long long *partial,
                            unsigned long long *out, unsigned n) {
    cg::grid_group grid = cg::this_grid();
    cg::cluster_group cluster = cg::this_cluster();
    cg::thread_block block = cg::this_thread_block();
    __shared__ unsigned long long sdata[THREADS];
    unsigned long long s = 0;
    for (unsigned long long i = grid.thread_rank(); i < n; i += grid.size()) s += in[i];
    sdata[block.thread_rank()] = s;
    cg::sync(block);
    for (unsigned stride = block.size() / 2; stride > 0; stride >>= 1) {
        if (block.thread_rank() < stride) sdata[block.thread_rank()] += sdata[block.thread_rank() + stride];
        cg::sync(block);
    }
    cluster.sync();
    unsigned nb = cluster.num_blocks();
    if (cluster.block_rank() == 0 && block.thread_rank() == 0) {
        unsigned long long t = 0;
        for (unsigned r = 0; r < nb; r++) t += *cluster.map_shared_rank(&sdata[0], r);
        partial[blockIdx.x / nb] = t;
    }
    // The other blocks' sums stay in their shared memory until rank 0 has read them.
    cluster.sync();
    grid.sync();
    if (blockIdx.x == 0 && block.thread_rank() == 0) {
        unsigned long long t = 0;
        for (unsigned c = 0; c < gridDim.x / nb; c++) t += partial[c];
        *out = t;
    }
}

// Round r: rank 0 of each cluster reads the next cluster's value (written in round r-1)
// into its shared word; after the cluster sync every block reads that word from rank 0's
// shared memory and checks it; after the grid sync rank 0 writes its cluster's value as
// what it read plus one.
__device__ void rounds_body(int *v, int *wrong, int n_rounds) {
    cg::grid_group grid = cg::this_grid();
    cg::cluster_group cluster = cg::this_cluster();
    __shared__ int seen;
    unsigned nb = cluster.num_blocks(), c = blockIdx.x / nb, nc = gridDim.x / nb;
    for (int r = 0; r < n_rounds; r++) {
        if (cluster.block_rank() == 0 && threadIdx.x == 0) seen = v[(c + 1) % nc];
        cluster.sync();
        if (threadIdx.x == 0 && *cluster.map_shared_rank(&seen, 0) != r) atomicAdd(wrong, 1);
        cluster.sync();
        grid.sync();
        if (cluster.block_rank() == 0 && threadIdx.x == 0) v[c] = seen + 1;
        grid.sync();
    }
}

__global__ void cluster_rounds(int *v, int *wrong, int n_rounds) { rounds_body(v, wrong, n_rounds); }

__global__ void __cluster_dims__(2, 1, 1) fixed_rounds(int *v, int *wrong, int n_rounds) {
    rounds_body(v, wrong, n_rounds);
}

static cudaLaunchConfig_t config_for(cudaLaunchAttribute *attrs, int nattrs, unsigned blocks,
                                     unsigned threads, unsigned cluster) {
    attrs[0].id = cudaLaunchAttributeClusterDimension;
    attrs[0].val.clusterDim.x = cluster;
    attrs[0].val.clusterDim.y = 1;
    attrs[0].val.clusterDim.z = 1;
    attrs[1].id = cudaLaunchAttributeCooperative;
    attrs[1].val.cooperative = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = 0;
    config.stream = 0;
    config.attrs = attrs;
    config.numAttrs = nattrs;
    return config;
}

// Runs `rounds` kernel `f` on `clusters` clusters of `cluster` blocks (cooperatively,
// with the cluster attribute unless `fixed`), checks every read and the final values.
static int run_rounds(const char *what, void *f, int clusters, int cluster, int fixed) {
    int *v = NULL, *wrong = NULL;
    int n_rounds = 12;
    T(cudaMalloc((void **)&v, clusters * sizeof(int)));
    T(cudaMalloc((void **)&wrong, sizeof(int)));
    NEED(v);
    NEED(wrong);
    T(cudaMemset(v, 0, clusters * sizeof(int)));
    T(cudaMemset(wrong, 0, sizeof(int)));
    void *args[] = {&v, &wrong, &n_rounds};
    if (fixed) {
        T(cudaLaunchCooperativeKernel(f, dim3(clusters * cluster), dim3(64), args, 0, 0));
    } else {
        cudaLaunchAttribute attrs[2];
        cudaLaunchConfig_t config = config_for(attrs, 2, clusters * cluster, 64, cluster);
        T(cudaLaunchKernelExC(&config, f, args));
    }
    T(cudaDeviceSynchronize());
    int nwrong = -1;
    int *hv = (int *)malloc(clusters * sizeof(int));
    NEED(hv);
    T(cudaMemcpy(&nwrong, wrong, sizeof nwrong, cudaMemcpyDeviceToHost));
    T(cudaMemcpy(hv, v, clusters * sizeof(int), cudaMemcpyDeviceToHost));
    int all = 1;
    for (int i = 0; i < clusters; i++) all &= hv[i] == n_rounds;
    OUT("%s: %d rounds over %d clusters of %d: %d reads of the wrong round, every cluster at "
        "round %d: %s",
        what, n_rounds, clusters, cluster, nwrong, n_rounds, all ? "yes" : "no");
    CHECK(nwrong == 0 && all);
    free(hv);
    T(cudaFree(v));
    T(cudaFree(wrong));
    return 0;
}

int main(void) {
    int dev = 0, coop = 0, clusters_ok = 0;
    T(cudaSetDevice(dev));
    T(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
    T(cudaDeviceGetAttribute(&clusters_ok, cudaDevAttrClusterLaunch, dev));
    OUT("cooperative launches: %s, cluster launches: %s", coop ? "yes" : "no",
        clusters_ok ? "yes" : "no");
    if (!coop || !clusters_ok) {
        printf("SKIP: the device cannot launch cooperatively in clusters\n");
        return SKIP_EXIT;
    }

    // Every cluster of 4 blocks of THREADS that fits at once.
    cudaLaunchAttribute attrs[2];
    cudaLaunchConfig_t config = config_for(attrs, 1, CLUSTER, THREADS, CLUSTER);
    int fit = 0;
    T(cudaOccupancyMaxActiveClusters(&fit, (void *)cluster_sum, &config));
    OUT("clusters of %d blocks of %d threads resident at once: %d", CLUSTER, THREADS, fit);
    if (fit <= 0) return finish();

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
    T(cudaMalloc((void **)&partial, (fit + 1) * sizeof(unsigned long long)));
    T(cudaMalloc((void **)&out, sizeof(unsigned long long)));
    NEED(in);
    NEED(partial);
    NEED(out);
    T(cudaMemcpy(in, h, n * sizeof(unsigned), cudaMemcpyHostToDevice));
    unsigned nn = n;
    void *args[] = {&in, &partial, &out, &nn};

    config = config_for(attrs, 2, fit * CLUSTER, THREADS, CLUSTER);
    T(cudaMemset(out, 0, sizeof(unsigned long long)));
    T(cudaLaunchKernelExC(&config, (void *)cluster_sum, args));
    T(cudaDeviceSynchronize());
    unsigned long long got = 0;
    T(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
    OUT("sum over %d clusters: %s", fit, got == want ? "right" : "WRONG");
    CHECK(got == want);

    // One cluster more than fits: refused at the launch, nothing runs, nothing sticks.
    config = config_for(attrs, 2, (fit + 1) * CLUSTER, THREADS, CLUSTER);
    T(cudaMemset(out, 0, sizeof(unsigned long long)));
    T(cudaLaunchKernelExC(&config, (void *)cluster_sum, args));
    T(cudaGetLastError());
    T(cudaDeviceSynchronize());
    T(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
    OUT("after the refused launch the sum is %s", got == 0 ? "untouched" : "WRITTEN");
    CHECK(got == 0);

    // A few clusters, many syncs.
    run_rounds("cudaLaunchKernelExC", (void *)cluster_rounds, 16, CLUSTER, 0);
    run_rounds("cudaLaunchKernelExC", (void *)cluster_rounds, 8, 8, 0);
    run_rounds("__cluster_dims__(2), cudaLaunchCooperativeKernel", (void *)fixed_rounds, 20, 2, 1);

    free(h);
    T(cudaFree(in));
    T(cudaFree(partial));
    T(cudaFree(out));
    return finish();
}
