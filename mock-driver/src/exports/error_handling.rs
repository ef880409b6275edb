//! cuGetErrorName and cuGetErrorString (cuda.h's group CUDA_ERROR): the names and
//! messages of result codes, as the real driver gives them (`crate::errors`).

use super::Mock;
use crate::boundary::Out;
use crate::model::error::*;
use cumock_abi::*;
use std::ffi::{c_char, CStr};

impl ErrorHandlingApi for Mock {
    // Both answer before cuInit.
    emulate! {
        fn cuGetErrorName(; error, p_str) {
            text_or_null(p_str, error, crate::error_strings::name(error))
        }

        fn cuGetErrorString(; error, p_str) {
            text_or_null(p_str, error, crate::error_strings::string(error))
        }
    }
}

/// Writes a code's name or message, or, for a value that is not a CUresult, NULL (as the
/// H200 does: probe out-params-on-failure) and CUDA_ERROR_INVALID_VALUE.
fn text_or_null(
    p_str: Out<*const c_char>,
    error: CUresult,
    text: Option<&'static CStr>,
) -> CuResult<()> {
    match text {
        Some(t) => p_str.write(t.as_ptr()),
        None => {
            p_str.write(std::ptr::null())?;
            Err(invalid(format!("{error} is not a CUresult")))
        }
    }
}
