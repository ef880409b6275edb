//! cuInit (cuda.h's group CUDA_INITIALIZE): the driver reads its profile and starts.

use super::Mock;
use crate::boundary::drv_any;
use cumock_abi::*;

impl InitializationApi for Mock {
    emulate! {
        fn cuInit(; flags) {
            drv_any()?.init(flags)
        }
    }
}
