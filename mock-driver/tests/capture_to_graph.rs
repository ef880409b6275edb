//! cuStreamBeginCaptureToGraph beyond kernels, copies and host functions: graph memory
//! (cuMemAllocAsync and cuMemFreeAsync captured into the program's graph, a free of an
//! allocation node the graph had already), conditional bodies filled by capture (cuda.h:
//! "these graphs may be populated using graph node creation APIs or
//! cuStreamBeginCaptureToGraph"), and a conditional node added into a capture in progress
//! (cuStreamGetCaptureInfo, cuGraphAddNode, cuStreamUpdateCaptureDependencies), each
//! built as capture into a new graph builds it, then instantiated and run.

#[path = "common/graph_kernels.rs"]
mod graph_kernels;
use cuda::exports::*;
use cumock_abi::result::*;
use cumock_abi::*;
use graph_kernels::{launch, nodes, read, ADD, N};
use std::sync::Mutex;

/// Captures in global mode forbid other threads' unsafe calls: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// CU_GRAPH_NODE_TYPE_*.
const KERNEL: i32 = 0;
const MEMSET: i32 = 2;
const EMPTY: i32 = 5;
const MEMCPY: i32 = 1;
const CONDITIONAL: i32 = 13;
const MEM_ALLOC: i32 = 10;
const MEM_FREE: i32 = 11;

fn setup() -> (std::sync::MutexGuard<'static, ()>, CUcontext, CUfunction) {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Safety: pointers to live locals; a NUL-terminated PTX image.
    unsafe {
        assert_eq!(cuInit(0), 0);
        let mut ctx: CUcontext = std::ptr::null_mut();
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
        let ptx = std::ffi::CString::new(ADD).unwrap();
        let mut module: CUmodule = std::ptr::null_mut();
        assert_eq!(cuModuleLoadData(&mut module, ptx.as_ptr().cast()), 0);
        let mut f: CUfunction = std::ptr::null_mut();
        assert_eq!(cuModuleGetFunction(&mut f, module, c"add".as_ptr()), 0);
        (guard, ctx, f)
    }
}

fn stream() -> CUstream {
    let mut s: CUstream = std::ptr::null_mut();
    // Safety: a live local; CU_STREAM_NON_BLOCKING.
    assert_eq!(unsafe { cuStreamCreate(&mut s, 1) }, 0);
    s
}

fn device_words() -> u64 {
    let mut p = 0u64;
    // Safety: a live local.
    unsafe {
        assert_eq!(cuMemAlloc_v2(&mut p, 4 * N), 0);
        assert_eq!(cuMemsetD32_v2(p, 0, N), 0);
    }
    p
}

fn types(g: CUgraph) -> Vec<i32> {
    nodes(g)
        .into_iter()
        .map(|n| {
            let mut t = -1;
            // Safety: a live local.
            assert_eq!(
                unsafe { cuGraphNodeGetType(n, (&mut t as *mut i32).cast()) },
                0
            );
            t
        })
        .collect()
}

fn run(g: CUgraph, s: CUstream) {
    let mut e: CUgraphExec = std::ptr::null_mut();
    // Safety: live locals and handles.
    unsafe {
        assert_eq!(cuGraphInstantiateWithFlags(&mut e, g, 0), 0);
        assert_eq!(cuGraphLaunch(e, s), 0);
        assert_eq!(cuStreamSynchronize(s), 0);
        assert_eq!(cuGraphExecDestroy(e), 0);
    }
}

fn begin_to_graph(s: CUstream, g: CUgraph, deps: &[CUgraphNode]) -> CUresult {
    // Safety: `deps` holds deps.len() nodes; no edge data.
    unsafe {
        cuStreamBeginCaptureToGraph(
            s,
            g,
            if deps.is_empty() {
                std::ptr::null()
            } else {
                deps.as_ptr()
            },
            std::ptr::null(),
            deps.len(),
            0,
        )
    }
}

fn end(s: CUstream) -> (CUresult, CUgraph) {
    let mut g: CUgraph = std::ptr::null_mut();
    // Safety: a live local.
    let r = unsafe { cuStreamEndCapture(s, &mut g) };
    (r, g)
}

