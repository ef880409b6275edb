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

#[test]
fn modules_can_be_shared_between_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<Module>();
    shareable::<cumock_ptx::KernelFault>();
}

#[test]
fn dynamic_shared_memory_follows_unaligned_static_shared_memory() {
    let src = r#"
extern "C" __global__ void k(unsigned* out) {
  __shared__ unsigned char small[5];
  extern __shared__ unsigned dyn[];
  small[threadIdx.x % 5] = 1;
  dyn[threadIdx.x] = threadIdx.x * 3;
  __syncthreads();
  out[threadIdx.x] = dyn[blockDim.x - 1 - threadIdx.x] + small[0];
}
"#;
    let m = Module::parse(&ptx(src)).unwrap();
    assert_eq!(m.kernels[0].static_shared_bytes, 5);
    let mut mem = TestMemory::new();
    let out = mem.map(&[0u8; 256], true);
    let p = params(&m.kernels[0], &[out]);
    let mut l = launch(1, 64, &p);
    l.dynamic_shared_bytes = 256;
    run(&m, 0, &l, &mem).unwrap();
    let got = to_u32s(&mem.read(out));
    assert_eq!(
        got[..64],
        (0..64).map(|t| (63 - t) * 3 + 1).collect::<Vec<u32>>()[..]
    );
    // One byte less dynamic shared memory than the kernel touches, still inside the
    // 128-byte unit the block's shared memory is allocated in: no fault, as on the H200
    // (runtime program shared_bounds_probe).
    l.dynamic_shared_bytes = 255;
    run(&m, 0, &l, &mem).unwrap();
    // A unit short (16 + 112 bytes allocated, 16 + 256 touched): an illegal address.
    l.dynamic_shared_bytes = 112;
    assert_eq!(
        run(&m, 0, &l, &mem).unwrap_err().kind,
        FaultKind::IllegalAddress
    );
}

#[test]
fn a_function_reaches_the_dynamic_shared_memory_of_whichever_kernel_calls_it() {
    let src = r#"
extern __shared__ unsigned dyn[];
__device__ __noinline__ unsigned neighbour(unsigned t, unsigned n) { return dyn[(t + 1) % n]; }
extern "C" __global__ void a(unsigned* out) {
  __shared__ unsigned pad[3];
  pad[threadIdx.x % 3] = 7;
  dyn[threadIdx.x] = threadIdx.x + pad[0];
  __syncthreads();
  out[threadIdx.x] = neighbour(threadIdx.x, blockDim.x);
}
extern "C" __global__ void b(unsigned* out) {
  __shared__ unsigned pad[17];
  pad[threadIdx.x % 17] = 100;
  dyn[threadIdx.x] = threadIdx.x * 2 + pad[1];
  __syncthreads();
  out[threadIdx.x] = neighbour(threadIdx.x, blockDim.x);
}
"#;
    let m = Module::parse(&ptx(src)).unwrap();
    let mut mem = TestMemory::new();
    let out = mem.map(&[0u8; 128], true);
    for (name, want) in [
        ("a", (0..32).map(|t| (t + 1) % 32 + 7).collect::<Vec<u32>>()),
        ("b", (0..32).map(|t| (t + 1) % 32 * 2 + 100).collect()),
    ] {
        let k = m.kernel(name).unwrap();
        let p = params(&m.kernels[k], &[out]);
        let mut l = launch(1, 32, &p);
        l.dynamic_shared_bytes = 128;
        run(&m, k, &l, &mem).unwrap();
        assert_eq!(to_u32s(&mem.read(out)), want, "kernel {name}");
    }
}

/// A device function's own `.shared` variable (declared in its body, as NVRTC leaves
/// cuda::barrier's in numba-cuda's linked CUDA source) belongs to every kernel that calls
/// it: the kernel's static shared memory holds it, apart from the kernel's own.
#[test]
fn a_callees_own_shared_variable_is_its_kernels_apart_from_the_kernels_own() {
    let src = "
.version 8.0
.target sm_90
.address_size 64
.func (.param .b32 r) bump(.param .b32 v)
{
    .shared .align 4 .b32 counter[2];
    .reg .b32 %a<4>;
    ld.param.b32 %a1, [v];
    st.shared.u32 [counter+4], %a1;
    ld.shared.u32 %a2, [counter+4];
    add.u32 %a2, %a2, 1;
    st.param.b32 [r], %a2;
    ret;
}
.visible .entry k(.param .u64 out)
{
    .shared .align 4 .b32 mine[4];
    .reg .b32 %r<4>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [out];
    st.shared.u32 [mine+4], 40;
    {
        .param .b32 v;
        .param .b32 r;
        st.param.b32 [v], 7;
        call.uni (r), bump, (v);
        ld.param.b32 %r1, [r];
    }
    ld.shared.u32 %r2, [mine+4];
    add.u32 %r3, %r1, %r2;
    st.global.u32 [%rd1], %r3;
    ret;
}
";
    let m = Module::parse(src).unwrap();
    assert_eq!(m.kernels[0].static_shared_bytes, 24);
    let mut mem = TestMemory::new();
    let out = mem.map(&[0u8; 4], true);
    let p = params(&m.kernels[0], &[out]);
    run(&m, 0, &launch(1, 1, &p), &mem).unwrap();
    // 8 from the callee, 40 from the kernel's own variable, which the callee's did not
    // overwrite.
    assert_eq!(to_u32s(&mem.read(out)), [48]);
}
