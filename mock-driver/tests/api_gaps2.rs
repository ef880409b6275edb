//! Driver calls modern programs make that the mock emulated late, second round (probe
//! api_gaps2 asks the H200 the same): a context's events (cuCtxRecordEvent,
//! cuCtxWaitEvent), stream memory operations in graphs, each with its edge inputs.

use cuda::exports::*;
use cumock_abi::result::*;
use cumock_abi::*;
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::Mutex;
use std::time::Duration;

/// The context's settings are shared: the tests of this file run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn setup() -> (std::sync::MutexGuard<'static, ()>, CUcontext) {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut ctx: CUcontext = null_mut();
    // Safety: pointers to live locals.
    unsafe {
        assert_eq!(cuInit(0), 0);
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
    }
    (guard, ctx)
}

fn nonblocking_stream() -> CUstream {
    let mut s: CUstream = null_mut();
    // Safety: a live out-pointer.
    assert_eq!(unsafe { cuStreamCreate(&mut s, 1) }, 0);
    s
}

fn event() -> CUevent {
    let mut e: CUevent = null_mut();
    // Safety: a live out-pointer.
    assert_eq!(unsafe { cuEventCreate(&mut e, 0) }, 0);
    e
}

/// Page-locked words the host writes and streams wait on (and write back).
struct Flags(*mut u32);

impl Flags {
    fn new() -> Self {
        let mut host: *mut c_void = null_mut();
        // Safety: a live out-pointer; 4 KiB zeroed below.
        unsafe {
            assert_eq!(cuMemHostAlloc(&mut host, 4096, 2), 0);
            std::ptr::write_bytes(host.cast::<u8>(), 0, 4096);
        }
        Self(host.cast())
    }
    fn addr(&self, i: usize) -> CUdeviceptr {
        self.0 as CUdeviceptr + 4 * i as CUdeviceptr
    }
    fn set(&self, i: usize, v: u32) {
        // Safety: word i of the page-locked page this owns (i < 1024).
        unsafe { self.0.add(i).write_volatile(v) }
    }
    fn get(&self, i: usize) -> u32 {
        // Safety: as in `set`.
        unsafe { self.0.add(i).read_volatile() }
    }
}

impl Drop for Flags {
    fn drop(&mut self) {
        // Safety: allocated in `new`; the streams using it are synchronised by then.
        unsafe { assert_eq!(cuMemFreeHost(self.0.cast()), 0) };
    }
}

fn settle() {
    std::thread::sleep(Duration::from_millis(30));
}

#[test]
fn a_context_event_stands_for_the_work_of_all_its_streams() {
    let (_g, ctx) = setup();
    let (a, b) = (nonblocking_stream(), nonblocking_stream());
    let f = Flags::new();
    let e = event();
    // Safety: live handles; the streams wait on page-locked words this test owns.
    unsafe {
        assert_eq!(cuStreamWaitValue32_v2(a, f.addr(0), 1, 1), 0);
        assert_eq!(cuStreamWaitValue32_v2(b, f.addr(1), 1, 1), 0);
        assert_eq!(cuCtxRecordEvent(ctx, e), 0);
        // Work issued after the record is not the event's.
        assert_eq!(cuStreamWaitValue32_v2(a, f.addr(2), 1, 1), 0);
        settle();
        assert_eq!(cuEventQuery(e), CUDA_ERROR_NOT_READY, "both streams wait");
        f.set(0, 1);
        settle();
        assert_eq!(cuEventQuery(e), CUDA_ERROR_NOT_READY, "b still waits");
        f.set(1, 1);
        assert_eq!(cuEventSynchronize(e), 0);
        assert_eq!(cuStreamQuery(a), CUDA_ERROR_NOT_READY, "a's later wait");
        f.set(2, 1);
        assert_eq!(cuStreamSynchronize(a), 0);
        // Nothing pending: complete at once, with a time.
        let e2 = event();
        assert_eq!(
            cuCtxRecordEvent(null_mut(), e2),
            CUDA_ERROR_INVALID_CONTEXT,
            "NULL is no context (the H200, probe api_gaps2)"
        );
        assert_eq!(cuCtxRecordEvent(ctx, e2), 0);
        assert_eq!(cuEventQuery(e2), 0);
        let mut ms = -1.0f32;
        assert_eq!(cuEventElapsedTime_v2(&mut ms, e, e2), 0);
        assert!(ms >= 0.0, "{ms}");
        for x in [e, e2] {
            assert_eq!(cuEventDestroy_v2(x), 0);
        }
        assert_eq!(cuStreamDestroy_v2(a), 0);
        assert_eq!(cuStreamDestroy_v2(b), 0);
    }
}

