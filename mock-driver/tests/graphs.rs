//! CUDA graphs and stream capture through the C exports: nodes run in their
//! dependencies' order, kernel parameters are copied when a node is added, capture turns
//! work into nodes without running it, calls a capture forbids fail and invalidate it,
//! and streams fork from and join back into a capture through events.

#[path = "common/context.rs"]
mod context;
#[path = "common/graph_kernels.rs"]
mod graph_kernels;
use context::{primary_context, stream};
use cuda::exports::*;
use cumock_abi::*;
use graph_kernels::{launch, nodes, read, KernelParams, MemsetParams, ADD, N};
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// Captures in global mode forbid other threads' unsafe calls: the tests of this file
/// run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A current context and the `add` kernel.
fn setup() -> CUfunction {
    primary_context();
    // Safety: pointers to live locals; a NUL-terminated PTX image.
    unsafe {
        let ptx = std::ffi::CString::new(ADD).unwrap();
        let mut module: CUmodule = std::ptr::null_mut();
        assert_eq!(cuModuleLoadData(&mut module, ptx.as_ptr().cast()), 0);
        let mut f: CUfunction = std::ptr::null_mut();
        assert_eq!(cuModuleGetFunction(&mut f, module, c"add".as_ptr()), 0);
        f
    }
}

/// N words of managed memory, readable by the host while a graph runs.
fn managed() -> u64 {
    let mut p = 0u64;
    // Safety: a live local; CU_MEM_ATTACH_GLOBAL.
    assert_eq!(unsafe { cuMemAllocManaged(&mut p, 4 * N, 1) }, 0);
    assert_eq!(unsafe { cuMemsetD32_v2(p, 0, N) }, 0);
    p
}

/// `CUDA_HOST_NODE_PARAMS`.
#[repr(C)]
struct HostParams {
    f: CUhostFn,
    data: *mut c_void,
}

/// What the host node saw of the buffer: its first and last word, per run.
static SEEN: Mutex<Vec<(u32, u32)>> = Mutex::new(Vec::new());
static HOST_CALLS: AtomicU32 = AtomicU32::new(0);

unsafe extern "C" fn look(data: *mut c_void) {
    // Safety: `data` is the managed buffer of N words the test gave.
    let words = unsafe { std::slice::from_raw_parts(data as *const u32, N) };
    SEEN.lock().unwrap().push((words[0], words[N - 1]));
}

unsafe extern "C" fn count(_: *mut c_void) {
    HOST_CALLS.fetch_add(1, Ordering::SeqCst);
}

fn node_type(n: CUgraphNode) -> i32 {
    let mut t = -1;
    // Safety: a live local.
    assert_eq!(
        unsafe { cuGraphNodeGetType(n, (&mut t as *mut i32).cast()) },
        0
    );
    t
}

fn edges(g: CUgraph) -> Vec<(CUgraphNode, CUgraphNode)> {
    let mut n = 0usize;
    // Safety: live locals.
    unsafe {
        assert_eq!(
            cuGraphGetEdges(g, std::ptr::null_mut(), std::ptr::null_mut(), &mut n),
            0
        );
        let (mut a, mut b) = (vec![std::ptr::null_mut(); n], vec![std::ptr::null_mut(); n]);
        assert_eq!(
            cuGraphGetEdges(g, a.as_mut_ptr(), b.as_mut_ptr(), &mut n),
            0
        );
        a.into_iter().zip(b).collect()
    }
}

fn capture_status(s: CUstream) -> i32 {
    let mut st = -1;
    // Safety: a live local.
    assert_eq!(
        unsafe { cuStreamIsCapturing(s, (&mut st as *mut i32).cast()) },
        0
    );
    st
}

