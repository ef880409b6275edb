//! CUDA dynamic parallelism's device runtime (CDP2, CUDA 12 and later): the functions
//! nvcc's code calls for a kernel's `<<<...>>>`, device-side streams, events,
//! `cudaMalloc` and errors. NVIDIA ships them in libcudadevrt.a as SASS, which the mock
//! cannot run; the executor implements each itself (`executor/devrt.rs`) when a module
//! declares it without a body. Only the names listed here are taken.

/// A device-runtime function the executor implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DevRt {
    GetParameterBuffer,
    GetParameterBufferV2,
    LaunchDevice,
    LaunchDeviceV2,
    StreamCreateWithFlags,
    StreamDestroy,
    StreamWaitEvent,
    EventCreateWithFlags,
    EventRecord,
    EventRecordWithFlags,
    EventDestroy,
    GetLastError,
    PeekAtLastError,
    GetErrorString,
    GetErrorName,
    Malloc,
    Free,
    DeviceGetAttribute,
    GetDevice,
    MemcpyAsync,
    MemsetAsync,
    Memcpy2DAsync,
    Memcpy3DAsync,
    Memset2DAsync,
    Memset3DAsync,
    DeviceGetLimit,
    DeviceGetCacheConfig,
    DeviceGetSharedMemConfig,
    GetDeviceCount,
    FuncGetAttributes,
    RuntimeGetVersion,
    OccupancyMaxActiveBlocksPerMultiprocessor,
    OccupancyMaxActiveBlocksPerMultiprocessorWithFlags,
    /// `cudaGraphLaunch(exec, stream)` of a device graph: the driver's
    /// ([`crate::DeviceRuntime::graph_launch`]).
    GraphLaunch,
}

