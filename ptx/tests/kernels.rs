//! Kernels compiled by nvcc 13.0 from CUDA source, run in the executor.

mod common;
use common::*;
use cumock_ptx::{run, FaultKind, Module};

const VECADD: &str = r#"
extern "C" __global__ void vecAdd(const float* __restrict__ a, const float* __restrict__ b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
"#;

#[test]
fn vecadd_adds() {
    let m = Module::parse(&ptx(VECADD)).unwrap();
    let k = m.kernel("vecAdd").unwrap();
    let n = 1000usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| 1.0 / (i as f32 + 1.0)).collect();
    let mut mem = TestMemory::new();
    let (da, db) = (mem.map(&f32s(&a), false), mem.map(&f32s(&b), false));
    let dc = mem.map(&vec![0u8; n * 4], true);
    let p = params(&m.kernels[k], &[da, db, dc, n as u64]);
    let stats = run(&m, k, &launch(n.div_ceil(128) as u32, 128, &p), &mem).unwrap();
    let c = to_f32s(&mem.read(dc));
    for i in 0..n {
        assert_eq!(c[i], a[i] + b[i], "element {i}");
    }
    assert!(stats.instructions > n as u64 * 10, "{stats:?}");
}

#[test]
fn vecadd_into_read_only_memory_faults() {
    let m = Module::parse(&ptx(VECADD)).unwrap();
    let k = m.kernel("vecAdd").unwrap();
    let mut mem = TestMemory::new();
    let da = mem.map(&[0u8; 256], false);
    let p = params(&m.kernels[k], &[da, da, da, 64]);
    let f = run(&m, k, &launch(1, 64, &p), &mem).unwrap_err();
    assert_eq!(f.kind, FaultKind::IllegalAddress, "{f}");
    assert!(f.instruction.starts_with("st.global.f32"), "{f}");
    assert_eq!(f.address, Some(da));
    assert!(f.to_string().contains("read-only"), "{f}");
}

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

#[test]
fn block_reduction_with_shared_memory_barriers_shuffles_and_atomics() {
    let m = Module::parse(&ptx(REDUCE)).unwrap();
    let k = m.kernel("reduce").unwrap();
    assert_eq!(m.kernels[k].static_shared_bytes, 1024);
    let n = 100_003usize;
    let input: Vec<u32> = (0..n)
        .map(|i| (i as u32).wrapping_mul(2654435761) % 1000)
        .collect();
    let mut mem = TestMemory::new();
    let din = mem.map(&u32s(&input), false);
    let dout = mem.map(&[0u8; 8], true);
    let p = params(&m.kernels[k], &[din, dout, n as u64]);
    run(&m, k, &launch(n.div_ceil(512) as u32, 256, &p), &mem).unwrap();
    let got = u64::from_le_bytes(mem.read(dout).try_into().unwrap());
    let want: u64 = input.iter().map(|&x| x as u64).sum();
    assert_eq!(got, want);
}