#[test]
fn explicit_graph_runs_nodes_in_dependency_order_with_params_copied_at_add_time() {
    let _one = serial();
    let f = setup();
    let p = managed();
    let s = stream(1);
    SEEN.lock().unwrap().clear();
    // Safety: live locals and the program's own structs, as cuda.h lays them out.
    unsafe {
        let mut g: CUgraph = std::ptr::null_mut();
        assert_eq!(cuGraphCreate(&mut g, 0), 0);
        // Added in the reverse of the order they must run in; the edges come after.
        let mut host: CUgraphNode = std::ptr::null_mut();
        let hp = HostParams {
            f: Some(look),
            data: p as *mut c_void,
        };
        assert_eq!(
            cuGraphAddHostNode(
                &mut host,
                g,
                std::ptr::null(),
                0,
                (&hp as *const HostParams).cast()
            ),
            0
        );
        let (mut pp, mut n, mut v) = (p, N as u32, 7u32);
        let mut args = [
            (&mut pp as *mut u64).cast::<c_void>(),
            (&mut n as *mut u32).cast(),
            (&mut v as *mut u32).cast(),
        ];
        let kp = KernelParams {
            func: f,
            grid: [2, 1, 1],
            block: [32, 1, 1],
            shared: 0,
            kernel_params: args.as_mut_ptr(),
            extra: std::ptr::null_mut(),
        };
        let mut kernel: CUgraphNode = std::ptr::null_mut();
        assert_eq!(
            cuGraphAddKernelNode(
                &mut kernel,
                g,
                std::ptr::null(),
                0,
                (&kp as *const KernelParams).cast()
            ),
            0
        );
        // The driver copied the parameters: changing the caller's value changes nothing.
        v = 1000;
        let _ = v;
        let mp = MemsetParams {
            dst: p,
            pitch: 0,
            value: 5,
            element_size: 4,
            width: N,
            height: 1,
        };
        let mut memset: CUgraphNode = std::ptr::null_mut();
        assert_eq!(
            cuGraphAddMemsetNode(
                &mut memset,
                g,
                std::ptr::null(),
                0,
                (&mp as *const MemsetParams).cast(),
                std::ptr::null_mut()
            ),
            0
        );
        let from = [memset, kernel];
        let to = [kernel, host];
        assert_eq!(cuGraphAddDependencies(g, from.as_ptr(), to.as_ptr(), 2), 0);
        // The same edge twice is refused.
        assert_eq!(cuGraphAddDependencies(g, from.as_ptr(), to.as_ptr(), 1), 1);

        assert_eq!(nodes(g), vec![host, kernel, memset]);
        assert_eq!(
            nodes(g).into_iter().map(node_type).collect::<Vec<_>>(),
            vec![3, 0, 2]
        );
        let mut roots = [std::ptr::null_mut(); 4];
        let mut nroots = 4usize;
        assert_eq!(cuGraphGetRootNodes(g, roots.as_mut_ptr(), &mut nroots), 0);
        assert_eq!((nroots, roots[0]), (1, memset));
        assert_eq!(edges(g), vec![(kernel, host), (memset, kernel)]);

        // GetParams shows the copy taken at add time.
        let mut got: KernelParams = std::mem::zeroed();
        assert_eq!(
            cuGraphKernelNodeGetParams(kernel, (&mut got as *mut KernelParams).cast()),
            0
        );
        assert_eq!((got.func, got.grid, got.block), (f, [2, 1, 1], [32, 1, 1]));
        assert_eq!(*(*got.kernel_params.add(2) as *const u32), 7);

        let mut exec: CUgraphExec = std::ptr::null_mut();
        assert_eq!(cuGraphInstantiateWithFlags(&mut exec, g, 0), 0);
        for _ in 0..3 {
            assert_eq!(cuGraphLaunch(exec, s), 0);
        }
        assert_eq!(cuStreamSynchronize(s), 0);
        // The host node ran after the kernel, which ran after the memset, every time.
        assert_eq!(*SEEN.lock().unwrap(), vec![(12, 12); 3]);
        assert_eq!(read(p), vec![12; N]);

        // The executable graph's own kernel parameters.
        let mut one = 1u32;
        args[2] = (&mut one as *mut u32).cast();
        let kp1 = KernelParams {
            kernel_params: args.as_mut_ptr(),
            ..kp
        };
        assert_eq!(
            cuGraphExecKernelNodeSetParams(exec, kernel, (&kp1 as *const KernelParams).cast()),
            0
        );
        assert_eq!(cuGraphLaunch(exec, s), 0);
        assert_eq!(cuStreamSynchronize(s), 0);
        assert_eq!(SEEN.lock().unwrap().last(), Some(&(6, 6)));

        // cuGraphExecUpdate from a clone whose kernel adds 2: same topology, success.
        let mut clone: CUgraph = std::ptr::null_mut();
        assert_eq!(cuGraphClone(&mut clone, g), 0);
        let cloned = nodes(clone);
        assert_eq!(cloned.len(), 3);
        let mut two = 2u32;
        args[2] = (&mut two as *mut u32).cast();
        let kp2 = KernelParams {
            kernel_params: args.as_mut_ptr(),
            ..kp
        };
        assert_eq!(
            cuGraphKernelNodeSetParams(cloned[1], (&kp2 as *const KernelParams).cast()),
            0
        );
        let mut info = [0u64; 3];
        assert_eq!(
            cuGraphExecUpdate_v2(exec, clone, info.as_mut_ptr().cast()),
            0
        );
        assert_eq!(info[0] as u32, 0);
        assert_eq!(cuGraphLaunch(exec, s), 0);
        assert_eq!(cuStreamSynchronize(s), 0);
        assert_eq!(SEEN.lock().unwrap().last(), Some(&(7, 7)));

        // Another topology: the update fails, and says why.
        let mut extra: CUgraphNode = std::ptr::null_mut();
        assert_eq!(
            cuGraphAddEmptyNode(&mut extra, clone, std::ptr::null(), 0),
            0
        );
        assert_eq!(
            cuGraphExecUpdate_v2(exec, clone, info.as_mut_ptr().cast()),
            910
        );
        assert_eq!(
            info[0] as u32, 2,
            "CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED"
        );

        let path = std::env::temp_dir().join(format!("cumock-graph-{}.dot", std::process::id()));
        let cpath = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        let dot_with = |flags: u32| {
            assert_eq!(cuGraphDebugDotPrint(g, cpath.as_ptr(), flags), 0);
            let dot = std::fs::read_to_string(&path).unwrap();
            let _ = std::fs::remove_file(&path);
            dot
        };
        let dot = dot_with(0);
        assert!(
            dot.contains("KERNEL add") && dot.contains("MEMSET") && dot.contains("HOST"),
            "{dot}"
        );
        assert_eq!(dot.matches("->").count(), 2, "{dot}");
        // Parameters only where a flag asks for them: the kernel's with
        // CU_GRAPH_DEBUG_DOT_FLAGS_KERNEL_NODE_PARAMS, every node's with VERBOSE.
        assert!(!dot.contains("grid") && !dot.contains("elements"), "{dot}");
        let kernel = dot_with(1 << 2);
        assert!(
            kernel.contains("grid") && !kernel.contains("elements"),
            "{kernel}"
        );
        let verbose = dot_with(1);
        assert!(
            verbose.contains("grid") && verbose.contains("elements"),
            "{verbose}"
        );
        assert!(
            verbose.contains("edge 1") && !dot.contains("edge 0"),
            "{verbose}"
        );
        // The runtime's type names, and handles.
        let runtime = dot_with(1 << 1);
        assert!(runtime.contains("cudaGraphNodeTypeKernel add"), "{runtime}");
        let handles = dot_with(1 << 10);
        assert!(
            handles.contains(&format!("node {:#x}", nodes(g)[0] as u64)),
            "{handles}"
        );

        assert_eq!(cuGraphExecDestroy(exec), 0);
        assert_eq!(cuGraphLaunch(exec, s), CUDA_ERROR_INVALID_HANDLE_CODE);
        assert_eq!(cuGraphDestroy(clone), 0);
        assert_eq!(cuGraphDestroy(g), 0);
        assert_eq!(cuGraphDestroy(g), CUDA_ERROR_INVALID_HANDLE_CODE);
        // Not emulated, and says which.
        let g2 = {
            let mut g2 = std::ptr::null_mut();
            assert_eq!(cuGraphCreate(&mut g2, 0), 0);
            g2
        };
        assert_eq!(
            cuGraphAddExternalSemaphoresSignalNode(
                &mut extra,
                g2,
                std::ptr::null(),
                0,
                std::ptr::null()
            ),
            cumock_abi::result::CUDA_ERROR_NOT_SUPPORTED
        );
        assert_eq!(cuGraphDestroy(g2), 0);
        cuStreamDestroy_v2(s);
    }
}

