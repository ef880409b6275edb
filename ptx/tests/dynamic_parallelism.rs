//! CUDA dynamic parallelism (CDP2) on the executor: kernels nvcc compiled with
//! `-rdc=true` launch kernels through the device runtime's `__cudaCDP2*` functions,
//! which the executor implements (`src/executor/devrt.rs`). The order grids run in
//! (children after their parent, in launch order, each with its own tree; tail launches
//! after the grid's other work), the launch errors (configuration, nesting, the
//! pending-launch limit), device-side cudaMalloc and memcpy, and a child's fault.

mod common;
use common::*;
use cumock_ptx::{run, DeviceHeap, DeviceRuntime, FaultKind, Launch, Module};

fn rdc_ptx(source: &str) -> String {
    String::from_utf8(nvcc(
        source,
        &["-ptx", "-rdc=true", "-arch=compute_90", "-O3"],
    ))
    .unwrap()
}

/// What the kernels share: a log of events (a counter, then entries) and words of results.
const SOURCE: &str = r#"
__device__ void note(int *log, int v) { int at = atomicAdd(&log[0], 1); log[1 + at] = v; }

__global__ void tail(int *log, int v) { note(log, v); }

// Generation `depth` notes 10 * depth + which; below `max`, thread 0 launches two
// children, then a tail launch noting 100 + depth.
__global__ void tree(int *log, int depth, int max, int which) {
    if (threadIdx.x != 0) return;
    note(log, 10 * depth + which);
    if (depth < max) {
        tree<<<1, 2>>>(log, depth + 1, max, 1);
        tree<<<1, 2>>>(log, depth + 1, max, 2);
        tail<<<1, 1, 0, cudaStreamTailLaunch>>>(log, 100 + depth);
    }
}

__global__ void nothing() {}

__global__ void errors(int *out) {
    nothing<<<1, 2048>>>();
    out[0] = cudaGetLastError();
    nothing<<<dim3(1, 70000), 1>>>();
    out[1] = cudaGetLastError();
    out[2] = cudaGetLastError();
    cudaStream_t s;
    out[3] = cudaStreamCreateWithFlags(&s, cudaStreamDefault);
    out[4] = cudaStreamDestroy((cudaStream_t)0x1234);
    cudaEvent_t e;
    out[5] = cudaEventCreateWithFlags(&e, cudaEventDefault);
    out[6] = cudaGetLastError();
}

__global__ void nest(int depth, int *out) {
    atomicMax(&out[0], depth);
    nest<<<1, 1>>>(depth + 1, out);
    int e = cudaGetLastError();
    if (e) out[1] = e;
}

__global__ void count(int *out) { atomicAdd(&out[0], 1); }

__global__ void many(int *out) {
    count<<<1, 1>>>(out);
    int e = cudaGetLastError();
    if (e) { atomicAdd(&out[1], 1); out[2] = e; }
}

__global__ void fill(int *p, int n) { if (threadIdx.x < n) p[threadIdx.x] = 7 * threadIdx.x; }

__global__ void memory(int *out) {
    int *p = 0;
    out[0] = cudaMalloc((void **)&p, 64 * sizeof(int));
    fill<<<1, 64>>>(p, 64);
    out[1] = cudaMemcpyAsync(out + 8, p, 64 * sizeof(int), cudaMemcpyDeviceToDevice, 0);
    out[2] = cudaMemsetAsync(out + 4, 0x7f, 4, 0);
    out[3] = cudaMemcpyAsync(out + 8, p, 4, cudaMemcpyHostToDevice, 0);
}

__global__ void bad(int *p) { p[threadIdx.x] = 1; }

__global__ void faulting(int *flag) {
    flag[0] = 1;
    bad<<<1, 1>>>((int *)0);
}
"#;

struct Setup {
    module: Module,
    mem: TestMemory,
    pool: DeviceHeap,
    heap: DeviceHeap,
}

fn setup() -> Setup {
    let module = Module::parse(&rdc_ptx(SOURCE)).unwrap();
    assert!(module.uses_device_runtime());
    let mut mem = TestMemory::new();
    let pool_base = mem.map(&vec![0u8; 1 << 20], true);
    let heap_base = mem.map(&vec![0u8; 1 << 20], true);
    Setup {
        module,
        mem,
        pool: DeviceHeap::new(pool_base, 1 << 20),
        heap: DeviceHeap::new(heap_base, 1 << 20),
    }
}

fn attribute(a: i32) -> Option<i32> {
    (a == 1).then_some(1024)
}

/// Runs `kernel` (1 block of `threads`) with words of output, the device runtime's
/// pending-launch limit `pending`; the words after, or the fault.
fn launch_with(
    s: &mut Setup,
    kernel: &str,
    threads: u32,
    args: &[u64],
    pending: u32,
) -> Result<(), cumock_ptx::KernelFault> {
    let rt = DeviceRuntime {
        pool: &s.pool,
        pending_launch_limit: pending,
        attribute: &attribute,
    };
    let k = s
        .module
        .kernel(kernel)
        .unwrap_or_else(|| panic!("{kernel}"));
    let p = params(&s.module.kernels[k], args);
    let l = Launch {
        heap: Some(&s.heap),
        device_runtime: Some(&rt),
        ..launch(1, threads, &p)
    };
    run(&s.module, k, &l, &s.mem).map(|_| ())
}

