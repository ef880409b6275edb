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

/// A stand-in for the driver's answers: each kernel's attribute `a` is 100 * kernel + a,
/// its occupancy the block size plus the shared bytes.
fn function_attribute(k: usize, a: i32) -> Option<i32> {
    (a <= 15).then_some(100 * k as i32 + a)
}

fn occupancy(_k: usize, threads: i32, shared: u64) -> Option<i32> {
    Some(threads + shared as i32)
}

const LIMITS: [Option<u64>; 8] = [
    Some(1024),
    Some(4096),
    Some(8 << 20),
    None,
    Some(2048),
    Some(64),
    Some(0),
    Some(232448),
];

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
        limits: LIMITS,
        cache_config: 2,
        device_count: 3,
        function_attribute: &function_attribute,
        occupancy: &occupancy,
        graph_launch: None,
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
    // The set answered cudaSuccess and wrote nothing, as on the H200
    // (ci/explore/devmemset.cu): the word keeps what the kernel left there.
    assert_eq!(w[4], 0, "the set's four bytes, untouched");
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
    // Device-side updates of a graph's kernel nodes stay the host's.
    let src = r#"
__global__ void update(cudaGraphDeviceNode_t n, int v) { cudaGraphKernelNodeSetParam(n, 0, v); }
"#;
    let e = Module::parse(&rdc_ptx(src)).unwrap_err();
    assert!(e.message.contains("cudaGraphKernelNodeSetParam"), "{e}");
}

const GRAPH_LAUNCHES: &str = r#"
__global__ void launcher(cudaGraphExec_t g, long long *out) {
    if (threadIdx.x > 1) return;
    cudaStream_t s = threadIdx.x ? cudaStreamGraphFireAndForget : cudaStreamGraphTailLaunch;
    out[threadIdx.x] = cudaGraphLaunch(g, s);
    out[2 + threadIdx.x] = cudaGetLastError();
    out[4] = (long long)cudaGetCurrentGraphExec();
}
"#;

