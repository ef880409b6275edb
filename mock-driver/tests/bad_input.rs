//! The bad-input matrix: every emulated VMM, memory, context and device function called
//! with NULL out- and in-pointers, bogus and released handles, misaligned addresses and
//! sizes, zero sizes, sizes that wrap the address space, out-of-range enum values and
//! huge counts. Each call returns a result code; none crashes; and after the whole
//! matrix the mock still works and has leaked nothing.

use cuda::exports::*;
use cumock_abi::result::*;
use cumock_abi::{CUmemAccessDesc, CUmemAllocationProp, CUmemLocation};
use std::ffi::c_void;

const G: u64 = 2 << 20;

/// Every value a result may take: a known CUresult.
fn check(code: u32, what: &str, count: &mut u64) {
    *count += 1;
    assert!(
        cumock_abi::result_name(code).is_some(),
        "{what} returned {code}, not a CUresult"
    );
}

#[test]
fn every_bad_argument_gets_an_error_code_and_nothing_crashes() {
    let mut n = 0u64;
    let null = std::ptr::null_mut::<c_void>();
    // Safety (all calls below): pointers are NULL or point to live locals of the right
    // type and size; the matrix is about what the mock does with the values.
    unsafe {
        assert_eq!(cuInit(0), 0);
        let mut ctx: cumock_abi::CUcontext = std::ptr::null_mut();
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
        let mut free0 = 0usize;
        let mut total = 0usize;
        assert_eq!(cuMemGetInfo_v2(&mut free0, &mut total), 0);

        // Live objects to aim bad arguments at, and a released handle.
        let mut va = 0u64;
        assert_eq!(cuMemAddressReserve(&mut va, (8 * G) as usize, 0, 0, 0), 0);
        let good = CUmemAllocationProp {
            type_: 1,
            requested_handle_types: 1,
            location: CUmemLocation { type_: 1, id: 0 },
            ..Default::default()
        };
        let mut h = 0u64;
        assert_eq!(cuMemCreate(&mut h, G as usize, &good, 0), 0);
        let mut released = 0u64;
        assert_eq!(cuMemCreate(&mut released, G as usize, &good, 0), 0);
        assert_eq!(cuMemRelease(released), 0);
        assert_eq!(cuMemMap(va, G as usize, 0, h, 0), 0);

        let addrs = [
            0,
            1,
            va + 4096,
            va + 3 * G,
            va + 8 * G,
            u64::MAX - G + 1,
            u64::MAX,
            0xffff_8000_0000_0000,
            0x1000,
        ];
        let sizes = [
            0u64,
            1,
            G - 1,
            G + 4096,
            16 * G,
            u64::MAX,
            1 << 63,
            u64::MAX - va + 1,
        ];
        let handles = [
            0u64,
            0xdead_beef,
            released,
            u64::MAX,
            h ^ 1,
            0x00c0_da00_ffff_ffff,
        ];
        let enums = [-1i32, 0, 2, 5, 7, 0x7fff_ffff, i32::MIN];
        let flags = [1u64, 2, u64::MAX];
        let counts = [0usize, 2, 1 << 40, usize::MAX];
        let mut buf = vec![0u8; 4096];

        for &s in &sizes {
            for &al in &[0u64, 3, 4096, 1 << 62, u64::MAX] {
                for &a in &addrs {
                    let mut p = 0u64;
                    let r = cuMemAddressReserve(&mut p, s as usize, al as usize, a, 0);
                    check(r, "cuMemAddressReserve", &mut n);
                    if r == 0 {
                        check(cuMemAddressFree(p, s as usize), "cuMemAddressFree", &mut n);
                    }
                }
            }
            for &a in &addrs {
                check(cuMemAddressFree(a, s as usize), "cuMemAddressFree", &mut n);
                check(cuMemUnmap(a, s as usize), "cuMemUnmap", &mut n);
                for &hh in &handles {
                    check(cuMemMap(a, s as usize, 0, hh, 0), "cuMemMap", &mut n);
                    check(
                        cuMemMap(a, s as usize, s as usize, h, 0),
                        "cuMemMap offset",
                        &mut n,
                    );
                }
                let d = CUmemAccessDesc {
                    location: CUmemLocation { type_: 1, id: 0 },
                    flags: 3,
                };
                for &c in &counts {
                    check(
                        cuMemSetAccess(a, s as usize, &d, c.min(1)),
                        "cuMemSetAccess",
                        &mut n,
                    );
                    check(
                        cuMemSetAccess(a, s as usize, std::ptr::null(), c),
                        "cuMemSetAccess NULL",
                        &mut n,
                    );
                }
                // Copies: host buffers are 4 KiB, so sizes above that only reach the mock
                // where it refuses them before touching the host side (unmapped or wrapping).
                let len = (s as usize).min(buf.len());
                check(
                    cuMemcpyHtoD_v2(a, buf.as_ptr().cast(), len),
                    "cuMemcpyHtoD",
                    &mut n,
                );
                check(
                    cuMemcpyDtoH_v2(buf.as_mut_ptr().cast(), a, len),
                    "cuMemcpyDtoH",
                    &mut n,
                );
                check(cuMemcpyDtoD_v2(a, va, s as usize), "cuMemcpyDtoD", &mut n);
                check(
                    cuMemcpyHtoD_v2(a, std::ptr::null(), s as usize),
                    "cuMemcpyHtoD NULL",
                    &mut n,
                );
                check(cuMemsetD8_v2(a, 1, s as usize), "cuMemsetD8", &mut n);
                check(cuMemsetD16_v2(a, 1, s as usize), "cuMemsetD16", &mut n);
                check(cuMemsetD32_v2(a, 1, s as usize), "cuMemsetD32", &mut n);
            }
            for &e in &enums {
                let props = [
                    CUmemAllocationProp { type_: e, ..good },
                    CUmemAllocationProp {
                        location: CUmemLocation { type_: e, id: 0 },
                        ..good
                    },
                    CUmemAllocationProp {
                        location: CUmemLocation { type_: 1, id: e },
                        ..good
                    },
                    CUmemAllocationProp {
                        requested_handle_types: e,
                        ..good
                    },
                ];
                for p in &props {
                    let mut hh = 0u64;
                    let r = cuMemCreate(&mut hh, s as usize, p, 0);
                    check(r, "cuMemCreate", &mut n);
                    if r == 0 {
                        check(cuMemRelease(hh), "cuMemRelease", &mut n);
                    }
                    let mut g = 0usize;
                    check(
                        cuMemGetAllocationGranularity(&mut g, p, e),
                        "cuMemGetAllocationGranularity",
                        &mut n,
                    );
                }
            }
            for &f in &flags {
                let mut hh = 0u64;
                check(
                    cuMemCreate(&mut hh, s as usize, &good, f),
                    "cuMemCreate flags",
                    &mut n,
                );
                let mut p = 0u64;
                check(
                    cuMemAddressReserve(&mut p, s as usize, 0, 0, f),
                    "cuMemAddressReserve flags",
                    &mut n,
                );
            }
        }
        for &hh in &handles {
            check(cuMemRelease(hh), "cuMemRelease", &mut n);
            let mut p = CUmemAllocationProp::default();
            check(
                cuMemGetAllocationPropertiesFromHandle(&mut p, hh),
                "props",
                &mut n,
            );
            for &e in &enums {
                let mut fd = -1i32;
                check(
                    cuMemExportToShareableHandle((&mut fd as *mut i32).cast(), hh, e, 0),
                    "export",
                    &mut n,
                );
                let mut hi = 0u64;
                check(
                    cuMemImportFromShareableHandle(&mut hi, e as isize as *mut c_void, e),
                    "import",
                    &mut n,
                );
            }
        }
        for &a in &addrs {
            for &e in &enums {
                let loc = CUmemLocation { type_: e, id: e };
                let mut f = 0u64;
                check(cuMemGetAccess(&mut f, &loc, a), "cuMemGetAccess", &mut n);
                let d = CUmemAccessDesc {
                    location: CUmemLocation { type_: 1, id: e },
                    flags: e,
                };
                check(
                    cuMemSetAccess(va, G as usize, &d, 1),
                    "cuMemSetAccess enums",
                    &mut n,
                );
                let mut v = [0u64; 2];
                check(
                    cuPointerGetAttribute(v.as_mut_ptr().cast(), e, a),
                    "cuPointerGetAttribute",
                    &mut n,
                );
                let mut out = v.as_mut_ptr().cast::<c_void>();
                check(
                    cuPointerGetAttributes(1, &mut { e }, &mut out, a),
                    "cuPointerGetAttributes",
                    &mut n,
                );
                let mut i = 0i32;
                check(
                    cuDeviceGetAttribute(&mut i, e, 0),
                    "cuDeviceGetAttribute",
                    &mut n,
                );
                check(
                    cuDeviceGetAttribute(&mut i, 1, e),
                    "cuDeviceGetAttribute device",
                    &mut n,
                );
                let mut name = [0i8; 8];
                check(
                    cuDeviceGetName(name.as_mut_ptr(), e, 0),
                    "cuDeviceGetName",
                    &mut n,
                );
                let mut dev = 0;
                check(cuDeviceGet(&mut dev, e), "cuDeviceGet", &mut n);
                let mut c: cumock_abi::CUcontext = std::ptr::null_mut();
                check(cuCtxCreate_v2(&mut c, e as u32, 0), "cuCtxCreate", &mut n);
                if !c.is_null() {
                    check(cuCtxDestroy_v2(c), "cuCtxDestroy", &mut n);
                }
                let mut s: *const std::ffi::c_char = std::ptr::null();
                check(cuGetErrorName(e as u32, &mut s), "cuGetErrorName", &mut n);
            }
            let mut hh = 0u64;
            check(
                cuMemRetainAllocationHandle(&mut hh, a as *mut c_void),
                "retain",
                &mut n,
            );
            if hh != 0 {
                check(cuMemRelease(hh), "release retained", &mut n);
            }
            let (mut b, mut sz) = (0u64, 0usize);
            check(
                cuMemGetAddressRange_v2(&mut b, &mut sz, a),
                "cuMemGetAddressRange",
                &mut n,
            );
            check(cuMemFree_v2(a), "cuMemFree", &mut n);
            check(cuCtxSetCurrent(a as _), "cuCtxSetCurrent bogus", &mut n);
            check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent", &mut n);
            check(cuCtxDestroy_v2(a as _), "cuCtxDestroy bogus", &mut n);
            check(
                cuStreamSynchronize(a as _),
                "cuStreamSynchronize bogus",
                &mut n,
            );
            check(
                cuEventRecord(a as _, std::ptr::null_mut()),
                "cuEventRecord bogus",
                &mut n,
            );
        }
        // NULL out-pointers everywhere they are taken.
        for r in [
            cuMemAddressReserve(std::ptr::null_mut(), G as usize, 0, 0, 0),
            cuMemCreate(std::ptr::null_mut(), G as usize, &good, 0),
            cuMemCreate(&mut 0, G as usize, std::ptr::null(), 0),
            cuMemGetAccess(std::ptr::null_mut(), &CUmemLocation { type_: 1, id: 0 }, va),
            cuMemGetAccess(&mut 0, std::ptr::null(), va),
            cuMemExportToShareableHandle(null, h, 1, 0),
            cuMemImportFromShareableHandle(std::ptr::null_mut(), null, 1),
            cuMemRetainAllocationHandle(std::ptr::null_mut(), va as *mut c_void),
            cuMemGetAllocationPropertiesFromHandle(std::ptr::null_mut(), h),
            cuMemGetAllocationGranularity(std::ptr::null_mut(), &good, 0),
            cuMemGetInfo_v2(std::ptr::null_mut(), &mut 0),
            cuMemAlloc_v2(std::ptr::null_mut(), 16),
            cuDeviceGetCount(std::ptr::null_mut()),
            cuDeviceGet(std::ptr::null_mut(), 0),
            cuDriverGetVersion(std::ptr::null_mut()),
            cuCtxGetCurrent(std::ptr::null_mut()),
            cuCtxGetDevice(std::ptr::null_mut()),
            cuDevicePrimaryCtxRetain(std::ptr::null_mut(), 0),
            cuStreamCreate(std::ptr::null_mut(), 0),
            cuEventCreate(std::ptr::null_mut(), 0),
            cuPointerGetAttribute(null, 1, va),
            cuPointerGetAttributes(1, std::ptr::null_mut(), std::ptr::null_mut(), va),
            cuGetProcAddress_v2(
                std::ptr::null(),
                std::ptr::null_mut(),
                12000,
                0,
                std::ptr::null_mut(),
            ),
            cuGetErrorString(0, std::ptr::null_mut()),
            cuDeviceGetUuid_v2(std::ptr::null_mut(), 0),
            cuDeviceTotalMem_v2(std::ptr::null_mut(), 0),
        ] {
            assert_eq!(r, CUDA_ERROR_INVALID_VALUE);
            n += 1;
        }

        // The mock still works, and nothing was left behind by the matrix.
        assert_eq!(cuMemUnmap(va, G as usize), 0);
        assert_eq!(cuMemRelease(h), 0);
        assert_eq!(cuMemAddressFree(va, (8 * G) as usize), 0);
        let mut free1 = 0usize;
        assert_eq!(cuMemGetInfo_v2(&mut free1, &mut total), 0);
        assert_eq!(free1, free0, "the matrix leaked device memory");
        let leaks = cuda::diagnostics::leak_report();
        assert!(leaks.is_empty(), "{leaks:?}");
    }
    eprintln!("bad-input matrix: {n} calls, every one answered with a CUresult");
    assert!(
        n > 3500,
        "only {n} combinations: a loop of the matrix was skipped"
    );
}
