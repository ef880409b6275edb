//! Cooperative launches with thread-block clusters: every cluster of the grid in flight at
//! once, so that cooperative groups' grid sync completes across clusters while cluster
//! barriers, distributed shared memory and mbarriers (a remote arrival each round) work
//! inside each; a cluster that
//! deadlocks on its own barriers is a deadlock while the others wait in a grid sync, a
//! deadlock across a grid sync and a cluster barrier ends at the time limit, a fault in
//! one cluster ends the launch; both engines, one host thread and several.

mod common;
use common::*;
use cumock_ptx::{run, Engine, FaultKind, Launch, Module};
use std::time::Duration;

const SOURCE: &str = r#"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// Each round: every block sums its 64 inputs times (round + 1) into its shared word; the
// cluster syncs; rank 0 adds its cluster's words through distributed shared memory into
// partial[cluster]; the grid syncs; block 0 adds the partials into totals[round]; the
// grid syncs; every block checks the total against `expect * (round + 1)`. Block 0 works
// `work` iterations first each round, so that the others wait in the grid sync a while.
extern "C" __global__ void reduce(const int *in, int *partial, int *totals, int *wrong,
                                  int n_rounds, int expect, int work) {
    cg::grid_group grid = cg::this_grid();
    cg::cluster_group cluster = cg::this_cluster();
    __shared__ int part[64];
    __shared__ int block_sum;
    unsigned rank = cluster.block_rank(), n = cluster.num_blocks();
    unsigned nclusters = gridDim.x / n;
    unsigned cid = blockIdx.x / n;
    for (int r = 0; r < n_rounds; r++) {
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            volatile int spin = 0;
            for (int i = 0; i < work; i++) spin = spin + 1;
        }
        part[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x] * (r + 1);
        __syncthreads();
        if (threadIdx.x == 0) {
            int s = 0;
            for (unsigned i = 0; i < blockDim.x; i++) s += part[i];
            block_sum = s;
        }
        cluster.sync();
        if (rank == 0 && threadIdx.x == 0) {
            int s = 0;
            for (unsigned b = 0; b < n; b++) s += *cluster.map_shared_rank(&block_sum, b);
            partial[cid] = s;
        }
        // The other ranks' words stay until rank 0 has read them.
        cluster.sync();
        grid.sync();
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            int t = 0;
            for (unsigned c = 0; c < nclusters; c++) t += partial[c];
            totals[r] = t;
        }
        grid.sync();
        if (threadIdx.x == 0 && totals[r] != expect * (r + 1)) atomicAdd(wrong, 1);
    }
}

__device__ bool try_wait(unsigned bar, unsigned parity) {
    unsigned ok;
    asm volatile("{\n .reg .pred p;\n"
                 " mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(ok)
                 : "r"(bar), "r"(parity));
    return ok;
}

// Clusters of 2. Each round, rank 0 stores a word into rank 1's shared memory and arrives
// on rank 1's mbarrier (after working `work` iterations on odd rounds); rank 1 waits for
// the round's phase, writes the word to out[cluster * n_rounds + round]; the grid syncs
// before the next round reuses the word.
extern "C" __global__ void handoff(int *out, int n_rounds, int work) {
    cg::grid_group grid = cg::this_grid();
    cg::cluster_group cluster = cg::this_cluster();
    __shared__ unsigned long long bar;
    __shared__ int slot;
    unsigned rank = cluster.block_rank();
    unsigned a = (unsigned)__cvta_generic_to_shared(&bar);
    if (threadIdx.x == 0) asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"(a));
    cluster.sync();
    for (int r = 0; r < n_rounds; r++) {
        if (rank == 0 && threadIdx.x == 0) {
            if (r & 1) {
                volatile int spin = 0;
                for (int i = 0; i < work; i++) spin = spin + 1;
            }
            *cluster.map_shared_rank(&slot, 1) = blockIdx.x * 100 + r;
            unsigned remote;
            asm volatile("mapa.shared::cluster.u32 %0, %1, 1;" : "=r"(remote) : "r"(a));
            asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote)
                         : "memory");
        }
        if (rank == 1 && threadIdx.x == 0) {
            while (!try_wait(a, r & 1)) {
            }
            out[(blockIdx.x / 2) * n_rounds + r] = slot;
        }
        grid.sync();
    }
}

