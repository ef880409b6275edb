//! sm_90's asynchronous copies and mbarriers as nvcc 13.0 writes them for CUDA's own
//! APIs (cuda::pipeline and cuda::memcpy_async, cuda::barrier, cooperative groups'
//! memcpy_async, the bulk copies of cuda::device) and as inline PTX writes them, under
//! both engines: the data arrive, the barriers' phases complete when their arrivals and
//! transaction bytes do (and not before), warps waiting on a phase let the others run,
//! and a copy's bad access faults at the lane and address, naming the instruction.

mod common;
use common::*;
use cumock_ptx::{run, Engine, FaultKind, KernelFault, Module};

const SOURCE: &str = r#"
#include <cuda/pipeline>
#include <cuda/barrier>
#include <cuda/ptx>
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
namespace cg = cooperative_groups;
using barrier = cuda::barrier<cuda::thread_scope_block>;

// A two-stage block-scoped pipeline over `tiles` tiles of 256 floats: tile t+1 is copied
// while tile t is summed; out[t] = the sum of tile t times 2, out[tiles + tid] = the last
// tile's element tid.
extern "C" __global__ void pipelined(const float* in, float* out, int tiles) {
  __shared__ alignas(16) float tile[2][256];
  __shared__ float partial[256];
  auto block = cg::this_thread_block();
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, 2> state;
  auto pipe = cuda::make_pipeline(block, &state);
  for (int s = 0; s < 2 && s < tiles; s++) {
    pipe.producer_acquire();
    cuda::memcpy_async(block, tile[s], in + s * 256, sizeof(float) * 256, pipe);
    pipe.producer_commit();
  }
  for (int t = 0; t < tiles; t++) {
    pipe.consumer_wait();
    partial[threadIdx.x] = tile[t % 2][threadIdx.x] * 2;
    block.sync();
    if (threadIdx.x == 0) {
      float sum = 0;
      for (int i = 0; i < 256; i++) sum += partial[i];
      out[t] = sum;
    }
    if (t == tiles - 1) out[tiles + threadIdx.x] = tile[t % 2][threadIdx.x];
    block.sync();
    pipe.consumer_release();
    if (t + 2 < tiles) {
      pipe.producer_acquire();
      cuda::memcpy_async(block, tile[t % 2], in + (t + 2) * 256, sizeof(float) * 256, pipe);
      pipe.producer_commit();
    }
  }
}

// A thread-scoped pipeline: each thread copies its own 16 bytes (cp.async.cg).
extern "C" __global__ void per_thread(const float4* in, float4* out) {
  __shared__ float4 t[256];
  auto pipe = cuda::make_pipeline();
  pipe.producer_acquire();
  cuda::memcpy_async(&t[threadIdx.x], &in[threadIdx.x], sizeof(float4), pipe);
  pipe.producer_commit();
  pipe.consumer_wait();
  // Each thread waited for its own copy only: the neighbour's needs the block's barrier.
  __syncthreads();
  float4 v = t[(threadIdx.x + 1) % blockDim.x];
  out[threadIdx.x] = v;
}

// cuda::memcpy_async over a cuda::barrier (cp.async with cp.async.mbarrier.arrive).
extern "C" __global__ void with_barrier(const float* in, float* out) {
  __shared__ alignas(16) float t[256];
  #pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ barrier b;
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) init(&b, block.size());
  block.sync();
  cuda::memcpy_async(block, t, in, sizeof(float) * 256, b);
  b.arrive_and_wait();
  out[threadIdx.x] = t[255 - threadIdx.x] + 1;
}

// cooperative_groups::memcpy_async and wait.
extern "C" __global__ void cg_copy(const float* in, float* out) {
  __shared__ float t[256];
  auto block = cg::this_thread_block();
  cg::memcpy_async(block, t, in + blockIdx.x * 256, sizeof(float) * 256);
  cg::wait(block);
  out[blockIdx.x * 256 + threadIdx.x] = t[(threadIdx.x + 7) % 256] * 3;
}

// Bulk copies: in -> shared through an mbarrier's transaction count (cuda::memcpy_async
// with 16-byte alignment on sm_90), incremented there, shared -> out as a bulk group.
extern "C" __global__ void bulk(const float* in, float* out) {
  __shared__ alignas(16) float t[512];
  #pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ barrier b;
  if (threadIdx.x == 0) {
    init(&b, blockDim.x);
    cuda::device::experimental::fence_proxy_async_shared_cta();
  }
  __syncthreads();
  barrier::arrival_token tok;
  if (threadIdx.x == 0) {
    cuda::memcpy_async(t, in + blockIdx.x * 512, cuda::aligned_size_t<16>(sizeof(t)), b);
  }
  tok = b.arrive();
  b.wait(std::move(tok));
  t[threadIdx.x] += 1;
  t[threadIdx.x + 256] += 2;
  cuda::device::experimental::fence_proxy_async_shared_cta();
  __syncthreads();
  if (threadIdx.x == 0) {
    cuda::device::experimental::cp_async_bulk_shared_to_global(out + blockIdx.x * 512, t, sizeof(t));
    cuda::device::experimental::cp_async_bulk_commit_group();
    cuda::device::experimental::cp_async_bulk_wait_group_read<0>();
  }
}

