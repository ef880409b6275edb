//! Graph rules found by comparing random sequences of graph calls
//! (ci/explore/random_graphs.c) between runs of the mock and with the H200: each test a
//! scenario from a transcript, the calls and what they must answer.

use cuda::exports::*;
use cumock_abi::result::CUDA_ERROR_INVALID_VALUE;
use cumock_abi::*;

/// `CUDA_GRAPH_INSTANTIATE_PARAMS`.
#[repr(C)]
struct InstantiateParams {
    flags: u64,
    upload_stream: CUstream,
    err_node: CUgraphNode,
    result: u32,
}

const DEVICE_LAUNCH: u64 = 4;
const AUTO_FREE_ON_LAUNCH: u64 = 1;
/// CUgraphInstantiateResult's CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED.
const NODE_OPERATION_NOT_SUPPORTED: u32 = 3;

fn context() {
    // Safety: pointers to live locals.
    unsafe {
        assert_eq!(cuInit(0), 0);
        let mut ctx: CUcontext = std::ptr::null_mut();
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
    }
}

/// A graph of empty nodes (none a device graph may hold) instantiated for device launch:
/// refused, naming the first node added, every time. random_graphs seed 2 named a
/// different node on each run while the refusal walked a hash map.
#[test]
fn device_launch_refusal_names_the_first_node_added() {
    context();
    for _ in 0..8 {
        // Safety: pointers to live locals; the nodes and graph are this test's own.
        unsafe {
            let mut g: CUgraph = std::ptr::null_mut();
            assert_eq!(cuGraphCreate(&mut g, 0), 0);
            let mut first: CUgraphNode = std::ptr::null_mut();
            for i in 0..32 {
                let mut n: CUgraphNode = std::ptr::null_mut();
                assert_eq!(cuGraphAddEmptyNode(&mut n, g, std::ptr::null(), 0), 0);
                if i == 0 {
                    first = n;
                }
            }
            let mut p = InstantiateParams {
                flags: DEVICE_LAUNCH | AUTO_FREE_ON_LAUNCH,
                upload_stream: std::ptr::null_mut(),
                err_node: std::ptr::null_mut(),
                result: 0,
            };
            let mut e: CUgraphExec = std::ptr::null_mut();
            let r = cuGraphInstantiateWithParams(&mut e, g, (&raw mut p).cast());
            assert_eq!(r, CUDA_ERROR_INVALID_VALUE);
            assert_eq!(p.result, NODE_OPERATION_NOT_SUPPORTED);
            assert_eq!(p.err_node, first);
            assert_eq!(cuGraphDestroy(g), 0);
        }
    }
}
