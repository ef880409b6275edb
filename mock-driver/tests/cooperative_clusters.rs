//! Cooperative launches with thread-block clusters through the C exports: cuLaunchKernelEx
//! with both CU_LAUNCH_ATTRIBUTE_COOPERATIVE and CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION runs
//! a kernel that reads its cluster's shared memory and syncs the grid (the barrier nvcc
//! 13.0 builds for cooperative groups, in the grid workspace); a grid with more clusters
//! than cuOccupancyMaxActiveClusters says fit at once is CUDA_ERROR_COOPERATIVE_LAUNCH_
//! TOO_LARGE; a graph's kernel node with both attributes runs as the launch does.

use cuda::exports::*;
use cumock_abi::{
    GraphKernelParams, LaunchAttribute, LaunchConfig, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
    CU_LAUNCH_ATTRIBUTE_COOPERATIVE,
};
use std::ffi::c_void;
use std::sync::Mutex;

const CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: u32 = 720;

/// Thread 0 of each block writes its block number plus one into its shared word; after a
/// cluster barrier it reads the next rank's word (mapa) into out[block]; after a cluster
/// barrier and a grid sync it copies out[(block + 1) % blocks], which another cluster
/// wrote, into out[blocks + block].
const PTX: &str = "
.version 8.0
.target sm_90
.address_size 64
.visible .entry gather(.param .u64 out)
{
    .reg .pred %p<4>;
    .reg .b32 %r<24>;
    .reg .b64 %rd<16>;
    .shared .align 4 .b32 word;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %nctaid.x;
    mov.u32 %r4, %cluster_ctarank;
    mov.u32 %r5, %cluster_nctarank;
    setp.eq.u32 %p1, %r1, 0;
    add.u32 %r6, %r2, 1;
    @%p1 st.shared.u32 [word], %r6;
    barrier.cluster.arrive;
    barrier.cluster.wait;
    add.u32 %r7, %r4, 1;
    rem.u32 %r7, %r7, %r5;
    mov.u32 %r8, word;
    mapa.shared::cluster.u32 %r9, %r8, %r7;
    ld.shared::cluster.u32 %r10, [%r9];
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    @%p1 st.global.u32 [%rd3], %r10;
    barrier.cluster.arrive;
    barrier.cluster.wait;
    // The grid sync: the workspace from %envreg1:%envreg2, thread 0 of each block adds
    // to its barrier word (block 0: 0x80000001 - blocks, the others 1) and spins until
    // the top bit flips.
    mov.u32 %r11, %envreg2;
    mov.u32 %r12, %envreg1;
    cvt.u64.u32 %rd4, %r11;
    cvt.u64.u32 %rd5, %r12;
    bfi.b64 %rd6, %rd5, %rd4, 32, 32;
    add.s64 %rd7, %rd6, 4;
    setp.eq.u32 %p2, %r2, 0;
    mov.u32 %r13, -2147483647;
    sub.s32 %r14, %r13, %r3;
    selp.b32 %r15, %r14, 1, %p2;
    bar.sync 0;
    @!%p1 bra AFTER;
    atom.add.release.gpu.u32 %r16, [%rd7], %r15;
SPIN:
    ld.acquire.gpu.u32 %r17, [%rd7];
    xor.b32 %r18, %r17, %r16;
    setp.lt.s32 %p3, %r18, 0;
    @!%p3 bra SPIN;
AFTER:
    bar.sync 0;
    add.u32 %r19, %r2, 1;
    rem.u32 %r19, %r19, %r3;
    mul.wide.u32 %rd8, %r19, 4;
    add.s64 %rd9, %rd1, %rd8;
    @%p1 ld.global.u32 %r20, [%rd9];
    mul.wide.u32 %rd10, %r3, 4;
    add.s64 %rd11, %rd3, %rd10;
    @%p1 st.global.u32 [%rd11], %r20;
    ret;
}
";

const BLOCKS: u32 = 16;
const CLUSTER: u32 = 4;

/// The tests share the primary context: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// The module's kernel, in the primary context made current.
unsafe fn setup() -> cumock_abi::CUfunction {
    let src = std::ffi::CString::new(PTX).unwrap();
    // Safety: out-pointers are live locals; the image is a NUL-terminated string.
    unsafe {
        assert_eq!(cuInit(0), 0);
        let mut ctx = std::ptr::null_mut();
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
        let mut module = std::ptr::null_mut();
        assert_eq!(cuModuleLoadData(&mut module, src.as_ptr().cast()), 0);
        let mut f = std::ptr::null_mut();
        assert_eq!(cuModuleGetFunction(&mut f, module, c"gather".as_ptr()), 0);
        f
    }
}

fn attributes(cluster: u32) -> [LaunchAttribute; 2] {
    let mut a = [LaunchAttribute {
        id: CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
        pad: 0,
        value: [0; 16],
    }; 2];
    a[0].value[..3].copy_from_slice(&[cluster, 1, 1]);
    a[1].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    a[1].value[0] = 1;
    a
}

/// What `gather` writes for `blocks` blocks in clusters of `cluster`.
fn expected(blocks: u32, cluster: u32) -> Vec<u32> {
    let first: Vec<u32> = (0..blocks)
        .map(|b| b - b % cluster + (b % cluster + 1) % cluster + 1)
        .collect();
    let second = (0..blocks).map(|b| first[((b + 1) % blocks) as usize]);
    first.iter().copied().chain(second).collect()
}

unsafe fn read(out: u64, words: usize) -> Vec<u32> {
    let mut host = vec![0u32; words];
    // Safety: `host` holds `words` words; `out` is the test's allocation of as many.
    let r = unsafe { cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), out, 4 * words) };
    assert_eq!(r, 0);
    host
}

