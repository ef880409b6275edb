//! cudaError_t: the runtime's result, its names and strings, how a driver result becomes
//! one, and which errors are sticky.

use crate::generated::CUDA_ERRORS;
use cumock_abi::CUresult;

/// `cudaError_t` (an int-sized C enum).
pub type CudaError = i32;

pub const SUCCESS: CudaError = 0;
pub const INVALID_VALUE: CudaError = 1;
pub const MEMORY_ALLOCATION: CudaError = 2;
pub const INITIALIZATION_ERROR: CudaError = 3;
pub const CUDART_UNLOADING: CudaError = 4;
pub const INVALID_DEVICE_POINTER: CudaError = 17;
pub const INVALID_MEMCPY_DIRECTION: CudaError = 21;
pub const INSUFFICIENT_DRIVER: CudaError = 35;
pub const DEVICES_UNAVAILABLE: CudaError = 46;
pub const NO_DEVICE: CudaError = 100;
pub const INVALID_DEVICE: CudaError = 101;
pub const INVALID_RESOURCE_HANDLE: CudaError = 400;
pub const NOT_READY: CudaError = 600;
pub const INVALID_DEVICE_FUNCTION: CudaError = 98;
pub const NO_KERNEL_IMAGE_FOR_DEVICE: CudaError = 209;
pub const INVALID_SYMBOL: CudaError = 13;
/// cudaErrorSymbolNotFound: the driver's CUDA_ERROR_NOT_FOUND.
pub const SYMBOL_NOT_FOUND: CudaError = 500;
pub const HOST_MEMORY_ALREADY_REGISTERED: CudaError = 712;
pub const HOST_MEMORY_NOT_REGISTERED: CudaError = 713;
pub const NOT_SUPPORTED: CudaError = 801;
/// cudaErrorOperatingSystem: a system call the runtime needs failed.
pub const OPERATING_SYSTEM: CudaError = 304;
pub const UNKNOWN: CudaError = 999;

/// A failed runtime call: the code the program sees, and why (printed when useful).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtError {
    pub code: CudaError,
    pub message: String,
}

pub type RtResult<T> = Result<T, RtError>;

impl RtError {
    pub fn new(code: CudaError, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

pub fn invalid(message: impl Into<String>) -> RtError {
    RtError::new(INVALID_VALUE, message)
}

pub fn not_supported(message: impl Into<String>) -> RtError {
    RtError::new(NOT_SUPPORTED, message)
}

/// The runtime error for a driver result. CUDA numbers the runtime's errors after the
/// driver's (cudaErrorIllegalAddress is 700 as CUDA_ERROR_ILLEGAL_ADDRESS is), so the
/// value carries over when the runtime has a name for it; otherwise it is unknown.
pub fn from_driver(code: CUresult) -> CudaError {
    let code = code as i32;
    if name(code).is_some() {
        code
    } else {
        UNKNOWN
    }
}

pub fn name(code: CudaError) -> Option<&'static str> {
    CUDA_ERRORS.iter().find(|e| e.1 == code).map(|e| e.0)
}

pub fn code(name: &str) -> Option<CudaError> {
    CUDA_ERRORS.iter().find(|e| e.0 == name).map(|e| e.1)
}

/// Errors that corrupt the context: once one happened, every later call that uses that
/// device returns it too, until cudaDeviceReset (the H200 did so after a kernel fault).
pub fn is_sticky(code: CudaError) -> bool {
    matches!(
        code,
        214 // cudaErrorECCUncorrectable
        | 702 // cudaErrorLaunchTimeout
        | 700 // cudaErrorIllegalAddress
        | 710 // cudaErrorAssert
        | 714 // cudaErrorHardwareStackError
        | 715 // cudaErrorIllegalInstruction
        | 716 // cudaErrorMisalignedAddress
        | 717 // cudaErrorInvalidAddressSpace
        | 718 // cudaErrorInvalidPc
        | 719 // cudaErrorLaunchFailure
    )
}

/// cudaGetErrorString's text for codes the driver has no string for.
pub fn fallback_string(code: CudaError) -> &'static str {
    match code {
        SUCCESS => "no error",
        INVALID_VALUE => "invalid argument",
        MEMORY_ALLOCATION => "out of memory",
        INITIALIZATION_ERROR => "initialization error",
        INVALID_DEVICE_POINTER => "invalid device pointer",
        INVALID_MEMCPY_DIRECTION => "invalid copy direction for memcpy",
        INSUFFICIENT_DRIVER => "CUDA driver version is insufficient for CUDA runtime version",
        INVALID_DEVICE_FUNCTION => "invalid device function",
        NO_DEVICE => "no CUDA-capable device is detected",
        INVALID_DEVICE => "invalid device ordinal",
        // What a kernel's device-side launches return (dynamic parallelism), as
        // libcudart's table words them.
        9 => "invalid configuration argument",
        65 => "launch would exceed maximum depth of nested launches",
        69 => "launch failed because launch would exceed cudaLimitDevRuntimePendingLaunchCount",
        _ => "unrecognized error code",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_results_keep_their_number_when_the_runtime_names_it() {
        assert_eq!(from_driver(700), 700);
        assert_eq!(name(700), Some("cudaErrorIllegalAddress"));
        assert_eq!(from_driver(2), MEMORY_ALLOCATION);
        assert_eq!(from_driver(123_456), UNKNOWN);
    }

    #[test]
    fn names_round_trip() {
        for (n, v) in CUDA_ERRORS {
            assert_eq!(code(n), Some(*v), "{n}");
        }
        assert_eq!(code("cudaErrorNotSupported"), Some(NOT_SUPPORTED));
        assert_eq!(name(NOT_READY), Some("cudaErrorNotReady"));
    }
}
