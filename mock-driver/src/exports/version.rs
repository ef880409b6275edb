//! cuDriverGetVersion (cuda.h's group CUDA_VERSION): the profile's driver version.

use super::Mock;
use crate::boundary::{drv_any, out};
use crate::model::error::*;
use cumock_abi::*;
use std::ffi::c_int;

impl VersionApi for Mock {
    unsafe fn cuDriverGetVersion(version: *mut c_int) -> CuResult<()> {
        out(version, drv_any()?.profile.driver_version)
    }
}
