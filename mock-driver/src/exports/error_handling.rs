//! cuGetErrorName and cuGetErrorString (cuda.h's group CUDA_ERROR): the names and
//! messages of result codes, as the real driver gives them (`crate::errors`).

use super::{zero_on_failure, Mock};
use crate::model::error::*;
use cumock_abi::*;
use std::ffi::c_char;

impl ErrorHandlingApi for Mock {
    unsafe fn cuGetErrorName(error: CUresult, p_str: *mut *const c_char) -> CuResult<()> {
        let name = crate::error_strings::name(error)
            .ok_or_else(|| invalid(format!("{error} is not a CUresult")));
        zero_on_failure(p_str, name.map(|n| n.as_ptr()))
    }

    unsafe fn cuGetErrorString(error: CUresult, p_str: *mut *const c_char) -> CuResult<()> {
        let s = crate::error_strings::string(error)
            .ok_or_else(|| invalid(format!("{error} is not a CUresult")));
        zero_on_failure(p_str, s.map(|s| s.as_ptr()))
    }
}