#[test]
fn a_context_waits_on_an_event_on_all_its_streams_even_later_ones() {
    let (_g, ctx) = setup();
    let (x, a) = (nonblocking_stream(), nonblocking_stream());
    let f = Flags::new();
    let e = event();
    // Safety: live handles; the streams use page-locked words this test owns.
    unsafe {
        assert_eq!(cuStreamWaitValue32_v2(x, f.addr(0), 1, 1), 0);
        assert_eq!(cuEventRecord(e, x), 0);
        assert_eq!(cuCtxWaitEvent(ctx, e), 0);
        // A stream made after the wait, and one that never had work, wait too.
        let c = nonblocking_stream();
        assert_eq!(cuStreamWriteValue32_v2(a, f.addr(1), 7, 0), 0);
        assert_eq!(cuStreamWriteValue32_v2(c, f.addr(2), 9, 0), 0);
        settle();
        assert_eq!(
            (f.get(1), f.get(2)),
            (0, 0),
            "the writes wait for the event"
        );
        assert_eq!(cuStreamQuery(a), CUDA_ERROR_NOT_READY);
        assert_eq!(cuStreamQuery(c), CUDA_ERROR_NOT_READY);
        f.set(0, 1);
        assert_eq!(cuStreamSynchronize(a), 0);
        assert_eq!(cuStreamSynchronize(c), 0);
        assert_eq!((f.get(1), f.get(2)), (7, 9));
        // A complete event holds nothing back.
        assert_eq!(cuCtxWaitEvent(ctx, e), 0);
        assert_eq!(cuStreamWriteValue32_v2(a, f.addr(3), 5, 0), 0);
        assert_eq!(cuStreamSynchronize(a), 0);
        assert_eq!(f.get(3), 5);
        assert_eq!(cuEventDestroy_v2(e), 0);
        for s in [x, a, c] {
            assert_eq!(cuStreamDestroy_v2(s), 0);
        }
    }
}

#[test]
fn context_events_refuse_bad_handles_other_contexts_and_captures() {
    let (_g, ctx) = setup();
    let e = event();
    // Safety: live handles, and handles the mock never gave out (refused, not used).
    unsafe {
        assert_eq!(cuCtxRecordEvent(ctx, null_mut()), CUDA_ERROR_INVALID_HANDLE);
        assert_eq!(cuCtxWaitEvent(ctx, null_mut()), CUDA_ERROR_INVALID_HANDLE);
        let forged = 0x5eed_0000_0000_0001usize as CUevent;
        assert_eq!(cuCtxRecordEvent(ctx, forged), CUDA_ERROR_INVALID_HANDLE);
        let bad_ctx = 0x5eed_0000_0000_0002usize as CUcontext;
        assert_ne!(cuCtxRecordEvent(bad_ctx, e), 0);
        assert_ne!(cuCtxWaitEvent(bad_ctx, e), 0);

        // An event of another context: recorded there only, waited on anywhere.
        let mut other: CUcontext = null_mut();
        assert_eq!(cuCtxCreate_v2(&mut other, 0, 0), 0);
        let theirs = event();
        assert_eq!(cuCtxSetCurrent(ctx), 0);
        assert_eq!(cuCtxRecordEvent(ctx, theirs), CUDA_ERROR_INVALID_HANDLE);
        assert_eq!(cuCtxRecordEvent(other, theirs), 0);
        assert_eq!(cuCtxWaitEvent(ctx, theirs), 0);
        assert_eq!(cuEventDestroy_v2(theirs), 0);
        assert_eq!(cuCtxDestroy_v2(other), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);

        // A stream of the context captures: refused, and the capture invalidated.
        let s = nonblocking_stream();
        assert_eq!(cuStreamBeginCapture_v2(s, 2), 0, "relaxed");
        assert_eq!(cuCtxRecordEvent(ctx, e), 900, "STREAM_CAPTURE_UNSUPPORTED");
        let mut g: CUgraph = null_mut();
        assert_eq!(cuStreamEndCapture(s, &mut g), 901, "INVALIDATED");
        // An event recorded in a capture: a context may not wait on it.
        assert_eq!(cuStreamBeginCapture_v2(s, 2), 0);
        assert_eq!(cuEventRecord(e, s), 0);
        assert_eq!(cuCtxWaitEvent(ctx, e), 900);
        assert_eq!(cuStreamEndCapture(s, &mut g), 901);
        assert_eq!(cuStreamDestroy_v2(s), 0);
        assert_eq!(cuEventDestroy_v2(e), 0);
    }
}