// Warp specialisation: warp 0 produces tiles into a two-slot ring guarded by "full" and
// "empty" mbarriers (bulk copies completing on "full"), warps 1-3 consume them. Every
// wait is a try_wait.parity loop: each side must let the other run.
extern "C" __global__ void producer_consumer(const int* in, int* out, int tiles) {
  __shared__ alignas(16) int ring[2][64];
  __shared__ uint64_t full[2], empty[2];
  unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < 2; s++) {
      cuda::ptx::mbarrier_init(&full[s], 1);
      cuda::ptx::mbarrier_init(&empty[s], 3);
    }
  }
  __syncthreads();
  if (warp == 0) {
    for (int t = 0; t < tiles; t++) {
      int s = t % 2;
      unsigned parity = ((t / 2) & 1) ^ 1;
      if (t >= 2)
        while (!cuda::ptx::mbarrier_try_wait_parity(&empty[s], parity)) {}
      if (lane == 0) {
        cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                             cuda::ptx::space_shared, &full[s], 256);
        cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_global,
                                 ring[s], in + t * 64, 256, &full[s]);
      }
      __syncwarp();
    }
  } else {
    int acc = 0;
    for (int t = 0; t < tiles; t++) {
      int s = t % 2;
      while (!cuda::ptx::mbarrier_try_wait_parity(&full[s], (t / 2) & 1)) {}
      acc += ring[s][(warp - 1) * 21 + lane % 21];
      __syncwarp();
      if (lane == 0) cuda::ptx::mbarrier_arrive(&empty[s]);
    }
    out[threadIdx.x - 32] = acc;
  }
}
"#;

fn module() -> Module {
    Module::parse(&ptx(SOURCE)).unwrap_or_else(|e| panic!("{e}"))
}

const ENGINES: [Engine; 2] = [Engine::Interp, Engine::Jit];

fn go(
    m: &Module,
    kernel: &str,
    grid: u32,
    block: u32,
    mem: &TestMemory,
    vals: &[u64],
    engine: Engine,
) {
    let k = m.kernel(kernel).unwrap();
    let p = params(&m.kernels[k], vals);
    let mut l = launch(grid, block, &p);
    l.engine = engine;
    run(m, k, &l, mem).unwrap_or_else(|f| panic!("{kernel} ({engine:?}): {f}"));
}

fn ramp(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i % 1000) as f32 * 0.5 - 7.0).collect()
}

#[test]
fn a_block_pipeline_overlaps_copies_with_compute() {
    let m = module();
    for engine in ENGINES {
        let tiles = 5;
        let input = ramp(256 * tiles);
        let mut mem = TestMemory::new();
        let din = mem.map(&f32s(&input), false);
        let dout = mem.map(&vec![0u8; (tiles + 256) * 4], true);
        go(
            &m,
            "pipelined",
            1,
            256,
            &mem,
            &[din, dout, tiles as u64],
            engine,
        );
        let out = to_f32s(&mem.read(dout));
        for t in 0..tiles {
            let want: f32 = input[t * 256..(t + 1) * 256].iter().map(|x| x * 2.0).sum();
            assert!(
                (out[t] - want).abs() <= want.abs() * 1e-5,
                "tile {t}: {} vs {want}",
                out[t]
            );
        }
        assert_eq!(&out[tiles..], &input[(tiles - 1) * 256..], "{engine:?}");
    }
}

#[test]
fn thread_pipelines_copy_16_bytes_each() {
    let m = module();
    for engine in ENGINES {
        let input = ramp(4 * 128);
        let mut mem = TestMemory::new();
        let din = mem.map(&f32s(&input), false);
        let dout = mem.map(&vec![0u8; 4 * 128 * 4], true);
        go(&m, "per_thread", 1, 128, &mem, &[din, dout], engine);
        let out = to_f32s(&mem.read(dout));
        for t in 0..128 {
            let from = (t + 1) % 128;
            assert_eq!(
                &out[4 * t..4 * t + 4],
                &input[4 * from..4 * from + 4],
                "{engine:?}"
            );
        }
    }
}

#[test]
fn a_cuda_barrier_waits_for_the_copies_it_tracks() {
    let m = module();
    for engine in ENGINES {
        let input = ramp(256);
        let mut mem = TestMemory::new();
        let din = mem.map(&f32s(&input), false);
        let dout = mem.map(&vec![0u8; 256 * 4], true);
        go(&m, "with_barrier", 1, 256, &mem, &[din, dout], engine);
        let out = to_f32s(&mem.read(dout));
        let want: Vec<f32> = (0..256).map(|t| input[255 - t] + 1.0).collect();
        assert_eq!(out, want, "{engine:?}");
    }
}

#[test]
fn cooperative_groups_memcpy_async_and_wait() {
    let m = module();
    for engine in ENGINES {
        let input = ramp(3 * 256);
        let mut mem = TestMemory::new();
        let din = mem.map(&f32s(&input), false);
        let dout = mem.map(&vec![0u8; 3 * 256 * 4], true);
        go(&m, "cg_copy", 3, 256, &mem, &[din, dout], engine);
        let out = to_f32s(&mem.read(dout));
        for b in 0..3 {
            for t in 0..256 {
                assert_eq!(out[b * 256 + t], input[b * 256 + (t + 7) % 256] * 3.0);
            }
        }
    }
}

#[test]
fn bulk_copies_complete_transaction_bytes_and_store_back() {
    let m = module();
    for engine in ENGINES {
        let input = ramp(2 * 512);
        let mut mem = TestMemory::new();
        let din = mem.map(&f32s(&input), false);
        let dout = mem.map(&vec![0u8; 2 * 512 * 4], true);
        go(&m, "bulk", 2, 256, &mem, &[din, dout], engine);
        let out = to_f32s(&mem.read(dout));
        for b in 0..2 {
            for i in 0..512 {
                let add = if i < 256 { 1.0 } else { 2.0 };
                assert_eq!(
                    out[b * 512 + i],
                    input[b * 512 + i] + add,
                    "{engine:?} [{b}][{i}]"
                );
            }
        }
    }
}