#[test]
fn children_run_after_their_parent_in_launch_order_and_tail_launches_last() {
    let mut s = setup();
    let log = s.mem.map(&[0u8; 4 * 64], true);
    launch_with(&mut s, "_Z4treePiiii", 2, &[log, 0, 2, 0], 2048).unwrap();
    let words = to_u32s(&s.mem.read(log));
    let n = words[0] as usize;
    // Depth first, children in launch order, each generation's tail after its subtree.
    let want = [0, 11, 21, 22, 101, 12, 21, 22, 101, 100];
    assert_eq!(&words[1..=n], &want[..], "the order the grids ran in");
    // Every parameter buffer went back to the pool.
    assert_ne!(s.pool.malloc(1 << 20), 0, "the pool is whole again");
}

#[test]
fn launch_errors_are_returned_and_kept_as_the_last_error() {
    let mut s = setup();
    let out = s.mem.map(&[0xffu8; 4 * 8], true);
    launch_with(&mut s, "_Z6errorsPi", 1, &[out], 2048).unwrap();
    let w = to_u32s(&s.mem.read(out));
    // cudaErrorInvalidConfiguration twice, the last error cleared by the get, a blocking
    // stream made (the H200 accepts cudaStreamDefault on the device: runtime program
    // dynamic_parallelism), cudaErrorInvalidResourceHandle for a stream never made,
    // cudaErrorInvalidValue for a timed event, kept as the last error.
    assert_eq!(&w[..7], &[9, 9, 0, 0, 400, 1, 1]);
}

#[test]
fn nesting_stops_at_the_pending_launch_limit() {
    // Each grid of the chain stays a pending launch until it and its children are
    // complete, so under a limit of 48 the 48th generation's launch is refused (as the
    // H200 recorded: runtime program dynamic_parallelism); no depth limit of 24.
    let mut s = setup();
    let out = s.mem.map(&[0u8; 8], true);
    launch_with(&mut s, "_Z4nestiPi", 1, &[0, out], 48).unwrap();
    let w = to_u32s(&s.mem.read(out));
    assert_eq!(
        w,
        [48, 69],
        "deepest generation, cudaErrorLaunchPendingCountExceeded"
    );
}

#[test]
fn launches_past_the_pending_limit_fail_and_the_rest_run() {
    let mut s = setup();
    let out = s.mem.map(&[0u8; 12], true);
    launch_with(&mut s, "_Z4manyPi", 64, &[out], 16).unwrap();
    let w = to_u32s(&s.mem.read(out));
    assert_eq!(
        w,
        [16, 48, 69],
        "ran, refused, cudaErrorLaunchPendingCountExceeded"
    );
}

#[test]
fn device_malloc_memcpy_and_memset_run_in_stream_order() {
    let mut s = setup();
    let out = s.mem.map(&[0u8; 4 * 72], true);
    launch_with(&mut s, "_Z6memoryPi", 1, &[out], 2048).unwrap();
    let w = to_u32s(&s.mem.read(out));
    // cudaSuccess for the allocation, the copy and the set; a copy from the host
    // refused (cudaErrorInvalidMemcpyDirection).
    assert_eq!(&w[..4], &[0, 0, 0, 21]);
    assert_eq!(w[4], 0x7f7f_7f7f, "the set's four bytes");
    let filled: Vec<u32> = (0..64).map(|i| 7 * i).collect();
    assert_eq!(
        &w[8..72],
        &filled[..],
        "the copy ran after the child that filled it"
    );
}

#[test]
fn a_childs_fault_is_the_launchs_fault() {
    let mut s = setup();
    let flag = s.mem.map(&[0u8; 4], true);
    let f = launch_with(&mut s, "_Z8faultingPi", 1, &[flag], 2048).unwrap_err();
    assert_eq!(f.kind, FaultKind::IllegalAddress);
    assert_eq!(f.kernel, "_Z3badPi", "the child's kernel is named");
    assert_eq!(to_u32s(&s.mem.read(flag)), [1], "the parent ran first");
}

#[test]
fn without_a_device_runtime_a_launch_faults_naming_it() {
    let mut s = setup();
    let out = s.mem.map(&[0u8; 8], true);
    let k = s.module.kernel("_Z4nestiPi").unwrap();
    let p = params(&s.module.kernels[k], &[0, out]);
    let f = run(&s.module, k, &launch(1, 1, &p), &s.mem).unwrap_err();
    assert_eq!(f.kind, FaultKind::IllegalInstruction);
    assert!(f.detail.contains("device runtime"), "{f}");
}

#[test]
fn device_runtime_functions_not_emulated_are_refused_at_load() {
    let src = r#"
__global__ void limit(size_t *out) { cudaDeviceGetLimit(out, cudaLimitStackSize); }
"#;
    let e = Module::parse(&rdc_ptx(src)).unwrap_err();
    assert!(e.message.contains("__cudaCDP2DeviceGetLimit"), "{e}");
}