/// Each function: its name in PTX, what it is, its arguments' sizes and its result's
/// size, as cuda_device_runtime_api.h declares them (a `dim3` is 12 bytes, pointers,
/// handles and `size_t` 8, `int`, `unsigned` and `cudaError_t` 4, a `cudaPitchedPtr`
/// 32 and a `cudaExtent` 24). nvcc 13 calls the `__cudaCDP2` names; the PTX ISA's
/// section on the device runtime writes the launch pair without the prefix, as
/// hand-written PTX does. The `_ptsz` names (`--default-stream per-thread`) are the
/// same calls: on the device the NULL stream is the block's either way.
pub(crate) const FUNCTIONS: &[(&str, DevRt, &[u32], u32)] = &[
    (
        "__cudaCDP2GetParameterBuffer",
        DevRt::GetParameterBuffer,
        &[8, 8],
        8,
    ),
    (
        "cudaGetParameterBuffer",
        DevRt::GetParameterBuffer,
        &[8, 8],
        8,
    ),
    (
        "__cudaCDP2GetParameterBufferV2",
        DevRt::GetParameterBufferV2,
        &[8, 12, 12, 4],
        8,
    ),
    (
        "cudaGetParameterBufferV2",
        DevRt::GetParameterBufferV2,
        &[8, 12, 12, 4],
        8,
    ),
    (
        "__cudaCDP2LaunchDevice",
        DevRt::LaunchDevice,
        &[8, 8, 12, 12, 4, 8],
        4,
    ),
    (
        "cudaLaunchDevice",
        DevRt::LaunchDevice,
        &[8, 8, 12, 12, 4, 8],
        4,
    ),
    (
        "__cudaCDP2LaunchDeviceV2",
        DevRt::LaunchDeviceV2,
        &[8, 8],
        4,
    ),
    ("cudaLaunchDeviceV2", DevRt::LaunchDeviceV2, &[8, 8], 4),
    (
        "__cudaCDP2StreamCreateWithFlags",
        DevRt::StreamCreateWithFlags,
        &[8, 4],
        4,
    ),
    ("__cudaCDP2StreamDestroy", DevRt::StreamDestroy, &[8], 4),
    (
        "__cudaCDP2StreamWaitEvent",
        DevRt::StreamWaitEvent,
        &[8, 8, 4],
        4,
    ),
    (
        "__cudaCDP2EventCreateWithFlags",
        DevRt::EventCreateWithFlags,
        &[8, 4],
        4,
    ),
    ("__cudaCDP2EventRecord", DevRt::EventRecord, &[8, 8], 4),
    (
        "__cudaCDP2EventRecordWithFlags",
        DevRt::EventRecordWithFlags,
        &[8, 8, 4],
        4,
    ),
    ("__cudaCDP2EventDestroy", DevRt::EventDestroy, &[8], 4),
    ("__cudaCDP2GetLastError", DevRt::GetLastError, &[], 4),
    ("__cudaCDP2PeekAtLastError", DevRt::PeekAtLastError, &[], 4),
    ("__cudaCDP2GetErrorString", DevRt::GetErrorString, &[4], 8),
    ("__cudaCDP2GetErrorName", DevRt::GetErrorName, &[4], 8),
    ("__cudaCDP2Malloc", DevRt::Malloc, &[8, 8], 4),
    ("__cudaCDP2Free", DevRt::Free, &[8], 4),
    (
        "__cudaCDP2DeviceGetAttribute",
        DevRt::DeviceGetAttribute,
        &[8, 4, 4],
        4,
    ),
    ("__cudaCDP2GetDevice", DevRt::GetDevice, &[8], 4),
    (
        "__cudaCDP2MemcpyAsync",
        DevRt::MemcpyAsync,
        &[8, 8, 8, 4, 8],
        4,
    ),
    (
        "__cudaCDP2MemsetAsync",
        DevRt::MemsetAsync,
        &[8, 4, 8, 8],
        4,
    ),
    (
        "__cudaCDP2LaunchDevice_ptsz",
        DevRt::LaunchDevice,
        &[8, 8, 12, 12, 4, 8],
        4,
    ),
    (
        "__cudaCDP2LaunchDeviceV2_ptsz",
        DevRt::LaunchDeviceV2,
        &[8, 8],
        4,
    ),
    (
        "__cudaCDP2StreamWaitEvent_ptsz",
        DevRt::StreamWaitEvent,
        &[8, 8, 4],
        4,
    ),
    ("__cudaCDP2EventRecord_ptsz", DevRt::EventRecord, &[8, 8], 4),
    (
        "__cudaCDP2EventRecordWithFlags_ptsz",
        DevRt::EventRecordWithFlags,
        &[8, 8, 4],
        4,
    ),
    (
        "__cudaCDP2MemcpyAsync_ptsz",
        DevRt::MemcpyAsync,
        &[8, 8, 8, 4, 8],
        4,
    ),
    (
        "__cudaCDP2MemsetAsync_ptsz",
        DevRt::MemsetAsync,
        &[8, 4, 8, 8],
        4,
    ),
    (
        "__cudaCDP2Memcpy2DAsync",
        DevRt::Memcpy2DAsync,
        &[8, 8, 8, 8, 8, 8, 4, 8],
        4,
    ),
    (
        "__cudaCDP2Memcpy2DAsync_ptsz",
        DevRt::Memcpy2DAsync,
        &[8, 8, 8, 8, 8, 8, 4, 8],
        4,
    ),
    ("__cudaCDP2Memcpy3DAsync", DevRt::Memcpy3DAsync, &[8, 8], 4),
    (
        "__cudaCDP2Memcpy3DAsync_ptsz",
        DevRt::Memcpy3DAsync,
        &[8, 8],
        4,
    ),
    (
        "__cudaCDP2Memset2DAsync",
        DevRt::Memset2DAsync,
        &[8, 8, 4, 8, 8, 8],
        4,
    ),
    (
        "__cudaCDP2Memset2DAsync_ptsz",
        DevRt::Memset2DAsync,
        &[8, 8, 4, 8, 8, 8],
        4,
    ),
    (
        "__cudaCDP2Memset3DAsync",
        DevRt::Memset3DAsync,
        &[32, 4, 24, 8],
        4,
    ),
    (
        "__cudaCDP2Memset3DAsync_ptsz",
        DevRt::Memset3DAsync,
        &[32, 4, 24, 8],
        4,
    ),
    (
        "__cudaCDP2DeviceGetLimit",
        DevRt::DeviceGetLimit,
        &[8, 4],
        4,
    ),
    (
        "__cudaCDP2DeviceGetCacheConfig",
        DevRt::DeviceGetCacheConfig,
        &[8],
        4,
    ),
    (
        "__cudaCDP2DeviceGetSharedMemConfig",
        DevRt::DeviceGetSharedMemConfig,
        &[8],
        4,
    ),
    ("__cudaCDP2GetDeviceCount", DevRt::GetDeviceCount, &[8], 4),
    (
        "__cudaCDP2FuncGetAttributes",
        DevRt::FuncGetAttributes,
        &[8, 8],
        4,
    ),
    (
        "__cudaCDP2RuntimeGetVersion",
        DevRt::RuntimeGetVersion,
        &[8],
        4,
    ),
    (
        "__cudaCDP2OccupancyMaxActiveBlocksPerMultiprocessor",
        DevRt::OccupancyMaxActiveBlocksPerMultiprocessor,
        &[8, 8, 4, 8],
        4,
    ),
    (
        "__cudaCDP2OccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
        DevRt::OccupancyMaxActiveBlocksPerMultiprocessorWithFlags,
        &[8, 8, 4, 8, 4],
        4,
    ),
    // `cudaGraphLaunch_ptsz` is an inline function calling this one (the header).
    ("cudaGraphLaunch", DevRt::GraphLaunch, &[8, 8], 4),
];

/// Whether `name` is a device-runtime function the executor implements.
pub fn is_device_runtime(name: &str) -> bool {
    FUNCTIONS.iter().any(|f| f.0 == name)
}

/// Whether `name` is the device runtime's `cudaGraphLaunch` (a device graph launch).
pub(crate) fn launches_graphs(name: &str) -> bool {
    FUNCTIONS
        .iter()
        .any(|f| f.0 == name && f.1 == DevRt::GraphLaunch)
}