#[test]
fn producer_and_consumer_warps_take_turns_on_mbarriers() {
    let m = module();
    for engine in ENGINES {
        let tiles = 9usize;
        let input: Vec<u32> = (0..tiles as u32 * 64).map(|i| i * 7 + 3).collect();
        let mut mem = TestMemory::new();
        let din = mem.map(&u32s(&input), false);
        let dout = mem.map(&vec![0u8; 96 * 4], true);
        go(
            &m,
            "producer_consumer",
            1,
            128,
            &mem,
            &[din, dout, tiles as u64],
            engine,
        );
        let out = to_u32s(&mem.read(dout));
        for (c, got) in out.iter().enumerate() {
            let (warp, lane) = (c / 32 + 1, c % 32);
            let want: u32 = (0..tiles)
                .map(|t| input[t * 64 + (warp - 1) * 21 + lane % 21])
                .sum();
            assert_eq!(*got, want, "{engine:?} consumer thread {c}");
        }
    }
}

// Inline PTX: what each instruction does, observed through what it returns.
const FORMS: &str = r#"
#define K extern "C" __global__ void
// cp.async with a source size (the rest zero-filled) and with ignore-src.
K partial(const unsigned* in, unsigned* out) {
  __shared__ alignas(16) unsigned s[4 * 32];
  unsigned d = (unsigned)__cvta_generic_to_shared(&s[4 * threadIdx.x]);
  for (int k = 0; k < 4; k++) s[4 * threadIdx.x + k] = 0xdeadbeef;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(d), "l"(in + 4 * threadIdx.x), "r"(threadIdx.x % 17));
  asm volatile("{ .reg .pred p; setp.eq.u32 p, %2, 1; cp.async.ca.shared.global [%0+8], [%1], 8, p; }"
               :: "r"(d), "l"(in), "r"(threadIdx.x & 1));
  asm volatile("cp.async.commit_group;");
  asm volatile("cp.async.wait_group 0;");
  asm volatile("cp.async.wait_all;");
  for (int k = 0; k < 4; k++) out[4 * threadIdx.x + k] = s[4 * threadIdx.x + k];
}
// mbarrier phases: an init of 3, arrivals with counts, arrive_drop, expect/complete tx,
// test_wait on states and parities, pending_count of states.
K phases(unsigned* out) {
  __shared__ alignas(8) unsigned long long bar;
  unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
  if (threadIdx.x != 0) return;
  unsigned r[16];
  unsigned long long s0, s1, s2, s3;
  asm volatile("mbarrier.init.shared.b64 [%0], 3;" :: "r"(b));
  asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(s0) : "r"(b));
  asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1], 1;" : "=l"(s1) : "r"(b));
  asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(r[0]) : "l"(s0));
  asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(r[1]) : "l"(s1));
  asm volatile("{ .reg .pred p; mbarrier.test_wait.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }" : "=r"(r[2]) : "r"(b), "l"(s1));
  asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }" : "=r"(r[3]) : "r"(b));
  // The tx-count holds the phase open past its last arrival.
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], 32;" :: "r"(b));
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 %0, [%1];" : "=l"(s2) : "r"(b));
  asm volatile("{ .reg .pred p; mbarrier.test_wait.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }" : "=r"(r[4]) : "r"(b), "l"(s2));
  asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], 16;" :: "r"(b));
  asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }" : "=r"(r[5]) : "r"(b));
  asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], 16;" :: "r"(b));
  asm volatile("{ .reg .pred p; mbarrier.test_wait.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }" : "=r"(r[6]) : "r"(b), "l"(s2));
  asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], 0, 1000; selp.u32 %0, 1, 0, p; }" : "=r"(r[7]) : "r"(b));
  asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared.b64 p, [%1], 1; selp.u32 %0, 1, 0, p; }" : "=r"(r[8]) : "r"(b));
  // Phase 1: arrive_drop lowers the count for the phases after this one.
  asm volatile("mbarrier.arrive_drop.shared.b64 %0, [%1], 2;" : "=l"(s3) : "r"(b));
  asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(r[9]) : "l"(s3));
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 48;" :: "r"(b));
  asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared.b64 p, [%1], 1; selp.u32 %0, 1, 0, p; }" : "=r"(r[10]) : "r"(b));
  asm volatile("mbarrier.complete_tx.shared::cta.b64 [%0], 48;" :: "r"(b));
  asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared.b64 p, [%1], 1; selp.u32 %0, 1, 0, p; }" : "=r"(r[11]) : "r"(b));
  // Phase 2 expects one arrival.
  asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(s0) : "r"(b));
  asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(r[12]) : "l"(s0));
  asm volatile("{ .reg .pred p; mbarrier.try_wait.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }" : "=r"(r[13]) : "r"(b), "l"(s0));
  asm volatile("mbarrier.inval.shared.b64 [%0];" :: "r"(b));
  r[14] = 0; r[15] = 0;
  for (int k = 0; k < 16; k++) out[k] = r[k];
}
// A wait that nothing can complete: two arrivals expected, one made.
K stuck(unsigned* out) {
  __shared__ alignas(8) unsigned long long bar;
  unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
  if (threadIdx.x == 0) asm volatile("mbarrier.init.shared.b64 [%0], 64;" :: "r"(b));
  __syncthreads();
  unsigned long long s;
  if (threadIdx.x % 2 == 0) asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(s) : "r"(b));
  asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.shared.b64 p, [%0], 0; @!p bra W; }" :: "r"(b));
  out[threadIdx.x] = 1;
}
K copy_from(const unsigned* p, unsigned* out) {
  __shared__ alignas(16) unsigned s[256];
  unsigned d = (unsigned)__cvta_generic_to_shared(&s[4 * threadIdx.x]);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(d), "l"(p + 4 * threadIdx.x));
  asm volatile("cp.async.wait_all;");
  out[threadIdx.x] = s[4 * threadIdx.x];
}
K copy_misaligned(const unsigned* p, unsigned* out) {
  __shared__ alignas(16) unsigned s[256];
  unsigned d = (unsigned)__cvta_generic_to_shared(&s[4 * threadIdx.x]);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" :: "r"(d), "l"(p + 1));
  asm volatile("cp.async.wait_all;");
  out[threadIdx.x] = s[4 * threadIdx.x];
}
K bulk_size(const unsigned* p, unsigned* out, unsigned n) {
  __shared__ alignas(16) unsigned s[256];
  __shared__ alignas(8) unsigned long long bar;
  unsigned d = (unsigned)__cvta_generic_to_shared(&s[0]);
  unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
  asm volatile("mbarrier.init.shared.b64 [%0], 1;" :: "r"(b));
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               :: "r"(d), "l"(p), "r"(n), "r"(b));
  out[0] = s[0];
}
// A bulk copy from the block's shared memory to shared::cluster (its own block's):
// the H200 raises an illegal instruction in a launch without clusters.
K bulk_shared_to_cluster(unsigned* out) {
  __shared__ alignas(16) unsigned a[64], c[64];
  __shared__ alignas(8) unsigned long long bar;
  unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
  asm volatile("mbarrier.init.shared.b64 [%0], 1;" :: "r"(b));
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 256;" :: "r"(b));
  asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], 256, [%2];"
               :: "r"((unsigned)__cvta_generic_to_shared(c)), "r"((unsigned)__cvta_generic_to_shared(a)), "r"(b));
  out[0] = c[0];
}
K bulk_store(unsigned* p) {
  __shared__ alignas(16) unsigned s[256];
  unsigned d = (unsigned)__cvta_generic_to_shared(&s[0]);
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 1024;" :: "l"(p), "r"(d));
    asm volatile("cp.async.bulk.commit_group;");
    asm volatile("cp.async.bulk.wait_group 0;");
  }
}
K mbarrier_in_global(unsigned long long* g) {
  asm volatile("mbarrier.init.b64 [%0], 1;" :: "l"(g));
}
"#;