const CUDA_ERROR_INVALID_HANDLE_CODE: CUresult = 400;

#[test]
fn capture_turns_work_into_nodes_without_running_it() {
    let _one = serial();
    let f = setup();
    let p = managed();
    let s = stream(1);
    HOST_CALLS.store(0, Ordering::SeqCst);
    // Safety: live locals.
    unsafe {
        assert_eq!(capture_status(s), 0, "CU_STREAM_CAPTURE_STATUS_NONE");
        assert_eq!(cuStreamBeginCapture_v2(s, 0), 0);
        assert_eq!(capture_status(s), 1, "CU_STREAM_CAPTURE_STATUS_ACTIVE");
        let (mut status, mut id, mut graph) = (0i32, 0u64, std::ptr::null_mut());
        let (mut deps, mut ndeps) = (std::ptr::null::<CUgraphNode>(), 99usize);
        assert_eq!(
            cuStreamGetCaptureInfo_v2(
                s,
                (&mut status as *mut i32).cast(),
                &mut id,
                &mut graph,
                &mut deps,
                &mut ndeps
            ),
            0
        );
        assert!(status == 1 && id != 0 && !graph.is_null() && ndeps == 0);
        assert_eq!(cuMemsetD32Async(p, 5, N, s), 0);
        assert_eq!(launch(f, s, p, 3), 0);
        assert_eq!(cuLaunchHostFunc(s, Some(count), std::ptr::null_mut()), 0);
        assert_eq!(
            cuStreamGetCaptureInfo_v2(
                s,
                (&mut status as *mut i32).cast(),
                &mut id,
                &mut graph,
                &mut deps,
                &mut ndeps
            ),
            0
        );
        assert_eq!(ndeps, 1);
        let last = *deps;
        let mut g: CUgraph = std::ptr::null_mut();
        assert_eq!(cuStreamEndCapture(s, &mut g), 0);
        assert_eq!(g, graph);
        assert_eq!(capture_status(s), 0);
        // Nothing ran.
        assert_eq!(cuStreamSynchronize(s), 0);
        assert_eq!(read(p), vec![0; N]);
        assert_eq!(HOST_CALLS.load(Ordering::SeqCst), 0);

        let ns = nodes(g);
        assert_eq!(
            ns.iter().map(|n| node_type(*n)).collect::<Vec<_>>(),
            vec![2, 0, 3]
        );
        assert_eq!(ns[2], last);
        assert_eq!(edges(g), vec![(ns[0], ns[1]), (ns[1], ns[2])]);
        let mut exec: CUgraphExec = std::ptr::null_mut();
        // The CUDA 10 symbol, as a program built against those headers calls it.
        assert_eq!(
            cuGraphInstantiate(&mut exec, g, std::ptr::null_mut(), std::ptr::null_mut(), 0),
            0
        );
        assert_eq!(cuGraphLaunch(exec, s), 0);
        assert_eq!(cuGraphLaunch(exec, s), 0);
        assert_eq!(cuStreamSynchronize(s), 0);
        assert_eq!(read(p), vec![8; N]);
        assert_eq!(HOST_CALLS.load(Ordering::SeqCst), 2);
        cuGraphExecDestroy(exec);
        cuGraphDestroy(g);
        cuStreamDestroy_v2(s);
    }
}

