// CUB and Thrust as programs use them, compiled from the toolkit's own headers: Thrust's
// sort (radix sort of keys, and of keys with values), scans, reductions, stream
// compaction and unique; CUB's device-wide radix sort, exclusive sum, reduction and
// selection with their temporary-storage protocol; CUB's block-wide primitives
// (BlockReduce, BlockScan, BlockRadixSort) in a kernel of our own. CUB's device
// algorithms spin on other blocks' results (decoupled look-back), so a scheduler that
// let a block wait on one that never runs would hang here. Every result is checked
// against the host; the transcript prints counts and checksums only.
// The library headers first: common.h's T() macro would rename their template parameters.
#include <cub/cub.cuh>
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/unique.h>
#include <algorithm>
#include <numeric>
#include <vector>
#include "common.h"

// A reproducible mix of values, repeats included (for unique and stable sorts).
static std::vector<unsigned> data(size_t n, unsigned seed) {
    std::vector<unsigned> v(n);
    unsigned x = seed;
    for (auto &e : v) {
        x = x * 1664525u + 1013904223u;
        e = (x >> 8) % (n / 2 + 1);
    }
    return v;
}

static unsigned long long checksum(const std::vector<unsigned> &v) {
    unsigned long long s = 0;
    for (size_t i = 0; i < v.size(); i++) s = s * 31 + v[i];
    return s;
}

struct IsOdd {
    __host__ __device__ bool operator()(unsigned x) const { return x & 1; }
};

static void thrust_algorithms(size_t n) {
    OUT("thrust, %zu keys", n);
    std::vector<unsigned> h = data(n, 7);
    thrust::device_vector<unsigned> d(h.begin(), h.end());

    thrust::sort(d.begin(), d.end());
    std::vector<unsigned> want = h;
    std::sort(want.begin(), want.end());
    std::vector<unsigned> got(n);
    thrust::copy(d.begin(), d.end(), got.begin());
    CHECK(got == want);
    OUT("sort: checksum %llx", checksum(got));

    // Keys with values, stable: equal keys keep their values' order.
    thrust::device_vector<unsigned> keys(h.begin(), h.end()), vals(n);
    thrust::sequence(vals.begin(), vals.end());
    thrust::stable_sort_by_key(keys.begin(), keys.end(), vals.begin());
    std::vector<unsigned> order(n);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](unsigned a, unsigned b) { return h[a] < h[b]; });
    std::vector<unsigned> got_vals(n);
    thrust::copy(vals.begin(), vals.end(), got_vals.begin());
    CHECK(got_vals == order);
    OUT("stable_sort_by_key: values in the stable order: %s", got_vals == order ? "yes" : "no");

    thrust::device_vector<unsigned> scan(n);
    thrust::inclusive_scan(d.begin(), d.end(), scan.begin());
    std::vector<unsigned> want_scan(n);
    std::partial_sum(want.begin(), want.end(), want_scan.begin());
    std::vector<unsigned> got_scan(n);
    thrust::copy(scan.begin(), scan.end(), got_scan.begin());
    CHECK(got_scan == want_scan);
    OUT("inclusive_scan: last %u", got_scan[n - 1]);

    unsigned long long sum = thrust::reduce(d.begin(), d.end(), 0ull);
    CHECK(sum == std::accumulate(h.begin(), h.end(), 0ull));
    unsigned mx = thrust::reduce(d.begin(), d.end(), 0u, thrust::maximum<unsigned>());
    CHECK(mx == want[n - 1]);
    OUT("reduce: sum %llu, max %u", sum, mx);

    size_t unique = thrust::unique(d.begin(), d.end()) - d.begin();
    CHECK(unique == (size_t)(std::unique(want.begin(), want.end()) - want.begin()));
    OUT("unique: %zu distinct", unique);

    thrust::device_vector<unsigned> odd(n);
    thrust::device_vector<unsigned> src(h.begin(), h.end());
    size_t nodd = thrust::copy_if(src.begin(), src.end(), odd.begin(), IsOdd()) - odd.begin();
    CHECK(nodd == (size_t)std::count_if(h.begin(), h.end(), [](unsigned x) { return x & 1; }));
    OUT("copy_if: %zu odd", nodd);
}