#[test]
fn cu_launch_kernel_ex_runs_a_cooperative_launch_in_clusters() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Safety: out-pointers and the parameter array are live locals; the config's
    // attributes outlive the call.
    unsafe {
        let f = setup();
        let words = 2 * BLOCKS as usize;
        let mut out = 0u64;
        assert_eq!(cuMemAlloc_v2(&mut out, 4 * words), 0);
        assert_eq!(cuMemsetD8_v2(out, 0, 4 * words), 0);
        let mut params = [&mut out as *mut u64 as *mut c_void];
        let mut attrs = attributes(CLUSTER);
        let config = LaunchConfig {
            grid: [BLOCKS, 1, 1],
            block: [64, 1, 1],
            shared: 0,
            stream: std::ptr::null_mut(),
            attrs: attrs.as_mut_ptr(),
            num_attrs: 2,
        };
        let r = cuLaunchKernelEx(
            (&config as *const LaunchConfig).cast(),
            f,
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        );
        assert_eq!(r, 0);
        assert_eq!(cuCtxSynchronize(), 0);
        assert_eq!(read(out, words), expected(BLOCKS, CLUSTER));
        assert_eq!(cuMemFree_v2(out), 0);
    }
}

#[test]
fn more_clusters_than_fit_at_once_are_too_large_for_a_cooperative_launch() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Safety: as above; the launch is refused before the kernel reads its parameter.
    unsafe {
        let f = setup();
        let mut out = 0u64;
        assert_eq!(cuMemAlloc_v2(&mut out, 4), 0);
        let mut params = [&mut out as *mut u64 as *mut c_void];
        for (threads, cluster) in [(1024, 8), (256, 4), (32, 2)] {
            let mut attrs = attributes(cluster);
            let mut config = LaunchConfig {
                grid: [cluster * 64, 1, 1],
                block: [threads, 1, 1],
                shared: 0,
                stream: std::ptr::null_mut(),
                attrs: attrs.as_mut_ptr(),
                num_attrs: 1,
            };
            let mut fit = -1;
            let cfg = (&config as *const LaunchConfig).cast();
            assert_eq!(cuOccupancyMaxActiveClusters(&mut fit, f, cfg), 0);
            assert!(fit > 0, "{threads} threads, clusters of {cluster}: {fit}");
            config.num_attrs = 2;
            if cluster == 2 {
                // As many as fit run (the grid sync completes across all of them).
                let words = 2 * (cluster * fit as u32) as usize;
                let mut big = 0u64;
                assert_eq!(cuMemAlloc_v2(&mut big, 4 * words), 0);
                let mut big_params = [&mut big as *mut u64 as *mut c_void];
                config.grid[0] = cluster * fit as u32;
                let cfg = (&config as *const LaunchConfig).cast();
                let r = cuLaunchKernelEx(cfg, f, big_params.as_mut_ptr(), std::ptr::null_mut());
                assert_eq!(r, 0, "{fit} clusters of {cluster} blocks of {threads}");
                assert_eq!(cuCtxSynchronize(), 0);
                assert_eq!(read(big, words), expected(config.grid[0], cluster));
                assert_eq!(cuMemFree_v2(big), 0);
            }
            config.grid[0] = cluster * (fit as u32 + 1);
            let cfg = (&config as *const LaunchConfig).cast();
            let r = cuLaunchKernelEx(cfg, f, params.as_mut_ptr(), std::ptr::null_mut());
            assert_eq!(
                r,
                CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
                "{} clusters of {cluster} blocks of {threads}: {fit} fit",
                fit + 1
            );
        }
        assert_eq!(cuMemFree_v2(out), 0);
    }
}

#[test]
fn a_graph_kernel_node_with_both_attributes_runs_cooperatively_in_clusters() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Safety: out-pointers, the node's parameters and the attribute values are live
    // locals for each call.
    unsafe {
        let f = setup();
        let words = 2 * BLOCKS as usize;
        let mut out = 0u64;
        assert_eq!(cuMemAlloc_v2(&mut out, 4 * words), 0);
        assert_eq!(cuMemsetD8_v2(out, 0, 4 * words), 0);
        let mut params = [&mut out as *mut u64 as *mut c_void];
        let node_params = GraphKernelParams {
            func: f,
            grid: [BLOCKS, 1, 1],
            block: [64, 1, 1],
            shared: 0,
            kernel_params: params.as_mut_ptr(),
            extra: std::ptr::null_mut(),
            kern: std::ptr::null_mut(),
            ctx: std::ptr::null_mut(),
        };
        let mut graph = std::ptr::null_mut();
        assert_eq!(cuGraphCreate(&mut graph, 0), 0);
        let mut node = std::ptr::null_mut();
        let r = cuGraphAddKernelNode_v2(
            &mut node,
            graph,
            std::ptr::null(),
            0,
            (&node_params as *const GraphKernelParams).cast(),
        );
        assert_eq!(r, 0);
        for a in attributes(2) {
            let r = cuGraphKernelNodeSetAttribute(node, a.id, a.value.as_ptr().cast());
            assert_eq!(r, 0, "attribute {}", a.id);
        }
        let mut exec = std::ptr::null_mut();
        assert_eq!(cuGraphInstantiateWithFlags(&mut exec, graph, 0), 0);
        assert_eq!(cuGraphLaunch(exec, std::ptr::null_mut()), 0);
        assert_eq!(cuCtxSynchronize(), 0);
        assert_eq!(read(out, words), expected(BLOCKS, 2));
        assert_eq!(cuGraphExecDestroy(exec), 0);
        assert_eq!(cuGraphDestroy(graph), 0);
        assert_eq!(cuMemFree_v2(out), 0);
    }
}