fn forms() -> Module {
    Module::parse(&ptx(FORMS)).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn source_sizes_zero_fill_and_ignore_src_copies_zeros() {
    let m = forms();
    for engine in ENGINES {
        let input: Vec<u32> = (0..128).map(|i| 0x1000 + i).collect();
        let mut mem = TestMemory::new();
        let din = mem.map(&u32s(&input), false);
        let dout = mem.map(&vec![0u8; 128 * 4], true);
        go(&m, "partial", 1, 32, &mem, &[din, dout], engine);
        let out = to_u32s(&mem.read(dout));
        for t in 0..32usize {
            let n = (t % 17).min(16);
            let mut want = [0u32; 4];
            for (k, w) in want.iter_mut().enumerate() {
                // Bytes below the source size are the source's; the rest zeros.
                let word = input[4 * t + k].to_le_bytes();
                let mut b = [0u8; 4];
                for (j, x) in b.iter_mut().enumerate() {
                    if 4 * k + j < n {
                        *x = word[j];
                    }
                }
                *w = u32::from_le_bytes(b);
            }
            // The second copy's 8 bytes: zeros for odd threads, in[0..2] for even.
            if t % 2 == 1 {
                want[2] = 0;
                want[3] = 0;
            } else {
                want[2] = input[0];
                want[3] = input[1];
            }
            assert_eq!(&out[4 * t..4 * t + 4], &want, "{engine:?} thread {t}");
        }
    }
}

#[test]
fn mbarrier_phases_complete_on_arrivals_and_transaction_bytes() {
    let m = forms();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let dout = mem.map(&[0u8; 64], true);
        go(&m, "phases", 1, 32, &mem, &[dout], engine);
        let out = to_u32s(&mem.read(dout));
        let want = [
            3, 2, // pending counts of the states before the first two arrivals
            0, 0, // phase 0 incomplete: one arrival left
            0, // the last arrival made, 32 bytes expected: still open
            0, // 16 of them completed: open
            1, 1, 0, // the other 16: phase 0 complete, phase 1 not
            3, // arrive_drop's state: 3 pending in phase 1
            0, 1, // phase 1 open until its 48 bytes complete
            1, 1, // phase 2 expects 1 arrival: its state says 1 pending; then complete
            0, 0,
        ];
        assert_eq!(out, want, "{engine:?}");
    }
}

fn fault(
    m: &Module,
    kernel: &str,
    mem: &TestMemory,
    vals: &[u64],
    block: u32,
    engine: Engine,
) -> KernelFault {
    let k = m.kernel(kernel).unwrap();
    let p = params(&m.kernels[k], vals);
    let mut l = launch(1, block, &p);
    l.engine = engine;
    run(m, k, &l, mem).expect_err("the kernel should fault")
}