/// `CUDA_BATCH_MEM_OP_NODE_PARAMS` as cuda.h lays it out.
#[repr(C)]
struct MemOpNodeParams {
    ctx: CUcontext,
    count: u32,
    param_array: *mut [u64; 6],
    flags: u32,
}

fn wait32(addr: CUdeviceptr, value: u32, flags: u32) -> [u64; 6] {
    [1, addr, u64::from(value), u64::from(flags), 0, 0]
}

fn write32(addr: CUdeviceptr, value: u32) -> [u64; 6] {
    [2, addr, u64::from(value), 0, 0, 0]
}

fn write64(addr: CUdeviceptr, value: u64) -> [u64; 6] {
    [5, addr, value, 0, 0, 0]
}

fn params(ctx: CUcontext, ops: &mut [[u64; 6]]) -> MemOpNodeParams {
    MemOpNodeParams {
        ctx,
        count: ops.len() as u32,
        param_array: ops.as_mut_ptr(),
        flags: 0,
    }
}

fn node_type(n: CUgraphNode) -> i32 {
    let mut t = -1;
    // Safety: a live out-pointer.
    assert_eq!(unsafe { cuGraphNodeGetType(n, (&raw mut t).cast()) }, 0);
    t
}

fn instantiate(g: CUgraph) -> CUgraphExec {
    let mut e: CUgraphExec = null_mut();
    // Safety: a live out-pointer.
    assert_eq!(unsafe { cuGraphInstantiateWithFlags(&mut e, g, 0) }, 0);
    e
}

