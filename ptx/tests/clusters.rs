//! Thread-block clusters: the cluster's special registers, distributed shared memory
//! (`mapa`, `.shared::cluster` loads, stores and atomics, generic addresses into other
//! blocks), `barrier.cluster` with arrive and wait apart, remote mbarrier arrivals, the
//! deadlock of a cluster whose barrier can never complete, and faults at addresses
//! outside every block of the cluster; both engines, one host thread and several.

mod common;
use common::*;
use cumock_ptx::{run, Engine, FaultKind, Launch, Module, RESERVED_SHARED};

const SOURCE: &str = r#"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// Thread 0 of each block writes what it knows of its cluster: 10 words a block.
extern "C" __global__ void registers(unsigned *out) {
    if (threadIdx.x != 0) return;
    unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned *o = out + 10 * b;
    cg::cluster_group c = cg::this_cluster();
    o[0] = c.block_rank();
    o[1] = c.num_blocks();
    o[2] = c.block_index().x;
    o[3] = c.block_index().y;
    o[4] = c.dim_blocks().x;
    o[5] = c.dim_blocks().y;
    o[6] = __clusterIdx().x;
    o[7] = __clusterIdx().y;
    o[8] = __clusterGridDimInClusters().x;
    o[9] = __clusterDimIsSpecified();
}

// Each block fills its shared array with its rank, the cluster syncs, then each thread
// reads its element from the next block's array (distributed shared memory) and adds
// one to the previous block's with an atomic; the cluster syncs again before exiting.
extern "C" __global__ void ring(unsigned *out) {
    __shared__ unsigned buf[64];
    __shared__ unsigned hits[64];
    cg::cluster_group c = cg::this_cluster();
    unsigned r = c.block_rank(), n = c.num_blocks();
    buf[threadIdx.x] = r * 1000 + threadIdx.x;
    hits[threadIdx.x] = 0;
    c.sync();
    unsigned *next = c.map_shared_rank(buf, (r + 1) % n);
    unsigned *prev_hits = c.map_shared_rank(hits, (r + n - 1) % n);
    unsigned v = next[threadIdx.x];
    atomicAdd(&prev_hits[threadIdx.x], 1);
    c.sync();
    unsigned b = blockIdx.x;
    out[b * 64 + threadIdx.x] = v + hits[threadIdx.x] * 100000;
}

// The CUDA programming guide's distributed shared memory histogram: each block owns a
// slice of the bins, every block adds into the owner's shared memory.
extern "C" __global__ void histogram(int *bins, const int nbins, const int bins_per_block,
                                     const int *input, size_t array_size) {
    extern __shared__ int smem[];
    namespace cg = cooperative_groups;
    int tid = cg::this_grid().thread_rank();
    cg::cluster_group cluster = cg::this_cluster();
    unsigned int clusterBlockRank = cluster.block_rank();
    int cluster_size = cluster.dim_blocks().x;
    for (int i = threadIdx.x; i < bins_per_block; i += blockDim.x) smem[i] = 0;
    cluster.sync();
    for (int i = tid; i < array_size; i += blockDim.x * gridDim.x) {
        int ldata = input[i];
        int binid = ldata;
        if (ldata < 0) binid = 0;
        else if (ldata >= nbins) binid = nbins - 1;
        int dst_block_rank = (int)(binid / bins_per_block);
        int dst_offset = binid % bins_per_block;
        int *dst_smem = cluster.map_shared_rank(smem, dst_block_rank);
        atomicAdd(dst_smem + dst_offset, 1);
    }
    cluster.sync();
    int *lbins = bins + (blockIdx.x / cluster_size) * nbins;
    for (int i = threadIdx.x; i < bins_per_block; i += blockDim.x) {
        atomicAdd(&lbins[clusterBlockRank * bins_per_block + i], smem[i]);
    }
}
"#;

/// Hand-written kernels for what nvcc does not write from CUDA C++ on its own.
const PTX: &str = r#"
.version 8.0
.target sm_90
.address_size 64

// Block rank 0 leaves at once; the others arrive, work, then wait: the exited threads
// do not hold the barrier up.
.visible .entry leaver(.param .u64 out) {
    .reg .u32 %r<6>;
    .reg .pred %p<2>;
    .reg .b64 %rd<4>;
    mov.u32 %r1, %cluster_ctarank;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 ret;
    barrier.cluster.arrive.release.aligned;
    mov.u32 %r2, %ctaid.x;
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r2, 4;
    add.u64 %rd3, %rd1, %rd2;
    barrier.cluster.wait.acquire.aligned;
    st.global.u32 [%rd3], 7;
    ret;
}