#[test]
fn a_copy_from_unmapped_memory_faults_naming_the_instruction_and_address() {
    let m = forms();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let src = mem.map(&[0u8; 64], false);
        let dout = mem.map(&[0u8; 256], true);
        // Threads 0-3 read inside the 64 bytes; thread 4's 16 bytes are past them.
        let f = fault(&m, "copy_from", &mem, &[src, dout], 32, engine);
        assert_eq!(f.kind, FaultKind::IllegalAddress, "{f}");
        assert_eq!(f.thread, [4, 0, 0], "{f}");
        assert_eq!(f.address, Some(src + 64), "{f}");
        assert!(
            f.instruction.starts_with("cp.async.cg.shared.global"),
            "{f}"
        );
        assert!(f.to_string().contains(&format!("{:#x}", src + 64)), "{f}");
        let f = fault(
            &m,
            "copy_from",
            &TestMemory::new(),
            &[0x7000_0000, dout],
            32,
            engine,
        );
        assert_eq!(
            (f.kind, f.address),
            (FaultKind::IllegalAddress, Some(0x7000_0000)),
            "{f}"
        );
        assert!(f.to_string().contains("no mapping at 0x70000000"), "{f}");
    }
}

#[test]
fn a_bulk_copy_between_shared_memories_without_a_cluster_is_an_illegal_instruction() {
    let m = forms();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let dout = mem.map(&[0u8; 64], true);
        let f = fault(&m, "bulk_shared_to_cluster", &mem, &[dout], 1, engine);
        assert_eq!(f.kind, FaultKind::IllegalInstruction, "{f}");
        assert!(
            f.instruction
                .starts_with("cp.async.bulk.shared::cluster.shared::cta"),
            "{f}"
        );
        assert!(f.detail.contains("without clusters"), "{f}");
        assert_eq!(to_u32s(&mem.read(dout)), [0; 16], "nothing ran past it");
    }
}

#[test]
fn copies_enforce_the_sizes_and_alignments_ptx_requires() {
    let m = forms();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let src = mem.map(&[0u8; 4096], false);
        let dout = mem.map(&[0u8; 4096], true);
        let f = fault(&m, "copy_misaligned", &mem, &[src, dout], 32, engine);
        assert_eq!(
            (f.kind, f.address),
            (FaultKind::MisalignedAddress, Some(src + 4)),
            "{f}"
        );
        assert!(
            f.instruction.starts_with("cp.async.ca.shared.global"),
            "{f}"
        );
        let f = fault(&m, "bulk_size", &mem, &[src, dout, 40], 1, engine);
        assert_eq!(f.kind, FaultKind::IllegalInstruction, "{f}");
        assert!(f.detail.contains("not a multiple of 16"), "{f}");
        // Bulk copies are checked like loads and stores: past the destination's end...
        let small = mem.map(&[0u8; 512], true);
        let f = fault(&m, "bulk_store", &mem, &[small], 256, engine);
        assert_eq!(
            (f.kind, f.address),
            (FaultKind::IllegalAddress, Some(small + 512)),
            "{f}"
        );
        assert!(
            f.instruction
                .starts_with("cp.async.bulk.global.shared::cta"),
            "{f}"
        );
        // ...and into read-only memory.
        let ro = mem.map(&[0u8; 1024], false);
        let f = fault(&m, "bulk_store", &mem, &[ro], 256, engine);
        assert_eq!(
            (f.kind, f.address),
            (FaultKind::IllegalAddress, Some(ro)),
            "{f}"
        );
        let f = fault(&m, "mbarrier_in_global", &mem, &[dout], 32, engine);
        assert_eq!(f.kind, FaultKind::IllegalAddress, "{f}");
        assert!(f.detail.contains("shared memory"), "{f}");
    }
}

#[test]
fn a_phase_nothing_can_complete_is_a_deadlock_not_a_hang() {
    let m = forms();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let dout = mem.map(&[0u8; 512], true);
        let f = fault(&m, "stuck", &mem, &[dout], 96, engine);
        assert_eq!(f.kind, FaultKind::Deadlock, "{f}");
        assert!(f.instruction.contains("mbarrier.try_wait.parity"), "{f}");
        assert!(f.detail.contains("16 more arrivals"), "{f}");
    }
}

/// A kernel of the instruction corpus (ptx/corpus/async_copies.cu) run as the corpus runs
/// it (its manifest line, the runner's input): the input and the output words.
fn corpus_kernel(kernel: &str, engine: Engine) -> (Vec<u32>, Vec<u32>) {
    let root = repo_root().join("ptx/corpus");
    let manifest = std::fs::read_to_string(root.join("manifest.txt")).unwrap();
    let f: Vec<&str> = manifest
        .lines()
        .find(|l| l.split_whitespace().next() == Some(kernel))
        .unwrap_or_else(|| panic!("{kernel} is not in the corpus manifest"))
        .split_whitespace()
        .collect();
    let num = |s: &str| s.parse::<u32>().unwrap();
    let (grid, block, nin, nout) = (num(f[2]), num(f[3]), num(f[5]) as usize, num(f[6]) as usize);
    let src = std::fs::read_to_string(root.join(f[1])).unwrap();
    let m = Module::parse(&ptx(&src)).unwrap_or_else(|e| panic!("{e}"));
    let input = corpus_input(kernel, nin);
    let mut mem = TestMemory::new();
    let din = mem.map(&u32s(&input), true);
    let dout = mem.map(&vec![0u8; nout * 4], true);
    go(
        &m,
        kernel,
        grid,
        block,
        &mem,
        &[din, dout, nin as u64],
        engine,
    );
    (input, to_u32s(&mem.read(dout)))
}

// The corpus's async kernels are recorded on the H200 and compared word by word in
// tests/corpus.rs; here what the PTX ISA determines of their outputs is checked against a
// model of it, which says why each word is what it is.