#[test]
fn capture_to_graph_adds_the_work_to_the_programs_graph_after_the_nodes_given() {
    let _one = serial();
    let f = setup();
    let p = managed();
    let s = stream(1);
    // Safety: live locals.
    unsafe {
        // The program's graph: a memset of 2 and an empty node, neither depending on the
        // other.
        let mut g: CUgraph = std::ptr::null_mut();
        assert_eq!(cuGraphCreate(&mut g, 0), 0);
        let fill = MemsetParams {
            dst: p,
            pitch: 0,
            value: 2,
            element_size: 4,
            width: N,
            height: 1,
        };
        let (mut set, mut empty): (CUgraphNode, CUgraphNode) =
            (std::ptr::null_mut(), std::ptr::null_mut());
        let ctx = {
            let mut c: CUcontext = std::ptr::null_mut();
            assert_eq!(cuCtxGetCurrent(&mut c), 0);
            c
        };
        assert_eq!(
            cuGraphAddMemsetNode(
                &mut set,
                g,
                std::ptr::null(),
                0,
                (&fill as *const MemsetParams).cast(),
                ctx
            ),
            0
        );
        assert_eq!(cuGraphAddEmptyNode(&mut empty, g, std::ptr::null(), 0), 0);

        // A dependency of another graph, and edge data, are refused before any capture.
        let mut other: CUgraph = std::ptr::null_mut();
        assert_eq!(cuGraphCreate(&mut other, 0), 0);
        let mut stranger: CUgraphNode = std::ptr::null_mut();
        assert_eq!(
            cuGraphAddEmptyNode(&mut stranger, other, std::ptr::null(), 0),
            0
        );
        let null_data = std::ptr::null::<CUgraphEdgeData>();
        assert_eq!(
            cuStreamBeginCaptureToGraph(s, g, &stranger, null_data, 1, 0),
            cumock_abi::result::CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(capture_status(s), 0);
        assert_eq!(
            cuStreamBeginCaptureToGraph(s, std::ptr::null_mut(), &set, null_data, 1, 0),
            cumock_abi::result::CUDA_ERROR_INVALID_VALUE
        );

        // Captured after the memset: the kernel adds 3, a host function follows.
        HOST_CALLS.store(0, Ordering::SeqCst);
        assert_eq!(cuStreamBeginCaptureToGraph(s, g, &set, null_data, 1, 0), 0);
        assert_eq!(capture_status(s), 1);
        assert_eq!(
            cuGraphDestroy(g),
            cumock_abi::result::CUDA_ERROR_ILLEGAL_STATE,
            "the graph is being built (the H200's answer)"
        );
        assert_eq!(launch(f, s, p, 3), 0);
        assert_eq!(cuLaunchHostFunc(s, Some(count), std::ptr::null_mut()), 0);
        let mut got: CUgraph = std::ptr::null_mut();
        // The empty node, no dependent of the capture's, is not work left unjoined.
        assert_eq!(cuStreamEndCapture(s, &mut got), 0);
        assert_eq!(got, g, "the program's own graph comes back");
        assert_eq!(read(p), vec![0; N], "nothing ran");
        let ns = nodes(g);
        assert_eq!(ns.len(), 4);
        assert_eq!(
            ns.iter().map(|n| node_type(*n)).collect::<Vec<_>>(),
            vec![2, 5, 0, 3]
        );
        assert_eq!(edges(g), vec![(set, ns[2]), (ns[2], ns[3])]);
        let mut exec: CUgraphExec = std::ptr::null_mut();
        assert_eq!(cuGraphInstantiateWithFlags(&mut exec, g, 0), 0);
        assert_eq!(cuGraphLaunch(exec, s), 0);
        assert_eq!(cuStreamSynchronize(s), 0);
        assert_eq!(read(p), vec![5; N]);
        assert_eq!(HOST_CALLS.load(Ordering::SeqCst), 1);

        // Captured memsets and copies keep their parameters (cuGraph*NodeGetParams).
        let mut cap: CUgraph = std::ptr::null_mut();
        assert_eq!(cuStreamBeginCapture_v2(s, 0), 0);
        assert_eq!(cuMemsetD16Async(p, 0x1234, 6, s), 0);
        assert_eq!(cuMemcpyDtoDAsync_v2(p + 64, p, 12, s), 0);
        assert_eq!(cuStreamEndCapture(s, &mut cap), 0);
        let cn = nodes(cap);
        let mut m = MemsetParams {
            dst: 0,
            pitch: 9,
            value: 0,
            element_size: 0,
            width: 0,
            height: 0,
        };
        assert_eq!(
            cuGraphMemsetNodeGetParams(cn[0], (&mut m as *mut MemsetParams).cast()),
            0
        );
        assert_eq!(
            (m.dst, m.value, m.element_size, m.width, m.height),
            (p, 0x1234, 2, 6, 1)
        );
        let mut c: CUDA_MEMCPY3D = std::mem::zeroed();
        assert_eq!(
            cuGraphMemcpyNodeGetParams(cn[1], (&mut c as *mut CUDA_MEMCPY3D).cast()),
            0
        );
        assert_eq!(
            (
                c.src_memory_type,
                c.src_device,
                c.dst_memory_type,
                c.dst_device
            ),
            (2, p, 2, p + 64)
        );
        assert_eq!((c.width_in_bytes, c.height, c.depth), (12, 1, 1));

        cuGraphExecDestroy(exec);
        cuGraphDestroy(cap);
        cuGraphDestroy(other);
        assert_eq!(cuGraphDestroy(g), 0);
        cuStreamDestroy_v2(s);
    }
}

#[test]
fn calls_a_capture_forbids_fail_and_invalidate_it() {
    let _one = serial();
    let f = setup();
    let p = managed();
    let s = stream(1);
    let word = 1u32;
    // Safety: live locals.
    unsafe {
        // A synchronous copy under global mode.
        assert_eq!(cuStreamBeginCapture_v2(s, 0), 0);
        assert_eq!(launch(f, s, p, 1), 0);
        assert_eq!(cuMemcpyHtoD_v2(p, (&word as *const u32).cast(), 4), 900);
        assert_eq!(capture_status(s), 2, "CU_STREAM_CAPTURE_STATUS_INVALIDATED");
        assert_eq!(launch(f, s, p, 1), 901);
        let mut g: CUgraph = 1 as CUgraph;
        assert_eq!(cuStreamEndCapture(s, &mut g), 901);
        assert!(g.is_null());
        assert_eq!(capture_status(s), 0);

        // Synchronising the capturing stream.
        assert_eq!(cuStreamBeginCapture_v2(s, 1), 0);
        assert_eq!(cuStreamSynchronize(s), 900);
        assert_eq!(cuStreamEndCapture(s, &mut g), 901);

        // cuCtxSynchronize under global mode; permitted to a thread in relaxed mode.
        assert_eq!(cuStreamBeginCapture_v2(s, 0), 0);
        let mut mode = 2i32;
        assert_eq!(
            cuThreadExchangeStreamCaptureMode((&mut mode as *mut i32).cast()),
            0
        );
        assert_eq!(mode, 0, "the thread's mode was GLOBAL");
        assert_eq!(cuMemcpyHtoD_v2(p, (&word as *const u32).cast(), 4), 0);
        assert_eq!(
            cuThreadExchangeStreamCaptureMode((&mut mode as *mut i32).cast()),
            0
        );
        assert_eq!(cuCtxSynchronize(), 900);
        assert_eq!(cuStreamEndCapture(s, &mut g), 901);

        // A relaxed capture forbids nothing; the legacy stream cannot be captured.
        assert_eq!(cuStreamBeginCapture_v2(s, 2), 0);
        assert_eq!(cuMemcpyHtoD_v2(p, (&word as *const u32).cast(), 4), 0);
        assert_eq!(cuStreamEndCapture(s, &mut g), 0);
        assert!(!g.is_null());
        cuGraphDestroy(g);
        assert_eq!(cuStreamBeginCapture_v2(std::ptr::null_mut(), 0), 900);
        assert_eq!(cuStreamEndCapture(s, &mut g), 401, "not capturing");
        assert_eq!(cuStreamBeginCapture_v2(s, 7), 1);
        cuStreamDestroy_v2(s);
    }
}

#[test]
fn streams_fork_from_and_join_a_capture_through_events() {
    let _one = serial();
    let f = setup();
    let (a, b) = (managed(), managed());
    let (s1, s2) = (stream(1), stream(1));
    // Safety: live locals.
    unsafe {
        let (mut fork, mut join) = (std::ptr::null_mut(), std::ptr::null_mut());
        assert_eq!(cuEventCreate(&mut fork, 2), 0);
        assert_eq!(cuEventCreate(&mut join, 2), 0);
        assert_eq!(cuStreamBeginCapture_v2(s1, 0), 0);
        assert_eq!(launch(f, s1, a, 1), 0);
        assert_eq!(cuEventRecord(fork, s1), 0);
        assert_eq!(cuStreamWaitEvent(s2, fork, 0), 0);
        assert_eq!(capture_status(s2), 1, "s2 joined the capture");
        assert_eq!(launch(f, s2, b, 10), 0);
        assert_eq!(cuEventRecord(join, s2), 0);
        assert_eq!(launch(f, s1, a, 100), 0);
        assert_eq!(cuStreamWaitEvent(s1, join, 0), 0);
        assert_eq!(launch(f, s1, a, 1000), 0);
        let mut g: CUgraph = std::ptr::null_mut();
        assert_eq!(cuStreamEndCapture(s1, &mut g), 0);
        assert_eq!(capture_status(s2), 0, "s2 left the capture with it");
        let ns = nodes(g);
        assert_eq!(ns.len(), 4);
        // By the source node's addition (the H200's order: graph_rules.rs).
        assert_eq!(
            edges(g),
            vec![
                (ns[0], ns[1]),
                (ns[0], ns[2]),
                (ns[1], ns[3]),
                (ns[2], ns[3])
            ]
        );
        let mut exec: CUgraphExec = std::ptr::null_mut();
        assert_eq!(cuGraphInstantiateWithFlags(&mut exec, g, 0), 0);
        assert_eq!(cuGraphLaunch(exec, s1), 0);
        assert_eq!(cuStreamSynchronize(s1), 0);
        assert_eq!(read(a), vec![1101; N]);
        assert_eq!(read(b), vec![10; N]);
        cuGraphExecDestroy(exec);
        cuGraphDestroy(g);

        // A fork never joined back: CUDA_ERROR_STREAM_CAPTURE_UNJOINED.
        assert_eq!(cuStreamBeginCapture_v2(s1, 0), 0);
        assert_eq!(cuEventRecord(fork, s1), 0);
        assert_eq!(cuStreamWaitEvent(s2, fork, 0), 0);
        assert_eq!(launch(f, s2, b, 10), 0);
        assert_eq!(launch(f, s1, a, 1), 0);
        assert_eq!(cuStreamEndCapture(s1, &mut g), 904);
        assert!(g.is_null());
        assert_eq!(capture_status(s2), 0);
        cuStreamDestroy_v2(s1);
        cuStreamDestroy_v2(s2);
    }
}

/// A stream that joined a capture may be destroyed before the capture ends: its work
/// stays in the graph (NVIDIA's graphMemoryNodes sample destroys its joined second stream
/// so, and runs on the GPU); work it left unjoined still fails the end. The stream that
/// began the capture takes the capture with it.
#[test]
fn a_joined_stream_destroyed_mid_capture_leaves_its_work_in_the_graph() {
    let _one = serial();
    let f = setup();
    let (a, b) = (managed(), managed());
    // Safety: live locals.
    unsafe {
        let (mut fork, mut join) = (std::ptr::null_mut(), std::ptr::null_mut());
        assert_eq!(cuEventCreate(&mut fork, 2), 0);
        assert_eq!(cuEventCreate(&mut join, 2), 0);
        let (s1, s2) = (stream(1), stream(1));
        assert_eq!(cuStreamBeginCapture_v2(s1, 0), 0);
        assert_eq!(cuEventRecord(fork, s1), 0);
        assert_eq!(cuStreamWaitEvent(s2, fork, 0), 0);
        assert_eq!(launch(f, s2, b, 10), 0);
        assert_eq!(cuEventRecord(join, s2), 0);
        assert_eq!(cuStreamWaitEvent(s1, join, 0), 0);
        assert_eq!(cuStreamDestroy_v2(s2), 0);
        assert_eq!(capture_status(s1), 1, "the capture goes on");
        assert_eq!(launch(f, s1, a, 1), 0);
        let mut g: CUgraph = std::ptr::null_mut();
        assert_eq!(cuStreamEndCapture(s1, &mut g), 0);
        assert_eq!(nodes(g).len(), 2);
        let mut exec: CUgraphExec = std::ptr::null_mut();
        assert_eq!(cuGraphInstantiateWithFlags(&mut exec, g, 0), 0);
        assert_eq!(cuGraphLaunch(exec, s1), 0);
        assert_eq!(cuStreamSynchronize(s1), 0);
        assert_eq!((read(a), read(b)), (vec![1; N], vec![10; N]));
        cuGraphExecDestroy(exec);
        cuGraphDestroy(g);

        // Destroyed with its work unjoined: the end finds it.
        let s2 = stream(1);
        assert_eq!(cuStreamBeginCapture_v2(s1, 0), 0);
        assert_eq!(cuEventRecord(fork, s1), 0);
        assert_eq!(cuStreamWaitEvent(s2, fork, 0), 0);
        assert_eq!(launch(f, s2, b, 10), 0);
        assert_eq!(cuStreamDestroy_v2(s2), 0);
        assert_eq!(launch(f, s1, a, 1), 0);
        // CUDA_ERROR_STREAM_CAPTURE_UNJOINED.
        assert_eq!(cuStreamEndCapture(s1, &mut g), 904);

        // The origin destroyed: the capture is gone with it, and no longer refuses the
        // calls a global-mode capture refuses.
        let s3 = stream(1);
        assert_eq!(cuStreamBeginCapture_v2(s3, 0), 0);
        assert_eq!(cuEventRecord(fork, s3), 0);
        let s4 = stream(1);
        assert_eq!(cuStreamWaitEvent(s4, fork, 0), 0);
        assert_eq!(capture_status(s4), 1);
        assert_eq!(cuStreamDestroy_v2(s3), 0);
        assert_eq!(capture_status(s4), 0, "s4 left the capture with it");
        assert_eq!(cuMemsetD32_v2(a, 0, N), 0);
        cuStreamDestroy_v2(s1);
        cuStreamDestroy_v2(s4);
    }
}

/// `CUDA_MEM_ALLOC_NODE_PARAMS`.
#[repr(C)]
struct AllocNodeParams {
    pool_props: CUmemPoolProps,
    access_descs: *const CUmemAccessDesc,
    access_desc_count: usize,
    bytesize: usize,
    dptr: u64,
}

/// Let go by the test: a host function on a stream waits for it, so that the stream's
/// later work stays queued meanwhile.
static GATE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

unsafe extern "C" fn wait_for_gate(_: *mut c_void) {
    while !GATE.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
}

/// alloc 1 MiB -> add 1 to its first N words -> free, instantiated.
fn alloc_add_free(f: CUfunction) -> CUgraphExec {
    // Safety: live locals and the program's own structs, as cuda.h lays them out.
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
            bytesize: 1 << 20,
            dptr: 0,
        };
        let mut alloc: CUgraphNode = std::ptr::null_mut();
        let params = (&mut ap as *mut AllocNodeParams).cast();
        assert_eq!(
            cuGraphAddMemAllocNode(&mut alloc, g, std::ptr::null(), 0, params),
            0
        );
        let (mut p, mut n, mut v) = (ap.dptr, N as u32, 1u32);
        let mut args = [
            (&mut p as *mut u64).cast::<c_void>(),
            (&mut n as *mut u32).cast(),
            (&mut v as *mut u32).cast(),
        ];
        let kp = KernelParams {
            func: f,
            grid: [2, 1, 1],
            block: [32, 1, 1],
            shared: 0,
            kernel_params: args.as_mut_ptr(),
            extra: std::ptr::null_mut(),
        };
        let mut kernel: CUgraphNode = std::ptr::null_mut();
        let kp = (&kp as *const KernelParams).cast();
        assert_eq!(cuGraphAddKernelNode(&mut kernel, g, &alloc, 1, kp), 0);
        let mut free: CUgraphNode = std::ptr::null_mut();
        assert_eq!(cuGraphAddMemFreeNode(&mut free, g, &kernel, 1, ap.dptr), 0);
        let mut e: CUgraphExec = std::ptr::null_mut();
        assert_eq!(cuGraphInstantiateWithFlags(&mut e, g, 0), 0);
        e
    }
}