#[test]
fn batch_mem_op_nodes_wait_and_write_in_graph_order() {
    let (_g, ctx) = setup();
    let s = nonblocking_stream();
    let f = Flags::new();
    // Safety: live handles; the node's words are page-locked words this test owns; the
    // program's arrays are dropped after the calls, as cuda.h allows (the node copies).
    unsafe {
        let mut g: CUgraph = null_mut();
        assert_eq!(cuGraphCreate(&mut g, 0), 0);
        let (mut a, mut b): (CUgraphNode, CUgraphNode) = (null_mut(), null_mut());
        {
            let mut ops = [wait32(f.addr(0), 1, 1), write32(f.addr(1), 7)];
            let p = params(ctx, &mut ops);
            assert_eq!(
                cuGraphAddBatchMemOpNode(&mut a, g, std::ptr::null(), 0, (&raw const p).cast()),
                0
            );
            // The program may reuse its array at once: the node copied it.
            std::ptr::write_volatile(&mut ops[1], write32(f.addr(1), 99));
        }
        {
            let mut ops = [write64(f.addr(2), 0x1_0000_0009)];
            let p = params(null_mut(), &mut ops);
            assert_eq!(
                cuGraphAddBatchMemOpNode(&mut b, g, &a, 1, (&raw const p).cast()),
                CUDA_ERROR_INVALID_VALUE,
                "a NULL context is refused (the H200, probe api_gaps2)"
            );
            let p = params(ctx, &mut ops);
            assert_eq!(
                cuGraphAddBatchMemOpNode(&mut b, g, &a, 1, (&raw const p).cast()),
                0
            );
        }
        assert_eq!(node_type(a), 12, "CU_GRAPH_NODE_TYPE_BATCH_MEM_OP");
        let mut got: MemOpNodeParams = std::mem::zeroed();
        assert_eq!(cuGraphBatchMemOpNodeGetParams(a, (&raw mut got).cast()), 0);
        assert_eq!((got.ctx, got.count, got.flags), (ctx, 2, 0));
        let kept = std::slice::from_raw_parts(got.param_array, 2);
        assert_eq!(
            kept,
            [wait32(f.addr(0), 1, 1), write32(f.addr(1), 7)],
            "the node's own copy"
        );
        let e = instantiate(g);
        assert_eq!(cuGraphLaunch(e, s), 0);
        settle();
        assert_eq!(
            cuStreamQuery(s),
            CUDA_ERROR_NOT_READY,
            "the wait holds the graph"
        );
        assert_eq!((f.get(1), f.get(2)), (0, 0));
        f.set(0, 1);
        assert_eq!(cuStreamSynchronize(s), 0);
        assert_eq!((f.get(1), f.get(2), f.get(3)), (7, 9, 1));

        // The executable graph's node takes new addresses and values, not a new shape.
        let mut ops = [wait32(f.addr(0), 2, 1), write32(f.addr(4), 8)];
        let p = params(ctx, &mut ops);
        assert_eq!(
            cuGraphExecBatchMemOpNodeSetParams(e, a, (&raw const p).cast()),
            0
        );
        let mut shorter = [wait32(f.addr(0), 2, 1)];
        let p1 = params(ctx, &mut shorter);
        assert_eq!(
            cuGraphExecBatchMemOpNodeSetParams(e, a, (&raw const p1).cast()),
            CUDA_ERROR_INVALID_VALUE,
            "another count"
        );
        let mut swapped = [write32(f.addr(4), 8), wait32(f.addr(0), 2, 1)];
        let p2 = params(ctx, &mut swapped);
        assert_eq!(
            cuGraphExecBatchMemOpNodeSetParams(e, a, (&raw const p2).cast()),
            CUDA_ERROR_INVALID_VALUE,
            "other types"
        );
        assert_eq!(cuGraphLaunch(e, s), 0);
        settle();
        assert_eq!(f.get(4), 0, "waits for 2 now");
        f.set(0, 2);
        assert_eq!(cuStreamSynchronize(s), 0);
        assert_eq!(f.get(4), 8);
        // The graph's node is not changed by the executable graph's setter.
        assert_eq!(cuGraphBatchMemOpNodeGetParams(a, (&raw mut got).cast()), 0);
        assert_eq!(
            std::slice::from_raw_parts(got.param_array, 2)[1],
            write32(f.addr(1), 7)
        );
        // The graph's node's setter: a new shape is fine there.
        let mut one = [write32(f.addr(5), 3)];
        let p3 = params(ctx, &mut one);
        assert_eq!(cuGraphBatchMemOpNodeSetParams(a, (&raw const p3).cast()), 0);
        assert_eq!(cuGraphBatchMemOpNodeGetParams(a, (&raw mut got).cast()), 0);
        assert_eq!(got.count, 1);
        assert_eq!(cuGraphExecDestroy(e), 0);
        let e = instantiate(g);
        assert_eq!(cuGraphLaunch(e, s), 0);
        assert_eq!(cuStreamSynchronize(s), 0);
        assert_eq!(f.get(5), 3);
        assert_eq!(cuGraphExecDestroy(e), 0);
        assert_eq!(cuGraphDestroy(g), 0);
        assert_eq!(cuStreamDestroy_v2(s), 0);
    }
}