/// Runs `launcher` (2 threads) with `graph_launch` as the driver's; its 5 words, or the
/// fault.
fn graph_launch_with(
    graph_launch: Option<&cumock_ptx::GraphLaunch>,
) -> Result<Vec<u64>, cumock_ptx::KernelFault> {
    let module = Module::parse(&rdc_ptx(GRAPH_LAUNCHES)).unwrap();
    assert!(module.uses_device_runtime());
    let mut mem = TestMemory::new();
    let pool_base = mem.map(&vec![0u8; 1 << 16], true);
    let pool = DeviceHeap::new(pool_base, 1 << 16);
    let out = mem.map(&[0xffu8; 8 * 5], true);
    let rt = DeviceRuntime {
        pool: &pool,
        pending_launch_limit: 2048,
        attribute: &attribute,
        limits: LIMITS,
        cache_config: 2,
        device_count: 1,
        function_attribute: &function_attribute,
        occupancy: &occupancy,
        graph_launch,
    };
    let k = module.kernel("_Z8launcherP14CUgraphExec_stPx").unwrap();
    let p = params(&module.kernels[k], &[0xabc0, out]);
    let l = Launch {
        device_runtime: Some(&rt),
        current_graph_exec: if graph_launch.is_some() { 0x5150 } else { 0 },
        ..launch(1, 2, &p)
    };
    run(&module, k, &l, &mem)?;
    Ok(mem
        .read(out)
        .chunks(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect())
}

#[test]
fn a_graph_launch_on_the_device_is_the_drivers_and_its_error_not_the_threads_last() {
    let calls = std::sync::Mutex::new(Vec::new());
    // The driver's stand-in: a tail launch accepted, a fire-and-forget refused.
    let driver = |exec: u64, stream: u64| {
        calls.lock().unwrap().push((exec, stream));
        Ok(if stream == 0x0100_0000_0000_0000 {
            0
        } else {
            1
        })
    };
    let w = graph_launch_with(Some(&driver)).unwrap();
    let mut calls = calls.into_inner().unwrap();
    calls.sort();
    assert_eq!(
        calls,
        [
            (0xabc0, 0x0100_0000_0000_0000),
            (0xabc0, 0x0200_0000_0000_0000)
        ],
        "each thread's call reached the driver with its graph and named stream"
    );
    // Recorded on the H200: a refused device graph launch leaves the last error alone.
    assert_eq!(&w[..4], [0, 1, 0, 0], "the results, then the last errors");
    assert_eq!(w[4], 0x5150, "cudaGetCurrentGraphExec: the launch's graph");
}

#[test]
fn outside_a_graph_a_device_graph_launch_fails_and_no_graph_is_current() {
    let w = graph_launch_with(None).unwrap();
    // cudaErrorInvalidValue, the last error untouched (as the H200's refusals of graph
    // launches): a grid launched on the device is no graph's node, which the guide
    // forbids; the H200's code awaits a recording (it refuses a kernel calling
    // cudaGraphLaunch launched into a stream from the host).
    assert_eq!(w, [1, 1, 0, 0, 0]);
}

#[test]
fn a_graph_launch_the_driver_refuses_with_a_fault_faults_the_calling_thread() {
    // The driver's stand-in: the fire-and-forget launch (thread 1) faults, as the H200's
    // does for a graph not instantiated for device launch.
    let driver = |_exec: u64, stream: u64| {
        if stream == 0x0200_0000_0000_0000 {
            Err("not a device graph".to_owned())
        } else {
            Ok(0)
        }
    };
    let f = graph_launch_with(Some(&driver)).unwrap_err();
    assert_eq!(f.kind, FaultKind::IllegalAddress);
    assert_eq!(f.thread, [1, 0, 0], "the thread whose call faulted");
    assert_eq!(f.detail, "not a device graph");
    assert!(
        f.instruction.starts_with("call"),
        "located at the call: {f}"
    );
}

const QUERIES: &str = r#"
__global__ void target(int *p) { p[0] = 1; }

__global__ void queries(long long *out) {
    size_t v = 77;
    int i = 0;
    for (int l = 0; l < 7; ++l) {
        v = 77;
        int e = cudaDeviceGetLimit(&v, (cudaLimit)l);
        out[2 * l] = e;
        out[2 * l + 1] = (long long)v;
    }
    out[14] = cudaDeviceGetLimit(&v, (cudaLimit)8);
    cudaFuncCache c;
    out[15] = cudaDeviceGetCacheConfig(&c);
    out[16] = c;
    out[17] = cudaGetDeviceCount(&i);
    out[18] = i;
    out[19] = cudaRuntimeGetVersion(&i);
    out[20] = i;
    cudaFuncAttributes a;
    out[21] = cudaFuncGetAttributes(&a, (const void *)target);
    out[22] = a.sharedSizeBytes;
    out[23] = a.localSizeBytes;
    out[24] = a.maxThreadsPerBlock;
    out[25] = a.preferredShmemCarveout;
    out[26] = a.nonPortableClusterSizeAllowed;
    out[27] = a.clusterSchedulingPolicyPreference;
    out[28] = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&i, (const void *)target, 128, 1000);
    out[29] = i;
    out[30] = cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&i, (const void *)target, 64, 0, 1);
    out[31] = i;
    out[32] = cudaFuncGetAttributes(&a, (const void *)out);
    out[33] = cudaGetLastError();
    out[34] = cudaGetLastError();
}

// make_cudaPitchedPtr and the like are host functions.
__device__ cudaPitchedPtr pitched(void *p, size_t pitch, size_t x, size_t y) {
    cudaPitchedPtr r; r.ptr = p; r.pitch = pitch; r.xsize = x; r.ysize = y; return r;
}
__device__ cudaExtent extent(size_t w, size_t h, size_t d) {
    cudaExtent r; r.width = w; r.height = h; r.depth = d; return r;
}

// A 4 x 3 block of bytes of a 16-byte pitch, copied into a 8-byte pitch, and sets.
__global__ void regions(unsigned char *src, unsigned char *dst, unsigned char *set, int *err) {
    err[0] = cudaMemcpy2DAsync(dst, 8, src, 16, 4, 3, cudaMemcpyDeviceToDevice, 0);
    err[1] = cudaMemcpy2DAsync(dst, 2, src, 16, 4, 3, cudaMemcpyDeviceToDevice, 0);
    err[2] = cudaMemset2DAsync(set, 8, 0x11, 3, 2, 0);
    cudaMemcpy3DParms p = {0};
    p.srcPtr = pitched(src, 16, 16, 4);
    p.srcPos.x = 1; p.srcPos.y = 1;
    p.dstPtr = pitched(dst + 32, 4, 4, 2);
    p.extent = extent(2, 2, 2);
    p.kind = cudaMemcpyDeviceToDevice;
    err[3] = cudaMemcpy3DAsync(&p, 0);
    err[4] = cudaMemset3DAsync(pitched(set + 32, 4, 4, 2), 0x22, extent(1, 2, 2), 0);
    p.kind = cudaMemcpyHostToDevice;
    err[5] = cudaMemcpy3DAsync(&p, 0);
    p.kind = cudaMemcpyDeviceToDevice;
    p.extent = extent(16, 1, 1);
    err[6] = cudaMemcpy3DAsync(&p, 0);
    // Packed rows (pitch = width): one run of 16 bytes.
    err[7] = cudaMemcpy2DAsync(dst + 48, 4, src + 100, 4, 4, 4, cudaMemcpyDeviceToDevice, 0);
}
"#;