fn graph_mem_reserved() -> u64 {
    let mut v = 0u64;
    // Safety: a live cuuint64_t; CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT.
    let r = unsafe { cuDeviceGetGraphMemAttribute(0, 2, (&mut v as *mut u64).cast()) };
    assert_eq!(r, 0);
    v
}

/// Two graphs whose allocations are freed inside them share one chunk of physical memory
/// when they run one after the other on a stream (as the H200 does: probe graph_memory,
/// two-graphs), and take one each when they may run at the same time on two streams,
/// where sharing would let one graph's kernels write the other's memory.
#[test]
fn graph_memory_is_shared_only_with_work_ordered_before_it() {
    let _one = serial();
    let f = setup();
    let (e1, e2) = (alloc_add_free(f), alloc_add_free(f));
    let (s1, s2) = (stream(1), stream(1));
    // Safety: live handles; a host function that only reads a static.
    unsafe {
        for (second, want) in [(s2, 64u64 << 20), (s1, 32 << 20)] {
            assert_eq!(cuDeviceGraphMemTrim(0), 0);
            assert_eq!(graph_mem_reserved(), 0);
            GATE.store(false, Ordering::SeqCst);
            assert_eq!(
                cuLaunchHostFunc(s1, Some(wait_for_gate), std::ptr::null_mut()),
                0
            );
            assert_eq!(cuGraphLaunch(e1, s1), 0);
            assert_eq!(cuGraphLaunch(e2, second), 0);
            assert_eq!(graph_mem_reserved(), want, "second graph on {second:?}");
            GATE.store(true, Ordering::SeqCst);
            assert_eq!(cuCtxSynchronize(), 0);
        }
        assert_eq!(cuGraphExecDestroy(e1), 0);
        assert_eq!(cuGraphExecDestroy(e2), 0);
        assert_eq!(cuDeviceGraphMemTrim(0), 0);
    }
}