/// Whether `name` is one of the device runtime's functions that launch a kernel (CUDA
/// dynamic parallelism proper, which a device graph's kernels may not use).
pub(crate) fn launches_kernels(name: &str) -> bool {
    FUNCTIONS.iter().any(|f| {
        f.0 == name
            && matches!(
                f.1,
                DevRt::GetParameterBuffer
                    | DevRt::GetParameterBufferV2
                    | DevRt::LaunchDevice
                    | DevRt::LaunchDeviceV2
            )
    })
}

/// `cudaError_t` values the device runtime returns.
pub(crate) mod error {
    pub const SUCCESS: i32 = 0;
    pub const INVALID_VALUE: i32 = 1;
    pub const MEMORY_ALLOCATION: i32 = 2;
    pub const INVALID_CONFIGURATION: i32 = 9;
    pub const INVALID_PITCH_VALUE: i32 = 12;
    pub const INVALID_MEMCPY_DIRECTION: i32 = 21;
    pub const LAUNCH_PENDING_COUNT_EXCEEDED: i32 = 69;
    pub const INVALID_DEVICE_FUNCTION: i32 = 98;
    pub const INVALID_DEVICE: i32 = 101;
    pub const UNSUPPORTED_LIMIT: i32 = 215;
    pub const INVALID_RESOURCE_HANDLE: i32 = 400;
    pub const NOT_SUPPORTED: i32 = 801;
}

/// `cudaGetErrorName` and `cudaGetErrorString` of the codes a kernel meets on the
/// device: what the device runtime returns, and the faults (libcudart's texts).
const ERRORS: &[(i32, &str, &str)] = &[
    (0, "cudaSuccess", "no error"),
    (1, "cudaErrorInvalidValue", "invalid argument"),
    (2, "cudaErrorMemoryAllocation", "out of memory"),
    (
        9,
        "cudaErrorInvalidConfiguration",
        "invalid configuration argument",
    ),
    (
        65,
        "cudaErrorLaunchMaxDepthExceeded",
        "launch would exceed maximum depth of nested launches",
    ),
    (
        69,
        "cudaErrorLaunchPendingCountExceeded",
        "launch failed because launch would exceed cudaLimitDevRuntimePendingLaunchCount",
    ),
    (
        98,
        "cudaErrorInvalidDeviceFunction",
        "invalid device function",
    ),
    (12, "cudaErrorInvalidPitchValue", "invalid pitch argument"),
    (
        21,
        "cudaErrorInvalidMemcpyDirection",
        "invalid copy direction for memcpy",
    ),
    (101, "cudaErrorInvalidDevice", "invalid device ordinal"),
    (
        215,
        "cudaErrorUnsupportedLimit",
        "limit is not supported on this architecture",
    ),
    (
        400,
        "cudaErrorInvalidResourceHandle",
        "invalid resource handle",
    ),
    (
        700,
        "cudaErrorIllegalAddress",
        "an illegal memory access was encountered",
    ),
    (
        702,
        "cudaErrorLaunchTimeout",
        "the launch timed out and was terminated",
    ),
    (710, "cudaErrorAssert", "device-side assert triggered"),
    (
        715,
        "cudaErrorIllegalInstruction",
        "an illegal instruction was encountered",
    ),
    (716, "cudaErrorMisalignedAddress", "misaligned address"),
    (719, "cudaErrorLaunchFailure", "unspecified launch failure"),
    (801, "cudaErrorNotSupported", "operation not supported"),
    (999, "cudaErrorUnknown", "unknown error"),
];

/// The name (`cudaGetErrorName`) or text (`cudaGetErrorString`) of `code`; codes
/// outside the table get the answer for a code the runtime does not know.
pub(crate) fn error_text(code: i32, name: bool) -> &'static str {
    match ERRORS.iter().find(|e| e.0 == code) {
        Some(e) if name => e.1,
        Some(e) => e.2,
        // cudaGetErrorName and cudaGetErrorString both answer so (the runtime API's
        // documentation).
        None => "unrecognized error code",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_texts_are_libcudarts_and_unknown_codes_say_so() {
        assert_eq!(error_text(65, true), "cudaErrorLaunchMaxDepthExceeded");
        assert_eq!(
            error_text(700, false),
            "an illegal memory access was encountered"
        );
        assert_eq!(error_text(12345, false), "unrecognized error code");
        assert_eq!(error_text(12345, true), "unrecognized error code");
    }

    #[test]
    fn only_the_listed_functions_are_the_device_runtimes() {
        assert!(is_device_runtime("__cudaCDP2LaunchDeviceV2"));
        assert!(is_device_runtime("cudaLaunchDevice"));
        assert!(is_device_runtime("__cudaCDP2DeviceGetLimit"));
        assert!(is_device_runtime("__cudaCDP2Memset3DAsync_ptsz"));
        assert!(is_device_runtime("cudaGraphLaunch"));
        assert!(!is_device_runtime("cudaGraphKernelNodeSetParam"));
        assert!(!is_device_runtime("cudaDeviceSynchronize"));
    }
}