// Rank 0 waits on an mbarrier nobody arrives at; the others wait at the cluster barrier
// rank 0 never reaches: a deadlock.
.visible .entry stuck() {
    .reg .u32 %r<3>;
    .reg .pred %p<3>;
    .shared .align 8 .b64 bar;
    mov.u32 %r1, %cluster_ctarank;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 bra WAIT;
    barrier.cluster.arrive;
    barrier.cluster.wait;
    ret;
WAIT:
    mbarrier.init.shared.b64 [bar], 1;
LOOP:
    mbarrier.try_wait.parity.shared.b64 %p2, [bar], 0;
    @!%p2 bra LOOP;
    ret;
}

// Rank 0 spins on a word of its shared memory that rank 1 sets after a long loop: the
// blocks take turns (a slice each), and the spin is not mistaken for a deadlock.
.visible .entry flag(.param .u64 out) {
    .reg .u32 %r<6>;
    .reg .pred %p<3>;
    .reg .b64 %rd<2>;
    .shared .align 4 .b32 f;
    mov.u32 %r1, %cluster_ctarank;
    st.shared.u32 [f], 0;
    barrier.cluster.arrive;
    barrier.cluster.wait;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 bra SPIN;
    mov.u32 %r2, f;
    mapa.shared::cluster.u32 %r3, %r2, 0;
    mov.u32 %r4, 0;
WORK:
    add.u32 %r4, %r4, 1;
    setp.lt.u32 %p2, %r4, 5000;
    @%p2 bra WORK;
    st.shared::cluster.u32 [%r3], %r4;
    ret;
SPIN:
    ld.volatile.shared.u32 %r5, [f];
    setp.eq.u32 %p2, %r5, 0;
    @%p2 bra SPIN;
    ld.param.u64 %rd1, [out];
    st.global.u32 [%rd1], %r5;
    ret;
}

// Rank 0 copies its 32-byte array into rank 1's with a bulk copy, completing on rank 1's
// mbarrier, which rank 1 expects the bytes on and waits for; rank 1 writes what came.
.visible .entry bulk_push(.param .u64 out) {
    .reg .u32 %r<12>;
    .reg .pred %p<5>;
    .reg .b64 %rd<4>;
    .shared .align 16 .b32 src[8];
    .shared .align 16 .b32 dst[8];
    .shared .align 8 .b64 bar;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %cluster_ctarank;
    setp.lt.u32 %p1, %r1, 8;
    mul.lo.u32 %r3, %r2, 100;
    add.u32 %r3, %r3, %r1;
    shl.b32 %r4, %r1, 2;
    mov.u32 %r5, src;
    add.u32 %r5, %r5, %r4;
    @%p1 st.shared.u32 [%r5], %r3;
    setp.eq.u32 %p2, %r1, 0;
    @%p2 mbarrier.init.shared::cta.b64 [bar], 1;
    barrier.cluster.arrive;
    barrier.cluster.wait;
    setp.eq.u32 %p3, %r2, 0;
    and.pred %p4, %p2, %p3;
    @!%p4 bra RECEIVE;
    mov.u32 %r6, dst;
    mapa.shared::cluster.u32 %r7, %r6, 1;
    mov.u32 %r8, bar;
    mapa.shared::cluster.u32 %r9, %r8, 1;
    cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r7], [src], 32, [%r9];
RECEIVE:
    @%p3 bra DONE;
    @%p2 mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 32;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p4, [bar], 0;
    @!%p4 bra WAIT;
    mov.u32 %r10, dst;
    add.u32 %r10, %r10, %r4;
    @!%p1 bra DONE;
    ld.shared.u32 %r11, [%r10];
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r11;
DONE:
    barrier.cluster.arrive;
    barrier.cluster.wait;
    ret;
}