#[test]
fn captured_allocation_and_free_land_in_the_programs_graph() {
    let (_g, _ctx, f) = setup();
    let s = stream();
    let out = device_words();
    let mut g: CUgraph = std::ptr::null_mut();
    // Safety: live locals and handles throughout.
    unsafe {
        assert_eq!(cuGraphCreate(&mut g, 0), 0);
        let mut first: CUgraphNode = std::ptr::null_mut();
        assert_eq!(cuGraphAddEmptyNode(&mut first, g, std::ptr::null(), 0), 0);
        assert_eq!(begin_to_graph(s, g, &[first]), 0);
        // Graph memory: allocated, filled by kernels, copied out, freed.
        let mut p = 0u64;
        assert_eq!(cuMemAllocAsync(&mut p, 4 * N, s), 0);
        assert_ne!(p, 0, "the allocation node's address, known at capture");
        assert_eq!(cuMemsetD32Async(p, 1, N, s), 0);
        assert_eq!(launch(f, s, p, 6), 0);
        assert_eq!(cuMemcpyDtoDAsync_v2(out, p, 4 * N, s), 0);
        assert_eq!(cuMemFreeAsync(p, s), 0);
        let (r, got) = end(s);
        assert_eq!((r, got), (0, g), "the program's own graph comes back");
        assert_eq!(types(g)[0], EMPTY, "the empty node first");
        assert_eq!(types(g)[1], MEM_ALLOC);
        assert_eq!(*types(g).last().unwrap(), MEM_FREE);
        assert!(types(g).contains(&KERNEL) && types(g).contains(&MEMCPY));
        assert_eq!(read(out), vec![0; N], "nothing ran at capture");
        // Twice: the allocation is freed inside the graph, so it may run again.
        run(g, s);
        assert_eq!(read(out), vec![7; N]);
        run(g, s);
        assert_eq!(read(out), vec![7; N]);
        assert_eq!(cuGraphDestroy(g), 0);
        assert_eq!(cuStreamDestroy_v2(s), 0);
        assert_eq!(cuMemFree_v2(out), 0);
    }
}

/// `CUDA_MEM_ALLOC_NODE_PARAMS_v1`.
#[repr(C)]
struct AllocNodeParams {
    pool_props: CUmemPoolProps,
    access_descs: *const CUmemAccessDesc,
    access_desc_count: usize,
    bytesize: usize,
    dptr: u64,
}

#[test]
fn a_capture_frees_an_allocation_node_the_graph_had() {
    let (_g, _ctx, f) = setup();
    let s = stream();
    let out = device_words();
    // Safety: live locals and handles throughout; the structs as cuda.h lays them out.
    unsafe {
        let mut g: CUgraph = std::ptr::null_mut();
        assert_eq!(cuGraphCreate(&mut g, 0), 0);
        let mut ap = AllocNodeParams {
            pool_props: CUmemPoolProps {
                alloc_type: 1,
                location: CUmemLocation { type_: 1, id: 0 },
                ..Default::default()
            },
            access_descs: std::ptr::null(),
            access_desc_count: 0,
            bytesize: 4 * N,
            dptr: 0,
        };
        let mut alloc: CUgraphNode = std::ptr::null_mut();
        let params = (&mut ap as *mut AllocNodeParams).cast();
        assert_eq!(
            cuGraphAddMemAllocNode(&mut alloc, g, std::ptr::null(), 0, params),
            0
        );
        let p = ap.dptr;
        assert_eq!(begin_to_graph(s, g, &[alloc]), 0);
        assert_eq!(cuMemsetD32Async(p, 2, N, s), 0);
        assert_eq!(launch(f, s, p, 1), 0);
        assert_eq!(cuMemcpyDtoDAsync_v2(out, p, 4 * N, s), 0);
        // The free of the graph's own allocation node: a free node of the same graph.
        assert_eq!(cuMemFreeAsync(p, s), 0);
        assert_eq!(end(s), (0, g));
        assert_eq!(types(g), vec![MEM_ALLOC, MEMSET, KERNEL, MEMCPY, MEM_FREE]);
        run(g, s);
        assert_eq!(read(out), vec![3; N]);
        // Freed inside the graph: it runs again.
        assert_eq!(cuMemsetD32_v2(out, 0, N), 0);
        run(g, s);
        assert_eq!(read(out), vec![3; N]);
        assert_eq!(cuGraphDestroy(g), 0);
        assert_eq!(cuStreamDestroy_v2(s), 0);
        assert_eq!(cuMemFree_v2(out), 0);
    }
}