#[test]
fn corpus_cp_async_sizes_matches_the_ptx_model() {
    for engine in ENGINES {
        let (input, out) = corpus_kernel("cp_async_sizes", engine);
        let n = input.len();
        for g in 0..256usize {
            let t = g % 128;
            let mut slot: Vec<u32> = (0..12).map(|k| 0xa5a5_0000 | (t as u32) << 4 | k).collect();
            let src = 4 * (g % (n / 4));
            let r = input[(g * 7) % n];
            // (slot word, source word, copy size, bytes from the source)
            let copies = [
                (0, src, 16, (r % 17) as usize),
                (4, src + 2, 8, ((r >> 8) % 9) as usize),
                (6, src + 1, 4, ((r >> 16) % 5) as usize),
                (8, src, 16, if r & 0x1000 != 0 { 0 } else { 16 }),
                (7, src + 3, 4, 4),
            ];
            for (at, from, size, bytes) in copies {
                let mut b = vec![0u8; size];
                for (k, x) in b.iter_mut().enumerate().take(bytes) {
                    *x = input[from + k / 4].to_le_bytes()[k % 4];
                }
                for k in 0..size / 4 {
                    slot[at + k] = u32::from_le_bytes(b[4 * k..4 * k + 4].try_into().unwrap());
                }
            }
            assert_eq!(
                &out[12 * g..12 * g + 12],
                &slot[..],
                "{engine:?} thread {g}"
            );
        }
    }
}

#[test]
fn corpus_mbarrier_phases_matches_the_ptx_model() {
    for engine in ENGINES {
        let (input, out) = corpus_kernel("mbarrier_phases", engine);
        for b in 0..2usize {
            let count = 3 + input[b] % 5;
            let tx = 16 * (1 + input[b + 1] % 8);
            // Words 0, 1 and 9 are pending counts of `.noComplete` arrivals' states: the
            // count before the arrival, as the PTX ISA defines it.
            let want = [
                count,
                count - 1,
                0,
                0,
                0,
                0,
                1,
                1,
                0,
                count,
                0,
                1,
                1,
                1,
                1,
                count | tx << 8,
            ];
            assert_eq!(&out[16 * b..16 * b + 16], &want, "{engine:?} block {b}");
        }
    }
}

#[test]
fn corpus_mbarrier_block_matches_the_ptx_model() {
    for engine in ENGINES {
        let (input, out) = corpus_kernel("mbarrier_block", engine);
        let (n, nt) = (input.len(), 128usize);
        let src = |g: usize, round: usize| ((g * 4 + round * 64) % (n - 4)) & !3;
        for g in 0..256usize {
            let (b, t) = (g / nt, g % nt);
            let mut acc = 0u32;
            for round in 0..3 {
                let neighbour = b * nt + (t + 37) % nt;
                let v = input[src(neighbour, round) + round];
                acc = acc.wrapping_mul(31).wrapping_add(v);
                if (t / 32) % 2 == 1 {
                    acc = acc.wrapping_add(4);
                }
                assert_eq!(out[4 * g + round], v, "{engine:?} thread {g} round {round}");
            }
            assert_eq!(out[4 * g + 3], acc, "{engine:?} thread {g}");
        }
    }
}

#[test]
fn corpus_bulk_copies_matches_the_ptx_model() {
    for engine in ENGINES {
        let (input, out) = corpus_kernel("bulk_copies", engine);
        for b in 0..2usize {
            let a = &input[b * 512..b * 512 + 512];
            // The second phase copies the next block's words into c.
            let next = &input[(b + 1) % 2 * 512..][..512];
            let c: Vec<u32> = (0..512)
                .map(|k| next[k].wrapping_mul(3).wrapping_add(a[511 - k]))
                .collect();
            let o = &out[b * 1024..b * 1024 + 1024];
            assert_eq!(&o[..512], &c[..], "{engine:?} block {b}: c");
            assert_eq!(
                &o[512..768],
                &a[256..],
                "{engine:?} block {b}: a's second half"
            );
            let x: Vec<u32> = (0..256).map(|k| a[k] ^ c[k]).collect();
            assert_eq!(&o[768..], &x[..], "{engine:?} block {b}: a ^ c");
        }
    }
}

#[test]
fn a_bulk_copy_larger_than_shared_memory_faults_before_it_moves_anything() {
    let m = forms();
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let src = mem.map(&[0u8; 4096], false);
        let dout = mem.map(&[0u8; 64], true);
        // 4 GiB - 16 bytes into a block of about 1 KiB of shared memory.
        let f = fault(&m, "bulk_size", &mem, &[src, dout, 0xffff_fff0], 1, engine);
        assert_eq!(f.kind, FaultKind::IllegalAddress, "{f}");
        assert!(f.detail.contains("shared memory"), "{f}");
    }
}

// The wrappers of cuda::ptx and the pipeline primitives of cuda_pipeline.h, as nvcc 13.0
// writes them (orderings, scopes, `.shared::cluster` arrivals with `_`, `.shared::cta`
// bulk destinations, suspend-time hints).
const WRAPPERS: &str = r#"
#include <cuda/ptx>
#include <cuda_pipeline.h>
namespace ptx = cuda::ptx;
extern "C" __global__ void wrappers(const int* in, int* out) {
  __shared__ alignas(16) int s[32];
  __shared__ uint64_t bar;
  if (threadIdx.x != 0) return;
  ptx::mbarrier_init(&bar, 3);
  ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  uint64_t st = ptx::mbarrier_arrive(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar);
  ptx::mbarrier_arrive(ptx::sem_release, ptx::scope_cluster, ptx::space_cluster, &bar, 1);
  uint64_t st2 = ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cluster, ptx::space_shared, &bar, 128);
  out[0] = ptx::mbarrier_try_wait(&bar, st);
  ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, s, in, 128, &bar);
  out[1] = ptx::mbarrier_try_wait(ptx::sem_acquire, ptx::scope_cluster, &bar, st2);
  out[2] = ptx::mbarrier_test_wait_parity(ptx::sem_acquire, ptx::scope_cta, &bar, 0);
  out[3] = ptx::mbarrier_try_wait_parity(ptx::sem_acquire, ptx::scope_cta, &bar, 1, 100u);
  ptx::fence_proxy_async(ptx::space_shared);
  ptx::cp_async_bulk(ptx::space_global, ptx::space_shared, out + 32, s, 128);
  ptx::cp_async_bulk_commit_group();
  ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>());
  __pipeline_memcpy_async(&s[0], &in[32], 16);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  out[4] = s[0];
}
"#;