// Rank 0 multicasts 32 bytes of `src` (global) to the same offset in every block of
// the cluster; each block expects them on its own mbarrier, waits, and writes them out.
.visible .entry multicast(.param .u64 src, .param .u64 out) {
    .reg .u32 %r<12>;
    .reg .pred %p<5>;
    .reg .b64 %rd<6>;
    .reg .b16 %rs<2>;
    .shared .align 16 .b32 dst[8];
    .shared .align 8 .b64 bar;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %cluster_ctarank;
    setp.eq.u32 %p2, %r1, 0;
    @%p2 mbarrier.init.shared::cta.b64 [bar], 1;
    @%p2 mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 32;
    barrier.cluster.arrive;
    barrier.cluster.wait;
    setp.eq.u32 %p3, %r2, 0;
    and.pred %p4, %p2, %p3;
    ld.param.u64 %rd1, [src];
    mov.u16 %rs1, 15;
    @%p4 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [dst], [%rd1], 32, [bar], %rs1;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p4, [bar], 0;
    @!%p4 bra WAIT;
    setp.lt.u32 %p1, %r1, 8;
    @!%p1 bra DONE;
    shl.b32 %r4, %r1, 2;
    mov.u32 %r10, dst;
    add.u32 %r10, %r10, %r4;
    ld.shared.u32 %r11, [%r10];
    ld.param.u64 %rd2, [out];
    shl.b32 %r5, %r2, 3;
    add.u32 %r5, %r5, %r1;
    mul.wide.u32 %rd3, %r5, 4;
    add.u64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r11;
DONE:
    barrier.cluster.arrive;
    barrier.cluster.wait;
    ret;
}

// Each block (a cluster of one) syncs its cluster 3 - %ctaid.x times, arrives, works long
// enough to yield its host thread in a cooperative launch, then waits: the phases other
// blocks complete meanwhile are not its own.
.visible .entry long_split(.param .u64 out) {
    .reg .u32 %r<4>;
    .reg .pred %p<2>;
    .reg .b64 %rd<4>;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, 3;
    sub.u32 %r3, %r3, %r2;
PAIRS:
    setp.eq.u32 %p1, %r3, 0;
    @%p1 bra ARRIVE;
    barrier.cluster.arrive;
    barrier.cluster.wait;
    sub.u32 %r3, %r3, 1;
    bra.uni PAIRS;
ARRIVE:
    barrier.cluster.arrive;
    mov.u32 %r1, 0;
LOOP:
    add.u32 %r1, %r1, 1;
    setp.lt.u32 %p1, %r1, 3000;
    @%p1 bra LOOP;
    barrier.cluster.wait;
    mov.u32 %r2, %ctaid.x;
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r2, 4;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r1;
    ret;
}

// Rank 1's threads push words into rank 0's array (st.async) and add into its counter
// (red.async), each completing 4 bytes on rank 0's mbarrier, which expects 256; rank 0
// waits for the phase and writes the array and the counter.
.visible .entry push_async(.param .u64 out) {
    .reg .u32 %r<16>;
    .reg .pred %p<4>;
    .reg .b64 %rd<4>;
    .shared .align 4 .b32 slots[32];
    .shared .align 4 .b32 count;
    .shared .align 8 .b64 bar;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %cluster_ctarank;
    setp.eq.u32 %p1, %r2, 0;
    setp.eq.u32 %p2, %r1, 0;
    and.pred %p3, %p1, %p2;
    @%p3 st.shared.u32 [count], 1000;
    @%p3 mbarrier.init.shared::cta.b64 [bar], 1;
    @%p3 mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 256;
    barrier.cluster.arrive;
    barrier.cluster.wait;
    @%p1 bra WAIT;
    mov.u32 %r3, slots;
    shl.b32 %r4, %r1, 2;
    add.u32 %r3, %r3, %r4;
    mapa.shared::cluster.u32 %r5, %r3, 0;
    mov.u32 %r6, bar;
    mapa.shared::cluster.u32 %r7, %r6, 0;
    mov.u32 %r8, count;
    mapa.shared::cluster.u32 %r9, %r8, 0;
    mul.lo.u32 %r10, %r1, 7;
    st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r5], %r10, [%r7];
    red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r9], %r1, [%r7];
    bra.uni DONE;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], 0;
    @!%p3 bra WAIT;
    shl.b32 %r4, %r1, 2;
    mov.u32 %r3, slots;
    add.u32 %r3, %r3, %r4;
    ld.shared.u32 %r11, [%r3];
    ld.param.u64 %rd1, [out];
    mul.wide.u32 %rd2, %r1, 4;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r11;
    @!%p2 bra DONE;
    ld.shared.u32 %r12, [count];
    st.global.u32 [%rd1+128], %r12;
