//! Device 0's primary context made current: how the tests that call the mock's exports
//! in this process begin. Included with `#[path]` by those tests: it calls the exports,
//! which the tests that load the built library instead (every one compiles common/mod.rs)
//! need not link.

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