#[test]
fn captured_stream_memory_operations_become_batch_mem_op_nodes() {
    let (_g, _ctx) = setup();
    let s = nonblocking_stream();
    let f = Flags::new();
    // Safety: live handles; page-locked words this test owns.
    unsafe {
        assert_eq!(cuStreamBeginCapture_v2(s, 0), 0);
        assert_eq!(cuStreamWriteValue32_v2(s, f.addr(0), 5, 0), 0);
        assert_eq!(cuStreamWaitValue32_v2(s, f.addr(1), 1, 1), 0);
        let mut batch = [write32(f.addr(2), 6), write64(f.addr(4), 0x2_0000_0001)];
        assert_eq!(cuStreamBatchMemOp_v2(s, 2, batch.as_mut_ptr().cast(), 0), 0);
        let mut g: CUgraph = null_mut();
        assert_eq!(cuStreamEndCapture(s, &mut g), 0);
        settle();
        assert_eq!(f.get(0), 0, "captured, not run");
        let mut nodes = [null_mut(); 4];
        let mut n = 4usize;
        assert_eq!(cuGraphGetNodes(g, nodes.as_mut_ptr(), &mut n), 0);
        assert_eq!(n, 3);
        for node in &nodes[..3] {
            assert_eq!(node_type(*node), 12);
        }
        let mut roots = [null_mut(); 2];
        let mut r = 2usize;
        assert_eq!(cuGraphGetRootNodes(g, roots.as_mut_ptr(), &mut r), 0);
        assert_eq!(r, 1, "a chain, in stream order");
        let mut got: MemOpNodeParams = std::mem::zeroed();
        assert_eq!(
            cuGraphBatchMemOpNodeGetParams(roots[0], (&raw mut got).cast()),
            0
        );
        assert_eq!(got.count, 1);
        assert_eq!(*got.param_array, write32(f.addr(0), 5));
        let e = instantiate(g);
        assert_eq!(cuGraphLaunch(e, s), 0);
        settle();
        assert_eq!((f.get(0), f.get(2)), (5, 0), "the wait holds the rest");
        f.set(1, 1);
        assert_eq!(cuStreamSynchronize(s), 0);
        assert_eq!((f.get(2), f.get(4), f.get(5)), (6, 1, 2));
        // A capture refuses what cuStreamBatchMemOp refuses, leaving the capture valid.
        assert_eq!(cuStreamBeginCapture_v2(s, 0), 0);
        assert_eq!(
            cuStreamWriteValue32_v2(s, f.addr(0) + 2, 1, 0),
            CUDA_ERROR_INVALID_VALUE,
            "misaligned"
        );
        let mut g2: CUgraph = null_mut();
        assert_eq!(cuStreamEndCapture(s, &mut g2), 0);
        assert_eq!(cuGraphDestroy(g2), 0);
        assert_eq!(cuGraphExecDestroy(e), 0);
        assert_eq!(cuGraphDestroy(g), 0);
        assert_eq!(cuStreamDestroy_v2(s), 0);
    }
}