#[test]
fn device_queries_answer_from_the_launchs_settings() {
    let mut s = setup();
    s.module = Module::parse(&rdc_ptx(QUERIES)).unwrap();
    let out = s.mem.map(&[0u8; 8 * 40], true);
    launch_with(&mut s, "_Z7queriesPx", 1, &[out], 2048).unwrap();
    let b = s.mem.read(out);
    let w: Vec<i64> = b
        .chunks(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    // Each limit as the launch had it; the sync depth unsupported (215) leaves the
    // value as it was; a limit past the last one (8: CU_LIMIT_SHMEM_SIZE, 7, is
    // answered) is invalid (1).
    assert_eq!(
        &w[..15],
        &[
            0,
            1024,
            0,
            4096,
            0,
            8 << 20,
            215,
            77,
            0,
            2048,
            0,
            64,
            0,
            0,
            1
        ]
    );
    // The device runtime's version: 6000 on the H200 (device_runtime_calls, recorded).
    assert_eq!(&w[15..21], &[0, 2, 0, 3, 0, 6000]);
    // The target kernel's attributes by the driver's numbers: kernel index k of
    // `target`, attribute a is 100 * k + a (SHARED 1, LOCAL 3, MAX_THREADS 0,
    // NON_PORTABLE 14, POLICY 15); the carveout (9) is 0 on the device, whatever the
    // host set (the H200, device_runtime_calls).
    let k = s.module.kernel("_Z6targetPi").unwrap() as i64;
    assert_eq!(
        &w[21..28],
        &[
            0,
            100 * k + 1,
            100 * k + 3,
            100 * k,
            0,
            100 * k + 14,
            100 * k + 15
        ]
    );
    assert_eq!(&w[28..32], &[0, 1128, 0, 64]);
    // Not a function: cudaErrorInvalidDeviceFunction, kept as the last error once.
    assert_eq!(&w[32..35], &[98, 98, 0]);
}

#[test]
fn device_2d_and_3d_copies_and_sets_run_in_stream_order() {
    let mut s = setup();
    s.module = Module::parse(&rdc_ptx(QUERIES)).unwrap();
    let src_bytes: Vec<u8> = (0..128).collect();
    let src = s.mem.map(&src_bytes, true);
    let dst = s.mem.map(&[0xffu8; 64], true);
    let set = s.mem.map(&[0u8; 64], true);
    let err = s.mem.map(&[0u8; 32], true);
    launch_with(&mut s, "_Z7regionsPhS_S_Pi", 1, &[src, dst, set, err], 2048).unwrap();
    // A pitch below the width: cudaErrorInvalidPitchValue (12); a copy from the host:
    // cudaErrorInvalidMemcpyDirection (21); a width past the pitch: invalid (1).
    assert_eq!(to_u32s(&s.mem.read(err)), [0, 12, 0, 0, 0, 21, 1, 0]);
    let d = s.mem.read(dst);
    for y in 0..3 {
        assert_eq!(
            &d[8 * y..8 * y + 4],
            &src_bytes[16 * y..16 * y + 4],
            "row {y}"
        );
        assert_eq!(&d[8 * y + 4..8 * y + 8], &[0xff; 4], "past row {y}");
    }
    // 3D: 2 bytes of 2 rows of 2 slices from (1, 1, 0) of a 16-byte pitch, 4 rows a
    // slice, into a 4-byte pitch of 2 rows a slice.
    for z in 0..2 {
        for y in 0..2 {
            let to = 32 + 8 * z + 4 * y;
            let from = 64 * z + 16 * (y + 1) + 1;
            assert_eq!(
                &d[to..to + 2],
                &src_bytes[from..from + 2],
                "slice {z} row {y}"
            );
            assert_eq!(&d[to + 2..to + 4], &[0xff; 2], "past slice {z} row {y}");
        }
    }
    assert_eq!(&d[48..64], &src_bytes[100..116], "packed rows");
    // The 2D and 3D sets answered cudaSuccess and wrote nothing, as on the H200
    // (ci/explore/devmemset.cu).
    let st = s.mem.read(set);
    assert!(st.iter().all(|&b| b == 0), "{st:?}");
}
