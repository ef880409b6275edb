// Thread-block clusters (sm_90), launched with the manifest's cluster shape: the cluster
// special registers as the CUDA intrinsics read them; distributed shared memory (loads
// from the next block's array through mapa, atomics into the first block's bins, a
// generic pointer into another block and what getctarank and isspacep say of it); and a
// split cluster barrier (arrive, work, wait) ordering a neighbour's store before a load.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#define K extern "C" __global__ void

// 12 words a thread: cluster index (x, y), cluster shape (x, y), the block's index in
// its cluster (x, y), its rank, the cluster's blocks, the grid in clusters (x, y),
// whether the launch gave a cluster shape, and the thread's rank in the cluster.
K cluster_registers(const unsigned* in, unsigned* out, int n) {
  unsigned b = blockIdx.x + gridDim.x * blockIdx.y;
  unsigned t = threadIdx.x + blockDim.x * threadIdx.y;
  unsigned* o = out + 12 * (b * blockDim.x * blockDim.y + t);
  cg::cluster_group c = cg::this_cluster();
  o[0] = __clusterIdx().x;
  o[1] = __clusterIdx().y;
  o[2] = __clusterDim().x;
  o[3] = __clusterDim().y;
  o[4] = __clusterRelativeBlockIdx().x;
  o[5] = __clusterRelativeBlockIdx().y;
  o[6] = __clusterRelativeBlockRank();
  o[7] = __clusterSizeInBlocks();
  o[8] = __clusterGridDimInClusters().x;
  o[9] = __clusterGridDimInClusters().y;
  o[10] = __clusterDimIsSpecified();
  o[11] = c.thread_rank() ^ in[t % n];
}

// Blocks of 128 threads in clusters of 4. Each thread stores in[g] in its block's array;
// after a cluster sync it reads element t of the next rank's array and element 127 - t
// of the previous rank's (through a generic pointer), adds its word's low 5 bits into
// bin of the first block's 32 bins, and records getctarank and isspacep of the pointers.
// Words: 4 a thread (next, previous, rank of the generic pointer, isspacep bits), then
// 32 bins a cluster after every thread's.
K cluster_dsmem(const unsigned* in, unsigned* out, int n) {
  __shared__ unsigned vals[128];
  __shared__ unsigned bins[32];
  cg::cluster_group c = cg::this_cluster();
  unsigned t = threadIdx.x, g = blockIdx.x * blockDim.x + t;
  unsigned r = c.block_rank(), nb = c.num_blocks();
  vals[t] = in[g % n];
  if (t < 32) bins[t] = 0;
  c.sync();
  unsigned* next = c.map_shared_rank(vals, (r + 1) % nb);
  unsigned* prev = c.map_shared_rank(vals, (r + nb - 1) % nb);
  unsigned* first_bins = c.map_shared_rank(bins, 0);
  unsigned v = next[t];
  unsigned w = prev[127 - t];
  atomicAdd(&first_bins[v & 31], 1);
  unsigned space = __isClusterShared(prev) | __isShared(prev) << 1 | __isShared(vals) << 2 |
                   __isClusterShared(&out[0]) << 3;
  unsigned* o = out + 4 * g;
  o[0] = v;
  o[1] = w;
  o[2] = __cluster_query_shared_rank(prev);
  o[3] = space;
  c.sync();
  if (r == 0 && t < 32) out[4 * gridDim.x * blockDim.x + 32 * (blockIdx.x / nb) + t] = bins[t];
}

// Two blocks a cluster. Each block stores a word derived from its input in its shared
// memory, arrives at the cluster barrier (release), computes a local sum while others
// arrive, waits (acquire), then reads the other block's word. 2 words a thread.
K cluster_split_barrier(const unsigned* in, unsigned* out, int n) {
  __shared__ unsigned word;
  cg::cluster_group c = cg::this_cluster();
  unsigned t = threadIdx.x, g = blockIdx.x * blockDim.x + t;
  unsigned r = c.block_rank();
  if (t == 0) word = in[blockIdx.x % n] * 3 + r;
  __syncthreads();
  __cluster_barrier_arrive();
  unsigned acc = 0;
  for (unsigned i = 0; i < 16; i++) acc = acc * 31 + in[(g + i) % n];
  __cluster_barrier_wait();
  unsigned* other = c.map_shared_rank(&word, r ^ 1);
  out[2 * g] = *other;
  out[2 * g + 1] = acc;
  c.sync();
}
