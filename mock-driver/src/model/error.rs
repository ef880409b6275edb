//! The model's error: a CUDA result code, and what the program did wrong.

use cumock_abi::{result::*, CUresult};
use std::borrow::Cow;

/// How much a diagnostic matters to the program's author.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// An ordinary error the real driver returns too (a bad size, say); printed only when
    /// the program asks for misuse messages.
    Misuse,
    /// The real driver crashes here (a bogus handle, a handle used after its last
    /// release): the mock returns an error instead, and always says why on stderr.
    WouldCrash,
    /// The mock does not emulate the function; said once per function, never counted as
    /// the program's misuse.
    NotEmulated,
    /// The host cannot give what the program asked for (page-locked memory past physical
    /// memory, device memory past `CUMOCK_DEVICE_MEMORY`): always said, since the program
    /// may have done nothing wrong and the user may need to give the mock more.
    HostLimit,
    /// The model has said it already (a module's load failure, once per module and
    /// cause, whatever the settings): the boundary does not repeat it, and counts it as
    /// the program's misuse as it counts `Misuse`.
    Said,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CuError {
    pub code: CUresult,
    pub message: Cow<'static, str>,
    pub severity: Severity,
}

pub type CuResult<T> = Result<T, CuError>;

impl CuError {
    pub fn new(code: CUresult, message: impl Into<Cow<'static, str>>) -> Self {
        Self {
            code,
            message: message.into(),
            severity: Severity::Misuse,
        }
    }

    pub fn would_crash(message: impl Into<Cow<'static, str>>) -> Self {
        Self {
            code: CUDA_ERROR_INVALID_VALUE,
            message: message.into(),
            severity: Severity::WouldCrash,
        }
    }
}

pub fn invalid(message: impl Into<Cow<'static, str>>) -> CuError {
    CuError::new(CUDA_ERROR_INVALID_VALUE, message)
}

pub fn not_supported(message: impl Into<Cow<'static, str>>) -> CuError {
    CuError::new(CUDA_ERROR_NOT_SUPPORTED, message)
}

pub fn invalid_context(message: impl Into<Cow<'static, str>>) -> CuError {
    CuError::new(CUDA_ERROR_INVALID_CONTEXT, message)
}

pub fn invalid_device(message: impl Into<Cow<'static, str>>) -> CuError {
    CuError::new(CUDA_ERROR_INVALID_DEVICE, message)
}

pub fn invalid_handle(message: impl Into<Cow<'static, str>>) -> CuError {
    CuError::new(CUDA_ERROR_INVALID_HANDLE, message)
}

pub fn out_of_memory(message: impl Into<Cow<'static, str>>) -> CuError {
    CuError::new(CUDA_ERROR_OUT_OF_MEMORY, message)
}

/// CUDA_ERROR_OUT_OF_MEMORY because the host's means are exhausted (see `limits`).
pub fn host_limit(message: impl Into<Cow<'static, str>>) -> CuError {
    CuError {
        severity: Severity::HostLimit,
        ..out_of_memory(message)
    }
}
