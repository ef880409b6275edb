//! cuInit (cuda.h's group CUDA_INITIALIZE): the driver reads its profile and starts.

use super::Mock;
use crate::boundary::drv_any;
use crate::model::error::*;
use cumock_abi::*;
use std::ffi::c_uint;

impl InitializationApi for Mock {
    unsafe fn cuInit(flags: c_uint) -> CuResult<()> {
        drv_any()?.init(flags)
    }
}
