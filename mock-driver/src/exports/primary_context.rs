//! Primary context management (cuda.h's group CUDA_PRIMARY_CTX): each device's one
//! shared context, retained and released by count, its flags and state.

use super::Mock;
use cumock_abi::*;
use std::ffi::c_int;

impl PrimaryContextApi for Mock {
    emulate! {
        fn cuDevicePrimaryCtxRetain(d; pctx, dev) {
            pctx.write_key(Some(d.primary_retain(dev)?))
        }

        fn cuDevicePrimaryCtxRelease_v2(d; dev) {
            d.primary_release(dev)
        }

        fn cuDevicePrimaryCtxReset_v2(d; dev) {
            d.primary_reset(dev)
        }

        fn cuDevicePrimaryCtxSetFlags_v2(d; dev, flags) {
            d.primary_set_flags(dev, flags, false)
        }

        /// The first version refuses an active primary context, as the H200 does (probe
        /// api_gaps3, device-deprecated: CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, the flags
        /// kept); `_v2` sets them.
        fn cuDevicePrimaryCtxSetFlags(d; dev, flags) {
            d.primary_set_flags(dev, flags, true)
        }

        fn cuDevicePrimaryCtxGetState(d; dev, flags, active) {
            let (f, a) = d.primary_state(dev)?;
            flags.write(f)?;
            active.write(a as c_int)
        }
    }
}