DONE:
    barrier.cluster.arrive;
    barrier.cluster.wait;
    ret;
}

// Reads word `off` of block `rank`'s 16-byte array through mapa and ld.shared::cluster.
.visible .entry reach(.param .u32 rank, .param .u32 off, .param .u64 out) {
    .reg .u32 %r<8>;
    .reg .b64 %rd<3>;
    .shared .align 4 .b32 buf[4];
    ld.param.u32 %r1, [rank];
    ld.param.u32 %r2, [off];
    mov.u32 %r3, buf;
    add.u32 %r3, %r3, %r2;
    barrier.cluster.arrive;
    barrier.cluster.wait;
    mapa.shared::cluster.u32 %r4, %r3, %r1;
    ld.shared::cluster.u32 %r5, [%r4];
    ld.param.u64 %rd1, [out];
    st.global.u32 [%rd1], %r5;
    barrier.cluster.arrive;
    barrier.cluster.wait;
    ret;
}

// Generic addresses: each block stores its rank into the next block's word through a
// generic mapa, and reports getctarank and isspacep of the addresses it used.
.visible .entry generic(.param .u64 out) {
    .reg .u32 %r<12>;
    .reg .b64 %rd<12>;
    .reg .pred %p<4>;
    .shared .align 4 .b32 word;
    mov.u32 %r1, %cluster_ctarank;
    mov.u32 %r2, %cluster_nctarank;
    add.u32 %r3, %r1, 1;
    rem.u32 %r3, %r3, %r2;
    mov.u64 %rd1, word;
    cvta.shared.u64 %rd2, %rd1;
    mapa.u64 %rd3, %rd2, %r3;
    barrier.cluster.arrive;
    barrier.cluster.wait;
    st.u32 [%rd3], %r1;
    getctarank.u32 %r4, %rd3;
    getctarank.u32 %r5, %rd2;
    isspacep.shared::cluster %p1, %rd3;
    isspacep.shared %p2, %rd3;
    isspacep.shared %p3, %rd2;
    selp.u32 %r6, 1, 0, %p1;
    selp.u32 %r7, 1, 0, %p2;
    selp.u32 %r8, 1, 0, %p3;
    mov.pred %p1, %is_explicit_cluster;
    selp.u32 %r9, 1, 0, %p1;
    barrier.cluster.arrive;
    barrier.cluster.wait;
    ld.shared.u32 %r10, [word];
    mov.u32 %r11, %ctaid.x;
    ld.param.u64 %rd4, [out];
    mul.wide.u32 %rd5, %r11, 28;
    add.u64 %rd6, %rd4, %rd5;
    st.global.u32 [%rd6], %r10;
    st.global.u32 [%rd6+4], %r4;
    st.global.u32 [%rd6+8], %r5;
    st.global.u32 [%rd6+12], %r6;
    st.global.u32 [%rd6+16], %r7;
    st.global.u32 [%rd6+20], %r8;
    st.global.u32 [%rd6+24], %r9;
    ret;
}

// Every thread of the other blocks arrives on rank 0's mbarrier (expecting them all);
// rank 0 waits for the phase, then writes how many arrived.
.visible .entry remote_arrive(.param .u64 out) {
    .reg .u32 %r<8>;
    .reg .b64 %rd<4>;
    .reg .pred %p<4>;
    .shared .align 8 .b64 bar;
    mov.u32 %r1, %cluster_ctarank;
    mov.u32 %r2, %cluster_nctarank;
    mov.u32 %r3, %ntid.x;
    sub.u32 %r4, %r2, 1;
    mul.lo.u32 %r4, %r4, %r3;
    setp.eq.u32 %p1, %r1, 0;
    mov.u32 %r5, %tid.x;
    setp.eq.u32 %p2, %r5, 0;
    and.pred %p2, %p2, %p1;
    @%p2 mbarrier.init.shared::cta.b64 [bar], %r4;
    fence.mbarrier_init.release.cluster;
    barrier.cluster.arrive.relaxed.aligned;
    barrier.cluster.wait.aligned;
    @%p1 bra WAIT;
    mov.u32 %r6, bar;
    mapa.shared::cluster.u32 %r7, %r6, 0;
    mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r7];
    ret;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p3, [bar], 0;
    @!%p3 bra WAIT;
    ld.param.u64 %rd1, [out];
    @%p2 st.global.u32 [%rd1], %r4;
    ret;
}
"#;