// Waits on an mbarrier of its own that nobody arrives at.
__device__ void wait_forever() {
    __shared__ unsigned long long bar;
    unsigned a = (unsigned)__cvta_generic_to_shared(&bar);
    asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"(a));
    asm volatile("{\n .reg .pred p;\n WAITING:\n mbarrier.try_wait.parity.shared.b64 p, [%0], 0;\n"
                 " @!p bra WAITING;\n}" ::"r"(a));
}

// Cluster 1's rank 0 waits forever on an mbarrier and its other ranks at the cluster
// barrier rank 0 never reaches; every other cluster waits in a grid sync cluster 1 never
// reaches: cluster 1 is deadlocked on its own.
extern "C" __global__ void planted(int *v) {
    cg::cluster_group cluster = cg::this_cluster();
    if (blockIdx.x / cluster.num_blocks() == 1) {
        if (cluster.block_rank() == 0) wait_forever();
        cluster.sync();
        return;
    }
    cg::this_grid().sync();
    v[blockIdx.x] = 1;
}

// Rank 0 of each cluster syncs the grid before the cluster; the other ranks the cluster
// first: each waits for the other, across the two barriers (a GPU hangs).
extern "C" __global__ void crossed(int *v) {
    cg::cluster_group cluster = cg::this_cluster();
    if (cluster.block_rank() == 0) {
        cg::this_grid().sync();
        cluster.sync();
    } else {
        cluster.sync();
        cg::this_grid().sync();
    }
    v[blockIdx.x] = 1;
}

// After a grid sync, rank 1 of cluster 2 stores through a null pointer; everyone else
// syncs the grid again (which the faulting block never reaches).
extern "C" __global__ void faulting(int *v, int *null) {
    cg::grid_group grid = cg::this_grid();
    cg::cluster_group cluster = cg::this_cluster();
    grid.sync();
    cluster.sync();
    if (blockIdx.x / cluster.num_blocks() == 2 && cluster.block_rank() == 1) {
        null[threadIdx.x] = 1;
        return;
    }
    grid.sync();
    v[blockIdx.x] = 1;
}
"#;

const ENGINES: [Engine; 2] = [Engine::Interp, Engine::Jit];

fn module() -> Module {
    Module::parse(&ptx(SOURCE)).unwrap()
}

fn coop_clusters<'a>(
    blocks: u32,
    threads: u32,
    cluster: u32,
    p: &'a [u8],
    engine: Engine,
    host_threads: usize,
) -> Launch<'a> {
    Launch {
        engine,
        host_threads,
        cooperative: true,
        cluster: Some([cluster, 1, 1]),
        step_limit: None,
        time_limit: Some(Duration::from_secs(60)),
        ..launch(blocks, threads, p)
    }
}

fn reduce(engine: Engine, host_threads: usize, blocks: u32, cluster: u32, rounds: u32, work: u32) {
    let m = module();
    let k = m.kernel("reduce").unwrap();
    let mut mem = TestMemory::new();
    let input: Vec<u32> = (0..blocks * 64).map(|i| i % 7 + i / 64).collect();
    let expect: u32 = input.iter().sum();
    let inp = mem.map(&u32s(&input), false);
    let partial = mem.map(&u32s(&vec![0; (blocks / cluster) as usize]), true);
    let totals = mem.map(&u32s(&vec![0; rounds as usize]), true);
    let wrong = mem.map(&u32s(&[0]), true);
    let args = [
        inp,
        partial,
        totals,
        wrong,
        rounds as u64,
        expect as u64,
        work as u64,
    ];
    let p = params(&m.kernels[k], &args);
    let l = coop_clusters(blocks, 64, cluster, &p, engine, host_threads);
    run(&m, k, &l, &mem).unwrap();
    let how = format!("{engine:?}, {host_threads} threads, clusters of {cluster}");
    assert_eq!(to_u32s(&mem.read(wrong)), [0], "{how}");
    let want: Vec<u32> = (1..=rounds).map(|r| expect * r).collect();
    assert_eq!(to_u32s(&mem.read(totals)), want, "{how}");
}

#[test]
fn a_grid_sync_reduction_over_clusters_sharing_memory() {
    for engine in ENGINES {
        for threads in [1, 2, 3] {
            reduce(engine, threads, 16, 4, 3, 0);
        }
    }
}

#[test]
fn several_grid_syncs_in_a_loop_with_a_block_that_works_long() {
    for engine in ENGINES {
        for (threads, cluster) in [(1, 2), (2, 8), (3, 2)] {
            reduce(engine, threads, 16, cluster, 5, 20_000);
        }
    }
}