#[test]
fn batch_mem_op_nodes_through_cu_graph_add_node_and_their_edge_inputs() {
    let (_g, ctx) = setup();
    let s = nonblocking_stream();
    let f = Flags::new();
    // Safety: live handles, page-locked words this test owns; refused inputs are not used.
    unsafe {
        let mut g: CUgraph = null_mut();
        assert_eq!(cuGraphCreate(&mut g, 0), 0);
        let mut ops = [write32(f.addr(0), 11)];
        // CUgraphNodeParams: the type, 12 reserved bytes, the union at 16, 256 bytes in all.
        let mut np = [0u64; 32];
        np[0] = 12;
        let p = params(ctx, &mut ops);
        std::ptr::write_unaligned(np.as_mut_ptr().add(2).cast::<MemOpNodeParams>(), p);
        let mut n: CUgraphNode = null_mut();
        assert_eq!(
            cuGraphAddNode(&mut n, g, std::ptr::null(), 0, np.as_mut_ptr().cast()),
            0
        );
        assert_eq!(node_type(n), 12);
        // cuGraphNodeSetParams sets it too.
        let mut ops2 = [write32(f.addr(1), 12)];
        let p = params(ctx, &mut ops2);
        std::ptr::write_unaligned(np.as_mut_ptr().add(2).cast::<MemOpNodeParams>(), p);
        assert_eq!(cuGraphNodeSetParams(n, np.as_mut_ptr().cast()), 0);
        let e = instantiate(g);
        assert_eq!(cuGraphLaunch(e, s), 0);
        assert_eq!(cuStreamSynchronize(s), 0);
        assert_eq!((f.get(0), f.get(1)), (0, 12));

        let add = |p: *const MemOpNodeParams| {
            let mut m: CUgraphNode = null_mut();
            cuGraphAddBatchMemOpNode(&mut m, g, std::ptr::null(), 0, p.cast())
        };
        assert_eq!(
            add(std::ptr::null()),
            CUDA_ERROR_INVALID_VALUE,
            "NULL params"
        );
        let mut good = [write32(f.addr(0), 1)];
        let mut p = params(ctx, &mut good);
        p.flags = 1;
        assert_eq!(add(&p), CUDA_ERROR_INVALID_VALUE, "flags");
        let mut p = params(ctx, &mut good);
        p.count = 0;
        assert_eq!(add(&p), 0, "no operation: taken, as the H200 takes it");
        let mut p = params(ctx, &mut good);
        p.param_array = null_mut();
        assert_eq!(add(&p), CUDA_ERROR_INVALID_VALUE, "NULL array");
        let mut bad = [write32(f.addr(0) + 1, 1)];
        assert_eq!(
            add(&params(ctx, &mut bad)),
            CUDA_ERROR_INVALID_VALUE,
            "misaligned"
        );
        let mut bad = [[9, f.addr(0), 0, 0, 0, 0]];
        assert_eq!(
            add(&params(ctx, &mut bad)),
            CUDA_ERROR_INVALID_VALUE,
            "type 9"
        );
        let mut bad = [wait32(f.addr(0), 1, 1 << 30)];
        assert_eq!(
            add(&params(ctx, &mut bad)),
            CUDA_ERROR_NOT_SUPPORTED,
            "FLUSH"
        );
        let forged = 0x5eed_0000_0000_0002usize as CUcontext;
        assert_ne!(add(&params(forged, &mut good)), 0, "a context never made");
        let mut got: MemOpNodeParams = std::mem::zeroed();
        let mut empty: CUgraphNode = null_mut();
        assert_eq!(cuGraphAddEmptyNode(&mut empty, g, std::ptr::null(), 0), 0);
        assert_eq!(
            cuGraphBatchMemOpNodeGetParams(empty, (&raw mut got).cast()),
            CUDA_ERROR_INVALID_VALUE,
            "not a batch node"
        );
        assert_eq!(
            cuGraphBatchMemOpNodeGetParams(n, null_mut()),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuGraphExecDestroy(e), 0);
        assert_eq!(cuGraphDestroy(g), 0);
        assert_eq!(cuStreamDestroy_v2(s), 0);
    }
}

/// A graph made again with other addresses and values updates an executable graph's
/// batch node; other operation types are CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED.
#[test]
fn cu_graph_exec_update_takes_new_words_of_batch_nodes_not_new_types() {
    let (_g, ctx) = setup();
    let s = nonblocking_stream();
    let f = Flags::new();
    let graph_of = |ops: &mut [[u64; 6]]| {
        let mut g: CUgraph = null_mut();
        let mut n: CUgraphNode = null_mut();
        let p = params(ctx, ops);
        // Safety: live out-pointers and the program's array, copied by the node.
        unsafe {
            assert_eq!(cuGraphCreate(&mut g, 0), 0);
            assert_eq!(
                cuGraphAddBatchMemOpNode(&mut n, g, std::ptr::null(), 0, (&raw const p).cast()),
                0
            );
        }
        g
    };
    // Safety: live handles; page-locked words this test owns.
    unsafe {
        let g1 = graph_of(&mut [write32(f.addr(0), 1)]);
        let e = instantiate(g1);
        let g2 = graph_of(&mut [write32(f.addr(1), 2)]);
        let mut info = [0u64; 3];
        assert_eq!(cuGraphExecUpdate_v2(e, g2, info.as_mut_ptr().cast()), 0);
        assert_eq!(info[0] as u32, 0);
        assert_eq!(cuGraphLaunch(e, s), 0);
        assert_eq!(cuStreamSynchronize(s), 0);
        assert_eq!((f.get(0), f.get(1)), (0, 2), "the update's word and value");
        f.set(3, 1);
        let g3 = graph_of(&mut [wait32(f.addr(3), 1, 1)]);
        assert_eq!(cuGraphExecUpdate_v2(e, g3, info.as_mut_ptr().cast()), 910);
        assert_eq!(
            info[0] as u32, 5,
            "CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED"
        );
        for g in [g1, g2, g3] {
            assert_eq!(cuGraphDestroy(g), 0);
        }
        assert_eq!(cuGraphExecDestroy(e), 0);
        assert_eq!(cuStreamDestroy_v2(s), 0);
    }
}