#[test]
fn cuda_ptx_wrappers_and_pipeline_primitives_run() {
    let m = Module::parse(&ptx(WRAPPERS)).unwrap_or_else(|e| panic!("{e}"));
    for engine in ENGINES {
        let input: Vec<u32> = (0..64).map(|i| 7 * i + 1).collect();
        let mut mem = TestMemory::new();
        let din = mem.map(&u32s(&input), false);
        let dout = mem.map(&[0u8; 256], true);
        go(&m, "wrappers", 1, 32, &mem, &[din, dout], engine);
        let out = to_u32s(&mem.read(dout));
        // Three arrivals and 128 transaction bytes: open until the bulk copy lands.
        assert_eq!(&out[..5], &[0, 1, 1, 0, input[32]], "{engine:?}");
        assert_eq!(&out[32..64], &input[..32], "{engine:?}");
    }
}

// Bulk reductions: every block adds (u32), takes the max (s32), adds (f32) and xors
// (b64) its shared rows into the same global rows; and reduces into its own shared
// memory through an mbarrier.
const REDUCE: &str = r#"
extern "C" __global__ void reduce(unsigned* sums, int* maxes, float* fsums, unsigned long long* xors, unsigned* local) {
  __shared__ alignas(16) unsigned u[64];
  __shared__ alignas(16) int s[64];
  __shared__ alignas(16) float f[64];
  __shared__ alignas(16) unsigned long long x[64];
  __shared__ alignas(16) unsigned acc[64];
  __shared__ alignas(8) unsigned long long bar;
  unsigned t = threadIdx.x, b = blockIdx.x;
  u[t] = b * 100 + t;
  s[t] = (int)((b * 37 + t * 11) % 101) - 50;
  f[t] = 0.5f * (b + 1);
  x[t] = 0x0101010101010101ull << (b % 8) ^ t;
  acc[t] = 1000 * t;
  unsigned ba = (unsigned)__cvta_generic_to_shared(&bar);
  if (t == 0) asm volatile("mbarrier.init.shared.b64 [%0], 1;" :: "r"(ba));
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (t == 0) {
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%0], [%1], 256;" :: "l"(sums), "r"((unsigned)__cvta_generic_to_shared(u)) : "memory");
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.max.s32 [%0], [%1], 256;" :: "l"(maxes), "r"((unsigned)__cvta_generic_to_shared(s)) : "memory");
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], 256;" :: "l"(fsums), "r"((unsigned)__cvta_generic_to_shared(f)) : "memory");
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.xor.b64 [%0], [%1], 512;" :: "l"(xors), "r"((unsigned)__cvta_generic_to_shared(x)) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], 256;" :: "r"(ba) : "memory");
    asm volatile("cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.add.u32 [%0], [%1], 256, [%2];"
                 :: "r"((unsigned)__cvta_generic_to_shared(acc)), "r"((unsigned)__cvta_generic_to_shared(u)), "r"(ba) : "memory");
  }
  asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.shared.b64 p, [%0], 0; @!p bra W; }" :: "r"(ba) : "memory");
  local[b * 64 + t] = acc[t];
}
"#;

#[test]
fn bulk_reductions_combine_every_block_into_global_and_shared_memory() {
    let m = Module::parse(&ptx(REDUCE)).unwrap_or_else(|e| panic!("{e}"));
    let blocks = 6u64;
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let sums = mem.map(&u32s(&[7; 64]), true);
        let maxes = mem.map(&u32s(&[(-1000i32) as u32; 64]), true);
        let fsums = mem.map(&f32s(&[1.0; 64]), true);
        let xors = mem.map(&[0u8; 512], true);
        let local = mem.map(&vec![0u8; blocks as usize * 256], true);
        let k = m.kernel("reduce").unwrap();
        let p = params(&m.kernels[k], &[sums, maxes, fsums, xors, local]);
        let mut l = launch(blocks as u32, 64, &p);
        l.engine = engine;
        run(&m, k, &l, &mem).unwrap_or_else(|f| panic!("{f}"));
        let (got_sums, got_max) = (to_u32s(&mem.read(sums)), to_u32s(&mem.read(maxes)));
        let got_f = to_f32s(&mem.read(fsums));
        let got_x: Vec<u64> = mem
            .read(xors)
            .chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let got_local = to_u32s(&mem.read(local));
        for t in 0..64u64 {
            let bs = 0..blocks;
            let sum = 7 + bs.clone().map(|b| b * 100 + t).sum::<u64>();
            assert_eq!(
                u64::from(got_sums[t as usize]),
                sum,
                "{engine:?} add.u32 [{t}]"
            );
            let max = bs
                .clone()
                .map(|b| ((b * 37 + t * 11) % 101) as i32 - 50)
                .max()
                .unwrap();
            assert_eq!(got_max[t as usize] as i32, max, "{engine:?} max.s32 [{t}]");
            let f = 1.0 + bs.clone().map(|b| 0.5 * (b + 1) as f32).sum::<f32>();
            assert_eq!(got_f[t as usize], f, "{engine:?} add.f32 [{t}]");
            let x = bs
                .clone()
                .fold(0u64, |a, b| a ^ (0x0101010101010101u64 << (b % 8) ^ t));
            assert_eq!(got_x[t as usize], x, "{engine:?} xor.b64 [{t}]");
            for b in bs {
                let want = 1000 * t + b * 100 + t;
                assert_eq!(
                    u64::from(got_local[(b * 64 + t) as usize]),
                    want,
                    "{engine:?} shared"
                );
            }
        }
    }
}

