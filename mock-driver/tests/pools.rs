//! The stream-ordered allocator through the C exports, where the probe (pools_ipc) does
//! not reach: handles that are not live pools, the CUDA 13 location-based pool calls, the
//! pointer attributes of pool memory before and after its free, exporting a pool, device
//! memory accounting and the leak report. One test: the calls share the process's driver.

use cuda::exports::*;
use cumock_abi::consts::*;
use cumock_abi::result::*;
use cumock_abi::{CUmemLocation, CUmemPoolProps, CUmemoryPool};
use std::ffi::c_void;

const MIB: usize = 1 << 20;

fn props(handle_types: i32) -> CUmemPoolProps {
    CUmemPoolProps {
        alloc_type: CU_MEM_ALLOCATION_TYPE_PINNED,
        handle_types,
        location: CUmemLocation {
            type_: CU_MEM_LOCATION_TYPE_DEVICE,
            id: 0,
        },
        ..Default::default()
    }
}

#[test]
fn pools_through_the_c_exports() {
    // Safety (all calls below): out-pointers point to live locals of the right type; the
    // test is about what the mock does with the values passed.
    unsafe {
        assert_eq!(cuInit(0), 0);
        let mut ctx: cumock_abi::CUcontext = std::ptr::null_mut();
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
        let (mut free0, mut total) = (0usize, 0usize);
        assert_eq!(cuMemGetInfo_v2(&mut free0, &mut total), 0);

        // The CUDA 13 calls by location name the same pools as the device calls.
        let mut def: CUmemoryPool = std::ptr::null_mut();
        assert_eq!(cuDeviceGetDefaultMemPool(&mut def, 0), 0);
        let mut loc = CUmemLocation {
            type_: CU_MEM_LOCATION_TYPE_DEVICE,
            id: 0,
        };
        let mut by_loc: CUmemoryPool = std::ptr::null_mut();
        assert_eq!(
            cuMemGetDefaultMemPool(&mut by_loc, &mut loc, CU_MEM_ALLOCATION_TYPE_PINNED),
            0
        );
        assert_eq!(by_loc, def);
        let mut host = CUmemLocation {
            type_: CU_MEM_LOCATION_TYPE_HOST,
            id: 0,
        };
        // The host has a default pool of its own (page-locked memory), as on the H200
        // (probe pools_ipc, location-pools).
        assert_eq!(
            cuMemGetDefaultMemPool(&mut by_loc, &mut host, CU_MEM_ALLOCATION_TYPE_PINNED),
            0
        );
        assert!(
            !by_loc.is_null() && by_loc != def,
            "the host's pool is its own"
        );

        // A pool of the test's, current for device 0 by location.
        let p = props(CU_MEM_HANDLE_TYPE_NONE);
        let mut pool: CUmemoryPool = std::ptr::null_mut();
        assert_eq!(cuMemPoolCreate(&mut pool, &p), 0);
        assert_eq!(
            cuMemSetMemPool(&mut loc, CU_MEM_ALLOCATION_TYPE_PINNED, pool),
            0
        );
        let mut cur: CUmemoryPool = std::ptr::null_mut();
        assert_eq!(
            cuMemGetMemPool(&mut cur, &mut loc, CU_MEM_ALLOCATION_TYPE_PINNED),
            0
        );
        assert_eq!(cur, pool);

        // Its memory: pointer attributes (the plural call too), accounting.
        let mut a = 0u64;
        assert_eq!(cuMemAllocAsync(&mut a, 3 * MIB, std::ptr::null_mut()), 0);
        let (mut mp, mut size) = (0u64, 0u64);
        let mut attrs = [
            CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
            CU_POINTER_ATTRIBUTE_RANGE_SIZE,
        ];
        let mut data: [*mut c_void; 2] =
            [(&mut mp as *mut u64).cast(), (&mut size as *mut u64).cast()];
        assert_eq!(
            cuPointerGetAttributes(2, attrs.as_mut_ptr(), data.as_mut_ptr(), a + 5),
            0
        );
        assert_eq!((mp, size), (pool as u64, 3 * MIB as u64));
        let mut f = 0usize;
        assert_eq!(cuMemGetInfo_v2(&mut f, &mut total), 0);
        assert_eq!(
            f,
            free0 - 32 * MIB,
            "the pool's chunk is the device's memory"
        );

        // The leak report names what is live.
        let leaks = cuda::diagnostics::leak_report().join("\n");
        assert!(
            leaks.contains("(3145728 bytes") && leaks.contains("never freed (cuMemFreeAsync)"),
            "{leaks}"
        );
        assert!(
            leaks.contains("never destroyed (cuMemPoolDestroy)"),
            "{leaks}"
        );

        // Freed, the memory is no longer the program's.
        assert_eq!(cuMemFreeAsync(a, std::ptr::null_mut()), 0);
        let mut v = 0u64;
        assert_eq!(
            cuPointerGetAttribute(
                (&mut v as *mut u64).cast(),
                CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
                a
            ),
            CUDA_ERROR_INVALID_VALUE
        );
        let (mut base, mut len) = (1u64, 1usize);
        assert_eq!(
            cuMemGetAddressRange_v2(&mut base, &mut len, a),
            CUDA_ERROR_NOT_FOUND
        );
        assert_eq!(
            cuMemFreeAsync(a, std::ptr::null_mut()),
            CUDA_ERROR_INVALID_VALUE
        );

        // Only a pool made with a file-descriptor handle type exports one.
        let mut fd: i32 = -1;
        assert_eq!(
            cuMemPoolExportToShareableHandle(
                (&mut fd as *mut i32).cast(),
                pool,
                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                0
            ),
            CUDA_ERROR_INVALID_VALUE
        );
        let mut fd_pool: CUmemoryPool = std::ptr::null_mut();
        assert_eq!(
            cuMemPoolCreate(
                &mut fd_pool,
                &props(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
            ),
            0
        );
        assert_eq!(
            cuMemPoolExportToShareableHandle(
                (&mut fd as *mut i32).cast(),
                fd_pool,
                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                0
            ),
            0
        );
        assert!(fd >= 0);
        // A pool's fd is no allocation's.
        let mut h = 0u64;
        assert_ne!(
            cuMemImportFromShareableHandle(
                &mut h,
                fd as isize as *mut c_void,
                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
            ),
            0
        );
        libc::close(fd);

        // Destroyed, a pool's handle is refused everywhere; the device's current pool is
        // its default again; the device has its memory back after a synchronisation.
        assert_eq!(cuMemPoolDestroy(pool), 0);
        assert_eq!(cuMemPoolDestroy(fd_pool), 0);
        assert_eq!(cuDeviceGetMemPool(&mut cur, 0), 0);
        assert_eq!(cur, def);
        let mut i = 0i32;
        for bad in [
            pool,
            0xdead_beef as CUmemoryPool,
            usize::MAX as CUmemoryPool,
        ] {
            assert_eq!(
                cuMemPoolGetAttribute(
                    bad,
                    CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC,
                    (&mut i as *mut i32).cast()
                ),
                CUDA_ERROR_INVALID_VALUE
            );
            assert_eq!(cuMemPoolTrimTo(bad, 0), CUDA_ERROR_INVALID_VALUE);
            assert_eq!(cuDeviceSetMemPool(0, bad), CUDA_ERROR_INVALID_VALUE);
            let mut z = 7u64;
            assert_eq!(
                cuMemAllocFromPoolAsync(&mut z, MIB, bad, std::ptr::null_mut()),
                CUDA_ERROR_INVALID_VALUE
            );
            assert_eq!(z, 0);
        }
        assert_eq!(cuCtxSynchronize(), 0);
        assert_eq!(cuMemGetInfo_v2(&mut f, &mut total), 0);
        assert_eq!(f, free0);
        let leaks = cuda::diagnostics::leak_report();
        assert!(
            !leaks
                .iter()
                .any(|l| l.contains("pool") || l.contains("stream-ordered")),
            "{leaks:?}"
        );
    }
}
