//! Device 0's primary context made current, and streams and events in it: how the tests
//! that call the mock's exports in this process begin. Included with `#[path]` by those
//! tests: it calls the exports, which the tests that load the built library instead (every
//! one compiles common/mod.rs) need not link.
#![allow(dead_code)]

use cuda::exports::*;
use cumock_abi::*;

/// Initializes the driver and makes device 0's primary context current.
pub fn primary_context() -> CUcontext {
    let mut ctx: CUcontext = std::ptr::null_mut();
    // Safety: a live out-pointer.
    unsafe {
        assert_eq!(cuInit(0), 0);
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
    }
    ctx
}

/// A stream of the current context, created with `flags` (CU_STREAM_*).
pub fn stream(flags: u32) -> CUstream {
    let mut s: CUstream = std::ptr::null_mut();
    // Safety: a live local.
    assert_eq!(unsafe { cuStreamCreate(&mut s, flags) }, 0);
    s
}

/// An event of the current context, created with `flags` (CU_EVENT_*).
pub fn event(flags: u32) -> CUevent {
    let mut e: CUevent = std::ptr::null_mut();
    // Safety: a live local.
    assert_eq!(unsafe { cuEventCreate(&mut e, flags) }, 0);
    e
}