#[test]
fn more_clusters_than_host_threads_sync_many_times() {
    reduce(Engine::Jit, 2, 96, 4, 8, 0);
}

#[test]
fn mbarriers_hand_words_over_inside_clusters_between_grid_syncs() {
    let m = module();
    let k = m.kernel("handoff").unwrap();
    let (clusters, rounds) = (6u32, 5u32);
    for engine in ENGINES {
        for threads in [1, 2] {
            let mut mem = TestMemory::new();
            let out = mem.map(&u32s(&vec![0; (clusters * rounds) as usize]), true);
            let p = params(&m.kernels[k], &[out, rounds as u64, 3000]);
            let l = coop_clusters(2 * clusters, 64, 2, &p, engine, threads);
            run(&m, k, &l, &mem).unwrap();
            let want: Vec<u32> = (0..clusters)
                .flat_map(|c| (0..rounds).map(move |r| 2 * c * 100 + r))
                .collect();
            assert_eq!(to_u32s(&mem.read(out)), want, "{engine:?}, {threads}");
        }
    }
}

#[test]
fn a_cluster_deadlocked_on_its_own_barriers_is_a_deadlock() {
    let m = module();
    let k = m.kernel("planted").unwrap();
    for engine in ENGINES {
        for threads in [1, 2] {
            let mut mem = TestMemory::new();
            let v = mem.map(&u32s(&[0; 8]), true);
            let p = params(&m.kernels[k], &[v]);
            let l = coop_clusters(8, 32, 2, &p, engine, threads);
            let f = run(&m, k, &l, &mem).unwrap_err();
            assert_eq!(f.kind, FaultKind::Deadlock, "{engine:?}, {threads}: {f}");
            // Cluster 1 is blocks 2 and 3.
            assert!(
                f.block == [2, 0, 0] || f.block == [3, 0, 0],
                "{engine:?}, {threads}: {f}"
            );
            assert_eq!(to_u32s(&mem.read(v)), [0; 8], "{engine:?}");
        }
    }
}

#[test]
fn a_deadlock_across_a_grid_sync_and_a_cluster_barrier_ends_at_the_time_limit() {
    let m = module();
    let k = m.kernel("crossed").unwrap();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let v = mem.map(&u32s(&[0; 4]), true);
        let p = params(&m.kernels[k], &[v]);
        let l = Launch {
            time_limit: Some(Duration::from_millis(500)),
            ..coop_clusters(4, 32, 2, &p, engine, 2)
        };
        let f = run(&m, k, &l, &mem).unwrap_err();
        assert_eq!(f.kind, FaultKind::TimeLimit, "{engine:?}: {f}");
        assert_eq!(to_u32s(&mem.read(v)), [0; 4], "{engine:?}");
    }
}

#[test]
fn a_fault_in_one_cluster_ends_the_launch() {
    let m = module();
    let k = m.kernel("faulting").unwrap();
    for engine in ENGINES {
        for threads in [1, 3] {
            let mut mem = TestMemory::new();
            let v = mem.map(&u32s(&[0; 8]), true);
            let p = params(&m.kernels[k], &[v, 0]);
            let l = coop_clusters(8, 32, 2, &p, engine, threads);
            let f = run(&m, k, &l, &mem).unwrap_err();
            assert_eq!(f.kind, FaultKind::IllegalAddress, "{engine:?}: {f}");
            assert_eq!(f.block, [5, 0, 0], "{engine:?}: {f}");
            assert_eq!(to_u32s(&mem.read(v)), [0; 8], "{engine:?}");
        }
    }
}

#[test]
fn the_host_memory_bound_is_the_whole_grids() {
    // 32 blocks of 1 GiB of shared memory: a cluster of 2 fits the bound, the grid does
    // not; the launch is refused before anything is allocated.
    let m = module();
    let k = m.kernel("planted").unwrap();
    let mut mem = TestMemory::new();
    let v = mem.map(&u32s(&[0; 32]), true);
    let p = params(&m.kernels[k], &[v]);
    let l = Launch {
        dynamic_shared_bytes: 1 << 30,
        ..coop_clusters(32, 32, 2, &p, Engine::Interp, 1)
    };
    let f = run(&m, k, &l, &mem).unwrap_err();
    assert!(
        f.detail
            .contains("a cooperative launch keeps all 32 blocks in flight"),
        "{f}"
    );
}

#[test]
fn clusters_of_one_block_in_a_cooperative_launch_still_sync() {
    reduce(Engine::Interp, 2, 8, 1, 2, 0);
}