fn module() -> Module {
    Module::parse(&ptx(SOURCE)).unwrap()
}

fn hand() -> Module {
    Module::parse(PTX).unwrap()
}

const ENGINES: [Engine; 2] = [Engine::Interp, Engine::Jit];

fn clustered<'a>(
    grid: [u32; 3],
    block: u32,
    cluster: [u32; 3],
    p: &'a [u8],
    engine: Engine,
    threads: usize,
) -> Launch<'a> {
    Launch {
        grid,
        engine,
        host_threads: threads,
        cluster: Some(cluster),
        ..launch(1, block, p)
    }
}

#[test]
fn special_registers_say_where_the_block_is_in_its_cluster() {
    let m = module();
    let k = m.kernel("registers").unwrap();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let out = mem.map(&u32s(&[0; 10 * 24]), true);
        let p = params(&m.kernels[k], &[out]);
        let l = clustered([4, 6, 1], 32, [2, 3, 1], &p, engine, 2);
        run(&m, k, &l, &mem).unwrap();
        let got = to_u32s(&mem.read(out));
        for y in 0..6u32 {
            for x in 0..4u32 {
                let b = (x + 4 * y) as usize;
                let (cx, cy) = (x % 2, y % 3);
                let want = [cx + 2 * cy, 6, cx, cy, 2, 3, x / 2, y / 3, 2, 1];
                assert_eq!(got[10 * b..10 * b + 10], want, "{engine:?} block ({x},{y})");
            }
        }
        // Without clusters each block is a cluster of one.
        let mut mem = TestMemory::new();
        let out = mem.map(&u32s(&[0; 10 * 3]), true);
        let p = params(&m.kernels[k], &[out]);
        let l = Launch {
            engine,
            ..launch(3, 32, &p)
        };
        run(&m, k, &l, &mem).unwrap();
        let got = to_u32s(&mem.read(out));
        assert_eq!(got[20..30], [0, 1, 0, 0, 1, 1, 2, 0, 3, 0], "{engine:?}");
    }
}

