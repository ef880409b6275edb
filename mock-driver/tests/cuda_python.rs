//! What NVIDIA's cuda-python test suites (cuda_core/tests, cuda_bindings/tests, run
//! unchanged by ci/cuda-python-suite.sh: docs/frameworks/cuda-python.md) found the mock
//! answering otherwise than their GPUs do, each checked here in the driver's own terms.

use cuda::exports::*;
use cumock_abi::consts::*;
use cumock_abi::result::*;
use cumock_abi::*;
use std::ffi::{CStr, CString};
use std::ptr::{null, null_mut};

const PTX: &str = r#"
.version 8.0
.target sm_90
.address_size 64
.visible .entry named()
{
    ret;
}
"#;

fn setup() {
    // Safety: a live out-pointer.
    unsafe {
        assert_eq!(cuInit(0), 0);
        let mut ctx: CUcontext = null_mut();
        assert_eq!(cuDevicePrimaryCtxRetain(&mut ctx, 0), 0);
        assert_eq!(cuCtxSetCurrent(ctx), 0);
    }
}

/// test_cuFuncGetName_failure and test_cuKernelGetName_failure: a NULL function or
/// kernel is an invalid value (the name getters' own answer), while a function whose
/// module is gone stays an invalid handle.
#[test]
fn the_name_getters_answer_a_null_function_or_kernel_with_an_invalid_value() {
    setup();
    let image = CString::new(PTX).unwrap();
    let entry = CString::new("named").unwrap();
    // Safety: live pointers and a NUL-terminated image; no options.
    unsafe {
        let mut name = null();
        assert_eq!(
            cuFuncGetName(&mut name, null_mut()),
            CUDA_ERROR_INVALID_VALUE
        );
        assert!(name.is_null(), "nothing written on failure");
        assert_eq!(
            cuKernelGetName(&mut name, null_mut()),
            CUDA_ERROR_INVALID_VALUE
        );
        assert!(name.is_null(), "nothing written on failure");

        let mut lib: CUlibrary = null_mut();
        let r = cuLibraryLoadData(
            &mut lib,
            image.as_ptr().cast(),
            null_mut(),
            null_mut(),
            0,
            null_mut(),
            null_mut(),
            0,
        );
        assert_eq!(r, 0);
        let mut kernel: CUkernel = null_mut();
        assert_eq!(cuLibraryGetKernel(&mut kernel, lib, entry.as_ptr()), 0);
        assert_eq!(cuKernelGetName(&mut name, kernel), 0);
        assert_eq!(CStr::from_ptr(name).to_bytes(), b"named");
        assert_eq!(
            cuKernelGetName(null_mut(), kernel),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(cuLibraryUnload(lib), 0);

        let mut m: CUmodule = null_mut();
        assert_eq!(cuModuleLoadData(&mut m, image.as_ptr().cast()), 0);
        let mut f: CUfunction = null_mut();
        assert_eq!(cuModuleGetFunction(&mut f, m, entry.as_ptr()), 0);
        let mut fname = null();
        assert_eq!(cuFuncGetName(&mut fname, f), 0);
        assert_eq!(CStr::from_ptr(fname).to_bytes(), b"named");
        assert_eq!(cuModuleUnload(m), 0);
        assert_eq!(
            cuFuncGetName(&mut fname, f),
            CUDA_ERROR_INVALID_HANDLE,
            "a function of an unloaded module"
        );
    }
}

/// The value of a setting, read into `buf` (its room in `size`).
///
/// # Safety
/// `buf` holds `buf.len()` bytes.
unsafe fn get(attrib: CUcoredumpSettings, buf: &mut [u8]) -> (CUresult, usize) {
    let mut size = buf.len();
    // Safety: a live buffer of `size` bytes and a live size.
    let r = unsafe { cuCoredumpGetAttributeGlobal(attrib, buf.as_mut_ptr().cast(), &mut size) };
    (r, size)
}

/// test_cuda_coredump_attr: the process's coredump settings are kept as set and given
/// back (bools one byte, paths NUL-terminated in 1024 bytes), sizes are asked with a NULL
/// value, LIGHTWEIGHT sets the generation flags, and turning dumps on is kept although
/// the mock writes none, as the H200 recorded (probe cuda_python, coredump).
#[test]
fn coredump_settings_are_kept_as_the_h200_keeps_them() {
    const TRIGGER_HOST: CUcoredumpSettings = 2;
    const LIGHTWEIGHT: CUcoredumpSettings = 3;
    const ENABLE_USER_TRIGGER: CUcoredumpSettings = 4;
    const FILE: CUcoredumpSettings = 5;
    const GENERATION_FLAGS: CUcoredumpSettings = 7;
    setup();
    // Safety: live buffers and sizes.
    unsafe {
        let mut b = [0xA5u8; 1];
        assert_eq!(get(TRIGGER_HOST, &mut b), (0, 1));
        assert_eq!(b[0], 1, "cuda.h: the host dumps too, by default");
        let mut off = [0u8];
        let mut one = 1usize;
        assert_eq!(
            cuCoredumpSetAttributeGlobal(TRIGGER_HOST, off.as_mut_ptr().cast(), &mut one),
            0
        );
        assert_eq!(get(TRIGGER_HOST, &mut b), (0, 1));
        assert_eq!(b[0], 0);
        let mut on = [1u8];
        assert_eq!(
            cuCoredumpSetAttributeGlobal(LIGHTWEIGHT, on.as_mut_ptr().cast(), &mut one),
            0
        );
        assert_eq!(get(LIGHTWEIGHT, &mut b), (0, 1));
        assert_eq!(b[0], 1);

        // A path given without its NUL (as cuda-python gives it: *size is its length).
        let mut path = *b"corefile";
        let mut len = path.len();
        assert_eq!(
            cuCoredumpSetAttributeGlobal(FILE, path.as_mut_ptr().cast(), &mut len),
            0
        );
        let mut size = 0usize;
        assert_eq!(cuCoredumpGetAttributeGlobal(FILE, null_mut(), &mut size), 0);
        assert_eq!(size, 1024, "a path's size is its buffer's, on the H200");
        let mut buf = [0xA5u8; 1024];
        assert_eq!(get(FILE, &mut buf).0, 0);
        assert_eq!(&buf[..9], b"corefile\0");
        assert_eq!(
            get(FILE, &mut buf[..4]).0,
            CUDA_ERROR_INVALID_VALUE,
            "no room"
        );
        // A *size past the memory: the path ends at its NUL, nothing beyond is read.
        let mut nul_ended = *b"dump\0";
        let mut huge = usize::MAX;
        assert_eq!(
            cuCoredumpSetAttributeGlobal(FILE, nul_ended.as_mut_ptr().cast(), &mut huge),
            0
        );
        assert_eq!(get(FILE, &mut buf).0, 0);
        assert_eq!(&buf[..5], b"dump\0");
        let mut long = vec![b'x'; 1024];
        let mut long_len = long.len();
        assert_eq!(
            cuCoredumpSetAttributeGlobal(FILE, long.as_mut_ptr().cast(), &mut long_len),
            CUDA_ERROR_INVALID_VALUE,
            "cuda.h: at most 1023 characters"
        );

        // LIGHTWEIGHT was turned on above: the H200's flags are then 63.
        let mut flags = [0u8; 4];
        assert_eq!(get(GENERATION_FLAGS, &mut flags), (0, 4));
        assert_eq!(i32::from_ne_bytes(flags), 63);

        assert_eq!(
            cuCoredumpSetAttributeGlobal(ENABLE_USER_TRIGGER, on.as_mut_ptr().cast(), &mut one),
            0,
            "kept, as on the H200 (the mock says it writes no dump)"
        );
        assert_eq!(get(ENABLE_USER_TRIGGER, &mut b), (0, 1));
        assert_eq!(b[0], 1);
        assert_eq!(
            cuCoredumpSetAttributeGlobal(ENABLE_USER_TRIGGER, off.as_mut_ptr().cast(), &mut one),
            0
        );
        assert_eq!(get(ENABLE_USER_TRIGGER, &mut b), (0, 1));
        assert_eq!(b[0], 0);
        assert_eq!(
            cuCoredumpGetAttributeGlobal(99, b.as_mut_ptr().cast(), &mut one),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuCoredumpGetAttributeGlobal(TRIGGER_HOST, b.as_mut_ptr().cast(), null_mut()),
            CUDA_ERROR_INVALID_VALUE
        );
    }
}

/// test_pointer_get_attributes_device_ordinal: cuPointerGetAttributes of NULL gives the
/// device ordinal cuda.h's "default NULL value", 0 (NVIDIA's GPUs answer a small number,
/// which the test checks), while an unmapped address of a reservation stays
/// CU_DEVICE_INVALID (the H200: case pointer-attributes-plural).
#[test]
fn the_plural_pointer_query_gives_cu_device_invalid_where_nothing_was_given_out() {
    setup();
    let attr = [CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL];
    let ordinal = |ptr: CUdeviceptr| {
        let mut v: i32 = 0x5A5A;
        let mut data = [(&mut v as *mut i32).cast::<std::ffi::c_void>()];
        // Safety: one attribute, one live slot of its size.
        let r =
            unsafe { cuPointerGetAttributes(1, attr.as_ptr().cast_mut(), data.as_mut_ptr(), ptr) };
        (r, v)
    };
    assert_eq!(ordinal(0), (0, -2), "NULL (the H200: probe cuda_python)");
    let local = 0u8;
    assert_eq!(
        ordinal(&local as *const u8 as CUdeviceptr),
        (0, -2),
        "a stack address"
    );
    let mut va: CUdeviceptr = 0;
    let size = 2 << 20;
    // Safety: a live out-pointer.
    unsafe {
        assert_eq!(cuMemAddressReserve(&mut va, size, 0, 0, 0), 0);
        assert_eq!(ordinal(va + 4096), (0, -2));
        assert_eq!(cuMemAddressFree(va, size), 0);
    }
}

/// test_cuda_mem_range_attr: a managed range advised to be accessed by the host and by
/// device 0 lists both, the device first, then CU_DEVICE_CPU, then CU_DEVICE_INVALID.
#[test]
fn accessed_by_lists_the_host_after_the_devices() {
    // cuda.h's CU_MEM_ATTACH_GLOBAL, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
    // CU_MEM_ADVISE_SET_ACCESSED_BY and CU_MEM_ADVISE_UNSET_ACCESSED_BY.
    const CU_MEM_ATTACH_GLOBAL: u32 = 1;
    const CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY: CUmem_range_attribute = 3;
    const CU_MEM_ADVISE_SET_ACCESSED_BY: CUmem_advise = 5;
    const CU_MEM_ADVISE_UNSET_ACCESSED_BY: CUmem_advise = 6;
    setup();
    let size = 0x1000;
    let mut p: CUdeviceptr = 0;
    let host = CUmemLocation {
        type_: CU_MEM_LOCATION_TYPE_HOST,
        id: -1,
    };
    let dev = CUmemLocation {
        type_: CU_MEM_LOCATION_TYPE_DEVICE,
        id: 0,
    };
    let accessed_by = |p| {
        let mut v = [0x5A5Ai32; 3];
        // Safety: a live buffer of 12 bytes.
        let r = unsafe {
            cuMemRangeGetAttribute(
                v.as_mut_ptr().cast(),
                12,
                CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY,
                p,
                size,
            )
        };
        assert_eq!(r, 0);
        v
    };
    // Safety: a live out-pointer; the advice names the allocation made here.
    unsafe {
        assert_eq!(cuMemAllocManaged(&mut p, size, CU_MEM_ATTACH_GLOBAL), 0);
        assert_eq!(
            cuMemAdvise_v2(p, size, CU_MEM_ADVISE_SET_ACCESSED_BY, host),
            0
        );
        assert_eq!(accessed_by(p), [-1, -2, -2]);
        assert_eq!(
            cuMemAdvise_v2(p, size, CU_MEM_ADVISE_SET_ACCESSED_BY, dev),
            0
        );
        assert_eq!(accessed_by(p), [0, -1, -2]);
        assert_eq!(
            cuMemAdvise_v2(p, size, CU_MEM_ADVISE_UNSET_ACCESSED_BY, host),
            0
        );
        assert_eq!(accessed_by(p), [0, -2, -2]);
        assert_eq!(cuMemFree_v2(p), 0);
    }
}
