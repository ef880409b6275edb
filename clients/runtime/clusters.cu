// In the spirit of the CUDA programming guide's thread block cluster examples and NVIDIA's
// samples: a kernel compiled for clusters of 2 (__cluster_dims__) launched with <<<>>>;
// the guide's distributed shared memory histogram (each block of a cluster owns a slice
// of the bins, every block adds into the owner's shared memory through
// cluster.map_shared_rank) launched with cudaLaunchKernelEx's cluster attribute; a ring
// where each block reads its neighbour's shared memory between two cluster.sync()s; a
// split cluster barrier (arrive, work, wait); clusters of 16 (non-portable, after
// cudaFuncSetAttribute) and the errors of misconfigured clusters; the cluster occupancy
// calculator. Every result is checked against the host.
#include <cooperative_groups.h>
#include "common.h"

namespace cg = cooperative_groups;

// What each block knows of its cluster: 4 words a block.
__global__ void __cluster_dims__(2, 1, 1) fixed_pairs(unsigned *out) {
    cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x == 0) {
        unsigned *o = out + 4 * blockIdx.x;
        o[0] = cluster.block_rank();
        o[1] = cluster.num_blocks();
        o[2] = __clusterIdx().x;
        o[3] = cluster.dim_blocks().x;
    }
}

// The programming guide's distributed shared memory histogram.
__global__ void clusterHist_kernel(int *bins, const int nbins, const int bins_per_block,
                                   const int *__restrict__ input, size_t array_size) {
    extern __shared__ int smem[];
    namespace cg = cooperative_groups;
    int tid = cg::this_grid().thread_rank();
    // Cluster initialization, size and calculating local bin offsets.
    cg::cluster_group cluster = cg::this_cluster();
    unsigned int clusterBlockRank = cluster.block_rank();
    int cluster_size = cluster.dim_blocks().x;
    for (int i = threadIdx.x; i < bins_per_block; i += blockDim.x) {
        smem[i] = 0;  // Initialize shared memory histogram to zeros
    }
    // cluster synchronization ensures that shared memory is initialized to zero in
    // all thread blocks in the cluster. It also ensures that all thread blocks
    // have started executing and they exist concurrently.
    cluster.sync();
    for (int i = tid; i < array_size; i += blockDim.x * gridDim.x) {
        int ldata = input[i];
        // Find the right histogram bin.
        int binid = ldata;
        if (ldata < 0)
            binid = 0;
        else if (ldata >= nbins)
            binid = nbins - 1;
        // Find destination block rank and offset for computing
        // distributed shared memory histogram
        int dst_block_rank = (int)(binid / bins_per_block);
        int dst_offset = binid % bins_per_block;
        // Pointer to target block shared memory
        int *dst_smem = cluster.map_shared_rank(smem, dst_block_rank);
        // Perform atomic update of the histogram bin
        atomicAdd(dst_smem + dst_offset, 1);
    }
    // cluster synchronization is required to ensure all distributed shared
    // memory operations are completed and no thread block exits while
    // other thread blocks are still accessing distributed shared memory
    cluster.sync();
    // Perform global memory histogram, using the local distributed memory histogram
    int *lbins = bins + (blockIdx.x / cluster_size) * bins_per_block * cluster_size;
    for (int i = threadIdx.x; i < bins_per_block; i += blockDim.x) {
        atomicAdd(&lbins[clusterBlockRank * bins_per_block + i], smem[i]);
    }
}

// Each thread reads its element of the next block's array: one word a thread.
__global__ void ring(unsigned *out) {
    __shared__ unsigned vals[256];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned r = cluster.block_rank(), n = cluster.num_blocks();
    vals[threadIdx.x] = r * 1000 + threadIdx.x;
    cluster.sync();
    unsigned *next = cluster.map_shared_rank(vals, (r + 1) % n);
    out[blockIdx.x * blockDim.x + threadIdx.x] = next[threadIdx.x];
    cluster.sync();
}

// The other block's word, stored before the arrival and read after the wait; work in
// between. Two words a thread: the word read and the work's result.
__global__ void split_barrier(unsigned *out) {
    __shared__ unsigned word;
    cg::cluster_group cluster = cg::this_cluster();
    unsigned r = cluster.block_rank();
    if (threadIdx.x == 0) word = 7 * blockIdx.x + 1;
    __syncthreads();
    __cluster_barrier_arrive();
    unsigned acc = threadIdx.x;
    for (int i = 0; i < 100; i++) acc = acc * 1664525u + 1013904223u;
    __cluster_barrier_wait();
    unsigned *other = cluster.map_shared_rank(&word, r ^ 1);
    unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
    out[2 * g] = *other;
    out[2 * g + 1] = acc;
    cluster.sync();
}