/// `CUDA_CONDITIONAL_NODE_PARAMS`.
#[repr(C)]
#[derive(Clone, Copy)]
struct ConditionalParams {
    handle: u64,
    type_: i32,
    size: u32,
    bodies: *mut CUgraph,
    ctx: CUcontext,
}

fn node_params<T>(kind: i32, value: T) -> GraphNodeParams {
    assert!(std::mem::size_of::<T>() <= 232, "the union is 232 bytes");
    let mut p = GraphNodeParams {
        type_: kind,
        reserved0: [0; 3],
        union: [0; 29],
        reserved2: 0,
    };
    // Safety: `T` fits in the union (checked above), written unaligned.
    unsafe { p.union.as_mut_ptr().cast::<T>().write_unaligned(value) };
    p
}

/// An IF node of graph `g` after `deps` on a handle defaulting to `default`; its body.
fn if_node(
    g: CUgraph,
    ctx: CUcontext,
    deps: &[CUgraphNode],
    default: u32,
) -> (CUgraphNode, CUgraph) {
    // Safety: live locals and handles; the node's parameters as cuda.h lays them out.
    unsafe {
        let mut h = 0u64;
        // CU_GRAPH_COND_ASSIGN_DEFAULT.
        assert_eq!(
            cuGraphConditionalHandleCreate(&mut h, g, ctx, default, 1),
            0
        );
        let mut p = node_params(
            CONDITIONAL,
            ConditionalParams {
                handle: h,
                type_: 0,
                size: 1,
                bodies: std::ptr::null_mut(),
                ctx,
            },
        );
        let mut n: CUgraphNode = std::ptr::null_mut();
        let deps_ptr = if deps.is_empty() {
            std::ptr::null()
        } else {
            deps.as_ptr()
        };
        assert_eq!(
            cuGraphAddNode_v2(
                &mut n,
                g,
                deps_ptr,
                std::ptr::null(),
                deps.len(),
                (&mut p as *mut GraphNodeParams).cast()
            ),
            0
        );
        let back = p
            .union
            .as_ptr()
            .cast::<ConditionalParams>()
            .read_unaligned();
        assert!(!back.bodies.is_null(), "phGraph_out is filled");
        (n, *back.bodies)
    }
}

#[test]
fn a_conditional_body_is_filled_by_capture() {
    let (_g, ctx, f) = setup();
    let s = stream();
    let p = device_words();
    // Safety: live handles.
    unsafe {
        for (default, want) in [(1u32, 5u32), (0, 0)] {
            let mut g: CUgraph = std::ptr::null_mut();
            assert_eq!(cuGraphCreate(&mut g, 0), 0);
            let (_, body) = if_node(g, ctx, &[], default);
            assert_eq!(begin_to_graph(s, body, &[]), 0);
            assert_eq!(launch(f, s, p, 2), 0);
            assert_eq!(cuMemsetD32Async(p + 4, 9, 1, s), 0);
            assert_eq!(launch(f, s, p, 3), 0);
            assert_eq!(end(s), (0, body), "the body comes back");
            assert_eq!(types(body), vec![KERNEL, MEMSET, KERNEL]);
            assert_eq!(cuMemsetD32_v2(p, 0, N), 0);
            run(g, s);
            let got = read(p);
            assert_eq!(got[0], want, "IF with the condition {default}");
            assert_eq!(got[1], if default == 1 { 12 } else { 0 });
            assert_eq!(cuGraphDestroy(g), 0);
        }
        // Memory nodes are not body nodes (cuda.h lists the types a body may hold): as
        // with cuGraphAddMemAllocNode into a body (probe graph_conditional, body-rules),
        // the node is added and the graph holding the body fails to instantiate.
        let mut g: CUgraph = std::ptr::null_mut();
        assert_eq!(cuGraphCreate(&mut g, 0), 0);
        let (_, body) = if_node(g, ctx, &[], 1);
        assert_eq!(begin_to_graph(s, body, &[]), 0);
        let mut q = 0u64;
        assert_eq!(cuMemAllocAsync(&mut q, 4 * N, s), 0);
        assert_eq!(end(s), (0, body));
        assert_eq!(types(body), vec![MEM_ALLOC]);
        let mut e: CUgraphExec = std::ptr::null_mut();
        assert_eq!(
            cuGraphInstantiateWithFlags(&mut e, g, 0),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuGraphDestroy(g), 0);
        assert_eq!(cuStreamDestroy_v2(s), 0);
        assert_eq!(cuMemFree_v2(p), 0);
    }
}

