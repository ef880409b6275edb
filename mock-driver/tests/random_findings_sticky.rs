//! What the random VMM case files found the H200 doing once a context's work has faulted
//! (runs/2026-12-03-h200-session16/random.tgz): the calls that report the sticky error.
//! Its own test binary, beside tests/random_findings.rs: the fault is the device's sticky
//! error for the rest of the process.

#[path = "common/context.rs"]
mod context;
use context::primary_context;
use cuda::exports::*;
use cumock_abi::consts::*;
use cumock_abi::result::*;
use cumock_abi::*;
use std::ffi::c_void;
use std::ptr::null_mut;

/// `fill` stores `value` at `p`.
const WRITER: &str = r#"
.version 9.0
.target sm_90
.address_size 64
.visible .entry fill(.param .u64 p, .param .u32 value)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r1, [value];
    st.global.u32 [%rd1], %r1;
    ret;
}
"#;

/// After a fault, cuMemFree and cuMemGetAddressRange answer the sticky error, whatever
/// their address (random-1-013 line 124 `mem-free p9`: ILLEGAL_ADDRESS, 8 of 8 such calls;
/// random-3-025 line 53 `range va10+g`, an address with nothing mapped: ILLEGAL_ADDRESS, 55
/// of 55), while cuPointerGetAttribute and the VMM calls go on (40 and 1,000-odd calls
/// after a fault in the same files).
#[test]
fn memfree_and_address_range_report_the_sticky_error() {
    // Safety: live out-pointers and kernel parameters; every address is the mock's.
    unsafe {
        primary_context();
        let mut p: CUdeviceptr = 0;
        assert_eq!(cuMemAlloc_v2(&mut p, 4096), 0);
        let (mut base, mut size) = (0u64, 0usize);
        assert_eq!(cuMemGetAddressRange_v2(&mut base, &mut size, p), 0);
        let mut va: CUdeviceptr = 0;
        let g = 2 << 20;
        assert_eq!(cuMemAddressReserve(&mut va, 2 * g, 0, 0, 0), 0);

        let ptx = std::ffi::CString::new(WRITER).unwrap();
        let mut module: CUmodule = null_mut();
        assert_eq!(cuModuleLoadData(&mut module, ptx.as_ptr().cast()), 0);
        let mut f: CUfunction = null_mut();
        assert_eq!(cuModuleGetFunction(&mut f, module, c"fill".as_ptr()), 0);
        let (mut at, mut value) = (va, 7u32);
        let mut params = [
            (&mut at as *mut u64).cast::<c_void>(),
            (&mut value as *mut u32).cast(),
        ];
        let launched = cuLaunchKernel(
            f,
            1,
            1,
            1,
            1,
            1,
            1,
            0,
            null_mut(),
            params.as_mut_ptr(),
            null_mut(),
        );
        assert_eq!(launched, 0);
        assert_eq!(
            cuCtxSynchronize(),
            CUDA_ERROR_ILLEGAL_ADDRESS,
            "reserved only"
        );

        assert_eq!(
            cuMemGetAddressRange_v2(&mut base, &mut size, p),
            CUDA_ERROR_ILLEGAL_ADDRESS
        );
        assert_eq!(
            cuMemGetAddressRange_v2(&mut base, &mut size, va),
            CUDA_ERROR_ILLEGAL_ADDRESS,
            "nothing there, the sticky error first"
        );
        let mut memory_type = 0u32;
        assert_eq!(
            cuPointerGetAttribute(
                (&mut memory_type as *mut u32).cast(),
                CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                p
            ),
            0
        );
        assert_eq!(cuMemFree_v2(p), CUDA_ERROR_ILLEGAL_ADDRESS);
        assert_eq!(cuMemAddressFree(va, 2 * g), 0, "VMM calls go on");
    }
}