/// An allocation node after the free of another takes its address again, as the
/// programming guide says CUDA reuses virtual addresses within a graph when the free is
/// ordered before the allocation (cuda-samples graphMemoryFootprint prints whether it
/// did); one not ordered after the free gets an address of its own. Each node at the
/// address has one free node; removing a dependency from such a graph is refused.
#[test]
fn an_allocation_after_a_free_in_its_graph_reuses_the_freed_address() {
    let _one = serial();
    setup();
    // Safety: live locals and the program's own structs, as cuda.h lays them out.
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
            bytesize: 1 << 20,
            dptr: 0,
        };
        let params = (&mut ap as *mut AllocNodeParams).cast();
        let node = |deps: &[CUgraphNode]| {
            let mut n: CUgraphNode = std::ptr::null_mut();
            let r = cuGraphAddMemAllocNode(&mut n, g, deps.as_ptr(), deps.len(), params);
            assert_eq!(r, 0);
            (n, (*params.cast::<AllocNodeParams>()).dptr)
        };
        let free = |deps: &[CUgraphNode], p: u64| {
            let mut n: CUgraphNode = std::ptr::null_mut();
            (
                cuGraphAddMemFreeNode(&mut n, g, deps.as_ptr(), deps.len(), p),
                n,
            )
        };
        let (a, pa) = node(&[]);
        let (r, free_a) = free(&[a], pa);
        assert_eq!(r, 0);
        let (b, pb) = node(&[free_a]);
        assert_eq!(pb, pa, "ordered after the free: the same address");
        let (_c, pc) = node(&[a]);
        assert_ne!(pc, pa, "not ordered after the free: an address of its own");
        let (r, free_b) = free(&[b], pb);
        assert_eq!(r, 0, "the second node at the address has a free of its own");
        assert_eq!(
            free(&[free_b], pb).0,
            1,
            "a third free: CUDA_ERROR_INVALID_VALUE"
        );
        let (_d, pd) = node(&[free_b]);
        assert_eq!(pd, pa, "after both frees: the same address again");
        assert_eq!(cuGraphRemoveDependencies(g, &a, &free_a, 1), 801);
        let mut e: CUgraphExec = std::ptr::null_mut();
        assert_eq!(
            cuGraphInstantiateWithFlags(&mut e, g, 1),
            0,
            "auto-free on launch: c and d stay live"
        );
        let s = stream(1);
        assert_eq!(cuDeviceGraphMemTrim(0), 0);
        assert_eq!(cuGraphLaunch(e, s), 0);
        assert_eq!(cuStreamSynchronize(s), 0);
        assert_eq!(
            graph_mem_reserved(),
            32 << 20,
            "one chunk behind the region"
        );
        assert_eq!(cuGraphExecDestroy(e), 0);
        assert_eq!(cuGraphDestroy(g), 0);
        assert_eq!(cuMemFree_v2(pc), 0);
        assert_eq!(cuMemFree_v2(pd), 0);
        cuStreamDestroy_v2(s);
        assert_eq!(cuDeviceGraphMemTrim(0), 0);
    }
}