#[test]
fn a_conditional_node_joins_a_capture_in_progress() {
    let (_g, ctx, f) = setup();
    let (s, side) = (stream(), stream());
    let p = device_words();
    // Safety: live locals and handles throughout.
    unsafe {
        assert_eq!(cuStreamBeginCapture_v2(s, 0), 0);
        assert_eq!(launch(f, s, p, 1), 0);
        let (mut status, mut id) = (0, 0u64);
        let mut graph: CUgraph = std::ptr::null_mut();
        let mut deps: *const CUgraphNode = std::ptr::null();
        let mut n = 0usize;
        assert_eq!(
            cuStreamGetCaptureInfo_v3(
                s,
                (&mut status as *mut i32).cast(),
                &mut id,
                &mut graph,
                &mut deps,
                std::ptr::null_mut(),
                &mut n
            ),
            0
        );
        assert_eq!((status, n), (1, 1));
        let deps = std::slice::from_raw_parts(deps, n).to_vec();
        let (cond, body) = if_node(graph, ctx, &deps, 1);
        let mut cond_dep = [cond];
        assert_eq!(
            cuStreamUpdateCaptureDependencies(s, cond_dep.as_mut_ptr(), 1, 1),
            0
        );
        // The body by a second capture, on another stream, while the first goes on.
        assert_eq!(begin_to_graph(side, body, &[]), 0);
        assert_eq!(launch(f, side, p, 10), 0);
        assert_eq!(end(side), (0, body));
        assert_eq!(launch(f, s, p, 100), 0);
        let (r, g) = end(s);
        assert_eq!(r, 0);
        assert_eq!(types(g), vec![KERNEL, CONDITIONAL, KERNEL]);
        assert_eq!(read(p), vec![0; N]);
        run(g, s);
        assert_eq!(read(p), vec![111; N]);
        assert_eq!(cuGraphDestroy(g), 0);
        assert_eq!(cuStreamDestroy_v2(s), 0);
        assert_eq!(cuStreamDestroy_v2(side), 0);
        assert_eq!(cuMemFree_v2(p), 0);
    }
}