static unsigned lcg(unsigned x) {
    for (int i = 0; i < 100; i++) x = x * 1664525u + 1013904223u;
    return x;
}

static cudaLaunchConfig_t config(dim3 grid, dim3 block, size_t shared, cudaLaunchAttribute *attr,
                                 unsigned cluster_x) {
    cudaLaunchConfig_t c = {};
    c.gridDim = grid;
    c.blockDim = block;
    c.dynamicSmemBytes = shared;
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = cluster_x;
    attr->val.clusterDim.y = 1;
    attr->val.clusterDim.z = 1;
    c.attrs = attr;
    c.numAttrs = 1;
    return c;
}

int main() {
    int dev = 0, cluster_launch = -1;
    T(cudaGetDevice(&dev));
    T(cudaDeviceGetAttribute(&cluster_launch, cudaDevAttrClusterLaunch, dev));
    OUT("cluster launch: %d", cluster_launch);
    if (cluster_launch != 1) {
        printf("SKIP: the device has no cluster launch\n");
        return SKIP_EXIT;
    }

    // A kernel compiled for clusters of 2, launched as an ordinary kernel.
    cudaFuncAttributes fa;
    memset(&fa, 0, sizeof fa);
    T(cudaFuncGetAttributes(&fa, fixed_pairs));
    OUT("fixed_pairs: clusterDimMustBeSet %d, required %dx%dx%d, nonPortable %d",
        fa.clusterDimMustBeSet, fa.requiredClusterWidth, fa.requiredClusterHeight,
        fa.requiredClusterDepth, fa.nonPortableClusterSizeAllowed);
    unsigned *dout = NULL;
    T(cudaMalloc(&dout, 64 << 10));
    NEED(dout);
    fixed_pairs<<<8, 64>>>(dout);
    T(cudaGetLastError());
    T(cudaDeviceSynchronize());
    unsigned host[16 << 10];
    T(cudaMemcpy(host, dout, 8 * 4 * 4, cudaMemcpyDeviceToHost));
    for (unsigned b = 0; b < 8; b++) {
        CHECK(host[4 * b] == b % 2 && host[4 * b + 1] == 2 && host[4 * b + 2] == b / 2 &&
              host[4 * b + 3] == 2);
    }
    OUT("block 5: rank %u of %u, cluster %u", host[20], host[21], host[22]);
    fixed_pairs<<<7, 64>>>(dout);
    T(cudaGetLastError());

    // The guide's histogram: 2 clusters of 4 blocks, 64 bins (16 a block).
    const int nbins = 64, cluster_size = 4, blocks = 8, threads = 128;
    const int bins_per_block = nbins / cluster_size;
    const size_t n = 100000;
    int *input = (int *)malloc(n * sizeof(int));
    int want[64] = {0};
    unsigned x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        input[i] = (int)((x >> 8) % 80) - 8;
        int b = input[i] < 0 ? 0 : input[i] >= nbins ? nbins - 1 : input[i];
        want[b]++;
    }
    int *dinput = NULL, *dbins = NULL;
    T(cudaMalloc(&dinput, n * sizeof(int)));
    T(cudaMalloc(&dbins, 2 * nbins * sizeof(int)));
    NEED(dinput);
    NEED(dbins);
    T(cudaMemcpy(dinput, input, n * sizeof(int), cudaMemcpyHostToDevice));
    T(cudaMemset(dbins, 0, 2 * nbins * sizeof(int)));
    cudaLaunchAttribute attr[1];
    cudaLaunchConfig_t c = config(dim3(blocks), dim3(threads), bins_per_block * sizeof(int), attr,
                                  cluster_size);
    int max_clusters = -1, potential = -1;
    T(cudaOccupancyMaxActiveClusters(&max_clusters, (void *)clusterHist_kernel, &c));
    OUT("max active clusters of 4: %s", max_clusters > 0 ? "some" : "none");
    T(cudaOccupancyMaxPotentialClusterSize(&potential, (void *)clusterHist_kernel, &c));
    OUT("max potential cluster size: %d", potential);
    // Each cluster covers the whole input: the grid's stride spans both.
    T(cudaLaunchKernelEx(&c, clusterHist_kernel, dbins, nbins, bins_per_block,
                         (const int *)dinput, n / 2));
    T(cudaLaunchKernelEx(&c, clusterHist_kernel, dbins, nbins, bins_per_block,
                         (const int *)dinput + n / 2, n - n / 2));
    T(cudaDeviceSynchronize());
    int got[128];
    T(cudaMemcpy(got, dbins, sizeof got, cudaMemcpyDeviceToHost));
    long total = 0;
    int bins_ok = 1;
    for (int i = 0; i < nbins; i++) {
        total += got[i] + got[nbins + i];
        // The grid-strided loop gives each value to one cluster: their sum is the count.
        if (got[i] + got[nbins + i] != want[i]) bins_ok = 0;
    }
    CHECK(bins_ok);
    CHECK(total == (long)n);
    OUT("histogram: %ld values, bins %s", total, bins_ok ? "as the host counts" : "WRONG");

    // The ring, clusters of 2, 4 and 8.
    const unsigned sizes[] = {2, 4, 8};
    for (int s = 0; s < 3; s++) {
        cudaLaunchConfig_t rc = config(dim3(16), dim3(256), 0, attr, sizes[s]);
        printf("ring in clusters of %u: ", sizes[s]);
        T(cudaLaunchKernelEx(&rc, ring, dout));
        T(cudaDeviceSynchronize());
        T(cudaMemcpy(host, dout, 16 * 256 * 4, cudaMemcpyDeviceToHost));
        int ok = 1;
        for (unsigned b = 0; b < 16; b++)
            for (unsigned t = 0; t < 256; t++)
                if (host[b * 256 + t] != ((b % sizes[s] + 1) % sizes[s]) * 1000 + t) ok = 0;
        CHECK(ok);
        OUT("every block read its neighbour's array: %s", ok ? "yes" : "NO");
    }

    // The split barrier.
    {
        cudaLaunchConfig_t sc = config(dim3(6), dim3(64), 0, attr, 2);
        T(cudaLaunchKernelEx(&sc, split_barrier, dout));
        T(cudaDeviceSynchronize());
        T(cudaMemcpy(host, dout, 6 * 64 * 2 * 4, cudaMemcpyDeviceToHost));
        int ok = 1;
        for (unsigned b = 0; b < 6; b++)
            for (unsigned t = 0; t < 64; t++) {
                unsigned g = b * 64 + t;
                if (host[2 * g] != 7 * (b ^ 1) + 1 || host[2 * g + 1] != lcg(t)) ok = 0;
            }
        CHECK(ok);
        OUT("split barrier: %s", ok ? "every store seen after the wait" : "WRONG");
    }

    // Clusters of 16: refused until the kernel allows non-portable sizes.
    {
        cudaLaunchConfig_t bc = config(dim3(32), dim3(256), 0, attr, 16);
        printf("ring in clusters of 16, portable: ");
        T(cudaLaunchKernelEx(&bc, ring, dout));
        T(cudaGetLastError());
        T(cudaFuncSetAttribute(ring, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        printf("ring in clusters of 16, non-portable: ");
        T(cudaLaunchKernelEx(&bc, ring, dout));
        T(cudaDeviceSynchronize());
        T(cudaMemcpy(host, dout, 32 * 256 * 4, cudaMemcpyDeviceToHost));
        int ok = 1;
        for (unsigned b = 0; b < 32; b++)
            for (unsigned t = 0; t < 256; t++)
                if (host[b * 256 + t] != ((b % 16 + 1) % 16) * 1000 + t) ok = 0;
        CHECK(ok);
        OUT("every block read its neighbour's array: %s", ok ? "yes" : "NO");
        cudaLaunchConfig_t odd = config(dim3(12), dim3(256), 0, attr, 8);
        printf("ring, 12 blocks in clusters of 8: ");
        T(cudaLaunchKernelEx(&odd, ring, dout));
        T(cudaGetLastError());
        cudaLaunchConfig_t huge = config(dim3(32), dim3(256), 0, attr, 32);
        printf("ring in clusters of 32: ");
        T(cudaLaunchKernelEx(&huge, ring, dout));
        T(cudaGetLastError());
    }
    T(cudaDeviceSynchronize());
    T(cudaFree(dout));
    T(cudaFree(dinput));
    T(cudaFree(dbins));
    free(input);
    return finish();
}