/// A `CUgraphNodeParams` of node type `kind` whose union holds `value`.
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

/// `CUDA_MEMCPY3D` of `n` bytes from device memory to host memory.
fn device_to_host(dst: *mut c_void, src: u64, n: usize) -> CUDA_MEMCPY3D {
    // Safety: CUDA_MEMCPY3D is plain data; all-zero is its "unused" value.
    let mut c: CUDA_MEMCPY3D = unsafe { std::mem::zeroed() };
    c.src_memory_type = 2;
    c.src_device = src;
    c.dst_memory_type = 1;
    c.dst_host = dst;
    c.width_in_bytes = n;
    c.height = 1;
    c.depth = 1;
    c
}

#[test]
fn cu_graph_add_node_and_the_generic_setters_build_and_change_work_nodes() {
    let _one = serial();
    let f = setup();
    let s = stream(1);
    HOST_CALLS.store(0, Ordering::SeqCst);
    let mut dev = 0u64;
    // Safety: live locals and the program's own structs, as cuda.h lays them out.
    unsafe {
        assert_eq!(cuMemAlloc_v2(&mut dev, 4 * N), 0);
        let mut host = vec![0u32; N];
        let (mut pp, mut n, mut v) = (dev, N as u32, 7u32);
        let mut args = [
            (&mut pp as *mut u64).cast::<c_void>(),
            (&mut n as *mut u32).cast(),
            (&mut v as *mut u32).cast(),
        ];
        let kernel = |args: &mut [*mut c_void; 3]| GraphKernelParams {
            func: f,
            grid: [2, 1, 1],
            block: [32, 1, 1],
            shared: 0,
            kernel_params: args.as_mut_ptr(),
            extra: std::ptr::null_mut(),
            kern: std::ptr::null_mut(),
            ctx: std::ptr::null_mut(),
        };
        let memset = |value: u32| GraphMemsetParams {
            dst: dev,
            pitch: 0,
            value,
            element_size: 4,
            width: N,
            height: 1,
            ctx: std::ptr::null_mut(),
        };
        let copy = GraphMemcpyParams {
            flags: 0,
            reserved: 0,
            copy_ctx: std::ptr::null_mut(),
            copy_params: device_to_host(host.as_mut_ptr().cast(), dev, 4 * N),
        };
        let mut g: CUgraph = std::ptr::null_mut();
        assert_eq!(cuGraphCreate(&mut g, 0), 0);
        // memset 5 -> kernel adds 7 -> copy to the host -> host function.
        let mut chain: Vec<CUgraphNode> = Vec::new();
        let mut params = [
            node_params(2, memset(5)),
            node_params(0, kernel(&mut args)),
            node_params(1, copy),
            node_params(
                3,
                GraphHostParams {
                    f: Some(count),
                    user_data: std::ptr::null_mut(),
                },
            ),
        ];
        for p in params.iter_mut() {
            let mut node: CUgraphNode = std::ptr::null_mut();
            let (deps, ndeps) = match chain.last() {
                Some(d) => (d as *const CUgraphNode, 1),
                None => (std::ptr::null(), 0),
            };
            let r = cuGraphAddNode_v2(
                &mut node,
                g,
                deps,
                std::ptr::null(),
                ndeps,
                (p as *mut GraphNodeParams).cast(),
            );
            assert_eq!(r, 0, "node type {}", p.type_);
            chain.push(node);
        }
        assert_eq!(
            chain.iter().map(|n| node_type(*n)).collect::<Vec<_>>(),
            vec![2, 0, 1, 3]
        );
        // The kernel's parameters were copied when the node was added.
        args[2].cast::<u32>().write(1000);
        let mut exec: CUgraphExec = std::ptr::null_mut();
        assert_eq!(cuGraphInstantiateWithFlags(&mut exec, g, 0), 0);
        assert_eq!(cuGraphLaunch(exec, s), 0);
        assert_eq!(cuStreamSynchronize(s), 0);
        assert_eq!(host, vec![12; N]);
        assert_eq!(HOST_CALLS.load(Ordering::SeqCst), 1);

        // The executable graph's own memset and kernel change; the graph's stay.
        args[2].cast::<u32>().write(1);
        let mut set_kernel = node_params(0, kernel(&mut args));
        let mut set_memset = node_params(2, memset(2));
        let k = (&mut set_kernel as *mut GraphNodeParams).cast();
        let m = (&mut set_memset as *mut GraphNodeParams).cast();
        assert_eq!(cuGraphExecNodeSetParams(exec, chain[1], k), 0);
        assert_eq!(cuGraphExecNodeSetParams(exec, chain[0], m), 0);
        assert_eq!(cuGraphLaunch(exec, s), 0);
        assert_eq!(cuStreamSynchronize(s), 0);
        assert_eq!(host, vec![3; N]);

        // The graph's own kernel changes: a new executable graph runs it.
        args[2].cast::<u32>().write(10);
        let mut set_kernel = node_params(0, kernel(&mut args));
        let k = (&mut set_kernel as *mut GraphNodeParams).cast();
        assert_eq!(cuGraphNodeSetParams(chain[1], k), 0);
        let mut exec2: CUgraphExec = std::ptr::null_mut();
        assert_eq!(cuGraphInstantiateWithFlags(&mut exec2, g, 0), 0);
        assert_eq!(cuGraphLaunch(exec2, s), 0);
        assert_eq!(cuStreamSynchronize(s), 0);
        assert_eq!(host, vec![15; N]);
        assert_eq!(HOST_CALLS.load(Ordering::SeqCst), 3);

        // cuda.h: the type must be the node's.
        assert_ne!(cuGraphNodeSetParams(chain[1], m), 0);
        assert_ne!(cuGraphExecNodeSetParams(exec, chain[0], k), 0);
        // An empty node's parameters (none) are of a type too (the H200 sets them on an
        // empty node: probe graph_exec_update).
        let mut empty = node_params(5, 0u64);
        let e = (&mut empty as *mut GraphNodeParams).cast();
        assert_eq!(
            cuGraphNodeSetParams(chain[1], e),
            cumock_abi::result::CUDA_ERROR_INVALID_VALUE
        );
        // Memory nodes' parameters cannot be set (cuda.h; the H200 answers
        // CUDA_ERROR_NOT_SUPPORTED).
        let mut free = node_params(11, 0u64);
        let f = (&mut free as *mut GraphNodeParams).cast();
        assert_eq!(
            cuGraphNodeSetParams(chain[1], f),
            cumock_abi::result::CUDA_ERROR_NOT_SUPPORTED
        );

        assert_eq!(cuGraphExecDestroy(exec2), 0);
        assert_eq!(cuGraphExecDestroy(exec), 0);
        assert_eq!(cuGraphDestroy(g), 0);
        assert_eq!(cuMemFree_v2(dev), 0);
        cuStreamDestroy_v2(s);
    }
}