#[test]
fn corpus_bulk_reductions_matches_the_ptx_model() {
    for engine in ENGINES {
        let (input, out) = corpus_kernel("bulk_reductions", engine);
        let (a, b) = (&input[..64], &input[64..128]);
        let x: Vec<u64> = (0..64)
            .map(|t| u64::from(input[2 * t]) | u64::from(input[2 * t + 1]) << 32)
            .collect();
        let y: Vec<u64> = (0..64)
            .map(|t| u64::from(b[t]) | u64::from(a[t]) << 32)
            .collect();
        let word = |i: usize| out[i];
        let dword = |i: usize| u64::from(out[192 + 2 * i]) | u64::from(out[193 + 2 * i]) << 32;
        for t in 0..64 {
            assert_eq!(word(t), a[t].wrapping_add(b[t]), "{engine:?} add [{t}]");
            assert_eq!(
                word(64 + t) as i32,
                (a[t] as i32).min(b[t] as i32),
                "{engine:?} max then min [{t}]"
            );
            let inc = u32::from(a[t] != 0);
            let dec = if inc == 0 || inc > b[t] {
                b[t]
            } else {
                inc - 1
            };
            assert_eq!(word(128 + t), dec, "{engine:?} inc then dec [{t}]");
            let mut v = x[t] & y[t];
            if t < 32 {
                v |= x[t];
            }
            assert_eq!(dword(t), v, "{engine:?} xor, and, or [{t}]");
            assert_eq!(word(384 + t), a[t] & b[t], "{engine:?} or then and [{t}]");
            // f32 adds whose operands and sum are ordinary numbers (no NaN, infinity or
            // subnormal: the ISA leaves their handling open; the H200's is in the corpus
            // recording, which tests/corpus.rs compares).
            let (fa, fb) = (f32::from_bits(a[t]), f32::from_bits(b[t]));
            let sum = fa + fb;
            if [fa, fb, sum].iter().all(|v| v.is_normal()) {
                assert_eq!(
                    f32::from_bits(word(320 + t)),
                    sum,
                    "{engine:?} add.f32 [{t}]"
                );
            }
        }
    }
}

/// Thread 0 invalidates an mbarrier as soon as its own wait on the phase succeeds, while
/// another warp that waited on the same phase has not polled since it completed (NVIDIA's
/// globalToShmemTMACopy does so). Waiting on an invalidated mbarrier is undefined in PTX;
/// on the GPU the other warp was released when the phase completed, and so it is here.
const INVAL_AFTER_WAIT: &str = r#"
__device__ unsigned arrive(unsigned bar, unsigned long long *token) {
  asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(*token) : "r"(bar) : "memory");
  return 0;
}
__device__ unsigned try_wait(unsigned bar, unsigned long long token) {
  unsigned done;
  asm volatile("{.reg .pred p; mbarrier.try_wait.shared.b64 p, [%1], %2; selp.b32 %0, 1, 0, p;}"
               : "=r"(done) : "r"(bar), "l"(token) : "memory");
  return done;
}
extern "C" __global__ void inval_after_wait(unsigned *out) {
  __shared__ unsigned long long a, b;
  unsigned pa = (unsigned)__cvta_generic_to_shared(&a);
  unsigned pb = (unsigned)__cvta_generic_to_shared(&b);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(pa), "r"(64));
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(pb), "r"(32));
  }
  __syncthreads();
  unsigned long long t, tb;
  unsigned done;
  if (threadIdx.x >= 32) {
    // Warp 1 arrives on `a`, then tells warp 0 so on `b`, then waits on `a`.
    arrive(pa, &t);
    arrive(pb, &tb);
    while (!try_wait(pa, t)) {
    }
  } else {
    // Warp 0 waits for warp 1's arrivals, completes `a`, waits, and invalidates it.
    do {
      asm volatile("{.reg .pred p; mbarrier.try_wait.parity.shared.b64 p, [%1], 0; selp.b32 %0, 1, 0, p;}"
                   : "=r"(done) : "r"(pb) : "memory");
    } while (!done);
    arrive(pa, &t);
    while (!try_wait(pa, t)) {
    }
    __syncwarp();
    if (threadIdx.x == 0) asm volatile("mbarrier.inval.shared.b64 [%0];" :: "r"(pa) : "memory");
  }
  out[threadIdx.x] = 1;
}
"#;

#[test]
fn a_wait_on_a_phase_completed_before_its_mbarrier_was_invalidated_is_released() {
    let m = Module::parse(&ptx(INVAL_AFTER_WAIT)).unwrap_or_else(|e| panic!("{e}"));
    for engine in ENGINES {
        let mut mem = TestMemory::new();
        let dout = mem.map(&[0u8; 256], true);
        go(&m, "inval_after_wait", 1, 64, &mem, &[dout], engine);
        assert_eq!(to_u32s(&mem.read(dout)), vec![1; 64], "{engine:?}");
    }
}
