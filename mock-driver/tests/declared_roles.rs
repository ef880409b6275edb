//! Calls whose NULL checks moved from their bodies to the declaration's roles, and the
//! variants that now run through the generated forwarders: each refuses what it refused
//! before, in the same order.

use cuda::exports::*;
use cumock_abi::result::*;
use cumock_abi::*;
use std::ptr::null_mut;

const CU_STREAM_PER_THREAD: CUstream = 0x2 as CUstream;

fn setup() {
    let mut ctx: CUcontext = null_mut();
    // Safety: pointers to live locals.
    unsafe {
        assert_eq!(cuInit(0), 0);
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
    }
}

#[test]
fn null_out_parameters_are_refused_by_role_after_the_checks_that_come_first() {
    setup();
    // Safety: NULL, bogus handles and live locals; the calls check them.
    unsafe {
        // cuGraphBatchMemOpNodeGetParams looks the node up before its out-parameter: a
        // bogus node, or one of another type, is the node's error whatever the pointer
        // (CUDA_ERROR_INVALID_VALUE, as the pointer's would be: the order shows in the
        // message only).
        let bogus = 0x5151 as CUgraphNode;
        let mut params = [0u8; 64];
        let with_room = cuGraphBatchMemOpNodeGetParams(bogus, params.as_mut_ptr().cast());
        assert_eq!(with_room, CUDA_ERROR_INVALID_VALUE, "a bogus node");
        assert_eq!(cuGraphBatchMemOpNodeGetParams(bogus, null_mut()), with_room);
        let mut g: CUgraph = null_mut();
        assert_eq!(cuGraphCreate(&mut g, 0), 0);
        let mut node: CUgraphNode = null_mut();
        assert_eq!(cuGraphAddEmptyNode(&mut node, g, null_mut(), 0), 0);
        let not_mem_op = cuGraphBatchMemOpNodeGetParams(node, params.as_mut_ptr().cast());
        assert_eq!(
            not_mem_op, CUDA_ERROR_INVALID_VALUE,
            "not a batch mem-op node"
        );
        assert_eq!(cuGraphBatchMemOpNodeGetParams(node, null_mut()), not_mem_op);
        assert_eq!(cuGraphDestroy(g), 0);

        // cuMemPoolExportPointer: NULL shareData_out before the pointer is looked at.
        assert_eq!(
            cuMemPoolExportPointer(null_mut(), 0x1234),
            CUDA_ERROR_INVALID_VALUE
        );

        // cuMemRangeGetAttribute: the attribute is read first, then data (`#[late]`).
        let mut managed: CUdeviceptr = 0;
        assert_eq!(cuMemAllocManaged(&mut managed, 4096, 1), 0);
        let mut v = -7i32;
        assert_eq!(
            cuMemRangeGetAttribute((&raw mut v).cast(), 4, 1, managed, 4096),
            0
        );
        assert_eq!(v, 0, "not read-mostly");
        assert_eq!(
            cuMemRangeGetAttribute(null_mut(), 4, 1, managed, 4096),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuMemFree_v2(managed), 0);

        // A NULL context where one is required (`#[nonnull]`: the key is a ContextId).
        assert_eq!(cuCtxDestroy_v2(null_mut()), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(cuCtxPushCurrent_v2(null_mut()), CUDA_ERROR_INVALID_VALUE);

        // cuStreamAddCallback: NULL callback, whatever the flags.
        assert_eq!(
            cuStreamAddCallback(null_mut(), None, null_mut(), 0),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuStreamAddCallback(null_mut(), None, null_mut(), 1),
            CUDA_ERROR_INVALID_VALUE
        );
    }
}

#[test]
fn generated_forwarders_run_the_variants_as_their_base() {
    setup();
    // Safety: live locals and the per-thread stream.
    unsafe {
        // cuStreamBeginCapture_ptsz: NULL is the calling thread's per-thread stream.
        assert_eq!(cuStreamBeginCapture_ptsz(null_mut()), 0);
        let mut status = 0;
        assert_eq!(cuStreamIsCapturing(CU_STREAM_PER_THREAD, &mut status), 0);
        assert_eq!(status, 1, "CU_STREAM_CAPTURE_STATUS_ACTIVE");
        let mut g: CUgraph = null_mut();
        assert_eq!(cuStreamEndCapture(CU_STREAM_PER_THREAD, &mut g), 0);
        assert!(!g.is_null());

        // cuGraphInstantiate (CUDA 10's) is cuGraphInstantiate_v2.
        let mut exec: CUgraphExec = null_mut();
        assert_eq!(
            cuGraphInstantiate(&mut exec, g, null_mut(), null_mut(), 0),
            0
        );
        assert_eq!(cuGraphLaunch(exec, CU_STREAM_PER_THREAD), 0);
        assert_eq!(cuStreamSynchronize(CU_STREAM_PER_THREAD), 0);
        assert_eq!(
            cuGraphInstantiate(null_mut(), g, null_mut(), null_mut(), 0),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuGraphExecDestroy(exec), 0);
        assert_eq!(cuGraphDestroy(g), 0);
    }
}

#[test]
fn paired_out_parameters_are_checked_together_before_the_handle() {
    setup();
    // Safety: NULL, bogus handles and live locals; the calls check them.
    unsafe {
        // cuStreamGetCtx_v2 (`either`): both NULL is refused before the stream is looked up;
        // one of them given, the destroyed stream's error.
        let mut s: CUstream = null_mut();
        assert_eq!(cuStreamCreate(&mut s, 1), 0);
        assert_eq!(cuStreamDestroy_v2(s), 0);
        let mut green: CUgreenCtx = null_mut();
        assert_eq!(
            cuStreamGetCtx_v2(s, null_mut(), null_mut()),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuStreamGetCtx_v2(s, null_mut(), &mut green),
            CUDA_ERROR_INVALID_HANDLE
        );

        // cuLibraryGetManaged (`either`): both NULL before the library; one given, the bogus
        // library's error.
        let bogus_lib = 0x5151 as CUlibrary;
        let mut bytes = 7usize;
        let missing = cuLibraryGetManaged(null_mut(), &mut bytes, bogus_lib, c"x".as_ptr());
        assert_ne!(missing, CUDA_ERROR_INVALID_VALUE, "a bogus library");
        assert_eq!(bytes, 7, "left as it was");
        assert_eq!(
            cuLibraryGetManaged(null_mut(), null_mut(), bogus_lib, c"x".as_ptr()),
            CUDA_ERROR_INVALID_VALUE
        );

        // cuGraphGetEdges (`both`): one array without the other is refused; neither is the
        // count; both, the edges.
        let mut g: CUgraph = null_mut();
        assert_eq!(cuGraphCreate(&mut g, 0), 0);
        let (mut a, mut b): (CUgraphNode, CUgraphNode) = (null_mut(), null_mut());
        assert_eq!(cuGraphAddEmptyNode(&mut a, g, null_mut(), 0), 0);
        assert_eq!(cuGraphAddEmptyNode(&mut b, g, &a, 1), 0);
        let mut n = 1usize;
        let (mut from, mut to) = ([null_mut(); 1], [null_mut(); 1]);
        for (f, t) in [
            (from.as_mut_ptr(), null_mut()),
            (null_mut(), to.as_mut_ptr()),
        ] {
            assert_eq!(cuGraphGetEdges(g, f, t, &mut n), CUDA_ERROR_INVALID_VALUE);
        }
        n = 0;
        assert_eq!(cuGraphGetEdges(g, null_mut(), null_mut(), &mut n), 0);
        assert_eq!(n, 1);
        assert_eq!(
            cuGraphGetEdges(g, from.as_mut_ptr(), to.as_mut_ptr(), &mut n),
            0
        );
        assert_eq!((from, to, n), ([a], [b], 1));
        assert_eq!(cuGraphDestroy(g), 0);
    }
}