/// What launching `f` directly answers now (shared memory as the graph's node asks).
fn direct_launch(f: CUfunction, p: u64, shared: u32) -> CUresult {
    let (mut p, mut n, mut v) = (p, N as u32, 1u32);
    let mut args = [
        (&mut p as *mut u64).cast::<c_void>(),
        (&mut n as *mut u32).cast(),
        (&mut v as *mut u32).cast(),
    ];
    // Safety: the arguments point to live locals of the kernel's parameter types.
    unsafe {
        cuLaunchKernel(
            f,
            2,
            1,
            1,
            32,
            1,
            1,
            shared,
            std::ptr::null_mut(),
            args.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    }
}

#[test]
fn a_graph_launch_answers_as_its_kernels_launch_after_what_the_checks_read_changes() {
    let _one = serial();
    setup();
    let p = managed();
    let s = stream(1);
    // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
    const MAX_DYNAMIC_SHARED: i32 = 8;
    // Safety: live locals and the program's own structs, as cuda.h lays them out.
    unsafe {
        // A module of the test's own, to unload.
        let ptx = std::ffi::CString::new(ADD).unwrap();
        let mut module: CUmodule = std::ptr::null_mut();
        assert_eq!(cuModuleLoadData(&mut module, ptx.as_ptr().cast()), 0);
        let mut f: CUfunction = std::ptr::null_mut();
        assert_eq!(cuModuleGetFunction(&mut f, module, c"add".as_ptr()), 0);
        let (mut pp, mut n, mut v) = (p, N as u32, 1u32);
        let mut args = [
            (&mut pp as *mut u64).cast::<c_void>(),
            (&mut n as *mut u32).cast(),
            (&mut v as *mut u32).cast(),
        ];
        let kp = KernelParams {
            func: f,
            grid: [2, 1, 1],
            block: [32, 1, 1],
            shared: 1024,
            kernel_params: args.as_mut_ptr(),
            extra: std::ptr::null_mut(),
        };
        let mut g: CUgraph = std::ptr::null_mut();
        assert_eq!(cuGraphCreate(&mut g, 0), 0);
        let mut node: CUgraphNode = std::ptr::null_mut();
        let kp = (&kp as *const KernelParams).cast();
        assert_eq!(
            cuGraphAddKernelNode(&mut node, g, std::ptr::null(), 0, kp),
            0
        );
        let mut exec: CUgraphExec = std::ptr::null_mut();
        assert_eq!(cuGraphInstantiateWithFlags(&mut exec, g, 0), 0);
        assert_eq!(cuGraphLaunch(exec, s), 0);
        assert_eq!(cuStreamSynchronize(s), 0);
        assert_eq!(read(p), vec![1; N]);

        // The function may no longer take the node's dynamic shared memory: the graph's
        // launch, prepared already, answers as a direct launch does now.
        assert_eq!(cuFuncSetAttribute(f, MAX_DYNAMIC_SHARED, 512), 0);
        let direct = direct_launch(f, p, 1024);
        assert_ne!(direct, 0);
        assert_eq!(cuGraphLaunch(exec, s), direct);
        assert_eq!(cuFuncSetAttribute(f, MAX_DYNAMIC_SHARED, 1024), 0);
        assert_eq!(cuGraphLaunch(exec, s), 0);
        assert_eq!(cuStreamSynchronize(s), 0);
        assert_eq!(read(p), vec![2; N], "refused launches ran nothing");

        // The module is gone: the kept plan does not run its kernel.
        assert_eq!(cuModuleUnload(module), 0);
        let direct = direct_launch(f, p, 1024);
        assert_ne!(direct, 0);
        assert_eq!(cuGraphLaunch(exec, s), direct);
        assert_eq!(cuStreamSynchronize(s), 0);
        assert_eq!(read(p), vec![2; N]);

        assert_eq!(cuGraphExecDestroy(exec), 0);
        assert_eq!(cuGraphDestroy(g), 0);
        cuStreamDestroy_v2(s);
    }
}

#[test]
fn the_old_per_thread_begin_capture_captures_the_threads_own_default_stream() {
    let _g = serial();
    let _ = setup();
    // Safety: NULL streams (the thread's default one in `_ptsz` exports) and live locals.
    unsafe {
        // nvcc's --default-stream per-thread: NULL is this thread's stream, which may be
        // captured (the legacy stream may not).
        assert_eq!(cuStreamBeginCapture_ptsz(std::ptr::null_mut()), 0);
        let mut st = -1;
        assert_eq!(
            cuStreamIsCapturing_ptsz(std::ptr::null_mut(), (&mut st as *mut i32).cast()),
            0
        );
        assert_eq!(st, 1, "the per-thread stream captures");
        // The legacy stream does not; asked, it answers as work on it would (a
        // per-thread stream synchronises with it): STREAM_CAPTURE_IMPLICIT, as the H200
        // answered with a blocking created stream capturing (graph_rules.rs); its
        // answer with the per-thread stream awaits a recording
        // (ci/explore/legacy_query_ptsz.c).
        let mut st = -1;
        assert_eq!(
            cuStreamIsCapturing(std::ptr::null_mut(), (&mut st as *mut i32).cast()),
            906
        );
        let mut g: CUgraph = std::ptr::null_mut();
        assert_eq!(cuStreamEndCapture_ptsz(std::ptr::null_mut(), &mut g), 0);
        assert!(!g.is_null());
        assert_eq!(cuGraphDestroy(g), 0);
    }
}