#[test]
fn blocks_read_and_add_into_each_others_shared_memory() {
    let m = module();
    let k = m.kernel("ring").unwrap();
    for engine in ENGINES {
        for threads in [1, 3] {
            let mut mem = TestMemory::new();
            let out = mem.map(&u32s(&[0; 12 * 64]), true);
            let p = params(&m.kernels[k], &[out]);
            let l = clustered([12, 1, 1], 64, [4, 1, 1], &p, engine, threads);
            run(&m, k, &l, &mem).unwrap();
            let got = to_u32s(&mem.read(out));
            for b in 0..12u32 {
                let next = (b % 4 + 1) % 4;
                for t in 0..64u32 {
                    assert_eq!(
                        got[(b * 64 + t) as usize],
                        next * 1000 + t + 100000,
                        "{engine:?} {threads} threads, block {b} thread {t}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_programming_guides_histogram_counts_every_value_once() {
    let m = module();
    let k = m.kernel("histogram").unwrap();
    let (nbins, cluster, blocks) = (64u32, 4u32, 8u32);
    let per_block = nbins / cluster;
    let input: Vec<u32> = (0..5000u32).map(|i| (i * 7919 + i / 3) % 70).collect();
    let mut want = vec![0u32; nbins as usize];
    for &v in &input {
        want[(v as usize).min(nbins as usize - 1)] += 1;
    }
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let bins = mem.map(&u32s(&vec![0; (nbins * blocks / cluster) as usize]), true);
        let inp = mem.map(&u32s(&input), false);
        let p = params(
            &m.kernels[k],
            &[
                bins,
                nbins as u64,
                per_block as u64,
                inp,
                input.len() as u64,
            ],
        );
        let l = Launch {
            dynamic_shared_bytes: per_block * 4,
            ..clustered([blocks, 1, 1], 128, [cluster, 1, 1], &p, engine, 2)
        };
        run(&m, k, &l, &mem).unwrap();
        let got = to_u32s(&mem.read(bins));
        let total: Vec<u32> = (0..nbins as usize)
            .map(|i| got[i] + got[nbins as usize + i])
            .collect();
        assert_eq!(total, want, "{engine:?}");
    }
}

#[test]
fn threads_that_exited_do_not_hold_up_the_cluster_barrier() {
    let m = hand();
    let k = m.kernel("leaver").unwrap();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let out = mem.map(&u32s(&[0; 4]), true);
        let p = params(&m.kernels[k], &[out]);
        let l = clustered([4, 1, 1], 64, [2, 1, 1], &p, engine, 1);
        run(&m, k, &l, &mem).unwrap();
        assert_eq!(to_u32s(&mem.read(out)), [0, 7, 0, 7], "{engine:?}");
    }
}

#[test]
fn a_cluster_barrier_that_can_never_complete_is_a_deadlock() {
    let m = hand();
    let k = m.kernel("stuck").unwrap();
    for engine in ENGINES {
        let mem = TestMemory::new();
        let p = params(&m.kernels[k], &[]);
        let l = clustered([2, 1, 1], 32, [2, 1, 1], &p, engine, 1);
        let f = run(&m, k, &l, &mem).unwrap_err();
        assert_eq!(f.kind, FaultKind::Deadlock, "{engine:?}: {f}");
        // Rank 1 waited last: the fault names its wait.
        assert!(
            f.detail
                .contains("cluster barrier: 32 of 64 threads of the cluster arrived and 0 exited"),
            "{engine:?}: {f}"
        );
        assert_eq!(f.block, [1, 0, 0], "{f}");
        assert!(f.instruction.contains("barrier.cluster.wait"), "{f}");
    }
}

#[test]
fn a_block_spinning_on_its_shared_memory_sees_another_blocks_store() {
    let m = hand();
    let k = m.kernel("flag").unwrap();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let out = mem.map(&u32s(&[0]), true);
        let p = params(&m.kernels[k], &[out]);
        let l = clustered([2, 1, 1], 32, [2, 1, 1], &p, engine, 1);
        run(&m, k, &l, &mem).unwrap();
        assert_eq!(to_u32s(&mem.read(out)), [5000], "{engine:?}");
    }
}

#[test]
fn a_bulk_copy_lands_in_another_blocks_shared_memory_and_completes_its_mbarrier() {
    let m = hand();
    let k = m.kernel("bulk_push").unwrap();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let out = mem.map(&u32s(&[0; 8]), true);
        let p = params(&m.kernels[k], &[out]);
        let l = clustered([2, 1, 1], 32, [2, 1, 1], &p, engine, 1);
        run(&m, k, &l, &mem).unwrap();
        assert_eq!(
            to_u32s(&mem.read(out)),
            [0, 1, 2, 3, 4, 5, 6, 7],
            "{engine:?}"
        );
        // Without clusters the copy is the illegal instruction the H200 raises.
        let l = Launch {
            engine,
            ..launch(2, 32, &p)
        };
        let f = run(&m, k, &l, &mem).unwrap_err();
        assert_eq!(f.kind, FaultKind::IllegalInstruction, "{f}");
    }
}

#[test]
fn a_multicast_bulk_copy_lands_in_every_block_of_its_mask() {
    let m = hand();
    let k = m.kernel("multicast").unwrap();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let src = mem.map(&u32s(&[10, 11, 12, 13, 14, 15, 16, 17]), false);
        let out = mem.map(&u32s(&[0; 32]), true);
        let p = params(&m.kernels[k], &[src, out]);
        let l = clustered([4, 1, 1], 32, [4, 1, 1], &p, engine, 1);
        run(&m, k, &l, &mem).unwrap();
        let want: Vec<u32> = (0..32).map(|i| 10 + i % 8).collect();
        assert_eq!(to_u32s(&mem.read(out)), want, "{engine:?}");
    }
}

#[test]
fn blocks_of_a_cooperative_launch_keep_their_own_cluster_barrier() {
    let m = hand();
    let k = m.kernel("long_split").unwrap();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let out = mem.map(&u32s(&[0; 4]), true);
        let p = params(&m.kernels[k], &[out]);
        let l = Launch {
            engine,
            host_threads: 1,
            cooperative: true,
            ..launch(4, 32, &p)
        };
        run(&m, k, &l, &mem).unwrap();
        assert_eq!(to_u32s(&mem.read(out)), [3000; 4], "{engine:?}");
    }
}