/// Any capture may end with phGraph NULL (probe streams, capture-ends, as the H200 does):
/// one into the program's own graph leaves its work there (NVIDIA's conditional-node
/// samples end their body captures so); an ordinary one ends, and its graph, which nobody
/// can name, is dropped with the work never run.
#[test]
fn a_capture_ends_without_phgraph_and_only_the_programs_graph_keeps_its_work() {
    let (_g, _ctx, f) = setup();
    let s = stream();
    let out = device_words();
    // Safety: live locals and handles throughout; NULL phGraph is the case under test.
    unsafe {
        let mut g: CUgraph = std::ptr::null_mut();
        assert_eq!(cuGraphCreate(&mut g, 0), 0);
        assert_eq!(begin_to_graph(s, g, &[]), 0);
        assert_eq!(launch(f, s, out, 4), 0);
        assert_eq!(cuStreamEndCapture(s, std::ptr::null_mut()), 0);
        let mut status = -1;
        assert_eq!(cuStreamIsCapturing(s, (&mut status as *mut i32).cast()), 0);
        assert_eq!(status, 0, "the capture ended");
        assert_eq!(types(g), vec![KERNEL]);
        run(g, s);
        assert_eq!(read(out), vec![4; N]);

        assert_eq!(cuStreamBeginCapture_v2(s, 0), 0);
        assert_eq!(launch(f, s, out, 1), 0);
        assert_eq!(cuStreamEndCapture(s, std::ptr::null_mut()), 0);
        assert_eq!(cuStreamIsCapturing(s, (&mut status as *mut i32).cast()), 0);
        assert_eq!(status, 0, "the capture ended");
        assert_eq!(cuStreamSynchronize(s), 0);
        assert_eq!(read(out), vec![4; N], "captured work never runs");
        // The stream captures afresh.
        assert_eq!(cuStreamBeginCapture_v2(s, 0), 0);
        assert_eq!(launch(f, s, out, 1), 0);
        let (r, captured) = end(s);
        assert_eq!(r, 0);
        assert_eq!(types(captured), vec![KERNEL]);
        run(captured, s);
        assert_eq!(read(out), vec![5; N]);
        assert_eq!(cuGraphDestroy(captured), 0);
        assert_eq!(cuGraphDestroy(g), 0);
        assert_eq!(cuStreamDestroy_v2(s), 0);
        assert_eq!(cuMemFree_v2(out), 0);
    }
}

/// A capture that captured nothing ends with CUDA_SUCCESS and a graph of no node, as the
/// H200 ended one on a created stream (probe api_gaps3, event-record-flags: `record flags 2
/// while capturing` refused, `end capture = CUDA_SUCCESS`, `0 nodes`). The per-thread
/// stream's capture is any stream's: named as CU_STREAM_PER_THREAD, or as NULL to the
/// _ptsz variants, and with the legacy stream asked about its state in between (the
/// question ci/explore/legacy_query_ptsz.c asks the H200).
#[test]
fn an_empty_capture_ends_with_an_empty_graph_on_every_stream() {
    const CU_STREAM_LEGACY: CUstream = 0x1 as CUstream;
    const CU_STREAM_PER_THREAD: CUstream = 0x2 as CUstream;
    let (_g, _ctx, _f) = setup();
    let s = stream();
    // Safety: live locals and handles throughout.
    unsafe {
        let empty_capture = |name: &str, s: CUstream, ptsz: bool, ask_legacy: bool| {
            let mut g: CUgraph = std::ptr::null_mut();
            let begun = if ptsz {
                cuStreamBeginCapture_v2_ptsz(s, 2)
            } else {
                cuStreamBeginCapture_v2(s, 2)
            };
            assert_eq!(begun, 0, "{name}: begin");
            if ask_legacy {
                let mut st = -1;
                cuStreamIsCapturing(CU_STREAM_LEGACY, (&mut st as *mut i32).cast());
            }
            let ended = if ptsz {
                cuStreamEndCapture_ptsz(s, &mut g)
            } else {
                cuStreamEndCapture(s, &mut g)
            };
            assert_eq!(ended, 0, "{name}: end");
            assert!(!g.is_null(), "{name}: a graph");
            let mut n = usize::MAX;
            assert_eq!(cuGraphGetNodes(g, std::ptr::null_mut(), &mut n), 0);
            assert_eq!(n, 0, "{name}: no node");
            assert_eq!(cuGraphDestroy(g), 0);
        };
        for ask_legacy in [false, true] {
            empty_capture("a created stream", s, false, ask_legacy);
            empty_capture(
                "CU_STREAM_PER_THREAD",
                CU_STREAM_PER_THREAD,
                false,
                ask_legacy,
            );
            empty_capture("NULL, _ptsz", std::ptr::null_mut(), true, ask_legacy);
        }
        assert_eq!(cuStreamDestroy_v2(s), 0);
    }
}
