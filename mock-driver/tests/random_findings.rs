//! What the random VMM case files (ci/random-cases.py, ci/gpu-random.sh) found the H200
//! doing otherwise than the mock, each checked here in the driver's own terms. The
//! recording: runs/2026-12-03-h200-session16/random.tgz (diff.txt there).

#[path = "common/context.rs"]
mod context;
use context::primary_context;
use cuda::exports::*;
use cumock_abi::consts::*;
use cumock_abi::result::*;
use cumock_abi::*;

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
        primary_context();
        let fd = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        let mut h: CUmemGenericAllocationHandle = 0;
        let host_fd = prop(CU_MEM_LOCATION_TYPE_HOST, fd);
        assert_eq!(
            cuMemCreate(&mut h, G, &host_fd, 0),
            CUDA_ERROR_INVALID_VALUE
        );
        for p in [
            prop(CU_MEM_LOCATION_TYPE_HOST, 0),
            prop(CU_MEM_LOCATION_TYPE_DEVICE, fd),
        ] {
            assert_eq!(cuMemCreate(&mut h, G, &p, 0), 0);
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
        let mut h: CUmemGenericAllocationHandle = 0;
        for (size, code) in [
            (G, CUDA_ERROR_INVALID_DEVICE),
            (0, CUDA_ERROR_INVALID_VALUE),
            (4096, CUDA_ERROR_INVALID_VALUE),
            (G + 4096, CUDA_ERROR_INVALID_VALUE),
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

/// The allocation granularity, which the sizes here are counted in.
const G: usize = 2 << 20;
/// What each VMM test below reserves.
const RESERVED: usize = 8 * G;

/// A context on device 0, a reservation of RESERVED and an allocation of `alloc` located
/// at `location_type`, for the VMM tests below.
unsafe fn reserve_and_create(alloc: usize, location_type: i32) -> (CUdeviceptr, u64) {
    primary_context();
    let mut va: CUdeviceptr = 0;
    assert_eq!(cuMemAddressReserve(&mut va, RESERVED, 0, 0, 0), 0);
    let mut h: CUmemGenericAllocationHandle = 0;
    assert_eq!(cuMemCreate(&mut h, alloc, &prop(location_type, 0), 0), 0);
    (va, h)
}

/// cuMemUnmap has no alignment rule: a range starting in a reservation that cuts no
/// mapping is unmapped whatever its address (random-1-007 line 72 `unmap va6+g+4096 3g`,
/// nothing mapped there: SUCCESS; 85 such calls on the H200, all SUCCESS), and the
/// mappings wholly inside it go (random-4-015 line 16 `unmap va2+100 6g` over the mapping
/// at va2+g; random-5-015 line 55 `unmap va7+100 5g`, after which line 65 `get-access
/// va7+g` is INVALID_VALUE). A range that cuts a mapping is still refused (golden
/// unmap-size-zero line 8 `unmap va+4096 2g`; 17 such unaligned calls in the random cases).
#[test]
fn unmap_takes_any_range_that_cuts_no_mapping() {
    // Safety: live out-pointers; the reservation and handle are made here.
    unsafe {
        let (va, h) = reserve_and_create(4 * G, CU_MEM_LOCATION_TYPE_DEVICE);
        assert_eq!(cuMemUnmap(va + G as u64 + 4096, 3 * G), 0, "nothing mapped");
        assert_eq!(cuMemMap(va + G as u64, 4 * G, 0, h, 0), 0);
        assert_eq!(
            cuMemUnmap(va + G as u64 + 4096, 4 * G),
            CUDA_ERROR_INVALID_VALUE,
            "cuts the mapping's first page"
        );
        assert_eq!(cuMemUnmap(va + 100, 6 * G), 0, "covers the whole mapping");
        let mut flags = 0u64;
        let loc = CUmemLocation {
            type_: CU_MEM_LOCATION_TYPE_DEVICE,
            id: 0,
        };
        assert_eq!(
            cuMemGetAccess(&mut flags, &loc, va + G as u64),
            CUDA_ERROR_INVALID_VALUE,
            "the mapping is gone"
        );
        assert_eq!(
            cuMemMap(va + G as u64, 4 * G, 0, h, 0),
            0,
            "the range is free again"
        );
        assert_eq!(cuMemUnmap(va + G as u64, 4 * G), 0);
        assert_eq!(cuMemUnmap(va, 0), CUDA_ERROR_INVALID_VALUE, "size 0");
        assert_eq!(cuMemRelease(h), 0);
        assert_eq!(cuMemAddressFree(va, RESERVED), 0);
    }
}

/// cuMemMap refuses a partial map (an offset, or a size other than the allocation's:
/// NOT_SUPPORTED) before it looks at the address's alignment (random-1-002 line 45 `map
/// va13+4096 size=4g handle=h9 offset=4096`: NOT_SUPPORTED; 28 such calls), but a NULL
/// address, a size of 0, flags or a handle of 0 come first (random-1-006 line 11 `map 0
/// size=4096 handle=h3 offset=2g`: INVALID_VALUE; every such call in the random cases).
#[test]
fn a_partial_map_is_refused_before_a_misaligned_address() {
    // Safety: live out-pointers; the reservation and handle are made here.
    unsafe {
        let (va, h) = reserve_and_create(4 * G, CU_MEM_LOCATION_TYPE_DEVICE);
        let off = va + 4096;
        for (ptr, size, offset, handle, flags, code) in [
            (off, 4 * G, 4096, h, 0, CUDA_ERROR_NOT_SUPPORTED),
            (off, G, 0, h, 0, CUDA_ERROR_NOT_SUPPORTED),
            (off, 8 * G, 0, h, 0, CUDA_ERROR_NOT_SUPPORTED),
            (off, 4 * G, 0, h, 0, CUDA_ERROR_INVALID_VALUE),
            (0, 4096, 2 * G, h, 0, CUDA_ERROR_INVALID_VALUE),
            (va, 0, 4096, h, 0, CUDA_ERROR_INVALID_VALUE),
            (off, G, G, h, 1, CUDA_ERROR_INVALID_VALUE),
            (off, G, 0, 0, 0, CUDA_ERROR_INVALID_VALUE),
        ] {
            assert_eq!(
                cuMemMap(ptr, size, offset, handle, flags),
                code,
                "map {ptr:#x} size {size:#x} offset {offset:#x} flags {flags}"
            );
        }
        assert_eq!(cuMemRelease(h), 0);
        assert_eq!(cuMemAddressFree(va, RESERVED), 0);
    }
}

/// cuMemGetAddressRange in a mapping of host-located memory answers the mapping's size
/// with a NULL base (random-1-033 line 116 `range va10+41g+100` in the mapping of h15,
/// created location=host: base=0 size=4MiB; 26 of 26 such calls), where device memory's
/// base is the mapping's start (309 of 309).
#[test]
fn a_host_located_mapping_has_a_null_base() {
    // Safety: live out-pointers; the reservation and handles are made here.
    unsafe {
        let (va, host) = reserve_and_create(2 * G, CU_MEM_LOCATION_TYPE_HOST);
        let mut dev: CUmemGenericAllocationHandle = 0;
        let p = prop(CU_MEM_LOCATION_TYPE_DEVICE, 0);
        assert_eq!(cuMemCreate(&mut dev, 2 * G, &p, 0), 0);
        let rw = CUmemAccessDesc {
            location: CUmemLocation {
                type_: CU_MEM_LOCATION_TYPE_DEVICE,
                id: 0,
            },
            flags: CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        let dev_at = va + 4 * G as u64;
        for (at, h) in [(va, host), (dev_at, dev)] {
            assert_eq!(cuMemMap(at, 2 * G, 0, h, 0), 0);
            assert_eq!(cuMemSetAccess(at, 2 * G, &rw, 1), 0);
        }
        let (mut base, mut size) = (1u64, 0usize);
        assert_eq!(
            cuMemGetAddressRange_v2(&mut base, &mut size, va + G as u64 + 100),
            0
        );
        assert_eq!((base, size), (0, 2 * G));
        assert_eq!(
            cuMemGetAddressRange_v2(&mut base, &mut size, dev_at + 100),
            0
        );
        assert_eq!((base, size), (dev_at, 2 * G));
        for (at, h) in [(va, host), (dev_at, dev)] {
            assert_eq!(cuMemUnmap(at, 2 * G), 0);
            assert_eq!(cuMemRelease(h), 0);
        }
        assert_eq!(cuMemAddressFree(va, RESERVED), 0);
    }
}