#[test]
fn st_async_and_red_async_complete_their_bytes_on_the_receivers_mbarrier() {
    let m = hand();
    let k = m.kernel("push_async").unwrap();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let out = mem.map(&u32s(&[0; 33]), true);
        let p = params(&m.kernels[k], &[out]);
        let l = clustered([2, 1, 1], 32, [2, 1, 1], &p, engine, 1);
        run(&m, k, &l, &mem).unwrap();
        let mut want: Vec<u32> = (0..32).map(|t| 7 * t).collect();
        want.push(1000 + (0..32).sum::<u32>());
        assert_eq!(to_u32s(&mem.read(out)), want, "{engine:?}");
    }
}

#[test]
fn another_blocks_shared_memory_is_read_through_mapa() {
    let m = hand();
    let k = m.kernel("reach").unwrap();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let out = mem.map(&u32s(&[5]), true);
        let p = params(&m.kernels[k], &[1, 4, out]);
        let l = clustered([2, 1, 1], 32, [2, 1, 1], &p, engine, 1);
        run(&m, k, &l, &mem).unwrap();
        assert_eq!(to_u32s(&mem.read(out)), [0], "{engine:?}");
    }
}

#[test]
fn an_address_outside_every_block_of_the_cluster_faults() {
    let m = hand();
    let k = m.kernel("reach").unwrap();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let out = mem.map(&u32s(&[5]), true);
        // Rank 2 of a cluster of 2.
        let p = params(&m.kernels[k], &[2, 0, out]);
        let l = clustered([2, 1, 1], 32, [2, 1, 1], &p, engine, 1);
        let f = run(&m, k, &l, &mem).unwrap_err();
        assert_eq!(f.kind, FaultKind::IllegalAddress, "{engine:?}: {f}");
        assert!(
            f.detail
                .contains("names rank 2, the cluster's blocks are ranks 0 to 1"),
            "{f}"
        );
        // The block's variables lie after the 1 KiB reserved for the system.
        assert_eq!(f.address, Some((3 << 24) + RESERVED_SHARED), "{f}");
        assert!(f.instruction.contains("ld.shared::cluster"), "{f}");
        // Past the 16 bytes every block declares, and the 128-byte unit they take.
        let p = params(&m.kernels[k], &[1, 128, out]);
        let l = clustered([2, 1, 1], 32, [2, 1, 1], &p, engine, 1);
        let f = run(&m, k, &l, &mem).unwrap_err();
        assert_eq!(f.kind, FaultKind::IllegalAddress, "{engine:?}: {f}");
        assert!(
            f.detail
                .contains("the block of rank 1 has 1152 bytes (128 its own"),
            "{f}"
        );
        assert_eq!(f.address, Some((2 << 24) + RESERVED_SHARED + 128), "{f}");
        // Without clusters, the only block is rank 0 of a cluster of one.
        let p = params(&m.kernels[k], &[1, 0, out]);
        let l = Launch {
            engine,
            ..launch(2, 32, &p)
        };
        let f = run(&m, k, &l, &mem).unwrap_err();
        assert!(f.detail.contains("ranks 0 to 0"), "{f}");
    }
}

#[test]
fn generic_addresses_reach_other_blocks_and_say_whose_they_are() {
    let m = hand();
    let k = m.kernel("generic").unwrap();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let out = mem.map(&u32s(&[9; 7 * 6]), true);
        let p = params(&m.kernels[k], &[out]);
        let l = clustered([6, 1, 1], 32, [3, 1, 1], &p, engine, 2);
        run(&m, k, &l, &mem).unwrap();
        let got = to_u32s(&mem.read(out));
        for b in 0..6u32 {
            let r = b % 3;
            let prev = (r + 2) % 3;
            let next = (r + 1) % 3;
            // Own word (written by the previous block), next's rank, own rank, and
            // isspacep: cluster yes, cta no (another block's), cta yes (own); explicit.
            assert_eq!(
                got[7 * b as usize..7 * b as usize + 7],
                [prev, next, r, 1, 0, 1, 1],
                "{engine:?} block {b}"
            );
        }
    }
}

#[test]
fn threads_arrive_on_another_blocks_mbarrier() {
    let m = hand();
    let k = m.kernel("remote_arrive").unwrap();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let out = mem.map(&u32s(&[0]), true);
        let p = params(&m.kernels[k], &[out]);
        let l = clustered([4, 1, 1], 64, [4, 1, 1], &p, engine, 1);
        run(&m, k, &l, &mem).unwrap();
        assert_eq!(to_u32s(&mem.read(out)), [192], "{engine:?}");
    }
}