// CUB's device-wide algorithms: the first call with NULL storage asks how much temporary
// storage it needs, the second does the work.
static void cub_device(size_t n) {
    OUT("cub device-wide, %zu keys", n);
    std::vector<unsigned> h = data(n, 11);
    unsigned *in = NULL, *out = NULL, *vin = NULL, *vout = NULL;
    int *count = NULL;
    unsigned long long *total = NULL;
    T(cudaMalloc(&in, n * sizeof(unsigned)));
    T(cudaMalloc(&out, n * sizeof(unsigned)));
    T(cudaMalloc(&vin, n * sizeof(unsigned)));
    T(cudaMalloc(&vout, n * sizeof(unsigned)));
    T(cudaMalloc(&count, sizeof(int)));
    T(cudaMalloc(&total, sizeof(unsigned long long)));
    if (!in || !out || !vin || !vout || !count || !total) {
        failures++;
        return;
    }
    T(cudaMemcpy(in, h.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    std::vector<unsigned> idx(n);
    std::iota(idx.begin(), idx.end(), 0u);
    T(cudaMemcpy(vin, idx.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));

    void *tmp = NULL;
    size_t bytes = 0;
    T(cub::DeviceRadixSort::SortPairs(tmp, bytes, in, out, vin, vout, (int)n));
    OUT("temporary storage asked for: %s", bytes ? "some" : "none");
    T(cudaMalloc(&tmp, bytes));
    T(cub::DeviceRadixSort::SortPairs(tmp, bytes, in, out, vin, vout, (int)n));
    std::vector<unsigned> keys(n), vals(n);
    T(cudaMemcpy(keys.data(), out, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    T(cudaMemcpy(vals.data(), vout, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    std::vector<unsigned> want = h;
    std::stable_sort(want.begin(), want.end());
    CHECK(keys == want);
    bool pairs = true;
    for (size_t i = 0; i < n; i++) pairs &= h[vals[i]] == keys[i] && (i == 0 || keys[i - 1] != keys[i] || vals[i - 1] < vals[i]);
    CHECK(pairs);
    OUT("SortPairs: checksum %llx, values follow their keys stably: %s", checksum(keys), pairs ? "yes" : "no");
    T(cudaFree(tmp));

    tmp = NULL;
    bytes = 0;
    T(cub::DeviceScan::ExclusiveSum(tmp, bytes, in, out, (int)n));
    T(cudaMalloc(&tmp, bytes));
    T(cub::DeviceScan::ExclusiveSum(tmp, bytes, in, out, (int)n));
    std::vector<unsigned> scan(n), want_scan(n);
    T(cudaMemcpy(scan.data(), out, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    std::exclusive_scan(h.begin(), h.end(), want_scan.begin(), 0u);
    CHECK(scan == want_scan);
    OUT("ExclusiveSum: last %u", scan[n - 1]);
    T(cudaFree(tmp));

    tmp = NULL;
    bytes = 0;
    T(cub::DeviceReduce::Sum(tmp, bytes, in, total, (int)n));
    T(cudaMalloc(&tmp, bytes));
    T(cub::DeviceReduce::Sum(tmp, bytes, in, total, (int)n));
    unsigned long long sum = 0;
    T(cudaMemcpy(&sum, total, sizeof sum, cudaMemcpyDeviceToHost));
    CHECK(sum == std::accumulate(h.begin(), h.end(), 0ull));
    OUT("Reduce::Sum: %llu", sum);
    T(cudaFree(tmp));

    tmp = NULL;
    bytes = 0;
    T(cub::DeviceSelect::If(tmp, bytes, in, out, count, (int)n, IsOdd()));
    T(cudaMalloc(&tmp, bytes));
    T(cub::DeviceSelect::If(tmp, bytes, in, out, count, (int)n, IsOdd()));
    int selected = -1;
    T(cudaMemcpy(&selected, count, sizeof selected, cudaMemcpyDeviceToHost));
    std::vector<unsigned> odd;
    std::copy_if(h.begin(), h.end(), std::back_inserter(odd), [](unsigned x) { return x & 1; });
    std::vector<unsigned> got((size_t)std::max(selected, 0));
    if (selected > 0) T(cudaMemcpy(got.data(), out, selected * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CHECK(got == odd);
    OUT("Select::If: %d odd, in their order: %s", selected, got == odd ? "yes" : "no");
    T(cudaFree(tmp));

    T(cudaFree(in));
    T(cudaFree(out));
    T(cudaFree(vin));
    T(cudaFree(vout));
    T(cudaFree(count));
    T(cudaFree(total));
}

// CUB's block-wide primitives: each block of 128 threads, 4 items each, sorts its 512
// keys, scans them and reduces them.
constexpr int THREADS = 128, ITEMS = 4, TILE = THREADS * ITEMS;

__global__ void block_primitives(const unsigned *in, unsigned *sorted, unsigned *scanned, unsigned *sums) {
    using Sort = cub::BlockRadixSort<unsigned, THREADS, ITEMS>;
    using Scan = cub::BlockScan<unsigned, THREADS>;
    using Reduce = cub::BlockReduce<unsigned, THREADS>;
    __shared__ union {
        typename Sort::TempStorage sort;
        typename Scan::TempStorage scan;
        typename Reduce::TempStorage reduce;
    } storage;
    unsigned keys[ITEMS];
    const unsigned *tile = in + blockIdx.x * TILE;
    for (int i = 0; i < ITEMS; i++) keys[i] = tile[threadIdx.x * ITEMS + i];
    Sort(storage.sort).Sort(keys);
    __syncthreads();
    for (int i = 0; i < ITEMS; i++) sorted[blockIdx.x * TILE + threadIdx.x * ITEMS + i] = keys[i];
    unsigned prefix[ITEMS];
    Scan(storage.scan).InclusiveSum(keys, prefix);
    __syncthreads();
    for (int i = 0; i < ITEMS; i++) scanned[blockIdx.x * TILE + threadIdx.x * ITEMS + i] = prefix[i];
    unsigned total = Reduce(storage.reduce).Sum(keys);
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

static void cub_block(int blocks) {
    OUT("cub block-wide, %d blocks of %d keys", blocks, TILE);
    size_t n = (size_t)blocks * TILE;
    std::vector<unsigned> h = data(n, 3);
    unsigned *in = NULL, *sorted = NULL, *scanned = NULL, *sums = NULL;
    T(cudaMalloc(&in, n * sizeof(unsigned)));
    T(cudaMalloc(&sorted, n * sizeof(unsigned)));
    T(cudaMalloc(&scanned, n * sizeof(unsigned)));
    T(cudaMalloc(&sums, blocks * sizeof(unsigned)));
    if (!in || !sorted || !scanned || !sums) {
        failures++;
        return;
    }
    T(cudaMemcpy(in, h.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    block_primitives<<<blocks, THREADS>>>(in, sorted, scanned, sums);
    T(cudaGetLastError());
    T(cudaDeviceSynchronize());
    std::vector<unsigned> s(n), p(n), t(blocks);
    T(cudaMemcpy(s.data(), sorted, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    T(cudaMemcpy(p.data(), scanned, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    T(cudaMemcpy(t.data(), sums, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost));
    bool ok = true;
    for (int b = 0; b < blocks; b++) {
        std::vector<unsigned> tile(h.begin() + b * TILE, h.begin() + (b + 1) * TILE);
        std::sort(tile.begin(), tile.end());
        std::vector<unsigned> prefix(TILE);
        std::partial_sum(tile.begin(), tile.end(), prefix.begin());
        ok &= std::equal(tile.begin(), tile.end(), s.begin() + b * TILE);
        ok &= std::equal(prefix.begin(), prefix.end(), p.begin() + b * TILE);
        ok &= t[b] == prefix[TILE - 1];
    }
    CHECK(ok);
    OUT("BlockRadixSort, BlockScan, BlockReduce: every block right: %s", ok ? "yes" : "no");
    T(cudaFree(in));
    T(cudaFree(sorted));
    T(cudaFree(scanned));
    T(cudaFree(sums));
}

int main(void) {
    T(cudaFree(0));
    thrust_algorithms(1 << 14);
    cub_device((1 << 14) + 123);
    cub_block(8);
    return finish();
}
