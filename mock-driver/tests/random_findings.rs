//! What the random VMM case files (ci/random-cases.py, ci/gpu-random.sh) found the H200
//! doing otherwise than the mock, each checked here in the driver's own terms. The
//! recording: runs/2026-12-03-h200-session16/random.tgz (diff.txt there).

use cuda::exports::*;
use cumock_abi::consts::*;
use cumock_abi::result::*;
use cumock_abi::*;
use std::ptr::null_mut;

fn prop(location_type: i32, handle_types: i32) -> CUmemAllocationProp {
    CUmemAllocationProp {
        type_: CU_MEM_ALLOCATION_TYPE_PINNED,
        requested_handle_types: handle_types,
        location: CUmemLocation {
            type_: location_type,
            id: 0,
        },
        ..Default::default()
    }
}

/// cuMemCreate of memory located on the host that asks for POSIX fd export is refused
/// (67 of 67 such calls on the H200), while the same without the fd type is made (136 of
/// 136), as is device memory with it.
#[test]
fn host_located_memory_cannot_ask_for_a_posix_fd() {
    // Safety: live out-pointers; every handle is made here.
    unsafe {
        assert_eq!(cuInit(0), 0);
        let mut ctx: CUcontext = null_mut();
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
        let g = 2 << 20;
        let fd = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        let mut h: CUmemGenericAllocationHandle = 0;
        let host_fd = prop(CU_MEM_LOCATION_TYPE_HOST, fd);
        assert_eq!(
            cuMemCreate(&mut h, g, &host_fd, 0),
            CUDA_ERROR_INVALID_VALUE
        );
        for p in [
            prop(CU_MEM_LOCATION_TYPE_HOST, 0),
            prop(CU_MEM_LOCATION_TYPE_DEVICE, fd),
        ] {
            assert_eq!(cuMemCreate(&mut h, g, &p, 0), 0);
            assert_eq!(cuMemRelease(h), 0);
        }
    }
}

/// cuMemCreate on a device that does not exist is CUDA_ERROR_INVALID_DEVICE, but with a
/// size no granularity divides the size is refused first (INVALID_VALUE), as the H200 did
/// for every such pair.
#[test]
fn a_bad_size_is_refused_before_a_missing_device() {
    // Safety: live out-pointers.
    unsafe {
        assert_eq!(cuInit(0), 0);
        let g = 2 << 20;
        let mut h: CUmemGenericAllocationHandle = 0;
        for (size, code) in [
            (g, CUDA_ERROR_INVALID_DEVICE),
            (0, CUDA_ERROR_INVALID_VALUE),
            (4096, CUDA_ERROR_INVALID_VALUE),
            (g + 4096, CUDA_ERROR_INVALID_VALUE),
        ] {
            for device in [-1, 7] {
                let mut p = prop(CU_MEM_LOCATION_TYPE_DEVICE, 0);
                p.location.id = device;
                assert_eq!(
                    cuMemCreate(&mut h, size, &p, 0),
                    code,
                    "size {size} device {device}"
                );
            }
        }
    }
}
