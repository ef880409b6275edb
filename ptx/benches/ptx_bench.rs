//! VecAdd over 2^24 floats and a block reduction over 2^24 ints, compiled by nvcc and
//! run in the executor on every host core, against a plain host loop doing the same work
//! in the same run. `cargo bench -p cumock-ptx` (env PTX_BENCH_LOG2N to change the size).

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;

use common::*;
use cumock_ptx::{run, Module};

const VECADD: &str = r#"
extern "C" __global__ void vecAdd(const float* __restrict__ a, const float* __restrict__ b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
"#;

const REDUCE: &str = r#"
extern "C" __global__ void reduce(const int* in, unsigned long long* out, int n) {
  __shared__ int s[256];
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x * 2 + t;
  int v = 0;
  if (i < n) v = in[i];
  if (i + blockDim.x < n) v += in[i + blockDim.x];
  s[t] = v;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 32; k >>= 1) { if (t < k) s[t] += s[t + k]; __syncthreads(); }
  if (t < 32) { v = s[t] + s[t + 32]; for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o); }
  if (t == 0) atomicAdd(out, (unsigned long long)v);
}
"#;

/// CPU time of the whole process (all threads), seconds.
fn cpu_time() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // Safety: clock_gettime writes the timespec we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Best wall time and best CPU time over `reps` runs: on a shared machine the wall time
/// measures the neighbours too, the CPU time only us.
fn best_of<T>(reps: usize, mut f: impl FnMut() -> T) -> (Times, T) {
    let mut best = Times {
        wall: f64::MAX,
        cpu: f64::MAX,
    };
    let mut last = None;
    for _ in 0..reps {
        let (t, c) = (Instant::now(), cpu_time());
        let r = f();
        best.wall = best.wall.min(t.elapsed().as_secs_f64());
        best.cpu = best.cpu.min(cpu_time() - c);
        last = Some(r);
    }
    (best, last.unwrap())
}

#[derive(Clone, Copy)]
struct Times {
    wall: f64,
    cpu: f64,
}

fn report(name: &str, n: usize, threads: usize, exec: Times, instructions: u64, host: Times) {
    let per_core = instructions as f64 / exec.cpu;
    println!(
        "{name}: n={n}: executor on {threads} threads {:.1} ms wall, {:.1} ms CPU ({instructions} PTX thread-instructions, {:.0} M/s per core); \
         host loop (1 thread) {:.2} ms wall, {:.2} ms CPU; ratio executor/host: {:.1}x wall, {:.1}x CPU, {:.1}x CPU spread over {threads} cores",
        exec.wall * 1e3,
        exec.cpu * 1e3,
        per_core / 1e6,
        host.wall * 1e3,
        host.cpu * 1e3,
        exec.wall / host.wall,
        exec.cpu / host.cpu,
        exec.cpu / threads as f64 / host.cpu,
    );
}

fn main() {
    let log2n: u32 = std::env::var("PTX_BENCH_LOG2N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(24);
    let n = 1usize << log2n;
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);

    let m = Module::parse(&ptx(VECADD)).unwrap();
    let k = m.kernel("vecAdd").unwrap();
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.25).collect();
    let mut mem = TestMemory::new();
    let (da, db, dc) = (
        mem.map(&f32s(&a), false),
        mem.map(&f32s(&b), false),
        mem.map(&vec![0u8; n * 4], true),
    );
    let p = params(&m.kernels[k], &[da, db, dc, n as u64]);
    let mut l = launch((n / 256) as u32, 256, &p);
    l.host_threads = threads;
    l.step_limit = None;
    let (exec_s, stats) = best_of(3, || run(&m, k, &l, &mem).unwrap());
    let mut c = vec![0f32; n];
    let (host_s, _) = best_of(3, || {
        for ((c, a), b) in c.iter_mut().zip(&a).zip(&b) {
            *c = *a + *b;
        }
        std::hint::black_box(&mut c);
    });
    let got = to_f32s(&mem.read(dc));
    assert!(got == c, "executor and host loop disagree");
    report("vecAdd", n, threads, exec_s, stats.instructions, host_s);

    let m = Module::parse(&ptx(REDUCE)).unwrap();
    let k = m.kernel("reduce").unwrap();
    let input: Vec<u32> = (0..n)
        .map(|i| (i as u32).wrapping_mul(2654435761) % 1000)
        .collect();
    let mut mem = TestMemory::new();
    let din = mem.map(&u32s(&input), false);
    let douts: Vec<u64> = (0..3).map(|_| mem.map(&[0u8; 8], true)).collect();
    let mut rep = 0;
    let (exec_s, stats) = best_of(3, || {
        let p = params(&m.kernels[k], &[din, douts[rep], n as u64]);
        rep += 1;
        let mut l = launch((n / 512) as u32, 256, &p);
        l.host_threads = threads;
        l.step_limit = None;
        run(&m, k, &l, &mem).unwrap()
    });
    let (host_s, want) = best_of(3, || {
        let v: &[u32] = std::hint::black_box(&input);
        std::hint::black_box(v.iter().map(|&x| x as i32 as i64).sum::<i64>())
    });
    let got = u64::from_le_bytes(mem.read(douts[2]).try_into().unwrap());
    assert_eq!(got as i64, want, "reduction result");
    report("reduce", n, threads, exec_s, stats.instructions, host_s);
}
